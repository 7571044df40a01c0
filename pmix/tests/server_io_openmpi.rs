//! An Open MPI 4.1.4 program (Debian's `mpicc`) direct-launched under the server,
//! no `mpirun`: four ranks started with `Server::client_env` (and `FLUX_JOB_ID`, which
//! makes Open MPI accept a launch it did not make, docs/serving.md §1b) do MPI_Init,
//! MPI_Allreduce, MPI_Barrier and MPI_Finalize.

use std::process::Command;
use std::time::Duration;

use pmix::server::{Host, NamespaceSpec, ProcName, Reply, Server, ServerConfig, net};
use pmix_testkit::child::output_within;
use pmix_testkit::cprog::{assert_ok, clean_command};
use pmix_testkit::{TempDir, peer_absent};

const PROGRAM: &str = r#"
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, one, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    one = rank + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", rank, size, sum);
    MPI_Finalize();
    return 0;
}
"#;

const NS: &str = "io.openmpi";
const N: u32 = 4;

#[test]
fn an_open_mpi_program_runs_direct_launched_under_the_server() {
    let present = Command::new("mpicc")
        .arg("--showme:version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        peer_absent(
            "an Open MPI program under our server: mpicc",
            "apt-get install openmpi-bin libopenmpi-dev",
        );
        return;
    }
    let dir = TempDir::new("io-openmpi");
    let src = dir.0.join("allreduce.c");
    let exe = dir.0.join("allreduce");
    std::fs::write(&src, PROGRAM).unwrap();
    let out = output_within(
        Command::new("mpicc").arg(&src).arg("-o").arg(&exe),
        Duration::from_secs(120),
    );
    assert_ok("mpicc", &out);

    let (tx, finalizes) = std::sync::mpsc::channel();
    let host = std::sync::Arc::new(Finalizes(tx));
    let server = Server::start_with_host(ServerConfig::default(), host).unwrap();
    let (uid, gid) = net::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node(NS, N, uid, gid))
        .unwrap();
    let ranks: Vec<_> = (0..N)
        .map(|rank| {
            let mut cmd = clean_command(&exe);
            cmd.envs(server.client_env(NS, rank))
                .env("FLUX_JOB_ID", "1")
                .env_remove("OMPI_COMM_WORLD_RANK");
            std::thread::spawn(move || (rank, output_within(&mut cmd, Duration::from_secs(120))))
        })
        .collect();
    for t in ranks {
        let (rank, out) = t.join().unwrap();
        assert_ok(&format!("rank {rank}"), &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("rank {rank} of {N} sum {}", N * (N + 1) / 2)),
            "rank {rank}:\n{stdout}"
        );
    }
    let mut finalized = 0;
    while finalizes.recv_timeout(Duration::from_secs(10)).is_ok() {
        finalized += 1;
        if finalized == N {
            break;
        }
    }
    assert_eq!(finalized, N);
}

/// A host that passes on the finalizes it hears of.
struct Finalizes(std::sync::mpsc::Sender<ProcName>);

impl Host for Finalizes {
    fn client_finalized(&self, proc: ProcName, reply: Reply<()>) {
        let _ = self.0.send(proc);
        reply.send(Ok(()));
    }
}
