//! Traffic through the progress thread: many clients at once in a fence, a reply
//! larger than the socket takes at once, a client whose bytes arrive one at a time.

mod server_io_common;

use std::io::Write;
use std::time::Duration;

use pmix::Server;
use pmix_wire::msg::FenceNb;
use pmix_wire::{Command, Frame, Proc, Rank, Reply, Request, Status};
use server_io_common::{RawClient, connect_msg, dial, ids};

fn start(nspace: &str, size: u32) -> Server {
    server_io_common::start(server_io_common::quiet(), nspace, size)
}

#[test]
fn sixteen_clients_at_once_fence_together_and_finalize() {
    const NS: &str = "io.fence16";
    const N: u32 = 16;
    let server = start(NS, N);
    let addr = server.local_addr();
    let (uid, gid) = ids();
    let ranks: Vec<_> = (0..N)
        .map(|rank| {
            std::thread::spawn(move || {
                let mut c = RawClient::connect(addr, NS, rank, uid, gid).unwrap();
                assert_eq!(c.req(), NS);
                let fence = Request::FenceNb(FenceNb {
                    procs: vec![Proc {
                        nspace: NS.into(),
                        rank: Rank::WILDCARD,
                    }],
                    info: vec![],
                });
                match c.call(&fence) {
                    Reply::Status { status, .. } => assert_eq!(status, Status::SUCCESS),
                    other => panic!("rank {rank}: FENCENB answered {other:?}"),
                }
                c.finalize();
            })
        })
        .collect();
    for t in ranks {
        t.join().unwrap();
    }
    assert_eq!(server.stats().connected, u64::from(N));
}

#[test]
fn a_reply_larger_than_the_socket_takes_at_once_arrives_whole() {
    const NS: &str = "io.bigblob";
    // A job-info blob of some megabytes: more than a loopback socket buffers.
    let server = start(NS, 20_000);
    let (uid, gid) = ids();
    let mut c = RawClient::connect(server.local_addr(), NS, 0, uid, gid).unwrap();
    let tag = c.send(&Request::Req);
    // Let the server fill the socket and wait for it to drain.
    std::thread::sleep(Duration::from_millis(300));
    let f = c.frame();
    assert_eq!(f.header.tag, tag);
    assert!(f.payload.len() > 1 << 20, "{} bytes", f.payload.len());
    match pmix_wire::decode_reply(Command::Req, &f.payload, &c.codec).unwrap() {
        Reply::Req(info) => assert_eq!(info.nspace, NS),
        other => panic!("REQ answered {other:?}"),
    }
    // Another client is served meanwhile and after.
    let mut d = RawClient::connect(server.local_addr(), NS, 1, uid, gid).unwrap();
    d.finalize();
    c.finalize();
}

#[test]
fn bytes_that_arrive_one_at_a_time_are_reassembled() {
    const NS: &str = "io.dribble";
    let server = start(NS, 1);
    let (uid, gid) = ids();
    let msg = connect_msg(NS, 0, uid, gid);
    let codec = msg.codec(pmix_wire::Limits::DEFAULT).unwrap();
    let mut bytes = msg.encode().unwrap();
    let req = Request::Req.encode(&codec).unwrap();
    bytes.extend(Frame::new(0, 101, req).unwrap().encode().unwrap());
    let mut s = dial(server.local_addr());
    for b in &bytes {
        s.write_all(std::slice::from_ref(b)).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut c = RawClient::from_stream_after_connect(s, codec);
    let f = c.frame();
    assert_eq!(f.header.tag, 101);
    match pmix_wire::decode_reply(Command::Req, &f.payload, &c.codec).unwrap() {
        Reply::Req(info) => assert_eq!(info.nspace, NS),
        other => panic!("REQ answered {other:?}"),
    }
}
