//! A PMIx library instance: its role, identity, topology, progress thread, and the rules
//! every call follows (docs/design.md §6).
//!
//! Beside it: its progress thread (`progress.rs`), the process-wide instance of the C
//! and Python faces (`global.rs`, public as `pmix::global`) and where a request this
//! process cannot answer alone goes (`relay.rs`). The calls made through the instance
//! are in `client/calls/`, what it keeps of its groups in `client/membership/`.
//!
//! An instance of every role lives here, a server's too (`PMIx_server_init`): it
//! holds the server it embeds as an [`Embedded`], which the crate's `embed.rs`
//! implements, so nothing here names the server.

pub mod global;
pub(crate) mod progress;
mod relay;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix_core::{CpuSet, Topology};

use crate::client::events::{EventInfo, Registry, run_chain};
use crate::client::{Client, ServerEnv};
use crate::distances::{Answer, DistanceRequest, Distances, OwnedRequest};
use crate::error::{Error, LoadError};
use crate::os::BindEnvelope;
use crate::service::{AnswerError, Service};
use crate::topology;
use progress::{Job, Progress};
use relay::Relay;

/// The role an instance was initialised in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An application process (`PMIx_Init`).
    Client,
    /// A tool (`PMIx_tool_init`).
    Tool,
    /// A server embedded in a launcher (`PMIx_server_init`).
    Server,
}

/// Whether a call waits for its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The blocking form (or a non-blocking form given no callback): refused with
    /// [`Error::WouldBlock`] on the progress thread.
    Blocking,
    /// The non-blocking form with a callback: allowed anywhere.
    NonBlocking,
}

pub use crate::client::ProcId;

/// The server a [`Role::Server`] instance embeds, as the instance holds it: the client
/// side names no server type, and `embed.rs` at the crate's top implements this for
/// `pmix::Server` ([`Pmix::attach_server`]).
pub(crate) trait Embedded: Send + Sync {
    /// Raises a notification of the host (`PMIx_Notify_event` in the server's process,
    /// range beyond it) among the embedded server's clients.
    ///
    /// # Errors
    /// [`Error::Unreach`] once the server has stopped.
    fn raise_event(
        &self,
        status: i32,
        source: Option<&pmix_wire::Proc>,
        info: &[pmix_wire::Info],
        range: pmix_wire::DataRange,
    ) -> Result<(), Error>;

    /// The server itself, for [`Pmix::server`] to hand back.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Options of [`Pmix::init`].
#[derive(Clone, Debug, Default)]
pub struct InitOptions {
    /// The topology source name (`xml:FILE`, `sysfs`, …); `None` reads the environment
    /// ([`topology::source_name_from_env`]).
    pub topology_source: Option<String>,
    /// `PMIX_HOSTNAME`: the host name used in device uuids instead of the topology's.
    pub hostname: Option<String>,
    /// Whether a client or tool connects to a server ([`Connect::FromEnv`] by
    /// default).
    pub connect: Connect,
    /// The programming model the caller declares (`PMIX_PROGRAMMING_MODEL`,
    /// `PMIX_MODEL_LIBRARY_NAME`, `PMIX_MODEL_LIBRARY_VERSION`,
    /// `PMIX_THREADING_MODEL` of the init infos: [`InitOptions::model_of`]): a
    /// successful init raises `PMIX_MODEL_DECLARED` with them in this process.
    pub model: Vec<pmix_wire::Info>,
}

impl InitOptions {
    /// The keys of a programming-model declaration ([`InitOptions::model`]).
    pub const MODEL_KEYS: [&'static str; 4] = [
        pmix_wire::keys::PROGRAMMING_MODEL,
        pmix_wire::keys::MODEL_LIBRARY_NAME,
        pmix_wire::keys::MODEL_LIBRARY_VERSION,
        pmix_wire::keys::THREADING_MODEL,
    ];

    /// Whether `key` is one of [`InitOptions::MODEL_KEYS`].
    pub fn is_model_key(key: &[u8]) -> bool {
        Self::MODEL_KEYS.iter().any(|k| k.as_bytes() == key)
    }

    /// The model declarations among `infos` (see [`InitOptions::model`]), in order.
    pub fn model_of(infos: &[pmix_wire::Info]) -> Vec<pmix_wire::Info> {
        infos
            .iter()
            .filter(|i| Self::is_model_key(i.key.as_bytes()))
            .cloned()
            .collect()
    }
}

/// Whether [`Pmix::init`] as [`Role::Client`] or [`Role::Tool`] connects to a server
/// (a server never does).
#[derive(Clone, Debug, Default)]
pub enum Connect {
    /// To the server the environment names, as OpenPMIx's `PMIx_Init` and
    /// `PMIx_tool_init` do: a client with [`ServerEnv::from_env`] (a singleton when it
    /// names none), a tool with [`ServerEnv::tool_from_vars`] (a `PMIX_SERVER_URI*`
    /// variable; unconnected without one).
    #[default]
    FromEnv,
    /// To this server (a tool uses only its address and name: the server assigns
    /// the tool's identity).
    To(ServerEnv),
    /// Never: a singleton whatever the environment says.
    Never,
}

/// The callback of [`Pmix::compute_distances_nb`]: run once, on the progress thread,
/// with the final result.
pub type DistancesCallback = Box<dyn FnOnce(Result<Distances, Error>) + Send + 'static>;

/// A PMIx library instance. Cheap to clone (a shared handle); every clone sees the same
/// state, so after [`Pmix::finalize`] every clone's calls return [`Error::Init`].
#[derive(Clone)]
pub struct Pmix {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    role: Role,
    pub(crate) proc_id: ProcId,
    /// The server connection of a launched client.
    pub(crate) client: Option<Arc<Client>>,
    /// The event handlers.
    pub(crate) events: Arc<Mutex<Registry>>,
    /// The groups this process is a member of, their members as it knows them, and
    /// the rank-state trackers (the failures seen, a tracker per group asked about):
    /// one owner, one lock.
    pub(crate) groups: Arc<Mutex<crate::client::membership::Membership>>,
    /// What `PMIx_Store_internal` filed in a process with no server (a leaf lock).
    pub(crate) internal: Mutex<std::collections::HashMap<(String, u32, String), pmix_wire::Value>>,
    /// The server a [`Role::Server`] instance embeds ([`Pmix::attach_server`]): its
    /// notifications go to that server's clients.
    pub(crate) server: std::sync::OnceLock<Box<dyn Embedded>>,
    finalized: AtomicBool,
    local: Arc<Local>,
    pub(crate) progress: Progress,
}

/// What a query answered in this process needs: the [`Service`] (the topology, loaded
/// once on first use, the process's binding, the query) and the way to the server for
/// what it cannot answer. Shared with the progress thread's jobs, which load the
/// topology and resolve the caller's cpuset there; the jobs hold this, not the
/// instance, so a queued job never keeps the progress thread itself alive.
struct Local {
    service: Service,
    relay: Relay,
}

impl Local {
    /// The topology, loaded on first use.
    ///
    /// # Errors
    /// [`Error::Unreach`] when it cannot be loaded (and no server can be asked).
    fn topology(&self) -> Result<Arc<Topology>, Error> {
        match self.service.topology() {
            Ok(t) => Ok(Arc::clone(t)),
            Err(e) => Err(self.unanswered(AnswerError::Topology(e.clone()))),
        }
    }

    /// The process's binding.
    ///
    /// # Errors
    /// [`Error::Unreach`] when the OS does not tell (and no server can be asked).
    fn own_cpuset(&self, envelope: BindEnvelope) -> Result<CpuSet, Error> {
        self.service
            .own_cpuset(envelope)
            .map_err(|e| self.unanswered(AnswerError::Binding(e)))
    }

    /// What a topology or binding that could not be had here becomes: the relay's
    /// error (`PMIX_ERR_UNREACH`).
    fn unanswered(&self, e: AnswerError) -> Error {
        match e {
            AnswerError::Distance(e) => Error::Distance(e),
            other => self.relay.unreachable(other.to_string()),
        }
    }

    /// Answers `req` in this process ([`Service::answer`]) when it can, else tells
    /// which server to relay it to: `f` gets the local answer (and is taken from its
    /// option only then).
    fn here<R>(
        &self,
        req: &DistanceRequest<'_>,
        f: &mut Option<impl FnOnce(Answer<'_>) -> R>,
    ) -> Here<R> {
        let answered = self.service.answer(req, |topology, entries| {
            f.take().map(|f| f(Answer::Local { topology, entries }))
        });
        match answered {
            Ok(Some(r)) => Here::Answered(Ok(r)),
            Ok(None) => Here::Answered(Err(Error::Internal(
                "a distance answer was delivered twice".into(),
            ))),
            Err(AnswerError::Distance(e)) => Here::Answered(Err(Error::Distance(e))),
            Err(other) => match &self.relay {
                Relay::Connected(client) => Here::Relay(Arc::clone(client)),
                relay => Here::Answered(Err(relay.unreachable(other.to_string()))),
            },
        }
    }

    /// The process location a relayed request carries when it names none: this
    /// process's binding if the OS tells it (else the server uses the rank's
    /// registered `pmix.cpuset`).
    fn relay_cpuset(&self, req: &DistanceRequest<'_>) -> Option<CpuSet> {
        match (req.origin, req.cpuset) {
            (None, None) => self.service.own_cpuset(BindEnvelope::Process).ok(),
            _ => None,
        }
    }

    /// Answers `req` here, or relays it to the server and waits for the answer
    /// (docs/design.md §6), and hands the entries to `f`.
    ///
    /// # Errors
    /// [`Error::Unreach`] without a topology or a cpuset and no server to ask;
    /// `PMIX_ERR_NOT_SUPPORTED` for an origin the server does not compute from; the
    /// server's status; the query's own error.
    fn answer<R>(
        &self,
        req: &DistanceRequest<'_>,
        f: impl FnOnce(Answer<'_>) -> R,
    ) -> Result<R, Error> {
        let mut f = Some(f);
        match self.here(req, &mut f) {
            Here::Answered(r) => r,
            Here::Relay(client) => {
                let cpuset = self.relay_cpuset(req);
                let rows = crate::client::wait(
                    |done| client.distances_then(req, cpuset.as_ref(), done),
                    relay_lost,
                )?;
                let f = f.ok_or_else(|| {
                    Error::Internal("a distance answer was delivered twice".into())
                })?;
                Ok(f(Answer::Relayed(&rows)))
            }
        }
    }
}

/// What [`Local::here`] found.
enum Here<R> {
    /// The request was answered here (or failed here for good).
    Answered(Result<R, Error>),
    /// No topology or cpuset here: this server is to be asked.
    Relay(Arc<Client>),
}

/// What a non-blocking request's progress-thread step found: the converted answer,
/// or what relaying needs (the conversion goes with it).
enum Step<R, F> {
    Done(R),
    Relay {
        client: Arc<Client>,
        convert: F,
        req: OwnedRequest,
        cpuset: Option<CpuSet>,
    },
}

/// Sends a relayed non-blocking request: `callback` gets the converted reply on the
/// progress thread (queued with `ticket`), or, when it cannot be sent, the error at
/// once (this runs on the progress thread already).
fn relay_nb<R: 'static>(
    client: &Client,
    req: &OwnedRequest,
    cpuset: Option<&CpuSet>,
    convert: impl FnOnce(Answer<'_>) -> R + Send + 'static,
    callback: impl FnOnce(Result<R, Error>) + Send + 'static,
    ticket: progress::Ticket,
) {
    // The callback is taken by whichever runs: the reply's job, or the send's failure
    // here (the completion is dropped unrun when the send fails).
    let slot = Arc::new(Mutex::new(Some(callback)));
    let on_reply = Arc::clone(&slot);
    let sent = req.with_request(|req| {
        client.distances_then(
            req,
            cpuset,
            Box::new(move |reply| {
                ticket.post(Job::request(
                    move || reply.map(|rows| convert(Answer::Relayed(&rows))),
                    move |r| {
                        let cb = on_reply
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .take();
                        if let Some(cb) = cb {
                            cb(r);
                        }
                    },
                ));
            }),
        )
    });
    if let Err(e) = sent {
        let cb = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(cb) = cb {
            cb(Err(e));
        }
    }
}

/// The error of a relayed request whose connection went before the reply.
fn relay_lost() -> Error {
    Error::Unreach("the connection to the PMIx server was lost before it answered".into())
}

impl std::fmt::Debug for Pmix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pmix")
            .field("role", &self.inner.role)
            .field("proc", &self.inner.proc_id)
            .field("source", &self.inner.local.service.source_name())
            .field("finalized", &self.is_finalized())
            .finish()
    }
}

pub(crate) fn lock_events(r: &Mutex<Registry>) -> MutexGuard<'_, Registry> {
    // No user code runs under this lock (handlers run on a copy of the chain).
    r.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Rank 0 of `nspace`, the identity of a process without a server.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when `nspace` is no namespace (never for the names made here).
fn single(nspace: String) -> Result<ProcId, Error> {
    crate::client::proc_id(&nspace, 0)
}

/// Prints the one diagnostic line of a blocking call refused on the progress thread.
pub(crate) fn would_block(call: &'static str) -> Error {
    let line = format!(
        "pmix-rs: {call}: blocking call made on the PMIx progress thread (from a callback or event \
         handler): returning PMIX_ERR_WOULD_BLOCK, nothing done; use the non-blocking form or call \
         it from a thread of your own\n"
    );
    // One write, so the line is not interleaved with other output.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    Error::WouldBlock { call }
}

impl Pmix {
    /// Initialises an instance in `role` and starts its progress thread.
    ///
    /// A client connects to a server as [`InitOptions::connect`] says (by default, to
    /// the one the environment names, as OpenPMIx: [`ServerEnv::from_env`]) and takes
    /// its namespace and rank from there ([`Client::connect`]). A client with no
    /// server starts as a *singleton* (namespace `pmix-rs.singleton.<pid>`, rank 0) and
    /// a tool as `pmix-rs.tool.<pid>`, rank 0: both succeed and answer what they can
    /// locally; requests that would need a server return [`Error::Unreach`]. OpenPMIx
    /// returns `PMIX_ERR_UNREACH` from `PMIx_Init` in that situation and stays usable;
    /// callers written for it accept both. The topology is not read here but on first
    /// use.
    ///
    /// # Errors
    /// [`Error::BadParam`] for a hostname that is empty, longer than 255 bytes or holds
    /// a NUL, or a malformed server environment; [`ServerEnv::from_env`]'s and
    /// [`Client::connect`]'s errors (the server cannot be reached or refuses this
    /// process: [`Error::Unreach`]); [`Error::Os`] if the progress thread cannot be
    /// started.
    #[doc(alias = "PMIx_Init")]
    #[doc(alias = "PMIx_tool_init")]
    #[doc(alias = "PMIx_server_init")]
    pub fn init(role: Role, options: InitOptions) -> Result<Pmix, Error> {
        let source_name = options
            .topology_source
            .clone()
            .unwrap_or_else(topology::source_name_from_env);
        let service = Service::new(source_name, options.hostname.clone())?;
        let pid = std::process::id();
        let server = match (role, &options.connect) {
            (Role::Client, Connect::FromEnv) => ServerEnv::from_env()?,
            (Role::Tool, Connect::FromEnv) => ServerEnv::tool_from_vars(|k| std::env::var(k).ok())?,
            (Role::Client | Role::Tool, Connect::To(env)) => Some(env.clone()),
            _ => None,
        };
        let progress = Progress::start()?;
        let events: Arc<Mutex<Registry>> = Arc::default();
        let groups: Arc<Mutex<crate::client::membership::Membership>> = Arc::default();
        let client = match &server {
            Some(env) => {
                let host = options
                    .hostname
                    .clone()
                    .or_else(|| env.hostname.clone())
                    .unwrap_or_else(crate::os::short_hostname);
                let (poster, registry) = (progress.poster(), Arc::clone(&events));
                let memberships = Arc::clone(&groups);
                // Failures are believed only from the server and its host's daemons.
                let server = crate::client::server_id(&env.server);
                // The server's events run through the handlers on the progress thread
                // (once a stop has begun they are dropped).
                let sink = move |ev: pmix_wire::Event| {
                    let registry = Arc::clone(&registry);
                    let memberships = Arc::clone(&memberships);
                    let server = server.clone();
                    let _ = poster.post(Job::plain(move || {
                        let ev = EventInfo {
                            status: ev.status.0,
                            source: ev.source,
                            info: ev.info,
                        };
                        crate::client::membership::group_event(&memberships, &ev, &server);
                        let chain = lock_events(&registry).chain(&ev);
                        run_chain(&chain, &ev);
                    }));
                };
                Some(Arc::new(if role == Role::Tool {
                    Client::connect_tool(env, &host, sink)?
                } else {
                    Client::connect(env, &host, sink)?
                }))
            }
            None => None,
        };
        let (proc_id, relay) = match (&client, role) {
            (Some(c), _) => (*c.proc_id(), Relay::Connected(Arc::clone(c))),
            (None, Role::Client) => (
                single(format!("pmix-rs.singleton.{pid}"))?,
                Relay::NotConnected,
            ),
            (None, Role::Tool) => (single(format!("pmix-rs.tool.{pid}"))?, Relay::NotConnected),
            (None, Role::Server) => (single(format!("pmix-rs.server.{pid}"))?, Relay::IsServer),
        };
        let pmix = Pmix {
            inner: Arc::new(Inner {
                role,
                proc_id,
                client,
                events,
                groups,
                internal: Mutex::default(),
                server: std::sync::OnceLock::new(),
                finalized: AtomicBool::new(false),
                local: Arc::new(Local { service, relay }),
                progress,
            }),
        };
        pmix.declare_model(&options.model);
        Ok(pmix)
    }

    /// Raises `PMIX_MODEL_DECLARED` in this process alone (range PROC_LOCAL, marked
    /// `PMIX_EVENT_NON_DEFAULT`) with `model`, the model declarations an init was
    /// given ([`InitOptions::model`]); nothing when there are none. OpenPMIx's client
    /// does so at each `PMIx_Init`: a handler registered later for that code gets it.
    pub(crate) fn declare_model(&self, model: &[pmix_wire::Info]) {
        if model.is_empty() {
            return;
        }
        let mut info = model.to_vec();
        info.push(pmix_wire::Info::new(
            pmix_wire::keys::EVENT_NON_DEFAULT,
            true,
        ));
        // Refused only once a stop has begun: nobody is left to hear it.
        let _ = self.notify_event(
            pmix_core::Status::MODEL_DECLARED.0,
            None,
            pmix_wire::DataRange::PROC_LOCAL,
            &info,
            |_| {},
        );
    }

    /// Makes `server` the one this [`Role::Server`] instance embeds (the server side
    /// of [`Pmix::attach_server`], which names the server's type).
    ///
    /// # Errors
    /// [`Error::BadParam`] when the instance is not a server or has a server already.
    pub(crate) fn embed(&self, server: Box<dyn Embedded>) -> Result<(), Error> {
        if self.inner.role != Role::Server {
            return Err(Error::BadParam(
                "only a server instance embeds a server".into(),
            ));
        }
        self.inner
            .server
            .set(server)
            .map_err(|_| Error::BadParam("a server is attached already".into()))
    }

    /// What [`Pmix::embed`] attached, if anything.
    pub(crate) fn embedded(&self) -> Option<&dyn Embedded> {
        self.inner.server.get().map(|e| &**e)
    }

    /// The server connection of a launched client (`None` for a singleton, a tool or
    /// a server).
    pub fn client(&self) -> Option<&Client> {
        self.inner.client.as_deref()
    }

    /// The role given at init.
    pub fn role(&self) -> Role {
        self.inner.role
    }

    /// This process's identity.
    pub fn proc_id(&self) -> &ProcId {
        &self.inner.proc_id
    }

    /// The topology source name chosen at init (`xml:/path`, `sysfs`).
    pub fn source_name(&self) -> &str {
        self.inner.local.service.source_name()
    }

    /// The instance's query service: its topology and the process's binding, answered
    /// in this process without the instance's rules (no [`Pmix::admit`] checks, no
    /// relay). For the layers above that answer for themselves (the coming server).
    pub fn service(&self) -> &Service {
        &self.inner.local.service
    }

    /// `true` once [`Pmix::finalize`] has run.
    pub fn is_finalized(&self) -> bool {
        self.inner.finalized.load(Ordering::Acquire)
    }

    /// `true` when called on this instance's progress thread (inside a callback).
    pub fn on_progress_thread(&self) -> bool {
        self.inner.progress.is_current()
    }

    /// `true` once a stop of the progress engine has begun (by
    /// [`Pmix::stop_progress`] or [`Pmix::finalize`]): new requests are refused from
    /// then on, while those accepted before still run.
    pub fn progress_stopped(&self) -> bool {
        self.inner.progress.is_stopped()
    }

    /// The checks every call makes first, in this order: [`Error::Init`] after
    /// finalize; [`Error::WouldBlock`] for a [`Mode::Blocking`] call on the progress
    /// thread (printing one diagnostic line naming `call` on stderr); and
    /// [`Error::NotAvailable`] once the progress engine is stopped.
    ///
    /// The runtime's own calls make these checks; the C ABI makes them too, before it
    /// decodes its arguments, so that `PMIX_ERR_INIT` wins over a bad argument.
    ///
    /// # Errors
    /// As listed above.
    pub fn admit(&self, call: &'static str, mode: Mode) -> Result<(), Error> {
        if self.is_finalized() {
            return Err(Error::Init);
        }
        if mode == Mode::Blocking && self.on_progress_thread() {
            return Err(would_block(call));
        }
        if self.progress_stopped() {
            return Err(Error::NotAvailable);
        }
        Ok(())
    }

    /// Finalises the instance: refuses new requests at once, then returns when every
    /// callback accepted before has run and the progress thread has stopped;
    /// afterwards every call on any clone returns [`Error::Init`]. Concurrent stops and
    /// finalizes all wait for the same end: none returns while a callback still runs.
    ///
    /// # Errors
    /// [`Error::Init`] if already finalised (after waiting for that finalize's callbacks
    /// when it is still running them); [`Error::WouldBlock`] on the progress thread (it
    /// would wait for itself), where nothing changes.
    #[doc(alias = "PMIx_Finalize")]
    #[doc(alias = "PMIx_tool_finalize")]
    pub fn finalize(&self) -> Result<(), Error> {
        self.finalize_as("PMIx_Finalize")
    }

    /// [`Pmix::finalize`], naming `call` in the diagnostic.
    pub(crate) fn finalize_as(&self, call: &'static str) -> Result<(), Error> {
        if self.on_progress_thread() {
            return Err(if self.is_finalized() {
                Error::Init
            } else {
                would_block(call)
            });
        }
        let already = self.inner.finalized.swap(true, Ordering::AcqRel);
        // The first finalize says goodbye to the server (its answer awaited a bounded
        // time; the connection is closed whatever it is).
        if !already && let Some(c) = &self.inner.client {
            let _ = c.finalize();
        }
        // The first finalize stops the engine; a later one waits for that stop to end.
        self.inner.progress.stop();
        if already { Err(Error::Init) } else { Ok(()) }
    }

    /// Stops the progress engine: refuses new requests at once (afterwards distance
    /// calls return [`Error::NotAvailable`]), then returns when every callback accepted
    /// before has run. Idempotent; concurrent stops and finalizes all wait for the same
    /// end.
    ///
    /// # Errors
    /// [`Error::Init`] after finalize (once that finalize's callbacks have all run);
    /// [`Error::WouldBlock`] on the progress thread (stopping waits for the thread),
    /// where nothing changes.
    #[doc(alias = "PMIx_Progress_thread_stop")]
    pub fn stop_progress(&self) -> Result<(), Error> {
        self.stop_progress_as("PMIx_Progress_thread_stop")
    }

    /// [`Pmix::stop_progress`], naming `call` in the diagnostic.
    pub(crate) fn stop_progress_as(&self, call: &'static str) -> Result<(), Error> {
        let finalized = self.is_finalized();
        if self.on_progress_thread() {
            return Err(if finalized {
                Error::Init
            } else {
                would_block(call)
            });
        }
        // Requests still waiting for the server would hold the stop (their tickets):
        // they end now, with the stopped engine's status.
        if let Some(c) = &self.inner.client {
            c.fail_pending(&Error::NotAvailable);
        }
        self.inner.progress.stop();
        if finalized { Err(Error::Init) } else { Ok(()) }
    }

    /// `true` when both handles are the same instance.
    pub(crate) fn same_instance(&self, other: &Pmix) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Waits until the progress engine has stopped, beginning the stop if nobody has:
    /// for the process-wide instance's waiters. Returns at once on the progress thread.
    pub(crate) fn wait_stopped(&self) {
        self.inner.progress.stop();
    }

    /// The instance's topology, loaded on first use from [`Pmix::source_name`].
    ///
    /// # Errors
    /// [`Error::Init`], [`Error::WouldBlock`], [`Error::NotAvailable`] as
    /// [`Pmix::admit`]; [`Error::Unreach`] when it cannot be loaded locally (the
    /// message says why) and no server can be asked for it.
    #[doc(alias = "PMIx_Load_topology")]
    pub fn topology(&self) -> Result<Arc<Topology>, Error> {
        self.admit("PMIx_Load_topology", Mode::Blocking)?;
        self.inner.local.topology()
    }

    /// The topology if it is already loaded (no load is attempted, no check made).
    pub fn loaded_topology(&self) -> Option<&Arc<Topology>> {
        self.inner.local.service.loaded_topology()
    }

    /// Why the topology could not be loaded, if it was tried and failed.
    pub fn topology_error(&self) -> Option<&LoadError> {
        self.inner.local.service.topology_error()
    }

    /// The PUs this process (or the calling thread) is bound to.
    ///
    /// # Errors
    /// [`Error::Init`] after finalize; [`Error::Unreach`] if the OS does not tell (and
    /// no server can be asked).
    #[doc(alias = "PMIx_Get_cpuset")]
    pub fn cpuset(&self, envelope: BindEnvelope) -> Result<CpuSet, Error> {
        if self.is_finalized() {
            return Err(Error::Init);
        }
        self.inner.local.own_cpuset(envelope)
    }

    /// Computes distances on the calling thread (no thread hop) and hands the answer
    /// to `f`: the blocking form, for callers that convert the entries themselves (the
    /// C ABI) without an intermediate copy. A request this process cannot answer (no
    /// topology or no cpuset here) is relayed by a connected client to its server,
    /// and this waits for the answer (docs/design.md §6).
    ///
    /// # Errors
    /// As [`Pmix::admit`] (call `PMIx_Compute_distances`, blocking); then
    /// [`Error::Unreach`] when there is no topology or no cpuset here and no server to
    /// ask (or the server went away); `PMIX_ERR_NOT_SUPPORTED` for an origin the
    /// server does not compute from; then the query's own error
    /// ([`Error::Distance`], or the server's status).
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn compute_distances_with<R>(
        &self,
        req: &DistanceRequest<'_>,
        f: impl FnOnce(Answer<'_>) -> R,
    ) -> Result<R, Error> {
        self.admit("PMIx_Compute_distances", Mode::Blocking)?;
        self.inner.local.answer(req, f)
    }

    /// The blocking form: computes distances on the calling thread (or relays them,
    /// as [`Pmix::compute_distances_with`] says).
    ///
    /// # Errors
    /// As [`Pmix::compute_distances_with`].
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn compute_distances(&self, req: &DistanceRequest<'_>) -> Result<Distances, Error> {
        self.compute_distances_with(req, Distances::new)
    }

    /// The non-blocking form. With a callback, the call only *accepts* the request: it
    /// makes the checks of [`Pmix::admit`] and copies the request, on the caller's
    /// thread. Everything else happens on the progress thread: loading the topology on
    /// first use, resolving the caller's own cpuset, the query (or sending it to the
    /// server, when it is relayed); then `callback` runs there exactly once with the
    /// result. `Ok(())` means accepted, and the callback runs if and only if the call
    /// returned `Ok(())`. Errors found after acceptance ([`Error::Unreach`] without a
    /// topology or cpuset and no server, the query's own errors, the server's) reach
    /// the callback, as in OpenPMIx.
    ///
    /// Without a callback it behaves as the blocking form (named
    /// `PMIx_Compute_distances_nb` in the diagnostic): it computes on the calling
    /// thread and returns the status; the entries are dropped (there is nowhere to
    /// deliver them).
    ///
    /// # Errors
    /// As [`Pmix::admit`] (`Mode::Blocking` when `callback` is `None`), and
    /// [`Error::Init`] / [`Error::NotAvailable`] when a finalize / stop begins before
    /// the request is queued; without a callback, also the blocking form's errors.
    #[doc(alias = "PMIx_Compute_distances_nb")]
    pub fn compute_distances_nb(
        &self,
        req: &DistanceRequest<'_>,
        callback: Option<DistancesCallback>,
    ) -> Result<(), Error> {
        let Some(callback) = callback else {
            self.admit("PMIx_Compute_distances_nb", Mode::Blocking)?;
            return self.inner.local.answer(req, |_| ());
        };
        self.compute_distances_nb_with(req, Distances::new, callback)
    }

    /// The non-blocking form for callers that convert the entries themselves (the C
    /// ABI): as [`Pmix::compute_distances_nb`] with a callback, with `convert` run on
    /// the progress thread as part of the computation, so its result (or the error)
    /// goes to `callback`. If the computation (`convert` included) panics, `callback`
    /// gets [`Error::Internal`] (`PMIX_ERROR`); if `callback` panics, the panic is
    /// reported on stderr and `callback` is not run again. A relayed request's reply
    /// is converted and delivered on the progress thread too; a connection lost
    /// before the reply gives `callback` [`Error::Unreach`].
    ///
    /// # Errors
    /// As [`Pmix::admit`] ([`Mode::NonBlocking`]); [`Error::Init`] /
    /// [`Error::NotAvailable`] when a finalize / stop begins before the request is
    /// queued. Then `callback` does not run.
    #[doc(alias = "PMIx_Compute_distances_nb")]
    pub fn compute_distances_nb_with<R: 'static>(
        &self,
        req: &DistanceRequest<'_>,
        convert: impl FnOnce(Answer<'_>) -> R + Send + 'static,
        callback: impl FnOnce(Result<R, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Compute_distances_nb", Mode::NonBlocking)?;
        let owned = OwnedRequest::copy(req);
        let local = Arc::clone(&self.inner.local);
        // Held until the request is answered here (then dropped) or its relayed reply
        // is queued: the engine does not stop while a relayed request is out.
        let ticket = self
            .inner
            .progress
            .reserve()
            .map_err(|e| if self.is_finalized() { Error::Init } else { e })?;
        self.queue(Job::request(
            move || {
                let mut convert = Some(convert);
                let here = owned.with_request(|req| match local.here(req, &mut convert) {
                    Here::Answered(r) => r.map(Ok),
                    Here::Relay(client) => Ok(Err((client, local.relay_cpuset(req)))),
                })?;
                Ok(match here {
                    Ok(r) => Step::Done(r),
                    Err((client, cpuset)) => Step::Relay {
                        client,
                        cpuset,
                        req: owned,
                        convert: convert.ok_or_else(|| {
                            Error::Internal("a distance answer was delivered twice".into())
                        })?,
                    },
                })
            },
            move |step| match step {
                Ok(Step::Done(r)) => callback(Ok(r)),
                Err(e) => callback(Err(e)),
                Ok(Step::Relay {
                    client,
                    convert,
                    req,
                    cpuset,
                }) => relay_nb(&client, &req, cpuset.as_ref(), convert, callback, ticket),
            },
        ))
    }

    /// Runs `job` on the progress thread (for callbacks of the layers above). A panic
    /// in it is reported on stderr.
    ///
    /// # Errors
    /// [`Error::Init`] after finalize; [`Error::NotAvailable`] once the progress engine
    /// is stopped (the job is dropped unrun).
    pub fn post(&self, job: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        self.admit("post", Mode::NonBlocking)?;
        self.queue(Job::plain(job))
    }

    /// Queues `job` unless a stop has begun since [`Pmix::admit`]: then
    /// [`Error::Init`] if it is a finalize, else [`Error::NotAvailable`].
    fn queue(&self, job: Job) -> Result<(), Error> {
        self.inner
            .progress
            .post(job)
            .map_err(|e| if self.is_finalized() { Error::Init } else { e })
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // `Progress::drop` stops the thread; nothing else to release.
        self.finalized.store(true, Ordering::Release);
    }
}

/// A handle on an instance that does not keep it alive (what a server's thread holds
/// of the instance that embeds it).
pub(crate) struct WeakPmix(std::sync::Weak<Inner>);

impl WeakPmix {
    /// The instance, while it lives.
    pub(crate) fn upgrade(&self) -> Option<Pmix> {
        self.0.upgrade().map(|inner| Pmix { inner })
    }
}

impl Pmix {
    /// A handle on this instance that does not keep it alive.
    pub(crate) fn downgrade(&self) -> WeakPmix {
        WeakPmix(Arc::downgrade(&self.inner))
    }
}
