//! docs/design.md §5: a tracker is sized at creation and allocates nothing afterwards. A
//! counting global allocator (its own test binary) counts every allocation made on
//! the test's thread while armed, through every tracker operation and a whole
//! exchange (contribute, combine, decide, apply, and adding contributions received
//! from other processes) at 1,048,576 members.

use pmix_testkit::counting;

use counting::allocations_during;

use pmix_core::ftstate::{
    AgreeValue, Contribution, FtError, Mask, Operation, RankInfo, Ranks, Tracker, View,
};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

const N: u32 = 1 << 20;

#[test]
fn the_counter_sees_allocations() {
    assert!(allocations_during(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn every_tracker_operation_at_a_million_members_runs_without_allocating() {
    // Creation: everything allocated here.
    let mut t = Tracker::new(N, 0).unwrap();
    let mut peer = Tracker::new(N, 1).unwrap();
    let mut acc = AgreeValue::new(N).unwrap();
    let mut part = AgreeValue::new(N).unwrap();
    let mut out = vec![RankInfo::default(); N as usize];
    let mut checks = 0usize;
    let n = allocations_during(|| {
        for r in (2..N).step_by(4099) {
            t.report_failure(r).unwrap();
        }
        t.report_left(3).unwrap();
        assert_eq!(
            t.report_failure(N),
            Err(FtError::RankOutOfRange { rank: N, size: N })
        );
        let v = t.validate_local();
        assert_eq!(v.num_failed as usize, t.get_failed().len());
        for r in [7, 11, 13] {
            t.report_failure(r).unwrap();
        }
        assert_eq!(t.validate_local().new_failures, 3);
        for view in [View::Local, View::Global] {
            for bits in 0..32 {
                let mask = Mask::from_bits(bits).unwrap();
                let k = t.get_num_state(view, mask) as usize;
                assert_eq!(t.get_state(view, mask, &mut out).unwrap(), k);
                assert_eq!(t.get_state(view, mask, &mut []).unwrap(), k);
                if k > 0 {
                    assert_eq!(
                        t.get_state(view, mask, &mut out[..k - 1]),
                        Err(FtError::Size { needed: k })
                    );
                }
            }
        }
        t.ack_failed(2);
        let _ = t.get_acked().len() + t.get_failed().len();
        for op in [
            Operation::Send { to: 7 },
            Operation::Recv { from: 1 },
            Operation::RecvAny { nonblocking: true },
            Operation::Collective,
            Operation::Agree,
        ] {
            checks += usize::from(t.check(op).is_err());
        }
        // One exchange: both contribute, combine, decide, apply three ways.
        peer.report_failure(99).unwrap();
        t.contribute(0b11, &mut acc).unwrap();
        peer.contribute(0b01, &mut part).unwrap();
        acc.combine(&part).unwrap();
        let d = acc.decide();
        assert!(d.failed_count() > 0);
        assert!(t.validate_global(&d).unwrap().num_failed > 0);
        assert_eq!(
            t.validate_global_count(&d, Mask::NULL | Mask::NEW).unwrap(),
            0
        );
        assert_eq!(t.agree(&d).unwrap().flag, 0b01);
        let map = t.shrink(&d).unwrap();
        assert_eq!(map.new_rank(0), Some(0));
        // Only ranks 0 and 1 contributed; 3 left: every other member is failed.
        assert_eq!(map.new_size(), 2);
        assert_eq!(map.iter().count(), 2);
        assert_eq!(d.failed_count(), N - 3);
        assert!(t.revoke());
        assert_eq!(
            t.check(Operation::Send { to: 1 }),
            Err(pmix_core::ftstate::OpError::Revoked)
        );
        acc.reset();
        part.reset();
        // A contribution received from another process, in either form.
        let failed = [5u32, 9, 4097];
        part.add(&Contribution {
            rank: 2,
            flag: 1,
            failed: Ranks::Sorted(&failed),
            acked: Ranks::Sorted(&failed[..1]),
            left: Ranks::EMPTY,
        })
        .unwrap();
        let k = peer.known();
        part.add(&Contribution {
            rank: 1,
            flag: 1,
            failed: Ranks::Bitmap(k.failed.words()),
            acked: Ranks::Bitmap(k.acked.words()),
            left: Ranks::Bitmap(k.left.words()),
        })
        .unwrap();
        assert_eq!(part.contributors().len(), 2);
    });
    assert_eq!(n, 0, "allocations after the tracker was created");
    assert_eq!(
        checks, 3,
        "p2p to a failure, wildcard with unacked, collective"
    );
    assert!(
        t.heap_bytes() <= 16 * N as usize,
        "{} bytes for {N} members",
        t.heap_bytes()
    );
}
