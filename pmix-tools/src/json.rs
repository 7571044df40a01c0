//! A small JSON writer: enough for `pmix-topo --format json`, with correct string
//! escaping (RFC 8259: `"`, `\` and every control character escaped; everything else,
//! non-ASCII included, written as UTF-8).

use std::fmt::Write as _;

/// Appends `s` to `out` as a JSON string literal, quotes included.
///
/// ```
/// let mut out = String::new();
/// pmix_tools::json::string(&mut out, "a\"b\\c\n\u{1}é");
/// assert_eq!(out, r#""a\"b\\c\n\u0001é""#);
/// ```
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                // Infallible: writing to a String.
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `s` as a JSON string, or `null` for `None`.
pub fn opt_string(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.push_str("null"),
    }
}

/// Builds one JSON object, key by key, in order.
#[derive(Debug)]
pub struct Object<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Object<'a> {
    /// Opens an object at the end of `out`.
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        Object { out, first: true }
    }

    /// Writes a key and leaves `out` ready for its value; returns the buffer to write
    /// the value into.
    pub fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push_str(", ");
        }
        self.first = false;
        string(self.out, k);
        self.out.push_str(": ");
        self.out
    }

    /// A string member.
    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        string(self.key(k), v);
        self
    }

    /// A string-or-null member.
    pub fn opt_str(&mut self, k: &str, v: Option<&str>) -> &mut Self {
        opt_string(self.key(k), v);
        self
    }

    /// An integer member.
    pub fn int(&mut self, k: &str, v: i64) -> &mut Self {
        let out = self.key(k);
        let _ = write!(out, "{v}");
        self
    }

    /// Closes the object.
    pub fn end(self) {
        self.out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_control_character() {
        for c in 0u32..0x20 {
            let ch = char::from_u32(c).unwrap();
            let mut out = String::new();
            string(&mut out, &ch.to_string());
            assert!(out.starts_with("\"\\"), "{c:#x} gave {out}");
            assert!(
                !out[1..out.len() - 1].chars().any(|x| (x as u32) < 0x20),
                "{c:#x}"
            );
        }
        let mut out = String::new();
        string(&mut out, "tab\there \"q\" back\\slash ünï");
        assert_eq!(out, "\"tab\\there \\\"q\\\" back\\\\slash ünï\"");
    }

    #[test]
    fn objects() {
        let mut out = String::new();
        let mut o = Object::new(&mut out);
        o.str("a", "x").opt_str("b", None).int("c", -46);
        o.end();
        assert_eq!(out, r#"{"a": "x", "b": null, "c": -46}"#);
    }
}
