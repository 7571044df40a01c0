//! A client's connection to its server: the handshake (docs/wire.md §3), framed
//! requests with fresh tags, and one reader thread that matches replies to requests
//! by tag (§4). Every byte is made and read by `pmix-wire`.
//!
//! **Threads.** The caller writes its request (under a lock, so frames never
//! interleave) after registering a completion for the tag; the reader thread reads
//! frames, hands each reply's payload to its request's completion, and event frames
//! (tag 0) to the event sink. A completion must be quick: a blocking caller's is a
//! channel send. When the server's socket closes (or sends bytes that are not
//! frames), every pending completion gets [`Error::Unreach`] at once and every later
//! request is refused the same way: nobody waits for a server that is gone; and the
//! event sink gets `PMIX_ERR_LOST_CONNECTION` from the server (unless this process
//! closed the connection itself).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use pmix_wire::frame::{TAG_DYNAMIC, TAG_EVENT, next_tag};
use pmix_wire::{
    ClientReply, Codec, ConnectMsg, Decoded, Frame, FrameDecoder, Identity, Limits, PeerKind,
    Reply, Request, ToolReply, Trailer, Version, decode_reply,
};

use super::env::ServerEnv;
use crate::error::Error;

/// The version this library speaks on the wire: OpenPMIx 4.2.2's protocol, with the
/// stray trailer byte of ≤ 4.2.2 clients.
pub const WIRE_VERSION: &str = "4.2.2";

/// What a request's reply (or the loss of the connection) is handed to, on the
/// reader thread.
pub(crate) type Completion = Box<dyn FnOnce(Result<Vec<u8>, Error>) + Send + 'static>;

/// What receives the server's events (tag 0 frames, decoded; one that does not
/// decode is dropped), on the reader thread.
pub(crate) type EventSink = Box<dyn Fn(pmix_wire::Event) + Send + 'static>;

struct State {
    /// The last tag used.
    tag: u32,
    waiting: HashMap<u32, Completion>,
    /// Why the connection is gone, once it is.
    lost: Option<String>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A connected client's link to its server.
pub(crate) struct Conn {
    stream: Mutex<TcpStream>,
    state: Arc<Mutex<State>>,
    pindex: i32,
    codec: Codec,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl Conn {
    /// Connects to `env`'s server as `env`'s process and completes the handshake,
    /// each step bounded by `wait`, then starts the reader thread; events go to
    /// `events`.
    ///
    /// # Errors
    /// [`Error::Unreach`] when the server cannot be reached, closes the connection
    /// (how an OpenPMIx server refuses a client) or does not answer within `wait`;
    /// the server's status when it answers with one other than success;
    /// [`Error::Os`] when the reader thread cannot be started.
    pub(crate) fn connect(
        env: &ServerEnv,
        wait: Duration,
        events: EventSink,
    ) -> Result<Conn, Error> {
        Self::connect_as(env, false, wait, events).map(|(c, _)| c)
    }

    /// Connects to `env`'s server as a tool (its pid and command line in the
    /// trailer, docs/wire.md §3.1) and completes the handshake as [`Conn::connect`]
    /// does; returns the tool's identity. A tool started by that server (`env` names
    /// a namespace: `PMIX_NAMESPACE` / `PMIX_RANK` were set) is type 5 with that
    /// identity, as libpmix2's; any other is type 3 and takes the identifier the
    /// server assigns (Open MPI 4.1's `mpirun` refuses both kinds, and its OpenPMIx
    /// 4.2.2 server crashes on a refused type-3 tool, so a launched tool never asks
    /// for an identifier).
    ///
    /// # Errors
    /// As [`Conn::connect`]; a nonzero status in the tool reply is that status.
    pub(crate) fn connect_tool(
        env: &ServerEnv,
        wait: Duration,
        events: EventSink,
    ) -> Result<(Conn, (String, u32)), Error> {
        let (conn, id) = Self::connect_as(env, true, wait, events)?;
        let id = match id {
            Some(id) => id,
            None if !env.nspace.is_empty() => (env.nspace.clone(), env.rank),
            None => {
                return Err(Error::Internal(
                    "the PMIx server accepted a tool without an identifier".into(),
                ));
            }
        };
        Ok((conn, id))
    }

    fn connect_as(
        env: &ServerEnv,
        tool: bool,
        wait: Duration,
        events: EventSink,
    ) -> Result<(Conn, Option<(String, u32)>), Error> {
        let unreach = |what: &str, e: std::io::Error| {
            Error::Unreach(
                format!("PMIx server {} at {}: {what}: {e}", env.server, env.addr).into(),
            )
        };
        let mut stream =
            TcpStream::connect_timeout(&env.addr, wait).map_err(|e| unreach("connect", e))?;
        stream
            .set_nodelay(true)
            .map_err(|e| unreach("TCP_NODELAY", e))?;
        stream
            .set_read_timeout(Some(wait))
            .map_err(|e| unreach("read timeout", e))?;
        stream
            .set_write_timeout(Some(wait))
            .map_err(|e| unreach("write timeout", e))?;
        let msg = connect_msg(env, tool)?;
        let codec = msg
            .codec(Limits::DEFAULT)
            .map_err(|e| Error::Internal(format!("our connect message: {e}")))?;
        let bytes = msg
            .encode()
            .map_err(|e| Error::BadParam(format!("the connect message: {e}").into()))?;
        stream
            .write_all(&bytes)
            .map_err(|e| unreach("sending the connect message", e))?;
        let refused = |e| {
            unreach(
                "the handshake (the server refuses an unknown namespace or rank, or a \
                 credential it does not accept, by closing the connection)",
                e,
            )
        };
        let refusal = |status: i32| Error::Status {
            status: pmix_core::Status(status),
            why: format!("the PMIx server {} refused the handshake", env.server).into(),
        };
        let (pindex, assigned) = if tool {
            // 4 bytes of status, then (when it is 0) the rest: read until whole.
            let mut got = Vec::with_capacity(600);
            let accept = loop {
                match ToolReply::decode(&got, env.nspace.is_empty()) {
                    Ok(Decoded::Item { item, .. }) => break item,
                    Ok(Decoded::NeedMore(n)) => {
                        let at = got.len();
                        got.resize(at + n, 0);
                        stream.read_exact(&mut got[at..]).map_err(refused)?;
                    }
                    Err(e) => {
                        return Err(Error::Internal(format!(
                            "the PMIx server's tool handshake reply: {e}"
                        )));
                    }
                }
            };
            match accept.accept {
                Some(a) if accept.status == 0 && a.cred_status == 0 => (-1, a.assigned),
                refused => {
                    // The server closes a refused tool's connection: let it close
                    // first (OpenPMIx 4.2.2's, in Open MPI 4.1's mpirun, crashes when
                    // the tool's end goes before it is done with the refusal).
                    let mut rest = [0u8; 64];
                    while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
                    let status = match refused {
                        Some(a) if accept.status == 0 => a.cred_status,
                        _ => accept.status,
                    };
                    return Err(refusal(status));
                }
            }
        } else {
            let mut reply = [0u8; 8];
            stream.read_exact(&mut reply).map_err(refused)?;
            let Decoded::Item { item, .. } = ClientReply::decode(&reply) else {
                return Err(Error::Internal("8 bytes are a handshake reply".into()));
            };
            if item.status != 0 {
                return Err(refusal(item.status));
            }
            (item.index as i32, None)
        };
        stream
            .set_read_timeout(None)
            .map_err(|e| unreach("read timeout", e))?;
        let state = Arc::new(Mutex::new(State {
            tag: TAG_DYNAMIC,
            waiting: HashMap::new(),
            lost: None,
        }));
        let read_half = stream
            .try_clone()
            .map_err(|e| unreach("cloning the socket", e))?;
        // The server's own name (`nspace.rank` before the URI's `;`), the source of
        // the PMIX_ERR_LOST_CONNECTION event when it goes away.
        let server = match env.server.rsplit_once('.') {
            Some((ns, r)) => pmix_wire::Proc::new(ns, r.parse().unwrap_or(0)),
            None => pmix_wire::Proc::new(env.server.as_str(), 0),
        };
        let reader = {
            let state = Arc::clone(&state);
            let codec = codec.clone();
            std::thread::Builder::new()
                .name("pmix-client-reader".into())
                .spawn(move || read_loop(read_half, &state, &codec, &events, server))
                .map_err(|e| Error::Os(format!("cannot start the client's reader thread: {e}")))?
        };
        Ok((
            Conn {
                stream: Mutex::new(stream),
                state,
                pindex,
                codec,
                reader: Mutex::new(Some(reader)),
            },
            assigned,
        ))
    }

    /// The codec of this connection.
    pub(crate) fn codec(&self) -> &Codec {
        &self.codec
    }

    /// Sends `req` with a fresh tag; `done` gets the reply's payload, or the error
    /// that ended the connection.
    ///
    /// # Errors
    /// [`Error::BadParam`] when `req` cannot be encoded; [`Error::Unreach`] when the
    /// connection is gone (`done` is then dropped unrun).
    pub(crate) fn send(&self, req: &Request, done: Completion) -> Result<(), Error> {
        let payload = req.encode(&self.codec).map_err(|e| {
            Error::BadParam(format!("{:?} cannot be encoded: {e}", req.command()).into())
        })?;
        let mut st = lock(&self.state);
        if let Some(why) = &st.lost {
            return Err(Error::Unreach(why.clone().into()));
        }
        st.tag = next_tag(st.tag);
        let tag = st.tag;
        st.waiting.insert(tag, done);
        drop(st);
        let sent = Frame::new(self.pindex, tag, payload)
            .and_then(|f| f.encode())
            .map_err(|e| Error::BadParam(format!("the request's frame: {e}").into()))
            .and_then(|bytes| {
                let mut s = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
                s.write_all(&bytes)
                    .map_err(|e| Error::Unreach(format!("sending to the PMIx server: {e}").into()))
            });
        if let Err(e) = sent {
            // Not sent: the completion is not run (the caller gets the error).
            lock(&self.state).waiting.remove(&tag);
            return Err(e);
        }
        Ok(())
    }

    /// Sends `req`, which has no reply (DEREGEVENTS), with a fresh tag.
    ///
    /// # Errors
    /// As [`Conn::send`].
    pub(crate) fn send_oneway(&self, req: &Request) -> Result<(), Error> {
        let payload = req.encode(&self.codec).map_err(|e| {
            Error::BadParam(format!("{:?} cannot be encoded: {e}", req.command()).into())
        })?;
        let tag = {
            let mut st = lock(&self.state);
            if let Some(why) = &st.lost {
                return Err(Error::Unreach(why.clone().into()));
            }
            st.tag = next_tag(st.tag);
            st.tag
        };
        let bytes = Frame::new(self.pindex, tag, payload)
            .and_then(|f| f.encode())
            .map_err(|e| Error::BadParam(format!("the request's frame: {e}").into()))?;
        let mut s = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        s.write_all(&bytes)
            .map_err(|e| Error::Unreach(format!("sending to the PMIx server: {e}").into()))
    }

    /// Sends `req` and waits for its reply, decoded; `wait` bounds the wait (`None`:
    /// until the reply or the loss of the connection).
    ///
    /// # Errors
    /// As [`Conn::send`]; [`Error::Unreach`] when the connection is lost before the
    /// reply; `PMIX_ERR_TIMEOUT` past `wait`; [`Error::Internal`] for a reply that
    /// does not decode as `req`'s.
    pub(crate) fn call(&self, req: &Request, wait: Option<Duration>) -> Result<Reply, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.send(
            req,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        )?;
        let got = match wait {
            None => rx.recv().map_err(|_| lost()),
            Some(w) => rx.recv_timeout(w).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => Error::Status {
                    status: pmix_core::Status::ERR_TIMEOUT,
                    why: format!("no reply to {:?} within {w:?}", req.command()).into(),
                },
                mpsc::RecvTimeoutError::Disconnected => lost(),
            }),
        }??;
        decode(req.command(), &got, &self.codec)
    }

    /// Completes every request still waiting for its reply with `error` (a reply
    /// that comes later is dropped); the connection stays up.
    pub(crate) fn fail_pending(&self, error: &Error) {
        let pending: Vec<Completion> = lock(&self.state).waiting.drain().map(|(_, c)| c).collect();
        for done in pending {
            done(Err(error.clone()));
        }
    }

    /// Closes the connection: later requests are refused, pending ones get
    /// [`Error::Unreach`], and the reader thread is joined (unless this runs on it).
    pub(crate) fn close(&self) {
        {
            let mut st = lock(&self.state);
            st.lost
                .get_or_insert_with(|| "the connection to the PMIx server was closed".into());
        }
        let _ = self
            .stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .shutdown(Shutdown::Both);
        let handle = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle
            && h.thread().id() != std::thread::current().id()
        {
            let _ = h.join();
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.close();
    }
}

/// Decodes a reply to a request of `command`.
///
/// # Errors
/// [`Error::Internal`] for a reply that does not decode as one.
pub(crate) fn decode(
    command: pmix_wire::Command,
    payload: &[u8],
    codec: &Codec,
) -> Result<Reply, Error> {
    decode_reply(command, payload, codec).map_err(|e| {
        Error::Internal(format!(
            "the server's reply to {command:?} does not decode: {e}"
        ))
    })
}

fn lost() -> Error {
    Error::Unreach("the connection to the PMIx server was lost".into())
}

/// The connect message of a launched OpenPMIx 4.2.2 client: `native` credential
/// (effective uid and gid, host order), non-described or fully described buffers as
/// the server said, the `hash` store.
fn connect_msg(env: &ServerEnv, tool: bool) -> Result<ConnectMsg, Error> {
    let (uid, gid) = crate::server::net::effective_ids();
    let mut credential = uid.to_ne_bytes().to_vec();
    credential.extend_from_slice(&gid.to_ne_bytes());
    let (identity, trailer) = if tool {
        let cmdline = std::env::args().collect::<Vec<_>>().join(" ");
        let info = [
            pmix_wire::Info::new("pmix.ppid", pmix_wire::Value::Pid(std::process::id())),
            pmix_wire::Info::new("pmix.cmd.line", pmix_wire::Value::string(cmdline)),
        ];
        let trailer = Trailer::with_info(&info, env.buffer_type, true)
            .map_err(|e| Error::Internal(format!("our tool trailer: {e}")))?;
        let identity = if env.nspace.is_empty() {
            Identity::Ids {
                kind: PeerKind::ToolNeedsId,
                uid,
                gid,
            }
        } else {
            Identity::Named {
                kind: PeerKind::ToolClient,
                uid,
                gid,
                nspace: env.nspace.clone(),
                rank: env.rank,
            }
        };
        (identity, trailer)
    } else {
        (
            Identity::Client {
                nspace: env.nspace.clone(),
                rank: env.rank,
            },
            Trailer {
                info: Vec::new(),
                stray_byte: true,
            },
        )
    };
    Ok(ConnectMsg {
        psec: "native".into(),
        credential,
        identity,
        version: Version::parse(WIRE_VERSION, 0)
            .unwrap_or_else(|_| pmix_wire::Codec::v422().version),
        bfrops: "v41".into(),
        buffer_type: env.buffer_type,
        gds: "hash".into(),
        trailer,
    })
}

/// The reader thread: frames until the socket closes or fails.
fn read_loop(
    mut stream: TcpStream,
    state: &Mutex<State>,
    codec: &Codec,
    events: &EventSink,
    server: pmix_wire::Proc,
) {
    let decoder = FrameDecoder::new(Limits::DEFAULT);
    let mut inbuf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let why = 'outer: loop {
        loop {
            match decoder.decode(&inbuf) {
                Ok(Decoded::Item { item, used }) => {
                    inbuf.drain(..used);
                    deliver(item, state, codec, events);
                }
                Ok(Decoded::NeedMore(_)) => break,
                Err(e) => break 'outer format!("the PMIx server sent a bad frame: {e}"),
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) => break "the PMIx server closed the connection".to_owned(),
            Ok(n) => inbuf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break format!("reading from the PMIx server: {e}"),
        }
    };
    let (pending, closed_by_us): (Vec<Completion>, bool) = {
        let mut st = lock(state);
        let closed_by_us = st.lost.is_some();
        st.lost.get_or_insert(why.clone());
        (st.waiting.drain().map(|(_, c)| c).collect(), closed_by_us)
    };
    for done in pending {
        done(Err(Error::Unreach(why.clone().into())));
    }
    // Not closed by this process (finalize): its handlers hear that the server is
    // gone, as OpenPMIx's default handlers do.
    if !closed_by_us {
        events(pmix_wire::Event {
            status: pmix_core::Status::ERR_LOST_CONNECTION,
            source: server,
            info: Vec::new(),
            range: None,
        });
    }
}

/// Hands one frame to its request's completion, or to the event sink.
fn deliver(frame: Frame, state: &Mutex<State>, codec: &Codec, events: &EventSink) {
    let tag = frame.header.tag;
    if tag == TAG_EVENT {
        if let Ok(ev) = pmix_wire::decode_event(&frame.payload, codec) {
            events(ev);
        }
        return;
    }
    let done = lock(state).waiting.remove(&tag);
    // A reply to no request of ours (or I/O forwarding, tag 2, which we never ask
    // for) is dropped.
    if let Some(done) = done {
        done(Ok(frame.payload));
    }
}
