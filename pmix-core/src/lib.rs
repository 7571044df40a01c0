//! # pmix-core
//!
//! The pure heart of pmix-rs: the topology model, cpusets, device distances
//! (`PMIx_Compute_distances`) and PMIx status codes, with no I/O, no threads, no
//! `std` and no `unsafe`.
//!
//! **What it is.** A backend (`pmix-hwloc`, `pmix-sysfs`, or your own) describes a
//! node with a [`TopologyBuilder`]; [`TopologyBuilder::build`] validates it and
//! precomputes per device its locality, package, host bridge and PCI path; the
//! resulting [`Topology`] answers [`Query`]s into a caller buffer without allocating.
//!
//! **What it is not.** It reads no files, spawns no threads and knows nothing of C:
//! the runtime (`pmix`) decides where a query is answered and the C ABI (`pmix-ffi`)
//! translates arguments.
//!
//! ```
//! use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, OsDeviceSpec, Query, TopologyBuilder};
//!
//! let mut b = TopologyBuilder::new(CpuSet::parse_list("0-15").unwrap());
//! let p0 = b.package(b.machine(), CpuSet::parse_list("0-7").unwrap());
//! let _p1 = b.package(b.machine(), CpuSet::parse_list("8-15").unwrap());
//! let hb = b.host_bridge(p0);
//! let port = b.pci_bridge(hb, "0000:00:01.0".parse().unwrap(), Some(0x0604));
//! let nic = b.pci_function(port, "0000:01:00.0".parse().unwrap(), Some(0x0200));
//! b.os_device(nic, OsDeviceSpec { name: "eth0".into(), kind: DeviceTypes::NETWORK, ..Default::default() });
//! let topo = b.build().unwrap();
//!
//! let cpus = CpuSet::parse_list("0").unwrap();
//! let mut out = [DeviceDistance::EMPTY; 8];
//! let n = topo.distances(&Query::from_cpuset(&cpus), &mut out).unwrap();
//! assert_eq!((out[0].mindist, out[0].maxdist), (1, 1)); // local (tier 0), one bridge deep
//! let far = CpuSet::parse_list("8").unwrap();
//! topo.distances(&Query::from_cpuset(&far), &mut out[..n]).unwrap();
//! assert_eq!(out[0].mindist, 2 * 16 + 1); // another package
//! ```
//!
//! **Limits.** PU indexes below [`CpuSet::MAX_PUS`] (2^20); names up to
//! [`MAX_NAME_LEN`] bytes; PCIe depth and hop counts saturate at 15 in distances.

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(test)]
extern crate std;

mod bits;
pub mod cpuset;
pub mod device;
pub mod distance;
pub mod ftstate;
pub mod group;
pub mod locality;
pub mod pci;
pub mod source;
pub mod status;
pub mod topology;

pub use cpuset::{CpuSet, ParseCpusetError};
pub use device::{Device, DeviceTypes, MAX_NAME_LEN, OsDeviceSpec};
pub use distance::{DeviceDistance, DistanceError, Origin, Query};
pub use group::MAX_NSLEN;
pub use pci::{ParsePciError, PciAddr, PciPattern};
pub use source::{SourceError, TopologySource};
pub use status::{PmixError, Status};
pub use topology::{BuildError, DeviceId, Node, NodeId, NodeKind, Topology, TopologyBuilder};
