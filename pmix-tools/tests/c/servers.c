/* servers: a client's view of its server connections and of I/O forwarding:
 * PMIx_tool_get_servers, _set_server, _disconnect, _attach_to_server and
 * PMIx_IOF_pull. Prints one line per call; the test runs it with libpmix2 and with
 * libpmix_ffi under pmix-run and under mpirun and compares the lines. With the
 * argument "push" it also pushes (nothing, then bytes) and deregisters: libpmix_ffi
 * only, as libpmix2's blocking forms can wait for an answer these servers never send.
 * Then "servers rank R: ok". */
#include "common.h"
#include <pmix_tool.h>

static void out_cb(size_t h, pmix_iof_channel_t c, pmix_proc_t *s, pmix_byte_object_t *p,
                   pmix_info_t i[], size_t n)
{
    (void) h;
    (void) c;
    (void) s;
    (void) p;
    (void) i;
    (void) n;
}

int main(int argc, char **argv)
{
    init_or_fail("servers");
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t *servers = NULL;
    size_t ns = 0;
    pmix_status_t rc = PMIx_tool_get_servers(&servers, &ns);
    printf("get_servers %s n %zu rank %u\n", PMIx_Error_string(rc), ns,
           ns > 0 ? servers[0].rank : 99);
    const char *uri = getenv("PMIX_SERVER_URI41");
    if (ns > 0 && NULL != uri) {
        /* The server's name is the URI's part before ';', as "nspace.rank". */
        size_t len = strlen(servers[0].nspace);
        printf("server named by the URI: %s\n",
               0 == strncmp(uri, servers[0].nspace, len) && '.' == uri[len] ? "yes" : "no");
    }
    pmix_proc_t other;
    PMIX_LOAD_PROCID(&other, "servers.nobody", 0);
    printf("set_server other %s\n", PMIx_Error_string(PMIx_tool_set_server(&other, NULL, 0)));
    if (ns > 0)
        printf("set_server own %s\n",
               PMIx_Error_string(PMIx_tool_set_server(&servers[0], NULL, 0)));
    printf("disconnect other %s\n", PMIx_Error_string(PMIx_tool_disconnect(&other)));
    pmix_proc_t mine, srv;
    printf("attach without info %s\n",
           PMIx_Error_string(PMIx_tool_attach_to_server(&mine, &srv, NULL, 0)));
    printf("iof pull %s\n", PMIx_Error_string(PMIx_IOF_pull(&me, 1, NULL, 0,
                                                            PMIX_FWD_STDOUT_CHANNEL, out_cb,
                                                            NULL, NULL)));
    if (argc > 1 && 0 == strcmp(argv[1], "push")) {
        pmix_byte_object_t bo = {.bytes = "in", .size = 2};
        printf("iof push nothing %s\n",
               PMIx_Error_string(PMIx_IOF_push(NULL, 0, NULL, NULL, 0, NULL, NULL)));
        printf("iof push bytes %s\n",
               PMIx_Error_string(PMIx_IOF_push(&me, 1, &bo, NULL, 0, NULL, NULL)));
        printf("iof deregister %s\n",
               PMIx_Error_string(PMIx_IOF_deregister(0, NULL, 0, NULL, NULL)));
    }
    free(servers);
    printf("servers rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
