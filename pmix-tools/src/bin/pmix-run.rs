//! `pmix-run`: runs N ranks of a program under this crate's PMIx server
//! (`pmix_tools::run`).

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(pmix_tools::run::main(&args));
}
