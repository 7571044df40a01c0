//! I/O forwarding: IOF_PULL, IOF_PUSH, IOF_DEREG (docs/wire.md §6.13) and the
//! forwarded output a server sends on tag 2.

use alloc::vec::Vec;

use super::{layout, read_list, write_list};
use crate::buf::{Reader, Writer};
use crate::error::WireError;
use crate::value::{ByteObject, Info, IofChannel, Proc, Size, Status};

layout! {
    /// IOF_PULL (22) request: `SIZE nprocs`, `PROC[nprocs]`, `SIZE ndirs`,
    /// `INFO[ndirs]`, `IOF_CHANNEL`, `SIZE local id`.
    pub struct IofPull {
        /// Whose output.
        procs: list Proc,
        /// Directives.
        directives: list Info,
        /// Which channels.
        channel: one IofChannel,
        /// The requester's id for this registration.
        local_id: one Size,
    }
}

layout! {
    /// IOF_PULL's reply: `STATUS`, `SIZE remote id`.
    pub struct IofPullReply {
        /// The status.
        status: one Status,
        /// The server's id for the registration.
        remote_id: one Size,
    }
}

/// IOF_PUSH (23) request: `SIZE ntargets`, `PROC[ntargets]`, `SIZE ndirs`,
/// `INFO[ndirs]`, then `BYTE_OBJECT data` (omitted at end of input).
#[derive(Clone, Debug, PartialEq)]
pub struct IofPush {
    /// Where the input goes.
    pub targets: Vec<Proc>,
    /// Directives.
    pub directives: Vec<Info>,
    /// The data; `None` at end of input.
    pub data: Option<ByteObject>,
}

impl IofPush {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let targets = read_list(r, "targets")?;
        let directives = read_list(r, "directives")?;
        let data = if r.is_empty() {
            None
        } else {
            Some(r.unpack_one("data")?)
        };
        Ok(IofPush {
            targets,
            directives,
            data,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        write_list(w, &self.targets);
        write_list(w, &self.directives);
        if let Some(d) = &self.data {
            w.pack_one(d);
        }
    }
}

layout! {
    /// IOF_DEREG (29) request: `SIZE ndirs`, `INFO[ndirs]`, `SIZE remote id`.
    pub struct IofDereg {
        /// Directives.
        directives: list Info,
        /// The server's id of the registration to remove.
        remote_id: one Size,
    }
}

layout! {
    /// Forwarded output, server to client on tag 2: `PROC source`, `IOF_CHANNEL`,
    /// `SIZE request id`, `SIZE ninfo`, `INFO[ninfo]`, `BYTE_OBJECT data`.
    pub struct Iof {
        /// Whose output.
        source: one Proc,
        /// Which channel.
        channel: one IofChannel,
        /// The id of the pull registration it answers.
        request_id: one Size,
        /// Information about it.
        info: list Info,
        /// The bytes.
        data: one ByteObject,
    }
}
