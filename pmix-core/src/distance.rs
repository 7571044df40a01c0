//! Device distances: the answer to `PMIx_Compute_distances` (DESIGN §3).
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
//! ## Choices where DESIGN is silent
//! - An id that matches no device is not an error as long as another id (or type)
//!   selects something; only an empty result is `PMIX_ERR_NOT_FOUND`.
//! - Device names are matched by a linear scan with ASCII case folding: a topology has
//!   tens to a few hundred devices and ids are rare, so a hash index would cost more to
//!   build than it saves.

use crate::cpuset::CpuSet;
use crate::device::{Device, DeviceTypes};
use crate::pci::PciPattern;
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

/// How a name matched a device.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Match {
    /// Not at all.
    No,
    /// Through its PCI function or vendor identity: the whole entry is named.
    Function,
    /// By its own osname or uuid: this alias is the one to report.
    Itself,
}

fn match_name(d: &Device, name: &str, pci: Option<&PciPattern>) -> Match {
    if d.spec.name.eq_ignore_ascii_case(name) || d.uuid.eq_ignore_ascii_case(name) {
        Match::Itself
    } else if pci.is_some_and(|p| d.pci.is_some_and(|a| a.matches(p)))
        || d.spec
            .vendor_id
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case(name))
    {
        Match::Function
    } else {
        Match::No
    }
}

/// An origin resolved against a topology.
enum Resolved<'q> {
    Cpus(&'q CpuSet),
    /// Where the origin (its PCI function, or the non-PCI device itself) sits.
    Device(Place),
}

impl Topology {
    /// Computes the distances `query` asks for into `out`, returning how many entries
    /// were written (DESIGN §3). Entries come in a total, stable order: PCI bus id,
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
                Resolved::Cpus(cpus)
            }
            Origin::Device(name) => Resolved::Device(self.resolve_origin(name)?.place()),
        };

        let needed = if query.ids.is_empty() {
            // Without ids an entry is selected by its type alone: count per type.
            (0..6)
                .filter(|b| types.0 & (1 << b) != 0)
                .map(|b| self.type_counts[b] as usize)
                .sum()
        } else {
            self.entries
                .iter()
                .filter(|e| self.select(e, types, query.ids).is_some())
                .count()
        };
        if needed == 0 {
            return Err(DistanceError::NoDevices);
        }
        if needed > out.len() {
            return Err(DistanceError::BufferTooSmall { needed });
        }
        let mut n = 0;
        let mut renamed = false;
        // Tiers from a cpuset depend only on the device's locality: remember the last
        // one (entries in PCI order mostly share it with their neighbours).
        let mut cached: (u32, u16, u16) = (u32::MAX, 0, 0);
        for e in &self.entries {
            let rep = if query.ids.is_empty() {
                if e.kind & types.0 == 0 {
                    continue;
                }
                e.rep
            } else {
                let Some(rep) = self.select(e, types, query.ids) else {
                    continue;
                };
                renamed |= rep != e.rep;
                rep
            };
            let (mindist, maxdist) = match origin {
                Resolved::Cpus(cpus) => {
                    if cached.0 != e.loc {
                        let (lo, hi) = self.cpuset_tiers(cpus, e.loc);
                        cached = (e.loc, lo, hi);
                    }
                    let depth = e.place.depth();
                    (16 * cached.1 + depth, 16 * cached.2 + depth)
                }
                Resolved::Device(ref o) => {
                    let v = self.device_distance(o, &e.place);
                    (v, v)
                }
            };
            out[n] = DeviceDistance {
                device: DeviceId(rep),
                mindist,
                maxdist,
            };
            n += 1;
        }
        if renamed {
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

    /// If entry `e` is selected, the device to report for it (a caller-named alias
    /// wins over the default one).
    fn select(&self, e: &Entry, types: DeviceTypes, ids: &[&str]) -> Option<u32> {
        if e.kind & types.0 == 0 {
            return None;
        }
        let first = e.rep;
        if ids.is_empty() {
            return Some(first);
        }
        let members = &self.entry_members[e.members.start as usize..e.members.end as usize];
        let mut best: Option<u32> = None;
        for id in ids {
            let pci = PciPattern::parse(id).ok();
            for &m in members {
                match match_name(&self.devices[m as usize], id, pci.as_ref()) {
                    Match::Itself => return Some(m),
                    Match::Function => best = Some(first),
                    Match::No => {}
                }
            }
        }
        best
    }

    /// Finds the one PCI function (or non-PCI device) `name` designates.
    fn resolve_origin(&self, name: &str) -> Result<&Device, DistanceError> {
        if name.is_empty() {
            return Err(DistanceError::EmptyName);
        }
        let pci = PciPattern::parse(name).ok();
        let mut found: Option<&Device> = None;
        for d in &self.devices {
            if match_name(d, name, pci.as_ref()) == Match::No {
                continue;
            }
            match found {
                None => found = Some(d),
                Some(f) => {
                    let same = match (f.function, d.function) {
                        (Some(a), Some(b)) => a == b,
                        _ => core::ptr::eq(f, d),
                    };
                    if !same {
                        return Err(DistanceError::AmbiguousOrigin);
                    }
                }
            }
        }
        found.ok_or(DistanceError::OriginNotFound)
    }

    /// The lowest and highest tier the PUs of `cpus` see a locality at.
    fn cpuset_tiers(&self, cpus: &CpuSet, loc: u32) -> (u16, u16) {
        let loc = &self.localities[loc as usize];
        let (has0, has1, has2) = match loc.package {
            Some(pk) => {
                let pkset = &self.packages[pk as usize];
                (
                    cpus.intersects(&loc.cpus),
                    cpus.intersects_difference(pkset, &loc.cpus),
                    cpus.intersects_difference(self.machine_cpus(), pkset),
                )
            }
            None => (false, false, true),
        };
        let tiers = [has0, has1, has2];
        let min = tiers.iter().position(|&t| t).unwrap_or(2) as u16;
        let max = tiers.iter().rposition(|&t| t).unwrap_or(2) as u16;
        (min, max)
    }

    fn device_distance(&self, o: &Place, d: &Place) -> u16 {
        if o.ident == d.ident && o.pci == d.pci {
            return 0;
        }
        let oc = &self.chains[o.chain_start as usize..o.chain_end as usize];
        let dc = &self.chains[d.chain_start as usize..d.chain_end as usize];
        let common = oc.iter().zip(dc).take_while(|(a, b)| a == b).count();
        let (tier, hops) = if common > 0 {
            (1, (oc.len() - common) + (dc.len() - common))
        } else {
            let hops = oc.len() + dc.len();
            if o.host != u32::MAX && o.host == d.host {
                (2, hops)
            } else if o.package != u32::MAX && o.package == d.package {
                (3, hops)
            } else {
                (4, hops)
            }
        };
        16 * tier + hops.min(15) as u16
    }
}
