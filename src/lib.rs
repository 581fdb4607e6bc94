//! cc-teardown: tear down Claude Code's native executables.
//!
//! Data flows one way: [`source`] (a target) → [`container`] (the payload) →
//! [`bun`] (the module graph) → analyses → [`report`].

pub mod analysis;
pub mod bun;
#[cfg(feature = "clap")]
pub mod cli;
pub mod container;
pub mod js;
pub mod report;
pub mod source;
pub mod store;
