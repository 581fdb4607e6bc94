//! `history`: every published build scanned into the facts store, and the
//! questions that span them (docs/guide/history.md).

use super::{App, Global};
use crate::analysis::diff::{BuildDiff, Section, compare_facts};
use crate::report::emit::print_json;
use crate::source::{SourceError, npm};
use crate::store::FactsStore;
use crate::store::history::{self, ItemRow, Release, Story};
use crate::store::search::ReleaseOrder;
use anyhow::{Context, anyhow};
use clap::{Args, Subcommand, ValueEnum};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Subcommand)]
pub enum HistoryCommand {
    /// Fetch, analyse and record every published version in RANGE (resumable; known builds are skipped).
    #[command(
        after_help = "Example:\n  cc-teardown history scan 2.1.239..2.1.243 --platform darwin-arm64\n  cc-teardown history scan 2.1.300.. --platform darwin-arm64 --platform linux-x64\n  cc-teardown history scan all --platform darwin-arm64 --jobs 3\n\nRANGE: A..B, A.., ..B, ..latest, all, or a list (2.1.220,2.1.260).\nDownloads are deleted once analysed unless --keep. Exit status 1 when a build failed (it is recorded, and the scan goes on); a published package without a program (a placeholder release) is recorded as `empty` and is not a failure."
    )]
    Scan(ScanArgs),
    /// The releases scanned, with their status and what each build holds.
    #[command(
        after_help = "Example:\n  cc-teardown history list\n  cc-teardown history list --json | jq '.releases[] | select(.counts.workflow == 10) | .version'"
    )]
    List(PlatformArg),
    /// When one workflow, flag, tool, prompt, env var, command … appeared, changed and went.
    #[command(
        after_help = "Example:\n  cc-teardown history show workflow code-review\n  cc-teardown history show flag tengu_review_workflow_routing --json\n  cc-teardown history show env ANTHROPIC_MODEL --platform linux-x64\n\nKINDS: workflow, flag, gate, role, tool, prompt, env, setting, command, model."
    )]
    Show(ShowArgs),
    /// What changed at VERSION against the previous scanned version (from stored facts: nothing is parsed).
    #[command(
        after_help = "Example:\n  cc-teardown history changes 2.1.260\n  cc-teardown history changes 2.1.242 --platform darwin-arm64 --json | jq .workflows"
    )]
    Changes(ChangesArgs),
    /// Which versions hold TEXT: in a name (flag, tool, env var, …) or in a prompt's or script's text.
    #[command(
        after_help = "Example:\n  cc-teardown history search bot_protected\n  cc-teardown history search \"code review\" --json"
    )]
    Search(SearchArgs),
    /// One self-contained page over every release scanned: charts, events (code-split switch, workflows added/removed, Bun layouts), versions.
    #[command(
        after_help = "Example:\n  cc-teardown history timeline --platform darwin-arm64 -o timeline.html\n  cc-teardown history timeline --format md"
    )]
    Timeline(TimelineArgs),
    /// Write the history for others: the SQLite file itself, or every item as JSON or CSV.
    #[command(
        after_help = "Example:\n  cc-teardown history export --format sqlite -o history.sqlite\n  cc-teardown history export --format csv -o items.csv\n  cc-teardown history export --format json | jq '.releases | length'"
    )]
    Export(ExportArgs),
}

#[derive(Args)]
pub struct PlatformArg {
    /// Only this platform (default: every platform scanned).
    #[arg(long, short, value_parser = clap::builder::PossibleValuesParser::new(npm::PLATFORMS))]
    pub platform: Option<String>,
}

#[derive(Args)]
pub struct ScanArgs {
    /// The versions: A..B, A.., ..B, ..latest, all, or a comma-separated list.
    pub range: String,
    /// The platforms to scan (repeat, or `all`; default: this host's).
    #[arg(long, short)]
    pub platform: Vec<String>,
    /// Keep the downloaded builds in the cache instead of deleting each once analysed.
    #[arg(long)]
    pub keep: bool,
    /// Downloads in flight at once (analysis runs one build at a time, on every core).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=8))]
    pub jobs: u16,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ItemKind {
    Workflow,
    Flag,
    Gate,
    Role,
    Tool,
    Prompt,
    Env,
    Setting,
    Command,
    Model,
}

impl ItemKind {
    fn as_str(self) -> &'static str {
        match self {
            ItemKind::Workflow => "workflow",
            ItemKind::Flag => "flag",
            ItemKind::Gate => "gate",
            ItemKind::Role => "role",
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Env => "env",
            ItemKind::Setting => "setting",
            ItemKind::Command => "command",
            ItemKind::Model => "model",
        }
    }
}

#[derive(Args)]
pub struct ShowArgs {
    #[arg(value_enum, value_name = "KIND")]
    pub kind: ItemKind,
    pub name: String,
    #[command(flatten)]
    pub platform: PlatformArg,
}

#[derive(Args)]
pub struct ChangesArgs {
    pub version: String,
    #[command(flatten)]
    pub platform: PlatformArg,
}

#[derive(Args)]
pub struct SearchArgs {
    pub text: String,
    #[command(flatten)]
    pub platform: PlatformArg,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PageFormat {
    Html,
    Md,
    Text,
}

#[derive(Args)]
pub struct TimelineArgs {
    #[command(flatten)]
    pub platform: PlatformArg,
    #[arg(long, value_enum, default_value = "html")]
    pub format: PageFormat,
    /// Where to write (default: stdout).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Sqlite,
    Json,
    Csv,
}

#[derive(Args)]
pub struct ExportArgs {
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Where to write (needed for sqlite; JSON and CSV go to stdout without it).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn run(app: &App, a: &HistoryArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    if g.no_cache {
        usage!("history lives in the facts store; it cannot run with --no-cache");
    }
    let Some(store) = app.store()? else {
        return Err(anyhow!(
            "the facts store cannot be opened (see the note above)"
        ));
    };
    let r = match &a.command {
        HistoryCommand::Scan(s) => scan(app, store, s),
        HistoryCommand::List(p) => list(app, store, p.platform.as_deref()),
        HistoryCommand::Show(s) => show(app, store, s),
        HistoryCommand::Changes(c) => changes(app, store, c),
        HistoryCommand::Search(s) => search(app, store, s),
        HistoryCommand::Timeline(t) => timeline(app, store, t),
        HistoryCommand::Export(e) => export(app, store, e),
    };
    // Damaged rows left out of the answer: one line each (JSON answers
    // also list them under `skipped`).
    if !g.json && r.is_ok() {
        for what in store.skipped() {
            errln!(
                "warning: {}: left out a damaged row: {what}",
                store.path().display()
            );
        }
    }
    // The process exits without dropping the store: close it, so that
    // SQLite folds this command's write-ahead log into the database and
    // removes it (or leaves it, without waiting, to another process that
    // has the file open) instead of every later command reading it back.
    store.close();
    r
}

// ---------------------------------------------------------------- origin

/// Where a history answer comes from: the store's path, and whether this
/// machine made it. A store made elsewhere (a published history, a copied
/// cache) answers with what its author recorded: every answer from it says
/// so.
#[derive(serde::Serialize)]
struct Origin {
    path: String,
    made_here: bool,
}

fn origin(store: &FactsStore) -> Origin {
    Origin {
        path: store.path().display().to_string(),
        made_here: store.made_here(),
    }
}

/// The label a human answer from a store made elsewhere starts with.
fn origin_note(store: &FactsStore) -> Option<String> {
    (!store.made_here()).then(|| {
        format!(
            "history from {}, a store not marked as made on this machine (made elsewhere, or before stores were marked): what it says is what its author recorded",
            store.path().display()
        )
    })
}

/// Print the label of a store made elsewhere (human answers).
fn say_origin(store: &FactsStore) {
    if let Some(note) = origin_note(store) {
        outln!("({note})");
    }
}

/// A JSON answer with its origin (`store`) and the damaged rows left out
/// of it (`skipped`).
fn labelled(store: &FactsStore, mut v: serde_json::Value) -> serde_json::Value {
    if let Some(m) = v.as_object_mut() {
        m.insert(
            "store".into(),
            serde_json::to_value(origin(store)).unwrap_or_default(),
        );
        m.insert("skipped".into(), serde_json::json!(store.skipped()));
    }
    v
}

// ---------------------------------------------------------------- scan

/// One release's outcome in a scan.
#[derive(serde::Serialize)]
struct ScanResult {
    version: String,
    platform: String,
    /// `ok` (analysed now), `known` (already in the store), `failed`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    seconds: f64,
}

#[derive(serde::Serialize)]
struct ScanView {
    range: String,
    platforms: Vec<String>,
    results: Vec<ScanResult>,
    analysed: usize,
    known: usize,
    /// Published packages without a program (placeholders).
    empty: usize,
    failed: usize,
    seconds: f64,
    store: String,
}

/// A release to scan: its version, platform and publication time.
#[derive(Clone)]
struct Job {
    version: String,
    platform: String,
    published: Option<String>,
}

/// A marker the scan leaves in a cache entry it downloaded itself, so the
/// entry is deleted after analysis even when a killed scan left it behind
/// and the next scan finds it as a cache hit.
const SCAN_MARKER: &str = ".downloaded-by-history-scan";

fn scan(app: &App, store: &FactsStore, a: &ScanArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let platforms: Vec<String> = if a.platform.iter().any(|p| p == "all") {
        npm::PLATFORMS.iter().map(|p| p.to_string()).collect()
    } else if a.platform.is_empty() {
        vec![npm::host_platform().to_string()]
    } else {
        for p in &a.platform {
            if !npm::PLATFORMS.contains(&p.as_str()) {
                usage!(
                    "unknown platform {p:?} (one of: {}, all)",
                    npm::PLATFORMS.join(", ")
                );
            }
        }
        a.platform.clone()
    };
    let started = Instant::now();
    let mut jobs = Vec::new();
    for p in &platforms {
        // A list of versions the store already holds needs no registry:
        // a rescan of known builds is then a few lookups, offline too.
        if let Some(listed) = explicit_versions(&a.range)
            && listed
                .iter()
                .map(|v| store.release_done(v, p))
                .collect::<Result<Vec<bool>, _>>()?
                .into_iter()
                .all(|done| done)
        {
            jobs.extend(listed.into_iter().map(|v| Job {
                version: v,
                platform: p.clone(),
                published: None,
            }));
            continue;
        }
        let published = npm::published_versions(p)?;
        let names: Vec<String> = published.iter().map(|x| x.version.clone()).collect();
        let chosen = match history::select_range(&a.range, &names) {
            Ok(c) => c,
            Err(e) => usage!("bad RANGE {:?}: {e}", a.range),
        };
        for v in chosen {
            let time = published
                .iter()
                .find(|x| x.version == v)
                .and_then(|x| x.time.clone());
            jobs.push(Job {
                version: v,
                platform: p.clone(),
                published: time,
            });
        }
    }
    let mut results = Vec::new();
    let mut todo = VecDeque::new();
    for j in jobs {
        if store.release_done(&j.version, &j.platform)? {
            results.push(ScanResult {
                version: j.version,
                platform: j.platform,
                status: "known",
                error: None,
                seconds: 0.0,
            });
        } else {
            todo.push_back(j);
        }
    }
    let total = results.len() + todo.len();
    let bar = progress(g, total as u64);
    bar.set_position(results.len() as u64);
    let cache_dir = g.source_options().cache_dir;

    // Downloads run ahead of the analysis on `jobs` threads; the channel
    // holds at most one finished download, so at most jobs + 2 builds are
    // on disk at once (in flight, waiting, being analysed).
    let queue = Arc::new(Mutex::new(todo));
    let (tx, rx) =
        mpsc::sync_channel::<(Job, Result<npm::CachedBuild, (bool, String)>, Duration)>(1);
    let mut workers = Vec::new();
    for _ in 0..a.jobs {
        let (queue, tx, cache_dir) = (queue.clone(), tx.clone(), cache_dir.clone());
        workers.push(std::thread::spawn(move || {
            loop {
                let Some(job) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                    return;
                };
                let t = Instant::now();
                let fetched = npm::fetch(
                    &job.version,
                    &job.platform,
                    &npm::FetchOptions {
                        cache_dir: cache_dir.clone(),
                        progress: Arc::new(npm::Silent),
                    },
                )
                .inspect(|b| {
                    if !b.cache_hit
                        && let Some(dir) = b.program.parent()
                    {
                        let _ = std::fs::write(dir.join(SCAN_MARKER), b"");
                    }
                })
                .map_err(|e| (matches!(e, SourceError::NoProgram), e.to_string()));
                if tx.send((job, fetched, t.elapsed())).is_err() {
                    return;
                }
            }
        }));
    }
    drop(tx);
    let mut failed = 0;
    let mut empties = 0;
    let mut analysed = 0;
    for (job, fetched, download) in rx {
        let label = format!("{} {}", job.version, job.platform);
        bar.set_message(format!("{label}: analysing"));
        let t = Instant::now();
        let empty = matches!(fetched, Err((true, _)));
        let outcome = fetched.map_err(|(_, e)| anyhow!(e)).and_then(|b| {
            let r = analyse_release(app, store, &job);
            let dir = b.program.parent().map(PathBuf::from);
            if !a.keep
                && let Some(dir) = dir
                && (!b.cache_hit || dir.join(SCAN_MARKER).exists())
            {
                let _ = std::fs::remove_dir_all(&dir);
            }
            r
        });
        let seconds = (download + t.elapsed()).as_secs_f64();
        let (status, error) = match outcome {
            Ok(()) => {
                analysed += 1;
                ("ok", None)
            }
            Err(e) => {
                // A package with nothing to analyse is a fact about the
                // release, not a failure: recorded once, never retried.
                let status = if empty { "empty" } else { "failed" };
                if empty {
                    empties += 1;
                } else {
                    failed += 1;
                }
                let msg = format!("{e:#}");
                store.record_unanalysed(
                    &job.version,
                    &job.platform,
                    job.published.as_deref(),
                    status,
                    &msg,
                )?;
                (status, Some(msg))
            }
        };
        if bar.is_hidden() && !g.quiet && !g.json {
            match &error {
                None => errln!("{label}: ok ({seconds:.1} s)"),
                Some(e) => errln!("{label}: {status}: {e}"),
            }
        } else if let Some(e) = &error {
            bar.println(crate::report::escape::text(&format!(
                "{label}: {status}: {e}"
            )));
        }
        bar.inc(1);
        results.push(ScanResult {
            version: job.version,
            platform: job.platform,
            status,
            error,
            seconds,
        });
    }
    for w in workers {
        let _ = w.join();
    }
    // Every pair of consecutive releases gets its `changes` answer now, so
    // the query reads a few kilobytes instead of comparing two builds'
    // facts (a one-time ~0.1 s a pair; a pair already answered is skipped).
    for p in &platforms {
        bar.set_message(format!("{p}: changes between consecutive releases"));
        let ok: Vec<Release> = store
            .releases(Some(p))?
            .into_iter()
            .filter(|r| r.status == "ok")
            .collect();
        for w in ok.windows(2) {
            let _ = changes_json(store, &w[0], &w[1], p);
        }
    }
    // The search index is remade now, when the scan changed what it is
    // made from (0.7 s on every darwin-arm64 release), not by the first
    // search after the scan; a failure here is the search's to report.
    bar.set_message("search index");
    let _ = store.ensure_search_index();
    bar.finish_and_clear();
    let known = results.iter().filter(|r| r.status == "known").count();
    let view = ScanView {
        range: a.range.clone(),
        platforms,
        analysed,
        known,
        empty: empties,
        failed,
        seconds: started.elapsed().as_secs_f64(),
        store: store.path().display().to_string(),
        results,
    };
    if g.json {
        print_json(&view)?;
    } else {
        outln!(
            "{} {} scanned: {analysed} analysed, {known} already known, {empties} without a program, {failed} failed ({:.1} s)",
            view.results.len(),
            plural(view.results.len(), "release", "releases"),
            view.seconds
        );
        for r in view.results.iter().filter(|r| r.status == "failed") {
            outln!(
                "  failed {} {}: {}",
                r.version,
                r.platform,
                r.error.as_deref().unwrap_or("")
            );
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// The versions of a RANGE that lists them (`2.1.220` or `2.1.220,2.1.260`),
/// normalised as the registry writes them; None for ranges and `latest`.
fn explicit_versions(range: &str) -> Option<Vec<String>> {
    if range.contains("..") || range.trim() == "all" {
        return None;
    }
    range
        .split(',')
        .map(|v| semver::Version::parse(v.trim()).ok().map(|v| v.to_string()))
        .collect()
}

/// Analyse one fetched release through the pipeline (facts come from the
/// store when this bundle was analysed before) and record it.
fn analyse_release(app: &App, store: &FactsStore, job: &Job) -> anyhow::Result<()> {
    let g = &app.g;
    // The npm target (a cache hit now) carries the version and platform
    // into the store's build row.
    let opened = g.open(&format!("npm:{}/{}", job.version, job.platform))?;
    let build = g.build(&opened)?;
    let an = app.analyse(&build)?;
    let facts = an.facts()?;
    // The build's row is written again: a build seen before may have been
    // recorded by an older cc-teardown.
    let js = build
        .graph
        .modules
        .iter()
        .filter(|m| m.is_javascript())
        .count();
    store.record_release(
        &job.version,
        &job.platform,
        job.published.as_deref(),
        an.digest(),
        &super::app::build_row(&build, js),
        facts,
    )?;
    Ok(())
}

fn progress(g: &Global, total: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if g.quiet || g.json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:32} {bar:30} {pos}/{len} releases, eta {eta}",
        )
        .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

// ---------------------------------------------------------------- list

#[derive(serde::Serialize)]
struct ListedRelease {
    #[serde(flatten)]
    release: Release,
    counts: std::collections::BTreeMap<String, u64>,
}

fn list(app: &App, store: &FactsStore, platform: Option<&str>) -> anyhow::Result<i32> {
    let g = &app.g;
    let releases = store.releases(platform)?;
    let counts = store.item_counts()?;
    let rows: Vec<ListedRelease> = releases
        .into_iter()
        .map(|r| {
            let c = r
                .digest
                .as_ref()
                .and_then(|d| counts.get(d).cloned())
                .unwrap_or_default();
            ListedRelease {
                release: r,
                counts: c,
            }
        })
        .collect();
    if g.json {
        print_json(&labelled(store, serde_json::json!({ "releases": rows })))?;
        return Ok(0);
    }
    say_origin(store);
    if rows.is_empty() {
        outln!("no release scanned yet (cc-teardown history scan RANGE)");
        return Ok(0);
    }
    let mut t = crate::report::table::Table::new(&[
        ("version", crate::report::table::Align::Left),
        ("platform", crate::report::table::Align::Left),
        ("status", crate::report::table::Align::Left),
        ("modules", crate::report::table::Align::Right),
        ("split", crate::report::table::Align::Left),
        ("workflows", crate::report::table::Align::Right),
        ("flags", crate::report::table::Align::Right),
        ("tools", crate::report::table::Align::Right),
        ("prompts", crate::report::table::Align::Right),
        ("env", crate::report::table::Align::Right),
    ]);
    for r in &rows {
        let n = |k: &str| r.counts.get(k).map_or("0".into(), |n| n.to_string());
        let rel = &r.release;
        t.row(vec![
            rel.version.clone(),
            rel.platform.clone(),
            if rel.status == "ok" && !rel.current {
                "ok (older analysis)".into()
            } else {
                rel.status.clone()
            },
            rel.modules.map_or(String::new(), |m| m.to_string()),
            match rel.code_split {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => String::new(),
            },
            n("workflow"),
            n("flag"),
            n("tool"),
            n("prompt"),
            n("env"),
        ]);
    }
    out!("{}", t.render());
    Ok(0)
}

// ---------------------------------------------------------------- show

/// The platforms to answer for: the one asked, else every one scanned.
fn platforms(store: &FactsStore, asked: Option<&str>) -> anyhow::Result<Vec<String>> {
    if let Some(p) = asked {
        return Ok(vec![p.to_string()]);
    }
    let mut ps: Vec<String> = store
        .releases(None)?
        .into_iter()
        .filter(|r| r.status == "ok")
        .map(|r| r.platform)
        .collect();
    ps.sort();
    ps.dedup();
    if ps.is_empty() {
        return Err(anyhow!(
            "no release scanned yet (cc-teardown history scan RANGE)"
        ));
    }
    Ok(ps)
}

fn show(app: &App, store: &FactsStore, a: &ShowArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let kind = a.kind.as_str();
    let mut stories: Vec<Story> = Vec::new();
    for p in platforms(store, a.platform.platform.as_deref())? {
        let over = store.item_over_releases(kind, &a.name, &p)?;
        if over.is_empty() {
            continue;
        }
        stories.push(history::story(kind, &a.name, &p, &over, &mut |n| {
            store.charge_answer(n)
        })?);
    }
    let seen = stories.iter().any(|s| s.first_seen.is_some());
    if !seen {
        let similar = store.item_names_like(Some(kind), &a.name, 8)?;
        let hint = if similar.is_empty() {
            String::new()
        } else {
            format!(
                "; similar: {}",
                similar
                    .iter()
                    .map(|(_, n)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if g.json {
            print_json(&labelled(
                store,
                serde_json::json!({"name": a.name, "kind": kind, "found": false, "stories": stories}),
            ))?;
        } else {
            say_origin(store);
            outln!("no {kind} named {} in the releases scanned{hint}", a.name);
        }
        return Ok(1);
    }
    // Where platforms tell one story, say it once.
    let same = stories.windows(2).all(|w| {
        w[0].first_seen == w[1].first_seen
            && w[0].last_seen == w[1].last_seen
            && w[0].removed_in == w[1].removed_in
            && w[0].changes.len() == w[1].changes.len()
    });
    if g.json {
        let first = &stories[0];
        print_json(&labelled(
            store,
            serde_json::json!({
                "name": a.name,
                "kind": kind,
                "found": true,
                "first_seen": first.first_seen,
                "last_seen": first.last_seen,
                "removed_in": first.removed_in,
                "changes": first.changes,
                "gaps": first.gaps,
                "platform": first.platform,
                "platforms_agree": same,
                "stories": stories,
            }),
        ))?;
        return Ok(0);
    }
    say_origin(store);
    let shown: Vec<&Story> = if same {
        vec![&stories[0]]
    } else {
        stories.iter().collect()
    };
    for s in shown {
        let on = if same && stories.len() > 1 {
            stories
                .iter()
                .map(|s| s.platform.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            s.platform.clone()
        };
        outln!(
            "{kind} {} on {on} ({} {} scanned)",
            a.name,
            s.scanned,
            plural(s.scanned, "release", "releases")
        );
        outln!(
            "  first seen  {}",
            s.first_seen.as_deref().unwrap_or("never")
        );
        outln!(
            "  last seen   {}",
            s.last_seen.as_deref().unwrap_or("never")
        );
        if let Some(r) = &s.removed_in {
            outln!("  removed in  {r}");
        }
        if !s.gaps.is_empty() {
            outln!("  absent in   {}", s.gaps.join(", "));
        }
        outln!("  changes:");
        for c in &s.changes {
            match c.what.as_str() {
                "added" | "returned" => outln!("    {:<10} {:<9} {}", c.version, c.what, c.to),
                "removed" => outln!("    {:<10} removed", c.version),
                what => outln!("    {:<10} {what}: {} → {}", c.version, c.from, c.to),
            }
        }
    }
    if !same {
        outln!("(the platforms differ)");
    }
    Ok(0)
}

// ---------------------------------------------------------------- changes

/// The sections `history changes` answers: those made of facts.
const FACT_SECTIONS: [Section; 10] = [
    Section::Workflows,
    Section::Flags,
    Section::Gates,
    Section::Roles,
    Section::Tools,
    Section::Prompts,
    Section::Env,
    Section::Settings,
    Section::Commands,
    Section::Models,
];

#[derive(serde::Serialize)]
struct ChangesView {
    version: String,
    previous: String,
    platform: String,
    #[serde(flatten)]
    diff: BuildDiff,
}

fn changes(app: &App, store: &FactsStore, a: &ChangesArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let ps = platforms(store, a.platform.platform.as_deref())?;
    let [platform] = ps.as_slice() else {
        usage!(
            "several platforms are scanned ({}); say which with --platform",
            ps.join(", ")
        );
    };
    let releases: Vec<Release> = store
        .releases(Some(platform))?
        .into_iter()
        .filter(|r| r.status == "ok")
        .collect();
    let Some(i) = releases.iter().position(|r| r.version == a.version) else {
        return Err(anyhow!(
            "{} {platform} is not in the history (cc-teardown history scan {})",
            a.version,
            a.version
        ));
    };
    if i == 0 {
        return Err(anyhow!(
            "{} is the oldest {platform} release scanned: there is nothing before it to compare with",
            a.version
        ));
    }
    let (prev, this) = (&releases[i - 1], &releases[i]);
    let v = serde_json::Value::Object(changes_json(store, prev, this, platform)?);
    if g.json {
        // Serialised here, whichever path the answer came by: never a
        // stored text passed through.
        print_json(&labelled(store, v))?;
        return Ok(0);
    }
    say_origin(store);
    // The sections are the view's own keys (the diff is flattened into it).
    outln!(
        "{} against {} ({platform}), from stored facts",
        this.version,
        prev.version
    );
    for s in FACT_SECTIONS {
        let key = serde_json::to_value(s)?;
        let key = key.as_str().unwrap_or_default();
        let Some(sec) = v.get(key) else { continue };
        let mut parts = Vec::new();
        for (field, label) in [
            ("added", "added"),
            ("removed", "removed"),
            ("changed", "changed"),
            ("kind_changed", "kind changed"),
            ("default_changed", "default changed"),
            ("only_a", "gone"),
            ("only_b", "new"),
        ] {
            let Some(list) = sec.get(field).and_then(|l| l.as_array()) else {
                continue;
            };
            if list.is_empty() {
                continue;
            }
            let names: Vec<String> = list.iter().map(item_label).collect();
            parts.push(format!("{label} {}: {}", names.len(), ellipsis(&names, 12)));
        }
        if parts.is_empty() {
            outln!("  {key:<9} no change");
        } else {
            outln!("  {key:<9} {}", parts.join("; "));
        }
    }
    Ok(0)
}

/// The answer of `history changes` for `prev` → `this`: the one stored
/// for the two builds when there is one and it is the answer for these
/// releases, else their facts compared (the `diff` sections, from the
/// stored facts) and the answer stored for the next time. Either way a
/// JSON object, serialised again when printed.
fn changes_json(
    store: &FactsStore,
    prev: &Release,
    this: &Release,
    platform: &str,
) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let digests = prev.digest.as_deref().zip(this.digest.as_deref());
    // A stored answer names the releases it was made for: one made for a
    // build published under other versions is not this answer.
    let names = |m: &serde_json::Map<String, serde_json::Value>| {
        m.get("version").and_then(|v| v.as_str()) == Some(this.version.as_str())
            && m.get("previous").and_then(|v| v.as_str()) == Some(prev.version.as_str())
            && m.get("platform").and_then(|v| v.as_str()) == Some(platform)
    };
    if let Some(m) = digests.and_then(|(a, b)| store.stored_changes(a, b))
        && names(&m)
    {
        return Ok(m);
    }
    let load = |r: &Release| {
        r.digest
            .as_deref()
            .and_then(|d| store.facts_of(d))
            .with_context(|| {
                format!(
                    "the stored facts of {} cannot be used (made by another analysis version, or damaged, or past the caps on stored facts); rescan it (cc-teardown history scan {})",
                    r.version, r.version
                )
            })
    };
    let (fa, fb) = (load(prev)?, load(this)?);
    let mut diff = BuildDiff::default();
    compare_facts(&fa, &fb, &FACT_SECTIONS, &mut diff);
    let view = ChangesView {
        version: this.version.clone(),
        previous: prev.version.clone(),
        platform: platform.to_string(),
        diff,
    };
    let serde_json::Value::Object(m) = serde_json::to_value(&view)? else {
        return Err(anyhow!("the changes did not serialise as an object"));
    };
    if let Some((a, b)) = digests {
        store.store_changes(a, b, &serde_json::to_string(&m)?);
    }
    Ok(m)
}

/// A diff list entry's name: a string, or an object's name/key/id field.
fn item_label(v: &serde_json::Value) -> String {
    if let Some(s) = v.as_str() {
        return s.to_string();
    }
    for k in ["name", "key", "id", "role"] {
        if let Some(s) = v.get(k).and_then(|x| x.as_str()) {
            return s.to_string();
        }
    }
    v.to_string()
}

fn ellipsis(names: &[String], max: usize) -> String {
    if names.len() <= max {
        names.join(", ")
    } else {
        format!("{} and {} more", names[..max].join(", "), names.len() - max)
    }
}

// ---------------------------------------------------------------- search

/// One item a search found. Fields in name order, as `--json` has always
/// printed them (they went through a `serde_json::Value`, whose maps are
/// sorted): serialised directly now, which a megabyte answer needs.
#[derive(serde::Serialize)]
struct Hit {
    /// `name` (the text is in the item's name) or `text` (in its text).
    r#in: &'static str,
    kind: String,
    name: String,
    platform: String,
    versions: Vec<String>,
}

#[derive(serde::Serialize)]
struct SearchView<'a> {
    hits: &'a [Hit],
    skipped: Vec<String>,
    store: Origin,
    text: &'a str,
}

/// The most items a search lists for a match in their name (a needle of a
/// letter or two is in thousands of names).
const NAME_HITS: usize = 500;

fn search(app: &App, store: &FactsStore, a: &SearchArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    if a.text.is_empty() {
        usage!("search for what? TEXT is empty");
    }
    let found = store.search(&a.text, NAME_HITS)?;
    let mut hits: Vec<Hit> = Vec::new();
    for p in platforms(store, a.platform.platform.as_deref())? {
        let order = ReleaseOrder::new(&store.releases(Some(&p))?);
        let by_name = found.by_name.iter().map(|f| ("name", f));
        for (r#in, f) in by_name.chain(found.by_text.iter().map(|f| ("text", f))) {
            let versions = order.versions(&f.builds);
            store.charge_answer(
                versions.iter().map(|v| v.len() as u64 + 32).sum::<u64>()
                    + (f.kind.len() + f.name.len() + p.len() + 128) as u64,
            )?;
            if !versions.is_empty() {
                hits.push(Hit {
                    r#in,
                    kind: f.kind.clone(),
                    name: f.name.clone(),
                    platform: p.clone(),
                    versions,
                });
            }
        }
    }
    if g.json {
        print_json(&SearchView {
            hits: &hits,
            skipped: store.skipped(),
            store: origin(store),
            text: &a.text,
        })?;
        return Ok(if hits.is_empty() { 1 } else { 0 });
    }
    say_origin(store);
    if hits.is_empty() {
        outln!("{:?} is in no release scanned", a.text);
    } else {
        for h in &hits {
            outln!(
                "{} {} ({} {}, {}): {}",
                h.kind,
                h.name,
                h.r#in,
                h.platform,
                h.versions.len(),
                span(&h.versions)
            );
        }
    }
    Ok(if hits.is_empty() { 1 } else { 0 })
}

/// "2.1.200 … 2.1.230" for a list of versions.
fn span(versions: &[String]) -> String {
    match versions {
        [] => String::new(),
        [one] => one.clone(),
        [first, .., last] => format!("{first} … {last}"),
    }
}

// ---------------------------------------------------------------- timeline

fn timeline(app: &App, store: &FactsStore, a: &TimelineArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let ps = platforms(store, a.platform.platform.as_deref())?;
    let [platform] = ps.as_slice() else {
        usage!(
            "several platforms are scanned ({}); say which with --platform",
            ps.join(", ")
        );
    };
    let rows = store.timeline(platform)?;
    if g.json {
        print_json(&labelled(
            store,
            serde_json::json!({
                "platform": platform,
                "events": crate::report::timeline::events(&rows),
                "releases": rows,
            }),
        ))?;
        return Ok(0);
    }
    let mut d = crate::report::timeline::doc(
        platform,
        &rows,
        &crate::report::provenance::Provenance::of_this_run(),
    );
    if let Some(note) = origin_note(store) {
        d.blocks
            .insert(0, crate::report::doc::Block::Note(note.into()));
    }
    let text = match a.format {
        PageFormat::Html => d.html(),
        PageFormat::Md => d.markdown(),
        PageFormat::Text => d.terminal(&app.stdout().term()),
    };
    app.to_file(a.output.clone()).write(&text)?;
    Ok(0)
}

// ---------------------------------------------------------------- export

fn export(app: &App, store: &FactsStore, a: &ExportArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    match a.format {
        ExportFormat::Sqlite => {
            let Some(out) = &a.output else {
                usage!("--format sqlite writes a file: say where with -o FILE");
            };
            if out.exists() || out.is_symlink() {
                usage!("{} already exists; choose a new file", out.display());
            }
            store.export_sqlite(out)?;
            if !g.quiet && !g.json {
                errln!("wrote {}", out.display());
            }
            if g.json {
                print_json(&serde_json::json!({"output": out.display().to_string()}))?;
            }
            Ok(0)
        }
        ExportFormat::Json => {
            let items: Vec<serde_json::Value> = store
                .all_items(None)?
                .into_iter()
                .map(|ItemRow { version, platform, kind, name, value }| {
                    serde_json::json!({
                        "version": version,
                        "platform": platform,
                        "kind": kind,
                        "name": name,
                        "value": serde_json::from_str::<serde_json::Value>(&value).unwrap_or_default(),
                    })
                })
                .collect();
            let doc = labelled(
                store,
                serde_json::json!({"releases": store.releases(None)?, "items": items}),
            );
            let text = crate::report::emit::to_json(&doc)?;
            app.to_file(a.output.clone()).write(&text)?;
            Ok(0)
        }
        ExportFormat::Csv => {
            let mut text = String::from("version,platform,kind,name,value\n");
            for ItemRow {
                version,
                platform,
                kind,
                name,
                value,
            } in store.all_items(None)?
            {
                let row: Vec<String> = [version, platform, kind, name, value]
                    .iter()
                    .map(|f| csv_field(f))
                    .collect();
                text.push_str(&row.join(","));
                text.push('\n');
            }
            app.to_file(a.output.clone()).write(&text)?;
            Ok(0)
        }
    }
}

/// One CSV field, after OWASP's advice on CSV injection: every field is
/// quoted (RFC 4180, `"` doubled); a field that begins with `=`, `+`, `-`,
/// `@`, a tab or a carriage return — what a spreadsheet may run as a
/// formula — gets a leading apostrophe. Stored text is untrusted: control
/// characters (NUL, line breaks, tabs, ESC, DEL, C1) and the bidirectional
/// controls are written as the visible escapes of [`escape::display`]
/// (`\x00`, `\n`, `\u{202e}`), as every human output shows them, so a
/// field is one line of plain text.
fn csv_field(f: &str) -> String {
    use crate::report::escape;
    let formula = f.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let shown = escape::display(f);
    let guard = if formula { "'" } else { "" };
    format!("\"{guard}{}\"", shown.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("plain"), "\"plain\"");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=cmd()"), "\"'=cmd()\"");
        assert_eq!(
            csv_field("{\"a\":1,\"b\":2}"),
            "\"{\"\"a\"\":1,\"\"b\"\":2}\""
        );
    }

    #[test]
    fn csv_fields_show_control_and_bidi_characters() {
        // A leading tab or carriage return starts a formula too (OWASP).
        assert_eq!(csv_field("\t=1+1"), "\"'\\t=1+1\"");
        assert_eq!(csv_field("\r@SUM(A1)"), "\"'\\r@SUM(A1)\"");
        assert_eq!(csv_field("+1"), "\"'+1\"");
        assert_eq!(csv_field("-2"), "\"'-2\"");
        assert_eq!(csv_field("@x"), "\"'@x\"");
        // NUL, ESC, DEL, C1, line breaks: visible escapes, one line.
        assert_eq!(csv_field("a\0b"), "\"a\\x00b\"");
        assert_eq!(csv_field("\x1b[2Jx"), "\"\\x1b[2Jx\"");
        assert_eq!(csv_field("a\x7f\u{9b}b"), "\"a\\x7f\\u{9b}b\"");
        assert_eq!(csv_field("a\nb\r\nc"), "\"a\\nb\\r\\nc\"");
        // Bidirectional controls and separators, anywhere in the field.
        assert_eq!(csv_field("evil\u{202e}txt.exe"), "\"evil\\u{202e}txt.exe\"");
        assert_eq!(
            csv_field("\u{2066}x\u{2069}\u{2028}"),
            "\"\\u{2066}x\\u{2069}\\u{2028}\""
        );
        for raw in ["\0", "\x1b", "\u{202e}", "\u{85}", "\n", "\t"] {
            let f = csv_field(&format!("x{raw}=1"));
            assert!(!f.contains(raw), "{f:?}");
            assert!(!f.chars().any(crate::report::escape::is_unsafe), "{f:?}");
        }
        // Not a formula when the sign is not first; text stays as it is.
        assert_eq!(csv_field("a=1"), "\"a=1\"");
        assert_eq!(csv_field("é 世"), "\"é 世\"");
    }

    #[test]
    fn spans_and_ellipses() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(span(&v(&["1.0.0"])), "1.0.0");
        assert_eq!(span(&v(&["1.0.0", "1.0.1", "1.0.2"])), "1.0.0 … 1.0.2");
        assert_eq!(ellipsis(&v(&["a", "b", "c"]), 2), "a, b and 1 more");
    }
}
