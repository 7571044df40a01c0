//! `pmix-wiredump`: a protocol dissector for capture logs of OpenPMIx 4.2 client ⇄
//! server traffic (docs/wire.md), and a byte-for-byte check of the `pmix-wire` codec
//! against them.
//!
//! ```text
//! pmix-wiredump [--check] [--strict] [--allow-cut] [--hex] [--quiet] LOG.jsonl...
//! ```
//!
//! Each log (`testdata/wire-captures/raw/*.jsonl`, one JSON object per line, as the
//! project's tap writes it) is read, each connection's two directions are
//! reassembled and fed to a [`pmix_wire::Conversation`], and every message is printed
//! as one block, in the order its first byte arrived: direction, time, stream
//! offset, what it is, the header fields, then the decoded fields (the connect
//! message's fields, or the frame payload decoded by `pmix_wire::msg` and printed
//! with its `Debug`).
//!
//! `--check` re-encodes every decoded message — the connect message, the handshake
//! reply, each frame, and each typed payload with the connection's codec — and
//! compares it with the captured bytes. `--strict` also fails on a payload the
//! codec could not type: a `Raw` request or reply (commands 25, 26, 30, 31, 34–38,
//! which `msg` keeps as bytes) or a frame matched to no request (an unmatched reply
//! tag, a client frame on a reserved tag other than the heartbeat's).
//!
//! **A connection cut mid-message** (bytes at the end of a direction that are not a
//! whole message, e.g. a rank killed while writing) is reported with its direction,
//! the stream offset where the message starts, how many bytes arrived and how many
//! more it needed. It fails `--check`: those bytes cannot be verified, so not every
//! byte is accounted for. `--allow-cut` accepts it (still reported), for captures of
//! killed processes.
//!
//! Exit status: 0 when every message decoded (and with `--check`, every byte of
//! every connection re-encoded identically); 1 when a message did not decode, or a
//! check failed (each failure on standard error, naming the log, the connection,
//! the direction and the byte offset in that direction's stream); 2 when a log
//! cannot be read or is not a capture log; 64 on a usage error.

mod capture;
mod print;

use print::block;

use std::fmt::Write as _;

use clap::Parser;
use clap::error::ErrorKind as ClapErrorKind;
use pmix_wire::{Conversation, Limits, Message};

pub use capture::{Conn, Half, parse};

/// Exit status of a usage error (`EX_USAGE`).
pub const EXIT_USAGE: i32 = 64;
/// Exit status when a message did not decode or a check failed.
pub const EXIT_FAILED: i32 = 1;
/// Exit status when a log cannot be read or is not a capture log.
pub const EXIT_INPUT: i32 = 2;

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

/// The synopsis.
pub const USAGE: &str =
    "pmix-wiredump [--check] [--strict] [--allow-cut] [--hex] [--quiet] LOG.jsonl...";

/// `pmix-wiredump`: decode capture logs of PMIx 4.2 wire traffic, one block per
/// message.
#[derive(Debug, Parser)]
#[command(
    name = "pmix-wiredump",
    version,
    about = "Decode capture logs of OpenPMIx 4.2 client/server traffic, one block per message; --check re-encodes every message and compares it with the bytes",
    override_usage = USAGE,
    after_help = "Exit status: 0 when everything decoded (and checked), 1 when a message did not decode or a check failed, 2 when a log cannot be read, 64 on a usage error."
)]
pub struct Cli {
    /// Re-encode every decoded message and compare it with the captured bytes; fail
    /// unless every byte of every connection is accounted for.
    #[arg(long)]
    pub check: bool,
    /// Also fail on a payload the codec could not type (a raw fallback, an
    /// unmatched frame).
    #[arg(long)]
    pub strict: bool,
    /// Accept a message cut short at the end of a capture (still reported).
    #[arg(long)]
    pub allow_cut: bool,
    /// Print each message's bytes as a hex dump.
    #[arg(long)]
    pub hex: bool,
    /// Print nothing on standard output (failures still go to standard error).
    #[arg(long, short)]
    pub quiet: bool,
    /// Capture logs (`raw/*.jsonl`).
    #[arg(required = true, value_name = "LOG.jsonl")]
    pub logs: Vec<String>,
}

/// Runs `pmix-wiredump` with `args` (without the program name).
pub fn run(args: &[String]) -> Outcome {
    let argv = std::iter::once("pmix-wiredump").chain(args.iter().map(String::as_str));
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            return match e.kind() {
                ClapErrorKind::DisplayHelp | ClapErrorKind::DisplayVersion => Outcome {
                    stdout: text,
                    ..Outcome::default()
                },
                _ => Outcome {
                    stdout: String::new(),
                    stderr: format!(
                        "pmix-wiredump: {}\nusage: {USAGE}\n",
                        text.strip_prefix("error: ")
                            .unwrap_or(&text)
                            .split("\n\nUsage:")
                            .next()
                            .unwrap_or_default()
                            .trim_end()
                    ),
                    code: EXIT_USAGE,
                },
            };
        }
    };
    let mut out = Outcome::default();
    let mut failed = false;
    for path in &cli.logs {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                let _ = writeln!(out.stderr, "pmix-wiredump: {path}: {e}");
                out.code = EXIT_INPUT;
                return out;
            }
        };
        let conns = match capture::parse(&text) {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(out.stderr, "pmix-wiredump: {path}: {e}");
                out.code = EXIT_INPUT;
                return out;
            }
        };
        let name = std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned());
        if !cli.quiet {
            let _ = writeln!(out.stdout, "=== {name}");
        }
        for (id, conn) in &conns {
            let report = dump_conn(&cli, conn);
            if !cli.quiet {
                let _ = writeln!(out.stdout, "--- conn {id}");
                out.stdout.push_str(&report.text);
            }
            for f in &report.failures {
                let _ = writeln!(out.stderr, "pmix-wiredump: {name} conn {id} {f}");
            }
            failed |= !report.failures.is_empty();
            if cli.check && !cli.quiet {
                let _ = writeln!(
                    out.stdout,
                    "check conn {id}: {} messages, {} + {} bytes, {}",
                    report.messages,
                    conn.c2s.bytes.len(),
                    conn.s2c.bytes.len(),
                    if report.failures.is_empty() {
                        "every byte accounted for"
                    } else {
                        "FAILED"
                    }
                );
            }
        }
    }
    if failed {
        out.code = EXIT_FAILED;
    }
    out
}

/// What one connection gave.
struct Report {
    /// The dump.
    text: String,
    /// Every failure, one line each: `DIR: at byte N: why`.
    failures: Vec<String>,
    /// How many messages decoded.
    messages: usize,
}

/// Decodes, prints and (with `--check`) verifies one connection.
fn dump_conn(cli: &Cli, conn: &Conn) -> Report {
    let mut conv = Conversation::new(Limits::DEFAULT);
    let mut msgs: Vec<Message> = Vec::new();
    let mut failures = Vec::new();
    let mut stream_error = None;
    for (dir, bytes) in &conn.chunks {
        if let Err(e) = conv.feed(*dir, bytes) {
            failures.push(format!("{e}"));
            stream_error = Some(e);
            break;
        }
        msgs.extend(std::iter::from_fn(|| conv.poll()));
    }
    let codec = conv.codec().cloned();
    // In the order each message's first byte arrived, client first on a tie.
    let time = |m: &Message| conn.half(m.dir).time_at(m.offset).unwrap_or(f64::NAN);
    let mut order: Vec<usize> = (0..msgs.len()).collect();
    order.sort_by(|&a, &b| {
        time(&msgs[a])
            .total_cmp(&time(&msgs[b]))
            .then(msgs[a].dir.cmp(&msgs[b].dir))
            .then(msgs[a].offset.cmp(&msgs[b].offset))
    });
    let mut text = String::new();
    for &i in &order {
        let m = &msgs[i];
        let bytes = conn
            .half(m.dir)
            .bytes
            .get(m.offset..m.offset + m.len)
            .unwrap_or_default();
        block(
            cli,
            m,
            time(m),
            bytes,
            codec.as_ref(),
            &mut text,
            &mut failures,
        );
    }
    if let Some(e) = &stream_error {
        // The stream error that stopped decoding (the rest of the bytes are not
        // messages we can find).
        let _ = writeln!(text, "DECODE ERROR {e}");
    } else {
        for cut in conv.incomplete() {
            let _ = writeln!(text, "CUT {cut}");
            if !cli.allow_cut {
                failures.push(format!("{cut}"));
            }
        }
    }
    for (t, ev) in &conn.events {
        let _ = writeln!(text, "[t={t:10.6}s] {ev}");
    }
    text.push('\n');
    Report {
        text,
        failures,
        messages: msgs.len(),
    }
}
