/* Hostile input through the C ABI: NULL for every pointer argument, ninfo > 0 with a
 * NULL info, counts so large that no array can have them, wrong value types, a key
 * without NUL, strings without NUL within bounds, empty strings, garbage cpuset
 * strings, foreign and stale objects (also stale ones whose memory the library has
 * since reused for a new object). Every call must
 * return its documented status and nothing may crash or leak: pmix-ffi/tests/
 * c_programs.rs runs this under valgrind (--error-exitcode=1 --leak-check=full) when
 * it is installed. PMIX_TOPOLOGY=xml:24em64t-2n6c2t-pci.xml. */
#include <pmix_tool.h>
#include <pmix_ft.h>

#include <stdint.h>
#include <string.h>

#include "check.h"

static int callbacks = 0;

static void never_cb(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist,
                     void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) status, (void) dist, (void) ndist, (void) cbdata;
    callbacks++;
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
}

/* Both forms must refuse with `want`, and the callback must not run. */
static void refused(pmix_topology_t *topo, pmix_cpuset_t *cpus, pmix_info_t *info, size_t ninfo,
                    pmix_status_t want, int line)
{
    pmix_device_distance_t *d = (pmix_device_distance_t *) 0x1;
    size_t n = 3;
    pmix_status_t rc = PMIx_Compute_distances(topo, cpus, info, ninfo, &d, &n);
    checks++;
    if (rc != want || NULL != d || 0 != n) {
        printf("FAIL line %d: blocking %s, want %s\n", line, PMIx_Error_string(rc),
               PMIx_Error_string(want));
        failures++;
        if (PMIX_SUCCESS == rc) {
            PMIx_Device_distance_free(d, n);
        }
    }
    rc = PMIx_Compute_distances_nb(topo, cpus, info, ninfo, never_cb, NULL);
    checks++;
    if (rc != want) {
        printf("FAIL line %d: nb %s, want %s\n", line, PMIx_Error_string(rc),
               PMIx_Error_string(want));
        failures++;
    }
}

#define REFUSED(t, c, i, n, want) refused((t), (c), (i), (n), (want), __LINE__)

int main(void)
{
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT, forged;
    pmix_cpuset_t cpu0, stale, foreign, bad;
    pmix_info_t info[2];
    pmix_device_distance_t *d;
    size_t n, i;
    char *no_nul;
    uint16_t small = PMIX_DEVTYPE_NETWORK;
    uint64_t zero = 0, unknown_bits = 0x40, net = PMIX_DEVTYPE_NETWORK;
    int32_t as_int = PMIX_DEVTYPE_NETWORK;
    static const char *garbage[] = {
        "", "0-3", "hwloc", "hwloc:x", "hwloc:0-", "hwloc:3-1", "hwloc:1,,2",
        "hwloc:-1", "hwloc:99999999999", "hwloc:0xzz", "hwloc:0x1,,x",
        "linux:0-3", "hwloc:0 1", "hwloc:\xff",
    };

    /* NULL everywhere, before init */
    CHECK_RC(pmixrs_ft_validate_local(NULL, NULL, NULL), PMIX_ERR_INIT);
    CHECK_RC(pmixrs_ft_validate_global("x", NULL, NULL), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Compute_distances(NULL, NULL, NULL, 0, NULL, NULL), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Parse_cpuset_string(NULL, NULL), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Init(NULL, NULL, 1), PMIX_ERR_BAD_PARAM); /* ninfo > 0, NULL info */
    CHECK(0 == PMIx_Initialized());

    CHECK_RC(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);

    /* ---- NULL for every pointer argument ---- */
    CHECK_RC(PMIx_Compute_distances(NULL, NULL, NULL, 0, NULL, NULL), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Compute_distances(NULL, NULL, NULL, 0, &d, NULL), PMIX_ERR_BAD_PARAM);
    CHECK(NULL == d);
    CHECK_RC(PMIx_Compute_distances(NULL, NULL, NULL, 0, NULL, &n), PMIX_ERR_BAD_PARAM);
    CHECK(0 == n);
    CHECK_RC(PMIx_Load_topology(NULL), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Parse_cpuset_string(NULL, NULL), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0", NULL), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Parse_cpuset_string(NULL, &bad), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Get_cpuset(NULL, PMIX_CPUBIND_PROCESS), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Value_load(NULL, &net, PMIX_UINT64), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Info_load(NULL, PMIX_DEVICE_TYPE, &net, PMIX_UINT64), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Info_load(&info[0], NULL, &net, PMIX_UINT64), PMIX_ERR_BAD_PARAM);
    PMIx_Topology_destruct(NULL);
    PMIx_Cpuset_destruct(NULL);
    PMIx_Device_distance_free(NULL, 5);
    PMIx_Device_distance_construct(NULL);
    PMIx_Device_distance_destruct(NULL);
    PMIx_Value_destruct(NULL);
    CHECK(NULL != PMIx_Error_string(-123456));

    /* a NULL proc is allowed at init; a second init is a reference */
    CHECK_RC(PMIx_tool_init(NULL, NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_tool_finalize(), PMIX_SUCCESS);
    CHECK(1 == PMIx_Initialized());

    /* ---- ninfo > 0 with NULL info ---- */
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0", &cpu0), PMIX_SUCCESS);
    REFUSED(NULL, &cpu0, NULL, 1, PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Finalize(NULL, 2), PMIX_ERR_BAD_PARAM);

    /* ---- counts beyond any array: ninfo * sizeof(pmix_info_t) > PTRDIFF_MAX ----
     * (info points to a real array; only the count lies. Reading that many elements
     * would run off the end: the count is refused before anything is read.) */
    {
        const size_t huge = (size_t) PTRDIFF_MAX / sizeof(pmix_info_t) + 1;
        pmix_info_t one;
        PMIX_INFO_CONSTRUCT(&one);
        REFUSED(NULL, &cpu0, &one, huge, PMIX_ERR_BAD_PARAM);
        REFUSED(NULL, &cpu0, &one, SIZE_MAX, PMIX_ERR_BAD_PARAM);
        CHECK_RC(PMIx_Init(NULL, &one, huge), PMIX_ERR_BAD_PARAM);
        CHECK_RC(PMIx_tool_init(NULL, &one, SIZE_MAX), PMIX_ERR_BAD_PARAM);
        CHECK_RC(PMIx_Finalize(&one, huge), PMIX_ERR_BAD_PARAM);
        CHECK(1 == PMIx_Initialized());
        /* device-distance arrays: no such array is made, none is walked */
        CHECK(NULL == PMIx_Device_distance_create(SIZE_MAX));
        CHECK(NULL == PMIx_Device_distance_create((size_t) PTRDIFF_MAX
                                                  / sizeof(pmix_device_distance_t) + 1));
        d = PMIx_Device_distance_create(2);
        CHECK(NULL != d);
        if (NULL != d) {
            d[1].uuid = strdup("u");
            PMIx_Device_distance_free(d, SIZE_MAX); /* refused: nothing freed */
            PMIx_Device_distance_free(d, (size_t) PTRDIFF_MAX
                                             / sizeof(pmix_device_distance_t) + 1);
            CHECK(0 == strcmp(d[1].uuid, "u")); /* still there */
            PMIx_Device_distance_free(d, 2);   /* the real one: no leak, no double free */
        }
    }

    /* ---- wrong value types for known keys ---- */
    memset(info, 0, sizeof(info));
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &small, PMIX_UINT16);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &as_int, PMIX_INT32);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, "network", PMIX_STRING);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &zero, PMIX_UINT64); /* empty mask */
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &unknown_bits, PMIX_DEVTYPE);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_ID, &net, PMIX_UINT64);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_DIST_ORIGIN, NULL, PMIX_BOOL);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_ID, NULL, PMIX_UNDEF);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    /* a NULL string */
    info[0].value.type = PMIX_STRING;
    info[0].value.data.string = NULL;
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    /* an empty string */
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_ID, "", PMIX_STRING);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_DIST_ORIGIN, "", PMIX_STRING);
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info[0]);
    /* a string without NUL within bounds (8 KiB of 'a', exactly allocated) */
    no_nul = (char *) malloc(8192);
    memset(no_nul, 'a', 8192);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_ID, NULL, PMIX_STRING);
    info[0].value.data.string = no_nul;
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    info[0].value.data.string = NULL;
    /* and as the hostname at init (the library is initialised: refused all the same) */
    {
        pmix_info_t h;
        PMIX_INFO_CONSTRUCT(&h);
        PMIX_LOAD_KEY(h.key, PMIX_HOSTNAME);
        h.value.type = PMIX_STRING;
        h.value.data.string = no_nul;
        CHECK_RC(PMIx_Init(NULL, &h, 1), PMIX_ERR_BAD_PARAM);
    }
    free(no_nul);
    /* the origin directive twice */
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_DIST_ORIGIN, "eth0", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_DEVICE_DIST_ORIGIN, "eth1", PMIX_STRING);
    REFUSED(NULL, NULL, info, 2, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);

    /* ---- an info made and never loaded (empty key, UNDEF): ignored as an unknown
     * key is, as libpmix2 does (OpenPMIx's alloc example sends one) ---- */
    PMIX_INFO_CONSTRUCT(&info[0]);
    CHECK_RC(PMIx_Compute_distances(NULL, &cpu0, info, 1, &d, &n), PMIX_SUCCESS);
    PMIx_Device_distance_free(d, n);

    /* ---- a key without NUL in its 512 bytes ---- */
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &net, PMIX_UINT64);
    memset(info[0].key, 'k', sizeof(info[0].key));
    REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Init(NULL, info, 1), PMIX_ERR_BAD_PARAM);
    /* ... a longer key is cut to 511 bytes by PMIx_Info_load, and then unknown */
    {
        char longkey[600];
        memset(longkey, 'k', sizeof(longkey) - 1);
        longkey[sizeof(longkey) - 1] = '\0';
        PMIX_INFO_LOAD(&info[0], longkey, &net, PMIX_UINT64);
        CHECK('\0' == info[0].key[511]);
        CHECK_RC(PMIx_Compute_distances(NULL, &cpu0, info, 1, &d, &n), PMIX_SUCCESS);
        PMIx_Device_distance_free(d, n);
        PMIX_INFO_REQUIRED(&info[0]);
        REFUSED(NULL, &cpu0, info, 1, PMIX_ERR_NOT_SUPPORTED);
        info[0].flags = 0;
    }

    /* ---- garbage cpuset strings ---- */
    for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
        PMIX_CPUSET_CONSTRUCT(&bad);
        pmix_status_t rc = PMIx_Parse_cpuset_string(garbage[i], &bad);
        checks++;
        if (PMIX_ERR_BAD_PARAM != rc) {
            printf("FAIL cpuset string \"%s\": %s\n", garbage[i], PMIx_Error_string(rc));
            failures++;
            PMIx_Cpuset_destruct(&bad);
        } else if (NULL != bad.source || NULL != bad.bitmap) {
            printf("FAIL cpuset string \"%s\" filled the struct\n", garbage[i]);
            failures++;
        }
    }
    /* a cpuset naming no PU of the topology, and an empty one (the query's own errors:
     * the blocking form returns them, the _nb form hands them to its callback, which
     * api.c checks) */
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:100-200", &bad), PMIX_SUCCESS);
    CHECK_RC(PMIx_Compute_distances(NULL, &bad, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
    PMIx_Cpuset_destruct(&bad);
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0x0", &bad), PMIX_SUCCESS);
    CHECK_RC(PMIx_Compute_distances(NULL, &bad, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
    PMIx_Cpuset_destruct(&bad);
    /* an unknown bind envelope */
    CHECK_RC(PMIx_Get_cpuset(&bad, 7), PMIX_ERR_BAD_PARAM);

    /* ---- foreign and stale objects ---- */
    foreign.source = "hwloc";
    foreign.bitmap = (void *) 0xdeadbeef;
    REFUSED(NULL, &foreign, NULL, 0, PMIX_ERR_BAD_PARAM);
    foreign.source = NULL;
    REFUSED(NULL, &foreign, NULL, 0, PMIX_ERR_BAD_PARAM);
    PMIx_Cpuset_destruct(&foreign); /* not ours: left alone */
    CHECK((void *) 0xdeadbeef == foreign.bitmap);
    /* our source with a forged bitmap */
    foreign.source = cpu0.source;
    foreign.bitmap = (void *) 0xdeadbeef;
    REFUSED(NULL, &foreign, NULL, 0, PMIX_ERR_BAD_PARAM);
    /* our text at another address is still foreign */
    {
        char text[16];
        strcpy(text, cpu0.source);
        foreign.source = text;
        foreign.bitmap = cpu0.bitmap;
        REFUSED(NULL, &foreign, NULL, 0, PMIX_ERR_BAD_PARAM);
    }
    /* a destructed cpuset (a copy kept) */
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0-3", &stale), PMIX_SUCCESS);
    foreign = stale;
    PMIx_Cpuset_destruct(&stale);
    REFUSED(NULL, &foreign, NULL, 0, PMIX_ERR_BAD_PARAM);
    PMIx_Cpuset_destruct(&foreign); /* double destruct: harmless */
    /* ... and one whose memory a new cpuset reuses at once: the allocator hands the
     * freed block straight back (PMIx_Get_cpuset's allocations follow the same path in
     * the same order), so a registry keyed by address would take the stale copy for
     * the new cpuset; keys come from a counter instead, never reused */
    for (i = 0; i < 8; i++) {
        pmix_cpuset_t fresh, copy;
        CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0-3", &stale), PMIX_SUCCESS);
        copy = stale;
        PMIx_Cpuset_destruct(&stale);
        CHECK_RC(PMIx_Get_cpuset(&fresh, i % 2 ? PMIX_CPUBIND_THREAD : PMIX_CPUBIND_PROCESS),
                 PMIX_SUCCESS);
        CHECK(copy.bitmap != fresh.bitmap);
        REFUSED(NULL, &copy, NULL, 0, PMIX_ERR_BAD_PARAM);
        PMIx_Cpuset_destruct(&fresh);
    }

    /* topologies: foreign source, forged pointer */
    forged.source = "hwloc";
    forged.topology = (void *) 0x1;
    CHECK_RC(PMIx_Load_topology(&forged), PMIX_ERR_BAD_PARAM);
    REFUSED(&forged, &cpu0, NULL, 0, PMIX_ERR_BAD_PARAM);
    PMIx_Topology_destruct(&forged); /* not ours: left alone */
    CHECK((void *) 0x1 == forged.topology);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_SUCCESS);
    forged.source = topo.source;
    forged.topology = (void *) 0x1;
    REFUSED(&forged, &cpu0, NULL, 0, PMIX_ERR_BAD_PARAM);
    /* ... and the real one works */
    CHECK_RC(PMIx_Compute_distances(&topo, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    PMIx_Device_distance_free(d, n);

    /* ---- values: unsupported types refused, strings owned and freed ---- */
    {
        pmix_value_t v = PMIX_VALUE_STATIC_INIT;
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "hostile.ns", 3);
        CHECK_RC(PMIx_Value_load(&v, &p, PMIX_REGEX), PMIX_ERR_NOT_SUPPORTED);
        CHECK(PMIX_UNDEF == v.type);
        /* a process is copied, and freed by the destructor (valgrind checks) */
        CHECK_RC(PMIx_Value_load(&v, &p, PMIX_PROC), PMIX_SUCCESS);
        CHECK(PMIX_PROC == v.type && v.data.proc != &p && 3 == v.data.proc->rank &&
              0 == strcmp(v.data.proc->nspace, "hostile.ns"));
        PMIx_Value_destruct(&v);
        CHECK(PMIX_UNDEF == v.type);
        /* a data array of processes, scalars, strings, infos or values is copied whole;
         * of another type, refused; one nested in itself is refused, never followed for ever */
        pmix_proc_t two[2];
        PMIX_LOAD_PROCID(&two[0], "hostile.ns", 0);
        PMIX_LOAD_PROCID(&two[1], "hostile.ns", 1);
        pmix_data_array_t da = {.type = PMIX_PROC, .size = 2, .array = two};
        CHECK_RC(PMIx_Value_load(&v, &da, PMIX_DATA_ARRAY), PMIX_SUCCESS);
        CHECK(PMIX_DATA_ARRAY == v.type && v.data.darray != &da && 2 == v.data.darray->size &&
              1 == ((pmix_proc_t *) v.data.darray->array)[1].rank);
        PMIx_Value_destruct(&v);
        CHECK(PMIX_UNDEF == v.type);
        uint32_t nums[2] = {1, 2};
        pmix_data_array_t du = {.type = PMIX_UINT32, .size = 2, .array = nums};
        CHECK_RC(PMIx_Value_load(&v, &du, PMIX_DATA_ARRAY), PMIX_SUCCESS);
        CHECK(PMIX_DATA_ARRAY == v.type && v.data.darray->array != (void *) nums &&
              2 == ((uint32_t *) v.data.darray->array)[1]);
        PMIx_Value_destruct(&v);
        CHECK(PMIX_UNDEF == v.type);
        pmix_data_array_t dtopo = {.type = PMIX_TOPO, .size = 1, .array = nums};
        CHECK_RC(PMIx_Value_load(&v, &dtopo, PMIX_DATA_ARRAY), PMIX_ERR_NOT_SUPPORTED);
        CHECK(PMIX_UNDEF == v.type);
        pmix_value_t self;
        pmix_data_array_t dself = {.type = PMIX_VALUE, .size = 1, .array = &self};
        self.type = PMIX_DATA_ARRAY;
        self.data.darray = &dself;
        CHECK_RC(PMIx_Value_load(&v, &dself, PMIX_DATA_ARRAY), PMIX_ERR_BAD_PARAM);
        CHECK(PMIX_UNDEF == v.type);
        pmix_data_array_t dnull = {.type = PMIX_PROC, .size = 2, .array = NULL};
        CHECK_RC(PMIx_Value_load(&v, &dnull, PMIX_DATA_ARRAY), PMIX_ERR_BAD_PARAM);
        CHECK(PMIX_UNDEF == v.type);
        CHECK_RC(PMIx_Value_load(&v, "abc", PMIX_STRING), PMIX_SUCCESS);
        CHECK(PMIX_STRING == v.type && 0 == strcmp(v.data.string, "abc"));
        PMIx_Value_destruct(&v);
        CHECK(PMIX_UNDEF == v.type && NULL == v.data.string);
        CHECK_RC(PMIx_Value_load(&v, NULL, PMIX_BOOL), PMIX_SUCCESS);
        CHECK(v.data.flag);
    }

    /* ---- PMIX_INFO_TRUE as OpenPMIx reads it ---- */
    {
        pmix_info_t t;
        bool f = false;
        PMIX_INFO_CONSTRUCT(&t);
        CHECK(PMIX_INFO_TRUE(&t)); /* a key alone */
        PMIX_INFO_LOAD(&t, PMIX_TOOL_DO_NOT_CONNECT, &f, PMIX_BOOL);
        CHECK(!PMIX_INFO_TRUE(&t));
        PMIX_INFO_LOAD(&t, PMIX_TOOL_DO_NOT_CONNECT, " Yes", PMIX_STRING);
        CHECK(PMIX_INFO_TRUE(&t));
        PMIX_INFO_DESTRUCT(&t);
        PMIX_INFO_LOAD(&t, PMIX_TOOL_DO_NOT_CONNECT, "0", PMIX_STRING);
        CHECK(!PMIX_INFO_TRUE(&t));
        PMIX_INFO_DESTRUCT(&t);
    }

    { /* ---- pmix_ft.h: group names, outputs, types, counts ---- */
        char longname[300];
        int k = -1, out = -1;
        size_t z = 7;
        pmixrs_ft_rank_info_t ri[2];
        uint32_t flag = 1;
        memset(longname, 'g', sizeof longname - 1);
        longname[sizeof longname - 1] = 0;
        CHECK_RC(pmixrs_ft_validate_local(NULL, &k, &k), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_validate_local("", &k, &k), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_validate_local(longname, &k, &k), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_validate_local("no-such-group", NULL, NULL), PMIX_ERR_NOT_FOUND);
        CHECK_RC(pmixrs_ft_get_state_local("g", 0x20, 0, &out, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_state_local("g", -1, 0, &out, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_state_local("g", 0, -1, &out, ri), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_state_global("g", 0, 0, NULL, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_state_global("g", 0, 2, &out, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_num_state_local("g", 0, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_failed("g", NULL, 3, &z), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_get_acked("g", NULL, 0, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_is_revoked("g", NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_agree(NULL, &flag), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_shrink("g", NULL, NULL, NULL), PMIX_ERR_BAD_PARAM);
        CHECK_RC(pmixrs_ft_validate_global_count("g", 0x40, &k), PMIX_ERR_BAD_PARAM);
        CHECK(-1 == out && 7 == z);
    }

    PMIx_Topology_destruct(&topo);
    PMIx_Cpuset_destruct(&cpu0);
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    CHECK(0 == callbacks);
    return finish();
}
