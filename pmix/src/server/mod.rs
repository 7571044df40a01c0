//! The PMIx server (docs/design.md §8): a sans-I/O state machine ([`core`]) that decides
//! every answer, driven by one progress thread that owns the listener on 127.0.0.1,
//! the sockets and the timers ([`io`], whose [`Server`] a launcher embeds); [`host`]
//! is the one contract with whoever hosts the server ([`Host`]: a launcher, or a
//! resource manager through the C server API), what the server asks of it and how it
//! answers ([`Reply`]); [`net`] holds the operating-system calls about peers (a
//! socket's real owner); [`hosted`] reads what a host (Slurm, `mpirun`) registers
//! through the C server API, and [`regex`] the node and process maps it gives or asks
//! for; `embed.rs` joins a server-role instance to the server it embeds
//! ([`Pmix::attach_server`](crate::Pmix::attach_server), [`Pmix::serve`](crate::Pmix::serve)).

pub mod core;
mod embed;
pub mod host;
pub mod hosted;
pub mod io;
pub mod net;
pub mod regex;
mod shm;

pub use self::core::{
    HostAnswer, LogStream, NamespaceSpec, NodeSpec, Placement, Provides, RankSpec, ServerError,
    Upcall,
};
pub use host::{Host, NoHost, ProcName, Reply, write_log};
pub use io::{
    ApiError, LIMITS, SERVER_FD_VAR, Server, ServerConfig, ServerStats, ds21_dir, server_fd_value,
};
