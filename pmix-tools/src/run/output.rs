//! Forwarding what ranks print: each of a rank's pipes (stdout, stderr) is read by a
//! thread of its own, line by line, and every whole line is written at once to
//! pmix-run's own stream of the same kind, so lines of different ranks never mix
//! (each `write_all` of a line holds the stream's lock). With `--tag-output` each line
//! starts with `[rank] ` (`[job:rank] ` for the ranks of the jobs the first one
//! spawned, job 1 first). A last line without a newline is passed on as it is (with a
//! tag, a newline is added so the next tagged line starts on its own).

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The longest line passed on whole; a longer one is passed on in pieces of this size,
/// each tagged, so a rank printing without newlines cannot make pmix-run buffer
/// without bound.
pub const MAX_LINE: usize = 64 * 1024;

/// Where forwarded lines go: shared by every rank's forwarder of one stream.
pub type Sink = Arc<Mutex<dyn Write + Send>>;

/// Starts a thread copying `from` to `to` line by line, each line prefixed `[label] `
/// when `tag` is set. The thread ends at end of file (the rank closed the pipe or
/// exited) or on a read error; a write error (pmix-run's own output closed) makes it
/// drain `from` without writing, so the rank never blocks on a full pipe. It holds
/// `done` and drops it as it ends (nothing is sent): a receiver whose every sender
/// went to such threads disconnects when the last one ends.
///
/// # Panics
/// When the thread cannot be started.
pub fn forward(
    from: impl Read + Send + 'static,
    to: Sink,
    label: &str,
    tag: bool,
    done: Sender<()>,
) -> JoinHandle<()> {
    let prefix = format!("[{label}] ");
    std::thread::Builder::new()
        .name(format!("pmix-run-out-{label}"))
        .spawn(move || {
            copy_lines(from, &to, &prefix, tag);
            drop(done);
        })
        .expect("a thread to forward a rank's output")
}

fn copy_lines(from: impl Read, to: &Sink, prefix: &str, tag: bool) {
    let mut reader = BufReader::with_capacity(MAX_LINE, from);
    let mut line = Vec::with_capacity(256);
    let mut writable = true;
    loop {
        line.clear();
        if tag {
            line.extend_from_slice(prefix.as_bytes());
        }
        match read_line(&mut reader, &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if tag && line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        if writable {
            let mut out = to.lock().unwrap_or_else(|e| e.into_inner());
            writable = out.write_all(&line).and_then(|()| out.flush()).is_ok();
        }
    }
}

/// Appends one line (through its newline) or [`MAX_LINE`] bytes, whichever comes
/// first, to `line`; returns how many bytes were read (0 at end of file).
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(total);
        }
        let room = MAX_LINE - total;
        let (take, done) = match buf.iter().take(room).position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len().min(room), buf.len() >= room),
        };
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}

/// Where a job's output and pmix-run's own lines go.
#[derive(Clone)]
pub struct Sinks {
    /// The ranks' standard output.
    pub stdout: Sink,
    /// The ranks' standard error, and pmix-run's own lines (`pmix-run: …`).
    pub stderr: Sink,
}

/// Prints one `pmix-run: …` line on the stderr sink.
pub fn say(sinks: &Sinks, line: &str) {
    let mut err = sinks.stderr.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(err, "pmix-run: {line}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done() -> Sender<()> {
        std::sync::mpsc::channel().0
    }

    fn run(input: &[u8], tag: bool) -> Vec<u8> {
        let out: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let sink: Sink = out.clone();
        forward(std::io::Cursor::new(input.to_vec()), sink, "3", tag, done())
            .join()
            .unwrap();
        out.lock().unwrap().clone()
    }

    #[test]
    fn lines_pass_unchanged_without_a_tag() {
        assert_eq!(run(b"a\nbb\n\nlast", false), b"a\nbb\n\nlast");
    }

    #[test]
    fn every_line_is_tagged_and_a_last_partial_line_is_ended() {
        assert_eq!(
            run(b"a\nbb\n\nlast", true),
            b"[3] a\n[3] bb\n[3] \n[3] last\n".to_vec()
        );
        assert_eq!(run(b"", true), b"");
    }

    #[test]
    fn an_overlong_line_comes_in_tagged_pieces() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.push(b'\n');
        let out = run(&input, true);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 4 + MAX_LINE);
        assert_eq!(lines[1], "[3] xxxxxxxxxx");
    }

    #[test]
    fn lines_of_two_ranks_never_mix() {
        let out: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let line_a = format!("{}\n", "a".repeat(1000));
        let line_b = format!("{}\n", "b".repeat(1000));
        let a = forward(
            std::io::Cursor::new(line_a.repeat(200).into_bytes()),
            out.clone(),
            "0",
            true,
            done(),
        );
        let b = forward(
            std::io::Cursor::new(line_b.repeat(200).into_bytes()),
            out.clone(),
            "1",
            true,
            done(),
        );
        a.join().unwrap();
        b.join().unwrap();
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 400);
        for l in text.lines() {
            let ok = l == format!("[0] {}", "a".repeat(1000))
                || l == format!("[1] {}", "b".repeat(1000));
            assert!(ok, "a mixed line: {}", &l[..20]);
        }
    }
}
