//! The one query service: load a topology source, resolve "my cpuset", answer a
//! distance query into a caller buffer.
//!
//! Every face of the library answers local questions through a [`Service`]: a
//! [`Pmix`](crate::Pmix) instance holds one (the C ABI reaches it through the instance),
//! `pmix-topo` makes one for its run, and a [`Server`](crate::Server) is given one
//! for its node ([`ServerConfig::service`](crate::ServerConfig::service): the distance
//! requests its clients relay): the client side and the server side both use it, so
//! it sits at the top of the crate. What a face adds on top is its own: the instance
//! its rules (docs/design.md §6) and the relay to a server (an [`AnswerError`] becomes
//! `PMIX_ERR_UNREACH` there), `pmix-topo` its command line and output.
//!
//! **The topology** is loaded once, on first use, from the source name given at
//! [`Service::new`] ([`topology::load`]), with the host name rule applied
//! ([`topology::apply_hostname`]: the caller's host name, else the topology's own, else
//! `localhost`).
//!
//! **"My cpuset"** is the process's binding: the union of the affinity of all its
//! threads, which is what `PMIx_Get_cpuset` with `PMIX_CPUBIND_PROCESS` means
//! ([`os::binding`]). It is resolved afresh for every request that needs it and never
//! cached across requests: a binding can change at any time (the process's own
//! `sched_setaffinity`, `taskset -p` from outside, a cgroup's cpuset), and each call must
//! answer for the binding it was made under, as OpenPMIx does (it asks hwloc for the
//! binding on every call). Resolving costs a read of `/proc/self/task` and one
//! `sched_getaffinity` per thread: measured on this project's 2-core machines (release
//! build), 19 µs for a process of one thread, about 4 µs more per thread (150 µs with
//! 33), against 1 µs for the calling thread's binding alone. A caller that asks many
//! questions from one binding resolves it once with [`Service::own_cpuset`] and passes
//! it as the request's cpuset (`pmix-topo` does; the C ABI cannot know that the
//! binding did not change between two calls, so it resolves it per call).
//!
//! **Answers** are written into a buffer the caller owns ([`Service::answer_into`]), or
//! handed to a closure from a stack buffer when the topology has at most 64 entries, so
//! a blocking query allocates nothing of its own ([`Service::answer`]).

use std::io;
use std::sync::{Arc, OnceLock};

use pmix_core::{
    CpuSet, DeviceDistance, DistanceError, Origin, PmixError, Query, Status, Topology,
};

use crate::distances::DistanceRequest;
use crate::error::{Error, LoadError};
use crate::os::{self, BindEnvelope};
use crate::topology;

/// Why a [`Service`] could not answer a request by itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The request named no topology and the service's own could not be loaded.
    #[error("no local topology ({0})")]
    Topology(LoadError),
    /// The request named neither an origin nor a cpuset and the operating system did
    /// not tell this process's binding.
    #[error("no cpuset for this process ({0})")]
    Binding(io::Error),
    /// The query itself has no answer (its own status: `PMIX_ERR_NOT_FOUND`,
    /// `PMIX_ERR_BAD_PARAM`, …, or `BufferTooSmall` from
    /// [`Service::answer_into`]).
    #[error(transparent)]
    Distance(DistanceError),
}

impl PmixError for AnswerError {
    /// What the process alone can say: the load error's status, `PMIX_ERR_NOT_FOUND`
    /// for an unknown binding, the query's own status. (An instance that cannot answer
    /// locally reports `PMIX_ERR_UNREACH` instead, having no server to ask.)
    fn status(&self) -> Status {
        match self {
            AnswerError::Topology(e) => e.status(),
            AnswerError::Binding(_) => Status::ERR_NOT_FOUND,
            AnswerError::Distance(e) => e.status(),
        }
    }
}

/// Loads a topology once and answers distance queries on it in this process.
///
/// Shared between threads (`Sync`): the first caller that needs the topology loads it,
/// the others wait for that load and share its result, success or failure.
pub struct Service {
    source_name: String,
    hostname: Option<String>,
    topology: OnceLock<Result<Arc<Topology>, LoadError>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("source", &self.source_name)
            .field("hostname", &self.hostname)
            .field("loaded", &self.topology.get().map(Result::is_ok))
            .finish()
    }
}

impl Service {
    /// A service for the topology source `source_name` (`sysfs`, `sysfs:DIR`,
    /// `xml:FILE`, `hwloc`: [`topology::open_source`]), whose device uuids carry
    /// `hostname` when given (`PMIX_HOSTNAME`, `pmix-topo --hostname`). Nothing is read
    /// here: the topology is loaded on first use, and a bad source name is reported
    /// then.
    ///
    /// # Errors
    /// [`Error::BadParam`] for a host name that is empty, longer than 255 bytes or holds
    /// a NUL ([`topology::check_hostname`]).
    pub fn new(source_name: impl Into<String>, hostname: Option<String>) -> Result<Service, Error> {
        if let Some(h) = &hostname {
            topology::check_hostname(h).map_err(|e| Error::BadParam(e.to_string().into()))?;
        }
        Ok(Service {
            source_name: source_name.into(),
            hostname,
            topology: OnceLock::new(),
        })
    }

    /// The topology source name given at [`Service::new`].
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The caller's host name given at [`Service::new`], if any.
    pub fn hostname(&self) -> Option<&str> {
        self.hostname.as_deref()
    }

    /// The topology, loaded on first use (once: a failed load is not retried).
    ///
    /// # Errors
    /// The [`LoadError`] of the load: the source cannot be chosen or read, or the
    /// host name cannot be applied.
    pub fn topology(&self) -> Result<&Arc<Topology>, &LoadError> {
        self.topology
            .get_or_init(|| {
                topology::load(&self.source_name, self.hostname.as_deref()).map(Arc::new)
            })
            .as_ref()
    }

    /// The topology if it is already loaded (no load is attempted).
    pub fn loaded_topology(&self) -> Option<&Arc<Topology>> {
        self.topology.get().and_then(|r| r.as_ref().ok())
    }

    /// Why the topology could not be loaded, if it was tried and failed.
    pub fn topology_error(&self) -> Option<&LoadError> {
        self.topology.get().and_then(|r| r.as_ref().err())
    }

    /// "My cpuset": the PUs this process ([`BindEnvelope::Process`], the union of every
    /// thread's affinity) or the calling thread ([`BindEnvelope::Thread`]) may run on,
    /// read from the operating system now (never cached: see the module docs).
    ///
    /// # Errors
    /// The OS error of `sched_getaffinity` (none is expected on Linux).
    #[doc(alias = "PMIx_Get_cpuset")]
    pub fn own_cpuset(&self, envelope: BindEnvelope) -> io::Result<CpuSet> {
        os::binding(envelope)
    }

    /// Answers `req` into `out`, a buffer the caller owns, and returns the number of
    /// entries written, in the core's stable order: on the request's topology, else the
    /// service's (loaded now if need be); from the request's origin device, else its
    /// cpuset, else this process's binding ([`Service::own_cpuset`], resolved now).
    /// [`Topology::entry_count`] entries always suffice.
    ///
    /// # Errors
    /// [`AnswerError::Topology`] without a topology, [`AnswerError::Binding`] without a
    /// cpuset; [`AnswerError::Distance`] with the query's own error, `BufferTooSmall`
    /// (saying how many entries are needed) when `out` is too short.
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn answer_into(
        &self,
        req: &DistanceRequest<'_>,
        out: &mut [DeviceDistance],
    ) -> Result<usize, AnswerError> {
        self.resolve(req, |topo, query| topo.distances(query, out))
    }

    /// Answers `req` as [`Service::answer_into`] does and hands the entries, with the
    /// topology that names their devices, to `f`; returns what `f` returns. The entries
    /// live in a stack buffer when the topology has at most 64 entries (nothing is
    /// allocated), else in a vector sized to fit.
    ///
    /// # Errors
    /// As [`Service::answer_into`], never `BufferTooSmall`; `f` is not called.
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn answer<R>(
        &self,
        req: &DistanceRequest<'_>,
        f: impl FnOnce(&Arc<Topology>, &[DeviceDistance]) -> R,
    ) -> Result<R, AnswerError> {
        self.resolve(req, |topo, query| {
            with_answer(topo, query, |entries| f(topo, entries))
        })
    }

    /// Resolves the request's topology and origin, then runs `run` on them.
    fn resolve<R>(
        &self,
        req: &DistanceRequest<'_>,
        run: impl FnOnce(&Arc<Topology>, &Query<'_>) -> Result<R, DistanceError>,
    ) -> Result<R, AnswerError> {
        let topo = match req.topology {
            Some(t) => t,
            None => self
                .topology()
                .map_err(|e| AnswerError::Topology(e.clone()))?,
        };
        let own_cpus;
        let origin = match (req.origin, req.cpuset) {
            (Some(name), _) => Origin::Device(name),
            (None, Some(c)) => Origin::Cpuset(c),
            (None, None) => {
                own_cpus = self
                    .own_cpuset(BindEnvelope::Process)
                    .map_err(AnswerError::Binding)?;
                Origin::Cpuset(&own_cpus)
            }
        };
        let query = Query {
            types: req.types,
            ids: req.ids,
            origin,
        };
        run(topo, &query).map_err(AnswerError::Distance)
    }
}

/// The number of entries answered from the stack before a heap buffer is used.
const STACK_ENTRIES: usize = 64;

/// Runs `query` and hands the entries to `f`, from a stack buffer when the topology has
/// at most [`STACK_ENTRIES`] entries, else from a vector of [`Topology::entry_count`]
/// entries (grown if the core ever asks for more).
fn with_answer<R>(
    topo: &Topology,
    query: &Query<'_>,
    f: impl FnOnce(&[DeviceDistance]) -> R,
) -> Result<R, DistanceError> {
    if topo.entry_count() <= STACK_ENTRIES {
        let mut buf = [DeviceDistance::EMPTY; STACK_ENTRIES];
        match topo.distances(query, &mut buf) {
            Ok(n) => return Ok(f(&buf[..n])),
            Err(DistanceError::BufferTooSmall { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let mut out = vec![DeviceDistance::EMPTY; topo.entry_count()];
    let n = match topo.distances(query, &mut out) {
        Ok(n) => n,
        Err(DistanceError::BufferTooSmall { needed }) => {
            out.resize(needed, DeviceDistance::EMPTY);
            topo.distances(query, &mut out)?
        }
        Err(e) => return Err(e),
    };
    Ok(f(&out[..n]))
}
