//! `history changes`: one release against the one scanned before it.

use super::ellipsis;
use crate::report::doc::{Doc, Inline, Term, facts};
use crate::report::emit::View;
use crate::report::escape;
use crate::store::history::{ChangesAnswer, FACT_SECTIONS};
use serde::Serialize;
use serde_json::Value;

/// `history changes`. As JSON: the answer's object (the diff's sections,
/// the two versions and the platform), serialised here whichever way it
/// came (never a stored text passed through).
#[derive(Debug, Clone)]
pub struct ChangesView(pub ChangesAnswer);

impl Serialize for ChangesView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.answer.serialize(s)
    }
}

/// The lists of a section's answer that are shown, with their labels.
const LISTS: [(&str, &str); 7] = [
    ("added", "added"),
    ("removed", "removed"),
    ("changed", "changed"),
    ("kind_changed", "kind changed"),
    ("default_changed", "default changed"),
    ("only_a", "gone"),
    ("only_b", "new"),
];

/// A diff list entry's name: a string, or an object's name/key/id field.
fn item_label(v: &Value) -> String {
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

impl ChangesView {
    fn title(&self) -> String {
        let a = &self.0;
        format!(
            "{} against {} ({}), from stored facts",
            a.version, a.previous, a.platform
        )
    }

    /// Each section the answer holds, with what changed in it ("no change"
    /// when nothing did). The sections are the answer's own keys (the diff
    /// is flattened into it).
    fn sections(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for s in FACT_SECTIONS {
            let key = serde_json::to_value(s).unwrap_or_default();
            let key = key.as_str().unwrap_or_default();
            let Some(sec) = self.0.answer.get(key) else {
                continue;
            };
            let mut parts = Vec::new();
            for (field, label) in LISTS {
                let Some(list) = sec.get(field).and_then(|l| l.as_array()) else {
                    continue;
                };
                if list.is_empty() {
                    continue;
                }
                let names: Vec<String> = list.iter().map(item_label).collect();
                parts.push(format!("{label} {}: {}", names.len(), ellipsis(&names, 12)));
            }
            let what = if parts.is_empty() {
                "no change".to_string()
            } else {
                parts.join("; ")
            };
            out.push((key.to_string(), what));
        }
        out
    }
}

impl View for ChangesView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(self.title());
        let rows = self.sections();
        d.push(facts(
            rows.iter()
                .map(|(k, v)| (k.as_str(), Inline::from(v.clone())))
                .collect(),
        ));
        d
    }

    fn terminal(&self, _: &Term) -> Option<String> {
        let mut o = self.title();
        o.push('\n');
        for (key, what) in self.sections() {
            o.push_str(&format!("  {key:<9} {what}\n"));
        }
        Some(escape::text(&o).into_owned())
    }
}
