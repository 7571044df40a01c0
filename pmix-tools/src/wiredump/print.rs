//! How one message is printed: its block (direction, time, offset, header, typed
//! fields), the typed decode behind it, and the hex helpers.

use std::fmt::Write as _;

use pmix_wire::msg;
use pmix_wire::{Codec, FrameKind, Identity, Item, Message, WireError};

use super::*;

/// Prints one message and checks it.
pub(super) fn block(
    cli: &Cli,
    m: &Message,
    t: f64,
    bytes: &[u8],
    codec: Option<&Codec>,
    out: &mut String,
    failures: &mut Vec<String>,
) {
    let dir = m.dir.short();
    let mut fail = |at: usize, why: String| failures.push(format!("{dir}: at byte {at}: {why}"));
    let _ = write!(out, "[t={t:10.6}s] {} @{} ", m.dir, m.offset);
    let reencoded: Result<Vec<u8>, WireError> = match &m.item {
        Item::Connect(c) => {
            let _ = writeln!(out, "CONNECT, {} bytes", m.len);
            let _ = writeln!(
                out,
                "    header: pindex=-1 tag=0xffffffff nbytes={} pad=0 (little-endian, host order)",
                m.len.saturating_sub(16)
            );
            let _ = writeln!(out, "    psec        {:?}", c.psec);
            match c.native_ids() {
                Some((uid, gid)) => {
                    let _ = writeln!(out, "    credential  uid={uid} gid={gid}");
                }
                None => {
                    let _ = writeln!(out, "    credential  {}", hex(&c.credential));
                }
            }
            let kind = c.identity.kind();
            let _ = writeln!(out, "    type flag   {} ({kind:?})", kind.code());
            match &c.identity {
                Identity::Client { nspace, rank } => {
                    let _ = writeln!(out, "    proc        {nspace:?} rank {rank}");
                }
                Identity::Ids { uid, gid, .. } => {
                    let _ = writeln!(out, "    ids         uid={uid} gid={gid}");
                }
                Identity::Named {
                    uid,
                    gid,
                    nspace,
                    rank,
                    ..
                } => {
                    let _ = writeln!(out, "    ids         uid={uid} gid={gid}");
                    let _ = writeln!(out, "    proc        {nspace:?} rank {rank}");
                }
            }
            let _ = writeln!(out, "    version     {:?}", c.version.text);
            let _ = writeln!(out, "    bfrops      {:?}", c.bfrops);
            let _ = writeln!(out, "    buffer type {:?}", c.buffer_type);
            let _ = writeln!(out, "    gds         {:?}", c.gds);
            if !c.trailer.info.is_empty() {
                let _ = writeln!(out, "    tool info   {} bytes", c.trailer.info.len());
                match c.tool_info(&Limits::DEFAULT) {
                    Ok(info) => {
                        for line in compact_debug(&format!("{info:#?}")).lines() {
                            let _ = writeln!(out, "        {line}");
                        }
                    }
                    Err(e) => {
                        let _ = writeln!(out, "        DECODE ERROR {e}");
                    }
                }
            }
            let _ = writeln!(out, "    stray byte  {}", c.trailer.stray_byte);
            c.encode()
        }
        Item::ClientReply(r) => {
            let _ = writeln!(out, "HANDSHAKE REPLY, {} bytes", m.len);
            let _ = writeln!(
                out,
                "    status {} (int32 BE), peer index {} (u32 BE)",
                r.status, r.index
            );
            Ok(r.encode().to_vec())
        }
        Item::ToolReply(r) => {
            let _ = writeln!(out, "TOOL HANDSHAKE REPLY, {} bytes", m.len);
            let _ = writeln!(out, "    {r:?}");
            r.encode()
        }
        Item::Frame { frame, kind } => {
            let h = &frame.header;
            let what = match kind {
                FrameKind::Request(c) => format!("request {c:?}"),
                FrameKind::Reply(c) => format!("reply to {c:?}"),
                FrameKind::Event => "event".into(),
                FrameKind::Iof => "forwarded I/O".into(),
                FrameKind::Heartbeat => "heartbeat".into(),
                FrameKind::Unmatched => "unmatched".into(),
            };
            let _ = writeln!(out, "tag {} {what}, {} payload bytes", h.tag, h.nbytes);
            let _ = writeln!(
                out,
                "    header: pindex={} tag={} nbytes={} pad=0",
                h.pindex, h.tag, h.nbytes
            );
            let payload_at = m.offset + pmix_wire::frame::HEADER_LEN;
            if let Some(codec) = codec {
                match typed(*kind, &frame.payload, codec) {
                    None => {
                        if cli.strict && *kind == FrameKind::Unmatched {
                            fail(payload_at, format!("{what}: a frame matched to no request"));
                        }
                        if !frame.payload.is_empty() {
                            let _ = writeln!(out, "    payload {}", hex(&frame.payload));
                        }
                    }
                    Some(Err(e)) => {
                        let _ = writeln!(out, "    DECODE ERROR {e}");
                        fail(payload_at + e.offset, format!("{what}: {}", e.kind));
                    }
                    Some(Ok(t)) => {
                        for line in t.debug.lines() {
                            let _ = writeln!(out, "    {line}");
                        }
                        if cli.strict && t.raw {
                            fail(payload_at, format!("{what}: decoded only as raw bytes"));
                        }
                        if cli.check {
                            match t.reencoded {
                                Ok(b) if b == frame.payload => {}
                                Ok(b) => {
                                    let at = first_difference(&b, &frame.payload);
                                    fail(
                                        payload_at + at,
                                        format!(
                                            "{what}: the typed payload re-encodes to other bytes \
                                             (first difference at payload byte {at})"
                                        ),
                                    );
                                }
                                Err(e) => fail(
                                    payload_at,
                                    format!("{what}: the typed payload does not re-encode: {e}"),
                                ),
                            }
                        }
                    }
                }
            }
            frame.encode()
        }
    };
    if cli.hex {
        for (i, chunk) in bytes.chunks(16).enumerate() {
            let _ = writeln!(out, "    {:04x}  {}", i * 16, hex_spaced(chunk));
        }
    }
    if cli.check {
        match reencoded {
            Ok(b) if b == bytes => {}
            Ok(b) => {
                let at = first_difference(&b, bytes);
                fail(
                    m.offset + at,
                    "the message re-encodes to other bytes".to_owned(),
                );
            }
            Err(e) => fail(m.offset, format!("the message does not re-encode: {e}")),
        }
    }
}

/// A frame payload decoded by `pmix_wire::msg`.
pub(super) struct Typed {
    /// Its `Debug`, pretty.
    debug: String,
    /// Whether the codec kept it as raw bytes (no typed layout).
    raw: bool,
    /// What it encodes back to.
    reencoded: Result<Vec<u8>, WireError>,
}

/// Decodes a classified frame's payload; `None` for a frame with no layout
/// (unmatched, heartbeat).
pub(super) fn typed(
    kind: FrameKind,
    payload: &[u8],
    codec: &Codec,
) -> Option<Result<Typed, WireError>> {
    Some(match kind {
        FrameKind::Request(_) => msg::decode_request(payload, codec).map(|r| Typed {
            debug: compact_debug(&format!("{r:#?}")),
            raw: matches!(r, msg::Request::Raw { .. }),
            reencoded: r.encode(codec),
        }),
        FrameKind::Reply(c) => msg::decode_reply(c, payload, codec).map(|r| Typed {
            debug: compact_debug(&format!("{r:#?}")),
            raw: matches!(r, msg::Reply::Raw { .. }),
            reencoded: r.encode(codec),
        }),
        FrameKind::Event => msg::decode_event(payload, codec).map(|e| Typed {
            debug: compact_debug(&format!("{e:#?}")),
            raw: false,
            reencoded: e.encode(codec),
        }),
        FrameKind::Iof => msg::decode_iof(payload, codec).map(|e| Typed {
            debug: compact_debug(&format!("{e:#?}")),
            raw: false,
            reencoded: e.encode(codec),
        }),
        FrameKind::Heartbeat | FrameKind::Unmatched => return None,
    })
}

/// `{:#?}` output with every block that holds one plain line folded into its
/// opening line (`Uint32(\n    0,\n)` becomes `Uint32(0)`), repeatedly, so wrappers
/// of wrappers fold too: a struct keeps one field a line, a scalar stays on its key's
/// line.
pub(super) fn compact_debug(pretty: &str) -> String {
    let mut lines: Vec<String> = pretty.lines().map(str::to_owned).collect();
    loop {
        let mut out: Vec<String> = Vec::with_capacity(lines.len());
        let mut changed = false;
        let mut i = 0;
        while i < lines.len() {
            let open = &lines[i];
            let folds = open.ends_with(['(', '{', '['])
                && lines.get(i + 1).is_some_and(|inner| {
                    !inner.trim_end().ends_with(['(', '{', '['])
                        && !inner.trim_start().starts_with([')', '}', ']'])
                })
                && lines.get(i + 2).is_some_and(|close| {
                    let t = close.trim_start();
                    t.starts_with([')', '}', ']']) && indent(close) == indent(open)
                });
            if folds {
                let inner = lines[i + 1].trim();
                let inner = inner.strip_suffix(',').unwrap_or(inner);
                let close = lines[i + 2].trim_start();
                let (pad_l, pad_r) = if open.ends_with('{') {
                    (" ", " ")
                } else {
                    ("", "")
                };
                out.push(format!("{open}{pad_l}{inner}{pad_r}{close}"));
                i += 3;
                changed = true;
            } else {
                out.push(lines[i].clone());
                i += 1;
            }
        }
        lines = out;
        if !changed {
            return lines.join("\n");
        }
    }
}

pub(super) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

pub(super) fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(2 * b.len()), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

pub(super) fn hex_spaced(b: &[u8]) -> String {
    let mut s = String::with_capacity(3 * b.len());
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_one_plain_line_fold_into_their_opening_line() {
        let pretty = "Kval {\n    key: \"k\",\n    value: String(\n        Some(\n            \"x\",\n        ),\n    ),\n}";
        assert_eq!(
            compact_debug(pretty),
            "Kval {\n    key: \"k\",\n    value: String(Some(\"x\")),\n}"
        );
        assert_eq!(compact_debug("Status {\n    a: 1,\n}"), "Status { a: 1 }");
    }
}
