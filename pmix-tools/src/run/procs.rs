//! The processes of every job the loop ([`super::job`]) runs: a rank's record and a
//! job's ([`Rank`], [`Job`]: the first job, or one a spawn started), starting a
//! process with its output forwarded ([`Pumps`]), starting a spawned job and failing
//! its spawn ([`start_spawned`]), the server's events about ranks ([`on_event`]),
//! and signalling and killing them, each through its own process group.

use std::process::Child;
use std::sync::mpsc;
use std::thread::JoinHandle;

use rustix::process::{Pid, Signal};

use super::jobserver::{
    ERR_JOB_APP_NOT_EXECUTABLE, ERR_JOB_EXE_NOT_FOUND, ERR_JOB_FAILED_TO_LAUNCH, Event, JobServer,
    Launch, SpawnRequest,
};
use super::output::{self, Sinks, say};
use super::policy::{RankEnd, Verdict};
use super::spawn;

pub(super) struct Rank {
    /// `None` once reaped.
    pub(super) child: Option<Child>,
    /// It completed its PMIx handshake.
    pub(super) connected: bool,
    pub(super) killed_by_us: bool,
    /// How it ended, once reaped.
    pub(super) end: Option<RankEnd>,
}

/// One job: the first, or one a spawn started.
pub(super) struct Job {
    pub(super) nspace: String,
    pub(super) ranks: Vec<Rank>,
    /// A spawn waiting to be answered: its id (until every process connected, or
    /// ended with status 0 without being a PMIx client).
    pub(super) pending: Option<u64>,
    /// [`JobServer::job_ended`] was called (or the spawn failed: nobody is told).
    pub(super) ended: bool,
    /// The spawn failed ([`JobServer::job_failed`]): the server forgot the job, and
    /// is not told of its processes' ends.
    pub(super) failed: bool,
}

impl Job {
    /// How a rank of this job is named in pmix-run's lines.
    pub(super) fn name(&self, j: usize, r: usize) -> String {
        if j == 0 {
            r.to_string()
        } else {
            format!("{}:{r}", self.nspace)
        }
    }
}

/// Where the output threads of the processes go, and what they hold.
pub(super) struct Pumps<'a> {
    pub(super) sinks: &'a Sinks,
    /// Gives each process its socket to the server ([`JobServer::channel`]).
    pub(super) server: &'a dyn JobServer,
    pub(super) tag: bool,
    pub(super) threads: Vec<JoinHandle<()>>,
    /// Every output thread holds a clone; the last one to end disconnects it.
    pub(super) drained_tx: mpsc::Sender<()>,
}

impl Pumps<'_> {
    /// Starts `l` as rank `r` of job `j`, its output forwarded (tagged `[r]` for the
    /// first job, `[j:r]` for a spawned one).
    pub(super) fn start(&mut self, l: &Launch, j: usize, r: u32) -> std::io::Result<Rank> {
        let label = if j == 0 {
            r.to_string()
        } else {
            format!("{j}:{r}")
        };
        // The socket is made before the fork; the parent's copy of the child's
        // end closes when `channel` drops, after the spawn.
        let channel = self.server.channel();
        let mut child = spawn::spawn_proc(l, channel.as_ref())?;
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        self.threads.push(output::forward(
            out,
            self.sinks.stdout.clone(),
            &label,
            self.tag,
            self.drained_tx.clone(),
        ));
        self.threads.push(output::forward(
            err,
            self.sinks.stderr.clone(),
            &label,
            self.tag,
            self.drained_tx.clone(),
        ));
        Ok(Rank {
            child: Some(child),
            connected: false,
            killed_by_us: false,
            end: None,
        })
    }
}

/// The PMIx status of a spawned program that could not be started.
fn start_error_status(e: &std::io::Error) -> i32 {
    match e.kind() {
        std::io::ErrorKind::NotFound => ERR_JOB_EXE_NOT_FOUND,
        std::io::ErrorKind::PermissionDenied => ERR_JOB_APP_NOT_EXECUTABLE,
        _ => ERR_JOB_FAILED_TO_LAUNCH,
    }
}

/// Kills and reaps the processes of a job that could not be started whole.
fn kill_and_reap(ranks: &mut [Rank]) {
    for rank in ranks.iter_mut() {
        if let Some(mut c) = rank.child.take() {
            signal_rank(&c, Signal::KILL);
            rank.end = Some(c.wait().map(RankEnd::of).unwrap_or(RankEnd::Exited(1)));
            rank.killed_by_us = true;
        }
    }
}

/// A server event about rank `r` of job `j` (not a spawn).
pub(super) fn on_event(
    j: usize,
    ev: Event,
    jobs: &mut [Job],
    verdict: &mut Verdict,
    end_job: &mut dyn FnMut(&str),
    sinks: &Sinks,
) {
    let Some(job) = jobs.get_mut(j) else {
        return;
    };
    match ev {
        Event::Connected(r) => {
            if let Some(k) = job.ranks.get_mut(r as usize) {
                k.connected = true;
            }
        }
        Event::Finalized(_) | Event::Spawn(_) => {}
        Event::Aborted {
            rank,
            status,
            message,
        } => {
            let name = job.name(j, rank as usize);
            verdict.aborted(status);
            let msg = message.map(|m| format!(": {m}")).unwrap_or_default();
            say(
                sinks,
                &format!("rank {name} called PMIx_Abort with status {status}{msg}"),
            );
            end_job(&format!("rank {name} aborted"));
        }
        Event::Lost(r) => {
            // A rank that never connected (a program that is no PMIx client) is not
            // lost when it ends: it had nothing to finalize.
            let name = job.name(j, r as usize);
            if let Some(k) = job
                .ranks
                .get(r as usize)
                .filter(|k| k.connected && !k.killed_by_us)
            {
                if k.child.is_some() {
                    say(
                        sinks,
                        &format!("rank {name} closed its PMIx connection without finalizing"),
                    );
                } else {
                    say(sinks, &format!("rank {name} ended without finalizing"));
                }
                end_job(&format!("rank {name} was lost"));
            }
        }
    }
}

/// Registers and starts the job `req` asks for; a process that cannot be started
/// fails the spawn (the ones started are killed), and so does a job the server
/// refuses.
pub(super) fn start_spawned(
    req: &SpawnRequest,
    server: &dyn JobServer,
    sinks: &Sinks,
    pumps: &mut Pumps<'_>,
    jobs: &mut Vec<Job>,
) {
    let new = match server.start_job(req) {
        Ok(n) if n.job == jobs.len() => n,
        Ok(n) => {
            say(
                sinks,
                &format!("spawn: the server numbered job {} out of turn", n.job),
            );
            return server.spawn_done(req.id, Err(ERR_JOB_FAILED_TO_LAUNCH));
        }
        Err(s) => return server.spawn_done(req.id, Err(s)),
    };
    let j = new.job;
    let mut ranks = Vec::with_capacity(new.procs.len());
    let mut failed = None;
    for (r, l) in new.procs.iter().enumerate() {
        match pumps.start(l, j, r as u32) {
            Ok(rank) => ranks.push(rank),
            Err(e) => {
                say(
                    sinks,
                    &format!(
                        "cannot start spawned rank {}:{r} ({}): {e}",
                        new.nspace,
                        l.program.to_string_lossy()
                    ),
                );
                failed = Some(start_error_status(&e));
                break;
            }
        }
    }
    let mut job = Job {
        nspace: new.nspace,
        ranks,
        pending: Some(req.id),
        ended: false,
        failed: false,
    };
    if let Some(status) = failed {
        kill_and_reap(&mut job.ranks);
        job.pending = None;
        job.ended = true;
        job.failed = true;
        server.job_failed(j);
        server.spawn_done(req.id, Err(status));
    }
    jobs.push(job);
}

/// The ranks not reaped yet, as (job, rank).
pub(super) fn live_ranks(jobs: &[Job]) -> Vec<(usize, usize)> {
    jobs.iter()
        .enumerate()
        .flat_map(|(j, job)| {
            job.ranks
                .iter()
                .enumerate()
                .filter(|(_, k)| k.child.is_some())
                .map(move |(r, _)| (j, r))
        })
        .collect()
}

/// Sends `sig` to rank `child`'s process group (the rank and what it started, as a
/// terminal would), else to the rank alone. The child is not reaped yet, so its pid,
/// which is also its group's id ([`spawn`]), is still ours.
pub(super) fn signal_rank(child: &Child, sig: Signal) {
    let pid = Pid::from_child(child);
    if rustix::process::kill_process_group(pid, sig).is_err() {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

pub(super) fn kill_all(jobs: &mut [Job]) {
    for k in jobs.iter_mut().flat_map(|j| j.ranks.iter_mut()) {
        if let Some(c) = k.child.as_ref() {
            signal_rank(c, Signal::KILL);
            k.killed_by_us = true;
        }
    }
}

pub(super) fn list(jobs: &[Job], ranks: &[(usize, usize)]) -> String {
    ranks
        .iter()
        .map(|&(j, r)| jobs[j].name(j, r))
        .collect::<Vec<_>>()
        .join(",")
}
