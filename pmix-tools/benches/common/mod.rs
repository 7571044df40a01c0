//! What the job benches share (`jobs.rs`, `client.rs`, `speed.rs`): running a
//! launcher with the C timing client bounded by [`RUN_LIMIT`] (SIGTERM, then SIGKILL
//! of its process group, by pid, past it), reading the ranks' `timing rank R key
//! value …` lines, medians and means over ranks, the environment every launcher
//! starts from, and the table of ours against theirs with its verdict.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::process::{Pid, Signal};

/// The longest one launcher run may take before it is killed and the bench fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);

/// What both benches need before they run: `mpirun` and OpenPMIx (`None` after the
/// notice, which fails under `CI=true`, when one is absent), and a scratch directory
/// `CARGO_TARGET_TMPDIR/<name>`.
pub fn peers(bench: &str, name: &str) -> Option<(pmix_testkit::OpenPmix, PathBuf)> {
    let has_mpirun = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_mpirun {
        pmix_testkit::peer_absent(
            &format!("bench {bench}: mpirun not found"),
            "apt-get install openmpi-bin",
        );
        return None;
    }
    let openpmix =
        pmix_testkit::cprog::openpmix_for(&format!("bench {bench}: the C timing client"))?;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("bench directory");
    Some((openpmix, dir))
}

/// Compiles the C timing client (`benches/c/timing.c`, warnings as errors) into
/// `exe` with headers from `include`, linked with `link`.
pub fn build_timing(exe: &Path, include: &Path, link: &[String]) {
    let flags: Vec<String> = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]
        .map(str::to_owned)
        .to_vec();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/c/timing.c");
    pmix_testkit::cprog::compile_with(&flags, &src, exe, &[include], link);
}

/// Removes the caller's PMIx, Open MPI and PRRTE variables (and `LD_LIBRARY_PATH`)
/// from `cmd`: every launcher starts from the same clean environment.
pub fn scrub(cmd: &mut Command) {
    cmd.env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("PMIX_") || k.starts_with("OMPI_") || k.starts_with("PRTE_") {
            cmd.env_remove(k);
        }
    }
}

/// One rank's line, `timing rank R key value key value…`, as numbers by key.
pub type Fields = BTreeMap<String, f64>;

/// What one bounded run gave: its wall time and each rank's fields.
pub struct Run {
    pub wall: Duration,
    /// The spawn and the exit on `CLOCK_REALTIME` (the ranks' stamps' clock), in µs.
    pub spawned_us: f64,
    /// The exit, as `spawned_us`.
    pub ended_us: f64,
    /// Each rank's fields.
    pub ranks: Vec<Fields>,
}

/// `CLOCK_REALTIME` now, in microseconds.
pub fn real_us() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e6)
}

/// Runs `cmd` within [`RUN_LIMIT`], timing it from just before the spawn to the exit;
/// Err (with its output) when it fails to start, exits non-zero or is killed.
pub fn run(mut cmd: Command) -> Result<Run, String> {
    use std::os::unix::process::CommandExt;
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .process_group(0);
    let spawned_us = real_us();
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let pid = Pid::from_child(&child);
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((Instant::now(), real_us()));
        status
    });
    let ended = match rx.recv_timeout(RUN_LIMIT) {
        Ok(at) => Some(at),
        Err(_) => {
            let _ = rustix::process::kill_process(pid, Signal::TERM);
            if rx.recv_timeout(Duration::from_secs(3)).is_err() {
                let _ = rustix::process::kill_process_group(pid, Signal::KILL);
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
            None
        }
    };
    let status = waiter.join().expect("waiter thread");
    let out = stdout.join().expect("stdout reader");
    let err = stderr.join().expect("stderr reader");
    let Some((end, ended_us)) = ended else {
        return Err(format!(
            "{cmd:?} still ran after {RUN_LIMIT:?}: killed\n{out}\n{err}"
        ));
    };
    match status {
        Ok(s) if s.success() => {}
        other => return Err(format!("{cmd:?} failed ({other:?}):\n{out}\n{err}")),
    }
    let ranks = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("timing rank "))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let mut f = Fields::new();
            if let Some(r) = words.next().and_then(|w| w.parse().ok()) {
                f.insert("rank".to_owned(), r);
            }
            while let (Some(k), Some(v)) = (words.next(), words.next()) {
                if let Ok(v) = v.parse() {
                    f.insert(k.to_owned(), v);
                }
            }
            f
        })
        .collect();
    Ok(Run {
        wall: end - start,
        spawned_us,
        ended_us,
        ranks,
    })
}

pub fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The mean over ranks of `key` in one run.
pub fn rank_mean(run: &Run, key: &str, want_ranks: u32) -> Result<f64, String> {
    let vals: Vec<f64> = run
        .ranks
        .iter()
        .filter_map(|f| f.get(key).copied())
        .collect();
    if vals.len() != want_ranks as usize {
        return Err(format!(
            "{want_ranks} ranks should report {key}, {} did",
            vals.len()
        ));
    }
    Ok(vals.iter().sum::<f64>() / vals.len() as f64)
}

/// One line of a comparison table: ours against theirs, with the target.
pub struct Row {
    pub what: &'static str,
    pub ours: f64,
    pub theirs: f64,
    pub theirs_name: &'static str,
    pub unit: &'static str,
    pub target: &'static str,
    /// `None`: no target, the line informs.
    pub met: Option<bool>,
}

/// Prints `rows` as a table (ours, theirs, their ratio, who they are, the target, met?).
pub fn print_table(rows: &[Row]) {
    println!(
        "{:<40} {:>12} {:>12} {:>8}  {:<20} {:<16} met?",
        "what", "ours", "theirs", "ratio", "theirs are", "target"
    );
    for r in rows {
        println!(
            "{:<40} {:>9.1} {:<2} {:>9.1} {:<2} {:>7.2}x  {:<20} {:<16} {}",
            r.what,
            r.ours,
            r.unit,
            r.theirs,
            r.unit,
            r.theirs / r.ours,
            r.theirs_name,
            r.target,
            match r.met {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        );
    }
}

/// The bench's verdict on `rows`: success when every target is met, else one
/// `MISSED` line per miss and failure.
pub fn verdict(bench: &str, rows: &[Row]) -> std::process::ExitCode {
    let missed: Vec<&Row> = rows.iter().filter(|r| r.met == Some(false)).collect();
    if missed.is_empty() {
        println!("bench {bench}: every target met");
        return std::process::ExitCode::SUCCESS;
    }
    for r in missed {
        println!(
            "bench {bench}: MISSED: {}: ours {:.1} {} against {:.1} {} ({}), target {}",
            r.what, r.ours, r.unit, r.theirs, r.unit, r.theirs_name, r.target
        );
    }
    std::process::ExitCode::FAILURE
}

/// The C timing client built twice in `dir`: against `pmix-ffi/include` linked with
/// `libpmix_ffi` ("ours", `timing.ffi`) and against `openpmix` (`timing.libpmix2`);
/// returns both and the directory of `libpmix_ffi`.
pub fn build_both(dir: &Path, openpmix: &pmix_testkit::OpenPmix) -> (PathBuf, PathBuf, PathBuf) {
    use pmix_testkit::cprog;
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib = cprog::lib_dir("pmix_ffi");
    let ours = dir.join("timing.ffi");
    build_timing(
        &ours,
        &manifest.join("../pmix-ffi/include"),
        &cprog::link_shared(&lib, "pmix_ffi"),
    );
    let theirs = dir.join("timing.libpmix2");
    build_timing(&theirs, &openpmix.include_dir, &openpmix.link);
    (ours, theirs, lib)
}
