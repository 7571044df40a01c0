//! Clients killed at random instants while they read their job information, 200
//! times, half of them reading the node store's mapped segment and half the copy
//! their REQ brought: the server and the other clients never wait on them
//! (docs/serving.md §5.4: no lock anywhere a reader can hold it).
//!
//! Each client is this test binary run again as one rank of a job of our server
//! (in this process): it connects, prints "reading", and reads job-level and
//! per-rank keys until it is killed with SIGKILL, at a random instant after that
//! line. Meanwhile a client of this process reads, commits and fences with the
//! server after every kill, each within a bound.

mod client_common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pmix::client::ServerEnv;
use pmix::server::{NamespaceSpec, Server, ServerConfig};
use pmix::{Connect, InitOptions, Pmix, Role};
use pmix_wire::{Info, Rank, Scope, Value};

const NS: &str = "kills.job";
const KILLS: u32 = 200;
/// The job: one rank per killed client, and this process's own.
const SIZE: u32 = KILLS + 1;
const CHILD: &str = "PMIX_RS_KILLS_CHILD";
/// The most any step may take.
const BOUND: Duration = Duration::from_secs(10);

/// The child: a rank that reads until it is killed.
#[test]
fn child_reads_until_killed() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let env = ServerEnv::from_env().unwrap().expect("launched");
    let store = env.node_store;
    let p = Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::To(env),
            ..InitOptions::default()
        },
    )
    .unwrap();
    let c = p.client().unwrap();
    assert_eq!(c.reads_node_store(), store);
    println!("reading");
    let mut r = 0;
    loop {
        let size = c.get(NS, Rank::WILDCARD.0, "pmix.job.size", &[]).unwrap();
        assert_eq!(size, Value::Uint32(SIZE));
        let lrank = c.get(NS, r, "pmix.lrank", &[]).unwrap();
        assert_eq!(lrank.as_u64(), Some(u64::from(r)));
        r = (r + 1) % SIZE;
    }
}

/// A pseudo-random number (xorshift), seeded by the time.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn clients_killed_while_reading_their_job_information_block_nobody() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let server = Server::start(ServerConfig {
        log: false,
        ..ServerConfig::default()
    })
    .unwrap();
    let (uid, gid) = pmix::os::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node(NS, SIZE, uid, gid))
        .unwrap();
    let me = client_common::client(client_common::env_of(&server, NS, KILLS, &[]));
    let own = me.client().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut seed = Instant::now().elapsed().as_nanos() as u64 | 1;
    seed ^= u64::from(std::process::id()) << 20;
    let mut mapped = 0;
    for rank in 0..KILLS {
        let store = rank % 2 == 0;
        let mut cmd = Command::new(&exe);
        cmd.args([
            "--exact",
            "child_reads_until_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        for (k, v) in server.client_env(NS, rank) {
            cmd.env(k, v);
        }
        if !store {
            cmd.env("PMIX_MCA_gds", "hash");
        }
        let mut child = cmd.spawn().unwrap();
        let started = Instant::now();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("reading") {
            line.clear();
            let n = out.read_line(&mut line).unwrap();
            assert!(n > 0, "rank {rank} ended before reading");
            assert!(
                started.elapsed() < BOUND,
                "rank {rank} never started reading"
            );
        }
        mapped += u32::from(store);
        // A random instant within its reads: 0 to 2 ms after it began.
        std::thread::sleep(Duration::from_micros(next(&mut seed) % 2000));
        let pid = child.id() as i32;
        // SAFETY: the test's own child, not reaped yet (its pid is still its own).
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
        let status = child.wait().unwrap();
        assert!(!status.success());
        // Nobody waits on it: this process's client reads, commits and fences
        // with the server (the fence over its own rank alone) within the bound.
        let t = Instant::now();
        assert_eq!(
            own.get(NS, Rank::WILDCARD.0, "pmix.job.size", &[]).unwrap(),
            Value::Uint32(SIZE)
        );
        own.put(Scope::GLOBAL, "after.kill", Value::Uint32(rank))
            .unwrap();
        own.commit().unwrap();
        let mine = [pmix_wire::Proc::new(NS, KILLS)];
        own.fence(&mine, &[Info::new("pmix.timeout", 10u32)])
            .unwrap();
        assert!(t.elapsed() < BOUND, "the server took {:?}", t.elapsed());
    }
    assert_eq!(mapped, KILLS / 2);
    // Every killed rank is lost, and the server serves on.
    let open = server.stats().open;
    assert!(
        open <= 1,
        "{open} connections open: only this process's stays"
    );
    me.finalize().unwrap();
    server.shutdown().unwrap();
}
