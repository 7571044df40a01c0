//! Small shared pieces of the core: sending replies, the per-connection bound,
//! a rank's state, reading directives, and the list of requests held until they
//! can be answered (held gets, held lookups).

use std::time::Instant;

use pmix_wire::{Command, Frame, Reply, Status};

use super::namespace::RankState;
use super::{ConnId, Core, Output, ProcKey};

impl Core {
    /// Sends `reply` on `conn` with `tag` in the peer's codec. A reply that cannot
    /// be encoded (it should not happen) is answered with a lone `PMIX_ERROR` so the
    /// client's receive completes.
    pub(crate) fn reply(&mut self, conn: ConnId, tag: u32, reply: &Reply) {
        let Some(peer) = self.conns.get(&conn) else {
            return;
        };
        let payload = reply.encode(&peer.codec).or_else(|_| {
            Reply::Status {
                command: reply.command(),
                status: Status::ERROR,
            }
            .encode(&peer.codec)
        });
        self.send_payload(conn, tag, payload.ok());
    }

    /// Sends a lone STATUS reply.
    pub(crate) fn reply_status(
        &mut self,
        conn: ConnId,
        tag: u32,
        command: Command,
        status: Status,
    ) {
        self.reply(conn, tag, &Reply::Status { command, status });
    }

    /// Sends an encoded payload as one frame on `tag` (pindex 0, as the 4.2
    /// server).
    pub(crate) fn send_payload(&mut self, conn: ConnId, tag: u32, payload: Option<Vec<u8>>) {
        let bytes = payload
            .and_then(|p| Frame::new(0, tag, p).ok())
            .and_then(|f| f.encode().ok());
        match bytes {
            Some(bytes) => self.out.push_back(Output::Send { conn, bytes }),
            // Only a payload over 4 GiB gets here: the peer cannot be answered.
            None => self.out.push_back(Output::Close { conn }),
        }
    }

    /// Whether `conn` may have one more waiting request ([`CoreConfig::max_pending`]).
    pub(crate) fn may_wait(&self, conn: ConnId) -> bool {
        self.store.pending_of(conn) + self.pubsub.pending_of(conn) + self.fences.pending_of(conn)
            < self.cfg.max_pending
    }

    /// Whether a local rank is gone (lost or finalized): it will never contribute.
    pub(crate) fn departed(&self, proc: &ProcKey) -> bool {
        self.namespaces
            .get(&proc.0)
            .and_then(|ns| ns.states.get(&proc.1))
            .is_some_and(|s| matches!(s, RankState::Lost | RankState::Finalized))
    }
}

/// The value of directive `key` in `info` (the last one given).
pub(crate) fn info_value<'a>(
    info: &'a [pmix_wire::Info],
    key: &str,
) -> Option<&'a pmix_wire::Value> {
    info.iter().rev().find(|i| i.key == key).map(|i| &i.value)
}

/// Whether the BOOL directive `key` is given and true.
pub(crate) fn info_flag(info: &[pmix_wire::Info], key: &str) -> bool {
    info_value(info, key).and_then(pmix_wire::Value::as_bool) == Some(true)
}

/// The deadline `pmix.timeout` (seconds, 0 = none) sets from `now`: `None` when
/// absent, 0, negative or not an integer; `default` applies when absent.
pub(crate) fn info_deadline(
    info: &[pmix_wire::Info],
    now: Instant,
    default: Option<std::time::Duration>,
) -> Option<Instant> {
    let d = match info_value(info, "pmix.timeout") {
        None => default?,
        Some(v) => {
            let secs = v
                .as_i64()
                .or_else(|| v.as_u64().and_then(|u| i64::try_from(u).ok()))?;
            if secs <= 0 {
                return None;
            }
            std::time::Duration::from_secs(secs.min(1 << 31) as u64)
        }
    };
    now.checked_add(d)
}

/// A request the server holds until it can be answered or its deadline passes.
pub(crate) trait HeldRequest {
    /// The connection it came on.
    fn conn(&self) -> ConnId;
    /// When it times out, if ever.
    fn deadline(&self) -> Option<Instant>;
}

/// The held requests of one kind, in arrival order.
#[derive(Debug)]
pub(crate) struct HeldList<T>(Vec<T>);

impl<T> Default for HeldList<T> {
    fn default() -> Self {
        HeldList(Vec::new())
    }
}

impl<T: HeldRequest> HeldList<T> {
    /// Holds `r`.
    pub(crate) fn push(&mut self, r: T) {
        self.0.push(r);
    }

    /// The earliest deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.0.iter().filter_map(T::deadline).min()
    }

    /// Drops what `conn` asked (it is gone).
    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.0.retain(|h| h.conn() != conn);
    }

    /// How many requests of `conn` are held.
    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        self.0.iter().filter(|h| h.conn() == conn).count()
    }

    /// Takes out the requests whose deadline is `now` or earlier.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<T> {
        let (due, keep) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|h| h.deadline().is_some_and(|d| d <= now));
        self.0 = keep;
        due
    }

    /// Takes out every request, to re-evaluate them; [`HeldList::restore`] puts back
    /// those still unanswered.
    pub(crate) fn take_all(&mut self) -> Vec<T> {
        std::mem::take(&mut self.0)
    }

    /// Puts back `kept` (taken by [`HeldList::take_all`]) ahead of any request held
    /// meanwhile, so arrival order is kept.
    pub(crate) fn restore(&mut self, mut kept: Vec<T>) {
        kept.append(&mut self.0);
        self.0 = kept;
    }
}
