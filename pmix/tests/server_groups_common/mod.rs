//! Helpers for the group tests of the server core: a job of fake clients (the
//! core helper's `server_core_common`, which the test crate declares beside this
//! module) of a given client version, registered for the group events, and the
//! group requests built with pmix-wire.
#![allow(dead_code, unreachable_pub)]

use std::time::Instant;

use pmix::server::core::{Core, Output};
use pmix_wire::frame::{Decoded, TAG_FIRST_REQUEST};
use pmix_wire::handshake::Trailer;
use pmix_wire::msg::{FenceNb, GroupConstruct, GroupDestruct, GroupLeave, RegEvents};
use pmix_wire::{
    ClientReply, Command, ConnectMsg, Event, GroupLayout, Info, Proc, Rank, Reply, Request, Status,
    Value, Version,
};

use crate::server_core_common::*;

/// `PMIX_GROUP_LEFT`.
pub const LEFT: i32 = -160;
/// `PMIX_GROUP_CONSTRUCT_ABORT`.
pub const ABORT: i32 = -165;
/// `PMIX_GROUP_CONSTRUCT_COMPLETE`.
pub const COMPLETE: i32 = -166;
/// `PMIX_GROUP_MEMBER_FAILED`.
pub const MEMBER_FAILED: i32 = -170;
/// `PMIX_ERR_NOT_A_MEMBER`.
pub const NOT_A_MEMBER: i32 = -66;
/// `PMIX_ERR_PROC_TERM_WO_SYNC`.
pub const TERM_WO_SYNC: i32 = -200;
/// The context id of a construct that asked for none (`SIZE_MAX`).
pub const NO_CTXID: u64 = u64::MAX;

/// Connects rank `rank` of `ns` on `conn` as a client of version `version`.
pub fn connect_v(
    core: &mut Core,
    conn: u64,
    ns: &str,
    rank: u32,
    version: &str,
    now: Instant,
) -> Fake {
    let mut msg = client_msg(ns, rank, UID, GID);
    msg.version = Version::parse(version, 0).unwrap();
    msg.trailer = Trailer {
        info: Vec::new(),
        stray_byte: msg.version.sends_stray_byte(),
    };
    let bytes = msg.encode().unwrap();
    let Decoded::Item { item, .. } = ConnectMsg::decode(&bytes, &Default::default()).unwrap()
    else {
        panic!("connect message incomplete")
    };
    let reply = core
        .connect(conn, &item, UID, now)
        .expect("connect refused");
    let Decoded::Item { item: r, .. } = ClientReply::decode(&reply) else {
        panic!("short handshake reply")
    };
    assert_eq!(r.status, 0);
    Fake {
        conn,
        codec: item.codec(Default::default()).unwrap(),
        index: r.index,
        tag: TAG_FIRST_REQUEST - 1,
        nspace: ns.into(),
        rank,
    }
}

/// A core with job "job" of `n` ranks, all connected as `version` clients, each
/// registered for `PMIX_GROUP_LEFT`, `PMIX_GROUP_CONSTRUCT_ABORT` and
/// `PMIX_GROUP_MEMBER_FAILED`.
pub fn job_v(n: u32, version: &str) -> (Core, Vec<Fake>) {
    let now = Instant::now();
    let mut core = core_with("job", n);
    let mut f: Vec<Fake> = (0..n)
        .map(|r| connect_v(&mut core, r.into(), "job", r, version, now))
        .collect();
    drain(&mut core);
    let reg = Request::RegEvents(RegEvents {
        codes: vec![Status(LEFT), Status(ABORT), Status(MEMBER_FAILED)],
        info: Vec::new(),
    });
    for x in f.iter_mut() {
        let t = x.send(&mut core, &reg, now);
        let outs = drain(&mut core);
        assert_eq!(status(&outs, x, t, Command::RegEvents), 0);
    }
    (core, f)
}

/// [`job_v`] with 4.2.2 clients.
pub fn job(n: u32) -> (Core, Vec<Fake>) {
    job_v(n, "4.2.2")
}

/// Ranks `ranks` of "job" as procs.
pub fn procs(ranks: &[u32]) -> Vec<Proc> {
    ranks.iter().map(|&r| Proc::new("job", r)).collect()
}

/// A GROUP_CONSTRUCT of `grp` over ranks `ranks` of "job".
pub fn construct_req(grp: &str, ranks: &[u32], info: Vec<Info>) -> Request {
    Request::GroupConstruct(GroupConstruct {
        grp: grp.into(),
        procs: procs(ranks),
        info,
    })
}

/// A GROUP_DESTRUCT of `grp` in the layout of `f`'s version (4.2.4+: with
/// `members`).
pub fn destruct_req(f: &Fake, grp: &str, members: &[u32]) -> Request {
    Request::GroupDestruct(GroupDestruct {
        grp: grp.into(),
        members: match f.codec.version.group_layout() {
            GroupLayout::V420 => None,
            _ => Some(procs(members)),
        },
        info: Vec::new(),
    })
}

/// A GROUP_LEAVE of `grp`.
pub fn leave_req(grp: &str) -> Request {
    Request::GroupLeave(GroupLeave {
        grp: grp.into(),
        info: Vec::new(),
    })
}

/// A FENCENB over group `grp`, FT or not.
pub fn group_fence_req(grp: &str, ft: bool) -> Request {
    let info = if ft {
        vec![Info::new("pmix.grp.ftcoll", true)]
    } else {
        Vec::new()
    };
    Request::FenceNb(FenceNb {
        procs: vec![Proc::new(grp, Rank::WILDCARD.0)],
        info,
    })
}

/// `pmix.grp.ftcoll` = true.
pub fn ft() -> Info {
    Info::new("pmix.grp.ftcoll", true)
}

/// `pmix.grp.actxid` = true.
pub fn actxid() -> Info {
    Info::new("pmix.grp.actxid", true)
}

/// The construct reply to `f`'s request `tag`: (status, members as ranks of "job"
/// if the layout carries them, context id if sent).
pub fn construct_reply(
    outs: &[Output],
    f: &Fake,
    tag: u32,
) -> (i32, Option<Vec<u32>>, Option<u64>) {
    match reply(outs, f, tag, Command::GroupConstruct) {
        Reply::Status { status, .. } => (status.0, None, None),
        Reply::GroupConstruct(r) => (
            r.status.0,
            r.members.map(|m| m.iter().map(|p| p.rank.0).collect()),
            r.ctxid.map(|c| c.0),
        ),
        other => panic!("not a construct reply: {other:?}"),
    }
}

/// The events of code `code` sent to `f` in `outs`.
pub fn events_of(outs: &[Output], f: &Fake, code: i32) -> Vec<Event> {
    events(outs, f)
        .into_iter()
        .filter(|e| e.status.0 == code)
        .collect()
}

/// The value of `key` in `ev`'s info.
pub fn ev_value<'a>(ev: &'a Event, key: &str) -> Option<&'a Value> {
    ev.info.iter().find(|i| i.key == key).map(|i| &i.value)
}

/// The group id and the affected proc's rank an event names.
pub fn ev_group_and_proc(ev: &Event) -> (String, u32) {
    let g = ev_value(ev, "pmix.grp.id")
        .and_then(Value::as_str)
        .expect("pmix.grp.id")
        .to_string();
    let Some(Value::Proc(p)) = ev_value(ev, "pmix.evproc") else {
        panic!("pmix.evproc missing: {ev:?}")
    };
    (g, p.rank.0)
}

/// The position in `outs` of the first frame sent to `f` on `tag`.
pub fn position_of(outs: &[Output], f: &Fake, tag: u32) -> usize {
    outs.iter()
        .position(|o| match o {
            Output::Send { conn, .. } if *conn == f.conn => {
                frames_to(std::slice::from_ref(o), f.conn)[0].header.tag == tag
            }
            _ => false,
        })
        .unwrap_or_else(|| panic!("no frame to conn {} on tag {tag}", f.conn))
}

/// Every member of `ranks` sends a construct of `grp` with `info`; returns the tags.
pub fn construct_all(
    core: &mut Core,
    f: &mut [Fake],
    grp: &str,
    ranks: &[u32],
    info: &[Info],
    now: Instant,
) -> (Vec<u32>, Vec<Output>) {
    let req = construct_req(grp, ranks, info.to_vec());
    let mut outs = Vec::new();
    let tags = ranks
        .iter()
        .map(|&r| {
            let t = f[r as usize].send(core, &req, now);
            outs.extend(drain(core));
            t
        })
        .collect();
    (tags, outs)
}

/// `f` sends a GROUP_DESTRUCT of `grp` in its layout (4.2.4+: listing `members`);
/// returns the tag.
pub fn send_destruct(
    core: &mut Core,
    f: &mut Fake,
    grp: &str,
    members: &[u32],
    now: Instant,
) -> u32 {
    let req = destruct_req(f, grp, members);
    f.send(core, &req, now)
}
