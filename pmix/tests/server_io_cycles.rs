//! 1,000 connect / REQ / FINALIZE / close cycles against one server leak no file
//! descriptor and leave memory flat. Alone in its binary: it counts this process's
//! descriptors and resident memory.

mod server_io_common;

use std::time::{Duration, Instant};

use pmix::Server;
use pmix::server::NamespaceSpec;
use server_io_common::{RawClient, ids, quiet};

const CYCLES: u32 = 1000;
const WARMUP: u32 = 100;
/// Ranks per namespace: a rank connects once, so the cycles use many ranks, spread
/// over namespaces small enough that each REQ's job-info blob stays small.
const PER_NS: u32 = 100;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

/// Waits (bounded) until the server has closed every connection.
fn settle(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.stats().open != 0 {
        assert!(
            Instant::now() < deadline,
            "connections still open: {:?}",
            server.stats()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_thousand_connect_finalize_cycles_leak_no_descriptor_and_keep_memory_flat() {
    let server = Server::start(quiet()).unwrap();
    let (uid, gid) = ids();
    let total = CYCLES + WARMUP;
    let namespaces = total.div_ceil(PER_NS);
    for n in 0..namespaces {
        server
            .add_namespace(NamespaceSpec::single_node(
                format!("io.cycles.{n}"),
                PER_NS,
                uid,
                gid,
            ))
            .unwrap();
    }
    let addr = server.local_addr();
    let cycle = |i: u32| {
        let ns = format!("io.cycles.{}", i / PER_NS);
        let mut c = RawClient::connect(addr, &ns, i % PER_NS, uid, gid)
            .unwrap_or_else(|b| panic!("cycle {i}: refused ({b:?})"));
        assert_eq!(c.req(), ns);
        c.finalize();
        drop(c);
    };
    for i in 0..WARMUP {
        cycle(i);
    }
    settle(&server);
    let (fds, rss) = (open_fds(), rss_kib());
    for i in WARMUP..total {
        cycle(i);
    }
    settle(&server);
    let (fds_after, rss_after) = (open_fds(), rss_kib());
    assert_eq!(
        fds_after, fds,
        "descriptors before and after {CYCLES} cycles"
    );
    assert!(
        rss_after < rss + 32 * 1024,
        "resident memory grew from {rss} KiB to {rss_after} KiB over {CYCLES} cycles"
    );
    let st = server.stats();
    assert_eq!(st.connected, u64::from(total), "{st:?}");
    server.shutdown().unwrap();
}
