//! Child processes for tests: run a command with every wait bounded, and run tests of
//! the current test binary in a child (one ignored test alone, or named tests with an
//! environment of their own), so what they print can be inspected and a hang fails the
//! test instead of the suite.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The longest any one command a test runs may take (a C program under valgrind, or
/// libhwloc over a big captured tree, takes seconds; a hang fails the test instead of
/// the suite).
pub const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// Runs `cmd` to completion within `limit`, capturing its output; a child still running
/// then is killed (only it: the pid this call started) and the test fails.
///
/// # Panics
/// When the command cannot start, or still runs after `limit`.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still ran after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// A command running the ignored test `name` of this test binary alone, in a child
/// process (so that what it prints on stderr can be inspected).
///
/// # Panics
/// When the path of the running test binary cannot be found.
pub fn child_test(name: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    cmd
}

/// A command running the tests `names` of this test binary (exactly those) in a child
/// process with `env` set and `remove` removed, printing what they print.
///
/// # Panics
/// When the path of the running test binary cannot be found.
pub fn rerun_tests(names: &[&str], env: &[(&str, &std::ffi::OsStr)], remove: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(names)
        .args(["--exact", "--nocapture", "--test-threads=1"]);
    for k in remove {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}
