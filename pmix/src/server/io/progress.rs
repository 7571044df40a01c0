//! The progress thread: one `mio` poll loop over the listener, the connections, the
//! core's timers and the launcher's commands (module docs of [`super`]).

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use pmix_wire::{ConnectMsg, Decoded, FrameDecoder, Limits};

use super::conn::{Conn, Phase, ReadOutcome, Stream};
use super::ratelimit::{LOG_BURST, LOG_INTERVAL, LogLimiter};
use super::{Command, Counters, DmodexDone, LINGER, ServerConfig};
use crate::server::core::{ConnId, Core, CoreConfig, Output, Provides, Refused};
use crate::server::host::{self, AnswerSink, Host};
use crate::server::net;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Connection ids start here, so that an id is its token.
const FIRST_CONN: ConnId = 2;
/// How soon accepting is retried after it failed for want of descriptors.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Everything the progress thread owns.
pub(crate) struct Loop {
    poll: Poll,
    listener: TcpListener,
    core: Core,
    conns: HashMap<ConnId, Conn>,
    next_id: ConnId,
    server_uid: u32,
    limits: Limits,
    handshake_timeout: Duration,
    max_connections: usize,
    max_half_open: usize,
    max_unfinished: usize,
    /// The bytes of unfinished messages all connections hold ([`Conn::counted`]).
    unfinished: usize,
    /// The TCP connections whose connect message has not come whole, oldest (lowest
    /// id) first.
    half_open: BTreeSet<ConnId>,
    max_pending_output: usize,
    read_pause_output: usize,
    log: bool,
    /// Holds the log of refused and malformed connections to a few lines per
    /// interval.
    limiter: LogLimiter,
    /// The connection whose frame the core is handling now, with the frame's tag
    /// and size: a close the core asks for meanwhile is a refusal of that frame.
    in_frame: Option<(ConnId, u32, usize)>,
    /// Connections whose read budget ran out: read again before sleeping.
    again: Vec<ConnId>,
    /// A connection that sent much closed in this turn of the loop: give the
    /// allocator's free pages back at its end ([`TRIM_AFTER`]).
    trim: bool,
    /// When accepting failed for want of descriptors: retry then.
    accept_retry: Option<Instant>,
    /// What the host provides ([`Host::provides`], asked once).
    provides: Provides,
    /// The host's own requests waiting for the core's answer
    /// ([`super::Server::dmodex_request`]), by the id the core knows them by.
    dmodex: HashMap<u64, DmodexDone>,
    /// The last id given to one of them.
    next_dmodex: u64,
    /// This process's own binding, read once when a rank may need locating
    /// ([`ServerConfig::locate_unplaced`]): a rank bound to all of it is unbound.
    own_binding: Option<pmix_core::CpuSet>,
    /// Where node-store segments are placed ([`ServerConfig::node_store`]: the
    /// server's temporary directory); `None`: no segment is written.
    pub(crate) store_dir: Option<std::path::PathBuf>,
    /// The segment files placed, by namespace: removed with it.
    segments: HashMap<String, std::path::PathBuf>,
    /// Each namespace's latest fence segment file: removed when the next is
    /// placed, or with the namespace (mappings made before stay valid).
    fence_files: HashMap<String, std::path::PathBuf>,
    /// The number of the next segment file.
    next_segment: u64,
    /// Each namespace's ds21 store (docs/serving.md §5.7), when it has one.
    ds21: HashMap<String, crate::server::shm::Ds21Store>,
    shutdown: bool,
}

impl Loop {
    /// Binds the listener and makes the poll instance, its waker and the core.
    pub(crate) fn bind(
        cfg: &ServerConfig,
        nspace: &str,
        hostname: &str,
        provides: Provides,
    ) -> io::Result<(Loop, Waker, SocketAddr)> {
        let poll = Poll::new()?;
        let mut listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let addr = listener.local_addr()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let (uid, gid) = net::effective_ids();
        let mut core_cfg = CoreConfig::new(nspace, cfg.rank, hostname, uid, gid);
        core_cfg.limits = cfg.limits;
        core_cfg.get_timeout = cfg.get_timeout;
        core_cfg.max_conns = cfg.max_connections;
        core_cfg.max_cached_events = cfg.max_cached_events;
        core_cfg.max_cached_event_bytes = cfg.max_cached_event_bytes;
        core_cfg.max_pending = cfg.max_pending;
        core_cfg.max_registrations = cfg.max_registrations;
        core_cfg.max_keys_per_proc = cfg.max_keys_per_proc;
        core_cfg.max_published = cfg.max_published;
        core_cfg.max_published_per_proc = cfg.max_published_per_proc;
        core_cfg.max_event_bytes = cfg.max_event_bytes;
        core_cfg.max_published_bytes_per_proc = cfg.max_published_bytes_per_proc;
        core_cfg.max_published_bytes = cfg.max_published_bytes;
        core_cfg.max_committed_bytes_per_proc = cfg.max_committed_bytes_per_proc;
        core_cfg.service = cfg.service.clone();
        core_cfg.locate_unplaced = cfg.locate_unplaced;
        core_cfg.hwloc_xml = cfg.hwloc_xml.clone();
        core_cfg.node_store = cfg.node_store;
        core_cfg.ds21 = cfg.ds21;
        core_cfg.provides = provides;
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        core_cfg.instance = (u64::from(std::process::id()) << 32) ^ started;
        let lp = Loop {
            poll,
            listener,
            core: Core::new(core_cfg),
            conns: HashMap::new(),
            next_id: FIRST_CONN,
            server_uid: uid,
            limits: cfg.limits,
            handshake_timeout: cfg.handshake_timeout,
            max_connections: cfg.max_connections,
            max_half_open: cfg.max_half_open.max(1),
            max_unfinished: cfg.max_unfinished_bytes,
            unfinished: 0,
            half_open: BTreeSet::new(),
            max_pending_output: cfg.max_pending_output,
            read_pause_output: cfg.read_pause_output,
            log: cfg.log,
            limiter: LogLimiter::new(LOG_INTERVAL, LOG_BURST),
            in_frame: None,
            again: Vec::new(),
            trim: false,
            accept_retry: None,
            provides,
            dmodex: HashMap::new(),
            next_dmodex: 0,
            own_binding: if cfg.locate_unplaced {
                crate::os::binding(crate::os::BindEnvelope::Process).ok()
            } else {
                None
            },
            store_dir: None,
            segments: HashMap::new(),
            fence_files: HashMap::new(),
            next_segment: 0,
            ds21: HashMap::new(),
            shutdown: false,
        };
        Ok((lp, waker, addr))
    }

    /// Runs until a [`Command::Shutdown`] (or the API side is gone), then closes every
    /// connection. Every upcall goes to `host`, its answer to `answers`.
    pub(crate) fn run(
        mut self,
        commands: mpsc::Receiver<Command>,
        host: Arc<dyn Host>,
        answers: AnswerSink,
        counters: &Counters,
    ) {
        let mut ctx = Ctx {
            host,
            answers,
            counters,
            scratch: vec![0u8; 64 << 10],
        };
        let mut poll_events = Events::with_capacity(256);
        while !self.shutdown {
            let timeout = self.timeout(Instant::now());
            if let Err(e) = self.poll.poll(&mut poll_events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                self.warn(format_args!("poll failed, the server stops: {e}"));
                break;
            }
            for ev in poll_events.iter() {
                match ev.token() {
                    LISTENER => self.accept(&mut ctx),
                    WAKER => {}
                    Token(t) => {
                        let id = t as ConnId;
                        // An error or a closed peer is found by writing too: a
                        // paused connection is not read.
                        if ev.is_writable() || ev.is_error() || ev.is_write_closed() {
                            self.flush(id, &mut ctx);
                        }
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.read(id, &mut ctx);
                        }
                    }
                }
            }
            for id in std::mem::take(&mut self.again) {
                self.read(id, &mut ctx);
            }
            self.commands(&commands, &mut ctx);
            self.timers(&mut ctx);
            if std::mem::take(&mut self.trim) {
                crate::os::release_free_memory();
            }
        }
        self.close_all(&ctx);
    }

    /// How long the poll may sleep: until the nearest deadline, or not at all when a
    /// connection is waiting for another read.
    fn timeout(&self, now: Instant) -> Option<Duration> {
        if !self.again.is_empty() {
            return Some(Duration::ZERO);
        }
        let conn_deadlines = self.conns.values().filter_map(|c| match c.phase {
            Phase::Handshake { deadline } => deadline,
            Phase::Closing { deadline } => Some(deadline),
            Phase::Framed => None,
        });
        conn_deadlines
            .chain(self.core.next_deadline())
            .chain(self.accept_retry)
            .chain(self.limiter.deadline())
            .min()
            .map(|d| d.saturating_duration_since(now))
    }

    fn accept(&mut self, ctx: &mut Ctx<'_>) {
        loop {
            let (mut stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
                Err(e) => {
                    // Out of descriptors or memory: the pending connections stay in
                    // the backlog; try again shortly.
                    self.warn_conn(format_args!("accept failed: {e}"));
                    self.accept_retry = Some(Instant::now() + ACCEPT_RETRY);
                    return;
                }
            };
            ctx.counters.accepted.fetch_add(1, Ordering::Relaxed);
            // The socket's real owner, before any byte of it is read (docs/design.md §8).
            let uid = match stream
                .local_addr()
                .and_then(|ours| net::peer_uid(ours, peer))
            {
                Ok(uid) => uid,
                Err(e) => {
                    ctx.counters
                        .refused_peer_uid
                        .fetch_add(1, Ordering::Relaxed);
                    self.warn_conn(format_args!("refused {peer}: its owner is unknown: {e}"));
                    continue;
                }
            };
            if uid != self.server_uid {
                ctx.counters
                    .refused_peer_uid
                    .fetch_add(1, Ordering::Relaxed);
                let why = Refused::PeerUid {
                    peer_uid: uid,
                    server_uid: self.server_uid,
                };
                self.warn_conn(format_args!("refused {peer}: {why}"));
                continue;
            }
            if self.conns.len() >= self.max_connections && !self.drop_oldest_half_open(ctx) {
                self.warn_conn(format_args!(
                    "refused {peer}: {} connections are open already",
                    self.conns.len()
                ));
                continue;
            }
            // Replies are small and latency matters (fences, gets): no Nagle delay.
            let _ = stream.set_nodelay(true);
            let id = self.next_id;
            self.next_id += 1;
            let token = Token(id as usize);
            if let Err(e) = self.poll.registry().register(
                &mut stream,
                token,
                Interest::READABLE | Interest::WRITABLE,
            ) {
                self.warn(format_args!("cannot watch {peer}: {e}"));
                continue;
            }
            let deadline = Instant::now() + self.handshake_timeout;
            self.conns
                .insert(id, Conn::new(Stream::Tcp(stream), uid, Some(deadline)));
            self.half_open.insert(id);
            if self.half_open.len() > self.max_half_open {
                self.drop_oldest_half_open(ctx);
            }
            ctx.counters.open.store(self.conns.len(), Ordering::Relaxed);
        }
    }

    /// Counts what `id` holds of messages not yet whole; past
    /// [`ServerConfig::max_unfinished_bytes`] in all, closes the connections whose
    /// unfinished message is the oldest until the total is back under.
    fn account(&mut self, id: ConnId, ctx: &mut Ctx<'_>) {
        if let Some(c) = self.conns.get_mut(&id) {
            let held = c.input().len();
            self.unfinished = self.unfinished - c.counted + held;
            c.counted = held;
            c.unfinished_since = match (held, c.unfinished_since) {
                (0, _) => None,
                (_, None) => Some(Instant::now()),
                (_, since) => since,
            };
        }
        while self.unfinished > self.max_unfinished {
            let oldest = self
                .conns
                .iter()
                .filter_map(|(&i, c)| Some((c.unfinished_since?, i, c.counted)))
                .min();
            let Some((_, oldest, held)) = oldest else {
                break;
            };
            ctx.counters
                .dropped_unfinished
                .fetch_add(1, Ordering::Relaxed);
            let limit = self.max_unfinished;
            self.warn_conn(format_args!(
                "closed connection {oldest}: its unfinished message ({held} bytes) is the oldest, and unfinished messages passed {limit} bytes"
            ));
            self.drop_conn(oldest, true, ctx);
        }
        ctx.counters
            .unfinished_bytes
            .store(self.unfinished, Ordering::Relaxed);
    }

    /// Frees a place held by a half-open TCP connection
    /// ([`ServerConfig::max_half_open`]): the oldest is read first (its connect
    /// message may be waiting in the socket, not read yet: then it is served and the
    /// next oldest tried), and dropped when its message is still not whole. `false`
    /// when no connection is half-open.
    fn drop_oldest_half_open(&mut self, ctx: &mut Ctx<'_>) -> bool {
        while let Some(&id) = self.half_open.first() {
            self.read(id, ctx);
            if !self.half_open.contains(&id) {
                if self.conns.contains_key(&id) {
                    // Its connect message was there: it is served, try the next.
                    continue;
                }
                // Closed by its peer or refused: its place is free.
                return true;
            }
            ctx.counters
                .dropped_half_open
                .fetch_add(1, Ordering::Relaxed);
            self.warn_conn(format_args!(
                "closed connection {id}: the oldest without a whole connect message, dropped for a newer connection"
            ));
            self.drop_conn(id, false, ctx);
            return true;
        }
        false
    }

    /// Serves `stream`, one end of a socket pair this process made for a rank it
    /// starts: its owner is this server's uid by construction, and it has no
    /// handshake deadline.
    fn adopt(&mut self, stream: std::os::unix::net::UnixStream, ctx: &mut Ctx<'_>) {
        ctx.counters.accepted.fetch_add(1, Ordering::Relaxed);
        if self.conns.len() >= self.max_connections {
            self.warn_conn(format_args!(
                "refused a launcher's socket pair: {} connections are open already",
                self.conns.len()
            ));
            return;
        }
        if let Err(e) = stream.set_nonblocking(true) {
            self.warn(format_args!("cannot serve a launcher's socket pair: {e}"));
            return;
        }
        let mut stream = Stream::Unix(mio::net::UnixStream::from_std(stream));
        let id = self.next_id;
        self.next_id += 1;
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            Token(id as usize),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            self.warn(format_args!("cannot watch a launcher's socket pair: {e}"));
            return;
        }
        self.conns
            .insert(id, Conn::new(stream, self.server_uid, None));
        ctx.counters.open.store(self.conns.len(), Ordering::Relaxed);
    }

    /// Reads what `id` has and hands every whole message to the core.
    fn read(&mut self, id: ConnId, ctx: &mut Ctx<'_>) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        if matches!(conn.phase, Phase::Closing { .. }) || conn.paused {
            return;
        }
        let outcome = conn.read_some(&mut ctx.scratch);
        // Whole messages first: what came before an end of stream is still served.
        self.process(id, ctx);
        self.account(id, ctx);
        if self.conns.get(&id).is_some_and(|c| c.paused) {
            // Its requests wait until its replies drain: `flush` reads it again
            // (an end of stream or error is seen then).
            return;
        }
        match outcome {
            Ok(ReadOutcome::Drained) => {}
            Ok(ReadOutcome::Budget) => {
                if self.conns.contains_key(&id) {
                    self.again.push(id);
                }
            }
            Ok(ReadOutcome::Eof) => match self.conns.get(&id).map(|c| c.phase) {
                // The core closed it while handling the last bytes: what it queued
                // is still written (the peer may only have shut down its sending
                // side), within the linger time.
                Some(Phase::Closing { .. }) => self.flush(id, ctx),
                Some(_) => self.drop_conn(id, true, ctx),
                None => {}
            },
            Err(_) => {
                let closing = matches!(
                    self.conns.get(&id).map(|c| c.phase),
                    Some(Phase::Closing { .. })
                );
                self.drop_conn(id, !closing, ctx);
            }
        }
    }

    /// Decodes and hands on every whole message in `id`'s input.
    fn process(&mut self, id: ConnId, ctx: &mut Ctx<'_>) {
        loop {
            let Some(conn) = self.conns.get_mut(&id) else {
                return;
            };
            match conn.phase {
                Phase::Closing { .. } => return,
                Phase::Handshake { .. } => match ConnectMsg::decode(conn.input(), &self.limits) {
                    Ok(Decoded::NeedMore(_)) => return,
                    Err(e) => {
                        ctx.counters.malformed.fetch_add(1, Ordering::Relaxed);
                        self.warn_conn(format_args!(
                            "closed connection {id}: bad connect message: {e}"
                        ));
                        self.drop_conn(id, false, ctx);
                        return;
                    }
                    Ok(Decoded::Item { item, used }) => {
                        conn.consume(used);
                        let peer_uid = conn.peer_uid;
                        // A rank the host placed nowhere: its binding, if it is bound
                        // to a strict part of what this server may use.
                        let bound = match &self.own_binding {
                            Some(own) if self.core.wants_location(&item) => {
                                conn.stream.peer_binding(own)
                            }
                            _ => None,
                        };
                        let now = Instant::now();
                        let core = &mut self.core;
                        let result = catch_unwind(AssertUnwindSafe(|| {
                            core.connect(id, &item, peer_uid, now)
                        }));
                        match result {
                            Ok(Ok(reply)) => {
                                ctx.counters.connected.fetch_add(1, Ordering::Relaxed);
                                if let Some(set) = bound {
                                    self.core.located(id, set);
                                }
                                self.half_open.remove(&id);
                                if let Some(conn) = self.conns.get_mut(&id) {
                                    conn.phase = Phase::Framed;
                                    // The reply goes before anything the core queued
                                    // after it (cached events).
                                    conn.queue(&reply);
                                }
                                self.flush(id, ctx);
                                self.drain(ctx);
                            }
                            Ok(Err(why)) => {
                                ctx.counters
                                    .refused_handshake
                                    .fetch_add(1, Ordering::Relaxed);
                                self.warn_conn(format_args!("refused connection {id}: {why}"));
                                self.drop_conn(id, false, ctx);
                                self.drain(ctx);
                                return;
                            }
                            Err(_) => {
                                self.warn(format_args!(
                                    "closed connection {id}: internal error in its handshake"
                                ));
                                self.drop_conn(id, true, ctx);
                                return;
                            }
                        }
                    }
                },
                Phase::Framed => {
                    if conn.pending() > self.read_pause_output {
                        // Back-pressure: a peer that does not read its replies
                        // gets no more until they drain.
                        conn.paused = true;
                        ctx.counters.read_pauses.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    let decoder = FrameDecoder::new(self.limits);
                    match decoder.decode(conn.input()) {
                        Ok(Decoded::NeedMore(_)) => return,
                        Err(e) => {
                            ctx.counters.malformed.fetch_add(1, Ordering::Relaxed);
                            self.warn_conn(format_args!("closed connection {id}: bad frame: {e}"));
                            self.drop_conn(id, true, ctx);
                            return;
                        }
                        Ok(Decoded::Item { item, used }) => {
                            conn.consume(used);
                            let now = Instant::now();
                            let core = &mut self.core;
                            let result =
                                catch_unwind(AssertUnwindSafe(|| core.frame(id, &item, now)));
                            if result.is_err() {
                                self.warn(format_args!(
                                    "closed connection {id}: internal error handling its request"
                                ));
                                self.drop_conn(id, true, ctx);
                                return;
                            }
                            ctx.counters.gets.store(self.core.gets(), Ordering::Relaxed);
                            self.in_frame = Some((id, item.header.tag, item.payload.len()));
                            self.drain(ctx);
                            self.in_frame = None;
                        }
                    }
                }
            }
        }
    }

    /// Carries out everything the core has queued, and the consequences of that
    /// (a connection found dead while writing is closed, which the core hears of).
    fn drain(&mut self, ctx: &mut Ctx<'_>) {
        loop {
            let core = &mut self.core;
            let next = match catch_unwind(AssertUnwindSafe(|| core.poll_output())) {
                Ok(o) => o,
                Err(_) => {
                    self.warn(format_args!("internal error draining the core's output"));
                    None
                }
            };
            let Some(out) = next else {
                self.place_fence_segments();
                return;
            };
            match out {
                Output::Send { conn, bytes } => {
                    let Some(c) = self.conns.get_mut(&conn) else {
                        continue;
                    };
                    if matches!(c.phase, Phase::Closing { .. }) {
                        continue;
                    }
                    if c.pending() + bytes.len() > self.max_pending_output {
                        let max = self.max_pending_output;
                        self.warn_conn(format_args!(
                            "closed connection {conn}: over {max} bytes queued that it does not read"
                        ));
                        self.drop_conn(conn, true, ctx);
                        continue;
                    }
                    c.queue(&bytes);
                    self.flush(conn, ctx);
                }
                Output::Close { conn } => {
                    if let Some((id, tag, len)) = self.in_frame.take_if(|f| f.0 == conn) {
                        // The core closes a connection while handling its frame only
                        // when it refuses that frame (a request that does not decode,
                        // a tag no request has).
                        ctx.counters.malformed.fetch_add(1, Ordering::Relaxed);
                        self.warn_conn(format_args!(
                            "closed connection {id}: its request (tag {tag}, {len} bytes) does not decode"
                        ));
                    }
                    let Some(c) = self.conns.get_mut(&conn) else {
                        continue;
                    };
                    c.phase = Phase::Closing {
                        deadline: Instant::now() + LINGER,
                    };
                    if c.pending() == 0 {
                        self.drop_conn(conn, false, ctx);
                    } else {
                        self.flush(conn, ctx);
                    }
                }
                Output::Host(up) => {
                    let (h, provides, answers) = (&*ctx.host, self.provides, &ctx.answers);
                    let made = catch_unwind(AssertUnwindSafe(|| {
                        host::deliver(h, provides, up, answers);
                    }));
                    if made.is_err() {
                        self.warn(format_args!("the host's handler of a request panicked"));
                    }
                }
                Output::Ds21 { nspace, patches } => {
                    let failed = match self.ds21.get_mut(&nspace) {
                        Some(st) => st.write(&patches).err(),
                        None => None,
                    };
                    if let Some(e) = failed {
                        self.warn(format_args!(
                            "the ds21 store of {nspace} could not be written: {e} (its \
                             libpmix2 clients' gets of what it lacks go by message)"
                        ));
                    }
                }
                Output::DmodexAnswer { id, status, data } => {
                    let Some(done) = self.dmodex.remove(&id) else {
                        continue;
                    };
                    let result = if status == pmix_core::Status::SUCCESS {
                        Ok(data)
                    } else {
                        Err(status)
                    };
                    if catch_unwind(AssertUnwindSafe(|| done(result))).is_err() {
                        self.warn(format_args!("the host's direct-modex completion panicked"));
                    }
                }
            }
        }
    }

    /// Places the node-store segment the core wrote for `nspace` (docs/serving.md
    /// §5.3): a file `pxns.N` in the server's temporary directory, owned by the
    /// namespace's user and readable by it alone. A segment that cannot be placed
    /// is dropped (with a warning): the namespace's clients then get their job
    /// information by message.
    fn place_segment(&mut self, nspace: &str) {
        let Some((bytes, uid, gid)) = self.core.take_segment(nspace) else {
            return;
        };
        if let Some(path) = self.write_segment(nspace, &bytes, (uid, gid)) {
            self.core
                .segment_placed(nspace, path.to_string_lossy().into_owned());
            self.segments.insert(nspace.to_owned(), path);
        }
    }

    /// Creates `nspace`'s ds21 files when the core keeps a ds21 store for it, in
    /// [`super::ds21_dir`] of the store's directory; one that cannot be created is
    /// left out (warned): its libpmix2 clients find no files and use `hash`.
    fn create_ds21(&mut self, nspace: &str) {
        let (Some(dir), Some(locks)) = (self.store_dir.clone(), self.core.ds21_locks(nspace))
        else {
            return;
        };
        let at = super::ds21_dir(&dir, nspace);
        match crate::server::shm::Ds21Store::create(&at, nspace, locks) {
            Ok(st) => {
                self.ds21.insert(nspace.to_owned(), st);
            }
            Err(e) => self.warn(format_args!(
                "the ds21 store of {nspace} could not be created in {}: {e}",
                at.display()
            )),
        }
    }

    /// Places the fence segments the core wrote (docs/serving.md §5.6), each in
    /// place of its namespace's last; one that cannot be placed is dropped (its
    /// clients' gets go by message).
    fn place_fence_segments(&mut self) {
        for seg in self.core.take_segments() {
            let Some(path) = self.write_segment(&seg.nspace, &seg.bytes, seg.owner) else {
                continue;
            };
            self.core.fence_segment_placed(
                &seg.nspace,
                seg.generation,
                path.to_string_lossy().into_owned(),
            );
            if let Some(old) = self.fence_files.insert(seg.nspace, path) {
                let _ = std::fs::remove_file(old);
            }
        }
    }

    /// Writes `bytes` as the next `pxns.N` of the store's directory, owned by
    /// `(uid, gid)`: its path, or `None` (warned) when it cannot be written.
    fn write_segment(
        &mut self,
        nspace: &str,
        bytes: &[u8],
        (uid, gid): (u32, u32),
    ) -> Option<std::path::PathBuf> {
        let dir = self.store_dir.clone()?;
        let name = format!("pxns.{}", self.next_segment);
        self.next_segment += 1;
        let placed = crate::os::write_segment_file(&dir, &name, bytes).and_then(|path| {
            let owned = if (uid, gid) != (self.server_uid, net::effective_ids().1) {
                std::os::unix::fs::chown(&path, Some(uid), Some(gid))
            } else {
                Ok(())
            };
            match owned {
                Ok(()) => Ok(path),
                Err(e) => {
                    let _ = std::fs::remove_file(&path);
                    Err(e)
                }
            }
        });
        match placed {
            Ok(path) => Some(path),
            Err(e) => {
                self.warn(format_args!(
                    "a node-store segment of {nspace} could not be written in {}: {e}",
                    dir.display()
                ));
                None
            }
        }
    }

    /// Writes what is queued for `id`; a dead socket is closed (and the core told).
    fn flush(&mut self, id: ConnId, ctx: &mut Ctx<'_>) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        match conn.flush() {
            Ok(()) => {
                if conn.pending() == 0 && matches!(conn.phase, Phase::Closing { .. }) {
                    self.drop_conn(id, false, ctx);
                } else if conn.paused && conn.pending() <= self.read_pause_output {
                    // Its replies drained: its requests are read again (what is
                    // buffered first), before the poll sleeps.
                    conn.paused = false;
                    self.again.push(id);
                }
            }
            Err(_) => {
                let closing = matches!(conn.phase, Phase::Closing { .. });
                self.drop_conn(id, !closing, ctx);
            }
        }
    }

    /// Closes `id`'s socket; with `tell_core`, the core hears of it
    /// ([`Core::closed`]) and its output is drained.
    fn drop_conn(&mut self, id: ConnId, tell_core: bool, ctx: &mut Ctx<'_>) {
        self.half_open.remove(&id);
        let Some(mut conn) = self.conns.remove(&id) else {
            return;
        };
        self.unfinished -= conn.counted;
        ctx.counters
            .unfinished_bytes
            .store(self.unfinished, Ordering::Relaxed);
        // What the socket takes at once of what is queued (a reply before an error
        // found later in the same read) is not lost.
        let _ = conn.flush();
        let _ = self.poll.registry().deregister(&mut conn.stream);
        let large = conn.received >= TRIM_AFTER;
        drop(conn);
        ctx.counters.open.store(self.conns.len(), Ordering::Relaxed);
        if tell_core {
            let now = Instant::now();
            let core = &mut self.core;
            if catch_unwind(AssertUnwindSafe(|| core.closed(id, now))).is_err() {
                self.warn(format_args!("internal error closing connection {id}"));
            }
            self.drain(ctx);
        }
        // What a peer that sent much made the server allocate is freed by the end
        // of this turn of the loop (its buffers, what it notified or committed):
        // then the allocator is asked to give the pages back, so the server's
        // memory returns to its base.
        self.trim |= large;
    }

    fn commands(&mut self, commands: &mpsc::Receiver<Command>, ctx: &mut Ctx<'_>) {
        loop {
            let cmd = match commands.try_recv() {
                Ok(c) => c,
                Err(mpsc::TryRecvError::Empty) => return,
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.shutdown = true;
                    return;
                }
            };
            match cmd {
                Command::Adopt(stream) => self.adopt(stream, ctx),
                Command::AddNamespace(spec, reply) => {
                    let core = &mut self.core;
                    let nspace = spec.nspace.clone();
                    let r = catch_unwind(AssertUnwindSafe(|| core.add_namespace(spec)));
                    match r {
                        Ok(r) => {
                            if r.is_ok() {
                                self.place_segment(&nspace);
                                self.create_ds21(&nspace);
                                // Its job information in the files before the
                                // launcher starts a client.
                                self.drain(ctx);
                            }
                            let _ = reply.send(r);
                        }
                        Err(_) => self.warn(format_args!("internal error adding a namespace")),
                    }
                }
                Command::RemoveNamespace(nspace, reply) => {
                    let now = Instant::now();
                    let core = &mut self.core;
                    let r = catch_unwind(AssertUnwindSafe(|| core.remove_namespace(&nspace, now)));
                    let ds21 = self.ds21.remove(&nspace).map(|st| st.dir().to_path_buf());
                    if let Some(dir) = ds21 {
                        let _ = std::fs::remove_dir_all(dir);
                    }
                    for path in [
                        self.segments.remove(&nspace),
                        self.fence_files.remove(&nspace),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        // Mappings made before stay valid.
                        let _ = std::fs::remove_file(path);
                    }
                    match r {
                        Ok(r) => {
                            let _ = reply.send(r);
                        }
                        Err(_) => self.warn(format_args!("internal error removing {nspace}")),
                    }
                }
                Command::RaiseEvent {
                    code,
                    source,
                    info,
                    range,
                } => {
                    let core = &mut self.core;
                    let source = source.as_ref().map(|(ns, r)| (ns.as_str(), *r));
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        core.raise_event(code, source, info, range)
                    }));
                    if r.is_err() {
                        self.warn(format_args!("internal error raising event {code}"));
                    }
                }
                Command::ProcExited {
                    nspace,
                    rank,
                    status,
                } => {
                    let now = Instant::now();
                    let core = &mut self.core;
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        core.proc_exited(&nspace, rank, status, now)
                    }));
                    if r.is_err() {
                        self.warn(format_args!(
                            "internal error handling the exit of {nspace}:{rank}"
                        ));
                    }
                }
                Command::Answer(id, answer) => {
                    let now = Instant::now();
                    let core = &mut self.core;
                    let r = catch_unwind(AssertUnwindSafe(|| core.host_answer(id, answer, now)));
                    if r.is_err() {
                        self.warn(format_args!("internal error handling the host's answer"));
                    }
                }
                Command::Dmodex { nspace, rank, done } => {
                    self.next_dmodex += 1;
                    let id = self.next_dmodex;
                    self.dmodex.insert(id, done);
                    let now = Instant::now();
                    let core = &mut self.core;
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        core.dmodex_request(id, &nspace, rank, now)
                    }));
                    if r.is_err() {
                        self.dmodex.remove(&id);
                        self.warn(format_args!(
                            "internal error handling the host's request for {nspace}:{rank}"
                        ));
                    }
                }
                Command::Shutdown => {
                    self.shutdown = true;
                    return;
                }
            }
            self.drain(ctx);
        }
    }

    fn timers(&mut self, ctx: &mut Ctx<'_>) {
        let now = Instant::now();
        if let Some(summary) = self.limiter.tick(now) {
            self.warn(format_args!("{summary}"));
        }
        if self.accept_retry.is_some_and(|t| t <= now) {
            self.accept_retry = None;
            self.accept(ctx);
        }
        if self.core.next_deadline().is_some_and(|d| d <= now) {
            let core = &mut self.core;
            if catch_unwind(AssertUnwindSafe(|| core.tick(now))).is_err() {
                self.warn(format_args!("internal error running the core's timers"));
            }
            self.drain(ctx);
        }
        let due: Vec<(ConnId, bool)> = self
            .conns
            .iter()
            .filter_map(|(&id, c)| match c.phase {
                Phase::Handshake {
                    deadline: Some(deadline),
                } if deadline <= now => Some((id, true)),
                Phase::Closing { deadline } if deadline <= now => Some((id, false)),
                _ => None,
            })
            .collect();
        for (id, handshake) in due {
            if handshake {
                ctx.counters.malformed.fetch_add(1, Ordering::Relaxed);
                let limit = self.handshake_timeout;
                self.warn_conn(format_args!(
                    "closed connection {id}: no whole connect message within {limit:?}"
                ));
            }
            self.drop_conn(id, false, ctx);
        }
    }

    /// At shutdown: what each socket takes at once is written, then all are closed.
    fn close_all(&mut self, ctx: &Ctx<'_>) {
        for (_, mut conn) in self.conns.drain() {
            let _ = conn.flush();
            let _ = self.poll.registry().deregister(&mut conn.stream);
        }
        ctx.counters.open.store(0, Ordering::Relaxed);
        let _ = self.poll.registry().deregister(&mut self.listener);
        if let Some(summary) = self.limiter.finish(Instant::now()) {
            self.warn(format_args!("{summary}"));
        }
    }

    fn warn(&self, msg: std::fmt::Arguments<'_>) {
        if self.log {
            eprintln!("pmix-server: {msg}");
        }
    }

    /// A line about one refused or malformed connection: through the limiter
    /// (at most [`LOG_BURST`] lines per [`LOG_INTERVAL`], the rest summarized).
    fn warn_conn(&mut self, msg: std::fmt::Arguments<'_>) {
        if !self.log {
            return;
        }
        for line in self.limiter.line(Instant::now(), msg.to_string()) {
            eprintln!("pmix-server: {line}");
        }
    }
}

/// A connection that sent at least this many bytes has the allocator's free
/// pages given back when it closes ([`crate::os::release_free_memory`]).
const TRIM_AFTER: u64 = 1 << 20;

/// What the loop's steps share besides the loop itself.
struct Ctx<'a> {
    /// Whoever hosts the server: every upcall goes to it.
    host: Arc<dyn Host>,
    /// Where the host's answers go (back to this thread, as commands).
    answers: AnswerSink,
    counters: &'a Counters,
    scratch: Vec<u8>,
}
