//! `cargo bench -p pmix-tools --bench speed`: a connected `PMIx_Init` and a whole
//! small job against their floors and peers, side by side in one run (issue 26). The
//! C timing client (`benches/c/timing.c`) is built against `pmix-ffi/include` linked
//! with `libpmix_ffi` ("ours") and against Debian's OpenPMIx 4.2.2 (`libpmix2`), and
//! run:
//!
//! - **one rank's life** under `pmix-run` (`timing lifecycle`), both libraries:
//!   `PMIx_Init` (target: ours ≤ 250 µs and ≥ 10× faster than libpmix2's), then a
//!   fence, the resident set of the idle connected client (VmRSS), and
//!   `PMIx_Finalize`; and each library's init with no server at all (a singleton),
//!   for reference: ours then runs nearly the same code without the round trip;
//! - **a job of 8 ranks** doing init + fence + finalize (`timing job`), whole wall
//!   time from the launcher's spawn to its exit: ours under `pmix-run` against the
//!   floor, `pmix-run -n 8` of the same program doing nothing (`timing none`: exec,
//!   loading the libraries, forwarding output, reaping; target ≤ 1.25×), and against
//!   libpmix2 under Debian's `mpirun` (target ≥ 5× faster).
//!
//! The server core's side (its answer to the job-information request, ≤ 50 µs; a
//! fence of 100,000 ranks; its memory per client) is measured in process by
//! `cargo bench -p pmix --bench server_scale`.
//!
//! **What each time includes.** In-rank times are `clock_gettime(CLOCK_MONOTONIC)`
//! around the call alone: the client library's work, the server's, and on this
//! machine the wait for a CPU. Under `pmix-run` our client speaks over the socket
//! pair the launcher made for it before the fork (`PMIX_RS_SERVER_FD`), so its init
//! is the handshake and the job information in one round trip, with no thread
//! started; libpmix2 ignores that variable and connects over TCP. Every number is the
//! median of [`RUNS`] runs, the sides interleaved so both see the same load.
//!
//! A table (ours, theirs, ratio, target, met?) is printed, and the bench **exits 1
//! when a target is missed**. Every run is bounded ([`common::RUN_LIMIT`]). Without
//! `mpirun` or `pkg-config pmix` it prints a `NOTICE:` and exits 0, except under
//! `CI=true`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use common::{Row, median, print_table, rank_mean, run, scrub};

/// The ranks of the job.
const RANKS: u32 = 8;
/// Runs of each measurement per side.
const RUNS: usize = 21;
/// The pause after each round, whose last run is mpirun's.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(200);

struct Setup {
    ours: PathBuf,
    theirs: PathBuf,
    pmix_run: PathBuf,
}

/// `pmix-run -n N EXE ARGS` or `mpirun … -n N EXE ARGS`, from a scrubbed environment.
fn command(s: &Setup, mpirun: bool, n: u32, exe: &Path, args: &[&str]) -> Command {
    let mut cmd = if mpirun {
        let mut c = Command::new("mpirun");
        c.args(["--allow-run-as-root", "--oversubscribe"]);
        c
    } else {
        let mut c = Command::new(&s.pmix_run);
        c.args(["--timeout", "50"]);
        c
    };
    cmd.args(["-n", &n.to_string()]).arg(exe).args(args);
    scrub(&mut cmd);
    cmd
}

type Numbers = BTreeMap<String, f64>;

fn gather(s: &Setup) -> Result<Numbers, String> {
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut add = |what: String, v| samples.entry(what).or_default().push(v);
    // One untimed run of each, so nobody pays for a cold page cache.
    for exe in [&s.ours, &s.theirs] {
        run(command(s, false, RANKS, exe, &["job"]))?;
    }
    run(command(s, true, RANKS, &s.theirs, &["job"]))?;
    for _ in 0..RUNS {
        for (exe, side) in [(&s.ours, "ours"), (&s.theirs, "libpmix2")] {
            let r = run(command(s, false, 1, exe, &["lifecycle"]))?;
            for key in ["init_us", "final_us", "rss_before_kb", "rss_idle_kb"] {
                add(format!("{side} {key}"), rank_mean(&r, key, 1)?);
            }
        }
        // Each library alone, no server: its own singleton init (ours then
        // touches the same code but the socket, libpmix2 waits for a timer).
        for (exe, side) in [(&s.ours, "ours"), (&s.theirs, "libpmix2")] {
            let mut alone = Command::new(exe);
            alone.arg("serverless");
            scrub(&mut alone);
            let r = run(alone)?;
            add(
                format!("{side} serverless init_us"),
                rank_mean(&r, "init_us", 1)?,
            );
        }
        let wall = |r: common::Run| r.wall.as_secs_f64() * 1e3;
        add(
            "floor job_ms".into(),
            wall(run(command(s, false, RANKS, &s.ours, &["none"]))?),
        );
        add(
            "ours job_ms".into(),
            wall(run(command(s, false, RANKS, &s.ours, &["job"]))?),
        );
        add(
            "libpmix2 mpirun job_ms".into(),
            wall(run(command(s, true, RANKS, &s.theirs, &["job"]))?),
        );
        // mpirun's daemons finish in the background after it exits: let them.
        std::thread::sleep(SETTLE);
    }
    Ok(samples.into_iter().map(|(k, v)| (k, median(v))).collect())
}

fn table(n: &Numbers) -> Vec<Row> {
    let g = |k: &str| n[k];
    let init = g("ours init_us");
    let job = g("ours job_ms");
    vec![
        Row {
            what: "PMIx_Init, 1 rank, pmix-run",
            ours: init,
            theirs: g("libpmix2 init_us"),
            theirs_name: "libpmix2, pmix-run",
            unit: "us",
            target: "<= 250 us",
            met: Some(init <= 250.0),
        },
        Row {
            what: "  the same",
            ours: init,
            theirs: g("libpmix2 init_us"),
            theirs_name: "libpmix2, pmix-run",
            unit: "us",
            target: ">= 10x faster",
            met: Some(g("libpmix2 init_us") / init >= 10.0),
        },
        Row {
            what: "  the same",
            ours: init,
            theirs: g("ours serverless init_us"),
            theirs_name: "ours, no server",
            unit: "us",
            target: "none set",
            met: None,
        },
        Row {
            what: "  the same",
            ours: init,
            theirs: g("libpmix2 serverless init_us"),
            theirs_name: "libpmix2, no server",
            unit: "us",
            target: "none set",
            met: None,
        },
        Row {
            what: "PMIx_Finalize, 1 rank, pmix-run",
            ours: g("ours final_us"),
            theirs: g("libpmix2 final_us"),
            theirs_name: "libpmix2, pmix-run",
            unit: "us",
            target: "none set",
            met: None,
        },
        Row {
            what: "RSS of an idle connected client",
            ours: g("ours rss_idle_kb"),
            theirs: g("libpmix2 rss_idle_kb"),
            theirs_name: "libpmix2, pmix-run",
            unit: "kB",
            target: "none set",
            met: None,
        },
        Row {
            what: "  its growth from before PMIx_Init",
            ours: g("ours rss_idle_kb") - g("ours rss_before_kb"),
            theirs: g("libpmix2 rss_idle_kb") - g("libpmix2 rss_before_kb"),
            theirs_name: "libpmix2, pmix-run",
            unit: "kB",
            target: "none set",
            met: None,
        },
        Row {
            what: "job: 8 ranks init+fence+finalize",
            ours: job,
            theirs: g("floor job_ms"),
            theirs_name: "pmix-run, no PMIx",
            unit: "ms",
            target: "<= 1.25x floor",
            met: Some(job <= 1.25 * g("floor job_ms")),
        },
        Row {
            what: "  the same",
            ours: job,
            theirs: g("libpmix2 mpirun job_ms"),
            theirs_name: "libpmix2, mpirun",
            unit: "ms",
            target: ">= 5x faster",
            met: Some(g("libpmix2 mpirun job_ms") / job >= 5.0),
        },
    ]
}

fn main() -> ExitCode {
    let Some((openpmix, dir)) = common::peers("speed", "pmix-tools-bench-speed") else {
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
        "bench speed: timing.c linked with {} (ours) and with libpmix2; {cpus} CPUs; \
         medians of {RUNS} runs",
        lib.join("libpmix_ffi.so").display()
    );
    let numbers = match gather(&setup) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("bench speed: FAIL: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rows = table(&numbers);
    print_table(&rows);
    println!(
        "in-rank numbers: clock_gettime around the call alone; RSS: VmRSS; job: the \
         launcher's spawn to its exit. The server core's own numbers: cargo bench -p pmix \
         --bench server_scale."
    );
    common::verdict("speed", &rows)
}
