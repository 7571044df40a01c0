//! PCI bus ids (`DDDD:BB:DD.F`).

use core::fmt;
use core::str::FromStr;

/// A PCI function address: domain, bus, device, function.
///
/// Ordered numerically (domain, bus, device, function); prints as `0000:06:00.0`
/// (at least four hex digits of domain: hwloc and Linux allow 32-bit domains).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PciAddr {
    /// PCI segment (domain); 32 bits on some machines.
    pub domain: u32,
    /// Bus number.
    pub bus: u8,
    /// Device number (0–31).
    pub device: u8,
    /// Function number (0–7).
    pub function: u8,
}

/// A PCI address as a user may write it: `0000:06:00.0`, or `06:00.0` meaning any
/// domain.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PciPattern {
    /// The domain, or `None` for the short form.
    pub domain: Option<u32>,
    /// Bus number.
    pub bus: u8,
    /// Device number.
    pub device: u8,
    /// Function number.
    pub function: u8,
}

/// Why a string is not a PCI address.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[error("not a PCI address (expected DDDD:BB:DD.F)")]
pub struct ParsePciError;

impl PciAddr {
    /// Builds an address, checking the device (< 32) and function (< 8) ranges.
    ///
    /// # Errors
    /// [`ParsePciError`] when device or function is out of range.
    pub fn new(domain: u32, bus: u8, device: u8, function: u8) -> Result<Self, ParsePciError> {
        if device >= 32 || function >= 8 {
            return Err(ParsePciError);
        }
        Ok(PciAddr {
            domain,
            bus,
            device,
            function,
        })
    }

    /// `true` if this address answers to `p`.
    pub fn matches(&self, p: &PciPattern) -> bool {
        p.domain.is_none_or(|d| d == self.domain)
            && p.bus == self.bus
            && p.device == self.device
            && p.function == self.function
    }
}

impl PciPattern {
    /// Parses `DDDD:BB:DD.F` or `BB:DD.F` (hex, case-insensitive, up to 8 domain
    /// digits).
    ///
    /// # Errors
    /// [`ParsePciError`] for anything else.
    pub fn parse(s: &str) -> Result<Self, ParsePciError> {
        let (head, func) = s.rsplit_once('.').ok_or(ParsePciError)?;
        let mut parts = head.rsplitn(3, ':');
        let dev = parts.next().ok_or(ParsePciError)?;
        let bus = parts.next().ok_or(ParsePciError)?;
        let domain = parts.next();
        let function = hex(func, 1)? as u8;
        let device = hex(dev, 2)? as u8;
        let bus = hex(bus, 2)? as u8;
        let domain = domain.map(|d| hex(d, 8)).transpose()?;
        if device >= 32 || function >= 8 {
            return Err(ParsePciError);
        }
        Ok(PciPattern {
            domain,
            bus,
            device,
            function,
        })
    }
}

fn hex(s: &str, max_digits: usize) -> Result<u32, ParsePciError> {
    if s.is_empty() || s.len() > max_digits || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ParsePciError);
    }
    u32::from_str_radix(s, 16).map_err(|_| ParsePciError)
}

impl FromStr for PciAddr {
    type Err = ParsePciError;

    /// Parses the full form `DDDD:BB:DD.F`.
    fn from_str(s: &str) -> Result<Self, ParsePciError> {
        let p = PciPattern::parse(s)?;
        Ok(PciAddr {
            domain: p.domain.ok_or(ParsePciError)?,
            bus: p.bus,
            device: p.device,
            function: p.function,
        })
    }
}

impl fmt::Display for PciAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl fmt::Debug for PciAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PciAddr({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn parses_full_and_short_forms() {
        let a: PciAddr = "0000:06:00.0".parse().unwrap();
        assert_eq!(a.to_string(), "0000:06:00.0");
        assert_eq!(
            "0001:AB:1f.7".parse::<PciAddr>().unwrap().to_string(),
            "0001:ab:1f.7"
        );
        assert_eq!(
            "10000:00:00.0".parse::<PciAddr>().unwrap().to_string(),
            "10000:00:00.0"
        );
        let p = PciPattern::parse("06:00.0").unwrap();
        assert_eq!(p.domain, None);
        assert!(a.matches(&p));
        assert!("06:00.0".parse::<PciAddr>().is_err());
        for bad in [
            "",
            "0000:06:00",
            "0000:06:20.0",
            "0000:06:00.8",
            "x:06:00.0",
            "0000:006:00.0",
            "eth0",
            "a:b:c:d.0",
        ] {
            assert!(PciPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn orders_numerically() {
        let a: PciAddr = "0000:0a:00.0".parse().unwrap();
        let b: PciAddr = "0000:81:00.0".parse().unwrap();
        let c: PciAddr = "0001:00:00.0".parse().unwrap();
        assert!(a < b && b < c);
    }
}
