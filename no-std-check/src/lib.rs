//! A `#![no_std]` static library that links `pmix-core` and answers one query, and
//! links `pmix-wire` and decodes one request and reads one node-store segment, so the
//! whole core (topology, cpusets, distances) and the wire codec are proven to build and
//! link without `std`.
#![no_std]

extern crate alloc;

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicUsize, Ordering};

use pmix_core::{CpuSet, DeviceDistance, Query, TopologyBuilder};

/// A bump allocator over a static arena: enough to build a small topology.
struct Bump;

const ARENA: usize = 1 << 16;
static mut HEAP: [u8; ARENA] = [0; ARENA];
static NEXT: AtomicUsize = AtomicUsize::new(0);

// SAFETY: hands out disjoint, aligned slices of a static arena and never reuses them.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut start = 0;
        let claimed = NEXT.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            start = n.next_multiple_of(layout.align());
            let end = start.checked_add(layout.size())?;
            (end <= ARENA).then_some(end)
        });
        match claimed {
            // SAFETY: start + size lies within the arena, and no other call gets it.
            Ok(_) => unsafe { (&raw mut HEAP).cast::<u8>().add(start) },
            Err(_) => core::ptr::null_mut(),
        }
    }
    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static GLOBAL: Bump = Bump;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

/// Builds a one-package machine and returns the number of default entries from cpu 0.
#[unsafe(no_mangle)]
pub extern "C" fn pmix_core_no_std_check() -> usize {
    let b = TopologyBuilder::new(CpuSet::first_n(4));
    let Ok(topo) = b.build() else {
        return usize::MAX;
    };
    let cpus = CpuSet::first_n(1);
    let mut out = [DeviceDistance::EMPTY; 4];
    topo.distances(&Query::from_cpuset(&cpus), &mut out)
        .unwrap_or(0)
}

/// Decodes and re-encodes a FINALIZE request (`02 05`); returns 1 when the bytes
/// round-trip, 0 otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn pmix_wire_no_std_check() -> usize {
    let codec = pmix_wire::Codec::v422();
    let bytes = [0x02, 0x05];
    match pmix_wire::msg::decode_request(&bytes, &codec) {
        Ok(r) => usize::from(r.encode(&codec).is_ok_and(|b| b[..] == bytes[..])),
        Err(_) => 0,
    }
}

/// Writes a node-store segment of one job-level value and reads it back without
/// allocating; returns the value (7), or 0 when something failed.
#[unsafe(no_mangle)]
pub extern "C" fn pmix_wire_nodestore_no_std_check() -> u32 {
    use pmix_wire::nodestore::{Segment, SegmentBuilder, WILDCARD};
    let Ok(mut b) = SegmentBuilder::new("ns", 0) else {
        return 0;
    };
    if b.push(
        WILDCARD,
        pmix_wire::keys::JOB_SIZE,
        &pmix_wire::Value::Uint32(7),
    )
    .is_err()
    {
        return 0;
    }
    let Ok(bytes) = b.finish() else {
        return 0;
    };
    match Segment::parse(&bytes[..]).map(|s| s.get_u32(WILDCARD, pmix_wire::keys::JOB_SIZE)) {
        Ok(Some(Ok(v))) => v,
        _ => 0,
    }
}
