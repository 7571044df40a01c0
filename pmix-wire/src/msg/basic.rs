//! The commands of a plain PMIx job: ABORT, COMMIT, FENCENB, GETNB and its reply
//! (docs/wire.md §6.3–6.6).

use alloc::vec::Vec;

use super::{
    layout, read_nested, read_until_end, read_until_end_bounded, write_each, write_nested,
};
use crate::buf::{Reader, Writer};
use crate::error::WireError;
use crate::types::DataType;
use crate::value::{ByteObject, Info, Kval, Proc, Rank, Scope, Status, WStr};

layout! {
    /// ABORT (1) request (§6.3): `STATUS status`, `STRING message`, `SIZE nprocs`,
    /// `PROC[nprocs]` (no procs: the whole job).
    pub struct Abort {
        /// The exit status passed to `PMIx_Abort`.
        status: one Status,
        /// The message (NULL allowed).
        message: one Option<WStr>,
        /// The processes to abort; empty for the caller's whole job.
        procs: list Proc,
    }
}

layout! {
    /// FENCENB (3) request (§6.5): `SIZE nprocs`, `PROC[nprocs]`, `SIZE ninfo`,
    /// `INFO[ninfo]`.
    pub struct FenceNb {
        /// The participants (`{nspace, WILDCARD}` for a whole job).
        procs: list Proc,
        /// Directives (`pmix.collect`, `pmix.timeout`, …).
        info: list Info,
    }
}

layout! {
    /// GETNB (4) request (§6.6): `STRING nspace`, `PROC_RANK rank`, `SIZE ninfo`,
    /// `INFO[ninfo]`, `STRING key`.
    pub struct GetNb {
        /// The target's namespace.
        nspace: one WStr,
        /// The target's rank (WILDCARD for job-level data).
        rank: one Rank,
        /// Directives (`pmix.immediate`, `pmix.timeout`, …).
        info: list Info,
        /// The key (NULL: all of the target's data).
        key: one Option<WStr>,
    }
}

/// The info key a pmix-rs client adds to a fence of a rank-state round
/// ([`FenceNbReply`]): its value, a byte object, is this process's contribution.
pub const FT_CONTRIBUTION_KEY: &str = crate::keys::RS_FT_CONTRIBUTION;

/// FENCENB's reply with the contributions of a rank-state round: a pmix-rs
/// extension of §6.5, whose 4.2 reply is a lone STATUS. Our server answers it,
/// the same bytes to every participant, to a fence whose requests carried
/// [`FT_CONTRIBUTION_KEY`]: `STATUS`, `SIZE n`, `PROC[n]`, `SIZE n`,
/// `BYTE_OBJECT[n]`, the `i`th byte object being what the `i`th process gave
/// (every participant that joined, in the order they joined). An OpenPMIx
/// server ignores the key and answers a lone STATUS.
#[derive(Clone, Debug, PartialEq)]
pub struct FenceNbReply {
    /// The fence's status.
    pub status: Status,
    /// Who contributed, and what, in one list.
    pub contributions: Vec<(Proc, ByteObject)>,
}

impl FenceNbReply {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let status = r.unpack_one::<Status>("status")?;
        let procs = super::read_list::<Proc>(r, "fence contributors")?;
        let at = r.offset();
        let data = super::read_list::<ByteObject>(r, "fence contributions")?;
        if data.len() != procs.len() {
            return Err(WireError::new(
                crate::error::ErrorKind::BadCount {
                    what: "fence contributions (one per contributor)",
                    found: data.len() as i64,
                },
                at,
            ));
        }
        Ok(FenceNbReply {
            status,
            contributions: procs.into_iter().zip(data).collect(),
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&self.status);
        let (procs, data): (Vec<Proc>, Vec<ByteObject>) =
            self.contributions.iter().cloned().unzip();
        super::write_list(w, &procs);
        super::write_list(w, &data);
    }
}

/// One COMMIT bucket (§6.4): a `SCOPE` pack, then a `BUFFER` pack whose bytes are
/// KVAL packs of one KVAL each, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitBucket {
    /// The scope (1 LOCAL, 2 REMOTE).
    pub scope: Scope,
    /// The nested buffer's own type (the BUFFER element's type byte).
    pub buffer_type: crate::types::BufferType,
    /// The values, in order.
    pub kvals: Vec<Kval>,
}

/// COMMIT (2) request (§6.4): zero or more buckets until the end of the payload
/// (none when nothing was put since the last commit).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Commit {
    /// The buckets, in order (LOCAL then REMOTE as the 4.2 client sends them).
    pub buckets: Vec<CommitBucket>,
}

impl Commit {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let mut buckets = Vec::new();
        while !r.is_empty() {
            let scope = r.unpack_one::<Scope>("commit scope")?;
            super::one_header(r, DataType::Buffer, "commit buffer")?;
            let at = r.offset();
            let code = r.u8("commit buffer type")?;
            let ty = crate::types::BufferType::from_code(code)
                .ok_or_else(|| super::bad("commit buffer type", "not 1 or 2", at))?;
            let kvals = read_nested(r, ty, "commit buffer", |inner| {
                read_until_end_bounded::<Kval>(inner, inner.limits().max_list, "commit kval")
            })?;
            buckets.push(CommitBucket {
                scope,
                buffer_type: ty,
                kvals,
            });
        }
        Ok(Commit { buckets })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        for b in &self.buckets {
            w.pack_one(&b.scope);
            w.pack_header(DataType::Buffer, 1);
            w.u8(b.buffer_type.code());
            write_nested(w, b.buffer_type, |inner| write_each(inner, &b.kvals));
        }
    }
}

/// The contents of one byte object of a GETNB reply (§6.6): a `PROC` pack, then
/// KVAL packs until the byte object ends, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcData {
    /// Whose data (rank UNDEF: the requester itself).
    pub proc: Proc,
    /// The values.
    pub kvals: Vec<Kval>,
}

/// GETNB's reply (§6.6): `STATUS`, then byte objects until the end, each holding
/// a buffer of the connection's type. A reply without byte objects is a lone
/// STATUS: [`super::Reply::Status`].
#[derive(Clone, Debug, PartialEq)]
pub struct GetNbReply {
    /// The status.
    pub status: Status,
    /// The byte objects' contents, in order (at least one).
    pub data: Vec<ProcData>,
}

impl GetNbReply {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let status = r.unpack_one::<Status>("status")?;
        let ty = r.buffer_type();
        let mut data = Vec::new();
        while !r.is_empty() {
            super::one_header(r, DataType::ByteObject, "get reply byte object")?;
            data.push(read_nested(r, ty, "get reply byte object", |inner| {
                let proc = inner.unpack_one::<Proc>("proc")?;
                let kvals = read_until_end::<Kval>(inner, "kval")?;
                Ok(ProcData { proc, kvals })
            })?);
        }
        Ok(GetNbReply { status, data })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&self.status);
        let ty = w.buffer_type();
        for d in &self.data {
            w.pack_header(DataType::ByteObject, 1);
            write_nested(w, ty, |inner| {
                inner.pack_one(&d.proc);
                write_each(inner, &d.kvals);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use crate::types::BufferType;

    #[test]
    fn a_fence_reply_with_more_procs_than_contributions_is_refused() {
        let mut w = Writer::new(BufferType::NonDescribed);
        w.pack_one(&Status(0));
        super::super::write_list(&mut w, &[Proc::new("job", 0), Proc::new("job", 1)]);
        super::super::write_list(&mut w, &[ByteObject(alloc::vec![7])]);
        let bytes = w.as_bytes().to_vec();
        let mut r = Reader::new(&bytes, BufferType::NonDescribed, Limits::DEFAULT);
        let e = FenceNbReply::read(&mut r).unwrap_err();
        assert!(
            matches!(e.kind, crate::error::ErrorKind::BadCount { found: 1, .. }),
            "{e}"
        );
    }
}
