//! The connect handshake's decisions (docs/wire.md §3.2–3.3, docs/design.md §8).
//!
//! Every peer: the socket's real owner (`peer_uid`, from the kernel) must be the
//! server's user, whatever the credential claims, and the credential must claim
//! that same uid (docs/design.md §8); the psec module must be
//! `native` with an 8-byte credential; the bfrops module `v41` and a 4.2-protocol
//! version. A launched client (flag 0) must name a registered, not yet connected
//! rank, and its credential must be the uid/gid registered for its namespace. A
//! tool, launcher or singleton (flags 3–10) must claim the server's uid in both
//! its credential and its identity block; one that needs an identifier (3, 6) gets
//! `<server nspace>.tool.<n>`, rank 0; one that names itself may not take the
//! server's namespace or a job's. Legacy flags 1 and 2 never reach us (the
//! codec refuses pre-4.2 versions). A tool or launcher started as a rank of one of
//! our jobs (flags 5 and 8 naming a registered namespace) is that rank, with the
//! checks of a launched client, answered with the tool reply. Every refusal closes
//! without a reply.

use std::time::Instant;

use pmix_wire::handshake::ToolAccept;
use pmix_wire::{ClientReply, ConnectMsg, Identity, PeerKind, ToolReply};

use super::namespace::RankState;
use super::{ConnId, Core, Output, Peer, Refused, Upcall};

pub(super) fn connect(
    core: &mut Core,
    conn: ConnId,
    msg: &ConnectMsg,
    peer_uid: u32,
    now: Instant,
) -> Result<Vec<u8>, Refused> {
    let _ = now;
    if core.conns.contains_key(&conn) {
        return Err(Refused::DuplicateConn(conn));
    }
    if core.conns.len() >= core.cfg.max_conns {
        return Err(Refused::TooManyConns(core.cfg.max_conns));
    }
    if peer_uid != core.cfg.uid {
        return Err(Refused::PeerUid {
            peer_uid,
            server_uid: core.cfg.uid,
        });
    }
    if msg.psec != "native" {
        return Err(Refused::Unsupported(format!(
            "psec module {:?} (only native is served)",
            msg.psec
        )));
    }
    let Some((cuid, cgid)) = msg.native_ids() else {
        return Err(Refused::Credential(format!(
            "a native credential of {} bytes (8 expected)",
            msg.credential.len()
        )));
    };
    if cuid != peer_uid {
        return Err(Refused::Credential(format!(
            "claims uid {cuid}, its socket is owned by uid {peer_uid}"
        )));
    }
    if !msg.version.is_supported() {
        return Err(Refused::Unsupported(format!(
            "version {}",
            msg.version.text
        )));
    }
    let codec = msg
        .codec(core.cfg.limits)
        .map_err(|_| Refused::Unsupported(format!("bfrops module {:?}", msg.bfrops)))?;
    match &msg.identity {
        Identity::Client { nspace, rank } => {
            claim_rank(core, conn, nspace, *rank, (cuid, cgid))?;
            let index = core.next_index;
            core.next_index = core.next_index.wrapping_add(1);
            add_rank_peer(core, conn, codec, nspace, *rank);
            if let Some(peer) = core.conns.get_mut(&conn) {
                peer.node_store = msg.gds == pmix_wire::nodestore::GDS_NAME;
                peer.ds21 = msg.gds == "ds21";
            }
            Ok(ClientReply { status: 0, index }.encode().to_vec())
        }
        Identity::Named {
            kind: PeerKind::ToolClient | PeerKind::LauncherClient,
            nspace,
            rank,
            ..
        } if core.namespaces.contains_key(nspace) => {
            // A tool or launcher we started as a rank of a job: it is that rank,
            // answered with the tool reply.
            claim_rank(core, conn, nspace, *rank, (cuid, cgid))?;
            let reply = tool_reply(core, None)?;
            add_rank_peer(core, conn, codec, nspace, *rank);
            Ok(reply)
        }
        Identity::Ids { kind, uid, gid } | Identity::Named { kind, uid, gid, .. } => {
            if (cuid, *uid) != (core.cfg.uid, core.cfg.uid)
                || (cgid, *gid) != (core.cfg.gid, core.cfg.gid)
            {
                return Err(Refused::Credential(format!(
                    "tool claims uid {cuid}/{uid} gid {cgid}/{gid}, the server runs as uid {} gid {}",
                    core.cfg.uid, core.cfg.gid
                )));
            }
            let (proc, assigned) = match msg.identity.proc() {
                Some((ns, rank)) if !kind.needs_identifier() => ((ns.to_string(), rank), None),
                _ => {
                    let ns = format!("{}.tool.{}", core.cfg.nspace, core.next_tool);
                    core.next_tool += 1;
                    ((ns.clone(), 0), Some((ns, 0)))
                }
            };
            // Nobody else speaks as the server: clients believe a failure only
            // from its namespace.
            if core.namespaces.contains_key(&proc.0) || proc.0 == core.cfg.nspace {
                return Err(Refused::Unsupported(format!(
                    "a tool naming itself after the server's or a job's namespace {}",
                    proc.0
                )));
            }
            let reply = tool_reply(core, assigned)?;
            core.conns.insert(
                conn,
                Peer {
                    codec,
                    proc,
                    tool: true,
                    finalized: false,
                    regs: Vec::new(),
                    node_store: false,
                    segment_named: false,
                    fence_told: 0,
                    ds21: false,
                },
            );
            Ok(reply)
        }
    }
}

/// Checks that `nspace`:`rank` is a registered rank, not connected yet, whose
/// namespace is registered for the claimed `ids`, and marks it connected on `conn`.
fn claim_rank(
    core: &mut Core,
    conn: ConnId,
    nspace: &str,
    rank: u32,
    ids: (u32, u32),
) -> Result<(), Refused> {
    let Some(ns) = core.namespaces.get_mut(nspace) else {
        return Err(unknown(nspace, rank));
    };
    if ids != (ns.spec.uid, ns.spec.gid) {
        return Err(Refused::Credential(format!(
            "claims uid {} gid {}, {nspace} is registered for uid {} gid {}",
            ids.0, ids.1, ns.spec.uid, ns.spec.gid
        )));
    }
    match ns.states.get_mut(&rank) {
        None => Err(unknown(nspace, rank)),
        Some(st @ RankState::Waiting) => {
            *st = RankState::Connected(conn);
            Ok(())
        }
        Some(_) => Err(Refused::AlreadyConnected {
            nspace: nspace.into(),
            rank,
        }),
    }
}

/// Records the peer of a rank that connected, and tells the launcher.
fn add_rank_peer(core: &mut Core, conn: ConnId, codec: pmix_wire::Codec, nspace: &str, rank: u32) {
    core.conns.insert(
        conn,
        Peer {
            codec,
            proc: (nspace.into(), rank),
            tool: false,
            finalized: false,
            regs: Vec::new(),
            node_store: false,
            segment_named: false,
            fence_told: 0,
            ds21: false,
        },
    );
    core.out.push_back(Output::Host(Upcall::Connected {
        conn,
        nspace: nspace.into(),
        rank,
    }));
}

/// The bytes of an accepting tool reply.
fn tool_reply(core: &Core, assigned: Option<(String, u32)>) -> Result<Vec<u8>, Refused> {
    ToolReply {
        status: 0,
        accept: Some(ToolAccept {
            assigned,
            server_nspace: core.cfg.nspace.clone(),
            server_rank: core.cfg.rank,
            cred_status: 0,
        }),
    }
    .encode()
    .map_err(|e| Refused::Unsupported(format!("tool reply: {e}")))
}

fn unknown(nspace: &str, rank: u32) -> Refused {
    Refused::UnknownProc {
        nspace: nspace.into(),
        rank,
    }
}
