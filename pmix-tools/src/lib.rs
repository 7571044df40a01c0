//! # pmix-tools
//!
//! The command-line face of pmix-rs. Today one program, `pmix-topo` (DESIGN §7): the
//! distances from a process location or a device to a node's devices, the device ×
//! device matrix in `nvidia-smi topo -m` words, and the topology tree, from an hwloc
//! XML file (`--source xml:FILE`) or libhwloc (`--source hwloc`, feature `native`).
//!
//! The programs are thin: [`topo::run`] takes the arguments and returns what to print
//! and the exit status, so tests drive it without a process; the binary only prints.

pub mod json;
pub mod topo;
