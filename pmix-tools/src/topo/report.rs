//! The JSON documents `pmix-topo --format json` prints (docs/design.md §7), as serde types:
//! the distances answer, the matrix answer and the PMIx error, each written on one line
//! by [`to_json`]. The tests read the output back into the same types.
//!
//! The spacing is pmix-topo's own, kept from its first version so the bytes stay the
//! same: `{"a": 1, "b": [1, 2]}` (a space after every `:` and `,`), where serde_json's
//! compact form has none. Strings are escaped as RFC 8259 asks (`"`, `\` and every
//! control character) and DEL (U+007F) as `\u007f` too; everything else, non-ASCII
//! included, is written as UTF-8.

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::ser::Formatter;

/// The `status` of a successful answer.
pub const SUCCESS: &str = "SUCCESS";

/// `pmix-topo distances --format json`: `{"status": "SUCCESS", "cpus": "0-3" or
/// "origin": "eth0", "distances": [...]}`, entries in result order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistancesReport {
    /// [`SUCCESS`].
    pub status: String,
    /// What the distances are measured from.
    #[serde(flatten)]
    pub from: MeasuredFrom,
    /// One entry per device, in the core's order.
    pub distances: Vec<DistanceEntry>,
}

/// What a distances answer is measured from: one key of [`DistancesReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MeasuredFrom {
    /// `"cpus": "0-3"`: a cpu list (given, or this process's binding).
    Cpus(String),
    /// `"origin": "eth0"`: a device, as named on the command line.
    Origin(String),
}

/// One device of a distances answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistanceEntry {
    /// The device's uuid (`ipv4://…`, `gpu://host::cuda0`).
    pub uuid: String,
    /// Its OS name (`eth0`, `cuda0`).
    pub osname: String,
    /// Its PMIx type name (`NETWORK`, `GPU`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its PCI address (`0000:02:00.0`), `null` for a device with none.
    pub pci: Option<String>,
    /// The smallest distance over the origin's PUs.
    pub mindist: u16,
    /// The largest.
    pub maxdist: u16,
}

/// `pmix-topo matrix --format json`: the devices, then the device × device matrix in
/// words and in distances (`null` where a device does not see another).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixReport {
    /// [`SUCCESS`].
    pub status: String,
    /// The rows' (and columns') devices, in order.
    pub devices: Vec<MatrixDevice>,
    /// `nvidia-smi topo -m` words (`X`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`).
    pub matrix: Vec<Vec<Option<String>>>,
    /// The device-to-device distances the words are read from.
    pub distances: Vec<Vec<Option<u16>>>,
}

/// One device of a matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixDevice {
    /// Its OS name.
    pub osname: String,
    /// Its PMIx type name.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its PCI address, `null` for a device with none.
    pub pci: Option<String>,
    /// Its uuid.
    pub uuid: String,
}

/// A PMIx error: `{"status": "PMIX_ERR_NOT_FOUND", "code": -46, "message": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// The status's C name (`PMIX_ERR_NOT_FOUND`), or `PMIX_ERROR` for a code without
    /// one.
    pub status: String,
    /// The `pmix_status_t` value.
    pub code: i32,
    /// What went wrong, and where.
    pub message: String,
}

/// `value` as one line of JSON in pmix-topo's spacing, newline included.
pub fn to_json<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    // The report types are plain data (strings, numbers, options, vectors, string
    // keys): serializing them into a vector cannot fail.
    if let Err(e) = value.serialize(&mut ser) {
        unreachable!("a report always serializes: {e}");
    }
    out.push(b'\n');
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// serde_json's compact layout with a space after every `:` and `,`, and DEL escaped.
struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut parts = fragment.split('\u{7f}');
        if let Some(first) = parts.next() {
            w.write_all(first.as_bytes())?;
        }
        for part in parts {
            w.write_all(b"\\u007f")?;
            w.write_all(part.as_bytes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spacing_is_pmix_topos_own() {
        let e = ErrorReport {
            status: "PMIX_ERR_NOT_FOUND".into(),
            code: -46,
            message: "x".into(),
        };
        assert_eq!(
            to_json(&e),
            "{\"status\": \"PMIX_ERR_NOT_FOUND\", \"code\": -46, \"message\": \"x\"}\n"
        );
        let m = MatrixReport {
            status: SUCCESS.into(),
            devices: Vec::new(),
            matrix: vec![vec![Some("X".into()), None]],
            distances: vec![vec![Some(0), None], vec![]],
        };
        assert_eq!(
            to_json(&m),
            "{\"status\": \"SUCCESS\", \"devices\": [], \"matrix\": [[\"X\", null]], \"distances\": [[0, null], []]}\n"
        );
    }

    #[test]
    fn every_control_character_and_del_are_escaped() {
        for c in (0u32..0x20).chain([0x7f]) {
            let ch = char::from_u32(c).unwrap();
            let e = ErrorReport {
                status: String::new(),
                code: 0,
                message: format!("a{ch}b"),
            };
            let out = to_json(&e);
            assert!(
                !out.trim_end()
                    .chars()
                    .any(|x| (x as u32) < 0x20 || x == '\u{7f}'),
                "{c:#x} gave {out:?}"
            );
            let back: ErrorReport = serde_json::from_str(&out).unwrap();
            assert_eq!(back, e, "{c:#x}");
        }
        let e = ErrorReport {
            status: "tab\there \"q\" back\\slash ünï\u{1}\u{7f}".into(),
            code: 1,
            message: String::new(),
        };
        assert!(
            to_json(&e).starts_with(
                "{\"status\": \"tab\\there \\\"q\\\" back\\\\slash ünï\\u0001\\u007f\""
            ),
            "{}",
            to_json(&e)
        );
    }

    #[test]
    fn a_distances_report_round_trips_with_its_origin_key_in_place() {
        let r = DistancesReport {
            status: SUCCESS.into(),
            from: MeasuredFrom::Origin("eth0".into()),
            distances: vec![DistanceEntry {
                uuid: "ipv4://1".into(),
                osname: "eth0".into(),
                kind: "NETWORK".into(),
                pci: None,
                mindist: 0,
                maxdist: 0,
            }],
        };
        let text = to_json(&r);
        assert_eq!(
            text,
            "{\"status\": \"SUCCESS\", \"origin\": \"eth0\", \"distances\": [{\"uuid\": \"ipv4://1\", \"osname\": \"eth0\", \"type\": \"NETWORK\", \"pci\": null, \"mindist\": 0, \"maxdist\": 0}]}\n"
        );
        assert_eq!(serde_json::from_str::<DistancesReport>(&text).unwrap(), r);
    }
}
