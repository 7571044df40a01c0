//! Arbitrary process-state tracking over two to seven simulated processes:
//! detector reports (true and false suspicions), kills, deliveries in any order,
//! local validates, acknowledgements, agreements, global validates, shrinks (each
//! process moving on to the group its shrink made), revokes, and queries and
//! checks with arbitrary masks, ranks and buffer sizes.
//!
//! Invariants after every step: no panic; every tracker answers every (view, mask)
//! query as the plain model replaying what was applied to it; `get_failed` and
//! `get_acked` only grow by appending; revocation is sticky; every survivor of an
//! exchange decided the same; a refused query wrote nothing.
#![no_main]

#[path = "../../pmix-core/tests/support/sim.rs"]
mod sim;

use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmix_core::PmixError;
use pmix_core::ftstate::{FtError, Mask, Modifier, OpError, Operation, RankInfo, RankState, View};
use sim::{Exchange, Sim, compare};

#[derive(Arbitrary, Debug)]
enum Op {
    Report {
        p: u8,
        q: u8,
    },
    Kill {
        p: u8,
        drop: bool,
    },
    Deliver {
        k: u8,
    },
    ValidateLocal {
        p: u8,
    },
    Ack {
        p: u8,
        n: u8,
    },
    Agree {
        p: u8,
        flag: u32,
    },
    ValidateGlobal {
        p: u8,
    },
    Shrink {
        p: u8,
    },
    Revoke {
        p: u8,
    },
    Query {
        p: u8,
        global: bool,
        mask: u8,
        cap: u8,
    },
    Check {
        p: u8,
        op: u8,
        rank: u8,
    },
    Run {
        seed: u16,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    procs: u8,
    ops: Vec<Op>,
}

/// The newest tracker `p` holds ("w0", then "w1" after a shrink, …).
fn current(sim: &Sim, p: usize) -> Option<(usize, String)> {
    (0..8)
        .rev()
        .map(|g| (g, format!("w{g}")))
        .find(|(_, k)| sim.member(p, k).is_some())
}

fuzz_target!(|input: Input| {
    let n = 2 + input.procs as usize % 6;
    let mut sim = Sim::new(n);
    sim.make_tracker("w0", &(0..n).collect::<Vec<_>>());
    // Per (process, tracker): the last get_failed, get_acked and revoked seen.
    let mut seen: BTreeMap<(usize, String), (Vec<u32>, Vec<u32>, bool)> = BTreeMap::new();
    for op in input.ops.into_iter().take(150) {
        let pick = |p: u8| p as usize % n;
        match op {
            Op::Report { p, q } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let _ = sim.report(pick(p), &key, q as usize % n);
                }
            }
            Op::Kill { p, drop } => sim.kill(pick(p), drop),
            Op::Deliver { k } => {
                sim.deliver_nth(k as usize);
            }
            Op::ValidateLocal { p } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let v = sim.validate_local(pick(p), &key);
                    assert!(v.new_failures <= v.num_failed);
                }
            }
            Op::Ack { p, n: k } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let acked = sim.ack(pick(p), &key, u32::from(k));
                    assert!(acked as usize <= sim.tracker(pick(p), &key).get_failed().len());
                }
            }
            Op::Agree { p, flag } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let _ = sim.exchange(pick(p), &key, Exchange::Agree(flag));
                }
            }
            Op::ValidateGlobal { p } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let _ = sim.exchange(pick(p), &key, Exchange::ValidateGlobal);
                }
            }
            Op::Shrink { p } => {
                if let Some((g, key)) = current(&sim, pick(p)) {
                    if g < 7 {
                        let _ =
                            sim.exchange(pick(p), &key, Exchange::Shrink(format!("w{}", g + 1)));
                    }
                }
            }
            Op::Revoke { p } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    if sim.procs[pick(p)].alive {
                        sim.revoke(pick(p), &key);
                    }
                }
            }
            Op::Query {
                p,
                global,
                mask,
                cap,
            } => {
                let Some((_, key)) = current(&sim, pick(p)) else {
                    continue;
                };
                let t = sim.tracker(pick(p), &key);
                let view = if global { View::Global } else { View::Local };
                match Mask::from_bits(mask) {
                    Err(e) => {
                        assert!(mask & !Mask::ALL.bits() != 0);
                        assert_eq!(e.status(), pmix_core::Status::ERR_BAD_PARAM);
                    }
                    Ok(mask) => {
                        let count = t.get_num_state(view, mask) as usize;
                        let marker = RankInfo {
                            rank: u32::MAX,
                            state: RankState::Null,
                            modifier: Modifier::New,
                        };
                        let mut out = vec![marker; cap as usize % 12];
                        match t.get_state(view, mask, &mut out) {
                            Ok(k) => assert_eq!(k, count),
                            Err(FtError::Size { needed }) => {
                                assert_eq!(needed, count);
                                assert!(!out.is_empty() && out.len() < count);
                                assert!(out.iter().all(|i| *i == marker), "a refused query wrote");
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            }
            Op::Check { p, op, rank } => {
                let Some((_, key)) = current(&sim, pick(p)) else {
                    continue;
                };
                let t = sim.tracker(pick(p), &key);
                let rank = u32::from(rank) % (t.size() + 2);
                let operation = match op % 6 {
                    0 => Operation::Send { to: rank },
                    1 => Operation::Recv { from: rank },
                    2 => Operation::RecvAny {
                        nonblocking: rank % 2 == 0,
                    },
                    3 => Operation::Collective,
                    4 => Operation::Agree,
                    _ => Operation::Shrink,
                };
                let r = t.check(operation);
                match operation {
                    Operation::Agree | Operation::Shrink => assert_eq!(r, Ok(())),
                    _ if t.is_revoked() => assert_eq!(r, Err(OpError::Revoked)),
                    Operation::Send { .. } | Operation::Recv { .. } => {
                        let want = if rank >= t.size() {
                            Err(OpError::RankOutOfRange {
                                rank,
                                size: t.size(),
                            })
                        } else if t.has_left(rank) {
                            Err(OpError::Departed { rank })
                        } else if t.is_failed(rank) {
                            Err(OpError::ProcFailed { rank })
                        } else {
                            Ok(())
                        };
                        assert_eq!(r, want);
                    }
                    Operation::RecvAny { .. } => {
                        assert_eq!(r.is_err(), t.get_acked().len() < t.get_failed().len());
                    }
                    Operation::Collective => assert_eq!(r.is_err(), !t.get_failed().is_empty()),
                }
            }
            Op::Run { seed } => sim.run_shuffled(u64::from(seed)),
        }
        sim.check_decisions().unwrap();
        for p in (0..n).filter(|&p| sim.procs[p].alive) {
            let keys: Vec<String> = sim.procs[p].ft.keys().cloned().collect();
            for key in keys {
                let t = sim.tracker(p, &key);
                compare(t, &sim.model_of(p, &key)).unwrap();
                let now = (
                    t.get_failed().to_vec(),
                    t.get_acked().to_vec(),
                    t.is_revoked(),
                );
                if let Some((failed, acked, revoked)) = seen.get(&(p, key.clone())) {
                    assert!(now.0.starts_with(failed), "get_failed lost its prefix");
                    assert!(now.1.starts_with(acked), "get_acked went back");
                    assert!(now.2 || !revoked, "revocation undone");
                }
                assert!(now.0.starts_with(&now.1));
                seen.insert((p, key), now);
            }
        }
    }
    sim.run();
    sim.check_decisions().unwrap();
});
