//! QUERY (docs/wire.md §6.11) and JOB_CONTROL (§6.12).
//!
//! QUERY answers, per query, the keys of [`KNOWN_KEYS`]: `pmix.qry.ns` (the
//! registered namespaces, comma-separated) and the job-level values of a
//! namespace (`pmix.job.size`, `pmix.max.size`, `pmix.univ.size`,
//! `pmix.local.size`, `pmix.num.nodes`, `pmix.node.size`, `pmix.lpeers`) for the
//! namespace of the qualifier `pmix.nspace`, else the requester's. The reply is
//! `STATUS 0` with one INFO per key answered; when no key at all is answered it is
//! a lone `PMIX_ERR_NOT_SUPPORTED` (a key we do not know is skipped when others are
//! answered: the client reads the INFOs only under status 0).
//!
//! JOB_CONTROL with a cleanup registration (`pmix.reg.cleanup`,
//! `pmix.reg.cleanupdir`, as Open MPI 4.1 sends in `MPI_Init`) is answered with a
//! lone `STATUS 0` (the files are not removed by us: the launcher owns the job's
//! directories), and so are the declarations a job makes about itself:
//! `pmix.jctrl.preempt` (it may be preempted) and `pmix.jctrl.ckmethod` (how to
//! ask it for a checkpoint) — as `mpirun` answers them; no launcher of ours
//! preempts or checkpoints, so nothing ever acts on them. Any other job control
//! (kill, signal, terminate, restart, checkpoint requests, …) gets
//! `PMIX_ERR_NOT_SUPPORTED`.

use pmix_wire::msg::{InfoReply, JobControl, QueryInfo};
use pmix_wire::{Command, Info, Reply, Status, Value};

use super::{ConnId, Core, info_value};

/// The query keys answered besides `pmix.qry.ns`: job-level values of a namespace.
pub const KNOWN_KEYS: [&str; 7] = [
    pmix_wire::keys::JOB_SIZE,
    pmix_wire::keys::MAX_PROCS,
    pmix_wire::keys::UNIV_SIZE,
    pmix_wire::keys::LOCAL_SIZE,
    pmix_wire::keys::NUM_NODES,
    pmix_wire::keys::NODE_SIZE,
    pmix_wire::keys::LOCAL_PEERS,
];

/// QUERY.
pub(super) fn query(core: &mut Core, conn: ConnId, tag: u32, q: QueryInfo) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let own = peer.proc.0.clone();
    let mut out = Vec::new();
    for query in &q.queries {
        let nspace = info_value(&query.qualifiers, pmix_wire::keys::NSPACE)
            .and_then(Value::as_str)
            .unwrap_or(&own);
        for key in query.keys.iter().filter_map(|k| k.as_str()) {
            if key == pmix_wire::keys::QUERY_NAMESPACES {
                let list = core.namespaces().collect::<Vec<_>>().join(",");
                out.push(Info::new(key, list));
            } else if KNOWN_KEYS.contains(&key)
                && let Some(v) = core.namespaces.get(nspace).and_then(|ns| ns.job_value(key))
            {
                out.push(Info::new(key, v.clone()));
            }
        }
    }
    if out.is_empty() {
        return core.reply_status(conn, tag, Command::Query, Status::ERR_NOT_SUPPORTED);
    }
    core.reply(
        conn,
        tag,
        &Reply::Query(InfoReply {
            status: Status::SUCCESS,
            info: out,
        }),
    );
}

/// JOB_CONTROL.
pub(super) fn job_control(core: &mut Core, conn: ConnId, tag: u32, j: JobControl) {
    let declared = |i: &Info| {
        [
            pmix_wire::keys::REGISTER_CLEANUP,
            pmix_wire::keys::REGISTER_CLEANUP_DIR,
            pmix_wire::keys::JOB_CTRL_PREEMPTIBLE,
            pmix_wire::keys::JOB_CTRL_CHECKPOINT_METHOD,
        ]
        .iter()
        .any(|k| i.key == *k)
    };
    let ok = j.directives.iter().any(declared);
    let status = if ok {
        Status::SUCCESS
    } else {
        Status::ERR_NOT_SUPPORTED
    };
    core.reply_status(conn, tag, Command::JobControl, status);
}
