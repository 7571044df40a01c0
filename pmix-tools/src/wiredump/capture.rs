//! Capture logs: `raw/NAME.RANK.jsonl` as the project's tap writes them, one JSON
//! object per line. `data` events carry a connection number, a direction (`C2S`,
//! `S2C`), the bytes in hex and a time in seconds since the tap started; `eof`,
//! `closed` and the others are kept for the dump's record of how connections ended.

use std::collections::BTreeMap;

use pmix_wire::Direction;
use serde::Deserialize;

/// One line of a capture log (every field optional but `ev`).
#[derive(Debug, Deserialize)]
struct Line {
    ev: String,
    conn: Option<u64>,
    dir: Option<String>,
    hex: Option<String>,
    t: Option<f64>,
}

/// One direction of a connection: its bytes, and when each chunk arrived.
#[derive(Debug, Default)]
pub struct Half {
    /// Every byte, in order.
    pub bytes: Vec<u8>,
    /// `(stream offset, time)` of each chunk's first byte.
    pub times: Vec<(usize, f64)>,
}

impl Half {
    /// The arrival time of the chunk holding the byte at `offset`.
    pub fn time_at(&self, offset: usize) -> Option<f64> {
        let i = self.times.partition_point(|&(o, _)| o <= offset);
        i.checked_sub(1).map(|i| self.times[i].1)
    }
}

/// One connection of a log, with its chunks in arrival order.
#[derive(Debug, Default)]
pub struct Conn {
    /// The chunks as they arrived: direction and bytes.
    pub chunks: Vec<(Direction, Vec<u8>)>,
    /// Client → server.
    pub c2s: Half,
    /// Server → client.
    pub s2c: Half,
    /// The other events of this connection (`eof C2S`, `closed`, …) with their times.
    pub events: Vec<(f64, String)>,
}

impl Conn {
    /// The half of `dir`.
    pub fn half(&self, dir: Direction) -> &Half {
        match dir {
            Direction::ClientToServer => &self.c2s,
            Direction::ServerToClient => &self.s2c,
        }
    }
}

/// Reads a capture log's text into its connections, by number.
///
/// # Errors
/// A line that is not a JSON object of the log's shape, a `data` line without its
/// connection, direction or hex, a direction other than `C2S`/`S2C`, or hex that is
/// not hex: a message naming the line.
pub fn parse(text: &str) -> Result<BTreeMap<u64, Conn>, String> {
    let mut conns: BTreeMap<u64, Conn> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let line: Line =
            serde_json::from_str(raw).map_err(|e| format!("line {n}: not a capture line: {e}"))?;
        if line.ev != "data" {
            if let Some(conn) = line.conn {
                let what = match &line.dir {
                    Some(d) => format!("{} {d}", line.ev),
                    None => line.ev.clone(),
                };
                conns
                    .entry(conn)
                    .or_default()
                    .events
                    .push((line.t.unwrap_or(f64::NAN), what));
            }
            continue;
        }
        let (Some(conn), Some(dir), Some(hex)) = (line.conn, &line.dir, &line.hex) else {
            return Err(format!(
                "line {n}: a data line without its conn, dir or hex"
            ));
        };
        let dir = match dir.as_str() {
            "C2S" => Direction::ClientToServer,
            "S2C" => Direction::ServerToClient,
            other => return Err(format!("line {n}: direction {other:?}, not C2S or S2C")),
        };
        let bytes = unhex(hex).ok_or_else(|| format!("line {n}: the hex is not hex"))?;
        let c = conns.entry(conn).or_default();
        let half = match dir {
            Direction::ClientToServer => &mut c.c2s,
            Direction::ServerToClient => &mut c.s2c,
        };
        half.times
            .push((half.bytes.len(), line.t.unwrap_or(f64::NAN)));
        half.bytes.extend_from_slice(&bytes);
        c.chunks.push((dir, bytes));
    }
    Ok(conns)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_become_streams_with_their_times() {
        let log = r#"{"ev": "start", "server": "127.0.0.1:1", "wall": 1.0, "t": 0.0}
{"ev": "open", "conn": 0, "t": 0.1}
{"ev": "data", "conn": 0, "dir": "C2S", "hex": "0001", "t": 0.2}
{"ev": "data", "conn": 0, "dir": "S2C", "hex": "ff", "t": 0.3}
{"ev": "data", "conn": 0, "dir": "C2S", "hex": "02", "t": 0.4}
{"ev": "eof", "conn": 0, "dir": "C2S", "t": 0.5}
"#;
        let conns = parse(log).unwrap();
        let c = &conns[&0];
        assert_eq!(c.c2s.bytes, [0, 1, 2]);
        assert_eq!(c.s2c.bytes, [0xff]);
        assert_eq!(c.c2s.time_at(1), Some(0.2));
        assert_eq!(c.c2s.time_at(2), Some(0.4));
        assert_eq!(c.chunks.len(), 3);
        assert_eq!(c.events[1].1, "eof C2S");
        assert!(parse("{\"ev\": \"data\", \"conn\": 0, \"dir\": \"X\", \"hex\": \"\"}").is_err());
        assert!(parse("nope").unwrap_err().starts_with("line 1"));
    }
}
