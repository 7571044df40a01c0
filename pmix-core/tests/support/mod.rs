//! Test support shared by the `group_*` and `ftstate_*` tests (and, by path, the
//! fuzz targets): the in-memory simulator and a plain model of the tracker.

pub mod sim;
