//! The server core's bounds on what one peer can make it hold: waiting requests,
//! event registrations, committed keys, published keys. Past a bound the request
//! is answered `PMIX_ERR_OUT_OF_RESOURCE` at once and nothing is kept.

mod server_core_common;

use pmix_testkit::Rng;
use std::time::Instant;

use pmix::server::core::{Core, CoreConfig, NamespaceSpec};
use pmix_wire::msg::{Commit, CommitBucket, FenceNb, GetNb, Lookup, Publish, RegEvents};
use pmix_wire::{
    BufferType, ByteObject, Command, Info, Kval, Proc, Rank, Reply, Request, Scope, Status, Uint32,
    Value, WStr,
};
use server_core_common::*;

const OUT_OF_RESOURCE: i32 = -29;

fn small_core() -> Core {
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    cfg.max_pending = 3;
    cfg.max_registrations = 2;
    cfg.max_keys_per_proc = 4;
    cfg.max_published = 2;
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node("job", 2, UID, GID))
        .unwrap();
    core
}

fn get(key: &str) -> Request {
    Request::GetNb(GetNb {
        nspace: "job".into(),
        rank: Rank(1),
        info: vec![],
        key: Some(WStr::from(key)),
    })
}

#[test]
fn waiting_requests_past_the_bound_are_refused_at_once() {
    let now = Instant::now();
    let mut core = small_core();
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    let fence = Request::FenceNb(FenceNb {
        procs: vec![Proc {
            nspace: "job".into(),
            rank: Rank::WILDCARD,
        }],
        info: vec![],
    });
    a.send(&mut core, &get("k1"), now);
    a.send(&mut core, &get("k2"), now);
    a.send(&mut core, &fence, now);
    assert!(drain(&mut core).is_empty(), "three requests wait");
    let t = a.send(&mut core, &get("k3"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &a, t, Command::GetNb), OUT_OF_RESOURCE);
    let wait = vec![Info::new("pmix.wait", true)];
    let lookup = Request::Lookup(Lookup {
        uid: Uint32(UID),
        keys: vec![WStr::from("nope")],
        info: wait,
    });
    let t = a.send(&mut core, &lookup, now);
    assert_eq!(
        status(&drain(&mut core), &a, t, Command::LookupNb),
        OUT_OF_RESOURCE
    );
    let t = a.send(&mut core, &fence, now);
    assert_eq!(
        status(&drain(&mut core), &a, t, Command::FenceNb),
        OUT_OF_RESOURCE
    );
}

#[test]
fn registrations_committed_keys_and_published_keys_are_bounded() {
    let now = Instant::now();
    let mut core = small_core();
    let mut a = connect(&mut core, 1, "job", 0, now);
    let mut b = connect(&mut core, 2, "job", 1, now);
    drain(&mut core);
    let reg = Request::RegEvents(RegEvents {
        codes: vec![],
        info: vec![],
    });
    for want in [0, 0, OUT_OF_RESOURCE] {
        let t = a.send(&mut core, &reg, now);
        assert_eq!(status(&drain(&mut core), &a, t, Command::RegEvents), want);
    }
    let commit = |keys: &[&str]| {
        Request::Commit(Commit {
            buckets: vec![CommitBucket {
                scope: Scope::LOCAL,
                buffer_type: BufferType::NonDescribed,
                kvals: keys.iter().map(|k| Kval::new(*k, 1u32)).collect(),
            }],
        })
    };
    let t = b.send(&mut core, &commit(&["a", "b", "c"]), now);
    assert_eq!(status(&drain(&mut core), &b, t, Command::Commit), 0);
    let t = b.send(&mut core, &commit(&["a", "d", "e"]), now);
    assert_eq!(
        status(&drain(&mut core), &b, t, Command::Commit),
        OUT_OF_RESOURCE
    );
    // Nothing of the refused commit was kept.
    let imm = vec![Info::new("pmix.immediate", true)];
    let t = a.send(
        &mut core,
        &Request::GetNb(GetNb {
            nspace: "job".into(),
            rank: Rank(1),
            info: imm,
            key: Some(WStr::from("d")),
        }),
        now,
    );
    assert_eq!(
        status(&drain(&mut core), &a, t, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    let publish = |keys: &[&str]| {
        Request::Publish(Publish {
            uid: Uint32(UID),
            info: keys.iter().map(|k| Info::new(*k, 1u32)).collect(),
        })
    };
    let t = a.send(&mut core, &publish(&["p1", "p2", "p3"]), now);
    assert_eq!(
        status(&drain(&mut core), &a, t, Command::PublishNb),
        OUT_OF_RESOURCE
    );
    let t = a.send(&mut core, &publish(&["p1", "p2"]), now);
    assert_eq!(status(&drain(&mut core), &a, t, Command::PublishNb), 0);
}

#[test]
fn a_large_commit_is_stored_in_linear_time() {
    // 50,000 keys in one commit, then again with every value changed: quadratic
    // upserts would take minutes here.
    let now = Instant::now();
    let mut core = Core::new(CoreConfig::new("srv", 0, "node0", UID, GID));
    core.add_namespace(NamespaceSpec::single_node("job", 1, UID, GID))
        .unwrap();
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    for v in [1u32, 2] {
        let kvals = (0..50_000).map(|i| Kval::new(format!("k{i}"), v)).collect();
        let c = Request::Commit(Commit {
            buckets: vec![CommitBucket {
                scope: Scope::LOCAL,
                buffer_type: BufferType::NonDescribed,
                kvals,
            }],
        });
        let t = a.send(&mut core, &c, now);
        assert_eq!(status(&drain(&mut core), &a, t, Command::Commit), 0);
    }
}

#[test]
fn a_fence_of_2048_ranks_completes_without_quadratic_work() {
    let now = Instant::now();
    let n = 2048;
    let mut core = Core::new(CoreConfig::new("srv", 0, "node0", UID, GID));
    core.add_namespace(NamespaceSpec::single_node("big", n, UID, GID))
        .unwrap();
    let mut f: Vec<_> = (0..n)
        .map(|r| connect(&mut core, r.into(), "big", r, now))
        .collect();
    drain(&mut core);
    let fence = Request::FenceNb(FenceNb {
        procs: vec![Proc {
            nspace: "big".into(),
            rank: Rank::WILDCARD,
        }],
        info: vec![],
    });
    let tags: Vec<u32> = f
        .iter_mut()
        .map(|c| c.send(&mut core, &fence, now))
        .collect();
    let outs = drain(&mut core);
    assert_eq!(outs.len(), n as usize);
    assert_eq!(status(&outs, &f[7], tags[7], Command::FenceNb), 0);
}

#[test]
fn a_fence_naming_its_namespace_a_million_times_is_refused_at_its_count() {
    let now = Instant::now();
    let mut core = core_with("job", 4);
    let mut f: Vec<_> = (0..4)
        .map(|r| connect(&mut core, r.into(), "job", r, now))
        .collect();
    drain(&mut core);
    let whole = Proc {
        nspace: "job".into(),
        rank: Rank::WILDCARD,
    };
    let fence = |n: usize| {
        Request::FenceNb(FenceNb {
            procs: vec![whole.clone(); n],
            info: vec![],
        })
    };
    // 1,000,000 entries (a 17 MB frame) where the server knows 4 ranks: the
    // connection is closed at the count, nothing is held.
    f[3].send(&mut core, &fence(1_000_000), now);
    let outs = drain(&mut core);
    assert!(outs.contains(&pmix::server::core::Output::Close { conn: f[3].conn }));
    // As many entries as the bound allows is a request like any other.
    let bound = pmix::server::core::MIN_PROC_BOUND as usize;
    let tags: Vec<u32> = f[..3]
        .iter_mut()
        .map(|c| c.send(&mut core, &fence(bound), now))
        .collect();
    let outs = drain(&mut core);
    for (c, t) in f[..3].iter().zip(tags) {
        // Served: rank 3 was lost, so the fence over the namespace fails on the
        // others as any such fence does (not refused as too long).
        assert_eq!(
            status(&outs, c, t, Command::FenceNb),
            pmix::server::core::FENCE_LOST.0
        );
    }
}

#[test]
fn a_request_of_more_infos_keys_or_values_than_the_server_admits_is_refused_at_its_count() {
    let now = Instant::now();
    let mut core = core_with("job", 3);
    assert_eq!(
        core.config().limits.max_list,
        1 << 16,
        "the server's default"
    );
    let mut a = connect(&mut core, 1, "job", 0, now);
    let mut b = connect(&mut core, 2, "job", 1, now);
    drain(&mut core);
    let infos = |n: u32| (0..n).map(|i| Info::new("h.k", i)).collect::<Vec<_>>();
    let get = |info: Vec<Info>| {
        Request::GetNb(GetNb {
            nspace: "job".into(),
            rank: Rank(1),
            info,
            key: Some(WStr::from("k")),
        })
    };
    // One more info than max_list: closed at the count.
    a.send(&mut core, &get(infos((1 << 16) + 1)), now);
    let outs = drain(&mut core);
    assert!(outs.contains(&pmix::server::core::Output::Close { conn: a.conn }));
    // An array longer than the processes the server could name: closed too.
    let long = (0..(1u32 << 16) + 1).map(Value::Uint32).collect();
    let array = pmix_wire::DataArray::new(pmix_wire::DataType::Uint32, long).unwrap();
    b.send(
        &mut core,
        &get(vec![Info::new("h.a", Value::DataArray(array))]),
        now,
    );
    let outs = drain(&mut core);
    assert!(outs.contains(&pmix::server::core::Output::Close { conn: b.conn }));
    // At the bound, a request like any other (held: rank 1 has not put "k").
    let mut c = connect(&mut core, 3, "job", 2, now);
    drain(&mut core);
    let mut imm = infos((1 << 16) - 1);
    imm.push(Info::new("pmix.immediate", true));
    let t = c.send(&mut core, &get(imm), now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &c, t, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
}

/// Valid requests of every kind the core handles, to mutate.
fn seeds() -> Vec<Request> {
    use pmix_wire::msg::{
        Abort, ComputeDeviceDistances, DeregEvents, GroupConstruct, GroupLeave, JobControl, Notify,
        ProcCpuset, QueryInfo,
    };
    use pmix_wire::{DataArray, DataRange, DataType, Query, Topo, Value};
    let evrange = Value::DataArray(
        DataArray::new(DataType::Proc, vec![Value::Proc(Proc::new("job", 1))]).unwrap(),
    );
    vec![
        Request::Req,
        Request::Finalize,
        Request::Commit(Commit {
            buckets: vec![CommitBucket {
                scope: Scope::LOCAL,
                buffer_type: BufferType::NonDescribed,
                kvals: vec![Kval::new("k", 1u32)],
            }],
        }),
        get("k"),
        Request::FenceNb(FenceNb {
            procs: vec![Proc::new("job", 0), Proc::new("job", 1)],
            info: vec![Info::new("pmix.timeout", pmix_wire::Value::Int(1))],
        }),
        Request::RegEvents(RegEvents {
            codes: vec![Status(-7)],
            info: vec![Info::new("pmix.evproc", Proc::new("job", 1))],
        }),
        Request::DeregEvents(DeregEvents {
            codes: vec![Status(-7)],
        }),
        Request::Notify(Notify {
            status: Status(-3000),
            range: DataRange::CUSTOM,
            info: vec![Info::new("pmix.evrange", evrange)],
        }),
        Request::Publish(Publish {
            uid: Uint32(UID),
            info: vec![
                Info::new("p", 1u32),
                Info::new("pmix.range", Value::DataRange(3)),
            ],
        }),
        Request::Lookup(Lookup {
            uid: Uint32(UID),
            keys: vec![WStr::from("p")],
            info: vec![Info::new("pmix.wait", true)],
        }),
        Request::JobControl(JobControl {
            targets: vec![],
            directives: vec![Info::new("pmix.reg.cleanup", "/tmp/x")],
        }),
        Request::Query(QueryInfo {
            queries: vec![Query {
                keys: vec![WStr::from("pmix.job.size")],
                qualifiers: vec![Info::new("pmix.nspace", "job")],
            }],
        }),
        Request::ComputeDeviceDistances(ComputeDeviceDistances {
            topo: Topo::default(),
            cpuset: ProcCpuset(Some(WStr::from("0"))),
            info: vec![Info::new("pmix.dev.type", Value::DevType(4))],
        }),
        Request::GroupConstruct(GroupConstruct {
            grp: WStr::from("g"),
            procs: vec![Proc::new("job", 0)],
            info: vec![],
        }),
        Request::GroupLeave(GroupLeave {
            grp: WStr::from("g"),
            info: vec![],
        }),
        Request::Abort(Abort {
            status: Status(1),
            message: None,
            procs: vec![],
        }),
    ]
}

#[test]
fn mutated_requests_never_panic_and_always_get_an_answer_or_a_close() {
    let codec = pmix_wire::Codec::v422();
    let seeds: Vec<Vec<u8>> = seeds().iter().map(|r| r.encode(&codec).unwrap()).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut now = Instant::now();
    for round in 0..300 {
        let mut core = small_core();
        let mut a = connect(&mut core, 1, "job", 0, now);
        let _b = connect(&mut core, 2, "job", 1, now);
        drain(&mut core);
        for _ in 0..20 {
            let mut bytes = seeds[rng.index(seeds.len())].clone();
            for _ in 0..=rng.index(4) {
                match rng.index(3) {
                    0 if !bytes.is_empty() => {
                        let i = rng.index(bytes.len());
                        bytes[i] = rng.bits() as u8;
                    }
                    1 if !bytes.is_empty() => {
                        bytes.truncate(rng.index(bytes.len()));
                    }
                    _ => bytes.push(rng.bits() as u8),
                }
            }
            a.tag = pmix_wire::frame::next_tag(a.tag);
            let frame = pmix_wire::Frame::new(0, a.tag, bytes.clone()).unwrap();
            core.frame(a.conn, &frame, now);
            let outs = drain(&mut core);
            let closed = outs.contains(&pmix::server::core::Output::Close { conn: a.conn });
            let answered = !no_reply(&outs, &a, a.tag);
            let req = pmix_wire::decode_request(&bytes, &codec);
            let quiet = matches!(
                req,
                Ok(Request::DeregEvents(_)
                    | Request::GetNb(_)
                    | Request::FenceNb(_)
                    | Request::Lookup(_))
            );
            assert!(
                closed || answered || quiet,
                "round {round}: {req:?} got neither an answer nor a close"
            );
            if closed {
                break;
            }
        }
        now += std::time::Duration::from_secs(3);
        core.tick(now);
        drain(&mut core);
    }
}

#[test]
fn a_commit_past_the_bytes_one_process_may_hold_stores_nothing() {
    let now = Instant::now();
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    cfg.max_committed_bytes_per_proc = 1 << 20;
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node("job", 2, UID, GID))
        .unwrap();
    let mut a = connect(&mut core, 1, "job", 0, now);
    let mut b = connect(&mut core, 2, "job", 1, now);
    drain(&mut core);
    let commit = |key: &str, len: usize, scope: Scope| {
        Request::Commit(Commit {
            buckets: vec![CommitBucket {
                scope,
                buffer_type: BufferType::NonDescribed,
                kvals: vec![Kval::new(key, Value::ByteObject(ByteObject(vec![1; len])))],
            }],
        })
    };
    // 400 KiB LOCAL, then 400 KiB GLOBAL (held twice: 800 KiB): over 1 MiB.
    let t = b.send(&mut core, &commit("small", 400 << 10, Scope::LOCAL), now);
    assert_eq!(status(&drain(&mut core), &b, t, Command::Commit), 0);
    let t = b.send(&mut core, &commit("twice", 400 << 10, Scope::GLOBAL), now);
    assert_eq!(
        status(&drain(&mut core), &b, t, Command::Commit),
        OUT_OF_RESOURCE
    );
    let imm = vec![Info::new("pmix.immediate", true)];
    let get = |key: &str| {
        Request::GetNb(GetNb {
            nspace: "job".into(),
            rank: Rank(1),
            info: imm.clone(),
            key: Some(WStr::from(key)),
        })
    };
    let t = a.send(&mut core, &get("twice"), now);
    assert_eq!(
        status(&drain(&mut core), &a, t, Command::GetNb),
        Status::ERR_NOT_FOUND.0
    );
    // What fits is still taken: the same key made smaller.
    let t = b.send(&mut core, &commit("small", 100, Scope::LOCAL), now);
    assert_eq!(status(&drain(&mut core), &b, t, Command::Commit), 0);
    let t = b.send(&mut core, &commit("twice", 400 << 10, Scope::GLOBAL), now);
    assert_eq!(status(&drain(&mut core), &b, t, Command::Commit), 0);
    let t = a.send(&mut core, &get("twice"), now);
    let got = matches!(
        reply(&drain(&mut core), &a, t, Command::GetNb),
        Reply::GetNb(r) if r.status == Status::SUCCESS
    );
    assert!(got, "the value that fits is served");
}
