//! The server core's handshake, REQ, FINALIZE, ABORT and dispatch, driven by a
//! fake client that speaks pmix-wire (no sockets).

mod server_core_common;

use std::time::Instant;

use pmix::server::core::{
    Core, CoreConfig, DIST_ORIGIN_KEY, NamespaceSpec, Output, Refused, Upcall,
};
use pmix_wire::frame::Decoded;
use pmix_wire::handshake::ToolReply;
use pmix_wire::msg::{Abort, JobItem, Log};
use pmix_wire::{
    Command, ConnectMsg, Frame, Identity, PeerKind, Rank, Reply, Request, Status, Value, Version,
};
use server_core_common::*;

#[test]
fn a_registered_client_gets_status_0_and_its_peer_index_in_connection_order() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let a = connect(&mut core, 10, "job", 1, now);
    let b = connect(&mut core, 11, "job", 0, now);
    assert_eq!((a.index, b.index), (0, 1));
    let outs = drain(&mut core);
    assert_eq!(
        outs,
        vec![
            Output::Host(Upcall::Connected {
                conn: 10,
                nspace: "job".into(),
                rank: 1
            }),
            Output::Host(Upcall::Connected {
                conn: 11,
                nspace: "job".into(),
                rank: 0
            }),
        ]
    );
}

fn refused(core: &mut Core, msg: &ConnectMsg, peer_uid: u32) -> Refused {
    core.connect(99, msg, peer_uid, Instant::now())
        .expect_err("connect should be refused")
}

#[test]
fn unknown_processes_bad_credentials_and_foreign_sockets_are_refused() {
    let mut core = core_with("job", 2);
    assert!(matches!(
        refused(&mut core, &client_msg("other", 0, UID, GID), UID),
        Refused::UnknownProc { .. }
    ));
    assert!(matches!(
        refused(&mut core, &client_msg("job", 2, UID, GID), UID),
        Refused::UnknownProc { .. }
    ));
    assert!(matches!(
        refused(&mut core, &client_msg("job", 0, UID + 1, GID), UID),
        Refused::Credential(_)
    ));
    assert!(matches!(
        refused(&mut core, &client_msg("job", 0, UID, GID + 1), UID),
        Refused::Credential(_)
    ));
    // Another user forging the server's uid in the credential (docs/design.md §8).
    assert!(matches!(
        refused(&mut core, &client_msg("job", 0, UID, GID), UID + 7),
        Refused::PeerUid { .. }
    ));
    // A namespace registered for another uid: the server's user claiming that uid
    // is refused too (the claim must be the socket's real owner).
    core.add_namespace(NamespaceSpec::single_node("theirs", 1, UID + 3, GID))
        .unwrap();
    assert!(matches!(
        refused(&mut core, &client_msg("theirs", 0, UID + 3, GID), UID),
        Refused::Credential(_)
    ));
    let mut m = client_msg("job", 0, UID, GID);
    m.bfrops = "v4".into();
    assert!(matches!(
        refused(&mut core, &m, UID),
        Refused::Unsupported(_)
    ));
    let mut m = client_msg("job", 0, UID, GID);
    m.psec = "none".into();
    m.credential.clear();
    assert!(matches!(
        refused(&mut core, &m, UID),
        Refused::Unsupported(_)
    ));
    let mut m = client_msg("job", 0, UID, GID);
    m.credential.truncate(4);
    assert!(matches!(
        refused(&mut core, &m, UID),
        Refused::Credential(_)
    ));
    assert!(drain(&mut core).is_empty(), "a refusal has no other effect");
    // The refused attempts left rank 0 free to connect.
    connect(&mut core, 1, "job", 0, Instant::now());
}

#[test]
fn a_rank_that_is_connected_already_is_refused_and_so_is_a_conn_id_in_use() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    connect(&mut core, 1, "job", 0, now);
    assert!(matches!(
        core.connect(2, &client_msg("job", 0, UID, GID), UID, now),
        Err(Refused::AlreadyConnected { .. })
    ));
    assert!(matches!(
        core.connect(1, &client_msg("job", 1, UID, GID), UID, now),
        Err(Refused::DuplicateConn(1))
    ));
}

fn tool_msg(kind: PeerKind, uid: u32) -> ConnectMsg {
    let mut m = client_msg("x", 0, uid, GID);
    m.identity = if kind.ids_only() {
        Identity::Ids {
            kind,
            uid,
            gid: GID,
        }
    } else {
        Identity::Named {
            kind,
            uid,
            gid: GID,
            nspace: "mytool".into(),
            rank: 3,
        }
    };
    m
}

#[test]
fn a_tool_gets_the_long_reply_with_an_identifier_when_it_needs_one() {
    let now = Instant::now();
    let mut core = core_with("job", 1);
    let r = core
        .connect(5, &tool_msg(PeerKind::ToolNeedsId, UID), UID, now)
        .unwrap();
    let Ok(Decoded::Item { item, used }) = ToolReply::decode(&r, true) else {
        panic!("bad tool reply")
    };
    assert_eq!(used, r.len());
    let acc = item.accept.unwrap();
    assert_eq!(acc.assigned, Some(("srv.tool.0".into(), 0)));
    assert_eq!((acc.server_nspace.as_str(), acc.server_rank), ("srv", 0));
    assert_eq!(acc.cred_status, 0);

    let r = core
        .connect(6, &tool_msg(PeerKind::ToolGivenId, UID), UID, now)
        .unwrap();
    let Ok(Decoded::Item { item, .. }) = ToolReply::decode(&r, false) else {
        panic!("bad tool reply")
    };
    assert_eq!(item.accept.unwrap().assigned, None);
    // A tool claiming another uid, or whose socket is another user's.
    assert!(
        core.connect(7, &tool_msg(PeerKind::ToolGivenId, UID + 1), UID, now)
            .is_err()
    );
    assert!(
        core.connect(8, &tool_msg(PeerKind::ToolNeedsId, UID), 0, now)
            .is_err()
    );
    // A tool's REQ gets its own job: its namespace and what the server is
    // (libpmix2's PMIx_tool_init files it).
    let mut t = Fake {
        conn: 5,
        codec: pmix_wire::Codec::v422(),
        index: 0,
        tag: 100,
        nspace: "srv.tool.0".into(),
        rank: 0,
    };
    let tag = t.send(&mut core, &Request::Req, now);
    let outs = drain(&mut core);
    let Reply::Req(ji) = reply(&outs, &t, tag, Command::Req) else {
        panic!("not a job-info reply")
    };
    assert_eq!(ji.nspace.as_str(), Some("srv.tool.0"));
    assert_eq!(
        ji.value("pmix.srv.nspace").and_then(|v| v.as_str()),
        Some("srv")
    );
    assert_eq!(ji.value("pmix.job.size").and_then(|v| v.as_u64()), Some(1));
}

#[test]
fn a_tool_started_as_a_rank_of_our_job_is_that_rank() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let mut m = client_msg("job", 1, UID, GID);
    m.identity = Identity::Named {
        kind: PeerKind::ToolClient,
        uid: UID,
        gid: GID,
        nspace: "job".into(),
        rank: 1,
    };
    let r = core.connect(4, &m, UID, now).unwrap();
    let Ok(Decoded::Item { item, .. }) = ToolReply::decode(&r, false) else {
        panic!("bad tool reply")
    };
    assert_eq!(item.status, 0);
    let outs = drain(&mut core);
    assert!(matches!(
        &outs[..],
        [Output::Host(Upcall::Connected { rank: 1, .. })]
    ));
    // It is served as rank 1 (REQ answered with the blob), and the rank is taken.
    let mut t = Fake {
        conn: 4,
        codec: pmix_wire::Codec::v422(),
        index: 0,
        tag: 100,
        nspace: "job".into(),
        rank: 1,
    };
    let tag = t.send(&mut core, &Request::Req, now);
    let outs = drain(&mut core);
    assert!(matches!(reply(&outs, &t, tag, Command::Req), Reply::Req(_)));
    assert!(
        core.connect(5, &client_msg("job", 1, UID, GID), UID, now)
            .is_err()
    );
}

fn blob(core: &mut Core, f: &mut Fake) -> (Vec<u8>, pmix_wire::msg::JobInfo) {
    let tag = f.send(core, &Request::Req, Instant::now());
    let outs = drain(core);
    let fr = frames_to(&outs, f.conn);
    assert_eq!(fr.len(), 1);
    assert_eq!(fr[0].header.tag, tag);
    let Reply::Req(ji) = pmix_wire::decode_reply(Command::Req, &fr[0].payload, &f.codec).unwrap()
    else {
        panic!("REQ answered with something else")
    };
    (fr[0].payload.clone(), ji)
}

fn find<'a>(kv: &'a [pmix_wire::Kval], key: &str) -> &'a Value {
    &kv.iter()
        .find(|k| k.key == key)
        .unwrap_or_else(|| panic!("{key} missing"))
        .value
}

fn find_info<'a>(kv: &'a [pmix_wire::Info], key: &str) -> &'a Value {
    &kv.iter()
        .find(|k| k.key == key)
        .unwrap_or_else(|| panic!("{key} missing"))
        .value
}

#[test]
fn the_job_blob_carries_what_open_mpi_needs_and_is_reused() {
    let now = Instant::now();
    let mut core = Core::new(CoreConfig::new("srv", 0, "node0", UID, GID));
    let mut spec = NamespaceSpec::single_node("job", 3, UID, GID);
    spec.ranks[1].cpuset = Some("hwloc:1".into());
    spec.ranks[1].locstr = Some("SK0:L30:L20:L11:CR1:HT1".into());
    spec.job_info.push(pmix_wire::Kval::new("my.key", 7u32));
    core.add_namespace(spec).unwrap();
    let mut a = connect(&mut core, 1, "job", 0, now);
    let mut b = connect(&mut core, 2, "job", 1, now);
    drain(&mut core);
    let (bytes_a, ji) = blob(&mut core, &mut a);
    let (bytes_b, _) = blob(&mut core, &mut b);
    assert_eq!(bytes_a, bytes_b, "one blob per namespace");
    assert_eq!(ji.nspace, "job");
    let mut values = Vec::new();
    let (mut session, mut nodes, mut procs) = (None, Vec::new(), Vec::new());
    for it in &ji.items {
        match it {
            JobItem::Value(kv) => values.push(kv.clone()),
            JobItem::Session(s) => session = Some(s.clone()),
            JobItem::Node(n) => nodes.push(n.clone()),
            JobItem::Proc(p) => procs.push(p.clone()),
            JobItem::App(_) => panic!("no app array expected"),
        }
    }
    assert_eq!(find(&values, "pmix.job.size"), &Value::Uint32(3));
    assert_eq!(find(&values, "pmix.max.size"), &Value::Uint32(3));
    assert_eq!(find(&values, "pmix.bfrops.mod"), &Value::from("4.2.2rc2"));
    // Not top level: libpmix2 4.2.2 drops the rest of the blob after an unknown
    // top-level pmix.* key.
    assert!(values.iter().all(|k| k.key != DIST_ORIGIN_KEY));
    assert!(values.iter().all(|k| k.key != "pmix.rs.dist.origin"));
    assert_eq!(find(&values, "my.key"), &Value::Uint32(7));
    assert_eq!(
        find_info(&session.unwrap(), "pmix.univ.size"),
        &Value::Uint32(3)
    );
    assert_eq!(nodes.len(), 1);
    let node = &nodes[0];
    assert_eq!(node[0].key, "pmix.hname");
    assert_eq!(node[0].value, Value::from("node0"));
    assert_eq!(find_info(node, "pmix.nodeid"), &Value::Uint32(0));
    assert_eq!(find_info(node, "pmix.lpeers"), &Value::from("0,1,2"));
    assert_eq!(find_info(node, "pmix.local.size"), &Value::Uint32(3));
    assert_eq!(find_info(node, "pmix.node.size"), &Value::Uint32(3));
    assert_eq!(find_info(node, "pmix.lldr"), &Value::ProcRank(0));
    assert_eq!(procs.len(), 3);
    let p1 = &procs[1];
    assert_eq!(p1.rank, Rank(1));
    let p1_kvals = p1.kvals().unwrap();
    assert_eq!(find(&p1_kvals, "pmix.lrank"), &Value::Uint16(1));
    assert_eq!(find(&p1_kvals, "pmix.nrank"), &Value::Uint16(1));
    assert_eq!(find(&p1_kvals, "pmix.hname"), &Value::from("node0"));
    assert_eq!(find(&p1_kvals, "pmix.appnum"), &Value::Uint32(0));
    assert_eq!(find(&p1_kvals, "pmix.grank"), &Value::ProcRank(1));
    assert_eq!(find(&p1_kvals, "pmix.nodeid"), &Value::Uint32(0));
    assert_eq!(find(&p1_kvals, "pmix.cpuset"), &Value::from("hwloc:1"));
    assert_eq!(
        find(&p1_kvals, "pmix.locstr"),
        &Value::from("SK0:L30:L20:L11:CR1:HT1")
    );
    assert!(
        procs[0]
            .kvals()
            .unwrap()
            .iter()
            .all(|k| k.key != "pmix.cpuset")
    );
}

#[test]
fn a_bad_namespace_spec_is_refused() {
    let mut core = core_with("job", 1);
    assert!(
        core.add_namespace(NamespaceSpec::single_node("job", 1, UID, GID))
            .is_err()
    );
    let mut spec = NamespaceSpec::single_node("j2", 2, UID, GID);
    spec.ranks[1].rank = 5;
    assert!(core.add_namespace(spec).is_err());
    assert!(
        core.add_namespace(NamespaceSpec::single_node("", 1, UID, GID))
            .is_err()
    );
}

#[test]
fn finalize_is_answered_and_reported_and_a_close_after_it_is_no_loss() {
    let now = Instant::now();
    let mut core = core_with("job", 1);
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    let tag = a.send(&mut core, &Request::Finalize, now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &a, tag, Command::Finalize), 0);
    assert_eq!(
        outs.last(),
        Some(&Output::Host(Upcall::Finalized {
            id: None,
            nspace: "job".into(),
            rank: 0
        }))
    );
    core.closed(1, now);
    core.proc_exited("job", 0, 0, now);
    assert!(drain(&mut core).is_empty());
}

#[test]
fn abort_is_answered_then_reported_to_the_launcher() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let mut a = connect(&mut core, 1, "job", 1, now);
    drain(&mut core);
    let req = Request::Abort(Abort {
        status: Status(42),
        message: Some("bye".into()),
        procs: vec![],
    });
    let tag = a.send(&mut core, &req, now);
    let outs = drain(&mut core);
    assert_eq!(outs.len(), 2);
    assert_eq!(status(&outs[..1], &a, tag, Command::Abort), 0);
    assert_eq!(
        outs[1],
        Output::Host(Upcall::Aborted {
            nspace: "job".into(),
            rank: 1,
            status: 42,
            message: Some("bye".into())
        })
    );
}

#[test]
fn unsupported_commands_get_a_lone_not_supported_and_deregevents_gets_nothing() {
    let now = Instant::now();
    let mut core = core_with("job", 1);
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    let log = Request::Log(Log {
        timestamp: pmix_wire::Time(0),
        data: vec![],
        directives: vec![],
    });
    let tag = a.send(&mut core, &log, now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &a, tag, Command::Log),
        Status::ERR_NOT_SUPPORTED.0
    );
    let raw = Request::Raw {
        command: Command::FabricRegister,
        bytes: vec![],
    };
    let tag = a.send(&mut core, &raw, now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &a, tag, Command::FabricRegister),
        Status::ERR_NOT_SUPPORTED.0
    );
    let dereg = Request::DeregEvents(pmix_wire::msg::DeregEvents {
        codes: vec![Status(-1)],
    });
    a.send(&mut core, &dereg, now);
    assert!(drain(&mut core).is_empty());
}

#[test]
fn malformed_bytes_close_that_connection_only() {
    let now = Instant::now();
    for payload in [vec![], vec![0xff; 40], vec![2, 2, 9, 9, 9], vec![2, 0, 0]] {
        let mut core = core_with("job", 2);
        let mut a = connect(&mut core, 1, "job", 0, now);
        connect(&mut core, 2, "job", 1, now);
        drain(&mut core);
        core.frame(2, &Frame::new(0, 101, payload).unwrap(), now);
        let outs = drain(&mut core);
        assert_eq!(outs.first(), Some(&Output::Close { conn: 2 }), "{outs:?}");
        assert!(outs.iter().all(|o| !matches!(o, Output::Send { .. })));
        let tag = a.send(&mut core, &Request::Req, now);
        let outs = drain(&mut core);
        assert!(
            !no_reply(&outs, &a, tag),
            "the other client is still served"
        );
    }
}

#[test]
fn the_handshake_refuses_what_the_codec_refuses_before_the_core_sees_it() {
    // An unsupported version never decodes (the I/O layer closes): pin that the
    // core is not the only guard.
    let mut m = client_msg("job", 0, UID, GID);
    m.version = Version::parse("3.1.5", 0).unwrap();
    m.trailer.stray_byte = false;
    let bytes = m.encode().unwrap();
    assert!(ConnectMsg::decode(&bytes, &Default::default()).is_err());
    let _ = Decoded::<()>::NeedMore(0);
}
