//! The server core's SPAWNNB (the launcher's `Upcall::Spawn` and its answer),
//! CONNECTNB and DISCONNECTNB across namespaces, driven by fake clients that speak
//! pmix-wire.

mod server_core_common;

use std::time::Instant;

use pmix::server::core::{Core, CoreConfig, HostAnswer, NamespaceSpec, Output, Provides, Upcall};
use pmix_wire::msg::{Connect, Spawn};
use pmix_wire::{App, Command, Info, Kval, Proc, Rank, Reply, Request, Status, Value, WStr};
use server_core_common::*;

fn spawn_request(maxprocs: i32, cmd: Option<&str>) -> Request {
    Request::Spawn(Spawn {
        info: vec![Info::new("pmix.notecomp", true)],
        apps: vec![App {
            cmd: cmd.map(WStr::from),
            argv: vec![WStr::from("child")],
            maxprocs,
            ..App::default()
        }],
    })
}

/// A core that spawns, with namespace "job" of 2 ranks connected.
fn spawning_core(now: Instant) -> (Core, Vec<Fake>) {
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    cfg.provides = Provides::SPAWN;
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node("job", 2, UID, GID))
        .unwrap();
    let f = (0..2)
        .map(|r| connect(&mut core, r.into(), "job", r, now))
        .collect();
    drain(&mut core);
    (core, f)
}

fn spawn_event(outs: &[Output]) -> Option<(u64, (String, u32), Vec<App>)> {
    outs.iter().find_map(|o| match o {
        Output::Host(Upcall::Spawn {
            id, parent, apps, ..
        }) => Some((*id, parent.clone(), apps.clone())),
        _ => None,
    })
}

#[test]
fn a_server_that_does_not_spawn_answers_not_supported() {
    let now = Instant::now();
    let mut core = core_with("job", 1);
    let mut f = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    let t = f.send(&mut core, &spawn_request(2, Some("prog")), now);
    let outs = drain(&mut core);
    assert!(spawn_event(&outs).is_none());
    assert_eq!(
        status(&outs, &f, t, Command::SpawnNb),
        Status::ERR_NOT_SUPPORTED.0
    );
}

#[test]
fn a_spawn_is_held_until_the_launcher_answers_with_the_new_jobs_information() {
    let now = Instant::now();
    let (mut core, mut f) = spawning_core(now);
    let t = f[0].send(&mut core, &spawn_request(2, Some("prog")), now);
    let outs = drain(&mut core);
    let (id, parent, apps) = spawn_event(&outs).expect("an Upcall::Spawn");
    assert_eq!(parent, ("job".to_string(), 0));
    assert_eq!(apps[0].maxprocs, 2);
    assert!(no_reply(&outs, &f[0], t), "held until the launcher answers");

    let mut spec = NamespaceSpec::single_node("job.1", 2, UID, GID);
    spec.job_info = vec![Kval {
        key: "pmix.parent".into(),
        value: Value::Proc(Proc::new("job", 0)),
    }];
    core.add_namespace(spec).unwrap();
    core.host_answer(id, HostAnswer::Spawn(Ok("job.1".into())), now);
    let outs = drain(&mut core);
    match reply(&outs, &f[0], t, Command::SpawnNb) {
        Reply::Spawn(r) => {
            assert_eq!(r.status, Status::SUCCESS);
            assert_eq!(r.nspace, Some(WStr::from("job.1")));
            let size = r.kvals.iter().find(|k| k.key == "pmix.job.size");
            assert_eq!(size.map(|k| k.value.as_u64()), Some(Some(2)));
            assert!(r.kvals.iter().any(|k| k.key == "pmix.parent"));
        }
        other => panic!("not a spawn reply: {other:?}"),
    }
    // A second answer to the same id is ignored.
    core.host_answer(id, HostAnswer::Spawn(Ok("job.1".into())), now);
    assert!(drain(&mut core).is_empty());
}

#[test]
fn a_failed_spawn_answers_the_launchers_status_alone() {
    let now = Instant::now();
    let (mut core, mut f) = spawning_core(now);
    let t = f[1].send(&mut core, &spawn_request(1, Some("missing")), now);
    let (id, parent, _) = spawn_event(&drain(&mut core)).unwrap();
    assert_eq!(parent.1, 1);
    core.host_answer(id, HostAnswer::Spawn(Err(Status(-190))), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[1], t, Command::SpawnNb), -190);
}

#[test]
fn a_spawn_without_a_program_or_processes_is_a_bad_param_at_once() {
    let now = Instant::now();
    let (mut core, mut f) = spawning_core(now);
    for req in [spawn_request(0, Some("prog")), spawn_request(2, None)] {
        let t = f[0].send(&mut core, &req, now);
        let outs = drain(&mut core);
        assert!(spawn_event(&outs).is_none());
        assert_eq!(
            status(&outs, &f[0], t, Command::SpawnNb),
            Status::ERR_BAD_PARAM.0
        );
    }
}

#[test]
fn a_parent_gone_before_the_answer_is_not_answered() {
    let now = Instant::now();
    let (mut core, mut f) = spawning_core(now);
    f[0].send(&mut core, &spawn_request(1, Some("prog")), now);
    let (id, _, _) = spawn_event(&drain(&mut core)).unwrap();
    core.closed(f[0].conn, now);
    drain(&mut core);
    core.add_namespace(NamespaceSpec::single_node("job.1", 1, UID, GID))
        .unwrap();
    core.host_answer(id, HostAnswer::Spawn(Ok("job.1".into())), now);
    let outs = drain(&mut core);
    assert!(frames_to(&outs, f[0].conn).is_empty());
}

fn connect_req(procs: &[(&str, u32)]) -> Connect {
    Connect {
        procs: procs.iter().map(|(n, r)| Proc::new(*n, *r)).collect(),
        info: vec![],
    }
}

#[test]
fn a_connect_across_two_jobs_completes_once_all_join_and_carries_the_other_jobs_information() {
    let now = Instant::now();
    let mut core = core_with("a", 2);
    core.add_namespace(NamespaceSpec::single_node("b", 1, UID, GID))
        .unwrap();
    let mut fa: Vec<Fake> = (0..2)
        .map(|r| connect(&mut core, r.into(), "a", r, now))
        .collect();
    let mut fb = connect(&mut core, 5, "b", 0, now);
    drain(&mut core);
    let both = [("a", Rank::WILDCARD.0), ("b", Rank::WILDCARD.0)];
    let ta0 = fa[0].send(&mut core, &Request::Connect(connect_req(&both)), now);
    let ta1 = fa[1].send(&mut core, &Request::Connect(connect_req(&both)), now);
    let outs = drain(&mut core);
    assert!(no_reply(&outs, &fa[0], ta0) && no_reply(&outs, &fa[1], ta1));
    let tb = fb.send(&mut core, &Request::Connect(connect_req(&both)), now);
    let outs = drain(&mut core);
    for (f, t, other, size) in [
        (&fa[0], ta0, "b", 1),
        (&fa[1], ta1, "b", 1),
        (&fb, tb, "a", 2),
    ] {
        match reply(&outs, f, t, Command::ConnectNb) {
            Reply::Connect(r) => {
                assert_eq!(r.status, Status::SUCCESS);
                assert_eq!(r.jobs.len(), 1, "only the other job");
                assert_eq!(r.jobs[0].nspace, WStr::from(other));
                let s = r.jobs[0].kvals.iter().find(|k| k.key == "pmix.job.size");
                assert_eq!(s.map(|k| k.value.as_u64()), Some(Some(size)));
            }
            other => panic!("not a connect reply: {other:?}"),
        }
    }
    // The disconnect is the same collective, answered with a lone status.
    let t: Vec<u32> = fa
        .iter_mut()
        .map(|f| f.send(&mut core, &Request::Disconnect(connect_req(&both)), now))
        .collect();
    let tb = fb.send(&mut core, &Request::Disconnect(connect_req(&both)), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &fa[0], t[0], Command::DisconnectNb), 0);
    assert_eq!(status(&outs, &fa[1], t[1], Command::DisconnectNb), 0);
    assert_eq!(status(&outs, &fb, tb, Command::DisconnectNb), 0);
}

#[test]
fn a_connect_with_a_lost_participant_fails_instead_of_hanging() {
    let now = Instant::now();
    let mut core = core_with("a", 2);
    let mut f: Vec<Fake> = (0..2)
        .map(|r| connect(&mut core, r.into(), "a", r, now))
        .collect();
    drain(&mut core);
    let t = f[0].send(
        &mut core,
        &Request::Connect(connect_req(&[("a", Rank::WILDCARD.0)])),
        now,
    );
    assert!(no_reply(&drain(&mut core), &f[0], t));
    core.closed(f[1].conn, now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &f[0], t, Command::ConnectNb),
        Status::ERR_LOST_CONNECTION.0
    );
}

#[test]
fn a_process_that_never_connected_and_exited_0_is_done_not_lost() {
    // A spawned program that is no PMIx client (/bin/true) ran to its end: nobody
    // hears of a loss. One that exited non-zero without connecting is lost.
    let now = Instant::now();
    let (mut core, mut f) = spawning_core(now);
    let reg = Request::RegEvents(pmix_wire::msg::RegEvents {
        codes: vec![],
        info: vec![],
    });
    f[0].send(&mut core, &reg, now);
    core.add_namespace(NamespaceSpec::single_node("job.1", 2, UID, GID))
        .unwrap();
    drain(&mut core);
    core.proc_exited("job.1", 0, 0, now);
    let outs = drain(&mut core);
    assert!(
        !outs
            .iter()
            .any(|o| matches!(o, Output::Host(Upcall::Lost { .. }))),
        "{outs:?}"
    );
    assert!(events(&outs, &f[0]).is_empty(), "no event for a clean end");
    core.proc_exited("job.1", 1, 3, now);
    let outs = drain(&mut core);
    assert!(outs.iter().any(|o| matches!(
        o,
        Output::Host(Upcall::Lost { nspace, rank: 1 }) if nspace == "job.1"
    )));
    let ev = events(&outs, &f[0]);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].status, pmix::server::core::PROC_ABORTED);
}
