//! `history merge`: two stores scanned separately — two ranges of one
//! platform that share a release, the second scanned on "another machine"
//! (another cache folder, so another key) — merged into one answer `list`,
//! `show`, `changes`, `search` and `timeline` exactly as one store that
//! scanned the whole range. The inputs are never written; an OUT that
//! exists is refused (or, with --force, replaced only when it is a file of
//! its own and none of the inputs); the merged store says where its
//! releases came from and its other machine's facts are computed again
//! before analysis believes them.
use crate::common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const PLATFORM: &str = "darwin-arm64";
/// Two single bundles, then the first code-split build.
const WHOLE: &str = "2.1.240..2.1.242";
/// Scanned here.
const FIRST: &str = "2.1.240..2.1.241";
/// Scanned on the other machine: shares 2.1.241 with FIRST.
const SECOND: &str = "2.1.241..2.1.242";

/// `history ARGS --json` on `store`, with `cache` as the cache folder
/// (its key is that machine's) when given.
fn history(store: &Path, cache: Option<&Path>, args: &[&str]) -> (Value, i32) {
    let mut c = bin();
    c.arg("history")
        .args(args)
        .args(["--quiet", "--store"])
        .arg(store);
    if let Some(cache) = cache {
        c.env("CC_TEARDOWN_CACHE", cache);
    }
    json_and_code(&mut c)
}

fn scan(store: &Path, cache: Option<&Path>, range: &str) {
    let (v, code) = history(
        store,
        cache,
        &["scan", range, "--platform", PLATFORM, "--keep"],
    );
    assert_eq!(code, 0, "scan {range}: {v}");
}

/// An answer without what legitimately differs between two stores that
/// hold the same history: `store` (the file's path, whether this machine
/// made it, and the stores a merged one came from).
fn answer(store: &Path, args: &[&str]) -> (Value, i32) {
    let (mut v, code) = history(store, None, args);
    if let Some(m) = v.as_object_mut() {
        m.remove("store");
    }
    (v, code)
}

/// The files of a store (itself and any side files) and their bytes.
fn files_of(store: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let dir = store.parent().unwrap();
    let name = store.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&name))
        })
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// Up to three names of each kind the history holds: the first by name,
/// and the two whose values change most across the releases.
fn items_to_show(store: &Path) -> Vec<(String, String)> {
    let out = bin()
        .args([
            "history", "export", "--format", "json", "--quiet", "--store",
        ])
        .arg(store)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(succeeded("export", &out).as_bytes()).unwrap();
    let mut values: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for i in v["items"].as_array().unwrap() {
        values
            .entry((
                i["kind"].as_str().unwrap().to_string(),
                i["name"].as_str().unwrap().to_string(),
            ))
            .or_default()
            .insert(format!("{}", i["value"]));
    }
    let mut by_kind: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for ((k, n), vals) in &values {
        by_kind
            .entry(k.clone())
            .or_default()
            .push((vals.len(), n.clone()));
    }
    let mut out = Vec::new();
    for (k, mut names) in by_kind {
        out.push((k.clone(), names[0].1.clone()));
        names.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, n) in names.into_iter().take(2) {
            if !out.contains(&(k.clone(), n.clone())) {
                out.push((k.clone(), n));
            }
        }
    }
    out
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn a_merge_answers_as_one_store_that_scanned_everything() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, first, second) = (
        dir.path().join("whole.sqlite"),
        dir.path().join("first").join("first.sqlite"),
        dir.path().join("second").join("second.sqlite"),
    );
    std::fs::create_dir_all(first.parent().unwrap()).unwrap();
    std::fs::create_dir_all(second.parent().unwrap()).unwrap();
    // The other machine: a cache folder (and key) of its own, with the
    // suite's shared downloads.
    let other = dir.path().join("other-machine");
    std::fs::create_dir_all(&other).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(downloads().join("npm"), other.join("npm")).unwrap();

    scan(&whole, None, WHOLE);
    scan(&first, None, FIRST);
    scan(&second, Some(&other), SECOND);

    // 1. The merge: the inputs are only read (not a byte changed, no file
    // made beside them).
    let before = (files_of(&first), files_of(&second));
    let merged = dir.path().join("merged.sqlite");
    let (m, code) = json_and_code(
        bin()
            .args(["history", "merge", "--quiet"])
            .arg(&first)
            .arg(&second)
            .arg("-o")
            .arg(&merged),
    );
    assert_eq!(code, 0, "{m}");
    assert_eq!(m["releases"], 3, "{m}");
    assert_eq!(m["builds"], 3, "{m}");
    assert_eq!(m["made_here"], false, "{m}");
    assert_eq!(m["inputs"][0]["made_here"], true, "{m}");
    assert_eq!(m["inputs"][1]["made_here"], false, "{m}");
    assert_eq!(m["inputs"][0]["releases"], 2, "{m}");
    assert_eq!(m["inputs"][1]["releases"], 2, "{m}");
    assert_eq!(
        m["inputs"][0]["kept"].as_u64().unwrap() + m["inputs"][1]["kept"].as_u64().unwrap(),
        3,
        "the shared release is kept once: {m}"
    );
    assert_eq!(
        before,
        (files_of(&first), files_of(&second)),
        "the inputs are never written"
    );
    assert!(
        !std::fs::read_dir(dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".cc-teardown-merge")),
        "no scratch folder left"
    );

    // 2. Every question answers as on the store that scanned it all
    // (`store` aside: path, made_here and merged_from are the file's).
    let mut asked: Vec<Vec<String>> = vec![
        vec!["list".into()],
        vec!["timeline".into()],
        vec!["changes".into(), "2.1.241".into()],
        vec!["changes".into(), "2.1.242".into()],
        vec!["search".into(), "tengu_".into()],
        vec!["search".into(), " the ".into()],
        vec!["search".into(), "zz-no-such-thing-zz".into()],
    ];
    for (k, n) in items_to_show(&whole) {
        asked.push(vec!["show".into(), k.clone(), n.clone()]);
        asked.push(vec!["search".into(), n]);
    }
    asked.push(vec![
        "show".into(),
        "flag".into(),
        "tengu_no_such_flag".into(),
    ]);
    assert!(asked.len() > 20, "{asked:?}");
    for args in &asked {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (a, ca) = answer(&whole, &args);
        let (b, cb) = answer(&merged, &args);
        assert_eq!(ca, cb, "{args:?}");
        assert_eq!(a, b, "{args:?}");
    }

    // 3. Where it came from: every answer says so.
    let (v, _) = history(&merged, None, &["list"]);
    let store = &v["store"];
    assert_eq!(store["made_here"], false, "{v}");
    let from = store["merged_from"].as_array().unwrap();
    assert_eq!(from.len(), 2, "{store}");
    assert_eq!(from[0]["path"], first.display().to_string());
    assert_eq!(from[0]["made_here"], true, "{store}");
    assert_eq!(from[1]["made_here"], false, "{store}");
    let (v, _) = history(&whole, None, &["list"]);
    assert!(v["store"].get("merged_from").is_none(), "{v}");
    let text = bin()
        .args(["history", "list", "--quiet", "--store"])
        .arg(&merged)
        .output()
        .unwrap();
    let text = succeeded("list", &text);
    assert!(
        text.lines().next().unwrap().contains("merged from"),
        "{text}"
    );

    // 4. A build only the other machine analysed: its facts are computed
    // again before analysis believes them; one this machine analysed is
    // read from the store.
    let cache = sandbox_cache();
    let (_, hit) = stored_run(
        &cache,
        Some(&merged),
        "flags",
        &format!("npm:2.1.242/{PLATFORM}"),
    );
    assert!(!hit, "another machine's facts are not believed");
    let (_, hit) = stored_run(
        &cache,
        Some(&merged),
        "flags",
        &format!("npm:2.1.240/{PLATFORM}"),
    );
    assert!(hit, "this machine's own facts are read");

    // 5. OUT: refused when it exists; --force replaces a file of its own,
    // never an input, never through a link.
    let merge = |out: &Path, force: bool| {
        let mut c = bin();
        c.args(["history", "merge", "--quiet"])
            .arg(&first)
            .arg(&second)
            .arg("-o")
            .arg(out);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let err = one_line_error("exists", &merge(&merged, false));
    assert!(err.contains("already exists"), "{err}");
    let err = one_line_error("an input", &merge(&first, true));
    assert!(err.contains("one of the stores merged"), "{err}");
    assert_eq!(before.0, files_of(&first), "the input is untouched");
    let target = dir.path().join("target.txt");
    std::fs::write(&target, "someone's file\n").unwrap();
    let link = dir.path().join("link.sqlite");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    one_line_error("a link", &merge(&link, true));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "someone's file\n"
    );
    let old = dir.path().join("old.sqlite");
    std::fs::write(&old, "an old file\n").unwrap();
    succeeded("--force", &merge(&old, true));
    let (v, code) = answer(&old, &["list"]);
    assert_eq!(code, 0);
    assert_eq!(v, answer(&whole, &["list"]).0);
}
