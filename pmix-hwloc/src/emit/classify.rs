//! What kind of hwloc object the emitter is handed, where each kind may sit, and the
//! PMIx type of an hwloc OS device.
//!
//! [`Class`] is the model's view of an hwloc object type (a backend maps its own type
//! names or enums onto it); [`placement`] is the one table of which class may hang under
//! which, so both backends refuse the same misplaced objects with the same message;
//! [`osdev_type_v2`] and [`osdev_type_v3`] map hwloc's `osdev_type` (an enum before
//! hwloc 3.0, a bitmask since) onto [`DeviceTypes`] by docs/design.md §2.

use pmix_core::DeviceTypes;

use super::error::ModelError;

/// What kind of hwloc object is being opened, as far as the model cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    /// The root: hwloc `Machine`.
    Machine,
    /// hwloc `Package` (v1 `Socket`).
    Package,
    /// hwloc `NUMANode`.
    Numa,
    /// hwloc `Group`.
    Group,
    /// Any other processor-side object with a cpuset: caches, cores, dies, PUs,
    /// memory-side caches.
    OtherCpu,
    /// hwloc `Misc`: kept out of the model.
    Misc,
    /// A bridge whose upstream side is the host (`bridge_type="0-1"`).
    HostBridge,
    /// A PCI-to-PCI bridge (`bridge_type="1-1"`).
    PciBridge,
    /// hwloc `PCIDev`.
    PciFunction,
    /// hwloc `OSDev`.
    OsDevice,
}

impl Class {
    /// The hwloc name of the class with its article, for messages.
    pub(crate) fn hwloc_name(self) -> &'static str {
        match self {
            Class::Machine => "a Machine",
            Class::Package => "a Package",
            Class::Numa => "a NUMANode",
            Class::Group => "a Group",
            Class::OtherCpu => "a processor-side object",
            Class::Misc => "a Misc object",
            Class::HostBridge => "a host bridge",
            Class::PciBridge => "a PCI bridge",
            Class::PciFunction => "a PCIDev",
            Class::OsDevice => "an OSDev",
        }
    }

    /// A processor-side object: it has a cpuset, and I/O may hang under it.
    pub(crate) fn is_processor(self) -> bool {
        matches!(
            self,
            Class::Machine | Class::Package | Class::Numa | Class::Group | Class::OtherCpu
        )
    }

    /// An I/O object: its locality is the cpuset of its nearest processor ancestor.
    pub(crate) fn is_io(self) -> bool {
        matches!(
            self,
            Class::HostBridge | Class::PciBridge | Class::PciFunction | Class::OsDevice
        )
    }

    /// A PCI bridge or function: it has a PCI address.
    pub(crate) fn is_pci(self) -> bool {
        matches!(self, Class::PciBridge | Class::PciFunction)
    }
}

/// The class an object of `class` with a cpuset (or none) is treated as under `parent`:
/// a Misc with a cpuset among processor objects (hwloc v1) is a plain container.
pub(crate) fn normalise(class: Class, has_cpus: bool, parent: Option<Class>) -> Class {
    if class == Class::Misc && has_cpus && parent.is_some_and(Class::is_processor) {
        Class::OtherCpu
    } else {
        class
    }
}

/// Whether an object of `class` may hang under `parent` (`None`: it is the root).
///
/// # Errors
/// [`ModelError::Misplaced`] naming both, or [`ModelError::SecondRoot`] for a Machine
/// that is not the root.
pub(crate) fn placement(parent: Option<Class>, class: Class) -> Result<(), ModelError> {
    let allowed = match (parent, class) {
        (None, Class::Machine) => true,
        (None, _) | (Some(_), Class::Machine) => false,
        (Some(_), Class::Misc) => true,
        (
            Some(p),
            Class::Package | Class::Numa | Class::Group | Class::OtherCpu | Class::HostBridge,
        ) => p.is_processor(),
        (Some(p), Class::PciBridge | Class::PciFunction) => {
            p.is_processor() || matches!(p, Class::HostBridge | Class::PciBridge)
        }
        (Some(p), Class::OsDevice) => p.is_processor() || p == Class::PciFunction,
    };
    if allowed {
        return Ok(());
    }
    Err(match parent {
        None => ModelError::Misplaced {
            child: class.hwloc_name(),
            parent: "the topology root",
        },
        Some(_) if class == Class::Machine => ModelError::SecondRoot,
        Some(p) => ModelError::Misplaced {
            child: class.hwloc_name(),
            parent: p.hwloc_name(),
        },
    })
}

/// The PMIx type of an hwloc v1/v2 `osdev_type` (an enum).
pub(crate) fn osdev_type_v2(v: u32) -> Option<DeviceTypes> {
    Some(match v {
        0 => DeviceTypes::BLOCK,
        1 => DeviceTypes::GPU,
        2 => DeviceTypes::NETWORK,
        3 => DeviceTypes::OPENFABRICS,
        4 => DeviceTypes::DMA,
        5 => DeviceTypes::COPROC,
        _ => return None,
    })
}

/// The PMIx type of an hwloc v3 `osdev_type` (a bitmask: 1 storage, 2 memory, 4 gpu,
/// 8 coproc, 16 network, 32 openfabrics, 64 dma), by docs/design.md §2's precedence:
/// OPENFABRICS, then NETWORK, COPROC, GPU, DMA, and BLOCK for storage or memory.
pub(crate) fn osdev_type_v3(v: u32) -> Option<DeviceTypes> {
    if v == 0 || v & !0x7f != 0 {
        return None;
    }
    Some(if v & 32 != 0 {
        DeviceTypes::OPENFABRICS
    } else if v & 16 != 0 {
        DeviceTypes::NETWORK
    } else if v & 8 != 0 {
        DeviceTypes::COPROC
    } else if v & 4 != 0 {
        DeviceTypes::GPU
    } else if v & 64 != 0 {
        DeviceTypes::DMA
    } else {
        DeviceTypes::BLOCK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_bitmask_precedence_follows_design() {
        assert_eq!(osdev_type_v3(1), Some(DeviceTypes::BLOCK));
        assert_eq!(osdev_type_v3(2), Some(DeviceTypes::BLOCK));
        assert_eq!(osdev_type_v3(3), Some(DeviceTypes::BLOCK));
        assert_eq!(osdev_type_v3(4), Some(DeviceTypes::GPU));
        assert_eq!(osdev_type_v3(4 | 8), Some(DeviceTypes::COPROC));
        assert_eq!(osdev_type_v3(16 | 32), Some(DeviceTypes::OPENFABRICS));
        assert_eq!(osdev_type_v3(16 | 1), Some(DeviceTypes::NETWORK));
        assert_eq!(osdev_type_v3(64), Some(DeviceTypes::DMA));
        assert_eq!(osdev_type_v3(64 | 4), Some(DeviceTypes::GPU));
        assert_eq!(osdev_type_v3(0), None);
        assert_eq!(osdev_type_v3(128), None);
        assert_eq!(osdev_type_v3(128 | 16), None);
    }

    #[test]
    fn v2_enum() {
        let all: Vec<_> = (0..6).map(|v| osdev_type_v2(v).unwrap()).collect();
        assert_eq!(
            all,
            [
                DeviceTypes::BLOCK,
                DeviceTypes::GPU,
                DeviceTypes::NETWORK,
                DeviceTypes::OPENFABRICS,
                DeviceTypes::DMA,
                DeviceTypes::COPROC
            ]
        );
        assert_eq!(osdev_type_v2(6), None);
    }
}
