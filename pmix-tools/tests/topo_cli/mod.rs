//! Running the `pmix-topo` binary in the tests that drive it as a user would
//! (`pmix_topo.rs`, `draw.rs`).

use std::process::{Command, Output};
use std::time::Duration;

use pmix_testkit::child::output_within;

/// The longest one run of pmix-topo may take (a hang fails the test, not the suite).
pub(crate) const LIMIT: Duration = Duration::from_secs(120);

/// `pmix-topo ARGS`, bounded by [`LIMIT`].
pub(crate) fn run(args: &[&str]) -> Output {
    output_within(
        Command::new(env!("CARGO_BIN_EXE_pmix-topo")).args(args),
        LIMIT,
    )
}

/// Its stdout and stderr as text, and its exit code.
pub(crate) fn text(o: &Output) -> (String, String, i32) {
    (
        String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout"),
        String::from_utf8(o.stderr.clone()).expect("UTF-8 stderr"),
        o.status.code().expect("an exit code"),
    )
}
