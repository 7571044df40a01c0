//! A registered namespace: its ranks' states and its job-info blob (REQ, docs/wire.md
//! §6.1.1, docs/serving.md §1(b)).
//!
//! The blob carries, in the order mpirun sends it: the job-level values
//! (`pmix.srv.nspace`, `pmix.srv.rank`, `pmix.jobid`, `pmix.offset`,
//! `pmix.num.nodes`, `pmix.nlist` (this host: `PMIx_Resolve_nodes`), `pmix.job.size`, `pmix.job.napps`, `pmix.max.size`, the
//! launcher's own job info, and `pmix.bfrops.mod`, the client's version string);
//! a session array (`pmix.session.id`, `pmix.univ.size`, and the capability key
//! [`DIST_ORIGIN_KEY`], BOOL true: this server is one that may answer
//! COMPUTE_DEVICE_DISTANCES with `PMIX_DEVICE_DIST_ORIGIN`, docs/design.md §6); one node
//! array (`pmix.hname` first, `pmix.nodeid`, `pmix.node.size`, `pmix.lpeers`,
//! `pmix.lldr`, `pmix.local.size`); one `pmix.pblob` per local rank
//! (`pmix.locstr` and `pmix.cpuset` when known, `pmix.grank`, `pmix.lrank`,
//! `pmix.nrank`, `pmix.nodeid`, `pmix.hname`, `pmix.appnum`). It is packed once
//! per (buffer type, client version) and reused.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use pmix_core::CpuSet;
use pmix_wire::msg::{JobInfo, JobItem, ProcBlob};
use pmix_wire::{BufferType, Info, Kval, Rank, Reply, Value, WStr};

use super::{ConnId, Core, CoreConfig, NamespaceSpec, ServerError};

/// The capability key of docs/design.md §6, BOOL true in the blob's **session array**.
///
/// Not a top-level value: libpmix2 4.2.2's hash store refuses a top-level key that
/// starts with `pmix` and is not in its dictionary (`PMIX ERROR: BAD-PARAM` in
/// `gds_hash.c`), and then drops every item after it (the node array, the
/// per-rank blobs). Inside the session array it is kept as it is. A GETNB of rank
/// WILDCARD for it answers it too.
pub const DIST_ORIGIN_KEY: &str = pmix_wire::keys::RS_DIST_ORIGIN;

use pmix_core::MAX_NSLEN;

/// Where a local rank stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RankState {
    /// Not connected yet.
    Waiting,
    /// Connected on this connection.
    Connected(ConnId),
    /// Sent FINALIZE.
    Finalized,
    /// Gone without FINALIZE.
    Lost,
}

/// A registered namespace.
#[derive(Debug)]
pub(crate) struct Namespace {
    /// What the launcher registered.
    pub(crate) spec: NamespaceSpec,
    /// Each local rank's state.
    pub(crate) states: BTreeMap<u32, RankState>,
    /// Ranks already reported lost (each once).
    pub(crate) lost_reported: HashSet<u32>,
    /// Ranks whose `PMIX_ERR_PROC_ABORTED` went out (on ABORT or loss), once each.
    pub(crate) aborted_reported: HashSet<u32>,
    /// The job-level values (rank WILDCARD), including the node and session
    /// values, for GETNB of rank WILDCARD.
    pub(crate) job_kvals: Vec<Kval>,
    /// Each local rank, sorted, and whether the distances of its cpuset were
    /// appended to its blob ([`Namespace::rank_values`] reads its values there).
    local: Vec<(u32, bool)>,
    /// Where the ranks' blobs start in `tail` (sorted by rank after it).
    procs_at: usize,
    /// The items of the blob before `pmix.bfrops.mod` / after it.
    head: Vec<JobItem>,
    tail: Vec<JobItem>,
    /// Packed REQ replies by (buffer type, client version).
    blobs: HashMap<(BufferType, String), Arc<Vec<u8>>>,
    /// Where the ranks run, when the host placed them.
    pub(crate) node_map: Option<NodeMap>,
    /// `PMIX_DEVICE_DISTANCES` by cpuset (`None`: that cpuset has none), computed
    /// once each: at registration for the ranks the host placed, and when a rank
    /// found bound at its connection asks for its job info.
    distances: super::distances::JobDistances,
    /// The local ranks placed nowhere by the host whose binding was found when they
    /// connected, with their `PMIX_DEVICE_DISTANCES` ([`Namespace::locate`]).
    pub(crate) late: BTreeMap<u32, Value>,
    /// The node-store segment of the job information ([`CoreConfig::node_store`]).
    pub(crate) segment: Segment,
    /// The latest fence segment (docs/serving.md §5.6).
    pub(crate) fence_segment: super::nodestore::FenceSegment,
    /// Where the ds21 store's entries are ([`CoreConfig::ds21`]).
    pub(crate) ds21: Option<pmix_wire::ds21::Ds21Writer>,
    /// The ds21 store's job information, until the core sends it out.
    pub(crate) ds21_job: Vec<pmix_wire::ds21::Patch>,
}

/// Where a namespace's node-store segment is (docs/serving.md §5.3).
#[derive(Debug, Default)]
pub(crate) enum Segment {
    /// None: the store is off, or the job information does not fit one.
    #[default]
    None,
    /// Written, waiting for the I/O layer to place it ([`Core::take_segment`]).
    Written(Vec<u8>),
    /// Placed at this path: a REQ of a client that reads the store names it.
    Placed(String),
}

/// The nodes of a placed namespace ([`crate::server::Placement`]), by place.
#[derive(Debug)]
pub(crate) struct NodeMap {
    /// This node's place (`None`: none of the job's ranks runs here).
    pub(crate) this_node: Option<u32>,
    /// How many nodes.
    pub(crate) nodes: u32,
    /// Each rank's node (ranks the maps do not place: none).
    pub(crate) node_of: Vec<u32>,
}

impl Namespace {
    pub(crate) fn new(spec: NamespaceSpec, cfg: &CoreConfig) -> Result<Namespace, ServerError> {
        if spec.nspace.is_empty() || spec.nspace.len() > MAX_NSLEN || spec.nspace.contains('\0') {
            return Err(ServerError::BadSpec(format!(
                "namespace name {:?}: 1 to 255 bytes, no NUL",
                spec.nspace
            )));
        }
        let mut states = BTreeMap::new();
        for r in &spec.ranks {
            if r.rank >= spec.job_size {
                return Err(ServerError::BadSpec(format!(
                    "rank {} of a job of size {}",
                    r.rank, spec.job_size
                )));
            }
            if states.insert(r.rank, RankState::Waiting).is_some() {
                return Err(ServerError::BadSpec(format!(
                    "rank {} listed twice",
                    r.rank
                )));
            }
        }
        let size = spec.job_size;
        let max = if spec.max_size == 0 {
            size
        } else {
            spec.max_size
        };
        let univ = if spec.univ_size == 0 {
            size
        } else {
            spec.univ_size
        };
        let napps = spec
            .ranks
            .iter()
            .map(|r| r.appnum)
            .max()
            .map_or(1, |a| a + 1);
        let mut local: Vec<u32> = spec.ranks.iter().map(|r| r.rank).collect();
        local.sort_unstable();
        let lpeers = local
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let nlocal = local.len() as u32;
        let placement = spec.placement.as_ref();
        let this_node = placement.and_then(|p| p.this_node.map(|i| &p.nodes[i]));
        // This node's name and id: the host's (docs/serving.md §4), else this server's.
        let host = this_node.map_or(cfg.hostname.as_str(), |n| n.name.as_str());
        let node_id = this_node.map_or(0, |n| n.id);
        let (num_nodes, nlist) = match placement {
            Some(p) => (
                p.nodes.len() as u32,
                p.nodes
                    .iter()
                    .map(|n| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            None => (1, host.to_string()),
        };
        // A key the host gave takes the place of the one written here.
        let given = |key: &str| spec.job_info.iter().find(|k| k.key == key).cloned();
        let mut job_kvals = vec![
            given(pmix_wire::keys::SERVER_NSPACE)
                .unwrap_or_else(|| Kval::new(pmix_wire::keys::SERVER_NSPACE, cfg.nspace.as_str())),
            given(pmix_wire::keys::SERVER_RANK)
                .unwrap_or_else(|| Kval::new(pmix_wire::keys::SERVER_RANK, cfg.rank)),
            given(pmix_wire::keys::JOBID)
                .unwrap_or_else(|| Kval::new(pmix_wire::keys::JOBID, spec.nspace.as_str())),
            given(pmix_wire::keys::NPROC_OFFSET)
                .unwrap_or_else(|| Kval::new(pmix_wire::keys::NPROC_OFFSET, 0u32)),
            Kval::new(pmix_wire::keys::NUM_NODES, num_nodes),
            Kval::new(pmix_wire::keys::NODE_LIST, nlist.as_str()),
            Kval::new(pmix_wire::keys::JOB_SIZE, size),
            given(pmix_wire::keys::JOB_NUM_APPS)
                .unwrap_or_else(|| Kval::new(pmix_wire::keys::JOB_NUM_APPS, napps)),
            Kval::new(pmix_wire::keys::MAX_PROCS, max),
        ];
        const REPLACED: [&str; 5] = [
            pmix_wire::keys::SERVER_NSPACE,
            pmix_wire::keys::SERVER_RANK,
            pmix_wire::keys::JOBID,
            pmix_wire::keys::NPROC_OFFSET,
            pmix_wire::keys::JOB_NUM_APPS,
        ];
        job_kvals.extend(
            spec.job_info
                .iter()
                .filter(|k| !REPLACED.iter().any(|r| k.key == *r))
                .cloned(),
        );
        let mut head: Vec<JobItem> = job_kvals.iter().cloned().map(JobItem::Value).collect();
        let session = vec![
            Info::new(pmix_wire::keys::SESSION_ID, u32::MAX),
            Info::new(pmix_wire::keys::UNIV_SIZE, univ),
            Info::new(DIST_ORIGIN_KEY, true),
        ];
        let mut node = vec![
            Info::new(pmix_wire::keys::HOSTNAME, host),
            Info::new(pmix_wire::keys::NODEID, node_id),
            Info::new(pmix_wire::keys::NODE_SIZE, nlocal),
            Info::new(pmix_wire::keys::LOCAL_PEERS, lpeers.as_str()),
        ];
        if let Some(first) = local.first() {
            node.push(Info::new(pmix_wire::keys::LOCALLDR, Rank(*first)));
        }
        node.push(Info::new(pmix_wire::keys::LOCAL_SIZE, nlocal));
        if let Some(n) = this_node {
            node.extend(n.info.iter().cloned());
        }
        // GETNB of rank WILDCARD answers node and session keys too (the client's
        // hash store files them as job-level data of its own node).
        job_kvals.extend(session.iter().chain(node.iter()).map(|i| Kval {
            key: i.key.clone(),
            value: i.value.clone(),
        }));
        let mut tail = vec![JobItem::Session(session), JobItem::Node(node)];
        // Every other node of the job, as OpenPMIx describes them: name, id, the
        // job's ranks there, their leader and count.
        if let Some(p) = placement {
            for (i, n) in p.nodes.iter().enumerate() {
                if Some(i) == p.this_node {
                    continue;
                }
                let peers = n
                    .ranks
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",");
                let mut arr = vec![
                    Info::new(pmix_wire::keys::HOSTNAME, n.name.as_str()),
                    Info::new(pmix_wire::keys::NODEID, n.id),
                    Info::new(pmix_wire::keys::LOCAL_PEERS, peers.as_str()),
                ];
                if let Some(first) = n.ranks.first() {
                    arr.push(Info::new(pmix_wire::keys::LOCALLDR, Rank(*first)));
                }
                arr.push(Info::new(pmix_wire::keys::LOCAL_SIZE, n.ranks.len() as u32));
                arr.extend(n.info.iter().cloned());
                tail.push(JobItem::Node(arr));
            }
        }
        let host_info = |rank: u32| -> &[Kval] {
            placement
                .and_then(|p| {
                    p.proc_info
                        .binary_search_by_key(&rank, |(r, _)| *r)
                        .ok()
                        .map(|i| p.proc_info[i].1.as_slice())
                })
                .unwrap_or(&[])
        };
        // Each local rank's values, until the stores are written.
        let mut rank_kvals = BTreeMap::new();
        let mut local_ranks = Vec::with_capacity(spec.ranks.len());
        let mut ranks = spec.ranks.clone();
        ranks.sort_by_key(|r| r.rank);
        let mut blobs: Vec<ProcBlob> = Vec::with_capacity(ranks.len());
        let mut distances = super::distances::JobDistances::default();
        let packed_ty = pmix_wire::Codec::v422().buffer_type;
        let mut ds21_distances: Vec<(u32, Value)> = Vec::new();
        for r in &ranks {
            let mut kv = Vec::new();
            if let Some(l) = &r.locstr {
                kv.push(Kval::new(pmix_wire::keys::LOCALITY_STRING, l.as_str()));
            }
            if let Some(c) = &r.cpuset {
                kv.push(Kval::new(pmix_wire::keys::CPUSET, c.as_str()));
            }
            kv.extend([
                Kval::new(pmix_wire::keys::GLOBAL_RANK, Rank(r.rank)),
                Kval::new(pmix_wire::keys::LOCAL_RANK, r.local_rank),
                Kval::new(pmix_wire::keys::NODE_RANK, r.node_rank),
                Kval::new(pmix_wire::keys::NODEID, node_id),
                Kval::new(pmix_wire::keys::HOSTNAME, host),
                Kval::new(pmix_wire::keys::APPNUM, r.appnum),
            ]);
            // What the host registered for the rank, in the host's types, takes the
            // place of what is written here; its other keys come after.
            for h in host_info(r.rank) {
                match kv.iter_mut().find(|k| k.key == h.key) {
                    Some(k) => k.value = h.value.clone(),
                    None => kv.push(h.clone()),
                }
            }
            rank_kvals.insert(r.rank, kv.clone());
            // Where the rank is bound (the host's cpuset, in whatever form it gave it):
            // its device distances, once per distinct cpuset, in its blob (the rank
            // reads them from there; no peer asks the server for them).
            let bound = kv
                .iter()
                .find(|k| k.key == pmix_wire::keys::CPUSET)
                .and_then(|k| k.value.as_str())
                .and_then(|t| CpuSet::parse_pmix(t).ok());
            let given = kv
                .iter()
                .any(|k| k.key == pmix_wire::keys::DEVICE_DISTANCES);
            let shared = match (bound, &cfg.service, given) {
                (Some(set), Some(service), false) => distances.get(service, &set),
                _ => None,
            };
            // The blob is kept packed (a rank's values take about 130 bytes so, several
            // times that decoded); with distances, their KVAL is appended as packed
            // once for every rank that shares them (no copy of the value per rank).
            if cfg.ds21
                && let Some(d) = &shared
            {
                // The ds21 store holds each rank's values whole.
                ds21_distances.push((r.rank, d.value.clone()));
            }
            let mut packed = ProcBlob::pack_kvals(&kv, packed_ty).ok();
            let appended = match (&mut packed, &shared) {
                (Some(bytes), Some(d)) => {
                    bytes.extend_from_slice(&d.packed);
                    true
                }
                _ => false,
            };
            local_ranks.push((r.rank, appended));
            blobs.push(match packed {
                Some(bytes) => ProcBlob::from_packed(Rank(r.rank), packed_ty, bytes),
                // A value that does not pack: the job info is refused below.
                None => ProcBlob::new(Rank(r.rank), kv),
            });
        }
        // The ranks of other nodes: what the host registered (OpenPMIx sends every
        // rank's), so a client reads a remote rank's host name and node at once.
        if let Some(p) = placement {
            for (rank, kv) in &p.proc_info {
                if rank_kvals.contains_key(rank) {
                    continue;
                }
                blobs.push(match ProcBlob::pack_kvals(kv, packed_ty) {
                    Ok(bytes) => ProcBlob::from_packed(Rank(*rank), packed_ty, bytes),
                    Err(_) => ProcBlob::new(Rank(*rank), kv.clone()),
                });
            }
        }
        blobs.sort_by_key(|b| b.rank.0);
        let procs_at = tail.len();
        tail.extend(blobs.into_iter().map(JobItem::Proc));
        // Check once that the items encode: a launcher's job info that cannot be
        // packed is refused here, not at a client's REQ.
        head.shrink_to_fit();
        let node_map = spec.placement.as_ref().map(|p| {
            let mut node_of = vec![u32::MAX; spec.job_size as usize];
            for (i, n) in p.nodes.iter().enumerate() {
                for &r in &n.ranks {
                    if let Some(slot) = node_of.get_mut(r as usize) {
                        *slot = i as u32;
                    }
                }
            }
            NodeMap {
                this_node: p.this_node.map(|i| i as u32),
                nodes: p.nodes.len() as u32,
                node_of,
            }
        });
        let mut ns = Namespace {
            node_map,
            spec,
            states,
            lost_reported: HashSet::new(),
            aborted_reported: HashSet::new(),
            job_kvals,
            local: local_ranks,
            procs_at,
            head,
            tail,
            blobs: HashMap::new(),
            distances,
            late: BTreeMap::new(),
            segment: Segment::None,
            fence_segment: Default::default(),
            ds21: None,
            ds21_job: Vec::new(),
        };
        if cfg.ds21 && pmix_wire::ds21::initial_segment(&ns.spec.nspace).is_ok() {
            let mut w = pmix_wire::ds21::Ds21Writer::new();
            let bfrops = Kval::new(
                pmix_wire::keys::BFROPS_MODULE,
                pmix_wire::Codec::v422().version.text.as_str(),
            );
            // A session's values asked of a rank are the job's (OpenPMIx's hash
            // store answers so; a ds21 client reads only the rank's entries).
            let session: Vec<Kval> = pmix_wire::keys::RANK_SESSION_KEYS
                .iter()
                .filter_map(|k| ns.job_value(k).map(|v| Kval::new(*k, v.clone())))
                .collect();
            let ranks = rank_kvals
                .iter()
                .map(|(r, kv)| {
                    let mut kv = kv.clone();
                    if let Ok(i) = ds21_distances.binary_search_by_key(r, |(rank, _)| *rank) {
                        kv.push(Kval::new(
                            pmix_wire::keys::DEVICE_DISTANCES,
                            ds21_distances[i].1.clone(),
                        ));
                    }
                    (*r, kv)
                })
                .chain(ns.spec.placement.iter().flat_map(|p| {
                    p.proc_info
                        .iter()
                        .filter(|(r, _)| !rank_kvals.contains_key(r))
                        .cloned()
                }))
                .map(|(r, mut kv)| {
                    for s in &session {
                        if !kv.iter().any(|k| k.key == s.key) {
                            kv.push(s.clone());
                        }
                    }
                    (r, kv)
                })
                .collect::<Vec<_>>();
            ns.ds21_job =
                super::ds21::job_patches(&mut w, &ns.head, &bfrops, &ns.tail, ranks.into_iter());
            ns.ds21 = Some(w);
        }
        if cfg.node_store {
            ns.segment = ns.write_segment(rank_kvals.values());
        }
        // Packed now for the codec every 4.2 client speaks, so that a launcher's job
        // info that cannot be packed is refused here. Kept for the first REQ when
        // some client is expected to need it: with both stores, ours and libpmix2's
        // clients read them, and the whole job information is packed again for the
        // first client that asks for it (one on `hash`).
        ns.blob_for(&pmix_wire::Codec::v422())
            .map_err(|e| ServerError::BadSpec(format!("the job info does not encode: {e}")))?;
        if cfg.node_store && cfg.ds21 {
            ns.blobs.clear();
        }
        Ok(ns)
    }

    /// The node-store segment (generation 0) of the job information every client
    /// gets (the REQ reply's items, this node's array first); [`Segment::None`]
    /// when it cannot be written (a value the segment cannot hold, over 4 GiB):
    /// its clients then get the job information by message, as OpenPMIx's do.
    fn write_segment<'a>(&self, mut local: impl Iterator<Item = &'a Vec<Kval>>) -> Segment {
        // The segment's job-level keys are its first node array's: a client takes
        // as its node the one its own `pmix.hname` names, so every local rank's
        // must name this one (a host may register other names for its ranks:
        // then every client is sent the job information instead).
        let host = self.tail.iter().find_map(|i| match i {
            JobItem::Node(arr) => arr
                .iter()
                .find(|i| i.key == pmix_wire::keys::HOSTNAME)
                .map(|i| &i.value),
            _ => None,
        });
        let named_here = |kv: &Vec<Kval>| {
            kv.iter()
                .find(|k| k.key == pmix_wire::keys::HOSTNAME)
                .is_none_or(|k| Some(&k.value) == host)
        };
        if !local.all(named_here) {
            return Segment::None;
        }
        // Only our clients map it, and each names this version in its handshake.
        let bfrops = JobItem::Value(Kval::new(
            pmix_wire::keys::BFROPS_MODULE,
            crate::client::conn::WIRE_VERSION,
        ));
        let job = JobInfo {
            nspace: WStr::from(self.spec.nspace.as_str()),
            items: self
                .head
                .iter()
                .cloned()
                .chain([bfrops])
                .chain(self.tail.iter().cloned())
                .collect(),
        };
        let built =
            pmix_wire::nodestore::SegmentBuilder::new(&self.spec.nspace, 0).and_then(|mut b| {
                b.push_job_info(&job)?;
                b.finish()
            });
        match built {
            Ok(bytes) => Segment::Written(bytes),
            Err(_) => Segment::None,
        }
    }

    /// The REQ reply's payload for a client speaking `codec`.
    fn encode_blob(&self, codec: &pmix_wire::Codec) -> Result<Vec<u8>, pmix_wire::WireError> {
        let bfrops = [JobItem::Value(Kval::new(
            pmix_wire::keys::BFROPS_MODULE,
            codec.version.text.as_str(),
        ))];
        JobInfo::encode_parts(
            &WStr::from(self.spec.nspace.as_str()),
            &[&self.head, &bfrops, &self.tail],
            codec,
        )
    }

    /// The packed blob for `codec`, from the cache or packed now.
    pub(super) fn blob(&mut self, codec: &pmix_wire::Codec) -> Option<Arc<Vec<u8>>> {
        self.blob_for(codec).ok()
    }

    /// [`Namespace::blob`], with the encoder's error.
    fn blob_for(&mut self, codec: &pmix_wire::Codec) -> Result<Arc<Vec<u8>>, pmix_wire::WireError> {
        let key = (codec.buffer_type, codec.version.text.clone());
        if let Some(b) = self.blobs.get(&key) {
            return Ok(b.clone());
        }
        let b = Arc::new(self.encode_blob(codec)?);
        self.blobs.insert(key, b.clone());
        Ok(b)
    }

    /// Whether local `rank` has no `PMIX_DEVICE_DISTANCES` yet (the host placed it
    /// on no cpuset, and no binding was found for it since).
    pub(crate) fn unlocated(&self, rank: u32) -> bool {
        !self.late.contains_key(&rank)
            && self.rank_values(rank).is_some_and(|kv| {
                !kv.iter().any(|k| {
                    k.key == pmix_wire::keys::DEVICE_DISTANCES || k.key == pmix_wire::keys::CPUSET
                })
            })
    }

    /// Local `rank`, which the host placed nowhere, was found bound to `cpuset`
    /// when it connected: it gets the `PMIX_DEVICE_DISTANCES` of that cpuset (once
    /// per distinct cpuset), served with its own job info ([`Namespace::late_items`])
    /// and to GETNB.
    pub(crate) fn locate(&mut self, rank: u32, cpuset: CpuSet, service: &crate::Service) {
        if !self.unlocated(rank) {
            return;
        }
        if let Some(d) = self.distances.get(service, &cpuset) {
            self.late.insert(rank, d.value.clone());
        }
    }

    /// The bytes to append to the job info `rank` gets: a second `pmix.pblob` of
    /// its own with what was found when it connected ([`Namespace::locate`]);
    /// `None` when there is nothing.
    fn late_items(&self, rank: u32, codec: &pmix_wire::Codec) -> Option<Vec<u8>> {
        let v = self.late.get(&rank)?;
        let item = JobItem::Proc(ProcBlob::new(
            Rank(rank),
            vec![Kval::new(pmix_wire::keys::DEVICE_DISTANCES, v.clone())],
        ));
        JobInfo::encode_items(&[item], codec).ok()
    }

    /// Local `rank`'s own values: its blob's, less the distances appended to it for
    /// its cpuset (docs/serving.md §1(b)); `None` for a rank of another node, or a
    /// blob that does not decode (the server packed it: it does). Decoded when
    /// asked: the namespace keeps each rank's values once, packed.
    pub(crate) fn rank_values(&self, rank: u32) -> Option<Vec<Kval>> {
        let i = self.local.binary_search_by_key(&rank, |(r, _)| *r).ok()?;
        let procs = self.tail.get(self.procs_at..)?;
        let at = procs
            .binary_search_by_key(&rank, |item| match item {
                JobItem::Proc(p) => p.rank.0,
                _ => u32::MAX,
            })
            .ok()?;
        let JobItem::Proc(blob) = &procs[at] else {
            return None;
        };
        let mut kvals = blob.kvals().ok()?.into_owned();
        if self.local[i].1
            && kvals
                .last()
                .is_some_and(|k| k.key == pmix_wire::keys::DEVICE_DISTANCES)
        {
            kvals.pop();
        }
        Some(kvals)
    }

    /// The job-level value of `key`.
    pub(crate) fn job_value(&self, key: &str) -> Option<&Value> {
        self.job_kvals
            .iter()
            .rev()
            .find(|k| k.key == key)
            .map(|k| &k.value)
    }
}

/// REQ: the job-info blob of the requester's namespace; a tool (no namespace of
/// ours) gets its own namespace with the server's name and rank, a size of 1 and
/// the host name.
pub(super) fn req(core: &mut Core, conn: ConnId, tag: u32) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let codec = peer.codec.clone();
    if peer.tool {
        // A tool's own job: its assigned namespace and what the server is. libpmix2's
        // PMIx_tool_init asks for it and files it (a lone status would not unpack).
        let host = core.cfg.hostname.as_str();
        let job = Reply::Req(JobInfo {
            nspace: WStr::from(peer.proc.0.as_str()),
            items: vec![
                JobItem::Value(Kval::new(
                    pmix_wire::keys::SERVER_NSPACE,
                    core.cfg.nspace.as_str(),
                )),
                JobItem::Value(Kval::new(pmix_wire::keys::SERVER_RANK, core.cfg.rank)),
                JobItem::Value(Kval::new(pmix_wire::keys::JOB_SIZE, 1u32)),
                JobItem::Value(Kval::new(pmix_wire::keys::HOSTNAME, host)),
            ],
        });
        let bytes = job.encode(&codec).ok();
        return core.send_payload(conn, tag, bytes);
    }
    let rank = peer.proc.1;
    // A libpmix2 client on ds21 reads the job's values and its peers' from the
    // files: it keeps only the session, node and app arrays of its REQ's answer.
    if peer.ds21 {
        let arrays = core.namespaces.get(&peer.proc.0).map(|ns| {
            ns.tail
                .iter()
                .filter(|i| matches!(i, JobItem::Session(_) | JobItem::Node(_) | JobItem::App(_)))
                .cloned()
                .collect::<Vec<_>>()
        });
        if let Some(items) = arrays {
            let bytes = Reply::Req(JobInfo {
                nspace: WStr::from(peer.proc.0.as_str()),
                items,
            })
            .encode(&codec)
            .ok();
            return core.send_payload(conn, tag, bytes);
        }
    }
    // A client that reads the node store gets the segment's path (and what was
    // found of it since, as a blob of its own); its second REQ, when it could not
    // map the segment, gets the job information itself.
    let named = match core.namespaces.get(&peer.proc.0).map(|ns| &ns.segment) {
        Some(Segment::Placed(path)) if peer.node_store && !peer.segment_named => {
            let ns = &core.namespaces[&peer.proc.0];
            let mut items = vec![JobItem::Value(Kval::new(
                pmix_wire::keys::RS_NODE_STORE,
                path.as_str(),
            ))];
            items.extend(ns.late.get(&rank).map(|v| {
                JobItem::Proc(ProcBlob::new(
                    Rank(rank),
                    vec![Kval::new(pmix_wire::keys::DEVICE_DISTANCES, v.clone())],
                ))
            }));
            Reply::Req(JobInfo {
                nspace: WStr::from(peer.proc.0.as_str()),
                items,
            })
            .encode(&codec)
            .ok()
        }
        _ => None,
    };
    if let Some(bytes) = named {
        if let Some(peer) = core.conns.get_mut(&conn) {
            peer.segment_named = true;
        }
        return core.send_payload(conn, tag, Some(bytes));
    }
    let blob = core.namespaces.get_mut(&peer.proc.0).and_then(|ns| {
        let blob = ns.blob(&codec)?;
        Some(match ns.late_items(rank, &codec) {
            None => blob,
            Some(extra) => Arc::new([blob.as_slice(), &extra].concat()),
        })
    });
    match blob {
        Some(b) => core.send_bytes(conn, tag, &b),
        None => core.reply_status(
            conn,
            tag,
            pmix_wire::Command::Req,
            pmix_wire::Status::ERR_NOT_SUPPORTED,
        ),
    }
}
