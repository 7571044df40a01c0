/* packed: every rank packs its rank, a string naming it, its process and a value with
 * PMIx_Data_pack, unloads the buffer and puts the bytes; after a fence each rank gets
 * its right-hand neighbour's bytes, loads them and unpacks every element, checking
 * each. Run in a job that mixes libpmix_ffi and libpmix2 ranks, buffers packed by one
 * library are unpacked by the other, both ways. Prints "packed rank R: ok". */
#include "common.h"

int main(void)
{
    uint32_t n = init_or_fail("packed");
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    int32_t rank = (int32_t) me.rank;
    char name[300];
    snprintf(name, sizeof name, "rank %u of %s", me.rank, me.nspace);
    char *names[1] = {name};
    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    uint64_t big = 1000000007ULL * (me.rank + 1);
    PMIX_VALUE_LOAD(&val, &big, PMIX_UINT64);
    CHECK_OK(PMIx_Data_pack(NULL, &buf, &rank, 1, PMIX_INT32), "PMIx_Data_pack(int32)");
    CHECK_OK(PMIx_Data_pack(NULL, &buf, names, 1, PMIX_STRING), "PMIx_Data_pack(string)");
    CHECK_OK(PMIx_Data_pack(NULL, &buf, &me, 1, PMIX_PROC), "PMIx_Data_pack(proc)");
    CHECK_OK(PMIx_Data_pack(NULL, &buf, &val, 1, PMIX_VALUE), "PMIx_Data_pack(value)");
    pmix_byte_object_t bo;
    CHECK_OK(PMIx_Data_unload(&buf, &bo), "PMIx_Data_unload");
    pmix_value_t put;
    PMIX_VALUE_CONSTRUCT(&put);
    put.type = PMIX_BYTE_OBJECT;
    put.data.bo = bo;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "packed.bytes", &put), "PMIx_Put");
    PMIX_VALUE_DESTRUCT(&put);
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    fence_or_fail("PMIx_Fence");

    pmix_proc_t right;
    uint32_t r = (me.rank + 1) % n;
    PMIX_LOAD_PROCID(&right, me.nspace, r);
    pmix_value_t *got = NULL;
    CHECK_OK(PMIx_Get(&right, "packed.bytes", NULL, 0, &got), "PMIx_Get");
    if (PMIX_BYTE_OBJECT != got->type)
        fail("packed.bytes of rank %u: type %d", r, got->type);
    pmix_data_buffer_t in;
    PMIX_DATA_BUFFER_CONSTRUCT(&in);
    char *copy = malloc(got->data.bo.size);
    memcpy(copy, got->data.bo.bytes, got->data.bo.size);
    PMIX_DATA_BUFFER_LOAD(&in, copy, got->data.bo.size);
    PMIX_VALUE_RELEASE(got);
    int32_t one = 1, their_rank = -1;
    CHECK_OK(PMIx_Data_unpack(NULL, &in, &their_rank, &one, PMIX_INT32), "unpack int32");
    char *their_name = NULL;
    one = 1;
    CHECK_OK(PMIx_Data_unpack(NULL, &in, &their_name, &one, PMIX_STRING), "unpack string");
    pmix_proc_t their_proc;
    one = 1;
    CHECK_OK(PMIx_Data_unpack(NULL, &in, &their_proc, &one, PMIX_PROC), "unpack proc");
    pmix_value_t their_val;
    one = 1;
    CHECK_OK(PMIx_Data_unpack(NULL, &in, &their_val, &one, PMIX_VALUE), "unpack value");
    char want[300];
    snprintf(want, sizeof want, "rank %u of %s", r, me.nspace);
    if (their_rank != (int32_t) r || NULL == their_name || 0 != strcmp(their_name, want) ||
        their_proc.rank != r || 0 != strncmp(their_proc.nspace, me.nspace, PMIX_MAX_NSLEN) ||
        PMIX_UINT64 != their_val.type || their_val.data.uint64 != 1000000007ULL * (r + 1))
        fail("unpacked from rank %u: %d [%s] %s:%u type %d", r, their_rank,
             NULL != their_name ? their_name : "(null)", their_proc.nspace, their_proc.rank,
             their_val.type);
    one = 1;
    if (PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER !=
        PMIx_Data_unpack(NULL, &in, &their_rank, &one, PMIX_INT32))
        fail("more than four packs from rank %u", r);
    free(their_name);
    PMIX_VALUE_DESTRUCT(&their_val);
    PMIX_DATA_BUFFER_DESTRUCT(&in);
    fence_or_fail("PMIx_Fence (end)");
    printf("packed rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
