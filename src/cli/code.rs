//! Building the code index for commands that read code, with progress.

use super::Global;
use crate::js::code::{CodeIndex, Depth};
use crate::source::build::Build;
use std::io::IsTerminal;

pub fn index(g: &Global, build: &Build) -> anyhow::Result<CodeIndex> {
    index_to(g, build, Depth::Index)
}

/// The code index built to `depth`, with a spinner on a terminal.
pub fn index_to(g: &Global, build: &Build, depth: Depth) -> anyhow::Result<CodeIndex> {
    let js = build
        .graph
        .modules
        .iter()
        .filter(|m| m.is_javascript())
        .count();
    let spinner = (!g.quiet && !g.json && std::io::stderr().is_terminal()).then(|| {
        let s = indicatif::ProgressBar::new_spinner();
        s.set_message(format!("parsing and indexing {js} JavaScript module(s)…"));
        s.enable_steady_tick(std::time::Duration::from_millis(120));
        s
    });
    let ci = crate::js::parse::with_big_stack(|| {
        CodeIndex::build_filtered(&build.graph, g.budget(), |_| true, depth)
    });
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    Ok(ci?)
}
