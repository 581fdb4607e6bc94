//! Document builders snapshot-tested straight from view values (no build,
//! no binary): each view's terminal text, Markdown and HTML, so a change to
//! a builder or a renderer shows as a reviewed diff.

use super::doc::Term;
use super::emit::View;
use super::integrity::VerifyView;
use super::local::{CacheCleared, FetchView, InstallsView};
use super::modules::{HashView, LsView, ModuleHash, ModuleRow};
use crate::source::installs::{Install, InstallKind, InstallReport, Skipped};

/// The three human renderings of a view, one after another.
fn rendered(v: &impl View) -> String {
    let term = Term {
        color: false,
        width: Some(80),
    };
    let text = v.terminal(&term).unwrap_or_else(|| v.doc().terminal(&term));
    format!(
        "--- text\n{text}--- md\n{}--- html body\n{}",
        v.doc().markdown(),
        body(&v.doc().html())
    )
}

/// The page between `<body>` and `</body>` (the head is the same CSS for
/// every view, snapshotted once in the renderer's own tests).
fn body(html: &str) -> &str {
    let from = html.find("<body>").map_or(0, |i| i + "<body>".len());
    let to = html.rfind("</body>").unwrap_or(html.len());
    &html[from..to]
}

fn row(index: usize, name: &str, bytes: u64, entry: bool) -> ModuleRow {
    ModuleRow {
        index,
        name: format!("/$bunfs/root/{name}"),
        path: name.to_string(),
        entry,
        bytes,
        loader: "js",
        encoding: "utf8",
        format: "esm",
        side: None,
        bytecode_bytes: 0,
        bytecode_shared: false,
        sourcemap_bytes: if entry { 1234 } else { 0 },
        module_info_bytes: 0,
        bytecode_origin_path_bytes: 0,
        compressed: !entry,
        sha256: format!("{:064x}", index + 1),
    }
}

#[test]
fn ls() {
    let v = LsView {
        target: "fixture.js".into(),
        entry: "/$bunfs/root/cli.js".into(),
        modules: vec![
            row(0, "cli.js", 21_635_672, true),
            row(1, "a|b.node", 12, false),
        ],
        full_hash: false,
        bytecode_region: Some((4096, 2)),
    };
    insta::assert_snapshot!(rendered(&v));
}

#[test]
fn hash() {
    let m = ModuleHash {
        name: "/$bunfs/root/cli.js".into(),
        bytes: 3902,
        sha256: "ab".repeat(32),
    };
    let v = HashView {
        target: "fixture.js".into(),
        file: "cd".repeat(32),
        payload: "ef".repeat(32),
        bundle: ModuleHash {
            name: m.name.clone(),
            bytes: m.bytes,
            sha256: m.sha256.clone(),
        },
        bundle_digest: "01".repeat(32),
        bundle_digest_modules: 1,
        modules: vec![m],
    };
    insta::assert_snapshot!(rendered(&v));
}

#[test]
fn verify_mismatch() {
    let v = VerifyView {
        target: "fixture.js".into(),
        what: "bundle cli.js".into(),
        expected: "00".repeat(32),
        actual: "ff".repeat(32),
        ok: false,
    };
    insta::assert_snapshot!(rendered(&v));
}

#[test]
fn installs_with_a_skipped_entry() {
    let v = InstallsView(InstallReport {
        root: "/".into(),
        installs: vec![Install {
            path: "/usr/local/bin/claude".into(),
            resolved: "/opt/claude/2.1.220/claude".into(),
            kind: InstallKind::Native,
            version: Some("2.1.220".into()),
            bundle_sha256: Some("12".repeat(32)),
            selected: true,
            note: None,
        }],
        selected: Some("/usr/local/bin/claude".into()),
        skipped: vec![Skipped {
            path: "/home/u/.local/bin/claude".into(),
            resolved: None,
            reason: "a FIFO".into(),
        }],
        warnings: vec!["PATH holds a relative entry".into()],
    });
    insta::assert_snapshot!(rendered(&v));
}

#[test]
fn fetch_and_cache() {
    let f = FetchView {
        package: "@scope/pkg-darwin-arm64".into(),
        version: "2.1.220".into(),
        platform: "darwin-arm64".into(),
        path: "/cache/builds/claude".into(),
        integrity: "sha512-AAAA".into(),
        cache_hit: true,
    };
    let c = CacheCleared {
        cleared: "/cache/facts.sqlite".into(),
    };
    insta::assert_snapshot!(format!("{}\n{}", rendered(&f), rendered(&c)));
}
