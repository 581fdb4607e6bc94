//! History commands on small hostile stores: bounded memory and time,
//! JSON always serialised by the tool, and a damaged row left out (and
//! said so) rather than failing every command. The stores are made by the
//! binary (its schema) and then written with rusqlite as a forger would;
//! the facts in them are our fixture's.
use crate::common::*;
use rusqlite::{Connection, params};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PLATFORM: &str = "darwin-arm64";
/// A build summary with nothing in it, as the binary writes one.
const EMPTY_SUMMARY: &str = r#"{"counts":{},"flags":{},"prompt_bytes":0,"workflows":[]}"#;
/// How the store writes a facts body (four zstd frames of JSON: the facts
/// but their surface, the surface but its prompts, the prompts without
/// their texts, the texts).
const FACTS_ENCODING: &str = "json+zstd/core,surface,prompts,texts";

struct Store {
    _dir: tempfile::TempDir,
    cache: PathBuf,
    path: PathBuf,
    version: String,
}

impl Store {
    /// A store made by the binary, holding the fixture's facts.
    fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let path = dir.path().join("history.sqlite");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
        let out = bin()
            .arg("flags")
            .arg(&fixture)
            .args(["--quiet", "--json", "--cache-dir"])
            .arg(&cache)
            .arg("--store")
            .arg(&path)
            .env("CC_TEARDOWN_CACHE", &cache)
            .output()
            .unwrap();
        assert!(out.status.success());
        let version = Connection::open(&path)
            .unwrap()
            .query_row("SELECT analysis_version FROM facts", [], |r| r.get(0))
            .unwrap();
        Store {
            _dir: dir,
            cache,
            path,
            version,
        }
    }

    fn sql(&self) -> Connection {
        Connection::open(&self.path).unwrap()
    }

    fn build(&self, digest: &str) -> i64 {
        let c = self.sql();
        c.execute(
            "INSERT OR IGNORE INTO builds (digest) VALUES (?1)",
            params![digest],
        )
        .unwrap();
        c.query_row(
            "SELECT id FROM builds WHERE digest = ?1",
            params![digest],
            |r| r.get(0),
        )
        .unwrap()
    }

    fn releases(&self, build: i64, versions: impl IntoIterator<Item = String>) {
        let mut c = self.sql();
        let tx = c.transaction().unwrap();
        for v in versions {
            tx.execute(
                "INSERT OR REPLACE INTO releases (version, platform, build_id, status, analysis_version)
                 VALUES (?1, ?2, ?3, 'ok', ?4)",
                params![v, PLATFORM, build, self.version],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }

    /// Run `history ARGS` (with `--json` when asked); stdout, stderr, exit
    /// status, the peak resident memory in MB and the wall time.
    fn run(&self, args: &[&str]) -> Outcome {
        let mut c = command();
        c.arg("history")
            .args(args)
            .args(["--quiet", "--cache-dir"])
            .arg(&self.cache)
            .arg("--store")
            .arg(&self.path)
            .env("CC_TEARDOWN_CACHE", &self.cache)
            .env_remove("CC_TEARDOWN_STORE")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        run_measured(c)
    }
}

struct Outcome {
    stdout: Vec<u8>,
    stderr: String,
    code: i32,
    peak_mb: u64,
    took: Duration,
}

impl Outcome {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&self.stdout),
                self.stderr
            )
        })
    }

    /// Finished within the acceptance bounds: at most 1 GB and 10 s, one
    /// line on stderr when it failed.
    fn bounded(&self, what: &str) -> &Self {
        assert!(self.peak_mb <= 1024, "{what}: {} MB", self.peak_mb);
        assert!(
            self.took < Duration::from_secs(10),
            "{what}: {:?}",
            self.took
        );
        if self.code == 2 {
            assert_eq!(
                self.stderr.trim_end().lines().count(),
                1,
                "{what}: {}",
                self.stderr
            );
        }
        self
    }
}

/// A small program between the test and the command it measures: runs
/// the command, writes its children's peak RSS (kB) to the file named
/// first, and exits with the command's status.
const MEASURE: &str = "import resource, subprocess, sys
r = subprocess.run(sys.argv[2:]).returncode
open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(r if r >= 0 else 128 - r)";

/// Run a command and measure its own peak memory. Not with wait4 from the
/// test process: Linux folds the parent's memory at fork into the child's
/// peak when it execs, so in the full suite (a test process holding 2 GB
/// of other tests' builds) every child measured 2,225 MB. A freshly exec'd
/// python3 in between starts small, and its children's peak is the
/// command's own.
fn run_measured(c: std::process::Command) -> Outcome {
    let peak = tempfile::NamedTempFile::new().unwrap();
    let mut w = std::process::Command::new("python3");
    w.arg("-c")
        .arg(MEASURE)
        .arg(peak.path())
        .arg(c.get_program())
        .args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => w.env(k, v),
            None => w.env_remove(k),
        };
    }
    let t = Instant::now();
    let out = w.output().unwrap();
    let took = t.elapsed();
    let kb: u64 = std::fs::read_to_string(peak.path())
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    Outcome {
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
        peak_mb: kb >> 10,
        took,
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
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

fn versions(n: usize) -> impl Iterator<Item = String> {
    (0..n).map(|i| format!("1.{}.{}", i / 100, i % 100))
}

/// The sample: a build list of a million repeated ids (a 1.1 MB store took
/// 1.6 GB). Siblings: the repeats in a text's references, and in a chunk
/// of lines' lists.
#[test]
fn search_lists_hold_each_id_once() {
    let s = Store::new();
    let b = s.build(&"d".repeat(64));
    s.releases(b, versions(200));
    let c = s.sql();
    c.execute(
        "INSERT INTO build_summary (build_id, summary, names) VALUES (?1, ?2, x'')",
        params![b, EMPTY_SUMMARY],
    )
    .unwrap();
    let mut repeated = Vec::new();
    varint(b as u64, &mut repeated);
    repeated.extend(std::iter::repeat_n(0u8, 1_000_000));
    c.execute(
        "INSERT INTO search_names (hash, kind, name, builds) VALUES (1, 'flag', 'needle', ?1)",
        params![repeated],
    )
    .unwrap();
    // A text's references: one item, a million builds that are one.
    let mut refs = 2i64.to_le_bytes().to_vec();
    varint(1_000_000, &mut refs);
    refs.extend(&repeated);
    c.execute(
        "INSERT INTO texts (sha256, text) VALUES ('h', 'a haystack')",
        [],
    )
    .unwrap();
    let text: i64 = c
        .query_row("SELECT rowid FROM texts WHERE sha256 = 'h'", [], |r| {
            r.get(0)
        })
        .unwrap();
    c.execute(
        "INSERT INTO search_texts (id, refs) VALUES (?1, ?2)",
        params![text, refs],
    )
    .unwrap();
    c.execute(
        "INSERT INTO search_names (hash, kind, name, builds) VALUES (2, 'prompt', 'p', x'')",
        [],
    )
    .unwrap();
    // A chunk of lines: one line held by the same text a million times.
    let mut lists = Vec::new();
    varint(1_000_000, &mut lists);
    varint(text as u64, &mut lists);
    lists.extend(std::iter::repeat_n(0u8, 999_999));
    c.execute(
        "INSERT INTO search_lines (lines, texts) VALUES ('a haystack', ?1)",
        params![lists],
    )
    .unwrap();
    c.execute_batch(
        "INSERT OR REPLACE INTO search_state (key, value) VALUES ('items', 7), ('index', 7)",
    )
    .unwrap();
    drop(c);
    for needle in ["needle", "haystack"] {
        let o = s.run(&["search", needle, "--json"]);
        o.bounded(needle);
        // The damaged lists are remade from the history's tables (which
        // hold no such item), or refused: never a million versions.
        assert!(matches!(o.code, 0..=2), "{needle}: {}", o.stderr);
        if o.code < 2 {
            let v = o.json();
            for h in v["hits"].as_array().unwrap() {
                assert!(h["versions"].as_array().unwrap().len() <= 200);
            }
        }
    }
}

/// The sample: one name hash repeated 36,000 times in a summary, its name
/// 100 kB (a 290 kB store took 1 GB). Siblings: a 1 MB summary shared by
/// 3,000 releases, and unsorted hashes.
#[test]
fn timeline_summaries_are_read_as_written() {
    let s = Store::new();
    let (x, y) = (s.build(&"a".repeat(64)), s.build(&"b".repeat(64)));
    s.releases(x, ["1.0.0".to_string()]);
    s.releases(y, ["1.0.1".to_string()]);
    let c = s.sql();
    c.execute(
        "INSERT INTO names (hash, kind, name) VALUES (12345, 'flag', ?1)",
        params!["n".repeat(100_000)],
    )
    .unwrap();
    let repeated: Vec<u8> = std::iter::repeat_n(12345i64.to_le_bytes(), 36_000)
        .flatten()
        .collect();
    c.execute(
        "INSERT INTO build_summary (build_id, summary, names) VALUES (?1, ?4, ?2), (?3, ?4, x'')",
        params![x, repeated, y, EMPTY_SUMMARY],
    )
    .unwrap();
    drop(c);
    let o = s.run(&["timeline", "--platform", PLATFORM, "--json"]);
    o.bounded("repeated hash");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = o.json();
    assert_eq!(
        v["skipped"].as_array().unwrap().len(),
        1,
        "{}",
        v["skipped"]
    );
    // Unsorted hashes: damaged too.
    let unsorted: Vec<u8> = [3i64, 1, 2].iter().flat_map(|h| h.to_le_bytes()).collect();
    s.sql()
        .execute(
            "UPDATE build_summary SET names = ?1 WHERE build_id = ?2",
            params![unsorted, x],
        )
        .unwrap();
    let o = s.run(&["timeline", "--platform", PLATFORM, "--json"]);
    o.bounded("unsorted");
    assert_eq!(o.json()["skipped"].as_array().unwrap().len(), 1);
    // A summary of 1 MB of workflow names shared by 3,000 releases: either
    // answered within the bounds or refused in one line.
    let big = serde_json::json!({"counts": {}, "flags": {}, "prompt_bytes": 0,
        "workflows": vec!["w".repeat(1000); 1000]});
    let s = Store::new();
    let z = s.build(&"c".repeat(64));
    s.releases(z, versions(3000));
    s.sql()
        .execute(
            "INSERT INTO build_summary (build_id, summary, names) VALUES (?1, ?2, x'')",
            params![z, big.to_string()],
        )
        .unwrap();
    for format in ["--json", "--format=md"] {
        let o = s.run(&["timeline", "--platform", PLATFORM, format]);
        o.bounded(format);
        assert!(o.code == 0 || o.stderr.contains("MiB"), "{}", o.stderr);
    }
}

/// The sample: a 1 MB value in one build that 3,000 releases share (a
/// 1.1 MB store took 3.2 GB): parsed once. Siblings: the same through
/// `export --format json` and `list`, whose summaries are shared too.
#[test]
fn a_value_shared_by_releases_is_read_once() {
    let s = Store::new();
    let b = s.build(&"c".repeat(64));
    s.releases(b, versions(3000));
    let value = serde_json::json!({"kind": "feature", "defaults": [vec![0; 500_000]]});
    s.sql()
        .execute(
            "INSERT INTO items (build_id, kind, name, value) VALUES (?1, 'flag', 'f', ?2)",
            params![b, value.to_string()],
        )
        .unwrap();
    let o = s.run(&["show", "flag", "f", "--platform", PLATFORM, "--json"]);
    o.bounded("show");
    // Past the cap on a value: left out and said so.
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(!o.json()["skipped"].as_array().unwrap().is_empty());
    // A value under the cap, shared by every release: one story.
    let small = serde_json::json!({"kind": "feature", "defaults": [vec![0; 20_000]]});
    s.sql()
        .execute("UPDATE items SET value = ?1", params![small.to_string()])
        .unwrap();
    let o = s.run(&["show", "flag", "f", "--platform", PLATFORM, "--json"]);
    o.bounded("show, under the cap");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["changes"].as_array().unwrap().len(), 1);
    for args in [
        &["export", "--format", "json"][..],
        &["export", "--format", "csv"][..],
        &["list", "--json"][..],
    ] {
        let o = s.run(args);
        o.bounded(&format!("{args:?}"));
        assert!(
            o.code == 0 || o.stderr.contains("MiB"),
            "{args:?}: {}",
            o.stderr
        );
    }
}

/// The sample: facts that inflate to 520 MB of JSON, under the old
/// 512 MiB cap (a 160 kB store needed over 12 GB to parse). Siblings:
/// facts just past the values' cap, and a stored `changes` answer that
/// inflates past its cap.
#[test]
fn stored_facts_and_answers_are_capped_before_parsing() {
    let s = Store::new();
    let c = s.sql();
    let body: Vec<u8> = c
        .query_row("SELECT body FROM facts", [], |r| r.get(0))
        .unwrap();
    // A body's first frame is the facts but their surface; the surface's
    // frames follow.
    let first = zstd::zstd_safe::find_frame_compressed_size(&body).unwrap();
    let (core, surface) = body.split_at(first);
    let facts: Value = serde_json::from_slice(&zstd::decode_all(core).unwrap()).unwrap();
    let with_surface = |mut core: Vec<u8>| -> Vec<u8> {
        core.extend_from_slice(surface);
        core
    };
    let mut head = facts.clone();
    head.as_object_mut().unwrap().remove("gates");
    let head = head.to_string();
    let gate = facts["gates"][0].to_string();
    let inflated = |bytes: usize| -> Vec<u8> {
        let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        e.write_all(&head.as_bytes()[..head.len() - 1]).unwrap();
        e.write_all(b",\"gates\":[").unwrap();
        let n = bytes / (gate.len() + 1);
        for i in 0..n {
            if i > 0 {
                e.write_all(b",").unwrap();
            }
            e.write_all(gate.as_bytes()).unwrap();
        }
        e.write_all(b"]}").unwrap();
        with_surface(e.finish().unwrap())
    };
    let pair = |s: &Store, body: &[u8], tag: &str| {
        let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body));
        for (i, d) in ["e", "f"].iter().enumerate() {
            let id = s.build(&format!("{tag}{}", d.repeat(60)));
            s.sql()
                .execute(
                    "INSERT OR REPLACE INTO facts (build_id, analysis_version, encoding, body, body_sha256)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, s.version, FACTS_ENCODING, body, sha],
                )
                .unwrap();
            s.releases(id, [format!("1.0.{i}")]);
        }
    };
    drop(c);
    // 520 MB of JSON.
    pair(&s, &inflated(520_000_000), "big0");
    let o = s.run(&["changes", "1.0.1", "--platform", PLATFORM, "--json"]);
    o.bounded("520 MB of facts");
    assert_eq!(o.code, 2, "refused: {}", o.stderr);
    // Under the bytes' cap, past the values' cap: `[]` repeated.
    let s = Store::new();
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.write_all(&head.as_bytes()[..head.len() - 1]).unwrap();
    e.write_all(b",\"gates\":[],\"pad\":[").unwrap();
    for i in 0..1_100_000 {
        e.write_all(if i == 0 { b"[]" } else { b",[]" }).unwrap();
    }
    e.write_all(b"]}").unwrap();
    pair(&s, &with_surface(e.finish().unwrap()), "vals");
    let o = s.run(&["changes", "1.0.1", "--platform", PLATFORM, "--json"]);
    o.bounded("too many values");
    assert_eq!(o.code, 2, "{}", o.stderr);
    // An honest pair of facts answers.
    let s = Store::new();
    pair(&s, &body, "ok");
    let o = s.run(&["changes", "1.0.1", "--platform", PLATFORM, "--json"]);
    o.bounded("honest");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["version"], "1.0.1");
    // A stored answer that inflates past its cap: a miss, recomputed.
    let digests: Vec<String> = s
        .sql()
        .prepare("SELECT digest FROM builds WHERE digest LIKE 'ok%' ORDER BY digest")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.write_all(
        b"{\"version\":\"1.0.1\",\"previous\":\"1.0.0\",\"platform\":\"darwin-arm64\",\"pad\":\"",
    )
    .unwrap();
    for _ in 0..16 {
        e.write_all(&[b'x'; 1 << 20]).unwrap();
    }
    e.write_all(b"\"}").unwrap();
    stored_answer(&s, &digests[0], &digests[1], &e.finish().unwrap());
    let o = s.run(&["changes", "1.0.1", "--platform", PLATFORM, "--json"]);
    o.bounded("a big stored answer");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.json().get("pad").is_none(),
        "recomputed, not the stored answer"
    );
}

fn stored_answer(s: &Store, from: &str, to: &str, body: &[u8]) {
    let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body));
    s.sql()
        .execute(
            "INSERT OR REPLACE INTO changes (from_digest, to_digest, analysis_version, body, body_sha256)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![from, to, s.version, body, sha],
        )
        .unwrap();
}

/// Two releases of the fixture's facts (under two digests); their digests.
fn honest_pair(s: &Store) -> (String, String) {
    let c = s.sql();
    let (body, sha): (Vec<u8>, String) = c
        .query_row("SELECT body, body_sha256 FROM facts", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let (a, b) = ("1".repeat(64), "2".repeat(64));
    for (i, d) in [&a, &b].iter().enumerate() {
        let id = s.build(d);
        c.execute(
            "INSERT INTO facts (build_id, analysis_version, encoding, body, body_sha256)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, s.version, FACTS_ENCODING, body, sha],
        )
        .unwrap();
        c.execute(
            "INSERT INTO items (build_id, kind, name, value)
             VALUES (?1, 'flag', 'tengu_fixture_flag', ?2)",
            params![
                id,
                format!("{{\"kind\":\"feature\",\"defaults\":[{}]}}", i == 0)
            ],
        )
        .unwrap();
        s.releases(id, [format!("1.0.{i}")]);
    }
    (a, b)
}

/// The sample: a stored answer that is raw escape sequences and not JSON
/// was printed byte for byte. Siblings: a JSON answer for other releases,
/// and one whose strings hold a right-to-left override and C1 controls.
#[test]
fn changes_json_is_always_serialised_by_the_tool() {
    let s = Store::new();
    let (a, b) = honest_pair(&s);
    let bodies: [&[u8]; 3] = [
        b"\x1b]0;pwned\x07\x1b[2J not json",
        br#"{"version":"9.9.9","previous":"1.0.0","platform":"darwin-arm64","flags":"forged"}"#,
        "{\"version\":\"1.0.1\",\"previous\":\"1.0.0\",\"platform\":\"darwin-arm64\",\"note\":\"\u{202e}\u{9b}x\"}"
            .as_bytes(),
    ];
    for (i, body) in bodies.iter().enumerate() {
        stored_answer(&s, &a, &b, &zstd::bulk::compress(body, 3).unwrap());
        let o = s.run(&["changes", "1.0.1", "--platform", PLATFORM, "--json"]);
        o.bounded("changes");
        assert_eq!(o.code, 0, "{i}: {}", o.stderr);
        let text = String::from_utf8(o.stdout.clone()).unwrap();
        assert!(
            !text.contains(['\x1b', '\x07', '\u{202e}', '\u{9b}']),
            "{i}: {text:?}"
        );
        let v = o.json();
        assert_eq!(v["version"], "1.0.1", "{i}");
        assert_eq!(v["store"]["made_here"], true, "{i}");
        // The human answer is escaped too.
        let o = s.run(&["changes", "1.0.1", "--platform", PLATFORM]);
        assert_eq!(o.code, 0);
        assert!(!o.stdout.contains(&0x1b), "{i}");
    }
}

/// The sample: one release naming a build the store does not hold made
/// every history command fail. Siblings: a release whose version is not
/// text, and a summary that does not decode.
#[test]
fn a_damaged_row_is_skipped_and_said() {
    let s = Store::new();
    honest_pair(&s);
    let c = s.sql();
    c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    c.execute(
        "INSERT INTO releases (version, platform, build_id, status, analysis_version)
         VALUES ('1.0.2', ?1, 999, 'ok', ?2)",
        params![PLATFORM, s.version],
    )
    .unwrap();
    c.execute(
        "INSERT INTO releases (version, platform, build_id, status, analysis_version)
         VALUES (x'ff00', ?1, NULL, 'failed', ?2)",
        params![PLATFORM, s.version],
    )
    .unwrap();
    drop(c);
    let commands: [&[&str]; 6] = [
        &["list"],
        &["show", "flag", "tengu_fixture_flag", "--platform", PLATFORM],
        &["changes", "1.0.1", "--platform", PLATFORM],
        &["search", "fixture_flag", "--platform", PLATFORM],
        &["timeline", "--platform", PLATFORM],
        &["export", "--format", "json"],
    ];
    for args in commands {
        let o = s.run(&[args, &["--json"]].concat());
        o.bounded(&format!("{args:?}"));
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        let v = o.json();
        let skipped = v["skipped"].as_array().unwrap();
        assert_eq!(skipped.len(), 2, "{args:?}: {skipped:?}");
        let o = s.run(args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        let warnings = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("warning:"))
            .count();
        assert_eq!(warnings, 2, "{args:?}: {}", o.stderr);
    }
}
