//! A `pmix.pblob` of the job-info blob (docs/wire.md §6.1): a BYTE_OBJECT holding a
//! buffer of the connection's type with `PROC_RANK rank`, then that rank's KVAL
//! packs.
//!
//! **Decoded lazily.** A decoded blob keeps its rank and the packed bytes of its
//! KVALs; [`ProcBlob::kvals`] decodes them when asked, exactly as they would have
//! been decoded in place (the same limits, nesting depth and error offsets). The
//! byte object is the protocol's boundary: OpenPMIx's client, too, takes the blobs
//! as opaque bytes and unpacks them in its data store, and a client of a large job
//! asks about a few peers, so the cost of a REQ reply is a copy per rank, not a
//! decode of every rank's values. The price: a REQ reply whose blob holds a bad
//! KVAL decodes, and the error comes from [`ProcBlob::kvals`]. (Only a client
//! decodes REQ replies, from its own server; a server never decodes a pblob.)

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::fmt;

use super::{read_nested, read_until_end, write_each, write_nested};
use crate::buf::{Reader, Writer};
use crate::error::WireError;
use crate::limits::Limits;
use crate::types::BufferType;
use crate::value::{Kval, Rank};

/// A `pmix.pblob` byte object's contents: a rank and its values (`pmix.locstr`,
/// `pmix.lrank`, `pmix.hname`, …). Built from values ([`ProcBlob::new`]) or decoded
/// (the values then stay packed until [`ProcBlob::kvals`]).
///
/// Two blobs are equal when their ranks are and their values decode to the same
/// list, or (for two packed ones) when their packed bytes are the same.
#[derive(Clone)]
pub struct ProcBlob {
    /// The rank.
    pub rank: Rank,
    body: Body,
}

#[derive(Clone)]
enum Body {
    Kvals(Vec<Kval>),
    Packed(Packed),
}

/// The KVAL packs of a decoded blob and what decoding them in place would have
/// used.
#[derive(Clone)]
struct Packed {
    ty: BufferType,
    limits: Limits,
    /// The offset of `bytes[0]` in the outermost input (for error offsets).
    base: usize,
    depth: u8,
    bytes: Vec<u8>,
    /// Packed here ([`ProcBlob::from_packed`]), not decoded: written as it is into
    /// any buffer of its type, whatever the writer's limits.
    ours: bool,
}

impl Packed {
    fn decode(&self) -> Result<Vec<Kval>, WireError> {
        let mut r = Reader::resumed(&self.bytes, self.ty, self.limits, self.base, self.depth);
        read_until_end::<Kval>(&mut r, "pblob kval")
    }
}

impl ProcBlob {
    /// A blob of `rank` holding `kvals`, in order.
    pub fn new(rank: Rank, kvals: Vec<Kval>) -> ProcBlob {
        ProcBlob {
            rank,
            body: Body::Kvals(kvals),
        }
    }

    /// A blob of `rank` whose values are packed already: `kvals` is KVAL packs of
    /// buffer type `ty`, back to back ([`ProcBlob::pack_kvals`], and the bytes of
    /// more KVALs appended), written as they are into a buffer of that type (and
    /// decoded and encoded again into one of another type). A server packs each
    /// rank's values once this way and appends a value many ranks share, packed once.
    pub fn from_packed(rank: Rank, ty: BufferType, kvals: Vec<u8>) -> ProcBlob {
        ProcBlob {
            rank,
            body: Body::Packed(Packed {
                ty,
                limits: Limits::DEFAULT,
                base: 0,
                depth: 0,
                bytes: kvals,
                ours: true,
            }),
        }
    }

    /// `kvals` packed back to back in a buffer of type `ty`: the body
    /// [`ProcBlob::from_packed`] takes.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Unencodable`] for a value that cannot be encoded.
    pub fn pack_kvals(kvals: &[Kval], ty: BufferType) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(ty);
        write_each(&mut w, kvals);
        w.finish()
    }

    /// The values, in order: borrowed when the blob was built from them, decoded
    /// from the packed bytes of a decoded blob (each call decodes again).
    ///
    /// # Errors
    /// A decoded blob whose packed KVALs do not decode: the error decoding the
    /// reply in place would have given (its offset counts from the start of the
    /// reply's payload).
    pub fn kvals(&self) -> Result<Cow<'_, [Kval]>, WireError> {
        match &self.body {
            Body::Kvals(k) => Ok(Cow::Borrowed(k)),
            Body::Packed(p) => p.decode().map(Cow::Owned),
        }
    }

    /// The values, in order, owned (see [`ProcBlob::kvals`]).
    ///
    /// # Errors
    /// As [`ProcBlob::kvals`].
    pub fn into_kvals(self) -> Result<Vec<Kval>, WireError> {
        match self.body {
            Body::Kvals(k) => Ok(k),
            Body::Packed(p) => p.decode(),
        }
    }

    /// Decodes the contents of a `pmix.pblob` byte object as a plain KVAL carries
    /// them (a CONNECTNB reply's job information does): `PROC_RANK rank`, then that
    /// rank's KVALs, in a buffer of type `ty`, bounded by `limits`.
    ///
    /// # Errors
    /// The bytes do not decode as a rank and KVALs.
    pub fn from_bytes(bytes: &[u8], ty: BufferType, limits: Limits) -> Result<ProcBlob, WireError> {
        let mut r = Reader::new(bytes, ty, limits);
        let rank = r.unpack_one::<Rank>("pblob rank")?;
        let kvals = read_until_end::<Kval>(&mut r, "pblob kval")?;
        Ok(ProcBlob::new(rank, kvals))
    }

    /// Whether the values are still packed (a decoded blob).
    pub fn is_packed(&self) -> bool {
        matches!(self.body, Body::Packed(_))
    }

    /// Decodes a blob's byte-object body (its size, then the nested buffer of type
    /// `ty`): the rank now, the KVALs' bytes kept packed.
    pub(crate) fn read(r: &mut Reader<'_>, ty: BufferType) -> Result<ProcBlob, WireError> {
        read_nested(r, ty, crate::keys::PROC_BLOB, |inner| {
            let rank = inner.unpack_one::<Rank>("pblob rank")?;
            let (limits, base, depth) = (*inner.limits(), inner.offset(), inner.depth());
            let bytes = inner.take(inner.rest().len(), "pblob kvals")?.to_vec();
            Ok(ProcBlob {
                rank,
                body: Body::Packed(Packed {
                    ty,
                    limits,
                    base,
                    depth,
                    bytes,
                    ours: false,
                }),
            })
        })
    }

    /// Writes the byte-object body into a buffer of type `ty`: packed bytes are
    /// copied when they were decoded from a buffer of that type with the writer's
    /// limits, and decoded and encoded again otherwise (the writer fails when they
    /// do not decode).
    pub(crate) fn write(&self, w: &mut Writer, ty: BufferType) {
        let kvals = match &self.body {
            Body::Packed(p)
                if p.ty == ty && (p.ours || w.limits().is_none_or(|l| *l == p.limits)) =>
            {
                write_nested(w, ty, |inner| {
                    inner.pack_one(&self.rank);
                    inner.raw(&p.bytes);
                });
                return;
            }
            Body::Kvals(k) => Cow::Borrowed(k.as_slice()),
            Body::Packed(p) => match p.decode() {
                Ok(k) => Cow::Owned(k),
                Err(_) => {
                    w.fail("a pmix.pblob whose packed KVALs do not decode");
                    w.varint(0);
                    return;
                }
            },
        };
        write_nested(w, ty, |inner| {
            inner.pack_one(&self.rank);
            write_each(inner, &kvals);
        });
    }
}

impl PartialEq for ProcBlob {
    fn eq(&self, other: &ProcBlob) -> bool {
        if self.rank != other.rank {
            return false;
        }
        if let (Body::Packed(a), Body::Packed(b)) = (&self.body, &other.body)
            && a.ty == b.ty
            && a.bytes == b.bytes
        {
            return true;
        }
        match (self.kvals(), other.kvals()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Debug for ProcBlob {
    /// As a struct of `rank` and `kvals` (decoded), or of `rank` and the packed
    /// bytes' length and error when they do not decode.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ProcBlob");
        s.field("rank", &self.rank);
        match (&self.body, self.kvals()) {
            (_, Ok(k)) => s.field("kvals", &k),
            (Body::Packed(p), Err(e)) => s.field("packed_bytes", &p.bytes.len()).field("error", &e),
            (Body::Kvals(_), Err(e)) => s.field("error", &e),
        };
        s.finish()
    }
}
