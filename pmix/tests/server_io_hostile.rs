//! Peers of the server's own uid that try to make it hold what others need: each
//! limit is hit, and the honest ranks are still admitted and served.

mod server_io_common;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use pmix::{Server, ServerConfig};
use server_io_common::{RawClient, dial, ids};

const NS: &str = "io.hostile";

fn start(size: u32, cfg: ServerConfig) -> Server {
    server_io_common::start(cfg, NS, size)
}

/// `n` connections that send five bytes of a connect header and then nothing.
fn half_open(server: &Server, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = dial(server.local_addr());
            s.write_all(&[0xff; 5]).unwrap();
            s
        })
        .collect()
}

fn served(server: &Server, rank: u32) -> RawClient {
    let (uid, gid) = ids();
    let mut c = RawClient::connect(server.local_addr(), NS, rank, uid, gid)
        .unwrap_or_else(|b| panic!("rank {rank} refused ({b:?})"));
    assert_eq!(c.req(), NS, "rank {rank}");
    c
}

#[test]
fn half_open_connections_past_their_bound_drop_the_oldest_so_a_rank_is_admitted() {
    let server = start(
        2,
        ServerConfig {
            max_half_open: 16,
            handshake_timeout: Duration::from_secs(60),
            ..server_io_common::quiet()
        },
    );
    let idle = half_open(&server, 200);
    let mut c = served(&server, 0);
    let st = server.stats();
    // The rank came after the 200: the 185 oldest made way (16 were kept, the
    // rank's made 17).
    assert!(st.dropped_half_open >= 185, "{st:?}");
    assert!(st.open <= 17, "{st:?}");
    c.finalize();
    drop(idle);
}

#[test]
fn with_every_connection_taken_by_half_open_ones_a_rank_is_still_admitted() {
    let server = start(
        4,
        ServerConfig {
            max_connections: 8,
            handshake_timeout: Duration::from_secs(60),
            ..server_io_common::quiet()
        },
    );
    // Two ranks connected first keep their connections throughout.
    let mut early = [served(&server, 1), served(&server, 2)];
    let idle = half_open(&server, 100);
    let mut c = served(&server, 0);
    for (i, e) in early.iter_mut().enumerate() {
        assert_eq!(e.req(), NS, "early rank {}", i + 1);
    }
    let st = server.stats();
    assert!(st.dropped_half_open >= 94, "{st:?}");
    assert!(st.open <= 8, "{st:?}");
    c.finalize();
    for mut e in early {
        e.finalize();
    }
    drop(idle);
}

#[test]
fn unfinished_messages_past_their_bound_close_the_oldest_and_ranks_are_served() {
    let server = start(
        8,
        ServerConfig {
            max_unfinished_bytes: 8 << 20,
            ..server_io_common::quiet()
        },
    );
    // Six ranks each send 3 MiB of a 4 MiB message and stop: 18 MiB unfinished.
    let frame = pmix_wire::Frame::new(0, 101, vec![0x5a; 4 << 20])
        .unwrap()
        .encode()
        .unwrap();
    let mut hostile: Vec<RawClient> = (0..6).map(|r| served(&server, r)).collect();
    for h in &mut hostile {
        // Written whole or closed meanwhile (then the server dropped it).
        let _ = h.stream.write_all(&frame[..3 << 20]);
    }
    // An honest rank is served; the server held at most the bound (and one read).
    let mut honest = served(&server, 7);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let st = loop {
        let st = server.stats();
        if st.dropped_unfinished >= 3 || std::time::Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(st.dropped_unfinished >= 3, "{st:?}");
    assert!(st.unfinished_bytes <= 8 << 20, "{st:?}");
    assert_eq!(honest.req(), NS);
    // The hostile ranks leave: nothing unfinished is held.
    drop(hostile);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while server.stats().unfinished_bytes > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.stats().unfinished_bytes, 0);
    honest.finalize();
}

#[test]
fn every_limit_listed_can_be_set_by_its_name_and_no_other_name_is_taken() {
    for (name, _) in pmix::server::LIMITS {
        let mut cfg = ServerConfig::default();
        cfg.set_limit(name, 7)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let err = ServerConfig::default()
        .set_limit("max_nothing", 7)
        .unwrap_err();
    assert!(err.contains("max_half_open"), "{err}");
}
