//! The real client (`pmix::Client`) against the real server core, in memory
//! (`pmix::sim`): no socket, no thread, the job's own clock. One test per call
//! family, and a job of 1,000 clients.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pmix::client::GroupOutcome;
use pmix::server::core::{Core, CoreConfig, NamespaceSpec, Upcall};
use pmix::sim::{HOST, Job};
use pmix::wire::{DataRange, Event, Info, Proc, Query, Rank, Scope, Value, WStr};
use pmix::{Client, Error, PmixError, Status};

const NS: &str = "mem.job";

/// A result slot a completion fills.
type Slot<T> = Arc<Mutex<Option<Result<T, Error>>>>;

fn slot<T>() -> Slot<T> {
    Arc::new(Mutex::new(None))
}

/// A completion that fills `s`.
fn fill<T: Send + 'static>(s: &Slot<T>) -> Box<dyn FnOnce(Result<T, Error>) + Send> {
    let s = Arc::clone(s);
    Box::new(move |r| *s.lock().unwrap() = Some(r))
}

/// What `s` holds: panics if the completion has not run.
fn taken<T>(s: &Slot<T>) -> Result<T, Error> {
    s.lock()
        .unwrap()
        .take()
        .expect("the completion has not run")
}

fn pending<T>(s: &Slot<T>) -> bool {
    s.lock().unwrap().is_none()
}

/// The events a client's sink received.
type Seen = Arc<Mutex<Vec<Event>>>;

fn job(n: u32) -> (Job, Vec<Client>, Vec<Seen>) {
    let job = Job::single_node(NS, n).unwrap();
    let mut clients = Vec::new();
    let mut seen = Vec::new();
    for r in 0..n {
        let s: Seen = Arc::default();
        let sink = Arc::clone(&s);
        clients.push(
            job.client(NS, r, move |ev| sink.lock().unwrap().push(ev))
                .unwrap(),
        );
        seen.push(s);
    }
    (job, clients, seen)
}

/// Registers a default handler (every code) for each client, as the instance does.
fn listen(clients: &[Client]) {
    for c in clients {
        let r = slot();
        c.register_events_then(&[], &[], fill(&r)).unwrap();
        taken(&r).unwrap();
    }
}

fn status_of(e: &Error) -> i32 {
    e.status().0
}

fn codes(seen: &Seen) -> Vec<i32> {
    seen.lock().unwrap().iter().map(|e| e.status.0).collect()
}

fn all(n: u32) -> Vec<Proc> {
    (0..n).map(|r| Proc::new(NS, r)).collect()
}

#[test]
fn connect_loads_job_information_answered_from_the_store() {
    let (job, clients, _) = job(4);
    let c = &clients[2];
    assert_eq!(c.proc_id().rank, 2);
    let size = c.get(NS, Rank::WILDCARD.0, "pmix.job.size", &[]).unwrap();
    assert_eq!(size, Value::Uint32(4));
    let connected = job
        .upcalls()
        .iter()
        .filter(|e| matches!(e, Upcall::Connected { .. }))
        .count();
    assert_eq!(connected, 4);
}

#[test]
fn put_commit_fence_then_every_peer_value_is_gotten() {
    let (job, clients, _) = job(4);
    for (r, c) in clients.iter().enumerate() {
        c.put(Scope::GLOBAL, "mem.key", Value::Uint32(r as u32 * 10))
            .unwrap();
        c.commit().unwrap();
    }
    let fences: Vec<Slot<()>> = clients.iter().map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&fences) {
        c.fence_then(&[], &[Info::new("pmix.collect", true)], fill(s))
            .unwrap();
    }
    job.pump();
    for s in &fences {
        taken(s).unwrap();
    }
    for c in &clients {
        for r in 0..4 {
            assert_eq!(c.get(NS, r, "mem.key", &[]).unwrap(), Value::Uint32(r * 10));
        }
    }
}

#[test]
fn a_fence_completes_only_when_the_last_participant_enters() {
    let (job, clients, _) = job(3);
    let fences: Vec<Slot<()>> = clients.iter().map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&fences).take(2) {
        c.fence_then(&[], &[], fill(s)).unwrap();
    }
    job.pump();
    assert!(fences.iter().all(pending));
    clients[2].fence_then(&[], &[], fill(&fences[2])).unwrap();
    job.pump();
    assert!(fences.iter().all(|s| taken(s).is_ok()));
}

#[test]
fn a_get_is_held_until_the_peer_commits() {
    let (job, clients, _) = job(2);
    let got = slot();
    clients[0]
        .get_then(NS, 1, "late.key", &[], fill(&got))
        .unwrap();
    job.pump();
    assert!(pending(&got));
    clients[1]
        .put(Scope::GLOBAL, "late.key", Value::string("here"))
        .unwrap();
    clients[1].commit().unwrap();
    assert_eq!(taken(&got).unwrap(), Value::string("here"));
}

#[test]
fn a_fence_times_out_on_the_jobs_clock() {
    let (job, clients, _) = job(2);
    let f = slot();
    clients[0]
        .fence_then(&[], &[Info::new("pmix.timeout", 5i32)], fill(&f))
        .unwrap();
    job.advance(Duration::from_secs(4));
    assert!(pending(&f));
    job.advance(Duration::from_secs(2));
    assert_eq!(status_of(&taken(&f).unwrap_err()), Status::ERR_TIMEOUT.0);
}

#[test]
fn a_rank_that_dies_fails_the_fence_of_the_others_and_they_hear_of_it() {
    let (job, mut clients, seen) = job(3);
    listen(&clients);
    let f0 = slot();
    clients[0].fence_then(&[], &[], fill(&f0)).unwrap();
    job.pump();
    drop(clients.remove(2)); // rank 2: its connection closes without FINALIZE
    job.pump();
    let e = taken(&f0).unwrap_err();
    assert_ne!(status_of(&e), 0, "{e}");
    assert!(
        job.upcalls()
            .iter()
            .any(|e| matches!(e, Upcall::Lost { rank: 2, .. }))
    );
    // The survivors' default handlers hear that rank 2 ended.
    for s in &seen[..2] {
        let got = s.lock().unwrap().clone();
        assert!(
            got.iter()
                .any(|e| e.status.0 < 0
                    && e.info.iter().any(|i| format!("{:?}", i.value).contains(NS))),
            "{got:?}"
        );
    }
}

#[test]
fn events_reach_registered_handlers_and_notify_is_answered() {
    let (job, clients, seen) = job(3);
    const CODE: i32 = -2001;
    let reg = slot();
    clients[1]
        .register_events_then(&[CODE], &[], fill(&reg))
        .unwrap();
    taken(&reg).unwrap();
    let n = slot();
    clients[0]
        .notify_then(
            CODE,
            DataRange::NAMESPACE,
            &[Info::new("mem.note", 7u32)],
            fill(&n),
        )
        .unwrap();
    job.pump();
    taken(&n).unwrap();
    let got = seen[1].lock().unwrap().clone();
    let ev = got.iter().find(|e| e.status.0 == CODE).expect("no event");
    assert_eq!(ev.source, Proc::new(NS, 0));
    assert!(ev.info.iter().any(|i| i.key == "mem.note"));
    assert!(!codes(&seen[2]).contains(&CODE), "rank 2 never registered");
}

#[test]
fn group_construct_gives_every_member_one_context_id_then_leave_and_destruct() {
    let (job, clients, seen) = job(4);
    listen(&clients);
    let outs: Vec<Slot<GroupOutcome>> = clients.iter().map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&outs) {
        c.group_construct_then(
            "mem.grp",
            &all(4),
            &[Info::new("pmix.grp.actxid", true)],
            fill(s),
        )
        .unwrap();
    }
    job.pump();
    let got: Vec<GroupOutcome> = outs.iter().map(|s| taken(s).unwrap()).collect();
    let ctx = got[0].ctxid.expect("a context id");
    assert!(got.iter().all(|g| g.ctxid == Some(ctx)));

    let left = slot();
    clients[3]
        .group_leave_then("mem.grp", &[], fill(&left))
        .unwrap();
    job.pump();
    taken(&left).unwrap();
    for s in &seen[..3] {
        assert!(codes(s).contains(&Status::GROUP_LEFT.0), "{:?}", codes(s));
    }
    let ds: Vec<Slot<()>> = (0..3).map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&ds) {
        c.group_destruct_then("mem.grp", &[], fill(s)).unwrap();
    }
    job.pump();
    assert!(ds.iter().all(|s| taken(s).is_ok()));
}

#[test]
fn leave_during_construct_counts_the_member_as_departed() {
    let (job, clients, _) = job(3);
    let outs: Vec<Slot<GroupOutcome>> = (0..2).map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&outs) {
        c.group_construct_then("mem.lv", &all(3), &[], fill(s))
            .unwrap();
    }
    job.pump();
    assert!(outs.iter().all(pending));
    let left = slot();
    clients[2]
        .group_leave_then("mem.lv", &[], fill(&left))
        .unwrap();
    job.pump();
    taken(&left).unwrap();
    for s in &outs {
        taken(s).unwrap();
    }
}

#[test]
fn lookup_with_wait_is_answered_when_the_key_is_published() {
    let (job, clients, _) = job(2);
    let look = slot();
    clients[1]
        .lookup_then(&["mem.svc"], &[Info::new("pmix.wait", true)], fill(&look))
        .unwrap();
    job.pump();
    assert!(pending(&look));
    let p = slot();
    clients[0]
        .publish_then(&[Info::new("mem.svc", Value::string("port 7"))], fill(&p))
        .unwrap();
    job.pump();
    taken(&p).unwrap();
    let data = taken(&look).unwrap();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].proc, Proc::new(NS, 0));
    let u = slot();
    clients[0]
        .unpublish_then(&["mem.svc"], &[], fill(&u))
        .unwrap();
    taken(&u).unwrap();
    let again = slot();
    clients[1]
        .lookup_then(&["mem.svc"], &[], fill(&again))
        .unwrap();
    assert_eq!(
        status_of(&taken(&again).unwrap_err()),
        Status::ERR_NOT_FOUND.0
    );
}

#[test]
fn a_query_of_namespaces_is_answered_by_the_server_core() {
    let (_job, clients, _) = job(1);
    let q = slot();
    clients[0]
        .query_then(
            &[Query {
                keys: vec![WStr::from("pmix.qry.ns")],
                qualifiers: Vec::new(),
            }],
            fill(&q),
        )
        .unwrap();
    let info = taken(&q).unwrap();
    let ns = info
        .iter()
        .find(|i| i.key == "pmix.qry.ns")
        .expect("pmix.qry.ns");
    assert!(format!("{:?}", ns.value).contains(NS), "{ns:?}");
}

#[test]
fn distances_are_relayed_to_the_server_and_answered_from_its_topology() {
    let xml = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/hwloc-xml/24em64t-2n6c2t-pci.xml"
    );
    let (uid, gid) = pmix::server::net::effective_ids();
    let mut cfg = CoreConfig::new("srv", 0, HOST, uid, gid);
    cfg.service = Some(Arc::new(
        pmix::Service::new(format!("xml:{xml}"), Some(HOST.into())).unwrap(),
    ));
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node(NS, 1, uid, gid))
        .unwrap();
    let job = Job::new(core, Instant::now());
    let c = job.client(NS, 0, |_| {}).unwrap();
    let cpuset = pmix_core::CpuSet::parse_list("0-5").unwrap();
    let d = slot();
    c.distances_then(
        &pmix::DistanceRequest {
            topology: None,
            cpuset: Some(&cpuset),
            types: None,
            ids: &[],
            origin: None,
        },
        Some(&cpuset),
        fill(&d),
    )
    .unwrap();
    let rows = taken(&d).unwrap();
    assert!(!rows.is_empty());
}

#[test]
fn the_rank_state_exchange_gives_every_survivor_the_same_contributions() {
    let (job, mut clients, _) = job(4);
    // Rank 3 dies before the exchange; the FT fence completes on the survivors.
    drop(clients.remove(3));
    job.pump();
    let got: Vec<Slot<Option<pmix::client::Contributions>>> =
        clients.iter().map(|_| slot()).collect();
    for (r, (c, s)) in clients.iter().zip(&got).enumerate() {
        c.fence_contributions_then(
            &all(4),
            &[Info::new(pmix::server::core::FT_KEY, true)],
            vec![r as u8; 3],
            fill(s),
        )
        .unwrap();
    }
    job.pump();
    let first = taken(&got[0]).unwrap().expect("our server collects");
    assert_eq!(first.len(), 3);
    for s in &got[1..] {
        assert_eq!(taken(s).unwrap().unwrap(), first);
    }
}

#[test]
fn a_tool_gets_an_identity_from_the_server_and_queries_it() {
    let (job, _clients, _) = job(1);
    let tool = job.tool(|_| {}).unwrap();
    assert!(!tool.proc_id().nspace.as_bytes().is_empty());
    assert_ne!(tool.proc_id().nspace, NS);
    let q = slot();
    tool.query_then(
        &[Query {
            keys: vec![WStr::from("pmix.qry.ns")],
            qualifiers: Vec::new(),
        }],
        fill(&q),
    )
    .unwrap();
    taken(&q).unwrap();
}

#[test]
fn abort_tells_the_launcher_and_finalize_closes_cleanly() {
    let (job, clients, _) = job(2);
    clients[1].finalize().unwrap();
    assert!(
        job.upcalls()
            .iter()
            .any(|e| matches!(e, Upcall::Finalized { rank: 1, .. }))
    );
    clients[0].abort(3, Some("bye"), &[]).unwrap();
    assert!(
        job.upcalls()
            .iter()
            .any(|e| matches!(e, Upcall::Aborted { .. }))
    );
    // After finalize the connection refuses requests.
    let f = slot();
    let e = clients[1].fence_then(&[], &[], fill(&f)).unwrap_err();
    assert!(matches!(e, Error::Unreach(_)), "{e}");
}

#[test]
fn a_job_of_a_thousand_clients_puts_fences_and_gets() {
    const N: u32 = 1000;
    let t = Instant::now();
    let (job, clients, _) = job(N);
    let connected = t.elapsed();
    for (r, c) in clients.iter().enumerate() {
        c.put(Scope::GLOBAL, "k", Value::Uint32(r as u32)).unwrap();
        let s = slot();
        c.commit_then(fill(&s)).unwrap();
        taken(&s).unwrap();
    }
    let fences: Vec<Slot<()>> = clients.iter().map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&fences) {
        c.fence_then(&[], &[], fill(s)).unwrap();
    }
    job.pump();
    assert!(fences.iter().all(|s| taken(s).is_ok()));
    for (r, c) in clients.iter().enumerate() {
        let peer = (r as u32 + 1) % N;
        assert_eq!(c.get(NS, peer, "k", &[]).unwrap(), Value::Uint32(peer));
    }
    eprintln!(
        "1,000 clients in memory: connected in {connected:?}, put/commit/fence/get in {:?}",
        t.elapsed()
    );
}

/// A client whose event sink can reach the client itself (set once connected).
type Me = Arc<Mutex<Option<Arc<Client>>>>;

#[test]
fn invite_and_join_are_answered_from_inside_the_event_sinks() {
    use pmix::wire::{DataArray, DataType};
    const GRP: &str = "mem.invited";
    let job = Job::single_node(NS, 3).unwrap();
    let proc_range = |procs: Vec<Proc>| {
        Value::DataArray(
            DataArray::new(DataType::Proc, procs.into_iter().map(Value::Proc).collect()).unwrap(),
        )
    };
    let invitees = vec![Proc::new(NS, 1), Proc::new(NS, 2)];
    let info = vec![
        Info::new("pmix.evrange", proc_range(invitees.clone())),
        Info::new("pmix.evnondef", true),
        Info::new("pmix.grp.id", GRP),
    ];
    // The leader: each accept counts; the last one completes the group, sent from
    // inside the sink (no blocking call there: only `_then` forms).
    let leader: Me = Arc::default();
    let accepted = Arc::new(Mutex::new(0));
    let completed = slot::<()>();
    let c0 = {
        let (me, accepted, completed, info) = (
            Arc::clone(&leader),
            Arc::clone(&accepted),
            Arc::clone(&completed),
            info.clone(),
        );
        job.client(NS, 0, move |ev| {
            if ev.status != Status::GROUP_INVITE_ACCEPTED {
                return;
            }
            let mut n = accepted.lock().unwrap();
            *n += 1;
            if *n == 2 {
                let c = me.lock().unwrap().clone().unwrap();
                c.notify_then(
                    Status::GROUP_CONSTRUCT_COMPLETE.0,
                    DataRange::CUSTOM,
                    &info,
                    fill(&completed),
                )
                .unwrap();
            }
        })
        .unwrap()
    };
    *leader.lock().unwrap() = Some(Arc::new(c0));
    // The invitees accept from inside their sinks.
    let mut members = Vec::new();
    let joined: Vec<Slot<()>> = (0..2).map(|_| slot()).collect();
    for (r, done) in (1..3).zip(&joined) {
        let me: Me = Arc::default();
        let sink_me = Arc::clone(&me);
        let done = Arc::clone(done);
        let c = job
            .client(NS, r, move |ev| {
                if ev.status != Status::GROUP_INVITED {
                    return;
                }
                let c = sink_me.lock().unwrap().clone().unwrap();
                c.notify_then(
                    Status::GROUP_INVITE_ACCEPTED.0,
                    DataRange::CUSTOM,
                    &[Info::new("pmix.evrange", Value::Proc(Proc::new(NS, 0)))],
                    fill(&done),
                )
                .unwrap();
            })
            .unwrap();
        let c = Arc::new(c);
        *me.lock().unwrap() = Some(Arc::clone(&c));
        members.push(c);
    }
    let c0 = leader.lock().unwrap().clone().unwrap();
    // `pmix.evnondef`: only handlers registered for the code hear the invite.
    let regs = [(&c0, Status::GROUP_INVITE_ACCEPTED)]
        .into_iter()
        .chain(members.iter().map(|c| (c, Status::GROUP_INVITED)));
    for (c, code) in regs {
        let r = slot();
        c.register_events_then(&[code.0], &[], fill(&r)).unwrap();
        taken(&r).unwrap();
    }
    let sent = slot();
    c0.notify_then(
        Status::GROUP_INVITED.0,
        DataRange::CUSTOM,
        &info,
        fill(&sent),
    )
    .unwrap();
    job.pump();
    taken(&sent).unwrap();
    for j in &joined {
        taken(j).unwrap();
    }
    taken(&completed).unwrap();
    // The server now knows the group: a fence over its id completes for the three.
    let fences: Vec<Slot<()>> = (0..3).map(|_| slot()).collect();
    for (c, s) in std::iter::once(&c0).chain(&members).zip(&fences) {
        c.fence_then(&[Proc::new(GRP, Rank::WILDCARD.0)], &[], fill(s))
            .unwrap();
    }
    job.pump();
    for s in &fences {
        taken(s).unwrap();
    }
}

#[test]
fn leave_during_destruct_completes_it_on_the_survivors() {
    let (job, clients, _) = job(3);
    let outs: Vec<Slot<GroupOutcome>> = clients.iter().map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&outs) {
        c.group_construct_then("mem.ld", &all(3), &[], fill(s))
            .unwrap();
    }
    job.pump();
    outs.iter().for_each(|s| drop(taken(s).unwrap()));
    let ds: Vec<Slot<()>> = (0..2).map(|_| slot()).collect();
    for (c, s) in clients.iter().zip(&ds) {
        c.group_destruct_then("mem.ld", &[], fill(s)).unwrap();
    }
    job.pump();
    assert!(ds.iter().all(pending));
    let left = slot();
    clients[2]
        .group_leave_then("mem.ld", &[], fill(&left))
        .unwrap();
    job.pump();
    taken(&left).unwrap();
    assert!(ds.iter().all(|s| taken(s).is_ok()));
}

#[test]
fn the_rank_state_exchange_agrees_whichever_step_a_member_dies_at() {
    const N: u32 = 5;
    // Rank 4 dies after `k` of the others contributed (k = 0..=4), before or after
    // contributing itself.
    for k in 0..N as usize {
        for contributed in [false, true] {
            let (job, mut clients, _) = job(N);
            let got: Vec<Slot<Option<pmix::client::Contributions>>> =
                (0..N - 1).map(|_| slot()).collect();
            let ft = [Info::new(pmix::server::core::FT_KEY, true)];
            let give = |c: &Client, r: usize, s: Option<&Slot<_>>| {
                let done: Box<dyn FnOnce(Result<_, Error>) + Send> = match s {
                    Some(s) => fill(s),
                    None => Box::new(|_| {}),
                };
                c.fence_contributions_then(&all(N), &ft, vec![r as u8], done)
                    .unwrap();
            };
            for r in 0..k.min(N as usize - 1) {
                give(&clients[r], r, Some(&got[r]));
            }
            if contributed {
                give(&clients[4], 4, None);
            }
            job.pump();
            drop(clients.remove(4));
            job.pump();
            for r in k.min(N as usize - 1)..N as usize - 1 {
                give(&clients[r], r, Some(&got[r]));
            }
            job.pump();
            let first = taken(&got[0]).unwrap().expect("our server collects");
            for s in &got[1..] {
                assert_eq!(taken(s).unwrap().unwrap(), first, "k={k} {contributed}");
            }
            // Every survivor's contribution, and the dead member's if it gave one.
            let mut ranks: Vec<u32> = first.iter().map(|(p, _)| p.rank.0).collect();
            ranks.sort_unstable();
            let want: Vec<u32> = (0..4).chain(contributed.then_some(4)).collect();
            assert_eq!(ranks, want, "k={k} {contributed}");
        }
    }
}
