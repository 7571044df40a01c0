//! `cargo bench -p pmix-tools --bench spawn`: `MPI_Comm_spawn` of 2 processes and the
//! disconnect that follows (issue 25), with the same Open MPI 4.1.4 timing client
//! (`benches/c/spawn_timing.c`, built with `mpicc`: a job of one rank spawns 2 copies
//! of itself 10 times, median µs), under `pmix-run -n 1` (our server spawns) and
//! under Debian's `mpirun -n 1` (ORTE spawns), one after the other, printed side by
//! side with their ratio, for the ranks on libpmix2 and on our `libpmix.so.2`.
//! Without Open MPI it says so and times nothing. Every run is bounded (120 s; a hung one is run once more),
//! loopback and shared memory only (TCP on `lo` between the jobs), with Open MPI's
//! `pml ob1` under both launchers: Debian's Open MPI otherwise probes UCX in every
//! process's `MPI_Init`, about 200 ms here, the same under either launcher, which
//! would hide what the launchers cost.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pmix_testkit::{TempDir, child::output_within, cprog};

const ROUNDS: &str = "10";
const LIMIT: Duration = Duration::from_secs(120);

fn clean(program: impl AsRef<std::ffi::OsStr>, dropin: Option<&Path>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("LD_LIBRARY_PATH").stdin(Stdio::null());
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["PMIX_", "OMPI_", "SLURM_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            cmd.env_remove(&k);
        }
    }
    if let Some(d) = dropin {
        cmd.env("LD_LIBRARY_PATH", d);
    }
    cmd
}

/// The median of one run; a run that outlives its job (Open MPI 4.1's `mpirun` has
/// been seen to, rarely, after its ranks ended) is reported and run once more.
fn median(mut cmd: Command) -> Result<f64, String> {
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        output_within(&mut cmd, LIMIT)
    }));
    let out = match first {
        Ok(out) => out,
        Err(_) => {
            println!(
                "(a run hung past {} s and was killed: running it once more)",
                LIMIT.as_secs()
            );
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                output_within(&mut cmd, LIMIT)
            }))
            .map_err(|_| "hung twice".to_owned())?
        }
    };
    pmix_testkit::timing::medians(&out, &["spawn"]).map(|v| v[0])
}

fn pmix_run(exe: &Path, dropin: Option<&Path>) -> Result<f64, String> {
    let mut cmd = clean(env!("CARGO_BIN_EXE_pmix-run"), dropin);
    cmd.env("OMPI_MCA_btl", "self,vader,tcp")
        .env("OMPI_MCA_btl_tcp_if_include", "lo")
        .env("OMPI_MCA_pml", "ob1")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["-n", "1", "--timeout", "110"])
        .arg(exe)
        .arg(ROUNDS);
    median(cmd)
}

fn mpirun(exe: &Path, dropin: Option<&Path>) -> Result<f64, String> {
    let mut cmd = clean("mpirun", None);
    cmd.args(["--allow-run-as-root", "--oversubscribe"])
        .args(["--mca", "btl", "self,vader,tcp"])
        .args(["--mca", "btl_tcp_if_include", "lo"])
        .args(["--mca", "pml", "ob1"]);
    if let Some(d) = dropin {
        cmd.arg("-x")
            .arg(format!("LD_LIBRARY_PATH={}", d.display()));
    }
    cmd.args(["-n", "1"]).arg(exe).arg(ROUNDS);
    median(cmd)
}

fn main() {
    let present = Command::new("mpicc")
        .arg("--showme:version")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        println!("NOTICE: no mpicc (apt-get install libopenmpi-dev openmpi-bin): nothing timed");
        return;
    }
    let dir = TempDir::new("bench-spawn");
    let exe = dir.0.join("spawn_timing");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/c/spawn_timing.c");
    let out = cprog::output(
        Command::new("mpicc")
            .arg("-O2")
            .arg(&src)
            .arg("-o")
            .arg(&exe),
    );
    cprog::assert_ok("mpicc spawn_timing.c", &out);
    let dropin = dir.0.join("dropin");
    std::fs::create_dir(&dropin).expect("mkdir dropin");
    let ours = cprog::lib_dir("pmix_dropin").join("libpmix_dropin.so");
    std::os::unix::fs::symlink(&ours, dropin.join("libpmix.so.2")).expect("symlink");
    println!(
        "MPI_Comm_spawn of 2 processes + MPI_Comm_disconnect, a job of 1 rank, {ROUNDS} rounds; median µs"
    );
    println!(
        "{:<20} {:>12} {:>12} {:>10}",
        "ranks' library", "pmix-run", "mpirun", "mpirun ÷ pmix-run"
    );
    for (label, lib) in [
        ("libpmix2", None),
        ("our libpmix.so.2", Some(dropin.as_path())),
    ] {
        let a = pmix_run(&exe, lib);
        let b = mpirun(&exe, lib);
        match (&a, &b) {
            (Ok(a), Ok(b)) => println!("{label:<20} {a:>12.0} {b:>12.0} {:>10.2}", b / a),
            _ => println!("{label:<20} pmix-run: {a:?}; mpirun: {b:?}"),
        }
    }
}
