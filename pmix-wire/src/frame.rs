//! The 16-byte frame header, the tags, and the incremental frame decoder
//! (docs/wire.md §4).
//!
//! After the handshake every message in both directions is a [`FrameHeader`] in
//! network byte order — `pindex` (int32), `tag` (uint32), `nbytes` (uint32), four
//! bytes of padding that are always 0 — followed by exactly `nbytes` of payload.
//!
//! [`FrameDecoder`] has the shape of tokio-util's `Decoder` (docs/conventions.md rule 18): given
//! the bytes received so far it answers a whole [`Frame`] and how many bytes it used,
//! or how many more bytes it needs, or an error. It never consumes part of a frame,
//! and it checks `nbytes` against [`Limits::max_frame`] as soon as the header's first
//! twelve bytes are there, before it asks for (or anyone allocates) the payload.

use alloc::vec::Vec;

use crate::error::{ErrorKind, WireError};
use crate::limits::Limits;

/// The length of a frame header, in bytes.
pub const HEADER_LEN: usize = 16;

/// Tag 0: an event notification, server → client (docs/wire.md §7).
pub const TAG_EVENT: u32 = 0;
/// Tag 1: a heartbeat, client → server (only with `PMIx_Process_monitor`
/// heartbeats).
pub const TAG_HEARTBEAT: u32 = 1;
/// Tag 2: forwarded I/O, server → client (docs/wire.md §6.13).
pub const TAG_IOF: u32 = 2;
/// Where a client's request tag counter starts; the counter is incremented before
/// use, so this value itself is only used after the counter wraps.
pub const TAG_DYNAMIC: u32 = 100;
/// The first request tag a client uses (docs/wire.md §4.2).
pub const TAG_FIRST_REQUEST: u32 = 101;

/// The tag a client uses for the request after the one tagged `prev`: `prev + 1`,
/// except that the value that would be `0xffffffff` is replaced by
/// [`TAG_DYNAMIC`] (100), and counting goes on from there (docs/wire.md §4.2). A
/// client's first request is `next_tag(TAG_DYNAMIC)` = 101.
pub fn next_tag(prev: u32) -> u32 {
    match prev.checked_add(1) {
        Some(t) if t != u32::MAX => t,
        _ => TAG_DYNAMIC,
    }
}

/// Whether `tag` is one a client puts on a request (≥ 100; 100 itself only after the
/// counter wrapped). Tags 0–99 are reserved.
pub fn is_request_tag(tag: u32) -> bool {
    tag >= TAG_DYNAMIC
}

/// The outcome of an incremental decode that did not fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded<T> {
    /// A whole item, which took the first `used` bytes of the input.
    Item {
        /// The item.
        item: T,
        /// How many bytes of the input it took.
        used: usize,
    },
    /// The input holds only part of the next item: at least this many more bytes are
    /// needed (the exact number once the length is known). Nothing was consumed.
    NeedMore(usize),
}

/// A frame header (docs/wire.md §4.1), all fields big-endian on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameHeader {
    /// The sender's peer index: a client's handshake index (−1 without one); the 4.2
    /// server puts 0. No receiver interprets it.
    pub pindex: i32,
    /// The tag: 0 event, 1 heartbeat, 2 I/O, ≥ 100 a request and its reply.
    pub tag: u32,
    /// The payload length in bytes.
    pub nbytes: u32,
}

impl FrameHeader {
    /// The 16 bytes of this header (padding 0).
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&self.pindex.to_be_bytes());
        b[4..8].copy_from_slice(&self.tag.to_be_bytes());
        b[8..12].copy_from_slice(&self.nbytes.to_be_bytes());
        b
    }

    /// Reads a header from the first 16 bytes of `buf`, checking `nbytes` against
    /// `limits.max_frame` and that the padding is 0. Offsets in errors count from the
    /// start of `buf`.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] when `buf` is shorter than 16 bytes (an incremental
    /// reader uses [`FrameDecoder`] instead), [`ErrorKind::TooLarge`] (at offset 8)
    /// for `nbytes` over the limit, [`ErrorKind::BadValue`] (at offset 12) for
    /// nonzero padding: we would write zeros, and every accepted header re-encodes to
    /// its bytes.
    pub fn decode(buf: &[u8], limits: &Limits) -> Result<Self, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::new(
                ErrorKind::Truncated {
                    what: "a frame header",
                },
                buf.len(),
            ));
        }
        let nbytes = be_u32(buf, 8);
        check_nbytes(nbytes, limits)?;
        if be_u32(buf, 12) != 0 {
            return Err(WireError::new(
                ErrorKind::BadValue {
                    what: "the frame header's padding",
                    why: "nonzero padding",
                },
                12,
            ));
        }
        Ok(FrameHeader {
            pindex: be_u32(buf, 0) as i32,
            tag: be_u32(buf, 4),
            nbytes,
        })
    }
}

/// A whole frame: its header and its payload.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The header; its `nbytes` equals `payload.len()` for a decoded frame.
    pub header: FrameHeader,
    /// The payload bytes.
    pub payload: Vec<u8>,
}

impl Frame {
    /// A frame of `payload` from peer index `pindex` on `tag` (its `nbytes` set to
    /// the payload's length).
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for a payload longer than `u32::MAX` bytes.
    pub fn new(pindex: i32, tag: u32, payload: Vec<u8>) -> Result<Self, WireError> {
        let nbytes = u32::try_from(payload.len()).map_err(|_| {
            WireError::new(
                ErrorKind::Unencodable {
                    what: "a frame payload longer than u32::MAX bytes",
                },
                0,
            )
        })?;
        Ok(Frame {
            header: FrameHeader {
                pindex,
                tag,
                nbytes,
            },
            payload,
        })
    }

    /// The frame's bytes: the header, then the payload.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] when the header's `nbytes` is not the payload's
    /// length (the bytes would not be one frame).
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        if usize::try_from(self.header.nbytes).ok() != Some(self.payload.len()) {
            return Err(WireError::new(
                ErrorKind::Unencodable {
                    what: "a frame whose nbytes is not its payload's length",
                },
                8,
            ));
        }
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload.len());
        out.extend_from_slice(&self.header.encode());
        out.extend_from_slice(&self.payload);
        Ok(out)
    }
}

/// The incremental frame decoder: bytes in any chunking to whole frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameDecoder {
    /// The limits in force (only `max_frame` is used).
    pub limits: Limits,
}

impl FrameDecoder {
    /// A decoder with `limits`.
    pub fn new(limits: Limits) -> Self {
        FrameDecoder { limits }
    }

    /// Decodes the frame at the start of `buf` (the bytes received so far, from a
    /// frame boundary): [`Decoded::Item`] with the frame and the bytes it used
    /// (16 + `nbytes`), or [`Decoded::NeedMore`] with how many more bytes are needed
    /// (nothing is consumed): up to the header's end while `nbytes` is unread, the
    /// exact number once it is read. Offsets in errors count from the start of `buf`.
    ///
    /// # Errors
    /// [`ErrorKind::TooLarge`] (at offset 8) as soon as the header's `nbytes` is
    /// readable and over [`Limits::max_frame`]; [`ErrorKind::BadValue`] (at offset
    /// 12) for nonzero padding. An error is final: the stream cannot be resynchronised.
    pub fn decode(&self, buf: &[u8]) -> Result<Decoded<Frame>, WireError> {
        if buf.len() < 12 {
            return Ok(Decoded::NeedMore(HEADER_LEN - buf.len()));
        }
        let nbytes = be_u32(buf, 8);
        check_nbytes(nbytes, &self.limits)?;
        // `check_nbytes` bounded nbytes by a u32 limit: no overflow on any target
        // whose usize holds a u32 plus 16; checked all the same.
        let total = usize::try_from(nbytes)
            .ok()
            .and_then(|n| n.checked_add(HEADER_LEN))
            .ok_or_else(|| too_large(nbytes, &self.limits))?;
        if buf.len() < total {
            // The length is known: exactly this many more.
            return Ok(Decoded::NeedMore(total - buf.len()));
        }
        let header = FrameHeader::decode(buf, &self.limits)?;
        match buf.get(HEADER_LEN..total) {
            Some(payload) => Ok(Decoded::Item {
                item: Frame {
                    header,
                    payload: payload.to_vec(),
                },
                used: total,
            }),
            None => Ok(Decoded::NeedMore(total - buf.len())),
        }
    }
}

/// The big-endian u32 at `at` of `buf`; callers have checked `buf.len() >= at + 4`.
fn be_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = buf.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_be_bytes(b)
}

fn too_large(nbytes: u32, limits: &Limits) -> WireError {
    WireError::new(
        ErrorKind::TooLarge {
            what: "a frame payload",
            len: nbytes.into(),
            limit: limits.max_frame.into(),
        },
        8,
    )
}

fn check_nbytes(nbytes: u32, limits: &Limits) -> Result<(), WireError> {
    if nbytes > limits.max_frame {
        return Err(too_large(nbytes, limits));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn the_header_is_big_endian_with_zero_padding() {
        // ANNOTATED.md §3: rank 0's REQ.
        let h = FrameHeader {
            pindex: 1,
            tag: 101,
            nbytes: 2,
        };
        assert_eq!(
            h.encode(),
            [0, 0, 0, 1, 0, 0, 0, 0x65, 0, 0, 0, 2, 0, 0, 0, 0]
        );
        assert_eq!(FrameHeader::decode(&h.encode(), &Limits::DEFAULT), Ok(h));
    }

    #[test]
    fn a_partial_frame_asks_for_exactly_what_is_missing() {
        let f = Frame::new(0, 101, vec![2, 0]).unwrap().encode().unwrap();
        let d = FrameDecoder::default();
        for cut in 0..f.len() {
            let want = if cut < 12 {
                HEADER_LEN - cut
            } else {
                f.len() - cut
            };
            assert_eq!(d.decode(&f[..cut]), Ok(Decoded::NeedMore(want)), "{cut}");
        }
        let mut more = f.clone();
        more.extend_from_slice(&[9, 9, 9]);
        match d.decode(&more).unwrap() {
            Decoded::Item { item, used } => {
                assert_eq!(used, 18);
                assert_eq!(item.payload, [2, 0]);
                assert_eq!(item.header.tag, 101);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nbytes_over_the_limit_fails_before_the_header_is_whole() {
        let d = FrameDecoder::new(Limits {
            max_frame: 10,
            ..Limits::DEFAULT
        });
        let e = d
            .decode(&[0, 0, 0, 0, 0, 0, 0, 0x65, 0, 0, 0, 11])
            .unwrap_err();
        assert_eq!(e.offset, 8);
        assert!(matches!(e.kind, ErrorKind::TooLarge { len: 11, .. }));
    }

    #[test]
    fn nonzero_padding_is_refused() {
        let mut f = Frame::new(0, 0, vec![]).unwrap().encode().unwrap();
        f[15] = 1;
        let e = FrameDecoder::default().decode(&f).unwrap_err();
        assert_eq!(e.offset, 12);
    }

    #[test]
    fn tags_wrap_to_100_before_reaching_u32_max() {
        assert_eq!(next_tag(TAG_DYNAMIC), TAG_FIRST_REQUEST);
        assert_eq!(next_tag(101), 102);
        assert_eq!(next_tag(0xffff_fffd), 0xffff_fffe);
        assert_eq!(next_tag(0xffff_fffe), TAG_DYNAMIC);
        assert!(is_request_tag(100) && !is_request_tag(TAG_IOF));
    }
}
