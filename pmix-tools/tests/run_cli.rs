//! `pmix-run` as a process, with programs that are no PMIx clients (`sh`): usage
//! errors, the job's exit status, output tagging, binding, and SIGTERM forwarded to
//! the ranks. Every wait is bounded; only the pids these tests start are signalled.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use pmix_testkit::child::output_within;

const LIMIT: Duration = Duration::from_secs(120);

fn pmix_run(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.args(args);
    output_within(&mut cmd, LIMIT)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn usage_errors_exit_64_with_the_synopsis() {
    for bad in [
        &[][..],
        &["true"],
        &["-n", "0", "true"],
        &["-n", "2", "--bind", "socket", "true"],
        &["-n", "2", "--timeout", "x", "true"],
        &["-n", "2"],
    ] {
        let out = pmix_run(bad);
        assert_eq!(out.status.code(), Some(64), "{bad:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("pmix-run: "), "{bad:?}: {err}");
        assert!(err.contains("\nusage: pmix-run -n N"), "{bad:?}: {err}");
    }
    let out = pmix_run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("--keep-going"));
}

#[test]
fn server_limits_are_set_by_name_and_a_wrong_name_is_a_usage_error_listing_them() {
    for bad in ["nonsense=1", "max_half_open", "max_frame=5000000000"] {
        let out = pmix_run(&["-n", "1", "--server-limit", bad, "true"]);
        assert_eq!(out.status.code(), Some(64), "{bad}");
        let err = text(&out.stderr);
        assert!(err.starts_with("pmix-run: "), "{bad}: {err}");
    }
    let err = text(&pmix_run(&["-n", "1", "--server-limit", "nonsense=1", "true"]).stderr);
    assert!(
        err.contains("max_half_open") && err.contains("max_unfinished_bytes"),
        "{err}"
    );
    let out = pmix_run(&[
        "-n",
        "2",
        "--server-limit",
        "max_half_open=4",
        "--server-limit",
        "max_published_per_proc=8",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn the_job_exits_with_its_first_failure_a_signal_as_128_plus() {
    let out = pmix_run(&["-n", "2", "sh", "-c", "exit 0"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = pmix_run(&[
        "-n",
        "3",
        "sh",
        "-c",
        r#"[ "$PMIX_RANK" = 2 ] && exit 3; exit 0"#,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("pmix-run: rank 2 exited with status 3\n"));
    let out = pmix_run(&["-n", "1", "sh", "-c", "kill -SEGV $$"]);
    assert_eq!(out.status.code(), Some(128 + 11), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("pmix-run: rank 0 was killed by signal 11 (SIGSEGV)\n"));
}

#[test]
fn a_failure_ends_the_other_ranks_after_the_grace_unless_keep_going() {
    let script = r#"[ "$PMIX_RANK" = 0 ] && exit 4; sleep 2; echo survived"#;
    let out = pmix_run(&["-n", "2", "--grace", "0.2", "sh", "-c", script]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("survived"));
    assert!(
        text(&out.stderr).contains("pmix-run: killing rank(s) 1: "),
        "{}",
        text(&out.stderr)
    );
    let out = pmix_run(&[
        "-n",
        "2",
        "--grace",
        "0.2",
        "--keep-going",
        "sh",
        "-c",
        script,
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "survived\n");
}

#[test]
fn the_timeout_kills_the_job_with_124_and_what_its_ranks_started() {
    // Each rank starts a sleep of its own (in its process group) and prints its pid.
    let out = pmix_run(&[
        "-n",
        "2",
        "--timeout",
        "0.5",
        "sh",
        "-c",
        "sleep 60 & echo $!; wait",
    ]);
    assert_eq!(out.status.code(), Some(124), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("ran past --timeout 0.5 s"));
    let pids: Vec<u32> = text(&out.stdout)
        .lines()
        .map(|l| l.trim().parse().expect("a pid"))
        .collect();
    assert_eq!(pids.len(), 2);
    let deadline = std::time::Instant::now() + LIMIT;
    while pids.iter().any(|&p| running(p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "{pids:?} outlived the job"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_missing_program_is_127() {
    let out = pmix_run(&["-n", "2", "/nonexistent/prog"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out.stderr).starts_with("pmix-run: cannot start rank 0 (/nonexistent/prog): "));
}

#[test]
fn tag_output_prefixes_every_line_with_the_rank_and_the_rendezvous_is_set() {
    let out = pmix_run(&[
        "-n",
        "3",
        "--tag-output",
        "sh",
        "-c",
        r#"echo "rank $PMIX_RANK ns=${PMIX_NAMESPACE:+set} uri=${PMIX_SERVER_URI41:+set} flux=${FLUX_JOB_ID:+set}"; echo two"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for r in 0..3 {
        assert!(
            stdout.contains(&format!("[{r}] rank {r} ns=set uri=set flux=set\n")),
            "{stdout}"
        );
        assert!(stdout.contains(&format!("[{r}] two\n")), "{stdout}");
    }
    assert_eq!(stdout.lines().count(), 6);
}

#[test]
fn bind_core_gives_each_rank_one_pu() {
    let out = pmix_run(&[
        "-n",
        "2",
        "--tag-output",
        "--bind",
        "core",
        "sh",
        "-c",
        "grep Cpus_allowed_list /proc/self/status",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    for l in stdout.lines() {
        let list = l.rsplit('\t').next().unwrap();
        assert!(list.parse::<u32>().is_ok(), "not one PU: {l}");
    }
}

/// Sends `sig` (named `name`) to a pmix-run whose two ranks trap it, print `got NAME`
/// and exit 5; every rank must have got it, and pmix-run exits 5.
fn signal_reaches_every_rank(sig: rustix::process::Signal, name: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmix-run"))
        .args([
            "-n",
            "2",
            "--tag-output",
            "--grace",
            "60",
            "sh",
            "-c",
            &format!(
                "trap 'echo got {name}; exit 5' {name}; echo ready; while :; do sleep 0.1; done"
            ),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = rustix::process::Pid::from_child(&child);
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    while seen
        .iter()
        .filter(|l: &&String| l.ends_with("ready"))
        .count()
        < 2
    {
        match rx.recv_timeout(LIMIT) {
            Ok(l) => seen.push(l),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the ranks never said ready ({e}): {seen:?}");
            }
        }
    }
    // The pid of the child this test started and has not reaped.
    rustix::process::kill_process(pid, sig).unwrap();
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pmix-run did not end after SIG{name}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    assert_eq!(status.code(), Some(5), "{seen:?}");
    for r in 0..2 {
        assert!(seen.contains(&format!("[{r}] got {name}")), "{seen:?}");
    }
}

#[test]
fn sigterm_to_pmix_run_reaches_every_rank() {
    signal_reaches_every_rank(rustix::process::Signal::TERM, "TERM");
}

#[test]
fn sigint_to_pmix_run_reaches_every_rank() {
    signal_reaches_every_rank(rustix::process::Signal::INT, "INT");
}

/// Whether process `pid` still runs (a zombie, dead but not yet reaped by whoever
/// inherited it, does not count).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

#[test]
fn no_rank_outlives_a_pmix_run_killed_without_warning() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmix-run"))
        .args(["-n", "2", "sh", "-c", "echo $$; exec sleep 120"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut pids = Vec::new();
    while pids.len() < 2 {
        match rx.recv_timeout(LIMIT) {
            Ok(l) => pids.push(l.trim().parse::<u32>().expect("a pid")),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the ranks never printed their pids ({e})");
            }
        }
    }
    // SIGKILL to the pmix-run this test started: it cannot forward anything.
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + LIMIT;
    while pids.iter().any(|&p| running(p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "ranks {pids:?} outlived pmix-run"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.join().unwrap();
}

#[test]
fn each_rank_inherits_its_socket_to_the_server_named_by_pmix_rs_server_fd() {
    // FD:PID, the descriptor open in the rank (a socket), the pid pmix-run's.
    let script = r#"fd=${PMIX_RS_SERVER_FD%%:*}; pid=${PMIX_RS_SERVER_FD##*:}
[ "$pid" = "$PPID" ] || { echo "pid $pid is not pmix-run's ($PPID)"; exit 1; }
readlink /proc/self/fd/$fd"#;
    let out = pmix_run(&["-n", "2", "sh", "-c", script]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l.starts_with("socket:[")), "{lines:?}");
    assert_ne!(lines[0], lines[1], "one socket per rank");
}
