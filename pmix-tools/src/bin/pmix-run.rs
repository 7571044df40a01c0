//! `pmix-run`: runs N ranks of a program under this crate's PMIx server
//! (`pmix_tools::run`).

fn main() {
    // The server in this process takes peers' large messages: each is given back
    // to the system when freed, not kept in a heap.
    pmix::os::map_large_allocations();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(pmix_tools::run::main(&args));
}
