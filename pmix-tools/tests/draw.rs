//! `pmix-topo draw`, run as a program on every hwloc XML topology of `testdata/`
//! (`hwloc-xml/`, and the bigger exports of `hwloc-linux/`), on a captured sysfs tree
//! and on this machine: every device the `distances` table lists, from the same cpus
//! or the same origin device, is in the picture with its distance; the picture's boxes,
//! read back from its `data-*` attributes, never overlap their siblings and lie inside
//! their parents; the PNG is a PNG of the SVG's size; an origin device colours
//! otherwise than a cpu list; and the exit statuses.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pmix_testkit::TempDir;
use pmix_tools::topo::report::DistancesReport;

mod topo_cli;

use topo_cli::{run, text};

fn xml(path: &Path) -> String {
    format!("xml:{}", path.display())
}

/// A box of the picture: its `data-*` attributes and its rectangle.
#[derive(Debug)]
struct Rect {
    attrs: HashMap<String, String>,
    x: i64,
    y: i64,
    w: i64,
    h: i64,
}

impl Rect {
    fn get(&self, k: &str) -> Option<&str> {
        self.attrs.get(k).map(String::as_str)
    }

    fn kind(&self) -> &str {
        self.get("data-kind").unwrap()
    }

    fn inside(&self, p: &Rect) -> bool {
        self.x >= p.x
            && self.y >= p.y
            && self.x + self.w <= p.x + p.w
            && self.y + self.h <= p.y + p.h
    }

    fn apart(&self, o: &Rect) -> bool {
        self.x + self.w <= o.x
            || o.x + o.w <= self.x
            || self.y + self.h <= o.y
            || o.y + o.h <= self.y
    }
}

/// The attributes of one XML start tag's text (`a="1" b="2"`), unescaped.
fn attributes(tag: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim().to_owned();
        let after = &rest[eq + 2..];
        let end = after.find('"').expect("a closing quote");
        let value = after[..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&");
        out.insert(key, value);
        rest = &after[end + 1..];
    }
    out
}

/// Every `<rect>` with a `data-kind`, in order, indexed by its `data-id`.
fn boxes(svg: &str) -> Vec<Rect> {
    let mut v = Vec::new();
    for chunk in svg.split("<rect ").skip(1) {
        let tag = &chunk[..chunk.find("/>").expect("a self-closing rect")];
        let attrs = attributes(tag);
        if !attrs.contains_key("data-kind") {
            continue;
        }
        let n = |k: &str| attrs[k].parse::<i64>().unwrap();
        let (x, y, w, h) = (n("x"), n("y"), n("width"), n("height"));
        assert_eq!(attrs["data-id"], v.len().to_string(), "ids in order");
        v.push(Rect { attrs, x, y, w, h });
    }
    v
}

/// The picture's width and height (its `<svg>` attributes).
fn size(svg: &str) -> (i64, i64) {
    let tag = &svg[..svg.find('>').unwrap()];
    let a = attributes(tag);
    (a["width"].parse().unwrap(), a["height"].parse().unwrap())
}

/// Every box lies inside its parent (and the picture); no two siblings overlap; every
/// box is wide enough for its text at 7.25 pixels a character.
fn check_geometry(what: &str, svg: &str) -> Vec<Rect> {
    let b = boxes(svg);
    let (w, h) = size(svg);
    assert!(!b.is_empty(), "{what}: no boxes");
    let mut siblings: HashMap<Option<&str>, Vec<&Rect>> = HashMap::new();
    for r in &b {
        assert!(r.w > 0 && r.h > 0, "{what}: empty box {r:?}");
        assert!(
            r.x >= 0 && r.y >= 0 && r.x + r.w <= w && r.y + r.h <= h,
            "{what}: {r:?} outside the {w}x{h} picture"
        );
        if let Some(p) = r.get("data-parent") {
            let parent = &b[p.parse::<usize>().unwrap()];
            assert!(r.inside(parent), "{what}: {r:?} not inside {parent:?}");
        }
        siblings.entry(r.get("data-parent")).or_default().push(r);
    }
    for group in siblings.values() {
        for (i, a) in group.iter().enumerate() {
            for c in &group[i + 1..] {
                assert!(a.apart(c), "{what}: {a:?} overlaps {c:?}");
            }
        }
    }
    // Each box's text lines follow its rect and fit in it.
    let chunks = svg
        .split("<rect ")
        .skip(1)
        .filter(|c| c.contains("data-kind"));
    for (r, chunk) in b.iter().zip(chunks) {
        let texts = &chunk[..chunk.find("</g>").unwrap()];
        for t in texts.split("<text ").skip(1) {
            let label = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let label = attributes(&format!("v=\"{label}\""))["v"].clone();
            let chars = i64::try_from(label.chars().count()).unwrap();
            assert!(r.w >= chars * 29 / 4, "{what}: {label:?} overflows {r:?}");
        }
    }
    b
}

/// The `distances --types all` answer from `from` (`--cpus X` or `--origin X`), or
/// `None` when the topology has no devices.
fn table(source: &str, from: &[&str]) -> Option<DistancesReport> {
    let mut args = vec![
        "distances",
        "--source",
        source,
        "--types",
        "all",
        "--format",
        "json",
    ];
    args.extend_from_slice(from);
    let (out, err, code) = text(&run(&args));
    if code == 2 && out.contains("PMIX_ERR_NOT_FOUND") {
        return None;
    }
    assert_eq!(code, 0, "{source} {from:?}: {out}{err}");
    Some(serde_json::from_str(&out).unwrap())
}

/// Draws `source` from `from`, checks the geometry and that every device of the
/// distance table is there with its distance; returns the boxes.
fn draw_and_compare(source: &str, from: &[&str]) -> Vec<Rect> {
    let mut args = vec!["draw", "--source", source];
    args.extend_from_slice(from);
    let (svg, err, code) = text(&run(&args));
    assert_eq!((code, err.as_str()), (0, ""), "{source} {from:?}");
    let b = check_geometry(&format!("{source} {from:?}"), &svg);
    let devices: HashMap<&str, &Rect> = b
        .iter()
        .filter(|r| r.kind() == "device")
        .map(|r| (r.get("data-name").unwrap(), r))
        .collect();
    if let Some(t) = table(source, from) {
        assert!(!t.distances.is_empty());
        for e in &t.distances {
            let r = devices
                .get(e.osname.as_str())
                .unwrap_or_else(|| panic!("{source} {from:?}: {} not drawn", e.osname));
            assert_eq!(
                (r.get("data-min"), r.get("data-max")),
                (
                    Some(e.mindist.to_string().as_str()),
                    Some(e.maxdist.to_string().as_str())
                ),
                "{source} {from:?}: {}",
                e.osname
            );
            let d = if e.mindist == e.maxdist {
                e.mindist.to_string()
            } else {
                format!("{}-{}", e.mindist, e.maxdist)
            };
            let label = format!(">{} ({}) d={d}</text>", e.osname, e.kind);
            assert!(svg.contains(&label), "{source} {from:?}: no {label}");
        }
    }
    // Every OS device of the tree is drawn, once.
    let (tree, _, _) = text(&run(&["tree", "--source", source]));
    let types = ["BLOCK", "GPU", "NETWORK", "OPENFABRICS", "DMA", "COPROC"];
    let listed = tree
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|t| types.contains(&t))
        })
        .count();
    assert_eq!(devices.len(), listed, "{source}: devices drawn");
    assert_eq!(b.iter().filter(|r| r.kind() == "device").count(), listed);
    b
}

/// The hwloc XML topologies of `testdata/`: every file of `hwloc-xml/`, and the
/// `-wholeio` exports of `hwloc-linux/` (bigger PCIe trees).
fn topologies() -> Vec<PathBuf> {
    let mut v = pmix_testkit::hwloc_xml_files();
    v.extend(
        pmix_testkit::tarballs("hwloc-linux", "-wholeio.xml")
            .into_iter()
            .map(|(_, p)| p),
    );
    v
}

/// The machine's PUs and its first PU, from the tree's first line (`Machine cpus
/// 0-23 host ...`); `None` when the topology does not import.
fn machine_cpus(source: &str) -> Option<(String, String)> {
    let (tree, _, code) = text(&run(&["tree", "--source", source]));
    (code == 0).then_some(())?;
    let cpus = tree.lines().next()?.strip_prefix("Machine cpus ")?;
    let cpus = cpus.split(' ').next()?;
    Some((cpus.to_owned(), cpus.split([',', '-']).next()?.to_owned()))
}

#[test]
fn every_topology_draws_every_device_of_the_distance_table_with_its_distance() {
    let mut drawn = Vec::new();
    for path in topologies() {
        let source = xml(&path);
        // A file the importer refuses is skipped, as the other suites do.
        let Some((all, cpu)) = machine_cpus(&source) else {
            continue;
        };
        draw_and_compare(&source, &["--cpus", &cpu]);
        // From every PU: min and max differ on machines of several packages.
        draw_and_compare(&source, &["--cpus", &all]);
        // From the first device of the table, measured from it.
        if let Some(t) = table(&source, &["--cpus", &cpu]) {
            let origin = &t.distances[0].osname;
            let b = draw_and_compare(&source, &["--origin", origin]);
            let marked: Vec<&str> = b
                .iter()
                .filter(|r| r.get("data-mark").is_some())
                .map(|r| r.get("data-name").unwrap())
                .collect();
            assert_eq!(marked, [origin.as_str()], "{source}");
        }
        drawn.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    for big in [
        "192em64t-12gr2n8c2t.xml",
        "96em64t-4n4d3ca2co-pci.xml",
        "32em64t-2n8c+1mic.hwloc-2.9-wholeio.xml",
        "power8gpudistances.xml",
    ] {
        assert!(
            drawn.iter().any(|d| d == big),
            "{big} was not drawn: {drawn:?}"
        );
    }
    assert!(drawn.len() >= 20, "{drawn:?}");
}

/// The big machines stay readable: no overlap (checked above for all), and a picture
/// about as wide as a screen, neither a ribbon nor a tower.
#[test]
fn big_machines_stay_readable() {
    for (path, packages, pci) in [
        (pmix_testkit::hwloc_xml("192em64t-12gr2n8c2t.xml"), 24, 12),
        (
            pmix_testkit::hwloc_xml("96em64t-4n4d3ca2co-pci.xml"),
            16,
            14,
        ),
        // 128 PCI functions, 80 of them bare chipset functions under two host bridges.
        (
            pmix_testkit::hwloc_linux("32em64t-2n8c+1mic.hwloc-2.9-wholeio.xml"),
            2,
            128,
        ),
    ] {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let b = draw_and_compare(&xml(&path), &["--cpus", "0"]);
        let m = b.iter().find(|r| r.kind() == "machine").unwrap();
        let ratio = m.w as f64 / m.h as f64;
        assert!((0.6..=3.0).contains(&ratio), "{name}: {}x{}", m.w, m.h);
        assert!(m.w <= 2400 && m.h <= 2400, "{name}: {}x{}", m.w, m.h);
        let count = |kind: &str| b.iter().filter(|r| r.kind() == kind).count();
        assert_eq!(count("package"), packages, "{name}");
        assert_eq!(count("pci"), pci, "{name}: PCI functions");
    }
}

#[test]
fn the_png_is_the_svg_rendered() {
    let dir = TempDir::new("draw-png");
    let svg_path = dir.0.join("p8.svg");
    let png_path = dir.0.join("p8.png");
    let source = xml(&pmix_testkit::hwloc_xml("power8gpudistances.xml"));
    let (out, err, code) = text(&run(&[
        "draw",
        "--source",
        &source,
        "--origin",
        "cuda0",
        "--out",
        svg_path.to_str().unwrap(),
        "--png",
        png_path.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "the SVG went to --out: {out}");
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let (w, h) = size(&svg);
    let png = std::fs::read(&png_path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |i: usize| i64::from(u32::from_be_bytes(png[i..i + 4].try_into().unwrap()));
    assert_eq!((be(16), be(20)), (w, h));
    assert!(
        png.len() > 1000 && png.len() < 1_000_000,
        "{} bytes",
        png.len()
    );
    // It decodes, and a device's box has its colour inside.
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    assert_eq!(
        (i64::from(pixmap.width()), i64::from(pixmap.height())),
        (w, h)
    );
    let b = boxes(&svg);
    let cuda2 = b
        .iter()
        .find(|r| r.get("data-name") == Some("cuda2"))
        .unwrap();
    let px = pixmap
        .pixel((cuda2.x + 3) as u32, (cuda2.y + cuda2.h - 3) as u32)
        .unwrap();
    let fill = cuda2.get("fill").unwrap();
    assert_eq!(
        format!("#{:02x}{:02x}{:02x}", px.red(), px.green(), px.blue()),
        fill
    );
    // --png alone: nothing on standard output.
    let only = dir.0.join("only.png");
    let (out, _, code) = text(&run(&[
        "draw",
        "--source",
        &source,
        "--cpus",
        "0",
        "--png",
        only.to_str().unwrap(),
    ]));
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(std::fs::metadata(&only).unwrap().len() > 1000);
}

/// Fills of the devices, by name.
fn fills(b: &[Rect]) -> HashMap<String, String> {
    b.iter()
        .filter(|r| r.kind() == "device")
        .map(|r| {
            (
                r.get("data-name").unwrap().to_owned(),
                r.get("fill").unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_origin_device_colours_otherwise_than_cpus() {
    let source = xml(&pmix_testkit::hwloc_xml("power8gpudistances.xml"));
    let from_cpus = draw_and_compare(&source, &["--cpus", "0"]);
    let from_gpu = draw_and_compare(&source, &["--origin", "cuda0"]);
    let (c, g) = (fills(&from_cpus), fills(&from_gpu));
    assert_ne!(c, g);
    // From cpu 0, both GPUs of package 0 are as near; from cuda0, cuda1 is farther.
    assert_eq!(c["cuda0"], c["cuda1"]);
    assert_ne!(g["cuda0"], g["cuda1"]);
    assert_eq!(g["cuda0"], g["nvml0"]);
    // What is measured from has the bold border: package 0 and its NUMA domain, or
    // the origin device.
    let marked = |b: &[Rect]| -> Vec<String> {
        b.iter()
            .filter(|r| r.get("data-mark").is_some())
            .map(|r| r.get("data-name").unwrap().to_owned())
            .collect()
    };
    assert_eq!(marked(&from_cpus), ["package0", "numa0"]);
    assert_eq!(marked(&from_gpu), ["cuda0"]);
}

#[test]
fn this_machine_and_a_captured_sysfs_tree_draw() {
    // This machine, from this process's binding, on standard output.
    let (svg, err, code) = text(&run(&["draw"]));
    assert_eq!((code, err.as_str()), (0, ""), "{svg}");
    assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
    check_geometry("this machine", &svg);
    assert!(svg.contains("(this process&apos;s binding)"));
    // A captured tree through sysfs:DIR.
    let tarball = pmix_testkit::hwloc_linux("40intel64-2g2n4c+pci.tar.bz2");
    let tree = pmix_testkit::unpack(&tarball);
    let source = format!("sysfs:{}", tree.tree_root().display());
    draw_and_compare(&source, &["--cpus", "0"]);
}

#[cfg(feature = "native")]
#[test]
fn the_hwloc_source_draws_the_same_picture_as_the_importer() {
    let file = pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml");
    let native = pmix_testkit::child::output_within(
        std::process::Command::new(env!("CARGO_BIN_EXE_pmix-topo"))
            .args(["draw", "--source", "hwloc", "--cpus", "0"])
            .env("HWLOC_XMLFILE", &file),
        topo_cli::LIMIT,
    );
    let ours = run(&["draw", "--source", &xml(&file), "--cpus", "0"]);
    assert_eq!(text(&native).0, text(&ours).0);
}

#[test]
fn exit_statuses() {
    let source = xml(&pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml"));
    // No such origin: the PMIx error distances gives.
    let (_, err, code) = text(&run(&["draw", "--source", &source, "--origin", "nosuch0"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("pmix-topo: PMIX_ERR_NOT_FOUND"), "{err}");
    // Usage errors.
    for args in [
        &[
            "draw", "--source", &source, "--cpus", "0", "--origin", "eth0",
        ][..],
        &["draw", "--source", &source, "--cpus", "999"],
        &["draw", "--format", "json"],
        &["draw", "--png"],
    ] {
        let (_, err, code) = text(&run(args));
        assert_eq!(code, 64, "{args:?}: {err}");
        assert!(err.contains("usage: pmix-topo distances"), "{err}");
    }
    // A file that cannot be written: 73, saying which.
    let (_, err, code) = text(&run(&[
        "draw",
        "--source",
        &source,
        "--cpus",
        "0",
        "--out",
        "/nonexistent-dir/x.svg",
    ]));
    assert_eq!(code, 73, "{err}");
    assert!(err.contains("cannot write /nonexistent-dir/x.svg"), "{err}");
    // A topology without devices still draws its processors.
    let noio = xml(&pmix_testkit::hwloc_xml("32em64t-2n8c2t-pci-noio.xml"));
    let (svg, err, code) = text(&run(&["draw", "--source", &noio, "--cpus", "0"]));
    assert_eq!((code, err.as_str()), (0, ""));
    let b = check_geometry("noio", &svg);
    assert!(b.iter().any(|r| r.kind() == "package"));
    assert!(svg.contains(">no devices</text>"));
}
