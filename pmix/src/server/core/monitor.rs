//! MONITOR (docs/wire.md §6.13): heartbeat monitoring of a client
//! (`PMIx_Process_monitor` with `PMIX_MONITOR_HEARTBEAT`, then `PMIx_Heartbeat`).
//!
//! A request to be monitored for heartbeats (`pmix.monitor.mbeat`) registers the
//! requester with its period (`pmix.monitor.btime`, seconds, default 1) and how many
//! periods may pass without a beat (`pmix.monitor.bdrop`, default 0), under its id
//! (`pmix.monitor.id`), and is answered `STATUS 0`. Each heartbeat frame (tag 1)
//! from that connection re-arms its monitors. A monitor whose `(drops + 1) ×
//! period` passes without a beat raises the event code the request named (e.g.
//! `PMIX_MONITOR_HEARTBEAT_ALERT`), source the monitored process, range
//! NAMESPACE, with `pmix.monitor.id`, and re-arms. `pmix.monitor.cancel` drops the
//! requester's monitors of that id (NULL: all). Other monitors (files) get
//! `PMIX_ERR_NOT_SUPPORTED`. A closed connection's monitors go with it.

use std::time::{Duration, Instant};

use pmix_wire::msg::Monitor;
use pmix_wire::{Command, DataRange, Info, Status, Value};

use super::{ConnId, Core, ProcKey, info_value};
use pmix_wire::keys;

/// The monitors in force.
#[derive(Debug, Default)]
pub(crate) struct Monitors {
    list: Vec<Beat>,
}

#[derive(Debug)]
struct Beat {
    conn: ConnId,
    proc: ProcKey,
    id: Option<String>,
    code: Status,
    window: Duration,
    due: Instant,
}

impl Monitors {
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.list.iter().map(|b| b.due).min()
    }

    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.list.retain(|b| b.conn != conn);
    }

    /// A heartbeat from `conn`.
    pub(crate) fn beat(&mut self, conn: ConnId, now: Instant) {
        for b in self.list.iter_mut().filter(|b| b.conn == conn) {
            b.due = now + b.window;
        }
    }
}

fn seconds(directives: &[Info], key: &str, default: u64) -> u64 {
    info_value(directives, key)
        .and_then(Value::as_u64)
        .unwrap_or(default)
}

/// MONITOR from `conn`.
pub(super) fn monitor(core: &mut Core, conn: ConnId, tag: u32, m: Monitor, now: Instant) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let proc = peer.proc.clone();
    let id = info_value(&m.directives, keys::MONITOR_ID)
        .and_then(Value::as_str)
        .map(str::to_string);
    let status = if m.monitor.key == keys::MONITOR_HEARTBEAT {
        let period = seconds(&m.directives, keys::MONITOR_HEARTBEAT_TIME, 1).clamp(1, 86_400);
        let drops = seconds(&m.directives, keys::MONITOR_HEARTBEAT_DROPS, 0).min(1_000);
        let window = Duration::from_secs(period * (drops + 1));
        if core.monitors.list.iter().filter(|b| b.conn == conn).count() >= 64 {
            super::ERR_OUT_OF_RESOURCE
        } else {
            core.monitors.list.push(Beat {
                conn,
                proc,
                id,
                code: m.error,
                window,
                due: now + window,
            });
            Status::SUCCESS
        }
    } else if m.monitor.key == keys::MONITOR_CANCEL {
        let which = m.monitor.value.as_str().map(str::to_string);
        core.monitors
            .list
            .retain(|b| b.conn != conn || (which.is_some() && b.id != which));
        Status::SUCCESS
    } else {
        Status::ERR_NOT_SUPPORTED
    };
    core.reply_status(conn, tag, Command::Monitor, status);
}

/// Monitors whose window passed without a beat: their event, and re-armed.
pub(super) fn tick(core: &mut Core, now: Instant) {
    let mut alerts = Vec::new();
    for b in core.monitors.list.iter_mut().filter(|b| b.due <= now) {
        b.due = now + b.window;
        let info =
            b.id.as_ref()
                .map(|id| vec![Info::new(keys::MONITOR_ID, id.as_str())])
                .unwrap_or_default();
        alerts.push((b.code, b.proc.clone(), info));
    }
    for (code, proc, info) in alerts {
        core.raise(code, &proc, info, DataRange::NAMESPACE, None);
    }
}
