//! # pmix-dropin
//!
//! `libpmix_ffi` as a drop-in for OpenPMIx's `libpmix.so.2`: the same code (every
//! `PMIx_*` export of `pmix-ffi`, client and server API), linked with the soname
//! `libpmix.so.2`. The build script links `target/<profile>/dropin/libpmix.so.2` to
//! this library (`libpmix_dropin.so`), so a directory on `LD_LIBRARY_PATH` makes an
//! unmodified program linked with OpenPMIx — or Open MPI's PMIx component, which is —
//! load it instead of OpenPMIx:
//!
//! ```text
//! cargo build --release -p pmix-dropin
//! mpirun -x LD_LIBRARY_PATH=$PWD/target/release/dropin -n 4 ./a.out
//! ```
//!
//! There the ranks load this library and `mpirun` keeps OpenPMIx as its server (on
//! one node it starts the ranks itself; an `orted` it starts elsewhere does not get
//! the variable either). `LD_LIBRARY_PATH=target/release/dropin mpirun -x
//! LD_LIBRARY_PATH ...` puts `mpirun` itself on this library too: one-node jobs run,
//! but see `pmix-tools/tests/run_dropin.rs` for what it lacks as a host's server.
//!
//! `libpmix_ffi.so` itself keeps its own soname, so programs linked with
//! `-lpmix_ffi` never pick up OpenPMIx by mistake.
#![forbid(unsafe_code)]

/// The library whose exports this one carries (linked in whole: its `#[no_mangle]`
/// functions are this library's exports).
pub use pmix_ffi;
