//! `history export --format git DIR`: the history as a git repository, one
//! commit per release of one platform in version order (a branch per
//! platform), dated from the registry's publish time, tagged `v<version>`;
//! each commit's tree is the release's surface (see [`tree`]) and a README
//! of what changed since the release before.
//!
//! Deterministic — a fixed author and committer, dates and texts from the
//! store, so the same store gives the same commit ids — and only ever
//! appended to: a second export writes the releases scanned since, after
//! the repository's head, and never rewrites a commit (git's fast-import
//! refuses to move a branch anywhere but forward). Written by git itself
//! (`git fast-import`, fed a stream), never by hand.

mod repo;
mod tree;

pub use repo::check_git;

use crate::analysis::analysed::ANALYSIS_VERSION;
use crate::store::FactsStore;
use crate::store::history::{HistoryError, Release};
use anyhow::bail;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use tree::{Kind, Tree};

/// Who writes every commit (author and committer): fixed, so that commit
/// ids depend only on the store.
const AUTHOR: &str = "cc-teardown history export <history-export@cc-teardown.invalid>";

/// How a long export shows where it is.
pub trait ExportProgress {
    /// `total` releases to write.
    fn start(&self, total: usize);
    /// One written.
    fn release(&self, version: &str);
    fn finish(&self);
}

/// A commit written for a release.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedCommit {
    pub version: String,
    pub tag: String,
    pub commit: String,
}

/// What an export did (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct GitExport {
    /// The repository's folder.
    pub output: String,
    pub platform: String,
    /// The platform's branch (`refs/heads/<platform>`).
    pub branch: String,
    /// Whether the repository was made by this export.
    pub created: bool,
    /// How many commits this export appended.
    pub appended: usize,
    /// The commits appended, oldest first.
    pub commits: Vec<ExportedCommit>,
    /// The branch's last commit after the export.
    pub head: Option<ExportedCommit>,
    /// Releases of the branch in the repository, after the export.
    pub releases: usize,
    pub analysis_version: String,
}

/// The trailers of a commit message this export wrote.
fn trailers(msg: &str) -> BTreeMap<&str, &str> {
    msg.lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .collect()
}

fn semver(v: &str) -> semver::Version {
    semver::Version::parse(v).unwrap_or(semver::Version::new(0, 0, 0))
}

/// Seconds since 1970 of an RFC 3339 time (`2026-08-25T00:05:29.141+00:00`,
/// `…Z`); a fraction of a second is dropped.
pub fn unix_seconds(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        rest = frac.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm = rest[1..].replace(':', "");
            if hm.len() != 4 || !hm.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (oh, om): (i64, i64) = (hm[..2].parse().ok()?, hm[2..].parse().ok()?);
            sign * (oh * 3600 + om * 60)
        }
    };
    // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + s - offset)
}

/// The git id of a blob of `bytes`.
fn blob_id(bytes: &[u8]) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex::encode(h.finalize())
}

/// What changed in each kind between two trees: (added, removed, changed)
/// names, each in name order.
type Changes = BTreeMap<Kind, (Vec<String>, Vec<String>, Vec<String>)>;

fn changes(prev: &Tree, this: &Tree) -> Changes {
    let empty = BTreeMap::new();
    let mut out = Changes::new();
    for k in Kind::ALL {
        let (a, b) = (
            prev.items.get(&k).unwrap_or(&empty),
            this.items.get(&k).unwrap_or(&empty),
        );
        let added = b.keys().filter(|n| !a.contains_key(*n)).cloned().collect();
        let removed = a.keys().filter(|n| !b.contains_key(*n)).cloned().collect();
        let changed = b
            .iter()
            .filter(|(n, e)| a.get(*n).is_some_and(|p| p.digest != e.digest))
            .map(|(n, _)| n.clone())
            .collect();
        out.insert(k, (added, removed, changed));
    }
    out
}

/// One line of what changed: "prompts: 3 added, 1 changed; flags: 2 added".
fn summary_line(c: &Changes) -> String {
    let mut parts = Vec::new();
    for (k, (a, r, ch)) in c {
        let mut p = Vec::new();
        for (n, what) in [
            (a.len(), "added"),
            (r.len(), "removed"),
            (ch.len(), "changed"),
        ] {
            if n > 0 {
                p.push(format!("{n} {what}"));
            }
        }
        if !p.is_empty() {
            parts.push(format!("{}: {}", k.section(), p.join(", ")));
        }
    }
    if parts.is_empty() {
        "no change to the surface".into()
    } else {
        parts.join("; ")
    }
}

/// A code span of any text (the fence longer than any run of backticks in
/// it; unsafe characters shown as escapes).
fn code(s: &str) -> String {
    let s = crate::report::escape::display(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A link to a file of the tree (its names are plain: only `%` needs
/// encoding in a link).
fn link(text: &str, path: &str) -> String {
    format!("[{}]({})", code(text), path.replace('%', "%25"))
}

/// Where the facts come from, for a README and a commit message.
struct Provenance {
    store: String,
    made_here: bool,
}

impl Provenance {
    fn sentence(&self) -> String {
        if self.made_here {
            format!(
                "Facts from the history store {}, made on the machine that exported this repository.",
                code(&self.store)
            )
        } else {
            format!(
                "Facts from the history store {}, which is **not marked as made on the machine that exported this repository** (made elsewhere, or before stores were marked): what it says is what its author recorded.",
                code(&self.store)
            )
        }
    }
}

/// A release's README: its summary, what it holds, what changed since the
/// release before (with links), and where the facts come from.
fn readme(
    r: &Release,
    prev: Option<&str>,
    tree: &Tree,
    changes: &Changes,
    prov: &Provenance,
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# {} — {}\n", code(&r.version), code(&r.platform));
    o.push_str("| | |\n|---|---|\n");
    let mut fact = |k: &str, v: String| {
        let _ = writeln!(o, "| {k} | {v} |");
    };
    fact(
        "published",
        r.published.as_deref().map_or("unknown".into(), code),
    );
    if let Some(d) = &r.digest {
        fact("bundle digest", code(d));
    }
    if let Some(m) = r.modules {
        fact("modules", m.to_string());
    }
    if let Some(c) = r.code_split {
        fact("code-split", if c { "yes" } else { "no" }.into());
    }
    if let Some(l) = &r.bun_layout {
        fact("Bun layout", code(l));
    }
    if let Some(c) = &r.container {
        fact("container", code(c));
    }
    o.push_str("\n## What it holds\n\n| kind | items | where |\n|---|--:|---|\n");
    for k in Kind::ALL {
        let n = tree.items.get(&k).map_or(0, BTreeMap::len);
        let _ = writeln!(
            o,
            "| {} | {n} | [{}]({}) |",
            k.section(),
            k.place(),
            k.place()
        );
    }
    o.push_str("\nPrompts are `prompts/<kind>/<id>.md` (front matter, then the exact text); where each sits in this build is in [sites.md](sites.md). Tools are `tools/<name>.md` (the description) and `tools/<name>.schema.json`; workflows `workflows/<name>.js` (the exact script) and `workflows/<name>.meta.json`.\n");
    match prev {
        None => o.push_str(
            "\n## What changed\n\nThe first release exported: nothing before it to compare with.\n",
        ),
        Some(p) => {
            let _ = writeln!(
                o,
                "\n## What changed since {}\n\n{} (`git diff v{p} v{}` shows every line.)\n",
                code(p),
                summary_line(changes),
                r.version
            );
            for (k, (added, removed, changed)) in changes {
                if added.is_empty() && removed.is_empty() && changed.is_empty() {
                    continue;
                }
                let _ = writeln!(o, "### {}\n", k.section());
                let entries = tree.items.get(k);
                let linked = |names: &[String]| -> String {
                    names
                        .iter()
                        .map(|n| match entries.and_then(|e| e.get(n)) {
                            Some(e) => link(n, &e.path),
                            None => code(n),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                for (what, names, links) in [
                    ("added", added, true),
                    ("changed", changed, true),
                    ("removed", removed, false),
                ] {
                    if names.is_empty() {
                        continue;
                    }
                    let list = if links {
                        linked(names)
                    } else {
                        names.iter().map(|n| code(n)).collect::<Vec<_>>().join(", ")
                    };
                    let _ = writeln!(o, "- {what} ({}): {list}", names.len());
                }
                o.push('\n');
            }
        }
    }
    let _ = writeln!(
        o,
        "\n## Where these facts come from\n\n{} Exported by `cc-teardown history export --format git` (analysis version {}).",
        prov.sentence(),
        code(ANALYSIS_VERSION)
    );
    o
}

/// The commit message of a release.
fn message(r: &Release, prev: Option<&str>, changes: &Changes, prov: &Provenance) -> String {
    let mut m = format!("{} ({})\n\n", r.version, r.platform);
    match prev {
        None => m.push_str("The first release exported.\n\n"),
        Some(p) => {
            let _ = writeln!(m, "Since {p}: {}.\n", summary_line(changes));
        }
    }
    let _ = writeln!(m, "Version: {}", r.version);
    let _ = writeln!(m, "Platform: {}", r.platform);
    let _ = writeln!(
        m,
        "Published: {}",
        r.published.as_deref().unwrap_or("unknown")
    );
    if let Some(d) = &r.digest {
        let _ = writeln!(m, "Bundle-Digest: {d}");
    }
    let _ = writeln!(m, "Analysis-Version: {ANALYSIS_VERSION}");
    let _ = writeln!(
        m,
        "Facts-From: {} ({})",
        crate::report::escape::display(&prov.store),
        if prov.made_here {
            "made on the exporting machine"
        } else {
            "a store not marked as made on the exporting machine"
        }
    );
    m
}

/// `data` of fast-import: its length, then the bytes.
fn data(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    writeln!(out, "data {}", bytes.len())?;
    out.write_all(bytes)?;
    out.write_all(b"\n")
}

/// The tree of a release from its stored facts.
fn tree_of(store: &FactsStore, r: &Release) -> Result<Tree, HistoryError> {
    let facts = r
        .digest
        .as_deref()
        .and_then(|d| store.facts_of(d))
        .ok_or_else(|| HistoryError::FactsUnusable(r.version.clone()))?;
    Ok(tree::tree(&facts))
}

/// Append the releases of `platform` (`releases`: its analysed releases,
/// oldest first) that the repository at `dir` does not hold yet; make the
/// repository first when `dir` is missing or empty.
pub fn export(
    store: &FactsStore,
    dir: &Path,
    platform: &str,
    releases: &[Release],
    progress: &dyn ExportProgress,
) -> anyhow::Result<GitExport> {
    check_git()?;
    if releases.is_empty() {
        return Err(HistoryError::NothingScanned.into());
    }
    let (repo, created) = repo::Repo::open_or_make(dir, platform)?;
    let branch = format!("refs/heads/{platform}");
    // Plain `v<version>` tags are the branch HEAD names (the first
    // platform exported into the repository); other platforms' tags are
    // `<platform>/v<version>`.
    let plain = repo.head_branch().as_deref() == Some(platform);
    let tag = |v: &str| {
        if plain {
            format!("v{v}")
        } else {
            format!("{platform}/v{v}")
        }
    };
    let rebuild = format!(
        "export into a new folder to rebuild the repository: cc-teardown history export --format git NEW_FOLDER --platform {platform}"
    );
    let tags = repo.refs("refs/tags/")?;
    let has_tag = |v: &str| tags.contains_key(&format!("refs/tags/{}", tag(v)));
    let head = repo.commit_of(&branch);
    // The release the branch ends with, and its tree.
    let mut prev: Option<(Release, Tree)> = None;
    if let Some(h) = &head {
        let msg = repo.message(h)?;
        let t = trailers(&msg);
        let (Some(version), Some(analysis)) = (t.get("Version"), t.get("Analysis-Version")) else {
            bail!(
                "{}: the last commit of {branch} was not written by `history export --format git`; {rebuild}",
                dir.display()
            );
        };
        if *analysis != ANALYSIS_VERSION {
            bail!(
                "{} was exported from facts of analysis version {analysis}; this cc-teardown's analysis is {ANALYSIS_VERSION} (it may find more, or other, items in the same builds, and appending would mix the two): {rebuild}",
                dir.display()
            );
        }
        let Some(r) = releases.iter().find(|r| r.version == *version) else {
            bail!(
                "{}: its last release, {version} {platform}, is not in the store {} (it was exported from another store): {rebuild}",
                dir.display(),
                store.path().display()
            );
        };
        let missing: Vec<&str> = releases
            .iter()
            .filter(|x| semver(&x.version) < semver(version) && !has_tag(&x.version))
            .map(|x| x.version.as_str())
            .collect();
        if !missing.is_empty() {
            bail!(
                "{}: {} scanned since the repository was made but older than its last release {version}; a repository is only appended to, never rewritten: {rebuild}",
                dir.display(),
                missing.join(", ")
            );
        }
        let t = tree_of(store, r)?;
        // The store must say of that release what the repository holds.
        let held = repo.files(h)?;
        let differ: Vec<&String> = t
            .files
            .iter()
            .filter(|(p, b)| held.get(*p) != Some(&blob_id(b)))
            .map(|(p, _)| p)
            .chain(
                held.keys()
                    .filter(|p| *p != "README.md" && !t.files.contains_key(*p)),
            )
            .collect();
        if let Some(first) = differ.first() {
            bail!(
                "{}: its last release, {version}, holds other files than the store {} says of it ({} differ, {first} the first): {rebuild}",
                dir.display(),
                store.path().display(),
                differ.len()
            );
        }
        prev = Some((r.clone(), t));
    }
    let after = prev.as_ref().map(|(r, _)| semver(&r.version));
    let todo: Vec<&Release> = releases
        .iter()
        .filter(|r| after.as_ref().is_none_or(|a| semver(&r.version) > *a))
        .collect();
    for r in &todo {
        if has_tag(&r.version) {
            bail!(
                "{}: the tag {} already exists, for another commit than this export would write; {rebuild}",
                dir.display(),
                tag(&r.version)
            );
        }
    }
    let prov = Provenance {
        store: store.path().file_name().map_or_else(
            || store.path().display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        made_here: store.made_here(),
    };
    if !todo.is_empty() {
        write_commits(
            store,
            &repo,
            &branch,
            head.as_deref(),
            prev,
            &todo,
            &tag,
            &prov,
            progress,
        )?;
    }
    // What the repository holds now.
    let tags = repo.refs("refs/tags/")?;
    let commit_of = |r: &Release| -> Option<ExportedCommit> {
        let t = tag(&r.version);
        tags.get(&format!("refs/tags/{t}")).map(|c| ExportedCommit {
            version: r.version.clone(),
            tag: t,
            commit: c.clone(),
        })
    };
    let commits: Vec<ExportedCommit> = todo.iter().filter_map(|r| commit_of(r)).collect();
    let held: Vec<&Release> = releases
        .iter()
        .filter(|r| has_tag_now(&tags, &tag(&r.version)))
        .collect();
    let head = held.last().and_then(|r| commit_of(r));
    Ok(GitExport {
        output: dir.display().to_string(),
        platform: platform.to_string(),
        branch,
        created,
        appended: commits.len(),
        commits,
        head,
        releases: held.len(),
        analysis_version: ANALYSIS_VERSION.to_string(),
    })
}

fn has_tag_now(tags: &BTreeMap<String, String>, t: &str) -> bool {
    tags.contains_key(&format!("refs/tags/{t}"))
}

/// Write a commit (and its tag) per release of `todo` after `head`, in
/// one fast-import: the trees are made from the stored facts on a second
/// thread while this one writes the stream and git reads it.
#[allow(clippy::too_many_arguments)]
fn write_commits(
    store: &FactsStore,
    repo: &repo::Repo,
    branch: &str,
    head: Option<&str>,
    mut prev: Option<(Release, Tree)>,
    todo: &[&Release],
    tag: &dyn Fn(&str) -> String,
    prov: &Provenance,
    progress: &dyn ExportProgress,
) -> anyhow::Result<()> {
    progress.start(todo.len());
    let mut import = repo.import()?;
    let written = std::thread::scope(|s| -> anyhow::Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Tree, HistoryError>>(2);
        s.spawn(move || {
            for r in todo {
                if tx.send(tree_of(store, r)).is_err() {
                    break;
                }
            }
        });
        let empty = Tree::default();
        let mut last_time = prev
            .as_ref()
            .and_then(|(r, _)| r.published.as_deref().and_then(unix_seconds))
            .unwrap_or(0);
        for (n, r) in todo.iter().enumerate() {
            let mut t = rx.recv()??;
            let before = prev.as_ref().map_or(&empty, |(_, t)| t);
            let ch = changes(before, &t);
            let prev_version = prev.as_ref().map(|(r, _)| r.version.as_str());
            let readme = readme(r, prev_version, &t, &ch, prov);
            t.files.insert("README.md".into(), readme.into_bytes());
            let msg = message(r, prev_version, &ch, prov);
            // A release without its time (an older store) keeps the time
            // of the one before, so the dates never go back.
            let time = r
                .published
                .as_deref()
                .and_then(unix_seconds)
                .unwrap_or(last_time)
                .max(0);
            last_time = time;
            let out = import.stream();
            let mark = n + 1;
            write!(out, "commit {branch}\nmark :{mark}\n")?;
            write!(
                out,
                "author {AUTHOR} {time} +0000\ncommitter {AUTHOR} {time} +0000\n"
            )?;
            data(out, msg.as_bytes())?;
            match (n, head) {
                (0, Some(h)) => writeln!(out, "from {h}")?,
                (0, None) => {}
                _ => writeln!(out, "from :{n}")?,
            }
            for p in before.files.keys() {
                if !t.files.contains_key(p) {
                    writeln!(out, "D {p}")?;
                }
            }
            for (p, bytes) in &t.files {
                if before.files.get(p) != Some(bytes) {
                    writeln!(out, "M 100644 inline {p}")?;
                    data(out, bytes)?;
                }
            }
            write!(
                out,
                "\nreset refs/tags/{}\nfrom :{mark}\n\n",
                tag(&r.version)
            )?;
            progress.release(&r.version);
            prev = Some(((*r).clone(), t));
        }
        Ok(())
    });
    progress.finish();
    match written {
        Ok(()) => import.finish(),
        Err(e) => {
            import.abandon();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_times_read_as_seconds_since_1970() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            unix_seconds("2026-08-22T13:03:12+00:00"),
            Some(1_787_403_792)
        );
        assert_eq!(
            unix_seconds("2026-08-25T00:05:29.141000+00:00"),
            unix_seconds("2026-08-25T00:05:29Z")
        );
        assert_eq!(
            unix_seconds("2026-08-25T02:05:29+02:00"),
            unix_seconds("2026-08-25T00:05:29Z")
        );
        assert_eq!(unix_seconds("2000-02-29T00:00:00Z"), Some(951_782_400));
        for bad in [
            "",
            "2026-08-25",
            "2026-13-01T00:00:00Z",
            "2026-08-25T00:05:29+0",
            "x026-08-25T00:05:29Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_blob_id_is_gits() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn a_commit_message_says_where_its_facts_come_from() {
        let r = Release {
            version: "1.2.3".into(),
            platform: "linux-x64".into(),
            published: None,
            status: crate::store::history::ReleaseStatus::Ok,
            error: None,
            digest: Some("ab".into()),
            modules: Some(1),
            bundle_bytes: None,
            code_split: Some(false),
            bun_layout: None,
            container: None,
            current: true,
            build_id: None,
        };
        let prov = Provenance {
            store: "facts.sqlite".into(),
            made_here: false,
        };
        let m = message(&r, Some("1.2.2"), &Changes::new(), &prov);
        let t = trailers(&m);
        assert_eq!(t["Version"], "1.2.3");
        assert_eq!(t["Analysis-Version"], ANALYSIS_VERSION);
        assert!(t["Facts-From"].contains("not marked as made"), "{m}");
        let readme = readme(&r, None, &Tree::default(), &Changes::new(), &prov);
        assert!(
            readme.contains("**not marked as made on the machine"),
            "{readme}"
        );
        assert!(m.contains("no change to the surface"), "{m}");
    }

    #[test]
    fn a_link_encodes_what_a_file_name_keeps() {
        assert_eq!(link("a/b", "tools/a%2Fb.md"), "[`a/b`](tools/a%252Fb.md)");
        assert_eq!(code("x`y"), "``x`y``");
    }
}
