//! Every bound rank's device distances served as job data (`PMIX_DEVICE_DISTANCES`,
//! docs/serving.md §1(b)), read by `tests/c/devdist.c` built against libpmix_ffi and
//! against Debian's libpmix2, under `pmix-run --bind core`, under `mpirun` on our
//! library (`libpmix.so.2`), and under Slurm with our server on two nodes of the node
//! test bed (each task bound by `taskset`: the bed's Slurm binds nothing).
//!
//! Each rank prints its binding, its `PMIX_DEVICE_DISTANCES` (with `PMIX_OPTIONAL`;
//! the plain get must agree, checked in C) and its `PMIx_Compute_distances`; the
//! libpmix_ffi build checks in C that the two are equal device by device (`same`).
//! Here every array is compared with our engine's answer for that rank's binding on
//! the server's topology (an hwloc XML of `testdata/` where the host is one process,
//! this machine's own on the bed), and ranks bound to different packages must differ.
//! OpenPMIx 4.2.2's own `PMIx_Compute_distances` without a topology answers
//! `PMIX_ERR_BAD_PARAM` (its client cannot pack a NULL topology), so the libpmix2
//! build is held to the same oracle instead. An unbound rank gets no key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pmix_testkit::child::output_within;
use pmix_testkit::nodes::{Cluster, SharedDir, TestBed};
use pmix_testkit::{TempDir, cprog};

mod shared;

use shared::{clean_command, show};

const LIMIT: Duration = Duration::from_secs(90);

/// Two packages, PU 0 in the first and PU 1 in the second (what `--bind core` gives
/// ranks 0 and 1 on a 2-PU machine), five NICs near the first.
const XML: &str = "24em64t-2n6c2t-pci.xml";

fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

fn xml_file() -> PathBuf {
    pmix_testkit::hwloc_xml(XML)
}

/// What one rank printed.
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    cpus: String,
    get_status: String,
    get: Vec<String>,
    compute_status: String,
    compute: Vec<String>,
}

/// The `devdist rank R: ...` lines of `stdout` (whatever tag precedes them), by rank.
fn parse(stdout: &str) -> BTreeMap<u32, Seen> {
    let mut by_rank: BTreeMap<u32, Seen> = BTreeMap::new();
    for line in stdout.lines() {
        let Some((_, rest)) = line.split_once("devdist rank ") else {
            continue;
        };
        let Some((rank, what)) = rest.split_once(": ") else {
            continue;
        };
        let Ok(rank) = rank.parse::<u32>() else {
            continue;
        };
        let seen = by_rank.entry(rank).or_default();
        let words: Vec<&str> = what.split_whitespace().collect();
        match words.as_slice() {
            ["cpus", list] => seen.cpus = (*list).to_string(),
            ["get", status, _] => seen.get_status = (*status).to_string(),
            ["get", row @ ..] => seen.get.push(row.join(" ")),
            ["compute", status, _] => seen.compute_status = (*status).to_string(),
            ["compute", row @ ..] => seen.compute.push(row.join(" ")),
            _ => {}
        }
    }
    by_rank
}

/// Our engine's answer from `cpus` on topology `source`, as devdist prints rows.
fn oracle(source: &str, cpus: &str) -> Vec<String> {
    let svc = pmix::Service::new(source, None).expect("a topology source");
    let set = pmix_core::CpuSet::parse_pmix(cpus).expect("a cpu list");
    let req = pmix::DistanceRequest {
        cpuset: Some(&set),
        ..Default::default()
    };
    svc.answer(&req, |topo, entries| {
        entries
            .iter()
            .map(|e| {
                let d = topo.device(e.device).expect("a device");
                format!(
                    "{} {} {} {} {}",
                    d.uuid(),
                    d.name(),
                    d.kind().0,
                    e.mindist,
                    e.maxdist
                )
            })
            .collect()
    })
    .expect("an answer")
}

/// Every rank of `n` read its distances, equal to the oracle on `source` for its own
/// binding; with `ours`, its computed distances are the same rows. Returns the rows by
/// rank.
fn check_bound(
    what: &str,
    by_rank: &BTreeMap<u32, Seen>,
    n: u32,
    source: &str,
    ours: bool,
    context: &str,
) -> BTreeMap<u32, Vec<String>> {
    assert_eq!(by_rank.len(), n as usize, "{what}: ranks seen\n{context}");
    let mut rows = BTreeMap::new();
    for (r, seen) in by_rank {
        assert_eq!(seen.get_status, "SUCCESS", "{what}: rank {r}\n{context}");
        assert!(
            !seen.get.is_empty(),
            "{what}: rank {r} got no row\n{context}"
        );
        assert_eq!(
            seen.get,
            oracle(source, &seen.cpus),
            "{what}: rank {r} on cpus {}\n{context}",
            seen.cpus
        );
        if ours {
            assert_eq!(
                seen.compute_status, "SUCCESS",
                "{what}: rank {r}\n{context}"
            );
            assert_eq!(seen.compute, seen.get, "{what}: rank {r}\n{context}");
        }
        rows.insert(*r, seen.get.clone());
    }
    rows
}

/// devdist built against libpmix_ffi (`true`) and libpmix2 (`false`), in `dir`.
fn builds(dir: &Path) -> Vec<(bool, PathBuf)> {
    let mut v = vec![(true, cprog::build_ours(&c_dir(), "devdist", dir))];
    if let Some(theirs) = cprog::build_openpmix(&c_dir(), "devdist", dir, "devdist.c") {
        v.push((false, theirs));
    }
    v
}

/// `pmix-run -n 2 --bind B` of `exe` on the XML topology (the server reads it from
/// `PMIX_MCA_pmix_hwloc_topo_file`, which the ranks inherit too).
fn pmix_run(exe: &Path, bind: &str, ours: bool) -> std::process::Output {
    let mut cmd = clean_command(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env("PMIX_MCA_pmix_hwloc_topo_file", xml_file())
        .args(["-n", "2", "--timeout", "60", "--bind", bind])
        .arg(exe);
    if ours {
        cmd.arg("same");
    }
    output_within(&mut cmd, LIMIT)
}

#[test]
fn under_pmix_run_bound_ranks_read_their_device_distances_with_both_libraries() {
    let dir = TempDir::new("devdist-run");
    let source = format!("xml:{}", xml_file().display());
    let mut per_build = Vec::new();
    for (ours, exe) in builds(&dir.0) {
        let out = pmix_run(&exe, "core", ours);
        let what = format!("pmix-run --bind core ({})", exe.display());
        assert_eq!(out.status.code(), Some(0), "{what}\n{}", show(&out));
        let by_rank = parse(&String::from_utf8_lossy(&out.stdout));
        let rows = check_bound(&what, &by_rank, 2, &source, ours, &show(&out));
        // Rank 0 on the package of the NICs, rank 1 on the other: other distances.
        assert_eq!(by_rank[&0].cpus, "0", "{what}");
        assert_eq!(by_rank[&1].cpus, "1", "{what}");
        assert_ne!(rows[&0], rows[&1], "{what}");
        per_build.push(rows);
    }
    // Both libraries read the same arrays.
    if let [a, b] = per_build.as_slice() {
        assert_eq!(a, b);
    }
}

#[test]
fn under_pmix_run_unbound_ranks_have_no_device_distances() {
    let dir = TempDir::new("devdist-unbound");
    for (ours, exe) in builds(&dir.0) {
        let out = pmix_run(&exe, "none", false);
        let what = format!("pmix-run --bind none ({})", exe.display());
        assert_eq!(out.status.code(), Some(0), "{what}\n{}", show(&out));
        let by_rank = parse(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(by_rank.len(), 2, "{what}\n{}", show(&out));
        for (r, seen) in &by_rank {
            assert_eq!(
                seen.get_status, "NOT-FOUND",
                "{what}: rank {r} (ours {ours})"
            );
            assert!(seen.get.is_empty(), "{what}: rank {r}");
        }
    }
}

#[test]
fn under_mpirun_on_our_library_bound_ranks_read_their_device_distances() {
    if !shared::open_mpi_present("devdist under mpirun") {
        return;
    }
    let dir = TempDir::new("devdist-mpirun");
    let dropin = shared::dropin_dir(&dir.0);
    let source = format!("xml:{}", xml_file().display());
    for (ours, exe) in builds(&dir.0) {
        // mpirun hosts our server (its libpmix.so.2 is ours); the libpmix2 build's
        // ranks keep Debian's library.
        let mut cmd = clean_command("mpirun");
        cmd.env("LD_LIBRARY_PATH", &dropin)
            .env("PMIX_MCA_pmix_hwloc_topo_file", xml_file())
            .args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "core",
            ])
            .args(["--mca", "btl", "self,vader", "-n", "2"]);
        if !ours {
            cmd.args(["-x", "LD_LIBRARY_PATH=/nonexistent"]);
        }
        cmd.arg(&exe);
        if ours {
            cmd.arg("same");
        }
        let out = output_within(&mut cmd, LIMIT);
        let what = format!("mpirun on our library ({})", exe.display());
        assert_eq!(out.status.code(), Some(0), "{what}\n{}", show(&out));
        let by_rank = parse(&String::from_utf8_lossy(&out.stdout));
        let rows = check_bound(&what, &by_rank, 2, &source, ours, &show(&out));
        if by_rank[&0].cpus != by_rank[&1].cpus {
            assert_ne!(
                rows[&0], rows[&1],
                "{what}: PUs 0 and 1 are on two packages"
            );
        }
    }
}

/// A wrapper that binds each task to one PU of this machine (its local id modulo
/// the PUs there) before it runs the program: the bed's Slurm binds nothing.
fn taskset_wrapper(dir: &SharedDir) -> PathBuf {
    let path = dir.path().join("bind-task.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nexec taskset -c $(( ${SLURM_LOCALID:-0} % $(nproc --all) )) \"$@\"\n",
    )
    .expect("write the wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn under_slurm_on_two_nodes_bound_tasks_read_their_device_distances_from_our_server() {
    let Some(bed) = TestBed::get("devdist under Slurm on two nodes") else {
        return;
    };
    // A task bound to one PU is told from an unbound one only where there are two.
    let pus = pmix::os::binding(pmix::os::BindEnvelope::Process).expect("binding");
    if pus.iter().count() < 2 {
        println!("NOTICE: one PU here: no task can be bound to part of the node; skipped");
        return;
    }
    let dir = SharedDir::new("devdist-slurm");
    bed.install_ours(&dir.lib("pmix_ffi"));
    let wrapper = taskset_wrapper(&dir);
    let ours = dir.build_ours(&c_dir(), "devdist");
    let theirs = dir.build_openpmix(&c_dir(), "devdist", "devdist.c under Slurm");
    // The nodes share this machine's sysfs: their topology is this machine's.
    let source = pmix::topology::DEFAULT_SOURCE;
    for (is_ours, exe) in std::iter::once((true, ours)).chain(theirs.map(|t| (false, t))) {
        let exe_s = exe.to_str().expect("UTF-8 path").to_string();
        let mut args = vec![
            "-N",
            "2",
            "-n",
            "4",
            "--ntasks-per-node=2",
            wrapper.to_str().expect("UTF-8 path"),
            exe_s.as_str(),
        ];
        if is_ours {
            args.push("same");
        }
        let run = bed.srun(Cluster::Ours, &[], &args, LIMIT);
        let what = format!("srun -N 2 on our server ({exe_s})");
        assert!(run.code == Some(0) && !run.hung, "{what}: {}", run.show());
        let by_rank = parse(&run.stdout);
        check_bound(&what, &by_rank, 4, source, is_ours, &run.show());
    }
}

#[test]
fn under_mpirun_on_two_nodes_bound_ranks_read_their_device_distances_from_our_orteds() {
    let Some(bed) = TestBed::get("devdist under mpirun on two nodes") else {
        return;
    };
    if !shared::open_mpi_present("devdist under mpirun on two nodes") {
        return;
    }
    let dir = SharedDir::new("devdist-mpirun-nodes");
    let dropin = dir.dropin();
    let ours = dir.build_ours(&c_dir(), "devdist");
    let theirs = dir.build_openpmix(&c_dir(), "devdist", "devdist.c on two nodes");
    let source = pmix::topology::DEFAULT_SOURCE;
    for (is_ours, exe) in std::iter::once((true, ours)).chain(theirs.map(|t| (false, t))) {
        let exe_s = exe.to_str().expect("UTF-8 path").to_string();
        let mut args = vec![
            "--host",
            "node1:2,node2:2",
            "--bind-to",
            "core",
            "--mca",
            "btl",
            "self,vader,tcp",
            "-x",
            "LD_LIBRARY_PATH=/nonexistent",
            exe_s.as_str(),
        ];
        if is_ours {
            args.push("same");
        }
        let run = bed.mpirun(Some(&dropin), &args, LIMIT);
        let what = format!("mpirun on two nodes, our library ({exe_s})");
        assert!(run.code == Some(0) && !run.hung, "{what}: {}", run.show());
        let by_rank = parse(&run.stdout);
        check_bound(&what, &by_rank, 4, source, is_ours, &run.show());
    }
}

/// The nearest devices of each type in `rows` (devdist's "UUID OSNAME TYPE MIN MAX"),
/// as `--report-bindings` words them: `TYPE NAME[,NAME] (MIN)`, types in order of
/// first appearance.
fn nearest_words(rows: &[String]) -> String {
    let mut by_type: Vec<(String, u16, Vec<String>)> = Vec::new();
    for row in rows {
        let w: Vec<&str> = row.split_whitespace().collect();
        let ty: u64 = w[2].parse().expect("a type");
        let name = pmix_core::DeviceTypes(ty)
            .name()
            .expect("one type")
            .to_string();
        let min: u16 = w[3].parse().expect("a distance");
        match by_type.iter_mut().find(|(t, _, _)| *t == name) {
            Some((_, m, names)) if min < *m => {
                *m = min;
                *names = vec![w[1].to_string()];
            }
            Some((_, m, names)) if min == *m => names.push(w[1].to_string()),
            Some(_) => {}
            None => by_type.push((name, min, vec![w[1].to_string()])),
        }
    }
    let parts: Vec<String> = by_type
        .iter()
        .map(|(t, m, n)| format!("{t} {} ({m})", n.join(",")))
        .collect();
    format!("nearest {}", parts.join("; "))
}

#[test]
fn pmix_run_report_bindings_prints_each_ranks_binding_and_nearest_devices() {
    let source = format!("xml:{}", xml_file().display());
    let mut cmd = clean_command(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env("PMIX_MCA_pmix_hwloc_topo_file", xml_file()).args([
        "-n",
        "3",
        "--bind",
        "core",
        "--report-bindings",
        "true",
    ]);
    let out = output_within(&mut cmd, LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    // Ranks 0 and 2 on PU 0, rank 1 on PU 1 (round robin over the PUs pmix-run may
    // use: this test needs two).
    let pus = pmix::os::binding(pmix::os::BindEnvelope::Process).expect("binding");
    let pus: Vec<u32> = pus.iter().collect();
    for r in 0..3u32 {
        let pu = pus[r as usize % pus.len()];
        let want = format!(
            "pmix-run: rank {r} bound to PUs {pu}: {}",
            nearest_words(&oracle(&source, &pu.to_string()))
        );
        assert_eq!(lines.get(r as usize).copied(), Some(want.as_str()), "{err}");
    }
    // Unbound ranks say so.
    let mut cmd = clean_command(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.args(["-n", "2", "--report-bindings", "true"]);
    let out = output_within(&mut cmd, LIMIT);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pmix-run: rank 0 not bound\npmix-run: rank 1 not bound\n"
    );
}
