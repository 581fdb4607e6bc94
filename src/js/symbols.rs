//! Symbol recovery: the bundler keeps original names in export tables
//! (`helper(ns, { original: () => local })`) and in ESM export lists of
//! chunks (`export { v as original }`). Imports across chunks are linked to
//! the definition they name.

use super::code::{CodeIndex, IndexedModule};
use super::index::{Definition, ExportEntry};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymbolSource {
    ExportTable,
    EsmExport,
}

#[derive(Debug, Clone, Serialize)]
pub struct Symbol {
    pub minified: String,
    pub original: String,
    pub module: String,
    /// Raw line of the definition (or of the export when it has none).
    pub line: u32,
    /// Its pretty line; 0 from [`recover_names`].
    pub pretty_line: u32,
    pub source: SymbolSource,
}

/// An import in one module resolved to the definition in another.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub module: String,
    /// Local name (empty for `import.meta.require(…).name`).
    pub local: String,
    pub imported: String,
    pub line: u32,
    pub from: String,
    /// The exporting module's local name and where it is defined.
    pub resolved: Option<String>,
    pub definition_line: Option<u32>,
    pub definition_pretty_line: Option<u32>,
}

/// The first definition that gives the name a value (declarations first).
pub fn primary_definition<'a>(m: &'a IndexedModule, name: &str) -> Option<&'a Definition> {
    let defs = m.index.definitions.get(name)?;
    defs.iter()
        .find(|d| d.kind != super::index::DefKind::Assign && d.kind != super::index::DefKind::Param)
        .or_else(|| defs.first())
}

fn symbol(m: &IndexedModule, e: &ExportEntry, source: SymbolSource, lines: bool) -> Symbol {
    let at = primary_definition(m, &e.local).map_or(e.lo, |d| d.lo);
    Symbol {
        minified: e.local.clone(),
        original: e.original.clone(),
        module: m.name.clone(),
        line: m.raw_pos(at).0,
        pretty_line: if lines { m.pretty_line(at) } else { 0 },
        source,
    }
}

/// Every minified → original name the build reveals.
pub fn recover(ci: &CodeIndex) -> Vec<Symbol> {
    recover_with(ci, true)
}

/// [`recover`] with `pretty_line` 0: what the analyses read of symbols
/// (the names), without asking every module for its pretty line map, which
/// an index built with [`super::code::Depth::LinesWhere`] makes on demand.
pub fn recover_names(ci: &CodeIndex) -> Vec<Symbol> {
    recover_with(ci, false)
}

fn recover_with(ci: &CodeIndex, lines: bool) -> Vec<Symbol> {
    let mut out = Vec::new();
    for m in &ci.modules {
        out.extend(
            m.index
                .export_table
                .iter()
                .map(|e| symbol(m, e, SymbolSource::ExportTable, lines)),
        );
        out.extend(
            m.index
                .esm_exports
                .iter()
                .map(|e| symbol(m, e, SymbolSource::EsmExport, lines)),
        );
    }
    out
}

/// Original names by (module, minified name), for labelling functions.
pub fn original_names(symbols: &[Symbol]) -> HashMap<(&str, &str), &str> {
    symbols
        .iter()
        .filter(|s| s.original != s.minified)
        .map(|s| {
            (
                (s.module.as_str(), s.minified.as_str()),
                s.original.as_str(),
            )
        })
        .collect()
}

/// Resolve every cross-module import of `modules` (all when None).
pub fn link(ci: &CodeIndex, only: Option<&str>) -> Vec<Link> {
    let mut out = Vec::new();
    for m in ci
        .modules
        .iter()
        .filter(|m| only.is_none_or(|o| m.name == o))
    {
        for imp in &m.index.imports {
            let target = ci.resolve_import(m, &imp.source);
            let resolved = target.and_then(|t| {
                t.index
                    .esm_exports
                    .iter()
                    .find(|e| e.original == imp.imported)
                    .map(|e| (t, e.local.clone()))
            });
            let def = resolved
                .as_ref()
                .and_then(|(t, local)| primary_definition(t, local).map(|d| (*t, d.lo)));
            out.push(Link {
                module: m.name.clone(),
                local: imp.local.clone(),
                imported: imp.imported.clone(),
                line: m.raw_pos(imp.lo).0,
                from: target.map_or_else(|| imp.source.clone(), |t| t.name.clone()),
                resolved: resolved.map(|(_, l)| l),
                definition_line: def.map(|(t, lo)| t.raw_pos(lo).0),
                definition_pretty_line: def.map(|(t, lo)| t.pretty_line(lo)),
            });
        }
    }
    out
}
