//! Byte-for-byte checks of docs/wire.md §5.4–5.5's examples and of values taken from
//! the captures in `testdata/wire-captures/` (OpenPMIx 4.2.2 with Open MPI 4.1.4's
//! mpirun).

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::limits::Limits;
use crate::types::BufferType;

fn hex(s: &str) -> Vec<u8> {
    let s: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    s.chunks(2)
        .map(|p| u8::from_str_radix(core::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

fn enc<T: Element>(v: &T) -> Vec<u8> {
    let mut w = Writer::new(BufferType::NonDescribed);
    v.encode(&mut w);
    w.finish().unwrap()
}

fn dec<T: Element>(b: &[u8]) -> Result<T, WireError> {
    let mut r = Reader::new(b, BufferType::NonDescribed, Limits::DEFAULT);
    let v = T::decode(&mut r)?;
    r.finish()?;
    Ok(v)
}

/// Encodes, checks the bytes, decodes them back.
fn pin<T: Element + PartialEq + core::fmt::Debug>(v: T, bytes: &[u8]) {
    assert_eq!(enc(&v), bytes, "{v:?}");
    assert_eq!(dec::<T>(bytes), Ok(v));
}

fn kind<T: core::fmt::Debug>(r: Result<T, WireError>) -> ErrorKind {
    r.unwrap_err().kind
}

#[test]
fn the_worked_example_collect_true_is_byte_for_byte() {
    // docs/wire.md §5.5, non-described and fully described.
    let info = Info::new("pmix.collect", true);
    let mut want = hex("02 1a");
    want.extend_from_slice(b"pmix.collect\0");
    want.extend_from_slice(&[0x00, 0x01, 0x01]);
    let mut w = Writer::new(BufferType::NonDescribed);
    w.pack(core::slice::from_ref(&info));
    assert_eq!(w.as_bytes(), &want[..]);
    let mut r = Reader::new(&want, BufferType::NonDescribed, Limits::DEFAULT);
    assert_eq!(r.unpack::<Info>("info"), Ok(vec![info.clone()]));

    let mut w = Writer::new(BufferType::FullyDescribed);
    w.pack(core::slice::from_ref(&info));
    assert_eq!(w.as_bytes()[..3], [0x09, 0x02, 0x18]);
    assert_eq!(w.as_bytes()[3..], want[1..]);
}

#[test]
fn a_string_is_its_zigzag_length_with_the_nul_and_null_is_length_zero() {
    pin(WStr::from("vm"), &hex("06 76 6d 00"));
    pin(None::<WStr>, &hex("00"));
    pin(Some(WStr::from("")), &hex("02 00"));
    assert!(matches!(
        kind(dec::<WStr>(&hex("00"))),
        ErrorKind::BadValue { .. }
    ));
}

#[test]
fn a_proc_is_its_namespace_and_a_varint_rank_wildcard_included() {
    let mut b = hex("12");
    b.extend_from_slice(b"43843585\0");
    b.extend_from_slice(&hex("fe ff ff ff 0f"));
    pin(
        Proc {
            nspace: "43843585".into(),
            rank: Rank::WILDCARD,
        },
        &b,
    );
    let undef = enc(&Proc {
        nspace: "x".into(),
        rank: Rank::UNDEF,
    });
    assert_eq!(undef[3..], hex("ff ff ff ff 0f"));
    // A NULL namespace is refused.
    assert!(matches!(
        kind(dec::<Proc>(&hex("00 00"))),
        ErrorKind::BadValue { .. }
    ));
}

#[test]
fn a_pid_carries_its_uint32_tag_even_in_a_non_described_buffer() {
    pin(Value::Pid(1234), &hex("05 0e d2 09"));
    pin(Pid(7), &hex("0e 07"));
    assert!(matches!(
        kind(dec::<Pid>(&hex("0f 07"))),
        ErrorKind::UnexpectedType { .. }
    ));
}

#[test]
fn int_and_uint_are_zigzag_int32_uint_by_its_bits() {
    pin(Value::Int(-1), &hex("06 01"));
    pin(Value::Int(42), &hex("06 54"));
    pin(Value::Uint(u32::MAX), &hex("0b 01"));
    pin(Value::Uint(0x8000_0000), &hex("0b ff ff ff ff 0f"));
    pin(Value::Uint(3), &hex("0b 06"));
    pin(Value::Status(-46), &hex("14 5b"));
    pin(Value::Int16(-3007), &hex("08 fd 2e"));
    // An INT wider than 32 bits is refused.
    assert!(matches!(
        kind(dec::<Value>(&hex("06 80 80 80 80 10"))),
        ErrorKind::BadVarint { .. }
    ));
}

#[test]
fn unsigned_types_are_varints_of_their_width() {
    pin(Value::Uint32(0), &hex("0e 00"));
    pin(Value::Uint64(9_221_386_240), &hex("0f 80 e0 8c ad 22"));
    pin(Value::Size(159), &hex("04 9f 01"));
    pin(Value::ProcRank(1), &hex("28 01"));
    pin(Value::Uint16(0), &hex("0d 00"));
    pin(Value::Time(128), &hex("13 80 01"));
    assert!(matches!(
        kind(dec::<Value>(&hex("0d 80 80 04"))),
        ErrorKind::BadVarint { .. }
    ));
}

#[test]
fn a_bool_is_one_byte_zero_or_one() {
    pin(Value::Bool(true), &hex("01 01"));
    pin(Value::Bool(false), &hex("01 00"));
    pin(true, &hex("01"));
    assert!(matches!(
        kind(dec::<Value>(&hex("01 02"))),
        ErrorKind::BadValue { .. }
    ));
}

#[test]
fn one_byte_types_and_the_pointer_sentinel() {
    pin(Value::Scope(3), &hex("20 03"));
    pin(Value::DataRange(255), &hex("21 ff"));
    pin(Value::Int8(-2), &hex("07 fe"));
    pin(Value::Pointer, &hex("1f 01"));
    pin(Value::Command(Command::FenceNb), &hex("22 03"));
    pin(Command::Finalize, &hex("05"));
    assert!(matches!(
        kind(dec::<Value>(&hex("1f 00"))),
        ErrorKind::BadValue { .. }
    ));
    assert!(matches!(
        kind(dec::<Command>(&hex("27"))),
        ErrorKind::BadValue { .. }
    ));
}

#[test]
fn undef_is_its_tag_alone_and_unknown_tags_are_refused() {
    pin(Value::Undef, &hex("00"));
    assert_eq!(
        kind(dec::<Value>(&hex("2c 00"))),
        ErrorKind::UnknownType { code: 44 }
    );
}

#[test]
fn float_and_double_travel_as_printf_text_and_parse_back() {
    let v = Value::float(1.5);
    assert_eq!(v, Value::Float("1.500000".into()));
    let mut b = hex("10 12");
    b.extend_from_slice(b"1.500000\0");
    pin(v.clone(), &b);
    assert_eq!(v.as_f64(), Some(1.5));
    assert_eq!(Value::double(-0.25).as_f64(), Some(-0.25));
    assert_eq!(Value::double(f64::INFINITY), Value::Double("inf".into()));
    // A NULL float is refused (OpenPMIx never writes one).
    assert!(matches!(
        kind(dec::<Value>(&hex("11 00"))),
        ErrorKind::BadValue { .. }
    ));
}

#[test]
fn timeval_is_two_zigzag_int64() {
    pin(
        Value::Timeval(Timeval { sec: 1, usec: -1 }),
        &hex("12 02 01"),
    );
}

/// The `pmix.node.arr` KVAL of the job-info blob in `init_hash.txt` (payload
/// offset 0x1b5), with its top-level count.
const NODE_ARR: &str = "021c706d69782e6e6f64652e6172720027180716706d69782e686e616d6500000306766d0018706d69782e6e6f6465696400000e001e706d69782e6e6f64652e73697a6500000e0214706d69782e706d656d00000f80e08cad2218706d69782e6c706565727300000308302c310014706d69782e6c6c64720000280020706d69782e6c6f63616c2e73697a6500020e02";

#[test]
fn a_data_array_of_info_from_the_capture_decodes_and_re_encodes() {
    let bytes = hex(NODE_ARR);
    let mut r = Reader::new(&bytes, BufferType::NonDescribed, Limits::DEFAULT);
    let kv: Kval = r.unpack_one("kv").unwrap();
    r.finish().unwrap();
    let want = Kval::new(
        "pmix.node.arr",
        DataArray::infos([
            Info::new("pmix.hname", "vm"),
            Info::new("pmix.nodeid", 0u32),
            Info::new("pmix.node.size", 2u32),
            Info::new("pmix.pmem", 9_221_386_240u64),
            Info::new("pmix.lpeers", "0,1"),
            Info::new("pmix.lldr", Rank(0)),
            Info::new("pmix.local.size", 2u32).with_flags(InfoFlags::ARRAY_END),
        ]),
    );
    assert_eq!(kv, want);
    let mut w = Writer::new(BufferType::NonDescribed);
    w.pack_one(&want);
    assert_eq!(w.finish().unwrap(), bytes);
}

#[test]
fn a_data_array_is_type_count_and_untagged_elements() {
    let a = DataArray::new(DataType::Uint32, vec![Value::Uint32(1), Value::Uint32(300)]).unwrap();
    pin(Value::DataArray(a), &hex("27 0e 02 01 ac 02"));
    pin(
        Value::DataArray(DataArray::new(DataType::Info, vec![]).unwrap()),
        &hex("27 18 00"),
    );
    pin(
        Value::DataArray(DataArray::new(DataType::Undef, vec![]).unwrap()),
        &hex("27 00 00"),
    );
    // An UNDEF array that claims elements would not round-trip.
    assert!(matches!(
        kind(dec::<Value>(&hex("27 00 03"))),
        ErrorKind::BadValue { .. }
    ));
    // Items of another type than the array cannot be built or encoded.
    assert!(DataArray::new(DataType::Uint32, vec![Value::Bool(true)]).is_none());
    let mut w = Writer::new(BufferType::NonDescribed);
    DataArray {
        ty: DataType::Uint32,
        items: vec![Value::Bool(true)],
    }
    .encode(&mut w);
    assert!(matches!(
        w.finish().unwrap_err().kind,
        ErrorKind::Unencodable { .. }
    ));
}

#[test]
fn a_count_larger_than_the_input_fails_without_reserving_it() {
    // DATA_ARRAY of BOOL claiming a million elements with two bytes left.
    let mut b = hex("27 01 80 80 40");
    b.extend_from_slice(&[1, 0]);
    assert!(matches!(
        kind(dec::<Value>(&b)),
        ErrorKind::Truncated { .. }
    ));
    // Over the limit: refused before anything is read.
    let limits = Limits {
        max_count: 4,
        ..Limits::DEFAULT
    };
    let b = hex("27 01 05 01 01 01 01 01");
    let mut r = Reader::new(&b, BufferType::NonDescribed, limits);
    assert!(matches!(
        Value::decode(&mut r).unwrap_err().kind,
        ErrorKind::TooLarge { len: 5, .. }
    ));
}

#[test]
fn values_nested_past_the_depth_limit_are_refused() {
    // VALUE in VALUE in … : 20 levels.
    let mut v = Value::Bool(true);
    for _ in 0..20 {
        v = Value::Value(Box::new(v));
    }
    let bytes = enc(&v);
    assert!(matches!(
        kind(dec::<Value>(&bytes)),
        ErrorKind::TooDeep { limit: 16 }
    ));
    // DATA_ARRAY of DATA_ARRAY of …
    let mut a = DataArray::new(DataType::Bool, vec![]).unwrap();
    for _ in 0..20 {
        a = DataArray::new(DataType::DataArray, vec![Value::DataArray(a)]).unwrap();
    }
    let bytes = enc(&Value::DataArray(a));
    assert!(matches!(
        kind(dec::<Value>(&bytes)),
        ErrorKind::TooDeep { .. }
    ));
    // Ten levels are fine.
    let mut v = Value::Bool(true);
    for _ in 0..10 {
        v = Value::DataArray(DataArray::new(v.data_type(), vec![v]).unwrap());
    }
    let bytes = enc(&v);
    assert_eq!(dec::<Value>(&bytes), Ok(v));
}

#[test]
fn byte_objects_buffers_and_compressed_bytes_are_sized() {
    pin(
        Value::ByteObject(ByteObject(vec![1, 2, 3])),
        &hex("1b 03 01 02 03"),
    );
    pin(
        Value::CompressedString(vec![0x78, 0x9c]),
        &hex("2a 02 78 9c"),
    );
    pin(Value::DataBuffer(vec![]), &hex("41 00"));
    pin(
        Value::Buffer(Buffer {
            ty: BufferType::FullyDescribed,
            bytes: vec![9, 2, 0x22, 0],
        }),
        &hex("1a 02 04 09 02 22 00"),
    );
    assert!(matches!(
        kind(dec::<Value>(&hex("1a 03 00"))),
        ErrorKind::BadValue { .. }
    ));
}

#[test]
fn proc_info_carries_a_tagged_pid_and_a_state_byte() {
    let pi = ProcInfo {
        proc: Proc::new("ns", 1),
        hostname: Some("vm".into()),
        executable: None,
        pid: Pid(100),
        state: 3,
    };
    pin(
        Value::from(pi),
        &hex("26 06 6e 73 00 01 06 76 6d 00 00 0e 64 03"),
    );
}

#[test]
fn app_query_envar_regattr_follow_their_field_order() {
    let app = App {
        cmd: Some("a".into()),
        argv: vec!["a".into()],
        env: vec![],
        cwd: None,
        maxprocs: 2,
        info: vec![Info::new("k", true)],
    };
    pin(
        Value::from(app),
        &hex("17 04 61 00 02 04 61 00 00 00 04 01 04 6b 00 00 01 01"),
    );
    let q = Query {
        keys: vec!["pmix.qry.ns".into()],
        qualifiers: vec![],
    };
    let mut b = hex("29 02 18");
    b.extend_from_slice(b"pmix.qry.ns\0");
    b.push(0);
    pin(Value::from(q), &b);
    pin(
        Value::Envar(Envar {
            envar: Some("P".into()),
            value: Some("x".into()),
            separator: b':',
        }),
        &hex("2e 04 50 00 04 78 00 3a"),
    );
    pin(
        Value::from(Regattr {
            name: None,
            string: Some("k".into()),
            ty: DataType::Bool,
            description: vec!["d".into()],
        }),
        &hex("30 00 04 6b 00 01 02 04 64 00"),
    );
}

#[test]
fn fabric_elements_follow_their_field_order() {
    let c = Coord {
        view: 1,
        coord: vec![1, 300],
    };
    pin(Value::Coord(c.clone()), &hex("2f 01 02 01 ac 02"));
    pin(
        Value::from(Geometry {
            fabric: 0,
            uuid: None,
            osname: Some("ib0".into()),
            coordinates: vec![c],
        }),
        &hex("35 00 00 08 69 62 30 00 01 01 02 01 ac 02"),
    );
    pin(
        Value::from(DeviceDist {
            uuid: Some("u".into()),
            osname: None,
            ty: 0x40,
            mindist: 10,
            maxdist: 300,
        }),
        &hex("36 04 75 00 00 40 0a ac 02"),
    );
    pin(
        Value::from(Endpoint {
            uuid: None,
            osname: None,
            endpt: vec![7],
        }),
        &hex("37 00 00 01 07"),
    );
}

#[test]
fn a_topology_is_its_xml_and_the_support_bytes_the_limits_name() {
    pin(Value::Topo(Topo::default()), &hex("38 00"));
    let t = Topo {
        xml: Some("<x/>".into()),
        support: vec![1; 32],
    };
    let mut b = hex("38 0a");
    b.extend_from_slice(b"<x/>\0");
    b.extend_from_slice(&[1; 32]);
    pin(Value::Topo(t), &b);
    // Another hwloc's support length.
    let limits = Limits {
        topo_support: 4,
        ..Limits::DEFAULT
    };
    let b = hex("38 04 78 00 01 01 01 01");
    let mut r = Reader::new(&b, BufferType::NonDescribed, limits);
    let v = Value::decode(&mut r).unwrap();
    r.finish().unwrap();
    assert_eq!(enc(&v), b);
}

#[test]
fn a_topology_whose_support_bytes_are_not_the_decoders_length_is_unencodable() {
    let t = Value::Topo(Topo {
        xml: Some("<x/>".into()),
        support: vec![1; 4],
    });
    let limits = |n| Limits {
        topo_support: n,
        ..Limits::DEFAULT
    };
    let encode = |w: Writer| {
        let mut w = w;
        t.encode(&mut w);
        w.finish().map_err(|e| e.kind)
    };
    let w = || Writer::new(BufferType::NonDescribed);
    assert!(matches!(
        encode(w().with_limits(limits(32))),
        Err(ErrorKind::Unencodable { .. })
    ));
    assert!(encode(w().with_limits(limits(4))).is_ok());
    // A writer that does not know the decoder's limits cannot check. (A message
    // encodes for its codec's limits, nested buffers included: `msg`'s tests.)
    assert!(encode(w()).is_ok());
}

#[test]
fn regexes_keep_the_form_they_came_in() {
    let mut b = vec![0x31];
    b.extend_from_slice(b"pmix[vm]\0");
    pin(Value::Regex(Regex::Raw("pmix[vm]".into())), &b);
    let mut b = vec![0x31];
    b.extend_from_slice(b"raw:vm,vm2\0");
    pin(Value::Regex(Regex::Raw("raw:vm,vm2".into())), &b);
    let mut b = hex("31 02 10");
    b.extend_from_slice(b"vm1,vm2\0");
    pin(Value::Regex(Regex::Packed(Some("vm1,vm2".into()))), &b);
    // The same in a fully described buffer carries the pack's tags.
    let mut w = Writer::new(BufferType::FullyDescribed);
    Value::Regex(Regex::Packed(Some("vm".into()))).encode(&mut w);
    assert_eq!(w.as_bytes(), hex("31 09 02 03 06 76 6d 00"));
    // preg/compress: "blob:" NUL "component=zlib:" NUL "size=3:" NUL, and the
    // length the C unpacker computes: 0 + 27 + 7 + 1 = 35 bytes.
    let mut blob = Vec::new();
    blob.extend_from_slice(b"blob:\0component=zlib:\0size=3:\0");
    blob.extend_from_slice(&[0xaa; 5]);
    assert_eq!(blob.len(), 35);
    let mut b = vec![0x31];
    b.extend_from_slice(&blob);
    pin(Value::Regex(Regex::Blob(blob)), &b);
    // A raw regex without its prefix cannot be encoded.
    let mut w = Writer::new(BufferType::NonDescribed);
    Regex::Raw("vm".into()).encode(&mut w);
    assert!(w.finish().is_err());
    // One without its NUL is truncated.
    assert!(matches!(
        kind(dec::<Regex>(b"pmix[vm]")),
        ErrorKind::Truncated { .. }
    ));
}

#[test]
fn a_cpuset_and_an_nspace_are_strings() {
    pin(Value::ProcCpuset(None), &hex("34 00"));
    pin(
        Value::ProcCpuset(Some("0-3,8".into())),
        &hex("34 0c 30 2d 33 2c 38 00"),
    );
    pin(Value::ProcNspace("ns".into()), &hex("3c 06 6e 73 00"));
}

#[test]
fn info_keys_must_not_be_null() {
    assert!(matches!(
        kind(dec::<Info>(&hex("00 00 01 01"))),
        ErrorKind::BadValue { .. }
    ));
}

/// Splits `bytes` into KVAL packs until the end (how the job-info blob and a
/// `pmix.pblob` byte object are laid out).
fn kvals(r: &mut Reader<'_>) -> Vec<Kval> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(r.unpack_one::<Kval>("kv").unwrap());
    }
    v
}

/// Decodes a captured job-info blob (the REQ reply: the namespace, then KVAL
/// packs to the end), checks it re-encodes byte for byte, and decodes each
/// `pmix.pblob` byte object in it (a rank, then the process's KVALs, packed in the
/// connection's buffer type).
fn job_info_blob_round_trips(text: &str, len: usize, bt: BufferType, nspace: &str) {
    let payload = capture_message(text, len);
    let mut r = Reader::new(&payload, bt, Limits::DEFAULT);
    let ns: WStr = r.unpack_one("nspace").unwrap();
    assert_eq!(ns, nspace);
    let kvs = kvals(&mut r);
    assert_eq!(kvs.len(), 18);
    let mut w = Writer::new(bt);
    w.pack_one(&ns);
    for kv in &kvs {
        w.pack_one(kv);
    }
    assert_eq!(w.finish().unwrap(), payload);
    let blobs: Vec<&Kval> = kvs.iter().filter(|k| k.key == "pmix.pblob").collect();
    assert_eq!(blobs.len(), 2);
    for (i, kv) in blobs.into_iter().enumerate() {
        let Value::ByteObject(ByteObject(bytes)) = &kv.value else {
            panic!("{kv:?}");
        };
        let mut r = Reader::new(bytes, bt, Limits::DEFAULT);
        assert_eq!(r.unpack_one::<Rank>("rank"), Ok(Rank(i as u32)));
        let inner = kvals(&mut r);
        assert_eq!(inner.len(), 8);
        assert_eq!(inner[1], Kval::new("pmix.cpuset", alloc::format!("{i}")));
        assert_eq!(inner[2], Kval::new("pmix.grank", Rank(i as u32)));
        let mut w = Writer::new(bt);
        w.pack_one(&Rank(i as u32));
        for kv in &inner {
            w.pack_one(kv);
        }
        assert_eq!(&w.finish().unwrap(), bytes);
    }
}

#[test]
fn the_captured_job_info_blob_decodes_and_re_encodes_byte_for_byte() {
    job_info_blob_round_trips(
        include_str!("../../../testdata/wire-captures/init_hash.txt"),
        931,
        BufferType::NonDescribed,
        "43843585",
    );
}

#[test]
fn the_fully_described_job_info_blob_decodes_and_re_encodes_byte_for_byte() {
    job_info_blob_round_trips(
        include_str!("../../../testdata/wire-captures/fence_fulldesc.txt"),
        1008,
        BufferType::FullyDescribed,
        "434044929",
    );
}

/// The payload of the first message of `payload_len` bytes in a decoded capture.
fn capture_message(text: &str, payload_len: usize) -> Vec<u8> {
    let mut cur: Vec<u8> = Vec::new();
    for line in text.lines().chain(core::iter::once("")) {
        let dump = line
            .strip_prefix("    ")
            .filter(|l| l.len() > 6 && l.as_bytes()[..4].iter().all(u8::is_ascii_hexdigit))
            .and_then(|l| l.get(6..))
            .filter(|l| l.starts_with(|c: char| c.is_ascii_hexdigit()));
        match dump {
            Some(l) => {
                // The hex bytes end at the two spaces before the ASCII column.
                cur.extend(hex(l.split("  ").next().unwrap_or_default()));
            }
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
