//! `history merge`: stores scanned on several machines (a platform each,
//! or a range each) made into one new store.
//!
//! The inputs are opened read-only (SQLite's read-only mode, `query_only`,
//! never through a link) and checked as any store is (our marks, our
//! schema and nothing else); nothing is written into them. For every
//! release (version, platform) one input's row is kept: a scanned one over
//! a failed one, then the one recorded by this analysis version, then the
//! one scanned last, then the first input named (so the choice never
//! depends on anything but the inputs). Its build's row, items, texts and
//! facts are copied from that input; the derived tables (summaries, names,
//! text references, the text and search indexes, the answers of `history
//! changes` between consecutive releases) are made again here, by the
//! code a scan runs, so the merged store answers as one that scanned
//! everything itself.
//!
//! Trust (docs/internals/security.md): a facts row keeps its seal only
//! when the seal is this machine's (the input was made here); any other
//! facts are recomputed before analysis believes them. The merged store
//! carries this machine's mark only when every input does; it lists its
//! inputs (`merged_from`), each with whether this machine made it, so
//! every history answer from it says where its releases came from.
//!
//! Every row read is bounded before it is kept (values, texts, facts and
//! answers past the caps the store's readers apply are left out and
//! listed under `skipped`); one build's rows at a time are in memory.

use super::items::{sha, text_ref};
use super::{MAX_VALUE_BYTES, ReleaseStatus, parse_bounded};
use crate::analysis::analysed::ANALYSIS_VERSION;
use crate::store::key::MachineKey;
use crate::store::{
    APPLICATION_ID, BuildRow, FACTS_ENCODING, FactsStore, MAX_FACTS_BYTES, Ownership,
    SCHEMA_VERSION, StoreError, check_files, check_schema, facts_parts,
};
use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The inputs of a merged store (created only in a merged store; an
/// object of ours, so a merged store is a store like any other). Whether
/// this machine made an input is a seal in `seals` (`what = 'source'`,
/// `key` = the row's id), checked with the reader's key: it holds only on
/// the machine that merged, and only for inputs that machine had made.
pub(in crate::store) const MERGE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS merged_from (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL,
    releases    INTEGER NOT NULL,
    merged      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
";

/// The most a text (a prompt, a workflow script) may hold when copied.
const MAX_TEXT_BYTES: usize = 16 << 20;
/// The most a stored `changes` answer may hold, compressed, when copied.
const MAX_CHANGES_BODY: usize = 8 << 20;
/// The most one build's items may hold (names and values), when copied:
/// real builds hold a few megabytes.
const MAX_BUILD_ITEMS_BYTES: usize = 128 << 20;
/// The most the releases of all inputs may hold in memory at once.
const MAX_RELEASES_BYTES: usize = 256 << 20;
/// The longest version, platform, time or digest a release row may have.
const MAX_SHORT: usize = 256;
/// The longest error message kept (longer ones are cut).
const MAX_ERROR: usize = 4096;

/// What a merge did.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    pub output: String,
    pub inputs: Vec<MergedInput>,
    /// Releases in the merged store.
    pub releases: usize,
    /// Builds in the merged store.
    pub builds: usize,
    /// Whether the merged store carries this machine's mark (every input did).
    pub made_here: bool,
    /// Rows of the inputs left out (damaged or past a cap), one line each.
    pub skipped: Vec<String>,
    pub seconds: f64,
}

/// One input of a merge.
#[derive(Debug, Clone, Serialize)]
pub struct MergedInput {
    pub path: String,
    pub made_here: bool,
    /// Its releases read.
    pub releases: usize,
    /// Of those, the ones the merged store keeps.
    pub kept: usize,
}

/// Where a merged store's releases came from, as its `merged_from` lists
/// them.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Source {
    pub path: String,
    pub releases: u64,
    /// Whether the machine reading it made that input and merged it.
    pub made_here: bool,
}

/// How a merge tells how it goes.
pub trait MergeProgress {
    fn stage(&self, what: &str);
}

/// Why a merge was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Refused(String),
}

/// One release row of an input, read and bounded.
#[derive(Debug, Clone)]
struct Candidate {
    input: usize,
    version: String,
    platform: String,
    published: Option<String>,
    status: ReleaseStatus,
    error: Option<String>,
    analysis_version: Option<String>,
    scanned: String,
    /// (digest, the input's build id) of an analysed release.
    build: Option<(String, i64)>,
}

impl Candidate {
    /// What decides between two rows of one release: scanned over failed,
    /// this analysis version over another, the later scan, the first input.
    fn rank(&self) -> (u8, bool, &str, std::cmp::Reverse<usize>) {
        let status = match self.status {
            ReleaseStatus::Ok => 2,
            ReleaseStatus::Empty => 1,
            ReleaseStatus::Failed => 0,
        };
        (
            status,
            self.analysis_version.as_deref() == Some(ANALYSIS_VERSION),
            &self.scanned,
            std::cmp::Reverse(self.input),
        )
    }

    fn bytes(&self) -> usize {
        self.version.len()
            + self.platform.len()
            + self.published.as_ref().map_or(0, String::len)
            + self.error.as_ref().map_or(0, String::len)
            + self.analysis_version.as_ref().map_or(0, String::len)
            + self.scanned.len()
            + self.build.as_ref().map_or(0, |b| b.0.len())
            + 128
    }
}

/// An input store, open read-only.
struct Input {
    path: PathBuf,
    conn: Connection,
    made_here: bool,
}

/// Open a store to read only: never written, never through a link, and
/// only when it is a store of ours (marks and schema).
fn open_input(path: &Path, key: Option<&MachineKey>) -> Result<Input, StoreError> {
    let sq = |source| StoreError::Sqlite {
        path: path.display().to_string(),
        source,
    };
    check_files(path)?;
    if !path.is_file() {
        return Err(StoreError::Io {
            path: path.display().to_string(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    // A store that was closed has no log beside it: it is read as an
    // immutable file, so SQLite makes no log or index files beside it
    // either (a read-only open of a store in WAL mode makes both, and
    // leaves them). A store with a log (open in another process, or not
    // closed) is read through it, as SQLite reads any store.
    let conn = if crate::store::with_suffix(path, "-wal")
        .symlink_metadata()
        .is_err()
    {
        Connection::open_with_flags(
            immutable_uri(path).map_err(|source| StoreError::Io {
                path: path.display().to_string(),
                source,
            })?,
            flags | OpenFlags::SQLITE_OPEN_URI,
        )
    } else {
        Connection::open_with_flags(path, flags)
    }
    .map_err(sq)?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA,
        false,
    )
    .map_err(sq)?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .map_err(sq)?;
    conn.pragma_update(None, "query_only", true).map_err(sq)?;
    let not_ours = |why: String| StoreError::NotOurs {
        path: path.display().to_string(),
        why,
    };
    let marks: rusqlite::Result<(i32, i32)> = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .and_then(|app| {
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .map(|v| (app, v))
        });
    let (app, version) = marks.map_err(|e| not_ours(e.to_string()))?;
    if app != APPLICATION_ID {
        return Err(not_ours("another program's database".into()));
    }
    if version != SCHEMA_VERSION {
        return Err(not_ours(format!(
            "schema {version}, this tool reads schema {SCHEMA_VERSION}"
        )));
    }
    check_schema(&conn).map_err(|e| not_ours(e.to_string()))?;
    let made_here = key.is_some_and(|k| {
        conn.query_row(
            "SELECT seal FROM seals WHERE what = 'store' AND key = 'made'",
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()
        .ok()
        .flatten()
        .is_some_and(|s| k.verify(&[b"store", b"made"], &s))
    });
    Ok(Input {
        path: path.to_path_buf(),
        conn,
        made_here,
    })
}

/// `file:PATH?immutable=1` for the absolute `path`, every byte but the
/// unreserved ones and `/` percent-encoded.
fn immutable_uri(path: &Path) -> std::io::Result<String> {
    let abs = std::path::absolute(path)?;
    let mut uri = String::from("file:");
    for b in abs.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(*b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    Ok(uri)
}

/// A text column of at most `max` bytes (None: absent, or longer).
fn short(r: &rusqlite::Row, i: usize, max: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(t) if t.len() <= max => Some(String::from_utf8_lossy(t).into_owned()),
        _ => None,
    })
}

/// Every release row of an input, bounded; damaged ones noted in `skipped`.
fn read_releases(
    input: &Input,
    index: usize,
    budget: &mut usize,
    skipped: &mut Vec<String>,
) -> Result<Vec<Candidate>, MergeError> {
    let path = input.path.display().to_string();
    let sq = |source| StoreError::Sqlite {
        path: path.clone(),
        source,
    };
    let mut st = input
        .conn
        .prepare(
            "SELECT r.version, r.platform, r.published, r.status, r.error, r.analysis_version,
                    r.scanned, b.digest, b.id, r.build_id
             FROM releases r LEFT JOIN builds b ON b.id = r.build_id",
        )
        .map_err(sq)?;
    let mut rows = st.query([]).map_err(sq)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(sq)? {
        let c = (|| -> rusqlite::Result<Result<Candidate, String>> {
            let (Some(version), Some(platform)) =
                (short(r, 0, MAX_SHORT)?, short(r, 1, MAX_SHORT)?)
            else {
                return Ok(Err(
                    "a release without a readable version and platform".into()
                ));
            };
            let label = |why: &str| format!("release {version} {platform}: {why}");
            let Some(status) = short(r, 3, 16)?.as_deref().and_then(ReleaseStatus::parse) else {
                return Ok(Err(label("its status is none a scan writes")));
            };
            let digest = short(r, 7, MAX_SHORT)?;
            let id: Option<i64> = r.get(8).ok().flatten();
            let named: Option<i64> = r.get(9).ok().flatten();
            if named.is_some() && id.is_none() {
                return Ok(Err(label("names a build the store does not hold")));
            }
            let build = digest.zip(id);
            if status == ReleaseStatus::Ok && build.is_none() {
                return Ok(Err(label("scanned but names no build")));
            }
            let error = match r.get_ref(4)? {
                rusqlite::types::ValueRef::Text(t) => {
                    let t = &t[..t.len().min(MAX_ERROR)];
                    Some(String::from_utf8_lossy(t).into_owned())
                }
                _ => None,
            };
            Ok(Ok(Candidate {
                input: index,
                published: short(r, 2, MAX_SHORT)?,
                status,
                error,
                analysis_version: short(r, 5, MAX_SHORT)?,
                scanned: short(r, 6, MAX_SHORT)?.unwrap_or_default(),
                build: if status == ReleaseStatus::Ok {
                    build
                } else {
                    None
                },
                version,
                platform,
            }))
        })()
        .map_err(sq)?;
        match c {
            Ok(c) => {
                *budget = budget.checked_sub(c.bytes()).ok_or_else(|| {
                    MergeError::Refused(format!(
                        "{path}: its releases would take more than {} MiB of memory: refused",
                        MAX_RELEASES_BYTES >> 20
                    ))
                })?;
                out.push(c);
            }
            Err(why) => skipped.push(format!("{path}: {why}")),
        }
    }
    Ok(out)
}

/// Where the merged store goes: `dest` must not exist, or with `force` be
/// a regular file of its own (no other names, no log beside it) that is
/// none of the inputs.
fn check_dest(dest: &Path, inputs: &[PathBuf], force: bool) -> Result<(), MergeError> {
    let refuse = |why: String| Err(MergeError::Refused(why));
    let meta = match std::fs::symlink_metadata(dest) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return refuse(format!("{}: {e}", dest.display())),
    };
    if !force {
        return refuse(format!(
            "{} already exists; choose a new file (or --force to replace it)",
            dest.display()
        ));
    }
    if !meta.file_type().is_file() {
        return refuse(format!(
            "{} is {}: refused, it was left as it is",
            dest.display(),
            crate::source::untrusted::kind_of(meta.file_type())
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return refuse(format!(
                "{} has other hard links: refused, it was left as it is",
                dest.display()
            ));
        }
        for i in inputs {
            if let Ok(m) = std::fs::metadata(i)
                && m.dev() == meta.dev()
                && m.ino() == meta.ino()
            {
                return refuse(format!(
                    "{} is one of the stores merged: a merge never writes into its inputs",
                    dest.display()
                ));
            }
        }
    }
    for s in ["-wal", "-shm", "-journal"] {
        let side = crate::store::with_suffix(dest, s);
        if side.symlink_metadata().is_ok() {
            return refuse(format!(
                "{} exists: the store at {} is open or was not closed; refused, it was left as it is",
                side.display(),
                dest.display()
            ));
        }
    }
    Ok(())
}

/// A new folder beside `dest` that only this user can enter, for the
/// merged store while it is made.
fn private_dir_beside(dest: &Path) -> std::io::Result<PathBuf> {
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    for n in 0..100u32 {
        let dir = parent.join(format!(".cc-teardown-merge.{}.{n}", std::process::id()));
        match b.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
}

/// Removes the folder a merge is made in, whatever happens.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Merge the stores at `inputs` into a new store at `dest` (see the
/// module's documentation). `key` is this machine's.
pub fn merge_stores(
    inputs: &[PathBuf],
    dest: &Path,
    force: bool,
    key: Option<MachineKey>,
    progress: &dyn MergeProgress,
) -> Result<Merged, MergeError> {
    let started = Instant::now();
    if inputs.is_empty() {
        return Err(MergeError::Refused("name the stores to merge".into()));
    }
    check_dest(dest, inputs, force)?;
    let opened: Vec<Input> = inputs
        .iter()
        .map(|p| open_input(p, key.as_ref()))
        .collect::<Result<_, _>>()?;
    let mut skipped = Vec::new();
    let mut budget = MAX_RELEASES_BYTES;
    let mut read = vec![0usize; opened.len()];
    // The row kept for each release.
    let mut chosen: BTreeMap<(String, String), Candidate> = BTreeMap::new();
    for (i, input) in opened.iter().enumerate() {
        progress.stage(&format!("reading {}", input.path.display()));
        for c in read_releases(input, i, &mut budget, &mut skipped)? {
            read[i] += 1;
            let k = (c.version.clone(), c.platform.clone());
            match chosen.get(&k) {
                Some(old) if old.rank() >= c.rank() => {}
                _ => {
                    chosen.insert(k, c);
                }
            }
        }
    }
    // Each build is copied from one input: that of the best row naming it.
    let mut builds: BTreeMap<String, Candidate> = BTreeMap::new();
    for c in chosen.values() {
        if let Some((d, _)) = &c.build {
            match builds.get(d) {
                Some(old) if old.rank() >= c.rank() => {}
                _ => {
                    builds.insert(d.clone(), c.clone());
                }
            }
        }
    }

    let scratch = Scratch(private_dir_beside(dest).map_err(|e| {
        MergeError::Refused(format!("{}: cannot write beside it: {e}", dest.display()))
    })?);
    let tmp = scratch.0.join("merged.sqlite");
    // Opened without a key: a new store gets this machine's mark only
    // below, when every input had it.
    let out = FactsStore::open_keyed(&tmp, Ownership::Named, None)?;
    // The text index is made once every text is in (one bulk build),
    // not text by text through its triggers.
    out.query(|c| c.execute_batch(MERGE_SCHEMA))?;
    let mut ids: HashMap<String, i64> = HashMap::new();
    let total = builds.len();
    for (n, (digest, c)) in builds.iter().enumerate() {
        progress.stage(&format!(
            "build {}/{total}: {} {}",
            n + 1,
            c.version,
            c.platform
        ));
        let input = &opened[c.input];
        match copy_build(input, &out, digest, c, key.as_ref(), &mut skipped)? {
            Some(id) => {
                ids.insert(digest.clone(), id);
            }
            None => skipped.push(format!(
                "{}: release {} {}: its build's items could not be copied (left out)",
                input.path.display(),
                c.version,
                c.platform
            )),
        }
    }
    // The releases, each with its build's row in the merged store and the
    // analysis version its build's items were recorded by.
    let mut kept = vec![0usize; opened.len()];
    let mut releases = 0;
    out.query(|c| {
        let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
        {
            let mut ins = tx.prepare(
                "INSERT INTO releases (version, platform, published, build_id, status, error,
                                       analysis_version, scanned)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for r in chosen.values() {
                let (id, analysis) = match &r.build {
                    Some((d, _)) => match ids.get(d) {
                        Some(id) => (
                            Some(*id),
                            builds.get(d).and_then(|b| b.analysis_version.clone()),
                        ),
                        None => continue,
                    },
                    None => (None, r.analysis_version.clone()),
                };
                ins.execute(params![
                    r.version,
                    r.platform,
                    r.published,
                    id,
                    r.status.as_str(),
                    r.error,
                    analysis,
                    r.scanned
                ])?;
                kept[r.input] += 1;
                releases += 1;
            }
        }
        tx.commit()
    })?;
    // The answers of `history changes` the inputs hold for pairs of
    // builds both kept (this analysis version's: no other is read).
    for input in &opened {
        progress.stage(&format!("stored changes of {}", input.path.display()));
        copy_changes(input, &out, &ids, &mut skipped)?;
    }
    // Then every pair of consecutive releases, as a scan leaves it (a
    // pair whose releases came from two inputs has no answer yet).
    let platforms: BTreeSet<String> = chosen.keys().map(|(_, p)| p.clone()).collect();
    for p in &platforms {
        progress.stage(&format!("{p}: changes between consecutive releases"));
        let ok: Vec<_> = out
            .analysed_releases(p)?
            .into_iter()
            .filter(|r| r.current)
            .collect();
        for w in ok.windows(2) {
            let _ = out.changes_between(&w[0], &w[1], p);
        }
    }
    progress.stage("text and search indexes");
    out.ensure_text_index()?;
    out.ensure_search_index()?;
    // Where its releases came from, and whether this machine made it.
    let made_here = key.is_some() && opened.iter().all(|i| i.made_here);
    out.query(|c| {
        let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
        for (i, input) in opened.iter().enumerate() {
            let path = input.path.display().to_string();
            tx.execute(
                "INSERT INTO merged_from (id, path, releases) VALUES (?1, ?2, ?3)",
                params![i as i64 + 1, path, kept[i] as i64],
            )?;
            if let Some(k) = key.as_ref().filter(|_| input.made_here) {
                let id = (i + 1).to_string();
                tx.execute(
                    "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('source', ?1, ?2)",
                    params![id, k.seal(&source_parts(&id, &path))],
                )?;
            }
        }
        if let Some(k) = key.as_ref().filter(|_| made_here) {
            tx.execute(
                "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('store', 'made', ?1)",
                params![k.seal(&[b"store", b"made"])],
            )?;
        }
        tx.commit()
    })?;
    let nbuilds = ids.len();
    let made: Vec<bool> = opened.iter().map(|i| i.made_here).collect();
    // Closed (its log folded in and removed), then put in place: linked
    // when nothing may be at `dest` (a link fails, following nothing, when
    // anything is there by then), renamed over the file `--force` allows
    // (a rename replaces the name, never writes through it).
    out.close();
    drop(out);
    drop(opened);
    let placed = if force && dest.symlink_metadata().is_ok() {
        check_dest(dest, inputs, true)?;
        std::fs::rename(&tmp, dest)
    } else {
        std::fs::hard_link(&tmp, dest)
    };
    placed.map_err(|e| MergeError::Refused(format!("{}: {e}", dest.display())))?;
    drop(scratch);
    skipped.truncate(1000);
    Ok(Merged {
        output: dest.display().to_string(),
        inputs: (0..inputs.len())
            .map(|i| MergedInput {
                path: inputs[i].display().to_string(),
                made_here: made[i],
                releases: read[i],
                kept: kept[i],
            })
            .collect(),
        releases,
        builds: nbuilds,
        made_here,
        skipped,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn source_parts<'a>(id: &'a str, path: &'a str) -> [&'a [u8]; 3] {
    [b"source", id.as_bytes(), path.as_bytes()]
}

/// Copy one build from `input` into `out`: its row, items, the texts they
/// refer to and its facts (sealed again only when the seal is this
/// machine's); its summary, names and text references are made here. One
/// transaction. None when its items cannot be read within the caps.
fn copy_build(
    input: &Input,
    out: &FactsStore,
    digest: &str,
    c: &Candidate,
    key: Option<&MachineKey>,
    skipped: &mut Vec<String>,
) -> Result<Option<i64>, MergeError> {
    let path = input.path.display().to_string();
    let sq = |source| StoreError::Sqlite {
        path: path.clone(),
        source,
    };
    let Some((_, src_id)) = &c.build else {
        return Ok(None);
    };
    let row = input
        .conn
        .query_row(
            "SELECT version, platform, container, bun_layout, modules, js_modules, code_split,
                    bundle_bytes FROM builds WHERE id = ?1",
            params![src_id],
            |r| {
                let n = |i| -> rusqlite::Result<Option<u64>> {
                    Ok(r.get::<_, Option<i64>>(i)
                        .ok()
                        .flatten()
                        .map(|n| n.max(0) as u64))
                };
                Ok(BuildRow {
                    version: short(r, 0, MAX_SHORT)?,
                    platform: short(r, 1, MAX_SHORT)?,
                    container: short(r, 2, MAX_SHORT)?,
                    bun_layout: short(r, 3, MAX_SHORT)?,
                    modules: n(4)?,
                    js_modules: n(5)?,
                    code_split: r.get::<_, Option<bool>>(6).ok().flatten(),
                    bundle_bytes: n(7)?,
                })
            },
        )
        .map_err(sq)?;
    // Its items, within the caps.
    let mut items: Vec<(String, String, Value)> = Vec::new();
    let mut bytes = 0usize;
    {
        let mut st = input
            .conn
            .prepare("SELECT kind, name, value FROM items WHERE build_id = ?1")
            .map_err(sq)?;
        let mut rows = st.query(params![src_id]).map_err(sq)?;
        while let Some(r) = rows.next().map_err(sq)? {
            let (Some(kind), Some(name)) = (
                short(r, 0, MAX_SHORT).map_err(sq)?,
                short(r, 1, 64 << 10).map_err(sq)?,
            ) else {
                skipped.push(format!(
                    "{path}: an item of build {digest}: unreadable kind or name"
                ));
                continue;
            };
            let text = r.get_ref(2).map_err(sq)?.as_bytes().unwrap_or_default();
            let Some(value) = parse_bounded(text, MAX_VALUE_BYTES) else {
                skipped.push(format!(
                    "{path}: the {kind} item of build {digest}: its value is not JSON of at most {} kB",
                    MAX_VALUE_BYTES >> 10
                ));
                continue;
            };
            bytes += kind.len() + name.len() + text.len() * super::PARSED_COST as usize;
            if bytes > MAX_BUILD_ITEMS_BYTES {
                skipped.push(format!(
                    "{path}: build {digest}: its items hold more than {} MiB",
                    MAX_BUILD_ITEMS_BYTES >> 20
                ));
                return Ok(None);
            }
            items.push((kind, name, value));
        }
    }
    // The texts they refer to, each checked against its hash.
    let wanted: BTreeSet<&str> = items.iter().filter_map(|(_, _, v)| text_ref(v)).collect();
    let mut texts: Vec<(String, String)> = Vec::new();
    {
        let mut st = input
            .conn
            .prepare("SELECT text FROM texts WHERE sha256 = ?1")
            .map_err(sq)?;
        for h in wanted {
            let t: Option<Option<String>> = st
                .query_row(params![h], |r| short(r, 0, MAX_TEXT_BYTES))
                .optional()
                .map_err(sq)?;
            match t.flatten() {
                Some(t) if sha(&t) == h => texts.push((h.to_string(), t)),
                Some(_) => skipped.push(format!("{path}: text {h}: does not match its hash")),
                None => {}
            }
        }
    }
    // Its facts of the analysis version its release was recorded by.
    let facts: Option<(String, Vec<u8>, String, Option<String>)> = match &c.analysis_version {
        None => None,
        Some(av) => input
            .conn
            .query_row(
                "SELECT f.encoding, f.body, f.body_sha256, s.seal FROM facts f
                 LEFT JOIN seals s ON s.what = 'facts' AND s.key = ?2 || ' ' || f.analysis_version
                 WHERE f.build_id = ?1 AND f.analysis_version = ?3 AND length(f.body) <= ?4",
                params![src_id, digest, av, MAX_FACTS_BYTES as i64],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get::<_, Option<String>>(3).ok().flatten(),
                    ))
                },
            )
            .optional()
            .map_err(sq)?,
    };
    let facts = facts.filter(|(enc, body, sha, _)| {
        let ok = enc == FACTS_ENCODING && hex::encode(Sha256::digest(body)) == *sha;
        if !ok {
            skipped.push(format!(
                "{path}: the facts of build {digest}: not as stored (encoding or hash)"
            ));
        }
        ok
    });
    let id = out.query(|conn| {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let id = FactsStore::build_id(&tx, digest, &row)?;
        {
            let mut ins =
                tx.prepare("INSERT OR REPLACE INTO items (build_id, kind, name, value) VALUES (?1, ?2, ?3, ?4)")?;
            for (k, n, v) in &items {
                ins.execute(params![id, k, n, v.to_string()])?;
            }
            let mut txt = tx.prepare("INSERT OR IGNORE INTO texts (sha256, text) VALUES (?1, ?2)")?;
            for (h, t) in &texts {
                txt.execute(params![h, t])?;
            }
        }
        FactsStore::write_summary(&tx, id, items.iter().map(|(k, n, v)| (k.as_str(), n.as_str(), v)))?;
        if let (Some((_, body, sha, seal)), Some(av)) = (&facts, &c.analysis_version) {
            tx.execute(
                "INSERT OR REPLACE INTO facts (build_id, analysis_version, encoding, body, body_sha256)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, av, FACTS_ENCODING, body, sha],
            )?;
            // Only this machine's own seal is kept: any other would not
            // hold here anyway, and these facts are then computed again
            // before analysis believes them.
            if let (Some(k), Some(s)) = (key, seal)
                && av == ANALYSIS_VERSION
                && k.verify(&facts_parts(digest, body), s)
            {
                tx.execute(
                    "INSERT OR REPLACE INTO seals (what, key, seal) VALUES ('facts', ?1 || ' ' || ?2, ?3)",
                    params![digest, av, s],
                )?;
            }
        }
        tx.commit()?;
        Ok(id)
    })?;
    Ok(Some(id))
}

/// Copy the `changes` answers of this analysis version that `input` holds
/// for two builds the merged store keeps (each checked against its hash;
/// one already there is kept).
fn copy_changes(
    input: &Input,
    out: &FactsStore,
    ids: &HashMap<String, i64>,
    skipped: &mut Vec<String>,
) -> Result<(), MergeError> {
    let path = input.path.display().to_string();
    let sq = |source| StoreError::Sqlite {
        path: path.clone(),
        source,
    };
    let mut st = input
        .conn
        .prepare(
            "SELECT from_digest, to_digest, body, body_sha256 FROM changes
             WHERE analysis_version = ?1 AND length(body) <= ?2",
        )
        .map_err(sq)?;
    let mut rows = st
        .query(params![ANALYSIS_VERSION, MAX_CHANGES_BODY as i64])
        .map_err(sq)?;
    let mut found = Vec::new();
    while let Some(r) = rows.next().map_err(sq)? {
        let (Some(a), Some(b)) = (
            short(r, 0, MAX_SHORT).map_err(sq)?,
            short(r, 1, MAX_SHORT).map_err(sq)?,
        ) else {
            continue;
        };
        if !ids.contains_key(&a) || !ids.contains_key(&b) {
            continue;
        }
        let body: Vec<u8> = r.get(2).map_err(sq)?;
        let sha: String = r
            .get::<_, Option<String>>(3)
            .ok()
            .flatten()
            .unwrap_or_default();
        if hex::encode(Sha256::digest(&body)) != sha {
            skipped.push(format!(
                "{path}: a stored changes answer: does not match its hash"
            ));
            continue;
        }
        found.push((a, b, body, sha));
        if found.len() >= 64 {
            insert_changes(out, &mut found)?;
        }
    }
    insert_changes(out, &mut found)?;
    Ok(())
}

fn insert_changes(
    out: &FactsStore,
    found: &mut Vec<(String, String, Vec<u8>, String)>,
) -> Result<(), MergeError> {
    out.query(|c| {
        let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
        for (a, b, body, sha) in found.iter() {
            tx.execute(
                "INSERT OR IGNORE INTO changes (from_digest, to_digest, analysis_version, body, body_sha256)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![a, b, ANALYSIS_VERSION, body, sha],
            )?;
        }
        tx.commit()
    })?;
    found.clear();
    Ok(())
}

impl FactsStore {
    /// The inputs a merged store was made from (none for a store that was
    /// not merged), each with whether the machine reading it made it.
    pub fn merged_from(&self) -> Vec<Source> {
        let rows: Vec<(i64, String, i64, Option<String>)> = self
            .with(|c| {
                let has: bool = c
                    .query_row(
                        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'merged_from'",
                        [],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some();
                if !has {
                    return Ok(Vec::new());
                }
                let mut st = c.prepare(
                    "SELECT m.id, m.path, m.releases, s.seal FROM merged_from m
                     LEFT JOIN seals s ON s.what = 'source' AND s.key = CAST(m.id AS TEXT)
                     WHERE length(m.path) <= 4096 ORDER BY m.id LIMIT 1000",
                )?;
                let rows = st.query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get::<_, Option<String>>(3).ok().flatten(),
                    ))
                })?;
                rows.collect()
            })
            .unwrap_or_default();
        rows.into_iter()
            .map(|(id, path, releases, seal)| {
                let id = id.to_string();
                let made_here = self
                    .key
                    .as_ref()
                    .zip(seal)
                    .is_some_and(|(k, s)| k.verify(&source_parts(&id, &path), &s));
                Source {
                    path,
                    releases: releases.max(0) as u64,
                    made_here,
                }
            })
            .collect()
    }
}
