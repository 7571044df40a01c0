//! Golden bytes (docs/conventions.md rule 19): every connection of every capture in
//! `testdata/wire-captures/raw/` (real traffic between Debian's libpmix 4.2.2 and
//! Open MPI 4.1.4's mpirun) decodes with the stream layer, every message re-encodes
//! to exactly its bytes, every byte of both directions belongs to a message, every
//! frame payload decodes into a typed message (`msg`, never a raw fallback) that
//! re-encodes to it, and the classification of every frame agrees with the
//! field-by-field decodes in `testdata/wire-captures/*.txt`. The handshake and the frame headers are pinned
//! field by field against docs/wire.md §3.1's example and ANNOTATED.md, and any
//! chunking of the streams (one byte at a time, random splits) gives the same
//! messages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pmix_wire::frame::{Decoded, FrameDecoder, FrameHeader};
use pmix_wire::handshake::{ClientReply, ConnectMsg, Identity};
use pmix_wire::stream::{Conversation, Direction, FrameKind, Item, Message};
use pmix_wire::{BufferType, Command, Limits, msg};

fn captures_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/wire-captures"
    ))
}

/// One connection of a capture log: its chunks in arrival order.
#[derive(Debug, Default)]
struct Conn {
    chunks: Vec<(Direction, Vec<u8>)>,
}

impl Conn {
    fn stream(&self, dir: Direction) -> Vec<u8> {
        self.chunks
            .iter()
            .filter(|(d, _)| *d == dir)
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }
}

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The connections of one `raw/*.jsonl` log, by connection number.
fn load(path: &Path) -> BTreeMap<u64, Conn> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut conns: BTreeMap<u64, Conn> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        if v["ev"] != "data" {
            continue;
        }
        let conn = v["conn"].as_u64().expect("conn");
        let dir = match v["dir"].as_str() {
            Some("C2S") => Direction::ClientToServer,
            Some("S2C") => Direction::ServerToClient,
            other => panic!("dir {other:?}"),
        };
        let bytes = hex(v["hex"].as_str().expect("hex"));
        conns.entry(conn).or_default().chunks.push((dir, bytes));
    }
    conns
}

/// Every `raw/*.jsonl`, sorted, with its name (`fence_hash.0`).
fn logs() -> Vec<(String, PathBuf)> {
    let dir = captures_dir().join("raw");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.expect("an entry").path();
            let name = p.file_name()?.to_str()?.strip_suffix(".jsonl")?.to_owned();
            Some((name, p))
        })
        .collect();
    v.sort();
    assert!(v.len() >= 20, "the captures are missing: {}", dir.display());
    v
}

/// Feeds `pieces` in order and returns every message; panics on an error.
fn run<'a>(pieces: impl IntoIterator<Item = (Direction, &'a [u8])>, what: &str) -> Conversation {
    let mut c = Conversation::new(Limits::DEFAULT);
    for (dir, bytes) in pieces {
        if let Err(e) = c.feed(dir, bytes) {
            panic!("{what}: {e}");
        }
    }
    c
}

fn drain(c: &mut Conversation) -> Vec<Message> {
    std::iter::from_fn(|| c.poll()).collect()
}

fn decode_whole(conn: &Conn, what: &str) -> Vec<Message> {
    let mut c = run(conn.chunks.iter().map(|(d, b)| (*d, b.as_slice())), what);
    assert!(c.incomplete().is_empty(), "{what}: {:?}", c.incomplete());
    drain(&mut c)
}

/// The bytes `m` re-encodes to.
fn encode(m: &Message) -> Vec<u8> {
    match &m.item {
        Item::Connect(c) => c.encode().expect("encode a connect message"),
        Item::ClientReply(r) => r.encode().to_vec(),
        Item::ToolReply(r) => r.encode().expect("encode a tool reply"),
        Item::Frame { frame, .. } => frame.encode().expect("encode a frame"),
    }
}

#[test]
fn every_captured_message_re_encodes_byte_for_byte_and_every_byte_is_accounted_for() {
    let mut messages = 0;
    for (name, path) in logs() {
        for (id, conn) in load(&path) {
            let what = format!("{name} conn {id}");
            let msgs = decode_whole(&conn, &what);
            for dir in [Direction::ClientToServer, Direction::ServerToClient] {
                let stream = conn.stream(dir);
                let mut at = 0;
                for m in msgs.iter().filter(|m| m.dir == dir) {
                    assert_eq!(m.offset, at, "{what} {dir}: messages are contiguous");
                    let bytes = &stream[m.offset..m.offset + m.len];
                    assert_eq!(
                        encode(m),
                        bytes,
                        "{what} {dir} message at byte {}",
                        m.offset
                    );
                    at += m.len;
                    messages += 1;
                }
                assert_eq!(at, stream.len(), "{what} {dir}: every byte in a message");
            }
            // Every capture is of launched clients: the connect message comes first
            // and the server's 8-byte reply.
            assert!(matches!(msgs[0].item, Item::Connect(_)), "{what}");
            assert!(
                msgs.iter().any(|m| matches!(m.item, Item::ClientReply(_))),
                "{what}"
            );
        }
    }
    assert!(messages > 350, "only {messages} messages");
}

#[test]
fn every_captured_payload_decodes_into_a_typed_message_that_re_encodes() {
    let mut typed = 0;
    for (name, path) in logs() {
        for (id, conn) in load(&path) {
            let what = format!("{name} conn {id}");
            let mut c = run(conn.chunks.iter().map(|(d, b)| (*d, b.as_slice())), &what);
            let codec = c.codec().cloned().expect("a codec");
            for m in drain(&mut c) {
                let Item::Frame { frame, kind } = m.item else {
                    continue;
                };
                let p = &frame.payload;
                let at = |e: pmix_wire::WireError| {
                    format!("{what} {} frame at byte {}: {e}", m.dir.short(), m.offset)
                };
                let back = match kind {
                    FrameKind::Request(cmd) => {
                        let r =
                            msg::decode_request(p, &codec).unwrap_or_else(|e| panic!("{}", at(e)));
                        assert_eq!(r.command(), cmd, "{what}");
                        assert!(
                            !matches!(r, msg::Request::Raw { .. }),
                            "{what}: raw {cmd:?}"
                        );
                        r.encode(&codec)
                    }
                    FrameKind::Reply(cmd) => {
                        let r = msg::decode_reply(cmd, p, &codec)
                            .unwrap_or_else(|e| panic!("{}", at(e)));
                        assert!(!matches!(r, msg::Reply::Raw { .. }), "{what}: raw {cmd:?}");
                        r.encode(&codec)
                    }
                    FrameKind::Event => msg::decode_event(p, &codec)
                        .unwrap_or_else(|e| panic!("{}", at(e)))
                        .encode(&codec),
                    FrameKind::Iof => msg::decode_iof(p, &codec)
                        .unwrap_or_else(|e| panic!("{}", at(e)))
                        .encode(&codec),
                    other => panic!("{what}: a {other:?} frame in a capture"),
                };
                assert_eq!(
                    &back.expect("re-encode"),
                    p,
                    "{what} frame at byte {}",
                    m.offset
                );
                typed += 1;
            }
        }
    }
    assert!(typed > 300, "only {typed} typed payloads");
}

/// The classification `pmixdecode.py` wrote into a capture's `.txt`, per log, as
/// one line per message: `conn dir what`.
fn oracle(txt: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut log = String::new();
    let mut lines = txt.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("log ") {
            log = rest
                .split_whitespace()
                .next()
                .and_then(|s| s.strip_suffix(".jsonl"))
                .expect("a log name")
                .to_owned();
            continue;
        }
        if !line.starts_with("[t=") || !line.contains(" conn ") {
            continue;
        }
        let after = line.split(" conn ").nth(1).expect("conn");
        let Some((conn, rest)) = after.split_once(' ') else {
            continue; // "closed conn N"
        };
        let (dir, rest) = if let Some(r) = rest.strip_prefix("client -> server  ") {
            ("C2S", r)
        } else if let Some(r) = rest.strip_prefix("server -> client  ") {
            ("S2C", r)
        } else {
            continue; // eof / closed lines
        };
        let what = if rest.starts_with("HANDSHAKE REPLY") {
            "reply8".to_owned()
        } else if rest.starts_with("HANDSHAKE") {
            "connect".to_owned()
        } else if rest.starts_with("tag 0 ") {
            "event".to_owned()
        } else if rest.starts_with("tag 2 ") {
            "iof".to_owned()
        } else if let Some((tag, name)) = rest
            .strip_prefix("tag ")
            .and_then(|r| r.split_once(" = reply to "))
        {
            let name = name.split(',').next().expect("a name");
            format!("reply {tag} {}", name.replace('_', ""))
        } else if let Some(r) = rest.strip_prefix("tag ") {
            let tag = r.split(',').next().expect("a tag");
            // The command is on a following line.
            let cmd = loop {
                let l = lines.next().expect("the command line");
                if let Some(c) = l.split("cmd (COMMAND x1) '").nth(1) {
                    let name = c
                        .split('(')
                        .nth(1)
                        .expect("(")
                        .split(')')
                        .next()
                        .expect(")");
                    break name.replace('_', "");
                }
            };
            format!("req {tag} {cmd}")
        } else {
            panic!("an unknown line: {line}");
        };
        out.entry(format!("{log} conn {conn} {dir}"))
            .or_default()
            .push(what);
    }
    out
}

fn ours(m: &Message) -> String {
    let name = |c: Command| format!("{c:?}").to_uppercase();
    match &m.item {
        Item::Connect(_) => "connect".into(),
        Item::ClientReply(_) => "reply8".into(),
        Item::ToolReply(_) => "tool-reply".into(),
        Item::Frame { frame, kind } => match kind {
            FrameKind::Request(c) => format!("req {} {}", frame.header.tag, name(*c)),
            FrameKind::Reply(c) => format!("reply {} {}", frame.header.tag, name(*c)),
            FrameKind::Event => "event".into(),
            FrameKind::Iof => "iof".into(),
            FrameKind::Heartbeat => "heartbeat".into(),
            FrameKind::Unmatched => format!("unmatched {}", frame.header.tag),
        },
    }
}

#[test]
fn every_frame_is_classified_as_the_field_by_field_decodes_say() {
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in std::fs::read_dir(captures_dir()).expect("the captures") {
        let p = e.expect("an entry").path();
        if p.extension().is_some_and(|x| x == "txt") {
            expected.extend(oracle(&std::fs::read_to_string(&p).expect("a .txt")));
        }
    }
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, path) in logs() {
        for (id, conn) in load(&path) {
            for m in decode_whole(&conn, &name) {
                got.entry(format!("{name} conn {id} {}", m.dir.short()))
                    .or_default()
                    .push(ours(&m));
            }
        }
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (k, v) in &expected {
        assert_eq!(&got[k], v, "{k}");
    }
}

/// A small deterministic generator for split points (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

#[test]
fn any_chunking_of_the_streams_gives_the_same_messages() {
    for (name, path) in logs() {
        for (id, conn) in load(&path) {
            let what = format!("{name} conn {id}");
            let whole = decode_whole(&conn, &what);
            // One byte at a time, in the order the chunks arrived.
            let mut c = run(
                conn.chunks
                    .iter()
                    .flat_map(|(d, b)| b.chunks(1).map(move |p| (*d, p))),
                &what,
            );
            assert_eq!(drain(&mut c), whole, "{what}, one byte at a time");
            // Random splits of every chunk, draining as we go.
            for seed in 1..=8u64 {
                let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ id);
                let mut c = Conversation::new(Limits::DEFAULT);
                let mut got = Vec::new();
                for (dir, bytes) in &conn.chunks {
                    let mut rest = bytes.as_slice();
                    while !rest.is_empty() {
                        let n = 1 + rng.below(rest.len().min(64));
                        let (piece, tail) = rest.split_at(n);
                        c.feed(*dir, piece)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        got.extend(drain(&mut c));
                        rest = tail;
                    }
                }
                assert!(c.incomplete().is_empty(), "{what}");
                assert_eq!(got, whole, "{what}, seed {seed}");
            }
        }
    }
}

fn fence_hash_0() -> Conn {
    let mut conns = load(&captures_dir().join("raw/fence_hash.0.jsonl"));
    conns.remove(&0).expect("conn 0")
}

#[test]
fn the_connect_message_matches_protocol_3_1_field_by_field() {
    // docs/wire.md §3.1 and ANNOTATED.md §1: fence_hash rank 0.
    let c2s = fence_hash_0().stream(Direction::ClientToServer);
    assert_eq!(
        &c2s[..16],
        [
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x35, 0, 0, 0, 0, 0, 0, 0
        ],
        "pindex -1, tag ~0, nbytes 53 little-endian, padding"
    );
    let Decoded::Item { item: m, used } = ConnectMsg::decode(&c2s, &Limits::DEFAULT).unwrap()
    else {
        panic!("a whole connect message")
    };
    assert_eq!(used, 16 + 53);
    assert_eq!(m.psec, "native");
    assert_eq!(m.credential.len(), 8);
    assert_eq!(m.native_ids(), Some((0, 0)));
    assert_eq!(
        m.identity,
        Identity::Client {
            nspace: "58392577".into(),
            rank: 0
        }
    );
    assert_eq!(m.version.text, "4.2.2rc2");
    assert_eq!(m.bfrops, "v41");
    assert_eq!(m.buffer_type, BufferType::NonDescribed);
    assert_eq!(m.gds, "hash");
    assert!(m.trailer.stray_byte, "the ≤4.2.2 stray byte");
    assert!(m.trailer.info.is_empty());
    assert_eq!(m.encode().unwrap(), &c2s[..used]);
}

#[test]
fn the_frames_of_annotated_md_have_its_header_fields() {
    let conn = fence_hash_0();
    let s2c = conn.stream(Direction::ServerToClient);
    // ANNOTATED.md §2: status 0, peer index 1.
    assert_eq!(
        ClientReply::decode(&s2c),
        Decoded::Item {
            item: ClientReply {
                status: 0,
                index: 1
            },
            used: 8
        }
    );
    let dec = FrameDecoder::new(Limits::DEFAULT);
    let headers = |bytes: &[u8], mut at: usize| {
        let mut v = Vec::new();
        while let Ok(Decoded::Item { item, used }) = dec.decode(&bytes[at..]) {
            assert_eq!(
                FrameHeader::decode(&bytes[at..], &Limits::DEFAULT),
                Ok(item.header)
            );
            v.push(item);
            at += used;
        }
        v
    };
    let c2s = conn.stream(Direction::ClientToServer);
    let req = headers(&c2s, 69);
    let h = |pindex, tag, nbytes| FrameHeader {
        pindex,
        tag,
        nbytes,
    };
    // §3 REQ, §5 COMMIT, §6 FENCE, §8 GET.
    assert_eq!(req[0].header, h(1, 101, 2));
    assert_eq!(req[0].payload, [0x02, 0x00]);
    assert_eq!(req[1].header, h(1, 102, 78));
    assert_eq!(&req[1].payload[..4], [0x02, 0x02, 0x02, 0x01]);
    assert_eq!(req[2].header, h(1, 103, 40));
    assert_eq!(req[3].header, h(1, 104, 28));
    assert_eq!(&c2s[69..69 + 16], h(1, 101, 2).encode());
    let rep = headers(&s2c, 8);
    // §4 REQ reply (931 bytes, pindex 0), §5 COMMIT reply, §7 FENCE reply, §9 GET reply.
    assert_eq!(rep[0].header, h(0, 101, 931));
    assert_eq!(&rep[0].payload[..11], b"\x02\x1258392577\0");
    assert_eq!(rep[1].header, h(0, 102, 2));
    assert_eq!(rep[2].header, h(0, 103, 2));
    assert_eq!(rep[2].payload, [0x02, 0x00]);
    assert_eq!(rep[3].header, h(0, 104, 56));
    assert_eq!(&rep[3].payload[..4], [0x02, 0x00, 0x02, 0x34]);
}

#[test]
fn the_fully_described_capture_sets_the_connection_codec() {
    let conns = load(&captures_dir().join("raw/fence_fulldesc.0.jsonl"));
    let conn = conns.values().next().expect("a connection");
    let mut c = run(
        conn.chunks.iter().map(|(d, b)| (*d, b.as_slice())),
        "fulldesc",
    );
    assert_eq!(
        c.codec().map(|c| c.buffer_type),
        Some(BufferType::FullyDescribed)
    );
    let first_req = drain(&mut c)
        .into_iter()
        .find_map(|m| match m.item {
            Item::Frame { frame, kind } if m.dir == Direction::ClientToServer => {
                Some((frame, kind))
            }
            _ => None,
        })
        .expect("a request");
    // §5.2: the command byte 0 as `09 02 22 00`.
    assert_eq!(first_req.0.payload, [0x09, 0x02, 0x22, 0x00]);
    assert_eq!(first_req.1, FrameKind::Request(Command::Req));
}
