//! Arbitrary group operations over two to six simulated processes: constructs
//! (joins), fences, destructs, leaves (by arbitrary byte names too), kills with
//! and without dropping in-flight broadcasts, deliveries in any order, held
//! channels, and forged messages fed to a copy of a process's group list.
//!
//! Groups g0 and g1 are constructed with one directive each (FT, and without FT);
//! in g2 each call picks its own.
//!
//! Invariants after every step: no panic; every replica's member count matches
//! its set and includes itself; a refused forged input changes nothing; a
//! construct abort names a lost member and reaches only members without FT; once
//! quiet, every live replica's membership equals the model (members − left −
//! killed), constructs run with one directive ended the same everywhere, and every
//! construct ended as docs/design.md §4 says at each member (the simulator's
//! `construct_outcome`: waiting while a member is pending; with FT, success after
//! one member-failed event per departed member; without, an abort if a member was
//! lost, else success: a leave never aborts), with one `PMIX_GROUP_LEFT` per
//! leaver; the only errors replicas report are collectives called in different
//! orders.
//!
//! Cost: at most [`MAX_OPS`] steps. `check_groups` reads only the simulation (the
//! processes' groups, what they saw, the model, who was killed, which broadcasts
//! were dropped), so it reruns only after a step that can have changed it: a group
//! call or a kill by a live process, or a delivery; holds, releases, forged inputs
//! (fed to a copy) and deliveries with nothing to deliver leave it as it was
//! checked. Once quiet, `check_groups(true)` alone: it checks everything
//! `check_groups(false)` does.
#![no_main]

#[path = "../../pmix-core/tests/support/sim.rs"]
mod sim;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmix_core::group::{Body, CollectiveOp, ConstructOptions, GroupId, Message, Phase, ProcId};
use pmix_core::{PmixError, Status};
use sim::Sim;

#[derive(Arbitrary, Debug)]
enum Forged {
    Contribute { op: u8, seq: u32 },
    Left,
    Lost,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Construct {
        p: u8,
        g: u8,
        ft: bool,
    },
    Fence {
        p: u8,
        g: u8,
        ft: bool,
    },
    Destruct {
        p: u8,
        g: u8,
    },
    Leave {
        p: u8,
        g: u8,
    },
    LeaveByName {
        p: u8,
        name: Vec<u8>,
    },
    Kill {
        p: u8,
        drop: bool,
    },
    Deliver {
        k: u8,
    },
    Hold {
        from: u8,
        to: u8,
    },
    Release {
        from: u8,
        to: u8,
    },
    Forge {
        p: u8,
        g: u8,
        from: u16,
        what: Forged,
    },
    Run {
        seed: u16,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    procs: u8,
    masks: [u8; 3],
    ops: Vec<Op>,
}

const GROUPS: usize = 3;
/// The most steps one input runs.
const MAX_OPS: usize = 64;

fn name(g: u8) -> String {
    format!("g{}", g as usize % GROUPS)
}

/// What a refused input must leave unchanged.
fn snapshot(sim: &Sim, p: usize, id: &GroupId) -> Option<(Phase, Vec<ProcId>, u32)> {
    let g = sim.procs[p].groups.get(id)?;
    Some((g.phase(), g.members().collect(), g.completed_collectives()))
}

fuzz_target!(|input: Input| {
    let n = 2 + input.procs as usize % 5;
    let mut sim = Sim::new(n);
    let lists: Vec<Vec<usize>> = input
        .masks
        .iter()
        .map(|m| (0..n).filter(|&p| m & (1 << p) != 0).collect())
        .collect();
    for op in input.ops.into_iter().take(MAX_OPS) {
        let delivered = sim.delivered;
        // Whether the step can have changed what `check_groups` reads.
        let mut changed = true;
        match op {
            Op::Construct { p, g, ft } => {
                let k = g as usize % GROUPS;
                // One directive for g0 and g1, so their construct outcomes must
                // agree; g2 mixes them (each member applies its own).
                let opts = ConstructOptions {
                    ft_collective: [true, false, ft][k],
                    notify_termination: k == 2,
                };
                let _ = sim.construct(p as usize % n, &name(g), &lists[k], opts);
            }
            Op::Fence { p, g, ft } => {
                let _ = sim.fence(p as usize % n, &name(g), ft);
            }
            Op::Destruct { p, g } => {
                let _ = sim.destruct(p as usize % n, &name(g));
            }
            Op::Leave { p, g } => {
                let _ = sim.leave(p as usize % n, name(g).as_bytes());
            }
            Op::LeaveByName { p, name } => {
                let p = p as usize % n;
                if !sim.procs[p].alive {
                    continue;
                }
                let before = sim.procs[p].groups.len();
                match sim.leave(p, &name) {
                    Ok(_) => assert!(name.len() <= 255 && !name.contains(&0)),
                    Err(s) if name.is_empty() || name.len() > 255 || name.contains(&0) => {
                        assert_eq!(s, Status::ERR_BAD_PARAM);
                        assert_eq!(sim.procs[p].groups.len(), before);
                    }
                    Err(s) => assert_eq!(s, Status::ERR_NOT_FOUND),
                }
            }
            Op::Kill { p, drop } => {
                changed = sim.procs[p as usize % n].alive;
                sim.kill(p as usize % n, drop);
            }
            Op::Deliver { k } => {
                sim.deliver_nth(k as usize);
                changed = sim.delivered != delivered;
            }
            Op::Hold { from, to } => {
                sim.hold(from as usize % n, to as usize % n);
                changed = false;
            }
            Op::Release { from, to } => {
                sim.release(from as usize % n, to as usize % n);
                changed = false;
            }
            Op::Forge { p, g, from, what } => {
                changed = false;
                let p = p as usize % n;
                let id = sim::gid(&name(g));
                let Ok(from) = ProcId::new(sim.nspace, u32::from(from) % 16) else {
                    continue;
                };
                let before = snapshot(&sim, p, &id);
                let mut copy = sim.procs[p].groups.clone();
                let r = match what {
                    Forged::Lost => copy.on_lost(&from).map(|_| ()),
                    Forged::Left => copy.on_message(&Message {
                        group: id,
                        from,
                        body: Body::Left,
                    }),
                    Forged::Contribute { op, seq } => {
                        let op = [
                            CollectiveOp::Construct,
                            CollectiveOp::Fence,
                            CollectiveOp::Destruct,
                        ][op as usize % 3];
                        copy.on_message(&Message {
                            group: id,
                            from,
                            body: Body::Contribute { op, seq },
                        })
                    }
                };
                match r {
                    Err(e) => {
                        let _ = e.status();
                        let g = copy.get(&id);
                        let after = g.map(|g| {
                            (
                                g.phase(),
                                g.members().collect::<Vec<_>>(),
                                g.completed_collectives(),
                            )
                        });
                        assert_eq!(before, after, "a refused input changed the group: {e}");
                    }
                    Ok(()) => while copy.poll_output().is_some() {},
                }
            }
            Op::Run { seed } => {
                sim.run_shuffled(u64::from(seed));
                changed = sim.delivered != delivered;
            }
        }
        if changed {
            sim.check_groups(sim.pending() == 0).unwrap();
        }
    }
    for from in 0..n {
        for to in 0..n {
            sim.release(from, to);
        }
    }
    sim.run();
    sim.check_groups(true).unwrap();
    for p in sim.procs.iter().filter(|p| p.alive) {
        for (what, status) in &p.errors {
            assert!(
                *status == Status::ERR_BAD_PARAM && what.contains("collective #"),
                "{what}"
            );
        }
    }
});
