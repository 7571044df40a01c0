//! OS devices: their PMIx type, identity, system-wide uuid and which of the
//! topology's distinct localities each has.

use alloc::format;
use alloc::string::String;
use core::fmt;
use core::num::NonZeroU32;

use crate::cpuset::CpuSet;
use crate::pci::PciAddr;

/// A `pmix_device_type_t` bitmask: one bit for a device, any union for a selection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct DeviceTypes(pub u64);

impl DeviceTypes {
    /// `PMIX_DEVTYPE_BLOCK`: disks and other block devices.
    pub const BLOCK: DeviceTypes = DeviceTypes(0x01);
    /// `PMIX_DEVTYPE_GPU`.
    pub const GPU: DeviceTypes = DeviceTypes(0x02);
    /// `PMIX_DEVTYPE_NETWORK`: Ethernet and IPoIB interfaces.
    pub const NETWORK: DeviceTypes = DeviceTypes(0x04);
    /// `PMIX_DEVTYPE_OPENFABRICS`: InfiniBand / RDMA devices (`mlx5_0`, `hfi1_0`).
    pub const OPENFABRICS: DeviceTypes = DeviceTypes(0x08);
    /// `PMIX_DEVTYPE_DMA`: DMA engines.
    pub const DMA: DeviceTypes = DeviceTypes(0x10);
    /// `PMIX_DEVTYPE_COPROC`: coprocessors (`cuda0`, `mic0`, `ve0`, `opencl0d0`).
    pub const COPROC: DeviceTypes = DeviceTypes(0x20);
    /// Every type this crate knows.
    pub const ALL: DeviceTypes = DeviceTypes(0x3f);
    /// What a query selects when it names neither types nor devices:
    /// NETWORK | OPENFABRICS | GPU | COPROC.
    pub const DEFAULT: DeviceTypes = DeviceTypes(0x04 | 0x08 | 0x02 | 0x20);

    /// The single types, in bit order, with the names `PMIx` and `pmix-topo` use.
    pub const NAMED: [(DeviceTypes, &'static str); 6] = [
        (Self::BLOCK, "BLOCK"),
        (Self::GPU, "GPU"),
        (Self::NETWORK, "NETWORK"),
        (Self::OPENFABRICS, "OPENFABRICS"),
        (Self::DMA, "DMA"),
        (Self::COPROC, "COPROC"),
    ];

    /// `true` if the masks share a bit.
    #[inline]
    pub fn intersects(self, other: DeviceTypes) -> bool {
        self.0 & other.0 != 0
    }

    /// `true` for a non-empty mask of known bits only: what a query may select.
    pub fn is_valid_selection(self) -> bool {
        self.0 != 0 && self.0 & !Self::ALL.0 == 0
    }

    /// `true` if exactly one known bit is set: what a device may be.
    pub fn is_single(self) -> bool {
        self.is_valid_selection() && self.0.is_power_of_two()
    }

    /// The name of a single type (`"GPU"`), or `None` for a union or an unknown bit.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMED
            .iter()
            .find(|(t, _)| *t == self)
            .map(|(_, n)| *n)
    }

    /// Parses a single type name, ASCII case-insensitive (`"gpu"`, `"OpenFabrics"`).
    pub fn from_name(s: &str) -> Option<DeviceTypes> {
        Self::NAMED
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(s))
            .map(|(t, _)| *t)
    }
}

impl core::ops::BitOr for DeviceTypes {
    type Output = DeviceTypes;
    fn bitor(self, rhs: DeviceTypes) -> DeviceTypes {
        DeviceTypes(self.0 | rhs.0)
    }
}

impl fmt::Debug for DeviceTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "DeviceTypes({:#x})", self.0),
        }
    }
}

/// What a backend knows of an OS device, handed to
/// [`TopologyBuilder::os_device`](crate::TopologyBuilder::os_device).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OsDeviceSpec {
    /// The OS name (`eth0`, `mlx5_0`, `nvme0n1`, `renderD128`, `cuda0`): non-empty, at
    /// most [`MAX_NAME_LEN`] bytes, no NUL, unique in the topology.
    pub name: String,
    /// Exactly one PMIx device type.
    pub kind: DeviceTypes,
    /// A vendor identity that names the device system-wide (an NVIDIA `GPU-…` UUID).
    pub vendor_id: Option<String>,
    /// A network address: a 6-byte MAC or a 20-byte IPoIB address, colon-separated hex.
    pub address: Option<String>,
    /// An InfiniBand NodeGUID (`ec0d:9a03:00a4:c4c6`).
    pub node_guid: Option<String>,
    /// An InfiniBand SysImageGUID.
    pub sys_image_guid: Option<String>,
}

/// The longest OS name, vendor identity, address, GUID or hostname a topology accepts.
pub const MAX_NAME_LEN: usize = 255;

/// An OS device of a built [`Topology`](crate::Topology), with everything a distance
/// query needs precomputed.
#[derive(Clone, Debug)]
pub struct Device {
    pub(crate) spec: OsDeviceSpec,
    pub(crate) uuid: String,
    pub(crate) pci: Option<PciAddr>,
    /// Node index of the PCI function, if any.
    pub(crate) function: Option<u32>,
    /// Node index of the host bridge, if any.
    pub(crate) host_bridge: Option<u32>,
    /// The PCI bridges from the top of the I/O tree down to the function, as a range of
    /// the topology's pool of PCI paths.
    pub(crate) pci_path: core::ops::Range<u32>,
    pub(crate) locality: CpuSet,
    /// Which of the topology's distinct localities `locality` is.
    pub(crate) locality_id: LocalityId,
    /// Index of the package containing the locality, if one does.
    pub(crate) package: Option<u32>,
    /// Its node in the topology tree.
    pub(crate) node: u32,
}

impl Device {
    /// The OS name (`mlx5_0`).
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The PMIx type (one bit).
    pub fn kind(&self) -> DeviceTypes {
        self.spec.kind
    }

    /// The system-wide uuid (`ipv4://…`, `fab://…`, `gpu://host::cuda0`, …), as
    /// docs/design.md §2 "uuid grammar" defines it.
    pub fn uuid(&self) -> &str {
        &self.uuid
    }

    /// The PCI function the device belongs to, if it is a PCI device.
    pub fn pci(&self) -> Option<PciAddr> {
        self.pci
    }

    /// The vendor identity (NVIDIA `GPU-…` UUID), if known.
    pub fn vendor_id(&self) -> Option<&str> {
        self.spec.vendor_id.as_deref()
    }

    /// Everything the backend said about the device.
    pub fn spec(&self) -> &OsDeviceSpec {
        &self.spec
    }

    /// The cpuset the device is local to: the cpuset of the processor object its I/O
    /// subtree attaches to (or an explicit locality the backend set).
    pub fn locality(&self) -> &CpuSet {
        &self.locality
    }

    /// Index (into [`Topology::packages`](crate::Topology::packages)) of the package
    /// whose PUs contain the whole locality, or `None` when it spans packages.
    pub fn package(&self) -> Option<usize> {
        self.package.map(|p| p as usize)
    }

    /// Number of PCI bridges between the host bridge and the PCI function (0 without
    /// PCI).
    pub fn depth(&self) -> u32 {
        self.pci_path.end - self.pci_path.start
    }

    /// The node of the topology tree this device is.
    pub fn node(&self) -> crate::NodeId {
        crate::NodeId(self.node)
    }
}

/// Which of [`Topology::localities`](crate::Topology::localities) a device has: the
/// index plus one in a `NonZeroU32`, so that a query's "last locality seen" cache, an
/// `Option<LocalityId>`, is four bytes and its hit test one comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalityId(NonZeroU32);

impl LocalityId {
    /// The id of `localities[index]` (there are fewer localities than objects, and
    /// `build()` keeps objects below `u32::MAX`).
    pub(crate) fn new(index: usize) -> LocalityId {
        LocalityId(NonZeroU32::MIN.saturating_add(index as u32))
    }

    /// The index in the localities.
    pub(crate) fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }
}

impl fmt::Debug for LocalityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.index().fmt(f)
    }
}

/// Builds the uuid of a device (docs/design.md §2), given the host name to use.
pub(crate) fn make_uuid(spec: &OsDeviceSpec, host: &str) -> String {
    let name = &spec.name;
    match spec.kind {
        DeviceTypes::NETWORK => match spec.address.as_deref() {
            Some(a) if byte_count(a) == 6 => format!("ipv4://{a}"),
            Some(a) if byte_count(a) == 20 => format!("ipv6://{a}"),
            _ => format!("net://{host}::{name}"),
        },
        DeviceTypes::OPENFABRICS => {
            match (spec.node_guid.as_deref(), spec.sys_image_guid.as_deref()) {
                (Some(n), Some(s)) if !all_zero(n) && !all_zero(s) => format!("fab://{n}::{s}"),
                _ => format!("fab://{host}::{name}"),
            }
        }
        DeviceTypes::GPU | DeviceTypes::COPROC => format!("gpu://{host}::{name}"),
        DeviceTypes::BLOCK => format!("blk://{host}::{name}"),
        _ => format!("dma://{host}::{name}"),
    }
}

/// Number of colon-separated hex bytes in an address, or 0 if it is not one.
fn byte_count(a: &str) -> usize {
    let mut n = 0;
    for part in a.split(':') {
        if part.is_empty() || part.len() > 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
            return 0;
        }
        n += 1;
    }
    n
}

fn all_zero(guid: &str) -> bool {
    guid.bytes().all(|b| b == b'0' || b == b':' || b == b'x')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: DeviceTypes, name: &str) -> OsDeviceSpec {
        OsDeviceSpec {
            name: name.into(),
            kind,
            ..Default::default()
        }
    }

    #[test]
    fn uuid_grammar_follows_design() {
        let mut s = spec(DeviceTypes::NETWORK, "eth0");
        assert_eq!(make_uuid(&s, "h"), "net://h::eth0");
        s.address = Some("00:11:22:33:44:55".into());
        assert_eq!(make_uuid(&s, "h"), "ipv4://00:11:22:33:44:55");
        s.address = Some("80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:8b:c1".into());
        assert!(make_uuid(&s, "h").starts_with("ipv6://80:00:02:08"));
        let mut f = spec(DeviceTypes::OPENFABRICS, "mlx5_0");
        assert_eq!(make_uuid(&f, "h"), "fab://h::mlx5_0");
        f.node_guid = Some("ec0d:9a03:00a4:c4c6".into());
        f.sys_image_guid = Some("0000:0000:0000:0000".into());
        assert_eq!(make_uuid(&f, "h"), "fab://h::mlx5_0");
        f.sys_image_guid = Some("ec0d:9a03:00a4:c4c6".into());
        assert_eq!(
            make_uuid(&f, "h"),
            "fab://ec0d:9a03:00a4:c4c6::ec0d:9a03:00a4:c4c6"
        );
        assert_eq!(
            make_uuid(&spec(DeviceTypes::COPROC, "cuda0"), "h"),
            "gpu://h::cuda0"
        );
        assert_eq!(
            make_uuid(&spec(DeviceTypes::GPU, "card0"), "h"),
            "gpu://h::card0"
        );
        assert_eq!(
            make_uuid(&spec(DeviceTypes::BLOCK, "sda"), "h"),
            "blk://h::sda"
        );
        assert_eq!(
            make_uuid(&spec(DeviceTypes::DMA, "dma0chan0"), "h"),
            "dma://h::dma0chan0"
        );
    }

    #[test]
    fn type_masks() {
        assert!(DeviceTypes::GPU.is_single());
        assert!(!(DeviceTypes::GPU | DeviceTypes::NETWORK).is_single());
        assert!(!DeviceTypes(0).is_valid_selection());
        assert!(!DeviceTypes(0x40).is_valid_selection());
        assert_eq!(
            DeviceTypes::from_name("openfabrics"),
            Some(DeviceTypes::OPENFABRICS)
        );
        assert_eq!(DeviceTypes::DEFAULT.0, 0x2e);
    }
}
