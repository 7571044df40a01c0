//! Arbitrary process-state tracking over two to seven simulated processes:
//! detector reports (true and false suspicions), kills, deliveries in any order,
//! local validates, acknowledgements, agreements, global validates, shrinks (each
//! process moving on to the group its shrink made), revokes, and queries and
//! checks with arbitrary masks, ranks and buffer sizes; at most [`MAX_OPS`] steps.
//!
//! Invariants after every step: no panic; every tracker answers every (view, mask)
//! query as the plain model replaying what was applied to it; `get_failed` and
//! `get_acked` only grow by appending; revocation is sticky; every survivor of an
//! exchange decided the same; a refused query wrote nothing. The same again at
//! the end, once everything is delivered.
//!
//! Cost: at most [`MAX_OPS`] steps, and a step re-checks only what it can have
//! changed, which gives the same verdicts as re-checking everything. A tracker is
//! only changed through the simulator, which journals every change (the model
//! replays the journal) and records every exchange result and every refused
//! departure report (`errors`); the one untraced call, a refused `report`, comes
//! from this harness, which marks its process. So after each step every tracker
//! whose journal, results or process's errors grew, whose process reported, or
//! whose failed/acked/revoked answers moved is compared with its model on every
//! (view, mask) query; an unchanged tracker against an unchanged model answers as
//! it did at its last comparison. A tracker nothing touched since
//! `Tracker::new(size, rank)` answers as every other such tracker: each (size,
//! rank) up to seven members is compared with its model once, at start-up
//! (`init`), not in every run. The append-only and sticky checks run on every
//! tracker after every step. `check_decisions` reruns when a live process's
//! exchange results or the set of live processes changed (it only reads those).
#![no_main]

#[path = "../../pmix-core/tests/support/sim.rs"]
mod sim;

use std::cell::RefCell;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmix_core::PmixError;
use pmix_core::ftstate::{
    FtError, Mask, Modifier, OpError, Operation, RankInfo, RankState, Tracker, View,
};
use sim::{Exchange, Sim, TrackerModel};

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

/// The most steps one input runs.
const MAX_OPS: usize = 64;
/// Tracker names: "w0", then "w1" after a shrink, …
const KEYS: [&str; 8] = ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"];
/// The most processes (and so members) a run has.
const MAX_PROCS: usize = 7;

/// The generation of tracker `key` ("w3": 3), without comparing strings
/// (libFuzzer hooks `memcmp`, which makes string keys slow to look up).
fn generation(key: &str) -> usize {
    let g = usize::from(key.as_bytes()[1] - b'0');
    assert_eq!(key.len(), 2, "a tracker name from KEYS");
    g
}

/// The newest tracker `p` holds (names order as generations).
fn current(sim: &Sim, p: usize) -> Option<(usize, &'static str)> {
    let g = generation(sim.procs[p].ft.keys().next_back()?);
    Some((g, KEYS[g]))
}

/// What the harness last saw of one process's tracker.
#[derive(Default)]
struct Watch {
    /// (journal length, results length) at the last full comparison; `None`
    /// before the first.
    version: Option<(usize, usize)>,
    /// The last `get_failed`, `get_acked` and `is_revoked`.
    failed: Vec<u32>,
    acked: Vec<u32>,
    revoked: bool,
}

/// Per-run scratch, kept across runs for its allocations.
#[derive(Default)]
struct Scratch {
    /// Per (process, tracker generation).
    watch: Vec<Watch>,
    /// Per process: its `errors` length after the last step.
    errors: Vec<usize>,
    /// Per process: the step reported a failure there (refused, it leaves no
    /// trace).
    touched: Vec<bool>,
    /// Live processes with their (trackers, exchange results) at the last
    /// `check_decisions`.
    decided: Vec<(usize, usize, usize)>,
    decided_now: Vec<(usize, usize, usize)>,
    cmp: Compare,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The (state, modifier) pairs a rank can be in, as indexes into `matches`.
const CLASSES: [(RankState, Modifier); 6] = [
    (RankState::Ok, Modifier::Old),
    (RankState::Ok, Modifier::New),
    (RankState::Failed, Modifier::New),
    (RankState::Failed, Modifier::Old),
    (RankState::Null, Modifier::New),
    (RankState::Null, Modifier::Old),
];

/// `sim::compare`, cheaper: the tracker against its model on `get_failed`,
/// `get_acked`, `is_revoked`, and `get_num_state` and `get_state` for both views
/// and all 32 masks. `TrackerModel::get_state` is the ranks, in ascending order,
/// whose `TrackerModel::state` `TrackerModel::matches` the mask: here each rank's
/// state is computed once per view and `matches` once for every (mask, state,
/// modifier), as sets of ranks (bit `r` for rank `r`).
struct Compare {
    /// Per mask: the classes (bit `c` for `CLASSES[c]`) it matches.
    matches: [u8; 32],
    buf: Vec<RankInfo>,
}

/// The most members [`Compare`] handles (a rank set is a `u64`).
const MAX_COMPARED: u32 = 64;

impl Default for Compare {
    fn default() -> Self {
        let mut matches = [0; 32];
        for (bits, row) in matches.iter_mut().enumerate() {
            let mask = Mask::from_bits(bits as u8).expect("valid");
            for (c, &(state, modifier)) in CLASSES.iter().enumerate() {
                if TrackerModel::matches(mask, state, modifier) {
                    *row |= 1 << c;
                }
            }
        }
        Compare {
            matches,
            buf: Vec::new(),
        }
    }
}

impl Compare {
    fn run(&mut self, t: &Tracker, m: &TrackerModel) -> Result<(), String> {
        if t.get_failed() != m.log.as_slice() {
            return Err(format!(
                "get_failed {:?} vs model {:?}",
                t.get_failed(),
                m.log
            ));
        }
        if t.get_acked() != &m.log[..m.acked] {
            return Err(format!(
                "get_acked {:?} vs model {:?}",
                t.get_acked(),
                &m.log[..m.acked]
            ));
        }
        if t.is_revoked() != m.revoked {
            return Err("revoked differs".into());
        }
        assert!(m.size <= MAX_COMPARED, "a group of {} members", m.size);
        let buf = &mut self.buf;
        buf.clear();
        buf.resize(m.size as usize, RankInfo::default());
        for view in [View::Local, View::Global] {
            // Per class, its ranks; per rank, its class.
            let mut ranks = [0u64; CLASSES.len()];
            let mut class_of = [0u8; MAX_COMPARED as usize];
            for r in 0..m.size {
                if let Some(s) = m.state(view, r) {
                    let c = CLASSES.iter().position(|&c| c == s).expect("a class");
                    ranks[c] |= 1 << r;
                    class_of[r as usize] = c as u8;
                }
            }
            for (bits, &classes) in self.matches.iter().enumerate() {
                let want = (0..CLASSES.len())
                    .filter(|c| classes & (1 << c) != 0)
                    .fold(0u64, |w, c| w | ranks[c]);
                let count = want.count_ones() as usize;
                let mask = Mask::from_bits(bits as u8).expect("valid");
                let n = t.get_num_state(view, mask) as usize;
                let got = t.get_state(view, mask, buf).map_err(|e| e.to_string())?;
                let mut rest = want;
                let same = n == count
                    && got == count
                    && buf[..got].iter().all(|e| {
                        let r = rest.trailing_zeros();
                        rest &= rest.wrapping_sub(1);
                        let (state, modifier) = CLASSES[class_of[r as usize] as usize];
                        e.rank == r && e.state == state && e.modifier == modifier
                    });
                if !same {
                    let model: Vec<RankInfo> = (0..m.size)
                        .filter(|r| want & (1 << r) != 0)
                        .map(|rank| {
                            let (state, modifier) = CLASSES[class_of[rank as usize] as usize];
                            RankInfo {
                                rank,
                                state,
                                modifier,
                            }
                        })
                        .collect();
                    return Err(format!(
                        "{view:?} view, mask {bits:#x}: get_num_state {n}, get_state {:?}; \
                         model {model:?}",
                        &buf[..got]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `b` is a prefix of `a`: `starts_with` without its `memcmp` call, which cost
/// more than these few entries.
fn prefix(a: &[u32], b: &[u32]) -> bool {
    b.len() <= a.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The invariants after a step.
fn check(sim: &Sim, s: &mut Scratch) {
    let Scratch {
        watch,
        errors,
        touched,
        decided,
        decided_now,
        cmp,
    } = s;
    decided_now.clear();
    for (p, proc) in sim.procs.iter().enumerate() {
        let errors_grew = errors[p] != proc.errors.len();
        errors[p] = proc.errors.len();
        if !proc.alive {
            continue;
        }
        decided_now.push((
            p,
            proc.ft.len(),
            proc.ft.values().map(|m| m.results.len()).sum(),
        ));
        for (key, m) in &proc.ft {
            let w = &mut watch[p * KEYS.len() + generation(key)];
            let t = &m.tracker;
            let (failed, acked, revoked) = (t.get_failed(), t.get_acked(), t.is_revoked());
            assert!(prefix(failed, &w.failed), "get_failed lost its prefix");
            assert!(prefix(acked, &w.acked), "get_acked went back");
            assert!(revoked || !w.revoked, "revocation undone");
            assert!(prefix(failed, acked));
            let moved = failed.len() != w.failed.len()
                || acked.len() != w.acked.len()
                || revoked != w.revoked;
            let version = (m.journal.len(), m.results.len());
            let changed = moved || errors_grew || touched[p] || w.version != Some(version);
            // Untouched since Tracker::new: compared at start-up.
            let fresh =
                w.version.is_none() && version == (0, 0) && !moved && !errors_grew && !touched[p];
            if changed && !(fresh && t.size() as usize <= MAX_PROCS) {
                cmp.run(t, &sim.model_of(p, key)).unwrap();
            }
            w.version = Some(version);
            if moved {
                w.failed.clear();
                w.failed.extend_from_slice(failed);
                w.acked.clear();
                w.acked.extend_from_slice(acked);
                w.revoked = revoked;
            }
        }
    }
    if decided != decided_now {
        sim.check_decisions().unwrap();
        std::mem::swap(decided, decided_now);
    }
}

fuzz_target!(
    init: {
        // Every fresh tracker a run can create, against its model.
        SCRATCH.with_borrow_mut(|s| {
            for size in 1..=MAX_PROCS as u32 {
                for me in 0..size {
                    let t = Tracker::new(size, me).expect("valid");
                    let m = TrackerModel::new(size, me);
                    s.cmp.run(&t, &m).unwrap();
                    sim::compare(&t, &m).unwrap();
                    // The harness's comparison sees what the simulator's sees.
                    let mut wrong = m.clone();
                    wrong.report_failure(size - 1 - me);
                    wrong.validate_local();
                    assert!(s.cmp.run(&t, &wrong).is_err() && sim::compare(&t, &wrong).is_err());
                    wrong.log.clear();
                    assert!(s.cmp.run(&t, &wrong).is_err() && sim::compare(&t, &wrong).is_err());
                }
            }
        });
    },
    |input: Input| {
        SCRATCH.with_borrow_mut(|s| run(input, s));
    }
);

fn run(input: Input, s: &mut Scratch) {
    let n = 2 + input.procs as usize % 6;
    let mut sim = Sim::new(n);
    sim.make_tracker("w0", &(0..n).collect::<Vec<_>>());
    s.watch.clear();
    s.watch.resize_with(n * KEYS.len(), Watch::default);
    s.errors.clear();
    s.errors.resize(n, 0);
    s.touched.clear();
    s.touched.resize(n, false);
    s.decided.clear();
    let mut out = Vec::new();
    for op in input.ops.into_iter().take(MAX_OPS) {
        let pick = |p: u8| p as usize % n;
        s.touched.fill(false);
        match op {
            Op::Report { p, q } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    // A refused report leaves no trace in the simulator.
                    s.touched[pick(p)] = true;
                    let _ = sim.report(pick(p), key, q as usize % n);
                }
            }
            Op::Kill { p, drop } => sim.kill(pick(p), drop),
            Op::Deliver { k } => {
                sim.deliver_nth(k as usize);
            }
            Op::ValidateLocal { p } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let v = sim.validate_local(pick(p), key);
                    assert!(v.new_failures <= v.num_failed);
                }
            }
            Op::Ack { p, n: k } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let acked = sim.ack(pick(p), key, u32::from(k));
                    assert!(acked as usize <= sim.tracker(pick(p), key).get_failed().len());
                }
            }
            Op::Agree { p, flag } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let _ = sim.exchange(pick(p), key, Exchange::Agree(flag));
                }
            }
            Op::ValidateGlobal { p } => {
                if let Some((_, key)) = current(&sim, pick(p)) {
                    let _ = sim.exchange(pick(p), key, Exchange::ValidateGlobal);
                }
            }
            Op::Shrink { p } => {
                if let Some((g, key)) = current(&sim, pick(p))
                    && g < 7
                {
                    let _ = sim.exchange(pick(p), key, Exchange::Shrink(KEYS[g + 1].into()));
                }
            }
            Op::Revoke { p } => {
                if let Some((_, key)) = current(&sim, pick(p))
                    && sim.procs[pick(p)].alive
                {
                    sim.revoke(pick(p), key);
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
                let t = sim.tracker(pick(p), key);
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
                        out.clear();
                        out.resize(cap as usize % 12, marker);
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
                let t = sim.tracker(pick(p), key);
                let rank = u32::from(rank) % (t.size() + 2);
                let operation = match op % 6 {
                    0 => Operation::Send { to: rank },
                    1 => Operation::Recv { from: rank },
                    2 => Operation::RecvAny {
                        nonblocking: rank.is_multiple_of(2),
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
        check(&sim, s);
    }
    sim.run();
    check(&sim, s);
}
