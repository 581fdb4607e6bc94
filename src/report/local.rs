//! Views of this machine rather than of a build: the facts store (`cache`),
//! a fetched build (`fetch`) and the installations found (`installs`).

use super::doc::{Block, Doc, Inline, Kind, Table, Term, facts, fmt};
use super::emit::View;
use super::escape;
use crate::source::installs::InstallReport;
use crate::store::StoreInfo;
use serde::Serialize;

/// `cache info`.
#[derive(Serialize)]
pub struct CacheInfo(pub StoreInfo);

impl CacheInfo {
    fn rows(&self) -> Vec<(&'static str, String)> {
        let info = &self.0;
        vec![
            ("store", info.path.clone()),
            ("size", format!("{} bytes", fmt::num(info.bytes))),
            ("schema", info.schema_version.to_string()),
            ("analysis version", info.analysis_version.to_string()),
            ("builds", fmt::num(info.builds)),
            ("files seen", fmt::num(info.files)),
            (
                "facts",
                format!(
                    "{} of this analysis version ({} bytes), {} of others (ignored)",
                    fmt::num(info.facts_current),
                    fmt::num(info.facts_bytes),
                    fmt::num(info.facts_other_versions)
                ),
            ),
        ]
    }
}

impl View for CacheInfo {
    fn doc(&self) -> Doc {
        let mut d = Doc::new("Facts store").bare();
        d.push(facts(
            self.rows()
                .into_iter()
                .map(|(k, v)| (k, Inline::from(v)))
                .collect(),
        ));
        d
    }

    /// Key and value per line, keys aligned, never wrapped (a path is read
    /// whole).
    fn terminal(&self, _: &Term) -> Option<String> {
        let rows = self.rows();
        let w = rows.iter().map(|p| p.0.chars().count()).max().unwrap_or(0);
        Some(
            rows.iter()
                .map(|(k, v)| format!("{k:<w$}  {}\n", escape::display(v)))
                .collect(),
        )
    }
}

/// `cache clear`.
#[derive(Serialize)]
pub struct CacheCleared {
    pub cleared: String,
}

impl View for CacheCleared {
    fn doc(&self) -> Doc {
        let mut d = Doc::new("Facts store").bare();
        d.push(Block::Note(
            Inline::from("cleared ").c(self.cleared.clone()),
        ));
        d
    }

    fn terminal(&self, _: &Term) -> Option<String> {
        Some(format!("cleared {}\n", escape::display(&self.cleared)))
    }
}

/// `fetch`: where the verified build is.
#[derive(Serialize)]
pub struct FetchView {
    pub package: String,
    pub version: String,
    pub platform: String,
    pub path: String,
    pub integrity: String,
    pub cache_hit: bool,
}

impl View for FetchView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(
            Inline::from("Fetched ")
                .c(format!("{}@{}", self.package, self.version))
                .t(format!(" ({})", self.platform)),
        );
        d.push(facts(vec![
            ("path", Inline::code(self.path.clone())),
            ("integrity", Inline::code(self.integrity.clone())),
            (
                "from",
                if self.cache_hit {
                    "the cache"
                } else {
                    "the registry, verified"
                }
                .into(),
            ),
        ]));
        d
    }

    /// The executable's path alone, for `$(cc-teardown fetch …)`.
    fn terminal(&self, _: &Term) -> Option<String> {
        Some(escape::text(&format!("{}\n", self.path)).into_owned())
    }
}

/// `installs`.
#[derive(Serialize)]
pub struct InstallsView(pub InstallReport);

impl InstallsView {
    fn table(&self) -> Table {
        let mut t = Table::of(&[
            ("", Kind::Text),
            ("kind", Kind::Text),
            ("version", Kind::Text),
            ("path", Kind::Text),
            ("resolved", Kind::Text),
            ("bundle sha256", Kind::Text),
        ]);
        for i in &self.0.installs {
            t.text_row(vec![
                if i.selected {
                    "*".into()
                } else {
                    String::new()
                },
                format!("{:?}", i.kind).to_lowercase(),
                i.version.clone().unwrap_or_else(|| "unknown".into()),
                i.path.clone(),
                if i.resolved == i.path {
                    "=".into()
                } else {
                    i.resolved.clone()
                },
                i.bundle_sha256.as_ref().map_or_else(
                    || i.note.clone().unwrap_or_default(),
                    |s| s[..16].to_string(),
                ),
            ]);
        }
        t
    }

    /// What was skipped and the warnings, one line each.
    fn notes(&self) -> Vec<String> {
        let r = &self.0;
        let mut out = Vec::new();
        for s in &r.skipped {
            match &s.resolved {
                Some(x) if *x != s.path => {
                    out.push(format!("skipped: {} → {x}: {}", s.path, s.reason))
                }
                _ => out.push(format!("skipped: {}: {}", s.path, s.reason)),
            }
        }
        for w in &r.warnings {
            out.push(format!("warning: {w}"));
        }
        out
    }
}

const NONE_FOUND: &str =
    "no Claude Code installation found (looked at PATH and the installers' locations)";
const SELECTED: &str = "* what the shell runs (first claude on PATH)";

impl View for InstallsView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new("Claude Code installations").bare();
        if self.0.installs.is_empty() {
            d.push(Block::Note(NONE_FOUND.into()));
        } else {
            d.push(Block::Table(self.table()));
            d.push(Block::Note(SELECTED.into()));
        }
        for n in self.notes() {
            d.push(Block::Note(n.into()));
        }
        d
    }

    fn terminal(&self, term: &Term) -> Option<String> {
        let mut o = String::new();
        if self.0.installs.is_empty() {
            o.push_str(NONE_FOUND);
            o.push('\n');
        } else {
            o.push_str(&super::doc::table_text(
                &self.table(),
                &Term {
                    color: false,
                    width: term.width,
                },
            ));
            o.push_str(SELECTED);
            o.push('\n');
        }
        for n in self.notes() {
            // Names from the tree: escaped, as every human line is.
            o.push_str(&escape::text(&n));
            o.push('\n');
        }
        Some(o)
    }
}
