//! Layer 6: rendering. Views are plain serialisable structs built from a
//! [`Build`](crate::source::build::Build); each has a human rendering.

pub mod diff;
pub mod info;
pub mod modules;
pub mod table;
pub mod teardown;
