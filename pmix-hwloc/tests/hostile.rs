//! Hostile input: every case is a clear error naming what and where, never a panic, a
//! stack overflow or unbounded memory. A counting allocator checks that the importer's
//! peak memory stays within a small multiple of the input (it streams; nothing is
//! copied but what the model keeps).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use pmix_hwloc::{Importer, Limits, XmlError, XmlErrorKind};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The peak is process-wide: measured tests take turns.
static MEASURE: Mutex<()> = Mutex::new(());

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Imports `xml`, checking that the import's peak allocation stays below
/// `4 × input + 1 MiB`; returns the error it must give.
/// Call [`serial`] first in the test.
fn import_err(xml: &[u8]) -> XmlError {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let result = Importer::new().import_bytes(xml);
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let bound = 4 * xml.len() + (1 << 20);
    assert!(
        peak <= bound,
        "import of {} bytes peaked at {peak} bytes (bound {bound})",
        xml.len()
    );
    match result {
        Ok(t) => panic!("hostile input imported: {t:?}"),
        Err(e) => e,
    }
}

/// Runs the calling test alone (allocation peaks are process-wide).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    MEASURE.lock().unwrap_or_else(|p| p.into_inner())
}

const HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n";

/// A small valid machine with one NIC, lines numbered as in the comments.
fn machine(inner: &str) -> String {
    format!(
        "{HEAD}<object type=\"Machine\" cpuset=\"0x0000000f\">\n\
         <object type=\"Package\" cpuset=\"0x0000000f\">\n\
         <object type=\"Bridge\" bridge_type=\"0-1\">\n\
         <object type=\"PCIDev\" pci_busid=\"0000:01:00.0\" pci_type=\"0200 [8086:1521] [0000:0000] 01\">\n\
         <object type=\"OSDev\" name=\"eth0\" osdev_type=\"2\"/>\n\
         </object>\n\
         {inner}\
         </object>\n</object>\n</object>\n</topology>\n"
    )
}

#[test]
fn the_template_itself_imports() {
    let _serial = serial();
    let t = pmix_hwloc::from_str(&machine("")).unwrap();
    assert_eq!(t.devices().len(), 1);
}

#[test]
fn truncated_documents_are_errors_at_every_cut() {
    let _serial = serial();
    let text = std::fs::read(pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml")).unwrap();
    let mut cuts = 0;
    for cut in (1..text.len() - 20).step_by(211) {
        // Cut on a char boundary (the file is ASCII).
        let e = import_err(&text[..cut]);
        assert!(
            matches!(
                e.kind(),
                XmlErrorKind::Truncated { .. }
                    | XmlErrorKind::Syntax(_)
                    | XmlErrorKind::NotATopology
            ),
            "cut at {cut}: {e}"
        );
        cuts += 1;
    }
    assert!(cuts > 50);
    let e = import_err(&text[..text.len() / 2]);
    assert!(e.line() > 100, "{e}");
    assert!(e.to_string().starts_with("hwloc XML line "), "{e}");
}

/// A file cut short (a copy interrupted, a full disk) says it is truncated and where the
/// input ends, whatever the cut: never malformed-looking model complaints such as "a
/// Machine needs a cpuset".
#[test]
fn a_cut_document_says_it_is_truncated_and_where() {
    let _serial = serial();
    let text = std::fs::read_to_string(pmix_testkit::hwloc_xml("cxlmem+dax.v3.xml")).unwrap();
    let end = text.find("</topology>").unwrap() + "</topology>".len();
    let line_at = |cut: usize| text[..cut].matches('\n').count() as u32 + 1;
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in the file"))
    };
    let truncated = |cut: usize| {
        let e = import_err(&text.as_bytes()[..cut]);
        assert!(
            matches!(e.kind(), XmlErrorKind::Truncated { .. }),
            "cut at {cut}: {e}"
        );
        let head = format!(
            "hwloc XML line {}: truncated document: the input ends ",
            line_at(cut)
        );
        assert!(e.to_string().starts_with(&head), "cut at {cut}: {e}");
        e.to_string()
    };
    // Everywhere, in steps that land on tags, attributes, values and whitespace alike.
    let mut cuts = 0;
    for cut in (1..end).step_by(13) {
        truncated(cut);
        cuts += 1;
    }
    assert!(cuts > 1000, "{cuts}");

    let topology = line_at(at("<topology"));
    let pkg = at("<object type=\"Package\"");
    let pcidev = at("<object type=\"PCIDev\"");
    let cpuset_value = pkg + text[pkg..].find("cpuset=\"0x").unwrap() + "cpuset=\"0x00".len();
    let after_pkg_tag = pkg + text[pkg..].find('\n').unwrap() + 1;
    let after_root = at("\n  <support") + 1;
    for (what, cut, want) in [
        (
            "mid-tag",
            pcidev + 10,
            format!(
                "inside a tag that starts on line {} (`<object ty`), ",
                line_at(pcidev)
            ),
        ),
        (
            "mid-attribute value",
            cpuset_value,
            format!("inside a tag that starts on line {} (`", line_at(pkg)),
        ),
        (
            // <topology>, the Machine and the Package are open.
            "between elements",
            after_pkg_tag,
            format!(
                "before <object type=\"Package\"> from line {} is closed (3 elements still open)",
                line_at(pkg)
            ),
        ),
        (
            "after the root object closed",
            after_root,
            format!("before <topology> from line {topology} is closed (1 element still open)"),
        ),
        (
            "after the last top-level element",
            at("</topology>"),
            format!("before <topology> from line {topology} is closed (1 element still open)"),
        ),
        (
            "inside </topology>",
            end - 3,
            format!(
                "inside a tag that starts on line {} (`</topolo`), 1 element still open",
                line_at(end)
            ),
        ),
        (
            "inside the DOCTYPE",
            at("<!DOCTYPE") + 5,
            "inside the DOCTYPE declaration that starts on line 2 (`<!DOC`)".to_owned(),
        ),
        (
            "inside the XML declaration",
            10,
            "inside the XML declaration or a processing instruction that starts on line 1 (`<?xml vers`)"
                .to_owned(),
        ),
        (
            "before the root element",
            at("<topology"),
            "before its <topology> element starts".to_owned(),
        ),
    ] {
        let msg = truncated(cut);
        assert!(msg.contains(&want), "{what}: {msg}\nwanted: {want}");
    }

    // A comment left open runs to the end of the input.
    let doc = machine("<!-- a comment never closed\n");
    let e = import_err(doc.as_bytes());
    let last = doc.matches('\n').count() as u32 + 1;
    assert_eq!(e.line(), last, "{e}");
    assert!(
        e.to_string().contains(
            "truncated document: the input ends inside a comment that starts on line 9 (`<!-- a comment never closed </object>"
        ),
        "{e}"
    );
}

/// PCI trees hanging straight under a wide Machine (tens of thousands, as a hostile file
/// may list) share one copy of its cpuset for the PCI-locality lookup, rather than one
/// each.
#[test]
fn many_pci_functions_under_a_wide_machine_stay_within_the_memory_bound() {
    let _serial = serial();
    let wide = format!("0x1{}", ",0xffffffff".repeat(4000));
    let mut s = format!("{HEAD}<object type=\"Machine\" cpuset=\"{wide}\">\n");
    for i in 0..30_000u32 {
        let (bus, dev, func) = (i >> 8, (i >> 3) & 31, i & 7);
        s += &format!(
            "<object type=\"PCIDev\" gp_index=\"{i}\" id=\"obj{i}\" pci_busid=\"0000:{bus:02x}:{dev:02x}.{func}\" \
             pci_type=\"0200 [8086:1521] [8086:0001] 01 00\" pci_link_speed=\"3.938462\"/>\n"
        );
    }
    // Fail at the very end, once every function has been read.
    s.push_str("</object>\n<bogus/>\n</topology>\n");
    let e = import_err(s.as_bytes());
    assert_eq!(
        e.kind(),
        &XmlErrorKind::UnknownElement("bogus".into()),
        "{e}"
    );
}

#[test]
fn ten_thousand_deep_nesting_is_refused_without_recursion() {
    let _serial = serial();
    let mut s = String::from(HEAD);
    s.push_str("<object type=\"Machine\" cpuset=\"0x1\">\n");
    for _ in 0..10_000 {
        s.push_str("<object type=\"Group\" cpuset=\"0x1\">\n");
    }
    for _ in 0..10_000 {
        s.push_str("</object>");
    }
    s.push_str("</object></topology>");
    // A small stack proves the importer does not recurse per element.
    let e = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || import_err(s.as_bytes()))
        .unwrap()
        .join();
    let e = e.expect("no stack overflow, no panic");
    assert_eq!(
        e.kind(),
        &XmlErrorKind::TooDeep {
            limit: Limits::default().max_depth
        }
    );
    assert_eq!(e.line(), 3 + 255, "{e}");
    // Deep nesting inside a skipped element counts too.
    let mut s = String::from(HEAD);
    s.push_str("<userdata name=\"x\">");
    s.push_str(&"<a>".repeat(10_000));
    s.push_str(&"</a>".repeat(10_000));
    s.push_str("</userdata></topology>");
    let e = import_err(s.as_bytes());
    assert!(matches!(e.kind(), XmlErrorKind::TooDeep { .. }), "{e}");
}

#[test]
fn a_100_mb_attribute_is_refused_without_copying_it() {
    let _serial = serial();
    let big = "A".repeat(100 << 20);
    let doc = format!("{HEAD}<object type=\"Machine\" cpuset=\"0x1\" junk=\"{big}\"/></topology>");
    let e = import_err(doc.as_bytes());
    assert!(
        matches!(e.kind(), XmlErrorKind::AttributeTooLong { name, len, .. } if name == "junk" && *len == 100 << 20),
        "{e}"
    );
    assert_eq!(e.line(), 3);
    assert_eq!(e.element(), "<object type=\"Machine\">");
    let doc = machine(&format!("<info name=\"Huge\" value=\"{big}\"/>\n"));
    let e = import_err(doc.as_bytes());
    assert!(
        matches!(e.kind(), XmlErrorKind::AttributeTooLong { .. }),
        "{e}"
    );
    assert_eq!(e.line(), 9);
}

#[test]
fn documents_over_the_size_limit_are_refused_up_front() {
    let _serial = serial();
    let importer = Importer::with_limits(Limits {
        max_bytes: 1000,
        ..Limits::default()
    });
    let doc = machine(&"<!-- padding -->\n".repeat(100));
    let e = importer.import_str(&doc).unwrap_err();
    assert!(
        matches!(e.kind(), XmlErrorKind::TooLarge { limit: 1000, .. }),
        "{e}"
    );
}

#[test]
fn nul_bytes_are_refused_with_their_line() {
    let _serial = serial();
    let doc = machine("").replacen("eth0", "et\0h0", 1);
    let e = import_err(doc.as_bytes());
    assert_eq!(e.kind(), &XmlErrorKind::NulByte);
    assert_eq!(e.line(), 7);
    // As a character reference, too.
    let doc = machine("").replacen("eth0", "et&#0;h0", 1);
    let e = import_err(doc.as_bytes());
    assert!(
        matches!(e.kind(), XmlErrorKind::NulByte | XmlErrorKind::Syntax(_)),
        "{e}"
    );
    assert_eq!(e.line(), 7);
}

#[test]
fn bytes_that_are_not_utf8_are_refused() {
    let _serial = serial();
    let mut doc = machine("").into_bytes();
    let at = doc.windows(4).position(|w| w == b"eth0").unwrap();
    doc[at] = 0xff;
    let e = import_err(&doc);
    assert_eq!(e.kind(), &XmlErrorKind::NotUtf8);
    assert_eq!(e.line(), 7);
}

#[test]
fn invalid_cpusets_are_refused_with_the_attribute() {
    let _serial = serial();
    for (bad, why) in [
        ("0xzz", "unexpected 'z'"),
        ("", "unexpected end"),
        ("0x123456789", "unexpected '9'"),
        ("0xffffffff,0x1,0x2", "the machine's"),
    ] {
        let doc = machine("").replacen(
            "<object type=\"Package\" cpuset=\"0x0000000f\">",
            &format!("<object type=\"Package\" cpuset=\"{bad}\">"),
            1,
        );
        let e = import_err(doc.as_bytes());
        assert_eq!(e.line(), 4, "{bad}: {e}");
        assert!(e.to_string().contains(why), "{bad}: {e}");
        assert_eq!(e.element(), "<object type=\"Package\">");
    }
    // A mask wider than CpuSet::MAX_PUS.
    let huge = format!("0x1{}", ",0xffffffff".repeat(40_000));
    let doc = format!("{HEAD}<object type=\"Machine\" cpuset=\"{huge}\"/></topology>");
    let e = import_err(doc.as_bytes());
    assert!(e.to_string().contains("cpuset"), "{e}");
    // Missing altogether.
    let doc = machine("").replacen(
        " cpuset=\"0x0000000f\">\n<object type=\"Bridge\"",
        ">\n<object type=\"Bridge\"",
        1,
    );
    let e = import_err(doc.as_bytes());
    assert!(e.to_string().contains("needs a cpuset"), "{e}");
}

#[test]
fn duplicate_pci_addresses_and_names_name_both_lines() {
    let _serial = serial();
    let dup = "<object type=\"PCIDev\" pci_busid=\"0000:01:00.0\" pci_type=\"0200 [8086:1521] [0000:0000] 01\"/>\n";
    let e = import_err(machine(dup).as_bytes());
    assert_eq!(e.line(), 9);
    assert!(
        e.to_string()
            .ends_with("PCI address 0000:01:00.0 is already used by the object on line 6"),
        "{e}"
    );
    let dup = "<object type=\"PCIDev\" pci_busid=\"0000:02:00.0\"><object type=\"OSDev\" name=\"eth0\" osdev_type=\"2\"/></object>\n";
    let e = import_err(machine(dup).as_bytes());
    assert!(
        e.to_string()
            .contains("OS device name \"eth0\" is already used by the object on line 7"),
        "{e}"
    );
}

#[test]
fn unknown_or_misplaced_content_is_named() {
    let _serial = serial();
    let cases: &[(&str, &str, u32)] = &[
        (
            "<object type=\"Frobnicator\" cpuset=\"0x1\"/>\n",
            "unknown object type \"Frobnicator\"",
            9,
        ),
        ("<blob/>\n", "unknown element <blob>", 9),
        (
            "<object type=\"Bridge\" bridge_type=\"1-0\"/>\n",
            "attribute bridge_type=\"1-0\"",
            9,
        ),
        (
            "<object type=\"PCIDev\" pci_busid=\"0000:01:zz.0\"/>\n",
            "attribute pci_busid=\"0000:01:zz.0\"",
            9,
        ),
        (
            "<object type=\"PCIDev\" pci_busid=\"0000:03:00.0\" pci_type=\"net\"/>\n",
            "attribute pci_type=\"net\"",
            9,
        ),
        (
            "<object type=\"PCIDev\"/>\n",
            "missing attribute pci_busid",
            9,
        ),
        (
            "<object type=\"OSDev\" name=\"x\" osdev_type=\"9\"/>\n",
            "not a known hwloc type",
            9,
        ),
        (
            "<object type=\"OSDev\" name=\"x\" osdev_type=\"-1\"/>\n",
            "not a decimal integer",
            9,
        ),
        (
            "<object type=\"OSDev\" osdev_type=\"2\"/>\n",
            "missing attribute name",
            9,
        ),
        (
            "<object type=\"PCIDev\" pci_busid=\"0000:05:00.0\"><object type=\"OSDev\" name=\"\" osdev_type=\"2\"/></object>\n",
            "bad OS name",
            9,
        ),
        (
            "<object type=\"Package\" cpuset=\"0x1\"/>\n",
            "a Package cannot be placed under a host bridge",
            9,
        ),
        (
            "<object type=\"Machine\" cpuset=\"0x1\"/>\n",
            "a second root object",
            9,
        ),
        (
            "<object type=\"System\" cpuset=\"0x1\"/>\n",
            "System object",
            9,
        ),
        (
            "<object type=\"PCIDev\" pci_busid=\"0000:09:00.0\"><object type=\"PCIDev\" pci_busid=\"0000:09:00.1\"/></object>\n",
            "a PCIDev cannot be placed under a PCIDev",
            9,
        ),
        (
            "<object type=\"Bridge\" bridge_type=\"1-1\" pci_busid=\"0000:00:02.0\"><object type=\"OSDev\" name=\"y\" osdev_type=\"2\"/></object>\n",
            "an OSDev cannot be placed under a PCI bridge",
            9,
        ),
        (
            "<object type=\"Machine\" cpuset=\"0x1\" cpuset=\"0x1\"/>\n",
            "malformed XML",
            9,
        ),
    ];
    for (inner, want, line) in cases {
        let e = import_err(machine(inner).as_bytes());
        let msg = e.to_string();
        assert!(msg.contains(want), "{inner}: {msg}");
        assert_eq!(e.line(), *line, "{inner}: {msg}");
    }
}

#[test]
fn document_level_problems() {
    let _serial = serial();
    for (doc, want) in [
        ("", "the document element must be one <topology>"),
        ("<html/>", "the document element must be one <topology>"),
        (
            "<topology version=\"4.0\"/>",
            "unsupported hwloc XML version \"4.0\"",
        ),
        ("<topology version=\"2.0\"></topology>", "no Machine"),
        (
            "<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"0x1\"/></topology><topology/>",
            "one <topology>",
        ),
        (
            "<topology><object type=\"Machine\" cpuset=\"0x1\"></topology>",
            "malformed XML",
        ),
        (
            "<topology version=\"2.0\">&bogus;</topology>",
            "undeclared entity &bogus;",
        ),
    ] {
        let e = import_err(doc.as_bytes());
        assert!(e.to_string().contains(want), "{doc:?}: {e}");
    }
}

#[test]
fn garbage_bytes_never_panic() {
    let _serial = serial();
    // A cheap deterministic sweep in addition to the fuzz target: xorshift noise spliced
    // into a real file.
    let base = std::fs::read(pmix_testkit::hwloc_xml("power8gpudistances.xml")).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        let mut doc = base.clone();
        for _ in 0..8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x as usize) % doc.len();
            doc[at] = (x >> 32) as u8;
        }
        let _ = Importer::new().import_bytes(&doc);
    }
}
