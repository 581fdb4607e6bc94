//! Layer 5: analyses over the code index — roles (the functions that
//! register, build, look up and gate workflows), workflow reconstruction,
//! and the evaluator they share.

pub mod analysed;
pub mod diff;
pub mod eval;
pub mod flags;
pub mod gates;
pub mod integrity;
pub mod roles;
pub mod simulate;
pub mod surface;
#[cfg(test)]
mod testjs;
pub mod workflows;

/// What the analysis could not do with this build (no bundled workflow to
/// write, a workflow name unfit for a file): the `analysis` kind.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AnalysisError(pub String);
