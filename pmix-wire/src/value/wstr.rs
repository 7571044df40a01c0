//! [`WStr`]: the bytes of a PMIx string.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::buf::{Element, Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::DataType;

/// The bytes of a PMIx string without its NUL (a STRING element, docs/wire.md §5.4).
///
/// The wire does not promise UTF-8, so the bytes are kept as they came:
/// [`WStr::as_str`] gives them as text when they are UTF-8. A NULL string is
/// `Option<WStr>::None` where the protocol allows one; a layout that needs a string
/// (keys, namespaces) refuses NULL with [`ErrorKind::BadValue`].
///
/// Decoding allocates for few strings: the well-known `pmix.*` keys OpenPMIx sends
/// are shared static bytes, and strings of up to 14 bytes are held in place; only
/// longer ones are on the heap. Equality, ordering and hashing are those of the
/// bytes, whichever way they are held.
#[derive(Clone)]
pub struct WStr(Repr);

/// The most bytes a [`WStr`] holds in place.
const INLINE: usize = 14;

#[derive(Clone)]
enum Repr {
    /// Static bytes (a well-known key, or [`WStr::from_static`]).
    Static(&'static [u8]),
    /// Up to [`INLINE`] bytes in place: `buf[..len]`.
    Inline { len: u8, buf: [u8; INLINE] },
    /// Anything else.
    Heap(Vec<u8>),
}

/// The static copy of `b` when it is one of the keys OpenPMIx 4.2 sends most (the
/// job-info blob's, the server's and the clients' common attributes): decoding one
/// of them allocates nothing. Dispatched on the length and the byte after `pmix.`,
/// then a compare of known width for each key of that length and byte (one or two).
fn well_known(b: &[u8]) -> Option<&'static [u8]> {
    Some(match (b.len(), b.get(5).copied().unwrap_or(0)) {
        (9, b'l') if b == crate::keys::LOCALLDR.as_bytes() => crate::keys::LOCALLDR.as_bytes(),
        (9, b'p') if b == crate::keys::AVAIL_PHYS_MEMORY.as_bytes() => {
            crate::keys::AVAIL_PHYS_MEMORY.as_bytes()
        }
        (9, b'r') if b == crate::keys::RANK.as_bytes() => crate::keys::RANK.as_bytes(),
        (10, b'g') if b == crate::keys::GLOBAL_RANK.as_bytes() => {
            crate::keys::GLOBAL_RANK.as_bytes()
        }
        (10, b'h') if b == crate::keys::HOSTNAME.as_bytes() => crate::keys::HOSTNAME.as_bytes(),
        (10, b'j') if b == crate::keys::JOBID.as_bytes() => crate::keys::JOBID.as_bytes(),
        (10, b'l') if b == crate::keys::LOCAL_RANK.as_bytes() => crate::keys::LOCAL_RANK.as_bytes(),
        (10, b'm') if b == crate::keys::MAPBY.as_bytes() => crate::keys::MAPBY.as_bytes(),
        (10, b'n') if b == crate::keys::NODE_LIST.as_bytes() => crate::keys::NODE_LIST.as_bytes(),
        (10, b'n') if b == crate::keys::NODE_RANK.as_bytes() => crate::keys::NODE_RANK.as_bytes(),
        (10, b'p') if b == crate::keys::PROC_BLOB.as_bytes() => crate::keys::PROC_BLOB.as_bytes(),
        (9, b'a') if b == crate::keys::APPLDR.as_bytes() => crate::keys::APPLDR.as_bytes(),
        (11, b'a') if b == crate::keys::APPNUM.as_bytes() => crate::keys::APPNUM.as_bytes(),
        (11, b'b') if b == crate::keys::BINDTO.as_bytes() => crate::keys::BINDTO.as_bytes(),
        (11, b'c') if b == crate::keys::CPUSET.as_bytes() => crate::keys::CPUSET.as_bytes(),
        (11, b'l') if b == crate::keys::LOCALITY_STRING.as_bytes() => {
            crate::keys::LOCALITY_STRING.as_bytes()
        }
        (11, b'l') if b == crate::keys::LOCAL_PEERS.as_bytes() => {
            crate::keys::LOCAL_PEERS.as_bytes()
        }
        (11, b'n') if b == crate::keys::NODEID.as_bytes() => crate::keys::NODEID.as_bytes(),
        (11, b'n') if b == crate::keys::NSPACE.as_bytes() => crate::keys::NSPACE.as_bytes(),
        (11, b'o') if b == crate::keys::NPROC_OFFSET.as_bytes() => {
            crate::keys::NPROC_OFFSET.as_bytes()
        }
        (11, b'r') if b == crate::keys::RANKBY.as_bytes() => crate::keys::RANKBY.as_bytes(),
        (12, b'a') if b == crate::keys::APP_INFO_ARRAY.as_bytes() => {
            crate::keys::APP_INFO_ARRAY.as_bytes()
        }
        (12, b'a') if b == crate::keys::APP_RANK.as_bytes() => crate::keys::APP_RANK.as_bytes(),
        (12, b'c') if b == crate::keys::COLLECT_DATA.as_bytes() => {
            crate::keys::COLLECT_DATA.as_bytes()
        }
        (12, b's') if b == crate::keys::SESSION_INFO_ARRAY.as_bytes() => {
            crate::keys::SESSION_INFO_ARRAY.as_bytes()
        }
        (12, b't') if b == crate::keys::TOPOLOGY_SIGNATURE.as_bytes() => {
            crate::keys::TOPOLOGY_SIGNATURE.as_bytes()
        }
        (13, b'a') if b == crate::keys::APP_SIZE.as_bytes() => crate::keys::APP_SIZE.as_bytes(),
        (13, b'e') if b == crate::keys::EVENT_NON_DEFAULT.as_bytes() => {
            crate::keys::EVENT_NON_DEFAULT.as_bytes()
        }
        (13, b'j') if b == crate::keys::JOB_SIZE.as_bytes() => crate::keys::JOB_SIZE.as_bytes(),
        (13, b'm') if b == crate::keys::MAX_PROCS.as_bytes() => crate::keys::MAX_PROCS.as_bytes(),
        (13, b'n') if b == crate::keys::NODE_INFO_ARRAY.as_bytes() => {
            crate::keys::NODE_INFO_ARRAY.as_bytes()
        }
        (13, b's') if b == crate::keys::SERVER_RANK.as_bytes() => {
            crate::keys::SERVER_RANK.as_bytes()
        }
        (14, b'j') if b == crate::keys::JOB_NUM_APPS.as_bytes() => {
            crate::keys::JOB_NUM_APPS.as_bytes()
        }
        (14, b'n') if b == crate::keys::NODE_SIZE.as_bytes() => crate::keys::NODE_SIZE.as_bytes(),
        (14, b'n') if b == crate::keys::NUM_NODES.as_bytes() => crate::keys::NUM_NODES.as_bytes(),
        (14, b'u') if b == crate::keys::UNIV_SIZE.as_bytes() => crate::keys::UNIV_SIZE.as_bytes(),
        (15, b'b') if b == crate::keys::BFROPS_MODULE.as_bytes() => {
            crate::keys::BFROPS_MODULE.as_bytes()
        }
        (15, b'l') if b == crate::keys::LOCAL_SIZE.as_bytes() => crate::keys::LOCAL_SIZE.as_bytes(),
        (15, b's') if b == crate::keys::SESSION_ID.as_bytes() => crate::keys::SESSION_ID.as_bytes(),
        (15, b's') if b == crate::keys::SERVER_NSPACE.as_bytes() => {
            crate::keys::SERVER_NSPACE.as_bytes()
        }
        (16, b'r') if b == crate::keys::REGISTER_CLEANUP.as_bytes() => {
            crate::keys::REGISTER_CLEANUP.as_bytes()
        }
        (18, b'c') if b == crate::keys::CLEANUP_RECURSIVE.as_bytes() => {
            crate::keys::CLEANUP_RECURSIVE.as_bytes()
        }
        (19, b'r') if b == crate::keys::REGISTER_CLEANUP_DIR.as_bytes() => {
            crate::keys::REGISTER_CLEANUP_DIR.as_bytes()
        }
        (25, b's') if b == crate::keys::SERVER_INTERNAL_NOTIFY.as_bytes() => {
            crate::keys::SERVER_INTERNAL_NOTIFY.as_bytes()
        }
        _ => return None,
    })
}

impl WStr {
    /// A string of `bytes`.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        WStr(Repr::Heap(bytes.into()))
    }

    /// A string of static text, held without allocating.
    pub const fn from_static(s: &'static str) -> Self {
        WStr(Repr::Static(s.as_bytes()))
    }

    /// A string of a copy of `b`: a well-known key shared, a short one in place.
    fn copied(b: &[u8]) -> Self {
        if let Some(k) = well_known(b) {
            return WStr(Repr::Static(k));
        }
        if b.len() <= INLINE {
            let mut buf = [0; INLINE];
            if let Some(dst) = buf.get_mut(..b.len()) {
                dst.copy_from_slice(b);
                return WStr(Repr::Inline {
                    len: b.len() as u8,
                    buf,
                });
            }
        }
        WStr::heap(b)
    }

    /// A string of a copy of `b`, on the heap (out of line: the short cases above
    /// then need fewer registers).
    #[inline(never)]
    fn heap(b: &[u8]) -> Self {
        WStr(Repr::Heap(b.to_vec()))
    }

    /// The bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Static(b) => b,
            Repr::Inline { len, buf } => buf.get(..usize::from(*len)).unwrap_or_default(),
            Repr::Heap(v) => v,
        }
    }

    /// The bytes as text; `None` when they are not UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        core::str::from_utf8(self.as_bytes()).ok()
    }

    /// The bytes, by value.
    pub fn into_bytes(self) -> Vec<u8> {
        match self.0 {
            Repr::Heap(v) => v,
            other => WStr(other).as_bytes().to_vec(),
        }
    }

    /// The number of bytes (without the NUL).
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the string is empty (`""`, which is not NULL on the wire).
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }
}

impl Default for WStr {
    /// The empty string.
    fn default() -> Self {
        WStr(Repr::Static(&[]))
    }
}

impl PartialEq for WStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for WStr {}

impl PartialOrd for WStr {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for WStr {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl core::hash::Hash for WStr {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        // As the `Vec<u8>` it used to be.
        self.as_bytes().hash(state);
    }
}

impl From<&str> for WStr {
    fn from(s: &str) -> Self {
        WStr::copied(s.as_bytes())
    }
}

impl From<String> for WStr {
    fn from(s: String) -> Self {
        WStr(Repr::Heap(s.into_bytes()))
    }
}

impl From<&[u8]> for WStr {
    fn from(s: &[u8]) -> Self {
        WStr::copied(s)
    }
}

impl From<Vec<u8>> for WStr {
    fn from(s: Vec<u8>) -> Self {
        WStr(Repr::Heap(s))
    }
}

impl PartialEq<&str> for WStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<str> for WStr {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Display for WStr {
    /// The text, with U+FFFD for bytes that are not UTF-8.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.as_bytes().utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for WStr {
    /// A quoted string; UTF-8 text as it is, other bytes as `\xNN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => fmt::Debug::fmt(s, f),
            None => write!(f, "\"{}\"", self.as_bytes().escape_ascii()),
        }
    }
}

/// Reads a STRING element that may be NULL.
#[inline]
pub(crate) fn opt_str(r: &mut Reader<'_>, what: &'static str) -> Result<Option<WStr>, WireError> {
    Ok(r.string(what)?.map(WStr::from))
}

/// Reads a STRING element that must not be NULL.
#[inline]
pub(crate) fn req_str(r: &mut Reader<'_>, what: &'static str) -> Result<WStr, WireError> {
    req_bytes(r, what).map(WStr::from)
}

/// Reads a STRING element that must not be NULL, without copying it.
#[inline]
pub(crate) fn req_bytes<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<&'a [u8], WireError> {
    let at = r.offset();
    match r.string(what)? {
        Some(s) => Ok(s),
        None => Err(r.error_at(
            ErrorKind::BadValue {
                what,
                why: "a NULL string where the layout needs one",
            },
            at,
        )),
    }
}

/// Writes a STRING element that may be NULL.
pub(crate) fn put_opt_str(w: &mut Writer, s: &Option<WStr>) {
    w.string(s.as_ref().map(WStr::as_bytes));
}

/// Writes a STRING element.
pub(crate) fn put_str(w: &mut Writer, s: &WStr) {
    w.string(Some(s.as_bytes()));
}

/// A STRING that must not be NULL (keys, namespaces): decoding a NULL string is
/// [`ErrorKind::BadValue`].
impl Element for WStr {
    const TYPE: DataType = DataType::String;

    fn encode(&self, w: &mut Writer) {
        put_str(w, self);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        req_str(r, "string")
    }
}

/// A STRING that may be NULL (`None`, length 0 with no bytes).
impl Element for Option<WStr> {
    const TYPE: DataType = DataType::String;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, self);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        opt_str(r, "string")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use crate::types::BufferType;
    use core::hash::{Hash, Hasher};

    /// The bytes a value feeds its hasher.
    #[derive(Default)]
    struct Bytes(Vec<u8>);

    impl Hasher for Bytes {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, b: &[u8]) {
            self.0.extend_from_slice(b);
        }
    }

    fn hashed(x: &impl Hash) -> Vec<u8> {
        let mut h = Bytes::default();
        x.hash(&mut h);
        h.0
    }

    fn decoded(s: &str) -> WStr {
        let mut w = Writer::new(BufferType::NonDescribed);
        put_str(&mut w, &WStr::new(s));
        let b = w.finish().unwrap();
        let mut r = Reader::new(&b, BufferType::NonDescribed, Limits::DEFAULT);
        WStr::decode(&mut r).unwrap()
    }

    #[test]
    fn a_wstr_equals_orders_and_hashes_by_its_bytes_however_it_is_held() {
        for s in [
            "pmix.hname",
            "vm",
            "",
            "a string longer than fourteen bytes",
        ] {
            let held = [
                WStr::new(s),
                WStr::from(s),
                WStr::from(s.as_bytes()),
                decoded(s),
            ];
            for a in &held {
                assert_eq!(a.as_bytes(), s.as_bytes());
                assert_eq!(hashed(a), hashed(&s.as_bytes().to_vec()));
                for b in &held {
                    assert_eq!(a, b);
                    assert_eq!(a.cmp(b), core::cmp::Ordering::Equal);
                }
            }
            assert_eq!(WStr::new(s).into_bytes(), decoded(s).into_bytes());
        }
        assert_eq!(WStr::from_static("pmix.x"), WStr::new("pmix.x"));
        let (a, b) = (WStr::from("pmix.a"), WStr::new("pmix.b"));
        assert!(a < b);
        assert_eq!(WStr::default(), WStr::new(""));
    }

    #[test]
    fn decoding_a_well_known_key_or_a_short_string_does_not_allocate() {
        assert!(matches!(decoded("pmix.locstr").0, Repr::Static(_)));
        assert!(matches!(decoded("pmix.nothing").0, Repr::Inline { .. }));
        assert!(matches!(decoded("14 bytes here.").0, Repr::Inline { .. }));
        assert!(matches!(decoded("fifteen bytes!!").0, Repr::Heap(_)));
        // Keys of the table, of each length and position in it, are found.
        for k in [
            "pmix.aldr",
            "pmix.srvr.internal.notify",
            "pmix.reg.cleanupdir",
            "pmix.rank",
        ] {
            assert!(matches!(decoded(k).0, Repr::Static(b) if b == k.as_bytes()));
        }
    }

    #[test]
    fn a_wstr_is_no_larger_than_a_vec() {
        assert_eq!(size_of::<WStr>(), size_of::<Vec<u8>>());
    }
}
