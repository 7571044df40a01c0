//! Dynamic processes under `pmix-run`: `PMIx_Spawn` of new jobs, connect /
//! disconnect across namespaces, a spawned job's end told to its parent, spawns that
//! cannot start, and no process left behind when pmix-run is killed during a spawn.
//!
//! - `tests/c/dynamic.c` (a parent job of 2 spawning 2 children that fence, put, get,
//!   connect with the parents and disconnect), linked with libpmix2 and with
//!   libpmix_ffi, under `pmix-run -n 2`.
//! - Unmodified Open MPI 4.1.4 programs (`tests/mpi/mpi_spawn.c` built with Debian's
//!   `mpicc`: `MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`, `MPI_Comm_accept` /
//!   `MPI_Comm_connect` through a published name, `MPI_Comm_disconnect`; and
//!   `tests/mpi/mpi4py_spawn.py`) with the ranks on libpmix2 and on our
//!   `libpmix.so.2` (`pmix-dropin`), under `pmix-run -n 2` and, the same programs,
//!   under Debian's `mpirun -n 2`.
//!
//! Without OpenPMIx, Open MPI or mpi4py the test concerned prints a NOTICE and passes,
//! except under `CI=true`. Every job is bounded (`--timeout`, and a wait limit),
//! loopback and shared memory only (`btl self,vader,tcp` with TCP on `lo`: Open MPI
//! reaches the processes of another job over TCP), stdin `/dev/null`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pmix_testkit::child::output_within;
use pmix_testkit::{TempDir, cprog};

mod shared;

use shared::{clean_command as clean, show};

const LIMIT: Duration = Duration::from_secs(120);

fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

fn mpi_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mpi"))
}

/// `pmix-run -n 2 ARGV` with `env` added.
fn pmix_run(argv: &[&std::ffi::OsStr], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut cmd = clean(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env("OMPI_MCA_btl", "self,vader,tcp")
        .env("OMPI_MCA_btl_tcp_if_include", "lo")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .envs(env.iter().copied())
        .args(["-n", "2", "--timeout", "100"])
        .args(argv);
    output_within(&mut cmd, LIMIT)
}

/// `mpirun -n 2 ARGV`, with `LD_LIBRARY_PATH=dropin` for the ranks when given.
fn mpirun(argv: &[&std::ffi::OsStr], dropin: Option<&Path>) -> Output {
    let mut cmd = clean("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe"])
        .args(["--mca", "btl", "self,vader,tcp"])
        .args(["--mca", "btl_tcp_if_include", "lo"]);
    if let Some(d) = dropin {
        cmd.arg("-x")
            .arg(format!("LD_LIBRARY_PATH={}", d.display()));
    }
    cmd.args(["-n", "2"]).args(argv);
    output_within(&mut cmd, LIMIT)
}

/// The job exited 0 and printed every line of `want` (anywhere in its output:
/// mpirun's forwarding has been seen to join two processes' lines into one).
fn check(what: &str, out: &Output, want: &[&str]) {
    assert_eq!(out.status.code(), Some(0), "{what}:\n{}", show(out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for w in want {
        assert!(stdout.contains(w), "{what}: no line {w:?}:\n{}", show(out));
    }
}

/// `dynamic.c` linked with each library: `(label, exe)`; libpmix2's only with OpenPMIx.
fn dynamic_builds(dir: &TempDir) -> Vec<(&'static str, PathBuf)> {
    let mut v = vec![(
        "libpmix_ffi",
        cprog::build_ours(&c_dir(), "dynamic", &dir.0),
    )];
    if let Some(e) = cprog::build_openpmix(&c_dir(), "dynamic", &dir.0, "spawn with libpmix2") {
        v.push(("libpmix2", e));
    }
    v
}

#[test]
fn a_spawned_job_gets_its_own_namespace_job_information_connect_and_its_end_reaches_the_parent() {
    let dir = TempDir::new("spawn-dynamic");
    for (lib, exe) in dynamic_builds(&dir) {
        let out = pmix_run(&[exe.as_os_str(), "ok".as_ref()], &[]);
        check(
            &format!("dynamic ok, {lib}"),
            &out,
            &[
                "dynamic child 0: parent OK peers OK connect OK disconnect OK",
                "dynamic child 1: parent OK peers OK connect OK disconnect OK",
                "dynamic parent 0: spawned NSPACE-OK size 2 local-rank 1 connect OK value 100 \
                 disconnect OK job-end SUCCESS",
            ],
        );
    }
}

#[test]
fn a_spawn_whose_program_is_missing_or_dies_before_init_fails_in_the_parent_without_a_hang() {
    let dir = TempDir::new("spawn-fails");
    for (lib, exe) in dynamic_builds(&dir) {
        for mode in ["missing", "dies"] {
            let t0 = Instant::now();
            let out = pmix_run(&[exe.as_os_str(), mode.as_ref()], &[]);
            check(
                &format!("dynamic {mode}, {lib}"),
                &out,
                &["dynamic parent 0: spawn FAILED"],
            );
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "dynamic {mode}, {lib}: took {:?}",
                t0.elapsed()
            );
        }
    }
}

/// The parent pid of every process, from `/proc/*/stat`.
fn parents() -> Vec<(u32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Every descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let all = parents();
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for &(c, _) in all.iter().filter(|(_, pp)| *pp == p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// Whether `pid` still runs (a zombie has ended).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let state = s.rsplit_once(')')?.1.split_whitespace().next()?.to_owned();
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

#[test]
fn killing_pmix_run_during_a_spawn_leaves_no_process_behind() {
    let dir = TempDir::new("spawn-kill");
    let exe = cprog::build_ours(&c_dir(), "dynamic", &dir.0);
    let pidfile = dir.0.join("child");
    let mut cmd = clean(env!("CARGO_BIN_EXE_pmix-run"));
    // A killed server leaves its rendezvous files: in this test's directory.
    cmd.env("TMPDIR", &dir.0)
        .env("DYNAMIC_PIDFILE", &pidfile)
        .args(["-n", "2", "--timeout", "100"])
        .arg(&exe)
        .arg("slow")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut launcher = cmd.spawn().expect("start pmix-run");
    let pid = launcher.id();
    // Both children started (they sleep before PMIx_Init: the spawn is in flight).
    let until = Instant::now() + Duration::from_secs(30);
    let files = [0, 1].map(|r| PathBuf::from(format!("{}.{r}", pidfile.display())));
    while !files.iter().all(|f| f.exists()) {
        if Instant::now() > until {
            let _ = launcher.kill();
            let _ = launcher.wait();
            panic!("the spawned children never started");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let family = descendants(pid);
    let children: Vec<u32> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok()?.trim().parse().ok())
        .collect();
    assert_eq!(children.len(), 2);
    for c in &children {
        assert!(
            family.contains(c),
            "child {c} is not pmix-run's: {family:?}"
        );
    }
    // Parent rank 0 (in PMIx_Spawn) and the 2 children (rank 1 has ended).
    assert!(family.len() >= 3, "{family:?}");
    launcher.kill().expect("SIGKILL pmix-run");
    let _ = launcher.wait();
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = family.iter().copied().filter(|&p| running(p)).collect();
        if left.is_empty() {
            break;
        }
        if Instant::now() > until {
            for p in &left {
                // Ours to end: we listed them as pmix-run's descendants.
                let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
            }
            panic!("still running 10 s after pmix-run was killed: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `mpi_spawn.c` built with `mpicc` and the dropin directory; `None` without Open MPI.
fn mpi_build(dir: &TempDir) -> Option<(PathBuf, PathBuf)> {
    if !shared::open_mpi_present("MPI spawn") {
        return None;
    }
    let exe = dir.0.join("mpi_spawn");
    let out = cprog::output(
        Command::new("mpicc")
            .args(cprog::cflags())
            .arg(mpi_dir().join("mpi_spawn.c"))
            .arg("-o")
            .arg(&exe),
    );
    cprog::assert_ok("mpicc mpi_spawn.c", &out);
    Some((exe, shared::dropin_dir(&dir.0)))
}

/// What each mode of `mpi_spawn.c` prints when it works (2 parents).
fn mpi_spawn_lines(mode: &str) -> Vec<&'static str> {
    match mode {
        "spawn" => vec![
            "mpi_spawn parent 0: spawn 2+2 ok",
            "mpi_spawn parent 1: spawn 2+2 ok",
            "mpi_spawn child 0: child 2+2 ok",
            "mpi_spawn child 1: child 2+2 ok",
        ],
        "multiple" => vec![
            "mpi_spawn parent 0: multiple 2+2 ok",
            "mpi_spawn parent 1: multiple 2+2 ok",
            "mpi_spawn child 0: A 2+2 ok",
            "mpi_spawn child 1: B 2+2 ok",
        ],
        _ => vec![
            "mpi_spawn parent 0: connect 42 ok",
            "mpi_spawn parent 1: connect 42 ok",
            "mpi_spawn child 0: accept 42 ok",
        ],
    }
}

#[test]
fn mpi_comm_spawn_spawn_multiple_and_connect_accept_run_under_pmix_run_on_either_library() {
    let dir = TempDir::new("spawn-mpi-pmix-run");
    let Some((exe, dropin)) = mpi_build(&dir) else {
        return;
    };
    for mode in ["spawn", "multiple", "accept"] {
        for (lib, env) in [
            ("libpmix2", vec![]),
            (
                "our libpmix.so.2",
                vec![("LD_LIBRARY_PATH", dropin.as_os_str())],
            ),
        ] {
            let out = pmix_run(&[exe.as_os_str(), mode.as_ref()], &env);
            check(
                &format!("pmix-run, {mode}, {lib}"),
                &out,
                &mpi_spawn_lines(mode),
            );
        }
    }
}

#[test]
fn the_same_mpi_spawn_programs_run_under_mpirun_on_either_library() {
    let dir = TempDir::new("spawn-mpi-mpirun");
    let Some((exe, dropin)) = mpi_build(&dir) else {
        return;
    };
    for mode in ["spawn", "multiple", "accept"] {
        for (lib, d) in [
            ("libpmix2", None),
            ("our libpmix.so.2", Some(dropin.as_path())),
        ] {
            let out = mpirun(&[exe.as_os_str(), mode.as_ref()], d);
            check(
                &format!("mpirun, {mode}, {lib}"),
                &out,
                &mpi_spawn_lines(mode),
            );
        }
    }
}

#[test]
fn mpi4py_spawn_runs_under_pmix_run_and_mpirun_on_either_library() {
    let dir = TempDir::new("spawn-mpi4py");
    let Some((_, dropin)) = mpi_build(&dir) else {
        return;
    };
    let Some(py) = shared::mpi4py("mpi4py spawn") else {
        return;
    };
    let script = mpi_dir().join("mpi4py_spawn.py");
    let want = [
        "mpi4py_spawn parent 0: 2+2 ok",
        "mpi4py_spawn parent 1: 2+2 ok",
        "mpi4py_spawn child 0: 2+2 ok",
        "mpi4py_spawn child 1: 2+2 ok",
    ];
    let argv = [py.as_ref(), script.as_os_str()];
    let ours = [("LD_LIBRARY_PATH", dropin.as_os_str())];
    check("mpi4py, pmix-run, libpmix2", &pmix_run(&argv, &[]), &want);
    check("mpi4py, pmix-run, ours", &pmix_run(&argv, &ours), &want);
    check("mpi4py, mpirun, libpmix2", &mpirun(&argv, None), &want);
    check("mpi4py, mpirun, ours", &mpirun(&argv, Some(&dropin)), &want);
}

#[test]
fn a_tool_finds_pmix_run_by_its_pid_with_either_library_and_the_files_go_with_it() {
    let dir = TempDir::new("spawn-tool");
    let tmp = dir.0.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut tools = vec![(
        "libpmix_ffi",
        cprog::build_ours(&c_dir(), "tool_find", &dir.0),
    )];
    if let Some(e) = cprog::build_openpmix(&c_dir(), "tool_find", &dir.0, "a libpmix2 tool") {
        tools.push(("libpmix2", e));
    }
    let mut cmd = clean(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env("TMPDIR", &tmp)
        .args(["-n", "1", "--timeout", "60", "sleep", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut launcher = cmd.spawn().expect("start pmix-run");
    let pid = launcher.id();
    let host = pmix::server::net::short_hostname();
    let file = tmp.join(format!("pmix.{host}.tool.{pid}"));
    let until = Instant::now() + Duration::from_secs(30);
    while !file.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut results = Vec::new();
    for (lib, exe) in &tools {
        let mut t = clean(exe);
        // libpmix2 would offer munge first; the server speaks native only.
        t.env("TMPDIR", &tmp)
            .env("PMIX_MCA_psec", "native")
            .arg(pid.to_string())
            .arg(format!("pmrun.{pid}"));
        results.push((lib, output_within(&mut t, LIMIT)));
    }
    // Ours to end: SIGTERM, forwarded to the rank, ends the job.
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while launcher.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = launcher.kill();
            let _ = launcher.wait();
            panic!("pmix-run did not end on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for (lib, out) in &results {
        let want = format!("tool_find: connected pmrun.{pid} found");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&want),
            "{lib} tool: {}",
            show(out)
        );
    }
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pmix."))
        .collect();
    assert!(left.is_empty(), "rendezvous files left: {left:?}");
}
