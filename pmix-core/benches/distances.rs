//! One distance query from a cpuset and one from a device on a two-socket machine with
//! 16 GPUs (four aliases each) and 8 HCAs behind PCIe switches. Target: under 1 µs per
//! query (OpenPMIx 4.2.2 takes about 21 µs on a 4-device machine). The last case names
//! four devices (`PMIX_DEVICE_ID`), each matched against every entry's aliases.
//!
//! Run: `cargo bench -p pmix-core --bench distances`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

#[path = "../tests/machines/mod.rs"]
mod machines;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, Query};

fn bench(c: &mut Criterion) {
    let topo = machines::dgx_like(2);
    let mut out = vec![DeviceDistance::EMPTY; 128];
    let cpu0 = CpuSet::from_pus([0]);
    let span = CpuSet::parse_list("0-111").unwrap();
    let default_n = topo
        .distances(&Query::from_cpuset(&cpu0), &mut out)
        .unwrap();
    println!(
        "machine: {} PUs, {} packages, {} OS devices, {} entries by default",
        topo.machine_cpus().len(),
        topo.packages().len(),
        topo.devices().len(),
        default_n
    );
    let mut g = c.benchmark_group("distances");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("from_cpuset_cpu0_default_types", |b| {
        b.iter(|| {
            topo.distances(black_box(&Query::from_cpuset(&cpu0)), &mut out)
                .unwrap()
        })
    });
    g.bench_function("from_cpuset_all_pus_all_types", |b| {
        b.iter(|| {
            topo.distances(
                black_box(&Query::from_cpuset(&span).types(DeviceTypes::ALL)),
                &mut out,
            )
            .unwrap()
        })
    });
    g.bench_function("from_device_nvml0_default_types", |b| {
        b.iter(|| {
            topo.distances(black_box(&Query::from_device("nvml0")), &mut out)
                .unwrap()
        })
    });
    g.bench_function("from_device_gpu_to_openfabrics", |b| {
        b.iter(|| {
            topo.distances(
                black_box(&Query::from_device("GPU-0005").types(DeviceTypes::OPENFABRICS)),
                &mut out,
            )
            .unwrap()
        })
    });
    let ids = ["card1", "GPU-0003", "0000:07:00.0", "nope"];
    g.bench_function("from_cpuset_cpu0_four_ids", |b| {
        b.iter(|| {
            topo.distances(black_box(&Query::from_cpuset(&cpu0).ids(&ids)), &mut out)
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
