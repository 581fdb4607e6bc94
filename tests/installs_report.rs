//! `installs` on fake file-system trees, and the teardown `report` in
//! Markdown, JSON and HTML (rendered by a real headless Chromium).

use crate::common;

use common::*;
use std::path::Path;

fn link_or_copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

#[cfg(unix)]
fn symlink(target: &str, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, at).unwrap();
}

fn installs(root: &Path, home: &str, path: &str) -> serde_json::Value {
    let out = bin()
        .args(["installs", "--json", "--root", root.to_str().unwrap()])
        .env("HOME", home)
        .env("PATH", path)
        .env_remove("CLAUDE_CONFIG_DIR")
        // A hang is killed, and fails the status check below.
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[cfg(unix)]
#[test]
fn wrappers_placeholders_and_path_order_in_a_fake_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let build = |v: &str| {
        elf_with_section(&with_header(
            &build_payload(
                &[Spec::js(
                    "/$bunfs/root/cli",
                    format!("// Version: {v}\nexport{{}};").as_bytes(),
                )],
                0,
            ),
            8,
        ))
    };
    // A Nix-style wrapper script in /usr/bin that execs the real program.
    std::fs::create_dir_all(root.join("nix/store/abc-claude/bin")).unwrap();
    std::fs::write(
        root.join("nix/store/abc-claude/bin/.claude-wrapped"),
        build("7.7.7"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::write(
        root.join("usr/bin/claude"),
        "#!/bin/sh\nexport X=1\nexec -a \"$0\" \"/nix/store/abc-claude/bin/.claude-wrapped\" \"$@\"\n",
    )
    .unwrap();
    // An npm global install whose platform package is missing.
    let pkg = root.join("usr/local/lib/node_modules/@anthropic-ai/claude-code");
    std::fs::create_dir_all(pkg.join("bin")).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"@anthropic-ai/claude-code","version":"8.8.8"}"#,
    )
    .unwrap();
    std::fs::write(pkg.join("bin/claude.exe"), "placeholder").unwrap();
    symlink(
        "../lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        &root.join("usr/local/bin/claude"),
    );

    let v = installs(root, "/home/nobody", "/usr/bin:/usr/local/bin");
    let list = v["installs"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{v}");
    assert_eq!(list[0]["path"], "/usr/bin/claude");
    assert_eq!(
        list[0]["resolved"],
        "/nix/store/abc-claude/bin/.claude-wrapped"
    );
    assert_eq!(list[0]["kind"], "nix");
    assert_eq!(list[0]["version"], "7.7.7", "read from the bundle");
    assert_eq!(list[0]["selected"], true);
    assert_eq!(list[1]["kind"], "npm");
    assert_eq!(list[1]["version"], "8.8.8");
    assert!(list[1]["note"].as_str().unwrap().contains("placeholder"));
    assert!(v["warnings"][0].as_str().unwrap().contains("2 versions"));
    // PATH order decides what is selected.
    let v = installs(root, "/home/nobody", "/usr/local/bin:/usr/bin");
    assert_eq!(v["installs"][0]["kind"], "npm");
    assert_eq!(v["installs"][0]["selected"], true);
}

#[cfg(unix)]
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn native_installs_of_2_1_220_and_2_1_260() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let versions = root.join("home/u/.local/share/claude/versions");
    link_or_copy(&fetch("2.1.220", "darwin-arm64"), &versions.join("2.1.220"));
    link_or_copy(&fetch("2.1.260", "darwin-arm64"), &versions.join("2.1.260"));
    symlink(
        "/home/u/.local/share/claude/versions/2.1.220",
        &root.join("home/u/.local/bin/claude"),
    );
    let v = installs(root, "/home/u", "/home/u/.local/bin:/usr/bin");
    let list = v["installs"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{v}");
    let i220 = list.iter().find(|i| i["version"] == "2.1.220").unwrap();
    let i260 = list.iter().find(|i| i["version"] == "2.1.260").unwrap();
    assert_eq!(i220["selected"], true);
    assert_eq!(i220["path"], "/home/u/.local/bin/claude");
    assert_eq!(
        i220["resolved"],
        "/home/u/.local/share/claude/versions/2.1.220"
    );
    assert_eq!(i220["kind"], "native");
    assert_eq!(
        i220["bundle_sha256"],
        "d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120"
    );
    assert_eq!(i260["selected"], false);
    let warning = v["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("2.1.220")
            && warning.contains("2.1.260")
            && warning.contains("runs 2.1.220"),
        "{warning}"
    );
    // The human output warns too.
    let out = bin()
        .args(["installs", "--root", root.to_str().unwrap()])
        .env("HOME", "/home/u")
        .env("PATH", "/home/u/.local/bin")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("warning: 2 versions are installed"));
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn markdown_report_of_2_1_220() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("claude.json");
    std::fs::write(&cfg, r#"{"cachedGrowthBookFeatures": {"tengu_workflows_enabled": true, "tengu_review_workflow_routing": false}}"#).unwrap();
    let out = bin()
        .args([
            "report",
            "npm:2.1.220/darwin-arm64",
            "--format",
            "md",
            "--config",
            cfg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120"));
    for (role, lines) in [
        // A one-line function's raw lines are one number.
        ("workflow-registrar", "| 13604 |"),
        ("workflow-lookup", "| 13992 |"),
        ("workflow-builder (code-review)", "15832–16186"),
        ("workflows-init", "| 16614 |"),
        ("review-instructions", "23712–23720"),
        ("review-routing-gate", "| 23725 |"),
    ] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {role} |")))
            .unwrap_or_else(|| panic!("{role} row"));
        assert!(row.contains(lines), "{row}");
    }
    assert!(md.contains("## Workflow: code-review") && md.contains("## Workflow: deep-research"));
    assert!(md.contains("| high | 3 | 1 | 48 | none | 10 |"));
    assert!(md.contains("| xhigh | 5 | 1 | 80 | 8 | 15 |"));
    assert!(md.contains("| max | 5 | 1 | 80 | 8 | 15 |"));
    let gate = md
        .split("## Review-routing gate")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for n in 1..=6 {
        assert!(
            gate.contains(&format!("\n{n}. ")),
            "condition {n} in {gate}"
        );
    }
    assert!(!gate.contains("\n7. "));
    assert!(gate.contains("blocked by tengu_review_workflow_routing = false"));
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let out = bin()
        .args([
            "report",
            single.to_str().unwrap(),
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
        ])
        // No config (a missing --config is an error): the defaults decide.
        .env("CLAUDE_CONFIG_DIR", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        !text.contains("http://") && !text.contains("https://"),
        "self-contained"
    );
    // One script, the table filter, allowed by its hash and nothing else.
    assert_eq!(text.matches("<script").count(), 1);
    assert!(
        text.contains(
            "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-"
        )
    );
    let (dom, _) = render(&html, &dir.path().join("report.png"));
    assert!(
        dom.contains("<table>"),
        "the page rendered: {}",
        dom.get(..500).unwrap_or(&dom)
    );
    for fact in [
        "Located functions",
        "workflow-registrar",
        "Workflow: code-review",
        "Review-routing gate",
        "tengu_fixture_routing",
        "blocked by tengu_fixture_routing = false",
        "Appendix: code-review script",
    ] {
        assert!(dom.contains(fact), "{fact} on the page");
    }
}

#[cfg(unix)]
#[test]
fn installed_targets_use_the_selected_installation() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let versions = home.join(".local/share/claude/versions");
    std::fs::create_dir_all(&versions).unwrap();
    for v in ["5.0.1", "5.0.2"] {
        let payload = build_payload(
            &[Spec::js(
                "/$bunfs/root/cli",
                format!("// Version: {v}\nexport{{}};").as_bytes(),
            )],
            0,
        );
        std::fs::write(
            versions.join(v),
            elf_with_section(&with_header(&payload, 8)),
        )
        .unwrap();
    }
    symlink(
        versions.join("5.0.1").to_str().unwrap(),
        &home.join(".local/bin/claude"),
    );
    let run = |target: &str| {
        let out = bin()
            .args(["info", target, "--json"])
            .env("HOME", &home)
            .env("PATH", home.join(".local/bin"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(run("installed")["version"], "5.0.1");
    assert_eq!(run("installed:5.0.2")["version"], "5.0.2");
    let out = bin()
        .args(["info", "installed:9.9.9"])
        .env("HOME", &home)
        .env("PATH", home.join(".local/bin"))
        .output()
        .unwrap();
    let err = failed("installed:9.9.9", &out);
    assert!(err.contains("no installation of version 9.9.9"), "{err}");
}

#[cfg(unix)]
/// A tiny build stating `version`.
fn tiny_build(version: &str) -> Vec<u8> {
    elf_with_section(&with_header(
        &build_payload(
            &[Spec::js(
                "/$bunfs/root/cli",
                format!("// Version: {version}\nexport{{}};").as_bytes(),
            )],
            0,
        ),
        8,
    ))
}

fn skipped(v: &serde_json::Value) -> Vec<(String, String)> {
    v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_skipped_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // On this machine (no --root): ~/.local/bin/claude → /dev/zero.
    symlink("/dev/zero", &home.join(".local/bin/claude"));
    let out = bin()
        .args(["installs", "--json"])
        .env("HOME", &home)
        .env("PATH", home.join(".local/bin"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let home_s = home.to_str().unwrap();
    assert!(
        skipped(&v)
            .iter()
            .any(|(p, r)| p == &format!("{home_s}/.local/bin/claude")
                && r.contains("character device")),
        "{v}"
    );
    assert!(
        !v["installs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["path"].as_str().unwrap().starts_with(home_s)),
        "{v}"
    );
    // installed names nothing then, in one line.
    let out = bin()
        .args(["info", "installed"])
        .env("HOME", &home)
        .env("PATH", home.join(".local/bin"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    one_line_error("installed, when nothing is installed", &out);

    // In a tree: FIFOs on PATH and in the native versions folder.
    let root = dir.path().join("root");
    mkfifo(&root.join("usr/bin/claude"));
    mkfifo(&root.join("home/u/.local/share/claude/versions/1.0.0"));
    std::fs::write(
        root.join("home/u/.local/share/claude/versions/1.0.1"),
        tiny_build("1.0.1"),
    )
    .unwrap();
    let v = installs(&root, "/home/u", "/usr/bin");
    let s = skipped(&v);
    assert!(
        s.iter()
            .any(|(p, r)| p == "/usr/bin/claude" && r.contains("FIFO")),
        "{v}"
    );
    assert!(
        s.iter()
            .any(|(p, r)| p.ends_with("versions/1.0.0") && r.contains("FIFO")),
        "{v}"
    );
    let list = v["installs"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{v}");
    assert_eq!(list[0]["version"], "1.0.1");
    // The text output says what was skipped.
    let out = bin()
        .args(["installs", "--root", root.to_str().unwrap()])
        .env("HOME", "/home/u")
        .env("PATH", "/usr/bin")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("skipped: /usr/bin/claude: a FIFO"));
}

#[cfg(unix)]
#[test]
fn resolution_never_leaves_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a/b/root");
    std::fs::create_dir_all(&root).unwrap();
    // Builds outside the root that no entry may reach.
    std::fs::write(dir.path().join("outside"), tiny_build("6.6.6")).unwrap();
    std::fs::create_dir_all(dir.path().join("a/outside-bin")).unwrap();
    std::fs::write(dir.path().join("a/outside-bin/claude"), tiny_build("6.6.6")).unwrap();
    // Relative and absolute links that climb out, and a wrapper that execs
    // a path with `..` above the root.
    symlink("../../../../../outside", &root.join("p1/claude"));
    symlink("/../../../outside", &root.join("p2/claude"));
    std::fs::create_dir_all(root.join("p3")).unwrap();
    std::fs::write(
        root.join("p3/claude"),
        "#!/bin/sh\nexec /../../../../outside \"$@\"\n",
    )
    .unwrap();
    // A folder link that climbs out, used in the middle of a PATH entry.
    symlink("../..", &root.join("up"));
    let v = installs(&root, "/home/nobody", "/p1:/p2:/p3:/up/outside-bin");
    assert!(
        !v.to_string().contains("6.6.6"),
        "read outside the root: {v}"
    );
    // The climbing links land on /outside inside the tree, which is missing.
    let s = skipped(&v);
    assert!(s.iter().any(|(p, _)| p == "/p1/claude"), "{v}");
    assert!(s.iter().any(|(p, _)| p == "/p2/claude"), "{v}");
    // The wrapper stays the program (its exec target is missing).
    assert_eq!(v["installs"][0]["resolved"], "/p3/claude", "{v}");
    // Put a build at /outside inside the tree: every route reaches that one.
    std::fs::write(root.join("outside"), tiny_build("1.2.3")).unwrap();
    let v = installs(&root, "/home/nobody", "/p1:/p2:/p3");
    let list = v["installs"].as_array().unwrap();
    assert_eq!(list.len(), 1, "one program, reached three ways: {v}");
    assert_eq!(list[0]["resolved"], "/outside");
    assert_eq!(list[0]["version"], "1.2.3");
    assert!(!v.to_string().contains("6.6.6"), "{v}");
}

#[cfg(unix)]
#[test]
fn link_loops_long_chains_and_big_folders_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    symlink("b", &root.join("loop/a"));
    symlink("a", &root.join("loop/b"));
    symlink("a", &root.join("loop/claude"));
    symlink("claude", &root.join("self/claude"));
    std::fs::create_dir_all(root.join("chain")).unwrap();
    for i in 0..100 {
        symlink(&format!("l{}", i + 1), &root.join(format!("chain/l{i}")));
    }
    std::fs::write(root.join("chain/l100"), tiny_build("2.0.0")).unwrap();
    symlink("l0", &root.join("chain/claude"));
    // More versions than one folder listing takes.
    let versions = root.join("home/u/.local/share/claude/versions");
    std::fs::create_dir_all(&versions).unwrap();
    for i in 0..300 {
        std::fs::write(versions.join(format!("0.0.{i}")), "").unwrap();
    }
    let t = std::time::Instant::now();
    let v = installs(root, "/home/u", "/loop:/self:/chain");
    assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
    let s = skipped(&v);
    for p in ["/loop/claude", "/self/claude", "/chain/claude"] {
        assert!(
            s.iter().any(|(q, r)| q == p && r.contains("links")),
            "{p}: {v}"
        );
    }
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("more than 256 entries")),
        "{v}"
    );
    assert!(v["installs"].as_array().unwrap().len() <= 256);
}

#[test]
fn a_missing_root_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = bin()
        .args(["installs", "--root", missing.to_str().unwrap()])
        .output()
        .unwrap();
    let err = one_line_error("a missing --root", &out);
    assert!(err.starts_with("error: --root"), "{err}");
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = bin()
        .args(["installs", "--root", file.to_str().unwrap()])
        .output()
        .unwrap();
    let err = failed("a file as --root", &out);
    assert!(err.contains("not a directory"), "{err}");
}
