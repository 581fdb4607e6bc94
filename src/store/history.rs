//! The history: every published build scanned, in the facts store's file.
//! A *release* is a published (version, platform) and the outcome of its
//! scan; its *items* are the named things the facts hold (workflows, flags,
//! gates, roles, tools, prompts, env vars, settings, commands, models), one
//! row each with the few values whose change matters. Queries read these
//! rows, never the facts' bodies, so they stay fast with every version
//! stored; `changes` loads two builds' facts and runs the diff on them.
//! docs/guide/history.md has the schema and the questions it answers.

use super::{FactsStore, StoreError};
use crate::analysis::analysed::{ANALYSIS_VERSION, Facts};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Created on every open (`IF NOT EXISTS`): a store made before the history
/// existed gains its tables without losing its facts.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS releases (
    version     TEXT NOT NULL,
    platform    TEXT NOT NULL,
    published   TEXT,
    build_id    INTEGER REFERENCES builds(id) ON DELETE SET NULL,
    status      TEXT NOT NULL,
    error       TEXT,
    analysis_version TEXT,
    scanned     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (version, platform)
);
CREATE TABLE IF NOT EXISTS items (
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (build_id, kind, name)
);
CREATE INDEX IF NOT EXISTS items_by_name ON items (kind, name);
CREATE TABLE IF NOT EXISTS texts (
    sha256      TEXT PRIMARY KEY,
    text        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS build_summary (
    build_id    INTEGER PRIMARY KEY REFERENCES builds(id) ON DELETE CASCADE,
    summary     TEXT NOT NULL,
    names       BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS names (
    hash        INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS text_items (
    sha256      TEXT NOT NULL,
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    PRIMARY KEY (sha256, build_id, kind, name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS text_items_by_build ON text_items (build_id);
CREATE INDEX IF NOT EXISTS releases_by_build ON releases (build_id);
CREATE TABLE IF NOT EXISTS changes (
    from_digest TEXT NOT NULL,
    to_digest   TEXT NOT NULL,
    analysis_version TEXT NOT NULL,
    body        BLOB NOT NULL,
    body_sha256 TEXT NOT NULL,
    PRIMARY KEY (from_digest, to_digest, analysis_version)
) WITHOUT ROWID;
";

/// The most a stored `changes` answer may inflate to: the largest real one,
/// at the switch to code-split builds, is ~130 kB of JSON; 8 MiB is sixty
/// times that.
const MAX_CHANGES_BYTES: u64 = 8 << 20;

/// What one command may bring into memory from the history's rows, at
/// least: every string and blob read, every value parsed (at
/// [`PARSED_COST`] times its text) and every name or version copied into
/// the answer is charged before it is kept. A store whose answer would
/// need more is refused in one line, never allowed to take the machine's
/// memory.
pub const COMMAND_BUDGET: u64 = 384 << 20;

/// An answer may hold this many times the store's bytes: an honest
/// answer holds what the store holds, parsed (`history export --format
/// json` of every release parses every item); only rows that many
/// releases share, or that repeat, make an answer larger than that.
const BUDGET_PER_STORE_BYTE: u64 = 32;

/// The budget of a command on the store at `path`: [`COMMAND_BUDGET`], or
/// more for a store large enough to need it (its file and log).
pub(super) fn command_budget(path: &std::path::Path) -> u64 {
    let size: u64 = ["", "-wal"]
        .iter()
        .map(|s| std::fs::metadata(super::with_suffix(path, s)).map_or(0, |m| m.len()))
        .sum();
    COMMAND_BUDGET.max(size.saturating_mul(BUDGET_PER_STORE_BYTE))
}

/// What a parsed JSON value may cost in memory per byte of its text
/// (`[]` is two bytes and a 32-byte value with its vector).
const PARSED_COST: u64 = 24;

/// The most an item's value may hold, as JSON text: the real ones are the
/// few fields docs/guide/history.md lists (the largest, a model's uses or a
/// setting's default object, under 4 kB).
const MAX_VALUE_BYTES: usize = 64 << 10;

/// The most a build summary may hold, as JSON text (counts per kind, flags
/// per kind, workflow names: under 2 kB on real builds).
const MAX_SUMMARY_BYTES: usize = 1 << 20;

/// The trigram index of `texts` that `search` narrows its candidates with.
/// It is created, filled from every stored text and given the triggers that
/// keep it current in one transaction (`ensure_text_index`), so the table's
/// existence means the index is complete: a store written before it gets it
/// on its first search or record. `detail=none` keeps only which texts hold
/// each trigram (8 MB for the 32 MB of texts of every darwin-arm64 release;
/// positions would add 73 MB); a text that holds every trigram of the
/// needle is then searched for the needle itself. Case-sensitive, as the
/// search is.
pub(super) const TEXT_INDEX: &str = "
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
fn has_text_index(c: &rusqlite::Connection) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'texts_fts'",
        [],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

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
pub(super) fn name_hash(kind: &str, name: &str) -> i64 {
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

fn hashes_blob(h: &[i64]) -> Vec<u8> {
    h.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A summary's name hashes, or None when the blob is not what
/// [`hashes_blob`] writes: whole 8-byte hashes, strictly ascending (so each
/// name once: one hash repeated 36,000 times with a 100 kB name made the
/// timeline copy that name for every repeat, a gigabyte from a 290 kB
/// store).
pub(super) fn blob_hashes(b: &[u8]) -> Option<Vec<i64>> {
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
fn text_ref(v: &Value) -> Option<&str> {
    v["text_sha256"].as_str().or(v["script_sha256"].as_str())
}

/// The kinds of item, as `history show KIND` names them.
pub const KINDS: [&str; 10] = [
    "workflow", "flag", "gate", "role", "tool", "prompt", "env", "setting", "command", "model",
];

/// One named thing in one build, with the values whose change matters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub kind: &'static str,
    pub name: String,
    pub value: Value,
}

fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The items of a build's facts, and the texts (prompts, scripts) they
/// refer to by hash.
pub fn items(f: &Facts) -> (Vec<Item>, Vec<(String, String)>) {
    let mut out = Vec::new();
    let mut texts = Vec::new();
    let mut push = |kind: &'static str, name: &str, value: Value| {
        out.push(Item {
            kind,
            name: name.to_string(),
            value,
        })
    };
    for w in &f.workflows {
        push(
            "workflow",
            &w.name,
            json!({
                "hidden": w.hidden,
                "script_sha256": w.script.as_ref().map(|s| s.sha256.clone()),
            }),
        );
    }
    for fl in &f.flags.flags {
        push(
            "flag",
            &fl.name,
            json!({"kind": fl.kind.as_str(), "defaults": fl.defaults}),
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
            "gate",
            key,
            json!({"conditions": conditions.len(), "conditions_sha256": sha(&conditions.join("\n"))}),
        );
    }
    for r in &f.roles.functions {
        push(
            "role",
            r.role.as_str(),
            json!({"original": r.original, "workflow": r.workflow}),
        );
    }
    let s = &f.surface;
    for t in &s.tools {
        push(
            "tool",
            &t.name,
            json!({
                "schema_sha256": sha(&t.input_schema.to_string()),
                "description_sha256": sha(&t.description),
                "prompt_bytes": t.prompt_bytes,
            }),
        );
    }
    for p in &s.prompts {
        let h = sha(&p.text);
        texts.push((h.clone(), p.text.clone()));
        push(
            "prompt",
            &p.id,
            json!({"kind": p.kind, "title": p.title, "text_sha256": h, "bytes": p.bytes}),
        );
    }
    for e in &s.env {
        push("env", &e.name, json!({"how": e.how, "default": e.default}));
    }
    for x in &s.settings {
        push(
            "setting",
            &x.key,
            json!({"type": x.r#type, "default": x.default}),
        );
    }
    for c in &s.commands {
        push(
            "command",
            &c.name,
            json!({"kind": c.kind, "hidden": c.hidden, "aliases": c.aliases}),
        );
    }
    for m in &s.models {
        push(
            "model",
            &m.id,
            json!({"aliases": m.aliases, "used_as": m.uses}),
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

/// One item of one release, as exported.
#[derive(Debug, Clone)]
pub struct ItemRow {
    pub version: String,
    pub platform: String,
    pub kind: String,
    pub name: String,
    /// The item's value, as JSON text.
    pub value: String,
}

/// A release as the history records it.
#[derive(Debug, Clone, Serialize)]
pub struct Release {
    pub version: String,
    pub platform: String,
    pub published: Option<String>,
    pub status: String,
    pub error: Option<String>,
    pub digest: Option<String>,
    pub modules: Option<u64>,
    pub bundle_bytes: Option<u64>,
    pub code_split: Option<bool>,
    pub bun_layout: Option<String>,
    pub container: Option<String>,
    /// Whether the release was scanned by this analysis version.
    pub current: bool,
    /// The store's row of its build (not part of any output).
    #[serde(skip)]
    pub build_id: Option<i64>,
}

/// An item's value as read from the store (shared by the releases of its
/// build), with the length of its JSON text: what a copy of it costs.
#[derive(Debug, Clone)]
pub struct StoredValue {
    pub value: std::rc::Rc<Value>,
    pub bytes: u64,
}

impl From<Value> for StoredValue {
    fn from(v: Value) -> StoredValue {
        let bytes = v.to_string().len() as u64;
        StoredValue {
            value: std::rc::Rc::new(v),
            bytes,
        }
    }
}

/// `text` as JSON when it is at most `max` bytes (checked before parsing).
fn parse_bounded(text: &[u8], max: usize) -> Option<Value> {
    if text.len() > max {
        return None;
    }
    serde_json::from_slice(text).ok()
}

/// One row of `releases` joined to its build, or why it is not a release.
fn release_of(r: &rusqlite::Row) -> Result<Release, String> {
    let col = |e: rusqlite::Error| format!("unreadable ({e})");
    let build_id: Option<i64> = r.get(12).map_err(col)?;
    let found: Option<i64> = r.get(13).map_err(col)?;
    let status: String = r.get(3).map_err(col)?;
    if build_id.is_some() && found.is_none() {
        return Err(format!(
            "names build {} that the store does not hold",
            build_id.unwrap_or_default()
        ));
    }
    if status == "ok" && build_id.is_none() {
        return Err("scanned but names no build".into());
    }
    let count = |i| -> Result<Option<u64>, String> {
        Ok(r.get::<_, Option<i64>>(i).map_err(col)?.map(|n| n as u64))
    };
    Ok(Release {
        version: r.get(0).map_err(col)?,
        platform: r.get(1).map_err(col)?,
        published: r.get(2).map_err(col)?,
        status,
        error: r.get(4).map_err(col)?,
        digest: r.get(5).map_err(col)?,
        modules: count(6)?,
        bundle_bytes: count(7)?,
        code_split: r.get(8).map_err(col)?,
        bun_layout: r.get(9).map_err(col)?,
        container: r.get(10).map_err(col)?,
        current: r.get::<_, Option<String>>(11).map_err(col)?.as_deref() == Some(ANALYSIS_VERSION),
        build_id,
    })
}

fn semver_key(v: &str) -> semver::Version {
    semver::Version::parse(v).unwrap_or(semver::Version::new(0, 0, 0))
}

impl FactsStore {
    fn history_err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.display().to_string(),
            source: e,
        }
    }

    /// Charge `bytes` to the command's budget (inside a query: the error
    /// ends it).
    pub(super) fn charge(&self, bytes: u64) -> rusqlite::Result<()> {
        use std::sync::atomic::Ordering;
        let ok = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .is_ok();
        if ok {
            return Ok(());
        }
        Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_TOOBIG),
            Some(format!(
                "answering would read more than {} MiB of it into memory (a store of real releases needs far less): refused",
                COMMAND_BUDGET >> 20
            )),
        ))
    }

    /// [`FactsStore::charge`] outside a query.
    pub fn charge_answer(&self, bytes: u64) -> Result<(), StoreError> {
        self.charge(bytes).map_err(|e| self.history_err(e))
    }

    /// Note a damaged row left out of the answer.
    pub(super) fn skip(&self, what: String) {
        if let Ok(mut s) = self.skipped.lock()
            && s.len() < 100
        {
            s.insert(what);
        }
    }

    /// The damaged rows the history's reads left out so far (at most 100).
    pub fn skipped(&self) -> Vec<String> {
        self.skipped
            .lock()
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Run `f` on the connection, reporting errors (history commands must
    /// say when the store fails them, not carry on as a cache would).
    pub(super) fn query<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| StoreError::Poisoned(self.path.display().to_string()))?;
        f(&conn).map_err(|e| self.history_err(e))
    }

    /// Whether (version, platform) was scanned successfully by this
    /// analysis version, or is known to have no program: a rescan can
    /// skip it.
    pub fn release_done(&self, version: &str, platform: &str) -> Result<bool, StoreError> {
        self.query(|c| {
            c.query_row(
                "SELECT 1 FROM releases WHERE version = ?1 AND platform = ?2
                 AND (status = 'ok' AND analysis_version = ?3 OR status = 'empty')",
                params![version, platform, ANALYSIS_VERSION],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
        })
    }

    /// Record a scanned release: its build (already in `builds`, by digest)
    /// and the items of its facts, replacing what an earlier scan stored.
    pub fn record_release(
        &self,
        version: &str,
        platform: &str,
        published: Option<&str>,
        digest: &str,
        build: &super::BuildRow,
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
                    ins.execute(params![id, i.kind, i.name, i.value.to_string()])?;
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
                items.iter().map(|i| (i.kind, i.name.as_str(), &i.value)),
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
    fn write_summary<'a>(
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
        super::search::touch(tx)
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
    fn ensure_text_index(&self) -> Result<(), StoreError> {
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

    /// Close the connection to the file, at the end of a command. The
    /// store lives as long as the process and the process ends with
    /// `exit`, so without this the connection was never closed: SQLite
    /// folds the write-ahead log into the database and deletes it when
    /// the last connection to the file closes, so every command left its
    /// log behind, and the next process read all of it back on open
    /// (30 ms a query after the 51 MB backfill). Closing never waits: when
    /// another process has the file open, SQLite leaves the log to it.
    /// The store answers nothing after this (its connection is to an empty
    /// in-memory database).
    pub fn close(&self) {
        let Ok(mut conn) = self.conn.lock() else {
            return;
        };
        let Ok(empty) = rusqlite::Connection::open_in_memory() else {
            return;
        };
        let _ = std::mem::replace(&mut *conn, empty).close();
    }

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

    /// Record a release that has no build: `failed` (with why; retried by
    /// the next scan) or `empty` (its package holds no program; not retried).
    pub fn record_unanalysed(
        &self,
        version: &str,
        platform: &str,
        published: Option<&str>,
        status: &str,
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
                    status,
                    error,
                    ANALYSIS_VERSION
                ],
            )
            .map(|_| ())
        })
    }

    /// Every release recorded for `platform` (all platforms when None),
    /// oldest version first. A row that does not read as a release (a
    /// column of the wrong type, a build it names that the store does not
    /// hold) is left out and noted (see [`FactsStore::skipped`]): one
    /// damaged row must not take the whole history with it.
    pub fn releases(&self, platform: Option<&str>) -> Result<Vec<Release>, StoreError> {
        let mut out = self.query(|c| {
            let mut st = c.prepare(
                "SELECT r.version, r.platform, r.published, r.status, r.error, b.digest, b.modules,
                        b.bundle_bytes, b.code_split, b.bun_layout, b.container, r.analysis_version,
                        r.build_id, b.id
                 FROM releases r LEFT JOIN builds b ON b.id = r.build_id
                 WHERE ?1 IS NULL OR r.platform = ?1",
            )?;
            let mut rows = st.query(params![platform])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let bytes: usize = (0..12)
                    .map(|i| {
                        r.get_ref(i)
                            .map_or(0, |v| v.as_bytes().map_or(8, <[u8]>::len))
                    })
                    .sum();
                self.charge(bytes as u64 + 256)?;
                match release_of(r) {
                    Ok(rel) => out.push(rel),
                    Err(why) => {
                        let name = |i| match r.get_ref(i) {
                            Ok(rusqlite::types::ValueRef::Text(t)) => {
                                String::from_utf8_lossy(&t[..t.len().min(40)]).into_owned()
                            }
                            _ => "?".into(),
                        };
                        self.skip(format!("release {} {}: {why}", name(0), name(1)));
                    }
                }
            }
            Ok(out)
        })?;
        out.sort_by(|a, b| {
            semver_key(&a.version)
                .cmp(&semver_key(&b.version))
                .then(a.platform.cmp(&b.platform))
        });
        Ok(out)
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
        let releases: Vec<Release> = self
            .releases(Some(platform))?
            .into_iter()
            .filter(|r| r.status == "ok")
            .collect();
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

    /// The texts (by rowid) that contain `needle`, exactly: the trigram
    /// index narrows them, each candidate is then searched for the needle
    /// itself; a needle shorter than a trigram, or a store without the
    /// index, scans every text. (`search` reads its own index of lines;
    /// this answers the needles that hold a newline.)
    pub(super) fn texts_containing(&self, needle: &str) -> Result<Vec<i64>, StoreError> {
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
        let json = super::inflate(&body, MAX_CHANGES_BYTES)?;
        if !super::json_values_within(&json, super::MAX_FACTS_VALUES) {
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
        let Ok(body) = zstd::bulk::compress(text.as_bytes(), super::ZSTD_LEVEL) else {
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

    /// Copy the whole store into a new SQLite file at `dest` (which must
    /// not exist).
    pub fn export_sqlite(&self, dest: &std::path::Path) -> Result<(), StoreError> {
        // VACUUM INTO opens its file by name and follows a link there (a
        // link made after the caller looked would be written through). So
        // the copy is made in a new private folder beside `dest`, then
        // linked into place: a hard link fails, and follows nothing, when
        // anything at all (a file, a link) is at `dest` by then.
        let io = |path: &std::path::Path, source| StoreError::Io {
            path: path.display().to_string(),
            source,
        };
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
        // A published copy is queried as it is, maybe where nobody may
        // write: it gets its search index (and summaries) made first.
        let _ = self.ensure_search_index();
        let dir = private_dir_in(parent).map_err(|e| io(parent, e))?;
        let tmp = dir.join("export.sqlite");
        let made = self
            .query(|c| {
                c.execute("VACUUM INTO ?1", params![tmp.display().to_string()])
                    .map(|_| ())
            })
            .and_then(|()| std::fs::hard_link(&tmp, dest).map_err(|e| io(dest, e)));
        let _ = std::fs::remove_dir_all(&dir);
        made
    }

    /// Every item row with its release, for JSON and CSV exports.
    pub fn all_items(&self, platform: Option<&str>) -> Result<Vec<ItemRow>, StoreError> {
        self.query(|c| {
            let mut st = c.prepare(
                "SELECT r.version, r.platform, i.kind, i.name, i.value
                 FROM items i JOIN releases r ON r.build_id = i.build_id
                 WHERE (?1 IS NULL OR r.platform = ?1) AND r.status = 'ok'",
            )?;
            let mut rows = st.query(params![platform])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                // Releases sharing a build repeat its items: each copy is
                // charged (and parsed again by the JSON export).
                let bytes: usize = (0..5)
                    .map(|i| {
                        r.get_ref(i)
                            .map_or(0, |v| v.as_bytes().map_or(8, <[u8]>::len))
                    })
                    .sum();
                self.charge(bytes as u64 * PARSED_COST + 128)?;
                out.push(ItemRow {
                    version: r.get(0)?,
                    platform: r.get(1)?,
                    kind: r.get(2)?,
                    name: r.get(3)?,
                    value: r.get(4)?,
                });
            }
            Ok(out)
        })
    }
}

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
    /// Every scanned release of `platform` with its figures and what
    /// changed against the one before (by item name; values are for
    /// `changes`), from the items alone.
    pub fn timeline(&self, platform: &str) -> Result<Vec<TimelineRow>, StoreError> {
        let releases: Vec<Release> = self
            .releases(Some(platform))?
            .into_iter()
            .filter(|r| r.status == "ok")
            .collect();
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
fn sorted_difference(a: &[i64], b: &[i64]) -> impl Iterator<Item = i64> {
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

/// The fields of two item values that differ.
fn value_changes(a: &Value, b: &Value) -> Vec<(String, Value, Value)> {
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

/// Parse a RANGE against the versions published, oldest first: `A..B`,
/// `A..`, `..B`, `all`, a comma-separated list, or one version; `latest`
/// names the newest. Versions named in a list must be published.
pub fn select_range(range: &str, published: &[String]) -> Result<Vec<String>, String> {
    let newest = published.last().cloned();
    let resolve = |v: &str| -> Result<Option<semver::Version>, String> {
        let v = v.trim();
        if v.is_empty() {
            return Ok(None);
        }
        let v = if v == "latest" {
            newest.clone().ok_or("no version is published")?
        } else {
            v.to_string()
        };
        semver::Version::parse(&v)
            .map(Some)
            .map_err(|_| format!("{v:?} is not a version (like 2.1.220)"))
    };
    let range = range.trim();
    if range == "all" {
        return Ok(published.to_vec());
    }
    if let Some((lo, hi)) = range.split_once("..") {
        let (lo, hi) = (resolve(lo)?, resolve(hi)?);
        if let (Some(l), Some(h)) = (&lo, &hi)
            && l > h
        {
            return Err(format!("the range {range} is empty: {l} is after {h}"));
        }
        return Ok(published
            .iter()
            .filter(|v| {
                let v = semver_key(v);
                lo.as_ref().is_none_or(|l| &v >= l) && hi.as_ref().is_none_or(|h| &v <= h)
            })
            .cloned()
            .collect());
    }
    let mut out = Vec::new();
    for v in range.split(',') {
        let want = resolve(v)?.ok_or_else(|| format!("empty version in {range:?}"))?;
        let found = published
            .iter()
            .find(|p| semver_key(p) == want)
            .ok_or_else(|| format!("{want} is not published"))?;
        if !out.contains(found) {
            out.push(found.clone());
        }
    }
    out.sort_by_key(|v| semver_key(v));
    Ok(out)
}

/// A new folder in `parent` that only this user can enter.
fn private_dir_in(parent: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for n in 0..100u32 {
        let dir = parent.join(format!(
            ".cc-teardown-export-{}-{stamp}-{n}",
            std::process::id()
        ));
        match b.create(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            made => return made.map(|()| dir),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free name for a private folder",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions() -> Vec<String> {
        ["2.1.9", "2.1.10", "2.1.11", "2.1.20"]
            .map(String::from)
            .to_vec()
    }

    /// The SQLite export writes a new file and nothing else: never into
    /// an existing file or through a link, nothing left beside it.
    #[cfg(unix)]
    #[test]
    fn the_sqlite_export_never_writes_through_what_is_at_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let store = FactsStore::open(&FactsStore::path_in(dir.path())).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let copy = out.join("copy.sqlite");
        store.export_sqlite(&copy).unwrap();
        drop(FactsStore::open_as(&copy, super::super::Ownership::Named).expect("a store"));
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let existing = out.join("existing.sqlite");
        std::fs::write(&existing, b"").unwrap();
        let link = out.join("link.sqlite");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let dangling = out.join("dangling.sqlite");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        for at in [&existing, &link, &dangling] {
            assert!(store.export_sqlite(at).is_err(), "{}", at.display());
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&existing).unwrap(), b"");
        assert!(!dir.path().join("nowhere").exists());
        let mut left: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "copy.sqlite",
                "dangling.sqlite",
                "existing.sqlite",
                "link.sqlite"
            ],
            "no private folder left behind"
        );
    }

    #[test]
    fn ranges_select_by_version_number_not_text() {
        let p = versions();
        assert_eq!(
            select_range("2.1.10..2.1.11", &p).unwrap(),
            ["2.1.10", "2.1.11"]
        );
        assert_eq!(select_range("2.1.11..", &p).unwrap(), ["2.1.11", "2.1.20"]);
        assert_eq!(select_range("..2.1.10", &p).unwrap(), ["2.1.9", "2.1.10"]);
        assert_eq!(select_range("..latest", &p).unwrap(), p);
        assert_eq!(select_range("all", &p).unwrap(), p);
        assert_eq!(
            select_range("2.1.20,2.1.9", &p).unwrap(),
            ["2.1.9", "2.1.20"]
        );
        assert!(
            select_range("2.1.12", &p)
                .unwrap_err()
                .contains("not published")
        );
        assert!(
            select_range("2.1.20..2.1.9", &p)
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            select_range("x..", &p)
                .unwrap_err()
                .contains("not a version")
        );
    }

    fn rel(v: &str) -> Release {
        Release {
            version: v.into(),
            platform: "p".into(),
            published: None,
            status: "ok".into(),
            error: None,
            digest: None,
            modules: None,
            bundle_bytes: None,
            code_split: None,
            bun_layout: None,
            container: None,
            current: true,
            build_id: None,
        }
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
