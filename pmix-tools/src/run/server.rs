//! The embedded server: [`pmix::server::Server`] started for one job, its namespace
//! registered with the ranks' bindings, the [`JobServer`] face the job loop uses, and
//! pmix-run's [`Host`] ([`RunHost`]): the server's upcalls about the ranks (connected,
//! finalized, aborted, lost) and their spawns become [`Wake::Event`]s on the job
//! loop's channel, sent from the server's progress thread; a spawn's reply waits
//! here until the loop answers it ([`JobServer::spawn_done`]). A client's
//! `PMIx_Log` is written by the server to pmix-run's own stderr or stdout (no
//! [`Provides::LOG`]).

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use pmix::server::{Host, NamespaceSpec, ProcName, Provides, Reply, Server, ServerConfig};
use pmix::wire::{App, Info, Kval, Proc, Value};
use pmix_core::{CpuSet, Status};

use super::jobserver::{
    ERR_JOB_CANCELED, ERR_JOB_FAILED_TO_LAUNCH, ERR_NOT_SUPPORTED, Event, JobServer, Launch,
    NewJob, SpawnRequest,
};
use super::wake::Wake;
use pmix_wire::keys;

/// How a job of `n` processes is bound (pmix-run's `--bind` on this machine).
pub type BindPlan = Box<dyn Fn(u32) -> Result<Vec<Option<CpuSet>>, String> + Send + Sync>;

/// The most processes one spawn may ask for.
pub const MAX_SPAWN: u32 = 4096;

/// `PMIX_ERR_JOB_INSUFFICIENT_RESOURCES`: a spawn of more than [`MAX_SPAWN`].
const ERR_JOB_INSUFFICIENT_RESOURCES: i32 = pmix_core::Status::ERR_JOB_INSUFFICIENT_RESOURCES.0;

/// `PMIX_EVENT_JOB_END`.
const EVENT_JOB_END: i32 = pmix_core::Status::EVENT_JOB_END.0;

/// One job the server was given: the first, or a spawned one.
struct JobRec {
    nspace: String,
    /// Who spawned it, and whether it asked `PMIX_NOTIFY_COMPLETION`.
    parent: Option<((String, u32), bool)>,
}

/// What the server's host and the job loop's face share.
struct Shared {
    /// Every job, by index.
    jobs: Mutex<Vec<JobRec>>,
    /// The spawns the job loop has not answered yet, by the id it knows them by.
    spawns: Mutex<HashMap<u64, Reply<String>>>,
    /// The last spawn id given.
    next_spawn: Mutex<u64>,
    /// The job loop's channel.
    wake: Sender<Wake>,
}

impl Shared {
    fn nspace_of(&self, job: usize) -> Option<String> {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.get(job).map(|j| j.nspace.clone())
    }

    fn job_of(&self, nspace: &str) -> Option<usize> {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.iter().position(|j| j.nspace == nspace)
    }

    /// Hands the job loop `ev` about a rank of `nspace` (one of its jobs; a process
    /// of no job of ours, a tool, is not the loop's business).
    fn pass(&self, nspace: &str, ev: Event) {
        if let Some(j) = self.job_of(nspace) {
            // The loop is gone once the job ended: nobody is left to tell.
            let _ = self.wake.send(Wake::Event((j, ev)));
        }
    }
}

/// pmix-run's [`Host`]: it starts processes ([`Provides::SPAWN`]) and passes the
/// ranks' upcalls on to the job loop (module docs). Every method only sends on a
/// channel: it never blocks the server's thread.
pub struct RunHost(Arc<Shared>);

impl Host for RunHost {
    fn provides(&self) -> Provides {
        Provides::SPAWN
    }

    fn client_connected(&self, proc: ProcName) {
        self.0.pass(&proc.0, Event::Connected(proc.1));
    }

    fn client_finalized(&self, proc: ProcName, reply: Reply<()>) {
        self.0.pass(&proc.0, Event::Finalized(proc.1));
        reply.send(Ok(()));
    }

    fn client_aborted(&self, proc: ProcName, status: i32, message: Option<String>) {
        let (nspace, rank) = proc;
        let ev = Event::Aborted {
            rank,
            status,
            message,
        };
        self.0.pass(&nspace, ev);
    }

    fn client_lost(&self, proc: ProcName) {
        self.0.pass(&proc.0, Event::Lost(proc.1));
    }

    fn spawn(&self, parent: ProcName, info: Vec<Info>, apps: Vec<App>, reply: Reply<String>) {
        let Some(j) = self.0.job_of(&parent.0) else {
            // A tool's spawn: no job of ours asked.
            return reply.send(Err(Status(ERR_NOT_SUPPORTED)));
        };
        let id = {
            let mut n = self.0.next_spawn.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            *n
        };
        lock_spawns(&self.0).insert(id, reply);
        let req = SpawnRequest {
            id,
            parent,
            info,
            apps,
        };
        if self
            .0
            .wake
            .send(Wake::Event((j, Event::Spawn(req))))
            .is_err()
            && let Some(reply) = lock_spawns(&self.0).remove(&id)
        {
            // The job is ending: nobody will start it.
            reply.send(Err(Status(ERR_JOB_CANCELED)));
        }
    }
}

fn lock_spawns(s: &Shared) -> std::sync::MutexGuard<'_, HashMap<u64, Reply<String>>> {
    s.spawns.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running server with the first job's namespace, and those of the jobs its
/// clients spawn.
pub struct Embedded {
    server: Server,
    uid: u32,
    gid: u32,
    shared: Arc<Shared>,
    /// How many processes all jobs have had (each job's node ranks follow).
    placed: Mutex<u32>,
    bind: BindPlan,
}

impl Embedded {
    /// Starts a server (the machine's topology `service` answers distance queries)
    /// and registers namespace `nspace` of `cpusets.len()` ranks, all on this node,
    /// run as this process's uid and gid; rank r has local and node rank r and, when
    /// bound, `pmix.cpuset` = `hwloc:LIST`. No `pmix.locstr` is given (it is optional,
    /// docs/serving.md §1(b), and Open MPI parses it as hwloc's locality grammar, which
    /// needs the object levels the topology model does not keep). The server's host
    /// is a [`RunHost`], which passes the ranks' upcalls on to `wake` (the job loop's
    /// channel) and spawns: a spawned job's processes are bound by `bind`.
    /// `limits`: the server's limits to set ([`ServerConfig::set_limit`]).
    ///
    /// # Errors
    /// A message naming what failed: a limit, starting the server, or registering
    /// the namespace.
    pub fn start(
        nspace: &str,
        cpusets: &[Option<CpuSet>],
        service: Option<Arc<pmix::Service>>,
        bind: BindPlan,
        limits: &[(String, u64)],
        wake: Sender<Wake>,
    ) -> Result<Embedded, String> {
        let mut cfg = ServerConfig {
            service,
            rendezvous: true,
            ..ServerConfig::default()
        };
        for (name, value) in limits {
            cfg.set_limit(name, *value)?;
        }
        let shared = Arc::new(Shared {
            jobs: Mutex::new(vec![JobRec {
                nspace: nspace.to_owned(),
                parent: None,
            }]),
            spawns: Mutex::new(HashMap::new()),
            next_spawn: Mutex::new(0),
            wake,
        });
        let host = Arc::new(RunHost(Arc::clone(&shared)));
        let server = Server::start_with_host(cfg, host)
            .map_err(|e| format!("cannot start the PMIx server: {e}"))?;
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let mut spec = NamespaceSpec::single_node(nspace, cpusets.len() as u32, uid, gid);
        for (r, cpus) in spec.ranks.iter_mut().zip(cpusets) {
            if let Some(c) = cpus {
                r.cpuset = Some(format!("hwloc:{c}"));
            }
        }
        server
            .add_namespace(spec)
            .map_err(|e| format!("cannot register namespace {nspace}: {e}"))?;
        Ok(Embedded {
            server,
            uid,
            gid,
            shared,
            placed: Mutex::new(cpusets.len() as u32),
            bind,
        })
    }

    fn nspace_of(&self, job: usize) -> Option<String> {
        self.shared.nspace_of(job)
    }

    /// Stops the server (its temporary directory is removed).
    ///
    /// # Errors
    /// A message when the progress thread did not stop in time.
    pub fn shutdown(&self) -> Result<(), String> {
        self.server
            .shutdown()
            .map_err(|e| format!("stopping the PMIx server: {e}"))
    }
}

/// The first value of `key` among `info`.
fn find<'a>(info: &'a [Info], key: &str) -> Option<&'a Value> {
    info.iter()
        .find(|i| i.key.as_bytes() == key.as_bytes())
        .map(|i| &i.value)
}

/// The variables an app asks for: its `env` (`NAME=value` each), then its and the
/// job's `PMIX_SET_ENVAR` (`pmix.envar.set`, replace) and `PMIX_ADD_ENVAR`
/// (`pmix.envar.add`, set only when not set by then).
fn app_env(app: &App, job_info: &[Info]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = app
        .env
        .iter()
        .filter_map(|e| e.as_str())
        .filter_map(|e| e.split_once('='))
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    for i in job_info.iter().chain(&app.info) {
        let add = match i.key.as_str().unwrap_or_default() {
            keys::SET_ENVAR => false,
            keys::ADD_ENVAR => true,
            _ => continue,
        };
        let Value::Envar(e) = &i.value else { continue };
        let (Some(k), Some(v)) = (
            e.envar.as_ref().and_then(|s| s.as_str()),
            e.value.as_ref().and_then(|s| s.as_str()),
        ) else {
            continue;
        };
        let k = OsString::from(k);
        if add && (env.iter().any(|(x, _)| *x == k) || std::env::var_os(&k).is_some()) {
            continue;
        }
        env.retain(|(x, _)| *x != k);
        env.push((k, v.into()));
    }
    env
}

impl JobServer for Embedded {
    fn client_env(&self, rank: u32) -> Vec<(String, String)> {
        let ns = self.nspace_of(0).unwrap_or_default();
        self.server.client_env(&ns, rank)
    }

    fn channel(&self) -> Option<std::os::unix::net::UnixStream> {
        self.server.client_channel().ok()
    }

    fn proc_exited(&self, job: usize, rank: u32, status: i32) {
        // A stopped server has nobody left to tell.
        if let Some(ns) = self.nspace_of(job) {
            let _ = self.server.proc_exited(&ns, rank, status);
        }
    }

    fn start_job(&self, req: &SpawnRequest) -> Result<NewJob, i32> {
        let n: u64 = req.apps.iter().map(|a| a.maxprocs.max(0) as u64).sum();
        if n == 0 || n > u64::from(MAX_SPAWN) {
            return Err(ERR_JOB_INSUFFICIENT_RESOURCES);
        }
        let n = n as u32;
        let cpusets = (self.bind)(n).map_err(|_| ERR_JOB_INSUFFICIENT_RESOURCES)?;
        // Only the job loop adds jobs, one at a time; no lock is held across the
        // server's answer below (its thread takes `jobs` for every upcall).
        let (job, nspace) = {
            let jobs = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
            (jobs.len(), format!("{}.{}", jobs[0].nspace, jobs.len()))
        };
        let mut spec = NamespaceSpec::single_node(nspace.as_str(), n, self.uid, self.gid);
        let placed = *self.placed.lock().unwrap_or_else(|e| e.into_inner());
        let appnums = req
            .apps
            .iter()
            .enumerate()
            .flat_map(|(a, app)| std::iter::repeat_n(a as u32, app.maxprocs.max(0) as usize));
        for ((r, cpus), app) in spec.ranks.iter_mut().zip(&cpusets).zip(appnums) {
            r.appnum = app;
            r.node_rank = u16::try_from(placed + r.rank).unwrap_or(u16::MAX);
            if let Some(c) = cpus {
                r.cpuset = Some(format!("hwloc:{c}"));
            }
        }
        let (pns, prank) = (req.parent.0.as_str(), req.parent.1);
        spec.job_info = vec![
            Kval {
                key: keys::PARENT_ID.into(),
                value: Value::Proc(Proc::new(pns, prank)),
            },
            Kval::new(keys::SPAWNED, true),
        ];
        if let Err(e) = self.server.add_namespace(spec) {
            eprintln!("pmix-run: cannot register spawned namespace {nspace}: {e}");
            return Err(ERR_JOB_FAILED_TO_LAUNCH);
        }
        *self.placed.lock().unwrap_or_else(|e| e.into_inner()) += n;
        let notify =
            find(&req.info, keys::NOTIFY_COMPLETION).and_then(Value::as_bool) == Some(true);
        let mut jobs = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.push(JobRec {
            nspace: nspace.clone(),
            parent: Some((req.parent.clone(), notify)),
        });
        drop(jobs);
        let wdir_of = |info: &[Info]| {
            find(info, keys::WDIR)
                .and_then(Value::as_str)
                .map(std::path::PathBuf::from)
        };
        let mut procs = Vec::with_capacity(n as usize);
        for app in &req.apps {
            let env = app_env(app, &req.info);
            let cwd = app
                .cwd
                .as_ref()
                .and_then(|c| c.as_str())
                .filter(|c| !c.is_empty())
                .map(std::path::PathBuf::from)
                .or_else(|| wdir_of(&app.info))
                .or_else(|| wdir_of(&req.info));
            let program: OsString = app
                .cmd
                .as_ref()
                .and_then(|c| c.as_str())
                .unwrap_or_default()
                .into();
            let argv: Vec<OsString> = app
                .argv
                .iter()
                .filter_map(|a| a.as_str())
                .map(OsString::from)
                .collect();
            for _ in 0..app.maxprocs.max(0) {
                let r = procs.len() as u32;
                let mut e = env.clone();
                e.extend(
                    self.server
                        .client_env(&nspace, r)
                        .into_iter()
                        .map(|(k, v)| (k.into(), v.into())),
                );
                e.push(("FLUX_JOB_ID".into(), nspace.clone().into()));
                procs.push(Launch {
                    program: program.clone(),
                    argv0: argv.first().cloned(),
                    args: argv.iter().skip(1).cloned().collect(),
                    env: e,
                    cwd: cwd.clone(),
                    cpus: cpusets[r as usize].clone(),
                });
            }
        }
        Ok(NewJob { job, nspace, procs })
    }

    fn spawn_done(&self, id: u64, result: Result<String, i32>) {
        let reply = lock_spawns(&self.shared).remove(&id);
        if let Some(reply) = reply {
            reply.send(result.map_err(Status));
        }
    }

    fn job_failed(&self, job: usize) {
        if let Some(ns) = self.nspace_of(job) {
            // Its processes were killed or never ran: none is reported lost.
            let _ = self.server.remove_namespace(&ns);
        }
    }

    fn job_ended(&self, job: usize, status: i32) {
        let (nspace, parent) = {
            let jobs = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
            let Some(JobRec {
                nspace,
                parent: Some(p),
            }) = jobs.get(job)
            else {
                return;
            };
            (nspace.clone(), p.clone())
        };
        let ((pns, prank), notify) = parent;
        let mut info = vec![
            Info::new(
                keys::EVENT_AFFECTED_PROC,
                Proc::new(nspace.as_str(), pmix::wire::Rank::WILDCARD.0),
            ),
            Info::new(keys::JOB_TERM_STATUS, Value::Status(status)),
            Info::new(keys::EVENT_CUSTOM_RANGE, Proc::new(pns.as_str(), prank)),
        ];
        if !notify {
            // Not asked for: default handlers (Open MPI's aborts on events it does
            // not know) do not hear it.
            info.push(Info::new(keys::EVENT_NON_DEFAULT, true));
        }
        let _ = self
            .server
            .raise_event(EVENT_JOB_END, None, info, pmix::wire::DataRange::CUSTOM);
    }
}
