//! `history changes`: what changed between two consecutive releases.

use super::PARSED_COST;
use crate::analysis::analysed::{ANALYSIS_VERSION, Facts};
use crate::store::FactsStore;
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The most a stored `changes` answer may inflate to: the largest real one,
/// at the switch to code-split builds, is ~130 kB of JSON; 8 MiB is sixty
/// times that.
const MAX_CHANGES_BYTES: u64 = 8 << 20;

impl FactsStore {
    /// The answer `history changes` gave for the builds `from` → `to`,
    /// when this analysis version stored one: comparing two builds' facts
    /// inflates and parses both (4 MB of JSON each on the newest builds),
    /// the stored answer is a few kilobytes. It is handed back parsed, as a
    /// value (what is printed is always serialised by this tool, never the
    /// stored text): a body that does not match its hash, inflates past
    /// [`MAX_CHANGES_BYTES`], holds too many values or is not a JSON
    /// object is a miss.
    pub fn stored_changes(&self, from: &str, to: &str) -> Option<serde_json::Map<String, Value>> {
        let (body, sha): (Vec<u8>, String) = self
            .query(|c| {
                c.query_row(
                    "SELECT body, body_sha256 FROM changes
                     WHERE from_digest = ?1 AND to_digest = ?2 AND analysis_version = ?3",
                    params![from, to, ANALYSIS_VERSION],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
            })
            .ok()??;
        (hex::encode(Sha256::digest(&body)) == sha).then_some(())?;
        let json = crate::store::inflate(&body, MAX_CHANGES_BYTES)?;
        if !crate::store::json_values_within(&json, crate::store::MAX_FACTS_VALUES) {
            return None;
        }
        self.charge_answer(json.len() as u64 * PARSED_COST).ok()?;
        match serde_json::from_slice(&json).ok()? {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Keep the answer of `history changes` for `from` → `to` (best effort:
    /// a store that cannot take it only costs the next query the comparison).
    pub fn store_changes(&self, from: &str, to: &str, text: &str) {
        let Ok(body) = zstd::bulk::compress(text.as_bytes(), crate::store::ZSTD_LEVEL) else {
            return;
        };
        let _ = self.query(|c| {
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT OR REPLACE INTO changes
                 (from_digest, to_digest, analysis_version, body_sha256, body)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    from,
                    to,
                    ANALYSIS_VERSION,
                    hex::encode(Sha256::digest(&body)),
                    body
                ],
            )?;
            // As a build's facts: one analysis version's answer a pair.
            tx.execute(
                "DELETE FROM changes WHERE from_digest = ?1 AND to_digest = ?2
                 AND analysis_version != ?3",
                params![from, to, ANALYSIS_VERSION],
            )?;
            tx.commit()
        });
    }

    /// The facts a history holds for a build, by digest (this analysis
    /// version only): what its author recorded, sealed by this machine or
    /// not — `history changes` answers from them, labelled with their
    /// store; analysis never reads them this way.
    pub fn facts_of(&self, digest: &str) -> Option<Facts> {
        self.recorded_facts(digest)
    }
}
