//! `history changes`: what changed between two consecutive releases.

use super::{HistoryError, PARSED_COST, Release};
use crate::analysis::analysed::{ANALYSIS_VERSION, Facts};
use crate::analysis::diff::{BuildDiff, Section, compare_facts};
use crate::store::FactsStore;
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The sections `history changes` answers: those made of facts.
pub const FACT_SECTIONS: [Section; 11] = [
    Section::Workflows,
    Section::Flags,
    Section::Gates,
    Section::Roles,
    Section::Tools,
    Section::Prompts,
    Section::Env,
    Section::Settings,
    Section::Commands,
    Section::Models,
    Section::Schemas,
];

/// The answer of `history changes`: a release against the one scanned
/// before it. `answer` is a JSON object, the diff's sections with the two
/// versions and the platform: the one stored for the two builds, or made
/// now (and stored for the next time). Either way a value, serialised
/// again when printed.
#[derive(Debug, Clone)]
pub struct ChangesAnswer {
    pub version: String,
    pub previous: String,
    pub platform: String,
    pub answer: Map<String, Value>,
}

/// Two releases' facts compared, as the answer is made and stored.
#[derive(Serialize)]
struct Compared {
    version: String,
    previous: String,
    platform: String,
    #[serde(flatten)]
    diff: BuildDiff,
}

/// The most a stored `changes` answer may inflate to: the largest real one,
/// at the switch to code-split builds, is ~130 kB of JSON; 8 MiB is sixty
/// times that.
const MAX_CHANGES_BYTES: u64 = 8 << 20;

/// What a stored answer is kept under: the analysis version that made the
/// facts, and the answer's own format. `+2`: the workflows' scripts are
/// compared (the answers stored before compared facts whose scripts had
/// not been put back, and missed a script that changed while its
/// description, phases and options stayed).
fn answer_key() -> String {
    format!("{ANALYSIS_VERSION}+2")
}

impl FactsStore {
    /// The answer `history changes` gave for the builds `from` → `to`,
    /// when this analysis version stored one: comparing two builds' facts
    /// inflates and parses both (4 MB of JSON each on the newest builds),
    /// the stored answer is a few kilobytes. It is handed back parsed, as a
    /// value (what is printed is always serialised by this tool, never the
    /// stored text): a body that does not match its hash, inflates past
    /// [`MAX_CHANGES_BYTES`], holds too many values or is not a JSON
    /// object is a miss.
    pub fn stored_changes(&self, from: &str, to: &str) -> Option<Map<String, Value>> {
        let (body, sha): (Vec<u8>, String) = self
            .query(|c| {
                c.query_row(
                    "SELECT body, body_sha256 FROM changes
                     WHERE from_digest = ?1 AND to_digest = ?2 AND analysis_version = ?3",
                    params![from, to, answer_key()],
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
                    answer_key(),
                    hex::encode(Sha256::digest(&body)),
                    body
                ],
            )?;
            // As a build's facts: one analysis version's answer a pair.
            tx.execute(
                "DELETE FROM changes WHERE from_digest = ?1 AND to_digest = ?2
                 AND analysis_version != ?3",
                params![from, to, answer_key()],
            )?;
            tx.commit()
        });
    }

    /// The facts a history holds for a build, by digest (this analysis
    /// version only): what its author recorded, sealed by this machine or
    /// not — `history changes` answers from them, labelled with their
    /// store; analysis never reads them this way.
    /// The workflows' scripts are put back into them, as a build's own
    /// facts have them (the stored body keeps each script once, apart).
    pub fn facts_of(&self, digest: &str) -> Option<Facts> {
        let mut f = self.recorded_facts(digest)?;
        for w in &mut f.workflows {
            if w.text.is_none() {
                w.text = f.scripts.get(&w.name).cloned();
            }
        }
        Some(f)
    }

    /// What changed at `version` against the previous release scanned of
    /// `platform` (the only platform scanned when None), from stored facts.
    pub fn changes(
        &self,
        version: &str,
        platform: Option<&str>,
    ) -> Result<ChangesAnswer, HistoryError> {
        let platform = self.one_platform(platform)?;
        let releases = self.analysed_releases(&platform)?;
        let Some(i) = releases.iter().position(|r| r.version == version) else {
            return Err(HistoryError::NotScanned {
                version: version.to_string(),
                platform,
            });
        };
        if i == 0 {
            return Err(HistoryError::Oldest {
                version: version.to_string(),
                platform,
            });
        }
        let (prev, this) = (&releases[i - 1], &releases[i]);
        Ok(ChangesAnswer {
            answer: self.changes_between(prev, this, &platform)?,
            version: this.version.clone(),
            previous: prev.version.clone(),
            platform,
        })
    }

    /// The answer of `history changes` for `prev` → `this`: the one stored
    /// for the two builds when there is one and it is the answer for these
    /// releases, else their facts compared (the `diff` sections, from the
    /// stored facts) and the answer stored for the next time.
    pub fn changes_between(
        &self,
        prev: &Release,
        this: &Release,
        platform: &str,
    ) -> Result<Map<String, Value>, HistoryError> {
        let digests = prev.digest.as_deref().zip(this.digest.as_deref());
        // A stored answer names the releases it was made for: one made for
        // a build published under other versions is not this answer.
        let names = |m: &Map<String, Value>| {
            m.get("version").and_then(|v| v.as_str()) == Some(this.version.as_str())
                && m.get("previous").and_then(|v| v.as_str()) == Some(prev.version.as_str())
                && m.get("platform").and_then(|v| v.as_str()) == Some(platform)
        };
        if let Some(m) = digests.and_then(|(a, b)| self.stored_changes(a, b))
            && names(&m)
        {
            return Ok(m);
        }
        let load = |r: &Release| {
            r.digest
                .as_deref()
                .and_then(|d| self.facts_of(d))
                .ok_or_else(|| HistoryError::FactsUnusable(r.version.clone()))
        };
        let (fa, fb) = (load(prev)?, load(this)?);
        let mut diff = BuildDiff::default();
        compare_facts(&fa, &fb, &FACT_SECTIONS, &mut diff);
        let compared = Compared {
            version: this.version.clone(),
            previous: prev.version.clone(),
            platform: platform.to_string(),
            diff,
        };
        let Value::Object(m) = serde_json::to_value(&compared)? else {
            let e = <serde_json::Error as serde::ser::Error>::custom("not an object");
            return Err(e.into());
        };
        if let Some((a, b)) = digests {
            self.store_changes(a, b, &serde_json::to_string(&m)?);
        }
        Ok(m)
    }
}
