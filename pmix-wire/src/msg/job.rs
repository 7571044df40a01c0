//! REQ's reply, the job-info blob (docs/wire.md §6.1): `STRING nspace`, then KVAL
//! packs until the end, with the session, node and app arrays decoded and the
//! per-process blobs' ranks (their values stay packed until asked for:
//! [`ProcBlob`]).

use alloc::vec::Vec;

use super::pblob::ProcBlob;
use crate::buf::{Element, Reader, Writer};
use crate::error::WireError;
use crate::types::DataType;
use crate::value::{DataArray, Info, Kval, Value, WStr, req_bytes};

/// The key of a per-process blob.
pub const PROC_BLOB_KEY: &str = crate::keys::PROC_BLOB;
/// The key of the session array.
pub const SESSION_ARRAY_KEY: &str = crate::keys::SESSION_INFO_ARRAY;
/// The key of a node array.
pub const NODE_ARRAY_KEY: &str = crate::keys::NODE_INFO_ARRAY;
/// The key of an app array.
pub const APP_ARRAY_KEY: &str = crate::keys::APP_INFO_ARRAY;

/// One KVAL of the job-info blob, typed by its key.
///
/// A KVAL `pmix.pblob` whose value is a BYTE_OBJECT is always [`JobItem::Proc`]
/// (its bytes must hold a rank, or decoding fails; the values after it are
/// decoded when asked for, [`ProcBlob::kvals`]), and one of the array keys
/// whose value is a DATA_ARRAY of INFO is always the typed array;
/// [`JobItem::Value`] holds every other KVAL, and encoding refuses a
/// [`JobItem::Value`] that should have been typed (it would decode as another
/// item).
#[derive(Clone, Debug, PartialEq)]
pub enum JobItem {
    /// Any other value (job-level, filed under rank WILDCARD), in order.
    Value(Kval),
    /// `pmix.ssn.arr`: session-level information.
    Session(Vec<Info>),
    /// `pmix.node.arr`: one node's information (`pmix.hname`, `pmix.nodeid`
    /// first).
    Node(Vec<Info>),
    /// `pmix.app.arr`: one app's information.
    App(Vec<Info>),
    /// `pmix.pblob`: one process's data.
    Proc(ProcBlob),
}

/// REQ's reply (§6.1): the job's namespace (never NULL), then its information in
/// the order sent.
#[derive(Clone, Debug, PartialEq)]
pub struct JobInfo {
    /// The namespace; the client checks it is its own.
    pub nspace: WStr,
    /// The KVALs, typed, in order.
    pub items: Vec<JobItem>,
}

fn array_kind(key: &WStr) -> Option<fn(Vec<Info>) -> JobItem> {
    match key.as_str()? {
        crate::keys::SESSION_INFO_ARRAY => Some(JobItem::Session),
        crate::keys::NODE_INFO_ARRAY => Some(JobItem::Node),
        crate::keys::APP_INFO_ARRAY => Some(JobItem::App),
        _ => None,
    }
}

/// The INFOs of a DATA_ARRAY of INFO.
fn infos(v: &Value) -> Option<Vec<Info>> {
    match v {
        Value::DataArray(a) if a.ty == DataType::Info => a
            .items
            .iter()
            .map(|it| match it {
                Value::Info(i) => Some((**i).clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

impl JobInfo {
    /// The job-level values ([`JobItem::Value`]), in order.
    pub fn values(&self) -> impl Iterator<Item = &Kval> {
        self.items.iter().filter_map(|i| match i {
            JobItem::Value(k) => Some(k),
            _ => None,
        })
    }

    /// The node arrays, in order.
    pub fn nodes(&self) -> impl Iterator<Item = &[Info]> {
        self.items.iter().filter_map(|i| match i {
            JobItem::Node(n) => Some(n.as_slice()),
            _ => None,
        })
    }

    /// The per-process blobs, in order.
    pub fn procs(&self) -> impl Iterator<Item = &ProcBlob> {
        self.items.iter().filter_map(|i| match i {
            JobItem::Proc(p) => Some(p),
            _ => None,
        })
    }

    /// The first job-level value of `key`.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.values()
            .find(|k| k.key.as_bytes() == key.as_bytes())
            .map(|k| &k.value)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let nspace = r.unpack_one::<WStr>("nspace")?;
        // A guess: one item per 128 bytes left (a per-process blob takes about
        // 200), under one byte reserved per input byte; pushing grows the rest. Not
        // capped at `MAX_PREALLOC` like a nested array's: there is one such list
        // per reply, and a 1,024-rank job has more items than that.
        let mut items = Vec::with_capacity(r.rest().len() / 128);
        while !r.is_empty() {
            items.push(read_item(r)?);
        }
        Ok(JobInfo { nspace, items })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&self.nspace);
        write_items(w, &self.items);
    }

    /// `items` packed as they follow the namespace in a REQ reply (the reply reads
    /// items until its payload ends, so these bytes may be appended to a packed
    /// [`Reply::Req`](crate::Reply::Req)'s: a server adds a rank's own late items to
    /// the blob it packed once for every rank).
    ///
    /// # Errors
    /// As [`Reply::encode`](crate::Reply::encode): a count or length that does not fit
    /// the wire, a [`JobItem::Value`] that would decode as a typed item.
    pub fn encode_items(items: &[JobItem], codec: &crate::Codec) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
        write_items(&mut w, items);
        w.finish()
    }

    /// The payload of a [`Reply::Req`](crate::Reply::Req) of namespace `nspace` whose
    /// items are those of `parts`, in order: what encoding the reply gives, without
    /// gathering the items into one list first (a server keeps its blob's items in
    /// parts, and packs them once per client version).
    ///
    /// # Errors
    /// As [`JobInfo::encode_items`].
    pub fn encode_parts(
        nspace: &WStr,
        parts: &[&[JobItem]],
        codec: &crate::Codec,
    ) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
        w.pack_one(nspace);
        for part in parts {
            write_items(&mut w, part);
        }
        w.finish()
    }
}

fn write_items(w: &mut Writer, items: &[JobItem]) {
    let ty = w.buffer_type();
    for item in items {
        match item {
            JobItem::Value(k) => {
                let typed = (k.key.as_bytes() == PROC_BLOB_KEY.as_bytes()
                    && matches!(k.value, Value::ByteObject(_)))
                    || (array_kind(&k.key).is_some() && infos(&k.value).is_some());
                if typed {
                    w.fail("a job-info value that decodes as a typed item");
                }
                w.pack_one(k);
            }
            JobItem::Session(v) => write_array(w, SESSION_ARRAY_KEY, v),
            JobItem::Node(v) => write_array(w, NODE_ARRAY_KEY, v),
            JobItem::App(v) => write_array(w, APP_ARRAY_KEY, v),
            JobItem::Proc(p) => {
                w.pack_header(DataType::Kval, 1);
                WStr::from(PROC_BLOB_KEY).encode(w);
                w.data_type(DataType::ByteObject);
                p.write(w, ty);
            }
        }
    }
}

fn write_array(w: &mut Writer, key: &str, v: &[Info]) {
    w.pack_one(&Kval::new(key, DataArray::infos(v.iter().cloned())));
}

fn read_item(r: &mut Reader<'_>) -> Result<JobItem, WireError> {
    // Read the key and peek at the value's type: a per-process blob is decoded
    // from the bytes in place (its nested reader counts offsets from the outer
    // payload); any other KVAL goes on from the key (what `Kval::decode` reads).
    let mut p = r.clone();
    super::one_header(&mut p, DataType::Kval, "kval")?;
    let key = req_bytes(&mut p, "kval key")?;
    if key == PROC_BLOB_KEY.as_bytes() {
        let mut q = p.clone();
        if q.data_type("value type")? == DataType::ByteObject {
            let ty = q.buffer_type();
            let blob = q.descend(|q| ProcBlob::read(q, ty))?;
            *r = q;
            return Ok(JobItem::Proc(blob));
        }
    }
    let value = Value::decode(&mut p)?;
    *r = p;
    let kval = Kval {
        key: WStr::from(key),
        value,
    };
    if let Some(make) = array_kind(&kval.key)
        && let Some(v) = infos(&kval.value)
    {
        return Ok(make(v));
    }
    Ok(JobItem::Value(kval))
}
