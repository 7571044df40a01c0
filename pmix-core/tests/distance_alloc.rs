//! docs/design.md §3.4: a query on a built topology never allocates. A counting global
//! allocator (per test binary) proves it for every kind of query.

mod machines;

use pmix_testkit::counting;

use counting::allocations_during;
use machines::{cpus, dgx_like, reference_machine};
use pmix_core::{DeviceDistance, DeviceTypes, Query};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

#[test]
fn the_counter_sees_allocations() {
    assert!(allocations_during(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn distance_queries_never_allocate() {
    let small = reference_machine();
    let big = dgx_like(2);
    let c0 = cpus("0");
    let span = cpus("0,8,60");
    let outside = cpus("500");
    let ids = [
        "card1",
        "GPU-AAAA",
        "0000:05:00.0",
        "06:00.1",
        "ipv4://00:11:22:33:44:52",
        "nope",
    ];
    let mut out = vec![DeviceDistance::EMPTY; 256];
    let queries = [
        Query::from_cpuset(&c0),
        Query::from_cpuset(&span).types(DeviceTypes::ALL),
        Query::from_cpuset(&c0).ids(&ids),
        Query::from_device("nvml0"),
        Query::from_device("0000:21:00.0").types(DeviceTypes::ALL),
        Query::from_device("renderD129").ids(&ids),
        Query::from_device("missing"),
        Query::from_cpuset(&outside),
    ];
    let mut answered = 0;
    let allocated = allocations_during(|| {
        for topo in [&small, &big] {
            for q in &queries {
                if let Ok(n) = topo.distances(q, &mut out) {
                    answered += n;
                }
                let _ = topo.distances(q, &mut out[..1]); // too small: reports the length
                let _ = topo.distances_len(q);
            }
        }
    });
    assert!(
        answered > 50,
        "the queries really answered ({answered} entries)"
    );
    assert_eq!(allocated, 0, "distance queries allocated {allocated} times");
}
