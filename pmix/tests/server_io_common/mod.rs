//! A raw-socket PMIx client for the server's tests: the handshake and frames of an
//! OpenPMIx 4.2.2 client, every byte made and read by pmix-wire, every wait bounded.

#![allow(dead_code, unreachable_pub)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use pmix::server::{Host, NamespaceSpec, ProcName, Reply as HostReply};
use pmix::{Server, ServerConfig};
use pmix_wire::{
    BufferType, Codec, Command, ConnectMsg, Decoded, Frame, FrameDecoder, Identity, Limits, Reply,
    Request, Status, Trailer, Version, decode_reply,
};

/// How long any one read of a test client waits.
pub const WAIT: Duration = Duration::from_secs(30);

/// The connect message of a launched 4.2.2 client `nspace`:`rank` claiming `uid`/`gid`
/// in its native credential.
pub fn connect_msg(nspace: &str, rank: u32, uid: u32, gid: u32) -> ConnectMsg {
    let mut credential = uid.to_le_bytes().to_vec();
    credential.extend_from_slice(&gid.to_le_bytes());
    ConnectMsg {
        psec: "native".into(),
        credential,
        identity: Identity::Client {
            nspace: nspace.into(),
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

/// A TCP connection to `addr` whose reads time out after [`WAIT`].
pub fn dial(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

/// Reads until the peer closes; the bytes that came first. A reset counts as a close.
///
/// # Panics
/// When the peer neither closes nor sends within [`WAIT`].
pub fn read_to_close(s: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(
            Instant::now() < deadline,
            "{what}: the server did not close within {WAIT:?}"
        );
        match s.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => panic!("{what}: waiting for the server to close: {e}"),
        }
    }
}

/// A connected client after its handshake.
pub struct RawClient {
    pub stream: TcpStream,
    pub codec: Codec,
    pub index: u32,
    tag: u32,
    inbuf: Vec<u8>,
}

impl RawClient {
    /// Connects as `nspace`:`rank` claiming `uid`/`gid`; `Err` with the bytes received
    /// when the server closed instead of answering.
    pub fn connect(
        addr: SocketAddr,
        nspace: &str,
        rank: u32,
        uid: u32,
        gid: u32,
    ) -> Result<RawClient, Vec<u8>> {
        let mut stream = dial(addr);
        let msg = connect_msg(nspace, rank, uid, gid);
        stream.write_all(&msg.encode().unwrap()).unwrap();
        let mut reply = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            match stream.read(&mut reply[got..]) {
                Ok(0) => return Err(reply[..got].to_vec()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err(reply[..got].to_vec());
                }
                Err(e) => panic!("handshake reply of {nspace}:{rank}: {e}"),
            }
        }
        let Decoded::Item { item, .. } = pmix_wire::ClientReply::decode(&reply) else {
            unreachable!()
        };
        assert_eq!(item.status, 0);
        Ok(RawClient {
            stream,
            codec: msg.codec(Limits::DEFAULT).unwrap(),
            index: item.index,
            tag: pmix_wire::frame::TAG_DYNAMIC,
            inbuf: Vec::new(),
        })
    }

    /// A client whose connect message was already written on `stream`: reads the
    /// 8-byte reply; the next request gets tag 102 (101 is taken to be sent).
    ///
    /// # Panics
    /// When the server closes instead of answering.
    pub fn from_stream_after_connect(mut stream: TcpStream, codec: Codec) -> RawClient {
        let mut reply = [0u8; 8];
        stream.read_exact(&mut reply).unwrap();
        let Decoded::Item { item, .. } = pmix_wire::ClientReply::decode(&reply) else {
            unreachable!()
        };
        assert_eq!(item.status, 0);
        RawClient {
            stream,
            codec,
            index: item.index,
            tag: pmix_wire::frame::TAG_FIRST_REQUEST,
            inbuf: Vec::new(),
        }
    }

    /// Sends `req` with the next tag; returns the tag.
    pub fn send(&mut self, req: &Request) -> u32 {
        self.tag = pmix_wire::frame::next_tag(self.tag);
        let payload = req.encode(&self.codec).unwrap();
        let f = Frame::new(self.index as i32, self.tag, payload).unwrap();
        self.stream.write_all(&f.encode().unwrap()).unwrap();
        self.tag
    }

    /// The next frame from the server.
    ///
    /// # Panics
    /// When none comes within [`WAIT`], or the server closes.
    pub fn frame(&mut self) -> Frame {
        let d = FrameDecoder::new(Limits::DEFAULT);
        let mut buf = [0u8; 65536];
        loop {
            if let Decoded::Item { item, used } = d.decode(&self.inbuf).unwrap() {
                self.inbuf.drain(..used);
                return item;
            }
            match self.stream.read(&mut buf) {
                Ok(0) => panic!("the server closed the connection"),
                Ok(n) => self.inbuf.extend_from_slice(&buf[..n]),
                Err(e) => panic!("waiting for a frame: {e}"),
            }
        }
    }

    /// Sends `req` and returns its decoded reply (events in between are skipped).
    pub fn call(&mut self, req: &Request) -> Reply {
        let cmd = req.command();
        let tag = self.send(req);
        loop {
            let f = self.frame();
            if f.header.tag == tag {
                return decode_reply(cmd, &f.payload, &self.codec).unwrap();
            }
        }
    }

    /// REQ: the job-info blob's nspace.
    pub fn req(&mut self) -> String {
        match self.call(&Request::Req) {
            Reply::Req(info) => info.nspace.to_string(),
            other => panic!("REQ answered {other:?}"),
        }
    }

    /// FINALIZE, answered with status 0.
    pub fn finalize(&mut self) {
        match self.call(&Request::Finalize) {
            Reply::Status { status, command } => {
                assert_eq!((command, status), (Command::Finalize, Status::SUCCESS));
            }
            other => panic!("FINALIZE answered {other:?}"),
        }
    }
}

/// A configuration that logs nothing (the tests provoke refusals on purpose).
pub fn quiet() -> ServerConfig {
    ServerConfig {
        log: false,
        ..ServerConfig::default()
    }
}

/// A server started with `cfg`, with the one-node namespace `nspace` of `size`
/// ranks registered for this process's uid and gid.
pub fn start(cfg: ServerConfig, nspace: &str, size: u32) -> Server {
    let server = Server::start(cfg).unwrap();
    let (uid, gid) = ids();
    server
        .add_namespace(NamespaceSpec::single_node(nspace, size, uid, gid))
        .unwrap();
    server
}

/// What a [`Watch`] host heard of the clients, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Heard {
    /// A rank completed its handshake.
    Connected(ProcName),
    /// A rank finalized.
    Finalized(ProcName),
    /// A rank aborted with this status.
    Aborted(ProcName, i32),
    /// A rank was lost.
    Lost(ProcName),
}

/// A launcher's host: it passes what it hears of the clients on to a channel.
pub struct Watch(mpsc::Sender<Heard>);

impl Host for Watch {
    fn client_connected(&self, proc: ProcName) {
        let _ = self.0.send(Heard::Connected(proc));
    }
    fn client_finalized(&self, proc: ProcName, reply: HostReply<()>) {
        let _ = self.0.send(Heard::Finalized(proc));
        reply.send(Ok(()));
    }
    fn client_aborted(&self, proc: ProcName, status: i32, _message: Option<String>) {
        let _ = self.0.send(Heard::Aborted(proc, status));
    }
    fn client_lost(&self, proc: ProcName) {
        let _ = self.0.send(Heard::Lost(proc));
    }
}

/// A server started with `cfg`, hosted by a [`Watch`], and what the host hears.
pub fn watched(cfg: ServerConfig) -> (Server, mpsc::Receiver<Heard>) {
    let (tx, rx) = mpsc::channel();
    let server = Server::start_with_host(cfg, Arc::new(Watch(tx))).unwrap();
    (server, rx)
}

/// The uid and gid this process runs as.
pub fn ids() -> (u32, u32) {
    pmix::server::net::effective_ids()
}
