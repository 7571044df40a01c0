//! Malformed peers close only their own connection: garbage, cut and over-long
//! messages, refused handshakes, silent peers; a client connected all along and new
//! clients are served throughout.

mod server_io_common;

use std::io::Write;
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use pmix::{Server, ServerConfig};
use pmix_wire::{Frame, FrameHeader};
use server_io_common::{Heard, RawClient, connect_msg, dial, ids, quiet, read_to_close};

const NS: &str = "io.malformed";

fn start(size: u32, cfg: ServerConfig) -> Server {
    server_io_common::start(cfg, NS, size)
}

/// Hands out ranks, and proves a fresh client is served (REQ, FINALIZE).
struct Ranks {
    addr: SocketAddr,
    next: u32,
}

impl Ranks {
    fn take(&mut self) -> u32 {
        self.next += 1;
        self.next - 1
    }

    fn client(&mut self) -> RawClient {
        let (uid, gid) = ids();
        let rank = self.take();
        RawClient::connect(self.addr, NS, rank, uid, gid)
            .unwrap_or_else(|b| panic!("rank {rank} refused ({b:?})"))
    }

    fn served(&mut self, after: &str) {
        let mut c = self.client();
        assert_eq!(c.req(), NS, "after {after}");
        c.finalize();
    }
}

/// A connect header (host order, as clients send it) announcing `nbytes`.
fn connect_header(nbytes: u32) -> Vec<u8> {
    let mut b = vec![0xff; 8];
    b.extend_from_slice(&nbytes.to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    b
}

#[test]
fn malformed_bytes_close_only_that_connection_while_the_others_are_served() {
    let server = start(32, quiet());
    let addr = server.local_addr();
    let (uid, gid) = ids();
    let mut ranks = Ranks { addr, next: 0 };
    let mut keeper = ranks.client();
    assert_eq!(keeper.req(), NS);

    // Before the handshake: each closes without a reply byte.
    let mut garbage_body = connect_header(40);
    garbage_body.extend_from_slice(&[0x5a; 40]);
    let mut huge = connect_header(u32::MAX);
    huge.extend_from_slice(b"native\0");
    let over_limit = connect_header(131_073);
    let mut bad_flag = connect_msg(NS, 30, uid, gid).encode().unwrap();
    bad_flag[16 + 7 + 4 + 8] = 42; // the type flag, after "native\0", length, credential
    let unknown_ns = connect_msg("io.nobody", 0, uid, gid).encode().unwrap();
    let unknown_rank = connect_msg(NS, 1000, uid, gid).encode().unwrap();
    let forged_gid = connect_msg(NS, ranks.take(), uid, gid.wrapping_add(1))
        .encode()
        .unwrap();
    let mut bad_version = connect_msg(NS, ranks.take(), uid, gid).encode().unwrap();
    let at = bad_version
        .windows(8)
        .position(|w| w == b"4.2.2rc2")
        .unwrap();
    bad_version[at] = b'3';
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "random bytes",
            (0..200u8).map(|i| i.wrapping_mul(37)).collect(),
        ),
        ("a connect header then a body of garbage", garbage_body),
        ("a connect length of 4 GiB", huge),
        ("a connect length one over OpenPMIx's limit", over_limit),
        ("an unknown type flag", bad_flag),
        ("an unknown namespace", unknown_ns),
        ("an unknown rank", unknown_rank),
        ("a credential with the wrong gid", forged_gid),
        ("a 3.2 client", bad_version),
    ];
    for (what, bytes) in cases {
        let mut s = dial(addr);
        s.write_all(&bytes).unwrap();
        assert_eq!(read_to_close(&mut s, what), Vec::<u8>::new(), "{what}");
        ranks.served(what);
    }

    // A connect message cut short, then the end of the stream.
    let whole = connect_msg(NS, ranks.take(), uid, gid).encode().unwrap();
    let mut s = dial(addr);
    s.write_all(&whole[..whole.len() / 2]).unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(
        read_to_close(&mut s, "a cut connect message"),
        Vec::<u8>::new()
    );
    ranks.served("a cut connect message");

    // After the handshake.
    let frame = |nbytes: u32, pad: bool| {
        let mut h = FrameHeader {
            pindex: 0,
            tag: 101,
            nbytes,
        }
        .encode()
        .to_vec();
        if pad {
            h[15] = 1;
        }
        h
    };
    let garbage_payload = Frame::new(0, 101, vec![0xff; 24])
        .unwrap()
        .encode()
        .unwrap();
    let mut cut = frame(100, false);
    cut.extend_from_slice(&[0; 10]);
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("a frame of garbage", garbage_payload, false),
        ("a frame length of 4 GiB", frame(u32::MAX, false), false),
        ("a frame header with nonzero padding", frame(0, true), false),
        ("a frame cut short, then the end of the stream", cut, true),
        (
            "half a frame header, then the end of the stream",
            frame(2, false)[..7].to_vec(),
            true,
        ),
    ];
    for (what, bytes, half_close) in cases {
        let mut c = ranks.client();
        c.stream.write_all(&bytes).unwrap();
        if half_close {
            c.stream.shutdown(Shutdown::Write).unwrap();
        }
        assert_eq!(
            read_to_close(&mut c.stream, what),
            Vec::<u8>::new(),
            "{what}"
        );
        ranks.served(what);
    }

    keeper.finalize();
    assert!(server.is_running());
    let st = server.stats();
    assert!(st.malformed >= 8, "{st:?}");
    assert!(st.refused_handshake >= 3, "{st:?}");
}

#[test]
fn a_peer_that_sends_no_connect_message_is_closed_after_the_handshake_timeout() {
    let server = start(
        2,
        ServerConfig {
            handshake_timeout: Duration::from_secs(1),
            ..quiet()
        },
    );
    let mut silent = dial(server.local_addr());
    // Part of a header, then nothing.
    silent.write_all(&[0xff; 5]).unwrap();
    assert_eq!(
        read_to_close(&mut silent, "a silent peer"),
        Vec::<u8>::new()
    );
    let (uid, gid) = ids();
    let mut c = RawClient::connect(server.local_addr(), NS, 0, uid, gid).unwrap();
    assert_eq!(c.req(), NS);
    c.finalize();
    assert!(server.stats().malformed >= 1);
}

#[test]
fn a_lost_client_is_reported_to_the_launcher() {
    let (server, heard) = server_io_common::watched(quiet());
    let (uid, gid) = ids();
    server
        .add_namespace(pmix::server::NamespaceSpec::single_node(NS, 2, uid, gid))
        .unwrap();
    let mut c = RawClient::connect(server.local_addr(), NS, 1, uid, gid).unwrap();
    assert_eq!(c.req(), NS);
    drop(c);
    let mut seen = Vec::new();
    while let Ok(ev) = heard.recv_timeout(Duration::from_secs(30)) {
        let lost = matches!(&ev, Heard::Lost((nspace, 1)) if nspace == NS);
        seen.push(ev);
        if lost {
            return;
        }
    }
    panic!("no Lost event for rank 1; saw {seen:?}");
}

#[test]
fn a_client_that_never_reads_is_closed_once_its_queue_passes_the_bound() {
    // A job-info blob of about 240 kB, a bound of 1 MiB: a hundred unread REQ
    // replies (24 MB) pass it, whatever the kernel buffers (a few MB on loopback).
    let server = start(
        2000,
        ServerConfig {
            max_pending_output: 1 << 20,
            ..quiet()
        },
    );
    let (uid, gid) = ids();
    let addr = server.local_addr();
    let mut hog = RawClient::connect(addr, NS, 0, uid, gid).unwrap();
    for _ in 0..100 {
        let payload = pmix_wire::Request::Req.encode(&hog.codec).unwrap();
        let f = Frame::new(0, 101, payload).unwrap().encode().unwrap();
        if hog.stream.write_all(&f).is_err() {
            // Closed already, while its requests were still coming: what the test
            // waits for (a reset before the last request is written).
            break;
        }
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut closed = false;
    while std::time::Instant::now() < deadline {
        if server.stats().open == 0 {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        closed,
        "the server kept queueing for a client that never reads"
    );
    let mut c = RawClient::connect(addr, NS, 1, uid, gid).unwrap();
    assert_eq!(c.req(), NS);
    c.finalize();
}
