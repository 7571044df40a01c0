//! Unit tests of the state machine that read its queue: every input's outputs fit it.

use super::*;
use crate::group::id::Nspace;
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
    assert_eq!(g.queue.len, 3);
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
    assert_eq!(g.queue.len, 3);
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
    assert_eq!(g.queue.len, 3);
    let out = drain(&mut g);
    assert_eq!(out.len(), 4, "{out:?}");
    assert!(matches!(out[0], Output::Send(_)));
    assert!(matches!(out[3], Output::Complete(c) if c.status == Status::SUCCESS));
    assert!(g.queue.is_empty());
}
