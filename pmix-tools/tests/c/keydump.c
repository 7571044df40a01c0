/* keydump: every job-, node-, app- and proc-level key this process can read, one line
 * each, so that two servers' answers under the same host and placement can be compared
 * key by key (usage: keydump KEYFILE, one attribute key per line).
 *
 * Each key of KEYFILE is asked with PMIX_OPTIONAL (what the store holds, no request
 * that could wait) at
 *   job   rank WILDCARD
 *   node  rank WILDCARD with PMIX_NODE_INFO and PMIX_HOSTNAME = each node of
 *         PMIX_NODE_LIST, and with PMIX_NODE_INFO alone ("node:self")
 *   app   rank WILDCARD with PMIX_APP_INFO and PMIX_APPNUM 0
 *   proc  every rank of the job
 * and every answer is printed as "keydump rank R: LEVEL TARGET KEY = VALUE", VALUE in a
 * canonical text (type name, then the value; arrays element by element). A last line
 * "keydump rank R: done N" counts the answers. */
#include "common.h"

#include <inttypes.h>

static void print_value(FILE *f, const pmix_value_t *v);

static void print_info(FILE *f, const pmix_info_t *i)
{
    fprintf(f, "{%s: ", i->key);
    print_value(f, &i->value);
    fputc('}', f);
}

static void print_value(FILE *f, const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_BOOL:
        fprintf(f, "bool %s", v->data.flag ? "true" : "false");
        break;
    case PMIX_STRING:
        fprintf(f, "string \"%s\"", v->data.string ? v->data.string : "(null)");
        break;
    case PMIX_UINT8:
        fprintf(f, "uint8 %u", v->data.uint8);
        break;
    case PMIX_UINT16:
        fprintf(f, "uint16 %u", v->data.uint16);
        break;
    case PMIX_UINT32:
        fprintf(f, "uint32 %u", v->data.uint32);
        break;
    case PMIX_UINT64:
        fprintf(f, "uint64 %" PRIu64, v->data.uint64);
        break;
    case PMIX_INT:
        fprintf(f, "int %d", v->data.integer);
        break;
    case PMIX_INT32:
        fprintf(f, "int32 %d", v->data.int32);
        break;
    case PMIX_SIZE:
        fprintf(f, "size %zu", v->data.size);
        break;
    case PMIX_PID:
        fprintf(f, "pid %d", (int)v->data.pid);
        break;
    case PMIX_PROC_RANK:
        fprintf(f, "rank %u", v->data.rank);
        break;
    case PMIX_PROC:
        fprintf(f, "proc %s:%u", v->data.proc->nspace, v->data.proc->rank);
        break;
    case PMIX_BYTE_OBJECT:
        fprintf(f, "bytes %zu", v->data.bo.size);
        break;
    case PMIX_DATA_ARRAY: {
        const pmix_data_array_t *a = v->data.darray;
        fprintf(f, "array %s [", PMIx_Data_type_string(a->type));
        for (size_t k = 0; k < a->size; k++) {
            if (k)
                fputs(", ", f);
            if (PMIX_INFO == a->type)
                print_info(f, &((pmix_info_t *)a->array)[k]);
            else if (PMIX_PROC == a->type)
                fprintf(f, "%s:%u", ((pmix_proc_t *)a->array)[k].nspace,
                        ((pmix_proc_t *)a->array)[k].rank);
            else if (PMIX_STRING == a->type)
                fprintf(f, "\"%s\"", ((char **)a->array)[k]);
            else if (PMIX_UINT32 == a->type)
                fprintf(f, "%u", ((uint32_t *)a->array)[k]);
            else if (PMIX_PROC_RANK == a->type)
                fprintf(f, "%u", ((pmix_rank_t *)a->array)[k]);
            else
                fputs("?", f);
        }
        fputc(']', f);
        break;
    }
    default:
        fprintf(f, "%s", PMIx_Data_type_string(v->type));
    }
}

static char **keys;
static size_t nkeys;
static unsigned long answers;

static void read_keys(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail("cannot open %s", path);
    char line[600];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (nkeys == cap) {
            cap = cap ? 2 * cap : 256;
            keys = realloc(keys, cap * sizeof *keys);
        }
        keys[nkeys++] = strdup(line);
    }
    fclose(f);
}

/* Asks every key of `p` with `quals` (PMIX_OPTIONAL first), printing each answer.
 * A key not found is asked again, up to 4 times in all: libpmix2 4.2.2's store
 * misses a few keys it holds now and then (seen with its own server as with ours). */
static void dump(const char *level, const char *target, const pmix_proc_t *p,
                 pmix_info_t *quals, size_t nquals)
{
    for (size_t k = 0; k < nkeys; k++) {
        pmix_value_t *val = NULL;
        pmix_status_t rc = PMIX_ERR_NOT_FOUND;
        for (int tries = 0; tries < 4 && (PMIX_SUCCESS != rc || NULL == val); tries++)
            rc = PMIx_Get(p, keys[k], quals, nquals, &val);
        if (PMIX_SUCCESS != rc || NULL == val)
            continue;
        printf("keydump rank %u: %s %s %s = ", me.rank, level, target, keys[k]);
        print_value(stdout, val);
        putchar('\n');
        answers++;
        PMIX_VALUE_RELEASE(val);
    }
}

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("keydump");
    if (argc != 2 && argc != 3)
        fail("usage: keydump KEYFILE [OUTDIR]");
    read_keys(argv[1]);
    if (argc == 3) {
        /* One file per rank: a launcher's output forwarding may cut lines of
         * several ranks into each other. */
        char out[4096];
        snprintf(out, sizeof out, "%s/keydump.%u", argv[2], me.rank);
        if (NULL == freopen(out, "w", stdout))
            fail("cannot write %s", out);
    }

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t q[3];
    PMIX_INFO_LOAD(&q[0], PMIX_OPTIONAL, NULL, PMIX_BOOL);
    dump("job", "*", &wild, q, 1);

    PMIX_INFO_LOAD(&q[1], PMIX_NODE_INFO, NULL, PMIX_BOOL);
    dump("node", "self", &wild, q, 2);
    pmix_value_t *list = NULL;
    if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_NODE_LIST, q, 1, &list) && list &&
        PMIX_STRING == list->type && list->data.string) {
        char *names = strdup(list->data.string), *save = NULL;
        for (char *h = strtok_r(names, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
            PMIX_INFO_LOAD(&q[2], PMIX_HOSTNAME, h, PMIX_STRING);
            dump("node", h, &wild, q, 3);
            PMIX_INFO_DESTRUCT(&q[2]);
        }
        free(names);
    }
    if (list)
        PMIX_VALUE_RELEASE(list);
    PMIX_INFO_DESTRUCT(&q[1]);

    PMIX_INFO_LOAD(&q[1], PMIX_APP_INFO, NULL, PMIX_BOOL);
    uint32_t app = 0;
    PMIX_INFO_LOAD(&q[2], PMIX_APPNUM, &app, PMIX_UINT32);
    dump("app", "0", &wild, q, 3);

    for (uint32_t r = 0; r < n; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        char target[32];
        snprintf(target, sizeof target, "%u", r);
        dump("proc", target, &p, q, 1);
    }
    printf("keydump rank %u: done %lu nspace %s\n", me.rank, answers, me.nspace);
    CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
