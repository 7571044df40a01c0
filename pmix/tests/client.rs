//! The client role against our own server, in one process: instances initialised with
//! `Connect::To` the environment `Server::client_env` gives each rank. Job
//! information, put / commit / fence / get between ranks, finalize, and a server that
//! goes away (every call then returns `PMIX_ERR_UNREACH`, nobody waits).

mod client_common;

use std::time::Duration;

use pmix::server::NamespaceSpec;
use pmix::wire::{Info, Rank, Scope, Value};
use pmix::{Connect, Error, InitOptions, Pmix, PmixError, Role, Server, ServerConfig, ServerEnv};
use pmix_core::Status;

const N: u32 = 3;

fn server(ns: &str) -> Server {
    let server = Server::start(ServerConfig {
        log: false,
        ..ServerConfig::default()
    })
    .unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node(ns, N, uid, gid))
        .unwrap();
    server
}

fn env_of(server: &Server, ns: &str, rank: u32) -> ServerEnv {
    client_common::env_of(server, ns, rank, &[])
}

fn client(server: &Server, ns: &str, rank: u32) -> Pmix {
    client_common::client(env_of(server, ns, rank))
}

#[test]
fn a_connected_client_takes_its_identity_and_job_information_from_the_server() {
    let s = server("client.info");
    let p = client(&s, "client.info", 2);
    assert_eq!(p.proc_id().nspace, "client.info");
    assert_eq!(p.proc_id().rank, 2);
    let c = p.client().expect("connected");
    let job = |key| c.get("client.info", Rank::WILDCARD.0, key, &[]).unwrap();
    assert_eq!(job("pmix.job.size"), Value::Uint32(N));
    assert_eq!(job("pmix.local.size"), Value::Uint32(N));
    assert_eq!(job("pmix.lpeers"), Value::string("0,1,2"));
    assert_eq!(
        c.get("client.info", 1, "pmix.lrank", &[]).unwrap(),
        Value::Uint16(1)
    );
    let e = c
        .get("client.info", Rank::WILDCARD.0, "pmix.no.such.key", &[])
        .unwrap_err();
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
    p.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn ranks_exchange_committed_values_through_a_fence_and_gets() {
    let ns = "client.modex";
    let s = server(ns);
    let ranks: Vec<Pmix> = (0..N).map(|r| client(&s, ns, r)).collect();
    let threads: Vec<_> = ranks
        .iter()
        .cloned()
        .map(|p| {
            std::thread::spawn(move || {
                let c = p.client().unwrap();
                let me = p.proc_id().rank;
                c.put(Scope::LOCAL, "k.local", Value::Uint32(100 + me))
                    .unwrap();
                c.put(Scope::REMOTE, "k.remote", Value::Uint32(200 + me))
                    .unwrap();
                c.put(Scope::GLOBAL, "k.global", Value::string(format!("g{me}")))
                    .unwrap();
                c.commit().unwrap();
                c.fence(&[], &[Info::new("pmix.collect", true)]).unwrap();
                for r in 0..N {
                    assert_eq!(
                        c.get(ns, r, "k.local", &[]).unwrap(),
                        Value::Uint32(100 + r)
                    );
                    assert_eq!(
                        c.get(ns, r, "k.global", &[]).unwrap(),
                        Value::string(format!("g{r}"))
                    );
                    let remote = c.get(ns, r, "k.remote", &[]);
                    if r == me {
                        assert_eq!(remote.unwrap(), Value::Uint32(200 + r));
                    } else {
                        // A REMOTE value is not for peers on the same node.
                        assert_eq!(remote.unwrap_err().status(), Status::ERR_NOT_FOUND);
                    }
                }
                c.fence(&[], &[]).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for p in ranks {
        p.finalize().unwrap();
    }
    s.shutdown().unwrap();
}

#[test]
fn a_client_whose_server_goes_away_gets_unreach_and_never_waits() {
    let ns = "client.lost";
    let s = server(ns);
    let p = client(&s, ns, 0);
    let waiter = {
        let p = p.clone();
        // Rank 0 fences alone among 3: it waits until the server goes.
        std::thread::spawn(move || p.client().unwrap().fence(&[], &[]))
    };
    std::thread::sleep(Duration::from_millis(200));
    s.shutdown().unwrap();
    let r = waiter.join().unwrap();
    assert!(matches!(r, Err(Error::Unreach(_))), "{r:?}");
    let c = p.client().unwrap();
    assert!(matches!(c.commit(), Err(Error::Unreach(_))));
    assert!(matches!(c.get(ns, 1, "k", &[]), Err(Error::Unreach(_))));
    // Finalize still ends the instance.
    p.finalize().unwrap();
}

#[test]
fn a_namespace_the_server_does_not_know_is_refused_with_unreach() {
    let s = server("client.known");
    let env = ServerEnv {
        nspace: "client.unknown".into(),
        ..env_of(&s, "client.known", 0)
    };
    let r = Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::To(env),
            ..InitOptions::default()
        },
    );
    assert_eq!(r.unwrap_err().status(), Status::ERR_UNREACH);
    s.shutdown().unwrap();
}

#[test]
fn a_held_get_nb_calls_back_once_on_the_progress_thread_when_the_peer_commits() {
    let ns = "client.getnb";
    let s = server(ns);
    let (a, b) = (client(&s, ns, 0), client(&s, ns, 1));
    let (tx, rx) = std::sync::mpsc::channel();
    let a2 = a.clone();
    a.get_nb(ns, 1, "late.key", &[], move |r| {
        tx.send((r, a2.on_progress_thread())).unwrap();
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(rx.try_recv().is_err(), "held until rank 1 commits");
    let cb = b.client().unwrap();
    cb.put(Scope::GLOBAL, "late.key", Value::Uint32(7)).unwrap();
    cb.commit().unwrap();
    let (r, on_progress) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(r.unwrap(), Value::Uint32(7));
    assert!(on_progress, "the callback ran on the progress thread");
    assert!(
        rx.recv_timeout(Duration::from_millis(100)).is_err(),
        "exactly once"
    );
    a.finalize().unwrap();
    b.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_pending_fence_nb_calls_back_before_finalize_or_stop_returns() {
    let ns = "client.fencenb";
    let s = server(ns);
    for stop_first in [false, true] {
        let p = client(&s, ns, if stop_first { 1 } else { 0 });
        let (tx, rx) = std::sync::mpsc::channel();
        // A fence among 3 that nobody else joins: pending until the end.
        p.fence_nb(&[], &[], move |r| tx.send(r).unwrap()).unwrap();
        if stop_first {
            p.stop_progress().unwrap();
            let r = rx
                .try_recv()
                .expect("the callback ran before the stop returned");
            assert!(matches!(r, Err(Error::NotAvailable)), "{r:?}");
            // After the stop: NOT_AVAILABLE at once, no callback.
            let r = p.fence_nb(&[], &[], |_| panic!("not accepted: never called"));
            assert!(matches!(r, Err(Error::NotAvailable)));
        }
        p.finalize().ok();
        if !stop_first {
            let r = rx
                .try_recv()
                .expect("the callback ran before finalize returned");
            assert!(matches!(r, Err(Error::Unreach(_))), "{r:?}");
        }
    }
    s.shutdown().unwrap();
}

#[test]
fn get_nb_and_fence_nb_without_a_server_are_refused_and_never_call_back() {
    let p = Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::Never,
            ..InitOptions::default()
        },
    )
    .unwrap();
    let r = p.fence_nb(&[], &[], |_| panic!("never called"));
    assert_eq!(r.unwrap_err().status(), Status::ERR_UNREACH);
    let r = p.get_nb("x", 0, "k", &[], |_| panic!("never called"));
    assert_eq!(r.unwrap_err().status(), Status::ERR_UNREACH);
    p.finalize().unwrap();
}

#[test]
fn an_event_notified_by_one_rank_runs_the_others_handlers_on_their_progress_threads() {
    use pmix::events::{EventAction, EventHandler};
    use std::sync::mpsc;
    let ns = "client.events";
    let s = server(ns);
    let (a, b) = (client(&s, ns, 0), client(&s, ns, 1));
    let (tx, rx) = mpsc::channel();
    let b2 = b.clone();
    let handler: EventHandler = std::sync::Arc::new(move |_, ev| {
        tx.send((ev.status, ev.source.rank.0, b2.on_progress_thread()))
            .unwrap();
        EventAction::Complete
    });
    let id = b.register_event_handler(&[-3001], &[], handler).unwrap();
    assert!(id > 0);
    let (done_tx, done_rx) = mpsc::channel();
    a.notify_event(-3001, None, pmix::wire::DataRange(2), &[], move |r| {
        done_tx.send(r).unwrap()
    })
    .unwrap();
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    let (status, source, on_progress) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!((status, source, on_progress), (-3001, 0, true));
    // Deregistered: a second event reaches nobody here.
    b.deregister_event_handler(id).unwrap();
    assert_eq!(
        b.deregister_event_handler(id).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    a.notify_event(-3001, None, pmix::wire::DataRange(2), &[], |_| {})
        .unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    a.finalize().unwrap();
    b.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_server_that_goes_away_raises_lost_connection_to_the_handlers() {
    use pmix::events::{EventAction, EventHandler};
    let ns = "client.lostev";
    let s = server(ns);
    let with_handler = |p: &Pmix| {
        let (tx, rx) = std::sync::mpsc::channel();
        let handler: EventHandler = std::sync::Arc::new(move |_, ev| {
            let _ = tx.send(ev.status);
            EventAction::Complete
        });
        p.register_event_handler(&[], &[], handler).unwrap();
        rx
    };
    // Finalizing closes the connection from this side: no event for that.
    let q = client(&s, ns, 1);
    let rx = with_handler(&q);
    q.finalize().unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    let p = client(&s, ns, 0);
    let rx = with_handler(&p);
    s.shutdown().unwrap();
    let got = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(got, Status::ERR_LOST_CONNECTION.0);
    p.finalize().unwrap();
}

#[test]
fn a_leave_drops_the_group_at_once_and_the_others_learn_it_from_group_left() {
    use pmix::events::{EventAction, EventHandler};
    use pmix::wire::{Proc, Value as V};
    let ns = "client.leave";
    let s = server(ns);
    let ranks: Vec<Pmix> = (0..N).map(|r| client(&s, ns, r)).collect();
    let all: Vec<Proc> = (0..N).map(|r| Proc::new(ns, r)).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let handler: EventHandler = std::sync::Arc::new(move |_, ev| {
        let grp = ev
            .info
            .iter()
            .find(|i| i.key == "pmix.grp.id")
            .map(|i| i.value.clone());
        let _ = tx.send((ev.status, grp));
        EventAction::Complete
    });
    ranks[0]
        .register_event_handler(&[Status::GROUP_LEFT.0], &[], handler)
        .unwrap();
    let threads: Vec<_> = ranks
        .iter()
        .cloned()
        .map(|p| {
            let all = all.clone();
            std::thread::spawn(move || {
                let info = [pmix::wire::Info::new("pmix.grp.actxid", true)];
                p.group_construct("gl", &all, &info).unwrap()
            })
        })
        .collect();
    let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(
        outcomes
            .iter()
            .all(|o| o.ctxid.is_some() && o.ctxid == outcomes[0].ctxid)
    );
    assert_eq!(ranks[0].group_members("gl").unwrap().len(), N as usize);

    // From a callback on the progress thread: WOULD_BLOCK, and nothing happens.
    let (cb_tx, cb_rx) = std::sync::mpsc::channel();
    let leaver = ranks[2].clone();
    ranks[2]
        .get_nb(ns, Rank::WILDCARD.0, "pmix.job.size", &[], move |_| {
            let r = leaver.group_leave("gl", &[]);
            cb_tx
                .send((r, leaver.group_members("gl").is_some()))
                .unwrap();
        })
        .unwrap();
    let (r, still) = cb_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(matches!(r, Err(Error::WouldBlock { .. })), "{r:?}");
    assert!(still, "a refused leave changes nothing");
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "no LEFT sent"
    );

    // Bad names are refused before anything is done.
    for bad in ["", &"g".repeat(256)] {
        let e = ranks[2].group_leave(bad, &[]).unwrap_err();
        assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    }
    assert!(ranks[2].group_members("gl").is_some());

    // The real leave: dropped locally at once; the others hear it and update.
    ranks[2].group_leave("gl", &[]).unwrap();
    assert!(ranks[2].group_members("gl").is_none());
    let (status, grp) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!((status, grp), (Status::GROUP_LEFT.0, Some(V::string("gl"))));
    let members = ranks[0].group_members("gl").unwrap();
    assert!(!members.contains(&Proc::new(ns, 2)), "{members:?}");

    // The survivors destruct it alone.
    let t: Vec<_> = ranks[..2]
        .iter()
        .cloned()
        .map(|p| std::thread::spawn(move || p.group_destruct("gl", &[])))
        .collect();
    for h in t {
        h.join().unwrap().unwrap();
    }
    assert!(ranks[0].group_members("gl").is_none());
    for p in ranks {
        p.finalize().unwrap();
    }
    s.shutdown().unwrap();
}

/// A server whose query service reads hwloc XML export `file`, with namespace `ns`
/// (rank 1 registered as bound to `hwloc:0-3`).
fn server_with_topology(ns: &str, file: &str) -> Server {
    let source = format!("xml:{}", pmix_testkit::hwloc_xml(file).display());
    let server = Server::start(ServerConfig {
        log: false,
        service: Some(std::sync::Arc::new(
            pmix::Service::new(source, None).unwrap(),
        )),
        ..ServerConfig::default()
    })
    .unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    let mut spec = NamespaceSpec::single_node(ns, N, uid, gid);
    spec.ranks[1].cpuset = Some("hwloc:0-3".into());
    server.add_namespace(spec).unwrap();
    server
}

/// A client of `server` whose own topology cannot be loaded (so it relays).
fn client_without_topology(server: &Server, ns: &str, rank: u32) -> Pmix {
    Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::To(env_of(server, ns, rank)),
            topology_source: Some("xml:/nonexistent/pmix-rs/topology.xml".into()),
            ..InitOptions::default()
        },
    )
    .unwrap()
}

/// The same topology, answered in this process.
fn local_on(file: &str) -> Pmix {
    Pmix::init(
        Role::Tool,
        InitOptions {
            topology_source: Some(format!("xml:{}", pmix_testkit::hwloc_xml(file).display())),
            connect: Connect::Never,
            ..InitOptions::default()
        },
    )
    .unwrap()
}

type RowTuple = (String, String, u64, u16, u16);

fn rows(d: &pmix::Distances) -> Vec<RowTuple> {
    d.rows()
        .map(|r| {
            let (u, o) = (r.uuid.to_owned(), r.osname.to_owned());
            (u, o, r.kind.0, r.mindist, r.maxdist)
        })
        .collect()
}

const RELAY_XML: &str = "24em64t-2n6c2t-pci.xml";

#[test]
fn a_client_without_a_topology_relays_distances_to_its_server_and_gets_the_local_answer() {
    use pmix::DistanceRequest;
    use pmix_core::{CpuSet, DeviceTypes};
    let ns = "client.relay";
    let s = server_with_topology(ns, RELAY_XML);
    let p = client_without_topology(&s, ns, 0);
    let here = local_on(RELAY_XML);
    assert!(
        p.topology().is_err(),
        "the client has no topology of its own"
    );
    let cpus = CpuSet::parse_list("6-11").unwrap();
    let requests = [
        DistanceRequest {
            cpuset: Some(&cpus),
            ..Default::default()
        },
        DistanceRequest {
            cpuset: Some(&cpus),
            types: Some(DeviceTypes::NETWORK),
            ..Default::default()
        },
        DistanceRequest {
            origin: Some("eth0"),
            ..Default::default()
        },
    ];
    for req in &requests {
        let relayed = p.compute_distances(req).unwrap();
        assert!(relayed.is_relayed() && relayed.topology().is_none());
        let local = here.compute_distances(req).unwrap();
        assert!(!local.is_relayed());
        assert_eq!(rows(&relayed), rows(&local), "{req:?}");
        // The non-blocking form relays on the progress thread and calls back once.
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = p.clone();
        p.compute_distances_nb(
            req,
            Some(Box::new(move |r| {
                tx.send((r, p2.on_progress_thread())).unwrap();
            })),
        )
        .unwrap();
        let (r, on_progress) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(on_progress);
        assert_eq!(rows(&r.unwrap()), rows(&local));
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "once");
    }
    // The server's statuses come back as they are.
    let nothing = DistanceRequest {
        origin: Some("no-such-device"),
        ..Default::default()
    };
    assert_eq!(
        p.compute_distances(&nothing).unwrap_err().status(),
        here.compute_distances(&nothing).unwrap_err().status()
    );
    p.finalize().unwrap();
    here.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_relayed_request_without_a_cpuset_uses_this_process_binding() {
    use pmix::{BindEnvelope, DistanceRequest};
    let ns = "client.relay.own";
    let s = server_with_topology(ns, RELAY_XML);
    let p = client_without_topology(&s, ns, 1);
    let here = local_on(RELAY_XML);
    let mine = here.cpuset(BindEnvelope::Process).unwrap();
    let relayed = p.compute_distances(&DistanceRequest::default()).unwrap();
    let local = here
        .compute_distances(&DistanceRequest {
            cpuset: Some(&mine),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(rows(&relayed), rows(&local));
    p.finalize().unwrap();
    here.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_relayed_request_whose_server_goes_away_gets_unreach_and_its_callback_once() {
    use pmix::DistanceRequest;
    use pmix_core::CpuSet;
    let ns = "client.relay.lost";
    let s = server_with_topology(ns, RELAY_XML);
    let p = client_without_topology(&s, ns, 0);
    s.shutdown().unwrap();
    let cpus = CpuSet::parse_list("0").unwrap();
    let req = DistanceRequest {
        cpuset: Some(&cpus),
        ..Default::default()
    };
    // Give the reader thread time to see the socket close.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        p.compute_distances(&req).unwrap_err().status(),
        Status::ERR_UNREACH
    );
    let (tx, rx) = std::sync::mpsc::channel();
    p.compute_distances_nb(&req, Some(Box::new(move |r| tx.send(r).unwrap())))
        .unwrap();
    let r = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(r.unwrap_err().status(), Status::ERR_UNREACH);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "once");
    p.finalize().unwrap();
}

#[test]
fn a_singleton_without_a_topology_is_unreach_not_relayed() {
    use pmix::DistanceRequest;
    let p = Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::Never,
            topology_source: Some("xml:/nonexistent/pmix-rs/topology.xml".into()),
            ..InitOptions::default()
        },
    )
    .unwrap();
    let e = p
        .compute_distances(&DistanceRequest::default())
        .unwrap_err();
    assert_eq!(e.status(), Status::ERR_UNREACH);
    assert!(e.to_string().contains("not connected"), "{e}");
    p.finalize().unwrap();
}

#[test]
fn a_query_is_answered_from_the_job_information_unless_it_asks_for_a_refresh() {
    use pmix::wire::{Query, WStr};
    let ns = "client.query";
    let s = server(ns);
    let p = client(&s, ns, 0);
    let q = |key: &str, refresh: bool| Query {
        keys: vec![WStr::from(key)],
        qualifiers: if refresh {
            vec![Info::new("pmix.qry.rfsh", true)]
        } else {
            Vec::new()
        },
    };
    let size = p.query_info(&[q("pmix.job.size", false)]).unwrap();
    assert_eq!(size, [Info::new("pmix.job.size", Value::Uint32(N))]);
    assert_eq!(p.query_info(&[q("pmix.job.size", true)]).unwrap(), size);
    let names = p.query_info(&[q("pmix.qry.ns", false)]).unwrap();
    assert_eq!(names[0].value.as_str(), Some(ns));
    let unknown = p.query_info(&[q("pmix.no.such.query", false)]).unwrap_err();
    assert_eq!(unknown.status(), Status::ERR_NOT_SUPPORTED);
    assert_eq!(
        p.query_info(&[]).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    assert_eq!(
        p.resolve_peers(None, None).unwrap(),
        (0..N)
            .map(|r| pmix::wire::Proc::new(ns, r))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        p.resolve_peers(Some("no-such-node.invalid"), None)
            .unwrap_err()
            .status(),
        Status::ERR_NOT_FOUND
    );
    // Without the server: what the job information holds is still answered, and a
    // refresh is unreachable.
    s.shutdown().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(p.query_info(&[q("pmix.job.size", false)]).unwrap(), size);
    assert_eq!(
        p.query_info(&[q("pmix.job.size", true)])
            .unwrap_err()
            .status(),
        Status::ERR_UNREACH
    );
    assert!(!p.resolve_nodes(None).unwrap().is_empty());
    p.finalize().unwrap();
}

#[test]
fn a_tool_connects_with_an_identity_the_server_assigns_and_relays_distances() {
    use pmix::DistanceRequest;
    use pmix_core::CpuSet;
    let ns = "client.tool";
    let s = server_with_topology(ns, RELAY_XML);
    let tool = Pmix::init(
        Role::Tool,
        InitOptions {
            // Only the server's address and name count for a tool.
            connect: Connect::To(ServerEnv {
                nspace: String::new(),
                ..env_of(&s, ns, 0)
            }),
            topology_source: Some("xml:/nonexistent/pmix-rs/topology.xml".into()),
            ..InitOptions::default()
        },
    )
    .unwrap();
    assert!(tool.client().is_some(), "connected");
    assert!(
        tool.proc_id().nspace.to_string().contains(".tool."),
        "{:?}",
        tool.proc_id()
    );
    let cpus = CpuSet::parse_list("0-5").unwrap();
    let req = DistanceRequest {
        cpuset: Some(&cpus),
        ..Default::default()
    };
    let here = local_on(RELAY_XML);
    let relayed = tool.compute_distances(&req).unwrap();
    assert!(relayed.is_relayed());
    assert_eq!(rows(&relayed), rows(&here.compute_distances(&req).unwrap()));
    // A second tool gets an identity of its own.
    let other = Pmix::init(
        Role::Tool,
        InitOptions {
            connect: Connect::To(env_of(&s, ns, 1)),
            ..InitOptions::default()
        },
    )
    .unwrap();
    assert_ne!(other.proc_id(), tool.proc_id());
    other.finalize().unwrap();
    tool.finalize().unwrap();
    here.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_tool_pointed_at_no_server_is_unreach() {
    let env = ServerEnv::from_uri("nobody.0;tcp4://127.0.0.1:1", "PMIX_SERVER_URI").unwrap();
    let r = Pmix::init(
        Role::Tool,
        InitOptions {
            connect: Connect::To(env),
            ..InitOptions::default()
        },
    );
    assert_eq!(r.unwrap_err().status(), Status::ERR_UNREACH);
}

#[test]
fn log_and_job_control_are_served_spawn_is_not_and_connect_is_a_collective() {
    use pmix::wire::{App, Proc, WStr};
    let ns = "client.control";
    let s = server(ns);
    let p = client(&s, ns, 0);
    let not_supported =
        |r: Result<(), Error>| assert_eq!(r.unwrap_err().status(), Status::ERR_NOT_SUPPORTED);
    p.log(&[Info::new("pmix.log.stderr", "line\n")], &[])
        .unwrap();
    // Only channels the server does not have: NOT_SUPPORTED.
    not_supported(p.log(&[Info::new("pmix.log.syslog", "line")], &[]));
    let app = App {
        cmd: Some(WStr::from("/bin/true")),
        argv: vec![WStr::from("/bin/true")],
        maxprocs: 1,
        ..App::default()
    };
    not_supported(p.spawn(&[], &[app]).map(|_| ()));
    assert_eq!(
        p.spawn(&[], &[]).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    // Connect and disconnect are collectives of the listed processes: alone, at
    // once; over the whole job, they wait for the others (here, until pmix.timeout).
    let me = [Proc::new(ns, 0)];
    p.connect(true, &me, &[]).unwrap();
    p.connect(false, &me, &[]).unwrap();
    let all = [Proc::new(ns, pmix::wire::Rank::WILDCARD.0)];
    assert_eq!(
        p.connect(true, &all, &[Info::new("pmix.timeout", 1i32)])
            .unwrap_err()
            .status(),
        Status::ERR_TIMEOUT
    );
    assert_eq!(
        p.job_control(&me, &[Info::new("pmix.reg.cleanup", "/tmp/none")])
            .unwrap(),
        Vec::<Info>::new()
    );
    p.job_control(&me, &[Info::new("pmix.jctrl.preempt", true)])
        .unwrap();
    not_supported(
        p.job_control(&me, &[Info::new("pmix.jctrl.kill", true)])
            .map(|_| ()),
    );
    // The non-blocking forms call back once, on the progress thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let p2 = p.clone();
    p.log_nb(&[Info::new("pmix.log.stderr", "line\n")], &[], move |r| {
        tx.send((r, p2.on_progress_thread())).unwrap();
    })
    .unwrap();
    let (r, on_progress) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    r.unwrap();
    assert!(on_progress);
    p.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_get_without_key_outside_a_client_returns_everything_stored_for_the_process() {
    // What Open MPI's mpirun asks its server library before it launches on an orted:
    // PMIx_Get(orted, NULL key) of all it stored with PMIx_Store_internal.
    let p = Pmix::init(
        Role::Server,
        InitOptions {
            connect: Connect::Never,
            ..InitOptions::default()
        },
    )
    .unwrap();
    p.store_internal("hnp", 1, "pmix.puri", Value::string("tcp://127.0.0.1:1"))
        .unwrap();
    p.store_internal("hnp", 1, "opal.a", Value::Uint32(7))
        .unwrap();
    p.store_internal("hnp", 2, "pmix.puri", Value::string("other"))
        .unwrap();
    let Value::DataArray(all) = p.get_all_stored("hnp", 1).unwrap() else {
        panic!("not a data array");
    };
    assert_eq!(
        all.items,
        vec![
            Value::from(Info::new("opal.a", Value::Uint32(7))),
            Value::from(Info::new("pmix.puri", Value::string("tcp://127.0.0.1:1"))),
        ]
    );
    let e = p.get_all_stored("hnp", 3).unwrap_err();
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
}

#[test]
fn a_failure_notified_by_a_client_or_a_tool_reaches_the_handlers_but_no_tracker_believes_it() {
    use pmix::events::{EventAction, EventHandler};
    use pmix::wire::{DataRange, Info, Proc};
    use std::sync::mpsc;
    let ns = "client.spoof";
    let s = server(ns);
    let (a, b) = (client(&s, ns, 0), client(&s, ns, 1));
    let tool = Pmix::init(
        Role::Tool,
        InitOptions {
            connect: Connect::To(ServerEnv {
                nspace: String::new(),
                ..env_of(&s, ns, 0)
            }),
            ..InitOptions::default()
        },
    )
    .unwrap();
    // b keeps the namespace's rank states.
    assert_eq!(b.ft_get_failed(ns).unwrap(), Vec::<u32>::new());
    let (tx, rx) = mpsc::channel();
    let handler: EventHandler = std::sync::Arc::new(move |_, ev| {
        tx.send((ev.status, ev.source.clone())).unwrap();
        EventAction::Complete
    });
    let aborted = Status::ERR_PROC_ABORTED.0;
    let revoked = Status::FT_EVENT_REVOKED.0;
    b.register_event_handler(&[aborted, revoked], &[], handler)
        .unwrap();
    let about_2 = [Info::new("pmix.evproc", Proc::new(ns, 2))];
    let revoke = [Info::new("pmix.grp.id", ns)];
    let notify = |notifier: &Pmix, code: i32, info: &[Info]| {
        let (done_tx, done_rx) = mpsc::channel();
        notifier
            .notify_event(code, None, DataRange::GLOBAL, info, move |r| {
                done_tx.send(r).unwrap()
            })
            .unwrap();
        done_rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap()
            .unwrap();
        // Delivered, with its real source.
        let (status, source) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(status, code);
        assert_eq!(
            source.nspace.as_str().map(str::to_owned),
            Some(notifier.proc_id().nspace.to_string())
        );
    };
    for (who, notifier) in [("rank 0", &a), ("a tool", &tool)] {
        notify(notifier, aborted, &about_2);
        assert_eq!(
            b.ft_get_failed(ns).unwrap(),
            Vec::<u32>::new(),
            "{who}: rank 2 lives"
        );
    }
    // A revocation: not from a tool; from a member, as ULFM has it.
    notify(&tool, revoked, &revoke);
    assert!(!b.ft_is_revoked(ns).unwrap(), "a tool revoked");
    notify(&a, revoked, &revoke);
    assert!(b.ft_is_revoked(ns).unwrap(), "rank 0 revoked");
    tool.finalize().unwrap();
    a.finalize().unwrap();
    b.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_server_instance_raises_its_hosts_notifications_among_the_clients_of_its_server() {
    // PMIx_server_init's instance: the host's PMIx_Notify_event beyond its own process
    // goes to the clients of the server it embeds (Pmix::attach_server).
    use pmix::events::{EventAction, EventHandler};
    use std::sync::{Arc, mpsc};
    let ns = "client.hostnotify";
    let s = Arc::new(server(ns));
    let never = || InitOptions {
        connect: Connect::Never,
        ..InitOptions::default()
    };
    let host = Pmix::init(Role::Server, never()).unwrap();
    assert!(host.server().is_none());
    let tool = Pmix::init(Role::Tool, never()).unwrap();
    let e = tool.attach_server(Arc::clone(&s)).unwrap_err();
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    host.attach_server(Arc::clone(&s)).unwrap();
    let e = host.attach_server(Arc::clone(&s)).unwrap_err();
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    assert!(Arc::ptr_eq(host.server().unwrap(), &s));

    let b = client(&s, ns, 1);
    let (tx, rx) = mpsc::channel();
    let handler: EventHandler = Arc::new(move |_, ev| {
        tx.send(ev.status).unwrap();
        EventAction::Complete
    });
    b.register_event_handler(&[-3002], &[], handler).unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let done = move |r| done_tx.send(r).unwrap();
    host.notify_event(-3002, None, pmix::wire::DataRange::LOCAL, &[], done.clone())
        .unwrap();
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(30)).unwrap(), -3002);

    // Once the server has stopped, the notification's callback says so.
    b.finalize().unwrap();
    s.shutdown().unwrap();
    host.notify_event(-3002, None, pmix::wire::DataRange::LOCAL, &[], done)
        .unwrap();
    let e = done_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(e.unwrap_err().status(), Status::ERR_UNREACH);
    host.finalize().unwrap();
    tool.finalize().unwrap();
}
