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

/* Initialises the library as a tool. pmix-rs does not connect to servers yet, so every
 * tool behaves as one given PMIX_TOOL_DO_NOT_CONNECT: PMIX_SUCCESS, namespace
 * "pmix-rs.tool.<pid>", rank 0. Otherwise as PMIx_Init (same info keys, errors and
 * reference counting; an init while the library is initialised keeps its first role). */
PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

/* As PMIx_Finalize. */
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIX_RS_PMIX_TOOL_H */
