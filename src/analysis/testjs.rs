//! Small JavaScript written in the unit tests, indexed the way the analyses
//! see a build: one script (a single-bundle build) or several ES module
//! chunks that import from each other (a split build). The JavaScript
//! imitates the shapes the analyses look for; it is ours, written per test.

use crate::analysis::eval::{EvalError, Evaluator, Value};
use crate::bun::{BunGraph, ModuleFormat};
use crate::js::code::CodeIndex;
use crate::js::index::FnId;

/// The name a one-script build's module has.
pub const SCRIPT: &str = "/$bunfs/root/cli.js";

/// Index one script.
pub fn script(src: &str) -> CodeIndex {
    let g = BunGraph::single_js(SCRIPT, src.as_bytes());
    build(&g)
}

/// Index ES module chunks, `(name, source)`; names are full bunfs paths
/// (`/$bunfs/root/chunk-a.js`) so `./chunk-a.js` imports resolve.
pub fn chunks(chunks: &[(&str, &str)]) -> CodeIndex {
    chunks_with_files(chunks, &[])
}

/// Index ES module chunks beside text files the build ships, `(name,
/// contents, loader)`: a `text` loader's file as stored, or a `file`
/// loader's zstd frame.
pub fn chunks_with_files(
    chunks: &[(&str, &str)],
    files: &[(&str, &[u8], &'static str)],
) -> CodeIndex {
    let (first, rest) = chunks.split_first().expect("at least one chunk");
    let mut g = BunGraph::single_js(first.0, first.1.as_bytes());
    g.modules[0].format = ModuleFormat::Esm;
    let js = rest.iter().map(|(name, src)| (*name, src.as_bytes(), "js"));
    for (name, contents, loader) in js.chain(files.iter().copied()) {
        g.push_like_first(name, contents, loader);
    }
    build(&g)
}

fn build(g: &BunGraph) -> CodeIndex {
    let budget = crate::bun::decode::Budget::new(1 << 20);
    crate::js::parse::with_big_stack(|| CodeIndex::build(g, &budget)).expect("test JS parses")
}

/// The module called `name` (or ending in it).
pub fn module(ci: &CodeIndex, name: &str) -> usize {
    ci.modules
        .iter()
        .position(|m| m.name == name || m.name.ends_with(name))
        .unwrap_or_else(|| panic!("no module {name}"))
}

/// The top-level function `name` of module `m`.
pub fn function(ci: &CodeIndex, m: usize, name: &str) -> FnId {
    ci.modules[m]
        .index
        .function_named(name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .0
}

/// Evaluate the value of the binding `name` of module `m`, as the analyses
/// evaluate an argument: its expression, re-parsed and interpreted.
pub fn eval_binding(ci: &CodeIndex, m: usize, name: &str) -> Result<Value, EvalError> {
    let module = &ci.modules[m];
    let defs = module
        .index
        .definitions
        .get(name)
        .unwrap_or_else(|| panic!("no binding {name}"));
    let (lo, hi) = defs
        .iter()
        .find_map(|d| d.value)
        .unwrap_or_else(|| panic!("{name} has no value"));
    Evaluator::new(ci).eval_span(m, lo, hi)
}

/// [`eval_binding`] in the one script, which must evaluate.
pub fn value(ci: &CodeIndex, name: &str) -> Value {
    eval_binding(ci, 0, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A string value.
pub fn s(v: &str) -> Value {
    Value::Str(v.to_string())
}
