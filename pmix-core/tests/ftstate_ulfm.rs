//! ULFM conformance, re-expressed on the tracker (docs/design.md §5) and run through the
//! simulator: failure reports and what they make fail, acknowledgement, `get_failed`
//! prefixes, agreement, shrink and revoke, and trackers of different groups kept
//! apart. A graceful leave is not a failure.

mod support;

use pmix_core::ftstate::{AgreeError, Agreement, FtError, OpError, Operation, Tracker};
use pmix_core::group::ConstructOptions;
use pmix_core::{PmixError, Status};
use support::sim::{Exchange, Outcome, Sim};

/// `n` processes with tracker "w" over all of them.
fn world(n: usize) -> Sim {
    let mut sim = Sim::new(n);
    sim.make_tracker("w", &(0..n).collect::<Vec<_>>());
    sim
}

fn last_outcome(sim: &Sim, p: usize, key: &str) -> Outcome {
    sim.member(p, key)
        .unwrap()
        .results
        .last()
        .expect("an exchange completed")
        .outcome
        .clone()
}

/// Every live member of "w" agrees with its flag; returns each one's result.
fn agree(sim: &mut Sim, flags: &[(usize, u32)], seed: u64) -> Vec<Agreement> {
    for &(p, f) in flags {
        sim.exchange(p, "w", Exchange::Agree(f)).unwrap();
    }
    sim.run_shuffled(seed);
    sim.check_decisions().unwrap();
    flags
        .iter()
        .map(|&(p, _)| match last_outcome(sim, p, "w") {
            Outcome::Agreed(a) => a,
            o => panic!("p{p}: {o:?}"),
        })
        .collect()
}

#[test]
fn without_failures_counts_are_zero_acks_are_zero_agree_is_an_and_and_shrink_is_the_identity() {
    let mut sim = world(4);
    for p in 0..4 {
        let t = sim.tracker_mut(p, "w");
        assert_eq!(t.get_failed(), [] as [u32; 0]);
        assert_eq!(t.ack_failed(0), 0);
        assert_eq!(t.ack_failed(1000), 0);
        assert_eq!(t.get_acked(), [] as [u32; 0]);
        for op in [
            Operation::Send { to: 3 },
            Operation::Recv { from: 0 },
            Operation::RecvAny { nonblocking: false },
            Operation::RecvAny { nonblocking: true },
            Operation::Collective,
        ] {
            assert_eq!(t.check(op), Ok(()), "{op:?}");
        }
    }
    let results = agree(
        &mut sim,
        &[(0, 0b1111), (1, 0b1101), (2, 0b0111), (3, 0b1111)],
        1,
    );
    assert!(
        results.iter().all(|a| a.result() == Ok(0b0101)),
        "{results:?}"
    );
    for p in 0..4 {
        sim.exchange(p, "w", Exchange::Shrink("w2".into())).unwrap();
    }
    sim.run_shuffled(2);
    for p in 0..4 {
        assert_eq!(
            last_outcome(&sim, p, "w"),
            Outcome::Shrunk {
                new_size: 4,
                new_rank: Some(p as u32),
                survivors: vec![0, 1, 2, 3]
            }
        );
        assert_eq!(sim.member(p, "w2").unwrap().members, [0, 1, 2, 3]);
    }
}

/// `n` processes with tracker "w"; `victims` die and p0 learns of them in that order.
fn detected_at_p0(n: usize, victims: &[usize]) -> Sim {
    let mut sim = world(n);
    for &v in victims {
        sim.kill(v, false);
        assert!(sim.deliver(v, 0), "p0 hears of {v}");
    }
    sim
}

#[test]
fn a_reported_rank_fails_point_to_point_collectives_and_wildcard_receives() {
    let mut sim = detected_at_p0(4, &[2]);
    assert_eq!(
        sim.report(0, "w", 2),
        Ok(false),
        "a second report changes nothing"
    );
    let t = sim.tracker(0, "w");
    assert_eq!(t.get_failed(), [2]);
    assert_eq!(
        t.check(Operation::Send { to: 2 }),
        Err(OpError::ProcFailed { rank: 2 })
    );
    assert_eq!(
        t.check(Operation::Recv { from: 2 }),
        Err(OpError::ProcFailed { rank: 2 })
    );
    assert_eq!(
        t.check(Operation::Send { to: 1 }),
        Ok(()),
        "other peers are fine"
    );
    assert_eq!(
        t.check(Operation::Collective),
        Err(OpError::ProcFailed { rank: 2 })
    );
    assert_eq!(
        t.check(Operation::RecvAny { nonblocking: false }),
        Err(OpError::ProcFailed { rank: 2 })
    );
    let pending = t
        .check(Operation::RecvAny { nonblocking: true })
        .unwrap_err();
    assert_eq!(pending, OpError::ProcFailedPending { rank: 2 });
    assert_eq!(pending.status(), Status::ERR_PROC_TERM_WO_SYNC);
    assert_eq!(t.check(Operation::Agree), Ok(()));
    assert_eq!(
        t.check(Operation::Send { to: 9 }).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    // p1 has not heard yet: nothing fails there.
    assert_eq!(sim.tracker(1, "w").check(Operation::Collective), Ok(()));
}

#[test]
fn acknowledging_every_failure_clears_wildcard_receives_but_not_collectives() {
    let mut sim = detected_at_p0(4, &[3, 1]);
    assert_eq!(sim.ack(0, "w", u32::MAX), 2);
    let t = sim.tracker(0, "w");
    assert_eq!(t.check(Operation::RecvAny { nonblocking: false }), Ok(()));
    assert_eq!(t.check(Operation::RecvAny { nonblocking: true }), Ok(()));
    assert_eq!(
        t.check(Operation::Collective),
        Err(OpError::ProcFailed { rank: 3 })
    );
    assert_eq!(
        t.check(Operation::Send { to: 1 }),
        Err(OpError::ProcFailed { rank: 1 })
    );
}

#[test]
fn partial_acknowledgement_follows_detection_order_and_never_moves_back() {
    let mut sim = detected_at_p0(8, &[5, 1, 3]);
    assert_eq!(sim.tracker(0, "w").get_failed(), [5, 1, 3]);
    assert_eq!(sim.ack(0, "w", 2), 2);
    assert_eq!(sim.tracker(0, "w").get_acked(), [5, 1]);
    assert_eq!(
        sim.tracker(0, "w")
            .check(Operation::RecvAny { nonblocking: false }),
        Err(OpError::ProcFailed { rank: 3 })
    );
    assert_eq!(sim.ack(0, "w", 1), 2, "monotone");
    assert_eq!(sim.tracker(0, "w").get_acked(), [5, 1]);
    assert_eq!(sim.ack(0, "w", 0), 2);
    assert_eq!(sim.ack(0, "w", 10), 3);
    assert_eq!(sim.tracker(0, "w").get_acked(), [5, 1, 3]);
    // Another process heard of them in another order and acknowledges in its own.
    sim.run();
    assert_eq!(sim.ack(2, "w", 1), 1);
    assert_eq!(sim.tracker(2, "w").get_acked().len(), 1);
}

#[test]
fn the_acked_set_is_frozen_until_the_next_ack() {
    let mut sim = world(5);
    sim.kill(4, false);
    sim.run();
    let t = sim.tracker_mut(0, "w");
    assert_eq!(t.ack_failed(u32::MAX), 1);
    assert_eq!(t.get_acked(), [4]);
    sim.kill(2, false);
    sim.run();
    let t = sim.tracker_mut(0, "w");
    assert_eq!(t.get_failed(), [4, 2]);
    assert_eq!(
        t.get_acked(),
        [4],
        "a new failure does not change the acked set"
    );
    assert_eq!(
        t.check(Operation::RecvAny { nonblocking: true }),
        Err(OpError::ProcFailedPending { rank: 2 })
    );
    assert_eq!(t.ack_failed(u32::MAX), 2);
    assert_eq!(t.get_acked(), [4, 2]);
}

#[test]
fn get_failed_answers_are_prefixes_of_later_ones_under_interleaved_reports() {
    for seed in 0..10 {
        let mut sim = world(6);
        let mut history: Vec<Vec<Vec<u32>>> = vec![Vec::new(); 6];
        let snapshot = |sim: &Sim, history: &mut Vec<Vec<Vec<u32>>>| {
            for (p, h) in history.iter_mut().enumerate() {
                if let Some(m) = sim.member(p, "w") {
                    h.push(m.tracker.get_failed().to_vec());
                }
            }
        };
        // Losses arrive in different orders at each process, mixed with local
        // detector reports (a suspicion of rank 1 at p0 only).
        sim.kill(5, false);
        sim.kill(3, false);
        for k in 0..4 {
            sim.deliver_nth(seed as usize * 7 + k);
            snapshot(&sim, &mut history);
        }
        sim.report(0, "w", 1).unwrap();
        snapshot(&sim, &mut history);
        sim.kill(2, true);
        sim.run_shuffled(seed);
        snapshot(&sim, &mut history);
        for (p, h) in history.iter().enumerate() {
            for w in h.windows(2) {
                assert!(
                    w[1].starts_with(&w[0]),
                    "p{p} seed {seed}: {:?} then {:?}",
                    w[0],
                    w[1]
                );
            }
        }
        let mut at0 = history[0].last().unwrap().clone();
        at0.sort_unstable();
        assert_eq!(at0, [1, 2, 3, 5]);
    }
}

#[test]
fn agreement_with_a_non_contributor_raises_the_same_error_everywhere() {
    let mut sim = world(4);
    sim.kill(3, false);
    // Nobody acknowledged the failure before agreeing.
    let results = agree(&mut sim, &[(0, 0b11), (1, 0b01), (2, 0b11)], 5);
    for a in &results {
        assert_eq!(
            a.result(),
            Err(AgreeError::ProcFailed {
                rank: 3,
                flag: 0b01
            }),
            "flag is still agreed"
        );
        assert_eq!(a.error.unwrap().status(), Status::ERR_PROC_TERM_WO_SYNC);
    }
    // After the failed agreement, every process knows the non-contributor failed.
    for p in 0..3 {
        assert!(sim.tracker(p, "w").get_failed().contains(&3));
    }
}

#[test]
fn agreement_succeeds_once_every_contributor_acknowledged_the_failure() {
    let mut sim = world(4);
    sim.kill(3, false);
    sim.run();
    for p in 0..3 {
        assert_eq!(sim.tracker_mut(p, "w").ack_failed(u32::MAX), 1);
    }
    let results = agree(&mut sim, &[(0, 7), (1, 6), (2, 7)], 3);
    assert!(results.iter().all(|a| a.result() == Ok(6)), "{results:?}");
}

#[test]
fn mismatched_acked_sets_raise_the_error_at_every_member() {
    let mut sim = world(4);
    sim.kill(3, false);
    sim.run();
    sim.tracker_mut(0, "w").ack_failed(1);
    sim.tracker_mut(2, "w").ack_failed(1);
    // p1 did not acknowledge: everyone, p0 and p2 included, gets the error.
    let results = agree(&mut sim, &[(0, 1), (1, 1), (2, 1)], 8);
    assert!(
        results
            .iter()
            .all(|a| a.error == Some(AgreeError::ProcFailed { rank: 3, flag: 1 })),
        "{results:?}"
    );
}

#[test]
fn the_ack_then_agree_loop_converges() {
    for seed in 0..8 {
        let mut sim = world(6);
        sim.kill(4, false);
        sim.report(1, "w", 4).unwrap(); // p1 suspected it early
        let mut live: Vec<usize> = vec![0, 1, 2, 3, 5];
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds <= 4, "seed {seed}: no convergence");
            for &p in &live {
                sim.exchange(p, "w", Exchange::Agree(1)).unwrap();
            }
            if rounds == 1 {
                sim.kill(2, false); // dies during the first agreement
                live.retain(|&p| p != 2);
            }
            sim.run_shuffled(seed + rounds);
            sim.check_decisions().unwrap();
            let results: Vec<Agreement> = live
                .iter()
                .map(|&p| match last_outcome(&sim, p, "w") {
                    Outcome::Agreed(a) => a,
                    o => panic!("{o:?}"),
                })
                .collect();
            assert!(
                results.windows(2).all(|w| w[0] == w[1]),
                "uniform: {results:?}"
            );
            if results[0].error.is_none() {
                break;
            }
            for &p in &live {
                sim.tracker_mut(p, "w").ack_failed(u32::MAX);
            }
        }
        assert!(
            rounds >= 2,
            "the unacknowledged failure raised an error first"
        );
        for &p in &live {
            let mut acked = sim.tracker(p, "w").get_acked().to_vec();
            acked.sort_unstable();
            assert_eq!(acked, [2, 4], "p{p}");
        }
    }
}

#[test]
fn shrink_keeps_survivors_in_old_rank_order_and_excludes_every_failure_that_raised_an_error() {
    for seed in 0..8 {
        let mut sim = world(7);
        sim.kill(1, false);
        sim.kill(4, false);
        // Some processes see the losses (and get errors) before shrinking, some not.
        for k in 0..5 {
            sim.deliver_nth(seed as usize + k);
        }
        let mut raised = std::collections::BTreeSet::new();
        for p in [0, 2, 3, 5, 6] {
            for peer in 0..7 {
                if let Err(OpError::ProcFailed { rank }) =
                    sim.tracker(p, "w").check(Operation::Send { to: peer })
                {
                    raised.insert(rank);
                }
            }
        }
        sim.report(6, "w", 5).unwrap(); // a suspicion: p5 is excluded although alive
        raised.insert(5);
        for p in [0, 2, 3, 5, 6] {
            sim.exchange(p, "w", Exchange::Shrink("w2".into())).unwrap();
        }
        sim.run_shuffled(seed);
        sim.check_decisions().unwrap();
        for p in [0, 2, 3, 6] {
            let Outcome::Shrunk {
                new_size,
                new_rank,
                survivors,
            } = last_outcome(&sim, p, "w")
            else {
                panic!()
            };
            assert_eq!(survivors, [0, 2, 3, 6], "seed {seed}");
            assert!(raised.iter().all(|r| !survivors.contains(r)));
            assert_eq!(new_size, 4);
            assert_eq!(
                new_rank,
                survivors
                    .iter()
                    .position(|&s| s == p as u32)
                    .map(|r| r as u32)
            );
            assert_eq!(sim.member(p, "w2").unwrap().members, [0, 2, 3, 6]);
        }
        assert!(
            sim.member(5, "w2").is_none(),
            "the excluded process gets no new group"
        );
    }
}

#[test]
fn repeated_shrinks_go_down_to_one_member() {
    for seed in 0..5u64 {
        let n = 6;
        let mut sim = world(n);
        let mut key = String::from("w");
        let mut live: Vec<usize> = (0..n).collect();
        let mut generation = 0;
        while live.len() > 1 {
            let victim = live[(seed as usize + generation) % live.len()];
            sim.kill(victim, seed % 2 == 0);
            live.retain(|&p| p != victim);
            generation += 1;
            let next = format!("w{generation}");
            for &p in &live {
                sim.exchange(p, &key, Exchange::Shrink(next.clone()))
                    .unwrap();
            }
            sim.run_shuffled(seed * 31 + generation as u64);
            sim.check_decisions().unwrap();
            for (new_rank, &p) in live.iter().enumerate() {
                let m = sim.member(p, &next).expect("survivor has the new tracker");
                assert_eq!(m.members, live, "seed {seed}");
                assert_eq!(m.tracker.my_rank(), new_rank as u32);
                assert_eq!(m.tracker.size(), live.len() as u32);
                assert_eq!(
                    m.tracker.get_failed(),
                    [] as [u32; 0],
                    "a fresh group starts clean"
                );
            }
            key = next;
        }
        let last = live[0];
        let t = sim.tracker(last, &key);
        assert_eq!((t.size(), t.my_rank()), (1, 0));
    }
}

#[test]
fn revoke_is_sticky_reports_its_first_transition_once_and_fails_all_but_agree_and_shrink() {
    let mut sim = world(4);
    assert!(sim.revoke(0, "w"));
    assert!(!sim.revoke(0, "w"), "already revoked");
    assert!(sim.revoke(2, "w"), "p2 had not heard yet");
    sim.run();
    for p in 0..4 {
        let m = sim.member(p, "w").unwrap();
        assert!(m.tracker.is_revoked());
        assert_eq!(
            m.revoke_transitions, 1,
            "p{p}: one transition, whatever the notices"
        );
        for op in [
            Operation::Send { to: 1 },
            Operation::Recv { from: 1 },
            Operation::RecvAny { nonblocking: false },
            Operation::Collective,
        ] {
            let e = m.tracker.check(op).unwrap_err();
            assert_eq!(
                (e, e.status()),
                (OpError::Revoked, Status::ERR_NOT_AVAILABLE)
            );
        }
        assert_eq!(m.tracker.check(Operation::Agree), Ok(()));
        assert_eq!(m.tracker.check(Operation::Shrink), Ok(()));
    }
    // Agreement and shrink still run on a revoked group.
    let results = agree(&mut sim, &[(0, 3), (1, 3), (2, 1), (3, 3)], 4);
    assert!(results.iter().all(|a| a.result() == Ok(1)));
    for p in 0..4 {
        sim.exchange(p, "w", Exchange::Shrink("fresh".into()))
            .unwrap();
    }
    sim.run();
    for p in 0..4 {
        let t = sim.tracker(p, "fresh");
        assert!(!t.is_revoked(), "the shrunk group is a new, usable group");
        assert_eq!(t.check(Operation::Collective), Ok(()));
    }
}

#[test]
fn a_failure_in_one_group_leaves_another_untouched() {
    let mut sim = Sim::new(4);
    sim.make_tracker("a", &[0, 1, 2]);
    sim.make_tracker("b", &[0, 3]);
    sim.kill(2, false);
    sim.run();
    assert_eq!(sim.tracker(0, "a").get_failed(), [2]);
    assert_eq!(sim.tracker(1, "a").get_failed(), [2]);
    for p in [0, 3] {
        let b = sim.tracker(p, "b");
        assert_eq!(b.get_failed(), [] as [u32; 0]);
        assert_eq!(b.check(Operation::Collective), Ok(()));
    }
    // Revoking "a" does not revoke "b".
    sim.revoke(0, "a");
    sim.run();
    assert!(!sim.tracker(0, "b").is_revoked());
}

#[test]
fn a_graceful_leave_is_not_a_failure() {
    let mut sim = Sim::new(3);
    let opts = ConstructOptions::default();
    for p in 0..3 {
        sim.construct(p, "g", &[0, 1, 2], opts).unwrap();
    }
    sim.run();
    sim.make_tracker("g", &[0, 1, 2]);
    sim.leave(2, b"g").unwrap();
    sim.run();
    for p in [0, 1] {
        let t = sim.tracker(p, "g");
        assert_eq!(t.get_failed(), [] as [u32; 0], "no failure");
        assert!(t.has_left(2));
        assert_eq!(t.check(Operation::Collective), Ok(()));
        assert_eq!(t.check(Operation::RecvAny { nonblocking: false }), Ok(()));
        let e = t.check(Operation::Send { to: 2 }).unwrap_err();
        assert_eq!(
            (e, e.status()),
            (OpError::Departed { rank: 2 }, Status::ERR_NOT_A_MEMBER)
        );
    }
    // The leaver does not contribute, yet the agreement raises no failure…
    for p in [0, 1] {
        sim.exchange(p, "g", Exchange::Agree(5)).unwrap();
    }
    sim.run();
    for p in [0, 1] {
        assert_eq!(
            last_outcome(&sim, p, "g"),
            Outcome::Agreed(Agreement {
                flag: 5,
                error: None
            })
        );
    }
    // …and a shrink drops it without calling it failed.
    for p in [0, 1] {
        sim.exchange(p, "g", Exchange::Shrink("g2".into())).unwrap();
    }
    sim.run();
    assert_eq!(sim.member(0, "g2").unwrap().members, [0, 1]);
    assert_eq!(sim.tracker(0, "g").get_failed(), [] as [u32; 0]);
    // A later termination of the leaver is not a failure of the group either.
    let mut t = Tracker::new(3, 0).unwrap();
    t.report_left(2).unwrap();
    assert_eq!(t.report_failure(2), Err(FtError::Departed { rank: 2 }));
    assert_eq!(
        t.report_failure(2).unwrap_err().status(),
        Status::ERR_NOT_A_MEMBER
    );
}
