//! The textual forms of a [`CpuSet`]: cpu lists (`0-3,8,10-11`) and hwloc hex masks
//! (`0x0000000f,0xffffffff`), parsed (with the byte offset of the first offence in a
//! [`ParseCpusetError`]) and printed.

use core::fmt;

use super::CpuSet;

/// Why a cpu list or hex mask was rejected; the position is a byte offset in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseCpusetError {
    /// A character that cannot appear at that place.
    #[error("unexpected {found:?} at byte {at}")]
    Unexpected {
        /// Byte offset of the offending character.
        at: usize,
        /// The offending character.
        found: char,
    },
    /// The input ended where a number was expected.
    #[error("unexpected end of input at byte {at}")]
    UnexpectedEnd {
        /// Byte offset of the end.
        at: usize,
    },
    /// A range whose end is below its start (`5-3`).
    #[error("range ending below its start at byte {at}")]
    ReversedRange {
        /// Byte offset of the range.
        at: usize,
    },
    /// A PU index at or above [`CpuSet::MAX_PUS`].
    #[error("cpu index at byte {at} is not below {}", CpuSet::MAX_PUS)]
    TooLarge {
        /// Byte offset of the number.
        at: usize,
    },
}

impl CpuSet {
    /// Parses a cpu list: comma-separated indexes and inclusive ranges (`0-3,8,10-11`).
    /// Spaces around items and a trailing newline are accepted; the empty string is the
    /// empty set (as in an empty sysfs `cpulist`).
    ///
    /// # Errors
    /// [`ParseCpusetError`] naming the first offending byte.
    pub fn parse_list(s: &str) -> Result<Self, ParseCpusetError> {
        let b = s.as_bytes();
        let mut set = CpuSet::new();
        let mut i = 0;
        skip_ws(b, &mut i);
        if i == b.len() {
            return Ok(set);
        }
        loop {
            skip_ws(b, &mut i);
            let start_at = i;
            let lo = parse_index(s, &mut i)?;
            skip_ws(b, &mut i);
            let hi = if b.get(i) == Some(&b'-') {
                i += 1;
                skip_ws(b, &mut i);
                let hi = parse_index(s, &mut i)?;
                if hi < lo {
                    return Err(ParseCpusetError::ReversedRange { at: start_at });
                }
                hi
            } else {
                lo
            };
            set.insert_range(lo, hi + 1);
            skip_ws(b, &mut i);
            match b.get(i) {
                None => return Ok(set),
                Some(b',') => i += 1,
                Some(_) => return Err(unexpected(s, i)),
            }
        }
    }

    /// Parses an hwloc hex mask: comma-separated 32-bit hex words, most significant
    /// first, each optionally `0x`-prefixed; an empty word is zero (`0xf,,0x1`).
    /// A trailing newline is accepted.
    ///
    /// # Errors
    /// [`ParseCpusetError`] naming the first offending byte; a mask wider than
    /// [`CpuSet::MAX_PUS`] bits with a bit set beyond it is [`ParseCpusetError::TooLarge`].
    pub fn parse_hex_mask(s: &str) -> Result<Self, ParseCpusetError> {
        let trimmed = s.trim_end_matches(['\n', '\r', ' ', '\t']);
        let b = trimmed.as_bytes();
        // Split into words first (positions kept) to learn how many there are.
        let nwords = b.iter().filter(|&&c| c == b',').count() + 1;
        let mut set = CpuSet::new();
        let mut start = 0;
        for k in 0..nwords {
            let end = b[start..]
                .iter()
                .position(|&c| c == b',')
                .map_or(b.len(), |p| start + p);
            let mut digits = &b[start..end];
            let mut at = start;
            if digits.len() >= 2 && digits[0] == b'0' && (digits[1] == b'x' || digits[1] == b'X') {
                digits = &digits[2..];
                at += 2;
                // `0x` promises digits; only a word with no prefix at all may be empty.
                if digits.is_empty() {
                    return Err(unexpected(s, at));
                }
            }
            if digits.len() > 8 {
                return Err(unexpected(s, at + 8));
            }
            let mut word: u32 = 0;
            for (j, &c) in digits.iter().enumerate() {
                let v = match c {
                    b'0'..=b'9' => c - b'0',
                    b'a'..=b'f' => c - b'a' + 10,
                    b'A'..=b'F' => c - b'A' + 10,
                    _ => return Err(unexpected(s, at + j)),
                };
                word = (word << 4) | u32::from(v);
            }
            if b.is_empty() {
                return Err(ParseCpusetError::UnexpectedEnd { at: 0 });
            }
            let shift = (nwords - 1 - k) as u64 * 32;
            if word != 0 {
                if shift + 32 > u64::from(Self::MAX_PUS) {
                    return Err(ParseCpusetError::TooLarge { at: start });
                }
                let shift = shift as u32;
                for bit in 0..32 {
                    if word & (1 << bit) != 0 {
                        set.insert(shift + bit);
                    }
                }
            }
            start = end + 1;
        }
        Ok(set)
    }

    /// `s` after its `hwloc:` prefix (in any case), the form of a PMIx cpuset
    /// string (`PMIx_Parse_cpuset_string`); `None` without one.
    pub fn strip_hwloc_prefix(s: &str) -> Option<&str> {
        s.get(..6)
            .filter(|p| p.eq_ignore_ascii_case("hwloc:"))
            .map(|_| &s[6..])
    }

    /// Parses the cpus of a PMIx cpuset string: an hwloc list (`0-3,8`) or hex mask
    /// (`0x…`), after an optional `hwloc:` prefix ([`CpuSet::strip_hwloc_prefix`]).
    ///
    /// # Errors
    /// As [`CpuSet::parse_list`] or [`CpuSet::parse_hex_mask`].
    pub fn parse_pmix(s: &str) -> Result<Self, ParseCpusetError> {
        let body = Self::strip_hwloc_prefix(s).unwrap_or(s);
        if body.starts_with("0x") || body.starts_with("0X") {
            Self::parse_hex_mask(body)
        } else {
            Self::parse_list(body)
        }
    }

    /// A value that prints the set as an hwloc hex mask (`0x0000000f,0xffffffff`);
    /// the empty set prints as `0x0`.
    pub fn hex_mask(&self) -> impl fmt::Display + '_ {
        HexMask(self)
    }
}

fn skip_ws(b: &[u8], i: &mut usize) {
    while matches!(b.get(*i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        *i += 1;
    }
}

fn unexpected(s: &str, at: usize) -> ParseCpusetError {
    match s.get(at..).and_then(|r| r.chars().next()) {
        Some(found) => ParseCpusetError::Unexpected { at, found },
        None => ParseCpusetError::UnexpectedEnd { at },
    }
}

fn parse_index(s: &str, i: &mut usize) -> Result<u32, ParseCpusetError> {
    let b = s.as_bytes();
    let start = *i;
    let mut v: u64 = 0;
    while let Some(&c) = b.get(*i) {
        if !c.is_ascii_digit() {
            break;
        }
        v = v * 10 + u64::from(c - b'0');
        if v >= u64::from(CpuSet::MAX_PUS) {
            return Err(ParseCpusetError::TooLarge { at: start });
        }
        *i += 1;
    }
    if *i == start {
        return Err(unexpected(s, start));
    }
    Ok(v as u32)
}

/// Prints the set as a cpu list (`0-3,8,10-11`); the empty set prints as nothing.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut it = self.iter().peekable();
        let mut first = true;
        while let Some(lo) = it.next() {
            let mut hi = lo;
            while it.peek() == Some(&(hi + 1)) {
                hi += 1;
                it.next();
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if hi == lo {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        Ok(())
    }
}

struct HexMask<'a>(&'a CpuSet);

impl fmt::Display for HexMask<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = &self.0.words;
        if words.is_empty() {
            return f.write_str("0x0");
        }
        let mut halves = words
            .iter()
            .rev()
            .flat_map(|w| [(w >> 32) as u32, *w as u32]);
        // Skip a leading zero half so the mask is as short as hwloc prints it.
        let top = words[words.len() - 1];
        if top >> 32 == 0 {
            halves.next();
        }
        let mut first = true;
        for h in halves {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "0x{h:08x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    #[test]
    fn list_round_trips() {
        let s = CpuSet::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::parse_list("5\n").unwrap().to_string(), "5");
        assert!(CpuSet::parse_list("").unwrap().is_empty());
        assert!(CpuSet::parse_list("\n").unwrap().is_empty());
    }

    #[test]
    fn a_pmix_cpuset_string_is_a_list_or_a_mask_after_an_optional_hwloc_prefix() {
        let want = [0, 1, 2, 3];
        for s in [
            "hwloc:0-3",
            "HWLOC:0-3",
            "0-3",
            "hwloc:0xf",
            "0xf",
            "hwloc:0x0000000f",
        ] {
            assert_eq!(
                CpuSet::parse_pmix(s).unwrap().iter().collect::<Vec<_>>(),
                want,
                "{s}"
            );
        }
        assert_eq!(CpuSet::strip_hwloc_prefix("Hwloc:1"), Some("1"));
        assert_eq!(CpuSet::strip_hwloc_prefix("linux:1"), None);
        assert_eq!(CpuSet::strip_hwloc_prefix("hw"), None);
        assert!(CpuSet::parse_pmix("linux:0-3").is_err());
        assert!(CpuSet::parse_pmix("hwloc:3-1").is_err());
    }

    #[test]
    fn list_errors_name_the_byte() {
        assert_eq!(
            CpuSet::parse_list("0-3,x").unwrap_err(),
            ParseCpusetError::Unexpected { at: 4, found: 'x' }
        );
        assert_eq!(
            CpuSet::parse_list("0-3,x").unwrap_err().to_string(),
            "unexpected 'x' at byte 4"
        );
        assert_eq!(
            CpuSet::parse_list("5-3").unwrap_err(),
            ParseCpusetError::ReversedRange { at: 0 }
        );
        assert_eq!(
            CpuSet::parse_list("1,").unwrap_err(),
            ParseCpusetError::UnexpectedEnd { at: 2 }
        );
        assert!(matches!(
            CpuSet::parse_list("99999999999"),
            Err(ParseCpusetError::TooLarge { at: 0 })
        ));
        assert!(matches!(
            CpuSet::parse_list("0-1048576"),
            Err(ParseCpusetError::TooLarge { at: 2 })
        ));
        assert!(CpuSet::parse_list("0-1048575").is_ok());
    }

    #[test]
    fn hex_masks_parse_hwloc_style() {
        let s = CpuSet::parse_hex_mask("0x0000000f,0xffffffff").unwrap();
        assert_eq!(s.len(), 36);
        assert!(s.contains(35) && !s.contains(36));
        let s = CpuSet::parse_hex_mask("0x00000f0f,,0xffffffff").unwrap();
        assert!(s.contains(64) && s.contains(75) && !s.contains(32));
        assert_eq!(CpuSet::parse_hex_mask("00ff\n").unwrap().to_string(), "0-7");
        assert_eq!(CpuSet::parse_hex_mask("0x0").unwrap(), CpuSet::new());
        assert_eq!(
            CpuSet::parse_hex_mask("0xfg").unwrap_err(),
            ParseCpusetError::Unexpected { at: 3, found: 'g' }
        );
        assert!(CpuSet::parse_hex_mask("").is_err());
        assert_eq!(
            CpuSet::parse_hex_mask("0x").unwrap_err(),
            ParseCpusetError::UnexpectedEnd { at: 2 }
        );
        assert_eq!(
            CpuSet::parse_hex_mask("0xf,0x,0x1").unwrap_err(),
            ParseCpusetError::Unexpected { at: 6, found: ',' }
        );
        assert!(CpuSet::parse_hex_mask("0x123456789").is_err());
    }

    #[test]
    fn hex_mask_prints_like_hwloc() {
        let s = CpuSet::parse_list("0-35").unwrap();
        assert_eq!(s.hex_mask().to_string(), "0x0000000f,0xffffffff");
        assert_eq!(
            CpuSet::parse_hex_mask(&s.hex_mask().to_string()).unwrap(),
            s
        );
        assert_eq!(CpuSet::new().hex_mask().to_string(), "0x0");
        assert_eq!(
            CpuSet::from_pus([64]).hex_mask().to_string(),
            "0x00000001,0x00000000,0x00000000"
        );
    }
}
