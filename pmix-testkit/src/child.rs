//! Child processes for tests: run a command with every wait bounded, and run tests of
//! the current test binary in a child (one ignored test alone, or named tests with an
//! environment of their own), so what they print can be inspected and a hang fails the
//! test instead of the suite.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest any one command a test runs may take (a C program under valgrind, or
/// libhwloc over a big captured tree, takes seconds; a hang fails the test instead of
/// the suite).
pub const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// Runs `cmd` to completion within `limit`, capturing its output, with stdin from
/// `/dev/null` and in a process group of its own (so launchers such as `mpirun` never
/// wait on a terminal). A command still running then is killed with everything in
/// that group (only processes this call started: the child and what it spawned), and
/// the test fails naming the processes that were still there, their states and what
/// the command had printed so far. An `srun`'s job is cancelled then too.
///
/// # Panics
/// When the command cannot start, or still runs after `limit`.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let job = slurm_job_name(cmd);
    let mut p = Piped::spawn(cmd);
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = p.child.try_wait().expect("wait for the child") {
            break status;
        }
        if Instant::now() >= deadline {
            let group = p.child.id();
            let snapshot = group_snapshot(group);
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{group}")])
                .status();
            let _ = p.child.kill();
            let _ = p.child.wait();
            let slurm = job.as_deref().map(cancel_job).unwrap_or_default();
            // The group is gone, so its pipes close; wait a little for the readers.
            p.drained(Duration::from_secs(5));
            panic!(
                "{cmd:?} still ran after {limit:?}: killed its process group {group}\n\
                 processes then (pid state wchan command):\n{snapshot}\n{slurm}\
                 stdout so far:\n{}\nstderr so far:\n{}",
                String::from_utf8_lossy(&p.stdout()),
                String::from_utf8_lossy(&p.stderr()),
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Whatever the child left running in its group (a daemon holding the pipes) must
    // not hold the test: wait for the readers only as long as it takes to drain.
    p.drained(Duration::from_secs(10));
    Output {
        status,
        stdout: p.stdout(),
        stderr: p.stderr(),
    }
}

/// For an `srun`: names its job (`SLURM_JOB_NAME`, unique to this call) and returns
/// the name, so that a timeout can cancel the job (an `srun` killed with SIGKILL
/// leaves its allocation to Slurm until cancelled, and every later job of its nodes
/// waits for it). `None` for another program.
fn slurm_job_name(cmd: &mut Command) -> Option<String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let program = std::path::Path::new(cmd.get_program());
    if program.file_name() != Some(std::ffi::OsStr::new("srun")) {
        return None;
    }
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("pmixrs-test-{}-{n}", std::process::id());
    cmd.env("SLURM_JOB_NAME", &name);
    Some(name)
}

/// Cancels the Slurm job named `name` (the one a timed-out `srun` started), each
/// command bounded; returns what `squeue` said of it before, and how `scancel` went.
fn cancel_job(name: &str) -> String {
    let run = |program: &str, args: &[&str]| -> String {
        let Ok(mut child) = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        else {
            return format!("{program}: cannot run\n");
        };
        let until = Instant::now() + Duration::from_secs(20);
        while child.try_wait().ok().flatten().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        match child.wait_with_output() {
            Ok(o) => format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => format!("{program}: {e}\n"),
        }
    };
    let queue = run("squeue", &["-h", "-n", name, "-o", "%i %T %R"]);
    let cancel = run("scancel", &["-n", name]);
    format!("its Slurm job {name} then (id state reason):\n{queue}cancelled: {cancel}\n")
}

/// Removes from `cmd`'s environment what would leak into a job it starts: cargo's
/// `LD_LIBRARY_PATH` and the caller's `PMIX_*`, `OMPI_*` and `SLURM_*` variables.
pub fn without_job_env(cmd: &mut Command) -> &mut Command {
    cmd.env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if ["PMIX_", "OMPI_", "SLURM_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            cmd.env_remove(&*k);
        }
    }
    cmd
}

/// A child in a process group of its own, stdin from `/dev/null`, whose stdout and
/// stderr threads drain as it writes (so a chatty child never blocks on a full pipe).
pub(crate) struct Piped {
    /// The child.
    pub(crate) child: Child,
    out: (Arc<Mutex<Vec<u8>>>, JoinHandle<()>),
    err: (Arc<Mutex<Vec<u8>>>, JoinHandle<()>),
}

impl Piped {
    /// Starts `cmd`.
    ///
    /// # Panics
    /// When it cannot start.
    pub(crate) fn spawn(cmd: &mut Command) -> Piped {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        let drain = |mut pipe: Box<dyn Read + Send>| {
            let bytes = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&bytes);
            let reader = std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buf) {
                    lock(&sink).extend_from_slice(&buf[..n]);
                }
            });
            (bytes, reader)
        };
        let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
        let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
        Piped { child, out, err }
    }

    /// Waits at most `within` for both pipes to close.
    pub(crate) fn drained(&self, within: Duration) {
        let until = Instant::now() + within;
        while !(self.out.1.is_finished() && self.err.1.is_finished()) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// What it wrote to stdout so far.
    pub(crate) fn stdout(&self) -> Vec<u8> {
        lock(&self.out.0).clone()
    }

    /// What it wrote to stderr so far.
    pub(crate) fn stderr(&self) -> Vec<u8> {
        lock(&self.err.0).clone()
    }
}

fn lock(m: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One line per process of process group `pgid`: pid, state, kernel wait channel and
/// command line (read from `/proc`; empty where `/proc` cannot be read).
fn group_snapshot(pgid: u32) -> String {
    let mut lines = String::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return lines;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) != Some(pgid) {
            continue;
        }
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let state = fields.first().copied().unwrap_or("?");
        lines.push_str(&format!("{pid} {state} {wchan} {cmdline}\n"));
    }
    lines
}

/// A command running the ignored test `name` of this test binary alone, in a child
/// process (so that what it prints on stderr can be inspected).
///
/// # Panics
/// When the path of the running test binary cannot be found.
pub fn child_test(name: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    cmd
}

/// A command running the tests `names` of this test binary (exactly those) in a child
/// process with `env` set and `remove` removed, printing what they print.
///
/// # Panics
/// When the path of the running test binary cannot be found.
pub fn rerun_tests(names: &[&str], env: &[(&str, &std::ffi::OsStr)], remove: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(names)
        .args(["--exact", "--nocapture", "--test-threads=1"]);
    for k in remove {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hung_command_is_killed_with_its_group_and_reports_its_output_and_processes() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 300 & echo started; echo warn >&2; wait"]);
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            output_within(&mut cmd, Duration::from_millis(500))
        }))
        .expect_err("the command outlives its limit");
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("still ran after"), "{msg}");
        assert!(msg.contains("stdout so far:\nstarted"), "{msg}");
        assert!(msg.contains("stderr so far:\nwarn"), "{msg}");
        assert!(
            msg.contains("sleep 300"),
            "the snapshot names the grandchild: {msg}"
        );
        let pgid: u32 = msg
            .split("killed its process group ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|g| g.parse().ok())
            .expect("the group is named");
        // The grandchild went with its group (a zombie not yet reaped by init is gone).
        let alive = || -> Vec<String> {
            group_snapshot(pgid)
                .lines()
                .filter(|l| l.split_whitespace().nth(1) != Some("Z"))
                .map(str::to_owned)
                .collect()
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !alive().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            alive(),
            Vec::<String>::new(),
            "nothing of the group survives"
        );
    }

    #[test]
    fn a_command_within_its_limit_returns_all_it_printed() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo one; echo two >&2; exit 3"]),
            Duration::from_secs(60),
        );
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"one\n");
        assert_eq!(out.stderr, b"two\n");
    }
}
