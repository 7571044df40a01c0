//! The incremental decoder: a byte stream in any chunking to whole messages (PROTOCOL.md §3–4, §9).
//!
//! Work in progress (issue 11).
