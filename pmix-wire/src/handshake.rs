//! The connect handshake in both directions (PROTOCOL.md §3).
//!
//! Work in progress (issue 11).
