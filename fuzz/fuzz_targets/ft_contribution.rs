//! A rank-state contribution as it arrives from another process (`pmix_wire::ft`,
//! read by `pmix::ft`'s exchange from the key-value store): arbitrary bytes through
//! the decoder, and what decodes through `AgreeValue::add`.
//!
//! Invariants: no panic; an error names an offset inside the input; what decodes
//! re-encodes to a contribution that decodes to the same sets (the encoder may pick
//! the other form, never other ranks); added to an empty value of its size, the
//! contributor is in and the failed set holds exactly the decoded ranks; a second add
//! of the same contribution is refused and changes nothing.
//!
//! Cost: group sizes over [`MAX_SIZE`] are skipped after decoding (a value is four
//! bits a member; a contribution may name up to 2^31), so a run stays small.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmix_core::ftstate::{AgreeValue, Contribution, FtError, Ranks};
use pmix_wire::ft::{RankSet, decode, encode};

/// The largest group a run builds a value for.
const MAX_SIZE: u32 = 1 << 16;

fn ranks(s: &RankSet) -> Ranks<'_> {
    match s {
        RankSet::Sorted(v) => Ranks::Sorted(v),
        RankSet::Bitmap(w) => Ranks::Bitmap(w),
    }
}

/// The set as bitset words over `size`.
fn words(s: &RankSet, size: u32) -> Vec<u64> {
    match s {
        RankSet::Bitmap(w) => w.clone(),
        RankSet::Sorted(v) => {
            let mut w = vec![0u64; (size as usize).div_ceil(64)];
            for &r in v {
                w[r as usize / 64] |= 1 << (r % 64);
            }
            w
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let c = match decode(data) {
        Ok(c) => c,
        Err(e) => {
            assert!(e.offset <= data.len(), "{e:?}");
            return;
        }
    };
    if c.size > MAX_SIZE {
        return;
    }
    let sets = [
        words(&c.failed, c.size),
        words(&c.acked, c.size),
        words(&c.left, c.size),
    ];
    let again = encode(c.size, c.rank, c.round, c.flag, [&sets[0], &sets[1], &sets[2]])
        .expect("a decoded contribution encodes");
    let d = decode(&again).expect("an encoded contribution decodes");
    assert_eq!((d.size, d.rank, d.round, d.flag), (c.size, c.rank, c.round, c.flag));
    assert_eq!(words(&d.failed, d.size), sets[0]);
    assert_eq!(words(&d.acked, d.size), sets[1]);
    assert_eq!(words(&d.left, d.size), sets[2]);

    let mut v = AgreeValue::new(c.size).expect("a value of a decoded size");
    let contribution = Contribution {
        rank: c.rank,
        flag: c.flag,
        failed: ranks(&c.failed),
        acked: ranks(&c.acked),
        left: ranks(&c.left),
    };
    v.add(&contribution).expect("a decoded contribution adds");
    assert!(v.contributors().contains(c.rank));
    assert_eq!(v.flag(), c.flag);
    let decided = v.decide();
    for r in 0..c.size {
        let failed = c.failed.contains(r)
            || (r != c.rank && !c.left.contains(r));
        assert_eq!(decided.is_failed(r), failed, "rank {r}");
    }
    let before = v.clone();
    assert_eq!(
        v.add(&contribution),
        Err(FtError::DuplicateContribution { rank: c.rank })
    );
    assert!(v == before);
});
