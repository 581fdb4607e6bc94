//! The code index of a build: every JavaScript module parsed, printed and
//! indexed once, then shared by every command and analysis.

use super::JsError;
use super::index::{ExportEntry, ImportEntry, MeasuredModule, ModuleIndex};
use super::lines::LineMap;
use super::parse::{self, Goal, Parsed};
use super::print::{self, Printed};
use super::shape::Shapes;
use crate::bun::{Budget, BunGraph, ModuleFormat};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use swc_common::comments::SingleThreadedComments;

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
    /// The grammar the module parsed with (to parse it again).
    goal: Goal,
    /// Built with [`Depth::LinesWhere`] for a module its test refused:
    /// `printed.map` knows raw positions only, and the pretty line map is
    /// made here on first use.
    lazy_lines: Option<OnceLock<LineMap>>,
}

/// How much of each module to build.
#[derive(Debug, Clone, Copy)]
pub enum Depth {
    /// Parse and print (what `pretty` needs).
    Print,
    /// Index, and the pretty line map without the printed text (what the
    /// analyses need: their facts carry pretty line numbers, never code).
    /// `printed.code` is then empty.
    Lines,
    /// [`Depth::Lines`], but the line map is made at once only for the
    /// modules whose source the test accepts, and for any other module
    /// the first time one of its pretty lines is asked for (by parsing it
    /// again). The analyses' facts ask for pretty lines in about half of a
    /// code-split build's bytes (the modules that read flags, and a few
    /// more), and the line maps were a seventh of a cold run: the test
    /// guesses which modules those are, and a wrong guess costs time,
    /// never a different line.
    LinesWhere(fn(&str) -> bool),
    /// Index, and keep the printed text (what `grep` shows).
    Index,
    /// Also record function shapes (what `diff` needs).
    Shapes,
}

impl IndexedModule {
    /// A module printed and not indexed (what [`Depth::Print`] builds).
    fn printed_only(
        m: &crate::bun::Module,
        file: swc_common::sync::Lrc<swc_common::SourceFile>,
        printed: Printed,
        goal: Goal,
    ) -> IndexedModule {
        IndexedModule {
            graph_index: m.index,
            name: m.name.to_string(),
            file,
            index: ModuleIndex::default(),
            printed,
            shapes: None,
            goal,
            lazy_lines: None,
        }
    }

    pub fn source(&self) -> &str {
        &self.file.src
    }

    /// Raw (line, col) of a byte offset.
    pub fn raw_pos(&self, offset: u32) -> (u32, u32) {
        self.printed.map.raw.locate(offset)
    }

    /// Pretty line of a byte offset.
    pub fn pretty_line(&self, offset: u32) -> u32 {
        self.line_map().pretty_line_of(offset).unwrap_or(1)
    }

    /// Whether the pretty line map is made already (asking for a pretty
    /// line of this module costs nothing more).
    pub fn has_line_map(&self) -> bool {
        self.lazy_lines.as_ref().is_none_or(|l| l.get().is_some())
    }

    /// The pretty line map: the one built with the index, or (a module
    /// [`Depth::LinesWhere`] left without one) one made now from the
    /// module parsed again with its comments, exactly as [`Depth::Lines`]
    /// makes it. The module parsed before, so it parses again; should it
    /// not, every offset answers line 1 rather than fail a view.
    pub fn line_map(&self) -> &LineMap {
        let Some(lazy) = &self.lazy_lines else {
            return &self.printed.map;
        };
        lazy.get_or_init(|| {
            // Parsed, mapped and freed on a stack as deep as parsing needs
            // (freeing recurses once per AST level too).
            let made = super::depth::with_stack(|| {
                parse::parse(&self.name, self.file.src.to_string(), self.goal)
                    .and_then(|(parsed, comments)| print::line_map(&parsed, &comments))
            });
            match made {
                Ok(p) => p.map,
                Err(_) => self.printed.map.clone(),
            }
        })
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
    /// The texts the build ships as modules of their own, by name.
    pub texts: EmbeddedTexts,
    pub timings: Timings,
    /// Lookup tables over `modules`, built on first use. The analyses ask
    /// "which module is called X" and "which modules define a function
    /// named Y" hundreds of thousands of times on a 4,000-chunk build; a
    /// scan of every module per question was a quarter of a cold run.
    lookups: OnceLock<Lookups>,
}

#[derive(Default)]
struct Lookups {
    /// Module name → position in `modules` (the first, should two share a name).
    module: HashMap<String, usize>,
    /// Function name → the modules defining a function of that name, in
    /// module order.
    defining: HashMap<String, Vec<usize>>,
    /// Per module: local name → its first import binding that name.
    import_of: Vec<HashMap<String, usize>>,
    /// Per module: exported name → its first ESM export of that name.
    export_of: Vec<HashMap<String, usize>>,
}

/// Texts a build ships as files of their own and reads by path at run
/// time (`load("/$bunfs/root/SKILL-x.md")`, or a `.md.zst` path handed to
/// a reader that inflates it): skill bodies, reference documents, agent
/// templates. A code-split build moved them out of its JavaScript, so the
/// surface finds them only if a call naming one is read as its text.
#[derive(Default)]
pub struct EmbeddedTexts {
    /// (module name, text), sorted by name.
    by_name: Vec<(String, String)>,
    /// The names' first bytes and lengths: every string literal of a build
    /// is asked whether it names a text, and almost none does.
    first_bytes: [u64; 4],
    lengths: (usize, usize),
}

/// A text module larger than this is not read as a text: the largest real
/// one (a bundled skill's reference document) is about 0.3 MB.
const MAX_EMBEDDED_TEXT: usize = 4 << 20;

impl EmbeddedTexts {
    /// The text modules of `graph` that `keep` accepts: a `text` loader's,
    /// or a `file` loader's holding UTF-8 text (most are zstd frames,
    /// inflated within `budget`). One that cannot be read (a frame past
    /// the budget, bytes that are not UTF-8) is left out: it costs a text,
    /// not the analysis (it is among `skipped` already, as not JavaScript).
    fn read(
        graph: &BunGraph,
        budget: &Budget,
        keep: impl Fn(&crate::bun::Module) -> bool,
    ) -> EmbeddedTexts {
        let mut by_name = Vec::new();
        for m in graph.modules.iter().filter(|m| keep(m)) {
            if m.is_javascript() || !matches!(m.loader, "text" | "file") {
                continue;
            }
            let Ok(bytes) = graph.decoded(m, budget) else {
                continue;
            };
            if bytes.len() > MAX_EMBEDDED_TEXT || bytes.contains(&0) {
                continue;
            }
            if let Ok(text) = std::str::from_utf8(&bytes) {
                // A Windows build ships its files with CRLF line endings
                // where every other build has LF; its JavaScript literals
                // are the same as theirs. Read as LF, the same text is the
                // same prompt on every platform.
                let text = if text.contains("\r\n") {
                    text.replace("\r\n", "\n")
                } else {
                    text.to_string()
                };
                by_name.push((m.name.to_string(), text));
            }
        }
        by_name.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        by_name.dedup_by(|a, b| a.0 == b.0);
        let mut first_bytes = [0u64; 4];
        let mut lengths = (usize::MAX, 0);
        for (name, _) in &by_name {
            if let Some(&b) = name.as_bytes().first() {
                first_bytes[(b >> 6) as usize] |= 1 << (b & 63);
            }
            lengths = (lengths.0.min(name.len()), lengths.1.max(name.len()));
        }
        EmbeddedTexts {
            by_name,
            first_bytes,
            lengths,
        }
    }

    /// The text of the module named `name` exactly.
    pub fn get(&self, name: &str) -> Option<&str> {
        let first = *name.as_bytes().first()?;
        if self.first_bytes[(first >> 6) as usize] & (1 << (first & 63)) == 0
            || name.len() < self.lengths.0
            || name.len() > self.lengths.1
        {
            return None;
        }
        let i = self
            .by_name
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()?;
        Some(&self.by_name[i].1)
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// Modules at least this large are indexed on a thread of their own while
/// they print; smaller ones are indexed and printed in turn (a 20 MB
/// single bundle keeps both cores busy this way, 4,000 chunks of a
/// code-split build keep them busy by themselves).
const INDEX_BESIDE_BYTES: usize = 1 << 20;

/// Decode, parse, index and print one module, as far as `depth` asks.
fn build_module(
    graph: &BunGraph,
    budget: &Budget,
    m: &crate::bun::Module,
    depth: Depth,
) -> Result<(IndexedModule, Timings), JsError> {
    let mut t = Timings::default();
    let t0 = Instant::now();
    let bytes = graph
        .decoded(m, budget)
        .map_err(|e| JsError::NotText(e.to_string()))?;
    let mut src = module_text(&bytes);
    t.decode = t0.elapsed();
    let goal = if m.format == ModuleFormat::Esm {
        Goal::Module
    } else {
        Goal::Script
    };
    if matches!(depth, Depth::Print) {
        // `pretty` of a large script: parsed and printed
        // piece by piece when it can be (bounded memory).
        match super::pieces::print_in_pieces(m.name, src, goal) {
            super::pieces::Pieces::Printed {
                file,
                printed,
                parse,
                print,
            } => {
                t.parse = parse;
                t.print = print;
                return Ok((IndexedModule::printed_only(m, file, printed, goal), t));
            }
            super::pieces::Pieces::Whole(s) => src = s,
        }
    }
    let t1 = Instant::now();
    // Without a line map to make now, the comments are not
    // needed (they only move printed lines).
    let lines_now = match depth {
        Depth::LinesWhere(wants) => wants(&src),
        _ => true,
    };
    // Small modules are indexed at once, by a walk that
    // measures the AST's depth as it goes (the separate
    // measuring walk was 7% of a cold run); a large one is
    // measured first, then indexed beside its printing.
    let small = src.len() < INDEX_BESIDE_BYTES && !matches!(depth, Depth::Print);
    let (mut parsed, comments, early) = if small {
        let un = parse::parse_unmeasured(m.name, src, goal, lines_now)?;
        t.parse = t1.elapsed();
        let t2 = Instant::now();
        let MeasuredModule {
            index,
            parsed,
            comments,
        } = ModuleIndex::build_measured(un)?;
        t.index = t2.elapsed();
        (parsed, comments, Some(index))
    } else {
        let (parsed, comments) = if lines_now {
            parse::parse(m.name, src, goal)?
        } else {
            (parse::parse_bare(m.name, src, goal)?, Default::default())
        };
        t.parse = t1.elapsed();
        (parsed, comments, None)
    };
    if matches!(depth, Depth::Print) {
        // Nothing else reads the AST meanwhile: a big
        // module can be printed on both cores.
        let t3 = Instant::now();
        let printed = print::print_split(&mut parsed, &comments);
        t.print = t3.elapsed();
        let goal = parsed.goal;
        return Ok((
            IndexedModule::printed_only(m, release(parsed), printed?, goal),
            t,
        ));
    }
    index_and_print(m, parsed, comments, early, depth, lines_now, t)
}

/// Index a parsed module (unless `early` is its index already), with its
/// shapes when `depth` asks, and print it or make its line map (none when
/// `lines_now` is false): a large module indexed on a second thread while
/// this one prints.
fn index_and_print(
    m: &crate::bun::Module,
    parsed: Parsed,
    comments: SingleThreadedComments,
    early: Option<ModuleIndex>,
    depth: Depth,
    lines_now: bool,
    mut t: Timings,
) -> Result<(IndexedModule, Timings), JsError> {
    let program = &parsed.program;
    let file = &parsed.file;
    let shapes_of =
        move || matches!(depth, Depth::Shapes).then(|| Shapes::build(program, file.start_pos.0));
    let index_it = move || {
        let t2 = Instant::now();
        let i = ModuleIndex::build_program(program, file.start_pos.0);
        let shapes = shapes_of();
        (i, shapes, t2.elapsed())
    };
    let print_it = || {
        let t3 = Instant::now();
        let printed = if !lines_now {
            Ok(Printed {
                code: String::new(),
                map: LineMap::raw_only(parsed.file.src.as_bytes()),
            })
        } else if matches!(depth, Depth::Lines | Depth::LinesWhere(_)) {
            print::line_map(&parsed, &comments)
        } else {
            print::print(&parsed, &comments)
        };
        (printed, t3.elapsed())
    };
    let (index, shapes, printed) = if let Some(index) = early {
        // Small modules: one step after the other on this
        // worker (the other core has modules of its own); a
        // thread per module cost more than it saved.
        let t2 = Instant::now();
        let shapes = shapes_of();
        t.index += t2.elapsed();
        let (printed, print_time) = print_it();
        t.print = print_time;
        (index, shapes, printed)
    } else {
        // Index on a second thread while this one prints:
        // the big single-bundle builds then use both cores too.
        std::thread::scope(|s| {
            let h = parse::spawn_big(s, "cc-teardown-index", index_it);
            let (printed, print_time) = print_it();
            let (index, shapes, index_time) = h.join();
            t.index = index_time;
            t.print = print_time;
            (index, shapes, printed)
        })
    };
    let goal = parsed.goal;
    Ok((
        IndexedModule {
            graph_index: m.index,
            name: m.name.to_string(),
            file: release(parsed),
            index,
            printed: printed?,
            shapes,
            goal,
            lazy_lines: (!lines_now).then(OnceLock::new),
        },
        t,
    ))
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
                .map(|m| build_module(graph, budget, m, depth))
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
        // Read after the JavaScript, so that a build whose texts spend
        // the decoding budget loses texts, not modules.
        let texts = if matches!(depth, Depth::Print) {
            EmbeddedTexts::default()
        } else {
            EmbeddedTexts::read(graph, budget, &keep)
        };
        timings.wall = start.elapsed();
        Ok(CodeIndex {
            modules,
            skipped,
            texts,
            timings,
            lookups: OnceLock::new(),
        })
    }

    fn lookups(&self) -> &Lookups {
        self.lookups.get_or_init(|| {
            let mut l = Lookups::default();
            for (i, m) in self.modules.iter().enumerate() {
                l.module.entry(m.name.clone()).or_insert(i);
                for name in m.index.by_name.keys() {
                    l.defining.entry(name.clone()).or_default().push(i);
                }
                let mut imports = HashMap::new();
                for (k, imp) in m.index.imports.iter().enumerate() {
                    imports.entry(imp.local.clone()).or_insert(k);
                }
                l.import_of.push(imports);
                let mut exports = HashMap::new();
                for (k, e) in m.index.esm_exports.iter().enumerate() {
                    exports.entry(e.original.clone()).or_insert(k);
                }
                l.export_of.push(exports);
            }
            l
        })
    }

    /// Module `m`'s first import binding `local`.
    pub fn import_named(&self, m: usize, local: &str) -> Option<&ImportEntry> {
        let k = *self.lookups().import_of.get(m)?.get(local)?;
        Some(&self.modules[m].index.imports[k])
    }

    /// Module `m`'s first ESM export called `exported`.
    pub fn export_named(&self, m: usize, exported: &str) -> Option<&ExportEntry> {
        let k = *self.lookups().export_of.get(m)?.get(exported)?;
        Some(&self.modules[m].index.esm_exports[k])
    }

    /// Position in `modules` of the module called `name`.
    pub fn module_position(&self, name: &str) -> Option<usize> {
        self.lookups().module.get(name).copied()
    }

    pub fn module(&self, name: &str) -> Option<&IndexedModule> {
        self.module_position(name).map(|i| &self.modules[i])
    }

    /// The modules that define a function called `name`, in module order.
    pub fn modules_defining(&self, name: &str) -> &[usize] {
        self.lookups()
            .defining
            .get(name)
            .map_or(&[], |v| v.as_slice())
    }

    /// Where an imported name of module `m` is defined: the exporting
    /// module's index and its local name for the export.
    pub fn follow_import(&self, m: usize, name: &str) -> Option<(usize, &str)> {
        let module = &self.modules[m];
        let imp = self.import_named(m, name)?;
        let t = self.resolve_import_position(module, &imp.source)?;
        let local = &self.export_named(t, &imp.imported)?.local;
        Some((t, local.as_str()))
    }

    /// Where an imported name of module `m` comes from, export after
    /// export: the (module, local name) of each chunk on the way, through
    /// `hops` of them at most (a chunk may export again what it imports).
    pub fn import_chain<'s>(
        &'s self,
        m: usize,
        name: &'s str,
        hops: usize,
    ) -> impl Iterator<Item = (usize, &'s str)> + 's {
        std::iter::successors(self.follow_import(m, name), move |&(t, local)| {
            self.follow_import(t, local)
        })
        .take(hops)
    }

    /// The function `name` denotes in module `m`. An import binds the name
    /// for the whole module, so it wins over any same-named inner function
    /// (a method, a callback).
    pub fn resolve_function(
        &self,
        m: usize,
        name: &str,
    ) -> Option<(usize, crate::js::index::FnId)> {
        if self.import_named(m, name).is_some() {
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
        self.resolve_import_position(from, source)
            .map(|i| &self.modules[i])
    }

    /// Position in `modules` of the module an import source names.
    pub fn resolve_import_position(&self, from: &IndexedModule, source: &str) -> Option<usize> {
        if let Some(m) = self.module_position(source) {
            return Some(m);
        }
        let rel = source.strip_prefix("./")?;
        let dir = from.name.rsplit_once('/').map_or("", |(d, _)| d);
        self.module_position(&format!("{dir}/{rel}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Comments, nesting and multi-line literals move pretty lines; a map
    /// made on demand must answer every offset as the one made at once.
    const SRC: &str = "/* lead */ var a = 1, b = { x: 1, y: [2, 3] };\n\
        function f(e, t) { if (e) { return `multi\nline` + t; } // tail\n return g(e, function () { return 1; }); }\n\
        class K { m() { return f(1, 2); } }\nexport { f as named };\n";

    #[test]
    fn shipped_texts_are_read_within_the_budget_and_only_when_they_are_text() {
        // A frame that would pass the decoding budget, bytes that are not
        // UTF-8 and a binary asset are left out; the JavaScript is still
        // indexed, and a `pretty` (Depth::Print) reads no texts at all.
        let bomb = zstd::encode_all(&vec![b'a'; 2 << 20][..], 3).unwrap();
        let small = zstd::encode_all(&b"# Notes\n\nRead me."[..], 3).unwrap();
        let mut g = BunGraph::single_js("/$bunfs/root/chunk-a.js", SRC.as_bytes());
        g.modules[0].format = ModuleFormat::Esm;
        let files: [(&str, &[u8], &'static str); 5] = [
            ("/$bunfs/root/big-1.md.zst", &bomb, "file"),
            ("/$bunfs/root/notes-2.md.zst", &small, "file"),
            ("/$bunfs/root/plain-3.md", b"plain\r\ntext\r\n", "text"),
            ("/$bunfs/root/latin-4.txt", b"caf\xe9", "text"),
            ("/$bunfs/root/lib-5.node", b"\x7fELF\0\0", "napi"),
        ];
        for (name, contents, loader) in files {
            g.push_like_first(name, contents, loader);
        }
        let ci =
            CodeIndex::build_filtered(&g, &Budget::new(1 << 20), |_| true, Depth::Lines).unwrap();
        assert_eq!(ci.modules.len(), 1);
        assert_eq!(ci.texts.len(), 2);
        assert_eq!(
            ci.texts.get("/$bunfs/root/notes-2.md.zst"),
            Some("# Notes\n\nRead me.")
        );
        // Line endings read as LF (a Windows build ships CRLF).
        assert_eq!(
            ci.texts.get("/$bunfs/root/plain-3.md"),
            Some("plain\ntext\n")
        );
        assert_eq!(ci.texts.get("/$bunfs/root/big-1.md.zst"), None);
        assert_eq!(ci.texts.get("/$bunfs/root/latin-4.txt"), None);
        assert_eq!(ci.texts.get("plain-3.md"), None);
        let printed =
            CodeIndex::build_filtered(&g, &Budget::new(1 << 20), |_| true, Depth::Print).unwrap();
        assert!(printed.texts.is_empty());
    }

    fn build(depth: Depth) -> CodeIndex {
        let mut g = BunGraph::single_js("/$bunfs/root/chunk-a.js", SRC.as_bytes());
        g.modules[0].format = ModuleFormat::Esm;
        CodeIndex::build_filtered(&g, &Budget::new(1 << 20), |_| true, depth).unwrap()
    }

    #[test]
    fn a_line_map_made_on_demand_answers_as_one_made_at_once() {
        let eager = build(Depth::Lines);
        let lazy = build(Depth::LinesWhere(|_| false));
        let accepted = build(Depth::LinesWhere(|_| true));
        let (e, l, a) = (&eager.modules[0], &lazy.modules[0], &accepted.modules[0]);
        assert!(e.has_line_map() && a.has_line_map());
        assert!(!l.has_line_map(), "a refused module has no map until asked");
        assert_eq!(l.index.functions.len(), e.index.functions.len());
        for offset in 0..SRC.len() as u32 {
            assert_eq!(l.raw_pos(offset), e.raw_pos(offset), "raw at {offset}");
            assert_eq!(
                l.pretty_line(offset),
                e.pretty_line(offset),
                "pretty at {offset}"
            );
            assert_eq!(
                a.pretty_line(offset),
                e.pretty_line(offset),
                "pretty at {offset}"
            );
        }
        assert!(l.has_line_map(), "made once, on first use");
        assert!(
            e.pretty_line(SRC.len() as u32 - 2) > 5,
            "the fixture spreads over pretty lines"
        );
    }
}
