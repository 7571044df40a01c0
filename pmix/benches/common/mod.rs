//! What the server core's benches share: a 4.2.2 client's connect message, and a
//! counting allocator.

#[allow(dead_code)]
pub(crate) mod counting;

use pmix_wire::frame::Decoded;
use pmix_wire::handshake::Trailer;
use pmix_wire::{BufferType, ConnectMsg, Identity, Version};

/// A flag-0 connect message from a 4.2.2 client, rank `rank` of namespace "job"
/// with the native credential `uid`/`gid`, through the wire (encoded, then decoded
/// as the server's I/O layer would).
pub(crate) fn connect_msg(rank: u32, uid: u32, gid: u32) -> ConnectMsg {
    let mut cred = uid.to_le_bytes().to_vec();
    cred.extend_from_slice(&gid.to_le_bytes());
    let msg = ConnectMsg {
        psec: "native".into(),
        credential: cred,
        identity: Identity::Client {
            nspace: "job".into(),
            rank,
        },
        version: Version::parse("4.2.2", 0).expect("version"),
        bfrops: "v41".into(),
        buffer_type: BufferType::NonDescribed,
        gds: "hash".into(),
        trailer: Trailer {
            info: Vec::new(),
            stray_byte: true,
        },
    };
    let bytes = msg.encode().expect("connect message");
    match ConnectMsg::decode(&bytes, &Default::default()) {
        Ok(Decoded::Item { item, .. }) => item,
        _ => panic!("connect message incomplete"),
    }
}
