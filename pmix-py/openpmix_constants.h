/* The constants python3-pmix 4.2.2 defines (OpenPMIx 4.2.2's pmix_common.h, its
 * enums included) that the C headers of pmix-ffi/include do not: the Python module
 * defines them with the same values. build.rs reads this file after those headers,
 * in the same `#define NAME VALUE` form; a name the C headers come to define must
 * have the value written here (the build fails otherwise, and warns that the line
 * here can go). pmix-py/tests/test_api.py compares every constant, name and value,
 * with python3-pmix's. */

/* Status codes and events */
#define PMIX_DEBUGGER_RELEASE                      -3
#define PMIX_ERR_COMM_FAILURE                      -49
#define PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES    -51
#define PMIX_ERR_DUPLICATE_KEY                     -53
#define PMIX_ERR_EVENT_REGISTRATION                -144
#define PMIX_ERR_EXISTS                            -11
#define PMIX_ERR_EXISTS_OUTSIDE_SCOPE              -62
#define PMIX_ERR_EXIT_NONZERO_TERM                 -404
#define PMIX_ERR_INVALID_CRED                      -12
#define PMIX_ERR_INVALID_OPERATION                 -158
#define PMIX_ERR_IOF_COMPLETE                      -173
#define PMIX_ERR_IOF_FAILURE                       -172
#define PMIX_ERR_JOB_ABORTED                       -182
#define PMIX_ERR_JOB_ABORTED_BY_SIG                -184
#define PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT          -189
#define PMIX_ERR_JOB_ALLOC_FAILED                  -188
#define PMIX_ERR_JOB_FAILED_TO_MAP                 -179
#define PMIX_ERR_JOB_KILLED_BY_CMD                 -183
#define PMIX_ERR_JOB_NON_ZERO_TERM                 -187
#define PMIX_ERR_JOB_NO_EXE_SPECIFIED              -178
#define PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED         -186
#define PMIX_ERR_JOB_SYS_OP_FAILED                 -235
#define PMIX_ERR_JOB_TERM_WO_SYNC                  -185
#define PMIX_ERR_JOB_WDIR_NOT_FOUND                -233
#define PMIX_ERR_NO_PERMISSIONS                    -23
#define PMIX_ERR_OUT_OF_RESOURCE                   -29
#define PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED         -59
#define PMIX_ERR_PROC_ABORTED_BY_SIG               -402
#define PMIX_ERR_PROC_CHECKPOINT                   -5
#define PMIX_ERR_PROC_FAILED_TO_START              -401
#define PMIX_ERR_PROC_KILLED_BY_CMD                -400
#define PMIX_ERR_PROC_MIGRATE                      -6
#define PMIX_ERR_PROC_REQUESTED_ABORT              -8
#define PMIX_ERR_PROC_RESTART                      -4
#define PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED        -403
#define PMIX_ERR_REPEAT_ATTR_REGISTRATION          -171
#define PMIX_ERR_RESOURCE_BUSY                     -28
#define PMIX_EVENT_ACTION_DEFERRED                 -333
#define PMIX_EVENT_JOB_START                       -191
#define PMIX_EVENT_NODE_DOWN                       -231
#define PMIX_EVENT_NODE_OFFLINE                    -232
#define PMIX_EVENT_NO_ACTION_TAKEN                 -331
#define PMIX_EVENT_PARTIAL_ACTION_TAKEN            -332
#define PMIX_EVENT_SESSION_END                     -193
#define PMIX_EVENT_SESSION_START                   -192
#define PMIX_EVENT_SYS_BASE                        -230
#define PMIX_EVENT_SYS_OTHER                       -330
#define PMIX_FABRIC_UPDATED                        -175
#define PMIX_FABRIC_UPDATE_ENDPOINTS               -113
#define PMIX_FABRIC_UPDATE_PENDING                 -176
#define PMIX_GROUP_CONTEXT_ID_ASSIGNED             -169
#define PMIX_GROUP_LEADER_FAILED                   -168
#define PMIX_GROUP_LEADER_SELECTED                 -167
#define PMIX_JCTRL_CHECKPOINT_COMPLETE             -107
#define PMIX_JCTRL_PREEMPT_ALERT                   -108
#define PMIX_LAUNCHER_READY                        -155
#define PMIX_LAUNCH_COMPLETE                       -174
#define PMIX_MODEL_RESOURCES                       -151
#define PMIX_MONITOR_FILE_ALERT                    -110
#define PMIX_OPENMP_PARALLEL_ENTERED               -152
#define PMIX_OPENMP_PARALLEL_EXITED                -153
#define PMIX_OPERATION_IN_PROGRESS                 -156
#define PMIX_PROCESS_SET_DEFINE                    -55
#define PMIX_PROCESS_SET_DELETE                    -56
#define PMIX_PROC_TERMINATED                       -111
#define PMIX_QUERY_PARTIAL_SUCCESS                 -104
#define PMIX_READY_FOR_DEBUG                       -58

/* Data types */
#define PMIX_COMPRESSED_BYTE_OBJECT                59
#define PMIX_COMPRESSED_STRING                     42
#define PMIX_DATA_BUFFER                           65
#define PMIX_DATA_TYPE_MAX                         500
#define PMIX_DISK_STATS                            62
#define PMIX_NET_STATS                             63
#define PMIX_NODE_STATS                            64
#define PMIX_PROC_STATS                            61
#define PMIX_STOR_ACCESS                           67
#define PMIX_STOR_ACCESS_TYPE                      69
#define PMIX_STOR_MEDIUM                           66
#define PMIX_STOR_PERSIST                          68

/* Ranks, apps and info directives */
#define PMIX_APP_WILDCARD                          UINT32_MAX
#define PMIX_INFO_DIR_RESERVED                     0xffff0000
#define PMIX_RANK_LOCAL_PEERS                      (UINT32_MAX - 4)
#define PMIX_RANK_VALID                            (UINT32_MAX - 50)

/* Process and job states */
#define PMIX_JOB_STATE_AWAITING_ALLOC              1
#define PMIX_JOB_STATE_CONNECTED                   5
#define PMIX_JOB_STATE_LAUNCH_UNDERWAY             2
#define PMIX_JOB_STATE_RUNNING                     3
#define PMIX_JOB_STATE_SUSPENDED                   4
#define PMIX_JOB_STATE_TERMINATED                  20
#define PMIX_JOB_STATE_TERMINATED_WITH_ERROR       50
#define PMIX_JOB_STATE_UNDEF                       0
#define PMIX_JOB_STATE_UNTERMINATED                15
#define PMIX_PROC_STATE_ERROR                      50
#define PMIX_PROC_STATE_UNTERMINATED               15

/* Link states */
#define PMIX_LINK_DOWN                             1
#define PMIX_LINK_STATE_UNKNOWN                    0
#define PMIX_LINK_UP                               2

/* Coordinate views */
#define PMIX_COORD_LOGICAL_VIEW                    1
#define PMIX_COORD_PHYSICAL_VIEW                   2
#define PMIX_COORD_VIEW_UNDEF                      0

/* Storage */
#define PMIX_STORAGE_ACCESSIBILITY_CLUSTER         0x10
#define PMIX_STORAGE_ACCESSIBILITY_JOB             0x4
#define PMIX_STORAGE_ACCESSIBILITY_NODE            0x1
#define PMIX_STORAGE_ACCESSIBILITY_RACK            0x8
#define PMIX_STORAGE_ACCESSIBILITY_REMOTE          0x20
#define PMIX_STORAGE_ACCESSIBILITY_SESSION         0x2
#define PMIX_STORAGE_ACCESS_RD                     0x1
#define PMIX_STORAGE_ACCESS_RDWR                   0x3
#define PMIX_STORAGE_ACCESS_WR                     0x2
#define PMIX_STORAGE_MEDIUM_HDD                    0x4
#define PMIX_STORAGE_MEDIUM_NVME                   0x10
#define PMIX_STORAGE_MEDIUM_PMEM                   0x20
#define PMIX_STORAGE_MEDIUM_RAM                    0x40
#define PMIX_STORAGE_MEDIUM_SSD                    0x8
#define PMIX_STORAGE_MEDIUM_TAPE                   0x2
#define PMIX_STORAGE_MEDIUM_UNKNOWN                0x1
#define PMIX_STORAGE_PERSISTENCE_ARCHIVE           0x40
#define PMIX_STORAGE_PERSISTENCE_JOB               0x8
#define PMIX_STORAGE_PERSISTENCE_NODE              0x2
#define PMIX_STORAGE_PERSISTENCE_PROJECT           0x20
#define PMIX_STORAGE_PERSISTENCE_SCRATCH           0x10
#define PMIX_STORAGE_PERSISTENCE_SESSION           0x4
#define PMIX_STORAGE_PERSISTENCE_TEMPORARY         0x1

/* pmix_boolean_t */
#define PMIX_BOOL_FALSE                            1
#define PMIX_BOOL_TRUE                             0
#define PMIX_NON_BOOL                              2
