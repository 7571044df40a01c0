//! A PMIx library instance: its role, identity, topology, progress thread, and the rules
//! every call follows (DESIGN §6).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use pmix_core::{CpuSet, DeviceDistance, Origin, Query, Topology};

use crate::distances::{DistanceRequest, Distances, OwnedRequest, with_answer};
use crate::error::{Error, LoadError};
use crate::os::{self, BindEnvelope};
use crate::progress::Progress;
use crate::relay::Relay;
use crate::topology;

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

/// A process's identity: namespace and rank (`pmix_proc_t`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcId {
    /// The namespace (at most 255 bytes).
    pub nspace: String,
    /// The rank.
    pub rank: u32,
}

/// Options of [`Pmix::init`].
#[derive(Clone, Debug, Default)]
pub struct InitOptions {
    /// The topology source name (`xml:FILE`, `sysfs`, …); `None` reads the environment
    /// ([`topology::source_name_from_env`]).
    pub topology_source: Option<String>,
    /// `PMIX_HOSTNAME`: the host name used in device uuids instead of the topology's.
    pub hostname: Option<String>,
}

/// The callback of [`Pmix::compute_distances_nb`]: run once, on the progress thread,
/// with the final result.
pub type DistancesCallback = Box<dyn FnOnce(Result<Distances, Error>) + Send + 'static>;

/// A PMIx library instance. Cheap to clone (a shared handle); every clone sees the same
/// state, so after [`Pmix::finalize`] every clone's calls return [`Error::Init`].
#[derive(Clone)]
pub struct Pmix {
    inner: Arc<Inner>,
}

struct Inner {
    role: Role,
    proc_id: ProcId,
    hostname: Option<String>,
    source_name: String,
    finalized: AtomicBool,
    topology: OnceLock<Result<Arc<Topology>, LoadError>>,
    progress: Progress,
    relay: Relay,
}

impl std::fmt::Debug for Pmix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pmix")
            .field("role", &self.inner.role)
            .field("proc", &self.inner.proc_id)
            .field("source", &self.inner.source_name)
            .field("finalized", &self.is_finalized())
            .finish()
    }
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
    /// There is no server to connect to yet (the relay is a later step), so a client
    /// starts as a *singleton* (namespace `pmix-rs.singleton.<pid>`, rank 0) and a tool
    /// as `pmix-rs.tool.<pid>`, rank 0: both succeed and answer what they can locally;
    /// requests that would need a server return [`Error::Unreach`]. OpenPMIx returns
    /// `PMIX_ERR_UNREACH` from `PMIx_Init` in that situation and stays usable; callers
    /// written for it accept both. The topology is not read here but on first use.
    ///
    /// # Errors
    /// [`Error::BadParam`] for a hostname that is empty, longer than 255 bytes or holds
    /// a NUL; [`Error::Os`] if the progress thread cannot be started.
    #[doc(alias = "PMIx_Init")]
    #[doc(alias = "PMIx_tool_init")]
    #[doc(alias = "PMIx_server_init")]
    pub fn init(role: Role, options: InitOptions) -> Result<Pmix, Error> {
        let bad_host =
            |h: &String| h.is_empty() || h.len() > pmix_core::MAX_NAME_LEN || h.contains('\0');
        if options.hostname.as_ref().is_some_and(bad_host) {
            return Err(Error::BadParam(
                "PMIX_HOSTNAME: empty, longer than 255 bytes, or holding NUL".into(),
            ));
        }
        let source_name = options
            .topology_source
            .clone()
            .unwrap_or_else(topology::source_name_from_env);
        let pid = std::process::id();
        let (nspace, relay) = match role {
            Role::Client => (format!("pmix-rs.singleton.{pid}"), Relay::NotConnected),
            Role::Tool => (format!("pmix-rs.tool.{pid}"), Relay::NotConnected),
            Role::Server => (format!("pmix-rs.server.{pid}"), Relay::IsServer),
        };
        Ok(Pmix {
            inner: Arc::new(Inner {
                role,
                proc_id: ProcId { nspace, rank: 0 },
                hostname: options.hostname,
                source_name,
                finalized: AtomicBool::new(false),
                topology: OnceLock::new(),
                progress: Progress::start()?,
                relay,
            }),
        })
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
        &self.inner.source_name
    }

    /// `true` once [`Pmix::finalize`] has run.
    pub fn is_finalized(&self) -> bool {
        self.inner.finalized.load(Ordering::Acquire)
    }

    /// `true` when called on this instance's progress thread (inside a callback).
    pub fn on_progress_thread(&self) -> bool {
        self.inner.progress.is_current()
    }

    /// `true` once the progress engine has been stopped.
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

    /// Finalises the instance: stops the progress thread once every accepted callback
    /// has run; afterwards every call on any clone returns [`Error::Init`].
    ///
    /// # Errors
    /// [`Error::Init`] if already finalised; [`Error::WouldBlock`] on the progress
    /// thread (it would wait for itself).
    #[doc(alias = "PMIx_Finalize")]
    #[doc(alias = "PMIx_tool_finalize")]
    pub fn finalize(&self) -> Result<(), Error> {
        self.finalize_as("PMIx_Finalize")
    }

    /// [`Pmix::finalize`], naming `call` in the diagnostic.
    pub(crate) fn finalize_as(&self, call: &'static str) -> Result<(), Error> {
        if self.is_finalized() {
            return Err(Error::Init);
        }
        if self.on_progress_thread() {
            return Err(would_block(call));
        }
        if self.inner.finalized.swap(true, Ordering::AcqRel) {
            return Err(Error::Init);
        }
        self.inner.progress.stop();
        Ok(())
    }

    /// Stops the progress engine after it has run every callback already accepted;
    /// afterwards distance calls return [`Error::NotAvailable`]. Idempotent.
    ///
    /// # Errors
    /// [`Error::Init`] after finalize; [`Error::WouldBlock`] on the progress thread
    /// (stopping joins the thread).
    #[doc(alias = "PMIx_Progress_thread_stop")]
    pub fn stop_progress(&self) -> Result<(), Error> {
        if self.is_finalized() {
            return Err(Error::Init);
        }
        if self.on_progress_thread() {
            return Err(would_block("PMIx_Progress_thread_stop"));
        }
        self.inner.progress.stop();
        Ok(())
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
        self.local_topology()
    }

    /// The topology if it is already loaded (no load is attempted, no check made).
    pub fn loaded_topology(&self) -> Option<&Arc<Topology>> {
        self.inner.topology.get().and_then(|r| r.as_ref().ok())
    }

    /// Why the topology could not be loaded, if it was tried and failed.
    pub fn topology_error(&self) -> Option<&LoadError> {
        self.inner.topology.get().and_then(|r| r.as_ref().err())
    }

    fn local_topology(&self) -> Result<Arc<Topology>, Error> {
        let inner = &self.inner;
        let loaded = inner.topology.get_or_init(|| {
            topology::load(&inner.source_name, inner.hostname.as_deref()).map(Arc::new)
        });
        match loaded {
            Ok(t) => Ok(Arc::clone(t)),
            Err(e) => Err(inner.relay.unreachable(format!("no local topology ({e})"))),
        }
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
        self.own_cpuset(envelope)
    }

    fn own_cpuset(&self, envelope: BindEnvelope) -> Result<CpuSet, Error> {
        os::binding(envelope).map_err(|e| {
            self.inner
                .relay
                .unreachable(format!("no cpuset for this process ({e})"))
        })
    }

    /// Computes distances on the calling thread (no thread hop) and hands the entries,
    /// with the topology that names their devices, to `f`. The blocking form, for
    /// callers that convert the entries themselves (the C ABI) without an intermediate
    /// copy.
    ///
    /// # Errors
    /// As [`Pmix::admit`] (call `PMIx_Compute_distances`, blocking); then
    /// [`Error::Unreach`] when there is no topology or no cpuset to answer from
    /// locally; then the query's own error ([`Error::Distance`]).
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn compute_distances_with<R>(
        &self,
        req: &DistanceRequest<'_>,
        f: impl FnOnce(&Arc<Topology>, &[DeviceDistance]) -> R,
    ) -> Result<R, Error> {
        self.admit("PMIx_Compute_distances", Mode::Blocking)?;
        self.answer_locally(req, f)
    }

    /// The blocking form: computes distances on the calling thread.
    ///
    /// # Errors
    /// As [`Pmix::compute_distances_with`].
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn compute_distances(&self, req: &DistanceRequest<'_>) -> Result<Distances, Error> {
        self.compute_distances_with(req, |t, e| Distances::new(Arc::clone(t), e.to_vec()))
    }

    fn answer_locally<R>(
        &self,
        req: &DistanceRequest<'_>,
        f: impl FnOnce(&Arc<Topology>, &[DeviceDistance]) -> R,
    ) -> Result<R, Error> {
        let own_topo;
        let topo = match req.topology {
            Some(t) => t,
            None => {
                own_topo = self.local_topology()?;
                &own_topo
            }
        };
        let own_cpus;
        let origin = match (req.origin, req.cpuset) {
            (Some(name), _) => Origin::Device(name),
            (None, Some(c)) => Origin::Cpuset(c),
            (None, None) => {
                own_cpus = self.own_cpuset(BindEnvelope::Process)?;
                Origin::Cpuset(&own_cpus)
            }
        };
        let query = Query {
            types: req.types,
            ids: req.ids,
            origin,
        };
        with_answer(topo, &query, |entries| f(topo, entries))
    }

    /// The non-blocking form. With a callback, the request is checked and copied, the
    /// caller's location resolved, and the answer computed on the progress thread,
    /// which then runs `callback` exactly once with it; `Ok(())` means accepted, and
    /// the callback runs if and only if the call returned `Ok(())`.
    ///
    /// Without a callback it behaves as the blocking form (named
    /// `PMIx_Compute_distances_nb` in the diagnostic): it computes on the calling
    /// thread and returns the status; the entries are dropped (there is nowhere to
    /// deliver them).
    ///
    /// # Errors
    /// As [`Pmix::admit`] (`Mode::Blocking` when `callback` is `None`);
    /// [`Error::Unreach`] when the request cannot be answered locally and there is no
    /// server; without a callback, also the query's own error.
    #[doc(alias = "PMIx_Compute_distances_nb")]
    pub fn compute_distances_nb(
        &self,
        req: &DistanceRequest<'_>,
        callback: Option<DistancesCallback>,
    ) -> Result<(), Error> {
        const CALL: &str = "PMIx_Compute_distances_nb";
        let Some(callback) = callback else {
            self.admit(CALL, Mode::Blocking)?;
            return self.answer_locally(req, |_, _| ());
        };
        self.admit(CALL, Mode::NonBlocking)?;
        let topology = match req.topology {
            Some(t) => Arc::clone(t),
            None => self.local_topology()?,
        };
        let cpuset = match (req.origin, req.cpuset) {
            (Some(_), _) => None,
            (None, Some(c)) => Some(c.clone()),
            (None, None) => Some(self.own_cpuset(BindEnvelope::Process)?),
        };
        let owned = OwnedRequest {
            topology,
            cpuset,
            types: req.types,
            ids: req.ids.iter().map(|s| (*s).to_owned()).collect(),
            origin: req.origin.map(str::to_owned),
        };
        self.inner
            .progress
            .post(Box::new(move || callback(owned.run())))
    }

    /// Runs `job` on the progress thread (for callbacks of the layers above).
    ///
    /// # Errors
    /// [`Error::Init`] after finalize; [`Error::NotAvailable`] once the progress engine
    /// is stopped (the job is dropped unrun).
    pub fn post(&self, job: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        self.admit("post", Mode::NonBlocking)?;
        self.inner.progress.post(Box::new(job))
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // `Progress::drop` stops the thread; nothing else to release.
        self.finalized.store(true, Ordering::Release);
    }
}
