//! [`Segment`]: a segment's bytes checked once, then read in place (the layout of
//! [`super`]).

use super::{
    ENTRY_LEN, HEADER_LEN, MAGIC, MAX_LEN, StoreError, VERSION, WILDCARD, field, le_u16, le_u32,
    le_u64,
};
use crate::buf::{Element, Reader};
use crate::keys;
use crate::limits::Limits;
use crate::types::{BufferType, DataType};
use crate::value::Value;

/// A segment whose header and tables were checked ([`Segment::parse`]), over its
/// bytes `B`: a borrowed slice (`Segment<&[u8]>`), or whatever owns the bytes and
/// derefs to them (a mapping, a `Vec<u8>`), so a segment can be kept with its
/// storage.
///
/// Lookups read only the record they find; nothing allocates but
/// [`Segment::get`]'s decoded [`Value`] (a string or an array inside it).
#[derive(Clone, Debug)]
pub struct Segment<B> {
    bytes: B,
    l: Layout,
}

/// Where the sections are, once checked.
#[derive(Clone, Copy, Debug)]
struct Layout {
    generation: u64,
    nspace_len: usize,
    dict: DictAt,
    rank_count: usize,
    rank_table: usize,
    job: usize,
    job_end: usize,
    /// The rank records were not checked by the parse: each is checked when a
    /// lookup reaches it ([`Segment::parse_lazy`]).
    lazy: bool,
}

/// Where the key dictionary is.
#[derive(Clone, Copy, Debug)]
struct DictAt {
    count: usize,
    index: usize,
    bytes: usize,
    bytes_len: usize,
}

/// The key dictionary of a segment, over its bytes.
#[derive(Clone, Copy, Debug)]
struct Dict<'s> {
    seg: &'s [u8],
    at: DictAt,
}

/// A key of one segment's dictionary, found once ([`Segment::key_id`]) and used
/// for many lookups. Used with another segment, it names whatever key that
/// segment has at its place (or none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId(u32);

impl KeyId {
    /// Its place in the dictionary (keys sorted by their bytes).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// One rank's record (or the job record) of a segment: its keys and their values.
#[derive(Clone, Copy, Debug)]
pub struct Record<'s> {
    seg: &'s [u8],
    dict: DictAt,
    rank: u32,
    start: usize,
    count: usize,
    end: usize,
}

fn layout(what: &'static str, why: &'static str, offset: u64) -> StoreError {
    StoreError::Layout { what, why, offset }
}

fn bad_record(rank: u32, why: &'static str, offset: usize) -> StoreError {
    StoreError::BadRecord {
        rank,
        why,
        offset: offset as u64,
    }
}

/// A header field (inside the checked header, so it is there).
fn hdr(b: &[u8], at: usize) -> u64 {
    le_u32(b, at).map_or(0, u64::from)
}

/// A section of `len` bytes at `start`, after one ending at `prev`: its end.
fn section(
    what: &'static str,
    start: u64,
    len: u64,
    prev: u64,
    align: u64,
    total: u64,
) -> Result<u64, StoreError> {
    if start < prev {
        return Err(layout(what, "overlaps the section before it", start));
    }
    if !start.is_multiple_of(align) {
        return Err(layout(what, "is not aligned to 4 bytes", start));
    }
    let end = start + len;
    if end > total {
        return Err(layout(what, "ends past the end of the segment", start));
    }
    Ok(end)
}

impl<B: AsRef<[u8]>> Segment<B> {
    /// Checks `bytes` as a segment: the header (magic, version, total length,
    /// checksum), the order and bounds of every section, the namespace, the key
    /// dictionary, the rank table and every record's entries. Values are checked
    /// when they are decoded ([`Segment::check_values`] checks them all). O(total
    /// entries); allocates nothing.
    ///
    /// # Errors
    /// Every [`StoreError`] but [`StoreError::Value`], [`StoreError::WrongType`],
    /// [`StoreError::BadRank`] and [`StoreError::TooLarge`]: the first thing found
    /// wrong, with its byte offset.
    pub fn parse(bytes: B) -> Result<Segment<B>, StoreError> {
        let l = validate(bytes.as_ref(), false)?;
        Ok(Segment { bytes, l })
    }

    /// [`Segment::parse`] but for the ranks' records: the header, the sections,
    /// the namespace, the dictionary, the rank table's two ends and the job record
    /// are checked now (O(keys), whatever the number of ranks); each rank's record
    /// when a lookup reaches it (O(its entries)), a record found wrong then being
    /// one the segment does not hold (`None`). What a client that reads a few ranks
    /// of a large job maps at init.
    ///
    /// # Errors
    /// As [`Segment::parse`], for what it checks now.
    pub fn parse_lazy(bytes: B) -> Result<Segment<B>, StoreError> {
        let l = validate(bytes.as_ref(), true)?;
        Ok(Segment { bytes, l })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The storage the segment was parsed from.
    pub fn into_inner(self) -> B {
        self.bytes
    }

    /// The namespace whose data this is.
    pub fn nspace(&self) -> &str {
        let b = self.bytes.as_ref();
        let ns = b
            .get(HEADER_LEN..HEADER_LEN + self.l.nspace_len)
            .unwrap_or_default();
        core::str::from_utf8(ns).unwrap_or_default()
    }

    /// The generation: 0 for the job segment, then one per collecting fence.
    pub fn generation(&self) -> u64 {
        self.l.generation
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.as_ref().len()
    }

    /// Always false: a segment holds at least its header.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many ranks the rank table covers (one past the highest rank with data).
    pub fn rank_count(&self) -> u32 {
        self.l.rank_count as u32
    }

    fn dict(&self) -> Dict<'_> {
        Dict {
            seg: self.bytes.as_ref(),
            at: self.l.dict,
        }
    }

    /// How many distinct keys the segment holds.
    pub fn key_count(&self) -> usize {
        self.l.dict.count
    }

    /// Every distinct key, sorted by its bytes.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let d = self.dict();
        (0..d.at.count).filter_map(move |i| d.key_str(i))
    }

    /// `key`'s id in this segment, if any record holds it (O(log K) over the K
    /// distinct keys).
    #[inline]
    pub fn key_id(&self, key: &str) -> Option<KeyId> {
        self.dict().find(key.as_bytes()).map(KeyId)
    }

    /// The record of `rank` ([`super::WILDCARD`]: the job record); `None` when the
    /// segment holds nothing for it. O(1).
    #[inline]
    pub fn record(&self, rank: u32) -> Option<Record<'_>> {
        let b = self.bytes.as_ref();
        let (start, end) = if rank == WILDCARD {
            (self.l.job, self.l.job_end)
        } else {
            let r = rank as usize;
            if r >= self.l.rank_count {
                return None;
            }
            let at = self.l.rank_table + 4 * r;
            (le_u32(b, at)? as usize, le_u32(b, at + 4)? as usize)
        };
        if start >= end {
            return None;
        }
        if self.l.lazy
            && rank != WILDCARD
            && (start < self.l.job_end
                || end > b.len()
                || check_record(b, rank, start, end, self.l.dict.count).is_err())
        {
            return None;
        }
        Some(Record {
            seg: b,
            dict: self.l.dict,
            rank,
            start,
            count: le_u32(b, start)? as usize,
            end,
        })
    }

    /// The ranks the segment holds a record for, ascending (not WILDCARD).
    pub fn ranks(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.l.rank_count as u32).filter(|&r| self.record(r).is_some())
    }

    /// The encoded value of `key` for `rank` (its type tag and element, as the
    /// builder wrote it), borrowed from the segment.
    #[inline]
    pub fn raw(&self, rank: u32, key: &str) -> Option<&[u8]> {
        self.raw_by_id(rank, self.key_id(key)?)
    }

    /// [`Segment::raw`] of a key found before.
    #[inline]
    pub fn raw_by_id(&self, rank: u32, key: KeyId) -> Option<&[u8]> {
        self.record(rank)?.raw_by_id(key)
    }

    /// The value of `key` for `rank`, decoded now: `None` when the segment holds
    /// none.
    ///
    /// # Errors
    /// [`StoreError::Value`] when the value's bytes do not decode as one value.
    pub fn get(&self, rank: u32, key: &str) -> Option<Result<Value, StoreError>> {
        self.record(rank)?.get(key)
    }

    /// An unsigned integer value of any width (UINT8 to UINT64, SIZE, PROC_RANK,
    /// PID, TIME, UINT) that fits a `u32`, without allocating.
    ///
    /// # Errors
    /// [`StoreError::WrongType`] for a value of another type or too large;
    /// [`StoreError::Value`] for bytes that do not decode.
    #[inline]
    pub fn get_u32(&self, rank: u32, key: &str) -> Option<Result<u32, StoreError>> {
        self.record(rank)?.get_u32(key)
    }

    /// An unsigned integer value of any width, without allocating.
    ///
    /// # Errors
    /// As [`Segment::get_u32`].
    #[inline]
    pub fn get_u64(&self, rank: u32, key: &str) -> Option<Result<u64, StoreError>> {
        self.record(rank)?.get_u64(key)
    }

    /// A STRING value's text, borrowed from the segment, without allocating.
    ///
    /// # Errors
    /// [`StoreError::WrongType`] for a value of another type, a NULL string or one
    /// that is not UTF-8; [`StoreError::Value`] for bytes that do not decode.
    #[inline]
    pub fn get_str(&self, rank: u32, key: &str) -> Option<Result<&str, StoreError>> {
        self.record(rank)?.get_str(key)
    }

    /// Decodes every value of every record: the first that does not decode as
    /// exactly one value is the error. O(total bytes).
    ///
    /// # Errors
    /// [`StoreError::Value`].
    pub fn check_values(&self) -> Result<(), StoreError> {
        let all = core::iter::once(WILDCARD).chain(0..self.l.rank_count as u32);
        for rank in all {
            if let Some(rec) = self.record(rank) {
                for i in 0..rec.count {
                    let (start, end) = rec.value_at(i).ok_or(bad_record(
                        rank,
                        "has an entry outside it",
                        rec.start,
                    ))?;
                    decode(rec.seg, start, end)?;
                }
            }
        }
        Ok(())
    }
}

impl<'s> Dict<'s> {
    /// Key `i`'s bytes.
    #[inline]
    fn key(&self, i: usize) -> Option<&'s [u8]> {
        let at = self.at.index + 4 * i;
        let a = le_u32(self.seg, at)? as usize;
        let b = le_u32(self.seg, at + 4)? as usize;
        self.seg.get(self.at.bytes + a..self.at.bytes + b)
    }

    fn key_str(&self, i: usize) -> Option<&'s str> {
        core::str::from_utf8(self.key(i)?).ok()
    }

    /// The id of `key`: a binary search of the sorted keys.
    #[inline]
    fn find(&self, key: &[u8]) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.at.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid)?.cmp(key) {
                core::cmp::Ordering::Less => lo = mid + 1,
                core::cmp::Ordering::Greater => hi = mid,
                core::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }
}

impl<'s> Record<'s> {
    /// Its rank ([`super::WILDCARD`] for the job record).
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// How many entries it holds (at least one).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Always false: a segment has no record for a rank without data.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Entry `i`'s key id.
    #[inline]
    fn key_at(&self, i: usize) -> Option<u32> {
        le_u32(self.seg, self.start + 4 + ENTRY_LEN * i)
    }

    /// Entry `i`'s value: where its bytes start and end.
    #[inline]
    fn value_at(&self, i: usize) -> Option<(usize, usize)> {
        let at = self.start + 4 + ENTRY_LEN * i + 4;
        let start = le_u32(self.seg, at)? as usize;
        let end = if i + 1 < self.count {
            le_u32(self.seg, at + ENTRY_LEN)? as usize
        } else {
            self.end
        };
        Some((start, end))
    }

    /// The first entry of key `id`: a binary search of the entries.
    #[inline]
    fn first(&self, id: u32) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key_at(mid)? < id {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.count && self.key_at(lo)? == id).then_some(lo)
    }

    /// Where the value of key `id` is.
    #[inline]
    fn locate(&self, key: &str) -> Option<(usize, usize)> {
        let id = Dict {
            seg: self.seg,
            at: self.dict,
        }
        .find(key.as_bytes())?;
        self.value_at(self.first(id)?)
    }

    /// The encoded value of `key` (the first written, if it was written twice).
    #[inline]
    pub fn raw(&self, key: &str) -> Option<&'s [u8]> {
        let (start, end) = self.locate(key)?;
        self.seg.get(start..end)
    }

    /// [`Record::raw`] of a key found before ([`Segment::key_id`]).
    #[inline]
    pub fn raw_by_id(&self, key: KeyId) -> Option<&'s [u8]> {
        let (start, end) = self.value_at(self.first(key.0)?)?;
        self.seg.get(start..end)
    }

    /// Where every value of `key` is, in the order written.
    fn spans(&self, key: &str) -> impl Iterator<Item = (usize, usize)> + use<'s> {
        let rec = *self;
        let id = Dict {
            seg: self.seg,
            at: self.dict,
        }
        .find(key.as_bytes());
        let first = id.and_then(|id| rec.first(id)).unwrap_or(rec.count);
        (first..rec.count)
            .take_while(move |&i| rec.key_at(i) == id)
            .filter_map(move |i| rec.value_at(i))
    }

    /// Every encoded value of `key`, in the order written.
    pub fn raw_all(&self, key: &str) -> impl Iterator<Item = &'s [u8]> + use<'s> {
        let seg = self.seg;
        self.spans(key).filter_map(move |(s, e)| seg.get(s..e))
    }

    /// Every value of `key`, in the order written, each decoded as it is reached.
    ///
    /// # Errors
    /// Each item as [`Segment::get`].
    pub fn get_all(&self, key: &str) -> impl Iterator<Item = Result<Value, StoreError>> + use<'s> {
        let seg = self.seg;
        self.spans(key).map(move |(s, e)| decode(seg, s, e))
    }

    /// Every entry: its key and its encoded value, keys in the dictionary's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'s str, &'s [u8])> + use<'s> {
        let rec = *self;
        let dict = Dict {
            seg: self.seg,
            at: self.dict,
        };
        (0..rec.count).filter_map(move |i| {
            let key = dict.key_str(rec.key_at(i)? as usize)?;
            let (s, e) = rec.value_at(i)?;
            Some((key, rec.seg.get(s..e)?))
        })
    }

    /// The value of `key`, decoded now.
    ///
    /// # Errors
    /// As [`Segment::get`].
    pub fn get(&self, key: &str) -> Option<Result<Value, StoreError>> {
        let (start, end) = self.locate(key)?;
        Some(decode(self.seg, start, end))
    }

    /// As [`Segment::get_u32`].
    ///
    /// # Errors
    /// As [`Segment::get_u32`].
    #[inline]
    pub fn get_u32(&self, key: &str) -> Option<Result<u32, StoreError>> {
        let (start, end) = self.locate(key)?;
        Some(read_u64(self.seg, start, end).and_then(|(ty, v)| {
            u32::try_from(v).map_err(|_| StoreError::WrongType {
                want: "an unsigned integer that fits 32 bits",
                found: ty.code(),
            })
        }))
    }

    /// As [`Segment::get_u64`].
    ///
    /// # Errors
    /// As [`Segment::get_u64`].
    #[inline]
    pub fn get_u64(&self, key: &str) -> Option<Result<u64, StoreError>> {
        let (start, end) = self.locate(key)?;
        Some(read_u64(self.seg, start, end).map(|(_, v)| v))
    }

    /// As [`Segment::get_str`].
    ///
    /// # Errors
    /// As [`Segment::get_str`].
    #[inline]
    pub fn get_str(&self, key: &str) -> Option<Result<&'s str, StoreError>> {
        let (start, end) = self.locate(key)?;
        Some(read_str(self.seg, start, end))
    }
}

/// A reader over the value at `[start, end)` of the segment, its offsets counted
/// from the segment's start.
#[inline]
fn value_reader(seg: &[u8], start: usize, end: usize) -> Result<Reader<'_>, StoreError> {
    let bytes = seg.get(start..end).ok_or(StoreError::Layout {
        what: "a value",
        why: "lies outside the segment",
        offset: start as u64,
    })?;
    Ok(Reader::new(bytes, BufferType::NonDescribed, Limits::DEFAULT).with_base(start))
}

fn value_error(start: usize) -> impl Fn(crate::WireError) -> StoreError {
    move |error| StoreError::Value {
        offset: start as u64,
        error,
    }
}

/// The value at `[start, end)`: exactly one.
fn decode(seg: &[u8], start: usize, end: usize) -> Result<Value, StoreError> {
    let mut r = value_reader(seg, start, end)?;
    let v = Value::decode(&mut r).map_err(value_error(start))?;
    r.finish().map_err(value_error(start))?;
    Ok(v)
}

/// The unsigned integer at `[start, end)`, and its type.
#[inline]
fn read_u64(seg: &[u8], start: usize, end: usize) -> Result<(DataType, u64), StoreError> {
    use DataType as T;
    let mut r = value_reader(seg, start, end)?;
    let ty = r.data_type("value type").map_err(value_error(start))?;
    let wrong = StoreError::WrongType {
        want: "an unsigned integer",
        found: ty.code(),
    };
    // Only the scalar types, whose decoding allocates nothing.
    if !matches!(
        ty,
        T::Byte
            | T::Uint8
            | T::Uint16
            | T::Uint32
            | T::Uint
            | T::Uint64
            | T::Size
            | T::ProcRank
            | T::Pid
            | T::Time
    ) {
        return Err(wrong);
    }
    let v = Value::decode_payload(ty, &mut r).map_err(value_error(start))?;
    r.finish().map_err(value_error(start))?;
    v.as_u64().map(|v| (ty, v)).ok_or(wrong)
}

/// The STRING at `[start, end)`, borrowed.
#[inline]
fn read_str(seg: &[u8], start: usize, end: usize) -> Result<&str, StoreError> {
    let mut r = value_reader(seg, start, end)?;
    let ty = r.data_type("value type").map_err(value_error(start))?;
    if ty != DataType::String {
        return Err(StoreError::WrongType {
            want: "a string",
            found: ty.code(),
        });
    }
    let s = r.string("string").map_err(value_error(start))?;
    r.finish().map_err(value_error(start))?;
    let wrong = |want| StoreError::WrongType {
        want,
        found: ty.code(),
    };
    core::str::from_utf8(s.ok_or(wrong("a string that is not NULL"))?)
        .map_err(|_| wrong("a UTF-8 string"))
}

/// Every check of [`Segment::parse`]; with `lazy`, all but the rank records'
/// ([`Segment::parse_lazy`]).
fn validate(b: &[u8], lazy: bool) -> Result<Layout, StoreError> {
    let len = b.len();
    let head = b.get(..HEADER_LEN).ok_or(StoreError::Truncated {
        len,
        need: HEADER_LEN as u64,
    })?;
    let mut found = [0u8; 4];
    found.copy_from_slice(&head[field::MAGIC..field::MAGIC + 4]);
    if found != MAGIC {
        return Err(StoreError::BadMagic { found });
    }
    let version = le_u16(head, field::VERSION).unwrap_or_default();
    if version != VERSION {
        return Err(StoreError::UnsupportedVersion { found: version });
    }
    if le_u16(head, field::HEADER_LEN) != Some(HEADER_LEN as u16) {
        return Err(layout(
            "the header length",
            "is not 80",
            field::HEADER_LEN as u64,
        ));
    }
    let total = le_u64(head, field::TOTAL).unwrap_or_default();
    if total > len as u64 {
        return Err(StoreError::Truncated { len, need: total });
    }
    if total < len as u64 {
        return Err(StoreError::TrailingBytes { len, total });
    }
    if total > MAX_LEN {
        return Err(layout(
            "the total length",
            "is over 4 GiB",
            field::TOTAL as u64,
        ));
    }
    if hdr(head, field::FLAGS) != 0 {
        return Err(layout(
            "the flags",
            "are not 0 (a feature this code does not read)",
            field::FLAGS as u64,
        ));
    }
    if le_u64(head, field::RESERVED) != Some(0) {
        return Err(layout(
            "the reserved field",
            "is not 0",
            field::RESERVED as u64,
        ));
    }
    let rank_table = hdr(head, field::RANK_TABLE);
    if rank_table < HEADER_LEN as u64 || rank_table > total {
        return Err(layout(
            "the rank table",
            "starts outside the segment or inside the header",
            field::RANK_TABLE as u64,
        ));
    }
    let stored = le_u64(head, field::CHECKSUM).unwrap_or_default();
    let computed = super::checksum(b).unwrap_or_default();
    if stored != computed {
        return Err(StoreError::Checksum { stored, computed });
    }

    // The sections, in order.
    let nspace_len = hdr(head, field::NSPACE_LEN);
    let ns_end = section(
        "the namespace",
        HEADER_LEN as u64,
        nspace_len,
        HEADER_LEN as u64,
        1,
        total,
    )?;
    let key_count = hdr(head, field::KEY_COUNT);
    let key_index = hdr(head, field::KEY_INDEX);
    let ki_end = section(
        "the key index",
        key_index,
        4 * (key_count + 1),
        ns_end,
        4,
        total,
    )?;
    let key_bytes = hdr(head, field::KEY_BYTES);
    let key_bytes_len = hdr(head, field::KEY_BYTES_LEN);
    let kb_end = section("the key bytes", key_bytes, key_bytes_len, ki_end, 1, total)?;
    let rank_count = hdr(head, field::RANK_COUNT);
    let rt_end = section(
        "the rank table",
        rank_table,
        4 * (rank_count + 1),
        kb_end,
        4,
        total,
    )?;
    let job = hdr(head, field::JOB);
    let job_end = section(
        "the job record",
        job,
        hdr(head, field::JOB_LEN),
        rt_end,
        1,
        total,
    )?;
    // Every section ends within `total`, which fits a u32: the usizes below hold.
    let ns = b.get(HEADER_LEN..ns_end as usize).ok_or(layout(
        "the namespace",
        "lies outside the segment",
        HEADER_LEN as u64,
    ))?;
    super::write::check_nspace(ns)?;

    // The dictionary: sorted, each key once, each one a key a peer accepts.
    let dict = DictAt {
        count: key_count as usize,
        index: key_index as usize,
        bytes: key_bytes as usize,
        bytes_len: key_bytes_len as usize,
    };
    check_dict(b, dict)?;

    // The rank table: rising from the job record's end to the segment's end.
    let (rt, n) = (rank_table as usize, rank_count as usize);
    if le_u32(b, rt).map(u64::from) != Some(job_end) {
        return Err(layout(
            "the rank table",
            "does not start where the job record ends",
            rank_table,
        ));
    }
    if le_u32(b, rt + 4 * n).map(u64::from) != Some(total) {
        return Err(layout(
            "the rank table",
            "does not end at the segment's end",
            (rt + 4 * n) as u64,
        ));
    }
    let table = if lazy {
        &[][..]
    } else {
        b.get(rt..rt + 4 * (n + 1)).unwrap_or_default()
    };
    let mut prev = job_end as usize;
    for (r, w) in table.chunks_exact(4).skip(1).enumerate() {
        let end = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize;
        if end < prev {
            return Err(bad_record(
                r as u32,
                "ends before it starts",
                rt + 4 * (r + 1),
            ));
        }
        check_record(b, r as u32, prev, end, dict.count)?;
        prev = end;
    }
    check_record(b, WILDCARD, job as usize, job_end as usize, dict.count)?;
    Ok(Layout {
        generation: le_u64(head, field::GENERATION).unwrap_or_default(),
        nspace_len: nspace_len as usize,
        dict,
        rank_count: n,
        rank_table: rt,
        job: job as usize,
        job_end: job_end as usize,
        lazy,
    })
}

fn check_dict(b: &[u8], d: DictAt) -> Result<(), StoreError> {
    let index = b
        .get(d.index..d.index + 4 * (d.count + 1))
        .unwrap_or_default();
    let kb = b.get(d.bytes..d.bytes + d.bytes_len).unwrap_or_default();
    let offs = || {
        index
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    if offs().next() != Some(0) {
        return Err(layout(
            "the key index",
            "does not start at 0",
            d.index as u64,
        ));
    }
    let mut prev: &[u8] = &[];
    for (i, (a, e)) in offs().zip(offs().skip(1)).enumerate() {
        let bad = |why| StoreError::BadKey {
            index: i as u64,
            why,
        };
        if e <= a {
            return Err(bad("is empty, or its offsets go backwards"));
        }
        let key = kb.get(a..e).ok_or(bad("ends past the key bytes"))?;
        if key.len() > keys::MAX_KEYLEN {
            return Err(bad("is longer than PMIX_MAX_KEYLEN (511 bytes)"));
        }
        if key.contains(&0) {
            return Err(bad("holds a NUL"));
        }
        if core::str::from_utf8(key).is_err() {
            return Err(bad("is not UTF-8"));
        }
        if i > 0 && key <= prev {
            return Err(bad(
                "is not after the key before it (sorted, each key once)",
            ));
        }
        prev = key;
    }
    if offs().next_back() != Some(d.bytes_len) {
        return Err(layout(
            "the key index",
            "does not end at the key bytes' length",
            d.index as u64,
        ));
    }
    Ok(())
}

/// Checks the record of `rank` at `[start, end)` (empty: none).
fn check_record(
    b: &[u8],
    rank: u32,
    start: usize,
    end: usize,
    keys: usize,
) -> Result<(), StoreError> {
    if start == end {
        return Ok(());
    }
    let count = le_u32(b, start)
        .filter(|_| end - start >= 4)
        .ok_or(bad_record(rank, "is shorter than its count", start))? as usize;
    if count == 0 {
        return Err(bad_record(rank, "holds no entry but is not empty", start));
    }
    let first = start as u64 + 4 + ENTRY_LEN as u64 * count as u64;
    if first >= end as u64 {
        return Err(bad_record(
            rank,
            "has more entries than its bytes hold",
            start,
        ));
    }
    let entries = b.get(start + 4..first as usize).unwrap_or_default();
    let (mut prev_key, mut prev_off) = (0u32, 0usize);
    for (i, e) in entries.chunks_exact(ENTRY_LEN).enumerate() {
        let at = start + 4 + ENTRY_LEN * i;
        let key = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        let off = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
        if key as usize >= keys {
            return Err(bad_record(
                rank,
                "names a key the dictionary does not hold",
                at,
            ));
        }
        if key < prev_key {
            return Err(bad_record(rank, "is not sorted by key", at));
        }
        if i == 0 {
            if off != first as usize {
                return Err(bad_record(
                    rank,
                    "has a first value that does not follow its entries",
                    at,
                ));
            }
        } else if off <= prev_off {
            return Err(bad_record(
                rank,
                "has a value that is empty or goes backwards",
                at,
            ));
        }
        (prev_key, prev_off) = (key, off);
    }
    if prev_off >= end {
        return Err(bad_record(
            rank,
            "has a last value that is empty or ends past it",
            start,
        ));
    }
    Ok(())
}
