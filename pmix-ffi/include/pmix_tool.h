/*
 * pmix-rs: the PMIx tool API (the subset pmix-rs offers), compatible with OpenPMIx's
 * <pmix_tool.h>. Link with -lpmix_ffi.
 */
#ifndef PMIX_RS_PMIX_TOOL_H
#define PMIX_RS_PMIX_TOOL_H

#include <pmix.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* Initialises the library as a tool. It connects to the server PMIX_SERVER_URI names
 * (info), else the one a PMIX_SERVER_URI41/4/3/21/2 variable names; a tool started by
 * that server (PMIX_NAMESPACE, PMIX_RANK set) keeps that identity, any other takes the
 * one the server assigns. Connected, a distance request it cannot answer alone is
 * relayed to the server. With PMIX_TOOL_DO_NOT_CONNECT, or with no server named, it
 * stays unconnected: namespace "pmix-rs.tool.<pid>", rank 0. A server that refuses
 * the tool (Open MPI 4.1's mpirun: PMIX_ERR_NOT_SUPPORTED) or cannot be reached
 * (PMIX_ERR_UNREACH) fails the call. Otherwise as PMIx_Init (same info keys, errors
 * and reference counting; an init while the library is initialised keeps its first
 * role). */
PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

/* As PMIx_Finalize. */
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);

/* A process holds one server connection, from init to finalize. get_servers names it
 * (a malloc'ed array of one; none when unconnected); set_server and attach_to_server
 * (with info naming a server; none: PMIX_ERR_BAD_PARAM) are PMIX_ERR_UNREACH, as libpmix2
 * answers a client; disconnect is PMIX_ERR_NOT_FOUND for another server and
 * PMIX_ERR_NOT_SUPPORTED for its own. */
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers);
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[],
                                                      size_t ninfo);

/* Standard I/O forwarding: no server of ours forwards it. pull and deregister are
 * PMIX_ERR_NOT_SUPPORTED; push of nothing (NULL or empty bo) PMIX_OPERATION_SUCCEEDED,
 * of bytes PMIX_ERR_NOT_SUPPORTED; no callback runs. */
#define PMIX_FWD_NO_CHANNELS     0x0000
#define PMIX_FWD_STDIN_CHANNEL   0x0001
#define PMIX_FWD_STDOUT_CHANNEL  0x0002
#define PMIX_FWD_STDERR_CHANNEL  0x0004
#define PMIX_FWD_STDDIAG_CHANNEL 0x0008
#define PMIX_FWD_ALL_CHANNELS    0x00ff
typedef void (*pmix_iof_cbfunc_t)(size_t iofhdlr, pmix_iof_channel_t channel,
                                  pmix_proc_t *source, pmix_byte_object_t *payload,
                                  pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata);
PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[],
                                              size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                              void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo, const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIX_RS_PMIX_TOOL_H */
