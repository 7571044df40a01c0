//! The server's I/O layer: the embeddable [`Server`] a launcher starts, and the one
//! progress thread that drives the [`Core`](super::core::Core) (docs/design.md §8,
//! docs/conventions.md rule 17).
//!
//! [`Server::start`] binds a TCP listener on 127.0.0.1, port 0 (`tcp4`, as OpenPMIx
//! 4.x), creates the server's temporary directory with mode 0700, and starts **one**
//! progress thread running a `mio` poll loop that owns the listener, every socket and
//! every timer:
//! - **accept**: the socket's real owner is looked up in the kernel's socket table
//!   ([`net::peer_uid`]) before a byte is read; a socket owned by
//!   another uid than the server's is closed at once, without a reply (docs/design.md §8);
//! - **handshake**: the connect message is decoded with
//!   [`pmix_wire::ConnectMsg::decode`] as its bytes arrive (bounded by
//!   [`Limits::max_handshake`](pmix_wire::Limits::max_handshake), and by
//!   [`ServerConfig::handshake_timeout`]), then handed to
//!   [`Core::connect`](super::core::Core::connect) with the socket's real owner; its
//!   reply is sent, a refusal closes the socket without one (as OpenPMIx does);
//! - **frames**: [`pmix_wire::FrameDecoder`] cuts the stream into whole frames (each
//!   length checked against [`Limits::max_frame`](pmix_wire::Limits::max_frame) before
//!   its payload is awaited), each goes to [`Core::frame`](super::core::Core::frame);
//!   end of stream or an error goes to [`Core::closed`](super::core::Core::closed);
//! - after every core call its outputs are drained: bytes are queued on their
//!   connection and written as the socket takes them (partial writes kept, at most
//!   [`ServerConfig::max_pending_output`] queued; past
//!   [`ServerConfig::read_pause_output`] that connection's requests are not read
//!   until its queue drains), a close closes that connection only
//!   (after what was queued before it is written, or [`LINGER`] passed), an upcall
//!   goes to the [`Host`] at once, on this thread (it must not block; its answer, from
//!   any thread, comes back as a command), and the answer to the host's own request
//!   goes to the completion it gave ([`Server::dmodex_request`]);
//! - [`Core::next_deadline`](super::core::Core::next_deadline) sets the poll timeout,
//!   and [`Core::tick`](super::core::Core::tick) runs when it is due;
//! - a [`mio::Waker`] brings the launcher's commands: a namespace to add, a rank that
//!   exited, the host's answers and requests, shutdown.
//!
//! Bytes that do not decode close that connection only: the other clients never
//! notice. A panic in the core while it handles one connection's input is caught,
//! that connection is closed, and the others are served on. Each refused or
//! malformed connection is logged on stderr (a request the core refuses to decode
//! included), at most a few lines per interval, the rest counted in a summary line
//! (`ratelimit`), so a flood of bad connections cannot flood the launcher's log.
//!
//! **Rendezvous files** (docs/wire.md §2.4) are written only when asked
//! ([`ServerConfig::rendezvous`]: pmix-run does), so that tools find the server by its
//! pid or namespace; otherwise a tool must be told the URI.
//!
//! **What is not here.** The system-level file (`pmix.sys.<host>`) is not written; the
//! listener is IPv4 only (as
//! OpenPMIx 4.2's default); the real owner of a socket is found for IPv4 loopback
//! peers (`sock_diag`, else `/proc/net/tcp` and `tcp6`), so a peer on another host
//! is refused. What the server answers is the core's business (its module docs say
//! what is served).

mod conn;
mod progress;
mod ratelimit;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use pmix_wire::Limits;

use super::core::{HostAnswer, NamespaceSpec, ServerError};
use super::host::{AnswerSink, Host, NoHost};
use super::net;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The version this server announces to its clients (`PMIX_VERSION`): the OpenPMIx
/// release whose wire it speaks.
pub const SERVER_VERSION: &str = "4.2.2";

/// How long [`Server::shutdown`] (and drop) waits for the progress thread to end.
pub const SHUTDOWN_LIMIT: Duration = Duration::from_secs(10);

/// How long a connection the core closed may take to accept what was queued for it
/// before it is dropped unsent.
pub const LINGER: Duration = Duration::from_secs(5);

/// How long [`Server::add_namespace`] waits for the progress thread's answer.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// What a [`Server`] is started with. [`ServerConfig::default`] suits a launcher on
/// one node.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The server's own nspace (the first part of its URI); default
    /// `pmix-rs.server.<pid>`.
    pub nspace: Option<String>,
    /// The server's own rank; default 0.
    pub rank: u32,
    /// This node's host name (`PMIX_HOSTNAME`, `pmix.hname`); default the
    /// `gethostname` name without its domain.
    pub hostname: Option<String>,
    /// The directory the server's own temporary directory is created in (and the
    /// clients' `PMIX_SYSTEM_TMPDIR`); default [`std::env::temp_dir`].
    pub tmpdir_base: Option<PathBuf>,
    /// The bounds every decode of a peer's bytes is held to (default
    /// [`Limits::SERVER`]).
    pub limits: Limits,
    /// How long a GETNB of a key not committed yet is held without `pmix.timeout`.
    pub get_timeout: Duration,
    /// How long a connection may take to send its whole connect message.
    pub handshake_timeout: Duration,
    /// The most connections open at once; one more is closed as soon as it is
    /// accepted.
    pub max_connections: usize,
    /// The most TCP connections whose connect message has not come whole yet
    /// (half-open; default 1024). The server admits only its own uid, so this is
    /// also the bound per uid. One more drops the oldest half-open connection, and
    /// when [`ServerConfig::max_connections`] are open a new connection drops the
    /// oldest half-open one (it is refused only when none is half-open): a peer that
    /// opens connections and never finishes them cannot keep a rank out, whose
    /// connect message comes at once. A launcher's socket pairs are never dropped.
    /// 0 counts as 1.
    pub max_half_open: usize,
    /// The most bytes of messages not yet whole that all connections together may
    /// make the server hold (default 256 MiB; one message is held to
    /// [`Limits::max_frame`], refused at its header). Past it the connection whose
    /// unfinished message is the oldest is closed, until the total is back under:
    /// peers that start large messages and never finish them cannot make the
    /// server hold more, and an honest message, which comes whole at once, is not
    /// the oldest.
    pub max_unfinished_bytes: usize,
    /// The most bytes queued for one connection that does not read them; past it the
    /// connection is closed (and its rank lost).
    pub max_pending_output: usize,
    /// Back-pressure: while more bytes than this are queued for one connection, its
    /// requests are not read (what it sends waits in the kernel's buffers, which then
    /// hold its sender back), until the queue drains to this size. A peer that sends
    /// requests and never reads their replies so costs the server about this much
    /// plus one reply, and is not closed; output that comes without a request
    /// (events, held replies) still counts against [`ServerConfig::max_pending_output`].
    pub read_pause_output: usize,
    /// The most events kept for clients that register later (OpenPMIx caches
    /// events and replays them to late registrants); the oldest is dropped first.
    pub max_cached_events: usize,
    /// The most bytes of events kept for late registrants (default 16 MiB): the
    /// oldest are dropped first, an event larger than this is delivered but not
    /// kept, and a notifier's events go when its connection does
    /// ([`CoreConfig::max_cached_event_bytes`](super::core::CoreConfig::max_cached_event_bytes)).
    pub max_cached_event_bytes: usize,
    /// The most bytes of the infos of one event a client notifies (default 1 MiB;
    /// [`CoreConfig::max_event_bytes`](super::core::CoreConfig::max_event_bytes)).
    pub max_event_bytes: usize,
    /// The most requests one connection may have waiting at once (held gets and
    /// lookups, fence contributions; default 4096); one more is answered
    /// `PMIX_ERR_OUT_OF_RESOURCE`.
    pub max_pending: usize,
    /// The most event registrations one connection may hold (default 1024).
    pub max_registrations: usize,
    /// The most keys one process may have committed (default 65,536).
    pub max_keys_per_proc: usize,
    /// The most keys published at once, server-wide (default 65,536).
    pub max_published: usize,
    /// The most keys one publisher may hold published (default 4096).
    pub max_published_per_proc: usize,
    /// The most bytes one publisher may hold published (default 16 MiB).
    pub max_published_bytes_per_proc: usize,
    /// The most bytes published at once, server-wide (default 256 MiB).
    pub max_published_bytes: usize,
    /// The most bytes one process may have committed (default 256 MiB).
    pub max_committed_bytes_per_proc: usize,
    /// The topology service COMPUTE_DEVICE_DISTANCES is answered from; `None`:
    /// that command gets `PMIX_ERR_NOT_SUPPORTED`.
    pub service: Option<Arc<crate::Service>>,
    /// Whether a rank the host placed on no cpuset is looked for when it connects
    /// (among this process's descendants), so that a bound one gets its
    /// `PMIX_DEVICE_DISTANCES` (docs/serving.md §1(b)). Default false; true for a
    /// hosted server ([`ServerConfig::from_init_infos`]).
    pub locate_unplaced: bool,
    /// libhwloc's own v2 XML export of this node, served as `pmix.hwlocxml2` (what
    /// direct-launched Open MPI asks for); `None`: that key is NOT_FOUND and the
    /// client discovers its own topology. Only a libhwloc export belongs here.
    pub hwloc_xml: Option<Arc<str>>,
    /// Whether refused and malformed connections are logged on stderr
    /// (`pmix-server: …`): one line each, at most 10 per 10 s, the others counted in
    /// one summary line per 10 s (`… N more refused or closed connections in the
    /// last Ns`, printed when the 10 s have passed or at shutdown).
    pub log: bool,
    /// Tools find this server by its process id or namespace: it writes the
    /// rendezvous files OpenPMIx's servers write (docs/wire.md §2.4),
    /// `pmix.<host>.tool.<pid>` and `pmix.<host>.tool.<nspace>` in the system
    /// temporary directory (the base of [`ServerConfig::tmpdir_base`]), mode 0640,
    /// each holding the URI, the version, the pid and `uid:gid`, one per line;
    /// [`Server::shutdown`] removes them, and a server starting removes those a
    /// killed server of ours left (their pid gone).
    pub rendezvous: bool,
    /// Whether each namespace's job information is written once as a node-store
    /// segment (docs/serving.md §5) in the server's temporary directory, owned by
    /// the namespace's user and readable by it alone, removed with the namespace:
    /// our clients map it instead of receiving the job information (and each
    /// fence's data from a segment of its own), and [`Server::client_env`] offers
    /// `pxns` in `PMIX_GDS_MODULE` (OpenPMIx clients have no module of that name).
    /// Default true.
    pub node_store: bool,
    /// Whether each namespace also gets OpenPMIx's ds21 store, which unmodified
    /// libpmix2 clients map (docs/serving.md §5.7): its files in the server's
    /// temporary directory ([`ds21_dir`]), [`Server::client_env`] offering `ds21`
    /// and naming them (`PMIX_DSTORE_21_BASE_PATH`). Default true.
    pub ds21: bool,
}

/// Where `nspace`'s ds21 files are, in the server's temporary directory `tmpdir`:
/// `ds21-<hash of the namespace>` (a namespace may hold any byte but NUL and `/`).
pub fn ds21_dir(tmpdir: &Path, nspace: &str) -> PathBuf {
    let h = nspace.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    tmpdir.join(format!("ds21-{h:016x}"))
}

/// The limits a launcher may set by name ([`ServerConfig::set_limit`]), each with
/// what it bounds.
pub const LIMITS: [(&str, &str); 20] = [
    ("max_connections", "connections open at once"),
    (
        "max_half_open",
        "connections whose connect message is not whole yet",
    ),
    (
        "max_unfinished_bytes",
        "bytes of messages not yet whole, all connections",
    ),
    ("max_frame", "bytes of one message (refused at its header)"),
    ("max_count", "elements of one list or array in a message"),
    ("max_procs", "processes one list of a request names"),
    (
        "max_list",
        "elements of any other list of a request (infos, keys, a commit's values)",
    ),
    (
        "max_pending_output",
        "bytes queued for one connection that does not read",
    ),
    (
        "read_pause_output",
        "bytes queued for one connection before its requests wait",
    ),
    ("max_cached_events", "events kept for late registrants"),
    (
        "max_cached_event_bytes",
        "bytes of events kept for late registrants",
    ),
    (
        "max_event_bytes",
        "bytes of the infos of one event a client notifies",
    ),
    ("max_pending", "requests one connection has waiting"),
    ("max_registrations", "event registrations of one connection"),
    ("max_keys_per_proc", "keys one process has committed"),
    ("max_published", "keys published, server-wide"),
    ("max_published_per_proc", "keys one publisher has published"),
    (
        "max_published_bytes",
        "bytes of published data, server-wide",
    ),
    (
        "max_published_bytes_per_proc",
        "bytes one publisher has published",
    ),
    (
        "max_committed_bytes_per_proc",
        "bytes one process has committed",
    ),
];

impl ServerConfig {
    /// The configuration the infos of a host's `PMIx_server_init` (or a Python
    /// `PMIxServer.init`) ask for: `PMIX_SERVER_TMPDIR` (else `PMIX_SYSTEM_TMPDIR`)
    /// for the server's directory, `PMIX_SERVER_NSPACE`, `PMIX_SERVER_RANK`,
    /// `PMIX_HOSTNAME`, and pmix-rs's `pmixrs.limit.NAME` = a number for each limit
    /// ([`ServerConfig::set_limit`]); refused connections are logged; the node's
    /// topology ([`crate::topology::source_name_from_env`], loaded when first needed)
    /// serves distances, and ranks placed on no cpuset are located when they connect
    /// ([`ServerConfig::locate_unplaced`]). Other keys are left to the caller.
    ///
    /// # Errors
    /// A message naming the info when a string key holds no string, the rank is not
    /// a rank, or a limit info names no limit or holds no number.
    pub fn from_init_infos(infos: &[pmix_wire::Info]) -> Result<ServerConfig, String> {
        use pmix_wire::keys;
        let mut cfg = ServerConfig {
            log: true,
            ..ServerConfig::default()
        };
        let mut system = None;
        for i in infos {
            let key = i.key.as_str().unwrap_or_default();
            let text = || {
                i.value
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{key} holds no string"))
            };
            match key {
                keys::SERVER_TMPDIR => cfg.tmpdir_base = Some(text()?.into()),
                keys::SYSTEM_TMPDIR => system = Some(text()?),
                keys::SERVER_NSPACE => cfg.nspace = Some(text()?),
                keys::SERVER_RANK => {
                    cfg.rank = i
                        .value
                        .as_u64()
                        .and_then(|r| u32::try_from(r).ok())
                        .ok_or_else(|| format!("{key} holds no rank"))?;
                }
                keys::HOSTNAME => cfg.hostname = Some(text()?),
                _ => {
                    if let Some(name) = key.strip_prefix(keys::RS_LIMIT_PREFIX) {
                        let value = i
                            .value
                            .as_u64()
                            .ok_or_else(|| format!("{key} holds no number"))?;
                        cfg.set_limit(name, value)?;
                    }
                }
            }
        }
        if cfg.tmpdir_base.is_none() {
            cfg.tmpdir_base = system.map(Into::into);
        }
        // The node's topology (loaded when first needed), for COMPUTE_DEVICE_DISTANCES
        // and each bound rank's PMIX_DEVICE_DISTANCES; the host registers no cpuset
        // under Slurm, so ranks are also looked for when they connect.
        cfg.service = crate::Service::new(
            crate::topology::source_name_from_env(),
            cfg.hostname.clone(),
        )
        .ok()
        .map(Arc::new);
        cfg.locate_unplaced = true;
        Ok(cfg)
    }

    /// Sets the limit `name` (one of [`LIMITS`]) to `value`.
    ///
    /// # Errors
    /// A message naming the limits when `name` is none of them, or when `value`
    /// does not fit the limit (`max_frame`, `max_count`, `max_procs`, `max_list` are
    /// 32-bit).
    pub fn set_limit(&mut self, name: &str, value: u64) -> Result<(), String> {
        let size = || usize::try_from(value).map_err(|_| format!("{name}: {value} is too large"));
        let u32v = || u32::try_from(value).map_err(|_| format!("{name}: {value} is over 2^32 - 1"));
        match name {
            "max_connections" => self.max_connections = size()?,
            "max_half_open" => self.max_half_open = size()?,
            "max_unfinished_bytes" => self.max_unfinished_bytes = size()?,
            "max_frame" => self.limits.max_frame = u32v()?,
            "max_count" => self.limits.max_count = u32v()?,
            "max_procs" => self.limits.max_procs = u32v()?,
            "max_list" => self.limits.max_list = u32v()?,
            "max_pending_output" => self.max_pending_output = size()?,
            "read_pause_output" => self.read_pause_output = size()?,
            "max_cached_events" => self.max_cached_events = size()?,
            "max_cached_event_bytes" => self.max_cached_event_bytes = size()?,
            "max_event_bytes" => self.max_event_bytes = size()?,
            "max_pending" => self.max_pending = size()?,
            "max_registrations" => self.max_registrations = size()?,
            "max_keys_per_proc" => self.max_keys_per_proc = size()?,
            "max_published" => self.max_published = size()?,
            "max_published_per_proc" => self.max_published_per_proc = size()?,
            "max_published_bytes" => self.max_published_bytes = size()?,
            "max_published_bytes_per_proc" => self.max_published_bytes_per_proc = size()?,
            "max_committed_bytes_per_proc" => self.max_committed_bytes_per_proc = size()?,
            _ => {
                let names: Vec<&str> = LIMITS.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "no limit {name:?}; the limits: {}",
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            nspace: None,
            rank: 0,
            hostname: None,
            tmpdir_base: None,
            limits: Limits::SERVER,
            get_timeout: Duration::from_secs(2),
            handshake_timeout: Duration::from_secs(30),
            max_connections: 4096,
            max_half_open: 1024,
            max_unfinished_bytes: 256 << 20,
            max_pending_output: 256 << 20,
            read_pause_output: 4 << 20,
            max_cached_events: 256,
            max_cached_event_bytes: 16 << 20,
            max_event_bytes: 1 << 20,
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
            log: true,
            rendezvous: false,
            node_store: true,
            ds21: true,
        }
    }
}

/// Why a call to a running [`Server`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The core refused the call.
    #[error(transparent)]
    Core(#[from] ServerError),
    /// The progress thread has stopped ([`Server::shutdown`], or it failed), or did
    /// not answer in time.
    #[error("the PMIx server's progress thread is not running")]
    Stopped,
}

/// Counts of what the progress thread did, for tests and diagnostics
/// ([`Server::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused because their socket is owned by another uid (before
    /// reading any byte).
    pub refused_peer_uid: u64,
    /// Connections refused by the core at the handshake.
    pub refused_handshake: u64,
    /// Connections closed because their bytes did not decode, a size exceeded the
    /// limits, or the handshake took too long.
    pub malformed: u64,
    /// Handshakes completed.
    pub connected: u64,
    /// Connections open now.
    pub open: u64,
    /// Times a connection's requests stopped being read because too much was
    /// queued for it ([`ServerConfig::read_pause_output`]).
    pub read_pauses: u64,
    /// Half-open connections dropped to admit a newer one
    /// ([`ServerConfig::max_half_open`]).
    pub dropped_half_open: u64,
    /// Connections closed because the unfinished messages of all passed
    /// [`ServerConfig::max_unfinished_bytes`] and theirs was the oldest.
    pub dropped_unfinished: u64,
    /// Bytes of messages not yet whole that the server holds now.
    pub unfinished_bytes: u64,
    /// GETNB requests received (gets a client could not answer from what it holds
    /// or maps).
    pub gets: u64,
}

/// Counters shared with the progress thread.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) accepted: AtomicU64,
    pub(crate) refused_peer_uid: AtomicU64,
    pub(crate) refused_handshake: AtomicU64,
    pub(crate) malformed: AtomicU64,
    pub(crate) connected: AtomicU64,
    pub(crate) open: AtomicUsize,
    pub(crate) read_pauses: AtomicU64,
    pub(crate) dropped_half_open: AtomicU64,
    pub(crate) dropped_unfinished: AtomicU64,
    pub(crate) unfinished_bytes: AtomicUsize,
    pub(crate) gets: AtomicU64,
}

pub use crate::os::{SERVER_FD_VAR, server_fd_value};

/// What [`Server::dmodex_request`] completes with.
pub(crate) type DmodexDone = Box<dyn FnOnce(Result<Vec<u8>, pmix_core::Status>) + Send>;

/// A command from the API (or a host's reply) to the progress thread.
pub(crate) enum Command {
    Adopt(std::os::unix::net::UnixStream),
    AddNamespace(NamespaceSpec, mpsc::Sender<Result<(), ServerError>>),
    RemoveNamespace(String, mpsc::Sender<Result<(), ServerError>>),
    ProcExited {
        nspace: String,
        rank: u32,
        status: i32,
    },
    RaiseEvent {
        code: i32,
        source: Option<(String, u32)>,
        info: Vec<pmix_wire::Info>,
        range: pmix_wire::DataRange,
    },
    /// The host's answer to upcall `id`.
    Answer(u64, HostAnswer),
    /// The host asks for local process `nspace`:`rank`'s data.
    Dmodex {
        nspace: String,
        rank: u32,
        done: DmodexDone,
    },
    Shutdown,
}

/// Where commands go: the progress thread's channel, and its waker.
#[derive(Clone, Debug)]
pub(crate) struct Mailbox {
    commands: mpsc::Sender<Command>,
    waker: Arc<mio::Waker>,
}

impl Mailbox {
    /// Queues `cmd` and wakes the progress thread.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] when the progress thread is gone.
    fn send(&self, cmd: Command) -> Result<(), ApiError> {
        self.commands.send(cmd).map_err(|_| ApiError::Stopped)?;
        self.waker.wake().map_err(|_| ApiError::Stopped)
    }
}

/// The embeddable PMIx server: a listener on 127.0.0.1 and one progress thread
/// serving OpenPMIx 4.2 clients (module docs). The launcher registers each job with
/// [`Server::add_namespace`], starts its ranks with [`Server::client_env`] in their
/// environment, reports their exits with [`Server::proc_exited`], and learns of
/// connections, finalizes, aborts and lost ranks as upcalls into its [`Host`]
/// ([`Server::start_with_host`]). Dropping it shuts it down ([`Server::shutdown`]).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use pmix::server::{Host, NamespaceSpec, ProcName, Server, ServerConfig, net};
///
/// /// A launcher's host: it only hears of its ranks.
/// #[derive(Default)]
/// struct Launcher(Mutex<Vec<ProcName>>);
///
/// impl Host for Launcher {
///     fn client_lost(&self, proc: ProcName) {
///         self.0.lock().unwrap().push(proc); // end the job, …
///     }
/// }
///
/// let host = Arc::new(Launcher::default());
/// let server = Server::start_with_host(ServerConfig::default(), host.clone())?;
/// let (uid, gid) = net::effective_ids();
/// server.add_namespace(NamespaceSpec::single_node("job.1", 2, uid, gid))?;
/// for rank in 0..2 {
///     let env = server.client_env("job.1", rank);
///     assert!(env.iter().any(|(k, v)| k == "PMIX_SERVER_URI41" && v == server.uri()));
///     // std::process::Command::new(prog).envs(env).spawn()? …
/// }
/// // Upcalls come on the server's thread as ranks connect, finalize, abort, die.
/// assert!(host.0.lock().unwrap().is_empty());
/// server.shutdown()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Server {
    uri: String,
    addr: SocketAddr,
    hostname: String,
    tmpdir: PathBuf,
    system_tmpdir: PathBuf,
    mailbox: Mailbox,
    /// The progress thread, and what disconnects when it ends.
    thread: Mutex<Option<(JoinHandle<()>, mpsc::Receiver<()>)>>,
    counters: Arc<Counters>,
    /// The rendezvous files written ([`ServerConfig::rendezvous`]).
    rendezvous: Vec<PathBuf>,
    /// The name a host gave this node in each namespace it placed
    /// ([`NamespaceSpec::placement`]): its clients' `PMIX_HOSTNAME`.
    node_names: Mutex<HashMap<String, String>>,
    /// [`ServerConfig::node_store`].
    node_store: bool,
    /// [`ServerConfig::ds21`].
    ds21: bool,
}

impl Server {
    /// Starts a server with no host ([`NoHost`]: one node, every upcall answered as
    /// a NULL entry of the C module is; [`Server::start_with_host`]).
    ///
    /// # Errors
    /// As [`Server::start_with_host`].
    pub fn start(cfg: ServerConfig) -> std::io::Result<Server> {
        Server::start_with_host(cfg, Arc::new(NoHost))
    }

    /// Starts a server hosted by `host`: binds 127.0.0.1 port 0, creates its
    /// temporary directory (mode 0700) under [`ServerConfig::tmpdir_base`], asks
    /// `host` what it provides ([`Host::provides`]), and starts the progress thread,
    /// which makes every upcall into `host` (module docs of [`super::host`]).
    ///
    /// # Errors
    /// The OS error of binding the listener, creating the poll instance or the
    /// directory, or starting the thread.
    pub fn start_with_host(cfg: ServerConfig, host: Arc<dyn Host>) -> std::io::Result<Server> {
        let pid = std::process::id();
        let nspace = cfg
            .nspace
            .clone()
            .unwrap_or_else(|| format!("pmix-rs.server.{pid}"));
        let hostname = cfg.hostname.clone().unwrap_or_else(net::short_hostname);
        let system_tmpdir = cfg.tmpdir_base.clone().unwrap_or_else(std::env::temp_dir);
        let tmpdir = make_private_dir(&system_tmpdir, &hostname, pid)?;
        let provides = host.provides();
        let started = progress::Loop::bind(&cfg, &nspace, &hostname, provides);
        let (mut lp, waker, addr) = match started {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_dir(&tmpdir);
                return Err(e);
            }
        };
        if cfg.node_store || cfg.ds21 {
            lp.store_dir = Some(tmpdir.clone());
        }
        let (commands, command_rx) = mpsc::channel();
        let mailbox = Mailbox {
            commands,
            waker: Arc::new(waker),
        };
        // The host's answers, from whichever thread gives them, are commands.
        let answers: AnswerSink = {
            let mailbox = mailbox.clone();
            Arc::new(move |id, answer| {
                let _ = mailbox.send(Command::Answer(id, answer));
            })
        };
        let counters = Arc::new(Counters::default());
        // Dropped when the thread ends, however it ends: `shutdown` waits on it.
        let (ended_tx, ended) = mpsc::channel::<()>();
        let thread = {
            let counters = Arc::clone(&counters);
            std::thread::Builder::new()
                .name("pmix-server".into())
                .spawn(move || {
                    let _ended = ended_tx;
                    lp.run(command_rx, host, answers, &counters)
                })
        };
        let thread = match thread {
            Ok(t) => t,
            Err(e) => {
                let _ = std::fs::remove_dir(&tmpdir);
                return Err(e);
            }
        };
        let uri = format!("{nspace}.{};tcp4://{addr}", cfg.rank);
        let rendezvous = if cfg.rendezvous {
            write_rendezvous(&system_tmpdir, &hostname, &nspace, pid, &uri)
        } else {
            Vec::new()
        };
        Ok(Server {
            uri,
            addr,
            hostname,
            tmpdir,
            system_tmpdir,
            mailbox,
            thread: Mutex::new(Some((thread, ended))),
            counters,
            rendezvous,
            node_names: Mutex::new(HashMap::new()),
            node_store: cfg.node_store,
            ds21: cfg.ds21,
        })
    }

    /// The server's URI as its clients get it (`<nspace>.<rank>;tcp4://127.0.0.1:<port>`,
    /// docs/wire.md §2.3).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The listener's address (127.0.0.1 and the port the OS chose).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The host name clients are given (`PMIX_HOSTNAME`).
    pub fn hostname(&self) -> &str {
        &self.hostname
    }

    /// The server's temporary directory (mode 0700, removed at shutdown):
    /// `PMIX_SERVER_TMPDIR`.
    pub fn tmpdir(&self) -> &Path {
        &self.tmpdir
    }

    /// Registers a namespace whose ranks may then connect; call it before spawning
    /// them. Waits for the progress thread's answer.
    ///
    /// # Errors
    /// [`ApiError::Core`] when the core refuses the specification (a duplicate name,
    /// an inconsistent spec); [`ApiError::Stopped`] when the progress thread is not
    /// running.
    pub fn add_namespace(&self, spec: NamespaceSpec) -> Result<(), ApiError> {
        let (tx, rx) = mpsc::channel();
        let name = spec.placement.as_ref().and_then(|p| {
            p.this_node
                .map(|i| (spec.nspace.clone(), p.nodes[i].name.clone()))
        });
        self.send(Command::AddNamespace(spec, tx))?;
        match rx.recv_timeout(CALL_LIMIT) {
            Ok(r) => r.map_err(ApiError::Core)?,
            Err(_) => return Err(ApiError::Stopped),
        }
        if let Some((nspace, node)) = name {
            lock(&self.node_names).insert(nspace, node);
        }
        Ok(())
    }

    /// Forgets a namespace whose job is over ([`Core::remove_namespace`]): its
    /// connected ranks are closed (no job event), what waited on them is settled,
    /// its data and cached events are dropped, and its name may be registered
    /// again. Waits for the progress thread's answer.
    ///
    /// # Errors
    /// [`ApiError::Core`] for a name not registered; [`ApiError::Stopped`] when the
    /// progress thread is not running.
    ///
    /// [`Core::remove_namespace`]: super::core::Core::remove_namespace
    pub fn remove_namespace(&self, nspace: &str) -> Result<(), ApiError> {
        lock(&self.node_names).remove(nspace);
        let (tx, rx) = mpsc::channel();
        self.send(Command::RemoveNamespace(nspace.into(), tx))?;
        match rx.recv_timeout(CALL_LIMIT) {
            Ok(r) => r.map_err(ApiError::Core),
            Err(_) => Err(ApiError::Stopped),
        }
    }

    /// Raises event `code` from the server itself, or from `source` (nspace, rank),
    /// to every connected client whose registrations match and that is in `range`,
    /// cached for late registrants unless `info` holds `pmix.evnocache`
    /// ([`Core::raise_event`]): the launcher's own notifications.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] when the progress thread is not running.
    ///
    /// [`Core::raise_event`]: super::core::Core::raise_event
    pub fn raise_event(
        &self,
        code: i32,
        source: Option<(&str, u32)>,
        info: Vec<pmix_wire::Info>,
        range: pmix_wire::DataRange,
    ) -> Result<(), ApiError> {
        self.send(Command::RaiseEvent {
            code,
            source: source.map(|(ns, r)| (ns.to_owned(), r)),
            info,
            range,
        })
    }

    /// The environment a client rank `nspace`:`rank` must be started with
    /// (docs/serving.md §1, docs/wire.md §2.1): `PMIX_NAMESPACE`, `PMIX_RANK`, the server URI
    /// under every name a 4.x/3.x/2.x client looks for (`PMIX_SERVER_URI41`, `…4`,
    /// `…3`, `…21`, `…2`), `PMIX_SECURITY_MODE=native`, `PMIX_GDS_MODULE` (`pxns` with
    /// [`ServerConfig::node_store`], `ds21` with [`ServerConfig::ds21`], then `hash`),
    /// `PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_NON_DESC`, `PMIX_VERSION`,
    /// `PMIX_HOSTNAME`, `PMIX_SERVER_TMPDIR` and `PMIX_SYSTEM_TMPDIR`.
    ///
    /// With [`ServerConfig::ds21`], `PMIX_DSTORE_21_BASE_PATH` names the namespace's
    /// ds21 files ([`ds21_dir`]); no other `PMIX_DSTORE_*` variable is set. The
    /// launcher must also remove any `PMIX_*` variable it inherited (a
    /// `PMIX_DSTORE_*` or `PMIX_MCA_ptl=usock` of its own environment would break the
    /// client). It does not check that the rank is registered.
    pub fn client_env(&self, nspace: &str, rank: u32) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = vec![
            ("PMIX_NAMESPACE".into(), nspace.into()),
            ("PMIX_RANK".into(), rank.to_string()),
        ];
        for v in ["41", "4", "3", "21", "2"] {
            env.push((format!("PMIX_SERVER_URI{v}"), self.uri.clone()));
        }
        let path = |p: &Path| p.to_string_lossy().into_owned();
        env.extend([
            ("PMIX_SECURITY_MODE".into(), "native".into()),
            (
                "PMIX_BFROP_BUFFER_TYPE".into(),
                "PMIX_BFROP_BUFFER_NON_DESC".into(),
            ),
            ("PMIX_GDS_MODULE".into(), self.gds_modules()),
            ("PMIX_SERVER_TMPDIR".into(), path(&self.tmpdir)),
            ("PMIX_SYSTEM_TMPDIR".into(), path(&self.system_tmpdir)),
            ("PMIX_HOSTNAME".into(), self.node_name(nspace)),
            ("PMIX_VERSION".into(), SERVER_VERSION.into()),
        ]);
        if self.ds21 {
            env.push((
                "PMIX_DSTORE_21_BASE_PATH".into(),
                path(&ds21_dir(&self.tmpdir, nspace)),
            ));
        }
        env
    }

    /// `PMIX_GDS_MODULE`: `pxns` (our node store, our clients), `ds21` (OpenPMIx's,
    /// libpmix2's), then `hash`, as configured.
    fn gds_modules(&self) -> String {
        let mut list = Vec::new();
        if self.node_store {
            list.push(pmix_wire::nodestore::GDS_NAME);
        }
        if self.ds21 {
            list.push("ds21");
        }
        list.push("hash");
        list.join(",")
    }

    /// A connection for a rank this process is about to start, made before it exists:
    /// one end of a new Unix socket pair is served at once (as an accepted connection
    /// whose owner is this server's uid, without a handshake deadline), the other is
    /// returned for the rank to inherit, named to it by [`SERVER_FD_VAR`]
    /// ([`server_fd_value`]). Our client then speaks over it at once (no TCP connect,
    /// no accept, no lookup of the socket's owner); a client that does not know the
    /// variable (libpmix2) connects over TCP as always, and the unused pair closes
    /// when the rank exits. The end returned is close-on-exec: the launcher clears
    /// that in the child only.
    ///
    /// # Errors
    /// The OS error of creating the pair; [`std::io::ErrorKind::NotConnected`] when
    /// the progress thread has stopped.
    pub fn client_channel(&self) -> std::io::Result<std::os::unix::net::UnixStream> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        self.send(Command::Adopt(ours))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotConnected, e.to_string()))?;
        Ok(theirs)
    }

    /// The name of this node in `nspace`: the host's when it placed the namespace
    /// ([`NamespaceSpec::placement`]), else this server's host name.
    pub fn node_name(&self, nspace: &str) -> String {
        lock(&self.node_names)
            .get(nspace)
            .cloned()
            .unwrap_or_else(|| self.hostname.clone())
    }

    /// Another node asks, through the host, for local process `nspace`:`rank`'s data
    /// (`PMIx_server_dmodex_request`): `done` gets it, on the progress thread (it
    /// must not block), once the process committed (a blob the asking node's server
    /// reads, docs/wire.md §11), or `PMIX_ERR_NOT_FOUND` (not a local rank, or gone)
    /// or `PMIX_ERR_TIMEOUT` (nothing committed within [`ServerConfig::get_timeout`])
    /// ([`Core::dmodex_request`](super::core::Core::dmodex_request)). `done` is not
    /// called when the server stops first.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] when the progress thread is gone (`done` is then never
    /// called).
    pub fn dmodex_request(
        &self,
        nspace: &str,
        rank: u32,
        done: impl FnOnce(Result<Vec<u8>, pmix_core::Status>) + Send + 'static,
    ) -> Result<(), ApiError> {
        self.send(Command::Dmodex {
            nspace: nspace.into(),
            rank,
            done: Box::new(done),
        })
    }

    /// The launcher saw rank `nspace`:`rank` exit with `status` (its wait status as an
    /// exit code, or minus the signal). A rank that had not finalized is lost.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] when the progress thread is not running.
    pub fn proc_exited(&self, nspace: &str, rank: u32, status: i32) -> Result<(), ApiError> {
        self.send(Command::ProcExited {
            nspace: nspace.into(),
            rank,
            status,
        })
    }

    /// What the progress thread did so far.
    pub fn stats(&self) -> ServerStats {
        let c = &self.counters;
        ServerStats {
            accepted: c.accepted.load(Ordering::Relaxed),
            refused_peer_uid: c.refused_peer_uid.load(Ordering::Relaxed),
            refused_handshake: c.refused_handshake.load(Ordering::Relaxed),
            malformed: c.malformed.load(Ordering::Relaxed),
            connected: c.connected.load(Ordering::Relaxed),
            open: c.open.load(Ordering::Relaxed) as u64,
            read_pauses: c.read_pauses.load(Ordering::Relaxed),
            dropped_half_open: c.dropped_half_open.load(Ordering::Relaxed),
            dropped_unfinished: c.dropped_unfinished.load(Ordering::Relaxed),
            unfinished_bytes: c.unfinished_bytes.load(Ordering::Relaxed) as u64,
            gets: c.gets.load(Ordering::Relaxed),
        }
    }

    /// Whether the progress thread is running.
    pub fn is_running(&self) -> bool {
        let t = self.thread.lock().unwrap_or_else(|p| p.into_inner());
        t.as_ref().is_some_and(|(t, _)| !t.is_finished())
    }

    /// Stops the server: every connection and the listener are closed (what was
    /// queued is written if the socket takes it at once), the progress thread ends and
    /// is joined, waiting at most [`SHUTDOWN_LIMIT`], and the temporary directory is
    /// removed. Calling it again does nothing.
    ///
    /// # Errors
    /// [`std::io::ErrorKind::TimedOut`] when the thread did not end in time (it is
    /// left running, detached); [`std::io::ErrorKind::Other`] when it had panicked.
    pub fn shutdown(&self) -> std::io::Result<()> {
        let Some((thread, ended)) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take()
        else {
            return Ok(());
        };
        let _ = self.send(Command::Shutdown);
        // Nothing is ever sent: this returns when the thread has ended (its sender is
        // dropped on the way out, so joining does not wait), or at the limit.
        let ended = ended.recv_timeout(SHUTDOWN_LIMIT);
        let _ = std::fs::remove_dir_all(&self.tmpdir);
        for f in &self.rendezvous {
            let _ = std::fs::remove_file(f);
        }
        if matches!(ended, Err(mpsc::RecvTimeoutError::Timeout)) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the PMIx server's progress thread did not stop within {SHUTDOWN_LIMIT:?}"),
            ));
        }
        thread
            .join()
            .map_err(|_| std::io::Error::other("the PMIx server's progress thread panicked"))
    }

    fn send(&self, cmd: Command) -> Result<(), ApiError> {
        self.mailbox.send(cmd)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Writes the rendezvous files of [`ServerConfig::rendezvous`] in `dir`; returns those
/// written (a file that cannot be written is left out: tools then need the URI).
fn write_rendezvous(dir: &Path, host: &str, nspace: &str, pid: u32, uri: &str) -> Vec<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let (uid, gid) = net::effective_ids();
    remove_stale_rendezvous(dir, host);
    let text = format!("{uri}\n{SERVER_VERSION}\n{pid}\n{uid}:{gid}\n");
    [pid.to_string(), nspace.to_owned()]
        .iter()
        .filter(|tail| !tail.contains('/'))
        .map(|tail| dir.join(format!("pmix.{host}.tool.{tail}")))
        .filter(|path| {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o640)
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .is_ok()
        })
        .collect()
}

/// Removes the rendezvous files a server of ours left in `dir` when it was killed:
/// `pmix.<host>.tool.<pid>` and `pmix.<host>.tool.pmix-rs.server.<pid>` whose process
/// is gone (no `/proc/<pid>`) and whose contents name that pid (an OpenPMIx
/// server's file, or another user's, is left alone: the pid line must match and
/// the removal must be allowed).
fn remove_stale_rendezvous(dir: &Path, host: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("pmix.{host}.tool.");
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(tail) = name.to_str().and_then(|n| n.strip_prefix(prefix.as_str())) else {
            continue;
        };
        let pid = tail.strip_prefix("pmix-rs.server.").unwrap_or(tail);
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let ours = std::fs::read_to_string(e.path())
            .is_ok_and(|t| t.lines().nth(2).is_some_and(|l| l.trim() == pid));
        if ours {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Creates `<base>/pmix-rs.<host>.<pid>.<n>` with mode 0700 (a fresh name: an existing
/// directory is never reused). A missing `base` is created (mode 0700), again if it
/// vanishes meanwhile: hosts sharing a session directory remove it when they find it
/// empty (two Open MPI orteds on one host: one removes the job family directory the
/// other has just made).
fn make_private_dir(base: &Path, host: &str, pid: u32) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    static N: AtomicUsize = AtomicUsize::new(0);
    let mut recreated = 0;
    loop {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("pmix-rs.{host}.{pid}.{n}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                // The umask can only remove bits; set the mode all the same.
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1_000_000 => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && recreated < 10 => {
                recreated += 1;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(base)?;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_makes_its_directory_under_a_base_that_does_not_exist_yet() {
        // A session directory another host process removed (two orteds on one host).
        let root = std::env::temp_dir().join(format!("pmix-rs-io-base-{}", std::process::id()));
        let base = root.join("jf.1").join("gone");
        let dir = make_private_dir(&base, "h", 7).expect("the base is created");
        assert!(dir.starts_with(&base) && dir.is_dir(), "{dir:?}");
        let mode = std::fs::metadata(&base).map(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.permissions().mode() & 0o777
        });
        assert_eq!(mode.ok(), Some(0o700));
        std::fs::remove_dir_all(&root).expect("clean up");
    }
}
