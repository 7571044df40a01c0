//! Distance requests and results (`PMIx_Compute_distances`).

use std::sync::Arc;

use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, Topology};
use pmix_wire::{Info, InfoFlags, Value};

use crate::error::Error;
use pmix_wire::keys;

/// What `PMIx_Compute_distances` is asked: where from, to which devices, on which
/// topology. Borrowed, so the blocking form copies nothing.
#[derive(Clone, Copy, Debug, Default)]
#[doc(alias = "PMIx_Compute_distances")]
pub struct DistanceRequest<'a> {
    /// The topology to answer on; `None` means the instance's own (loaded on first
    /// use).
    pub topology: Option<&'a Arc<Topology>>,
    /// The process location; `None` means the calling process's own binding. Ignored
    /// when [`origin`](Self::origin) is given.
    pub cpuset: Option<&'a CpuSet>,
    /// `PMIX_DEVICE_TYPE`: the union of the types given, `None` when none was.
    pub types: Option<DeviceTypes>,
    /// `PMIX_DEVICE_ID`s.
    pub ids: &'a [&'a str],
    /// `PMIX_DEVICE_DIST_ORIGIN`: measure from this device instead of a cpuset.
    pub origin: Option<&'a str>,
}

/// The directives of a distance request as infos carry them (a relayed request's,
/// a Python caller's), owned: [`Directives::from_infos`], then
/// [`Directives::request`]. (The C ABI reads its `pmix_info_t`s in place, by the
/// same rules.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directives {
    /// `PMIX_DEVICE_TYPE`: the union of the types given, `None` when none was.
    pub types: Option<DeviceTypes>,
    /// `PMIX_DEVICE_ID`s.
    pub ids: Vec<String>,
    /// `PMIX_DEVICE_DIST_ORIGIN`.
    pub origin: Option<String>,
}

impl Directives {
    /// Reads `PMIX_DEVICE_TYPE` (`pmix.dev.type`: a DEVTYPE or any non-negative
    /// integer; the union of every one given), `PMIX_DEVICE_ID` (`pmix.dev.id`, a
    /// non-empty string, repeatable) and `PMIX_DEVICE_DIST_ORIGIN`
    /// (`pmix.dev.dist.origin`, a non-empty string, once). `PMIX_DEVICE_DISTANCES`
    /// changes nothing; any other key is ignored unless flagged `PMIX_INFO_REQD`.
    ///
    /// # Errors
    /// [`Error::BadParam`] for a value of another type, a type mask that selects no
    /// known type, an empty string, a second origin; [`Error::NotSupported`] for an
    /// unknown key flagged `PMIX_INFO_REQD`.
    pub fn from_infos(infos: &[Info]) -> Result<Directives, Error> {
        let bad = |what: &str| Error::BadParam(format!("a distance directive: {what}").into());
        let string = |v: &Value| {
            v.as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| bad("a device name must be a non-empty string"))
        };
        let mut d = Directives::default();
        for i in infos {
            match i.key.as_str().unwrap_or_default() {
                keys::DEVICE_TYPE => {
                    let mask = match &i.value {
                        Value::DevType(m) => Some(*m),
                        v => v
                            .as_u64()
                            .or_else(|| v.as_i64().and_then(|x| u64::try_from(x).ok())),
                    };
                    let t = mask
                        .map(DeviceTypes)
                        .filter(|t| t.is_valid_selection())
                        .ok_or_else(|| bad("a device type mask selects no known type"))?;
                    d.types = Some(d.types.map_or(t, |u| u | t));
                }
                keys::DEVICE_ID => d.ids.push(string(&i.value)?),
                keys::DEVICE_DIST_ORIGIN => {
                    if d.origin.is_some() {
                        return Err(bad("two origins"));
                    }
                    d.origin = Some(string(&i.value)?);
                }
                keys::DEVICE_DISTANCES => {}
                k if i.flags.0 & InfoFlags::REQD.0 != 0 => {
                    return Err(Error::NotSupported(
                        format!("a required directive {k:?} of a distance request").into(),
                    ));
                }
                _ => {}
            }
        }
        Ok(d)
    }

    /// Runs `f` on the request these directives make from `cpuset` (`None`: the
    /// caller's own) on `topology` (`None`: the instance's own).
    pub fn request<R>(
        &self,
        topology: Option<&Arc<Topology>>,
        cpuset: Option<&CpuSet>,
        f: impl FnOnce(&DistanceRequest<'_>) -> R,
    ) -> R {
        let ids: Vec<&str> = self.ids.iter().map(String::as_str).collect();
        f(&DistanceRequest {
            topology,
            cpuset,
            types: self.types,
            ids: &ids,
            origin: self.origin.as_deref(),
        })
    }
}

/// One entry of an answer, however it was answered: the device's uuid, OS name and
/// type, and its distance range from the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row<'a> {
    /// The device's uuid (`PMIX_DEVICE_ID`).
    pub uuid: &'a str,
    /// The device's OS name (`nvml0`, `mlx5_0`).
    pub osname: &'a str,
    /// Its type (one bit).
    pub kind: DeviceTypes,
    /// The smallest distance from the origin.
    pub mindist: u16,
    /// The largest distance from the origin.
    pub maxdist: u16,
}

/// An entry of an answer the server gave (a relayed request, docs/design.md §6): owned, since
/// no local topology names its device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayedDistance {
    /// The device's uuid.
    pub uuid: String,
    /// The device's OS name.
    pub osname: String,
    /// Its type.
    pub kind: DeviceTypes,
    /// The smallest distance.
    pub mindist: u16,
    /// The largest distance.
    pub maxdist: u16,
}

impl RelayedDistance {
    fn row(&self) -> Row<'_> {
        Row {
            uuid: &self.uuid,
            osname: &self.osname,
            kind: self.kind,
            mindist: self.mindist,
            maxdist: self.maxdist,
        }
    }
}

/// The entries of an answer, borrowed: computed in this process on its topology, or
/// relayed to the server and answered there.
#[derive(Clone, Copy, Debug)]
pub enum Answer<'a> {
    /// Computed here: the core's entries and the topology that names their devices.
    Local {
        /// The topology the entries' [`DeviceId`](pmix_core::DeviceId)s refer to.
        topology: &'a Arc<Topology>,
        /// The entries, in the core's stable order.
        entries: &'a [DeviceDistance],
    },
    /// Answered by the server, in its order.
    Relayed(&'a [RelayedDistance]),
}

impl<'a> Answer<'a> {
    /// The number of entries.
    pub fn len(&self) -> usize {
        match self {
            Answer::Local { entries, .. } => entries.len(),
            Answer::Relayed(r) => r.len(),
        }
    }

    /// `true` if there are no entries (never, for a successful query).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as rows, in the answer's order (a local entry naming no device of
    /// its topology, which the core never makes, is skipped).
    pub fn rows(self) -> impl Iterator<Item = Row<'a>> + 'a {
        let (local, relayed) = match self {
            Answer::Local { topology, entries } => (Some((topology, entries)), None),
            Answer::Relayed(r) => (None, Some(r)),
        };
        let local = local.into_iter().flat_map(|(t, entries)| {
            entries.iter().filter_map(move |e| {
                t.device(e.device).map(|d| Row {
                    uuid: d.uuid(),
                    osname: d.name(),
                    kind: d.kind(),
                    mindist: e.mindist,
                    maxdist: e.maxdist,
                })
            })
        });
        let relayed = relayed
            .into_iter()
            .flat_map(|r| r.iter().map(RelayedDistance::row));
        local.chain(relayed)
    }
}

/// The answer to a distance request, owned: the entries in the core's stable order
/// with the topology that names their devices, or the server's entries.
#[derive(Clone, Debug)]
pub struct Distances(Owned);

#[derive(Clone, Debug)]
enum Owned {
    Local {
        topology: Arc<Topology>,
        entries: Vec<DeviceDistance>,
    },
    Relayed(Vec<RelayedDistance>),
}

impl Distances {
    /// An owned copy of `answer`.
    pub fn new(answer: Answer<'_>) -> Self {
        Distances(match answer {
            Answer::Local { topology, entries } => Owned::Local {
                topology: Arc::clone(topology),
                entries: entries.to_vec(),
            },
            Answer::Relayed(r) => Owned::Relayed(r.to_vec()),
        })
    }

    /// The answer, borrowed.
    pub fn answer(&self) -> Answer<'_> {
        match &self.0 {
            Owned::Local { topology, entries } => Answer::Local { topology, entries },
            Owned::Relayed(r) => Answer::Relayed(r),
        }
    }

    /// The topology the entries refer to; `None` for an answer the server gave.
    pub fn topology(&self) -> Option<&Arc<Topology>> {
        match &self.0 {
            Owned::Local { topology, .. } => Some(topology),
            Owned::Relayed(_) => None,
        }
    }

    /// `true` when the server answered (the request was relayed, docs/design.md §6).
    pub fn is_relayed(&self) -> bool {
        matches!(self.0, Owned::Relayed(_))
    }

    /// The number of entries (never 0: an empty answer is `PMIX_ERR_NOT_FOUND`).
    pub fn len(&self) -> usize {
        self.answer().len()
    }

    /// `true` if there are no entries (never, for a successful query).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as rows, in the answer's order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        self.answer().rows()
    }
}

/// An owned copy of a request, for the non-blocking form: the caller's arguments may
/// die as soon as the call returns. Nothing is resolved yet: a missing topology or
/// cpuset is looked up on the progress thread.
pub(crate) struct OwnedRequest {
    topology: Option<Arc<Topology>>,
    cpuset: Option<CpuSet>,
    types: Option<DeviceTypes>,
    ids: Vec<String>,
    origin: Option<String>,
}

impl OwnedRequest {
    /// Copies what `req` borrows (the cpuset only when no origin makes it moot).
    pub(crate) fn copy(req: &DistanceRequest<'_>) -> OwnedRequest {
        OwnedRequest {
            topology: req.topology.cloned(),
            cpuset: match req.origin {
                Some(_) => None,
                None => req.cpuset.cloned(),
            },
            types: req.types,
            ids: req.ids.iter().map(|s| (*s).to_owned()).collect(),
            origin: req.origin.map(str::to_owned),
        }
    }

    /// Hands `f` the request as a borrowed [`DistanceRequest`] again.
    pub(crate) fn with_request<R>(&self, f: impl FnOnce(&DistanceRequest<'_>) -> R) -> R {
        let ids: Vec<&str> = self.ids.iter().map(String::as_str).collect();
        f(&DistanceRequest {
            topology: self.topology.as_ref(),
            cpuset: self.cpuset.as_ref(),
            types: self.types,
            ids: &ids,
            origin: self.origin.as_deref(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(key: &str, value: Value) -> Info {
        Info::new(key, value)
    }

    #[test]
    fn directives_read_types_ids_and_one_origin_and_refuse_what_is_malformed() {
        let d = Directives::from_infos(&[
            info("pmix.dev.type", Value::DevType(DeviceTypes::GPU.0)),
            info("pmix.dev.type", Value::Int(DeviceTypes::NETWORK.0 as i32)),
            info("pmix.dev.id", Value::string("mlx5_0")),
            info("pmix.dev.dist.origin", Value::string("nvml0")),
            info("pmix.dev.dist", Value::Bool(true)),
            info("x.unknown", Value::Int(1)),
        ])
        .unwrap();
        assert_eq!(d.types, Some(DeviceTypes::GPU | DeviceTypes::NETWORK));
        assert_eq!(
            (d.ids, d.origin),
            (vec!["mlx5_0".to_owned()], Some("nvml0".to_owned()))
        );
        let status = |infos: &[Info]| {
            pmix_core::PmixError::status(&Directives::from_infos(infos).unwrap_err())
        };
        let bad = pmix_core::Status::ERR_BAD_PARAM;
        assert_eq!(status(&[info("pmix.dev.type", Value::Uint64(0))]), bad);
        assert_eq!(
            status(&[info("pmix.dev.type", Value::Uint64(1 << 40))]),
            bad
        );
        assert_eq!(status(&[info("pmix.dev.type", Value::Int(-4))]), bad);
        assert_eq!(status(&[info("pmix.dev.type", Value::string("gpu"))]), bad);
        assert_eq!(status(&[info("pmix.dev.id", Value::string(""))]), bad);
        assert_eq!(status(&[info("pmix.dev.id", Value::Int(3))]), bad);
        let origin = info("pmix.dev.dist.origin", Value::string("eth0"));
        assert_eq!(status(&[origin.clone(), origin]), bad);
        let mut required = info("x.unknown", Value::Int(1));
        required.flags = InfoFlags::REQD;
        assert_eq!(status(&[required]), pmix_core::Status::ERR_NOT_SUPPORTED);
    }
}
