//! The PMIx server (DESIGN §8): a sans-I/O state machine ([`core`]) that decides
//! every answer, driven by one progress thread that owns the listener on 127.0.0.1,
//! the sockets and the timers.

pub mod core;
