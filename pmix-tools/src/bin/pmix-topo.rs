//! `pmix-topo`: device distances, the device matrix and the topology tree (docs/design.md §7).

use std::io::Write as _;

fn main() {
    // Arguments that are not UTF-8 are read lossily (they then name nothing).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let outcome = pmix_tools::topo::run(&args);
    // A closed pipe (`pmix-topo … | head`) is not worth a panic.
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    std::process::exit(outcome.code);
}
