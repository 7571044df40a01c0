//! `cargo bench -p pmix-tools --bench groups`: group construct + destruct of 8 ranks
//! (issue 24), with the same libpmix2 timing client (`benches/c/group_timing.c`:
//! construct over the whole job with a context id and a local CID, then destruct,
//! 100 rounds, median µs at rank 0), on one node under `pmix-run -n 8` and on two
//! Slurm nodes (`srun -p ours -N 2 -n 8`, 4 per node, `SLURM_PMIX_FENCE=ring`) with
//! our server inside Slurm's plugin, where each construct and destruct is one fence
//! of Slurm's between the nodes. Printed side by side. OpenPMIx has no row: inside
//! Slurm it answers every group call `PMIX_ERR_NOT_SUPPORTED`.
//!
//! The Slurm row needs the cluster (`bash .ci/slurm-up.sh`, as root; the plugin loads
//! `/run/pmix-rs-slurm/libpmix.so`, where the bench installs this build's
//! `libpmix_ffi.so`); without it the row says why. Every run is bounded (120 s).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pmix_testkit::{TempDir, child::output_within, cprog};

const PLUGIN_LIB: &str = "/run/pmix-rs-slurm/libpmix.so";
const ROUNDS: &str = "100";
const MEASURES: [&str; 3] = ["construct", "destruct", "both"];
const LIMIT: Duration = Duration::from_secs(120);

/// The medians of one run, or why it failed.
fn medians(mut cmd: Command) -> Result<Vec<f64>, String> {
    cmd.env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("PMIX_") || (k.starts_with("SLURM_") && k != "SLURM_PMIX_FENCE") {
            cmd.env_remove(&k);
        }
    }
    let out = output_within(&mut cmd, LIMIT);
    pmix_testkit::timing::medians(&out, &MEASURES)
}

fn pmix_run(exe: &Path) -> Result<Vec<f64>, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.args(["-n", "8", "--timeout", "100"])
        .arg(exe)
        .arg(ROUNDS);
    medians(cmd)
}

fn slurm(exe: &Path) -> Result<Vec<f64>, String> {
    if !Path::new(PLUGIN_LIB).parent().is_some_and(Path::exists) {
        return Err(format!(
            "no {PLUGIN_LIB} (run `bash .ci/slurm-up.sh` as root)"
        ));
    }
    let ours = cprog::lib_dir("pmix_ffi").join("libpmix_ffi.so");
    let tmp = format!("{PLUGIN_LIB}.bench-groups");
    std::fs::copy(&ours, &tmp).map_err(|e| format!("copy {}: {e}", ours.display()))?;
    std::fs::rename(&tmp, PLUGIN_LIB).map_err(|e| format!("install: {e}"))?;
    let mut cmd = Command::new("srun");
    cmd.env("SLURM_PMIX_FENCE", "ring")
        .args(["-p", "ours", "-N", "2", "-n", "8", "--ntasks-per-node=4"])
        .arg("--mpi=pmix")
        .arg(exe)
        .arg(ROUNDS);
    medians(cmd)
}

fn main() {
    let Some(pmix) = cprog::openpmix_for("the group bench's libpmix2 client") else {
        return;
    };
    let dir = TempDir::new("bench-groups");
    let exe = dir.0.join("group_timing");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/c/group_timing.c");
    cprog::compile_with(
        &["-O2".to_owned(), "-Wall".to_owned(), "-Werror".to_owned()],
        &src,
        &exe,
        &[&pmix.include_dir],
        &pmix.link,
    );
    println!("group construct + destruct, 8 ranks, {ROUNDS} rounds, libpmix2 client; median µs");
    let one = pmix_run(&exe);
    let two = slurm(&exe);
    println!(
        "{:<12} {:>22} {:>26}",
        "measure", "pmix-run (one node)", "Slurm, ours (two nodes)"
    );
    let cell = |r: &Result<Vec<f64>, String>, i: usize| match r {
        Ok(v) => format!("{:.1}", v[i]),
        Err(_) => "failed".to_owned(),
    };
    for (i, m) in MEASURES.iter().enumerate() {
        println!("{m:<12} {:>22} {:>26}", cell(&one, i), cell(&two, i));
    }
    for (what, r) in [("pmix-run", &one), ("Slurm", &two)] {
        if let Err(e) = r {
            println!("{what}: {e}");
        }
    }
}
