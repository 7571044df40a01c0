//! `pmix-topo`: device distances, the device matrix, the topology tree and its picture
//! (docs/design.md §7).
//!
//! The program prints what [`pmix_tools::topo::run`] made and writes the files it made
//! (`draw --out`, `--png`); it reads nothing.

use std::io::Write as _;

use pmix_tools::topo::EXIT_CANTCREAT;

fn main() {
    // Arguments that are not UTF-8 are read lossily (they then name nothing).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let outcome = pmix_tools::topo::run(&args);
    let mut code = outcome.code;
    for f in &outcome.files {
        if let Err(e) = std::fs::write(&f.path, &f.bytes) {
            let _ = writeln!(
                std::io::stderr(),
                "pmix-topo: cannot write {}: {e}",
                f.path.display()
            );
            code = EXIT_CANTCREAT;
            break;
        }
    }
    // A closed pipe (`pmix-topo … | head`) is not worth a panic.
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    std::process::exit(code);
}
