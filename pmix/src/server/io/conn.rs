//! One accepted connection: its socket, what it has sent that is not yet a whole
//! message, and what is queued for it.

use std::io::{self, Read, Write};
use std::time::Instant;

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use pmix_core::CpuSet;

/// A connection's socket: accepted on the TCP listener, or one end of a socket pair
/// the launcher made for a rank it starts ([`Server::client_channel`](super::Server::client_channel)).
#[derive(Debug)]
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// The binding of the process at the other end of a loopback TCP connection,
    /// when it is one of this process's descendants bound to a strict part of `own`
    /// (`sock_diag` gives the client socket's inode, [`crate::os::descendant_holding`]
    /// the process holding it, among the bound descendants only); `None` otherwise,
    /// and for a socket pair.
    pub(crate) fn peer_binding(&self, own: &CpuSet) -> Option<CpuSet> {
        let bound = |pid: u32| {
            crate::os::process_binding(pid)
                .ok()
                .filter(|set| !set.is_empty() && set != own && set.is_subset(own))
        };
        match self {
            Stream::Tcp(s) => {
                let (ours, peer) = (s.local_addr().ok()?, s.peer_addr().ok()?);
                let (_, inode) = crate::server::net::sock_diag_owner(ours, peer).ok()?;
                crate::os::descendant_holding(inode, bound)
            }
            Stream::Unix(_) => None,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Unix(s) => s.register(r, t, i),
        }
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Unix(s) => s.reregister(r, t, i),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
        }
    }
}

/// An empty input buffer keeps at most this much capacity.
const SHRINK_ABOVE: usize = 1 << 20;

/// The most bytes read from one socket before the others get a turn.
pub(crate) const READ_BUDGET: usize = 1 << 20;

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for the whole connect message, until the deadline (none for a
    /// launcher's socket pair: its rank may never call `PMIx_Init`).
    Handshake { deadline: Option<Instant> },
    /// Exchanging frames.
    Framed,
    /// The core closed it: write what is queued until the deadline, then drop it.
    Closing { deadline: Instant },
}

/// An accepted connection.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) stream: Stream,
    /// The socket's real owner (from the kernel's socket table; this process for a
    /// socket pair).
    pub(crate) peer_uid: u32,
    pub(crate) phase: Phase,
    /// Its requests are not read until what is queued for it drains
    /// ([`ServerConfig::read_pause_output`](super::ServerConfig::read_pause_output)).
    pub(crate) paused: bool,
    /// Received bytes not yet consumed: `inbuf[inpos..]`.
    inbuf: Vec<u8>,
    inpos: usize,
    /// Bytes to send: `out[outpos..]`.
    out: Vec<u8>,
    outpos: usize,
    /// The unconsumed input last counted in the server's total of unfinished
    /// messages, and since when it has held some.
    pub(crate) counted: usize,
    pub(crate) unfinished_since: Option<Instant>,
    /// The bytes it sent us in all.
    pub(crate) received: u64,
}

/// What reading did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// The socket has nothing more now.
    Drained,
    /// The budget was used up: read again later.
    Budget,
    /// The peer closed its end (what came before is still in the buffer).
    Eof,
}

impl Conn {
    pub(crate) fn new(stream: Stream, peer_uid: u32, handshake_deadline: Option<Instant>) -> Conn {
        Conn {
            stream,
            peer_uid,
            phase: Phase::Handshake {
                deadline: handshake_deadline,
            },
            paused: false,
            inbuf: Vec::new(),
            inpos: 0,
            out: Vec::new(),
            outpos: 0,
            counted: 0,
            unfinished_since: None,
            received: 0,
        }
    }

    /// The bytes received and not consumed.
    pub(crate) fn input(&self) -> &[u8] {
        self.inbuf.get(self.inpos..).unwrap_or_default()
    }

    /// Marks the first `n` bytes of [`Conn::input`] consumed.
    pub(crate) fn consume(&mut self, n: usize) {
        self.inpos = (self.inpos + n).min(self.inbuf.len());
        if self.inpos == self.inbuf.len() {
            self.inbuf.clear();
            self.inpos = 0;
            // A large message read once is not held as capacity for ever.
            if self.inbuf.capacity() > SHRINK_ABOVE {
                self.inbuf.shrink_to(SHRINK_ABOVE);
            }
        }
    }

    /// Reads what the socket has, at most [`READ_BUDGET`] bytes, appending to the
    /// input.
    ///
    /// # Errors
    /// The socket's error (the connection is dead).
    pub(crate) fn read_some(&mut self, scratch: &mut [u8]) -> io::Result<ReadOutcome> {
        // Drop what was consumed before growing the buffer.
        if self.inpos > 0 {
            self.inbuf.drain(..self.inpos);
            self.inpos = 0;
        }
        let mut total = 0;
        loop {
            match self.stream.read(scratch) {
                Ok(0) => return Ok(ReadOutcome::Eof),
                Ok(n) => {
                    self.inbuf
                        .extend_from_slice(scratch.get(..n).unwrap_or_default());
                    total += n;
                    self.received += n as u64;
                    if total >= READ_BUDGET {
                        return Ok(ReadOutcome::Budget);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(ReadOutcome::Drained);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The number of bytes queued and not yet written.
    pub(crate) fn pending(&self) -> usize {
        self.out.len() - self.outpos
    }

    /// Queues `bytes` after what is queued already.
    pub(crate) fn queue(&mut self, bytes: &[u8]) {
        if self.outpos == self.out.len() {
            self.out.clear();
            self.outpos = 0;
        }
        self.out.extend_from_slice(bytes);
    }

    /// Writes what is queued until the socket takes no more.
    ///
    /// # Errors
    /// The socket's error (the connection is dead).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        while self.outpos < self.out.len() {
            match self
                .stream
                .write(self.out.get(self.outpos..).unwrap_or_default())
            {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.outpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.outpos == self.out.len() {
            self.out.clear();
            self.outpos = 0;
        } else if self.outpos > (1 << 20) && self.outpos * 2 > self.out.len() {
            self.out.drain(..self.outpos);
            self.outpos = 0;
        }
        Ok(())
    }
}
