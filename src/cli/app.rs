//! The application context every command runs in: the global options, the
//! debug settings (read once), the facts store (opened once, on first use)
//! and the way out ([`Output`]). A command parses its arguments and makes
//! one call through it.

use super::Global;
use super::format::OutputArgs;
use crate::analysis::analysed::{Analysed, Facts, FactsCache, Part};
use crate::analysis::surface::Surface;
use crate::bun::digest::bundle_digest;
use crate::js::code::{CodeIndex, Depth};
use crate::report::emit::{Format, Output, View};
use crate::source::Opened;
use crate::source::build::Build;
use crate::store::{BuildRow, FactsStore, Ownership};
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// `CC_TEARDOWN_DEBUG`, a comma-separated list, read once per process.
#[derive(Clone, Copy, Debug, Default)]
pub struct Debug {
    /// Say on stderr where facts came from (tests check a second run does
    /// not parse).
    pub store: bool,
    /// Print the analysis stages' times.
    pub timings: bool,
    /// Print the allocator's purge setting.
    pub alloc: bool,
}

impl Debug {
    pub fn from_env() -> Debug {
        let v = std::env::var("CC_TEARDOWN_DEBUG").unwrap_or_default();
        let has = |x: &str| v.split(',').any(|w| w == x);
        Debug {
            store: has("store"),
            timings: has("timings"),
            alloc: has("alloc"),
        }
    }
}

/// One run of the command line.
pub struct App {
    pub g: Global,
    pub debug: Debug,
    /// The facts store: None with `--no-cache` or when the cache's own store
    /// cannot be opened (it only saves work).
    store: OnceLock<Option<FactsStore>>,
    /// Whether the answer is JSON (`--json` or `--format json`): no
    /// spinners then, whatever stderr is.
    json: AtomicBool,
}

impl App {
    pub fn new(g: Global, debug: Debug) -> App {
        let json = AtomicBool::new(g.json);
        App {
            g,
            debug,
            store: OnceLock::new(),
            json,
        }
    }

    /// Whether the answer is JSON.
    pub fn json(&self) -> bool {
        self.json.load(Ordering::Relaxed)
    }

    /// The format this command's answer takes: `--json` wins, else
    /// `--format`, else `default`.
    pub fn format(&self, o: &OutputArgs, default: Format) -> Format {
        if self.g.json {
            Format::Json
        } else {
            o.format.unwrap_or(default)
        }
    }

    /// Where and how this command's answer goes ([`App::format`]).
    pub fn output(&self, o: &OutputArgs, default: Format) -> Output {
        let format = self.format(o, default);
        if format == Format::Json {
            self.json.store(true, Ordering::Relaxed);
        }
        Output {
            format,
            file: o.output.clone(),
            color: self.g.color,
            pager: !self.g.no_pager,
            quiet: self.g.quiet,
            receipt_json: self.json(),
        }
    }

    /// The answer of a command that has only `--json` (no `--format`).
    pub fn stdout(&self) -> Output {
        self.output(&OutputArgs::default(), Format::Text)
    }

    /// Text output into `file` (else stdout), as `-o` writes.
    pub fn to_file(&self, file: Option<std::path::PathBuf>) -> Output {
        self.output(
            &OutputArgs {
                format: None,
                output: file,
            },
            Format::Text,
        )
    }

    /// Write `view` as asked by `o` (default text); exit code 0.
    pub fn emit(&self, o: &OutputArgs, view: &impl View) -> anyhow::Result<i32> {
        self.output(o, Format::Text).emit(view)?;
        Ok(0)
    }

    pub fn open(&self, target: &str) -> anyhow::Result<Opened> {
        self.g.open(target)
    }

    pub fn build<'a>(&self, opened: &'a Opened) -> anyhow::Result<Build<'a>> {
        self.g.build(opened)
    }

    /// Whether progress may be drawn on stderr.
    pub fn progress(&self) -> bool {
        !self.g.quiet && !self.json() && std::io::stderr().is_terminal()
    }

    /// A spinner with `msg` on a terminal (none with --quiet or JSON).
    pub fn spinner(&self, msg: String) -> Option<indicatif::ProgressBar> {
        self.progress().then(|| {
            let s = indicatif::ProgressBar::new_spinner();
            s.set_message(msg);
            s.enable_steady_tick(std::time::Duration::from_millis(120));
            s
        })
    }

    /// Run `work` with a spinner ("VERB N JavaScript module(s)…").
    fn with_spinner<R>(
        &self,
        graph: &crate::bun::BunGraph,
        verb: &str,
        work: impl FnOnce() -> R,
    ) -> R {
        let js = graph.modules.iter().filter(|m| m.is_javascript()).count();
        let s = self.spinner(format!("{verb} {js} JavaScript module(s)…"));
        let r = work();
        if let Some(s) = s {
            s.finish_and_clear();
        }
        r
    }

    pub fn index(&self, build: &Build) -> anyhow::Result<CodeIndex> {
        self.index_to(build, Depth::Index)
    }

    /// The code index built to `depth`, with a spinner on a terminal.
    pub fn index_to(&self, build: &Build, depth: Depth) -> anyhow::Result<CodeIndex> {
        let ci = self.with_spinner(&build.graph, "parsing and indexing", || {
            crate::js::parse::with_big_stack(|| {
                CodeIndex::build_filtered(&build.graph, self.g.budget(), |_| true, depth)
            })
        });
        Ok(ci?)
    }

    /// The facts store, opened on first use. A store the user named that
    /// cannot be used is an error (they asked for that file); the cache's
    /// own store that cannot be opened is a note, and the command goes on
    /// without it.
    pub fn store(&self) -> anyhow::Result<Option<&FactsStore>> {
        if self.g.no_cache {
            return Ok(None);
        }
        if let Some(s) = self.store.get() {
            return Ok(s.as_ref());
        }
        let (path, ownership) = self.g.store_location();
        // This machine's key lives in the cache folder, whichever store is
        // used: only rows sealed with it are believed about a build (a
        // store named with --store may be someone else's). Without it (a
        // cache folder that cannot be written) facts are computed.
        let key = match crate::store::key::MachineKey::in_folder(&self.g.cache_folder()) {
            Ok(k) => Some(k),
            Err(e) => {
                if !self.g.quiet {
                    eprintln!("note: {e}; stored facts are not used");
                }
                None
            }
        };
        let opened = match FactsStore::open_keyed(&path, ownership, key) {
            Ok(s) => Some(s),
            Err(e) if ownership == Ownership::Named => return Err(e.into()),
            Err(e) => {
                if !self.g.quiet {
                    eprintln!("note: facts store unavailable, analysing without it: {e}");
                }
                None
            }
        };
        Ok(self.store.get_or_init(|| opened).as_ref())
    }

    /// Open a build's analysis: its bundle digest (remembered per file, so
    /// a build seen before is not hashed again) and the facts store behind
    /// it.
    pub fn analyse<'b>(&'b self, build: &'b Build<'b>) -> anyhow::Result<Analysed<'b>> {
        let store = self.store()?;
        let arch = self.g.arch.map_or("", |a| a.as_str());
        let file = build.opened.identity.as_ref();
        let known = store.zip(file).and_then(|(s, f)| s.digest_for(f, arch));
        let digest = match known {
            Some(d) => d,
            None => {
                let (digest, js_modules) = bundle_digest(&build.graph, self.g.budget())?;
                if let Some(s) = store {
                    let row = build_row(build, js_modules);
                    s.remember(&digest, &row, file.map(|f| (f, arch)));
                }
                digest
            }
        };
        Ok(Analysed::new(
            &build.graph,
            self.g.budget(),
            digest,
            store.map(|s| s as &dyn FactsCache),
        )
        .reading(build.opened))
    }

    /// The facts of an analysed build, with a spinner on a terminal while
    /// they are computed (none when they come from the store).
    pub fn facts<'a>(&self, an: &'a Analysed) -> anyhow::Result<&'a Facts> {
        self.part(an, Part::Whole, |an| an.facts())
    }

    /// The facts but their surface (which is empty): what `workflows`,
    /// `flags`, `gates` and `locate` show, read without the surface.
    pub fn core<'a>(&self, an: &'a Analysed) -> anyhow::Result<&'a Facts> {
        self.part(an, Part::Core, |an| an.core())
    }

    /// The surface alone.
    pub fn surface<'a>(&self, an: &'a Analysed) -> anyhow::Result<&'a Surface> {
        self.part(an, Part::Surface, |an| an.surface())
    }

    /// The surface, whose prompts' texts may be empty: for a view that
    /// shows none.
    pub fn outline<'a>(&self, an: &'a Analysed) -> anyhow::Result<&'a Surface> {
        self.part(an, Part::Outline, |an| an.outline())
    }

    /// A part of the facts, read from the store or computed (with the
    /// spinner and the debug lines).
    fn part<'a, T: ?Sized>(
        &self,
        an: &'a Analysed,
        part: Part,
        get: impl FnOnce(&'a Analysed) -> Result<&'a T, crate::js::JsError>,
    ) -> anyhow::Result<&'a T> {
        if an.cached(part) {
            if self.debug.store {
                eprintln!(
                    "debug: facts ({part:?}) for {} read from the store",
                    an.digest()
                );
            }
            return Ok(get(an)?);
        }
        if self.debug.store {
            eprintln!("debug: facts for {} computed", an.digest());
        }
        let got = self.with_spinner(an.graph(), "parsing and analysing", || get(an));
        if self.debug.timings {
            for (stage, d) in an.timings() {
                eprintln!("debug: {stage:<14} {:>8.1} ms", d.as_secs_f64() * 1000.0);
            }
        }
        Ok(got?)
    }

    /// The function diff between two builds (the `diff` engine, side a first).
    pub fn function_diff(
        &self,
        a: &Build,
        b: &Build,
    ) -> anyhow::Result<crate::analysis::diff::functions::FunctionDiff> {
        use crate::analysis::diff::{self, Section};
        use anyhow::Context;
        let sections = [Section::Functions];
        let sa = self.analyse(a)?.with_shapes();
        let sb = self.analyse(b)?.with_shapes();
        let (ra, rb) = rayon::join(
            || diff::prepare(&sa, &sections),
            || diff::prepare(&sb, &sections),
        );
        ra.with_context(|| a.opened.label.clone())?;
        rb.with_context(|| b.opened.label.clone())?;
        Ok(diff::compare(&sa, &sb, &sections)?
            .functions
            .unwrap_or_default())
    }
}

/// What the store records of a build beside its facts.
pub fn build_row(build: &Build, js_modules: usize) -> BuildRow {
    let graph = &build.graph;
    BuildRow {
        version: build.version().best().map(str::to_string),
        platform: build.opened.platform.clone(),
        container: Some(format!("{:?}", build.located.info.format).to_lowercase()),
        bun_layout: graph.layout.map(|l| l.epoch.to_string()),
        modules: Some(graph.modules.len() as u64),
        js_modules: Some(js_modules as u64),
        code_split: Some(graph.is_code_split()),
        bundle_bytes: Some(
            graph
                .modules
                .iter()
                .filter(|m| m.is_javascript())
                .map(|m| m.contents.len() as u64)
                .sum(),
        ),
    }
}
