//! A node-store segment as a client maps it (`pmix_wire::nodestore`, docs/serving.md
//! §5): any bytes through `Segment::parse` and `Segment::parse_lazy`, then lookups of
//! keys and ranks. Three
//! sources of bytes: the input itself; the input with its checksum rewritten (so the
//! tables behind the header are reached); a segment built from arbitrary entries,
//! with arbitrary bytes flipped, resealed or not.
//!
//! Invariants: no panic; a built segment left alone parses and answers every entry's
//! first value; whatever parses answers every lookup without a panic, with raw bytes
//! inside the segment, typed reads that agree with `get`, records that list at most
//! their count, and `check_values` agreeing with the values' own decodes.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmix_wire::nodestore::{Segment, SegmentBuilder, WILDCARD, checksum};
use pmix_wire::{Value, WStr};

/// The keys entries and lookups name (any bytes would do: these share prefixes).
const KEYS: [&str; 6] = [
    "pmix.hname",
    "pmix.job.size",
    "pmix.lrank",
    "k",
    "kk",
    "k.k",
];

#[derive(Arbitrary, Debug)]
enum Val {
    U32(u32),
    U64(u64),
    Str(String),
    Null,
    Bool(bool),
    Bytes(Vec<u8>),
    Array(Vec<u32>),
}

impl Val {
    fn value(&self) -> Value {
        match self {
            Val::U32(v) => Value::Uint32(*v),
            Val::U64(v) => Value::Size(*v),
            Val::Str(s) => Value::String(Some(WStr::from(s.as_str()))),
            Val::Null => Value::String(None),
            Val::Bool(b) => Value::Bool(*b),
            Val::Bytes(b) => Value::ByteObject(pmix_wire::ByteObject(b.clone())),
            Val::Array(v) => Value::DataArray(
                pmix_wire::DataArray::new(
                    pmix_wire::DataType::Uint32,
                    v.iter().map(|&x| Value::Uint32(x)).collect(),
                )
                .expect("uniform"),
            ),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Source {
    Raw(Vec<u8>),
    Resealed(Vec<u8>),
    Built {
        /// (rank: 0..15, or WILDCARD for 16 and up; key index; value).
        entries: Vec<(u8, u8, Val)>,
        flips: Vec<(u16, u8)>,
        reseal: bool,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    source: Source,
    lookups: Vec<(u32, u8)>,
}

fn rank_of(r: u8) -> u32 {
    if r >= 16 { WILDCARD } else { u32::from(r) }
}

fn reseal(b: &mut [u8]) {
    if let Some(sum) = checksum(b) {
        b[24..32].copy_from_slice(&sum.to_le_bytes());
    }
}

fn probe(seg: &Segment<&[u8]>, rank: u32, key: &str) {
    let bytes = seg.bytes();
    let range = bytes.as_ptr_range();
    if let Some(raw) = seg.raw(rank, key) {
        let r = raw.as_ptr_range();
        assert!(range.start <= r.start && r.end <= range.end);
        assert!(!raw.is_empty());
    }
    let got = seg.get(rank, key);
    assert_eq!(got.is_some(), seg.raw(rank, key).is_some());
    if let Some(Ok(s)) = seg.get_str(rank, key) {
        assert_eq!(got.as_ref(), Some(&Ok(Value::String(Some(WStr::from(s))))));
    }
    if let Some(Ok(v)) = seg.get_u64(rank, key) {
        let back = got
            .as_ref()
            .and_then(|g| g.as_ref().ok())
            .and_then(Value::as_u64);
        assert_eq!(back, Some(v));
    }
    if let Some(Ok(v)) = seg.get_u32(rank, key) {
        assert_eq!(seg.get_u64(rank, key), Some(Ok(u64::from(v))));
    }
}

fn check(seg: &Segment<&[u8]>, lookups: &[(u32, u8)]) {
    let mut all_decode = true;
    for rank in std::iter::once(WILDCARD).chain(0..seg.rank_count().min(64)) {
        if let Some(rec) = seg.record(rank) {
            assert!(rec.iter().count() <= rec.len());
            for (key, _) in rec.iter() {
                probe(seg, rank, key);
                all_decode &= rec.get(key).is_some_and(|v| v.is_ok());
                assert!(rec.raw_all(key).count() >= 1);
            }
        }
    }
    if seg.rank_count() <= 64 && seg.check_values().is_ok() {
        assert!(all_decode, "check_values passed a value get refused");
    }
    for &(rank, k) in lookups {
        let key = KEYS[k as usize % KEYS.len()];
        probe(seg, rank, key);
        probe(seg, rank % 32, key);
        if let Some(id) = seg.key_id(key) {
            assert_eq!(seg.raw_by_id(rank, id), seg.raw(rank, key));
        }
    }
    let keys: Vec<&str> = seg.keys().collect();
    assert_eq!(keys.len(), seg.key_count());
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
}

fuzz_target!(|input: Input| {
    let bytes = match input.source {
        Source::Raw(b) => b,
        Source::Resealed(mut b) => {
            reseal(&mut b);
            b
        }
        Source::Built {
            entries,
            flips,
            reseal: again,
        } => {
            let mut b = SegmentBuilder::new("fuzz", 1).expect("a good namespace");
            for (r, k, v) in &entries {
                b.push(rank_of(*r), KEYS[*k as usize % KEYS.len()], &v.value())
                    .expect("a good entry");
            }
            let mut bytes = b.finish().expect("a small segment");
            {
                let seg = Segment::parse(&bytes[..]).expect("what the builder writes parses");
                seg.check_values().expect("what the builder writes decodes");
                for (i, (r, k, _)) in entries.iter().enumerate() {
                    let key = KEYS[*k as usize % KEYS.len()];
                    let first = entries[..=i]
                        .iter()
                        .find(|(r2, k2, _)| {
                            rank_of(*r2) == rank_of(*r) && KEYS[*k2 as usize % KEYS.len()] == key
                        })
                        .map(|(_, _, v)| v.value());
                    assert_eq!(seg.get(rank_of(*r), key), first.map(Ok));
                }
            }
            for (at, x) in flips {
                let n = bytes.len();
                bytes[at as usize % n] ^= x;
            }
            if again {
                reseal(&mut bytes);
            }
            bytes
        }
    };
    let full = Segment::parse(&bytes[..]);
    if let Ok(seg) = &full {
        check(seg, &input.lookups);
    }
    // The lazy parse (what a client maps) accepts whatever the full one does, and
    // answers its lookups without a panic too.
    match Segment::parse_lazy(&bytes[..]) {
        Ok(seg) => check(&seg, &input.lookups),
        Err(e) => assert!(full.is_err(), "the lazy parse refused what the full one took: {e}"),
    }
});
