//! Events: REGEVENTS, DEREGEVENTS, a client's NOTIFY (docs/wire.md §6.7–6.8) and
//! the event a server delivers on tag 0 (§7).

use alloc::vec::Vec;

use super::{layout, read_list, read_until_end_bounded, write_each, write_list};
use crate::buf::{Reader, Writer};
use crate::error::WireError;
use crate::types::Command;
use crate::value::{DataRange, Info, Proc, Status};

layout! {
    /// REGEVENTS (13) request (§6.7): `SIZE ncodes`, `STATUS[ncodes]` (no codes:
    /// the default handler), `SIZE ninfo`, `INFO[ninfo]`.
    pub struct RegEvents {
        /// The event codes; empty for a default handler.
        codes: list Status,
        /// Directives the client did not consume itself.
        info: list Info,
    }
}

/// DEREGEVENTS (14) request (§6.7): one STATUS pack per code whose last local
/// registration went away (`INT32_MIN`: the default handler), until the end;
/// possibly none. One-way: the server never replies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeregEvents {
    /// The codes, in order.
    pub codes: Vec<Status>,
}

impl DeregEvents {
    /// The code that stands for the default handler (`INT32_MIN`).
    pub const DEFAULT_HANDLER: Status = Status(i32::MIN);

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(DeregEvents {
            codes: read_until_end_bounded(r, r.limits().max_list, "code")?,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        write_each(w, &self.codes);
    }
}

layout! {
    /// NOTIFY (12) request from a client (§6.8): `STATUS code`, `DATA_RANGE range`,
    /// `SIZE ninfo`, `INFO[ninfo]`. The source is the sender.
    pub struct Notify {
        /// The event code.
        status: one Status,
        /// The range.
        range: one DataRange,
        /// The event's information.
        info: list Info,
    }
}

/// An event the server delivers on tag 0 (§7): `COMMAND 12`, `STATUS code`,
/// `PROC source`, `SIZE ninfo`, `INFO[ninfo]`, and a `DATA_RANGE` that the
/// live-delivery path sends and a replay of a cached event does not.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The event code.
    pub status: Status,
    /// Who raised it.
    pub source: Proc,
    /// The event's information.
    pub info: Vec<Info>,
    /// The trailing range, if it was sent.
    pub range: Option<DataRange>,
}

impl Event {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.offset();
        if r.unpack_one::<Command>("event command")? != Command::Notify {
            return Err(super::bad(
                "event command",
                "an event that does not start with NOTIFY",
                at,
            ));
        }
        let status = r.unpack_one::<Status>("event code")?;
        let source = r.unpack_one::<Proc>("event source")?;
        let info = read_list::<Info>(r, "event info")?;
        let range = if r.is_empty() {
            None
        } else {
            Some(r.unpack_one::<DataRange>("event range")?)
        };
        Ok(Event {
            status,
            source,
            info,
            range,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.pack_one(&Command::Notify);
        w.pack_one(&self.status);
        w.pack_one(&self.source);
        write_list(w, &self.info);
        if let Some(range) = &self.range {
            w.pack_one(range);
        }
    }
}
