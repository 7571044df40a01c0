//! The node store's fence segments (docs/serving.md §5.6): after each fence of a
//! namespace served here with a connected client of the store, one segment of the
//! next generation holding what every
//! rank of it committed that a peer of this node sees (its LOCAL values, GLOBAL
//! included; what the host brought of other nodes' ranks), when any of it changed
//! since the last. The I/O layer places it ([`Core::take_segments`],
//! [`Core::fence_segment_placed`]); a GETNB of a client that reads the store names
//! it once per fence, so its later gets of any rank are answered from the mapping.

use pmix_wire::nodestore::SegmentBuilder;
use pmix_wire::{Kval, Proc, Rank};

use super::{ConnId, Core, ProcKey};

/// A segment the core wrote for the I/O layer to place ([`Core::take_segments`]).
#[derive(Debug)]
pub struct NewSegment {
    /// Its namespace.
    pub nspace: String,
    /// Its generation (1, 2, …: the namespace's fence segments in order).
    pub generation: u64,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The uid and gid the namespace was registered for, who must own it.
    pub owner: (u32, u32),
}

/// A namespace's latest fence segment.
#[derive(Debug, Default)]
pub(crate) struct FenceSegment {
    /// Bumped by every commit or host data of a rank of the namespace.
    pub(crate) stamp: u64,
    /// The stamp the latest segment was written at (`None`: none yet).
    built: Option<u64>,
    /// The latest segment's generation.
    generation: u64,
    /// Where the I/O layer placed it (`None`: not yet).
    path: Option<String>,
}

impl FenceSegment {
    /// The latest segment's generation and path, while nothing changed since it
    /// was written.
    fn current(&self) -> Option<(u64, &str)> {
        (self.built == Some(self.stamp))
            .then_some(())
            .and(self.path.as_deref().map(|p| (self.generation, p)))
    }
}

/// A fence of `participants` completed: each namespace of them served here whose
/// data changed since its last segment gets a new one ([`Core::take_segments`]).
pub(super) fn fence_done(core: &mut Core, participants: &[ProcKey]) {
    if !core.cfg.node_store {
        return;
    }
    let mut names: Vec<&str> = participants.iter().map(|p| p.0.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut written = Vec::new();
    for name in names {
        let Some(ns) = core.namespaces.get(name) else {
            continue;
        };
        // Only our clients read fence segments: a namespace none of whose
        // connected ranks announced the store gets none (its libpmix2 clients
        // read ds21).
        let readers = core
            .conns
            .values()
            .any(|p| p.node_store && p.proc.0 == name);
        if !readers {
            continue;
        }
        let seg = &ns.fence_segment;
        if seg.built == Some(seg.stamp) {
            continue;
        }
        let generation = seg.generation + 1;
        let built = SegmentBuilder::new(name, generation).and_then(|mut b| {
            for (rank, kvals) in core.store.local_values(name) {
                for kv in kvals {
                    if let Some(key) = kv.key.as_str() {
                        b.push(rank, key, &kv.value)?;
                    }
                }
            }
            b.finish()
        });
        // Values a segment cannot hold (over 4 GiB, a key no peer accepts) stay
        // with the messages.
        if let Ok(bytes) = built {
            written.push(NewSegment {
                nspace: name.to_owned(),
                generation,
                bytes,
                owner: (ns.spec.uid, ns.spec.gid),
            });
        }
    }
    for w in &written {
        if let Some(ns) = core.namespaces.get_mut(&w.nspace) {
            let seg = &mut ns.fence_segment;
            (seg.built, seg.generation, seg.path) = (Some(seg.stamp), w.generation, None);
        }
    }
    core.new_segments.extend(written);
}

/// A commit or the host's data changed what a rank of `nspace` holds: its
/// latest fence segment is no longer named.
pub(super) fn data_changed(core: &mut Core, nspace: &str) {
    if let Some(ns) = core.namespaces.get_mut(nspace) {
        ns.fence_segment.stamp += 1;
    }
}

/// `conn` contributed to a fence: the next segment is named to it again.
pub(super) fn fenced(core: &mut Core, conn: ConnId) {
    if let Some(peer) = core.conns.get_mut(&conn) {
        peer.fence_told = 0;
    }
}

/// What a GETNB answer to `conn` about a rank of `nspace` adds: the namespace's
/// current fence segment, as `pmixrs.nstore` under its WILDCARD, once per
/// generation, for a client of that namespace that reads the store.
pub(super) fn named_to(core: &mut Core, conn: ConnId, nspace: &str) -> Option<(Proc, Kval)> {
    let peer = core.conns.get(&conn)?;
    if !peer.node_store || peer.proc.0 != nspace {
        return None;
    }
    let (generation, path) = core.namespaces.get(nspace)?.fence_segment.current()?;
    if peer.fence_told >= generation {
        return None;
    }
    let named = (
        Proc::new(nspace, Rank::WILDCARD.0),
        Kval::new(pmix_wire::keys::RS_NODE_STORE, path),
    );
    if let Some(peer) = core.conns.get_mut(&conn) {
        peer.fence_told = generation;
    }
    Some(named)
}

impl Core {
    /// The fence segments written since the last call, for the I/O layer to place
    /// and name back ([`Core::fence_segment_placed`]); until then GETNBs do not
    /// name them.
    pub fn take_segments(&mut self) -> Vec<NewSegment> {
        std::mem::take(&mut self.new_segments)
    }

    /// Fence segment `generation` of `nspace` is at `path`: GETNBs of its clients
    /// that read the store name it while it is current. Ignored when a later one
    /// was written meanwhile, or for a namespace not registered.
    pub fn fence_segment_placed(&mut self, nspace: &str, generation: u64, path: String) {
        if let Some(ns) = self.namespaces.get_mut(nspace)
            && ns.fence_segment.generation == generation
        {
            ns.fence_segment.path = Some(path);
        }
    }
}
