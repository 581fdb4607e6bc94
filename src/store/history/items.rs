//! The items of a build's facts, and the summary kept beside them.

use super::ItemKind;
use crate::analysis::analysed::Facts;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// What the timeline and `list` need of one build, kept beside its items
/// when it is recorded: reading every item of every release (half a
/// million rows once all versions are scanned) took seconds; one summary
/// row per build takes milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct BuildSummary {
    /// Items by kind.
    pub counts: BTreeMap<String, u64>,
    /// Flags by their kind (feature, event, config, other).
    pub flags: BTreeMap<String, u64>,
    pub prompt_bytes: u64,
    pub workflows: Vec<String>,
}

/// The hash that stands for an item's (kind, name) in a summary's name set.
/// 64 bits: a collision among the ~10⁵ names of all releases has odds of
/// about 10⁻⁹, and would only merge two names in the timeline's lists.
pub(in crate::store) fn name_hash(kind: &str, name: &str) -> i64 {
    let mut key = Vec::with_capacity(kind.len() + name.len() + 1);
    key.extend_from_slice(kind.as_bytes());
    key.push(0);
    key.extend_from_slice(name.as_bytes());
    crate::js::shape::fnv64(&key) as i64
}

/// A build's summary and its sorted name hashes, from its items (kind,
/// name, value as JSON).
pub fn summarise<'a>(
    items: impl IntoIterator<Item = (&'a str, &'a str, &'a Value)>,
) -> (BuildSummary, Vec<i64>) {
    let mut s = BuildSummary::default();
    let mut hashes = Vec::new();
    for (k, n, val) in items {
        *s.counts.entry(k.to_string()).or_default() += 1;
        match k {
            "flag" => {
                let kind = val["kind"].as_str().unwrap_or("other").to_string();
                *s.flags.entry(kind).or_default() += 1;
            }
            "prompt" => s.prompt_bytes += val["bytes"].as_u64().unwrap_or(0),
            "workflow" => s.workflows.push(n.to_string()),
            _ => {}
        }
        hashes.push(name_hash(k, n));
    }
    s.workflows.sort();
    hashes.sort_unstable();
    hashes.dedup();
    (s, hashes)
}

pub(super) fn hashes_blob(h: &[i64]) -> Vec<u8> {
    h.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A summary's name hashes, or None when the blob is not what
/// [`hashes_blob`] writes: whole 8-byte hashes, strictly ascending (so each
/// name once: one hash repeated 36,000 times with a 100 kB name made the
/// timeline copy that name for every repeat, a gigabyte from a 290 kB
/// store).
pub(in crate::store) fn blob_hashes(b: &[u8]) -> Option<Vec<i64>> {
    if !b.len().is_multiple_of(8) {
        return None;
    }
    let h: Vec<i64> = b
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    h.windows(2).all(|w| w[0] < w[1]).then_some(h)
}

/// The text hash an item's value refers to (a prompt's text, a workflow's
/// script), for `search`.
pub(super) fn text_ref(v: &Value) -> Option<&str> {
    v["text_sha256"]
        .as_str()
        .or(v["script_sha256"].as_str())
        .or(v["description_sha256"].as_str())
}

/// One named thing in one build, with the values whose change matters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub kind: ItemKind,
    pub name: String,
    pub value: Value,
}

pub(super) fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The items of a build's facts, and the texts (prompts, scripts) they
/// refer to by hash.
pub fn items(f: &Facts) -> (Vec<Item>, Vec<(String, String)>) {
    let mut out = Vec::new();
    let mut texts = Vec::new();
    let mut push = |kind: ItemKind, name: &str, value: Value| {
        out.push(Item {
            kind,
            name: name.to_string(),
            value,
        })
    };
    for w in &f.workflows {
        push(
            ItemKind::Workflow,
            &w.name,
            json!({
                "hidden": w.hidden,
                "script_sha256": w.script.as_ref().map(|s| s.sha256.clone()),
            }),
        );
    }
    for fl in &f.flags.flags {
        push(
            ItemKind::Flag,
            &fl.name,
            // A computed default names minified functions that change every
            // release: compared with the names erased, as the diff does.
            json!({"kind": fl.kind.as_str(), "defaults": crate::analysis::diff::facts::defaults(&fl.defaults)}),
        );
    }
    let keys = crate::analysis::diff::facts::gate_keys(&f.gates);
    for (g, key) in f.gates.iter().zip(&keys) {
        let conditions: Vec<String> = g
            .conditions
            .iter()
            .map(crate::analysis::diff::facts::condition_key)
            .collect();
        push(
            ItemKind::Gate,
            key,
            json!({"conditions": conditions.len(), "conditions_sha256": sha(&conditions.join("\n"))}),
        );
    }
    for r in &f.roles.functions {
        push(
            ItemKind::Role,
            r.role.as_str(),
            json!({"original": r.original, "workflow": r.workflow}),
        );
    }
    let s = &f.surface;
    for t in &s.tools {
        // A tool's description is a text like a prompt's: searchable, and
        // its versions shown as texts rather than as hashes.
        let h = sha(&t.description);
        texts.push((h.clone(), t.description.clone()));
        push(
            ItemKind::Tool,
            &t.name,
            json!({
                "schema_sha256": sha(&t.input_schema.to_string()),
                "description_sha256": h,
                "prompt_bytes": t.prompt_bytes,
            }),
        );
    }
    for p in &s.prompts {
        let h = sha(&p.text);
        texts.push((h.clone(), p.text.clone()));
        push(
            ItemKind::Prompt,
            &p.id,
            json!({"kind": p.kind, "title": p.title, "text_sha256": h, "bytes": p.bytes}),
        );
    }
    for e in &s.env {
        push(
            ItemKind::Env,
            &e.name,
            json!({"how": e.how, "default": e.default}),
        );
    }
    for x in &s.settings {
        push(
            ItemKind::Setting,
            &x.key,
            json!({"type": x.r#type, "default": x.default}),
        );
    }
    for c in &s.commands {
        push(
            ItemKind::Command,
            &c.name,
            json!({"kind": c.kind, "hidden": c.hidden, "aliases": c.aliases}),
        );
    }
    for m in &s.models {
        push(
            ItemKind::Model,
            &m.id,
            json!({"aliases": m.aliases, "used_as": m.uses}),
        );
    }
    for x in &s.schemas {
        let h = sha(&x.text);
        texts.push((h.clone(), x.text.clone()));
        push(
            ItemKind::Schema,
            &x.id,
            json!({"schema": x.schema, "field": x.field, "text_sha256": h, "bytes": x.bytes}),
        );
    }
    for (name, text) in &f.scripts {
        let _ = name;
        texts.push((sha(text), text.clone()));
    }
    // Roles and gates may repeat a name (two builders): the first wins, as
    // the diff pairs them.
    let mut seen = std::collections::HashSet::new();
    out.retain(|i| seen.insert((i.kind, i.name.clone())));
    (out, texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::history::timeline::sorted_difference;

    #[test]
    fn a_summary_counts_kinds_flag_kinds_prompt_bytes_and_names_once() {
        let f = json!({"kind": "feature"});
        let e = json!({"kind": "event"});
        let p = json!({"bytes": 120});
        let w = json!({});
        let items = [
            ("flag", "a", &f),
            ("flag", "b", &e),
            ("prompt", "p1", &p),
            ("prompt", "p2", &p),
            ("workflow", "z", &w),
            ("workflow", "y", &w),
        ];
        let (s, h) = summarise(items);
        assert_eq!(s.counts["flag"], 2);
        assert_eq!(s.counts["prompt"], 2);
        assert_eq!((s.flags["feature"], s.flags["event"]), (1, 1));
        assert_eq!(s.prompt_bytes, 240);
        assert_eq!(s.workflows, ["y", "z"]);
        assert_eq!(h.len(), 6);
        assert!(h.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        // The kind is part of the key: a flag and an env var of one name differ.
        assert_ne!(name_hash("flag", "x"), name_hash("env", "x"));
        assert_eq!(blob_hashes(&hashes_blob(&h)), Some(h.clone()));
        // Repeated, unsorted or cut short: not a summary's hashes.
        assert_eq!(blob_hashes(&hashes_blob(&[1, 1])), None);
        assert_eq!(blob_hashes(&hashes_blob(&[2, 1])), None);
        assert_eq!(blob_hashes(&[0; 7]), None);
        let (_, h2) = summarise([("flag", "a", &f), ("flag", "c", &f)]);
        let added: Vec<i64> = sorted_difference(&h2, &h).collect();
        let removed: Vec<i64> = sorted_difference(&h, &h2).collect();
        assert_eq!(added, [name_hash("flag", "c")]);
        assert_eq!(removed.len(), 5);
    }
}
