//! The server's core: a sans-I/O state machine that decides every answer the
//! server gives (docs/design.md §8, docs/conventions.md rule 17).
//!
//! No sockets, no threads, no clock reads: the I/O layer owns the listener, the
//! sockets and the timers, decodes each peer's connect message with
//! [`pmix_wire::ConnectMsg`] and its frames with [`pmix_wire::FrameDecoder`], and
//! hands them to a [`Core`] with the current time. After **every** call it drains
//! [`Core::poll_output`] and carries out each [`Output`] in order: send bytes on a
//! connection, close one, make an upcall into the host ([`Upcall`]: a rank connected,
//! finalized, aborted or was lost, a fence across nodes, …), or complete the host's
//! own request. The host's answers come back with [`Core::host_answer`]. It calls
//! [`Core::tick`] when [`Core::next_deadline`] is due. What the host does for the
//! server is a flag set in [`CoreConfig::provides`] ([`Provides`]).
//!
//! Every byte the core reads or writes goes through `pmix-wire`; a peer whose
//! bytes fail to decode is closed ([`Output::Close`]) and nobody else notices.
//!
//! **What is served** (one node; docs/wire.md §6, docs/serving.md):
//! - the handshake of launched clients (flag 0) and of tools, launchers and
//!   singletons (flags 3–10, the long reply of §3.3), with the peer checks of
//!   docs/design.md §8 ([`Core::connect`]);
//! - REQ (the job-info blob, packed once per namespace, buffer type and client
//!   version), FINALIZE, ABORT (the launcher is told, and the other peers get
//!   `PMIX_ERR_PROC_ABORTED` at once);
//! - COMMIT, GETNB (held until the target commits, `pmix.timeout`,
//!   `pmix.immediate`), FENCENB (`pmix.timeout`, `pmix.grp.ftcoll`);
//! - REGEVENTS, DEREGEVENTS (no reply), NOTIFY with every range, caching for late
//!   registrants, and `PMIX_ERR_PROC_ABORTED` for lost ranks;
//! - PUBLISH, LOOKUP (`pmix.wait`), UNPUBLISH, JOB_CONTROL (cleanup
//!   registrations, preemptible and checkpoint declarations), LOG (to stderr and
//!   stdout, through the launcher), MONITOR (heartbeats), QUERY (`pmix.qry.ns` and the keys of [`QUERY_KEYS`]),
//!   COMPUTE_DEVICE_DISTANCES (from [`CoreConfig::service`], with every
//!   directive including `PMIX_DEVICE_DIST_ORIGIN`);
//! - GROUP_CONSTRUCT, GROUP_DESTRUCT and GROUP_LEAVE in both 4.2 layouts, and
//!   the groups a 4.2 invite/join builds from events, driven by pmix-core's
//!   `Groups` (`groups/`);
//! - SPAWNNB through the launcher ([`Provides::SPAWN`], [`Upcall::Spawn`],
//!   [`HostAnswer::Spawn`]; `dynamic.rs`), CONNECTNB and DISCONNECTNB across the
//!   namespaces served here (`fence.rs`);
//! - everything else: a lone `PMIX_ERR_NOT_SUPPORTED` status.
//!
//! **Hosted** ([`Provides::NODES`], the C server API, docs/serving.md §4): a fence
//! naming ranks of other nodes goes to the host once the local participants joined
//! ([`Upcall::Fence`], answered with [`HostAnswer::Fence`]), a get of another node's
//! rank by direct modex ([`Upcall::DirectModex`], [`HostAnswer::DirectModex`]), the
//! host asks for a local rank's data with [`Core::dmodex_request`] (answered as
//! [`Output::DmodexAnswer`]), and a FINALIZE is answered once the host acknowledged
//! it ([`HostAnswer::ClientFinalized`]).
//!
//! **Not done.** Events, published data and groups never leave the node; unhosted, a
//! namespace or rank this server does not hold is NOT_FOUND. Published data has no
//! persistence rules (it stays
//! until unpublished or its namespace is removed). A fence whose contributors mix
//! `pmix.collect` true and false is not refused (OpenPMIx answers
//! `PMIX_ERR_INVALID_ARG`). `pmix.node.size` counts the namespace's own local
//! ranks, not every job's on the node. [`Upcall::Aborted`] does not carry the
//! procs `PMIx_Abort` named (the launcher ends the whole job).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Instant;

use pmix_core::CpuSet;
use pmix_wire::{Codec, Command, Frame, Request, Status};

mod distances;
mod ds21;
mod dynamic;
mod events;
/// The key of [`Core::origin_mark`].
const ORIGIN_KEY: &str = pmix_wire::keys::RS_EVENT_ORIGIN;

mod fence;
mod groups;
mod handshake;
mod log;
mod monitor;
mod namespace;
mod nodestore;
mod pubsub;
mod query;
mod relay;
mod store;
mod types;
mod util;

use util::{info_deadline, info_flag, info_value};

pub use distances::ORIGIN_KEY as DIST_ORIGIN_DIRECTIVE;
pub use events::PROC_ABORTED;
pub use fence::{FENCE_LOST, FT_KEY};
pub use namespace::DIST_ORIGIN_KEY;
pub use nodestore::NewSegment;
pub use query::KNOWN_KEYS as QUERY_KEYS;
pub use types::{
    ConnId, CoreConfig, HostAnswer, LogStream, NamespaceSpec, NodeSpec, Output, Placement,
    Provides, RankSpec, Refused, ServerError, Upcall,
};

use namespace::{Namespace, RankState};

/// A process: its nspace and rank.
pub(crate) type ProcKey = (String, u32);

/// `PMIX_ERR_OUT_OF_RESOURCE`: a peer went over one of [`CoreConfig`]'s bounds.
pub(crate) const ERR_OUT_OF_RESOURCE: Status = Status::ERR_OUT_OF_RESOURCE;

/// `PMIX_ERR_DUPLICATE_KEY`.
pub(crate) const ERR_DUPLICATE_KEY: Status = Status::ERR_DUPLICATE_KEY;

/// The least bound on the processes one request's list may name, whatever the
/// namespaces registered ([`Core::frame`]).
pub const MIN_PROC_BOUND: u64 = 1 << 16;

/// The server's state machine: namespaces, connected peers, the commit store, held
/// gets, fences, event registrations, published data (module docs).
#[derive(Debug)]
pub struct Core {
    cfg: CoreConfig,
    namespaces: BTreeMap<String, Namespace>,
    /// The most processes one list of a request may name, kept as namespaces come
    /// and go ([`Core::proc_bound`]).
    proc_bound: u32,
    conns: util::FastMap<ConnId, Peer>,
    out: VecDeque<Output>,
    next_index: u32,
    next_tool: u32,
    /// The last id given to a request of the host.
    next_host: u64,
    /// Hosted: FINALIZEs answered once the host acknowledged the client's finalize
    /// ([`HostAnswer::ClientFinalized`]), by request id: the connection, its tag and
    /// the client's nspace.
    finalizing: HashMap<u64, (ConnId, u32, String)>,
    store: store::Store,
    fences: fence::Fences,
    events: events::Events,
    pubsub: pubsub::PubSub,
    monitors: monitor::Monitors,
    spawns: dynamic::Spawns,
    /// The state the groups commands need (owned by `groups.rs`).
    pub(crate) groups: groups::GroupState,
    /// Collectives and events carried for a host that cannot ([`Provides::relays`]).
    relay: relay::Relay,
    /// Fence segments written, not yet taken by the I/O layer.
    new_segments: Vec<nodestore::NewSegment>,
    /// GETNB requests received ([`Core::gets`]).
    gets: u64,
}

/// One connected peer.
#[derive(Debug)]
pub(crate) struct Peer {
    /// How its messages are decoded and encoded.
    pub(crate) codec: Codec,
    /// Its identity: a registered rank, or a tool's (assigned or given) name.
    pub(crate) proc: ProcKey,
    /// A tool, launcher or singleton (not a rank of a registered namespace).
    pub(crate) tool: bool,
    /// It sent FINALIZE.
    pub(crate) finalized: bool,
    /// Its event registrations.
    pub(crate) regs: Vec<events::Registration>,
    /// It announced [`pmix_wire::nodestore::GDS_NAME`]: it maps its job
    /// information from the node store when its REQ names a segment.
    pub(crate) node_store: bool,
    /// Its REQ was answered with a segment's path: a second REQ (it could not map
    /// the segment) gets the job information itself.
    pub(crate) segment_named: bool,
    /// The generation of its namespace's fence segment a GETNB answer last named
    /// to it (0 after each fence it joins).
    pub(crate) fence_told: u64,
    /// It announced `ds21` (a libpmix2 client that mapped its namespace's ds21
    /// files): its REQ gets the session, node and app arrays alone.
    pub(crate) ds21: bool,
}

impl Core {
    /// A server with no namespace and no peer.
    pub fn new(cfg: CoreConfig) -> Core {
        Core {
            events: events::Events::new(cfg.max_cached_events, cfg.max_cached_event_bytes),
            cfg,
            namespaces: BTreeMap::new(),
            proc_bound: MIN_PROC_BOUND as u32,
            conns: util::FastMap::default(),
            out: VecDeque::new(),
            next_index: 0,
            next_tool: 0,
            next_host: 0,
            finalizing: HashMap::new(),
            store: Default::default(),
            fences: Default::default(),
            pubsub: Default::default(),
            monitors: Default::default(),
            spawns: Default::default(),
            groups: Default::default(),
            relay: Default::default(),
            new_segments: Vec::new(),
            gets: 0,
        }
    }

    /// The GETNB requests received so far (what a client could not answer from
    /// what it holds or maps).
    pub fn gets(&self) -> u64 {
        self.gets
    }

    /// The events kept for late registrants now, and their bytes (bounded by
    /// [`CoreConfig::max_cached_events`] and [`CoreConfig::max_cached_event_bytes`]).
    pub fn cached_events(&self) -> (usize, usize) {
        self.events.held()
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// Registers a namespace whose ranks may then connect.
    ///
    /// # Errors
    /// [`ServerError::DuplicateNamespace`] for a name in use;
    /// [`ServerError::BadSpec`] for an empty or over-long name, a rank at or above
    /// the job size or listed twice.
    pub fn add_namespace(&mut self, ns: NamespaceSpec) -> Result<(), ServerError> {
        if self.namespaces.contains_key(&ns.nspace) {
            return Err(ServerError::DuplicateNamespace(ns.nspace));
        }
        let mut ns = Namespace::new(ns, &self.cfg)?;
        let name = ns.spec.nspace.clone();
        let patches = std::mem::take(&mut ns.ds21_job);
        if !patches.is_empty() {
            self.out.push_back(Output::Ds21 {
                nspace: name.clone(),
                patches,
            });
        }
        self.namespaces.insert(name.clone(), ns);
        self.proc_bound = self.proc_bound();
        relay::namespace_added(self, &name);
        Ok(())
    }

    /// Forgets a namespace whose job is over: its connected ranks are closed
    /// ([`Output::Close`], no [`Upcall`]), what waited on them is settled as if
    /// they were lost (held gets NOT_FOUND, fences with them complete or fail), and
    /// their committed and published data and cached events are dropped. Its name
    /// may then be registered again.
    ///
    /// # Errors
    /// [`ServerError::UnknownNamespace`] for a name not registered.
    pub fn remove_namespace(&mut self, nspace: &str, now: Instant) -> Result<(), ServerError> {
        let Some(ns) = self.namespaces.get_mut(nspace) else {
            return Err(ServerError::UnknownNamespace(nspace.into()));
        };
        let mut conns = Vec::new();
        for st in ns.states.values_mut() {
            if let RankState::Connected(c) = *st {
                conns.push(c);
            }
            if !matches!(*st, RankState::Finalized) {
                *st = RankState::Lost;
            }
        }
        let ranks: Vec<u32> = ns.states.keys().copied().collect();
        for c in conns {
            self.out.push_back(Output::Close { conn: c });
            // Quietly (no loss, no event): the launcher ended this job.
            if let Some(peer) = self.conns.remove(&c) {
                self.store.forget_conn(c);
                self.pubsub.forget_conn(c);
                self.monitors.forget_conn(c);
                groups::conn_closed(self, &peer.proc, now);
            }
        }
        for r in ranks {
            let proc = (nspace.to_string(), r);
            store::proc_departed(self, &proc);
            // Ranks that finalized with their socket open, or never connected,
            // leave other jobs' groups here (a closed socket does it above).
            groups::proc_lost(self, &proc, now);
        }
        fence::evaluate_all(self);
        self.store.forget_nspace(nspace);
        self.pubsub.forget_nspace(nspace);
        self.events.purge_nspace(nspace);
        self.namespaces.remove(nspace);
        self.proc_bound = self.proc_bound();
        relay::namespace_removed(self, nspace);
        Ok(())
    }

    /// The node-store segment written for `nspace` at its registration
    /// ([`CoreConfig::node_store`]), for the I/O layer to place where its clients
    /// can map it, with the uid and gid the namespace was registered for (who must
    /// own it); `None` when there is none, or it was taken already. Until
    /// [`Core::segment_placed`], the namespace's clients get their job information
    /// by message.
    pub fn take_segment(&mut self, nspace: &str) -> Option<(Vec<u8>, u32, u32)> {
        let ns = self.namespaces.get_mut(nspace)?;
        match std::mem::take(&mut ns.segment) {
            namespace::Segment::Written(bytes) => Some((bytes, ns.spec.uid, ns.spec.gid)),
            other => {
                ns.segment = other;
                None
            }
        }
    }

    /// The segment of `nspace` [`Core::take_segment`] gave is at `path`, mapped
    /// read-only by whoever may read it: a REQ of a client that announced
    /// [`pmix_wire::nodestore::GDS_NAME`] now names it instead of sending the job
    /// information. Ignored for a namespace not registered.
    pub fn segment_placed(&mut self, nspace: &str, path: String) {
        if let Some(ns) = self.namespaces.get_mut(nspace) {
            ns.segment = namespace::Segment::Placed(path);
        }
    }

    /// How many clients `nspace`'s ds21 store is for (its local ranks: one lock
    /// slot each), when it has one ([`CoreConfig::ds21`]): the I/O layer creates its
    /// files before the [`Output::Ds21`] that fill them.
    pub fn ds21_locks(&self, nspace: &str) -> Option<u32> {
        let ns = self.namespaces.get(nspace)?;
        ns.ds21.as_ref()?;
        Some(ns.states.len() as u32)
    }

    /// The names of the registered namespaces, in order.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.namespaces.keys().map(String::as_str)
    }

    /// A connect message arrived on `conn` (decoded by the I/O layer with
    /// [`pmix_wire::ConnectMsg::decode`]); `peer_uid` is the socket's real owner
    /// (from the kernel, not the claim). Returns the handshake reply's bytes to
    /// send; cached events may follow in [`Core::poll_output`].
    ///
    /// # Errors
    /// [`Refused`]: close the connection without a reply (what OpenPMIx does).
    pub fn connect(
        &mut self,
        conn: ConnId,
        msg: &pmix_wire::ConnectMsg,
        peer_uid: u32,
        now: Instant,
    ) -> Result<Vec<u8>, Refused> {
        handshake::connect(self, conn, msg, peer_uid, now)
    }

    /// Whether the process of connect message `msg` is a local rank of a
    /// registered namespace whose location this server would use and lacks
    /// ([`CoreConfig::locate_unplaced`], a topology service, a rank the host placed
    /// on no cpuset): the I/O layer then finds the process and its binding, and tells
    /// [`Core::located`] before it reads the connection's first frame.
    pub fn wants_location(&self, msg: &pmix_wire::ConnectMsg) -> bool {
        let pmix_wire::Identity::Client { nspace, rank } = &msg.identity else {
            return false;
        };
        self.cfg.locate_unplaced
            && self.cfg.service.is_some()
            && self
                .namespaces
                .get(nspace.as_str())
                .is_some_and(|ns| ns.unlocated(*rank))
    }

    /// The process on `conn` (a rank [`Core::wants_location`] asked for) runs bound
    /// to `cpuset`, a strict part of the node: it gets the `PMIX_DEVICE_DISTANCES` of
    /// that cpuset with its job info. An unbound process is not reported (the key
    /// stays absent, as for every unbound rank).
    pub fn located(&mut self, conn: ConnId, cpuset: CpuSet) {
        let (Some(peer), Some(service)) = (self.conns.get(&conn), self.cfg.service.clone()) else {
            return;
        };
        if peer.tool {
            return;
        }
        let (nspace, rank) = (peer.proc.0.clone(), peer.proc.1);
        let found = self.namespaces.get_mut(&nspace).and_then(|ns| {
            ns.locate(rank, cpuset, &service);
            ns.late.get(&rank).cloned()
        });
        if let Some(v) = found {
            let kv = [pmix_wire::Kval::new(pmix_wire::keys::DEVICE_DISTANCES, v)];
            ds21::file(self, &nspace, rank, &kv);
        }
    }

    /// One whole frame arrived on `conn` after its handshake. A frame that does not
    /// decode, or that comes on a tag no client uses for requests, closes `conn`.
    pub fn frame(&mut self, conn: ConnId, frame: &Frame, now: Instant) {
        let bound = self.proc_bound;
        let Some(peer) = self.conns.get_mut(&conn) else {
            return;
        };
        if !pmix_wire::frame::is_request_tag(frame.header.tag) {
            // Tag 1 is a heartbeat (PMIx_Heartbeat): it re-arms the monitors.
            if frame.header.tag == pmix_wire::frame::TAG_HEARTBEAT {
                self.monitors.beat(conn, now);
            } else {
                self.close(conn, now);
            }
            return;
        }
        // A list of processes longer than what this server could name is refused
        // at its count, before anything is read or done; so is any array longer
        // (no request needs more elements than there are processes to name).
        peer.codec.limits.max_procs = self.cfg.limits.max_procs.min(bound);
        peer.codec.limits.max_count = self.cfg.limits.max_count.min(bound);
        let req = match pmix_wire::decode_request(&frame.payload, &peer.codec) {
            Ok(r) => r,
            Err(_) => {
                self.close(conn, now);
                return;
            }
        };
        self.dispatch(conn, frame.header.tag, req, now);
    }

    /// The most processes one list of a request may name: every process of every
    /// namespace registered, once each and once more as its namespace's wildcard
    /// (a request naming more names one twice), and never less than
    /// [`MIN_PROC_BOUND`] (a request may name a namespace not registered yet).
    /// Computed when a namespace comes or goes, not per request.
    fn proc_bound(&self) -> u32 {
        let known: u64 = self
            .namespaces
            .values()
            .map(|ns| u64::from(ns.spec.job_size.max(ns.spec.univ_size)) + 1)
            .sum();
        u32::try_from(known.max(MIN_PROC_BOUND)).unwrap_or(u32::MAX)
    }

    fn dispatch(&mut self, conn: ConnId, tag: u32, req: Request, now: Instant) {
        let cmd = req.command();
        match req {
            Request::Req => namespace::req(self, conn, tag),
            Request::Finalize => self.finalize(conn, tag, now),
            Request::Abort(a) => self.abort(conn, tag, a),
            Request::Commit(c) => store::commit(self, conn, tag, c, now),
            Request::GetNb(g) => {
                self.gets += 1;
                store::get(self, conn, tag, g, now)
            }
            Request::FenceNb(f) => fence::fence(self, conn, tag, f, fence::Kind::Fence, now),
            Request::Connect(c) | Request::Disconnect(c) => {
                let kind = if cmd == Command::ConnectNb {
                    fence::Kind::Connect
                } else {
                    fence::Kind::Disconnect
                };
                let f = pmix_wire::msg::FenceNb {
                    procs: c.procs,
                    info: c.info,
                };
                fence::fence(self, conn, tag, f, kind, now)
            }
            Request::Spawn(s) => dynamic::spawn(self, conn, tag, s),
            Request::RegEvents(r) => events::register(self, conn, tag, r),
            Request::DeregEvents(d) => events::deregister(self, conn, d),
            Request::Notify(n) => {
                let (code, info) = (n.status, n.info.clone());
                if let Some(source) = events::notify(self, conn, tag, n) {
                    // The end of a 4.2 invite/join (PMIX_GROUP_CONSTRUCT_COMPLETE)
                    // records the group.
                    groups::notified(self, &source, code, &info);
                }
            }
            Request::Publish(p) => pubsub::publish(self, conn, tag, p, now),
            Request::Lookup(l) => pubsub::lookup(self, conn, tag, l, now),
            Request::Unpublish(u) => pubsub::unpublish(self, conn, tag, u),
            Request::JobControl(j) => query::job_control(self, conn, tag, j),
            Request::Log(l) => log::log(self, conn, tag, l),
            Request::Monitor(m) => monitor::monitor(self, conn, tag, m, now),
            Request::Query(q) => query::query(self, conn, tag, q),
            Request::ComputeDeviceDistances(d) => distances::compute(self, conn, tag, d),
            Request::GroupConstruct(_) | Request::GroupDestruct(_) | Request::GroupLeave(_) => {
                groups::request(self, conn, tag, req, now)
            }
            Request::Raw {
                command: Command::GroupJoin | Command::GroupInvite,
                ..
            } => groups::request(self, conn, tag, req, now),
            _ => self.reply_status(conn, tag, cmd, Status::ERR_NOT_SUPPORTED),
        }
        // A request may have made a group that held fences name.
        fence::resolve(self);
    }

    /// The groups' answer to a fence naming the id `name` (the seam between the
    /// fences and the groups: [`groups::fence_members`]).
    pub(crate) fn group_fence_members(
        &self,
        name: &str,
    ) -> Option<Result<Vec<ProcKey>, pmix_wire::Status>> {
        groups::fence_members(self, name)
    }

    /// Whether `proc` will never join a fence over the groups `groups`, and with which
    /// status ([`groups::fence_departed`]).
    pub(crate) fn group_fence_departed(
        &self,
        groups: &[String],
        proc: &ProcKey,
    ) -> Option<pmix_wire::Status> {
        groups::fence_departed(self, groups, proc)
    }

    /// Delivers an event raised by the core itself ([`events::raise`]).
    pub(crate) fn raise(
        &mut self,
        code: pmix_wire::Status,
        source: &ProcKey,
        info: Vec<pmix_wire::Info>,
        range: pmix_wire::DataRange,
        except: Option<ConnId>,
    ) {
        events::raise(self, code, source, info, range, except);
    }

    /// A group's membership changed: the fences look again at who is gone.
    pub(crate) fn fences_changed(&mut self) {
        fence::evaluate_all(self);
    }

    /// `conn`'s socket closed (EOF or error). A rank that had not finalized is
    /// lost: [`Upcall::Lost`], `PMIX_ERR_PROC_ABORTED` to registered handlers,
    /// and the collectives it was in complete or fail (docs/design.md §8). Harmless for a
    /// connection the core does not know (or closed itself).
    pub fn closed(&mut self, conn: ConnId, now: Instant) {
        let Some(peer) = self.conns.remove(&conn) else {
            return;
        };
        self.forget_conn(conn, &peer, now);
        if !peer.tool && !peer.finalized {
            self.rank_lost(&peer.proc, None, now);
        }
    }

    /// Closes `conn` from this side ([`Output::Close`]) as if its socket had closed.
    fn close(&mut self, conn: ConnId, now: Instant) {
        if self.conns.contains_key(&conn) {
            self.out.push_back(Output::Close { conn });
            self.closed(conn, now);
        }
    }

    /// Drops what belongs to a connection that is going away.
    fn forget_conn(&mut self, conn: ConnId, peer: &Peer, now: Instant) {
        if let Some(ns) = self.namespaces.get_mut(&peer.proc.0)
            && let Some(st) = ns.states.get_mut(&peer.proc.1)
            && *st == RankState::Connected(conn)
        {
            *st = if peer.finalized {
                RankState::Finalized
            } else {
                RankState::Lost
            };
        }
        // What it notified is kept no longer than it is there; what it published
        // as long as its persistence says.
        self.events.proc_gone(&peer.proc);
        let last = self.namespaces.get(&peer.proc.0).is_none_or(|ns| {
            ns.states
                .values()
                .all(|s| matches!(s, RankState::Finalized | RankState::Lost))
        });
        self.pubsub.proc_left(&peer.proc, last);
        self.store.forget_conn(conn);
        self.pubsub.forget_conn(conn);
        self.monitors.forget_conn(conn);
        self.spawns.forget_conn(conn);
        self.finalizing.retain(|_, held| held.0 != conn);
        groups::conn_closed(self, &peer.proc, now);
    }

    /// A rank is lost (socket closed or exited without FINALIZE): tell the
    /// launcher and the registered handlers, and let the collectives it is in
    /// complete on the survivors or fail.
    fn rank_lost(&mut self, proc: &ProcKey, status: Option<i32>, now: Instant) {
        let Some(ns) = self.namespaces.get_mut(&proc.0) else {
            return;
        };
        if let Some(st) = ns.states.get_mut(&proc.1) {
            if matches!(*st, RankState::Finalized) {
                return;
            }
            *st = RankState::Lost;
        }
        if !ns.lost_reported.insert(proc.1) {
            return;
        }
        let told = !ns.aborted_reported.insert(proc.1);
        self.out.push_back(Output::Host(Upcall::Lost {
            nspace: proc.0.clone(),
            rank: proc.1,
        }));
        if !told {
            events::proc_aborted(self, proc, status);
        }
        fence::proc_departed(self, proc);
        relay::local_departed(self, &proc.0);
        store::proc_departed(self, proc);
        groups::proc_lost(self, proc, now);
    }

    /// Runs the timers due at `now`: held gets and lookups time out, fences with a
    /// `pmix.timeout` fail with `PMIX_ERR_TIMEOUT`.
    pub fn tick(&mut self, now: Instant) {
        store::tick(self, now);
        fence::tick(self, now);
        pubsub::tick(self, now);
        monitor::tick(self, now);
        groups::tick(self, now);
        relay::tick(self, now);
    }

    /// When [`Core::tick`] must next be called; `None` when no timer is pending.
    pub fn next_deadline(&self) -> Option<Instant> {
        [
            self.store.next_deadline(),
            self.fences.next_deadline(),
            self.pubsub.next_deadline(),
            self.monitors.next_deadline(),
            groups::next_deadline(self),
            self.relay.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The next thing the I/O layer must do; `None` when there is nothing. Drain
    /// after every call.
    pub fn poll_output(&mut self) -> Option<Output> {
        loop {
            let out = self.out.pop_front()?;
            if !self.cfg.provides.relays() {
                return Some(out);
            }
            if let Some(out) = relay::divert(self, out) {
                return Some(out);
            }
        }
    }

    /// The launcher saw `nspace`:`rank` exit with `status`. A rank that had not
    /// finalized is lost (as if its socket had closed, and its connection, if
    /// still open, is closed); a rank that had is forgotten quietly, and so is one
    /// that never connected and exited 0 (a program that is no PMIx client, which
    /// ran to its end: no `Upcall::Lost`, no `PMIX_ERR_PROC_ABORTED`; what waited
    /// on it settles as for a finalized rank).
    pub fn proc_exited(&mut self, nspace: &str, rank: u32, status: i32, now: Instant) {
        let Some(ns) = self.namespaces.get(nspace) else {
            return;
        };
        let proc = (nspace.to_string(), rank);
        match ns.states.get(&rank) {
            Some(RankState::Connected(conn)) => {
                let conn = *conn;
                let finalized = self.conns.get(&conn).is_some_and(|p| p.finalized);
                self.out.push_back(Output::Close { conn });
                if let Some(peer) = self.conns.remove(&conn) {
                    self.forget_conn(conn, &peer, now);
                }
                if !finalized {
                    self.rank_lost(&proc, Some(status), now);
                }
            }
            Some(RankState::Waiting) if status == 0 => {
                if let Some(st) = self
                    .namespaces
                    .get_mut(nspace)
                    .and_then(|ns| ns.states.get_mut(&rank))
                {
                    *st = RankState::Finalized;
                }
                fence::proc_departed(self, &proc);
                store::proc_departed(self, &proc);
                groups::proc_lost(self, &proc, now);
                relay::local_departed(self, &proc.0);
            }
            Some(RankState::Waiting) => self.rank_lost(&proc, Some(status), now),
            _ => {}
        }
    }

    fn finalize(&mut self, conn: ConnId, tag: u32, now: Instant) {
        let Some(peer) = self.conns.get_mut(&conn) else {
            return;
        };
        peer.finalized = true;
        peer.regs.clear();
        let proc = peer.proc.clone();
        let tool = peer.tool;
        let mut id = None;
        if self.cfg.provides.spans_nodes() && !tool {
            // As OpenPMIx: the client hears back once the host knows (a host that
            // reaps a process which finalized without telling it reports an error).
            let i = self.next_host_id();
            self.finalizing.insert(i, (conn, tag, proc.0.clone()));
            id = Some(i);
        } else {
            self.reply_status(conn, tag, Command::Finalize, Status::SUCCESS);
        }
        self.events.proc_gone(&proc);
        if !tool {
            if let Some(ns) = self.namespaces.get_mut(&proc.0)
                && let Some(st) = ns.states.get_mut(&proc.1)
            {
                *st = RankState::Finalized;
            }
            self.out.push_back(Output::Host(Upcall::Finalized {
                id,
                nspace: proc.0.clone(),
                rank: proc.1,
            }));
            fence::proc_departed(self, &proc);
            store::proc_departed(self, &proc);
            // A finalized member holds no group: it departs them now, not when its
            // socket closes (collectives in flight complete or abort as for a loss).
            groups::proc_lost(self, &proc, now);
            relay::local_departed(self, &proc.0);
        }
    }

    fn abort(&mut self, conn: ConnId, tag: u32, a: pmix_wire::msg::Abort) {
        let Some(peer) = self.conns.get(&conn) else {
            return;
        };
        let proc = peer.proc.clone();
        let tool = peer.tool;
        self.reply_status(conn, tag, Command::Abort, Status::SUCCESS);
        self.out.push_back(Output::Host(Upcall::Aborted {
            nspace: proc.0.clone(),
            rank: proc.1,
            status: a.status.0,
            message: a.message.map(|m| m.to_string()),
        }));
        // The others hear of it now (once: not again when the rank dies).
        if !tool
            && let Some(ns) = self.namespaces.get_mut(&proc.0)
            && ns.aborted_reported.insert(proc.1)
        {
            events::proc_aborted(self, &proc, Some(a.status.0));
        }
    }

    /// The host's answer to the [`Upcall`] `id` (module docs): a finalize
    /// acknowledged lets a hosted core answer the client's FINALIZE; a fence's
    /// answer completes it (the local contributors get its status, the other nodes'
    /// values are stored; bytes that do not decode fail it); a direct modex's is
    /// stored and releases the gets held on it (a key it does not hold, or a
    /// failure: NOT_FOUND); a publish, unpublish or lookup's goes to its client; a
    /// spawn's to its parent. `now` is when it came (the relay's idle rounds count
    /// from it, [`Provides::relays`]). An id nobody waits for (answered already, or
    /// its client gone) is ignored.
    pub fn host_answer(&mut self, id: u64, answer: HostAnswer, now: Instant) {
        fn split<T: Default>(r: Result<T, Status>) -> (Status, T) {
            match r {
                Ok(v) => (Status::SUCCESS, v),
                Err(s) => (s, T::default()),
            }
        }
        match answer {
            HostAnswer::ClientFinalized => self.finalize_answered(id),
            HostAnswer::Fence(r) => {
                relay::clock(self, now);
                let (status, data) = split(r);
                self.fence_answered(id, status, &data);
            }
            HostAnswer::DirectModex(r) => {
                let (status, data) = split(r);
                if let Some(data) = relay::modex_arrived(self, id, status, &data) {
                    store::modex_answered(self, id, status, &data);
                }
            }
            HostAnswer::Publish(r) | HostAnswer::Unpublish(r) => {
                pubsub::op_answered(self, id, split(r).0);
            }
            HostAnswer::Lookup(r) => {
                let (status, data) = split(r);
                pubsub::lookup_answered(self, id, status, data);
            }
            HostAnswer::Spawn(r) => dynamic::done(self, id, r.as_deref().map_err(|s| *s)),
        }
    }

    /// The host acknowledged the finalize `id` ([`Upcall::Finalized`]): a hosted
    /// core answers its FINALIZE now (unless the relay holds it).
    fn finalize_answered(&mut self, id: u64) {
        if let Some((conn, tag, nspace)) = self.finalizing.remove(&id)
            && self.conns.contains_key(&conn)
            && !relay::hold_finalize(self, &nspace, conn, tag)
        {
            self.reply_status(conn, tag, Command::Finalize, Status::SUCCESS);
        }
    }

    /// A fence the host ran, or the relay completed, answered: `status`, and on
    /// success the concatenation of every node's blob (ours included), in any order.
    /// The local contributors are answered; an id no fence waits for is ignored.
    pub(crate) fn fence_answered(&mut self, id: u64, status: Status, data: &[u8]) {
        if relay::round_done(self, id, status, data) {
            return;
        }
        if groups::host_done(self, id, status, data) {
            return;
        }
        fence::host_done(self, id, status, data);
    }

    /// A host collective's answer: its entries on success, else its status (or
    /// `PMIX_ERROR` for bytes that do not decode).
    pub(crate) fn host_entries(
        &self,
        status: Status,
        data: &[u8],
    ) -> Result<Vec<pmix_wire::modex::ModexEntry>, Status> {
        if status != Status::SUCCESS {
            return Err(status);
        }
        pmix_wire::modex::decode_all(data, self.cfg.limits).map_err(|_| Status::ERROR)
    }

    /// Another node asks, through the host, for local process `nspace`:`rank`'s
    /// data: answered with [`Output::DmodexAnswer`] `id` at once if it committed,
    /// when it commits, or with NOT_FOUND (not a local rank, or gone) or
    /// `PMIX_ERR_TIMEOUT` (nothing committed within the get timeout).
    pub fn dmodex_request(&mut self, id: u64, nspace: &str, rank: u32, now: Instant) {
        store::dmodex_request(self, id, (nspace.to_string(), rank), now);
    }

    /// The info this server adds to the events it hands its host
    /// (`pmixrs.evorigin`: its nspace, rank, host name and
    /// [`CoreConfig::instance`]), by which it knows them when the host hands them
    /// back ([`Core::raise_event`] drops those).
    pub(crate) fn origin_mark(&self) -> pmix_wire::Info {
        let c = &self.cfg;
        let mark = format!("{}:{}@{}#{:x}", c.nspace, c.rank, c.hostname, c.instance);
        pmix_wire::Info::new(ORIGIN_KEY, mark.as_str())
    }

    /// Raises event `code` from the server itself (source: [`CoreConfig::nspace`]
    /// and `rank`) or from `source`, to every connected peer whose registrations
    /// match and that is in `range` (the rules of a client's NOTIFY), and caches
    /// it for late registrants unless `info` holds `pmix.evnocache` = true. For the
    /// launcher's own notifications (a job ending, a debugger release) and the
    /// events a host injects: one this server handed the host itself (its
    /// `pmixrs.evorigin` mark) is dropped, as raised already; another's mark is
    /// removed; a `PMIX_GROUP_LEFT` about a member of a group spanning nodes is
    /// applied to the group (each local holder hears it once).
    pub fn raise_event(
        &mut self,
        code: i32,
        source: Option<(&str, u32)>,
        info: Vec<pmix_wire::Info>,
        range: pmix_wire::DataRange,
    ) {
        // Hosts hand an event to every node, the one it came from too: that one
        // raised it already.
        let mark = self.origin_mark();
        if info.iter().any(|i| i == &mark) {
            return;
        }
        let info: Vec<pmix_wire::Info> = info.into_iter().filter(|i| i.key != ORIGIN_KEY).collect();
        if code == Status::GROUP_LEFT.0 && groups::host_left(self, &info) {
            return;
        }
        let info: Vec<pmix_wire::Info> = info
            .into_iter()
            .filter(|i| i.key != groups::INCARNATION_KEY)
            .collect();
        let source = match source {
            Some((ns, r)) => (ns.to_string(), r),
            None => (self.cfg.nspace.clone(), self.cfg.rank),
        };
        // An invite/join whose members span nodes: every node follows it (the
        // group is then known where its members are).
        let (status, keep) = (Status(code), info.clone());
        events::raise(self, status, &source, info, range, None);
        groups::notified(self, &source, status, &keep);
        // A fence over the id of a group this event made known waits for it.
        fence::resolve(self);
    }
}
