//! `PMIxTool`: the library as a tool (`PMIx_tool_init`), with python3-pmix's tool
//! calls; it extends `PMIxServer`, as python3-pmix's does, so every client and
//! server call is there too.
//!
//! A tool connects to the server `PMIX_SERVER_URI` names, or to the one whose
//! rendezvous file `PMIX_SERVER_PIDINFO` / `PMIX_SERVER_NSPACE` name (a server
//! started with `PMIX_SERVER_TOOL_SUPPORT`, `pmix-run`), or a `PMIX_SERVER_URI*`
//! variable names; `PMIX_TOOL_DO_NOT_CONNECT` keeps it alone. It holds one
//! connection, from init to finalize, and answers the tool calls as the C library
//! does (`pmix-ffi/src/servers.rs`): `get_servers` names that one server; switching
//! (`set_server`) or attaching to another (`attach_to_server`) is
//! `PMIX_ERR_UNREACH`; disconnecting from its own server `PMIX_ERR_NOT_SUPPORTED`
//! (it stays until finalize) and from another `PMIX_ERR_NOT_FOUND`. No server of
//! ours forwards standard I/O: `iof_pull` and `iof_deregister` are
//! `PMIX_ERR_NOT_SUPPORTED`, and `iof_push` of nothing `PMIX_OPERATION_SUCCEEDED`,
//! of bytes `PMIX_ERR_NOT_SUPPORTED`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use pmix::{Mode, Role};
use pmix_core::Status;

use crate::calls::{self, admitted, either};
use crate::client::{init_as, me_dict};
use crate::convert::*;
use crate::server::PMIxServer;

/// python3-pmix's tool identity before (or without) init: `{'nspace':
/// 'UNASSIGNED', 'rank': PMIX_RANK_UNDEF}`.
fn unassigned(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("nspace", "UNASSIGNED")?;
    d.set_item("rank", u32::MAX)?;
    Ok(d)
}

/// The server the tool is connected to.
fn my_server(p: &pmix::Pmix) -> Option<pmix::wire::Proc> {
    p.client().map(|c| c.server().clone())
}

/// A PMIx tool (module docs).
#[pyclass(module = "pmix", frozen, extends = PMIxServer)]
pub(crate) struct PMIxTool;

#[pymethods]
impl PMIxTool {
    #[new]
    fn py_new() -> PyClassInitializer<PMIxTool> {
        PMIxServer::initializer().add_subclass(PMIxTool)
    }

    /// `init(dicts) -> (rc, me)`: `PMIx_tool_init` (module docs for the server it
    /// connects to); `me` is `{'nspace': 'UNASSIGNED', 'rank': PMIX_RANK_UNDEF}` on
    /// an error, as in python3-pmix.
    #[pyo3(signature = (dicts = None))]
    fn init<'py>(
        &self,
        py: Python<'py>,
        dicts: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyDict>)> {
        let (rc, me) = init_as(py, Role::Tool, "PMIx_tool_init", dicts)?;
        Ok((rc, me.map_or_else(|| unassigned(py), Ok)?))
    }

    /// `finalize() -> rc`: `PMIx_tool_finalize`.
    #[pyo3(signature = (dicts = None))]
    fn finalize(&self, py: Python<'_>, dicts: Option<&Bound<'_, PyAny>>) -> i32 {
        let _ = dicts;
        calls::status(py.detach(|| pmix::global::finalize("PMIx_tool_finalize")))
    }

    /// `disconnect(server) -> rc`: `PMIx_tool_disconnect` from `server` (a process
    /// dictionary): `PMIX_ERR_NOT_SUPPORTED` for the tool's own server (the
    /// connection stays until finalize), `PMIX_ERR_NOT_FOUND` for another. Given a
    /// list of processes (and infos), it is `PMIxClient.disconnect`.
    #[pyo3(signature = (server = None, info = None))]
    fn disconnect(
        &self,
        py: Python<'_>,
        server: Option<&Bound<'_, PyAny>>,
        info: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        let Some(s) = server.filter(|s| s.cast::<PyDict>().is_ok()) else {
            return calls::connect(py, false, server, info);
        };
        either((|| {
            let p = admitted("PMIx_tool_disconnect", Mode::Blocking)?;
            let target = proc_from_py(s)?;
            if my_server(&p).is_some_and(|m| m == target) {
                Err(Status::ERR_NOT_SUPPORTED.0)
            } else {
                Err(Status::ERR_NOT_FOUND.0)
            }
        })())
    }

    /// `attach_to_server(dicts) -> (rc, me, server)`: `PMIx_tool_attach_to_server`:
    /// the tool holds one connection: attaching to a server `dicts` names is
    /// `PMIX_ERR_UNREACH`; naming none, `PMIX_ERR_BAD_PARAM` (as libpmix2).
    #[pyo3(signature = (dicts = None))]
    fn attach_to_server<'py>(
        &self,
        py: Python<'py>,
        dicts: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let r = (|| {
            let p = admitted("PMIx_tool_attach_to_server", Mode::Blocking)?;
            let infos = infos_from_py(dicts)?;
            let _ = p;
            Err::<(), i32>(if infos.is_empty() {
                BAD_PARAM
            } else {
                Status::ERR_UNREACH.0
            })
        })();
        let me = match calls::instance() {
            Ok(p) => me_dict(py, &p)?,
            Err(_) => unassigned(py)?,
        };
        Ok((r.err().unwrap_or(Status::SUCCESS.0), me, PyDict::new(py)))
    }

    /// `get_servers() -> (rc, [proc])`: `PMIx_tool_get_servers`: the server this
    /// process is connected to, or none.
    fn get_servers<'py>(&self, py: Python<'py>) -> PyResult<(i32, Bound<'py, PyList>)> {
        match admitted("PMIx_tool_get_servers", Mode::Blocking) {
            Ok(p) => {
                let servers: Vec<pmix::wire::Proc> = my_server(&p).into_iter().collect();
                Ok((Status::SUCCESS.0, procs_to_py(py, &servers)?))
            }
            Err(s) => Ok((s, PyList::empty(py))),
        }
    }

    /// `set_server(server, info) -> rc`: `PMIx_tool_set_server`: the tool keeps its
    /// one connection: `PMIX_ERR_UNREACH` (as libpmix2 answers a client).
    #[pyo3(signature = (server, info = None))]
    fn set_server(&self, server: &Bound<'_, PyAny>, info: Option<&Bound<'_, PyAny>>) -> i32 {
        either((|| {
            admitted("PMIx_tool_set_server", Mode::Blocking)?;
            proc_from_py(server)?;
            infos_from_py(info)?;
            Err(Status::ERR_UNREACH.0)
        })())
    }

    /// `iof_pull(procs, channel, directives, hdlr) -> (rc, id)`: `PMIx_IOF_pull`: no
    /// server of ours forwards output: `(PMIX_ERR_NOT_SUPPORTED, -1)`
    /// (`PMIX_ERR_UNREACH` unconnected, as libpmix2); `hdlr` is never called.
    #[pyo3(signature = (procs, channel, directives = None, hdlr = None))]
    fn iof_pull(
        &self,
        procs: Option<&Bound<'_, PyAny>>,
        channel: i64,
        directives: Option<&Bound<'_, PyAny>>,
        hdlr: Option<&Bound<'_, PyAny>>,
    ) -> (i32, i64) {
        let _ = (channel, hdlr);
        let s = either((|| {
            let p = admitted("PMIx_IOF_pull", Mode::Blocking)?;
            procs_from_py(procs)?;
            infos_from_py(directives)?;
            // Not connected: nobody to pull from (libpmix2's answer).
            p.client().ok_or(Status::ERR_UNREACH.0)?;
            Err(Status::ERR_NOT_SUPPORTED.0)
        })());
        (s, -1)
    }

    /// `iof_deregister(id, directives) -> rc`: `PMIx_IOF_deregister`: nothing was
    /// pulled: `PMIX_ERR_NOT_SUPPORTED`.
    #[pyo3(signature = (id, directives = None))]
    fn iof_deregister(&self, id: i64, directives: Option<&Bound<'_, PyAny>>) -> i32 {
        let _ = id;
        either((|| {
            admitted("PMIx_IOF_deregister", Mode::Blocking)?;
            infos_from_py(directives)?;
            Err(Status::ERR_NOT_SUPPORTED.0)
        })())
    }

    /// `iof_push(targets, data, directives) -> rc`: `PMIx_IOF_push`: no server of
    /// ours forwards input: nothing to push (`None` or empty) is
    /// `PMIX_OPERATION_SUCCEEDED`, bytes (`{'bytes': …, 'size': int}`) are
    /// `PMIX_ERR_NOT_SUPPORTED`.
    #[pyo3(signature = (targets, data = None, directives = None))]
    fn iof_push(
        &self,
        targets: Option<&Bound<'_, PyAny>>,
        data: Option<&Bound<'_, PyAny>>,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        either((|| {
            admitted("PMIx_IOF_push", Mode::Blocking)?;
            procs_from_py(targets)?;
            infos_from_py(directives)?;
            let bytes = match data.filter(|d| !d.is_none()) {
                Some(d) => byte_object(d)?,
                None => Vec::new(),
            };
            Err(if bytes.is_empty() {
                Status::OPERATION_SUCCEEDED.0
            } else {
                Status::ERR_NOT_SUPPORTED.0
            })
        })())
    }
}
