//! A sysfs tree written by hand, as a capture that pruned `sys/bus/pci/devices` would
//! leave it, complete enough for libhwloc to read too (`config` spaces for the bridges,
//! `dev` files for the drm devices, cpu topology masks): the same tree goes into a
//! [`MemFs`] or onto disk for `HWLOC_FSROOT`.
//!
//! ```text
//! pci0000:00/0000:00:01.0                    root port, bus 01-04   local cpus 0-1
//!            └ 0000:01:00.0                  switch upstream port, bus 02-04
//!              ├ 0000:02:00.0                NOT LISTED: a directory only
//!              │ └ 0000:03:00.0  eth0        NIC, MAC 00:11:22:33:44:55
//!              └ 0000:02:01.0                switch downstream port, bus 04
//!                └ 0000:04:00.0  eth1        NIC without an address file
//! pci0000:00/0000:00:02.0        card0, renderD128 (VGA)
//! pci0000:00/0000:00:03.0                    NOT LISTED: a directory only
//!            └ 0000:05:00.0      eth2        NIC, MAC 00:11:22:33:44:66, local cpus 2-3
//! ```
//!
//! cpus 0-3 in two packages (0-1, 2-3), no NUMA directory; `proc/hwloc-nofile-info`
//! says `HostName: capnode`, `proc/sys/kernel/hostname` says `kernelnode`.

use std::path::Path;

use pmix_sysfs::MemFs;

/// One thing in the tree.
#[derive(Clone, Debug)]
pub enum Item {
    File(Vec<u8>),
    Link(String),
}

/// A tree as a list of paths (relative to its root) and what they hold.
#[derive(Clone, Debug, Default)]
pub struct Tree(pub Vec<(String, Item)>);

impl Tree {
    pub fn file(&mut self, path: &str, content: impl AsRef<[u8]>) -> &mut Self {
        self.0
            .push((path.to_owned(), Item::File(content.as_ref().to_vec())));
        self
    }

    pub fn link(&mut self, path: &str, target: &str) -> &mut Self {
        self.0
            .push((path.to_owned(), Item::Link(target.to_owned())));
        self
    }

    /// Drops every item at `path` or below it.
    pub fn remove(&mut self, path: &str) -> &mut Self {
        let below = format!("{path}/");
        self.0.retain(|(p, _)| p != path && !p.starts_with(&below));
        self
    }

    pub fn memfs(&self) -> MemFs {
        let mut fs = MemFs::new();
        for (p, item) in &self.0 {
            match item {
                Item::File(c) => fs.file(p, c),
                Item::Link(t) => fs.symlink(p, t),
            };
        }
        fs
    }

    /// Writes the tree under `root` (which must exist).
    ///
    /// # Panics
    /// When a file or link cannot be written.
    pub fn write_to(&self, root: &Path) {
        for (p, item) in &self.0 {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match item {
                Item::File(c) => std::fs::write(&path, c).unwrap(),
                Item::Link(t) => std::os::unix::fs::symlink(t, &path).unwrap(),
            }
        }
    }
}

/// A type-0 (function) or type-1 (bridge, with its secondary and subordinate buses)
/// PCI configuration header, as the kernel exposes it in `config`: no capability
/// list, so libhwloc reads nothing more from it.
fn config(bus: u8, bridge: Option<(u8, u8)>) -> Vec<u8> {
    let mut c = vec![0u8; 64];
    c[0..2].copy_from_slice(&0x8086u16.to_le_bytes());
    c[2..4].copy_from_slice(&0x1234u16.to_le_bytes());
    if let Some((secondary, subordinate)) = bridge {
        c[0x0b] = 0x06;
        c[0x0a] = 0x04;
        c[0x0e] = 0x01;
        c[0x18] = bus;
        c[0x19] = secondary;
        c[0x1a] = subordinate;
    }
    c
}

/// Adds a PCI function at `path` (below `sys/devices/`, ending with its address),
/// listed in `sys/bus/pci/devices` when `listed`.
fn pci(t: &mut Tree, path: &str, class: u32, bridge: Option<(u8, u8)>, listed: bool) {
    let bdf = path.rsplit('/').next().unwrap();
    let bus = u8::from_str_radix(&bdf[5..7], 16).unwrap();
    let dir = format!("sys/devices/{path}");
    t.file(&format!("{dir}/class"), format!("0x{class:06x}\n"))
        .file(&format!("{dir}/vendor"), "0x8086\n")
        .file(&format!("{dir}/device"), "0x1234\n")
        .file(&format!("{dir}/config"), config(bus, bridge));
    if listed {
        t.link(
            &format!("sys/bus/pci/devices/{bdf}"),
            &format!("../../../devices/{path}"),
        );
    }
}

pub const ROOT_PORT: &str = "pci0000:00/0000:00:01.0";
pub const UPSTREAM: &str = "pci0000:00/0000:00:01.0/0000:01:00.0";
/// The directory in eth0's path that `sys/bus/pci/devices` does not list.
pub const UNLISTED: &str = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0";
pub const ETH0: &str = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
pub const DOWNSTREAM: &str = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0";
pub const ETH1: &str = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0";
pub const VGA: &str = "pci0000:00/0000:00:02.0";
/// The root port above eth2 that `sys/bus/pci/devices` does not list.
pub const UNLISTED_ROOT_PORT: &str = "pci0000:00/0000:00:03.0";
pub const ETH2: &str = "pci0000:00/0000:00:03.0/0000:05:00.0";

/// The tree drawn in the module docs.
pub fn pruned_capture() -> Tree {
    let mut t = Tree::default();
    let cpu = "sys/devices/system/cpu";
    t.file(&format!("{cpu}/online"), "0-3\n")
        .file(&format!("{cpu}/possible"), "0-3\n");
    for c in 0..4u32 {
        let top = format!("{cpu}/cpu{c}/topology");
        let package = if c < 2 { "3" } else { "c" };
        let core = format!("{:x}", 1u32 << c);
        t.file(
            &format!("{top}/physical_package_id"),
            format!("{}\n", c / 2),
        )
        .file(&format!("{top}/core_id"), format!("{}\n", c % 2))
        .file(&format!("{top}/package_cpus"), format!("{package}\n"))
        .file(&format!("{top}/core_siblings"), format!("{package}\n"))
        .file(&format!("{top}/core_cpus"), format!("{core}\n"))
        .file(&format!("{top}/thread_siblings"), format!("{core}\n"));
    }

    pci(&mut t, ROOT_PORT, 0x060400, Some((0x01, 0x04)), true);
    t.file(&format!("sys/devices/{ROOT_PORT}/local_cpulist"), "0-1\n")
        .file(&format!("sys/devices/{ROOT_PORT}/local_cpus"), "3\n");
    pci(&mut t, UPSTREAM, 0x060400, Some((0x02, 0x04)), true);
    // UNLISTED exists only as the directory holding eth0's function.
    pci(&mut t, ETH0, 0x020000, None, true);
    t.file(
        &format!("sys/devices/{ETH0}/net/eth0/address"),
        "00:11:22:33:44:55\n",
    )
    .link(
        "sys/class/net/eth0",
        &format!("../../devices/{ETH0}/net/eth0"),
    );
    pci(&mut t, DOWNSTREAM, 0x060400, Some((0x04, 0x04)), true);
    pci(&mut t, ETH1, 0x020000, None, true);
    t.file(&format!("sys/devices/{ETH1}/net/eth1/mtu"), "1500\n")
        .link(
            "sys/class/net/eth1",
            &format!("../../devices/{ETH1}/net/eth1"),
        );

    pci(&mut t, VGA, 0x030000, None, true);
    for (drm, dev) in [("card0", "226:0"), ("renderD128", "226:128")] {
        t.file(
            &format!("sys/devices/{VGA}/drm/{drm}/dev"),
            format!("{dev}\n"),
        )
        .link(
            &format!("sys/class/drm/{drm}"),
            &format!("../../devices/{VGA}/drm/{drm}"),
        );
    }

    pci(&mut t, ETH2, 0x020000, None, true);
    t.file(&format!("sys/devices/{ETH2}/local_cpulist"), "2-3\n")
        .file(&format!("sys/devices/{ETH2}/local_cpus"), "c\n")
        .file(
            &format!("sys/devices/{ETH2}/net/eth2/address"),
            "00:11:22:33:44:66\n",
        )
        .link(
            "sys/class/net/eth2",
            &format!("../../devices/{ETH2}/net/eth2"),
        );

    t.file(
        "proc/hwloc-nofile-info",
        "OSName: Linux\nOSRelease: 6.1.0\nHostName: capnode\nArchitecture: x86_64\nFallbackNbProcessors: 4\nPageSize: 4096\n",
    )
    .file("proc/sys/kernel/hostname", "kernelnode\n");
    t
}

/// The same tree where the directories were not pruned: `0000:02:00.0` and
/// `0000:00:03.0` are listed bridges, with their bus ranges.
pub fn unpruned() -> Tree {
    let mut t = pruned_capture();
    pci(&mut t, UNLISTED, 0x060400, Some((0x03, 0x03)), true);
    pci(
        &mut t,
        UNLISTED_ROOT_PORT,
        0x060400,
        Some((0x05, 0x05)),
        true,
    );
    t
}
