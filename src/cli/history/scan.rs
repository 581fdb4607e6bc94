//! `history scan`: the platforms asked, the analysis of one release (the
//! pipeline every command runs) and the progress bar; the scan itself is
//! `FactsStore::scan`.

use super::ScanArgs;
use crate::cli::App;
use crate::report::emit::Format;
use crate::report::escape;
use crate::report::history::ScanView;
use crate::source::npm;
use crate::store::FactsStore;
use crate::store::history::{Job, ScanPlan, ScanProgress, ScanResult};
use indicatif::{ProgressBar, ProgressStyle};
use std::cell::OnceCell;
use std::time::Duration;

pub fn run(app: &App, store: &FactsStore, a: &ScanArgs) -> anyhow::Result<i32> {
    // First: whether the answer is JSON decides whether a bar is drawn.
    let out = app.output(&a.out, Format::Text);
    let platforms = platforms(&a.platform)?;
    let plan = ScanPlan {
        range: &a.range,
        platforms: &platforms,
        keep: a.keep,
        jobs: a.jobs,
        cache_dir: app.g.source_options().cache_dir,
    };
    let bar = Bar {
        app,
        bar: OnceCell::new(),
    };
    let analyse = |job: &Job| analyse_release(app, store, job);
    let scanned = store.scan(&plan, &analyse, &bar).map_err(super::err)?;
    let view = ScanView {
        range: a.range.clone(),
        platforms,
        scanned,
        store: store.path().display().to_string(),
    };
    out.emit(&view)?;
    Ok(view.code())
}

/// The platforms to scan: those named (`all` for every one), else this
/// host's.
fn platforms(asked: &[String]) -> anyhow::Result<Vec<String>> {
    if asked.iter().any(|p| p == "all") {
        return Ok(npm::PLATFORMS.iter().map(|p| p.to_string()).collect());
    }
    if asked.is_empty() {
        return Ok(vec![npm::host_platform().to_string()]);
    }
    for p in asked {
        if !npm::PLATFORMS.contains(&p.as_str()) {
            usage!(
                "unknown platform {p:?} (one of: {}, all)",
                npm::PLATFORMS.join(", ")
            );
        }
    }
    Ok(asked.to_vec())
}

/// Analyse one fetched release through the pipeline (facts come from the
/// store when this bundle was analysed before) and record it.
fn analyse_release(app: &App, store: &FactsStore, job: &Job) -> anyhow::Result<()> {
    // The npm target (a cache hit now) carries the version and platform
    // into the store's build row.
    let opened = app.open(&format!("npm:{}/{}", job.version, job.platform))?;
    let build = app.build(&opened)?;
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
        &crate::cli::app::build_row(&build, js),
        facts,
    )?;
    Ok(())
}

/// The scan's progress on a terminal: a bar of releases on stderr, made
/// once the releases are known (hidden with --quiet, JSON, or no
/// terminal); without a bar, a line per release unless quiet or JSON.
struct Bar<'a> {
    app: &'a App,
    bar: OnceCell<ProgressBar>,
}

impl Bar<'_> {
    fn bar(&self) -> &ProgressBar {
        self.bar.get_or_init(ProgressBar::hidden)
    }
}

impl ScanProgress for Bar<'_> {
    fn start(&self, total: u64, done: u64) {
        let bar = if self.app.progress() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{msg:32} {bar:30} {pos}/{len} releases, eta {eta}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        } else {
            ProgressBar::hidden()
        };
        bar.set_position(done);
        let _ = self.bar.set(bar);
    }

    fn stage(&self, what: &str) {
        self.bar().set_message(what.to_string());
    }

    fn release(&self, r: &ScanResult) {
        let bar = self.bar();
        let label = format!("{} {}", r.version, r.platform);
        let app = self.app;
        if bar.is_hidden() && !app.g.quiet && !app.json() {
            match &r.error {
                None => errln!("{label}: ok ({:.1} s)", r.seconds),
                Some(e) => errln!("{label}: {}: {e}", r.status.as_str()),
            }
        } else if let Some(e) = &r.error {
            bar.println(escape::text(&format!(
                "{label}: {}: {e}",
                r.status.as_str()
            )));
        }
        bar.inc(1);
    }

    fn finish(&self) {
        self.bar().finish_and_clear();
    }
}
