/* rel_modex: large and many values through a fence with data (reliability.rs).
 *
 * "rel_modex big BYTES": every rank puts "rel.big", a byte object of BYTES bytes
 * whose byte j is (rank * 131 + j * 7 + (j >> 8)) & 0xff, commits, fences with
 * PMIX_COLLECT_DATA, then gets every other rank's value and checks its size and
 * every byte.
 * "rel_modex keys COUNT": every rank puts COUNT keys "rel.k.I" (UINT64
 * rank * 1000000 + I), commits, fences with PMIX_COLLECT_DATA, then gets every key
 * of the next rank and every 100th key of the others, checking each value.
 * Either way each rank prints "rel_modex rank R: checked B bytes in K values of
 * P peers in S ms" and "rel_modex rank R: ok"; any mismatch fails. */
#include "common.h"

static unsigned char pattern(uint32_t rank, size_t j)
{
    return (unsigned char)((rank * 131 + j * 7 + (j >> 8)) & 0xff);
}

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("rel_modex");
    if (argc != 3 || (0 != strcmp(argv[1], "big") && 0 != strcmp(argv[1], "keys")))
        fail("usage: rel_modex big BYTES | keys COUNT");
    bool big = 0 == strcmp(argv[1], "big");
    size_t amount = (size_t)strtoull(argv[2], NULL, 10);
    double t0 = now_s();
    if (big) {
        char *bytes = malloc(amount);
        if (!bytes)
            fail("malloc %zu", amount);
        for (size_t j = 0; j < amount; j++)
            bytes[j] = (char)pattern(me.rank, j);
        put_bytes_or_fail(PMIX_GLOBAL, "rel.big", bytes, amount);
        free(bytes);
    } else {
        for (size_t i = 0; i < amount; i++) {
            char key[64];
            snprintf(key, sizeof key, "rel.k.%zu", i);
            pmix_value_t v;
            PMIX_VALUE_CONSTRUCT(&v);
            v.type = PMIX_UINT64;
            v.data.uint64 = (uint64_t)me.rank * 1000000u + i;
            CHECK_OK(PMIx_Put(PMIX_GLOBAL, key, &v), "PMIx_Put(rel.k.I)");
        }
    }
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    fence_collect_or_fail();
    unsigned long long bytes_checked = 0, values = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (r == me.rank)
            continue;
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        if (big) {
            pmix_value_t *val = NULL;
            CHECK_OK(PMIx_Get(&p, "rel.big", NULL, 0, &val), "PMIx_Get(rel.big)");
            if (PMIX_BYTE_OBJECT != val->type || amount != val->data.bo.size)
                fail("rel.big of rank %u: type %d size %zu, expected %zu bytes", r, val->type,
                     val->data.bo.size, amount);
            const unsigned char *b = (const unsigned char *)val->data.bo.bytes;
            for (size_t j = 0; j < amount; j++)
                if (b[j] != pattern(r, j))
                    fail("rel.big of rank %u: byte %zu is %u, expected %u", r, j, b[j],
                         pattern(r, j));
            bytes_checked += amount;
            values++;
            PMIX_VALUE_RELEASE(val);
        } else {
            size_t step = r == (me.rank + 1) % n ? 1 : 100;
            for (size_t i = 0; i < amount; i += step) {
                char key[64];
                snprintf(key, sizeof key, "rel.k.%zu", i);
                pmix_value_t *val = NULL;
                CHECK_OK(PMIx_Get(&p, key, NULL, 0, &val), "PMIx_Get(rel.k.I)");
                uint64_t want = (uint64_t)r * 1000000u + i;
                if (PMIX_UINT64 != val->type || want != val->data.uint64)
                    fail("%s of rank %u: type %d, expected UINT64 %llu", key, r, val->type,
                         (unsigned long long)want);
                bytes_checked += sizeof(uint64_t);
                values++;
                PMIX_VALUE_RELEASE(val);
            }
        }
    }
    printf("rel_modex rank %u: checked %llu bytes in %llu values of %u peers in %.0f ms\n",
           me.rank, bytes_checked, values, n - 1, (now_s() - t0) * 1e3);
    finalize_or_fail();
    printf("rel_modex rank %u: ok\n", me.rank);
    return 0;
}
