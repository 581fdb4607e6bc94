//! Layer 6: rendering. Views are plain serialisable structs built from a
//! [`Build`](crate::source::build::Build); their human renderings are one
//! [`doc::Doc`] each, rendered for a terminal, as Markdown or as HTML, in
//! which untrusted text is escaped ([`escape`]).

pub mod diff;
pub mod doc;
pub mod escape;
pub mod info;
pub mod modules;
pub mod provenance;
pub mod svg;
pub mod table;
pub mod teardown;
pub mod timeline;
