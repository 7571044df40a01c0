//! The node store's segments: round trips of the job information's values at 1,
//! 1,000 and 100,000 ranks, keys in any order, and every kind of malformed segment
//! refused with its error (never a panic).

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::buf::Writer;
use crate::keys;
use crate::msg::{JobInfo, JobItem, ProcBlob};
use crate::types::BufferType;
use crate::value::{ByteObject, DataArray, Info, Kval, Rank, Value, WStr};
use crate::{Codec, Command, Reply};

/// What our server's job information gives one rank (docs/serving.md §1(b)), in the
/// types it gives them.
fn rank_kvals(rank: u32, nlocal: u32) -> Vec<Kval> {
    vec![
        Kval::new(keys::LOCALITY_STRING, "SK0:L30:L20:L10:CR0:HT0-1"),
        Kval::new(keys::CPUSET, "0-1"),
        Kval::new(keys::GLOBAL_RANK, Rank(rank)),
        Kval::new(keys::LOCAL_RANK, (rank % nlocal) as u16),
        Kval::new(keys::NODE_RANK, (rank % nlocal) as u16),
        Kval::new(keys::NODEID, rank / nlocal),
        Kval::new(keys::HOSTNAME, alloc::format!("node{}", rank / nlocal)),
        Kval::new(keys::APPNUM, 0u32),
    ]
}

/// The job-level values: one of every type the job information carries.
fn job_kvals(size: u32) -> Vec<Kval> {
    vec![
        Kval::new(keys::SERVER_NSPACE, "srv"),
        Kval::new(keys::SERVER_RANK, 0u32),
        Kval::new(keys::JOBID, "job"),
        Kval::new(keys::NPROC_OFFSET, 0u32),
        Kval::new(keys::NUM_NODES, 1u32),
        Kval::new(keys::NODE_LIST, "node0"),
        Kval::new(keys::JOB_SIZE, size),
        Kval::new(keys::JOB_NUM_APPS, 1u32),
        Kval::new(keys::MAX_PROCS, size),
        Kval::new(keys::BFROPS_MODULE, "v41"),
        Kval::new(keys::SESSION_ID, u32::MAX),
        Kval::new(keys::UNIV_SIZE, size),
        Kval::new(keys::RS_DIST_ORIGIN, true),
        Kval::new(keys::LOCALLDR, Rank(0)),
        Kval::new(keys::NODE_SIZE, Value::Size(u64::from(size))),
        Kval::new(keys::LOCAL_PEERS, "0,1,2"),
        Kval::new(keys::TMPDIR, Value::String(None)),
        Kval::new(keys::PROC_MAP, Value::ProcCpuset(Some(WStr::from("0-3")))),
        Kval::new(
            keys::NODE_INFO_ARRAY,
            DataArray::infos([
                Info::new(keys::HOSTNAME, "node1"),
                Info::new(keys::NODEID, 1u32),
            ]),
        ),
        Kval::new(keys::SERVER_URI, Value::Int64(-5)),
        Kval::new(keys::TIMEOUT, Value::double(1.5)),
        Kval::new(
            keys::RS_LIMIT_PREFIX,
            Value::ByteObject(ByteObject(vec![0, 1, 2])),
        ),
    ]
}

fn build(size: u32, ranks: impl Iterator<Item = u32>) -> Vec<u8> {
    let mut b = SegmentBuilder::new("job", 0).unwrap();
    for kv in job_kvals(size) {
        b.push(WILDCARD, kv.key.as_str().unwrap(), &kv.value)
            .unwrap();
    }
    for r in ranks {
        for kv in rank_kvals(r, 4) {
            b.push(r, kv.key.as_str().unwrap(), &kv.value).unwrap();
        }
    }
    b.finish().unwrap()
}

fn check_rank(seg: &Segment<&[u8]>, r: u32) {
    for kv in rank_kvals(r, 4) {
        let key = kv.key.as_str().unwrap();
        assert_eq!(
            seg.get(r, key),
            Some(Ok(kv.value.clone())),
            "rank {r} {key}"
        );
    }
    assert_eq!(seg.get_u32(r, keys::GLOBAL_RANK), Some(Ok(r)));
    assert_eq!(seg.get_u32(r, keys::LOCAL_RANK), Some(Ok(r % 4)));
    let host = alloc::format!("node{}", r / 4);
    assert_eq!(seg.get_str(r, keys::HOSTNAME), Some(Ok(host.as_str())));
    assert_eq!(
        seg.get(r, keys::JOB_SIZE),
        None,
        "no job-level key in a rank's record"
    );
}

#[test]
fn one_rank_round_trips_every_type_of_the_job_information() {
    let bytes = build(1, 0..1);
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!(seg.nspace(), "job");
    assert_eq!(seg.generation(), 0);
    assert_eq!(seg.rank_count(), 1);
    assert_eq!(seg.len(), bytes.len());
    for kv in job_kvals(1) {
        let key = kv.key.as_str().unwrap();
        assert_eq!(seg.get(WILDCARD, key), Some(Ok(kv.value.clone())), "{key}");
        // The raw bytes are the value's own encoding.
        let mut w = Writer::new(BufferType::NonDescribed);
        crate::buf::Element::encode(&kv.value, &mut w);
        assert_eq!(seg.raw(WILDCARD, key), Some(w.as_bytes()), "{key}");
    }
    check_rank(&seg, 0);
    assert_eq!(seg.get_u32(WILDCARD, keys::JOB_SIZE), Some(Ok(1)));
    assert_eq!(
        seg.get_u64(WILDCARD, keys::SESSION_ID),
        Some(Ok(u64::from(u32::MAX)))
    );
    assert_eq!(
        seg.get_u32(WILDCARD, keys::NODE_SIZE),
        Some(Ok(1)),
        "a SIZE that fits"
    );
    assert_eq!(
        seg.get_u32(WILDCARD, keys::LOCALLDR),
        Some(Ok(0)),
        "a PROC_RANK"
    );
    assert_eq!(seg.get_str(WILDCARD, keys::NODE_LIST), Some(Ok("node0")));
    assert_eq!(seg.get(WILDCARD, keys::HOSTNAME), None);
    assert_eq!(seg.get(1, keys::HOSTNAME), None, "past the rank table");
    assert_eq!(seg.get(Rank::UNDEF.0, keys::HOSTNAME), None);
    seg.check_values().unwrap();
    let mut keys_seen: Vec<&str> = seg.keys().collect();
    assert_eq!(keys_seen.len(), seg.key_count());
    let sorted = {
        let mut k = keys_seen.clone();
        k.sort_unstable();
        k
    };
    assert_eq!(keys_seen, sorted);
    keys_seen.dedup();
    assert_eq!(keys_seen.len(), seg.key_count(), "each key once");
    // Every entry of the rank's record, in the dictionary's order.
    let rec = seg.record(0).unwrap();
    assert_eq!(rec.len(), 8);
    assert_eq!(rec.rank(), 0);
    let listed: Vec<&str> = rec.iter().map(|(k, _)| k).collect();
    let mut want: Vec<String> = rank_kvals(0, 4)
        .iter()
        .map(|k| k.key.as_str().unwrap().to_string())
        .collect();
    want.sort_unstable();
    assert_eq!(listed, want);
}

#[test]
fn typed_reads_refuse_other_types() {
    let bytes = build(1, 0..1);
    let seg = Segment::parse(&bytes[..]).unwrap();
    fn wrong<T>(r: Option<Result<T, StoreError>>) -> bool {
        matches!(r, Some(Err(StoreError::WrongType { .. })))
    }
    assert!(wrong(seg.get_u32(WILDCARD, keys::JOBID)));
    assert!(
        wrong(seg.get_u32(WILDCARD, keys::SERVER_URI)),
        "a signed integer"
    );
    assert!(wrong(seg.get_u32(WILDCARD, keys::RS_DIST_ORIGIN)), "a bool");
    assert!(wrong(seg.get_str(WILDCARD, keys::JOB_SIZE)));
    assert!(wrong(seg.get_str(WILDCARD, keys::TMPDIR)), "a NULL string");
    assert!(
        wrong(seg.get_str(WILDCARD, keys::PROC_MAP)),
        "a PROC_CPUSET"
    );
    let mut b = SegmentBuilder::new("job", 3).unwrap();
    b.push(WILDCARD, keys::JOB_SIZE, &Value::Uint64(1 << 40))
        .unwrap();
    b.push(
        WILDCARD,
        keys::HOSTNAME,
        &Value::String(Some(WStr::new(vec![0xff, 0xfe]))),
    )
    .unwrap();
    let bytes = b.finish().unwrap();
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!(seg.generation(), 3);
    assert!(
        wrong(seg.get_u32(WILDCARD, keys::JOB_SIZE)),
        "too large for a u32"
    );
    assert_eq!(seg.get_u64(WILDCARD, keys::JOB_SIZE), Some(Ok(1 << 40)));
    assert!(wrong(seg.get_str(WILDCARD, keys::HOSTNAME)), "not UTF-8");
    assert_eq!(
        seg.get(WILDCARD, keys::HOSTNAME),
        Some(Ok(Value::String(Some(WStr::new(vec![0xff, 0xfe])))))
    );
}

#[test]
fn a_thousand_ranks_answer_every_rank() {
    let bytes = build(1000, 0..1000);
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!(seg.rank_count(), 1000);
    assert_eq!(seg.ranks().count(), 1000);
    for r in 0..1000 {
        check_rank(&seg, r);
    }
    seg.check_values().unwrap();
}

#[test]
fn a_hundred_thousand_ranks_answer_every_rank() {
    const N: u32 = 100_000;
    let bytes = build(N, 0..N);
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!(seg.rank_count(), N);
    assert_eq!(seg.get_u32(WILDCARD, keys::JOB_SIZE), Some(Ok(N)));
    let grank = seg.key_id(keys::GLOBAL_RANK).unwrap();
    for r in 0..N {
        let raw = seg.raw_by_id(r, grank).unwrap();
        assert_eq!(raw, {
            let mut w = Writer::new(BufferType::NonDescribed);
            crate::buf::Element::encode(&Value::ProcRank(r), &mut w);
            w.finish().unwrap()
        });
    }
    for r in [0, 1, N / 2, N - 1] {
        check_rank(&seg, r);
    }
    // About 100 bytes a rank (a job-info blob carries about 128).
    let per_rank = bytes.len() / N as usize;
    assert!((60..=140).contains(&per_rank), "{per_rank} bytes a rank");
}

/// A deterministic shuffle (xorshift).
fn shuffle<T>(v: &mut [T], mut seed: u64) {
    for i in (1..v.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        v.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

#[test]
fn keys_and_ranks_in_any_order_make_the_same_bytes() {
    let mut entries: Vec<(u32, Kval)> = job_kvals(50).into_iter().map(|k| (WILDCARD, k)).collect();
    for r in [3, 17, 4, 49, 0] {
        entries.extend(rank_kvals(r, 4).into_iter().map(|k| (r, k)));
    }
    let make = |entries: &[(u32, Kval)]| {
        let mut b = SegmentBuilder::new("job", 7).unwrap();
        for (r, kv) in entries {
            b.push(*r, kv.key.as_str().unwrap(), &kv.value).unwrap();
        }
        assert_eq!(b.len(), entries.len());
        b.finish().unwrap()
    };
    let first = make(&entries);
    for seed in 1..20 {
        let mut e = entries.clone();
        shuffle(&mut e, seed);
        assert_eq!(make(&e), first, "seed {seed}");
    }
    let seg = Segment::parse(&first[..]).unwrap();
    assert_eq!(seg.rank_count(), 50);
    assert_eq!(seg.ranks().collect::<Vec<_>>(), [0, 3, 4, 17, 49]);
    for r in [3, 17, 4, 49, 0] {
        check_rank(&seg, r);
    }
    assert!(seg.record(1).is_none(), "an absent rank has no record");
    assert_eq!(seg.get(1, keys::HOSTNAME), None);
}

#[test]
fn a_key_written_twice_answers_the_first_and_raw_all_gives_both() {
    let mut b = SegmentBuilder::new("job", 1).unwrap();
    let arr = |h: &str| Value::DataArray(DataArray::infos([Info::new(keys::HOSTNAME, h)]));
    b.push(WILDCARD, keys::NODE_INFO_ARRAY, &arr("a")).unwrap();
    b.push(WILDCARD, keys::JOB_SIZE, &Value::Uint32(2)).unwrap();
    b.push(WILDCARD, keys::NODE_INFO_ARRAY, &arr("b")).unwrap();
    b.push(WILDCARD, keys::NODE_INFO_ARRAY, &arr("c")).unwrap();
    let bytes = b.finish().unwrap();
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!(seg.get(WILDCARD, keys::NODE_INFO_ARRAY), Some(Ok(arr("a"))));
    let rec = seg.record(WILDCARD).unwrap();
    let all: Vec<Value> = rec
        .raw_all(keys::NODE_INFO_ARRAY)
        .map(|raw| {
            let mut r = crate::Reader::new(raw, BufferType::NonDescribed, crate::Limits::DEFAULT);
            <Value as crate::buf::Element>::decode(&mut r).unwrap()
        })
        .collect();
    assert_eq!(all, [arr("a"), arr("b"), arr("c")]);
    assert_eq!(rec.raw_all(keys::HOSTNAME).count(), 0);
    assert_eq!(rec.raw_all(keys::JOB_SIZE).count(), 1);
}

#[test]
fn an_empty_segment_parses_and_holds_nothing() {
    let bytes = SegmentBuilder::new("empty", 9).unwrap().finish().unwrap();
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!((seg.rank_count(), seg.key_count()), (0, 0));
    assert_eq!(seg.get(WILDCARD, keys::JOB_SIZE), None);
    assert_eq!(seg.get(0, keys::JOB_SIZE), None);
    assert!(seg.record(WILDCARD).is_none());
    // Owned storage: the segment keeps its bytes.
    let owned = Segment::parse(bytes.clone()).unwrap();
    assert_eq!(owned.nspace(), "empty");
    assert_eq!(owned.into_inner(), bytes);
}

#[test]
fn push_encoded_copies_a_value_from_another_segment() {
    let bytes = build(2, 0..2);
    let seg = Segment::parse(&bytes[..]).unwrap();
    let mut b = SegmentBuilder::new("job", 1).unwrap();
    for (key, raw) in seg.record(1).unwrap().iter() {
        b.push_encoded(1, key, raw).unwrap();
    }
    let copy = b.finish().unwrap();
    let copy = Segment::parse(&copy[..]).unwrap();
    check_rank(&copy, 1);
    let mut b = SegmentBuilder::new("job", 1).unwrap();
    assert!(matches!(
        b.push_encoded(0, keys::HOSTNAME, &[3, 4, b'a']),
        Err(StoreError::Value { .. })
    ));
    assert!(
        matches!(
            b.push_encoded(0, keys::HOSTNAME, &[14, 1, 0]),
            Err(StoreError::Value { .. })
        ),
        "trailing bytes"
    );
}

#[test]
fn the_builder_refuses_what_a_segment_cannot_hold() {
    for ns in ["", "a\0b"] {
        assert!(matches!(
            SegmentBuilder::new(ns, 0),
            Err(StoreError::BadNamespace { .. })
        ));
    }
    let long = "n".repeat(256);
    assert!(matches!(
        SegmentBuilder::new(&long, 0),
        Err(StoreError::BadNamespace { .. })
    ));
    assert!(SegmentBuilder::new(&long[..255], 0).is_ok());
    let mut b = SegmentBuilder::new("job", 0).unwrap();
    let v = Value::Uint32(1);
    for key in ["", "a\0", &"k".repeat(512)] {
        assert!(
            matches!(b.push(0, key, &v), Err(StoreError::BadKey { .. })),
            "{key:?}"
        );
    }
    for rank in [Rank::UNDEF.0, Rank::LOCAL_NODE.0, Rank::VALID.0] {
        assert!(matches!(
            b.push(rank, keys::JOB_SIZE, &v),
            Err(StoreError::BadRank { .. })
        ));
    }
    assert!(b.is_empty());
    b.push(Rank::VALID.0 - 1, &"k".repeat(511), &v).unwrap();
    // Rank 2^32 - 17 needs a rank table of 16 GiB: refused before it is made.
    assert!(matches!(b.finish(), Err(StoreError::TooLarge { .. })));
}

/// Decodes a captured REQ reply (mpirun's, OpenPMIx 4.2.2) and files it.
#[test]
fn the_captured_job_information_of_mpirun_is_filed_key_by_key() {
    let payload = capture_message(
        include_str!("../../../testdata/wire-captures/init_hash.txt"),
        931,
    );
    let Reply::Req(job) = crate::decode_reply(Command::Req, &payload, &Codec::v422()).unwrap()
    else {
        panic!("not a job-info reply");
    };
    let mut b = SegmentBuilder::new(job.nspace.as_str().unwrap(), 0).unwrap();
    b.push_job_info(&job).unwrap();
    let bytes = b.finish().unwrap();
    let seg = Segment::parse(&bytes[..]).unwrap();
    seg.check_values().unwrap();
    assert_eq!(seg.nspace(), "43843585");
    // Where a job-level key is found: job values, this node's, the session's, the
    // first app's.
    let mut flat: Vec<(&str, &Value)> = job
        .values()
        .map(|k| (k.key.as_str().unwrap(), &k.value))
        .collect();
    let session = job.items.iter().find_map(|i| match i {
        JobItem::Session(v) => Some(v.as_slice()),
        _ => None,
    });
    let first_app = job.items.iter().find_map(|i| match i {
        JobItem::App(v) => Some(v.as_slice()),
        _ => None,
    });
    for arr in job.nodes().take(1).chain(session).chain(first_app) {
        flat.extend(arr.iter().map(|i| (i.key.as_str().unwrap(), &i.value)));
    }
    let mut checked = 0;
    for (key, _) in &flat {
        let first = flat.iter().find(|(k, _)| k == key).unwrap().1;
        assert_eq!(seg.get(WILDCARD, key), Some(Ok(first.clone())), "{key}");
        checked += 1;
    }
    for p in job.procs() {
        for k in p.kvals().unwrap().iter() {
            let key = k.key.as_str().unwrap();
            assert_eq!(seg.get(p.rank.0, key), Some(Ok(k.value.clone())), "{key}");
            checked += 1;
        }
    }
    assert!(checked > 25, "{checked} keys");
    assert_eq!(seg.get_u32(WILDCARD, keys::JOB_SIZE), Some(Ok(2)));
    assert_eq!(seg.get_u32(1, keys::GLOBAL_RANK), Some(Ok(1)));
    // Two ranks: the header and the key dictionary (80 bytes, and 4 bytes and the
    // text of each key once) weigh more than the keys the reply repeats per rank.
    assert!(
        bytes.len() < payload.len() * 3 / 2,
        "{} vs {}",
        bytes.len(),
        payload.len()
    );
}

#[test]
fn push_job_info_files_this_nodes_array_flat_and_every_node_array_whole() {
    let this = vec![
        Info::new(keys::HOSTNAME, "n0"),
        Info::new(keys::LOCAL_SIZE, 2u32),
    ];
    let other = vec![
        Info::new(keys::HOSTNAME, "n1"),
        Info::new(keys::LOCAL_SIZE, 3u32),
    ];
    let app0 = vec![Info::new(keys::APPNUM, 0u32)];
    let app1 = vec![Info::new(keys::APPNUM, 1u32)];
    let job = JobInfo {
        nspace: WStr::from("job"),
        items: vec![
            JobItem::Value(Kval::new(keys::JOB_SIZE, 5u32)),
            JobItem::Session(vec![Info::new(keys::UNIV_SIZE, 5u32)]),
            JobItem::Node(this.clone()),
            JobItem::Node(other.clone()),
            JobItem::App(app0),
            JobItem::App(app1.clone()),
            JobItem::Proc(ProcBlob::new(
                Rank(4),
                vec![Kval::new(keys::HOSTNAME, "n1")],
            )),
        ],
    };
    let mut b = SegmentBuilder::new("job", 0).unwrap();
    b.push_job_info(&job).unwrap();
    let bytes = b.finish().unwrap();
    let seg = Segment::parse(&bytes[..]).unwrap();
    assert_eq!(seg.get_str(WILDCARD, keys::HOSTNAME), Some(Ok("n0")));
    assert_eq!(seg.get_u32(WILDCARD, keys::LOCAL_SIZE), Some(Ok(2)));
    assert_eq!(seg.get_u32(WILDCARD, keys::UNIV_SIZE), Some(Ok(5)));
    assert_eq!(seg.get_u32(WILDCARD, keys::APPNUM), Some(Ok(0)));
    let arrays: Vec<Value> = seg
        .record(WILDCARD)
        .unwrap()
        .get_all(keys::NODE_INFO_ARRAY)
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        arrays,
        [
            Value::DataArray(DataArray::infos(this)),
            Value::DataArray(DataArray::infos(other))
        ]
    );
    assert_eq!(
        seg.get(WILDCARD, keys::APP_INFO_ARRAY),
        Some(Ok(Value::DataArray(DataArray::infos(app1))))
    );
    assert_eq!(seg.get_str(4, keys::HOSTNAME), Some(Ok("n1")));
    assert_eq!(seg.rank_count(), 5);
}

// ---- Malformed segments ----

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(b: &[u8], at: usize) -> u32 {
    le_u32(b, at).unwrap()
}

/// Writes the checksum the bytes now need.
fn reseal(b: &mut [u8]) {
    if let Some(sum) = checksum(b) {
        b[field::CHECKSUM..field::CHECKSUM + 8].copy_from_slice(&sum.to_le_bytes());
    }
}

fn small() -> Vec<u8> {
    build(3, 0..3)
}

fn refused(b: &[u8]) -> StoreError {
    Segment::parse(b).expect_err("a malformed segment is refused")
}

#[test]
fn a_truncated_segment_is_refused_at_every_length() {
    let bytes = small();
    for len in 0..bytes.len() {
        match refused(&bytes[..len]) {
            StoreError::Truncated { len: l, need } => {
                assert_eq!(l, len);
                assert!(need == HEADER_LEN as u64 || need == bytes.len() as u64);
            }
            e => panic!("{len}: {e}"),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(refused(&longer), StoreError::TrailingBytes { .. }));
}

#[test]
fn a_wrong_magic_version_or_checksum_is_refused() {
    let bytes = small();
    let mut b = bytes.clone();
    b[0] = b'Q';
    assert!(matches!(refused(&b), StoreError::BadMagic { found } if found == *b"QXNS"));
    let mut b = bytes.clone();
    b[field::VERSION] = 2;
    assert_eq!(refused(&b), StoreError::UnsupportedVersion { found: 2 });
    let mut b = bytes.clone();
    b[field::GENERATION] ^= 1;
    assert!(matches!(refused(&b), StoreError::Checksum { .. }));
    let mut b = bytes.clone();
    b[HEADER_LEN] = b'x'; // the namespace
    assert!(matches!(refused(&b), StoreError::Checksum { .. }));
    let mut b = bytes.clone();
    put_u32(&mut b, field::FLAGS, 1);
    reseal(&mut b);
    assert!(matches!(
        refused(&b),
        StoreError::Layout {
            what: "the flags",
            ..
        }
    ));
    let mut b = bytes.clone();
    b[field::HEADER_LEN] = 96;
    assert!(matches!(
        refused(&b),
        StoreError::Layout {
            what: "the header length",
            ..
        }
    ));
    let e = refused(&b);
    assert!(e.to_string().contains("header length"), "{e}");
}

#[test]
fn offsets_out_of_range_and_overlapping_tables_are_refused() {
    let bytes = small();
    let total = bytes.len() as u32;
    let cases: [(usize, u32, &str); 8] = [
        (field::KEY_INDEX, 80, "the key index"), // inside the namespace
        (
            field::KEY_INDEX,
            get_u32(&bytes, field::KEY_INDEX) + 2,
            "the key index",
        ),
        (
            field::KEY_BYTES,
            get_u32(&bytes, field::KEY_INDEX),
            "the key bytes",
        ),
        (field::KEY_BYTES_LEN, total, "the key bytes"),
        (field::RANK_COUNT, total, "the rank table"),
        (
            field::JOB,
            get_u32(&bytes, field::RANK_TABLE),
            "the job record",
        ),
        (field::JOB_LEN, total, "the job record"),
        (field::NSPACE_LEN, total, "the namespace"),
    ];
    for (at, v, what) in cases {
        let mut b = bytes.clone();
        put_u32(&mut b, at, v);
        reseal(&mut b);
        match refused(&b) {
            StoreError::Layout { what: w, .. } => assert_eq!(w, what, "field {at} = {v}"),
            e => panic!("field {at} = {v}: {e}"),
        }
    }
    // The rank table outside the segment: the checksum cannot be computed.
    let mut b = bytes.clone();
    put_u32(&mut b, field::RANK_TABLE, total + 4);
    assert!(matches!(
        refused(&b),
        StoreError::Layout {
            what: "the rank table",
            ..
        }
    ));
    // The rank table's ends.
    let rt = get_u32(&bytes, field::RANK_TABLE) as usize;
    let mut b = bytes.clone();
    put_u32(&mut b, rt, get_u32(&bytes, rt) + 1);
    assert!(matches!(
        refused(&b),
        StoreError::Layout {
            what: "the rank table",
            ..
        }
    ));
    let mut b = bytes.clone();
    put_u32(&mut b, rt + 12, total - 1);
    assert!(matches!(
        refused(&b),
        StoreError::Layout {
            what: "the rank table",
            ..
        }
    ));
    // A rank's record ending before it starts.
    let mut b = bytes.clone();
    put_u32(&mut b, rt + 4, get_u32(&bytes, rt) - 1);
    assert!(matches!(refused(&b), StoreError::BadRecord { rank: 0, .. }));
}

#[test]
fn bad_keys_in_the_dictionary_are_refused() {
    let bytes = small();
    let kb = get_u32(&bytes, field::KEY_BYTES) as usize;
    let ki = get_u32(&bytes, field::KEY_INDEX) as usize;
    let mut b = bytes.clone();
    b[kb + 1] = 0xff;
    reseal(&mut b);
    assert!(matches!(
        refused(&b),
        StoreError::BadKey {
            index: 0,
            why: "is not UTF-8"
        }
    ));
    let mut b = bytes.clone();
    b[kb + 1] = 0;
    reseal(&mut b);
    assert!(matches!(
        refused(&b),
        StoreError::BadKey {
            index: 0,
            why: "holds a NUL"
        }
    ));
    // Key 1 made equal to key 0's first bytes, so not after it.
    let mut b = bytes.clone();
    let (a0, a1) = (
        get_u32(&bytes, ki + 4) as usize,
        get_u32(&bytes, ki + 8) as usize,
    );
    b[kb + a0..kb + a1].fill(b'a');
    reseal(&mut b);
    assert!(matches!(refused(&b), StoreError::BadKey { index: 1, .. }));
    // Offsets going backwards, or not starting at 0.
    let mut b = bytes.clone();
    put_u32(&mut b, ki + 4, 0);
    reseal(&mut b);
    assert!(matches!(refused(&b), StoreError::BadKey { index: 0, .. }));
    let mut b = bytes.clone();
    put_u32(&mut b, ki, 1);
    reseal(&mut b);
    assert!(matches!(
        refused(&b),
        StoreError::Layout {
            what: "the key index",
            ..
        }
    ));
    // A namespace that is not UTF-8.
    let mut b = bytes.clone();
    b[HEADER_LEN] = 0xc0;
    reseal(&mut b);
    assert_eq!(
        refused(&b),
        StoreError::BadNamespace {
            why: "is not UTF-8"
        }
    );
}

#[test]
fn a_lazy_parse_checks_a_rank_record_when_a_lookup_reaches_it() {
    let bytes = small();
    let rt = get_u32(&bytes, field::RANK_TABLE) as usize;
    let k = get_u32(&bytes, field::KEY_COUNT);
    let rec = get_u32(&bytes, rt + 4) as usize; // rank 1's record
    let mut b = bytes.clone();
    put_u32(&mut b, rec + 4 + ENTRY_LEN, k); // a key the dictionary lacks
    assert!(matches!(refused(&b), StoreError::BadRecord { rank: 1, .. }));
    let lazy = Segment::parse_lazy(&b[..]).unwrap();
    assert!(lazy.record(1).is_none());
    assert!(lazy.get(1, keys::LOCAL_RANK).is_none());
    let good = Segment::parse(&bytes[..]).unwrap();
    for r in [0, 2] {
        assert_eq!(lazy.get(r, keys::LOCAL_RANK), good.get(r, keys::LOCAL_RANK));
    }
    assert_eq!(
        lazy.get(WILDCARD, keys::JOB_SIZE),
        good.get(WILDCARD, keys::JOB_SIZE)
    );
    // What the header, dictionary and job record hold is still checked at once.
    let mut b = bytes.clone();
    put_u32(&mut b, field::KEY_COUNT, k + 1);
    assert!(Segment::parse_lazy(&b[..]).is_err());
}

#[test]
fn bad_records_are_refused() {
    let bytes = small();
    let rt = get_u32(&bytes, field::RANK_TABLE) as usize;
    let k = get_u32(&bytes, field::KEY_COUNT);
    let rec = get_u32(&bytes, rt + 4) as usize; // rank 1's record
    let count = get_u32(&bytes, rec) as usize;
    let entry = |i: usize| rec + 4 + ENTRY_LEN * i;
    let first = entry(count);
    let cases: [(usize, u32, &str); 5] = [
        (rec, 0, "holds no entry but is not empty"),
        (rec, 10_000, "has more entries than its bytes hold"),
        (entry(1), k, "names a key the dictionary does not hold"),
        (
            entry(0) + 4,
            first as u32 + 1,
            "has a first value that does not follow its entries",
        ),
        (
            entry(2) + 4,
            get_u32(&bytes, entry(1) + 4),
            "has a value that is empty or goes backwards",
        ),
    ];
    for (at, v, why) in cases {
        let mut b = bytes.clone();
        put_u32(&mut b, at, v);
        assert_eq!(
            refused(&b),
            StoreError::BadRecord {
                rank: 1,
                why,
                offset: if at == rec {
                    rec
                } else {
                    at - 4 * usize::from(why.contains("value"))
                } as u64,
            },
            "{why}"
        );
    }
    // Entry 0 given the last key id: entry 1 is then out of order.
    let mut b = bytes.clone();
    put_u32(&mut b, entry(0), k - 1);
    assert_eq!(
        refused(&b),
        StoreError::BadRecord {
            rank: 1,
            why: "is not sorted by key",
            offset: entry(1) as u64
        }
    );
    // The last value past the record's end: rank 1's record ends where rank 2's
    // starts, so the last offset is moved there.
    let mut b = bytes.clone();
    put_u32(&mut b, entry(count - 1) + 4, get_u32(&bytes, rt + 8));
    assert!(matches!(refused(&b), StoreError::BadRecord { rank: 1, .. }));
    // The job record too.
    let job = get_u32(&bytes, field::JOB) as usize;
    let mut b = bytes.clone();
    put_u32(&mut b, job + 4, k + 1);
    assert!(matches!(
        refused(&b),
        StoreError::BadRecord { rank: WILDCARD, .. }
    ));
    assert!(refused(&b).to_string().contains("the job record"));
}

#[test]
fn a_value_that_does_not_decode_is_an_error_of_its_get() {
    let bytes = small();
    let seg = Segment::parse(&bytes[..]).unwrap();
    let raw = seg.raw(1, keys::HOSTNAME).unwrap();
    let at = raw.as_ptr() as usize - bytes.as_ptr() as usize;
    let mut b = bytes.clone();
    b[at + 1] = 0x7f; // a string length past the value
    let seg = Segment::parse(&b[..]).expect("values are checked when read");
    let e = seg.get(1, keys::HOSTNAME).unwrap().unwrap_err();
    assert!(
        matches!(e, StoreError::Value { offset, .. } if offset == at as u64),
        "{e}"
    );
    assert!(matches!(
        seg.get_str(1, keys::HOSTNAME),
        Some(Err(StoreError::Value { .. }))
    ));
    assert!(matches!(seg.check_values(), Err(StoreError::Value { .. })));
    // An unknown type tag.
    let mut b = bytes.clone();
    b[at] = 0x7e;
    let seg = Segment::parse(&b[..]).unwrap();
    assert!(matches!(
        seg.get(1, keys::HOSTNAME),
        Some(Err(StoreError::Value { .. }))
    ));
    assert!(matches!(
        seg.get_u32(1, keys::HOSTNAME),
        Some(Err(StoreError::Value { .. }))
    ));
}

#[test]
fn every_byte_flipped_is_refused_or_read_without_a_panic() {
    let bytes = small();
    let keys_all: Vec<String> = Segment::parse(&bytes[..])
        .unwrap()
        .keys()
        .map(ToString::to_string)
        .collect();
    for at in 0..bytes.len() {
        for x in [0x01, 0x80, 0xff] {
            for resealed in [false, true] {
                let mut b = bytes.clone();
                b[at] ^= x;
                if resealed {
                    reseal(&mut b);
                }
                let Ok(seg) = Segment::parse(&b[..]) else {
                    continue;
                };
                let _ = seg.check_values();
                for r in [WILDCARD, 0, 1, 2, 3] {
                    for k in &keys_all {
                        let _ = seg.get(r, k);
                        let _ = seg.get_u32(r, k);
                        let _ = seg.get_str(r, k);
                    }
                    if let Some(rec) = seg.record(r) {
                        assert!(rec.iter().count() <= rec.len());
                    }
                }
            }
        }
    }
}

/// The payload of the first message of `payload_len` bytes in a decoded capture
/// (as `value/tests.rs` reads them).
fn capture_message(text: &str, payload_len: usize) -> Vec<u8> {
    fn hex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
        s.chunks(2)
            .map(|p| u8::from_str_radix(core::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }
    let mut cur: Vec<u8> = Vec::new();
    for line in text.lines().chain(core::iter::once("")) {
        let dump = line
            .strip_prefix("    ")
            .filter(|l| l.len() > 6 && l.as_bytes()[..4].iter().all(u8::is_ascii_hexdigit))
            .and_then(|l| l.get(6..))
            .filter(|l| l.starts_with(|c: char| c.is_ascii_hexdigit()));
        match dump {
            Some(l) => cur.extend(hex(l.split("  ").next().unwrap_or_default())),
            None => {
                if cur.len() == 16 + payload_len {
                    return cur.split_off(16);
                }
                cur.clear();
            }
        }
    }
    panic!("no message of {payload_len} bytes");
}
