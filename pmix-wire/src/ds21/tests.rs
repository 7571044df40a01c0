//! The writer's patches applied to in-memory files, read back as OpenPMIx's
//! `_dstore_fetch` reads them.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::buf::Reader;
use crate::limits::Limits;

/// The files of one namespace, as the I/O layer keeps them.
struct Files(BTreeMap<Ds21File, Vec<u8>>);

impl Files {
    fn new(nspace: &str) -> Files {
        let mut m = BTreeMap::new();
        m.insert(Ds21File::Initial, initial_segment(nspace).unwrap());
        Files(m)
    }

    fn apply(&mut self, patches: &[Patch]) {
        for p in patches {
            let size = match p.file {
                Ds21File::Initial => INITIAL_SEG_SIZE,
                Ds21File::Meta(_) => META_SEG_SIZE,
                Ds21File::Data(_) => DATA_SEG_SIZE,
            };
            let f = self.0.entry(p.file).or_insert_with(|| vec![0; size]);
            f[p.at..p.at + p.bytes.len()].copy_from_slice(&p.bytes);
        }
    }

    fn u64_at(&self, file: Ds21File, at: usize) -> u64 {
        let f = &self.0[&file];
        u64::from_le_bytes(f[at..at + 8].try_into().unwrap())
    }

    /// OpenPMIx's fetch: the rank's slot, then its entries up to its count,
    /// following extension slots, skipping replaced ones.
    fn fetch(&self, rank: u32, key: &str) -> Option<Value> {
        let slot = slot_of(rank) as usize;
        let meta = Ds21File::Meta((slot / META_SLOTS) as u32);
        if !self.0.contains_key(&meta) {
            return None;
        }
        let at = 8 + META_SLOT_LEN * (slot % META_SLOTS);
        let mut off = self.u64_at(meta, at + 8);
        let mut count = self.u64_at(meta, at + 16);
        if off == 0 {
            return None;
        }
        let ndata = self.u64_at(Ds21File::Initial, NUM_DATA_AT);
        while count > 0 {
            let (seg, local) = split(off);
            assert!(u64::from(seg) < ndata, "an offset past the segments named");
            let data = &self.0[&Ds21File::Data(seg)];
            let flags = u64::from_le_bytes(data[local..local + 8].try_into().unwrap());
            let size = (flags & !(EXTENSION | INVALIDATED)) as usize;
            if flags & EXTENSION != 0 {
                let next = u64::from_le_bytes(data[local + 17..local + 25].try_into().unwrap());
                if next == 0 {
                    return None;
                }
                off = next;
                continue;
            }
            let hash = u64::from_le_bytes(data[local + 8..local + 16].try_into().unwrap());
            let kend = local + 16 + data[local + 16..].iter().position(|&b| b == 0).unwrap();
            let k = &data[local + 16..kend];
            if flags & INVALIDATED == 0 {
                if k == key.as_bytes() {
                    assert_eq!(hash, key_hash(k));
                    let v = &data[kend + 1..local + size];
                    let mut r = Reader::new(v, BufferType::NonDescribed, Limits::DEFAULT);
                    let got: Vec<Value> = r.unpack("value").unwrap();
                    assert_eq!(got.len(), 1);
                    return got.into_iter().next();
                }
                count -= 1;
            }
            off += size as u64;
        }
        None
    }
}

fn packed(v: impl Into<Value>) -> Vec<u8> {
    value_bytes(&v.into(), BufferType::NonDescribed).unwrap()
}

fn put(w: &mut Ds21Writer, f: &mut Files, rank: u32, kv: &[(&str, Value)]) {
    let bytes: Vec<(&str, Vec<u8>)> = kv.iter().map(|(k, v)| (*k, packed(v.clone()))).collect();
    let refs: Vec<(&str, &[u8])> = bytes.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    let patches = w.append(rank, &refs).unwrap();
    f.apply(&patches);
}

#[test]
fn values_pack_as_bfrops_packs_one_pmix_value() {
    // From a libpmix2 client's segments under mpirun.
    assert_eq!(packed(2u32), [0x02, 0x0e, 0x02]);
    assert_eq!(
        packed(0xa0b0_c0d0u32),
        [0x02, 0x0e, 0xd0, 0x81, 0xc3, 0x85, 0x0a]
    );
    assert_eq!(packed("hello"), b"\x02\x03\x0chello\0");
    assert_eq!(packed(Rank(0)), [0x02, 0x28, 0x00]);
    let fd = value_bytes(&Value::string("[5940,0]"), BufferType::FullyDescribed).unwrap();
    assert_eq!(fd, b"\x09\x02\x15\x03\x12[5940,0]\0");
}

#[test]
fn key_hashes_and_the_initial_segment_are_openpmixs() {
    assert_eq!(key_hash(b"mykey"), 0x22f);
    assert_eq!(key_hash(b"gkey"), 0x1b0);
    assert_eq!(key_hash(&[0xff]), u64::MAX);
    let b = initial_segment("1390673921").unwrap();
    assert_eq!(b.len(), 4096);
    assert_eq!(&b[0..16], &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[16..27], b"1390673921\0");
    assert_eq!(b[NUM_META_AT], 1);
    assert_eq!(b[NUM_DATA_AT], 1);
    for bad in ["", "a/b", "a\0b"] {
        assert_eq!(initial_segment(bad), Err(Ds21Error::BadNamespace));
    }
    assert!(initial_segment(&"n".repeat(256)).is_err());
}

#[test]
fn the_lock_segment_is_laid_out_as_openpmix_sizes_it() {
    // Two local clients: a 64-byte header, four mutexes, one page.
    assert_eq!(lock_layout(2, 4096), (4096, 64));
    let h = lock_header(2, 4096);
    assert_eq!(h.len(), 40);
    assert_eq!(u64::from_le_bytes(h[0..8].try_into().unwrap()), 4096);
    assert_eq!(u32::from_le_bytes(h[8..12].try_into().unwrap()), 2);
    assert_eq!(u64::from_le_bytes(h[16..24].try_into().unwrap()), 64);
    assert_eq!(u64::from_le_bytes(h[24..32].try_into().unwrap()), 64);
    // 128 clients: the slots push the first mutex to 576, 256 mutexes after.
    let (size, first) = lock_layout(128, 4096);
    assert_eq!(first, 576);
    assert!(size >= first + 256 * MUTEX_STRIDE && size % 4096 == 0);
}

#[test]
fn a_reader_finds_the_jobs_and_each_ranks_values() {
    let mut w = Ds21Writer::new();
    let mut f = Files::new("job");
    put(
        &mut w,
        &mut f,
        Rank::WILDCARD.0,
        &[
            ("pmix.job.size", Value::Uint32(4)),
            ("pmix.lpeers", Value::string("0,1,2,3")),
        ],
    );
    for r in 0..4 {
        put(
            &mut w,
            &mut f,
            r,
            &[
                ("pmix.lrank", Value::Uint16(r as u16)),
                ("pmix.hname", Value::string("node0")),
            ],
        );
    }
    assert_eq!(
        f.fetch(Rank::WILDCARD.0, "pmix.job.size"),
        Some(Value::Uint32(4))
    );
    assert_eq!(
        f.fetch(Rank::WILDCARD.0, "pmix.lpeers"),
        Some(Value::string("0,1,2,3"))
    );
    for r in 0..4 {
        assert_eq!(f.fetch(r, "pmix.lrank"), Some(Value::Uint16(r as u16)));
        assert_eq!(f.fetch(r, "pmix.no"), None);
    }
    assert_eq!(f.fetch(4, "pmix.lrank"), None);
}

#[test]
fn later_values_are_linked_after_a_ranks_run_and_replace_the_old() {
    let mut w = Ds21Writer::new();
    let mut f = Files::new("job");
    put(
        &mut w,
        &mut f,
        0,
        &[("a", Value::Uint32(1)), ("b", Value::string("x"))],
    );
    put(&mut w, &mut f, 1, &[("a", Value::Uint32(10))]);
    // Rank 0 commits again: a new key, the same value of "a", a new one of "b".
    put(
        &mut w,
        &mut f,
        0,
        &[
            ("a", Value::Uint32(1)),
            ("b", Value::string("longer")),
            ("c", Value::Bool(true)),
        ],
    );
    assert_eq!(f.fetch(0, "a"), Some(Value::Uint32(1)));
    assert_eq!(f.fetch(0, "b"), Some(Value::string("longer")));
    assert_eq!(f.fetch(0, "c"), Some(Value::Bool(true)));
    assert_eq!(f.fetch(1, "a"), Some(Value::Uint32(10)));
    // Three live entries for rank 0: a, b (the new), c.
    assert_eq!(f.u64_at(Ds21File::Meta(0), 8 + 24 + 16), 3);
    // The same values again write nothing.
    let again = w
        .append(0, &[("a", &packed(1u32)[..]), ("c", &packed(true)[..])])
        .unwrap();
    assert!(again.is_empty());
}

#[test]
fn a_value_of_the_same_size_is_written_over_the_old_and_the_run_does_not_grow() {
    let mut w = Ds21Writer::new();
    let mut f = Files::new("job");
    put(
        &mut w,
        &mut f,
        0,
        &[("round", Value::Uint32(1)), ("x", Value::Bool(true))],
    );
    let free = w.free;
    for round in 2..100u32 {
        put(&mut w, &mut f, 0, &[("round", Value::Uint32(round))]);
        assert_eq!(f.fetch(0, "round"), Some(Value::Uint32(round)));
    }
    // 1 to 99 pack in one byte each: every value went in place.
    assert_eq!(w.free, free);
    assert_eq!(f.u64_at(Ds21File::Meta(0), 8 + 24 + 16), 2);
    // A longer value gets a new entry, the old one marked replaced.
    put(&mut w, &mut f, 0, &[("round", Value::Uint32(100_000))]);
    assert!(w.free > free);
    assert_eq!(f.fetch(0, "round"), Some(Value::Uint32(100_000)));
    assert_eq!(f.fetch(0, "x"), Some(Value::Bool(true)));
    assert_eq!(f.u64_at(Ds21File::Meta(0), 8 + 24 + 16), 2);
}

#[test]
fn entries_spill_into_new_data_segments_and_the_initial_segment_counts_them() {
    let mut w = Ds21Writer::new();
    let mut f = Files::new("job");
    let big = Value::ByteObject(crate::value::ByteObject(vec![7u8; 1 << 20]));
    for r in 0..10u32 {
        put(
            &mut w,
            &mut f,
            r,
            &[("blob", big.clone()), ("r", Value::Uint32(r))],
        );
    }
    // A second round on every rank: its run continues in a later segment.
    for r in 0..10u32 {
        put(&mut w, &mut f, r, &[("again", Value::Uint32(100 + r))]);
    }
    assert!(w.data_segments() >= 3, "{}", w.data_segments());
    assert_eq!(
        f.u64_at(Ds21File::Initial, NUM_DATA_AT),
        u64::from(w.data_segments())
    );
    for r in 0..10u32 {
        assert_eq!(f.fetch(r, "blob"), Some(big.clone()));
        assert_eq!(f.fetch(r, "r"), Some(Value::Uint32(r)));
        assert_eq!(f.fetch(r, "again"), Some(Value::Uint32(100 + r)));
    }
    let huge = vec![0u8; DATA_SEG_SIZE];
    assert!(matches!(
        w.append(0, &[("huge", &huge[..])]),
        Err(Ds21Error::TooLarge { .. })
    ));
    assert_eq!(w.append(0, &[("", &huge[..1])]), Err(Ds21Error::BadKey));
    assert_eq!(f.fetch(0, "r"), Some(Value::Uint32(0)), "nothing filed");
}

#[test]
fn ranks_past_a_meta_segment_go_in_the_next() {
    let mut w = Ds21Writer::new();
    let mut f = Files::new("job");
    let far = META_SLOTS as u32 + 5;
    put(&mut w, &mut f, far, &[("k", Value::Uint32(9))]);
    assert_eq!(w.meta_segments(), 2);
    assert_eq!(f.u64_at(Ds21File::Initial, NUM_META_AT), 2);
    assert_eq!(f.fetch(far, "k"), Some(Value::Uint32(9)));
}

#[test]
fn a_key_given_twice_in_one_call_files_its_last_value_whatever_the_first() {
    // The first value of another size (a new entry, the old marked replaced), the
    // last of the old one's size (written in place): the last must stand, and the
    // rank's other keys stay.
    let mut w = Ds21Writer::new();
    let mut f = Files::new("job");
    put(
        &mut w,
        &mut f,
        0,
        &[("k", Value::Uint32(1)), ("other", Value::Bool(true))],
    );
    put(
        &mut w,
        &mut f,
        0,
        &[("k", Value::Uint32(100_000)), ("k", Value::Uint32(2))],
    );
    assert_eq!(f.fetch(0, "k"), Some(Value::Uint32(2)));
    assert_eq!(f.fetch(0, "other"), Some(Value::Bool(true)));
    // And the other way round: in place first, then another size.
    put(
        &mut w,
        &mut f,
        0,
        &[("k", Value::Uint32(3)), ("k", Value::Uint32(200_000))],
    );
    assert_eq!(f.fetch(0, "k"), Some(Value::Uint32(200_000)));
    assert_eq!(f.fetch(0, "other"), Some(Value::Bool(true)));
    // The same value twice writes nothing.
    let again = w
        .append(0, &[("k", &packed(200_000u32)), ("k", &packed(200_000u32))])
        .unwrap();
    assert!(again.is_empty());
}
