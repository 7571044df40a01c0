//! Test support shared by the `group_*` and `ftstate_*` tests (and, by path, the
//! fuzz targets): the in-memory simulator, its plain model of how each member's
//! group construct ends, and a plain model of the tracker.

pub mod sim;
