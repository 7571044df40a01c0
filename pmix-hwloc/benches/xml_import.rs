//! Our hwloc XML import against libhwloc's own XML load, on the same in-memory document
//! (`192em64t-12gr2n8c2t.xml`: 24 packages, 950 PUs, 10 OS devices), in one run.
//!
//! `cargo bench -p pmix-hwloc` measures ours alone; `cargo bench -p pmix-hwloc
//! --features native` adds libhwloc (every I/O object kept, as we keep them) and prints
//! the ratio of the medians. Target: ours at least 3× faster.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use pmix_hwloc::Importer;

const FILE: &str = "192em64t-12gr2n8c2t.xml";

fn read_file() -> String {
    let path = pmix_testkit::hwloc_xml(FILE);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn ours(xml: &str) -> usize {
    Importer::new()
        .import_str(xml)
        .map(|t| t.devices().len())
        .unwrap_or(0)
}

#[cfg(feature = "native")]
fn libhwloc(xml: &str) -> usize {
    use hwlocality::object::types::ObjectType;
    use hwlocality::topology::Topology;
    use hwlocality::topology::builder::TypeFilter;
    let topo = Topology::builder()
        .from_xml(xml)
        .ok()
        .and_then(|b| b.with_io_type_filter(TypeFilter::KeepAll).ok())
        .and_then(|b| b.build().ok());
    topo.map(|t| t.objects_with_type(ObjectType::OSDevice).count())
        .unwrap_or(0)
}

/// The median wall time of `runs` calls.
fn median(runs: usize, mut f: impl FnMut() -> usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[runs / 2]
}

fn main() {
    let xml = read_file();
    assert_eq!(ours(&xml), 10, "the importer reads the 10 OS devices");
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args();
    {
        let mut g = c.benchmark_group(FILE);
        g.bench_function("pmix-hwloc import", |b| b.iter(|| ours(black_box(&xml))));
        #[cfg(feature = "native")]
        g.bench_function("libhwloc xml load", |b| {
            b.iter(|| libhwloc(black_box(&xml)))
        });
        g.finish();
    }
    let ours_t = median(101, || ours(&xml));
    #[cfg(feature = "native")]
    {
        assert_eq!(libhwloc(&xml), 10, "libhwloc reads the 10 OS devices");
        let theirs = median(101, || libhwloc(&xml));
        let ratio = theirs.as_secs_f64() / ours_t.as_secs_f64();
        println!(
            "{FILE}: libhwloc XML load {:.3} ms, pmix-hwloc import {:.3} ms (medians of 101): ours is {ratio:.1}x faster (target >= 3x)",
            theirs.as_secs_f64() * 1e3,
            ours_t.as_secs_f64() * 1e3,
        );
    }
    #[cfg(not(feature = "native"))]
    println!(
        "{FILE}: pmix-hwloc import {:.3} ms (median of 101); the comparison with libhwloc needs --features native",
        ours_t.as_secs_f64() * 1e3
    );
    c.final_summary();
}
