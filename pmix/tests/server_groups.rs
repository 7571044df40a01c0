//! The server core's group commands (GROUP_CONSTRUCT, GROUP_DESTRUCT,
//! GROUP_LEAVE, docs/design.md §4, docs/wire.md §6.9) driven by fake pmix-wire clients:
//! context ids, both 4.2 layouts, leaves and losses during collectives, fences
//! over groups, and invite/join groups recorded from NOTIFY.
// Ranks index the fake clients on purpose.
#![allow(clippy::needless_range_loop)]

mod server_core_common;
mod server_groups_common;

use std::time::{Duration, Instant};

use pmix_wire::msg::Notify;
use pmix_wire::{Command, DataArray, DataRange, DataType, Info, Proc, Request, Status, Value};
use server_core_common::*;
use server_groups_common::*;

#[test]
fn construct_with_assign_context_id_gives_members_one_id_and_groups_different_ids() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let (tags, outs) = construct_all(&mut core, &mut f, "ga", &[0, 1, 2], &[actxid()], now);
    let ids: Vec<u64> = (0..3)
        .map(|r| {
            let (s, m, c) = construct_reply(&outs, &f[r], tags[r]);
            assert_eq!(s, 0);
            assert_eq!(m, None, "4.2.2 clients get no membership");
            c.expect("a context id")
        })
        .collect();
    assert!(ids.iter().all(|&i| i == ids[0] && i != NO_CTXID), "{ids:?}");
    let (tags, outs) = construct_all(&mut core, &mut f, "gb", &[0, 1], &[actxid()], now);
    let b0 = construct_reply(&outs, &f[0], tags[0]).2.unwrap();
    let b1 = construct_reply(&outs, &f[1], tags[1]).2.unwrap();
    assert_eq!(b0, b1);
    assert_ne!(b0, ids[0]);
    assert_ne!(b0, NO_CTXID);
}

#[test]
fn construct_without_assign_context_id_replies_size_max() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    let (tags, outs) = construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    for r in 0..2 {
        assert_eq!(
            construct_reply(&outs, &f[r], tags[r]),
            (0, None, Some(NO_CTXID))
        );
    }
}

#[test]
fn construct_waits_for_every_member() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let req = construct_req("g", &[0, 1, 2], Vec::new());
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    let outs = drain(&mut core);
    assert!(no_reply(&outs, &f[0], t0) && no_reply(&outs, &f[1], t1));
    let t2 = f[2].send(&mut core, &req, now);
    let outs = drain(&mut core);
    for (r, t) in [t0, t1, t2].into_iter().enumerate() {
        assert_eq!(construct_reply(&outs, &f[r], t).0, 0);
    }
}

#[test]
fn construct_reply_in_4_2_4_layout_carries_membership_and_destruct_lists_members() {
    let now = Instant::now();
    let (mut core, mut f) = job_v(3, "4.2.4");
    let (tags, outs) = construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[actxid()], now);
    let (s, m, c) = construct_reply(&outs, &f[1], tags[1]);
    assert_eq!((s, m), (0, Some(vec![0, 1, 2])));
    assert_ne!(c, Some(NO_CTXID));
    let mut outs = Vec::new();
    let mut dt = Vec::new();
    for r in 0..3 {
        dt.push(send_destruct(&mut core, &mut f[r], "g", &[0, 1, 2], now));
        outs.extend(drain(&mut core));
    }
    for r in 0..3 {
        assert_eq!(status(&outs, &f[r], dt[r], Command::GroupDestruct), 0);
    }
}

#[test]
fn destruct_completes_among_members_and_frees_the_id() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    let t0 = send_destruct(&mut core, &mut f[0], "g", &[], now);
    assert!(no_reply(&drain(&mut core), &f[0], t0));
    let t1 = send_destruct(&mut core, &mut f[1], "g", &[], now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::GroupDestruct), 0);
    assert_eq!(status(&outs, &f[1], t1, Command::GroupDestruct), 0);
    // The id can be constructed again, over other members.
    let (tags, outs) = construct_all(&mut core, &mut f, "g", &[0], &[], now);
    assert_eq!(construct_reply(&outs, &f[0], tags[0]).0, 0);
}

#[test]
fn leave_during_construct_counts_member_as_departed() {
    let now = Instant::now();
    let (mut core, mut f) = job_v(3, "4.2.4");
    let req = construct_req("g", &[0, 1, 2], Vec::new());
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    drain(&mut core);
    let tl = f[2].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], tl, Command::GroupLeave), 0);
    for (r, t) in [(0, t0), (1, t1)] {
        let left = events_of(&outs, &f[r], LEFT);
        assert_eq!(left.len(), 1, "rank {r} gets one PMIX_GROUP_LEFT");
        assert_eq!(ev_group_and_proc(&left[0]), ("g".to_string(), 2));
        assert_eq!(left[0].source, Proc::new("job", 2));
        assert!(events_of(&outs, &f[r], MEMBER_FAILED).is_empty());
        let (s, m, _) = construct_reply(&outs, &f[r], t);
        assert_eq!((s, m), (0, Some(vec![0, 1])), "completes on the survivors");
        // The member hears of the leave before its construct returns.
        assert!(position_of(&outs, &f[r], 0) < position_of(&outs, &f[r], t));
    }
    assert!(events(&outs, &f[2]).is_empty());
}

#[test]
fn leave_during_ft_construct_completes_on_survivors_with_member_failed() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let req = construct_req("g", &[0, 1, 2], vec![ft()]);
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    drain(&mut core);
    let tl = f[2].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], tl, Command::GroupLeave), 0);
    for (r, t) in [(0, t0), (1, t1)] {
        assert_eq!(events_of(&outs, &f[r], LEFT).len(), 1);
        let failed = events_of(&outs, &f[r], MEMBER_FAILED);
        assert_eq!(failed.len(), 1);
        assert_eq!(ev_group_and_proc(&failed[0]).1, 2);
        assert_eq!(construct_reply(&outs, &f[r], t).0, 0);
    }
}

#[test]
fn leave_reply_is_sent_before_the_members_hear_of_it_and_does_not_wait_for_them() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    // Rank 1 never reads its socket: nothing it should send is awaited.
    let tl = f[0].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], tl, Command::GroupLeave), 0);
    let first_event = outs
        .iter()
        .position(
            |o| matches!(o, pmix::server::core::Output::Send { conn, .. } if *conn != f[0].conn),
        )
        .expect("the members are told");
    assert!(position_of(&outs, &f[0], tl) < first_event);
    assert_eq!(events_of(&outs, &f[1], LEFT).len(), 1);
    assert_eq!(events_of(&outs, &f[2], LEFT).len(), 1);
}

#[test]
fn leave_during_destruct_completes_the_destruct_on_survivors() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    let t0 = send_destruct(&mut core, &mut f[0], "g", &[], now);
    let t1 = send_destruct(&mut core, &mut f[1], "g", &[], now);
    assert!(no_reply(&drain(&mut core), &f[0], t0));
    let tl = f[2].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], tl, Command::GroupLeave), 0);
    for (r, t) in [(0, t0), (1, t1)] {
        assert_eq!(events_of(&outs, &f[r], LEFT).len(), 1);
        assert_eq!(status(&outs, &f[r], t, Command::GroupDestruct), 0);
    }
}

#[test]
fn destruct_after_a_leave_completes_among_survivors_alone() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    f[1].send(&mut core, &leave_req("g"), now);
    drain(&mut core);
    let t0 = send_destruct(&mut core, &mut f[0], "g", &[], now);
    let t2 = send_destruct(&mut core, &mut f[2], "g", &[], now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::GroupDestruct), 0);
    assert_eq!(status(&outs, &f[2], t2, Command::GroupDestruct), 0);
    // The leaver has nothing left to destruct.
    let t1 = send_destruct(&mut core, &mut f[1], "g", &[], now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &f[1], t1, Command::GroupDestruct),
        Status::ERR_NOT_FOUND.0
    );
}

#[test]
fn leave_of_an_unknown_group_is_not_found_and_a_second_leave_too() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    let t = f[0].send(&mut core, &leave_req("nope"), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::GroupLeave),
        -46
    );
    construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    f[0].send(&mut core, &leave_req("g"), now);
    drain(&mut core);
    let t = f[0].send(&mut core, &leave_req("g"), now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::GroupLeave),
        -46
    );
}

#[test]
fn leave_cancels_the_leavers_own_call_in_flight() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    let t0 = f[0].send(&mut core, &construct_req("g", &[0, 1], Vec::new()), now);
    drain(&mut core);
    let tl = f[0].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], tl, Command::GroupLeave), 0);
    assert_eq!(construct_reply(&outs, &f[0], t0).0, NOT_A_MEMBER);
    // Rank 1 alone completes the construct.
    let t1 = f[1].send(&mut core, &construct_req("g", &[0, 1], Vec::new()), now);
    let outs = drain(&mut core);
    assert_eq!(construct_reply(&outs, &f[1], t1).0, 0);
}

#[test]
fn fence_over_a_left_group_ft_succeeds_on_survivors() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    f[2].send(&mut core, &leave_req("g"), now);
    drain(&mut core);
    let t0 = f[0].send(&mut core, &group_fence_req("g", true), now);
    assert!(no_reply(&drain(&mut core), &f[0], t0));
    let t1 = f[1].send(&mut core, &group_fence_req("g", true), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), 0);
    assert_eq!(status(&outs, &f[1], t1, Command::FenceNb), 0);
}

#[test]
fn fence_over_a_left_group_without_ft_fails_not_a_member() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    f[2].send(&mut core, &leave_req("g"), now);
    drain(&mut core);
    let t0 = f[0].send(&mut core, &group_fence_req("g", false), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), NOT_A_MEMBER);
}

#[test]
fn leave_during_a_group_fence_settles_it() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    let t0 = f[0].send(&mut core, &group_fence_req("g", true), now);
    let t1 = f[1].send(&mut core, &group_fence_req("g", false), now);
    assert!(no_reply(&drain(&mut core), &f[0], t0));
    f[2].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    // FT asked by one contributor makes the fence FT (the core's rule).
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), 0);
    assert_eq!(status(&outs, &f[1], t1, Command::FenceNb), 0);
}

#[test]
fn member_lost_mid_construct_aborts_a_construct_without_ft() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let req = construct_req("g", &[0, 1, 2], Vec::new());
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    drain(&mut core);
    core.closed(f[2].conn, now);
    let outs = drain(&mut core);
    for (r, t) in [(0, t0), (1, t1)] {
        let ab = events_of(&outs, &f[r], ABORT);
        assert_eq!(ab.len(), 1, "rank {r} gets PMIX_GROUP_CONSTRUCT_ABORT");
        assert_eq!(ev_group_and_proc(&ab[0]), ("g".to_string(), 2));
        assert_eq!(construct_reply(&outs, &f[r], t).0, ABORT);
    }
    // Nothing is left of it: the survivors may construct the id again.
    let (tags, outs) = construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    assert_eq!(construct_reply(&outs, &f[0], tags[0]).0, 0);
    assert_eq!(construct_reply(&outs, &f[1], tags[1]).0, 0);
}

#[test]
fn member_lost_mid_construct_with_ft_completes_on_survivors() {
    let now = Instant::now();
    let (mut core, mut f) = job_v(3, "4.2.4");
    let req = construct_req("g", &[0, 1, 2], vec![ft()]);
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    drain(&mut core);
    core.proc_exited("job", 2, 9, now);
    let outs = drain(&mut core);
    for (r, t) in [(0, t0), (1, t1)] {
        let failed = events_of(&outs, &f[r], MEMBER_FAILED);
        assert_eq!(failed.len(), 1);
        assert_eq!(ev_group_and_proc(&failed[0]).1, 2);
        assert!(events_of(&outs, &f[r], ABORT).is_empty());
        assert_eq!(construct_reply(&outs, &f[r], t).0, 0);
        assert_eq!(construct_reply(&outs, &f[r], t).1, Some(vec![0, 1]));
    }
}

#[test]
fn member_lost_before_calling_construct_aborts_it_for_later_callers_too() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    core.closed(f[2].conn, now);
    drain(&mut core);
    let (tags, outs) = construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    assert_eq!(construct_reply(&outs, &f[0], tags[0]).0, ABORT);
    assert_eq!(construct_reply(&outs, &f[1], tags[1]).0, ABORT);
}

#[test]
fn fence_over_a_group_with_a_lost_member_fails_without_ft_and_completes_with_it() {
    let now = Instant::now();
    let (mut core, mut f) = job(4);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[], now);
    construct_all(&mut core, &mut f, "h", &[0, 1, 2], &[], now);
    core.closed(f[2].conn, now);
    drain(&mut core);
    let t0 = f[0].send(&mut core, &group_fence_req("g", false), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), TERM_WO_SYNC);
    let t0 = f[0].send(&mut core, &group_fence_req("h", true), now);
    let t1 = f[1].send(&mut core, &group_fence_req("h", true), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), 0);
    assert_eq!(status(&outs, &f[1], t1, Command::FenceNb), 0);
}

#[test]
fn notify_termination_reports_a_member_lost_after_construct() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let nt = Info::new("pmix.grp.notterm", true);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[nt], now);
    core.closed(f[2].conn, now);
    let outs = drain(&mut core);
    for r in 0..2 {
        let failed = events_of(&outs, &f[r], MEMBER_FAILED);
        assert_eq!(failed.len(), 1);
        assert_eq!(ev_group_and_proc(&failed[0]), ("g".to_string(), 2));
    }
    // A later destruct completes on the survivors.
    let t0 = send_destruct(&mut core, &mut f[0], "g", &[], now);
    let t1 = send_destruct(&mut core, &mut f[1], "g", &[], now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t0, Command::GroupDestruct), 0);
    assert_eq!(status(&outs, &f[1], t1, Command::GroupDestruct), 0);
}

#[test]
fn group_left_reaches_a_default_handler() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let mut f: Vec<Fake> = (0..2)
        .map(|r| connect(&mut core, r.into(), "job", r, now))
        .collect();
    let reg = Request::RegEvents(pmix_wire::msg::RegEvents {
        codes: Vec::new(),
        info: Vec::new(),
    });
    f[1].send(&mut core, &reg, now);
    drain(&mut core);
    construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    f[0].send(&mut core, &leave_req("g"), now);
    let outs = drain(&mut core);
    assert_eq!(events_of(&outs, &f[1], LEFT).len(), 1);
}

#[test]
fn construct_timeout_fails_every_caller() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let req = construct_req("g", &[0, 1, 2], vec![Info::new("pmix.timeout", 1i32)]);
    let t0 = f[0].send(&mut core, &req, now);
    drain(&mut core);
    let due = core.next_deadline().expect("a timer");
    assert!(due <= now + Duration::from_secs(1));
    core.tick(due);
    let outs = drain(&mut core);
    assert_eq!(construct_reply(&outs, &f[0], t0).0, -24);
    assert!(core.next_deadline().is_none());
}

#[test]
fn bad_constructs_are_refused() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    // The caller is not listed.
    let t = f[0].send(&mut core, &construct_req("g", &[1, 2], Vec::new()), now);
    assert_eq!(construct_reply(&drain(&mut core), &f[0], t).0, -27);
    // A rank beyond the job.
    let t = f[0].send(&mut core, &construct_req("g", &[0, 7], Vec::new()), now);
    assert_eq!(construct_reply(&drain(&mut core), &f[0], t).0, -27);
    // Another membership for an id under construction.
    f[0].send(&mut core, &construct_req("g", &[0, 1], Vec::new()), now);
    drain(&mut core);
    let t = f[2].send(&mut core, &construct_req("g", &[0, 2], Vec::new()), now);
    assert_eq!(construct_reply(&drain(&mut core), &f[2], t).0, -27);
    // Constructing twice.
    let t = f[0].send(&mut core, &construct_req("g", &[0, 1], Vec::new()), now);
    assert_eq!(construct_reply(&drain(&mut core), &f[0], t).0, -27);
    // JOIN and INVITE are never sent by 4.2 clients.
    let t = f[0].send(
        &mut core,
        &Request::Raw {
            command: Command::GroupJoin,
            bytes: Vec::new(),
        },
        now,
    );
    assert_eq!(status(&drain(&mut core), &f[0], t, Command::GroupJoin), -47);
}

#[test]
fn wildcard_construct_covers_the_whole_job() {
    let now = Instant::now();
    let (mut core, mut f) = job_v(3, "4.2.4");
    let req = Request::GroupConstruct(pmix_wire::msg::GroupConstruct {
        grp: "all".into(),
        procs: vec![Proc::new("job", pmix_wire::Rank::WILDCARD.0)],
        info: Vec::new(),
    });
    let mut outs = Vec::new();
    let tags: Vec<u32> = (0..3)
        .map(|r| {
            let t = f[r].send(&mut core, &req, now);
            outs.extend(drain(&mut core));
            t
        })
        .collect();
    assert_eq!(
        construct_reply(&outs, &f[2], tags[2]).1,
        Some(vec![0, 1, 2])
    );
}

#[test]
fn construct_complete_notify_records_an_invited_group_for_fences_and_leaves() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let members = DataArray::new(
        DataType::Proc,
        vec![
            Value::Proc(Proc::new("job", 1)),
            Value::Proc(Proc::new("job", 2)),
        ],
    )
    .unwrap();
    let n = Request::Notify(Notify {
        status: Status(COMPLETE),
        range: DataRange::CUSTOM,
        info: vec![
            Info::new("pmix.evrange", members),
            Info::new("pmix.evnondef", true),
            Info::new("pmix.grp.id", "inv"),
        ],
    });
    let tn = f[0].send(&mut core, &n, now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], tn, Command::Notify), 0);
    let tags: Vec<u32> = (0..3)
        .map(|r| f[r].send(&mut core, &group_fence_req("inv", false), now))
        .collect();
    let outs = drain(&mut core);
    for r in 0..3 {
        assert_eq!(status(&outs, &f[r], tags[r], Command::FenceNb), 0);
    }
    let tl = f[2].send(&mut core, &leave_req("inv"), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[2], tl, Command::GroupLeave), 0);
    assert_eq!(events_of(&outs, &f[0], LEFT).len(), 1);
    assert_eq!(events_of(&outs, &f[1], LEFT).len(), 1);
}

#[test]
fn a_group_fence_is_not_merged_with_a_fence_over_the_same_procs() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    let job_fence = Request::FenceNb(pmix_wire::msg::FenceNb {
        procs: vec![Proc::new("job", pmix_wire::Rank::WILDCARD.0)],
        info: Vec::new(),
    });
    let t0 = f[0].send(&mut core, &group_fence_req("g", false), now);
    let t1 = f[1].send(&mut core, &job_fence, now);
    let outs = drain(&mut core);
    assert!(no_reply(&outs, &f[0], t0) && no_reply(&outs, &f[1], t1));
    let u0 = f[0].send(&mut core, &job_fence, now);
    let u1 = f[1].send(&mut core, &group_fence_req("g", false), now);
    let outs = drain(&mut core);
    for (r, t) in [(0, t0), (1, t1), (0, u0), (1, u1)] {
        assert_eq!(status(&outs, &f[r], t, Command::FenceNb), 0);
    }
}

fn notify_req(code: i32, info: Vec<Info>) -> Request {
    Request::Notify(Notify {
        status: Status(code),
        range: DataRange::CUSTOM,
        info,
    })
}

fn proc_array(ranks: &[u32]) -> DataArray {
    DataArray::new(
        DataType::Proc,
        ranks
            .iter()
            .map(|&r| Value::Proc(Proc::new("job", r)))
            .collect(),
    )
    .unwrap()
}

#[test]
fn an_invite_makes_a_group_of_the_leader_and_the_invitees_that_accepted() {
    let now = Instant::now();
    let (mut core, mut f) = job(4);
    // Rank 0 invites 1..3; 3 declines; the 4.2 leader's CONSTRUCT_COMPLETE still
    // names every invitee.
    let grp = || Info::new("pmix.grp.id", "inv");
    let invited = notify_req(
        -159,
        vec![Info::new("pmix.evrange", proc_array(&[1, 2, 3])), grp()],
    );
    f[0].send(&mut core, &invited, now);
    let to_leader = || vec![Info::new("pmix.evrange", Proc::new("job", 0))];
    f[1].send(&mut core, &notify_req(-161, to_leader()), now);
    f[2].send(&mut core, &notify_req(-161, to_leader()), now);
    f[3].send(&mut core, &notify_req(-162, to_leader()), now);
    let done = notify_req(
        COMPLETE,
        vec![Info::new("pmix.evrange", proc_array(&[1, 2, 3])), grp()],
    );
    f[0].send(&mut core, &done, now);
    drain(&mut core);
    let tags: Vec<u32> = (0..3)
        .map(|r| f[r].send(&mut core, &group_fence_req("inv", false), now))
        .collect();
    let outs = drain(&mut core);
    for r in 0..3 {
        assert_eq!(status(&outs, &f[r], tags[r], Command::FenceNb), 0);
    }
    // The decliner holds nothing.
    let t = f[3].send(&mut core, &leave_req("inv"), now);
    assert_eq!(
        status(&drain(&mut core), &f[3], t, Command::GroupLeave),
        -46
    );
}

#[test]
fn a_member_that_finalizes_during_an_ft_construct_departs_at_its_finalize() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let req = construct_req("g", &[0, 1, 2], vec![ft()]);
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    f[2].send(&mut core, &Request::Finalize, now);
    // The construct completes on the survivors at the FINALIZE, with the
    // finalizer's socket still open.
    let outs = drain(&mut core);
    assert_eq!(construct_reply(&outs, &f[0], t0).0, 0);
    assert_eq!(construct_reply(&outs, &f[1], t1).0, 0);
    core.closed(f[2].conn, now);
    let outs = drain(&mut core);
    assert!(frames_to(&outs, f[0].conn).is_empty() && frames_to(&outs, f[1].conn).is_empty());
}

#[test]
fn removing_a_namespace_settles_the_constructs_of_other_jobs_waiting_on_it() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    core.add_namespace(pmix::server::core::NamespaceSpec::single_node(
        "other", 1, UID, GID,
    ))
    .unwrap();
    let _o = connect(&mut core, 100, "other", 0, now);
    drain(&mut core);
    let mut procs = server_groups_common::procs(&[0, 1]);
    procs.push(Proc::new("other", 0));
    let req = Request::GroupConstruct(pmix_wire::msg::GroupConstruct {
        grp: "x".into(),
        procs,
        info: Vec::new(),
    });
    let t0 = f[0].send(&mut core, &req, now);
    let t1 = f[1].send(&mut core, &req, now);
    drain(&mut core);
    core.remove_namespace("other", now).unwrap();
    let outs = drain(&mut core);
    assert_eq!(construct_reply(&outs, &f[0], t0).0, ABORT);
    assert_eq!(construct_reply(&outs, &f[1], t1).0, ABORT);
}

#[test]
fn a_fence_over_a_group_not_yet_made_is_held_until_construct_complete_makes_it() {
    // An invitee of a 4.2 invite may fence over the group before the leader's
    // PMIX_GROUP_CONSTRUCT_COMPLETE reaches the server.
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let early: Vec<u32> = (1..3)
        .map(|r| f[r].send(&mut core, &group_fence_req("late", false), now))
        .collect();
    let outs = drain(&mut core);
    for r in 1..3 {
        assert!(
            no_reply(&outs, &f[r], early[r - 1]),
            "rank {r} answered early"
        );
    }
    let tn = f[0].send(
        &mut core,
        &notify_req(
            COMPLETE,
            vec![
                Info::new("pmix.evrange", proc_array(&[1, 2])),
                Info::new("pmix.evnondef", true),
                Info::new("pmix.grp.id", "late"),
            ],
        ),
        now,
    );
    let t0 = f[0].send(&mut core, &group_fence_req("late", false), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], tn, Command::Notify), 0);
    assert_eq!(status(&outs, &f[0], t0, Command::FenceNb), 0);
    for r in 1..3 {
        assert_eq!(status(&outs, &f[r], early[r - 1], Command::FenceNb), 0);
    }
}

#[test]
fn a_fence_over_an_id_that_never_becomes_a_group_answers_bad_param_at_its_deadline() {
    let now = Instant::now();
    let (mut core, mut f) = job(2);
    let t = f[0].send(&mut core, &group_fence_req("never", false), now);
    let outs = drain(&mut core);
    assert!(no_reply(&outs, &f[0], t));
    let due = core.next_deadline().expect("the held fence's deadline");
    assert!(due > now && due <= now + std::time::Duration::from_secs(60));
    core.tick(due);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f[0], t, Command::FenceNb), -27);
}

#[test]
fn a_ranks_exit_settles_its_own_groups_and_leaves_the_others_as_they_were() {
    let now = Instant::now();
    let (mut core, mut f) = job(4);
    let t1 = f[1].send(&mut core, &construct_req("mine", &[0, 1], Vec::new()), now);
    let t2 = f[2].send(&mut core, &construct_req("other", &[2, 3], Vec::new()), now);
    drain(&mut core);
    core.proc_exited("job", 0, 9, now);
    let outs = drain(&mut core);
    // Its own group aborts for the member waiting on it...
    assert_eq!(construct_reply(&outs, &f[1], t1).0, ABORT);
    // ...and the other group hears nothing of it and completes as before.
    assert!(no_reply(&outs, &f[2], t2));
    assert!(events_of(&outs, &f[2], ABORT).is_empty() && events_of(&outs, &f[3], ABORT).is_empty());
    let t3 = f[3].send(&mut core, &construct_req("other", &[2, 3], Vec::new()), now);
    let outs = drain(&mut core);
    assert_eq!(construct_reply(&outs, &f[2], t2).0, 0);
    assert_eq!(construct_reply(&outs, &f[3], t3).0, 0);
}

#[test]
fn each_member_applies_its_own_ft_directive_to_a_loss_during_construct() {
    let now = Instant::now();
    let (mut core, mut f) = job_v(3, "4.2.4");
    let t0 = f[0].send(&mut core, &construct_req("g", &[0, 1, 2], vec![ft()]), now);
    let t1 = f[1].send(&mut core, &construct_req("g", &[0, 1, 2], Vec::new()), now);
    drain(&mut core);
    core.closed(f[2].conn, now);
    let outs = drain(&mut core);
    // The FT caller completes on the survivors, told of the lost member...
    let failed = events_of(&outs, &f[0], MEMBER_FAILED);
    assert_eq!(failed.len(), 1);
    assert_eq!(ev_group_and_proc(&failed[0]), ("g".to_string(), 2));
    assert!(events_of(&outs, &f[0], ABORT).is_empty());
    assert_eq!(
        construct_reply(&outs, &f[0], t0),
        (0, Some(vec![0, 1]), Some(NO_CTXID))
    );
    // ...the other one aborts, and holds nothing afterwards.
    let ab = events_of(&outs, &f[1], ABORT);
    assert_eq!(ab.len(), 1);
    assert_eq!(ev_group_and_proc(&ab[0]), ("g".to_string(), 2));
    assert_eq!(construct_reply(&outs, &f[1], t1).0, ABORT);
    let t = send_destruct(&mut core, &mut f[1], "g", &[0, 1], now);
    assert_eq!(
        status(&drain(&mut core), &f[1], t, Command::GroupDestruct),
        Status::ERR_NOT_FOUND.0
    );
    // The destruct waits for no one who does not hold the group.
    let t = send_destruct(&mut core, &mut f[0], "g", &[0, 1], now);
    assert_eq!(
        status(&drain(&mut core), &f[0], t, Command::GroupDestruct),
        0
    );
}

#[test]
fn notify_termination_reports_a_loss_during_destruct_which_completes_on_the_survivors() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let nt = Info::new("pmix.grp.notterm", true);
    construct_all(&mut core, &mut f, "g", &[0, 1, 2], &[nt], now);
    let t0 = send_destruct(&mut core, &mut f[0], "g", &[], now);
    let t1 = send_destruct(&mut core, &mut f[1], "g", &[], now);
    assert!(no_reply(&drain(&mut core), &f[0], t0));
    core.proc_exited("job", 2, 9, now);
    let outs = drain(&mut core);
    for (r, t) in [(0, t0), (1, t1)] {
        let failed = events_of(&outs, &f[r], MEMBER_FAILED);
        assert_eq!(failed.len(), 1, "rank {r}");
        assert_eq!(ev_group_and_proc(&failed[0]), ("g".to_string(), 2));
        assert!(position_of(&outs, &f[r], 0) < position_of(&outs, &f[r], t));
        assert_eq!(status(&outs, &f[r], t, Command::GroupDestruct), 0);
    }
    // The id is free again.
    let (tags, outs) = construct_all(&mut core, &mut f, "g", &[0, 1], &[], now);
    assert_eq!(construct_reply(&outs, &f[0], tags[0]).0, 0);
}

/// A GETNB of `rank`'s `pmix.grp.lclid` qualified by `qual`.
fn qualified_get(rank: u32, qual: Info) -> Request {
    let mut q = qual;
    q.flags = pmix_wire::InfoFlags::QUALIFIER;
    Request::GetNb(pmix_wire::msg::GetNb {
        nspace: "job".into(),
        rank: pmix_wire::Rank(rank),
        info: vec![q],
        key: Some("pmix.grp.lclid".into()),
    })
}

/// The value of the qualified answer to `f`'s `tag`, or its error status.
fn qualified_answer(outs: &[pmix::server::core::Output], f: &Fake, tag: u32) -> Result<Value, i32> {
    match reply(outs, f, tag, Command::GetNb) {
        pmix_wire::Reply::GetNb(r) if r.status.0 == 0 => {
            assert_eq!(r.data.len(), 1);
            let [kv] = r.data[0].kvals.as_slice() else {
                panic!("one qualified value: {r:?}")
            };
            assert_eq!(kv.key, "pmix.qual.val");
            let Value::DataArray(a) = &kv.value else {
                panic!("a data array: {kv:?}")
            };
            let Value::Info(primary) = &a.items[0] else {
                panic!("infos: {a:?}")
            };
            assert_eq!(primary.key, "pmix.grp.lclid");
            Ok(primary.value.clone())
        }
        pmix_wire::Reply::GetNb(r) => Err(r.status.0),
        pmix_wire::Reply::Status { status, .. } => Err(status.0),
        other => panic!("not a get reply: {other:?}"),
    }
}

#[test]
fn a_members_group_info_is_served_qualified_by_the_groups_context_id_and_id_after_destruct() {
    let now = Instant::now();
    let (mut core, mut f) = job(3);
    let mut tags = Vec::new();
    let mut outs = Vec::new();
    for r in 0..3u32 {
        let lcid = Info::new("pmix.grp.lclid", Value::Size(100 + u64::from(r)));
        let grp_info = Info::new("pmix.grp.info", Value::DataArray(DataArray::infos([lcid])));
        let req = construct_req("gi", &[0, 1, 2], vec![actxid(), grp_info]);
        tags.push(f[r as usize].send(&mut core, &req, now));
        outs.extend(drain(&mut core));
    }
    let ctxid = construct_reply(&outs, &f[0], tags[0]).2.unwrap();
    let by_ctxid = |c: u64| Info::new("pmix.grp.ctxid", Value::Size(c));
    for r in 0..3u32 {
        let tag = f[0].send(&mut core, &qualified_get(r, by_ctxid(ctxid)), now);
        let outs = drain(&mut core);
        assert_eq!(
            qualified_answer(&outs, &f[0], tag),
            Ok(Value::Size(100 + u64::from(r)))
        );
    }
    // Qualified by the group id; a context id of no group finds nothing, at once.
    let tag = f[1].send(
        &mut core,
        &qualified_get(2, Info::new("pmix.grp.id", "gi")),
        now,
    );
    let outs = drain(&mut core);
    assert_eq!(qualified_answer(&outs, &f[1], tag), Ok(Value::Size(102)));
    let tag = f[1].send(&mut core, &qualified_get(2, by_ctxid(ctxid + 7)), now);
    let outs = drain(&mut core);
    assert_eq!(
        qualified_answer(&outs, &f[1], tag),
        Err(Status::ERR_NOT_FOUND.0)
    );
    // Destructed: still read (Open MPI reads the local CIDs after it).
    for r in 0..3 {
        send_destruct(&mut core, &mut f[r], "gi", &[0, 1, 2], now);
    }
    drain(&mut core);
    let tag = f[2].send(&mut core, &qualified_get(0, by_ctxid(ctxid)), now);
    let outs = drain(&mut core);
    assert_eq!(qualified_answer(&outs, &f[2], tag), Ok(Value::Size(100)));
}
