//! The code index of a build: every JavaScript module parsed, printed and
//! indexed once, then shared by every command and analysis.

use super::JsError;
use super::index::ModuleIndex;
use super::parse::{self, Goal, Parsed};
use super::print::{self, Printed};
use super::shape::Shapes;
use crate::bun::{Budget, BunGraph, ModuleFormat};
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// One JavaScript module, parsed, printed and indexed.
pub struct IndexedModule {
    /// Index of the module in the graph.
    pub graph_index: usize,
    pub name: String,
    /// The module's source (the AST is dropped once indexed and printed:
    /// the analyses read the index, the line map and the source).
    pub file: swc_common::sync::Lrc<swc_common::SourceFile>,
    pub index: ModuleIndex,
    pub printed: Printed,
    /// Rename-proof function hashes, when built with [`Depth::Shapes`].
    pub shapes: Option<Shapes>,
}

/// How much of each module to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Parse and print (what `pretty` needs).
    Print,
    /// Also index (what the analyses need).
    Index,
    /// Also record function shapes (what `diff` needs).
    Shapes,
}

impl IndexedModule {
    pub fn source(&self) -> &str {
        &self.file.src
    }

    /// Raw (line, col) of a byte offset.
    pub fn raw_pos(&self, offset: u32) -> (u32, u32) {
        self.printed.map.raw.locate(offset)
    }

    /// Pretty line of a byte offset.
    pub fn pretty_line(&self, offset: u32) -> u32 {
        self.printed.map.pretty_line_of(offset).unwrap_or(1)
    }
}

/// Time spent per phase, summed over modules (CPU time, not wall).
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Timings {
    pub decode: Duration,
    pub parse: Duration,
    pub index: Duration,
    pub print: Duration,
    pub wall: Duration,
}

pub struct CodeIndex {
    pub modules: Vec<IndexedModule>,
    /// Modules that are not JavaScript source, with the reason.
    pub skipped: Vec<(String, &'static str)>,
    pub timings: Timings,
}

/// The text of a module: UTF-8 as stored, else latin1 widened.
fn module_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

impl CodeIndex {
    pub fn build(graph: &BunGraph, budget: &Budget) -> Result<CodeIndex, JsError> {
        Self::build_filtered(graph, budget, |_| true, Depth::Index)
    }

    /// Index only the modules `keep` accepts (e.g. one module for `pretty --at`);
    /// `depth` says how much to build of each.
    pub fn build_filtered(
        graph: &BunGraph,
        budget: &Budget,
        keep: impl Fn(&crate::bun::Module) -> bool,
        depth: Depth,
    ) -> Result<CodeIndex, JsError> {
        let start = Instant::now();
        let mut skipped = Vec::new();
        let mut todo = Vec::new();
        for m in graph.modules.iter().filter(|m| keep(m)) {
            if !matches!(m.loader, "js" | "jsx" | "ts" | "tsx") {
                skipped.push((m.name.to_string(), "not JavaScript"));
            } else if m.is_compressed() {
                skipped.push((m.name.to_string(), "zstd-compressed asset"));
            } else {
                todo.push(m);
            }
        }
        let pool = parse::pool()?;
        let results: Vec<Result<(IndexedModule, Timings), JsError>> = pool.install(|| {
            todo.par_iter()
                .map(|m| {
                    let mut t = Timings::default();
                    let t0 = Instant::now();
                    let bytes = graph
                        .decoded(m, budget)
                        .map_err(|e| JsError::NotText(e.to_string()))?;
                    let src = module_text(&bytes);
                    t.decode = t0.elapsed();
                    let goal = if m.format == ModuleFormat::Esm {
                        Goal::Module
                    } else {
                        Goal::Script
                    };
                    let t1 = Instant::now();
                    let (mut parsed, comments) = parse::parse(m.name, src, goal)?;
                    t.parse = t1.elapsed();
                    // Index on a second thread while this one prints: the
                    // big single-bundle builds then use both cores too.
                    let program = &parsed.program;
                    let file = &parsed.file;
                    if depth == Depth::Print {
                        // Nothing else reads the AST meanwhile: a big
                        // module can be printed on both cores.
                        let t3 = Instant::now();
                        let printed = print::print_split(&mut parsed, &comments);
                        t.print = t3.elapsed();
                        return Ok((
                            IndexedModule {
                                graph_index: m.index,
                                name: m.name.to_string(),
                                file: release(parsed),
                                index: ModuleIndex::default(),
                                printed: printed?,
                                shapes: None,
                            },
                            t,
                        ));
                    }
                    let (index, shapes, printed) = std::thread::scope(|s| {
                        let h = parse::spawn_big(s, "cc-teardown-index", move || {
                            let t2 = Instant::now();
                            let base = file.start_pos.0;
                            let i = ModuleIndex::build_program(program, base);
                            let shapes =
                                (depth == Depth::Shapes).then(|| Shapes::build(program, base));
                            (i, shapes, t2.elapsed())
                        });
                        let t3 = Instant::now();
                        let printed = print::print(&parsed, &comments);
                        let print_time = t3.elapsed();
                        let (index, shapes, index_time) = h.join();
                        t.index = index_time;
                        t.print = print_time;
                        (index, shapes, printed)
                    });
                    Ok((
                        IndexedModule {
                            graph_index: m.index,
                            name: m.name.to_string(),
                            file: release(parsed),
                            index,
                            printed: printed?,
                            shapes,
                        },
                        t,
                    ))
                })
                .collect()
        });
        let mut modules = Vec::with_capacity(results.len());
        let mut timings = Timings::default();
        for r in results {
            let (m, t) = r?;
            timings.decode += t.decode;
            timings.parse += t.parse;
            timings.index += t.index;
            timings.print += t.print;
            modules.push(m);
        }
        timings.wall = start.elapsed();
        Ok(CodeIndex {
            modules,
            skipped,
            timings,
        })
    }

    pub fn module(&self, name: &str) -> Option<&IndexedModule> {
        self.modules.iter().find(|m| m.name == name)
    }

    /// Where an imported name of module `m` is defined: the exporting
    /// module's index and its local name for the export.
    pub fn follow_import(&self, m: usize, name: &str) -> Option<(usize, &str)> {
        let module = &self.modules[m];
        let imp = module.index.imports.iter().find(|i| i.local == name)?;
        let target = self.resolve_import(module, &imp.source)?;
        let t = self.modules.iter().position(|x| std::ptr::eq(x, target))?;
        let local = &target
            .index
            .esm_exports
            .iter()
            .find(|e| e.original == imp.imported)?
            .local;
        Some((t, local.as_str()))
    }

    /// The function `name` denotes in module `m`. An import binds the name
    /// for the whole module, so it wins over any same-named inner function
    /// (a method, a callback).
    pub fn resolve_function(
        &self,
        m: usize,
        name: &str,
    ) -> Option<(usize, crate::js::index::FnId)> {
        if self.modules[m]
            .index
            .imports
            .iter()
            .any(|i| i.local == name)
        {
            let (t, local) = self.follow_import(m, name)?;
            return self.modules[t]
                .index
                .function_named(local)
                .map(|(id, _)| (t, id));
        }
        self.modules[m]
            .index
            .function_named(name)
            .map(|(id, _)| (m, id))
    }

    /// The module an import source names (`/$bunfs/root/chunk-x.js` or `./chunk-x.js`).
    pub fn resolve_import(&self, from: &IndexedModule, source: &str) -> Option<&IndexedModule> {
        if let Some(m) = self.module(source) {
            return Some(m);
        }
        let rel = source.strip_prefix("./")?;
        let dir = from.name.rsplit_once('/').map_or("", |(d, _)| d);
        self.module(&format!("{dir}/{rel}"))
    }
}

/// Keep the source, let the AST go. Freeing a 20 MB bundle's AST node by
/// node costs a few hundred ms, so a large one is freed on a thread of its
/// own while the work goes on; small ones are freed at once, which keeps the
/// peak memory of a 3,600-chunk build low.
fn release(parsed: Parsed) -> swc_common::sync::Lrc<swc_common::SourceFile> {
    let file = parsed.file.clone();
    if file.src.len() > (1 << 20) {
        // Dropping recurses once per AST level: the same stack as parsing.
        let _ = std::thread::Builder::new()
            .stack_size(parse::STACK_BYTES)
            .spawn(move || drop(parsed));
    } else {
        drop(parsed);
    }
    file
}
