//! The 16-byte frame header and tags (PROTOCOL.md §4).
//!
//! Work in progress (issue 11).
