//! `pmix::ft`'s calling rules (docs/design.md §5, §6): the local calls (validate_local and
//! every accessor) work on the progress thread, in an event handler or a callback,
//! and a repeated accessor gives the same answer; the collectives (validate_global,
//! its count form, agree, shrink) return `PMIX_ERR_WOULD_BLOCK` there at once and do
//! nothing; groups are checked. The exchanges themselves run between real processes
//! in `pmix-tools/tests/run_ft.rs`.

use std::sync::mpsc::channel;
use std::time::Duration;

use pmix::{Connect, Error, InitOptions, Pmix, PmixError, Role, Status};
use pmix_core::ftstate::{Mask, RankInfo, Validation, View};

const WAIT: Duration = Duration::from_secs(10);

fn singleton() -> Pmix {
    Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::Never,
            ..Default::default()
        },
    )
    .unwrap()
}

fn status<T: std::fmt::Debug>(r: Result<T, Error>) -> Status {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.status(),
    }
}

#[test]
fn local_calls_answer_on_the_progress_thread_and_collectives_would_block_there() {
    let p = singleton();
    let g = p.proc_id().nspace.to_string();
    let (tx, rx) = channel();
    let q = p.clone();
    p.post(move || {
        let mut answers = Vec::new();
        answers.push(format!("{:?}", q.ft_validate_local(&g)));
        answers.push(format!("{:?}", q.ft_size(&g)));
        for _ in 0..2 {
            answers.push(format!(
                "{:?}",
                q.ft_get_state(&g, View::Local, Mask::ALL, &mut [RankInfo::default(); 1])
            ));
            answers.push(format!(
                "{:?}",
                q.ft_get_num_state(&g, View::Global, Mask::ANY_FAILED)
            ));
        }
        answers.push(format!("{:?}", q.ft_get_failed(&g)));
        answers.push(format!("{:?}", q.ft_ack_failed(&g, 5)));
        answers.push(format!("{:?}", q.ft_get_acked(&g)));
        answers.push(format!("{:?}", q.ft_is_revoked(&g)));
        let blocked = [
            status(q.ft_validate_global(&g)),
            status(q.ft_validate_global_count(&g, Mask::ALL)),
            status(q.ft_agree(&g, 1)),
            status(q.ft_shrink(&g, "new")),
        ];
        tx.send((answers, blocked)).unwrap();
    })
    .unwrap();
    let (answers, blocked) = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        answers,
        [
            format!(
                "{:?}",
                Ok::<_, ()>(Validation {
                    num_failed: 0,
                    new_failures: 0
                })
            ),
            "Ok((1, 0))".into(),
            // The one member is OK; asked twice, the same answer.
            "Ok(1)".into(),
            "Ok(0)".into(),
            "Ok(1)".into(),
            "Ok(0)".into(),
            "Ok([])".into(),
            "Ok(0)".into(),
            "Ok([])".into(),
            "Ok(false)".into(),
        ]
    );
    assert_eq!(blocked, [Status::ERR_WOULD_BLOCK; 4]);
    p.finalize().unwrap();
}

#[test]
fn a_collective_without_a_server_is_unreachable_and_changes_nothing() {
    let p = singleton();
    let g = p.proc_id().nspace.to_string();
    assert_eq!(status(p.ft_validate_global(&g)), Status::ERR_UNREACH);
    assert_eq!(status(p.ft_agree(&g, 3)), Status::ERR_UNREACH);
    assert_eq!(
        p.ft_get_num_state(&g, View::Global, Mask::ANY_FAILED)
            .unwrap(),
        0
    );
    p.finalize().unwrap();
}

#[test]
fn groups_are_checked_and_a_finalized_instance_refuses_every_call() {
    let p = singleton();
    let g = p.proc_id().nspace.to_string();
    assert_eq!(
        status(p.ft_validate_local("no-such-group")),
        Status::ERR_NOT_FOUND
    );
    assert_eq!(status(p.ft_validate_local("")), Status::ERR_BAD_PARAM);
    assert_eq!(
        status(p.ft_validate_local(&"g".repeat(256))),
        Status::ERR_BAD_PARAM
    );
    assert_eq!(status(p.ft_shrink(&g, "")), Status::ERR_BAD_PARAM);
    // Ranks outside the group: no state, no error.
    assert_eq!(p.ft_ack_failed(&g, u32::MAX).unwrap(), 0);
    p.finalize().unwrap();
    assert_eq!(status(p.ft_validate_local(&g)), Status::ERR_INIT);
    assert_eq!(status(p.ft_validate_global(&g)), Status::ERR_INIT);
}
