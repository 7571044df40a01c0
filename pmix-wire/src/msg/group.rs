//! Groups: GROUP_CONSTRUCT, GROUP_DESTRUCT and GROUP_LEAVE (docs/wire.md §6.9), in
//! the 4.2.0–4.2.3 layouts and the 4.2.4+ ones ([`GroupLayout`], from the client's
//! version in the [`Codec`]).

use alloc::vec::Vec;

use super::{layout, read_list, write_list};
use crate::buf::{Reader, Writer};
use crate::error::WireError;
use crate::value::{Info, Proc, Size, Status, WStr};
use crate::version::{Codec, GroupLayout};

layout! {
    /// GROUP_CONSTRUCT (24) request (§6.9), the same in every 4.2:
    /// `STRING grp`, `SIZE nprocs`, `PROC[nprocs]`, `SIZE ninfo`, `INFO[ninfo]`.
    pub struct GroupConstruct {
        /// The group id.
        grp: one WStr,
        /// The members.
        procs: list Proc,
        /// Directives.
        info: list Info,
    }
}

layout! {
    /// GROUP_LEAVE (27) request (§6.9): `STRING grp`, `SIZE ninfo`, `INFO[ninfo]`.
    /// Every 4.2 server answers it NOT_SUPPORTED.
    pub struct GroupLeave {
        /// The group id.
        grp: one WStr,
        /// Directives.
        info: list Info,
    }
}

/// GROUP_DESTRUCT (28) request (§6.9): `STRING grp`, then (4.2.4 and later only)
/// `SIZE nmembers`, `PROC[nmembers]`, then `SIZE ninfo`, `INFO[ninfo]`.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupDestruct {
    /// The group id.
    pub grp: WStr,
    /// The members: `None` in the 4.2.0–4.2.3 layout, `Some` in the 4.2.4+ one.
    /// Encoding fails when this does not match the codec's layout.
    pub members: Option<Vec<Proc>>,
    /// Directives.
    pub info: Vec<Info>,
}

impl GroupDestruct {
    pub(crate) fn read(r: &mut Reader<'_>, codec: &Codec) -> Result<Self, WireError> {
        let grp = r.unpack_one::<WStr>("group id")?;
        let members = match codec.version.group_layout() {
            GroupLayout::V420 => None,
            GroupLayout::V424 => Some(read_list::<Proc>(r, "group members")?),
        };
        let info = read_list::<Info>(r, "group info")?;
        Ok(GroupDestruct { grp, members, info })
    }

    pub(crate) fn write(&self, w: &mut Writer, codec: &Codec) {
        w.pack_one(&self.grp);
        match (codec.version.group_layout(), &self.members) {
            (GroupLayout::V420, None) => {}
            (GroupLayout::V424, Some(m)) => write_list(w, m),
            _ => w.fail("a group destruct whose members do not match the peer's layout"),
        }
        write_list(w, &self.info);
    }
}

/// GROUP_CONSTRUCT's reply (§6.9): `STATUS`, then (4.2.4 and later only)
/// `SIZE nmembers`, `PROC[nmembers]` (the final membership), then `SIZE ctxid`
/// (SIZE_MAX if none was assigned), which servers omit on some paths and clients
/// treat as optional. A reply that is only the STATUS (a 4.2.0–4.2.3 reply without
/// its context id, or any error) is [`super::Reply::Status`]: encoding a 4.2.0–4.2.3
/// reply without `ctxid` fails for that reason.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupConstructReply {
    /// The status.
    pub status: Status,
    /// The final membership: `None` in the 4.2.0–4.2.3 layout, `Some` in the
    /// 4.2.4+ one. Encoding fails when this does not match the codec's layout.
    pub members: Option<Vec<Proc>>,
    /// The context id, if it was sent.
    pub ctxid: Option<Size>,
}

impl GroupConstructReply {
    /// The context id a server sends when it assigned none (`SIZE_MAX`).
    pub const NO_CTXID: Size = Size(u64::MAX);

    pub(crate) fn read(r: &mut Reader<'_>, codec: &Codec) -> Result<Self, WireError> {
        let status = r.unpack_one::<Status>("status")?;
        let members = match codec.version.group_layout() {
            GroupLayout::V420 => None,
            GroupLayout::V424 => Some(read_list::<Proc>(r, "group members")?),
        };
        let ctxid = if r.is_empty() {
            None
        } else {
            Some(r.unpack_one::<Size>("context id")?)
        };
        Ok(GroupConstructReply {
            status,
            members,
            ctxid,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer, codec: &Codec) {
        w.pack_one(&self.status);
        match (codec.version.group_layout(), &self.members) {
            (GroupLayout::V420, None) => {}
            (GroupLayout::V424, Some(m)) => write_list(w, m),
            _ => w.fail("a group construct reply whose members do not match the peer's layout"),
        }
        if let Some(c) = &self.ctxid {
            w.pack_one(c);
        }
    }
}

layout! {
    /// GROUP_DESTRUCT's reply with its optional trailing SIZE (§6.9): `STATUS`,
    /// `SIZE`. Without the SIZE it is a lone STATUS: [`super::Reply::Status`].
    pub struct GroupDestructReply {
        /// The status.
        status: one Status,
        /// The trailing SIZE (a context id, as in the construct reply).
        ctxid: one Size,
    }
}
