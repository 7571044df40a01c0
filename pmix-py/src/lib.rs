//! The `pmix` Python module (issues 15 and 37): python3-pmix 4.2.2's API over the
//! `pmix` runtime — `PMIxClient` with every method of python3-pmix's, `PMIxServer`
//! (a Python program hosts our server: its upcalls are Python callables) and
//! `PMIxTool`, each extending the one before as in python3-pmix — with its
//! argument and return shapes (`convert`), plus the PMIx standard's Python syntax
//! where python3-pmix has no call (`compute_distances_nb`, `group_leave_nb`) and the
//! rank-state calls of `pmix_ft.h` (`ft_*`).
//!
//! Built with maturin (`pip install ./pmix-py`); `pmix.pyi` holds the type stubs.
//! The Rust library is `pmix_py` only because the crate depends on `pmix`.
//!
//! Where things are: `client.rs` (the client class: init, the key-value exchange,
//! events, groups, distances, rank-state tracking; the rest of its calls in
//! `calls.rs`, the printing helpers in `strings.rs`), `server.rs` (the server class
//! and the host over its Python upcalls), `tool.rs` (the tool class),
//! `convert.rs` (Python ⇄ runtime values).
//!
//! Constants: every integer and string `#define` and enumerator of `pmix_common.h`,
//! `pmix_tool.h`, `pmix_server.h` and `pmix_ft.h` (`PMIX_SUCCESS`,
//! `PMIX_DEVICE_TYPE` = `"pmix.dev.type"`, `PMIXRS_FT_STATE_NULL`, …), so Python and
//! C agree, and the OpenPMIx 4.2.2 constants those headers lack
//! (`openpmix_constants.h`): every constant python3-pmix defines, with its value.
//! Keys are `str` (python3-pmix has `bytes`; every call here takes either).

mod calls;
mod client;
mod convert;
mod server;
mod strings;
mod tool;

use pyo3::prelude::*;

mod constants {
    include!(concat!(env!("OUT_DIR"), "/constants.rs"));
}

/// Finalizes the library (and stops a server Python code started) if Python code
/// initialized it and did not finalize, while the interpreter can still run
/// callbacks and upcalls (registered with `atexit`).
#[pyfunction]
fn _atexit(py: Python<'_>) {
    server::at_exit(py);
    while pmix::global::is_initialized() {
        if py
            .detach(|| pmix::global::finalize("PMIx_Finalize"))
            .is_err()
        {
            break;
        }
    }
}

/// PMIx from Python over pmix-rs, with python3-pmix's API: `PMIxClient` (key-value
/// exchange, publish / lookup, queries, spawn, events, groups, device distances,
/// rank-state tracking, …), `PMIxServer` (host our server from Python) and
/// `PMIxTool`, and the `PMIX_*` / `PMIXRS_FT_*` constants.
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
    m.add_class::<server::PMIxServer>()?;
    m.add_class::<tool::PMIxTool>()?;
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
