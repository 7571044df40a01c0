//! The processor side: the machine's cpus, packages and NUMA nodes, from
//! `sys/devices/system/{cpu,node}`.

use std::collections::{BTreeMap, BTreeSet};

use pmix_core::{CpuSet, TopologyBuilder};

use crate::error::ScanError;
use crate::fs::SysFs;
use crate::scan::{Ctx, Placed};

const CPU_DIR: &str = "sys/devices/system/cpu";
const NODE_DIR: &str = "sys/devices/system/node";

/// What the processor side of the tree says.
pub(crate) struct Processors {
    pub(crate) machine: CpuSet,
    /// Package id → cpus, by id.
    pub(crate) packages: BTreeMap<u64, CpuSet>,
    /// NUMA node index → cpus (within the machine), by index.
    pub(crate) numa: BTreeMap<u32, CpuSet>,
}

/// `prefix<N>` → N, for directory entries such as `cpu12` and `node3`.
fn indexed(name: &str, prefix: &str) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse::<u32>().ok().filter(|&n| n < CpuSet::MAX_PUS)
}

impl<F: SysFs> Ctx<'_, F> {
    pub(crate) fn processors(&mut self) -> Result<Processors, ScanError> {
        let Some(entries) = self.list(CPU_DIR)? else {
            return Err(ScanError::NoCpus {
                path: self.fs.display(CPU_DIR),
            });
        };
        let dirs: BTreeSet<u32> = entries.iter().filter_map(|n| indexed(n, "cpu")).collect();

        // The machine: the online cpus, else every cpuN directory not marked offline.
        let online_path = format!("{CPU_DIR}/online");
        let machine = match self.read_opt(&online_path)? {
            Some(s) => {
                let set = self.parse_list(&online_path, &s)?;
                if set.is_empty() {
                    return Err(ScanError::NoCpus {
                        path: self.fs.display(&online_path),
                    });
                }
                set
            }
            None => {
                let mut set = CpuSet::new();
                for &n in &dirs {
                    let p = format!("{CPU_DIR}/cpu{n}/online");
                    let on = match self.read_opt(&p)? {
                        None => true,
                        Some(s) => match s.trim() {
                            "1" => true,
                            "0" => false,
                            _ => return Err(self.malformed(&p, &s, "is neither 0 nor 1")),
                        },
                    };
                    if on {
                        set.insert(n);
                    }
                }
                if set.is_empty() {
                    return Err(ScanError::NoCpus {
                        path: self.fs.display(CPU_DIR),
                    });
                }
                set
            }
        };

        // Packages: cpus grouped by physical_package_id (-1 or absent: no package).
        let mut packages: BTreeMap<u64, CpuSet> = BTreeMap::new();
        for &n in &dirs {
            if !machine.contains(n) {
                continue;
            }
            let p = format!("{CPU_DIR}/cpu{n}/topology/physical_package_id");
            let Some(s) = self.read_opt(&p)? else {
                continue;
            };
            let id = self.parse_int(&p, &s)?;
            if let Ok(id) = u64::try_from(id) {
                packages.entry(id).or_default().insert(n);
            }
        }

        // NUMA nodes, restricted to the machine's cpus (a node may list offline cpus,
        // or none: memory-only nodes).
        let mut numa = BTreeMap::new();
        if let Some(entries) = self.list(NODE_DIR)? {
            for idx in entries.iter().filter_map(|n| indexed(n, "node")) {
                let p = format!("{NODE_DIR}/node{idx}/cpulist");
                let mut cpus = match self.read_opt(&p)? {
                    Some(s) => self.parse_list(&p, &s)?,
                    None => CpuSet::new(),
                };
                cpus.intersect_with(&machine);
                numa.insert(idx, cpus);
            }
        }
        Ok(Processors {
            machine,
            packages,
            numa,
        })
    }
}

impl Processors {
    /// Adds the machine's packages and NUMA nodes to `b`: a NUMA node goes under the
    /// package holding its cpus, else under the machine.
    pub(crate) fn place(&self, b: &mut TopologyBuilder) -> Placed {
        let machine_node = b.machine();
        let packages: Vec<(CpuSet, _)> = self
            .packages
            .values()
            .map(|cpus| (cpus.clone(), b.package(machine_node, cpus.clone())))
            .collect();
        let numa = self
            .numa
            .iter()
            .map(|(&idx, cpus)| {
                let parent = packages
                    .iter()
                    .find(|(p, _)| !cpus.is_empty() && cpus.is_subset(p))
                    .map_or(machine_node, |(_, n)| *n);
                (idx, cpus.clone(), b.numa(parent, cpus.clone()))
            })
            .collect();
        Placed {
            machine: self.machine.clone(),
            machine_node,
            packages,
            numa,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::indexed;

    #[test]
    fn only_plain_indexes_name_cpus_and_nodes() {
        assert_eq!(indexed("cpu12", "cpu"), Some(12));
        assert_eq!(indexed("node0", "node"), Some(0));
        for bad in [
            "cpufreq",
            "cpu",
            "cpu01",
            "cpu-1",
            "cpu99999999999",
            "online",
        ] {
            assert_eq!(indexed(bad, "cpu"), None, "{bad}");
        }
    }
}
