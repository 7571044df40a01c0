/*
 * pmix-rs: the PMIx client API (the subset pmix-rs offers), compatible with OpenPMIx's
 * <pmix.h> for every call it declares. Link with -lpmix_ffi.
 *
 * Rules every call follows (docs/design.md §6 of pmix-rs):
 *  - Before PMIx_Init / PMIx_tool_init, and after the last finalize, calls that need the
 *    library return PMIX_ERR_INIT. The memory helpers (PMIx_Device_distance_*,
 *    PMIx_Cpuset_destruct, PMIx_Topology_destruct, PMIx_Value_*, PMIx_Info_load),
 *    PMIx_Error_string, PMIx_Get_version and PMIx_Initialized work at any time.
 *  - Callbacks run on the library's progress thread. A blocking call made there (or a
 *    _nb call given a NULL cbfunc, which behaves as blocking) returns
 *    PMIX_ERR_WOULD_BLOCK at once, prints one line naming the call on stderr, and does
 *    nothing.
 *  - After PMIx_Progress_thread_stop, distance and topology calls return
 *    PMIX_ERR_NOT_AVAILABLE.
 *  - PMIx_Progress_thread_stop and the last finalize refuse new requests at once, then
 *    return only when every callback accepted before has run; when several threads
 *    stop or finalize at once, each of them waits so: no callback runs after any of
 *    them returned.
 *  - The checks come in that order (INIT, WOULD_BLOCK, NOT_AVAILABLE), before any
 *    argument is looked at; then NULL or malformed arguments are PMIX_ERR_BAD_PARAM.
 *  - No call crashes on a NULL pointer; an internal panic becomes PMIX_ERROR.
 *  - A count no array can have (ninfo * sizeof(pmix_info_t), or n entries of
 *    pmix_device_distance_t, beyond PTRDIFF_MAX bytes) is PMIX_ERR_BAD_PARAM, read
 *    nothing (PMIx_Device_distance_free: frees nothing; _create: NULL).
 *  - Cpusets and topologies the library fills hold keys that are never reused: a copy
 *    of one destructed (or from a finalized instance) stays PMIX_ERR_BAD_PARAM, even
 *    after the library made new objects in the memory the old one had.
 */
#ifndef PMIX_RS_PMIX_H
#define PMIX_RS_PMIX_H

#include <pmix_common.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* Initialises the library as a client. Started by a PMIx server (PMIX_NAMESPACE,
 * PMIX_RANK and PMIX_SERVER_URI41, 4, 3, 21 or 2 in the environment, as OpenPMIx's
 * servers, Open MPI's mpirun and pmix-run set them), it connects to that server as an
 * OpenPMIx 4.2.2 client and loads its job's information; otherwise the process becomes
 * a singleton: PMIX_SUCCESS, namespace "pmix-rs.singleton.<pid>", rank 0 (OpenPMIx
 * returns PMIX_ERR_UNREACH there and stays usable). Reference-counted: each successful
 * init needs a finalize. proc may be NULL.
 * info: PMIX_HOSTNAME (char*) names the host in device uuids. The topology is read on
 * first use from $PMIX_TOPOLOGY (sysfs | sysfs:DIR | xml:FILE | hwloc; default sysfs),
 * else from OpenPMIx's $PMIX_MCA_pmix_hwloc_topo_file (an hwloc XML file).
 * Errors: PMIX_ERR_BAD_PARAM (ninfo > 0 with NULL info or beyond any array, a
 * malformed info, a bad hostname, a bad server URI), PMIX_ERR_NOT_SUPPORTED (an unknown
 * key flagged PMIX_INFO_REQD), PMIX_ERR_UNREACH (the server named cannot be reached or
 * refuses this process), PMIX_ERR_DATA_VALUE_NOT_FOUND (PMIX_NAMESPACE without
 * PMIX_RANK), PMIX_ERR_WOULD_BLOCK (from a callback). */
PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

/* Drops one init reference; the last one refuses new requests, runs every accepted
 * callback, stops the progress thread and ends the instance, and returns after that.
 * info is checked as PMIx_Init's, otherwise unused. Errors: PMIX_ERR_INIT (when the
 * last finalize is under way on another thread: after its callbacks have run),
 * PMIX_ERR_WOULD_BLOCK (from a callback). */
PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo);

/* 1 between init and the last finalize, else 0. */
PMIX_EXPORT int PMIx_Initialized(void);

/* A launched client's data exchange with its server (a singleton or tool gets
 * PMIX_ERR_UNREACH, except PMIx_Get of its own PMIX_NSPACE / PMIX_RANK). Each call
 * blocks until the server answered; from a callback it is PMIX_ERR_WOULD_BLOCK.
 *
 * PMIx_Put files val under key in scope (PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL; keys
 * starting with "pmix", PMIX_SCOPE_UNDEF and PMIX_INTERNAL stay in this process);
 * PMIx_Commit sends every value put so far. Errors: PMIX_ERR_BAD_PARAM (NULL or bad
 * key or value, unknown scope), PMIX_ERR_NOT_SUPPORTED (a value type the library does
 * not carry: the scalars, strings and byte objects are carried). */
PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val);
/* Files val under key for proc (NULL: this process) in this process only: later gets
 * of it here answer it; never sent to the server. */
PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[],
                                              pmix_value_t *val);
PMIX_EXPORT pmix_status_t PMIx_Commit(void);

/* Returns when every process of procs (NULL: this job) has entered the fence. info:
 * PMIX_COLLECT_DATA, PMIX_TIMEOUT, PMIX_GROUP_FT_COLLECTIVE. Errors: the server's
 * (PMIX_ERR_LOST_CONNECTION when a participant died, PMIX_ERR_TIMEOUT),
 * PMIX_ERR_UNREACH (no server, or it went away), PMIX_ERR_BAD_PARAM. */
PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo);

/* Non-blocking forms: PMIX_SUCCESS once accepted, then cbfunc runs exactly once, on the
 * library's progress thread, with the result (before PMIx_Finalize returns: a request
 * still waiting then gets PMIX_ERR_UNREACH; after PMIx_Progress_thread_stop,
 * PMIX_ERR_NOT_AVAILABLE). Not accepted (any other return): cbfunc never runs. A NULL
 * cbfunc makes the call blocking (PMIX_ERR_WOULD_BLOCK from a callback). The arrays
 * are copied before the call returns. */
PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata);

/* The value of key for proc (NULL: this process; rank PMIX_RANK_WILDCARD: the job's
 * information) in a new value released with PMIX_VALUE_RELEASE; *val is NULL on
 * error. Job information and this process's own values are answered locally, the rest
 * by the server (what its reply brings is kept). Errors: PMIX_ERR_NOT_FOUND, the
 * server's (PMIX_ERR_TIMEOUT, ...), PMIX_ERR_BAD_PARAM, PMIX_ERR_NOT_SUPPORTED (a
 * value type the library cannot return yet), PMIX_ERR_UNREACH. */
PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_value_t **val);
PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void *cbdata);

/* Event handlers. PMIx_Register_event_handler registers evhdlr for codes (NULL/0: a
 * default handler, for every code not completed by a code's own handlers) and tells
 * the server; with cbfunc it returns PMIX_SUCCESS and cbfunc(status, id, cbdata) runs
 * on the progress thread, without it blocks and returns the id (> 0) or an error.
 * Handlers for an event's code run first, in registration order, then the default
 * ones (not for an event with PMIX_EVENT_NON_DEFAULT); a handler calling its cbfunc
 * with PMIX_EVENT_ACTION_COMPLETE before it returns ends the chain.
 * PMIx_Notify_event raises status from source (NULL: this process) in range: this
 * process's handlers get it too (a PMIX_RANGE_CUSTOM leaving it out excepted), the
 * server unless the range is PMIX_RANGE_PROC_LOCAL; cbfunc gets the server's answer. */
PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc,
                                                      void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref,
                                                        pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range,
                                            const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Groups, over the server (ours: pmix-run's; an OpenPMIx 4.2 server such as Open MPI
 * 4.1's mpirun answers PMIX_ERR_NOT_SUPPORTED). PMIx_Group_construct is a collective of
 * procs; results get PMIX_GROUP_CONTEXT_ID (PMIX_SIZE) when one was assigned
 * (PMIX_GROUP_ASSIGN_CONTEXT_ID), free them with PMIX_INFO_FREE. PMIx_Group_destruct is
 * a collective of the members. PMIx_Group_leave drops the group locally at once and
 * returns once PMIX_GROUP_LEFT to the other members is generated; members that get it
 * update their record; a construct or destruct in flight completes on the survivors.
 * Errors: PMIX_ERR_BAD_PARAM (NULL, empty or over-length grp), PMIX_ERR_NOT_SUPPORTED,
 * PMIX_ERR_INIT, PMIX_ERR_WOULD_BLOCK (blocking forms, and _nb with a NULL cbfunc, from
 * the progress thread: one diagnostic, nothing done), PMIX_ERR_UNREACH. */
PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t directives[],
                                               size_t ndirs, pmix_info_t **results,
                                               size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[],
                                                  size_t nprocs, const pmix_info_t info[],
                                                  size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                                  void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[],
                                              size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[],
                                                 size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                 void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[],
                                           size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                              void *cbdata);

/* Queries: answered from the job information when every key is there (and no query
 * asks PMIX_QUERY_REFRESH_CACHE), else by the server (ours answers PMIX_QUERY_NAMESPACES
 * and job-level keys such as PMIX_JOB_SIZE, with a PMIX_NSPACE qualifier or for the
 * caller's job). *results: one info per key answered, free with PMIX_INFO_FREE; the _nb
 * form's info is the library's until release_fn.
 * Errors: PMIX_ERR_INIT, PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE,
 * PMIX_ERR_BAD_PARAM (no queries, a NULL key list or output, a bad key or qualifier, a
 * NULL cbfunc), PMIX_ERR_UNREACH, the server's status (PMIX_ERR_NOT_SUPPORTED; Open MPI
 * 4.1's mpirun answers PMIX_ERROR). */
PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata);

/* The processes of nspace (NULL or empty: the caller's job) on node nodename (NULL:
 * this node), from the job information: *procs malloc'ed, free with PMIX_PROC_FREE.
 * The nodes running processes of nspace, comma-separated (PMIX_NODE_LIST, else the
 * nodes the job information describes): *nodelist malloc'ed, free with free.
 * Errors: PMIX_ERR_INIT, PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE,
 * PMIX_ERR_BAD_PARAM (NULL outputs), PMIX_ERR_NOT_FOUND, PMIX_ERR_UNREACH. */
PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                             pmix_proc_t **procs, size_t *nprocs);
PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist);

/* Asynchronous groups, built from events as OpenPMIx 4.2 clients build them (no group
 * command reaches the server, so they work under any 4.2 server that relays events).
 * PMIx_Group_invite: this process (the leader) invites procs (WILDCARD ranks: the
 * whole job) to grp and returns once every invitee has accepted, declined or
 * terminated; the group is then the leader and the acceptors, announced with
 * PMIX_GROUP_CONSTRUCT_COMPLETE. PMIx_Group_join: an invitee answers the leader (NULL
 * leader: the whole session) with PMIX_GROUP_ACCEPT or PMIX_GROUP_DECLINE and returns
 * once the answer is sent; from an event handler use the _nb form (a NULL cbfunc there:
 * the answer is sent and nothing is called back, as OpenPMIx's). Both leave
 * *results NULL (as libpmix2). PMIX_TIMEOUT is not honoured (libpmix2 4.2.2 ignores it
 * too). Errors: PMIX_ERR_BAD_PARAM (a NULL, empty or over-length grp, nobody to
 * invite, an opt that is neither, NULL results/nresults), PMIX_ERR_INIT,
 * PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE, PMIX_ERR_UNREACH, the server's refusal. */
PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[],
                                            size_t nprocs, const pmix_info_t info[],
                                            size_t ninfo, pmix_info_t **results,
                                            size_t *nresult);
PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t info[],
                                               size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                               void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                                          pmix_group_opt_t opt, const pmix_info_t info[],
                                          size_t ninfo, pmix_info_t **results,
                                          size_t *nresult);
PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[],
                                             size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                             void *cbdata);

/* Publish / lookup / unpublish through the server (blocking forms). PMIx_Lookup fills
 * each data[i] whose key was found (publisher and value: release with
 * PMIX_PDATA_DESTRUCT) and returns PMIX_SUCCESS if at least one was,
 * PMIX_ERR_NOT_FOUND if none. PMIx_Unpublish withdraws this process's keys (a
 * NULL-terminated list; NULL: all of them). */
PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                                      size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo);

/* The non-blocking forms: cbfunc (required) runs on the progress thread. PMIx_Lookup_nb
 * hands cbfunc what was found; data is the library's, released when cbfunc returns. */
PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Packing data as OpenPMIx 4.2 packs it (the same bytes: buffers pass between the two
 * libraries). Element types: the scalars, PMIX_STRING, PMIX_PROC, PMIX_BYTE_OBJECT,
 * PMIX_VALUE, PMIX_INFO (another: PMIX_ERR_NOT_SUPPORTED). target and source are not
 * needed. Unpack reads the next pack, at most *max_num_values elements
 * (PMIX_ERR_UNPACK_INADEQUATE_SPACE for more, PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER
 * when nothing is left). Load takes the payload's bytes over, embed copies them,
 * unload hands the unread bytes out and empties the buffer. Copy makes a malloc'ed
 * deep copy of one datum. There is no compression: compress and decompress are false. */
PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer,
                                         void *src, int32_t num_vals, pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer,
                                           void *dest, int32_t *max_num_values,
                                           pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest,
                                                 pmix_data_buffer_t *src);
PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                                           pmix_byte_object_t *payload);
PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload);
PMIX_EXPORT pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer,
                                          const pmix_byte_object_t *payload);
PMIX_EXPORT bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                                    size_t *nbytes);
PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                                      size_t *nbytes);
#define PMIX_DATA_BUFFER_LOAD(b, d, s) \
    do {                               \
        pmix_byte_object_t _bo;        \
        _bo.bytes = (char *) (d);      \
        _bo.size = (s);                \
        PMIx_Data_load((b), &_bo);     \
    } while (0)
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)  \
    do {                                  \
        pmix_byte_object_t _bo;           \
        pmix_status_t _r;                 \
        _r = PMIx_Data_unload((b), &_bo); \
        if (PMIX_SUCCESS == _r) {         \
            (d) = _bo.bytes;              \
            (s) = _bo.size;               \
        } else {                          \
            (d) = NULL;                   \
            (s) = 0;                      \
        }                                 \
    } while (0)

/* What no server of ours (nor Open MPI 4.1's mpirun) serves, answered as libpmix2
 * answers against them: allocation requests and credentials PMIX_ERR_NOT_SUPPORTED (the
 * _nb forms give it to cbfunc); a fabric registration and deregistration succeed with no
 * infos (nothing is known of a fabric), an update is PMIX_ERR_NOT_SUPPORTED;
 * PMIx_Fabric_deregister_nb is done at once (PMIX_OPERATION_SUCCEEDED, no callback).
 * NULL for a required pointer: PMIX_ERR_BAD_PARAM. */
PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t *credential);
PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred,
                                                   const pmix_info_t info[], size_t ninfo,
                                                   pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                                      const pmix_info_t info[], size_t ninfo,
                                                      pmix_validation_cbfunc_t cbfunc,
                                                      void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric,
                                               const pmix_info_t directives[], size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                                void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric,
                                                    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Asks the server to abort procs (NULL: this job) with status and msg; returns once it
 * answered (the launcher then ends the processes). */
PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs);

/* Distances from a process location (cpuset; NULL = the caller's own binding) or from
 * the device named by PMIX_DEVICE_DIST_ORIGIN, to the devices selected by info
 * (PMIX_DEVICE_TYPE as DEVTYPE/UINT64/UINT32/UINT, PMIX_DEVICE_ID repeatable,
 * PMIX_DEVICE_DIST_ORIGIN once). topo NULL = the library's topology, else one filled by
 * PMIx_Load_topology. Sets *distances = NULL, *ndist = 0 on entry; on success
 * *distances is a malloc'ed array of *ndist entries (free with
 * PMIx_Device_distance_free or PMIX_DEVICE_DIST_FREE).
 * Errors: PMIX_ERR_INIT, PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE; PMIX_ERR_BAD_PARAM
 * (NULL distances/ndist, ninfo > 0 with NULL info, a key without NUL in its 512 bytes,
 * a known key with a wrong value type, an empty or unterminated string, a zero or
 * unknown type mask, ORIGIN twice or ambiguous, a foreign or stale topo/cpuset, an
 * empty cpuset or one outside the topology); PMIX_ERR_NOT_SUPPORTED (an unknown key
 * flagged PMIX_INFO_REQD); PMIX_ERR_NOT_FOUND (no such ORIGIN, no device selected);
 * PMIX_ERR_UNREACH (no local topology or cpuset, and no server to relay to);
 * PMIX_ERR_NOMEM. Without a local topology or cpuset, a connected client relays the
 * request to its server (no topology, its own binding if known) and returns the
 * server's answer or status; with PMIX_DEVICE_DIST_ORIGIN and a server that does not
 * advertise pmix.rs.dist.origin (OpenPMIx 4.2's), PMIX_ERR_NOT_SUPPORTED. */
PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t *distances[],
                                                 size_t *ndist);

/* The non-blocking form only accepts the request: the library's state is checked and
 * the arguments are checked and copied before it returns (they need not outlive the
 * call); loading the topology on first use, finding the caller's own binding and the
 * query run on the progress thread. PMIX_SUCCESS means accepted, and then cbfunc runs
 * exactly once, on the progress thread, with the final status. On success dist belongs
 * to the library: call release_fn(release_cbdata) when done with it (release_fn is NULL
 * when dist is NULL). A NULL cbfunc behaves as the blocking form and discards the
 * result.
 * Returned at once (no callback): PMIX_ERR_INIT, PMIX_ERR_NOT_AVAILABLE,
 * PMIX_ERR_BAD_PARAM for the arguments themselves (ninfo > 0 with NULL info, a key
 * without NUL, a known key with a wrong value type, an empty or unterminated string, a
 * zero or unknown type mask, ORIGIN twice, a foreign or stale topo/cpuset),
 * PMIX_ERR_NOT_SUPPORTED (an unknown key flagged PMIX_INFO_REQD).
 * Passed to cbfunc (as OpenPMIx does with errors found after acceptance):
 * PMIX_ERR_UNREACH (no local topology or cpuset, no server), the relay's statuses
 * (the server's, PMIX_ERR_NOT_SUPPORTED), PMIX_ERR_NOT_FOUND, the
 * query's own PMIX_ERR_BAD_PARAMs (ambiguous ORIGIN, a cpuset empty or outside the
 * topology), PMIX_ERR_NOMEM, and PMIX_ERROR if the computation failed inside. */
PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc,
                                                    void *cbdata);

/* Fills topo with the library's topology (loaded once). topo->source must be NULL or
 * the library's. Errors: PMIX_ERR_INIT, PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE,
 * PMIX_ERR_BAD_PARAM (NULL or foreign topo), PMIX_ERR_UNREACH (cannot be loaded and no
 * server to ask). */
PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo);

/* Clears a topology filled by PMIx_Load_topology (the library keeps the topology
 * itself); a copy of the struct is stale afterwards. NULL or foreign: nothing
 * happens. */
PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo);

/* Parses "hwloc:<list>" (PU OS indexes, "0-3,8") or "hwloc:0x<mask>" (hwloc hex mask)
 * into cpuset (release it with PMIx_Cpuset_destruct). Errors: PMIX_ERR_INIT,
 * PMIX_ERR_BAD_PARAM (NULL argument, no NUL within 1 MiB, another prefix, garbage). */
PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                                   pmix_cpuset_t *cpuset);

/* The PUs the process (PMIX_CPUBIND_PROCESS: every thread) or the calling thread
 * (PMIX_CPUBIND_THREAD) is bound to. Errors: PMIX_ERR_INIT, PMIX_ERR_BAD_PARAM (NULL
 * cpuset, unknown ref), PMIX_ERR_UNREACH (the OS does not tell). */
PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref);

/* Releases a cpuset of the library's and clears the struct. NULL or foreign: nothing
 * happens. */
PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset);

/* An array of n constructed entries (malloc'ed; NULL for n == 0 or no memory). Newer
 * OpenPMIx only (4.2.2 has the PMIX_DEVICE_DIST_CREATE macro). */
PMIX_EXPORT pmix_device_distance_t *PMIx_Device_distance_create(size_t n);
/* Frees each entry's uuid and osname, then the array. NULL, or an n no array can have
 * (n * sizeof(pmix_device_distance_t) > PTRDIFF_MAX): nothing happens. */
PMIX_EXPORT void PMIx_Device_distance_free(pmix_device_distance_t *d, size_t n);
/* Zeroes one entry and sets mindist = maxdist = UINT16_MAX. */
PMIX_EXPORT void PMIx_Device_distance_construct(pmix_device_distance_t *d);
/* Frees one entry's uuid and osname and clears them. */
PMIX_EXPORT void PMIx_Device_distance_destruct(pmix_device_distance_t *d);

/* Refuses new requests at once (afterwards distance and topology calls return
 * PMIX_ERR_NOT_AVAILABLE), then returns when the progress thread has run every callback
 * already accepted and stopped (always, as with PMIX_PROGRESS_THREAD_FLUSH true in newer
 * OpenPMIx), also when another thread's stop or last finalize is under way. info is
 * ignored. Called from a callback it prints the PMIX_ERR_WOULD_BLOCK diagnostic and
 * does nothing; before init it does nothing. Newer OpenPMIx only. */
PMIX_EXPORT void PMIx_Progress_thread_stop(const pmix_info_t *info, size_t ninfo);

/* Starts apps as a new job through the server (SPAWNNB): ours does not spawn
 * (PMIX_ERR_NOT_SUPPORTED); Open MPI's mpirun does. nspace (PMIx_Spawn, when not NULL)
 * or the callback's nspace is the new job's. Errors: PMIX_ERR_INIT,
 * PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE, PMIX_ERR_BAD_PARAM (no apps, a negative
 * maxprocs, a bad string or directive), PMIX_ERR_UNREACH, the server's status. */
PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo,
                                     const pmix_app_t apps[], size_t napps,
                                     pmix_nspace_t nspace);
PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo,
                                        const pmix_app_t apps[], size_t napps,
                                        pmix_spawn_cbfunc_t cbfunc, void *cbdata);

/* Connects this process with procs, or disconnects it from them: a collective of
 * them at the server (CONNECTNB / DISCONNECTNB; ours answers PMIX_ERR_NOT_SUPPORTED,
 * Open MPI's mpirun connects). Errors as PMIx_Spawn's (PMIX_ERR_BAD_PARAM for no
 * procs). */
PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t ranges[], size_t nprocs,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Logging, job control and monitoring: each is the server's command of that name,
 * answered with its status (ours: PMIx_Log and PMIx_Process_monitor
 * PMIX_ERR_NOT_SUPPORTED, PMIx_Job_control SUCCESS for a cleanup registration and
 * PMIX_ERR_NOT_SUPPORTED otherwise); job control and monitoring also with infos
 * (*results malloc'ed, free with PMIX_INFO_FREE; the _nb forms' info is the library's
 * until release_fn). A NULL cbfunc makes an _nb form blocking, except that
 * PMIx_Process_monitor_nb with a NULL cbfunc (PMIx_Heartbeat) only sends.
 * Errors: PMIX_ERR_INIT, PMIX_ERR_WOULD_BLOCK, PMIX_ERR_NOT_AVAILABLE,
 * PMIX_ERR_BAD_PARAM (a count with a NULL array, a NULL monitor or result output, a
 * bad info), PMIX_ERR_UNREACH, the server's status. */
PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                                   const pmix_info_t directives[], size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor,
                                                  pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);
/* Sends one heartbeat to the server (PMIX_SEND_HEARTBEAT), not waiting for an answer. */
#define PMIx_Heartbeat()                                                                   \
    do {                                                                                   \
        pmix_info_t _hb;                                                                   \
        PMIX_INFO_CONSTRUCT(&_hb);                                                         \
        PMIX_INFO_LOAD(&_hb, PMIX_SEND_HEARTBEAT, NULL, PMIX_POINTER);                     \
        (void) PMIx_Process_monitor_nb(&_hb, PMIX_SUCCESS, NULL, 0, NULL, NULL);           \
        PMIX_INFO_DESTRUCT(&_hb);                                                          \
    } while (0)

/* Printing helpers, with libpmix2 4.2.2's texts. The _string of a type, scope or range
 * is static ("UNKNOWN..." for a value it does not know). PMIx_Value_string and
 * PMIx_Info_string return a malloc'ed text (free with free; NULL for NULL). PMIx_Info_string
 * names a key by this header's #define for it (libpmix2 uses its whole dictionary).
 * PMIx_Data_print sets *output to prefix (NULL: a space) and the datum at src of type
 * type, malloc'ed. Errors: PMIX_ERR_BAD_PARAM (NULL output or src), PMIX_ERR_NOMEM. */
PMIX_EXPORT const char *PMIx_Data_type_string(pmix_data_type_t type);
PMIX_EXPORT const char *PMIx_Scope_string(pmix_scope_t scope);
PMIX_EXPORT const char *PMIx_Data_range_string(pmix_data_range_t range);
PMIX_EXPORT char *PMIx_Value_string(const pmix_value_t *value);
PMIX_EXPORT char *PMIx_Info_string(const pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src,
                                          pmix_data_type_t type);

/* State and flag names, with libpmix2 4.2.2's texts. Static, except
 * PMIx_Info_directives_string (malloc'ed: free it). PMIx_Get_attribute_string maps an
 * attribute's name to its key ("PMIX_JOB_SIZE" -> "pmix.job.size"), _name the other way;
 * both return an unknown argument as given. */
PMIX_EXPORT const char *PMIx_Proc_state_string(pmix_proc_state_t state);
PMIX_EXPORT const char *PMIx_Job_state_string(pmix_job_state_t state);
PMIX_EXPORT const char *PMIx_Link_state_string(pmix_link_state_t state);
PMIX_EXPORT const char *PMIx_Persistence_string(pmix_persistence_t persist);
PMIX_EXPORT const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive);
PMIX_EXPORT const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel);
PMIX_EXPORT const char *PMIx_Device_type_string(pmix_device_type_t type);
PMIX_EXPORT const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp);
PMIX_EXPORT char *PMIx_Info_directives_string(pmix_info_directives_t directives);
PMIX_EXPORT const char *PMIx_Get_attribute_string(const char *attribute);
PMIX_EXPORT const char *PMIx_Get_attribute_name(const char *attrstring);

/* What the processes of two locality strings (PMIX_LOCALITY_STRING, "hwloc:SK0:...")
 * share, as PMIX_LOCALITY_SHARE_* bits. PMIX_SUCCESS (libpmix2 4.2.2 computes the same
 * bits and returns PMIX_ERR_TAKE_NEXT_OPTION); PMIX_ERR_BAD_PARAM for NULL or a string
 * that is not a locality string (*locality PMIX_LOCALITY_UNKNOWN). */
PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1,
                                                     const char *locality2,
                                                     pmix_locality_t *locality);

/* Lets the library progress: ours has a progress thread of its own, so it returns. */
PMIX_EXPORT void PMIx_Progress(void);

/* The text of a status ("NOT-FOUND"), as OpenPMIx 4.2.2's; "ERROR STRING NOT FOUND" for
 * codes it does not know. Static: never free it. */
PMIX_EXPORT const char *PMIx_Error_string(pmix_status_t status);

/* "pmix-rs <version> (OpenPMIx 4.2.2 API subset)". Static. */
PMIX_EXPORT const char *PMIx_Get_version(void);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIX_RS_PMIX_H */
