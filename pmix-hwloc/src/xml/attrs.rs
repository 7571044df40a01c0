//! An element's attributes, and hwloc's attribute values parsed into what the emitter
//! takes: an `<object>`'s class and [`ObjInfo`] (`type`, `bridge_type`, `cpuset`,
//! `pci_busid`, `pci_type`, `bridge_pci`, `name`, `osdev_type`), a `<pci_locality>`
//! statement, and the `<topology>` element's [`Format`].
//!
//! [`Attrs::read`] checks every attribute against [`Limits::max_attr_len`], unescapes
//! it and refuses NUL bytes; a value that does not parse is an
//! [`XmlErrorKind::BadAttribute`] quoting it and saying what was expected.

use std::borrow::Cow;
use std::fmt;

use pmix_core::{CpuSet, DeviceTypes, OsDeviceSpec, PciAddr};
use quick_xml::events::BytesStart;

use super::error::{cut, describe, line_of, syntax};
use super::{Format, Limits, XmlError, XmlErrorKind};
use crate::emit::{Class, Loc, ObjInfo, PciLocality, osdev_type_v2, osdev_type_v3};

/// The attributes of one element, unescaped. Where the element is (its line, how it
/// starts) is worked out only for an error: counting lines per element would make the
/// import quadratic.
pub(super) struct Attrs<'a> {
    pairs: Vec<(&'a [u8], Cow<'a, str>)>,
    start: &'a BytesStart<'a>,
    text: &'a str,
    pos: u64,
}

/// What `bridge_pci` must look like.
const BRIDGE_PCI_FORM: &str = "expected \"DDDD:[SS-EE]\" (domain and bus range in hex)";
/// What `pci_type` must look like.
const PCI_TYPE_FORM: &str = "expected \"CCCC [VVVV:DDDD] …\" (class, vendor and device in hex)";

impl<'a> Attrs<'a> {
    /// The attributes of `e`, which starts at byte `pos` of `text`.
    pub(super) fn read(
        e: &'a BytesStart<'a>,
        text: &'a str,
        pos: u64,
        limits: &Limits,
    ) -> Result<Self, XmlError> {
        let mut pairs = Vec::with_capacity(8);
        let err = |kind| XmlError::at_element(text, pos, e, kind);
        for a in e.attributes().with_checks(true) {
            let a = a.map_err(|x| err(XmlErrorKind::Syntax(x.to_string())))?;
            if a.value.len() > limits.max_attr_len {
                return Err(err(XmlErrorKind::AttributeTooLong {
                    name: cut(&String::from_utf8_lossy(a.key.as_ref())),
                    len: a.value.len(),
                    limit: limits.max_attr_len,
                }));
            }
            let key = a.key.into_inner();
            let value = a.unescape_value().map_err(|x| err(syntax(&x)))?;
            if value.contains('\0') {
                return Err(err(XmlErrorKind::NulByte));
            }
            pairs.push((key, value));
        }
        Ok(Attrs {
            pairs,
            start: e,
            text,
            pos,
        })
    }

    /// How the element starts, for messages.
    pub(super) fn element(&self) -> String {
        describe(self.start)
    }

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| *k == key.as_bytes())
            .map(|(_, v)| v.as_ref())
    }

    /// An error about this element.
    pub(super) fn err(&self, kind: XmlErrorKind) -> XmlError {
        XmlError::new(line_of(self.text, self.pos), self.element(), kind)
    }

    pub(super) fn required(&self, key: &'static str) -> Result<&str, XmlError> {
        self.get(key)
            .ok_or_else(|| self.err(XmlErrorKind::MissingAttribute(key)))
    }

    fn bad(&self, name: &'static str, value: &str, reason: impl fmt::Display) -> XmlError {
        self.err(XmlErrorKind::BadAttribute {
            name,
            value: cut(value),
            reason: reason.to_string(),
        })
    }

    /// The class of an `<object>` and what the emitter needs of it, its `osdev_type`
    /// read as `format` writes it.
    pub(super) fn object(&self, format: Format) -> Result<(Class, ObjInfo), XmlError> {
        let ty = self.required("type")?;
        let mut info = ObjInfo::default();
        let class = match ty {
            "Machine" => Class::Machine,
            "Package" | "Socket" => Class::Package,
            "NUMANode" => Class::Numa,
            "Group" => Class::Group,
            "Die" | "Core" | "PU" | "Cache" | "L1Cache" | "L2Cache" | "L3Cache" | "L4Cache"
            | "L5Cache" | "L1iCache" | "L2iCache" | "L3iCache" | "MemCache" => Class::OtherCpu,
            "Misc" => Class::Misc,
            "Bridge" => match self.required("bridge_type")? {
                "0-1" => Class::HostBridge,
                "1-1" => Class::PciBridge,
                bt => {
                    return Err(self.bad(
                        "bridge_type",
                        bt,
                        "expected \"0-1\" (host bridge) or \"1-1\" (PCI bridge)",
                    ));
                }
            },
            "PCIDev" => Class::PciFunction,
            "OSDev" => Class::OsDevice,
            "System" => return Err(self.err(XmlErrorKind::System)),
            other => return Err(self.err(XmlErrorKind::UnknownObjectType(cut(other)))),
        };
        match class {
            Class::PciBridge | Class::PciFunction => {
                info.pci = Some(self.pci_addr()?);
                info.class = self.pci_class()?;
            }
            Class::OsDevice => info.spec = Some(self.os_device(format)?),
            Class::HostBridge => info.bus = self.bridge_bus()?,
            _ => info.cpus = self.cpuset("cpuset")?,
        }
        Ok((class, info))
    }

    /// A `<pci_locality>` statement, found at `loc`.
    pub(super) fn pci_locality(&self, loc: Loc) -> Result<PciLocality, XmlError> {
        let domain = self.number("domain", u64::from(u32::MAX))?;
        let bus_min = self.number("bus_min", 0xff)?;
        let bus_max = self.number("bus_max", 0xff)?;
        if bus_min > bus_max {
            let v = self.required("bus_max")?;
            return Err(self.bad("bus_max", v, "below bus_min"));
        }
        let cpus = self
            .cpuset("cpuset")?
            .ok_or_else(|| self.err(XmlErrorKind::MissingAttribute("cpuset")))?;
        Ok(PciLocality {
            domain: u32::try_from(domain).unwrap_or(u32::MAX),
            bus_min: u8::try_from(bus_min).unwrap_or(u8::MAX),
            bus_max: u8::try_from(bus_max).unwrap_or(u8::MAX),
            cpus,
            loc,
        })
    }

    /// The `version` of a `<topology>` element.
    pub(super) fn format(&self) -> Result<Format, XmlError> {
        match self.get("version") {
            None => Ok(Format::V1),
            Some(v) => match v.split('.').next() {
                Some("1") => Ok(Format::V1),
                Some("2") => Ok(Format::V2),
                Some("3") => Ok(Format::V3),
                _ => Err(self.err(XmlErrorKind::UnsupportedVersion(cut(v)))),
            },
        }
    }

    /// An OS device's `name` and `osdev_type` (an enum before v3, a bitmask since).
    fn os_device(&self, format: Format) -> Result<OsDeviceSpec, XmlError> {
        let name = self.required("name")?;
        let t = self.required("osdev_type")?;
        let v: u32 = t
            .parse()
            .map_err(|_| self.bad("osdev_type", t, "not a decimal integer"))?;
        let kind: Option<DeviceTypes> = match format {
            Format::V3 => osdev_type_v3(v),
            Format::V1 | Format::V2 => osdev_type_v2(v),
        };
        let kind = kind.ok_or_else(|| {
            let expected = match format {
                Format::V3 => "not a known hwloc 3 type bitmask (bits 1 to 64)",
                _ => "not a known hwloc type (0 to 5)",
            };
            self.bad("osdev_type", t, expected)
        })?;
        Ok(OsDeviceSpec {
            name: name.to_owned(),
            kind,
            ..Default::default()
        })
    }

    fn cpuset(&self, key: &'static str) -> Result<Option<CpuSet>, XmlError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => CpuSet::parse_hex_mask(v)
                .map(Some)
                .map_err(|e| self.bad(key, v, e)),
        }
    }

    fn pci_addr(&self) -> Result<PciAddr, XmlError> {
        let v = self.required("pci_busid")?;
        v.parse::<PciAddr>()
            .map_err(|e| self.bad("pci_busid", v, e))
    }

    /// A number no larger than `max`, written as hwloc does (`0x2b`) or in decimal.
    fn number(&self, key: &'static str, max: u64) -> Result<u64, XmlError> {
        let v = self.required(key)?;
        let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(hex) if !hex.is_empty() && hex.len() <= 16 => u64::from_str_radix(hex, 16).ok(),
            Some(_) => None,
            None if !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit()) => {
                v.parse().ok()
            }
            None => None,
        };
        match parsed {
            Some(n) if n <= max => Ok(n),
            Some(_) => Err(self.bad(key, v, format_args!("more than {max:#x}"))),
            None => Err(self.bad(
                key,
                v,
                "expected a number, in hex with 0x (as hwloc writes it) or in decimal",
            )),
        }
    }

    /// A host bridge's domain and secondary bus from `bridge_pci="DDDD:[SS-EE]"`, if
    /// present.
    fn bridge_bus(&self) -> Result<Option<(u32, u8)>, XmlError> {
        let Some(v) = self.get("bridge_pci") else {
            return Ok(None);
        };
        let bad = || self.bad("bridge_pci", v, BRIDGE_PCI_FORM);
        let (domain, range) = v.split_once(':').ok_or_else(bad)?;
        let (first, last) = range
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|r| r.split_once('-'))
            .ok_or_else(bad)?;
        let hex = |s: &str, n: usize| {
            if s.is_empty() || s.len() > n || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
                None
            } else {
                u32::from_str_radix(s, 16).ok()
            }
        };
        let domain = hex(domain, 8).ok_or_else(bad)?;
        let first = hex(first, 2).ok_or_else(bad)?;
        hex(last, 2).ok_or_else(bad)?;
        Ok(Some((domain, u8::try_from(first).map_err(|_| bad())?)))
    }

    /// The class from `pci_type="CCCC [VVVV:DDDD] [SSSS:SSSS] RR"`.
    fn pci_class(&self) -> Result<Option<u16>, XmlError> {
        let Some(v) = self.get("pci_type") else {
            return Ok(None);
        };
        let bad = || self.bad("pci_type", v, PCI_TYPE_FORM);
        let mut words = v.split(' ');
        let class = words.next().filter(|c| is_hex(c, 4)).ok_or_else(bad)?;
        let ids = words.next().ok_or_else(bad)?;
        let b = ids.as_bytes();
        let ok = b.len() == 11
            && b[0] == b'['
            && b[5] == b':'
            && b[10] == b']'
            && b[1..5].iter().chain(&b[6..10]).all(u8::is_ascii_hexdigit);
        if !ok {
            return Err(bad());
        }
        u16::from_str_radix(class, 16).map(Some).map_err(|_| bad())
    }
}

fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}
