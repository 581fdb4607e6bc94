//! The facts store: one SQLite database under the cache directory holding,
//! for every build analysed on this machine, the facts the analyses
//! established — so a second command on the same build reads them instead
//! of parsing 20–100 MB of JavaScript again. The schema is in docs/guide/cache.md;
//! it is made for many builds (the history work reads the same file).
//!
//! A store can only ever cost a recomputation, never a wrong answer: every
//! body carries its SHA-256, facts are keyed by the analysis version, and a
//! file in the cache directory that SQLite calls corrupt, or that is not
//! ours, is set aside and rebuilt. A file the user named (`--store`) is
//! never removed or overwritten: anything there but a store of ours is an
//! error. Neither ever goes through a link or into a device, FIFO or folder.

pub mod history;
pub mod key;
pub mod search;

use crate::analysis::analysed::{ANALYSIS_VERSION, Facts, FactsCache};
use crate::analysis::diff::code::CodeFacts;
use crate::analysis::surface::Surface;
use crate::source::FileIdentity;
use key::MachineKey;
use rusqlite::config::DbConfig;
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Marks the file as ours (`PRAGMA application_id`): "cctf".
const APPLICATION_ID: i32 = 0x6363_7466;
/// The schema's version (`PRAGMA user_version`); a file with another one is
/// rebuilt rather than migrated: everything in it can be recomputed.
const SCHEMA_VERSION: i32 = 1;
/// How long a writer waits for another process's transaction.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// Facts are JSON compressed with zstd at this level: ~10× smaller, and
/// decoding stays a few milliseconds.
const ZSTD_LEVEL: i32 = 3;
/// The most a stored facts body may inflate to. The largest real facts are
/// 5.1 MB of JSON (2.1.332 darwin-arm64, measured 2026-12); 32 MiB leaves
/// six times that for builds to grow into (past it a build's facts are
/// recomputed on every command, never wrong). A hostile row
/// under a 512 MiB cap inflated to 520 MB of JSON that took over 12 GB to
/// parse.
pub(crate) const MAX_FACTS_BYTES: usize = 32 << 20;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS builds (
    id          INTEGER PRIMARY KEY,
    digest      TEXT NOT NULL UNIQUE,
    version     TEXT,
    platform    TEXT,
    container   TEXT,
    bun_layout  TEXT,
    modules     INTEGER,
    js_modules  INTEGER,
    code_split  INTEGER,
    bundle_bytes INTEGER,
    first_seen  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE IF NOT EXISTS files (
    path        TEXT NOT NULL,
    arch        TEXT NOT NULL,
    dev         INTEGER NOT NULL,
    ino         INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    PRIMARY KEY (path, arch)
);
CREATE TABLE IF NOT EXISTS facts (
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    analysis_version TEXT NOT NULL,
    encoding    TEXT NOT NULL,
    body        BLOB NOT NULL,
    body_sha256 TEXT NOT NULL,
    created     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (build_id, analysis_version)
);
";

/// What a diff reads of a build's code (analysis::diff::code::CodeFacts),
/// one row per build and analysis version beside its facts. Added after
/// schema 1 shipped and created on open when missing, so an older store
/// keeps its facts.
const CODE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS code_facts (
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    analysis_version TEXT NOT NULL,
    encoding    TEXT NOT NULL,
    body        BLOB NOT NULL,
    body_sha256 TEXT NOT NULL,
    text        BLOB NOT NULL,
    text_sha256 TEXT NOT NULL,
    created     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (build_id, analysis_version)
);
";
/// The most a stored code body, or the units' text, may inflate to: the
/// largest builds' are ~150 MB; a corrupt or hostile row must not exhaust
/// memory. (Only rows this machine sealed are ever inflated.)
const MAX_CODE_BYTES: u64 = 1 << 30;

/// The seals of rows this machine wrote (see [`key`]): what a row is
/// (`facts`, `code`, `file`, `store`), which one (its key columns), and the
/// HMAC of its content under this machine's key. Added after schema 1
/// shipped, created on open when missing, like `code_facts`.
const SEAL_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS seals (
    what        TEXT NOT NULL,
    key         TEXT NOT NULL,
    seal        TEXT NOT NULL,
    PRIMARY KEY (what, key)
) WITHOUT ROWID;
";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("facts store {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("facts store {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("facts store {0}: a thread using it panicked")]
    Poisoned(String),
    #[error("facts store {path} is {what}, not a file of its own: refused, it was left as it is")]
    NotAFile { path: String, what: &'static str },
    #[error(
        "{path} is not a cc-teardown facts store ({why}); it was left as it is: name another file with --store"
    )]
    NotOurs { path: String, why: String },
    #[error("facts store {path} cannot be written here and {what}: query a copy you may write")]
    ReadOnly { path: String, what: &'static str },
}

/// Whose file a store's path names, which decides what may become of a
/// file there that is not a usable store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// facts.sqlite in the cache directory: ours. A damaged, foreign or
    /// older file there is removed and rebuilt: it only ever holds what can
    /// be computed again.
    Cache,
    /// A file the user named (`--store`, `CC_TEARDOWN_STORE`): perhaps a
    /// history someone published and hours of scanning, perhaps a typo for
    /// another file. Never removed or overwritten; anything there but a
    /// store of ours is an error.
    Named,
}

/// The files SQLite keeps for a database at a path: the database, its
/// write-ahead log and shared-memory index, and a rollback journal.
const SIDE_FILES: [&str; 4] = ["", "-wal", "-shm", "-journal"];

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Every file of a store at `path` is absent or a plain regular file with
/// one name. SQLite would open a FIFO or a device, write through a
/// symbolic link, or into a file hard-linked from elsewhere; and a store
/// that cannot be used is removed, which must never take a device node or
/// someone's file with it.
fn check_files(path: &Path) -> Result<(), StoreError> {
    for suffix in SIDE_FILES {
        let p = with_suffix(path, suffix);
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(StoreError::Io {
                    path: p.display().to_string(),
                    source,
                });
            }
        };
        let what = crate::source::untrusted::kind_of(meta.file_type());
        if what != "a regular file" {
            return Err(StoreError::NotAFile {
                path: p.display().to_string(),
                what,
            });
        }
        #[cfg(unix)]
        if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            return Err(StoreError::NotAFile {
                path: p.display().to_string(),
                what: "a file with other hard links",
            });
        }
    }
    Ok(())
}

/// What a build is, as far as the store records it next to its facts.
#[derive(Debug, Clone, Default)]
pub struct BuildRow {
    pub version: Option<String>,
    pub platform: Option<String>,
    pub container: Option<String>,
    pub bun_layout: Option<String>,
    pub modules: Option<u64>,
    pub js_modules: Option<u64>,
    pub code_split: Option<bool>,
    pub bundle_bytes: Option<u64>,
}

/// `cache info`: what the store holds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoreInfo {
    pub path: String,
    pub bytes: u64,
    pub schema_version: i32,
    pub analysis_version: &'static str,
    pub builds: u64,
    pub files: u64,
    /// Facts rows of this analysis version, and of older ones (ignored).
    pub facts_current: u64,
    pub facts_other_versions: u64,
    pub facts_bytes: u64,
}

pub struct FactsStore {
    path: PathBuf,
    ownership: Ownership,
    conn: Mutex<Connection>,
    /// This machine's key: without it no stored facts are believed (they
    /// are computed) and none are sealed.
    key: Option<MachineKey>,
    /// What the history's reads may still bring into memory in this
    /// process (see [`history::COMMAND_BUDGET`]).
    budget: std::sync::atomic::AtomicU64,
    /// Rows the history's reads found damaged and left out, one line each.
    skipped: Mutex<std::collections::BTreeSet<String>>,
}

fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

impl FactsStore {
    /// The store's file in a cache directory.
    pub fn path_in(cache_dir: &Path) -> PathBuf {
        cache_dir.join("facts.sqlite")
    }

    /// Open (creating it if needed) the store in a cache directory's
    /// `path`; see [`FactsStore::open_as`].
    pub fn open(path: &Path) -> Result<FactsStore, StoreError> {
        Self::open_as(path, Ownership::Cache)
    }

    /// Open the store at `path` with the key of the cache folder it is in
    /// when the cache owns it, and with no key when the user named it (see
    /// [`FactsStore::open_keyed`]).
    pub fn open_as(path: &Path, ownership: Ownership) -> Result<FactsStore, StoreError> {
        let key = match (ownership, path.parent()) {
            (Ownership::Cache, Some(dir)) => MachineKey::in_folder(dir).ok(),
            _ => None,
        };
        Self::open_keyed(path, ownership, key)
    }

    /// Open (creating it if needed) the store at `path`. A file there that
    /// is damaged, foreign or of another schema is removed and rebuilt when
    /// the cache owns it, and refused when the user named it. `key` is this
    /// machine's: only rows sealed with it are believed about a build.
    pub fn open_keyed(
        path: &Path,
        ownership: Ownership,
        key: Option<MachineKey>,
    ) -> Result<FactsStore, StoreError> {
        if ownership == Ownership::Cache
            && let Some(dir) = path.parent()
        {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: dir.display().to_string(),
                source,
            })?;
        }
        check_files(path)?;
        let conn = match Self::connect(path, key.as_ref()) {
            Ok(c) => c,
            Err(e) if ownership == Ownership::Named => {
                return Err(match e.sqlite_error_code() {
                    Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                        StoreError::NotOurs {
                            path: path.display().to_string(),
                            why: e.to_string(),
                        }
                    }
                    _ => StoreError::Sqlite {
                        path: path.display().to_string(),
                        source: e,
                    },
                });
            }
            Err(_) => {
                Self::remove_files(path)?;
                Self::connect(path, key.as_ref()).map_err(|source| StoreError::Sqlite {
                    path: path.display().to_string(),
                    source,
                })?
            }
        };
        Ok(FactsStore {
            path: path.to_path_buf(),
            ownership,
            conn: Mutex::new(conn),
            key,
            budget: std::sync::atomic::AtomicU64::new(history::command_budget(path)),
            skipped: Mutex::new(Default::default()),
        })
    }

    fn connect(path: &Path, key: Option<&MachineKey>) -> rusqlite::Result<Connection> {
        // No URI names (a store path is a path), and never through a link.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags)?;
        // A store may be someone else's file (`--store`, "a history
        // database someone published"): its schema's SQL never runs
        // functions with side effects, and no SQL of ours can corrupt it.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        let ours = app == APPLICATION_ID && version == SCHEMA_VERSION;
        // SQLite opens a file it may not write read-only (a store someone
        // published, in a shared folder or on a read-only mount).
        let read_only = conn.is_readonly(rusqlite::MAIN_DB)?;
        let refused = if ours {
            check_schema(&conn).err().map(|e| e.to_string())
        } else if tables > 0 || app != 0 {
            // Someone else's file, or an older schema.
            Some(if app == APPLICATION_ID {
                format!("schema {version}, this tool reads schema {SCHEMA_VERSION}")
            } else {
                "another program's database".to_string()
            })
        } else if read_only {
            Some("an empty file this user cannot write".to_string())
        } else {
            None
        };
        if let Some(why) = refused {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_NOTADB),
                Some(why),
            ));
        }
        if read_only {
            // Read as it is: no journal mode to set, no table to add.
            // What would write (a backfill of summaries, a search index
            // older than the items) fails and says the file is read-only.
            conn.pragma_update(None, "query_only", true)?;
            return Ok(conn);
        }
        // WAL: readers never wait for a writer; two processes analysing
        // at once each commit their own transaction.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        if !ours {
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))?;
        }
        conn.execute_batch(history::SCHEMA)?;
        conn.execute_batch(search::SCHEMA)?;
        conn.execute_batch(CODE_SCHEMA)?;
        conn.execute_batch(SEAL_SCHEMA)?;
        // A store this machine made says so (a history answer from any
        // other store is labelled as its author's). Only a new file gets
        // the mark: a store made elsewhere never becomes "made here".
        if !ours && let Some(k) = key {
            conn.execute(
                "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('store', 'made', ?1)",
                params![k.seal(&[b"store", b"made"])],
            )?;
        }
        Ok(conn)
    }

    /// Remove a store's files: regular files only (checked first, so
    /// nothing else is touched when one of them is not).
    fn remove_files(path: &Path) -> Result<(), StoreError> {
        check_files(path)?;
        for suffix in SIDE_FILES {
            let p = with_suffix(path, suffix);
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(StoreError::Io {
                        path: p.display().to_string(),
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// Throw the file away and start again (after SQLite reported damage
    /// mid-run) — only a cache's own file; a named store is left as it is
    /// and the operation just fails.
    fn rebuild(&self, conn: &mut Connection) {
        if self.ownership == Ownership::Cache
            && Self::remove_files(&self.path).is_ok()
            && let Ok(c) = Self::connect(&self.path, self.key.as_ref())
        {
            *conn = c;
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `f` on the connection; on damage, rebuild the file and give up
    /// on this one operation (the caller then recomputes).
    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Option<T> {
        let mut conn = self.conn.lock().ok()?;
        match f(&conn) {
            Ok(v) => Some(v),
            Err(e) => {
                if is_damage(&e) {
                    self.rebuild(&mut conn);
                }
                None
            }
        }
    }

    /// The bundle digest of a file seen before, if it has not changed since
    /// (same device, inode, size and modification time, as git's index
    /// trusts them) and this machine recorded it (its seal holds: a row
    /// someone else wrote could name another build's digest).
    pub fn digest_for(&self, file: &FileIdentity, arch: &str) -> Option<String> {
        let key = self.key.as_ref()?;
        let (digest, seal): (String, String) = self
            .with(|c| {
                c.query_row(
                    "SELECT b.digest, s.seal FROM files f JOIN builds b ON b.id = f.build_id
                     JOIN seals s ON s.what = 'file' AND s.key = f.arch || ' ' || f.path
                     WHERE f.path = ?1 AND f.arch = ?2 AND f.dev = ?3 AND f.ino = ?4
                       AND f.size = ?5 AND f.mtime_ns = ?6",
                    params![
                        file.path,
                        arch,
                        file.dev as i64,
                        file.ino as i64,
                        file.size as i64,
                        file.mtime_ns
                    ],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
            })
            .flatten()?;
        key.verify(&file_parts(file, arch, &digest).each(), &seal)
            .then_some(digest)
    }

    /// Record a build and, when given, the file it was read from.
    pub fn remember(&self, digest: &str, row: &BuildRow, file: Option<(&FileIdentity, &str)>) {
        self.with(|c| {
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            let id = Self::build_id(&tx, digest, row)?;
            if let Some((f, arch)) = file {
                tx.execute(
                    "INSERT OR REPLACE INTO files (path, arch, dev, ino, size, mtime_ns, build_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        f.path,
                        arch,
                        f.dev as i64,
                        f.ino as i64,
                        f.size as i64,
                        f.mtime_ns,
                        id
                    ],
                )?;
                if let Some(k) = &self.key {
                    tx.execute(
                        "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('file', ?1 || ' ' || ?2, ?3)",
                        params![arch, f.path, k.seal(&file_parts(f, arch, digest).each())],
                    )?;
                }
            }
            tx.commit()
        });
    }

    fn build_id(c: &Connection, digest: &str, row: &BuildRow) -> rusqlite::Result<i64> {
        c.execute(
            "INSERT INTO builds (digest, version, platform, container, bun_layout, modules,
                                 js_modules, code_split, bundle_bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT(digest) DO UPDATE SET
                version = coalesce(excluded.version, version),
                platform = coalesce(excluded.platform, platform),
                container = coalesce(excluded.container, container),
                bun_layout = coalesce(excluded.bun_layout, bun_layout),
                modules = coalesce(excluded.modules, modules),
                js_modules = coalesce(excluded.js_modules, js_modules),
                code_split = coalesce(excluded.code_split, code_split),
                bundle_bytes = coalesce(excluded.bundle_bytes, bundle_bytes)",
            params![
                digest,
                row.version,
                row.platform,
                row.container,
                row.bun_layout,
                row.modules.map(|n| n as i64),
                row.js_modules.map(|n| n as i64),
                row.code_split,
                row.bundle_bytes.map(|n| n as i64)
            ],
        )?;
        c.query_row(
            "SELECT id FROM builds WHERE digest = ?1",
            params![digest],
            |r| r.get(0),
        )
    }

    /// What the store holds.
    pub fn info(&self) -> StoreInfo {
        let bytes = ["", "-wal"]
            .iter()
            .map(|s| {
                let mut p = self.path.as_os_str().to_owned();
                p.push(s);
                std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
            })
            .sum();
        let count = |sql: &str| -> u64 {
            self.with(|c| c.query_row(sql, params![ANALYSIS_VERSION], |r| r.get::<_, i64>(0)))
                .unwrap_or(0) as u64
        };
        StoreInfo {
            path: self.path.display().to_string(),
            bytes,
            schema_version: SCHEMA_VERSION,
            analysis_version: ANALYSIS_VERSION,
            builds: count("SELECT count(*) FROM builds WHERE ?1 IS NOT NULL"),
            files: count("SELECT count(*) FROM files WHERE ?1 IS NOT NULL"),
            facts_current: count("SELECT count(*) FROM facts WHERE analysis_version = ?1"),
            facts_other_versions: count("SELECT count(*) FROM facts WHERE analysis_version != ?1"),
            facts_bytes: count(
                "SELECT coalesce(sum(length(body)), 0) FROM facts WHERE ?1 IS NOT NULL",
            ),
        }
    }

    /// Delete the store's files (`cache clear`). A named file is deleted
    /// only when it is a store of ours.
    pub fn clear(path: &Path, ownership: Ownership) -> Result<(), StoreError> {
        // Both steps check the files' kinds first (open_as, remove_files).
        if ownership == Ownership::Named && path.exists() {
            drop(Self::open_as(path, Ownership::Named)?);
        }
        Self::remove_files(path)
    }
}

/// One object of a database's schema, as `sqlite_master` lists it: type,
/// name, table, and the SQL that made it.
type SchemaObject = (String, String, String, Option<String>);

/// Every object a store of ours may hold — tables, indexes, the text
/// index's virtual table with its shadow tables and triggers — as SQLite
/// records them: made once per process in an empty database in memory by
/// the very statements that make them in a store.
fn our_objects() -> Option<&'static std::collections::HashSet<SchemaObject>> {
    static OURS: std::sync::OnceLock<Option<std::collections::HashSet<SchemaObject>>> =
        std::sync::OnceLock::new();
    OURS.get_or_init(|| {
        let c = Connection::open_in_memory().ok()?;
        for sql in [
            SCHEMA,
            history::SCHEMA,
            search::SCHEMA,
            CODE_SCHEMA,
            SEAL_SCHEMA,
            history::TEXT_INDEX,
            history::MERGE_SCHEMA,
        ] {
            c.execute_batch(sql).ok()?;
        }
        schema_of(&c).ok()
    })
    .as_ref()
}

fn schema_of(c: &Connection) -> rusqlite::Result<std::collections::HashSet<SchemaObject>> {
    let mut st = c.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    rows.collect()
}

/// A file that says it is a store of ours holds only objects a store of
/// ours holds, each made by our SQL. Anything else — a view or a trigger
/// in place of a table (SQL of the file's author that every query would
/// run: a recursive view hung `history list` for ever), a table with other
/// columns or constraints, an index or statistics table of its own — and
/// the file is not ours. Objects may be missing (they are made when first
/// needed).
fn check_schema(conn: &Connection) -> Result<(), SchemaError> {
    let ours = our_objects().ok_or(SchemaError::NoReference)?;
    let theirs = schema_of(conn).map_err(SchemaError::Unreadable)?;
    let mut foreign: Vec<&SchemaObject> = theirs.iter().filter(|o| !ours.contains(*o)).collect();
    // What runs SQL of the file's author first in the message.
    let rank = |kind: &str| {
        ["view", "trigger", "table", "index"]
            .iter()
            .position(|k| *k == kind)
    };
    foreign.sort_by(|a, b| (rank(&a.0), &a.1).cmp(&(rank(&b.0), &b.1)));
    match foreign.first() {
        None => Ok(()),
        Some((kind, name, _, _)) => Err(SchemaError::Foreign {
            kind: kind.clone(),
            name: name.clone(),
            more: foreign.len() - 1,
        }),
    }
}

/// Why a file with this tool's marks is still not its store.
#[derive(Debug, thiserror::Error)]
enum SchemaError {
    #[error("cannot build the reference schema")]
    NoReference,
    #[error("{0}")]
    Unreadable(rusqlite::Error),
    #[error("its schema is not this tool's: {kind} {name:?}{}", match more {
        0 => String::new(),
        n => format!(" and {n} more object(s)"),
    })]
    Foreign {
        kind: String,
        name: String,
        more: usize,
    },
}

/// The content of a row a seal covers, as owned parts.
struct Parts(Vec<Vec<u8>>);

impl Parts {
    fn each(&self) -> Vec<&[u8]> {
        self.0.iter().map(Vec::as_slice).collect()
    }
}

fn file_parts(f: &FileIdentity, arch: &str, digest: &str) -> Parts {
    Parts(vec![
        b"file".to_vec(),
        f.path.as_bytes().to_vec(),
        arch.as_bytes().to_vec(),
        f.dev.to_le_bytes().to_vec(),
        f.ino.to_le_bytes().to_vec(),
        f.size.to_le_bytes().to_vec(),
        f.mtime_ns.to_le_bytes().to_vec(),
        digest.as_bytes().to_vec(),
    ])
}

/// How a facts body is written: four zstd frames of JSON, one after the
/// other — the facts but their surface, the surface but its prompts, the
/// prompts without their texts, the texts ([`Facts::stored_parts`]) — so
/// that a command decodes only the part it shows, and the surface's parts
/// on both cores.
pub(crate) const FACTS_ENCODING: &str = "json+zstd/core,surface,prompts,texts";

fn encode(facts: &Facts) -> Option<Vec<u8>> {
    let [core, rest, prompts, texts] = facts.stored_parts().ok()?;
    let compress = |j: &[u8]| zstd::bulk::compress(j, ZSTD_LEVEL).ok();
    let ((core, rest), (prompts, texts)) = rayon::join(
        || rayon::join(|| compress(&core), || compress(&rest)),
        || rayon::join(|| compress(&prompts), || compress(&texts)),
    );
    let mut body = core?;
    body.extend(rest?);
    body.extend(prompts?);
    body.extend(texts?);
    Some(body)
}

/// A facts body's four frames, in their order; nothing may follow them.
fn frames(body: &[u8]) -> Option<[&[u8]; 4]> {
    let mut rest = body;
    let mut next = || {
        let n = zstd::zstd_safe::find_frame_compressed_size(rest).ok()?;
        let (frame, after) = rest.split_at_checked(n)?;
        rest = after;
        Some(frame)
    };
    let frames = [next()?, next()?, next()?, next()?];
    rest.is_empty().then_some(frames)
}

/// One part's JSON, inflated and counted within the bounds.
fn part_json(frame: &[u8]) -> Option<Vec<u8>> {
    let json = inflate(frame, MAX_FACTS_BYTES as u64)?;
    json_values_within(&json, MAX_FACTS_VALUES).then_some(json)
}

/// The surface's parts as JSON ([`crate::analysis::surface::StoredParts`]),
/// the texts only when they were asked for.
struct SurfaceJson {
    rest: Vec<u8>,
    prompts: Vec<u8>,
    texts: Option<Vec<u8>>,
}

/// The surface's parts, inflated side by side: the texts only when asked.
fn surface_json(rest: &[u8], prompts: &[u8], texts: Option<&[u8]>) -> Option<SurfaceJson> {
    let (rest, (prompts, texts)) = rayon::join(
        || part_json(rest),
        || rayon::join(|| part_json(prompts), || texts.map(part_json)),
    );
    let texts = match texts {
        Some(t) => Some(t?),
        None => None,
    };
    Some(SurfaceJson {
        rest: rest?,
        prompts: prompts?,
        texts,
    })
}

fn decode(body: &[u8]) -> Option<Facts> {
    let [core, rest, prompts, texts] = frames(body)?;
    let (core, surface) = rayon::join(
        || part_json(core),
        || surface_json(rest, prompts, Some(texts)),
    );
    let s = surface?;
    Facts::from_parts(&core?, &s.rest, &s.prompts, s.texts.as_deref()?).ok()
}

fn decode_core(body: &[u8]) -> Option<Facts> {
    let [core, ..] = frames(body)?;
    serde_json::from_slice(&part_json(core)?).ok()
}

/// The surface, with its prompts' texts or without them (an outline).
fn decode_surface(body: &[u8], with_texts: bool) -> Option<Surface> {
    let [_, rest, prompts, texts] = frames(body)?;
    let s = surface_json(rest, prompts, with_texts.then_some(texts))?;
    Surface::from_parts(&s.rest, &s.prompts, s.texts.as_deref()).ok()
}

/// The most JSON values (objects, arrays, scalars) a part of a facts body
/// may hold.
/// What a parse allocates grows with the values, not the bytes: two bytes
/// (`{}`) can make a struct of hundreds, so the bytes' cap alone let a
/// body under it take gigabytes. The largest real part counts 313,842 by
/// [`json_values_within`]'s rule (2.1.332 darwin-arm64's prompts, 6.4 MB
/// of JSON, measured 2026-12-06); the cap leaves three times that.
pub(crate) const MAX_FACTS_VALUES: usize = 1_000_000;

/// Whether `json` holds at most `max` values ([`crate::js::json`]).
pub(crate) fn json_values_within(json: &[u8], max: usize) -> bool {
    crate::js::json::values_up_to(json, max) <= max
}

/// Inflate a zstd body of at most `limit` bytes: at once when its frame
/// says its size, else growing the buffer as the data comes (a bulk
/// decompress reserves its whole limit up front).
fn inflate(body: &[u8], limit: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    // A frame that declares its size (the store writes every frame so) is
    // inflated at once into a buffer of exactly that size, within the
    // limit: growing one as the data came took a third of a warm run. A
    // size that lies is an error (too small) or unused room (too large,
    // still within the limit); room that cannot be had is a miss, never
    // an abort.
    if let Ok(Some(n)) = zstd::zstd_safe::get_frame_content_size(body) {
        if n > limit {
            return None;
        }
        let mut out = Vec::new();
        out.try_reserve_exact(usize::try_from(n).ok()?).ok()?;
        zstd::bulk::Decompressor::new()
            .ok()?
            .decompress_to_buffer(body, &mut out)
            .ok()?;
        return (out.len() as u64 == n).then_some(out);
    }
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(body)
        .ok()?
        .take(limit + 1)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() as u64 <= limit).then_some(out)
}

fn encode_code(code: &CodeFacts) -> Option<(Vec<u8>, Vec<u8>)> {
    let json = serde_json::to_vec(code).ok()?;
    let (body, text) = rayon::join(
        || zstd::bulk::compress(&json, ZSTD_LEVEL).ok(),
        || zstd::bulk::compress(code.unit_text.as_bytes(), ZSTD_LEVEL).ok(),
    );
    Some((body?, text?))
}

fn decode_code(body: &[u8], text: &[u8]) -> Option<CodeFacts> {
    let (code, text) = rayon::join(
        || -> Option<CodeFacts> { serde_json::from_slice(&inflate(body, MAX_CODE_BYTES)?).ok() },
        || String::from_utf8(inflate(text, MAX_CODE_BYTES)?).ok(),
    );
    let mut code = code?;
    code.unit_text = text?;
    code.is_consistent().then_some(code)
}

/// A build's stored code facts: the compressed body, the unit text, and
/// the seal over both.
struct CodeRow {
    body: Vec<u8>,
    text: Vec<u8>,
    seal: Option<String>,
}

/// A build's stored facts: the compressed body, its SHA-256 as stored,
/// and the seal over it (None: never sealed).
struct FactsRow {
    body: Vec<u8>,
    body_sha256: String,
    seal: Option<String>,
}

impl FactsStore {
    /// A build's stored facts body of this analysis version and its seal
    /// (None when it has none).
    fn facts_row(&self, digest: &str) -> Option<FactsRow> {
        let sealed = self.with(|c| {
            c.query_row(
                "SELECT f.body, f.body_sha256, s.seal FROM facts f JOIN builds b ON b.id = f.build_id
                 LEFT JOIN seals s ON s.what = 'facts' AND s.key = b.digest || ' ' || f.analysis_version
                 WHERE b.digest = ?1 AND f.analysis_version = ?2 AND f.encoding = ?3",
                params![digest, ANALYSIS_VERSION, FACTS_ENCODING],
                |r| {
                    Ok(FactsRow {
                        body: r.get(0)?,
                        body_sha256: r.get(1)?,
                        seal: r.get(2)?,
                    })
                },
            )
            .optional()
        });
        if let Some(row) = sealed {
            return row;
        }
        // A store written before seals that cannot be written (a published
        // read-only copy) has no `seals` table: its history still answers.
        self.with(|c| {
            c.query_row(
                "SELECT f.body, f.body_sha256 FROM facts f JOIN builds b ON b.id = f.build_id
                 WHERE b.digest = ?1 AND f.analysis_version = ?2 AND f.encoding = ?3",
                params![digest, ANALYSIS_VERSION, FACTS_ENCODING],
                |r| {
                    Ok(FactsRow {
                        body: r.get(0)?,
                        body_sha256: r.get(1)?,
                        seal: None,
                    })
                },
            )
            .optional()
        })
        .flatten()
    }

    /// A build's facts as the store holds them, sealed or not: what a
    /// history says (`history changes` of a published store), never what
    /// analysis believes about a build. Bounded as any stored body.
    pub(crate) fn recorded_facts(&self, digest: &str) -> Option<Facts> {
        let FactsRow {
            body,
            body_sha256: sha,
            ..
        } = self.facts_row(digest)?;
        if hex::encode(Sha256::digest(&body)) != sha {
            return None;
        }
        decode(&body)
    }

    /// A build's facts body, when this machine sealed it.
    fn sealed_body(&self, digest: &str) -> Option<Vec<u8>> {
        let key = self.key.as_ref()?;
        let FactsRow { body, seal, .. } = self.facts_row(digest)?;
        key.verify(&facts_parts(digest, &body), &seal?)
            .then_some(body)
    }

    /// Whether this machine made the store (it holds this machine's mark).
    pub fn made_here(&self) -> bool {
        let Some(k) = &self.key else { return false };
        self.with(|c| {
            c.query_row(
                "SELECT seal FROM seals WHERE what = 'store' AND key = 'made'",
                [],
                |r| r.get::<_, String>(0),
            )
            .optional()
        })
        .flatten()
        .is_some_and(|s| k.verify(&[b"store", b"made"], &s))
    }
}

fn facts_parts<'a>(digest: &'a str, body: &'a [u8]) -> [&'a [u8]; 4] {
    [
        b"facts",
        digest.as_bytes(),
        ANALYSIS_VERSION.as_bytes(),
        body,
    ]
}

fn code_parts<'a>(digest: &'a str, body: &'a [u8], text: &'a [u8]) -> [&'a [u8]; 5] {
    [
        b"code",
        digest.as_bytes(),
        ANALYSIS_VERSION.as_bytes(),
        body,
        text,
    ]
}

impl FactsCache for FactsStore {
    /// Only facts this machine sealed: the seal is checked before anything
    /// is inflated or parsed, so a row someone else wrote costs nothing
    /// but the recomputation.
    fn load(&self, digest: &str) -> Option<Facts> {
        decode(&self.sealed_body(digest)?)
    }

    fn load_core(&self, digest: &str) -> Option<Facts> {
        decode_core(&self.sealed_body(digest)?)
    }

    fn load_surface(&self, digest: &str) -> Option<Surface> {
        decode_surface(&self.sealed_body(digest)?, true)
    }

    fn load_outline(&self, digest: &str) -> Option<Surface> {
        decode_surface(&self.sealed_body(digest)?, false)
    }

    fn load_code(&self, digest: &str) -> Option<CodeFacts> {
        let key = self.key.as_ref()?;
        let CodeRow { body, text, seal } = self
            .with(|c| {
                c.query_row(
                    "SELECT f.body, f.text, s.seal
                     FROM code_facts f JOIN builds b ON b.id = f.build_id
                     LEFT JOIN seals s ON s.what = 'code' AND s.key = b.digest || ' ' || f.analysis_version
                     WHERE b.digest = ?1 AND f.analysis_version = ?2 AND f.encoding = 'json+zstd'",
                    params![digest, ANALYSIS_VERSION],
                    |r| {
                        Ok(CodeRow {
                            body: r.get(0)?,
                            text: r.get(1)?,
                            seal: r.get(2)?,
                        })
                    },
                )
                .optional()
            })
            .flatten()?;
        if !key.verify(&code_parts(digest, &body, &text), &seal?) {
            return None;
        }
        decode_code(&body, &text)
    }

    fn save_code(&self, digest: &str, code: &CodeFacts) {
        let Some(key) = &self.key else { return };
        let Some((body, text)) = encode_code(code) else {
            return;
        };
        let (body_sha, text_sha) = (
            hex::encode(Sha256::digest(&body)),
            hex::encode(Sha256::digest(&text)),
        );
        let seal = key.seal(&code_parts(digest, &body, &text));
        self.with(|c| {
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            let id = Self::build_id(&tx, digest, &BuildRow::default())?;
            tx.execute(
                "INSERT OR REPLACE INTO code_facts
                     (build_id, analysis_version, encoding, body, body_sha256, text, text_sha256)
                 VALUES (?1, ?2, 'json+zstd', ?3, ?4, ?5, ?6)",
                params![id, ANALYSIS_VERSION, body, body_sha, text, text_sha],
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('code', ?1 || ' ' || ?2, ?3)",
                params![digest, ANALYSIS_VERSION, seal],
            )?;
            tx.execute(
                "DELETE FROM code_facts WHERE build_id = ?1 AND analysis_version != ?2",
                params![id, ANALYSIS_VERSION],
            )?;
            tx.commit()
        });
    }

    /// Facts are sealed as they are saved; without this machine's key they
    /// are not saved (nothing unsealed is ever believed).
    fn save(&self, digest: &str, facts: &Facts) {
        let Some(key) = &self.key else { return };
        let Some(body) = encode(facts) else {
            return;
        };
        let sha = hex::encode(Sha256::digest(&body));
        let seal = key.seal(&facts_parts(digest, &body));
        self.with(|c| {
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            let id = Self::build_id(&tx, digest, &BuildRow::default())?;
            tx.execute(
                "INSERT OR REPLACE INTO facts (build_id, analysis_version, encoding, body, body_sha256)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, ANALYSIS_VERSION, FACTS_ENCODING, body, sha],
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('facts', ?1 || ' ' || ?2, ?3)",
                params![digest, ANALYSIS_VERSION, seal],
            )?;
            // One analysis version's facts a build: an upgraded tool's
            // rescan of every release doubled the history's store (137 MB
            // of facts nothing reads any more) and would again each time.
            tx.execute(
                "DELETE FROM facts WHERE build_id = ?1 AND analysis_version != ?2",
                params![id, ANALYSIS_VERSION],
            )?;
            tx.commit()
        });
    }
}

#[cfg(test)]
mod tests;
