//! One typed message per command, request and reply, events and I/O forwarding (PROTOCOL.md §6–7).
//!
//! Work in progress (issue 11).
