//! Layer 6: rendering. Views are plain serialisable structs built from a
//! [`Build`](crate::source::build::Build); their human renderings are one
//! [`doc::Doc`] each, rendered for a terminal, as Markdown or as HTML, in
//! which untrusted text is escaped ([`escape`]).

pub mod diff;
pub mod doc;
pub mod emit;
pub mod escape;
pub mod extract;
pub mod flags;
pub mod gates;
pub mod grep;
pub mod history;
pub mod info;
pub mod integrity;
pub mod local;
pub mod locate;
pub mod modules;
pub mod outdir;
pub mod pretty;
pub mod provenance;
pub mod simulate;
pub mod surface;
pub mod svg;
pub mod symbols;
pub mod teardown;
pub mod timeline;
#[cfg(test)]
mod view_snapshots;
pub mod workflows;
