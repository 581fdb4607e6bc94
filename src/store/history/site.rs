//! `history site`: every item of one platform's releases read at once, and
//! the texts they refer to (the site has a page per item and per release,
//! so it reads the items in one pass instead of one question per item).

use super::{MAX_VALUE_BYTES, Release};
use crate::store::{FactsStore, StoreError};
use rusqlite::params;
use std::collections::HashMap;
use std::sync::Arc;

/// The field of a kind's value that names a text in `texts` (prompts'
/// texts, workflows' scripts, tools' descriptions), if the kind has one.
pub fn text_fields(kind: &str) -> Option<&'static str> {
    match kind {
        "prompt" => Some("text_sha256"),
        "workflow" => Some("script_sha256"),
        "tool" => Some("description_sha256"),
        _ => None,
    }
}

/// One item over the releases of a platform: the index (in
/// [`SiteItems::releases`]) of each release that holds it, with its value
/// there as JSON text (shared between releases whose values are equal).
#[derive(Debug, Clone)]
pub struct ItemSeries {
    pub kind: String,
    pub name: String,
    pub values: Vec<(usize, Arc<str>)>,
}

/// Every analysed release of a platform, oldest first, and every item any
/// of them holds (sorted by kind, then name).
#[derive(Debug, Clone, Default)]
pub struct SiteItems {
    pub platform: String,
    pub releases: Vec<Release>,
    pub items: Vec<ItemSeries>,
}

impl FactsStore {
    /// Every item of `platform`'s analysed releases, in one read of the
    /// items table. Each value is charged to the command's budget once per
    /// distinct text (releases share them); a value past the cap on stored
    /// values is a damaged row, left out and noted.
    pub fn site_items(&self, platform: &str) -> Result<SiteItems, StoreError> {
        let releases = self.analysed_releases(platform)?;
        let mut of_build: HashMap<i64, Vec<usize>> = HashMap::new();
        for (i, r) in releases.iter().enumerate() {
            if let Some(id) = r.build_id {
                of_build.entry(id).or_default().push(i);
            }
        }
        let mut ids: Vec<i64> = of_build.keys().copied().collect();
        ids.sort_unstable();
        let mut interned: HashMap<Vec<u8>, Arc<str>> = HashMap::new();
        let mut at: HashMap<(String, String), usize> = HashMap::new();
        let mut items: Vec<ItemSeries> = Vec::new();
        self.query(|c| {
            let mut st = c.prepare("SELECT kind, name, value FROM items WHERE build_id = ?1")?;
            for id in &ids {
                let mut rows = st.query(params![id])?;
                while let Some(r) = rows.next()? {
                    let kind = r.get_ref(0)?.as_str().unwrap_or_default();
                    let name = r.get_ref(1)?.as_str().unwrap_or_default();
                    let value = r.get_ref(2)?.as_bytes().unwrap_or_default();
                    if value.len() > MAX_VALUE_BYTES || std::str::from_utf8(value).is_err() {
                        self.skip(format!(
                            "the {kind} item of build {id}: its value is not text of at most {} kB",
                            MAX_VALUE_BYTES >> 10
                        ));
                        continue;
                    }
                    let value = match interned.get(value) {
                        Some(v) => v.clone(),
                        None => {
                            self.charge(value.len() as u64 * 2 + 64)?;
                            let v: Arc<str> =
                                Arc::from(std::str::from_utf8(value).unwrap_or_default());
                            interned.insert(value.to_vec(), v.clone());
                            v
                        }
                    };
                    let key = (kind.to_string(), name.to_string());
                    let k = match at.get(&key) {
                        Some(&k) => k,
                        None => {
                            self.charge((kind.len() + name.len()) as u64 * 3 + 128)?;
                            items.push(ItemSeries {
                                kind: key.0.clone(),
                                name: key.1.clone(),
                                values: Vec::new(),
                            });
                            at.insert(key, items.len() - 1);
                            items.len() - 1
                        }
                    };
                    for &i in &of_build[id] {
                        self.charge(24)?;
                        items[k].values.push((i, value.clone()));
                    }
                }
            }
            Ok(())
        })?;
        for it in &mut items {
            it.values.sort_by_key(|(i, _)| *i);
        }
        items.sort_by(|a, b| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)));
        Ok(SiteItems {
            platform: platform.to_string(),
            releases,
            items,
        })
    }

    /// The texts (prompts, tools' descriptions, workflow scripts) stored under these SHA-256
    /// digests; a digest the store does not hold is left out.
    pub fn texts_by_sha(&self, shas: &[&str]) -> Result<HashMap<String, String>, StoreError> {
        self.query(|c| {
            let mut st = c.prepare("SELECT text FROM texts WHERE sha256 = ?1")?;
            let mut out = HashMap::new();
            for sha in shas {
                let mut rows = st.query(params![sha])?;
                if let Some(r) = rows.next()? {
                    let t = r.get_ref(0)?.as_str().unwrap_or_default();
                    self.charge(t.len() as u64 + 128)?;
                    out.insert(sha.to_string(), t.to_string());
                }
            }
            Ok(out)
        })
    }
}
