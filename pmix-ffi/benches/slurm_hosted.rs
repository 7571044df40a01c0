//! `cargo bench -p pmix-ffi --bench slurm_hosted`: the same libpmix2 timing client
//! (`slurm_timing.c`) under `srun -p ours -N 2 -n 8 --ntasks-per-node=4 --mpi=pmix`
//! with OpenPMIx's server inside Slurm's plugin, then with ours (this build's
//! `libpmix_ffi.so`), each with `SLURM_PMIX_FENCE=tree` and `=ring`, one after the
//! other in one run; it prints, per measure (fence, fence with data, get of a peer's
//! key on the other node after it), both medians and their ratio. Under either server
//! the libpmix2 client reads OpenPMIx's ds21 store (ours writes it too: docs/serving.md
//! §5.7), where the other node's keys are once the collecting fence brought them. A
//! third column runs OpenPMIx's server again with its client held on its `hash` store
//! (`PMIX_MCA_gds=hash`): there a get of a key put since the client's last get is a
//! round trip to the server.
//!
//! The get right after the fence (`get`) is what a program sees, but on this machine
//! it measures the CPU scheduler as much as the store: 8 ranks of two threads each and
//! both servers share 2 CPUs, and a libpmix2 get is two thread switches. So the bench
//! also prints the read with the CPUs settled: `get_alone` (rank 0's first get of the
//! key once every rank has left the fence and slept 1 ms), `get_again` (the median of
//! 20 more gets of it: the store's read), and what sets `get`: `spread` (the time
//! between the first and the last rank leaving a fence) and the gets of `get` split by
//! how many other ranks left the fence during them, `get_quiet` (at most one) and
//! `get_crowded` (four or more). See `slurm_timing.c`.
//!
//! With two node names on one host Slurm's tree collective does not wait for the
//! other node (each step daemon is the root of its own tree; see
//! `pmix-tools/tests/run_slurm_hosted.rs`), so under `tree` the get of a key the peer
//! has not put yet fails with either server: the bench prints both failures.
//!
//! The plugin loads the file at `/run/pmix-rs-slurm/libpmix.so` (`.ci/slurm-up.sh`):
//! the bench installs each library there in turn, and leaves ours. A run that fails
//! is printed as such, with its first error line, for either library. Needs the
//! cluster (`bash .ci/slurm-up.sh`, as root) and `libpmix-dev`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pmix_testkit::{TempDir, child::output_within, cprog};

const PLUGIN_LIB: &str = "/run/pmix-rs-slurm/libpmix.so";
const ROUNDS: &str = "100";
const MEASURES: [&str; 8] = [
    "fence",
    "fence_data",
    "get",
    "get_alone",
    "get_again",
    "spread",
    "get_quiet",
    "get_crowded",
];

fn install(lib: &Path) {
    let tmp = format!("{PLUGIN_LIB}.bench");
    std::fs::copy(lib, &tmp).unwrap_or_else(|e| panic!("copy {}: {e}", lib.display()));
    std::fs::rename(&tmp, PLUGIN_LIB).unwrap();
}

/// The medians of one run, or why it failed.
fn run(exe: &Path, algo: &str, gds: Option<&str>) -> Result<Vec<f64>, String> {
    let mut cmd = Command::new("srun");
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("SLURM_PMIX_FENCE", algo)
        .args([
            "-p",
            "ours",
            "-N",
            "2",
            "-n",
            "8",
            "--ntasks-per-node=4",
            "--mpi=pmix",
        ])
        .arg(exe)
        .arg(ROUNDS);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("PMIX_") || (k.starts_with("SLURM_") && k != "SLURM_PMIX_FENCE") {
            cmd.env_remove(&k);
        }
    }
    if let Some(g) = gds {
        cmd.env("PMIX_MCA_gds", g);
    }
    let out = output_within(&mut cmd, Duration::from_secs(300));
    pmix_testkit::timing::medians(&out, &MEASURES)
}

fn main() {
    let Some(pmix) = cprog::openpmix_for("the two-node Slurm bench") else {
        return;
    };
    if !Path::new(PLUGIN_LIB).parent().is_some_and(Path::exists) {
        println!("NOTICE: no {PLUGIN_LIB} (run `bash .ci/slurm-up.sh` as root): nothing timed");
        return;
    }
    let dir = TempDir::new("bench-slurm-hosted");
    let exe = dir.0.join("slurm_timing");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/slurm_timing.c");
    cprog::compile_with(
        &["-O2".to_owned()],
        &src,
        &exe,
        &[&pmix.include_dir],
        &pmix.link,
    );
    let libdir = Command::new("pkg-config")
        .args(["--variable=libdir", "pmix"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let theirs = std::fs::canonicalize(Path::new(&libdir).join("libpmix.so.2"))
        .expect("libpmix.so.2 of pkg-config's libdir");
    let ours = cprog::lib_dir("pmix_ffi").join("libpmix_ffi.so");
    println!("two Slurm nodes on this machine, 8 ranks (4 per node), {ROUNDS} rounds; median µs");
    println!(
        "libpmix2 timing client; server: OpenPMIx ({}) vs pmix-rs ({})",
        theirs.display(),
        ours.display()
    );
    for algo in ["tree", "ring"] {
        install(&theirs);
        let a = run(&exe, algo, None);
        let h = run(&exe, algo, Some("hash"));
        install(&ours);
        let b = run(&exe, algo, None);
        println!("\nSLURM_PMIX_FENCE={algo}");
        println!(
            "{:<12} {:>10} {:>10} {:>8} {:>14} {:>8}",
            "measure", "OpenPMIx", "pmix-rs", "ratio", "OpenPMIx/hash", "ratio"
        );
        match (&a, &b, &h) {
            (Ok(a), Ok(b), Ok(h)) => {
                for (i, m) in MEASURES.iter().enumerate() {
                    println!(
                        "{m:<12} {:>10.1} {:>10.1} {:>8.2} {:>14.1} {:>8.2}",
                        a[i],
                        b[i],
                        b[i] / a[i],
                        h[i],
                        b[i] / h[i]
                    );
                }
            }
            _ => {
                let show = |r: &Result<Vec<f64>, String>| match r {
                    Ok(v) => format!("{v:?}"),
                    Err(e) => format!("failed ({e})"),
                };
                println!("OpenPMIx: {}", show(&a));
                println!("pmix-rs:  {}", show(&b));
                println!("OpenPMIx/hash: {}", show(&h));
            }
        }
    }
}
