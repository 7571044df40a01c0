//! What serving `PMIX_DEVICE_DISTANCES` as job data costs the registration of a
//! namespace (issue 38): 128 local ranks, each bound to one PU (round robin over the
//! topology's PUs), registered with [`Core::add_namespace`] on a core whose
//! configuration has no topology service (the distances are left out) and on one
//! whose service holds the topology (each rank's blob gets its distances, computed
//! once per distinct cpuset). Each registration is timed from the spec to the
//! namespace's packed job info; the median of many, per topology: an hwloc XML of
//! `testdata/` with GPUs and NICs on several packages, and one with many PUs.
//! The topology is loaded before timing (a server loads it once, not per job).
//!
//! Target: with the distances at most 2x the time without, and at most 1 ms added.
//! A missed target prints "NOT met"; the exit status is 0 either way.
//!
//! `cargo bench -p pmix --bench job_distances` (release).

use std::sync::Arc;
use std::time::{Duration, Instant};

use pmix::Service;
use pmix::server::core::{Core, CoreConfig, NamespaceSpec};

const RANKS: u32 = 128;
const ROUNDS: usize = 200;

fn spec(n: u32, pus: &[u32]) -> NamespaceSpec {
    let mut spec = NamespaceSpec::single_node("job", n, 1000, 1000);
    for (r, rank) in spec.ranks.iter_mut().enumerate() {
        rank.cpuset = Some(format!("hwloc:{}", pus[r % pus.len()]));
    }
    spec
}

/// The median time of registering `spec` on a fresh core of `cfg` (the core made
/// before timing, the namespace removed after).
fn median(cfg: &CoreConfig, spec: &NamespaceSpec) -> Duration {
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let mut core = Core::new(cfg.clone());
            let s = spec.clone();
            let t = Instant::now();
            core.add_namespace(s).expect("registered");
            let d = t.elapsed();
            drop(core);
            d
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/hwloc-xml/");
    println!(
        "register a namespace of {RANKS} local ranks, each bound to one PU (median of {ROUNDS})"
    );
    println!(
        "{:<34} {:>12} {:>12} {:>7} {:>10}  target",
        "topology (PUs, devices)", "without", "with", "ratio", "added"
    );
    for file in [
        "96em64t-4n4d3ca2co-pci.xml",
        "power8gpudistances.xml",
        "16intel64-manyVFs.xml",
    ] {
        let svc = Service::new(format!("xml:{dir}{file}"), Some("node0".into())).expect("source");
        let topo = svc.topology().expect("topology").clone();
        let pus: Vec<u32> = topo.packages().iter().flat_map(|p| p.iter()).collect();
        let devices = topo.devices().len();
        let spec = spec(RANKS, &pus);
        let without = CoreConfig::new("srv", 0, "node0", 1000, 1000);
        let mut with = without.clone();
        with.service = Some(Arc::new(svc));
        let (a, b) = (median(&without, &spec), median(&with, &spec));
        let ratio = b.as_secs_f64() / a.as_secs_f64();
        let added = b.saturating_sub(a);
        let met = ratio <= 2.0 && added <= Duration::from_millis(1);
        println!(
            "{:<34} {:>9.1} us {:>9.1} us {:>6.2}x {:>7.1} us  {}",
            format!("{file} ({}, {devices})", pus.len()),
            a.as_secs_f64() * 1e6,
            b.as_secs_f64() * 1e6,
            ratio,
            added.as_secs_f64() * 1e6,
            if met {
                "met (<= 2x, <= 1 ms added)"
            } else {
                "NOT met (<= 2x, <= 1 ms added)"
            }
        );
    }
}
