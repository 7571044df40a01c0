//! Running a job: spawn the ranks, watch them and the server, end the job by the
//! rules of `--grace`, `--keep-going` and `--timeout`, and say how it ended.
//!
//! One thread (the caller's) owns every child: it polls them (`try_wait`), the
//! server's job events ([`JobServer::next_event`], which also paces the loop), the
//! signals pmix-run received, and the deadlines. Only children this loop has not
//! reaped are signalled or killed, by their own pid, so a pid is never reused under
//! it. Output is copied by two threads per rank ([`super::output`]).
//!
//! **Each child** gets, before it runs the program (`pre_exec`, between fork and exec,
//! system calls only): its own process group (so a terminal's Ctrl-C reaches pmix-run
//! alone, which forwards it once), `PR_SET_PDEATHSIG` = SIGKILL (a pmix-run killed
//! without warning takes its ranks with it: no rank outlives its launcher), and its
//! binding ([`super::bind::Mask`]). Its standard input is `/dev/null`. Its environment
//! is pmix-run's, less every inherited `PMIX_*` variable (an outer launcher's
//! rendezvous would mislead the client) and Open MPI's `OMPI_MCA_orte_*` ones (an outer
//! mpirun's daemon), plus [`JobServer::client_env`] and the job's extra variables.
//!
//! **Ending a job.** A rank that calls `PMIx_Abort`, or that connected and then is
//! reported lost by the server (its connection closed, or it ended, without FINALIZE:
//! [`Event::Lost`]; a program that never connects is no PMIx client and has nothing
//! to finalize), or that
//! ends with a non-zero status, starts the
//! *grace period* (unless `--keep-going`): the server has told the others
//! (`PMIX_ERR_PROC_ABORTED`), and the ranks still running get `--grace` seconds to
//! finish; then they are killed (SIGKILL). A forwarded SIGINT/SIGTERM starts it too.
//! `--timeout` kills every rank still running when it passes. The exit status is
//! [`super::policy::Verdict`]'s.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pmix_core::CpuSet;

use super::bind::Mask;
use super::output::{self, Sink};
use super::policy::{RankEnd, Verdict, signal_name};

/// How long one turn of the loop waits for a server event at most: how quickly a
/// rank's end, a signal or a deadline is noticed.
pub const TICK: Duration = Duration::from_millis(20);

/// Exit status when a rank's program cannot be started: 127 when it was not found,
/// 126 otherwise (as shells say).
pub const EXIT_NOT_FOUND: i32 = 127;
/// See [`EXIT_NOT_FOUND`].
pub const EXIT_CANNOT_EXEC: i32 = 126;

/// A job event the launcher acts on (the server's [`pmix::server::JobEvent`], for
/// this job's namespace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The rank completed its handshake.
    Connected(u32),
    /// The rank called `PMIx_Finalize`.
    Finalized(u32),
    /// The rank called `PMIx_Abort` with this status and message.
    Aborted {
        /// The rank.
        rank: u32,
        /// The status it gave.
        status: i32,
        /// Its message.
        message: Option<String>,
    },
    /// The rank's connection closed without FINALIZE.
    Lost(u32),
}

/// What the job loop needs from a PMIx server: the real one is
/// [`super::server::Embedded`]; tests use a fake.
pub trait JobServer {
    /// The variables rank `rank` must be started with (the PMIx rendezvous).
    fn client_env(&self, rank: u32) -> Vec<(String, String)>;
    /// The next event of this job, waiting at most `timeout` (`None` if none came).
    fn next_event(&self, timeout: Duration) -> Option<Event>;
    /// The launcher saw `rank` end: `status` is its exit status, or minus the signal
    /// that killed it.
    fn proc_exited(&self, rank: u32, status: i32);
}

/// What to run and how.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// Each rank's binding (`None`: unbound); its length is the number of ranks.
    pub cpusets: Vec<Option<CpuSet>>,
    /// Prefix each forwarded line with `[rank] `.
    pub tag_output: bool,
    /// Kill the job after this long.
    pub timeout: Option<Duration>,
    /// How long the others have after a failure.
    pub grace: Duration,
    /// Do not end the job on a failure.
    pub keep_going: bool,
    /// Variables added to every rank's environment after the server's.
    pub extra_env: Vec<(OsString, OsString)>,
}

/// Where a job's output and pmix-run's own lines go.
#[derive(Clone)]
pub struct Sinks {
    /// The ranks' standard output.
    pub stdout: Sink,
    /// The ranks' standard error, and pmix-run's own lines (`pmix-run: …`).
    pub stderr: Sink,
}

/// Whether an inherited variable is left out of a rank's environment.
pub fn is_scrubbed(name: &str) -> bool {
    name.starts_with("PMIX_") || name.starts_with("OMPI_MCA_orte_")
}

struct Rank {
    /// `None` once reaped.
    child: Option<Child>,
    /// It completed its PMIx handshake.
    connected: bool,
    killed_by_us: bool,
}

/// Runs `spec` with `server`, printing to `sinks`; `signals` is asked each turn for
/// the signals pmix-run received since (to forward). Returns pmix-run's exit status.
pub fn run(
    spec: &JobSpec,
    server: &dyn JobServer,
    sinks: &Sinks,
    signals: &mut dyn FnMut() -> Vec<i32>,
) -> i32 {
    let started = Instant::now();
    let n = spec.cpusets.len();
    let mut ranks: Vec<Rank> = Vec::with_capacity(n);
    let mut pumps: Vec<JoinHandle<()>> = Vec::with_capacity(2 * n);
    for (r, cpus) in spec.cpusets.iter().enumerate() {
        let r = r as u32;
        match spawn_rank(spec, server, r, cpus.as_ref()) {
            Ok(mut child) => {
                let out = child.stdout.take().expect("piped stdout");
                let err = child.stderr.take().expect("piped stderr");
                pumps.push(output::forward(
                    out,
                    sinks.stdout.clone(),
                    r,
                    spec.tag_output,
                ));
                pumps.push(output::forward(
                    err,
                    sinks.stderr.clone(),
                    r,
                    spec.tag_output,
                ));
                ranks.push(Rank {
                    child: Some(child),
                    connected: false,
                    killed_by_us: false,
                });
            }
            Err(e) => {
                let prog = spec.command[0].to_string_lossy();
                say(sinks, &format!("cannot start rank {r} ({prog}): {e}"));
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    EXIT_NOT_FOUND
                } else {
                    EXIT_CANNOT_EXEC
                };
                for rank in &mut ranks {
                    if let Some(mut c) = rank.child.take() {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                }
                join(pumps);
                return code;
            }
        }
    }

    let mut verdict = Verdict::default();
    let timeout_at = spec.timeout.map(|t| started + t);
    let mut grace_until: Option<Instant> = None;
    let ending = |grace_until: &mut Option<Instant>, sinks: &Sinks, why: &str| {
        if grace_until.is_none() {
            *grace_until = Some(Instant::now() + spec.grace);
            say(
                sinks,
                &format!(
                    "{why}: ending the job; the other ranks have {} s to finish",
                    secs(spec.grace)
                ),
            );
        }
    };

    loop {
        for sig in signals() {
            let live: Vec<u32> = live_ranks(&ranks);
            say(
                sinks,
                &format!(
                    "received {}: forwarding it to {} rank(s)",
                    signal_name(sig).unwrap_or("a signal"),
                    live.len()
                ),
            );
            for &r in &live {
                if let Some(c) = &ranks[r as usize].child {
                    // SAFETY: kill(2) on the pid of a child of ours that this loop has
                    // not reaped (its Child is still held), so the pid is still ours.
                    unsafe { libc::kill(c.id() as libc::pid_t, sig) };
                }
            }
            grace_until.get_or_insert_with(|| Instant::now() + spec.grace);
        }

        for (r, rank) in ranks.iter_mut().enumerate() {
            let Some(child) = rank.child.as_mut() else {
                continue;
            };
            let end = match child.try_wait() {
                Ok(Some(s)) => RankEnd::of(s),
                Ok(None) => continue,
                Err(e) => {
                    // Not expected for a child we own; counted as a failed rank rather
                    // than polled forever.
                    say(sinks, &format!("cannot wait for rank {r}: {e}"));
                    RankEnd::Exited(1)
                }
            };
            rank.child = None;
            server.proc_exited(
                r as u32,
                match end {
                    RankEnd::Exited(c) => c,
                    RankEnd::Signaled(s) => -s,
                },
            );
            verdict.rank_ended(end, rank.killed_by_us);
            // An exit without finalizing is the server's to tell (Event::Lost): only it
            // knows whether the FINALIZE came first.
            if !rank.killed_by_us && end.code() != 0 {
                say(sinks, &format!("rank {r} {}", end.describe()));
                if !spec.keep_going {
                    ending(&mut grace_until, sinks, &format!("rank {r} failed"));
                }
            }
        }
        if ranks.iter().all(|k| k.child.is_none()) {
            break;
        }

        if let Some(ev) = server.next_event(TICK) {
            match ev {
                Event::Connected(r) => {
                    if let Some(k) = ranks.get_mut(r as usize) {
                        k.connected = true;
                    }
                }
                Event::Finalized(_) => {}
                Event::Aborted {
                    rank,
                    status,
                    message,
                } => {
                    verdict.aborted(status);
                    let msg = message.map(|m| format!(": {m}")).unwrap_or_default();
                    say(
                        sinks,
                        &format!("rank {rank} called PMIx_Abort with status {status}{msg}"),
                    );
                    if !spec.keep_going {
                        ending(&mut grace_until, sinks, &format!("rank {rank} aborted"));
                    }
                }
                Event::Lost(r) => {
                    // A rank that never connected (a program that is no PMIx client)
                    // is not lost when it ends: it had nothing to finalize.
                    if let Some(k) = ranks
                        .get(r as usize)
                        .filter(|k| k.connected && !k.killed_by_us)
                    {
                        if k.child.is_some() {
                            say(
                                sinks,
                                &format!("rank {r} closed its PMIx connection without finalizing"),
                            );
                        } else {
                            say(sinks, &format!("rank {r} ended without finalizing"));
                        }
                        if !spec.keep_going {
                            ending(&mut grace_until, sinks, &format!("rank {r} was lost"));
                        }
                    }
                }
            }
        }

        let now = Instant::now();
        if timeout_at.is_some_and(|t| now >= t) && !verdict.is_timed_out() {
            verdict.timed_out();
            let live = live_ranks(&ranks);
            say(
                sinks,
                &format!(
                    "the job ran past --timeout {} s: killing rank(s) {}",
                    secs(spec.timeout.unwrap_or_default()),
                    list(&live)
                ),
            );
            kill_all(&mut ranks);
        }
        if grace_until.is_some_and(|t| now >= t) {
            let live: Vec<u32> = live_ranks(&ranks)
                .into_iter()
                .filter(|&r| !ranks[r as usize].killed_by_us)
                .collect();
            if !live.is_empty() {
                say(
                    sinks,
                    &format!(
                        "killing rank(s) {}: still running {} s after the job began to end",
                        list(&live),
                        secs(spec.grace)
                    ),
                );
                kill_all(&mut ranks);
            }
        }
    }
    join(pumps);
    verdict.code()
}

/// Starts rank `r`.
fn spawn_rank(
    spec: &JobSpec,
    server: &dyn JobServer,
    r: u32,
    cpus: Option<&CpuSet>,
) -> std::io::Result<Child> {
    let mut cmd = Command::new(&spec.command[0]);
    cmd.args(&spec.command[1..]);
    for (k, _) in std::env::vars_os() {
        if is_scrubbed(&k.to_string_lossy()) {
            cmd.env_remove(k);
        }
    }
    cmd.envs(server.client_env(r));
    cmd.envs(spec.extra_env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mask = cpus.map(Mask::new);
    // SAFETY: getpid has no preconditions; it is pmix-run's pid, the child's parent.
    let launcher = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec and makes only
    // async-signal-safe system calls (setpgid, prctl, getppid, sched_setaffinity),
    // allocating nothing: the mask was built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // The launcher died before the line above: do not run orphaned.
            if libc::getppid() != launcher {
                libc::_exit(1);
            }
            if let Some(m) = &mask {
                m.apply()?;
            }
            Ok(())
        });
    }
    cmd.spawn()
}

fn live_ranks(ranks: &[Rank]) -> Vec<u32> {
    ranks
        .iter()
        .enumerate()
        .filter(|(_, k)| k.child.is_some())
        .map(|(r, _)| r as u32)
        .collect()
}

fn kill_all(ranks: &mut [Rank]) {
    for k in ranks.iter_mut() {
        if let Some(c) = k.child.as_mut() {
            // Child::kill sends SIGKILL to this unreaped child's own pid.
            let _ = c.kill();
            k.killed_by_us = true;
        }
    }
}

fn join(pumps: Vec<JoinHandle<()>>) {
    for p in pumps {
        let _ = p.join();
    }
}

fn list(ranks: &[u32]) -> String {
    ranks
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

/// Prints one `pmix-run: …` line on the stderr sink.
pub fn say(sinks: &Sinks, line: &str) {
    let mut err = sinks.stderr.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(err, "pmix-run: {line}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// A server that hands out scripted events and records what it was told.
    #[derive(Default)]
    struct Fake {
        events: Mutex<VecDeque<Event>>,
        exited: Mutex<Vec<(u32, i32)>>,
    }

    impl JobServer for Fake {
        fn client_env(&self, rank: u32) -> Vec<(String, String)> {
            vec![("FAKE_RANK".into(), rank.to_string())]
        }
        fn next_event(&self, timeout: Duration) -> Option<Event> {
            let ev = self.events.lock().unwrap().pop_front();
            if ev.is_none() {
                std::thread::sleep(timeout);
            }
            ev
        }
        fn proc_exited(&self, rank: u32, status: i32) {
            self.exited.lock().unwrap().push((rank, status));
        }
    }

    struct Run {
        code: i32,
        stdout: String,
        stderr: String,
        exited: Vec<(u32, i32)>,
    }

    fn spec(n: usize, script: &str) -> JobSpec {
        JobSpec {
            command: ["sh", "-c", script].iter().map(OsString::from).collect(),
            cpusets: vec![None; n],
            tag_output: false,
            timeout: Some(Duration::from_secs(60)),
            grace: Duration::from_millis(300),
            keep_going: false,
            extra_env: vec![("EXTRA".into(), "x".into())],
        }
    }

    fn run_with(spec: &JobSpec, events: Vec<Event>, signals: Vec<i32>) -> Run {
        let fake = Fake {
            events: Mutex::new(events.into()),
            ..Fake::default()
        };
        let out: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let err: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let sinks = Sinks {
            stdout: out.clone(),
            stderr: err.clone(),
        };
        // The signals come once, after the ranks had time to start.
        let t0 = Instant::now();
        let mut pending = Some(signals);
        let mut sig = move || {
            if t0.elapsed() > Duration::from_millis(500) {
                pending.take().unwrap_or_default()
            } else {
                Vec::new()
            }
        };
        let code = run(spec, &fake, &sinks, &mut sig);
        let mut exited = fake.exited.lock().unwrap().clone();
        exited.sort();
        let text =
            |m: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&m.lock().unwrap()).into_owned();
        Run {
            code,
            stdout: text(&out),
            stderr: text(&err),
            exited,
        }
    }

    #[test]
    fn a_job_whose_ranks_all_exit_0_exits_0_with_their_output_tagged() {
        let mut s = spec(3, "echo out $FAKE_RANK $EXTRA; echo err >&2");
        s.tag_output = true;
        let r = run_with(&s, vec![], vec![]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        lines.sort();
        assert_eq!(lines, ["[0] out 0 x", "[1] out 1 x", "[2] out 2 x"]);
        assert_eq!(r.stderr.lines().filter(|l| l.ends_with("] err")).count(), 3);
        assert_eq!(r.exited, vec![(0, 0), (1, 0), (2, 0)]);
    }

    #[test]
    fn a_failed_rank_ends_the_job_after_the_grace_and_its_status_is_the_jobs() {
        let r = run_with(
            &spec(
                2,
                r#"if [ "$FAKE_RANK" = 1 ]; then exit 3; fi; exec sleep 60"#,
            ),
            vec![],
            vec![],
        );
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(
            r.stderr.contains("pmix-run: rank 1 exited with status 3\n"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("pmix-run: killing rank(s) 0:"),
            "{}",
            r.stderr
        );
        assert_eq!(r.exited, vec![(0, -libc::SIGKILL), (1, 3)]);
    }

    #[test]
    fn keep_going_lets_the_others_finish() {
        let mut s = spec(
            2,
            r#"if [ "$FAKE_RANK" = 1 ]; then exit 3; fi; sleep 1; echo finished"#,
        );
        s.keep_going = true;
        let r = run_with(&s, vec![], vec![]);
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert_eq!(r.stdout, "finished\n");
        assert_eq!(r.exited, vec![(0, 0), (1, 3)]);
        assert!(!r.stderr.contains("killing"), "{}", r.stderr);
    }

    #[test]
    fn an_abort_decides_the_status_and_ends_the_job() {
        let r = run_with(
            &spec(2, "exec sleep 60"),
            vec![Event::Aborted {
                rank: 1,
                status: 42,
                message: Some("bad input".into()),
            }],
            vec![],
        );
        assert_eq!(r.code, 42, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("pmix-run: rank 1 called PMIx_Abort with status 42: bad input\n"),
            "{}",
            r.stderr
        );
        assert_eq!(r.exited, vec![(0, -9), (1, -9)]);
    }

    #[test]
    fn a_connected_rank_that_is_lost_ends_the_job_but_one_that_never_connected_does_not() {
        let r = run_with(
            &spec(2, "exec sleep 60"),
            vec![Event::Lost(0), Event::Connected(1), Event::Lost(1)],
            vec![],
        );
        assert_eq!(r.code, 0, "ranks we killed do not decide: {}", r.stderr);
        assert!(!r.stderr.contains("rank 0 closed"), "{}", r.stderr);
        assert!(
            r.stderr
                .contains("pmix-run: rank 1 closed its PMIx connection without finalizing\n"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("killing rank(s) 0,1"), "{}", r.stderr);
    }

    #[test]
    fn the_timeout_kills_the_job_with_124() {
        let mut s = spec(2, "exec sleep 60");
        s.timeout = Some(Duration::from_millis(300));
        let r = run_with(&s, vec![], vec![]);
        assert_eq!(r.code, 124);
        assert!(
            r.stderr
                .contains("ran past --timeout 0.3 s: killing rank(s) 0,1"),
            "{}",
            r.stderr
        );
    }

    #[test]
    fn a_received_sigterm_is_forwarded_to_every_rank() {
        let mut s = spec(2, "exec sleep 60");
        s.grace = Duration::from_secs(30);
        let r = run_with(&s, vec![], vec![libc::SIGTERM]);
        assert_eq!(r.code, 128 + libc::SIGTERM, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("received SIGTERM: forwarding it to 2 rank(s)"),
            "{}",
            r.stderr
        );
        assert_eq!(r.exited, vec![(0, -libc::SIGTERM), (1, -libc::SIGTERM)]);
    }

    #[test]
    fn each_rank_runs_on_its_cpuset() {
        let allowed = pmix::os::binding(pmix::os::BindEnvelope::Process).unwrap();
        let pu = allowed.first().unwrap();
        let mut s = spec(1, "grep Cpus_allowed_list /proc/self/status");
        s.cpusets = vec![Some(CpuSet::from_pus([pu]))];
        let r = run_with(&s, vec![], vec![]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, format!("Cpus_allowed_list:\t{pu}\n"));
    }

    #[test]
    fn a_program_that_does_not_exist_is_127() {
        let mut s = spec(2, "");
        s.command = vec!["/nonexistent/pmix-run-test".into()];
        let r = run_with(&s, vec![], vec![]);
        assert_eq!(r.code, EXIT_NOT_FOUND);
        assert!(
            r.stderr
                .starts_with("pmix-run: cannot start rank 0 (/nonexistent/pmix-run-test): "),
            "{}",
            r.stderr
        );
    }

    #[test]
    fn an_outer_launchers_variables_are_scrubbed() {
        assert!(is_scrubbed("PMIX_SERVER_URI41"));
        assert!(is_scrubbed("PMIX_DSTORE_21_BASE_PATH"));
        assert!(is_scrubbed("OMPI_MCA_orte_hnp_uri"));
        assert!(!is_scrubbed("OMPI_MCA_btl"));
        assert!(!is_scrubbed("PATH"));
    }
}
