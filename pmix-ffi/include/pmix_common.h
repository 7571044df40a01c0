/*
 * pmix-rs: types, constants and macros of the PMIx C API (the subset pmix-rs offers).
 *
 * Every type declared here has the size, alignment and field offsets OpenPMIx 4.2.2
 * gives it on x86_64, and every constant its value, so code written for OpenPMIx's
 * <pmix.h> compiles unchanged against this header set and the objects it builds can be
 * handed to either library. pmix-ffi/tests/abi.rs checks that against both headers.
 *
 * Where pmix-rs differs from OpenPMIx it says so next to the declaration.
 */
#ifndef PMIX_RS_PMIX_COMMON_H
#define PMIX_RS_PMIX_COMMON_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <pmix_version.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* This header set is pmix-rs's, not OpenPMIx's. */
#define PMIX_RS_VERSION "0.1.0"

#if defined(__GNUC__)
#    define PMIX_EXPORT __attribute__((__visibility__("default")))
#else
#    define PMIX_EXPORT
#endif

/****    LIMITS AND SCALAR TYPES    ****/
#define PMIX_MAX_NSLEN  255
#define PMIX_MAX_KEYLEN 511

typedef char pmix_nspace_t[PMIX_MAX_NSLEN + 1];
typedef char pmix_key_t[PMIX_MAX_KEYLEN + 1];

typedef uint32_t pmix_rank_t;
#define PMIX_RANK_UNDEF      UINT32_MAX
#define PMIX_RANK_WILDCARD   (UINT32_MAX - 1)
#define PMIX_RANK_LOCAL_NODE (UINT32_MAX - 2)
#define PMIX_RANK_INVALID    (UINT32_MAX - 3)

typedef int pmix_status_t;
typedef uint16_t pmix_data_type_t;

/* Who an event (or published data) reaches. */
typedef uint8_t pmix_data_range_t;
#define PMIX_RANGE_UNDEF      0
#define PMIX_RANGE_RM         1
#define PMIX_RANGE_LOCAL      2 /* this node */
#define PMIX_RANGE_NAMESPACE  3 /* this job */
#define PMIX_RANGE_SESSION    4
#define PMIX_RANGE_GLOBAL     5
#define PMIX_RANGE_CUSTOM     6 /* the processes PMIX_EVENT_CUSTOM_RANGE lists */
#define PMIX_RANGE_PROC_LOCAL 7 /* this process alone */
#define PMIX_RANGE_INVALID    UINT8_MAX

/* Where a PMIx_Put value goes. */
typedef uint8_t pmix_scope_t;
#define PMIX_SCOPE_UNDEF 0
#define PMIX_LOCAL       1 /* processes on this node */
#define PMIX_REMOTE      2 /* processes on other nodes */
#define PMIX_GLOBAL      3 /* every process */
#define PMIX_INTERNAL    4 /* this process only */

/* Directives carried in pmix_info_t.flags. */
typedef uint32_t pmix_info_directives_t;
/* What two processes share (PMIx_Get_relative_locality). */
typedef uint16_t pmix_locality_t;
#define PMIX_LOCALITY_UNKNOWN        0x0000
#define PMIX_LOCALITY_NONLOCAL       0x8000
#define PMIX_LOCALITY_SHARE_HWTHREAD 0x0001
#define PMIX_LOCALITY_SHARE_CORE     0x0002
#define PMIX_LOCALITY_SHARE_L1CACHE  0x0004
#define PMIX_LOCALITY_SHARE_L2CACHE  0x0008
#define PMIX_LOCALITY_SHARE_L3CACHE  0x0010
#define PMIX_LOCALITY_SHARE_PACKAGE  0x0020
#define PMIX_LOCALITY_SHARE_NUMA     0x0040
#define PMIX_LOCALITY_SHARE_NODE     0x4000
/* Process, job and link states, persistence, allocation directives, I/O channels. */
typedef uint8_t pmix_proc_state_t;
typedef uint8_t pmix_job_state_t;
typedef uint8_t pmix_link_state_t;
typedef uint8_t pmix_persistence_t;
#define PMIX_PERSIST_INDEF          0
#define PMIX_PERSIST_FIRST_READ     1
#define PMIX_PERSIST_PROC           2
#define PMIX_PERSIST_APP            3
#define PMIX_PERSIST_SESSION        4
#define PMIX_PERSIST_INVALID        UINT8_MAX
typedef uint8_t pmix_alloc_directive_t;
typedef uint16_t pmix_iof_channel_t;
#define PMIX_INFO_REQD           0x00000001 /* unknown key: PMIX_ERR_NOT_SUPPORTED */
#define PMIX_INFO_ARRAY_END      0x00000002 /* set by PMIX_INFO_CREATE on the last element */
#define PMIX_INFO_REQD_PROCESSED 0x00000004
#define PMIX_INFO_QUALIFIER      0x00000008
#define PMIX_INFO_PERSISTENT     0x00000010 /* PMIX_INFO_DESTRUCT leaves the value alone */

/* Device types: a bitmask. */
typedef uint64_t pmix_device_type_t;
#define PMIX_DEVTYPE_UNKNOWN     0x00
#define PMIX_DEVTYPE_BLOCK       0x01
#define PMIX_DEVTYPE_GPU         0x02
#define PMIX_DEVTYPE_NETWORK     0x04
#define PMIX_DEVTYPE_OPENFABRICS 0x08
#define PMIX_DEVTYPE_DMA         0x10
#define PMIX_DEVTYPE_COPROC      0x20

/* Whose binding PMIx_Get_cpuset reports. */
typedef uint8_t pmix_bind_envelope_t;
#define PMIX_CPUBIND_PROCESS 0
#define PMIX_CPUBIND_THREAD  1

/****    STATUS CODES (PMIx_Error_string gives their texts)    ****/
#define PMIX_SUCCESS                 0
#define PMIX_ERROR                   -1
#define PMIX_ERR_PROC_ABORTED        -7
/* A spawned job's end, and why a spawn failed (pmix-run answers these). */
#define PMIX_EVENT_JOB_END           -145
#define PMIX_MODEL_DECLARED          -147
#define PMIX_ERR_JOB_APP_NOT_EXECUTABLE -177
#define PMIX_ERR_JOB_CANCELED        -180
#define PMIX_ERR_JOB_FAILED_TO_LAUNCH -181
#define PMIX_ERR_JOB_EXE_NOT_FOUND   -190
#define PMIX_ERR_JOB_INSUFFICIENT_RESOURCES -234
#define PMIX_ERR_WOULD_BLOCK         -15
#define PMIX_ERR_UNKNOWN_DATA_TYPE   -16
#define PMIX_ERR_TYPE_MISMATCH       -18
#define PMIX_ERR_UNPACK_INADEQUATE_SPACE -19
#define PMIX_ERR_UNPACK_FAILURE      -20
#define PMIX_ERR_PACK_FAILURE        -21
#define PMIX_ERR_TIMEOUT             -24
#define PMIX_ERR_UNREACH             -25
#define PMIX_ERR_BAD_PARAM           -27
#define PMIX_ERR_DATA_VALUE_NOT_FOUND -30
#define PMIX_ERR_INIT                -31
#define PMIX_ERR_NOMEM               -32
#define PMIX_ERR_NOT_FOUND           -46
#define PMIX_ERR_NOT_SUPPORTED       -47
#define PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER -50
#define PMIX_ERR_PARTIAL_SUCCESS     -52
#define PMIX_ERR_EMPTY               -60
#define PMIX_ERR_LOST_CONNECTION     -61
#define PMIX_ERR_NOT_AVAILABLE       -64 /* OpenPMIx 4.2.2: in pmix_deprecated.h */
#define PMIX_ERR_NOT_A_MEMBER        -66 /* newer OpenPMIx only */
#define PMIX_OPERATION_SUCCEEDED     -157
#define PMIX_EVENT_ACTION_COMPLETE   -334 /* an event handler's "done": ends the chain */
#define PMIX_EXTERNAL_ERR_BASE       -3000 /* codes below are the application's own */
#define PMIX_GROUP_INVITED           -159
#define PMIX_GROUP_LEFT              -160
#define PMIX_GROUP_INVITE_ACCEPTED   -161
#define PMIX_GROUP_INVITE_DECLINED   -162
#define PMIX_GROUP_INVITE_FAILED     -163
#define PMIX_GROUP_MEMBERSHIP_UPDATE -164
#define PMIX_GROUP_CONSTRUCT_ABORT   -165
#define PMIX_GROUP_CONSTRUCT_COMPLETE -166
#define PMIX_GROUP_MEMBER_FAILED     -170
#define PMIX_ERR_PROC_TERM_WO_SYNC   -200
#define PMIX_EVENT_PROC_TERMINATED   -201
/* Event codes a process may register for (pmix-rs raises none of them itself). */
#define PMIX_ERR_DEBUGGER_RELEASE    -3   /* a debugger releases processes held at a stop point */
#define PMIX_NOTIFY_ALLOC_COMPLETE   -105 /* OpenPMIx 4.2.2: in pmix_deprecated.h */
#define PMIX_JCTRL_CHECKPOINT        -106 /* the RM asks the process to checkpoint */
#define PMIX_MONITOR_HEARTBEAT_ALERT -109 /* a monitored process missed its heartbeats */
#define PMIX_ERR_JOB_TERMINATED      -145 /* a job ended (old name, still OpenPMIx's) */

/****    DATA TYPE TAGS (pmix_value_t.type)    ****/
#define PMIX_UNDEF            0
#define PMIX_BOOL             1
#define PMIX_BYTE             2
#define PMIX_STRING           3
#define PMIX_SIZE             4
#define PMIX_PID              5
#define PMIX_INT              6
#define PMIX_INT8             7
#define PMIX_INT16            8
#define PMIX_INT32            9
#define PMIX_INT64            10
#define PMIX_UINT             11
#define PMIX_UINT8            12
#define PMIX_UINT16           13
#define PMIX_UINT32           14
#define PMIX_UINT64           15
#define PMIX_FLOAT            16
#define PMIX_DOUBLE           17
#define PMIX_TIMEVAL          18
#define PMIX_TIME             19
#define PMIX_STATUS           20
#define PMIX_VALUE            21
#define PMIX_PROC             22
#define PMIX_APP              23
#define PMIX_INFO             24
#define PMIX_PDATA            25
#define PMIX_BYTE_OBJECT      27
#define PMIX_KVAL             28
#define PMIX_PERSIST          30
#define PMIX_POINTER          31
#define PMIX_SCOPE            32
#define PMIX_DATA_RANGE       33
#define PMIX_COMMAND          34
#define PMIX_INFO_DIRECTIVES  35
#define PMIX_DATA_TYPE        36
#define PMIX_PROC_STATE       37
#define PMIX_PROC_INFO        38
#define PMIX_DATA_ARRAY       39
#define PMIX_PROC_RANK        40
#define PMIX_QUERY            41
#define PMIX_ALLOC_DIRECTIVE  43
#define PMIX_IOF_CHANNEL      45
#define PMIX_ENVAR            46
#define PMIX_COORD            47
#define PMIX_REGATTR          48
#define PMIX_REGEX            49
#define PMIX_JOB_STATE        50
#define PMIX_LINK_STATE       51
#define PMIX_PROC_CPUSET      52
#define PMIX_GEOMETRY         53
#define PMIX_DEVICE_DIST      54
#define PMIX_ENDPOINT         55
#define PMIX_TOPO             56
#define PMIX_DEVTYPE          57
#define PMIX_LOCTYPE          58
#define PMIX_PROC_NSPACE      60

/****    ATTRIBUTE KEYS    ****/
#define PMIX_DEVICE_DISTANCES         "pmix.dev.dist"        /* pmix_data_array_t of pmix_device_distance_t: a bound rank's job data; as a distance directive, accepted and changes nothing */
#define PMIX_DEVICE_TYPE              "pmix.dev.type"        /* DEVTYPE, UINT64, UINT32 or UINT */
#define PMIX_DEVICE_ID                "pmix.dev.id"          /* char*, repeatable */
#define PMIX_DEVICE_DIST_ORIGIN       "pmix.dev.dist.origin" /* char*; newer OpenPMIx only */
#define PMIX_HOSTNAME                 "pmix.hname"           /* char*, at init: host in uuids */
#define PMIX_TOOL_DO_NOT_CONNECT      "pmix.tool.nocon"      /* bool: PMIx_tool_init stays unconnected */
#define PMIX_SERVER_URI               "pmix.srvr.uri"        /* char*: the server a tool connects to */
#define PMIX_TIMEOUT                  "pmix.timeout"
#define PMIX_GROUP_ID                 "pmix.grp.id"
#define PMIX_GROUP_LEADER             "pmix.grp.ldr"
#define PMIX_GROUP_OPTIONAL           "pmix.grp.opt"
#define PMIX_GROUP_NOTIFY_TERMINATION "pmix.grp.notterm"
#define PMIX_GROUP_FT_COLLECTIVE      "pmix.grp.ftcoll"
#define PMIX_GROUP_MEMBERSHIP         "pmix.grp.mbrs"
#define PMIX_GROUP_ASSIGN_CONTEXT_ID  "pmix.grp.actxid"
#define PMIX_GROUP_CONTEXT_ID         "pmix.grp.ctxid"
#define PMIX_GROUP_LOCAL_ONLY         "pmix.grp.lcl"
#define PMIX_EVENT_AFFECTED_PROC      "pmix.evproc"
#define PMIX_EVENT_CUSTOM_RANGE       "pmix.evrange"
#define PMIX_EVENT_NON_DEFAULT        "pmix.evnondef"
/* Job information a launched client gets from PMIx_Get (rank PMIX_RANK_WILDCARD for
 * the job's, a rank for that process's). */
#define PMIX_NSPACE                   "pmix.nspace"
#define PMIX_RANK                     "pmix.rank"
#define PMIX_JOBID                    "pmix.jobid"
#define PMIX_JOB_SIZE                 "pmix.job.size"
#define PMIX_UNIV_SIZE                "pmix.univ.size"
#define PMIX_MAX_PROCS                "pmix.max.size"
#define PMIX_NUM_NODES                "pmix.num.nodes"
#define PMIX_NODE_SIZE                "pmix.node.size"
#define PMIX_LOCAL_SIZE               "pmix.local.size"
#define PMIX_LOCAL_PEERS              "pmix.lpeers"
#define PMIX_LOCALLDR                 "pmix.lldr"
#define PMIX_LOCAL_RANK               "pmix.lrank"
#define PMIX_NODE_RANK                "pmix.nrank"
#define PMIX_GLOBAL_RANK              "pmix.grank"
#define PMIX_APPNUM                   "pmix.appnum"
#define PMIX_NODEID                   "pmix.nodeid"
#define PMIX_LOCALITY_STRING          "pmix.locstr"
#define PMIX_CPUSET                   "pmix.cpuset"
#define PMIX_NODE_LIST                "pmix.nlist"
/* Query keys and qualifiers (PMIx_Query_info). */
#define PMIX_QUERY_NAMESPACES         "pmix.qry.ns"
#define PMIX_QUERY_REFRESH_CACHE      "pmix.qry.rfsh"
/* Directives of PMIx_Fence and PMIx_Get. */
#define PMIX_COLLECT_DATA             "pmix.collect"
#define PMIX_IMMEDIATE                "pmix.immediate"
#define PMIX_OPTIONAL                 "pmix.optional"
#define PMIX_WAIT                     "pmix.wait"            /* int: PMIx_Lookup waits for that many keys (0: all) */
/* More job and node information keys. */
#define PMIX_LOCAL_PROCS              "pmix.lprocs"          /* pmix_data_array_t* of pmix_proc_t on a node */
#define PMIX_NODE_INFO                "pmix.node.info"       /* bool: the request is about the node PMIX_HOSTNAME/PMIX_NODEID names */
#define PMIX_FABRIC_COORDINATES       "pmix.fab.coord"       /* pmix_data_array_t* of a process's fabric coordinates */
#define PMIX_EXIT_CODE                "pmix.exit.code"       /* int: a terminated process's exit status */
/* More query keys. */
#define PMIX_QUERY_NAMESPACE_INFO     "pmix.qry.nsinfo"      /* pmix_data_array_t*: one entry per active namespace */
#define PMIX_QUERY_NUM_PSETS          "pmix.qry.psetnum"     /* size_t: how many process sets exist */
#define PMIX_QUERY_PSET_NAMES         "pmix.qry.psets"       /* char*: their names, comma separated */
#define PMIX_QUERY_SPAWN_SUPPORT      "pmix.qry.spawn"       /* char*: the spawn attributes the host supports */
#define PMIX_QUERY_DEBUG_SUPPORT      "pmix.qry.debug"       /* char*: the debugger attributes the host supports */
/* More event-registration keys. */
#define PMIX_EVENT_HDLR_NAME          "pmix.evname"          /* char*: a name for the handler */
#define PMIX_EVENT_RETURN_OBJECT      "pmix.evobject"        /* void*: handed back in the handler's info */
#define PMIX_EVENT_ONESHOT            "pmix.evone"           /* bool: remove the handler after its first event */
/* Group keys newer code passes. */
#define PMIX_GROUP_ADD_MEMBERS        "pmix.grp.add"         /* pmix_data_array_t* of pmix_proc_t to invite */
/* Tool connection keys (PMIx_tool_init). */
#define PMIX_CONNECT_SYSTEM_FIRST     "pmix.cnct.sys.first"  /* bool: try the system server before any other */
#define PMIX_TOOL_CONNECT_OPTIONAL    "pmix.tool.conopt"     /* bool: run unconnected when no server answers */
#define PMIX_LAUNCHER                 "pmix.tool.launcher"   /* bool: the tool launches jobs itself */
/* Spawn directives (PMIx_Spawn's job info and pmix_app_t.info). */
#define PMIX_MAPBY                    "pmix.mapby"           /* char*: mapping policy */
#define PMIX_NOTIFY_COMPLETION        "pmix.notecomp"        /* bool: tell the parent when the child job ends */
#define PMIX_FWD_STDOUT               "pmix.fwd.stdout"      /* bool: forward the job's stdout to the spawner */
#define PMIX_FWD_STDERR               "pmix.fwd.stderr"      /* bool: forward the job's stderr to the spawner */
#define PMIX_COSPAWN_APP              "pmix.cospawn"         /* bool: start this app alongside, not as, the job */
/* Debugger keys. */
#define PMIX_DEBUG_STOP_ON_EXEC       "pmix.dbg.exec"        /* processes stop at their first instruction */
#define PMIX_DEBUG_STOP_IN_INIT       "pmix.dbg.init"        /* processes stop inside PMIx_Init */
#define PMIX_DEBUG_STOP_IN_APP        "pmix.dbg.notify"      /* processes stop where the application chooses */
#define PMIX_DEBUGGER_DAEMONS         "pmix.debugger"        /* bool: the spawned app is a set of debugger daemons */
#define PMIX_DEBUG_JOB                "pmix.dbg.job"         /* char*: namespace to debug; OpenPMIx 4.2.2: in pmix_deprecated.h */
/* Job control and monitoring keys (PMIx_Job_control, PMIx_Process_monitor). */
#define PMIX_REGISTER_CLEANUP         "pmix.reg.cleanup"     /* char*: a file to remove when the job ends */
#define PMIX_REGISTER_CLEANUP_DIR     "pmix.reg.cleanupdir"  /* char*: a directory to remove */
#define PMIX_JOB_CTRL_PREEMPTIBLE       "pmix.jctrl.preempt"  /* bool: the job may be preempted */
#define PMIX_JOB_CTRL_CHECKPOINT_METHOD "pmix.jctrl.ckmethod" /* pmix_data_array_t* of pmix_info_t */
#define PMIX_JOB_CTRL_CHECKPOINT_SIGNAL "pmix.jctrl.ckptsig"  /* int: signal that triggers a checkpoint */
#define PMIX_JOB_CTRL_CHECKPOINT_EVENT  "pmix.jctrl.ckptev"   /* bool: an event triggers a checkpoint */
#define PMIX_MONITOR_ID               "pmix.monitor.id"      /* char*: names the monitoring request */
#define PMIX_SEND_HEARTBEAT           "pmix.monitor.beat"
#define PMIX_MONITOR_HEARTBEAT        "pmix.monitor.mbeat"   /* bool: watch the requester's heartbeats */
#define PMIX_MONITOR_HEARTBEAT_TIME   "pmix.monitor.btime"   /* uint32_t: seconds between expected heartbeats */
#define PMIX_MONITOR_HEARTBEAT_DROPS  "pmix.monitor.bdrop"   /* uint32_t: heartbeats that may be missed */
/* Logging channels and directives (PMIx_Log). */
#define PMIX_LOG_STDERR               "pmix.log.stderr"      /* char*: write to stderr */
#define PMIX_LOG_LOCAL_SYSLOG         "pmix.log.lsys"        /* char*: write to this node's syslog */
#define PMIX_LOG_GLOBAL_SYSLOG        "pmix.log.gsys"        /* char*: write to the system's central syslog */
#define PMIX_LOG_MSG                  "pmix.log.msg"         /* pmix_byte_object_t: message body */
#define PMIX_LOG_EMAIL                "pmix.log.email"       /* pmix_data_array_t* of pmix_info_t */
#define PMIX_LOG_EMAIL_ADDR           "pmix.log.emaddr"      /* char*: recipients, comma separated */
#define PMIX_LOG_EMAIL_SENDER_ADDR    "pmix.log.emfaddr"     /* char*: sender */
#define PMIX_LOG_EMAIL_SUBJECT        "pmix.log.emsub"       /* char*: subject */
#define PMIX_LOG_GENERATE_TIMESTAMP   "pmix.log.gtstmp"      /* bool: stamp the entry with the time */

/****    MEMORY HELPERS (the C library's allocator: free what these return with free) ****/
static inline void *pmix_malloc(size_t n) { return malloc(n); }
static inline void *pmix_calloc(size_t n, size_t m) { return calloc(n, m); }
static inline void pmix_free(void *m) { free(m); }
/* A malloc'ed copy of s (strdup, which strict C99 does not declare). */
static inline char *pmix_rs_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *) malloc(n);
    if (NULL != d)
        memcpy(d, s, n);
    return d;
}

/* Copies at most len bytes of src and always NUL-terminates dest (dest holds len+1). */
static inline void pmix_strncpy(char *dest, const char *src, size_t len)
{
    size_t i;
    for (i = 0; i < len && '\0' != src[i]; i++) {
        dest[i] = src[i];
    }
    dest[i] = '\0';
}

#define PMIX_LOAD_KEY(a, b)                                              \
    do {                                                                 \
        memset((a), 0, PMIX_MAX_KEYLEN + 1);                             \
        if (NULL != (b)) {                                               \
            pmix_strncpy((char *) (a), (const char *) (b), PMIX_MAX_KEYLEN); \
        }                                                                \
    } while (0)

#define PMIX_CHECK_KEY(a, b) (0 == strncmp((a)->key, (b), PMIX_MAX_KEYLEN))

#define PMIX_LOAD_NSPACE(a, b)                                           \
    do {                                                                 \
        memset((a), 0, PMIX_MAX_NSLEN + 1);                              \
        if (NULL != (b)) {                                               \
            pmix_strncpy((char *) (a), (const char *) (b), PMIX_MAX_NSLEN); \
        }                                                                \
    } while (0)

/****    PROCESS NAME    ****/
typedef struct pmix_proc {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
} pmix_proc_t;

#define PMIX_PROC_STATIC_INIT { .nspace = {0}, .rank = PMIX_RANK_UNDEF }
#define PMIX_PROC_CONSTRUCT(m)                 \
    do {                                       \
        memset((m), 0, sizeof(pmix_proc_t));   \
    } while (0)
#define PMIX_PROC_LOAD(m, n, r)                 \
    do {                                        \
        PMIX_PROC_CONSTRUCT((m));               \
        PMIX_LOAD_NSPACE((m)->nspace, (n));     \
        (m)->rank = (r);                        \
    } while (0)
#define PMIX_LOAD_PROCID(a, b, c)               \
    do {                                        \
        PMIX_LOAD_NSPACE((a)->nspace, (b));     \
        (a)->rank = (c);                        \
    } while (0)
#define PMIX_PROC_DESTRUCT(m)
#define PMIX_PROC_CREATE(m, n)                                              \
    do {                                                                    \
        if (0 == (n)) {                                                     \
            (m) = NULL;                                                     \
        } else {                                                            \
            (m) = (pmix_proc_t *) pmix_calloc((n), sizeof(pmix_proc_t));    \
        }                                                                   \
    } while (0)
#define PMIX_PROC_FREE(m, n)                    \
    do {                                        \
        if (NULL != (m)) {                      \
            pmix_free((m));                     \
            (m) = NULL;                         \
        }                                       \
    } while (0)
#define PMIX_CHECK_NSPACE(a, b) (0 == strncmp((a), (b), PMIX_MAX_NSLEN))
/* Whether two ranks (two processes: same namespace too) match; PMIX_RANK_WILDCARD on
 * either side matches any rank. */
#define PMIX_CHECK_RANK(a, b) \
    ((a) == (b) || PMIX_RANK_WILDCARD == (a) || PMIX_RANK_WILDCARD == (b))
#define PMIX_CHECK_PROCID(a, b) \
    (PMIX_CHECK_NSPACE((a)->nspace, (b)->nspace) && PMIX_CHECK_RANK((a)->rank, (b)->rank))

/****    BYTE OBJECT, DATA ARRAY    ****/
typedef struct pmix_byte_object {
    char *bytes;
    size_t size;
} pmix_byte_object_t;
/* A buffer of packed data (PMIx_Data_pack / _unpack): the memory, where the next pack
 * and the next unpack go, how much is allocated and used. */
typedef struct pmix_data_buffer {
    char *base_ptr;
    char *pack_ptr;
    char *unpack_ptr;
    size_t bytes_allocated;
    size_t bytes_used;
} pmix_data_buffer_t;
#define PMIX_DATA_BUFFER_STATIC_INIT                                                      \
    {.base_ptr = NULL, .pack_ptr = NULL, .unpack_ptr = NULL, .bytes_allocated = 0,       \
     .bytes_used = 0}
#define PMIX_DATA_BUFFER_CREATE(m)                                                        \
    do {                                                                                  \
        (m) = (pmix_data_buffer_t *) calloc(1, sizeof(pmix_data_buffer_t));               \
    } while (0)
#define PMIX_DATA_BUFFER_RELEASE(m) \
    do {                            \
        free((m)->base_ptr);        \
        free((m));                  \
        (m) = NULL;                 \
    } while (0)
#define PMIX_DATA_BUFFER_CONSTRUCT(m) memset((m), 0, sizeof(pmix_data_buffer_t))
#define PMIX_DATA_BUFFER_DESTRUCT(m) \
    do {                             \
        free((m)->base_ptr);         \
        memset((m), 0, sizeof(pmix_data_buffer_t)); \
    } while (0)
#define PMIX_BYTE_OBJECT_STATIC_INIT {.bytes = NULL, .size = 0}
#define PMIX_BYTE_OBJECT_CONSTRUCT(m) \
    do {                              \
        (m)->bytes = NULL;            \
        (m)->size = 0;                \
    } while (0)
#define PMIX_BYTE_OBJECT_DESTRUCT(m) \
    do {                             \
        free((m)->bytes);            \
        (m)->bytes = NULL;           \
        (m)->size = 0;               \
    } while (0)

typedef struct pmix_data_array {
    pmix_data_type_t type;
    size_t size;
    void *array;
} pmix_data_array_t;

/****    CPUSET    ****/
/* pmix-rs's cpusets come from PMIx_Parse_cpuset_string or PMIx_Get_cpuset: source
 * points to a string of the library's and bitmap to an object of its own (not an hwloc
 * bitmap). Release them with PMIx_Cpuset_destruct, never with free. A cpuset whose
 * source is not the library's pointer is PMIX_ERR_BAD_PARAM. */
typedef struct {
    char *source;
    void *bitmap;
} pmix_cpuset_t;

#define PMIX_CPUSET_STATIC_INIT { .source = NULL, .bitmap = NULL }
#define PMIX_CPUSET_CONSTRUCT(m) memset((m), 0, sizeof(pmix_cpuset_t))

/****    TOPOLOGY    ****/
/* Filled by PMIx_Load_topology: source points to a string of the library's, topology
 * to the library's own topology (owned by the library; PMIx_Topology_destruct only
 * clears the struct). */
typedef struct {
    char *source;
    void *topology;
} pmix_topology_t;

#define PMIX_TOPOLOGY_STATIC_INIT { .source = NULL, .topology = NULL }
#define PMIX_TOPOLOGY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_topology_t))
#define PMIX_TOPOLOGY_DESTRUCT(x) PMIx_Topology_destruct(x)

/****    DEVICE DISTANCE    ****/
/* uuid and osname are allocated with malloc: free them (and the array) with
 * PMIx_Device_distance_free or PMIX_DEVICE_DIST_FREE. */
typedef struct pmix_device_distance {
    char *uuid;
    char *osname;
    pmix_device_type_t type;
    uint16_t mindist;
    uint16_t maxdist;
} pmix_device_distance_t;

#define PMIX_DEVICE_DIST_STATIC_INIT \
    { .uuid = NULL, .osname = NULL, .type = PMIX_DEVTYPE_UNKNOWN, .mindist = 0, .maxdist = 0 }

#define PMIX_DEVICE_DIST_CONSTRUCT(m)                       \
    do {                                                    \
        memset((m), 0, sizeof(pmix_device_distance_t));     \
        (m)->mindist = UINT16_MAX;                          \
        (m)->maxdist = UINT16_MAX;                          \
    } while (0)

#define PMIX_DEVICE_DIST_DESTRUCT(m)        \
    do {                                    \
        if (NULL != (m)->uuid) {            \
            pmix_free((m)->uuid);           \
            (m)->uuid = NULL;               \
        }                                   \
        if (NULL != (m)->osname) {          \
            pmix_free((m)->osname);         \
            (m)->osname = NULL;             \
        }                                   \
    } while (0)

/* Deprecated by the standard in favour of PMIx_Device_distance_create/free. */
#define PMIX_DEVICE_DIST_CREATE(m, n)                                               \
    do {                                                                            \
        size_t _pmix_i;                                                             \
        pmix_device_distance_t *_pmix_m = NULL;                                     \
        if (0 != (n)) {                                                             \
            _pmix_m = (pmix_device_distance_t *) pmix_calloc((n), sizeof(pmix_device_distance_t)); \
            if (NULL != _pmix_m) {                                                  \
                for (_pmix_i = 0; _pmix_i < (n); _pmix_i++) {                       \
                    _pmix_m[_pmix_i].mindist = UINT16_MAX;                          \
                    _pmix_m[_pmix_i].maxdist = UINT16_MAX;                          \
                }                                                                   \
            }                                                                       \
        }                                                                           \
        (m) = _pmix_m;                                                              \
    } while (0)

#define PMIX_DEVICE_DIST_FREE(m, n)                         \
    do {                                                    \
        size_t _pmix_i;                                     \
        if (NULL != (m)) {                                  \
            for (_pmix_i = 0; _pmix_i < (n); _pmix_i++) {   \
                PMIX_DEVICE_DIST_DESTRUCT(&(m)[_pmix_i]);   \
            }                                               \
            pmix_free((m));                                 \
            (m) = NULL;                                     \
        }                                                   \
    } while (0)

/****    VALUE    ****/
/* The union has OpenPMIx's size (24 bytes) and offset (8); it names the members
 * pmix-rs reads or writes, and reserves the rest. */
typedef struct pmix_value {
    pmix_data_type_t type;
    union {
        bool flag;
        uint8_t byte;
        char *string;
        size_t size;
        pid_t pid;
        int integer;
        int8_t int8;
        int16_t int16;
        int32_t int32;
        int64_t int64;
        unsigned int uint;
        uint8_t uint8;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t uint64;
        float fval;
        double dval;
        struct timeval tv;
        time_t time;
        pmix_status_t status;
        pmix_rank_t rank;
        pmix_nspace_t *nspace;
        pmix_proc_t *proc;
        pmix_byte_object_t bo;
        pmix_data_array_t *darray;
        void *ptr;
        pmix_topology_t *topo;
        pmix_cpuset_t *cpuset;
        pmix_device_type_t devtype;
        pmix_device_distance_t *devdist;
        uint64_t pmix_rs_reserved[3];
    } data;
} pmix_value_t;

#define PMIX_VALUE_STATIC_INIT { .type = PMIX_UNDEF, .data.ptr = NULL }

/* Copies data of type into val. PMIX_STRING copies the string data points to (data is
 * the char*), PMIX_POINTER stores data itself, PMIX_PROC copies the pmix_proc_t data
 * points to, PMIX_DATA_ARRAY the pmix_data_array_t (of PMIX_PROC elements) and its
 * elements, other scalar types copy *data; NULL data leaves the value zero (true for
 * PMIX_BOOL). pmix-rs supports the scalar types, PMIX_STRING, PMIX_POINTER, PMIX_PROC,
 * PMIX_DATA_ARRAY of PMIX_PROC and PMIX_UNDEF; any other type is PMIX_ERR_NOT_SUPPORTED
 * and leaves val PMIX_UNDEF. */
PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data,
                                          pmix_data_type_t type);
/* Releases what the value owns (a PMIX_STRING's string, a PMIX_BYTE_OBJECT's bytes, a
 * PMIX_PROC's process, a PMIX_DATA_ARRAY and its elements) and makes it PMIX_UNDEF. */
PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *val);

#define PMIX_VALUE_LOAD(v, d, t) PMIx_Value_load((v), (d), (t))
#define PMIX_VALUE_DESTRUCT(m) PMIx_Value_destruct(m)

#define PMIX_VALUE_CONSTRUCT(m)                 \
    do {                                        \
        memset((m), 0, sizeof(pmix_value_t));   \
        (m)->type = PMIX_UNDEF;                 \
    } while (0)

#define PMIX_VALUE_CREATE(m, n)                                                 \
    do {                                                                        \
        if (0 == (n)) {                                                         \
            (m) = NULL;                                                         \
        } else {                                                                \
            (m) = (pmix_value_t *) pmix_calloc((n), sizeof(pmix_value_t));      \
        }                                                                       \
    } while (0)

/* Releases one value PMIx_Get returned, with what it owns. */
#define PMIX_VALUE_RELEASE(m)       \
    do {                            \
        PMIX_VALUE_DESTRUCT((m));   \
        pmix_free((m));             \
        (m) = NULL;                 \
    } while (0)

/* Reads a numeric value (any integer type, PMIX_SIZE, PMIX_PID, PMIX_PROC_RANK,
 * PMIX_FLOAT or PMIX_DOUBLE) into n converted to type t, with s PMIX_SUCCESS; any other
 * type leaves n alone and sets s to PMIX_ERR_BAD_PARAM. */
#define PMIX_VALUE_GET_NUMBER(s, m, n, t)                                   \
    do {                                                                    \
        (s) = PMIX_SUCCESS;                                                 \
        switch ((m)->type) {                                                \
        case PMIX_SIZE:      (n) = (t) ((m)->data.size); break;             \
        case PMIX_PID:       (n) = (t) ((m)->data.pid); break;              \
        case PMIX_INT:       (n) = (t) ((m)->data.integer); break;          \
        case PMIX_INT8:      (n) = (t) ((m)->data.int8); break;             \
        case PMIX_INT16:     (n) = (t) ((m)->data.int16); break;            \
        case PMIX_INT32:     (n) = (t) ((m)->data.int32); break;            \
        case PMIX_INT64:     (n) = (t) ((m)->data.int64); break;            \
        case PMIX_UINT:      (n) = (t) ((m)->data.uint); break;             \
        case PMIX_UINT8:     (n) = (t) ((m)->data.uint8); break;            \
        case PMIX_UINT16:    (n) = (t) ((m)->data.uint16); break;           \
        case PMIX_UINT32:    (n) = (t) ((m)->data.uint32); break;           \
        case PMIX_UINT64:    (n) = (t) ((m)->data.uint64); break;           \
        case PMIX_FLOAT:     (n) = (t) ((m)->data.fval); break;             \
        case PMIX_DOUBLE:    (n) = (t) ((m)->data.dval); break;             \
        case PMIX_PROC_RANK: (n) = (t) ((m)->data.rank); break;             \
        default:             (s) = PMIX_ERR_BAD_PARAM; break;               \
        }                                                                   \
    } while (0)

/* What comparing two values can find (OpenPMIx's PMIx_Value_compare answers; pmix-rs
 * does not offer that function). */
typedef enum {
    PMIX_EQUAL,
    PMIX_VALUE1_GREATER,
    PMIX_VALUE2_GREATER,
    PMIX_VALUE_TYPE_DIFFERENT,
    PMIX_VALUE_INCOMPATIBLE_OBJECTS,
    PMIX_VALUE_COMPARISON_NOT_AVAIL
} pmix_value_cmp_t;

/* How v1 compares with v2, as libpmix2 answers: PMIX_VALUE_TYPE_DIFFERENT for different
 * types; else PMIX_EQUAL / PMIX_VALUE1_GREATER / PMIX_VALUE2_GREATER (numbers by value,
 * strings byte by byte, processes by nspace then rank, byte objects by size then bytes);
 * PMIX_VALUE_INCOMPATIBLE_OBJECTS for a NULL value, string or process;
 * PMIX_VALUE_COMPARISON_NOT_AVAIL for another type or a NaN. */
PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2);

/* Deep copies (strings, byte objects, processes and data arrays duplicated): dest is
 * overwritten. Errors: PMIX_ERR_BAD_PARAM (NULL), PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOMEM. */
PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src);
/* A value's datum: a string copied (malloc'ed; a NULL string leaves *data and *sz
 * alone), a byte object's bytes handed out as they are, a scalar or process copied
 * into the memory *data points to; *sz its size. PMIX_ERR_BAD_PARAM for NULL, or a
 * scalar or UNDEF value with NULL *data; PMIX_ERR_UNKNOWN_DATA_TYPE for UNDEF otherwise. */
PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz);
/* Frees what a data array holds and leaves it empty (the struct is the caller's). */
PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d);


#define PMIX_VALUE_FREE(m, n)                           \
    do {                                                \
        size_t _vv;                                     \
        if (NULL != (m)) {                              \
            for (_vv = 0; _vv < (n); _vv++) {           \
                PMIX_VALUE_DESTRUCT(&((m)[_vv]));       \
            }                                           \
            pmix_free((m));                             \
            (m) = NULL;                                 \
        }                                               \
    } while (0)

/****    INFO    ****/
typedef struct pmix_info {
    pmix_key_t key;
    pmix_info_directives_t flags;
    pmix_value_t value;
} pmix_info_t;

#define PMIX_INFO_STATIC_INIT { .key = {0}, .flags = 0, .value = PMIX_VALUE_STATIC_INIT }

/* Copies key (at most PMIX_MAX_KEYLEN bytes) and the value (as PMIx_Value_load); flags
 * are left alone. */
PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key,
                                         const void *data, pmix_data_type_t type);

/* A deep copy of src (key, flags, value) into dest, as PMIx_Value_xfer. */
PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src);

/* Info lists: start one, add (a copy of key and data, as PMIx_Info_load), insert (the
 * info's data is taken over: do not destruct it), xfer (a deep copy), convert (a
 * PMIX_INFO data array, deep copies, in order; PMIX_ERR_EMPTY for an empty list),
 * release (every info, then the list). */
PMIX_EXPORT void *PMIx_Info_list_start(void);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                             pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par);
PMIX_EXPORT void PMIx_Info_list_release(void *ptr);

#define PMIX_INFO_CONSTRUCT(m)                  \
    do {                                        \
        memset((m), 0, sizeof(pmix_info_t));    \
        (m)->value.type = PMIX_UNDEF;           \
    } while (0)

#define PMIX_INFO_CREATE(m, n)                                              \
    do {                                                                    \
        if (0 == (n)) {                                                     \
            (m) = NULL;                                                     \
        } else {                                                            \
            (m) = (pmix_info_t *) pmix_calloc((n), sizeof(pmix_info_t));    \
            if (NULL != (m)) {                                              \
                (m)[(n) - 1].flags = PMIX_INFO_ARRAY_END;                   \
            }                                                               \
        }                                                                   \
    } while (0)

#define PMIX_INFO_LOAD(i, k, d, t) (void) PMIx_Info_load((i), (k), (d), (t))

#define PMIX_INFO_REQUIRED(m)      ((m)->flags |= PMIX_INFO_REQD)
#define PMIX_INFO_OPTIONAL(m)      ((m)->flags &= ~PMIX_INFO_REQD)
#define PMIX_INFO_IS_REQUIRED(m)   ((m)->flags & PMIX_INFO_REQD)
#define PMIX_INFO_PROCESSED(m)     ((m)->flags |= PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_WAS_PROCESSED(m) ((m)->flags & PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_SET_END(m)       ((m)->flags |= PMIX_INFO_ARRAY_END)
#define PMIX_INFO_IS_END(m)        ((m)->flags & PMIX_INFO_ARRAY_END)
#define PMIX_INFO_SET_QUALIFIER(i) ((i)->flags |= PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_QUALIFIER(i)  ((i)->flags & PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_OPTIONAL(m)   !((m)->flags & PMIX_INFO_REQD)
#define PMIX_INFO_SET_PERSISTENT(m) ((m)->flags |= PMIX_INFO_PERSISTENT)
#define PMIX_INFO_IS_PERSISTENT(m) ((m)->flags & PMIX_INFO_PERSISTENT)

#define PMIX_INFO_DESTRUCT(m)                       \
    do {                                            \
        if (!PMIX_INFO_IS_PERSISTENT((m))) {        \
            PMIX_VALUE_DESTRUCT(&(m)->value);       \
        }                                           \
    } while (0)

#define PMIX_INFO_FREE(m, n)                                \
    do {                                                    \
        size_t _pmix_is;                                    \
        if (NULL != (m)) {                                  \
            for (_pmix_is = 0; _pmix_is < (n); _pmix_is++) { \
                PMIX_INFO_DESTRUCT(&((m)[_pmix_is]));       \
            }                                               \
            pmix_free((m));                                 \
            (m) = NULL;                                     \
        }                                                   \
    } while (0)

/* Whether a value reads as boolean true: PMIX_UNDEF (a key given alone) is true; a
 * PMIX_BOOL is its flag; a string is true when empty, a non-zero number, or begins with
 * "yes"/"true" (any case), false for zero, "no" or "false"; anything else is false. */
static inline bool pmix_rs_value_true(const pmix_value_t *v)
{
    const char *p;
    if (PMIX_UNDEF == v->type) {
        return true;
    }
    if (PMIX_BOOL == v->type) {
        return v->data.flag;
    }
    if (PMIX_STRING != v->type) {
        return false;
    }
    if (NULL == v->data.string) {
        return true;
    }
    for (p = v->data.string; isspace((unsigned char) *p); p++) {
    }
    if ('\0' == *p) {
        return true;
    }
    if (isdigit((unsigned char) *p)) {
        return 0 != atoi(p);
    }
    return 0 == strncasecmp(p, "yes", 3) || 0 == strncasecmp(p, "true", 4);
}

#define PMIX_CHECK_TRUE(a) pmix_rs_value_true(a)
#define PMIX_INFO_TRUE(m) pmix_rs_value_true(&(m)->value)

/****    PUBLISHED DATA    ****/
typedef struct pmix_pdata {
    pmix_proc_t proc;
    pmix_key_t key;
    pmix_value_t value;
} pmix_pdata_t;

#define PMIX_PDATA_CONSTRUCT(m)                 \
    do {                                        \
        memset((m), 0, sizeof(pmix_pdata_t));   \
        (m)->value.type = PMIX_UNDEF;           \
    } while (0)
#define PMIX_PDATA_DESTRUCT(m)                  \
    do {                                        \
        PMIX_VALUE_DESTRUCT(&(m)->value);       \
    } while (0)
#define PMIX_PDATA_CREATE(m, n)                                                 \
    do {                                                                        \
        if (0 == (n)) {                                                         \
            (m) = NULL;                                                         \
        } else {                                                                \
            (m) = (pmix_pdata_t *) pmix_calloc((n), sizeof(pmix_pdata_t));      \
        }                                                                       \
    } while (0)
#define PMIX_PDATA_RELEASE(m)                   \
    do {                                        \
        PMIX_VALUE_DESTRUCT(&(m)->value);       \
        pmix_free((m));                         \
        (m) = NULL;                             \
    } while (0)
#define PMIX_PDATA_FREE(m, n)                           \
    do {                                                \
        size_t _pd;                                     \
        if (NULL != (m)) {                              \
            for (_pd = 0; _pd < (n); _pd++) {           \
                PMIX_PDATA_DESTRUCT(&((m)[_pd]));       \
            }                                           \
            pmix_free((m));                             \
            (m) = NULL;                                 \
        }                                               \
    } while (0)

/****    ARGV (NULL-terminated string arrays, as pmix_query_t's keys)    ****/
/* The number of strings before the NULL (0 for a NULL array). */
static inline int pmix_argv_count(char **argv)
{
    int n = 0;
    while (NULL != argv && NULL != argv[n])
        n++;
    return n;
}

/* Appends a copy of arg to *argv (growing or creating it; it stays NULL-terminated). */
static inline pmix_status_t pmix_argv_append_nosize(char ***argv, const char *arg)
{
    if (NULL == argv || NULL == arg)
        return PMIX_ERR_BAD_PARAM;
    int n = pmix_argv_count(*argv);
    char **grown = (char **) realloc(*argv, ((size_t) n + 2) * sizeof(char *));
    if (NULL == grown)
        return PMIX_ERR_NOMEM;
    *argv = grown;
    grown[n] = pmix_rs_strdup(arg);
    grown[n + 1] = NULL;
    return NULL == grown[n] ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

/* Frees every string and the array (NULL: nothing). */
static inline void pmix_argv_free(char **argv)
{
    for (int i = 0; NULL != argv && NULL != argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* Splits src at every delimiter into a new array of copies, leaving out empty pieces;
 * NULL when there is no piece (or src is NULL, or memory runs out). */
static inline char **pmix_argv_split(const char *src, int delimiter)
{
    char **argv = NULL;
    const char *p = src;
    while (NULL != p && '\0' != *p) {
        const char *end = strchr(p, delimiter);
        size_t len = (NULL == end) ? strlen(p) : (size_t) (end - p);
        if (0 < len) {
            char *piece = (char *) malloc(len + 1);
            pmix_status_t rc = PMIX_ERR_NOMEM;
            if (NULL != piece) {
                memcpy(piece, p, len);
                piece[len] = '\0';
                rc = pmix_argv_append_nosize(&argv, piece);
                free(piece);
            }
            if (PMIX_SUCCESS != rc) {
                pmix_argv_free(argv);
                return NULL;
            }
        }
        p = (NULL == end) ? NULL : end + 1;
    }
    return argv;
}

#define PMIX_ARGV_COUNT(r, a) (r) = pmix_argv_count(a)
#define PMIX_ARGV_APPEND(r, a, b) (r) = pmix_argv_append_nosize(&(a), (b))
#define PMIX_ARGV_FREE(a) pmix_argv_free(a)
#define PMIX_ARGV_SPLIT(a, b, c) (a) = pmix_argv_split((b), (c))

/****    DATA ARRAY HELPERS    ****/
#define PMIX_DATA_ARRAY_STATIC_INIT { .type = PMIX_UNDEF, .size = 0, .array = NULL }

#define PMIX_DATA_ARRAY_INIT(m, t)      \
    do {                                \
        (m)->array = NULL;              \
        (m)->type = (t);                \
        (m)->size = 0;                  \
    } while (0)

/* Makes m an array of n zeroed elements of type t: PMIX_INFO, PMIX_PROC, PMIX_VALUE
 * and PMIX_PDATA elements come from the matching *_CREATE; other types get no
 * storage here (array NULL, size 0), as in OpenPMIx. */
#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t)                          \
    do {                                                            \
        (m)->type = (t);                                            \
        (m)->size = (n);                                            \
        (m)->array = NULL;                                          \
        if (0 < (n)) {                                              \
            if (PMIX_INFO == (t)) {                                 \
                pmix_info_t *_pmix_dai;                             \
                PMIX_INFO_CREATE(_pmix_dai, (n));                   \
                (m)->array = _pmix_dai;                             \
            } else if (PMIX_PROC == (t)) {                          \
                PMIX_PROC_CREATE((m)->array, (n));                  \
            } else if (PMIX_VALUE == (t)) {                         \
                PMIX_VALUE_CREATE((m)->array, (n));                 \
            } else if (PMIX_PDATA == (t)) {                         \
                PMIX_PDATA_CREATE((m)->array, (n));                 \
            } else {                                                \
                (m)->size = 0;                                      \
            }                                                       \
        }                                                           \
    } while (0)

/* As PMIX_DATA_ARRAY_CONSTRUCT on a new malloc'ed array descriptor (NULL if memory
 * runs out). */
#define PMIX_DATA_ARRAY_CREATE(m, n, t)                                         \
    do {                                                                        \
        (m) = (pmix_data_array_t *) pmix_calloc(1, sizeof(pmix_data_array_t));  \
        if (NULL != (m)) {                                                      \
            PMIX_DATA_ARRAY_CONSTRUCT((m), (n), (t));                           \
        }                                                                       \
    } while (0)

/* Releases the elements (with what each owns, for PMIX_INFO, PMIX_VALUE, PMIX_PDATA,
 * PMIX_STRING and PMIX_BYTE_OBJECT elements) and the element storage; the descriptor
 * itself is left empty. */
static inline void pmix_rs_darray_destruct(pmix_data_array_t *m)
{
    size_t i;
    if (NULL == m) {
        return;
    }
    if (NULL != m->array) {
        for (i = 0; i < m->size; i++) {
            switch (m->type) {
            case PMIX_INFO:
                PMIX_INFO_DESTRUCT(&((pmix_info_t *) m->array)[i]);
                break;
            case PMIX_VALUE:
                PMIx_Value_destruct(&((pmix_value_t *) m->array)[i]);
                break;
            case PMIX_PDATA:
                PMIX_PDATA_DESTRUCT(&((pmix_pdata_t *) m->array)[i]);
                break;
            case PMIX_STRING:
                free(((char **) m->array)[i]);
                break;
            case PMIX_BYTE_OBJECT:
                free(((pmix_byte_object_t *) m->array)[i].bytes);
                break;
            default:
                break;
            }
        }
        free(m->array);
    }
    m->array = NULL;
    m->size = 0;
}

#define PMIX_DATA_ARRAY_DESTRUCT(m) pmix_rs_darray_destruct(m)
#define PMIX_DATA_ARRAY_FREE(m)             \
    do {                                    \
        if (NULL != (m)) {                  \
            PMIX_DATA_ARRAY_DESTRUCT((m));  \
            pmix_free((m));                 \
            (m) = NULL;                     \
        }                                   \
    } while (0)

/****    INFO TRANSFER    ****/
/* The size of one element of a fixed-size type (0 for types that own memory or that
 * pmix-rs does not copy). */
static inline size_t pmix_rs_scalar_size(pmix_data_type_t t)
{
    switch (t) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE: case PMIX_INT8: case PMIX_UINT8: return 1;
    case PMIX_INT16: case PMIX_UINT16: return 2;
    case PMIX_INT: case PMIX_UINT: case PMIX_INT32: case PMIX_UINT32: return 4;
    case PMIX_INT64: case PMIX_UINT64: return 8;
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_STATUS: return sizeof(pmix_status_t);
    case PMIX_PROC_RANK: return sizeof(pmix_rank_t);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_DATA_RANGE: case PMIX_SCOPE: case PMIX_PERSIST: return 1;
    case PMIX_DATA_TYPE: return sizeof(pmix_data_type_t);
    case PMIX_INFO_DIRECTIVES: return sizeof(pmix_info_directives_t);
    case PMIX_DEVTYPE: return sizeof(pmix_device_type_t);
    default: return 0;
    }
}

static inline pmix_status_t pmix_rs_value_xfer(pmix_value_t *dest, const pmix_value_t *src);

/* A deep copy of a data array: elements of fixed-size types, strings, byte objects,
 * values and infos. Other element types: PMIX_ERR_NOT_SUPPORTED. */
static inline pmix_status_t pmix_rs_darray_xfer(pmix_data_array_t **dest,
                                                const pmix_data_array_t *src)
{
    pmix_data_array_t *d;
    size_t i, esize = 0;
    pmix_status_t rc = PMIX_SUCCESS;

    *dest = NULL;
    if (NULL == src) {
        return PMIX_SUCCESS;
    }
    d = (pmix_data_array_t *) calloc(1, sizeof(pmix_data_array_t));
    if (NULL == d) {
        return PMIX_ERR_NOMEM;
    }
    d->type = src->type;
    if (0 == src->size || NULL == src->array) {
        *dest = d;
        return PMIX_SUCCESS;
    }
    switch (src->type) {
    case PMIX_STRING: esize = sizeof(char *); break;
    case PMIX_BYTE_OBJECT: esize = sizeof(pmix_byte_object_t); break;
    case PMIX_VALUE: esize = sizeof(pmix_value_t); break;
    case PMIX_INFO: esize = sizeof(pmix_info_t); break;
    default: esize = pmix_rs_scalar_size(src->type); break;
    }
    if (0 == esize) {
        free(d);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    d->array = calloc(src->size, esize);
    if (NULL == d->array) {
        free(d);
        return PMIX_ERR_NOMEM;
    }
    d->size = src->size;
    for (i = 0; i < src->size && PMIX_SUCCESS == rc; i++) {
        switch (src->type) {
        case PMIX_STRING: {
            const char *s = ((char *const *) src->array)[i];
            if (NULL != s && NULL == (((char **) d->array)[i] = pmix_rs_strdup(s))) {
                rc = PMIX_ERR_NOMEM;
            }
            break;
        }
        case PMIX_BYTE_OBJECT: {
            const pmix_byte_object_t *b = &((const pmix_byte_object_t *) src->array)[i];
            pmix_byte_object_t *c = &((pmix_byte_object_t *) d->array)[i];
            if (NULL != b->bytes && 0 < b->size) {
                c->bytes = (char *) malloc(b->size);
                if (NULL == c->bytes) {
                    rc = PMIX_ERR_NOMEM;
                    break;
                }
                memcpy(c->bytes, b->bytes, b->size);
                c->size = b->size;
            }
            break;
        }
        case PMIX_VALUE:
            rc = pmix_rs_value_xfer(&((pmix_value_t *) d->array)[i],
                                    &((const pmix_value_t *) src->array)[i]);
            break;
        case PMIX_INFO: {
            const pmix_info_t *a = &((const pmix_info_t *) src->array)[i];
            pmix_info_t *b = &((pmix_info_t *) d->array)[i];
            memcpy(b->key, a->key, sizeof(pmix_key_t));
            b->flags = a->flags;
            rc = pmix_rs_value_xfer(&b->value, &a->value);
            break;
        }
        default:
            memcpy((char *) d->array + i * esize, (const char *) src->array + i * esize, esize);
            break;
        }
    }
    if (PMIX_SUCCESS != rc) {
        pmix_rs_darray_destruct(d);
        free(d);
        return rc;
    }
    *dest = d;
    return PMIX_SUCCESS;
}

/* A deep copy of src into dest (whose previous contents are overwritten, not freed):
 * fixed-size types, PMIX_STRING, PMIX_BYTE_OBJECT, PMIX_PROC, PMIX_DATA_ARRAY (see
 * pmix_rs_darray_xfer) and PMIX_POINTER (the pointer itself). Other types:
 * PMIX_ERR_NOT_SUPPORTED, dest left PMIX_UNDEF. */
static inline pmix_status_t pmix_rs_value_xfer(pmix_value_t *dest, const pmix_value_t *src)
{
    pmix_status_t rc = PMIX_SUCCESS;

    memset(dest, 0, sizeof(pmix_value_t));
    dest->type = PMIX_UNDEF;
    switch (src->type) {
    case PMIX_UNDEF:
        return PMIX_SUCCESS;
    case PMIX_STRING:
        if (NULL != src->data.string
            && NULL == (dest->data.string = pmix_rs_strdup(src->data.string))) {
            return PMIX_ERR_NOMEM;
        }
        break;
    case PMIX_BYTE_OBJECT:
        if (NULL != src->data.bo.bytes && 0 < src->data.bo.size) {
            dest->data.bo.bytes = (char *) malloc(src->data.bo.size);
            if (NULL == dest->data.bo.bytes) {
                return PMIX_ERR_NOMEM;
            }
            memcpy(dest->data.bo.bytes, src->data.bo.bytes, src->data.bo.size);
            dest->data.bo.size = src->data.bo.size;
        }
        break;
    case PMIX_PROC:
        if (NULL != src->data.proc) {
            dest->data.proc = (pmix_proc_t *) malloc(sizeof(pmix_proc_t));
            if (NULL == dest->data.proc) {
                return PMIX_ERR_NOMEM;
            }
            memcpy(dest->data.proc, src->data.proc, sizeof(pmix_proc_t));
        }
        break;
    case PMIX_DATA_ARRAY:
        rc = pmix_rs_darray_xfer(&dest->data.darray, src->data.darray);
        if (PMIX_SUCCESS != rc) {
            return rc;
        }
        break;
    case PMIX_POINTER:
        dest->data.ptr = src->data.ptr;
        break;
    default:
        if (0 == pmix_rs_scalar_size(src->type)) {
            return PMIX_ERR_NOT_SUPPORTED;
        }
        memcpy(&dest->data, &src->data, sizeof(dest->data));
        break;
    }
    dest->type = src->type;
    return PMIX_SUCCESS;
}

/* Copies key, flags and (deeply, as pmix_rs_value_xfer) the value of s into d. */
#define PMIX_INFO_XFER(d, s)                                    \
    do {                                                        \
        memcpy((d)->key, (s)->key, sizeof(pmix_key_t));         \
        (d)->flags = (s)->flags;                                \
        (void) pmix_rs_value_xfer(&(d)->value, &(s)->value);    \
    } while (0)

/****    APPLICATIONS (PMIx_Spawn)    ****/
/* One application of a spawn request. cmd, cwd and the argv/env arrays are malloc'ed
 * and freed by PMIX_APP_DESTRUCT; info is an array of ninfo infos. */
typedef struct pmix_app {
    char *cmd;
    char **argv;
    char **env;
    char *cwd;
    int maxprocs;
    pmix_info_t *info;
    size_t ninfo;
} pmix_app_t;

#define PMIX_APP_STATIC_INIT \
    { .cmd = NULL, .argv = NULL, .env = NULL, .cwd = NULL, .maxprocs = 0, .info = NULL, .ninfo = 0 }
#define PMIX_APP_CONSTRUCT(m) memset((m), 0, sizeof(pmix_app_t))
#define PMIX_APP_CREATE(m, n)                                                   \
    do {                                                                        \
        (m) = (0 == (n)) ? NULL                                                 \
                         : (pmix_app_t *) pmix_calloc((n), sizeof(pmix_app_t)); \
    } while (0)
#define PMIX_APP_INFO_CREATE(m, n)                  \
    do {                                            \
        (m)->ninfo = (n);                           \
        PMIX_INFO_CREATE((m)->info, (m)->ninfo);    \
    } while (0)

/* Frees what one app owns and leaves it empty. */
static inline void pmix_rs_app_destruct(pmix_app_t *m)
{
    free(m->cmd);
    pmix_argv_free(m->argv);
    pmix_argv_free(m->env);
    free(m->cwd);
    PMIX_INFO_FREE(m->info, m->ninfo);
    memset(m, 0, sizeof(pmix_app_t));
}

/* Destructs the n apps of an array (not the array itself). */
static inline void pmix_app_free(pmix_app_t *ap, size_t n)
{
    size_t k;
    for (k = 0; NULL != ap && k < n; k++) {
        pmix_rs_app_destruct(&ap[k]);
    }
}

#define PMIX_APP_DESTRUCT(m) pmix_rs_app_destruct(m)
#define PMIX_APP_RELEASE(m)         \
    do {                            \
        PMIX_APP_DESTRUCT((m));     \
        pmix_free((m));             \
        (m) = NULL;                 \
    } while (0)
#define PMIX_APP_FREE(m, n)         \
    do {                            \
        pmix_app_free((m), (n));    \
        pmix_free((m));             \
        (m) = NULL;                 \
    } while (0)

/****    GROUPS    ****/
/* A PMIx_Group_join answer. */
typedef enum {
    PMIX_GROUP_DECLINE,
    PMIX_GROUP_ACCEPT
} pmix_group_opt_t;

/* What a group upcall of pmix_server.h asks the host to do. */
typedef enum {
    PMIX_GROUP_CONSTRUCT,
    PMIX_GROUP_DESTRUCT
} pmix_group_operation_t;

/* What a fabric upcall of pmix_server.h asks the host to do. */
typedef enum {
    PMIX_FABRIC_REQUEST_INFO,
    PMIX_FABRIC_UPDATE_INFO
} pmix_fabric_operation_t;

/****    QUERIES    ****/
/* One query of PMIx_Query_info: keys is NULL-terminated (PMIX_ARGV_APPEND builds it),
 * qualifiers an array of nqual infos (PMIX_NSPACE, PMIX_QUERY_REFRESH_CACHE, ...). */
typedef struct pmix_query {
    char **keys;
    pmix_info_t *qualifiers;
    size_t nqual;
} pmix_query_t;

#define PMIX_QUERY_STATIC_INIT {NULL, NULL, 0}
#define PMIX_QUERY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_query_t))
#define PMIX_QUERY_DESTRUCT(m)                              \
    do {                                                    \
        pmix_argv_free((m)->keys);                          \
        (m)->keys = NULL;                                   \
        PMIX_INFO_FREE((m)->qualifiers, (m)->nqual);        \
        (m)->nqual = 0;                                     \
    } while (0)
#define PMIX_QUERY_CREATE(m, n)                                                 \
    do {                                                                        \
        (m) = (0 == (n)) ? NULL                                                 \
                         : (pmix_query_t *) pmix_calloc((n), sizeof(pmix_query_t)); \
    } while (0)
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)                  \
    do {                                                    \
        (m)->nqual = (n);                                   \
        PMIX_INFO_CREATE((m)->qualifiers, (m)->nqual);      \
    } while (0)
#define PMIX_QUERY_RELEASE(m)       \
    do {                            \
        PMIX_QUERY_DESTRUCT((m));   \
        pmix_free((m));             \
        (m) = NULL;                 \
    } while (0)
#define PMIX_QUERY_FREE(m, n)                                   \
    do {                                                        \
        if (NULL != (m)) {                                      \
            for (size_t _qf = 0; _qf < (n); _qf++)              \
                PMIX_QUERY_DESTRUCT(&((m)[_qf]));               \
            pmix_free((m));                                     \
            (m) = NULL;                                         \
        }                                                       \
    } while (0)

/****    CALLBACKS    ****/
typedef void (*pmix_release_cbfunc_t)(void *cbdata);
typedef void (*pmix_op_cbfunc_t)(pmix_status_t status, void *cbdata);
/* The host's answer to a fence or a direct-modex upcall (pmix_server.h): `data` stays
 * the host's until the library calls release_fn(release_cbdata), which it does once it
 * has copied the bytes. */
typedef void (*pmix_modex_cbfunc_t)(pmix_status_t status, const char *data, size_t ndata,
                                    void *cbdata, pmix_release_cbfunc_t release_fn,
                                    void *release_cbdata);
/* kv belongs to the library and is released when the callback returns: copy what you
 * keep. */
typedef void (*pmix_value_cbfunc_t)(pmix_status_t status, pmix_value_t *kv, void *cbdata);
/* What PMIx_Get_credential_nb and PMIx_Validate_credential_nb answer. */
typedef void (*pmix_credential_cbfunc_t)(pmix_status_t status, pmix_byte_object_t *credential,
                                         pmix_info_t info[], size_t ninfo, void *cbdata);
typedef void (*pmix_validation_cbfunc_t)(pmix_status_t status, pmix_info_t info[], size_t ninfo,
                                         void *cbdata);

/* A fabric registration (PMIx_Fabric_register): the caller's name, the library's
 * index, infos and object. */
typedef struct pmix_fabric_s {
    char *name;
    size_t index;
    pmix_info_t *info;
    size_t ninfo;
    void *module;
} pmix_fabric_t;
#define PMIX_FABRIC_STATIC_INIT {.name = NULL, .index = 0, .info = NULL, .ninfo = 0, .module = NULL}
#define PMIX_FABRIC_CONSTRUCT(x) memset(x, 0, sizeof(pmix_fabric_t))

/* Allocation directives (pmix_alloc_directive_t). */
#define PMIX_ALLOC_NEW          1
#define PMIX_ALLOC_EXTEND       2
#define PMIX_ALLOC_RELEASE      3
#define PMIX_ALLOC_REAQUIRE     4
#define PMIX_ALLOC_EXTERNAL     128

/* What PMIx_Lookup_nb found: data is the library's for the call. */
typedef void (*pmix_lookup_cbfunc_t)(pmix_status_t status, pmix_pdata_t data[], size_t ndata,
                                     void *cbdata);
typedef void (*pmix_hdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);
/* info is the library's until release_fn(release_cbdata) (NULL release_fn: nothing to
 * release). */
typedef void (*pmix_info_cbfunc_t)(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                                   void *cbdata, pmix_release_cbfunc_t release_fn,
                                   void *release_cbdata);
/* What an event handler calls when it is done with an event: status
 * PMIX_EVENT_ACTION_COMPLETE ends the chain; results are not used by pmix-rs. */
typedef void (*pmix_event_notification_cbfunc_fn_t)(pmix_status_t status,
                                                    pmix_info_t *results, size_t nresults,
                                                    pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                                                    void *notification_cbdata);
/* An event handler, run on the progress thread; source and info are the library's for
 * the call. */
typedef void (*pmix_notification_fn_t)(size_t evhdlr_registration_id, pmix_status_t status,
                                       const pmix_proc_t *source, pmix_info_t info[],
                                       size_t ninfo, pmix_info_t *results, size_t nresults,
                                       pmix_event_notification_cbfunc_fn_t cbfunc,
                                       void *cbdata);
/* The new job's namespace is the library's for the call. */
typedef void (*pmix_spawn_cbfunc_t)(pmix_status_t status, pmix_nspace_t nspace, void *cbdata);
typedef void (*pmix_device_dist_cbfunc_t)(pmix_status_t status, pmix_device_distance_t *dist,
                                          size_t ndist, void *cbdata,
                                          pmix_release_cbfunc_t release_fn,
                                          void *release_cbdata);

/* The other attribute keys of OpenPMIx 4.2.2, by name and string, so programs written
 * for it compile unchanged (what each means: the PMIx standard). A key this library
 * does not act on is passed on as given (to the server, in a request that carries
 * infos) or ignored; flagged PMIX_INFO_REQD, it is PMIX_ERR_NOT_SUPPORTED. */
#define PMIX_LAUNCHER_RNDZ_URI                "PMIX_LAUNCHER_RNDZ_URI"
#define PMIX_LAUNCHER_RNDZ_FILE               "PMIX_LAUNCHER_RNDZ_FILE"
#define PMIX_KEEPALIVE_PIPE                   "PMIX_KEEPALIVE_PIPE"
#define PMIX_ATTR_UNDEF                       "pmix.undef"
#define PMIX_EXTERNAL_PROGRESS                "pmix.evext"
#define PMIX_SERVER_TOOL_SUPPORT              "pmix.srvr.tool"
#define PMIX_SERVER_REMOTE_CONNECTIONS        "pmix.srvr.remote"
#define PMIX_SERVER_SYSTEM_SUPPORT            "pmix.srvr.sys"
#define PMIX_SERVER_SESSION_SUPPORT           "pmix.srvr.sess"
#define PMIX_SERVER_TMPDIR                    "pmix.srvr.tmpdir"
#define PMIX_SYSTEM_TMPDIR                    "pmix.sys.tmpdir"
#define PMIX_SERVER_SHARE_TOPOLOGY            "pmix.srvr.share"
#define PMIX_SERVER_ENABLE_MONITORING         "pmix.srv.monitor"
#define PMIX_SERVER_NSPACE                    "pmix.srv.nspace"
#define PMIX_SERVER_RANK                      "pmix.srv.rank"
#define PMIX_SERVER_GATEWAY                   "pmix.srv.gway"
#define PMIX_SERVER_SCHEDULER                 "pmix.srv.sched"
#define PMIX_SERVER_START_TIME                "pmix.srv.strtime"
#define PMIX_HOMOGENEOUS_SYSTEM               "pmix.homo"
#define PMIX_SINGLETON                        "pmix.singleton"
#define PMIX_BIND_PROGRESS_THREAD             "pmix.bind.pt"
#define PMIX_BIND_REQUIRED                    "pmix.bind.reqd"
#define PMIX_TOOL_NSPACE                      "pmix.tool.nspace"
#define PMIX_TOOL_RANK                        "pmix.tool.rank"
#define PMIX_SERVER_PIDINFO                   "pmix.srvr.pidinfo"
#define PMIX_CONNECT_TO_SYSTEM                "pmix.cnct.sys"
#define PMIX_MYSERVER_URI                     "pmix.mysrvr.uri"
#define PMIX_SERVER_HOSTNAME                  "pmix.srvr.host"
#define PMIX_CONNECT_MAX_RETRIES              "pmix.tool.mretries"
#define PMIX_CONNECT_RETRY_DELAY              "pmix.tool.retry"
#define PMIX_LAUNCHER_RENDEZVOUS_FILE         "pmix.tool.lncrnd"
#define PMIX_TOOL_ATTACHMENT_FILE             "pmix.tool.attach"
#define PMIX_PRIMARY_SERVER                   "pmix.pri.srvr"
#define PMIX_NOHUP                            "pmix.nohup"
#define PMIX_LAUNCHER_DAEMON                  "pmix.lnch.dmn"
#define PMIX_EXEC_AGENT                       "pmix.exec.agnt"
#define PMIX_LAUNCH_DIRECTIVES                "pmix.lnch.dirs"
#define PMIX_USERID                           "pmix.euid"
#define PMIX_GRPID                            "pmix.egid"
#define PMIX_VERSION_INFO                     "pmix.version"
#define PMIX_REQUESTOR_IS_TOOL                "pmix.req.tool"
#define PMIX_REQUESTOR_IS_CLIENT              "pmix.req.client"
#define PMIX_PSET_NAME                        "pmix.pset.nm"
#define PMIX_PSET_NAMES                       "pmix.pset.nms"
#define PMIX_PSET_MEMBERS                     "pmix.pset.mems"
#define PMIX_REINCARNATION                    "pmix.reinc"
#define PMIX_PROGRAMMING_MODEL                "pmix.pgm.model"
#define PMIX_MODEL_LIBRARY_NAME               "pmix.mdl.name"
#define PMIX_MODEL_LIBRARY_VERSION            "pmix.mld.vrs"
#define PMIX_THREADING_MODEL                  "pmix.threads"
#define PMIX_MODEL_NUM_THREADS                "pmix.mdl.nthrds"
#define PMIX_MODEL_NUM_CPUS                   "pmix.mdl.ncpu"
#define PMIX_MODEL_CPU_TYPE                   "pmix.mdl.cputype"
#define PMIX_MODEL_PHASE_NAME                 "pmix.mdl.phase"
#define PMIX_MODEL_PHASE_TYPE                 "pmix.mdl.ptype"
#define PMIX_MODEL_AFFINITY_POLICY            "pmix.mdl.tap"
#define PMIX_TCP_REPORT_URI                   "pmix.tcp.repuri"
#define PMIX_TCP_URI                          "pmix.tcp.uri"
#define PMIX_TCP_IF_INCLUDE                   "pmix.tcp.ifinclude"
#define PMIX_TCP_IF_EXCLUDE                   "pmix.tcp.ifexclude"
#define PMIX_TCP_IPV4_PORT                    "pmix.tcp.ipv4"
#define PMIX_TCP_IPV6_PORT                    "pmix.tcp.ipv6"
#define PMIX_TCP_DISABLE_IPV4                 "pmix.tcp.disipv4"
#define PMIX_TCP_DISABLE_IPV6                 "pmix.tcp.disipv6"
#define PMIX_CPUSET_BITMAP                    "pmix.bitmap"
#define PMIX_CREDENTIAL                       "pmix.cred"
#define PMIX_SPAWNED                          "pmix.spawned"
#define PMIX_NODE_OVERSUBSCRIBED              "pmix.ndosub"
#define PMIX_TMPDIR                           "pmix.tmpdir"
#define PMIX_NSDIR                            "pmix.nsdir"
#define PMIX_PROCDIR                          "pmix.pdir"
#define PMIX_TDIR_RMCLEAN                     "pmix.tdir.rmclean"
#define PMIX_CLUSTER_ID                       "pmix.clid"
#define PMIX_PROCID                           "pmix.procid"
#define PMIX_APP_RANK                         "pmix.apprank"
#define PMIX_NPROC_OFFSET                     "pmix.offset"
#define PMIX_PACKAGE_RANK                     "pmix.pkgrank"
#define PMIX_APPLDR                           "pmix.aldr"
#define PMIX_PROC_PID                         "pmix.ppid"
#define PMIX_SESSION_ID                       "pmix.session.id"
#define PMIX_ALLOCATED_NODELIST               "pmix.alist"
#define PMIX_HOSTNAME_ALIASES                 "pmix.alias"
#define PMIX_HOSTNAME_KEEP_FQDN               "pmix.fqdn"
#define PMIX_LOCAL_CPUSETS                    "pmix.lcpus"
#define PMIX_PARENT_ID                        "pmix.parent"
#define PMIX_JOB_NUM_APPS                     "pmix.job.napps"
#define PMIX_APP_SIZE                         "pmix.app.size"
#define PMIX_NUM_SLOTS                        "pmix.num.slots"
#define PMIX_NUM_ALLOCATED_NODES              "pmix.num.anodes"
#define PMIX_AVAIL_PHYS_MEMORY                "pmix.pmem"
#define PMIX_DAEMON_MEMORY                    "pmix.dmn.mem"
#define PMIX_CLIENT_AVG_MEMORY                "pmix.cl.mem.avg"
#define PMIX_TOPOLOGY2                        "pmix.topo2"
#define PMIX_ALL_CLONES_PARTICIPATE           "pmix.clone.part"
#define PMIX_COLLECT_GENERATED_JOB_INFO       "pmix.collect.gen"
#define PMIX_RANGE                            "pmix.range"
#define PMIX_PERSISTENCE                      "pmix.persist"
#define PMIX_DATA_SCOPE                       "pmix.scope"
#define PMIX_GET_STATIC_VALUES                "pmix.get.static"
#define PMIX_GET_POINTER_VALUES               "pmix.get.pntrs"
#define PMIX_EMBED_BARRIER                    "pmix.embed.barrier"
#define PMIX_JOB_TERM_STATUS                  "pmix.job.term.status"
#define PMIX_PROC_TERM_STATUS                 "pmix.proc.term.status"
#define PMIX_PROC_STATE_STATUS                "pmix.proc.state"
#define PMIX_GET_REFRESH_CACHE                "pmix.get.refresh"
#define PMIX_ACCESS_PERMISSIONS               "pmix.aperms"
#define PMIX_ACCESS_USERIDS                   "pmix.auids"
#define PMIX_ACCESS_GRPIDS                    "pmix.agids"
#define PMIX_WAIT_FOR_CONNECTION              "pmix.wait.conn"
#define PMIX_QUALIFIED_VALUE                  "pmix.qual.val"
#define PMIX_REGISTER_NODATA                  "pmix.reg.nodata"
#define PMIX_NODE_MAP                         "pmix.nmap"
#define PMIX_NODE_MAP_RAW                     "pmix.nmap.raw"
#define PMIX_PROC_MAP                         "pmix.pmap"
#define PMIX_PROC_MAP_RAW                     "pmix.pmap.raw"
#define PMIX_ANL_MAP                          "pmix.anlmap"
#define PMIX_APP_MAP_TYPE                     "pmix.apmap.type"
#define PMIX_APP_MAP_REGEX                    "pmix.apmap.regex"
#define PMIX_REQUIRED_KEY                     "pmix.req.key"
#define PMIX_LOCAL_COLLECTIVE_STATUS          "pmix.loc.col.st"
#define PMIX_SORTED_PROC_ARRAY                "pmix.sorted.parr"
#define PMIX_EVENT_HDLR_FIRST                 "pmix.evfirst"
#define PMIX_EVENT_HDLR_LAST                  "pmix.evlast"
#define PMIX_EVENT_HDLR_FIRST_IN_CATEGORY     "pmix.evfirstcat"
#define PMIX_EVENT_HDLR_LAST_IN_CATEGORY      "pmix.evlastcat"
#define PMIX_EVENT_HDLR_BEFORE                "pmix.evbefore"
#define PMIX_EVENT_HDLR_AFTER                 "pmix.evafter"
#define PMIX_EVENT_HDLR_PREPEND               "pmix.evprepend"
#define PMIX_EVENT_HDLR_APPEND                "pmix.evappend"
#define PMIX_EVENT_AFFECTED_PROCS             "pmix.evaffected"
#define PMIX_EVENT_DO_NOT_CACHE               "pmix.evnocache"
#define PMIX_EVENT_SILENT_TERMINATION         "pmix.evsilentterm"
#define PMIX_EVENT_PROXY                      "pmix.evproxy"
#define PMIX_EVENT_TEXT_MESSAGE               "pmix.evtext"
#define PMIX_EVENT_TIMESTAMP                  "pmix.evtstamp"
#define PMIX_EVENT_TERMINATE_SESSION          "pmix.evterm.sess"
#define PMIX_EVENT_TERMINATE_JOB              "pmix.evterm.job"
#define PMIX_EVENT_TERMINATE_NODE             "pmix.evterm.node"
#define PMIX_EVENT_TERMINATE_PROC             "pmix.evterm.proc"
#define PMIX_EVENT_ACTION_TIMEOUT             "pmix.evtimeout"
#define PMIX_PERSONALITY                      "pmix.pers"
#define PMIX_HOST                             "pmix.host"
#define PMIX_HOSTFILE                         "pmix.hostfile"
#define PMIX_ADD_HOST                         "pmix.addhost"
#define PMIX_ADD_HOSTFILE                     "pmix.addhostfile"
#define PMIX_PREFIX                           "pmix.prefix"
#define PMIX_WDIR                             "pmix.wdir"
#define PMIX_WDIR_USER_SPECIFIED              "pmix.wdir.user"
#define PMIX_DISPLAY_MAP                      "pmix.dispmap"
#define PMIX_DISPLAY_MAP_DETAILED             "pmix.dispmapdet"
#define PMIX_DISPLAY_ALLOCATION               "pmix.dispalloc"
#define PMIX_DISPLAY_TOPOLOGY                 "pmix.disptopo"
#define PMIX_PPR                              "pmix.ppr"
#define PMIX_RANKBY                           "pmix.rankby"
#define PMIX_BINDTO                           "pmix.bindto"
#define PMIX_PRELOAD_BIN                      "pmix.preloadbin"
#define PMIX_PRELOAD_FILES                    "pmix.preloadfiles"
#define PMIX_STDIN_TGT                        "pmix.stdin"
#define PMIX_COLOCATE_PROCS                   "pmix.colproc"
#define PMIX_COLOCATE_NPERPROC                "pmix.colnum.proc"
#define PMIX_COLOCATE_NPERNODE                "pmix.colnum.node"
#define PMIX_SET_SESSION_CWD                  "pmix.ssncwd"
#define PMIX_INDEX_ARGV                       "pmix.indxargv"
#define PMIX_CPUS_PER_PROC                    "pmix.cpuperproc"
#define PMIX_NO_PROCS_ON_HEAD                 "pmix.nolocal"
#define PMIX_NO_OVERSUBSCRIBE                 "pmix.noover"
#define PMIX_REPORT_BINDINGS                  "pmix.repbind"
#define PMIX_CPU_LIST                         "pmix.cpulist"
#define PMIX_JOB_RECOVERABLE                  "pmix.recover"
#define PMIX_JOB_CONTINUOUS                   "pmix.continuous"
#define PMIX_MAX_RESTARTS                     "pmix.maxrestarts"
#define PMIX_FWD_STDIN                        "pmix.fwd.stdin"
#define PMIX_FWD_STDDIAG                      "pmix.fwd.stddiag"
#define PMIX_SPAWN_TOOL                       "pmix.spwn.tool"
#define PMIX_CMD_LINE                         "pmix.cmd.line"
#define PMIX_FORKEXEC_AGENT                   "pmix.fe.agnt"
#define PMIX_JOB_TIMEOUT                      "pmix.job.time"
#define PMIX_SPAWN_TIMEOUT                    "pmix.sp.time"
#define PMIX_TIMEOUT_STACKTRACES              "pmix.tim.stack"
#define PMIX_TIMEOUT_REPORT_STATE             "pmix.tim.state"
#define PMIX_APP_ARGV                         "pmix.app.argv"
#define PMIX_NOTIFY_JOB_EVENTS                "pmix.note.jev"
#define PMIX_NOTIFY_PROC_TERMINATION          "pmix.noteproc"
#define PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION "pmix.noteabproc"
#define PMIX_ENVARS_HARVESTED                 "pmix.evar.hvstd"
#define PMIX_RUNTIME_OPTIONS                  "pmix.runopt"
#define PMIX_ABORT_NON_ZERO_TERM              "pmix.abnz"
#define PMIX_DO_NOT_LAUNCH                    "pmix.dnl"
#define PMIX_SHOW_LAUNCH_PROGRESS             "pmix.showprog"
#define PMIX_AGGREGATE_HELP                   "pmix.agg.help"
#define PMIX_REPORT_CHILD_SEP                 "pmix.rptchildsep"
#define PMIX_QUERY_SUPPORTED_KEYS             "pmix.qry.keys"
#define PMIX_QUERY_JOB_STATUS                 "pmix.qry.jst"
#define PMIX_QUERY_QUEUE_LIST                 "pmix.qry.qlst"
#define PMIX_QUERY_QUEUE_STATUS               "pmix.qry.qst"
#define PMIX_QUERY_PROC_TABLE                 "pmix.qry.ptable"
#define PMIX_QUERY_LOCAL_PROC_TABLE           "pmix.qry.lptable"
#define PMIX_QUERY_AUTHORIZATIONS             "pmix.qry.auths"
#define PMIX_QUERY_MEMORY_USAGE               "pmix.qry.mem"
#define PMIX_QUERY_ALLOC_STATUS               "pmix.query.alloc"
#define PMIX_TIME_REMAINING                   "pmix.time.remaining"
#define PMIX_QUERY_PSET_MEMBERSHIP            "pmix.qry.pmems"
#define PMIX_QUERY_NUM_GROUPS                 "pmix.qry.pgrpnum"
#define PMIX_QUERY_GROUP_NAMES                "pmix.qry.pgrp"
#define PMIX_QUERY_GROUP_MEMBERSHIP           "pmix.qry.pgrpmems"
#define PMIX_QUERY_ATTRIBUTE_SUPPORT          "pmix.qry.attrs"
#define PMIX_CLIENT_FUNCTIONS                 "pmix.client.fns"
#define PMIX_SERVER_FUNCTIONS                 "pmix.srvr.fns"
#define PMIX_TOOL_FUNCTIONS                   "pmix.tool.fns"
#define PMIX_HOST_FUNCTIONS                   "pmix.host.fns"
#define PMIX_QUERY_AVAIL_SERVERS              "pmix.qry.asrvrs"
#define PMIX_QUERY_QUALIFIERS                 "pmix.qry.quals"
#define PMIX_QUERY_RESULTS                    "pmix.qry.res"
#define PMIX_QUERY_LOCAL_ONLY                 "pmix.qry.local"
#define PMIX_QUERY_REPORT_AVG                 "pmix.qry.avg"
#define PMIX_QUERY_REPORT_MINMAX              "pmix.qry.minmax"
#define PMIX_CLIENT_ATTRIBUTES                "pmix.client.attrs"
#define PMIX_SERVER_ATTRIBUTES                "pmix.srvr.attrs"
#define PMIX_HOST_ATTRIBUTES                  "pmix.host.attrs"
#define PMIX_TOOL_ATTRIBUTES                  "pmix.tool.attrs"
#define PMIX_QUERY_SUPPORTED_QUALIFIERS       "pmix.qry.quals"
#define PMIX_SESSION_INFO                     "pmix.ssn.info"
#define PMIX_JOB_INFO                         "pmix.job.info"
#define PMIX_APP_INFO                         "pmix.app.info"
#define PMIX_SESSION_INFO_ARRAY               "pmix.ssn.arr"
#define PMIX_JOB_INFO_ARRAY                   "pmix.job.arr"
#define PMIX_APP_INFO_ARRAY                   "pmix.app.arr"
#define PMIX_PROC_INFO_ARRAY                  "pmix.pdata"
#define PMIX_NODE_INFO_ARRAY                  "pmix.node.arr"
#define PMIX_SERVER_INFO_ARRAY                "pmix.srv.arr"
#define PMIX_LOG_SOURCE                       "pmix.log.source"
#define PMIX_LOG_STDOUT                       "pmix.log.stdout"
#define PMIX_LOG_SYSLOG                       "pmix.log.syslog"
#define PMIX_LOG_SYSLOG_PRI                   "pmix.log.syspri"
#define PMIX_LOG_TIMESTAMP                    "pmix.log.tstmp"
#define PMIX_LOG_TAG_OUTPUT                   "pmix.log.tag"
#define PMIX_LOG_TIMESTAMP_OUTPUT             "pmix.log.tsout"
#define PMIX_LOG_XML_OUTPUT                   "pmix.log.xml"
#define PMIX_LOG_ONCE                         "pmix.log.once"
#define PMIX_LOG_KEY                          "pmix.log.key"
#define PMIX_LOG_VAL                          "pmix.log.val"
#define PMIX_LOG_AGG                          "pmix.log.agg"
#define PMIX_LOG_EMAIL_MSG                    "pmix.log.emmsg"
#define PMIX_LOG_EMAIL_SERVER                 "pmix.log.esrvr"
#define PMIX_LOG_EMAIL_SRVR_PORT              "pmix.log.esrvrprt"
#define PMIX_LOG_GLOBAL_DATASTORE             "pmix.log.gstore"
#define PMIX_LOG_JOB_RECORD                   "pmix.log.jrec"
#define PMIX_LOG_PROC_TERMINATION             "pmix.logproc"
#define PMIX_LOG_PROC_ABNORMAL_TERMINATION    "pmix.logabproc"
#define PMIX_LOG_JOB_EVENTS                   "pmix.log.jev"
#define PMIX_LOG_COMPLETION                   "pmix.logcomp"
#define PMIX_BREAKPOINT                       "pmix.brkpnt"
#define PMIX_DEBUG_TARGET                     "pmix.dbg.tgt"
#define PMIX_DEBUG_DAEMONS_PER_PROC           "pmix.dbg.dpproc"
#define PMIX_DEBUG_DAEMONS_PER_NODE           "pmix.dbg.dpnd"
#define PMIX_RM_NAME                          "pmix.rm.name"
#define PMIX_RM_VERSION                       "pmix.rm.version"
#define PMIX_SET_ENVAR                        "pmix.envar.set"
#define PMIX_ADD_ENVAR                        "pmix.envar.add"
#define PMIX_UNSET_ENVAR                      "pmix.envar.unset"
#define PMIX_PREPEND_ENVAR                    "pmix.envar.prepnd"
#define PMIX_APPEND_ENVAR                     "pmix.envar.appnd"
#define PMIX_FIRST_ENVAR                      "pmix.envar.first"
#define PMIX_ALLOC_REQ_ID                     "pmix.alloc.reqid"
#define PMIX_ALLOC_ID                         "pmix.alloc.id"
#define PMIX_ALLOC_NUM_NODES                  "pmix.alloc.nnodes"
#define PMIX_ALLOC_NODE_LIST                  "pmix.alloc.nlist"
#define PMIX_ALLOC_NUM_CPUS                   "pmix.alloc.ncpus"
#define PMIX_ALLOC_NUM_CPU_LIST               "pmix.alloc.ncpulist"
#define PMIX_ALLOC_CPU_LIST                   "pmix.alloc.cpulist"
#define PMIX_ALLOC_MEM_SIZE                   "pmix.alloc.msize"
#define PMIX_ALLOC_FABRIC                     "pmix.alloc.net"
#define PMIX_ALLOC_FABRIC_ID                  "pmix.alloc.netid"
#define PMIX_ALLOC_BANDWIDTH                  "pmix.alloc.bw"
#define PMIX_ALLOC_FABRIC_QOS                 "pmix.alloc.netqos"
#define PMIX_ALLOC_TIME                       "pmix.alloc.time"
#define PMIX_ALLOC_FABRIC_TYPE                "pmix.alloc.nettype"
#define PMIX_ALLOC_FABRIC_PLANE               "pmix.alloc.netplane"
#define PMIX_ALLOC_FABRIC_ENDPTS              "pmix.alloc.endpts"
#define PMIX_ALLOC_FABRIC_ENDPTS_NODE         "pmix.alloc.endpts.nd"
#define PMIX_ALLOC_FABRIC_SEC_KEY             "pmix.alloc.nsec"
#define PMIX_ALLOC_QUEUE                      "pmix.alloc.queue"
#define PMIX_JOB_CTRL_ID                      "pmix.jctrl.id"
#define PMIX_JOB_CTRL_PAUSE                   "pmix.jctrl.pause"
#define PMIX_JOB_CTRL_RESUME                  "pmix.jctrl.resume"
#define PMIX_JOB_CTRL_CANCEL                  "pmix.jctrl.cancel"
#define PMIX_JOB_CTRL_KILL                    "pmix.jctrl.kill"
#define PMIX_JOB_CTRL_RESTART                 "pmix.jctrl.restart"
#define PMIX_JOB_CTRL_CHECKPOINT              "pmix.jctrl.ckpt"
#define PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT      "pmix.jctrl.ckptsig"
#define PMIX_JOB_CTRL_SIGNAL                  "pmix.jctrl.sig"
#define PMIX_JOB_CTRL_PROVISION               "pmix.jctrl.pvn"
#define PMIX_JOB_CTRL_PROVISION_IMAGE         "pmix.jctrl.pvnimg"
#define PMIX_JOB_CTRL_TERMINATE               "pmix.jctrl.term"
#define PMIX_CLEANUP_RECURSIVE                "pmix.clnup.recurse"
#define PMIX_CLEANUP_EMPTY                    "pmix.clnup.empty"
#define PMIX_CLEANUP_IGNORE                   "pmix.clnup.ignore"
#define PMIX_CLEANUP_LEAVE_TOPDIR             "pmix.clnup.lvtop"
#define PMIX_MONITOR_CANCEL                   "pmix.monitor.cancel"
#define PMIX_MONITOR_APP_CONTROL              "pmix.monitor.appctrl"
#define PMIX_MONITOR_FILE                     "pmix.monitor.fmon"
#define PMIX_MONITOR_FILE_SIZE                "pmix.monitor.fsize"
#define PMIX_MONITOR_FILE_ACCESS              "pmix.monitor.faccess"
#define PMIX_MONITOR_FILE_MODIFY              "pmix.monitor.fmod"
#define PMIX_MONITOR_FILE_CHECK_TIME          "pmix.monitor.ftime"
#define PMIX_MONITOR_FILE_DROPS               "pmix.monitor.fdrop"
#define PMIX_CRED_TYPE                        "pmix.sec.ctype"
#define PMIX_CRYPTO_KEY                       "pmix.sec.key"
#define PMIX_IOF_CACHE_SIZE                   "pmix.iof.csize"
#define PMIX_IOF_DROP_OLDEST                  "pmix.iof.old"
#define PMIX_IOF_DROP_NEWEST                  "pmix.iof.new"
#define PMIX_IOF_BUFFERING_SIZE               "pmix.iof.bsize"
#define PMIX_IOF_BUFFERING_TIME               "pmix.iof.btime"
#define PMIX_IOF_COMPLETE                     "pmix.iof.cmp"
#define PMIX_IOF_PUSH_STDIN                   "pmix.iof.stdin"
#define PMIX_IOF_TAG_OUTPUT                   "pmix.iof.tag"
#define PMIX_IOF_TAG_DETAILED_OUTPUT          "pmix.iof.tagdet"
#define PMIX_IOF_TAG_FULLNAME_OUTPUT          "pmix.iof.tagfull"
#define PMIX_IOF_RANK_OUTPUT                  "pmix.iof.rank"
#define PMIX_IOF_TIMESTAMP_OUTPUT             "pmix.iof.ts"
#define PMIX_IOF_MERGE_STDERR_STDOUT          "pmix.iof.mrg"
#define PMIX_IOF_XML_OUTPUT                   "pmix.iof.xml"
#define PMIX_IOF_OUTPUT_TO_FILE               "pmix.iof.file"
#define PMIX_IOF_FILE_PATTERN                 "pmix.iof.fpt"
#define PMIX_IOF_OUTPUT_TO_DIRECTORY          "pmix.iof.dir"
#define PMIX_IOF_FILE_ONLY                    "pmix.iof.fonly"
#define PMIX_IOF_COPY                         "pmix.iof.cpy"
#define PMIX_IOF_REDIRECT                     "pmix.iof.redir"
#define PMIX_IOF_LOCAL_OUTPUT                 "pmix.iof.local"
#define PMIX_IOF_OUTPUT_RAW                   "pmix.iof.raw"
#define PMIX_SETUP_APP_ENVARS                 "pmix.setup.env"
#define PMIX_SETUP_APP_NONENVARS              "pmix.setup.nenv"
#define PMIX_SETUP_APP_ALL                    "pmix.setup.all"
#define PMIX_GROUP_ENDPT_DATA                 "pmix.grp.endpt"
#define PMIX_GROUP_NAMES                      "pmix.pgrp.nm"
#define PMIX_GROUP_INFO                       "pmix.grp.info"
#define PMIX_GROUP_LOCAL_CID                  "pmix.grp.lclid"
#define PMIX_QUERY_STORAGE_LIST               "pmix.strg.list"
#define PMIX_STORAGE_CAPACITY_LIMIT           "pmix.strg.cap"
#define PMIX_STORAGE_OBJECT_LIMIT             "pmix.strg.obj"
#define PMIX_STORAGE_ID                       "pmix.strg.id"
#define PMIX_STORAGE_PATH                     "pmix.strg.path"
#define PMIX_STORAGE_TYPE                     "pmix.strg.type"
#define PMIX_STORAGE_ACCESSIBILITY            "pmix.strg.access"
#define PMIX_STORAGE_ACCESS_TYPE              "pmix.strg.atype"
#define PMIX_STORAGE_BW_CUR                   "pmix.strg.bwcur"
#define PMIX_STORAGE_BW_MAX                   "pmix.strg.bwmax"
#define PMIX_STORAGE_CAPACITY_USED            "pmix.strg.capuse"
#define PMIX_STORAGE_IOPS_CUR                 "pmix.strg.iopscur"
#define PMIX_STORAGE_IOPS_MAX                 "pmix.strg.iopsmax"
#define PMIX_STORAGE_MEDIUM                   "pmix.strg.medium"
#define PMIX_STORAGE_MINIMAL_XFER_SIZE        "pmix.strg.minxfer"
#define PMIX_STORAGE_OBJECTS_USED             "pmix.strg.objuse"
#define PMIX_STORAGE_PERSISTENCE              "pmix.strg.persist"
#define PMIX_STORAGE_SUGGESTED_XFER_SIZE      "pmix.strg.sxfer"
#define PMIX_STORAGE_VERSION                  "pmix.strg.ver"
#define PMIX_FABRIC_COST_MATRIX               "pmix.fab.cm"
#define PMIX_FABRIC_GROUPS                    "pmix.fab.grps"
#define PMIX_FABRIC_VENDOR                    "pmix.fab.vndr"
#define PMIX_FABRIC_IDENTIFIER                "pmix.fab.id"
#define PMIX_FABRIC_INDEX                     "pmix.fab.idx"
#define PMIX_FABRIC_DEVICE_VENDORID           "pmix.fabdev.vendid"
#define PMIX_FABRIC_NUM_DEVICES               "pmix.fab.nverts"
#define PMIX_FABRIC_DIMS                      "pmix.fab.dims"
#define PMIX_FABRIC_PLANE                     "pmix.fab.plane"
#define PMIX_FABRIC_SWITCH                    "pmix.fab.switch"
#define PMIX_FABRIC_ENDPT                     "pmix.fab.endpt"
#define PMIX_FABRIC_SHAPE                     "pmix.fab.shape"
#define PMIX_FABRIC_SHAPE_STRING              "pmix.fab.shapestr"
#define PMIX_SWITCH_PEERS                     "pmix.speers"
#define PMIX_FABRIC_DEVICE                    "pmix.fabdev"
#define PMIX_FABRIC_DEVICES                   "pmix.fab.devs"
#define PMIX_FABRIC_DEVICE_NAME               "pmix.fabdev.nm"
#define PMIX_FABRIC_DEVICE_INDEX              "pmix.fabdev.idx"
#define PMIX_FABRIC_DEVICE_VENDOR             "pmix.fabdev.vndr"
#define PMIX_FABRIC_DEVICE_BUS_TYPE           "pmix.fabdev.btyp"
#define PMIX_FABRIC_DEVICE_DRIVER             "pmix.fabdev.driver"
#define PMIX_FABRIC_DEVICE_FIRMWARE           "pmix.fabdev.fmwr"
#define PMIX_FABRIC_DEVICE_ADDRESS            "pmix.fabdev.addr"
#define PMIX_FABRIC_DEVICE_COORDINATES        "pmix.fab.coord"
#define PMIX_FABRIC_DEVICE_MTU                "pmix.fabdev.mtu"
#define PMIX_FABRIC_DEVICE_SPEED              "pmix.fabdev.speed"
#define PMIX_FABRIC_DEVICE_STATE              "pmix.fabdev.state"
#define PMIX_FABRIC_DEVICE_TYPE               "pmix.fabdev.type"
#define PMIX_FABRIC_DEVICE_PCI_DEVID          "pmix.fabdev.pcidevid"
#define PMIX_MAX_VALUE                        "pmix.descr.maxval"
#define PMIX_MIN_VALUE                        "pmix.descr.minval"
#define PMIX_ENUM_VALUE                       "pmix.descr.enum"
#define PMIX_QUERY_STABLE_ABI_VERSION         "pmix.qry.stabiver"
#define PMIX_QUERY_PROVISIONAL_ABI_VERSION    "pmix.qry.prabiver"

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIX_RS_PMIX_COMMON_H */
