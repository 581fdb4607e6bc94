//! Building the code index for commands that read code, with progress.

use super::Global;
use crate::analysis::analysed::{Analysed, Facts, FactsCache};
use crate::bun::digest::bundle_digest;
use crate::js::code::{CodeIndex, Depth};
use crate::source::build::Build;
use crate::store::{BuildRow, FactsStore, Ownership};
use std::io::IsTerminal;

pub fn index(g: &Global, build: &Build) -> anyhow::Result<CodeIndex> {
    index_to(g, build, Depth::Index)
}

/// The code index built to `depth`, with a spinner on a terminal.
pub fn index_to(g: &Global, build: &Build, depth: Depth) -> anyhow::Result<CodeIndex> {
    let ci = with_spinner(g, &build.graph, "parsing and indexing", || {
        crate::js::parse::with_big_stack(|| {
            CodeIndex::build_filtered(&build.graph, g.budget(), |_| true, depth)
        })
    });
    Ok(ci?)
}

/// Run `work` with a spinner on a terminal ("VERB N JavaScript module(s)…"),
/// none with --quiet or --json.
fn with_spinner<R>(
    g: &Global,
    graph: &crate::bun::BunGraph,
    verb: &str,
    work: impl FnOnce() -> R,
) -> R {
    let js = graph.modules.iter().filter(|m| m.is_javascript()).count();
    let spinner = (!g.quiet && !g.json && std::io::stderr().is_terminal()).then(|| {
        let s = indicatif::ProgressBar::new_spinner();
        s.set_message(format!("{verb} {js} JavaScript module(s)…"));
        s.enable_steady_tick(std::time::Duration::from_millis(120));
        s
    });
    let r = work();
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    r
}

/// The process's facts store: None with `--no-cache`, or when the cache's
/// own store cannot be opened (it only saves work, so a note says so and
/// the command goes on). A store the user named that cannot be used is an
/// error: they asked for that file.
pub fn store(g: &Global) -> anyhow::Result<Option<&'static FactsStore>> {
    static STORE: std::sync::OnceLock<Result<FactsStore, String>> = std::sync::OnceLock::new();
    if g.no_cache {
        return Ok(None);
    }
    let (path, ownership) = g.store_location();
    let opened = STORE.get_or_init(|| {
        // This machine's key lives in the cache folder, whichever store is
        // used: only rows sealed with it are believed about a build (a
        // store named with --store may be someone else's). Without it
        // (a cache folder that cannot be written) facts are computed.
        let key = match crate::store::key::MachineKey::in_folder(
            &g.cache_dir
                .clone()
                .unwrap_or_else(crate::source::cache::default_cache_dir),
        ) {
            Ok(k) => Some(k),
            Err(e) => {
                if !g.quiet {
                    eprintln!("note: {e}; stored facts are not used");
                }
                None
            }
        };
        FactsStore::open_keyed(&path, ownership, key).map_err(|e| {
            if ownership == Ownership::Cache && !g.quiet {
                eprintln!("note: facts store unavailable, analysing without it: {e}");
            }
            e.to_string()
        })
    });
    match opened {
        Ok(s) => Ok(Some(s)),
        Err(e) if ownership == Ownership::Named => {
            Err(crate::store::StoreError::Again(e.clone()).into())
        }
        Err(_) => Ok(None),
    }
}

/// Open a build's analysis: its bundle digest (remembered per file, so a
/// build seen before is not hashed again) and the facts store behind it.
pub fn analyse<'b>(g: &'b Global, build: &'b Build<'b>) -> anyhow::Result<Analysed<'b>> {
    let store = store(g)?;
    let arch = g.arch.map_or("", |a| a.as_str());
    let file = build.opened.identity.as_ref();
    let known = store.zip(file).and_then(|(s, f)| s.digest_for(f, arch));
    let digest = match known {
        Some(d) => d,
        None => {
            let (digest, js_modules) = bundle_digest(&build.graph, g.budget())?;
            if let Some(s) = store {
                let row = build_row(build, js_modules);
                s.remember(&digest, &row, file.map(|f| (f, arch)));
            }
            digest
        }
    };
    Ok(Analysed::new(
        &build.graph,
        g.budget(),
        digest,
        store.map(|s| s as &dyn FactsCache),
    ))
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

/// The facts of an analysed build, with a spinner on a terminal while they
/// are computed (none when they come from the store).
pub fn facts<'a>(g: &Global, an: &'a Analysed) -> anyhow::Result<&'a Facts> {
    // CC_TEARDOWN_DEBUG=store says on stderr where the facts came from
    // (the tests check that a second run does not parse).
    let debug =
        std::env::var("CC_TEARDOWN_DEBUG").is_ok_and(|v| v.split(',').any(|x| x == "store"));
    if an.facts_cached() {
        if debug {
            eprintln!("debug: facts for {} read from the store", an.digest());
        }
        return Ok(an.facts()?);
    }
    if debug {
        eprintln!("debug: facts for {} computed", an.digest());
    }
    let facts = with_spinner(g, an.graph(), "parsing and analysing", || an.facts());
    if std::env::var("CC_TEARDOWN_DEBUG").is_ok_and(|v| v.split(',').any(|x| x == "timings")) {
        for (stage, d) in an.timings() {
            eprintln!("debug: {stage:<14} {:>8.1} ms", d.as_secs_f64() * 1000.0);
        }
    }
    Ok(facts?)
}
