//! The server's core: a sans-I/O state machine that decides every answer the
//! server gives (DESIGN §8, CONVENTIONS 17).
//!
//! No sockets, no threads, no clock reads: the I/O layer owns the listener, the
//! sockets and the timers, decodes each peer's connect message with
//! [`pmix_wire::ConnectMsg`] and its frames with [`pmix_wire::FrameDecoder`], and
//! hands them to a [`Core`] with the current time. After **every** call it drains
//! [`Core::poll_output`] and carries out each [`Output`]: send bytes on a
//! connection, close one, or tell the launcher about its job ([`JobEvent`]). It
//! calls [`Core::tick`] when [`Core::next_deadline`] is due.
//!
//! Every byte the core reads or writes goes through `pmix-wire`; a peer whose
//! bytes fail to decode is closed ([`Output::Close`]) and nobody else notices.
//!
//! **Status of this module.** This is the first, skeleton version of the API: the
//! handshake checks are done, and every request after it is answered with a lone
//! `PMIX_ERR_NOT_SUPPORTED` status (DEREGEVENTS, which is one-way, gets nothing).
//! The commands are filled in by later commits; this paragraph says which are
//! missing.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use pmix_wire::{ConnectMsg, Frame, Limits};

/// A connection's identity, assigned by the I/O layer (unique while it is open).
pub type ConnId = u64;

/// What a [`Core`] is configured with: who the server is and its limits.
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
    /// The bounds every decode of a peer's bytes is held to.
    pub limits: Limits,
    /// How long a GETNB of a key not committed yet is held when the request gives
    /// no `pmix.timeout` (2 s, as OpenPMIx's direct modex).
    pub get_timeout: Duration,
}

impl CoreConfig {
    /// A configuration for the server `nspace`/`rank` on `hostname`, running as
    /// `uid`/`gid`, with [`Limits::DEFAULT`] and a 2 s get timeout.
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
            limits: Limits::DEFAULT,
            get_timeout: Duration::from_secs(2),
        }
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
    /// The uid its clients must claim (and the server's, DESIGN §8).
    pub uid: u32,
    /// The gid its clients must claim.
    pub gid: u32,
    /// The job's size (`pmix.job.size`): every rank, on this node or not.
    pub job_size: u32,
    /// The ranks on this node, in rank order (all of them on one node).
    pub ranks: Vec<RankSpec>,
    /// Job-level values added to the blob as they are (after the standard ones).
    pub job_info: Vec<pmix_wire::Kval>,
}

/// Why [`Core::add_namespace`] refused a namespace.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A namespace of that name is registered already.
    #[error("namespace {0:?} is registered already")]
    DuplicateNamespace(String),
    /// The specification is inconsistent; the text says how.
    #[error("bad namespace specification: {0}")]
    BadSpec(String),
}

/// Why a connection was refused at its handshake: the I/O layer closes it without
/// a reply (what OpenPMIx does) and logs this.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// The socket's real owner is not the server's user (DESIGN §8).
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
    /// The connection id is in use.
    #[error("connection {0} is open already")]
    DuplicateConn(ConnId),
}

/// What the I/O layer must do, drained with [`Core::poll_output`].
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
    /// has forgotten it; [`Core::closed`] for it afterwards is harmless.
    Close {
        /// The connection.
        conn: ConnId,
    },
    /// Something the launcher must know about its job.
    Job(JobEvent),
}

/// A change in a job's processes the launcher must know about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobEvent {
    /// A rank completed its handshake on `conn`.
    Connected {
        /// The connection.
        conn: ConnId,
        /// The rank's nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// A rank called `PMIx_Finalize` (its FINALIZE was answered).
    Finalized {
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
    /// exit with [`Core::proc_exited`] before it finalized).
    Lost {
        /// The nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
}

/// The server's state machine: namespaces, connected peers, the commit store, held
/// gets, fences, event registrations, published data (module docs).
#[derive(Debug)]
pub struct Core {
    cfg: CoreConfig,
    namespaces: Vec<NamespaceSpec>,
    conns: std::collections::HashMap<ConnId, Peer>,
    out: VecDeque<Output>,
    next_index: u32,
}

#[derive(Debug)]
struct Peer {
    codec: pmix_wire::Codec,
}

impl Core {
    /// A server with no namespace and no peer.
    pub fn new(cfg: CoreConfig) -> Core {
        Core {
            cfg,
            namespaces: Vec::new(),
            conns: Default::default(),
            out: VecDeque::new(),
            next_index: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// Registers a namespace whose ranks may then connect.
    ///
    /// # Errors
    /// [`ServerError::DuplicateNamespace`] for a name in use;
    /// [`ServerError::BadSpec`] for a rank at or above the job size or listed twice.
    pub fn add_namespace(&mut self, ns: NamespaceSpec) -> Result<(), ServerError> {
        if self.namespaces.iter().any(|n| n.nspace == ns.nspace) {
            return Err(ServerError::DuplicateNamespace(ns.nspace));
        }
        self.namespaces.push(ns);
        Ok(())
    }

    /// A connect message arrived on `conn` (decoded by the I/O layer with
    /// [`ConnectMsg::decode`]); `peer_uid` is the socket's real owner (from the
    /// kernel, not the claim). Returns the handshake reply's bytes to send.
    ///
    /// # Errors
    /// [`Refused`]: close the connection without a reply.
    pub fn connect(
        &mut self,
        conn: ConnId,
        msg: &ConnectMsg,
        peer_uid: u32,
        now: Instant,
    ) -> Result<Vec<u8>, Refused> {
        let _ = (msg, peer_uid, now);
        if self.conns.contains_key(&conn) {
            return Err(Refused::DuplicateConn(conn));
        }
        Err(Refused::Unsupported("the server core is a skeleton".into()))
    }

    /// One whole frame arrived on `conn` after its handshake.
    pub fn frame(&mut self, conn: ConnId, frame: &Frame, now: Instant) {
        let _ = now;
        let Some(peer) = self.conns.get(&conn) else {
            return;
        };
        match pmix_wire::decode_request(&frame.payload, &peer.codec) {
            Err(_) => self.out.push_back(Output::Close { conn }),
            Ok(pmix_wire::Request::DeregEvents(_)) => {}
            Ok(req) => {
                let reply = pmix_wire::Reply::Status {
                    command: req.command(),
                    status: pmix_wire::Status::NOT_SUPPORTED,
                };
                if let Ok(payload) = reply.encode(&peer.codec)
                    && let Ok(f) = Frame::new(0, frame.header.tag, payload)
                    && let Ok(bytes) = f.encode()
                {
                    self.out.push_back(Output::Send { conn, bytes });
                }
            }
        }
    }

    /// `conn`'s socket closed (EOF or error). A rank that had not finalized is
    /// lost ([`JobEvent::Lost`]).
    pub fn closed(&mut self, conn: ConnId, now: Instant) {
        let _ = now;
        self.conns.remove(&conn);
    }

    /// Runs the timers due at `now` (held gets, fences with a timeout).
    pub fn tick(&mut self, now: Instant) {
        let _ = now;
    }

    /// When [`Core::tick`] must next be called; `None` when no timer is pending.
    pub fn next_deadline(&self) -> Option<Instant> {
        None
    }

    /// The next thing the I/O layer must do; `None` when there is nothing. Drain
    /// after every call.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// The launcher saw `nspace`:`rank` exit with `status`. A rank that had not
    /// finalized is lost, as if its socket had closed.
    pub fn proc_exited(&mut self, nspace: &str, rank: u32, status: i32, now: Instant) {
        let _ = (nspace, rank, status, now, self.next_index);
    }
}
