//! How far an entry is from a query's origin (docs/design.md §3.2, §3.3): the tiers a cpuset's
//! PUs see a locality at, and the tier and hops between two places in the I/O tree.
//! Both read only what `build()` precomputed, so measuring never walks the tree.

use crate::cpuset::CpuSet;
use crate::device::LocalityId;
use crate::topology::{Entry, PackedIndex, Place, Topology};

/// Measures entries from a query's origin: one implementation per kind of origin, so
/// that each query loop is compiled for its own and the test is inlined in it.
pub(super) trait Measure {
    /// The `(mindist, maxdist)` of entry `e`.
    fn measure(&mut self, e: &Entry) -> (u16, u16);
}

/// Measures from the PUs of a cpuset.
pub(super) struct FromCpuset<'q> {
    topo: &'q Topology,
    cpus: &'q CpuSet,
    /// The last locality measured, and the tiers its PUs see it at: tiers depend only
    /// on the locality, and entries in PCI order mostly share their neighbour's.
    last: Option<LocalityId>,
    tiers: (u16, u16),
}

impl Measure for FromCpuset<'_> {
    #[inline(always)]
    fn measure(&mut self, e: &Entry) -> (u16, u16) {
        if self.last != Some(e.locality) {
            self.tiers = self.topo.cpuset_tiers(self.cpus, e.locality);
            self.last = Some(e.locality);
        }
        let (lo, hi) = self.tiers;
        let depth = e.place.depth();
        (16 * lo + depth, 16 * hi + depth)
    }
}

/// Measures from a device.
pub(super) struct FromDevice<'q> {
    topo: &'q Topology,
    /// Where the origin device sits.
    origin: Place,
}

impl Measure for FromDevice<'_> {
    #[inline(always)]
    fn measure(&mut self, e: &Entry) -> (u16, u16) {
        let v = self.topo.device_distance(&self.origin, &e.place);
        (v, v)
    }
}

impl<'q> FromCpuset<'q> {
    /// Measures from the PUs of `cpus`.
    pub(super) fn new(topo: &'q Topology, cpus: &'q CpuSet) -> Self {
        FromCpuset {
            topo,
            cpus,
            last: None,
            tiers: (0, 0),
        }
    }
}

impl<'q> FromDevice<'q> {
    /// Measures from the device at `origin`.
    pub(super) fn new(topo: &'q Topology, origin: Place) -> Self {
        FromDevice { topo, origin }
    }
}

impl Topology {
    /// The lowest and highest tier the PUs of `cpus` see a locality at.
    fn cpuset_tiers(&self, cpus: &CpuSet, locality: LocalityId) -> (u16, u16) {
        let loc = &self.localities[locality.index()];
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

    /// The distance between the places of an origin device `o` and a device `d`.
    #[inline(always)]
    fn device_distance(&self, o: &Place, d: &Place) -> u16 {
        if o.endpoint == d.endpoint {
            return 0;
        }
        let oc = &self.pci_paths[o.pci_path_start as usize..o.pci_path_end as usize];
        let dc = &self.pci_paths[d.pci_path_start as usize..d.pci_path_end as usize];
        let common = oc.iter().zip(dc).take_while(|(a, b)| a == b).count();
        let (tier, hops) = if common > 0 {
            (1, (oc.len() - common) + (dc.len() - common))
        } else {
            let hops = oc.len() + dc.len();
            if PackedIndex::same(o.host_bridge, d.host_bridge) {
                (2, hops)
            } else if PackedIndex::same(o.package, d.package) {
                (3, hops)
            } else {
                (4, hops)
            }
        };
        16 * tier + hops.min(15) as u16
    }
}
