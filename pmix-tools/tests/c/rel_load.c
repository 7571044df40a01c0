/* rel_load: fences in phases, timed, while a test loads the server (reliability.rs).
 *
 * Usage: rel_load DIR BIG_BYTES. Rank 0 puts "rel.big", a byte object of BIG_BYTES
 * bytes (byte j is (j * 7 + 3) & 0xff), every rank puts "rel.small" = 1000 + rank;
 * all commit and fence with PMIX_COLLECT_DATA. Rank 0 prints
 * "rel_load ready: server_pid P uri URI nspace NS". Then three phases (0, 1, 2) of
 * fences over the whole namespace, each followed by a PMIx_Get of the next rank's
 * "rel.small" (checked). A phase ends when the test creates DIR/goP: rank 0, which
 * alone looks for it, then writes DIR/stopP holding the iteration J + 10 (via a
 * rename, so it is whole when seen); every rank reads DIR/stopP after each fence and
 * leaves the phase after fence J + 10, so all leave at the same fence (rank 0 wrote
 * it before its next fence, which nobody completes before rank 0 enters it). At the
 * end of each phase rank 0 prints
 * "rel_load phase P: F fences, median M us, max X us". The test's waits are bounded;
 * so is this program's: a phase longer than 120 s fails. Every rank ends with
 * "rel_load rank R: ok". */
#include "common.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The iteration stored in PATH, or -1 when it does not exist yet. */
static long read_stop(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    if (1 != fscanf(f, "%ld", &v))
        v = -1;
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("rel_load");
    if (argc != 3)
        fail("usage: rel_load DIR BIG_BYTES");
    const char *dir = argv[1];
    size_t big = (size_t)strtoull(argv[2], NULL, 10);
    if (0 == me.rank && big > 0) {
        char *bytes = malloc(big);
        if (!bytes)
            fail("malloc %zu", big);
        for (size_t j = 0; j < big; j++)
            bytes[j] = (char)((j * 7 + 3) & 0xff);
        put_bytes_or_fail(PMIX_GLOBAL, "rel.big", bytes, big);
        free(bytes);
    }
    pmix_value_t small;
    PMIX_VALUE_CONSTRUCT(&small);
    small.type = PMIX_UINT32;
    small.data.uint32 = 1000 + me.rank;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "rel.small", &small), "PMIx_Put(rel.small)");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    fence_collect_or_fail();
    if (0 == me.rank) {
        const char *uri = getenv("PMIX_SERVER_URI41");
        printf("rel_load ready: server_pid %ld uri %s nspace %s\n", (long)getppid(),
               uri ? uri : "?", me.nspace);
    }
    pmix_proc_t next;
    PMIX_LOAD_PROCID(&next, me.nspace, (me.rank + 1) % n);
    size_t cap = 1024;
    double *times = malloc(cap * sizeof *times);
    if (!times)
        fail("malloc");
    for (int phase = 0; phase < 3; phase++) {
        char go[4096], stop[4096], tmp[4096];
        snprintf(go, sizeof go, "%s/go%d", dir, phase);
        snprintf(stop, sizeof stop, "%s/stop%d", dir, phase);
        snprintf(tmp, sizeof tmp, "%s/stop%d.tmp", dir, phase);
        double started = now_s();
        long until = -1;
        size_t count = 0;
        for (long j = 0;; j++) {
            if (now_s() - started > 120)
                fail("phase %d still running after 120 s (no %s?)", phase, go);
            double t0 = now_s();
            CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
            double dt = now_s() - t0;
            pmix_value_t *val = NULL;
            CHECK_OK(PMIx_Get(&next, "rel.small", NULL, 0, &val), "PMIx_Get(rel.small)");
            if (PMIX_UINT32 != val->type || 1000 + next.rank != val->data.uint32)
                fail("rel.small of rank %u: type %d value %u", next.rank, val->type,
                     val->data.uint32);
            PMIX_VALUE_RELEASE(val);
            if (count == cap) {
                cap *= 2;
                times = realloc(times, cap * sizeof *times);
                if (!times)
                    fail("realloc");
            }
            times[count++] = dt;
            if (0 == me.rank && until < 0 && 0 == access(go, F_OK)) {
                FILE *f = fopen(tmp, "w");
                if (!f)
                    fail("cannot write %s", tmp);
                fprintf(f, "%ld\n", j + 10);
                fclose(f);
                if (0 != rename(tmp, stop))
                    fail("rename %s", stop);
            }
            if (until < 0)
                until = read_stop(stop);
            if (until >= 0 && j >= until)
                break;
        }
        if (0 == me.rank) {
            qsort(times, count, sizeof *times, cmp_double);
            printf("rel_load phase %d: %zu fences, median %.0f us, max %.0f us\n", phase, count,
                   times[count / 2] * 1e6, times[count - 1] * 1e6);
        }
    }
    free(times);
    finalize_or_fail();
    printf("rel_load rank %u: ok\n", me.rank);
    return 0;
}
