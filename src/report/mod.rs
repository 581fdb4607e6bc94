//! Layer 6: rendering. Views are plain serialisable structs built from a
//! [`Build`](crate::source::build::Build); each has a human rendering, in
//! which untrusted text is escaped ([`escape`]).

pub mod diff;
pub mod escape;
pub mod info;
pub mod modules;
pub mod table;
pub mod teardown;
pub mod timeline;
