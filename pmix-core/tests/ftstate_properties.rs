//! Property tests for the tracker algebra: combine is associative and commutative
//! (with the empty value as identity); the decision is the same at every survivor
//! whatever the order contributions arrive in, and equals the formula of docs/design.md §5;
//! the tracker answers every query as a plain model of the spec does.

mod support;

use std::collections::BTreeSet;

use pmix_core::ftstate::{AgreeValue, FtError, Mask, Tracker, View};
use proptest::prelude::*;
use support::sim::{DecisionSummary, Exchange, Sim, TrackerModel, compare};

/// What one member brings to an exchange.
#[derive(Debug, Clone)]
struct Member {
    failures: Vec<u32>,
    left: Vec<u32>,
    acked: u32,
    flag: u32,
}

fn members(max: u32) -> impl Strategy<Value = (u32, Vec<Member>)> {
    (1..max).prop_flat_map(|n| {
        let member = (
            prop::collection::vec(0..n, 0..6),
            prop::collection::vec(0..n, 0..3),
            0u32..8,
            any::<u32>(),
        )
            .prop_map(|(failures, left, acked, flag)| Member {
                failures,
                left,
                acked,
                flag,
            });
        (Just(n), prop::collection::vec(member, n as usize))
    })
}

/// Member `i`'s tracker after its reports (conflicting ones are refused and skipped).
fn tracker(n: u32, i: u32, m: &Member) -> Tracker {
    let mut t = Tracker::new(n, i).unwrap();
    for &l in &m.left {
        let _ = t.report_left(l);
    }
    for &f in &m.failures {
        let _ = t.report_failure(f);
    }
    t.ack_failed(m.acked);
    t
}

fn contribution(n: u32, i: u32, m: &Member) -> AgreeValue {
    let mut v = AgreeValue::new(n).unwrap();
    tracker(n, i, m).contribute(m.flag, &mut v).unwrap();
    v
}

fn combined(n: u32, parts: &[&AgreeValue]) -> AgreeValue {
    let mut acc = AgreeValue::new(n).unwrap();
    for p in parts {
        acc.combine(p).unwrap();
    }
    acc
}

proptest! {
    #[test]
    fn combine_is_associative_and_commutative((n, ms) in members(80), assign in prop::collection::vec(0u8..3, 80)) {
        let mut parts = [AgreeValue::new(n).unwrap(), AgreeValue::new(n).unwrap(), AgreeValue::new(n).unwrap()];
        for (i, m) in ms.iter().enumerate() {
            parts[assign[i] as usize].combine(&contribution(n, i as u32, m)).unwrap();
        }
        let [a, b, c] = &parts;
        let left = combined(n, &[&combined(n, &[a, b]), c]);
        let right = combined(n, &[a, &combined(n, &[b, c])]);
        prop_assert_eq!(&left, &right);
        prop_assert_eq!(combined(n, &[a, b]), combined(n, &[b, a]));
        prop_assert_eq!(&combined(n, &[a, &AgreeValue::new(n).unwrap()]), a, "identity");
    }

    #[test]
    fn a_combine_that_would_count_a_member_twice_is_refused_and_changes_nothing((n, ms) in members(40)) {
        let a = contribution(n, 0, &ms[0]);
        let mut b = combined(n, &[&a]);
        let before = b.clone();
        prop_assert_eq!(b.combine(&a), Err(FtError::DuplicateContribution { rank: 0 }));
        prop_assert_eq!(b, before);
    }

    #[test]
    fn every_survivor_decides_the_same_whatever_the_order_and_as_the_formula_says(
        (n, ms) in members(60),
        absent in prop::collection::vec(any::<bool>(), 60),
        left_absent in prop::collection::vec(any::<bool>(), 60),
        seeds in prop::collection::vec(any::<u64>(), 4),
    ) {
        let contributors: Vec<u32> = (0..n).filter(|&i| !absent[i as usize] || i == 0).collect();
        let gone_left: BTreeSet<u32> = (0..n).filter(|&i| !contributors.contains(&i) && left_absent[i as usize]).collect();
        let values: Vec<AgreeValue> = contributors.iter().map(|&i| contribution(n, i, &ms[i as usize])).collect();
        let mut decisions = Vec::new();
        for &seed in &seeds {
            // A random arrival order, then the departures the survivor saw.
            let mut order: Vec<usize> = (0..values.len()).collect();
            let mut x = seed | 1;
            for i in (1..order.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                order.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut acc = AgreeValue::new(n).unwrap();
            for &k in &order {
                acc.combine(&values[k]).unwrap();
            }
            for &l in &gone_left {
                acc.mark_left(l).unwrap();
            }
            decisions.push((DecisionSummary::of(&acc.decide()), acc));
        }
        for w in decisions.windows(2) {
            prop_assert_eq!(&w[0].0, &w[1].0);
            prop_assert_eq!(w[0].1.decide(), w[1].1.decide());
        }
        // The formula, computed the plain way.
        let trackers: Vec<Tracker> = contributors.iter().map(|&i| tracker(n, i, &ms[i as usize])).collect();
        let left: BTreeSet<u32> = trackers.iter().flat_map(|t| (0..n).filter(|&r| t.has_left(r))).chain(gone_left.iter().copied()).collect();
        let non: BTreeSet<u32> = (0..n).filter(|r| !contributors.contains(r) && !left.contains(r)).collect();
        let mut failed: BTreeSet<u32> = trackers.iter().flat_map(|t| t.get_failed().to_vec()).collect();
        failed.extend(non.iter().copied());
        let flag = contributors.iter().fold(u32::MAX, |f, &i| f & ms[i as usize].flag);
        let unacked = non.iter().copied().find(|r| trackers.iter().any(|t| !t.get_acked().contains(r)));
        let (summary, value) = &decisions[0];
        prop_assert_eq!(&summary.failed, &failed.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(summary.flag, flag);
        prop_assert_eq!(summary.unacked, unacked);
        // Shrink: survivors are the rest, in order, renumbered from 0.
        let map = value.decide().shrink();
        let survivors: Vec<u32> = (0..n).filter(|r| !failed.contains(r) && !left.contains(r)).collect();
        prop_assert_eq!(map.iter().collect::<Vec<_>>(), survivors.iter().enumerate().map(|(k, &o)| (o, k as u32)).collect::<Vec<_>>());
        prop_assert_eq!(map.new_size() as usize, survivors.len());
        for old in 0..n + 2 {
            prop_assert_eq!(map.new_rank(old), survivors.iter().position(|&s| s == old).map(|k| k as u32));
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Report(u32),
    Left(u32),
    ValidateLocal,
    /// Apply a decision to which this tracker and a peer (with these failures)
    /// contributed, the members in `absent` not contributing.
    ValidateGlobal(Vec<u32>, Vec<u32>),
    Agree(Vec<u32>),
    Ack(u32),
    Revoke,
}

fn op(n: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..n + 1).prop_map(Op::Report),
        1 => (0..n).prop_map(Op::Left),
        3 => Just(Op::ValidateLocal),
        2 => (prop::collection::vec(0..n, 0..4), prop::collection::vec(0..n, 0..3)).prop_map(|(f, a)| Op::ValidateGlobal(f, a)),
        1 => prop::collection::vec(0..n, 0..4).prop_map(Op::Agree),
        2 => (0..n + 2).prop_map(Op::Ack),
        1 => Just(Op::Revoke),
    ]
}

/// This tracker's contribution, a peer's (rank `me + 1`, knowing `peer_failures`),
/// the members of `absent` (other than those two) not contributing.
fn decision_value(t: &Tracker, peer_failures: &[u32], absent: &[u32]) -> AgreeValue {
    let n = t.size();
    let mut v = AgreeValue::new(n).unwrap();
    t.contribute(1, &mut v).unwrap();
    let me = t.my_rank();
    let mut peer = Tracker::new(n, (me + 1) % n).unwrap();
    for &f in peer_failures {
        let _ = peer.report_failure(f);
    }
    if n > 1 {
        peer.contribute(1, &mut v).unwrap();
    }
    for r in 0..n {
        if r != me && r != (me + 1) % n && !absent.contains(&r) {
            let mut other = AgreeValue::new(n).unwrap();
            Tracker::new(n, r)
                .unwrap()
                .contribute(1, &mut other)
                .unwrap();
            v.combine(&other).unwrap();
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn the_tracker_answers_every_query_as_the_plain_model((n, me) in (1u32..70).prop_flat_map(|n| (Just(n), 0..n)), ops in prop::collection::vec(op(70), 0..40)) {
        let mut t = Tracker::new(n, me).unwrap();
        let mut m = TrackerModel::new(n, me);
        for op in ops {
            match op {
                Op::Report(r) => prop_assert_eq!(t.report_failure(r).ok(), m.report_failure(r)),
                Op::Left(r) => prop_assert_eq!(t.report_left(r % n).ok(), m.report_left(r % n)),
                Op::ValidateLocal => prop_assert_eq!(t.validate_local(), m.validate_local()),
                Op::ValidateGlobal(peer, absent) => {
                    let v = decision_value(&t, &peer, &absent);
                    let d = v.decide();
                    let agreed: BTreeSet<u32> = d.failed().collect();
                    prop_assert_eq!(t.validate_global(&d).unwrap(), m.validate_global(&agreed));
                }
                Op::Agree(absent) => {
                    let v = decision_value(&t, &[], &absent);
                    let d = v.decide();
                    let agreed: BTreeSet<u32> = d.failed().collect();
                    let a = t.agree(&d).unwrap();
                    prop_assert_eq!(a.flag, 1);
                    m.learn(&agreed);
                }
                Op::Ack(k) => prop_assert_eq!(t.ack_failed(k), m.ack_failed(k)),
                Op::Revoke => {
                    prop_assert_eq!(t.revoke(), !m.revoked);
                    m.revoked = true;
                }
            }
            compare(&t, &m).map_err(TestCaseError::fail)?;
            // The invariants the O(1) counts rely on.
            let (l, g) = (t.get_num_state(View::Local, Mask::ANY_FAILED), t.get_num_state(View::Global, Mask::ANY_FAILED));
            prop_assert!(g <= l && l as usize <= t.get_failed().len());
            prop_assert_eq!(t.get_num_state(View::Local, Mask::OK) + l + t.left_count(), n);
        }
    }

    #[test]
    fn decisions_agree_through_the_simulator_whatever_the_delivery_order_and_the_losses(
        n in 2usize..8,
        kills in prop::collection::vec((0usize..8, any::<bool>(), 0usize..30), 0..3),
        suspicions in prop::collection::vec((0usize..8, 0usize..8), 0..4),
        seed in any::<u64>(),
        rounds in 1usize..4,
    ) {
        let mut sim = Sim::new(n);
        sim.make_tracker("w", &(0..n).collect::<Vec<_>>());
        for (p, q) in suspicions {
            if p < n && q < n {
                let _ = sim.report(p, "w", q);
            }
        }
        let mut step = 0;
        for round in 0..rounds {
            for p in 0..n {
                if sim.procs[p].alive && !sim.member(p, "w").unwrap().exchange_pending() {
                    let kind = if round % 2 == 0 { Exchange::Agree(p as u32 | 1) } else { Exchange::ValidateGlobal };
                    sim.exchange(p, "w", kind).unwrap();
                }
            }
            for _ in 0..40 {
                for &(victim, drop, at) in &kills {
                    if at == step && victim < n {
                        sim.kill(victim, drop);
                    }
                }
                step += 1;
                sim.deliver_nth((seed as usize).wrapping_mul(step + 1));
            }
            sim.run_shuffled(seed ^ round as u64);
            sim.check_decisions().map_err(TestCaseError::fail)?;
        }
        for p in (0..n).filter(|&p| sim.procs[p].alive) {
            prop_assert!(sim.procs[p].errors.is_empty(), "{:?}", sim.procs[p].errors);
            compare(sim.tracker(p, "w"), &sim.model_of(p, "w")).map_err(TestCaseError::fail)?;
            prop_assert!(!sim.member(p, "w").unwrap().exchange_pending(), "every exchange of a survivor completes");
        }
    }
}
