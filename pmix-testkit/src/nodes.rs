//! The node test bed (`.ci/nodes.sh`, docs/nodes.md): nodes that are nodes on this
//! machine (each a network, UTS and mount namespace: its own address, host name,
//! `/tmp` and `/dev/shm`), two Slurm clusters over them (`openpmix`: Slurm's plugin
//! loads OpenPMIx's server; `ours`: it loads the library installed by
//! [`TestBed::install_ours`]) and an rsh agent that starts `mpirun`'s daemons on
//! them.
//!
//! A test gets the bed with [`TestBed::get`] (`None`, after [`peer_absent`]'s
//! notice, when it is not up: a failure under `CI=true`), and holds its lock while it
//! runs jobs: one test at a time uses the bed (a job of one would see another's
//! faults, and the `ours` cluster has one library). Every job runs with a bound
//! ([`Run`]: what it printed, how it ended, how long it took, whether the bound cut
//! it); a job the bound cuts is ended by pid (its process group) and, for Slurm, by
//! its job name (`scancel --name`), which only this run uses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::peer_absent;

/// The two Slurm clusters of the bed: whose PMIx server Slurm's plugin loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cluster {
    /// Debian's OpenPMIx 4.2.2.
    OpenPmix,
    /// The library [`TestBed::install_ours`] put in place.
    Ours,
}

impl Cluster {
    /// Its name for `nodes.sh srun`.
    pub fn name(self) -> &'static str {
        match self {
            Cluster::OpenPmix => "openpmix",
            Cluster::Ours => "ours",
        }
    }
}

/// How a job on the bed ended.
#[derive(Debug)]
pub struct Run {
    /// Its exit status (`None`: killed by a signal, or cut by the bound).
    pub code: Option<i32>,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
    /// Whether the bound cut it (it hung).
    pub hung: bool,
}

impl Run {
    /// The job's lines on stdout that contain `tag`, sorted.
    pub fn lines(&self, tag: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .stdout
            .lines()
            .filter(|l| l.contains(tag))
            .map(str::to_owned)
            .collect();
        v.sort();
        v
    }

    /// The whole story, for an assertion's message.
    pub fn show(&self) -> String {
        format!(
            "exit {:?} after {:.1} s{}\n--- stdout\n{}--- stderr\n{}",
            self.code,
            self.elapsed.as_secs_f64(),
            if self.hung {
                " (cut by the bound: hung)"
            } else {
                ""
            },
            self.stdout,
            self.stderr
        )
    }
}

static LOCK: Mutex<()> = Mutex::new(());

/// The bed, held by one test at a time.
pub struct TestBed {
    script: PathBuf,
    state: PathBuf,
    nodes: Vec<String>,
    _guard: MutexGuard<'static, ()>,
}

/// The repository's `.ci/nodes.sh`.
pub fn script() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/nodes.sh"))
}

/// A directory every node sees, removed on drop: `/var/tmp/pmix-rs-nodes/TAG-PID`
/// (not `/tmp`, which is each node's own, nor the build's `target/`, which may lie
/// under `/tmp`): the programs a job on the bed runs, and copies of this build's
/// libraries they link with.
#[derive(Debug)]
pub struct SharedDir(pub PathBuf);

impl SharedDir {
    /// A fresh, empty one for `tag`.
    ///
    /// # Panics
    /// When it cannot be made.
    pub fn new(tag: &str) -> SharedDir {
        let d =
            PathBuf::from("/var/tmp/pmix-rs-nodes").join(format!("{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
        SharedDir(d)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A copy here of this build's `lib<name>.so` ([`crate::cprog::lib_dir`]).
    ///
    /// # Panics
    /// When it cannot be copied.
    pub fn lib(&self, name: &str) -> PathBuf {
        let file = format!("lib{name}.so");
        let dst = self.0.join(&file);
        if !dst.exists() {
            let src = crate::cprog::lib_dir(name).join(&file);
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("copy {}: {e}", src.display()));
        }
        dst
    }

    /// `src_dir/NAME.c` compiled against our headers and linked with the copy of
    /// `libpmix_ffi` here: `NAME.ffi` here.
    ///
    /// # Panics
    /// As [`crate::cprog::compile`].
    pub fn build_ours(&self, src_dir: &Path, name: &str) -> PathBuf {
        self.lib("pmix_ffi");
        let exe = self.0.join(format!("{name}.ffi"));
        crate::cprog::compile(
            &src_dir.join(format!("{name}.c")),
            &exe,
            &[&crate::cprog::our_include(), src_dir],
            &crate::cprog::link_shared(&self.0, "pmix_ffi"),
        );
        exe
    }

    /// `src_dir/NAME.c` compiled against OpenPMIx (`NAME.libpmix2` here); `None`
    /// after the notice when it is absent.
    ///
    /// # Panics
    /// As [`crate::cprog::build_openpmix`].
    pub fn build_openpmix(&self, src_dir: &Path, name: &str, what: &str) -> Option<PathBuf> {
        crate::cprog::build_openpmix(src_dir, name, &self.0, what)
    }

    /// `dropin/` here, whose `libpmix.so.2` is a copy of this build's
    /// `libpmix_dropin.so` (our library under OpenPMIx's soname).
    ///
    /// # Panics
    /// When it cannot be made.
    pub fn dropin(&self) -> PathBuf {
        let d = self.0.join("dropin");
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
        let src = self.lib("pmix_dropin");
        let dst = d.join("libpmix.so.2");
        if !dst.exists() {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("copy {}: {e}", src.display()));
        }
        d
    }
}

impl Drop for SharedDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl TestBed {
    /// The bed, when `nodes.sh status` says it is up (waiting for the test that
    /// holds it); else `None` after the notice for `what`.
    pub fn get(what: &str) -> Option<TestBed> {
        let guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        let script = script();
        let out = Command::new("bash")
            .arg(&script)
            .arg("status")
            .stdin(Stdio::null())
            .output();
        let up = out.as_ref().is_ok_and(|o| o.status.success());
        if !up {
            let why = out.map_or_else(
                |e| e.to_string(),
                |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
            );
            peer_absent(
                &format!("{what}: the node test bed is not up ({why})"),
                "bash .ci/nodes.sh up",
            );
            return None;
        }
        let state = PathBuf::from(
            std::env::var_os("PMIX_RS_NODES_STATE").unwrap_or_else(|| "/run/pmix-rs-nodes".into()),
        );
        let nodes = std::fs::read_to_string(state.join("nodes"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        Some(TestBed {
            script,
            state,
            nodes,
            _guard: guard,
        })
    }

    /// The nodes' names (`node1`, `node2`, …), which are their host names.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// `mpirun`'s rsh agent on the bed.
    pub fn rsh_agent(&self) -> PathBuf {
        self.state.join("rsh")
    }

    /// Makes `lib` the library the `ours` cluster's plugin loads (atomically: a step
    /// starting meanwhile loads the old file or the new one).
    ///
    /// # Panics
    /// When it cannot be copied.
    pub fn install_ours(&self, lib: &Path) {
        let dst = self.state.join("ours/libpmix.so");
        let tmp = self
            .state
            .join(format!("ours/libpmix.so.{}", std::process::id()));
        std::fs::copy(lib, &tmp).unwrap_or_else(|e| panic!("copy {}: {e}", lib.display()));
        std::fs::rename(&tmp, &dst).unwrap_or_else(|e| panic!("install {}: {e}", dst.display()));
    }

    /// A `nodes.sh` command line (`exec NODE …`, `srun CLUSTER …`, `kill NODE`, …).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("bash");
        cmd.arg(&self.script).args(args);
        crate::child::without_job_env(&mut cmd);
        cmd
    }

    /// Runs a `nodes.sh` helper command (kill, revive, link, slow) to completion.
    ///
    /// # Panics
    /// When it fails or takes over 240 s.
    pub fn admin(&self, args: &[&str]) -> String {
        let r = run_within(self.command(args), Duration::from_secs(240), None);
        assert!(
            r.code == Some(0) && !r.hung,
            "nodes.sh {args:?}: {}",
            r.show()
        );
        r.stdout
    }

    /// `srun ARGS` on `cluster` (from node1) with `--mpi=pmix`, the environment
    /// `env` exported to the tasks, bounded by `limit`.
    pub fn srun(
        &self,
        cluster: Cluster,
        env: &[(&str, &str)],
        args: &[&str],
        limit: Duration,
    ) -> Run {
        let name = format!("pmixrs-{}-{}", std::process::id(), unique());
        let mut export = String::from("ALL");
        for (k, v) in env {
            export.push_str(&format!(",{k}={v}"));
        }
        let mut cmd = self.command(&["srun", cluster.name(), "--mpi=pmix"]);
        cmd.arg(format!("--job-name={name}"))
            .arg(format!("--export={export}"))
            .args(args);
        let cancel = self.command(&["exec", "node1", "env"]);
        let conf = format!(
            "SLURM_CONF=/etc/slurm-pmix-rs-nodes/{}.conf",
            cluster.name()
        );
        let mut cancel = cancel;
        cancel.args([conf.as_str(), "scancel", "--name", &name]);
        run_within(cmd, limit, Some(cancel))
    }

    /// `mpirun` on node1 over the bed (`--host` as given), with Open MPI's rsh
    /// launcher through the bed's agent; `dropin`: a directory whose `libpmix.so.2`
    /// `mpirun`, its daemons and (unless `ARGS` say otherwise with `-x`) the ranks
    /// load. Bounded by `limit`.
    pub fn mpirun(&self, dropin: Option<&Path>, args: &[&str], limit: Duration) -> Run {
        let mut cmd = self.command(&["exec", "node1", "env"]);
        if let Some(d) = dropin {
            cmd.arg(format!("LD_LIBRARY_PATH={}", d.display()));
        }
        cmd.args([
            "mpirun",
            "--allow-run-as-root",
            "--mca",
            "plm",
            "rsh",
            "--mca",
        ])
        .arg("plm_rsh_agent")
        .arg(self.rsh_agent())
        .args(["--mca", "plm_rsh_no_tree_spawn", "1"])
        .args(args);
        run_within(cmd, limit, None)
    }
}

fn unique() -> usize {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Runs `cmd` (stdin `/dev/null`, its own process group) for at most `limit`: past
/// it the group is killed (and `cancel` run, for a job a daemon started), and the
/// run marked hung. Never panics on the job's account.
///
/// # Panics
/// When the command cannot start.
pub fn run_within(mut cmd: Command, limit: Duration, cancel: Option<Command>) -> Run {
    let start = Instant::now();
    let mut p = crate::child::Piped::spawn(&mut cmd);
    let mut hung = false;
    let status = loop {
        if let Some(s) = p.child.try_wait().expect("wait for the child") {
            break Some(s);
        }
        if start.elapsed() >= limit {
            hung = true;
            if let Some(mut c) = cancel {
                let _ = c.stdin(Stdio::null()).output();
            }
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", p.child.id())])
                .status();
            let _ = p.child.kill();
            break p.child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    p.drained(Duration::from_secs(10));
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    Run {
        code: if hung {
            None
        } else {
            status.and_then(|s| s.code())
        },
        stdout: text(p.stdout()),
        stderr: text(p.stderr()),
        elapsed,
        hung,
    }
}

/// Where a job runs on the bed: which host, with whose server.
#[derive(Clone, Debug)]
pub enum Host {
    /// `srun` on a cluster.
    Slurm(Cluster),
    /// `mpirun` with a daemon per node; `Some(dir)`: on the library `dir` holds as
    /// `libpmix.so.2` (ours), `None`: on OpenPMIx.
    Mpirun(Option<PathBuf>),
}

impl Host {
    /// "Slurm" or "mpirun".
    pub fn host_name(&self) -> &'static str {
        match self {
            Host::Slurm(_) => "Slurm",
            Host::Mpirun(_) => "mpirun",
        }
    }

    /// Whose server: "OpenPMIx" or "pmix-rs".
    pub fn server_name(&self) -> &'static str {
        match self {
            Host::Slurm(Cluster::OpenPmix) | Host::Mpirun(None) => "OpenPMIx",
            _ => "pmix-rs",
        }
    }
}

/// A fault the bed makes on node3 while a job of two ranks per node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Every process of the node killed at once (its daemons included).
    NodeKilled,
    /// Its link down for 2 s, then up again.
    LinkCut2s,
    /// Its link down for good (up again once the job is over).
    LinkCut,
    /// Its link slowed (netem 50 ms, or an htb rate limit where the kernel has no
    /// netem: `nodes.sh slow`).
    SlowLink,
}

impl Fault {
    /// Its name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Fault::NodeKilled => "node killed",
            Fault::LinkCut2s => "link cut 2 s",
            Fault::LinkCut => "link cut for good",
            Fault::SlowLink => "slow link",
        }
    }
}

/// What one fault did to one job (a row of the fault table).
#[derive(Debug)]
pub struct FaultRow {
    /// The host and server.
    pub host: String,
    /// The server.
    pub server: String,
    /// The fault.
    pub fault: Fault,
    /// What the survivors did (`tests/c/node_fault.c`'s operation).
    pub op: String,
    /// What the survivors (ranks 0 to 3, on node1 and node2) saw, summed up.
    pub seen: String,
    /// Seconds from the fault to the first survivor's first failed operation or
    /// event (`None`: none saw one).
    pub noticed: Option<f64>,
    /// Seconds from the fault to the job's end.
    pub ended: f64,
    /// Operations that succeeded on the survivors after the fault.
    pub ops_after: u64,
    /// The job outlived its bound.
    pub hung: bool,
    /// The job's whole output, for a failed assertion.
    pub output: String,
}

fn wall() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl TestBed {
    /// Runs `program` (`tests/c/node_fault.c` built with our client library, which
    /// every host's server serves) as 6 ranks, two per node, doing `op` for
    /// `seconds`; makes `fault` on node3 once the ranks are ready (about 3 s in);
    /// then restores node3 (its processes killed by pid, its daemons restarted, its
    /// link up and fast). `bound`: how long the job may take in all.
    pub fn fault_row(
        &self,
        host: &Host,
        fault: Fault,
        program: &Path,
        op: &str,
        seconds: u32,
        bound: Duration,
    ) -> FaultRow {
        let secs = seconds.to_string();
        let prog = program.to_str().expect("a UTF-8 path").to_owned();
        let job = {
            let args: Vec<&str> = match host {
                Host::Slurm(_) => vec!["-N", "3", "-n", "6", "--ntasks-per-node=2"],
                Host::Mpirun(_) => vec![
                    "--host",
                    "node1:2,node2:2,node3:2",
                    "--mca",
                    "btl",
                    "self,vader,tcp",
                    // A node cut off is noticed in about 4 s (the defaults, 300 s
                    // idle then 9 probes 20 s apart, are 8 minutes).
                    "--mca",
                    "oob_tcp_keepalive_time",
                    "1",
                    "--mca",
                    "oob_tcp_keepalive_intvl",
                    "1",
                    "--mca",
                    "oob_tcp_keepalive_probes",
                    "3",
                    "-x",
                    "LD_LIBRARY_PATH=/nonexistent",
                ],
            };
            let args: Vec<String> = args
                .into_iter()
                .chain([prog.as_str(), op, secs.as_str()])
                .map(str::to_owned)
                .collect();
            let host = host.clone();
            let bed: &TestBed = self;
            // The job runs on its own thread; the fault is made from this one.
            let cmd_args = args;
            std::thread::scope(|s| {
                let h = s.spawn(move || {
                    let a: Vec<&str> = cmd_args.iter().map(String::as_str).collect();
                    match &host {
                        Host::Slurm(c) => bed.srun(*c, &[], &a, bound),
                        Host::Mpirun(d) => bed.mpirun(d.as_deref(), &a, bound),
                    }
                });
                std::thread::sleep(Duration::from_secs(3));
                let at = wall();
                match fault {
                    Fault::NodeKilled => {
                        self.admin(&["kill", "node3"]);
                    }
                    Fault::LinkCut2s => {
                        self.admin(&["link", "node3", "down"]);
                        std::thread::sleep(Duration::from_secs(2));
                        self.admin(&["link", "node3", "up"]);
                    }
                    Fault::LinkCut => {
                        self.admin(&["link", "node3", "down"]);
                    }
                    Fault::SlowLink => {
                        self.admin(&["slow", "node3", "on"]);
                    }
                }
                let run = h.join().expect("the job's thread");
                (run, at)
            })
        };
        let (run, at) = job;
        let end = wall();
        // Restore node3 for the next job.
        match fault {
            Fault::LinkCut => {
                self.admin(&["link", "node3", "up"]);
            }
            Fault::SlowLink => {
                self.admin(&["slow", "node3", "off"]);
            }
            _ => {}
        }
        if fault != Fault::LinkCut2s && fault != Fault::SlowLink {
            self.admin(&["kill", "node3"]);
            self.admin(&["revive", "node3"]);
        }
        summarize(host, fault, op, &run, at, end)
    }
}

/// The row of `run` (module docs of `node_fault.c` for its lines): survivors are
/// ranks 0 to 3.
fn summarize(host: &Host, fault: Fault, op: &str, run: &Run, at: f64, end: f64) -> FaultRow {
    let mut first: Option<f64> = None;
    let mut seen: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    let mut before: BTreeSet<String> = BTreeSet::new();
    let mut ops_after = 0u64;
    let mut ended_ranks = BTreeSet::new();
    let mut last_ok: BTreeMap<u32, u64> = BTreeMap::new();
    for line in run.stdout.lines() {
        let Some((_, rest)) = line.split_once("node_fault rank ") else {
            continue;
        };
        let Some((rank, rest)) = rest.split_once(": ") else {
            continue;
        };
        let Ok(rank) = rank.parse::<u32>() else {
            continue;
        };
        if rank > 3 {
            continue;
        }
        let mut w = rest.split_whitespace();
        let Some(t) = w.next().and_then(|t| t.parse::<f64>().ok()) else {
            continue;
        };
        let what: Vec<&str> = w.collect();
        match what.as_slice() {
            ["end"] => {
                ended_ranks.insert(rank);
            }
            ["op", n, "STATUS", "SUCCESS"] if t > at => {
                let n: u64 = n.parse().unwrap_or(0);
                let before = last_ok.entry(rank).or_insert(n);
                ops_after = ops_after.max(n.saturating_sub(*before));
            }
            ["op", n, "STATUS", "SUCCESS"] => {
                last_ok.insert(rank, n.parse().unwrap_or(0));
            }
            ["op", _, "STATUS", s] if t > at => {
                first = Some(first.map_or(t, |f: f64| f.min(t)));
                seen.entry(format!("{op} {s}")).or_default().insert(rank);
            }
            ["op", _, "STATUS", s] => {
                before.insert(format!("{op} {s}"));
            }
            ["event", code, "from", _] if t > at => {
                first = Some(first.map_or(t, |f: f64| f.min(t)));
                seen.entry(format!("event {code}"))
                    .or_default()
                    .insert(rank);
            }
            ["validate_global", n, "failed"] if t > at => {
                first = Some(first.map_or(t, |f: f64| f.min(t)));
                seen.entry(format!("validate_global: {n} failed"))
                    .or_default()
                    .insert(rank);
            }
            _ => {}
        }
    }
    let mut parts: Vec<String> = seen
        .iter()
        .map(|(k, r)| format!("{k} ({}/4)", r.len()))
        .collect();
    let killed = 4 - ended_ranks.len();
    if killed > 0 && !run.hung {
        parts.push(format!("ended by the host ({killed}/4)"));
    }
    if parts.is_empty() {
        parts.push("nothing".to_owned());
    }
    if !before.is_empty() {
        let b: Vec<String> = before.into_iter().collect();
        parts.push(format!("(before the fault: {})", b.join(", ")));
    }
    FaultRow {
        host: host.host_name().to_owned(),
        server: host.server_name().to_owned(),
        fault,
        op: op.to_owned(),
        seen: parts.join(", "),
        noticed: first.map(|f| f - at),
        ended: end - at,
        ops_after,
        hung: run.hung,
        output: run.show(),
    }
}
