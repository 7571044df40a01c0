//! Counts inside composite elements: an INT32 (zigzag) or a SIZE (varint), bounded
//! by [`crate::Limits::max_count`] before anything is allocated.

use crate::buf::{Reader, Writer};
use crate::error::{ErrorKind, WireError};

/// Reads an INT32 count; a negative one is [`ErrorKind::BadCount`].
pub(crate) fn zz_count(r: &mut Reader<'_>, what: &'static str) -> Result<usize, WireError> {
    let at = r.offset();
    let n = r.zigzag(32, what)?;
    if n < 0 {
        return Err(r.error_at(ErrorKind::BadCount { what, found: n }, at));
    }
    r.bounded(n as u64, r.limits().max_count, what, at)
}

/// Reads a SIZE count.
pub(crate) fn vu_count(r: &mut Reader<'_>, what: &'static str) -> Result<usize, WireError> {
    let at = r.offset();
    let n = r.varint(64, what)?;
    r.bounded(n, r.limits().max_count, what, at)
}

/// Writes an INT32 count (one past `i32::MAX` makes [`Writer::finish`] fail).
pub(crate) fn put_zz_count(w: &mut Writer, n: usize) {
    match i32::try_from(n) {
        Ok(n) => w.zigzag(n.into()),
        Err(_) => {
            w.fail("a count larger than the wire's int32");
            w.zigzag(0);
        }
    }
}

/// Writes a SIZE count.
pub(crate) fn put_vu_count(w: &mut Writer, n: usize) {
    w.varint(n as u64);
}
