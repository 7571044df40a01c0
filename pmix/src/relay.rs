//! Requests a process cannot answer alone go to its local server (DESIGN §6).
//!
//! A launched client is connected ([`crate::client`]), but relaying
//! `COMPUTE_DEVICE_DISTANCES` over that connection (and telling
//! `PMIX_ERR_NOT_SUPPORTED` apart) is a later step. Until then a request that needs the
//! relay is `PMIX_ERR_UNREACH`, whether the instance is connected, not connected (a
//! singleton client, a tool) or a server itself. The instance asks its [`Relay`] in
//! exactly the places where a connected client will send a request, so the connection
//! slots in here without touching the callers.

use crate::error::Error;

/// How this instance reaches a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Relay {
    /// No server connection: a singleton client or a tool that did not connect.
    NotConnected,
    /// This instance is the server: there is nobody to relay to.
    IsServer,
    /// A launched client connected to its server, which cannot relay distance
    /// requests yet (issue 13).
    Connected,
}

impl Relay {
    /// The error of a request that needed the relay; `why` says what was missing
    /// locally.
    pub(crate) fn unreachable(self, why: String) -> Error {
        let tail = match self {
            Relay::NotConnected => "not connected to a PMIx server",
            Relay::IsServer => "this process is the PMIx server",
            Relay::Connected => "relaying requests to the PMIx server is not built yet",
        };
        let to = if self == Relay::Connected {
            ""
        } else {
            " to relay the request to"
        };
        Error::Unreach(format!("{why}, and {tail}{to}").into())
    }
}
