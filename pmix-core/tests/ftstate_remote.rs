//! docs/design.md §5, §8: contributions travel between processes as rank sets (a list or a
//! bitmap); adding one received that way gives exactly what combining the sender's
//! own value gives, and a malformed one changes nothing.

use pmix_core::ftstate::{AgreeValue, Contribution, FtError, Ranks, Tracker};

fn sorted(s: &pmix_core::group::MemberSet) -> Vec<u32> {
    s.iter().collect()
}

/// A member of 200 with failures, acknowledgements and a leaver.
fn member(me: u32) -> Tracker {
    let mut t = Tracker::new(200, me).unwrap();
    for r in [150, 3, 64, 127] {
        t.report_failure(r).unwrap();
    }
    t.ack_failed(2);
    t.report_left(199).unwrap();
    t
}

#[test]
fn a_received_contribution_adds_what_the_senders_own_value_combines() {
    let (a, b) = (member(0), member(1));
    // Reference: both contribute into values, then combine.
    let mut reference = AgreeValue::new(200).unwrap();
    a.contribute(7, &mut reference).unwrap();
    let mut vb = AgreeValue::new(200).unwrap();
    b.contribute(5, &mut vb).unwrap();
    reference.combine(&vb).unwrap();

    // b's contribution as a list, and as bitmaps.
    let k = b.known();
    let (failed, acked, left) = (sorted(k.failed), sorted(k.acked), sorted(k.left));
    for form in 0..2 {
        let mut got = AgreeValue::new(200).unwrap();
        a.contribute(7, &mut got).unwrap();
        let c = if form == 0 {
            Contribution {
                rank: 1,
                flag: 5,
                failed: Ranks::Sorted(&failed),
                acked: Ranks::Sorted(&acked),
                left: Ranks::Sorted(&left),
            }
        } else {
            Contribution {
                rank: 1,
                flag: 5,
                failed: Ranks::Bitmap(k.failed.words()),
                acked: Ranks::Bitmap(k.acked.words()),
                left: Ranks::Bitmap(k.left.words()),
            }
        };
        got.add(&c).unwrap();
        assert_eq!(got, reference, "form {form}");
        assert_eq!(got.decide(), reference.decide());
    }
}

#[test]
fn a_malformed_or_duplicate_contribution_changes_nothing() {
    let a = member(0);
    let mut v = AgreeValue::new(200).unwrap();
    a.contribute(1, &mut v).unwrap();
    let before = v.clone();
    let bad = |failed| Contribution {
        rank: 2,
        flag: 0,
        failed,
        acked: Ranks::EMPTY,
        left: Ranks::EMPTY,
    };
    for (c, e) in [
        (
            bad(Ranks::Sorted(&[5, 5])),
            FtError::BadContribution { rank: 2 },
        ),
        (
            bad(Ranks::Sorted(&[9, 4])),
            FtError::BadContribution { rank: 2 },
        ),
        (
            bad(Ranks::Sorted(&[200])),
            FtError::BadContribution { rank: 2 },
        ),
        (
            bad(Ranks::Bitmap(&[0, 0])),
            FtError::BadContribution { rank: 2 },
        ),
        (
            bad(Ranks::Bitmap(&[0, 0, 0, 1 << 8])),
            FtError::BadContribution { rank: 2 },
        ),
    ] {
        assert_eq!(v.add(&c), Err(e));
        assert_eq!(v, before);
    }
    let mine = Contribution {
        rank: 0,
        ..bad(Ranks::EMPTY)
    };
    assert_eq!(
        v.add(&mine),
        Err(FtError::DuplicateContribution { rank: 0 })
    );
    let outside = Contribution {
        rank: 200,
        ..bad(Ranks::EMPTY)
    };
    assert_eq!(
        v.add(&outside),
        Err(FtError::RankOutOfRange {
            rank: 200,
            size: 200
        })
    );
    assert_eq!(v, before);
}

#[test]
fn every_survivor_adding_the_same_contributions_in_any_order_decides_the_same() {
    let members: Vec<Tracker> = (0..5).map(member).collect();
    let known: Vec<_> = members
        .iter()
        .map(|t| {
            let k = t.known();
            (sorted(k.failed), sorted(k.acked), sorted(k.left))
        })
        .collect();
    let contribution = |r: usize| Contribution {
        rank: r as u32,
        flag: 0xff ^ (1 << r),
        failed: Ranks::Sorted(&known[r].0),
        acked: Ranks::Sorted(&known[r].1),
        left: Ranks::Sorted(&known[r].2),
    };
    let mut first = AgreeValue::new(200).unwrap();
    for r in 0..5 {
        first.add(&contribution(r)).unwrap();
    }
    let mut reversed = AgreeValue::new(200).unwrap();
    for r in (0..5).rev() {
        reversed.add(&contribution(r)).unwrap();
    }
    assert_eq!(first, reversed);
    let d = first.decide();
    // The 195 members that neither contributed nor left, and the four failures
    // (two of them, 3 and 64, below 5: contributors' failures stand).
    assert!(d.is_failed(150) && d.is_failed(3) && d.is_failed(5) && !d.is_failed(199));
    assert_eq!(d.flag(), 0xff & !0x1f);
}
