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
pub(crate) mod testjs;
pub mod workflows;

/// What the binary asks to be told when a build's analyses start (its
/// modules are parsed and indexed): the allocator policy is the binary's,
/// and what is freed from here on is the analyses' own, not parse memory
/// the next parse would touch again.
static ANALYSES_START: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Call `f` each time a build's analyses start (the first `f` set stays).
pub fn on_analyses_start(f: fn()) {
    let _ = ANALYSES_START.set(f);
}

/// A build's analyses start: tell the binary, if it asked.
pub(crate) fn analyses_start() {
    if let Some(f) = ANALYSES_START.get() {
        f();
    }
}

/// What the analysis could not do with this build (no bundled workflow to
/// write, a workflow name unfit for a file): the `analysis` kind.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AnalysisError(pub String);
