/* Layout facts (docs/abi.md: OpenPMIx 4.2.2 on x86_64) for every type pmix-rs's headers
 * declare. pmix-ffi/tests/abi.rs compiles this file once against our headers and once
 * against OpenPMIx's: both must compile. It also checks that every type our header
 * declares is named here. */
#include <pmix.h>
#include <pmix_tool.h>
#include <pmix_server.h>

#include <stddef.h>

#define SA(c) _Static_assert(c, #c)
#define LAYOUT(type, field, off) SA(offsetof(type, field) == (off))
#define SAME_TYPE(expr, type) SA(_Generic((expr), type: 1, default: 0))
/* the field's type (arrays compared through their decayed pointer) */
#define FIELD_TYPE(s, field, type) SAME_TYPE(((s *) 0)->field, type)

/* scalar types */
SA(sizeof(pmix_status_t) == 4);
SA(sizeof(pmix_rank_t) == 4);
SA(sizeof(pmix_data_type_t) == 2);
SA(sizeof(pmix_scope_t) == 1);
SA(sizeof(pmix_data_range_t) == 1);
SA(sizeof(pmix_info_directives_t) == 4);
SA(sizeof(pmix_device_type_t) == 8);
SA(sizeof(pmix_bind_envelope_t) == 1);
SA(sizeof(pmix_nspace_t) == 256);
SA(sizeof(pmix_key_t) == 512);
SAME_TYPE((pmix_status_t) 0, int);
SAME_TYPE((pmix_rank_t) 0, uint32_t);
SAME_TYPE((pmix_data_type_t) 0, uint16_t);
SAME_TYPE((pmix_scope_t) 0, uint8_t);
SAME_TYPE((pmix_data_range_t) 0, uint8_t);
SAME_TYPE((pmix_info_directives_t) 0, uint32_t);
SAME_TYPE((pmix_proc_state_t) 0, uint8_t);
SAME_TYPE((pmix_job_state_t) 0, uint8_t);
SAME_TYPE((pmix_link_state_t) 0, uint8_t);
SAME_TYPE((pmix_persistence_t) 0, uint8_t);
SAME_TYPE((pmix_alloc_directive_t) 0, uint8_t);
SAME_TYPE((pmix_iof_channel_t) 0, uint16_t);
SAME_TYPE((pmix_device_type_t) 0, uint64_t);
SAME_TYPE((pmix_bind_envelope_t) 0, uint8_t);

/* pmix_proc_t */
SA(sizeof(pmix_proc_t) == 260);
LAYOUT(pmix_proc_t, nspace, 0);
LAYOUT(pmix_proc_t, rank, 256);
FIELD_TYPE(pmix_proc_t, nspace, char *);
FIELD_TYPE(pmix_proc_t, rank, pmix_rank_t);
SA(sizeof(((pmix_proc_t *) 0)->nspace) == 256);

/* pmix_byte_object_t */
SA(sizeof(pmix_byte_object_t) == 16);
LAYOUT(pmix_byte_object_t, bytes, 0);
LAYOUT(pmix_byte_object_t, size, 8);
FIELD_TYPE(pmix_byte_object_t, bytes, char *);
FIELD_TYPE(pmix_byte_object_t, size, size_t);

/* pmix_data_array_t */
SA(sizeof(pmix_data_array_t) == 24);
LAYOUT(pmix_data_array_t, type, 0);
LAYOUT(pmix_data_array_t, size, 8);
LAYOUT(pmix_data_array_t, array, 16);
FIELD_TYPE(pmix_data_array_t, type, pmix_data_type_t);
FIELD_TYPE(pmix_data_array_t, size, size_t);
FIELD_TYPE(pmix_data_array_t, array, void *);

/* pmix_cpuset_t */
SA(sizeof(pmix_cpuset_t) == 16);
LAYOUT(pmix_cpuset_t, source, 0);
LAYOUT(pmix_cpuset_t, bitmap, 8);
FIELD_TYPE(pmix_cpuset_t, source, char *);
FIELD_TYPE(pmix_cpuset_t, bitmap, void *);

/* pmix_topology_t */
SA(sizeof(pmix_topology_t) == 16);
LAYOUT(pmix_topology_t, source, 0);
LAYOUT(pmix_topology_t, topology, 8);
FIELD_TYPE(pmix_topology_t, source, char *);
FIELD_TYPE(pmix_topology_t, topology, void *);

/* pmix_device_distance_t */
SA(sizeof(pmix_device_distance_t) == 32);
LAYOUT(pmix_device_distance_t, uuid, 0);
LAYOUT(pmix_device_distance_t, osname, 8);
LAYOUT(pmix_device_distance_t, type, 16);
LAYOUT(pmix_device_distance_t, mindist, 24);
LAYOUT(pmix_device_distance_t, maxdist, 26);
FIELD_TYPE(pmix_device_distance_t, uuid, char *);
FIELD_TYPE(pmix_device_distance_t, osname, char *);
FIELD_TYPE(pmix_device_distance_t, type, pmix_device_type_t);
FIELD_TYPE(pmix_device_distance_t, mindist, uint16_t);
FIELD_TYPE(pmix_device_distance_t, maxdist, uint16_t);

/* pmix_value_t: every union member we name sits at 8, in a 24-byte union */
SA(sizeof(pmix_value_t) == 32);
SA(_Alignof(pmix_value_t) == 8);
SA(sizeof(((pmix_value_t *) 0)->data) == 24);
LAYOUT(pmix_value_t, type, 0);
LAYOUT(pmix_value_t, data, 8);
FIELD_TYPE(pmix_value_t, type, pmix_data_type_t);
LAYOUT(pmix_value_t, data.flag, 8);
LAYOUT(pmix_value_t, data.byte, 8);
LAYOUT(pmix_value_t, data.string, 8);
LAYOUT(pmix_value_t, data.size, 8);
LAYOUT(pmix_value_t, data.pid, 8);
LAYOUT(pmix_value_t, data.integer, 8);
LAYOUT(pmix_value_t, data.int8, 8);
LAYOUT(pmix_value_t, data.int16, 8);
LAYOUT(pmix_value_t, data.int32, 8);
LAYOUT(pmix_value_t, data.int64, 8);
LAYOUT(pmix_value_t, data.uint, 8);
LAYOUT(pmix_value_t, data.uint8, 8);
LAYOUT(pmix_value_t, data.uint16, 8);
LAYOUT(pmix_value_t, data.uint32, 8);
LAYOUT(pmix_value_t, data.uint64, 8);
LAYOUT(pmix_value_t, data.fval, 8);
LAYOUT(pmix_value_t, data.dval, 8);
LAYOUT(pmix_value_t, data.tv, 8);
LAYOUT(pmix_value_t, data.time, 8);
LAYOUT(pmix_value_t, data.status, 8);
LAYOUT(pmix_value_t, data.rank, 8);
LAYOUT(pmix_value_t, data.nspace, 8);
LAYOUT(pmix_value_t, data.proc, 8);
LAYOUT(pmix_value_t, data.bo, 8);
LAYOUT(pmix_value_t, data.darray, 8);
LAYOUT(pmix_value_t, data.ptr, 8);
LAYOUT(pmix_value_t, data.topo, 8);
LAYOUT(pmix_value_t, data.cpuset, 8);
LAYOUT(pmix_value_t, data.devtype, 8);
LAYOUT(pmix_value_t, data.devdist, 8);
SAME_TYPE(((pmix_value_t *) 0)->data.flag, bool);
SAME_TYPE(((pmix_value_t *) 0)->data.byte, uint8_t);
SAME_TYPE(((pmix_value_t *) 0)->data.size, size_t);
SAME_TYPE(((pmix_value_t *) 0)->data.pid, pid_t);
SAME_TYPE(((pmix_value_t *) 0)->data.integer, int);
SAME_TYPE(((pmix_value_t *) 0)->data.int8, int8_t);
SAME_TYPE(((pmix_value_t *) 0)->data.int16, int16_t);
SAME_TYPE(((pmix_value_t *) 0)->data.int32, int32_t);
SAME_TYPE(((pmix_value_t *) 0)->data.int64, int64_t);
SAME_TYPE(((pmix_value_t *) 0)->data.uint8, uint8_t);
SAME_TYPE(((pmix_value_t *) 0)->data.uint16, uint16_t);
SAME_TYPE(((pmix_value_t *) 0)->data.fval, float);
SAME_TYPE(((pmix_value_t *) 0)->data.dval, double);
SAME_TYPE(((pmix_value_t *) 0)->data.tv, struct timeval);
SAME_TYPE(((pmix_value_t *) 0)->data.time, time_t);
SAME_TYPE(((pmix_value_t *) 0)->data.status, pmix_status_t);
SAME_TYPE(((pmix_value_t *) 0)->data.rank, pmix_rank_t);
SAME_TYPE(((pmix_value_t *) 0)->data.nspace, pmix_nspace_t *);
SAME_TYPE(((pmix_value_t *) 0)->data.proc, pmix_proc_t *);
SAME_TYPE(((pmix_value_t *) 0)->data.bo, pmix_byte_object_t);
SAME_TYPE(((pmix_value_t *) 0)->data.darray, pmix_data_array_t *);
SAME_TYPE(((pmix_value_t *) 0)->data.ptr, void *);
SAME_TYPE(((pmix_value_t *) 0)->data.string, char *);
SAME_TYPE(((pmix_value_t *) 0)->data.uint, unsigned int);
SAME_TYPE(((pmix_value_t *) 0)->data.uint32, uint32_t);
SAME_TYPE(((pmix_value_t *) 0)->data.uint64, uint64_t);
SAME_TYPE(((pmix_value_t *) 0)->data.devtype, pmix_device_type_t);
SAME_TYPE(((pmix_value_t *) 0)->data.topo, pmix_topology_t *);
SAME_TYPE(((pmix_value_t *) 0)->data.cpuset, pmix_cpuset_t *);
SAME_TYPE(((pmix_value_t *) 0)->data.devdist, pmix_device_distance_t *);

/* pmix_info_t */
SA(sizeof(pmix_info_t) == 552);
LAYOUT(pmix_info_t, key, 0);
LAYOUT(pmix_info_t, flags, 512);
LAYOUT(pmix_info_t, value, 520);
FIELD_TYPE(pmix_info_t, key, char *);
SA(sizeof(((pmix_info_t *) 0)->key) == 512);
FIELD_TYPE(pmix_info_t, flags, pmix_info_directives_t);
FIELD_TYPE(pmix_info_t, value, pmix_value_t);

SA(sizeof(pmix_pdata_t) == 808);
LAYOUT(pmix_pdata_t, proc, 0);
LAYOUT(pmix_pdata_t, key, 260);
LAYOUT(pmix_pdata_t, value, 776);
FIELD_TYPE(pmix_pdata_t, proc, pmix_proc_t);
FIELD_TYPE(pmix_pdata_t, value, pmix_value_t);

SA(sizeof(pmix_query_t) == 24);
LAYOUT(pmix_query_t, keys, 0);
LAYOUT(pmix_query_t, qualifiers, 8);
LAYOUT(pmix_query_t, nqual, 16);
FIELD_TYPE(pmix_query_t, keys, char **);
FIELD_TYPE(pmix_query_t, qualifiers, pmix_info_t *);
FIELD_TYPE(pmix_query_t, nqual, size_t);

/* pmix_app_t */
SA(sizeof(pmix_app_t) == 56);
LAYOUT(pmix_app_t, cmd, 0);
LAYOUT(pmix_app_t, argv, 8);
LAYOUT(pmix_app_t, env, 16);
LAYOUT(pmix_app_t, cwd, 24);
LAYOUT(pmix_app_t, maxprocs, 32);
LAYOUT(pmix_app_t, info, 40);
LAYOUT(pmix_app_t, ninfo, 48);
FIELD_TYPE(pmix_app_t, cmd, char *);
FIELD_TYPE(pmix_app_t, argv, char **);
FIELD_TYPE(pmix_app_t, env, char **);
FIELD_TYPE(pmix_app_t, cwd, char *);
FIELD_TYPE(pmix_app_t, maxprocs, int);
FIELD_TYPE(pmix_app_t, info, pmix_info_t *);
FIELD_TYPE(pmix_app_t, ninfo, size_t);

/* pmix_value_cmp_t: an enum, its values in OpenPMIx's order */
SA(sizeof(pmix_value_cmp_t) == 4);
SA(PMIX_EQUAL == 0 && PMIX_VALUE1_GREATER == 1 && PMIX_VALUE2_GREATER == 2);
SA(PMIX_VALUE_TYPE_DIFFERENT == 3 && PMIX_VALUE_INCOMPATIBLE_OBJECTS == 4);
SA(PMIX_VALUE_COMPARISON_NOT_AVAIL == 5);

/* callback types */
SAME_TYPE((pmix_release_cbfunc_t) 0, void (*)(void *));
SAME_TYPE((pmix_op_cbfunc_t) 0, void (*)(pmix_status_t, void *));
SAME_TYPE((pmix_value_cbfunc_t) 0, void (*)(pmix_status_t, pmix_value_t *, void *));
SAME_TYPE((pmix_lookup_cbfunc_t) 0, void (*)(pmix_status_t, pmix_pdata_t *, size_t, void *));
SAME_TYPE((pmix_hdlr_reg_cbfunc_t) 0, void (*)(pmix_status_t, size_t, void *));
SAME_TYPE((pmix_info_cbfunc_t) 0, void (*)(pmix_status_t, pmix_info_t *, size_t, void *,
                                           pmix_release_cbfunc_t, void *));
SAME_TYPE((pmix_event_notification_cbfunc_fn_t) 0,
          void (*)(pmix_status_t, pmix_info_t *, size_t, pmix_op_cbfunc_t, void *, void *));
SAME_TYPE((pmix_notification_fn_t) 0,
          void (*)(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t,
                   pmix_info_t *, size_t, pmix_event_notification_cbfunc_fn_t, void *));
SAME_TYPE((pmix_device_dist_cbfunc_t) 0,
          void (*)(pmix_status_t, pmix_device_distance_t *, size_t, void *,
                   pmix_release_cbfunc_t, void *));

/* function signatures: each call has exactly the type docs/abi.md gives it */
#define SIG(fn, type) SA(_Generic(&(fn), type: 1, default: 0))
SIG(PMIx_Init, pmix_status_t (*)(pmix_proc_t *, pmix_info_t[], size_t));
SIG(PMIx_Finalize, pmix_status_t (*)(const pmix_info_t[], size_t));
SIG(PMIx_Initialized, int (*)(void));
SIG(PMIx_tool_init, pmix_status_t (*)(pmix_proc_t *, pmix_info_t[], size_t));
SIG(PMIx_tool_finalize, pmix_status_t (*)(void));
SIG(PMIx_Compute_distances,
    pmix_status_t (*)(pmix_topology_t *, pmix_cpuset_t *, pmix_info_t[], size_t,
                      pmix_device_distance_t *[], size_t *));
SIG(PMIx_Compute_distances_nb,
    pmix_status_t (*)(pmix_topology_t *, pmix_cpuset_t *, pmix_info_t[], size_t,
                      pmix_device_dist_cbfunc_t, void *));
SIG(PMIx_Load_topology, pmix_status_t (*)(pmix_topology_t *));
SIG(PMIx_Put, pmix_status_t (*)(pmix_scope_t, const char *, pmix_value_t *));
SIG(PMIx_Commit, pmix_status_t (*)(void));
SIG(PMIx_Fence, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t));
SIG(PMIx_Fence_nb, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                                     pmix_op_cbfunc_t, void *));
SIG(PMIx_Get, pmix_status_t (*)(const pmix_proc_t *, const char *, const pmix_info_t *, size_t,
                                pmix_value_t **));
SIG(PMIx_Get_nb, pmix_status_t (*)(const pmix_proc_t *, const char *, const pmix_info_t *,
                                   size_t, pmix_value_cbfunc_t, void *));
SIG(PMIx_Register_event_handler,
    pmix_status_t (*)(pmix_status_t[], size_t, pmix_info_t[], size_t, pmix_notification_fn_t,
                      pmix_hdlr_reg_cbfunc_t, void *));
SIG(PMIx_Deregister_event_handler, pmix_status_t (*)(size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Notify_event,
    pmix_status_t (*)(pmix_status_t, const pmix_proc_t *, pmix_data_range_t, const pmix_info_t[],
                      size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Group_construct,
    pmix_status_t (*)(const char *, const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                      pmix_info_t **, size_t *));
SIG(PMIx_Group_construct_nb,
    pmix_status_t (*)(const char *, const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                      pmix_info_cbfunc_t, void *));
SIG(PMIx_Group_destruct, pmix_status_t (*)(const char *, const pmix_info_t *, size_t));
SIG(PMIx_Group_destruct_nb,
    pmix_status_t (*)(const char *, const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Group_leave, pmix_status_t (*)(const char *, const pmix_info_t *, size_t));
SIG(PMIx_Group_leave_nb,
    pmix_status_t (*)(const char *, const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Publish, pmix_status_t (*)(const pmix_info_t *, size_t));
SIG(PMIx_Lookup, pmix_status_t (*)(pmix_pdata_t *, size_t, const pmix_info_t *, size_t));
SIG(PMIx_Unpublish, pmix_status_t (*)(char **, const pmix_info_t *, size_t));
SIG(PMIx_Publish_nb, pmix_status_t (*)(const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Lookup_nb,
    pmix_status_t (*)(char **, const pmix_info_t *, size_t, pmix_lookup_cbfunc_t, void *));
SIG(PMIx_Unpublish_nb,
    pmix_status_t (*)(char **, const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Store_internal, pmix_status_t (*)(const pmix_proc_t *, const char *, pmix_value_t *));
SIG(PMIx_Progress, void (*)(void));
SAME_TYPE((pmix_locality_t) 0, uint16_t);
SIG(PMIx_Get_relative_locality,
    pmix_status_t (*)(const char *, const char *, pmix_locality_t *));
SIG(PMIx_Proc_state_string, const char *(*)(pmix_proc_state_t));
SIG(PMIx_Job_state_string, const char *(*)(pmix_job_state_t));
SIG(PMIx_Link_state_string, const char *(*)(pmix_link_state_t));
SIG(PMIx_Persistence_string, const char *(*)(pmix_persistence_t));
SIG(PMIx_Alloc_directive_string, const char *(*)(pmix_alloc_directive_t));
SIG(PMIx_IOF_channel_string, const char *(*)(pmix_iof_channel_t));
SIG(PMIx_Device_type_string, const char *(*)(pmix_device_type_t));
SIG(PMIx_Value_comparison_string, const char *(*)(pmix_value_cmp_t));
SIG(PMIx_Info_directives_string, char *(*)(pmix_info_directives_t));
SIG(PMIx_Get_attribute_string, const char *(*)(const char *));
SIG(PMIx_Get_attribute_name, const char *(*)(const char *));
SIG(PMIx_Value_xfer, pmix_status_t (*)(pmix_value_t *, const pmix_value_t *));
SIG(PMIx_Value_unload, pmix_status_t (*)(pmix_value_t *, void **, size_t *));
SIG(PMIx_Info_xfer, pmix_status_t (*)(pmix_info_t *, const pmix_info_t *));
SIG(PMIx_Data_array_destruct, void (*)(pmix_data_array_t *));
SIG(PMIx_Info_list_start, void *(*)(void));
SIG(PMIx_Info_list_add, pmix_status_t (*)(void *, const char *, const void *, pmix_data_type_t));
SIG(PMIx_Info_list_insert, pmix_status_t (*)(void *, pmix_info_t *));
SIG(PMIx_Info_list_xfer, pmix_status_t (*)(void *, const pmix_info_t *));
SIG(PMIx_Info_list_convert, pmix_status_t (*)(void *, pmix_data_array_t *));
SIG(PMIx_Info_list_release, void (*)(void *));
SIG(PMIx_tool_get_servers, pmix_status_t (*)(pmix_proc_t **, size_t *));
SIG(PMIx_tool_set_server, pmix_status_t (*)(const pmix_proc_t *, pmix_info_t *, size_t));
SIG(PMIx_tool_disconnect, pmix_status_t (*)(const pmix_proc_t *));
SIG(PMIx_tool_attach_to_server,
    pmix_status_t (*)(pmix_proc_t *, pmix_proc_t *, pmix_info_t *, size_t));
SA(PMIX_FWD_STDIN_CHANNEL == 1 && PMIX_FWD_STDOUT_CHANNEL == 2 && PMIX_FWD_STDERR_CHANNEL == 4 &&
   PMIX_FWD_STDDIAG_CHANNEL == 8 && PMIX_FWD_ALL_CHANNELS == 0xff && PMIX_FWD_NO_CHANNELS == 0);
SAME_TYPE((pmix_iof_cbfunc_t) 0, void (*)(size_t, pmix_iof_channel_t, pmix_proc_t *,
                                          pmix_byte_object_t *, pmix_info_t *, size_t));
SIG(PMIx_IOF_pull, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                                     pmix_iof_channel_t, pmix_iof_cbfunc_t,
                                     pmix_hdlr_reg_cbfunc_t, void *));
SIG(PMIx_IOF_deregister,
    pmix_status_t (*)(size_t, const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_IOF_push, pmix_status_t (*)(const pmix_proc_t *, size_t, pmix_byte_object_t *,
                                     const pmix_info_t *, size_t, pmix_op_cbfunc_t, void *));
SA(sizeof(pmix_data_buffer_t) == 40);
LAYOUT(pmix_data_buffer_t, base_ptr, 0);
LAYOUT(pmix_data_buffer_t, pack_ptr, 8);
LAYOUT(pmix_data_buffer_t, unpack_ptr, 16);
LAYOUT(pmix_data_buffer_t, bytes_allocated, 24);
LAYOUT(pmix_data_buffer_t, bytes_used, 32);
SIG(PMIx_Data_pack, pmix_status_t (*)(const pmix_proc_t *, pmix_data_buffer_t *, void *, int32_t,
                                      pmix_data_type_t));
SIG(PMIx_Data_unpack, pmix_status_t (*)(const pmix_proc_t *, pmix_data_buffer_t *, void *,
                                        int32_t *, pmix_data_type_t));
SIG(PMIx_Data_copy, pmix_status_t (*)(void **, void *, pmix_data_type_t));
SIG(PMIx_Data_copy_payload, pmix_status_t (*)(pmix_data_buffer_t *, pmix_data_buffer_t *));
SIG(PMIx_Data_unload, pmix_status_t (*)(pmix_data_buffer_t *, pmix_byte_object_t *));
SIG(PMIx_Data_load, pmix_status_t (*)(pmix_data_buffer_t *, pmix_byte_object_t *));
SIG(PMIx_Data_embed, pmix_status_t (*)(pmix_data_buffer_t *, const pmix_byte_object_t *));
SIG(PMIx_Data_compress, bool (*)(const uint8_t *, size_t, uint8_t **, size_t *));
SIG(PMIx_Data_decompress, bool (*)(const uint8_t *, size_t, uint8_t **, size_t *));
SA(sizeof(pmix_fabric_t) == 40);
LAYOUT(pmix_fabric_t, name, 0);
LAYOUT(pmix_fabric_t, index, 8);
LAYOUT(pmix_fabric_t, info, 16);
LAYOUT(pmix_fabric_t, ninfo, 24);
LAYOUT(pmix_fabric_t, module, 32);
SAME_TYPE((pmix_credential_cbfunc_t) 0,
          void (*)(pmix_status_t, pmix_byte_object_t *, pmix_info_t *, size_t, void *));
SAME_TYPE((pmix_validation_cbfunc_t) 0, void (*)(pmix_status_t, pmix_info_t *, size_t, void *));
SA(PMIX_ALLOC_NEW == 1 && PMIX_ALLOC_EXTEND == 2 && PMIX_ALLOC_RELEASE == 3 &&
   PMIX_ALLOC_REAQUIRE == 4 && PMIX_ALLOC_EXTERNAL == 128);
SIG(PMIx_Allocation_request, pmix_status_t (*)(pmix_alloc_directive_t, pmix_info_t *, size_t,
                                               pmix_info_t **, size_t *));
SIG(PMIx_Allocation_request_nb, pmix_status_t (*)(pmix_alloc_directive_t, pmix_info_t *, size_t,
                                                  pmix_info_cbfunc_t, void *));
SIG(PMIx_Get_credential, pmix_status_t (*)(const pmix_info_t *, size_t, pmix_byte_object_t *));
SIG(PMIx_Get_credential_nb,
    pmix_status_t (*)(const pmix_info_t *, size_t, pmix_credential_cbfunc_t, void *));
SIG(PMIx_Validate_credential, pmix_status_t (*)(const pmix_byte_object_t *, const pmix_info_t *,
                                                size_t, pmix_info_t **, size_t *));
SIG(PMIx_Validate_credential_nb, pmix_status_t (*)(const pmix_byte_object_t *, const pmix_info_t *,
                                                   size_t, pmix_validation_cbfunc_t, void *));
SIG(PMIx_Fabric_register, pmix_status_t (*)(pmix_fabric_t *, const pmix_info_t *, size_t));
SIG(PMIx_Fabric_register_nb, pmix_status_t (*)(pmix_fabric_t *, const pmix_info_t *, size_t,
                                               pmix_op_cbfunc_t, void *));
SIG(PMIx_Fabric_update, pmix_status_t (*)(pmix_fabric_t *));
SIG(PMIx_Fabric_update_nb, pmix_status_t (*)(pmix_fabric_t *, pmix_op_cbfunc_t, void *));
SIG(PMIx_Fabric_deregister, pmix_status_t (*)(pmix_fabric_t *));
SIG(PMIx_Fabric_deregister_nb, pmix_status_t (*)(pmix_fabric_t *, pmix_op_cbfunc_t, void *));
SA(sizeof(pmix_group_opt_t) == 4 && PMIX_GROUP_DECLINE == 0 && PMIX_GROUP_ACCEPT == 1);
SIG(PMIx_Group_invite,
    pmix_status_t (*)(const char *, const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                      pmix_info_t **, size_t *));
SIG(PMIx_Group_invite_nb,
    pmix_status_t (*)(const char *, const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                      pmix_info_cbfunc_t, void *));
SIG(PMIx_Group_join,
    pmix_status_t (*)(const char *, const pmix_proc_t *, pmix_group_opt_t, const pmix_info_t *,
                      size_t, pmix_info_t **, size_t *));
SIG(PMIx_Group_join_nb,
    pmix_status_t (*)(const char *, const pmix_proc_t *, pmix_group_opt_t, const pmix_info_t *,
                      size_t, pmix_info_cbfunc_t, void *));
SIG(PMIx_Query_info, pmix_status_t (*)(pmix_query_t[], size_t, pmix_info_t **, size_t *));
SIG(PMIx_Query_info_nb,
    pmix_status_t (*)(pmix_query_t[], size_t, pmix_info_cbfunc_t, void *));
SIG(PMIx_Resolve_peers,
    pmix_status_t (*)(const char *, const pmix_nspace_t, pmix_proc_t **, size_t *));
SIG(PMIx_Resolve_nodes, pmix_status_t (*)(const pmix_nspace_t, char **));
SIG(PMIx_Abort, pmix_status_t (*)(int, const char *, pmix_proc_t *, size_t));
SIG(PMIx_Topology_destruct, void (*)(pmix_topology_t *));
SIG(PMIx_Parse_cpuset_string, pmix_status_t (*)(const char *, pmix_cpuset_t *));
SIG(PMIx_Get_cpuset, pmix_status_t (*)(pmix_cpuset_t *, pmix_bind_envelope_t));
SIG(PMIx_Cpuset_destruct, void (*)(pmix_cpuset_t *));
SIG(PMIx_Spawn, pmix_status_t (*)(const pmix_info_t *, size_t, const pmix_app_t *, size_t, char *));
SIG(PMIx_Spawn_nb, pmix_status_t (*)(const pmix_info_t *, size_t, const pmix_app_t *, size_t,
                                     pmix_spawn_cbfunc_t, void *));
SAME_TYPE((pmix_spawn_cbfunc_t) 0, void (*)(pmix_status_t, char *, void *));
SIG(PMIx_Connect, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t));
SIG(PMIx_Connect_nb, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                                       pmix_op_cbfunc_t, void *));
SIG(PMIx_Disconnect, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t));
SIG(PMIx_Disconnect_nb, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *,
                                          size_t, pmix_op_cbfunc_t, void *));
SIG(PMIx_Value_compare, pmix_value_cmp_t (*)(pmix_value_t *, pmix_value_t *));
SIG(PMIx_Log, pmix_status_t (*)(const pmix_info_t *, size_t, const pmix_info_t *, size_t));
SIG(PMIx_Log_nb, pmix_status_t (*)(const pmix_info_t *, size_t, const pmix_info_t *, size_t,
                                   pmix_op_cbfunc_t, void *));
SIG(PMIx_Job_control, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t,
                                        pmix_info_t **, size_t *));
SIG(PMIx_Job_control_nb, pmix_status_t (*)(const pmix_proc_t *, size_t, const pmix_info_t *,
                                           size_t, pmix_info_cbfunc_t, void *));
SIG(PMIx_Process_monitor, pmix_status_t (*)(const pmix_info_t *, pmix_status_t,
                                            const pmix_info_t *, size_t, pmix_info_t **,
                                            size_t *));
SIG(PMIx_Process_monitor_nb, pmix_status_t (*)(const pmix_info_t *, pmix_status_t,
                                               const pmix_info_t *, size_t, pmix_info_cbfunc_t,
                                               void *));
SIG(PMIx_Data_type_string, const char *(*)(pmix_data_type_t));
SIG(PMIx_Scope_string, const char *(*)(pmix_scope_t));
SIG(PMIx_Data_range_string, const char *(*)(pmix_data_range_t));
SIG(PMIx_Value_string, char *(*)(const pmix_value_t *));
SIG(PMIx_Info_string, char *(*)(const pmix_info_t *));
SIG(PMIx_Data_print, pmix_status_t (*)(char **, char *, void *, pmix_data_type_t));
SIG(PMIx_Error_string, const char *(*)(pmix_status_t));
SIG(PMIx_Get_version, const char *(*)(void));
SIG(PMIx_Value_load, pmix_status_t (*)(pmix_value_t *, const void *, pmix_data_type_t));
SIG(PMIx_Value_destruct, void (*)(pmix_value_t *));
SIG(PMIx_Info_load, pmix_status_t (*)(pmix_info_t *, const char *, const void *,
                                      pmix_data_type_t));
/* pmix_server.h: every upcall type, the module layout, every call */
SAME_TYPE((pmix_server_client_connected_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, void* server_object, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_client_connected2_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, void* server_object, pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_client_finalized_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, void* server_object, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_abort_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, void *server_object, int status, const char msg[], pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_fencenb_fn_t) 0, pmix_status_t (*)(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_dmodex_req_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_publish_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_lookup_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, char **keys, const pmix_info_t info[], size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_unpublish_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, char **keys, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_spawn_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_connect_fn_t) 0, pmix_status_t (*)(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_disconnect_fn_t) 0, pmix_status_t (*)(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_register_events_fn_t) 0, pmix_status_t (*)(pmix_status_t *codes, size_t ncodes, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_deregister_events_fn_t) 0, pmix_status_t (*)(pmix_status_t *codes, size_t ncodes, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_notify_event_fn_t) 0, pmix_status_t (*)(pmix_status_t code, const pmix_proc_t *source, pmix_data_range_t range, pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_connection_cbfunc_t) 0, void (*)(int incoming_sd, void *cbdata));
SAME_TYPE((pmix_server_listener_fn_t) 0, pmix_status_t (*)(int listening_sd, pmix_connection_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_query_fn_t) 0, pmix_status_t (*)(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries, pmix_info_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_tool_connection_cbfunc_t) 0, void (*)(pmix_status_t status, pmix_proc_t *proc, void *cbdata));
SAME_TYPE((pmix_server_tool_connection_fn_t) 0, void (*)(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_log_fn_t) 0, void (*)(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata, const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_alloc_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *client, pmix_alloc_directive_t directive, const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_job_control_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *requestor, const pmix_proc_t targets[], size_t ntargets, const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_monitor_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *requestor, const pmix_info_t *monitor, pmix_status_t error, const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_get_cred_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, const pmix_info_t directives[], size_t ndirs, pmix_credential_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_validate_cred_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *proc, const pmix_byte_object_t *cred, const pmix_info_t directives[], size_t ndirs, pmix_validation_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_iof_fn_t) 0, pmix_status_t (*)(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[], size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_stdin_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *source, const pmix_proc_t targets[], size_t ntargets, const pmix_info_t directives[], size_t ndirs, const pmix_byte_object_t *bo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_grp_fn_t) 0, pmix_status_t (*)(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_server_fabric_fn_t) 0, pmix_status_t (*)(const pmix_proc_t *requestor, pmix_fabric_operation_t op, const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_dmodex_response_fn_t) 0, void (*)(pmix_status_t status, char *data, size_t sz, void *cbdata));
SAME_TYPE((pmix_setup_application_cbfunc_t) 0, void (*)(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *provided_cbdata, pmix_op_cbfunc_t cbfunc, void *cbdata));
SA(sizeof(pmix_server_module_t) == 224);
LAYOUT(pmix_server_module_t, client_connected, 0);
FIELD_TYPE(pmix_server_module_t, client_connected, pmix_server_client_connected_fn_t);
LAYOUT(pmix_server_module_t, client_finalized, 8);
FIELD_TYPE(pmix_server_module_t, client_finalized, pmix_server_client_finalized_fn_t);
LAYOUT(pmix_server_module_t, abort, 16);
FIELD_TYPE(pmix_server_module_t, abort, pmix_server_abort_fn_t);
LAYOUT(pmix_server_module_t, fence_nb, 24);
FIELD_TYPE(pmix_server_module_t, fence_nb, pmix_server_fencenb_fn_t);
LAYOUT(pmix_server_module_t, direct_modex, 32);
FIELD_TYPE(pmix_server_module_t, direct_modex, pmix_server_dmodex_req_fn_t);
LAYOUT(pmix_server_module_t, publish, 40);
FIELD_TYPE(pmix_server_module_t, publish, pmix_server_publish_fn_t);
LAYOUT(pmix_server_module_t, lookup, 48);
FIELD_TYPE(pmix_server_module_t, lookup, pmix_server_lookup_fn_t);
LAYOUT(pmix_server_module_t, unpublish, 56);
FIELD_TYPE(pmix_server_module_t, unpublish, pmix_server_unpublish_fn_t);
LAYOUT(pmix_server_module_t, spawn, 64);
FIELD_TYPE(pmix_server_module_t, spawn, pmix_server_spawn_fn_t);
LAYOUT(pmix_server_module_t, connect, 72);
FIELD_TYPE(pmix_server_module_t, connect, pmix_server_connect_fn_t);
LAYOUT(pmix_server_module_t, disconnect, 80);
FIELD_TYPE(pmix_server_module_t, disconnect, pmix_server_disconnect_fn_t);
LAYOUT(pmix_server_module_t, register_events, 88);
FIELD_TYPE(pmix_server_module_t, register_events, pmix_server_register_events_fn_t);
LAYOUT(pmix_server_module_t, deregister_events, 96);
FIELD_TYPE(pmix_server_module_t, deregister_events, pmix_server_deregister_events_fn_t);
LAYOUT(pmix_server_module_t, listener, 104);
FIELD_TYPE(pmix_server_module_t, listener, pmix_server_listener_fn_t);
LAYOUT(pmix_server_module_t, notify_event, 112);
FIELD_TYPE(pmix_server_module_t, notify_event, pmix_server_notify_event_fn_t);
LAYOUT(pmix_server_module_t, query, 120);
FIELD_TYPE(pmix_server_module_t, query, pmix_server_query_fn_t);
LAYOUT(pmix_server_module_t, tool_connected, 128);
FIELD_TYPE(pmix_server_module_t, tool_connected, pmix_server_tool_connection_fn_t);
LAYOUT(pmix_server_module_t, log, 136);
FIELD_TYPE(pmix_server_module_t, log, pmix_server_log_fn_t);
LAYOUT(pmix_server_module_t, allocate, 144);
FIELD_TYPE(pmix_server_module_t, allocate, pmix_server_alloc_fn_t);
LAYOUT(pmix_server_module_t, job_control, 152);
FIELD_TYPE(pmix_server_module_t, job_control, pmix_server_job_control_fn_t);
LAYOUT(pmix_server_module_t, monitor, 160);
FIELD_TYPE(pmix_server_module_t, monitor, pmix_server_monitor_fn_t);
LAYOUT(pmix_server_module_t, get_credential, 168);
FIELD_TYPE(pmix_server_module_t, get_credential, pmix_server_get_cred_fn_t);
LAYOUT(pmix_server_module_t, validate_credential, 176);
FIELD_TYPE(pmix_server_module_t, validate_credential, pmix_server_validate_cred_fn_t);
LAYOUT(pmix_server_module_t, iof_pull, 184);
FIELD_TYPE(pmix_server_module_t, iof_pull, pmix_server_iof_fn_t);
LAYOUT(pmix_server_module_t, push_stdin, 192);
FIELD_TYPE(pmix_server_module_t, push_stdin, pmix_server_stdin_fn_t);
LAYOUT(pmix_server_module_t, group, 200);
FIELD_TYPE(pmix_server_module_t, group, pmix_server_grp_fn_t);
LAYOUT(pmix_server_module_t, fabric, 208);
FIELD_TYPE(pmix_server_module_t, fabric, pmix_server_fabric_fn_t);
LAYOUT(pmix_server_module_t, client_connected2, 216);
FIELD_TYPE(pmix_server_module_t, client_connected2, pmix_server_client_connected2_fn_t);
SIG(PMIx_server_init, pmix_status_t (*)(pmix_server_module_t *module, pmix_info_t info[], size_t ninfo));
SIG(PMIx_server_finalize, pmix_status_t (*)(void));
SIG(PMIx_generate_regex, pmix_status_t (*)(const char *input, char **regex));
SIG(PMIx_generate_ppn, pmix_status_t (*)(const char *input, char **ppn));
SIG(PMIx_server_register_nspace, pmix_status_t (*)(const pmix_nspace_t nspace, int nlocalprocs, pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_deregister_nspace, void (*)(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_register_client, pmix_status_t (*)(const pmix_proc_t *proc, uid_t uid, gid_t gid, void *server_object, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_deregister_client, void (*)(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_setup_fork, pmix_status_t (*)(const pmix_proc_t *proc, char ***env));
SIG(PMIx_server_dmodex_request, pmix_status_t (*)(const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc, void *cbdata));
SIG(PMIx_server_setup_application, pmix_status_t (*)(const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo, pmix_setup_application_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_setup_local_support, pmix_status_t (*)(const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_IOF_deliver, pmix_status_t (*)(const pmix_proc_t *source, pmix_iof_channel_t channel, const pmix_byte_object_t *bo, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_collect_inventory, pmix_status_t (*)(pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_deliver_inventory, pmix_status_t (*)(pmix_info_t info[], size_t ninfo, pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_Register_attributes, pmix_status_t (*)(char *function, char *attrs[]));
SIG(PMIx_server_generate_locality_string, pmix_status_t (*)(const pmix_cpuset_t *cpuset, char **locality));
SIG(PMIx_server_generate_cpuset_string, pmix_status_t (*)(const pmix_cpuset_t *cpuset, char **cpuset_string));
SIG(PMIx_server_define_process_set, pmix_status_t (*)(const pmix_proc_t *members, size_t nmembers, const char *pset_name));
SIG(PMIx_server_delete_process_set, pmix_status_t (*)(char *pset_name));
SIG(PMIx_server_register_resources, pmix_status_t (*)(pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SIG(PMIx_server_deregister_resources, pmix_status_t (*)(pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata));
SAME_TYPE((pmix_modex_cbfunc_t) 0, void (*)(pmix_status_t, const char *, size_t, void *, pmix_release_cbfunc_t, void *));
SA(sizeof(pmix_group_operation_t) == 4);
SA(PMIX_GROUP_CONSTRUCT == 0 && PMIX_GROUP_DESTRUCT == 1);
SA(sizeof(pmix_fabric_operation_t) == 4);
SA(PMIX_FABRIC_REQUEST_INFO == 0 && PMIX_FABRIC_UPDATE_INFO == 1);

#ifdef PMIX_RS_VERSION
/* newer than OpenPMIx 4.2.2: checked against our header only */
SIG(PMIx_Device_distance_create, pmix_device_distance_t *(*)(size_t));
SIG(PMIx_Device_distance_free, void (*)(pmix_device_distance_t *, size_t));
SIG(PMIx_Device_distance_construct, void (*)(pmix_device_distance_t *));
SIG(PMIx_Device_distance_destruct, void (*)(pmix_device_distance_t *));
SIG(PMIx_Progress_thread_stop, void (*)(const pmix_info_t *, size_t));
#endif

int main(void)
{
    return 0;
}
