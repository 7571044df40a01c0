//! `pmix-wiredump`, run as a program on the capture logs of
//! `testdata/wire-captures/raw/`: `--check` passes on every capture (every byte of
//! every connection decoded and re-encoded identically, every payload typed under
//! `--strict`), and fails, naming the log, the connection, the direction and the
//! byte offset, on a corrupted or cut one; the exit statuses of bad input and bad
//! command lines.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use pmix_testkit::TempDir;
use pmix_testkit::child::output_within;

/// The longest one run may take (a hang fails the test, not the suite).
const LIMIT: Duration = Duration::from_secs(120);

fn run(args: &[&str]) -> (String, String, i32) {
    let o: Output = output_within(
        Command::new(env!("CARGO_BIN_EXE_pmix-wiredump")).args(args),
        LIMIT,
    );
    (
        String::from_utf8(o.stdout).expect("UTF-8 stdout"),
        String::from_utf8(o.stderr).expect("UTF-8 stderr"),
        o.status.code().expect("an exit code"),
    )
}

fn raw(name: &str) -> PathBuf {
    pmix_testkit::data_dir()
        .join("wire-captures/raw")
        .join(name)
}

fn every_log() -> Vec<String> {
    let logs: Vec<String> = pmix_testkit::tarballs("wire-captures/raw", ".jsonl")
        .into_iter()
        .map(|(_, p)| p.display().to_string())
        .collect();
    assert!(logs.len() >= 20, "the captures are missing");
    logs
}

/// `log` with its `n`-th data line of connection 0 in direction `dir` changed by
/// `edit` (on the chunk's bytes), written into `dir_out`.
fn edited(
    log: &str,
    dir: &str,
    n: usize,
    edit: impl FnOnce(&mut Vec<u8>),
    dir_out: &Path,
) -> String {
    edited_cut(log, dir, n, edit, false, dir_out)
}

/// As [`edited`]; with `end_there`, the later data lines of that direction are
/// dropped (the stream ends with the edited chunk).
fn edited_cut(
    log: &str,
    dir: &str,
    n: usize,
    edit: impl FnOnce(&mut Vec<u8>),
    end_there: bool,
    dir_out: &Path,
) -> String {
    let text = std::fs::read_to_string(raw(log)).expect("the log");
    let mut seen = 0;
    let mut edit = Some(edit);
    let mut out = String::new();
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).expect("JSON");
        if v["ev"] == "data" && v["conn"] == 0 && v["dir"] == dir {
            if seen == n {
                let hex = v["hex"].as_str().expect("hex");
                let mut bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                    .collect();
                (edit.take().expect("one edit"))(&mut bytes);
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                v["hex"] = serde_json::Value::String(hex);
            }
            seen += 1;
            if end_there && seen > n + 1 {
                continue;
            }
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    assert!(edit.is_none(), "no data line {n} in {dir}");
    let path = dir_out.join(log);
    std::fs::write(&path, out).expect("write the edited log");
    path.display().to_string()
}

#[test]
fn check_passes_on_every_capture_in_testdata() {
    let logs = every_log();
    let mut args = vec!["--check", "--strict"];
    args.extend(logs.iter().map(String::as_str));
    let (out, err, code) = run(&args);
    assert_eq!(code, 0, "stderr:\n{err}");
    assert!(err.is_empty(), "{err}");
    // One check line per connection, each accounting for every byte.
    let checks: Vec<_> = out
        .lines()
        .filter(|l| l.starts_with("check conn"))
        .collect();
    assert!(checks.len() >= logs.len(), "{}", checks.len());
    assert!(
        checks
            .iter()
            .all(|l| l.ends_with("every byte accounted for"))
    );
}

#[test]
fn the_dump_shows_each_message_with_its_header_and_decoded_fields() {
    let log = raw("fence_hash.0.jsonl");
    let (out, _, code) = run(&[log.to_str().unwrap()]);
    assert_eq!(code, 0);
    // ANNOTATED.md §1–§3, §9.
    for want in [
        "client -> server @0 CONNECT, 69 bytes",
        "nbytes=53",
        "proc        \"58392577\" rank 0",
        "version     \"4.2.2rc2\"",
        "stray byte  true",
        "server -> client @0 HANDSHAKE REPLY, 8 bytes",
        "peer index 1",
        "client -> server @69 tag 101 request Req, 2 payload bytes",
        "header: pindex=1 tag=101 nbytes=2 pad=0",
        "tag 101 reply to Req, 931 payload bytes",
        "tag 104 reply to GetNb, 56 payload bytes",
        "key: \"demo.str\"",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
}

#[test]
fn a_corrupted_frame_header_fails_check_naming_its_byte() {
    let tmp = TempDir::new("wiredump-padding");
    // The second client chunk is the REQ frame, at stream byte 69; its padding is at
    // 69 + 12 = 81.
    let log = edited("fence_hash.0.jsonl", "C2S", 1, |b| b[15] = 1, &tmp.0);
    let (_, err, code) = run(&["--check", &log]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("fence_hash.0.jsonl conn 0 C2S: at byte 81:"),
        "{err}"
    );
    assert!(err.contains("padding"), "{err}");
}

#[test]
fn a_corrupted_payload_fails_check_naming_its_byte() {
    let tmp = TempDir::new("wiredump-payload");
    // The REQ reply (server chunk 1, from stream byte 8): its payload starts at
    // 8 + 16 = 24 with the nspace STRING pack `02 12 "58392577\0"`; a length of
    // zz(10) instead of zz(9) makes the string's last byte not a NUL.
    let log = edited("fence_hash.0.jsonl", "S2C", 1, |b| b[17] = 0x14, &tmp.0);
    let (_, err, code) = run(&["--check", &log]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("conn 0 S2C: at byte "), "{err}");
    // Without --check the dump still fails, and shows the error in place.
    let (out, _, code) = run(&[&log]);
    assert_eq!(code, 1);
    assert!(out.contains("DECODE ERROR"), "{out}");
}

#[test]
fn a_connection_cut_mid_message_is_reported_and_fails_check_unless_allowed() {
    let tmp = TempDir::new("wiredump-cut");
    // The client's stream ends 5 bytes short of the end of its REQ frame (18 bytes
    // from stream byte 69), as when a rank is killed while writing.
    let log = edited_cut(
        "fence_hash.0.jsonl",
        "C2S",
        1,
        |b| b.truncate(b.len() - 5),
        true,
        &tmp.0,
    );
    let (out, err, code) = run(&["--check", &log]);
    assert_eq!(code, 1, "{err}");
    let want = "C2S: a message cut short at byte 69: 13 bytes arrived, 5 more needed";
    assert!(err.contains(want), "{err}");
    assert!(out.contains(want), "{out}");
    let (out, err, code) = run(&["--check", "--allow-cut", &log]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("CUT {want}")), "{out}");
}

#[test]
fn a_cut_at_the_very_end_passes_with_allow_cut() {
    let tmp = TempDir::new("wiredump-cut-end");
    let text = std::fs::read_to_string(raw("fence_hash.0.jsonl")).expect("the log");
    let n = text
        .lines()
        .filter(|l| l.contains("\"S2C\"") && l.contains("\"data\""))
        .count();
    let log = edited(
        "fence_hash.0.jsonl",
        "S2C",
        n - 1,
        |b| b.truncate(b.len() - 1),
        &tmp.0,
    );
    let (out, err, code) = run(&["--check", &log]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("S2C: a message cut short at byte"), "{err}");
    let (out, err, code) = run(&["--check", "--allow-cut", &log]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("CUT S2C: a message cut short"), "{out}");
}

#[test]
fn bad_input_and_bad_command_lines_have_their_exit_statuses() {
    let (_, err, code) = run(&[]);
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("usage: pmix-wiredump"), "{err}");
    let (_, _, code) = run(&["--frobnicate", "x.jsonl"]);
    assert_eq!(code, 64);
    let (out, _, code) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--check"));
    let (_, err, code) = run(&["/nonexistent/x.jsonl"]);
    assert_eq!(code, 2, "{err}");
    let tmp = TempDir::new("wiredump-notjson");
    let p = tmp.0.join("x.jsonl");
    std::fs::write(&p, "not json\n").expect("write");
    let (_, err, code) = run(&[p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("line 1"), "{err}");
}
