//! A rank killed (SIGKILL) in the middle of a fence, with real processes: the OpenPMIx
//! 4.2 client `tests/c/fence_kill.c` (compiled against Debian's `libpmix-dev`, and
//! against our `pmix-ffi/include` linked with `libpmix_ffi`) runs
//! under `pmix-run -n 4 --keep-going`; its rank 3 prints its pid and never joins the
//! second fence, which ranks 0..2 enter; this test kills that pid (after checking it is
//! a child of the pmix-run it started) and checks what each survivor reports: with
//! `PMIX_GROUP_FT_COLLECTIVE` the fence completes on them, without it they get
//! `PMIX_ERR_LOST_CONNECTION`; either way they finalize and nothing hangs. Every wait
//! is bounded ([`LIMIT`]); on a hang pmix-run is killed by pid (its ranks die with it).
//! Without OpenPMIx the tests print a NOTICE and pass, except under `CI=true`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pmix_testkit::TempDir;
use pmix_testkit::cprog;

const LIMIT: Duration = Duration::from_secs(120);
const N: u32 = 4;

fn c_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"))
}

/// Which client library the program is linked with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lib {
    /// Debian's libpmix2 (OpenPMIx 4.2.2).
    Libpmix2,
    /// Ours, libpmix_ffi, built against `pmix-ffi/include`.
    Ours,
}

/// Compiles `tests/c/fence_kill.c` into `dir` for `lib`; `None` (after the notice)
/// when OpenPMIx is absent.
fn build(dir: &TempDir, lib: Lib) -> Option<PathBuf> {
    let exe = dir.0.join(format!("fence_kill.{lib:?}"));
    let src = c_dir().join("fence_kill.c");
    match lib {
        Lib::Libpmix2 => {
            let pmix = cprog::openpmix_for("pmix-run with fence_kill.c")?;
            cprog::compile(&src, &exe, &[&pmix.include_dir, &c_dir()], &pmix.link);
        }
        Lib::Ours => {
            let include =
                PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../pmix-ffi/include"));
            let link = cprog::link_shared(&cprog::lib_dir("pmix_ffi"), "pmix_ffi");
            cprog::compile(&src, &exe, &[&include, &c_dir()], &link);
        }
    }
    Some(exe)
}

/// Kills the pmix-run this test started (its pid; its ranks die with it) and fails.
fn fail(child: &mut Child, why: &str, seen: &[String]) -> ! {
    let _ = child.kill();
    let _ = child.wait();
    panic!("{why}; output so far:\n{}", seen.join("\n"));
}

/// The parent pid of `pid`, from `/proc`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split(' ').nth(1)?.parse().ok()
}

/// Runs fence_kill in `mode` ("ft" or "noft") under pmix-run, kills rank 3 once it
/// said its pid and ranks 0..2 said they entered the second fence; returns pmix-run's
/// exit code and every line it printed (stdout and stderr, tagged `[rank] `).
fn run_and_kill_rank_3(mode: &str, lib: Lib) -> Option<(Option<i32>, Vec<String>)> {
    let dir = TempDir::new(&format!("run-fence-kill-{mode}-{lib:?}"));
    let exe = build(&dir, lib)?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmix-run"))
        .env_remove("LD_LIBRARY_PATH")
        .args(["-n", &N.to_string(), "--tag-output", "--keep-going"])
        .args(["--timeout", "100"])
        .arg(&exe)
        .arg(mode)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pmix-run starts");
    let (tx, rx) = mpsc::channel::<String>();
    let readers: Vec<_> = [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ]
    .into_iter()
    .map(|pipe| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        })
    })
    .collect();
    drop(tx);

    let deadline = Instant::now() + LIMIT;
    let victim_prefix = format!("[{}] fence_kill rank {}: pid ", N - 1, N - 1);
    let mut seen: Vec<String> = Vec::new();
    let mut victim: Option<u32> = None;
    let in_fence = |seen: &[String]| {
        (0..N - 1).all(|r| seen.contains(&format!("[{r}] fence_kill rank {r}: in fence 2")))
    };
    while victim.is_none() || !in_fence(&seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(pid) = line.strip_prefix(&victim_prefix) {
                    victim = pid.trim().parse().ok();
                }
                seen.push(line);
            }
            Err(e) => fail(
                &mut child,
                &format!("rank 3's pid and the survivors' fence never came ({e})"),
                &seen,
            ),
        }
    }
    let victim = victim.unwrap();
    // Only a rank of the pmix-run this test started: its child, by pid.
    let launcher = child.id();
    if parent_of(victim) != Some(launcher) {
        fail(
            &mut child,
            &format!("pid {victim} is no child of pmix-run {launcher}"),
            &seen,
        );
    }
    // Most likely after the survivors' contributions reached the server (they said
    // they were entering); the outcome must be the same either way.
    std::thread::sleep(Duration::from_millis(200));
    let pid = rustix::process::Pid::from_raw(victim as i32).expect("a positive pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("rank 3 is killed");

    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for pmix-run") {
            break s;
        }
        if Instant::now() >= deadline {
            seen.extend(rx.try_iter());
            fail(&mut child, "pmix-run still ran: a survivor hangs", &seen);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    for r in readers {
        r.join().expect("output reader");
    }
    seen.extend(rx.try_iter());
    Some((status.code(), seen))
}

fn check_survivors(mode: &str, outcome: &str, lib: Lib) {
    let Some((code, seen)) = run_and_kill_rank_3(mode, lib) else {
        return;
    };
    let text = seen.join("\n");
    for r in 0..N - 1 {
        for line in [
            format!("[{r}] fence_kill rank {r}: fence 2 {outcome}"),
            format!("[{r}] fence_kill rank {r}: ok"),
        ] {
            assert!(seen.contains(&line), "no {line:?} in\n{text}");
        }
    }
    assert!(!text.contains("FAIL"), "{text}");
    // The killed rank decides the status (128 + SIGKILL): the survivors exited 0.
    assert_eq!(code, Some(128 + 9), "{text}");
}

#[test]
fn sigkill_mid_ft_fence_completes_on_the_survivors() {
    check_survivors("ft", "completed", Lib::Libpmix2);
}

#[test]
fn sigkill_mid_fence_without_ft_fails_the_survivors_with_an_error() {
    check_survivors(
        "noft",
        "failed with PMIX_ERR_LOST_CONNECTION",
        Lib::Libpmix2,
    );
}

#[test]
fn libpmix_ffi_survivors_of_a_sigkill_mid_ft_fence_complete_it() {
    check_survivors("ft", "completed", Lib::Ours);
}

#[test]
fn libpmix_ffi_survivors_of_a_sigkill_mid_fence_without_ft_get_an_error() {
    check_survivors("noft", "failed with PMIX_ERR_LOST_CONNECTION", Lib::Ours);
}
