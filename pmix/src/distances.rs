//! Distance requests and results (`PMIx_Compute_distances`).

use std::sync::Arc;

use pmix_core::{CpuSet, Device, DeviceDistance, DeviceTypes, Topology};

/// What `PMIx_Compute_distances` is asked: where from, to which devices, on which
/// topology. Borrowed, so the blocking form copies nothing.
#[derive(Clone, Copy, Debug, Default)]
#[doc(alias = "PMIx_Compute_distances")]
pub struct DistanceRequest<'a> {
    /// The topology to answer on; `None` means the instance's own (loaded on first
    /// use).
    pub topology: Option<&'a Arc<Topology>>,
    /// The process location; `None` means the calling process's own binding. Ignored
    /// when [`origin`](Self::origin) is given.
    pub cpuset: Option<&'a CpuSet>,
    /// `PMIX_DEVICE_TYPE`: the union of the types given, `None` when none was.
    pub types: Option<DeviceTypes>,
    /// `PMIX_DEVICE_ID`s.
    pub ids: &'a [&'a str],
    /// `PMIX_DEVICE_DIST_ORIGIN`: measure from this device instead of a cpuset.
    pub origin: Option<&'a str>,
}

/// The answer to a distance request: the entries in the core's stable order, with the
/// topology that names their devices.
#[derive(Clone, Debug)]
pub struct Distances {
    topology: Arc<Topology>,
    entries: Vec<DeviceDistance>,
}

impl Distances {
    pub(crate) fn new(topology: Arc<Topology>, entries: Vec<DeviceDistance>) -> Self {
        Distances { topology, entries }
    }

    /// The topology the entries' [`DeviceId`](pmix_core::DeviceId)s refer to.
    pub fn topology(&self) -> &Arc<Topology> {
        &self.topology
    }

    /// The raw entries.
    pub fn entries(&self) -> &[DeviceDistance] {
        &self.entries
    }

    /// The number of entries (never 0: an empty answer is `PMIX_ERR_NOT_FOUND`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` if there are no entries (never, for a successful query).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Each entry's device with its `(mindist, maxdist)`.
    pub fn iter(&self) -> impl Iterator<Item = (&Device, u16, u16)> + '_ {
        self.entries.iter().filter_map(|e| {
            self.topology
                .device(e.device)
                .map(|d| (d, e.mindist, e.maxdist))
        })
    }
}

/// An owned copy of a request, for the non-blocking form: the caller's arguments may
/// die as soon as the call returns. Nothing is resolved yet: a missing topology or
/// cpuset is looked up on the progress thread.
pub(crate) struct OwnedRequest {
    topology: Option<Arc<Topology>>,
    cpuset: Option<CpuSet>,
    types: Option<DeviceTypes>,
    ids: Vec<String>,
    origin: Option<String>,
}

impl OwnedRequest {
    /// Copies what `req` borrows (the cpuset only when no origin makes it moot).
    pub(crate) fn copy(req: &DistanceRequest<'_>) -> OwnedRequest {
        OwnedRequest {
            topology: req.topology.cloned(),
            cpuset: match req.origin {
                Some(_) => None,
                None => req.cpuset.cloned(),
            },
            types: req.types,
            ids: req.ids.iter().map(|s| (*s).to_owned()).collect(),
            origin: req.origin.map(str::to_owned),
        }
    }

    /// Hands `f` the request as a borrowed [`DistanceRequest`] again.
    pub(crate) fn with_request<R>(&self, f: impl FnOnce(&DistanceRequest<'_>) -> R) -> R {
        let ids: Vec<&str> = self.ids.iter().map(String::as_str).collect();
        f(&DistanceRequest {
            topology: self.topology.as_ref(),
            cpuset: self.cpuset.as_ref(),
            types: self.types,
            ids: &ids,
            origin: self.origin.as_deref(),
        })
    }
}
