//! The node store's segments (issue 36, docs/serving.md §5) beside today's path, for
//! a job of 1,000, 10,000 and 100,000 ranks on one node.
//!
//! Today: the server core ([`Core`]) registers the job
//! (`NamespaceSpec::single_node`) and answers one client's REQ with the job-info
//! blob (every rank's `pmix.pblob`, docs/wire.md §6.1.1); a client decodes it at
//! init ([`pmix_wire::decode_reply`]) and answers a get from its store
//! ([`pmix::Client::get_local`], on a client of an in-memory job: [`pmix::sim`]).
//!
//! The store: the same items filed into one segment ([`SegmentBuilder`], timed from
//! the decoded entries, as a server that holds them would write it), sealed in a
//! memfd and mapped ([`pmix::os::seal_segment`], [`pmix::os::Mapping`]), checked
//! ([`Segment::parse`], what a client's init would do instead of decoding), then
//! read: a job-level key (`pmix.job.size`) decoded as a [`Value`] and as a `u32`
//! (no allocation), and a peer's key (rank n/2's `pmix.lrank`).
//!
//! Each get's time is the median of 101 batches of 1,000 gets. Targets (printed,
//! met or not): a job-level key within 200 ns, a peer's key within 1 us, segment
//! bytes within 1.2x the blob's. The exit status is 0 either way.
//!
//! `cargo bench -p pmix --bench nodestore`; `PMIX_NODESTORE_SIZES=1000,5000` runs
//! those sizes instead.

mod common;

use std::hint::black_box;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use pmix::os::{Mapping, seal_segment};
use pmix::server::core::{Core, CoreConfig, NamespaceSpec, Output};
use pmix_wire::frame::{Decoded, TAG_FIRST_REQUEST};
use pmix_wire::msg::JobInfo;
use pmix_wire::nodestore::{Segment, SegmentBuilder, WILDCARD};
use pmix_wire::{ClientReply, Command, ConnectMsg, Frame, Reply, Request, Value, keys};

const UID: u32 = 1000;
const GID: u32 = 1000;
const SIZES: [u32; 3] = [1_000, 10_000, 100_000];
const JOB_TARGET: Duration = Duration::from_nanos(200);
const PEER_TARGET: Duration = Duration::from_micros(1);
const BYTES_TARGET: f64 = 1.2;
const BATCH: u32 = 1_000;
const BATCHES: usize = 101;

/// The median over [`BATCHES`] batches of [`BATCH`] calls of `f`, per call.
fn median(mut f: impl FnMut()) -> Duration {
    for _ in 0..BATCH {
        f();
    }
    let mut t: Vec<Duration> = (0..BATCHES)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..BATCH {
                f();
            }
            s.elapsed() / BATCH
        })
        .collect();
    t.sort_unstable();
    t[BATCHES / 2]
}

/// The best of `runs` timings of `f`.
fn best<T>(runs: u32, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let s = Instant::now();
        let v = f();
        best = best.min(s.elapsed());
        out = Some(v);
    }
    (best, out.expect("at least one run"))
}

/// The REQ reply's payload a 4.2.2 client of a job of `n` ranks on one node gets.
fn job_info_blob(n: u32) -> (Vec<u8>, pmix_wire::Codec) {
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    cfg.max_conns = 16;
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node("job", n, UID, GID))
        .expect("namespace");
    let msg: ConnectMsg = common::connect_msg(0, UID, GID);
    let codec = ConnectMsg::codec(&msg, Default::default()).expect("codec");
    let now = Instant::now();
    let reply = core.connect(0, &msg, UID, now).expect("connect");
    assert!(matches!(ClientReply::decode(&reply), Decoded::Item { .. }));
    let req = Request::Req.encode(&codec).expect("REQ");
    core.frame(
        0,
        &Frame::new(0, TAG_FIRST_REQUEST, req).expect("frame"),
        now,
    );
    let mut blob = None;
    while let Some(o) = core.poll_output() {
        if let Output::Send { bytes, .. } = o {
            blob = Some(bytes[16..].to_vec());
        }
    }
    (blob.expect("a REQ reply"), codec)
}

fn decode(blob: &[u8], codec: &pmix_wire::Codec) -> JobInfo {
    match pmix_wire::decode_reply(Command::Req, blob, codec).expect("job info") {
        Reply::Req(j) => j,
        other => panic!("not a job-info reply: {other:?}"),
    }
}

/// The entries a server holding the job information files (what
/// [`SegmentBuilder::push_job_info`] files, read back from its segment: the job
/// record, then rank by rank), decoded beforehand.
fn entries(job: &JobInfo) -> Vec<(u32, String, Value)> {
    let mut b = SegmentBuilder::new("job", 0).expect("namespace");
    b.push_job_info(job).expect("job info");
    let bytes = b.finish().expect("segment");
    let seg = Segment::parse(&bytes[..]).expect("parse");
    let mut out = Vec::new();
    for rank in std::iter::once(WILDCARD).chain(seg.ranks()) {
        if let Some(rec) = seg.record(rank) {
            for (key, _) in rec.iter() {
                let v = rec.get(key).expect("key").expect("value");
                out.push((rank, key.to_owned(), v));
            }
        }
    }
    out
}

struct Row {
    n: u32,
    blob: usize,
    seg: usize,
    build: Duration,
    from_blob: Duration,
    seal_map: Duration,
    parse: Duration,
    lazy: Duration,
    decode: Duration,
    job_get: Duration,
    job_u32: Duration,
    job_store: Duration,
    peer_get: Duration,
    peer_raw: Duration,
    peer_store: Duration,
}

fn measure(n: u32) -> Row {
    let runs = if n >= 100_000 { 3 } else { 5 };
    let (blob, codec) = job_info_blob(n);
    let (decode_t, job) = best(runs, || decode(&blob, &codec));
    let list = entries(&job);
    let (build, bytes) = best(runs, || {
        let mut b = SegmentBuilder::new("job", 0).expect("namespace");
        for (r, k, v) in &list {
            b.push(*r, k, v).expect("entry");
        }
        b.finish().expect("segment")
    });
    let (from_blob, _) = best(runs, || {
        let mut b = SegmentBuilder::new("job", 0).expect("namespace");
        b.push_job_info(&job).expect("job info");
        b.finish().expect("segment")
    });
    let (seal_map, map) = best(runs, || {
        let fd = seal_segment("job.0", &bytes).expect("memfd");
        Mapping::sealed(fd.as_fd()).expect("map")
    });
    let (parse, _) = best(runs, || Segment::parse(&*map).expect("parse").rank_count());
    let (lazy, _) = best(runs, || {
        Segment::parse_lazy(&*map).expect("parse_lazy").rank_count()
    });
    let seg = Segment::parse(&*map).expect("parse");
    let peer = n / 2;
    assert_eq!(seg.get_u32(WILDCARD, keys::JOB_SIZE), Some(Ok(n)));
    assert_eq!(seg.get_u32(peer, keys::LOCAL_RANK), Some(Ok(peer % 65_536)));
    let job_get = median(|| {
        black_box(seg.get(black_box(WILDCARD), black_box(keys::JOB_SIZE)));
    });
    let job_u32 = median(|| {
        black_box(seg.get_u32(black_box(WILDCARD), black_box(keys::JOB_SIZE)));
    });
    let peer_get = median(|| {
        black_box(seg.get(black_box(peer), black_box(keys::LOCAL_RANK)));
    });
    let lrank = seg.key_id(keys::LOCAL_RANK).expect("key");
    let peer_raw = median(|| {
        black_box(seg.raw_by_id(black_box(peer), lrank));
    });
    // Today's store, on a client of an in-memory job of the same size.
    let sim = pmix::sim::Job::single_node("job", n).expect("job");
    let client = sim.client("job", 0, |_| {}).expect("client");
    let want = client.get_local("job", WILDCARD, keys::JOB_SIZE);
    assert!(
        matches!(want, Some(Ok(Value::Uint32(v))) if v == n),
        "{want:?}"
    );
    let job_store = median(|| {
        black_box(client.get_local("job", black_box(WILDCARD), black_box(keys::JOB_SIZE)));
    });
    let want = client.get_local("job", peer, keys::LOCAL_RANK);
    assert_eq!(
        want.and_then(Result::ok).as_ref(),
        seg.get(peer, keys::LOCAL_RANK)
            .and_then(Result::ok)
            .as_ref(),
        "the same answer from both"
    );
    let peer_store = median(|| {
        black_box(client.get_local("job", black_box(peer), black_box(keys::LOCAL_RANK)));
    });
    Row {
        n,
        blob: blob.len(),
        seg: bytes.len(),
        build,
        from_blob,
        seal_map,
        parse,
        lazy,
        decode: decode_t,
        job_get,
        job_u32,
        job_store,
        peer_get,
        peer_raw,
        peer_store,
    }
}

fn us(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

fn ns(d: Duration) -> String {
    format!("{} ns", d.as_nanos())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

fn main() {
    let sizes: Vec<u32> = match std::env::var("PMIX_NODESTORE_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => SIZES.to_vec(),
    };
    let rows: Vec<Row> = sizes.iter().map(|&n| measure(n)).collect();
    println!("node store segments (issue 36): one job on one node, our server's job information");
    println!();
    println!(
        "{:>8} | {:>11} {:>11} {:>6} {:>7} | {:>10} {:>10} {:>10} {:>10} {:>10} | {:>11}",
        "ranks",
        "blob B",
        "segment B",
        "ratio",
        "target",
        "build",
        "+ decode",
        "seal+map",
        "parse",
        "lazy",
        "blob decode"
    );
    for r in &rows {
        let ratio = r.seg as f64 / r.blob as f64;
        println!(
            "{:>8} | {:>11} {:>11} {:>5.2}x {:>7} | {:>10} {:>10} {:>10} {:>10} {:>10} | {:>11}",
            r.n,
            r.blob,
            r.seg,
            ratio,
            verdict(ratio <= BYTES_TARGET),
            us(r.build),
            us(r.from_blob),
            us(r.seal_map),
            us(r.parse),
            us(r.lazy),
            us(r.decode),
        );
    }
    println!();
    println!(
        "  build: the segment from the decoded entries; + decode: from the job info, \
         blobs decoded (push_job_info);"
    );
    println!(
        "  parse: Segment::parse of the mapping; lazy: Segment::parse_lazy (what our \
         client's init does, instead of the blob decode of a client sent the job)"
    );
    println!();
    println!(
        "{:>8} | {:>24} {:>10} {:>14} {:>8} | {:>24} {:>10} {:>14} {:>8}",
        "ranks",
        "job-level: segment get",
        "get_u32",
        "Store (today)",
        "<=200ns",
        "rank n/2: segment get",
        "raw_by_id",
        "Store (today)",
        "<=1us"
    );
    for r in &rows {
        println!(
            "{:>8} | {:>24} {:>10} {:>14} {:>8} | {:>24} {:>10} {:>14} {:>8}",
            r.n,
            ns(r.job_get),
            ns(r.job_u32),
            ns(r.job_store),
            verdict(r.job_get <= JOB_TARGET && r.job_u32 <= JOB_TARGET),
            ns(r.peer_get),
            ns(r.peer_raw),
            ns(r.peer_store),
            verdict(r.peer_get <= PEER_TARGET),
        );
    }
    println!();
    println!(
        "  medians of {BATCHES} batches of {BATCH} gets: pmix.job.size (WILDCARD) and rank \
         n/2's pmix.lrank; Store: Client::get_local"
    );
}
