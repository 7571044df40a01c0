//! OpenPMIx's ds21 store for libpmix2 clients (docs/serving.md §5.7): what the
//! core writes there, as [`Output::Ds21`] patches the I/O layer applies to the
//! namespace's files under every reader's lock. The job's information at
//! registration (job-level values and this node's, OpenPMIx's way: its node array's
//! keys at WILDCARD but its name and id; each rank's values); every commit's LOCAL
//! and GLOBAL values; what the host brings of other nodes' ranks; a rank's
//! distances found when it connects. Every value stays in the core's own store
//! too: a key the files lack is asked by GETNB, as libpmix2 does.

use pmix_wire::ds21::{Ds21Writer, value_bytes};
use pmix_wire::msg::JobItem;
use pmix_wire::{BufferType, Kval, Rank};

use super::{Core, Output};

/// The buffer type values are packed in: what [`crate::Server::client_env`] gives
/// every client (`PMIX_BFROP_BUFFER_NON_DESC`).
const PACKED: BufferType = BufferType::NonDescribed;

/// Files `kvals` for `rank` of `nspace` in its ds21 store, when it has one: the
/// patches go out as [`Output::Ds21`]. A value that cannot go there (too large,
/// a key libpmix2 cannot hold) is left to GETNB.
pub(super) fn file(core: &mut Core, nspace: &str, rank: u32, kvals: &[Kval]) {
    let Some(ns) = core.namespaces.get_mut(nspace) else {
        return;
    };
    let Some(w) = ns.ds21.as_mut() else {
        return;
    };
    let mut patches = append(w, rank, kvals);
    if patches.is_empty() {
        return;
    }
    // Writes that follow each other (a fence's data of every rank) go as one
    // batch: one hold of the readers' locks.
    if let Some(Output::Ds21 {
        nspace: last,
        patches: queued,
    }) = core.out.back_mut()
        && last == nspace
    {
        queued.append(&mut patches);
        return;
    }
    core.out.push_back(Output::Ds21 {
        nspace: nspace.to_owned(),
        patches,
    });
}

/// `kvals` appended for `rank`, each value packed; those that cannot be are left
/// out (one at a time, so the others go in).
fn append(w: &mut Ds21Writer, rank: u32, kvals: &[Kval]) -> Vec<pmix_wire::ds21::Patch> {
    let packed: Vec<(&str, Vec<u8>)> = kvals
        .iter()
        .filter_map(|k| Some((k.key.as_str()?, value_bytes(&k.value, PACKED).ok()?)))
        .collect();
    let entries: Vec<(&str, &[u8])> = packed.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    match w.append(rank, &entries) {
        Ok(p) => p,
        Err(_) => entries
            .iter()
            .flat_map(|e| w.append(rank, std::slice::from_ref(e)).unwrap_or_default())
            .collect(),
    }
}

/// What a namespace's store holds at registration: the job-level values and this
/// node's (`head`, then the first node array of `tail` but its name and id), then
/// each rank's values.
pub(super) fn job_patches(
    w: &mut Ds21Writer,
    head: &[JobItem],
    bfrops: &Kval,
    tail: &[JobItem],
    ranks: impl Iterator<Item = (u32, Vec<Kval>)>,
) -> Vec<pmix_wire::ds21::Patch> {
    let mut job: Vec<Kval> = head
        .iter()
        .filter_map(|i| match i {
            JobItem::Value(k) => Some(k.clone()),
            _ => None,
        })
        .collect();
    job.push(bfrops.clone());
    if let Some(node) = tail.iter().find_map(|i| match i {
        JobItem::Node(arr) => Some(arr),
        _ => None,
    }) {
        job.extend(
            node.iter()
                .filter(|i| {
                    i.key != pmix_wire::keys::HOSTNAME
                        && i.key != pmix_wire::keys::NODEID
                        && i.key != pmix_wire::keys::HOSTNAME_ALIASES
                })
                .map(|i| Kval {
                    key: i.key.clone(),
                    value: i.value.clone(),
                }),
        );
    }
    let mut patches = append(w, Rank::WILDCARD.0, &job);
    for (rank, kvals) in ranks {
        patches.extend(append(w, rank, &kvals));
    }
    patches
}
