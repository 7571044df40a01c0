//! # pmix-ffi
//!
//! The C ABI of pmix-rs: `libpmix_ffi.so` / `libpmix_ffi.a` and the headers in
//! `include/` (`pmix.h`, `pmix_common.h`, `pmix_tool.h`, `pmix_version.h`), compatible
//! with OpenPMIx 4.2.2's `pmix.h` for every type, constant and call they declare, so C
//! code written for OpenPMIx compiles and runs against it unchanged.
//!
//! **What it is.** A translator: each exported function checks its pointers, decodes
//! its C arguments into the runtime's types (`pmix`), calls the runtime, and writes the
//! answer back in C memory (`malloc`, so C frees it with `free` or the documented
//! calls). Every function is defined through one macro, `export!` (or `callback!` for
//! the functions handed to C as pointers), which runs its body inside a panic boundary:
//! a panic becomes `PMIX_ERROR`, or the stated fallback of a function that returns
//! something else (NULL, 0, a static text); `tests/boundaries.rs` refuses an
//! `extern fn` written by hand. Each never dereferences a NULL pointer (a required one
//! is `PMIX_ERR_BAD_PARAM`), forms a slice from a C pointer and count only where the
//! count fits (`× size ≤ isize::MAX`, else `PMIX_ERR_BAD_PARAM`), and documents every
//! `unsafe` block.
//!
//! **Objects.** `pmix_cpuset_t` and `pmix_topology_t` carry the library's own objects:
//! `source` is the library's static string (checked by address: anything else is
//! foreign, `PMIX_ERR_BAD_PARAM`); a cpuset's `bitmap` and a topology's `topology` are
//! keys from a counter into registries (never addresses, never dereferenced, never
//! reused, so a stale struct cannot alias a newer object). See [`objects`].
//!
//! **Calls.** Init and finalize ([`init`]), distances and device-distance memory
//! ([`distances`]), topologies and cpusets ([`location`]), values and infos for the
//! header's macros ([`value`]), status texts ([`status`]). The rules they follow
//! (`PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`, in that order, then
//! the arguments) are the runtime's: see `include/pmix.h` and the `pmix` crate.
//!
//! Build and link: see the crate's `README.md`.

mod boundary;
pub mod client;
pub mod control;
mod convert;
pub mod data;
pub mod distances;
pub mod events;
pub mod ft;
pub mod groups;
pub mod host;
mod info;
pub mod init;
pub mod lists;
pub mod location;
pub mod objects;
pub mod pubsub;
pub mod query;
pub mod servers;
pub mod spawn;
pub mod states;
pub mod status;
pub mod strings;
pub mod types;
pub mod unserved;
pub mod value;
