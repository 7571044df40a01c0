//! The client's protocol state, without I/O (docs/threads.md, as `server::core` is
//! for the server and quinn-proto is for quinn).
//!
//! [`Handshake`] builds the connect message and reads the server's answer, byte
//! counts first: it says how many bytes it needs next and never reads a socket.
//! [`ClientCore`] is what a connected client knows about its link: the process
//! index, the codec, the last tag, the requests waiting for their replies (each
//! with its command, so every reply is decoded in one place, [`ClientCore::receive`])
//! and whether the link is gone. Input: requests to start, bytes received, the loss
//! of the link. Output: the bytes of each request's frame, and [`Delivery`]s — a
//! completion with its decoded reply, or an event — which the caller runs after
//! releasing whatever lock guards the core.
//!
//! Two shells move its bytes: `conn.rs` (a TCP socket and one reader thread) and
//! [`crate::sim`] (a server core in the same process, no socket and no thread).

use std::collections::HashMap;

use pmix_wire::frame::{TAG_DYNAMIC, TAG_EVENT, next_tag};
use pmix_wire::{
    ClientReply, Codec, Command, ConnectMsg, Decoded, Event, Frame, FrameDecoder, Identity, Limits,
    PeerKind, Proc, Reply, Request, ToolReply, Trailer, Version, decode_reply,
};

use super::env::ServerEnv;
use crate::error::Error;

/// The version this library speaks on the wire: OpenPMIx 4.2.2's protocol, with the
/// stray trailer byte of ≤ 4.2.2 clients.
pub const WIRE_VERSION: &str = "4.2.2";

/// What a request's reply, decoded as the reply to its command (or the error that
/// ended it), is handed to.
pub(crate) type Completion = Box<dyn FnOnce(Result<Reply, Error>) + Send + 'static>;

/// What the caller of [`ClientCore::receive`] (or of [`ClientCore::lose`]) must run,
/// in order, once it no longer holds the core.
pub(crate) enum Delivery {
    /// Run the completion with this result.
    Reply(Completion, Result<Reply, Error>),
    /// Hand this event to the event sink.
    Event(Event),
}

impl Delivery {
    /// Runs the delivery: the completion, or `events` with the event.
    pub(crate) fn run(self, events: &(dyn Fn(Event) + Send + Sync)) {
        match self {
            Delivery::Reply(done, r) => done(r),
            Delivery::Event(ev) => events(ev),
        }
    }
}

/// The handshake of a client or a tool, as bytes in and out.
pub(crate) struct Handshake {
    tool: bool,
    /// A tool without a name of its own asks the server for one.
    needs_id: bool,
    codec: Codec,
    /// The server's own name, the source of the loss event.
    server: Proc,
    server_name: String,
    got: Vec<u8>,
    /// The request sent right behind the connect message ([`Handshake::pipeline`]):
    /// its tag, command and completion, for the core.
    first: Option<(u32, Command, Completion)>,
}

/// What [`Handshake::receive`] made of the bytes so far.
pub(crate) enum Step {
    /// Read this many more bytes, then call again with all of them.
    Need(usize),
    /// The server accepted: the connected core, and the identity it assigned a tool
    /// that asked for one.
    Done(Box<ClientCore>, Option<(String, u32)>),
    /// The server refused with this error. With `drain`, let the server close the
    /// connection before closing it here (OpenPMIx 4.2.2's server, in Open MPI 4.1's
    /// `mpirun`, crashes when a refused tool's end goes first).
    Refused {
        /// Why.
        error: Error,
        /// Read until the server closes before closing.
        drain: bool,
    },
}

impl Handshake {
    /// Starts the handshake of `env`'s process (`tool`: as a tool, docs/wire.md
    /// §3.1): returns it and the connect message's bytes to send.
    ///
    /// # Errors
    /// [`Error::BadParam`] when the connect message cannot be encoded (a namespace
    /// over the limit); [`Error::Internal`] when our own message has no codec.
    pub(crate) fn start(env: &ServerEnv, tool: bool) -> Result<(Handshake, Vec<u8>), Error> {
        let msg = connect_msg(env, tool)?;
        let codec = msg
            .codec(Limits::DEFAULT)
            .map_err(|e| Error::Internal(format!("our connect message: {e}")))?;
        let bytes = msg
            .encode()
            .map_err(|e| Error::BadParam(format!("the connect message: {e}").into()))?;
        // The server's own name (`nspace.rank` before the URI's `;`).
        let server = match env.server.rsplit_once('.') {
            Some((ns, r)) => Proc::new(ns, r.parse().unwrap_or(0)),
            None => Proc::new(env.server.as_str(), 0),
        };
        Ok((
            Handshake {
                tool,
                needs_id: env.nspace.is_empty(),
                codec,
                server,
                server_name: env.server.clone(),
                got: Vec::new(),
                first: None,
            },
            bytes,
        ))
    }

    /// The frame of `req`, to be sent right behind the connect message, before the
    /// server's answer (the job information a client asks for first: one round trip
    /// for both). Its pindex is −1, as a tool's, since the index comes with the
    /// answer (no server reads a request's pindex, docs/wire.md §4); `done` gets the
    /// reply once the handshake is done, and is dropped unrun if it is refused.
    ///
    /// # Errors
    /// [`Error::BadParam`] when `req` cannot be encoded; [`Error::Internal`] for a
    /// second request.
    pub(crate) fn pipeline(&mut self, req: &Request, done: Completion) -> Result<Vec<u8>, Error> {
        if self.first.is_some() {
            return Err(Error::Internal(
                "one request rides with the handshake".into(),
            ));
        }
        let payload = req.encode(&self.codec).map_err(|e| {
            Error::BadParam(format!("{:?} cannot be encoded: {e}", req.command()).into())
        })?;
        let tag = next_tag(TAG_DYNAMIC);
        let bytes = Frame::new(-1, tag, payload)
            .and_then(|f| f.encode())
            .map_err(|e| Error::BadParam(format!("the request's frame: {e}").into()))?;
        self.first = Some((tag, req.command(), done));
        Ok(bytes)
    }

    /// Takes `bytes` (the next part of the server's answer; none at first, to learn
    /// how many to read) and says what they make.
    pub(crate) fn receive(&mut self, bytes: &[u8]) -> Step {
        self.got.extend_from_slice(bytes);
        let refusal = |status: i32, server: &str| Error::Status {
            status: pmix_core::Status(status),
            why: format!("the PMIx server {server} refused the handshake").into(),
        };
        let (pindex, assigned) = if self.tool {
            let accept = match ToolReply::decode(&self.got, self.needs_id) {
                Ok(Decoded::Item { item, .. }) => item,
                Ok(Decoded::NeedMore(n)) => return Step::Need(n),
                Err(e) => {
                    return Step::Refused {
                        error: Error::Internal(format!(
                            "the PMIx server's tool handshake reply: {e}"
                        )),
                        drain: false,
                    };
                }
            };
            match accept.accept {
                Some(a) if accept.status == 0 && a.cred_status == 0 => (-1, a.assigned),
                refused => {
                    let status = match refused {
                        Some(a) if accept.status == 0 => a.cred_status,
                        _ => accept.status,
                    };
                    return Step::Refused {
                        error: refusal(status, &self.server_name),
                        drain: true,
                    };
                }
            }
        } else {
            let item = match ClientReply::decode(&self.got) {
                Decoded::Item { item, .. } => item,
                Decoded::NeedMore(n) => return Step::Need(n),
            };
            if item.status != 0 {
                return Step::Refused {
                    error: refusal(item.status, &self.server_name),
                    drain: false,
                };
            }
            (item.index as i32, None)
        };
        let mut waiting = HashMap::new();
        let mut tag = TAG_DYNAMIC;
        if let Some((t, command, done)) = self.first.take() {
            waiting.insert(t, (command, done));
            tag = t;
        }
        let core = ClientCore {
            codec: self.codec.clone(),
            pindex,
            tag,
            waiting,
            lost: None,
            decoder: FrameDecoder::new(Limits::DEFAULT),
            inbuf: Vec::new(),
            server: self.server.clone(),
        };
        Step::Done(Box::new(core), assigned)
    }
}

/// A connected client's protocol state (module docs).
pub(crate) struct ClientCore {
    codec: Codec,
    pindex: i32,
    /// The last tag used.
    tag: u32,
    /// The requests waiting for their replies: the command (how the reply decodes)
    /// and the completion.
    waiting: HashMap<u32, (Command, Completion)>,
    /// Why the link is gone, once it is.
    lost: Option<String>,
    decoder: FrameDecoder,
    inbuf: Vec<u8>,
    server: Proc,
}

impl ClientCore {
    /// The codec of this connection.
    pub(crate) fn codec(&self) -> &Codec {
        &self.codec
    }

    /// Starts `req` with a fresh tag: `done` (none: a request without a reply, such
    /// as DEREGEVENTS) waits for its reply. Returns the tag and the frame's bytes
    /// to send.
    ///
    /// # Errors
    /// [`Error::BadParam`] when `req` cannot be encoded; [`Error::Unreach`] when the
    /// link is gone. `done` is then dropped unrun.
    pub(crate) fn start(
        &mut self,
        req: &Request,
        done: Option<Completion>,
    ) -> Result<(u32, Vec<u8>), Error> {
        if let Some(why) = &self.lost {
            return Err(Error::Unreach(why.clone().into()));
        }
        let payload = req.encode(&self.codec).map_err(|e| {
            Error::BadParam(format!("{:?} cannot be encoded: {e}", req.command()).into())
        })?;
        let tag = next_tag(self.tag);
        let bytes = Frame::new(self.pindex, tag, payload)
            .and_then(|f| f.encode())
            .map_err(|e| Error::BadParam(format!("the request's frame: {e}").into()))?;
        self.tag = tag;
        if let Some(done) = done {
            self.waiting.insert(tag, (req.command(), done));
        }
        Ok((tag, bytes))
    }

    /// Forgets the request of `tag` whose bytes could not be sent: its completion is
    /// dropped unrun (the caller gets the error instead).
    pub(crate) fn cancel(&mut self, tag: u32) {
        self.waiting.remove(&tag);
    }

    /// Takes bytes received from the server: each whole frame becomes a
    /// [`Delivery`] in `out` — a reply to its request's completion, decoded as the
    /// reply to that request's command (every reply of every call family goes
    /// through here), an event (tag 0) to the sink. A reply to no request of ours is
    /// dropped, as is an event that does not decode. Bytes that are not frames lose
    /// the link ([`ClientCore::lose`]).
    pub(crate) fn receive(&mut self, bytes: &[u8], out: &mut Vec<Delivery>) {
        if self.lost.is_some() {
            return;
        }
        self.inbuf.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            match self
                .decoder
                .decode(self.inbuf.get(at..).unwrap_or_default())
            {
                Ok(Decoded::Item { item, used }) => {
                    at += used;
                    self.deliver(item, out);
                }
                Ok(Decoded::NeedMore(_)) => break,
                Err(e) => {
                    self.inbuf.clear();
                    self.lose(format!("the PMIx server sent a bad frame: {e}"), true, out);
                    return;
                }
            }
        }
        self.inbuf.drain(..at);
    }

    fn deliver(&mut self, frame: Frame, out: &mut Vec<Delivery>) {
        let tag = frame.header.tag;
        if tag == TAG_EVENT {
            if let Ok(ev) = pmix_wire::decode_event(&frame.payload, &self.codec) {
                out.push(Delivery::Event(ev));
            }
            return;
        }
        // I/O forwarding (tag 2), which we never ask for, lands here too.
        if let Some((command, done)) = self.waiting.remove(&tag) {
            let reply = decode_reply(command, &frame.payload, &self.codec).map_err(|e| {
                Error::Internal(format!(
                    "the server's reply to {command:?} does not decode: {e}"
                ))
            });
            out.push(Delivery::Reply(done, reply));
        }
    }

    /// The link is gone (`why`): every waiting request gets [`Error::Unreach`] and
    /// later ones are refused. With `tell`, and unless this process closed the link
    /// itself ([`ClientCore::close`]), the sink hears `PMIX_ERR_LOST_CONNECTION` from
    /// the server, as OpenPMIx's default handlers do.
    pub(crate) fn lose(&mut self, why: String, tell: bool, out: &mut Vec<Delivery>) {
        let closed_by_us = self.lost.is_some();
        let why = self.lost.get_or_insert(why).clone();
        for (_, (_, done)) in self.waiting.drain() {
            out.push(Delivery::Reply(
                done,
                Err(Error::Unreach(why.clone().into())),
            ));
        }
        if tell && !closed_by_us {
            out.push(Delivery::Event(Event {
                status: pmix_core::Status::ERR_LOST_CONNECTION,
                source: self.server.clone(),
                info: Vec::new(),
                range: None,
            }));
        }
    }

    /// Whether a request still waits for its reply.
    pub(crate) fn has_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Whether the link is gone (lost, or closed by this process).
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.is_some()
    }

    /// This process closes the link: later requests are refused (the pending ones
    /// end when the shell reports the loss).
    pub(crate) fn close(&mut self) {
        self.lost
            .get_or_insert_with(|| "the connection to the PMIx server was closed".into());
    }

    /// Completes every waiting request with `error` (a reply that comes later is
    /// dropped); the link stays up.
    pub(crate) fn fail_pending(&mut self, error: &Error, out: &mut Vec<Delivery>) {
        for (_, (_, done)) in self.waiting.drain() {
            out.push(Delivery::Reply(done, Err(error.clone())));
        }
    }
}

/// The connect message of a launched OpenPMIx 4.2.2 client, or of a tool: `native`
/// credential (effective uid and gid, host order), non-described or fully described
/// buffers as the server said, the `hash` store.
fn connect_msg(env: &ServerEnv, tool: bool) -> Result<ConnectMsg, Error> {
    let (uid, gid) = crate::os::effective_ids();
    let mut credential = uid.to_ne_bytes().to_vec();
    credential.extend_from_slice(&gid.to_ne_bytes());
    let (identity, trailer) = if tool {
        let cmdline = std::env::args().collect::<Vec<_>>().join(" ");
        let info = [
            pmix_wire::Info::new(
                pmix_wire::keys::PROC_PID,
                pmix_wire::Value::Pid(std::process::id()),
            ),
            pmix_wire::Info::new(pmix_wire::keys::CMD_LINE, pmix_wire::Value::string(cmdline)),
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
        gds: if env.node_store {
            pmix_wire::nodestore::GDS_NAME.into()
        } else {
            "hash".into()
        },
        trailer,
    })
}
