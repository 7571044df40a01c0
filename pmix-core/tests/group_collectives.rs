//! Departed accounting (docs/design.md §4) through the simulator: leave and loss during
//! construct and destruct, before and after the departing member contributed, with
//! and without `PMIX_GROUP_FT_COLLECTIVE` (a leave completes either on the
//! survivors, a loss aborts a construct without it), a leave racing with the last
//! contribution; fences with and without it; bad contributions and calls.

mod support;

use pmix_core::group::{
    Body, CollectiveOp, Completion, ConstructOptions, DepartureCause, GroupError, Groups, Message,
    Notification, Nspace, Output, Phase, ProcId, Roster,
};
use pmix_core::{PmixError, Status};
use support::sim::{Seen, Sim, gid};

const PLAIN: ConstructOptions = ConstructOptions {
    ft_collective: false,
    notify_termination: false,
};
const FT: ConstructOptions = ConstructOptions {
    ft_collective: true,
    notify_termination: false,
};

/// (op, status) of every completion `p` saw on `group`.
fn done(sim: &Sim, p: usize, group: &str) -> Vec<(CollectiveOp, Status)> {
    sim.procs[p]
        .seen
        .iter()
        .filter_map(|s| match s {
            Seen::Done {
                group: g,
                op,
                status,
                ..
            } if g == group => Some((*op, *status)),
            _ => None,
        })
        .collect()
}

/// (code, process, cause) of every event `p` saw on `group`.
fn events(sim: &Sim, p: usize, group: &str) -> Vec<(Status, usize, DepartureCause)> {
    sim.procs[p]
        .seen
        .iter()
        .filter_map(|s| match s {
            Seen::Event {
                group: g,
                code,
                proc,
                cause,
                ..
            } if g == group => Some((*code, *proc, *cause)),
            _ => None,
        })
        .collect()
}

fn members(sim: &Sim, p: usize, group: &str) -> Option<Vec<u32>> {
    sim.procs[p]
        .groups
        .get(&gid(group))
        .map(|g| g.members().map(|q| q.rank).collect())
}

/// `n` processes with group "g" constructed over all of them.
fn constructed(n: usize, opts: ConstructOptions) -> Sim {
    let mut sim = Sim::new(n);
    let all: Vec<usize> = (0..n).collect();
    for p in 0..n {
        sim.construct(p, "g", &all, opts).unwrap();
    }
    sim.run();
    sim
}

// ------------------------------------------------------------------ construct

#[test]
fn leave_during_non_ft_construct_before_contributing_completes_on_the_survivors() {
    // Seed 001: the leaver is accounted departed "so the in-flight collective can
    // complete on the survivors rather than block", FT or not.
    for seed in 0..16 {
        let mut sim = Sim::new(3);
        sim.construct(0, "g", &[0, 1, 2], PLAIN).unwrap();
        sim.leave(2, b"g").unwrap(); // invited, never contributed
        sim.construct(1, "g", &[0, 1, 2], PLAIN).unwrap();
        sim.run_shuffled(seed);
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g"),
                [(CollectiveOp::Construct, Status::SUCCESS)],
                "p{p} seed {seed}"
            );
            // Its PMIX_GROUP_LEFT, and nothing else: no abort, and no
            // member-failed report without FT.
            assert_eq!(
                events(&sim, p, "g"),
                [(Status::GROUP_LEFT, 2, DepartureCause::Left)],
                "p{p} seed {seed}"
            );
            assert_eq!(members(&sim, p, "g"), Some(vec![0, 1]), "the group lives");
        }
        sim.check_groups(true).unwrap();
    }
}

#[test]
fn leave_during_construct_before_contributing_counts_as_departed_with_ft() {
    let mut sim = Sim::new(4);
    sim.construct(0, "g", &[0, 1, 2, 3], FT).unwrap();
    sim.leave(2, b"g").unwrap();
    sim.construct(1, "g", &[0, 1, 2, 3], FT).unwrap();
    sim.construct(3, "g", &[0, 1, 2, 3], FT).unwrap();
    sim.run_shuffled(7);
    for p in [0, 1, 3] {
        assert_eq!(
            done(&sim, p, "g"),
            [(CollectiveOp::Construct, Status::SUCCESS)],
            "p{p}"
        );
        let failed: Vec<_> = events(&sim, p, "g")
            .into_iter()
            .filter(|e| e.0 == Status::GROUP_MEMBER_FAILED)
            .collect();
        assert_eq!(
            failed,
            [(Status::GROUP_MEMBER_FAILED, 2, DepartureCause::Left)],
            "one per departed member"
        );
        assert_eq!(members(&sim, p, "g"), Some(vec![0, 1, 3]));
    }
    sim.check_groups(true).unwrap();
}

#[test]
fn leave_during_construct_after_contributing_keeps_the_contribution_with_and_without_ft() {
    for (seed, opts) in (0..16).flat_map(|s| [(s, PLAIN), (s, FT)]) {
        let mut sim = Sim::new(3);
        sim.construct(2, "g", &[0, 1, 2], opts).unwrap();
        // The leaver's own construct is cancelled; its contribution stands elsewhere.
        assert_eq!(
            sim.leave(2, b"g").unwrap(),
            Some(Completion {
                op: CollectiveOp::Construct,
                seq: 0,
                status: Status::ERR_NOT_A_MEMBER
            })
        );
        sim.construct(0, "g", &[0, 1, 2], opts).unwrap();
        sim.construct(1, "g", &[0, 1, 2], opts).unwrap();
        sim.run_shuffled(seed);
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g"),
                [(CollectiveOp::Construct, Status::SUCCESS)],
                "p{p} seed {seed} {opts:?}"
            );
            // Not departed (it contributed): no member-failed event even with FT.
            assert_eq!(
                events(&sim, p, "g"),
                [(Status::GROUP_LEFT, 2, DepartureCause::Left)]
            );
            assert_eq!(members(&sim, p, "g"), Some(vec![0, 1]));
        }
        sim.check_groups(true).unwrap();
    }
}

#[test]
fn loss_during_construct_before_contributing_aborts_without_ft_and_completes_with_it() {
    for (opts, want) in [
        (PLAIN, Status::GROUP_CONSTRUCT_ABORT),
        (FT, Status::SUCCESS),
    ] {
        let mut sim = Sim::new(3);
        sim.construct(0, "g", &[0, 1, 2], opts).unwrap();
        sim.kill(2, false);
        sim.construct(1, "g", &[0, 1, 2], opts).unwrap();
        sim.run();
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g"),
                [(CollectiveOp::Construct, want)],
                "{opts:?} p{p}"
            );
            let code = if opts.ft_collective {
                Status::GROUP_MEMBER_FAILED
            } else {
                Status::GROUP_CONSTRUCT_ABORT
            };
            assert_eq!(events(&sim, p, "g"), [(code, 2, DepartureCause::Lost)]);
        }
        sim.check_groups(true).unwrap();
    }
}

#[test]
fn loss_during_construct_after_contributing_keeps_the_contribution_unless_it_was_dropped() {
    for opts in [PLAIN, FT] {
        // Delivered before the loss notice: it stands, the construct succeeds.
        let mut sim = Sim::new(3);
        sim.construct(2, "g", &[0, 1, 2], opts).unwrap();
        sim.kill(2, false);
        sim.construct(0, "g", &[0, 1, 2], opts).unwrap();
        sim.construct(1, "g", &[0, 1, 2], opts).unwrap();
        sim.run_shuffled(3);
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g"),
                [(CollectiveOp::Construct, Status::SUCCESS)],
                "{opts:?}"
            );
            assert_eq!(events(&sim, p, "g"), [], "not departed: no event");
            assert_eq!(members(&sim, p, "g"), Some(vec![0, 1]));
        }
        // Dropped with the process: it never contributed as far as anyone knows.
        let mut sim = Sim::new(3);
        sim.construct(2, "g", &[0, 1, 2], opts).unwrap();
        sim.kill(2, true);
        sim.construct(0, "g", &[0, 1, 2], opts).unwrap();
        sim.construct(1, "g", &[0, 1, 2], opts).unwrap();
        sim.run_shuffled(3);
        let want = if opts.ft_collective {
            Status::SUCCESS
        } else {
            Status::GROUP_CONSTRUCT_ABORT
        };
        for p in [0, 1] {
            assert_eq!(done(&sim, p, "g"), [(CollectiveOp::Construct, want)]);
        }
    }
}

#[test]
fn construct_completes_only_when_every_member_contributed_or_departed() {
    // A leave completes on the survivors, a loss aborts (no FT): both only once the
    // pending member p1 has contributed.
    for (lose, want) in [
        (false, Status::SUCCESS),
        (true, Status::GROUP_CONSTRUCT_ABORT),
    ] {
        let mut sim = Sim::new(3);
        sim.construct(0, "g", &[0, 1, 2], PLAIN).unwrap();
        if lose {
            sim.kill(2, false);
        } else {
            sim.leave(2, b"g").unwrap();
        }
        sim.run();
        assert_eq!(done(&sim, 0, "g"), [], "p1 is still pending (lose={lose})");
        sim.construct(1, "g", &[0, 1, 2], PLAIN).unwrap();
        sim.run();
        assert_eq!(
            done(&sim, 0, "g"),
            [(CollectiveOp::Construct, want)],
            "lose={lose}"
        );
        assert!(
            sim.procs.iter().all(|p| p.errors.is_empty()),
            "no straggler after the outcome"
        );
        sim.check_groups(true).unwrap();
    }
}

#[test]
fn non_ft_construct_with_a_leave_and_a_loss_aborts_naming_the_lost_member() {
    for seed in 0..24 {
        let mut sim = Sim::new(4);
        sim.construct(0, "g", &[0, 1, 2, 3], PLAIN).unwrap();
        sim.leave(2, b"g").unwrap();
        sim.kill(3, false);
        sim.construct(1, "g", &[0, 1, 2, 3], PLAIN).unwrap();
        sim.run_shuffled(seed);
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g"),
                [(CollectiveOp::Construct, Status::GROUP_CONSTRUCT_ABORT)],
                "p{p} seed {seed}"
            );
            // Whichever departure came first, the abort names the lost member.
            assert_eq!(
                events(&sim, p, "g"),
                [
                    (Status::GROUP_LEFT, 2, DepartureCause::Left),
                    (Status::GROUP_CONSTRUCT_ABORT, 3, DepartureCause::Lost)
                ],
                "p{p} seed {seed}"
            );
            assert_eq!(members(&sim, p, "g"), None, "an aborted group is dropped");
        }
        sim.check_groups(true).unwrap();
    }
}

#[test]
fn leave_racing_with_the_last_contribution_completes_the_construct_in_either_order() {
    // p2 leaves (never contributed) while p1 makes the last contribution: p0 gets
    // the two on different channels, in either order; p1 gets the leave before or
    // after its own call. Every order ends the same, with FT or without.
    for opts in [PLAIN, FT] {
        for leave_first_at_p0 in [false, true] {
            for leave_first_at_p1 in [false, true] {
                let case = format!(
                    "{opts:?} leave first at p0 {leave_first_at_p0}, at p1 {leave_first_at_p1}"
                );
                let mut sim = Sim::new(3);
                sim.construct(0, "g", &[0, 1, 2], opts).unwrap();
                assert!(sim.deliver(0, 1), "p1 has p0's contribution");
                sim.leave(2, b"g").unwrap();
                if leave_first_at_p1 {
                    assert!(sim.deliver(2, 1));
                }
                sim.construct(1, "g", &[0, 1, 2], opts).unwrap();
                if !leave_first_at_p1 {
                    assert!(sim.deliver(2, 1));
                }
                let at_p0 = if leave_first_at_p0 { [2, 1] } else { [1, 2] };
                assert_eq!(done(&sim, 0, "g"), [], "{case}");
                for from in at_p0 {
                    assert!(sim.deliver(from, 0));
                }
                sim.run();
                let mut want = vec![(Status::GROUP_LEFT, 2, DepartureCause::Left)];
                if opts.ft_collective {
                    want.push((Status::GROUP_MEMBER_FAILED, 2, DepartureCause::Left));
                }
                for p in [0, 1] {
                    assert_eq!(
                        done(&sim, p, "g"),
                        [(CollectiveOp::Construct, Status::SUCCESS)],
                        "p{p} {case}"
                    );
                    assert_eq!(events(&sim, p, "g"), want, "p{p} {case}");
                    assert_eq!(members(&sim, p, "g"), Some(vec![0, 1]), "p{p} {case}");
                }
                assert!(sim.procs.iter().all(|p| p.errors.is_empty()), "{case}");
                sim.check_groups(true).unwrap();
            }
        }
    }
}

#[test]
fn ft_construct_reports_every_departed_member_once_in_rank_order_then_completes() {
    let n = 8;
    let all: Vec<usize> = (0..n).collect();
    let mut sim = Sim::new(n);
    sim.construct(0, "g", &all, FT).unwrap();
    sim.leave(5, b"g").unwrap();
    sim.kill(3, false);
    sim.leave(6, b"g").unwrap();
    for p in [1, 2, 4, 7] {
        sim.construct(p, "g", &all, FT).unwrap();
    }
    sim.run_shuffled(11);
    for p in [0, 1, 2, 4, 7] {
        let evs = events(&sim, p, "g");
        let failed: Vec<_> = evs
            .iter()
            .filter(|e| e.0 == Status::GROUP_MEMBER_FAILED)
            .map(|e| (e.1, e.2))
            .collect();
        assert_eq!(
            failed,
            [
                (3, DepartureCause::Lost),
                (5, DepartureCause::Left),
                (6, DepartureCause::Left)
            ]
        );
        // The completion comes after the member-failed events.
        let last = sim.procs[p]
            .seen
            .iter()
            .rposition(|s| matches!(s, Seen::Done { .. }))
            .unwrap();
        let last_failed = sim.procs[p]
            .seen
            .iter()
            .rposition(
                |s| matches!(s, Seen::Event { code, .. } if *code == Status::GROUP_MEMBER_FAILED),
            )
            .unwrap();
        assert!(last_failed < last);
        assert_eq!(members(&sim, p, "g"), Some(vec![0, 1, 2, 4, 7]));
    }
    sim.check_groups(true).unwrap();
}

// ------------------------------------------------------------------- destruct

#[test]
fn leave_during_destruct_before_contributing_completes_on_the_survivors() {
    for opts in [PLAIN, FT] {
        let mut sim = constructed(3, opts);
        sim.destruct(0, "g").unwrap();
        sim.destruct(1, "g").unwrap();
        sim.leave(2, b"g").unwrap();
        sim.run_shuffled(5);
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g"),
                [
                    (CollectiveOp::Construct, Status::SUCCESS),
                    (CollectiveOp::Destruct, Status::SUCCESS)
                ],
                "{opts:?} p{p}"
            );
            assert_eq!(members(&sim, p, "g"), None);
        }
    }
}

#[test]
fn leave_during_destruct_after_contributing_keeps_the_contribution() {
    for opts in [PLAIN, FT] {
        let mut sim = constructed(3, opts);
        sim.destruct(2, "g").unwrap();
        assert_eq!(
            sim.leave(2, b"g").unwrap(),
            Some(Completion {
                op: CollectiveOp::Destruct,
                seq: 1,
                status: Status::ERR_NOT_A_MEMBER
            })
        );
        sim.destruct(0, "g").unwrap();
        sim.run();
        // p2's contribution counts, but p1 (current, not contributed) is still awaited.
        assert_eq!(done(&sim, 0, "g").len(), 1, "waits for p1");
        sim.destruct(1, "g").unwrap();
        sim.run();
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g")[1],
                (CollectiveOp::Destruct, Status::SUCCESS)
            );
        }
        assert!(
            sim.procs.iter().all(|p| p.errors.is_empty()),
            "{:?}",
            sim.procs.iter().map(|p| &p.errors).collect::<Vec<_>>()
        );
    }
}

#[test]
fn leave_racing_with_the_last_contribution_completes_the_destruct_in_either_order() {
    for opts in [PLAIN, FT] {
        for leave_first in [false, true] {
            let mut sim = constructed(3, opts);
            sim.destruct(0, "g").unwrap();
            assert!(sim.deliver(0, 1));
            sim.leave(2, b"g").unwrap();
            sim.destruct(1, "g").unwrap();
            let at_p0 = if leave_first { [2, 1] } else { [1, 2] };
            for from in at_p0 {
                assert!(sim.deliver(from, 0));
            }
            sim.run();
            for p in [0, 1] {
                assert_eq!(
                    done(&sim, p, "g"),
                    [
                        (CollectiveOp::Construct, Status::SUCCESS),
                        (CollectiveOp::Destruct, Status::SUCCESS)
                    ],
                    "{opts:?} leave first {leave_first} p{p}"
                );
                assert_eq!(
                    events(&sim, p, "g"),
                    [(Status::GROUP_LEFT, 2, DepartureCause::Left)],
                    "no member-failed report for a destruct"
                );
                assert_eq!(members(&sim, p, "g"), None);
            }
            sim.check_groups(true).unwrap();
        }
    }
}

#[test]
fn loss_during_destruct_completes_on_the_survivors_before_and_after_contributing() {
    for (contributed, opts) in [(false, PLAIN), (true, PLAIN), (false, FT), (true, FT)] {
        let mut sim = constructed(3, opts);
        if contributed {
            sim.destruct(2, "g").unwrap();
        }
        sim.kill(2, false);
        sim.destruct(0, "g").unwrap();
        sim.destruct(1, "g").unwrap();
        sim.run_shuffled(9);
        for p in [0, 1] {
            assert_eq!(
                done(&sim, p, "g")[1],
                (CollectiveOp::Destruct, Status::SUCCESS),
                "contributed={contributed}"
            );
            assert_eq!(members(&sim, p, "g"), None);
        }
    }
}

// ---------------------------------------------------------------------- fence

#[test]
fn fence_without_ft_fails_with_proc_term_wo_sync_when_a_member_is_lost() {
    let mut sim = constructed(3, PLAIN);
    sim.fence(0, "g", false).unwrap();
    sim.fence(1, "g", false).unwrap();
    sim.kill(2, false);
    sim.run();
    for p in [0, 1] {
        assert_eq!(
            done(&sim, p, "g")[1],
            (CollectiveOp::Fence, Status::ERR_PROC_TERM_WO_SYNC)
        );
        assert_eq!(
            members(&sim, p, "g"),
            Some(vec![0, 1]),
            "the group lives on"
        );
    }
}

#[test]
fn fence_without_ft_fails_with_not_a_member_when_a_member_leaves() {
    let mut sim = constructed(3, PLAIN);
    sim.fence(0, "g", false).unwrap();
    sim.fence(1, "g", false).unwrap();
    sim.leave(2, b"g").unwrap();
    sim.run();
    for p in [0, 1] {
        assert_eq!(
            done(&sim, p, "g")[1],
            (CollectiveOp::Fence, Status::ERR_NOT_A_MEMBER)
        );
    }
}

#[test]
fn fence_with_ft_adjusts_to_departures() {
    let mut sim = constructed(4, PLAIN);
    for p in [0, 1] {
        sim.fence(p, "g", true).unwrap();
    }
    sim.leave(2, b"g").unwrap();
    sim.kill(3, false);
    sim.run_shuffled(1);
    for p in [0, 1] {
        assert_eq!(
            done(&sim, p, "g")[1],
            (CollectiveOp::Fence, Status::SUCCESS)
        );
    }
    // And the next fence runs over the survivors.
    for p in [0, 1] {
        sim.fence(p, "g", false).unwrap();
    }
    sim.run();
    for p in [0, 1] {
        assert_eq!(
            done(&sim, p, "g")[2],
            (CollectiveOp::Fence, Status::SUCCESS)
        );
    }
}

#[test]
fn fence_contribution_made_before_a_leave_stands() {
    let mut sim = constructed(3, PLAIN);
    sim.fence(2, "g", false).unwrap();
    sim.leave(2, b"g").unwrap();
    sim.fence(0, "g", false).unwrap();
    sim.fence(1, "g", false).unwrap();
    sim.run_shuffled(4);
    for p in [0, 1] {
        assert_eq!(
            done(&sim, p, "g")[1],
            (CollectiveOp::Fence, Status::SUCCESS)
        );
    }
}

#[test]
fn fence_opened_after_a_known_departure_expects_only_the_current_members() {
    let mut sim = constructed(3, PLAIN);
    sim.leave(2, b"g").unwrap();
    sim.run();
    sim.fence(0, "g", false).unwrap();
    sim.fence(1, "g", false).unwrap();
    sim.run();
    for p in [0, 1] {
        assert_eq!(
            done(&sim, p, "g")[1],
            (CollectiveOp::Fence, Status::SUCCESS)
        );
    }
}

#[test]
fn a_member_one_collective_ahead_is_accepted_and_counted() {
    let mut sim = constructed(3, PLAIN);
    // p2's channels are slow: p0 and p1 finish fence 1 and start fence 2 before p2
    // sees anything.
    sim.fence(0, "g", false).unwrap();
    sim.fence(1, "g", false).unwrap();
    sim.fence(2, "g", false).unwrap();
    sim.hold(0, 2);
    sim.hold(1, 2);
    sim.run();
    assert_eq!(done(&sim, 0, "g").len(), 2);
    sim.fence(0, "g", false).unwrap();
    sim.fence(1, "g", false).unwrap();
    sim.release(0, 2);
    sim.release(1, 2);
    sim.run();
    sim.fence(2, "g", false).unwrap();
    sim.run();
    for p in 0..3 {
        assert_eq!(done(&sim, p, "g").len(), 3, "p{p}");
        assert!(done(&sim, p, "g").iter().all(|d| d.1 == Status::SUCCESS));
    }
    assert!(sim.procs.iter().all(|p| p.errors.is_empty()));
}

// --------------------------------------------------------- notify termination

#[test]
fn notify_termination_raises_member_failed_for_losses_not_for_leaves() {
    let opts = ConstructOptions {
        ft_collective: false,
        notify_termination: true,
    };
    let mut sim = constructed(4, opts);
    sim.leave(3, b"g").unwrap();
    sim.kill(2, false);
    assert!(sim.deliver(3, 0) && sim.deliver(2, 0));
    sim.run();
    assert_eq!(
        events(&sim, 0, "g"),
        [
            (Status::GROUP_LEFT, 3, DepartureCause::Left),
            (Status::GROUP_MEMBER_FAILED, 2, DepartureCause::Lost)
        ]
    );
    let mut quiet = constructed(3, PLAIN);
    quiet.kill(2, false);
    quiet.run();
    assert_eq!(
        events(&quiet, 0, "g"),
        [],
        "no notification without the directive"
    );
    assert_eq!(members(&quiet, 0, "g"), Some(vec![0, 1]));
}

// ------------------------------------------------------------------ bad input

fn job() -> (Nspace, impl Fn(u32) -> ProcId) {
    let ns = Nspace::new("job").unwrap();
    (ns, move |r| ProcId::new(ns, r).unwrap())
}

/// Rank 0's outputs for a non-FT construct over ranks 0..3 of "job" in which rank 1
/// contributes and rank 2 departs by `depart` (after rank 0's own call), and the
/// list afterwards.
fn non_ft_construct_with_rank_2_departing(
    depart: impl FnOnce(&mut Groups, ProcId) -> Result<(), GroupError>,
) -> (Vec<Output>, Groups) {
    let (ns, p) = job();
    let id = gid("g");
    let mut g = Groups::new(p(0));
    g.construct(id, Roster::from_ranks(ns, 0..3).unwrap(), PLAIN)
        .unwrap();
    let mut out: Vec<Output> = std::iter::from_fn(|| g.poll_output().map(|o| o.output)).collect();
    g.on_message(&Message {
        group: id,
        from: p(1),
        body: Body::Contribute {
            op: CollectiveOp::Construct,
            seq: 0,
        },
    })
    .unwrap();
    out.extend(std::iter::from_fn(|| g.poll_output().map(|o| o.output)));
    depart(&mut g, p(2)).unwrap();
    out.extend(std::iter::from_fn(|| g.poll_output().map(|o| o.output)));
    (out, g)
}

#[test]
fn leave_during_non_ft_construct_completes_on_survivors() {
    let (_, p) = job();
    let (out, mut g) = non_ft_construct_with_rank_2_departing(|g, leaver| {
        g.on_message(&Message {
            group: gid("g"),
            from: leaver,
            body: Body::Left,
        })
    });
    let construct0 = Body::Contribute {
        op: CollectiveOp::Construct,
        seq: 0,
    };
    assert_eq!(
        out,
        [
            Output::Send(construct0),
            Output::Notify(Notification {
                code: Status::GROUP_LEFT,
                proc: p(2),
                cause: DepartureCause::Left
            }),
            Output::Complete(Completion {
                op: CollectiveOp::Construct,
                seq: 0,
                status: Status::SUCCESS
            })
        ]
    );
    let rec = g.get(&gid("g")).unwrap();
    assert_eq!(rec.phase(), Phase::Active);
    assert_eq!(rec.members().collect::<Vec<_>>(), [p(0), p(1)]);
    // The survivors carry on: a fence without FT expects only them.
    g.fence(&gid("g"), false).unwrap();
    while g.poll_output().is_some() {}
    g.on_message(&Message {
        group: gid("g"),
        from: p(1),
        body: Body::Contribute {
            op: CollectiveOp::Fence,
            seq: 1,
        },
    })
    .unwrap();
    assert_eq!(
        g.poll_output().map(|o| o.output),
        Some(Output::Complete(Completion {
            op: CollectiveOp::Fence,
            seq: 1,
            status: Status::SUCCESS
        }))
    );
}

#[test]
fn loss_during_non_ft_construct_aborts_it() {
    let (_, p) = job();
    let (out, g) = non_ft_construct_with_rank_2_departing(|g, lost| g.on_lost(&lost).map(|_| ()));
    assert_eq!(
        out[1..],
        [
            Output::Notify(Notification {
                code: Status::GROUP_CONSTRUCT_ABORT,
                proc: p(2),
                cause: DepartureCause::Lost
            }),
            Output::Complete(Completion {
                op: CollectiveOp::Construct,
                seq: 0,
                status: Status::GROUP_CONSTRUCT_ABORT
            })
        ]
    );
    assert!(g.get(&gid("g")).is_none(), "the aborted record went");
}

#[test]
fn contributions_that_do_not_fit_are_refused_and_change_nothing() {
    let (ns, p) = job();
    let id = gid("g");
    let mut g = Groups::new(p(0));
    let c = |from, op, seq| Message {
        group: id,
        from: p(from),
        body: Body::Contribute { op, seq },
    };
    g.invite(id, Roster::from_ranks(ns, 0..3).unwrap()).unwrap();
    // Before p0 contributes to the construct, nobody can have finished it: a
    // contribution to the next collective is not genuine.
    assert_eq!(
        g.on_message(&c(1, CollectiveOp::Fence, 1)),
        Err(GroupError::NotInFlight { seq: 1 })
    );
    g.construct(id, Roster::from_ranks(ns, 0..3).unwrap(), PLAIN)
        .unwrap();
    while g.poll_output().is_some() {}
    g.on_message(&c(1, CollectiveOp::Construct, 0)).unwrap();
    let dup = g.on_message(&c(1, CollectiveOp::Construct, 0)).unwrap_err();
    assert_eq!(dup, GroupError::DuplicateContribution { rank: 1, seq: 0 });
    assert_eq!(dup.status(), Status::ERR_BAD_PARAM);
    // Two ahead: nobody can have finished fence 1 without p0.
    assert_eq!(
        g.on_message(&c(1, CollectiveOp::Fence, 9)),
        Err(GroupError::NotInFlight { seq: 9 })
    );
    assert!(matches!(
        g.on_message(&c(2, CollectiveOp::Fence, 0)),
        Err(GroupError::OpMismatch { seq: 0, .. })
    ));
    assert_eq!(
        g.on_message(&c(7, CollectiveOp::Construct, 0)),
        Err(GroupError::NotAMember)
    );
    g.on_message(&c(2, CollectiveOp::Construct, 0)).unwrap();
    while g.poll_output().is_some() {}
    assert_eq!(g.get(&id).unwrap().completed_collectives(), 1);
    // The construct is over: a late contribution to it is not in flight.
    assert_eq!(
        g.on_message(&c(2, CollectiveOp::Construct, 0)),
        Err(GroupError::NotInFlight { seq: 0 })
    );
    // A destruct opened by p1 makes p0's fence a mismatch.
    g.on_message(&c(1, CollectiveOp::Destruct, 1)).unwrap();
    assert!(matches!(
        g.fence(&id, false),
        Err(GroupError::OpMismatch { seq: 1, .. })
    ));
    // A construct contribution past collective 0 is not in flight either.
    assert_eq!(
        g.on_message(&c(2, CollectiveOp::Construct, 1)),
        Err(GroupError::NotInFlight { seq: 1 })
    );
    assert_eq!(g.get(&id).unwrap().member_count(), 3);
}

#[test]
fn calls_in_the_wrong_phase_are_refused() {
    let (ns, p) = job();
    let id = gid("g");
    let roster = Roster::from_ranks(ns, 0..2).unwrap();
    let mut g = Groups::new(p(0));
    assert_eq!(
        g.fence(&id, false).unwrap_err().status(),
        Status::ERR_NOT_FOUND
    );
    assert_eq!(g.destruct(&id).unwrap_err().status(), Status::ERR_NOT_FOUND);
    g.invite(id, roster.clone()).unwrap();
    assert_eq!(g.fence(&id, false), Err(GroupError::NotJoined));
    assert_eq!(
        g.fence(&id, false).unwrap_err().status(),
        Status::ERR_NOT_FOUND
    );
    let other = Roster::from_ranks(ns, 0..3).unwrap();
    assert_eq!(
        g.construct(id, other, PLAIN),
        Err(GroupError::MembershipMismatch)
    );
    g.construct(id, roster.clone(), PLAIN).unwrap();
    while g.poll_output().is_some() {}
    assert_eq!(
        g.construct(id, roster.clone(), PLAIN),
        Err(GroupError::AlreadyExists)
    );
    assert_eq!(
        g.fence(&id, false),
        Err(GroupError::Busy),
        "construct still in flight"
    );
    let outsider = Roster::from_ranks(ns, 1..3).unwrap();
    assert_eq!(
        g.construct(gid("h"), outsider, PLAIN),
        Err(GroupError::CallerNotListed)
    );
    assert!(g.get(&gid("h")).is_none());
    assert_eq!(
        g.on_lost(&p(9)),
        Ok(0),
        "a loss outside every group changes nothing"
    );
}

#[test]
fn group_ranks_do_not_depend_on_the_order_members_are_listed() {
    let (ns, p) = job();
    let other = Nspace::new("aaa").unwrap();
    let q = ProcId::new(other, 4).unwrap();
    let a = Roster::new(&[p(2), q, p(0), p(7)]).unwrap();
    let b = Roster::new(&[p(7), p(0), q, p(2)]).unwrap();
    assert_eq!(a, b);
    let order: Vec<ProcId> = a.iter().collect();
    assert_eq!(order, [q, p(0), p(2), p(7)], "namespace, then rank");
    assert_eq!(a.index_of(&p(7)), Some(3));
    assert_eq!(a.index_of(&p(1)), None);
    assert_eq!(
        Roster::new(&[p(1), p(1)]).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    assert_eq!(
        Roster::new(&[]).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    let dense = Roster::from_ranks(ns, 10..20).unwrap();
    assert_eq!(dense.index_of(&p(15)), Some(5));
    assert_eq!(dense.get(5), Some(p(15)));
    assert_eq!(
        dense,
        Roster::new(&(10..20).map(p).collect::<Vec<_>>()).unwrap()
    );
}
