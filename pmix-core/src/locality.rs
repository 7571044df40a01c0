//! Relative locality (`PMIx_Get_relative_locality`): what two processes on one node
//! share, from their locality strings (`PMIX_LOCALITY_STRING`, `pmix.locstr`), in
//! OpenPMIx 4.2's format: `hwloc:` then `:`-separated fields, each a two-letter
//! resource — `SK` package, `NM` NUMA domain, `L3`, `L2`, `L1` caches, `CR` core, `HT`
//! hardware thread — and the indices of that resource the process is bound to, as a
//! list of numbers and ranges (`SK0:L30:L20:L10:CR0-1:HT0-3:NM0`).
//!
//! Two processes share a resource when both strings name it and their index lists
//! meet. The result always has [`Locality::SHARE_NODE`] (both strings describe this
//! node). Reading never allocates.

use core::fmt;

use crate::status::{PmixError, Status};

/// What two processes share (`pmix_locality_t`): a set of `PMIX_LOCALITY_SHARE_*`
/// bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Locality(pub u16);

impl Locality {
    /// `PMIX_LOCALITY_SHARE_HWTHREAD`.
    pub const SHARE_HWTHREAD: u16 = 0x0001;
    /// `PMIX_LOCALITY_SHARE_CORE`.
    pub const SHARE_CORE: u16 = 0x0002;
    /// `PMIX_LOCALITY_SHARE_L1CACHE`.
    pub const SHARE_L1CACHE: u16 = 0x0004;
    /// `PMIX_LOCALITY_SHARE_L2CACHE`.
    pub const SHARE_L2CACHE: u16 = 0x0008;
    /// `PMIX_LOCALITY_SHARE_L3CACHE`.
    pub const SHARE_L3CACHE: u16 = 0x0010;
    /// `PMIX_LOCALITY_SHARE_PACKAGE`.
    pub const SHARE_PACKAGE: u16 = 0x0020;
    /// `PMIX_LOCALITY_SHARE_NUMA`.
    pub const SHARE_NUMA: u16 = 0x0040;
    /// `PMIX_LOCALITY_SHARE_NODE`.
    pub const SHARE_NODE: u16 = 0x4000;
}

/// Why a locality string was refused. Always `PMIX_ERR_BAD_PARAM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalityError {
    /// The string does not start with `hwloc:`.
    NotHwloc,
    /// A field is not a known resource followed by an index list (`CR0-3,7`); its
    /// position among the fields.
    BadField(usize),
}

impl fmt::Display for LocalityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalityError::NotHwloc => f.write_str("a locality string starts with \"hwloc:\""),
            LocalityError::BadField(i) => write!(
                f,
                "field {i} of a locality string is not a resource (SK, NM, L3, L2, L1, CR, \
                 HT) and an index list"
            ),
        }
    }
}

impl core::error::Error for LocalityError {}

impl PmixError for LocalityError {
    fn status(&self) -> Status {
        Status::ERR_BAD_PARAM
    }
}

/// The bit of a resource's two-letter name.
fn bit(name: &str) -> Option<u16> {
    Some(match name {
        "SK" => Locality::SHARE_PACKAGE,
        "NM" => Locality::SHARE_NUMA,
        "L3" => Locality::SHARE_L3CACHE,
        "L2" => Locality::SHARE_L2CACHE,
        "L1" => Locality::SHARE_L1CACHE,
        "CR" => Locality::SHARE_CORE,
        "HT" => Locality::SHARE_HWTHREAD,
        _ => return None,
    })
}

/// The fields of `s` after `hwloc:`.
fn fields(s: &str) -> Result<core::str::Split<'_, char>, LocalityError> {
    s.strip_prefix("hwloc:")
        .map(|rest| rest.split(':'))
        .ok_or(LocalityError::NotHwloc)
}

/// The ranges of an index list (`0-3,7`), each inclusive; `None` for a malformed one.
fn ranges(list: &str) -> impl Iterator<Item = Option<(u32, u32)>> + '_ {
    list.split(',').map(|part| {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
        (a <= b).then_some((a, b))
    })
}

/// Checks every field of `s`.
fn check(s: &str) -> Result<(), LocalityError> {
    for (i, f) in fields(s)?.enumerate() {
        if f.is_empty() && i == 0 {
            continue;
        }
        let ok = f.len() > 2
            && f.is_char_boundary(2)
            && bit(&f[..2]).is_some()
            && ranges(&f[2..]).all(|r| r.is_some());
        if !ok {
            return Err(LocalityError::BadField(i));
        }
    }
    Ok(())
}

/// Whether two index lists meet.
fn meet(a: &str, b: &str) -> bool {
    ranges(a)
        .flatten()
        .any(|(a0, a1)| ranges(b).flatten().any(|(b0, b1)| a0 <= b1 && b0 <= a1))
}

/// What the processes of locality strings `a` and `b` share.
///
/// # Errors
/// [`LocalityError`] (`PMIX_ERR_BAD_PARAM`) when either is not such a string.
///
/// ```
/// use pmix_core::locality::{Locality, relative_locality};
/// let l = relative_locality("hwloc:SK0:L30:L20:L10:CR0:HT0:NM0",
///                           "hwloc:SK0:L30:L20:L10:CR1:HT2:NM0").unwrap();
/// assert_eq!(l.0, 0x407c); // node, NUMA, package, L3, L2, L1; not core or thread
/// assert!(relative_locality("SK0", "hwloc:SK0").is_err());
/// ```
pub fn relative_locality(a: &str, b: &str) -> Result<Locality, LocalityError> {
    check(a)?;
    check(b)?;
    let mut bits = Locality::SHARE_NODE;
    for fa in fields(a)?.filter(|f| f.len() > 2) {
        let (name, list) = fa.split_at(2);
        let Some(bit) = bit(name) else { continue };
        if fields(b)?
            .filter(|f| f.len() > 2)
            .any(|fb| &fb[..2] == name && meet(list, &fb[2..]))
        {
            bits |= bit;
        }
    }
    Ok(Locality(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_resources_are_those_both_name_with_meeting_indices() {
        let same = "hwloc:SK0:L30:L20:L10:CR0:HT0:NM0";
        assert_eq!(relative_locality(same, same).unwrap().0, 0x407f);
        let other_socket = "hwloc:SK1:L31:L21:L11:CR5:HT10:NM1";
        assert_eq!(relative_locality(same, other_socket).unwrap().0, 0x4000);
        assert_eq!(
            relative_locality(
                "hwloc:SK0:L30:L20:L10:CR0-1:HT0-3:NM0",
                "hwloc:SK0:L30:L20:L10:CR1-2:HT2-5:NM0"
            )
            .unwrap()
            .0,
            0x407f
        );
        assert_eq!(
            relative_locality("hwloc:SK0:NM0", "hwloc:SK0:NM1")
                .unwrap()
                .0,
            0x4020
        );
        assert_eq!(
            relative_locality("hwloc:CR1,4,9", "hwloc:CR5-9").unwrap().0,
            0x4002
        );
    }

    #[test]
    fn strings_that_are_not_locality_strings_are_refused() {
        let ok = "hwloc:SK0";
        assert_eq!(relative_locality("SK0", ok), Err(LocalityError::NotHwloc));
        assert_eq!(
            relative_locality(ok, "hwloc:XX0"),
            Err(LocalityError::BadField(0))
        );
        assert_eq!(
            relative_locality(ok, "hwloc:SK0:CR"),
            Err(LocalityError::BadField(1))
        );
        assert_eq!(
            relative_locality(ok, "hwloc:CR3-1"),
            Err(LocalityError::BadField(0))
        );
        assert_eq!(
            relative_locality(ok, "hwloc:CRx"),
            Err(LocalityError::BadField(0))
        );
        assert_eq!(relative_locality("hwloc:", ok).unwrap().0, 0x4000);
        assert_eq!(
            relative_locality(ok, "hwloc:SK\u{e9}1")
                .unwrap_err()
                .status(),
            Status::ERR_BAD_PARAM
        );
    }
}
