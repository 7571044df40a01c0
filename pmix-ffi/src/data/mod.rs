//! Values, infos, info lists, packed data, strings and conversions.

pub(crate) mod convert;
pub(crate) mod info;
pub mod lists;
pub mod pack;
pub mod states;
pub mod status;
pub mod strings;
pub mod value;
