//! `history`'s answers: one view per question (`scan`, `list`, `show`,
//! `changes`, `search`; the timeline is [`super::timeline`]), and the
//! label every answer from a store carries: where it comes from, and the
//! damaged rows left out of it.

use super::doc::{Block, Doc, Term};
use super::emit::{Format, View};
use super::escape;
use crate::store::FactsStore;
use serde::{Serialize, Serializer};

mod changes;
mod export;
pub mod git;
mod list;
mod merge;
mod scan;
mod search;
mod show;
pub mod site;

pub use changes::ChangesView;
pub use export::{ExportJson, csv};
pub use list::ListView;
pub use merge::MergeView;
pub use scan::ScanView;
pub use search::SearchView;
pub use show::ShowView;

/// Where a history answer comes from: the store's path, and whether this
/// machine made it. A store made elsewhere (a published history, a copied
/// cache) answers with what its author recorded: every answer from it says
/// so.
#[derive(Debug, Clone, Serialize)]
pub struct Origin {
    pub path: String,
    pub made_here: bool,
    /// The stores a merged store was made from (`history merge`), each
    /// with whether this machine made it; absent for a store that was not
    /// merged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<crate::store::history::Source>,
}

impl Origin {
    pub fn of(store: &FactsStore) -> Origin {
        Origin {
            path: store.path().display().to_string(),
            made_here: store.made_here(),
            merged_from: store.merged_from(),
        }
    }

    /// The label a human answer from a store made elsewhere starts with.
    pub fn note(&self) -> Option<String> {
        (!self.made_here).then(|| {
            let mut n = format!(
                "history from {}, a store not marked as made on this machine (made elsewhere, or before stores were marked): what it says is what its author recorded",
                self.path
            );
            if !self.merged_from.is_empty() {
                let from: Vec<String> = self
                    .merged_from
                    .iter()
                    .map(|s| {
                        format!(
                            "{} ({} {}, {})",
                            s.path,
                            s.releases,
                            plural(s.releases as usize, "release", "releases"),
                            if s.made_here { "made here" } else { "made elsewhere" }
                        )
                    })
                    .collect();
                n.push_str(&format!("; merged from {}", from.join(", ")));
            }
            n
        })
    }

    /// `text` after the label, when there is one (terminal text, escaped).
    fn before(&self, text: String) -> String {
        match self.note() {
            Some(n) => escape::text(&format!("({n})\n")).into_owned() + &text,
            None => text,
        }
    }

    /// `d` with the label first, when there is one.
    fn on(&self, mut d: Doc) -> Doc {
        if let Some(n) = self.note() {
            d.blocks.insert(0, Block::Note(n.into()));
        }
        d
    }
}

/// A history answer with where it comes from (`store`) and the damaged
/// rows left out of it (`skipped`). As JSON: the answer's keys and those
/// two, every key in name order, as these answers have always been printed
/// (they were made as a `serde_json::Value`, whose maps are sorted); for a
/// person: the label of a store made elsewhere first.
#[derive(Debug, Clone)]
pub struct Labelled<T> {
    pub answer: T,
    pub store: Origin,
    pub skipped: Vec<String>,
}

impl<T> Labelled<T> {
    /// `answer`, labelled with `store` and the rows its reads left out so
    /// far.
    pub fn new(store: &FactsStore, answer: T) -> Labelled<T> {
        Labelled {
            answer,
            store: Origin::of(store),
            skipped: store.skipped(),
        }
    }
}

impl<T: Serialize> Serialize for Labelled<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut v = serde_json::to_value(&self.answer).map_err(S::Error::custom)?;
        if let Some(m) = v.as_object_mut() {
            m.insert(
                "store".into(),
                serde_json::to_value(&self.store).unwrap_or_default(),
            );
            m.insert("skipped".into(), serde_json::json!(self.skipped));
        }
        v.serialize(s)
    }
}

impl<T: View> View for Labelled<T> {
    fn doc(&self) -> Doc {
        self.store.on(self.answer.doc())
    }

    fn doc_for(&self, format: Format) -> Doc {
        self.store.on(self.answer.doc_for(format))
    }

    fn terminal(&self, term: &Term) -> Option<String> {
        self.answer.terminal(term).map(|t| self.store.before(t))
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// "2.1.200 … 2.1.230" for a list of versions.
fn span(versions: &[String]) -> String {
    match versions {
        [] => String::new(),
        [one] => one.clone(),
        [first, .., last] => format!("{first} … {last}"),
    }
}

/// The first `max` names, then how many more.
fn ellipsis(names: &[String], max: usize) -> String {
    if names.len() <= max {
        names.join(", ")
    } else {
        format!("{} and {} more", names[..max].join(", "), names.len() - max)
    }
}

#[cfg(test)]
mod tests;
