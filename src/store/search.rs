//! The search index: what `history search` reads, derived from the
//! history's names, build summaries, texts and text references.
//!
//! A search answers "which items hold this string, in which builds": in
//! their name (ignoring ASCII case) or in their text (a prompt's, a
//! workflow script's; exactly). Read from the history's own tables, a
//! common needle meant stepping through most of the texts (32 MB once
//! every darwin-arm64 release is stored), every (text, build, item) row of
//! the texts found (62,000 for "the user") and every item row of the names
//! found: 50–65 ms a query, over the 50 ms one may take. The index holds
//! the same answers packed the way a search reads them:
//! - `search_lines`: the distinct lines of every text an item refers to
//!   (7.7 MB of the 32: the versions of a prompt share most of their
//!   lines), in chunks of about `CHUNK_BYTES` joined by newlines, each
//!   chunk with the texts each of its lines is in. A needle without a
//!   newline is in a text exactly when it is in one of the text's lines;
//!   one with a newline is looked for in the texts themselves.
//! - `search_texts`: per text (by its `texts` rowid), the items that refer
//!   to it, each with the builds where it does.
//! - `search_names`: per item (kind, name), the builds that hold it.
//!
//! It is derived data, rebuilt whole when what it is made from changed:
//! every write of a build's items counts `search_state.items` up, and the
//! index records the count it was made from (`search_state.index`). Lists
//! of ids are ascending and written as LEB128 deltas; a list that does not
//! decode is an error, never a panic or a wrong-sized allocation.

use super::history::{blob_hashes, name_hash};
use super::{FactsStore, StoreError};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Created on every open (`IF NOT EXISTS`), empty until the first search
/// or scan fills it.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS search_state (
    key     TEXT PRIMARY KEY,
    value   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS search_names (
    hash    INTEGER PRIMARY KEY,
    kind    TEXT NOT NULL,
    name    TEXT NOT NULL,
    builds  BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS search_lines (
    id      INTEGER PRIMARY KEY,
    lines   BLOB NOT NULL,
    texts   BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS search_texts (
    id      INTEGER PRIMARY KEY,
    refs    BLOB NOT NULL
);
";

/// About how many bytes of lines one `search_lines` row holds: few rows to
/// step (30 for every darwin-arm64 release), each one read as a run of
/// overflow pages.
const CHUNK_BYTES: usize = 256 << 10;

/// Count one more write of a build's items (in the writer's transaction):
/// the index made before it is stale from now on.
pub(super) fn touch(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO search_state (key, value) VALUES ('items', 1)
         ON CONFLICT (key) DO UPDATE SET value = value + 1",
        [],
    )
    .map(|_| ())
}

fn state(c: &Connection, key: &str) -> rusqlite::Result<Option<i64>> {
    c.query_row(
        "SELECT value FROM search_state WHERE key = ?1",
        params![key],
        |r| r.get(0),
    )
    .optional()
}

/// Whether the index was made from the items as they are.
fn current(c: &Connection) -> rusqlite::Result<bool> {
    let made_from = state(c, "index")?;
    Ok(made_from.is_some() && made_from == Some(state(c, "items")?.unwrap_or(0)))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Ascending ids (non-negative) as their first value and the steps after.
fn put_ids(out: &mut Vec<u8>, ids: &[i64]) {
    let mut last = 0i64;
    for &id in ids {
        put_varint(out, id.wrapping_sub(last) as u64);
        last = id;
    }
}

/// `n` ids from `b` at `at` (or all that remain when `n` is None). Ids are
/// as [`put_ids`] writes them: strictly ascending (a step of 0 after the
/// first repeats an id: a million repeats of one build took 1.6 GB to
/// answer from a 1.1 MB store), so a list holds each id once and never
/// more of them than there are; None otherwise.
fn ids(b: &[u8], at: &mut usize, n: Option<u64>, out: &mut Vec<i64>) -> Option<()> {
    let mut last = 0i64;
    let mut left = n;
    let mut first = true;
    while left.map_or(*at < b.len(), |l| l > 0) {
        let step = i64::try_from(varint(b, at)?).ok()?;
        if step == 0 && !first {
            return None;
        }
        first = false;
        last = last.checked_add(step)?;
        out.push(last);
        left = left.map(|l| l - 1);
    }
    Some(())
}

/// A text's references: per item (by name hash), the builds.
fn put_refs(refs: &BTreeMap<i64, Vec<i64>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (hash, builds) in refs {
        out.extend_from_slice(&hash.to_le_bytes());
        put_varint(&mut out, builds.len() as u64);
        put_ids(&mut out, builds);
    }
    out
}

fn refs(b: &[u8], into: &mut HashMap<i64, Vec<i64>>) -> Option<()> {
    let mut at = 0;
    while at < b.len() {
        let hash = i64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?);
        at += 8;
        let n = varint(b, &mut at)?;
        ids(b, &mut at, Some(n), into.entry(hash).or_default())?;
    }
    Some(())
}

/// An item a search found, with the builds (store ids) that hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: String,
    pub name: String,
    pub builds: Vec<i64>,
}

/// What a search found: items by their name, items by their text.
#[derive(Debug, Default)]
pub struct SearchHits {
    pub by_name: Vec<Found>,
    pub by_text: Vec<Found>,
}

/// Make the index from the history's tables, in the caller's transaction,
/// replacing the one there.
fn rebuild(tx: &Connection, generation: i64) -> rusqlite::Result<()> {
    tx.execute_batch(
        "DELETE FROM search_names; DELETE FROM search_lines; DELETE FROM search_texts;",
    )?;
    // Names: every build's name set, turned round.
    let mut builds_of: HashMap<i64, Vec<i64>> = HashMap::new();
    {
        let mut st = tx.prepare("SELECT build_id, names FROM build_summary ORDER BY build_id")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            // A damaged summary adds no names (the history's reads say so).
            for h in blob_hashes(r.get_ref(1)?.as_blob()?).unwrap_or_default() {
                builds_of.entry(h).or_default().push(id);
            }
        }
        let mut ins = tx.prepare(
            "INSERT OR IGNORE INTO search_names (hash, kind, name, builds) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut st = tx.prepare("SELECT hash, kind, name FROM names")?;
        let mut rows = st.query([])?;
        let mut blob = Vec::new();
        while let Some(r) = rows.next()? {
            let h: i64 = r.get(0)?;
            if let Some(b) = builds_of.get(&h) {
                blob.clear();
                put_ids(&mut blob, b);
                ins.execute(params![
                    h,
                    r.get_ref(1)?.as_str()?,
                    r.get_ref(2)?.as_str()?,
                    blob
                ])?;
            }
        }
    }
    // Texts: who refers to each.
    let mut refers: BTreeMap<i64, BTreeMap<i64, Vec<i64>>> = BTreeMap::new();
    {
        let mut st = tx.prepare(
            "SELECT t.rowid, ti.build_id, ti.kind, ti.name
             FROM text_items ti JOIN texts t ON t.sha256 = ti.sha256",
        )?;
        let mut rows = st.query([])?;
        // A text's items are named in `search_names` even when no build's
        // summary has them (with no builds: never a hit by name).
        let mut name = tx.prepare(
            "INSERT OR IGNORE INTO search_names (hash, kind, name, builds) VALUES (?1, ?2, ?3, x'')",
        )?;
        while let Some(r) = rows.next()? {
            let text: i64 = r.get(0)?;
            let build: i64 = r.get(1)?;
            let (kind, item) = (r.get_ref(2)?.as_str()?, r.get_ref(3)?.as_str()?);
            let hash = name_hash(kind, item);
            name.execute(params![hash, kind, item])?;
            refers
                .entry(text)
                .or_default()
                .entry(hash)
                .or_default()
                .push(build);
        }
        let mut ins = tx.prepare("INSERT INTO search_texts (id, refs) VALUES (?1, ?2)")?;
        for (text, items) in refers.iter_mut() {
            for builds in items.values_mut() {
                builds.sort_unstable();
                builds.dedup();
            }
            ins.execute(params![text, put_refs(items)])?;
        }
    }
    // Lines: each distinct line once, with the texts that hold it, in the
    // order they first appear.
    let mut order: Vec<(String, Vec<i64>)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    {
        let mut st = tx.prepare("SELECT rowid, text FROM texts ORDER BY rowid")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let text: i64 = r.get(0)?;
            if !refers.contains_key(&text) {
                continue;
            }
            let body = r.get_ref(1)?.as_str()?;
            for line in body.split('\n').filter(|l| !l.is_empty()) {
                let at = match seen.get(line) {
                    Some(&i) => i,
                    None => {
                        seen.insert(line.to_string(), order.len());
                        order.push((line.to_string(), Vec::new()));
                        order.len() - 1
                    }
                };
                let texts = &mut order[at].1;
                if texts.last() != Some(&text) {
                    texts.push(text);
                }
            }
        }
    }
    drop(seen);
    {
        let mut ins = tx.prepare("INSERT INTO search_lines (lines, texts) VALUES (?1, ?2)")?;
        let (mut lines, mut texts) = (Vec::new(), Vec::new());
        for (i, (line, ids)) in order.iter().enumerate() {
            if !lines.is_empty() {
                lines.push(b'\n');
            }
            lines.extend_from_slice(line.as_bytes());
            put_varint(&mut texts, ids.len() as u64);
            put_ids(&mut texts, ids);
            if lines.len() >= CHUNK_BYTES || i + 1 == order.len() {
                ins.execute(params![lines, texts])?;
                lines.clear();
                texts.clear();
            }
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO search_state (key, value) VALUES ('index', ?1)",
        params![generation],
    )?;
    Ok(())
}

/// The texts (rowids) of `chunk` whose lines hold `finder`'s needle; the
/// needle holds no newline, so it is in a line exactly when a match
/// starts in it. None when the chunk's lists do not decode.
fn texts_in_chunk(
    chunk: &[u8],
    lists: &[u8],
    finder: &memchr::memmem::Finder,
    into: &mut BTreeSet<i64>,
) -> Option<()> {
    let mut hits = finder.find_iter(chunk).peekable();
    if hits.peek().is_none() {
        return Some(());
    }
    let (mut start, mut at) = (0usize, 0usize);
    let mut ids_of_line = Vec::new();
    for end in memchr::memchr_iter(b'\n', chunk).chain([chunk.len()]) {
        let n = varint(lists, &mut at)?;
        ids_of_line.clear();
        ids(lists, &mut at, Some(n), &mut ids_of_line)?;
        let mut matched = false;
        while let Some(&p) = hits.peek() {
            if p >= end {
                break;
            }
            matched |= p >= start;
            hits.next();
        }
        if matched {
            into.extend(&ids_of_line);
        }
        if hits.peek().is_none() {
            return Some(());
        }
        start = end + 1;
    }
    Some(())
}

impl FactsStore {
    /// Make the index when it is missing or older than the items (one
    /// transaction: another process may be making it too; the first wins
    /// and the second finds it current).
    pub fn ensure_search_index(&self) -> Result<(), StoreError> {
        self.ensure_summaries()?;
        if !self.query(current)? && self.read_only()? {
            return Err(StoreError::ReadOnly {
                path: self.path().display().to_string(),
                what: "its search index is older than its items",
            });
        }
        self.query(|c| {
            if current(c)? {
                return Ok(());
            }
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            if !current(&tx)? {
                let generation = state(&tx, "items")?.unwrap_or(0);
                rebuild(&tx, generation)?;
            }
            tx.commit()
        })
    }

    fn read_only(&self) -> Result<bool, StoreError> {
        self.query(|c| c.is_readonly(rusqlite::MAIN_DB))
    }

    /// Items whose name contains `part` ignoring ASCII case, the first
    /// `limit` by kind and name, and items whose text contains `needle`
    /// exactly, each with the builds that hold it (every platform).
    ///
    /// The index is derived data: one with a list that does not decode (a
    /// damaged page, someone's edit) is remade from the tables it comes
    /// from, once, and asked again; only a store that cannot be written,
    /// or an index that still does not decode, is an error.
    pub fn search(&self, needle: &str, limit: usize) -> Result<SearchHits, StoreError> {
        self.ensure_search_index()?;
        if let Ok(hits) = self.search_index(needle, limit)? {
            return Ok(hits);
        }
        if self.read_only()? {
            return Err(StoreError::ReadOnly {
                path: self.path().display().to_string(),
                what: "its search index does not decode",
            });
        }
        self.query(|c| c.execute("DELETE FROM search_state WHERE key = 'index'", []))?;
        self.ensure_search_index()?;
        self.search_index(needle, limit)?
            .map_err(|what| StoreError::NotOurs {
                path: self.path().display().to_string(),
                why: format!("its search index does not decode ({what}), even remade"),
            })
    }

    /// [`FactsStore::search`] on the index as it is: the hits, or which
    /// of its lists does not decode.
    fn search_index(
        &self,
        needle: &str,
        limit: usize,
    ) -> Result<Result<SearchHits, &'static str>, StoreError> {
        let mut hits = SearchHits::default();
        let mut texts: BTreeSet<i64> = BTreeSet::new();
        let newline = needle.contains('\n');
        if newline {
            texts.extend(self.texts_containing(needle)?);
        }
        let damaged = std::cell::Cell::new(None::<&str>);
        self.query(|c| {
            let tx = Transaction::new_unchecked(c, TransactionBehavior::Deferred)?;
            {
                let mut st = tx.prepare(
                    "SELECT kind, name, builds FROM search_names
                     WHERE length(builds) > 0 AND instr(lower(name), lower(?1)) > 0
                     ORDER BY kind, name LIMIT ?2",
                )?;
                let mut rows = st.query(params![needle, limit as i64])?;
                while let Some(r) = rows.next()? {
                    let mut builds = Vec::new();
                    let blob = r.get_ref(2)?.as_blob()?;
                    // Each byte of a list is at most one id (8 bytes kept).
                    self.charge(blob.len() as u64 * 8 + r.get_ref(1)?.as_bytes()?.len() as u64)?;
                    if ids(blob, &mut 0, None, &mut builds).is_none() {
                        damaged.set(Some("a name's builds"));
                    }
                    hits.by_name.push(Found {
                        kind: r.get(0)?,
                        name: r.get(1)?,
                        builds,
                    });
                }
            }
            if !newline {
                let finder = memchr::memmem::Finder::new(needle.as_bytes());
                let mut st = tx.prepare("SELECT lines, texts FROM search_lines")?;
                let mut rows = st.query([])?;
                while let Some(r) = rows.next()? {
                    let chunk = r.get_ref(0)?.as_bytes()?;
                    let lists = r.get_ref(1)?.as_blob()?;
                    // Read in place; the texts found are kept (a set entry
                    // per id, at most one id per byte of the lists).
                    if finder.find(chunk).is_some() {
                        self.charge(lists.len() as u64 * 48)?;
                    }
                    if finder.find(chunk).is_some()
                        && texts_in_chunk(chunk, lists, &finder, &mut texts).is_none()
                    {
                        damaged.set(Some("a chunk of lines"));
                    }
                }
            }
            let mut by_hash: HashMap<i64, Vec<i64>> = HashMap::new();
            {
                let mut st = tx.prepare("SELECT refs FROM search_texts WHERE id = ?1")?;
                for id in &texts {
                    let blob: Option<Vec<u8>> =
                        st.query_row(params![id], |r| r.get(0)).optional()?;
                    self.charge(blob.as_ref().map_or(0, |b| b.len() as u64 * 16))?;
                    if let Some(b) = blob
                        && refs(&b, &mut by_hash).is_none()
                    {
                        damaged.set(Some("a text's references"));
                    }
                }
            }
            let mut st = tx.prepare("SELECT kind, name FROM search_names WHERE hash = ?1")?;
            for (hash, mut builds) in by_hash {
                let Some((kind, name)) = st
                    .query_row(params![hash], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                    })
                    .optional()?
                else {
                    continue;
                };
                self.charge((kind.len() + name.len() + 64) as u64)?;
                builds.sort_unstable();
                builds.dedup();
                hits.by_text.push(Found { kind, name, builds });
            }
            drop(st);
            tx.commit()
        })?;
        if let Some(what) = damaged.get() {
            return Ok(Err(what));
        }
        hits.by_text
            .sort_by(|a, b| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)));
        Ok(Ok(hits))
    }
}

/// The versions of one platform's scanned releases that hold a build, for
/// turning a search's builds into versions.
pub struct ReleaseOrder {
    versions: Vec<String>,
    positions: HashMap<i64, Vec<usize>>,
}

impl ReleaseOrder {
    /// From the releases of one platform, oldest first.
    pub fn new(releases: &[super::history::Release]) -> ReleaseOrder {
        let ok: Vec<&super::history::Release> = releases
            .iter()
            .filter(|r| r.status == super::history::ReleaseStatus::Ok)
            .collect();
        let mut positions: HashMap<i64, Vec<usize>> = HashMap::new();
        for (i, r) in ok.iter().enumerate() {
            if let Some(id) = r.build_id {
                positions.entry(id).or_default().push(i);
            }
        }
        ReleaseOrder {
            versions: ok.iter().map(|r| r.version.clone()).collect(),
            positions,
        }
    }

    /// The versions (oldest first, each once) that hold any of `builds`; a
    /// build published under two versions is in both. Each build is looked
    /// up once, so the positions gathered are at most the releases.
    pub fn versions(&self, builds: &[i64]) -> Vec<String> {
        let mut builds = builds.to_vec();
        builds.sort_unstable();
        builds.dedup();
        let mut at: Vec<usize> = builds
            .iter()
            .filter_map(|b| self.positions.get(b))
            .flatten()
            .copied()
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter().map(|i| self.versions[i].clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_round_trip_and_refuse_garbage() {
        let list = [1i64, 2, 130, 131, 70_000, i64::MAX];
        let mut b = Vec::new();
        put_ids(&mut b, &list);
        let mut back = Vec::new();
        ids(&b, &mut 0, None, &mut back).unwrap();
        assert_eq!(back, list);
        // A count larger than what follows, a varint that never ends, and
        // steps that overflow: refused, nothing allocated by the count.
        let mut out = Vec::new();
        assert!(ids(&[1], &mut 0, Some(u64::MAX), &mut out).is_none());
        assert!(varint(&[0xff; 11], &mut 0).is_none());
        let mut big = Vec::new();
        put_varint(&mut big, i64::MAX as u64);
        put_varint(&mut big, 1);
        assert!(ids(&big, &mut 0, None, &mut Vec::new()).is_none());
        let mut neg = Vec::new();
        put_varint(&mut neg, u64::MAX);
        assert!(ids(&neg, &mut 0, None, &mut Vec::new()).is_none());
        let mut r = HashMap::new();
        assert!(refs(&[1, 2, 3], &mut r).is_none(), "a hash cut short");
    }

    /// The texts a chunk search finds are those whose lines hold the needle,
    /// wherever in the chunk a line is: first, last, one of several
    /// matches on a line, lines that only match across their newline.
    #[test]
    fn a_chunk_finds_exactly_the_lines_holding_the_needle() {
        let lines: [(&str, &[i64]); 5] = [
            ("alpha beta", &[1, 2]),
            ("gamma", &[3]),
            ("beta beta", &[4]),
            ("delta al", &[5]),
            ("pha", &[6, 7]),
        ];
        let chunk = lines.iter().map(|l| l.0).collect::<Vec<_>>().join("\n");
        let mut lists = Vec::new();
        for (_, ids) in &lines {
            put_varint(&mut lists, ids.len() as u64);
            put_ids(&mut lists, ids);
        }
        let find = |needle: &str| {
            let f = memchr::memmem::Finder::new(needle.as_bytes());
            let mut out = BTreeSet::new();
            let _ = texts_in_chunk(chunk.as_bytes(), &lists, &f, &mut out);
            out.into_iter().collect::<Vec<_>>()
        };
        assert_eq!(find("alpha"), [1, 2]);
        assert_eq!(find("beta"), [1, 2, 4]);
        assert_eq!(find("pha"), [1, 2, 6, 7]);
        assert_eq!(find("a"), [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(find("delta al"), [5], "a whole line");
        assert!(find("zeta").is_empty());
        // Lists cut short: refused, not a wrong answer.
        let f = memchr::memmem::Finder::new(b"pha");
        let mut out = BTreeSet::new();
        assert!(texts_in_chunk(chunk.as_bytes(), &lists[..3], &f, &mut out).is_none());
    }

    /// A store with one release per build, each holding a prompt per text
    /// (`p{i}` for the i-th text of the list, whichever build has it).
    fn store_of(dir: &std::path::Path, all: &[String], builds: &[&[usize]]) -> FactsStore {
        let store = FactsStore::open(&dir.join("facts.sqlite")).unwrap();
        for (b, texts) in builds.iter().enumerate() {
            add_build(&store, all, b, texts);
        }
        store
    }

    fn add_build(store: &FactsStore, all: &[String], b: usize, texts: &[usize]) {
        store
            .query(|c| {
                let id = FactsStore::build_id(
                    c,
                    &format!("d{b}"),
                    &crate::store::BuildRow::default(),
                )?;
                c.execute(
                    "INSERT INTO releases (version, platform, build_id, status, analysis_version)
                     VALUES (?1, 'p', ?2, 'ok', ?3)",
                    params![
                        format!("1.0.{b}"),
                        id,
                        crate::analysis::analysed::ANALYSIS_VERSION
                    ],
                )?;
                for &i in texts {
                    let h = format!("h{i}");
                    c.execute(
                        "INSERT OR IGNORE INTO texts (sha256, text) VALUES (?1, ?2)",
                        params![h, all[i]],
                    )?;
                    c.execute(
                        "INSERT INTO items (build_id, kind, name, value) VALUES (?1, 'prompt', ?2, ?3)",
                        params![id, format!("p{i}"), format!("{{\"text_sha256\":\"{h}\"}}")],
                    )?;
                }
                Ok(())
            })
            .unwrap();
    }

    /// Every text search answers what reading every text of every build
    /// would: needles in one line, at a line's ends, across lines, in
    /// lines shared by many texts, in several chunks; and a build added
    /// after the index was made is found (the index is remade).
    #[test]
    fn the_index_answers_as_reading_every_text() {
        let dir = tempfile::tempdir().unwrap();
        // 400 texts of 12 lines, about 1 MB: several chunks; lines shared
        // between neighbours, as versions of a prompt share them.
        let all: Vec<String> = (0..400)
            .map(|i| {
                (0..12)
                    .map(|l| match l % 3 {
                        0 => format!("shared line {} of the family", i / 10),
                        1 => format!("line {l} of text {i}: {}", "pad ".repeat(40)),
                        _ => format!("ünïcode {l} ends with {i}"),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect();
        let b0: Vec<usize> = (0..300).collect();
        let b1: Vec<usize> = (100..400).collect();
        let store = store_of(dir.path(), &all, &[&b0, &b1]);
        let naive = |needle: &str, builds: &[&[usize]]| -> Vec<(String, usize)> {
            let mut out: Vec<(String, usize)> = (0..all.len())
                .filter(|&i| all[i].contains(needle))
                .map(|i| {
                    let n = builds.iter().filter(|b| b.contains(&i)).count();
                    (format!("p{i}"), n)
                })
                .filter(|(_, n)| *n > 0)
                .collect();
            out.sort();
            out
        };
        let found = |s: &FactsStore, needle: &str| -> Vec<(String, usize)> {
            let mut out: Vec<(String, usize)> = s
                .search(needle, 500)
                .unwrap()
                .by_text
                .into_iter()
                .map(|f| (f.name, f.builds.len()))
                .collect();
            out.sort();
            out
        };
        let needles = [
            "shared line 3 ",
            "of text 123:",
            "ends with 399",
            "ends with 7",
            "ünïcode 5",
            "pad pad",
            "ends with 42\nline",
            "family\nline 1 of text 0:",
            "with 5\nshared",
            "no such text",
            "e",
        ];
        for needle in needles {
            assert_eq!(
                found(&store, needle),
                naive(needle, &[&b0, &b1]),
                "{needle:?}"
            );
        }
        let chunks: i64 = store
            .query(|c| c.query_row("SELECT count(*) FROM search_lines", [], |r| r.get(0)))
            .unwrap();
        assert!(chunks >= 2, "the texts fill {chunks} chunk(s)");
        // A third build, recorded through the summary writer as a scan
        // does: the next search sees it.
        let mut more = all.clone();
        more.push("a late text\nwith its own line".to_string());
        add_build(&store, &more, 2, &[0, 400]);
        let b2: &[usize] = &[0, 400];
        for needle in ["own line", "shared line 0 ", "late text\nwith"] {
            let mut want = naive(needle, &[&b0, &b1, b2]);
            if more[400].contains(needle) {
                want.push(("p400".to_string(), 1));
                want.sort();
            }
            assert_eq!(found(&store, needle), want, "{needle:?}");
        }
    }

    /// A store whose index was damaged or written by someone else: a list
    /// that does not decode is remade from the history's tables, and the
    /// answer is the one an intact index gives — never a panic, never a
    /// wrong answer.
    #[test]
    fn a_damaged_index_is_remade() {
        let dir = tempfile::tempdir().unwrap();
        let all = vec!["one text".to_string()];
        let store = store_of(dir.path(), &all, &[&[0]]);
        let answer = |s: &FactsStore, needle: &str| {
            let h = s.search(needle, 10).unwrap();
            (h.by_name, h.by_text)
        };
        let intact = [answer(&store, "one"), answer(&store, "p0")];
        assert_eq!(intact[0].1.len(), 1, "the text is found");
        assert_eq!(intact[1].0.len(), 1, "the name is found");
        for damage in [
            "UPDATE search_lines SET texts = x'ffffffff'",
            "UPDATE search_names SET builds = x'80'",
            "UPDATE search_texts SET refs = x'0102'",
        ] {
            store.query(|c| c.execute(damage, [])).unwrap();
            assert_eq!(
                [answer(&store, "one"), answer(&store, "p0")],
                intact,
                "{damage}"
            );
            let lists: i64 = store
                .query(|c| {
                    c.query_row(
                        "SELECT count(*) FROM search_lines WHERE texts = x'ffffffff'",
                        [],
                        |r| r.get(0),
                    )
                })
                .unwrap();
            assert_eq!(lists, 0, "remade: {damage}");
        }
    }
}
