//! `pmix_tool.h`: a process that attaches to a server as a tool.
//!
//! `PMIx_tool_init` and `PMIx_tool_finalize` ([`init`]); the server connections
//! (`PMIx_tool_get_servers`, `_set_server`, `_disconnect`, `_attach_to_server`,
//! `_connect_to_server`: [`servers`]); the forwarding of standard I/O (`PMIx_IOF_pull`,
//! `_deregister`, `_push`: [`iof`]).

pub mod init;
pub mod iof;
pub mod servers;
