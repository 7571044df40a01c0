//! Bounds on what one decode may ask for, checked before anything is allocated.

/// Bounds on counts, lengths and nesting, checked against every count and length
/// before it is trusted. The defaults admit everything OpenPMIx 4.2 sends in practice
/// (the largest captured message is a 4.3 kB commit; a job-info blob for thousands of
/// ranks is a few hundred kB) and refuse what would exhaust memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest frame payload (the header's `nbytes`), in bytes.
    pub max_frame: u32,
    /// The largest handshake body, in bytes (OpenPMIx's server refuses more than
    /// 131,072).
    pub max_handshake: u32,
    /// The most elements one top-level pack, array or list may claim.
    pub max_count: u32,
    /// The longest string or byte object, in bytes.
    pub max_bytes: u32,
    /// The most processes one list of a message may name (a fence's, a group's,
    /// an abort's, a connect's), checked at its `SIZE` before any is read. A server
    /// sets it to what it can serve (its procs and namespaces); the default is
    /// [`Limits::max_count`]'s.
    pub max_procs: u32,
    /// The most elements any other list of a message may hold (infos, keys,
    /// codes, queries; a commit's values, counted as they are read), checked at
    /// its `SIZE` before any is read. A server sets it to what a request needs (the
    /// default is [`Limits::max_count`]'s; [`Limits::SERVER`]'s is 65,536).
    pub max_list: u32,
    /// The deepest nesting of buffers, values and arrays.
    pub max_depth: u8,
    /// The length of hwloc's three support structures after a TOPO element's XML
    /// (docs/wire.md §5.4): the sender's hwloc decides it, 32 bytes with hwloc 2.9
    /// (6 + 11 + 15 one-byte flags).
    pub topo_support: u32,
}

impl Limits {
    /// The defaults: 64 MiB frames, 128 KiB handshakes, a million elements (and
    /// processes in a list), 64 MiB strings and byte objects, nesting 16 deep, hwloc 2.9's 32 bytes of
    /// topology support structures.
    pub const DEFAULT: Limits = Limits {
        max_frame: 64 << 20,
        max_handshake: 131_072,
        max_count: 1 << 20,
        max_bytes: 64 << 20,
        max_procs: 1 << 20,
        max_list: 1 << 20,
        max_depth: 16,
        topo_support: 32,
    };

    /// What a server holds its peers' requests to: [`Limits::DEFAULT`] with at most
    /// 65,536 elements in a list other than of processes (a request names a few
    /// infos or keys; a commit's values are bounded by what one process may keep).
    pub const SERVER: Limits = Limits {
        max_list: 1 << 16,
        ..Limits::DEFAULT
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
