//! Arbitrary bytes, in arbitrary chunkings, through every pmix-wire decoder: the
//! stream layer ([`Conversation`]) and the four message decoders
//! ([`decode_request`], [`decode_reply`], [`decode_event`], [`decode_iof`]).
//!
//! **Input.**
//!
//! ```text
//! byte 0      the command decode_reply is given for a record (index into
//!             Command::ALL, modulo its length)
//! byte 1      k = byte % 17: how many chunk-length bytes follow
//! k bytes     chunk lengths: a chunk is (byte + 1) bytes, the lengths used in turn
//!             and cycled; k = 0 feeds one byte at a time
//! the rest    records: a direction byte (bit 0: 0 client -> server, 1 server ->
//!             client), a big-endian u16 length, then that many bytes (fewer if the
//!             input ends first)
//! ```
//!
//! **Seeds** (`fuzz/corpus/wire_decode/seed-*`, from connection 0 of each
//! `testdata/wire-captures/raw/*.0.jsonl`): `seed-conv-NAME`, the whole
//! conversation, one record per captured chunk, in chunks of 64 and 7 bytes; and
//! `seed-{req,reply}CMD-NAME`, one record holding the first payload of each request
//! command, reply command and buffer type met, byte 0 naming the reply's command.
//!
//! **Checks.**
//!
//! 1. The records, each fed whole to a [`Conversation`] in order, and the same
//!    records cut into the chunks above (a chunk never spans two records, so the
//!    interleaving of the directions is the same) give the same messages, the same
//!    result (the same [`StreamError`] if any) and, without an error, the same cut
//!    messages ([`Conversation::incomplete`]).
//! 2. Every message the conversation yields re-encodes to exactly the bytes of its
//!    direction's stream at its offset, and consecutive messages are contiguous
//!    from byte 0.
//! 3. Every frame payload is decoded as what the conversation says it is (request,
//!    reply to its command, event, I/O) with the conversation's codec; whatever is
//!    accepted re-encodes to exactly the payload. A REQ reply's per-process blobs,
//!    whose values stay packed until asked for, are decoded too, and the reply
//!    rebuilt from their values re-encodes to the payload as well.
//! 4. Every record's bytes are decoded as a request, a reply to the command of
//!    byte 0, an event and forwarded I/O, with four codecs (both buffer types,
//!    4.2.2 and 4.2.4); whatever is accepted re-encodes to exactly the record's
//!    bytes.
//! 5. Nothing panics (overflow checks are on), and memory stays bounded: a
//!    counting allocator measures the peak of live heap bytes during each decode
//!    above what was live before it, which must stay under [`MEM_BASE`] +
//!    [`MEM_PER_BYTE`] × the input length (the [`Limits`] are checked before
//!    allocating, and no vector is reserved beyond the bytes left or
//!    [`pmix_wire::buf::MAX_PREALLOC`] elements, so a few bytes claiming a million
//!    elements, or arrays nested in arrays, must not allocate for them).
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use pmix_wire::stream::{Conversation, Direction, Incomplete, Item, Message, StreamError};
use pmix_wire::msg::{JobItem, ProcBlob};
use pmix_wire::{
    BufferType, Codec, Command, FrameKind, Limits, Reply, Version, decode_event, decode_iof,
    decode_reply, decode_request,
};

/// Live heap bytes allowed during one decode whatever the input.
const MEM_BASE: usize = 1 << 20;
/// Live heap bytes allowed per input byte during one decode. Every decoded element
/// takes at least one input byte and holds far less than this; what is reserved
/// before elements are read is at most one element per byte left and at most
/// [`pmix_wire::buf::MAX_PREALLOC`] elements per vector, for at most `max_depth`
/// vectors being filled at once (nested arrays no longer multiply it).
const MEM_PER_BYTE: usize = 512;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn add(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged;
// the counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (so from `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is `System.realloc`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            add(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and panics if the live heap grew by more than the bound for an input
/// of `input_len` bytes at any moment while it ran.
fn bounded<T>(input_len: usize, what: &str, f: impl FnOnce() -> T) -> T {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    let grew = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let bound = MEM_BASE + MEM_PER_BYTE * input_len;
    assert!(
        grew <= bound,
        "{what}: {grew} bytes live at the peak for a {input_len}-byte input (bound {bound})"
    );
    out
}

struct Input<'a> {
    reply_cmd: Command,
    chunks: Vec<usize>,
    records: Vec<(Direction, &'a [u8])>,
}

fn codec(described: bool, v424: bool) -> Codec {
    let mut c = Codec::v422();
    if described {
        c.buffer_type = BufferType::FullyDescribed;
    }
    if v424 {
        c.version = Version::parse("4.2.4", 0).expect("a version");
    }
    c
}

fn parse(data: &[u8]) -> Option<Input<'_>> {
    let (&cfg, rest) = data.split_first()?;
    let (&k, rest) = rest.split_first()?;
    let k = usize::from(k % 17).min(rest.len());
    let (lens, mut rest) = rest.split_at(k);
    let chunks = lens.iter().map(|&b| usize::from(b) + 1).collect();
    let mut records = Vec::new();
    while let [d, hi, lo, tail @ ..] = rest {
        let dir = if d & 1 == 0 {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        };
        let n = usize::from(u16::from_be_bytes([*hi, *lo])).min(tail.len());
        let (bytes, after) = tail.split_at(n);
        records.push((dir, bytes));
        rest = after;
    }
    let all = Command::ALL;
    Some(Input {
        reply_cmd: all[usize::from(cfg) % all.len()],
        chunks,
        records,
    })
}

/// What a conversation gave: every message, the first error, the cut messages.
type Outcome = (Vec<Message>, Result<(), StreamError>, Vec<Incomplete>);

fn converse<'a>(pieces: impl Iterator<Item = (Direction, &'a [u8])>) -> Outcome {
    let mut c = Conversation::new(Limits::DEFAULT);
    let mut msgs = Vec::new();
    let mut result = Ok(());
    for (dir, bytes) in pieces {
        result = c.feed(dir, bytes);
        msgs.extend(std::iter::from_fn(|| c.poll()));
        if result.is_err() {
            break;
        }
    }
    // After an error every feed repeats it and yields nothing.
    if let Err(e) = &result {
        assert_eq!(c.feed(Direction::ServerToClient, &[0]).as_ref(), Err(e));
        assert!(c.poll().is_none());
    }
    // What is still buffered after an error depends on how many bytes had arrived
    // when it was found: the cut messages are compared only without one.
    let cut = if result.is_ok() {
        c.incomplete()
    } else {
        Vec::new()
    };
    (msgs, result, cut)
}

/// `records` cut into chunks of the lengths of `lens`, cycled (1 byte when empty).
fn chunked<'a>(
    records: &'a [(Direction, &'a [u8])],
    lens: &'a [usize],
) -> impl Iterator<Item = (Direction, &'a [u8])> + 'a {
    let mut i = 0;
    records.iter().flat_map(move |&(dir, mut bytes)| {
        std::iter::from_fn(move || {
            if bytes.is_empty() {
                return None;
            }
            let n = if lens.is_empty() {
                1
            } else {
                lens[i % lens.len()]
            };
            i += 1;
            let (a, b) = bytes.split_at(n.min(bytes.len()));
            bytes = b;
            Some((dir, a))
        })
    })
}

fn encode_message(m: &Message) -> Vec<u8> {
    match &m.item {
        Item::Connect(c) => c.encode().expect("a decoded connect message encodes"),
        Item::ClientReply(r) => r.encode().to_vec(),
        Item::ToolReply(r) => r.encode().expect("a decoded tool reply encodes"),
        Item::Frame { frame, .. } => frame.encode().expect("a decoded frame encodes"),
    }
}

/// A REQ reply's per-process blobs keep their values packed: each is decoded here
/// (bounded like any decode), and when all decode, the reply rebuilt from the
/// decoded values re-encodes to exactly `payload` too.
fn pblob_values_re_encode(mut job: pmix_wire::msg::JobInfo, payload: &[u8], codec: &Codec) {
    let n = payload.len();
    let mut all = true;
    for item in &mut job.items {
        if let JobItem::Proc(p) = item {
            match bounded(n, "ProcBlob::kvals", || p.kvals().map(|k| k.into_owned())) {
                Ok(k) => *p = ProcBlob::new(p.rank, k),
                Err(_) => all = false,
            }
        }
    }
    if all {
        let again = Reply::Req(job).encode(codec).expect("decoded pblob values encode");
        assert_eq!(again, payload, "a REQ reply rebuilt from its pblobs' values");
    }
}

/// Decodes `payload` with each decoder and checks that what is accepted re-encodes
/// to exactly `payload`. `which` limits the decoders (`None`: all four).
fn decode_payload(payload: &[u8], codec: &Codec, which: Option<FrameKind>, reply_cmd: Command) {
    let n = payload.len();
    let all = which.is_none();
    if all || matches!(which, Some(FrameKind::Request(_))) {
        if let Ok(m) = bounded(n, "decode_request", || decode_request(payload, codec)) {
            if let Some(FrameKind::Request(cmd)) = which {
                assert_eq!(m.command(), cmd, "the request's command");
            }
            let again = m.encode(codec).expect("a decoded request encodes");
            assert_eq!(again, payload, "request {m:?} re-encodes to its bytes");
        }
    }
    let cmd = match which {
        Some(FrameKind::Reply(cmd)) => Some(cmd),
        None => Some(reply_cmd),
        _ => None,
    };
    if let Some(cmd) = cmd
        && let Ok(m) = bounded(n, "decode_reply", || decode_reply(cmd, payload, codec))
    {
        assert_eq!(m.command(), cmd, "the reply's command");
        let again = m.encode(codec).expect("a decoded reply encodes");
        assert_eq!(again, payload, "reply {m:?} re-encodes to its bytes");
        if let Reply::Req(job) = m {
            pblob_values_re_encode(job, payload, codec);
        }
    }
    if (all || which == Some(FrameKind::Event))
        && let Ok(m) = bounded(n, "decode_event", || decode_event(payload, codec))
    {
        let again = m.encode(codec).expect("a decoded event encodes");
        assert_eq!(again, payload, "event {m:?} re-encodes to its bytes");
    }
    if (all || which == Some(FrameKind::Iof))
        && let Ok(m) = bounded(n, "decode_iof", || decode_iof(payload, codec))
    {
        let again = m.encode(codec).expect("decoded I/O encodes");
        assert_eq!(again, payload, "I/O {m:?} re-encodes to its bytes");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = parse(data) else { return };
    let n = data.len();

    // 1. Whole records, then chunks: the same outcome.
    let whole = bounded(n, "the conversation", || {
        converse(input.records.iter().copied())
    });
    let cut = bounded(n, "the chunked conversation", || {
        converse(chunked(&input.records, &input.chunks))
    });
    assert_eq!(whole, cut, "chunks {:?}", input.chunks);

    // 2. Every message re-encodes to its bytes, contiguous from 0.
    let (msgs, _, _) = &whole;
    for dir in [Direction::ClientToServer, Direction::ServerToClient] {
        let stream: Vec<u8> = input
            .records
            .iter()
            .filter(|(d, _)| *d == dir)
            .flat_map(|(_, b)| b.iter().copied())
            .collect();
        let mut at = 0;
        for m in msgs.iter().filter(|m| m.dir == dir) {
            assert_eq!(m.offset, at, "{dir}: messages are contiguous");
            let end = m.offset + m.len;
            assert_eq!(
                encode_message(m),
                stream[m.offset..end],
                "{dir}: the message at byte {}",
                m.offset
            );
            at = end;
        }
    }

    // 3. Frame payloads as what the conversation says they are.
    let conv_codec = msgs.iter().find_map(|m| match &m.item {
        Item::Connect(c) => c.codec(Limits::DEFAULT).ok(),
        _ => None,
    });
    if let Some(codec) = &conv_codec {
        for m in msgs {
            if let Item::Frame { frame, kind } = &m.item
                && !matches!(kind, FrameKind::Heartbeat | FrameKind::Unmatched)
            {
                decode_payload(&frame.payload, codec, Some(*kind), input.reply_cmd);
            }
        }
    }

    // 4. Every record's bytes with every decoder and codec.
    for (_, bytes) in &input.records {
        for (d, v) in [(false, false), (false, true), (true, false), (true, true)] {
            decode_payload(bytes, &codec(d, v), None, input.reply_cmd);
        }
    }
});
