//! The 2011 rank-state API (seed 003, docs/design.md §5): `validate_local` and
//! `validate_global` counts (total and new), NEW and OLD across several validates,
//! `L = G` after a global validate, mask queries, count-only calls and the `Size`
//! error that writes nothing. Global validation runs through the simulator.

mod support;

use pmix_core::ftstate::{
    AgreeValue, FtError, Mask, Modifier, RankInfo, RankState, Tracker, Validation, View,
};
use pmix_core::{PmixError, Status};
use support::sim::{Exchange, Outcome, Sim};

fn ranks(t: &Tracker, view: View, mask: Mask) -> Vec<u32> {
    let mut out = vec![RankInfo::default(); t.size() as usize];
    let n = t.get_state(view, mask, &mut out).unwrap();
    out[..n].iter().map(|i| i.rank).collect()
}

/// Runs validate_global at every live member of "w"; returns p's validation.
fn validate_global(sim: &mut Sim, live: &[usize], seed: u64) -> Vec<Validation> {
    for &p in live {
        sim.exchange(p, "w", Exchange::ValidateGlobal).unwrap();
    }
    sim.run_shuffled(seed);
    sim.check_decisions().unwrap();
    live.iter()
        .map(
            |&p| match &sim.member(p, "w").unwrap().results.last().unwrap().outcome {
                Outcome::Validated(v) => *v,
                o => panic!("{o:?}"),
            },
        )
        .collect()
}

/// Ten processes with tracker "w"; p0's detector reports `ranks`, in that order.
fn reported_at_p0(sim: &mut Sim, ranks: &[usize]) {
    for &r in ranks {
        assert_eq!(sim.report(0, "w", r), Ok(true));
    }
}

fn ten() -> Sim {
    let mut sim = Sim::new(10);
    sim.make_tracker("w", &(0..10).collect::<Vec<_>>());
    sim
}

#[test]
fn validate_local_counts_every_known_failure_and_the_new_ones() {
    let mut sim = ten();
    let none = Validation {
        num_failed: 0,
        new_failures: 0,
    };
    assert_eq!(sim.validate_local(0, "w"), none);
    reported_at_p0(&mut sim, &[7, 3]);
    // Reports do not change L until a validate.
    assert_eq!(
        sim.tracker(0, "w")
            .get_num_state(View::Local, Mask::ANY_FAILED),
        0
    );
    let two = Validation {
        num_failed: 2,
        new_failures: 2,
    };
    assert_eq!(sim.validate_local(0, "w"), two);
    // A loss notice is a report too.
    sim.kill(1, false);
    assert!(sim.deliver(1, 0));
    let three = Validation {
        num_failed: 3,
        new_failures: 1,
    };
    assert_eq!(sim.validate_local(0, "w"), three);
    let same = Validation {
        num_failed: 3,
        new_failures: 0,
    };
    assert_eq!(sim.validate_local(0, "w"), same);
    // Local: nothing changed at p2, which validated nothing.
    assert_eq!(
        sim.validate_local(2, "w"),
        Validation {
            num_failed: 0,
            new_failures: 0
        }
    );
}

#[test]
fn new_and_old_follow_the_most_recent_update_across_several_validates() {
    let mut sim = ten();
    reported_at_p0(&mut sim, &[7, 3]);
    sim.validate_local(0, "w");
    let t = sim.tracker(0, "w");
    assert_eq!(ranks(t, View::Local, Mask::FAILED | Mask::NEW), [3, 7]);
    assert_eq!(
        ranks(t, View::Local, Mask::FAILED | Mask::OLD),
        [] as [u32; 0]
    );
    reported_at_p0(&mut sim, &[1]);
    sim.validate_local(0, "w");
    let t = sim.tracker(0, "w");
    assert_eq!(ranks(t, View::Local, Mask::FAILED | Mask::NEW), [1]);
    assert_eq!(ranks(t, View::Local, Mask::FAILED | Mask::OLD), [3, 7]);
    sim.validate_local(0, "w");
    let t = sim.tracker(0, "w");
    assert_eq!(
        ranks(t, View::Local, Mask::NEW),
        [] as [u32; 0],
        "nothing added"
    );
    assert_eq!(ranks(t, View::Local, Mask::OLD | Mask::FAILED), [1, 3, 7]);
    // No NULL before a global validate: nothing is recognized.
    assert_eq!(t.get_num_state(View::Local, Mask::NULL), 0);
    assert_eq!(t.get_num_state(View::Global, Mask::ANY_FAILED), 0);
    assert_eq!(t.get_num_state(View::Local, Mask::OK), 7);
}

#[test]
fn a_global_validate_agrees_on_the_union_and_sets_l_to_g_everywhere() {
    let mut sim = Sim::new(6);
    sim.make_tracker("w", &[0, 1, 2, 3, 4, 5]);
    // Different processes know different failures.
    sim.report(0, "w", 5).unwrap();
    sim.report(1, "w", 4).unwrap();
    sim.tracker_mut(0, "w").validate_local();
    // 4 and 5 are only suspected: alive, they contribute too.
    let v = validate_global(&mut sim, &[0, 1, 2, 3, 4, 5], 3);
    assert!(v.iter().all(|v| v.num_failed == 2), "{v:?}");
    assert_eq!(v[0].new_failures, 2, "new in G, even where L had 5");
    for p in 0..6 {
        let t = sim.tracker(p, "w");
        assert_eq!(
            ranks(t, View::Global, Mask::ANY_FAILED),
            [4, 5],
            "p{p}: the union"
        );
        assert_eq!(
            ranks(t, View::Local, Mask::ANY_FAILED),
            [4, 5],
            "p{p}: L = G"
        );
        assert_eq!(
            ranks(t, View::Local, Mask::FAILED),
            [] as [u32; 0],
            "all recognized"
        );
        assert_eq!(ranks(t, View::Local, Mask::NULL), [4, 5]);
    }
    // New in G for everyone; new in L only where L did not have it.
    assert_eq!(
        ranks(sim.tracker(0, "w"), View::Local, Mask::NULL | Mask::NEW),
        [4]
    );
    assert_eq!(
        ranks(sim.tracker(0, "w"), View::Local, Mask::NULL | Mask::OLD),
        [5]
    );
    assert_eq!(
        ranks(sim.tracker(0, "w"), View::Global, Mask::NULL | Mask::NEW),
        [4, 5]
    );
    assert_eq!(ranks(sim.tracker(2, "w"), View::Local, Mask::NEW), [4, 5]);
}

#[test]
fn global_validate_counts_total_and_new_and_includes_non_contributors() {
    let mut sim = Sim::new(5);
    sim.make_tracker("w", &[0, 1, 2, 3, 4]);
    sim.kill(4, false);
    let v = validate_global(&mut sim, &[0, 1, 2, 3], 1);
    assert!(
        v.iter().all(|v| *v
            == Validation {
                num_failed: 1,
                new_failures: 1
            }),
        "{v:?}"
    );
    sim.kill(1, false);
    let v = validate_global(&mut sim, &[0, 2, 3], 2);
    assert!(
        v.iter().all(|v| *v
            == Validation {
                num_failed: 2,
                new_failures: 1
            }),
        "{v:?}"
    );
    let v = validate_global(&mut sim, &[0, 2, 3], 3);
    assert!(
        v.iter().all(|v| *v
            == Validation {
                num_failed: 2,
                new_failures: 0
            }),
        "{v:?}"
    );
    for p in [0, 2, 3] {
        let t = sim.tracker(p, "w");
        assert_eq!(ranks(t, View::Global, Mask::NULL | Mask::OLD), [1, 4]);
        assert_eq!(t.get_num_state(View::Global, Mask::NULL | Mask::NEW), 0);
    }
}

#[test]
fn a_local_validate_after_a_global_one_marks_only_the_new_unrecognized_failures() {
    let mut sim = Sim::new(4);
    sim.make_tracker("w", &[0, 1, 2, 3]);
    sim.kill(3, false);
    validate_global(&mut sim, &[0, 1, 2], 4);
    sim.kill(2, false);
    sim.run();
    let t = sim.tracker_mut(0, "w");
    assert_eq!(
        t.validate_local(),
        Validation {
            num_failed: 2,
            new_failures: 1
        }
    );
    assert_eq!(ranks(t, View::Local, Mask::FAILED | Mask::NEW), [2]);
    assert_eq!(ranks(t, View::Local, Mask::NULL | Mask::OLD), [3]);
    assert_eq!(
        ranks(t, View::Local, Mask::NULL | Mask::NEW),
        [] as [u32; 0]
    );
    assert_eq!(
        ranks(t, View::Global, Mask::ANY_FAILED),
        [3],
        "G unchanged by a local validate"
    );
    let mut out = [RankInfo::default(); 4];
    assert_eq!(t.get_state(View::Local, Mask::ALL, &mut out), Ok(4));
    assert_eq!(
        out,
        [
            RankInfo {
                rank: 0,
                state: RankState::Ok,
                modifier: Modifier::Old
            },
            RankInfo {
                rank: 1,
                state: RankState::Ok,
                modifier: Modifier::Old
            },
            RankInfo {
                rank: 2,
                state: RankState::Failed,
                modifier: Modifier::New
            },
            RankInfo {
                rank: 3,
                state: RankState::Null,
                modifier: Modifier::Old
            },
        ]
    );
}

#[test]
fn validate_global_count_returns_the_masked_count_of_the_new_global_view() {
    let mut sim = Sim::new(4);
    sim.make_tracker("w", &[0, 1, 2, 3]);
    sim.kill(2, false);
    sim.kill(3, false);
    sim.run();
    // Run the exchange by hand for p0/p1 to reach validate_global_count.
    let mut value = AgreeValue::new(4).unwrap();
    for p in [0, 1] {
        sim.tracker(p, "w").contribute(0, &mut value).unwrap();
    }
    let d = value.decide();
    for p in [0, 1] {
        let t = sim.tracker_mut(p, "w");
        assert_eq!(t.validate_global_count(&d, Mask::NULL | Mask::NEW), Ok(2));
        assert_eq!(t.get_num_state(View::Global, Mask::OK), 2);
    }
}

#[test]
fn count_only_calls_ignore_the_array() {
    let mut t = Tracker::new(1000, 0).unwrap();
    for r in [10, 20, 30] {
        t.report_failure(r).unwrap();
    }
    t.validate_local();
    assert_eq!(t.get_state(View::Local, Mask::FAILED, &mut []), Ok(3));
    assert_eq!(t.get_state(View::Local, Mask::OK, &mut []), Ok(997));
    assert_eq!(t.get_num_state(View::Local, Mask::OK), 997);
}

#[test]
fn a_short_array_is_a_size_error_and_nothing_is_written() {
    let mut t = Tracker::new(16, 0).unwrap();
    for r in [1, 2, 3] {
        t.report_failure(r).unwrap();
    }
    t.validate_local();
    let sentinel = RankInfo {
        rank: 99,
        state: RankState::Null,
        modifier: Modifier::New,
    };
    let mut out = [sentinel; 2];
    let e = t
        .get_state(View::Local, Mask::FAILED, &mut out)
        .unwrap_err();
    assert_eq!(e, FtError::Size { needed: 3 });
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    assert_eq!(out, [sentinel; 2], "nothing written");
    // A longer array gets the answer and its tail is left alone.
    let mut out = [sentinel; 5];
    assert_eq!(t.get_state(View::Local, Mask::FAILED, &mut out), Ok(3));
    assert_eq!(out[3..], [sentinel; 2]);
}

#[test]
fn the_seed_example_detects_new_failures_between_two_global_validates() {
    // MPI_Comm_validate_global(comm, &new_failures); /* work */; again; if new ...
    let mut sim = Sim::new(4);
    sim.make_tracker("w", &[0, 1, 2, 3]);
    let start = validate_global(&mut sim, &[0, 1, 2, 3], 1);
    assert!(start.iter().all(|v| v.new_failures == 0));
    sim.kill(1, false);
    let end = validate_global(&mut sim, &[0, 2, 3], 2);
    for v in &end {
        assert!(v.new_failures > 0);
        let failed = ranks(sim.tracker(0, "w"), View::Global, Mask::NULL | Mask::NEW);
        assert_eq!(failed.len() as u32, v.new_failures);
        assert_eq!(failed, [1]);
    }
}

#[test]
fn bad_masks_ranks_sizes_and_contributions_are_refused() {
    assert_eq!(Mask::from_bits(0x20), Err(FtError::BadMask { bits: 0x20 }));
    assert_eq!(
        Mask::from_bits(0x20).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
    assert_eq!(Mask::from_bits(0x1f), Ok(Mask::ALL));
    assert_eq!(Tracker::new(0, 0).unwrap_err(), FtError::Empty);
    assert_eq!(
        Tracker::new(4, 4).unwrap_err(),
        FtError::RankOutOfRange { rank: 4, size: 4 }
    );
    assert!(matches!(
        Tracker::new(u32::MAX, 0),
        Err(FtError::TooLarge { .. })
    ));
    let mut t = Tracker::new(4, 1).unwrap();
    assert_eq!(
        t.report_failure(4),
        Err(FtError::RankOutOfRange { rank: 4, size: 4 })
    );
    assert_eq!(
        t.report_left(9),
        Err(FtError::RankOutOfRange { rank: 9, size: 4 })
    );
    t.report_failure(2).unwrap();
    assert_eq!(t.report_left(2), Err(FtError::AlreadyFailed { rank: 2 }));
    let mut v = AgreeValue::new(4).unwrap();
    t.contribute(1, &mut v).unwrap();
    assert_eq!(
        t.contribute(1, &mut v),
        Err(FtError::DuplicateContribution { rank: 1 })
    );
    let mut other = AgreeValue::new(5).unwrap();
    assert_eq!(
        t.contribute(1, &mut other),
        Err(FtError::SizeMismatch {
            expected: 5,
            got: 4
        })
    );
    assert_eq!(
        v.combine(&other),
        Err(FtError::SizeMismatch {
            expected: 4,
            got: 5
        })
    );
    let without_me = AgreeValue::new(4).unwrap();
    assert_eq!(
        t.validate_global(&without_me.decide()),
        Err(FtError::NotContributed)
    );
    assert_eq!(t.agree(&without_me.decide()), Err(FtError::NotContributed));
    assert!(t.shrink(&other.decide()).is_err());
    // Nothing changed through all that.
    assert_eq!(t.get_failed(), [2]);
    assert_eq!(t.get_num_state(View::Global, Mask::ANY_FAILED), 0);
}

#[test]
fn every_mask_on_a_thousand_members_answers_as_the_plain_model() {
    use std::collections::BTreeSet;
    use support::sim::{TrackerModel, compare};
    let n = 1000;
    let mut t = Tracker::new(n, 0).unwrap();
    let mut m = TrackerModel::new(n, 0);
    // Whole words of OK members, words with one failure, a word full of failures.
    let first: Vec<u32> = (1..200).step_by(37).chain(640..704).collect();
    for &r in &first {
        assert_eq!(t.report_failure(r).ok(), m.report_failure(r));
    }
    assert_eq!(t.report_left(900).ok(), m.report_left(900));
    assert_eq!(t.validate_local(), m.validate_local());
    compare(&t, &m).unwrap();
    // A global validate recognizing some of them (and learning 999 from a peer).
    let mut v = AgreeValue::new(n).unwrap();
    t.contribute(0, &mut v).unwrap();
    let mut peer = Tracker::new(n, 1).unwrap();
    peer.report_failure(999).unwrap();
    peer.contribute(0, &mut v).unwrap();
    for r in 2..n {
        if !first.contains(&r) && r != 999 && r != 900 {
            Tracker::new(n, r).unwrap().contribute(0, &mut v).unwrap();
        }
    }
    v.mark_left(900).unwrap();
    let agreed: BTreeSet<u32> = v.decide().failed().collect();
    assert_eq!(
        t.validate_global(&v.decide()).unwrap(),
        m.validate_global(&agreed)
    );
    compare(&t, &m).unwrap();
    for r in 704..768 {
        assert_eq!(t.report_failure(r).ok(), m.report_failure(r));
    }
    assert_eq!(t.validate_local(), m.validate_local());
    compare(&t, &m).unwrap();
}
