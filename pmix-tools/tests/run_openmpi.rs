//! An Open MPI 4.1.4 program (`mpicc` from Debian's `libopenmpi-dev`: MPI_Init,
//! MPI_Allreduce of the ranks, MPI_Barrier, MPI_Finalize) run under `pmix-run -n 4`,
//! without `mpirun`: every rank must report the right size and sum. Shared memory and
//! loopback only (`OMPI_MCA_btl=self,vader`). Without `mpicc` the test prints a NOTICE
//! and passes, except under `CI=true`, where it fails.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use pmix_testkit::child::output_within;
use pmix_testkit::{TempDir, cprog, peer_absent};

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn an_open_mpi_program_runs_under_pmix_run_with_the_right_ranks_and_sum() {
    let has_mpicc = Command::new("mpicc")
        .arg("--showme:version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_mpicc {
        peer_absent(
            "pmix-run with an Open MPI program: mpicc not found",
            "apt-get install libopenmpi-dev openmpi-bin",
        );
        return;
    }
    let dir = TempDir::new("run-mpi");
    let exe = dir.0.join("mpi_allreduce");
    let src = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/c/mpi_allreduce.c"
    ));
    let out = cprog::output(
        Command::new("mpicc")
            .args(cprog::cflags())
            .arg(&src)
            .arg("-o")
            .arg(&exe),
    );
    cprog::assert_ok("mpicc mpi_allreduce.c", &out);

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("OMPI_MCA_btl", "self,vader")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["-n", "4", "--tag-output", "--timeout", "100"])
        .arg(&exe)
        .arg("4");
    let out = output_within(&mut cmd, LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for r in 0..4 {
        let line = format!("[{r}] mpi_allreduce rank {r} of 4: sum 6 ok\n");
        assert!(stdout.contains(&line), "no {line:?} in\n{stdout}\n{stderr}");
    }
}
