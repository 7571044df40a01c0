//! A client's TCP link to its server: the handshake's bytes over the socket
//! (`Handshake`, docs/wire.md §3), each request's frame written by the caller, and
//! whoever reads the socket hands the bytes to the client's protocol core
//! (`ClientCore`, `core.rs`), which matches replies to requests by tag (§4) and
//! decodes them. Every byte is made and read by `pmix-wire`.
//!
//! **Who reads.** Until something needs the server's bytes while no caller waits,
//! nobody reads between calls: a blocking call made through `Conn::blocking` (the
//! job information at init, a fence, a get, a commit, finalize) reads the socket on
//! its own thread until its reply is in, as OpenPMIx's own blocking calls wait for
//! their reply. The first request sent otherwise (a non-blocking call, a handler's
//! registration, any other family) starts the reader thread, which from then on reads
//! everything; so does a blocking call that ends while another thread's request is
//! still waiting. So a process that inits, fences and finalizes starts no thread for
//! its link, and a server's event (which only a handler or a group waits for: both
//! are requests that start the thread first) is never left unread while someone
//! listens for it.
//!
//! **Threads.** The caller starts its request in the core (under the core's lock,
//! which registers the completion and gives the frame's bytes) and writes the bytes
//! (under the socket's lock, so frames never interleave); the reader (the thread, or
//! a blocking caller) reads, passes the bytes to the core, and runs the `Delivery`s
//! it gets back after releasing the lock: each reply to its request's completion, each event (tag 0)
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
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

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

/// A client's socket: TCP to the server's listener, or the end of a socket pair
/// its launcher made for it (`PMIX_RS_SERVER_FD`, [`ServerEnv::channel`]).
enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Sock {
    /// The socket to `env`'s server: the launcher's socket pair when the
    /// environment names one that is this process's to take, else a TCP connection
    /// (within `wait`, without Nagle's delay). Tools always connect.
    fn open(env: &ServerEnv, tool: bool, wait: Duration) -> std::io::Result<Sock> {
        if !tool
            && let Some(s) = env
                .channel
                .and_then(|(fd, pid)| crate::os::take_channel(fd, pid))
        {
            return Ok(Sock::Unix(s));
        }
        let s = TcpStream::connect_timeout(&env.addr, wait)?;
        s.set_nodelay(true)?;
        Ok(Sock::Tcp(s))
    }

    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Sock::Tcp(s) => s.set_read_timeout(t),
            Sock::Unix(s) => s.set_read_timeout(t),
        }
    }

    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Sock::Tcp(s) => s.set_write_timeout(t),
            Sock::Unix(s) => s.set_write_timeout(t),
        }
    }

    fn try_clone(&self) -> std::io::Result<Sock> {
        Ok(match self {
            Sock::Tcp(s) => Sock::Tcp(s.try_clone()?),
            Sock::Unix(s) => Sock::Unix(s.try_clone()?),
        })
    }

    fn shutdown(&self) -> std::io::Result<()> {
        match self {
            Sock::Tcp(s) => s.shutdown(Shutdown::Both),
            Sock::Unix(s) => s.shutdown(Shutdown::Both),
        }
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(buf),
            Sock::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(buf),
            Sock::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Socket(Mutex<Sock>);

impl Link for Socket {
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
            .shutdown();
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

/// Who reads the socket (module docs).
enum Reading {
    /// Nobody: the read half waits for the next blocking caller or the thread.
    Idle(Sock),
    /// The blocking caller on thread `by` reads; `wanted` once another thread sent a
    /// request (the reader thread starts when that caller is done).
    Caller { by: ThreadId, wanted: bool },
    /// The reader thread reads.
    Thread(JoinHandle<()>),
    /// Nobody here: an in-memory link (its owner delivers), or the link is gone.
    Elsewhere,
}

/// A connected client's link to its server.
pub(crate) struct Conn {
    shared: Arc<Shared>,
    codec: Codec,
    link: Arc<dyn Link>,
    reading: Mutex<Reading>,
}

impl Conn {
    /// Connects to `env`'s server as `env`'s process (over the launcher's socket
    /// pair when there is one, else TCP) and completes the handshake, each step
    /// bounded by `wait`, with `req` sent right behind the connect message
    /// ([`Handshake::pipeline`]: the handshake and `req` in one round trip); returns
    /// the connection and `req`'s reply, read on this thread. Events go to `events`
    /// once someone reads (module docs).
    ///
    /// # Errors
    /// [`Error::Unreach`] when the server cannot be reached, closes the connection
    /// (how an OpenPMIx server refuses a client) or does not answer within `wait`;
    /// the server's status when it answers with one other than success; as
    /// [`Conn::call`] for `req`.
    pub(crate) fn connect_asking(
        env: &ServerEnv,
        wait: Duration,
        events: EventSink,
        req: &Request,
    ) -> Result<(Conn, Reply), Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        let done: Completion = Box::new(move |r| {
            let _ = tx.send(r);
        });
        let (conn, _) = Self::connect_as(env, false, wait, events, Some((req, done)))?;
        let stream = conn.take_reader();
        let reply = conn.wait_for(stream, &rx, None, Error::lost)?;
        Ok((conn, reply))
    }

    /// Connects to `env`'s server as a tool (its pid and command line in the
    /// trailer, docs/wire.md §3.1) and completes the handshake as [`Conn::connect_asking`]
    /// does; returns the tool's identity. A tool started by that server (`env` names
    /// a namespace: `PMIX_NAMESPACE` / `PMIX_RANK` were set) is type 5 with that
    /// identity, as libpmix2's; any other is type 3 and takes the identifier the
    /// server assigns (Open MPI 4.1's `mpirun` refuses both kinds, and its OpenPMIx
    /// 4.2.2 server crashes on a refused type-3 tool, so a launched tool never asks
    /// for an identifier).
    ///
    /// # Errors
    /// As [`Conn::connect_asking`]; a nonzero status in the tool reply is that status.
    pub(crate) fn connect_tool(
        env: &ServerEnv,
        wait: Duration,
        events: EventSink,
    ) -> Result<(Conn, (String, u32)), Error> {
        let (conn, id) = Self::connect_as(env, true, wait, events, None)?;
        Ok((conn, tool_identity(env, id)?))
    }

    fn connect_as(
        env: &ServerEnv,
        tool: bool,
        wait: Duration,
        events: EventSink,
        first: Option<(&Request, Completion)>,
    ) -> Result<(Conn, Option<(String, u32)>), Error> {
        let unreach = |what: &str, e: std::io::Error| {
            Error::Unreach(
                format!("PMIx server {} at {}: {what}: {e}", env.server, env.addr).into(),
            )
        };
        let mut stream = Sock::open(env, tool, wait).map_err(|e| unreach("connect", e))?;
        stream
            .set_read_timeout(Some(wait))
            .map_err(|e| unreach("read timeout", e))?;
        stream
            .set_write_timeout(Some(wait))
            .map_err(|e| unreach("write timeout", e))?;
        let (mut handshake, mut hello) = Handshake::start(env, tool)?;
        if let Some((req, done)) = first {
            hello.extend(handshake.pipeline(req, done)?);
        }
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
        let mut conn = Conn::over(*core, Arc::new(Socket(Mutex::new(stream))), events);
        conn.reading = Mutex::new(Reading::Idle(read_half));
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
            reading: Mutex::new(Reading::Elsewhere),
        }
    }

    fn reading(&self) -> MutexGuard<'_, Reading> {
        // No user code runs under this lock.
        self.reading.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes sure someone will read the reply of a request this thread is about to
    /// send: the blocking caller reading now, else the reader thread (started here
    /// if nobody reads).
    ///
    /// # Errors
    /// [`Error::Os`] when the reader thread cannot be started.
    fn ensure_reader(&self) -> Result<(), Error> {
        let mut reading = self.reading();
        match &mut *reading {
            Reading::Caller { by, wanted } => {
                if *by != std::thread::current().id() {
                    *wanted = true;
                }
                Ok(())
            }
            Reading::Idle(_) => {
                let Reading::Idle(stream) = std::mem::replace(&mut *reading, Reading::Elsewhere)
                else {
                    return Ok(());
                };
                *reading = self.spawn_reader(stream)?;
                Ok(())
            }
            Reading::Thread(_) | Reading::Elsewhere => Ok(()),
        }
    }

    /// The reader thread over `stream`, as a [`Reading`].
    ///
    /// # Errors
    /// [`Error::Os`] when it cannot be started.
    fn spawn_reader(&self, stream: Sock) -> Result<Reading, Error> {
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("pmix-client-reader".into())
            .spawn(move || read_loop(stream, &shared))
            .map(Reading::Thread)
            .map_err(|e| Error::Os(format!("cannot start the client's reader thread: {e}")))
    }

    /// Runs a blocking call: `start` sends its request(s) with the completion it is
    /// given, and this waits for that completion, at most `wait`. While nobody else
    /// reads the socket, it is read here, on the caller's thread (module docs), and
    /// handed back afterwards (to the reader thread if another request is still
    /// waiting); otherwise this waits for whoever reads.
    ///
    /// # Errors
    /// `start`'s; `dropped()` when the completion is dropped unrun (the connection
    /// went away); `PMIX_ERR_TIMEOUT` past `wait`.
    pub(crate) fn blocking<T: Send + 'static>(
        &self,
        wait: Option<Duration>,
        start: impl FnOnce(super::Done<T>) -> Result<(), Error>,
        dropped: impl FnOnce() -> Error,
    ) -> Result<T, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        let done: super::Done<T> = Box::new(move |r| {
            let _ = tx.send(r);
        });
        let stream = self.take_reader();
        if let Err(e) = start(done) {
            if let Some(stream) = stream {
                self.hand_back(stream);
            }
            return Err(e);
        }
        self.wait_for(stream, &rx, wait, dropped)
    }

    /// The socket's read half for this thread to read, when nobody reads it
    /// (this thread is then the reader until [`Conn::hand_back`]).
    fn take_reader(&self) -> Option<Sock> {
        let me = std::thread::current().id();
        let mut reading = self.reading();
        match std::mem::replace(
            &mut *reading,
            Reading::Caller {
                by: me,
                wanted: false,
            },
        ) {
            Reading::Idle(stream) => Some(stream),
            other => {
                *reading = other;
                None
            }
        }
    }

    /// Waits for `rx`, at most `wait`: reading `stream` here when this thread holds
    /// it (and handing it back after), else waiting for whoever reads.
    ///
    /// # Errors
    /// What `rx` gets; `dropped()` when its sender is dropped unused;
    /// `PMIX_ERR_TIMEOUT` past `wait`.
    fn wait_for<T>(
        &self,
        stream: Option<Sock>,
        rx: &mpsc::Receiver<Result<T, Error>>,
        wait: Option<Duration>,
        dropped: impl FnOnce() -> Error,
    ) -> Result<T, Error> {
        let Some(mut stream) = stream else {
            let got = match wait {
                None => rx.recv().ok(),
                Some(w) => match rx.recv_timeout(w) {
                    Ok(v) => Some(v),
                    Err(mpsc::RecvTimeoutError::Timeout) => return Err(timed_out(w)),
                    Err(mpsc::RecvTimeoutError::Disconnected) => None,
                },
            };
            return got.ok_or_else(dropped)?;
        };
        let deadline = wait.map(|w| (Instant::now() + w, w));
        // One page to start with (a 64 KiB buffer costs 16 page faults the first
        // time, more than the reads it serves); doubled while reads fill it.
        let mut chunk = vec![0u8; 4096];
        let got = loop {
            match rx.try_recv() {
                Ok(v) => break Ok(Some(v)),
                Err(mpsc::TryRecvError::Disconnected) => break Ok(None),
                Err(mpsc::TryRecvError::Empty) => {}
            }
            if let Some((at, w)) = deadline {
                let left = at.saturating_duration_since(Instant::now());
                if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
                    break Err(timed_out(w));
                }
            }
            match read_once(&mut stream, &mut chunk, &self.shared) {
                Ok(n) => {
                    if n == chunk.len() && n < READ_CHUNK {
                        chunk.resize(n * 2, 0);
                    }
                }
                Err(why) => self.shared.lose(why),
            }
            if self.shared.lock().is_lost() {
                // Whatever completes the wait has run by now (a loss fails it).
                break Ok(rx.try_recv().ok());
            }
        };
        if deadline.is_some() {
            let _ = stream.set_read_timeout(None);
        }
        self.hand_back(stream);
        got?.ok_or_else(dropped)?
    }

    /// A blocking caller is done reading: the socket goes to the reader thread when
    /// another request waits (or another thread asked), else back to idle; nowhere
    /// once the link is gone or closed.
    fn hand_back(&self, stream: Sock) {
        let mut reading = self.reading();
        let Reading::Caller { wanted, .. } = *reading else {
            // Closed meanwhile ([`Conn::close`]).
            return;
        };
        let (lost, waiting) = {
            let core = self.shared.lock();
            (core.is_lost(), core.has_waiting())
        };
        *reading = if lost {
            Reading::Elsewhere
        } else if wanted || waiting {
            match self.spawn_reader(stream) {
                Ok(r) => r,
                Err(e) => {
                    drop(reading);
                    // Nobody could read their replies: they fail now, not never.
                    self.fail_pending(&e);
                    return;
                }
            }
        } else {
            Reading::Idle(stream)
        };
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
        if done.is_some() {
            self.ensure_reader()?;
        }
        let (tag, bytes) = self.shared.lock().start(req, done)?;
        if let Err(e) = self.link.write(&bytes) {
            // Not sent: the completion is not run (the caller gets the error).
            self.shared.lock().cancel(tag);
            return Err(e);
        }
        Ok(())
    }

    /// Sends `req` and waits for its reply, decoded ([`Conn::blocking`]); `wait`
    /// bounds the wait (`None`: until the reply or the loss of the connection).
    ///
    /// # Errors
    /// As [`Conn::send`]; [`Error::Unreach`] when the connection is lost before the
    /// reply; `PMIX_ERR_TIMEOUT` past `wait`; [`Error::Internal`] for a reply that
    /// does not decode as `req`'s.
    pub(crate) fn call(&self, req: &Request, wait: Option<Duration>) -> Result<Reply, Error> {
        self.blocking(wait, |done| self.send(req, done), Error::lost)
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
        let reading = std::mem::replace(&mut *self.reading(), Reading::Elsewhere);
        if let Reading::Thread(h) = reading
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

/// The most a reader reads at once.
const READ_CHUNK: usize = 64 * 1024;

fn timed_out(w: Duration) -> Error {
    Error::Status {
        status: pmix_core::Status::ERR_TIMEOUT,
        why: format!("no reply from the PMIx server within {w:?}").into(),
    }
}

/// One read of `stream` into `chunk`, handed to `shared`'s core: the bytes read (0
/// when interrupted, or when a read timeout passed); why the link is over when the
/// server closed it, sent bytes that are not frames, or the read failed.
fn read_once(stream: &mut Sock, chunk: &mut [u8], shared: &Shared) -> Result<usize, String> {
    use std::io::ErrorKind::{Interrupted, TimedOut, WouldBlock};
    match stream.read(chunk) {
        Ok(0) => Err("the PMIx server closed the connection".to_owned()),
        Ok(n) if shared.receive(chunk.get(..n).unwrap_or_default()) => Ok(n),
        Ok(_) => Err("the PMIx server sent bytes that are not frames".to_owned()),
        Err(e) if matches!(e.kind(), Interrupted | WouldBlock | TimedOut) => Ok(0),
        Err(e) => Err(format!("reading from the PMIx server: {e}")),
    }
}

/// The reader thread: bytes to the core until the socket closes or fails.
fn read_loop(mut stream: Sock, shared: &Shared) {
    let mut chunk = vec![0u8; READ_CHUNK];
    let why = loop {
        if let Err(why) = read_once(&mut stream, &mut chunk, shared) {
            break why;
        }
    };
    shared.lose(why);
}
