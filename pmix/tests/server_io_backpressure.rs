//! Back-pressure (`ServerConfig::read_pause_output`): a client that sends requests
//! and does not read their replies stops being read once its queue passes the
//! bound, is not closed, and gets every reply once it reads again; the others are
//! served meanwhile.

mod server_io_common;

use std::io::Write;
use std::time::{Duration, Instant};

use pmix::ServerConfig;
use pmix_wire::{Reply, Request};
use server_io_common::{RawClient, ids, quiet};

const NS: &str = "io.backpressure";

#[test]
fn a_client_that_stops_reading_is_paused_not_closed_and_gets_every_reply_when_it_reads() {
    // A job-info blob of about 240 kB (2000 ranks): 200 unread REQ replies are about
    // 48 MB, past the hard bound of 8 MiB unless reading pauses at 1 MiB.
    let server = server_io_common::start(
        ServerConfig {
            max_pending_output: 8 << 20,
            read_pause_output: 1 << 20,
            ..quiet()
        },
        NS,
        2000,
    );
    let (uid, gid) = ids();
    let addr = server.local_addr();
    let mut hog = RawClient::connect(addr, NS, 0, uid, gid).unwrap();
    let mut tags = Vec::new();
    for _ in 0..200 {
        tags.push(hog.send(&Request::Req));
    }
    hog.stream.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.stats().read_pauses == 0 {
        assert!(
            Instant::now() < deadline,
            "never paused: {:?}",
            server.stats()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Paused, not closed; another client is served meanwhile.
    let mut other = RawClient::connect(addr, NS, 1, uid, gid).unwrap();
    assert_eq!(other.req(), NS);
    other.finalize();
    drop(other);
    while server.stats().open != 1 {
        assert!(
            Instant::now() < deadline,
            "the hog is open, the other closed: {:?}",
            server.stats()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.stats().malformed, 0, "{:?}", server.stats());
    // The hog reads: every reply comes, in order, each the whole blob.
    for (i, tag) in tags.iter().enumerate() {
        let f = hog.frame();
        assert_eq!(f.header.tag, *tag, "reply {i}");
        match pmix_wire::decode_reply(pmix_wire::Command::Req, &f.payload, &hog.codec).unwrap() {
            Reply::Req(info) => assert_eq!(info.nspace.to_string(), NS),
            other => panic!("reply {i}: {other:?}"),
        }
    }
    assert!(server.stats().read_pauses >= 1);
    // Served as any client once it reads.
    assert_eq!(hog.req(), NS);
    hog.finalize();
}
