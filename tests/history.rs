//! `history`: a scan over real published builds around the switch to
//! code-split builds, killed midway and resumed; what it records agrees
//! with the per-build commands run by hand, and `history changes` with
//! `diff`.
use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The range: two single bundles, then the first code-split build.
const RANGE: &str = "2.1.240..2.1.242";
const VERSIONS: [&str; 3] = ["2.1.240", "2.1.241", "2.1.242"];
const PLATFORM: &str = "darwin-arm64";

/// Run a command against the test's own store; JSON stdout and exit code.
fn run(store: &Path, args: &[&str]) -> (Value, i32) {
    json_and_code(bin().args(args).args(["--quiet", "--store"]).arg(store))
}

fn ok_releases(store: &Path) -> Vec<Value> {
    let (v, _) = run(store, &["history", "list"]);
    v["releases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "ok")
        .cloned()
        .collect()
}

/// `history export --format sqlite -o dest` of `store`, which must succeed.
fn export_sqlite(store: &Path, dest: &Path) {
    let (_, code) = run(
        store,
        &[
            "history",
            "export",
            "--format",
            "sqlite",
            "-o",
            dest.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0);
}

fn npm(v: &str) -> String {
    format!("npm:{v}/{PLATFORM}")
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn scan_killed_midway_resumes_and_agrees_with_the_builds() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("facts.sqlite");

    // 1. Start a scan and kill it (SIGKILL) once one release is recorded.
    let mut child = command()
        .args(["history", "scan", RANGE, "--platform", PLATFORM, "--keep"])
        .args(["--quiet", "--store"])
        .arg(&store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        assert!(
            Instant::now() < deadline,
            "the scan recorded nothing in 15 min"
        );
        if store.exists() && !ok_releases(&store).is_empty() {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the scan ended ({status}) before it could be interrupted");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let still_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    let before = ok_releases(&store).len();
    assert!(
        still_running && before < VERSIONS.len(),
        "killed midway: {before} of {} recorded",
        VERSIONS.len()
    );

    // 2. The same scan again finishes the rest and redoes nothing recorded.
    let (v, code) = run(
        &store,
        &["history", "scan", RANGE, "--platform", PLATFORM, "--keep"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["known"], before, "recorded releases are not redone: {v}");
    assert_eq!(v["analysed"], VERSIONS.len() - before, "{v}");
    assert_eq!(v["failed"], 0);
    // A third time is all known.
    let (v, _) = run(
        &store,
        &["history", "scan", RANGE, "--platform", PLATFORM, "--keep"],
    );
    assert_eq!(v["known"], VERSIONS.len(), "{v}");

    // 3. The code-split switch: as `info` says of each build.
    let releases = ok_releases(&store);
    let listed: Vec<&str> = releases
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    assert_eq!(listed, VERSIONS);
    for r in &releases {
        let ver = r["version"].as_str().unwrap();
        let (info, _) = run(&store, &["info", &npm(ver)]);
        assert_eq!(
            r["code_split"], info["bundle"]["code_split"],
            "{ver}: code-split as info says"
        );
        assert_eq!(r["modules"], info["bun"]["modules"], "{ver}: {info}");
    }
    let first_split = releases
        .iter()
        .find(|r| r["code_split"] == true)
        .map(|r| r["version"].as_str().unwrap());
    assert_eq!(first_split, Some("2.1.242"));

    // 4. A workflow's and a flag's story, against `workflows` and `flags`
    //    run on each build.
    let by_hand = |cmd: &str, name: &str| -> Vec<&'static str> {
        VERSIONS
            .iter()
            .copied()
            .filter(|ver| {
                let (v, _) = run(&store, &[cmd, &npm(ver)]);
                let list = &v[if cmd == "workflows" {
                    "workflows"
                } else {
                    "flags"
                }];
                list.as_array().unwrap().iter().any(|x| x["name"] == name)
            })
            .collect()
    };
    let story = |kind: &str, name: &str| run(&store, &["history", "show", kind, name]);
    let (s, code) = story("workflow", "deep-research");
    assert_eq!(code, 0, "{s}");
    let present = by_hand("workflows", "deep-research");
    assert_eq!(s["first_seen"], present[0], "{s}");
    assert_eq!(s["last_seen"], *present.last().unwrap(), "{s}");

    // A flag the newest build added (history's own answer), checked by hand.
    let (changes, code) = run(&store, &["history", "changes", "2.1.242"]);
    assert_eq!(code, 0, "{changes}");
    let added = changes["flags"]["added"][0]["name"]
        .as_str()
        .or_else(|| changes["flags"]["added"][0].as_str())
        .expect("2.1.242 adds flags")
        .to_string();
    let (s, _) = story("flag", &added);
    assert_eq!(by_hand("flags", &added), ["2.1.242"]);
    assert_eq!(s["first_seen"], "2.1.242", "{s}");
    assert_eq!(s["changes"][0]["what"], "added");
    // A flag of the hidden workflow's time, gone before this range: never
    // seen, as `flags` on each build says, and exit 1.
    let (s, code) = story("flag", "tengu_review_workflow_routing");
    assert!(by_hand("flags", "tengu_review_workflow_routing").is_empty());
    assert_eq!((code, &s["found"]), (1, &Value::Bool(false)));

    // 5. `history changes` = `diff` of the pair, section by section.
    let (diff, code) = run(
        &store,
        &[
            "diff",
            &npm("2.1.241"),
            &npm("2.1.242"),
            "--only",
            "workflows,flags,tools,env,commands",
        ],
    );
    assert!(code == 0 || code == 1, "{diff}");
    assert_eq!(changes["previous"], "2.1.241");
    for section in ["workflows", "flags", "tools", "env", "commands"] {
        assert_eq!(changes[section], diff[section], "section {section}");
    }
    // The scan stored every consecutive pair's answer; without it the
    // facts are compared again, to the same answer, which is stored anew.
    let stored = |store: &Path| -> i64 {
        let c = rusqlite::Connection::open(store).unwrap();
        c.query_row("SELECT count(*) FROM changes", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(stored(&store), VERSIONS.len() as i64 - 1);
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute("DELETE FROM changes", [])
        .unwrap();
    let (again, code) = run(&store, &["history", "changes", "2.1.242"]);
    assert_eq!(code, 0);
    assert_eq!(again, changes, "compared again: the same answer");
    assert_eq!(stored(&store), 1);
    let human = bin()
        .args(["history", "changes", "2.1.242", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(human.contains("2.1.242 against 2.1.241"), "{human}");
    assert!(human.contains("flags"), "{human}");

    // 6. Exports: the SQLite copy is a store with the same releases.
    let copy = dir.path().join("copy.sqlite");
    export_sqlite(&store, &copy);
    assert_eq!(ok_releases(&copy).len(), VERSIONS.len());
    let csv = bin()
        .args(["history", "export", "--format", "csv", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("version,platform,kind,name,value\n"));
    assert!(csv.contains(&format!("\"2.1.242\",\"{PLATFORM}\",\"flag\",\"{added}\",")));

    // 6b. A published copy nobody may write (a shared folder, a read-only
    //     mount) answers every query as the store it was exported from.
    //     The tests run as root on CI, whom permissions do not stop: the
    //     queries then run as `nobody`.
    let public = dir.path().join("public");
    std::fs::create_dir(&public).unwrap();
    let published = public.join("history.sqlite");
    export_sqlite(&store, &published);
    let queries: [&[&str]; 5] = [
        &["history", "list"],
        &["history", "search", &added],
        &["history", "show", "workflow", "deep-research"],
        &["history", "changes", "2.1.242"],
        &["history", "timeline"],
    ];
    let writable: Vec<(Value, i32)> = queries.iter().map(|q| run(&store, q)).collect();
    let read_only: Vec<(Value, i32)> = {
        use std::os::unix::fs::PermissionsExt;
        let as_root = unsafe { libc::geteuid() } == 0;
        // A copy of the binary a user without our home can run.
        let exe = public.join("cc-teardown");
        std::fs::copy(EXE, &exe).unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(&published, 0o444);
        mode(&public, 0o555);
        mode(dir.path(), 0o755);
        let as_reader = |program: &Path| {
            let mut c = command_of(program);
            if as_root {
                // nobody's ids (the standard library drops root's other
                // groups with them).
                use std::os::unix::process::CommandExt;
                c.uid(65534).gid(65534);
            }
            c
        };
        let probe = as_reader(Path::new("sh"))
            .args(["-c", "touch \"$0/probe\""])
            .arg(&public)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!probe.success(), "the reader cannot write the folder");
        let answers = queries
            .iter()
            .map(|q| {
                let mut c = as_reader(&exe);
                let out = c
                    .args(*q)
                    .args(["--json", "--quiet", "--store"])
                    .arg(&published)
                    .env("HOME", &public)
                    .env_remove("XDG_CACHE_HOME")
                    .env_remove("CC_TEARDOWN_CACHE")
                    .output()
                    .expect("the binary runs");
                let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                    panic!(
                        "{q:?} on the read-only copy: {e}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    )
                });
                (v, out.status.code().unwrap_or(-1))
            })
            .collect();
        mode(&public, 0o755);
        answers
    };
    for ((q, w), r) in queries.iter().zip(&writable).zip(&read_only) {
        assert_eq!(
            (w.1, r.1),
            (0, 0),
            "{q:?} on the read-only copy: {}",
            r.0["error"]
        );
        // The answers are the same but for whose store it is: the reader
        // has not the key of the machine that made it, so its answers say
        // they are the store's author's.
        assert_eq!(r.0["store"]["made_here"], false, "{q:?}: labelled");
        let (mut w, mut r) = (w.0.clone(), r.0.clone());
        for v in [&mut w, &mut r] {
            v.as_object_mut().unwrap().remove("store");
        }
        assert!(w == r, "{q:?} answers otherwise on the read-only copy");
    }
    assert!(
        !public.join("history.sqlite-wal").exists(),
        "nothing was written beside it"
    );

    // 7. The timeline page in headless Chromium: self-contained, summary
    //    first, six charts drawn, the code-split switch marked.
    let page = dir.path().join("timeline.html");
    // (Not through `run`: with --json the timeline is data, not a page.)
    let out = bin()
        .args(["history", "timeline", "--quiet", "-o"])
        .arg(&page)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    succeeded("history timeline -o", &out);
    let html = std::fs::read_to_string(&page).unwrap();
    let (dom, shot) = render(&page, &dir.path().join("timeline.png"));
    crate::reports::check_page(&html, &dom, shot, 6);
    assert!(
        dom.contains("switch to code-split builds"),
        "the event is listed"
    );
    assert!(
        dom.matches("stroke-dasharray").count() >= 6,
        "the event is marked on every chart"
    );

    // 8. The timeline, `list` and `search` read per-build summaries kept
    //    beside the items; a store written before they existed gets them
    //    on its first query, and every answer is the same.
    let queries: [&[&str]; 4] = [
        &["history", "timeline"],
        &["history", "list"],
        &["history", "search", &added],
        &["history", "search", "tengu_"],
    ];
    let before: Vec<Value> = queries.iter().map(|q| run(&store, q).0).collect();
    assert!(
        before[2]["hits"].as_array().is_some_and(|h| !h.is_empty()),
        "{}",
        before[2]
    );
    let events = before[0]["events"].as_array().expect("timeline events");
    assert!(!events.is_empty(), "{}", before[0]);
    {
        let c = rusqlite::Connection::open(&store).unwrap();
        c.execute_batch("DELETE FROM build_summary; DELETE FROM names; DELETE FROM text_items;")
            .unwrap();
    }
    let after: Vec<Value> = queries.iter().map(|q| run(&store, q).0).collect();
    assert_eq!(before, after);
}

#[test]
fn bad_history_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("facts.sqlite");
    for (args, needle) in [
        (vec!["history", "show", "flag", "x"], "no release scanned"),
        (vec!["history", "changes", "2.1.220"], "no release scanned"),
        (vec!["history", "export", "--format", "sqlite"], "-o FILE"),
        (vec!["history", "show", "planet", "x"], "invalid value"),
    ] {
        let out = bin()
            .args(&args)
            .arg("--store")
            .arg(&store)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{args:?}: {:?}",
            out.status
        );
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A file that is not a store: its JSON error is of kind `store`.
    let foreign = dir.path().join("notes.sqlite");
    std::fs::write(&foreign, "not a database, just notes\n").unwrap();
    let (v, code) = json_and_code(bin().args(["history", "list", "--store"]).arg(&foreign));
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["error"]["kind"], "store", "{v}");
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "not a database, just notes\n",
        "left as it is"
    );
    // --no-cache and history cannot go together.
    failed("--no-cache", &output(&["history", "list", "--no-cache"]));
}

/// Every history answer is a view: each format, and `-o FILE`, from the
/// one way out (an empty store answers `list` without the network).
#[test]
fn history_answers_come_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("facts.sqlite");
    let cache = dir.path().join("cache");
    let run = |args: &[&str]| {
        bin()
            .args(args)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--store")
            .arg(&store)
            .env("CC_TEARDOWN_CACHE", &cache)
            .output()
            .unwrap()
    };
    for (format, needle) in [
        (
            "text",
            "no release scanned yet (cc-teardown history scan RANGE)\n",
        ),
        ("md", "# Releases scanned\n"),
        ("html", "<!DOCTYPE html>"),
        ("json", "\"releases\": []"),
    ] {
        let out = run(&["history", "list", "--format", format]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{format}");
        assert!(text.contains(needle), "{format}: {text}");
    }
    let file = dir.path().join("list.md");
    let out = run(&[
        "history",
        "list",
        "--format",
        "md",
        "--quiet",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "the answer went to the file");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.starts_with("# Releases scanned\n"), "{written}");
    // A question the store cannot answer is one line, whatever the format.
    let out = run(&["history", "timeline", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no release scanned"), "{err}");
}
