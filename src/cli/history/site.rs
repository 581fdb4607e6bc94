//! `history site DIR`: the history as a folder of pages (see
//! `report::history::site`), written where only what changed is written.

use super::SiteArgs;
use crate::cli::App;
use crate::report::emit::print_json;
use crate::report::history::Origin;
use crate::report::history::site::{SiteInput, SiteWritten, write_site};
use crate::report::provenance::Provenance;
use crate::store::FactsStore;
use crate::store::history::text_fields;
use serde::Serialize;
use std::time::Instant;

/// What `--json` prints.
#[derive(Serialize)]
struct SiteSummary {
    platform: String,
    platforms: Vec<String>,
    releases: usize,
    items: usize,
    #[serde(flatten)]
    written: SiteWritten,
    seconds: f64,
    store: Origin,
    skipped: Vec<String>,
}

pub fn run(app: &App, store: &FactsStore, a: &SiteArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let say = |what: String| {
        if !app.g.quiet {
            errln!("{what} ({:.1} s)", started.elapsed().as_secs_f64());
        }
    };
    let platforms = store.platforms(None).map_err(super::err)?;
    let primary = match a.platform.as_deref() {
        Some(p) => store.one_platform(Some(p)).map_err(super::err)?,
        None => platforms[0].clone(),
    };
    let timeline = store.timeline(&primary)?;
    let items = store.site_items(&primary)?;
    let mut others = Vec::new();
    for p in platforms.iter().filter(|p| **p != primary) {
        others.push(store.site_items(p)?);
    }
    let mut shas: Vec<String> = Vec::new();
    for it in &items.items {
        let Some(field) = text_fields(&it.kind) else {
            continue;
        };
        let mut last: Option<&std::sync::Arc<str>> = None;
        for (_, v) in &it.values {
            if last.is_some_and(|l| std::sync::Arc::ptr_eq(l, v)) {
                continue;
            }
            last = Some(v);
            if let Some(s) = serde_json::from_str::<serde_json::Value>(v)
                .ok()
                .and_then(|v| v.get(field)?.as_str().map(str::to_string))
            {
                shas.push(s);
            }
        }
    }
    shas.sort();
    shas.dedup();
    let refs: Vec<&str> = shas.iter().map(String::as_str).collect();
    let texts = store.texts_by_sha(&refs)?;
    say(format!(
        "read {} releases of {primary}, {} items, {} texts",
        items.releases.len(),
        items.items.len(),
        texts.len()
    ));
    let (n_releases, n_items) = (items.releases.len(), items.items.len());
    let input = SiteInput {
        primary: items,
        others,
        timeline,
        texts,
        provenance: Provenance::of_this_run(),
        made_here: store.made_here(),
    };
    let written = write_site(&a.dir, &input, a.force)?;
    let summary = SiteSummary {
        platform: primary,
        platforms,
        releases: n_releases,
        items: n_items,
        seconds: (started.elapsed().as_secs_f64() * 100.0).round() / 100.0,
        store: Origin::of(store),
        skipped: store.skipped(),
        written,
    };
    if app.g.json {
        print_json(&summary)?;
    } else if !app.g.quiet {
        let w = &summary.written;
        errln!(
            "{}: {} pages, {} files: {} written, {} kept (unchanged), {} removed, in {:.1} s; open {}/index.html",
            w.dir,
            w.pages,
            w.files,
            w.written,
            w.kept,
            w.removed,
            summary.seconds,
            w.dir
        );
    }
    Ok(0)
}
