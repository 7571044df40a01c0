//! In-memory simulator: N processes, each with its group list ([`Groups`]) and its
//! process-state trackers ([`Tracker`]), wired by per-channel FIFO message queues
//! that a test can reorder (deliver any channel's head next), delay (hold a
//! channel), and kill processes (with or without dropping what they had in flight).
//!
//! It lives in `tests/support/` and not in the crate: it is test support, not API,
//! so it must not show in the docs, the semver surface or the `no_std` build, and a
//! private `_sim` feature would still compile it into every build that turns the
//! feature on. Tests include it with `mod support;`, the fuzz targets with
//! `#[path = "../../pmix-core/tests/support/sim.rs"] mod sim;`.
//!
//! Transport model (what a PMIx server gives its clients, and what the replicated
//! state machines assume): each channel (from, to) delivers in order; a process's
//! loss is announced on each of its channels after the last message it delivers
//! there; each broadcast of a killed process reaches all its recipients or none
//! (the server either got it and relays it, or never got it). Messages to a dead
//! process vanish. Reordering happens across channels. Within that model the
//! replicas agree; the property tests found both ways to break it (a loss known
//! before a record exists, a broadcast half dropped), and the runtime must keep to
//! it: report known losses when it creates a record, relay a broadcast whole.
//!
//! The runtime duties the simulator performs: invite every member at the first
//! construct, report losses a process already knows when its record is created,
//! feed departures to the trackers too, run tracker exchanges (a process decides
//! once every member contributed or departed), and buffer tracker packets for a
//! tracker not created yet (one born of a shrink another member decided first).
//!
//! The plain group model ([`GroupModel`]) records who is listed, who left, and
//! which broadcast carried each member's construct contribution and each
//! `PMIX_GROUP_LEFT` (a kill may drop one). From it, [`Sim::construct_outcome`]
//! says, docs/design.md §4's rule written the obvious way, how each member's construct
//! must end once nothing is in flight, and [`Sim::check_groups`] holds every
//! replica to it.
//!
//! Every process has rank `i` in the namespace "sim"; a group's ranks are its
//! members' process indexes in ascending order.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use pmix_core::PmixError;
use pmix_core::Status;
use pmix_core::ftstate::{
    AgreeValue, Agreement, Decision, FtError, Mask, Modifier, RankInfo, RankState, Tracker,
    Validation, View,
};
use pmix_core::group::{
    Body, CollectiveOp, Completion, ConstructOptions, DepartureCause, GroupError, GroupId, Groups,
    Message, Nspace, Output, ProcId, Roster,
};

/// A packet on a channel.
#[derive(Clone, Debug)]
pub enum Packet {
    /// A group message.
    Group(Box<Message>),
    /// The runtime's notice that the channel's sender is lost.
    Lost,
    /// A contribution to exchange `round` of tracker `key`.
    Ft {
        key: String,
        round: u32,
        value: AgreeValue,
    },
    /// A revoke notice for tracker `key`.
    Revoke { key: String },
}

/// What a process observed, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// A PMIx event raised on the process. `still_member`: whether the named process
    /// was still a member of the group when the event was raised.
    Event {
        group: String,
        code: Status,
        proc: usize,
        cause: DepartureCause,
        still_member: bool,
    },
    /// A local group call completed.
    Done {
        group: String,
        op: CollectiveOp,
        seq: u32,
        status: Status,
    },
}

/// The kind of a tracker exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// `MPI_Comm_agree` with this flag.
    Agree(u32),
    /// `validate_global`.
    ValidateGlobal,
    /// A shrink whose survivors get a tracker named `new_key`.
    Shrink(String),
}

/// The decision of one exchange, as every survivor must see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionSummary {
    pub flag: u32,
    pub failed: Vec<u32>,
    pub contributors: Vec<u32>,
    pub unacked: Option<u32>,
}

impl DecisionSummary {
    pub fn of(d: &Decision<'_>) -> DecisionSummary {
        DecisionSummary {
            flag: d.flag(),
            failed: d.failed().collect(),
            contributors: d.contributors().iter().collect(),
            unacked: d.unacked(),
        }
    }
}

/// What the exchange did at one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Agreed(Agreement),
    Validated(Validation),
    /// `new_rank` is `None` when this process was excluded.
    Shrunk {
        new_size: u32,
        new_rank: Option<u32>,
        survivors: Vec<u32>,
    },
    Refused(FtError),
}

/// One completed exchange at one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeResult {
    pub round: u32,
    pub kind: Exchange,
    pub decision: DecisionSummary,
    pub outcome: Outcome,
}

#[derive(Clone, Debug)]
struct Round {
    kind: Option<Exchange>,
    acc: AgreeValue,
}

/// One process's tracker for one group, plus the exchange bookkeeping the runtime
/// would do.
#[derive(Clone, Debug)]
pub struct FtMember {
    pub tracker: Tracker,
    /// Process index of each group rank.
    pub members: Vec<usize>,
    rounds: BTreeMap<u32, Round>,
    next_round: u32,
    /// Ranks whose departure notice arrived (they will not contribute any more).
    pub gone: BTreeMap<u32, DepartureCause>,
    pub results: Vec<ExchangeResult>,
    /// How many times `revoke` reported a transition here.
    pub revoke_transitions: u32,
    /// Everything the simulator applied to the tracker, in order (see
    /// [`Sim::model_of`]); changes made through [`Sim::tracker_mut`] are not in it.
    pub journal: Vec<Applied>,
}

/// A change the simulator applied to a tracker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    Report(u32),
    Left(u32),
    ValidateLocal,
    Ack(u32),
    Revoke,
    /// `validate_global` with this agreed failed set.
    ValidateGlobal(Vec<u32>),
    /// An agreement or shrink: the agreed failed set is learned, views untouched.
    Learn(Vec<u32>),
}

impl FtMember {
    fn rank_of(&self, proc: usize) -> Option<u32> {
        self.members
            .iter()
            .position(|&m| m == proc)
            .map(|r| r as u32)
    }

    /// `true` while an exchange this process started has not completed.
    pub fn exchange_pending(&self) -> bool {
        self.rounds.values().any(|r| r.kind.is_some())
    }
}

/// One simulated process.
#[derive(Clone, Debug)]
pub struct SimProc {
    pub id: ProcId,
    pub alive: bool,
    pub groups: Groups,
    pub seen: Vec<Seen>,
    /// Errors the process's state machines returned for delivered packets.
    pub errors: Vec<(String, Status)>,
    /// Packets that arrived after this process left or finished their group or
    /// tracker (not errors: they crossed the departure).
    pub stale: u64,
    /// Tracker names this process ever held.
    pub ft_ever: BTreeSet<String>,
    pub ft: BTreeMap<String, FtMember>,
    /// Group names this process ever held (ids are not reused in a simulation).
    pub ever: BTreeSet<String>,
    /// Processes whose loss notice this process received.
    pub lost_seen: BTreeSet<usize>,
    /// Tracker packets for trackers this process has not created yet (a faster
    /// member started an exchange on a group born of a shrink this one has not
    /// decided yet).
    early: Vec<(usize, String, u32, AgreeValue)>,
}

/// Groups as the whole simulation knows them: the plain model.
#[derive(Clone, Debug, Default)]
pub struct GroupModel {
    pub members: BTreeSet<usize>,
    pub left: BTreeSet<usize>,
    pub options: BTreeMap<usize, ConstructOptions>,
    /// Per member that called construct, the broadcast carrying its contribution.
    pub contribution: BTreeMap<usize, u64>,
    /// Per member that left, the broadcast carrying its `PMIX_GROUP_LEFT`.
    pub departure: BTreeMap<usize, u64>,
}

/// Where a member stands in a group's construct once everything in flight has been
/// delivered, as docs/design.md §4 accounts it (a contribution stands whatever follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Its contribution reached the others.
    Contributed,
    /// It left before contributing, and its `PMIX_GROUP_LEFT` reached the others.
    Left,
    /// It died before its contribution (or its `PMIX_GROUP_LEFT`) reached anyone.
    Lost,
    /// Alive, in the group, and it has not called construct.
    Pending,
}

/// The construct outcome the plain model predicts at one member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstructOutcome {
    /// Some member is still pending: no completion yet.
    Waiting,
    /// `PMIX_SUCCESS`, after one `PMIX_GROUP_MEMBER_FAILED` per member listed (with
    /// FT: every departed member, in rank order; without: none).
    Success {
        failed: Vec<(usize, DepartureCause)>,
    },
    /// `PMIX_GROUP_CONSTRUCT_ABORT` (no FT and a member lost), the abort event naming
    /// one of these lost members.
    Abort { lost: BTreeSet<usize> },
}

/// The simulator.
#[derive(Clone, Debug)]
pub struct Sim {
    pub procs: Vec<SimProc>,
    /// Per channel (from * n + to): packets with the id of the broadcast they
    /// belong to.
    chans: Vec<VecDeque<(u64, Packet)>>,
    next_batch: u64,
    /// Broadcasts at least one copy of which was delivered.
    started: BTreeSet<u64>,
    held: BTreeSet<(usize, usize)>,
    pub nspace: Nspace,
    pub groups: BTreeMap<String, GroupModel>,
    pub killed: BTreeSet<usize>,
    pub delivered: u64,
    pub dropped: u64,
    /// Broadcasts a kill dropped before anyone received them.
    pub dropped_batches: BTreeSet<u64>,
    rng: u64,
}

/// The group id of `name` (test names are valid).
pub fn gid(name: &str) -> GroupId {
    GroupId::new(name).expect("test group names are valid")
}

fn name_of(id: &GroupId) -> String {
    String::from_utf8_lossy(id.as_bytes()).into_owned()
}

impl Sim {
    /// `n` live processes, no group, no message.
    pub fn new(n: usize) -> Sim {
        let nspace = Nspace::new("sim").expect("valid");
        let procs = (0..n)
            .map(|i| {
                let id = ProcId::new(nspace, i as u32).expect("valid");
                SimProc {
                    id,
                    alive: true,
                    groups: Groups::new(id),
                    seen: Vec::new(),
                    errors: Vec::new(),
                    stale: 0,
                    ft_ever: BTreeSet::new(),
                    ft: BTreeMap::new(),
                    ever: BTreeSet::new(),
                    lost_seen: BTreeSet::new(),
                    early: Vec::new(),
                }
            })
            .collect();
        Sim {
            procs,
            chans: vec![VecDeque::new(); n * n],
            next_batch: 0,
            started: BTreeSet::new(),
            held: BTreeSet::new(),
            nspace,
            groups: BTreeMap::new(),
            killed: BTreeSet::new(),
            delivered: 0,
            dropped: 0,
            dropped_batches: BTreeSet::new(),
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    pub fn n(&self) -> usize {
        self.procs.len()
    }

    pub fn proc(&self, i: usize) -> ProcId {
        self.procs[i].id
    }

    /// The roster of processes `members`.
    pub fn roster(&self, members: &[usize]) -> Result<Roster, Status> {
        let procs: Vec<ProcId> = members.iter().map(|&m| self.proc(m)).collect();
        Roster::new(&procs).map_err(|e| e.status())
    }

    /// Sends one packet to each of `to`, as one broadcast: if the sender dies with
    /// it in flight, it reaches everyone or no one (a server relays what it got).
    /// Returns the broadcast's id.
    fn broadcast(&mut self, from: usize, to: Vec<usize>, p: Packet) -> u64 {
        let n = self.n();
        let batch = self.next_batch;
        self.next_batch += 1;
        for q in to {
            self.chans[from * n + q].push_back((batch, p.clone()));
        }
        batch
    }

    // ---------------------------------------------------------------- group calls

    /// `PMIx_Group_construct` by `p`. The first construct of a name invites every
    /// other live member (the server telling them a construct lists them).
    pub fn construct(
        &mut self,
        p: usize,
        name: &str,
        members: &[usize],
        opts: ConstructOptions,
    ) -> Result<(), Status> {
        if !self.procs[p].alive {
            return Err(Status::ERR_UNREACH);
        }
        let id = GroupId::new(name).map_err(|e| e.status())?;
        let roster = self.roster(members)?;
        if self.procs[p].ever.contains(name) && self.procs[p].groups.get(&id).is_none() {
            // Reusing a finished group's id: a replicated tracker without a server
            // cannot tell incarnations apart, so the simulation does not allow it.
            return Err(Status::ERR_BAD_PARAM);
        }
        if !self.groups.contains_key(name) && members.contains(&p) {
            self.groups.insert(
                name.to_owned(),
                GroupModel {
                    members: members.iter().copied().collect(),
                    ..GroupModel::default()
                },
            );
            for &m in members {
                if m != p && self.procs[m].alive && !self.procs[m].ever.contains(name) {
                    self.create_record(m, id, &roster, members)?;
                }
            }
        }
        if members.contains(&p) && self.procs[p].groups.get(&id).is_none() {
            self.create_record(p, id, &roster, members)?;
        }
        self.procs[p]
            .groups
            .construct(id, roster, opts)
            .map_err(|e| e.status())?;
        self.procs[p].ever.insert(name.to_owned());
        if let Some(g) = self.groups.get_mut(name) {
            g.options.insert(p, opts);
        }
        self.drain(p);
        Ok(())
    }

    /// Creates `m`'s record of a group (an invitation), then reports the members
    /// `m` already knows are lost: a runtime must, since their loss notices came
    /// before the record existed.
    fn create_record(
        &mut self,
        m: usize,
        id: GroupId,
        roster: &Roster,
        members: &[usize],
    ) -> Result<(), Status> {
        self.procs[m]
            .groups
            .invite(id, roster.clone())
            .map_err(|e| e.status())?;
        self.procs[m].ever.insert(name_of(&id));
        let known: Vec<ProcId> = members
            .iter()
            .filter(|q| self.procs[m].lost_seen.contains(q))
            .map(|&q| self.proc(q))
            .collect();
        for q in known {
            if let Err(e) = self.procs[m].groups.on_lost(&q) {
                self.procs[m]
                    .errors
                    .push((format!("known loss of {q}: {e}"), e.status()));
            }
            self.drain(m);
        }
        Ok(())
    }

    /// `PMIx_Fence` over the group by `p`.
    pub fn fence(&mut self, p: usize, name: &str, ft: bool) -> Result<(), Status> {
        if !self.procs[p].alive {
            return Err(Status::ERR_UNREACH);
        }
        let id = GroupId::new(name).map_err(|e| e.status())?;
        self.procs[p]
            .groups
            .fence(&id, ft)
            .map_err(|e| e.status())?;
        self.drain(p);
        Ok(())
    }

    /// `PMIx_Group_destruct` by `p`.
    pub fn destruct(&mut self, p: usize, name: &str) -> Result<(), Status> {
        if !self.procs[p].alive {
            return Err(Status::ERR_UNREACH);
        }
        let id = GroupId::new(name).map_err(|e| e.status())?;
        self.procs[p].groups.destruct(&id).map_err(|e| e.status())?;
        self.drain(p);
        Ok(())
    }

    /// `PMIx_Group_leave` by `p`, the group named as a C caller would (any bytes).
    /// Returns the leaver's cancelled call, if one was in flight.
    pub fn leave(&mut self, p: usize, name: &[u8]) -> Result<Option<Completion>, Status> {
        if !self.procs[p].alive {
            return Err(Status::ERR_UNREACH);
        }
        let id = GroupId::from_bytes(name).map_err(|e| e.status())?;
        let dep = self.procs[p].groups.leave(&id).map_err(|e| e.status())?;
        let msg = dep.message();
        let to: Vec<usize> = dep.recipients().map(|q| q.rank as usize).collect();
        let batch = self.broadcast(p, to, Packet::Group(Box::new(msg)));
        let key = name_of(&id);
        if let Some(g) = self.groups.get_mut(&key) {
            g.left.insert(p);
            g.departure.insert(p, batch);
        }
        self.procs[p].ft.remove(&key);
        Ok(dep.cancelled())
    }

    /// Polls every output of `p`'s groups: sends go on the channels, events and
    /// completions into `seen`.
    fn drain(&mut self, p: usize) {
        while let Some(out) = self.procs[p].groups.poll_output() {
            let group = name_of(&out.group);
            match out.output {
                Output::Send(body) => {
                    let msg = Message {
                        group: out.group,
                        from: self.procs[p].id,
                        body,
                    };
                    let to: Vec<usize> = match self.procs[p].groups.get(&out.group) {
                        Some(g) => g.others().map(|q| q.rank as usize).collect(),
                        None => Vec::new(),
                    };
                    let batch = self.broadcast(p, to, Packet::Group(Box::new(msg)));
                    if let (Body::Contribute { seq: 0, .. }, Some(g)) =
                        (body, self.groups.get_mut(&group))
                    {
                        g.contribution.insert(p, batch);
                    }
                }
                Output::Notify(n) => {
                    let still_member = self.procs[p]
                        .groups
                        .get(&out.group)
                        .is_some_and(|g| g.is_member(&n.proc));
                    let proc = n.proc.rank as usize;
                    self.procs[p].seen.push(Seen::Event {
                        group,
                        code: n.code,
                        proc,
                        cause: n.cause,
                        still_member,
                    });
                }
                Output::Complete(c) => {
                    self.procs[p].seen.push(Seen::Done {
                        group,
                        op: c.op,
                        seq: c.seq,
                        status: c.status,
                    });
                }
            }
        }
    }

    // ------------------------------------------------------------ the transport

    /// Kills `p`: it stops; its loss is announced on each of its channels after
    /// what it had in flight there. With `drop_in_flight`, its broadcasts that no
    /// one received yet are dropped (those someone received reach everyone).
    pub fn kill(&mut self, p: usize, drop_in_flight: bool) {
        if !self.procs[p].alive {
            return;
        }
        self.procs[p].alive = false;
        self.killed.insert(p);
        let n = self.n();
        for q in 0..n {
            if q == p {
                continue;
            }
            let ch = &mut self.chans[p * n + q];
            if drop_in_flight {
                let before = ch.len();
                let started = &self.started;
                let dropped = &mut self.dropped_batches;
                ch.retain(|(batch, _)| {
                    started.contains(batch) || {
                        dropped.insert(*batch);
                        false
                    }
                });
                self.dropped += (before - ch.len()) as u64;
            }
            let batch = self.next_batch;
            self.next_batch += 1;
            ch.push_back((batch, Packet::Lost));
        }
    }

    /// Packets in flight.
    pub fn pending(&self) -> usize {
        self.chans.iter().map(VecDeque::len).sum()
    }

    /// Packets in flight on (from, to).
    pub fn pending_on(&self, from: usize, to: usize) -> usize {
        self.chans[from * self.n() + to].len()
    }

    /// Holds channel (from, to): [`Sim::run`] skips it until [`Sim::release`].
    pub fn hold(&mut self, from: usize, to: usize) {
        self.held.insert((from, to));
    }

    /// Releases a held channel.
    pub fn release(&mut self, from: usize, to: usize) {
        self.held.remove(&(from, to));
    }

    /// Delivers the head of channel (from, to); `false` if it is empty.
    pub fn deliver(&mut self, from: usize, to: usize) -> bool {
        let n = self.n();
        let Some((batch, p)) = self.chans[from * n + to].pop_front() else {
            return false;
        };
        self.started.insert(batch);
        self.delivered += 1;
        if !self.procs[to].alive {
            self.dropped += 1;
            return true;
        }
        self.handle(from, to, p);
        true
    }

    /// Delivers the head of the `k`-th (mod their number) non-empty, non-held
    /// channel: an arbitrary interleaving for fuzzing. `false` when nothing can move.
    pub fn deliver_nth(&mut self, k: usize) -> bool {
        let n = self.n();
        let ready: Vec<usize> = (0..n * n)
            .filter(|&c| !self.chans[c].is_empty() && !self.held.contains(&(c / n, c % n)))
            .collect();
        if ready.is_empty() {
            return false;
        }
        let c = ready[k % ready.len()];
        self.deliver(c / n, c % n)
    }

    /// Delivers until every non-held channel is empty, in a pseudo-random channel
    /// order drawn from `seed`.
    pub fn run_shuffled(&mut self, seed: u64) {
        self.rng ^= seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
        loop {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            if !self.deliver_nth(self.rng as usize) {
                return;
            }
        }
    }

    /// Delivers until every non-held channel is empty, channels in a fixed order.
    pub fn run(&mut self) {
        while self.deliver_nth(0) {}
    }

    fn handle(&mut self, from: usize, to: usize, p: Packet) {
        match p {
            Packet::Group(msg) => {
                let msg = *msg;
                let r = self.procs[to].groups.on_message(&msg);
                match r {
                    Ok(()) => {
                        if msg.body == Body::Left {
                            self.ft_departure(to, &name_of(&msg.group), from, DepartureCause::Left);
                        }
                    }
                    Err(GroupError::NotFound)
                        if self.procs[to].ever.contains(&name_of(&msg.group)) =>
                    {
                        self.procs[to].stale += 1;
                    }
                    Err(e) => self.procs[to]
                        .errors
                        .push((format!("{msg:?}: {e}"), e.status())),
                }
                self.drain(to);
            }
            Packet::Lost => {
                let who = self.procs[from].id;
                if let Err(e) = self.procs[to].groups.on_lost(&who) {
                    self.procs[to]
                        .errors
                        .push((format!("lost {who}: {e}"), e.status()));
                }
                self.drain(to);
                self.procs[to].lost_seen.insert(from);
                let keys: Vec<String> = self.procs[to].ft.keys().cloned().collect();
                for key in keys {
                    self.ft_departure(to, &key, from, DepartureCause::Lost);
                }
            }
            Packet::Ft { key, round, value } => {
                if !self.procs[to].ft.contains_key(&key) {
                    if self.procs[to].ft_ever.contains(&key) {
                        self.procs[to].stale += 1;
                    } else {
                        self.procs[to].early.push((from, key, round, value));
                    }
                    return;
                }
                self.ft_combine(to, &key, round, &value);
            }
            Packet::Revoke { key } => {
                if let Some(m) = self.procs[to].ft.get_mut(&key) {
                    if m.tracker.revoke() {
                        m.revoke_transitions += 1;
                    }
                    m.journal.push(Applied::Revoke);
                }
            }
        }
    }

    // ------------------------------------------------------------------ trackers

    /// Creates tracker `key` over processes `members` at each live member.
    pub fn make_tracker(&mut self, key: &str, members: &[usize]) {
        let mut members = members.to_vec();
        members.sort_unstable();
        members.dedup();
        for (rank, &p) in members.iter().enumerate() {
            if self.procs[p].alive {
                self.install_tracker(p, key, members.clone(), rank as u32);
            }
        }
    }

    fn install_tracker(&mut self, p: usize, key: &str, members: Vec<usize>, rank: u32) {
        let tracker = Tracker::new(members.len() as u32, rank).expect("test sizes are valid");
        let mut m = FtMember {
            tracker,
            members,
            rounds: BTreeMap::new(),
            next_round: 0,
            gone: BTreeMap::new(),
            results: Vec::new(),
            revoke_transitions: 0,
            journal: Vec::new(),
        };
        for (r, q) in m.members.clone().into_iter().enumerate() {
            if self.procs[p].lost_seen.contains(&q) {
                if m.tracker.report_failure(r as u32).is_ok() {
                    m.journal.push(Applied::Report(r as u32));
                }
                m.gone.insert(r as u32, DepartureCause::Lost);
            }
        }
        self.procs[p].ft.insert(key.to_owned(), m);
        self.procs[p].ft_ever.insert(key.to_owned());
        let early = std::mem::take(&mut self.procs[p].early);
        for (from, k, round, value) in early {
            if k == key {
                let _ = from;
                self.ft_combine(p, &k, round, &value);
            } else {
                self.procs[p].early.push((from, k, round, value));
            }
        }
    }

    pub fn tracker(&self, p: usize, key: &str) -> &Tracker {
        &self.procs[p].ft[key].tracker
    }

    pub fn tracker_mut(&mut self, p: usize, key: &str) -> &mut Tracker {
        &mut self.procs[p]
            .ft
            .get_mut(key)
            .expect("tracker exists")
            .tracker
    }

    pub fn member(&self, p: usize, key: &str) -> Option<&FtMember> {
        self.procs[p].ft.get(key)
    }

    /// The detector of process `p` reports process `q` failed (to tracker `key`).
    pub fn report(&mut self, p: usize, key: &str, q: usize) -> Result<bool, FtError> {
        let m = self.procs[p].ft.get_mut(key).expect("tracker exists");
        let r = m.rank_of(q).ok_or(FtError::RankOutOfRange {
            rank: u32::MAX,
            size: m.tracker.size(),
        })?;
        let res = m.tracker.report_failure(r);
        if res.is_ok() {
            m.journal.push(Applied::Report(r));
        }
        res
    }

    /// `validate_local` at `p` on tracker `key`.
    pub fn validate_local(&mut self, p: usize, key: &str) -> Validation {
        let m = self.procs[p].ft.get_mut(key).expect("tracker exists");
        m.journal.push(Applied::ValidateLocal);
        m.tracker.validate_local()
    }

    /// `ack_failed(n)` at `p` on tracker `key`.
    pub fn ack(&mut self, p: usize, key: &str, n: u32) -> u32 {
        let m = self.procs[p].ft.get_mut(key).expect("tracker exists");
        m.journal.push(Applied::Ack(n));
        m.tracker.ack_failed(n)
    }

    /// The plain model of `p`'s tracker `key`, replaying its journal.
    pub fn model_of(&self, p: usize, key: &str) -> TrackerModel {
        let m = &self.procs[p].ft[key];
        let mut t = TrackerModel::new(m.tracker.size(), m.tracker.my_rank());
        for a in &m.journal {
            match a {
                Applied::Report(r) => {
                    t.report_failure(*r);
                }
                Applied::Left(r) => {
                    t.report_left(*r);
                }
                Applied::ValidateLocal => {
                    t.validate_local();
                }
                Applied::Ack(n) => {
                    t.ack_failed(*n);
                }
                Applied::Revoke => t.revoked = true,
                Applied::ValidateGlobal(f) => {
                    t.validate_global(&f.iter().copied().collect());
                }
                Applied::Learn(f) => t.learn(&f.iter().copied().collect()),
            }
        }
        t
    }

    /// `p` starts an exchange on tracker `key`. Returns its round number.
    pub fn exchange(&mut self, p: usize, key: &str, kind: Exchange) -> Result<u32, String> {
        if !self.procs[p].alive {
            return Err("dead".into());
        }
        let m = self.procs[p].ft.get_mut(key).ok_or("no tracker")?;
        if m.exchange_pending() {
            return Err("an exchange is already pending here".into());
        }
        let flag = if let Exchange::Agree(f) = kind {
            f
        } else {
            u32::MAX
        };
        let mut contrib = AgreeValue::new(m.tracker.size()).map_err(|e| e.to_string())?;
        m.tracker
            .contribute(flag, &mut contrib)
            .map_err(|e| e.to_string())?;
        let round = m.next_round;
        m.next_round += 1;
        let size = m.tracker.size();
        let r = m.rounds.entry(round).or_insert_with(|| Round {
            kind: None,
            acc: AgreeValue::new(size).expect("valid"),
        });
        r.acc.combine(&contrib).map_err(|e| e.to_string())?;
        r.kind = Some(kind);
        let me = m.tracker.my_rank();
        let to: Vec<usize> = m
            .members
            .iter()
            .enumerate()
            .filter(|&(rank, _)| rank as u32 != me && !m.gone.contains_key(&(rank as u32)))
            .map(|(_, &q)| q)
            .collect();
        self.broadcast(
            p,
            to,
            Packet::Ft {
                key: key.to_owned(),
                round,
                value: contrib,
            },
        );
        self.ft_try_finish(p, key);
        Ok(round)
    }

    /// `p` revokes tracker `key`; the notice goes to the other members on the
    /// first transition. Returns what `revoke` returned.
    pub fn revoke(&mut self, p: usize, key: &str) -> bool {
        let m = self.procs[p].ft.get_mut(key).expect("tracker exists");
        m.journal.push(Applied::Revoke);
        if !m.tracker.revoke() {
            return false;
        }
        m.revoke_transitions += 1;
        let me = m.tracker.my_rank() as usize;
        let to: Vec<usize> = m
            .members
            .iter()
            .enumerate()
            .filter(|&(r, _)| r != me)
            .map(|(_, &q)| q)
            .collect();
        self.broadcast(
            p,
            to,
            Packet::Revoke {
                key: key.to_owned(),
            },
        );
        true
    }

    fn ft_departure(&mut self, p: usize, key: &str, who: usize, cause: DepartureCause) {
        let Some(m) = self.procs[p].ft.get_mut(key) else {
            return;
        };
        let Some(r) = m.rank_of(who) else { return };
        let res = match cause {
            DepartureCause::Lost => m.tracker.report_failure(r),
            DepartureCause::Left => m.tracker.report_left(r),
        };
        match res {
            Err(e) => {
                self.procs[p].errors.push((
                    format!("tracker {key}: {cause:?} of rank {r}: {e}"),
                    e.status(),
                ));
                return;
            }
            Ok(_) => m.journal.push(match cause {
                DepartureCause::Lost => Applied::Report(r),
                DepartureCause::Left => Applied::Left(r),
            }),
        }
        m.gone.entry(r).or_insert(cause);
        self.ft_try_finish(p, key);
    }

    fn ft_combine(&mut self, p: usize, key: &str, round: u32, value: &AgreeValue) {
        let m = self.procs[p].ft.get_mut(key).expect("checked");
        let size = m.tracker.size();
        let r = m.rounds.entry(round).or_insert_with(|| Round {
            kind: None,
            acc: AgreeValue::new(size).expect("valid"),
        });
        if let Err(e) = r.acc.combine(value) {
            self.procs[p]
                .errors
                .push((format!("tracker {key} round {round}: {e}"), e.status()));
            return;
        }
        self.ft_try_finish(p, key);
    }

    /// Decides the oldest exchange this process started once every member
    /// contributed or departed.
    fn ft_try_finish(&mut self, p: usize, key: &str) {
        let Some(m) = self.procs[p].ft.get_mut(key) else {
            return;
        };
        let Some((&round, r)) = m.rounds.iter_mut().find(|(_, r)| r.kind.is_some()) else {
            return;
        };
        let size = m.tracker.size();
        if !(0..size).all(|k| r.acc.contributors().contains(k) || m.gone.contains_key(&k)) {
            return;
        }
        for (&k, &cause) in &m.gone {
            if cause == DepartureCause::Left && !r.acc.contributors().contains(k) {
                let _ = r.acc.mark_left(k);
            }
        }
        let r = m.rounds.remove(&round).expect("found");
        let kind = r.kind.expect("started here");
        let d = r.acc.decide();
        let decision = DecisionSummary::of(&d);
        let mut shrunk = None;
        let outcome = match &kind {
            Exchange::Agree(_) => m.tracker.agree(&d).map(Outcome::Agreed),
            Exchange::ValidateGlobal => m.tracker.validate_global(&d).map(Outcome::Validated),
            Exchange::Shrink(new_key) => m.tracker.shrink(&d).map(|map| {
                let survivors: Vec<u32> = map.iter().map(|(old, _)| old).collect();
                let new_rank = map.new_rank(m.tracker.my_rank());
                let members: Vec<usize> = survivors
                    .iter()
                    .map(|&old| m.members[old as usize])
                    .collect();
                if let Some(nr) = new_rank {
                    shrunk = Some((new_key.clone(), members, nr));
                }
                Outcome::Shrunk {
                    new_size: map.new_size(),
                    new_rank,
                    survivors,
                }
            }),
        }
        .unwrap_or_else(Outcome::Refused);
        match (&kind, &outcome) {
            (_, Outcome::Refused(_)) => {}
            (Exchange::ValidateGlobal, _) => m
                .journal
                .push(Applied::ValidateGlobal(decision.failed.clone())),
            _ => m.journal.push(Applied::Learn(decision.failed.clone())),
        }
        m.results.push(ExchangeResult {
            round,
            kind,
            decision,
            outcome,
        });
        if let Some((new_key, members, nr)) = shrunk {
            self.install_tracker(p, &new_key, members, nr);
        }
    }

    // ---------------------------------------------------------------- invariants

    /// Where member `m` stands in the construct of group `name` (a group the model
    /// knows), counting what is still in flight as delivered.
    pub fn standing(&self, name: &str, m: usize) -> Standing {
        let model = &self.groups[name];
        let reaches = |b: Option<&u64>| b.is_some_and(|b| !self.dropped_batches.contains(b));
        if reaches(model.contribution.get(&m)) {
            Standing::Contributed
        } else if reaches(model.departure.get(&m)) {
            Standing::Left
        } else if self.killed.contains(&m) {
            Standing::Lost
        } else {
            Standing::Pending
        }
    }

    /// The construct outcome docs/design.md §4 gives member `s` of group `name`, which
    /// called construct with `opts`, once everything in flight is delivered: wait
    /// while a member is pending; else with FT, success after one member-failed
    /// event per departed member; without FT, abort if a member was lost, else
    /// success (leavers never abort a construct).
    pub fn construct_outcome(
        &self,
        name: &str,
        s: usize,
        opts: ConstructOptions,
    ) -> ConstructOutcome {
        let others: Vec<(usize, Standing)> = self.groups[name]
            .members
            .iter()
            .filter(|&&m| m != s)
            .map(|&m| (m, self.standing(name, m)))
            .collect();
        if others.iter().any(|&(_, st)| st == Standing::Pending) {
            return ConstructOutcome::Waiting;
        }
        let departed: Vec<(usize, DepartureCause)> = others
            .iter()
            .filter_map(|&(m, st)| match st {
                Standing::Left => Some((m, DepartureCause::Left)),
                Standing::Lost => Some((m, DepartureCause::Lost)),
                Standing::Contributed | Standing::Pending => None,
            })
            .collect();
        if opts.ft_collective {
            return ConstructOutcome::Success { failed: departed };
        }
        let lost: BTreeSet<usize> = departed
            .iter()
            .filter(|&&(_, cause)| cause == DepartureCause::Lost)
            .map(|&(m, _)| m)
            .collect();
        if lost.is_empty() {
            ConstructOutcome::Success { failed: Vec::new() }
        } else {
            ConstructOutcome::Abort { lost }
        }
    }

    /// Checks, once nothing is in flight, every live member's construct of every
    /// group against [`Sim::construct_outcome`]: its completion (or none while
    /// waiting), the member-failed and abort events before it, and exactly one
    /// `PMIX_GROUP_LEFT` per member whose leave reached it while it holds the group.
    fn check_constructs(&self) -> Result<(), String> {
        for (name, model) in &self.groups {
            for &s in model.members.iter().filter(|&&s| self.procs[s].alive) {
                let seen: Vec<&Seen> = self.procs[s]
                    .seen
                    .iter()
                    .filter(|e| match e {
                        Seen::Event { group, .. } | Seen::Done { group, .. } => group == name,
                    })
                    .collect();
                let done = seen.iter().position(|e| {
                    matches!(
                        e,
                        Seen::Done {
                            op: CollectiveOp::Construct,
                            ..
                        }
                    )
                });
                let before = &seen[..done.unwrap_or(seen.len())];
                let events = |code: Status| -> Vec<(usize, DepartureCause)> {
                    before
                        .iter()
                        .filter_map(|e| match e {
                            Seen::Event {
                                code: c,
                                proc,
                                cause,
                                ..
                            } if *c == code => Some((*proc, *cause)),
                            _ => None,
                        })
                        .collect()
                };
                let failed = events(Status::GROUP_MEMBER_FAILED);
                let aborts = events(Status::GROUP_CONSTRUCT_ABORT);
                let status = done.map(|k| match seen[k] {
                    Seen::Done { status, .. } => *status,
                    Seen::Event { .. } => unreachable!("found as a completion"),
                });
                let has_left = model.departure.contains_key(&s);
                let want = match model.options.get(&s) {
                    Some(&opts) => self.construct_outcome(name, s, opts),
                    None => ConstructOutcome::Waiting,
                };
                let ctx = || format!("p{s} {name}: model {want:?}, saw {seen:?}");
                match &want {
                    ConstructOutcome::Waiting if status.is_some() => {
                        return Err(format!("completed while a member is pending: {}", ctx()));
                    }
                    ConstructOutcome::Waiting => {}
                    // A leaver's own call was cancelled: it may never see the outcome.
                    _ if status.is_none() && has_left => {}
                    ConstructOutcome::Success {
                        failed: want_failed,
                    } => {
                        if status != Some(Status::SUCCESS)
                            || failed != *want_failed
                            || !aborts.is_empty()
                        {
                            return Err(format!("construct should succeed: {}", ctx()));
                        }
                    }
                    ConstructOutcome::Abort { lost } => {
                        let named_lost = matches!(
                            aborts[..],
                            [(m, DepartureCause::Lost)] if lost.contains(&m)
                        );
                        if status != Some(Status::GROUP_CONSTRUCT_ABORT)
                            || !failed.is_empty()
                            || !named_lost
                        {
                            return Err(format!("construct should abort: {}", ctx()));
                        }
                    }
                }
                // PMIX_GROUP_LEFT: at most one per leaver; exactly one while the
                // group is held (the leave reached every current member).
                let holds = self.procs[s].groups.get(&gid(name)).is_some();
                for (&m, batch) in &model.departure {
                    if m == s {
                        continue;
                    }
                    let n = seen
                        .iter()
                        .filter(|e| {
                            matches!(e, Seen::Event { code, proc, .. }
                                if *code == Status::GROUP_LEFT && *proc == m)
                        })
                        .count();
                    let reached = !self.dropped_batches.contains(batch);
                    if n > 1 || (!reached && n > 0) || (holds && reached && n != 1) {
                        return Err(format!("{n} GROUP_LEFT for p{m}: {}", ctx()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks the group invariants; with `quiet` (nothing in flight), also that
    /// every live replica's membership equals the model (members − left − killed),
    /// that construct outcomes agree among members that used the same directive,
    /// and that each construct ended as [`Sim::construct_outcome`] says.
    ///
    /// At any time: an abort names a lost member (a leave never aborts a construct)
    /// and only a member that constructed without FT sees one.
    pub fn check_groups(&self, quiet: bool) -> Result<(), String> {
        for (i, p) in self.procs.iter().enumerate().filter(|(_, p)| p.alive) {
            for e in &p.seen {
                match e {
                    Seen::Event {
                        group,
                        code,
                        proc,
                        cause,
                        ..
                    } if *code == Status::GROUP_CONSTRUCT_ABORT
                        && *cause != DepartureCause::Lost =>
                    {
                        return Err(format!("p{i} {group}: abort names p{proc}, who left"));
                    }
                    Seen::Done {
                        group,
                        op: CollectiveOp::Construct,
                        status,
                        ..
                    } => {
                        let Some(model) = self.groups.get(group) else {
                            return Err(format!("p{i} {group}: completion of an unknown group"));
                        };
                        let ft = model.options.get(&i).is_some_and(|o| o.ft_collective);
                        let ok = *status == Status::SUCCESS
                            || (*status == Status::GROUP_CONSTRUCT_ABORT && !ft);
                        if !ok {
                            return Err(format!(
                                "p{i} {group}: construct ended {status} (ft={ft})"
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
        for (i, p) in self.procs.iter().enumerate().filter(|(_, p)| p.alive) {
            for g in p.groups.iter() {
                let name = name_of(g.id());
                let cur = g.current();
                if cur.iter().count() != cur.len() as usize {
                    return Err(format!("p{i} {name}: member count out of step"));
                }
                if !cur.contains(g.my_rank()) {
                    return Err(format!("p{i} {name}: not a member of its own group"));
                }
                if cur.len() > g.roster().len() {
                    return Err(format!("p{i} {name}: more members than the roster"));
                }
                if quiet {
                    let model = &self.groups[&name];
                    let want: BTreeSet<usize> = model
                        .members
                        .difference(&model.left)
                        .filter(|m| !self.killed.contains(m))
                        .copied()
                        .collect();
                    let have: BTreeSet<usize> = g.members().map(|q| q.rank as usize).collect();
                    if want != have {
                        return Err(format!("p{i} {name}: members {have:?}, model {want:?}"));
                    }
                }
            }
        }
        if quiet {
            for (name, model) in &self.groups {
                let mut outcomes: BTreeMap<bool, BTreeSet<Status>> = BTreeMap::new();
                for (i, p) in self.procs.iter().enumerate().filter(|(_, p)| p.alive) {
                    for s in &p.seen {
                        if let Seen::Done {
                            group,
                            op: CollectiveOp::Construct,
                            status,
                            ..
                        } = s
                            && group == name
                        {
                            let ft = model.options.get(&i).is_some_and(|o| o.ft_collective);
                            outcomes.entry(ft).or_default().insert(*status);
                        }
                    }
                }
                for (ft, s) in outcomes {
                    if s.len() > 1 {
                        return Err(format!(
                            "{name}: construct (ft={ft}) ended differently: {s:?}"
                        ));
                    }
                }
            }
            self.check_constructs()?;
        }
        Ok(())
    }

    /// Checks that every survivor of every exchange decided the same.
    pub fn check_decisions(&self) -> Result<(), String> {
        let mut seen: BTreeMap<(String, u32), (usize, DecisionSummary)> = BTreeMap::new();
        for (i, p) in self.procs.iter().enumerate().filter(|(_, p)| p.alive) {
            for (key, m) in &p.ft {
                for r in &m.results {
                    match seen.get(&(key.clone(), r.round)) {
                        Some((j, d)) if *d != r.decision => {
                            return Err(format!(
                                "{key} round {}: p{j} decided {d:?}, p{i} {:?}",
                                r.round, r.decision
                            ));
                        }
                        Some(_) => {}
                        None => {
                            seen.insert((key.clone(), r.round), (i, r.decision.clone()));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------------------
// A plain model of one tracker, straight from docs/design.md §5, with sets and vectors.

/// The spec of [`Tracker`], written the obvious way.
#[derive(Clone, Debug, Default)]
pub struct TrackerModel {
    pub size: u32,
    pub me: u32,
    pub log: Vec<u32>,
    pub left: BTreeSet<u32>,
    pub l: BTreeSet<u32>,
    pub g: BTreeSet<u32>,
    pub new_l: BTreeSet<u32>,
    pub new_g: BTreeSet<u32>,
    pub acked: usize,
    pub revoked: bool,
}

impl TrackerModel {
    pub fn new(size: u32, me: u32) -> TrackerModel {
        TrackerModel {
            size,
            me,
            ..TrackerModel::default()
        }
    }

    pub fn report_failure(&mut self, r: u32) -> Option<bool> {
        if r >= self.size || self.left.contains(&r) {
            return None;
        }
        if self.log.contains(&r) {
            return Some(false);
        }
        self.log.push(r);
        Some(true)
    }

    pub fn report_left(&mut self, r: u32) -> Option<bool> {
        if r >= self.size || self.log.contains(&r) {
            return None;
        }
        Some(self.left.insert(r))
    }

    pub fn validate_local(&mut self) -> Validation {
        let all: BTreeSet<u32> = self.log.iter().copied().collect();
        self.new_l = all.difference(&self.l).copied().collect();
        self.l = all;
        Validation {
            num_failed: self.l.len() as u32,
            new_failures: self.new_l.len() as u32,
        }
    }

    /// Applies an agreed failed set.
    pub fn validate_global(&mut self, agreed: &BTreeSet<u32>) -> Validation {
        // The decision alone (and earlier ones) make G; this model's decisions
        // carry this tracker's leavers, so those are no failures.
        let f: BTreeSet<u32> = agreed
            .union(&self.g)
            .filter(|r| !self.left.contains(r))
            .copied()
            .collect();
        self.new_g = f.difference(&self.g).copied().collect();
        self.new_l = f.difference(&self.l).copied().collect();
        self.g = f.clone();
        self.l = f;
        self.learn(agreed);
        Validation {
            num_failed: self.g.len() as u32,
            new_failures: self.new_g.len() as u32,
        }
    }

    pub fn learn(&mut self, agreed: &BTreeSet<u32>) {
        for &r in agreed {
            if !self.log.contains(&r) && !self.left.contains(&r) {
                self.log.push(r);
            }
        }
    }

    pub fn state(&self, view: View, r: u32) -> Option<(RankState, Modifier)> {
        if self.left.contains(&r) {
            return None;
        }
        let (v, nv) = match view {
            View::Local => (&self.l, &self.new_l),
            View::Global => (&self.g, &self.new_g),
        };
        if !v.contains(&r) {
            return Some((RankState::Ok, Modifier::Old));
        }
        let st = if self.g.contains(&r) {
            RankState::Null
        } else {
            RankState::Failed
        };
        let md = if nv.contains(&r) {
            Modifier::New
        } else {
            Modifier::Old
        };
        Some((st, md))
    }

    pub fn matches(mask: Mask, st: RankState, md: Modifier) -> bool {
        let b = mask.bits();
        let states = if b & 7 == 0 {
            Mask::FAILED.bits() | Mask::NULL.bits()
        } else {
            b & 7
        };
        let mods = if b & 24 == 0 {
            Mask::NEW.bits() | Mask::OLD.bits()
        } else {
            b & 24
        };
        let sb = match st {
            RankState::Ok => Mask::OK.bits(),
            RankState::Failed => Mask::FAILED.bits(),
            RankState::Null => Mask::NULL.bits(),
        };
        let mb = match md {
            Modifier::New => Mask::NEW.bits(),
            Modifier::Old => Mask::OLD.bits(),
        };
        states & sb != 0 && mods & mb != 0
    }

    pub fn get_state(&self, view: View, mask: Mask) -> Vec<RankInfo> {
        (0..self.size)
            .filter_map(|r| {
                let (state, modifier) = self.state(view, r)?;
                Self::matches(mask, state, modifier).then_some(RankInfo {
                    rank: r,
                    state,
                    modifier,
                })
            })
            .collect()
    }

    pub fn ack_failed(&mut self, n: u32) -> u32 {
        self.acked = self.acked.max((n as usize).min(self.log.len()));
        self.acked as u32
    }
}

/// Compares a tracker with its model on every query; the first difference.
pub fn compare(t: &Tracker, m: &TrackerModel) -> Result<(), String> {
    if t.get_failed() != m.log.as_slice() {
        return Err(format!(
            "get_failed {:?} vs model {:?}",
            t.get_failed(),
            m.log
        ));
    }
    if t.get_acked() != &m.log[..m.acked] {
        return Err(format!(
            "get_acked {:?} vs model {:?}",
            t.get_acked(),
            &m.log[..m.acked]
        ));
    }
    if t.is_revoked() != m.revoked {
        return Err("revoked differs".into());
    }
    let mut buf = vec![RankInfo::default(); m.size as usize];
    for view in [View::Local, View::Global] {
        for bits in 0..32u8 {
            let mask = Mask::from_bits(bits).expect("valid");
            let want = m.get_state(view, mask);
            let n = t.get_num_state(view, mask) as usize;
            if n != want.len() {
                return Err(format!(
                    "get_num_state({view:?}, {bits:#x}) = {n}, model {}",
                    want.len()
                ));
            }
            let got = t
                .get_state(view, mask, &mut buf)
                .map_err(|e| e.to_string())?;
            if buf[..got] != want[..] {
                return Err(format!(
                    "get_state({view:?}, {bits:#x}) = {:?}, model {want:?}",
                    &buf[..got]
                ));
            }
        }
    }
    Ok(())
}
