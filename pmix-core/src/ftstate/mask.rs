//! The vocabulary of the views (docs/design.md §5): which view a query reads, the state and
//! modifier of a member in it, the masks that select members, and what a query or a
//! validate answers. Pure values; the [`Tracker`](super::Tracker) computes them.

use core::ops::BitOr;

use super::FtError;

/// Which view a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// `L`, updated by [`Tracker::validate_local`](super::Tracker::validate_local) (and set to `G` by
    /// [`Tracker::validate_global`](super::Tracker::validate_global)).
    Local,
    /// `G`, updated by [`Tracker::validate_global`](super::Tracker::validate_global).
    Global,
}

/// The state of a member in a view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum RankState {
    /// Active: not in the view.
    #[default]
    Ok,
    /// Failed, unrecognized: in the view but not in `G`.
    Failed,
    /// Failed, recognized: in the view and in `G`.
    Null,
}

/// Whether the view's most recent update added the member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Modifier {
    /// Added by the most recent update.
    New,
    /// In the view before it (and every `OK` member).
    #[default]
    Old,
}

/// A set of states and modifiers, OR-ed: `Mask::NULL | Mask::NEW`. No modifier bit
/// means any modifier; no state bit means any failed state (`FAILED | NULL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Mask(u8);

impl Mask {
    /// `OK` members.
    pub const OK: Mask = Mask(1);
    /// `FAILED` members.
    pub const FAILED: Mask = Mask(2);
    /// `NULL` members.
    pub const NULL: Mask = Mask(4);
    /// Members the view's last update added.
    pub const NEW: Mask = Mask(8);
    /// Members the view held before its last update (and `OK` ones).
    pub const OLD: Mask = Mask(16);
    /// Every failed member (the empty mask).
    pub const ANY_FAILED: Mask = Mask(0);
    /// Every bit.
    pub const ALL: Mask = Mask(31);

    /// The mask with these bits (as a C caller passes them).
    ///
    /// # Errors
    /// [`FtError::BadMask`] for bits outside [`Mask::ALL`].
    pub fn from_bits(bits: u8) -> Result<Mask, FtError> {
        if bits & !Mask::ALL.0 != 0 {
            return Err(FtError::BadMask { bits });
        }
        Ok(Mask(bits))
    }

    /// The bits.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The state bits it selects (no state bit: `FAILED | NULL`).
    pub(super) fn states(self) -> u8 {
        match self.0 & 7 {
            0 => 6,
            s => s,
        }
    }

    /// The modifier bits it selects (no modifier bit: both).
    pub(super) fn mods(self) -> u8 {
        match self.0 & 24 {
            0 => 24,
            m => m,
        }
    }
}

impl BitOr for Mask {
    type Output = Mask;
    fn bitor(self, rhs: Mask) -> Mask {
        Mask(self.0 | rhs.0)
    }
}

/// One member's entry in a [`Tracker::get_state`](super::Tracker::get_state) answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RankInfo {
    /// The group rank.
    pub rank: u32,
    /// Its state in the view.
    pub state: RankState,
    /// Its modifier in the view.
    pub modifier: Modifier,
}

/// What a validate returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Validation {
    /// `|L|` after the update: every failure in the view, recognized or not.
    pub num_failed: u32,
    /// `validate_local`: `|L \ L_prev|`; `validate_global`: `|G \ G_prev|`.
    pub new_failures: u32,
}
