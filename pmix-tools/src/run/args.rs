//! The command line of `pmix-run`, declared with clap's derive as pmix-topo's is: help
//! and version on standard output (exit 0), every refusal a usage error (exit
//! [`EXIT_USAGE`], 64, never clap's 2).

use std::ffi::OsString;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Parser, ValueEnum};

/// Exit status of a usage error (`EX_USAGE`).
pub const EXIT_USAGE: i32 = 64;

/// The synopsis.
pub const USAGE: &str = "pmix-run -n N [--tag-output] [--timeout S] [--grace S] [--keep-going] [--bind none|core|package] [--report-bindings] PROG [ARGS]...";

/// What the help page says below the flags.
const AFTER_HELP: &str = "\
Exit status: the status of the first PMIx_Abort, else the first non-zero exit of a rank
(a rank killed by signal SIG counts as 128+SIG), else 0; 124 when --timeout ended the
job; 64 on a usage error (or a --bind that cannot be planned); 127 when the program is
not found, 126 when it cannot be run; 70 when the PMIx server cannot be started.";

/// `pmix-run`: runs N ranks of a program under this crate's PMIx server.
#[derive(Debug, Parser)]
#[command(
    name = "pmix-run",
    version,
    about = "Run N ranks of a program under a PMIx server (OpenPMIx 4.2 clients and Open MPI 4.1 programs run unchanged)",
    override_usage = USAGE,
    help_template = "usage: {usage}\n\n{about-with-newline}\n{all-args}{after-help}",
    after_help = AFTER_HELP,
    trailing_var_arg = true
)]
pub struct Cli {
    /// The number of ranks (1 to 65535: local and node ranks are 16-bit in PMIx).
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65535))]
    pub n: u32,
    /// Prefix every line a rank prints with `[rank] `.
    #[arg(long)]
    pub tag_output: bool,
    /// End the job (kill every rank) after S seconds; pmix-run then exits 124.
    #[arg(long, value_name = "S", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
    /// After a rank aborts or dies without finalizing, the others have S seconds to
    /// finish before they are killed.
    #[arg(long, value_name = "S", value_parser = parse_seconds, default_value = "5")]
    pub grace: Duration,
    /// Do not end the job when a rank aborts or dies: the others run on.
    #[arg(long)]
    pub keep_going: bool,
    /// Bind each rank: to nothing (none, the default), to one core (core: one PU per
    /// rank, round robin over the PUs pmix-run may use), or to one package (package,
    /// round robin).
    #[arg(long, value_enum, value_name = "B", default_value_t = Bind::None)]
    pub bind: Bind,
    /// Before the job starts, print one line per rank on standard error: its binding
    /// and its nearest device of each type, with the distance (what the rank reads
    /// as `PMIX_DEVICE_DISTANCES`), the way `mpirun --report-bindings` shows bindings.
    #[arg(long)]
    pub report_bindings: bool,
    /// Set one of the server's limits (repeatable; a NAME that is none of them is
    /// refused with the list): what a connection may make the server hold. NAME=N,
    /// for example `max_half_open=256`.
    #[arg(long = "server-limit", value_name = "NAME=N", value_parser = parse_limit)]
    pub server_limits: Vec<(String, u64)>,
    /// The program each rank runs, and its arguments.
    #[arg(value_name = "PROG", required = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// `--bind`: what each rank is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Bind {
    /// Unbound: every rank inherits pmix-run's own binding.
    None,
    /// One core per rank, round robin.
    Core,
    /// One package per rank, round robin.
    Package,
}

/// What parsing ended in when it gives no job to run.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// `--help` or `--version`: this text goes to standard output, exit 0.
    Print(String),
    /// A usage error: this message (without the synopsis), exit 64.
    Usage(String),
}

/// Parses `args` (without the program name). Flags are read up to the first word that
/// is not one (the program); everything from there on is the program's.
///
/// # Errors
/// [`Stop::Print`] for `--help` and `--version`; [`Stop::Usage`] for anything clap
/// refuses (no `-n`, no program, a bad number, an unknown flag before the program).
pub fn parse(args: &[OsString]) -> Result<Cli, Stop> {
    let argv = std::iter::once(OsString::from("pmix-run")).chain(args.iter().cloned());
    Cli::try_parse_from(argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let mut text = e.render().to_string();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Stop::Print(text)
        }
        _ => Stop::Usage(message(&e.render().to_string())),
    })
}

/// The text printed on a usage error: `pmix-run: MESSAGE`, the synopsis and a pointer
/// to `--help`.
pub fn usage_text(msg: &str) -> String {
    format!("pmix-run: {msg}\nusage: {USAGE}\n\nRun 'pmix-run --help' for the flags.\n")
}

/// Clap's rendered error without its `error: ` prefix, usage lines and `--help` pointer.
fn message(rendered: &str) -> String {
    let body = rendered.strip_prefix("error: ").unwrap_or(rendered);
    let end = ["\nUsage:", "\nFor more information"]
        .iter()
        .filter_map(|tail| body.find(tail))
        .min();
    body[..end.unwrap_or(body.len())].trim_end().to_owned()
}

/// Seconds: a non-negative decimal number (`5`, `0.5`), at most a year.
/// NAME=N of `--server-limit`, NAME one of the server's limits.
fn parse_limit(s: &str) -> Result<(String, u64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not NAME=N"))?;
    let value: u64 = value
        .parse()
        .map_err(|_| format!("{value:?} is not a whole number"))?;
    // Checked here, so that a wrong name is a usage error.
    pmix::ServerConfig::default().set_limit(name, value)?;
    Ok((name.to_owned(), value))
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.0..=31_536_000.0).contains(&v) {
        return Err(format!("{s} seconds is out of range (0 to 31536000)"));
    }
    Ok(Duration::from_secs_f64(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn args(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn flags_before_the_program_are_ours_and_the_rest_is_the_programs() {
        let cli = parse(&args(&[
            "-n",
            "4",
            "--tag-output",
            "--timeout",
            "2.5",
            "--bind",
            "core",
            "prog",
            "-n",
            "7",
            "--tag-output",
        ]))
        .unwrap();
        assert_eq!(cli.n, 4);
        assert!(cli.tag_output && !cli.keep_going);
        assert_eq!(cli.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(cli.grace, Duration::from_secs(5));
        assert_eq!(cli.bind, Bind::Core);
        assert_eq!(cli.command, args(&["prog", "-n", "7", "--tag-output"]));
        let cli = parse(&args(&["--np=2", "--keep-going", "--grace", "0", "a"])).unwrap();
        assert_eq!(
            (cli.n, cli.keep_going, cli.grace),
            (2, true, Duration::ZERO)
        );
        assert_eq!(cli.bind, Bind::None);
    }

    #[test]
    fn refusals_are_usage_messages() {
        for bad in [
            &[][..],
            &["prog"],
            &["-n", "4"],
            &["-n", "0", "prog"],
            &["-n", "x", "prog"],
            &["-n", "70000", "prog"],
            &["-n", "2", "--timeout", "-1", "prog"],
            &["-n", "2", "--grace", "soon", "prog"],
            &["-n", "2", "--bind", "socket", "prog"],
            &["-n", "2", "--bogus", "prog"],
        ] {
            match parse(&args(bad)) {
                Err(Stop::Usage(m)) => {
                    assert!(
                        !m.contains("Usage:") && !m.starts_with("error"),
                        "{bad:?}: {m}"
                    )
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        assert!(usage_text("x").starts_with("pmix-run: x\nusage: pmix-run -n N"));
    }

    #[test]
    fn help_and_version_print() {
        assert_eq!(
            parse(&args(&["--version"])).unwrap_err(),
            Stop::Print(format!("pmix-run {}\n", env!("CARGO_PKG_VERSION")))
        );
        match parse(&args(&["--help"])) {
            Err(Stop::Print(t)) => assert!(t.starts_with("usage: pmix-run -n N"), "{t}"),
            other => panic!("{other:?}"),
        }
    }
}
