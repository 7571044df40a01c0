//! The server core's events (REGEVENTS, DEREGEVENTS, NOTIFY, ranges, caching,
//! lost ranks), PUBLISH/LOOKUP/UNPUBLISH, QUERY and JOB_CONTROL, driven by fake
//! clients that speak pmix-wire.

mod server_core_common;

use std::time::{Duration, Instant};

use pmix::server::core::{Core, CoreConfig, NamespaceSpec, PROC_ABORTED};
use pmix_wire::msg::{DeregEvents, JobControl, Lookup, Notify, Publish, QueryInfo, RegEvents};
use pmix_wire::{
    Command, DataArray, DataRange, DataType, Info, Proc, Query, Rank, Reply, Request, Status,
    Uint32, Value, WStr,
};
use server_core_common::*;

const CODE: Status = Status(-3007);

fn reg(codes: &[Status], info: Vec<Info>) -> Request {
    Request::RegEvents(RegEvents {
        codes: codes.to_vec(),
        info,
    })
}

fn notify(range: DataRange, info: Vec<Info>) -> Request {
    Request::Notify(Notify {
        status: CODE,
        range,
        info,
    })
}

/// `n` ranks of "job" connected, each registered with `regs[i]` (None: not
/// registered), registrations answered.
fn job(n: u32, regs: &[Option<Request>]) -> (Core, Vec<Fake>) {
    job_configured(|_| {}, n, regs)
}

/// [`job`], with the core's configuration first changed by `set`.
fn job_configured(
    set: impl FnOnce(&mut CoreConfig),
    n: u32,
    regs: &[Option<Request>],
) -> (Core, Vec<Fake>) {
    let now = Instant::now();
    let mut core = core_configured(set, "job", n);
    let mut f: Vec<Fake> = (0..n)
        .map(|r| connect(&mut core, r.into(), "job", r, now))
        .collect();
    drain(&mut core);
    for (i, r) in regs.iter().enumerate() {
        if let Some(r) = r {
            let t = f[i].send(&mut core, r, now);
            let outs = drain(&mut core);
            assert_eq!(status(&outs, &f[i], t, Command::RegEvents), 0);
        }
    }
    (core, f)
}

#[test]
fn a_notify_reaches_registered_peers_but_not_its_source() {
    let now = Instant::now();
    let dflt = Some(reg(&[], vec![]));
    let (mut core, mut f) = job(4, &[dflt.clone(), dflt, Some(reg(&[CODE], vec![])), None]);
    let info = vec![Info::new("demo.payload", 5u32)];
    let t = f[0].send(&mut core, &notify(DataRange::LOCAL, info), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert!(events(&outs, &f[0]).is_empty(), "no echo to the source");
    assert!(events(&outs, &f[3]).is_empty(), "not registered");
    for p in [1, 2] {
        let ev = events(&outs, &f[p]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].status, CODE);
        assert_eq!(ev[0].source, Proc::new("job", 0));
        assert_eq!(ev[0].range, Some(DataRange::LOCAL));
        assert!(ev[0].info.iter().any(|i| i.key == "demo.payload"));
        assert!(
            ev[0]
                .info
                .iter()
                .any(|i| i.key == "pmix.srvr.internal.notify")
        );
    }
}

#[test]
fn a_non_default_event_skips_default_handlers() {
    let now = Instant::now();
    let (mut core, mut f) = job(
        3,
        &[None, Some(reg(&[], vec![])), Some(reg(&[CODE], vec![]))],
    );
    let info = vec![Info::new("pmix.evnondef", true)];
    f[0].send(&mut core, &notify(DataRange::SESSION, info), now);
    let outs = drain(&mut core);
    assert!(events(&outs, &f[1]).is_empty());
    assert_eq!(events(&outs, &f[2]).len(), 1);
}

#[test]
fn ranges_custom_namespace_and_proc_local_pick_the_receivers() {
    let now = Instant::now();
    let d = || Some(reg(&[], vec![]));
    let (mut core, mut f) = job(3, &[d(), d(), d()]);
    // A second namespace with one registered rank.
    core.add_namespace(NamespaceSpec::single_node("other", 1, UID, GID))
        .unwrap();
    let mut o = connect(&mut core, 50, "other", 0, now);
    let t = o.send(&mut core, &reg(&[], vec![]), now);
    assert_eq!(status(&drain(&mut core), &o, t, Command::RegEvents), 0);

    let custom = Value::DataArray(
        DataArray::new(DataType::Proc, vec![Value::Proc(Proc::new("job", 2))]).unwrap(),
    );
    f[0].send(
        &mut core,
        &notify(DataRange::CUSTOM, vec![Info::new("pmix.evrange", custom)]),
        now,
    );
    let outs = drain(&mut core);
    assert!(events(&outs, &f[1]).is_empty());
    assert_eq!(events(&outs, &f[2]).len(), 1);
    assert!(events(&outs, &o).is_empty());

    // A single PROC with a WILDCARD rank covers its namespace.
    let wild = Value::Proc(Proc {
        nspace: "other".into(),
        rank: Rank::WILDCARD,
    });
    f[0].send(
        &mut core,
        &notify(DataRange::CUSTOM, vec![Info::new("pmix.evrange", wild)]),
        now,
    );
    let outs = drain(&mut core);
    assert_eq!(events(&outs, &o).len(), 1);
    assert!(events(&outs, &f[1]).is_empty());

    f[0].send(&mut core, &notify(DataRange::NAMESPACE, vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(events(&outs, &f[1]).len(), 1);
    assert!(events(&outs, &o).is_empty());

    f[0].send(&mut core, &notify(DataRange::GLOBAL, vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(events(&outs, &f[2]).len(), 1);
    assert_eq!(events(&outs, &o).len(), 1);

    let t = f[0].send(&mut core, &notify(DataRange::PROC_LOCAL, vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert_eq!(
        frames_to(&outs, f[1].conn).len() + frames_to(&outs, o.conn).len(),
        0
    );
}

#[test]
fn a_late_registrant_gets_the_cached_event_once_without_its_range() {
    let now = Instant::now();
    let (mut core, mut f) = job(3, &[None, Some(reg(&[], vec![])), None]);
    f[0].send(&mut core, &notify(DataRange::SESSION, vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(events(&outs, &f[1]).len(), 1);
    let t = f[2].send(&mut core, &reg(&[CODE], vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], t, Command::RegEvents), 0);
    let ev = events(&outs, &f[2]);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].range, None);
    assert_eq!(ev[0].source, Proc::new("job", 0));
    // Rank 1 had it already; registering again replays nothing.
    f[1].send(&mut core, &reg(&[CODE], vec![]), now);
    assert!(events(&drain(&mut core), &f[1]).is_empty());
    f[2].send(&mut core, &reg(&[], vec![]), now);
    assert!(events(&drain(&mut core), &f[2]).is_empty());
    // No cache with pmix.evnocache.
    let other = Status(-3008);
    let nc = Request::Notify(Notify {
        status: other,
        range: DataRange::SESSION,
        info: vec![Info::new("pmix.evnocache", true)],
    });
    f[0].send(&mut core, &nc, now);
    drain(&mut core);
    f[2].send(&mut core, &reg(&[other], vec![]), now);
    assert!(events(&drain(&mut core), &f[2]).is_empty());
}

#[test]
fn deregistering_stops_delivery_and_is_never_answered() {
    let now = Instant::now();
    let (mut core, mut f) = job(2, &[None, Some(reg(&[CODE], vec![]))]);
    f[1].send(
        &mut core,
        &Request::DeregEvents(DeregEvents { codes: vec![CODE] }),
        now,
    );
    assert!(drain(&mut core).is_empty(), "no reply to DEREGEVENTS");
    f[0].send(&mut core, &notify(DataRange::LOCAL, vec![]), now);
    assert!(events(&drain(&mut core), &f[1]).is_empty());
    f[1].send(&mut core, &reg(&[], vec![]), now);
    drain(&mut core);
    let dd = DeregEvents {
        codes: vec![DeregEvents::DEFAULT_HANDLER],
    };
    f[1].send(&mut core, &Request::DeregEvents(dd), now);
    assert!(drain(&mut core).is_empty());
    f[0].send(&mut core, &notify(DataRange::LOCAL, vec![]), now);
    // Only the cache replay rule could deliver; live delivery must not.
    assert!(events(&drain(&mut core), &f[1]).is_empty());
}

#[test]
fn an_affected_proc_filter_limits_what_a_handler_gets() {
    let now = Instant::now();
    let filt = vec![Info::new("pmix.evproc", Proc::new("job", 0))];
    let (mut core, mut f) = job(3, &[None, None, Some(reg(&[CODE], filt))]);
    f[1].send(&mut core, &notify(DataRange::LOCAL, vec![]), now);
    assert!(
        events(&drain(&mut core), &f[2]).is_empty(),
        "no affected proc"
    );
    let aff = vec![Info::new("pmix.evproc", Proc::new("job", 0))];
    f[1].send(&mut core, &notify(DataRange::LOCAL, aff), now);
    assert_eq!(events(&drain(&mut core), &f[2]).len(), 1);
}

#[test]
fn a_lost_rank_raises_proc_aborted_to_registered_handlers() {
    let now = Instant::now();
    let (mut core, f) = job(
        3,
        &[
            None,
            Some(reg(&[], vec![])),
            Some(reg(&[PROC_ABORTED], vec![])),
        ],
    );
    core.closed(f[0].conn, now);
    let outs = drain(&mut core);
    for p in [1, 2] {
        let ev = events(&outs, &f[p]);
        assert_eq!(ev.len(), 1, "rank {p}");
        assert_eq!(ev[0].status, PROC_ABORTED);
        assert_eq!(ev[0].source, Proc::new("srv", 0));
        let who = ev[0].info.iter().find(|i| i.key == "pmix.evproc").unwrap();
        assert_eq!(who.value, Value::Proc(Proc::new("job", 0)));
    }
    core.proc_exited("job", 1, 3, now);
    let outs = drain(&mut core);
    let ev = events(&outs, &f[2]);
    assert_eq!(ev.len(), 1);
    let code = ev[0]
        .info
        .iter()
        .find(|i| i.key == "pmix.exit.code")
        .unwrap();
    assert_eq!(code.value, Value::Int(3));
}

fn publish(info: Vec<Info>) -> Request {
    Request::Publish(Publish {
        uid: Uint32(UID),
        info,
    })
}

fn lookup(keys: &[&str], info: Vec<Info>) -> Request {
    Request::Lookup(Lookup {
        uid: Uint32(UID),
        keys: keys.iter().map(|k| WStr::from(*k)).collect(),
        info,
    })
}

#[test]
fn publish_lookup_and_unpublish() {
    let now = Instant::now();
    let (mut core, mut f) = job(2, &[None, None]);
    let t = f[0].send(&mut core, &publish(vec![Info::new("svc", "port-1")]), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::PublishNb), 0);
    let t = f[1].send(&mut core, &publish(vec![Info::new("svc", "again")]), now);
    assert_eq!(status(&drain(&mut core), &f[1], t, Command::PublishNb), -53);
    let t = f[1].send(&mut core, &lookup(&["svc", "absent"], vec![]), now);
    let outs = drain(&mut core);
    let Reply::Lookup(r) = reply(&outs, &f[1], t, Command::LookupNb) else {
        panic!()
    };
    assert_eq!(r.data.len(), 1);
    assert_eq!(r.data[0].proc, Proc::new("job", 0));
    assert_eq!(r.data[0].value, Value::from("port-1"));
    let t = f[1].send(&mut core, &lookup(&["absent"], vec![]), now);
    assert_eq!(
        status(&drain(&mut core), &f[1], t, Command::LookupNb),
        Status::ERR_NOT_FOUND.0
    );
    // Unpublish by another rank removes nothing; by the publisher, the key.
    let unp = |keys: &[&str]| {
        Request::Unpublish(Lookup {
            uid: Uint32(UID),
            keys: keys.iter().map(|k| WStr::from(*k)).collect(),
            info: vec![],
        })
    };
    let t = f[1].send(&mut core, &unp(&["svc"]), now);
    assert_eq!(status(&drain(&mut core), &f[1], t, Command::UnpublishNb), 0);
    let t = f[1].send(&mut core, &lookup(&["svc"], vec![]), now);
    assert!(matches!(
        reply(&drain(&mut core), &f[1], t, Command::LookupNb),
        Reply::Lookup(_)
    ));
    let t = f[0].send(&mut core, &unp(&[]), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::UnpublishNb), 0);
    let t = f[1].send(&mut core, &lookup(&["svc"], vec![]), now);
    assert_eq!(
        status(&drain(&mut core), &f[1], t, Command::LookupNb),
        Status::ERR_NOT_FOUND.0
    );
}

#[test]
fn a_waiting_lookup_is_answered_by_the_publish_or_its_timeout() {
    let now = Instant::now();
    let (mut core, mut f) = job(2, &[None, None]);
    let wait = vec![
        Info::new("pmix.wait", true),
        Info::new("pmix.timeout", Value::Int(4)),
    ];
    let t = f[1].send(&mut core, &lookup(&["k"], wait.clone()), now);
    assert!(drain(&mut core).is_empty());
    f[0].send(&mut core, &publish(vec![Info::new("k", 1u32)]), now);
    let outs = drain(&mut core);
    assert!(matches!(
        reply(&outs, &f[1], t, Command::LookupNb),
        Reply::Lookup(_)
    ));
    let t = f[1].send(&mut core, &lookup(&["never"], wait), now);
    core.tick(now + Duration::from_secs(4));
    assert_eq!(status(&drain(&mut core), &f[1], t, Command::LookupNb), -24);
}

#[test]
fn pmix_wait_counts_keys_and_zero_waits_for_all_of_them() {
    // PMIX_WAIT is an int: how many of the keys to wait for, 0 meaning all (what
    // OpenPMIx's pubi example passes).
    let now = Instant::now();
    let (mut core, mut f) = job(2, &[None, None]);
    let wait = |n: i32| vec![Info::new("pmix.wait", Value::Int(n))];
    let all = f[1].send(&mut core, &lookup(&["a", "b"], wait(0)), now);
    let one = f[1].send(&mut core, &lookup(&["a", "b"], wait(1)), now);
    assert!(drain(&mut core).is_empty(), "both held");
    f[0].send(&mut core, &publish(vec![Info::new("a", 1u32)]), now);
    let outs = drain(&mut core);
    let Reply::Lookup(r) = reply(&outs, &f[1], one, Command::LookupNb) else {
        panic!("the lookup waiting for one key is answered")
    };
    assert_eq!(r.data.len(), 1);
    assert!(
        no_reply(&outs, &f[1], all),
        "the one waiting for all still waits"
    );
    f[0].send(&mut core, &publish(vec![Info::new("b", 2u32)]), now);
    let outs = drain(&mut core);
    let Reply::Lookup(r) = reply(&outs, &f[1], all, Command::LookupNb) else {
        panic!("answered once both are published")
    };
    assert_eq!(r.data.len(), 2);
}

#[test]
fn query_answers_namespaces_and_job_size_and_nothing_else() {
    let now = Instant::now();
    let (mut core, mut f) = job(2, &[None, None]);
    let q = |keys: &[&str], quals: Vec<Info>| {
        Request::Query(QueryInfo {
            queries: vec![Query {
                keys: keys.iter().map(|k| WStr::from(*k)).collect(),
                qualifiers: quals,
            }],
        })
    };
    let t = f[0].send(
        &mut core,
        &q(&["pmix.qry.ns", "pmix.job.size"], vec![]),
        now,
    );
    let outs = drain(&mut core);
    let Reply::Query(r) = reply(&outs, &f[0], t, Command::Query) else {
        panic!()
    };
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(r.info[0].value, Value::from("job"));
    assert_eq!(r.info[1].value, Value::Uint32(2));
    let quals = vec![Info::new("pmix.nspace", "nope")];
    let t = f[0].send(&mut core, &q(&["pmix.job.size"], quals), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::Query),
        Status::ERR_NOT_SUPPORTED.0
    );
    let t = f[0].send(&mut core, &q(&["pmix.qry.weird"], vec![]), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::Query),
        Status::ERR_NOT_SUPPORTED.0
    );
}

#[test]
fn job_control_accepts_cleanup_registrations_and_the_jobs_own_declarations_only() {
    let now = Instant::now();
    let (mut core, mut f) = job(1, &[None]);
    let jc = |key: &str| {
        Request::JobControl(JobControl {
            targets: vec![],
            directives: vec![
                Info::new(key, "/tmp/x"),
                Info::new("pmix.clnup.recurse", true),
            ],
        })
    };
    let t = f[0].send(&mut core, &jc("pmix.reg.cleanupdir"), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::JobControl), 0);
    let t = f[0].send(&mut core, &jc("pmix.reg.cleanup"), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::JobControl), 0);
    let t = f[0].send(&mut core, &jc("pmix.jctrl.preempt"), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::JobControl), 0);
    let t = f[0].send(&mut core, &jc("pmix.jctrl.kill"), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::JobControl),
        Status::ERR_NOT_SUPPORTED.0
    );
    let _ = Core::new(CoreConfig::new("s", 0, "h", 0, 0));
}

#[test]
fn an_abort_tells_the_others_at_once_and_only_once() {
    let now = Instant::now();
    let (mut core, mut f) = job(3, &[None, Some(reg(&[], vec![])), None]);
    let abort = Request::Abort(pmix_wire::msg::Abort {
        status: Status(5),
        message: None,
        procs: vec![],
    });
    let t = f[0].send(&mut core, &abort, now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Abort), 0);
    let ev = events(&outs, &f[1]);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].status, PROC_ABORTED);
    let code = ev[0]
        .info
        .iter()
        .find(|i| i.key == "pmix.exit.code")
        .unwrap();
    assert_eq!(code.value, Value::Int(5));
    // Its death later is a loss for the launcher, not a second event.
    core.closed(f[0].conn, now);
    let outs = drain(&mut core);
    assert!(events(&outs, &f[1]).is_empty());
    assert!(outs.contains(&pmix::server::core::Output::Host(
        pmix::server::core::Upcall::Lost {
            nspace: "job".into(),
            rank: 0
        }
    )));
}

#[test]
fn the_launcher_can_raise_an_event_of_its_own() {
    let (mut core, f) = job(2, &[Some(reg(&[Status(-3)], vec![])), None]);
    core.raise_event(
        -3,
        None,
        vec![Info::new("why", "release")],
        DataRange::SESSION,
    );
    let outs = drain(&mut core);
    let ev = events(&outs, &f[0]);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].source, Proc::new("srv", 0));
    assert!(events(&outs, &f[1]).is_empty());
    // Cached: a later registrant gets it.
    let mut f1 = f.into_iter().nth(1).unwrap();
    f1.send(&mut core, &reg(&[Status(-3)], vec![]), Instant::now());
    assert_eq!(events(&drain(&mut core), &f1).len(), 1);
}

#[test]
fn cached_events_are_bounded_by_bytes_and_go_with_their_notifier() {
    let now = Instant::now();
    let set = |c: &mut CoreConfig| {
        c.max_cached_event_bytes = 1 << 20;
        c.max_event_bytes = 4 << 20;
    };
    let (mut core, mut f) = job_configured(set, 3, &[]);
    // 64 events of 256 KiB, nobody registered: 16 MiB notified, at most 1 MiB kept.
    for i in 0..64u32 {
        let info = vec![
            Info::new("demo.seq", i),
            Info::new(
                "demo.blob",
                Value::ByteObject(pmix_wire::ByteObject(vec![7; 256 << 10])),
            ),
        ];
        let t = f[0].send(&mut core, &notify(DataRange::GLOBAL, info), now);
        let outs = drain(&mut core);
        assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
        let (n, bytes) = core.cached_events();
        assert!(bytes <= 1 << 20, "event {i}: {n} kept, {bytes} bytes");
    }
    let (n, _) = core.cached_events();
    assert!((1..=4).contains(&n), "{n} kept");
    // An event larger than the bound reaches a registered peer but is not kept.
    let t = f[2].send(&mut core, &reg(&[CODE], vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], t, Command::RegEvents), 0);
    let replayed: Vec<u32> = events(&outs, &f[2])
        .iter()
        .filter_map(|e| e.info.iter().find(|i| i.key == "demo.seq"))
        .filter_map(|i| match i.value {
            Value::Uint32(u) => Some(u),
            _ => None,
        })
        .collect();
    assert_eq!(
        replayed,
        (64 - n as u32..64).collect::<Vec<_>>(),
        "the newest are kept"
    );
    let big = vec![Info::new(
        "demo.blob",
        Value::ByteObject(pmix_wire::ByteObject(vec![7; 2 << 20])),
    )];
    let t = f[1].send(&mut core, &notify(DataRange::GLOBAL, big), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[1], t, Command::Notify), 0);
    assert_eq!(events(&outs, &f[2]).len(), 1, "delivered");
    assert_eq!(core.cached_events().0, n, "not kept");
    // The notifier leaves: what it notified goes with it (what stays is the
    // server's own PMIX_ERR_PROC_ABORTED about it, a few bytes).
    core.closed(0, now);
    drain(&mut core);
    let (n, bytes) = core.cached_events();
    assert_eq!(n, 1);
    assert!(bytes < 256, "{bytes} bytes kept");
}

#[test]
fn a_notify_larger_than_max_event_bytes_is_refused_and_reaches_nobody() {
    let now = Instant::now();
    let dflt = Some(reg(&[], vec![]));
    let set = |c: &mut CoreConfig| c.max_event_bytes = 64 << 10;
    let (mut core, mut f) = job_configured(set, 3, &[None, dflt.clone(), dflt]);
    let blob = |len: usize| {
        vec![Info::new(
            "demo.blob",
            Value::ByteObject(pmix_wire::ByteObject(vec![3; len])),
        )]
    };
    let t = f[0].send(&mut core, &notify(DataRange::GLOBAL, blob(65 << 10)), now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &f[0], t, Command::Notify),
        Status::ERR_OUT_OF_RESOURCE.0
    );
    assert!(events(&outs, &f[1]).is_empty() && events(&outs, &f[2]).is_empty());
    assert_eq!(core.cached_events().0, 0, "not kept either");
    let t = f[0].send(&mut core, &notify(DataRange::GLOBAL, blob(60 << 10)), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert_eq!(events(&outs, &f[1]).len() + events(&outs, &f[2]).len(), 2);
}

#[test]
fn a_cached_event_is_dropped_once_its_range_has_been_served() {
    let now = Instant::now();
    // 4 ranks; rank 1 registered already, ranks 2 and 3 not yet.
    let (mut core, mut f) = job(4, &[None, Some(reg(&[CODE], vec![])), None, None]);
    let custom = |ranks: &[u32]| {
        let procs = ranks
            .iter()
            .map(|r| Value::Proc(Proc::new("job", *r)))
            .collect();
        vec![Info::new(
            "pmix.evrange",
            Value::DataArray(DataArray::new(DataType::Proc, procs).unwrap()),
        )]
    };
    // To ranks 1 and 2: rank 1 has it at once, rank 2 is still to serve.
    let t = f[0].send(&mut core, &notify(DataRange::CUSTOM, custom(&[1, 2])), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert_eq!(events(&outs, &f[1]).len(), 1);
    assert_eq!(core.cached_events().0, 1, "rank 2 waits for it");
    // To rank 1 only: served at once, never kept.
    let t = f[0].send(&mut core, &notify(DataRange::CUSTOM, custom(&[1])), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert_eq!(
        core.cached_events().0,
        1,
        "an event served at once is not kept"
    );
    // The namespace: ranks 2 and 3 wait for it.
    let t = f[0].send(&mut core, &notify(DataRange::NAMESPACE, vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert_eq!(events(&outs, &f[1]).len(), 1);
    assert_eq!(core.cached_events().0, 2);
    // Rank 2 registers: it has both; the CUSTOM one has been served and goes.
    let t = f[2].send(&mut core, &reg(&[CODE], vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], t, Command::RegEvents), 0);
    assert_eq!(events(&outs, &f[2]).len(), 2);
    assert_eq!(
        core.cached_events().0,
        1,
        "the namespace's still waits for rank 3"
    );
    // Rank 3 leaves without registering: nobody is left, the event goes; what
    // stays is the server's own PMIX_ERR_PROC_ABORTED about rank 3 (GLOBAL: open).
    core.closed(3, now);
    let outs = drain(&mut core);
    assert!(events(&outs, &f[3]).is_empty());
    let (n, bytes) = core.cached_events();
    assert_eq!(n, 1, "only the loss of rank 3 is kept");
    assert!(bytes < 512, "{bytes} bytes kept");
    // A GLOBAL event stays for processes yet to come.
    let t = f[0].send(&mut core, &notify(DataRange::GLOBAL, vec![]), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::Notify), 0);
    assert_eq!(core.cached_events().0, 2);
}

/// Whether `f` finds `key` (a lookup answered with data).
fn finds(core: &mut Core, f: &mut Fake, key: &str) -> bool {
    let now = Instant::now();
    let t = f.send(core, &lookup(&[key], vec![]), now);
    matches!(
        reply(&drain(core), f, t, Command::LookupNb),
        Reply::Lookup(_)
    )
}

#[test]
fn one_publisher_cannot_fill_the_servers_published_data_and_its_proc_data_goes_with_it() {
    let now = Instant::now();
    let set = |c: &mut CoreConfig| {
        c.max_published_per_proc = 100;
        c.max_published = 150;
    };
    let (mut core, mut f) = job_configured(set, 3, &[]);
    let keys = |from: u32, n: u32, persist: Option<u8>| {
        let mut v: Vec<Info> = (from..from + n)
            .map(|i| Info::new(format!("k{i}").as_str(), i))
            .collect();
        if let Some(p) = persist {
            v.push(Info::new("pmix.persist", Value::Persist(p)));
        }
        publish(v)
    };
    // The hostile one: 100 keys, then one more is refused and stores nothing.
    let t = f[0].send(&mut core, &keys(0, 100, Some(2)), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::PublishNb), 0);
    let t = f[0].send(&mut core, &keys(100, 1, None), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::PublishNb),
        Status::ERR_OUT_OF_RESOURCE.0
    );
    assert!(!finds(&mut core, &mut f[1], "k100"));
    // Another's publish still succeeds.
    let t = f[1].send(&mut core, &keys(1000, 10, None), now);
    assert_eq!(status(&drain(&mut core), &f[1], t, Command::PublishNb), 0);
    // PERSIST_PROC (2): gone when its publisher leaves; the default (SESSION) stays.
    core.closed(0, now);
    drain(&mut core);
    assert!(!finds(&mut core, &mut f[1], "k0"));
    assert!(finds(&mut core, &mut f[2], "k1000"));
    let t = f[2].send(&mut core, &keys(2000, 100, None), now);
    assert_eq!(status(&drain(&mut core), &f[2], t, Command::PublishNb), 0);
}

#[test]
fn published_bytes_are_bounded_per_publisher_and_in_all() {
    let now = Instant::now();
    let set = |c: &mut CoreConfig| {
        c.max_published_bytes_per_proc = 1 << 20;
        c.max_published_bytes = 3 << 19;
    };
    let (mut core, mut f) = job_configured(set, 3, &[]);
    let blob = |key: &str, len: usize, persist: u8| {
        publish(vec![
            Info::new(key, Value::ByteObject(pmix_wire::ByteObject(vec![9; len]))),
            Info::new("pmix.persist", Value::Persist(persist)),
        ])
    };
    // Rank 0: 600 KiB, then 600 KiB more is over its 1 MiB and stores nothing.
    let t = f[0].send(&mut core, &blob("a", 600 << 10, 2), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::PublishNb), 0);
    let t = f[0].send(&mut core, &blob("b", 600 << 10, 2), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::PublishNb),
        Status::ERR_OUT_OF_RESOURCE.0
    );
    assert!(!finds(&mut core, &mut f[1], "b"));
    // Rank 1: 600 KiB is over the 1.5 MiB in all (1.2 MiB); 100 KiB fits.
    let t = f[1].send(&mut core, &blob("c", 1000 << 10, 4), now);
    assert_eq!(
        status(&drain(&mut core), &f[1], t, Command::PublishNb),
        Status::ERR_OUT_OF_RESOURCE.0
    );
    let t = f[1].send(&mut core, &blob("d", 100 << 10, 4), now);
    assert_eq!(status(&drain(&mut core), &f[1], t, Command::PublishNb), 0);
    // Rank 0 leaves: its PROC data goes, and its bytes are free again.
    core.closed(0, now);
    drain(&mut core);
    let t = f[2].send(&mut core, &blob("e", 1000 << 10, 4), now);
    assert_eq!(status(&drain(&mut core), &f[2], t, Command::PublishNb), 0);
    assert!(finds(&mut core, &mut f[1], "e"));
}

#[test]
fn first_read_data_goes_after_its_first_lookup_and_app_data_with_the_last_rank() {
    let now = Instant::now();
    let (mut core, mut f) = job(3, &[None, None, None]);
    let one = |k: &str, p: u8| {
        publish(vec![
            Info::new(k, 1u32),
            Info::new("pmix.persist", Value::Persist(p)),
        ])
    };
    let t = f[0].send(&mut core, &one("once", 1), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::PublishNb), 0);
    let t = f[0].send(&mut core, &one("app", 3), now);
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::PublishNb), 0);
    assert!(finds(&mut core, &mut f[1], "once"));
    assert!(!finds(&mut core, &mut f[2], "once"), "read once already");
    // APP (3): stays while a rank of its namespace is left.
    core.closed(0, now);
    core.closed(1, now);
    drain(&mut core);
    assert!(finds(&mut core, &mut f[2], "app"));
    core.closed(2, now);
    core.add_namespace(NamespaceSpec::single_node("other", 1, UID, GID))
        .unwrap();
    let mut other = connect(&mut core, 9, "other", 0, now);
    drain(&mut core);
    assert!(
        !finds(&mut core, &mut other, "app"),
        "the last rank of its app left"
    );
}
