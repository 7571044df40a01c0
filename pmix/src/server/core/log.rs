//! LOG (docs/wire.md §6.13): a client's `PMIx_Log`.
//!
//! Each datum of the request for a channel this server has is handed to the launcher
//! ([`Upcall::Log`]): `pmix.log.stderr` and `pmix.log.stdout` (a string, written as
//! it is, by the host or the server's process); the other channels (syslog, email, the global
//! data store) are not served. The reply is `STATUS 0` when at least one datum was
//! taken, else `PMIX_ERR_NOT_SUPPORTED` (OpenPMIx answers so when no channel could
//! take any). The directives (`pmix.log.gentimestamp`, `pmix.log.once`, …) change
//! nothing: a message goes out once, without a timestamp of ours.

use pmix_wire::msg::Log;
use pmix_wire::{Command, Status};

use super::{ConnId, Core, LogStream, Output, Upcall};

/// The channels served, by key.
const CHANNELS: [(&str, LogStream); 2] = [
    (pmix_wire::keys::LOG_STDERR, LogStream::Stderr),
    (pmix_wire::keys::LOG_STDOUT, LogStream::Stdout),
];

/// LOG from `conn`.
pub(super) fn log(core: &mut Core, conn: ConnId, tag: u32, l: Log) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let (nspace, rank) = peer.proc.clone();
    let mut taken = false;
    for d in &l.data {
        let Some(stream) = CHANNELS.iter().find(|(k, _)| d.key == *k).map(|(_, s)| *s) else {
            continue;
        };
        let Some(text) = d.value.as_str() else {
            continue;
        };
        taken = true;
        core.out.push_back(Output::Host(Upcall::Log {
            nspace: nspace.clone(),
            rank,
            stream,
            text: text.to_string(),
        }));
    }
    let status = if taken {
        Status::SUCCESS
    } else {
        Status::ERR_NOT_SUPPORTED
    };
    core.reply_status(conn, tag, Command::Log, status);
}
