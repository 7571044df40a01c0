//! # pmix-tools
//!
//! The command-line face of pmix-rs. First, `pmix-topo` (docs/design.md §7): the
//! distances from a process location or a device to a node's devices, the device ×
//! device matrix in `nvidia-smi topo -m` words, the topology tree, and a picture of the
//! node with its devices coloured by distance (`draw`: SVG, or PNG through resvg),
//! from this machine (`--source sysfs`, the default), a captured sysfs tree
//! (`sysfs:DIR`), an hwloc XML file (`--source xml:FILE`) or libhwloc (`--source
//! hwloc`, feature `native`).
//!
//! The programs are thin: the command line is clap's (derive), the JSON is serde's, and
//! every answer comes from the runtime's query service ([`pmix::Service`]), which
//! loads the topology, applies the host name rule and resolves this process's binding;
//! pmix-topo reads no file of its own. [`topo::run`] takes the arguments and returns
//! what to print, the files to write and the exit status, so tests drive it without a
//! process; the binary only prints and writes.
//!
//! Second, `pmix-wiredump` ([`wiredump`]): it reads capture logs of OpenPMIx 4.2
//! client/server traffic, decodes them with `pmix-wire`, one block per message, and
//! with `--check` re-encodes every message and compares it with the captured bytes.
//! [`wiredump::run`] has the same shape as [`topo::run`].
//!
//! Third, `pmix-run` ([`run`]): the launcher. It embeds the PMIx server, spawns N
//! ranks of a program with the rendezvous in their environment (OpenPMIx 4.2 clients
//! and Open MPI 4.1 programs run unchanged), binds them, forwards their output and
//! signals, and exits with the job's status.

pub mod run;
pub mod topo;
pub mod wiredump;
