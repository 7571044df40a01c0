//! DESIGN §3.4: a query on a built topology never allocates. A counting global
//! allocator (per test binary) proves it for every kind of query.

mod machines;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use machines::{cpus, dgx_like, reference_machine};
use pmix_core::{DeviceDistance, DeviceTypes, Query};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    // Warm up anything lazily initialised by the test harness itself.
    let _ = small.distances(&queries[0], &mut out);
    let before = ALLOCS.load(Ordering::SeqCst);
    let mut answered = 0;
    for topo in [&small, &big] {
        for q in &queries {
            if let Ok(n) = topo.distances(q, &mut out) {
                answered += n;
            }
            let _ = topo.distances(q, &mut out[..1]); // too small: reports the length
            let _ = topo.distances_len(q);
        }
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert!(
        answered > 50,
        "the queries really answered ({answered} entries)"
    );
    assert_eq!(
        after - before,
        0,
        "distance queries allocated {} times",
        after - before
    );
}
