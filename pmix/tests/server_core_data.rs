//! The server core's COMMIT, GETNB and FENCENB, and what a lost rank does to them,
//! driven by fake clients that speak pmix-wire.

mod server_core_common;

use std::time::{Duration, Instant};

use pmix::server::core::{Core, FENCE_LOST, FT_KEY, Output, Upcall};
use pmix_wire::msg::{Commit, CommitBucket, FenceNb, GetNb};
use pmix_wire::{
    BufferType, Command, Info, Kval, Proc, Rank, Reply, Request, Scope, Status, Value, WStr,
};
use server_core_common::*;

const TIMEOUT: i32 = -24;

fn commit(local: &[(&str, u32)], remote: &[(&str, u32)]) -> Request {
    let bucket = |scope, kv: &[(&str, u32)]| CommitBucket {
        scope,
        buffer_type: BufferType::NonDescribed,
        kvals: kv.iter().map(|(k, v)| Kval::new(*k, *v)).collect(),
    };
    let mut buckets = Vec::new();
    if !local.is_empty() {
        buckets.push(bucket(Scope::LOCAL, local));
    }
    if !remote.is_empty() {
        buckets.push(bucket(Scope::REMOTE, remote));
    }
    Request::Commit(Commit { buckets })
}

fn get(ns: &str, rank: Rank, key: &str, info: Vec<Info>) -> Request {
    Request::GetNb(GetNb {
        nspace: ns.into(),
        rank,
        info,
        key: Some(WStr::from(key)),
    })
}

fn fence(ns: &str, info: Vec<Info>) -> Request {
    Request::FenceNb(FenceNb {
        procs: vec![Proc {
            nspace: ns.into(),
            rank: Rank::WILDCARD,
        }],
        info,
    })
}

/// The keys of a GETNB reply's one byte object, and its proc.
fn got(outs: &[Output], f: &Fake, tag: u32) -> (Proc, Vec<String>) {
    match reply(outs, f, tag, Command::GetNb) {
        Reply::GetNb(r) => {
            assert_eq!(r.status, Status::SUCCESS);
            assert_eq!(r.data.len(), 1);
            let d = &r.data[0];
            (
                d.proc.clone(),
                d.kvals.iter().map(|k| k.key.to_string()).collect(),
            )
        }
        other => panic!("expected data, got {other:?}"),
    }
}

fn two(now: Instant) -> (Core, Fake, Fake) {
    let mut core = core_with("job", 2);
    let a = connect(&mut core, 1, "job", 0, now);
    let b = connect(&mut core, 2, "job", 1, now);
    drain(&mut core);
    (core, a, b)
}

#[test]
fn a_get_of_a_committed_key_brings_the_targets_local_values() {
    let now = Instant::now();
    let (mut core, mut a, mut b) = two(now);
    let tag = a.send(&mut core, &commit(&[("x", 1), ("y", 2)], &[("r", 3)]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &a, tag, Command::Commit), 0);
    let tag = b.send(&mut core, &get("job", Rank(0), "x", vec![]), now);
    let outs = drain(&mut core);
    let (proc, keys) = got(&outs, &b, tag);
    assert_eq!(proc, Proc::new("job", 0));
    assert_eq!(keys, ["x", "y"]);
    // A REMOTE-only key is in the wrong scope for a local peer.
    let tag = b.send(&mut core, &get("job", Rank(0), "r", vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &b, tag, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    // pmix.scope REMOTE makes it visible.
    let scope = vec![Info::new("pmix.scope", Value::Scope(2))];
    let tag = b.send(&mut core, &get("job", Rank(0), "r", scope), now);
    let outs = drain(&mut core);
    assert_eq!(got(&outs, &b, tag).1, ["r"]);
    // Commits are cumulative: a later one updates and adds.
    a.send(&mut core, &commit(&[("x", 9), ("z", 4)], &[]), now);
    drain(&mut core);
    let tag = b.send(&mut core, &get("job", Rank(0), "z", vec![]), now);
    let outs = drain(&mut core);
    let Reply::GetNb(r) = reply(&outs, &b, tag, Command::GetNb) else {
        panic!()
    };
    // Only what changed since b filed x and y: the new x, and z.
    let x = r.data[0].kvals.iter().find(|k| k.key == "x").unwrap();
    assert_eq!(x.value, Value::Uint32(9));
    assert_eq!(r.data[0].kvals.len(), 2);
}

#[test]
fn each_answer_carries_only_the_values_the_asker_has_not_filed() {
    let now = Instant::now();
    let mut core = core_with("job", 3);
    let mut a = connect(&mut core, 1, "job", 0, now);
    let mut b = connect(&mut core, 2, "job", 1, now);
    let mut c = connect(&mut core, 3, "job", 2, now);
    drain(&mut core);
    let mut put: Vec<(String, u32)> = Vec::new();
    for round in 0..5u32 {
        // Cumulative commits, as libpmix2 sends them: every key again, plus one.
        put.push((format!("k{round}"), round));
        let kv: Vec<(&str, u32)> = put.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        a.send(&mut core, &commit(&kv, &[]), now);
        drain(&mut core);
        let key = format!("k{round}");
        let tag = b.send(&mut core, &get("job", Rank(0), &key, vec![]), now);
        let outs = drain(&mut core);
        assert_eq!(got(&outs, &b, tag).1, [key], "round {round}");
    }
    // A key b has filed, asked again (a client that did not keep it): sent again.
    let tag = b.send(&mut core, &get("job", Rank(0), "k1", vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(got(&outs, &b, tag).1, ["k1"]);
    // pmix.get.refresh: everything again.
    let refresh = vec![Info::new("pmix.get.refresh", true)];
    let tag = b.send(&mut core, &get("job", Rank(0), "k0", refresh), now);
    let outs = drain(&mut core);
    assert_eq!(got(&outs, &b, tag).1.len(), 5);
    // Another connection has filed nothing: everything.
    let tag = c.send(&mut core, &get("job", Rank(0), "k4", vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(got(&outs, &c, tag).1, ["k0", "k1", "k2", "k3", "k4"]);
}

#[test]
fn a_get_before_the_commit_is_held_and_answered_by_it() {
    let now = Instant::now();
    let (mut core, mut a, mut b) = two(now);
    let tag = b.send(&mut core, &get("job", Rank(0), "late", vec![]), now);
    assert!(drain(&mut core).is_empty(), "held");
    assert!(core.next_deadline().is_some());
    a.send(&mut core, &commit(&[("other", 1)], &[]), now);
    let outs = drain(&mut core);
    assert!(no_reply(&outs, &b, tag), "still held: the key is not there");
    a.send(&mut core, &commit(&[("late", 2)], &[]), now);
    let outs = drain(&mut core);
    assert_eq!(got(&outs, &b, tag).1, ["other", "late"]);
    assert_eq!(core.next_deadline(), None);
}

#[test]
fn a_held_get_times_out_after_2_s_or_its_pmix_timeout() {
    let now = Instant::now();
    let (mut core, _a, mut b) = two(now);
    let t1 = b.send(&mut core, &get("job", Rank(0), "k1", vec![]), now);
    let info = vec![Info::new("pmix.timeout", Value::Int(5))];
    let t2 = b.send(&mut core, &get("job", Rank(0), "k2", info), now);
    assert_eq!(core.next_deadline(), Some(now + Duration::from_secs(2)));
    core.tick(now + Duration::from_secs(1));
    assert!(drain(&mut core).is_empty());
    core.tick(now + Duration::from_secs(2));
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &b, t1, Command::GetNb), TIMEOUT);
    assert!(no_reply(&outs, &b, t2));
    core.tick(now + Duration::from_secs(5));
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &b, t2, Command::GetNb), TIMEOUT);
}

#[test]
fn immediate_and_job_level_gets_are_answered_at_once() {
    let now = Instant::now();
    let (mut core, _a, mut b) = two(now);
    let imm = vec![Info::new("pmix.immediate", true)];
    let tag = b.send(&mut core, &get("job", Rank(0), "nope", imm.clone()), now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &b, tag, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    // Open MPI's direct launch asks for the topology: NOT_FOUND, it discovers.
    let tag = b.send(
        &mut core,
        &get("job", Rank::WILDCARD, "pmix.hwlocxml2", imm),
        now,
    );
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &b, tag, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    let tag = b.send(
        &mut core,
        &get("job", Rank::WILDCARD, "pmix.job.size", vec![]),
        now,
    );
    let outs = drain(&mut core);
    let (proc, keys) = got(&outs, &b, tag);
    assert_eq!(proc.rank, Rank::WILDCARD);
    assert_eq!(keys, ["pmix.job.size"]);
    let tag = b.send(
        &mut core,
        &get("job", Rank::WILDCARD, "pmix.local.size", vec![]),
        now,
    );
    let outs = drain(&mut core);
    assert_eq!(got(&outs, &b, tag).1, ["pmix.local.size"]);
    // A peer's reserved key comes from its blob values.
    let tag = b.send(&mut core, &get("job", Rank(0), "pmix.lrank", vec![]), now);
    let outs = drain(&mut core);
    assert!(got(&outs, &b, tag).1.contains(&"pmix.lrank".to_string()));
    for (ns, rank) in [("nope", Rank(0)), ("job", Rank(7))] {
        let tag = b.send(&mut core, &get(ns, rank, "k", vec![]), now);
        let outs = drain(&mut core);
        assert_eq!(
            status(&outs, &b, tag, Command::GetNb),
            Status::ERR_NOT_FOUND.0
        );
    }
}

#[test]
fn hwlocxml2_is_served_only_when_the_launcher_gives_libhwlocs_export() {
    let now = Instant::now();
    let mut cfg = pmix::server::core::CoreConfig::new("srv", 0, "node0", UID, GID);
    cfg.hwloc_xml = Some("<topology version=\"2.0\"/>".into());
    let mut core = Core::new(cfg);
    core.add_namespace(pmix::server::core::NamespaceSpec::single_node(
        "job", 1, UID, GID,
    ))
    .unwrap();
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    let imm = vec![Info::new("pmix.immediate", true)];
    let tag = a.send(
        &mut core,
        &get("job", Rank::WILDCARD, "pmix.hwlocxml2", imm),
        now,
    );
    let Reply::GetNb(r) = reply(&drain(&mut core), &a, tag, Command::GetNb) else {
        panic!()
    };
    assert_eq!(
        r.data[0].kvals[0].value,
        Value::from("<topology version=\"2.0\"/>")
    );
}

#[test]
fn a_get_held_for_a_rank_that_is_lost_is_answered_not_found() {
    let now = Instant::now();
    let (mut core, a, mut b) = two(now);
    let tag = b.send(&mut core, &get("job", Rank(0), "never", vec![]), now);
    core.closed(a.conn, now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &b, tag, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    assert!(outs.contains(&Output::Host(Upcall::Lost {
        nspace: "job".into(),
        rank: 0
    })));
}

#[test]
fn a_fence_completes_when_every_rank_has_joined() {
    let now = Instant::now();
    let mut core = core_with("job", 3);
    let mut f: Vec<Fake> = (0..3)
        .map(|r| connect(&mut core, r.into(), "job", r, now))
        .collect();
    drain(&mut core);
    let collect = vec![Info::new("pmix.collect", true)];
    let t0 = f[0].send(&mut core, &fence("job", collect.clone()), now);
    let t2 = f[2].send(&mut core, &fence("job", collect.clone()), now);
    assert!(drain(&mut core).is_empty());
    let t1 = f[1].send(&mut core, &fence("job", collect), now);
    let outs = drain(&mut core);
    for (p, t) in [(0, t0), (1, t1), (2, t2)] {
        assert_eq!(status(&outs, &f[p], t, Command::FenceNb), 0);
    }
    // The next fence is a new one.
    let t = f[0].send(&mut core, &fence("job", vec![]), now);
    assert!(no_reply(&drain(&mut core), &f[0], t));
}

#[test]
fn a_fence_over_listed_ranks_waits_only_for_them() {
    let now = Instant::now();
    let mut core = core_with("job", 3);
    let mut f: Vec<Fake> = (0..3)
        .map(|r| connect(&mut core, r.into(), "job", r, now))
        .collect();
    drain(&mut core);
    let req = Request::FenceNb(FenceNb {
        procs: vec![Proc::new("job", 2), Proc::new("job", 0)],
        info: vec![],
    });
    let t0 = f[0].send(&mut core, &req, now);
    let t2 = f[2].send(&mut core, &req, now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), 0);
    assert_eq!(status(&outs, &f[2], t2, Command::FenceNb), 0);
    // A proc outside the list cannot join it.
    let t1 = f[1].send(&mut core, &req, now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[1], t1, Command::FenceNb), -27);
}

#[test]
fn a_rank_lost_mid_fence_fails_a_plain_fence_and_completes_an_ft_one() {
    for ft in [false, true] {
        let now = Instant::now();
        let mut core = core_with("job", 3);
        let mut f: Vec<Fake> = (0..3)
            .map(|r| connect(&mut core, r.into(), "job", r, now))
            .collect();
        drain(&mut core);
        let info = if ft {
            vec![Info::new(FT_KEY, true)]
        } else {
            vec![]
        };
        let t0 = f[0].send(&mut core, &fence("job", info.clone()), now);
        core.closed(f[2].conn, now);
        let outs = drain(&mut core);
        let want = if ft { None } else { Some(FENCE_LOST.0) };
        if let Some(w) = want {
            assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), w);
        } else {
            assert!(no_reply(&outs, &f[0], t0), "FT: waits for rank 1");
        }
        let t1 = f[1].send(&mut core, &fence("job", info), now);
        let outs = drain(&mut core);
        if ft {
            assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), 0);
            assert_eq!(status(&outs, &f[1], t1, Command::FenceNb), 0);
        } else {
            // A later contributor is not left waiting for the dead rank either.
            assert_eq!(status(&outs, &f[1], t1, Command::FenceNb), FENCE_LOST.0);
        }
    }
}

#[test]
fn a_fence_with_pmix_timeout_fails_with_timeout() {
    let now = Instant::now();
    let (mut core, mut a, _b) = two(now);
    let info = vec![Info::new("pmix.timeout", Value::Int(3))];
    let t = a.send(&mut core, &fence("job", info), now);
    assert_eq!(core.next_deadline(), Some(now + Duration::from_secs(3)));
    core.tick(now + Duration::from_secs(3));
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &a, t, Command::FenceNb), TIMEOUT);
    assert_eq!(core.next_deadline(), None);
}

#[test]
fn proc_exited_without_finalize_is_a_loss_and_closes_its_connection() {
    let now = Instant::now();
    let (mut core, mut a, b) = two(now);
    let t = a.send(&mut core, &fence("job", vec![]), now);
    core.proc_exited("job", 1, 1, now);
    let outs = drain(&mut core);
    assert!(outs.contains(&Output::Close { conn: b.conn }));
    assert!(outs.contains(&Output::Host(Upcall::Lost {
        nspace: "job".into(),
        rank: 1
    })));
    assert_eq!(status(&outs, &a, t, Command::FenceNb), FENCE_LOST.0);
    // Reported once, whatever follows.
    core.closed(b.conn, now);
    core.proc_exited("job", 1, 1, now);
    assert!(drain(&mut core).is_empty());
}

#[test]
fn removing_a_namespace_closes_its_ranks_and_settles_what_waited_on_them() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    core.add_namespace(pmix::server::core::NamespaceSpec::single_node(
        "other", 1, UID, GID,
    ))
    .unwrap();
    let a = connect(&mut core, 1, "job", 0, now);
    let mut o = connect(&mut core, 3, "other", 0, now);
    drain(&mut core);
    let held = o.send(&mut core, &get("job", Rank(0), "never", vec![]), now);
    core.remove_namespace("job", now).unwrap();
    let outs = drain(&mut core);
    assert!(outs.contains(&Output::Close { conn: a.conn }));
    assert!(
        !outs.iter().any(|x| matches!(x, Output::Host(_))),
        "{outs:?}"
    );
    assert_eq!(
        status(&outs, &o, held, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    assert_eq!(core.namespaces().collect::<Vec<_>>(), ["other"]);
    assert!(core.remove_namespace("job", now).is_err());
    // The name can be used again, and its ranks connect afresh.
    core.add_namespace(pmix::server::core::NamespaceSpec::single_node(
        "job", 2, UID, GID,
    ))
    .unwrap();
    connect(&mut core, 9, "job", 0, now);
}
