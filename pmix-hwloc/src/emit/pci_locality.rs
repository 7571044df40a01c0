//! hwloc 3.0's PCI localities: which I/O roots the emitter has seen, which
//! `<pci_locality>` statement covers each, and how a covering statement narrows a
//! root's locality (the rules the crate docs spell out under "PCI localities").
//!
//! An I/O root is a host bridge, or a PCI bridge or function hanging directly under a
//! processor object (libhwloc with bridges filtered out). Each is looked up by its PCI
//! domain and bus: a host bridge's `bridge_pci` secondary bus, else its first PCI
//! child's bus; a PCI object's own. Statements are collected during the walk and applied
//! once it ends ([`Emitter::finish`]), when every root is known.

use pmix_core::{CpuSet, NodeId, PciAddr};

use super::{Class, Emitter, Loc, Located, ModelError};

/// One hwloc 3.0 `<pci_locality>`: the cpus that PCI buses `bus_min..=bus_max` of
/// `domain` are local to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PciLocality {
    pub(crate) domain: u32,
    pub(crate) bus_min: u8,
    pub(crate) bus_max: u8,
    pub(crate) cpus: CpuSet,
    /// Where the statement is (XML: byte offset of its tag).
    pub(crate) loc: Loc,
}

/// A top of a PCI tree: a host bridge, or a PCI bridge or function that hangs under a
/// processor object directly (libhwloc with bridges filtered out).
#[derive(Debug)]
pub(super) struct IoRoot {
    node: NodeId,
    /// The domain and bus a PCI locality is looked up by.
    key: Option<(u32, u8)>,
    /// The cpuset of the processor object it hangs under, as an index into
    /// [`Emitter::parent_sets`] (one copy per parent, however many roots it holds).
    parent: u32,
    loc: Loc,
}

impl Emitter {
    /// Records a PCI locality statement (hwloc 3.0 `<pci_locality>`), applied when the
    /// walk finishes.
    pub(crate) fn pci_locality(&mut self, locality: PciLocality) {
        self.localities.push(locality);
    }

    /// An I/O root `node` just opened under the innermost open object (a processor
    /// object), looked up by `key`: a host bridge's `bridge_pci` bus (without one, its
    /// first PCI child gives it one), a PCI object's own address.
    pub(super) fn note_io_root(&mut self, node: NodeId, key: Option<(u32, u8)>, loc: Loc) {
        let parent = self.parent_set();
        self.roots.push(IoRoot {
            node,
            key,
            parent,
            loc,
        });
    }

    /// A PCI object `id` at `addr` just opened: it is an I/O root if it hangs under a
    /// processor object, and it gives a host bridge without a known bus its bus.
    pub(super) fn note_pci_bus(&mut self, id: NodeId, addr: PciAddr, loc: Loc) {
        let Some(parent) = self.stack.last() else {
            return;
        };
        if parent.class.is_processor() {
            self.note_io_root(id, Some((addr.domain, addr.bus)), loc);
        } else if parent.class == Class::HostBridge {
            // The host bridge is the last root registered: nothing below it registers one.
            let hb = parent.node;
            if let Some(root) = self.roots.last_mut()
                && Some(root.node) == hb
                && root.key.is_none()
            {
                root.key = Some((addr.domain, addr.bus));
            }
        }
    }

    /// The index in `parent_sets` of the innermost open object's cpuset (a processor
    /// object when an I/O root opens under it), copied there the first time.
    fn parent_set(&mut self) -> u32 {
        let Some(top) = self.stack.last_mut() else {
            return 0;
        };
        if let Some(i) = top.parent_set {
            return i;
        }
        let i = u32::try_from(self.parent_sets.len()).unwrap_or(u32::MAX);
        self.parent_sets.push(top.cpus.clone().unwrap_or_default());
        top.parent_set = Some(i);
        i
    }

    /// Gives each I/O root the cpus of the first PCI locality (in document order) whose
    /// domain is the root's and whose bus range holds the root's bus, restricted to the
    /// machine's cpus, when that is not empty and differs from the cpus of the object the
    /// root hangs under.
    pub(super) fn apply_pci_localities(&mut self) -> Result<(), Located> {
        if self.localities.is_empty() {
            return Ok(());
        }
        let first = first_covering(&self.localities, &self.roots);
        let Some(b) = self.b.as_mut() else {
            return Ok(());
        };
        let machine = b.machine_cpus().clone();
        for (root, found) in self.roots.iter().zip(first) {
            let Some(l) = found.map(|i| &self.localities[i]) else {
                continue;
            };
            let parent = self
                .parent_sets
                .get(root.parent as usize)
                .unwrap_or(&machine);
            let mut cpus = l.cpus.clone();
            cpus.intersect_with(&machine);
            if cpus.is_empty() || cpus == *parent {
                continue;
            }
            if !cpus.is_subset(parent) {
                return Err(Located {
                    loc: l.loc,
                    error: ModelError::LocalityOutsideParent {
                        cpus: cpus.to_string(),
                        parent: parent.to_string(),
                        root: root.loc,
                    },
                });
            }
            b.set_locality(root.node, cpus);
        }
        Ok(())
    }
}

/// For each root, the index of the first locality (in `localities` order) whose domain
/// is the root's and whose bus range holds the root's bus.
///
/// Linear in roots and localities (plus a sort): the distinct (domain, bus) keys are
/// sorted, and each locality claims the still unclaimed keys of its range, skipping
/// claimed runs through a "next unclaimed" table, so hostile documents with many
/// overlapping ranges cost no more than the keys they can claim.
fn first_covering(localities: &[PciLocality], roots: &[IoRoot]) -> Vec<Option<usize>> {
    let mut keys: Vec<(u32, u8)> = roots.iter().filter_map(|r| r.key).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut claimed: Vec<Option<usize>> = vec![None; keys.len()];
    // next[i]: a candidate for the first unclaimed key at or after i.
    let mut next: Vec<usize> = (0..=keys.len()).collect();
    for (li, l) in localities.iter().enumerate() {
        let lo = keys.partition_point(|&k| k < (l.domain, l.bus_min));
        let hi = keys.partition_point(|&k| k <= (l.domain, l.bus_max));
        let mut j = first_unclaimed(&mut next, lo);
        while j < hi {
            claimed[j] = Some(li);
            next[j] = j + 1;
            j = first_unclaimed(&mut next, j + 1);
        }
    }
    roots
        .iter()
        .map(|r| {
            let k = r.key?;
            let i = keys.binary_search(&k).ok()?;
            claimed[i]
        })
        .collect()
}

/// The first unclaimed key index at or after `i` (`next.len() - 1` when none), halving
/// the paths it walks so later calls are short.
fn first_unclaimed(next: &mut [usize], mut i: usize) -> usize {
    while next[i] != i {
        next[i] = next[next[i]];
        i = next[i];
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locality(domain: u32, bus_min: u8, bus_max: u8) -> PciLocality {
        PciLocality {
            domain,
            bus_min,
            bus_max,
            cpus: CpuSet::new(),
            loc: 0,
        }
    }

    fn root(key: Option<(u32, u8)>) -> IoRoot {
        IoRoot {
            node: NodeId(0),
            key,
            parent: 0,
            loc: 0,
        }
    }

    #[test]
    fn first_covering_takes_the_first_range_in_document_order() {
        let roots = [
            root(Some((0, 0x2b))),
            root(Some((0, 0x30))),
            root(Some((1, 0x2b))),
            root(None),
            root(Some((0, 0x40))),
            root(Some((0, 0x2b))),
        ];
        let localities = [
            locality(0, 0x30, 0x3b),
            locality(0, 0x00, 0x3f),
            locality(1, 0x2b, 0x2b),
            locality(0, 0x2b, 0x2b),
        ];
        assert_eq!(
            first_covering(&localities, &roots),
            [Some(1), Some(0), Some(2), None, None, Some(1)]
        );
    }

    #[test]
    fn first_covering_matches_a_plain_scan() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..200 {
            let roots: Vec<IoRoot> = (0..rnd(12))
                .map(|_| root(Some((rnd(3) as u32, rnd(64) as u8))))
                .collect();
            let localities: Vec<PciLocality> = (0..rnd(12))
                .map(|_| {
                    let a = rnd(64) as u8;
                    let b = rnd(64) as u8;
                    locality(rnd(3) as u32, a.min(b), a.max(b))
                })
                .collect();
            let plain: Vec<Option<usize>> = roots
                .iter()
                .map(|r| {
                    let (d, bus) = r.key?;
                    localities
                        .iter()
                        .position(|l| l.domain == d && l.bus_min <= bus && bus <= l.bus_max)
                })
                .collect();
            assert_eq!(first_covering(&localities, &roots), plain);
        }
    }
}
