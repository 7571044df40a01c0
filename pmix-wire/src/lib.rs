//! # pmix-wire
//!
//! The OpenPMIx 4.2 client ⇄ server wire protocol as data: `#![no_std]` with
//! `alloc`, no I/O, no `unsafe`. The server and the client of the `pmix` runtime
//! share it; nothing else in the workspace parses or packs protocol bytes.
//!
//! The byte-level specification is docs/wire.md (written from OpenPMIx 4.2.2's sources
//! and checked against real traffic, a copy of which is in `testdata/wire-captures/`).
//!
//! **Layers**, bottom up:
//! - [`buf`]: bfrops v4.1 buffers, [`Reader`] and [`Writer`]: flex128 varints,
//!   zigzag integers, strings, type tags, top-level packs, in either
//!   [`BufferType`]. Every count and length is checked against [`Limits`] before
//!   anything is allocated, every error names its byte offset ([`WireError`]), and
//!   only minimal encodings are accepted, so what decodes re-encodes to the same
//!   bytes.
//! - [`value`]: every element type of docs/wire.md §5.4 ([`Value`], [`Info`],
//!   [`Proc`], [`WStr`], the scalar newtypes …), each an [`Element`].
//! - [`handshake`] and [`frame`]: the connect message and the server's replies
//!   (§3), the 16-byte frame header and tags (§4), with an incremental
//!   [`FrameDecoder`].
//! - [`msg`]: one typed message per command, request ([`Request`]) and reply
//!   ([`Reply`], including the lone-STATUS form every command can get), the tag-0
//!   [`Event`] and tag-2 [`Iof`] (§6–7). The peer's [`Version`] in a [`Codec`]
//!   selects the group layouts of 4.2.0–4.2.3 or 4.2.4+.
//! - [`stream`]: a [`Conversation`] fed either direction's bytes in any chunking;
//!   it yields the handshake, then frames classified as requests, replies (matched
//!   to their request by tag), events or I/O, ready for [`msg`].
//! - [`keys`]: every attribute key, once (`PMIX_JOB_SIZE` is [`keys::JOB_SIZE`]).
//!
//! Beside the protocol, [`nodestore`]: the layout of the node store's segments
//! (docs/serving.md §5), one namespace's data written once by a server and read in
//! place by every client of its node, with its writer and its reader; values are
//! stored as [`value`] encodes them.
//!
//! ```
//! use pmix_wire::{Codec, Request, decode_request};
//! // FENCENB over {nspace "ns", WILDCARD} with no directives, as a 4.2.2 client sends it.
//! let bytes = [2, 3, 2, 1, 2, 6, b'n', b's', 0, 0xfe, 0xff, 0xff, 0xff, 0x0f, 2, 0];
//! let codec = Codec::v422();
//! let Request::FenceNb(f) = decode_request(&bytes, &codec).unwrap() else { panic!() };
//! assert_eq!(f.procs[0].nspace, "ns");
//! assert_eq!(Request::FenceNb(f).encode(&codec).unwrap(), bytes);
//! ```
//!
//! **Not here.** Sockets, timers and decisions (what a server answers) belong to the
//! `pmix` runtime; compressed strings stay compressed (no zlib in a `no_std` codec).

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod buf;
pub mod ds21;
pub mod error;
pub mod frame;
pub mod ft;
pub mod handshake;
pub mod keys;
pub mod limits;
pub mod modex;
pub mod msg;
pub mod nodestore;
pub mod stream;
pub mod types;
pub mod value;
pub mod version;

pub use buf::{Element, Reader, Writer};
pub use error::{ErrorKind, WireError};
pub use limits::Limits;
pub use types::{BufferType, Command, DataType};
pub use version::{Codec, GroupLayout, Version};

// Re-exports of `value` (its owner adds them here).
pub use value::{
    AllocDirective, App, Buffer, ByteObject, Coord, DataArray, DataRange, DeviceDist, Endpoint,
    Envar, Geometry, Info, InfoFlags, IofChannel, Kval, Pdata, Pid, Proc, ProcInfo, Query, Rank,
    Regattr, Regex, Scope, Size, Status, Time, Timeval, Topo, Uint32, Value, WStr,
};

// Re-exports of `handshake`, `frame` and `stream` (their owner adds them here).
pub use frame::{Decoded, Frame, FrameDecoder, FrameHeader};
pub use handshake::{ClientReply, ConnectMsg, Identity, PeerKind, ToolReply, Trailer};
pub use stream::{
    Conversation, Direction, FrameKind, Incomplete, Item, Message, StreamError, request_command,
};

// Re-exports of `msg` (its owner adds them here).
pub use msg::{Event, Iof, Reply, Request, decode_event, decode_iof, decode_reply, decode_request};
