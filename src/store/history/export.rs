//! `history export`: the store as a file of its own, or every item.

use super::{ItemRow, PARSED_COST};
use crate::store::{FactsStore, StoreError};
use rusqlite::params;

impl FactsStore {
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
        drop(FactsStore::open_as(&copy, crate::store::Ownership::Named).expect("a store"));
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
}
