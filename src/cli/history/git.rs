//! `history export --format git DIR`: the platform asked (else the first
//! scanned), its releases, and one call that appends them to the
//! repository; progress on stderr, a summary at the end.

use super::ExportArgs;
use crate::cli::App;
use crate::report::emit::print_json;
use crate::report::history::Labelled;
use crate::report::history::git::{ExportProgress, export};
use crate::store::FactsStore;
use indicatif::{ProgressBar, ProgressStyle};
use std::cell::OnceCell;
use std::time::{Duration, Instant};

pub fn run(app: &App, store: &FactsStore, a: &ExportArgs) -> anyhow::Result<i32> {
    let dir = match (&a.dir, &a.output) {
        (Some(_), Some(_)) => usage!("say where once: DIR or -o DIR"),
        (Some(d), None) | (None, Some(d)) => d.clone(),
        (None, None) => usage!("--format git writes a repository: say where with DIR"),
    };
    let platform = match &a.platform {
        Some(p) => p.clone(),
        None => store
            .platforms(None)
            .map_err(super::err)?
            .into_iter()
            .next()
            .unwrap_or_default(),
    };
    let releases = store.analysed_releases(&platform)?;
    if releases.is_empty() {
        usage!(
            "no {platform} release is scanned (cc-teardown history scan RANGE --platform {platform})"
        );
    }
    let bar = Bar {
        app,
        bar: OnceCell::new(),
        total: std::cell::Cell::new(0),
        started: Instant::now(),
    };
    let done = export(store, &dir, &platform, &releases, &bar)?;
    if app.g.json {
        print_json(&Labelled::new(store, done))?;
        return Ok(0);
    }
    if !app.g.quiet {
        if !store.made_here() {
            errln!(
                "note: {} is not marked as made on this machine; every commit and README says where the facts come from",
                store.path().display()
            );
        }
        let head = done
            .head
            .as_ref()
            .map(|h| format!("{} ({})", h.tag, &h.commit[..h.commit.len().min(12)]))
            .unwrap_or_default();
        match (done.commits.first(), done.commits.last()) {
            (Some(first), Some(last)) => {
                let tags = if first.tag == last.tag {
                    first.tag.clone()
                } else {
                    format!("{} … {}", first.tag, last.tag)
                };
                errln!(
                    "{}: appended {} commit{} to {} ({tags}); head {head}",
                    done.output,
                    done.appended,
                    if done.appended == 1 { "" } else { "s" },
                    done.branch,
                )
            }
            _ => errln!("{}: up to date; head {head}", done.output),
        }
    }
    Ok(0)
}

/// Progress on stderr: a bar on a terminal; otherwise a line every 25
/// releases (and the last), unless quiet or JSON.
struct Bar<'a> {
    app: &'a App,
    bar: OnceCell<ProgressBar>,
    total: std::cell::Cell<usize>,
    started: Instant,
}

impl ExportProgress for Bar<'_> {
    fn start(&self, total: usize) {
        self.total.set(total);
        let bar = if self.app.progress() {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template("{msg:20} {bar:30} {pos}/{len} commits, eta {eta}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        } else {
            ProgressBar::hidden()
        };
        let _ = self.bar.set(bar);
    }

    fn release(&self, version: &str) {
        let Some(bar) = self.bar.get() else { return };
        bar.inc(1);
        bar.set_message(version.to_string());
        let (n, total) = (bar.position(), self.total.get() as u64);
        if bar.is_hidden() && !self.app.g.quiet && !self.app.json() && (n % 25 == 0 || n == total) {
            errln!(
                "{n}/{total} commits ({version}), {:.1} s",
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}
