//! The fault table: what the survivors of a fault across nodes see, under each host
//! with each server, side by side (`cargo bench -p pmix-tools --bench node_faults`;
//! needs the node test bed, `bash .ci/nodes.sh up`).
//!
//! A job of 6 ranks, two per node (`tests/c/node_fault.c`, built with our client
//! library, which every server serves), does one operation over and over (a fence, a
//! group construct and destruct, `validate_global`, a fence collecting 1 MiB per
//! rank) while node3 meets a fault: every process of it killed at once (its `slurmd`
//! or `orted` included), its link cut for 2 s, cut for good, or slowed. Each row:
//! what the four survivors (ranks 0 to 3, on node1 and node2) saw, when the first saw
//! it (seconds after the fault), when the job ended, and whether it outlived its
//! bound (hung). The rows of our server are held to "hung: no" and "at least as good
//! as OpenPMIx's" by `tests/run_nodes.rs`; this prints them all.
//!
//! `PMIX_RS_FAULTS=quick`: only the node-killed and link-cut-for-good rows;
//! `PMIX_RS_FAULT_ROWS=TEXT`: only the rows whose host, server, fault and operation
//! (as "mpirun pmix-rs link cut for good fence") contain `TEXT`;
//! `PMIX_RS_FAULT_OUTPUT=1`: every job's output after its row (else only a hung one's).

use std::time::Duration;

use pmix_testkit::nodes::{Cluster, Fault, FaultRow, Host, SharedDir, TestBed};

fn main() {
    let Some(bed) = TestBed::get("the fault table") else {
        return;
    };
    let dir = SharedDir::new("faults-bench");
    let c = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let program = dir.build_ours(&c, "node_fault");
    bed.install_ours(&dir.lib("pmix_ffi"));
    let dropin = dir.dropin();
    let quick = std::env::var("PMIX_RS_FAULTS").is_ok_and(|v| v == "quick");
    let hosts = [
        Host::Slurm(Cluster::OpenPmix),
        Host::Slurm(Cluster::Ours),
        Host::Mpirun(None),
        Host::Mpirun(Some(dropin)),
    ];
    let mut faults = vec![
        (Fault::NodeKilled, "fence"),
        (Fault::NodeKilled, "construct"),
        (Fault::NodeKilled, "validate"),
        (Fault::LinkCut, "fence"),
    ];
    if !quick {
        faults.extend([(Fault::LinkCut2s, "fence"), (Fault::SlowLink, "bigfence")]);
    }
    let only = std::env::var("PMIX_RS_FAULT_ROWS").unwrap_or_default();
    let show = std::env::var_os("PMIX_RS_FAULT_OUTPUT").is_some();
    let mut rows: Vec<FaultRow> = Vec::new();
    for (fault, op) in &faults {
        for host in &hosts {
            let name = format!(
                "{} {} {} {op}",
                host.host_name(),
                host.server_name(),
                fault.name()
            );
            if !name.contains(&only) {
                continue;
            }
            let row = bed.fault_row(host, *fault, &program, op, 10, Duration::from_secs(75));
            eprintln!("{}", line(&row));
            if row.hung || show {
                eprintln!("{}", row.output);
            }
            rows.push(row);
        }
    }
    println!(
        "| host | server | fault | survivors do | survivors saw | first noticed | job ended | survivors' ops after | hung |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in &rows {
        println!("{}", line(r));
    }
}

fn line(r: &FaultRow) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {} | {:.1} s | {} | {} |",
        r.host,
        r.server,
        r.fault.name(),
        r.op,
        r.seen,
        r.noticed
            .map_or("never".to_owned(), |s| format!("{s:.1} s")),
        r.ended,
        r.ops_after,
        if r.hung { "**yes**" } else { "no" }
    )
}
