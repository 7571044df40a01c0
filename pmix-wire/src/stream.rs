//! One connection, both directions: bytes in any chunking to whole, classified
//! messages in order (docs/wire.md §3–4).
//!
//! A [`Conversation`] is fed each direction's bytes as they arrive
//! ([`Conversation::feed`]) and hands out whole [`Message`]s
//! ([`Conversation::poll`]), quinn-proto style: no I/O, no clock. What it yields, in
//! the order the bytes completed them:
//!
//! - client → server: the [`ConnectMsg`], then frames;
//! - server → client: the handshake reply — 8 bytes ([`ClientReply`]) for a launched
//!   client (type flag 0), a [`ToolReply`] for the other flags — then frames.
//!
//! Each frame is classified ([`FrameKind`]): a client's request (its [`Command`]
//! read from the first pack, its tag remembered until the reply), a reply (matched
//! to the request by tag; DEREGEVENTS gets none), an event (tag 0), forwarded I/O
//! (tag 2), a heartbeat (tag 1 from the client), or unmatched. The connect message
//! sets the [`Codec`] (buffer type and version) for everything after it; the
//! server's bytes wait until it is known, and the server bytes that waited are
//! decoded right after it, before any client byte that follows it (they arrived
//! before those bytes: the handshake reply comes right after the connect message,
//! and a waiting frame cannot be the reply to a request sent after it). So the
//! messages do not depend on how each direction's bytes are cut into feeds.
//!
//! This layer does not decode payloads into typed messages: hand a classified
//! frame's payload and the conversation's [`Conversation::codec`] to
//! `msg::decode_request` / `decode_reply` / `decode_event` / `decode_iof`.
//!
//! Errors name the direction and the byte offset from the start of that direction's
//! stream ([`StreamError`]). After an error the conversation is dead: the stream
//! cannot be resynchronised, and every later feed returns the same error.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;
use core::fmt;

use crate::buf::Reader;
use crate::error::{ErrorKind, WireError};
use crate::frame::{
    Decoded, Frame, FrameDecoder, HEADER_LEN, TAG_EVENT, TAG_HEARTBEAT, TAG_IOF, is_request_tag,
};
use crate::handshake::{ClientReply, ConnectMsg, PeerKind, ToolReply};
use crate::limits::Limits;
use crate::types::{Command, DataType};
use crate::version::Codec;

/// Which way bytes travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Client → server.
    ClientToServer,
    /// Server → client.
    ServerToClient,
}

impl Direction {
    /// `C2S` or `S2C`, as the capture logs write it.
    pub fn short(self) -> &'static str {
        match self {
            Direction::ClientToServer => "C2S",
            Direction::ServerToClient => "S2C",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::ClientToServer => "client -> server",
            Direction::ServerToClient => "server -> client",
        })
    }
}

/// What a frame is, from its direction, its tag and (for a request) its first pack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A client request of this command (tag ≥ 100).
    Request(Command),
    /// The server's reply to the earlier request of this command on the same tag.
    Reply(Command),
    /// An event the server pushes (tag 0, §7).
    Event,
    /// Forwarded I/O (tag 2, §6.13).
    Iof,
    /// A client heartbeat (tag 1).
    Heartbeat,
    /// Nothing it could be matched to: a server frame on a tag with no request
    /// outstanding, or a client frame on a reserved tag other than 1.
    Unmatched,
}

/// One whole message of a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// The client's connect message (boxed: it is ten times the size of the
    /// others, and there is one per connection).
    Connect(Box<ConnectMsg>),
    /// The server's 8-byte reply to a launched client.
    ClientReply(ClientReply),
    /// The server's reply to a tool, launcher or singleton.
    ToolReply(ToolReply),
    /// A frame and what it is.
    Frame {
        /// The frame.
        frame: Frame,
        /// What it is.
        kind: FrameKind,
    },
}

/// A message, where it was in its direction's stream, and how long it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Which way it went.
    pub dir: Direction,
    /// Its first byte's offset from the start of its direction's stream.
    pub offset: usize,
    /// Its length in bytes (header included).
    pub len: usize,
    /// The message.
    pub item: Item,
}

/// A decoding error in one direction of a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError {
    /// The direction whose bytes are at fault.
    pub dir: Direction,
    /// The error; its offset counts from the start of that direction's stream.
    pub error: WireError,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.dir.short(), self.error)
    }
}

impl core::error::Error for StreamError {}

/// A message cut short: the bytes left in one direction when its stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incomplete {
    /// The direction.
    pub dir: Direction,
    /// The offset of the message's first byte in that direction's stream.
    pub offset: usize,
    /// How many of its bytes arrived.
    pub have: usize,
    /// How many more it needed: exact once its length field arrived, else the
    /// bytes missing up to the end of that field's header.
    pub need: usize,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: a message cut short at byte {}: {} bytes arrived, {} more needed",
            self.dir.short(),
            self.offset,
            self.have,
            self.need
        )
    }
}

/// One direction's undecoded bytes.
#[derive(Clone, Debug, Default)]
struct Half {
    /// Bytes received and not yet part of a whole message.
    buf: Vec<u8>,
    /// The stream offset of `buf[0]`.
    base: usize,
    /// What the last decode attempt said was missing (0: nothing pending).
    need: usize,
    /// Whether the handshake part of this direction is behind us.
    framed: bool,
}

/// One connection, both directions (see the module docs).
#[derive(Clone, Debug)]
pub struct Conversation {
    limits: Limits,
    c2s: Half,
    s2c: Half,
    connect: Option<ConnectMsg>,
    codec: Option<Codec>,
    pending: BTreeMap<u32, Command>,
    out: VecDeque<Message>,
    failed: Option<StreamError>,
}

impl Conversation {
    /// A conversation that has seen nothing yet, decoding with `limits`.
    pub fn new(limits: Limits) -> Self {
        Conversation {
            limits,
            c2s: Half::default(),
            s2c: Half::default(),
            connect: None,
            codec: None,
            pending: BTreeMap::new(),
            out: VecDeque::new(),
            failed: None,
        }
    }

    /// A conversation whose client has sent `connect` (its bytes not fed here): for
    /// a client's own side, which knows what it sent and needs the server's reply
    /// decoded in the right form. Client → server offsets then count from the end
    /// of the connect message, as if it had been fed.
    ///
    /// # Errors
    /// As [`ConnectMsg::codec`] (a bfrops module other than `v41`), or
    /// [`ErrorKind::Unencodable`] when `connect` cannot be encoded.
    pub fn after_connect(connect: ConnectMsg, limits: Limits) -> Result<Self, WireError> {
        let len = connect.encode()?.len();
        let mut c = Conversation::new(limits);
        c.codec = Some(connect.codec(limits)?);
        c.connect = Some(connect);
        c.c2s.base = len;
        c.c2s.framed = true;
        Ok(c)
    }

    /// Takes `bytes` travelling in `dir` and decodes every message they complete;
    /// [`Conversation::poll`] hands them out.
    ///
    /// # Errors
    /// The first [`StreamError`] of the conversation, on this feed and every later
    /// one: a malformed handshake, frame header or request command, a length over
    /// the [`Limits`], an unsupported version or bfrops module.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> Result<(), StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.half(dir).buf.extend_from_slice(bytes);
        // The server bytes the connect message unblocks are drained as soon as it
        // is decoded (in `drain`), before the client bytes after it.
        let r = self.drain(dir);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    /// The next whole message, oldest first; `None` when every decoded message has
    /// been handed out.
    pub fn poll(&mut self) -> Option<Message> {
        self.out.pop_front()
    }

    /// The client's connect message, once decoded.
    pub fn connect(&self) -> Option<&ConnectMsg> {
        self.connect.as_ref()
    }

    /// The settings every frame payload of this connection is decoded with, once
    /// the connect message is decoded.
    pub fn codec(&self) -> Option<&Codec> {
        self.codec.as_ref()
    }

    /// The requests still waiting for a reply: tag and command, by tag.
    pub fn outstanding(&self) -> impl Iterator<Item = (u32, Command)> + '_ {
        self.pending.iter().map(|(&t, &c)| (t, c))
    }

    /// How many bytes of `dir` have been received in all.
    pub fn received(&self, dir: Direction) -> usize {
        let h = match dir {
            Direction::ClientToServer => &self.c2s,
            Direction::ServerToClient => &self.s2c,
        };
        h.base + h.buf.len()
    }

    /// The messages cut short if both streams ended now: for each direction holding
    /// bytes that are not a whole message, where that message starts, how much of
    /// it arrived and how much more it needed. Empty when every byte so far belongs
    /// to a whole message.
    pub fn incomplete(&self) -> Vec<Incomplete> {
        [
            (Direction::ClientToServer, &self.c2s),
            (Direction::ServerToClient, &self.s2c),
        ]
        .into_iter()
        .filter(|(_, h)| !h.buf.is_empty())
        .map(|(dir, h)| Incomplete {
            dir,
            offset: h.base,
            have: h.buf.len(),
            need: h.need.max(1),
        })
        .collect()
    }

    fn half(&mut self, dir: Direction) -> &mut Half {
        match dir {
            Direction::ClientToServer => &mut self.c2s,
            Direction::ServerToClient => &mut self.s2c,
        }
    }

    /// Decodes every whole message at the front of `dir`'s buffer.
    fn drain(&mut self, dir: Direction) -> Result<(), StreamError> {
        let mut used_total = 0;
        let result = loop {
            let (base, framed) = {
                let h = self.half(dir);
                (h.base + used_total, h.framed)
            };
            let step = {
                let h = match dir {
                    Direction::ClientToServer => &self.c2s,
                    Direction::ServerToClient => &self.s2c,
                };
                let rest = h.buf.get(used_total..).unwrap_or_default();
                if rest.is_empty() {
                    break Ok(());
                }
                self.step(dir, framed, rest)
            };
            match step {
                Err(error) => {
                    break Err(StreamError {
                        dir,
                        error: error.shifted(base),
                    });
                }
                Ok(Step::Blocked) => {
                    self.half(dir).need = 0;
                    break Ok(());
                }
                Ok(Step::NeedMore(n)) => {
                    self.half(dir).need = n;
                    break Ok(());
                }
                Ok(Step::Item(item, used)) => {
                    let is_connect = matches!(item, Item::Connect(_));
                    let kind = match item {
                        Item::Frame { frame, .. } => {
                            let kind = self.classify(dir, &frame).map_err(|error| StreamError {
                                dir,
                                error: error.shifted(base + HEADER_LEN),
                            });
                            match kind {
                                Ok(kind) => Item::Frame { frame, kind },
                                Err(e) => break Err(e),
                            }
                        }
                        Item::Connect(c) => {
                            match c.codec(self.limits) {
                                Ok(codec) => self.codec = Some(codec),
                                Err(error) => {
                                    break Err(StreamError {
                                        dir,
                                        error: error.shifted(base),
                                    });
                                }
                            }
                            self.connect = Some((*c).clone());
                            self.half(dir).framed = true;
                            Item::Connect(c)
                        }
                        other => {
                            self.half(dir).framed = true;
                            other
                        }
                    };
                    self.out.push_back(Message {
                        dir,
                        offset: base,
                        len: used,
                        item: kind,
                    });
                    used_total += used;
                    self.half(dir).need = 0;
                    // The server's bytes waited for the connect message: they all
                    // arrived before the client bytes after it, so they come now.
                    if is_connect && let Err(e) = self.drain(Direction::ServerToClient) {
                        break Err(e);
                    }
                }
            }
        };
        let h = self.half(dir);
        h.buf.drain(..used_total);
        h.base += used_total;
        result
    }

    /// One decode attempt at the front of `rest`.
    fn step(&self, dir: Direction, framed: bool, rest: &[u8]) -> Result<Step, WireError> {
        if framed {
            return Ok(match FrameDecoder::new(self.limits).decode(rest)? {
                Decoded::Item { item, used } => Step::Item(
                    Item::Frame {
                        frame: item,
                        kind: FrameKind::Unmatched,
                    },
                    used,
                ),
                Decoded::NeedMore(n) => Step::NeedMore(n),
            });
        }
        Ok(match dir {
            Direction::ClientToServer => match ConnectMsg::decode(rest, &self.limits)? {
                Decoded::Item { item, used } => Step::Item(Item::Connect(Box::new(item)), used),
                Decoded::NeedMore(n) => Step::NeedMore(n),
            },
            Direction::ServerToClient => {
                let Some(connect) = &self.connect else {
                    return Ok(Step::Blocked);
                };
                let kind = connect.identity.kind();
                if kind == PeerKind::Client {
                    match ClientReply::decode(rest) {
                        Decoded::Item { item, used } => Step::Item(Item::ClientReply(item), used),
                        Decoded::NeedMore(n) => Step::NeedMore(n),
                    }
                } else {
                    match ToolReply::decode(rest, kind.needs_identifier())? {
                        Decoded::Item { item, used } => Step::Item(Item::ToolReply(item), used),
                        Decoded::NeedMore(n) => Step::NeedMore(n),
                    }
                }
            }
        })
    }

    /// What `frame` is; remembers a request's tag. Offsets in errors count from the
    /// start of the payload.
    fn classify(&mut self, dir: Direction, frame: &Frame) -> Result<FrameKind, WireError> {
        let tag = frame.header.tag;
        Ok(match dir {
            Direction::ClientToServer if is_request_tag(tag) => {
                let codec = self.codec.as_ref().ok_or_else(|| {
                    WireError::new(
                        ErrorKind::Truncated {
                            what: "the connect message",
                        },
                        0,
                    )
                })?;
                let cmd = request_command(&frame.payload, codec)?;
                if cmd == Command::DeregEvents {
                    // One-way: a reply on this tag would be unmatched.
                    self.pending.remove(&tag);
                } else {
                    self.pending.insert(tag, cmd);
                }
                FrameKind::Request(cmd)
            }
            Direction::ClientToServer if tag == TAG_HEARTBEAT => FrameKind::Heartbeat,
            Direction::ClientToServer => FrameKind::Unmatched,
            Direction::ServerToClient if tag == TAG_EVENT => FrameKind::Event,
            Direction::ServerToClient if tag == TAG_IOF => FrameKind::Iof,
            Direction::ServerToClient => match self.pending.remove(&tag) {
                Some(cmd) => FrameKind::Reply(cmd),
                None => FrameKind::Unmatched,
            },
        })
    }
}

/// What one decode attempt gave.
enum Step {
    Item(Item, usize),
    NeedMore(usize),
    /// The server's bytes wait for the client's connect message.
    Blocked,
}

/// The command of a request payload: its first pack, one COMMAND byte (§6).
/// Offsets in errors count from the start of the payload.
///
/// # Errors
/// [`ErrorKind::Truncated`], [`ErrorKind::BadCount`] for a pack of other than one,
/// [`ErrorKind::UnexpectedType`] (fully described), [`ErrorKind::BadValue`] for a
/// byte no version uses as a command.
pub fn request_command(payload: &[u8], codec: &Codec) -> Result<Command, WireError> {
    let mut r = Reader::new(payload, codec.buffer_type, codec.limits);
    let at = r.offset();
    let n = r.pack_header(DataType::Command, "the command")?;
    if n != 1 {
        return Err(r.error_at(
            ErrorKind::BadCount {
                what: "the command",
                found: n as i64,
            },
            at,
        ));
    }
    let at = r.offset();
    let b = r.u8("the command")?;
    Command::from_code(b).ok_or_else(|| {
        r.error_at(
            ErrorKind::BadValue {
                what: "the command",
                why: "a byte no PMIx version uses as a command",
            },
            at,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONNECT: &str = "ffffffffffffffff35000000000000006e6174697665000000000800000000000000000035383339323537370000000000342e322e32726332007634310001686173680000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn frame(tag: u32, payload: &[u8]) -> Vec<u8> {
        Frame::new(0, tag, payload.to_vec())
            .unwrap()
            .encode()
            .unwrap()
    }

    fn all(c: &mut Conversation) -> Vec<Message> {
        core::iter::from_fn(|| c.poll()).collect()
    }

    #[test]
    fn a_conversation_yields_handshake_then_matched_frames() {
        let mut c = Conversation::new(Limits::DEFAULT);
        c.feed(Direction::ClientToServer, &hex(CONNECT)).unwrap();
        c.feed(Direction::ServerToClient, &[0, 0, 0, 0, 0, 0, 0, 1])
            .unwrap();
        c.feed(Direction::ClientToServer, &frame(101, &[2, 0]))
            .unwrap();
        c.feed(Direction::ClientToServer, &frame(102, &[2, 14, 2, 0]))
            .unwrap();
        c.feed(Direction::ServerToClient, &frame(0, &[2, 12]))
            .unwrap();
        c.feed(Direction::ServerToClient, &frame(101, &[2, 0]))
            .unwrap();
        c.feed(Direction::ServerToClient, &frame(102, &[2, 0]))
            .unwrap();
        let kinds: Vec<_> = all(&mut c)
            .into_iter()
            .map(|m| match m.item {
                Item::Frame { kind, .. } => Some(kind),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            [
                None,
                None,
                Some(FrameKind::Request(Command::Req)),
                Some(FrameKind::Request(Command::DeregEvents)),
                Some(FrameKind::Event),
                Some(FrameKind::Reply(Command::Req)),
                Some(FrameKind::Unmatched),
            ]
        );
        assert!(c.incomplete().is_empty());
    }

    #[test]
    fn server_bytes_wait_for_the_connect_message() {
        let mut c = Conversation::new(Limits::DEFAULT);
        c.feed(Direction::ServerToClient, &[0, 0, 0, 0, 0, 0, 0, 1])
            .unwrap();
        assert!(c.poll().is_none());
        c.feed(Direction::ClientToServer, &hex(CONNECT)).unwrap();
        let m: Vec<_> = all(&mut c);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].dir, Direction::ServerToClient);
    }

    /// What each message is, `None` for the handshake messages.
    fn kinds(m: &[Message]) -> Vec<(Direction, Option<FrameKind>)> {
        m.iter()
            .map(|m| match m.item {
                Item::Frame { kind, .. } => (m.dir, Some(kind)),
                _ => (m.dir, None),
            })
            .collect()
    }

    #[test]
    fn server_bytes_that_waited_for_the_connect_message_come_right_after_it_in_any_chunking() {
        use Direction::{ClientToServer as C2S, ServerToClient as S2C};
        let mut s2c = alloc::vec![0, 0, 0, 0, 0, 0, 0, 1];
        s2c.extend(frame(101, &[2, 0]));
        let mut c2s = hex(CONNECT);
        c2s.extend(frame(101, &[2, 0]));
        // The server's frame on tag 101 arrived before the client's request on that
        // tag: it cannot be its reply.
        let want = [
            (C2S, None),
            (S2C, None),
            (S2C, Some(FrameKind::Unmatched)),
            (C2S, Some(FrameKind::Request(Command::Req))),
        ];
        for cut in 0..=c2s.len() {
            let mut c = Conversation::new(Limits::DEFAULT);
            c.feed(S2C, &s2c).unwrap();
            let (a, b) = c2s.split_at(cut);
            c.feed(C2S, a).unwrap();
            c.feed(C2S, b).unwrap();
            let m = all(&mut c);
            assert_eq!(kinds(&m), want, "cut at {cut}");
            assert!(c.outstanding().eq([(101, Command::Req)]));
        }
        // An error after the connect message in the same feed: the handshake reply
        // and the waiting frame were still yielded, as when fed apart.
        let mut bad = hex(CONNECT);
        let mut f = frame(101, &[2, 0]);
        f[13] = 1;
        bad.extend(f);
        for cut in [69, bad.len()] {
            let mut c = Conversation::new(Limits::DEFAULT);
            c.feed(S2C, &s2c).unwrap();
            let (a, b) = bad.split_at(cut);
            let e = c.feed(C2S, a).and_then(|()| c.feed(C2S, b)).unwrap_err();
            assert_eq!((e.dir, e.error.offset), (C2S, 69 + 12));
            assert_eq!(kinds(&all(&mut c)), want[..3], "cut at {cut}");
        }
    }

    #[test]
    fn a_client_that_sent_its_connect_message_decodes_the_reply_and_frames() {
        let connect = match ConnectMsg::decode(&hex(CONNECT), &Limits::DEFAULT).unwrap() {
            Decoded::Item { item, .. } => item,
            other => panic!("{other:?}"),
        };
        let mut c = Conversation::after_connect(connect, Limits::DEFAULT).unwrap();
        c.feed(Direction::ClientToServer, &frame(101, &[2, 0]))
            .unwrap();
        c.feed(Direction::ServerToClient, &[0, 0, 0, 0, 0, 0, 0, 1])
            .unwrap();
        c.feed(Direction::ServerToClient, &frame(101, &[2, 0]))
            .unwrap();
        let m = all(&mut c);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].offset, 69);
        assert!(matches!(
            m[2].item,
            Item::Frame {
                kind: FrameKind::Reply(Command::Req),
                ..
            }
        ));
    }

    #[test]
    fn a_cut_message_is_reported_with_its_offset() {
        let mut c = Conversation::new(Limits::DEFAULT);
        let mut b = hex(CONNECT);
        b.extend_from_slice(&frame(101, &[2, 0])[..10]);
        c.feed(Direction::ClientToServer, &b).unwrap();
        assert_eq!(
            c.incomplete(),
            [Incomplete {
                dir: Direction::ClientToServer,
                offset: 69,
                have: 10,
                need: 6
            }]
        );
    }

    #[test]
    fn errors_name_the_stream_offset_and_stick() {
        let mut c = Conversation::new(Limits::DEFAULT);
        c.feed(Direction::ClientToServer, &hex(CONNECT)).unwrap();
        let mut f = frame(101, &[2, 0]);
        f[13] = 1;
        let e = c.feed(Direction::ClientToServer, &f).unwrap_err();
        assert_eq!(e.dir, Direction::ClientToServer);
        assert_eq!(e.error.offset, 69 + 12);
        assert_eq!(c.feed(Direction::ServerToClient, &[0]), Err(e));
        // An unknown command, reported at its byte.
        let mut c = Conversation::new(Limits::DEFAULT);
        c.feed(Direction::ClientToServer, &hex(CONNECT)).unwrap();
        let e = c
            .feed(Direction::ClientToServer, &frame(101, &[2, 99]))
            .unwrap_err();
        assert_eq!(e.error.offset, 69 + 16 + 1);
        assert!(alloc::format!("{e}").contains("byte 86"));
    }

    mod props {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;

        fn c2s_stream() -> Vec<u8> {
            let mut b = hex(CONNECT);
            b.extend(frame(101, &[2, 0]));
            b.extend(frame(102, &[2, 14, 2, 0]));
            b
        }

        fn bytes_of(m: &Message) -> Vec<u8> {
            match &m.item {
                Item::Connect(c) => c.encode().unwrap(),
                Item::ClientReply(r) => r.encode().to_vec(),
                Item::ToolReply(r) => r.encode().unwrap(),
                Item::Frame { frame, .. } => frame.encode().unwrap(),
            }
        }

        proptest! {
            #[test]
            fn arbitrary_bytes_in_any_chunking_never_panic(
                c2s in vec(any::<u8>(), 0..300),
                s2c in vec(any::<u8>(), 0..300),
                cut in 0usize..300,
            ) {
                let mut c = Conversation::new(Limits::DEFAULT);
                let (a, b) = c2s.split_at(cut.min(c2s.len()));
                let _ = c.feed(Direction::ClientToServer, a);
                let _ = c.feed(Direction::ServerToClient, &s2c);
                let _ = c.feed(Direction::ClientToServer, b);
                while c.poll().is_some() {}
                let _ = c.incomplete();
            }

            #[test]
            fn a_mutated_stream_is_refused_or_every_message_re_encodes_to_its_bytes(
                at in 0usize..107,
                byte in any::<u8>(),
                cut in 0usize..107,
            ) {
                let mut b = c2s_stream();
                b[at] = byte;
                let mut c = Conversation::new(Limits::DEFAULT);
                let (x, y) = b.split_at(cut);
                if c.feed(Direction::ClientToServer, x).is_ok()
                    && c.feed(Direction::ClientToServer, y).is_ok()
                {
                    let mut end = 0;
                    while let Some(m) = c.poll() {
                        prop_assert_eq!(m.offset, end);
                        prop_assert_eq!(bytes_of(&m), &b[m.offset..m.offset + m.len]);
                        end += m.len;
                    }
                    let rest = b.len() - end;
                    prop_assert_eq!(c.incomplete().iter().map(|i| i.have).sum::<usize>(), rest);
                }
            }
        }
    }
}
