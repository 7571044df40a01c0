//! Requests a process cannot answer alone go to its local server (docs/design.md §6).
//!
//! A distance request with no topology or no cpuset here is relayed by a connected
//! client to its server (COMPUTE_DEVICE_DISTANCES: [`Client::distances_then`]);
//! not connected (a singleton client, a tool that did not connect) or a server itself,
//! it is `PMIX_ERR_UNREACH`. The topology and the binding themselves
//! (`PMIx_Load_topology`, `PMIx_Get_cpuset`) are never fetched from a server: without
//! them those calls are `PMIX_ERR_UNREACH` whatever the relay.

use std::sync::Arc;

use crate::client::Client;
use crate::error::Error;

/// How this instance reaches a server.
#[derive(Clone, Debug)]
pub(crate) enum Relay {
    /// No server connection: a singleton client or a tool that did not connect.
    NotConnected,
    /// This instance is the server: there is nobody to relay to.
    IsServer,
    /// A launched client connected to its server, which answers relayed distance
    /// requests.
    Connected(Arc<Client>),
}

impl Relay {
    /// The error of a request that needed what this process lacks and that is not
    /// relayed; `why` says what was missing locally.
    pub(crate) fn unreachable(&self, why: String) -> Error {
        let tail = match self {
            Relay::NotConnected => "not connected to a PMIx server to relay the request to",
            Relay::IsServer => "this process is the PMIx server: there is nobody to relay to",
            Relay::Connected(_) => "the PMIx server is not asked for it",
        };
        Error::Unreach(format!("{why}, and {tail}").into())
    }
}
