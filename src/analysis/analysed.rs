//! One build's analysis, owned in one place: the code index, recovered
//! symbols and the facts (roles → workflows → gates and flags), each
//! computed on first use, once, and shared by every view. The facts come
//! from a [`FactsCache`] when it holds them for this bundle, and go into it
//! when they had to be computed — so a second command on the same build
//! parses nothing.

use crate::analysis::diff::code::CodeFacts;
use crate::analysis::flags::{self, FlagInventory};
use crate::analysis::gates::{self, Gate};
use crate::analysis::roles::{Locator, Roles};
use crate::analysis::surface::{self, Surface};
use crate::analysis::workflows::{self, WorkflowScript};
use crate::bun::{Budget, BunGraph};
use crate::js::JsError;
use crate::js::code::{CodeIndex, Depth};
use crate::js::symbols::{self, Symbol};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What the stored facts depend on: the analysis code itself. The build
/// script fingerprints the source of the layers that produce facts (bun,
/// js, analysis), so any change to them makes older stored facts invisible
/// instead of wrong. The leading number is the facts' format.
pub const ANALYSIS_VERSION: &str = concat!("1-", env!("CC_TEARDOWN_ANALYSIS_FINGERPRINT"));

/// Everything the analyses establish about one bundle. Positions inside
/// this run's code index (module numbers, function ids) are not part of
/// it: facts read back from a store hold only what the views show.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Facts {
    pub roles: Roles,
    pub workflows: Vec<WorkflowScript>,
    /// Each reconstructed workflow script's exact text, by workflow name
    /// (kept apart: a workflow's JSON view carries its hash, not its text).
    pub scripts: BTreeMap<String, String>,
    pub flags: FlagInventory,
    /// Every gate, flag-decided functions included, without verdicts
    /// (those depend on a user's cached values, not on the build).
    pub gates: Vec<Gate>,
    /// Tools, prompts, environment variables, settings, commands, models.
    #[serde(default)]
    pub surface: Surface,
}

impl Facts {
    /// Analyse an indexed build, recording the time each stage took: roles
    /// first, the workflows they lead to, then gates and flags side by side
    /// on both cores. The surface
    /// needs neither symbols nor roles, so it is found while `syms`
    /// recovers the names and the roles, workflows, gates and flags follow
    /// them: the serial stages no longer leave a core idle.
    pub fn compute_timed<'s, E: Send>(
        ci: &CodeIndex,
        syms: impl FnOnce() -> Result<&'s [Symbol], E> + Send,
        times: &mut Vec<(&'static str, Duration)>,
    ) -> Result<Facts, E> {
        super::analyses_start();
        let t = Instant::now();
        let ((surface, ts), rest) = rayon::join(
            || {
                let t = Instant::now();
                (surface::extract(ci), t.elapsed())
            },
            || -> Result<_, E> {
                let mut times = Vec::new();
                let syms = syms()?;
                let t = Instant::now();
                let originals = symbols::original_names(syms);
                let locator = Locator::new(ci, syms);
                let roles = locator.locate();
                times.push(("roles", t.elapsed()));
                let t = Instant::now();
                let workflows = workflows::bundled(ci, &roles, &locator);
                times.push(("workflows", t.elapsed()));
                let ((gates, tg), (flags, tf)) = rayon::join(
                    || {
                        let t = Instant::now();
                        (
                            gates::discover(ci, &roles, &workflows, &originals),
                            t.elapsed(),
                        )
                    },
                    || {
                        let t = Instant::now();
                        (flags::inventory(ci, &originals), t.elapsed())
                    },
                );
                times.push(("gates (cpu)", tg));
                times.push(("flags (cpu)", tf));
                Ok((roles, workflows, gates, flags, times))
            },
        );
        let (roles, workflows, gates, flags, rest_times) = rest?;
        times.extend(rest_times);
        times.push(("surface (cpu)", ts));
        times.push(("analyses", t.elapsed()));
        let scripts = workflows
            .iter()
            .filter_map(|w| w.text.clone().map(|t| (w.name.clone(), t)))
            .collect();
        Ok(Facts {
            roles,
            workflows,
            scripts,
            flags,
            gates,
            surface,
        })
    }

    /// The facts as a store gives them back. Serde keeps less than the
    /// types can hold (a flag default that evaluated to `null` reads back
    /// as no default, skipped fields read back as zero), so computed facts
    /// go through the same round trip: a command answers the same whether
    /// its facts were computed or loaded, and a diff of one stored and one
    /// fresh build compares like with like.
    pub fn as_stored(self) -> Facts {
        match serde_json::to_vec(&self).map(|j| serde_json::from_slice::<Facts>(&j)) {
            Ok(Ok(f)) => f.with_texts(),
            _ => self,
        }
    }

    /// The facts as a store keeps them, in four parts of JSON: everything
    /// but the surface, then the surface's three parts
    /// ([`Surface::stored_parts`]). Kept apart so that a command reads only
    /// the part it shows: the surface is four fifths of a code-split
    /// build's facts (9.7 of 11.2 MB on 2.1.332), and `workflows`,
    /// `flags` or `gates` decoding it too put their warm runs over budget.
    pub fn stored_parts(&self) -> serde_json::Result<[Vec<u8>; 4]> {
        /// [`Facts`] without its surface; read back as a `Facts` whose
        /// surface is empty (`#[serde(default)]`).
        #[derive(Serialize)]
        struct Core<'a> {
            roles: &'a Roles,
            workflows: &'a [WorkflowScript],
            scripts: &'a BTreeMap<String, String>,
            flags: &'a FlagInventory,
            gates: &'a [Gate],
        }
        // Every field named: one added to `Facts` fails to compile here
        // rather than going unstored.
        let Facts {
            roles,
            workflows,
            scripts,
            flags,
            gates,
            surface,
        } = self;
        let core = Core {
            roles,
            workflows,
            scripts,
            flags,
            gates,
        };
        let (core, surface) = rayon::join(|| serde_json::to_vec(&core), || surface.stored_parts());
        let surface::StoredParts {
            rest,
            prompts,
            texts,
        } = surface?;
        Ok([core?, rest, prompts, texts])
    }

    /// Facts read back from their stored parts (see [`Facts::stored_parts`]).
    pub fn from_parts(
        core: &[u8],
        rest: &[u8],
        prompts: &[u8],
        texts: &[u8],
    ) -> serde_json::Result<Facts> {
        let (core, surface) = rayon::join(
            || serde_json::from_slice::<Facts>(core),
            || Surface::from_parts(rest, prompts, Some(texts)),
        );
        Ok(Facts {
            surface: surface?,
            ..core?
        }
        .with_texts())
    }

    /// Put the script texts back into the workflows (after a load).
    fn with_texts(mut self) -> Facts {
        for w in &mut self.workflows {
            if w.text.is_none() {
                w.text = self.scripts.get(&w.name).cloned();
            }
        }
        self
    }
}

/// Where facts are kept between runs, keyed by the bundle digest
/// (docs/guide/hashing.md) and [`ANALYSIS_VERSION`]. A cache never fails a run:
/// anything it cannot read is a miss, anything it cannot write is dropped.
pub trait FactsCache: Sync {
    fn load(&self, digest: &str) -> Option<Facts>;
    fn save(&self, digest: &str, facts: &Facts);
    /// The facts without their surface (left empty), for a store that can
    /// read less than the whole.
    fn load_core(&self, digest: &str) -> Option<Facts> {
        self.load(digest)
    }
    /// Only the surface of the facts.
    fn load_surface(&self, digest: &str) -> Option<Surface> {
        self.load(digest).map(|f| f.surface)
    }
    /// The surface without its prompts' texts (each `text` may be empty):
    /// what a view that shows no text needs.
    fn load_outline(&self, digest: &str) -> Option<Surface> {
        self.load_surface(digest)
    }
    /// What a diff reads of the code, kept apart from the facts: only
    /// diffs need it, and it is some twenty times their size.
    fn load_code(&self, _digest: &str) -> Option<CodeFacts> {
        None
    }
    fn save_code(&self, _digest: &str, _code: &CodeFacts) {}
}

/// A part of the facts a command may read alone from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Whole,
    /// Everything but the surface: roles, workflows, flags, gates.
    Core,
    Surface,
    /// The surface without its prompts' texts ([`Analysed::outline`]).
    Outline,
}

/// One build, analysed at most once.
pub struct Analysed<'g> {
    graph: &'g BunGraph<'g>,
    /// The run's budget for decoding modules (`--max-decoded`).
    budget: &'g Budget,
    digest: String,
    cache: Option<&'g dyn FactsCache>,
    depth: Depth,
    index: OnceLock<CodeIndex>,
    symbols: OnceLock<Vec<Symbol>>,
    facts: OnceLock<Facts>,
    /// The facts but their surface, when only they were read from the cache.
    core: OnceLock<Facts>,
    /// The surface alone, when only it was read from the cache.
    surface: OnceLock<Surface>,
    /// The surface without its prompts' texts, when only it was read.
    outline: OnceLock<Surface>,
    /// The facts were computed in this run (none of them is then read
    /// from the cache any more).
    computed: std::sync::atomic::AtomicBool,
    code: OnceLock<CodeFacts>,
    /// How long each stage took in this run (for `CC_TEARDOWN_DEBUG=timings`).
    times: Mutex<Vec<(&'static str, Duration)>>,
    /// Free the code index when dropped (see [`Analysed::last_use`]).
    free_index: bool,
    /// The file the build was read from, whose pages can go once the code
    /// is indexed (see [`Analysed::reading`]).
    file: Option<&'g crate::source::Opened>,
}

impl Drop for Analysed<'_> {
    fn drop(&mut self) {
        if !self.free_index
            && let Some(ci) = self.index.take()
        {
            std::mem::forget(ci);
        }
    }
}

impl<'g> Analysed<'g> {
    /// `digest` is the bundle digest of `graph`; the caller may know it
    /// without hashing (a file it has seen before).
    pub fn new(
        graph: &'g BunGraph<'g>,
        budget: &'g Budget,
        digest: String,
        cache: Option<&'g dyn FactsCache>,
    ) -> Analysed<'g> {
        Analysed {
            graph,
            budget,
            digest,
            cache,
            depth: Depth::LinesWhere(crate::analysis::flags::may_read_flags),
            index: OnceLock::new(),
            symbols: OnceLock::new(),
            facts: OnceLock::new(),
            core: OnceLock::new(),
            surface: OnceLock::new(),
            outline: OnceLock::new(),
            computed: Default::default(),
            code: OnceLock::new(),
            times: Mutex::new(Vec::new()),
            free_index: true,
            file: None,
        }
    }

    /// The build was read from this file: once its code is indexed, the
    /// pages of the file that were read are handed back (the index holds
    /// its own copy of the code; the peak of a code-split build's analysis
    /// is about 1 GB with them).
    pub fn reading(mut self, file: &'g crate::source::Opened) -> Analysed<'g> {
        self.file = Some(file);
        self
    }

    /// This analysis is its process's last use of the build (one command,
    /// then exit): its code index is left to the operating system rather
    /// than freed when it is dropped. Freeing a code-split build's index,
    /// millions of allocations, took a sixth of a second on one core after
    /// the answer was printed. A process that analyses build after build
    /// (`history scan`) must not ask for this.
    pub fn last_use(mut self) -> Analysed<'g> {
        self.free_index = false;
        self
    }

    /// Also record function shapes when the index is built (what function
    /// diffs need).
    pub fn with_shapes(mut self) -> Analysed<'g> {
        self.depth = Depth::Shapes;
        self
    }

    pub fn graph(&self) -> &'g BunGraph<'g> {
        self.graph
    }

    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Whether the facts are (or would be) read from the cache rather than
    /// computed: true once a cached copy was found.
    pub fn facts_cached(&self) -> bool {
        self.cached(Part::Whole)
    }

    /// Whether `part` of the facts is (or would be) read from the cache:
    /// true once it was found there. Reads only that part.
    pub fn cached(&self, part: Part) -> bool {
        if self.facts.get().is_none() {
            let cache = self.cache;
            match part {
                Part::Whole => {
                    if let Some(f) = cache.and_then(|c| c.load(&self.digest)) {
                        let _ = self.facts.set(f.with_texts());
                    }
                }
                Part::Core if self.core.get().is_none() => {
                    if let Some(f) = cache.and_then(|c| c.load_core(&self.digest)) {
                        let _ = self.core.set(f.with_texts());
                    }
                }
                Part::Surface if self.surface.get().is_none() => {
                    if let Some(s) = cache.and_then(|c| c.load_surface(&self.digest)) {
                        let _ = self.surface.set(s);
                    }
                }
                Part::Outline if self.surface.get().is_none() && self.outline.get().is_none() => {
                    if let Some(s) = cache.and_then(|c| c.load_outline(&self.digest)) {
                        let _ = self.outline.set(s);
                    }
                }
                Part::Core | Part::Surface | Part::Outline => {}
            }
        }
        let present = self.facts.get().is_some()
            || match part {
                Part::Whole => false,
                Part::Core => self.core.get().is_some(),
                Part::Surface => self.surface.get().is_some(),
                Part::Outline => self.surface.get().is_some() || self.outline.get().is_some(),
            };
        present && !self.computed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether this run parsed the build (built its code index).
    pub fn parsed(&self) -> bool {
        self.index.get().is_some()
    }

    /// The code index, built on first use.
    pub fn index(&self) -> Result<&CodeIndex, JsError> {
        if let Some(ci) = self.index.get() {
            return Ok(ci);
        }
        let t = Instant::now();
        let ci = crate::js::parse::with_big_stack(|| {
            CodeIndex::build_filtered(self.graph, self.budget, |_| true, self.depth)
        })?;
        self.record("index", t.elapsed());
        if let Some(f) = self.file {
            f.release_pages();
        }
        // CPU time summed over modules, to see where the index's time goes.
        self.record("  decode (cpu)", ci.timings.decode);
        self.record("  parse (cpu)", ci.timings.parse);
        self.record("  index (cpu)", ci.timings.index);
        self.record("  print (cpu)", ci.timings.print);
        Ok(self.index.get_or_init(|| ci))
    }

    /// Names the bundler left behind, recovered on first use.
    pub fn symbols(&self) -> Result<&[Symbol], JsError> {
        if let Some(s) = self.symbols.get() {
            return Ok(s);
        }
        let ci = self.index()?;
        let t = Instant::now();
        // The facts use the names; a symbol's pretty line is the
        // `symbols` command's, which indexes with every line map.
        let s = symbols::recover_names(ci);
        self.record("symbols", t.elapsed());
        Ok(self.symbols.get_or_init(|| s))
    }

    /// The facts: from the cache when it has them, else computed (and then
    /// saved for the next run).
    pub fn facts(&self) -> Result<&Facts, JsError> {
        if self.facts.get().is_none() {
            self.cached(Part::Whole);
        }
        if let Some(f) = self.facts.get() {
            return Ok(f);
        }
        let ci = self.index()?;
        let mut times = Vec::new();
        // On threads with a parser's stack: the analyses parse snippets and
        // walk expressions under `depth::with_stack`, which on rayon's
        // 2 MiB workers mapped and unmapped a fresh 128 MiB stack each time
        // (10,000 times in a cold run of 2.1.332).
        let pool = crate::js::parse::pool()?;
        let facts = pool.install(|| Facts::compute_timed(ci, || self.symbols(), &mut times))?;
        let t = Instant::now();
        let facts = facts.as_stored();
        times.push(("round trip", t.elapsed()));
        let t = Instant::now();
        if let Some(c) = self.cache {
            c.save(&self.digest, &facts);
        }
        times.push(("store", t.elapsed()));
        if let Ok(mut all) = self.times.lock() {
            all.extend(times);
        }
        self.computed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(self.facts.get_or_init(|| facts))
    }

    /// What the code sections of a diff read: from the cache when it has
    /// them (nothing is parsed then), else taken from the index, which must
    /// have been asked for [`Analysed::with_shapes`], and saved.
    pub fn code_facts(&self) -> Result<&CodeFacts, JsError> {
        if let Some(c) = self.code.get() {
            return Ok(c);
        }
        let t = Instant::now();
        if let Some(c) = self.cache.and_then(|c| c.load_code(&self.digest)) {
            self.record("code facts (load)", t.elapsed());
            return Ok(self.code.get_or_init(|| c));
        }
        let (ci, syms) = (self.index()?, self.symbols()?);
        let t = Instant::now();
        let code = CodeFacts::compute(ci, syms);
        self.record("code facts", t.elapsed());
        // Without shapes there are no units: such facts are incomplete and
        // must not be seen by a later diff.
        if matches!(self.depth, Depth::Shapes)
            && let Some(c) = self.cache
        {
            let t = Instant::now();
            c.save_code(&self.digest, &code);
            self.record("code facts (store)", t.elapsed());
        }
        Ok(self.code.get_or_init(|| code))
    }

    fn record(&self, stage: &'static str, d: Duration) {
        if let Ok(mut all) = self.times.lock() {
            all.push((stage, d));
        }
    }

    /// The stages this run computed, with their wall time.
    pub fn timings(&self) -> Vec<(&'static str, Duration)> {
        self.times.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The facts but their surface (which is then empty): read alone from
    /// the cache when it has them, else the whole facts.
    pub fn core(&self) -> Result<&Facts, JsError> {
        if let Some(f) = self.facts.get().or_else(|| self.core.get()) {
            return Ok(f);
        }
        if self.cached(Part::Core)
            && let Some(f) = self.facts.get().or_else(|| self.core.get())
        {
            return Ok(f);
        }
        self.facts()
    }

    pub fn roles(&self) -> Result<&Roles, JsError> {
        Ok(&self.core()?.roles)
    }

    pub fn workflows(&self) -> Result<&[WorkflowScript], JsError> {
        Ok(&self.core()?.workflows)
    }

    pub fn flags(&self) -> Result<&FlagInventory, JsError> {
        Ok(&self.core()?.flags)
    }

    /// Every gate, without verdicts.
    pub fn gates(&self) -> Result<&[Gate], JsError> {
        Ok(&self.core()?.gates)
    }

    /// The surface: read alone from the cache when it has it, else from
    /// the whole facts.
    pub fn surface(&self) -> Result<&Surface, JsError> {
        if let Some(f) = self.facts.get() {
            return Ok(&f.surface);
        }
        if let Some(s) = self.surface.get() {
            return Ok(s);
        }
        if self.cached(Part::Surface)
            && let Some(s) = self.surface.get()
        {
            return Ok(s);
        }
        Ok(&self.facts()?.surface)
    }

    /// The surface, whose prompts' texts may be empty (read without them
    /// from the cache when it has them): for views that show no text.
    pub fn outline(&self) -> Result<&Surface, JsError> {
        if let Some(f) = self.facts.get() {
            return Ok(&f.surface);
        }
        if let Some(s) = self.surface.get().or_else(|| self.outline.get()) {
            return Ok(s);
        }
        if self.cached(Part::Outline)
            && let Some(s) = self.surface.get().or_else(|| self.outline.get())
        {
            return Ok(s);
        }
        Ok(&self.facts()?.surface)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache in memory, holding what a store would: the serialised facts.
    #[derive(Default)]
    struct Memory(Mutex<Option<Vec<u8>>>);

    impl FactsCache for Memory {
        fn load(&self, _: &str) -> Option<Facts> {
            let j = self.0.lock().ok()?.clone()?;
            serde_json::from_slice(&j).ok()
        }
        fn save(&self, _: &str, facts: &Facts) {
            *self.0.lock().unwrap() = serde_json::to_vec(facts).ok();
        }
    }

    /// A cache that keeps whole facts and says which part each read asked
    /// for.
    #[derive(Default)]
    struct Counting {
        facts: Memory,
        reads: Mutex<Vec<&'static str>>,
    }

    impl FactsCache for Counting {
        fn load(&self, d: &str) -> Option<Facts> {
            self.reads.lock().unwrap().push("whole");
            self.facts.load(d)
        }
        fn save(&self, d: &str, facts: &Facts) {
            self.facts.save(d, facts)
        }
        fn load_core(&self, d: &str) -> Option<Facts> {
            self.reads.lock().unwrap().push("core");
            let f = self.facts.load(d)?;
            Some(Facts {
                surface: Surface::default(),
                ..f
            })
        }
        fn load_surface(&self, d: &str) -> Option<Surface> {
            self.reads.lock().unwrap().push("surface");
            self.facts.load(d).map(|f| f.surface)
        }
        fn load_outline(&self, d: &str) -> Option<Surface> {
            self.reads.lock().unwrap().push("outline");
            self.facts.load(d).map(|f| f.surface)
        }
    }

    #[test]
    fn each_part_is_read_once_and_alone() {
        let g = BunGraph::single_js("/$bunfs/root/cli.js", SRC.as_bytes());
        let budget = Budget::new(1 << 20);
        let cache = Counting::default();
        let cold = Analysed::new(&g, &budget, "d".into(), Some(&cache));
        let gates = format!("{:?}", cold.gates().unwrap());
        assert!(!cold.cached(Part::Core) && !cold.cached(Part::Surface));
        assert_eq!(
            *cache.reads.lock().unwrap(),
            ["core", "whole"],
            "missed, then computed"
        );
        cache.reads.lock().unwrap().clear();
        let warm = Analysed::new(&g, &budget, "d".into(), Some(&cache));
        assert_eq!(format!("{:?}", warm.gates().unwrap()), gates);
        warm.flags().unwrap();
        assert!(warm.cached(Part::Core));
        assert_eq!(*cache.reads.lock().unwrap(), ["core"]);
        warm.surface().unwrap();
        warm.surface().unwrap();
        assert!(warm.cached(Part::Surface));
        assert_eq!(*cache.reads.lock().unwrap(), ["core", "surface"]);
        warm.facts().unwrap();
        assert!(warm.facts_cached());
        assert_eq!(*cache.reads.lock().unwrap(), ["core", "surface", "whole"]);
        assert!(!warm.parsed(), "nothing parsed on a warm run");
    }

    /// The outline (the surface without its texts) is its own read, never
    /// taken for the surface; a surface already read serves as the outline.
    #[test]
    fn the_outline_is_read_alone_and_never_stands_for_the_surface() {
        let g = BunGraph::single_js("/$bunfs/root/cli.js", SRC.as_bytes());
        let budget = Budget::new(1 << 20);
        let cache = Counting::default();
        Analysed::new(&g, &budget, "d".into(), Some(&cache))
            .facts()
            .unwrap();
        cache.reads.lock().unwrap().clear();
        let warm = Analysed::new(&g, &budget, "d".into(), Some(&cache));
        warm.outline().unwrap();
        warm.outline().unwrap();
        assert!(warm.cached(Part::Outline));
        assert_eq!(*cache.reads.lock().unwrap(), ["outline"]);
        warm.surface().unwrap();
        warm.outline().unwrap();
        assert_eq!(*cache.reads.lock().unwrap(), ["outline", "surface"]);
        cache.reads.lock().unwrap().clear();
        let warm = Analysed::new(&g, &budget, "d".into(), Some(&cache));
        warm.surface().unwrap();
        warm.outline().unwrap();
        assert!(warm.cached(Part::Outline));
        assert_eq!(*cache.reads.lock().unwrap(), ["surface"]);
        assert!(!warm.parsed(), "nothing parsed on a warm run");
    }

    /// Gates whose flag defaults serde cannot tell apart: `null`, none, a
    /// value.
    const SRC: &str = r#"var settings = () => globalThis.__s ?? {};
var readFlag = (name, dflt) => settings().cachedFeatureFlags?.[name] ?? dflt;
function nullDefault() { return readFlag("tengu_demo_null", null); }
function noDefault() { return readFlag("tengu_demo_none"); }
function falseDefault() { if (!readFlag("tengu_demo_false", !1)) return !1; return !0; }
"#;

    #[test]
    fn computed_and_loaded_facts_are_the_same() {
        let g = BunGraph::single_js("/$bunfs/root/cli.js", SRC.as_bytes());
        let budget = Budget::new(1 << 20);
        let cache = Memory::default();
        let cold = Analysed::new(&g, &budget, "d".into(), Some(&cache));
        let computed = format!("{:?}", cold.facts().unwrap());
        assert!(!cold.facts_cached());
        assert!(
            computed.contains("tengu_demo_null") && computed.contains("tengu_demo_none"),
            "the fixture's gates are found: {computed}"
        );
        let warm = Analysed::new(&g, &budget, "d".into(), Some(&cache));
        assert!(warm.facts_cached());
        assert_eq!(computed, format!("{:?}", warm.facts().unwrap()));
    }
}
