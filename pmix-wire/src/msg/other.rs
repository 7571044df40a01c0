//! JOB_CONTROL, QUERY, PUBLISH / LOOKUP / UNPUBLISH, COMPUTE_DEVICE_DISTANCES and
//! the other commands of docs/wire.md §6.10–6.13, with their replies.

use alloc::vec::Vec;

use super::{layout, read_nested, read_until_end, write_each, write_nested};
use crate::buf::{Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::DataType;
use crate::value::{
    AllocDirective, App, ByteObject, DeviceDist, Info, Kval, Pdata, Proc, Size, Status, Time, Topo,
    Uint32, WStr,
};

layout! {
    /// JOB_CONTROL (18) request (§6.12): `SIZE ntargets`, `PROC[ntargets]`,
    /// `SIZE ndirs`, `INFO[ndirs]`.
    pub struct JobControl {
        /// The target processes.
        targets: list Proc,
        /// The directives (`pmix.reg.cleanupdir`, `pmix.clnup.recurse`, …).
        directives: list Info,
    }
}

layout! {
    /// QUERY (15) request (§6.11): `SIZE nqueries`, `QUERY[nqueries]`.
    pub struct QueryInfo {
        /// The queries.
        queries: list crate::value::Query,
    }
}

layout! {
    /// The reply `STATUS`, `SIZE ninfo`, `INFO[ninfo]` of QUERY (§6.11),
    /// JOB_CONTROL (§6.12), ALLOC, MONITOR and VALIDATE_CRED (§6.13). A reply that
    /// is only the STATUS is [`super::Reply::Status`].
    pub struct InfoReply {
        /// The status.
        status: one Status,
        /// The returned information.
        info: list Info,
    }
}

layout! {
    /// PUBLISHNB (6) request (§6.13): `UINT32 uid`, `SIZE ninfo`, `INFO[ninfo]`.
    pub struct Publish {
        /// The publisher's effective uid.
        uid: one Uint32,
        /// The data to publish.
        info: list Info,
    }
}

/// LOOKUPNB (7) and UNPUBLISHNB (8) request (§6.13): `UINT32 uid`, `SIZE nkeys`,
/// then one STRING pack per key, `SIZE ninfo`, `INFO[ninfo]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Lookup {
    /// The requester's effective uid.
    pub uid: Uint32,
    /// The keys.
    pub keys: Vec<WStr>,
    /// Directives.
    pub info: Vec<Info>,
}

/// UNPUBLISHNB (8) has LOOKUPNB's layout.
pub type Unpublish = Lookup;

impl Lookup {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let uid = r.unpack_one::<Uint32>("uid")?;
        let at = r.offset();
        let n = r.unpack_one::<Size>("nkeys")?.0;
        // At most max_list keys; each is its own pack of at least two bytes:
        // bound n by what remains too before trusting it.
        r.bounded(n, r.limits().max_list, "nkeys", at)?;
        if n > r.rest().len() as u64 {
            return Err(WireError::new(
                ErrorKind::TooLarge {
                    what: "nkeys",
                    len: n,
                    limit: r.rest().len() as u64,
                },
                at,
            ));
        }
        let mut keys = Vec::new();
        for _ in 0..n {
            keys.push(r.unpack_one::<WStr>("key")?);
        }
        let info = super::read_list::<Info>(r, "info")?;
        Ok(Lookup { uid, keys, info })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&self.uid);
        w.pack_one(&Size(self.keys.len() as u64));
        write_each(w, &self.keys);
        super::write_list(w, &self.info);
    }
}

layout! {
    /// LOOKUPNB's reply (§6.13): `STATUS`, `SIZE ndata`, `PDATA[ndata]`.
    pub struct LookupReply {
        /// The status.
        status: one Status,
        /// The data found.
        data: list Pdata,
    }
}

layout! {
    /// COMPUTE_DEVICE_DISTANCES (32) request (§6.10): `TOPO topology`,
    /// `PROC_CPUSET cpuset`, `SIZE ninfo`, `INFO[ninfo]`. (A 4.2 client never
    /// manages to send it.)
    pub struct ComputeDeviceDistances {
        /// The topology.
        topo: one Topo,
        /// The cpuset.
        cpuset: one ProcCpuset,
        /// Directives (`pmix.dev.type`, `pmix.dev.id`, …).
        info: list Info,
    }
}

layout! {
    /// COMPUTE_DEVICE_DISTANCES's reply (§6.10): `STATUS`, `SIZE ndist`,
    /// `DEVICE_DIST[ndist]`.
    pub struct DistancesReply {
        /// The status.
        status: one Status,
        /// The distances.
        dists: list DeviceDist,
    }
}

layout! {
    /// SPAWNNB (9) request (§6.13): `SIZE ninfo`, `INFO[ninfo]`, `SIZE napps`,
    /// `APP[napps]`.
    pub struct Spawn {
        /// Job-level directives.
        info: list Info,
        /// The applications.
        apps: list App,
    }
}

/// SPAWNNB's reply (§6.13): `STATUS`, `STRING nspace`, then KVAL packs of the new
/// job's information until the end.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnReply {
    /// The status.
    pub status: Status,
    /// The new job's namespace (NULL allowed).
    pub nspace: Option<WStr>,
    /// The new job's information.
    pub kvals: Vec<Kval>,
}

impl SpawnReply {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SpawnReply {
            status: r.unpack_one("status")?,
            nspace: r.unpack_one("nspace")?,
            kvals: read_until_end(r, "kval")?,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&self.status);
        w.pack_one(&self.nspace);
        write_each(w, &self.kvals);
    }
}

/// A SPAWNNB reply carrying the new job's information as the server already packed
/// it for `codec`: `STATUS`, then `job`, the payload of that namespace's REQ reply
/// (`STRING nspace` then its KVALs, [`super::JobInfo`]), which is exactly the
/// `STRING nspace`, KVAL… that follow the status (a server caches that payload per
/// codec, so a spawn's answer packs nothing twice).
///
/// # Errors
/// [`ErrorKind::Unencodable`] when the status does not encode.
pub fn spawn_reply_with_job(
    codec: &crate::Codec,
    status: Status,
    job: &[u8],
) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
    w.pack_one(&status);
    w.raw(job);
    w.finish()
}

/// A CONNECTNB reply carrying the other jobs' information as the server already
/// packed it for `codec`: `STATUS`, then one `BYTE_OBJECT` per element of `jobs`,
/// each the payload of that namespace's REQ reply (`STRING nspace` then its KVALs:
/// what [`JobBlob`] decodes).
///
/// # Errors
/// [`ErrorKind::Unencodable`] when a payload is longer than the wire's sizes.
pub fn connect_reply_with_jobs(
    codec: &crate::Codec,
    status: Status,
    jobs: &[&[u8]],
) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
    w.pack_one(&status);
    for job in jobs {
        w.pack_header(DataType::ByteObject, 1);
        w.varint(job.len() as u64);
        w.raw(job);
    }
    w.finish()
}

layout! {
    /// CONNECTNB (10) and DISCONNECTNB (11) request (§6.13): `SIZE nprocs`,
    /// `PROC[nprocs]`, `SIZE ninfo`, `INFO[ninfo]`.
    pub struct Connect {
        /// The participants.
        procs: list Proc,
        /// Directives.
        info: list Info,
    }
}

/// One byte object of a CONNECTNB reply: `STRING nspace` then that job's KVAL
/// packs, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct JobBlob {
    /// The job's namespace.
    pub nspace: WStr,
    /// The job's information.
    pub kvals: Vec<Kval>,
}

/// CONNECTNB's reply (§6.13): `STATUS`, then one byte object per other
/// participating namespace until the end (in the connection's buffer type).
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectReply {
    /// The status.
    pub status: Status,
    /// The other jobs' information (at least one; without any the reply is a lone
    /// STATUS, [`super::Reply::Status`]).
    pub jobs: Vec<JobBlob>,
}

impl ConnectReply {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let status = r.unpack_one::<Status>("status")?;
        let ty = r.buffer_type();
        let mut jobs = Vec::new();
        while !r.is_empty() {
            super::one_header(r, DataType::ByteObject, "connect byte object")?;
            jobs.push(read_nested(r, ty, "connect byte object", |inner| {
                Ok(JobBlob {
                    nspace: inner.unpack_one("nspace")?,
                    kvals: read_until_end(inner, "kval")?,
                })
            })?);
        }
        Ok(ConnectReply { status, jobs })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&self.status);
        let ty = w.buffer_type();
        for j in &self.jobs {
            w.pack_header(DataType::ByteObject, 1);
            write_nested(w, ty, |inner| {
                inner.pack_one(&j.nspace);
                write_each(inner, &j.kvals);
            });
        }
    }
}

layout! {
    /// LOG (16) request (§6.13), as a 4.2 client sends it to a 3.0+ server:
    /// `TIME timestamp`, `SIZE ndata`, `INFO[ndata]`, `SIZE ndirs`, `INFO[ndirs]`.
    pub struct Log {
        /// When the log call was made.
        timestamp: one Time,
        /// The data to log.
        data: list Info,
        /// Directives.
        directives: list Info,
    }
}

layout! {
    /// ALLOC (17) request (§6.13): `ALLOC_DIRECTIVE`, `SIZE ninfo`, `INFO[ninfo]`.
    pub struct Alloc {
        /// What to do.
        directive: one AllocDirective,
        /// Details.
        info: list Info,
    }
}

layout! {
    /// MONITOR (19) request (§6.13): `INFO monitor`, `STATUS error`, `SIZE ndirs`,
    /// `INFO[ndirs]`.
    pub struct Monitor {
        /// What to monitor.
        monitor: one Info,
        /// The event code to raise.
        error: one Status,
        /// Directives.
        directives: list Info,
    }
}

layout! {
    /// GET_CREDENTIAL (20) request (§6.13): `SIZE ninfo`, `INFO[ninfo]`.
    pub struct GetCredential {
        /// Directives.
        info: list Info,
    }
}

layout! {
    /// GET_CREDENTIAL's reply (§6.13): `STATUS`, `BYTE_OBJECT cred`, `SIZE ninfo`,
    /// `INFO[ninfo]`.
    pub struct GetCredentialReply {
        /// The status.
        status: one Status,
        /// The credential.
        cred: one ByteObject,
        /// Information about it.
        info: list Info,
    }
}

layout! {
    /// VALIDATE_CRED (21) request (§6.13): `BYTE_OBJECT cred`, `SIZE ndirs`,
    /// `INFO[ndirs]`.
    pub struct ValidateCred {
        /// The credential.
        cred: one ByteObject,
        /// Directives.
        directives: list Info,
    }
}

/// PROC_CPUSET as a top-level pack element: hwloc's list syntax (`0-3,8`), NULL
/// if unbound (a 4.2 sender can only pack NULL, docs/wire.md §5.4).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProcCpuset(pub Option<WStr>);

impl crate::buf::Element for ProcCpuset {
    const TYPE: DataType = DataType::ProcCpuset;

    fn encode(&self, w: &mut Writer) {
        w.string(self.0.as_ref().map(WStr::as_bytes));
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ProcCpuset(r.string("cpuset")?.map(WStr::from)))
    }
}
