//! `PMIx_Group_leave` (docs/design.md §4, seed 001), run through the simulator: the leaver
//! drops the group at once; every other member sees exactly one `PMIX_GROUP_LEFT`
//! naming group and leaver, after removing the leaver; unknown groups and bad ids.

mod support;

use pmix_core::group::{
    Body, CollectiveOp, ConstructOptions, DepartureCause, GroupError, Groups, Message, Nspace,
    ProcId, Roster,
};
use pmix_core::{PmixError, Status};
use support::sim::{Seen, Sim, gid};

/// `n` processes that constructed group `name` over all of them.
fn constructed(n: usize, name: &str) -> Sim {
    let mut sim = Sim::new(n);
    let all: Vec<usize> = (0..n).collect();
    for p in 0..n {
        sim.construct(p, name, &all, ConstructOptions::default())
            .unwrap();
    }
    sim.run();
    for p in 0..n {
        assert!(sim.procs[p].seen.contains(&Seen::Done {
            group: name.into(),
            op: CollectiveOp::Construct,
            seq: 0,
            status: Status::SUCCESS
        }));
    }
    sim
}

/// Rank 0's copy of group `g` over ranks `0..n` of namespace `job`, its construct
/// called (its contribution still queued), with a way to name the job's ranks.
fn rank0_constructing(n: u32) -> (Groups, impl Fn(u32) -> ProcId) {
    let ns = Nspace::new("job").unwrap();
    let p = move |r| ProcId::new(ns, r).unwrap();
    let mut g0 = Groups::new(p(0));
    g0.construct(
        gid("g"),
        Roster::from_ranks(ns, 0..n).unwrap(),
        ConstructOptions::default(),
    )
    .unwrap();
    (g0, p)
}

fn left_events(sim: &Sim, p: usize) -> Vec<&Seen> {
    sim.procs[p]
        .seen
        .iter()
        .filter(|s| matches!(s, Seen::Event { code, .. } if *code == Status::GROUP_LEFT))
        .collect()
}

#[test]
fn leaver_drops_the_group_at_once_and_each_other_member_sees_one_group_left() {
    let mut sim = constructed(4, "ocean");
    // Hold every channel: the leave must complete without anything being received.
    for q in 0..4 {
        sim.hold(2, q);
    }
    assert_eq!(sim.leave(2, b"ocean"), Ok(None));
    assert!(
        sim.procs[2].groups.get(&gid("ocean")).is_none(),
        "leaver still lists the group"
    );
    // Not received yet: the others still count the leaver.
    assert!(
        sim.procs[0]
            .groups
            .get(&gid("ocean"))
            .unwrap()
            .is_member(&sim.proc(2))
    );
    for q in 0..4 {
        sim.release(2, q);
    }
    sim.run();
    for p in [0, 1, 3] {
        assert_eq!(
            left_events(&sim, p),
            [&Seen::Event {
                group: "ocean".into(),
                code: Status::GROUP_LEFT,
                proc: 2,
                cause: DepartureCause::Left,
                still_member: false
            }],
            "p{p}"
        );
        let members: Vec<u32> = sim.procs[p]
            .groups
            .get(&gid("ocean"))
            .unwrap()
            .members()
            .map(|q| q.rank)
            .collect();
        assert_eq!(members, [0, 1, 3]);
    }
    assert!(
        left_events(&sim, 2).is_empty(),
        "the leaver is not told of its own leave"
    );
    sim.check_groups(true).unwrap();
}

#[test]
fn receivers_remove_the_leaver_before_any_handler_runs() {
    // Two members leave at once; every GROUP_LEFT reaches handlers with its leaver
    // already gone, whatever the interleaving.
    for seed in 0..20 {
        let mut sim = constructed(5, "g");
        sim.leave(1, b"g").unwrap();
        sim.leave(3, b"g").unwrap();
        sim.run_shuffled(seed);
        for p in [0, 2, 4] {
            let evs = left_events(&sim, p);
            assert_eq!(evs.len(), 2, "p{p} seed {seed}");
            for e in evs {
                assert!(
                    matches!(
                        e,
                        Seen::Event {
                            still_member: false,
                            ..
                        }
                    ),
                    "{e:?}"
                );
            }
        }
        sim.check_groups(true).unwrap();
    }
}

#[test]
fn group_left_is_ranged_to_the_current_other_members_only() {
    let mut sim = constructed(4, "g");
    sim.kill(3, false);
    // p2 learns of the loss before it leaves; p0 and p1 learn later.
    assert!(sim.deliver(3, 2));
    sim.leave(2, b"g").unwrap();
    assert_eq!(sim.pending_on(2, 0), 1);
    assert_eq!(sim.pending_on(2, 1), 1);
    assert_eq!(
        sim.pending_on(2, 3),
        0,
        "the lost member is not a recipient"
    );
    sim.run();
    sim.check_groups(true).unwrap();
    for p in [0, 1] {
        assert_eq!(left_events(&sim, p).len(), 1);
    }
}

#[test]
fn leave_of_an_unknown_group_is_not_found() {
    let mut sim = constructed(2, "g");
    assert_eq!(sim.leave(0, b"never-made"), Err(Status::ERR_NOT_FOUND));
    sim.leave(0, b"g").unwrap();
    assert_eq!(
        sim.leave(0, b"g"),
        Err(Status::ERR_NOT_FOUND),
        "second leave"
    );
    // A destructed group is gone too.
    let mut sim = constructed(2, "h");
    sim.destruct(0, "h").unwrap();
    sim.destruct(1, "h").unwrap();
    sim.run();
    assert_eq!(sim.leave(1, b"h"), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn bad_group_ids_are_bad_param() {
    let mut sim = constructed(2, "g");
    let long = vec![b'x'; 256];
    for bad in [&b""[..], &long[..], &b"a\0b"[..]] {
        assert_eq!(sim.leave(0, bad), Err(Status::ERR_BAD_PARAM), "{bad:?}");
        assert_eq!(
            sim.construct(
                0,
                std::str::from_utf8(bad).unwrap(),
                &[0, 1],
                ConstructOptions::default()
            ),
            Err(Status::ERR_BAD_PARAM)
        );
    }
    // The longest valid id is fine: unknown, not malformed.
    assert_eq!(sim.leave(0, &long[..255]), Err(Status::ERR_NOT_FOUND));
    // The group itself was not touched.
    assert_eq!(
        sim.procs[0].groups.get(&gid("g")).unwrap().member_count(),
        2
    );
}

#[test]
fn a_second_group_left_from_the_same_member_is_not_a_member() {
    let id = gid("g");
    let (mut g0, p) = rank0_constructing(3);
    while g0.poll_output().is_some() {}
    for r in [1, 2] {
        let m = Message {
            group: id,
            from: p(r),
            body: Body::Contribute {
                op: CollectiveOp::Construct,
                seq: 0,
            },
        };
        g0.on_message(&m).unwrap();
    }
    while g0.poll_output().is_some() {}
    let left = Message {
        group: id,
        from: p(2),
        body: Body::Left,
    };
    g0.on_message(&left).unwrap();
    while g0.poll_output().is_some() {}
    let again = g0.on_message(&left).unwrap_err();
    assert_eq!(again, GroupError::Departed { rank: 2 });
    assert_eq!(again.status(), Status::ERR_NOT_A_MEMBER);
    // Nor can it contribute any more, and an outsider never could.
    let late = Message {
        group: id,
        from: p(2),
        body: Body::Contribute {
            op: CollectiveOp::Fence,
            seq: 1,
        },
    };
    assert_eq!(
        g0.on_message(&late).unwrap_err().status(),
        Status::ERR_NOT_A_MEMBER
    );
    let outsider = Message {
        group: id,
        from: p(7),
        body: Body::Left,
    };
    assert_eq!(
        g0.on_message(&outsider).unwrap_err(),
        GroupError::NotAMember
    );
    assert_eq!(g0.get(&id).unwrap().member_count(), 2);
}

#[test]
fn messages_and_losses_naming_this_process_itself_are_refused() {
    let id = gid("g");
    let (mut g0, p) = rank0_constructing(2);
    let me = p(0);
    while g0.poll_output().is_some() {}
    assert_eq!(
        g0.on_message(&Message {
            group: id,
            from: me,
            body: Body::Left
        }),
        Err(GroupError::Itself)
    );
    assert_eq!(g0.on_lost(&me), Err(GroupError::Itself));
    assert_eq!(g0.get(&id).unwrap().member_count(), 2);
}

#[test]
fn inputs_wait_until_outputs_are_polled() {
    let id = gid("g");
    let (mut g0, p) = rank0_constructing(3);
    // The contribution to send is still queued: nothing else is accepted.
    let m = Message {
        group: id,
        from: p(1),
        body: Body::Left,
    };
    let e = g0.on_message(&m).unwrap_err();
    assert_eq!(
        (e, e.status()),
        (GroupError::Undrained, Status::ERR_WOULD_BLOCK)
    );
    assert_eq!(g0.leave(&id).unwrap_err(), GroupError::Undrained);
    assert_eq!(g0.on_lost(&p(1)), Err(GroupError::Undrained));
    assert_eq!(g0.get(&id).unwrap().member_count(), 3, "nothing changed");
    while g0.poll_output().is_some() {}
    g0.on_message(&m).unwrap();
    assert_eq!(g0.get(&id).unwrap().member_count(), 2);
}

#[test]
fn an_invited_process_may_decline_by_leaving() {
    let mut sim = Sim::new(3);
    sim.construct(
        0,
        "g",
        &[0, 1, 2],
        ConstructOptions {
            ft_collective: true,
            ..Default::default()
        },
    )
    .unwrap();
    // p2 was invited by p0's construct; it leaves before calling construct.
    assert_eq!(sim.leave(2, b"g"), Ok(None));
    sim.construct(
        1,
        "g",
        &[0, 1, 2],
        ConstructOptions {
            ft_collective: true,
            ..Default::default()
        },
    )
    .unwrap();
    sim.run();
    for p in [0, 1] {
        let done = sim.procs[p]
            .seen
            .iter()
            .find(|s| matches!(s, Seen::Done { .. }))
            .unwrap();
        assert!(matches!(done, Seen::Done { status, .. } if *status == Status::SUCCESS));
    }
    sim.check_groups(true).unwrap();
}
