//! What a client knows without asking: its job's information from the REQ reply,
//! the values it put, and what earlier GETNB replies brought (docs/wire.md §6.1, §6.4,
//! §6.6).
//!
//! **Job information.** Job-level values (rank WILDCARD) are looked up in the job's
//! own KVALs, then in this node's array (`pmix.lpeers`, `pmix.local.size`, … of the
//! node whose `pmix.hname` is this host's, else the only one), the session array and
//! the app array, as OpenPMIx's `hash` store answers them. A rank's values come from
//! its `pmix.pblob`, decoded the first time one of them is asked for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix_wire::msg::{JobInfo, JobItem, ProcBlob};
use pmix_wire::{Info, Kval, Scope, Value};

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

/// A client's store.
pub(crate) struct Store {
    job: Vec<Kval>,
    node: Vec<Info>,
    /// Every other node's array, as the job information gave them.
    other_nodes: Vec<Vec<Info>>,
    session: Vec<Info>,
    app: Vec<Info>,
    blobs: HashMap<u32, ProcBlob>,
    decoded: Mutex<HashMap<u32, Arc<Vec<Kval>>>>,
    peers: Mutex<HashMap<(String, u32), Keyed>>,
    puts: Mutex<Puts>,
}

impl Store {
    /// The store of a job whose REQ reply is `job`, on host `hostname`.
    pub(crate) fn new(job: JobInfo, hostname: &str) -> Store {
        let mut store = Store {
            job: Vec::new(),
            node: Vec::new(),
            other_nodes: Vec::new(),
            session: Vec::new(),
            app: Vec::new(),
            blobs: HashMap::new(),
            decoded: Mutex::new(HashMap::new()),
            peers: Mutex::new(HashMap::new()),
            puts: Mutex::new(Puts::default()),
        };
        let mut nodes: Vec<Vec<Info>> = Vec::new();
        for item in job.items {
            match item {
                JobItem::Value(k) => store.job.push(k),
                JobItem::Session(v) => store.session = v,
                JobItem::App(v) => {
                    if store.app.is_empty() {
                        store.app = v;
                    }
                }
                JobItem::Node(v) => nodes.push(v),
                JobItem::Proc(p) => {
                    store.blobs.insert(p.rank.0, p);
                }
            }
        }
        let is_here = |n: &Vec<Info>| {
            n.iter()
                .any(|i| i.key == "pmix.hname" && i.value.as_str() == Some(hostname))
        };
        store.node = match nodes.iter().position(is_here) {
            Some(i) => nodes.swap_remove(i),
            None if nodes.len() == 1 => nodes.pop().unwrap_or_default(),
            None => Vec::new(),
        };
        store.other_nodes = nodes;
        store
    }

    /// The value of `key` in the array of node `hostname` (`None`: this node).
    pub(crate) fn node_value(&self, hostname: Option<&str>, key: &str) -> Option<Value> {
        let find = |arr: &[Info]| {
            arr.iter()
                .find(|i| i.key.as_bytes() == key.as_bytes())
                .map(|i| i.value.clone())
        };
        let named = |arr: &&Vec<Info>| {
            arr.iter()
                .any(|i| i.key == "pmix.hname" && i.value.as_str() == hostname)
        };
        match hostname {
            None => find(&self.node),
            Some(_) => std::iter::once(&self.node)
                .chain(self.other_nodes.iter())
                .find(named)
                .and_then(|arr| find(arr)),
        }
    }

    /// The host names of every node the job information describes, this one first.
    pub(crate) fn hostnames(&self) -> Vec<String> {
        std::iter::once(&self.node)
            .chain(self.other_nodes.iter())
            .filter_map(|arr| {
                arr.iter()
                    .find(|i| i.key == "pmix.hname")
                    .and_then(|i| i.value.as_str().map(str::to_owned))
            })
            .collect()
    }

    /// A job-level value of this job.
    pub(crate) fn job_value(&self, key: &str) -> Option<Value> {
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

    /// A value from rank `rank`'s blob in the job information.
    ///
    /// # Errors
    /// [`Error::Internal`] when the blob's values do not decode.
    pub(crate) fn rank_value(&self, rank: u32, key: &str) -> Result<Option<Value>, Error> {
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

    /// A value a GETNB reply brought for `nspace`:`rank`.
    pub(crate) fn peer_value(&self, nspace: &str, rank: u32, key: &str) -> Option<Value> {
        lock(&self.peers)
            .get(&(nspace.to_owned(), rank))
            .and_then(|kv| kv.get(key))
            .cloned()
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
