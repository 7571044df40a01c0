//! The peer's PMIx version (from its handshake) and what it changes on the wire
//! (docs/wire.md §9), and the [`Codec`] settings every message decode and encode
//! takes.

use alloc::string::String;
use core::fmt;

use crate::error::{ErrorKind, WireError};
use crate::limits::Limits;
use crate::types::BufferType;

/// What this codec speaks, for [`ErrorKind::UnsupportedVersion`].
pub const SUPPORTED: &str = "PMIx 4.2.x (bfrops v41)";

/// A PMIx library version as its handshake states it (`4.2.2rc2`): major, minor,
/// release, and the text after the numbers (`rc2`), kept so that the string
/// re-encodes as it came.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Release.
    pub release: u32,
    /// The string as sent.
    pub text: String,
}

/// The layouts of GROUP_CONSTRUCT's reply and GROUP_DESTRUCT's request
/// (docs/wire.md §6.9), which changed inside 4.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupLayout {
    /// 4.2.0–4.2.3: construct reply `STATUS [SIZE ctxid]`, destruct request without
    /// members.
    V420,
    /// 4.2.4 and later: construct reply `STATUS SIZE PROC[] SIZE`, destruct request
    /// with the members.
    V424,
}

impl Version {
    /// Parses `major.minor.release` followed by any suffix (`4.2.2rc2`, `4.2.9`,
    /// `5.0.3a1`); a missing release counts as 0.
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedVersion`] (at `offset`) when `text` does not start
    /// with `major.minor`.
    pub fn parse(text: &str, offset: usize) -> Result<Self, WireError> {
        let bad = || {
            WireError::new(
                ErrorKind::UnsupportedVersion {
                    peer: text.into(),
                    ours: SUPPORTED,
                },
                offset,
            )
        };
        let mut nums = [0u32; 3];
        let mut rest = text;
        let mut parsed = 0;
        for (i, n) in nums.iter_mut().enumerate() {
            if i > 0 {
                match rest.strip_prefix('.') {
                    Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
                    _ => break,
                }
            }
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || digits > 9 {
                return Err(bad());
            }
            *n = rest[..digits].parse().map_err(|_| bad())?;
            rest = &rest[digits..];
            parsed += 1;
        }
        if parsed < 2 {
            return Err(bad());
        }
        Ok(Version {
            major: nums[0],
            minor: nums[1],
            release: nums[2],
            text: text.into(),
        })
    }

    /// Whether this codec can talk to a peer of this version: 4.2.x, and the 5.x
    /// and 6.x libraries that speak 4.2's protocol to a 4.2 peer (docs/wire.md §9).
    pub fn is_supported(&self) -> bool {
        (self.major, self.minor) == (4, 2) || (5..=6).contains(&self.major)
    }

    /// Fails for a peer this codec cannot talk to.
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedVersion`] at `offset`, naming both versions.
    pub fn check_supported(&self, offset: usize) -> Result<(), WireError> {
        if self.is_supported() {
            Ok(())
        } else {
            Err(WireError::new(
                ErrorKind::UnsupportedVersion {
                    peer: self.text.clone(),
                    ours: SUPPORTED,
                },
                offset,
            ))
        }
    }

    /// Whether a client of this version ends its connect message with the stray
    /// zero byte (4.2.2 and earlier, docs/wire.md §3.1).
    pub fn sends_stray_byte(&self) -> bool {
        (self.major, self.minor, self.release) <= (4, 2, 2)
    }

    /// The group-message layouts of this version.
    pub fn group_layout(&self) -> GroupLayout {
        if (self.major, self.minor, self.release) >= (4, 2, 4) {
            GroupLayout::V424
        } else {
            GroupLayout::V420
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What decoding or encoding a message depends on: the connection's buffer type,
/// the peer's version, and the limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codec {
    /// The buffer type the client announced in its handshake.
    pub buffer_type: BufferType,
    /// The client's version (the server adapts its layouts to it).
    pub version: Version,
    /// Bounds on what one decode may ask for.
    pub limits: Limits,
}

impl Codec {
    /// Non-described buffers, a 4.2.2 peer (Debian's `4.2.2rc2`), default limits.
    pub fn v422() -> Self {
        Codec {
            buffer_type: BufferType::NonDescribed,
            version: Version {
                major: 4,
                minor: 2,
                release: 2,
                text: "4.2.2rc2".into(),
            },
            limits: Limits::DEFAULT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_their_suffix_and_pick_layouts() {
        let v = Version::parse("4.2.2rc2", 0).unwrap();
        assert_eq!((v.major, v.minor, v.release), (4, 2, 2));
        assert!(v.sends_stray_byte() && v.is_supported());
        assert_eq!(v.group_layout(), GroupLayout::V420);
        let v = Version::parse("4.2.4", 0).unwrap();
        assert!(!v.sends_stray_byte());
        assert_eq!(v.group_layout(), GroupLayout::V424);
        assert!(Version::parse("5.0.3", 0).unwrap().is_supported());
        let old = Version::parse("3.2.3", 7).unwrap();
        let e = old.check_supported(7).unwrap_err();
        assert_eq!(e.offset, 7);
        assert!(alloc::format!("{e}").contains("3.2.3") && alloc::format!("{e}").contains("4.2"));
        assert!(Version::parse("x", 0).is_err());
        assert!(Version::parse("4", 0).is_err());
    }
}
