//! `pmix-topo draw`: an SVG picture of one node (docs/design.md §7) — the machine, its
//! groups, packages and NUMA domains, the PCIe tree (host bridges, bridges, PCI
//! functions) under its attachment point, and every OS device as a leaf, coloured and
//! labelled `name (TYPE) d=min[-max]` by its distance from a cpu list (`--cpus`, default
//! this process's binding) or from a device (`--origin`), as `distances` measures
//! them, with a legend of the distance scale; `--png` renders the same SVG to PNG.
//!
//! Every distance comes from the runtime's answer ([`Service::answer`]): one request
//! for every device type (it fails as `distances --types all` fails), then, for a GPU
//! or coprocessor alias the answer folded into another name, one request naming it
//! (docs/design.md §2 "Device entries"), so every OS device of the tree carries its
//! own distance. The colour is the rank of a device's smallest distance among the
//! picture's distinct ones ([`svg::colour`]). What the distances are measured from is
//! drawn with a bold border: the processor objects whose cpus meet the cpu list, or the
//! origin device.
//!
//! The files: [`layout`] places the boxes, [`svg`] writes them, [`png`] renders them.

mod layout;
mod png;
mod svg;

use std::collections::HashMap;
use std::sync::Arc;

use pmix::{DistanceRequest, Service};
use pmix_core::{CpuSet, DeviceId, DeviceTypes, NodeId, NodeKind, Topology};

use super::args::DrawArgs;
use super::distances::{LEGEND_FROM_CPUS, LEGEND_FROM_DEVICE, Measured, measured_from};
use super::{Failure, Made, OutputFile, topology};
use layout::{Item, Kind, push};

/// Each device's distance (min, max), by device id.
type Distances = HashMap<u32, (u16, u16)>;

/// Answers `draw` with the service `svc`: the SVG on standard output or in `--out`,
/// the PNG in `--png`.
pub(super) fn run(svc: &Service, a: &DrawArgs) -> Result<Made, Failure> {
    let topo = topology(svc)?;
    let from = measured_from(svc, &topo, a.cpus.as_ref(), a.origin.as_deref())?;
    let dist = distances(svc, &topo, from.cpus.as_ref(), a.origin.as_deref())?;
    let mut items = Vec::new();
    let scale = scale(&dist);
    Scene {
        topo: &topo,
        dist: &dist,
        scale: &scale,
        cpus: from.cpus.as_ref(),
        origin: a.origin.as_deref(),
    }
    .boxes(&mut items);
    legend(&mut items, &from, &scale, a.origin.is_some());
    let (width, height) = layout::place(&mut items);
    let svg = svg::write(
        &items,
        width,
        height,
        &format!("{}: devices {}", topo.hostname(), from.line),
    );
    let mut made = Made::default();
    if let Some(path) = &a.png {
        let (bytes, note) = png::render(&svg)
            .map_err(|e| Failure::Output(format!("cannot render {}: {e}", path.display())))?;
        made.stderr.push_str(note);
        made.files.push(OutputFile {
            path: path.clone(),
            bytes,
        });
    }
    match &a.out {
        Some(path) => made.files.insert(
            0,
            OutputFile {
                path: path.clone(),
                bytes: svg.into_bytes(),
            },
        ),
        None if a.png.is_none() => made.stdout = svg,
        None => {}
    }
    Ok(made)
}

/// Every device's distance from `cpus` or `origin`, as the runtime answers it.
fn distances(
    svc: &Service,
    topo: &Arc<Topology>,
    cpus: Option<&CpuSet>,
    origin: Option<&str>,
) -> Result<Distances, Failure> {
    let mut dist = Distances::new();
    if topo.devices().is_empty() && origin.is_none() {
        // Nothing to measure (the query would answer PMIX_ERR_NOT_FOUND): the picture
        // still shows the processors and the PCIe tree.
        return Ok(dist);
    }
    let ask = |ids: &[&str], types: Option<DeviceTypes>, dist: &mut Distances| {
        let req = DistanceRequest {
            topology: Some(topo),
            cpuset: cpus,
            types,
            ids,
            origin,
        };
        svc.answer(&req, |_, entries| {
            for e in entries {
                dist.insert(e.device.0, (e.mindist, e.maxdist));
            }
        })
        .map_err(|e| Failure::pmix(&e))
    };
    ask(&[], Some(DeviceTypes::ALL), &mut dist)?;
    for (i, d) in (0u32..).zip(topo.devices()) {
        if !dist.contains_key(&i) {
            ask(&[d.name()], None, &mut dist)?;
        }
    }
    Ok(dist)
}

/// The distinct smallest distances of the picture, nearest first.
fn scale(dist: &Distances) -> Vec<u16> {
    let mut v: Vec<u16> = dist.values().map(|&(min, _)| min).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `true` when `origin` names `dev` the way a device id does (osname, uuid, vendor id
/// or PCI bus id, without regard to ASCII case): it gets the bold border.
fn names(origin: &str, dev: &pmix_core::Device) -> bool {
    let pci = dev.pci().map(|p| p.to_string()).unwrap_or_default();
    [dev.name(), dev.uuid(), dev.vendor_id().unwrap_or_default()]
        .iter()
        .any(|n| n.eq_ignore_ascii_case(origin))
        || (!pci.is_empty()
            && (pci.eq_ignore_ascii_case(origin)
                || pci
                    .get(5..)
                    .is_some_and(|short| short.eq_ignore_ascii_case(origin))))
}

/// A PCI class in words, for the function's title.
fn class_name(class: u16) -> &'static str {
    match class {
        0x0c06 => "InfiniBand",
        0x0302 => "3D controller",
        0x0b40 => "coprocessor",
        0x0880 => "system (DMA)",
        _ => match class >> 8 {
            0x01 => "storage",
            0x02 => "network",
            0x03 => "display",
            0x04 => "multimedia",
            0x05 => "memory",
            0x06 => "bridge",
            0x07 => "communication",
            0x08 => "system",
            0x0b => "processor",
            0x0c => "serial bus",
            0x12 => "accelerator",
            _ => "other",
        },
    }
}

/// What the boxes of a topology's nodes are made from.
struct Scene<'a> {
    topo: &'a Topology,
    dist: &'a Distances,
    scale: &'a [u16],
    /// The cpus measured from, if any.
    cpus: Option<&'a CpuSet>,
    /// The origin device as named, if any.
    origin: Option<&'a str>,
}

impl Scene<'_> {
    /// Adds the box of every node of the topology to `items`, in tree order (an
    /// explicit stack: no recursion, however deep the tree).
    fn boxes(&self, items: &mut Vec<Item>) {
        let mut count = [0, 0];
        let mut stack = vec![(NodeId(0), None)];
        while let Some((id, parent)) = stack.pop() {
            let Some(item) = self.node(id, &mut count) else {
                continue;
            };
            let me = push(items, parent, item);
            for &c in self.topo.children(id).iter().rev() {
                stack.push((NodeId(c), Some(me)));
            }
        }
    }

    /// The box of node `id`; `count` numbers packages and NUMA domains in tree order.
    fn node(&self, id: NodeId, count: &mut [usize; 2]) -> Option<Item> {
        let n = self.topo.node(id)?;
        let cpus = n.cpuset().map(ToString::to_string).unwrap_or_default();
        let pci = n.pci().map(|p| p.to_string()).unwrap_or_default();
        let meets = match (self.cpus, n.cpuset()) {
            (Some(f), Some(c)) => f.intersects(c),
            _ => false,
        };
        let mut item = match n.kind() {
            NodeKind::Machine => Item::new(
                Kind::Machine,
                "machine".into(),
                vec![format!("Machine {} (cpus {cpus})", self.topo.hostname())],
                "#ffffff",
            ),
            NodeKind::Group => Item::new(
                Kind::Group,
                "group".into(),
                vec![format!("Group (cpus {cpus})")],
                "#f5f5f5",
            ),
            NodeKind::Package => {
                count[0] += 1;
                let mut it = Item::new(
                    Kind::Package,
                    format!("package{}", count[0] - 1),
                    vec![format!("Package {} (cpus {cpus})", count[0] - 1)],
                    "#e6ecf5",
                );
                it.mark = meets;
                it
            }
            NodeKind::Numa => {
                count[1] += 1;
                let mut it = Item::new(
                    Kind::Numa,
                    format!("numa{}", count[1] - 1),
                    vec![format!("NUMA {} (cpus {cpus})", count[1] - 1)],
                    "#f6efd9",
                );
                it.mark = meets;
                it
            }
            NodeKind::HostBridge => {
                let mut it = Item::new(
                    Kind::HostBridge,
                    "hostbridge".into(),
                    vec!["Host bridge".into()],
                    "#ffffff",
                );
                it.tip = Some(format!("host bridge, local to cpus {cpus}"));
                it
            }
            NodeKind::PciBridge => Item::new(
                Kind::PciBridge,
                pci.clone(),
                vec![format!("Bridge {pci}")],
                "#ffffff",
            ),
            NodeKind::PciFunction => {
                let class = n
                    .pci_class()
                    .map(|c| format!(" {}", class_name(c)))
                    .unwrap_or_default();
                Item::new(
                    Kind::Pci,
                    pci.clone(),
                    vec![format!("PCI {pci}{class}")],
                    "#eeeeee",
                )
            }
            NodeKind::OsDevice => match n.device().and_then(|d| Some((d, self.topo.device(d)?))) {
                Some((DeviceId(d), dev)) => self.device(d, dev),
                None => Item::new(
                    Kind::Device,
                    String::new(),
                    vec!["?".into()],
                    svg::NO_DISTANCE,
                ),
            },
        };
        if item.tip.is_none() && n.kind().is_processor() {
            item.tip = Some(format!("cpus {cpus}"));
        }
        Some(item)
    }

    /// The box of device `d`: its label, its colour, its tooltip (uuid, PCI address).
    fn device(&self, d: u32, dev: &pmix_core::Device) -> Item {
        let kind = dev.kind().name().unwrap_or("?");
        let (label, fill) = match self.dist.get(&d) {
            Some(&(min, max)) => {
                let rank = self.scale.partition_point(|&s| s < min);
                let d = if max == min {
                    min.to_string()
                } else {
                    format!("{min}-{max}")
                };
                (
                    format!("{} ({kind}) d={d}", dev.name()),
                    svg::colour(rank, self.scale.len()),
                )
            }
            None => (format!("{} ({kind}) d=?", dev.name()), svg::NO_DISTANCE),
        };
        let mut it = Item::new(Kind::Device, dev.name().to_owned(), vec![label], fill);
        it.dist = self.dist.get(&d).copied();
        it.mark = self.origin.is_some_and(|o| names(o, dev));
        let pci = dev.pci().map(|p| format!(" at {p}")).unwrap_or_default();
        it.tip = Some(format!("{}{pci}", dev.uuid()));
        it
    }
}

/// The words of tier `tier` measured from a cpuset (`device` false) or a device.
fn tier_words(tier: u16, device: bool) -> &'static str {
    const CPUS: [&str; 3] = ["local", "same package", "another package"];
    const DEVICE: [&str; 5] = [
        "same device",
        "same PCIe switch or root port",
        "same host bridge",
        "same package",
        "another package",
    ];
    let words: &[&str] = if device { &DEVICE } else { &CPUS };
    words
        .get(usize::from(tier))
        .copied()
        .unwrap_or("farther still")
}

/// The legend, under the machine: what the distances are measured from, how a
/// distance reads, and one swatch per distance of the picture.
fn legend(items: &mut Vec<Item>, from: &Measured, scale: &[u16], device: bool) {
    let rule = if device {
        LEGEND_FROM_DEVICE
    } else {
        LEGEND_FROM_CPUS
    };
    let (formula, tiers) = rule.trim_end().split_once("; ").unwrap_or((rule, ""));
    let mut lines = vec![
        format!("Distances {}", from.line),
        format!("{formula}; colour: the rank of d=min, nearest green, farthest red"),
        tiers.to_owned(),
        format!(
            "bold blue border: {}",
            if device {
                "the origin device"
            } else {
                "the packages and NUMA domains holding those cpus"
            }
        ),
    ];
    if scale.is_empty() {
        lines.push("no devices".into());
    }
    let me = push(
        items,
        None,
        Item::new(Kind::Legend, "legend".into(), lines, "#ffffff"),
    );
    for (rank, &d) in scale.iter().enumerate() {
        let (tier, hops) = (d / 16, d % 16);
        let mut it = Item::new(
            Kind::Swatch,
            format!("d={d}"),
            vec![match hops {
                0 => format!("d={d}: {}", tier_words(tier, device)),
                1 => format!("d={d}: {} + 1 bridge", tier_words(tier, device)),
                _ => format!("d={d}: {} + {hops} bridges", tier_words(tier, device)),
            }],
            svg::colour(rank, scale.len()),
        );
        it.dist = Some((d, d));
        push(items, Some(me), it);
    }
}
