//! # pmix-sysfs
//!
//! The Linux sysfs backend of pmix-rs: it scans a root directory (`/` for the machine
//! it runs on, or a captured tree) into a [`pmix_core::Topology`], in pure Rust, with
//! no library to link and no `config` file to read. It is the backend that runs by
//! default, so it is built to be fast: a scan reads a few small files per PCI
//! function and per OS device, and nothing else.
//!
//! **What it is.** [`scan`] / [`scan_with_warnings`] over the real filesystem, and a
//! [`Scanner`] over any [`SysFs`] (the real one under a root, [`RealFs`], or an
//! in-memory tree, [`MemFs`], which tests and the fuzzer use). **What it is not.** It
//! computes no distances (the core does), reads no hwloc variables (`HWLOC_*`), and
//! does not choose backends (the runtime's chooser maps `sysfs` and `sysfs:DIR` to a
//! [`SysfsRoot`]).
//!
//! ```
//! use pmix_core::{CpuSet, DeviceDistance, Query};
//! use pmix_sysfs::{MemFs, Scanner};
//!
//! let mut fs = MemFs::new();
//! fs.file("sys/devices/system/cpu/online", "0-3\n");
//! for cpu in 0..4 {
//!     fs.file(&format!("sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"), format!("{}\n", cpu / 2));
//! }
//! let dev = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
//! fs.file("sys/devices/pci0000:00/0000:00:01.0/class", "0x060400\n");
//! fs.file(&format!("{dev}/class"), "0x020000\n");
//! // The first object on root bus 0000:00 gives the bus its locality.
//! fs.file("sys/devices/pci0000:00/0000:00:01.0/local_cpulist", "0-1\n");
//! fs.file(&format!("{dev}/net/eth0/address"), "00:11:22:33:44:55\n");
//! fs.symlink("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
//! fs.symlink("sys/bus/pci/devices/0000:01:00.0", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
//! fs.symlink("sys/class/net/eth0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0");
//! fs.file("proc/sys/kernel/hostname", "node7\n");
//!
//! let topo = Scanner::new(&fs).scan()?.topology;
//! assert_eq!(topo.packages().len(), 2);
//! let mut out = [DeviceDistance::EMPTY; 4];
//! let cpu0 = CpuSet::parse_list("0").unwrap();
//! let n = topo.distances(&Query::from_cpuset(&cpu0), &mut out).unwrap();
//! let eth0 = topo.device(out[0].device).unwrap();
//! assert_eq!((n, eth0.name(), eth0.uuid()), (1, "eth0", "ipv4://00:11:22:33:44:55"));
//! assert_eq!(out[0].mindist, 1); // local, one bridge (the root port) deep
//! # Ok::<(), pmix_sysfs::ScanError>(())
//! ```
//!
//! ## What is read, and how it becomes the model (docs/design.md §2, sysfs)
//! - **Machine**: `sys/devices/system/cpu/online`; without it, every `cpuN` directory
//!   whose `online` file is not `0`.
//! - **Packages**: online cpus grouped by `cpuN/topology/physical_package_id` (a
//!   negative or absent id: no package). **NUMA nodes**: `sys/devices/system/node/nodeN/cpulist`,
//!   restricted to the machine's cpus, under the package holding them (else the machine).
//! - **PCI tree**: the *symbolic-link targets* of `sys/bus/pci/devices/*`. The PCI
//!   path of a target starts after its last `pciDDDD:BB` component (a VMD controller
//!   opens a new domain below a function) and ends at the function itself; every
//!   component in between that `sys/bus/pci/devices` lists is an upstream bridge. A
//!   component it does not list is a directory, not a PCI device of this tree (captures
//!   prune entries; hwloc, which builds its tree from the listing, does not see it):
//!   it is passed over with a warning, and the function hangs off its nearest listed
//!   ancestor. On a live machine every PCI device is listed, so nothing is passed
//!   over. A function that sits above others, or whose `class` is a PCI-to-PCI bridge
//!   (`0x0604`, `0x0609`), is a bridge. Host bridges are one per domain and bus of the
//!   topmost objects (a function with no listed bridge above it, or an entry that is a
//!   directory rather than a link, as in some captured trees): hwloc groups them the
//!   same way, and on a live machine they are the `pciDDDD:BB` directories above them.
//!   Domains may be 32 bits wide.
//! - **Localities**, per host bridge (docs/design.md §2: a host bridge has a locality, and
//!   everything below it shares it): read from the first object on its root bus (the
//!   lowest address), as hwloc does: `local_cpulist`, else `local_cpus` (hex mask),
//!   else the cpus of `numa_node`; `-1`, an absent file, or a set with no online cpu
//!   means unknown, i.e. the whole machine. The host bridge hangs under the NUMA node
//!   with exactly those cpus, else the package holding them, else the machine. The
//!   locality files of the other functions are not read.
//! - **OS devices**: the entries of `sys/class/{net,infiniband,block,drm,dma,ve}`
//!   (`sys/block` when there is no `sys/class/block`), typed as hwloc types the same
//!   devices: `net` NETWORK, `infiniband` OPENFABRICS, `block` BLOCK, `drm`
//!   GPU, `dma` DMA, `ve` (NEC Vector Engine) COPROC. Each is attached to the last PCI
//!   function in its link target, the one whose directory holds it; unlike a bridge in
//!   a PCI path, that function is not passed over when the listing lacks it (the
//!   device is then skipped with a warning). Skipped: targets with a `virtual` component,
//!   partitions (an entry below another entry of the class, or with a `partition`
//!   attribute), drm entries other than `cardN`, `renderDN` and `controlDN`
//!   (connectors), InfiniBand `scif*` (Intel MIC's fake devices, as hwloc does). A device
//!   with no PCI function in its link is placed by `device/numa_node`, else
//!   `device/local_cpus`, else the machine.
//! - **uuid attributes**: `net/*/address` (a MAC or a 20-byte IPoIB address),
//!   `infiniband/*/node_guid` and `sys_image_guid`.
//! - **GPUs**: a VGA function (class `0x0300`) counts as a GPU only with a drm render
//!   node (`renderD*`), so a BMC's display chip does not pose as one; its drm devices
//!   are dropped otherwise. A 3D controller (`0x0302`) or processing accelerator
//!   (`0x12xx`) without any drm device still gets a GPU entry, named `nvidia<minor>`
//!   with its `GPU-…` UUID as vendor identity when
//!   `proc/driver/nvidia/gpus/<bdf>/information` says so, else named by its PCI address.
//! - **Host name**: the last `HostName: ` line of `proc/hwloc-nofile-info`, else
//!   `proc/sys/kernel/hostname`, else none (`localhost` in the uuids). The precedence is
//!   hwloc's: `hwloc-gather-topology` writes that file into a capture, and libhwloc
//!   under an `HWLOC_FSROOT` other than `/` takes the host name from it alone (it never
//!   reads `proc/sys/kernel/hostname`); on the live machine libhwloc asks `uname()`,
//!   which is the kernel's host name, and procfs holds no `hwloc-nofile-info`.
//!
//! ## Errors and warnings
//! A scan never panics. Every file read is capped ([`Limits::max_file_bytes`]), every
//! directory listing too ([`Limits::max_dir_entries`]), link chains are bounded (the
//! OS's `ELOOP`, [`MemFs::MAX_HOPS`]), and the scanner never walks directories
//! recursively, so a loop cannot trap it.
//!
//! - **Errors** ([`ScanError`], naming the full path): a file the topology's shape
//!   depends on that exists but cannot be read (a directory, a loop, too large, not
//!   UTF-8) or holds something it cannot mean: `cpu/online`, `cpuN/online`,
//!   `physical_package_id`, `nodeN/cpulist`, a PCI function's `class`, the
//!   `local_cpulist`, `local_cpus` and `numa_node` a locality is read from; an unreadable `sys/devices/system/cpu`, `node`,
//!   `bus/pci/devices` or class directory; a tree without cpus
//!   ([`ScanError::NoCpus`]). Guessing there would give wrong distances silently.
//! - **Warnings** ([`Warning`], the device or attribute is skipped and the scan goes
//!   on): a `sys/bus/pci/devices` entry whose name is not a PCI address, whose link
//!   cannot be read or parsed, or points to no directory; a directory in a PCI path
//!   that the listing lacks (passed over, once per directory); a class entry whose link
//!   cannot be read, or that belongs to a PCI bridge, to a function the PCI listing
//!   lacks or to one whose entry was skipped; an identity attribute (`address`,
//!   `node_guid`, `sys_image_guid`, the NVIDIA `information` file) that cannot be read
//!   or parsed (the device stays, its uuid falls back to the `net://`/`fab://host::name`
//!   form); a `hwloc-nofile-info` that cannot be read, has no `HostName: ` line or an
//!   unusable name (the kernel's is tried), an unusable kernel host name (`localhost`
//!   is used); a `numa_node` naming a node that does not exist (the whole machine is
//!   used); a dangling symbolic link where a file was expected (treated as absent).
//! - **Absent files** are not problems: each has a documented fallback above.
//!
//! ## Where this backend and hwloc differ, and why
//! The fixture tests compare the scan with hwloc 2.9's export of the same trees and,
//! with the `native` feature, with libhwloc itself. hwloc differs on purpose or by
//! limitation in these cases; the tests assert our behaviour there:
//! - **32-bit PCI domains**: hwloc 2.x keeps 16-bit domains and drops the rest (a
//!   device below them moves to the machine); we keep them.
//! - **Forced localities** (`HWLOC_PCI_LOCALITY` and other `HWLOC_*` variables): not
//!   read; the kernel's files decide.
//! - **Conflicting localities**: where `local_cpus` and `local_cpulist` disagree we
//!   believe `local_cpulist` (docs/design.md), hwloc `local_cpus`; and hwloc gives up on a set
//!   that crosses its package hierarchy (it attaches the bus to the machine).
//! - **Packages**: hwloc builds them from `core_siblings` and drops one whose cpus
//!   disagree; we group by `physical_package_id`.
//! - **VGA functions without a render node**: hwloc reports their `cardN` /
//!   `controlDN`; we do not (docs/design.md §2).
//! - **Bridges with an invalid bus range** in their `config` (secondary bus 0): hwloc
//!   drops them; we read no `config` and keep them.
//! - **DAX devices** (`sys/bus/dax`): hwloc 2.9 reports them as block devices; they
//!   are not among docs/design.md's classes, so we do not.
//! - **OS devices of an unlisted function** (a class link through a PCI directory the
//!   listing lacks, in a pruned capture): hwloc hangs the device on the bridge whose
//!   bus range holds that function, or places it by the bus's locality; we skip it with
//!   a warning (bridges hold no OS devices in the model).
//! - **Host name of a capture without `hwloc-nofile-info`** but with
//!   `proc/sys/kernel/hostname`: we use the latter, hwloc has none (`localhost`).
//!
//! ## Features
//! `native` (off by default) enables `pmix-hwloc/native` for the tests and the
//! benchmark that compare with libhwloc (Debian's `libhwloc-dev`, `libudev-dev`,
//! `pkg-config`): `cargo test -p pmix-sysfs --features native`,
//! `cargo bench -p pmix-sysfs --features native`. The library itself never links
//! libhwloc.

#![forbid(unsafe_code)]

mod cpu;
mod error;
pub mod fs;
mod osdev;
mod pci;
mod scan;
mod source;

pub use error::{ScanError, Warning};
pub use fs::{FileKind, FsError, MemFs, ReadFailure, RealFs, SysFs};
pub use scan::{Limits, Scan, Scanner, scan, scan_with_warnings};
pub use source::SysfsRoot;
