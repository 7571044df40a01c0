/* arrays: data arrays through put / commit / fence / get. Every rank puts three
 * arrays: of values (a UINT32 and a STRING), of infos (a key with a UINT16 and a key
 * with a nested array of two UINT64), and of INT32 (its rank, twice, negated); then
 * every rank gets each peer's three and checks types, sizes and contents. A local
 * PMIx_Value_load of the nested array is destructed again (run under valgrind it must
 * not leak). Prints "arrays rank R: ok". */
#include "common.h"

static void put_arrays(void)
{
    pmix_value_t vals[2];
    PMIX_VALUE_CONSTRUCT(&vals[0]);
    PMIX_VALUE_CONSTRUCT(&vals[1]);
    uint32_t u = 1000 + me.rank;
    PMIX_VALUE_LOAD(&vals[0], &u, PMIX_UINT32);
    PMIX_VALUE_LOAD(&vals[1], "text", PMIX_STRING);
    pmix_data_array_t va = {.type = PMIX_VALUE, .size = 2, .array = vals};
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "arrays.values", &(pmix_value_t){.type = PMIX_DATA_ARRAY, .data.darray = &va}),
             "PMIx_Put(arrays.values)");
    PMIX_VALUE_DESTRUCT(&vals[0]);
    PMIX_VALUE_DESTRUCT(&vals[1]);

    uint64_t nested[2] = {7, 8 + me.rank};
    pmix_data_array_t na = {.type = PMIX_UINT64, .size = 2, .array = nested};
    pmix_info_t infos[2];
    PMIX_INFO_CONSTRUCT(&infos[0]);
    PMIX_INFO_CONSTRUCT(&infos[1]);
    uint16_t s = 16;
    PMIX_INFO_LOAD(&infos[0], "arrays.small", &s, PMIX_UINT16);
    PMIX_INFO_LOAD(&infos[1], "arrays.nested", &na, PMIX_DATA_ARRAY);
    pmix_data_array_t ia = {.type = PMIX_INFO, .size = 2, .array = infos};
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "arrays.infos", &(pmix_value_t){.type = PMIX_DATA_ARRAY, .data.darray = &ia}),
             "PMIx_Put(arrays.infos)");
    PMIX_INFO_DESTRUCT(&infos[0]);
    PMIX_INFO_DESTRUCT(&infos[1]);

    int32_t ints[2] = {(int32_t) me.rank, -(int32_t) me.rank};
    pmix_data_array_t xa = {.type = PMIX_INT32, .size = 2, .array = ints};
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "arrays.ints", &(pmix_value_t){.type = PMIX_DATA_ARRAY, .data.darray = &xa}),
             "PMIx_Put(arrays.ints)");
}

static pmix_data_array_t *get_array(pmix_rank_t r, const char *key, pmix_data_type_t ty, size_t n,
                                    pmix_value_t **keep)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, r);
    pmix_value_t *v = NULL;
    CHECK_OK(PMIx_Get(&p, key, NULL, 0, &v), key);
    if (PMIX_DATA_ARRAY != v->type || NULL == v->data.darray || ty != v->data.darray->type ||
        n != v->data.darray->size)
        fail("%s of rank %u: type %d, array type %d size %zu", key, r, v->type,
             v->data.darray ? v->data.darray->type : -1, v->data.darray ? v->data.darray->size : 0);
    *keep = v;
    return v->data.darray;
}

int main(void)
{
    uint32_t n = init_or_fail("arrays");
    put_arrays();
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    pmix_info_t collect;
    PMIX_INFO_CONSTRUCT(&collect);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    CHECK_OK(PMIx_Fence(NULL, 0, &collect, 1), "PMIx_Fence");
    for (pmix_rank_t r = 0; r < n; r++) {
        pmix_value_t *keep;
        pmix_data_array_t *a = get_array(r, "arrays.values", PMIX_VALUE, 2, &keep);
        pmix_value_t *vs = (pmix_value_t *) a->array;
        if (PMIX_UINT32 != vs[0].type || 1000 + r != vs[0].data.uint32 || PMIX_STRING != vs[1].type ||
            0 != strcmp("text", vs[1].data.string))
            fail("arrays.values of rank %u: wrong contents", r);
        PMIX_VALUE_RELEASE(keep);

        a = get_array(r, "arrays.infos", PMIX_INFO, 2, &keep);
        pmix_info_t *is = (pmix_info_t *) a->array;
        if (!PMIX_CHECK_KEY(&is[0], "arrays.small") || PMIX_UINT16 != is[0].value.type ||
            16 != is[0].value.data.uint16 || !PMIX_CHECK_KEY(&is[1], "arrays.nested") ||
            PMIX_DATA_ARRAY != is[1].value.type || PMIX_UINT64 != is[1].value.data.darray->type ||
            2 != is[1].value.data.darray->size ||
            8 + r != ((uint64_t *) is[1].value.data.darray->array)[1])
            fail("arrays.infos of rank %u: wrong contents", r);
        PMIX_VALUE_RELEASE(keep);

        a = get_array(r, "arrays.ints", PMIX_INT32, 2, &keep);
        int32_t *xs = (int32_t *) a->array;
        if ((int32_t) r != xs[0] || -(int32_t) r != xs[1])
            fail("arrays.ints of rank %u: %d %d", r, xs[0], xs[1]);
        PMIX_VALUE_RELEASE(keep);
    }
    fence_or_fail("final fence");
    printf("arrays rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
