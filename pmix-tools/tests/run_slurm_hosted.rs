//! Our server inside Slurm: Debian's unmodified `mpi/pmix_v4` plugin loading
//! `libpmix_ffi` as its PMIx server library, on one node and across two.
//!
//! `.ci/slurm-up.sh` runs the slurmds of nodes `ours1` and `ours2` (partition `ours`)
//! in a private mount namespace where the plugin's `libpmix.so` is whatever file is
//! at [`PLUGIN_LIB`]; each test copies the `libpmix_ffi.so` cargo built there first
//! (one test at a time: [`LOCK`]). Tasks linked with OpenPMIx's libpmix2 still load
//! OpenPMIx; tasks linked with ours load ours. `srun -p ours -N 2` then runs one
//! step daemon per node, each with our server, exchanging fence data through
//! Slurm's own collectives (`SLURM_PMIX_FENCE`: `tree`, `ring`, or, unset, tree
//! without data and ring with) and direct-modex requests.
//!
//! **Slurm's tree on one machine.** With two node names on one host, Slurm 22.05's
//! tree collective makes each step daemon the root of a tree of its own (measured:
//! "local delivery" on both, with OpenPMIx's server as with ours; the daemon looks
//! itself up in the collective's node list by host name, which is neither node's
//! name), so a tree fence does not wait for the other node. Its ring does. The
//! two-node tests therefore use `ring` (`TWO_NODES`), and `tree` runs on one node,
//! where its one-node tree is right.
//!
//! Without the cluster or the `ours` partition every test prints a NOTICE and passes,
//! except under `CI=true`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

use pmix_testkit::child::output_within;
use pmix_testkit::{TempDir, cprog, peer_absent};

mod shared;

use shared::show;

/// The file the `ours` nodes' plugin loads as `libpmix.so`.
const PLUGIN_LIB: &str = "/run/pmix-rs-slurm/libpmix.so";
const LIMIT: Duration = Duration::from_secs(120);
const N: u32 = 4;
const SLURM_UP: &str = "bash .ci/slurm-up.sh";
/// The environment of every two-node step (module docs).
const TWO_NODES: [(&str, &str); 1] = [("SLURM_PMIX_FENCE", "ring")];

/// One test at a time installs the plugin's library and runs its jobs.
static LOCK: Mutex<()> = Mutex::new(());

fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

/// A command without what would leak into the job (see run_slurm.rs).
fn clean(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("PMIX_") || k.starts_with("SLURM_") {
            cmd.env_remove(&*k);
        }
    }
    cmd
}

/// Whether the `ours` partition has both nodes up; otherwise the NOTICE (or, under
/// `CI=true`, the failure).
fn cluster_up(what: &str) -> bool {
    let out = output_within(
        clean("sinfo").args(["-h", "-N", "-p", "ours", "-o", "%N %t"]),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let up = text
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|s| matches!(s, "idle" | "mix" | "alloc" | "comp"))
        })
        .count();
    if out.status.success() && up == 2 && Path::new(PLUGIN_LIB).parent().is_some_and(Path::exists) {
        return true;
    }
    peer_absent(
        &format!(
            "{what} under srun -p ours: partition ours not up ({})",
            text.trim()
        ),
        SLURM_UP,
    );
    false
}

/// Copies our library to [`PLUGIN_LIB`] (atomically: a step starting meanwhile
/// loads the old file or the new one).
fn install_ours() {
    let ours = cprog::lib_dir("pmix_ffi").join("libpmix_ffi.so");
    let tmp = format!("{PLUGIN_LIB}.{}", std::process::id());
    std::fs::copy(&ours, &tmp).unwrap_or_else(|e| panic!("copy {}: {e}", ours.display()));
    std::fs::rename(&tmp, PLUGIN_LIB).unwrap();
}

/// Both builds of `tests/c/<name>.c` (ours, libpmix2), or `None` after the notice.
fn both(name: &str, dir: &TempDir) -> Option<(PathBuf, PathBuf)> {
    if !cluster_up(&format!("{name}.c")) {
        return None;
    }
    let ours = cprog::build_ours(&c_dir(), name, &dir.0);
    let theirs = cprog::build_openpmix(&c_dir(), name, &dir.0, &format!("{name}.c under srun"))?;
    Some((ours, theirs))
}

/// `srun -p ours -N nodes -n 4 --mpi=pmix --label exe args` with `env`.
fn srun(nodes: u32, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = clean("srun");
    cmd.args(["-p", "ours", "--mpi=pmix", "--label"]);
    cmd.args(["-N", &nodes.to_string(), "-n", &N.to_string()]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg(exe).args(args.iter().map(OsStr::new));
    output_within(&mut cmd, LIMIT)
}

fn task_lines(text: &[u8], r: u32) -> Vec<String> {
    let prefix = format!("{r}: ");
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(&prefix).map(str::to_owned))
        .collect()
}

/// The job exited 0 and every task printed `ok(r)`.
fn check(what: &str, out: &Output, ok: &dyn Fn(u32) -> String) {
    assert_eq!(out.status.code(), Some(0), "{what}:\n{}", show(out));
    for r in 0..N {
        let want = ok(r);
        assert!(
            task_lines(&out.stdout, r).contains(&want),
            "{what}: task {r} did not print {want:?}:\n{}",
            show(out)
        );
    }
}

/// How many of the 4 tasks `srun -N 2` puts on rank `r`'s node (block: 3 and 1).
fn on_node_of(r: u32) -> u32 {
    if r < 3 { 3 } else { 1 }
}

#[test]
fn our_server_in_slurm_serves_clients_of_both_libraries_on_one_node() {
    let dir = TempDir::new("slurm-ours-one");
    let Some((ours, theirs)) = both("nodes", &dir) else {
        return;
    };
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_ours();
    for (lib, exe) in [("libpmix2", &theirs), ("libpmix_ffi", &ours)] {
        for mode in ["collect", "direct"] {
            for algo in ["tree", "ring"] {
                let out = srun(1, exe, &[mode], &[("SLURM_PMIX_FENCE", algo)]);
                check(
                    &format!("nodes {mode} ({lib}, {algo}), 1 node"),
                    &out,
                    &|r| format!("nodes rank {r}: ok (4 on this node)"),
                );
            }
        }
    }
}

#[test]
fn our_server_in_slurm_across_two_nodes_collects_fence_data_in_slurms_ring() {
    let dir = TempDir::new("slurm-ours-collect");
    let Some((ours, theirs)) = both("nodes", &dir) else {
        return;
    };
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_ours();
    for (lib, exe) in [("libpmix2", &theirs), ("libpmix_ffi", &ours)] {
        let out = srun(2, exe, &["collect"], &TWO_NODES);
        check(&format!("nodes collect ({lib})"), &out, &|r| {
            format!("nodes rank {r}: ok ({} on this node)", on_node_of(r))
        });
    }
}

#[test]
fn our_server_in_slurm_gets_another_nodes_keys_by_direct_modex_without_collecting() {
    let dir = TempDir::new("slurm-ours-direct");
    let Some((ours, theirs)) = both("nodes", &dir) else {
        return;
    };
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_ours();
    for (lib, exe) in [("libpmix2", &theirs), ("libpmix_ffi", &ours)] {
        let out = srun(2, exe, &["direct"], &TWO_NODES);
        check(&format!("nodes direct ({lib})"), &out, &|r| {
            format!("nodes rank {r}: ok ({} on this node)", on_node_of(r))
        });
    }
}

#[test]
fn our_server_in_slurm_ends_a_two_node_step_on_abort_with_its_status() {
    let dir = TempDir::new("slurm-ours-abort");
    let Some((ours, theirs)) = both("pmixabort", &dir) else {
        return;
    };
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_ours();
    for (lib, exe) in [("libpmix2", &theirs), ("libpmix_ffi", &ours)] {
        let out = srun(2, exe, &[], &TWO_NODES);
        assert_eq!(out.status.code(), Some(7), "{lib}:\n{}", show(&out));
    }
}

#[test]
fn our_server_in_slurm_ends_the_step_when_a_rank_is_killed_and_no_survivor_hangs() {
    let dir = TempDir::new("slurm-ours-kill");
    let Some((ours, theirs)) = both("nodes", &dir) else {
        return;
    };
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_ours();
    for (lib, exe) in [("libpmix2", &theirs), ("libpmix_ffi", &ours)] {
        // Bounded by LIMIT: a survivor left waiting would show as a timeout (124).
        let out = srun(2, exe, &["kill"], &TWO_NODES);
        let text = show(&out);
        let code = out.status.code();
        assert!(code.is_some_and(|c| c != 0 && c != 124), "{lib}:\n{text}");
        for r in 0..N - 1 {
            let done = format!("nodes rank {r}: fence after the kill returned 0");
            assert!(
                !task_lines(&out.stdout, r).contains(&done),
                "{lib}:\n{text}"
            );
        }
        // The plugin's default handler heard of the loss and ended the step.
        assert!(
            text.contains("status = -61"),
            "{lib}: no lost-connection event:\n{text}"
        );
    }
}

#[test]
fn the_step_daemon_loads_our_library_and_no_openpmix() {
    if !cluster_up("the step daemon's mappings") {
        return;
    }
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_ours();
    let mut cmd = clean("srun");
    cmd.args(["-p", "ours", "--mpi=pmix", "-N", "1", "-n", "1"]);
    cmd.args([
        "sh",
        "-c",
        "grep -F .so /proc/$PPID/maps; cat /proc/$PPID/comm",
    ]);
    let out = output_within(&mut cmd, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text.contains("slurmstepd"),
        "the task's parent is no step daemon:\n{text}"
    );
    assert!(
        text.contains("mpi_pmix"),
        "the pmix plugin is not loaded:\n{text}"
    );
    assert!(
        text.contains(PLUGIN_LIB),
        "our library is not mapped:\n{text}"
    );
    for theirs in [
        "libpmix.so.2.6",
        "pmix2/lib/libpmix.so ",
        "/pmix2/lib/pmix/",
    ] {
        assert!(!text.contains(theirs), "{theirs} is mapped:\n{text}");
    }
}

#[test]
fn groups_span_both_slurm_nodes_with_context_ids_local_cids_and_a_leave() {
    // comm_from_group.c with 8 ranks, 4 per node, for each library: the construct
    // and the destruct over both nodes run on Slurm's fence; every member reads
    // every other's local CID on its own node; a leave reaches the other node's
    // members with the destruct ("late-left": Slurm's plugin carries no events);
    // Slurm's collectives over single ranks of both nodes fail on this machine
    // (OpenPMIx's server too), so the later groups are over the whole job
    // ("whole-job").
    let _lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("slurm-ours-groups");
    let Some((ours, theirs)) = both("comm_from_group", &dir) else {
        return;
    };
    install_ours();
    for (who, exe) in [("libpmix_ffi", &ours), ("libpmix2", &theirs)] {
        let mut cmd = clean("srun");
        cmd.args(["-p", "ours", "--mpi=pmix", "--label", "-N", "2", "-n", "8"])
            .arg("--ntasks-per-node=4");
        for (k, v) in TWO_NODES {
            cmd.env(k, v);
        }
        cmd.arg(exe).args(["late-left", "whole-job"]);
        let out = output_within(&mut cmd, LIMIT);
        assert_eq!(out.status.code(), Some(0), "{who}:\n{}", show(&out));
        for r in 0..8 {
            let want = format!("comm_from_group rank {r}: ok");
            assert!(
                task_lines(&out.stdout, r).contains(&want),
                "{who}: task {r} did not print {want:?}:\n{}",
                show(&out)
            );
        }
    }
}
