//! Property tests over generated topologies: the engine agrees with a naive oracle
//! that walks the tree PU by PU and ancestor by ancestor, from-device distances are
//! symmetric, `mindist ≤ maxdist`, the order is total and repeatable, and tiers are
//! monotone.

use pmix_core::{
    CpuSet, Device, DeviceDistance, DeviceTypes, NodeId, NodeKind, OsDeviceSpec, PciAddr, Query,
    Topology, TopologyBuilder,
};
use proptest::prelude::*;

/// Builds a topology from generated choices; every choice leads to a valid topology.
fn build(pus_per_pkg: &[u8], split_numa: &[bool], ops: &[(u8, u16, u8)]) -> Topology {
    let total: u32 = pus_per_pkg.iter().map(|&n| u32::from(n)).sum();
    let mut b = TopologyBuilder::new(CpuSet::first_n(total));
    let m = b.machine();
    let mut procs = vec![m];
    let mut next = 0;
    for (i, &n) in pus_per_pkg.iter().enumerate() {
        let mut set = CpuSet::new();
        set.insert_range(next, next + u32::from(n));
        let p = b.package(m, set.clone());
        procs.push(p);
        if split_numa.get(i).copied().unwrap_or(false) && n >= 2 {
            let half = next + u32::from(n) / 2;
            let mut a = CpuSet::new();
            a.insert_range(next, half);
            let mut c = CpuSet::new();
            c.insert_range(half, next + u32::from(n));
            procs.push(b.numa(p, a));
            procs.push(b.numa(p, c));
        }
        next += u32::from(n);
    }
    let mut bridges: Vec<NodeId> = Vec::new(); // host bridges and PCI bridges
    let mut functions: Vec<NodeId> = Vec::new();
    let mut addr = 0u32;
    let mut next_addr = || {
        addr += 1;
        PciAddr::new(addr >> 13, (addr >> 5) as u8, (addr & 31) as u8, 0).unwrap()
    };
    let kinds = [
        DeviceTypes::BLOCK,
        DeviceTypes::GPU,
        DeviceTypes::NETWORK,
        DeviceTypes::OPENFABRICS,
        DeviceTypes::DMA,
        DeviceTypes::COPROC,
    ];
    let prefixes = [
        "card", "renderD", "nvml", "cuda", "opencl", "eth", "mlx5_", "x",
    ];
    for (k, &(op, choice, misc)) in ops.iter().enumerate() {
        let pick = |v: &[NodeId]| v[choice as usize % v.len()];
        match op % 4 {
            0 => bridges.push(b.host_bridge(pick(&procs))),
            1 if !bridges.is_empty() => {
                let p = pick(&bridges);
                bridges.push(b.pci_bridge(p, next_addr(), None));
            }
            2 => {
                let parent = if bridges.is_empty() || misc % 5 == 0 {
                    pick(&procs)
                } else {
                    pick(&bridges)
                };
                functions.push(b.pci_function(parent, next_addr(), None));
            }
            _ => {
                let parent = if functions.is_empty() || misc % 7 == 0 {
                    pick(&procs)
                } else {
                    pick(&functions)
                };
                let name = format!("{}{k}", prefixes[(misc / 8) as usize % prefixes.len()]);
                let spec = OsDeviceSpec {
                    name,
                    kind: kinds[misc as usize % kinds.len()],
                    ..Default::default()
                };
                b.os_device(parent, spec);
            }
        }
    }
    b.build().expect("generated topologies are valid")
}

fn ancestors(t: &Topology, id: NodeId) -> Vec<NodeId> {
    let mut v = vec![id];
    let mut cur = id;
    while let Some(p) = t.node(cur).unwrap().parent() {
        v.push(p);
        cur = p;
    }
    v.reverse();
    v
}

fn function_of(t: &Topology, d: &Device) -> Option<NodeId> {
    let p = t.node(d.node()).unwrap().parent()?;
    (t.node(p).unwrap().kind() == NodeKind::PciFunction).then_some(p)
}

/// Cpuset of the nearest processor ancestor.
fn oracle_locality(t: &Topology, d: &Device) -> CpuSet {
    let path = ancestors(t, d.node());
    let p = path
        .iter()
        .rev()
        .find(|n| t.node(**n).unwrap().kind().is_processor())
        .unwrap();
    t.node(*p).unwrap().cpuset().unwrap().clone()
}

fn oracle_package(t: &Topology, loc: &CpuSet) -> Option<usize> {
    if loc.is_empty() {
        return None;
    }
    t.packages().iter().position(|p| loc.is_subset(p))
}

fn oracle_depth(t: &Topology, d: &Device) -> u16 {
    let Some(f) = function_of(t, d) else { return 0 };
    ancestors(t, f)
        .iter()
        .filter(|n| t.node(**n).unwrap().kind() == NodeKind::PciBridge)
        .count() as u16
}

fn oracle_cpuset(t: &Topology, cpus: &CpuSet, d: &Device) -> (u16, u16, u16, u16) {
    let loc = oracle_locality(t, d);
    let pk = oracle_package(t, &loc);
    let depth = oracle_depth(t, d).min(15);
    let mut tiers = vec![];
    for p in cpus.iter().filter(|p| t.machine_cpus().contains(*p)) {
        let p_pkg = t.packages().iter().position(|s| s.contains(p));
        let tier = if pk.is_some() && loc.contains(p) {
            0
        } else if pk.is_some() && pk == p_pkg {
            1
        } else {
            2
        };
        tiers.push(tier);
    }
    let (lo, hi) = (*tiers.iter().min().unwrap(), *tiers.iter().max().unwrap());
    (16 * lo + depth, 16 * hi + depth, lo, hi)
}

fn oracle_device(t: &Topology, o: &Device, d: &Device) -> (u16, u16) {
    let (fo, fd) = (function_of(t, o), function_of(t, d));
    match (fo, fd) {
        (Some(a), Some(b)) if a == b => return (0, 0),
        (None, None) if o.node() == d.node() => return (0, 0),
        _ => {}
    }
    let kind = |n: NodeId| t.node(n).unwrap().kind();
    let bridges_below = |path: &[NodeId], from: usize| {
        path[from..]
            .iter()
            .filter(|n| kind(**n) == NodeKind::PciBridge)
            .count()
    };
    let po = fo
        .map(|f| ancestors(t, f))
        .unwrap_or_else(|| ancestors(t, o.node()));
    let pd = fd
        .map(|f| ancestors(t, f))
        .unwrap_or_else(|| ancestors(t, d.node()));
    let common = po.iter().zip(&pd).take_while(|(a, b)| a == b).count();
    let lca = po[common - 1];
    let hops = |from: usize| (bridges_below(&po, from) + bridges_below(&pd, from)) as u16;
    let (tier, hops) = if fo.is_some() && fd.is_some() && kind(lca) == NodeKind::PciBridge {
        (1, hops(common))
    } else if fo.is_some() && fd.is_some() && kind(lca) == NodeKind::HostBridge {
        (2, hops(0))
    } else {
        let (lo, ld) = (oracle_locality(t, o), oracle_locality(t, d));
        let (ko, kd) = (oracle_package(t, &lo), oracle_package(t, &ld));
        (if ko.is_some() && ko == kd { 3 } else { 4 }, hops(0))
    };
    (16 * tier + hops.min(15), tier)
}

fn order_key(d: &Device) -> (bool, Option<PciAddr>, String) {
    (d.pci().is_none(), d.pci(), d.name().to_string())
}

fn topo_strategy() -> impl Strategy<Value = Topology> {
    (
        proptest::collection::vec(1u8..6, 1..4),
        proptest::collection::vec(any::<bool>(), 3),
        proptest::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 0..48),
    )
        .prop_map(|(p, s, o)| build(&p, &s, &o))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cpuset_distances_match_the_oracle_and_min_le_max(t in topo_strategy(), bits in any::<u32>()) {
        let pus: Vec<u32> = t.machine_cpus().iter().collect();
        let mut cpus = CpuSet::from_pus(pus.iter().enumerate().filter(|(i, _)| bits >> (i % 32) & 1 == 1).map(|(_, p)| *p));
        if cpus.is_empty() { cpus.insert(pus[0]); }
        let q = Query::from_cpuset(&cpus).types(DeviceTypes::ALL);
        let mut out = vec![DeviceDistance::EMPTY; t.devices().len()];
        let n = match t.distances(&q, &mut out) { Ok(n) => n, Err(e) => { prop_assert!(t.devices().is_empty(), "{e}"); return Ok(()); } };
        let mut again = vec![DeviceDistance::EMPTY; n];
        prop_assert_eq!(t.distances(&q, &mut again), Ok(n));
        prop_assert_eq!(&out[..n], &again[..]);
        let mut tiers = vec![];
        for r in &out[..n] {
            let d = t.device(r.device).unwrap();
            let (lo, hi, tlo, thi) = oracle_cpuset(&t, &cpus, d);
            prop_assert!(r.mindist <= r.maxdist);
            prop_assert_eq!((r.mindist, r.maxdist), (lo, hi), "device {}", d.name());
            tiers.push((tlo, thi, r.mindist, r.maxdist));
        }
        for a in &tiers { for b in &tiers {
            if a.0 < b.0 { prop_assert!(a.2 < b.2); }
            if a.1 < b.1 { prop_assert!(a.3 < b.3); }
        }}
        for w in out[..n].windows(2) {
            let (a, b) = (t.device(w[0].device).unwrap(), t.device(w[1].device).unwrap());
            prop_assert!(order_key(a) < order_key(b), "{} before {}", a.name(), b.name());
        }
    }

    #[test]
    fn device_distances_match_the_oracle_and_are_symmetric(t in topo_strategy()) {
        let mut out = vec![DeviceDistance::EMPTY; t.devices().len()];
        for o in t.devices() {
            for d in t.devices() {
                let ids = [d.name()];
                let q = Query::from_device(o.name()).ids(&ids);
                let n = t.distances(&q, &mut out).unwrap();
                prop_assert_eq!(n, 1);
                prop_assert_eq!(t.device(out[0].device).unwrap().name(), d.name());
                let (expect, _) = oracle_device(&t, o, d);
                prop_assert_eq!(out[0].mindist, out[0].maxdist);
                prop_assert_eq!(out[0].mindist, expect, "{} -> {}", o.name(), d.name());
                let back = [o.name()];
                let n = t.distances(&Query::from_device(d.name()).ids(&back), &mut out).unwrap();
                prop_assert_eq!(n, 1);
                prop_assert_eq!(out[0].mindist, expect, "symmetry {} <- {}", o.name(), d.name());
            }
        }
    }

    #[test]
    fn device_tiers_are_monotone_and_the_origin_is_at_zero(t in topo_strategy()) {
        let mut out = vec![DeviceDistance::EMPTY; t.devices().len()];
        for o in t.devices() {
            let n = t.distances(&Query::from_device(o.name()).types(DeviceTypes::ALL), &mut out).unwrap();
            let rows: Vec<_> = out[..n].iter().map(|r| (oracle_device(&t, o, t.device(r.device).unwrap()).1, r.mindist)).collect();
            for a in &rows { for b in &rows { if a.0 < b.0 { prop_assert!(a.1 < b.1); } } }
            let of = function_of(&t, o);
            for r in &out[..n] {
                let d = t.device(r.device).unwrap();
                let same = d.node() == o.node() || (of.is_some() && function_of(&t, d) == of);
                prop_assert_eq!(r.mindist == 0, same, "{} -> {}", o.name(), d.name());
            }
        }
    }
}
