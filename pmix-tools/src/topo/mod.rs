//! `pmix-topo`: device distances, the device matrix and the topology tree of a node
//! (docs/design.md §7).
//!
//! ```text
//! pmix-topo distances [--source SRC] [--cpus LIST | --origin NAME] [--types T] [--id NAME]...
//!                     [--hostname NAME] [--format table|json]
//! pmix-topo matrix    [--source SRC] [--types T] [--format table|json]
//! pmix-topo tree      [--source SRC]
//! pmix-topo draw      [--source SRC] [--cpus LIST | --origin NAME] [--out FILE.svg]
//!                     [--png FILE.png]
//! pmix-topo completions SHELL
//! ```
//!
//! This module owns a run: the command line ([`args`]) gives a command; the command
//! asks the runtime's query service ([`pmix::Service`]: the topology of `--source` with
//! the host name rule applied, this process's binding, the answers) and renders what it
//! answers (modules `distances`, `matrix`, `tree`, `draw`; JSON through [`report`]); the
//! run ends in an [`Outcome`]. pmix-topo reads nothing itself: every file the answer
//! comes from is read by the runtime and its backends (and the fonts of a PNG by the
//! renderer's font database). The files `draw` makes are handed back in
//! [`Outcome::files`] for the program to write, so a run has no side effect.
//!
//! Exit status: 0 on success, [`EXIT_PMIX`] (2) on a PMIx error (in JSON, one
//! [`report::ErrorReport`] on standard output), [`EXIT_USAGE`] (64) on a usage error (a
//! message and the synopsis on standard error), [`EXIT_CANTCREAT`] (73) when the
//! program cannot write a file of [`Outcome::files`].

pub mod args;
mod distances;
mod draw;
mod matrix;
pub mod report;
mod tree;

use std::path::PathBuf;
use std::sync::Arc;

use pmix::{PmixError, Service};
use pmix_core::{Status, Topology};

use args::{Command, Format, Stop};

/// Exit status of a usage error (`EX_USAGE`).
pub const EXIT_USAGE: i32 = 64;
/// Exit status of a PMIx error.
pub const EXIT_PMIX: i32 = 2;
/// Exit status when an output file (`draw --out`, `--png`) cannot be written
/// (`EX_CANTCREAT`).
pub const EXIT_CANTCREAT: i32 = 73;

/// What a run printed and how it ends.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit status.
    pub code: i32,
    /// The files to write, in order (`draw --out`, `--png`); empty unless the run
    /// succeeded.
    pub files: Vec<OutputFile>,
}

/// A file a run made, for the program to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    /// Where, as given on the command line.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// What a command made: its standard output and error, and the files to write.
#[derive(Debug, Default)]
struct Made {
    stdout: String,
    stderr: String,
    files: Vec<OutputFile>,
}

impl From<String> for Made {
    fn from(stdout: String) -> Self {
        Made {
            stdout,
            ..Made::default()
        }
    }
}

/// What went wrong, and how the program ends.
#[derive(Debug)]
enum Failure {
    /// A bad command line, found after parsing (`--cpus` outside the machine): exit 64.
    Usage(String),
    /// A PMIx error: exit 2.
    Pmix { status: Status, message: String },
    /// An output file that cannot be made (a PNG too large to render): exit 73.
    Output(String),
}

impl Failure {
    fn pmix(e: &(impl PmixError + std::fmt::Display)) -> Self {
        Failure::Pmix {
            status: e.status(),
            message: e.to_string(),
        }
    }
}

/// Runs `pmix-topo` with `args` (without the program name).
pub fn run(args: &[String]) -> Outcome {
    let cli = match args::parse(args) {
        Ok(cli) => cli,
        Err(Stop::Print(text)) => {
            return Outcome {
                stdout: text,
                ..Outcome::default()
            };
        }
        Err(Stop::Usage(msg)) => return usage_failure(&msg),
    };
    match execute(&cli.command) {
        Ok(made) => Outcome {
            stdout: made.stdout,
            stderr: made.stderr,
            code: 0,
            files: made.files,
        },
        Err(Failure::Usage(msg)) => usage_failure(&msg),
        Err(Failure::Output(msg)) => Outcome {
            stderr: format!("pmix-topo: {msg}\n"),
            code: EXIT_CANTCREAT,
            ..Outcome::default()
        },
        Err(Failure::Pmix { status, message }) => {
            pmix_failure(status, message, cli.command.format())
        }
    }
}

fn usage_failure(msg: &str) -> Outcome {
    Outcome {
        stdout: String::new(),
        stderr: format!(
            "pmix-topo: {msg}\nusage: {}\n\nRun 'pmix-topo --help' or 'pmix-topo COMMAND --help' for the flags.\n",
            args::USAGE
        ),
        code: EXIT_USAGE,
        files: Vec::new(),
    }
}

fn pmix_failure(status: Status, message: String, format: Format) -> Outcome {
    let name = status.name().unwrap_or("PMIX_ERROR");
    match format {
        Format::Json => Outcome {
            stdout: report::to_json(&report::ErrorReport {
                status: name.to_owned(),
                code: status.0,
                message,
            }),
            stderr: String::new(),
            code: EXIT_PMIX,
            files: Vec::new(),
        },
        Format::Table => Outcome {
            stdout: String::new(),
            stderr: format!("pmix-topo: {name} ({}): {message}\n", status.0),
            code: EXIT_PMIX,
            files: Vec::new(),
        },
    }
}

fn execute(command: &Command) -> Result<Made, Failure> {
    match command {
        Command::Distances(a) => {
            let svc = service(&a.source.source, a.hostname.as_deref())?;
            distances::run(&svc, a).map(Made::from)
        }
        Command::Matrix(a) => matrix::run(&service(&a.source.source, None)?, a).map(Made::from),
        Command::Tree(a) => {
            let topo = topology(&service(&a.source, None)?)?;
            Ok(tree::render(&topo).into())
        }
        Command::Draw(a) => draw::run(&service(&a.source.source, None)?, a),
        Command::Completions { shell } => Ok(args::completions(*shell).into()),
    }
}

/// The runtime's query service for `source`, naming the host `hostname` in uuids.
fn service(source: &str, hostname: Option<&str>) -> Result<Service, Failure> {
    Service::new(source, hostname.map(str::to_owned)).map_err(|e| Failure::pmix(&e))
}

/// The service's topology, loaded now.
fn topology(svc: &Service) -> Result<Arc<Topology>, Failure> {
    svc.topology().map(Arc::clone).map_err(Failure::pmix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
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
            &["matrix", "--source", "sysfs", "--source", "sysfs"],
            &["completions", "tcsh"],
            &["completions"],
        ] {
            let out = run(&args(bad));
            assert_eq!(out.code, EXIT_USAGE, "{bad:?}: {out:?}");
            assert!(out.stderr.starts_with("pmix-topo: "), "{bad:?}: {out:?}");
            assert!(
                out.stderr.contains("\nusage: pmix-topo distances"),
                "{out:?}"
            );
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
