//! Rank-state tracking between real processes (issue 14, docs/design.md §5, §8): 8 ranks under
//! `pmix-run --keep-going`, some killed (SIGKILL, raised by themselves at chosen
//! points), through the C API (`tests/c/ft_state.c` on `pmix_ft.h`, linked with
//! libpmix_ffi) and the Rust API (`examples/ft_state.rs` on `pmix::ft`), held to the
//! same expectation; and the 2011 thread's example (`pmix-ffi/examples/ft_validate.c`)
//! in its three variants, printing exactly `3 5` at every survivor.
//!
//! Every run is bounded ([`LIMIT`]): a hang fails the test after killing the
//! processes it started (pmix-testkit's `output_within`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use pmix_testkit::TempDir;
use pmix_testkit::child::output_within;
use pmix_testkit::cprog;

mod shared;

const LIMIT: Duration = Duration::from_secs(90);

fn pmix_run(n: u32, prog: &Path, args: &[&str]) -> Output {
    output_within(
        Command::new(env!("CARGO_BIN_EXE_pmix-run"))
            .env_remove("LD_LIBRARY_PATH")
            .args(["-n", &n.to_string(), "--keep-going", "--timeout", "80"])
            .arg(prog)
            .args(args),
        LIMIT,
    )
}

/// The Rust example, as cargo builds it beside this test (`target/<profile>/examples`):
/// a whole `cargo test` builds it; a test run alone (`--test run_ft`) builds it here
/// when it is missing or older than its source.
fn rust_example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let p = profile_dir.join("examples").join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    let modified = |f: &Path| std::fs::metadata(f).and_then(|m| m.modified()).ok();
    if modified(&p) < modified(&src) {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "-p", "pmix-tools", "--example", name]);
        if profile_dir.ends_with("release") {
            cargo.arg("--release");
        }
        let out = output_within(&mut cargo, Duration::from_secs(600));
        assert!(out.status.success(), "{out:?}");
    }
    assert!(p.exists(), "{} is missing", p.display());
    p
}

/// The lines `R: TEXT` of `out`'s stdout, per rank.
fn by_rank(out: &Output) -> BTreeMap<u32, Vec<String>> {
    let mut m: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((r, text)) = l.split_once(": ")
            && let Ok(r) = r.parse()
        {
            m.entry(r).or_default().push(text.to_owned());
        }
    }
    m
}

/// `what` and `out`'s output, for a failed assertion; fails at once when a rank
/// printed a FAIL line.
fn no_fail(what: &str, out: &Output) -> String {
    let context = format!(
        "{what}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("FAIL"),
        "{context}"
    );
    context
}

/// What every survivor of `ft_state` (C or Rust) prints, with `round4` as the
/// count of round 4 (2 or 3: rank 6 dies around it; the same at every survivor).
fn expected(round4: &str) -> Vec<String> {
    [
        "round 1: 0 failed, 0 new",
        // Detection: the local view shows the killed ranks FAILED|NEW; G is empty.
        "detected local: 3:FAILED|NEW 5:FAILED|NEW",
        "global before validate: 0",
        // A non-empty array shorter than the answer: the size error, with the size.
        "incount 1: size error, outcount 2",
        "incount 0: outcount 2",
        // validate_global: the same G and count everywhere, NEW.
        "round 2: 2 failed, 2 new",
        "global: 3:NULL|NEW 5:NULL|NEW",
        // L = G; recognized ranks are NULL in L too (OLD there: L had them).
        "local: 3:NULL|OLD 5:NULL|OLD",
        "local FAILED after validate_global: 0",
        // A second validate turns NEW into OLD.
        "round 3: 2 failed, 0 new",
        "global:",
        "global: 3:NULL|OLD 5:NULL|OLD",
        // Agreement: the uniform error before acknowledging, the AND after.
        "agree unacked: proc failed, flag 0x6",
        "acked 2 of 2",
        "agree acked: SUCCESS, flag 0x6",
        "shrink: size 6",
        "revoked",
        // Rank 6 dies during round 4: counted there or in round 5, nobody hangs.
        round4,
        "round 5: 3 failed",
        // 6 is NEW in G when round 5 added it.
        if round4.contains('3') {
            "final global: 3:NULL|OLD 5:NULL|OLD 6:NULL|OLD"
        } else {
            "final global: 3:NULL|OLD 5:NULL|OLD 6:NULL|NEW"
        },
        // The shrink's PMIx group: 6 is its rank 4.
        "shrunk group: size 6",
        "shrunk round: 1 failed, 1 new",
        "shrunk global: 4:NULL|NEW",
        // In an event handler (the progress thread): local calls answer, a
        // collective would block.
        "in a handler: validate_local SUCCESS, get_num_state SUCCESS, validate_global WOULD-BLOCK",
        // Rank 7 left the shrunk group: not a failure.
        "after the leave: 1 failed, 0 new",
        "shrunk global: 4:NULL|OLD",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Checks one `ft_state` run: every survivor printed [`expected`] (the same round-4
/// count everywhere), the same new ranking, and the killed ranks stopped where
/// they were killed.
fn check_ft_state(what: &str, out: &Output) {
    let all = by_rank(out);
    let context = no_fail(what, out);
    let survivors = [0u32, 1, 2, 4];
    // The new ranking: survivors of the shrink (6 was alive) in old rank order.
    let new_rank = [(0, 0), (1, 1), (2, 2), (4, 3)];
    let mut round4 = None;
    for r in survivors {
        let mut lines = all.get(&r).cloned().unwrap_or_default();
        let shrink = lines
            .iter()
            .position(|l| l.starts_with("shrink: new rank "))
            .map(|i| lines.remove(i));
        let want = new_rank.iter().find(|(o, _)| *o == r).unwrap().1;
        assert_eq!(
            shrink,
            Some(format!("shrink: new rank {want}")),
            "rank {r}: {context}"
        );
        let r4 = lines
            .iter()
            .find(|l| l.starts_with("round 4: "))
            .cloned()
            .unwrap_or_default();
        assert!(
            r4 == "round 4: 2 failed" || r4 == "round 4: 3 failed",
            "rank {r}: {context}"
        );
        assert_eq!(
            round4.get_or_insert_with(|| r4.clone()),
            &r4,
            "round 4 differs: {context}"
        );
        assert_eq!(lines, expected(&r4), "rank {r}: {context}");
    }
    for r in [3, 5] {
        assert_eq!(
            all.get(&r).cloned().unwrap_or_default(),
            ["round 1: 0 failed, 0 new"],
            "rank {r}: {context}"
        );
    }
    // Rank 7 left the shrunk group after its exchange, and finalized.
    let mut seven = expected(&round4.clone().unwrap_or_default());
    seven.truncate(seven.len() - 3);
    let mut got = all.get(&7).cloned().unwrap_or_default();
    got.retain(|l| !l.starts_with("shrink: new rank "));
    assert_eq!(got, seven, "rank 7: {context}");
    // Rank 6 got as far as the revoke, never to round 5.
    let six = all.get(&6).cloned().unwrap_or_default();
    assert!(six.iter().any(|l| l == "revoked"), "{context}");
    assert!(!six.iter().any(|l| l.starts_with("round 5")), "{context}");
}

#[test]
fn c_ranks_killed_at_chosen_points_leave_every_survivor_with_the_same_views_agreement_and_shrink() {
    let dir = TempDir::new("run-ft-c");
    let c_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let exe = cprog::build_ours(&c_dir, "ft_state", &dir.0);
    let out = pmix_run(8, &exe, &[]);
    check_ft_state("ft_state.c under pmix-run -n 8", &out);
}

#[test]
fn rust_ranks_killed_at_chosen_points_leave_every_survivor_with_the_same_views_agreement_and_shrink()
 {
    let out = pmix_run(8, &rust_example("ft_state"), &[]);
    check_ft_state("examples/ft_state.rs under pmix-run -n 8", &out);
}

#[test]
fn the_2011_example_with_ranks_3_and_5_killed_prints_3_5_at_every_survivor_in_each_variant() {
    let dir = TempDir::new("run-ft-example");
    let src = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../pmix-ffi/examples"));
    let exe = cprog::build_ours(&src, "ft_validate", &dir.0);
    for variant in ["1", "2", "3"] {
        let out = pmix_run(8, &exe, &[variant]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout,
            "3 5\n".repeat(6),
            "variant {variant}; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Other victims: the survivors print them.
    let out = pmix_run(8, &exe, &["1", "0,6"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0 6\n".repeat(6));
}

#[test]
fn without_failures_the_2011_example_prints_nothing_and_every_rank_finalizes() {
    let dir = TempDir::new("run-ft-none");
    let src = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../pmix-ffi/examples"));
    let exe = cprog::build_ours(&src, "ft_validate", &dir.0);
    let out = pmix_run(4, &exe, &["2", "99"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// Checks one `ft_concurrent` run (`variant`, `seed`): every survivor printed one
/// line per round, the same lines as every other survivor, and the last round
/// counted both victims. Returns the number of rounds checked.
fn check_concurrent(what: &str, out: &Output) -> usize {
    const ROUNDS: usize = 40;
    let all = by_rank(out);
    let context = no_fail(what, out);
    let rounds = |r: u32| -> Vec<String> {
        all.get(&r)
            .map(|l| {
                l.iter()
                    .filter(|l| l.starts_with("round "))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let first = rounds(0);
    assert_eq!(first.len(), ROUNDS, "rank 0: {context}");
    for r in [1, 3, 4, 5, 7] {
        let got = rounds(r);
        for (k, (a, b)) in first.iter().zip(&got).enumerate() {
            assert_eq!(
                a,
                b,
                "round {}: rank 0 and rank {r} disagree: {context}",
                k + 1
            );
        }
        assert_eq!(got.len(), ROUNDS, "rank {r}: {context}");
    }
    assert_eq!(
        first.last().map(String::as_str),
        Some(format!("round {ROUNDS}: G=2,6 n=2").as_str()),
        "{context}"
    );
    ROUNDS
}

#[test]
fn validate_global_agrees_at_every_survivor_in_200_runs_while_handlers_or_threads_make_local_calls()
{
    let dir = TempDir::new("run-ft-concurrent");
    let c_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let exe = cprog::build_ours(&c_dir, "ft_concurrent", &dir.0);
    let (mut runs, mut rounds) = (0, 0);
    for seed in 0..200u32 {
        let variant = if seed % 2 == 0 { "handler" } else { "thread" };
        let out = pmix_run(8, &exe, &[variant, &seed.to_string()]);
        let what = format!("ft_concurrent {variant} {seed} under pmix-run -n 8 --keep-going");
        rounds += check_concurrent(&what, &out);
        runs += 1;
    }
    println!(
        "ft_concurrent: {runs} runs (handler and thread variants), {rounds} rounds, \
         every round the same at all 6 survivors"
    );
}

#[test]
fn every_pmix_ft_call_keeps_its_calling_rules_before_init_on_bad_arguments_unknown_and_left_groups_in_handlers_and_after_finalize()
 {
    let dir = TempDir::new("run-ft-rules");
    let c_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let exe = cprog::build_ours(&c_dir, "ft_rules", &dir.0);
    let out = pmix_run(4, &exe, &[]);
    let context = no_fail("ft_rules under pmix-run -n 4", &out);
    assert!(out.status.success(), "{context}");
    let all = by_rank(&out);
    let ok = |r: u32| -> Vec<String> {
        all.get(&r)
            .map(|l| {
                l.iter()
                    .filter(|l| l.starts_with("ok: "))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let common = [
        "ok: before init: every call PMIX_ERR_INIT",
        "ok: NULL, empty, over-long group: every call PMIX_ERR_BAD_PARAM",
        "ok: NULL outputs, bad types and counts: PMIX_ERR_BAD_PARAM; optional NULLs accepted",
        "ok: a group never known: every call PMIX_ERR_NOT_FOUND",
    ];
    for r in 0..3 {
        let mut want: Vec<&str> = common.to_vec();
        want.extend([
            "ok: the others' exchange completes without the leaver, 0 failed",
            "ok: in a handler: local calls PMIX_SUCCESS, collective calls PMIX_ERR_WOULD_BLOCK",
            "ok: after finalize: every call PMIX_ERR_INIT",
        ]);
        assert_eq!(ok(r), want, "rank {r}: {context}");
    }
    let mut want: Vec<&str> = common.to_vec();
    want.extend([
        "ok: a group left: every call PMIX_ERR_NOT_A_MEMBER, at once",
        "ok: after finalize: every call PMIX_ERR_INIT",
    ]);
    assert_eq!(ok(3), want, "rank 3: {context}");
}

#[test]
fn ft_state_across_mpiruns_two_orteds_on_our_library_gives_every_survivor_the_same_views() {
    // tests/c/ft_state.c on 8 ranks, 4 per fake host, under `mpirun
    // --enable-recovery` with mpirun and both orteds on our library: the rank-state
    // rounds ride the hosts' fence, the shrink's group spans both hosts, the revoke
    // and rank 7's leave reach the other host through the daemons' events. Every
    // survivor prints what it prints under pmix-run. mpirun stays up after a loss
    // with `--enable-recovery` (with OpenPMIx too), so once the survivors printed
    // their last line (or 60 s passed) it and the orteds are ended by pid.
    if !Command::new("mpirun")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
    {
        pmix_testkit::peer_absent(
            "ft_state on two hosts: mpirun not found",
            "apt-get install openmpi-bin",
        );
        return;
    }
    let dir = TempDir::new("run-ft-two-hosts");
    let c_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let exe = cprog::build_ours(&c_dir, "ft_state", &dir.0);
    let dropin = shared::dropin_dir(&dir.0);
    let agent = shared::write_fake_host_agent(&dir.0);
    let driver = r#"set -u
cd "$1"; shift
"$@" > out 2> err < /dev/null &
m=$!
i=0; while [ "$(grep -c 'shrunk global: 4:NULL|OLD' out)" -lt 4 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
sleep 1
kill -TERM $m 2>/dev/null; sleep 1; kill -KILL $m 2>/dev/null
for p in $(cat launchers.pids 2>/dev/null); do kill -KILL $p 2>/dev/null; done
wait $m 2>/dev/null
cat out; cat err >&2
"#;
    let mut cmd = Command::new("sh");
    cmd.env("LD_LIBRARY_PATH", &dropin);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("PMIX_") || k.starts_with("OMPI_") {
            cmd.env_remove(k);
        }
    }
    cmd.args(["-c", driver, "sh"])
        .arg(&dir.0)
        .arg("mpirun")
        .args(shared::fake_hosts_mpirun_args(&agent))
        .args(["--enable-recovery", "-np", "8"])
        .arg(&exe);
    let out = output_within(&mut cmd, LIMIT);
    check_ft_state("ft_state.c under mpirun + 2 orteds on our library", &out);
}
