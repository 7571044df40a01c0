//! Property tests: member sets behave as `BTreeSet`s; after any sequence of joins
//! (constructs), leaves, losses and deliveries in any order, every survivor's
//! membership equals a plain `BTreeSet` model, and every construct ended at every
//! member as the simulator's model of docs/design.md §4 says (a leave lets it complete on
//! the survivors, FT or not; a loss aborts it without FT); rosters look processes
//! up both ways.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use pmix_core::group::{ConstructOptions, MemberSet, Nspace, ProcId, Roster};
use proptest::prelude::*;
use support::sim::{Sim, gid};

proptest! {
    #[test]
    fn member_set_behaves_as_a_btreeset(cap in 1u32..300, ops in prop::collection::vec((0u8..5, 0u32..320), 0..200)) {
        let mut s = MemberSet::new(cap).unwrap();
        let mut m = BTreeSet::new();
        for (op, i) in ops {
            match op {
                0 => prop_assert_eq!(s.insert(i).ok(), (i < cap).then(|| m.insert(i))),
                1 => prop_assert_eq!(s.remove(i).ok(), (i < cap).then(|| m.remove(&i))),
                2 => prop_assert_eq!(s.next_from(i), m.range(i..).next().copied()),
                3 => prop_assert_eq!(s.count_below(i), m.range(..i.min(cap)).count() as u32),
                _ => {
                    if i % 7 == 0 {
                        s.clear();
                        m.clear();
                    } else if i % 11 == 0 {
                        s.fill();
                        m = (0..cap).collect();
                    }
                }
            }
            prop_assert_eq!(s.contains(i), m.contains(&i));
            prop_assert_eq!(s.len() as usize, m.len());
            prop_assert!(s.iter().eq(m.iter().copied()));
        }
    }

    #[test]
    fn rosters_number_any_listing_the_same_way(ranks in prop::collection::btree_set(0u32..10_000, 1..60), split in 0usize..60, seed in any::<u64>()) {
        let a = Nspace::new("a").unwrap();
        let b = Nspace::new("b").unwrap();
        let mut procs: Vec<ProcId> = ranks
            .iter()
            .enumerate()
            .map(|(k, &r)| ProcId::new(if k < split { a } else { b }, r).unwrap())
            .collect();
        let sorted = Roster::new(&procs).unwrap();
        // Any permutation gives the same roster.
        let mut x = seed | 1;
        for i in (1..procs.len()).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            procs.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let shuffled = Roster::new(&procs).unwrap();
        prop_assert_eq!(&sorted, &shuffled);
        for (i, p) in sorted.iter().enumerate() {
            prop_assert_eq!(sorted.index_of(&p), Some(i as u32));
        }
        let mut expect = procs.clone();
        expect.sort();
        prop_assert!(sorted.iter().eq(expect.into_iter()));
        prop_assert_eq!(sorted.index_of(&ProcId::new(a, 20_000).unwrap()), None);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Construct(usize, usize),
    Leave(usize, usize),
    Kill(usize, bool),
    Fence(usize, usize, bool),
    Destruct(usize, usize),
    Deliver(usize),
}

fn op(n: usize, groups: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..n, 0..groups).prop_map(|(p, g)| Op::Construct(p, g)),
        2 => (0..n, 0..groups).prop_map(|(p, g)| Op::Leave(p, g)),
        1 => (0..n, any::<bool>()).prop_map(|(p, d)| Op::Kill(p, d)),
        2 => (0..n, 0..groups, any::<bool>()).prop_map(|(p, g, ft)| Op::Fence(p, g, ft)),
        1 => (0..n, 0..groups).prop_map(|(p, g)| Op::Destruct(p, g)),
        6 => (0..64usize).prop_map(Op::Deliver),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn membership_after_joins_leaves_and_losses_equals_a_btreeset_model(
        masks in prop::collection::vec(1u8..=255, 3),
        ops in prop::collection::vec(op(6, 3), 0..80),
        seed in any::<u64>(),
    ) {
        let n = 6;
        let mut sim = Sim::new(n);
        let lists: Vec<Vec<usize>> = masks.iter().map(|m| (0..n).filter(|&p| m & (1 << p) != 0).collect()).collect();
        // The plain model: who is in each group, by joins, leaves and losses.
        let mut model: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let mut dead = BTreeSet::new();
        for op in ops {
            match op {
                Op::Construct(p, g) => {
                    // One directive per group, so outcomes must agree.
                    let opts = ConstructOptions { ft_collective: g % 2 == 0, notify_termination: g == 1 };
                    if sim.construct(p, &format!("g{g}"), &lists[g], opts).is_ok() {
                        model.entry(g).or_insert_with(|| lists[g].iter().copied().filter(|q| !dead.contains(q)).collect());
                    }
                }
                Op::Leave(p, g) => {
                    if sim.leave(p, format!("g{g}").as_bytes()).is_ok() {
                        model.get_mut(&g).unwrap().remove(&p);
                    }
                }
                Op::Kill(p, drop) => {
                    sim.kill(p, drop);
                    dead.insert(p);
                    for m in model.values_mut() {
                        m.remove(&p);
                    }
                }
                Op::Fence(p, g, ft) => {
                    let _ = sim.fence(p, &format!("g{g}"), ft);
                }
                Op::Destruct(p, g) => {
                    let _ = sim.destruct(p, &format!("g{g}"));
                }
                Op::Deliver(k) => {
                    sim.deliver_nth(k);
                }
            }
            sim.check_groups(false).map_err(TestCaseError::fail)?;
        }
        sim.run_shuffled(seed);
        sim.check_groups(true).map_err(TestCaseError::fail)?;
        for p in (0..n).filter(|p| !dead.contains(p)) {
            for (&g, members) in &model {
                if let Some(rec) = sim.procs[p].groups.get(&gid(&format!("g{g}"))) {
                    let have: BTreeSet<usize> = rec.members().map(|q| q.rank as usize).collect();
                    prop_assert_eq!(&have, members, "p{} g{}", p, g);
                    prop_assert_eq!(rec.member_count() as usize, members.len());
                }
            }
            // Only stale packets (crossing a departure) may have been refused, or
            // collectives that members called in different orders.
            for (what, status) in &sim.procs[p].errors {
                prop_assert_eq!(*status, pmix_core::Status::ERR_BAD_PARAM, "{}", what);
                prop_assert!(what.contains("collective #"), "{}", what);
            }
        }
    }
}
