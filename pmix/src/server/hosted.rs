//! What a host's `PMIx_server_register_nspace` says, as a [`NamespaceSpec`]
//! (docs/serving.md §4).
//!
//! Hosts (Slurm's PMIx plugin, Open MPI's `mpirun` and `orted`) describe a job with
//! OpenPMIx's job-level keys and one `pmix.pdata` array per rank. What the job-info
//! blob computes itself (sizes, the node arrays, the per-rank blobs) is taken from
//! them; every other job-level key is passed to the clients as it came.
//!
//! - **Size**: `pmix.job.size`, else the number of `pmix.pdata` arrays, else the
//!   local count. `pmix.max.size` and `pmix.univ.size` when given.
//! - **Placement** ([`Placement`]): the nodes and the ranks on each from the node
//!   and process maps (`pmix.nmap`, `pmix.pmap`: the regular expressions of
//!   `PMIx_generate_regex` / `_ppn`, or plain lists), else from the `pmix.hname` (and
//!   `pmix.nodeid`) of every `pmix.pdata`. **This node** is the one the host says:
//!   the node whose id is the job-level `pmix.nodeid` the host registers (Slurm and
//!   `mpirun` both do), checked against the local ranks; else the node holding
//!   exactly the local ranks; else the node named as this server was
//!   (`PMIX_HOSTNAME` at `PMIx_server_init`, else the host name). Never the host name
//!   first: sites name Slurm nodes otherwise than their hosts.
//! - **Local ranks**: `pmix.lpeers` (a comma-separated list of ranks, `a-b` ranges
//!   allowed); else none when the host gives a local count of 0 (Open MPI's `mpirun`
//!   registers a job all of whose ranks are on other nodes so); else this node's
//!   ranks in the placement; else the ranks whose `pmix.pdata` carries a
//!   `pmix.lrank`; else, when the local count is the job size, every rank. Their
//!   number must be the local count the host gave (when it gave one, ≥ 0).
//! - **Per rank**: `pmix.lrank`, `pmix.nrank`, `pmix.appnum`, `pmix.cpuset`,
//!   `pmix.locstr` from its `pmix.pdata` (`pmix.rank` first, as every host sends
//!   it); a local rank without a local rank is numbered by its place in the local
//!   list. Every rank's `pmix.pdata` also reaches the clients whole, as OpenPMIx
//!   passes it (its `pmix.pblob`), but for `pmix.hname` and `pmix.nodeid`, which
//!   are the placement's (Slurm 22.05 registers this node's id as every rank's).
//! - **Dropped**: the maps themselves (`pmix.nmap`, `pmix.pmap`: the blob carries
//!   the node arrays and `pmix.nlist` they describe), this node's id and the keys
//!   the blob writes itself.

use pmix_wire::{Info, Kval, Value};

use super::core::{NamespaceSpec, NodeSpec, Placement, RankSpec, ServerError};

/// The most ranks a registration may describe (a bound on what a host's bytes make
/// the server allocate).
pub const MAX_RANKS: u32 = 1 << 22;

/// Job-level keys the blob writes itself, or that only a host reads.
const GENERATED: [&str; 15] = [
    pmix_wire::keys::JOB_SIZE,
    pmix_wire::keys::UNIV_SIZE,
    pmix_wire::keys::MAX_PROCS,
    pmix_wire::keys::LOCAL_PEERS,
    pmix_wire::keys::PROC_INFO_ARRAY,
    pmix_wire::keys::LOCAL_SIZE,
    pmix_wire::keys::NODE_SIZE,
    pmix_wire::keys::NUM_NODES,
    pmix_wire::keys::NODE_LIST,
    pmix_wire::keys::NODE_MAP,
    pmix_wire::keys::PROC_MAP,
    pmix_wire::keys::LOCALLDR,
    pmix_wire::keys::NODEID,
    pmix_wire::keys::HOSTNAME,
    pmix_wire::keys::NODE_INFO_ARRAY,
];

fn bad(what: impl Into<String>) -> ServerError {
    ServerError::BadSpec(what.into())
}

fn uint(v: &Value, key: &str) -> Result<u64, ServerError> {
    v.as_u64()
        .or_else(|| v.as_i64().and_then(|i| u64::try_from(i).ok()))
        .ok_or_else(|| bad(format!("{key}: not an unsigned integer")))
}

fn u32_of(v: &Value, key: &str) -> Result<u32, ServerError> {
    u32::try_from(uint(v, key)?).map_err(|_| bad(format!("{key}: out of range")))
}

/// The ranks of a `pmix.lpeers` list (`0,1,4-7`).
fn rank_list(s: &str, size: u32) -> Result<Vec<u32>, ServerError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| bad(format!("pmix.lpeers: {t:?} is not a rank")))
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let r = num(part)?;
                (r, r)
            }
        };
        if a > b || b >= size {
            return Err(bad(format!(
                "pmix.lpeers: {part:?} outside a job of size {size}"
            )));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// One rank's `pmix.pdata` array.
#[derive(Default)]
struct ProcData {
    rank: u32,
    local_rank: Option<u16>,
    node_rank: Option<u16>,
    appnum: u32,
    cpuset: Option<String>,
    locstr: Option<String>,
    hostname: Option<String>,
    nodeid: Option<u32>,
    /// Every entry but `pmix.rank`, in order.
    kvals: Vec<Kval>,
}

fn proc_data(v: &Value) -> Result<ProcData, ServerError> {
    let Value::DataArray(a) = v else {
        return Err(bad("pmix.pdata: not a data array"));
    };
    let mut infos = a.items.iter().map(|i| match i {
        Value::Info(i) => Ok(i.as_ref()),
        _ => Err(bad("pmix.pdata: an element is not an info")),
    });
    let first = infos.next().ok_or_else(|| bad("pmix.pdata: empty"))??;
    if first.key.as_str() != Some(pmix_wire::keys::RANK) {
        return Err(bad("pmix.pdata: the first element is not pmix.rank"));
    }
    let mut d = ProcData {
        rank: u32_of(&first.value, pmix_wire::keys::RANK)?,
        ..Default::default()
    };
    let u16_of = |v: &Value, k: &str| {
        u16::try_from(uint(v, k)?).map_err(|_| bad(format!("{k}: out of range")))
    };
    for i in infos {
        let i = i?;
        let key = i.key.as_str().unwrap_or_default();
        match key {
            pmix_wire::keys::LOCAL_RANK => d.local_rank = Some(u16_of(&i.value, key)?),
            pmix_wire::keys::NODE_RANK => d.node_rank = Some(u16_of(&i.value, key)?),
            pmix_wire::keys::APPNUM => d.appnum = u32_of(&i.value, key)?,
            pmix_wire::keys::CPUSET => d.cpuset = i.value.as_str().map(str::to_string),
            pmix_wire::keys::LOCALITY_STRING => d.locstr = i.value.as_str().map(str::to_string),
            pmix_wire::keys::HOSTNAME => d.hostname = i.value.as_str().map(str::to_string),
            pmix_wire::keys::NODEID => d.nodeid = Some(u32_of(&i.value, key)?),
            _ => {}
        }
        d.kvals.push(Kval {
            key: i.key.clone(),
            value: i.value.clone(),
        });
    }
    Ok(d)
}

/// The nodes of the maps `nmap` / `pmap` (module docs). A rank past the job's `size`
/// is left out of its node: OpenPMIx's server accepts such maps (its own
/// `test/python/server.py` registers a job of size 1 with a map of 8 ranks on 3
/// nodes), and the job's size is what the host says it is.
fn nodes_of_maps(nmap: &str, pmap: &str, size: u32) -> Result<Vec<NodeSpec>, ServerError> {
    let names = super::regex::parse_nodes(nmap).map_err(|e| bad(format!("pmix.nmap: {e}")))?;
    let procs = super::regex::parse_procs(pmap).map_err(|e| bad(format!("pmix.pmap: {e}")))?;
    if names.len() != procs.len() {
        return Err(bad(format!(
            "pmix.nmap names {} nodes, pmix.pmap {}",
            names.len(),
            procs.len()
        )));
    }
    names
        .into_iter()
        .zip(procs)
        .enumerate()
        .map(|(id, (name, mut ranks))| {
            ranks.retain(|&r| r < size);
            ranks.sort_unstable();
            Ok(NodeSpec {
                name,
                id: id as u32,
                ranks,
                info: Vec::new(),
            })
        })
        .collect()
}

/// The nodes the `pmix.hname` of every rank's `pmix.pdata` name, by node id when
/// every rank has one, else in order of appearance; `None` when a rank lacks one.
fn nodes_of_pdata(pdata: &[ProcData]) -> Option<Vec<NodeSpec>> {
    if pdata.is_empty() || pdata.iter().any(|d| d.hostname.is_none()) {
        return None;
    }
    let by_id = pdata.iter().all(|d| d.nodeid.is_some());
    let mut nodes: Vec<NodeSpec> = Vec::new();
    for d in pdata {
        let name = d.hostname.as_deref().unwrap_or_default();
        match nodes.iter_mut().find(|n| n.name == name) {
            Some(n) => n.ranks.push(d.rank),
            None => nodes.push(NodeSpec {
                name: name.to_string(),
                id: if by_id {
                    d.nodeid.unwrap_or(0)
                } else {
                    nodes.len() as u32
                },
                ranks: vec![d.rank],
                info: Vec::new(),
            }),
        }
    }
    if by_id {
        nodes.sort_by_key(|n| n.id);
        // Ids that are not 0..n (or repeat) say nothing a list cannot: renumber.
        if nodes.iter().enumerate().any(|(i, n)| n.id != i as u32) {
            return None;
        }
    }
    for n in &mut nodes {
        n.ranks.sort_unstable();
    }
    Some(nodes)
}

/// Which of `nodes` this server serves (module docs): `None` when none holds the
/// local ranks `local` (a host may register a job none of whose ranks run here).
fn this_node(
    nodes: &[NodeSpec],
    nodeid: Option<u32>,
    local: Option<&[u32]>,
    hostname: &str,
) -> Option<usize> {
    let holds = |i: usize| local.is_none_or(|l| nodes[i].ranks == l);
    let by_id = nodeid
        .map(|id| id as usize)
        .filter(|&i| i < nodes.len() && holds(i));
    let by_ranks = || {
        local
            .filter(|l| !l.is_empty())
            .and_then(|l| nodes.iter().position(|n| n.ranks == l))
    };
    let by_name = || {
        nodes
            .iter()
            .position(|n| n.name == hostname)
            .filter(|&i| holds(i))
    };
    by_id.or_else(by_ranks).or_else(by_name)
}

/// The namespace `nspace` a host registers with `info`, `nlocal` of whose ranks run
/// on this node, `hostname` (negative: the host does not say), its clients running
/// as `uid`/`gid` (module docs).
///
/// # Errors
/// [`ServerError::BadSpec`] naming the key: a size that is not an unsigned 32-bit
/// integer, more than [`MAX_RANKS`] ranks, a `pmix.pdata` that is not a data array of
/// infos led by `pmix.rank`, a rank outside the job, a malformed `pmix.lpeers`,
/// node and process maps that do not parse or disagree, or a local list whose
/// length is not `nlocal`.
pub fn namespace_from_host(
    nspace: &str,
    nlocal: i32,
    info: &[Info],
    hostname: &str,
    uid: u32,
    gid: u32,
) -> Result<NamespaceSpec, ServerError> {
    let mut size = None;
    let (mut max, mut univ) = (0, 0);
    let mut lpeers = None;
    let (mut nmap, mut pmap, mut nodeid) = (None, None, None);
    let mut pdata = Vec::new();
    let mut node_arrays = Vec::new();
    let mut job_info = Vec::new();
    for i in info {
        let key = i.key.as_str().unwrap_or_default();
        let text = || {
            i.value
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| bad(format!("{key}: not a string")))
        };
        match key {
            pmix_wire::keys::JOB_SIZE => size = Some(u32_of(&i.value, key)?),
            pmix_wire::keys::MAX_PROCS => max = u32_of(&i.value, key)?,
            pmix_wire::keys::UNIV_SIZE => univ = u32_of(&i.value, key)?,
            pmix_wire::keys::LOCAL_PEERS => lpeers = Some(text()?),
            pmix_wire::keys::NODE_MAP => nmap = Some(text()?),
            pmix_wire::keys::PROC_MAP => pmap = Some(text()?),
            pmix_wire::keys::NODEID => nodeid = Some(u32_of(&i.value, key)?),
            pmix_wire::keys::PROC_INFO_ARRAY => {
                if pdata.len() as u32 >= MAX_RANKS {
                    return Err(bad(format!("more than {MAX_RANKS} pmix.pdata arrays")));
                }
                pdata.push(proc_data(&i.value)?);
            }
            pmix_wire::keys::NODE_INFO_ARRAY => {
                if let Value::DataArray(a) = &i.value {
                    node_arrays.push(
                        a.items
                            .iter()
                            .filter_map(|v| match v {
                                Value::Info(i) => Some(i.as_ref().clone()),
                                _ => None,
                            })
                            .collect::<Vec<Info>>(),
                    );
                }
            }
            k if GENERATED.contains(&k) => {}
            _ => job_info.push(Kval {
                key: i.key.clone(),
                value: i.value.clone(),
            }),
        }
    }
    let size = match size {
        Some(s) => s,
        None if !pdata.is_empty() => pdata.len() as u32,
        None => u32::try_from(nlocal).map_err(|_| bad("no pmix.job.size and no local count"))?,
    };
    if size > MAX_RANKS {
        return Err(bad(format!("pmix.job.size {size} is over {MAX_RANKS}")));
    }
    if let Some(d) = pdata.iter().find(|d| d.rank >= size) {
        return Err(bad(format!(
            "pmix.pdata of rank {} in a job of size {size}",
            d.rank
        )));
    }
    pdata.sort_by_key(|d| d.rank);
    let mut nodes = match (&nmap, &pmap) {
        (Some(n), Some(p)) => Some(nodes_of_maps(n, p, size)?),
        _ => nodes_of_pdata(&pdata),
    };
    let listed = match &lpeers {
        Some(s) => Some(rank_list(s, size)?),
        None if nlocal == 0 => Some(Vec::new()),
        None => None,
    };
    let here = nodes.as_deref().and_then(|n| {
        let count_fits = |i: usize| nlocal < 0 || n[i].ranks.len() == nlocal as usize;
        this_node(n, nodeid, listed.as_deref(), hostname).filter(|&i| count_fits(i))
    });
    let local = match listed {
        Some(l) => l,
        None => match (nodes.as_deref(), here) {
            (Some(n), Some(i)) => n[i].ranks.clone(),
            _ if pdata.iter().any(|d| d.local_rank.is_some()) => {
                let mut v: Vec<u32> = pdata
                    .iter()
                    .filter(|d| d.local_rank.is_some())
                    .map(|d| d.rank)
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            _ if nlocal < 0 || nlocal as u32 == size => (0..size).collect(),
            _ => return Err(bad("no pmix.lpeers: which ranks are local is not said")),
        },
    };
    if nlocal >= 0 && local.len() != nlocal as usize {
        return Err(bad(format!(
            "{} local ranks listed, {nlocal} registered",
            local.len()
        )));
    }
    let ranks = local
        .iter()
        .enumerate()
        .map(|(idx, &rank)| {
            let d = pdata
                .binary_search_by_key(&rank, |d| d.rank)
                .ok()
                .map(|i| &pdata[i]);
            let place = u16::try_from(idx).unwrap_or(u16::MAX);
            RankSpec {
                rank,
                local_rank: d.and_then(|d| d.local_rank).unwrap_or(place),
                node_rank: d
                    .and_then(|d| d.node_rank.or(d.local_rank))
                    .unwrap_or(place),
                appnum: d.map_or(0, |d| d.appnum),
                cpuset: d.and_then(|d| d.cpuset.clone()),
                locstr: d.and_then(|d| d.locstr.clone()),
            }
        })
        .collect();
    let placement = nodes.take().map(|mut nodes| {
        for arr in node_arrays {
            let named = |n: &NodeSpec| {
                arr.iter().any(|i| {
                    (i.key == pmix_wire::keys::HOSTNAME
                        && i.value.as_str() == Some(n.name.as_str()))
                        || (i.key == pmix_wire::keys::NODEID
                            && i.value.as_u64() == Some(u64::from(n.id)))
                })
            };
            if let Some(n) = nodes.iter_mut().find(|n| named(n)) {
                n.info.extend(arr.into_iter().filter(|i| {
                    i.key != pmix_wire::keys::HOSTNAME && i.key != pmix_wire::keys::NODEID
                }));
            }
        }
        let mut node_of = std::collections::HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            for &r in &n.ranks {
                node_of.insert(r, i);
            }
        }
        let proc_info = pdata
            .into_iter()
            .map(|d| {
                let mut kvals = d.kvals;
                if let Some(n) = node_of.get(&d.rank).map(|&i| &nodes[i]) {
                    kvals.retain(|k| {
                        k.key != pmix_wire::keys::HOSTNAME && k.key != pmix_wire::keys::NODEID
                    });
                    kvals.push(Kval::new(pmix_wire::keys::HOSTNAME, n.name.as_str()));
                    kvals.push(Kval::new(pmix_wire::keys::NODEID, n.id));
                }
                // OpenPMIx gives every rank an application number (0 when the host
                // says none: mpirun 4.1 does not).
                if !kvals.iter().any(|k| k.key == pmix_wire::keys::APPNUM) {
                    kvals.push(Kval::new(pmix_wire::keys::APPNUM, 0u32));
                }
                (d.rank, kvals)
            })
            .collect();
        Placement {
            nodes,
            this_node: here,
            proc_info,
        }
    });
    Ok(NamespaceSpec {
        nspace: nspace.to_string(),
        uid,
        gid,
        job_size: size,
        ranks,
        max_size: max,
        univ_size: univ,
        job_info,
        placement,
    })
}

/// The key under which an event's CUSTOM range crosses a host as bytes.
const HOST_EVRANGE_KEY: &str = pmix_wire::keys::RS_HOST_EVENT_RANGE;

/// The infos of an event this server hands its host (`Upcall::Notify`), made fit
/// to cross it: `pmix.evrange` (a PROC or a DATA_ARRAY of PROC) becomes
/// `pmixrs.evrange`, a BYTE_OBJECT holding the procs as a modex blob
/// ([`pmix_wire::modex`]), because Open MPI 4.1's daemons cannot carry a data
/// array of procs (their PMIx component fails to pack it). The server on the other
/// side, ours too, restores it ([`event_info_from_host`]). Other infos pass as they
/// are.
pub fn event_info_to_host(info: &[Info]) -> Vec<Info> {
    info.iter()
        .map(|i| {
            if i.key != pmix_wire::keys::EVENT_CUSTOM_RANGE {
                return i.clone();
            }
            let procs: Vec<pmix_wire::Proc> = match &i.value {
                Value::Proc(p) => vec![p.clone()],
                Value::DataArray(a) => a
                    .items
                    .iter()
                    .filter_map(|v| match v {
                        Value::Proc(p) => Some(p.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => return i.clone(),
            };
            let entries: Vec<pmix_wire::modex::ModexEntry> = procs
                .into_iter()
                .map(|proc| pmix_wire::modex::ModexEntry {
                    proc,
                    ..Default::default()
                })
                .collect();
            match pmix_wire::modex::encode(&entries) {
                Ok(bytes) => Info::new(HOST_EVRANGE_KEY, pmix_wire::ByteObject(bytes)),
                Err(_) => i.clone(),
            }
        })
        .collect()
}

/// The infos and range of an event a host injects (its `PMIx_Notify_event`, in
/// `range`), as this server raises it: a `pmixrs.evrange` another of our servers made
/// ([`event_info_to_host`]) becomes `pmix.evrange` again, a DATA_ARRAY of PROC, and
/// the range CUSTOM whatever range the host passed on (hosts do not keep it); one
/// that does not decode is dropped (the event then reaches nobody by that range).
pub fn event_info_from_host(
    info: Vec<Info>,
    range: pmix_wire::DataRange,
) -> (Vec<Info>, pmix_wire::DataRange) {
    let listed = info.iter().any(|i| i.key == HOST_EVRANGE_KEY);
    let range = if listed {
        pmix_wire::DataRange::CUSTOM
    } else {
        range
    };
    let info = info
        .into_iter()
        .filter_map(|i| {
            if i.key != HOST_EVRANGE_KEY {
                return Some(i);
            }
            let Value::ByteObject(b) = &i.value else {
                return None;
            };
            let entries = pmix_wire::modex::decode_all(&b.0, pmix_wire::Limits::DEFAULT).ok()?;
            let procs = entries.into_iter().map(|e| Value::Proc(e.proc)).collect();
            let array = pmix_wire::DataArray::new(pmix_wire::DataType::Proc, procs)?;
            Some(Info::new(
                pmix_wire::keys::EVENT_CUSTOM_RANGE,
                Value::DataArray(array),
            ))
        })
        .collect();
    (info, range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_wire::DataArray;

    fn pdata(rank: u32, extra: Vec<Info>) -> Info {
        let mut items = vec![Info::new("pmix.rank", Value::ProcRank(rank))];
        items.extend(extra);
        Info::new("pmix.pdata", Value::DataArray(DataArray::infos(items)))
    }

    /// What Slurm 22.05's plugin registers for a step of 4 tasks, 2 on this node.
    fn slurm_like() -> Vec<Info> {
        let mut v = vec![
            Info::new("pmix.jobid", "12.0"),
            Info::new("pmix.nodeid", 1u32),
            Info::new("pmix.tmpdir", "/tmp/x"),
        ];
        for r in 0..4u32 {
            let mut e = vec![Info::new("pmix.appnum", Value::Int(0))];
            if r >= 2 {
                e.push(Info::new("pmix.lrank", (r - 2) as u16));
                e.push(Info::new("pmix.nrank", (r - 2) as u16));
            }
            e.push(Info::new("pmix.hname", if r < 2 { "n1" } else { "n2" }));
            v.push(pdata(r, e));
        }
        v.extend([
            Info::new("pmix.univ.size", 4u32),
            Info::new("pmix.job.size", 4u32),
            Info::new("pmix.local.size", 2u32),
            Info::new("pmix.max.size", 4u32),
            Info::new("pmix.nmap", "pmix[n[1:1-2]]"),
            Info::new("pmix.pmap", "raw:0,1;2,3"),
            Info::new("pmix.lpeers", "2,3"),
        ]);
        v
    }

    #[test]
    fn slurm_registration_gives_the_local_ranks_and_passes_other_keys_on() {
        let ns = namespace_from_host("slurm.pmix.12.0", 2, &slurm_like(), "n2", 0, 0).unwrap();
        assert_eq!(ns.job_size, 4);
        assert_eq!(ns.max_size, 4);
        assert_eq!(ns.univ_size, 4);
        let ranks: Vec<(u32, u16, u16)> = ns
            .ranks
            .iter()
            .map(|r| (r.rank, r.local_rank, r.node_rank))
            .collect();
        assert_eq!(ranks, [(2, 0, 0), (3, 1, 1)]);
        let keys: Vec<&str> = ns.job_info.iter().filter_map(|k| k.key.as_str()).collect();
        assert_eq!(keys, ["pmix.jobid", "pmix.tmpdir"]);
        // The maps place the ranks: n1 holds 0 and 1, n2 (this node: pmix.nodeid 1)
        // holds 2 and 3; each rank's host name and node id are the maps'.
        let p = ns.placement.expect("placed");
        let nodes: Vec<(&str, u32, &[u32])> = p
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.id, n.ranks.as_slice()))
            .collect();
        assert_eq!(nodes, [("n1", 0, &[0, 1][..]), ("n2", 1, &[2, 3][..])]);
        assert_eq!(p.this_node, Some(1));
        let of = |r: u32, k: &str| {
            p.proc_info[r as usize]
                .1
                .iter()
                .find(|kv| kv.key == k)
                .map(|kv| kv.value.clone())
        };
        assert_eq!(of(0, "pmix.hname"), Some(Value::from("n1")));
        assert_eq!(of(0, "pmix.nodeid"), Some(Value::Uint32(0)));
        assert_eq!(of(3, "pmix.nodeid"), Some(Value::Uint32(1)));
    }

    #[test]
    fn this_node_is_the_one_the_host_names_never_the_host_name() {
        // Slurm's node names are not this machine's host name ("vm"): the node id
        // the host registers says which node this is, and its name is the node's.
        let ns = namespace_from_host("j", 2, &slurm_like(), "vm", 0, 0).unwrap();
        let p = ns.placement.unwrap();
        assert_eq!(p.nodes[p.this_node.unwrap()].name, "n2");
        // Without a node id: the node holding the local ranks.
        let info: Vec<Info> = slurm_like()
            .into_iter()
            .filter(|i| i.key.as_str() != Some("pmix.nodeid"))
            .collect();
        let p = namespace_from_host("j", 2, &info, "vm", 0, 0)
            .unwrap()
            .placement
            .unwrap();
        assert_eq!(p.this_node, Some(1));
        // Without maps, from every rank's pmix.hname.
        let info: Vec<Info> = slurm_like()
            .into_iter()
            .filter(|i| i.key.as_str() != Some("pmix.nmap"))
            .collect();
        let p = namespace_from_host("j", 2, &info, "vm", 0, 0)
            .unwrap()
            .placement
            .unwrap();
        let names: Vec<&str> = p.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2"]);
        assert_eq!(p.this_node, Some(1));
    }

    #[test]
    fn maps_that_disagree_are_refused_and_ranks_past_the_job_are_left_out() {
        let mut info = slurm_like();
        info.push(Info::new("pmix.pmap", "raw:0,1;2,3;4"));
        let e = namespace_from_host("j", 2, &info, "n2", 0, 0).unwrap_err();
        assert!(
            e.to_string()
                .contains("pmix.nmap names 2 nodes, pmix.pmap 3"),
            "{e}"
        );
        // A rank the maps name past the job's size (4) is left out, as OpenPMIx's
        // server takes such maps.
        let mut info = slurm_like();
        info.push(Info::new("pmix.pmap", "raw:0,1;2,9"));
        let p = namespace_from_host("j", 2, &info, "n2", 0, 0)
            .unwrap()
            .placement
            .unwrap();
        let ranks: Vec<&[u32]> = p.nodes.iter().map(|n| n.ranks.as_slice()).collect();
        assert_eq!(ranks, [&[0, 1][..], &[2][..]]);
    }

    #[test]
    fn local_ranks_come_from_local_rank_entries_without_lpeers() {
        let info: Vec<Info> = slurm_like()
            .into_iter()
            .filter(|i| i.key.as_str() != Some("pmix.lpeers"))
            .collect();
        let ns = namespace_from_host("n", 2, &info, "n2", 0, 0).unwrap();
        let ranks: Vec<u32> = ns.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [2, 3]);
    }

    #[test]
    fn local_rank_entries_of_other_nodes_are_not_local_and_a_zero_count_means_none() {
        // Open MPI's mpirun: every pdata has a local rank, and names its own node.
        let mut info = vec![Info::new("pmix.job.size", 4u32)];
        for r in 0..4u32 {
            info.push(pdata(
                r,
                vec![
                    Info::new("pmix.lrank", (r % 2) as u16),
                    Info::new("pmix.hname", if r < 2 { "a" } else { "b" }),
                ],
            ));
        }
        let ns = namespace_from_host("n", 2, &info, "b", 0, 0).unwrap();
        let ranks: Vec<u32> = ns.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [2, 3]);
        let ns = namespace_from_host("n", 0, &info, "hnp", 0, 0).unwrap();
        assert!(ns.ranks.is_empty());
        assert_eq!(ns.job_size, 4);
    }

    #[test]
    fn a_bare_registration_is_every_rank_local() {
        let ns = namespace_from_host("n", 3, &[], "n1", 0, 0).unwrap();
        assert_eq!(ns.job_size, 3);
        assert_eq!(ns.ranks.len(), 3);
        assert_eq!(ns.ranks[2].local_rank, 2);
    }

    #[test]
    fn a_local_count_that_disagrees_with_the_local_list_is_refused() {
        let e = namespace_from_host("n", 3, &slurm_like(), "n2", 0, 0).unwrap_err();
        assert!(
            e.to_string().contains("2 local ranks listed, 3 registered"),
            "{e}"
        );
    }

    #[test]
    fn malformed_registrations_are_refused_with_the_key_named() {
        let cases: Vec<(Vec<Info>, &str)> = vec![
            (vec![Info::new("pmix.job.size", "four")], "pmix.job.size"),
            (
                vec![
                    Info::new("pmix.job.size", 2u32),
                    Info::new("pmix.lpeers", "0,5"),
                ],
                "pmix.lpeers",
            ),
            (
                vec![
                    Info::new("pmix.job.size", 2u32),
                    Info::new("pmix.lpeers", "1-0"),
                ],
                "pmix.lpeers",
            ),
            (vec![Info::new("pmix.pdata", 3u32)], "pmix.pdata"),
            (
                vec![Info::new(
                    "pmix.pdata",
                    Value::DataArray(DataArray::infos(vec![Info::new("pmix.lrank", 0u16)])),
                )],
                "pmix.rank",
            ),
            (
                vec![Info::new("pmix.job.size", MAX_RANKS + 1)],
                "pmix.job.size",
            ),
            (
                vec![Info::new("pmix.job.size", 1u32), pdata(1, vec![])],
                "pmix.pdata of rank 1",
            ),
        ];
        for (info, needle) in cases {
            let e = namespace_from_host("n", -1, &info, "n1", 0, 0).unwrap_err();
            assert!(e.to_string().contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn a_custom_range_crosses_a_host_as_bytes_and_comes_back_a_proc_array() {
        let range = pmix_wire::DataArray::new(
            pmix_wire::DataType::Proc,
            vec![
                Value::Proc(pmix_wire::Proc::new("job", 0)),
                Value::Proc(pmix_wire::Proc::new("job", 3)),
            ],
        )
        .unwrap();
        let info = vec![
            Info::new("pmix.grp.id", "g"),
            Info::new("pmix.evrange", Value::DataArray(range.clone())),
        ];
        let sent = event_info_to_host(&info);
        assert_eq!(sent[0], info[0]);
        assert_eq!(sent[1].key, "pmixrs.evrange");
        assert!(matches!(sent[1].value, Value::ByteObject(_)));
        let global = pmix_wire::DataRange::GLOBAL;
        assert_eq!(
            event_info_from_host(sent, global),
            (info, pmix_wire::DataRange::CUSTOM)
        );
        // Bytes that do not decode: the range is dropped, nothing else.
        let bad = vec![Info::new(
            "pmixrs.evrange",
            pmix_wire::ByteObject(vec![1, 2]),
        )];
        assert!(event_info_from_host(bad, global).0.is_empty());
        // No range list crossed: the host's range stands.
        let plain = vec![Info::new("x", 1u32)];
        assert_eq!(event_info_from_host(plain.clone(), global), (plain, global));
    }
}
