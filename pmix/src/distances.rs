//! Distance requests and results (`PMIx_Compute_distances`).

use std::sync::Arc;

use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, Topology};

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

/// One entry of an answer, however it was answered: the device's uuid, OS name and
/// type, and its distance range from the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row<'a> {
    /// The device's uuid (`PMIX_DEVICE_ID`).
    pub uuid: &'a str,
    /// The device's OS name (`nvml0`, `mlx5_0`).
    pub osname: &'a str,
    /// Its type (one bit).
    pub kind: DeviceTypes,
    /// The smallest distance from the origin.
    pub mindist: u16,
    /// The largest distance from the origin.
    pub maxdist: u16,
}

/// An entry of an answer the server gave (a relayed request, DESIGN §6): owned, since
/// no local topology names its device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayedDistance {
    /// The device's uuid.
    pub uuid: String,
    /// The device's OS name.
    pub osname: String,
    /// Its type.
    pub kind: DeviceTypes,
    /// The smallest distance.
    pub mindist: u16,
    /// The largest distance.
    pub maxdist: u16,
}

impl RelayedDistance {
    fn row(&self) -> Row<'_> {
        Row {
            uuid: &self.uuid,
            osname: &self.osname,
            kind: self.kind,
            mindist: self.mindist,
            maxdist: self.maxdist,
        }
    }
}

/// The entries of an answer, borrowed: computed in this process on its topology, or
/// relayed to the server and answered there.
#[derive(Clone, Copy, Debug)]
pub enum Answer<'a> {
    /// Computed here: the core's entries and the topology that names their devices.
    Local {
        /// The topology the entries' [`DeviceId`](pmix_core::DeviceId)s refer to.
        topology: &'a Arc<Topology>,
        /// The entries, in the core's stable order.
        entries: &'a [DeviceDistance],
    },
    /// Answered by the server, in its order.
    Relayed(&'a [RelayedDistance]),
}

impl<'a> Answer<'a> {
    /// The number of entries.
    pub fn len(&self) -> usize {
        match self {
            Answer::Local { entries, .. } => entries.len(),
            Answer::Relayed(r) => r.len(),
        }
    }

    /// `true` if there are no entries (never, for a successful query).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as rows, in the answer's order (a local entry naming no device of
    /// its topology, which the core never makes, is skipped).
    pub fn rows(self) -> impl Iterator<Item = Row<'a>> + 'a {
        let (local, relayed) = match self {
            Answer::Local { topology, entries } => (Some((topology, entries)), None),
            Answer::Relayed(r) => (None, Some(r)),
        };
        let local = local.into_iter().flat_map(|(t, entries)| {
            entries.iter().filter_map(move |e| {
                t.device(e.device).map(|d| Row {
                    uuid: d.uuid(),
                    osname: d.name(),
                    kind: d.kind(),
                    mindist: e.mindist,
                    maxdist: e.maxdist,
                })
            })
        });
        let relayed = relayed
            .into_iter()
            .flat_map(|r| r.iter().map(RelayedDistance::row));
        local.chain(relayed)
    }
}

/// The answer to a distance request, owned: the entries in the core's stable order
/// with the topology that names their devices, or the server's entries.
#[derive(Clone, Debug)]
pub struct Distances(Owned);

#[derive(Clone, Debug)]
enum Owned {
    Local {
        topology: Arc<Topology>,
        entries: Vec<DeviceDistance>,
    },
    Relayed(Vec<RelayedDistance>),
}

impl Distances {
    /// An owned copy of `answer`.
    pub fn new(answer: Answer<'_>) -> Self {
        Distances(match answer {
            Answer::Local { topology, entries } => Owned::Local {
                topology: Arc::clone(topology),
                entries: entries.to_vec(),
            },
            Answer::Relayed(r) => Owned::Relayed(r.to_vec()),
        })
    }

    /// The answer, borrowed.
    pub fn answer(&self) -> Answer<'_> {
        match &self.0 {
            Owned::Local { topology, entries } => Answer::Local { topology, entries },
            Owned::Relayed(r) => Answer::Relayed(r),
        }
    }

    /// The topology the entries refer to; `None` for an answer the server gave.
    pub fn topology(&self) -> Option<&Arc<Topology>> {
        match &self.0 {
            Owned::Local { topology, .. } => Some(topology),
            Owned::Relayed(_) => None,
        }
    }

    /// `true` when the server answered (the request was relayed, DESIGN §6).
    pub fn is_relayed(&self) -> bool {
        matches!(self.0, Owned::Relayed(_))
    }

    /// The number of entries (never 0: an empty answer is `PMIX_ERR_NOT_FOUND`).
    pub fn len(&self) -> usize {
        self.answer().len()
    }

    /// `true` if there are no entries (never, for a successful query).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as rows, in the answer's order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        self.answer().rows()
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
