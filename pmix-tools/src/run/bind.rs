//! Where each rank runs: the cpusets of `--bind`, planned from the machine's packages
//! (the runtime's topology, [`pmix::Service`]) and the PUs pmix-run itself may use, and
//! the kernel mask a child applies to itself before it runs the program.
//!
//! `core` gives each rank one PU, round robin over the PUs pmix-run may use: the
//! topology model (docs/design.md §2) has no core objects (cores play no part in distances),
//! so on a machine with SMT a "core" here is one hardware thread. `package` gives each
//! rank the PUs of one package that pmix-run may use, round robin over the packages
//! that have any. `none` binds nothing: every rank inherits pmix-run's binding.

use pmix_core::CpuSet;

use super::args::Bind;

/// How many PUs a binding can name (`CPU_SETSIZE`): indexes 0 to `MAX_PUS - 1`.
pub const MAX_PUS: u32 = rustix::thread::CpuSet::MAX_CPU as u32;

/// The cpuset of each of `n` ranks (`None`: unbound), or why there is none.
///
/// `allowed` is the set pmix-run may use (its own binding); `packages` the machine's
/// packages, each a set of PUs.
///
/// # Errors
/// A message when `allowed` is empty, or names a PU past [`MAX_PUS`], or (for
/// `package`) meets no package.
pub fn plan(
    bind: Bind,
    n: u32,
    allowed: &CpuSet,
    packages: &[CpuSet],
) -> Result<Vec<Option<CpuSet>>, String> {
    if bind == Bind::None {
        return Ok(vec![None; n as usize]);
    }
    if allowed.is_empty() {
        return Err("pmix-run may run on no PU: nothing to bind to".into());
    }
    if allowed.last().is_some_and(|pu| pu >= MAX_PUS) {
        return Err(format!("PUs past {} cannot be bound to", MAX_PUS - 1));
    }
    let places: Vec<CpuSet> = match bind {
        Bind::None => unreachable!(),
        Bind::Core => allowed.iter().map(|pu| CpuSet::from_pus([pu])).collect(),
        Bind::Package => packages
            .iter()
            .map(|p| {
                let mut s = p.clone();
                s.intersect_with(allowed);
                s
            })
            .filter(|s| !s.is_empty())
            .collect(),
    };
    if places.is_empty() {
        return Err("no package holds a PU pmix-run may use".into());
    }
    Ok((0..n as usize)
        .map(|r| Some(places[r % places.len()].clone()))
        .collect())
}

/// What `--report-bindings` prints for each rank (without the `pmix-run: ` prefix):
/// `rank R bound to PUs LIST: nearest TYPE NAME[,NAME...] (DIST); ...`, one entry per
/// device type, the devices at the smallest distance of that type, types in the
/// order of the distances table; `rank R not bound`; `rank R bound to PUs LIST: no
/// device` when the topology has none; `rank R bound to PUs LIST: no distances
/// (WHY)` when they cannot be computed. Computed once per distinct cpuset.
pub fn report(service: &pmix::Service, cpusets: &[Option<CpuSet>]) -> Vec<String> {
    let mut cache: std::collections::HashMap<&CpuSet, String> = std::collections::HashMap::new();
    cpusets
        .iter()
        .enumerate()
        .map(|(r, c)| match c {
            None => format!("rank {r} not bound"),
            Some(set) => {
                let near = cache.entry(set).or_insert_with(|| nearest(service, set));
                format!("rank {r} bound to PUs {set}: {near}")
            }
        })
        .collect()
}

/// The nearest devices of each type from `set` (see [`report`]).
fn nearest(service: &pmix::Service, set: &CpuSet) -> String {
    let req = pmix::DistanceRequest {
        cpuset: Some(set),
        ..Default::default()
    };
    let answer = service.answer(&req, |topo, entries| {
        // (type, smallest distance, names at it), in the order types first appear.
        let mut by_type: Vec<(pmix_core::DeviceTypes, u16, Vec<String>)> = Vec::new();
        for e in entries {
            let Some(d) = topo.device(e.device) else {
                continue;
            };
            match by_type.iter_mut().find(|(t, _, _)| *t == d.kind()) {
                Some((_, min, names)) if e.mindist < *min => {
                    *min = e.mindist;
                    *names = vec![d.name().to_string()];
                }
                Some((_, min, names)) if e.mindist == *min => names.push(d.name().to_string()),
                Some(_) => {}
                None => by_type.push((d.kind(), e.mindist, vec![d.name().to_string()])),
            }
        }
        by_type
    });
    match answer {
        Ok(by_type) if by_type.is_empty() => "no device".into(),
        Ok(by_type) => {
            let parts: Vec<String> = by_type
                .iter()
                .map(|(t, min, names)| {
                    format!("{} {} ({min})", t.name().unwrap_or("?"), names.join(","))
                })
                .collect();
            format!("nearest {}", parts.join("; "))
        }
        Err(e) => format!("no distances ({e})"),
    }
}

/// A kernel affinity mask, built before `fork` so that the child only has to hand it
/// to `sched_setaffinity` (nothing is allocated between fork and exec).
#[derive(Clone, Copy)]
pub struct Mask(rustix::thread::CpuSet);

impl std::fmt::Debug for Mask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mask(..)")
    }
}

impl Mask {
    /// The mask of `set`; PUs past [`MAX_PUS`] are left out ([`plan`] refuses them).
    pub fn new(set: &CpuSet) -> Mask {
        let mut raw = rustix::thread::CpuSet::new();
        for pu in set.iter().filter(|&pu| pu < MAX_PUS) {
            raw.set(pu as usize);
        }
        Mask(raw)
    }

    /// Whether `pu` is in the mask.
    pub fn contains(&self, pu: u32) -> bool {
        pu < MAX_PUS && self.0.is_set(pu as usize)
    }

    /// Binds the calling process (all of it: called in a child between fork and exec,
    /// where it has one thread) to this mask. Async-signal-safe: one system call.
    ///
    /// # Errors
    /// The OS error of `sched_setaffinity` (a PU this process may not use).
    pub fn apply(&self) -> std::io::Result<()> {
        rustix::thread::sched_setaffinity(None, &self.0).map_err(std::io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> CpuSet {
        CpuSet::parse_list(s).unwrap()
    }

    #[test]
    fn none_binds_nothing() {
        assert_eq!(
            plan(Bind::None, 3, &CpuSet::new(), &[]).unwrap(),
            vec![None; 3]
        );
    }

    #[test]
    fn core_gives_one_pu_per_rank_round_robin() {
        let p = plan(Bind::Core, 5, &set("2,4-5"), &[set("0-7")]).unwrap();
        let want: Vec<_> = ["2", "4", "5", "2", "4"]
            .iter()
            .map(|s| Some(set(s)))
            .collect();
        assert_eq!(p, want);
    }

    #[test]
    fn package_gives_the_allowed_pus_of_one_package_round_robin() {
        let pk = [set("0-3"), set("4-7"), set("8-11")];
        let p = plan(Bind::Package, 3, &set("1-2,8-9"), &pk).unwrap();
        assert_eq!(
            p,
            vec![Some(set("1-2")), Some(set("8-9")), Some(set("1-2"))]
        );
        assert!(plan(Bind::Package, 1, &set("20"), &pk).is_err());
        assert!(plan(Bind::Core, 1, &CpuSet::new(), &pk).is_err());
    }

    #[test]
    fn a_mask_holds_exactly_the_set() {
        let m = Mask::new(&set("0,3"));
        for pu in 0..8 {
            assert_eq!(m.contains(pu), pu == 0 || pu == 3, "{pu}");
        }
    }
}
