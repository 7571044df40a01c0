//! `pmix-topo`: device distances, the device matrix and the topology tree of a node
//! (DESIGN §7).
//!
//! ```text
//! pmix-topo distances [--source SRC] [--cpus LIST | --origin NAME] [--types T] [--id NAME]...
//!                     [--hostname NAME] [--format table|json]
//! pmix-topo matrix    [--source SRC] [--types T] [--format table|json]
//! pmix-topo tree      [--source SRC]
//! ```
//!
//! Exit status: 0 on success, 2 on a PMIx error (in JSON, one object
//! `{"status": "PMIX_ERR_…", "code": …, "message": …}` on standard output), 64 on a
//! usage error (a message on standard error).

use std::fmt::Write as _;

use pmix::topology::OpenError;
use pmix_core::{
    CpuSet, DeviceDistance, DeviceTypes, NodeKind, PmixError, Query, Status, Topology,
};

use crate::json;

/// Exit status of a usage error (`EX_USAGE`).
pub const EXIT_USAGE: i32 = 64;
/// Exit status of a PMIx error.
pub const EXIT_PMIX: i32 = 2;

/// The usage text.
pub const USAGE: &str = "\
usage: pmix-topo distances [--source SRC] [--cpus LIST | --origin NAME] [--types T] [--id NAME]...
                           [--hostname NAME] [--format table|json]
       pmix-topo matrix    [--source SRC] [--types T] [--format table|json]
       pmix-topo tree      [--source SRC]

  --source SRC    sysfs (this machine, default), sysfs:DIR (a captured tree), xml:FILE (hwloc XML),
                  hwloc (libhwloc, in builds with the `native` feature)
  --cpus LIST     the process location, a cpu list (0-3,8); default: this process's binding
  --origin NAME   measure from a device (osname, uuid, vendor id or PCI bus id) instead
  --types T       a mask (0x6) or names (gpu,network,openfabrics,block,dma,coproc,all)
  --id NAME       only this device (repeatable)
  --hostname NAME the host name in uuids
  --format F      table (default) or json
";

/// What went wrong, and how the program ends.
#[derive(Debug)]
enum Failure {
    /// A bad command line: exit 64.
    Usage(String),
    /// A PMIx error: exit 2.
    Pmix { status: Status, message: String },
}

impl Failure {
    fn pmix(e: &(impl PmixError + std::fmt::Display)) -> Self {
        Failure::Pmix {
            status: e.status(),
            message: e.to_string(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    Table,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Command {
    Distances,
    Matrix,
    Tree,
}

#[derive(Debug)]
struct Args {
    command: Command,
    source: String,
    cpus: Option<String>,
    origin: Option<String>,
    types: Option<DeviceTypes>,
    ids: Vec<String>,
    hostname: Option<String>,
    format: Format,
}

/// What a run printed and how it ends.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit status.
    pub code: i32,
}

/// Runs `pmix-topo` with `args` (without the program name).
pub fn run(args: &[String]) -> Outcome {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Outcome {
            stdout: USAGE.to_owned(),
            ..Outcome::default()
        };
    }
    let parsed = match parse(args) {
        Ok(a) => a,
        Err(msg) => return usage_failure(&msg),
    };
    let format = parsed.format;
    match execute(&parsed) {
        Ok(stdout) => Outcome {
            stdout,
            ..Outcome::default()
        },
        Err(Failure::Usage(msg)) => usage_failure(&msg),
        Err(Failure::Pmix { status, message }) => {
            let name = status.name().unwrap_or("PMIX_ERROR");
            if format == Format::Json {
                let mut out = String::new();
                let mut o = json::Object::new(&mut out);
                o.str("status", name)
                    .int("code", i64::from(status.0))
                    .str("message", &message);
                o.end();
                out.push('\n');
                Outcome {
                    stdout: out,
                    stderr: String::new(),
                    code: EXIT_PMIX,
                }
            } else {
                Outcome {
                    stdout: String::new(),
                    stderr: format!("pmix-topo: {name} ({}): {message}\n", status.0),
                    code: EXIT_PMIX,
                }
            }
        }
    }
}

fn usage_failure(msg: &str) -> Outcome {
    Outcome {
        stdout: String::new(),
        stderr: format!("pmix-topo: {msg}\n{USAGE}"),
        code: EXIT_USAGE,
    }
}

fn parse(args: &[String]) -> Result<Args, String> {
    let Some(cmd) = args.first() else {
        return Err("missing command (distances, matrix or tree)".into());
    };
    let command = match cmd.as_str() {
        "distances" => Command::Distances,
        "matrix" => Command::Matrix,
        "tree" => Command::Tree,
        other => {
            return Err(format!(
                "unknown command {other:?} (expected distances, matrix or tree)"
            ));
        }
    };
    let mut a = Args {
        command,
        source: "sysfs".into(),
        cpus: None,
        origin: None,
        types: None,
        ids: Vec::new(),
        hostname: None,
        format: Format::Table,
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let arg = &args[i];
        let (opt, inline) = match arg.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let allowed: &[&str] = match command {
            Command::Distances => &[
                "--source",
                "--cpus",
                "--origin",
                "--types",
                "--id",
                "--hostname",
                "--format",
            ],
            Command::Matrix => &["--source", "--types", "--format"],
            Command::Tree => &["--source"],
        };
        let Some(&opt) = allowed.iter().find(|&&o| o == opt) else {
            return Err(format!("unexpected argument {arg:?} for {cmd}"));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{opt} needs a value"))?
            }
        };
        if opt != "--id" {
            if seen.contains(&opt) {
                return Err(format!("{opt} given twice"));
            }
            seen.push(opt);
        }
        match opt {
            "--source" => a.source = value,
            "--cpus" => a.cpus = Some(value),
            "--origin" => a.origin = Some(value),
            "--types" => a.types = Some(parse_types(&value)?),
            "--id" => a.ids.push(value),
            "--hostname" => a.hostname = Some(value),
            _ => {
                a.format = match value.as_str() {
                    "table" => Format::Table,
                    "json" => Format::Json,
                    other => {
                        return Err(format!("unknown format {other:?} (expected table or json)"));
                    }
                }
            }
        }
        i += 1;
    }
    if a.cpus.is_some() && a.origin.is_some() {
        return Err("--cpus and --origin exclude each other".into());
    }
    Ok(a)
}

/// `0x6`, `6`, or `gpu,network`. Masks are passed on as given (the core refuses empty
/// or unknown bits with `PMIX_ERR_BAD_PARAM`); names must be known.
fn parse_types(s: &str) -> Result<DeviceTypes, String> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map(DeviceTypes)
            .map_err(|_| format!("bad type mask {s:?}"));
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map(DeviceTypes)
            .map_err(|_| format!("bad type mask {s:?}"));
    }
    let mut t = DeviceTypes(0);
    for name in s.split(',') {
        let name = name.trim();
        t = t
            | if name.eq_ignore_ascii_case("all") {
                DeviceTypes::ALL
            } else {
                DeviceTypes::from_name(name).ok_or_else(|| {
                format!("unknown device type {name:?} (expected gpu, network, openfabrics, block, dma, coproc or all)")
            })?
            };
    }
    Ok(t)
}

fn load(args: &Args) -> Result<Topology, Failure> {
    let source = match pmix::topology::open_source(&args.source) {
        Ok(s) => s,
        Err(e @ OpenError::UnknownSource(_)) => return Err(Failure::Usage(e.to_string())),
        Err(e) => return Err(Failure::pmix(&e)),
    };
    let topo = source.load().map_err(|e| Failure::pmix(&e))?;
    match &args.hostname {
        Some(h) => topo.with_hostname(h).map_err(|e| Failure::pmix(&e)),
        None => Ok(topo),
    }
}

fn execute(args: &Args) -> Result<String, Failure> {
    // Check what needs no topology first, so a bad list is a usage error whatever the
    // source says.
    let cpus = match &args.cpus {
        Some(list) => Some(
            CpuSet::parse_list(list)
                .map_err(|e| Failure::Usage(format!("--cpus {list:?}: {e}")))?,
        ),
        None => None,
    };
    let topo = load(args)?;
    if let Some(c) = &cpus {
        check_cpus_in_machine(c, &topo)?;
    }
    match args.command {
        Command::Distances => distances(&topo, args, cpus),
        Command::Matrix => matrix(&topo, args),
        Command::Tree => Ok(tree(&topo)),
    }
}

/// `--cpus` naming PUs the machine lacks is a usage error naming them (a C caller's
/// cpuset may hold such PUs and they are ignored, DESIGN §3.2; on the command line they
/// are a typo, and dropping them silently would answer another question).
fn check_cpus_in_machine(cpus: &CpuSet, topo: &Topology) -> Result<(), Failure> {
    let machine = topo.machine_cpus();
    if !cpus.has_outside(machine) {
        return Ok(());
    }
    let outside = CpuSet::from_pus(cpus.iter().filter(|&p| !machine.contains(p)));
    let (noun, verb) = if outside.len() == 1 {
        ("PU", "is")
    } else {
        ("PUs", "are")
    };
    Err(Failure::Usage(format!(
        "--cpus {cpus}: {noun} {outside} {verb} not in this machine, whose PUs are {machine}"
    )))
}

/// The calling process's binding, from `/proc/self/status` (`Cpus_allowed_list`): the
/// affinity mask `sched_getaffinity` reports, without `unsafe`.
fn own_binding() -> Result<CpuSet, Failure> {
    let fail = |why: String| Failure::Pmix {
        status: Status::ERR_NOT_FOUND,
        message: format!("cannot read this process's binding ({why}): pass --cpus LIST"),
    };
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| fail(format!("/proc/self/status: {e}")))?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| fail("no Cpus_allowed_list in /proc/self/status".into()))?;
    CpuSet::parse_list(line.trim()).map_err(|e| fail(format!("Cpus_allowed_list {line:?}: {e}")))
}

fn run_query(topo: &Topology, q: &Query<'_>) -> Result<Vec<DeviceDistance>, Failure> {
    let n = topo.distances_len(q).map_err(|e| Failure::pmix(&e))?;
    let mut out = vec![DeviceDistance::EMPTY; n];
    let n = topo.distances(q, &mut out).map_err(|e| Failure::pmix(&e))?;
    out.truncate(n);
    Ok(out)
}

fn distances(topo: &Topology, args: &Args, cpus: Option<CpuSet>) -> Result<String, Failure> {
    let ids: Vec<&str> = args.ids.iter().map(String::as_str).collect();
    let origin_cpus: CpuSet;
    // What the answer is measured from: a line over the table, a key in JSON.
    let (from, json_from): (String, (&str, String));
    let mut q = match &args.origin {
        Some(o) => {
            from = format!("from device {o}");
            json_from = ("origin", o.clone());
            Query::from_device(o)
        }
        None => {
            origin_cpus = match cpus {
                Some(c) => {
                    from = format!("from cpus {c}");
                    c
                }
                None => {
                    let c = own_binding()?;
                    from = format!("from cpus {c} (this process's binding)");
                    c
                }
            };
            json_from = ("cpus", origin_cpus.to_string());
            Query::from_cpuset(&origin_cpus)
        }
    };
    q = q.ids(&ids);
    if let Some(t) = args.types {
        q = q.types(t);
    }
    let result = run_query(topo, &q)?;
    let rows: Vec<[String; 6]> = result
        .iter()
        .filter_map(|d| {
            let dev = topo.device(d.device)?;
            Some([
                dev.kind().name().unwrap_or("?").to_owned(),
                dev.pci().map_or_else(|| "-".to_owned(), |p| p.to_string()),
                dev.name().to_owned(),
                dev.uuid().to_owned(),
                d.mindist.to_string(),
                d.maxdist.to_string(),
            ])
        })
        .collect();
    if args.format == Format::Json {
        let mut out = String::new();
        let mut o = json::Object::new(&mut out);
        o.str("status", "SUCCESS");
        o.str(json_from.0, &json_from.1);
        let list = o.key("distances");
        list.push('[');
        for (i, (r, d)) in rows.iter().zip(&result).enumerate() {
            if i > 0 {
                list.push_str(", ");
            }
            let mut e = json::Object::new(list);
            let pci = (r[1] != "-").then_some(r[1].as_str());
            e.str("uuid", &r[3])
                .str("osname", &r[2])
                .str("type", &r[0])
                .opt_str("pci", pci)
                .int("mindist", i64::from(d.mindist))
                .int("maxdist", i64::from(d.maxdist));
            e.end();
        }
        list.push(']');
        o.end();
        out.push('\n');
        return Ok(out);
    }
    let mut out = from;
    out.push('\n');
    let header = ["TYPE", "PCI", "OSNAME", "UUID", "MIN", "MAX"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |out: &mut String, cells: [&str; 6]| {
        let mut s = String::new();
        for (k, (c, w)) in cells.iter().zip(widths).enumerate() {
            if k > 0 {
                s.push_str("  ");
            }
            // Numbers right-aligned, text left-aligned.
            if k >= 4 {
                let _ = write!(s, "{c:>w$}");
            } else {
                let _ = write!(s, "{c:<w$}");
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut out, header);
    for r in &rows {
        line(&mut out, [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]);
    }
    out.push_str(match &args.origin {
        Some(_) => {
            "distance = 16 x tier + bridges; tiers: 0 same device, 1 same PCIe switch or root port, 2 same host bridge, 3 same package, 4 another package\n"
        }
        None => {
            "distance = 16 x tier + PCIe depth; tiers: 0 local (the cpu is in the device's locality), 1 same package, 2 another package\n"
        }
    });
    Ok(out)
}

/// The `nvidia-smi topo -m` word for a device-to-device distance.
fn tier_word(dist: u16) -> &'static str {
    match (dist / 16, dist % 16) {
        (0, _) => "X",
        (1, hops) if hops <= 2 => "PIX",
        (1, _) => "PXB",
        (2, _) => "PHB",
        (3, _) => "NODE",
        _ => "SYS",
    }
}

fn matrix(topo: &Topology, args: &Args) -> Result<String, Failure> {
    let types = args.types.unwrap_or(DeviceTypes::DEFAULT);
    let everything = topo.machine_cpus().clone();
    let entries = run_query(topo, &Query::from_cpuset(&everything).types(types))?;
    let names: Vec<&str> = entries
        .iter()
        .filter_map(|e| topo.device(e.device).map(|d| d.name()))
        .collect();
    let mut dist: Vec<Vec<Option<u16>>> = Vec::with_capacity(names.len());
    for n in &names {
        let row = run_query(topo, &Query::from_device(n).types(types))?;
        dist.push(
            entries
                .iter()
                .map(|e| row.iter().find(|r| r.device == e.device).map(|r| r.mindist))
                .collect(),
        );
    }
    if args.format == Format::Json {
        let mut out = String::new();
        let mut o = json::Object::new(&mut out);
        o.str("status", "SUCCESS");
        let devs = o.key("devices");
        devs.push('[');
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                devs.push_str(", ");
            }
            let Some(d) = topo.device(e.device) else {
                continue;
            };
            let pci = d.pci().map(|p| p.to_string());
            let mut j = json::Object::new(devs);
            j.str("osname", d.name())
                .str("type", d.kind().name().unwrap_or("?"))
                .opt_str("pci", pci.as_deref())
                .str("uuid", d.uuid());
            j.end();
        }
        devs.push(']');
        for (key, word) in [("matrix", true), ("distances", false)] {
            let m = o.key(key);
            m.push('[');
            for (i, row) in dist.iter().enumerate() {
                if i > 0 {
                    m.push_str(", ");
                }
                m.push('[');
                for (k, v) in row.iter().enumerate() {
                    if k > 0 {
                        m.push_str(", ");
                    }
                    match (v, word) {
                        (Some(v), true) => json::string(m, tier_word(*v)),
                        (Some(v), false) => {
                            let _ = write!(m, "{v}");
                        }
                        (None, _) => m.push_str("null"),
                    }
                }
                m.push(']');
            }
            m.push(']');
        }
        o.end();
        out.push('\n');
        return Ok(out);
    }
    let w = names.iter().map(|n| n.len()).max().unwrap_or(0).max(4);
    let mut out = String::new();
    let mut head = format!("{:w$}", "");
    for n in &names {
        let _ = write!(head, "  {n:<w$}");
    }
    out.push_str(head.trim_end());
    out.push('\n');
    for (n, row) in names.iter().zip(&dist) {
        let mut line = format!("{n:<w$}");
        for v in row {
            let _ = write!(line, "  {:<w$}", v.map_or("-", tier_word));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(
        "Legend: X = same device, PIX = same PCIe switch or root port (at most 2 bridges), \
         PXB = several PCIe bridges, PHB = same host bridge, NODE = same package, another host bridge, \
         SYS = another package\n",
    );
    Ok(out)
}

fn tree(topo: &Topology) -> String {
    let mut out = String::new();
    let mut stack = vec![(0u32, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        let Some(node) = topo.node(pmix_core::NodeId(id)) else {
            continue;
        };
        let pad = "  ".repeat(depth);
        let cpus = node.cpuset().map(ToString::to_string).unwrap_or_default();
        let class = node
            .pci_class()
            .map(|c| format!(" class {c:04x}"))
            .unwrap_or_default();
        let pci = node.pci().map(|p| p.to_string()).unwrap_or_default();
        let line = match node.kind() {
            NodeKind::Machine => format!("Machine cpus {cpus} host {}", topo.hostname()),
            NodeKind::Package => format!("Package cpus {cpus}"),
            NodeKind::Numa => format!("NUMA cpus {cpus}"),
            NodeKind::Group => format!("Group cpus {cpus}"),
            NodeKind::HostBridge => format!("HostBridge locality {cpus}"),
            NodeKind::PciBridge => format!("PCIBridge {pci}{class}"),
            NodeKind::PciFunction => format!("PCI {pci}{class}"),
            NodeKind::OsDevice => match node.device().and_then(|d| topo.device(d)) {
                Some(d) => format!(
                    "{} {} {}",
                    d.name(),
                    d.kind().name().unwrap_or("?"),
                    d.uuid()
                ),
                None => "OS device".to_owned(),
            },
        };
        let _ = writeln!(out, "{pad}{line}");
        for &c in topo.children(pmix_core::NodeId(id)).iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn type_parsing() {
        assert_eq!(parse_types("0x6"), Ok(DeviceTypes(6)));
        assert_eq!(parse_types("12"), Ok(DeviceTypes(12)));
        assert_eq!(
            parse_types("gpu,Network"),
            Ok(DeviceTypes::GPU | DeviceTypes::NETWORK)
        );
        assert_eq!(parse_types("all"), Ok(DeviceTypes::ALL));
        assert!(parse_types("gpu,nic").is_err());
        assert!(parse_types("0xzz").is_err());
        assert!(parse_types("").is_err());
    }

    #[test]
    fn words_follow_nvidia_smi() {
        assert_eq!(tier_word(0), "X");
        assert_eq!(tier_word(16), "PIX");
        assert_eq!(tier_word(18), "PIX");
        assert_eq!(tier_word(19), "PXB");
        assert_eq!(tier_word(33), "PHB");
        assert_eq!(tier_word(48), "NODE");
        assert_eq!(tier_word(70), "SYS");
    }

    #[test]
    fn argument_errors_are_usage_errors() {
        for bad in [
            &[][..],
            &["frobnicate"],
            &["distances", "--cpus"],
            &["distances", "--cpus", "0", "--origin", "eth0"],
            &["distances", "--format", "yaml"],
            &["distances", "--types", "nic"],
            &["tree", "--types", "gpu"],
            &["matrix", "--source", "x", "--source", "y"],
        ] {
            assert_eq!(run(&args(bad)).code, EXIT_USAGE, "{bad:?}");
        }
        assert_eq!(
            run(&args(&[
                "distances",
                "--cpus",
                "0-x",
                "--source",
                "xml:/nonexistent"
            ]))
            .code,
            EXIT_USAGE
        );
        assert_eq!(run(&args(&["--help"])).code, 0);
    }
}
