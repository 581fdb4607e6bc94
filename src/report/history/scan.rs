//! `history scan`: what a scan did.

use super::plural;
use crate::report::doc::{Block, Doc, Inline, Kind, Table, Term, facts, fmt};
use crate::report::emit::View;
use crate::report::escape;
use crate::store::history::{ScanStatus, Scanned};
use serde::Serialize;

/// `history scan`: the range and platforms asked, each release's outcome,
/// the counts, and the store written.
#[derive(Debug, Clone, Serialize)]
pub struct ScanView {
    pub range: String,
    pub platforms: Vec<String>,
    #[serde(flatten)]
    pub scanned: Scanned,
    pub store: String,
}

impl ScanView {
    /// The one-line summary.
    fn line(&self) -> String {
        let s = &self.scanned;
        format!(
            "{} {} scanned: {} analysed, {} already known, {} without a program, {} failed ({:.1} s)",
            s.results.len(),
            plural(s.results.len(), "release", "releases"),
            s.analysed,
            s.known,
            s.empty,
            s.failed,
            s.seconds
        )
    }

    fn failures(&self) -> impl Iterator<Item = &crate::store::history::ScanResult> {
        self.scanned
            .results
            .iter()
            .filter(|r| r.status == ScanStatus::Failed)
    }

    /// The exit status: 1 when a release failed.
    pub fn code(&self) -> i32 {
        if self.scanned.failed > 0 { 1 } else { 0 }
    }
}

impl View for ScanView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("History scan of ").c(self.range.clone()));
        let s = &self.scanned;
        d.push(facts(vec![
            ("platforms", Inline::names(&self.platforms)),
            (
                "releases",
                fmt::count(s.results.len(), "release", "releases").into(),
            ),
            ("analysed", fmt::n(s.analysed).into()),
            ("already known", fmt::n(s.known).into()),
            ("without a program", fmt::n(s.empty).into()),
            ("failed", fmt::n(s.failed).into()),
            ("time", format!("{:.1} s", s.seconds).into()),
            ("store", Inline::code(self.store.clone())),
        ]));
        let mut t = Table::of(&[
            ("version", Kind::Code),
            ("platform", Kind::Text),
            ("status", Kind::Text),
            ("error", Kind::Text),
        ]);
        for r in &s.results {
            t.text_row(vec![
                r.version.clone(),
                r.platform.clone(),
                r.status.as_str().to_string(),
                r.error.clone().unwrap_or_default(),
            ]);
        }
        if !s.results.is_empty() {
            d.section("releases", "Releases", vec![Block::Table(t)]);
        }
        d
    }

    /// The summary line, then one line per failed release.
    fn terminal(&self, _: &Term) -> Option<String> {
        let mut o = self.line();
        o.push('\n');
        for r in self.failures() {
            o.push_str(&format!(
                "  failed {} {}: {}\n",
                r.version,
                r.platform,
                r.error.as_deref().unwrap_or("")
            ));
        }
        Some(escape::text(&o).into_owned())
    }
}
