//! Our client reads its job information from the node store (docs/serving.md §5):
//! the server writes one segment per namespace in its temporary directory, a REQ of
//! a client that announced `pxns` names it, and the client maps it. Every answer is
//! the one a client given the job information by message gets.

mod client_common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use client_common::{client, env_of};
use pmix::Pmix;
use pmix::server::{NamespaceSpec, NodeSpec, Placement, RankSpec, Server, ServerConfig};
use pmix_core::PmixError;
use pmix_wire::nodestore::{Segment, WILDCARD};
use pmix_wire::{Info, Kval, Rank, Value};

const NS: &str = "store.job";
const SIZE: u32 = 6;

/// Rank `2m` and `2m + 1` on node `m` of three; this server is node 1's.
fn spec(nspace: &str) -> NamespaceSpec {
    let (uid, gid) = pmix::os::effective_ids();
    let mut spec = NamespaceSpec::single_node(nspace, SIZE, uid, gid);
    spec.ranks = [2u32, 3]
        .iter()
        .map(|&r| RankSpec {
            rank: r,
            local_rank: (r - 2) as u16,
            node_rank: (r - 2) as u16,
            cpuset: (r == 3).then(|| "core:0-1".to_string()),
            ..Default::default()
        })
        .collect();
    spec.job_info = vec![
        Kval::new("pmix.job.label", "a job of the node store"),
        Kval::new("pmix.ttl", 600u32),
        Kval::new(pmix_wire::keys::HOSTNAME, Value::String(None)),
    ];
    spec.placement = Some(Placement {
        nodes: (0..3)
            .map(|m| NodeSpec {
                name: format!("node{m}"),
                id: m,
                ranks: vec![2 * m, 2 * m + 1],
                info: vec![Info::new("pmix.node.label", format!("label of node {m}"))],
            })
            .collect(),
        this_node: Some(1),
        proc_info: (0..SIZE)
            .map(|r| {
                (
                    r,
                    vec![
                        Kval::new(pmix_wire::keys::HOSTNAME, format!("node{}", r / 2)),
                        Kval::new(pmix_wire::keys::NODEID, r / 2),
                        Kval::new("pmix.rank.label", format!("rank {r}")),
                    ],
                )
            })
            .collect(),
    });
    spec
}

fn server(nspace: &str, node_store: bool) -> Server {
    let cfg = ServerConfig {
        hostname: Some("node1".into()),
        node_store,
        ..ServerConfig::default()
    };
    let s = Server::start(cfg).unwrap();
    s.add_namespace(spec(nspace)).unwrap();
    s
}

/// The segment files in the server's temporary directory.
fn segments(s: &Server) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(s.tmpdir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("pxns."))
        })
        .collect();
    v.sort();
    v
}

/// Every answer `p` gives from what it holds of the job: each key the segment
/// holds (and one it does not), job-level, for every rank, and node-level for
/// every node by name and by id; the node list and each node's peers.
fn answers(p: &Pmix, keys: &[String]) -> Vec<String> {
    let c = p.client().unwrap();
    let mut out = Vec::new();
    let show = |r: Option<Result<Value, pmix::Error>>| match r {
        None => "absent".to_string(),
        Some(Ok(v)) => format!("{v:?}"),
        Some(Err(e)) => format!("error {:?}", e.status()),
    };
    for key in keys {
        out.push(format!(
            "job {key}: {}",
            show(c.get_local(NS, Rank::WILDCARD.0, key))
        ));
        for r in 0..SIZE + 1 {
            out.push(format!("rank {r} {key}: {}", show(c.get_local(NS, r, key))));
        }
        for m in 0..4u32 {
            for by in [
                Info::new(pmix_wire::keys::HOSTNAME, format!("node{m}")),
                Info::new(pmix_wire::keys::NODEID, m),
            ] {
                let info = [Info::new(pmix_wire::keys::NODE_INFO, true), by.clone()];
                let got = c.get(NS, Rank::WILDCARD.0, key, &info);
                let got = match got {
                    Ok(v) => format!("{v:?}"),
                    Err(e) => format!("error {:?}", e.status()),
                };
                out.push(format!("node {:?} {key}: {got}", by.value));
            }
        }
    }
    out.push(format!("nodes: {:?}", c.resolve_nodes(Some(NS))));
    for m in 0..3 {
        out.push(format!(
            "peers of node{m}: {:?}",
            c.resolve_peers(Some(&format!("node{m}")), Some(NS))
        ));
    }
    out
}

#[test]
fn a_client_of_our_server_maps_its_job_information_from_a_segment_only_its_user_reads() {
    let s = server(NS, true);
    let files = segments(&s);
    assert_eq!(files.len(), 1, "{files:?}");
    let meta = std::fs::symlink_metadata(&files[0]).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o400);
    let p = client(env_of(&s, NS, 2, &[]));
    let c = p.client().unwrap();
    assert!(c.reads_node_store());
    assert_eq!(
        c.get(NS, Rank::WILDCARD.0, "pmixrs.nstore", &[]).unwrap(),
        Value::string(files[0].to_str().unwrap())
    );
    // The segment goes with the namespace (a mapping made before stays valid).
    s.remove_namespace(NS).unwrap();
    assert!(segments(&s).is_empty());
    s.shutdown().unwrap();
}

#[test]
fn every_key_answers_alike_from_the_node_store_and_from_the_message() {
    let s = server(NS, true);
    let seg = {
        let map = pmix::os::Mapping::file(&segments(&s)[0]).unwrap();
        Segment::parse(map).unwrap()
    };
    let mut keys: Vec<String> = seg.keys().map(str::to_owned).collect();
    keys.push("pmix.no.such.key".into());
    assert!(seg.record(WILDCARD).is_some());
    assert!(keys.len() > 20, "{keys:?}");
    // Rank 2 twice, of two servers of one job: one maps, the other is sent its
    // job information (OpenPMIx's own choice of storage modules leaves the store
    // out).
    let twin = server(NS, true);
    let mapped = client(env_of(&s, NS, 2, &[]));
    let sent = client(env_of(&twin, NS, 2, &[("PMIX_MCA_gds", "hash")]));
    assert!(mapped.client().unwrap().reads_node_store());
    assert!(!sent.client().unwrap().reads_node_store());
    let (a, b) = (answers(&mapped, &keys), answers(&sent, &keys));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    // Not every answer is an absence: the comparison compared values.
    assert!(a.iter().filter(|l| !l.ends_with("absent")).count() > 100);
    mapped.finalize().unwrap();
    sent.finalize().unwrap();
    s.shutdown().unwrap();
    twin.shutdown().unwrap();
}

#[test]
fn a_segment_that_cannot_be_mapped_falls_back_to_the_message() {
    let s = server(NS, true);
    // Made writable: a file anyone may change is refused by the reader.
    let f = &segments(&s)[0];
    std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let p = client(env_of(&s, NS, 2, &[]));
    let c = p.client().unwrap();
    assert!(!c.reads_node_store());
    assert_eq!(
        c.get(NS, Rank::WILDCARD.0, "pmix.job.size", &[]).unwrap(),
        Value::Uint32(SIZE)
    );
    assert_eq!(
        c.get(NS, 4, "pmix.rank.label", &[]).unwrap(),
        Value::string("rank 4")
    );
    p.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn a_host_naming_a_local_rank_after_another_node_gets_no_segment() {
    // The segment's job-level keys are this node's; a client takes as its node
    // the one its own pmix.hname names: where they differ, messages.
    let mut spec = spec(NS);
    if let Some(p) = spec.placement.as_mut() {
        p.proc_info[2].1[0] = Kval::new(pmix_wire::keys::HOSTNAME, "node0");
    }
    let s = Server::start(ServerConfig {
        hostname: Some("node1".into()),
        ..ServerConfig::default()
    })
    .unwrap();
    s.add_namespace(spec).unwrap();
    assert!(segments(&s).is_empty());
    let p = client(env_of(&s, NS, 3, &[]));
    assert!(!p.client().unwrap().reads_node_store());
    p.finalize().unwrap();
    s.shutdown().unwrap();
}

#[test]
fn without_the_store_the_server_writes_no_segment_and_offers_hash() {
    let s = server(NS, false);
    assert!(segments(&s).is_empty());
    let env = s.client_env(NS, 2);
    assert!(env.contains(&("PMIX_GDS_MODULE".into(), "ds21,hash".into())));
    let p = client(env_of(&s, NS, 2, &[]));
    let c = p.client().unwrap();
    assert!(!c.reads_node_store());
    let e = c
        .get(NS, Rank::WILDCARD.0, "pmixrs.nstore", &[])
        .unwrap_err();
    assert_eq!(e.status(), pmix_core::Status::ERR_NOT_FOUND);
    p.finalize().unwrap();
    s.shutdown().unwrap();
}

/// Three ranks of one node put a GLOBAL, a LOCAL and a REMOTE value, commit and
/// fence (collecting); then each gets every rank's three keys. The answers, and
/// the server, per rank.
fn modex(store: bool) -> (Vec<Vec<String>>, Server, Vec<Pmix>) {
    let (uid, gid) = pmix::os::effective_ids();
    let s = Server::start(ServerConfig::default()).unwrap();
    s.add_namespace(NamespaceSpec::single_node("store.modex", 3, uid, gid))
        .unwrap();
    let gds: &[(&str, &str)] = if store {
        &[]
    } else {
        &[("PMIX_MCA_gds", "hash")]
    };
    let ranks: Vec<Pmix> = (0..3)
        .map(|r| client(env_of(&s, "store.modex", r, gds)))
        .collect();
    let threads: Vec<_> = ranks
        .iter()
        .cloned()
        .map(|p| {
            std::thread::spawn(move || {
                let c = p.client().unwrap();
                let me = p.proc_id().rank;
                c.put(pmix_wire::Scope::GLOBAL, "g", Value::Uint32(me))
                    .unwrap();
                c.put(pmix_wire::Scope::LOCAL, "l", Value::Uint32(100 + me))
                    .unwrap();
                c.put(pmix_wire::Scope::REMOTE, "r", Value::Uint32(200 + me))
                    .unwrap();
                c.commit().unwrap();
                c.fence(&[], &[Info::new("pmix.collect", true)]).unwrap();
                let immediate = [Info::new("pmix.immediate", true)];
                let mut out = Vec::new();
                for r in 0..3 {
                    for key in ["g", "l", "r"] {
                        out.push(match c.get("store.modex", r, key, &immediate) {
                            Ok(v) => format!("{r} {key} {v:?}"),
                            Err(e) => format!("{r} {key} error {:?}", e.status()),
                        });
                    }
                }
                out
            })
        })
        .collect();
    let answers = threads.into_iter().map(|t| t.join().unwrap()).collect();
    (answers, s, ranks)
}

#[test]
fn after_a_fence_peers_values_answer_alike_from_the_fence_segment_and_by_message() {
    let (mapped, s, ranks) = modex(true);
    let files = segments(&s);
    // The job segment and the fence's.
    assert_eq!(files.len(), 2, "{files:?}");
    let (sent, t, others) = modex(false);
    assert_eq!(mapped, sent);
    assert!(
        mapped[0].contains(&"2 l Uint32(102)".to_string()),
        "{mapped:?}"
    );
    for p in ranks.into_iter().chain(others) {
        p.finalize().unwrap();
    }
    s.shutdown().unwrap();
    t.shutdown().unwrap();
}

#[test]
fn after_one_get_names_the_fence_segment_the_others_need_no_server() {
    let (uid, gid) = pmix::os::effective_ids();
    let s = Server::start(ServerConfig::default()).unwrap();
    s.add_namespace(NamespaceSpec::single_node("store.fence", 4, uid, gid))
        .unwrap();
    let ranks: Vec<Pmix> = (0..4)
        .map(|r| client(env_of(&s, "store.fence", r, &[])))
        .collect();
    let threads: Vec<_> = ranks
        .iter()
        .cloned()
        .map(|p| {
            std::thread::spawn(move || {
                let c = p.client().unwrap();
                let me = p.proc_id().rank;
                c.put(
                    pmix_wire::Scope::GLOBAL,
                    "k",
                    Value::string(format!("v{me}")),
                )
                .unwrap();
                c.commit().unwrap();
                c.fence(&[], &[Info::new("pmix.collect", true)]).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let c = ranks[0].client().unwrap();
    // The first get asks the server, whose answer names the fence segment.
    assert_eq!(
        c.get("store.fence", 1, "k", &[]).unwrap(),
        Value::string("v1")
    );
    // The server gone, the other ranks' values still come: from the mapping.
    s.shutdown().unwrap();
    for r in 2..4 {
        assert_eq!(
            c.get("store.fence", r, "k", &[]).unwrap(),
            Value::string(format!("v{r}"))
        );
    }
}
