//! # pmix
//!
//! The std runtime of pmix-rs: a PMIx *library instance* and the rules every call
//! follows. It decides **where** a request is answered; the core (`pmix-core`) answers
//! it and the backends (`pmix-hwloc`, later `pmix-sysfs`) build the topology. The C ABI
//! (`pmix-ffi`) is a thin translator over this crate.
//!
//! **What an instance is.** [`Pmix::init`] as [`Role::Client`], [`Role::Tool`] or
//! [`Role::Server`] gives a handle with:
//! - an identity ([`ProcId`]): a client started by a PMIx server (the environment
//!   names it: [`ServerEnv`]) connects to it as an OpenPMIx 4.2.2 client and takes
//!   its namespace and rank from there ([`client`]); with no server to connect to a
//!   client is a *singleton* and a tool stands alone: both initialise successfully and
//!   answer what they can locally (OpenPMIx's `PMIx_Init` returns `PMIX_ERR_UNREACH`
//!   there instead, and stays usable);
//! - a topology, loaded **once**, on first use, from the source named by
//!   [`InitOptions::topology_source`], else `PMIX_TOPOLOGY` (`sysfs` by default,
//!   `sysfs:DIR`, `xml:FILE`, `hwloc`), else OpenPMIx's
//!   `PMIX_MCA_pmix_hwloc_topo_file` (an hwloc XML file) — see [`topology`];
//! - its own cpuset, from `sched_getaffinity` ([`os`]);
//! - **one progress thread** that runs every callback.
//!
//! **One query service.** What an instance answers locally (the topology, the
//! process's binding, a distance query into a caller buffer) is a [`Service`]'s: the
//! instance adds its rules and the relay on top, `pmix-topo` makes a service of its own
//! for its run, and the coming server will hold one. The host name rule (the caller's
//! `PMIX_HOSTNAME`, else the topology's own, else `localhost`) is applied in one place,
//! [`topology::apply_hostname`].
//!
//! **The rules (docs/design.md §6).** Every call checks, in order ([`Pmix::admit`]):
//! 1. after [`Pmix::finalize`]: [`Error::Init`] (`PMIX_ERR_INIT`; before init there is
//!    no handle, and the process-wide instance of [`global`] says `PMIX_ERR_INIT`);
//! 2. a blocking call (or a non-blocking one given no callback, which behaves as
//!    blocking) made on the progress thread: [`Error::WouldBlock`], with one line on
//!    stderr naming the call, and nothing done;
//! 3. after [`Pmix::stop_progress`]: [`Error::NotAvailable`].
//!
//! A blocking query answered locally runs on the caller's thread, with no thread hop
//! and no allocation beyond what the caller asks for ([`Pmix::compute_distances_with`]).
//! A non-blocking query is only *accepted* on the caller's thread (the checks above,
//! and a copy of the request); loading the topology on first use, resolving the
//! caller's own cpuset and the query itself happen on the progress thread, and the
//! callback runs there exactly once, if and only if the call returned `Ok(())`. Errors
//! found after acceptance (no topology, the query's own) reach the callback, as in
//! OpenPMIx; a computation that panics reaches it as [`Error::Internal`]
//! (`PMIX_ERROR`). A request that cannot be answered locally (no topology, no cpuset)
//! would go to the local server; until the relay exists it is [`Error::Unreach`].
//!
//! **Stopping.** The progress engine is one state machine, Running → Draining →
//! Stopped: [`Pmix::stop_progress`] and [`Pmix::finalize`] refuse new requests at once,
//! and every stopper, however many run at once, returns only when every accepted
//! callback has run. On the progress thread they answer [`Error::WouldBlock`] instead
//! (they would wait for themselves).
//!
//! ```
//! use pmix::{DistanceRequest, InitOptions, Pmix, Role};
//! use pmix_core::CpuSet;
//!
//! let xml = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/hwloc-xml/24em64t-2n6c2t-pci.xml");
//! let opts = InitOptions { topology_source: Some(format!("xml:{xml}")), ..Default::default() };
//! let pmix = Pmix::init(Role::Tool, opts)?;
//! let cpu0 = CpuSet::parse_list("0").unwrap();
//! let d = pmix.compute_distances(&DistanceRequest { cpuset: Some(&cpu0), ..Default::default() })?;
//! for r in d.rows() {
//!     println!("{} {} {} {}", r.osname, r.uuid, r.mindist, r.maxdist);
//! }
//! pmix.finalize()?;
//! # Ok::<(), pmix::Error>(())
//! ```
//!
//! **A connected client** does put / commit / fence / get / abort / finalize
//! ([`Client`]), events, group construct / destruct / leave, publish / lookup /
//! unpublish, the non-blocking fence and get, and relays a distance request it cannot
//! answer alone (no topology or no cpuset here) to its server ([`Answer::Relayed`];
//! `PMIX_ERR_NOT_SUPPORTED` for `PMIX_DEVICE_DIST_ORIGIN` when the server does not
//! advertise `pmix.rs.dist.origin`, as OpenPMIx 4.2's do not).
//!
//! It also answers `PMIx_Query_info` (from the job information when it holds every
//! key, else from the server) and `PMIx_Resolve_peers` / `_nodes`.
//!
//! Group invite / join are built from events as OpenPMIx 4.2 clients build them
//! ([`Pmix::group_invite`], [`Pmix::group_join`]).
//!
//! A tool connects too ([`Role::Tool`] with a server named: [`Connect`]), and relays
//! the same way.
//!
//! **Node and process maps** ([`regex`]): what libpmix2's `PMIx_generate_regex` and
//! `PMIx_generate_ppn` give a host, and the parsing of the `PMIX_NODE_MAP` /
//! `PMIX_PROC_MAP` values a host registers a namespace with.
//!
//! **How the source is arranged** (ARCHITECTURE.md has the map), by who uses what:
//! - the top holds what the client side and the server side both use: the error
//!   ([`Error`]), the OS calls ([`os`]), where a topology comes
//!   from ([`topology`]), distance requests and answers ([`DistanceRequest`],
//!   [`Directives`]) and the query service ([`service`], which a [`Server`] answers
//!   its clients' distance requests from);
//! - [`client`]: the client side (the instance of every role, its progress thread,
//!   its calls and event handlers ([`events`]), its group records, the connection to
//!   a server), which imports nothing of the server;
//! - [`server`]: the server and what its hosts use: the host contract, what a host
//!   registers, its node and process maps ([`regex`]), and the server a
//!   [`Role::Server`] instance embeds ([`Pmix::attach_server`], [`Pmix::serve`]);
//! - [`sim`] joins the two sides in one process, for tests.

pub mod client;
mod distances;
mod error;
pub mod os;
pub mod server;
pub mod service;
pub mod sim;
pub mod topology;

pub use client::calls::ft;
pub use client::events;
pub use client::events::{EventAction, EventHandler, EventInfo};
pub use client::instance::global;
pub use client::instance::{Connect, DistancesCallback, InitOptions, Mode, Pmix, ProcId, Role};
pub use client::{Client, ServerEnv};
pub use distances::{Answer, Directives, DistanceRequest, Distances, RelayedDistance, Row};
pub use error::{Error, LoadError};
pub use os::BindEnvelope;
pub use pmix_core::{PmixError, Status};
/// The wire codec's types the client's calls take and give (values, infos, processes).
pub use pmix_wire as wire;
pub use server::{Server, ServerConfig, regex};
pub use service::{AnswerError, Service};
