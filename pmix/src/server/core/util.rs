//! Small shared pieces of the core: sending replies, the per-connection bound,
//! a rank's state, reading directives, the list of requests held until they
//! can be answered (held gets, held lookups), and the hasher of the core's hot maps.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use pmix_wire::{Command, FrameHeader, Reply, Status};

use super::namespace::RankState;
use super::{ConnId, Core, Output, ProcKey};

/// The hasher of the maps every request looks in (connections, a fence's
/// contributors): a multiply-rotate over 8-byte words (FxHash's), several times
/// cheaper than SipHash on a connection id or a short namespace. Its keys are ids
/// this server assigned and the names of registered namespaces, sent by clients
/// of this server's own uid (docs/design.md §8): nobody untrusted chooses them, so
/// the flooding SipHash resists is not a threat here.
#[derive(Clone, Copy, Default)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;
/// A `HashSet` with [`FastHasher`].
pub(crate) type FastSet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;

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
        match payload {
            Some(p) => self.send_bytes(conn, tag, &p),
            // The payload did not encode: the peer cannot be answered.
            None => self.out.push_back(Output::Close { conn }),
        }
    }

    /// Sends `payload` as one frame on `tag` (pindex 0), its bytes copied once,
    /// behind the header: a payload shared by many replies (a job's blob, a
    /// collective's answer) is not cloned first.
    pub(crate) fn send_bytes(&mut self, conn: ConnId, tag: u32, payload: &[u8]) {
        let Ok(nbytes) = u32::try_from(payload.len()) else {
            // Over 4 GiB: the peer cannot be answered.
            return self.out.push_back(Output::Close { conn });
        };
        let header = FrameHeader {
            pindex: 0,
            tag,
            nbytes,
        }
        .encode();
        let mut bytes = Vec::with_capacity(header.len() + payload.len());
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(payload);
        self.out.push_back(Output::Send { conn, bytes });
    }

    /// Whether `conn` may have one more waiting request ([`CoreConfig::max_pending`]).
    pub(crate) fn may_wait(&self, conn: ConnId) -> bool {
        self.store.pending_of(conn)
            + self.pubsub.pending_of(conn)
            + self.fences.pending_of(conn)
            + self.spawns.pending_of(conn)
            < self.cfg.max_pending
    }

    /// Whether `proc` is a rank of a namespace registered here that runs on this
    /// node.
    pub(crate) fn is_local(&self, proc: &ProcKey) -> bool {
        self.namespaces
            .get(&proc.0)
            .is_some_and(|ns| ns.states.contains_key(&proc.1))
    }

    /// A fresh id for a request made of the host.
    pub(crate) fn next_host_id(&mut self) -> u64 {
        self.next_host += 1;
        self.next_host
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
    let d = match info_value(info, pmix_wire::keys::TIMEOUT) {
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
    /// What makes it answerable (a held get's target); requests are found by it.
    type Key: Eq + std::hash::Hash + Clone + std::fmt::Debug;
    /// The connection it came on.
    fn conn(&self) -> ConnId;
    /// When it times out, if ever.
    fn deadline(&self) -> Option<Instant>;
    /// Its key.
    fn key(&self) -> Self::Key;
}

/// The held requests of one kind, indexed so that what one event concerns is found
/// without looking at the others: by key (a commit looks only at the gets of its
/// committer), by connection (a closed peer, the per-peer bound) and by deadline
/// (the next timer, what is due). Arrival order is kept within a key.
#[derive(Debug)]
pub(crate) struct HeldList<T: HeldRequest> {
    next: u64,
    items: BTreeMap<u64, T>,
    by_key: HashMap<T::Key, BTreeSet<u64>>,
    by_conn: HashMap<ConnId, BTreeSet<u64>>,
    by_deadline: BTreeSet<(Instant, u64)>,
}

impl<T: HeldRequest> Default for HeldList<T> {
    fn default() -> Self {
        HeldList {
            next: 0,
            items: BTreeMap::new(),
            by_key: HashMap::new(),
            by_conn: HashMap::new(),
            by_deadline: BTreeSet::new(),
        }
    }
}

/// A held request taken out to be looked at again, with its place in arrival order
/// ([`HeldList::put_back`]).
pub(crate) struct Taken<T>(u64, pub(crate) T);

impl<T: HeldRequest> HeldList<T> {
    /// Holds `r`.
    pub(crate) fn push(&mut self, r: T) {
        let seq = self.next;
        self.next += 1;
        self.insert(seq, r);
    }

    fn insert(&mut self, seq: u64, r: T) {
        self.by_key.entry(r.key()).or_default().insert(seq);
        self.by_conn.entry(r.conn()).or_default().insert(seq);
        if let Some(d) = r.deadline() {
            self.by_deadline.insert((d, seq));
        }
        self.items.insert(seq, r);
    }

    fn remove(&mut self, seq: u64) -> Option<T> {
        let r = self.items.remove(&seq)?;
        let key = r.key();
        if let Some(set) = self.by_key.get_mut(&key) {
            set.remove(&seq);
            if set.is_empty() {
                self.by_key.remove(&key);
            }
        }
        if let Some(set) = self.by_conn.get_mut(&r.conn()) {
            set.remove(&seq);
            if set.is_empty() {
                self.by_conn.remove(&r.conn());
            }
        }
        if let Some(d) = r.deadline() {
            self.by_deadline.remove(&(d, seq));
        }
        Some(r)
    }

    /// The earliest deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.by_deadline.first().map(|(d, _)| *d)
    }

    /// Drops what `conn` asked (it is gone).
    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        for seq in self.by_conn.get(&conn).cloned().unwrap_or_default() {
            self.remove(seq);
        }
    }

    /// How many requests of `conn` are held.
    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        self.by_conn.get(&conn).map_or(0, BTreeSet::len)
    }

    /// Takes out the requests whose deadline is `now` or earlier, oldest deadline
    /// first.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<T> {
        let mut due = Vec::new();
        while let Some(&(d, seq)) = self.by_deadline.first() {
            if d > now {
                break;
            }
            due.extend(self.remove(seq));
        }
        due
    }

    /// Takes out the requests of `key`, in arrival order, to look at them again;
    /// [`HeldList::put_back`] returns those still unanswered to their places.
    pub(crate) fn take_key(&mut self, key: &T::Key) -> Vec<Taken<T>> {
        let seqs = self.by_key.get(key).cloned().unwrap_or_default();
        seqs.into_iter()
            .filter_map(|seq| self.remove(seq).map(|r| Taken(seq, r)))
            .collect()
    }

    /// Puts back requests taken by [`HeldList::take_key`], in their arrival places.
    pub(crate) fn put_back(&mut self, kept: Vec<Taken<T>>) {
        for Taken(seq, r) in kept {
            self.insert(seq, r);
        }
    }
}

/// About what `i` takes packed (its key, its value's strings and bytes, 16 for
/// anything else): what the bounds on held data count, without packing it.
pub(crate) fn info_size(i: &pmix_wire::Info) -> usize {
    i.key.len() + value_size(&i.value)
}

/// About what `v` takes packed (see [`info_size`]).
pub(crate) fn value_size(v: &pmix_wire::Value) -> usize {
    use pmix_wire::Value;
    16 + match v {
        Value::String(Some(s)) | Value::Float(s) | Value::Double(s) => s.len(),
        Value::ByteObject(b) => b.0.len(),
        Value::Buffer(b) => b.bytes.len(),
        Value::Proc(p) => p.nspace.len(),
        Value::Value(v) => value_size(v),
        Value::Info(i) => info_size(i),
        Value::Kval(k) => k.key.len() + value_size(&k.value),
        Value::Pdata(p) => p.proc.nspace.len() + p.key.len() + value_size(&p.value),
        Value::DataArray(a) => a.items.iter().map(value_size).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(Debug, PartialEq)]
    struct H {
        conn: ConnId,
        key: u32,
        deadline: Option<Instant>,
        id: u32,
    }

    impl HeldRequest for H {
        type Key = u32;
        fn key(&self) -> u32 {
            self.key
        }
        fn conn(&self) -> ConnId {
            self.conn
        }
        fn deadline(&self) -> Option<Instant> {
            self.deadline
        }
    }

    fn ids(v: &[Taken<H>]) -> Vec<u32> {
        v.iter().map(|t| t.1.id).collect()
    }

    #[test]
    fn held_requests_are_found_by_key_and_keep_their_arrival_order_when_put_back() {
        let t0 = Instant::now();
        let mut l = HeldList::default();
        for (id, (conn, key)) in [(1, 7), (2, 8), (1, 7), (3, 7)].into_iter().enumerate() {
            let deadline = Some(t0 + Duration::from_secs(10 - id as u64));
            l.push(H {
                conn,
                key,
                deadline,
                id: id as u32,
            });
        }
        assert_eq!(l.pending_of(1), 2);
        let mut seven = l.take_key(&7);
        assert_eq!(ids(&seven), [0, 2, 3]);
        assert_eq!(l.pending_of(1), 0, "taken out");
        // One is answered; the others go back to their places.
        seven.remove(1);
        l.put_back(seven);
        l.push(H {
            conn: 3,
            key: 7,
            deadline: None,
            id: 9,
        });
        assert_eq!(ids(&l.take_key(&7)), [0, 3, 9]);
        assert_eq!(ids(&l.take_key(&8)), [1]);
        assert!(l.take_key(&8).is_empty());
    }

    #[test]
    fn held_requests_time_out_by_deadline_and_go_with_their_connection() {
        let t0 = Instant::now();
        let mut l = HeldList::default();
        for (id, secs) in [5u64, 1, 3].into_iter().enumerate() {
            l.push(H {
                conn: id as ConnId % 2,
                key: 0,
                deadline: Some(t0 + Duration::from_secs(secs)),
                id: id as u32,
            });
        }
        assert_eq!(l.next_deadline(), Some(t0 + Duration::from_secs(1)));
        let due: Vec<u32> = l
            .take_due(t0 + Duration::from_secs(3))
            .iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(due, [1, 2]);
        assert_eq!(l.next_deadline(), Some(t0 + Duration::from_secs(5)));
        l.forget_conn(0);
        assert_eq!(l.pending_of(0), 0);
        assert_eq!(l.next_deadline(), None);
        assert!(l.take_key(&0).is_empty());
    }
}
