//! `history search`: the items that hold a text, and in which versions.

use super::{Origin, span};
use crate::report::doc::{Block, Doc, Inline, Kind, Table, Term};
use crate::report::emit::View;
use crate::report::escape;
use crate::store::FactsStore;
use crate::store::history::Hit;
use serde::Serialize;

/// `history search`. Its JSON is serialised directly, in this field order
/// (a search may answer megabytes: no `serde_json::Value` in between).
#[derive(Debug, Clone, Serialize)]
pub struct SearchView {
    pub hits: Vec<Hit>,
    pub skipped: Vec<String>,
    pub store: Origin,
    pub text: String,
}

impl SearchView {
    pub fn new(store: &FactsStore, text: &str, hits: Vec<Hit>) -> SearchView {
        SearchView {
            hits,
            skipped: store.skipped(),
            store: Origin::of(store),
            text: text.to_string(),
        }
    }

    /// The exit status: 1 when no release holds the text.
    pub fn code(&self) -> i32 {
        if self.hits.is_empty() { 1 } else { 0 }
    }

    fn nowhere(&self) -> String {
        format!("{:?} is in no release scanned", self.text)
    }
}

impl View for SearchView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("Releases holding ").c(self.text.clone()));
        if self.hits.is_empty() {
            d.push(Block::Note(self.nowhere().into()));
        } else {
            let mut t = Table::of(&[
                ("kind", Kind::Text),
                ("name", Kind::Code),
                ("in", Kind::Text),
                ("platform", Kind::Text),
                ("releases", Kind::Number),
                ("versions", Kind::Text),
            ]);
            for h in &self.hits {
                t.text_row(vec![
                    h.kind.clone(),
                    h.name.clone(),
                    h.r#in.as_str().to_string(),
                    h.platform.clone(),
                    h.versions.len().to_string(),
                    span(&h.versions),
                ]);
            }
            d.push(Block::Table(t));
        }
        self.store.on(d)
    }

    /// One line per item: kind, name, where, how many versions, which.
    fn terminal(&self, _: &Term) -> Option<String> {
        let mut o = String::new();
        if self.hits.is_empty() {
            o.push_str(&self.nowhere());
            o.push('\n');
        }
        for h in &self.hits {
            o.push_str(&format!(
                "{} {} ({} {}, {}): {}\n",
                h.kind,
                h.name,
                h.r#in.as_str(),
                h.platform,
                h.versions.len(),
                span(&h.versions)
            ));
        }
        Some(self.store.before(escape::text(&o).into_owned()))
    }
}
