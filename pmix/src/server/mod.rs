//! The PMIx server (docs/design.md §8): a sans-I/O state machine ([`core`]) that decides
//! every answer, driven by one progress thread that owns the listener on 127.0.0.1,
//! the sockets and the timers ([`io`], whose [`Server`] a launcher embeds); [`net`]
//! holds the operating-system calls about peers (a socket's real owner); [`hosted`]
//! reads what a host (Slurm, `mpirun`) registers through the C server API.

pub mod core;
pub mod hosted;
pub mod io;
pub mod net;

pub use self::core::{
    HostCall, JobEvent, LogStream, NamespaceSpec, NodeSpec, Placement, RankSpec, ServerError,
};
pub use io::{
    ApiError, HostSink, LIMITS, SERVER_FD_VAR, Server, ServerConfig, ServerStats, server_fd_value,
};
