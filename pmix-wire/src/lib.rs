//! # pmix-wire
//!
//! The OpenPMIx 4.2 client ⇄ server wire protocol as data: `#![no_std]` with
//! `alloc`, no I/O, no `unsafe`. The server and the client of the `pmix` runtime
//! share it; nothing else in the workspace parses or packs protocol bytes.
//!
//! The byte-level specification is PROTOCOL.md (written from OpenPMIx 4.2.2's sources
//! and checked against real traffic, a copy of which is in `testdata/wire-captures/`).
//!
//! **Layers.**
//! - [`buf`]: bfrops v4.1 buffers, [`Reader`] and [`Writer`]: flex128 varints,
//!   zigzag integers, strings, type tags, top-level packs, in either
//!   [`BufferType`]. Every count and length is checked against [`Limits`] before
//!   anything is allocated, every error names its byte offset ([`WireError`]), and
//!   only minimal encodings are accepted, so what decodes re-encodes to the same
//!   bytes.
//!
//! **Status.** Work in progress (issue 11): the buffer layer is complete; the value
//! types, the handshake, the frames, the typed messages and the incremental decoder
//! are being written.

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod buf;
pub mod error;
pub mod frame;
pub mod handshake;
pub mod limits;
pub mod msg;
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
pub use stream::{Conversation, Direction, FrameKind, Incomplete, Item, Message, StreamError};

// Re-exports of `msg` (its owner adds them here).
pub use msg::{Event, Iof, Reply, Request, decode_event, decode_iof, decode_reply, decode_request};
