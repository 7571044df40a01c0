//! Shared by the runtime's integration tests.

#![allow(dead_code, unreachable_pub)]

pub mod child;
pub mod race;

#[allow(unused_imports)]
pub use child::{child_test, output_within};
