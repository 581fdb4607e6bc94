//! The history: every published build scanned, in the facts store's file.
//! A *release* is a published (version, platform) and the outcome of its
//! scan; its *items* are the named things the facts hold (workflows, flags,
//! gates, roles, tools, prompts, env vars, settings, commands, models), one
//! row each with the few values whose change matters. Queries read these
//! rows, never the facts' bodies, so they stay fast with every version
//! stored; `changes` loads two builds' facts and runs the diff on them.
//! docs/guide/history.md has the schema and the questions it answers.

use super::{FactsStore, StoreError};
use crate::analysis::analysed::ANALYSIS_VERSION;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

mod changes;
mod export;
mod find;
mod items;
mod list;
mod merge;
mod platforms;
mod range;
mod record;
mod scan;
mod site;
mod story;
mod timeline;

pub use changes::{ChangesAnswer, FACT_SECTIONS};
pub use find::{Hit, Within};
pub use items::{BuildSummary, Item, items, summarise};
pub(super) use items::{blob_hashes, name_hash};
pub use list::ListedRelease;
pub(super) use merge::MERGE_SCHEMA;
pub use merge::{MergeError, MergeProgress, Merged, MergedInput, Source, merge_stores};
pub use platforms::{PlatformSpan, PlatformValue};
pub use range::{RangeError, select_range};
pub(super) use record::TEXT_INDEX;
pub use scan::{Analyse, Job, ScanPlan, ScanProgress, ScanResult, ScanStatus, Scanned};
pub use site::{ItemSeries, SiteItems, text_fields};
pub use story::{Change, ShowAnswer, Story, story, value_changes};
pub use timeline::TimelineRow;

/// What a scan made of a release: the `status` of its row, and of its
/// JSON (`ok`, `failed`, `empty`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseStatus {
    /// Analysed: its build and items are recorded.
    Ok,
    /// The scan failed (why is in `error`); the next scan tries again.
    Failed,
    /// Its package holds no program (a placeholder release): recorded
    /// once, never retried.
    Empty,
}

impl ReleaseStatus {
    pub const ALL: [ReleaseStatus; 3] = [
        ReleaseStatus::Ok,
        ReleaseStatus::Failed,
        ReleaseStatus::Empty,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseStatus::Ok => "ok",
            ReleaseStatus::Failed => "failed",
            ReleaseStatus::Empty => "empty",
        }
    }

    /// The status a row holds, if it is one a scan writes.
    pub fn parse(s: &str) -> Option<ReleaseStatus> {
        ReleaseStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// The kinds of item, as `history show KIND` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ItemKind {
    Workflow,
    Flag,
    Gate,
    Role,
    Tool,
    Prompt,
    Env,
    Setting,
    Command,
    Model,
    Schema,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Workflow => "workflow",
            ItemKind::Flag => "flag",
            ItemKind::Gate => "gate",
            ItemKind::Role => "role",
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Env => "env",
            ItemKind::Setting => "setting",
            ItemKind::Command => "command",
            ItemKind::Model => "model",
            ItemKind::Schema => "schema",
        }
    }
}

/// Why a history question has no answer.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The registry (listing or fetching releases).
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("bad RANGE {range:?}: {why}")]
    Range { range: String, why: Box<RangeError> },
    #[error("no release scanned yet (cc-teardown history scan RANGE)")]
    NothingScanned,
    #[error("several platforms are scanned ({}); say which with --platform", .0.join(", "))]
    SeveralPlatforms(Vec<String>),
    #[error("{version} {platform} is not in the history (cc-teardown history scan {version})")]
    NotScanned { version: String, platform: String },
    #[error(
        "{version} is the oldest {platform} release scanned: there is nothing before it to compare with"
    )]
    Oldest { version: String, platform: String },
    #[error(
        "the stored facts of {0} cannot be used (made by another analysis version, or damaged, or past the caps on stored facts); rescan it (cc-teardown history scan {0})"
    )]
    FactsUnusable(String),
    #[error("search for what? TEXT is empty")]
    EmptySearch,
}

impl HistoryError {
    /// Whether the question itself was wrong (a usage error, exit 2 with
    /// kind `usage`), rather than the store or the registry failing it.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            HistoryError::Range { .. }
                | HistoryError::SeveralPlatforms(_)
                | HistoryError::EmptySearch
        )
    }
}

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
    pub status: ReleaseStatus,
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

#[cfg(test)]
impl Release {
    /// A scanned release of platform `p` and nothing else known.
    pub(crate) fn scanned_for_tests(v: &str) -> Release {
        Release {
            version: v.into(),
            platform: "p".into(),
            published: None,
            status: ReleaseStatus::Ok,
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
    let Some(status) = ReleaseStatus::parse(&status) else {
        let shown: String = status.chars().take(40).collect();
        return Err(format!("its status {shown:?} is none a scan writes"));
    };
    if status == ReleaseStatus::Ok && build_id.is_none() {
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

    /// The platforms to answer for: the one asked, else every one scanned.
    pub fn platforms(&self, asked: Option<&str>) -> Result<Vec<String>, HistoryError> {
        if let Some(p) = asked {
            return Ok(vec![p.to_string()]);
        }
        let mut ps: Vec<String> = self
            .releases(None)?
            .into_iter()
            .filter(|r| r.status == ReleaseStatus::Ok)
            .map(|r| r.platform)
            .collect();
        ps.sort();
        ps.dedup();
        if ps.is_empty() {
            return Err(HistoryError::NothingScanned);
        }
        Ok(ps)
    }

    /// The one platform a question is about: the one asked, else the only
    /// one scanned.
    pub fn one_platform(&self, asked: Option<&str>) -> Result<String, HistoryError> {
        let mut ps = self.platforms(asked)?;
        match ps.len() {
            1 => Ok(ps.remove(0)),
            _ => Err(HistoryError::SeveralPlatforms(ps)),
        }
    }

    /// The releases of `platform` that were analysed, oldest first.
    pub fn analysed_releases(&self, platform: &str) -> Result<Vec<Release>, StoreError> {
        Ok(self
            .releases(Some(platform))?
            .into_iter()
            .filter(|r| r.status == ReleaseStatus::Ok)
            .collect())
    }
}
