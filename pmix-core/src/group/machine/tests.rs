//! Unit tests of the state machine that read its queue: every input's outputs fit
//! it, and an output that does not fit is handed back and fails the input.

use super::*;
use crate::group::id::Nspace;
use crate::status::PmixError;
use std::vec::Vec;

fn proc(r: u32) -> ProcId {
    ProcId::new(Nspace::new("t").unwrap(), r).unwrap()
}

fn group(n: u32) -> Group {
    let roster = Roster::from_ranks(proc(0).nspace, 0..n).unwrap();
    Group::new(GroupId::new("g").unwrap(), &proc(0), roster).unwrap()
}

fn drain(g: &mut Group) -> Vec<Output> {
    core::iter::from_fn(|| g.poll_output()).collect()
}

/// The inputs that queue the most items: each output must come out.
#[test]
fn outputs_per_input_fit_the_queue() {
    let codes = |out: &[Output]| -> Vec<Status> {
        out.iter()
            .map(|o| match o {
                Output::Notify(n) => n.code,
                Output::Complete(c) => c.status,
                Output::Send(_) => Status::SUCCESS,
            })
            .collect()
    };
    let c0 = Body::Contribute {
        op: CollectiveOp::Construct,
        seq: 0,
    };
    // A leave that completes a construct an earlier loss aborts (no FT): its
    // event, the abort event, the completion.
    let mut g = group(4);
    g.construct(ConstructOptions::default()).unwrap();
    drain(&mut g);
    g.on_message(&proc(1), c0).unwrap();
    g.on_lost(&proc(3)).unwrap();
    assert!(drain(&mut g).is_empty(), "a loss alone waits for rank 2");
    g.on_message(&proc(2), Body::Left).unwrap();
    assert_eq!(g.queue.len(), 3);
    assert_eq!(
        codes(&drain(&mut g)),
        [
            Status::GROUP_LEFT,
            Status::GROUP_CONSTRUCT_ABORT,
            Status::GROUP_CONSTRUCT_ABORT
        ]
    );
    // A leave that completes an FT construct: its event, the lazy member-failed
    // report (one output per departed member), the completion.
    let mut g = group(4);
    g.construct(ConstructOptions {
        ft_collective: true,
        notify_termination: false,
    })
    .unwrap();
    drain(&mut g);
    g.on_message(&proc(1), c0).unwrap();
    g.on_lost(&proc(3)).unwrap();
    g.on_message(&proc(2), Body::Left).unwrap();
    assert_eq!(g.queue.len(), 3);
    assert_eq!(
        codes(&drain(&mut g)),
        [
            Status::GROUP_LEFT,
            Status::GROUP_MEMBER_FAILED,
            Status::GROUP_MEMBER_FAILED,
            Status::SUCCESS
        ]
    );
    // A construct call completing an FT construct with departures: send, the
    // lazy member-failed reports, completion.
    let mut g = group(4);
    g.on_message(&proc(1), c0).unwrap();
    g.on_lost(&proc(2)).unwrap();
    g.on_lost(&proc(3)).unwrap();
    g.construct(ConstructOptions {
        ft_collective: true,
        notify_termination: true,
    })
    .unwrap();
    assert_eq!(g.queue.len(), 3);
    let out = drain(&mut g);
    assert_eq!(out.len(), 4, "{out:?}");
    assert!(matches!(out[0], Output::Send(_)));
    assert!(matches!(out[3], Output::Complete(c) if c.status == Status::SUCCESS));
    assert!(g.queue.is_empty());
}

/// A full queue hands the item back (heapless' `push_back`) and keeps what it holds;
/// an input whose outputs do not fit fails with `OutputOverflow`, never dropping an
/// output silently nor panicking.
#[test]
fn a_full_queue_hands_the_output_back_and_the_input_fails() {
    // The queue alone: fill it to capacity; the next push hands the item back.
    let mut g = group(4);
    let filler = Item::Send(Body::Left);
    for _ in 0..QUEUE {
        g.push(filler).unwrap();
    }
    let item = Item::Notify {
        code: Status::GROUP_LEFT,
        member: 1,
    };
    assert_eq!(g.push(item), Err(Overflow(item)));
    assert_eq!(g.queue.len(), QUEUE);
    assert!(g.queue.iter().all(|&i| i == filler), "nothing was replaced");
    assert_eq!(drain(&mut g).len(), QUEUE, "everything queued comes out");

    // The machine: a construct (no FT) waits on rank 2 after rank 3 was lost.
    // Rank 2's leave queues its PMIX_GROUP_LEFT, the abort event and the
    // completion; with one entry left the event fits and the abort is handed back.
    let c0 = Body::Contribute {
        op: CollectiveOp::Construct,
        seq: 0,
    };
    g = group(4);
    g.construct(ConstructOptions::default()).unwrap();
    drain(&mut g);
    g.on_message(&proc(1), c0).unwrap();
    g.on_lost(&proc(3)).unwrap();
    for _ in 0..QUEUE - 1 {
        g.push(filler).unwrap();
    }
    // Public inputs refuse a queue that is not drained; drive the step beneath.
    assert_eq!(
        g.on_message(&proc(2), Body::Left),
        Err(GroupError::Undrained)
    );
    let handed_back = g.on_departure(2, DepartureCause::Left).unwrap_err();
    assert_eq!(
        handed_back,
        Overflow(Item::Notify {
            code: Status::GROUP_CONSTRUCT_ABORT,
            member: 3,
        })
    );
    let err = GroupError::from(handed_back);
    assert_eq!(err, GroupError::OutputOverflow { capacity: QUEUE });
    assert_eq!(err.status(), Status::ERROR);
    assert_eq!(g.queue.len(), QUEUE);
    assert_eq!(
        g.queue.back(),
        Some(&Item::Notify {
            code: Status::GROUP_LEFT,
            member: 2,
        })
    );
}
