//! The picture's boxes and where they go: a deterministic nested-box tree layout, all
//! coordinates whole pixels.
//!
//! Every box is an [`Item`] of one arena, parents before children (pre-order), so one
//! pass backwards sizes every box from its children and one pass forwards turns the
//! children's offsets into positions. A box holds its text lines at the top, then its
//! children, padded by [`PAD`] on every side:
//!
//! - under a processor object (machine, group, package, NUMA domain) the children go in
//!   bands, one under the other: groups and packages, then NUMA domains, then the I/O
//!   objects attached there (host bridges, bridges, PCI functions), then OS devices
//!   attached directly; a band of one or two boxes is one row (two packages side by
//!   side), a band of more wraps into rows of the length that brings the band's shape
//!   closest to 16:9 (four packages with their I/O side by side, twelve groups of a
//!   big machine in three rows), so the picture stays about as wide as a screen;
//! - under an I/O object (host bridge, PCI bridge, PCI function) the children that hold
//!   something (bridges and functions with children) and the OS devices stack in one
//!   column, so the PCIe tree reads top-down, indented by one [`PAD`] per level, with
//!   its devices as the leaves; the bare PCI objects (functions without an OS device,
//!   empty bridges) follow as one band wrapped like a processor object's, so forty
//!   chipset functions make a block rather than a tower;
//! - the legend's swatches are one band, like a processor object's devices.
//!
//! Siblings are [`GAP`] apart in a row and between rows and bands, and every box is at
//! least as wide as its widest text line measured at [`CHAR_W_X4`] / 4 pixels per
//! character (a 12-pixel monospace font such as DejaVu Sans Mono is 7.22), so no two
//! sibling boxes overlap, every child lies inside its parent, and every label fits.

/// What a box stands for: its `data-kind` in the SVG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The machine.
    Machine,
    /// A processor-side group (hwloc groups, caches, cores, dies).
    Group,
    /// A package.
    Package,
    /// A NUMA domain.
    Numa,
    /// A host bridge.
    HostBridge,
    /// A PCI bridge.
    PciBridge,
    /// A PCI function.
    Pci,
    /// An OS device.
    Device,
    /// The legend.
    Legend,
    /// One distance of the legend, in its colour.
    Swatch,
}

impl Kind {
    /// The `data-kind` value.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Machine => "machine",
            Kind::Group => "group",
            Kind::Package => "package",
            Kind::Numa => "numa",
            Kind::HostBridge => "hostbridge",
            Kind::PciBridge => "pcibridge",
            Kind::Pci => "pci",
            Kind::Device => "device",
            Kind::Legend => "legend",
            Kind::Swatch => "swatch",
        }
    }

    /// `true` when the children stack in one column (the I/O tree).
    fn stacks(self) -> bool {
        matches!(self, Kind::HostBridge | Kind::PciBridge | Kind::Pci)
    }

    /// The band a child of a processor object goes in (top to bottom).
    fn band(self) -> usize {
        match self {
            Kind::Machine | Kind::Group | Kind::Package | Kind::Legend => 0,
            Kind::Numa => 1,
            Kind::HostBridge | Kind::PciBridge | Kind::Pci => 2,
            Kind::Device | Kind::Swatch => 3,
        }
    }
}

/// The height of a text line, in pixels (12-pixel text).
pub(super) const LINE: i32 = 16;
/// Above the first text line.
pub(super) const TEXT_TOP: i32 = 4;
/// Inside a box, on every side, and left of its text.
pub(super) const PAD: i32 = 6;
/// Between siblings, between rows and between bands.
pub(super) const GAP: i32 = 6;
/// Four times the width of a character, in pixels (7.25 per character).
pub(super) const CHAR_W_X4: i32 = 29;
/// Around the picture.
pub(super) const MARGIN: i32 = 10;

/// A box: what it shows, where it hangs, and after [`place`] where it is.
#[derive(Clone, Debug)]
pub(super) struct Item {
    /// What it stands for.
    pub(super) kind: Kind,
    /// `data-name`: an OS name, a PCI address, `package0`, ….
    pub(super) name: String,
    /// Its text, one line each (a title over the children, or a leaf's label).
    pub(super) lines: Vec<String>,
    /// A tooltip (`<title>`), if any.
    pub(super) tip: Option<String>,
    /// Its fill colour (`#rrggbb`).
    pub(super) fill: &'static str,
    /// Drawn with a bold border: what the distances are measured from.
    pub(super) mark: bool,
    /// A device's (or a swatch's) distance, min and max.
    pub(super) dist: Option<(u16, u16)>,
    /// Its parent's index in the arena.
    pub(super) parent: Option<usize>,
    /// Its children's indexes, in order.
    pub(super) children: Vec<usize>,
    /// Left edge.
    pub(super) x: i32,
    /// Top edge.
    pub(super) y: i32,
    /// Width.
    pub(super) w: i32,
    /// Height.
    pub(super) h: i32,
}

impl Item {
    /// A box of `kind` named `name` showing `lines`, filled with `fill`; not yet
    /// placed.
    pub(super) fn new(kind: Kind, name: String, lines: Vec<String>, fill: &'static str) -> Item {
        Item {
            kind,
            name,
            lines,
            tip: None,
            fill,
            mark: false,
            dist: None,
            parent: None,
            children: Vec::new(),
            x: 0,
            y: 0,
            w: 0,
            h: 0,
        }
    }
}

/// The width `text` takes, in pixels, rounded up.
pub(super) fn text_width(text: &str) -> i32 {
    let chars = i32::try_from(text.chars().count()).unwrap_or(i32::MAX / CHAR_W_X4);
    (chars.saturating_mul(CHAR_W_X4) + 3) / 4
}

/// Appends `item` under `parent` and returns its index.
pub(super) fn push(items: &mut Vec<Item>, parent: Option<usize>, mut item: Item) -> usize {
    let i = items.len();
    item.parent = parent;
    items.push(item);
    if let Some(p) = parent {
        items[p].children.push(i);
    }
    i
}

/// The shape a band of three or more boxes aims at: 16:9, wider than tall.
const ASPECT: f64 = 16.0 / 9.0;

/// How many boxes a row of the band `sizes` holds: all of them up to two (side by
/// side); from three on, the count whose rows come closest to [`ASPECT`] (the
/// smallest `|ln(width / height / ASPECT)|`, ties to the wider).
fn columns(sizes: &[(i32, i32)]) -> usize {
    if sizes.len() <= 2 {
        return sizes.len().max(1);
    }
    let mut best = (f64::INFINITY, 1);
    for cols in 1..=sizes.len() {
        let (_, w, h) = flow(sizes, cols);
        let miss = (f64::from(w.max(1)) / f64::from(h.max(1)) / ASPECT)
            .ln()
            .abs();
        if miss <= best.0 {
            best = (miss, cols);
        }
    }
    best.1
}

/// Places boxes of the sizes `sizes` in rows of `cols`, left to right and top down,
/// `GAP` apart; returns each box's offset and the extent of the whole.
fn flow(sizes: &[(i32, i32)], cols: usize) -> (Vec<(i32, i32)>, i32, i32) {
    let mut at = Vec::with_capacity(sizes.len());
    let (mut width, mut y) = (0, 0);
    for row in sizes.chunks(cols.max(1)) {
        let mut x = 0;
        let mut tall = 0;
        for &(w, h) in row {
            at.push((x, y));
            x += w + GAP;
            tall = tall.max(h);
        }
        width = width.max(x - GAP);
        y += tall + GAP;
    }
    (at, width, (y - GAP).max(0))
}

/// Sizes every box and places the whole: the roots (boxes without a parent) one under
/// the other from the top-left corner, `MARGIN` in; returns the picture's width and
/// height.
pub(super) fn place(items: &mut [Item]) -> (i32, i32) {
    // Offsets of each box within its parent, filled while sizing.
    let mut offset = vec![(0, 0); items.len()];
    for i in (0..items.len()).rev() {
        let head = TEXT_TOP + LINE * i32::try_from(items[i].lines.len()).unwrap_or(0);
        let text = items[i]
            .lines
            .iter()
            .map(|l| text_width(l))
            .max()
            .unwrap_or(0);
        if items[i].children.is_empty() {
            items[i].w = text + 2 * PAD;
            items[i].h = head + TEXT_TOP;
            continue;
        }
        let stacks = items[i].kind.stacks();
        let mut bands: [Vec<usize>; 4] = Default::default();
        for &c in &items[i].children {
            let band = match stacks {
                false => items[c].kind.band(),
                // The I/O tree: its branches and devices in one column (band 0), then
                // its bare PCI objects wrapped (band 1).
                true if items[c].children.is_empty() && items[c].kind != Kind::Device => 1,
                true => 0,
            };
            bands[band].push(c);
        }
        let (mut width, mut y) = (0, head + 2);
        for (k, band) in bands.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
            let sizes: Vec<(i32, i32)> = band.iter().map(|&c| (items[c].w, items[c].h)).collect();
            let cols = if stacks && k == 0 { 1 } else { columns(&sizes) };
            let (at, w, h) = flow(&sizes, cols);
            for (&c, &(dx, dy)) in band.iter().zip(&at) {
                offset[c] = (PAD + dx, y + dy);
            }
            width = width.max(w);
            y += h + GAP;
        }
        items[i].w = text.max(width) + 2 * PAD;
        items[i].h = y - GAP + PAD;
    }
    let (mut right, mut bottom) = (0, MARGIN - GAP);
    for i in 0..items.len() {
        match items[i].parent {
            None => {
                items[i].x = MARGIN;
                items[i].y = bottom + GAP;
                bottom = items[i].y + items[i].h;
            }
            Some(p) => {
                items[i].x = items[p].x + offset[i].0;
                items[i].y = items[p].y + offset[i].1;
            }
        }
        right = right.max(items[i].x + items[i].w);
    }
    (right + MARGIN, bottom + MARGIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(kind: Kind, label: &str) -> Item {
        Item::new(kind, String::new(), vec![label.to_owned()], "#ffffff")
    }

    fn inside(c: &Item, p: &Item) -> bool {
        c.x >= p.x && c.y >= p.y && c.x + c.w <= p.x + p.w && c.y + c.h <= p.y + p.h
    }

    fn apart(a: &Item, b: &Item) -> bool {
        a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y
    }

    #[test]
    fn rows_come_closest_to_sixteen_by_nine() {
        // Two side by side, whatever their shape.
        assert_eq!(columns(&[(100, 10), (100, 10)]), 2);
        assert_eq!(columns(&[(10, 100)]), 1);
        // Four tall packages side by side; four flat ones in one column; four wide
        // groups two by two; twelve squares in rows of five (524 x 312, 1.68).
        assert_eq!(columns(&[(300, 600); 4]), 4);
        assert_eq!(columns(&[(270, 24); 4]), 1);
        assert_eq!(columns(&[(1070, 420); 4]), 2);
        assert_eq!(columns(&[(100, 100); 12]), 5);
        let (at, w, h) = flow(&[(10, 5), (20, 7), (30, 1)], 2);
        assert_eq!(at, [(0, 0), (10 + GAP, 0), (0, 7 + GAP)]);
        assert_eq!((w, h), (30 + GAP, 7 + GAP + 1));
        assert_eq!(flow(&[], 1), (Vec::new(), 0, 0));
    }

    #[test]
    fn packages_side_by_side_io_stacked_children_inside_siblings_apart() {
        let mut items = Vec::new();
        let m = push(&mut items, None, leaf(Kind::Machine, "Machine"));
        let mut devices = Vec::new();
        for p in 0..6 {
            let pk = push(&mut items, Some(m), leaf(Kind::Package, &format!("P{p}")));
            push(&mut items, Some(pk), leaf(Kind::Numa, "NUMA"));
            let hb = push(&mut items, Some(pk), leaf(Kind::HostBridge, "HB"));
            for f in 0..3 {
                let pci = push(&mut items, Some(hb), leaf(Kind::Pci, "PCI 0000:00:00.0"));
                devices.push(push(
                    &mut items,
                    Some(pci),
                    leaf(Kind::Device, &format!("eth{p}{f} (NETWORK) d=16")),
                ));
            }
        }
        push(&mut items, None, leaf(Kind::Legend, "legend"));
        let (w, h) = place(&mut items);
        for (i, a) in items.iter().enumerate() {
            assert!(a.x + a.w + MARGIN <= w && a.y + a.h + MARGIN <= h, "{a:?}");
            assert!(a.w >= text_width(&a.lines[0]) + 2 * PAD, "{a:?}");
            if let Some(p) = a.parent {
                assert!(inside(a, &items[p]), "{a:?} outside {:?}", items[p]);
            }
            for b in &items[i + 1..] {
                if a.parent == b.parent {
                    assert!(apart(a, b), "{a:?} overlaps {b:?}");
                }
            }
        }
        // Six packages side by side in rows, the row's length chosen for 16:9.
        let pk: Vec<&Item> = items.iter().filter(|i| i.kind == Kind::Package).collect();
        let cols = columns(&pk.iter().map(|p| (p.w, p.h)).collect::<Vec<_>>());
        assert!((2..6).contains(&cols), "{cols}");
        assert_eq!(pk[0].y, pk[cols - 1].y);
        assert!(pk[0].x + pk[0].w < pk[1].x);
        assert!(pk[cols].y > pk[0].y + pk[0].h);
        // The three functions of a host bridge stack in one column.
        let pci: Vec<&Item> = items.iter().filter(|i| i.kind == Kind::Pci).collect();
        assert_eq!((pci[0].x, pci[1].x), (pci[2].x, pci[2].x));
        assert!(pci[0].y < pci[1].y && pci[1].y < pci[2].y);
        // The legend is under the machine.
        assert!(items.last().unwrap().y > items[m].y + items[m].h);
    }

    #[test]
    fn bare_pci_objects_wrap_under_the_branches() {
        let mut items = Vec::new();
        // Bare functions under a host bridge wrap into rows below its branches.
        let mut bare = Vec::new();
        let hb = push(&mut items, None, leaf(Kind::HostBridge, "HB"));
        let branch = push(&mut items, Some(hb), leaf(Kind::PciBridge, "Bridge"));
        push(
            &mut items,
            Some(branch),
            leaf(Kind::Pci, "PCI with a device"),
        );
        for _ in 0..12 {
            bare.push(push(
                &mut items,
                Some(hb),
                leaf(Kind::Pci, "PCI 0000:7f:08.0"),
            ));
        }
        place(&mut items);
        assert!(items[bare[0]].y > items[branch].y + items[branch].h);
        assert_eq!(items[bare[0]].y, items[bare[1]].y);
        assert!(items[hb].h < items[hb].w, "{:?}", items[hb]);
    }
}
