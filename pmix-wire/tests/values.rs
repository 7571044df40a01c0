//! Property tests of the bfrops v4.1 values: every generated value of every type
//! round-trips in both buffer types and through a node-store segment, and arbitrary or mangled bytes never make a
//! decode panic, and re-encode to exactly the bytes consumed when they are
//! accepted.

use pmix_wire::value::{
    App, Buffer, ByteObject, Coord, DataArray, DeviceDist, DiskStats, Endpoint, Envar, Geometry,
    Info, InfoFlags, Kval, NetStats, NodeStats, Pdata, Pid, Proc, ProcInfo, ProcStats, Query, Rank,
    Regattr, Regex, Timeval, Topo, Value, WStr,
};
use pmix_wire::{BufferType, Command, DataType, Element, Limits, Reader, Writer};
use proptest::prelude::*;

fn wstr() -> impl Strategy<Value = WStr> {
    prop_oneof![
        "[a-z.:0-9,]{0,12}".prop_map(WStr::from),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(WStr::new),
        // Well-known keys and strings longer than those held in place.
        prop::sample::select(&["pmix.hname", "pmix.locstr", "pmix.pblob"][..]).prop_map(WStr::from),
        "[a-z]{28,40}".prop_map(|s| WStr::from(s.as_str())),
    ]
}

fn opt_wstr() -> impl Strategy<Value = Option<WStr>> {
    prop::option::of(wstr())
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..10)
}

fn buffer_type() -> impl Strategy<Value = BufferType> {
    prop_oneof![
        Just(BufferType::NonDescribed),
        Just(BufferType::FullyDescribed)
    ]
}

fn data_type() -> impl Strategy<Value = DataType> {
    prop::sample::select(DataType::ALL.to_vec())
}

fn timeval() -> impl Strategy<Value = Timeval> {
    (any::<i64>(), any::<i64>()).prop_map(|(sec, usec)| Timeval { sec, usec })
}

fn proc_() -> impl Strategy<Value = Proc> {
    (wstr(), any::<u32>()).prop_map(|(nspace, rank)| Proc {
        nspace,
        rank: Rank(rank),
    })
}

fn coord() -> impl Strategy<Value = Coord> {
    (any::<u8>(), prop::collection::vec(any::<u32>(), 0..4))
        .prop_map(|(view, coord)| Coord { view, coord })
}

/// A REGEX in each of its three forms.
fn regex() -> impl Strategy<Value = Regex> {
    let raw = (
        prop_oneof![Just("pmix"), Just("raw:")],
        "[a-z0-9\\[\\],:-]{0,10}",
    )
        .prop_map(|(p, s)| Regex::Raw(WStr::from(format!("{p}{s}"))));
    // "blob…" NUL "component=zlib:" NUL size-string NUL, then whatever length the
    // C unpacker computes from them (leading number + 27 + strlen + 1).
    let blob = (
        "[a-z:]{0,5}",
        prop_oneof![
            (0u32..100).prop_map(|n| format!("size={n}:")),
            (0u32..40).prop_map(|n| format!("{n}:"))
        ],
        any::<u8>(),
    )
        .prop_map(|(tail, size, fill)| {
            let mut b = format!("blob{tail}").into_bytes();
            b.push(0);
            b.extend_from_slice(b"component=zlib:\0");
            b.extend_from_slice(size.as_bytes());
            b.push(0);
            let n: usize = size
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            let total = n + 27 + size.len() + 1;
            b.resize(total.max(b.len()), fill);
            Regex::Blob(b)
        })
        .prop_filter("a blob regex shorter than its prefix", |r| {
            let Regex::Blob(b) = r else { return false };
            let mut w = Writer::new(BufferType::NonDescribed);
            r.encode(&mut w);
            w.finish().is_ok_and(|e| e == *b)
        });
    prop_oneof![raw, blob, opt_wstr().prop_map(Regex::Packed)]
}

fn disk_stats() -> impl Strategy<Value = DiskStats> {
    (opt_wstr(), prop::array::uniform11(any::<u64>())).prop_map(|(disk, c)| DiskStats {
        disk,
        num_reads_completed: c[0],
        num_reads_merged: c[1],
        num_sectors_read: c[2],
        milliseconds_reading: c[3],
        num_writes_completed: c[4],
        num_writes_merged: c[5],
        num_sectors_written: c[6],
        milliseconds_writing: c[7],
        num_ios_in_progress: c[8],
        milliseconds_io: c[9],
        weighted_milliseconds_io: c[10],
    })
}

fn net_stats() -> impl Strategy<Value = NetStats> {
    (opt_wstr(), prop::array::uniform6(any::<u64>())).prop_map(|(net_interface, c)| NetStats {
        net_interface,
        num_bytes_recvd: c[0],
        num_packets_recvd: c[1],
        num_recv_errs: c[2],
        num_bytes_sent: c[3],
        num_packets_sent: c[4],
        num_send_errs: c[5],
    })
}

fn proc_stats() -> impl Strategy<Value = ProcStats> {
    (
        (
            opt_wstr(),
            proc_(),
            any::<u32>(),
            opt_wstr(),
            any::<u8>(),
            timeval(),
        ),
        (
            any::<i32>(),
            any::<i16>(),
            wstr(),
            wstr(),
            wstr(),
            any::<i16>(),
            timeval(),
        ),
    )
        .prop_map(
            |(
                (node, proc, pid, cmd, state, time),
                (priority, num_threads, pss, vsize, rss, processor, sample_time),
            )| ProcStats {
                node,
                proc,
                pid: Pid(pid),
                cmd,
                state,
                time,
                priority,
                num_threads,
                pss,
                vsize,
                rss,
                processor,
                sample_time,
            },
        )
}

fn node_stats() -> impl Strategy<Value = NodeStats> {
    (
        opt_wstr(),
        prop::collection::vec(wstr(), 11),
        timeval(),
        prop::collection::vec(disk_stats(), 0..2),
        prop::collection::vec(net_stats(), 0..2),
    )
        .prop_map(|(node, f, sample_time, diskstats, netstats)| NodeStats {
            node,
            la: f[0].clone(),
            la5: f[1].clone(),
            la15: f[2].clone(),
            total_mem: f[3].clone(),
            free_mem: f[4].clone(),
            buffers: f[5].clone(),
            cached: f[6].clone(),
            swap_cached: f[7].clone(),
            swap_total: f[8].clone(),
            swap_free: f[9].clone(),
            mapped: f[10].clone(),
            sample_time,
            diskstats,
            netstats,
        })
}

/// The types whose elements hold values.
const RECURSIVE: &[DataType] = &[
    DataType::Value,
    DataType::Info,
    DataType::Kval,
    DataType::Pdata,
    DataType::App,
    DataType::Query,
    DataType::DataArray,
];

/// Any value, nested at most `depth` levels.
fn any_value(depth: u32) -> BoxedStrategy<Value> {
    let types: Vec<DataType> = DataType::ALL
        .iter()
        .copied()
        .filter(|t| depth > 0 || !RECURSIVE.contains(t))
        .collect();
    prop::sample::select(types)
        .prop_flat_map(move |ty| value_of(ty, depth))
        .boxed()
}

fn info(depth: u32) -> BoxedStrategy<Info> {
    (wstr(), any::<u32>(), any_value(depth.saturating_sub(1)))
        .prop_map(|(key, flags, value)| Info {
            key,
            flags: InfoFlags(flags),
            value,
        })
        .boxed()
}

fn infos(depth: u32) -> BoxedStrategy<Vec<Info>> {
    prop::collection::vec(info(depth), 0..3).boxed()
}

/// A value of type `ty`, nested at most `depth` levels.
fn value_of(ty: DataType, depth: u32) -> BoxedStrategy<Value> {
    use DataType as T;
    let inner = depth.saturating_sub(1);
    match ty {
        T::Undef => Just(Value::Undef).boxed(),
        T::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        T::Byte => any::<u8>().prop_map(Value::Byte).boxed(),
        T::String => opt_wstr().prop_map(Value::String).boxed(),
        T::Size => any::<u64>().prop_map(Value::Size).boxed(),
        T::Pid => any::<u32>().prop_map(Value::Pid).boxed(),
        T::Int => any::<i32>().prop_map(Value::Int).boxed(),
        T::Int8 => any::<i8>().prop_map(Value::Int8).boxed(),
        T::Int16 => any::<i16>().prop_map(Value::Int16).boxed(),
        T::Int32 => any::<i32>().prop_map(Value::Int32).boxed(),
        T::Int64 => any::<i64>().prop_map(Value::Int64).boxed(),
        T::Uint => any::<u32>().prop_map(Value::Uint).boxed(),
        T::Uint8 => any::<u8>().prop_map(Value::Uint8).boxed(),
        T::Uint16 => any::<u16>().prop_map(Value::Uint16).boxed(),
        T::Uint32 => any::<u32>().prop_map(Value::Uint32).boxed(),
        T::Uint64 => any::<u64>().prop_map(Value::Uint64).boxed(),
        T::Float => prop_oneof![
            any::<f32>().prop_map(Value::float),
            wstr().prop_map(Value::Float)
        ]
        .boxed(),
        T::Double => prop_oneof![
            any::<f64>().prop_map(Value::double),
            wstr().prop_map(Value::Double)
        ]
        .boxed(),
        T::Timeval => timeval().prop_map(Value::Timeval).boxed(),
        T::Time => any::<u64>().prop_map(Value::Time).boxed(),
        T::Status => any::<i32>().prop_map(Value::Status).boxed(),
        T::Value => any_value(inner)
            .prop_map(|v| Value::Value(Box::new(v)))
            .boxed(),
        T::Proc => proc_().prop_map(Value::Proc).boxed(),
        T::App => (
            opt_wstr(),
            prop::collection::vec(wstr(), 0..3),
            prop::collection::vec(wstr(), 0..3),
            opt_wstr(),
            any::<i32>(),
            infos(depth),
        )
            .prop_map(|(cmd, argv, env, cwd, maxprocs, info)| {
                Value::from(App {
                    cmd,
                    argv,
                    env,
                    cwd,
                    maxprocs,
                    info,
                })
            })
            .boxed(),
        T::Info => info(depth).prop_map(Value::from).boxed(),
        T::Pdata => (proc_(), wstr(), any_value(inner))
            .prop_map(|(proc, key, value)| Value::from(Pdata { proc, key, value }))
            .boxed(),
        T::Buffer => (buffer_type(), bytes())
            .prop_map(|(ty, bytes)| Value::Buffer(Buffer { ty, bytes }))
            .boxed(),
        T::ByteObject => bytes()
            .prop_map(|b| Value::ByteObject(ByteObject(b)))
            .boxed(),
        T::Kval => (wstr(), any_value(inner))
            .prop_map(|(key, value)| Value::from(Kval { key, value }))
            .boxed(),
        T::Persist => any::<u8>().prop_map(Value::Persist).boxed(),
        T::Pointer => Just(Value::Pointer).boxed(),
        T::Scope => any::<u8>().prop_map(Value::Scope).boxed(),
        T::DataRange => any::<u8>().prop_map(Value::DataRange).boxed(),
        T::Command => prop::sample::select(Command::ALL.to_vec())
            .prop_map(Value::Command)
            .boxed(),
        T::InfoDirectives => any::<u32>().prop_map(Value::InfoDirectives).boxed(),
        T::DataType => data_type().prop_map(Value::DataType).boxed(),
        T::ProcState => any::<u8>().prop_map(Value::ProcState).boxed(),
        T::ProcInfo => (proc_(), opt_wstr(), opt_wstr(), any::<u32>(), any::<u8>())
            .prop_map(|(proc, hostname, executable, pid, state)| {
                Value::from(ProcInfo {
                    proc,
                    hostname,
                    executable,
                    pid: Pid(pid),
                    state,
                })
            })
            .boxed(),
        T::DataArray => {
            let types: Vec<DataType> = DataType::ALL
                .iter()
                .copied()
                .filter(|t| *t != T::Undef && (inner > 0 || !RECURSIVE.contains(t)))
                .collect();
            prop_oneof![
                1 => Just(Value::DataArray(DataArray {
                    ty: T::Undef,
                    items: Vec::new()
                })),
                8 => prop::sample::select(types).prop_flat_map(move |t| {
                    prop::collection::vec(value_of(t, inner), 0..3)
                        .prop_map(move |items| Value::DataArray(DataArray { ty: t, items }))
                }),
            ]
            .boxed()
        }
        T::ProcRank => any::<u32>().prop_map(Value::ProcRank).boxed(),
        T::Query => (prop::collection::vec(wstr(), 0..3), infos(depth))
            .prop_map(|(keys, qualifiers)| Value::from(Query { keys, qualifiers }))
            .boxed(),
        T::CompressedString => bytes().prop_map(Value::CompressedString).boxed(),
        T::AllocDirective => any::<u8>().prop_map(Value::AllocDirective).boxed(),
        T::IofChannel => any::<u16>().prop_map(Value::IofChannel).boxed(),
        T::Envar => (opt_wstr(), opt_wstr(), any::<u8>())
            .prop_map(|(envar, value, separator)| {
                Value::Envar(Envar {
                    envar,
                    value,
                    separator,
                })
            })
            .boxed(),
        T::Coord => coord().prop_map(Value::Coord).boxed(),
        T::Regattr => (
            opt_wstr(),
            opt_wstr(),
            data_type(),
            prop::collection::vec(wstr(), 0..3),
        )
            .prop_map(|(name, string, ty, description)| {
                Value::from(Regattr {
                    name,
                    string,
                    ty,
                    description,
                })
            })
            .boxed(),
        T::Regex => regex().prop_map(Value::Regex).boxed(),
        T::JobState => any::<u8>().prop_map(Value::JobState).boxed(),
        T::LinkState => any::<u8>().prop_map(Value::LinkState).boxed(),
        T::ProcCpuset => opt_wstr().prop_map(Value::ProcCpuset).boxed(),
        T::Geometry => (
            any::<u64>(),
            opt_wstr(),
            opt_wstr(),
            prop::collection::vec(coord(), 0..3),
        )
            .prop_map(|(fabric, uuid, osname, coordinates)| {
                Value::from(Geometry {
                    fabric,
                    uuid,
                    osname,
                    coordinates,
                })
            })
            .boxed(),
        T::DeviceDist => (
            opt_wstr(),
            opt_wstr(),
            any::<u64>(),
            any::<u16>(),
            any::<u16>(),
        )
            .prop_map(|(uuid, osname, ty, mindist, maxdist)| {
                Value::from(DeviceDist {
                    uuid,
                    osname,
                    ty,
                    mindist,
                    maxdist,
                })
            })
            .boxed(),
        T::Endpoint => (opt_wstr(), opt_wstr(), bytes())
            .prop_map(|(uuid, osname, endpt)| {
                Value::from(Endpoint {
                    uuid,
                    osname,
                    endpt,
                })
            })
            .boxed(),
        T::Topo => prop_oneof![
            Just(Value::Topo(Topo::default())),
            (wstr(), prop::collection::vec(any::<u8>(), 32)).prop_map(|(xml, support)| {
                Value::Topo(Topo {
                    xml: Some(xml),
                    support,
                })
            })
        ]
        .boxed(),
        T::DevType => any::<u64>().prop_map(Value::DevType).boxed(),
        T::LocType => any::<u16>().prop_map(Value::LocType).boxed(),
        T::CompressedByteObject => bytes().prop_map(Value::CompressedByteObject).boxed(),
        T::ProcNspace => wstr().prop_map(Value::ProcNspace).boxed(),
        T::ProcStats => proc_stats().prop_map(Value::from).boxed(),
        T::DiskStats => disk_stats().prop_map(Value::from).boxed(),
        T::NetStats => net_stats().prop_map(Value::from).boxed(),
        T::NodeStats => node_stats().prop_map(Value::from).boxed(),
        T::DataBuffer => bytes().prop_map(Value::DataBuffer).boxed(),
        T::StorMedium => any::<u64>().prop_map(Value::StorMedium).boxed(),
        T::StorAccess => any::<u64>().prop_map(Value::StorAccess).boxed(),
        T::StorPersist => any::<u64>().prop_map(Value::StorPersist).boxed(),
        T::StorAccessType => any::<u16>().prop_map(Value::StorAccessType).boxed(),
        other => panic!("no strategy for {other:?}: add one"),
    }
}

/// A top-level pack of `items` in a buffer of type `bt`.
fn pack<T: Element>(bt: BufferType, items: &[T]) -> Vec<u8> {
    let mut w = Writer::new(bt);
    w.pack(items);
    w.finish().expect("a generated value encodes")
}

/// Decodes one `T` from the start of `bytes`; when accepted, checks that it
/// re-encodes to exactly the bytes consumed.
fn decode_reencodes<T: Element + core::fmt::Debug>(bt: BufferType, bytes: &[u8]) {
    let mut r = Reader::new(bytes, bt, Limits::DEFAULT);
    if let Ok(v) = T::decode(&mut r) {
        let used = r.offset();
        let mut w = Writer::new(bt);
        v.encode(&mut w);
        let again = w.finish().expect("an accepted value encodes");
        assert_eq!(again, &bytes[..used], "{v:?}");
    }
}

/// The encoding of a value with a few bytes changed, cut or inserted.
fn mangled() -> impl Strategy<Value = (BufferType, Vec<u8>)> {
    (
        buffer_type(),
        any_value(2),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
    )
        .prop_map(|(bt, v, edits)| {
            let mut w = Writer::new(bt);
            v.encode(&mut w);
            let mut b = w.finish().expect("a generated value encodes");
            for (at, byte, op) in edits {
                let i = at.index(b.len() + 1);
                match op {
                    0 if i < b.len() => b[i] = byte,
                    1 => b.insert(i, byte),
                    _ => b.truncate(i),
                }
            }
            (bt, b)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_value_round_trips_in_both_buffer_types(bt in buffer_type(), v in any_value(3)) {
        let bytes = pack(bt, core::slice::from_ref(&v));
        let mut r = Reader::new(&bytes, bt, Limits::DEFAULT);
        let back = r.unpack::<Value>("value").unwrap();
        r.finish().unwrap();
        prop_assert_eq!(&back, &vec![v]);
        prop_assert_eq!(pack(bt, &back), bytes);
    }

    #[test]
    fn every_type_round_trips_as_an_info_value(
        bt in buffer_type(),
        value in data_type().prop_flat_map(|ty| value_of(ty, 2)),
        key in wstr(),
        flags in any::<u32>(),
    ) {
        let info = Info { key, flags: InfoFlags(flags), value };
        let bytes = pack(bt, core::slice::from_ref(&info));
        let mut r = Reader::new(&bytes, bt, Limits::DEFAULT);
        let back = r.unpack::<Info>("info").unwrap();
        r.finish().unwrap();
        prop_assert_eq!(&back, &vec![info]);
        prop_assert_eq!(pack(bt, &back), bytes);
    }

    #[test]
    fn every_value_round_trips_through_a_node_store_segment(
        values in prop::collection::vec((0u32..6, any_value(2)), 1..12),
    ) {
        use pmix_wire::nodestore::{Segment, SegmentBuilder, WILDCARD};
        // Ranks 0..4 and the job record; the entry's place makes its key, so a key
        // written twice for a rank is found as the first written.
        let rank = |r: u32| if r == 5 { WILDCARD } else { r };
        let key = |i: usize| format!("key{}", i % 4);
        let mut b = SegmentBuilder::new("ns", 2).unwrap();
        for (i, (r, v)) in values.iter().enumerate() {
            b.push(rank(*r), &key(i), v).unwrap();
        }
        let bytes = b.finish().unwrap();
        let seg = Segment::parse(&bytes[..]).unwrap();
        seg.check_values().unwrap();
        for (i, (r, _)) in values.iter().enumerate() {
            let first = values
                .iter()
                .enumerate()
                .find(|(j, (s, _))| s == r && key(*j) == key(i))
                .map(|(_, (_, v))| v);
            prop_assert_eq!(seg.get(rank(*r), &key(i)), first.cloned().map(Ok));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_accepted_ones_re_encode(
        bt in buffer_type(),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        decode_reencodes::<Value>(bt, &bytes);
        decode_reencodes::<Info>(bt, &bytes);
    }

    #[test]
    fn mangled_encodings_never_panic_and_accepted_ones_re_encode((bt, bytes) in mangled()) {
        decode_reencodes::<Value>(bt, &bytes);
        decode_reencodes::<Info>(bt, &bytes);
        decode_reencodes::<DataArray>(bt, &bytes);
    }
}

#[test]
fn every_data_type_has_a_strategy_and_round_trips() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for &ty in DataType::ALL {
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            for _ in 0..8 {
                let v = value_of(ty, 2).new_tree(&mut runner).unwrap().current();
                assert_eq!(v.data_type(), ty);
                let bytes = pack(bt, core::slice::from_ref(&v));
                let mut r = Reader::new(&bytes, bt, Limits::DEFAULT);
                assert_eq!(r.unpack::<Value>("value"), Ok(vec![v]), "{ty:?}");
                r.finish().unwrap();
            }
        }
    }
}
