//! Writing the site: only the files whose bytes changed since the last run
//! (a manifest of each file's SHA-256 is kept in the folder), through the
//! output folder's writer (`report::outdir`: never through a link, nothing
//! of someone else's replaced without `--force`).

use super::{Previous, SiteFile, SiteInput, site_files};
use crate::report::outdir::{OutDir, OutPlan};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The manifest's name in the site's folder.
pub const MANIFEST: &str = ".cc-teardown-site.json";
/// The most a manifest may weigh when read back.
const MAX_MANIFEST: u64 = 64 << 20;

#[derive(Serialize, Deserialize, Default)]
struct Manifest {
    /// Always `cc-teardown history site`: what made the folder.
    made_by: String,
    /// Path below the folder → SHA-256 of its bytes.
    files: BTreeMap<String, String>,
    /// Group of pages → the fingerprint of the inputs it was made from.
    #[serde(default)]
    inputs: BTreeMap<String, String>,
}

/// What a run did to the folder.
#[derive(Debug, Clone, Serialize)]
pub struct SiteWritten {
    pub dir: String,
    /// Every file of the site (pages, index, script, style).
    pub files: usize,
    /// Of which HTML pages.
    pub pages: usize,
    /// Files written by this run (new, or changed since the last).
    pub written: usize,
    /// Files left as they were (their bytes had not changed).
    pub kept: usize,
    /// Files of the last run that the site no longer has, removed.
    pub removed: usize,
    /// The bytes of every file made by this run (written or found
    /// unchanged; not those of groups kept without being made).
    pub bytes: u64,
    /// The heaviest page made by this run, and its bytes.
    pub largest_page: String,
    pub largest_page_bytes: u64,
}

/// The manifest of a folder made by an earlier run, if it has one (a
/// regular file, not a link, of sane size, that parses).
fn read_manifest(dir: &Path) -> anyhow::Result<Option<Manifest>> {
    let p = dir.join(MANIFEST);
    let m = match std::fs::symlink_metadata(&p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("checking {}", p.display())),
    };
    if !m.file_type().is_file() || m.len() > MAX_MANIFEST {
        bail!(
            "{} is not a site's manifest (not a plain file, or too large); refusing to write into {}",
            p.display(),
            dir.display()
        );
    }
    let text = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
    match serde_json::from_slice::<Manifest>(&text) {
        Ok(m) if m.made_by == "cc-teardown history site" => Ok(Some(m)),
        _ => bail!(
            "{} is not a manifest this tool wrote; refusing to write into {}",
            p.display(),
            dir.display()
        ),
    }
}

/// Whether the file at `p` is a plain file of `len` bytes (not a link).
fn plain_file_of(p: &Path, len: usize) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file() && m.len() == len as u64)
}

/// Make the site of `input` and write it into `dir` (see [`write_files`]):
/// the groups of pages whose inputs are those the last run made them from
/// (by the manifest's fingerprints), and whose files are still there as it
/// wrote them, are not even made again.
pub fn write_site(dir: &Path, input: &SiteInput, force: bool) -> anyhow::Result<SiteWritten> {
    let old = read_manifest(dir)?.unwrap_or_default();
    let prev = Previous {
        inputs: old.inputs.clone(),
        files: old
            .files
            .iter()
            .filter(|(p, _)| {
                std::fs::symlink_metadata(dir.join(p)).is_ok_and(|m| m.file_type().is_file())
            })
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect(),
    };
    let (files, inputs) = site_files(input, &prev);
    write_files(dir, &files, inputs, old, force)
}

/// Write `files` into `dir`: a file whose bytes are those the last run
/// wrote (by the manifest, and still a plain file of that size) is kept;
/// the others are written; files of the last run the site no longer has
/// are removed. Files that are in the way and not the last run's are
/// refused, unless `force`.
fn write_files(
    dir: &Path,
    files: &[SiteFile],
    inputs: BTreeMap<String, String>,
    old: Manifest,
    force: bool,
) -> anyhow::Result<SiteWritten> {
    let mut plan = OutPlan::new();
    let mut manifest = Manifest {
        made_by: "cc-teardown history site".into(),
        files: BTreeMap::new(),
        inputs,
    };
    let mut to_write: Vec<(PathBuf, &[u8])> = Vec::new();
    let mut kept = 0;
    let mut done = SiteWritten {
        dir: dir.display().to_string(),
        files: files.len(),
        pages: 0,
        written: 0,
        kept: 0,
        removed: 0,
        bytes: 0,
        largest_page: String::new(),
        largest_page_bytes: 0,
    };
    for f in files {
        if f.path.ends_with(".html") {
            done.pages += 1;
        }
        if let Some(sha) = &f.kept {
            manifest.files.insert(f.path.clone(), sha.clone());
            kept += 1;
            continue;
        }
        let sha = hex::encode(sha2::Sha256::digest(&f.bytes));
        done.bytes += f.bytes.len() as u64;
        if f.path.ends_with(".html") && f.bytes.len() as u64 > done.largest_page_bytes {
            done.largest_page_bytes = f.bytes.len() as u64;
            done.largest_page = f.path.clone();
        }
        let same = old.files.get(&f.path) == Some(&sha)
            && plain_file_of(&dir.join(&f.path), f.bytes.len());
        manifest.files.insert(f.path.clone(), sha);
        if same {
            kept += 1;
            continue;
        }
        let rel = plan.add(Path::new(&f.path), f.path.clone())?;
        to_write.push((rel, &f.bytes));
    }
    let text = serde_json::to_vec_pretty(&manifest)?;
    let manifest_rel = plan.add(Path::new(MANIFEST), "the site's manifest")?;
    let mut owned: HashSet<PathBuf> = old.files.keys().map(PathBuf::from).collect();
    if !old.files.is_empty() || dir.join(MANIFEST).exists() {
        owned.insert(PathBuf::from(MANIFEST));
    }
    let mut out = OutDir::open_owned(dir, &plan, &owned, force)?;
    for (rel, bytes) in &to_write {
        out.write(rel, bytes)?;
    }
    // Files the site no longer has: removed when still plain files.
    for stale in old
        .files
        .keys()
        .filter(|p| !manifest.files.contains_key(*p))
    {
        let p = dir.join(stale);
        if Path::new(stale)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
            && std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_file())
            && std::fs::remove_file(&p).is_ok()
        {
            done.removed += 1;
        }
    }
    out.write(&manifest_rel, &text)?;
    done.written = to_write.len();
    done.kept = kept;
    Ok(done)
}
