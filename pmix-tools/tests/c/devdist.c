/* devdist: reads this rank's PMIX_DEVICE_DISTANCES, as Open MPI 5's libfabric component
 * does (PMIx_Get of its own proc, PMIX_OPTIONAL), then without the directive, then
 * computes PMIx_Compute_distances from its own binding (no cpuset, no directive).
 * Prints, each line prefixed "devdist rank R: ":
 *   cpus LIST                   this process's binding (sched_getaffinity), as a list
 *   get STATUS N                the optional get: its status and array size
 *   get UUID OSNAME TYPE MIN MAX one line per entry
 *   plain STATUS N              the get without PMIX_OPTIONAL (its entries must equal
 *                               the first's: checked here)
 *   compute STATUS N            PMIx_Compute_distances, then its entries as "compute ..."
 * With argv[1] = "same", it fails unless the get's array equals the computed one,
 * device by device (what a library built on pmix-rs's client must give); the test
 * compares the rest. */
#define _GNU_SOURCE
#include "common.h"

#include <sched.h>

static void print_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (0 != sched_getaffinity(0, sizeof(set), &set))
        fail("sched_getaffinity: %s", strerror(errno));
    char buf[4096];
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set))
            end++;
        int n = end > c ? snprintf(buf + len, sizeof(buf) - len, "%s%d-%d", len ? "," : "", c, end)
                        : snprintf(buf + len, sizeof(buf) - len, "%s%d", len ? "," : "", c);
        if (n < 0 || (size_t)n >= sizeof(buf) - len)
            fail("binding list too long");
        len += (size_t)n;
        c = end;
    }
    printf("devdist rank %u: cpus %s\n", me.rank, buf);
}

static void print_rows(const char *what, const pmix_device_distance_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("devdist rank %u: %s %s %s %llu %u %u\n", me.rank, what,
               d[i].uuid ? d[i].uuid : "(null)", d[i].osname ? d[i].osname : "(null)",
               (unsigned long long)d[i].type, d[i].mindist, d[i].maxdist);
}

/* The array a get returned: NULL and 0 unless it is a data array of PMIX_DEVICE_DIST. */
static const pmix_device_distance_t *array_of(const pmix_value_t *v, size_t *n)
{
    *n = 0;
    if (NULL == v)
        return NULL;
    if (PMIX_DATA_ARRAY != v->type || NULL == v->data.darray)
        fail("PMIX_DEVICE_DISTANCES has type %s, not PMIX_DATA_ARRAY",
             PMIx_Data_type_string(v->type));
    if (PMIX_DEVICE_DIST != v->data.darray->type)
        fail("PMIX_DEVICE_DISTANCES holds %s, not PMIX_DEVICE_DIST",
             PMIx_Data_type_string(v->data.darray->type));
    *n = v->data.darray->size;
    return (const pmix_device_distance_t *)v->data.darray->array;
}

static int same_text(const char *a, const char *b)
{
    return (NULL == a && NULL == b) || (NULL != a && NULL != b && 0 == strcmp(a, b));
}

/* Whether a and b hold the same devices at the same distances (in any order). */
static int same_rows(const pmix_device_distance_t *a, size_t na, const pmix_device_distance_t *b,
                     size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        int found = 0;
        for (size_t j = 0; j < nb && !found; j++)
            found = same_text(a[i].uuid, b[j].uuid) && same_text(a[i].osname, b[j].osname) &&
                    a[i].type == b[j].type && a[i].mindist == b[j].mindist &&
                    a[i].maxdist == b[j].maxdist;
        if (!found)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int same = argc > 1 && 0 == strcmp(argv[1], "same");
    init_or_fail("devdist");
    print_cpus();

    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&me, PMIX_DEVICE_DISTANCES, &opt, 1, &val);
    PMIX_INFO_DESTRUCT(&opt);
    size_t ngot = 0;
    const pmix_device_distance_t *got = array_of(PMIX_SUCCESS == rc ? val : NULL, &ngot);
    printf("devdist rank %u: get %s %zu\n", me.rank, PMIx_Error_string(rc), ngot);
    print_rows("get", got, ngot);

    pmix_value_t *plain = NULL;
    pmix_status_t prc = PMIx_Get(&me, PMIX_DEVICE_DISTANCES, NULL, 0, &plain);
    size_t nplain = 0;
    const pmix_device_distance_t *p = array_of(PMIX_SUCCESS == prc ? plain : NULL, &nplain);
    printf("devdist rank %u: plain %s %zu\n", me.rank, PMIx_Error_string(prc), nplain);
    if (prc != rc || !same_rows(got, ngot, p, nplain))
        fail("the get without PMIX_OPTIONAL answered otherwise");

    pmix_device_distance_t *d = NULL;
    size_t n = 0;
    rc = PMIx_Compute_distances(NULL, NULL, NULL, 0, &d, &n);
    printf("devdist rank %u: compute %s %zu\n", me.rank, PMIx_Error_string(rc), n);
    print_rows("compute", d, n);
    if (same && (PMIX_SUCCESS != rc || !same_rows(got, ngot, d, n)))
        fail("PMIX_DEVICE_DISTANCES (%zu entries) differs from PMIx_Compute_distances (%zu)",
             ngot, n);

    if (NULL != d)
        PMIX_DEVICE_DIST_FREE(d, n);
    if (NULL != val)
        PMIX_VALUE_RELEASE(val);
    if (NULL != plain)
        PMIX_VALUE_RELEASE(plain);
    fence_or_fail("PMIx_Fence");
    finalize_or_fail();
    return 0;
}
