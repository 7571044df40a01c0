//! The blob one node's server hands its host for a fence or a direct modex, and the
//! host hands every node back (docs/wire.md §8).
//!
//! Hosts (Slurm's plugin, Open MPI's daemons) move these bytes between nodes without
//! reading them; both ends are pmix-rs servers, so the format is ours. What it must
//! be: **self-delimiting**, because a host hands each node the concatenation of every
//! node's blob (Slurm's ring and tree, in an order that differs per node), and
//! **order-independent**: decoding a concatenation yields the same entries, each
//! blob's alone, whatever the order.
//!
//! ```text
//! blob  := "PXMX" | version 1 (u8) | body length (u32 LE) | body
//! body  := a fully described bfrops buffer: SIZE n, then n entries
//! entry := PROC | UINT8 flags | [SIZE k, k KVALs]   (flags & 1: data)
//!                             | [BYTE_OBJECT]       (flags & 2: a rank-state contribution)
//!                             | [UINT8 state, UINT8 directives, UINT8 has_id, [UINT64 id]]
//!                                                   (flags & 4: a group member's part)
//! ```
//!
//! An entry carries one process's values (what its node's server holds for remote
//! readers: its REMOTE and GLOBAL puts, and for a direct modex its job-info values)
//! and, for a fault-tolerant fence, its rank-state contribution. In a group
//! collective that spans nodes, it carries a member's part ([`GroupPart`]) and, for a
//! construct, its `PMIX_GROUP_INFO` as the values.

use alloc::vec::Vec;

use crate::buf::{Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::limits::Limits;
use crate::types::BufferType;
use crate::value::{ByteObject, Kval, Proc, Size, Uint8, Uint64};

/// The first bytes of every blob.
pub const MAGIC: [u8; 4] = *b"PXMX";

/// The version this code writes and reads.
pub const VERSION: u8 = 1;

/// The bytes before a blob's body: the magic, the version, the body's length.
const HEADER: usize = 9;

const HAS_DATA: u8 = 1;
const HAS_CONTRIBUTION: u8 = 2;
const HAS_GROUP: u8 = 4;

/// A member's part in a group collective (construct or destruct) that spans nodes,
/// as its node's server saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupPart {
    /// [`GroupPart::CONTRIBUTED`], [`GroupPart::LEFT`] or [`GroupPart::LOST`].
    pub state: u8,
    /// Its directives: [`GroupPart::FT`], [`GroupPart::NOTIFY_TERMINATION`],
    /// [`GroupPart::ASSIGN_CONTEXT_ID`].
    pub directives: u8,
    /// The context id the group's leading node (the node of its first member)
    /// assigns, on that node's entries.
    pub ctxid: Option<u64>,
}

impl GroupPart {
    /// It called the collective.
    pub const CONTRIBUTED: u8 = 0;
    /// It left the group before calling it.
    pub const LEFT: u8 = 1;
    /// It was lost (or finalized) before calling it.
    pub const LOST: u8 = 2;
    /// `PMIX_GROUP_FT_COLLECTIVE`.
    pub const FT: u8 = 1;
    /// `PMIX_GROUP_NOTIFY_TERMINATION`.
    pub const NOTIFY_TERMINATION: u8 = 2;
    /// `PMIX_GROUP_ASSIGN_CONTEXT_ID`.
    pub const ASSIGN_CONTEXT_ID: u8 = 4;
}

/// One process's part of a blob.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModexEntry {
    /// The process.
    pub proc: Proc,
    /// Its values (`None`: the blob carries none for it, not even an empty list).
    pub kvals: Option<Vec<Kval>>,
    /// Its rank-state contribution to a fault-tolerant fence (`pmixrs.ft.contrib`).
    pub contribution: Option<Vec<u8>>,
    /// Its part in a group collective.
    pub group: Option<GroupPart>,
}

/// Encodes `entries` as one blob.
///
/// # Errors
/// A [`WireError`] when a value cannot be encoded (an array of mixed types) or the
/// body is over 4 GiB.
pub fn encode(entries: &[ModexEntry]) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(BufferType::FullyDescribed);
    w.pack_one(&Size(entries.len() as u64));
    for e in entries {
        w.pack_one(&e.proc);
        let flags = u8::from(e.kvals.is_some()) * HAS_DATA
            + u8::from(e.contribution.is_some()) * HAS_CONTRIBUTION
            + u8::from(e.group.is_some()) * HAS_GROUP;
        w.pack_one(&Uint8(flags));
        if let Some(k) = &e.kvals {
            w.pack_one(&Size(k.len() as u64));
            if !k.is_empty() {
                w.pack(k);
            }
        }
        if let Some(c) = &e.contribution {
            w.pack_one(&ByteObject(c.clone()));
        }
        if let Some(g) = &e.group {
            w.pack_one(&Uint8(g.state));
            w.pack_one(&Uint8(g.directives));
            w.pack_one(&Uint8(u8::from(g.ctxid.is_some())));
            if let Some(id) = g.ctxid {
                w.pack_one(&Uint64(id));
            }
        }
    }
    let body = w.finish()?;
    let len = u32::try_from(body.len()).map_err(|_| {
        WireError::new(
            ErrorKind::TooLarge {
                what: "modex blob",
                len: body.len() as u64,
                limit: u32::MAX.into(),
            },
            0,
        )
    })?;
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes a concatenation of blobs (one blob, or what a host gathered from every
/// node, in any order; empty: no entries), every length bounded by `limits`.
///
/// # Errors
/// A [`WireError`] with the byte offset: a wrong magic or version, a length past
/// the end, a body that does not decode.
pub fn decode_all(bytes: &[u8], limits: Limits) -> Result<Vec<ModexEntry>, WireError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let head = bytes.get(at..at + HEADER).ok_or_else(|| {
            WireError::new(
                ErrorKind::Truncated {
                    what: "modex blob header",
                },
                at,
            )
        })?;
        if head[..4] != MAGIC {
            return Err(WireError::new(
                ErrorKind::BadValue {
                    what: "modex blob",
                    why: "not a pmix-rs modex blob (magic)",
                },
                at,
            ));
        }
        if head[4] != VERSION {
            return Err(WireError::new(
                ErrorKind::BadValue {
                    what: "modex blob",
                    why: "a version this code does not read",
                },
                at + 4,
            ));
        }
        let len = u32::from_le_bytes([head[5], head[6], head[7], head[8]]) as usize;
        let start = at + HEADER;
        let body = bytes.get(start..start.saturating_add(len)).ok_or_else(|| {
            WireError::new(
                ErrorKind::Truncated {
                    what: "modex blob body",
                },
                at + 5,
            )
        })?;
        let mut r = Reader::new(body, BufferType::FullyDescribed, limits).with_base(start);
        let Size(n) = r.unpack_one("modex entry count")?;
        // Each entry takes a few bytes at least: a count beyond the body is refused
        // before anything is reserved.
        if n > body.len() as u64 {
            return Err(r.error(ErrorKind::BadValue {
                what: "modex entry count",
                why: "more entries than bytes",
            }));
        }
        for _ in 0..n {
            let proc: Proc = r.unpack_one("modex entry proc")?;
            let Uint8(flags) = r.unpack_one("modex entry flags")?;
            let kvals = if flags & HAS_DATA != 0 {
                let Size(k) = r.unpack_one("modex value count")?;
                if k == 0 {
                    Some(Vec::new())
                } else {
                    let k = usize::try_from(k).map_err(|_| {
                        r.error(ErrorKind::BadValue {
                            what: "modex value count",
                            why: "too large",
                        })
                    })?;
                    Some(r.unpack_n::<Kval>(k, "modex values")?)
                }
            } else {
                None
            };
            let contribution = if flags & HAS_CONTRIBUTION != 0 {
                let b: ByteObject = r.unpack_one("modex contribution")?;
                Some(b.0)
            } else {
                None
            };
            let group = if flags & HAS_GROUP != 0 {
                let Uint8(state) = r.unpack_one("group member state")?;
                let Uint8(directives) = r.unpack_one("group member directives")?;
                let Uint8(has_id) = r.unpack_one("group context id flag")?;
                let ctxid = if has_id != 0 {
                    let Uint64(id) = r.unpack_one("group context id")?;
                    Some(id)
                } else {
                    None
                };
                Some(GroupPart {
                    state,
                    directives,
                    ctxid,
                })
            } else {
                None
            };
            out.push(ModexEntry {
                proc,
                kvals,
                contribution,
                group,
            });
        }
        r.finish()?;
        at = start + len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn entry(ns: &str, rank: u32, key: &str, v: u32, contrib: Option<&[u8]>) -> ModexEntry {
        ModexEntry {
            proc: Proc::new(ns, rank),
            kvals: Some(vec![Kval::new(key, v)]),
            contribution: contrib.map(<[u8]>::to_vec),
            group: None,
        }
    }

    #[test]
    fn a_concatenation_decodes_to_every_blobs_entries_in_any_order() {
        let a = vec![
            entry("job", 0, "k", 1, None),
            entry("job", 1, "k", 2, Some(b"xy")),
        ];
        let b = vec![ModexEntry {
            proc: Proc::new("job", 2),
            kvals: None,
            contribution: Some(vec![]),
            group: Some(GroupPart {
                state: GroupPart::LEFT,
                directives: GroupPart::FT | GroupPart::ASSIGN_CONTEXT_ID,
                ctxid: Some(u64::MAX - 3),
            }),
        }];
        let (ea, eb) = (encode(&a).unwrap(), encode(&b).unwrap());
        let ab = decode_all(&[ea.clone(), eb.clone()].concat(), Limits::DEFAULT).unwrap();
        let ba = decode_all(&[eb, ea].concat(), Limits::DEFAULT).unwrap();
        let mut want = a.clone();
        want.extend(b.clone());
        assert_eq!(ab, want);
        let mut sorted = ba.clone();
        sorted.sort_by_key(|e| e.proc.rank.0);
        assert_eq!(sorted, want);
        assert!(decode_all(&[], Limits::DEFAULT).unwrap().is_empty());
    }

    #[test]
    fn an_empty_value_list_is_not_an_absent_one() {
        let e = vec![ModexEntry {
            proc: Proc::new("j", 0),
            kvals: Some(vec![]),
            contribution: None,
            group: Some(GroupPart::default()),
        }];
        assert_eq!(
            decode_all(&encode(&e).unwrap(), Limits::DEFAULT).unwrap(),
            e
        );
    }

    #[test]
    fn damaged_blobs_are_refused_with_their_offset() {
        let good = encode(&[entry("job", 0, "k", 1, None)]).unwrap();
        let mut bad_magic = good.clone();
        bad_magic[0] = b'Q';
        assert_eq!(
            decode_all(&bad_magic, Limits::DEFAULT).unwrap_err().offset,
            0
        );
        let mut bad_version = good.clone();
        bad_version[4] = 9;
        assert_eq!(
            decode_all(&bad_version, Limits::DEFAULT)
                .unwrap_err()
                .offset,
            4
        );
        let short = &good[..good.len() - 1];
        assert!(decode_all(short, Limits::DEFAULT).is_err());
        let two = [good.clone(), good[..5].to_vec()].concat();
        assert_eq!(
            decode_all(&two, Limits::DEFAULT).unwrap_err().offset,
            good.len()
        );
        // Every truncation and every flipped byte is an error or a decode, never a
        // panic.
        for i in 0..good.len() {
            let _ = decode_all(&good[..i], Limits::DEFAULT);
            let mut f = good.clone();
            f[i] ^= 0xff;
            let _ = decode_all(&f, Limits::DEFAULT);
        }
    }
}
