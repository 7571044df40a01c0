//! The embeddable server's I/O layer (`pmix::Server`): the listener, the rendezvous
//! variables, the temporary directory, shutdown, the launcher's calls.

mod server_io_common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use pmix::Server;
use server_io_common::{Heard, RawClient, quiet, read_to_close, watched};

#[test]
fn a_started_server_listens_on_loopback_and_its_uri_names_it() {
    let server = Server::start(quiet()).unwrap();
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback() && addr.is_ipv4(), "{addr}");
    assert_ne!(addr.port(), 0);
    let uri = server.uri();
    let (id, endpoint) = uri.split_once(';').unwrap();
    assert_eq!(endpoint, format!("tcp4://127.0.0.1:{}", addr.port()));
    let (_, rank) = id.rsplit_once('.').unwrap();
    assert_eq!(rank, "0");
    assert!(server.is_running());
    std::net::TcpStream::connect(addr).unwrap();
}

#[test]
fn client_env_has_every_rendezvous_variable_and_the_stores_it_offers() {
    let server = Server::start(quiet()).unwrap();
    let env = server.client_env("job.1", 3);
    let get = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{k} missing from {env:?}"))
    };
    assert_eq!(get("PMIX_NAMESPACE"), "job.1");
    assert_eq!(get("PMIX_RANK"), "3");
    for v in ["41", "4", "3", "21", "2"] {
        assert_eq!(get(&format!("PMIX_SERVER_URI{v}")), server.uri());
    }
    assert_eq!(get("PMIX_SECURITY_MODE"), "native");
    assert_eq!(get("PMIX_GDS_MODULE"), "pxns,ds21,hash");
    assert_eq!(get("PMIX_BFROP_BUFFER_TYPE"), "PMIX_BFROP_BUFFER_NON_DESC");
    assert!(get("PMIX_VERSION").starts_with("4.2."));
    assert_eq!(get("PMIX_HOSTNAME"), server.hostname());
    assert_eq!(get("PMIX_SERVER_TMPDIR"), server.tmpdir().to_str().unwrap());
    assert!(!get("PMIX_SYSTEM_TMPDIR").is_empty());
    // ds21's directory, not OpenPMIx's other stores'.
    assert_eq!(
        get("PMIX_DSTORE_21_BASE_PATH"),
        pmix::server::ds21_dir(server.tmpdir(), "job.1")
            .to_str()
            .unwrap()
    );
    assert!(
        env.iter()
            .all(|(k, _)| !k.starts_with("PMIX_DSTORE") || k == "PMIX_DSTORE_21_BASE_PATH"),
        "{env:?}"
    );
}

#[test]
fn the_tmpdir_is_private_and_removed_at_shutdown() {
    let server = Server::start(quiet()).unwrap();
    let dir = server.tmpdir().to_path_buf();
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
    server.shutdown().unwrap();
    assert!(!dir.exists(), "{}", dir.display());
    assert!(!server.is_running());
    // Shutting down twice is harmless.
    server.shutdown().unwrap();
}

#[test]
fn after_shutdown_the_port_refuses_connections_and_calls_say_stopped() {
    let server = Server::start(quiet()).unwrap();
    let addr = server.local_addr();
    server.shutdown().unwrap();
    assert!(std::net::TcpStream::connect(addr).is_err());
    assert!(matches!(
        server.proc_exited("x", 0, 0),
        Err(pmix::server::ApiError::Stopped)
    ));
}

#[test]
fn the_server_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Server>();
}

#[test]
fn a_rank_the_launcher_saw_exit_before_finalizing_is_lost_and_its_socket_closed() {
    let (server, heard) = watched(quiet());
    let (uid, gid) = pmix::server::net::effective_ids();
    server
        .add_namespace(pmix::server::NamespaceSpec::single_node(
            "io.exit", 2, uid, gid,
        ))
        .unwrap();
    let mut c = RawClient::connect(server.local_addr(), "io.exit", 0, uid, gid).unwrap();
    assert_eq!(c.req(), "io.exit");
    server.proc_exited("io.exit", 0, 9).unwrap();
    assert_eq!(
        read_to_close(&mut c.stream, "a rank that exited"),
        Vec::<u8>::new()
    );
    // A rank that never connected is lost too.
    server.proc_exited("io.exit", 1, 1).unwrap();
    let mut lost = Vec::new();
    while lost.len() < 2 {
        match heard.recv_timeout(Duration::from_secs(30)) {
            Ok(Heard::Lost((nspace, rank))) => {
                assert_eq!(nspace, "io.exit");
                lost.push(rank);
            }
            Ok(_) => {}
            Err(_) => panic!("lost so far: {lost:?}"),
        }
    }
    assert_eq!(lost, [0, 1]);
    // A second add of the same namespace is refused by the core.
    assert!(matches!(
        server.add_namespace(pmix::server::NamespaceSpec::single_node(
            "io.exit", 2, uid, gid
        )),
        Err(pmix::server::ApiError::Core(_))
    ));
}

#[test]
fn an_event_the_launcher_raises_reaches_a_registered_client() {
    use pmix_wire::msg::RegEvents;
    use pmix_wire::{DataRange, Reply, Request, Status};
    const CODE: i32 = -3000;
    let server = server_io_common::start(quiet(), "io.raise", 1);
    let (uid, gid) = pmix::server::net::effective_ids();
    let mut c = RawClient::connect(server.local_addr(), "io.raise", 0, uid, gid).unwrap();
    assert_eq!(c.req(), "io.raise");
    let reg = Request::RegEvents(RegEvents {
        codes: vec![Status(CODE)],
        info: vec![],
    });
    match c.call(&reg) {
        Reply::Status { status, .. } => assert_eq!(status, Status::SUCCESS),
        other => panic!("REGEVENTS answered {other:?}"),
    }
    server
        .raise_event(CODE, None, vec![], DataRange::GLOBAL)
        .unwrap();
    let f = c.frame();
    assert_eq!(f.header.tag, pmix_wire::frame::TAG_EVENT);
    let ev = pmix_wire::decode_event(&f.payload, &c.codec).unwrap();
    assert_eq!(ev.status, Status(CODE));
    c.finalize();
}

#[test]
fn a_removed_namespace_closes_its_ranks_and_its_name_can_be_registered_again() {
    let server = server_io_common::start(quiet(), "io.remove", 1);
    let (uid, gid) = pmix::server::net::effective_ids();
    let mut c = RawClient::connect(server.local_addr(), "io.remove", 0, uid, gid).unwrap();
    assert_eq!(c.req(), "io.remove");
    server.remove_namespace("io.remove").unwrap();
    assert_eq!(
        read_to_close(&mut c.stream, "a rank of a removed namespace"),
        Vec::<u8>::new()
    );
    assert!(matches!(
        server.remove_namespace("io.remove"),
        Err(pmix::server::ApiError::Core(_))
    ));
    server
        .add_namespace(pmix::server::NamespaceSpec::single_node(
            "io.remove",
            1,
            uid,
            gid,
        ))
        .unwrap();
    let mut c = RawClient::connect(server.local_addr(), "io.remove", 0, uid, gid).unwrap();
    assert_eq!(c.req(), "io.remove");
    c.finalize();
}

#[test]
fn rendezvous_files_name_the_server_replace_a_killed_ones_and_go_at_shutdown() {
    let base = pmix_testkit::TempDir::new("server-rendezvous");
    let host = "rvhost";
    // What a killed server of ours left: its pid is gone (pid_max is below 2^22).
    let stale = base.0.join(format!("pmix.{host}.tool.4999999"));
    std::fs::write(&stale, "x;tcp4://127.0.0.1:1\n4.2.2\n4999999\n0:0\n").unwrap();
    // Another's file (its pid line does not match its name) stays.
    let other = base.0.join(format!("pmix.{host}.tool.4999998"));
    std::fs::write(&other, "y;tcp4://127.0.0.1:1\n4.2.2\n17\n0:0\n").unwrap();
    let mut cfg = quiet();
    cfg.rendezvous = true;
    cfg.hostname = Some(host.into());
    cfg.tmpdir_base = Some(base.0.clone());
    let server = Server::start(cfg).unwrap();
    let pid = std::process::id();
    let mine = base.0.join(format!("pmix.{host}.tool.{pid}"));
    let text = std::fs::read_to_string(&mine).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], server.uri());
    assert_eq!(lines[2], pid.to_string());
    let env = pmix::ServerEnv::from_rendezvous(&base.0, host, &pid.to_string()).unwrap();
    assert_eq!(env.addr, server.local_addr());
    assert!(!stale.exists(), "a killed server's file is removed");
    assert!(other.exists(), "a file that is not ours stays");
    server.shutdown().unwrap();
    assert!(!mine.exists(), "removed at shutdown");
    assert!(pmix::ServerEnv::from_rendezvous(&base.0, host, &pid.to_string()).is_err());
}
