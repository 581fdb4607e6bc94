//! `history list`: the releases scanned, with what each build holds.

use super::{BuildSummary, MAX_SUMMARY_BYTES, PARSED_COST, Release};
use crate::store::{FactsStore, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;

/// A release as `history list` shows it: with how many items of each kind
/// its build holds.
#[derive(Debug, Clone, Serialize)]
pub struct ListedRelease {
    #[serde(flatten)]
    pub release: Release,
    pub counts: BTreeMap<String, u64>,
}

impl FactsStore {
    /// Every release recorded for `platform` (all when None), oldest
    /// first, with its build's item counts.
    pub fn list(&self, platform: Option<&str>) -> Result<Vec<ListedRelease>, StoreError> {
        let releases = self.releases(platform)?;
        let counts = self.item_counts()?;
        Ok(releases
            .into_iter()
            .map(|r| {
                let c = r
                    .digest
                    .as_ref()
                    .and_then(|d| counts.get(d).cloned())
                    .unwrap_or_default();
                ListedRelease {
                    release: r,
                    counts: c,
                }
            })
            .collect())
    }

    /// How many items of each kind every build has, by digest.
    pub fn item_counts(
        &self,
    ) -> Result<std::collections::HashMap<String, BTreeMap<String, u64>>, StoreError> {
        self.ensure_summaries()?;
        self.query(|c| {
            let mut st = c.prepare(
                "SELECT b.digest, s.summary FROM build_summary s JOIN builds b ON b.id = s.build_id",
            )?;
            let mut rows = st.query([])?;
            let mut out = std::collections::HashMap::new();
            while let Some(r) = rows.next()? {
                let digest: String = r.get(0)?;
                let json = r.get_ref(1)?.as_bytes().unwrap_or_default();
                self.charge((digest.len() + json.len()) as u64 * PARSED_COST)?;
                let summary = (json.len() <= MAX_SUMMARY_BYTES)
                    .then(|| serde_json::from_slice::<BuildSummary>(json).ok())
                    .flatten();
                match summary {
                    Some(s) => {
                        out.insert(digest, s.counts);
                    }
                    None => self.skip("a build summary: damaged".to_string()),
                }
            }
            Ok(out)
        })
    }
}
