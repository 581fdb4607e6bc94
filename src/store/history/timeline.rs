//! `history timeline`: every release's figures and what came and went.

use super::items::blob_hashes;
use super::{BuildSummary, MAX_SUMMARY_BYTES, PARSED_COST, Release};
use crate::store::{FactsStore, StoreError};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;
use std::collections::BTreeMap;

/// A build's summary, its name hashes and the summary's size as stored.
type Summarised = std::rc::Rc<(BuildSummary, Vec<i64>, u64)>;

/// One release's figures for the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineRow {
    pub release: Release,
    /// Flags by kind (feature, event, config, other).
    pub flags: BTreeMap<String, u64>,
    pub tools: u64,
    pub prompts: u64,
    pub prompt_bytes: u64,
    pub env: u64,
    pub commands: u64,
    pub workflows: Vec<String>,
    /// Names added and removed against the previous row, per kind.
    pub added: BTreeMap<String, Vec<String>>,
    pub removed: BTreeMap<String, Vec<String>>,
}

impl FactsStore {
    /// Every build's summary and name hashes, by build id. A summary that
    /// does not read (JSON past [`MAX_SUMMARY_BYTES`] or not a summary,
    /// name hashes not as written) is left out and noted.
    fn summaries(&self) -> Result<std::collections::HashMap<i64, Summarised>, StoreError> {
        self.ensure_summaries()?;
        self.query(|c| {
            let mut st = c.prepare("SELECT build_id, summary, names FROM build_summary")?;
            let mut rows = st.query([])?;
            let mut out = std::collections::HashMap::new();
            while let Some(r) = rows.next()? {
                let id: i64 = r.get(0)?;
                let json = r.get_ref(1)?.as_bytes().unwrap_or_default();
                let blob = r.get_ref(2)?.as_bytes().unwrap_or_default();
                self.charge(json.len() as u64 * PARSED_COST + blob.len() as u64)?;
                let summary = (json.len() <= MAX_SUMMARY_BYTES)
                    .then(|| serde_json::from_slice::<BuildSummary>(json).ok())
                    .flatten();
                match (summary, blob_hashes(blob)) {
                    (Some(s), Some(h)) => {
                        out.insert(id, std::rc::Rc::new((s, h, json.len() as u64)));
                    }
                    _ => self.skip(format!("the summary of build {id}: damaged")),
                }
            }
            Ok(out)
        })
    }

    /// Every scanned release of `platform` with its figures and what
    /// changed against the one before (by item name; values are for
    /// `changes`), from the items alone.
    pub fn timeline(&self, platform: &str) -> Result<Vec<TimelineRow>, StoreError> {
        let releases = self.analysed_releases(platform)?;
        let summaries = self.summaries()?;
        let none: Summarised = Default::default();
        let mut out: Vec<TimelineRow> = Vec::new();
        let mut prev: Option<Summarised> = None;
        // (row, hash, added?) of every name that came or went, resolved to
        // names in one pass at the end.
        let mut changed: Vec<(usize, i64, bool)> = Vec::new();
        for r in releases {
            // Releases may share a build: its summary is read once and
            // shared, and each row's copy of it is charged.
            let this = r
                .build_id
                .and_then(|id| summaries.get(&id).cloned())
                .unwrap_or_else(|| none.clone());
            self.charge_answer(this.2 * PARSED_COST + 512)?;
            let (summary, hashes) = (&this.0, &this.1);
            let n = |k: &str| summary.counts.get(k).copied().unwrap_or(0);
            let row = TimelineRow {
                flags: summary.flags.clone(),
                tools: n("tool"),
                prompts: n("prompt"),
                prompt_bytes: summary.prompt_bytes,
                env: n("env"),
                commands: n("command"),
                workflows: summary.workflows.clone(),
                added: BTreeMap::new(),
                removed: BTreeMap::new(),
                release: r,
            };
            if let Some(p) = &prev {
                let i = out.len();
                let before = changed.len();
                changed.extend(sorted_difference(hashes, &p.1).map(|h| (i, h, true)));
                changed.extend(sorted_difference(&p.1, hashes).map(|h| (i, h, false)));
                self.charge_answer(((changed.len() - before) * 24) as u64)?;
            }
            prev = Some(this.clone());
            out.push(row);
        }
        let names: std::collections::HashMap<i64, (String, String)> = self.query(|c| {
            // One read transaction for the lookups: each statement outside
            // one takes and releases the file's locks (system calls that
            // were a tenth of the timeline's time).
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Deferred)?;
            let mut m = std::collections::HashMap::new();
            {
                let mut st = tx.prepare("SELECT kind, name FROM names WHERE hash = ?1")?;
                for (_, h, _) in &changed {
                    if !m.contains_key(h)
                        && let Some((k, n)) = st
                            .query_row(params![h], |r| {
                                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                            })
                            .optional()?
                    {
                        self.charge((k.len() + n.len() + 64) as u64)?;
                        m.insert(*h, (k, n));
                    }
                }
            }
            tx.commit()?;
            Ok(m)
        })?;
        for (i, h, added) in changed {
            if let Some((k, n)) = names.get(&h) {
                // Each name is copied into every row where it came or went.
                self.charge_answer((k.len() + n.len() + 64) as u64)?;
                let side = if added {
                    &mut out[i].added
                } else {
                    &mut out[i].removed
                };
                side.entry(k.clone()).or_default().push(n.clone());
            }
        }
        // Names in each list in (kind, name) order, as the item scan gave them.
        for row in &mut out {
            for v in row.added.values_mut().chain(row.removed.values_mut()) {
                v.sort();
            }
        }
        Ok(out)
    }
}

/// The values of sorted `a` that are not in sorted `b`, in one pass over
/// both (a binary search per name of every release was a third of the
/// timeline's time).
pub(super) fn sorted_difference(a: &[i64], b: &[i64]) -> impl Iterator<Item = i64> {
    let mut out = Vec::new();
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            out.push(x);
        }
    }
    out.into_iter()
}
