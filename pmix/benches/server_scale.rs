//! How the server core scales with the ranks of one job (issue 26): 1,000, 10,000
//! and 100,000 ranks of namespace "job" on one node, every rank a simulated 4.2.2
//! client whose frames are built with pmix-wire and fed to [`Core`] in memory, no
//! sockets, no threads: each frame fed as the I/O layer would, every output
//! drained after it. Per size, the best of a few fresh jobs (5, 3, 1) for each
//! operation, timed over all ranks from the first message to the last output
//! drained (building the clients' frames is not timed):
//!
//! 1. **connect + job info**: each rank's handshake ([`Core::connect`]) then its
//!    REQ (what `PMIx_Init` asks first); the REQs alone give the median
//!    **job-info answer** (one REQ fed to its reply drained). Every reply holds
//!    every rank's blob (OpenPMIx 4.2's hash layout), n^2 bytes in all: above
//!    10,000 ranks every rank connects but only 2,000 of them, evenly spread,
//!    send their REQ, and the line scales their time to n (it says so);
//! 2. **fence**: FENCENB over `job:WILDCARD`, no directive;
//! 3. **commit 1 KB + fence collect**: each rank's COMMIT of a 1 KB byte object
//!    put GLOBAL (both buckets, as a 4.2.2 client sends it) then its FENCENB with
//!    `pmix.collect` (a 4.2 fence carries no data: the commit does);
//! 4. **direct get**: after each rank committed a small key "k" and a fence
//!    without data (neither timed), each rank's GETNB of rank (r+1) % n's "k";
//!    run before 3 so the answers carry "k" alone;
//! 5. **group construct** over `job:WILDCARD`, then **group leave** by rank 0
//!    (its reply and the `PMIX_GROUP_LEFT` event to each of the n - 1 others,
//!    every rank having registered a default handler, untimed).
//!
//! Per-rank cost is the total over n. Memory comes from a counting global
//! allocator (its two atomic updates per allocation are in every time): live
//! bytes after `add_namespace`, then after every rank connected and got its job
//! info (a sampled size: the cached blob is the only thing a REQ adds), the
//! difference over n; and the peak above the start during op 3, over n.
//!
//! The verdicts: each op's per-rank cost within 2x from 1k to 100k; the fence of
//! 100,000 ranks within 100 ms; the job-info answer's median within 50 us at each
//! size; at most 8 KB of server memory per connected client. A missed target
//! prints "NOT met"; the exit status is 0 either way.
//!
//! `cargo bench -p pmix --bench server_scale` (release); `PMIX_SCALE_SIZES=1000,5000`
//! runs those sizes once each instead.

mod common;

use std::time::{Duration, Instant};

use pmix::server::core::{ConnId, Core, CoreConfig, NamespaceSpec, Output};
use pmix_wire::frame::{Decoded, TAG_FIRST_REQUEST, next_tag};
use pmix_wire::msg::{Commit, CommitBucket, FenceNb, GetNb, GroupConstruct, GroupLeave, RegEvents};
use pmix_wire::{
    BufferType, ByteObject, ClientReply, Codec, Command, ConnectMsg, Frame, Info, Kval, Proc, Rank,
    Reply, Request, Scope, Status, Value, WStr,
};

#[global_allocator]
static ALLOC: common::counting::Counting = common::counting::Counting;

use common::counting::{live, peak, reset_peak};

const UID: u32 = 1000;
const GID: u32 = 1000;
const SIZES: [u32; 3] = [1_000, 10_000, 100_000];
/// Fresh jobs per size; each op's line is its best.
const REPEATS: [u32; 3] = [5, 3, 1];
/// The value each rank commits before its fence with data.
const DATA_BYTES: usize = 1024;
const FENCE_TARGET: Duration = Duration::from_millis(100);
const FENCE_TARGET_RANKS: u32 = 100_000;
const JOB_INFO_TARGET: Duration = Duration::from_micros(50);
const MEMORY_TARGET: f64 = 8.0 * 1024.0;

/// The operations, in the order printed (indexes of [`Run::times`]).
const OPS: [&str; 7] = [
    "connect + job info",
    "  of which connect",
    "fence",
    "commit 1 KB + fence",
    "direct get",
    "group construct",
    "group leave",
];
const CONNECT_REQ: usize = 0;
const CONNECT: usize = 1;
const FENCE: usize = 2;
const FENCE_DATA: usize = 3;
const GET: usize = 4;
const CONSTRUCT: usize = 5;
const LEAVE: usize = 6;

/// A flag-0 connect message from a 4.2.2 client of "job", through the wire.
fn connect_msg(rank: u32) -> ConnectMsg {
    common::connect_msg(rank, UID, GID)
}

/// What one op's outputs were.
#[derive(Default)]
struct Drained {
    /// Replies (frames on a request tag).
    replies: usize,
    /// Events (frames on tag 0).
    events: usize,
    /// Closes, launcher and host outputs.
    other: usize,
    /// The last reply's payload.
    last: Vec<u8>,
}

impl Drained {
    fn take(&mut self, core: &mut Core) {
        while let Some(o) = core.poll_output() {
            match o {
                Output::Send { bytes, .. } => {
                    let tag = u32::from_be_bytes(bytes[4..8].try_into().expect("header"));
                    if tag == pmix_wire::frame::TAG_EVENT {
                        self.events += 1;
                    } else {
                        self.replies += 1;
                        self.last = bytes;
                    }
                }
                Output::Host(_) => {}
                _ => self.other += 1,
            }
        }
    }

    /// The last reply, decoded as an answer to `cmd`.
    fn last_reply(&self, cmd: Command, codec: &Codec) -> Reply {
        pmix_wire::decode_reply(cmd, &self.last[16..], codec).expect("reply")
    }
}

/// A job of `n` ranks being served, and what its clients share.
struct Job {
    core: Core,
    n: u32,
    codec: Codec,
    /// The tag of the clients' last request (every rank sends the same sequence).
    tag: u32,
}

/// What connecting a job cost.
struct Connected {
    job: Job,
    /// Every rank's connect.
    connects: Duration,
    /// Every rank's REQ (scaled from the sample where only some were asked).
    job_info: Duration,
    /// How many ranks sent their REQ.
    asked: u32,
    /// The median REQ, fed to reply drained.
    median: Duration,
    /// The bytes of a REQ reply.
    reply_bytes: usize,
    /// Live bytes the core grew by: registering the namespace, then connecting
    /// and answering every rank.
    namespace_bytes: usize,
    client_bytes: usize,
}

/// Above this many ranks, only [`JOB_INFO_SAMPLE`] of them, evenly spread, send
/// their REQ: each reply holds every rank's blob, so answering all of them costs
/// n^2 bytes (100,000 ranks: some 15 MB per reply, minutes in all).
const FULL_JOB_INFO_MAX: u32 = 10_000;
const JOB_INFO_SAMPLE: u32 = 2_000;

/// A fresh core serving "job" of `n` ranks, every rank connected, and every rank
/// (or a sample of them, see [`FULL_JOB_INFO_MAX`]) answered its REQ.
fn connect(n: u32) -> Connected {
    let msgs: Vec<ConnectMsg> = (0..n).map(connect_msg).collect();
    let codec = ConnectMsg::codec(&msgs[0], Default::default()).expect("codec");
    let req = Request::Req.encode(&codec).expect("REQ");
    let tag = TAG_FIRST_REQUEST;
    let step = if n > FULL_JOB_INFO_MAX {
        n / JOB_INFO_SAMPLE
    } else {
        1
    };
    let frames: Vec<Frame> = (0..n)
        .map(|r| Frame::new(r as i32, tag, req.clone()).expect("frame"))
        .collect();
    let mut latencies = Vec::with_capacity(n as usize);
    let mut out = Drained::default();
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    cfg.max_conns = n as usize + 16;
    let spec = NamespaceSpec::single_node("job", n, UID, GID);
    let before = live();
    let mut core = Core::new(cfg);
    core.add_namespace(spec).expect("namespace");
    let registered = live();
    let now = Instant::now();
    let mut connects = Duration::ZERO;
    for (r, (msg, frame)) in msgs.iter().zip(&frames).enumerate() {
        let t = Instant::now();
        let reply = core
            .connect(r as ConnId, msg, UID, now)
            .expect("connect refused");
        let Decoded::Item { item, .. } = ClientReply::decode(&reply) else {
            panic!("short handshake reply")
        };
        drop(reply);
        out.take(&mut core);
        connects += t.elapsed();
        assert_eq!(item.index as usize, r, "pindex in connect order");
        if (r as u32).is_multiple_of(step) {
            let t = Instant::now();
            core.frame(r as ConnId, frame, now);
            out.take(&mut core);
            latencies.push(t.elapsed());
        }
    }
    // `out.last` (one blob) is the bench's, not the core's.
    let client_bytes = live() - registered - out.last.capacity();
    let asked = latencies.len() as u32;
    assert_eq!(out.replies, asked as usize, "one REQ reply per rank asking");
    assert!(matches!(
        out.last_reply(Command::Req, &codec),
        Reply::Req(_)
    ));
    let job_info = latencies.iter().sum::<Duration>() * n / asked;
    latencies.sort_unstable();
    Connected {
        job: Job {
            core,
            n,
            codec,
            tag,
        },
        connects,
        job_info,
        asked,
        median: latencies[latencies.len() / 2],
        reply_bytes: out.last.len(),
        namespace_bytes: registered - before,
        client_bytes,
    }
}

impl Job {
    /// Every rank's frame of `req(r)`, on the clients' next tag.
    fn frames(&mut self, req: impl Fn(u32) -> Request) -> Vec<Frame> {
        self.tag = next_tag(self.tag);
        (0..self.n)
            .map(|r| {
                let payload = req(r).encode(&self.codec).expect("request");
                Frame::new(r as i32, self.tag, payload).expect("frame")
            })
            .collect()
    }

    /// Every rank's frame of the same `req`, on the clients' next tag.
    fn same_frames(&mut self, req: &Request) -> Vec<Frame> {
        self.tag = next_tag(self.tag);
        let payload = req.encode(&self.codec).expect("request");
        (0..self.n)
            .map(|r| Frame::new(r as i32, self.tag, payload.clone()).expect("frame"))
            .collect()
    }

    /// Feeds each rank's frames of every list in turn (rank 0's of each list, then
    /// rank 1's, …), draining after each frame.
    fn feed(&mut self, lists: &[&[Frame]]) -> (Duration, Drained) {
        let mut out = Drained::default();
        let now = Instant::now();
        let start = Instant::now();
        for r in 0..self.n as usize {
            for list in lists {
                self.core.frame(r as ConnId, &list[r], now);
                out.take(&mut self.core);
            }
        }
        (start.elapsed(), out)
    }

    /// Every rank's fence over the job, with `info`; checks the replies.
    fn fence(&mut self, info: Vec<Info>) -> (Duration, Drained) {
        let frames = self.same_frames(&fence_req(info));
        let (t, out) = self.feed(&[&frames]);
        self.expect_status(&out, Command::FenceNb, self.n as usize);
        (t, out)
    }

    /// `replies` lone STATUS 0 replies, the last decoded as one to `cmd`.
    fn expect_status(&self, out: &Drained, cmd: Command, replies: usize) {
        assert_eq!(out.replies, replies, "{cmd:?} replies");
        assert_eq!(out.other, 0, "{cmd:?}: no close");
        match out.last_reply(cmd, &self.codec) {
            Reply::Status { status, .. } => assert_eq!(status, Status::SUCCESS, "{cmd:?}"),
            other => panic!("{cmd:?}: {other:?}"),
        }
    }
}

fn wildcard() -> Vec<Proc> {
    vec![Proc::new("job", Rank::WILDCARD.0)]
}

fn fence_req(info: Vec<Info>) -> Request {
    Request::FenceNb(FenceNb {
        procs: wildcard(),
        info,
    })
}

/// A 4.2.2 client's COMMIT of `kvals` put GLOBAL: the same values in the LOCAL
/// bucket and the REMOTE one.
fn commit_req(kvals: Vec<Kval>, ty: BufferType) -> Request {
    let bucket = |scope| CommitBucket {
        scope,
        buffer_type: ty,
        kvals: kvals.clone(),
    };
    Request::Commit(Commit {
        buckets: vec![bucket(Scope::LOCAL), bucket(Scope::REMOTE)],
    })
}

/// One size's measures of one run.
#[derive(Clone, Copy)]
struct Run {
    /// Per op of [`OPS`].
    times: [Duration; 7],
    /// The median job-info answer.
    median: Duration,
    /// How many ranks sent their REQ.
    asked: u32,
    /// The bytes of a REQ reply.
    reply_bytes: usize,
    namespace_bytes: usize,
    client_bytes: usize,
    /// Above the start, during op 3.
    fence_peak: usize,
}

fn run(n: u32) -> Run {
    let c = connect(n);
    let mut job = c.job;
    let mut times = [Duration::ZERO; 7];
    times[CONNECT_REQ] = c.connects + c.job_info;
    times[CONNECT] = c.connects;
    // 2. fence, no data.
    times[FENCE] = job.fence(Vec::new()).0;
    // 4. "k" committed, a fence, then each rank's get of the next rank's "k".
    let ty = job.codec.buffer_type;
    let commits = job.frames(|r| commit_req(vec![Kval::new("k", r)], ty));
    let (_, out) = job.feed(&[&commits]);
    job.expect_status(&out, Command::Commit, n as usize);
    drop(commits);
    job.fence(Vec::new());
    let gets = job.frames(|r| {
        Request::GetNb(GetNb {
            nspace: WStr::from("job"),
            rank: Rank((r + 1) % n),
            info: Vec::new(),
            key: Some(WStr::from("k")),
        })
    });
    let (t, out) = job.feed(&[&gets]);
    assert_eq!(out.replies, n as usize, "one get reply per rank");
    match out.last_reply(Command::GetNb, &job.codec) {
        Reply::GetNb(g) => {
            assert_eq!(g.data.len(), 1);
            assert_eq!(
                g.data[0].kvals,
                vec![Kval::new("k", 0u32)],
                "rank 0's k alone"
            );
        }
        other => panic!("get: {other:?}"),
    }
    times[GET] = t;
    drop(gets);
    // 3. a 1 KB commit and a fence with collect, rank by rank.
    let commits = job.frames(|r| {
        let data = (0..DATA_BYTES).map(|i| (i as u32 ^ r) as u8).collect();
        commit_req(
            vec![Kval::new("blob", Value::ByteObject(ByteObject(data)))],
            ty,
        )
    });
    let fences = job.same_frames(&fence_req(vec![Info::new("pmix.collect", true)]));
    let base = reset_peak();
    let (t, out) = job.feed(&[&commits, &fences]);
    let fence_peak = peak() - base;
    assert_eq!(
        out.replies,
        2 * n as usize,
        "a commit and a fence reply per rank"
    );
    job.expect_status(&out, Command::FenceNb, 2 * n as usize);
    times[FENCE_DATA] = t;
    drop((commits, fences));
    // 5. a group over the job, then rank 0 leaves it.
    let regs = job.same_frames(&Request::RegEvents(RegEvents {
        codes: Vec::new(),
        info: Vec::new(),
    }));
    let (_, out) = job.feed(&[&regs]);
    job.expect_status(&out, Command::RegEvents, n as usize);
    drop(regs);
    let constructs = job.same_frames(&Request::GroupConstruct(GroupConstruct {
        grp: "bench".into(),
        procs: wildcard(),
        info: Vec::new(),
    }));
    let (t, out) = job.feed(&[&constructs]);
    assert_eq!(out.replies, n as usize, "one construct reply per rank");
    times[CONSTRUCT] = t;
    drop(constructs);
    let leave = job.same_frames(&Request::GroupLeave(GroupLeave {
        grp: "bench".into(),
        info: Vec::new(),
    }));
    let mut out = Drained::default();
    let start = Instant::now();
    job.core.frame(0, &leave[0], Instant::now());
    out.take(&mut job.core);
    times[LEAVE] = start.elapsed();
    assert_eq!(out.replies, 1, "the leaver's reply");
    assert_eq!(
        out.events,
        n as usize - 1,
        "PMIX_GROUP_LEFT to every other member"
    );
    Run {
        times,
        median: c.median,
        asked: c.asked,
        reply_bytes: c.reply_bytes,
        namespace_bytes: c.namespace_bytes,
        client_bytes: c.client_bytes,
        fence_peak,
    }
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

fn per_rank(t: Duration, n: u32) -> f64 {
    t.as_nanos() as f64 / f64::from(n)
}

fn thousands(n: u32) -> String {
    match n {
        n if n >= 1000 && n.is_multiple_of(1000) => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// The sizes and runs per size: [`SIZES`] and [`REPEATS`], or one run of each
/// size `PMIX_SCALE_SIZES` lists (comma-separated).
fn plan() -> Vec<(u32, u32)> {
    match std::env::var("PMIX_SCALE_SIZES") {
        Ok(s) => s
            .split(',')
            .map(|n| (n.trim().parse().expect("PMIX_SCALE_SIZES: rank counts"), 1))
            .collect(),
        Err(_) => SIZES.into_iter().zip(REPEATS).collect(),
    }
}

fn main() {
    let mut results: Vec<(u32, Run)> = Vec::new();
    for (n, reps) in plan() {
        // The best of `reps` fresh jobs, op by op: the machine is shared, a
        // preempted run says nothing of the core.
        let mut best: Option<Run> = None;
        for _ in 0..reps {
            let r = run(n);
            best = Some(match best {
                None => r,
                Some(mut b) => {
                    for (bt, t) in b.times.iter_mut().zip(r.times) {
                        *bt = (*bt).min(t);
                    }
                    b.median = b.median.min(r.median);
                    b.client_bytes = b.client_bytes.min(r.client_bytes);
                    b.fence_peak = b.fence_peak.min(r.fence_peak);
                    b
                }
            });
        }
        if let Some(b) = best {
            results.push((n, b));
        }
    }

    println!(
        "{:<22} {:>7} {:>12} {:>12}  per-rank growth",
        "op", "ranks", "total ms", "ns/rank"
    );
    for (i, op) in OPS.iter().enumerate() {
        let mut prev: Option<(u32, f64)> = None;
        for (n, r) in &results {
            let pr = per_rank(r.times[i], *n);
            let growth = prev.map_or("-".to_string(), |(pn, p)| {
                format!("x{:.2} from {}", pr / p, thousands(pn))
            });
            let sampled = if i == CONNECT_REQ && r.asked < *n {
                format!("  (REQ of {} ranks, scaled to all)", r.asked)
            } else {
                String::new()
            };
            println!(
                "{op:<22} {n:>7} {:>12.3} {pr:>12.1}  {growth}{sampled}",
                ms(r.times[i])
            );
            prev = Some((*n, pr));
        }
    }
    for (n, r) in &results {
        println!(
            "job-info answer        {n:>7} {:>12.3} us median (one REQ to its reply drained; \
             reply {} bytes)",
            r.median.as_secs_f64() * 1e6,
            r.reply_bytes
        );
    }
    for (n, r) in &results {
        println!(
            "memory                 {n:>7} {:>9.0} B/client connected, namespace {:.0} B/rank, \
             peak during op 3 {:.0} B/rank",
            r.client_bytes as f64 / f64::from(*n),
            r.namespace_bytes as f64 / f64::from(*n),
            r.fence_peak as f64 / f64::from(*n)
        );
    }

    println!("verdicts:");
    let (first, last) = (results.first(), results.last());
    for (i, op) in OPS.iter().enumerate() {
        let line = match (first, last) {
            (Some((n0, r0)), Some((n1, r1))) if n1 > n0 => {
                let g = per_rank(r1.times[i], *n1) / per_rank(r0.times[i], *n0);
                format!(
                    "{} (x{g:.2} from {} to {})",
                    verdict(g <= 2.0),
                    thousands(*n0),
                    thousands(*n1)
                )
            }
            _ => "not measured".to_string(),
        };
        println!("  per-rank cost flat within 2x, {}: {line}", op.trim());
    }
    let fence = results.iter().find(|(n, _)| *n == FENCE_TARGET_RANKS);
    println!(
        "  fence of 100,000 ranks <= 100 ms: {}",
        fence.map_or("not measured".to_string(), |(_, r)| format!(
            "{} ({:.3} ms)",
            verdict(r.times[FENCE] <= FENCE_TARGET),
            ms(r.times[FENCE])
        ))
    );
    let worst = results.iter().map(|(_, r)| r.median).max();
    println!(
        "  job-info answer <= 50 us (median, each size): {}",
        worst.map_or("not measured".to_string(), |w| format!(
            "{} (worst {:.3} us)",
            verdict(w <= JOB_INFO_TARGET),
            w.as_secs_f64() * 1e6
        ))
    );
    let worst = results
        .iter()
        .map(|(n, r)| r.client_bytes as f64 / f64::from(*n))
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    println!(
        "  server memory <= 8 KB per connected client: {}",
        worst.map_or("not measured".to_string(), |w| format!(
            "{} (worst {w:.0} B)",
            verdict(w <= MEMORY_TARGET)
        ))
    );
}
