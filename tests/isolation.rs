//! The suite runs every command in the running test's own sandbox
//! (tests/common/run.rs): its own home, cache folder, facts store and
//! machine key, with the downloaded builds shared; the user's own cache
//! folder is never touched (scripts/test.sh also compares it before and
//! after the whole suite).
use crate::common::*;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a folder holds: each path below it, its kind, size and
/// modification time (`None`: the folder does not exist).
fn fingerprint(dir: &Path) -> Option<Vec<(PathBuf, bool, u64, SystemTime)>> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, bool, u64, SystemTime)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            out.push((e.path(), m.is_dir(), m.len(), m.modified().unwrap()));
            if m.is_dir() {
                walk(&e.path(), out);
            }
        }
    }
    let m = std::fs::symlink_metadata(dir).ok()?;
    let mut out = vec![(dir.to_path_buf(), m.is_dir(), 0, m.modified().unwrap())];
    walk(dir, &mut out);
    out.sort();
    Some(out)
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js/single.js")
        .display()
        .to_string()
}

/// A command that stores facts (and so makes a store and a machine key)
/// makes them in the test's own cache folder, and the user's cache folder
/// is as it was.
#[test]
fn a_command_keeps_its_facts_in_the_tests_own_cache() {
    let user = user_cache().expect("HOME is set");
    let before = fingerprint(&user);
    let cache = sandbox_cache();
    assert!(!cache.join("facts.sqlite").exists(), "a fresh sandbox");
    let v = json(&["flags", &fixture(), "--quiet"]);
    assert!(v["flags"].is_array(), "{v}");
    for file in ["facts.sqlite", "store.key"] {
        assert!(cache.join(file).is_file(), "{file} is the test's own");
    }
    let info = json(&["cache", "info"]);
    assert_eq!(
        Path::new(info["path"].as_str().unwrap()),
        cache.join("facts.sqlite"),
        "{info}"
    );
    assert!(cache.starts_with(sandbox_home()), "a cache below its home");
    assert_eq!(fingerprint(&user), before, "{} changed", user.display());
}

/// Two tests never share a sandbox.
#[test]
fn each_test_has_a_sandbox_of_its_own() {
    let here = sandbox_home();
    let other = std::thread::spawn(sandbox_home).join().unwrap();
    assert_ne!(here, other);
    assert!(here.is_dir());
    // A sandbox is removed with its test (its thread).
    assert!(!other.exists(), "{} is left behind", other.display());
}

/// Builds are downloaded once for the suite: the sandbox's `npm/` is the
/// shared download folder's, which is never in the user's cache.
#[cfg(unix)]
#[test]
fn downloads_are_shared_outside_the_users_cache() {
    let npm = sandbox_cache().join("npm");
    assert!(std::fs::symlink_metadata(&npm).unwrap().is_symlink());
    assert_eq!(std::fs::read_link(&npm).unwrap(), downloads().join("npm"));
    if let Some(user) = user_cache().and_then(|u| u.canonicalize().ok()) {
        assert!(!downloads().starts_with(user));
    }
}

/// No test starts the binary but through tests/common/run.rs (which gives
/// it the sandbox): no other file names the binary's path.
#[test]
fn the_binary_is_started_only_in_a_sandbox() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = vec![tests.join("common/mod.rs")];
    for e in std::fs::read_dir(&tests).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "rs") {
            files.push(e.path());
        }
    }
    // Spelled in two pieces, so that this file does not name them itself.
    let names = [
        ["CARGO_BIN_", "EXE"].concat(),
        ["cargo", "_bin("].concat(),
        ["Command::", "cargo_bin"].concat(),
        ["Command::new(", "EXE)"].concat(),
    ];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for name in &names {
            assert!(
                !text.contains(name.as_str()),
                "{} starts the binary with {name}: use common::command() or bin()",
                f.display()
            );
        }
    }
}
