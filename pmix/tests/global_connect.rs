//! The process-wide init does not hold the process-wide lock while it connects: a
//! server that never answers the handshake delays that init, not every other call.
//! One test, so nothing else in this process touches the global instance.

use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use pmix::wire::BufferType;
use pmix::{Connect, Error, InitOptions, Role, ServerEnv, global};

/// Runs `f` on a thread and waits at most `secs` for its answer.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs)).ok()
}

#[test]
fn calls_go_on_while_an_init_waits_for_a_silent_server() {
    // A "server" that accepts and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let env = ServerEnv {
        nspace: "silent.job".into(),
        rank: 0,
        addr: listener.local_addr().unwrap(),
        server: "silent.0".into(),
        uri_var: "PMIX_SERVER_URI42",
        buffer_type: BufferType::NonDescribed,
        hostname: Some("node0".into()),
        channel: None,
        node_store: false,
    };
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let options = InitOptions {
            connect: Connect::To(env),
            ..InitOptions::default()
        };
        let _ = done_tx.send(global::init(Role::Client, options, "PMIx_Init").map(|_| ()));
    });
    let (accepted, _) = listener.accept().unwrap();
    // The init is now in its handshake; other calls answer at once.
    assert_eq!(within(5, global::is_initialized), Some(false));
    assert!(matches!(within(5, global::get), Some(Err(Error::Init))));
    assert!(matches!(
        within(5, || global::finalize("PMIx_Finalize")),
        Some(Err(Error::Init))
    ));
    // The server goes away: the waiting init fails, and nothing is left initialised.
    drop(accepted);
    drop(listener);
    let r = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("init did not return after the server went away");
    assert!(matches!(r, Err(Error::Unreach(_))), "{r:?}");
    assert!(!global::is_initialized());
}
