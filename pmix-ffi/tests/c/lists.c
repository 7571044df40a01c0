/* lists: copying values and infos (PMIx_Value_xfer, PMIx_Info_xfer), info lists
 * (PMIx_Info_list_start / add / insert / xfer / convert / release) and
 * PMIx_Data_array_destruct, printed one line per step; the test runs it linked with
 * libpmix_ffi and with libpmix2 and compares the lines, and runs ours under valgrind
 * (nothing leaked, nothing read uninitialised). */
#include <pmix.h>
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void show(const char *what, const pmix_value_t *v)
{
    char *s = PMIx_Value_string(v);
    printf("%s [%s]\n", what, NULL != s ? s : "(null)");
    free(s);
}

static void show_info(const char *what, const pmix_info_t *i)
{
    printf("%s key [%s] flags [%u]", what, i->key, (unsigned) i->flags);
    show("", &i->value);
}

int main(void)
{
    pmix_proc_t me;
    pmix_info_t nc;
    PMIX_INFO_CONSTRUCT(&nc);
    PMIX_INFO_LOAD(&nc, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &nc, 1))
        return 1;

    /* Value copies are deep: destructing the source leaves the copy whole. */
    pmix_value_t src, dst;
    PMIX_VALUE_CONSTRUCT(&src);
    PMIX_VALUE_CONSTRUCT(&dst);
    PMIX_VALUE_LOAD(&src, "a string", PMIX_STRING);
    printf("xfer string %d\n", PMIx_Value_xfer(&dst, &src));
    CHECK(dst.data.string != src.data.string);
    PMIX_VALUE_DESTRUCT(&src);
    show("copy", &dst);
    CHECK(PMIX_STRING == dst.type && 0 == strcmp(dst.data.string, "a string"));
    PMIX_VALUE_DESTRUCT(&dst);
    uint32_t u32 = 42;
    PMIX_VALUE_LOAD(&src, &u32, PMIX_UINT32);
    printf("xfer u32 %d\n", PMIx_Value_xfer(&dst, &src));
    show("copy", &dst);
    CHECK(PMIX_UINT32 == dst.type && 42 == dst.data.uint32);
    bool yes = true;
    PMIX_VALUE_LOAD(&src, &yes, PMIX_BOOL);
    printf("xfer bool %d\n", PMIx_Value_xfer(&dst, &src));
    show("copy", &dst);
    CHECK(PMIX_BOOL == dst.type && dst.data.flag);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "lists.ns", 3);
    PMIX_VALUE_LOAD(&src, &p, PMIX_PROC);
    printf("xfer proc %d\n", PMIx_Value_xfer(&dst, &src));
    CHECK(dst.data.proc != src.data.proc);
    PMIX_VALUE_DESTRUCT(&src);
    show("copy", &dst);
    CHECK(PMIX_PROC == dst.type && 3 == dst.data.proc->rank);
    PMIX_VALUE_DESTRUCT(&dst);
    pmix_byte_object_t bo = {.bytes = "bytes", .size = 5};
    PMIX_VALUE_LOAD(&src, &bo, PMIX_BYTE_OBJECT);
    printf("xfer bytes %d\n", PMIx_Value_xfer(&dst, &src));
    PMIX_VALUE_DESTRUCT(&src);
    printf("copy bytes size %zu [%.*s]\n", dst.data.bo.size, (int) dst.data.bo.size,
           dst.data.bo.bytes);
    CHECK(5 == dst.data.bo.size && 0 == memcmp(dst.data.bo.bytes, "bytes", 5));
    PMIX_VALUE_DESTRUCT(&dst);

    /* Unload: a string copied out, a byte object's bytes handed out, scalars and
     * processes copied into the caller's memory. */
    void *d = NULL;
    size_t sz = 0;
    PMIX_VALUE_LOAD(&src, "unloaded", PMIX_STRING);
    pmix_status_t rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload string %d sz %zu [%s] copied %d\n", rc, sz, (char *) d, d != src.data.string);
    free(d);
    PMIX_VALUE_DESTRUCT(&src);
    char *none = NULL;
    PMIX_VALUE_LOAD(&src, none, PMIX_STRING);
    d = NULL;
    sz = 9;
    rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload null string %d sz %zu data %s\n", rc, sz, NULL == d ? "NULL" : "set");
    PMIX_VALUE_LOAD(&src, &u32, PMIX_UINT32);
    d = NULL;
    sz = 0;
    rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload u32 without memory %d sz %zu\n", rc, sz);
    uint32_t into = 0;
    d = &into;
    rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload u32 %d sz %zu [%u]\n", rc, sz, into);
    CHECK(42 == into);
    pmix_proc_t pin;
    PMIX_VALUE_LOAD(&src, &p, PMIX_PROC);
    d = &pin;
    rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload proc %d sz %zu [%s:%u]\n", rc, sz, pin.nspace, pin.rank);
    PMIX_VALUE_DESTRUCT(&src);
    PMIX_VALUE_LOAD(&src, &bo, PMIX_BYTE_OBJECT);
    d = NULL;
    rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload bytes %d sz %zu shared %d\n", rc, sz, d == (void *) src.data.bo.bytes);
    PMIX_VALUE_DESTRUCT(&src);
    src.type = PMIX_UNDEF;
    rc = PMIx_Value_unload(&src, &d, &sz);
    printf("unload undef %d\n", rc);

    /* Info copies: key, flags and value. */
    pmix_info_t a, b;
    PMIX_INFO_CONSTRUCT(&a);
    PMIX_INFO_CONSTRUCT(&b);
    PMIX_INFO_LOAD(&a, "lists.key", "val", PMIX_STRING);
    PMIX_INFO_REQUIRED(&a);
    printf("info xfer %d\n", PMIx_Info_xfer(&b, &a));
    PMIX_INFO_DESTRUCT(&a);
    show_info("info copy", &b);
    CHECK(0 == strcmp(b.key, "lists.key") && PMIX_INFO_IS_REQUIRED(&b));
    PMIX_INFO_DESTRUCT(&b);

    /* A list: add, xfer, insert; convert; release. */
    void *list = PMIx_Info_list_start();
    printf("list %s\n", NULL != list ? "started" : "NULL");
    pmix_data_array_t empty;
    printf("convert empty %d\n", PMIx_Info_list_convert(list, &empty));
    CHECK(NULL != list);
    int32_t n = -7;
    printf("add %d\n", PMIx_Info_list_add(list, PMIX_TIMEOUT, &n, PMIX_INT32));
    printf("add %d\n", PMIx_Info_list_add(list, PMIX_NSPACE, "lists.ns", PMIX_STRING));
    PMIX_INFO_LOAD(&a, "lists.copied", &u32, PMIX_UINT32);
    printf("xfer %d\n", PMIx_Info_list_xfer(list, &a));
    PMIX_INFO_DESTRUCT(&a);
    pmix_info_t given;
    PMIX_INFO_CONSTRUCT(&given);
    PMIX_INFO_LOAD(&given, "lists.given", "taken over", PMIX_STRING);
    printf("insert %d\n", PMIx_Info_list_insert(list, &given));
    pmix_data_array_t arr;
    printf("convert %d\n", PMIx_Info_list_convert(list, &arr));
    printf("array type [%s] size %zu\n", PMIx_Data_type_string(arr.type), arr.size);
    CHECK(PMIX_INFO == arr.type && 4 == arr.size);
    pmix_info_t *items = (pmix_info_t *) arr.array;
    for (size_t k = 0; k < arr.size; k++) {
        char what[32];
        snprintf(what, sizeof what, "item %zu", k);
        show_info(what, &items[k]);
    }
    PMIx_Info_list_release(list);
    /* The array is a copy: it outlives the list. */
    show_info("after release", &items[1]);
    CHECK(0 == strcmp(items[1].value.data.string, "lists.ns"));
    CHECK(items[3].value.data.string == given.value.data.string);
    PMIx_Data_array_destruct(&arr);
    printf("destructed size %zu array %s\n", arr.size, NULL == arr.array ? "NULL" : "kept");
    /* An inserted info stays the caller's. */
    printf("given flags [%u] [%s]\n", (unsigned) given.flags, given.value.data.string);
    CHECK(0 == strcmp(given.value.data.string, "taken over"));
    PMIX_INFO_DESTRUCT(&given);
    PMIx_tool_finalize();
    return finish();
}
