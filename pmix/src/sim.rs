//! A job in memory: real [`Client`]s against a real server [`Core`], in one
//! process, with no socket, no thread and no clock of its own (docs/threads.md).
//!
//! Each client's link is an in-memory queue: the frame a client writes is handed to
//! the server core (as the server's I/O layer hands it a frame it read), and what the
//! core outputs is handed to the client core of its connection (as the client's
//! reader thread hands it bytes it read). Whoever writes first drives the traffic
//! ([`Job::pump`]) until nothing is left, on its own thread: completions and event
//! sinks run there, and a request they start is queued and carried by the same loop,
//! so nothing re-enters the server core. Time passes only when the test says so
//! ([`Job::advance`]), which is what makes timeouts testable without waiting.
//!
//! A blocking call whose answer the server gives at once (REQ at connect, a get of
//! committed data, publish) returns as over a socket; one that waits for other
//! clients (a fence) would wait forever on one thread: use the completion-taking
//! (`_then`) form and [`Job::pump`].
//!
//! Dropping a [`Client`] without `finalize` is a rank that died: its connection
//! closes without FINALIZE.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use pmix_wire::frame::{Decoded, FrameDecoder};
use pmix_wire::{BufferType, ConnectMsg, Event, Limits};

use crate::client::conn::{Conn, Link, Shared};
use crate::client::core::{Handshake, Step};
use crate::client::{Client, ServerEnv};
use crate::error::Error;
use crate::server::core::{ConnId, Core, CoreConfig, NamespaceSpec, Output, Upcall};

/// The host name of a job made by [`Job::single_node`].
pub const HOST: &str = "node0";

/// A server core and the clients connected to it in memory (module docs).
#[derive(Clone)]
pub struct Job {
    shared: Arc<JobShared>,
}

struct JobShared {
    state: Mutex<State>,
    /// What clients wrote, not yet served.
    inbound: Mutex<VecDeque<Input>>,
    /// What the core output, not yet delivered, in its order.
    outbox: Mutex<VecDeque<(Arc<Shared>, ToClient)>>,
    pumping: AtomicBool,
}

struct State {
    core: Core,
    now: Instant,
    next_conn: ConnId,
    clients: HashMap<ConnId, Weak<Shared>>,
    upcalls: Vec<Upcall>,
}

/// What a client did to its link.
enum Input {
    /// Wrote one frame.
    Frame(ConnId, Vec<u8>),
    /// Closed it.
    Closed(ConnId),
}

/// What the core's outputs mean for one client.
enum ToClient {
    Bytes(Vec<u8>),
    Lost(String),
}

struct MemLink {
    job: Weak<JobShared>,
    conn: ConnId,
}

impl Link for MemLink {
    fn write(&self, bytes: &[u8]) -> Result<(), Error> {
        let job = self
            .job
            .upgrade()
            .ok_or_else(|| Error::Unreach("the in-memory job is gone".into()))?;
        job.push(Input::Frame(self.conn, bytes.to_vec()));
        Ok(())
    }

    fn shutdown(&self) {
        if let Some(job) = self.job.upgrade() {
            job.push(Input::Closed(self.conn));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl JobShared {
    fn push(&self, input: Input) {
        lock(&self.inbound).push_back(input);
        self.pump();
    }

    /// Carries the traffic until nothing is left (unless another caller already
    /// does: it will carry what was just queued). Deliveries first, in the order the
    /// core made them, then the next input.
    fn pump(&self) {
        loop {
            if self
                .pumping
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return;
            }
            loop {
                let next = lock(&self.outbox).pop_front();
                if let Some((client, what)) = next {
                    match what {
                        ToClient::Bytes(b) => {
                            client.receive(&b);
                        }
                        ToClient::Lost(why) => client.lose(why),
                    }
                    continue;
                }
                let Some(input) = lock(&self.inbound).pop_front() else {
                    break;
                };
                self.serve(input);
            }
            self.pumping.store(false, Ordering::Release);
            // Something queued between the last pop and the store is carried by the
            // next round (its writer saw the loop still running).
            if lock(&self.inbound).is_empty() && lock(&self.outbox).is_empty() {
                return;
            }
        }
    }

    /// Hands `input` to the core and queues what it outputs.
    fn serve(&self, input: Input) {
        let mut st = lock(&self.state);
        let now = st.now;
        let mut out = lock(&self.outbox);
        match input {
            Input::Frame(conn, bytes) => {
                match FrameDecoder::new(Limits::DEFAULT).decode(&bytes) {
                    Ok(Decoded::Item { item, .. }) => st.core.frame(conn, &item, now),
                    // A client core writes whole frames; anything else ends the link.
                    _ => st.core.closed(conn, now),
                }
            }
            Input::Closed(conn) => {
                st.core.closed(conn, now);
                if let Some(c) = st.clients.remove(&conn).and_then(|w| w.upgrade()) {
                    out.push_back((c, ToClient::Lost("the connection was closed".into())));
                }
            }
        }
        drain(&mut st, &mut out);
    }
}

/// Moves the core's outputs into `out` (and its upcalls into the state).
fn drain(st: &mut State, out: &mut VecDeque<(Arc<Shared>, ToClient)>) {
    while let Some(o) = st.core.poll_output() {
        match o {
            Output::Send { conn, bytes } => {
                if let Some(c) = st.clients.get(&conn).and_then(Weak::upgrade) {
                    out.push_back((c, ToClient::Bytes(bytes)));
                }
            }
            Output::Close { conn } => {
                if let Some(c) = st.clients.remove(&conn).and_then(|w| w.upgrade()) {
                    out.push_back((
                        c,
                        ToClient::Lost("the PMIx server closed the connection".into()),
                    ));
                }
            }
            Output::Host(up) => st.upcalls.push(up),
            // Only a host asks (`Core::dmodex_request`), and this job has none.
            Output::DmodexAnswer { .. } | Output::Ds21 { .. } => {}
        }
    }
}

impl Job {
    /// A job around `core` (its namespaces already registered), at time `now`.
    pub fn new(core: Core, now: Instant) -> Job {
        Job {
            shared: Arc::new(JobShared {
                state: Mutex::new(State {
                    core,
                    now,
                    next_conn: 1,
                    clients: HashMap::new(),
                    upcalls: Vec::new(),
                }),
                inbound: Mutex::new(VecDeque::new()),
                outbox: Mutex::new(VecDeque::new()),
                pumping: AtomicBool::new(false),
            }),
        }
    }

    /// A server `srv`.0 on host [`HOST`], run as this process's effective uid and
    /// gid, with namespace `nspace` of `size` ranks on that host.
    ///
    /// # Errors
    /// The core's refusal of the namespace (an empty or too long name, no ranks).
    pub fn single_node(nspace: &str, size: u32) -> Result<Job, Error> {
        let (uid, gid) = crate::os::effective_ids();
        let mut core = Core::new(CoreConfig::new("srv", 0, HOST, uid, gid));
        core.add_namespace(NamespaceSpec::single_node(nspace, size, uid, gid))
            .map_err(|e| Error::BadParam(e.to_string().into()))?;
        Ok(Job::new(core, Instant::now()))
    }

    /// Runs `f` on the server core (to register a namespace, raise an event, report
    /// an exit), then carries the traffic that made.
    pub fn with_core<R>(&self, f: impl FnOnce(&mut Core, Instant) -> R) -> R {
        let r = {
            let mut st = lock(&self.shared.state);
            let now = st.now;
            let r = f(&mut st.core, now);
            drain(&mut st, &mut lock(&self.shared.outbox));
            r
        };
        self.pump();
        r
    }

    /// Lets `d` pass on the job's clock and runs the core's timers that are due.
    pub fn advance(&self, d: Duration) {
        let now = {
            let mut st = lock(&self.shared.state);
            st.now += d;
            st.now
        };
        self.with_core(|core, _| core.tick(now));
    }

    /// Carries every frame queued so far, and what they cause, until nothing is
    /// left.
    pub fn pump(&self) {
        self.shared.pump();
    }

    /// The upcalls the core made so far, in order (connections, finalizes, aborts,
    /// losses): this job has no host, so they are only recorded.
    pub fn upcalls(&self) -> Vec<Upcall> {
        lock(&self.shared.state).upcalls.clone()
    }

    /// Connects rank `rank` of `nspace` as a launched client: the handshake, then
    /// REQ, as [`Client::connect`] does over a socket. Its events go to `events`.
    ///
    /// # Errors
    /// [`Error::Unreach`] when the core refuses the handshake; REQ's errors.
    pub fn client(
        &self,
        nspace: &str,
        rank: u32,
        events: impl Fn(Event) + Send + Sync + 'static,
    ) -> Result<Client, Error> {
        let env = self.env(nspace, rank);
        let (conn, _) = self.connect(&env, false, Box::new(events))?;
        Client::over(conn, &env, HOST)
    }

    /// Connects a tool that asks the server for its identity, as
    /// [`Client::connect_tool`] does.
    ///
    /// # Errors
    /// As [`Job::client`].
    pub fn tool(&self, events: impl Fn(Event) + Send + Sync + 'static) -> Result<Client, Error> {
        let env = self.env("", 0);
        let (conn, assigned) = self.connect(&env, true, Box::new(events))?;
        let id = crate::client::conn::tool_identity(&env, assigned)?;
        Client::tool_over(conn, id, &env, HOST)
    }

    fn env(&self, nspace: &str, rank: u32) -> ServerEnv {
        ServerEnv {
            nspace: nspace.to_owned(),
            rank,
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            server: "srv.0".into(),
            uri_var: "PMIX_SERVER_URI42",
            buffer_type: BufferType::NonDescribed,
            hostname: Some(HOST.into()),
            channel: None,
            node_store: false,
        }
    }

    fn connect(
        &self,
        env: &ServerEnv,
        tool: bool,
        events: crate::client::conn::EventSink,
    ) -> Result<(Conn, Option<(String, u32)>), Error> {
        let (mut handshake, hello) = Handshake::start(env, tool)?;
        let msg = match ConnectMsg::decode(&hello, &Limits::DEFAULT) {
            Ok(Decoded::Item { item, .. }) => item,
            _ => {
                return Err(Error::Internal(
                    "our connect message does not decode".into(),
                ));
            }
        };
        let (uid, _) = crate::os::effective_ids();
        let (conn_id, reply) = {
            let mut st = lock(&self.shared.state);
            let conn_id = st.next_conn;
            st.next_conn += 1;
            let now = st.now;
            let reply = st.core.connect(conn_id, &msg, uid, now).map_err(|r| {
                Error::Unreach(format!("the server core refused the handshake: {r:?}").into())
            })?;
            (conn_id, reply)
        };
        let (core, assigned) = match handshake.receive(&reply) {
            Step::Done(core, assigned) => (core, assigned),
            Step::Need(n) => {
                return Err(Error::Internal(format!(
                    "the handshake reply is {n} bytes short"
                )));
            }
            Step::Refused { error, .. } => return Err(error),
        };
        let link = Arc::new(MemLink {
            job: Arc::downgrade(&self.shared),
            conn: conn_id,
        });
        let conn = Conn::over(*core, link, events);
        lock(&self.shared.state)
            .clients
            .insert(conn_id, Arc::downgrade(conn.shared()));
        // Cached events the connect queued go out now.
        self.with_core(|_, _| ());
        Ok((conn, assigned))
    }
}
