//! Reading and writing bfrops v4.1 buffers: flex128 varints, zigzag integers,
//! strings, type tags and top-level packs (docs/wire.md §5.2–5.3), in either buffer
//! type.
//!
//! A [`Reader`] walks a borrowed byte slice and checks every count and length against
//! its [`Limits`] before anything is allocated; every error carries the offset of the
//! field, from the start of the outermost input. A [`Writer`] appends to a `Vec<u8>`;
//! a count that does not fit the wire's `int32` makes [`Writer::finish`] fail rather
//! than write a wrong byte.
//!
//! The reader accepts exactly what the writer produces: a varint that is not minimal,
//! a value wider than its type, a bool other than 0 or 1 are errors, so any accepted
//! input re-encodes to the same bytes.

use alloc::vec::Vec;

use crate::error::{ErrorKind, WireError};
use crate::limits::Limits;
use crate::types::{BufferType, DataType};

/// One element of a bfrops type: how it is written inside a pack (without any type
/// tag, docs/wire.md §5.4) and read back.
pub trait Element: Sized {
    /// The type code a fully described pack of these elements carries.
    const TYPE: DataType;

    /// Appends one element.
    fn encode(&self, w: &mut Writer);

    /// Reads one element.
    ///
    /// # Errors
    /// Any [`ErrorKind`] the element's fields can give, at the field's offset.
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError>;
}

/// The most elements a decoder reserves room for before reading them
/// ([`Reader::capacity_for`]): a few bytes claiming many elements, or arrays nested
/// in arrays, reserve at most this many each; a vector that holds more grows as it
/// is filled. (The one exception, the item list of a job-info reply, which is never
/// nested, reserves one item per 128 bytes of it.)
pub const MAX_PREALLOC: usize = 1024;

/// A cursor over the bytes of one buffer.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    ty: BufferType,
    limits: Limits,
    depth: u8,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, a buffer of type `ty`, whose offsets count from 0.
    pub fn new(buf: &'a [u8], ty: BufferType, limits: Limits) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
            ty,
            limits,
            depth: 0,
        }
    }

    /// A reader over `buf` resuming where another left off: offsets count from
    /// `base` and nesting starts at `depth` (a packed body decoded later, exactly as
    /// it would have been in place).
    pub(crate) fn resumed(
        buf: &'a [u8],
        ty: BufferType,
        limits: Limits,
        base: usize,
        depth: u8,
    ) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            ty,
            limits,
            depth,
        }
    }

    /// The nesting depth of this buffer (0 for the outermost).
    pub(crate) fn depth(&self) -> u8 {
        self.depth
    }

    /// The same reader with offsets counted from `base` (the position of `buf` in
    /// a larger input).
    pub fn with_base(mut self, base: usize) -> Self {
        self.base = base;
        self
    }

    /// A reader over `bytes` (a nested buffer taken from this one, e.g. by
    /// [`Reader::take`]) of type `ty`, one level deeper, with offsets from the
    /// outer input.
    ///
    /// # Errors
    /// [`ErrorKind::TooDeep`] past [`Limits::max_depth`].
    pub fn nested(&self, bytes: &'a [u8], ty: BufferType) -> Result<Reader<'a>, WireError> {
        let depth = self.deeper()?;
        // `bytes` was taken from this buffer just before: it ends at `pos`.
        let start = self.pos.saturating_sub(bytes.len());
        Ok(Reader {
            buf: bytes,
            pos: 0,
            base: self.base + start,
            ty,
            limits: self.limits,
            depth,
        })
    }

    /// The nesting depth one level down.
    ///
    /// # Errors
    /// [`ErrorKind::TooDeep`] past [`Limits::max_depth`].
    #[inline]
    pub fn deeper(&self) -> Result<u8, WireError> {
        if self.depth >= self.limits.max_depth {
            return Err(self.cold(
                ErrorKind::TooDeep {
                    limit: self.limits.max_depth.into(),
                },
                self.pos,
            ));
        }
        Ok(self.depth + 1)
    }

    /// Runs `f` one nesting level deeper (for recursive elements: a value holding
    /// an array of values …).
    ///
    /// # Errors
    /// [`ErrorKind::TooDeep`] past [`Limits::max_depth`], or `f`'s error.
    #[inline]
    pub fn descend<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        self.depth = self.deeper()?;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// The buffer type.
    pub fn buffer_type(&self) -> BufferType {
        self.ty
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The offset of the next byte, from the start of the outermost input.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// The bytes not read yet.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// An error of `kind` at the next byte.
    pub fn error(&self, kind: ErrorKind) -> WireError {
        WireError::new(kind, self.offset())
    }

    /// An error of `kind` at `offset` (an absolute offset, as [`Reader::offset`]
    /// gave it).
    pub fn error_at(&self, kind: ErrorKind, offset: usize) -> WireError {
        WireError::new(kind, offset)
    }

    /// An error of `kind` at position `pos` of this buffer, built out of line: the
    /// hot paths only branch to it.
    #[cold]
    #[inline(never)]
    fn cold(&self, kind: ErrorKind, pos: usize) -> WireError {
        WireError::new(kind, self.base + pos)
    }

    /// Fails unless every byte has been read.
    ///
    /// # Errors
    /// [`ErrorKind::TrailingBytes`].
    pub fn finish(&self) -> Result<(), WireError> {
        match self.buf.len().saturating_sub(self.pos) {
            0 => Ok(()),
            len => Err(self.error(ErrorKind::TrailingBytes { len })),
        }
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] when fewer remain.
    #[inline]
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        match self.rest().get(..n) {
            Some(s) => {
                // Within the buffer, so no overflow.
                self.pos += n;
                Ok(s)
            }
            None => Err(self.cold(ErrorKind::Truncated { what }, self.pos)),
        }
    }

    /// One byte.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`].
    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.cold(ErrorKind::Truncated { what }, self.pos)),
        }
    }

    /// A flex128 varint of at most `bits` significant bits (docs/wire.md §5.3),
    /// minimally encoded.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`], or [`ErrorKind::BadVarint`] for a longer encoding
    /// than needed or a value wider than `bits`.
    #[inline]
    pub fn varint(&mut self, bits: u32, what: &'static str) -> Result<u64, WireError> {
        // One byte (most counts, lengths, type tags and small numbers): inline.
        if let Some(&b) = self.buf.get(self.pos)
            && b & 0x80 == 0
            && (bits >= 64 || u64::from(b) >> bits == 0)
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        self.varint_long(bits, what)
    }

    /// [`Reader::varint`] past its one-byte case.
    #[inline]
    fn varint_long(&mut self, bits: u32, what: &'static str) -> Result<u64, WireError> {
        // Two bytes (ranks, lengths up to 16 kB): the second is not zero, or one
        // byte would have done.
        if let Some(&[b0, b1]) = self.rest().get(..2)
            && b0 & 0x80 != 0
            && b1 & 0x80 == 0
            && b1 != 0
        {
            let v = u64::from(b0 & 0x7f) | u64::from(b1) << 7;
            if bits >= 64 || v >> bits == 0 {
                self.pos += 2;
                return Ok(v);
            }
        }
        self.varint_slow(bits, what)
    }

    /// [`Reader::varint`] in general (and its errors).
    #[inline(never)]
    fn varint_slow(&mut self, bits: u32, what: &'static str) -> Result<u64, WireError> {
        let at = self.offset();
        let mut v: u64 = 0;
        let mut i = 0;
        loop {
            let b = self.u8(what)?;
            if i == 8 {
                // The ninth byte carries the top eight bits whole; zero would have
                // fitted in eight bytes.
                if b == 0 {
                    return Err(self.error_at(ErrorKind::BadVarint { what }, at));
                }
                v |= u64::from(b) << 56;
                break;
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    return Err(self.error_at(ErrorKind::BadVarint { what }, at));
                }
                break;
            }
            i += 1;
        }
        if bits < 64 && v >> bits != 0 {
            return Err(self.error_at(ErrorKind::BadVarint { what }, at));
        }
        Ok(v)
    }

    /// A zigzag varint of a signed value of `bits` bits.
    ///
    /// # Errors
    /// As [`Reader::varint`]; a value outside the signed range of `bits` is
    /// [`ErrorKind::BadVarint`].
    #[inline]
    pub fn zigzag(&mut self, bits: u32, what: &'static str) -> Result<i64, WireError> {
        let at = self.pos;
        let u = self.varint(64, what)?;
        let s = ((u >> 1) as i64) ^ -((u & 1) as i64);
        if bits < 64 {
            let lim = 1i64 << (bits - 1);
            if s < -lim || s >= lim {
                return Err(self.cold(ErrorKind::BadVarint { what }, at));
            }
        }
        Ok(s)
    }

    /// A type tag: a varint of a known [`DataType`] code.
    ///
    /// # Errors
    /// As [`Reader::varint`], or [`ErrorKind::UnknownType`].
    #[inline]
    pub fn data_type(&mut self, what: &'static str) -> Result<DataType, WireError> {
        let at = self.pos;
        let code = self.varint(16, what)?;
        match DataType::from_code(code) {
            Some(ty) => Ok(ty),
            None => Err(self.cold(ErrorKind::UnknownType { code }, at)),
        }
    }

    /// A type tag that must be `ty`.
    ///
    /// # Errors
    /// As [`Reader::varint`], or [`ErrorKind::UnexpectedType`].
    #[inline]
    pub fn expect_type(&mut self, ty: DataType, what: &'static str) -> Result<(), WireError> {
        let at = self.pos;
        let code = self.varint(64, what)?;
        if code != u64::from(ty.code()) {
            return Err(self.cold(
                ErrorKind::UnexpectedType {
                    what,
                    expected: ty.code(),
                    found: code,
                },
                at,
            ));
        }
        Ok(())
    }

    /// A count or length, checked against `limit` before it is used.
    ///
    /// # Errors
    /// [`ErrorKind::TooLarge`] at `at`.
    #[inline]
    pub fn bounded(
        &self,
        n: u64,
        limit: u32,
        what: &'static str,
        at: usize,
    ) -> Result<usize, WireError> {
        if n > u64::from(limit) {
            return Err(Self::too_large(n, limit, what, at));
        }
        // `limit` is a u32, so `n` fits a usize on every target we build for.
        usize::try_from(n).map_err(|_| Self::too_large(n, limit, what, at))
    }

    #[cold]
    #[inline(never)]
    fn too_large(n: u64, limit: u32, what: &'static str, at: usize) -> WireError {
        WireError::new(
            ErrorKind::TooLarge {
                what,
                len: n,
                limit: limit.into(),
            },
            at,
        )
    }

    /// A STRING element's bytes without the NUL: `None` for a NULL string (length
    /// 0). Its length (zigzag, including the NUL) is bounded by
    /// [`Limits::max_bytes`].
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`], [`ErrorKind::TooLarge`], or
    /// [`ErrorKind::BadValue`] for a negative length or a last byte other than NUL.
    #[inline(always)]
    pub fn string(&mut self, what: &'static str) -> Result<Option<&'a [u8]>, WireError> {
        let start = self.pos;
        let len = self.zigzag(32, what)?;
        if len <= 0 {
            if len == 0 {
                return Ok(None);
            }
            return Err(self.cold(
                ErrorKind::BadValue {
                    what,
                    why: "a negative string length",
                },
                start,
            ));
        }
        let n = self.bounded(len as u64, self.limits.max_bytes, what, self.base + start)?;
        let bytes = self.take(n, what)?;
        match bytes.split_last() {
            Some((0, s)) => Ok(Some(s)),
            _ => Err(self.cold(
                ErrorKind::BadValue {
                    what,
                    why: "a string whose last byte is not NUL",
                },
                start,
            )),
        }
    }

    /// The header of a top-level pack of elements of `ty`: its count (zigzag
    /// `int32`), with the type tags of a fully described buffer checked. The count
    /// is bounded by [`Limits::max_count`].
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`], [`ErrorKind::UnexpectedType`],
    /// [`ErrorKind::BadCount`] for a negative count, [`ErrorKind::TooLarge`].
    #[inline(always)]
    pub fn pack_header(&mut self, ty: DataType, what: &'static str) -> Result<usize, WireError> {
        let described = self.ty == BufferType::FullyDescribed;
        if described {
            self.expect_type(DataType::Int32, what)?;
        }
        let at = self.pos;
        let n = self.zigzag(32, what)?;
        if n < 0 {
            return Err(self.cold(ErrorKind::BadCount { what, found: n }, at));
        }
        let n = self.bounded(n as u64, self.limits.max_count, what, self.base + at)?;
        if described {
            self.expect_type(ty, what)?;
        }
        Ok(n)
    }

    /// How many elements to reserve up front for a pack or array of `n` (already
    /// checked against the limits): at most one per byte left (every element takes
    /// at least one) and at most [`MAX_PREALLOC`], so that arrays nested in arrays
    /// do not each reserve against the same bytes; pushing grows the rest.
    pub fn capacity_for(&self, n: usize) -> usize {
        n.min(self.rest().len()).min(MAX_PREALLOC)
    }

    /// A top-level pack of any number of `T`.
    ///
    /// # Errors
    /// As [`Reader::pack_header`] and [`Element::decode`].
    pub fn unpack<T: Element>(&mut self, what: &'static str) -> Result<Vec<T>, WireError> {
        let n = self.pack_header(T::TYPE, what)?;
        let mut v = Vec::with_capacity(self.capacity_for(n));
        for _ in 0..n {
            v.push(T::decode(self)?);
        }
        Ok(v)
    }

    /// A top-level pack of exactly `n` elements of `T` (a layout whose count was
    /// sent before, e.g. `SIZE nprocs` then `PROC[nprocs]`).
    ///
    /// # Errors
    /// As [`Reader::unpack`], or [`ErrorKind::BadCount`] for another count.
    pub fn unpack_n<T: Element>(
        &mut self,
        n: usize,
        what: &'static str,
    ) -> Result<Vec<T>, WireError> {
        let at = self.offset();
        let v = self.unpack::<T>(what)?;
        if v.len() != n {
            return Err(self.error_at(
                ErrorKind::BadCount {
                    what,
                    found: v.len() as i64,
                },
                at,
            ));
        }
        Ok(v)
    }

    /// A top-level pack of one `T`.
    ///
    /// # Errors
    /// As [`Reader::unpack_n`].
    pub fn unpack_one<T: Element>(&mut self, what: &'static str) -> Result<T, WireError> {
        let at = self.offset();
        let n = self.pack_header(T::TYPE, what)?;
        if n != 1 {
            return Err(self.error_at(
                ErrorKind::BadCount {
                    what,
                    found: n as i64,
                },
                at,
            ));
        }
        T::decode(self)
    }
}

/// A buffer being written.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
    ty: BufferType,
    failed: Option<&'static str>,
    limits: Option<Limits>,
}

impl Writer {
    /// An empty buffer of type `ty`.
    pub fn new(ty: BufferType) -> Self {
        Writer {
            buf: Vec::new(),
            ty,
            failed: None,
            limits: None,
        }
    }

    /// The same writer, encoding for a decoder with `limits`: an element whose
    /// bytes depend on them ([`crate::value::Topo`]'s support bytes) is checked
    /// against them. A message's `encode(codec)` sets the codec's.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// The decoder's limits this writer encodes for, if it was given them
    /// ([`Writer::with_limits`]).
    pub fn limits(&self) -> Option<&Limits> {
        self.limits.as_ref()
    }

    /// An empty buffer of type `ty` that appends to `buf` (reusing its allocation).
    pub fn append_to(buf: Vec<u8>, ty: BufferType) -> Self {
        Writer {
            buf,
            ty,
            failed: None,
            limits: None,
        }
    }

    /// The buffer type.
    pub fn buffer_type(&self) -> BufferType {
        self.ty
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// How many bytes have been written.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] when a count or length did not fit the wire's
    /// integer (then the bytes are not returned: they would be wrong).
    pub fn finish(self) -> Result<Vec<u8>, WireError> {
        match self.failed {
            None => Ok(self.buf),
            Some(what) => Err(WireError::new(
                ErrorKind::Unencodable { what },
                self.buf.len(),
            )),
        }
    }

    /// Records that `what` could not be encoded; [`Writer::finish`] reports it.
    pub fn fail(&mut self, what: &'static str) {
        self.failed.get_or_insert(what);
    }

    /// Appends bytes as they are.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends one byte.
    pub fn u8(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// Appends a flex128 varint.
    pub fn varint(&mut self, mut v: u64) {
        for _ in 0..8 {
            if v < 0x80 {
                self.buf.push(v as u8);
                return;
            }
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// Appends a zigzag varint.
    pub fn zigzag(&mut self, s: i64) {
        self.varint(((s << 1) ^ (s >> 63)) as u64);
    }

    /// Appends a type tag.
    pub fn data_type(&mut self, ty: DataType) {
        self.varint(ty.code().into());
    }

    /// Appends a STRING element: `None` is a NULL string. A string longer than
    /// `i32::MAX - 1` bytes cannot be encoded.
    pub fn string(&mut self, s: Option<&[u8]>) {
        match s {
            None => self.zigzag(0),
            Some(s) => match i32::try_from(s.len() + 1) {
                Ok(n) => {
                    self.zigzag(n.into());
                    self.raw(s);
                    self.u8(0);
                }
                Err(_) => {
                    self.fail("a string longer than the wire's int32");
                    self.zigzag(0);
                }
            },
        }
    }

    /// Appends the header of a top-level pack of `n` elements of `ty`.
    pub fn pack_header(&mut self, ty: DataType, n: usize) {
        let n = match i32::try_from(n) {
            Ok(n) => n,
            Err(_) => {
                self.fail("a pack of more elements than the wire's int32 counts");
                0
            }
        };
        if self.ty == BufferType::FullyDescribed {
            self.data_type(DataType::Int32);
            self.zigzag(n.into());
            self.data_type(ty);
        } else {
            self.zigzag(n.into());
        }
    }

    /// Appends a top-level pack of `items`.
    pub fn pack<T: Element>(&mut self, items: &[T]) {
        self.pack_header(T::TYPE, items.len());
        for it in items {
            it.encode(self);
        }
    }

    /// Appends a top-level pack of one `item`.
    pub fn pack_one<T: Element>(&mut self, item: &T) {
        self.pack_header(T::TYPE, 1);
        item.encode(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn r(b: &[u8]) -> Reader<'_> {
        Reader::new(b, BufferType::NonDescribed, Limits::DEFAULT)
    }

    #[test]
    fn an_up_front_reservation_is_capped_by_the_bytes_left_and_max_prealloc() {
        let bytes = vec![0u8; 5000];
        let mut rd = r(&bytes);
        assert_eq!(rd.capacity_for(10), 10);
        assert_eq!(rd.capacity_for(1_000_000), MAX_PREALLOC);
        rd.take(4990, "x").unwrap();
        assert_eq!(rd.capacity_for(1_000_000), 10);
    }

    #[test]
    fn the_short_varint_paths_agree_with_the_general_decoder() {
        // Every one- and two-byte prefix, followed by a byte that ends a varint or
        // continues it, at every width: the same value or error, the same position.
        for b0 in 0..=255u8 {
            for b1 in 0..=255u8 {
                for b2 in [0x00, 0x01, 0x80] {
                    let bytes = [b0, b1, b2];
                    for len in 1..=3 {
                        for bits in [1, 7, 8, 14, 16, 32, 64] {
                            let mut fast = r(&bytes[..len]);
                            let mut slow = fast.clone();
                            assert_eq!(
                                fast.varint(bits, "v"),
                                slow.varint_slow(bits, "v"),
                                "{:02x?} bits {bits}",
                                &bytes[..len]
                            );
                            assert_eq!(fast.pos, slow.pos);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn varints_match_protocol_examples() {
        // docs/wire.md §5.3.
        for (v, bytes) in [
            (0u64, vec![0x00]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (0xffff_fffe, vec![0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (u64::MAX, vec![0xff; 9]),
        ] {
            let mut w = Writer::new(BufferType::NonDescribed);
            w.varint(v);
            assert_eq!(w.as_bytes(), &bytes[..], "{v:#x}");
            assert_eq!(r(&bytes).varint(64, "v"), Ok(v));
        }
        for (s, bytes) in [
            (0i64, vec![0x00]),
            (-1, vec![0x01]),
            (1, vec![0x02]),
            (-46, vec![0x5b]),
            (-47, vec![0x5d]),
            (42, vec![0x54]),
            (-3007, vec![0xfd, 0x2e]),
            (i32::MIN.into(), vec![0xff, 0xff, 0xff, 0xff, 0x0f]),
        ] {
            let mut w = Writer::new(BufferType::NonDescribed);
            w.zigzag(s);
            assert_eq!(w.as_bytes(), &bytes[..], "{s}");
            assert_eq!(r(&bytes).zigzag(32, "s"), Ok(s));
        }
    }

    #[test]
    fn varints_that_are_not_minimal_or_too_wide_are_refused() {
        for bytes in [
            &[0x80, 0x00][..],
            &[0xff, 0x80, 0x00],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00],
        ] {
            assert!(
                matches!(
                    r(bytes).varint(64, "v").unwrap_err().kind,
                    ErrorKind::BadVarint { .. }
                ),
                "{bytes:x?}"
            );
        }
        assert!(matches!(
            r(&[0x80, 0x80, 0x04]).varint(16, "v").unwrap_err().kind,
            ErrorKind::BadVarint { .. }
        ));
        // INT32_MAX + 1 as a zigzag int32.
        assert!(matches!(
            r(&[0x80, 0x80, 0x80, 0x80, 0x10])
                .zigzag(32, "s")
                .unwrap_err()
                .kind,
            ErrorKind::BadVarint { .. }
        ));
        assert!(matches!(
            r(&[0x80]).varint(64, "v").unwrap_err().kind,
            ErrorKind::Truncated { .. }
        ));
    }

    #[test]
    fn strings_carry_their_nul_and_null_is_length_zero() {
        assert_eq!(r(&[0x06, b'v', b'm', 0]).string("s"), Ok(Some(&b"vm"[..])));
        assert_eq!(r(&[0x00]).string("s"), Ok(None));
        assert!(matches!(
            r(&[0x04, b'v', b'm']).string("s").unwrap_err().kind,
            ErrorKind::BadValue { .. }
        ));
        assert!(matches!(
            r(&[0x01]).string("s").unwrap_err().kind,
            ErrorKind::BadValue { .. }
        ));
        let mut w = Writer::new(BufferType::NonDescribed);
        w.string(Some(b"vm"));
        w.string(None);
        assert_eq!(w.finish().unwrap(), [0x06, b'v', b'm', 0, 0]);
    }

    #[test]
    fn described_pack_headers_carry_int32_and_the_type() {
        // docs/wire.md §5.2: the command byte 0 as `09 02 22 00`.
        let mut w = Writer::new(BufferType::FullyDescribed);
        w.pack_header(DataType::Command, 1);
        w.u8(0);
        assert_eq!(w.as_bytes(), [0x09, 0x02, 0x22, 0x00]);
        let mut rd = Reader::new(w.as_bytes(), BufferType::FullyDescribed, Limits::DEFAULT);
        assert_eq!(rd.pack_header(DataType::Command, "cmd"), Ok(1));
        let mut rd = Reader::new(w.as_bytes(), BufferType::FullyDescribed, Limits::DEFAULT);
        assert!(matches!(
            rd.pack_header(DataType::Status, "cmd").unwrap_err().kind,
            ErrorKind::UnexpectedType { .. }
        ));
    }

    #[test]
    fn counts_over_the_limit_are_refused_before_allocating() {
        let limits = Limits {
            max_count: 3,
            ..Limits::DEFAULT
        };
        let mut rd = Reader::new(&[0x08], BufferType::NonDescribed, limits);
        let e = rd.pack_header(DataType::Proc, "procs").unwrap_err();
        assert_eq!(
            e,
            WireError::new(
                ErrorKind::TooLarge {
                    what: "procs",
                    len: 4,
                    limit: 3
                },
                0
            )
        );
    }
}
