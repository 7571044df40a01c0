//! docs/design.md §5: a round of `validate_global` agrees at every survivor whatever local
//! calls run beside it. Each member's round has three steps — contribute, the
//! others' contributions arrive, apply the decision — and a failure report, a
//! `validate_local`, an acknowledgement, a query or a leave report can land before,
//! between or after any of them at any member. Every such placement at one member,
//! with the other members' placements drawn from a seeded generator, over several
//! rounds: every survivor's global view is the same after each round, and `L = G`
//! right after it.

use pmix_core::ftstate::{AgreeValue, Mask, RankInfo, Tracker, View};

const N: u32 = 8;
/// The members that die (after contributing to the first round: each is in that
/// round's contributions, so the round must not count it failed anywhere).
const VICTIMS: [u32; 2] = [2, 6];

/// A local call a member makes beside the exchange.
#[derive(Clone, Copy, Debug)]
enum Local {
    None,
    Validate,
    AckAll,
    Query,
}

const LOCALS: [Local; 4] = [Local::None, Local::Validate, Local::AckAll, Local::Query];

/// Where, in a member's round, something lands: before it contributes, after it
/// contributed and before the decision, after the decision.
const PLACES: u8 = 3;

fn local(t: &mut Tracker, l: Local) {
    match l {
        Local::None => {}
        Local::Validate => {
            t.validate_local();
        }
        Local::AckAll => {
            t.ack_failed(u32::MAX);
        }
        Local::Query => {
            let mut out = [RankInfo::default(); N as usize];
            let _ = t.get_state(View::Local, Mask::FAILED, &mut out);
            let _ = t.get_num_state(View::Global, Mask::NULL);
        }
    }
}

/// A small deterministic generator (xorshift), so a failing case names its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One member's plan for one round: where the victims' failure reports land,
/// which local call it makes and where.
#[derive(Clone, Copy, Debug)]
struct Plan {
    report_at: u8,
    local: Local,
    local_at: u8,
    /// At the same place, the local call lands before the report (else after).
    local_first: bool,
}

/// Runs `rounds` rounds over the survivors with `plans[member][round]`; returns each
/// survivor's global view after each round.
// Rounds index every member's plans, not one slice.
#[allow(clippy::needless_range_loop)]
fn run(plans: &[Vec<Plan>], rounds: usize) -> Vec<Vec<Vec<u32>>> {
    let mut ts: Vec<Tracker> = (0..N).map(|r| Tracker::new(N, r).unwrap()).collect();
    let survivors: Vec<u32> = (0..N).filter(|r| !VICTIMS.contains(r)).collect();
    let mut views = vec![Vec::new(); N as usize];
    for round in 0..rounds {
        // Place 0: before contributing.
        for &m in &survivors {
            let p = plans[m as usize][round];
            step(&mut ts[m as usize], p, 0);
        }
        let mut value = AgreeValue::new(N).unwrap();
        for &m in &survivors {
            ts[m as usize].contribute(0, &mut value).unwrap();
        }
        if round == 0 {
            // The victims contributed to the first round, then died.
            for v in VICTIMS {
                ts[v as usize].contribute(0, &mut value).unwrap();
            }
        }
        // Place 1: contributed, the decision not yet applied.
        for &m in &survivors {
            let p = plans[m as usize][round];
            step(&mut ts[m as usize], p, 1);
        }
        for &m in &survivors {
            let t = &mut ts[m as usize];
            t.validate_global(&value.decide()).unwrap();
            let l = ranks(t, View::Local);
            let g = ranks(t, View::Global);
            assert_eq!(l, g, "L = G right after validate_global at member {m}");
            views[m as usize].push(g);
        }
        // Place 2: after the decision.
        for &m in &survivors {
            let p = plans[m as usize][round];
            step(&mut ts[m as usize], p, 2);
        }
    }
    survivors
        .iter()
        .map(|&m| views[m as usize].clone())
        .collect()
}

fn step(t: &mut Tracker, p: Plan, place: u8) {
    let report = |t: &mut Tracker| {
        for v in VICTIMS {
            let _ = t.report_failure(v);
        }
    };
    if p.report_at == place && !(p.local_at == place && p.local_first) {
        report(t);
    }
    if p.local_at == place {
        local(t, p.local);
    }
    if p.report_at == place && p.local_at == place && p.local_first {
        report(t);
    }
}

fn ranks(t: &Tracker, view: View) -> Vec<u32> {
    let mut out = [RankInfo::default(); N as usize];
    let n = t
        .get_state(view, Mask::FAILED | Mask::NULL, &mut out)
        .unwrap();
    out[..n].iter().map(|i| i.rank).collect()
}

#[test]
fn every_survivor_holds_the_same_global_view_whatever_local_calls_run_beside_the_round() {
    const ROUNDS: usize = 3;
    let mut cases = 0;
    for subject in 0..N {
        if VICTIMS.contains(&subject) {
            continue;
        }
        for report_at in 0..PLACES {
            for local in LOCALS {
                for (local_at, local_first) in (0..PLACES).flat_map(|at| [(at, false), (at, true)])
                {
                    for seed in 1..=8u64 {
                        let mut rng =
                            Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(subject));
                        let plans: Vec<Vec<Plan>> = (0..N)
                            .map(|m| {
                                (0..ROUNDS)
                                    .map(|round| {
                                        if m == subject && round == 0 {
                                            Plan {
                                                report_at,
                                                local,
                                                local_at,
                                                local_first,
                                            }
                                        } else {
                                            Plan {
                                                // Reports land in the first round at the latest.
                                                report_at: if round == 0 {
                                                    rng.next(PLACES as u64) as u8
                                                } else {
                                                    PLACES
                                                },
                                                local: LOCALS[rng.next(4) as usize],
                                                local_at: rng.next(PLACES as u64) as u8,
                                                local_first: rng.next(2) == 0,
                                            }
                                        }
                                    })
                                    .collect()
                            })
                            .collect();
                        let views = run(&plans, ROUNDS);
                        for (i, v) in views.iter().enumerate().skip(1) {
                            assert_eq!(
                                v, &views[0],
                                "subject {subject} report_at {report_at} {local:?} at {local_at} \
                                 (first: {local_first}) seed {seed}: survivor #{i} disagrees"
                            );
                        }
                        // From the second round the victims contribute nothing: every
                        // survivor counts them.
                        assert_eq!(views[0][1], VICTIMS.to_vec());
                        cases += 1;
                    }
                }
            }
        }
    }
    println!("{cases} interleavings checked, {} rounds each", ROUNDS);
}

#[test]
fn a_failure_validated_locally_during_a_round_that_did_not_agree_on_it_drops_out_of_l_and_comes_back()
 {
    let mut a = Tracker::new(4, 0).unwrap();
    let b = Tracker::new(4, 1).unwrap();
    let mut value = AgreeValue::new(4).unwrap();
    a.contribute(0, &mut value).unwrap();
    b.contribute(0, &mut value).unwrap();
    for r in [2, 3] {
        let t = Tracker::new(4, r).unwrap();
        t.contribute(0, &mut value).unwrap();
    }
    // Rank 3 fails after contributing; a learns it and validates locally.
    a.report_failure(3).unwrap();
    assert_eq!(a.validate_local().num_failed, 1);
    let v = a.validate_global(&value.decide()).unwrap();
    assert_eq!((v.num_failed, v.new_failures), (0, 0));
    assert_eq!(a.get_num_state(View::Local, Mask::FAILED), 0);
    // Still in the log: the next local validate finds it, as FAILED|NEW.
    assert_eq!(a.get_failed(), [3]);
    let v = a.validate_local();
    assert_eq!((v.num_failed, v.new_failures), (1, 1));
    assert_eq!(a.get_num_state(View::Local, Mask::FAILED | Mask::NEW), 1);
}

#[test]
fn a_member_seen_leaving_after_contributing_counts_as_the_round_agreed() {
    // 3 members; rank 2 contributes nothing: the round counts it failed. Member 0
    // hears of its leave only after contributing; member 1 never does.
    let mut a = Tracker::new(3, 0).unwrap();
    let mut b = Tracker::new(3, 1).unwrap();
    let mut value = AgreeValue::new(3).unwrap();
    a.contribute(0, &mut value).unwrap();
    b.contribute(0, &mut value).unwrap();
    a.report_left(2).unwrap();
    let va = a.validate_global(&value.decide()).unwrap();
    let vb = b.validate_global(&value.decide()).unwrap();
    assert_eq!(va, vb);
    assert_eq!(ranks(&a, View::Global), ranks(&b, View::Global));
    assert_eq!(
        a.get_num_state(View::Global, Mask::OK),
        b.get_num_state(View::Global, Mask::OK)
    );
}
