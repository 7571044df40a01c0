//! bfrops v4.1 elements: the Rust types of every value a client and a server exchange (PROTOCOL.md §5.4).
//!
//! Work in progress (issue 11).
