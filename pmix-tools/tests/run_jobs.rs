//! OpenPMIx 4.2 client programs (`tests/c/*.c`, compiled with `cc` against Debian's
//! `libpmix-dev` and linked with `libpmix2`) run under `pmix-run -n 4`, each checking
//! its own results and exiting non-zero on a mismatch. Each was first validated under
//! Debian's `mpirun` (see the programs' headers for what mpirun itself fails: notify
//! ranges that go through its host, and PMIX_ERR_PROC_ABORTED to survivors). Every
//! run is bounded (pmix-run is killed by pid past [`LIMIT`], and its ranks die with
//! it). Without OpenPMIx the tests print a NOTICE and pass, except under `CI=true`,
//! where they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use pmix_testkit::TempDir;
use pmix_testkit::child::output_within;
use pmix_testkit::cprog;

const LIMIT: Duration = Duration::from_secs(120);

fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

/// Compiles `tests/c/<name>.c` against OpenPMIx into `dir`; `None` (after the notice)
/// when OpenPMIx is absent.
fn build(name: &str, dir: &TempDir) -> Option<PathBuf> {
    let pmix = cprog::openpmix_for(&format!("pmix-run with {name}.c"))?;
    let exe = dir.0.join(name);
    let src = c_dir().join(format!("{name}.c"));
    cprog::compile(&src, &exe, &[&pmix.include_dir, &c_dir()], &pmix.link);
    Some(exe)
}

fn pmix_run(n: u32, exe: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["-n", &n.to_string(), "--tag-output", "--timeout", "100"])
        .arg(exe)
        .args(args);
    output_within(&mut cmd, LIMIT)
}

/// Runs `name` under `pmix-run -n 4` and checks that every rank printed its `ok`
/// line and the job exited 0.
fn run_ok(name: &str, args: &[&str], ok: &dyn Fn(u32) -> String) {
    let dir = TempDir::new(&format!("run-{name}"));
    let Some(exe) = build(name, &dir) else { return };
    let out = pmix_run(4, &exe, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{name}:\n{stdout}\n{stderr}");
    for r in 0..4 {
        let line = format!("[{r}] {}\n", ok(r));
        assert!(
            stdout.contains(&line),
            "{name}: no {line:?} in\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn jobinfo_sees_job_size_universe_local_peers_local_and_node_ranks_and_hostname() {
    run_ok("jobinfo", &["4"], &|r| format!("jobinfo rank {r} of 4: ok"));
}

#[test]
fn modex_fence_with_data_collection_shows_every_peers_keys_by_scope() {
    run_ok("modex", &[], &|r| format!("modex rank {r}: ok"));
}

#[test]
fn a_direct_get_is_held_until_the_peer_commits_and_times_out_on_a_key_never_put() {
    run_ok("directget", &[], &|r| format!("directget rank {r}: ok"));
}

#[test]
fn publish_lookup_and_unpublish_across_ranks() {
    run_ok("pubsub", &[], &|r| format!("pubsub rank {r}: ok"));
}

#[test]
fn events_reach_exactly_the_handlers_and_ranks_of_each_range() {
    run_ok("events", &[], &|r| format!("events rank {r}: ok"));
}

#[test]
fn groups_with_context_ids_leaves_during_construct_and_destruct_and_fences_over_a_left_group() {
    // groups.c: see its header (ctx ids, leave during a construct with and without
    // FT, during a destruct, a destruct among the survivors, FT and non-FT fences
    // over a group someone left, a leave while a member is stopped).
    run_ok("groups", &[], &|r| format!("groups rank {r}: ok"));
}

#[test]
fn an_asynchronous_group_by_invite_and_join_with_one_invitee_declining() {
    run_ok("group_invite", &[], &|r| {
        format!("group_invite rank {r}: ok")
    });
}

#[test]
fn a_rank_exiting_1_after_a_fence_ends_the_job_with_1_after_the_others_get_proc_aborted() {
    let dir = TempDir::new("run-abort");
    let Some(exe) = build("abort", &dir) else {
        return;
    };
    let out = pmix_run(4, &exe, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    for r in [0, 2, 3] {
        let line = format!("[{r}] abort rank {r}: got PMIX_ERR_PROC_ABORTED for rank 1\n");
        assert!(stdout.contains(&line), "no {line:?} in\n{stdout}\n{stderr}");
    }
    assert!(
        stderr.contains("pmix-run: rank 1 exited with status 1\n"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("pmix-run: killing"),
        "the survivors finalized in time: {stderr}"
    );
}

#[test]
fn pmix_abort_ends_the_job_with_its_status_after_the_grace() {
    let dir = TempDir::new("run-pmixabort");
    let Some(exe) = build("pmixabort", &dir) else {
        return;
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["-n", "4", "--grace", "1", "--timeout", "100"])
        .arg(&exe);
    let out = output_within(&mut cmd, LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains(
            "pmix-run: rank 0 called PMIx_Abort with status 7: pmixabort: rank 0 gives up\n"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("FAIL"), "{stderr}");
}
