//! The typed messages (docs/wire.md §6–7): every captured message decodes and
//! re-encodes byte for byte, field-by-field checks against the captures and the
//! spec's examples, both group layouts, the status-only reply, round trips of
//! generated messages in both buffer types, and arbitrary bytes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pmix_wire::msg::{
    Abort, Alloc, Commit, CommitBucket, ComputeDeviceDistances, Connect, ConnectReply, DeregEvents,
    DistancesReply, FenceNb, FenceNbReply, GetCredential, GetCredentialReply, GetNb, GetNbReply,
    GroupConstruct, GroupConstructReply, GroupDestruct, GroupDestructReply, GroupLeave, InfoReply,
    IofDereg, IofPull, IofPullReply, IofPush, JobBlob, JobControl, JobInfo, JobItem, Log, Lookup,
    LookupReply, Monitor, Notify, ProcBlob, ProcCpuset, ProcData, Publish, QueryInfo, RegEvents,
    Spawn, SpawnReply, ValidateCred,
};
use pmix_wire::stream::{Conversation, Direction, FrameKind, Item};
use pmix_wire::value::{
    AllocDirective, App, ByteObject, DataArray, DataRange, DeviceDist, Info, InfoFlags, IofChannel,
    Kval, Pdata, Proc, Query, Rank, Scope, Size, Status, Time, Topo, Uint32, Value, WStr,
};
use pmix_wire::{
    BufferType, Codec, Command, ErrorKind, Event, GroupLayout, Iof, Limits, Reply, Request,
    Version, decode_event, decode_iof, decode_reply, decode_request,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Helpers.

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn nd() -> Codec {
    Codec::v422()
}

fn fd() -> Codec {
    Codec {
        buffer_type: BufferType::FullyDescribed,
        ..Codec::v422()
    }
}

fn v424(buffer_type: BufferType) -> Codec {
    Codec {
        buffer_type,
        version: Version::parse("4.2.4", 0).unwrap(),
        limits: Limits::DEFAULT,
    }
}

fn req(payload: &[u8], codec: &Codec) -> Request {
    let m = decode_request(payload, codec).unwrap();
    assert_eq!(m.encode(codec).unwrap(), payload, "{m:?}");
    m
}

fn reply(cmd: Command, payload: &[u8], codec: &Codec) -> Reply {
    let m = decode_reply(cmd, payload, codec).unwrap();
    assert_eq!(m.command(), cmd);
    assert_eq!(m.encode(codec).unwrap(), payload, "{m:?}");
    m
}

fn s(x: &str) -> WStr {
    WStr::from(x)
}

fn info(key: &str, value: impl Into<Value>) -> Info {
    Info::new(key, value)
}

fn kval(key: &str, value: impl Into<Value>) -> Kval {
    Kval::new(key, value)
}

fn captures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/wire-captures/raw")
}

/// One captured frame payload, classified by the stream layer.
struct Captured {
    file: String,
    kind: FrameKind,
    codec: Codec,
    payload: Vec<u8>,
}

/// A `"key": "value"` or `"key": number` field of one JSON line of a raw capture.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = line[at..].trim_start();
    if let Some(r) = rest.strip_prefix('"') {
        r.split('"').next()
    } else {
        rest.split([',', '}']).next().map(str::trim)
    }
}

/// Every frame of every raw capture, through the stream layer (one conversation
/// per connection, chunks in capture order).
fn captured_frames(name_prefix: &str) -> Vec<Captured> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(captures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl")
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(name_prefix)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no captures under {:?}", captures());
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut convs: BTreeMap<String, Conversation> = BTreeMap::new();
        for line in text.lines() {
            if field(line, "ev") != Some("data") {
                continue;
            }
            let conn = field(line, "conn").unwrap().to_owned();
            let dir = match field(line, "dir").unwrap() {
                "C2S" => Direction::ClientToServer,
                _ => Direction::ServerToClient,
            };
            let bytes = hex(field(line, "hex").unwrap());
            let conv = convs
                .entry(conn)
                .or_insert_with(|| Conversation::new(Limits::DEFAULT));
            conv.feed(dir, &bytes).unwrap();
            while let Some(m) = conv.poll() {
                if let Item::Frame { frame, kind } = m.item {
                    out.push(Captured {
                        file: file.clone(),
                        kind,
                        codec: conv.codec().unwrap().clone(),
                        payload: frame.payload,
                    });
                }
            }
        }
    }
    out
}

/// The payload of the first captured frame of `kind` in `file_prefix`.
fn first(file_prefix: &str, kind: FrameKind) -> Captured {
    captured_frames(file_prefix)
        .into_iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} in {file_prefix}"))
}

// ---------------------------------------------------------------------------
// The golden oracle: every captured message.

#[test]
fn every_captured_message_decodes_and_reencodes_byte_for_byte() {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for c in captured_frames("") {
        let what = format!("{} {:?}", c.file, c.kind);
        let bytes = match c.kind {
            FrameKind::Request(cmd) => {
                let m = decode_request(&c.payload, &c.codec).expect(&what);
                assert_eq!(m.command(), cmd, "{what}");
                assert!(!matches!(m, Request::Raw { .. }), "{what}");
                *seen.entry(format!("request {cmd:?}")).or_default() += 1;
                m.encode(&c.codec).expect(&what)
            }
            FrameKind::Reply(cmd) => {
                let m = decode_reply(cmd, &c.payload, &c.codec).expect(&what);
                let form = if matches!(m, Reply::Status { .. }) {
                    "status"
                } else {
                    "typed"
                };
                *seen.entry(format!("reply {cmd:?} {form}")).or_default() += 1;
                m.encode(&c.codec).expect(&what)
            }
            FrameKind::Event => {
                *seen.entry("event".into()).or_default() += 1;
                decode_event(&c.payload, &c.codec)
                    .expect(&what)
                    .encode(&c.codec)
                    .unwrap()
            }
            FrameKind::Iof => decode_iof(&c.payload, &c.codec)
                .expect(&what)
                .encode(&c.codec)
                .unwrap(),
            other => panic!("{what}: unexpected frame kind {other:?}"),
        };
        assert_eq!(bytes, c.payload, "{what}");
    }
    for k in [
        "request Req",
        "request Commit",
        "request FenceNb",
        "request GetNb",
        "request Finalize",
        "request Abort",
        "request RegEvents",
        "request DeregEvents",
        "request Notify",
        "request JobControl",
        "request Query",
        "request GroupConstruct",
        "request GroupLeave",
        "request GroupDestruct",
        "reply Req typed",
        "reply GetNb typed",
        "reply GetNb status",
        "reply Query typed",
        "reply GroupConstruct status",
        "event",
    ] {
        assert!(seen.contains_key(k), "no {k} in the captures: {seen:?}");
    }
}

// ---------------------------------------------------------------------------
// Field by field against the captures and docs/wire.md.

#[test]
fn the_command_is_a_pack_of_one_byte_in_both_buffer_types() {
    // docs/wire.md §5.2: REQ is `02 00`, fully described `09 02 22 00`.
    assert_eq!(req(&hex("0200"), &nd()), Request::Req);
    assert_eq!(req(&hex("09022200"), &fd()), Request::Req);
    assert_eq!(req(&hex("0205"), &nd()), Request::Finalize);
    assert_eq!(Request::Req.command(), Command::Req);
}

#[test]
fn a_lone_status_is_the_status_reply_for_every_command() {
    // §6 "Generic error reply": `02 5d` = NOT_SUPPORTED.
    for &cmd in Command::ALL {
        for (codec, bytes) in [(nd(), hex("025d")), (fd(), hex("0902145d"))] {
            assert_eq!(
                reply(cmd, &bytes, &codec),
                Reply::Status {
                    command: cmd,
                    status: Status::ERR_NOT_SUPPORTED
                },
                "{cmd:?}"
            );
        }
    }
    // REQ's reply has no status; `02 00` is status 0, not a NULL nspace.
    assert_eq!(
        reply(Command::Req, &hex("0200"), &nd()).status(),
        Some(Status(0))
    );
}

#[test]
fn a_typed_reply_that_would_be_a_lone_status_is_refused_at_encode() {
    let empty = Reply::GetNb(GetNbReply {
        status: Status(0),
        data: vec![],
    });
    assert!(matches!(
        empty.encode(&nd()).unwrap_err().kind,
        ErrorKind::Unencodable { .. }
    ));
    let raw = Reply::Raw {
        command: Command::FabricRegister,
        bytes: hex("0200"),
    };
    assert!(raw.encode(&nd()).is_err());
}

#[test]
fn a_status_only_reply_with_more_bytes_is_trailing_bytes() {
    // COMMIT's reply is only a status (§6.4). (FENCENB's may carry a rank-state
    // round's contributions: FenceNbReply.)
    let e = decode_reply(Command::Commit, &hex("02000200"), &nd()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TrailingBytes { len: 2 });
    assert_eq!(e.offset, 2);
    let e = decode_request(&hex("020500"), &nd()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TrailingBytes { len: 1 });
}

#[test]
fn the_job_info_blob_of_init_hash_decodes_into_values_arrays_and_proc_blobs() {
    // init_hash.txt, rank 0: the 931-byte reply to REQ (§6.1.1).
    let c = first("init_hash.0", FrameKind::Reply(Command::Req));
    assert_eq!(c.payload.len(), 931);
    let Reply::Req(job) = reply(Command::Req, &c.payload, &c.codec) else {
        panic!("not a job-info reply")
    };
    assert_eq!(job.nspace.as_str().unwrap().len(), 8);
    let keys: Vec<_> = job.values().map(|k| k.key.to_string()).collect();
    assert_eq!(
        keys,
        [
            "pmix.srv.nspace",
            "pmix.srv.rank",
            "pmix.jobid",
            "pmix.offset",
            "pmix.num.nodes",
            "pmix.job.size",
            "pmix.job.napps",
            "pmix.max.size",
            "pmix.toposig",
            "pmix.mapby",
            "pmix.rankby",
            "pmix.bindto",
            "pmix.nlist",
            "pmix.bfrops.mod",
        ]
    );
    assert_eq!(job.value("pmix.job.size"), Some(&Value::Uint32(2)));
    assert_eq!(job.value("pmix.max.size"), Some(&Value::Uint32(2)));
    assert_eq!(job.value("pmix.nlist"), Some(&Value::string("vm")));
    assert_eq!(
        job.value("pmix.bfrops.mod"),
        Some(&Value::string("4.2.2rc2"))
    );
    assert_eq!(
        job.value("pmix.toposig"),
        Some(&Value::string("1N:1S:1L3:2L2:2L1:2C:2H:x86_64:le"))
    );
    // Then the session array, one node array, two proc blobs: in that order.
    let kinds: Vec<_> = job
        .items
        .iter()
        .skip(14)
        .map(|i| match i {
            JobItem::Session(_) => "session",
            JobItem::Node(_) => "node",
            JobItem::App(_) => "app",
            JobItem::Proc(_) => "proc",
            JobItem::Value(_) => "value",
        })
        .collect();
    assert_eq!(kinds, ["session", "node", "proc", "proc"]);
    let JobItem::Session(ssn) = &job.items[14] else {
        panic!()
    };
    assert_eq!(
        ssn,
        &[
            info("pmix.session.id", 0xffff_ffffu32),
            info("pmix.univ.size", 2u32).with_flags(InfoFlags::ARRAY_END)
        ]
    );
    let node: Vec<_> = job.nodes().collect();
    assert_eq!(node.len(), 1);
    let node = node[0];
    assert_eq!(node[0], info("pmix.hname", "vm"));
    assert_eq!(node[1], info("pmix.nodeid", 0u32));
    assert_eq!(node[2], info("pmix.node.size", 2u32));
    assert_eq!(node[3].key, "pmix.pmem");
    assert!(matches!(node[3].value, Value::Uint64(_)));
    assert_eq!(node[4], info("pmix.lpeers", "0,1"));
    assert_eq!(node[5], info("pmix.lldr", Rank(0)));
    // The last INFO of an array made with PMIX_INFO_CREATE carries ARRAY_END.
    assert_eq!(
        node[6],
        info("pmix.local.size", 2u32).with_flags(InfoFlags::ARRAY_END)
    );
    let procs: Vec<_> = job.procs().collect();
    assert_eq!(procs.len(), 2);
    for (rank, p) in procs.iter().enumerate() {
        let r = rank as u32;
        assert_eq!(p.rank, Rank(r));
        assert!(p.is_packed());
        assert_eq!(
            *p.kvals().unwrap(),
            [
                kval(
                    "pmix.locstr",
                    if r == 0 {
                        "SK0:L30:L20:L10:CR0:HT0:NM0"
                    } else {
                        "SK0:L30:L21:L11:CR1:HT1:NM0"
                    }
                ),
                kval("pmix.cpuset", if r == 0 { "0" } else { "1" }),
                kval("pmix.grank", Rank(r)),
                kval("pmix.lrank", r as u16),
                kval("pmix.nrank", r as u16),
                kval("pmix.nodeid", 0u32),
                kval("pmix.hname", "vm"),
                kval("pmix.appnum", 0u32),
            ]
        );
    }
}

#[test]
fn the_job_info_blob_decodes_the_same_fully_described() {
    // fence_fulldesc.txt: the same blob with type tags, and pblobs in the same
    // buffer type.
    let c = first("fence_fulldesc.0", FrameKind::Reply(Command::Req));
    assert_eq!(c.codec.buffer_type, BufferType::FullyDescribed);
    let Reply::Req(job) = reply(Command::Req, &c.payload, &c.codec) else {
        panic!()
    };
    assert_eq!(job.procs().count(), 2);
    assert_eq!(job.nodes().count(), 1);
    assert_eq!(job.value("pmix.job.size"), Some(&Value::Uint32(2)));
    // Re-encoded non-described, it is the same job.
    let again = Reply::Req(job.clone()).encode(&nd()).unwrap();
    assert_eq!(
        decode_reply(Command::Req, &again, &nd()).unwrap(),
        Reply::Req(job)
    );
}

#[test]
fn a_pblob_that_is_not_a_proc_blob_is_an_error_at_its_offset() {
    // nspace "a", then KVAL pmix.pblob = BYTE_OBJECT of one byte 0x07 (a PROC_RANK
    // pack needs at least two).
    let bytes = hex("0204 6100 02 16 706d69782e70626c6f6200 1b 01 07");
    let e = decode_reply(Command::Req, &bytes, &nd()).unwrap_err();
    assert_eq!(e.offset, 19, "{e}");
}

#[test]
fn a_pblob_with_a_bad_kval_decodes_and_its_kvals_give_the_in_place_error() {
    // nspace "a", then KVAL pmix.pblob = BYTE_OBJECT of 4 bytes (from payload
    // offset 19): a pack of one PROC_RANK 1 (02 01), then a pack of one KVAL (02)
    // whose key says 2 bytes (04) and has none.
    let bytes = hex("0204 6100 02 16 706d69782e70626c6f6200 1b 04 02 01 02 04");
    let Reply::Req(job) = decode_reply(Command::Req, &bytes, &nd()).unwrap() else {
        panic!()
    };
    let p = job.procs().next().unwrap();
    assert_eq!(p.rank, Rank(1));
    assert!(p.is_packed());
    let e = p.kvals().unwrap_err();
    assert_eq!(e.offset, 23, "{e}");
    // It re-encodes to its bytes in the same buffer type, and cannot be transcoded.
    assert_eq!(Reply::Req(job.clone()).encode(&nd()).unwrap(), bytes);
    let fd = Codec {
        buffer_type: BufferType::FullyDescribed,
        ..nd()
    };
    assert!(Reply::Req(job).encode(&fd).is_err());
}

#[test]
fn commit_buckets_of_fence_hash_decode_to_scoped_kvals() {
    // fence_hash.txt, rank 0, tag 102: the first COMMIT (§6.4).
    let bytes = hex(
        "0202 0201 020128021264656d6f2e73747200031a68656c6c6f2d66726f6d2d3000021264656d6f2e696e740009d00f
         0202 02011a021264656d6f2e73747200031a68656c6c6f2d66726f6d2d3000",
    );
    let Request::Commit(c) = req(&bytes, &nd()) else {
        panic!()
    };
    assert_eq!(
        c.buckets,
        [
            CommitBucket {
                scope: Scope(1),
                buffer_type: BufferType::NonDescribed,
                kvals: vec![kval("demo.str", "hello-from-0"), kval("demo.int", 1000i32)],
            },
            CommitBucket {
                scope: Scope(2),
                buffer_type: BufferType::NonDescribed,
                kvals: vec![kval("demo.str", "hello-from-0")],
            },
        ]
    );
    // fence_fulldesc.txt, rank 0, tag 102: the same commit fully described.
    let bytes = hex(
        "09022202 09022001 09021a022c09021c1264656d6f2e73747200031a68656c6c6f2d66726f6d2d300009021c1264656d6f2e696e740009d00f
         09022002 09021a021c09021c1264656d6f2e73747200031a68656c6c6f2d66726f6d2d3000",
    );
    let Request::Commit(c2) = req(&bytes, &fd()) else {
        panic!()
    };
    assert_eq!(c2.buckets[0].buffer_type, BufferType::FullyDescribed);
    assert_eq!(c2.buckets[0].kvals, c.buckets[0].kvals);
    assert_eq!(c2.buckets[1].kvals, c.buckets[1].kvals);
    // A commit of nothing new is the command alone.
    assert_eq!(
        req(&hex("0202"), &nd()),
        Request::Commit(Commit { buckets: vec![] })
    );
}

#[test]
fn getnb_and_its_reply_of_fence_hash_carry_all_of_the_targets_data() {
    // fence_hash.txt, rank 0, tag 104: GETNB of demo.str at rank 1 (§6.6).
    let bytes = hex("0204 021235383339323537370002010200021264656d6f2e73747200");
    assert_eq!(
        req(&bytes, &nd()),
        Request::GetNb(GetNb {
            nspace: s("58392577"),
            rank: Rank(1),
            info: vec![],
            key: Some(s("demo.str")),
        })
    );
    // The reply: STATUS 0 and one byte object holding PROC + both KVALs.
    let bytes = hex(
        "0200 0234021235383339323537370001021264656d6f2e73747200031a68656c6c6f2d66726f6d2d3100021264656d6f2e696e740009d20f",
    );
    assert_eq!(
        reply(Command::GetNb, &bytes, &nd()),
        Reply::GetNb(GetNbReply {
            status: Status(0),
            data: vec![ProcData {
                proc: Proc::new("58392577", 1),
                kvals: vec![kval("demo.str", "hello-from-1"), kval("demo.int", 1001i32)],
            }],
        })
    );
    // Tag 107: the REMOTE-scope key, NOT_FOUND as a lone status.
    assert_eq!(
        reply(Command::GetNb, &hex("025b"), &nd()),
        Reply::Status {
            command: Command::GetNb,
            status: Status::ERR_NOT_FOUND
        }
    );
    // fence_fulldesc.txt, rank 0, tag 104: the reply fully described.
    let bytes = hex(
        "09021400 09021b3b 0902161434333430343439323900 01 09021c1264656d6f2e73747200031a68656c6c6f2d66726f6d2d3100 09021c1264656d6f2e696e740009d20f",
    );
    let Reply::GetNb(r) = reply(Command::GetNb, &bytes, &fd()) else {
        panic!()
    };
    assert_eq!(r.data[0].proc, Proc::new("434044929", 1));
    assert_eq!(r.data[0].kvals.len(), 2);
}

#[test]
fn fence_requests_list_procs_and_directives() {
    // fence_hash.txt, rank 0, tag 103: Fence(collect) (§6.5, §5.5's INFO).
    let bytes =
        hex("0203 0201 0212353833393235373700feffffff0f 0201 021a706d69782e636f6c6c65637400000101");
    assert_eq!(
        req(&bytes, &nd()),
        Request::FenceNb(FenceNb {
            procs: vec![Proc {
                nspace: s("58392577"),
                rank: Rank::WILDCARD
            }],
            info: vec![info("pmix.collect", true)],
        })
    );
}

#[test]
fn the_event_of_event_hash_has_its_source_infos_and_trailing_range() {
    // event_hash.txt, rank 1: the tag-0 event (§7).
    let bytes = hex(
        "020c 02fd2e 021434373539323234333300 00 0203
         061a64656d6f2e7061796c6f6164000003166576656e742d64617461001c706d69782e65766e6f6e6465660000010134706d69782e737276722e696e7465726e616c2e6e6f746966790000010102 02",
    );
    let ev = decode_event(&bytes, &nd()).unwrap();
    assert_eq!(
        ev,
        Event {
            status: Status(-3007),
            source: Proc::new("475922433", 0),
            info: vec![
                info("demo.payload", "event-data"),
                info("pmix.evnondef", true),
                info("pmix.srvr.internal.notify", true),
            ],
            range: Some(DataRange(2)),
        }
    );
    assert_eq!(ev.encode(&nd()).unwrap(), bytes);
    // A replayed cached event has no range (§7); it re-encodes without one.
    let short = &bytes[..bytes.len() - 2];
    let ev2 = decode_event(short, &nd()).unwrap();
    assert_eq!(ev2.range, None);
    assert_eq!(ev2.encode(&nd()).unwrap(), short);
    // An event must start with NOTIFY.
    let mut bad = bytes.clone();
    bad[1] = 0x0d;
    let e = decode_event(&bad, &nd()).unwrap_err();
    assert_eq!(e.offset, 0);
}

#[test]
fn notify_and_regevents_of_event_hash() {
    // event_hash.txt, rank 0, tag 104: NOTIFY with range LOCAL (§6.8).
    let bytes = hex(
        "020c 02fd2e 0202 0202 041a64656d6f2e7061796c6f6164000003166576656e742d64617461001c706d69782e65766e6f6e64656600000101",
    );
    assert_eq!(
        req(&bytes, &nd()),
        Request::Notify(Notify {
            status: Status(-3007),
            range: DataRange(2),
            info: vec![
                info("demo.payload", "event-data"),
                info("pmix.evnondef", true)
            ],
        })
    );
    // Tag 102: REGEVENTS for -3007 (§6.7).
    assert_eq!(
        req(&hex("020d 0201 02fd2e 0200"), &nd()),
        Request::RegEvents(RegEvents {
            codes: vec![Status(-3007)],
            info: vec![]
        })
    );
}

#[test]
fn mpi_hello_sends_regevents_job_control_and_one_way_deregevents() {
    // mpi_hello_hash.txt, rank 0, tag 102: REGEVENTS of the default handler.
    assert_eq!(
        req(&hex("020d 0200 0200"), &nd()),
        Request::RegEvents(RegEvents {
            codes: vec![],
            info: vec![]
        })
    );
    // Tag 104: REGEVENTS for MODEL_DECLARED (-147).
    assert_eq!(
        req(&hex("020d 0201 02a502 0200"), &nd()),
        Request::RegEvents(RegEvents {
            codes: vec![Status(-147)],
            info: vec![]
        })
    );
    // Tag 103: JOB_CONTROL registering the session directory for cleanup (§6.12).
    let bytes = hex(
        "0212 0201 02143431393233333739330000 0202
         0428706d69782e7265672e636c65616e7570646972000003362f746d702f6f6d70692e766d2e302f7069642e32393639392f310026706d69782e636c6e75702e7265637572736500000101",
    );
    assert_eq!(
        req(&bytes, &nd()),
        Request::JobControl(JobControl {
            targets: vec![Proc::new("419233793", 0)],
            directives: vec![
                info("pmix.reg.cleanupdir", "/tmp/ompi.vm.0/pid.29699/1"),
                info("pmix.clnup.recurse", true),
            ],
        })
    );
    // Tags 111–114: DEREGEVENTS with no code, INT32_MIN, and -147.
    let m = req(&hex("020e"), &nd());
    assert_eq!(m, Request::DeregEvents(DeregEvents { codes: vec![] }));
    assert!(!m.expects_reply());
    assert_eq!(
        req(&hex("020e 02ffffffff0f"), &nd()),
        Request::DeregEvents(DeregEvents {
            codes: vec![DeregEvents::DEFAULT_HANDLER]
        })
    );
    assert_eq!(
        req(&hex("020e 02a502"), &nd()),
        Request::DeregEvents(DeregEvents {
            codes: vec![Status(-147)]
        })
    );
}

#[test]
fn the_group_messages_of_group_hash_use_the_420_layouts() {
    // group_hash.txt, rank 0, tags 102–104 (§6.9).
    let construct = hex(
        "0218 021664656d6f2d67726f757000 0202 041434383638363639343500001434383638363639343500 01 0200",
    );
    assert_eq!(
        req(&construct, &nd()),
        Request::GroupConstruct(GroupConstruct {
            grp: s("demo-group"),
            procs: vec![Proc::new("486866945", 0), Proc::new("486866945", 1)],
            info: vec![],
        })
    );
    assert_eq!(
        req(&hex("021b 021664656d6f2d67726f757000 0200"), &nd()),
        Request::GroupLeave(GroupLeave {
            grp: s("demo-group"),
            info: vec![]
        })
    );
    let destruct = hex("021c 021664656d6f2d67726f757000 0200");
    assert_eq!(
        req(&destruct, &nd()),
        Request::GroupDestruct(GroupDestruct {
            grp: s("demo-group"),
            members: None,
            info: vec![]
        })
    );
    // mpirun answered each with NOT_SUPPORTED.
    for cmd in [
        Command::GroupConstruct,
        Command::GroupLeave,
        Command::GroupDestruct,
    ] {
        assert_eq!(
            reply(cmd, &hex("025d"), &nd()),
            Reply::Status {
                command: cmd,
                status: Status::ERR_NOT_SUPPORTED
            }
        );
    }
    // The construct request is the same for a 4.2.4 peer.
    assert!(matches!(
        req(&construct, &v424(BufferType::NonDescribed)),
        Request::GroupConstruct(_)
    ));
}

#[test]
fn the_424_group_layouts_add_members_and_are_chosen_by_version() {
    assert_eq!(nd().version.group_layout(), GroupLayout::V420);
    let new = v424(BufferType::NonDescribed);
    assert_eq!(new.version.group_layout(), GroupLayout::V424);
    // §6.9, 4.2.4+: destruct request `STRING grp, SIZE n, PROC[n], SIZE ninfo`.
    let destruct = hex("021c 020867727000 0202 04066e730000066e730001 0200");
    let m = req(&destruct, &new);
    assert_eq!(
        m,
        Request::GroupDestruct(GroupDestruct {
            grp: s("grp"),
            members: Some(vec![Proc::new("ns", 0), Proc::new("ns", 1)]),
            info: vec![],
        })
    );
    // A 4.2.2 peer reads those bytes as `grp, SIZE ninfo=1, INFO…` and fails.
    assert!(decode_request(&destruct, &nd()).is_err());
    // The form must match the layout of the codec's version.
    let err = m.encode(&nd()).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Unencodable { .. }));
    // Construct reply, 4.2.4+: `STATUS, SIZE n, PROC[n], SIZE ctxid`.
    let bytes = hex("0200 0202 04066e730000066e730001 0207");
    let r = reply(Command::GroupConstruct, &bytes, &new);
    assert_eq!(
        r,
        Reply::GroupConstruct(GroupConstructReply {
            status: Status(0),
            members: Some(vec![Proc::new("ns", 0), Proc::new("ns", 1)]),
            ctxid: Some(Size(7)),
        })
    );
    assert!(decode_reply(Command::GroupConstruct, &bytes, &nd()).is_err());
    // Construct reply, 4.2.0–4.2.3: `STATUS, SIZE ctxid`; SIZE_MAX when none.
    let bytes = hex("0200 02ffffffffffffffffff");
    assert_eq!(
        reply(Command::GroupConstruct, &bytes, &nd()),
        Reply::GroupConstruct(GroupConstructReply {
            status: Status(0),
            members: None,
            ctxid: Some(GroupConstructReply::NO_CTXID),
        })
    );
    assert!(decode_reply(Command::GroupConstruct, &bytes, &new).is_err());
    // 4.2.4+ without the context id: the members alone.
    let bytes = hex("0200 0201 02066e730000");
    assert_eq!(
        reply(Command::GroupConstruct, &bytes, &new),
        Reply::GroupConstruct(GroupConstructReply {
            status: Status(0),
            members: Some(vec![Proc::new("ns", 0)]),
            ctxid: None,
        })
    );
    // 4.2.0–4.2.3 without the context id is the status reply; the typed form
    // refuses to encode it.
    let m = Reply::GroupConstruct(GroupConstructReply {
        status: Status(0),
        members: None,
        ctxid: None,
    });
    assert!(m.encode(&nd()).is_err());
    // Destruct reply with its optional SIZE.
    assert_eq!(
        reply(Command::GroupDestruct, &hex("0200 0203"), &nd()),
        Reply::GroupDestruct(GroupDestructReply {
            status: Status(0),
            ctxid: Size(3)
        })
    );
    // Both layouts round-trip fully described too.
    let fdnew = v424(BufferType::FullyDescribed);
    for m in [
        Reply::GroupConstruct(GroupConstructReply {
            status: Status(0),
            members: Some(vec![]),
            ctxid: Some(Size(1)),
        }),
        Reply::GroupConstruct(GroupConstructReply {
            status: Status(-1),
            members: Some(vec![Proc::new("a", 0)]),
            ctxid: None,
        }),
    ] {
        let b = m.encode(&fdnew).unwrap();
        assert_eq!(
            decode_reply(Command::GroupConstruct, &b, &fdnew).unwrap(),
            m
        );
    }
}

#[test]
fn query_and_its_reply_of_query_hash() {
    // query_hash.txt, tag 102: two queries (§6.11).
    let bytes = hex(
        "020f 0202 040218706d69782e7172792e6e730000021c706d69782e6a6f622e73697a65000118706d69782e6e73706163650000031435333534393436353700",
    );
    assert_eq!(
        req(&bytes, &nd()),
        Request::Query(QueryInfo {
            queries: vec![
                Query {
                    keys: vec![s("pmix.qry.ns")],
                    qualifiers: vec![]
                },
                Query {
                    keys: vec![s("pmix.job.size")],
                    qualifiers: vec![info("pmix.nspace", "535494657")],
                },
            ]
        })
    );
    // The reply: ERROR and one INFO (flags ARRAY_END).
    let bytes = hex("0201 0201 0218706d69782e7172792e6e730002031435333534393436353700");
    assert_eq!(
        reply(Command::Query, &bytes, &nd()),
        Reply::Query(InfoReply {
            status: Status::ERROR,
            info: vec![info("pmix.qry.ns", "535494657").with_flags(InfoFlags::ARRAY_END)],
        })
    );
}

#[test]
fn abort_of_abort_hash() {
    // abort_hash.txt, rank 0, tag 102 (§6.3).
    let bytes = hex("0201 0254 022e64656d6f2061626f72742066726f6d2072616e6b203000 0200");
    assert_eq!(
        req(&bytes, &nd()),
        Request::Abort(Abort {
            status: Status(42),
            message: Some(s("demo abort from rank 0")),
            procs: vec![],
        })
    );
}

#[test]
fn a_size_that_disagrees_with_its_pack_is_a_bad_count() {
    // FENCENB claiming 2 procs but packing 1.
    let bytes = hex("0203 0204 0212353833393235373700feffffff0f 0200");
    let e = decode_request(&bytes, &nd()).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::BadCount { found: 1, .. }),
        "{e}"
    );
    assert_eq!(e.offset, 4);
}

#[test]
fn unknown_commands_are_kept_raw_and_unknown_bytes_refused() {
    // 5.x RESOLVE_PEERS (37): kept as it came.
    let bytes = hex("0225 0203 0400");
    assert_eq!(
        req(&bytes, &nd()),
        Request::Raw {
            command: Command::ResolvePeers,
            bytes: hex("0203 0400")
        }
    );
    assert_eq!(
        reply(Command::ResolvePeers, &hex("0200 0201"), &nd()),
        Reply::Raw {
            command: Command::ResolvePeers,
            bytes: hex("0200 0201")
        }
    );
    // A raw form of a typed command is not encodable.
    let raw = Request::Raw {
        command: Command::FenceNb,
        bytes: vec![],
    };
    assert!(raw.encode(&nd()).is_err());
    // Command 33 (REFRESH_CACHE, in 4.2's sources) is kept raw; 39 exists in no
    // version.
    assert_eq!(
        req(&hex("0221 0206766d00"), &nd()),
        Request::Raw {
            command: Command::RefreshCache,
            bytes: hex("0206766d00")
        }
    );
    assert!(decode_request(&hex("0227"), &nd()).is_err());
}

#[test]
fn iof_and_the_other_commands_round_trip_as_their_layouts_say() {
    // Tag 2 (§6.13): PROC, IOF_CHANNEL, SIZE id, SIZE ninfo, BYTE_OBJECT.
    let bytes = hex("02046100 05 0202 0209 0200 02026869");
    let iof = decode_iof(&bytes, &nd()).unwrap();
    assert_eq!(
        iof,
        Iof {
            source: Proc::new("a", 5),
            channel: IofChannel(2),
            request_id: Size(9),
            info: vec![],
            data: ByteObject(b"hi".to_vec()),
        }
    );
    assert_eq!(iof.encode(&nd()).unwrap(), bytes);
    // LOOKUPNB: UINT32 uid, SIZE nkeys, one STRING pack per key, SIZE ninfo.
    let bytes = hex("0207 0200 0202 02066b3100 02066b3200 0200");
    assert_eq!(
        req(&bytes, &nd()),
        Request::Lookup(Lookup {
            uid: Uint32(0),
            keys: vec![s("k1"), s("k2")],
            info: vec![]
        })
    );
    // A key count larger than the bytes left is refused before allocating.
    assert!(matches!(
        decode_request(&hex("0207 0200 02ffffffff0f"), &nd())
            .unwrap_err()
            .kind,
        ErrorKind::TooLarge { .. }
    ));
    // IOF_PUSH without data (end of input).
    let m = req(&hex("0217 0200 0200"), &nd());
    assert_eq!(
        m,
        Request::IofPush(IofPush {
            targets: vec![],
            directives: vec![],
            data: None
        })
    );
}

// ---------------------------------------------------------------------------
// Generated messages.

fn codecs() -> impl Strategy<Value = Codec> {
    (any::<bool>(), any::<bool>()).prop_map(|(desc, new)| {
        let bt = if desc {
            BufferType::FullyDescribed
        } else {
            BufferType::NonDescribed
        };
        if new {
            v424(bt)
        } else {
            Codec {
                buffer_type: bt,
                ..Codec::v422()
            }
        }
    })
}

fn wstr() -> impl Strategy<Value = WStr> {
    "[a-z.]{0,8}".prop_map(WStr::from)
}

fn opt_wstr() -> impl Strategy<Value = Option<WStr>> {
    proptest::option::of(wstr())
}

fn demo_key() -> impl Strategy<Value = WStr> {
    "demo\\.[a-z]{0,5}".prop_map(WStr::from)
}

fn proc_() -> impl Strategy<Value = Proc> {
    (wstr(), any::<u32>()).prop_map(|(n, r)| Proc {
        nspace: n,
        rank: Rank(r),
    })
}

fn leaf_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Undef),
        any::<bool>().prop_map(Value::Bool),
        opt_wstr().prop_map(Value::String),
        any::<u64>().prop_map(Value::Size),
        any::<i32>().prop_map(Value::Int32),
        any::<u16>().prop_map(Value::Uint16),
        any::<u32>().prop_map(Value::Uint32),
        any::<u64>().prop_map(Value::Uint64),
        any::<i32>().prop_map(Value::Status),
        any::<u32>().prop_map(Value::ProcRank),
        proc_().prop_map(Value::Proc),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(|b| Value::ByteObject(ByteObject(b))),
    ]
}

fn info_() -> impl Strategy<Value = Info> {
    (demo_key(), 0u32..32, leaf_value()).prop_map(|(k, f, v)| Info {
        key: k,
        flags: InfoFlags(f),
        value: v,
    })
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => leaf_value(),
        1 => proptest::collection::vec(info_(), 0..3).prop_map(|v| Value::DataArray(DataArray::infos(v))),
    ]
}

fn kval_() -> impl Strategy<Value = Kval> {
    (demo_key(), value()).prop_map(|(k, v)| Kval { key: k, value: v })
}

fn infos() -> impl Strategy<Value = Vec<Info>> {
    proptest::collection::vec(info_(), 0..3)
}

fn kvals() -> impl Strategy<Value = Vec<Kval>> {
    proptest::collection::vec(kval_(), 0..3)
}

fn procs() -> impl Strategy<Value = Vec<Proc>> {
    proptest::collection::vec(proc_(), 0..3)
}

fn status() -> impl Strategy<Value = Status> {
    any::<i32>().prop_map(Status)
}

fn buffer_type() -> impl Strategy<Value = BufferType> {
    prop_oneof![
        Just(BufferType::NonDescribed),
        Just(BufferType::FullyDescribed)
    ]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..12)
}

fn job_info() -> impl Strategy<Value = JobInfo> {
    let item = prop_oneof![
        kval_().prop_map(JobItem::Value),
        infos().prop_map(JobItem::Session),
        infos().prop_map(JobItem::Node),
        infos().prop_map(JobItem::App),
        (any::<u32>(), kvals()).prop_map(|(r, k)| JobItem::Proc(ProcBlob::new(Rank(r), k))),
    ];
    (wstr(), proptest::collection::vec(item, 0..5))
        .prop_map(|(nspace, items)| JobInfo { nspace, items })
}

fn untyped_command() -> impl Strategy<Value = Command> {
    prop::sample::select(vec![
        Command::GroupJoin,
        Command::GroupInvite,
        Command::FabricRegister,
        Command::FabricUpdate,
        Command::Resblk,
        Command::SessionCtrl,
        Command::ReqSysinfo,
        Command::ResolvePeers,
        Command::ResolveNode,
    ])
}

fn app() -> impl Strategy<Value = App> {
    (
        opt_wstr(),
        proptest::collection::vec(wstr(), 0..2),
        any::<i32>(),
        infos(),
    )
        .prop_map(|(cmd, argv, maxprocs, info)| App {
            cmd,
            argv,
            env: vec![],
            cwd: None,
            maxprocs,
            info,
        })
}

/// A request valid for `layout` (the destruct members follow it).
fn request(layout: GroupLayout) -> impl Strategy<Value = Request> {
    let members = move |p: Vec<Proc>| match layout {
        GroupLayout::V420 => None,
        GroupLayout::V424 => Some(p),
    };
    prop_oneof![
        Just(Request::Req),
        Just(Request::Finalize),
        (status(), opt_wstr(), procs()).prop_map(|(status, message, procs)| Request::Abort(
            Abort {
                status,
                message,
                procs
            }
        )),
        proptest::collection::vec(
            (any::<u8>(), buffer_type(), kvals()).prop_map(|(s, t, k)| CommitBucket {
                scope: Scope(s),
                buffer_type: t,
                kvals: k
            }),
            0..3
        )
        .prop_map(|buckets| Request::Commit(Commit { buckets })),
        (procs(), infos()).prop_map(|(procs, info)| Request::FenceNb(FenceNb { procs, info })),
        (wstr(), any::<u32>(), infos(), opt_wstr()).prop_map(|(nspace, r, info, key)| {
            Request::GetNb(GetNb {
                nspace,
                rank: Rank(r),
                info,
                key,
            })
        }),
        (any::<u32>(), infos()).prop_map(|(u, info)| Request::Publish(Publish {
            uid: Uint32(u),
            info
        })),
        (
            any::<u32>(),
            proptest::collection::vec(wstr(), 0..3),
            infos(),
            any::<bool>()
        )
            .prop_map(|(u, keys, info, un)| {
                let m = Lookup {
                    uid: Uint32(u),
                    keys,
                    info,
                };
                if un {
                    Request::Unpublish(m)
                } else {
                    Request::Lookup(m)
                }
            }),
        (infos(), proptest::collection::vec(app(), 0..2))
            .prop_map(|(info, apps)| Request::Spawn(Spawn { info, apps })),
        (procs(), infos(), any::<bool>()).prop_map(|(procs, info, dis)| {
            let m = Connect { procs, info };
            if dis {
                Request::Disconnect(m)
            } else {
                Request::Connect(m)
            }
        }),
        (status(), any::<u8>(), infos()).prop_map(|(status, r, info)| Request::Notify(Notify {
            status,
            range: DataRange(r),
            info
        })),
        (proptest::collection::vec(status(), 0..3), infos())
            .prop_map(|(codes, info)| Request::RegEvents(RegEvents { codes, info })),
        proptest::collection::vec(status(), 0..3)
            .prop_map(|codes| Request::DeregEvents(DeregEvents { codes })),
        proptest::collection::vec(
            (proptest::collection::vec(wstr(), 0..2), infos())
                .prop_map(|(keys, qualifiers)| Query { keys, qualifiers }),
            0..3
        )
        .prop_map(|queries| Request::Query(QueryInfo { queries })),
        (any::<u64>(), infos(), infos()).prop_map(|(t, data, directives)| Request::Log(Log {
            timestamp: Time(t),
            data,
            directives
        })),
        (any::<u8>(), infos()).prop_map(|(d, info)| Request::Alloc(Alloc {
            directive: AllocDirective(d),
            info
        })),
        (procs(), infos()).prop_map(|(targets, directives)| Request::JobControl(JobControl {
            targets,
            directives
        })),
        (info_(), status(), infos()).prop_map(|(monitor, error, directives)| Request::Monitor(
            Monitor {
                monitor,
                error,
                directives
            }
        )),
        infos().prop_map(|info| Request::GetCredential(GetCredential { info })),
        (bytes(), infos()).prop_map(|(b, directives)| Request::ValidateCred(ValidateCred {
            cred: ByteObject(b),
            directives
        })),
        (procs(), infos(), any::<u16>(), any::<u64>()).prop_map(|(procs, directives, c, id)| {
            Request::IofPull(IofPull {
                procs,
                directives,
                channel: IofChannel(c),
                local_id: Size(id),
            })
        }),
        (procs(), infos(), proptest::option::of(bytes())).prop_map(|(targets, directives, d)| {
            Request::IofPush(IofPush {
                targets,
                directives,
                data: d.map(ByteObject),
            })
        }),
        (wstr(), procs(), infos()).prop_map(|(grp, procs, info)| Request::GroupConstruct(
            GroupConstruct { grp, procs, info }
        )),
        (wstr(), infos()).prop_map(|(grp, info)| Request::GroupLeave(GroupLeave { grp, info })),
        (wstr(), procs(), infos()).prop_map(move |(grp, p, info)| Request::GroupDestruct(
            GroupDestruct {
                grp,
                members: members(p),
                info
            }
        )),
        (infos(), any::<u64>()).prop_map(|(directives, id)| Request::IofDereg(IofDereg {
            directives,
            remote_id: Size(id)
        })),
        (opt_wstr(), opt_wstr(), infos()).prop_map(|(xml, cpus, info)| {
            Request::ComputeDeviceDistances(ComputeDeviceDistances {
                topo: Topo {
                    support: if xml.is_some() { vec![7; 32] } else { vec![] },
                    xml,
                },
                cpuset: ProcCpuset(cpus),
                info,
            })
        }),
        (untyped_command(), bytes()).prop_map(|(command, bytes)| Request::Raw { command, bytes }),
    ]
}

/// A reply valid for `layout`, never one that is a lone STATUS.
fn typed_reply(layout: GroupLayout) -> impl Strategy<Value = Reply> {
    let members = move |p: Vec<Proc>| match layout {
        GroupLayout::V420 => None,
        GroupLayout::V424 => Some(p),
    };
    prop_oneof![
        (command_strategy(), status())
            .prop_map(|(command, status)| Reply::Status { command, status }),
        job_info().prop_map(Reply::Req),
        (
            status(),
            proptest::collection::vec(
                (proc_(), kvals()).prop_map(|(proc, kvals)| ProcData { proc, kvals }),
                1..3
            )
        )
            .prop_map(|(status, data)| Reply::GetNb(GetNbReply { status, data })),
        (
            status(),
            proptest::collection::vec(
                (proc_(), demo_key(), leaf_value()).prop_map(|(proc, key, value)| Pdata {
                    proc,
                    key,
                    value
                }),
                0..3
            )
        )
            .prop_map(|(status, data)| Reply::Lookup(LookupReply { status, data })),
        (status(), opt_wstr(), kvals()).prop_map(|(status, nspace, kvals)| Reply::Spawn(
            SpawnReply {
                status,
                nspace,
                kvals
            }
        )),
        (
            status(),
            proptest::collection::vec(
                (wstr(), kvals()).prop_map(|(nspace, kvals)| JobBlob { nspace, kvals }),
                1..3
            )
        )
            .prop_map(|(status, jobs)| Reply::Connect(ConnectReply { status, jobs })),
        info_reply().prop_map(Reply::Query),
        info_reply().prop_map(Reply::Alloc),
        info_reply().prop_map(Reply::JobControl),
        info_reply().prop_map(Reply::Monitor),
        info_reply().prop_map(Reply::ValidateCred),
        (status(), bytes(), infos()).prop_map(|(status, b, info)| Reply::GetCredential(
            GetCredentialReply {
                status,
                cred: ByteObject(b),
                info
            }
        )),
        (status(), any::<u64>()).prop_map(|(status, id)| Reply::IofPull(IofPullReply {
            status,
            remote_id: Size(id)
        })),
        (status(), procs(), any::<u64>()).prop_map(move |(status, p, id)| Reply::GroupConstruct(
            GroupConstructReply {
                status,
                members: members(p),
                ctxid: Some(Size(id))
            }
        )),
        // 4.2.4+ may omit the context id; 4.2.0–4.2.3 without it is a lone status.
        (status(), procs()).prop_map(move |(status, p)| Reply::GroupConstruct(
            GroupConstructReply {
                status,
                ctxid: members(vec![]).map_or(Some(Size(0)), |_| None),
                members: members(p),
            }
        )),
        (status(), procs(), bytes()).prop_map(|(status, p, b)| Reply::FenceNb(FenceNbReply {
            status,
            contributions: p.into_iter().map(|p| (p, ByteObject(b.clone()))).collect(),
        })),
        (status(), any::<u64>()).prop_map(|(status, id)| Reply::GroupDestruct(
            GroupDestructReply {
                status,
                ctxid: Size(id)
            }
        )),
        (
            status(),
            proptest::collection::vec(
                (opt_wstr(), any::<u64>(), any::<u16>(), any::<u16>()).prop_map(
                    |(uuid, ty, mindist, maxdist)| DeviceDist {
                        uuid,
                        osname: None,
                        ty,
                        mindist,
                        maxdist
                    }
                ),
                0..3
            )
        )
            .prop_map(
                |(status, dists)| Reply::ComputeDeviceDistances(DistancesReply { status, dists })
            ),
        (untyped_command(), bytes()).prop_map(|(command, bytes)| Reply::Raw { command, bytes }),
    ]
}

fn info_reply() -> impl Strategy<Value = InfoReply> {
    (status(), infos()).prop_map(|(status, info)| InfoReply { status, info })
}

fn command_strategy() -> impl Strategy<Value = Command> {
    prop::sample::select(Command::ALL.to_vec())
}

fn event() -> impl Strategy<Value = Event> {
    (
        status(),
        proc_(),
        infos(),
        proptest::option::of(any::<u8>()),
    )
        .prop_map(|(status, source, info, range)| Event {
            status,
            source,
            info,
            range: range.map(DataRange),
        })
}

fn iof() -> impl Strategy<Value = Iof> {
    (proc_(), any::<u16>(), any::<u64>(), infos(), bytes()).prop_map(
        |(source, c, id, info, data)| Iof {
            source,
            channel: IofChannel(c),
            request_id: Size(id),
            info,
            data: ByteObject(data),
        },
    )
}

fn codec_and<T: std::fmt::Debug>(
    f: fn(GroupLayout) -> BoxedStrategy<T>,
) -> impl Strategy<Value = (Codec, T)> {
    codecs().prop_flat_map(move |c| {
        let l = c.version.group_layout();
        (Just(c), f(l))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_requests_round_trip_in_both_buffer_types(
        (codec, m) in codec_and(|l| request(l).boxed())
    ) {
        let bytes = m.encode(&codec).unwrap();
        let back = decode_request(&bytes, &codec).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(back.encode(&codec).unwrap(), bytes);
    }

    #[test]
    fn generated_replies_round_trip_in_both_buffer_types(
        (codec, m) in codec_and(|l| typed_reply(l).boxed())
    ) {
        match m.encode(&codec) {
            Ok(bytes) => {
                let back = decode_reply(m.command(), &bytes, &codec).unwrap();
                prop_assert_eq!(&back, &m);
                prop_assert_eq!(back.encode(&codec).unwrap(), bytes);
            }
            // Only a raw reply whose bytes happen to be a lone STATUS is refused.
            Err(e) => {
                prop_assert!(matches!(m, Reply::Raw { .. }), "{:?}: {}", m, e);
            }
        }
    }

    #[test]
    fn generated_events_and_iof_round_trip_in_both_buffer_types(
        codec in codecs(), ev in event(), io in iof()
    ) {
        let bytes = ev.encode(&codec).unwrap();
        prop_assert_eq!(decode_event(&bytes, &codec).unwrap(), ev);
        let bytes = io.encode(&codec).unwrap();
        prop_assert_eq!(decode_iof(&bytes, &codec).unwrap(), io);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_what_is_accepted_reencodes_the_same(
        codec in codecs(),
        cmd in command_strategy(),
        tail in proptest::collection::vec(any::<u8>(), 0..48),
        raw_head in any::<bool>(),
    ) {
        // Half the inputs start with a valid command pack, to get past it.
        let mut payload = Vec::new();
        if !raw_head {
            let mut w = pmix_wire::Writer::new(codec.buffer_type);
            w.pack_one(&cmd);
            payload = w.finish().unwrap();
        }
        payload.extend_from_slice(&tail);
        if let Ok(m) = decode_request(&payload, &codec) {
            prop_assert_eq!(m.encode(&codec).unwrap(), payload.clone());
        }
        if let Ok(m) = decode_reply(cmd, &tail, &codec) {
            prop_assert_eq!(m.encode(&codec).unwrap(), tail.clone());
        }
        if let Ok(m) = decode_event(&payload, &codec) {
            prop_assert_eq!(m.encode(&codec).unwrap(), payload.clone());
        }
        if let Ok(m) = decode_iof(&tail, &codec) {
            prop_assert_eq!(m.encode(&codec).unwrap(), tail.clone());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_generated_messages_never_panic_and_what_is_accepted_reencodes_the_same(
        (codec, m) in codec_and(|l| request(l).boxed()),
        (_, rep) in codec_and(|l| typed_reply(l).boxed()),
        at in any::<prop::sample::Index>(),
        v in any::<u8>(),
        cut in any::<bool>(),
    ) {
        let mutate = |mut b: Vec<u8>| {
            if !b.is_empty() {
                let i = at.index(b.len());
                if cut { b.truncate(i) } else { b[i] = v }
            }
            b
        };
        let p = mutate(m.encode(&codec).unwrap());
        if let Ok(back) = decode_request(&p, &codec) {
            prop_assert_eq!(back.encode(&codec).unwrap(), p);
        }
        if let Ok(bytes) = rep.encode(&codec) {
            let p = mutate(bytes);
            if let Ok(back) = decode_reply(rep.command(), &p, &codec) {
                prop_assert_eq!(back.encode(&codec).unwrap(), p);
            }
        }
    }
}

#[test]
fn mutated_captured_messages_never_panic_and_what_is_accepted_reencodes_the_same() {
    // Every captured payload with each byte in turn replaced by a few values
    // (bounded: the first 96 bytes of each).
    let frames = captured_frames("");
    let mut accepted = 0usize;
    for c in frames.iter().filter(|c| c.payload.len() <= 1024) {
        for i in 0..c.payload.len().min(96) {
            for v in [0x00, 0x01, 0x02, 0x7f, 0x80, 0xff] {
                let mut p = c.payload.clone();
                p[i] = v;
                let again = match c.kind {
                    FrameKind::Request(_) => decode_request(&p, &c.codec)
                        .ok()
                        .map(|m| m.encode(&c.codec)),
                    FrameKind::Reply(cmd) => decode_reply(cmd, &p, &c.codec)
                        .ok()
                        .map(|m| m.encode(&c.codec)),
                    FrameKind::Event => decode_event(&p, &c.codec).ok().map(|m| m.encode(&c.codec)),
                    _ => None,
                };
                if let Some(bytes) = again {
                    assert_eq!(bytes.unwrap(), p, "{} byte {i} = {v:#x}", c.file);
                    accepted += 1;
                }
            }
        }
    }
    assert!(accepted > 0);
}

#[test]
fn a_fence_reply_with_contributions_decodes_pairs_and_refuses_unequal_lists() {
    let codec = nd();
    let reply = Reply::FenceNb(FenceNbReply {
        status: Status(0),
        contributions: vec![
            (Proc::new("job", 0), ByteObject(vec![1, 2, 3])),
            (Proc::new("job", 5), ByteObject(vec![])),
        ],
    });
    let bytes = reply.encode(&codec).unwrap();
    assert_eq!(decode_reply(Command::FenceNb, &bytes, &codec), Ok(reply));
    // No contribution is still more than a lone STATUS.
    let empty = Reply::FenceNb(FenceNbReply {
        status: Status(0),
        contributions: vec![],
    });
    let bytes = empty.encode(&codec).unwrap();
    assert_eq!(decode_reply(Command::FenceNb, &bytes, &codec), Ok(empty));
}

#[test]
fn spawn_and_connect_replies_built_from_a_req_payload_decode_as_the_typed_replies() {
    for codec in [nd(), fd()] {
        let job = Reply::Req(JobInfo {
            nspace: s("child.1"),
            items: vec![
                JobItem::Value(kval("pmix.job.size", 2u32)),
                JobItem::Value(Kval {
                    key: s("pmix.parent"),
                    value: Value::Proc(Proc::new("parent.0", 0)),
                }),
            ],
        })
        .encode(&codec)
        .unwrap();
        let bytes = pmix_wire::msg::spawn_reply_with_job(&codec, Status::SUCCESS, &job).unwrap();
        match reply(Command::SpawnNb, &bytes, &codec) {
            Reply::Spawn(r) => {
                assert_eq!(r.status, Status::SUCCESS);
                assert_eq!(r.nspace, Some(s("child.1")));
                assert_eq!(r.kvals.len(), 2);
                assert_eq!(r.kvals[0], kval("pmix.job.size", 2u32));
            }
            other => panic!("not a spawn reply: {other:?}"),
        }
        let bytes = pmix_wire::msg::connect_reply_with_jobs(&codec, Status::SUCCESS, &[&job, &job])
            .unwrap();
        match reply(Command::ConnectNb, &bytes, &codec) {
            Reply::Connect(r) => {
                assert_eq!(r.jobs.len(), 2);
                assert_eq!(r.jobs[1].nspace, s("child.1"));
                assert_eq!(
                    r.jobs[1].kvals[1],
                    Kval {
                        key: s("pmix.parent"),
                        value: Value::Proc(Proc::new("parent.0", 0))
                    }
                );
            }
            other => panic!("not a connect reply: {other:?}"),
        }
    }
}
