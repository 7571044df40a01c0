//! The core's public types: its configuration and what the host provides, a
//! namespace's specification, the errors, what it asks the I/O layer and the host to
//! do, and the host's answers.

use std::sync::Arc;
use std::time::Duration;

use pmix_wire::{Limits, Status};

/// A connection's identity, assigned by the I/O layer (unique while it is open).
pub type ConnId = u64;

/// What a [`Core`](super::Core) is configured with: who the server is and its limits.
#[derive(Clone, Debug)]
pub struct CoreConfig {
    /// The server's own nspace (what a tool's handshake reply names).
    pub nspace: String,
    /// The server's own rank.
    pub rank: u32,
    /// This node's host name (`pmix.hname`).
    pub hostname: String,
    /// The server's effective uid: every peer's socket must be owned by it.
    pub uid: u32,
    /// The server's effective gid.
    pub gid: u32,
    /// The bounds every decode of a peer's bytes is held to (default
    /// [`Limits::SERVER`]).
    pub limits: Limits,
    /// How long a GETNB of a key not committed yet is held when the request gives
    /// no `pmix.timeout` (2 s, as OpenPMIx's direct modex).
    pub get_timeout: Duration,
    /// The most events kept for late registrants (the oldest is dropped first).
    pub max_cached_events: usize,
    /// The most bytes (about what they take packed: their keys, strings and byte
    /// objects) of the events kept for late registrants, default 16 MiB: the oldest are dropped first, and an event
    /// larger than this is delivered but not kept.
    pub max_cached_event_bytes: usize,
    /// The most bytes (about what they take packed) of the infos of one event a
    /// client notifies (default 1 MiB): every peer it reaches gets a copy, so a
    /// larger NOTIFY is answered `PMIX_ERR_OUT_OF_RESOURCE` and delivered to none.
    pub max_event_bytes: usize,
    /// The most connections served at once; a connect beyond it is refused.
    pub max_conns: usize,
    /// The most requests one connection may have waiting at once (held gets, held
    /// lookups, fence contributions); one more is answered
    /// `PMIX_ERR_OUT_OF_RESOURCE` at once.
    pub max_pending: usize,
    /// The most event registrations one connection may hold; one more REGEVENTS is
    /// answered `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_registrations: usize,
    /// The most keys one process may have committed (both buckets counted
    /// apart); a COMMIT that would exceed it stores nothing and is answered
    /// `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_keys_per_proc: usize,
    /// The most keys one publisher may hold published at once (default 4096), so
    /// that no one process fills [`CoreConfig::max_published`]; a PUBLISH that would
    /// exceed it stores nothing and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_published_per_proc: usize,
    /// The most keys published at once, server-wide; a PUBLISH that would exceed it
    /// stores nothing and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_published: usize,
    /// The most bytes (about what they take packed, keys included) one publisher
    /// may hold published at once (default 16 MiB); a PUBLISH that would exceed it
    /// stores nothing and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_published_bytes_per_proc: usize,
    /// The most bytes published at once, server-wide (default 256 MiB); a PUBLISH
    /// that would exceed it stores nothing and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_published_bytes: usize,
    /// The most bytes (about what they take packed, keys included, each scope
    /// counted) one process may have committed (default 256 MiB); a COMMIT that
    /// would exceed it stores nothing and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_committed_bytes_per_proc: usize,
    /// The topology service COMPUTE_DEVICE_DISTANCES is answered from (`None`:
    /// that command gets `PMIX_ERR_NOT_SUPPORTED`).
    pub service: Option<Arc<crate::Service>>,
    /// Whether a local rank the host placed on no cpuset (no `pmix.cpuset`) is
    /// looked for when it connects, so that a bound one gets its
    /// `PMIX_DEVICE_DISTANCES` all the same (the I/O layer asks
    /// [`super::Core::wants_location`], then tells [`super::Core::located`]). A
    /// hosted server sets it (Slurm registers no cpuset); `pmix-run` does not (it
    /// registers every binding it makes). Default false.
    pub locate_unplaced: bool,
    /// libhwloc's own v2 XML export of this node, served as the job-level
    /// `pmix.hwlocxml2` (what direct-launched Open MPI asks for); `None`: that key
    /// is NOT_FOUND and the client discovers its own topology. Only a libhwloc
    /// export belongs here (the `native` feature), never our own XML emitter's.
    pub hwloc_xml: Option<Arc<str>>,
    /// What the server's host does for it ([`Provides`], from
    /// `Host::provides`): whether the job spans nodes through it, and which of the
    /// optional upcalls it has (default: none, one node and no host).
    pub provides: Provides,
    /// Whether each namespace's job information is also written as a node-store
    /// segment (docs/serving.md §5) at registration, for the I/O layer to place
    /// ([`super::Core::take_segment`], [`super::Core::segment_placed`]) and the
    /// REQ of a client that announced [`pmix_wire::nodestore::GDS_NAME`] to name.
    /// Default false (a core without an I/O layer has nowhere to put one).
    pub node_store: bool,
    /// Whether each namespace also gets OpenPMIx's ds21 store for libpmix2 clients
    /// (docs/serving.md §5.7): the core writes it as [`Output::Ds21`] patches, the
    /// I/O layer keeps the files ([`super::Core::ds21_locks`]). Default false.
    pub ds21: bool,
    /// A number that tells this server from the other servers of a host (the
    /// runtime sets the process id and start time; 0 by default): part of the mark
    /// by which it knows its own events when a host hands them back.
    pub instance: u64,
}

impl CoreConfig {
    /// A configuration for the server `nspace`/`rank` on `hostname`, running as
    /// `uid`/`gid`, with [`Limits::SERVER`], a 2 s get timeout, 256 cached events,
    /// 4,096 connections, 4,096 pending requests and 1,024 registrations per
    /// connection, 65,536 committed keys (256 MiB) per process and 65,536 published
    /// keys (256 MiB; 4,096 keys and 16 MiB per publisher).
    pub fn new(
        nspace: impl Into<String>,
        rank: u32,
        hostname: impl Into<String>,
        uid: u32,
        gid: u32,
    ) -> Self {
        CoreConfig {
            nspace: nspace.into(),
            rank,
            hostname: hostname.into(),
            uid,
            gid,
            limits: Limits::SERVER,
            get_timeout: Duration::from_secs(2),
            max_cached_events: 256,
            max_cached_event_bytes: 16 << 20,
            max_event_bytes: 1 << 20,
            max_conns: 4096,
            max_pending: 4096,
            max_registrations: 1024,
            max_keys_per_proc: 1 << 16,
            max_published: 1 << 16,
            max_published_per_proc: 4096,
            max_published_bytes_per_proc: 16 << 20,
            max_published_bytes: 256 << 20,
            max_committed_bytes_per_proc: 256 << 20,
            service: None,
            locate_unplaced: false,
            hwloc_xml: None,
            node_store: false,
            ds21: false,
            provides: Provides::NONE,
            instance: 0,
        }
    }
}

/// What a server's host does for it ([`CoreConfig::provides`]): whether the job spans
/// nodes through it, and which optional upcalls it has, as a small set of flags
/// (`pmix::server::Host::provides` returns it; the C server API sets one flag per
/// upcall of the host's `pmix_server_module_t` that is not NULL). An upcall whose
/// flag is missing is not made: the server answers as OpenPMIx does for a NULL entry
/// of the module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Provides(u8);

impl Provides {
    /// Nothing: one node, no upcall beyond the clients' own (connected, finalized,
    /// aborted, lost), published data kept here, SPAWNNB not supported, `PMIx_Log`
    /// written to this process's stderr and stdout.
    pub const NONE: Provides = Provides(0);
    /// The host runs the job across nodes (a resource manager's daemon: Slurm's
    /// plugin, `mpirun`'s `orted`s, docs/serving.md §4): a fence naming ranks that are
    /// not on this node goes to it once the local participants joined, a get of such
    /// a rank's data goes to it as a direct modex, an event whose range reaches
    /// beyond the node is handed to it, groups span nodes through its fences, and a
    /// client's FINALIZE is answered once the host's `client_finalized` reply came.
    /// Without it a fence waits for ranks that never come, and a get of them is
    /// NOT_FOUND.
    pub const NODES: Provides = Provides(1);
    /// `fence` (C: `fence_nb`); without it a fence across nodes fails with
    /// `PMIX_ERR_NOT_SUPPORTED`.
    pub const FENCE: Provides = Provides(1 << 1);
    /// `direct_modex` (C: `direct_modex`); without it another node's data is
    /// NOT_FOUND.
    pub const DIRECT_MODEX: Provides = Provides(1 << 2);
    /// `notify` (C: `notify_event`): the host carries events to the other nodes;
    /// without it they stay on this node. With [`Provides::NODES`] and
    /// [`Provides::FENCE`], its absence turns the relay on ([`Provides::relays`]).
    pub const NOTIFY: Provides = Provides(1 << 3);
    /// `publish`, `lookup` and `unpublish` (C: all three upcalls): the host keeps
    /// published data (a name must be found from every node); without it the server
    /// keeps it.
    pub const PUBSUB: Provides = Provides(1 << 4);
    /// `spawn`: the host starts processes; without it SPAWNNB is answered
    /// `PMIX_ERR_NOT_SUPPORTED`.
    pub const SPAWN: Provides = Provides(1 << 5);
    /// `log` (C: `log`); without it a client's `PMIx_Log` is written to this
    /// process's stderr or stdout.
    pub const LOG: Provides = Provides(1 << 6);

    /// Both sets together.
    pub const fn union(self, other: Provides) -> Provides {
        Provides(self.0 | other.0)
    }

    /// Whether every flag of `other` is in this set.
    pub const fn contains(self, other: Provides) -> bool {
        self.0 & other.0 == other.0
    }

    /// The job spans nodes through the host ([`Provides::NODES`]).
    pub const fn spans_nodes(self) -> bool {
        self.contains(Provides::NODES)
    }

    /// The host runs collectives only over whole namespaces and carries no events
    /// ([`Provides::NODES`] and [`Provides::FENCE`] without [`Provides::NOTIFY`]:
    /// Slurm's plugin). Each namespace that spans nodes then gets a channel of
    /// collectives over the whole namespace that carries the fences over some of its
    /// ranks and the events beyond the node (docs/serving.md §4.1).
    pub const fn relays(self) -> bool {
        self.contains(Provides::NODES.union(Provides::FENCE)) && !self.contains(Provides::NOTIFY)
    }
}

impl std::ops::BitOr for Provides {
    type Output = Provides;

    fn bitor(self, other: Provides) -> Provides {
        self.union(other)
    }
}

/// One local rank of a namespace: what its job-info blob says about it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankSpec {
    /// The rank in its namespace.
    pub rank: u32,
    /// Its rank among the job's processes on this node (`pmix.lrank`).
    pub local_rank: u16,
    /// Its rank among all processes on this node (`pmix.nrank`).
    pub node_rank: u16,
    /// Its application number (`pmix.appnum`).
    pub appnum: u32,
    /// Its binding as OpenPMIx writes it (`pmix.cpuset`, `hwloc:0-3`), if known.
    pub cpuset: Option<String>,
    /// Its locality string (`pmix.locstr`), if known.
    pub locstr: Option<String>,
}

/// A namespace (job) the launcher registers before it spawns its ranks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamespaceSpec {
    /// The namespace's name.
    pub nspace: String,
    /// The uid its clients must claim (and the server's, docs/design.md §8).
    pub uid: u32,
    /// The gid its clients must claim.
    pub gid: u32,
    /// The job's size (`pmix.job.size`): every rank, on this node or not.
    pub job_size: u32,
    /// The ranks on this node, in rank order (all of them on one node).
    pub ranks: Vec<RankSpec>,
    /// The job's maximum size (`pmix.max.size`); 0 means the job size.
    pub max_size: u32,
    /// The universe size (`pmix.univ.size` in the session array); 0 means the job
    /// size.
    pub univ_size: u32,
    /// Job-level values added to the blob as they are (after the standard ones); a
    /// value of a key the blob writes itself (`pmix.jobid`, `pmix.offset`, …) takes
    /// that key's place instead.
    pub job_info: Vec<pmix_wire::Kval>,
    /// Where every rank of the job runs, as a host registered it (its node and
    /// process maps); `None`: one node, this one, holding the ranks of `ranks`.
    pub placement: Option<Placement>,
}

/// A job's nodes as its host describes them (docs/serving.md §4): what the job-info
/// blob tells every client about the nodes and the ranks on them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    /// Every node of the job, in node-id order.
    pub nodes: Vec<NodeSpec>,
    /// The place of the node this server serves in `nodes`; `None` when none of
    /// the job's ranks runs on it.
    pub this_node: Option<usize>,
    /// Per rank of the job (local or not, ascending), the values the host
    /// registered for it (its `pmix.pdata` but `pmix.rank`), in the host's order.
    pub proc_info: Vec<(u32, Vec<pmix_wire::Kval>)>,
}

/// One node of a [`Placement`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeSpec {
    /// Its name as the host registered it (`pmix.hname`): Slurm's node name,
    /// `mpirun`'s host name.
    pub name: String,
    /// Its node id (`pmix.nodeid`).
    pub id: u32,
    /// The job's ranks on it, ascending.
    pub ranks: Vec<u32>,
    /// Node-level values the host registered for it (a `pmix.node.arr` of the
    /// registration), added to its node array.
    pub info: Vec<pmix_wire::Info>,
}

impl NamespaceSpec {
    /// A job of `size` ranks, all on this node, run as `uid`/`gid`: rank r has
    /// local and node rank r, app 0, and no cpuset or locality string.
    pub fn single_node(nspace: impl Into<String>, size: u32, uid: u32, gid: u32) -> Self {
        NamespaceSpec {
            nspace: nspace.into(),
            uid,
            gid,
            job_size: size,
            ranks: (0..size)
                .map(|r| RankSpec {
                    rank: r,
                    local_rank: r as u16,
                    node_rank: r as u16,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Why [`Core::add_namespace`](super::Core::add_namespace) refused a namespace.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A namespace of that name is registered already.
    #[error("namespace {0:?} is registered already")]
    DuplicateNamespace(String),
    /// No namespace of that name is registered.
    #[error("namespace {0:?} is not registered")]
    UnknownNamespace(String),
    /// The specification is inconsistent; the text says how.
    #[error("bad namespace specification: {0}")]
    BadSpec(String),
}

/// Why a connection was refused at its handshake: the I/O layer closes it without
/// a reply (what OpenPMIx does) and logs this.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// The socket's real owner is not the server's user (docs/design.md §8).
    #[error("peer socket owned by uid {peer_uid}, the server runs as uid {server_uid}")]
    PeerUid {
        /// The socket's real owner.
        peer_uid: u32,
        /// The server's uid.
        server_uid: u32,
    },
    /// The native credential is missing, malformed or not the registered ids.
    #[error("credential refused: {0}")]
    Credential(String),
    /// The claimed nspace/rank is not a registered local rank.
    #[error("unknown process {nspace}:{rank}")]
    UnknownProc {
        /// The claimed nspace.
        nspace: String,
        /// The claimed rank.
        rank: u32,
    },
    /// The rank is connected already.
    #[error("process {nspace}:{rank} is connected already")]
    AlreadyConnected {
        /// The nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// The peer speaks something this server does not (bfrops module, version,
    /// psec module, peer kind).
    #[error("unsupported peer: {0}")]
    Unsupported(String),
    /// The server serves [`CoreConfig::max_conns`] connections already.
    #[error("too many connections ({0})")]
    TooManyConns(usize),
    /// The connection id is in use.
    #[error("connection {0} is open already")]
    DuplicateConn(ConnId),
}

/// What the I/O layer must do, drained with [`Core::poll_output`](super::Core::poll_output).
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Send these bytes (one whole frame, header included) on `conn`.
    Send {
        /// The connection.
        conn: ConnId,
        /// The frame's bytes.
        bytes: Vec<u8>,
    },
    /// Close `conn` (after sending what was queued before this output). The core
    /// has forgotten it; [`Core::closed`](super::Core::closed) for it afterwards is harmless.
    Close {
        /// The connection.
        conn: ConnId,
    },
    /// Something the server asks of its host: one upcall (`pmix::server::Host`'s
    /// method of the same name), whose answer, when it has one, comes back as
    /// [`Core::host_answer`](super::Core::host_answer) with its id.
    Host(Upcall),
    /// Write these bytes into `nspace`'s ds21 files ([`CoreConfig::ds21`]), holding
    /// every reader's lock, before the outputs after it.
    Ds21 {
        /// The namespace.
        nspace: String,
        /// What to write where.
        patches: Vec<pmix_wire::ds21::Patch>,
    },
    /// The answer to the host's own request `id`
    /// ([`Core::dmodex_request`](super::Core::dmodex_request)): a status and, on
    /// success, the process's data.
    DmodexAnswer {
        /// The host's request id.
        id: u64,
        /// `PMIX_SUCCESS`, `PMIX_ERR_NOT_FOUND` (no such local process, or it is
        /// gone), `PMIX_ERR_TIMEOUT` (it committed nothing in time).
        status: Status,
        /// The data (empty unless `status` is success).
        data: Vec<u8>,
    },
}

/// The output channel of a [`Upcall::Log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogStream {
    /// `PMIX_LOG_STDERR`.
    Stderr,
    /// `PMIX_LOG_STDOUT`.
    Stdout,
}

/// What the server asks of whoever hosts it (a launcher, or a resource manager
/// through the C server API), one variant per upcall ([`Output::Host`]). A request
/// with an `id` is answered with [`Core::host_answer`](super::Core::host_answer)
/// `id`; an answer to an id nobody waits for any more is ignored. Every `data` is a
/// `pmix_wire::modex` blob (docs/wire.md §11); a process is `(nspace, rank)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Upcall {
    /// A rank completed its handshake on `conn`.
    Connected {
        /// The connection.
        conn: ConnId,
        /// The rank's nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// A rank called `PMIx_Finalize`. With [`Provides::NODES`] its FINALIZE is
    /// answered once the host answers [`HostAnswer::ClientFinalized`] `id` (whatever
    /// it says); otherwise it was answered already and `id` is `None`.
    Finalized {
        /// The request, for the answer (`None`: no answer is awaited).
        id: Option<u64>,
        /// The nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// A rank called `PMIx_Abort`: the job should end with `status`.
    Aborted {
        /// The nspace.
        nspace: String,
        /// The rank that aborted.
        rank: u32,
        /// The status it gave.
        status: i32,
        /// Its message, if any.
        message: Option<String>,
    },
    /// A rank's connection closed without FINALIZE (or the launcher reported its
    /// exit with [`Core::proc_exited`](super::Core::proc_exited) before it finalized).
    Lost {
        /// The nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// A rank called `PMIx_Log` with `text` for `stream`: the host (with
    /// [`Provides::LOG`]) or the server's own process writes it.
    Log {
        /// The rank's nspace.
        nspace: String,
        /// The rank.
        rank: u32,
        /// Where it goes.
        stream: LogStream,
        /// The message, as the rank gave it.
        text: String,
    },
    /// A client called `PMIx_Spawn` ([`Provides::SPAWN`]): the host starts `apps` in
    /// a new namespace, registers it ([`Core::add_namespace`](super::Core::add_namespace))
    /// and answers [`HostAnswer::Spawn`] `id`.
    Spawn {
        /// The request, for the answer.
        id: u64,
        /// Who asked (the new job's `PMIX_PARENT_ID`).
        parent: (String, u32),
        /// The job-level directives, as the client sent them.
        info: Vec<pmix_wire::Info>,
        /// The applications, as the client sent them (each with a program and
        /// `maxprocs ≥ 1`).
        apps: Vec<pmix_wire::App>,
    },
    /// A fence whose participants span nodes ([`Provides::NODES`]): this node's
    /// participants have all joined (or are gone). The host gathers every node's
    /// `data` and answers [`HostAnswer::Fence`] `id` with their concatenation, in any
    /// order.
    Fence {
        /// The fence, for the answer.
        id: u64,
        /// The participants: `(nspace, rank)`, a whole namespace as `(nspace,
        /// 0xfffffffe)` (`PMIX_RANK_WILDCARD`).
        procs: Vec<(String, u32)>,
        /// Whether the participants asked for their data to be collected
        /// (`pmix.collect`).
        collect: bool,
        /// This node's contribution (empty when it has none).
        data: Vec<u8>,
    },
    /// A local client asks for data of `proc`, which is on another node: the host
    /// asks that node's server ([`Core::dmodex_request`](super::Core::dmodex_request)
    /// there) and answers [`HostAnswer::DirectModex`] `id`.
    DirectModex {
        /// The request, for the answer.
        id: u64,
        /// The process whose data is wanted.
        proc: (String, u32),
    },
    /// A client notified an event whose range reaches beyond this node (NAMESPACE,
    /// SESSION, GLOBAL, RM, CUSTOM): the host carries it to the other nodes, whose
    /// servers raise it among their clients (the host's `PMIx_Notify_event`). Raised
    /// here already.
    Notify {
        /// The event code.
        code: i32,
        /// Who raised it.
        source: (String, u32),
        /// Its range (`pmix_data_range_t`).
        range: u8,
        /// Its infos, as the client gave them.
        info: Vec<pmix_wire::Info>,
    },
    /// A client publishes `info` (its data and directives, as it sent them;
    /// [`Provides::PUBSUB`]): the host answers [`HostAnswer::Publish`] `id`.
    Publish {
        /// The request, for the answer.
        id: u64,
        /// The publisher.
        proc: (String, u32),
        /// What it sent.
        info: Vec<pmix_wire::Info>,
    },
    /// A client looks up `keys` ([`Provides::PUBSUB`]): the host answers
    /// [`HostAnswer::Lookup`] `id`.
    Lookup {
        /// The request, for the answer.
        id: u64,
        /// The requester.
        proc: (String, u32),
        /// The keys.
        keys: Vec<String>,
        /// Its directives (`pmix.wait`, `pmix.timeout`, `pmix.range`, …).
        info: Vec<pmix_wire::Info>,
    },
    /// A client unpublishes `keys` (none: all it published; [`Provides::PUBSUB`]):
    /// the host answers [`HostAnswer::Unpublish`] `id`.
    Unpublish {
        /// The request, for the answer.
        id: u64,
        /// The requester.
        proc: (String, u32),
        /// The keys.
        keys: Vec<String>,
        /// Its directives.
        info: Vec<pmix_wire::Info>,
    },
}

/// The host's answer to an [`Upcall`] with an id, handed to
/// [`Core::host_answer`](super::Core::host_answer). An error is the status the
/// waiting clients get.
#[derive(Clone, Debug, PartialEq)]
pub enum HostAnswer {
    /// To [`Upcall::Finalized`]: the client's FINALIZE is answered now.
    ClientFinalized,
    /// To [`Upcall::Fence`]: the concatenation of every node's blob (ours
    /// included), in any order.
    Fence(Result<Vec<u8>, Status>),
    /// To [`Upcall::DirectModex`]: the remote process's blob.
    DirectModex(Result<Vec<u8>, Status>),
    /// To [`Upcall::Publish`].
    Publish(Result<(), Status>),
    /// To [`Upcall::Lookup`]: what the host found (one PDATA per key it has).
    Lookup(Result<Vec<pmix_wire::Pdata>, Status>),
    /// To [`Upcall::Unpublish`].
    Unpublish(Result<(), Status>),
    /// To [`Upcall::Spawn`]: the new namespace, registered by then (the parent gets
    /// it and that job's information), or the status the parent gets
    /// (`PMIX_SUCCESS` there counts as `PMIX_ERROR`).
    Spawn(Result<String, Status>),
}
