//! A test-side fake client for the server core: connect messages and request
//! frames built with pmix-wire, fed to a `Core`; the core's output frames decoded
//! with pmix-wire.
#![allow(dead_code, unreachable_pub)]

use std::time::Instant;

use pmix::server::core::{ConnId, Core, CoreConfig, NamespaceSpec, Output};
use pmix_wire::frame::{Decoded, FrameDecoder, TAG_FIRST_REQUEST, next_tag};
use pmix_wire::handshake::Trailer;
use pmix_wire::{
    BufferType, ClientReply, Codec, Command, ConnectMsg, Event, Frame, Identity, Reply, Request,
    Version, decode_event, decode_reply,
};

/// The uid and gid the server runs as in these tests.
pub const UID: u32 = 1000;
/// The gid.
pub const GID: u32 = 1000;

/// A core for server "srv" on host "node0" run as UID/GID, with namespace `ns` of
/// `n` ranks registered.
pub fn core_with(ns: &str, n: u32) -> Core {
    core_configured(|_| {}, ns, n)
}

/// [`core_with`], its configuration first changed by `set`.
pub fn core_configured(set: impl FnOnce(&mut CoreConfig), ns: &str, n: u32) -> Core {
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    set(&mut cfg);
    let mut core = Core::new(cfg);
    core.add_namespace(NamespaceSpec::single_node(ns, n, UID, GID))
        .unwrap();
    core
}

/// A hosted core for server "srv" on host `host`, with namespace `ns` of 4 ranks
/// of which `ranks` are its local ones (local and node ranks in that order).
pub fn hosted_node(host: &str, ns: &str, ranks: [u32; 2]) -> Core {
    let mut cfg = CoreConfig::new("srv", 0, host, UID, GID);
    cfg.provides = pmix::server::core::Provides::NODES;
    let mut core = Core::new(cfg);
    let mut spec = NamespaceSpec::single_node(ns, 4, UID, GID);
    spec.ranks = ranks
        .iter()
        .enumerate()
        .map(|(i, &rank)| pmix::server::core::RankSpec {
            rank,
            local_rank: i as u16,
            node_rank: i as u16,
            ..Default::default()
        })
        .collect();
    core.add_namespace(spec).unwrap();
    core
}

/// A flag-0 connect message from a 4.2.2 client.
pub fn client_msg(ns: &str, rank: u32, uid: u32, gid: u32) -> ConnectMsg {
    let mut cred = uid.to_le_bytes().to_vec();
    cred.extend_from_slice(&gid.to_le_bytes());
    ConnectMsg {
        psec: "native".into(),
        credential: cred,
        identity: Identity::Client {
            nspace: ns.into(),
            rank,
        },
        version: Version::parse("4.2.2rc2", 0).unwrap(),
        bfrops: "v41".into(),
        buffer_type: BufferType::NonDescribed,
        gds: "hash".into(),
        trailer: Trailer {
            info: Vec::new(),
            stray_byte: true,
        },
    }
}

/// One connected fake client.
pub struct Fake {
    pub conn: ConnId,
    pub codec: Codec,
    pub index: u32,
    pub tag: u32,
    pub nspace: String,
    pub rank: u32,
}

/// Connects rank `rank` of `ns` on `conn`; panics if refused.
pub fn connect(core: &mut Core, conn: ConnId, ns: &str, rank: u32, now: Instant) -> Fake {
    let msg = client_msg(ns, rank, UID, GID);
    // The message goes through the wire as the I/O layer would see it.
    let bytes = msg.encode().unwrap();
    let Decoded::Item { item, .. } = ConnectMsg::decode(&bytes, &Default::default()).unwrap()
    else {
        panic!("connect message incomplete")
    };
    let reply = core
        .connect(conn, &item, UID, now)
        .expect("connect refused");
    let Decoded::Item { item: r, used } = ClientReply::decode(&reply) else {
        panic!("short handshake reply")
    };
    assert_eq!(used, reply.len());
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

impl Fake {
    /// Sends `req` as the next request frame; returns its tag.
    pub fn send(&mut self, core: &mut Core, req: &Request, now: Instant) -> u32 {
        self.tag = next_tag(self.tag);
        let payload = req.encode(&self.codec).unwrap();
        let frame = Frame::new(self.index as i32, self.tag, payload).unwrap();
        core.frame(self.conn, &frame, now);
        self.tag
    }
}

/// Everything the core has to output now.
pub fn drain(core: &mut Core) -> Vec<Output> {
    std::iter::from_fn(|| core.poll_output()).collect()
}

/// The frames sent to `conn` in `outs`, decoded with pmix-wire.
pub fn frames_to(outs: &[Output], conn: ConnId) -> Vec<Frame> {
    let dec = FrameDecoder::default();
    outs.iter()
        .filter_map(|o| match o {
            Output::Send { conn: c, bytes } if *c == conn => {
                let Ok(Decoded::Item { item, used }) = dec.decode(bytes) else {
                    panic!("the core sent bytes that are not one frame")
                };
                assert_eq!(used, bytes.len(), "one whole frame per Send");
                Some(item)
            }
            _ => None,
        })
        .collect()
}

/// The reply to `f`'s request `tag` of command `cmd` in `outs` (exactly one).
pub fn reply(outs: &[Output], f: &Fake, tag: u32, cmd: Command) -> Reply {
    let fr: Vec<_> = frames_to(outs, f.conn)
        .into_iter()
        .filter(|fr| fr.header.tag == tag)
        .collect();
    assert_eq!(fr.len(), 1, "one reply on tag {tag}, got {}", fr.len());
    decode_reply(cmd, &fr[0].payload, &f.codec).unwrap()
}

/// The lone status of a reply.
pub fn status(outs: &[Output], f: &Fake, tag: u32, cmd: Command) -> i32 {
    match reply(outs, f, tag, cmd) {
        Reply::Status { status, .. } => status.0,
        other => panic!("expected a lone status, got {other:?}"),
    }
}

/// Whether `outs` holds no frame for `f` on `tag`.
pub fn no_reply(outs: &[Output], f: &Fake, tag: u32) -> bool {
    frames_to(outs, f.conn)
        .iter()
        .all(|fr| fr.header.tag != tag)
}

/// The tag-0 events sent to `f` in `outs`.
pub fn events(outs: &[Output], f: &Fake) -> Vec<Event> {
    frames_to(outs, f.conn)
        .into_iter()
        .filter(|fr| fr.header.tag == 0)
        .map(|fr| decode_event(&fr.payload, &f.codec).unwrap())
        .collect()
}
