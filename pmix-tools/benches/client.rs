//! `cargo bench -p pmix-tools --bench client`: our client library against OpenPMIx's,
//! side by side in one run (issue 13). The same C timing client (`benches/c/timing.c`)
//! is built twice, against `pmix-ffi/include` linked with `libpmix_ffi` ("ours") and
//! against Debian's OpenPMIx 4.2.2 linked with `libpmix2` ("libpmix2"), and run:
//!
//! - one rank's `PMIx_Init` under `pmix-run`, both libraries: target ours ≤ 1 ms of wall
//!   time (libpmix2 spends ~3 ms there, ~12 ms with no server);
//! - 8 ranks' `PMIx_Fence` latency (no data; the mean of back-to-back fences) and
//!   `PMIx_Get` of a peer's key (the first, a server round trip; and cached after a
//!   `PMIX_COLLECT_DATA` fence) under `pmix-run`, both libraries: target ours not slower
//!   (at most 1.0× libpmix2's time);
//! - the wall time of an 8-rank init+fence+finalize job: ours under `pmix-run` against
//!   libpmix2 under Debian's `mpirun` (target ≥ 10× faster), and libpmix2 under
//!   `pmix-run` for reference.
//!
//! **What it showed when written** (2 CPUs of a virtual machine, 2026-12-02, three
//! runs): ours faster than libpmix2 everywhere under the same server (init 1.8–4.5×,
//! fence 1.3–2.5×, the first Get 1.4–2.6×, a cached Get ~80× since it never leaves
//! the process, the 8-rank job 1.35–1.8×). The job target is missed: 3.6–5.3× against
//! mpirun's (10× would be ~11 ms, less than starting 8 processes costs here, ~13 ms).
//! The init target was met in one run (0.69 ms) and missed in two (2.4 and 5.4 ms):
//! this machine slows down under sustained load; the same binary run alone, one run
//! after another, takes 0.45–0.7 ms (libpmix2: 2.4–2.7 ms).
//!
//! Sides alternate run by run; every number is a median over runs. A table with ratios
//! and targets is printed, and the bench exits 1 when a target is missed: the numbers
//! are a gate. Every run is bounded ([`common::RUN_LIMIT`]). Without `mpirun` or
//! `pkg-config pmix` it prints a `NOTICE:` and exits 0, except under `CI=true`.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use common::{Row, median, print_table, rank_mean, run, scrub};

/// The ranks of the job and of the fence and get measurements.
const RANKS: u32 = 8;
/// Back-to-back fences timed in each measure run.
const FENCES: u32 = 200;
/// Cached Gets timed in each measure run.
const GETS: u32 = 1000;
/// Runs of each measurement per side.
const RUNS: usize = 9;
/// The pause after each round, whose last run is mpirun's.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// One way to run the timing client.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Side {
    /// Linked with libpmix_ffi, under pmix-run.
    Ours,
    /// Linked with libpmix2, under pmix-run.
    Libpmix2,
    /// Linked with libpmix2, under mpirun.
    Libpmix2Mpirun,
}

struct Setup {
    ours: PathBuf,
    theirs: PathBuf,
    pmix_run: PathBuf,
}

fn command(s: &Setup, side: Side, n: u32, args: &[&str]) -> Command {
    let mut cmd = match side {
        Side::Ours | Side::Libpmix2 => {
            let mut c = Command::new(&s.pmix_run);
            c.args(["-n", &n.to_string(), "--timeout", "50"]);
            c.arg(if side == Side::Ours {
                &s.ours
            } else {
                &s.theirs
            });
            c
        }
        Side::Libpmix2Mpirun => {
            let mut c = Command::new("mpirun");
            c.args([
                "--allow-run-as-root",
                "--oversubscribe",
                "-n",
                &n.to_string(),
            ]);
            c.arg(&s.theirs);
            c
        }
    };
    cmd.args(args);
    scrub(&mut cmd);
    cmd
}

type Numbers = BTreeMap<(Side, &'static str), f64>;

fn gather(s: &Setup) -> Result<Numbers, String> {
    let (fences, gets) = (FENCES.to_string(), GETS.to_string());
    let mut samples: BTreeMap<(Side, &'static str), Vec<f64>> = BTreeMap::new();
    let mut add = |side, what, v| samples.entry((side, what)).or_default().push(v);
    let all = [Side::Ours, Side::Libpmix2, Side::Libpmix2Mpirun];
    // One untimed run of each, so nobody pays for a cold page cache.
    for side in all {
        run(command(s, side, RANKS, &["job"]))?;
    }
    for _ in 0..RUNS {
        for side in [Side::Ours, Side::Libpmix2] {
            let r = run(command(s, side, 1, &["init"]))?;
            add(side, "init_us", rank_mean(&r, "init_us", 1)?);
            add(side, "init_cpu_us", rank_mean(&r, "init_cpu_us", 1)?);
            let r = run(command(s, side, RANKS, &["measure", &fences, &gets]))?;
            for key in ["fence_us", "fence_cpu_us", "get_dmodex_us", "get_cached_us"] {
                add(side, key, rank_mean(&r, key, RANKS)?);
            }
        }
        for side in all {
            let r = run(command(s, side, RANKS, &["job"]))?;
            add(side, "job_ms", r.wall.as_secs_f64() * 1e3);
        }
        // mpirun's daemons and ranks finish in the background after it exits: let
        // them, so the next run has the machine to itself.
        std::thread::sleep(SETTLE);
    }
    Ok(samples.into_iter().map(|(k, v)| (k, median(v))).collect())
}

fn table(n: &Numbers) -> Vec<Row> {
    let g = |side, what| n[&(side, what)];
    let not_slower = |what: &'static str, label: &'static str| {
        let (o, t) = (g(Side::Ours, what), g(Side::Libpmix2, what));
        Row {
            what: label,
            ours: o,
            theirs: t,
            theirs_name: "libpmix2, pmix-run",
            unit: "us",
            target: "not slower",
            met: Some(o <= t),
        }
    };
    let job_ours = g(Side::Ours, "job_ms");
    let job_mpirun = g(Side::Libpmix2Mpirun, "job_ms");
    let init = g(Side::Ours, "init_us");
    vec![
        Row {
            what: "job: 8 ranks init+fence+finalize, wall",
            ours: job_ours,
            theirs: job_mpirun,
            theirs_name: "libpmix2, mpirun",
            unit: "ms",
            target: ">= 10x faster",
            met: Some(job_mpirun / job_ours >= 10.0),
        },
        Row {
            what: "  the same",
            ours: job_ours,
            theirs: g(Side::Libpmix2, "job_ms"),
            theirs_name: "libpmix2, pmix-run",
            unit: "ms",
            target: "none set",
            met: None,
        },
        Row {
            what: "PMIx_Init, 1 rank, wall",
            ours: init,
            theirs: g(Side::Libpmix2, "init_us"),
            theirs_name: "libpmix2, pmix-run",
            unit: "us",
            target: "ours <= 1000 us",
            met: Some(init <= 1000.0),
        },
        Row {
            what: "  the same, CPU time of the process",
            ours: g(Side::Ours, "init_cpu_us"),
            theirs: g(Side::Libpmix2, "init_cpu_us"),
            theirs_name: "libpmix2, pmix-run",
            unit: "us",
            target: "none set",
            met: None,
        },
        not_slower("fence_us", "PMIx_Fence, 8 ranks, no data"),
        Row {
            met: None,
            target: "none set",
            ..not_slower("fence_cpu_us", "  the same, CPU time of a rank")
        },
        not_slower("get_dmodex_us", "PMIx_Get, peer's key, 1st (server)"),
        not_slower("get_cached_us", "PMIx_Get, peer's key, cached"),
    ]
}

fn main() -> ExitCode {
    let Some((openpmix, dir)) = common::peers("client", "pmix-tools-bench-client") else {
        return ExitCode::SUCCESS;
    };
    let (ours, theirs, lib) = common::build_both(&dir, &openpmix);
    let setup = Setup {
        ours,
        theirs,
        pmix_run: PathBuf::from(env!("CARGO_BIN_EXE_pmix-run")),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "bench client: timing.c linked with {} (ours) and with libpmix2; {cpus} CPUs; \
         medians of {RUNS} runs ({FENCES} fences, {GETS} cached gets per measure run)",
        lib.join("libpmix_ffi.so").display()
    );
    let numbers = match gather(&setup) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("bench client: FAIL: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rows = table(&numbers);
    print_table(&rows);
    println!(
        "in-rank numbers: clock_gettime around the calls alone (client library + server + \
         waiting for a CPU: {RANKS} ranks and the server on {cpus} CPUs); CPU: \
         CLOCK_PROCESS_CPUTIME_ID, every thread of the rank's process; job wall: spawn of \
         the launcher to its exit."
    );
    common::verdict("client", &rows)
}
