//! Two hosted server cores, "nodes" A (ranks 0, 1) and B (ranks 2, 3) of one job,
//! joined by a fake host that does what Slurm's plugin and Open MPI's daemons do:
//! gathers each node's fence blob and hands every node the concatenation (in a
//! different order per node), and carries direct-modex requests to the node that
//! holds the rank and its answer back.

mod server_core_common;

use std::time::{Duration, Instant};

use pmix::server::core::{Core, CoreConfig, HostAnswer, NamespaceSpec, Output, Provides, Upcall};
use pmix_wire::msg::{Commit, CommitBucket, FenceNb, GetNb};
use pmix_wire::{BufferType, Command, Info, Kval, Proc, Rank, Reply, Request, Scope, Status, WStr};
use server_core_common::*;

const NS: &str = "job";

fn node(name: &str, ranks: [u32; 2]) -> Core {
    hosted_node(name, NS, ranks)
}

fn commit_global(key: &str, v: u32) -> Request {
    Request::Commit(Commit {
        buckets: vec![CommitBucket {
            scope: Scope::GLOBAL,
            buffer_type: BufferType::NonDescribed,
            kvals: vec![Kval::new(key, v)],
        }],
    })
}

fn fence(collect: bool) -> Request {
    let info = if collect {
        vec![Info::new("pmix.collect", true)]
    } else {
        Vec::new()
    };
    Request::FenceNb(FenceNb {
        procs: vec![Proc {
            nspace: NS.into(),
            rank: Rank::WILDCARD,
        }],
        info,
    })
}

fn get(rank: u32, key: &str) -> Request {
    Request::GetNb(GetNb {
        nspace: NS.into(),
        rank: Rank(rank),
        info: Vec::new(),
        key: Some(WStr::from(key)),
    })
}

/// The upcalls among `outs` that reach beyond the node (fences, direct modex,
/// events, published data), and the rest (a client's own upcalls among them).
fn split(outs: Vec<Output>) -> (Vec<Upcall>, Vec<Output>) {
    let mut calls = Vec::new();
    let mut rest = Vec::new();
    for o in outs {
        match o {
            Output::Host(
                c @ (Upcall::Fence { .. }
                | Upcall::DirectModex { .. }
                | Upcall::Notify { .. }
                | Upcall::Publish { .. }
                | Upcall::Lookup { .. }
                | Upcall::Unpublish { .. }),
            ) => calls.push(c),
            o => rest.push(o),
        }
    }
    (calls, rest)
}

/// The answers to the host's own requests among `outs`: (id, status, data).
fn dmodex_answers(outs: &[Output]) -> Vec<(u64, Status, Vec<u8>)> {
    outs.iter()
        .filter_map(|o| match o {
            Output::DmodexAnswer { id, status, data } => Some((*id, *status, data.clone())),
            _ => None,
        })
        .collect()
}

/// The host's answer to a fence: `status`, and on success `data`.
fn fence_answer(status: i32, data: &[u8]) -> HostAnswer {
    HostAnswer::Fence(if status == 0 {
        Ok(data.to_vec())
    } else {
        Err(Status(status))
    })
}

/// The id of the upcall saying rank `rank` finalized, among `outs`.
fn finalized_id(outs: &[Output], rank: u32) -> u64 {
    outs.iter()
        .find_map(|o| match o {
            Output::Host(Upcall::Finalized { id, rank: r, .. }) if *r == rank => *id,
            _ => None,
        })
        .expect("a finalize the host answers")
}

/// The value of `key` in a GETNB reply.
fn value_of(outs: &[Output], f: &Fake, tag: u32, key: &str) -> Option<u64> {
    match reply(outs, f, tag, Command::GetNb) {
        Reply::GetNb(r) if r.status == Status::SUCCESS => r.data[0]
            .kvals
            .iter()
            .find(|k| k.key == key)
            .and_then(|k| k.value.as_u64()),
        _ => None,
    }
}

struct Job {
    a: Core,
    b: Core,
    fakes: Vec<Fake>,
    now: Instant,
}

fn job() -> Job {
    let now = Instant::now();
    let mut a = node("nodeA", [0, 1]);
    let mut b = node("nodeB", [2, 3]);
    let mut fakes = Vec::new();
    for r in 0..4u32 {
        let core = if r < 2 { &mut a } else { &mut b };
        fakes.push(connect(core, u64::from(r) + 1, NS, r, now));
    }
    drain(&mut a);
    drain(&mut b);
    Job { a, b, fakes, now }
}

impl Job {
    fn send(&mut self, r: usize, req: &Request) -> u32 {
        let now = self.now;
        let (a, b, fakes) = (&mut self.a, &mut self.b, &mut self.fakes);
        let core = if r < 2 { a } else { b };
        fakes[r].send(core, req, now)
    }
}

/// Every rank puts `k` = 10 × rank globally, then fences; the host's answer, the
/// concatenation in each node's own order, completes the fence everywhere.
fn fence_all(j: &mut Job, collect: bool) -> [u32; 4] {
    for r in 0..4 {
        j.send(r, &commit_global("k", 10 * r as u32));
    }
    drain(&mut j.a);
    drain(&mut j.b);
    let mut tags = [0; 4];
    for (r, t) in tags.iter_mut().enumerate() {
        *t = j.send(r, &fence(collect));
    }
    let (calls_a, rest_a) = split(drain(&mut j.a));
    let (calls_b, rest_b) = split(drain(&mut j.b));
    // Nobody is answered before the host is.
    for (r, &tag) in tags.iter().enumerate() {
        let rest = if r < 2 { &rest_a } else { &rest_b };
        assert!(no_reply(rest, &j.fakes[r], tag), "rank {r} answered early");
    }
    let [
        Upcall::Fence {
            id: ia,
            procs,
            collect: ca,
            data: da,
        },
    ] = &calls_a[..]
    else {
        panic!("node A: {calls_a:?}")
    };
    let [
        Upcall::Fence {
            id: ib,
            collect: cb,
            data: db,
            ..
        },
    ] = &calls_b[..]
    else {
        panic!("node B: {calls_b:?}")
    };
    assert_eq!(procs, &vec![(NS.to_string(), Rank::WILDCARD.0)]);
    assert_eq!((*ca, *cb), (collect, collect));
    assert_eq!(collect, !da.is_empty() && !db.is_empty());
    let ab = [da.clone(), db.clone()].concat();
    let ba = [db.clone(), da.clone()].concat();
    let now = j.now;
    j.a.host_answer(*ia, fence_answer(0, &ab), now);
    j.b.host_answer(*ib, fence_answer(0, &ba), now);
    tags
}

#[test]
fn a_fence_across_nodes_completes_when_the_host_answers_and_shares_the_collected_data() {
    let mut j = job();
    let tags = fence_all(&mut j, true);
    let outs_a = drain(&mut j.a);
    let outs_b = drain(&mut j.b);
    for (r, &tag) in tags.iter().enumerate() {
        let outs = if r < 2 { &outs_a } else { &outs_b };
        assert_eq!(status(outs, &j.fakes[r], tag, Command::FenceNb), 0);
    }
    // Rank 0 reads rank 3's key from node A's store: no host call.
    let t = j.send(0, &get(3, "k"));
    let (calls, outs) = split(drain(&mut j.a));
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(value_of(&outs, &j.fakes[0], t, "k"), Some(30));
    let t = j.send(3, &get(1, "k"));
    let outs = drain(&mut j.b);
    assert_eq!(value_of(&outs, &j.fakes[3], t, "k"), Some(10));
}

#[test]
fn a_get_of_another_nodes_rank_goes_by_direct_modex_without_waiting_for_a_fence() {
    let mut j = job();
    j.send(3, &commit_global("k", 30));
    drain(&mut j.b);
    let t = j.send(0, &get(3, "k"));
    let (calls, outs) = split(drain(&mut j.a));
    assert!(no_reply(&outs, &j.fakes[0], t));
    let [Upcall::DirectModex { id, proc }] = &calls[..] else {
        panic!("{calls:?}")
    };
    assert_eq!(proc, &(NS.to_string(), 3));
    // A second get of the same rank waits on the same request.
    let t2 = j.send(1, &get(3, "k"));
    let (calls2, _) = split(drain(&mut j.a));
    assert!(calls2.is_empty(), "{calls2:?}");
    // The host asks node B, which answers at once (rank 3 committed).
    let now = j.now;
    j.b.dmodex_request(77, NS, 3, now);
    let answer = dmodex_answers(&drain(&mut j.b));
    let [(77, Status::SUCCESS, data)] = &answer[..] else {
        panic!("{answer:?}")
    };
    j.a.host_answer(*id, HostAnswer::DirectModex(Ok(data.clone())), now);
    let outs = drain(&mut j.a);
    assert_eq!(value_of(&outs, &j.fakes[0], t, "k"), Some(30));
    assert_eq!(value_of(&outs, &j.fakes[1], t2, "k"), Some(30));
}

#[test]
fn the_hosts_request_for_a_rank_that_has_not_committed_is_answered_when_it_commits() {
    let mut j = job();
    let now = j.now;
    j.b.dmodex_request(5, NS, 2, now);
    let answer = dmodex_answers(&drain(&mut j.b));
    assert!(answer.is_empty(), "{answer:?}");
    j.send(2, &commit_global("x", 7));
    let answer = dmodex_answers(&drain(&mut j.b));
    let [(5, Status::SUCCESS, data)] = &answer[..] else {
        panic!("{answer:?}")
    };
    let entries = pmix_wire::modex::decode_all(data, Default::default()).unwrap();
    assert_eq!(entries.len(), 1);
    let kv = entries[0].kvals.as_ref().unwrap();
    assert!(kv.iter().any(|k| k.key == "x"), "{kv:?}");
    // Ranks that are not local, and times out.
    j.b.dmodex_request(6, NS, 0, now);
    j.b.dmodex_request(7, NS, 3, now);
    j.b.tick(now + Duration::from_secs(3));
    let answer = dmodex_answers(&drain(&mut j.b));
    let status_of = |id: u64| answer.iter().find(|a| a.0 == id).map(|a| a.1);
    assert_eq!(status_of(6), Some(Status::ERR_NOT_FOUND));
    assert_eq!(status_of(7), Some(Status::ERR_TIMEOUT));
}

#[test]
fn a_failed_host_fence_fails_the_local_contributors_and_a_late_answer_is_ignored() {
    let mut j = job();
    let t0 = j.send(0, &fence(false));
    let t1 = j.send(1, &fence(false));
    let (calls, _) = split(drain(&mut j.a));
    let [Upcall::Fence { id, data, .. }] = &calls[..] else {
        panic!("{calls:?}")
    };
    assert!(data.is_empty(), "no data asked, none sent");
    let now = j.now;
    j.a.host_answer(*id, fence_answer(Status::ERR_TIMEOUT.0, &[]), now);
    let outs = drain(&mut j.a);
    assert_eq!(
        status(&outs, &j.fakes[0], t0, Command::FenceNb),
        Status::ERR_TIMEOUT.0
    );
    assert_eq!(
        status(&outs, &j.fakes[1], t1, Command::FenceNb),
        Status::ERR_TIMEOUT.0
    );
    j.a.host_answer(*id, fence_answer(0, &[]), now);
    assert!(drain(&mut j.a).is_empty());
    // Bytes that are no blob fail the fence, they do not panic.
    let t0 = j.send(0, &fence(true));
    j.send(1, &fence(true));
    let (calls, _) = split(drain(&mut j.a));
    let [Upcall::Fence { id, .. }] = &calls[..] else {
        panic!("{calls:?}")
    };
    j.a.host_answer(*id, fence_answer(0, b"garbage"), now);
    let outs = drain(&mut j.a);
    assert_eq!(
        status(&outs, &j.fakes[0], t0, Command::FenceNb),
        Status::ERROR.0
    );
}

#[test]
fn a_local_participant_finalized_without_joining_still_hands_the_host_this_nodes_part() {
    let mut j = job();
    // Rank 0 is done and finalizes; rank 1 starts one more fence over the job.
    let t = j.send(0, &Request::Finalize);
    let id = finalized_id(&drain(&mut j.a), 0);
    let now = j.now;
    j.a.host_answer(id, HostAnswer::ClientFinalized, now);
    let outs = drain(&mut j.a);
    assert_eq!(status(&outs, &j.fakes[0], t, Command::Finalize), 0);
    let t1 = j.send(1, &fence(false));
    let (calls, outs) = split(drain(&mut j.a));
    // Node B's ranks wait on the host's collective: node A must take part in it.
    let [Upcall::Fence { id, .. }] = &calls[..] else {
        panic!("node A kept its part from the host: {calls:?}")
    };
    assert!(no_reply(&outs, &j.fakes[1], t1), "answered before the host");
    let t2 = j.send(2, &fence(false));
    let t3 = j.send(3, &fence(false));
    let (calls_b, _) = split(drain(&mut j.b));
    let [Upcall::Fence { id: ib, .. }] = &calls_b[..] else {
        panic!("{calls_b:?}")
    };
    j.a.host_answer(*id, fence_answer(0, &[]), now);
    j.b.host_answer(*ib, fence_answer(0, &[]), now);
    let outs = drain(&mut j.a);
    assert_eq!(
        status(&outs, &j.fakes[1], t1, Command::FenceNb),
        pmix::server::core::FENCE_LOST.0,
        "rank 1's fence named a rank that left without joining"
    );
    let outs = drain(&mut j.b);
    assert_eq!(status(&outs, &j.fakes[2], t2, Command::FenceNb), 0);
    assert_eq!(status(&outs, &j.fakes[3], t3, Command::FenceNb), 0);
}

#[test]
fn an_unhosted_core_keeps_other_nodes_ranks_not_found() {
    let now = Instant::now();
    let mut cfg = CoreConfig::new("srv", 0, "n", UID, GID);
    cfg.provides = Provides::NONE;
    let mut core = Core::new(cfg);
    let mut spec = NamespaceSpec::single_node(NS, 4, UID, GID);
    spec.ranks.truncate(2);
    core.add_namespace(spec).unwrap();
    let mut f = connect(&mut core, 1, NS, 0, now);
    drain(&mut core);
    let t = f.send(&mut core, &get(3, "k"), now);
    let (calls, outs) = split(drain(&mut core));
    assert!(calls.is_empty());
    assert_eq!(
        status(&outs, &f, t, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
}

#[test]
fn a_node_whose_participants_all_joined_calls_the_host_once() {
    let mut j = job();
    j.send(0, &fence(false));
    let (calls, _) = split(drain(&mut j.a));
    assert!(calls.is_empty(), "rank 1 has not joined: {calls:?}");
    j.send(1, &fence(false));
    let (calls, _) = split(drain(&mut j.a));
    assert_eq!(calls.len(), 1, "{calls:?}");
    // Node B's ranks joining changes nothing at A.
    j.send(2, &fence(false));
    j.send(3, &fence(false));
    let (calls_b, _) = split(drain(&mut j.b));
    assert_eq!(calls_b.len(), 1);
    let (calls, _) = split(drain(&mut j.a));
    assert!(calls.is_empty());
}

#[test]
fn a_hosted_finalize_is_answered_once_the_host_acknowledged_it() {
    let mut j = job();
    let t = j.send(0, &Request::Finalize);
    let outs = drain(&mut j.a);
    assert!(
        no_reply(&outs, &j.fakes[0], t),
        "answered before the host knew"
    );
    assert!(
        outs.iter().any(|o| matches!(
            o,
            Output::Host(pmix::server::Upcall::Finalized { rank: 0, .. })
        )),
        "{outs:?}"
    );
    let id = finalized_id(&outs, 0);
    let now = j.now;
    j.a.host_answer(id, HostAnswer::ClientFinalized, now);
    let outs = drain(&mut j.a);
    assert_eq!(status(&outs, &j.fakes[0], t, Command::Finalize), 0);
    // A second acknowledgement, or one nobody waits for, does nothing.
    j.a.host_answer(id, HostAnswer::ClientFinalized, now);
    j.a.host_answer(id + 1000, HostAnswer::ClientFinalized, now);
    assert!(drain(&mut j.a).is_empty());
}

#[test]
fn an_event_wider_than_the_node_goes_to_the_host_and_a_local_one_does_not() {
    use pmix_wire::DataRange;
    use pmix_wire::msg::Notify;
    let mut j = job();
    let notify = |range| {
        Request::Notify(Notify {
            status: Status(-3000),
            range,
            info: vec![Info::new("x", 1u32)],
        })
    };
    j.send(0, &notify(DataRange::GLOBAL));
    let (calls, _) = split(drain(&mut j.a));
    let [
        Upcall::Notify {
            code,
            source,
            range,
            info,
        },
    ] = &calls[..]
    else {
        panic!("{calls:?}")
    };
    assert_eq!((*code, source.1, *range), (-3000, 0, DataRange::GLOBAL.0));
    assert_eq!(info[0], Info::new("x", 1u32));
    assert_eq!(info.len(), 2, "the client's info and node A's origin mark");
    assert_eq!(info[1].key, "pmixrs.evorigin");
    // The host hands it to every node: node A raised it already and drops it; node
    // B raises it to its clients (registered for it), without the mark.
    let (info, src) = (info.clone(), source.clone());
    for r in [2, 3] {
        let reg = Request::RegEvents(pmix_wire::msg::RegEvents {
            codes: vec![Status(-3000)],
            info: Vec::new(),
        });
        j.send(r, &reg);
    }
    drain(&mut j.b);
    j.a.raise_event(
        -3000,
        Some((&src.0, src.1)),
        info.clone(),
        DataRange::GLOBAL,
    );
    assert!(
        drain(&mut j.a).is_empty(),
        "node A raises its own event once"
    );
    j.b.raise_event(-3000, Some((&src.0, src.1)), info, DataRange::GLOBAL);
    let outs_b = drain(&mut j.b);
    for r in [2, 3] {
        let evs = events(&outs_b, &j.fakes[r]);
        assert!(
            evs.iter()
                .any(|e| e.status.0 == -3000 && e.info.iter().all(|i| i.key != "pmixrs.evorigin")),
            "rank {r}: {evs:?}"
        );
    }
    for local in [DataRange::LOCAL, DataRange::PROC_LOCAL] {
        j.send(1, &notify(local));
        let (calls, _) = split(drain(&mut j.a));
        assert!(calls.is_empty(), "{local:?}: {calls:?}");
    }
}

#[test]
fn with_a_host_that_keeps_published_data_publish_and_lookup_are_its_answers() {
    use pmix_wire::msg::{Lookup, Publish};
    use pmix_wire::value::Uint32;
    let now = Instant::now();
    let mut cfg = CoreConfig::new("srv", 0, "nodeA", UID, GID);
    cfg.provides = Provides::NODES | Provides::PUBSUB;
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node(NS, 1, UID, GID))
        .unwrap();
    let mut f = connect(&mut core, 1, NS, 0, now);
    drain(&mut core);
    let publish = Request::Publish(Publish {
        uid: Uint32(UID),
        info: vec![Info::new("svc", "port-1")],
    });
    let t = f.send(&mut core, &publish, now);
    let (calls, outs) = split(drain(&mut core));
    assert!(no_reply(&outs, &f, t), "answered before the host");
    let [Upcall::Publish { id, proc, info }] = &calls[..] else {
        panic!("{calls:?}")
    };
    assert_eq!(proc, &(NS.to_string(), 0));
    assert_eq!(info.last(), Some(&Info::new("pmix.euid", UID)));
    core.host_answer(*id, HostAnswer::Publish(Ok(())), now);
    assert_eq!(status(&drain(&mut core), &f, t, Command::PublishNb), 0);
    let lookup = Request::Lookup(Lookup {
        uid: Uint32(UID),
        keys: vec![WStr::from("svc")],
        info: Vec::new(),
    });
    let t = f.send(&mut core, &lookup, now);
    let (calls, _) = split(drain(&mut core));
    let [Upcall::Lookup { id, keys, .. }] = &calls[..] else {
        panic!("{calls:?}")
    };
    assert_eq!(keys, &vec!["svc".to_string()]);
    let found = pmix_wire::Pdata {
        proc: Proc::new("other-job", 3),
        key: WStr::from("svc"),
        value: pmix_wire::Value::string("port-1"),
    };
    core.host_answer(*id, HostAnswer::Lookup(Ok(vec![found.clone()])), now);
    match reply(&drain(&mut core), &f, t, Command::LookupNb) {
        Reply::Lookup(r) => assert_eq!(r.data, vec![found]),
        other => panic!("{other:?}"),
    }
    // The host's refusal is the client's.
    let t = f.send(&mut core, &lookup, now);
    let (calls, _) = split(drain(&mut core));
    let [Upcall::Lookup { id, .. }] = &calls[..] else {
        panic!("{calls:?}")
    };
    core.host_answer(*id, HostAnswer::Lookup(Err(Status::ERR_NOT_SUPPORTED)), now);
    assert_eq!(
        status(&drain(&mut core), &f, t, Command::LookupNb),
        Status::ERR_NOT_SUPPORTED.0
    );
}
