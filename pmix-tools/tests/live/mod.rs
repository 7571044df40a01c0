//! What the suites that load our server under `pmix-run` share (`reliability.rs`,
//! `hostile.rs`): a job watched while it runs (`rel_load`'s phases), the server
//! process seen from `/proc`, and a raw tool or client on the wire (pmix-wire makes
//! and reads every byte). Each suite uses some of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pmix_testkit::{TempDir, cprog};
use pmix_wire::msg::GetNb;
use pmix_wire::{
    BufferType, Codec, ConnectMsg, Decoded, Frame, Identity, Info, Limits, PeerKind, Rank, Reply,
    Request, ToolReply, Trailer, Version, WStr,
};

/// The bound on one job of a scenario (each takes seconds here).
pub(crate) const JOB_LIMIT: Duration = Duration::from_secs(120);
/// The bound on one wait for a line of a running job.
pub(crate) const LINE_LIMIT: Duration = Duration::from_secs(60);

/// Scenarios run one at a time.
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One row of the suite's table.
pub(crate) fn row(scenario: &str, held: &str, result: &str) {
    println!("| {scenario} | {held} | {result} |");
}

pub(crate) fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

pub(crate) fn build_ours(name: &str, dir: &TempDir) -> PathBuf {
    cprog::build_ours(&c_dir(), name, &dir.0)
}

// ---------------------------------------------------------------------------------
// A job watched while it runs.

/// A `pmix-run` job whose output is read as it comes: its lines go to a channel
/// (stdout) and a buffer (both), so a test can act between the job's steps.
pub(crate) struct LiveJob {
    pub(crate) child: Child,
    pub(crate) lines: Receiver<String>,
    pub(crate) stdout: Arc<Mutex<String>>,
    pub(crate) stderr: Arc<Mutex<String>>,
    pub(crate) readers: Vec<std::thread::JoinHandle<()>>,
}

impl LiveJob {
    /// Starts `pmix-run -n n exe args` (stdin from /dev/null).
    pub(crate) fn start(n: u32, exe: &Path, args: &[&str]) -> LiveJob {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pmix-run"))
            .env_remove("LD_LIBRARY_PATH")
            .args(["-n", &n.to_string(), "--timeout", "110"])
            .arg(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pmix-run starts");
        let (tx, lines) = mpsc::channel();
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let out_pipe = child.stdout.take().expect("stdout");
        let err_pipe = child.stderr.take().expect("stderr");
        let (so, se) = (Arc::clone(&stdout), Arc::clone(&stderr));
        let readers = vec![
            std::thread::spawn(move || {
                for l in BufReader::new(out_pipe).lines() {
                    let Ok(l) = l else { break };
                    lock(&so).push_str(&format!("{l}\n"));
                    let _ = tx.send(l);
                }
            }),
            std::thread::spawn(move || {
                for l in BufReader::new(err_pipe).lines() {
                    let Ok(l) = l else { break };
                    lock(&se).push_str(&format!("{l}\n"));
                }
            }),
        ];
        LiveJob {
            child,
            lines,
            stdout,
            stderr,
            readers,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it printed so far.
    pub(crate) fn context(&self) -> String {
        format!(
            "--- stdout\n{}\n--- stderr\n{}",
            lock(&self.stdout),
            lock(&self.stderr)
        )
    }

    /// The next stdout line starting with `prefix`, within [`LINE_LIMIT`].
    ///
    /// # Panics
    /// When none comes in time (the job is killed first).
    pub(crate) fn line(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + LINE_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(_) => {}
                Err(_) => {
                    self.kill();
                    panic!(
                        "no line {prefix:?} within {LINE_LIMIT:?}\n{}",
                        self.context()
                    );
                }
            }
        }
    }

    /// Waits for the job to end within `limit`; its status, stdout and stderr.
    ///
    /// # Panics
    /// When it runs past `limit` (it is killed first).
    pub(crate) fn wait(mut self, limit: Duration) -> (ExitStatus, String, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("wait for pmix-run") {
                break st;
            }
            if Instant::now() >= deadline {
                self.kill();
                panic!("pmix-run still ran after {limit:?}\n{}", self.context());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        for r in std::mem::take(&mut self.readers) {
            let _ = r.join();
        }
        let out = lock(&self.stdout).clone();
        let err = lock(&self.stderr).clone();
        (status, out, err)
    }

    /// Kills pmix-run (its pid; its ranks die with it: `PR_SET_PDEATHSIG`).
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LiveJob {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What `rel_load`'s rank 0 says when the job is up.
pub(crate) struct Ready {
    pub(crate) server_pid: u32,
    pub(crate) addr: SocketAddr,
    pub(crate) nspace: String,
}

pub(crate) fn parse_ready(line: &str) -> Ready {
    // rel_load ready: server_pid P uri NS.0;tcp4://127.0.0.1:PORT nspace NS
    let word = |after: &str| {
        line.split(after)
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no {after:?} in {line:?}"))
            .to_owned()
    };
    let uri = word("uri ");
    let addr = uri
        .split("tcp4://")
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no tcp4 address in {uri:?}"));
    Ready {
        server_pid: word("server_pid ").parse().expect("a pid"),
        addr,
        nspace: word("nspace "),
    }
}

/// A phase line of `rel_load`: (fences, median µs, max µs).
pub(crate) fn parse_phase(line: &str) -> (u64, u64, u64) {
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    // "rel_load phase P: F fences, median M us, max X us"
    match nums.as_slice() {
        [_, f, m, x] => (*f, *m, *x),
        _ => panic!("not a phase line: {line:?}"),
    }
}

/// Ends phase `p` of `rel_load` (creates `DIR/goP`) and returns its line.
pub(crate) fn end_phase(job: &mut LiveJob, dir: &Path, p: u32) -> (u64, u64, u64) {
    std::fs::write(dir.join(format!("go{p}")), b"").unwrap();
    parse_phase(&job.line(&format!("rel_load phase {p}:")))
}

/// Waits for the job and checks it ended 0 with every rank's `ok` line.
pub(crate) fn finish_ok(job: LiveJob, n: u32, what: &str) -> String {
    let (status, out, err) = job.wait(JOB_LIMIT);
    let context = format!("{what}: {status}\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(status.success(), "{context}");
    for r in 0..n {
        assert!(
            out.contains(&format!("rel_load rank {r}: ok\n")),
            "{context}"
        );
    }
    err
}

// ---------------------------------------------------------------------------------
// The server process, seen from /proc.

/// The descriptors `pid` has open.
pub(crate) fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// `VmRSS` of `pid`, in KiB.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The soft limit on open files of `pid` (`/proc/PID/limits`).
pub(crate) fn nofile_soft(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Raises this process's soft limit on open files to at least `want` (at most the
/// hard limit), so the test and the pmix-run it starts (which inherits it) can hold
/// the connections of a scenario. The limit reached.
pub(crate) fn raise_nofile(want: u64) -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut lim = getrlimit(Resource::Nofile);
    let soft = lim.current.unwrap_or(u64::MAX);
    if soft < want {
        let target = lim.maximum.map_or(want, |hard| hard.min(want));
        lim.current = Some(target);
        setrlimit(Resource::Nofile, lim).expect("raise the soft limit on open files");
    }
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// Polls `f` until it holds, within `limit`; whether it did.
pub(crate) fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------------
// A raw client on the wire (pmix-wire makes and reads every byte).

/// The connect message of a tool of this uid (the identity the server gives a
/// name to).
pub(crate) fn tool_msg() -> ConnectMsg {
    let (uid, gid) = pmix::server::net::effective_ids();
    let mut credential = uid.to_ne_bytes().to_vec();
    credential.extend_from_slice(&gid.to_ne_bytes());
    ConnectMsg {
        psec: "native".into(),
        credential,
        identity: Identity::Ids {
            kind: PeerKind::ToolNeedsId,
            uid,
            gid,
        },
        version: Version::parse("4.2.2rc2", 0).expect("a version"),
        bfrops: "v41".into(),
        buffer_type: BufferType::NonDescribed,
        gds: "hash".into(),
        trailer: Trailer {
            info: Vec::new(),
            stray_byte: true,
        },
    }
}

/// A launched client's connect message claiming `nspace`:`rank`.
pub(crate) fn client_msg(nspace: &str, rank: u32) -> ConnectMsg {
    let mut m = tool_msg();
    m.identity = Identity::Client {
        nspace: nspace.into(),
        rank,
    };
    m
}

/// A tool connection after its handshake, and its codec.
pub(crate) struct Tool {
    pub(crate) stream: TcpStream,
    pub(crate) codec: Codec,
    pub(crate) tag: u32,
}

impl Tool {
    pub(crate) fn connect(addr: SocketAddr) -> Tool {
        let mut stream = TcpStream::connect(addr).expect("connect to the server");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        let msg = tool_msg();
        stream.write_all(&msg.encode().unwrap()).unwrap();
        let mut got = Vec::new();
        let reply = loop {
            match ToolReply::decode(&got, true) {
                Ok(Decoded::Item { item, .. }) => break item,
                Ok(Decoded::NeedMore(n)) => {
                    let at = got.len();
                    got.resize(at + n, 0);
                    stream
                        .read_exact(&mut got[at..])
                        .expect("the tool handshake reply");
                }
                Err(e) => panic!("tool reply: {e}"),
            }
        };
        assert_eq!(reply.status, 0, "the server accepts the tool");
        Tool {
            stream,
            codec: msg.codec(Limits::DEFAULT).unwrap(),
            tag: pmix_wire::frame::TAG_DYNAMIC,
        }
    }

    /// The bytes of one frame carrying `payload` on the next request tag.
    pub(crate) fn frame(&mut self, payload: Vec<u8>) -> Vec<u8> {
        self.tag = pmix_wire::frame::next_tag(self.tag);
        Frame::new(-1, self.tag, payload).unwrap().encode().unwrap()
    }

    /// A GETNB of `nspace`:`rank`'s `key`, encoded.
    pub(crate) fn get_payload(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        info: Vec<Info>,
    ) -> Vec<u8> {
        Request::GetNb(GetNb {
            nspace: WStr::from(nspace),
            rank: Rank(rank),
            info,
            key: Some(WStr::from(key)),
        })
        .encode(&self.codec)
        .unwrap()
    }

    /// Sends a GETNB and reads its reply's frame: its payload's length.
    pub(crate) fn get(&mut self, nspace: &str, rank: u32, key: &str) -> usize {
        let p = self.get_payload(nspace, rank, key, Vec::new());
        let f = self.frame(p);
        self.stream.write_all(&f).unwrap();
        let d = pmix_wire::FrameDecoder::new(Limits::DEFAULT);
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            if let Decoded::Item { item, .. } = d.decode(&got).expect("a reply frame") {
                return item.payload.len();
            }
            let n = self.stream.read(&mut buf).expect("a reply");
            assert!(n > 0, "the server closed instead of answering the GET");
            got.extend_from_slice(&buf[..n]);
        }
    }

    /// Sends `req` and reads until its reply (events on tag 0 are skipped): the
    /// reply decoded as an answer to `cmd`, or `None` when the server closed the
    /// connection instead.
    pub(crate) fn request(&mut self, req: &Request, cmd: pmix_wire::Command) -> Option<Reply> {
        let p = req.encode(&self.codec).expect("encode a request");
        let f = self.frame(p);
        let tag = self.tag;
        if self.stream.write_all(&f).is_err() {
            return None;
        }
        let d = pmix_wire::FrameDecoder::new(Limits::DEFAULT);
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match d.decode(&got).expect("a frame") {
                Decoded::Item { item, .. } if item.header.tag == tag => {
                    let reply = pmix_wire::decode_reply(cmd, &item.payload, &self.codec);
                    return Some(reply.expect("a reply that decodes"));
                }
                Decoded::Item { used, .. } => {
                    got.drain(..used);
                    continue;
                }
                Decoded::NeedMore(_) => {}
            }
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    }
}

/// Reads until the peer closes (a reset counts), within `limit`: whether it closed.
pub(crate) fn closes_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
    false
}

pub(crate) fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}
