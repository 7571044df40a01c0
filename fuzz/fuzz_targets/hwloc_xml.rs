//! Arbitrary bytes into the hwloc XML importer: it must return a topology or an error,
//! never panic, and a topology it returns must answer queries.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, Query};

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = pmix_hwloc::detect_format(s);
    }
    let Ok(topo) = pmix_hwloc::Importer::new().import_bytes(data) else {
        return;
    };
    let mut out = [DeviceDistance::EMPTY; 64];
    for p in topo.packages() {
        if let Some(first) = p.first() {
            let cpus = CpuSet::from_pus([first]);
            let _ = topo.distances(&Query::from_cpuset(&cpus).types(DeviceTypes::ALL), &mut out);
        }
    }
    for d in topo.devices().iter().take(16) {
        let q = Query::from_device(d.name()).types(DeviceTypes::ALL);
        if let Ok(n) = topo.distances(&q, &mut out) {
            // The origin's own function is at distance 0 whenever the origin is reported.
            assert!(out[..n].iter().all(|e| e.mindist == e.maxdist));
        }
    }
});
