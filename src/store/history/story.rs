//! `history show`: one item's story over the releases scanned.

use super::{
    HistoryError, ItemKind, MAX_VALUE_BYTES, PARSED_COST, Release, StoredValue, parse_bounded,
};
use crate::store::{FactsStore, StoreError};
use rusqlite::params;
use serde::Serialize;
use serde_json::Value;

/// The answer of `history show`: an item's story on each platform that
/// has releases scanned.
#[derive(Debug, Clone)]
pub struct ShowAnswer {
    pub kind: ItemKind,
    pub name: String,
    pub stories: Vec<Story>,
    /// The runs of versions where the platforms scanned differ (the item
    /// on some of them only, or with other values).
    pub differences: Vec<super::PlatformSpan>,
    /// Names of that kind like the one asked, when it was never seen.
    pub similar: Vec<String>,
}

impl ShowAnswer {
    /// Whether any release holds the item.
    pub fn found(&self) -> bool {
        self.stories.iter().any(|s| s.first_seen.is_some())
    }

    /// Whether every platform tells the same story (then it is told once).
    pub fn platforms_agree(&self) -> bool {
        self.differences.is_empty()
            && self.stories.windows(2).all(|w| {
                w[0].first_seen == w[1].first_seen
                    && w[0].last_seen == w[1].last_seen
                    && w[0].removed_in == w[1].removed_in
                    && w[0].changes.len() == w[1].changes.len()
            })
    }
}

impl FactsStore {
    /// When item (`kind`, `name`) appeared, changed and went, on `platform`
    /// (every platform scanned when None).
    pub fn show(
        &self,
        kind: ItemKind,
        name: &str,
        platform: Option<&str>,
    ) -> Result<ShowAnswer, HistoryError> {
        let mut stories: Vec<Story> = Vec::new();
        let mut overs = Vec::new();
        for p in self.platforms(platform)? {
            let over = self.item_over_releases(kind.as_str(), name, &p)?;
            if over.is_empty() {
                continue;
            }
            stories.push(story(kind.as_str(), name, &p, &over, &mut |n| {
                self.charge_answer(n)
            })?);
            overs.push((p, over));
        }
        let differences = if stories.iter().any(|s| s.first_seen.is_some()) {
            super::platforms::differences(&overs, &mut |n| self.charge_answer(n))?
        } else {
            Vec::new()
        };
        drop(overs);
        let mut answer = ShowAnswer {
            kind,
            name: name.to_string(),
            stories,
            differences,
            similar: Vec::new(),
        };
        if !answer.found() {
            answer.similar = self
                .item_names_like(Some(kind.as_str()), name, 8)?
                .into_iter()
                .map(|(_, n)| n)
                .collect();
        }
        Ok(answer)
    }

    /// The value of item (kind, name) in each scanned release of
    /// `platform` (None where the release lacks it). Each build's value is
    /// read and parsed once, however many releases share the build (a
    /// megabyte value parsed once per release took gigabytes); a value past
    /// [`MAX_VALUE_BYTES`] or that is not JSON is a damaged row, left out.
    pub fn item_over_releases(
        &self,
        kind: &str,
        name: &str,
        platform: &str,
    ) -> Result<Vec<(Release, Option<StoredValue>)>, StoreError> {
        let releases = self.analysed_releases(platform)?;
        let present: std::collections::HashMap<i64, StoredValue> = self.query(|c| {
            let mut st = c.prepare(
                "SELECT value FROM items WHERE build_id = ?1 AND kind = ?2 AND name = ?3",
            )?;
            let mut out = std::collections::HashMap::new();
            let mut seen = std::collections::HashSet::new();
            for id in releases.iter().filter_map(|r| r.build_id) {
                if !seen.insert(id) {
                    continue;
                }
                let mut rows = st.query(params![id, kind, name])?;
                let Some(r) = rows.next()? else { continue };
                let text = r.get_ref(0)?.as_bytes().unwrap_or_default();
                if text.len() <= MAX_VALUE_BYTES {
                    self.charge(text.len() as u64 * PARSED_COST)?;
                }
                match parse_bounded(text, MAX_VALUE_BYTES) {
                    Some(v) => {
                        out.insert(
                            id,
                            StoredValue {
                                value: std::rc::Rc::new(v),
                                bytes: text.len() as u64,
                            },
                        );
                    }
                    None => self.skip(format!(
                        "the {kind} item of build {id}: its value is not JSON of at most {} kB",
                        MAX_VALUE_BYTES >> 10
                    )),
                }
            }
            Ok(out)
        })?;
        Ok(releases
            .into_iter()
            .map(|r| {
                let v = r.build_id.and_then(|id| present.get(&id).cloned());
                (r, v)
            })
            .collect())
    }
}

/// The story of one item over the releases scanned.
#[derive(Debug, Clone, Serialize)]
pub struct Story {
    pub name: String,
    pub kind: String,
    pub platform: String,
    pub first_seen: Option<String>,
    pub last_seen: Option<String>,
    /// The first scanned release after `last_seen`, when there is one.
    pub removed_in: Option<String>,
    pub changes: Vec<Change>,
    /// Scanned releases between first and last seen that lack it.
    pub gaps: Vec<String>,
    pub scanned: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub version: String,
    /// `added`, `removed`, `returned`, or the value's field that changed.
    pub what: String,
    pub from: Value,
    pub to: Value,
}

/// Read an item's presence over the releases into its story.
/// Every value the story copies is charged to `charge` first (its text
/// times [`PARSED_COST`]); the story stops with the error it returns.
pub fn story<E>(
    kind: &str,
    name: &str,
    platform: &str,
    over: &[(Release, Option<StoredValue>)],
    charge: &mut dyn FnMut(u64) -> Result<(), E>,
) -> Result<Story, E> {
    let mut s = Story {
        name: name.to_string(),
        kind: kind.to_string(),
        platform: platform.to_string(),
        first_seen: None,
        last_seen: None,
        removed_in: None,
        changes: Vec::new(),
        gaps: Vec::new(),
        scanned: over.len(),
    };
    let mut prev: Option<&Value> = None;
    let mut was_present = false;
    let mut absent_since: Vec<String> = Vec::new();
    let mut prev_bytes = 0u64;
    for (r, stored) in over {
        match stored {
            Some(StoredValue { value: v, bytes }) => {
                let v: &Value = v;
                if s.first_seen.is_none() {
                    charge(bytes * PARSED_COST + 256)?;
                    s.first_seen = Some(r.version.clone());
                    s.changes.push(Change {
                        version: r.version.clone(),
                        what: "added".into(),
                        from: Value::Null,
                        to: v.clone(),
                    });
                } else if !was_present {
                    charge(bytes * PARSED_COST + 256)?;
                    s.gaps.append(&mut absent_since);
                    s.changes.push(Change {
                        version: r.version.clone(),
                        what: "returned".into(),
                        from: Value::Null,
                        to: v.clone(),
                    });
                } else if let Some(p) = prev
                    && p != v
                {
                    // The fields that differ, of both values at most.
                    charge((bytes + prev_bytes) * PARSED_COST + 256)?;
                    for (field, from, to) in value_changes(p, v) {
                        s.changes.push(Change {
                            version: r.version.clone(),
                            what: field,
                            from,
                            to,
                        });
                    }
                }
                absent_since.clear();
                s.last_seen = Some(r.version.clone());
                prev = Some(v);
                prev_bytes = *bytes;
                was_present = true;
            }
            None => {
                if was_present {
                    charge(prev_bytes * PARSED_COST + 256)?;
                    s.changes.push(Change {
                        version: r.version.clone(),
                        what: "removed".into(),
                        from: prev.cloned().unwrap_or(Value::Null),
                        to: Value::Null,
                    });
                }
                if s.first_seen.is_some() {
                    charge(64)?;
                    absent_since.push(r.version.clone());
                }
                was_present = false;
            }
        }
    }
    // Absent at the end: removed in the first release after the last seen.
    if !was_present {
        s.removed_in = absent_since.first().cloned();
    }
    Ok(s)
}

/// The fields of two item values that differ: (field, from, to); a value
/// that is not an object is the field `value`.
pub fn value_changes(a: &Value, b: &Value) -> Vec<(String, Value, Value)> {
    match (a.as_object(), b.as_object()) {
        (Some(x), Some(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter(|k| x.get(*k) != y.get(*k))
                .map(|k| {
                    (
                        k.clone(),
                        x.get(k).cloned().unwrap_or(Value::Null),
                        y.get(k).cloned().unwrap_or(Value::Null),
                    )
                })
                .collect()
        }
        _ if a != b => vec![("value".into(), a.clone(), b.clone())],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rel(v: &str) -> Release {
        Release::scanned_for_tests(v)
    }

    #[test]
    fn a_story_has_first_last_changes_gaps_and_removal() {
        let over = vec![
            (rel("1.0.0"), None),
            (
                rel("1.0.1"),
                Some(json!({"kind": "feature", "defaults": [false]})),
            ),
            (
                rel("1.0.2"),
                Some(json!({"kind": "feature", "defaults": [true]})),
            ),
            (rel("1.0.3"), None),
            (
                rel("1.0.4"),
                Some(json!({"kind": "feature", "defaults": [true]})),
            ),
            (rel("1.0.5"), None),
        ];
        let over: Vec<(Release, Option<StoredValue>)> = over
            .into_iter()
            .map(|(r, v)| (r, v.map(StoredValue::from)))
            .collect();
        let s = story("flag", "f", "p", &over, &mut |_| Ok::<(), ()>(())).unwrap();
        assert_eq!(s.first_seen.as_deref(), Some("1.0.1"));
        assert_eq!(s.last_seen.as_deref(), Some("1.0.4"));
        assert_eq!(s.removed_in.as_deref(), Some("1.0.5"));
        assert_eq!(s.gaps, ["1.0.3"]);
        let what: Vec<(&str, &str)> = s
            .changes
            .iter()
            .map(|c| (c.version.as_str(), c.what.as_str()))
            .collect();
        assert_eq!(
            what,
            [
                ("1.0.1", "added"),
                ("1.0.2", "defaults"),
                ("1.0.3", "removed"),
                ("1.0.4", "returned"),
                ("1.0.5", "removed")
            ]
        );
        assert_eq!(s.changes[1].from, json!([false]));
        assert_eq!(s.changes[1].to, json!([true]));
    }

    #[test]
    fn an_item_present_to_the_end_is_not_removed() {
        let over = vec![
            (rel("1.0.0"), Some(json!({}))),
            (rel("1.0.1"), Some(json!({}))),
        ];
        let over: Vec<(Release, Option<StoredValue>)> = over
            .into_iter()
            .map(|(r, v)| (r, v.map(StoredValue::from)))
            .collect();
        let s = story("workflow", "w", "p", &over, &mut |_| Ok::<(), ()>(())).unwrap();
        assert_eq!(s.removed_in, None);
        assert!(s.gaps.is_empty());
        assert_eq!(s.changes.len(), 1);
    }
}
