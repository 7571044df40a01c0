//! Our own client library as a real PMIx client (issue 13, first part): the C test
//! programs of `tests/c/` compiled against `pmix-ffi/include` and linked with
//! `libpmix_ffi` instead of `libpmix2`, run as 4 ranks under `pmix-run` and under
//! Debian's Open MPI `mpirun` (an OpenPMIx 4.2.2 server), each checking its own
//! results: job information (`jobinfo.c`), put / commit / fence with data
//! collection / get of every peer's keys by scope (`modex.c`), a `PMIx_Get_nb` held
//! until the peer commits and a `PMIx_Get` with `PMIX_TIMEOUT` (`directget.c`), and
//! `PMIx_Abort` (`pmixabort.c`), publish / lookup / unpublish (`pubsub.c`), groups
//! (`groups.c`; `group_notsup.c` under mpirun, which has none), event handlers and notifications in every range
//! (`events.c`), and `PMIX_ERR_PROC_ABORTED` reaching the survivors of a rank that
//! exits 1 (`abort.c`); jobs mixing both libraries exchange keys and events. The same
//! programs linked with `libpmix2` are `run_jobs.rs`'s.
//!
//! Every run is bounded ([`LIMIT`]; the launcher is killed by pid past it, and its
//! ranks die with it). Without `mpirun` the mpirun half prints a NOTICE and passes,
//! except under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use pmix_testkit::child::output_within;
use pmix_testkit::{TempDir, cprog, peer_absent};

mod shared;

const LIMIT: Duration = Duration::from_secs(120);

/// The bound on one `mpirun` job (each takes well under a second here).
const MPIRUN_LIMIT: Duration = Duration::from_secs(60);
const N: u32 = 4;

fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

/// `tests/c/<name>.c` linked with libpmix_ffi ([`cprog::build_ours`]).
fn build_ours(name: &str, dir: &TempDir) -> PathBuf {
    cprog::build_ours(&c_dir(), name, &dir.0)
}

fn pmix_run(exe: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["-n", &N.to_string(), "--tag-output", "--timeout", "100"])
        .arg(exe)
        .args(args);
    output_within(&mut cmd, LIMIT)
}

/// `mpirun -n 4` when Open MPI is here (`None` after the notice otherwise).
fn mpirun(exe: &Path, args: &[&str]) -> Option<Output> {
    mpirun_with(exe, args, &[], N)
}

/// [`mpirun`] of `np` ranks with variables `env` set for them (`-x`).
fn mpirun_with(exe: &Path, args: &[&str], env: &[(&str, &str)], np: u32) -> Option<Output> {
    let present = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        peer_absent(
            "libpmix_ffi under mpirun: mpirun not found",
            "apt-get install openmpi-bin",
        );
        return None;
    }
    let mut cmd = Command::new("mpirun");
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["--allow-run-as-root", "--oversubscribe", "--tag-output"])
        .args(["--mca", "btl", "self,vader"]);
    for (k, v) in env {
        cmd.env(k, v).args(["-x", k]);
    }
    cmd.args(["-n", &np.to_string()]).arg(exe).args(args);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PMIX_") {
            cmd.env_remove(k);
        }
    }
    // Open MPI 4.1's mpirun has been seen, once in many CI runs, to outlive a job
    // whose ranks all printed their lines. Such a hang is reported (with what every
    // process of the job was doing) and the job run once more; a second hang fails.
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        output_within(&mut cmd, MPIRUN_LIMIT)
    }));
    Some(first.unwrap_or_else(|hang| {
        let why = hang
            .downcast_ref::<String>()
            .map_or("(no message)", String::as_str);
        eprintln!("mpirun hung, running the job once more; the hang:\n{why}");
        output_within(&mut cmd, MPIRUN_LIMIT)
    }))
}

/// Every rank printed its `ok` line (with pmix-run's `[rank] ` tag) and the job
/// exited 0.
fn check(what: &str, out: &Output, ok: &dyn Fn(u32) -> String) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{what}:\n{stdout}\n{stderr}");
    for r in 0..N {
        let line = format!("[{r}] {}\n", ok(r));
        assert!(
            stdout.contains(&line),
            "{what}: no {line:?} in\n{stdout}\n{stderr}"
        );
    }
}

/// mpirun's `--tag-output` prefix: `[jobid,rank]<stdout>:`.
fn mpirun_tag(r: u32) -> String {
    format!(",{r}]<stdout>:")
}

fn check_mpirun(what: &str, out: &Output, ok: &dyn Fn(u32) -> String) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{what}:\n{stdout}\n{stderr}");
    for r in 0..N {
        let want = format!("{}{}", mpirun_tag(r), ok(r));
        assert!(
            stdout.lines().any(|l| l.contains(&want)),
            "{what}: no line with {want:?} in\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn libpmix_ffi_clients_see_their_job_information_under_pmix_run() {
    let dir = TempDir::new("ffi-jobinfo");
    let exe = build_ours("jobinfo", &dir);
    let out = pmix_run(&exe, &["4"]);
    check("jobinfo under pmix-run", &out, &|r| {
        format!("jobinfo rank {r} of 4: ok")
    });
}

#[test]
fn libpmix_ffi_clients_exchange_keys_by_scope_under_pmix_run() {
    let dir = TempDir::new("ffi-modex");
    let exe = build_ours("modex", &dir);
    let out = pmix_run(&exe, &[]);
    check("modex under pmix-run", &out, &|r| {
        format!("modex rank {r}: ok")
    });
}

#[test]
fn libpmix_ffi_clients_see_the_job_information_libpmix2_sees_under_mpirun() {
    // mpirun --oversubscribe's universe is its slot count (this machine's cores):
    // both builds print it ("any") and must agree.
    let dir = TempDir::new("ffi-jobinfo-mpirun");
    let ours = build_ours("jobinfo", &dir);
    let Some(theirs) = build_openpmix("jobinfo", &dir) else {
        return;
    };
    let universe = |out: &Output| -> Vec<String> {
        let mut u: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                l.split_once("jobinfo rank ")
                    .map(|(_, rest)| rest.to_owned())
            })
            .filter(|l| l.contains(": universe "))
            .collect();
        u.sort();
        u
    };
    let Some(out_ours) = mpirun(&ours, &["4", "any"]) else {
        return;
    };
    check_mpirun("jobinfo (libpmix_ffi) under mpirun", &out_ours, &|r| {
        format!("jobinfo rank {r} of 4: ok")
    });
    let Some(out_theirs) = mpirun(&theirs, &["4", "any"]) else {
        return;
    };
    check_mpirun("jobinfo (libpmix2) under mpirun", &out_theirs, &|r| {
        format!("jobinfo rank {r} of 4: ok")
    });
    assert_eq!(universe(&out_ours).len(), 4);
    assert_eq!(universe(&out_ours), universe(&out_theirs));
}

#[test]
fn libpmix_ffi_clients_exchange_keys_by_scope_under_mpirun() {
    let dir = TempDir::new("ffi-modex-mpirun");
    let exe = build_ours("modex", &dir);
    if let Some(out) = mpirun(&exe, &[]) {
        check_mpirun("modex under mpirun", &out, &|r| {
            format!("modex rank {r}: ok")
        });
    }
}

/// `tests/c/<name>.c` linked with libpmix2 ([`cprog::build_openpmix`]); `None` (after
/// the notice) without OpenPMIx.
fn build_openpmix(name: &str, dir: &TempDir) -> Option<PathBuf> {
    cprog::build_openpmix(
        &c_dir(),
        name,
        &dir.0,
        &format!("a mixed job with {name}.c"),
    )
}

/// `tests/c/<name>.c` as one job under `pmix-run`: even ranks linked with
/// libpmix_ffi, odd ones with libpmix2; `None` (after the notice) without OpenPMIx.
fn mixed_job(name: &str) -> Option<Output> {
    mixed_job_with(name, true)
}

/// [`mixed_job`], with libpmix_ffi on the even ranks (`ours_even`) or on the odd ones.
fn mixed_job_with(name: &str, ours_even: bool) -> Option<Output> {
    let dir = TempDir::new(&format!("ffi-mixed-{name}-{ours_even}"));
    let ours = build_ours(name, &dir);
    let theirs = build_openpmix(name, &dir)?;
    let script = r#"if [ $((PMIX_RANK % 2)) -eq 0 ]; then exec "$1"; else exec "$2"; fi"#;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["-n", &N.to_string(), "--tag-output", "--timeout", "100"])
        .args(["sh", "-c", script, "sh"]);
    if ours_even {
        cmd.arg(&ours).arg(&theirs);
    } else {
        cmd.arg(&theirs).arg(&ours);
    }
    Some(output_within(&mut cmd, LIMIT))
}

#[test]
fn a_handler_gets_its_return_object_back_when_a_rank_aborts_under_pmix_run() {
    // tests/c/return_object.c (the shape of OpenPMIx's fault example): the handler's
    // PMIX_EVENT_RETURN_OBJECT comes back in the infos of the PMIX_ERR_PROC_ABORTED
    // event when rank 0 exits 1; every survivor hears it and finalizes, and the job
    // ends with rank 0's failure.
    let dir = TempDir::new("ffi-return-object");
    let ours = build_ours("return_object", &dir);
    let mut runs = vec![("ours", pmix_run(&ours, &[]))];
    if let Some(theirs) = build_openpmix("return_object", &dir) {
        runs.push(("libpmix2", pmix_run(&theirs, &[])));
    }
    for (who, out) in runs {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_ne!(out.status.code(), Some(0), "{who}: rank 0 failed: {stdout}");
        for r in 1..N {
            let line = format!("[{r}] return_object rank {r}: ok");
            assert!(stdout.contains(&line), "{who}: no {line:?} in {stdout}");
        }
    }
}

#[test]
fn data_packed_by_one_library_unpacks_in_the_other_in_a_mixed_job() {
    // tests/c/packed.c: each rank packs, puts the bytes, and unpacks its neighbour's;
    // with libpmix_ffi on the even ranks and then on the odd ones, every buffer goes
    // from one library to the other, both ways; ours alone too.
    let dir = TempDir::new("ffi-packed");
    let exe = build_ours("packed", &dir);
    let ok = |r: u32| format!("packed rank {r}: ok");
    check("packed under pmix-run", &pmix_run(&exe, &[]), &ok);
    for ours_even in [true, false] {
        if let Some(out) = mixed_job_with("packed", ours_even) {
            check(&format!("mixed packed (ours even: {ours_even})"), &out, &ok);
        }
    }
}

#[test]
fn libpmix2_and_libpmix_ffi_ranks_exchange_keys_in_one_job_under_pmix_run() {
    // Even ranks run the program linked with libpmix_ffi, odd ones the same program
    // linked with libpmix2: each checks every peer's keys by scope.
    if let Some(out) = mixed_job("modex") {
        check("mixed modex under pmix-run", &out, &|r| {
            format!("modex rank {r}: ok")
        });
    }
}

#[test]
fn libpmix_ffi_get_nb_is_held_until_the_peer_commits_and_get_times_out_under_pmix_run() {
    let dir = TempDir::new("ffi-directget");
    let exe = build_ours("directget", &dir);
    let out = pmix_run(&exe, &[]);
    check("directget under pmix-run", &out, &|r| {
        format!("directget rank {r}: ok")
    });
}

#[test]
fn libpmix_ffi_get_nb_is_held_until_the_peer_commits_and_get_times_out_under_mpirun() {
    let dir = TempDir::new("ffi-directget-mpirun");
    let exe = build_ours("directget", &dir);
    if let Some(out) = mpirun(&exe, &[]) {
        check_mpirun("directget under mpirun", &out, &|r| {
            format!("directget rank {r}: ok")
        });
    }
}

#[test]
fn libpmix_ffi_pmix_abort_ends_the_job_with_its_status_under_pmix_run() {
    let dir = TempDir::new("ffi-pmixabort");
    let exe = build_ours("pmixabort", &dir);
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
}

#[test]
fn libpmix_ffi_events_reach_exactly_the_handlers_and_ranks_of_each_range_under_pmix_run() {
    let dir = TempDir::new("ffi-events");
    let exe = build_ours("events", &dir);
    let out = pmix_run(&exe, &[]);
    check("events under pmix-run", &out, &|r| {
        format!("events rank {r}: ok")
    });
}

#[test]
fn libpmix_ffi_events_of_the_ranges_mpirun_delivers_under_mpirun() {
    // Open MPI 4.1's mpirun never completes a notify whose range goes through its
    // host (events.c's header): those steps are skipped there.
    let dir = TempDir::new("ffi-events-mpirun");
    let exe = build_ours("events", &dir);
    if let Some(out) = mpirun_with(&exe, &[], &[("EVENTS_SKIP_STEPS", "3,4,5,7")], N) {
        check_mpirun("events under mpirun", &out, &|r| {
            format!("events rank {r}: ok")
        });
    }
}

#[test]
fn libpmix_ffi_survivors_get_proc_aborted_for_a_rank_that_exits_1_under_pmix_run() {
    let dir = TempDir::new("ffi-abort");
    let exe = build_ours("abort", &dir);
    let out = pmix_run(&exe, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    for r in [0, 2, 3] {
        let line = format!("[{r}] abort rank {r}: got PMIX_ERR_PROC_ABORTED for rank 1\n");
        assert!(stdout.contains(&line), "no {line:?} in\n{stdout}\n{stderr}");
    }
}

#[test]
fn libpmix2_and_libpmix_ffi_ranks_see_each_others_events_under_pmix_run() {
    if let Some(out) = mixed_job("events") {
        check("mixed events under pmix-run", &out, &|r| {
            format!("events rank {r}: ok")
        });
    }
}

#[test]
fn libpmix_ffi_groups_with_context_ids_leaves_and_fences_over_a_left_group_under_pmix_run() {
    // groups.c's header: context ids, leave during a construct with and without FT,
    // during a destruct, a destruct among the survivors, FT and non-FT fences over a
    // group someone left, a leave while a member is stopped (SIGSTOP).
    let dir = TempDir::new("ffi-groups");
    let exe = build_ours("groups", &dir);
    let out = pmix_run(&exe, &[]);
    check("groups under pmix-run", &out, &|r| {
        format!("groups rank {r}: ok")
    });
}

#[test]
fn libpmix2_and_libpmix_ffi_ranks_build_leave_and_destruct_groups_together_under_pmix_run() {
    if let Some(out) = mixed_job("groups") {
        check("mixed groups under pmix-run", &out, &|r| {
            format!("groups rank {r}: ok")
        });
    }
}

#[test]
fn a_communicator_from_a_group_reads_every_members_local_cid_under_its_context_id() {
    // comm_from_group.c's header: Open MPI 5's construct with an assigned context
    // id and PMIX_GROUP_INFO local CIDs, qualified gets of every member's, a leave
    // every other member hears, a destruct among the survivors, distinct ids for a
    // name reused and a second group. Eight ranks: libpmix_ffi, libpmix2, and both
    // in one job.
    let dir = TempDir::new("ffi-comm-from-group");
    let ours = build_ours("comm_from_group", &dir);
    let mut runs = vec![("libpmix_ffi", vec![ours.clone()])];
    if let Some(theirs) = build_openpmix("comm_from_group", &dir) {
        runs.push(("libpmix2", vec![theirs.clone()]));
        runs.push(("both", vec![ours, theirs]));
    }
    let script = r#"if [ $((PMIX_RANK % 2)) -eq 0 ]; then exec "$1"; else exec "$2"; fi"#;
    for (who, exes) in runs {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
        cmd.env_remove("LD_LIBRARY_PATH")
            .args(["-n", "8", "--tag-output", "--timeout", "100"]);
        if exes.len() == 2 {
            cmd.args(["sh", "-c", script, "sh"]);
        }
        cmd.args(&exes);
        let out = output_within(&mut cmd, LIMIT);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{who}:\n{stdout}\n{stderr}");
        for r in 0..8 {
            let line = format!("[{r}] comm_from_group rank {r}: ok\n");
            assert!(
                stdout.contains(&line),
                "{who}: no {line:?} in\n{stdout}\n{stderr}"
            );
        }
    }
}

#[test]
fn under_mpirun_group_calls_get_the_not_supported_libpmix2_gets() {
    let dir = TempDir::new("ffi-groups-mpirun");
    let ours = build_ours("group_notsup", &dir);
    let Some(theirs) = build_openpmix("group_notsup", &dir) else {
        return;
    };
    let lines = |out: &Output| -> Vec<String> {
        let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                l.split_once("group_notsup rank ")
                    .map(|(_, r)| r.to_owned())
            })
            .collect();
        v.sort();
        v
    };
    let Some(out_ours) = mpirun(&ours, &[]) else {
        return;
    };
    let Some(out_theirs) = mpirun(&theirs, &[]) else {
        return;
    };
    let (a, b) = (lines(&out_ours), lines(&out_theirs));
    shared::assert_groups_not_supported_alike(&a, &b, N);
}

#[test]
fn libpmix_ffi_publish_lookup_and_unpublish_across_ranks_under_pmix_run() {
    let dir = TempDir::new("ffi-pubsub");
    let exe = build_ours("pubsub", &dir);
    let out = pmix_run(&exe, &[]);
    check("pubsub under pmix-run", &out, &|r| {
        format!("pubsub rank {r}: ok")
    });
}

#[test]
fn nonblocking_publish_lookup_unpublish_and_store_internal_under_pmix_run_and_mpirun() {
    // tests/c/pubsub_nb.c: PMIx_Publish_nb / Lookup_nb / Unpublish_nb across ranks, and
    // PMIx_Store_internal for a peer and for oneself answered by PMIx_Get here. Ours
    // under pmix-run and under mpirun; libpmix2's under mpirun shows the program
    // asks what OpenPMIx answers.
    let dir = TempDir::new("ffi-pubsub-nb");
    let exe = build_ours("pubsub_nb", &dir);
    let ok = |r: u32| format!("pubsub_nb rank {r}: ok");
    check("pubsub_nb under pmix-run", &pmix_run(&exe, &[]), &ok);
    if let Some(out) = mpirun(&exe, &[]) {
        check_mpirun("pubsub_nb under mpirun", &out, &ok);
    }
    if let Some(theirs) = build_openpmix("pubsub_nb", &dir)
        && let Some(out) = mpirun(&theirs, &[])
    {
        check_mpirun("pubsub_nb (libpmix2) under mpirun", &out, &ok);
    }
}

#[test]
fn allocation_credential_and_fabric_calls_answer_as_libpmix2_under_pmix_run_and_mpirun() {
    // tests/c/unserved.c prints what each call answers (and what each callback got);
    // libpmix_ffi and libpmix2 print the same lines under each server.
    let dir = TempDir::new("ffi-unserved");
    let ours = build_ours("unserved", &dir);
    let ok = |r: u32| format!("unserved rank {r}: ok");
    let out_ours = pmix_run(&ours, &[]);
    check("unserved under pmix-run", &out_ours, &ok);
    let Some(theirs) = build_openpmix("unserved", &dir) else {
        return;
    };
    let out_theirs = pmix_run(&theirs, &[]);
    check("unserved (libpmix2) under pmix-run", &out_theirs, &ok);
    assert_eq!(
        sorted_lines(&out_ours),
        sorted_lines(&out_theirs),
        "under pmix-run"
    );
    if let (Some(a), Some(b)) = (mpirun(&ours, &[]), mpirun(&theirs, &[])) {
        check_mpirun("unserved under mpirun", &a, &ok);
        check_mpirun("unserved (libpmix2) under mpirun", &b, &ok);
        assert_eq!(sorted_lines(&a), sorted_lines(&b), "under mpirun");
    }
}

#[test]
fn server_connections_and_io_forwarding_answer_as_libpmix2_under_pmix_run_and_mpirun() {
    // tests/c/servers.c: get_servers names the server of the URI; switching,
    // attaching, disconnecting another server and I/O forwarding answer alike.
    let dir = TempDir::new("ffi-servers");
    let ours = build_ours("servers", &dir);
    let ok = |r: u32| format!("servers rank {r}: ok");
    let out_ours = pmix_run(&ours, &[]);
    check("servers under pmix-run", &out_ours, &ok);
    assert!(
        String::from_utf8_lossy(&out_ours.stdout).contains("server named by the URI: yes"),
        "{out_ours:?}"
    );
    let pushed = pmix_run(&ours, &["push"]);
    check("servers push under pmix-run", &pushed, &ok);
    let text = String::from_utf8_lossy(&pushed.stdout);
    for line in [
        "iof push nothing OPERATION-SUCCEEDED",
        "iof push bytes NOT-SUPPORTED",
        "iof deregister NOT-SUPPORTED",
    ] {
        assert_eq!(text.matches(line).count(), N as usize, "{line}: {text}");
    }
    let Some(theirs) = build_openpmix("servers", &dir) else {
        return;
    };
    let out_theirs = pmix_run(&theirs, &[]);
    check("servers (libpmix2) under pmix-run", &out_theirs, &ok);
    assert_eq!(
        sorted_lines(&out_ours),
        sorted_lines(&out_theirs),
        "under pmix-run"
    );
    if let (Some(a), Some(b)) = (mpirun(&ours, &[]), mpirun(&theirs, &[])) {
        check_mpirun("servers under mpirun", &a, &ok);
        check_mpirun("servers (libpmix2) under mpirun", &b, &ok);
        assert_eq!(sorted_lines(&a), sorted_lines(&b), "under mpirun");
    }
}

/// The stdout lines of a job, without `mpirun --tag-output`'s prefix, sorted (the
/// ranks' lines interleave).
fn sorted_lines(out: &Output) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            l.split_once("<stdout>:")
                .map_or(l, |(_, rest)| rest)
                .to_owned()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn libpmix_ffi_publish_lookup_and_unpublish_across_ranks_under_mpirun() {
    let dir = TempDir::new("ffi-pubsub-mpirun");
    let exe = build_ours("pubsub", &dir);
    if let Some(out) = mpirun(&exe, &[]) {
        check_mpirun("pubsub under mpirun", &out, &|r| {
            format!("pubsub rank {r}: ok")
        });
    }
}

#[test]
fn group_leave_return_codes_and_would_block_from_a_handler_or_callback_change_nothing() {
    // leave_rules.c's header: INIT before init, BAD_PARAM for NULL and over-length
    // ids, WOULD_BLOCK from an event handler and a callback (both forms, the _nb one
    // with a NULL cbfunc) with no PMIX_GROUP_LEFT sent, a NULL cbfunc off the progress
    // thread as the blocking form, a callback run once, the survivors' destruct.
    let dir = TempDir::new("ffi-leave-rules");
    let exe = build_ours("leave_rules", &dir);
    let out = pmix_run(&exe, &[]);
    check("leave_rules under pmix-run", &out, &|r| {
        format!("leave_rules rank {r}: ok")
    });
    // One diagnostic per refused call, naming it.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}{stderr}");
    for call in ["PMIx_Group_leave:", "PMIx_Group_leave_nb:"] {
        let n = all
            .lines()
            .filter(|l| {
                l.contains(&format!(
                    "pmix-rs: {call} blocking call made on the PMIx progress thread"
                ))
            })
            .count();
        assert_eq!(n, 2, "{call} diagnostics:\n{all}");
    }
}

/// `exe` as `n` ranks under pmix-run (with `flags`, then `args` for the program),
/// whose server reads the 192-PU hwloc export (`PMIX_TOPOLOGY`); also that source.
fn pmix_run_on_xml(exe: &Path, n: u32, flags: &[&str], args: &[&str]) -> (Output, String) {
    let source = format!(
        "xml:{}",
        pmix_testkit::hwloc_xml("192em64t-12gr2n8c2t.xml").display()
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("PMIX_TOPOLOGY", &source)
        .args(["-n", &n.to_string(), "--timeout", "100"])
        .args(flags)
        .arg(exe)
        .args(args);
    (output_within(&mut cmd, LIMIT), source)
}

/// `svc`'s answer to `req`, one line per entry as the C programs print them:
/// `PREFIX uuid osname type mindist maxdist`.
fn answer_lines(svc: &pmix::Service, req: &pmix::DistanceRequest<'_>, prefix: &str) -> Vec<String> {
    svc.answer(req, |t, entries| {
        entries
            .iter()
            .map(|e| {
                let d = t.device(e.device).unwrap();
                let (uuid, name, kind) = (d.uuid(), d.name(), d.kind().0);
                format!("{prefix} {uuid} {name} {kind} {} {}", e.mindist, e.maxdist)
            })
            .collect()
    })
    .unwrap()
}

/// The lines `dist_relay.c` printed for rank `r` (without pmix-run's or mpirun's
/// tags), in order.
fn dist_lines(out: &Output, r: u32) -> Vec<String> {
    let prefix = format!("dist_relay rank {r}: ");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(&prefix).map(|(_, rest)| rest.to_owned()))
        .collect()
}

#[test]
fn libpmix_ffi_without_a_topology_relays_distances_to_pmix_run_and_gets_its_answer() {
    let dir = TempDir::new("ffi-dist-relay");
    let exe = build_ours("dist_relay", &dir);
    let (out, source) = pmix_run_on_xml(&exe, N, &["--tag-output"], &["eth2"]);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    // What pmix-run's server answers, computed here on the same topology: the ranks
    // are unbound (they inherit this process's binding).
    let svc = pmix::Service::new(source, None).unwrap();
    let own = svc.own_cpuset(pmix::BindEnvelope::Process).unwrap();
    let expect = |case: &str, req: &pmix::DistanceRequest<'_>| -> Vec<String> {
        let mut v = vec![format!("{case} SUCCESS")];
        v.extend(answer_lines(&svc, req, case));
        v
    };
    let from_own = pmix::DistanceRequest {
        cpuset: Some(&own),
        ..Default::default()
    };
    let from_eth2 = pmix::DistanceRequest {
        origin: Some("eth2"),
        ..Default::default()
    };
    let missing = pmix::DistanceRequest {
        origin: Some("no-such-device"),
        ..Default::default()
    };
    assert_eq!(
        pmix::PmixError::status(&svc.answer(&missing, |_, _| ()).unwrap_err()),
        pmix::Status::ERR_NOT_FOUND
    );
    let mut want = expect("own", &from_own);
    want.extend(expect("nb", &from_own));
    want.extend(expect("origin", &from_eth2));
    want.push("missing NOT-FOUND".into());
    for r in 0..N {
        assert_eq!(dist_lines(&out, r), want, "rank {r}:\n{text}");
    }
}

#[test]
fn under_mpirun_a_relayed_origin_is_not_supported_and_a_relayed_cpuset_is_answered() {
    let dir = TempDir::new("ffi-dist-relay-mpirun");
    let exe = build_ours("dist_relay", &dir);
    let Some(out) = mpirun(&exe, &["eth0"]) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for r in 0..N {
        shared::assert_relay_under_openpmix(&dist_lines(&out, r), &format!("rank {r}:\n{text}"));
    }
}

/// The lines of `query_resolve.c` (without tags), sorted.
fn query_lines(out: &Output) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.split_once("query_resolve rank ")
                .map(|(_, r)| r.to_owned())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn libpmix_ffi_resolves_peers_and_nodes_and_queries_as_libpmix2_does_under_pmix_run() {
    let dir = TempDir::new("ffi-query");
    let ours = build_ours("query_resolve", &dir);
    let out = pmix_run(&ours, &[]);
    let a = query_lines(&out);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(a.len(), 6 * N as usize, "{out:?}");
    for r in 0..N {
        let want = [
            format!("{r}: query_job_size SUCCESS pmix.job.size={N}"),
            format!("{r}: query_job_size_nb SUCCESS pmix.job.size={N}"),
            format!("{r}: query_namespaces SUCCESS pmix.qry.ns=has-mine"),
            format!("{r}: resolve_nodes SUCCESS has-me"),
            format!("{r}: resolve_peers SUCCESS {N} all-ranks"),
            format!("{r}: resolve_peers_unknown NOT-FOUND"),
        ];
        for w in want {
            assert!(a.contains(&w), "{w} missing from {a:#?}");
        }
    }
    let Some(theirs) = build_openpmix("query_resolve", &dir) else {
        return;
    };
    let out_theirs = pmix_run(&theirs, &[]);
    assert_eq!(a, query_lines(&out_theirs), "{out_theirs:?}");
}

#[test]
fn under_mpirun_libpmix_ffi_resolves_and_queries_as_libpmix2_save_two_libpmix2_faults() {
    let dir = TempDir::new("ffi-query-mpirun");
    let ours = build_ours("query_resolve", &dir);
    let Some(theirs) = build_openpmix("query_resolve", &dir) else {
        return;
    };
    let Some(out_ours) = mpirun(&ours, &[]) else {
        return;
    };
    let Some(out_theirs) = mpirun(&theirs, &[]) else {
        return;
    };
    shared::assert_query_parity_under_openpmix(
        &query_lines(&out_ours),
        &query_lines(&out_theirs),
        N,
    );
}

#[test]
fn libpmix_ffi_invites_and_joins_a_group_built_from_events_under_pmix_run() {
    // Rank 0 invites the others; the last declines, the rest accept; the members
    // fence over the group and destruct it (tests/c/group_invite.c).
    let dir = TempDir::new("ffi-invite");
    let ours = build_ours("group_invite", &dir);
    check("group_invite under pmix-run", &pmix_run(&ours, &[]), &|r| {
        format!("group_invite rank {r}: ok")
    });
}

#[test]
fn libpmix2_and_libpmix_ffi_ranks_invite_and_join_each_other_under_pmix_run() {
    // Once with a libpmix_ffi leader and libpmix2 decliner, once the other way round.
    for ours_even in [true, false] {
        if let Some(out) = mixed_job_with("group_invite", ours_even) {
            check(
                &format!("mixed group_invite, ours even: {ours_even}"),
                &out,
                &|r| format!("group_invite rank {r}: ok"),
            );
        }
    }
}

#[test]
fn a_libpmix_ffi_tool_given_the_server_uri_connects_and_relays_distances_under_pmix_run() {
    // tool_relay.c calls PMIx_tool_init with PMIX_SERVER_URI (the URI of its
    // environment) and has no topology: its request goes to pmix-run's server.
    let dir = TempDir::new("ffi-tool");
    let exe = build_ours("tool_relay", &dir);
    let (out, source) = pmix_run_on_xml(&exe, 1, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let svc = pmix::Service::new(source, None).unwrap();
    let cpus = pmix_core::CpuSet::parse_list("0-5").unwrap();
    let mut want = vec!["tool_relay: connected launch-id".to_owned()];
    let req = pmix::DistanceRequest {
        cpuset: Some(&cpus),
        ..Default::default()
    };
    want.extend(answer_lines(&svc, &req, "tool_relay:"));
    want.push("tool_relay: ok".into());
    let got: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(got, want, "{out:?}");
}

#[test]
fn under_mpirun_a_libpmix_ffi_tool_is_refused_and_the_server_survives() {
    // Open MPI 4.1's mpirun has no tool support: it answers the handshake
    // PMIX_ERR_NOT_SUPPORTED (libpmix2's tool then fails with PMIX_ERROR). The job
    // ends normally: mpirun does not crash (as its OpenPMIx server does on a refused
    // tool asking for an identifier, which a launched tool therefore never does).
    // One rank: with several that die without ever being clients, mpirun 4.1's
    // own process tracking crashes, whichever library the tools use.
    let dir = TempDir::new("ffi-tool-mpirun");
    let exe = build_ours("tool_relay", &dir);
    let Some(out) = mpirun_with(&exe, &[], &[], 1) else {
        return;
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("tool_relay: PMIx_tool_init: NOT-SUPPORTED"),
        "{text}"
    );
    assert!(!text.contains("Segmentation fault"), "{text}");
    // mpirun itself exits (0 here: the rank never registered) rather than dying of a
    // signal.
    assert!(out.status.code().is_some(), "{text}");
}

#[test]
fn data_arrays_of_values_infos_and_scalars_go_through_put_and_get_under_pmix_run() {
    // tests/c/arrays.c: arrays of values, of infos (one holding a nested array) and of
    // INT32, put by every rank and checked at every other; linked with libpmix_ffi,
    // then in a job mixed with libpmix2 ranks.
    let dir = TempDir::new("ffi-arrays");
    let ours = build_ours("arrays", &dir);
    check("arrays under pmix-run", &pmix_run(&ours, &[]), &|r| {
        format!("arrays rank {r}: ok")
    });
    if let Some(out) = mixed_job("arrays") {
        check("mixed arrays under pmix-run", &out, &|r| {
            format!("arrays rank {r}: ok")
        });
    }
}

#[test]
fn data_arrays_leak_nothing_and_read_nothing_uninitialised_under_valgrind() {
    let dir = TempDir::new("ffi-arrays-valgrind");
    let ours = build_ours("arrays", &dir);
    let Some(valgrind) = cprog::valgrind_for("arrays.c under valgrind") else {
        return;
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["-n", "2", "--timeout", "100"])
        .arg(valgrind)
        .args([
            "-q",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--error-exitcode=9",
        ])
        .arg(&ours);
    let out = output_within(&mut cmd, LIMIT);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// `tests/c/<name>.c` built both ways, under pmix-run then under mpirun: the job
/// with libpmix_ffi exits 0 under pmix-run, its `NAME rank R: ...` lines pass
/// `under_pmix_run` and `under_mpirun` in turn, and libpmix2's lines are the same under
/// each server (the OpenPMIx half skips with a notice when a peer is absent).
fn same_lines_as_libpmix2(
    name: &str,
    under_pmix_run: &dyn Fn(&[String]),
    under_mpirun: &dyn Fn(&[String]),
) {
    let dir = TempDir::new(&format!("ffi-{name}"));
    let ours = build_ours(name, &dir);
    let out = pmix_run(&ours, &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let a = shared::rank_lines(name, &out.stdout);
    under_pmix_run(&a);
    let Some(theirs) = build_openpmix(name, &dir) else {
        return;
    };
    assert_eq!(a, shared::rank_lines(name, &pmix_run(&theirs, &[]).stdout));
    let (Some(m_ours), Some(m_theirs)) = (mpirun(&ours, &[]), mpirun(&theirs, &[])) else {
        return;
    };
    let a = shared::rank_lines(name, &m_ours.stdout);
    under_mpirun(&a);
    assert_eq!(a, shared::rank_lines(name, &m_theirs.stdout), "{m_ours:?}");
}

/// Asserts `lines` holds each of `want`.
fn holds(lines: &[String], want: &[&str]) {
    for w in want {
        assert!(lines.iter().any(|l| l == w), "{w} missing from {lines:#?}");
    }
}

#[test]
fn log_job_control_and_monitoring_answer_as_with_libpmix2_under_pmix_run_and_mpirun() {
    // tests/c/control.c prints each call's status; both builds must print the same,
    // under pmix-run (log and monitoring not supported, a cleanup registration
    // accepted) and under mpirun (which logs and takes job control).
    same_lines_as_libpmix2(
        "control",
        &|a| {
            assert_eq!(a.len(), 6 * N as usize, "{a:?}");
            holds(a, &["0: job_control cleanup SUCCESS"]);
        },
        &|a| assert_eq!(a.len(), 6 * N as usize, "{a:?}"),
    );
}

#[test]
fn spawn_and_connect_answer_as_with_libpmix2_under_pmix_run_and_mpirun() {
    // tests/c/spawn.c: rank 0 spawns /bin/true, blocking and non-blocking; every rank
    // connects with its job and disconnects. pmix-run and mpirun both spawn.
    let done = |a: &[String]| {
        holds(
            a,
            &[
                "0: spawn SUCCESS named",
                "0: spawn_nb SUCCESS named",
                "1: connect SUCCESS",
                "1: disconnect SUCCESS",
            ],
        );
    };
    same_lines_as_libpmix2("spawn", &done, &done);
}

/// Rank-state tracking under Open MPI 4.1's `mpirun` (an OpenPMIx 4.2 server, which
/// has no FT fence): the 2011 example's exchange runs while nobody fails (no output,
/// every rank finalizes); when rank 3 dies, no survivor reports a result (the
/// exchange's fence fails there, and mpirun ends the job), and nothing hangs.
#[test]
fn under_mpirun_rank_state_exchanges_run_while_nobody_fails_and_a_death_ends_the_job() {
    let dir = TempDir::new("run-ffi-ft-mpirun");
    let src = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../pmix-ffi/examples"));
    let exe = cprog::build_ours(&src, "ft_validate", &dir.0);
    let Some(out) = mpirun(&exe, &["1", "99"]) else {
        return;
    };
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "", "{text}");
    let Some(out) = mpirun(&exe, &["1", "3"]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.ends_with(":3")),
        "a survivor reported a result under mpirun:\n{stdout}"
    );
}

#[test]
fn an_invitee_joining_from_its_invitation_handler_completes_and_fences_over_the_group_under_pmix_run()
 {
    // group_join_nb.c: PMIx_Group_join_nb from the PMIX_GROUP_INVITED handler (the
    // progress thread), then a fence over the group that may reach the server before
    // the leader's PMIX_GROUP_CONSTRUCT_COMPLETE (held until the group is made).
    let dir = TempDir::new("ffi-join-nb");
    let ours = build_ours("group_join_nb", &dir);
    check(
        "group_join_nb under pmix-run",
        &pmix_run(&ours, &[]),
        &|r| format!("group_join_nb rank {r}: ok"),
    );
    // Without a callback (asyncgroup's exact call): fire and forget, not blocking.
    check(
        "group_join_nb without a callback under pmix-run",
        &pmix_run(&ours, &["nocb"]),
        &|r| format!("group_join_nb rank {r}: ok"),
    );
    if let Some(theirs) = build_openpmix("group_join_nb", &dir) {
        for args in [&[][..], &["nocb"][..]] {
            check(
                &format!("group_join_nb {args:?} (libpmix2) under pmix-run"),
                &pmix_run(&theirs, args),
                &|r| format!("group_join_nb rank {r}: ok"),
            );
        }
    }
    for ours_even in [true, false] {
        if let Some(out) = mixed_job_with("group_join_nb", ours_even) {
            check(
                &format!("mixed group_join_nb, ours even: {ours_even}"),
                &out,
                &|r| format!("group_join_nb rank {r}: ok"),
            );
        }
    }
}

#[test]
fn every_nb_call_of_the_c_abi_made_from_an_event_handler_returns_at_once_and_calls_back_once() {
    // nb_in_handler.c: the 15 _nb calls, PMIx_Notify_event and the event handler
    // (de)registrations with callbacks, each from a handler on the progress thread.
    let dir = TempDir::new("ffi-nb-in-handler");
    let exe = build_ours("nb_in_handler", &dir);
    let out = pmix_run(&exe, &[]);
    check("nb_in_handler under pmix-run", &out, &|r| {
        format!("nb_in_handler rank {r}: ok")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    for call in [
        "PMIx_Get_nb",
        "PMIx_Fence_nb",
        "PMIx_Query_info_nb",
        "PMIx_Compute_distances_nb",
        "PMIx_Log_nb",
        "PMIx_Job_control_nb",
        "PMIx_Process_monitor_nb",
        "PMIx_Spawn_nb",
        "PMIx_Connect_nb",
        "PMIx_Disconnect_nb",
        "PMIx_Group_construct_nb",
        "PMIx_Group_invite_nb",
        "PMIx_Group_join_nb",
        "PMIx_Group_leave_nb",
        "PMIx_Group_destruct_nb",
        "PMIx_Notify_event",
        "PMIx_Register_event_handler",
        "PMIx_Deregister_event_handler",
    ] {
        assert!(
            stdout.contains(&format!(" {call} rc=")),
            "{call} was not made:\n{stdout}"
        );
    }
    // The collectives and the group calls were accepted and completed.
    for call in [
        "PMIx_Fence_nb",
        "PMIx_Group_construct_nb",
        "PMIx_Group_invite_nb",
        "PMIx_Group_join_nb",
        "PMIx_Group_leave_nb",
        "PMIx_Group_destruct_nb",
    ] {
        assert!(
            stdout
                .lines()
                .filter(|l| l.contains(&format!(" {call} rc=")))
                .all(|l| l.ends_with("rc=SUCCESS cb=SUCCESS")),
            "{call}:\n{stdout}"
        );
    }
}

#[test]
fn pmix_run_serves_log_heartbeat_monitors_job_declarations_and_namespace_keys_to_both_libraries() {
    // OpenPMIx's own client, log and jctrl examples do this; under pmix-run each
    // call succeeds for either library and rank 0's log line reaches pmix-run's
    // stderr once.
    let dir = TempDir::new("ffi-logmon");
    let ours = build_ours("logmon", &dir);
    let theirs = build_openpmix("logmon", &dir);
    for (lib, exe) in [("libpmix_ffi", Some(ours)), ("libpmix2", theirs)] {
        let Some(exe) = exe else { continue };
        let out = pmix_run(&exe, &["nosyslog"]);
        check(&format!("logmon ({lib}) under pmix-run"), &out, &|r| {
            format!("logmon rank {r}: ok")
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.matches("logmon: a line for stderr\n").count(),
            1,
            "{lib}: {stderr}"
        );
    }
}

/// What `model.c` prints for rank `r`, as libpmix2 prints it under pmix-run and
/// under mpirun (OpenPMIx's client raises the declaration at init and hands a kept
/// event to the first handler registered for its code alone).
fn model_lines(r: u32) -> [String; 2] {
    [
        format!("model rank {r}: declared TEST PMIX"),
        format!("model rank {r}: default 0 second 0 declared 1"),
    ]
}

#[test]
fn a_model_declared_at_init_reaches_the_first_handler_registered_for_it_after_init() {
    let dir = TempDir::new("ffi-model");
    let exe = build_ours("model", &dir);
    let mut runs = vec![("pmix-run (ours)", pmix_run(&exe, &[]), false)];
    if let Some(theirs) = build_openpmix("model", &dir) {
        runs.push(("pmix-run (libpmix2)", pmix_run(&theirs, &[]), false));
    }
    if let Some(out) = mpirun(&exe, &[]) {
        runs.push(("mpirun (ours)", out, true));
    }
    for (what, out, under_mpirun) in &runs {
        for k in 0..2 {
            let ok = |r: u32| model_lines(r)[k].clone();
            if *under_mpirun {
                check_mpirun(what, out, &ok);
            } else {
                check(what, out, &ok);
            }
        }
    }
}
