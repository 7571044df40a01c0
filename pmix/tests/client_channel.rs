//! A launched client over the socket pair its launcher made for it
//! (`Server::client_channel`, `PMIX_RS_SERVER_FD`), and the threads a client starts:
//! none for init, blocking calls and finalize, the reader and the progress thread at
//! the first non-blocking call. One test in its own binary: a process takes its
//! channel once, and the thread census must see no other test's threads.

use std::os::fd::IntoRawFd;
use std::sync::mpsc;
use std::time::Duration;

use pmix::server::NamespaceSpec;
use pmix::{Connect, InitOptions, Pmix, PmixError, Role, Server, ServerConfig, ServerEnv};
use pmix_core::Status;

/// The names of this process's threads that are the client library's.
fn pmix_threads() -> Vec<String> {
    let mut names = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        if let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) {
            let comm = comm.trim().to_owned();
            if comm.starts_with("pmix-client") || comm.starts_with("pmix-progress") {
                names.push(comm);
            }
        }
    }
    names.sort();
    names
}

fn init(env: ServerEnv) -> Result<Pmix, pmix::Error> {
    Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::To(env),
            topology_source: Some("xml:/nonexistent/pmix-rs/topology.xml".into()),
            ..InitOptions::default()
        },
    )
}

#[test]
fn a_client_inits_over_its_channel_and_starts_threads_only_for_a_non_blocking_call() {
    let server = Server::start(ServerConfig {
        log: false,
        ..ServerConfig::default()
    })
    .unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node("chan.job", 1, uid, gid))
        .unwrap();
    let vars = server.client_env("chan.job", 0);
    let mut env = ServerEnv::from_pairs(&vars).unwrap().unwrap();
    // Nothing listens at this address: only the channel can reach the server.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    env.addr = closed.local_addr().unwrap();
    drop(closed);
    let fd = server.client_channel().unwrap().into_raw_fd();

    // A descriptor its launcher did not make (another pid) is not taken: the client
    // tries TCP, which fails here.
    env.channel = Some((fd, std::process::id() + 1));
    let err = init(env.clone()).unwrap_err();
    assert_eq!(err.status(), Status::ERR_UNREACH, "{err}");
    // Nor is a descriptor that is not a Unix socket.
    env.channel = Some((0, std::process::id()));
    assert_eq!(init(env.clone()).unwrap_err().status(), Status::ERR_UNREACH);

    env.channel = Some((fd, std::process::id()));
    let pmix = init(env).expect("init over the channel");
    assert_eq!(pmix.proc_id().rank, 0);
    assert!(pmix_threads().is_empty(), "{:?}", pmix_threads());
    // Blocking calls read the socket on this thread.
    pmix.fence(&[], &[]).unwrap();
    let size = pmix.get(
        "chan.job",
        pmix::wire::Rank::WILDCARD.0,
        "pmix.job.size",
        &[],
    );
    assert_eq!(size.unwrap().as_u64(), Some(1));
    pmix.commit().unwrap();
    assert!(pmix_threads().is_empty(), "{:?}", pmix_threads());

    // A non-blocking call needs someone to read its reply and run its callback.
    let (tx, rx) = mpsc::channel();
    pmix.fence_nb(&[], &[], move |r| {
        let _ = tx.send(r);
    })
    .unwrap();
    rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(
        pmix_threads(),
        ["pmix-client-rea", "pmix-progress"],
        "the reader and the progress thread"
    );
    // A blocking call now waits for the reader thread.
    pmix.fence(&[], &[]).unwrap();
    pmix.finalize().unwrap();
    assert!(pmix_threads().is_empty(), "{:?}", pmix_threads());
    server.shutdown().unwrap();
}
