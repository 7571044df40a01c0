//! Device distances: the answer to `PMIx_Compute_distances` (docs/design.md §3).
//!
//! A [`Query`] selects devices (types, ids) and names an origin: a process location
//! (a cpuset) or a device. [`Topology::distances`] writes one [`DeviceDistance`] per
//! reported entry into a caller buffer and never allocates: everything it needs about a
//! device (locality, package, host bridge, PCI path) was computed when the topology was
//! built, so a query is a few bitmap tests per device.
//!
//! ## Distances from a cpuset
//! For each PU `p` of the cpuset and each device `d` with locality `L(d)`, the tier is
//! 0 when `p ∈ L(d)` and `L(d)` lies within one package, 1 when not local but `L(d)`
//! lies within `p`'s package, 2 otherwise; `dist = 16 × tier + min(depth(d), 15)`, and
//! `mindist` / `maxdist` are taken over the PUs. PUs of the cpuset that the topology
//! does not have are ignored.
//!
//! ## Distances from a device
//! Tier 0: same PCI function (or same non-PCI device); 1: the lowest common ancestor is
//! a PCI bridge (same switch, root port or slot), `hops` counting the bridges strictly
//! below it on both paths; 2: same host bridge; 3: host bridges whose localities lie in
//! one package; 4: otherwise. In tiers 2–4 `hops = depth(o) + depth(d)`;
//! `dist = 16 × tier + min(hops, 15)`, and `mindist == maxdist`.
//!
//! ## Choices where docs/design.md is silent
//! - An id that matches no device is not an error as long as another id (or type)
//!   selects something; only an empty result is `PMIX_ERR_NOT_FOUND`.
//! - Device names are matched by a linear scan with ASCII case folding: a topology has
//!   tens to a few hundred devices and ids are rare, so a hash index would cost more to
//!   build than it saves. Each id is read as a PCI address once per query, on the
//!   stack (the first 16 ids; any further ones, once per entry scanned).
//!
//! ## Layout
//! This file holds the public types and the query loop; `select` decides which entries
//! a query reports (and resolves a device origin), `measure` how far each one is.

mod measure;
mod select;

use measure::{FromCpuset, FromDevice, Measure};
use select::Ids;

use crate::cpuset::CpuSet;
use crate::device::DeviceTypes;
use crate::status::{PmixError, Status};
use crate::topology::{DeviceId, Entry, Place, Topology, entry_order};

/// Where distances are measured from.
#[derive(Clone, Copy, Debug)]
pub enum Origin<'a> {
    /// A process location: the PUs it is bound to.
    Cpuset(&'a CpuSet),
    /// A device, in any form `PMIX_DEVICE_ID` accepts (`PMIX_DEVICE_DIST_ORIGIN`).
    Device(&'a str),
}

/// A distance query: which devices, measured from where.
#[derive(Clone, Copy, Debug)]
#[doc(alias = "PMIx_Compute_distances")]
pub struct Query<'a> {
    /// `PMIX_DEVICE_TYPE`: the union of the types given, or `None` if none was.
    pub types: Option<DeviceTypes>,
    /// `PMIX_DEVICE_ID`s: devices named by uuid, osname, vendor identity or PCI bus id.
    pub ids: &'a [&'a str],
    /// The origin.
    pub origin: Origin<'a>,
}

impl<'a> Query<'a> {
    /// Distances from a process location to the default device types.
    pub fn from_cpuset(cpus: &'a CpuSet) -> Self {
        Query {
            types: None,
            ids: &[],
            origin: Origin::Cpuset(cpus),
        }
    }

    /// Distances from the device `name` to the default device types.
    pub fn from_device(name: &'a str) -> Self {
        Query {
            types: None,
            ids: &[],
            origin: Origin::Device(name),
        }
    }

    /// The same query restricted to `types`.
    pub fn types(mut self, types: DeviceTypes) -> Self {
        self.types = Some(types);
        self
    }

    /// The same query restricted to the devices named by `ids`.
    pub fn ids(mut self, ids: &'a [&'a str]) -> Self {
        self.ids = ids;
        self
    }
}

/// One reported device and its distances from the origin.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DeviceDistance {
    /// The device (for a folded GPU or COPROC entry, the alias reported).
    pub device: DeviceId,
    /// The smallest distance over the origin's PUs.
    pub mindist: u16,
    /// The largest distance over the origin's PUs.
    pub maxdist: u16,
}

impl DeviceDistance {
    /// A placeholder to fill buffers with before a query.
    pub const EMPTY: DeviceDistance = DeviceDistance {
        device: DeviceId(u32::MAX),
        mindist: u16::MAX,
        maxdist: u16::MAX,
    };
}

/// Why a distance query has no answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DistanceError {
    /// The cpuset is empty (`PMIX_ERR_BAD_PARAM`).
    #[error("the cpuset is empty")]
    EmptyCpuset,
    /// The cpuset names no PU of the topology (`PMIX_ERR_BAD_PARAM`). The fields say
    /// which PUs the topology has, so the message can tell the caller what to ask for.
    #[error("the cpuset names no PU of this topology, {}", MachinePus { count: *pus, first: *first, last: *last })]
    CpusetOutsideTopology {
        /// How many PUs the topology has.
        pus: u32,
        /// Its lowest PU.
        first: u32,
        /// Its highest PU.
        last: u32,
    },
    /// The type mask is zero or has unknown bits (`PMIX_ERR_BAD_PARAM`).
    #[error("device type mask {0:#x} is empty or has unknown bits")]
    BadDeviceTypes(u64),
    /// A device id or origin is the empty string (`PMIX_ERR_BAD_PARAM`).
    #[error("an empty device name")]
    EmptyName,
    /// No device answers to the origin's name (`PMIX_ERR_NOT_FOUND`).
    #[error("no device answers to the origin's name")]
    OriginNotFound,
    /// The origin's name matches more than one PCI function or non-PCI device
    /// (`PMIX_ERR_BAD_PARAM`).
    #[error("the origin's name matches more than one device")]
    AmbiguousOrigin,
    /// Nothing was selected (`PMIX_ERR_NOT_FOUND`).
    #[error("no device matches the query")]
    NoDevices,
    /// The output buffer holds fewer entries than the answer; nothing was written
    /// (`PMIX_ERR_NOMEM`: the caller gave too little room).
    #[error("the answer needs {needed} entries")]
    BufferTooSmall {
        /// The number of entries the answer has.
        needed: usize,
    },
}

impl PmixError for DistanceError {
    fn status(&self) -> Status {
        match self {
            DistanceError::EmptyCpuset
            | DistanceError::CpusetOutsideTopology { .. }
            | DistanceError::BadDeviceTypes(_)
            | DistanceError::EmptyName
            | DistanceError::AmbiguousOrigin => Status::ERR_BAD_PARAM,
            DistanceError::OriginNotFound | DistanceError::NoDevices => Status::ERR_NOT_FOUND,
            DistanceError::BufferTooSmall { .. } => Status::ERR_NOMEM,
        }
    }
}

/// Which PUs a topology has, in words: `whose PUs are 0-23` when they are contiguous,
/// else `whose 24 PUs lie between 0 and 47`.
struct MachinePus {
    count: u32,
    first: u32,
    last: u32,
}

impl core::fmt::Display for MachinePus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let MachinePus { count, first, last } = *self;
        if count == 1 {
            write!(f, "whose one PU is {first}")
        } else if u64::from(last) - u64::from(first) + 1 == u64::from(count) {
            write!(f, "whose PUs are {first}-{last}")
        } else {
            write!(f, "whose {count} PUs lie between {first} and {last}")
        }
    }
}

/// Where a query measures from, resolved against the topology.
enum ResolvedOrigin<'q> {
    /// A process location.
    Cpuset(&'q CpuSet),
    /// Where the origin device (its PCI function, or the non-PCI device itself) sits.
    Device(Place),
}

impl Topology {
    /// Computes the distances `query` asks for into `out`, returning how many entries
    /// were written (docs/design.md §3). Entries come in a total, stable order: PCI bus id,
    /// then name; devices without PCI last. Never allocates.
    ///
    /// # Errors
    /// A [`DistanceError`] (each maps to one PMIx status through
    /// [`PmixError::status`]); when `out` is too small,
    /// [`DistanceError::BufferTooSmall`] with the length needed, and `out` is left
    /// untouched.
    #[doc(alias = "PMIx_Compute_distances")]
    pub fn distances(
        &self,
        query: &Query<'_>,
        out: &mut [DeviceDistance],
    ) -> Result<usize, DistanceError> {
        let types = match query.types {
            Some(t) if !t.is_valid_selection() => return Err(DistanceError::BadDeviceTypes(t.0)),
            Some(t) => t,
            None if query.ids.is_empty() => DeviceTypes::DEFAULT,
            None => DeviceTypes::ALL,
        };
        if query.ids.iter().any(|s| s.is_empty()) {
            return Err(DistanceError::EmptyName);
        }
        let origin = match query.origin {
            Origin::Cpuset(cpus) => {
                if cpus.is_empty() {
                    return Err(DistanceError::EmptyCpuset);
                }
                if !cpus.intersects(self.machine_cpus()) {
                    let m = self.machine_cpus();
                    return Err(DistanceError::CpusetOutsideTopology {
                        pus: u32::try_from(m.len()).unwrap_or(u32::MAX),
                        first: m.first().unwrap_or(0),
                        last: m.last().unwrap_or(0),
                    });
                }
                ResolvedOrigin::Cpuset(cpus)
            }
            Origin::Device(name) => ResolvedOrigin::Device(self.resolve_origin(name)?.place()),
        };
        // Without ids an entry is selected by its type alone.
        let ids = (!query.ids.is_empty()).then(|| Ids::new(query.ids));
        let by_type = |e: &Entry| e.kind.intersects(types).then_some(e.default_device);
        let by_ids = |ids| move |e: &Entry| self.select(e, types, ids);

        let needed = match &ids {
            // Count per type.
            None => (0..6)
                .filter(|b| types.0 & (1 << b) != 0)
                .map(|b| self.type_counts[b] as usize)
                .sum(),
            Some(ids) => self.entries.iter().filter_map(by_ids(ids)).count(),
        };
        if needed == 0 {
            return Err(DistanceError::NoDevices);
        }
        if needed > out.len() {
            return Err(DistanceError::BufferTooSmall { needed });
        }
        // One loop per kind of selection and origin, each with its tests inlined.
        let from_cpuset = |cpus| FromCpuset::new(self, cpus);
        let from_device = |origin| FromDevice::new(self, origin);
        let (n, alias_named) = match (&ids, origin) {
            (None, ResolvedOrigin::Cpuset(c)) => self.fill(out, by_type, from_cpuset(c)),
            (None, ResolvedOrigin::Device(o)) => self.fill(out, by_type, from_device(o)),
            (Some(ids), ResolvedOrigin::Cpuset(c)) => self.fill(out, by_ids(ids), from_cpuset(c)),
            (Some(ids), ResolvedOrigin::Device(o)) => self.fill(out, by_ids(ids), from_device(o)),
        };
        if alias_named {
            // A caller-named alias may sort differently from the default one.
            out[..n].sort_unstable_by(|a, b| {
                entry_order(
                    &self.devices[a.device.0 as usize],
                    &self.devices[b.device.0 as usize],
                )
            });
        }
        Ok(n)
    }

    /// Writes into `out` one distance per entry `select` reports a device for, in entry
    /// order; returns how many, and whether any is a caller-named alias. `out` holds
    /// them all (the caller counted).
    #[inline(always)]
    fn fill(
        &self,
        out: &mut [DeviceDistance],
        mut select: impl FnMut(&Entry) -> Option<DeviceId>,
        mut origin: impl Measure,
    ) -> (usize, bool) {
        let mut n = 0;
        let mut alias_named = false;
        for e in &self.entries {
            let Some(device) = select(e) else {
                continue;
            };
            alias_named |= device != e.default_device;
            let (mindist, maxdist) = origin.measure(e);
            out[n] = DeviceDistance {
                device,
                mindist,
                maxdist,
            };
            n += 1;
        }
        (n, alias_named)
    }

    /// The number of entries `query` would report, or its error; never allocates.
    ///
    /// # Errors
    /// As [`Topology::distances`], except that it never reports `BufferTooSmall`.
    pub fn distances_len(&self, query: &Query<'_>) -> Result<usize, DistanceError> {
        match self.distances(query, &mut []) {
            Err(DistanceError::BufferTooSmall { needed }) => Ok(needed),
            Err(e) => Err(e),
            Ok(n) => Ok(n),
        }
    }
}
