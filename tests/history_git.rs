//! `history export --format git`: the history of a short real range (two
//! single bundles, then the first code-split build) exported as a git
//! repository. Between two adjacent tags `git diff` lists exactly what
//! `history changes` lists; a prompt file's log has one commit per release
//! that changed it; exporting twice gives the same commit ids; exporting
//! after scanning one more release appends one commit.
use crate::common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const PLATFORM: &str = "darwin-arm64";

/// Run a command against the test's own store; JSON stdout and exit code.
fn run(store: &Path, args: &[&str]) -> (Value, i32) {
    json_and_code(bin().args(args).args(["--quiet", "--store"]).arg(store))
}

fn scan(store: &Path, range: &str) {
    let (v, code) = run(store, &["history", "scan", range, "--platform", PLATFORM]);
    assert_eq!(code, 0, "{v}");
}

fn export(store: &Path, dir: &Path) -> Value {
    export_platform(store, dir, PLATFORM)
}

/// Export one platform's branch; its JSON answer (exit 0).
fn export_platform(store: &Path, dir: &Path, platform: &str) -> Value {
    let (v, code) = run(
        store,
        &[
            "history",
            "export",
            "--format",
            "git",
            dir.to_str().unwrap(),
            "--platform",
            platform,
        ],
    );
    assert_eq!(code, 0, "{v}");
    v
}

/// git on the repository `dir`; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .env("GIT_DIR", dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A file name back to the item name it was made of (`%XX` is a byte).
fn decode(component: &str) -> String {
    let b = component.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() {
            out.push(u8::from_str_radix(&component[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The item a file of the tree stands for: (section, name).
fn item_of(path: &str) -> Option<(&'static str, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    let stem = |f: &str, exts: &[&str]| {
        exts.iter()
            .find_map(|e| f.strip_suffix(e))
            .map(decode)
            .unwrap_or_else(|| panic!("{path}: a file of no item"))
    };
    match parts.as_slice() {
        ["prompts", _, f] => Some(("prompts", stem(f, &[".md"]))),
        ["tools", f] => Some(("tools", stem(f, &[".schema.json", ".md"]))),
        ["workflows", f] => Some(("workflows", stem(f, &[".meta.json", ".js"]))),
        _ => None,
    }
}

/// The first cell of a table row (`| `name` | … |`): the code span's text.
fn row_name(row: &str) -> String {
    let cell = row.strip_prefix("| ").unwrap();
    let n = cell.chars().take_while(|&c| c == '`').count();
    let fence = "`".repeat(n);
    let inner = &cell[n..];
    let end = inner.find(&format!("{fence} |")).unwrap();
    let name = &inner[..end];
    let name = if n > 1 && name.starts_with(' ') && name.ends_with(' ') {
        &name[1..name.len() - 1]
    } else {
        name
    };
    name.replace("\\|", "|")
}

/// (added, removed, changed) names of a section.
type Lists = (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>);

/// What `git diff va vb` lists, per section; and for the tables, each
/// changed row's cells before and after.
fn git_changes(
    repo: &Path,
    a: &str,
    b: &str,
) -> (BTreeMap<String, Lists>, BTreeMap<String, (String, String)>) {
    let mut out: BTreeMap<String, Lists> = BTreeMap::new();
    // Files: an item whose every file is new was added, whose every file
    // went was removed; any other change changed it.
    let mut statuses: BTreeMap<(&str, String), BTreeSet<char>> = BTreeMap::new();
    let names = git(repo, &["diff", "--name-status", "--no-renames", "-z", a, b]);
    let fields: Vec<&str> = names.split('\0').filter(|s| !s.is_empty()).collect();
    for pair in fields.chunks(2) {
        let (status, path) = (pair[0].chars().next().unwrap(), pair[1]);
        if let Some(item) = item_of(path) {
            statuses.entry(item).or_default().insert(status);
        }
    }
    for ((section, name), st) in statuses {
        let lists = out.entry(section.to_string()).or_default();
        let set = match (st.len(), st.iter().next()) {
            (1, Some('A')) => &mut lists.0,
            (1, Some('D')) => &mut lists.1,
            _ => &mut lists.2,
        };
        set.insert(name);
    }
    // Tables: a row only removed, only added, or both.
    let mut rows: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (section, file) in [
        ("flags", "flags.md"),
        ("env", "env.md"),
        ("settings", "settings.md"),
        ("commands", "commands.md"),
        ("models", "models.md"),
    ] {
        let diff = git(repo, &["diff", "-U0", a, b, "--", file]);
        let mut minus = BTreeMap::new();
        let mut plus = BTreeMap::new();
        for line in diff.lines() {
            if let Some(r) = line.strip_prefix("-| ") {
                minus.insert(row_name(&format!("| {r}")), r.to_string());
            } else if let Some(r) = line.strip_prefix("+| ") {
                plus.insert(row_name(&format!("| {r}")), r.to_string());
            }
        }
        let lists = out.entry(section.to_string()).or_default();
        for (n, r) in &minus {
            match plus.get(n) {
                Some(p) => {
                    lists.2.insert(n.clone());
                    rows.insert(format!("{section}/{n}"), (r.clone(), p.clone()));
                }
                None => {
                    lists.1.insert(n.clone());
                }
            }
        }
        for n in plus.keys().filter(|n| !minus.contains_key(*n)) {
            lists.0.insert(n.clone());
        }
    }
    (out, rows)
}

fn names(v: &Value, key: &str) -> BTreeSet<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no list {key} in {v}"))
        .iter()
        .map(|x| {
            x.as_str()
                .or(x["name"].as_str())
                .or(x["id"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Every item's stored value by (version, kind, name).
fn values(store: &Path) -> BTreeMap<(String, String, String), Value> {
    let (v, code) = run(store, &["history", "export", "--format", "json"]);
    assert_eq!(code, 0);
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let s = |k: &str| i[k].as_str().unwrap().to_string();
            ((s("version"), s("kind"), s("name")), i["value"].clone())
        })
        .collect()
}

/// `git diff v{a} v{b}` against `history changes b`, section by section.
fn diff_is_the_history(repo: &Path, store: &Path, a: &str, b: &str) -> usize {
    let (changes, code) = run(store, &["history", "changes", b]);
    assert_eq!(code, 0, "{changes}");
    assert_eq!(changes["previous"], a);
    let (git, rows) = git_changes(repo, &format!("v{a}"), &format!("v{b}"));
    let values = values(store);
    let mut listed = 0;
    for section in [
        "prompts",
        "tools",
        "workflows",
        "flags",
        "env",
        "settings",
        "commands",
        "models",
    ] {
        let h = &changes[section];
        let (added, removed, changed) = git.get(section).cloned().unwrap_or_default();
        let at = format!("{a} → {b}, {section}");
        assert_eq!(added, names(h, "added"), "{at}: added");
        assert_eq!(removed, names(h, "removed"), "{at}: removed");
        listed += added.len() + removed.len() + changed.len();
        match section {
            "prompts" | "tools" | "workflows" => {
                assert_eq!(changed, names(h, "changed"), "{at}: changed");
            }
            "flags" => {
                // `history changes` lists a flag whose kind or defaults
                // changed, but not defaults that appear or go (where the
                // flag is not read): the table shows those too.
                let mut listed = names(h, "kind_changed");
                listed.extend(names(h, "default_changed"));
                assert!(listed.is_subset(&changed), "{at}: {listed:?} ⊄ {changed:?}");
                for n in changed.difference(&listed) {
                    let (before, after) = &rows[&format!("flags/{n}")];
                    let cells = |r: &str| -> Vec<String> {
                        r.trim_end_matches(" |")
                            .split(" | ")
                            .map(str::to_string)
                            .collect()
                    };
                    let (x, y) = (cells(before), cells(after));
                    assert_eq!(x[1], y[1], "{at}: {n}: the kind is the same");
                    assert!(
                        x.last().unwrap() == "`[]`" || y.last().unwrap() == "`[]`",
                        "{at}: {n}: defaults from or to none: {before} → {after}"
                    );
                }
            }
            _ => {
                // Compared by name only: a row changed exactly when the
                // value the history records of the item did.
                let kind = match section {
                    "settings" => "setting",
                    "commands" => "command",
                    "models" => "model",
                    k => k,
                };
                let value = |v: &str, n: &str| {
                    values.get(&(v.to_string(), kind.to_string(), n.to_string()))
                };
                let expected: BTreeSet<String> = values
                    .keys()
                    .filter(|(v, k, _)| v == b && k == kind)
                    .map(|(_, _, n)| n.clone())
                    .filter(|n| value(a, n).is_some_and(|x| Some(x) != value(b, n)))
                    .collect();
                assert_eq!(changed, expected, "{at}: changed rows");
            }
        }
    }
    listed
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn the_catalogue_repository_is_the_history_one_commit_per_release() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("git is needed for this test");
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("facts.sqlite");
    scan(&store, "2.1.240..2.1.241");

    // 1. A new repository: a commit per release, in version order.
    let repo = dir.path().join("catalogue");
    let first = export(&store, &repo);
    assert_eq!(first["created"], true, "{first}");
    assert_eq!(first["appended"], 2, "{first}");
    assert_eq!(first["store"]["made_here"], true);
    let tags: Vec<&str> = first["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["v2.1.240", "v2.1.241"]);
    let log = git(&repo, &["log", "--format=%H %s", "--reverse", PLATFORM]);
    let subjects: Vec<&str> = log.lines().map(|l| l.split_once(' ').unwrap().1).collect();
    assert_eq!(
        subjects,
        ["2.1.240 (darwin-arm64)", "2.1.241 (darwin-arm64)"]
    );

    // 2. Again: nothing to append.
    let again = export(&store, &repo);
    assert_eq!(again["appended"], 0, "{again}");
    assert_eq!(again["head"], first["head"]);

    // 3. One more release scanned: one commit appended, the others kept.
    scan(&store, "2.1.242");
    let more = export(&store, &repo);
    assert_eq!(more["appended"], 1, "{more}");
    assert_eq!(more["commits"][0]["tag"], "v2.1.242");
    for c in first["commits"].as_array().unwrap() {
        let tag = c["tag"].as_str().unwrap();
        assert_eq!(git(&repo, &["rev-parse", tag]).trim(), c["commit"], "{tag}");
    }
    assert_eq!(
        git(&repo, &["rev-parse", "v2.1.242^"]).trim(),
        first["commits"][1]["commit"],
        "appended after the last"
    );

    // 4. The same store exported from scratch: the same commit ids.
    let other = dir.path().join("again");
    let fresh = export(&store, &other);
    assert_eq!(fresh["appended"], 3);
    for v in ["2.1.240", "2.1.241", "2.1.242"] {
        let tag = format!("v{v}");
        assert_eq!(
            git(&repo, &["rev-parse", &tag]),
            git(&other, &["rev-parse", &tag]),
            "{tag}"
        );
    }

    // 5. Between adjacent tags, git lists what `history changes` lists.
    let mut listed = 0;
    for (a, b) in [("2.1.240", "2.1.241"), ("2.1.241", "2.1.242")] {
        listed += diff_is_the_history(&repo, &store, a, b);
    }
    assert!(listed > 100, "the code-split switch changes much: {listed}");

    // 6. A prompt file's log: one commit per release that added, changed
    //    or removed that prompt.
    let mut by_file: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let log = git(
        &repo,
        &[
            "log",
            "--format=@%s",
            "--name-only",
            "--no-renames",
            PLATFORM,
            "--",
            "prompts",
        ],
    );
    let mut version = String::new();
    for line in log.lines().filter(|l| !l.is_empty()) {
        if let Some(s) = line.strip_prefix('@') {
            version = s.split(' ').next().unwrap().to_string();
        } else {
            assert!(
                by_file
                    .entry(line.to_string())
                    .or_default()
                    .insert(version.clone()),
                "{line}: one commit per release"
            );
        }
    }
    let mut expected: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in git(
        &repo,
        &["ls-tree", "-r", "--name-only", "v2.1.240", "prompts"],
    )
    .lines()
    {
        expected
            .entry(f.to_string())
            .or_default()
            .insert("2.1.240".into());
    }
    for b in ["2.1.241", "2.1.242"] {
        let (changes, _) = run(&store, &["history", "changes", b]);
        let p = &changes["prompts"];
        let mut touched = names(p, "added");
        touched.extend(names(p, "removed"));
        touched.extend(names(p, "changed"));
        for tree in [format!("v{b}"), format!("v{b}^")] {
            for f in git(&repo, &["ls-tree", "-r", "--name-only", &tree, "prompts"]).lines() {
                if touched.contains(&item_of(f).unwrap().1) {
                    expected.entry(f.to_string()).or_default().insert(b.into());
                }
            }
        }
    }
    assert_eq!(by_file, expected);
    assert!(
        expected.values().any(|v| v.len() > 1),
        "some prompt changed"
    );

    // 7. A folder that is not one of its repositories is refused, and so
    //    is a link to nothing; the store's origin is in every commit.
    let busy = dir.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    let (v, code) = run(
        &store,
        &[
            "history",
            "export",
            "--format",
            "git",
            busy.to_str().unwrap(),
        ],
    );
    assert_ne!(code, 0, "{v}");
    assert!(v["error"].to_string().contains("not empty"), "{v}");
    assert_eq!(std::fs::read_dir(&busy).unwrap().count(), 1);
    let msg = git(&repo, &["log", "-1", "--format=%B", "v2.1.242"]);
    assert!(
        msg.contains("Facts-From: facts.sqlite (made on the exporting machine)"),
        "{msg}"
    );

    // 9. A second platform into the same repository: its own branch and
    //    `<platform>/v…` tags; the first platform's branch and tags stay.
    let head = git(&repo, &["rev-parse", PLATFORM]);
    let (v, code) = run(
        &store,
        &["history", "scan", "2.1.242", "--platform", "linux-x64"],
    );
    assert_eq!(code, 0, "{v}");
    let linux = export_platform(&store, &repo, "linux-x64");
    assert_eq!(linux["appended"], 1, "{linux}");
    assert_eq!(linux["commits"][0]["tag"], "linux-x64/v2.1.242", "{linux}");
    assert_eq!(git(&repo, &["rev-parse", PLATFORM]), head);
    assert_eq!(
        git(&repo, &["log", "--format=%s", "linux-x64"]).trim(),
        "2.1.242 (linux-x64)"
    );
    let tags = git(&repo, &["tag", "--list"]);
    assert_eq!(
        tags.lines().collect::<Vec<_>>(),
        ["linux-x64/v2.1.242", "v2.1.240", "v2.1.241", "v2.1.242"]
    );
    // The same release on two platforms: the trees differ only where the
    // builds do (no tool differs between them).
    let between = git(
        &repo,
        &["diff", "--name-only", "v2.1.242", "linux-x64/v2.1.242"],
    );
    assert!(
        between.lines().all(|f| !f.starts_with("tools/")),
        "{between}"
    );
    let again = export_platform(&store, &repo, "linux-x64");
    assert_eq!(again["appended"], 0, "{again}");

    // 8. The same store seen from another machine (another cache folder,
    //    so another key): the export says the facts are not its own.
    let elsewhere = dir.path().join("elsewhere");
    let foreign = dir.path().join("foreign");
    let (v, code) = json_and_code(
        bin()
            .args(["history", "export", "--format", "git"])
            .arg(&foreign)
            .arg("--cache-dir")
            .arg(&elsewhere)
            .args(["--quiet", "--store"])
            .arg(&store),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["store"]["made_here"], false, "{v}");
    let msg = git(&foreign, &["log", "-1", "--format=%B", "v2.1.240"]);
    assert!(
        msg.contains("a store not marked as made on the exporting machine"),
        "{msg}"
    );
    let readme = git(&foreign, &["show", "v2.1.240:README.md"]);
    assert!(
        readme.contains("**not marked as made on the machine"),
        "{readme}"
    );
}
