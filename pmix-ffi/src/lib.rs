//! # pmix-ffi
//!
//! The C ABI of pmix-rs: `libpmix_ffi.so` / `libpmix_ffi.a` and the headers in
//! `include/` (`pmix.h`, `pmix_common.h`, `pmix_tool.h`, `pmix_server.h`,
//! `pmix_version.h`, and our `pmix_ft.h`), compatible with OpenPMIx 4.2.2's `pmix.h`
//! for every type, constant and call they declare, so C code written for OpenPMIx
//! compiles and runs against it unchanged.
//!
//! **What it is.** A translator: each exported function checks its pointers, decodes
//! its C arguments into the runtime's types (`pmix`), calls the runtime, and writes the
//! answer back in C memory (`malloc`, so C frees it with `free` or the documented
//! calls). Every function is defined through one macro, `export!` (or `callback!` for
//! the functions handed to C as pointers), which runs its body inside a panic boundary:
//! a panic becomes `PMIX_ERROR`, or the stated fallback of a function that returns
//! something else (NULL, 0, a static text); `tests/boundaries.rs` refuses an
//! `extern fn` written by hand.
//!
//! **The C contract.** A C caller promises what the headers say of every pointer it
//! passes (NULL or valid for its type; a value's union holding what its tag says; a
//! string NUL-terminated). The library checks all the rest before it reads anything:
//! never a NULL pointer where an object is needed, never a slice from a count no array
//! can have or from a misaligned pointer, never a string past its bound
//! (`PMIX_ERR_BAD_PARAM` for each). Those checked conversions are macros of the crate's
//! `boundary` module, which hold the crate's reliance on the promise, so an export's
//! body is safe code and the export a safe `extern "C" fn`. The few that are `unsafe
//! fn` need more than a pointer's validity: a `void *` whose type a separate argument
//! names (`PMIx_Value_load`, `PMIx_Data_pack`, …) or memory they free or reallocate
//! (`PMIx_Value_destruct`, `PMIx_Device_distance_free`, `PMIx_server_setup_fork`, …);
//! their docs say what under "Safety".
//!
//! **Objects.** `pmix_cpuset_t` and `pmix_topology_t` carry the library's own objects:
//! `source` is the library's static string (checked by address: anything else is
//! foreign, `PMIX_ERR_BAD_PARAM`); a cpuset's `bitmap` and a topology's `topology` are
//! keys from a counter into registries (never addresses, never dereferenced, never
//! reused, so a stale struct cannot alias a newer object). See [`client::objects`].
//!
//! **Layout: a folder per header.** The rules every call follows (`PMIX_ERR_INIT`,
//! `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`, in that order, then the arguments)
//! are the runtime's: see `include/pmix.h` and the `pmix` crate.
//!
//! - [`client`] (`pmix.h`'s client calls): init and finalize ([`client::init`]); put,
//!   commit, fence, get, abort ([`client::exchange`]); events ([`client::events`]);
//!   groups ([`client::groups`]); publish and lookup ([`client::pubsub`]); queries and
//!   peers ([`client::query`]); spawn and connect ([`client::spawn`]); log, job control
//!   and monitoring ([`client::control`]); allocations, credentials and fabrics, which
//!   no server of ours serves ([`client::unserved`]); distances and device-distance
//!   memory ([`client::distances`]); topologies and cpusets ([`client::location`], over
//!   [`client::objects`]).
//! - [`tool`] (`pmix_tool.h`): `PMIx_tool_init` and `PMIx_tool_finalize`
//!   ([`tool::init`]); the server connections ([`tool::servers`]); the forwarding of
//!   standard I/O ([`tool::iof`]).
//! - [`server`] (`pmix_server.h`, what a host calls to run our server inside it):
//!   starting, stopping and registering jobs and clients ([`server::init`]); setting up
//!   clients ([`server::setup`]); what the host relays, another node's data requests
//!   and output ([`server::relay`]); node and process maps ([`server::maps`]); the calls
//!   not served ([`server::unserved`]); the host trace ([`server::trace`]); and, inside
//!   the crate, `pmix::server::Host` over the host's `pmix_server_module_t` (the
//!   upcalls).
//! - [`data`] (the values and helpers of `pmix.h` and `pmix_common.h`): loading,
//!   releasing and comparing values ([`data::value`]); copies, unloads and info lists
//!   ([`data::lists`]); packed data ([`data::pack`]); printing ([`data::strings`],
//!   [`data::states`]); status texts and the version ([`data::status`]); and, inside the
//!   crate, the conversions between C values and the runtime's and the decoding of
//!   directive arrays.
//! - [`ft`] (our `pmix_ft.h`): rank-state tracking, its local calls ([`ft::local`]) and
//!   collective ones ([`ft::collective`]).
//! - At the top: [`types`] (the C types), and inside the crate the boundary (the macros
//!   and checked conversions above) and the C memory helpers.
//!
//! Build and link: see the crate's `README.md`.

mod boundary;
pub mod client;
mod cmem;
pub mod data;
pub mod ft;
pub mod server;
pub mod tool;
pub mod types;
