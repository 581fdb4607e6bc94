//! `history list`: the releases scanned, with what each build holds.

use super::{BuildSummary, MAX_SUMMARY_BYTES, PARSED_COST};
use crate::store::{FactsStore, StoreError};
use std::collections::BTreeMap;

impl FactsStore {
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
