//! What can be wrong with the objects a backend hands the emitter, and where it was.
//!
//! A [`ModelError`] says what is wrong in the model's terms; a [`Located`] adds the
//! [`Loc`] of the object at fault, which each backend turns into its own words (the XML
//! importer a line and an element, libhwloc a position in its walk). pmix-core's
//! [`BuildError`]s, which speak of node ids, are translated here into the `Loc`s of the
//! objects those nodes came from ([`located_build_error`]).

use pmix_core::{BuildError, PciAddr};

use super::Loc;

/// A problem with the objects a backend handed over, with where it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ModelError {
    #[error("the topology has no Machine object")]
    NoMachine,
    #[error("a second root object: a topology holds exactly one Machine")]
    SecondRoot,
    #[error("{child} cannot be placed under {parent}")]
    Misplaced {
        child: &'static str,
        parent: &'static str,
    },
    #[error("{0} needs a {1}")]
    Missing(&'static str, &'static str),
    #[error("cpuset {cpus} names cpus outside the machine's {machine}")]
    CpusOutsideMachine { cpus: String, machine: String },
    #[error("PCI address {addr} is already used by the object at {first}")]
    DuplicatePci { addr: PciAddr, first: Loc },
    #[error("OS device name {name:?} is already used by the object at {first}")]
    DuplicateName { name: String, first: Loc },
    /// A PCI locality that contradicts the tree: its cpus (within the machine) are not
    /// within those of the processor object the I/O root at `root` hangs under.
    #[error(
        "PCI locality cpuset {cpus} is not within the cpus {parent} of the object that the I/O object at {root} hangs under"
    )]
    LocalityOutsideParent {
        cpus: String,
        parent: String,
        root: Loc,
    },
    #[error("{0}")]
    Build(BuildError),
}

impl ModelError {
    /// The message, with the object that first held a repeated PCI address or OS device
    /// name described by `first` (a backend's words for a [`Loc`]) instead of "the
    /// object at N".
    pub(crate) fn message_naming_first(&self, first: impl Fn(Loc) -> String) -> String {
        match self {
            ModelError::DuplicatePci { addr, first: f } => {
                format!("PCI address {addr} is already used by {}", first(*f))
            }
            ModelError::DuplicateName { name, first: f } => {
                format!("OS device name {name:?} is already used by {}", first(*f))
            }
            other => other.to_string(),
        }
    }
}

/// A [`ModelError`] and the object it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) loc: Loc,
    pub(crate) error: ModelError,
}

/// pmix-core's refusal of the model, about the objects whose nodes (by node id) came
/// from `locs`: a repeated PCI address or OS device name names both objects; another
/// error is about the object it names, if any (else `Loc` 0).
pub(crate) fn located_build_error(e: BuildError, locs: &[Loc]) -> Located {
    let loc_of = |n: u32| locs.get(n as usize).copied().unwrap_or(0);
    let (node, error) = match e {
        BuildError::DuplicatePciAddress {
            addr,
            first,
            second,
        } => (
            Some(second),
            ModelError::DuplicatePci {
                addr,
                first: loc_of(first),
            },
        ),
        BuildError::DuplicateOsName {
            name,
            first,
            second,
        } => (
            Some(second),
            ModelError::DuplicateName {
                name,
                first: loc_of(first),
            },
        ),
        e => {
            let node = match &e {
                BuildError::DanglingParent { node, .. }
                | BuildError::Cycle { node }
                | BuildError::Misplaced { node, .. }
                | BuildError::CpusOutsideMachine { node }
                | BuildError::BadName { node, .. }
                | BuildError::BadDeviceType { node, .. } => Some(*node),
                BuildError::OverlappingPackages { b, .. } => Some(*b),
                _ => None,
            };
            (node, ModelError::Build(e))
        }
    };
    Located {
        loc: node.map_or(0, loc_of),
        error,
    }
}
