//! The facts store: a second command on the same build reads the facts
//! instead of parsing, prints byte-identical output, and a damaged, foreign
//! or concurrently written store file never gives a wrong answer.
use crate::common::*;
use std::path::Path;

const COMMANDS: [&str; 4] = ["workflows", "flags", "gates", "locate"];

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js/single.js")
        .display()
        .to_string()
}

/// Cold then warm: the first command computes, every later one reads the
/// store, and all print what a run without the store prints (checked when
/// `with_reference`: a real build's cold analysis costs a minute in a test
/// build).
fn cold_then_warm(target: &str, with_reference: bool) {
    let cache = tempfile::tempdir().unwrap();
    let reference: Vec<Vec<u8>> = COMMANDS
        .iter()
        .filter(|_| with_reference)
        .map(|cmd| {
            let out = bin()
                .args([cmd, target, "--json", "--quiet", "--no-cache"])
                .output()
                .unwrap();
            assert!(out.status.success());
            out.stdout
        })
        .collect();
    for (i, cmd) in COMMANDS.iter().enumerate() {
        let (cold, hit) = stored_run(cache.path(), None, cmd, target);
        assert_eq!(hit, i > 0, "{cmd}: only the first command computes");
        if with_reference {
            assert_eq!(
                cold, reference[i],
                "{cmd}: same output as without the store"
            );
        }
        let (warm, hit) = stored_run(cache.path(), None, cmd, target);
        assert!(hit, "{cmd}: the second run reads the store");
        assert_eq!(warm, cold, "{cmd}: warm output is byte-identical");
    }
}

#[test]
fn fixture_cold_then_warm() {
    cold_then_warm(&fixture(), true);
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_builds_cold_then_warm() {
    for (v, p) in [("2.1.220", "darwin-arm64"), ("2.1.332", "linux-x64")] {
        cold_then_warm(fetch(v, p).to_str().unwrap(), false);
    }
}

/// A build with two prompts (a request's system prompt, a tool's
/// description), one of them with quotes and a line break.
const PROMPTS_JS: &str = r#"async function ask(client, question) {
  return client.messages.create({
    model: "claude-demo-1",
    system: "You are a careful assistant.\nAnswer in \"one\" line.",
    messages: [{ role: "user", content: question }],
  });
}
var tool = { name: "DemoTool", description: "Reads a demo file and returns its lines.", inputSchema: {} };
"#;

/// `surface` reads the stored surface without its prompts' texts for the
/// views that show none (text, Markdown, HTML), and with them for JSON and
/// `--export`: every view prints warm what it prints cold.
#[test]
fn surface_reads_the_texts_only_for_the_views_that_show_them() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("prompts.js");
    std::fs::write(&target, PROMPTS_JS).unwrap();
    let target = target.to_str().unwrap();
    let run = |cache: &Path, args: &[&str]| {
        let out = bin()
            .arg("surface")
            .arg(target)
            .args(args)
            .args(["--quiet", "--cache-dir"])
            .arg(cache)
            .env("CC_TEARDOWN_CACHE", cache)
            .env("CC_TEARDOWN_DEBUG", "store")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "{args:?}: {err}");
        (out.stdout, err)
    };
    let reference = |args: &[&str]| {
        let out = bin()
            .arg("surface")
            .arg(target)
            .args(args)
            .args(["--quiet", "--no-cache"])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    for (args, part) in [
        (&["--format", "text"][..], "(Outline)"),
        (&["--format", "md"][..], "(Outline)"),
        (&["--format", "html"][..], "(Outline)"),
        (&["--only", "env"][..], "(Outline)"),
        (&["--json"][..], "(Surface)"),
        (&["--json", "--only", "env"][..], "(Outline)"),
        (&["--json", "--only", "prompts"][..], "(Surface)"),
    ] {
        let cache = tempfile::tempdir().unwrap();
        let (cold, err) = run(cache.path(), args);
        assert!(err.contains("computed"), "{args:?}: {err}");
        assert_eq!(cold, reference(args), "{args:?}: the store changes nothing");
        let (warm, err) = run(cache.path(), args);
        assert!(
            err.contains(&format!("{part} for")) && err.contains("read from the store"),
            "{args:?}: reads {part}: {err}"
        );
        assert_eq!(warm, cold, "{args:?}: warm output is byte-identical");
    }
    // The texts come back under their own prompts.
    let cache = tempfile::tempdir().unwrap();
    run(cache.path(), &["--format", "text"]);
    let (json, err) = run(cache.path(), &["--json"]);
    assert!(err.contains("read from the store"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let texts: Vec<(&str, &str)> = v["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap(), p["text"].as_str().unwrap()))
        .collect();
    assert!(
        texts.contains(&(
            "system",
            "You are a careful assistant.\nAnswer in \"one\" line."
        )) && texts.contains(&(
            "tool-description",
            "Reads a demo file and returns its lines."
        )),
        "{texts:?}"
    );
    // --export writes the texts, read warm.
    let out = dir.path().join("export");
    run(cache.path(), &["--export", out.to_str().unwrap()]);
    let exported: String = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        exported.contains("You are a careful assistant."),
        "{exported}"
    );
}

/// A diff where one side's facts come from the store and the other's are
/// computed says what a diff of two computed sides says (a stored flag
/// default of `null` once read back differently and made every such gate
/// "changed").
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn a_diff_of_a_stored_and_a_fresh_build_is_a_fresh_diff() {
    let (a, b) = (
        fetch("2.1.220", "darwin-arm64"),
        fetch("2.1.220", "linux-x64"),
    );
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let diff = |extra: &[&str]| {
        let out = bin()
            .args(["diff", a, b, "--json", "--quiet"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "diff failed");
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_object_mut().unwrap().remove("timings_ms");
        serde_json::to_string_pretty(&v).unwrap()
    };
    let fresh = diff(&["--no-cache"]);
    let cache = tempfile::tempdir().unwrap();
    let (_, hit) = stored_run(cache.path(), None, "gates", a);
    assert!(!hit);
    let dir = cache.path().to_str().unwrap();

    assert_eq!(
        diff(&["--cache-dir", dir]),
        fresh,
        "one side stored, one computed"
    );
}

/// A way to damage the store's file.
type Spoil = Box<dyn Fn(&Path)>;

#[test]
fn damaged_or_foreign_store_files_are_rebuilt() {
    let target = fixture();
    let cache = tempfile::tempdir().unwrap();
    let store = cache.path().join("facts.sqlite");
    let (good, _) = stored_run(cache.path(), None, "workflows", &target);
    let damage: [(&str, Spoil); 4] = [
        (
            "truncated",
            Box::new(|p: &Path| {
                let len = std::fs::metadata(p).unwrap().len();
                let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
                f.set_len(len / 2).unwrap();
            }),
        ),
        (
            "garbage",
            Box::new(|p: &Path| std::fs::write(p, vec![0x5a; 64 * 1024]).unwrap()),
        ),
        (
            "garbage inside",
            Box::new(|p: &Path| {
                use std::io::{Seek, SeekFrom, Write};
                let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
                let len = f.metadata().unwrap().len();
                f.seek(SeekFrom::Start(len.min(4096))).unwrap();
                f.write_all(&vec![0xa5; 8192]).unwrap();
            }),
        ),
        (
            "empty",
            Box::new(|p: &Path| std::fs::write(p, b"").unwrap()),
        ),
    ];
    for (what, spoil) in &damage {
        // Fold the write-ahead log into the file first, so the damage hits
        // the facts themselves.
        stored_run(cache.path(), None, "workflows", &target);
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
        }
        spoil(&store);
        let (out, _) = stored_run(cache.path(), None, "workflows", &target);
        assert_eq!(out, good, "{what}: correct output");
        let (out, hit) = stored_run(cache.path(), None, "workflows", &target);
        assert_eq!(out, good, "{what}: correct output after the rebuild");
        assert!(hit, "{what}: the rebuilt store serves the next run");
    }
}

#[test]
fn a_foreign_sqlite_file_is_not_trusted() {
    let cache = tempfile::tempdir().unwrap();
    let store = cache.path().join("facts.sqlite");
    // Another program's database at the store's path, with a table of the
    // same name holding a row that would be a wrong answer.
    let c = rusqlite::Connection::open(&store).unwrap();
    c.execute_batch(
        "CREATE TABLE facts (build_id INTEGER, analysis_version TEXT, encoding TEXT, body BLOB, body_sha256 TEXT);
         CREATE TABLE builds (id INTEGER PRIMARY KEY, digest TEXT);",
    )
    .unwrap();
    drop(c);
    let (out, hit) = stored_run(cache.path(), None, "locate", &fixture());
    assert!(!hit);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v["functions"].as_array().is_some_and(|f| !f.is_empty()));
    let info = bin()
        .args(["cache", "info", "--json", "--cache-dir"])
        .arg(cache.path())
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["builds"], 1, "{info}");
    assert_eq!(info["facts_current"], 1, "{info}");
}

#[test]
fn two_processes_at_once() {
    let target = fixture();
    let cache = tempfile::tempdir().unwrap();
    let spawn = |cmd: &str| {
        command()
            .args([cmd, &target, "--json", "--quiet", "--cache-dir"])
            .arg(cache.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..4).map(|i| spawn(COMMANDS[i % 2])).collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for o in &outs {
        succeeded("two processes at once", o);
    }
    assert_eq!(outs[0].stdout, outs[2].stdout);
    assert_eq!(outs[1].stdout, outs[3].stdout);
    let (warm, hit) = stored_run(cache.path(), None, COMMANDS[0], &target);
    assert!(hit);
    assert_eq!(warm, outs[0].stdout);
}

#[test]
fn cache_info_and_clear() {
    let cache = tempfile::tempdir().unwrap();
    stored_run(cache.path(), None, "flags", &fixture());
    let info = |args: &[&str]| {
        let out = bin()
            .args(args)
            .args(["--json", "--cache-dir"])
            .arg(cache.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let i = info(&["cache", "info"]);
    assert_eq!(i["builds"], 1);
    assert_eq!(i["facts_current"], 1);
    assert!(i["bytes"].as_u64().unwrap() > 0);
    info(&["cache", "clear"]);
    assert!(!cache.path().join("facts.sqlite").exists());
    let (_, hit) = stored_run(cache.path(), None, "flags", &fixture());
    assert!(!hit, "a cleared store computes again");
}

/// A store the user names (`--store`) is never removed or overwritten, and
/// no store — named or the cache's — goes through a link or into a FIFO,
/// device or folder: each is a one-line error (a named store) or a note and
/// a run without the store (the cache's), and the file is left as it was.
#[test]
fn a_named_store_is_never_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = d.join("notes.txt");
    std::fs::write(&text, "my notes\n").unwrap();
    let theirs = d.join("theirs.db");
    let c = rusqlite::Connection::open(&theirs).unwrap();
    c.execute_batch("CREATE TABLE precious (x); INSERT INTO precious VALUES (42);")
        .unwrap();
    drop(c);
    let theirs_bytes = std::fs::read(&theirs).unwrap();
    let link = d.join("link.sqlite");
    std::os::unix::fs::symlink(&text, &link).unwrap();
    let fifo = d.join("fifo.sqlite");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let folder = d.join("folder.sqlite");
    std::fs::create_dir(&folder).unwrap();
    let other = d.join("other.txt");
    std::fs::write(&other, "other notes\n").unwrap();
    let hard = d.join("hard.sqlite");
    std::fs::hard_link(&other, &hard).unwrap();
    let cases: [(&Path, &str); 6] = [
        (&text, "not a cc-teardown facts store"),
        (&theirs, "not a cc-teardown facts store"),
        (&link, "a symlink"),
        (&fifo, "a FIFO"),
        (&folder, "a directory"),
        (&hard, "other hard links"),
    ];
    for (path, needle) in cases {
        for args in [
            vec!["history", "list"],
            vec!["cache", "clear"],
            vec!["cache", "info"],
            vec!["locate", &fixture()],
        ] {
            let out = bin()
                .args(&args)
                .arg("--store")
                .arg(path)
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            let err = one_line_error((&args, path), &out);
            assert!(err.contains(needle), "{args:?} {path:?}: {err}");
        }
    }
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "my notes\n");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "other notes\n");
    assert_eq!(std::fs::read(&theirs).unwrap(), theirs_bytes);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::symlink_metadata(&folder).unwrap().is_dir());
    for p in [&text, &theirs, &fifo] {
        for suffix in ["-wal", "-shm", "-journal"] {
            let side = format!("{}{suffix}", p.display());
            assert!(!Path::new(&side).exists(), "{side} was created");
        }
    }
    // The cache's own store behind a link: the command runs without it and
    // the link's target is untouched.
    let cache = d.join("cache");
    std::fs::create_dir(&cache).unwrap();
    std::os::unix::fs::symlink(&text, cache.join("facts.sqlite")).unwrap();
    let out = bin()
        .args(["locate", &fixture(), "--json", "--cache-dir"])
        .arg(&cache)
        .output()
        .unwrap();
    succeeded("locate with the cache's store behind a link", &out);
    assert!(stderr(&out).contains("a symlink"));
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "my notes\n");
    // A named store of ours is used, and `cache clear` removes it.
    let ours = d.join("ours.sqlite");
    let out = bin()
        .args(["locate", &fixture(), "--json", "--store"])
        .arg(&ours)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(ours.exists());
    let out = bin()
        .args(["cache", "clear", "--store"])
        .arg(&ours)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!ours.exists());
}
