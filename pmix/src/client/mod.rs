//! The client side: what a process does as a PMIx client or tool (docs/design.md §8),
//! importing nothing of the server (`.ci/check-architecture.py` holds every file here
//! to that):
//! - `instance/`: the library instance ([`Pmix`](crate::Pmix), of every role), its
//!   progress thread, the process-wide instance of the C and Python faces
//!   ([`global`](crate::global)) and when a request goes to the server (`relay.rs`);
//! - `calls/`: the calls made through the instance: `_nb` forms, events, groups,
//!   publish / lookup, queries, log / job control / monitoring, group invite / join,
//!   and rank-state tracking ([`ft`](crate::ft));
//! - `membership/`: the groups this process is in and the rank-state trackers events
//!   feed, knowing nothing of the instance;
//! - this file, `env.rs`, `core.rs`, `conn.rs` and `store.rs`: one connection to a
//!   server, [`Client`], described below.
//!
//! **The connection.** [`Client::connect`] does what OpenPMIx 4.2's `PMIx_Init` does
//! for a process started by a server: it connects to the address the environment
//! names ([`ServerEnv`]), completes the handshake as an OpenPMIx 4.2.2 client with the
//! `hash` store, asks for its job's information (REQ) and keeps it (see `store.rs`:
//! job-level values from the job's KVALs and this node's, session and app arrays, a
//! rank's from its blob, decoded when first asked for).
//! Then:
//! - [`Client::get`] answers job information and values this process put locally,
//!   and asks the server (GETNB) for the rest, keeping everything the reply brings;
//! - [`Client::put`] is local, [`Client::commit`] sends every value put so far;
//! - [`Client::fence`], [`Client::abort`] and [`Client::finalize`] are the
//!   server's commands of those names.
//!
//! Each call waits for its reply on the caller's thread ([`conn`] says which thread
//! matches replies); none is made on the progress thread (the instance refuses
//! blocking calls there first). When the server goes away, every waiting and later
//! call returns [`Error::Unreach`].
//!
//! Events the server sends go to the sink given at connect (the instance runs its
//! handlers); REGEVENTS, DEREGEVENTS and NOTIFY are sent for it.
//!
//! Groups: construct, destruct and leave are the server's commands (the instance keeps
//! the memberships).
//!
//! Publish, lookup and unpublish are the server's commands too.
//!
//! Distances the process cannot compute alone are relayed
//! ([`Client::distances_then`]: COMPUTE_DEVICE_DISTANCES).
//!
//! Queries ([`Client::query_then`]) are answered from the store when it holds every
//! key, else by the server (QUERY); [`Client::resolve_peers`] and
//! [`Client::resolve_nodes`] read the job information.
//!
//! Group invite / join need no command of their own: the instance builds them from
//! NOTIFYs (`calls/invite.rs`).
//!
//! A tool connects with [`Client::connect_tool`]: no job information, the rest
//! alike.

pub(crate) mod calls;
pub mod conn;
pub(crate) mod core;
pub mod env;
pub mod events;
pub(crate) mod instance;
pub(crate) mod membership;
mod store;

use std::sync::{Arc, mpsc};
use std::time::Duration;

use pmix_core::DeviceTypes;
use pmix_core::Status;
use pmix_wire::msg::{
    Abort, Commit, CommitBucket, ComputeDeviceDistances, DeregEvents, FenceNb, GetNb,
    GroupConstruct, GroupDestruct, GroupLeave, JobControl, Log, Lookup, Monitor, Notify,
    ProcCpuset, Publish, QueryInfo, RegEvents, Spawn, Unpublish,
};
use pmix_wire::{
    Info, InfoFlags, Kval, Proc, Query, Rank, Reply, Request, Scope, Topo, Value, WStr,
};

pub use env::ServerEnv;

use crate::distances::RelayedDistance;
use crate::error::Error;
use conn::Conn;
use pmix_wire::msg::{JobInfo, JobItem};
use store::Store;

/// How long connecting and the handshake may take.
pub const CONNECT_WAIT: Duration = Duration::from_secs(30);

/// How long FINALIZE waits for its reply before closing anyway (OpenPMIx: 2 s).
pub const FINALIZE_WAIT: Duration = Duration::from_secs(2);

/// A launched client's connection, identity and store.
pub struct Client {
    conn: Conn,
    me: ProcId,
    /// The server's own identity (the URI's `nspace.rank` before `;`).
    server: Proc,
    /// The server's URI as the environment gave it (`pmix.srvr.uri`).
    server_uri: String,
    store: Arc<Store>,
}

/// What a group construct gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupOutcome {
    /// The context id the server assigned (`PMIX_GROUP_ASSIGN_CONTEXT_ID`), if any.
    pub ctxid: Option<u64>,
    /// The final membership, from servers that send it (4.2.4 and later).
    pub members: Option<Vec<Proc>>,
}

/// Where the result of a request goes: run once, on the reader thread when the
/// server's reply comes, or on the caller's thread when the answer is local. Keep it
/// short (a channel send, a post to the progress thread).
pub type Done<T> = Box<dyn FnOnce(Result<T, Error>) + Send + 'static>;

/// Starts a request with `start`, handing it a completion that sends its result
/// back here, and waits for that result: the blocking form of every call that has a
/// completion-taking one. `dropped` is the error when the completion is dropped unrun
/// (what ended the request is gone: the connection, the progress engine).
pub(crate) fn wait<T: Send + 'static>(
    start: impl FnOnce(Done<T>) -> Result<(), Error>,
    dropped: impl FnOnce() -> Error,
) -> Result<T, Error> {
    let (tx, rx) = mpsc::sync_channel(1);
    start(Box::new(move |r| {
        let _ = tx.send(r);
    }))?;
    rx.recv().map_err(|_| dropped())?
}

/// A process's identity: namespace and rank (`pmix_proc_t`), the one type for it in
/// every crate (pmix-core's; `pmix_wire::Proc` is the wire's PROC element, which may
/// also name sets of processes: a WILDCARD rank).
pub use pmix_core::group::ProcId;

/// This process's identity from a namespace and rank a server gave.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for an empty namespace, one over 255 bytes or with a NUL,
/// or a reserved rank.
pub(crate) fn proc_id(nspace: &str, rank: u32) -> Result<ProcId, Error> {
    pmix_core::group::Nspace::new(nspace)
        .and_then(|ns| ProcId::new(ns, rank))
        .map_err(|e| Error::BadParam(format!("the identity {nspace}:{rank}: {e}").into()))
}

/// What a fence collected with the rank-state contributions
/// ([`Client::fence_contributions_then`]): who gave what.
pub type Contributions = Vec<(Proc, Vec<u8>)>;

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("me", &self.me)
            .finish_non_exhaustive()
    }
}

fn status_error(status: i32, why: String) -> Error {
    Error::Status {
        status: Status(status),
        why: why.into(),
    }
}

/// `Ok` for a lone STATUS 0 reply; the status as an error otherwise.
fn expect_ok(reply: Reply, what: &str) -> Result<(), Error> {
    match reply {
        Reply::Status { status, .. } if status.0 == 0 => Ok(()),
        Reply::Status { status, .. } => Err(status_error(
            status.0,
            format!("the PMIx server's answer to {what}"),
        )),
        other => Err(Error::Internal(format!(
            "the PMIx server answered {what} with {:?}",
            other.command()
        ))),
    }
}

impl Client {
    /// Connects as `env`'s process and loads its job information; `hostname` is this
    /// host's name (which node of the job information is this one). The server's
    /// events go to `events`, on the reader thread (keep it short: a post to the
    /// progress thread).
    ///
    /// # Errors
    /// [`Error::Unreach`] when the server cannot be reached, refuses this process (by
    /// closing the connection) or does not answer the handshake within
    /// [`CONNECT_WAIT`]; [`Error::Os`] when the reader thread cannot be started;
    /// [`Error::Unreach`] when the server goes away
    /// before answering REQ; the server's status when it answers REQ with one;
    /// `PMIX_ERR_BAD_PARAM` when the job information is another namespace's.
    pub fn connect(
        env: &ServerEnv,
        hostname: &str,
        events: impl Fn(pmix_wire::Event) + Send + Sync + 'static,
    ) -> Result<Client, Error> {
        // REQ rides with the connect message: one round trip for both.
        let (conn, reply) =
            Conn::connect_asking(env, CONNECT_WAIT, Box::new(events), &Request::Req)?;
        Client::with_job(conn, reply, env, hostname)
    }

    /// The client of `env`'s process over `conn`, whose handshake is done: asks for
    /// the job information (REQ) and keeps it.
    ///
    /// # Errors
    /// As [`Client::connect`] after the handshake.
    pub(crate) fn over(conn: Conn, env: &ServerEnv, hostname: &str) -> Result<Client, Error> {
        let reply = conn.call(&Request::Req, None)?;
        Client::with_job(conn, reply, env, hostname)
    }

    /// The client of `env`'s process over `conn`, whose REQ was answered `reply`.
    ///
    /// # Errors
    /// As [`Client::connect`] after the handshake.
    fn with_job(
        conn: Conn,
        reply: Reply,
        env: &ServerEnv,
        hostname: &str,
    ) -> Result<Client, Error> {
        let job = Client::job_of(reply, env)?;
        // A server that reads our node store names the segment instead of sending
        // the job information; a segment that cannot be mapped, or does not stand
        // for this rank's view, is asked for again by message (the server then
        // sends the job information itself).
        let store = match Client::map_job(job, env) {
            Ok(store) => store,
            Err(None) => {
                let job = Client::job_of(conn.call(&Request::Req, None)?, env)?;
                Store::new(job, env.rank, hostname)
            }
            Err(Some(job)) => Store::new(job, env.rank, hostname),
        };
        Ok(Client {
            conn,
            me: proc_id(&env.nspace, env.rank)?,
            server: server_id(&env.server),
            server_uri: format!("{};tcp4://{}", env.server, env.addr),
            store: Arc::new(store),
        })
    }

    /// The store of the node-store segment `job` names (docs/serving.md §5.2);
    /// `Err(Some(job))` when it names none (it is the job information itself),
    /// `Err(None)` when the segment cannot be mapped, does not parse, is another
    /// namespace's, or does not stand for this rank's view.
    fn map_job(job: JobInfo, env: &ServerEnv) -> Result<Store, Option<JobInfo>> {
        let named = job.items.iter().position(
            |i| matches!(i, JobItem::Value(k) if k.key == pmix_wire::keys::RS_NODE_STORE),
        );
        let Some(at) = named else {
            return Err(Some(job));
        };
        let mut items = job.items;
        let JobItem::Value(k) = items.remove(at) else {
            return Err(None);
        };
        let path = k.value.as_str().ok_or(None)?;
        let map = crate::os::Mapping::file(std::path::Path::new(path)).map_err(|_| None)?;
        let seg = pmix_wire::nodestore::Segment::parse_lazy(map).map_err(|_| None)?;
        if seg.nspace() != env.nspace {
            return Err(None);
        }
        Store::mapped(seg, path, items).map_err(|_| None)
    }

    /// The job information of a REQ reply.
    ///
    /// # Errors
    /// The status of a reply that is one; [`Error::Internal`] for a reply of
    /// another command; [`Error::BadParam`] for another namespace's job information.
    fn job_of(reply: Reply, env: &ServerEnv) -> Result<JobInfo, Error> {
        let job = match reply {
            Reply::Req(job) => job,
            Reply::Status { status, .. } => {
                return Err(status_error(
                    status.0,
                    "the PMIx server's answer to REQ".into(),
                ));
            }
            other => {
                return Err(Error::Internal(format!(
                    "the PMIx server answered REQ with {:?}",
                    other.command()
                )));
            }
        };
        if job.nspace.as_bytes() != env.nspace.as_bytes() {
            return Err(Error::BadParam(
                format!(
                    "the PMIx server sent the job information of {:?}, not of {:?}",
                    job.nspace.to_string(),
                    env.nspace
                )
                .into(),
            ));
        }
        Ok(job)
    }

    /// Whether this process reads its job information from the node store (a
    /// segment its server wrote once for every client of the node, mapped
    /// read-only: docs/serving.md §5) rather than from a copy the server sent it.
    /// A get of the job-level key `pmixrs.nstore` then answers the segment's path
    /// (any client library's program can tell), `PMIX_ERR_NOT_FOUND` otherwise.
    pub fn reads_node_store(&self) -> bool {
        self.store.is_mapped()
    }

    /// Connects to `env`'s server as a tool (docs/wire.md §3: type flag 3, the server
    /// assigns the identity; `env`'s namespace and rank are not used) with an empty
    /// store: a tool has no job information, and sends no REQ. Everything else works
    /// as for a client (requests, events, the relay of distances).
    ///
    /// # Errors
    /// As [`Client::connect`] for the handshake.
    pub fn connect_tool(
        env: &ServerEnv,
        hostname: &str,
        events: impl Fn(pmix_wire::Event) + Send + Sync + 'static,
    ) -> Result<Client, Error> {
        let (conn, id) = Conn::connect_tool(env, CONNECT_WAIT, Box::new(events))?;
        Client::tool_over(conn, id, env, hostname)
    }

    /// The tool `nspace`:`rank` over `conn`, whose handshake is done.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` when the identity is not one ([`ProcId`]).
    pub(crate) fn tool_over(
        conn: Conn,
        (nspace, rank): (String, u32),
        env: &ServerEnv,
        hostname: &str,
    ) -> Result<Client, Error> {
        let job = pmix_wire::msg::JobInfo {
            nspace: WStr::from(nspace.as_str()),
            items: Vec::new(),
        };
        Ok(Client {
            conn,
            me: proc_id(&nspace, rank)?,
            server: server_id(&env.server),
            server_uri: format!("{};tcp4://{}", env.server, env.addr),
            store: Arc::new(Store::new(job, rank, hostname)),
        })
    }

    /// Sends `req`; `done` gets its reply, decoded and made a result by `interpret`
    /// (on the reader thread), or the error that ended the connection.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    fn request_then<T: 'static>(
        &self,
        req: Request,
        done: Done<T>,
        interpret: impl FnOnce(Reply) -> Result<T, Error> + Send + 'static,
    ) -> Result<(), Error> {
        self.conn
            .send(&req, Box::new(move |reply| done(reply.and_then(interpret))))
    }

    /// [`Client::request_then`] for a request whose reply is a lone STATUS.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    fn status_then(&self, req: Request, done: Done<()>) -> Result<(), Error> {
        let what = format!("{:?}", req.command());
        self.request_then(req, done, move |reply| expect_ok(reply, &what))
    }

    /// The buffer type the server uses (how packed data is laid out:
    /// `PMIX_BFROP_BUFFER_TYPE`).
    pub fn buffer_type(&self) -> pmix_wire::BufferType {
        self.conn.codec().buffer_type
    }

    /// The server's identity (`PMIx_tool_get_servers`).
    pub fn server(&self) -> &Proc {
        &self.server
    }

    /// This process's identity.
    pub fn proc_id(&self) -> &ProcId {
        &self.me
    }

    /// The value of `key` for process `nspace`:`rank` (`rank` may be
    /// [`Rank::WILDCARD`] for job-level information). Answered from this process's
    /// store when it can be (job information, its own puts, what earlier replies
    /// brought), else by the server, whose reply is kept; keys starting with `pmix`
    /// of this namespace are asked for with `pmix.immediate` (the server does not
    /// wait for them). `info` goes to the server as given.
    ///
    /// # Errors
    /// `PMIX_ERR_NOT_FOUND` when nobody has the key; the server's status
    /// (`PMIX_ERR_TIMEOUT`, …); [`Error::Unreach`] when the server is gone.
    pub fn get(&self, nspace: &str, rank: u32, key: &str, info: &[Info]) -> Result<Value, Error> {
        // Answered here, it costs no channel and no callback.
        if let Some(answer) = self.answer_here(nspace, rank, key, info) {
            return answer;
        }
        self.conn.blocking(
            None,
            |done| self.get_then(nspace, rank, key, info, done),
            Error::lost,
        )
    }

    /// [`Client::get`], handing the result to `done` instead of waiting for it: at
    /// once when it is answered locally, on the reader thread when the server's
    /// reply comes.
    ///
    /// # Errors
    /// When the request cannot be sent ([`Error::Unreach`], [`Error::BadParam`]):
    /// `done` is then dropped unrun. Every other outcome goes to `done`.
    pub fn get_then(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        info: &[Info],
        done: Done<Value>,
    ) -> Result<(), Error> {
        self.get_inner(nspace, rank, key, info, false, done)
    }

    /// [`Client::get_then`]; with `fresh`, always the server's answer (GETNB),
    /// never this process's store: for a key a peer overwrites, whose earlier
    /// value the store may hold (the rank-state exchange's). The reply is kept as
    /// usual.
    pub(crate) fn get_inner(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        info: &[Info],
        fresh: bool,
        done: Done<Value>,
    ) -> Result<(), Error> {
        let own_job = nspace == self.me.nspace;
        let reserved = key.starts_with("pmix");
        if !fresh && let Some(answer) = self.answer_here(nspace, rank, key, info) {
            done(answer);
            return Ok(());
        }
        let quals: Vec<Info> = info
            .iter()
            .filter(|i| i.flags.contains(InfoFlags::QUALIFIER))
            .cloned()
            .collect();
        if !quals.is_empty() {
            // A qualified value (a group member's local CID under the group's
            // context id, say): only the server has it, in `pmix.qual.val` form.
            let req = Request::GetNb(GetNb {
                nspace: WStr::from(nspace),
                rank: Rank(rank),
                info: info.to_vec(),
                key: Some(WStr::from(key)),
            });
            let (nspace, key) = (nspace.to_owned(), key.to_owned());
            return self.request_then(req, done, move |reply| {
                qualified_reply(reply, &nspace, rank, &key, &quals)
            });
        }
        let mut info = info.to_vec();
        if own_job && reserved && !info.iter().any(|i| i.key == pmix_wire::keys::IMMEDIATE) {
            info.push(Info::new(pmix_wire::keys::IMMEDIATE, true));
        }
        if env::get_verbose() {
            // libpmix2's own line, at its verbosity (what tells a get that asked
            // the server from one answered in the process).
            eprintln!(
                "[{}:{}] [{},{}] REQUESTING DATA FROM SERVER FOR {nspace}:{rank} KEY {key}",
                crate::os::short_hostname(),
                std::process::id(),
                self.me.nspace,
                self.me.rank
            );
        }
        let req = Request::GetNb(GetNb {
            nspace: WStr::from(nspace),
            rank: Rank(rank),
            info,
            key: Some(WStr::from(key)),
        });
        let store = Arc::clone(&self.store);
        let (nspace, key) = (nspace.to_owned(), key.to_owned());
        self.request_then(req, done, move |reply| {
            get_reply(&store, reply, &nspace, rank, &key)
        })
    }

    /// What [`Client::get`] answers without the server: a node-level get of this
    /// job from the node arrays, else [`Client::get_local`]; `None` for a
    /// qualified get (only the server holds those) and whatever only the server
    /// can answer.
    fn answer_here(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        info: &[Info],
    ) -> Option<Result<Value, Error>> {
        if info.iter().any(|i| i.flags.contains(InfoFlags::QUALIFIER)) {
            return None;
        }
        if nspace == self.me.nspace
            && rank == Rank::WILDCARD.0
            && let Some((name, id)) = node_directive(info)
            && let Some(found) = self.store.node_level(name, id, key)
        {
            return Some(found.ok_or_else(|| {
                status_error(
                    Status::ERR_NOT_FOUND.0,
                    format!("no {key:?} in the information of that node"),
                )
            }));
        }
        self.get_local(nspace, rank, key)
    }

    /// The value of `key` for `nspace`:`rank` as [`Client::get`] finds it without
    /// asking the server: job information, this process's own puts, what earlier
    /// replies brought. `None` when only the server could answer. Never waits.
    pub fn get_local(&self, nspace: &str, rank: u32, key: &str) -> Option<Result<Value, Error>> {
        let own_job = nspace == self.me.nspace;
        if own_job {
            let local = if rank == Rank::WILDCARD.0 {
                Ok(self.store.job_value(key))
            } else if rank == self.me.rank {
                match self.store.own_value(key) {
                    Some(v) => Ok(Some(v)),
                    None => self.store.rank_value(rank, key).map(|v| {
                        v.or_else(|| self.server_value(key))
                            .or_else(|| self.store.rank_fallback(rank, key))
                    }),
                }
            } else if key.starts_with("pmix") {
                self.store
                    .rank_value(rank, key)
                    .map(|v| v.or_else(|| self.store.rank_fallback(rank, key)))
            } else {
                Ok(None)
            };
            match local {
                Ok(Some(v)) => return Some(Ok(v)),
                Err(e) => return Some(Err(e)),
                Ok(None) => {}
            }
        }
        self.store
            .peer_value(nspace, rank, key)
            .or_else(|| self.store.fence_value(nspace, rank, key))
            .map(Ok)
    }

    /// What this process knows of its server under its own name, as OpenPMIx's
    /// client files it: `pmix.srv.nspace`, `pmix.srv.rank`, `pmix.srvr.uri`.
    fn server_value(&self, key: &str) -> Option<Value> {
        match key {
            pmix_wire::keys::SERVER_NSPACE => {
                Some(Value::from(self.server.nspace.to_string().as_str()))
            }
            pmix_wire::keys::SERVER_RANK => Some(Value::ProcRank(self.server.rank.0)),
            pmix_wire::keys::SERVER_URI => Some(Value::from(self.server_uri.as_str())),
            _ => None,
        }
    }

    /// Puts `value` under `key` in `scope` (LOCAL, REMOTE or GLOBAL go to the server
    /// at the next commit; keys starting with `pmix`, and UNDEF or INTERNAL scopes,
    /// stay in this process).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` for an empty key, one over 511 bytes or holding a NUL,
    /// or a scope that is not one of the five.
    pub fn put(&self, scope: Scope, key: &str, value: Value) -> Result<(), Error> {
        if !pmix_wire::keys::is_valid(key) {
            return Err(Error::bad_key());
        }
        if scope.0 > Scope::INTERNAL.0 {
            return Err(Error::BadParam(
                format!("scope {} is not a PMIx scope", scope.0).into(),
            ));
        }
        self.store.put(scope, Kval::new(key, value));
        Ok(())
    }

    /// `PMIx_Store_internal`: files `value` under `key` for `nspace`:`rank` in this
    /// process only (never sent): later gets of it here answer it. For this process
    /// itself it is a put of scope INTERNAL.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` as for [`Client::put`].
    pub fn store_internal(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        value: Value,
    ) -> Result<(), Error> {
        if nspace == self.me.nspace && rank == self.me.rank {
            return self.put(Scope::INTERNAL, key, value);
        }
        if !pmix_wire::keys::is_valid(key) {
            return Err(Error::bad_key());
        }
        self.store
            .add_peer_values(nspace, rank, &[Kval::new(key, value)]);
        Ok(())
    }

    /// Sends every value put so far (LOCAL and GLOBAL in one bucket, REMOTE and
    /// GLOBAL in the other) and waits for the server's answer.
    ///
    /// # Errors
    /// The server's status; [`Error::Unreach`] when the server is gone.
    pub fn commit(&self) -> Result<(), Error> {
        self.conn
            .blocking(None, |done| self.commit_then(done), Error::lost)
    }

    /// [`Client::commit`], handing the server's answer to `done` instead of waiting
    /// for it.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    pub fn commit_then(&self, done: Done<()>) -> Result<(), Error> {
        let (local, remote) = self.store.buckets();
        let ty = self.conn.codec().buffer_type;
        let buckets = [(Scope::LOCAL, local), (Scope::REMOTE, remote)]
            .into_iter()
            .filter(|(_, k)| !k.is_empty())
            .map(|(scope, kvals)| CommitBucket {
                scope,
                buffer_type: ty,
                kvals,
            })
            .collect();
        self.status_then(Request::Commit(Commit { buckets }), done)
    }

    /// A fence over `procs` (none: this whole job) with directives `info`
    /// (`pmix.collect`, `pmix.timeout`, `pmix.grp.ftcoll`, …); returns when every
    /// participant has entered it.
    ///
    /// # Errors
    /// The server's status (`PMIX_ERR_LOST_CONNECTION` when a participant died,
    /// `PMIX_ERR_TIMEOUT`, …); [`Error::Unreach`] when the server is gone.
    pub fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
        self.conn
            .blocking(None, |done| self.fence_then(procs, info, done), Error::lost)
    }

    /// [`Client::fence`], handing the result to `done` (on the reader thread) instead
    /// of waiting for it.
    ///
    /// # Errors
    /// When the request cannot be sent ([`Error::Unreach`], [`Error::BadParam`]):
    /// `done` is then dropped unrun. Every other outcome goes to `done`.
    pub fn fence_then(&self, procs: &[Proc], info: &[Info], done: Done<()>) -> Result<(), Error> {
        // What the fence brings is in the next fence segment, which a get learns
        // of: the last one is of the data before.
        self.store.forget_fence_segment();
        let procs = if procs.is_empty() {
            vec![Proc::new(self.me.nspace.as_bytes(), Rank::WILDCARD.0)]
        } else {
            procs.to_vec()
        };
        self.status_then(
            Request::FenceNb(FenceNb {
                procs,
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// A fence carrying `contribution` under [`pmix_wire::msg::FT_CONTRIBUTION_KEY`]
    /// (the rank-state exchange): `done` gets every participant's contribution, as
    /// the server collected them, when the server is ours, or `None` when it
    /// answered a lone `STATUS 0` (an OpenPMIx server, which ignores the key).
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the fence's status goes to `done`.
    pub fn fence_contributions_then(
        &self,
        procs: &[Proc],
        info: &[Info],
        contribution: Vec<u8>,
        done: Done<Option<Contributions>>,
    ) -> Result<(), Error> {
        let mut info = info.to_vec();
        info.push(Info::new(
            pmix_wire::msg::FT_CONTRIBUTION_KEY,
            Value::ByteObject(pmix_wire::ByteObject(contribution)),
        ));
        self.request_then(
            Request::FenceNb(FenceNb {
                procs: procs.to_vec(),
                info,
            }),
            done,
            |reply| match reply {
                Reply::FenceNb(r) if r.status.0 == 0 => Ok(Some(
                    r.contributions.into_iter().map(|(p, b)| (p, b.0)).collect(),
                )),
                Reply::FenceNb(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to FenceNb".into(),
                )),
                other => expect_ok(other, "FenceNb").map(|()| None),
            },
        )
    }

    /// Tells the server this process listens to `codes` (none: every code, a default
    /// handler) with directives `info` (REGEVENTS); `done` gets its answer.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    pub fn register_events_then(
        &self,
        codes: &[i32],
        info: &[Info],
        done: Done<()>,
    ) -> Result<(), Error> {
        self.status_then(
            Request::RegEvents(RegEvents {
                codes: codes.iter().map(|c| pmix_wire::Status(*c)).collect(),
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// Tells the server nobody here listens to `codes` any more (`i32::MIN`: no
    /// default handler); DEREGEVENTS has no reply.
    ///
    /// # Errors
    /// [`Error::Unreach`] when the server is gone.
    pub fn deregister_events(&self, codes: &[i32]) -> Result<(), Error> {
        self.conn.send_oneway(&Request::DeregEvents(DeregEvents {
            codes: codes.iter().map(|c| pmix_wire::Status(*c)).collect(),
        }))
    }

    /// Sends an event with `status` in `range` with `info` to the server (NOTIFY; the
    /// server names this process as its source); `done` gets the server's answer.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    pub fn notify_then(
        &self,
        status: i32,
        range: pmix_wire::DataRange,
        info: &[Info],
        done: Done<()>,
    ) -> Result<(), Error> {
        self.status_then(
            Request::Notify(Notify {
                status: pmix_wire::Status(status),
                range,
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// Constructs group `grp` of `procs` with directives `info` (GROUP_CONSTRUCT, a
    /// collective of the members); `done` gets the outcome.
    ///
    /// # Errors
    /// As [`Client::fence_then`]. The server's status (`PMIX_ERR_NOT_SUPPORTED` from
    /// a server without groups, as Open MPI 4.1's `mpirun`) goes to `done`.
    pub fn group_construct_then(
        &self,
        grp: &str,
        procs: &[Proc],
        info: &[Info],
        done: Done<GroupOutcome>,
    ) -> Result<(), Error> {
        self.request_then(
            Request::GroupConstruct(GroupConstruct {
                grp: WStr::from(grp),
                procs: procs.to_vec(),
                info: info.to_vec(),
            }),
            done,
            move |reply| match reply {
                Reply::GroupConstruct(r) if r.status.0 == 0 => Ok(GroupOutcome {
                    ctxid: r.ctxid.map(|c| c.0).filter(|c| *c != u64::MAX),
                    members: r.members,
                }),
                Reply::GroupConstruct(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to GROUP_CONSTRUCT".into(),
                )),
                other => expect_ok(other, "GROUP_CONSTRUCT").map(|()| GroupOutcome {
                    ctxid: None,
                    members: None,
                }),
            },
        )
    }

    /// Destructs group `grp` (GROUP_DESTRUCT, a collective of its members); `done`
    /// gets the server's answer.
    ///
    /// # Errors
    /// As [`Client::group_construct_then`].
    pub fn group_destruct_then(
        &self,
        grp: &str,
        info: &[Info],
        done: Done<()>,
    ) -> Result<(), Error> {
        let members = match self.conn.codec().version.group_layout() {
            pmix_wire::GroupLayout::V420 => None,
            pmix_wire::GroupLayout::V424 => Some(Vec::new()),
        };
        self.request_then(
            Request::GroupDestruct(GroupDestruct {
                grp: WStr::from(grp),
                members,
                info: info.to_vec(),
            }),
            done,
            move |reply| match reply {
                Reply::GroupDestruct(r) if r.status.0 == 0 => Ok(()),
                Reply::GroupDestruct(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to GROUP_DESTRUCT".into(),
                )),
                other => expect_ok(other, "GROUP_DESTRUCT"),
            },
        )
    }

    /// Leaves group `grp` (GROUP_LEAVE: the server sends `PMIX_GROUP_LEFT` to the
    /// other members and answers once it is generated); `done` gets the answer.
    ///
    /// # Errors
    /// As [`Client::group_construct_then`].
    pub fn group_leave_then(&self, grp: &str, info: &[Info], done: Done<()>) -> Result<(), Error> {
        self.status_then(
            Request::GroupLeave(GroupLeave {
                grp: WStr::from(grp),
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// Publishes `info` (PUBLISHNB, with this process's effective uid); `done` gets
    /// the server's answer.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    pub fn publish_then(&self, info: &[Info], done: Done<()>) -> Result<(), Error> {
        let (uid, _) = crate::os::effective_ids();
        self.status_then(
            Request::Publish(Publish {
                uid: pmix_wire::value::Uint32(uid),
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// Looks `keys` up (LOOKUPNB) with directives `info`; `done` gets what was found
    /// (publisher, key, value), or `PMIX_ERR_NOT_FOUND` when nothing was.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    pub fn lookup_then(
        &self,
        keys: &[&str],
        info: &[Info],
        done: Done<Vec<pmix_wire::value::Pdata>>,
    ) -> Result<(), Error> {
        let (uid, _) = crate::os::effective_ids();
        self.request_then(
            Request::Lookup(Lookup {
                uid: pmix_wire::value::Uint32(uid),
                keys: keys.iter().map(|k| WStr::from(*k)).collect(),
                info: info.to_vec(),
            }),
            done,
            move |reply| match reply {
                Reply::Lookup(r) if r.status.0 == 0 && !r.data.is_empty() => Ok(r.data),
                Reply::Lookup(r) if r.status.0 != 0 => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to LOOKUPNB".into(),
                )),
                Reply::Status { status, .. } if status.0 != 0 => Err(status_error(
                    status.0,
                    "the PMIx server's answer to LOOKUPNB".into(),
                )),
                _ => Err(status_error(
                    Status::ERR_NOT_FOUND.0,
                    "nothing published under those keys".into(),
                )),
            },
        )
    }

    /// Withdraws what this process published under `keys` (none: everything it
    /// published) (UNPUBLISHNB); `done` gets the server's answer.
    ///
    /// # Errors
    /// As [`Client::fence_then`].
    pub fn unpublish_then(
        &self,
        keys: &[&str],
        info: &[Info],
        done: Done<()>,
    ) -> Result<(), Error> {
        let (uid, _) = crate::os::effective_ids();
        self.status_then(
            Request::Unpublish(Unpublish {
                uid: pmix_wire::value::Uint32(uid),
                keys: keys.iter().map(|k| WStr::from(*k)).collect(),
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// `PMIx_Resolve_peers`: the processes of `nspace` (`None`: this process's job)
    /// on node `nodename` (`None`: this node), from the job information
    /// (`pmix.lpeers` of that node); another job's are asked of the server (this
    /// node only).
    ///
    /// # Errors
    /// `PMIX_ERR_NOT_FOUND` when nothing is known of that node or job; a
    /// `pmix.lpeers` that is not a rank list is `PMIX_ERR_BAD_PARAM`; as
    /// [`Client::get`] for another job.
    pub fn resolve_peers(
        &self,
        nodename: Option<&str>,
        nspace: Option<&str>,
    ) -> Result<Vec<Proc>, Error> {
        let own = self.me.nspace.to_string();
        let nspace = nspace.unwrap_or(&own);
        let here =
            nodename.is_none_or(|n| self.store.hostnames().first().map(String::as_str) == Some(n));
        let peers = if nspace == self.me.nspace {
            self.store.node_value(
                if here { None } else { nodename },
                pmix_wire::keys::LOCAL_PEERS,
            )
        } else if here {
            Some(self.get(nspace, Rank::WILDCARD.0, pmix_wire::keys::LOCAL_PEERS, &[])?)
        } else {
            None
        };
        let peers = peers.ok_or_else(|| {
            status_error(
                Status::ERR_NOT_FOUND.0,
                format!(
                    "no processes of {nspace} known on {}",
                    nodename.unwrap_or("this node")
                ),
            )
        })?;
        let list = peers.as_str().ok_or_else(|| {
            status_error(
                Status::ERR_BAD_PARAM.0,
                "pmix.lpeers is not a string".into(),
            )
        })?;
        parse_ranks(list)
            .map(|ranks| ranks.into_iter().map(|r| Proc::new(nspace, r)).collect())
            .ok_or_else(|| {
                status_error(
                    Status::ERR_BAD_PARAM.0,
                    format!("pmix.lpeers {list:?} is not a rank list"),
                )
            })
    }

    /// `PMIx_Resolve_nodes`: the comma-separated host names of the nodes that run
    /// processes of `nspace` (`None`: this process's job): its `pmix.nlist` when the
    /// job information has one, else the nodes it describes; another job's
    /// `pmix.nlist` is asked of the server.
    ///
    /// # Errors
    /// `PMIX_ERR_NOT_FOUND` when nothing is known; as [`Client::get`] for another job.
    pub fn resolve_nodes(&self, nspace: Option<&str>) -> Result<String, Error> {
        let own = self.me.nspace.to_string();
        let nspace = nspace.unwrap_or(&own);
        if nspace != self.me.nspace {
            let v = self.get(nspace, Rank::WILDCARD.0, pmix_wire::keys::NODE_LIST, &[])?;
            return v.as_str().map(str::to_owned).ok_or_else(|| {
                status_error(Status::ERR_BAD_PARAM.0, "pmix.nlist is not a string".into())
            });
        }
        if let Some(list) = self.store.job_value(pmix_wire::keys::NODE_LIST)
            && let Some(s) = list.as_str()
        {
            return Ok(s.to_owned());
        }
        let names = self.store.hostnames();
        if names.is_empty() {
            return Err(status_error(
                Status::ERR_NOT_FOUND.0,
                "the job information names no node".into(),
            ));
        }
        Ok(names.join(","))
    }

    /// `PMIx_Query_info`: answers every key of `queries` from this process's store
    /// when it can (job-level values of its own job, or of the job named by a
    /// `pmix.nspace` qualifier when the store has them; none is when a query has
    /// `pmix.qry.rfsh` true), else sends them all to the server (QUERY); `done` gets
    /// the answers, one info per key answered.
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the server's status (`PMIX_ERR_NOT_SUPPORTED` for
    /// keys it does not know, `PMIX_ERROR` from Open MPI 4.1's) goes to `done`.
    pub fn query_then(&self, queries: &[Query], done: Done<Vec<Info>>) -> Result<(), Error> {
        let mut local = Vec::new();
        let all_local = queries.iter().all(|q| {
            let refresh = q.qualifiers.iter().any(|i| {
                i.key == pmix_wire::keys::QUERY_REFRESH_CACHE && i.value == Value::Bool(true)
            });
            let nspace = q
                .qualifiers
                .iter()
                .find(|i| i.key == pmix_wire::keys::NSPACE)
                .and_then(|i| i.value.as_str());
            !refresh
                && nspace.is_none_or(|n| n == self.me.nspace)
                && q.keys.iter().all(|k| {
                    let v = k.as_str().and_then(|k| self.store.job_value(k));
                    v.map(|v| local.push(Info::new(k.clone(), v))).is_some()
                })
        });
        if all_local && !queries.is_empty() {
            done(Ok(local));
            return Ok(());
        }
        self.request_then(
            Request::Query(QueryInfo {
                queries: queries.to_vec(),
            }),
            done,
            |reply| match reply {
                Reply::Query(r) if r.status.0 == 0 => Ok(r.info),
                Reply::Query(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to QUERY".into(),
                )),
                other => expect_ok(other, "QUERY").map(|()| Vec::new()),
            },
        )
    }

    /// Logs `data` with `directives` (LOG); `done` gets the server's answer. As
    /// libpmix2 does, the request carries the current time in seconds only when a
    /// directive `PMIX_LOG_GENERATE_TIMESTAMP` (`pmix.log.gtstmp`) is true, else 0
    /// ("not taken"), so an OpenPMIx server hands its host the same directives for
    /// either library (it adds `PMIX_LOG_TIMESTAMP` for a nonzero stamp): Open MPI's
    /// `MPI_Abort` message, a `pmix.log.msg` blob, goes out byte for byte as
    /// libpmix2 sends it.
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the server's status (`PMIX_ERR_NOT_SUPPORTED` from a
    /// server that does not log) goes to `done`.
    pub fn log_then(
        &self,
        data: &[Info],
        directives: &[Info],
        done: Done<()>,
    ) -> Result<(), Error> {
        // PMIX_INFO_TRUE: a BOOL true, or no value at all.
        let stamp = directives.iter().any(|i| {
            i.key == pmix_wire::keys::LOG_GENERATE_TIMESTAMP
                && matches!(i.value, Value::Bool(true) | Value::Undef)
        });
        let now = if stamp {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        } else {
            0
        };
        self.status_then(
            Request::Log(Log {
                timestamp: pmix_wire::value::Time(now),
                data: data.to_vec(),
                directives: directives.to_vec(),
            }),
            done,
        )
    }

    /// Asks for job control of `targets` with `directives` (JOB_CONTROL); `done` gets
    /// the infos the server answers with.
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the server's status goes to `done`.
    pub fn job_control_then(
        &self,
        targets: &[Proc],
        directives: &[Info],
        done: Done<Vec<Info>>,
    ) -> Result<(), Error> {
        self.request_then(
            Request::JobControl(JobControl {
                targets: targets.to_vec(),
                directives: directives.to_vec(),
            }),
            done,
            |reply| info_reply(reply, "JOB_CONTROL"),
        )
    }

    /// Asks for `monitor` (with event `error` on a failure) and `directives`
    /// (MONITOR); `done` gets the infos the server answers with.
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the server's status goes to `done`.
    pub fn monitor_then(
        &self,
        monitor: &Info,
        error: i32,
        directives: &[Info],
        done: Done<Vec<Info>>,
    ) -> Result<(), Error> {
        self.request_then(
            Request::Monitor(Monitor {
                monitor: monitor.clone(),
                error: pmix_wire::Status(error),
                directives: directives.to_vec(),
            }),
            done,
            |reply| info_reply(reply, "MONITOR"),
        )
    }

    /// Asks the server to start `apps` with job-level directives `info` (SPAWNNB);
    /// `done` gets the new job's namespace.
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the server's status (`PMIX_ERR_NOT_SUPPORTED` from
    /// ours, which does not spawn) goes to `done`.
    pub fn spawn_then(
        &self,
        info: &[Info],
        apps: &[pmix_wire::App],
        done: Done<String>,
    ) -> Result<(), Error> {
        self.request_then(
            Request::Spawn(Spawn {
                info: info.to_vec(),
                apps: apps.to_vec(),
            }),
            done,
            |reply| match reply {
                Reply::Spawn(r) if r.status.0 == 0 => {
                    Ok(r.nspace.as_ref().map(|n| n.to_string()).unwrap_or_default())
                }
                Reply::Spawn(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to SPAWNNB".into(),
                )),
                other => expect_ok(other, "SPAWNNB").map(|()| String::new()),
            },
        )
    }

    /// Connects this process with `procs` (CONNECTNB, a collective of them);
    /// `done` gets the outcome. The other jobs' information the server sends back
    /// is kept, so their job-level values are answered here.
    ///
    /// # Errors
    /// As [`Client::fence_then`]; the server's status (`PMIX_ERR_NOT_SUPPORTED` from
    /// ours) goes to `done`.
    pub fn connect_then(&self, procs: &[Proc], info: &[Info], done: Done<()>) -> Result<(), Error> {
        let store = Arc::clone(&self.store);
        let codec = self.conn.codec().clone();
        self.request_then(
            Request::Connect(pmix_wire::msg::Connect {
                procs: procs.to_vec(),
                info: info.to_vec(),
            }),
            done,
            move |reply| match reply {
                Reply::Connect(r) if r.status.0 == 0 => {
                    for job in &r.jobs {
                        if let Some(ns) = job.nspace.as_str() {
                            file_connected_job(&store, &codec, ns, &job.kvals);
                        }
                    }
                    Ok(())
                }
                Reply::Connect(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to CONNECTNB".into(),
                )),
                other => expect_ok(other, "CONNECTNB"),
            },
        )
    }

    /// Disconnects this process from `procs` (DISCONNECTNB, a collective of them);
    /// `done` gets the outcome.
    ///
    /// # Errors
    /// As [`Client::connect_then`].
    pub fn disconnect_then(
        &self,
        procs: &[Proc],
        info: &[Info],
        done: Done<()>,
    ) -> Result<(), Error> {
        self.status_then(
            Request::Disconnect(pmix_wire::msg::Connect {
                procs: procs.to_vec(),
                info: info.to_vec(),
            }),
            done,
        )
    }

    /// Whether the server computes distances from a device
    /// (`PMIX_DEVICE_DIST_ORIGIN`): it advertises `pmix.rs.dist.origin` true in the
    /// job information (our server does; OpenPMIx 4.2 servers do not).
    pub fn relays_origin(&self) -> bool {
        self.store.job_value(pmix_wire::keys::RS_DIST_ORIGIN) == Some(Value::Bool(true))
    }

    /// Relays a distance request to the server (COMPUTE_DEVICE_DISTANCES, docs/design.md §6):
    /// no topology (the server uses its own), `cpuset` as the process location (the
    /// server falls back to this rank's registered `pmix.cpuset` without one), and
    /// `req`'s types, ids and origin as directives; `done` gets the server's entries.
    ///
    /// # Errors
    /// `PMIX_ERR_NOT_SUPPORTED` for an origin the server does not advertise
    /// ([`Client::relays_origin`]); otherwise as [`Client::fence_then`]. The server's
    /// status (`PMIX_ERR_NOT_FOUND`, `PMIX_ERR_BAD_PARAM`, …) and a malformed entry
    /// (`PMIX_ERROR`) go to `done`.
    pub fn distances_then(
        &self,
        req: &crate::distances::DistanceRequest<'_>,
        cpuset: Option<&pmix_core::CpuSet>,
        done: Done<Vec<RelayedDistance>>,
    ) -> Result<(), Error> {
        let mut info = Vec::new();
        if let Some(origin) = req.origin {
            if !self.relays_origin() {
                return Err(status_error(
                    Status::ERR_NOT_SUPPORTED.0,
                    "the PMIx server does not compute distances from a device \
                     (it does not advertise pmix.rs.dist.origin)"
                        .into(),
                ));
            }
            info.push(Info::new(
                pmix_wire::keys::DEVICE_DIST_ORIGIN,
                Value::string(origin),
            ));
        }
        if let Some(t) = req.types {
            info.push(Info::new(pmix_wire::keys::DEVICE_TYPE, Value::DevType(t.0)));
        }
        for id in req.ids {
            info.push(Info::new(pmix_wire::keys::DEVICE_ID, Value::string(*id)));
        }
        let cpuset = match req.origin {
            Some(_) => None,
            None => req.cpuset.or(cpuset),
        };
        self.request_then(
            Request::ComputeDeviceDistances(ComputeDeviceDistances {
                topo: Topo::default(),
                cpuset: ProcCpuset(cpuset.map(|c| WStr::from(format!("hwloc:{c}").as_str()))),
                info,
            }),
            done,
            |reply| match reply {
                Reply::ComputeDeviceDistances(r) if r.status.0 == 0 => r
                    .dists
                    .into_iter()
                    .map(|d| {
                        let text = |s: Option<WStr>, what: &str| {
                            s.as_ref()
                                .and_then(|w| w.as_str().map(str::to_owned))
                                .ok_or_else(|| {
                                    Error::Internal(format!(
                                        "the PMIx server's distance entry has no {what} \
                                         (or not UTF-8)"
                                    ))
                                })
                        };
                        Ok(RelayedDistance {
                            uuid: text(d.uuid, "uuid")?,
                            osname: text(d.osname, "OS name")?,
                            kind: DeviceTypes(d.ty),
                            mindist: d.mindist,
                            maxdist: d.maxdist,
                        })
                    })
                    .collect(),
                Reply::ComputeDeviceDistances(r) => Err(status_error(
                    r.status.0,
                    "the PMIx server's answer to COMPUTE_DEVICE_DISTANCES".into(),
                )),
                Reply::Status { status, .. } if status.0 != 0 => Err(status_error(
                    status.0,
                    "the PMIx server's answer to COMPUTE_DEVICE_DISTANCES".into(),
                )),
                other => Err(Error::Internal(format!(
                    "the PMIx server answered COMPUTE_DEVICE_DISTANCES with {:?}",
                    other.command()
                ))),
            },
        )
    }

    /// Completes every request still waiting for the server with `error` (their
    /// replies, should they come, are dropped); the connection stays up.
    pub fn fail_pending(&self, error: &Error) {
        self.conn.fail_pending(error);
    }

    /// Asks the server to abort `procs` (none: this whole job) with `status` and
    /// `message`; returns the server's answer (the launcher usually kills this process
    /// soon after).
    ///
    /// # Errors
    /// The server's status; [`Error::Unreach`] when the server is gone.
    pub fn abort(&self, status: i32, message: Option<&str>, procs: &[Proc]) -> Result<(), Error> {
        let req = Request::Abort(Abort {
            status: pmix_wire::Status(status),
            message: message.map(WStr::from),
            procs: procs.to_vec(),
        });
        wait(|done| self.status_then(req, done), Error::lost)
    }

    /// Says goodbye: FINALIZE, its answer awaited at most [`FINALIZE_WAIT`], then the
    /// connection is closed whatever the answer.
    ///
    /// # Errors
    /// The server's status; `PMIX_ERR_TIMEOUT` without an answer in time;
    /// [`Error::Unreach`] when the server is gone. The connection is closed in every
    /// case.
    pub fn finalize(&self) -> Result<(), Error> {
        let r = self
            .conn
            .call(&Request::Finalize, Some(FINALIZE_WAIT))
            .and_then(|reply| expect_ok(reply, "FINALIZE"));
        self.conn.close();
        r
    }
}

/// The server's identity from its name in the URI (`nspace.rank`; no rank: 0).
pub(crate) fn server_id(name: &str) -> Proc {
    match name.rsplit_once('.') {
        Some((ns, r)) => Proc::new(ns, r.parse().unwrap_or(0)),
        None => Proc::new(name, 0),
    }
}

/// What a GETNB reply means for a Get of `key` for `nspace`:`rank` qualified by
/// `quals`: the value of the first `pmix.qual.val` KVAL (a DATA_ARRAY of INFO, the
/// value then its qualifiers) for `key` that carries every one of `quals`, equal.
fn qualified_reply(
    reply: Reply,
    nspace: &str,
    rank: u32,
    key: &str,
    quals: &[Info],
) -> Result<Value, Error> {
    let not_found = || {
        status_error(
            Status::ERR_NOT_FOUND.0,
            format!("no {key:?} for {nspace}:{rank} with those qualifiers"),
        )
    };
    let r = match reply {
        Reply::GetNb(r) if r.status.0 == 0 => r,
        Reply::GetNb(pmix_wire::msg::GetNbReply { status, .. }) | Reply::Status { status, .. }
            if status.0 != 0 =>
        {
            return Err(status_error(
                status.0,
                format!("the PMIx server's answer to a Get of {key:?} for {nspace}:{rank}"),
            ));
        }
        Reply::Status { .. } | Reply::GetNb(_) => return Err(not_found()),
        other => {
            return Err(Error::Internal(format!(
                "the PMIx server answered GETNB with {:?}",
                other.command()
            )));
        }
    };
    let infos = |kv: &Kval| -> Vec<Info> {
        kv.value
            .infos()
            .map(|v| v.into_iter().cloned().collect())
            .unwrap_or_default()
    };
    r.data
        .iter()
        .flat_map(|d| d.kvals.iter())
        .filter(|kv| kv.key == pmix_wire::keys::QUALIFIED_VALUE)
        .map(infos)
        .find_map(|items| {
            let (primary, have) = items.split_first()?;
            let all = quals
                .iter()
                .all(|q| have.iter().any(|h| h.key == q.key && h.value == q.value));
            (primary.key == key && all).then(|| primary.value.clone())
        })
        .ok_or_else(not_found)
}

/// What a GETNB reply means for a Get of `key` for `nspace`:`rank`: its data is kept
/// in `store` (rank UNDEF: the target itself), then the key is looked up there.
/// The node a get's directives name (`PMIX_NODE_INFO`, with `PMIX_HOSTNAME` or
/// `PMIX_NODEID`, or one of those two alone): `Some((name, id))`, both `None` for
/// this node; `None` when the get is not about a node.
fn node_directive(info: &[Info]) -> Option<(Option<&str>, Option<u32>)> {
    let mut node = false;
    let (mut name, mut id) = (None, None);
    for i in info {
        match i.key.as_str() {
            Some(pmix_wire::keys::NODE_INFO) => node = true,
            Some(pmix_wire::keys::HOSTNAME) => name = i.value.as_str(),
            Some(pmix_wire::keys::NODEID) => {
                id = i.value.as_u64().and_then(|v| u32::try_from(v).ok())
            }
            _ => {}
        }
    }
    (node || name.is_some() || id.is_some()).then_some((name, id))
}

fn get_reply(
    store: &Store,
    reply: Reply,
    nspace: &str,
    rank: u32,
    key: &str,
) -> Result<Value, Error> {
    let not_found = || {
        status_error(
            Status::ERR_NOT_FOUND.0,
            format!("no {key:?} for {nspace}:{rank}"),
        )
    };
    let what = || format!("the PMIx server's answer to a Get of {key:?} for {nspace}:{rank}");
    match reply {
        Reply::Status { status, .. } if status.0 == 0 => Err(not_found()),
        Reply::Status { status, .. } => Err(status_error(status.0, what())),
        Reply::GetNb(r) => {
            for d in &r.data {
                if d.proc.rank == Rank::WILDCARD
                    && let [kv] = d.kvals.as_slice()
                    && kv.key == pmix_wire::keys::RS_NODE_STORE
                {
                    // Our server names the namespace's fence segment (docs/serving.md
                    // §5.6): later gets are answered from it. One that cannot be
                    // mapped leaves them to messages.
                    if let Some(path) = kv.value.as_str() {
                        store.map_fence_segment(path);
                    }
                    continue;
                }
                let (ns, rk) = if d.proc.rank == Rank::UNDEF {
                    (nspace.to_owned(), rank)
                } else {
                    (d.proc.nspace.to_string(), d.proc.rank.0)
                };
                store.add_peer_values(&ns, rk, &d.kvals);
            }
            if r.status.0 != 0 {
                return Err(status_error(r.status.0, what()));
            }
            store.peer_value(nspace, rank, key).ok_or_else(not_found)
        }
        other => Err(Error::Internal(format!(
            "the PMIx server answered GETNB with {:?}",
            other.command()
        ))),
    }
}

/// The infos of an answer that is `STATUS`, `SIZE n`, `INFO[n]` (or a lone STATUS):
/// the infos under status 0, the status as an error otherwise.
fn info_reply(reply: Reply, what: &str) -> Result<Vec<Info>, Error> {
    match reply {
        Reply::JobControl(r) | Reply::Monitor(r) | Reply::Query(r) if r.status.0 == 0 => Ok(r.info),
        Reply::JobControl(r) | Reply::Monitor(r) | Reply::Query(r) => Err(status_error(
            r.status.0,
            format!("the PMIx server's answer to {what}"),
        )),
        other => expect_ok(other, what).map(|()| Vec::new()),
    }
}

/// The ranks of a `pmix.lpeers` list (`0,1,2`, ranges `0-3` allowed); `None` when it
/// is not one.
fn parse_ranks(list: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 20 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// Files a connected job's information (a CONNECTNB reply's byte object, the KVALs
/// its REQ would get): each rank's `pmix.pblob` (ours) or `pmix.pdata` (OpenPMIx's)
/// as that rank's values, the node,
/// session and app arrays' values and the other KVALs as job-level (WILDCARD)
/// values, so a get of another job's rank's host name or local rank is answered
/// here, as libpmix2 answers it, not asked of a server that may hold it until its
/// timeout (Open MPI's `mpirun` does). A blob that does not decode is left out.
fn file_connected_job(store: &Store, codec: &pmix_wire::Codec, nspace: &str, kvals: &[Kval]) {
    let mut job = Vec::with_capacity(kvals.len());
    for kv in kvals {
        match (kv.key.as_str().unwrap_or_default(), &kv.value) {
            (pmix_wire::keys::PROC_BLOB, Value::ByteObject(b)) => {
                if let Ok(blob) =
                    pmix_wire::msg::ProcBlob::from_bytes(&b.0, codec.buffer_type, codec.limits)
                    && let Ok(values) = blob.kvals()
                {
                    store.add_peer_values(nspace, blob.rank.0, &values);
                }
            }
            (pmix_wire::keys::PROC_INFO_ARRAY, v) => {
                // OpenPMIx's form (mpirun's): `pmix.rank` first, then its values.
                if let Some(infos) = v.infos()
                    && let Some((first, rest)) = infos.split_first()
                    && first.key == pmix_wire::keys::RANK
                    && let Some(rank) = first.value.as_u64().and_then(|r| u32::try_from(r).ok())
                {
                    let values: Vec<Kval> = rest
                        .iter()
                        .map(|i| Kval {
                            key: i.key.clone(),
                            value: i.value.clone(),
                        })
                        .collect();
                    store.add_peer_values(nspace, rank, &values);
                }
            }
            (
                pmix_wire::keys::NODE_INFO_ARRAY
                | pmix_wire::keys::SESSION_INFO_ARRAY
                | pmix_wire::keys::APP_INFO_ARRAY,
                v,
            ) => match v.infos() {
                Some(infos) => job.extend(infos.iter().map(|i| Kval {
                    key: i.key.clone(),
                    value: i.value.clone(),
                })),
                None => job.push(kv.clone()),
            },
            _ => job.push(kv.clone()),
        }
    }
    store.add_peer_values(nspace, Rank::WILDCARD.0, &job);
}
