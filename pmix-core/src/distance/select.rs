//! Which devices a query selects: matching `PMIX_DEVICE_ID`s (uuid, osname, vendor
//! identity, PCI bus id; ASCII case-insensitive) against an entry's aliases, and
//! resolving `PMIX_DEVICE_DIST_ORIGIN` to one PCI function or non-PCI device.

use super::DistanceError;
use crate::device::{Device, DeviceTypes};
use crate::pci::PciPattern;
use crate::topology::{DeviceId, Entry, Topology};

/// How a name matched a device.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Match {
    /// Not at all.
    No,
    /// Through its PCI function or vendor identity: the whole entry is named.
    Function,
    /// By its own osname or uuid: this alias is the one to report.
    Itself,
}

fn match_name(d: &Device, name: &str, pci: Option<&PciPattern>) -> Match {
    if d.spec.name.eq_ignore_ascii_case(name) || d.uuid.eq_ignore_ascii_case(name) {
        Match::Itself
    } else if pci.is_some_and(|p| d.pci.is_some_and(|a| a.matches(p)))
        || d.spec
            .vendor_id
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case(name))
    {
        Match::Function
    } else {
        Match::No
    }
}

/// How many `PMIX_DEVICE_ID`s a query parses once, on the stack, as PCI addresses.
/// Ids beyond them (a query naming more devices than this) are parsed where they are
/// matched, once per entry scanned: slower, still allocation-free, same answer.
const PARSED_IDS: usize = 16;

/// A query's `PMIX_DEVICE_ID`s, with the PCI reading of each parsed once per query.
pub(super) struct Ids<'q> {
    names: &'q [&'q str],
    /// `pci[k]` is `names[k]` read as a PCI address, for `k < PARSED_IDS`.
    pci: [Option<PciPattern>; PARSED_IDS],
}

impl<'q> Ids<'q> {
    pub(super) fn new(names: &'q [&'q str]) -> Self {
        let mut pci = [None; PARSED_IDS];
        for (slot, name) in pci.iter_mut().zip(names) {
            *slot = PciPattern::parse(name).ok();
        }
        Ids { names, pci }
    }

    /// `names[k]` read as a PCI address.
    fn pci(&self, k: usize) -> Option<PciPattern> {
        match self.pci.get(k) {
            Some(parsed) => *parsed,
            None => PciPattern::parse(self.names[k]).ok(),
        }
    }
}

impl Topology {
    /// If entry `e` is of a selected type and named by an id, the device to report for
    /// it: an alias named by its own osname or uuid, else the default one.
    pub(super) fn select(&self, e: &Entry, types: DeviceTypes, ids: &Ids<'_>) -> Option<DeviceId> {
        if !e.kind.intersects(types) {
            return None;
        }
        let members = &self.entry_members[e.members.start as usize..e.members.end as usize];
        let mut function_named = false;
        for (k, name) in ids.names.iter().enumerate() {
            let pci = ids.pci(k);
            for &m in members {
                match match_name(&self.devices[m as usize], name, pci.as_ref()) {
                    Match::Itself => return Some(DeviceId(m)),
                    Match::Function => function_named = true,
                    Match::No => {}
                }
            }
        }
        function_named.then_some(e.default_device)
    }

    /// Finds the one PCI function (or non-PCI device) `name` designates.
    pub(super) fn resolve_origin(&self, name: &str) -> Result<&Device, DistanceError> {
        if name.is_empty() {
            return Err(DistanceError::EmptyName);
        }
        let pci = PciPattern::parse(name).ok();
        let mut found: Option<&Device> = None;
        for d in &self.devices {
            if match_name(d, name, pci.as_ref()) == Match::No {
                continue;
            }
            match found {
                None => found = Some(d),
                Some(f) => {
                    let same = match (f.function, d.function) {
                        (Some(a), Some(b)) => a == b,
                        _ => core::ptr::eq(f, d),
                    };
                    if !same {
                        return Err(DistanceError::AmbiguousOrigin);
                    }
                }
            }
        }
        found.ok_or(DistanceError::OriginNotFound)
    }
}
