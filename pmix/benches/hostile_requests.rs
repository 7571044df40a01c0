//! The most one request can cost the server (issue 34: fair service). A job of 8
//! ranks is served by a [`Core`] in memory (no sockets, no threads), ranks 1..7
//! each with a default event handler; rank 0 then sends, one at a time, the
//! largest request of each kind the server's default limits admit: lists as long
//! as `max_procs` (the server's bound for this job: 65,536 processes) or
//! `max_count` (1,048,576 elements), values as large as `max_frame` (64 MiB)
//! allows. For each: the frame's bytes, the server's time from the frame to its
//! last output drained (decoding included: the core decodes the payload), the
//! peak of memory live above the start (a counting global allocator), the bytes
//! it queued for all peers, and the status it answered.
//!
//! This is the bound on how long one connection's request can hold the server
//! thread (what every other rank's fence waits behind at most), and on what one
//! request can make the server allocate. The verdict: every request within
//! 250 ms, within 4 times its own frame's bytes of memory plus 32 MiB, and queuing
//! at most one copy of itself (of at most the 1 MiB an event may take) for each
//! peer it reaches. A missed target prints "NOT met"; the exit status is 0 either
//! way.
//!
//! `cargo bench -p pmix --bench hostile_requests` (release; about 20 s here).

mod common;

use std::time::{Duration, Instant};

use pmix::server::core::{ConnId, Core, CoreConfig, NamespaceSpec, Output};
use pmix_wire::frame::{TAG_FIRST_REQUEST, next_tag};
use pmix_wire::msg::{
    Commit, CommitBucket, FenceNb, GetNb, GroupConstruct, Lookup, Notify, Publish, RegEvents,
};
use pmix_wire::{
    BufferType, ByteObject, Codec, Command, DataRange, Frame, Info, Kval, Proc, Rank, Reply,
    Request, Scope, Status, Uint32, Value, WStr,
};

#[global_allocator]
static ALLOC: common::counting::Counting = common::counting::Counting;

use common::counting::{peak, reset_peak};

const UID: u32 = 1000;
const GID: u32 = 1000;
/// The job's ranks.
const RANKS: u32 = 8;

/// What one request cost.
struct Cost {
    frame_bytes: usize,
    time: Duration,
    peak: usize,
    queued: usize,
    /// What rank 0 got: a status, data, "closed" (the request refused as it
    /// decoded) or "none" (held: a fence or construct waiting for the others).
    answer: String,
}

/// A core serving "job" of [`RANKS`] ranks, all connected, ranks 1.. registered
/// for every event.
struct Served {
    core: Core,
    codec: Codec,
    tag: u32,
}

impl Served {
    fn new() -> Served {
        let cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
        let mut core = Core::new(cfg);
        core.add_namespace(NamespaceSpec::single_node("job", RANKS, UID, GID))
            .expect("namespace");
        let now = Instant::now();
        let mut codec = None;
        for r in 0..RANKS {
            let msg = common::connect_msg(r, UID, GID);
            codec.get_or_insert_with(|| msg.codec(Default::default()).expect("codec"));
            core.connect(ConnId::from(r), &msg, UID, now)
                .expect("connect");
        }
        let mut s = Served {
            core,
            codec: codec.expect("a codec"),
            tag: TAG_FIRST_REQUEST,
        };
        s.drain(0, Command::Req);
        let reg = Request::RegEvents(RegEvents {
            codes: vec![],
            info: vec![],
        });
        for r in 1..RANKS {
            let f = s.frame(r, &reg);
            s.core.frame(ConnId::from(r), &f, now);
        }
        s.drain(0, Command::Req);
        s
    }

    fn frame(&mut self, rank: u32, req: &Request) -> Frame {
        self.tag = next_tag(self.tag);
        let payload = req.encode(&self.codec).expect("encode");
        Frame::new(rank as i32, self.tag, payload).expect("frame")
    }

    /// Drains the outputs: the bytes queued, and what conn 0 got on `tag` (its
    /// reply to `cmd`'s status, or that it was closed).
    fn drain(&mut self, tag: u32, cmd: Command) -> (usize, String) {
        let (mut queued, mut answer) = (0, "none".to_string());
        while let Some(o) = self.core.poll_output() {
            match o {
                Output::Send { conn, bytes } => {
                    queued += bytes.len();
                    let t = u32::from_be_bytes(bytes[4..8].try_into().expect("header"));
                    if conn == 0 && t == tag {
                        answer = match pmix_wire::decode_reply(cmd, &bytes[16..], &self.codec) {
                            Ok(Reply::Status { status, .. }) => status_name(status),
                            Ok(_) => "data".to_string(),
                            Err(e) => format!("undecodable ({e})"),
                        };
                    }
                }
                Output::Close { conn: 0 } => answer = "closed".to_string(),
                _ => {}
            }
        }
        (queued, answer)
    }

    /// Rank 0 sends `req`: what it cost.
    fn cost(&mut self, req: &Request, cmd: Command) -> Cost {
        let f = self.frame(0, req);
        let frame_bytes = f.payload.len() + 16;
        let base = reset_peak();
        let t = Instant::now();
        self.core.frame(0, &f, Instant::now());
        let (queued, answer) = self.drain(f.header.tag, cmd);
        let time = t.elapsed();
        let peak = peak().saturating_sub(base);
        Cost {
            frame_bytes,
            time,
            peak,
            queued,
            answer,
        }
    }
}

fn status_name(s: Status) -> String {
    match s {
        Status::SUCCESS => "SUCCESS".into(),
        Status::ERR_OUT_OF_RESOURCE => "OUT_OF_RESOURCE".into(),
        Status::ERR_BAD_PARAM => "BAD_PARAM".into(),
        Status::ERR_NOT_FOUND => "NOT_FOUND".into(),
        other => other.0.to_string(),
    }
}

/// `n` processes of "job", its ranks in turn.
fn procs(n: usize) -> Vec<Proc> {
    (0..n).map(|i| Proc::new("job", i as u32 % RANKS)).collect()
}

fn infos(n: usize) -> Vec<Info> {
    (0..n)
        .map(|i| Info::new(format!("h.{i}").as_str(), i as u32))
        .collect()
}

fn blob(bytes: usize) -> Value {
    Value::ByteObject(ByteObject(vec![0x5a; bytes]))
}

/// The requests: each the largest of its kind the default limits admit, then
/// some past them (refused as they decode).
fn cases() -> Vec<(&'static str, Command, Request)> {
    const PROCS: usize = 1 << 16;
    const LIST: usize = 1 << 16;
    const OVER: usize = 1 << 20;
    let big = 60 << 20;
    let commit = |kvals: Vec<Kval>| {
        Request::Commit(Commit {
            buckets: vec![CommitBucket {
                scope: Scope::GLOBAL,
                buffer_type: BufferType::NonDescribed,
                kvals,
            }],
        })
    };
    let keys = |n: usize| -> Vec<Kval> {
        (0..n)
            .map(|i| Kval::new(format!("k{i}").as_str(), i as u32))
            .collect()
    };
    let get = |info: Vec<Info>| {
        Request::GetNb(GetNb {
            nspace: WStr::from("job"),
            rank: Rank(1),
            info,
            key: Some(WStr::from("nothing")),
        })
    };
    let array = |n: usize| {
        let values = (0..n as u32).map(Value::Uint32).collect();
        let a = pmix_wire::DataArray::new(pmix_wire::DataType::Uint32, values);
        vec![Info::new("h.array", Value::DataArray(a.expect("an array")))]
    };
    let notify = |info: Vec<Info>| {
        Request::Notify(Notify {
            status: Status(-3007),
            range: DataRange::GLOBAL,
            info,
        })
    };
    let lookup_keys = |n: usize| -> Vec<WStr> {
        (0..n)
            .map(|i| WStr::from(format!("h.{i}").as_str()))
            .collect()
    };
    vec![
        (
            "FENCENB naming 65,536 procs",
            Command::FenceNb,
            Request::FenceNb(FenceNb {
                procs: procs(PROCS),
                info: vec![],
            }),
        ),
        (
            "GROUP construct of 65,536 procs",
            Command::GroupConstruct,
            Request::GroupConstruct(GroupConstruct {
                grp: WStr::from("hostile"),
                procs: procs(PROCS),
                info: vec![],
            }),
        ),
        ("COMMIT of 65,536 keys", Command::Commit, commit(keys(LIST))),
        (
            "COMMIT of one 60 MiB value",
            Command::Commit,
            commit(vec![Kval::new("big", blob(big))]),
        ),
        ("GETNB with 65,536 infos", Command::GetNb, get(infos(LIST))),
        (
            "GETNB with one info of 65,536 values",
            Command::GetNb,
            get(array(LIST)),
        ),
        (
            "NOTIFY of a 1 MiB value to 7 ranks",
            Command::Notify,
            notify(vec![Info::new("h.blob", blob((1 << 20) - 64))]),
        ),
        (
            "NOTIFY of a 60 MiB value to 7 ranks",
            Command::Notify,
            notify(vec![Info::new("h.blob", blob(big))]),
        ),
        (
            "NOTIFY of 65,536 infos to 7 ranks",
            Command::Notify,
            notify(infos(LIST)),
        ),
        (
            "PUBLISH of 65,536 keys",
            Command::PublishNb,
            Request::Publish(Publish {
                uid: Uint32(UID),
                info: infos(LIST),
            }),
        ),
        (
            "LOOKUP of 65,536 keys",
            Command::LookupNb,
            Request::Lookup(Lookup {
                uid: Uint32(UID),
                keys: lookup_keys(LIST),
                info: vec![],
            }),
        ),
        (
            "REGEVENTS of 65,536 codes",
            Command::RegEvents,
            Request::RegEvents(RegEvents {
                codes: (0..LIST).map(|i| Status(-10_000 - i as i32)).collect(),
                info: vec![],
            }),
        ),
        (
            "over: COMMIT of 1,048,576 keys",
            Command::Commit,
            commit(keys(OVER)),
        ),
        (
            "over: GETNB with 1,048,576 infos",
            Command::GetNb,
            get(infos(OVER)),
        ),
        (
            "over: GETNB with one info of 1,048,576 values",
            Command::GetNb,
            get(array(OVER)),
        ),
        (
            "over: LOOKUP of 1,048,576 keys",
            Command::LookupNb,
            Request::Lookup(Lookup {
                uid: Uint32(UID),
                keys: lookup_keys(OVER),
                info: vec![],
            }),
        ),
    ]
}

fn mib(b: usize) -> f64 {
    b as f64 / f64::from(1 << 20)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    println!("The largest request of each kind the default limits admit, sent by rank 0 of 8");
    println!("| request | frame MiB | server ms | peak MiB | queued MiB | answer | verdict |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
    let mut worst = Duration::ZERO;
    for (what, cmd, req) in cases() {
        // A fresh job each time: one request's leftovers are not the next one's.
        let mut s = Served::new();
        let c = s.cost(&req, cmd);
        drop(req);
        worst = worst.max(c.time);
        let peers = (RANKS - 1) as usize;
        let met = c.time <= Duration::from_millis(250)
            && c.peak <= 4 * c.frame_bytes + (32 << 20)
            && c.queued <= peers * (c.frame_bytes.min(1 << 20) + 4096);
        println!(
            "| {what} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} |",
            mib(c.frame_bytes),
            c.time.as_secs_f64() * 1e3,
            mib(c.peak),
            mib(c.queued),
            c.answer,
            if met { "met" } else { "NOT met" }
        );
    }
    println!(
        "worst: {:.1} ms of server time for one request",
        worst.as_secs_f64() * 1e3
    );
}
