//! What a client knows without asking: its job's information from the REQ reply,
//! the values it put, and what earlier GETNB replies brought (docs/wire.md §6.1, §6.4,
//! §6.6).
//!
//! **Job information.** Job-level values (rank WILDCARD) are looked up in the job's
//! own KVALs, then in this node's array (`pmix.lpeers`, `pmix.local.size`, … of the
//! node named by this process's own `pmix.pblob`, else by the host name it was
//! given, else the first array: a server sends its own node's first), the session
//! array and the app array, as OpenPMIx's `hash` store answers them. A get with
//! `PMIX_NODE_INFO` and another node's `PMIX_HOSTNAME` or `PMIX_NODEID` reads that
//! node's array alone ([`Store::node_level`]). A rank's values come from its
//! `pmix.pblob`, decoded the first time one of them is asked for; what it lacks of
//! its node (`pmix.lpeers`, `pmix.lldr`, `pmix.local.size` of a rank of another
//! node) and of its session (`pmix.tmpdir`, `pmix.tdir.rmclean`, `pmix.univ.size`)
//! comes from there, as the `hash` store answers ([`Store::rank_fallback`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use pmix_wire::keys;
use pmix_wire::msg::{JobInfo, JobItem, ProcBlob};
use pmix_wire::nodestore::{Segment, WILDCARD};
use pmix_wire::{Info, Kval, Scope, Value};

use crate::os::Mapping;

use crate::error::Error;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Values in the order their keys first came, each key once, found by key in
/// O(1): a process that puts or gets thousands of keys pays for each once, not
/// for every key before it.
#[derive(Default)]
struct Keyed {
    list: Vec<Kval>,
    index: HashMap<Vec<u8>, usize>,
}

impl Keyed {
    /// Files `kv`, replacing the value of its key if there is one.
    fn upsert(&mut self, kv: &Kval) {
        match self.index.get(kv.key.as_bytes()) {
            Some(&i) => self.list[i].value = kv.value.clone(),
            None => {
                self.index
                    .insert(kv.key.as_bytes().to_vec(), self.list.len());
                self.list.push(kv.clone());
            }
        }
    }

    /// The value of `key`.
    fn get(&self, key: &str) -> Option<&Value> {
        self.index.get(key.as_bytes()).map(|&i| &self.list[i].value)
    }
}

/// The values this process put, by where they go at commit.
#[derive(Default)]
pub(crate) struct Puts {
    /// LOCAL and GLOBAL values (the LOCAL bucket).
    local: Keyed,
    /// REMOTE and GLOBAL values (the REMOTE bucket).
    remote: Keyed,
    /// Every value, whatever its scope (what this process's own Get sees).
    own: Keyed,
}

/// The job information read from a node-store segment mapped read-only
/// (docs/serving.md §5): nothing of it is copied but what a get asks for, decoded
/// then.
struct Mapped {
    seg: Segment<Mapping>,
    /// Where the segment is: the job-level `pmixrs.nstore` (what tells a program,
    /// and a test, that it reads the node store).
    path: String,
    /// What the REQ reply added of a rank's own (its second blob: what the server
    /// found when it connected), read before the segment.
    late: HashMap<u32, Vec<Kval>>,
    /// Every node array, this node's first, decoded the first time a node-level
    /// get needs one.
    nodes: OnceLock<Vec<Vec<Info>>>,
}

impl Mapped {
    /// A job-level value: the segment's, or where the segment is.
    fn job_value(&self, key: &str) -> Option<Value> {
        // The arrays of nodes and apps are the segment's own layout, not job-level
        // keys.
        if key == keys::NODE_INFO_ARRAY || key == keys::APP_INFO_ARRAY {
            return None;
        }
        if key == keys::RS_NODE_STORE {
            return Some(Value::from(self.path.as_str()));
        }
        self.seg.get(WILDCARD, key).and_then(Result::ok)
    }

    /// A value of rank `rank`: what the REQ reply added of its own, else the
    /// segment's.
    ///
    /// # Errors
    /// [`Error::Internal`] when the rank's record does not decode.
    fn rank_value(&self, rank: u32, key: &str) -> Result<Option<Value>, Error> {
        if let Some(v) = self
            .late
            .get(&rank)
            .and_then(|l| l.iter().find(|k| k.key == key))
        {
            return Ok(Some(v.value.clone()));
        }
        self.seg.get(rank, key).transpose().map_err(|e| {
            Error::Internal(format!(
                "rank {rank}'s job information does not decode: {e}"
            ))
        })
    }

    /// Every node array, this node's first.
    fn nodes(&self) -> &[Vec<Info>] {
        self.nodes.get_or_init(|| {
            let Some(rec) = self.seg.record(WILDCARD) else {
                return Vec::new();
            };
            rec.get_all(keys::NODE_INFO_ARRAY)
                .map(|v| v.ok().as_ref().map_or_else(Vec::new, infos_of))
                .collect()
        })
    }
}

/// The INFOs of a DATA_ARRAY of INFO, owned.
fn infos_of(v: &Value) -> Vec<Info> {
    v.infos()
        .map(|i| i.into_iter().cloned().collect())
        .unwrap_or_default()
}

/// The job information a REQ reply carried, decoded as it came: a rank's blob is
/// decoded the first time one of its values is asked for.
#[derive(Default)]
struct Decoded {
    job: Vec<Kval>,
    node: Vec<Info>,
    /// Every other node's array, as the job information gave them.
    other_nodes: Vec<Vec<Info>>,
    session: Vec<Info>,
    app: Vec<Info>,
    blobs: HashMap<u32, ProcBlob>,
    decoded: Mutex<HashMap<u32, Arc<Vec<Kval>>>>,
}

/// Where a client's job information is: mapped from the node store, or decoded
/// from the REQ reply.
enum JobData {
    Mapped(Mapped),
    Decoded(Decoded),
}

/// A client's store.
pub(crate) struct Store {
    job: JobData,
    peers: Mutex<HashMap<(String, u32), Keyed>>,
    /// The fence segment of this job our server named last (docs/serving.md
    /// §5.6), until this process's next fence.
    fence: Mutex<Option<Arc<Segment<Mapping>>>>,
    puts: Mutex<Puts>,
}

impl Decoded {
    /// The job information of the REQ reply `job` of rank `rank` on host
    /// `hostname`.
    fn new(job: JobInfo, rank: u32, hostname: &str) -> Decoded {
        let mut d = Decoded::default();
        let mut nodes: Vec<Vec<Info>> = Vec::new();
        for item in job.items {
            match item {
                JobItem::Value(k) => d.job.push(k),
                JobItem::Session(v) => d.session = v,
                JobItem::App(v) => {
                    if d.app.is_empty() {
                        d.app = v;
                    }
                }
                JobItem::Node(v) => nodes.push(v),
                JobItem::Proc(p) => match d.blobs.remove(&p.rank.0) {
                    // A second blob of one rank (a server adds a rank's own late
                    // values, such as its PMIX_DEVICE_DISTANCES, after the blob it
                    // packed for every rank): its values join the first's, a key
                    // given twice taking the later value.
                    // A blob that does not decode stays as it came (its error is
                    // what a get of that rank answers).
                    Some(first) => {
                        let rank = p.rank;
                        let merged = match (first.kvals(), p.kvals()) {
                            (Ok(a), Ok(b)) => {
                                let mut kvals = a.into_owned();
                                for k in b.iter() {
                                    kvals.retain(|old| old.key != k.key);
                                    kvals.push(k.clone());
                                }
                                ProcBlob::new(rank, kvals)
                            }
                            _ => first,
                        };
                        d.blobs.insert(rank.0, merged);
                    }
                    None => {
                        d.blobs.insert(p.rank.0, p);
                    }
                },
            }
        }
        // This node: the one this rank's own blob names (the host's name for it),
        // else the host name given, else the first (a server sends its own first).
        let own_node = d.rank_value(rank, pmix_wire::keys::HOSTNAME).ok().flatten();
        fn named(n: &[Info], name: Option<&str>) -> bool {
            name.is_some()
                && n.iter()
                    .any(|i| i.key == pmix_wire::keys::HOSTNAME && i.value.as_str() == name)
        }
        let own = own_node.as_ref().and_then(Value::as_str);
        let here = nodes
            .iter()
            .position(|n| named(n, own))
            .or_else(|| nodes.iter().position(|n| named(n, Some(hostname))))
            .or(if nodes.is_empty() { None } else { Some(0) });
        if let Some(i) = here {
            d.node = nodes.remove(i);
        }
        d.other_nodes = nodes;
        d
    }

    /// A value from rank `rank`'s blob.
    ///
    /// # Errors
    /// [`Error::Internal`] when the blob's values do not decode.
    fn rank_value(&self, rank: u32, key: &str) -> Result<Option<Value>, Error> {
        let Some(blob) = self.blobs.get(&rank) else {
            return Ok(None);
        };
        let kvals = {
            let mut decoded = lock(&self.decoded);
            match decoded.get(&rank) {
                Some(k) => Arc::clone(k),
                None => {
                    let k = Arc::new(
                        blob.kvals()
                            .map_err(|e| {
                                Error::Internal(format!(
                                    "rank {rank}'s job information does not decode: {e}"
                                ))
                            })?
                            .into_owned(),
                    );
                    decoded.insert(rank, Arc::clone(&k));
                    k
                }
            }
        };
        Ok(kvals
            .iter()
            .find(|kv| kv.key.as_bytes() == key.as_bytes())
            .map(|kv| kv.value.clone()))
    }

    /// A job-level value: the job's own, else this node's, the session's or the
    /// app's.
    fn job_value(&self, key: &str) -> Option<Value> {
        let k = key.as_bytes();
        self.job
            .iter()
            .find(|kv| kv.key.as_bytes() == k)
            .map(|kv| kv.value.clone())
            .or_else(|| {
                [&self.node, &self.session, &self.app]
                    .into_iter()
                    .flat_map(|v| v.iter())
                    .find(|i| i.key.as_bytes() == k)
                    .map(|i| i.value.clone())
            })
    }
}

impl Store {
    fn with(job: JobData) -> Store {
        Store {
            job,
            peers: Mutex::new(HashMap::new()),
            fence: Mutex::new(None),
            puts: Mutex::new(Puts::default()),
        }
    }

    /// The store of rank `rank` of a job whose REQ reply is `job`, on host
    /// `hostname`.
    pub(crate) fn new(job: JobInfo, rank: u32, hostname: &str) -> Store {
        Store::with(JobData::Decoded(Decoded::new(job, rank, hostname)))
    }

    /// The store whose job information is the node-store segment `seg` (its
    /// namespace checked by the caller), with the items `extra` of the REQ reply
    /// that named it (a rank's own second blob).
    ///
    /// The segment's job-level keys are its first node array's: the server
    /// writes a segment only where that is the node every local rank's own
    /// `pmix.hname` names (the one a store made from the message takes).
    ///
    /// # Errors
    /// A description of why the segment cannot stand for the job information: a
    /// blob of `extra` that does not decode. The caller then asks for the job
    /// information by message.
    pub(crate) fn mapped(
        seg: Segment<Mapping>,
        path: &str,
        extra: Vec<JobItem>,
    ) -> Result<Store, String> {
        let mut late: HashMap<u32, Vec<Kval>> = HashMap::new();
        for item in extra {
            if let JobItem::Proc(p) = item {
                let kvals = p
                    .kvals()
                    .map_err(|e| format!("rank {}'s blob does not decode: {e}", p.rank.0))?;
                let list = late.entry(p.rank.0).or_default();
                for k in kvals.iter() {
                    list.retain(|old| old.key != k.key);
                    list.push(k.clone());
                }
            }
        }
        Ok(Store::with(JobData::Mapped(Mapped {
            seg,
            path: path.to_owned(),
            late,
            nodes: OnceLock::new(),
        })))
    }

    /// Whether the job information was mapped from the node store.
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.job, JobData::Mapped(_))
    }

    /// This node's array and every other node's.
    fn node_arrays(&self) -> (&[Info], &[Vec<Info>]) {
        match &self.job {
            JobData::Mapped(m) => match m.nodes().split_first() {
                Some((this, others)) => (this, others),
                None => (&[], &[]),
            },
            JobData::Decoded(d) => (&d.node, &d.other_nodes),
        }
    }

    /// The array of the node named `name`, or of id `id` (this node's included).
    fn node_array(&self, name: Option<&str>, id: Option<u32>) -> Option<&[Info]> {
        let (this, others) = self.node_arrays();
        std::iter::once(this)
            .chain(others.iter().map(Vec::as_slice))
            .find(|arr| {
                arr.iter().any(|i| {
                    (name.is_some()
                        && i.key == pmix_wire::keys::HOSTNAME
                        && i.value.as_str() == name)
                        || (id.is_some()
                            && i.key == pmix_wire::keys::NODEID
                            && i.value.as_u64() == id.map(u64::from))
                })
            })
    }

    /// A node-level get (`PMIX_NODE_INFO`) of `key` for the node named `name` or of
    /// id `id` (neither: this node): this node's answers as a job-level get's;
    /// another node's from its array alone, never its identity (`pmix.hname`,
    /// `pmix.nodeid`), a key it lacks `Some(None)`. `None` when no array names
    /// such a node (only the server could answer).
    pub(crate) fn node_level(
        &self,
        name: Option<&str>,
        id: Option<u32>,
        key: &str,
    ) -> Option<Option<Value>> {
        let here = self.node_arrays().0;
        let arr = if name.is_none() && id.is_none() {
            Some(here)
        } else {
            self.node_array(name, id)
        }?;
        if std::ptr::eq(arr, here) {
            return Some(self.job_value(key));
        }
        if key == pmix_wire::keys::HOSTNAME || key == pmix_wire::keys::NODEID {
            return Some(None);
        }
        Some(
            arr.iter()
                .find(|i| i.key.as_bytes() == key.as_bytes())
                .map(|i| i.value.clone()),
        )
    }

    /// What a rank-level get of `key` for `rank` finds beyond the rank's own blob,
    /// as the `hash` store answers it: for a rank of another node, that node's array
    /// (its peers, leader and count, not its identity); for every rank, the
    /// session-level values (`pmix.tmpdir`, `pmix.tdir.rmclean`, `pmix.univ.size`).
    pub(crate) fn rank_fallback(&self, rank: u32, key: &str) -> Option<Value> {
        const NODE: [&str; 3] = [
            pmix_wire::keys::LOCAL_PEERS,
            pmix_wire::keys::LOCALLDR,
            pmix_wire::keys::LOCAL_SIZE,
        ];
        if NODE.contains(&key) {
            let host = self
                .rank_value(rank, pmix_wire::keys::HOSTNAME)
                .ok()
                .flatten()?;
            let arr = self.node_array(host.as_str(), None)?;
            if std::ptr::eq(arr, self.node_arrays().0) {
                return None;
            }
            return arr
                .iter()
                .find(|i| i.key.as_bytes() == key.as_bytes())
                .map(|i| i.value.clone());
        }
        if pmix_wire::keys::RANK_SESSION_KEYS.contains(&key) && self.has_rank(rank) {
            return self.job_value(key);
        }
        None
    }

    /// Whether the job information holds values of `rank`.
    fn has_rank(&self, rank: u32) -> bool {
        match &self.job {
            JobData::Mapped(m) => m.late.contains_key(&rank) || m.seg.record(rank).is_some(),
            JobData::Decoded(d) => d.blobs.contains_key(&rank),
        }
    }

    /// The value of `key` in the array of node `hostname` (`None`: this node).
    pub(crate) fn node_value(&self, hostname: Option<&str>, key: &str) -> Option<Value> {
        let find = |arr: &[Info]| {
            arr.iter()
                .find(|i| i.key.as_bytes() == key.as_bytes())
                .map(|i| i.value.clone())
        };
        let named = |arr: &&[Info]| {
            arr.iter()
                .any(|i| i.key == pmix_wire::keys::HOSTNAME && i.value.as_str() == hostname)
        };
        let (this, others) = self.node_arrays();
        match hostname {
            None => find(this),
            Some(_) => std::iter::once(this)
                .chain(others.iter().map(Vec::as_slice))
                .find(named)
                .and_then(find),
        }
    }

    /// The host names of every node the job information describes, this one first.
    pub(crate) fn hostnames(&self) -> Vec<String> {
        let (this, others) = self.node_arrays();
        std::iter::once(this)
            .chain(others.iter().map(Vec::as_slice))
            .filter_map(|arr| {
                arr.iter()
                    .find(|i| i.key == pmix_wire::keys::HOSTNAME)
                    .and_then(|i| i.value.as_str().map(str::to_owned))
            })
            .collect()
    }

    /// A job-level value of this job.
    pub(crate) fn job_value(&self, key: &str) -> Option<Value> {
        match &self.job {
            JobData::Mapped(m) => m.job_value(key),
            JobData::Decoded(d) => d.job_value(key),
        }
    }

    /// A value from rank `rank`'s blob in the job information.
    ///
    /// # Errors
    /// [`Error::Internal`] when the blob's values do not decode.
    pub(crate) fn rank_value(&self, rank: u32, key: &str) -> Result<Option<Value>, Error> {
        match &self.job {
            JobData::Mapped(m) => m.rank_value(rank, key),
            JobData::Decoded(d) => d.rank_value(rank, key),
        }
    }

    /// A value a GETNB reply brought for `nspace`:`rank`.
    pub(crate) fn peer_value(&self, nspace: &str, rank: u32, key: &str) -> Option<Value> {
        lock(&self.peers)
            .get(&(nspace.to_owned(), rank))
            .and_then(|kv| kv.get(key))
            .cloned()
    }

    /// A value of `nspace`:`rank` in the fence segment mapped last (`None`: none
    /// mapped, another namespace's, or not there).
    pub(crate) fn fence_value(&self, nspace: &str, rank: u32, key: &str) -> Option<Value> {
        let seg = lock(&self.fence).clone()?;
        if seg.nspace() != nspace {
            return None;
        }
        seg.get(rank, key).and_then(Result::ok)
    }

    /// Maps the fence segment at `path` in place of the last; one that cannot be
    /// mapped, or parsed, is left out (gets then go to the server).
    pub(crate) fn map_fence_segment(&self, path: &str) {
        let seg = Mapping::file(std::path::Path::new(path))
            .ok()
            .and_then(|m| Segment::parse_lazy(m).ok());
        *lock(&self.fence) = seg.map(Arc::new);
    }

    /// Forgets the fence segment mapped last (its data is older than what the
    /// fence starting now brings).
    pub(crate) fn forget_fence_segment(&self) {
        *lock(&self.fence) = None;
    }

    /// Files what a GETNB reply brought for `nspace`:`rank` (a value already there
    /// is replaced).
    pub(crate) fn add_peer_values(&self, nspace: &str, rank: u32, kvals: &[Kval]) {
        let mut peers = lock(&self.peers);
        let list = peers.entry((nspace.to_owned(), rank)).or_default();
        for kv in kvals {
            list.upsert(kv);
        }
    }

    /// A value this process put.
    pub(crate) fn own_value(&self, key: &str) -> Option<Value> {
        lock(&self.puts).own.get(key).cloned()
    }

    /// Files a value this process puts in `scope`. Keys starting with `pmix` stay in
    /// this process (OpenPMIx never sends them), as do values of scope UNDEF or
    /// INTERNAL.
    pub(crate) fn put(&self, scope: Scope, kv: Kval) {
        let mut puts = lock(&self.puts);
        puts.own.upsert(&kv);
        if kv.key.as_bytes().starts_with(b"pmix") {
            return;
        }
        if scope == Scope::LOCAL || scope == Scope::GLOBAL {
            puts.local.upsert(&kv);
        }
        if scope == Scope::REMOTE || scope == Scope::GLOBAL {
            puts.remote.upsert(&kv);
        }
    }

    /// The LOCAL and REMOTE buckets of a commit: every value put so far (a commit
    /// resends them all, as OpenPMIx's).
    pub(crate) fn buckets(&self) -> (Vec<Kval>, Vec<Kval>) {
        let puts = lock(&self.puts);
        (puts.local.list.clone(), puts.remote.list.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_wire::{Rank, WStr};

    fn job(items: Vec<JobItem>) -> JobInfo {
        JobInfo {
            nspace: WStr::from("job"),
            items,
        }
    }

    #[test]
    fn a_second_blob_of_a_rank_adds_its_values_and_a_repeated_key_takes_the_later() {
        let first = ProcBlob::new(Rank(1), vec![Kval::new("a", 1u32), Kval::new("b", "first")]);
        let second = ProcBlob::new(
            Rank(1),
            vec![Kval::new("b", "second"), Kval::new("c", true)],
        );
        let other = ProcBlob::new(Rank(2), vec![Kval::new("a", 2u32)]);
        let store = Store::new(
            job(vec![
                JobItem::Proc(first),
                JobItem::Proc(other),
                JobItem::Proc(second),
            ]),
            1,
            "node0",
        );
        assert_eq!(store.rank_value(1, "a").unwrap(), Some(Value::Uint32(1)));
        assert_eq!(
            store
                .rank_value(1, "b")
                .unwrap()
                .as_ref()
                .and_then(Value::as_str),
            Some("second")
        );
        assert_eq!(store.rank_value(1, "c").unwrap(), Some(Value::Bool(true)));
        assert_eq!(store.rank_value(2, "a").unwrap(), Some(Value::Uint32(2)));
    }
}
