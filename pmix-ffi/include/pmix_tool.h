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

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIX_RS_PMIX_TOOL_H */
