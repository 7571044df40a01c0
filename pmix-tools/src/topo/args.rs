//! The command line of `pmix-topo` (docs/design.md §7), declared with clap's derive: the
//! subcommands and their flags, the parsers of the values that have a grammar
//! (`--source`, `--cpus`, `--types`), the synopsis, and how clap's own outcomes become
//! pmix-topo's: help and version on standard output (exit 0), every parse error a
//! usage error (exit 64, never clap's 2, which is pmix-topo's PMIx error), with the
//! synopsis under it. Shell completions come from the same declaration.

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;
use pmix::topology::OpenError;
use pmix_core::{CpuSet, DeviceTypes};
use std::path::PathBuf;

/// The synopsis: every subcommand with every flag it takes.
pub const USAGE: &str = "\
pmix-topo distances [--source SRC] [--cpus LIST | --origin NAME] [--types T] [--id NAME]...
                           [--hostname NAME] [--format table|json]
       pmix-topo matrix    [--source SRC] [--types T] [--format table|json]
       pmix-topo tree      [--source SRC]
       pmix-topo draw      [--source SRC] [--cpus LIST | --origin NAME] [--out FILE.svg]
                           [--png FILE.png]
       pmix-topo completions SHELL";

/// The help page's layout: the synopsis first, as pmix-topo has always printed it.
const HELP_TEMPLATE: &str = "usage: {usage}\n\n{about-with-newline}\n{all-args}{after-help}";

/// The help page of a subcommand.
const SUBCOMMAND_HELP_TEMPLATE: &str = "usage: {usage}\n\n{about-with-newline}\n{all-args}";

/// What the help page says below the flags.
const AFTER_HELP: &str = "\
Run 'pmix-topo COMMAND --help' for a command's flags. Exit status: 0 on success, 2 on a
PMIx error (in JSON, one object {\"status\": \"PMIX_ERR_...\", \"code\": ..., \"message\": ...}),
64 on a usage error, 73 when draw cannot write --out or --png.";

/// `pmix-topo`: device distances, the device matrix and the topology tree of a node.
#[derive(Debug, Parser)]
#[command(
    name = "pmix-topo",
    version,
    about = "Device distances, the device matrix and the topology tree of a node (PMIx_Compute_distances)",
    override_usage = USAGE,
    help_template = HELP_TEMPLATE,
    after_help = AFTER_HELP,
    disable_help_subcommand = true,
    arg_required_else_help = false
)]
pub struct Cli {
    /// What to print.
    #[command(subcommand)]
    pub command: Command,
}

/// A subcommand and its flags.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The distances from a process location (a cpu list, default this process's
    /// binding) or from a device to the node's devices.
    #[command(
        override_usage = "pmix-topo distances [--source SRC] [--cpus LIST | --origin NAME] [--types T] [--id NAME]...\n                           [--hostname NAME] [--format table|json]",
        help_template = SUBCOMMAND_HELP_TEMPLATE
    )]
    Distances(DistancesArgs),
    /// The device × device matrix, in the words of `nvidia-smi topo -m`.
    #[command(
        override_usage = "pmix-topo matrix [--source SRC] [--types T] [--format table|json]",
        help_template = SUBCOMMAND_HELP_TEMPLATE
    )]
    Matrix(MatrixArgs),
    /// The topology tree: processors, then the I/O hierarchy down to the OS devices.
    #[command(
        override_usage = "pmix-topo tree [--source SRC]",
        help_template = SUBCOMMAND_HELP_TEMPLATE
    )]
    Tree(SourceArg),
    /// An SVG picture of the node: packages, NUMA domains, the PCIe tree and every
    /// device, coloured and labelled by its distance from a cpu list (default this
    /// process's binding) or from a device, with a legend; `--png` renders it to PNG.
    #[command(
        override_usage = "pmix-topo draw [--source SRC] [--cpus LIST | --origin NAME] [--out FILE.svg] [--png FILE.png]",
        help_template = SUBCOMMAND_HELP_TEMPLATE
    )]
    Draw(DrawArgs),
    /// A completion script for SHELL, on standard output.
    #[command(
        override_usage = "pmix-topo completions SHELL",
        help_template = SUBCOMMAND_HELP_TEMPLATE
    )]
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        #[arg(value_enum, value_name = "SHELL")]
        shell: Shell,
    },
}

/// `--source SRC`: where the topology comes from.
#[derive(Debug, Args)]
pub struct SourceArg {
    /// sysfs (this machine, default), sysfs:DIR (a captured tree), xml:FILE (an hwloc
    /// XML export), hwloc (libhwloc, in builds with the `native` feature).
    #[arg(long, value_name = "SRC", default_value = pmix::topology::DEFAULT_SOURCE, value_parser = parse_source)]
    pub source: String,
}

/// The flags of `distances`.
#[derive(Debug, Args)]
pub struct DistancesArgs {
    /// Where the topology comes from.
    #[command(flatten)]
    pub source: SourceArg,
    /// The process location, a cpu list (0-3,8); default: this process's binding (the
    /// union of its threads' bindings).
    #[arg(long, value_name = "LIST", value_parser = parse_cpus, conflicts_with = "origin")]
    pub cpus: Option<CpuSet>,
    /// Measure from a device (osname, uuid, vendor id or PCI bus id) instead.
    #[arg(long, value_name = "NAME")]
    pub origin: Option<String>,
    /// The device types: a mask (0x6) or names (gpu,network,openfabrics,block,dma,coproc,all).
    #[arg(long, value_name = "T", value_parser = parse_types)]
    pub types: Option<DeviceTypes>,
    /// Only this device (repeatable).
    #[arg(long = "id", value_name = "NAME")]
    pub ids: Vec<String>,
    /// The host name in the uuids, instead of the topology's own.
    #[arg(long, value_name = "NAME")]
    pub hostname: Option<String>,
    /// The output format.
    #[arg(long, value_enum, value_name = "F", default_value_t = Format::Table)]
    pub format: Format,
}

/// The flags of `matrix`.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Where the topology comes from.
    #[command(flatten)]
    pub source: SourceArg,
    /// The device types: a mask (0x6) or names (gpu,network,openfabrics,block,dma,coproc,all).
    #[arg(long, value_name = "T", value_parser = parse_types)]
    pub types: Option<DeviceTypes>,
    /// The output format.
    #[arg(long, value_enum, value_name = "F", default_value_t = Format::Table)]
    pub format: Format,
}

/// The flags of `draw`.
#[derive(Debug, Args)]
pub struct DrawArgs {
    /// Where the topology comes from.
    #[command(flatten)]
    pub source: SourceArg,
    /// Colour by the distance from this cpu list (0-3,8); default: this process's
    /// binding (the union of its threads' bindings).
    #[arg(long, value_name = "LIST", value_parser = parse_cpus, conflicts_with = "origin")]
    pub cpus: Option<CpuSet>,
    /// Colour by the distance from a device (osname, uuid, vendor id or PCI bus id)
    /// instead.
    #[arg(long, value_name = "NAME")]
    pub origin: Option<String>,
    /// Write the SVG to FILE; default: standard output, unless --png is given alone.
    #[arg(long, value_name = "FILE.svg")]
    pub out: Option<PathBuf>,
    /// Also render the SVG to a PNG in FILE (text in the first monospace font found
    /// on the system; boxes without text when there is none).
    #[arg(long, value_name = "FILE.png")]
    pub png: Option<PathBuf>,
}

/// How results and PMIx errors are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns with a legend; errors on standard error.
    Table,
    /// One JSON object on standard output, errors included.
    Json,
}

impl Command {
    /// The output format the command asked for (errors are printed in it).
    pub fn format(&self) -> Format {
        match self {
            Command::Distances(a) => a.format,
            Command::Matrix(a) => a.format,
            Command::Tree(_) | Command::Draw(_) | Command::Completions { .. } => Format::Table,
        }
    }
}

/// What parsing the command line ended in, when it gives no command to run.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// `--help` or `--version`: this text goes to standard output, exit 0.
    Print(String),
    /// A usage error: this message (without the synopsis), exit 64.
    Usage(String),
}

/// Parses `args` (without the program name).
///
/// # Errors
/// [`Stop::Print`] for `--help` and `--version`, [`Stop::Usage`] with clap's message
/// for anything it refuses (an unknown command or flag, a missing or repeated one, a
/// value its parser refuses, `--cpus` with `--origin`).
pub fn parse(args: &[String]) -> Result<Cli, Stop> {
    let argv = std::iter::once("pmix-topo").chain(args.iter().map(String::as_str));
    Cli::try_parse_from(argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let mut text = e.render().to_string();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Stop::Print(text)
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            Stop::Usage("missing command (distances, matrix, tree, draw or completions)".into())
        }
        _ => Stop::Usage(message(&e.render().to_string())),
    })
}

/// Clap's rendered error without its `error: ` prefix, its own usage lines and its
/// pointer to `--help` (the caller prints pmix-topo's synopsis and pointer instead);
/// tips are kept.
fn message(rendered: &str) -> String {
    let body = rendered.strip_prefix("error: ").unwrap_or(rendered);
    let end = ["\nUsage:", "\nFor more information"]
        .iter()
        .filter_map(|tail| body.find(tail))
        .min();
    body[..end.unwrap_or(body.len())].trim_end().to_owned()
}

/// The completion script of `pmix-topo` for `shell`.
pub fn completions(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "pmix-topo", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// `--source`: a name [`pmix::topology::open_source`] knows. A known backend missing
/// from this build (`hwloc` without `native`) passes here and is a PMIx error
/// (`PMIX_ERR_NOT_SUPPORTED`) when loaded.
fn parse_source(s: &str) -> Result<String, String> {
    match pmix::topology::open_source(s) {
        Err(e @ OpenError::UnknownSource(_)) => Err(e.to_string()),
        _ => Ok(s.to_owned()),
    }
}

/// `--cpus`: a cpu list (`0-3,8`).
fn parse_cpus(s: &str) -> Result<CpuSet, String> {
    CpuSet::parse_list(s).map_err(|e| e.to_string())
}

/// `--types`: `0x6`, `6`, or `gpu,network` (and `all`). Masks are passed on as given
/// (the core refuses empty or unknown bits with `PMIX_ERR_BAD_PARAM`); names must be
/// known.
pub fn parse_types(s: &str) -> Result<DeviceTypes, String> {
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
                format!(
                    "unknown device type {name:?} (expected gpu, network, openfabrics, block, dma, coproc or all)"
                )
            })?
            };
    }
    Ok(t)
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
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_synopsis_names_every_subcommand_and_every_flag_clap_knows() {
        for sub in Cli::command().get_subcommands() {
            assert!(
                USAGE.contains(&format!("pmix-topo {}", sub.get_name())),
                "{}",
                sub.get_name()
            );
            for arg in sub.get_arguments() {
                if let Some(long) = arg.get_long() {
                    assert!(
                        long == "help" || USAGE.contains(&format!("--{long}")),
                        "--{long}"
                    );
                }
            }
        }
    }

    #[test]
    fn help_and_version_print_and_refusals_are_usage_messages() {
        match parse(&args(&["--version"])) {
            Err(Stop::Print(v)) => {
                assert_eq!(v, format!("pmix-topo {}\n", env!("CARGO_PKG_VERSION")));
            }
            other => panic!("{other:?}"),
        }
        match parse(&args(&["distances", "--bogus"])) {
            Err(Stop::Usage(m)) => {
                assert!(m.starts_with("unexpected argument '--bogus'"), "{m}");
                assert!(!m.contains("Usage:") && !m.starts_with("error"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        match parse(&args(&["tree", "--source", "floppy:/a"])) {
            Err(Stop::Usage(m)) => assert_eq!(
                m,
                "invalid value 'floppy:/a' for '--source <SRC>': unknown topology source \"floppy:/a\": \
                 expected sysfs, sysfs:DIR, xml:FILE or hwloc"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse(&[]).unwrap_err(),
            Stop::Usage("missing command (distances, matrix, tree, draw or completions)".into())
        );
    }
}
