/* data: PMIx_Data_pack of each supported element type, printed as bytes, then every
 * pack unpacked again (from a buffer loaded with the bytes, as a receiver has them) and
 * printed; load / embed / unload / copy_payload / copy; the errors of unpack. The test
 * runs it linked with libpmix_ffi and with libpmix2 and compares the lines (the same
 * bytes: a buffer packed by one library unpacks in the other), and ours under valgrind. */
#include <pmix.h>
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void hex(const char *what, pmix_data_buffer_t *b)
{
    printf("%s (%zu):", what, b->bytes_used);
    for (size_t i = 0; i < b->bytes_used; i++)
        printf(" %02x", (unsigned char) b->base_ptr[i]);
    printf("\n");
}

/* A fresh buffer holding a copy of b's bytes, as a receiver would load them. */
static pmix_data_buffer_t *received(pmix_data_buffer_t *b)
{
    pmix_data_buffer_t *r;
    PMIX_DATA_BUFFER_CREATE(r);
    char *copy = malloc(b->bytes_used);
    memcpy(copy, b->base_ptr, b->bytes_used);
    PMIX_DATA_BUFFER_LOAD(r, copy, b->bytes_used);
    return r;
}

int main(void)
{
    pmix_proc_t me;
    pmix_info_t nc;
    PMIX_INFO_CONSTRUCT(&nc);
    PMIX_INFO_LOAD(&nc, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &nc, 1))
        return 1;

    pmix_status_t rc;
    pmix_data_buffer_t *b;
    PMIX_DATA_BUFFER_CREATE(b);
    int32_t i32[3] = {1, -2, 300};
    rc = PMIx_Data_pack(NULL, b, i32, 3, PMIX_INT32);
    printf("pack int32 %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    uint64_t u64 = 1ULL << 40;
    rc = PMIx_Data_pack(NULL, b, &u64, 1, PMIX_UINT64);
    printf("pack uint64 %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    uint8_t u8[2] = {7, 255};
    rc = PMIx_Data_pack(NULL, b, u8, 2, PMIX_UINT8);
    printf("pack uint8 %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    bool flags[2] = {true, false};
    rc = PMIx_Data_pack(NULL, b, flags, 2, PMIX_BOOL);
    printf("pack bool %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    size_t sz = 123456;
    rc = PMIx_Data_pack(NULL, b, &sz, 1, PMIX_SIZE);
    printf("pack size %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    double d = 2.5;
    rc = PMIx_Data_pack(NULL, b, &d, 1, PMIX_DOUBLE);
    printf("pack double %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    char *strs[3] = {"ab", NULL, ""};
    rc = PMIx_Data_pack(NULL, b, strs, 3, PMIX_STRING);
    printf("pack string %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], "data.ns", 0);
    PMIX_LOAD_PROCID(&procs[1], "data.ns", PMIX_RANK_WILDCARD);
    rc = PMIx_Data_pack(NULL, b, procs, 2, PMIX_PROC);
    printf("pack proc %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    pmix_byte_object_t bo = {.bytes = "\x01\x02\x03", .size = 3};
    rc = PMIx_Data_pack(NULL, b, &bo, 1, PMIX_BYTE_OBJECT);
    printf("pack bytes %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    pmix_value_t vals[2];
    PMIX_VALUE_CONSTRUCT(&vals[0]);
    PMIX_VALUE_CONSTRUCT(&vals[1]);
    PMIX_VALUE_LOAD(&vals[0], "vv", PMIX_STRING);
    uint32_t u32 = 77;
    PMIX_VALUE_LOAD(&vals[1], &u32, PMIX_UINT32);
    rc = PMIx_Data_pack(NULL, b, vals, 2, PMIX_VALUE);
    printf("pack value %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    PMIX_VALUE_DESTRUCT(&vals[0]);
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, "data.key", &u32, PMIX_UINT32);
    rc = PMIx_Data_pack(NULL, b, &info, 1, PMIX_INFO);
    printf("pack info %d\n", rc);
    CHECK(PMIX_SUCCESS == rc);
    PMIX_INFO_DESTRUCT(&info);
    hex("packed", b);

    pmix_data_buffer_t *r = received(b);
    int32_t o32[3] = {0};
    int32_t n = 3;
    rc = PMIx_Data_unpack(NULL, r, o32, &n, PMIX_INT32);
    printf("unpack int32 %d n %d [%d %d %d]\n", rc,
           n, o32[0], o32[1], o32[2]);
    CHECK(3 == n && 300 == o32[2]);
    uint64_t o64 = 0;
    n = 1;
    rc = PMIx_Data_unpack(NULL, r, &o64, &n, PMIX_UINT64);
    printf("unpack uint64 %d [%llu]\n", rc,
           (unsigned long long) o64);
    CHECK(o64 == u64);
    uint8_t o8[2] = {0};
    n = 2;
    rc = PMIx_Data_unpack(NULL, r, o8, &n, PMIX_UINT8);
    printf("unpack uint8 %d [%u %u]\n", rc, o8[0],
           o8[1]);
    CHECK(255 == o8[1]);
    bool ob[2] = {false, true};
    n = 2;
    rc = PMIx_Data_unpack(NULL, r, ob, &n, PMIX_BOOL);
    printf("unpack bool %d [%d %d]\n", rc, ob[0], ob[1]);
    size_t osz = 0;
    n = 1;
    rc = PMIx_Data_unpack(NULL, r, &osz, &n, PMIX_SIZE);
    printf("unpack size %d [%zu]\n", rc, osz);
    double od = 0;
    n = 1;
    rc = PMIx_Data_unpack(NULL, r, &od, &n, PMIX_DOUBLE);
    printf("unpack double %d [%g]\n", rc, od);
    char *os[3] = {NULL, NULL, NULL};
    n = 3;
    rc = PMIx_Data_unpack(NULL, r, os, &n, PMIX_STRING);
    printf("unpack string %d n %d [%s] [%s] [%s]\n", rc,
           n, os[0] ? os[0] : "(null)", os[1] ? os[1] : "(null)", os[2] ? os[2] : "(null)");
    for (int k = 0; k < 3; k++)
        free(os[k]);
    pmix_proc_t op[2];
    n = 2;
    rc = PMIx_Data_unpack(NULL, r, op, &n, PMIX_PROC);
    printf("unpack proc %d [%s:%u] [%s:%u]\n", rc,
           op[0].nspace, op[0].rank, op[1].nspace, op[1].rank);
    pmix_byte_object_t obo;
    n = 1;
    rc = PMIx_Data_unpack(NULL, r, &obo, &n, PMIX_BYTE_OBJECT);
    printf("unpack bytes %d size %zu\n", rc,
           obo.size);
    CHECK(3 == obo.size && 0 == memcmp(obo.bytes, "\x01\x02\x03", 3));
    PMIX_BYTE_OBJECT_DESTRUCT(&obo);
    pmix_value_t ov[2];
    n = 2;
    rc = PMIx_Data_unpack(NULL, r, ov, &n, PMIX_VALUE);
    printf("unpack value %d types %d %d [%s] [%u]\n", rc,
           ov[0].type, ov[1].type, ov[0].data.string, ov[1].data.uint32);
    PMIX_VALUE_DESTRUCT(&ov[0]);
    PMIX_VALUE_DESTRUCT(&ov[1]);
    pmix_info_t oi;
    n = 1;
    rc = PMIx_Data_unpack(NULL, r, &oi, &n, PMIX_INFO);
    printf("unpack info %d [%s] %u\n", rc, oi.key,
           oi.value.data.uint32);
    PMIX_INFO_DESTRUCT(&oi);
    n = 1;
    rc = PMIx_Data_unpack(NULL, r, o32, &n, PMIX_INT32);
    printf("unpack past end %d n %d\n", rc, n);
    PMIX_DATA_BUFFER_RELEASE(r);

    /* embed copies, unload hands out what is unread, copy_payload appends it. */
    pmix_data_buffer_t e;
    PMIX_DATA_BUFFER_CONSTRUCT(&e);
    pmix_byte_object_t payload = {.bytes = b->base_ptr, .size = b->bytes_used};
    rc = PMIx_Data_embed(&e, &payload);
    printf("embed %d used %zu\n", rc, e.bytes_used);
    n = 3;
    rc = PMIx_Data_unpack(NULL, &e, o32, &n, PMIX_INT32);
    printf("unpack after embed %d [%d]\n", rc, o32[1]);
    pmix_data_buffer_t c;
    PMIX_DATA_BUFFER_CONSTRUCT(&c);
    rc = PMIx_Data_copy_payload(&c, &e);
    printf("copy_payload %d used %zu\n", rc, c.bytes_used);
    pmix_byte_object_t out;
    rc = PMIx_Data_unload(&e, &out);
    printf("unload %d size %zu left %zu\n", rc, out.size, e.bytes_used);
    CHECK(out.size == c.bytes_used && 0 == memcmp(out.bytes, c.base_ptr, out.size));
    PMIX_BYTE_OBJECT_DESTRUCT(&out);
    PMIX_DATA_BUFFER_DESTRUCT(&e);
    PMIX_DATA_BUFFER_DESTRUCT(&c);
    PMIX_DATA_BUFFER_RELEASE(b);

    /* copy: one datum, deeply. */
    void *cp = NULL;
    rc = PMIx_Data_copy(&cp, "copied", PMIX_STRING);
    printf("copy string %d [%s]\n", rc, NULL != cp ? (char *) cp : "(null)");
    free(cp);
    cp = NULL;
    rc = PMIx_Data_copy(&cp, &u32, PMIX_UINT32);
    printf("copy uint32 %d [%u]\n", rc, NULL != cp ? *(uint32_t *) cp : 0);
    free(cp);
    cp = NULL;
    rc = PMIx_Data_copy(&cp, &vals[1], PMIX_VALUE);
    printf("copy value %d [%u]\n", rc, NULL != cp ? ((pmix_value_t *) cp)->data.uint32 : 0);
    if (NULL != cp)
        PMIX_VALUE_DESTRUCT((pmix_value_t *) cp);
    free(cp);
    uint8_t *z = (uint8_t *) "x";
    size_t nz = 9;
    rc = PMIx_Data_compress(z, 2, &z, &nz);
    printf("compress %d %zu\n", rc, nz);
    /* Too little room: an error, and nothing is read (libpmix2 reads part). */
    pmix_data_buffer_t small;
    PMIX_DATA_BUFFER_CONSTRUCT(&small);
    rc = PMIx_Data_pack(NULL, &small, u8, 2, PMIX_UINT8);
    CHECK(PMIX_SUCCESS == rc);
    pmix_data_buffer_t *sr = received(&small);
    n = 1;
    rc = PMIx_Data_unpack(NULL, sr, o8, &n, PMIX_UINT8);
    printf("unpack uint8 into too little room %s\n", PMIx_Error_string(rc));
    CHECK(PMIX_ERR_UNPACK_INADEQUATE_SPACE == rc);
    PMIX_DATA_BUFFER_RELEASE(sr);
    PMIX_DATA_BUFFER_DESTRUCT(&small);
    PMIx_tool_finalize();
    return finish();
}
