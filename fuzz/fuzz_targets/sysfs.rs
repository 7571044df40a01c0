//! The sysfs scanner over arbitrary in-memory trees: a small valid tree (cpus, NUMA
//! nodes, a PCI tree, devices of every class) edited by arbitrary operations whose
//! paths and contents are drawn from sysfs' own vocabulary or are raw bytes, so
//! dangling and looping links, directories in place of files, huge or garbage files
//! and half-built trees all happen.
//!
//! Invariants: no panic; an error says `sysfs: ` and names a path; on success every
//! device's locality lies within the machine, every warning names a path, and a
//! second scan of the same tree gives the same devices and warnings.
//!
//! Cost: at most [`MAX_OPS`] operations and [`MAX_HUGE`] huge files an input (a
//! huge file is one byte under, at or over the file-size limit in force: the scanner
//! reads nothing past it); the base tree is built once and cloned. The second scan
//! reads through a recording of the first's filesystem answers: `MemFs` is a plain
//! tree read through `&self`, so asked the same question twice it answers the same,
//! and the replay answers only a question asked the same way at the same point
//! (anything else goes to the tree). It still runs all of the scanner, which is
//! what the check is about. It runs when the input's `recheck` is set (one input in
//! two, as the fuzzer mutates it like any other field): the scan is most of a run's
//! cost, and checking every tree twice kept a grown corpus under 10,000 runs/s. Every
//! tree the fuzzer reaches is rechecked as well, with that flag set, in a mutation
//! away.
#![no_main]

use std::cell::{Cell, RefCell};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmix_sysfs::{FileKind, FsError, Limits, MemFs, ReadFailure, Scanner, SysFs};

/// The most operations one input applies.
const MAX_OPS: usize = 32;
/// The most huge files one input writes (later `Huge` contents are skipped).
const MAX_HUGE: usize = 2;

/// Path components and contents sysfs uses.
const PARTS: &[&str] = &[
    "sys",
    "devices",
    "system",
    "cpu",
    "node",
    "cpu0",
    "cpu1",
    "cpu2",
    "node0",
    "node1",
    "online",
    "topology",
    "physical_package_id",
    "cpulist",
    "bus",
    "pci",
    "class",
    "net",
    "block",
    "infiniband",
    "drm",
    "dma",
    "ve",
    "pci0000:00",
    "pci0000:40",
    "pci10000:00",
    "0000:00:01.0",
    "0000:01:00.0",
    "0000:00:02.0",
    "0000:40:00.0",
    "10000:00:04.0",
    "local_cpulist",
    "local_cpus",
    "numa_node",
    "address",
    "node_guid",
    "sys_image_guid",
    "device",
    "partition",
    "eth0",
    "ib0",
    "mlx5_0",
    "sda",
    "sda1",
    "card0",
    "renderD128",
    "dma0chan0",
    "ve0",
    "virtual",
    "proc",
    "driver",
    "nvidia",
    "gpus",
    "information",
    "kernel",
    "hostname",
    "..",
    ".",
    "",
    // Appended, so that the corpus's indexes below the old length keep their
    // meaning: hwloc's host-name file, and a PCI function no link of the base tree
    // passes through.
    "hwloc-nofile-info",
    "0000:02:00.0",
];

const VALUES: &[&str] = &[
    "0-3\n",
    "0\n",
    "1\n",
    "-1\n",
    "2\n",
    "",
    "0x060400\n",
    "0x020000\n",
    "0x030200\n",
    "0x030000\n",
    "0x120000\n",
    "0x010802\n",
    "f\n",
    "00000000,0000000f\n",
    "0-1\n",
    "3\n",
    "00:11:22:33:44:55\n",
    "0002:c903:000a:8bc0\n",
    "node7\n",
    "Device Minor: 1\nGPU UUID: GPU-x\n",
    "abc",
    "0-1048575",
    "\u{0}",
    "1-0",
    ",,,",
    // Appended (see PARTS): a capture's host-name line.
    "HostName: node9\n",
];

#[derive(Arbitrary, Debug)]
enum Part {
    Known(u8),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Content {
    Known(u8),
    Raw(Vec<u8>),
    Huge(u8),
}

#[derive(Arbitrary, Debug)]
enum Op {
    File {
        path: Vec<Part>,
        content: Content,
    },
    Link {
        path: Vec<Part>,
        target: Vec<Part>,
        absolute: bool,
    },
    Dir {
        path: Vec<Part>,
    },
    Remove {
        path: Vec<Part>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    base: bool,
    ops: Vec<Op>,
    small_limits: bool,
    /// Whether this input also checks that a second scan agrees with the first (see
    /// the module's cost note).
    recheck: bool,
}

fn path(parts: &[Part]) -> String {
    parts
        .iter()
        .take(12)
        .map(|p| match p {
            Part::Known(i) => PARTS[*i as usize % PARTS.len()].to_owned(),
            Part::Raw(s) => s.chars().take(40).collect(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// One filesystem question and its answer.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Read(usize, Result<String, FsError>),
    ReadNoting(usize, Result<String, ReadFailure>),
    Link(usize, Result<String, FsError>),
    Dir(usize, Result<Vec<String>, FsError>),
    Kind(bool, Result<FileKind, FsError>),
    Display(String),
}

/// Records every answer of `fs` (`replay` unset), or gives back the recorded ones
/// (`replay` set) while the questions come in the same order.
struct Tape<'a> {
    fs: &'a MemFs,
    /// The paths asked about, one after another (one buffer rather than a string
    /// each).
    paths: RefCell<String>,
    /// Per question: where its path ends in `paths`, and the answer (taken when
    /// replayed: each is given back at most once).
    log: RefCell<Vec<(usize, Option<Answer>)>>,
    replay: bool,
    pos: Cell<usize>,
}

impl Tape<'_> {
    fn ask(
        &self,
        path: &str,
        same: impl Fn(&Answer) -> bool,
        fresh: impl FnOnce() -> Answer,
    ) -> Answer {
        if self.replay {
            let pos = self.pos.get();
            self.pos.set(pos + 1);
            let mut log = self.log.borrow_mut();
            let start = pos
                .checked_sub(1)
                .and_then(|p| log.get(p))
                .map_or(0, |e| e.0);
            if let Some((end, slot)) = log.get_mut(pos)
                && self.paths.borrow().get(start..*end) == Some(path)
                && slot.as_ref().is_some_and(&same)
                && let Some(a) = slot.take()
            {
                return a;
            }
            drop(log);
            return fresh();
        }
        let a = fresh();
        let mut paths = self.paths.borrow_mut();
        paths.push_str(path);
        self.log.borrow_mut().push((paths.len(), Some(a.clone())));
        a
    }
}

impl SysFs for Tape<'_> {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        match self.ask(
            path,
            |a| matches!(a, Answer::Read(c, _) if *c == cap),
            || Answer::Read(cap, self.fs.read_to_string(path, cap)),
        ) {
            Answer::Read(_, r) => r,
            _ => unreachable!("a read's answer"),
        }
    }

    fn read_noting_dangling(&self, path: &str, cap: usize) -> Result<String, ReadFailure> {
        match self.ask(
            path,
            |a| matches!(a, Answer::ReadNoting(c, _) if *c == cap),
            || Answer::ReadNoting(cap, self.fs.read_noting_dangling(path, cap)),
        ) {
            Answer::ReadNoting(_, r) => r,
            _ => unreachable!("a read's answer"),
        }
    }

    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        match self.ask(
            path,
            |a| matches!(a, Answer::Link(c, _) if *c == cap),
            || Answer::Link(cap, self.fs.read_link(path, cap)),
        ) {
            Answer::Link(_, r) => r,
            _ => unreachable!("a read_link's answer"),
        }
    }

    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError> {
        match self.ask(
            path,
            |a| matches!(a, Answer::Dir(c, _) if *c == max_entries),
            || Answer::Dir(max_entries, self.fs.read_dir(path, max_entries)),
        ) {
            Answer::Dir(_, r) => r,
            _ => unreachable!("a read_dir's answer"),
        }
    }

    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        match self.ask(
            path,
            |a| matches!(a, Answer::Kind(f, _) if *f == follow),
            || Answer::Kind(follow, self.fs.kind(path, follow)),
        ) {
            Answer::Kind(_, r) => r,
            _ => unreachable!("a kind's answer"),
        }
    }

    fn display(&self, path: &str) -> String {
        match self.ask(
            path,
            |a| matches!(a, Answer::Display(_)),
            || Answer::Display(self.fs.display(path)),
        ) {
            Answer::Display(r) => r,
            _ => unreachable!("a display's answer"),
        }
    }
}

thread_local! {
    static BASE: MemFs = base();
}

fn base() -> MemFs {
    let mut fs = MemFs::new();
    fs.file("sys/devices/system/cpu/online", "0-3\n");
    for c in 0..4 {
        fs.file(
            &format!("sys/devices/system/cpu/cpu{c}/topology/physical_package_id"),
            format!("{}\n", c / 2),
        );
    }
    fs.file("sys/devices/system/node/node0/cpulist", "0-1\n");
    fs.file("sys/devices/system/node/node1/cpulist", "2-3\n");
    for (p, class) in [
        ("pci0000:00/0000:00:01.0", "0x060400"),
        ("pci0000:00/0000:00:01.0/0000:01:00.0", "0x020000"),
        ("pci0000:00/0000:00:02.0", "0x030200"),
        ("pci0000:40/0000:40:00.0", "0x030000"),
        ("pci10000:00/10000:00:04.0", "0x010802"),
    ] {
        let bdf = p.rsplit('/').next().unwrap_or_default();
        fs.file(&format!("sys/devices/{p}/class"), class);
        fs.symlink(
            &format!("sys/bus/pci/devices/{bdf}"),
            &format!("../../../devices/{p}"),
        );
    }
    fs.file("sys/devices/pci0000:00/0000:00:01.0/local_cpulist", "0-1\n");
    fs.file("sys/devices/pci0000:40/0000:40:00.0/numa_node", "1\n");
    let nic = "devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    fs.symlink("sys/class/net/eth0", &format!("../../{nic}/net/eth0"));
    fs.file(
        &format!("sys/{nic}/net/eth0/address"),
        "00:11:22:33:44:55\n",
    );
    fs.symlink(
        "sys/class/infiniband/mlx5_0",
        &format!("../../{nic}/infiniband/mlx5_0"),
    );
    fs.file(
        &format!("sys/{nic}/infiniband/mlx5_0/node_guid"),
        "0002:c903:000a:8bc0\n",
    );
    fs.symlink(
        "sys/class/block/nvme0n1",
        "../../devices/pci10000:00/10000:00:04.0/nvme/nvme0/nvme0n1",
    );
    fs.symlink(
        "sys/class/drm/card0",
        "../../devices/pci0000:40/0000:40:00.0/drm/card0",
    );
    fs.symlink(
        "sys/class/drm/renderD128",
        "../../devices/pci0000:40/0000:40:00.0/drm/renderD128",
    );
    fs.symlink(
        "sys/class/block/pmem0",
        "../../devices/platform/nd/block/pmem0",
    );
    fs.file(
        "proc/driver/nvidia/gpus/0000:00:02.0/information",
        "Device Minor: 0\nGPU UUID: GPU-1\n",
    );
    fs.file("proc/sys/kernel/hostname", "node7\n");
    fs
}

fuzz_target!(|input: Input| {
    let limits = if input.small_limits {
        Limits {
            max_file_bytes: 64,
            max_dir_entries: 8,
            max_pci_depth: 2,
            max_link_len: 64,
        }
    } else {
        Limits::default()
    };
    let mut fs = if input.base {
        BASE.with(MemFs::clone)
    } else {
        MemFs::new()
    };
    let mut huge = 0;
    for op in input.ops.iter().take(MAX_OPS) {
        match op {
            Op::File { path: p, content } => {
                let bytes: Vec<u8> = match content {
                    Content::Known(i) => VALUES[*i as usize % VALUES.len()].as_bytes().to_vec(),
                    Content::Raw(b) => b.iter().copied().take(256).collect(),
                    Content::Huge(_) if huge == MAX_HUGE => continue,
                    Content::Huge(n) => {
                        huge += 1;
                        vec![b'1'; limits.max_file_bytes - 1 + *n as usize % 3]
                    }
                };
                fs.file(&path(p), bytes);
            }
            Op::Link {
                path: p,
                target,
                absolute,
            } => {
                let t = path(target);
                let t = if *absolute { format!("/{t}") } else { t };
                fs.symlink(&path(p), &t);
            }
            Op::Dir { path: p } => {
                fs.dir(&path(p));
            }
            Op::Remove { path: p } => {
                fs.remove(&path(p));
            }
        }
    }
    let mut tape = Tape {
        fs: &fs,
        paths: RefCell::new(String::new()),
        log: RefCell::new(Vec::new()),
        replay: false,
        pos: Cell::new(0),
    };
    let first = Scanner::new(&tape).with_limits(limits).scan();
    match first {
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("sysfs: "), "{msg}");
            let _ = pmix_core::PmixError::status(&e);
        }
        Ok(scan) => {
            let t = &scan.topology;
            for d in t.devices() {
                assert!(d.locality().is_subset(t.machine_cpus()), "{}", d.name());
            }
            for w in &scan.warnings {
                assert!(w.path.starts_with('/'), "{w}");
            }
            if !input.recheck {
                return;
            }
            tape.replay = true;
            let again = Scanner::new(&tape)
                .with_limits(limits)
                .scan()
                .expect("a second scan of the same tree succeeds too");
            let names = |t: &pmix_core::Topology| {
                t.devices()
                    .iter()
                    .map(|d| d.uuid().to_owned())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(t), names(&again.topology));
            assert_eq!(scan.warnings, again.warnings);
        }
    }
});
