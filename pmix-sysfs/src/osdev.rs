//! OS devices, from `sys/class/{net,infiniband,block,drm,dma,ve}`, each attached to
//! the last PCI function in its link, plus GPUs that have no drm device.

use std::collections::{BTreeMap, BTreeSet};

use pmix_core::{CpuSet, DeviceTypes, OsDeviceSpec, PciAddr, TopologyBuilder};

use crate::error::{ScanError, shorten};
use crate::fs::{FileKind, FsError, SysFs};
use crate::pci::{PciTree, pci_component};
use crate::scan::{Ctx, Placed, join, resolve_link};

/// The classes read, in order, with the PMIx type each gives its devices (the type
/// hwloc gives the same devices).
pub(crate) const CLASSES: [(&str, DeviceTypes); 6] = [
    ("net", DeviceTypes::NETWORK),
    ("infiniband", DeviceTypes::OPENFABRICS),
    ("block", DeviceTypes::BLOCK),
    ("drm", DeviceTypes::GPU),
    ("dma", DeviceTypes::DMA),
    ("ve", DeviceTypes::COPROC),
];

/// An OS device found, before it is placed.
struct Found {
    /// Where it was found, for messages.
    path: String,
    spec: OsDeviceSpec,
    /// The PCI function it belongs to, if any.
    pci: Option<PciAddr>,
    /// For a device without PCI: its locality (`None` = the whole machine).
    locality: Option<CpuSet>,
}

/// `card0`, `renderD128`, `controlD64`: the drm devices (not connectors like
/// `card0-HDMI-A-1`, nor `ttm` or `version`).
fn drm_device(name: &str) -> bool {
    ["card", "renderD", "controlD"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Colon-separated hex bytes (`00:11:22:33:44:55`), or GUID groups (`0002:c903:00f9:bfa0`).
fn hex_groups(s: &str, width: usize) -> bool {
    !s.is_empty()
        && s.split(':')
            .all(|g| g.len() == width && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl<F: SysFs> Ctx<'_, F> {
    /// Reads every class directory and adds the OS devices to `b`.
    pub(crate) fn os_devices(
        &mut self,
        placed: &Placed,
        tree: &PciTree,
        b: &mut TopologyBuilder,
    ) -> Result<(), ScanError> {
        let pci = &tree.objects;
        let mut found: Vec<Found> = Vec::new();
        let mut names: BTreeSet<String> = BTreeSet::new();
        for (class, kind) in CLASSES {
            let mut dir = join("sys/class", class);
            let mut list = self.list(&dir)?;
            if list.is_none() && class == "block" {
                dir = "sys/block".to_owned();
                list = self.list(&dir)?;
            }
            let list = list.unwrap_or_default();
            // Partitions are told by their disk's entry (block only).
            let listed: BTreeSet<&str> = if kind == DeviceTypes::BLOCK {
                list.iter().map(String::as_str).collect()
            } else {
                BTreeSet::new()
            };
            for name in &list {
                if let Some(f) = self.class_entry(class, kind, &dir, name, &listed, placed, tree)? {
                    found.push(f);
                }
            }
        }

        // drm: a VGA function (0x0300) is a GPU only with a render node, so a BMC's
        // display chip does not pose as one.
        let with_render: BTreeSet<PciAddr> = found
            .iter()
            .filter(|f| f.spec.kind == DeviceTypes::GPU && f.spec.name.starts_with("renderD"))
            .filter_map(|f| f.pci)
            .collect();
        let with_drm: BTreeSet<PciAddr> = found
            .iter()
            .filter(|f| f.spec.kind == DeviceTypes::GPU)
            .filter_map(|f| f.pci)
            .collect();
        found.retain(|f| {
            let vga_without_render = f.spec.kind == DeviceTypes::GPU
                && f.pci.is_some_and(|a| {
                    pci.get(&a).and_then(|o| o.class) == Some(0x0300) && !with_render.contains(&a)
                });
            !vga_without_render
        });

        // 3D controllers and processing accelerators without a drm device.
        for (addr, obj) in pci {
            let is_accel = matches!(obj.class, Some(c) if c == 0x0302 || c >> 8 == 0x12);
            if obj.bridge || !is_accel || with_drm.contains(addr) {
                continue;
            }
            let (mut name, vendor_id) = self.nvidia_info(*addr);
            if names.contains(&name) || found.iter().any(|f| f.spec.name == name) {
                let path = format!("proc/driver/nvidia/gpus/{addr}/information");
                self.warn(
                    &path,
                    format!("GPU name {name:?} is taken: named {addr} instead"),
                );
                name = addr.to_string();
            }
            found.push(Found {
                path: format!("sys/bus/pci/devices/{addr}"),
                spec: OsDeviceSpec {
                    name,
                    kind: DeviceTypes::GPU,
                    vendor_id,
                    ..Default::default()
                },
                pci: Some(*addr),
                locality: None,
            });
        }

        for f in found {
            if !names.insert(f.spec.name.clone()) {
                self.warn(&f.path, "a second OS device of that name: skipped");
                continue;
            }
            match f.pci.and_then(|a| pci.get(&a)) {
                Some(obj) => {
                    b.os_device(obj.node, f.spec);
                }
                None => {
                    let parent = placed.attach_point(f.locality.as_ref());
                    let node = b.os_device(parent, f.spec);
                    if let Some(l) = f.locality {
                        b.set_locality(node, l);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads one entry of a class directory. `None` for entries that are not devices
    /// we report (virtual devices, partitions, drm connectors, …), some with a warning.
    #[allow(clippy::too_many_arguments)]
    fn class_entry(
        &mut self,
        class: &str,
        kind: DeviceTypes,
        dir: &str,
        name: &str,
        listed: &BTreeSet<&str>,
        placed: &Placed,
        tree: &PciTree,
    ) -> Result<Option<Found>, ScanError> {
        if class == "drm" && !drm_device(name) {
            return Ok(None);
        }
        // hwloc ignores these fake InfiniBand devices of Intel MIC's SCIF too.
        if class == "infiniband" && name.starts_with("scif") {
            return Ok(None);
        }
        let path = join(dir, name);
        if name.len() > pmix_core::MAX_NAME_LEN {
            self.warn(
                &path,
                format!(
                    "name longer than {} bytes: skipped",
                    pmix_core::MAX_NAME_LEN
                ),
            );
            return Ok(None);
        }
        let cap = self.limits.max_link_len;
        let target = match self.fs.read_link(&path, cap) {
            Ok(t) => resolve_link(dir, &t),
            // Old kernels: a directory whose `device` link names the parent device.
            Err(FsError::NotLink) => match self.fs.kind(&path, false) {
                Ok(FileKind::Dir) => match self.fs.read_link(&join(&path, "device"), cap) {
                    Ok(t) => resolve_link(&path, &t),
                    Err(e) => {
                        self.warn(
                            &path,
                            format!("a directory without a device link ({e}): skipped"),
                        );
                        return Ok(None);
                    }
                },
                _ => {
                    self.warn(&path, "neither a link nor a directory: skipped");
                    return Ok(None);
                }
            },
            Err(FsError::NotFound) => return Ok(None),
            Err(e) => {
                self.warn(&path, format!("{e}: skipped"));
                return Ok(None);
            }
        };
        if target.split('/').any(|c| c == "virtual") {
            return Ok(None);
        }
        if kind == DeviceTypes::BLOCK {
            // A partition sits below its disk (`…/block/sda/sda1`) and has a
            // `partition` attribute.
            let parent_comp = target.rsplit('/').nth(1);
            if parent_comp.is_some_and(|p| p != name && listed.contains(p)) {
                return Ok(None);
            }
            if self.fs.kind(&join(&path, "partition"), true).is_ok() {
                return Ok(None);
            }
        }

        let mut spec = OsDeviceSpec {
            name: name.to_owned(),
            kind,
            ..Default::default()
        };
        match class {
            "net" => {
                let p = join(&path, "address");
                if let Some(a) = self.read_opt_warn(&p) {
                    let a = a.trim();
                    if hex_groups(a, 2) && a.len() <= pmix_core::MAX_NAME_LEN {
                        spec.address = Some(a.to_owned());
                    } else {
                        self.warn(
                            &p,
                            format!("{:?} is not a hardware address: ignored", shorten(a)),
                        );
                    }
                }
            }
            "infiniband" => {
                for file in ["node_guid", "sys_image_guid"] {
                    let p = join(&path, file);
                    let Some(g) = self.read_opt_warn(&p) else {
                        continue;
                    };
                    let g = g.trim();
                    if !hex_groups(g, 4) || g.len() > pmix_core::MAX_NAME_LEN {
                        self.warn(&p, format!("{:?} is not a GUID: ignored", shorten(g)));
                    } else if file == "node_guid" {
                        spec.node_guid = Some(g.to_owned());
                    } else {
                        spec.sys_image_guid = Some(g.to_owned());
                    }
                }
            }
            _ => {}
        }

        // The device belongs to the last PCI function in its link (the one whose
        // directory holds it); a device without one is placed by its NUMA node. Unlike
        // a bridge in a PCI path, an unlisted owner is not passed over: the device is
        // its, and the listed device above it is a bridge, which holds no OS devices.
        let addr = target.rsplit('/').find_map(pci_component);
        let mut locality = None;
        match addr.map(|a| (a, tree.objects.get(&a))) {
            Some((_, Some(obj))) if !obj.bridge => {}
            Some((a, Some(_))) => {
                self.warn(
                    &path,
                    format!("belongs to PCI bridge {a}, which holds no devices: skipped"),
                );
                return Ok(None);
            }
            Some((a, None)) if tree.listed.contains(&a) => {
                self.warn(
                    &path,
                    format!("belongs to PCI function {a}, whose sys/bus/pci/devices entry was skipped: skipped"),
                );
                return Ok(None);
            }
            Some((a, None)) => {
                self.warn(&path, format!("belongs to PCI function {a}, which sys/bus/pci/devices does not list: skipped"));
                return Ok(None);
            }
            None => {
                // Without a PCI function in the path nothing vouches for the link:
                // check that it leads somewhere.
                if let Err(e) = self.fs.kind(&target, true) {
                    self.warn(&path, format!("link target {target:?}: {e}: skipped"));
                    return Ok(None);
                }
                locality = self.numa_locality(&join(&path, "device/numa_node"), placed)?;
                if locality.is_none() {
                    let p = join(&path, "device/local_cpus");
                    if let Some(s) = self.read_opt(&p)? {
                        let mut set = self.parse_mask(&p, &s)?;
                        set.intersect_with(&placed.machine);
                        locality = (!set.is_empty()).then_some(set);
                    }
                }
            }
        }
        Ok(Some(Found {
            path,
            spec,
            pci: addr,
            locality,
        }))
    }

    /// The name and vendor identity of a GPU without a drm device: `nvidia<minor>` and
    /// its `GPU-…` UUID from `proc/driver/nvidia/gpus/<bdf>/information`, else its PCI
    /// address and none.
    fn nvidia_info(&mut self, addr: PciAddr) -> (String, Option<String>) {
        let path = format!("proc/driver/nvidia/gpus/{addr}/information");
        let fallback = (addr.to_string(), None);
        let Some(text) = self.read_opt_warn(&path) else {
            return fallback;
        };
        let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(':') {
                fields.insert(k.trim(), v.trim());
            }
        }
        let minor = fields
            .get("Device Minor")
            .and_then(|m| m.parse::<u32>().ok());
        let Some(minor) = minor else {
            self.warn(&path, format!("no \"Device Minor\" line: named {addr}"));
            return fallback;
        };
        let uuid = match fields.get("GPU UUID") {
            Some(u)
                if u.starts_with("GPU-")
                    && u.len() <= pmix_core::MAX_NAME_LEN
                    && !u.contains(char::is_whitespace) =>
            {
                Some((*u).to_owned())
            }
            Some(u) => {
                self.warn(
                    &path,
                    format!("{:?} is not a GPU UUID: ignored", shorten(u)),
                );
                None
            }
            None => None,
        };
        (format!("nvidia{minor}"), uuid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_formats() {
        assert!(drm_device("card0") && drm_device("renderD128") && drm_device("controlD64"));
        assert!(!drm_device("card0-VGA-1") && !drm_device("ttm") && !drm_device("card"));
        assert!(hex_groups("00:11:22:aa:bb:cc", 2));
        assert!(hex_groups("0002:c903:00f9:bfa0", 4));
        assert!(!hex_groups("", 2) && !hex_groups("0:11", 2) && !hex_groups("zz:11", 2));
    }
}
