/* strings: the printing helpers OpenPMIx programs use, on one value of each common
 * type, printed one per line; the test runs it linked with libpmix_ffi and with
 * libpmix2 and compares the lines (libpmix2 needs an initialised library for them: a
 * tool that does not connect). */
#include <pmix.h>
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>

static void value(const char *what, pmix_value_t *v)
{
    char *s = PMIx_Value_string(v);
    printf("%s [%s]\n", what, NULL != s ? s : "(null)");
    free(s);
    PMIX_VALUE_DESTRUCT(v);
}

int main(void)
{
    pmix_proc_t me;
    pmix_info_t nc;
    PMIX_INFO_LOAD(&nc, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &nc, 1))
        return 1;
    for (int t = 0; t <= 70; t++)
        printf("type %d [%s]\n", t, PMIx_Data_type_string((pmix_data_type_t) t));
    for (int s = 0; s <= 5; s++)
        printf("scope %d [%s]\n", s, PMIx_Scope_string((pmix_scope_t) s));
    for (int r = 0; r <= 8; r++)
        printf("range %d [%s]\n", r, PMIx_Data_range_string((pmix_data_range_t) r));

    pmix_value_t v;
    bool b = true;
    size_t sz = 7;
    int i = -3;
    int8_t i8 = -8;
    int16_t i16 = -16;
    int32_t i32 = -32;
    int64_t i64 = -64;
    uint8_t u8 = 8;
    uint16_t u16 = 16;
    uint32_t u32 = 32;
    uint64_t u64 = 64;
    unsigned int ui = 11;
    float f = 2.25f;
    double d = 1.5;
    pid_t pid = 123;
    pmix_rank_t ranks[] = {5, PMIX_RANK_WILDCARD, PMIX_RANK_UNDEF, PMIX_RANK_LOCAL_NODE};
    pmix_status_t st = PMIX_ERR_NOT_FOUND;
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "ns1", 3);
    pmix_byte_object_t bo = {.bytes = "abc", .size = 3};
    PMIX_VALUE_LOAD(&v, &b, PMIX_BOOL); value("bool", &v);
    PMIX_VALUE_LOAD(&v, &sz, PMIX_SIZE); value("size", &v);
    PMIX_VALUE_LOAD(&v, &i, PMIX_INT); value("int", &v);
    PMIX_VALUE_LOAD(&v, &i8, PMIX_INT8); value("int8", &v);
    PMIX_VALUE_LOAD(&v, &i16, PMIX_INT16); value("int16", &v);
    PMIX_VALUE_LOAD(&v, &i32, PMIX_INT32); value("int32", &v);
    PMIX_VALUE_LOAD(&v, &i64, PMIX_INT64); value("int64", &v);
    PMIX_VALUE_LOAD(&v, &u8, PMIX_UINT8); value("uint8", &v);
    PMIX_VALUE_LOAD(&v, &u16, PMIX_UINT16); value("uint16", &v);
    PMIX_VALUE_LOAD(&v, &u32, PMIX_UINT32); value("uint32", &v);
    PMIX_VALUE_LOAD(&v, &u64, PMIX_UINT64); value("uint64", &v);
    PMIX_VALUE_LOAD(&v, &ui, PMIX_UINT); value("uint", &v);
    PMIX_VALUE_LOAD(&v, &f, PMIX_FLOAT); value("float", &v);
    PMIX_VALUE_LOAD(&v, &d, PMIX_DOUBLE); value("double", &v);
    PMIX_VALUE_LOAD(&v, &pid, PMIX_PID); value("pid", &v);
    for (size_t k = 0; k < sizeof(ranks) / sizeof(ranks[0]); k++) {
        PMIX_VALUE_LOAD(&v, &ranks[k], PMIX_PROC_RANK);
        value("rank", &v);
    }
    PMIX_VALUE_LOAD(&v, &st, PMIX_STATUS); value("status", &v);
    PMIX_VALUE_LOAD(&v, "hello", PMIX_STRING); value("string", &v);
    PMIX_VALUE_LOAD(&v, &p, PMIX_PROC); value("proc", &v);
    PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT); value("bytes", &v);
    v.type = PMIX_UNDEF;
    value("undef", &v);

    pmix_info_t in;
    /* Constructed first: an info is constructed before use. */
    PMIX_INFO_CONSTRUCT(&in);
    PMIX_INFO_LOAD(&in, PMIX_JOB_SIZE, &u32, PMIX_UINT32);
    char *s = PMIx_Info_string(&in);
    printf("info [%s]\n", s);
    free(s);
    PMIX_INFO_DESTRUCT(&in);
    PMIX_INFO_LOAD(&in, "my.own.key", "x", PMIX_STRING);
    PMIX_INFO_REQUIRED(&in);
    s = PMIx_Info_string(&in);
    printf("info required [%s]\n", s);
    free(s);
    PMIX_INFO_DESTRUCT(&in);

    /* PMIx_Value_compare on pairs of each kind. */
    pmix_value_t a, c;
    uint32_t one = 1, two = 2;
    int32_t ione = 1;
    double half = 0.5;
    pmix_proc_t p2;
    PMIX_LOAD_PROCID(&p2, "ns1", 4);
    PMIX_VALUE_LOAD(&a, &one, PMIX_UINT32);
    PMIX_VALUE_LOAD(&c, &two, PMIX_UINT32);
    printf("compare u32 1 2 [%d] 2 1 [%d] 1 1 [%d]\n", PMIx_Value_compare(&a, &c),
           PMIx_Value_compare(&c, &a), PMIx_Value_compare(&a, &a));
    PMIX_VALUE_LOAD(&c, &ione, PMIX_INT32);
    printf("compare u32 i32 [%d]\n", PMIx_Value_compare(&a, &c));
    PMIX_VALUE_LOAD(&a, "abc", PMIX_STRING);
    PMIX_VALUE_LOAD(&c, "abd", PMIX_STRING);
    printf("compare strings [%d] [%d]\n", PMIx_Value_compare(&a, &c), PMIx_Value_compare(&c, &a));
    PMIX_VALUE_DESTRUCT(&a);
    PMIX_VALUE_DESTRUCT(&c);
    PMIX_VALUE_LOAD(&a, &d, PMIX_DOUBLE);
    PMIX_VALUE_LOAD(&c, &half, PMIX_DOUBLE);
    printf("compare doubles [%d]\n", PMIx_Value_compare(&a, &c));
    PMIX_VALUE_LOAD(&a, &p, PMIX_PROC);
    PMIX_VALUE_LOAD(&c, &p2, PMIX_PROC);
    printf("compare procs [%d] [%d]\n", PMIx_Value_compare(&a, &c), PMIx_Value_compare(&c, &a));
    PMIX_VALUE_DESTRUCT(&a);
    PMIX_VALUE_DESTRUCT(&c);
    PMIX_VALUE_LOAD(&a, &b, PMIX_BOOL);
    bool no = false;
    PMIX_VALUE_LOAD(&c, &no, PMIX_BOOL);
    printf("compare bools [%d]\n", PMIx_Value_compare(&a, &c));

    char *out = NULL;
    pmix_status_t rc = PMIx_Data_print(&out, "PFX", &u32, PMIX_UINT32);
    printf("print %d [%s]\n", rc, out);
    free(out);
    out = NULL;
    rc = PMIx_Data_print(&out, NULL, "x", PMIX_STRING);
    printf("print no prefix %d [%s]\n", rc, out);
    free(out);
    for (int i = 0; i < 256; i++) {
        printf("states %d [%s] [%s] [%s] [%s] [%s]\n", i, PMIx_Proc_state_string(i),
               PMIx_Job_state_string(i), PMIx_Link_state_string(i),
               PMIx_Persistence_string(i), PMIx_Alloc_directive_string(i));
    }
    for (int i = 0; i < 40; i++) {
        printf("iof %d [%s]\n", i, PMIx_IOF_channel_string(i));
    }
    printf("iof all [%s]\n", PMIx_IOF_channel_string(0xffff));
    for (int b = 0; b < 64; b++) {
        printf("device bit %d [%s]\n", b, PMIx_Device_type_string(1ULL << b));
    }
    printf("device none [%s] two [%s]\n", PMIx_Device_type_string(0),
           PMIx_Device_type_string(3));
    for (int i = 0; i < 8; i++) {
        printf("cmp %d [%s]\n", i, PMIx_Value_comparison_string(i));
    }
    unsigned dirs[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 0x10000001u, 0xffffffffu};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *d = PMIx_Info_directives_string(dirs[i]);
        printf("directives %#x [%s]\n", dirs[i], d);
        free(d);
    }
    const char *names[] = {"PMIX_JOB_SIZE", "PMIX_NSPACE", "PMIX_RANK", "PMIX_GROUP_ID",
                           "pmix.job.size", "pmix.nspace", "not.a.key", ""};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        printf("attribute [%s] string [%s] name [%s]\n", names[i],
               PMIx_Get_attribute_string(names[i]), PMIx_Get_attribute_name(names[i]));
    }
    /* The bits only: libpmix2 4.2.2 returns PMIX_ERR_TAKE_NEXT_OPTION with them. */
    const char *loc[][2] = {
        {"hwloc:SK0:L30:L20:L10:CR0:HT0:NM0", "hwloc:SK0:L30:L20:L10:CR0:HT0:NM0"},
        {"hwloc:SK0:L30:L20:L10:CR0:HT0:NM0", "hwloc:SK0:L30:L20:L10:CR1:HT2:NM0"},
        {"hwloc:SK0:L30:L20:L10:CR0:HT0:NM0", "hwloc:SK1:L31:L21:L11:CR5:HT10:NM1"},
        {"hwloc:SK0:L30:L20:L10:CR0-1:HT0-3:NM0", "hwloc:SK0:L30:L20:L10:CR1-2:HT2-5:NM0"},
        {"hwloc:SK0:NM0", "hwloc:SK0:NM1"},
    };
    for (size_t i = 0; i < sizeof loc / sizeof *loc; i++) {
        pmix_locality_t l = 0;
        (void) PMIx_Get_relative_locality(loc[i][0], loc[i][1], &l);
        printf("relative locality [%s] [%s] %#x\n", loc[i][0], loc[i][1], (unsigned) l);
    }
    PMIx_tool_finalize();
    return 0;
}
