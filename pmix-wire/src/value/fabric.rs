//! Fabric and topology elements: [`Coord`], [`Geometry`], [`DeviceDist`],
//! [`Endpoint`] and [`Topo`].
//!
//! Layouts checked against OpenPMIx's `src/mca/bfrops/base/bfrop_base_pack.c`
//! (`pmix_bfrops_base_pack_coord`, `_geometry`, `_devdist`, `_endpoint`) and
//! `src/hwloc/pmix_hwloc.c` (`pmix_hwloc_pack_topology`: the XML as a STRING,
//! then hwloc's discovery, cpubind and membind support structures as raw bytes;
//! `pmix_hwloc_pack_cpuset`: the list string, for PROC_CPUSET).

use alloc::vec::Vec;

use super::WStr;
use super::composite::{put_sized_bytes, sized_bytes};
use super::count::{put_vu_count, vu_count};
use super::wstr::{opt_str, put_opt_str};
use crate::buf::{Element, Reader, Writer};
use crate::error::WireError;
use crate::types::DataType;

/// COORD (`pmix_coord_t`): the view (one byte: 0 undef, 1 logical, 2 physical),
/// a SIZE count of dimensions, and each coordinate as a UINT32 varint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Coord {
    /// The `pmix_coord_view_t`.
    pub view: u8,
    /// The coordinates.
    pub coord: Vec<u32>,
}

impl Element for Coord {
    const TYPE: DataType = DataType::Coord;

    fn encode(&self, w: &mut Writer) {
        w.u8(self.view);
        put_vu_count(w, self.coord.len());
        for c in &self.coord {
            w.varint((*c).into());
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let view = r.u8("coord view")?;
        let n = vu_count(r, "coord dims")?;
        let mut coord = Vec::with_capacity(r.capacity_for(n));
        for _ in 0..n {
            coord.push(r.varint(32, "coord")? as u32);
        }
        Ok(Coord { view, coord })
    }
}

/// GEOMETRY (`pmix_geometry_t`): the fabric index (SIZE), the device's uuid and
/// OS name, and its coordinates (a SIZE count, then COORDs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// The fabric index.
    pub fabric: u64,
    /// The device's uuid (NULL if unset).
    pub uuid: Option<WStr>,
    /// The device's OS name (NULL if unset).
    pub osname: Option<WStr>,
    /// Its coordinates.
    pub coordinates: Vec<Coord>,
}

impl Element for Geometry {
    const TYPE: DataType = DataType::Geometry;

    fn encode(&self, w: &mut Writer) {
        w.varint(self.fabric);
        put_opt_str(w, &self.uuid);
        put_opt_str(w, &self.osname);
        put_vu_count(w, self.coordinates.len());
        for c in &self.coordinates {
            c.encode(w);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let fabric = r.varint(64, "geometry fabric")?;
        let uuid = opt_str(r, "geometry uuid")?;
        let osname = opt_str(r, "geometry osname")?;
        let n = vu_count(r, "geometry ncoords")?;
        let mut coordinates = Vec::with_capacity(r.capacity_for(n));
        for _ in 0..n {
            coordinates.push(Coord::decode(r)?);
        }
        Ok(Geometry {
            fabric,
            uuid,
            osname,
            coordinates,
        })
    }
}

/// DEVICE_DIST (`pmix_device_distance_t`): the device's uuid and OS name, its type
/// (DEVTYPE varint), and the minimum and maximum distance (UINT16 varints).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeviceDist {
    /// The device's uuid (NULL if unset).
    pub uuid: Option<WStr>,
    /// The device's OS name (NULL if unset).
    pub osname: Option<WStr>,
    /// Its `pmix_device_type_t` bitmask.
    pub ty: u64,
    /// The smallest distance from the process's cpus.
    pub mindist: u16,
    /// The largest distance.
    pub maxdist: u16,
}

impl Element for DeviceDist {
    const TYPE: DataType = DataType::DeviceDist;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.uuid);
        put_opt_str(w, &self.osname);
        w.varint(self.ty);
        w.varint(self.mindist.into());
        w.varint(self.maxdist.into());
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(DeviceDist {
            uuid: opt_str(r, "device distance uuid")?,
            osname: opt_str(r, "device distance osname")?,
            ty: r.varint(64, "device distance type")?,
            mindist: r.varint(16, "device distance min")? as u16,
            maxdist: r.varint(16, "device distance max")? as u16,
        })
    }
}

/// ENDPOINT (`pmix_endpoint_t`): the device's uuid and OS name, and the endpoint's
/// bytes (a SIZE length, then the bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// The device's uuid (NULL if unset).
    pub uuid: Option<WStr>,
    /// The device's OS name (NULL if unset).
    pub osname: Option<WStr>,
    /// The endpoint.
    pub endpt: Vec<u8>,
}

impl Element for Endpoint {
    const TYPE: DataType = DataType::Endpoint;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.uuid);
        put_opt_str(w, &self.osname);
        put_sized_bytes(w, &self.endpt);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Endpoint {
            uuid: opt_str(r, "endpoint uuid")?,
            osname: opt_str(r, "endpoint osname")?,
            endpt: sized_bytes(r, "endpoint bytes")?,
        })
    }
}

/// TOPO (`pmix_topology_t`): hwloc's XML export as a STRING; when not NULL, the raw
/// bytes of hwloc's three support structures follow, with no length before them
/// ([`crate::Limits::topo_support`] bytes: 32 with hwloc 2.9, the sender's hwloc
/// decides). A NULL topology with support bytes cannot be encoded.
///
/// **Contract.** The wire does not say how many support bytes there are: the
/// decoder reads its `Limits::topo_support`, so `support` must be exactly that long
/// for the bytes to decode back to this value. A writer that knows the decoder's
/// limits (every message's `encode(codec)`, or [`Writer::with_limits`]) refuses any
/// other length ([`crate::ErrorKind::Unencodable`]); a bare [`Writer`] cannot check,
/// and writes `support` as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Topo {
    /// The XML (NULL: no topology).
    pub xml: Option<WStr>,
    /// hwloc's discovery, cpubind and membind support structures, as sent.
    pub support: Vec<u8>,
}

impl Element for Topo {
    const TYPE: DataType = DataType::Topo;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.xml);
        match self.xml {
            Some(_) => {
                if let Some(l) = w.limits()
                    && usize::try_from(l.topo_support).ok() != Some(self.support.len())
                {
                    w.fail("topology support bytes of another length than the decoder's");
                }
                w.raw(&self.support);
            }
            None if self.support.is_empty() => {}
            None => w.fail("a NULL topology with support bytes"),
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let xml = opt_str(r, "topology xml")?;
        let support = match xml {
            Some(_) => {
                let n = r.limits().topo_support as usize;
                r.take(n, "topology support")?.to_vec()
            }
            None => Vec::new(),
        };
        Ok(Topo { xml, support })
    }
}
