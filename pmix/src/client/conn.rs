//! A client's TCP link to its server: the handshake's bytes over the socket
//! (`Handshake`, docs/wire.md §3), each request's frame written by the caller, and
//! one reader thread that hands what it reads to the client's protocol core
//! (`ClientCore`, `core.rs`), which matches replies to requests by tag (§4) and
//! decodes them. Every byte is made and read by `pmix-wire`.
//!
//! **Threads.** The caller starts its request in the core (under the core's lock,
//! which registers the completion and gives the frame's bytes) and writes the bytes
//! (under the socket's lock, so frames never interleave); the reader thread reads,
//! passes the bytes to the core, and runs the `Delivery`s it gets back after
//! releasing the lock: each reply to its request's completion, each event (tag 0)
//! to the event sink. A completion must be quick: a blocking caller's is a channel
//! send. When the server's socket closes (or sends bytes that are not frames), every
//! pending completion gets [`Error::Unreach`] at once and every later request is
//! refused the same way: nobody waits for a server that is gone; and the event sink
//! gets `PMIX_ERR_LOST_CONNECTION` from the server (unless this process closed the
//! connection itself).
//!
//! The same `Conn` also runs over an in-memory `Link` ([`crate::sim`]).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use pmix_wire::{Codec, Reply, Request};

pub use super::core::WIRE_VERSION;
use super::core::{ClientCore, Completion, Delivery, Handshake, Step};
use super::env::ServerEnv;
use crate::error::Error;

/// What receives the server's events (tag 0 frames, decoded; one that does not
/// decode is dropped), on the thread that received them.
pub(crate) type EventSink = Box<dyn Fn(pmix_wire::Event) + Send + Sync + 'static>;

/// Where a connection's bytes go: a socket, or an in-memory server.
pub(crate) trait Link: Send + Sync {
    /// Writes one whole frame.
    ///
    /// # Errors
    /// [`Error::Unreach`] when the bytes cannot be sent.
    fn write(&self, bytes: &[u8]) -> Result<(), Error>;
    /// Closes the link both ways (the reader, if any, then sees the end).
    fn shutdown(&self);
}

struct Tcp(Mutex<TcpStream>);

impl Link for Tcp {
    fn write(&self, bytes: &[u8]) -> Result<(), Error> {
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        s.write_all(bytes)
            .map_err(|e| Error::Unreach(format!("sending to the PMIx server: {e}").into()))
    }

    fn shutdown(&self) {
        let _ = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .shutdown(Shutdown::Both);
    }
}

/// The protocol core and the event sink, shared by the callers and whoever receives
/// the server's bytes.
pub(crate) struct Shared {
    core: Mutex<ClientCore>,
    events: EventSink,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ClientCore> {
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands `bytes` from the server to the core, then runs what they complete (with
    /// the core's lock released). Returns `false` once the link is gone (the bytes
    /// were not frames, or this process closed it): stop reading.
    pub(crate) fn receive(&self, bytes: &[u8]) -> bool {
        let mut out = Vec::new();
        let up = {
            let mut core = self.lock();
            core.receive(bytes, &mut out);
            !core.is_lost()
        };
        self.run(out);
        up
    }

    /// The link is gone (`why`): pending requests fail, the sink hears it (unless
    /// this process closed the link).
    pub(crate) fn lose(&self, why: String) {
        let mut out = Vec::new();
        self.lock().lose(why, true, &mut out);
        self.run(out);
    }

    fn run(&self, out: Vec<Delivery>) {
        for d in out {
            d.run(&self.events);
        }
    }
}

/// A connected client's link to its server.
pub(crate) struct Conn {
    shared: Arc<Shared>,
    codec: Codec,
    link: Arc<dyn Link>,
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
        Ok((conn, tool_identity(env, id)?))
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
        let (mut handshake, hello) = Handshake::start(env, tool)?;
        stream
            .write_all(&hello)
            .map_err(|e| unreach("sending the connect message", e))?;
        let refused = |e| {
            unreach(
                "the handshake (the server refuses an unknown namespace or rank, or a \
                 credential it does not accept, by closing the connection)",
                e,
            )
        };
        let mut got = Vec::new();
        let (core, assigned) = loop {
            match handshake.receive(&got) {
                Step::Need(n) => {
                    got.resize(n, 0);
                    stream.read_exact(&mut got).map_err(refused)?;
                }
                Step::Done(core, assigned) => break (core, assigned),
                Step::Refused { error, drain } => {
                    if drain {
                        let mut rest = [0u8; 64];
                        while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
                    }
                    return Err(error);
                }
            }
        };
        stream
            .set_read_timeout(None)
            .map_err(|e| unreach("read timeout", e))?;
        let read_half = stream
            .try_clone()
            .map_err(|e| unreach("cloning the socket", e))?;
        let conn = Conn::over(*core, Arc::new(Tcp(Mutex::new(stream))), events);
        let reader = {
            let shared = Arc::clone(&conn.shared);
            std::thread::Builder::new()
                .name("pmix-client-reader".into())
                .spawn(move || read_loop(read_half, &shared))
                .map_err(|e| Error::Os(format!("cannot start the client's reader thread: {e}")))?
        };
        *conn.reader.lock().unwrap_or_else(PoisonError::into_inner) = Some(reader);
        Ok((conn, assigned))
    }

    /// A connection over `link` whose handshake `core` completed; whoever reads the
    /// link hands the bytes to [`Conn::shared`]'s `receive`.
    pub(crate) fn over(core: ClientCore, link: Arc<dyn Link>, events: EventSink) -> Conn {
        Conn {
            codec: core.codec().clone(),
            shared: Arc::new(Shared {
                core: Mutex::new(core),
                events,
            }),
            link,
            reader: Mutex::new(None),
        }
    }

    /// The core and sink that received bytes go to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The codec of this connection.
    pub(crate) fn codec(&self) -> &Codec {
        &self.codec
    }

    /// Sends `req` with a fresh tag; `done` gets the reply, decoded as the reply to
    /// `req`'s command, or the error that ended the connection.
    ///
    /// # Errors
    /// [`Error::BadParam`] when `req` cannot be encoded; [`Error::Unreach`] when the
    /// connection is gone (`done` is then dropped unrun).
    pub(crate) fn send(&self, req: &Request, done: Completion) -> Result<(), Error> {
        self.start(req, Some(done))
    }

    /// Sends `req`, which has no reply (DEREGEVENTS), with a fresh tag.
    ///
    /// # Errors
    /// As [`Conn::send`].
    pub(crate) fn send_oneway(&self, req: &Request) -> Result<(), Error> {
        self.start(req, None)
    }

    fn start(&self, req: &Request, done: Option<Completion>) -> Result<(), Error> {
        let (tag, bytes) = self.shared.lock().start(req, done)?;
        if let Err(e) = self.link.write(&bytes) {
            // Not sent: the completion is not run (the caller gets the error).
            self.shared.lock().cancel(tag);
            return Err(e);
        }
        Ok(())
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
        match wait {
            None => rx.recv().map_err(|_| lost())?,
            Some(w) => rx.recv_timeout(w).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => Error::Status {
                    status: pmix_core::Status::ERR_TIMEOUT,
                    why: format!("no reply to {:?} within {w:?}", req.command()).into(),
                },
                mpsc::RecvTimeoutError::Disconnected => lost(),
            })?,
        }
    }

    /// Completes every request still waiting for its reply with `error` (a reply
    /// that comes later is dropped); the connection stays up.
    pub(crate) fn fail_pending(&self, error: &Error) {
        let mut out = Vec::new();
        self.shared.lock().fail_pending(error, &mut out);
        self.shared.run(out);
    }

    /// Closes the connection: later requests are refused, pending ones get
    /// [`Error::Unreach`], and the reader thread is joined (unless this runs on it).
    pub(crate) fn close(&self) {
        self.shared.lock().close();
        self.link.shutdown();
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

/// The identity of a tool: the one the server assigned, else the one `env` names.
///
/// # Errors
/// [`Error::Internal`] when neither exists.
pub(crate) fn tool_identity(
    env: &ServerEnv,
    assigned: Option<(String, u32)>,
) -> Result<(String, u32), Error> {
    match assigned {
        Some(id) => Ok(id),
        None if !env.nspace.is_empty() => Ok((env.nspace.clone(), env.rank)),
        None => Err(Error::Internal(
            "the PMIx server accepted a tool without an identifier".into(),
        )),
    }
}

fn lost() -> Error {
    Error::Unreach("the connection to the PMIx server was lost".into())
}

/// The reader thread: bytes to the core until the socket closes or fails.
fn read_loop(mut stream: TcpStream, shared: &Shared) {
    let mut chunk = vec![0u8; 64 * 1024];
    let why = loop {
        match stream.read(&mut chunk) {
            Ok(0) => break "the PMIx server closed the connection".to_owned(),
            Ok(n) => {
                if !shared.receive(chunk.get(..n).unwrap_or_default()) {
                    break "the PMIx server sent bytes that are not frames".to_owned();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break format!("reading from the PMIx server: {e}"),
        }
    };
    shared.lose(why);
}
