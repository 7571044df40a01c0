//! Groups whose members span two hosted server cores, "nodes" A (ranks 0, 1) and B
//! (ranks 2, 3) of one job, joined by a fake host that, like Slurm's plugin, has no
//! group upcall: the construct and the destruct run over its fence, which hands
//! every node the concatenation of the nodes' blobs (in a different order per node).
//! Every rank is registered for `PMIX_GROUP_LEFT`.

// Ranks index the fake clients on purpose.
#![allow(clippy::needless_range_loop)]

mod server_core_common;
mod server_groups_common;

use std::time::Instant;

use pmix::server::core::{Core, HostAnswer, Output, Upcall};
use pmix_wire::msg::GetNb;
use pmix_wire::{Command, DataArray, Info, InfoFlags, Rank, Reply, Request, Status, Value};
use server_core_common::*;
use server_groups_common::{actxid, construct_reply, construct_req, destruct_req, leave_req};

const NS: &str = "job";

/// A node's host fence: its id, the procs it lists, its blob.
type HostFence = (u64, Vec<(String, u32)>, Vec<u8>);

fn node(name: &str, ranks: [u32; 2]) -> Core {
    hosted_node(name, NS, ranks)
}

struct Job {
    nodes: [Core; 2],
    fakes: Vec<Fake>,
    now: Instant,
    /// What each rank's node sent it, since the last look.
    outs: [Vec<Output>; 2],
    /// The events each node handed the host (`Upcall::Notify`), not delivered.
    notifies: [Vec<Upcall>; 2],
}

fn job() -> Job {
    let now = Instant::now();
    let mut nodes = [node("nodeA", [0, 1]), node("nodeB", [2, 3])];
    let mut fakes = Vec::new();
    for r in 0..4u32 {
        fakes.push(connect(
            &mut nodes[r as usize / 2],
            u64::from(r) + 1,
            NS,
            r,
            now,
        ));
    }
    for n in &mut nodes {
        drain(n);
    }
    let reg = Request::RegEvents(pmix_wire::msg::RegEvents {
        codes: vec![Status::GROUP_LEFT],
        info: Vec::new(),
    });
    for (r, f) in fakes.iter_mut().enumerate() {
        let node = &mut nodes[r / 2];
        let t = f.send(node, &reg, now);
        let outs = drain(node);
        assert_eq!(status(&outs, f, t, Command::RegEvents), 0);
    }
    Job {
        nodes,
        fakes,
        now,
        outs: [Vec::new(), Vec::new()],
        notifies: [Vec::new(), Vec::new()],
    }
}

impl Job {
    fn send(&mut self, r: usize, req: &Request) -> u32 {
        let now = self.now;
        self.fakes[r].send(&mut self.nodes[r / 2], req, now)
    }

    /// Drains both nodes: their host fences, the rest kept in `outs`.
    fn fences(&mut self) -> [Vec<HostFence>; 2] {
        let mut calls = [Vec::new(), Vec::new()];
        for (i, n) in self.nodes.iter_mut().enumerate() {
            for o in drain(n) {
                match o {
                    Output::Host(Upcall::Fence {
                        id, procs, data, ..
                    }) => calls[i].push((id, procs, data)),
                    Output::Host(n @ Upcall::Notify { .. }) => self.notifies[i].push(n),
                    Output::Host(
                        other @ (Upcall::DirectModex { .. }
                        | Upcall::Publish { .. }
                        | Upcall::Lookup { .. }
                        | Upcall::Unpublish { .. }),
                    ) => panic!("node {i}: unexpected host call {other:?}"),
                    o => self.outs[i].push(o),
                }
            }
        }
        calls
    }

    /// The host's round: each node made one fence; both get the concatenation, in
    /// their own order.
    fn host_round(&mut self) -> Vec<(String, u32)> {
        let [a, b] = self.fences();
        let ([(ia, pa, da)], [(ib, pb, db)]) = (&a[..], &b[..]) else {
            panic!("one fence per node: {a:?} {b:?}")
        };
        assert_eq!(pa, pb, "the nodes' fences list the same procs");
        let ab = [da.clone(), db.clone()].concat();
        let ba = [db.clone(), da.clone()].concat();
        let now = self.now;
        self.nodes[0].host_answer(*ia, HostAnswer::Fence(Ok(ab)), now);
        self.nodes[1].host_answer(*ib, HostAnswer::Fence(Ok(ba)), now);
        let procs = pa.clone();
        assert!(self.fences().iter().all(Vec::is_empty));
        procs
    }

    fn outs_of(&self, r: usize) -> &[Output] {
        &self.outs[r / 2]
    }
}

/// The `PMIX_GROUP_LEFT` events rank `r` got since the last look.
fn left(j: &Job, r: usize) -> usize {
    events(j.outs_of(r), &j.fakes[r])
        .iter()
        .filter(|e| e.status == Status::GROUP_LEFT)
        .count()
}

/// `ranks` destruct `grp` (over `ranks`), the host answers; returns their tags.
fn destruct(j: &mut Job, grp: &str, ranks: &[u32]) -> Vec<u32> {
    let tags = ranks
        .iter()
        .map(|&r| {
            let req = destruct_req(&j.fakes[r as usize], grp, ranks);
            j.send(r as usize, &req)
        })
        .collect();
    j.host_round();
    tags
}

/// Ranks 0.. of `tags` got success for their destruct.
fn destructed(j: &Job, tags: &[u32]) {
    for (r, &t) in tags.iter().enumerate() {
        assert_eq!(
            status(j.outs_of(r), &j.fakes[r], t, Command::GroupDestruct),
            0
        );
    }
}

fn group_info(lcid: u64) -> Info {
    let l = Info::new("pmix.grp.lclid", Value::Size(lcid));
    Info::new("pmix.grp.info", Value::DataArray(DataArray::infos([l])))
}

/// A GETNB of `rank`'s local CID qualified by context id `ctxid`.
fn lcid_get(rank: u32, ctxid: u64) -> Request {
    let mut q = Info::new("pmix.grp.ctxid", Value::Size(ctxid));
    q.flags = InfoFlags::QUALIFIER;
    Request::GetNb(GetNb {
        nspace: NS.into(),
        rank: Rank(rank),
        info: vec![q],
        key: Some("pmix.grp.lclid".into()),
    })
}

/// Constructs `grp` over all four ranks with a context id and local CIDs
/// 100 + rank; returns the context id every member got.
fn construct_spanning(j: &mut Job, grp: &str) -> u64 {
    let mut tags = Vec::new();
    for r in 0..4 {
        let req = construct_req(
            grp,
            &[0, 1, 2, 3],
            vec![actxid(), group_info(100 + r as u64)],
        );
        tags.push(j.send(r, &req));
    }
    let [a, b] = j.fences();
    assert!(
        j.outs
            .iter()
            .flatten()
            .all(|o| !matches!(o, Output::Send { .. })),
        "nobody is answered before the host"
    );
    let now = j.now;
    let ab = [a[0].2.clone(), b[0].2.clone()].concat();
    let ba = [b[0].2.clone(), a[0].2.clone()].concat();
    j.nodes[0].host_answer(a[0].0, HostAnswer::Fence(Ok(ab)), now);
    j.nodes[1].host_answer(b[0].0, HostAnswer::Fence(Ok(ba)), now);
    j.fences();
    let ids: Vec<u64> = (0..4)
        .map(|r| {
            let (s, _, c) = construct_reply(j.outs_of(r), &j.fakes[r], tags[r]);
            assert_eq!(s, 0, "rank {r}");
            c.expect("a context id")
        })
        .collect();
    assert!(ids.iter().all(|&c| c == ids[0]), "{ids:?}");
    j.outs = [Vec::new(), Vec::new()];
    ids[0]
}

#[test]
fn a_construct_across_nodes_runs_over_the_hosts_fence_and_every_member_gets_one_context_id() {
    let mut j = job();
    let ctxid = construct_spanning(&mut j, "span");
    // Every member reads every other's local CID on its own node: node A has node
    // B's members' group info from the host's fence, and asks the host nothing.
    for r in 0..4usize {
        for peer in 0..4u32 {
            let tag = j.send(r, &lcid_get(peer, ctxid));
            assert!(j.fences().iter().all(Vec::is_empty));
            let Reply::GetNb(g) = reply(j.outs_of(r), &j.fakes[r], tag, Command::GetNb) else {
                panic!("rank {r}: no answer for {peer}")
            };
            assert_eq!(g.status, Status::SUCCESS);
            let Value::DataArray(a) = &g.data[0].kvals[0].value else {
                panic!("{g:?}")
            };
            let Value::Info(primary) = &a.items[0] else {
                panic!("{a:?}")
            };
            assert_eq!(primary.value, Value::Size(100 + u64::from(peer)));
            j.outs = [Vec::new(), Vec::new()];
        }
    }
    // The destruct spans the nodes too, over the construct's membership.
    let tags: Vec<u32> = (0..4)
        .map(|r| {
            let req = destruct_req(&j.fakes[r], "span", &[0, 1, 2, 3]);
            j.send(r, &req)
        })
        .collect();
    let procs = j.host_round();
    assert_eq!(procs, vec![(NS.to_string(), Rank::WILDCARD.0)]);
    for r in 0..4 {
        assert_eq!(
            status(j.outs_of(r), &j.fakes[r], tags[r], Command::GroupDestruct),
            0
        );
    }
}

#[test]
fn a_leave_on_one_node_reaches_the_other_nodes_members_with_the_next_collective() {
    // A host that carries no events (Slurm's plugin has no notify_event): the
    // leave's notification to the other node is dropped.
    let mut j = job();
    construct_spanning(&mut j, "span");
    // Rank 3 (node B) leaves: rank 2, beside it, hears at once; node A's ranks
    // cannot yet (the host carries no events).
    let t = j.send(3, &leave_req("span"));
    assert!(j.fences().iter().all(Vec::is_empty));
    assert_eq!(status(j.outs_of(3), &j.fakes[3], t, Command::GroupLeave), 0);
    assert_eq!(left(&j, 2), 1);
    assert_eq!((left(&j, 0), left(&j, 1)), (0, 0));
    // The survivors destruct: node A learns of the leave from node B's part, tells
    // its members, and the destruct completes on the survivors.
    let tags = destruct(&mut j, "span", &[0, 1, 2]);
    assert_eq!((left(&j, 0), left(&j, 1)), (1, 1));
    destructed(&j, &tags);
}

#[test]
fn with_a_host_that_carries_events_a_leave_reaches_the_other_node_at_once_and_once() {
    let mut j = job();
    construct_spanning(&mut j, "span");
    let t = j.send(3, &leave_req("span"));
    j.fences();
    assert_eq!(status(j.outs_of(3), &j.fakes[3], t, Command::GroupLeave), 0);
    // Node B hands the host one PMIX_GROUP_LEFT ranged to node A's members; the host
    // injects it at node A (as mpirun's daemons do, through PMIx_Notify_event).
    let [
        Upcall::Notify {
            code,
            source,
            range,
            info,
        },
    ] = &j.notifies[1][..]
    else {
        panic!("{:?}", j.notifies)
    };
    assert_eq!(
        (*code, source),
        (Status::GROUP_LEFT.0, &(NS.to_string(), 3))
    );
    assert!(j.notifies[0].is_empty());
    let (code, source, range, info) = (*code, source.clone(), *range, info.clone());
    j.nodes[0].raise_event(
        code,
        Some((&source.0, source.1)),
        info,
        pmix_wire::DataRange(range),
    );
    j.fences();
    assert_eq!((left(&j, 0), left(&j, 1), left(&j, 2)), (1, 1, 1));
    // The destruct among the survivors tells nobody a second time.
    let tags = destruct(&mut j, "span", &[0, 1, 2]);
    assert_eq!((left(&j, 0), left(&j, 1), left(&j, 2)), (1, 1, 1));
    destructed(&j, &tags);
}

#[test]
fn groups_across_nodes_and_on_one_node_never_share_a_context_id() {
    let mut j = job();
    let a = construct_spanning(&mut j, "one");
    let b = construct_spanning(&mut j, "two");
    // A group of node B's ranks alone: node B assigns its id, without the host.
    let mut tags = Vec::new();
    for r in 2..4 {
        tags.push(j.send(r, &construct_req("local", &[2, 3], vec![actxid()])));
    }
    assert!(j.fences().iter().all(Vec::is_empty));
    let c = construct_reply(j.outs_of(2), &j.fakes[2], tags[0])
        .2
        .unwrap();
    assert_eq!(
        construct_reply(j.outs_of(3), &j.fakes[3], tags[1]).2,
        Some(c)
    );
    // A group of node A's alone.
    j.outs = [Vec::new(), Vec::new()];
    let mut tags = Vec::new();
    for r in 0..2 {
        tags.push(j.send(r, &construct_req("localA", &[0, 1], vec![actxid()])));
    }
    j.fences();
    let d = construct_reply(j.outs_of(0), &j.fakes[0], tags[0])
        .2
        .unwrap();
    let ids = [a, b, c, d];
    for (i, x) in ids.iter().enumerate() {
        for y in &ids[i + 1..] {
            assert_ne!(x, y, "{ids:?}");
        }
    }
}

#[test]
fn a_failed_host_fence_fails_the_construct_at_every_local_caller() {
    let mut j = job();
    let mut tags = Vec::new();
    for r in 0..4 {
        tags.push(j.send(r, &construct_req("bad", &[0, 1, 2, 3], vec![])));
    }
    let [a, b] = j.fences();
    let now = j.now;
    j.nodes[0].host_answer(a[0].0, HostAnswer::Fence(Err(pmix_wire::Status(-25))), now);
    j.nodes[1].host_answer(b[0].0, HostAnswer::Fence(Err(pmix_wire::Status(-25))), now);
    j.fences();
    for r in 0..4 {
        assert_eq!(construct_reply(j.outs_of(r), &j.fakes[r], tags[r]).0, -25);
    }
    // The name is free again.
    j.outs = [Vec::new(), Vec::new()];
    construct_spanning(&mut j, "bad");
}

#[test]
fn an_invite_whose_members_span_nodes_makes_the_group_known_on_every_node() {
    use pmix_wire::DataRange;
    use pmix_wire::msg::Notify;
    let mut j = job();
    let procs = |ranks: &[u32]| {
        let items = ranks
            .iter()
            .map(|&r| Value::Proc(pmix_wire::Proc::new(NS, r)))
            .collect();
        Value::DataArray(DataArray::new(pmix_wire::DataType::Proc, items).unwrap())
    };
    let notify = |code: Status, to: &[u32]| {
        Request::Notify(Notify {
            status: code,
            range: DataRange::CUSTOM,
            info: vec![
                Info::new("pmix.grp.id", "inv"),
                Info::new("pmix.evrange", procs(to)),
            ],
        })
    };
    // What a node hands the host, injected at the other node as mpirun's daemons
    // do (the evrange packed as it crosses the host and restored as the embedding
    // library restores it).
    let carry = |j: &mut Job, from: usize| {
        j.fences();
        for n in std::mem::take(&mut j.notifies[from]) {
            let Upcall::Notify {
                code,
                source,
                range: sent,
                info,
            } = n
            else {
                unreachable!()
            };
            // A host that passes the range on as SESSION: the list restores CUSTOM.
            let (info, range) = pmix::server::hosted::event_info_from_host(
                pmix::server::hosted::event_info_to_host(&info),
                DataRange::SESSION,
            );
            assert_eq!(
                (DataRange(sent), range),
                (DataRange::CUSTOM, DataRange::CUSTOM)
            );
            j.nodes[1 - from].raise_event(code, Some((&source.0, source.1)), info, range);
        }
        j.fences();
    };
    // Rank 0 (node A) invites 1, 2 and 3; 2 and 3 (node B) and 1 accept.
    j.send(0, &notify(Status::GROUP_INVITED, &[1, 2, 3]));
    carry(&mut j, 0);
    for r in 1..4 {
        j.send(r, &notify(Status::GROUP_INVITE_ACCEPTED, &[0]));
        carry(&mut j, r / 2);
    }
    j.send(0, &notify(Status::GROUP_CONSTRUCT_COMPLETE, &[1, 2, 3]));
    carry(&mut j, 0);
    j.outs = [Vec::new(), Vec::new()];
    // Node B knows the group: its members' fence over it goes to the host, with
    // node A's, instead of being refused.
    let fence = Request::FenceNb(pmix_wire::msg::FenceNb {
        procs: vec![pmix_wire::Proc {
            nspace: "inv".into(),
            rank: Rank::WILDCARD,
        }],
        info: Vec::new(),
    });
    let tags: Vec<u32> = (0..4).map(|r| j.send(r, &fence)).collect();
    j.host_round();
    for (r, &t) in tags.iter().enumerate() {
        assert_eq!(
            status(j.outs_of(r), &j.fakes[r], t, Command::FenceNb),
            0,
            "rank {r}"
        );
    }
}

#[test]
fn a_leave_heard_after_its_groups_destruct_leaves_a_new_group_of_that_name_alone() {
    // A host's events (or our relay over Slurm) may bring node B's leave to node A
    // after the group's destruct completed there, and after a new group of the same
    // name was constructed. Measured under `srun -N 2`: node A took the old leave as
    // one from the new group, whose destruct then listed other procs there than on
    // node B, and the host's collectives never matched.
    let mut j = job();
    let old = construct_spanning(&mut j, "span");
    let t = j.send(3, &leave_req("span"));
    j.fences();
    assert_eq!(status(j.outs_of(3), &j.fakes[3], t, Command::GroupLeave), 0);
    let Some(Upcall::Notify {
        code,
        source,
        range,
        info,
    }) = j.notifies[1].pop()
    else {
        panic!("{:?}", j.notifies)
    };
    // The survivors destruct; node A hears of the leave from node B's part.
    let tags = destruct(&mut j, "span", &[0, 1, 2]);
    assert_eq!((left(&j, 0), left(&j, 1)), (1, 1));
    destructed(&j, &tags);
    j.outs = [Vec::new(), Vec::new()];
    let new = construct_spanning(&mut j, "span");
    assert_ne!(old, new);
    // The old leave reaches node A now: nobody hears it again, the new group keeps
    // rank 3.
    j.nodes[0].raise_event(
        code,
        Some((&source.0, source.1)),
        info,
        pmix_wire::DataRange(range),
    );
    assert!(j.fences().iter().all(Vec::is_empty));
    assert_eq!((left(&j, 0), left(&j, 1), left(&j, 2)), (0, 0, 0));
    // Its destruct lists the same procs on both nodes and completes for all four.
    let tags = destruct(&mut j, "span", &[0, 1, 2, 3]);
    destructed(&j, &tags);
}
