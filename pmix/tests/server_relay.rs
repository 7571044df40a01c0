//! The relay ([`Provides::relays`]): three hosted cores, nodes 0–2 of one job of six
//! ranks (node n holds ranks 2n and 2n+1), joined by a fake host that behaves as
//! Slurm 22.05's plugin does where it works: it runs a collective only once every
//! node called it with the same list of procs, and hands every node the
//! concatenation of their blobs. A list of some ranks only, which Slurm's ring never
//! completes, fails the test.

// Ranks index the fake clients on purpose.
#![allow(clippy::needless_range_loop)]

mod server_core_common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pmix::server::core::{
    Core, CoreConfig, HostAnswer, NamespaceSpec, NodeSpec, Output, Placement, Provides, RankSpec,
    Upcall,
};
use pmix_wire::msg::{Commit, CommitBucket, FenceNb, GetNb};
use pmix_wire::{BufferType, Command, Info, Kval, Proc, Rank, Request, Scope, Value};
use server_core_common::*;

const NS: &str = "job";
const NODES: usize = 3;

/// A collective's list of procs.
type Procs = Vec<(String, u32)>;

/// Per node, the id and blob of its call of one collective, once it called it.
type Calls = Vec<Option<(u64, Vec<u8>)>>;

fn node(n: usize) -> Core {
    let mut cfg = CoreConfig::new("srv", 0, format!("host{n}"), UID, GID);
    // A host with fence_nb and no notify_event (Slurm's plugin): the relay.
    cfg.provides = Provides::NODES | Provides::FENCE;
    let mut core = Core::new(cfg);
    let mut spec = NamespaceSpec::single_node(NS, 6, UID, GID);
    spec.ranks = (0..2)
        .map(|i| RankSpec {
            rank: 2 * n as u32 + i,
            local_rank: i as u16,
            node_rank: i as u16,
            ..Default::default()
        })
        .collect();
    spec.placement = Some(Placement {
        nodes: (0..NODES)
            .map(|m| NodeSpec {
                name: format!("node{m}"),
                id: m as u32,
                ranks: vec![2 * m as u32, 2 * m as u32 + 1],
                info: Vec::new(),
            })
            .collect(),
        this_node: Some(n),
        proc_info: Vec::new(),
    });
    core.add_namespace(spec).unwrap();
    core
}

struct Job {
    nodes: Vec<Core>,
    fakes: Vec<Fake>,
    now: Instant,
    /// Collectives some nodes called, by list of procs: per node, its id and blob.
    pending: BTreeMap<Procs, Calls>,
    /// Every collective the host was asked for: its procs, collect flag and blob.
    asked: Vec<(Procs, bool, Vec<u8>)>,
    /// What each rank's node sent it.
    outs: Vec<Vec<Output>>,
    /// Finalizes the host was told of: the node and the request's id.
    finalized: Vec<(usize, u64)>,
}

fn job() -> Job {
    let now = Instant::now();
    let mut nodes: Vec<Core> = (0..NODES).map(node).collect();
    let fakes = (0..2 * NODES as u32)
        .map(|r| connect(&mut nodes[r as usize / 2], u64::from(r) + 1, NS, r, now))
        .collect();
    let mut j = Job {
        nodes,
        fakes,
        now,
        pending: BTreeMap::new(),
        asked: Vec::new(),
        outs: vec![Vec::new(); 2 * NODES],
        finalized: Vec::new(),
    };
    j.settle();
    j
}

impl Job {
    fn send(&mut self, r: usize, req: &Request) -> u32 {
        let now = self.now;
        self.fakes[r].send(&mut self.nodes[r / 2], req, now)
    }

    /// Moves every node's output: collectives to the host (run once all nodes
    /// called them), the rest to the ranks; time advances while rounds wait.
    fn settle(&mut self) {
        for _ in 0..200 {
            let mut moved = false;
            for n in 0..NODES {
                for out in drain(&mut self.nodes[n]) {
                    moved = true;
                    match out {
                        Output::Host(Upcall::Fence {
                            id,
                            procs,
                            collect,
                            data,
                        }) => {
                            self.asked.push((procs.clone(), collect, data.clone()));
                            let slot = self
                                .pending
                                .entry(procs)
                                .or_insert_with(|| vec![None; NODES]);
                            assert!(slot[n].is_none(), "node {n} called one collective twice");
                            slot[n] = Some((id, data));
                        }
                        Output::Host(Upcall::Finalized { id: Some(id), .. }) => {
                            self.finalized.push((n, id));
                        }
                        other => {
                            for r in [2 * n, 2 * n + 1] {
                                self.outs[r].push(other.clone());
                            }
                        }
                    }
                }
            }
            let full: Vec<_> = self
                .pending
                .iter()
                .filter(|(_, s)| s.iter().all(Option::is_some))
                .map(|(k, _)| k.clone())
                .collect();
            for key in full {
                let slots = self.pending.remove(&key).unwrap();
                let all: Vec<u8> = slots.iter().flatten().flat_map(|s| s.1.clone()).collect();
                for (n, s) in slots.into_iter().enumerate() {
                    let (id, _) = s.unwrap();
                    self.nodes[n].host_answer(id, HostAnswer::Fence(Ok(all.clone())), self.now);
                }
                moved = true;
            }
            for (n, id) in std::mem::take(&mut self.finalized) {
                self.nodes[n].host_answer(id, HostAnswer::ClientFinalized, self.now);
                moved = true;
            }
            if !moved {
                if self.nodes.iter().all(|n| n.next_deadline().is_none()) {
                    return;
                }
                // Idle: the next round is due later.
                self.now += Duration::from_millis(50);
                for n in &mut self.nodes {
                    n.tick(self.now);
                }
            }
        }
    }

    fn status(&self, r: usize, tag: u32, cmd: Command) -> Option<i32> {
        let outs = &self.outs[r];
        (!no_reply(outs, &self.fakes[r], tag)).then(|| status(outs, &self.fakes[r], tag, cmd))
    }
}

fn fence_over(ranks: &[u32], collect: bool) -> Request {
    let procs = ranks
        .iter()
        .map(|&r| Proc {
            nspace: NS.into(),
            rank: Rank(r),
        })
        .collect();
    let info = if collect {
        vec![Info::new("pmix.collect", true)]
    } else {
        Vec::new()
    };
    Request::FenceNb(FenceNb { procs, info })
}

fn whole_fence() -> Request {
    Request::FenceNb(FenceNb {
        procs: vec![Proc {
            nspace: NS.into(),
            rank: Rank::WILDCARD,
        }],
        info: Vec::new(),
    })
}

fn commit(key: &str, v: u32) -> Request {
    Request::Commit(Commit {
        buckets: vec![CommitBucket {
            scope: Scope::GLOBAL,
            buffer_type: BufferType::NonDescribed,
            kvals: vec![Kval::new(key, v)],
        }],
    })
}

/// Every collective the host was asked for is over the whole namespace.
fn only_whole(j: &Job) {
    for (procs, _, _) in &j.asked {
        assert!(
            procs.iter().all(|p| p.0 == NS && p.1 == Rank::WILDCARD.0),
            "the host was asked for a collective over {procs:?}"
        );
    }
}

#[test]
fn a_fence_over_ranks_of_two_nodes_completes_over_whole_namespace_rounds_with_their_data() {
    let mut j = job();
    j.send(0, &commit("k0", 10));
    j.send(2, &commit("k2", 12));
    let t0 = j.send(0, &fence_over(&[0, 2], true));
    let t2 = j.send(2, &fence_over(&[0, 2], true));
    j.settle();
    only_whole(&j);
    assert_eq!(j.status(0, t0, Command::FenceNb), Some(0));
    assert_eq!(j.status(2, t2, Command::FenceNb), Some(0));
    // Rank 0 reads rank 2's data from its own node: the fence brought it.
    let t = j.send(
        0,
        &Request::GetNb(GetNb {
            nspace: NS.into(),
            rank: Rank(2),
            key: Some("k2".into()),
            info: Vec::new(),
        }),
    );
    let outs = drain(&mut j.nodes[0]);
    assert!(
        !outs
            .iter()
            .any(|o| matches!(o, Output::Host(Upcall::DirectModex { .. }))),
        "asked the host for data the fence carried"
    );
    let pmix_wire::Reply::GetNb(got) = reply(&outs, &j.fakes[0], t, Command::GetNb) else {
        panic!("{outs:?}")
    };
    let kv = &got.data[0].kvals[0];
    assert_eq!(
        (kv.key.as_str(), &kv.value),
        (Some("k2"), &Value::Uint32(12))
    );
}

#[test]
fn a_fence_over_ranks_waits_for_the_part_of_every_node_holding_one() {
    let mut j = job();
    let t0 = j.send(0, &fence_over(&[0, 4], false));
    j.settle();
    assert_eq!(
        j.status(0, t0, Command::FenceNb),
        None,
        "done without node 2"
    );
    let t4 = j.send(4, &fence_over(&[0, 4], false));
    j.settle();
    only_whole(&j);
    assert_eq!(j.status(0, t0, Command::FenceNb), Some(0));
    assert_eq!(j.status(4, t4, Command::FenceNb), Some(0));
}

#[test]
fn a_fence_over_the_namespace_goes_to_the_host_with_data_to_collect() {
    let mut j = job();
    let tags: Vec<u32> = (0..6).map(|r| j.send(r, &whole_fence())).collect();
    j.settle();
    let fences: Vec<_> = j.asked.iter().filter(|a| a.0.len() == 1).collect();
    assert_eq!(fences.len(), NODES, "{:?}", j.asked);
    assert!(
        fences
            .iter()
            .all(|(_, collect, data)| *collect && !data.is_empty()),
        "Slurm runs a fence without data as a tree that does not wait: {fences:?}"
    );
    for r in 0..6 {
        assert_eq!(j.status(r, tags[r], Command::FenceNb), Some(0));
    }
}

#[test]
fn finalize_is_answered_once_every_node_is_done() {
    let mut j = job();
    let t4 = j.send(4, &Request::Finalize);
    let t5 = j.send(5, &Request::Finalize);
    j.settle();
    // Node 2 stays (and joins the rounds) while the others may still need it.
    assert_eq!(j.status(4, t4, Command::Finalize), None);
    assert_eq!(j.status(5, t5, Command::Finalize), None);
    let t0 = j.send(0, &fence_over(&[0, 2], false));
    let t2 = j.send(2, &fence_over(&[0, 2], false));
    j.settle();
    assert_eq!(j.status(0, t0, Command::FenceNb), Some(0));
    assert_eq!(j.status(2, t2, Command::FenceNb), Some(0));
    let rest: Vec<u32> = (0..4).map(|r| j.send(r, &Request::Finalize)).collect();
    j.settle();
    for r in 0..4 {
        assert_eq!(j.status(r, rest[r], Command::Finalize), Some(0));
    }
    assert_eq!(j.status(4, t4, Command::Finalize), Some(0));
    assert_eq!(j.status(5, t5, Command::Finalize), Some(0));
    // And the rounds stop.
    assert!(j.nodes.iter().all(|n| n.next_deadline().is_none()));
}

#[test]
fn an_event_of_one_node_is_raised_on_the_others() {
    use pmix_wire::DataRange;
    use pmix_wire::msg::{Notify, RegEvents};
    let mut j = job();
    let code = -5555;
    let reg = Request::RegEvents(RegEvents {
        codes: vec![pmix_wire::Status(code)],
        info: Vec::new(),
    });
    for r in 0..6 {
        j.send(r, &reg);
    }
    j.settle();
    j.send(
        0,
        &Request::Notify(Notify {
            status: pmix_wire::Status(code),
            range: DataRange::GLOBAL,
            info: vec![Info::new("my.key", Value::Uint32(7))],
        }),
    );
    j.settle();
    only_whole(&j);
    for r in 2..6 {
        let got = events(&j.outs[r], &j.fakes[r]);
        assert!(
            got.iter().any(|e| e.status.0 == code),
            "rank {r} was not told: {got:?}"
        );
    }
}
