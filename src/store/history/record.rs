//! Recording releases: their items, summaries, texts and the text index.

use super::items::{hashes_blob, items, name_hash, summarise, text_ref};
use super::{MAX_VALUE_BYTES, ReleaseStatus, parse_bounded};
use crate::analysis::analysed::{ANALYSIS_VERSION, Facts};
use crate::store::{FactsStore, StoreError};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::Value;

/// The trigram index of `texts` that `search` narrows its candidates with.
/// It is created, filled from every stored text and given the triggers that
/// keep it current in one transaction (`ensure_text_index`), so the table's
/// existence means the index is complete: a store written before it gets it
/// on its first search or record. `detail=none` keeps only which texts hold
/// each trigram (8 MB for the 32 MB of texts of every darwin-arm64 release;
/// positions would add 73 MB); a text that holds every trigram of the
/// needle is then searched for the needle itself. Case-sensitive, as the
/// search is.
pub(in crate::store) const TEXT_INDEX: &str = "
CREATE VIRTUAL TABLE texts_fts USING fts5(
    text, content = 'texts', content_rowid = 'rowid',
    tokenize = 'trigram case_sensitive 1', detail = 'none'
);
INSERT INTO texts_fts (texts_fts) VALUES ('rebuild');
CREATE TRIGGER IF NOT EXISTS texts_fts_insert AFTER INSERT ON texts BEGIN
    INSERT INTO texts_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS texts_fts_delete AFTER DELETE ON texts BEGIN
    INSERT INTO texts_fts (texts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS texts_fts_update AFTER UPDATE ON texts BEGIN
    INSERT INTO texts_fts (texts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO texts_fts (rowid, text) VALUES (new.rowid, new.text);
END;
";

/// The most trigrams of a needle the index is asked for: each narrows the
/// candidates less than the one before, and every candidate is searched
/// for the whole needle anyway.
const MAX_TRIGRAMS: usize = 24;

/// The index query for `needle`: every distinct trigram of it (the first
/// `MAX_TRIGRAMS`), each quoted, all required. None for a needle shorter
/// than a trigram, which only a scan of every text answers.
fn trigram_query(needle: &str) -> Option<String> {
    let chars: Vec<char> = needle.chars().collect();
    if chars.len() < 3 {
        return None;
    }
    let mut seen: Vec<String> = Vec::new();
    for w in chars.windows(3) {
        let t: String = w.iter().collect();
        if !seen.contains(&t) {
            seen.push(t);
        }
        if seen.len() == MAX_TRIGRAMS {
            break;
        }
    }
    Some(
        seen.iter()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" AND "),
    )
}

/// Whether the text index exists (and so is complete).
pub(super) fn has_text_index(c: &rusqlite::Connection) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'texts_fts'",
        [],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

impl FactsStore {
    /// Record a scanned release: its build (already in `builds`, by digest)
    /// and the items of its facts, replacing what an earlier scan stored.
    pub fn record_release(
        &self,
        version: &str,
        platform: &str,
        published: Option<&str>,
        digest: &str,
        build: &crate::store::BuildRow,
        facts: &Facts,
    ) -> Result<(), StoreError> {
        let (items, texts) = items(facts);
        self.query(|c| {
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            let id = Self::build_id(&tx, digest, build)?;
            // The texts below reach the index through its trigger; an
            // older store gets the index (of its texts so far) first.
            if !has_text_index(&tx)? {
                tx.execute_batch(TEXT_INDEX)?;
            }
            tx.execute("DELETE FROM items WHERE build_id = ?1", params![id])?;
            {
                let mut ins = tx.prepare(
                    "INSERT OR REPLACE INTO items (build_id, kind, name, value) VALUES (?1, ?2, ?3, ?4)",
                )?;
                for i in &items {
                    ins.execute(params![id, i.kind.as_str(), i.name, i.value.to_string()])?;
                }
                let mut txt =
                    tx.prepare("INSERT OR IGNORE INTO texts (sha256, text) VALUES (?1, ?2)")?;
                for (h, t) in &texts {
                    txt.execute(params![h, t])?;
                }
            }
            Self::write_summary(
                &tx,
                id,
                items.iter().map(|i| (i.kind.as_str(), i.name.as_str(), &i.value)),
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO releases
                   (version, platform, published, build_id, status, error, analysis_version)
                 VALUES (?1, ?2, ?3, ?4, 'ok', NULL, ?5)",
                params![version, platform, published, id, ANALYSIS_VERSION],
            )?;
            tx.commit()
        })
    }

    /// Write a build's summary, its names and its text references (in the
    /// caller's transaction), replacing earlier ones.
    pub(super) fn write_summary<'a>(
        tx: &rusqlite::Connection,
        id: i64,
        items: impl Iterator<Item = (&'a str, &'a str, &'a Value)> + Clone,
    ) -> rusqlite::Result<()> {
        let (summary, hashes) = summarise(items.clone());
        let json = serde_json::to_string(&summary).unwrap_or_default();
        tx.execute(
            "INSERT OR REPLACE INTO build_summary (build_id, summary, names) VALUES (?1, ?2, ?3)",
            params![id, json, hashes_blob(&hashes)],
        )?;
        tx.execute("DELETE FROM text_items WHERE build_id = ?1", params![id])?;
        let mut name =
            tx.prepare("INSERT OR IGNORE INTO names (hash, kind, name) VALUES (?1, ?2, ?3)")?;
        let mut text = tx.prepare(
            "INSERT OR IGNORE INTO text_items (sha256, build_id, kind, name) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (k, n, v) in items {
            name.execute(params![name_hash(k, n), k, n])?;
            if let Some(h) = text_ref(v) {
                text.execute(params![h, id, k, n])?;
            }
        }
        crate::store::search::touch(tx)
    }

    /// Give every recorded build its summary, and the store its text index
    /// (stores written before them get them on their first query).
    ///
    /// One transaction per build: a single transaction for all of them
    /// grew the write-ahead log to the size of everything written (51 MB
    /// for every darwin-arm64 release), and SQLite can only fold a log
    /// into the database between transactions. Committed build by build,
    /// the automatic checkpoint keeps the log at a few megabytes, and an
    /// interrupted backfill keeps what it did (each build's summary is
    /// whole on its own; the next query does the rest).
    pub fn ensure_summaries(&self) -> Result<(), StoreError> {
        let missing: Vec<i64> = self.query(|c| {
            let mut st = c.prepare(
                "SELECT DISTINCT r.build_id FROM releases r JOIN builds b ON b.id = r.build_id
                 WHERE r.status = 'ok'
                   AND NOT EXISTS (SELECT 1 FROM build_summary s WHERE s.build_id = r.build_id)",
            )?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect()
        })?;
        for id in &missing {
            self.query(|c| {
                let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
                // Another process may have summarised it meanwhile.
                let done = tx
                    .query_row(
                        "SELECT 1 FROM build_summary WHERE build_id = ?1",
                        params![id],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some();
                if !done {
                    let rows: Vec<(String, String, Value)> = {
                        let mut st =
                            tx.prepare("SELECT kind, name, value FROM items WHERE build_id = ?1")?;
                        let rows = st.query_map(params![id], |r| {
                            let v = r.get_ref(2)?.as_bytes().unwrap_or_default();
                            Ok((
                                r.get(0)?,
                                r.get(1)?,
                                parse_bounded(v, MAX_VALUE_BYTES).unwrap_or(Value::Null),
                            ))
                        })?;
                        rows.collect::<rusqlite::Result<_>>()?
                    };
                    Self::write_summary(
                        &tx,
                        *id,
                        rows.iter().map(|(k, n, v)| (k.as_str(), n.as_str(), v)),
                    )?;
                }
                tx.commit()
            })?;
        }
        Ok(())
    }

    /// Create and fill the text index when the store has none (one
    /// transaction: the index exists complete or not at all).
    pub(super) fn ensure_text_index(&self) -> Result<(), StoreError> {
        self.query(|c| {
            if has_text_index(c)? {
                return Ok(());
            }
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            if !has_text_index(&tx)? {
                tx.execute_batch(TEXT_INDEX)?;
            }
            tx.commit()
        })
    }

    /// Record a release that has no build: `failed` (with why; retried by
    /// the next scan) or `empty` (its package holds no program; not retried).
    pub fn record_unanalysed(
        &self,
        version: &str,
        platform: &str,
        published: Option<&str>,
        status: ReleaseStatus,
        error: &str,
    ) -> Result<(), StoreError> {
        self.query(|c| {
            c.execute(
                "INSERT OR REPLACE INTO releases
                   (version, platform, published, build_id, status, error, analysis_version)
                 VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6)",
                params![
                    version,
                    platform,
                    published,
                    status.as_str(),
                    error,
                    ANALYSIS_VERSION
                ],
            )
            .map(|_| ())
        })
    }

    /// The texts (by rowid) that contain `needle`, exactly: the trigram
    /// index narrows them, each candidate is then searched for the needle
    /// itself; a needle shorter than a trigram, or a store without the
    /// index, scans every text. (`search` reads its own index of lines;
    /// this answers the needles that hold a newline.)
    pub(in crate::store) fn texts_containing(&self, needle: &str) -> Result<Vec<i64>, StoreError> {
        let query = trigram_query(needle);
        let indexed = query.is_some() && self.ensure_text_index().is_ok();
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        self.query(|c| {
            let mut found: Vec<i64> = Vec::new();
            let mut keep = |r: &rusqlite::Row| -> rusqlite::Result<()> {
                if finder.find(r.get_ref(1)?.as_bytes()?).is_some() {
                    found.push(r.get(0)?);
                }
                Ok(())
            };
            let (sql, args) = match query.as_deref().filter(|_| indexed) {
                Some(q) => (
                    "SELECT t.rowid, t.text FROM texts_fts f
                     JOIN texts t ON t.rowid = f.rowid WHERE texts_fts MATCH ?1",
                    vec![q],
                ),
                None => ("SELECT rowid, text FROM texts", vec![]),
            };
            let mut st = c.prepare(sql)?;
            let mut rows = st.query(rusqlite::params_from_iter(args))?;
            while let Some(r) = rows.next()? {
                keep(r)?;
            }
            Ok(found)
        })
    }

    /// Names of items of `kind` whose name contains `part` (for "did you
    /// mean" and search).
    pub fn item_names_like(
        &self,
        kind: Option<&str>,
        part: &str,
        limit: usize,
    ) -> Result<Vec<(String, String)>, StoreError> {
        self.ensure_summaries()?;
        self.query(|c| {
            let mut st = c.prepare(
                "SELECT DISTINCT kind, name FROM names
                 WHERE (?1 IS NULL OR kind = ?1) AND instr(lower(name), lower(?2)) > 0
                 ORDER BY kind, name LIMIT ?3",
            )?;
            let rows = st.query_map(params![kind, part, limit as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::history::items::sha;
    use serde_json::json;

    #[test]
    fn trigram_queries_quote_each_distinct_trigram() {
        assert_eq!(trigram_query("ab"), None);
        assert_eq!(trigram_query("éé"), None, "characters, not bytes");
        assert_eq!(trigram_query("abc").as_deref(), Some("\"abc\""));
        assert_eq!(
            trigram_query("aaaa").as_deref(),
            Some("\"aaa\""),
            "a repeated trigram is asked once"
        );
        assert_eq!(
            trigram_query("a\"b c").as_deref(),
            Some("\"a\"\"b\" AND \"\"\"b \" AND \"b c\"")
        );
        let long = "x".repeat(10) + &"abcdefghijklmnopqrstuvwxyz0123456789".repeat(2);
        let q = trigram_query(&long).unwrap();
        assert_eq!(q.matches(" AND ").count(), MAX_TRIGRAMS - 1);
    }

    /// A store with one release of `platform` holding a prompt per text.
    fn store_with_texts(dir: &std::path::Path, texts: &[&str]) -> FactsStore {
        let store = FactsStore::open(&dir.join("facts.sqlite")).unwrap();
        store
            .query(|c| {
                let id = FactsStore::build_id(c, "d1", &crate::store::BuildRow::default())?;
                c.execute(
                    "INSERT INTO releases (version, platform, build_id, status, analysis_version)
                     VALUES ('1.0.0', 'p', ?1, 'ok', ?2)",
                    params![id, ANALYSIS_VERSION],
                )?;
                for (i, t) in texts.iter().enumerate() {
                    let h = sha(t);
                    c.execute(
                        "INSERT INTO texts (sha256, text) VALUES (?1, ?2)",
                        params![h, t],
                    )?;
                    c.execute(
                        "INSERT INTO items (build_id, kind, name, value) VALUES (?1, 'prompt', ?2, ?3)",
                        params![id, format!("p{i}"), json!({"text_sha256": h}).to_string()],
                    )?;
                }
                Ok(())
            })
            .unwrap();
        store
    }

    fn text_hits(store: &FactsStore, needle: &str) -> Vec<String> {
        store
            .search(needle, 500)
            .unwrap()
            .by_text
            .into_iter()
            .map(|f| f.name)
            .collect()
    }

    #[test]
    fn text_search_through_the_index_equals_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let texts = [
            "You are Test Harness, an agent.",
            "you are lower case here",
            "a \"quoted\" word and é accents: café",
            "short",
            "aaa aab",
            "two lines\nof text",
        ];
        let store = store_with_texts(dir.path(), &texts);
        let has_index = |s: &FactsStore| s.query(has_text_index).unwrap();
        // A store written before the index: the first search builds it
        // from the texts already there.
        store
            .query(|c| c.execute_batch("DROP TABLE IF EXISTS texts_fts"))
            .unwrap();
        assert!(!has_index(&store));
        assert_eq!(text_hits(&store, "You are"), ["p0"]);
        assert!(
            !has_index(&store),
            "a needle without a newline reads the search index's lines"
        );
        assert_eq!(text_hits(&store, "lines\nof"), ["p5"]);
        assert!(has_index(&store), "built by the first search across lines");
        // Case-sensitive, substrings anywhere, quotes and accents, and
        // needles shorter than a trigram (a scan).
        assert_eq!(text_hits(&store, "you are"), ["p1"]);
        assert_eq!(text_hits(&store, "\"quoted\""), ["p2"]);
        assert_eq!(text_hits(&store, "fé"), ["p2"]);
        assert_eq!(text_hits(&store, "é"), ["p2"]);
        assert_eq!(text_hits(&store, "or"), ["p2", "p3"]);
        assert_eq!(text_hits(&store, "est Ha"), ["p0"]);
        // Every trigram of the needle in a text, the needle not: no hit.
        assert!(text_hits(&store, "aaab").is_empty());
        assert_eq!(text_hits(&store, "aa aa"), ["p4"]);
        assert!(text_hits(&store, "zzz").is_empty());
        // A text added later reaches the index through its trigger.
        store
            .query(|c| {
                c.execute(
                    "INSERT INTO texts (sha256, text) VALUES ('h6', 'later text')",
                    [],
                )?;
                c.execute(
                    "INSERT INTO items (build_id, kind, name, value)
                     SELECT build_id, 'prompt', 'p6', '{\"text_sha256\":\"h6\"}' FROM releases",
                    [],
                )?;
                // (as recording a release writes its text references,
                // and counts a write for the search index)
                c.execute(
                    "INSERT INTO text_items (sha256, build_id, kind, name)
                     SELECT 'h6', build_id, 'prompt', 'p6' FROM releases",
                    [],
                )?;
                crate::store::search::touch(c)
            })
            .unwrap();
        assert_eq!(text_hits(&store, "later"), ["p6"]);
        assert_eq!(text_hits(&store, "r text"), ["p6"]);
        // The index answers exactly as a scan of every text would.
        for needle in [
            "You", "ou are", "uoted", "café", "x", "aa", "e", "s\no", "\n", "text",
        ] {
            let scan: Vec<String> = texts
                .iter()
                .chain(["later text"].iter())
                .enumerate()
                .filter(|(_, t)| t.contains(needle))
                .map(|(i, _)| format!("p{i}"))
                .collect();
            assert_eq!(text_hits(&store, needle), scan, "{needle:?}");
        }
    }

    #[test]
    fn a_backfill_commits_build_by_build_and_close_leaves_no_log() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_texts(dir.path(), &["one text"]);
        store.ensure_summaries().unwrap();
        let summaries = |s: &FactsStore| {
            s.query(|c| {
                c.query_row("SELECT count(*) FROM build_summary", [], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .unwrap()
        };
        assert_eq!(summaries(&store), 1);
        store
            .query(|c| c.execute_batch("DELETE FROM build_summary; DELETE FROM text_items;"))
            .unwrap();
        assert_eq!(store.search("one", 500).unwrap().by_text.len(), 1);
        assert_eq!(summaries(&store), 1, "backfilled on the query");
        let wal = dir.path().join("facts.sqlite-wal");
        assert!(wal.exists(), "WAL mode writes a log while open");
        store.close();
        assert!(
            !wal.exists(),
            "closing the last connection folds the log in"
        );
        // The file holds everything the log held.
        let again = FactsStore::open(&dir.path().join("facts.sqlite")).unwrap();
        assert_eq!(summaries(&again), 1);
        assert_eq!(again.search("text", 500).unwrap().by_text.len(), 1);
    }
}
