//! `pmix.h`'s client calls.

pub mod control;
pub mod distances;
pub mod events;
pub mod exchange;
pub mod groups;
pub mod init;
pub mod location;
pub mod objects;
pub mod pubsub;
pub mod query;
pub mod spawn;
pub mod unserved;
