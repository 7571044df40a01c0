//! The `pmix` Python module (issue 15): the PMIx standard's Python syntax
//! (`from pmix import *`, `PMIxClient()`, `compute_distances` / `_nb`,
//! `group_leave` / `_nb`) over the `pmix` runtime, with python3-pmix's conventions
//! where it has the call, and the rank-state calls of `pmix_ft.h` (`ft_*`).
//!
//! Built with maturin (`pip install ./pmix-py`); `pmix.pyi` holds the type stubs.
//! The Rust library is `pmix_py` only because the crate depends on `pmix`.
//!
//! Constants: every integer and string `#define` of `pmix_common.h` and
//! `pmix_ft.h` (`PMIX_SUCCESS`, `PMIX_DEVICE_TYPE` = `"pmix.dev.type"`,
//! `PMIXRS_FT_STATE_NULL`, …), so Python and C agree. Keys are `str` (python3-pmix
//! has `bytes`; every call here takes either).

mod client;
mod convert;

use pyo3::prelude::*;

mod constants {
    include!(concat!(env!("OUT_DIR"), "/constants.rs"));
}

/// Finalizes the library if Python code initialized it and did not finalize, while
/// the interpreter can still run callbacks (registered with `atexit`).
#[pyfunction]
fn _atexit(py: Python<'_>) {
    while pmix::global::is_initialized() {
        if py
            .detach(|| pmix::global::finalize("PMIx_Finalize"))
            .is_err()
        {
            break;
        }
    }
}

/// PMIx from Python over pmix-rs: `PMIxClient` (device distances, key-value
/// exchange, events, groups and rank-state tracking) and the `PMIX_*` /
/// `PMIXRS_FT_*` constants of the C headers.
///
/// Every call returns a `PMIX_*` status, alone or first in a tuple. A cpuset is
/// `{'source': 'hwloc', 'cpus': [0, 1]}` (or `'cpus'` as `"0-1"` or
/// `"hwloc:0-1"`); an info is `{'key': ..., 'value': ..., 'val_type': ...}`; a
/// process is `{'nspace': ..., 'rank': ...}`. Blocking calls release the GIL;
/// callbacks run on the library's progress thread, where a blocking call returns
/// `PMIX_ERR_WOULD_BLOCK`.
#[pymodule(name = "pmix")]
fn pmix_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::PMIxClient>()?;
    for (name, value) in constants::INTS {
        m.add(*name, *value)?;
    }
    for (name, value) in constants::STRS {
        m.add(*name, *value)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let exit = wrap_pyfunction!(_atexit, m)?;
    m.add_function(exit.clone())?;
    m.py().import("atexit")?.call_method1("register", (exit,))?;
    Ok(())
}
