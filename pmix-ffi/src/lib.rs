//! # pmix-ffi
//!
//! The C ABI of pmix-rs (work in progress).
