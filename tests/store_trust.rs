//! Stores that are not yours: a facts row rewritten together with its
//! hash, in the cache or in a store named with `--store`, or a whole store
//! copied from another machine, never decides what a command says about a
//! build you have; history answers from a store made elsewhere say so.
use crate::common::*;
use rusqlite::{Connection, params};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js")
        .join(name)
        .display()
        .to_string()
}

const COMMANDS: [&str; 3] = ["flags", "gates", "workflows"];

/// Every facts row of `store`: (digest, body, body_sha256).
fn facts_rows(store: &Path) -> Vec<(String, Vec<u8>, String)> {
    let c = Connection::open(store).unwrap();
    let mut st = c
        .prepare(
            "SELECT b.digest, f.body, f.body_sha256 FROM facts f JOIN builds b ON b.id = f.build_id",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Rewrite the facts of the build `victim` with `body`, its hash rewritten
/// too, as a forger would.
fn forge(store: &Path, victim: &str, body: &[u8]) {
    let c = Connection::open(store).unwrap();
    let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body));
    let n = c
        .execute(
            "UPDATE facts SET body = ?1, body_sha256 = ?2
             WHERE build_id = (SELECT id FROM builds WHERE digest = ?3)",
            params![body, sha, victim],
        )
        .unwrap();
    assert_eq!(n, 1, "the victim's row is rewritten");
}

/// Analyse single.js (the victim: roles, workflows, flags, gates) and
/// diff/a.js (whose facts are empty) into `store`; what each command says
/// about single.js, and the two digests.
fn two_builds(cache: &Path, store: Option<&Path>) -> (Vec<Vec<u8>>, String, String) {
    let (a, b) = (fixture("single.js"), fixture("diff/a.js"));
    let truth: Vec<Vec<u8>> = COMMANDS
        .iter()
        .map(|cmd| stored_run(cache, store, cmd, &a).0)
        .collect();
    stored_run(cache, store, "flags", &b);
    let path = store.map_or_else(|| cache.join("facts.sqlite"), PathBuf::from);
    let rows = facts_rows(&path);
    assert_eq!(rows.len(), 2, "a's and b's facts are stored");
    // The victim's digest is the one whose row came first.
    let c = Connection::open(&path).unwrap();
    let order: Vec<String> = c
        .prepare("SELECT digest FROM builds ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (truth, order[0].clone(), order[1].clone())
}

/// The sample: the victim's facts row rewritten with another build's facts
/// (and its hash): every command recomputes and answers about the victim.
/// Siblings: a body of garbage whose hash matches, and the file → build
/// shortcut pointed at the other build.
#[test]
fn a_forged_row_in_the_cache_is_recomputed() {
    let cache = tempfile::tempdir().unwrap();
    let (truth, da, db) = two_builds(cache.path(), None);
    assert_ne!(
        truth[0],
        stored_run(cache.path(), None, "flags", &fixture("diff/a.js")).0
    );
    let store = cache.path().join("facts.sqlite");
    let rows = facts_rows(&store);
    let b_body = rows.iter().find(|r| r.0 == db).unwrap().1.clone();
    assert_ne!(
        b_body,
        rows.iter().find(|r| r.0 == da).unwrap().1,
        "the forgery changes the row"
    );
    for forged in [b_body, zstd::bulk::compress(b"{\"roles\":", 3).unwrap()] {
        forge(&store, &da, &forged);
        for (cmd, want) in COMMANDS.iter().zip(&truth) {
            let (out, hit) = stored_run(cache.path(), None, cmd, &fixture("single.js"));
            assert!(!hit || *cmd != "flags", "{cmd}: the forged row is not read");
            assert_eq!(&out, want, "{cmd}: answers about a.js");
        }
        // The recomputed facts were stored sealed: the next run reads them.
        assert!(stored_run(cache.path(), None, "flags", &fixture("single.js")).1);
    }
    // The file shortcut: a.js's path and stat pointed at b's build.
    let c = Connection::open(&store).unwrap();
    let n = c
        .execute(
            "UPDATE files SET build_id = (SELECT id FROM builds WHERE digest = ?1)",
            params![db],
        )
        .unwrap();
    assert!(n >= 1);
    drop(c);
    for (cmd, want) in COMMANDS.iter().zip(&truth) {
        let (out, _) = stored_run(cache.path(), None, cmd, &fixture("single.js"));
        assert_eq!(&out, want, "{cmd}: a.js, not the build the shortcut names");
    }
}

/// A store named with `--store` whose row was rewritten is not believed;
/// neither is a whole store made with another cache folder's key (another
/// machine), whose history answers say where they come from.
#[test]
fn a_named_or_copied_store_is_not_believed_about_your_build() {
    let mine = tempfile::tempdir().unwrap();
    let named = mine.path().join("named.sqlite");
    let (truth, da, db) = two_builds(mine.path(), Some(&named));
    let b_body = facts_rows(&named)
        .into_iter()
        .find(|r| r.0 == db)
        .unwrap()
        .1;
    forge(&named, &da, &b_body);
    for (cmd, want) in COMMANDS.iter().zip(&truth) {
        let (out, _) = stored_run(mine.path(), Some(&named), cmd, &fixture("single.js"));
        assert_eq!(
            &out, want,
            "{cmd}: the forged row in --store is not believed"
        );
    }
    // Another machine: its own cache folder (its own key) made the store.
    let theirs = tempfile::tempdir().unwrap();
    let published = theirs.path().join("published.sqlite");
    stored_run(
        theirs.path(),
        Some(&published),
        "flags",
        &fixture("single.js"),
    );
    forge(&published, &da, &b_body);
    let copy = mine.path().join("copy.sqlite");
    std::fs::copy(&published, &copy).unwrap();
    for (cmd, want) in COMMANDS.iter().zip(&truth) {
        let (out, hit) = stored_run(mine.path(), Some(&copy), cmd, &fixture("single.js"));
        assert_eq!(&out, want, "{cmd}: the copied store's facts are not used");
        assert!(
            !hit || *cmd != "flags",
            "{cmd}: computed here, not read from the copy"
        );
    }
    // History answers from the copy are labelled as its author's; from a
    // store this machine made, as made here.
    let list = |cache: &Path, store: &Path| -> serde_json::Value {
        let out = bin()
            .args(["history", "list", "--json", "--quiet", "--cache-dir"])
            .arg(cache)
            .arg("--store")
            .arg(store)
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(list(mine.path(), &copy)["store"]["made_here"], false);
    assert_eq!(list(theirs.path(), &published)["store"]["made_here"], true);
    assert_eq!(list(mine.path(), &named)["store"]["made_here"], true);
    let human = bin()
        .args(["history", "list", "--quiet", "--cache-dir"])
        .arg(mine.path())
        .arg("--store")
        .arg(&copy)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("a store not marked as made on this machine"),
        "labelled: {text}"
    );
}
