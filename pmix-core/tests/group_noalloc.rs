//! docs/design.md §4: once a group's record exists, nothing allocates. A counting global
//! allocator (its own test binary: one per binary) counts every allocation made on
//! the test's thread while armed, through a whole group life at 1,048,576 members
//! and a small group whose three replicas talk to each other.

use pmix_testkit::counting;

use counting::allocations_during;

use pmix_core::Status;
use pmix_core::group::{
    Body, CollectiveOp, ConstructOptions, GroupError, GroupId, Groups, Message, Nspace, Output,
    ProcId, Roster,
};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

const N: u32 = 1 << 20;

#[test]
fn the_counter_sees_allocations() {
    assert!(allocations_during(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn a_million_member_group_lives_its_whole_life_without_allocating() {
    let ns = Nspace::new("job").unwrap();
    let p = |r| ProcId::new(ns, r).unwrap();
    let id = GroupId::new("big").unwrap();
    let roster = Roster::from_ranks(ns, 0..N).unwrap();
    let mut g = Groups::new(p(0));
    g.invite(id, roster.clone()).unwrap(); // creation: allocates
    let contribute = |from, op, seq| Message {
        group: id,
        from: p(from),
        body: Body::Contribute { op, seq },
    };
    let mut outputs = 0usize;
    let mut failed_events = 0usize;
    let mut statuses = [Status::ERROR; 4];
    let n = allocations_during(|| {
        let mut drain = |g: &mut Groups| {
            while let Some(o) = g.poll_output() {
                outputs += 1;
                match o.output {
                    Output::Notify(n) if n.code == Status::GROUP_MEMBER_FAILED => {
                        failed_events += 1
                    }
                    Output::Complete(c) => statuses[c.seq as usize] = c.status,
                    Output::Send(_) => {
                        // The runtime reads the recipients: no allocation either.
                        let _ = g.get(&id).unwrap().others().take(3).count();
                    }
                    _ => {}
                }
            }
        };
        // Construct with FT: three members depart before contributing.
        g.construct(
            id,
            roster,
            ConstructOptions {
                ft_collective: true,
                notify_termination: true,
            },
        )
        .unwrap();
        drain(&mut g);
        g.on_message(&Message {
            group: id,
            from: p(5),
            body: Body::Left,
        })
        .unwrap();
        drain(&mut g);
        g.on_lost(&p(6)).unwrap();
        g.on_lost(&p(7)).unwrap();
        drain(&mut g);
        for r in (1..N).filter(|r| !(5..=7).contains(r)) {
            g.on_message(&contribute(r, CollectiveOp::Construct, 0))
                .unwrap();
        }
        drain(&mut g);
        // Bad input on the way: errors, no allocation.
        assert_eq!(
            g.on_message(&contribute(1, CollectiveOp::Construct, 0)),
            Err(GroupError::NotInFlight { seq: 0 })
        );
        assert_eq!(
            g.on_message(&Message {
                group: id,
                from: p(5),
                body: Body::Left
            }),
            Err(GroupError::Departed { rank: 5 })
        );
        assert_eq!(
            g.leave(&GroupId::new("other").unwrap()).unwrap_err(),
            GroupError::NotFound
        );
        // A fence without FT, one member lost meanwhile.
        g.fence(&id, false).unwrap();
        drain(&mut g);
        g.on_lost(&p(8)).unwrap();
        drain(&mut g);
        for r in (1..N).filter(|r| !(5..=8).contains(r)) {
            g.on_message(&contribute(r, CollectiveOp::Fence, 1))
                .unwrap();
        }
        drain(&mut g);
        // Leave handling at a receiver, then a destruct.
        g.on_message(&Message {
            group: id,
            from: p(9),
            body: Body::Left,
        })
        .unwrap();
        drain(&mut g);
        g.destruct(&id).unwrap();
        drain(&mut g);
        for r in (1..N).filter(|r| !(5..=9).contains(r)) {
            g.on_message(&contribute(r, CollectiveOp::Destruct, 2))
                .unwrap();
        }
        drain(&mut g);
    });
    assert_eq!(n, 0, "allocations after the group was created");
    assert_eq!(
        failed_events,
        3 + 1,
        "three departed in construct, one lost after (notify termination)"
    );
    assert_eq!(
        statuses[..3],
        [
            Status::SUCCESS,
            Status::ERR_PROC_TERM_WO_SYNC,
            Status::SUCCESS
        ]
    );
    assert!(g.get(&id).is_none(), "destructed and drained");
    assert!(outputs > 8);
}

#[test]
fn three_replicas_exchange_messages_and_a_leave_without_allocating() {
    let ns = Nspace::new("job").unwrap();
    let p = |r| ProcId::new(ns, r).unwrap();
    let id = GroupId::new("small").unwrap();
    let roster = Roster::from_ranks(ns, 0..4).unwrap();
    let rosters = [
        roster.clone(),
        roster.clone(),
        roster.clone(),
        roster.clone(),
    ];
    let mut procs = [
        Groups::new(p(0)),
        Groups::new(p(1)),
        Groups::new(p(2)),
        Groups::new(p(3)),
    ];
    for g in &mut procs {
        g.invite(id, roster.clone()).unwrap();
    }
    // A fixed-size mailbox: (to, message).
    let mut mail: [Option<(usize, Message)>; 64] = [None; 64];
    let mut done = [0u32; 4];
    let n = allocations_during(|| {
        fn post(mail: &mut [Option<(usize, Message)>; 64], to: usize, m: Message) {
            if let Some(slot) = mail.iter_mut().find(|s| s.is_none()) {
                *slot = Some((to, m));
            }
        }
        let drain = |i: usize,
                     procs: &mut [Groups; 4],
                     mail: &mut [Option<(usize, Message)>; 64],
                     done: &mut [u32; 4]| {
            while let Some(o) = procs[i].poll_output() {
                match o.output {
                    Output::Send(body) => {
                        let me = *procs[i].me();
                        for q in procs[i].get(&id).unwrap().others() {
                            post(
                                mail,
                                q.rank as usize,
                                Message {
                                    group: id,
                                    from: me,
                                    body,
                                },
                            );
                        }
                    }
                    Output::Complete(_) => done[i] += 1,
                    Output::Notify(_) => {}
                }
            }
        };
        let [r0, r1, r2, r3] = rosters;
        for (i, r) in [r0, r1, r2, r3].into_iter().enumerate() {
            procs[i]
                .construct(id, r, ConstructOptions::default())
                .unwrap();
            drain(i, &mut procs, &mut mail, &mut done);
        }
        let deliver_all = |procs: &mut [Groups; 4],
                           mail: &mut [Option<(usize, Message)>; 64],
                           done: &mut [u32; 4]| {
            while let Some(k) = mail.iter().position(Option::is_some) {
                let (to, m) = mail[k].take().unwrap();
                match procs[to].on_message(&m) {
                    Ok(()) | Err(GroupError::NotFound) => {}
                    Err(e) => panic!("{e}"),
                }
                drain(to, procs, mail, done);
            }
        };
        deliver_all(&mut procs, &mut mail, &mut done);
        for i in 0..4 {
            procs[i].fence(&id, true).unwrap();
            drain(i, &mut procs, &mut mail, &mut done);
        }
        deliver_all(&mut procs, &mut mail, &mut done);
        // p3 leaves: its departure message goes to the others.
        let dep = procs[3].leave(&id).unwrap();
        for q in dep.recipients() {
            post(&mut mail, q.rank as usize, dep.message());
        }
        deliver_all(&mut procs, &mut mail, &mut done);
        for i in 0..3 {
            procs[i].destruct(&id).unwrap();
            drain(i, &mut procs, &mut mail, &mut done);
        }
        deliver_all(&mut procs, &mut mail, &mut done);
    });
    assert_eq!(n, 0, "allocations after the records were created");
    assert_eq!(
        done,
        [3, 3, 3, 2],
        "construct, fence (and destruct) everywhere"
    );
    assert!(procs.iter().all(|g| g.get(&id).is_none()));
}
