//! `pmix-run`: the launcher (docs/design.md §8). It starts this crate's PMIx server in its own
//! process ([`pmix::server::Server`], through [`server::Embedded`]), registers one
//! namespace of N ranks (and one per job its ranks spawn), spawns the ranks with the
//! rendezvous in their environment,
//! binds them, forwards their output and pmix-run's SIGINT/SIGTERM, tells the server
//! when a rank ends, and exits with the job's status.
//!
//! ```text
//! pmix-run -n N [--tag-output] [--timeout S] [--grace S] [--keep-going]
//!          [--bind none|core|package] PROG [ARGS]...
//! ```
//!
//! The parts: the command line ([`args`]), the bindings ([`bind`]), starting a rank
//! ([`spawn`]), output forwarding ([`output`]), the exit status ([`policy`]), the job
//! loop ([`job`], written against the small [`jobserver::JobServer`] trait so it is
//! tested with fake servers too; the processes of its jobs are `procs`'), what wakes
//! it ([`wake`]: the server's host, on the server's thread, and SIGCHLD) and the
//! embedded server with its host ([`server`]).
//!
//! **Open MPI.** Open MPI 4.1 uses a PMIx server only when a launcher claims the
//! process (docs/serving.md §1(b)); pmix-run sets `FLUX_JOB_ID` (to the namespace's name)
//! for that. Flux's claim was chosen over Slurm's trio (`SLURM_JOBID`,
//! `SLURM_NODELIST`, `SLURM_STEP_ID`) because it is one variable, Open MPI's flux
//! component asks for direct launch with binding policy "none" (pmix-run binds the
//! ranks itself), and Slurm's variables would make Slurm-aware code in the ranks
//! (Open MPI's own allocation and spawn components, job scripts) believe it runs in a
//! Slurm step that does not exist.
//!
//! **Spawned jobs.** A rank's `PMIx_Spawn` starts a new job under the same loop
//! ([`job`], [`server::Embedded`]'s `start_job`): its own namespace, bindings by the
//! same `--bind`, output tagged `[job:rank] `, the same exit rules; pmix-run ends when
//! every job has ended (docs/design.md, "Dynamic processes under pmix-run").
//!
//! **Exit status**: [`policy`]; 64 on a usage error; 70 when the server cannot be
//! started; 126/127 when the program cannot be run.
//!
//! **Not done**: one node only (every rank on this machine); stdin is not forwarded
//! (ranks read `/dev/null`); `--bind core` binds to one PU (the topology model has no
//! core objects, [`bind`]); no `pmix.locstr` is registered ([`server`]).

pub mod args;
pub mod bind;
pub mod job;
pub mod jobserver;
pub mod output;
pub mod policy;
mod procs;
pub mod server;
pub mod spawn;
pub mod wake;

use std::ffi::OsString;
use std::sync::{Arc, Mutex};

use args::{Bind, Stop};
use job::{JobSpec, Sinks};
use signal_hook::consts::signal::{SIGINT, SIGTERM};

/// Exit status when the job could not be set up (the server, the topology).
pub const EXIT_SOFTWARE: i32 = 70;

/// Runs `pmix-run` with `args` (without the program name), printing to this process's
/// standard output and error; returns the exit status.
pub fn main(args: &[OsString]) -> i32 {
    let cli = match args::parse(args) {
        Ok(cli) => cli,
        Err(Stop::Print(text)) => {
            print!("{text}");
            return 0;
        }
        Err(Stop::Usage(msg)) => {
            eprint!("{}", args::usage_text(&msg));
            return args::EXIT_USAGE;
        }
    };
    let sinks = Sinks {
        stdout: Arc::new(Mutex::new(std::io::stdout())),
        stderr: Arc::new(Mutex::new(std::io::stderr())),
    };
    // Registered before any rank exists, so no signal is missed.
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            job::say(&sinks, &format!("cannot catch SIGINT/SIGTERM: {e}"));
            return EXIT_SOFTWARE;
        }
    };
    let service = Arc::new(
        match pmix::Service::new(pmix::topology::source_name_from_env(), None) {
            Ok(s) => s,
            Err(e) => {
                job::say(&sinks, &format!("cannot open the topology: {e}"));
                return EXIT_SOFTWARE;
            }
        },
    );
    let cpusets = match plan_bindings(&service, cli.bind, cli.n) {
        Ok(c) => c,
        Err(e) => {
            job::say(&sinks, &format!("--bind {}: {e}", bind_name(cli.bind)));
            return args::EXIT_USAGE;
        }
    };
    if cli.report_bindings {
        for line in bind::report(&service, &cpusets) {
            job::say(&sinks, &line);
        }
    }
    // Not "pmix…": libpmix2's store takes a key that starts with "pmix" for one of its
    // reserved attributes, and OpenPMIx's own examples build keys from the namespace
    // (`<nspace>-<rank>-internal`): PMIx_Store_internal then fails with BAD-PARAM.
    let nspace = format!("pmrun.{}", std::process::id());
    let plan: server::BindPlan = {
        let service = Arc::clone(&service);
        let bind = cli.bind;
        Box::new(move |n| plan_bindings(&service, bind, n))
    };
    // The job loop's channel: the server's host sends on it from the start.
    let (wake_tx, wakes) = std::sync::mpsc::channel();
    let server = match server::Embedded::start(
        &nspace,
        &cpusets,
        Some(Arc::clone(&service)),
        plan,
        &cli.server_limits,
        wake_tx.clone(),
    ) {
        Ok(s) => s,
        Err(e) => {
            job::say(&sinks, &e);
            return EXIT_SOFTWARE;
        }
    };
    let spec = JobSpec {
        command: cli.command,
        cpusets,
        tag_output: cli.tag_output,
        timeout: cli.timeout,
        grace: cli.grace,
        keep_going: cli.keep_going,
        extra_env: vec![("FLUX_JOB_ID".into(), nspace.clone().into())],
    };
    let code = job::run(&spec, &server, (wake_tx, wakes), &sinks, &mut || {
        signals.pending().collect()
    });
    if let Err(e) = server.shutdown() {
        job::say(&sinks, &e);
    }
    code
}

/// The bindings of `--bind` on this machine: its packages from the topology, the PUs
/// from pmix-run's own binding.
fn plan_bindings(
    service: &pmix::Service,
    bind: Bind,
    n: u32,
) -> Result<Vec<Option<pmix_core::CpuSet>>, String> {
    if bind == Bind::None {
        return Ok(vec![None; n as usize]);
    }
    let allowed = service
        .own_cpuset(pmix::os::BindEnvelope::Process)
        .map_err(|e| format!("cannot read pmix-run's own binding: {e}"))?;
    let packages = match service.topology() {
        Ok(t) => t.packages().to_vec(),
        Err(e) => return Err(format!("cannot load the topology: {e}")),
    };
    bind::plan(bind, n, &allowed, &packages)
}

fn bind_name(b: Bind) -> &'static str {
    match b {
        Bind::None => "none",
        Bind::Core => "core",
        Bind::Package => "package",
    }
}
