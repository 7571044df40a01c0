//! Every attribute key pmix-rs reads or writes, defined once: OpenPMIx 4.2.2's
//! (`PMIX_*` of `pmix_common.h`, named without the prefix: `PMIX_JOB_SIZE` is
//! [`JOB_SIZE`]), the few OpenPMIx sends that its public header does not carry, and
//! ours (`RS_*`, which only pmix-rs peers read). `.ci/check-vocabulary.py` fails on a
//! key written as a string literal anywhere else in the library sources, and on a
//! value here that differs from the header's (`pmix-ffi/include/pmix_common.h`,
//! and OpenPMIx's own when it is installed).

/// The most bytes a key holds (`PMIX_MAX_KEYLEN`), its NUL not counted.
pub const MAX_KEYLEN: usize = 511;

/// Whether `key` is a key a peer accepts: 1 to [`MAX_KEYLEN`] bytes, no NUL.
pub fn is_valid(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEYLEN && !key.contains('\0')
}

/// `PMIX_DEVICE_DISTANCES`.
pub const DEVICE_DISTANCES: &str = "pmix.dev.dist";
/// `PMIX_DEVICE_TYPE`.
pub const DEVICE_TYPE: &str = "pmix.dev.type";
/// `PMIX_DEVICE_ID`.
pub const DEVICE_ID: &str = "pmix.dev.id";
/// `PMIX_DEVICE_DIST_ORIGIN`.
pub const DEVICE_DIST_ORIGIN: &str = "pmix.dev.dist.origin";
/// `PMIX_HOSTNAME`.
pub const HOSTNAME: &str = "pmix.hname";
/// `PMIX_TOOL_DO_NOT_CONNECT`.
pub const TOOL_DO_NOT_CONNECT: &str = "pmix.tool.nocon";
/// `PMIX_SERVER_URI`.
pub const SERVER_URI: &str = "pmix.srvr.uri";
/// `PMIX_TIMEOUT`.
pub const TIMEOUT: &str = "pmix.timeout";
/// `PMIX_GROUP_ID`.
pub const GROUP_ID: &str = "pmix.grp.id";
/// `PMIX_GROUP_LEADER`.
pub const GROUP_LEADER: &str = "pmix.grp.ldr";
/// `PMIX_GROUP_OPTIONAL`.
pub const GROUP_OPTIONAL: &str = "pmix.grp.opt";
/// `PMIX_GROUP_NOTIFY_TERMINATION`.
pub const GROUP_NOTIFY_TERMINATION: &str = "pmix.grp.notterm";
/// `PMIX_GROUP_FT_COLLECTIVE`.
pub const GROUP_FT_COLLECTIVE: &str = "pmix.grp.ftcoll";
/// `PMIX_GROUP_MEMBERSHIP`.
pub const GROUP_MEMBERSHIP: &str = "pmix.grp.mbrs";
/// `PMIX_GROUP_ASSIGN_CONTEXT_ID`.
pub const GROUP_ASSIGN_CONTEXT_ID: &str = "pmix.grp.actxid";
/// `PMIX_GROUP_CONTEXT_ID`.
pub const GROUP_CONTEXT_ID: &str = "pmix.grp.ctxid";
/// `PMIX_GROUP_LOCAL_ONLY`.
pub const GROUP_LOCAL_ONLY: &str = "pmix.grp.lcl";
/// `PMIX_EVENT_AFFECTED_PROC`.
pub const EVENT_AFFECTED_PROC: &str = "pmix.evproc";
/// `PMIX_EVENT_CUSTOM_RANGE`.
pub const EVENT_CUSTOM_RANGE: &str = "pmix.evrange";
/// `PMIX_EVENT_NON_DEFAULT`.
pub const EVENT_NON_DEFAULT: &str = "pmix.evnondef";
/// `PMIX_NSPACE`.
pub const NSPACE: &str = "pmix.nspace";
/// `PMIX_RANK`.
pub const RANK: &str = "pmix.rank";
/// `PMIX_JOBID`.
pub const JOBID: &str = "pmix.jobid";
/// `PMIX_JOB_SIZE`.
pub const JOB_SIZE: &str = "pmix.job.size";
/// `PMIX_UNIV_SIZE`.
pub const UNIV_SIZE: &str = "pmix.univ.size";
/// `PMIX_MAX_PROCS`.
pub const MAX_PROCS: &str = "pmix.max.size";
/// `PMIX_NUM_NODES`.
pub const NUM_NODES: &str = "pmix.num.nodes";
/// `PMIX_NODE_SIZE`.
pub const NODE_SIZE: &str = "pmix.node.size";
/// `PMIX_LOCAL_SIZE`.
pub const LOCAL_SIZE: &str = "pmix.local.size";
/// `PMIX_LOCAL_PEERS`.
pub const LOCAL_PEERS: &str = "pmix.lpeers";
/// `PMIX_LOCALLDR`.
pub const LOCALLDR: &str = "pmix.lldr";
/// `PMIX_LOCAL_RANK`.
pub const LOCAL_RANK: &str = "pmix.lrank";
/// `PMIX_NODE_RANK`.
pub const NODE_RANK: &str = "pmix.nrank";
/// `PMIX_GLOBAL_RANK`.
pub const GLOBAL_RANK: &str = "pmix.grank";
/// `PMIX_APPNUM`.
pub const APPNUM: &str = "pmix.appnum";
/// `PMIX_NODEID`.
pub const NODEID: &str = "pmix.nodeid";
/// `PMIX_LOCALITY_STRING`.
pub const LOCALITY_STRING: &str = "pmix.locstr";
/// `PMIX_CPUSET`.
pub const CPUSET: &str = "pmix.cpuset";
/// `PMIX_NODE_LIST`.
pub const NODE_LIST: &str = "pmix.nlist";
/// `PMIX_QUERY_NAMESPACES`.
pub const QUERY_NAMESPACES: &str = "pmix.qry.ns";
/// `PMIX_QUERY_REFRESH_CACHE`.
pub const QUERY_REFRESH_CACHE: &str = "pmix.qry.rfsh";
/// `PMIX_COLLECT_DATA`.
pub const COLLECT_DATA: &str = "pmix.collect";
/// `PMIX_IMMEDIATE`.
pub const IMMEDIATE: &str = "pmix.immediate";
/// `PMIX_OPTIONAL`.
pub const OPTIONAL: &str = "pmix.optional";
/// `PMIX_WAIT`.
pub const WAIT: &str = "pmix.wait";
/// `PMIX_LOCAL_PROCS`.
pub const LOCAL_PROCS: &str = "pmix.lprocs";
/// `PMIX_NODE_INFO`.
pub const NODE_INFO: &str = "pmix.node.info";
/// `PMIX_FABRIC_COORDINATES`.
pub const FABRIC_COORDINATES: &str = "pmix.fab.coord";
/// `PMIX_EXIT_CODE`.
pub const EXIT_CODE: &str = "pmix.exit.code";
/// `PMIX_QUERY_NAMESPACE_INFO`.
pub const QUERY_NAMESPACE_INFO: &str = "pmix.qry.nsinfo";
/// `PMIX_QUERY_NUM_PSETS`.
pub const QUERY_NUM_PSETS: &str = "pmix.qry.psetnum";
/// `PMIX_QUERY_PSET_NAMES`.
pub const QUERY_PSET_NAMES: &str = "pmix.qry.psets";
/// `PMIX_QUERY_SPAWN_SUPPORT`.
pub const QUERY_SPAWN_SUPPORT: &str = "pmix.qry.spawn";
/// `PMIX_QUERY_DEBUG_SUPPORT`.
pub const QUERY_DEBUG_SUPPORT: &str = "pmix.qry.debug";
/// `PMIX_EVENT_HDLR_NAME`.
pub const EVENT_HDLR_NAME: &str = "pmix.evname";
/// `PMIX_EVENT_RETURN_OBJECT`.
pub const EVENT_RETURN_OBJECT: &str = "pmix.evobject";
/// `PMIX_EVENT_ONESHOT`.
pub const EVENT_ONESHOT: &str = "pmix.evone";
/// `PMIX_GROUP_ADD_MEMBERS`.
pub const GROUP_ADD_MEMBERS: &str = "pmix.grp.add";
/// `PMIX_CONNECT_SYSTEM_FIRST`.
pub const CONNECT_SYSTEM_FIRST: &str = "pmix.cnct.sys.first";
/// `PMIX_TOOL_CONNECT_OPTIONAL`.
pub const TOOL_CONNECT_OPTIONAL: &str = "pmix.tool.conopt";
/// `PMIX_LAUNCHER`.
pub const LAUNCHER: &str = "pmix.tool.launcher";
/// `PMIX_MAPBY`.
pub const MAPBY: &str = "pmix.mapby";
/// `PMIX_NOTIFY_COMPLETION`.
pub const NOTIFY_COMPLETION: &str = "pmix.notecomp";
/// `PMIX_FWD_STDOUT`.
pub const FWD_STDOUT: &str = "pmix.fwd.stdout";
/// `PMIX_FWD_STDERR`.
pub const FWD_STDERR: &str = "pmix.fwd.stderr";
/// `PMIX_COSPAWN_APP`.
pub const COSPAWN_APP: &str = "pmix.cospawn";
/// `PMIX_DEBUG_STOP_ON_EXEC`.
pub const DEBUG_STOP_ON_EXEC: &str = "pmix.dbg.exec";
/// `PMIX_DEBUG_STOP_IN_INIT`.
pub const DEBUG_STOP_IN_INIT: &str = "pmix.dbg.init";
/// `PMIX_DEBUG_STOP_IN_APP`.
pub const DEBUG_STOP_IN_APP: &str = "pmix.dbg.notify";
/// `PMIX_DEBUGGER_DAEMONS`.
pub const DEBUGGER_DAEMONS: &str = "pmix.debugger";
/// `PMIX_DEBUG_JOB`.
pub const DEBUG_JOB: &str = "pmix.dbg.job";
/// `PMIX_REGISTER_CLEANUP`.
pub const REGISTER_CLEANUP: &str = "pmix.reg.cleanup";
/// `PMIX_REGISTER_CLEANUP_DIR`.
pub const REGISTER_CLEANUP_DIR: &str = "pmix.reg.cleanupdir";
/// `PMIX_JOB_CTRL_PREEMPTIBLE`.
pub const JOB_CTRL_PREEMPTIBLE: &str = "pmix.jctrl.preempt";
/// `PMIX_JOB_CTRL_CHECKPOINT_METHOD`.
pub const JOB_CTRL_CHECKPOINT_METHOD: &str = "pmix.jctrl.ckmethod";
/// `PMIX_JOB_CTRL_CHECKPOINT_SIGNAL`.
pub const JOB_CTRL_CHECKPOINT_SIGNAL: &str = "pmix.jctrl.ckptsig";
/// `PMIX_JOB_CTRL_CHECKPOINT_EVENT`.
pub const JOB_CTRL_CHECKPOINT_EVENT: &str = "pmix.jctrl.ckptev";
/// `PMIX_MONITOR_ID`.
pub const MONITOR_ID: &str = "pmix.monitor.id";
/// `PMIX_SEND_HEARTBEAT`.
pub const SEND_HEARTBEAT: &str = "pmix.monitor.beat";
/// `PMIX_MONITOR_HEARTBEAT`.
pub const MONITOR_HEARTBEAT: &str = "pmix.monitor.mbeat";
/// `PMIX_MONITOR_HEARTBEAT_TIME`.
pub const MONITOR_HEARTBEAT_TIME: &str = "pmix.monitor.btime";
/// `PMIX_MONITOR_HEARTBEAT_DROPS`.
pub const MONITOR_HEARTBEAT_DROPS: &str = "pmix.monitor.bdrop";
/// `PMIX_LOG_STDERR`.
pub const LOG_STDERR: &str = "pmix.log.stderr";
/// `PMIX_LOG_LOCAL_SYSLOG`.
pub const LOG_LOCAL_SYSLOG: &str = "pmix.log.lsys";
/// `PMIX_LOG_GLOBAL_SYSLOG`.
pub const LOG_GLOBAL_SYSLOG: &str = "pmix.log.gsys";
/// `PMIX_LOG_MSG`.
pub const LOG_MSG: &str = "pmix.log.msg";
/// `PMIX_LOG_EMAIL`.
pub const LOG_EMAIL: &str = "pmix.log.email";
/// `PMIX_LOG_EMAIL_ADDR`.
pub const LOG_EMAIL_ADDR: &str = "pmix.log.emaddr";
/// `PMIX_LOG_EMAIL_SENDER_ADDR`.
pub const LOG_EMAIL_SENDER_ADDR: &str = "pmix.log.emfaddr";
/// `PMIX_LOG_EMAIL_SUBJECT`.
pub const LOG_EMAIL_SUBJECT: &str = "pmix.log.emsub";
/// `PMIX_LOG_GENERATE_TIMESTAMP`.
pub const LOG_GENERATE_TIMESTAMP: &str = "pmix.log.gtstmp";
/// `PMIX_ATTR_UNDEF`.
pub const ATTR_UNDEF: &str = "pmix.undef";
/// `PMIX_EXTERNAL_PROGRESS`.
pub const EXTERNAL_PROGRESS: &str = "pmix.evext";
/// `PMIX_SERVER_TOOL_SUPPORT`.
pub const SERVER_TOOL_SUPPORT: &str = "pmix.srvr.tool";
/// `PMIX_SERVER_REMOTE_CONNECTIONS`.
pub const SERVER_REMOTE_CONNECTIONS: &str = "pmix.srvr.remote";
/// `PMIX_SERVER_SYSTEM_SUPPORT`.
pub const SERVER_SYSTEM_SUPPORT: &str = "pmix.srvr.sys";
/// `PMIX_SERVER_SESSION_SUPPORT`.
pub const SERVER_SESSION_SUPPORT: &str = "pmix.srvr.sess";
/// `PMIX_SERVER_TMPDIR`.
pub const SERVER_TMPDIR: &str = "pmix.srvr.tmpdir";
/// `PMIX_SYSTEM_TMPDIR`.
pub const SYSTEM_TMPDIR: &str = "pmix.sys.tmpdir";
/// `PMIX_SERVER_SHARE_TOPOLOGY`.
pub const SERVER_SHARE_TOPOLOGY: &str = "pmix.srvr.share";
/// `PMIX_SERVER_ENABLE_MONITORING`.
pub const SERVER_ENABLE_MONITORING: &str = "pmix.srv.monitor";
/// `PMIX_SERVER_NSPACE`.
pub const SERVER_NSPACE: &str = "pmix.srv.nspace";
/// `PMIX_SERVER_RANK`.
pub const SERVER_RANK: &str = "pmix.srv.rank";
/// `PMIX_SERVER_GATEWAY`.
pub const SERVER_GATEWAY: &str = "pmix.srv.gway";
/// `PMIX_SERVER_SCHEDULER`.
pub const SERVER_SCHEDULER: &str = "pmix.srv.sched";
/// `PMIX_SERVER_START_TIME`.
pub const SERVER_START_TIME: &str = "pmix.srv.strtime";
/// `PMIX_HOMOGENEOUS_SYSTEM`.
pub const HOMOGENEOUS_SYSTEM: &str = "pmix.homo";
/// `PMIX_SINGLETON`.
pub const SINGLETON: &str = "pmix.singleton";
/// `PMIX_BIND_PROGRESS_THREAD`.
pub const BIND_PROGRESS_THREAD: &str = "pmix.bind.pt";
/// `PMIX_BIND_REQUIRED`.
pub const BIND_REQUIRED: &str = "pmix.bind.reqd";
/// `PMIX_TOOL_NSPACE`.
pub const TOOL_NSPACE: &str = "pmix.tool.nspace";
/// `PMIX_TOOL_RANK`.
pub const TOOL_RANK: &str = "pmix.tool.rank";
/// `PMIX_SERVER_PIDINFO`.
pub const SERVER_PIDINFO: &str = "pmix.srvr.pidinfo";
/// `PMIX_CONNECT_TO_SYSTEM`.
pub const CONNECT_TO_SYSTEM: &str = "pmix.cnct.sys";
/// `PMIX_MYSERVER_URI`.
pub const MYSERVER_URI: &str = "pmix.mysrvr.uri";
/// `PMIX_SERVER_HOSTNAME`.
pub const SERVER_HOSTNAME: &str = "pmix.srvr.host";
/// `PMIX_CONNECT_MAX_RETRIES`.
pub const CONNECT_MAX_RETRIES: &str = "pmix.tool.mretries";
/// `PMIX_CONNECT_RETRY_DELAY`.
pub const CONNECT_RETRY_DELAY: &str = "pmix.tool.retry";
/// `PMIX_LAUNCHER_RENDEZVOUS_FILE`.
pub const LAUNCHER_RENDEZVOUS_FILE: &str = "pmix.tool.lncrnd";
/// `PMIX_TOOL_ATTACHMENT_FILE`.
pub const TOOL_ATTACHMENT_FILE: &str = "pmix.tool.attach";
/// `PMIX_PRIMARY_SERVER`.
pub const PRIMARY_SERVER: &str = "pmix.pri.srvr";
/// `PMIX_NOHUP`.
pub const NOHUP: &str = "pmix.nohup";
/// `PMIX_LAUNCHER_DAEMON`.
pub const LAUNCHER_DAEMON: &str = "pmix.lnch.dmn";
/// `PMIX_EXEC_AGENT`.
pub const EXEC_AGENT: &str = "pmix.exec.agnt";
/// `PMIX_LAUNCH_DIRECTIVES`.
pub const LAUNCH_DIRECTIVES: &str = "pmix.lnch.dirs";
/// `PMIX_USERID`.
pub const USERID: &str = "pmix.euid";
/// `PMIX_GRPID`.
pub const GRPID: &str = "pmix.egid";
/// `PMIX_VERSION_INFO`.
pub const VERSION_INFO: &str = "pmix.version";
/// `PMIX_REQUESTOR_IS_TOOL`.
pub const REQUESTOR_IS_TOOL: &str = "pmix.req.tool";
/// `PMIX_REQUESTOR_IS_CLIENT`.
pub const REQUESTOR_IS_CLIENT: &str = "pmix.req.client";
/// `PMIX_PSET_NAME`.
pub const PSET_NAME: &str = "pmix.pset.nm";
/// `PMIX_PSET_NAMES`.
pub const PSET_NAMES: &str = "pmix.pset.nms";
/// `PMIX_PSET_MEMBERS`.
pub const PSET_MEMBERS: &str = "pmix.pset.mems";
/// `PMIX_REINCARNATION`.
pub const REINCARNATION: &str = "pmix.reinc";
/// `PMIX_PROGRAMMING_MODEL`.
pub const PROGRAMMING_MODEL: &str = "pmix.pgm.model";
/// `PMIX_MODEL_LIBRARY_NAME`.
pub const MODEL_LIBRARY_NAME: &str = "pmix.mdl.name";
/// `PMIX_MODEL_LIBRARY_VERSION`.
pub const MODEL_LIBRARY_VERSION: &str = "pmix.mld.vrs";
/// `PMIX_THREADING_MODEL`.
pub const THREADING_MODEL: &str = "pmix.threads";
/// `PMIX_MODEL_NUM_THREADS`.
pub const MODEL_NUM_THREADS: &str = "pmix.mdl.nthrds";
/// `PMIX_MODEL_NUM_CPUS`.
pub const MODEL_NUM_CPUS: &str = "pmix.mdl.ncpu";
/// `PMIX_MODEL_CPU_TYPE`.
pub const MODEL_CPU_TYPE: &str = "pmix.mdl.cputype";
/// `PMIX_MODEL_PHASE_NAME`.
pub const MODEL_PHASE_NAME: &str = "pmix.mdl.phase";
/// `PMIX_MODEL_PHASE_TYPE`.
pub const MODEL_PHASE_TYPE: &str = "pmix.mdl.ptype";
/// `PMIX_MODEL_AFFINITY_POLICY`.
pub const MODEL_AFFINITY_POLICY: &str = "pmix.mdl.tap";
/// `PMIX_TCP_REPORT_URI`.
pub const TCP_REPORT_URI: &str = "pmix.tcp.repuri";
/// `PMIX_TCP_URI`.
pub const TCP_URI: &str = "pmix.tcp.uri";
/// `PMIX_TCP_IF_INCLUDE`.
pub const TCP_IF_INCLUDE: &str = "pmix.tcp.ifinclude";
/// `PMIX_TCP_IF_EXCLUDE`.
pub const TCP_IF_EXCLUDE: &str = "pmix.tcp.ifexclude";
/// `PMIX_TCP_IPV4_PORT`.
pub const TCP_IPV4_PORT: &str = "pmix.tcp.ipv4";
/// `PMIX_TCP_IPV6_PORT`.
pub const TCP_IPV6_PORT: &str = "pmix.tcp.ipv6";
/// `PMIX_TCP_DISABLE_IPV4`.
pub const TCP_DISABLE_IPV4: &str = "pmix.tcp.disipv4";
/// `PMIX_TCP_DISABLE_IPV6`.
pub const TCP_DISABLE_IPV6: &str = "pmix.tcp.disipv6";
/// `PMIX_CPUSET_BITMAP`.
pub const CPUSET_BITMAP: &str = "pmix.bitmap";
/// `PMIX_CREDENTIAL`.
pub const CREDENTIAL: &str = "pmix.cred";
/// `PMIX_SPAWNED`.
pub const SPAWNED: &str = "pmix.spawned";
/// `PMIX_NODE_OVERSUBSCRIBED`.
pub const NODE_OVERSUBSCRIBED: &str = "pmix.ndosub";
/// `PMIX_TMPDIR`.
pub const TMPDIR: &str = "pmix.tmpdir";
/// `PMIX_NSDIR`.
pub const NSDIR: &str = "pmix.nsdir";
/// `PMIX_PROCDIR`.
pub const PROCDIR: &str = "pmix.pdir";
/// `PMIX_TDIR_RMCLEAN`.
pub const TDIR_RMCLEAN: &str = "pmix.tdir.rmclean";
/// The session-level keys a get addressed to one rank answers with the job's value,
/// as OpenPMIx 4.2's `hash` store does: a rank's temporary directory, whether it is
/// removed, and the universe size are its session's.
pub const RANK_SESSION_KEYS: [&str; 3] = [TMPDIR, TDIR_RMCLEAN, UNIV_SIZE];
/// `PMIX_CLUSTER_ID`.
pub const CLUSTER_ID: &str = "pmix.clid";
/// `PMIX_PROCID`.
pub const PROCID: &str = "pmix.procid";
/// `PMIX_APP_RANK`.
pub const APP_RANK: &str = "pmix.apprank";
/// `PMIX_NPROC_OFFSET`.
pub const NPROC_OFFSET: &str = "pmix.offset";
/// `PMIX_PACKAGE_RANK`.
pub const PACKAGE_RANK: &str = "pmix.pkgrank";
/// `PMIX_APPLDR`.
pub const APPLDR: &str = "pmix.aldr";
/// `PMIX_PROC_PID`.
pub const PROC_PID: &str = "pmix.ppid";
/// `PMIX_SESSION_ID`.
pub const SESSION_ID: &str = "pmix.session.id";
/// `PMIX_ALLOCATED_NODELIST`.
pub const ALLOCATED_NODELIST: &str = "pmix.alist";
/// `PMIX_HOSTNAME_ALIASES`.
pub const HOSTNAME_ALIASES: &str = "pmix.alias";
/// `PMIX_HOSTNAME_KEEP_FQDN`.
pub const HOSTNAME_KEEP_FQDN: &str = "pmix.fqdn";
/// `PMIX_LOCAL_CPUSETS`.
pub const LOCAL_CPUSETS: &str = "pmix.lcpus";
/// `PMIX_PARENT_ID`.
pub const PARENT_ID: &str = "pmix.parent";
/// `PMIX_JOB_NUM_APPS`.
pub const JOB_NUM_APPS: &str = "pmix.job.napps";
/// `PMIX_APP_SIZE`.
pub const APP_SIZE: &str = "pmix.app.size";
/// `PMIX_NUM_SLOTS`.
pub const NUM_SLOTS: &str = "pmix.num.slots";
/// `PMIX_NUM_ALLOCATED_NODES`.
pub const NUM_ALLOCATED_NODES: &str = "pmix.num.anodes";
/// `PMIX_AVAIL_PHYS_MEMORY`.
pub const AVAIL_PHYS_MEMORY: &str = "pmix.pmem";
/// `PMIX_DAEMON_MEMORY`.
pub const DAEMON_MEMORY: &str = "pmix.dmn.mem";
/// `PMIX_CLIENT_AVG_MEMORY`.
pub const CLIENT_AVG_MEMORY: &str = "pmix.cl.mem.avg";
/// `PMIX_TOPOLOGY2`.
pub const TOPOLOGY2: &str = "pmix.topo2";
/// `PMIX_ALL_CLONES_PARTICIPATE`.
pub const ALL_CLONES_PARTICIPATE: &str = "pmix.clone.part";
/// `PMIX_COLLECT_GENERATED_JOB_INFO`.
pub const COLLECT_GENERATED_JOB_INFO: &str = "pmix.collect.gen";
/// `PMIX_RANGE`.
pub const RANGE: &str = "pmix.range";
/// `PMIX_PERSISTENCE`.
pub const PERSISTENCE: &str = "pmix.persist";
/// `PMIX_DATA_SCOPE`.
pub const DATA_SCOPE: &str = "pmix.scope";
/// `PMIX_GET_STATIC_VALUES`.
pub const GET_STATIC_VALUES: &str = "pmix.get.static";
/// `PMIX_GET_POINTER_VALUES`.
pub const GET_POINTER_VALUES: &str = "pmix.get.pntrs";
/// `PMIX_EMBED_BARRIER`.
pub const EMBED_BARRIER: &str = "pmix.embed.barrier";
/// `PMIX_JOB_TERM_STATUS`.
pub const JOB_TERM_STATUS: &str = "pmix.job.term.status";
/// `PMIX_PROC_TERM_STATUS`.
pub const PROC_TERM_STATUS: &str = "pmix.proc.term.status";
/// `PMIX_PROC_STATE_STATUS`.
pub const PROC_STATE_STATUS: &str = "pmix.proc.state";
/// `PMIX_GET_REFRESH_CACHE`.
pub const GET_REFRESH_CACHE: &str = "pmix.get.refresh";
/// `PMIX_ACCESS_PERMISSIONS`.
pub const ACCESS_PERMISSIONS: &str = "pmix.aperms";
/// `PMIX_ACCESS_USERIDS`.
pub const ACCESS_USERIDS: &str = "pmix.auids";
/// `PMIX_ACCESS_GRPIDS`.
pub const ACCESS_GRPIDS: &str = "pmix.agids";
/// `PMIX_WAIT_FOR_CONNECTION`.
pub const WAIT_FOR_CONNECTION: &str = "pmix.wait.conn";
/// `PMIX_QUALIFIED_VALUE`.
pub const QUALIFIED_VALUE: &str = "pmix.qual.val";
/// `PMIX_REGISTER_NODATA`.
pub const REGISTER_NODATA: &str = "pmix.reg.nodata";
/// `PMIX_NODE_MAP`.
pub const NODE_MAP: &str = "pmix.nmap";
/// `PMIX_NODE_MAP_RAW`.
pub const NODE_MAP_RAW: &str = "pmix.nmap.raw";
/// `PMIX_PROC_MAP`.
pub const PROC_MAP: &str = "pmix.pmap";
/// `PMIX_PROC_MAP_RAW`.
pub const PROC_MAP_RAW: &str = "pmix.pmap.raw";
/// `PMIX_ANL_MAP`.
pub const ANL_MAP: &str = "pmix.anlmap";
/// `PMIX_APP_MAP_TYPE`.
pub const APP_MAP_TYPE: &str = "pmix.apmap.type";
/// `PMIX_APP_MAP_REGEX`.
pub const APP_MAP_REGEX: &str = "pmix.apmap.regex";
/// `PMIX_REQUIRED_KEY`.
pub const REQUIRED_KEY: &str = "pmix.req.key";
/// `PMIX_LOCAL_COLLECTIVE_STATUS`.
pub const LOCAL_COLLECTIVE_STATUS: &str = "pmix.loc.col.st";
/// `PMIX_SORTED_PROC_ARRAY`.
pub const SORTED_PROC_ARRAY: &str = "pmix.sorted.parr";
/// `PMIX_EVENT_HDLR_FIRST`.
pub const EVENT_HDLR_FIRST: &str = "pmix.evfirst";
/// `PMIX_EVENT_HDLR_LAST`.
pub const EVENT_HDLR_LAST: &str = "pmix.evlast";
/// `PMIX_EVENT_HDLR_FIRST_IN_CATEGORY`.
pub const EVENT_HDLR_FIRST_IN_CATEGORY: &str = "pmix.evfirstcat";
/// `PMIX_EVENT_HDLR_LAST_IN_CATEGORY`.
pub const EVENT_HDLR_LAST_IN_CATEGORY: &str = "pmix.evlastcat";
/// `PMIX_EVENT_HDLR_BEFORE`.
pub const EVENT_HDLR_BEFORE: &str = "pmix.evbefore";
/// `PMIX_EVENT_HDLR_AFTER`.
pub const EVENT_HDLR_AFTER: &str = "pmix.evafter";
/// `PMIX_EVENT_HDLR_PREPEND`.
pub const EVENT_HDLR_PREPEND: &str = "pmix.evprepend";
/// `PMIX_EVENT_HDLR_APPEND`.
pub const EVENT_HDLR_APPEND: &str = "pmix.evappend";
/// `PMIX_EVENT_AFFECTED_PROCS`.
pub const EVENT_AFFECTED_PROCS: &str = "pmix.evaffected";
/// `PMIX_EVENT_DO_NOT_CACHE`.
pub const EVENT_DO_NOT_CACHE: &str = "pmix.evnocache";
/// `PMIX_EVENT_SILENT_TERMINATION`.
pub const EVENT_SILENT_TERMINATION: &str = "pmix.evsilentterm";
/// `PMIX_EVENT_PROXY`.
pub const EVENT_PROXY: &str = "pmix.evproxy";
/// `PMIX_EVENT_TEXT_MESSAGE`.
pub const EVENT_TEXT_MESSAGE: &str = "pmix.evtext";
/// `PMIX_EVENT_TIMESTAMP`.
pub const EVENT_TIMESTAMP: &str = "pmix.evtstamp";
/// `PMIX_EVENT_TERMINATE_SESSION`.
pub const EVENT_TERMINATE_SESSION: &str = "pmix.evterm.sess";
/// `PMIX_EVENT_TERMINATE_JOB`.
pub const EVENT_TERMINATE_JOB: &str = "pmix.evterm.job";
/// `PMIX_EVENT_TERMINATE_NODE`.
pub const EVENT_TERMINATE_NODE: &str = "pmix.evterm.node";
/// `PMIX_EVENT_TERMINATE_PROC`.
pub const EVENT_TERMINATE_PROC: &str = "pmix.evterm.proc";
/// `PMIX_EVENT_ACTION_TIMEOUT`.
pub const EVENT_ACTION_TIMEOUT: &str = "pmix.evtimeout";
/// `PMIX_PERSONALITY`.
pub const PERSONALITY: &str = "pmix.pers";
/// `PMIX_HOST`.
pub const HOST: &str = "pmix.host";
/// `PMIX_HOSTFILE`.
pub const HOSTFILE: &str = "pmix.hostfile";
/// `PMIX_ADD_HOST`.
pub const ADD_HOST: &str = "pmix.addhost";
/// `PMIX_ADD_HOSTFILE`.
pub const ADD_HOSTFILE: &str = "pmix.addhostfile";
/// `PMIX_PREFIX`.
pub const PREFIX: &str = "pmix.prefix";
/// `PMIX_WDIR`.
pub const WDIR: &str = "pmix.wdir";
/// `PMIX_WDIR_USER_SPECIFIED`.
pub const WDIR_USER_SPECIFIED: &str = "pmix.wdir.user";
/// `PMIX_DISPLAY_MAP`.
pub const DISPLAY_MAP: &str = "pmix.dispmap";
/// `PMIX_DISPLAY_MAP_DETAILED`.
pub const DISPLAY_MAP_DETAILED: &str = "pmix.dispmapdet";
/// `PMIX_DISPLAY_ALLOCATION`.
pub const DISPLAY_ALLOCATION: &str = "pmix.dispalloc";
/// `PMIX_DISPLAY_TOPOLOGY`.
pub const DISPLAY_TOPOLOGY: &str = "pmix.disptopo";
/// `PMIX_PPR`.
pub const PPR: &str = "pmix.ppr";
/// `PMIX_RANKBY`.
pub const RANKBY: &str = "pmix.rankby";
/// `PMIX_BINDTO`.
pub const BINDTO: &str = "pmix.bindto";
/// `PMIX_PRELOAD_BIN`.
pub const PRELOAD_BIN: &str = "pmix.preloadbin";
/// `PMIX_PRELOAD_FILES`.
pub const PRELOAD_FILES: &str = "pmix.preloadfiles";
/// `PMIX_STDIN_TGT`.
pub const STDIN_TGT: &str = "pmix.stdin";
/// `PMIX_COLOCATE_PROCS`.
pub const COLOCATE_PROCS: &str = "pmix.colproc";
/// `PMIX_COLOCATE_NPERPROC`.
pub const COLOCATE_NPERPROC: &str = "pmix.colnum.proc";
/// `PMIX_COLOCATE_NPERNODE`.
pub const COLOCATE_NPERNODE: &str = "pmix.colnum.node";
/// `PMIX_SET_SESSION_CWD`.
pub const SET_SESSION_CWD: &str = "pmix.ssncwd";
/// `PMIX_INDEX_ARGV`.
pub const INDEX_ARGV: &str = "pmix.indxargv";
/// `PMIX_CPUS_PER_PROC`.
pub const CPUS_PER_PROC: &str = "pmix.cpuperproc";
/// `PMIX_NO_PROCS_ON_HEAD`.
pub const NO_PROCS_ON_HEAD: &str = "pmix.nolocal";
/// `PMIX_NO_OVERSUBSCRIBE`.
pub const NO_OVERSUBSCRIBE: &str = "pmix.noover";
/// `PMIX_REPORT_BINDINGS`.
pub const REPORT_BINDINGS: &str = "pmix.repbind";
/// `PMIX_CPU_LIST`.
pub const CPU_LIST: &str = "pmix.cpulist";
/// `PMIX_JOB_RECOVERABLE`.
pub const JOB_RECOVERABLE: &str = "pmix.recover";
/// `PMIX_JOB_CONTINUOUS`.
pub const JOB_CONTINUOUS: &str = "pmix.continuous";
/// `PMIX_MAX_RESTARTS`.
pub const MAX_RESTARTS: &str = "pmix.maxrestarts";
/// `PMIX_FWD_STDIN`.
pub const FWD_STDIN: &str = "pmix.fwd.stdin";
/// `PMIX_FWD_STDDIAG`.
pub const FWD_STDDIAG: &str = "pmix.fwd.stddiag";
/// `PMIX_SPAWN_TOOL`.
pub const SPAWN_TOOL: &str = "pmix.spwn.tool";
/// `PMIX_CMD_LINE`.
pub const CMD_LINE: &str = "pmix.cmd.line";
/// `PMIX_FORKEXEC_AGENT`.
pub const FORKEXEC_AGENT: &str = "pmix.fe.agnt";
/// `PMIX_JOB_TIMEOUT`.
pub const JOB_TIMEOUT: &str = "pmix.job.time";
/// `PMIX_SPAWN_TIMEOUT`.
pub const SPAWN_TIMEOUT: &str = "pmix.sp.time";
/// `PMIX_TIMEOUT_STACKTRACES`.
pub const TIMEOUT_STACKTRACES: &str = "pmix.tim.stack";
/// `PMIX_TIMEOUT_REPORT_STATE`.
pub const TIMEOUT_REPORT_STATE: &str = "pmix.tim.state";
/// `PMIX_APP_ARGV`.
pub const APP_ARGV: &str = "pmix.app.argv";
/// `PMIX_NOTIFY_JOB_EVENTS`.
pub const NOTIFY_JOB_EVENTS: &str = "pmix.note.jev";
/// `PMIX_NOTIFY_PROC_TERMINATION`.
pub const NOTIFY_PROC_TERMINATION: &str = "pmix.noteproc";
/// `PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION`.
pub const NOTIFY_PROC_ABNORMAL_TERMINATION: &str = "pmix.noteabproc";
/// `PMIX_ENVARS_HARVESTED`.
pub const ENVARS_HARVESTED: &str = "pmix.evar.hvstd";
/// `PMIX_RUNTIME_OPTIONS`.
pub const RUNTIME_OPTIONS: &str = "pmix.runopt";
/// `PMIX_ABORT_NON_ZERO_TERM`.
pub const ABORT_NON_ZERO_TERM: &str = "pmix.abnz";
/// `PMIX_DO_NOT_LAUNCH`.
pub const DO_NOT_LAUNCH: &str = "pmix.dnl";
/// `PMIX_SHOW_LAUNCH_PROGRESS`.
pub const SHOW_LAUNCH_PROGRESS: &str = "pmix.showprog";
/// `PMIX_AGGREGATE_HELP`.
pub const AGGREGATE_HELP: &str = "pmix.agg.help";
/// `PMIX_REPORT_CHILD_SEP`.
pub const REPORT_CHILD_SEP: &str = "pmix.rptchildsep";
/// `PMIX_QUERY_SUPPORTED_KEYS`.
pub const QUERY_SUPPORTED_KEYS: &str = "pmix.qry.keys";
/// `PMIX_QUERY_JOB_STATUS`.
pub const QUERY_JOB_STATUS: &str = "pmix.qry.jst";
/// `PMIX_QUERY_QUEUE_LIST`.
pub const QUERY_QUEUE_LIST: &str = "pmix.qry.qlst";
/// `PMIX_QUERY_QUEUE_STATUS`.
pub const QUERY_QUEUE_STATUS: &str = "pmix.qry.qst";
/// `PMIX_QUERY_PROC_TABLE`.
pub const QUERY_PROC_TABLE: &str = "pmix.qry.ptable";
/// `PMIX_QUERY_LOCAL_PROC_TABLE`.
pub const QUERY_LOCAL_PROC_TABLE: &str = "pmix.qry.lptable";
/// `PMIX_QUERY_AUTHORIZATIONS`.
pub const QUERY_AUTHORIZATIONS: &str = "pmix.qry.auths";
/// `PMIX_QUERY_MEMORY_USAGE`.
pub const QUERY_MEMORY_USAGE: &str = "pmix.qry.mem";
/// `PMIX_QUERY_ALLOC_STATUS`.
pub const QUERY_ALLOC_STATUS: &str = "pmix.query.alloc";
/// `PMIX_TIME_REMAINING`.
pub const TIME_REMAINING: &str = "pmix.time.remaining";
/// `PMIX_QUERY_PSET_MEMBERSHIP`.
pub const QUERY_PSET_MEMBERSHIP: &str = "pmix.qry.pmems";
/// `PMIX_QUERY_NUM_GROUPS`.
pub const QUERY_NUM_GROUPS: &str = "pmix.qry.pgrpnum";
/// `PMIX_QUERY_GROUP_NAMES`.
pub const QUERY_GROUP_NAMES: &str = "pmix.qry.pgrp";
/// `PMIX_QUERY_GROUP_MEMBERSHIP`.
pub const QUERY_GROUP_MEMBERSHIP: &str = "pmix.qry.pgrpmems";
/// `PMIX_QUERY_ATTRIBUTE_SUPPORT`.
pub const QUERY_ATTRIBUTE_SUPPORT: &str = "pmix.qry.attrs";
/// `PMIX_CLIENT_FUNCTIONS`.
pub const CLIENT_FUNCTIONS: &str = "pmix.client.fns";
/// `PMIX_SERVER_FUNCTIONS`.
pub const SERVER_FUNCTIONS: &str = "pmix.srvr.fns";
/// `PMIX_TOOL_FUNCTIONS`.
pub const TOOL_FUNCTIONS: &str = "pmix.tool.fns";
/// `PMIX_HOST_FUNCTIONS`.
pub const HOST_FUNCTIONS: &str = "pmix.host.fns";
/// `PMIX_QUERY_AVAIL_SERVERS`.
pub const QUERY_AVAIL_SERVERS: &str = "pmix.qry.asrvrs";
/// `PMIX_QUERY_QUALIFIERS`.
pub const QUERY_QUALIFIERS: &str = "pmix.qry.quals";
/// `PMIX_QUERY_RESULTS`.
pub const QUERY_RESULTS: &str = "pmix.qry.res";
/// `PMIX_QUERY_LOCAL_ONLY`.
pub const QUERY_LOCAL_ONLY: &str = "pmix.qry.local";
/// `PMIX_QUERY_REPORT_AVG`.
pub const QUERY_REPORT_AVG: &str = "pmix.qry.avg";
/// `PMIX_QUERY_REPORT_MINMAX`.
pub const QUERY_REPORT_MINMAX: &str = "pmix.qry.minmax";
/// `PMIX_CLIENT_ATTRIBUTES`.
pub const CLIENT_ATTRIBUTES: &str = "pmix.client.attrs";
/// `PMIX_SERVER_ATTRIBUTES`.
pub const SERVER_ATTRIBUTES: &str = "pmix.srvr.attrs";
/// `PMIX_HOST_ATTRIBUTES`.
pub const HOST_ATTRIBUTES: &str = "pmix.host.attrs";
/// `PMIX_TOOL_ATTRIBUTES`.
pub const TOOL_ATTRIBUTES: &str = "pmix.tool.attrs";
/// `PMIX_QUERY_SUPPORTED_QUALIFIERS`.
pub const QUERY_SUPPORTED_QUALIFIERS: &str = "pmix.qry.quals";
/// `PMIX_SESSION_INFO`.
pub const SESSION_INFO: &str = "pmix.ssn.info";
/// `PMIX_JOB_INFO`.
pub const JOB_INFO: &str = "pmix.job.info";
/// `PMIX_APP_INFO`.
pub const APP_INFO: &str = "pmix.app.info";
/// `PMIX_SESSION_INFO_ARRAY`.
pub const SESSION_INFO_ARRAY: &str = "pmix.ssn.arr";
/// `PMIX_JOB_INFO_ARRAY`.
pub const JOB_INFO_ARRAY: &str = "pmix.job.arr";
/// `PMIX_APP_INFO_ARRAY`.
pub const APP_INFO_ARRAY: &str = "pmix.app.arr";
/// `PMIX_PROC_INFO_ARRAY`.
pub const PROC_INFO_ARRAY: &str = "pmix.pdata";
/// `PMIX_NODE_INFO_ARRAY`.
pub const NODE_INFO_ARRAY: &str = "pmix.node.arr";
/// `PMIX_SERVER_INFO_ARRAY`.
pub const SERVER_INFO_ARRAY: &str = "pmix.srv.arr";
/// `PMIX_LOG_SOURCE`.
pub const LOG_SOURCE: &str = "pmix.log.source";
/// `PMIX_LOG_STDOUT`.
pub const LOG_STDOUT: &str = "pmix.log.stdout";
/// `PMIX_LOG_SYSLOG`.
pub const LOG_SYSLOG: &str = "pmix.log.syslog";
/// `PMIX_LOG_SYSLOG_PRI`.
pub const LOG_SYSLOG_PRI: &str = "pmix.log.syspri";
/// `PMIX_LOG_TIMESTAMP`.
pub const LOG_TIMESTAMP: &str = "pmix.log.tstmp";
/// `PMIX_LOG_TAG_OUTPUT`.
pub const LOG_TAG_OUTPUT: &str = "pmix.log.tag";
/// `PMIX_LOG_TIMESTAMP_OUTPUT`.
pub const LOG_TIMESTAMP_OUTPUT: &str = "pmix.log.tsout";
/// `PMIX_LOG_XML_OUTPUT`.
pub const LOG_XML_OUTPUT: &str = "pmix.log.xml";
/// `PMIX_LOG_ONCE`.
pub const LOG_ONCE: &str = "pmix.log.once";
/// `PMIX_LOG_KEY`.
pub const LOG_KEY: &str = "pmix.log.key";
/// `PMIX_LOG_VAL`.
pub const LOG_VAL: &str = "pmix.log.val";
/// `PMIX_LOG_AGG`.
pub const LOG_AGG: &str = "pmix.log.agg";
/// `PMIX_LOG_EMAIL_MSG`.
pub const LOG_EMAIL_MSG: &str = "pmix.log.emmsg";
/// `PMIX_LOG_EMAIL_SERVER`.
pub const LOG_EMAIL_SERVER: &str = "pmix.log.esrvr";
/// `PMIX_LOG_EMAIL_SRVR_PORT`.
pub const LOG_EMAIL_SRVR_PORT: &str = "pmix.log.esrvrprt";
/// `PMIX_LOG_GLOBAL_DATASTORE`.
pub const LOG_GLOBAL_DATASTORE: &str = "pmix.log.gstore";
/// `PMIX_LOG_JOB_RECORD`.
pub const LOG_JOB_RECORD: &str = "pmix.log.jrec";
/// `PMIX_LOG_PROC_TERMINATION`.
pub const LOG_PROC_TERMINATION: &str = "pmix.logproc";
/// `PMIX_LOG_PROC_ABNORMAL_TERMINATION`.
pub const LOG_PROC_ABNORMAL_TERMINATION: &str = "pmix.logabproc";
/// `PMIX_LOG_JOB_EVENTS`.
pub const LOG_JOB_EVENTS: &str = "pmix.log.jev";
/// `PMIX_LOG_COMPLETION`.
pub const LOG_COMPLETION: &str = "pmix.logcomp";
/// `PMIX_BREAKPOINT`.
pub const BREAKPOINT: &str = "pmix.brkpnt";
/// `PMIX_DEBUG_TARGET`.
pub const DEBUG_TARGET: &str = "pmix.dbg.tgt";
/// `PMIX_DEBUG_DAEMONS_PER_PROC`.
pub const DEBUG_DAEMONS_PER_PROC: &str = "pmix.dbg.dpproc";
/// `PMIX_DEBUG_DAEMONS_PER_NODE`.
pub const DEBUG_DAEMONS_PER_NODE: &str = "pmix.dbg.dpnd";
/// `PMIX_RM_NAME`.
pub const RM_NAME: &str = "pmix.rm.name";
/// `PMIX_RM_VERSION`.
pub const RM_VERSION: &str = "pmix.rm.version";
/// `PMIX_SET_ENVAR`.
pub const SET_ENVAR: &str = "pmix.envar.set";
/// `PMIX_ADD_ENVAR`.
pub const ADD_ENVAR: &str = "pmix.envar.add";
/// `PMIX_UNSET_ENVAR`.
pub const UNSET_ENVAR: &str = "pmix.envar.unset";
/// `PMIX_PREPEND_ENVAR`.
pub const PREPEND_ENVAR: &str = "pmix.envar.prepnd";
/// `PMIX_APPEND_ENVAR`.
pub const APPEND_ENVAR: &str = "pmix.envar.appnd";
/// `PMIX_FIRST_ENVAR`.
pub const FIRST_ENVAR: &str = "pmix.envar.first";
/// `PMIX_ALLOC_REQ_ID`.
pub const ALLOC_REQ_ID: &str = "pmix.alloc.reqid";
/// `PMIX_ALLOC_ID`.
pub const ALLOC_ID: &str = "pmix.alloc.id";
/// `PMIX_ALLOC_NUM_NODES`.
pub const ALLOC_NUM_NODES: &str = "pmix.alloc.nnodes";
/// `PMIX_ALLOC_NODE_LIST`.
pub const ALLOC_NODE_LIST: &str = "pmix.alloc.nlist";
/// `PMIX_ALLOC_NUM_CPUS`.
pub const ALLOC_NUM_CPUS: &str = "pmix.alloc.ncpus";
/// `PMIX_ALLOC_NUM_CPU_LIST`.
pub const ALLOC_NUM_CPU_LIST: &str = "pmix.alloc.ncpulist";
/// `PMIX_ALLOC_CPU_LIST`.
pub const ALLOC_CPU_LIST: &str = "pmix.alloc.cpulist";
/// `PMIX_ALLOC_MEM_SIZE`.
pub const ALLOC_MEM_SIZE: &str = "pmix.alloc.msize";
/// `PMIX_ALLOC_FABRIC`.
pub const ALLOC_FABRIC: &str = "pmix.alloc.net";
/// `PMIX_ALLOC_FABRIC_ID`.
pub const ALLOC_FABRIC_ID: &str = "pmix.alloc.netid";
/// `PMIX_ALLOC_BANDWIDTH`.
pub const ALLOC_BANDWIDTH: &str = "pmix.alloc.bw";
/// `PMIX_ALLOC_FABRIC_QOS`.
pub const ALLOC_FABRIC_QOS: &str = "pmix.alloc.netqos";
/// `PMIX_ALLOC_TIME`.
pub const ALLOC_TIME: &str = "pmix.alloc.time";
/// `PMIX_ALLOC_FABRIC_TYPE`.
pub const ALLOC_FABRIC_TYPE: &str = "pmix.alloc.nettype";
/// `PMIX_ALLOC_FABRIC_PLANE`.
pub const ALLOC_FABRIC_PLANE: &str = "pmix.alloc.netplane";
/// `PMIX_ALLOC_FABRIC_ENDPTS`.
pub const ALLOC_FABRIC_ENDPTS: &str = "pmix.alloc.endpts";
/// `PMIX_ALLOC_FABRIC_ENDPTS_NODE`.
pub const ALLOC_FABRIC_ENDPTS_NODE: &str = "pmix.alloc.endpts.nd";
/// `PMIX_ALLOC_FABRIC_SEC_KEY`.
pub const ALLOC_FABRIC_SEC_KEY: &str = "pmix.alloc.nsec";
/// `PMIX_ALLOC_QUEUE`.
pub const ALLOC_QUEUE: &str = "pmix.alloc.queue";
/// `PMIX_JOB_CTRL_ID`.
pub const JOB_CTRL_ID: &str = "pmix.jctrl.id";
/// `PMIX_JOB_CTRL_PAUSE`.
pub const JOB_CTRL_PAUSE: &str = "pmix.jctrl.pause";
/// `PMIX_JOB_CTRL_RESUME`.
pub const JOB_CTRL_RESUME: &str = "pmix.jctrl.resume";
/// `PMIX_JOB_CTRL_CANCEL`.
pub const JOB_CTRL_CANCEL: &str = "pmix.jctrl.cancel";
/// `PMIX_JOB_CTRL_KILL`.
pub const JOB_CTRL_KILL: &str = "pmix.jctrl.kill";
/// `PMIX_JOB_CTRL_RESTART`.
pub const JOB_CTRL_RESTART: &str = "pmix.jctrl.restart";
/// `PMIX_JOB_CTRL_CHECKPOINT`.
pub const JOB_CTRL_CHECKPOINT: &str = "pmix.jctrl.ckpt";
/// `PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT`.
pub const JOB_CTRL_CHECKPOINT_TIMEOUT: &str = "pmix.jctrl.ckptsig";
/// `PMIX_JOB_CTRL_SIGNAL`.
pub const JOB_CTRL_SIGNAL: &str = "pmix.jctrl.sig";
/// `PMIX_JOB_CTRL_PROVISION`.
pub const JOB_CTRL_PROVISION: &str = "pmix.jctrl.pvn";
/// `PMIX_JOB_CTRL_PROVISION_IMAGE`.
pub const JOB_CTRL_PROVISION_IMAGE: &str = "pmix.jctrl.pvnimg";
/// `PMIX_JOB_CTRL_TERMINATE`.
pub const JOB_CTRL_TERMINATE: &str = "pmix.jctrl.term";
/// `PMIX_CLEANUP_RECURSIVE`.
pub const CLEANUP_RECURSIVE: &str = "pmix.clnup.recurse";
/// `PMIX_CLEANUP_EMPTY`.
pub const CLEANUP_EMPTY: &str = "pmix.clnup.empty";
/// `PMIX_CLEANUP_IGNORE`.
pub const CLEANUP_IGNORE: &str = "pmix.clnup.ignore";
/// `PMIX_CLEANUP_LEAVE_TOPDIR`.
pub const CLEANUP_LEAVE_TOPDIR: &str = "pmix.clnup.lvtop";
/// `PMIX_MONITOR_CANCEL`.
pub const MONITOR_CANCEL: &str = "pmix.monitor.cancel";
/// `PMIX_MONITOR_APP_CONTROL`.
pub const MONITOR_APP_CONTROL: &str = "pmix.monitor.appctrl";
/// `PMIX_MONITOR_FILE`.
pub const MONITOR_FILE: &str = "pmix.monitor.fmon";
/// `PMIX_MONITOR_FILE_SIZE`.
pub const MONITOR_FILE_SIZE: &str = "pmix.monitor.fsize";
/// `PMIX_MONITOR_FILE_ACCESS`.
pub const MONITOR_FILE_ACCESS: &str = "pmix.monitor.faccess";
/// `PMIX_MONITOR_FILE_MODIFY`.
pub const MONITOR_FILE_MODIFY: &str = "pmix.monitor.fmod";
/// `PMIX_MONITOR_FILE_CHECK_TIME`.
pub const MONITOR_FILE_CHECK_TIME: &str = "pmix.monitor.ftime";
/// `PMIX_MONITOR_FILE_DROPS`.
pub const MONITOR_FILE_DROPS: &str = "pmix.monitor.fdrop";
/// `PMIX_CRED_TYPE`.
pub const CRED_TYPE: &str = "pmix.sec.ctype";
/// `PMIX_CRYPTO_KEY`.
pub const CRYPTO_KEY: &str = "pmix.sec.key";
/// `PMIX_IOF_CACHE_SIZE`.
pub const IOF_CACHE_SIZE: &str = "pmix.iof.csize";
/// `PMIX_IOF_DROP_OLDEST`.
pub const IOF_DROP_OLDEST: &str = "pmix.iof.old";
/// `PMIX_IOF_DROP_NEWEST`.
pub const IOF_DROP_NEWEST: &str = "pmix.iof.new";
/// `PMIX_IOF_BUFFERING_SIZE`.
pub const IOF_BUFFERING_SIZE: &str = "pmix.iof.bsize";
/// `PMIX_IOF_BUFFERING_TIME`.
pub const IOF_BUFFERING_TIME: &str = "pmix.iof.btime";
/// `PMIX_IOF_COMPLETE`.
pub const IOF_COMPLETE: &str = "pmix.iof.cmp";
/// `PMIX_IOF_PUSH_STDIN`.
pub const IOF_PUSH_STDIN: &str = "pmix.iof.stdin";
/// `PMIX_IOF_TAG_OUTPUT`.
pub const IOF_TAG_OUTPUT: &str = "pmix.iof.tag";
/// `PMIX_IOF_TAG_DETAILED_OUTPUT`.
pub const IOF_TAG_DETAILED_OUTPUT: &str = "pmix.iof.tagdet";
/// `PMIX_IOF_TAG_FULLNAME_OUTPUT`.
pub const IOF_TAG_FULLNAME_OUTPUT: &str = "pmix.iof.tagfull";
/// `PMIX_IOF_RANK_OUTPUT`.
pub const IOF_RANK_OUTPUT: &str = "pmix.iof.rank";
/// `PMIX_IOF_TIMESTAMP_OUTPUT`.
pub const IOF_TIMESTAMP_OUTPUT: &str = "pmix.iof.ts";
/// `PMIX_IOF_MERGE_STDERR_STDOUT`.
pub const IOF_MERGE_STDERR_STDOUT: &str = "pmix.iof.mrg";
/// `PMIX_IOF_XML_OUTPUT`.
pub const IOF_XML_OUTPUT: &str = "pmix.iof.xml";
/// `PMIX_IOF_OUTPUT_TO_FILE`.
pub const IOF_OUTPUT_TO_FILE: &str = "pmix.iof.file";
/// `PMIX_IOF_FILE_PATTERN`.
pub const IOF_FILE_PATTERN: &str = "pmix.iof.fpt";
/// `PMIX_IOF_OUTPUT_TO_DIRECTORY`.
pub const IOF_OUTPUT_TO_DIRECTORY: &str = "pmix.iof.dir";
/// `PMIX_IOF_FILE_ONLY`.
pub const IOF_FILE_ONLY: &str = "pmix.iof.fonly";
/// `PMIX_IOF_COPY`.
pub const IOF_COPY: &str = "pmix.iof.cpy";
/// `PMIX_IOF_REDIRECT`.
pub const IOF_REDIRECT: &str = "pmix.iof.redir";
/// `PMIX_IOF_LOCAL_OUTPUT`.
pub const IOF_LOCAL_OUTPUT: &str = "pmix.iof.local";
/// `PMIX_IOF_OUTPUT_RAW`.
pub const IOF_OUTPUT_RAW: &str = "pmix.iof.raw";
/// `PMIX_SETUP_APP_ENVARS`.
pub const SETUP_APP_ENVARS: &str = "pmix.setup.env";
/// `PMIX_SETUP_APP_NONENVARS`.
pub const SETUP_APP_NONENVARS: &str = "pmix.setup.nenv";
/// `PMIX_SETUP_APP_ALL`.
pub const SETUP_APP_ALL: &str = "pmix.setup.all";
/// `PMIX_GROUP_ENDPT_DATA`.
pub const GROUP_ENDPT_DATA: &str = "pmix.grp.endpt";
/// `PMIX_GROUP_NAMES`.
pub const GROUP_NAMES: &str = "pmix.pgrp.nm";
/// `PMIX_GROUP_INFO`.
pub const GROUP_INFO: &str = "pmix.grp.info";
/// `PMIX_GROUP_LOCAL_CID`.
pub const GROUP_LOCAL_CID: &str = "pmix.grp.lclid";
/// `PMIX_QUERY_STORAGE_LIST`.
pub const QUERY_STORAGE_LIST: &str = "pmix.strg.list";
/// `PMIX_STORAGE_CAPACITY_LIMIT`.
pub const STORAGE_CAPACITY_LIMIT: &str = "pmix.strg.cap";
/// `PMIX_STORAGE_OBJECT_LIMIT`.
pub const STORAGE_OBJECT_LIMIT: &str = "pmix.strg.obj";
/// `PMIX_STORAGE_ID`.
pub const STORAGE_ID: &str = "pmix.strg.id";
/// `PMIX_STORAGE_PATH`.
pub const STORAGE_PATH: &str = "pmix.strg.path";
/// `PMIX_STORAGE_TYPE`.
pub const STORAGE_TYPE: &str = "pmix.strg.type";
/// `PMIX_STORAGE_ACCESSIBILITY`.
pub const STORAGE_ACCESSIBILITY: &str = "pmix.strg.access";
/// `PMIX_STORAGE_ACCESS_TYPE`.
pub const STORAGE_ACCESS_TYPE: &str = "pmix.strg.atype";
/// `PMIX_STORAGE_BW_CUR`.
pub const STORAGE_BW_CUR: &str = "pmix.strg.bwcur";
/// `PMIX_STORAGE_BW_MAX`.
pub const STORAGE_BW_MAX: &str = "pmix.strg.bwmax";
/// `PMIX_STORAGE_CAPACITY_USED`.
pub const STORAGE_CAPACITY_USED: &str = "pmix.strg.capuse";
/// `PMIX_STORAGE_IOPS_CUR`.
pub const STORAGE_IOPS_CUR: &str = "pmix.strg.iopscur";
/// `PMIX_STORAGE_IOPS_MAX`.
pub const STORAGE_IOPS_MAX: &str = "pmix.strg.iopsmax";
/// `PMIX_STORAGE_MEDIUM`.
pub const STORAGE_MEDIUM: &str = "pmix.strg.medium";
/// `PMIX_STORAGE_MINIMAL_XFER_SIZE`.
pub const STORAGE_MINIMAL_XFER_SIZE: &str = "pmix.strg.minxfer";
/// `PMIX_STORAGE_OBJECTS_USED`.
pub const STORAGE_OBJECTS_USED: &str = "pmix.strg.objuse";
/// `PMIX_STORAGE_PERSISTENCE`.
pub const STORAGE_PERSISTENCE: &str = "pmix.strg.persist";
/// `PMIX_STORAGE_SUGGESTED_XFER_SIZE`.
pub const STORAGE_SUGGESTED_XFER_SIZE: &str = "pmix.strg.sxfer";
/// `PMIX_STORAGE_VERSION`.
pub const STORAGE_VERSION: &str = "pmix.strg.ver";
/// `PMIX_FABRIC_COST_MATRIX`.
pub const FABRIC_COST_MATRIX: &str = "pmix.fab.cm";
/// `PMIX_FABRIC_GROUPS`.
pub const FABRIC_GROUPS: &str = "pmix.fab.grps";
/// `PMIX_FABRIC_VENDOR`.
pub const FABRIC_VENDOR: &str = "pmix.fab.vndr";
/// `PMIX_FABRIC_IDENTIFIER`.
pub const FABRIC_IDENTIFIER: &str = "pmix.fab.id";
/// `PMIX_FABRIC_INDEX`.
pub const FABRIC_INDEX: &str = "pmix.fab.idx";
/// `PMIX_FABRIC_DEVICE_VENDORID`.
pub const FABRIC_DEVICE_VENDORID: &str = "pmix.fabdev.vendid";
/// `PMIX_FABRIC_NUM_DEVICES`.
pub const FABRIC_NUM_DEVICES: &str = "pmix.fab.nverts";
/// `PMIX_FABRIC_DIMS`.
pub const FABRIC_DIMS: &str = "pmix.fab.dims";
/// `PMIX_FABRIC_PLANE`.
pub const FABRIC_PLANE: &str = "pmix.fab.plane";
/// `PMIX_FABRIC_SWITCH`.
pub const FABRIC_SWITCH: &str = "pmix.fab.switch";
/// `PMIX_FABRIC_ENDPT`.
pub const FABRIC_ENDPT: &str = "pmix.fab.endpt";
/// `PMIX_FABRIC_SHAPE`.
pub const FABRIC_SHAPE: &str = "pmix.fab.shape";
/// `PMIX_FABRIC_SHAPE_STRING`.
pub const FABRIC_SHAPE_STRING: &str = "pmix.fab.shapestr";
/// `PMIX_SWITCH_PEERS`.
pub const SWITCH_PEERS: &str = "pmix.speers";
/// `PMIX_FABRIC_DEVICE`.
pub const FABRIC_DEVICE: &str = "pmix.fabdev";
/// `PMIX_FABRIC_DEVICES`.
pub const FABRIC_DEVICES: &str = "pmix.fab.devs";
/// `PMIX_FABRIC_DEVICE_NAME`.
pub const FABRIC_DEVICE_NAME: &str = "pmix.fabdev.nm";
/// `PMIX_FABRIC_DEVICE_INDEX`.
pub const FABRIC_DEVICE_INDEX: &str = "pmix.fabdev.idx";
/// `PMIX_FABRIC_DEVICE_VENDOR`.
pub const FABRIC_DEVICE_VENDOR: &str = "pmix.fabdev.vndr";
/// `PMIX_FABRIC_DEVICE_BUS_TYPE`.
pub const FABRIC_DEVICE_BUS_TYPE: &str = "pmix.fabdev.btyp";
/// `PMIX_FABRIC_DEVICE_DRIVER`.
pub const FABRIC_DEVICE_DRIVER: &str = "pmix.fabdev.driver";
/// `PMIX_FABRIC_DEVICE_FIRMWARE`.
pub const FABRIC_DEVICE_FIRMWARE: &str = "pmix.fabdev.fmwr";
/// `PMIX_FABRIC_DEVICE_ADDRESS`.
pub const FABRIC_DEVICE_ADDRESS: &str = "pmix.fabdev.addr";
/// `PMIX_FABRIC_DEVICE_COORDINATES`.
pub const FABRIC_DEVICE_COORDINATES: &str = "pmix.fab.coord";
/// `PMIX_FABRIC_DEVICE_MTU`.
pub const FABRIC_DEVICE_MTU: &str = "pmix.fabdev.mtu";
/// `PMIX_FABRIC_DEVICE_SPEED`.
pub const FABRIC_DEVICE_SPEED: &str = "pmix.fabdev.speed";
/// `PMIX_FABRIC_DEVICE_STATE`.
pub const FABRIC_DEVICE_STATE: &str = "pmix.fabdev.state";
/// `PMIX_FABRIC_DEVICE_TYPE`.
pub const FABRIC_DEVICE_TYPE: &str = "pmix.fabdev.type";
/// `PMIX_FABRIC_DEVICE_PCI_DEVID`.
pub const FABRIC_DEVICE_PCI_DEVID: &str = "pmix.fabdev.pcidevid";
/// `PMIX_MAX_VALUE`.
pub const MAX_VALUE: &str = "pmix.descr.maxval";
/// `PMIX_MIN_VALUE`.
pub const MIN_VALUE: &str = "pmix.descr.minval";
/// `PMIX_ENUM_VALUE`.
pub const ENUM_VALUE: &str = "pmix.descr.enum";
/// `PMIX_QUERY_STABLE_ABI_VERSION`.
pub const QUERY_STABLE_ABI_VERSION: &str = "pmix.qry.stabiver";
/// `PMIX_QUERY_PROVISIONAL_ABI_VERSION`.
pub const QUERY_PROVISIONAL_ABI_VERSION: &str = "pmix.qry.prabiver";

// OpenPMIx 4.2.2 sends these; its public header carries them, ours does not.
/// `PMIX_BFROPS_MODULE`: the bfrops module a namespace uses (internal to OpenPMIx).
pub const BFROPS_MODULE: &str = "pmix.bfrops.mod";
/// `PMIX_HWLOC_XML_V1`: the node topology as hwloc 1.x XML (deprecated).
pub const HWLOC_XML_V1: &str = "pmix.hwlocxml1";
/// `PMIX_HWLOC_XML_V2`: the node topology as hwloc 2.x XML (deprecated).
pub const HWLOC_XML_V2: &str = "pmix.hwlocxml2";
/// `PMIX_PROC_BLOB`: a process's packed data (deprecated).
pub const PROC_BLOB: &str = "pmix.pblob";
/// `PMIX_SERVER_INTERNAL_NOTIFY`: an event the server raises for itself (internal to OpenPMIx).
pub const SERVER_INTERNAL_NOTIFY: &str = "pmix.srvr.internal.notify";
/// `PMIX_TOPOLOGY_SIGNATURE`: the topology signature string (deprecated).
pub const TOPOLOGY_SIGNATURE: &str = "pmix.toposig";

// pmix-rs's own.
/// Ours: the distance origin a relayed distance request names (server side).
pub const RS_DIST_ORIGIN: &str = "pmix.rs.dist.origin";
/// Ours: which server raised an event a host carries back to every node.
pub const RS_EVENT_ORIGIN: &str = "pmixrs.evorigin";
/// Ours: an event's CUSTOM range as bytes, to cross a host that cannot carry an array of procs.
pub const RS_HOST_EVENT_RANGE: &str = "pmixrs.evrange";
/// Ours: a rank-state contribution carried by a fence.
pub const RS_FT_CONTRIBUTION: &str = "pmixrs.ft.contrib";
/// Ours: which group of its name a forwarded leave is from (its context id).
pub const RS_GROUP_INCARNATION: &str = "pmixrs.grp.incarnation";
/// Ours: the prefix of the server-init infos that set a server limit.
pub const RS_LIMIT_PREFIX: &str = "pmixrs.limit.";
/// Ours: the relay round that carries an event a direct-modex answer follows.
pub const RS_RELAY_AFTER: &str = "pmixrs.relay.after";
/// Ours: the path of the node-store segment that holds a REQ reply's job information
/// (docs/serving.md §5), given instead of it to a client that announced
/// [`crate::nodestore::GDS_NAME`].
pub const RS_NODE_STORE: &str = "pmixrs.nstore";
/// Ours: a relayed part's bytes.
pub const RS_RELAY_DATA: &str = "pmixrs.relay.data";
/// Ours: a node whose processes of the namespace are all done.
pub const RS_RELAY_DONE: &str = "pmixrs.relay.done";
/// Ours: a relayed event's code.
pub const RS_RELAY_EVENT: &str = "pmixrs.relay.event";
/// Ours: a relayed part's key.
pub const RS_RELAY_KEY: &str = "pmixrs.relay.key";
/// Ours: a relayed event's range.
pub const RS_RELAY_RANGE: &str = "pmixrs.relay.range";

/// The keys C callers compare with as NUL-terminated strings (the C ABI's `pmix_info_t`
/// keys), each the same bytes as its `&str` twin above.
pub mod c {
    use core::ffi::CStr;

    /// [`DEVICE_DISTANCES`](super::DEVICE_DISTANCES), NUL-terminated.
    pub const DEVICE_DISTANCES: &CStr = c"pmix.dev.dist";
    /// [`DEVICE_DIST_ORIGIN`](super::DEVICE_DIST_ORIGIN), NUL-terminated.
    pub const DEVICE_DIST_ORIGIN: &CStr = c"pmix.dev.dist.origin";
    /// [`DEVICE_ID`](super::DEVICE_ID), NUL-terminated.
    pub const DEVICE_ID: &CStr = c"pmix.dev.id";
    /// [`DEVICE_TYPE`](super::DEVICE_TYPE), NUL-terminated.
    pub const DEVICE_TYPE: &CStr = c"pmix.dev.type";
    /// [`HOSTNAME`](super::HOSTNAME), NUL-terminated.
    pub const HOSTNAME: &CStr = c"pmix.hname";
    /// [`SERVER_NSPACE`](super::SERVER_NSPACE), NUL-terminated.
    pub const SERVER_NSPACE: &CStr = c"pmix.srv.nspace";
    /// [`SERVER_PIDINFO`](super::SERVER_PIDINFO), NUL-terminated.
    pub const SERVER_PIDINFO: &CStr = c"pmix.srvr.pidinfo";
    /// [`SERVER_URI`](super::SERVER_URI), NUL-terminated.
    pub const SERVER_URI: &CStr = c"pmix.srvr.uri";
    /// [`SYSTEM_TMPDIR`](super::SYSTEM_TMPDIR), NUL-terminated.
    pub const SYSTEM_TMPDIR: &CStr = c"pmix.sys.tmpdir";
    /// [`TOOL_DO_NOT_CONNECT`](super::TOOL_DO_NOT_CONNECT), NUL-terminated.
    pub const TOOL_DO_NOT_CONNECT: &CStr = c"pmix.tool.nocon";
}
