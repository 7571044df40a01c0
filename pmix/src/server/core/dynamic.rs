//! SPAWNNB (docs/wire.md §6.13): a client asks for new processes.
//!
//! With [`Provides::SPAWN`](super::Provides::SPAWN) (a launcher that starts
//! processes, as `pmix-run`), a request whose apps each name a program and at least
//! one process becomes [`Upcall::Spawn`](super::Upcall::Spawn) for the launcher,
//! and its reply is held until the launcher answers
//! [`HostAnswer::Spawn`](super::HostAnswer::Spawn): with the new namespace (registered
//! by then), the reply is `STATUS 0`, the namespace and that job's information,
//! the payload a REQ of that namespace gets (what libpmix2 files as the new job's
//! data, so the parent reads its size without asking); with an error, `STATUS`
//! alone. A request with no app, an app without a program or with
//! `maxprocs < 1` gets `PMIX_ERR_BAD_PARAM` at once; without `SPAWN`, every
//! request gets `PMIX_ERR_NOT_SUPPORTED`. A parent whose connection closes before
//! the answer is not answered (the launcher's job runs on).
//!
//! CONNECTNB and DISCONNECTNB are collectives over the listed processes, run by the
//! fences' machinery (`fence.rs`).

use std::collections::HashMap;

use pmix_wire::msg::Spawn;
use pmix_wire::{Command, Status};

use super::{ConnId, Core, Output, Provides, Upcall};

/// The spawns waiting for the launcher's answer, by id.
#[derive(Debug, Default)]
pub(crate) struct Spawns {
    pending: HashMap<u64, (ConnId, u32)>,
}

impl Spawns {
    /// How many of `conn`'s requests wait here.
    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        self.pending.values().filter(|(c, _)| *c == conn).count()
    }

    /// Forgets the spawns `conn` asked for (its connection closed).
    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.pending.retain(|_, (c, _)| *c != conn);
    }
}

/// SPAWNNB from `conn`.
pub(super) fn spawn(core: &mut Core, conn: ConnId, tag: u32, s: Spawn) {
    if !core.cfg.provides.contains(Provides::SPAWN) {
        return core.reply_status(conn, tag, Command::SpawnNb, Status::ERR_NOT_SUPPORTED);
    }
    let Some(parent) = core.conns.get(&conn).map(|p| p.proc.clone()) else {
        return;
    };
    let runnable = |a: &pmix_wire::App| {
        a.maxprocs >= 1
            && a.cmd
                .as_ref()
                .and_then(|c| c.as_str())
                .is_some_and(|c| !c.is_empty())
    };
    if s.apps.is_empty() || !s.apps.iter().all(runnable) {
        return core.reply_status(conn, tag, Command::SpawnNb, Status::ERR_BAD_PARAM);
    }
    if !core.may_wait(conn) {
        return core.reply_status(conn, tag, Command::SpawnNb, super::ERR_OUT_OF_RESOURCE);
    }
    let id = core.next_host_id();
    core.spawns.pending.insert(id, (conn, tag));
    core.out.push_back(Output::Host(Upcall::Spawn {
        id,
        parent,
        info: s.info,
        apps: s.apps,
    }));
}

/// The launcher's answer to spawn `id`: the new namespace (registered already), or
/// the status the parent gets. An id nobody waits for is ignored.
pub(super) fn done(core: &mut Core, id: u64, result: Result<&str, Status>) {
    let Some((conn, tag)) = core.spawns.pending.remove(&id) else {
        return;
    };
    let Some(codec) = core.conns.get(&conn).map(|p| p.codec.clone()) else {
        return;
    };
    let status = match result {
        Ok(nspace) => {
            let job = core
                .namespaces
                .get_mut(nspace)
                .and_then(|ns| ns.blob(&codec));
            match job {
                Some(job) => {
                    let bytes = pmix_wire::msg::spawn_reply_with_job(&codec, Status::SUCCESS, &job);
                    return core.send_payload(conn, tag, bytes.ok());
                }
                // The launcher named a namespace it did not register.
                None => Status::ERROR,
            }
        }
        Err(Status::SUCCESS) => Status::ERROR,
        Err(s) => s,
    };
    core.reply_status(conn, tag, Command::SpawnNb, status);
}
