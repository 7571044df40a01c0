//! The PCI tree, from the symbolic links of `sys/bus/pci/devices`: each link points to
//! `…/pciDDDD:BB/<bridge>/…/<bridge>/<function>`, so the upstream bridges are read off
//! the path and no `config` file is needed. Only the path components that
//! `sys/bus/pci/devices` lists are bridges: a directory in the path that is not a
//! listed PCI device (captures prune entries) is passed over, and the function hangs off
//! its nearest listed ancestor, as hwloc (which builds its tree from the listing alone)
//! sees it. On a live machine every component is listed, so both readings agree.

use std::collections::{BTreeMap, BTreeSet};

use pmix_core::{CpuSet, NodeId, PciAddr, TopologyBuilder};

use crate::error::ScanError;
use crate::fs::{FileKind, FsError, SysFs};
use crate::scan::{Ctx, Placed, join, resolve_link};

const PCI_DIR: &str = "sys/bus/pci/devices";

/// A PCI object as the tree shows it.
#[derive(Clone, Debug)]
pub(crate) struct PciObject {
    pub(crate) node: NodeId,
    /// `true` for a bridge (it cannot hold OS devices).
    pub(crate) bridge: bool,
    /// The 16-bit class (`0x0302`), when known.
    pub(crate) class: Option<u16>,
}

/// Every PCI object placed in the builder, by address.
pub(crate) type PciMap = BTreeMap<PciAddr, PciObject>;

/// What [`Ctx::pci_tree`] found.
pub(crate) struct PciTree {
    /// The objects placed in the builder.
    pub(crate) objects: PciMap,
    /// Every PCI address `sys/bus/pci/devices` lists, placed or skipped.
    pub(crate) listed: BTreeSet<PciAddr>,
}

/// One entry of `sys/bus/pci/devices`.
struct Entry {
    addr: PciAddr,
    /// The PCI-address components of its link between the host bridge and the function,
    /// top-down: first every one, then (after [`Ctx::pci_tree`] filters them) only the
    /// listed ones, i.e. its upstream bridges.
    chain: Vec<PciAddr>,
    class: Option<u16>,
    /// The directory its attributes are read from (`sys/bus/pci/devices/<bdf>`).
    dir: String,
}

/// Parses a component that must be a PCI address in the kernel's canonical form,
/// the one [`PciAddr`] prints: `{domain:04x}:{bus:02x}:{device:02x}.{function:x}`,
/// lowercase, the domain in four digits or more without a leading zero beyond four.
/// (Read byte by byte: every path component of every link goes through here, and
/// parsing then printing to compare cost an allocation and a format each.)
pub(crate) fn pci_component(c: &str) -> Option<PciAddr> {
    let b = c.as_bytes();
    let n = b.len();
    // DDDD:BB:DD.F is 12 bytes, with an 8-digit domain 16.
    if !(12..=16).contains(&n) || b[n - 2] != b'.' || b[n - 5] != b':' || b[n - 8] != b':' {
        return None;
    }
    let dom = &b[..n - 8];
    if dom.len() > 4 && dom[0] == b'0' {
        return None;
    }
    let domain = lower_hex(dom)?;
    let bus = lower_hex(&b[n - 7..n - 5])?;
    let device = lower_hex(&b[n - 4..n - 2])?;
    let function = lower_hex(&b[n - 1..])?;
    // Both fit: at most two hex digits each.
    PciAddr::new(domain, bus as u8, device as u8, function as u8).ok()
}

/// The value of lowercase hex digits (at most eight), `None` for anything else.
fn lower_hex(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |v, &d| {
        let x = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(v << 4 | u32::from(x))
    })
}

/// Whether a component names a PCI root bus, `pciDDDD:BB` (domain of 4 to 8 hex
/// digits, bus of 2).
fn is_host_component(c: &str) -> bool {
    let Some((dom, bus)) = c.strip_prefix("pci").and_then(|r| r.split_once(':')) else {
        return false;
    };
    let hex = |s: &str, min: usize, max: usize| {
        s.len() >= min && s.len() <= max && s.bytes().all(|b| b.is_ascii_hexdigit())
    };
    hex(dom, 4, 8) && hex(bus, 2, 2)
}

/// The host bridge an object with no listed upstream bridge hangs under: that of its
/// own domain and bus. hwloc groups such top-level objects the same way (one host
/// bridge per domain and bus); on a live machine it is the `pciDDDD:BB` above them.
fn host_key(top: PciAddr) -> (u32, u8) {
    (top.domain, top.bus)
}

/// Splits a resolved link target into the PCI-address components above the function,
/// top-down, checking that it ends at `addr`. The PCI path starts after the last
/// `pciDDDD:BB` component (a VMD controller opens a new domain below a function).
fn parse_path(target: &str, addr: PciAddr, max_depth: usize) -> Result<Vec<PciAddr>, String> {
    // The index of the last root-bus component, and how many components follow it.
    let mut host = None;
    let mut n = 0;
    for (i, c) in target.split('/').enumerate() {
        if is_host_component(c) {
            host = Some(i);
        }
        n = i + 1;
    }
    let Some(h) = host else {
        return Err(format!(
            "link target {target:?} has no pciDDDD:BB component"
        ));
    };
    let up = n - h - 1;
    if up > max_depth + 1 {
        return Err(format!(
            "link target {target:?} is more than {max_depth} bridges deep"
        ));
    }
    let below = target.split('/').skip(h + 1);
    let mut chain = Vec::with_capacity(up);
    for c in below {
        match pci_component(c) {
            Some(a) => chain.push(a),
            None => {
                return Err(format!(
                    "link target {target:?} has {c:?} where a PCI address belongs"
                ));
            }
        }
    }
    match chain.pop() {
        Some(last) if last == addr => Ok(chain),
        _ => Err(format!("link target {target:?} does not end at {addr}")),
    }
}

impl<F: SysFs> Ctx<'_, F> {
    /// Reads `sys/bus/pci/devices` and adds host bridges, bridges and functions to `b`.
    /// A `ScanError` when a `class` or locality file of an entry exists but cannot be
    /// read or parsed; entries that cannot be placed are skipped with a warning.
    pub(crate) fn pci_tree(
        &mut self,
        placed: &Placed,
        b: &mut TopologyBuilder,
    ) -> Result<PciTree, ScanError> {
        let mut entries = Vec::new();
        // Every PCI device the listing names, placed or not (an entry whose own link
        // cannot be read is still a PCI device its children's paths go through).
        let mut listed: BTreeSet<PciAddr> = BTreeSet::new();
        for name in self.list(PCI_DIR)?.unwrap_or_default() {
            if let Some(a) = pci_component(&name) {
                listed.insert(a);
            }
            if let Some(e) = self.pci_entry(&name)? {
                entries.push(e);
            }
        }

        // A path component the listing lacks is no PCI device of this tree: not a
        // bridge, so neither a step of the depth nor a branch point of the distances.
        let mut passed_over: BTreeSet<PciAddr> = BTreeSet::new();
        for e in &mut entries {
            let mut unlisted = Vec::new();
            e.chain.retain(|c| {
                let keep = listed.contains(c);
                if !keep {
                    unlisted.push(*c);
                }
                keep
            });
            for c in unlisted {
                if passed_over.insert(c) {
                    self.warn(
                        &e.dir,
                        format!(
                            "its link passes through {c}, which {PCI_DIR} does not list: not counted as a bridge"
                        ),
                    );
                }
            }
        }

        // Bridges: whatever sits above another function, and functions whose class says
        // PCI-to-PCI bridge (0x0604) or semi-transparent bridge (0x0609).
        let upstream: BTreeSet<PciAddr> = entries
            .iter()
            .flat_map(|e| e.chain.iter().copied())
            .collect();
        let is_bridge =
            |e: &Entry| upstream.contains(&e.addr) || matches!(e.class, Some(0x0604 | 0x0609));
        let host_of = |e: &Entry| host_key(e.chain.first().copied().unwrap_or(e.addr));

        // Host bridges, one per domain and bus of the topmost objects, with the
        // locality of their first object (the lowest address on the root bus: hwloc
        // attaches a whole root bus by it too), hung under the processor object that
        // locality names. Everything below inherits it.
        let mut firsts: BTreeMap<(u32, u8), &Entry> = BTreeMap::new();
        for e in &entries {
            let first = firsts.entry(host_of(e)).or_insert(e);
            if (e.chain.len(), e.addr) < (first.chain.len(), first.addr) {
                *first = e;
            }
        }
        let mut hosts: BTreeMap<(u32, u8), NodeId> = BTreeMap::new();
        for (key, first) in firsts {
            let loc = self.locality(&first.dir, placed)?;
            let node = b.host_bridge(placed.attach_point(loc.as_ref()));
            if let Some(l) = loc {
                b.set_locality(node, l);
            }
            hosts.insert(key, node);
        }

        // Parents before children: an entry's bridges have shorter chains.
        entries.sort_by_key(|e| (e.chain.len(), e.addr));
        let mut map = PciMap::new();
        for e in &entries {
            let Some(&host) = hosts.get(&host_of(e)) else {
                continue;
            };
            let mut parent = host;
            for &up in &e.chain {
                parent = match map.get(&up) {
                    Some(o) => o.node,
                    None => {
                        // A listed bridge whose own entry was skipped (its link
                        // unreadable): placed by its children's paths, it inherits its
                        // parent's locality.
                        let node = b.pci_bridge(parent, up, None);
                        map.insert(
                            up,
                            PciObject {
                                node,
                                bridge: true,
                                class: None,
                            },
                        );
                        node
                    }
                };
            }
            if map.contains_key(&e.addr) {
                self.warn(
                    &e.dir,
                    "appears at two places in the PCI tree: kept the first",
                );
                continue;
            }
            let bridge = is_bridge(e);
            let node = if bridge {
                b.pci_bridge(parent, e.addr, e.class)
            } else {
                b.pci_function(parent, e.addr, e.class)
            };
            map.insert(
                e.addr,
                PciObject {
                    node,
                    bridge,
                    class: e.class,
                },
            );
        }
        Ok(PciTree {
            objects: map,
            listed,
        })
    }

    /// Reads one entry: its place in the tree and its class. `None` (with a
    /// warning) when it is not a PCI device we can place.
    fn pci_entry(&mut self, name: &str) -> Result<Option<Entry>, ScanError> {
        let path = join(PCI_DIR, name);
        let Some(addr) = pci_component(name) else {
            self.warn(&path, "not a PCI address: skipped");
            return Ok(None);
        };
        // Attributes are read through the link, so messages name
        // `sys/bus/pci/devices/<bdf>/…`.
        let chain = match self.fs.read_link(&path, self.limits.max_link_len) {
            Ok(t) => {
                let target = resolve_link(PCI_DIR, &t);
                match parse_path(&target, addr, self.limits.max_pci_depth) {
                    Ok(chain) => chain,
                    Err(why) => {
                        self.warn(&path, format!("{why}: skipped"));
                        return Ok(None);
                    }
                }
            }
            // Some captured trees hold directories here: the function then has no
            // upstream bridge and sits under the host bridge of its own domain and bus.
            Err(FsError::NotLink) => {
                if self.fs.kind(&path, false) != Ok(FileKind::Dir) {
                    self.warn(&path, "neither a link nor a directory: skipped");
                    return Ok(None);
                }
                Vec::new()
            }
            // Gone since the listing (hot unplug).
            Err(FsError::NotFound) => return Ok(None),
            Err(e) => {
                self.warn(&path, format!("{e}: skipped"));
                return Ok(None);
            }
        };

        let class_path = join(&path, "class");
        let class = match self.read_opt(&class_path)? {
            Some(s) => Some(self.parse_class(&class_path, &s)?),
            None => {
                if !matches!(self.fs.kind(&path, true), Ok(FileKind::Dir)) {
                    self.warn(&path, "the link points to no directory: skipped");
                    return Ok(None);
                }
                None
            }
        };
        Ok(Some(Entry {
            addr,
            chain,
            class,
            dir: path,
        }))
    }

    /// `class` (`0x060400`) → the 16-bit class (`0x0604`).
    fn parse_class(&self, path: &str, s: &str) -> Result<u16, ScanError> {
        let t = s.trim();
        let digits = t.strip_prefix("0x").unwrap_or(t);
        match u32::from_str_radix(digits, 16) {
            Ok(v) if !digits.is_empty() && digits.len() <= 6 && !digits.starts_with('+') => {
                Ok((v >> 8) as u16)
            }
            _ => Err(self.malformed(path, s, "is not a PCI class")),
        }
    }

    /// The cpus a device directory is local to: `local_cpulist`, else `local_cpus`,
    /// else the cpus of `numa_node`; `None` means unknown, i.e. the whole machine. A
    /// set with no cpu of the machine counts as unknown.
    pub(crate) fn locality(
        &mut self,
        dir: &str,
        placed: &Placed,
    ) -> Result<Option<CpuSet>, ScanError> {
        let p = join(dir, "local_cpulist");
        if let Some(s) = self.read_opt(&p)? {
            let mut set = self.parse_list(&p, &s)?;
            set.intersect_with(&placed.machine);
            if !set.is_empty() {
                return Ok(Some(set));
            }
        }
        let p = join(dir, "local_cpus");
        if let Some(s) = self.read_opt(&p)? {
            let mut set = self.parse_mask(&p, &s)?;
            set.intersect_with(&placed.machine);
            if !set.is_empty() {
                return Ok(Some(set));
            }
        }
        self.numa_locality(&join(dir, "numa_node"), placed)
    }

    /// The cpus of the NUMA node a `numa_node` file names; `None` for -1, an absent
    /// file, or a node without cpus.
    pub(crate) fn numa_locality(
        &mut self,
        path: &str,
        placed: &Placed,
    ) -> Result<Option<CpuSet>, ScanError> {
        let Some(s) = self.read_opt(path)? else {
            return Ok(None);
        };
        let n = self.parse_int(path, &s)?;
        if n < 0 {
            return Ok(None);
        }
        match u32::try_from(n).ok().and_then(|i| placed.numa_cpus(i)) {
            Some(c) if !c.is_empty() => Ok(Some(c.clone())),
            Some(_) => Ok(None),
            None => {
                self.warn(
                    path,
                    format!("names NUMA node {n}, which does not exist: whole machine"),
                );
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_the_components_above_the_function() {
        let a: PciAddr = "0000:03:00.0".parse().unwrap();
        let chain = parse_path(
            "sys/devices/pci0000:00/0000:00:01.3/0000:01:00.2/0000:03:00.0",
            a,
            64,
        )
        .unwrap();
        assert_eq!(
            chain.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            ["0000:00:01.3", "0000:01:00.2"]
        );
        // Below a VMD controller: the path starts at the last root bus.
        let v: PciAddr = "10000:e1:00.0".parse().unwrap();
        let chain = parse_path(
            "sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:1d.0/10000:e1:00.0",
            v,
            64,
        )
        .unwrap();
        assert_eq!(
            chain.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            ["10000:e0:1d.0"]
        );
        assert_eq!(host_key(chain[0]), (0x10000, 0xe0));
        assert!(parse_path("sys/devices/platform/x/0000:03:00.0", a, 64).is_err());
        assert!(parse_path("sys/devices/pci0000:00/0000:00:01.0", a, 64).is_err());
        assert!(parse_path("sys/devices/pci0000:00/virtio0/0000:03:00.0", a, 64).is_err());
        assert!(parse_path("sys/devices/pci0000:00/0000:00:01.0/0000:03:00.0", a, 0).is_err());
        assert!(is_host_component("pci0000:0a") && is_host_component("pci10000:e0"));
        assert!(!is_host_component("pci000:00") && !is_host_component("pci_bus"));
        assert!(!is_host_component("pci0000:0") && !is_host_component("pci0000:0g"));
        assert_eq!(pci_component("0000:00:1F.2"), None);
        assert!(pci_component("0000:00:1f.2").is_some());
    }

    /// `pci_component` as it was: the parse, then the printed form compared.
    fn pci_component_by_printing(c: &str) -> Option<PciAddr> {
        let a: PciAddr = c.parse().ok()?;
        (a.to_string() == c).then_some(a)
    }

    #[test]
    fn pci_components_are_what_prints_the_same() {
        // Every canonical address of a few domains and buses, and strings one edit
        // away from them (a byte replaced, inserted or removed), plus random strings
        // over the characters that matter.
        let mut cases: Vec<String> = Vec::new();
        for domain in [0, 1, 0xa, 0xffff, 0x1_0000, 0xabcd_ef01, u32::MAX] {
            for (bus, device, function) in [(0, 0, 0), (0x5e, 0x1f, 7), (0xff, 3, 1)] {
                cases.push(
                    PciAddr::new(domain, bus, device, function)
                        .unwrap()
                        .to_string(),
                );
            }
        }
        let alphabet = b"0123456789abcdefABCDEFg:.+- x";
        let mut edited = Vec::new();
        for c in &cases {
            for i in 0..=c.len() {
                for &x in alphabet {
                    let mut b = c.as_bytes().to_vec();
                    if i < b.len() {
                        b[i] = x;
                        edited.push(b.clone());
                        b.remove(i);
                        edited.push(b.clone());
                    }
                    let mut b = c.as_bytes().to_vec();
                    b.insert(i, x);
                    edited.push(b);
                }
            }
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 10 + (state % 8) as usize;
            edited.push(
                (0..len)
                    .map(|i| b"0123456789abcdefA:."[((state >> (3 * i)) % 19) as usize])
                    .collect(),
            );
        }
        cases.extend(edited.into_iter().filter_map(|b| String::from_utf8(b).ok()));
        // Multi-byte characters where digits belong.
        cases.extend(
            [
                "0000:00:0é.0",
                "é000:00:00.0",
                "0000:00:00.é",
                "00é:00:00.0",
            ]
            .map(String::from),
        );
        let mut accepted = 0;
        for c in &cases {
            let want = pci_component_by_printing(c);
            assert_eq!(pci_component(c), want, "{c:?}");
            accepted += usize::from(want.is_some());
        }
        assert!(accepted > 100, "{accepted} of {}", cases.len());
    }
}
