//! `diff` of two builds whose code facts are in the store: nothing is
//! parsed, and the code sections (functions, modules, texts) are what a
//! diff without the store finds.
use crate::common::*;
use std::path::Path;

const CODE: &str = "functions,modules,text";

/// `diff A B --json --only SECTIONS` with `extra` arguments; the JSON
/// report and stderr (with `CC_TEARDOWN_DEBUG=store`).
fn diff(
    a: &Path,
    b: &Path,
    sections: &str,
    extra: &[&std::ffi::OsStr],
) -> (serde_json::Value, String) {
    let out = bin()
        .arg("diff")
        .args([a, b])
        .args(["--json", "--quiet", "--only", sections])
        .args(extra)
        .env("CC_TEARDOWN_DEBUG", "store")
        .timeout(std::time::Duration::from_secs(1800))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "diff {a:?} {b:?}: {stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// How many sides the debug lines say were parsed.
fn parsed(stderr: &str) -> usize {
    let n = stderr.matches("not parsed").count();
    let sides = stderr.matches("debug: diff side").count();
    assert_eq!(sides, 2, "one debug line per side: {stderr}");
    sides - n
}

/// Fresh, first stored (computes and saves), second stored (reads): the
/// code sections are equal in all three, and only the first parses.
fn stored_equals_fresh(a: &Path, b: &Path) {
    let cache = tempfile::tempdir().unwrap();
    let store = ["--cache-dir".as_ref(), cache.path().as_os_str()];
    let (fresh, e) = diff(a, b, CODE, &["--no-cache".as_ref()]);
    assert_eq!(parsed(&e), 2);
    let (first, e) = diff(a, b, CODE, &store);
    assert_eq!(parsed(&e), 2, "nothing stored yet: {e}");
    let (warm, e) = diff(a, b, CODE, &store);
    assert_eq!(parsed(&e), 0, "both sides read from the store: {e}");
    for section in ["functions", "modules", "text"] {
        assert!(fresh[section].is_object(), "{section} is in the report");
        assert_eq!(first[section], fresh[section], "{section}: first run");
        assert_eq!(warm[section], fresh[section], "{section}: stored run");
    }
}

#[test]
fn fixture_stored_diff_equals_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/diff");
    stored_equals_fresh(&dir.join("a.js"), &dir.join("b.js"));
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_2_1_260_vs_2_1_332_stored_equals_fresh() {
    let (a, b) = (
        fetch("2.1.260", "darwin-arm64"),
        fetch("2.1.332", "darwin-arm64"),
    );
    stored_equals_fresh(&a, &b);
}
