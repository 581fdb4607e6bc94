//! Hostile and broken input: one clear line on stderr, a non-zero exit, no
//! panic, and nothing written outside the output folder.

use crate::common;

use cc_teardown::bun::{Budget, BunGraph};
use cc_teardown::container::{self, ContainerOptions};
use common::*;
use proptest::prelude::*;
use std::path::Path;

/// The `kind` of the JSON error `args --json` reports.
fn json_error_kind(args: &[&str]) -> String {
    let (v, code) = json_and_code(bin().args(args));
    assert_eq!(code, 2, "{args:?}: {v}");
    v["error"]["kind"].as_str().unwrap().to_string()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

fn good_payload() -> Vec<u8> {
    build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"export const a = 1;\n"),
            Spec::file("/$bunfs/root/note.txt", b"hello"),
        ],
        0,
    )
}

#[test]
fn synthetic_payload_round_trips() {
    // The builder the other tests mutate must itself be right.
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "ok.elf",
        &elf_with_section(&with_header(&good_payload(), 8)),
    );
    let v = json(&["info", &f]);
    assert_eq!(v["container"]["format"], "elf");
    assert_eq!(v["bun"]["modules"], 2);
    assert_eq!(v["bun"]["entry"], "/$bunfs/root/cli");
}

#[test]
fn not_an_executable() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "x.bin", &[0x00, 0x01, 0x02, 0xff].repeat(100));
    refused(&["info", &f], "not an executable");
    let f = write(dir.path(), "empty", b"");
    refused(&["info", &f], "not an executable");
    refused(&["info", "/definitely/not/here"], "no such file");
    refused(&["info", dir.path().to_str().unwrap()], "directory");
}

#[test]
fn executable_without_payload() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "plain", &plain_elf());
    refused(&["info", &f], "no Bun payload");
    let f = write(
        dir.path(),
        "plain.exe",
        &pe_with_section(b"not a bun section", false),
    );
    refused(&["info", &f], "disagrees");
}

#[test]
fn truncated_files() {
    let dir = tempfile::tempdir().unwrap();
    let full = elf_with_section(&with_header(&good_payload(), 8));
    for cut in [16, 64, full.len() / 2, full.len() - 40] {
        let f = write(dir.path(), &format!("cut{cut}"), &full[..cut]);
        one_line_error(format!("cut at {cut}"), &output(&["info", &f]));
    }
}

#[test]
fn length_header_that_disagrees() {
    let dir = tempfile::tempdir().unwrap();
    let p = good_payload();
    let mut section = with_header(&p, 8);
    section[..8].copy_from_slice(&((p.len() as u64) + 4096).to_le_bytes());
    // The trailer is still inside the section, so the scan may find it; a
    // header of garbage must never be believed, though.
    let file = elf_with_section(&section);
    let loc = container::locate(&file, &ContainerOptions::default()).unwrap();
    assert_eq!(
        loc.info.header_width, None,
        "a disagreeing header is not accepted"
    );
    assert_eq!(loc.payload, &p[..]);
    // Without a trailer anywhere, it is an error.
    let mut junk = (1u64 << 40).to_le_bytes().to_vec();
    junk.extend_from_slice(&[0xAB; 200]);
    let f = write(dir.path(), "junk.elf", &elf_with_section(&junk));
    refused(&["info", &f], "disagrees");
}

/// Patch a u32 in the first module record of a synthetic payload.
fn patched(field_offset: usize, value: u32) -> Vec<u8> {
    let mut p = good_payload();
    let n = p.len();
    let table =
        u32::from_le_bytes(p[n - 16 - 32 + 8..n - 16 - 32 + 12].try_into().unwrap()) as usize;
    p[table + field_offset..table + field_offset + 4].copy_from_slice(&value.to_le_bytes());
    p
}

#[test]
fn pointers_out_of_bounds_or_into_tables() {
    let dir = tempfile::tempdir().unwrap();
    // contents length huge
    let f = write(dir.path(), "oob", &patched(12, u32::MAX));
    refused(&["info", &f], "no known module record layout");
    // name pointing into the module table
    let p = good_payload();
    let n = p.len();
    let table = u32::from_le_bytes(p[n - 40..n - 36].try_into().unwrap());
    let f = write(dir.path(), "into-table", &patched(8, table));
    refused(&["info", &f], "module table");
    // module table itself out of bounds
    let mut q = good_payload();
    q[n - 48 + 12..n - 48 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
    let f = write(dir.path(), "table-oob", &q);
    refused(&["info", &f], "outside the payload");
    // entry point out of range
    let mut q = good_payload();
    q[n - 48 + 16..n - 48 + 20].copy_from_slice(&7u32.to_le_bytes());
    let f = write(dir.path(), "entry", &q);
    refused(&["info", &f], "entry point id 7");
}

#[test]
fn absurd_module_counts_are_refused_before_allocating() {
    // A table that claims ~4 billion bytes of records in a 200-byte payload.
    let mut p = vec![0u8; 100];
    let byte_count = p.len() as u64;
    p.extend_from_slice(&byte_count.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p.extend_from_slice(&(u32::MAX - 3).to_le_bytes());
    p.extend_from_slice(&[0u8; 16]);
    p.extend_from_slice(TRAILER);
    assert!(BunGraph::parse(&p).is_err());
    // And one that fits in the payload but exceeds the module cap.
    let records = 300_000usize * 28;
    let mut p = vec![0u8; records];
    let byte_count = p.len() as u64;
    p.extend_from_slice(&byte_count.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p.extend_from_slice(&(records as u32).to_le_bytes());
    p.extend_from_slice(&[0u8; 16]);
    p.extend_from_slice(TRAILER);
    let err = BunGraph::parse(&p).err().unwrap().to_string();
    assert!(err.contains("more than"), "{err}");
}

#[test]
fn zstd_bomb_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = zstd::encode_all(&vec![0u8; 50 << 20][..], 19).unwrap();
    assert!(bomb.len() < 10_000);
    let p = build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"1"),
            Spec::file("/$bunfs/root/bomb.txt.zst", &bomb),
        ],
        0,
    );
    let f = write(dir.path(), "bomb", &p);
    let out = dir.path().join("out");
    refused(
        &[
            "extract",
            &f,
            "-o",
            out.to_str().unwrap(),
            "--max-decoded",
            "1000000",
        ],
        "--max-decoded",
    );
    // Within a generous cap it decodes fine.
    bin()
        .args([
            "extract",
            &f,
            "-o",
            out.to_str().unwrap(),
            "--max-decoded",
            "100000000",
        ])
        .assert()
        .success();
    assert_eq!(
        std::fs::metadata(out.join("bomb.txt.zst")).unwrap().len(),
        50 << 20
    );
}

#[test]
fn names_that_escape_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    for (i, evil) in [
        "/$bunfs/root/../../escape.js",
        "/$bunfs/root/a/../../escape.js",
        "/$bunfs/root//etc/passwd",
        "/$bunfs/root/C:/windows/escape.js",
        "B:/~BUN/root/..\\..\\escape.js",
        "/$bunfs/root/./x.js",
    ]
    .iter()
    .enumerate()
    {
        let p = build_payload(
            &[Spec::js("/$bunfs/root/cli", b"1"), Spec::js(evil, b"evil")],
            0,
        );
        let f = write(dir.path(), &format!("evil{i}"), &p);
        let out = dir.path().join(format!("out{i}/deep"));
        refused(&["extract", &f, "-o", out.to_str().unwrap()], "escape");
        assert!(!dir.path().join("escape.js").exists());
        assert!(!out.exists(), "nothing is written when a name is refused");
    }
}

#[cfg(unix)]
#[test]
fn symlinks_already_in_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("file.js"), out.join("cli")).unwrap();
    let p = build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"1"),
            Spec::js("/$bunfs/root/sub/x.js", b"2"),
        ],
        0,
    );
    let f = write(dir.path(), "p", &p);
    refused(&["extract", &f, "-o", out.to_str().unwrap()], "symlink");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
}

fn mutate(base: &[u8], edits: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    let mut v = base.to_vec();
    for &(at, b) in edits {
        let i = at % v.len();
        v[i] = b;
    }
    if let Some(c) = cut {
        v.truncate(c % (v.len() + 1));
    }
    v
}

/// Whatever the parser accepts must only ever point inside the input.
fn check_invariants(input: &[u8]) {
    let range = input.as_ptr_range();
    let inside = |s: &[u8]| {
        s.is_empty() || (range.contains(&s.as_ptr()) && s.as_ptr_range().end <= range.end)
    };
    if let Ok(loc) = container::locate(input, &ContainerOptions::default()) {
        assert!(inside(loc.payload));
        if let Ok(g) = BunGraph::parse(loc.payload) {
            assert!(g.entry < g.modules.len());
            for m in &g.modules {
                assert!(inside(m.contents) && inside(m.sourcemap) && inside(m.name.as_bytes()));
                assert!(inside(g.bytecode_of(m)));
                let _ = g.decoded(m, &Budget::new(1 << 16));
                if let Ok(rel) = m.relative_path() {
                    assert!(
                        rel.components()
                            .all(|c| matches!(c, std::path::Component::Normal(_)))
                    );
                }
            }
            let _ = cc_teardown::bun::digest::bundle_digest(&g, &Budget::new(1 << 16));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_payloads_never_panic(
        which in 0usize..64,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..12),
        cut in proptest::option::of(any::<usize>()),
        wrap in 0u8..3,
    ) {
        let fixtures = real_bun_fixtures();
        let (_, payload, exp) = &fixtures[which % fixtures.len()];
        let base = match wrap {
            0 => payload.clone(),
            1 => rewrap(payload, exp),
            _ => elf_with_section(&with_header(payload, 8)),
        };
        let input = mutate(&base, &edits, cut);
        check_invariants(&input);
    }

    #[test]
    fn mutated_tails_never_panic(
        which in 0usize..64,
        edits in proptest::collection::vec((0usize..120, any::<u8>()), 1..8),
    ) {
        // Concentrate on Offsets and the module table at the end.
        let fixtures = real_bun_fixtures();
        let (_, payload, _) = &fixtures[which % fixtures.len()];
        let mut v = payload.clone();
        let n = v.len();
        for (back, b) in edits {
            if back < n {
                v[n - 1 - back] = b;
            }
        }
        check_invariants(&v);
    }
}

/// A payload's module table and record size (the builder's 52-byte layout).
fn record_at(payload: &[u8], i: usize) -> usize {
    let n = payload.len();
    let offsets = n - 16 - 32;
    let table = u32::from_le_bytes(payload[offsets + 8..offsets + 12].try_into().unwrap());
    table as usize + i * 52
}

/// Point record `to`'s pointer field `field` (0 name, 1 contents, 3
/// bytecode) at record `from`'s contents.
fn repoint(payload: &mut [u8], from: usize, to: usize, field: usize) {
    let src = record_at(payload, from) + 8;
    let ptr: [u8; 8] = payload[src..src + 8].try_into().unwrap();
    let dst = record_at(payload, to) + field * 8;
    payload[dst..dst + 8].copy_from_slice(&ptr);
}

/// `n` modules whose contents all point at one zstd frame of `size` zeros.
fn shared_frame_payload(n: usize, size: usize, js: bool) -> Vec<u8> {
    let frame = zstd::encode_all(&vec![0u8; size][..], 19).unwrap();
    let names: Vec<String> = (0..n)
        .map(|i| format!("/$bunfs/root/m{i}.{}", if js { "js" } else { "bin" }))
        .collect();
    let mut specs = vec![Spec::js("/$bunfs/root/cli", b"1")];
    for name in &names {
        let mut s = Spec::file(name, b"x");
        if js {
            s.loader = 1;
        }
        specs.push(s);
    }
    specs[1].contents = &frame;
    let mut p = build_payload(&specs, 0);
    for i in 2..=n {
        repoint(&mut p, 1, i, 1);
    }
    p
}

#[test]
fn one_decoding_budget_for_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    // Four records on one 8 MiB frame: 32 MiB handed out in all.
    let p = shared_frame_payload(4, 8 << 20, false);
    assert!(p.len() < 10_000);
    let f = write(dir.path(), "shared", &p);
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    // Each record alone fits in 20 MB; the run does not.
    refused(
        &["extract", &f, "-o", o, "--max-decoded", "20000000"],
        "--max-decoded",
    );
    assert!(!out.exists(), "nothing is written when decoding is refused");
    bin()
        .args(["extract", &f, "-o", o, "--max-decoded", "40000000"])
        .assert()
        .success();
    for i in 0..4 {
        assert_eq!(
            std::fs::metadata(out.join(format!("m{i}.bin")))
                .unwrap()
                .len(),
            8 << 20
        );
    }
    // hash over JavaScript modules that share one frame: refused fast.
    let p = shared_frame_payload(50, 16 << 20, true);
    let f = write(dir.path(), "shared-js", &p);
    let t = std::time::Instant::now();
    refused(&["hash", &f, "--max-decoded", "100000000"], "budget");
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    bin()
        .args(["hash", &f, "--max-decoded", "1000000000"])
        .assert()
        .success();
}

#[test]
fn a_shared_frame_is_decompressed_once() {
    let p = shared_frame_payload(3, 1 << 20, false);
    let g = BunGraph::parse(&p).unwrap();
    let budget = Budget::new(10 << 20);
    let d: Vec<_> = g.modules[1..]
        .iter()
        .map(|m| g.decoded(m, &budget).unwrap())
        .collect();
    let ptrs: Vec<*const u8> = d.iter().map(|b| b.as_ptr()).collect();
    assert!(ptrs.iter().all(|&p| p == ptrs[0]), "one decoded copy");
    assert_eq!(budget.used(), 3 << 20, "each record is charged");
}

#[cfg(unix)]
#[cfg(unix)]
#[test]
fn targets_that_are_not_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    refused(&["info", fifo.to_str().unwrap()], "FIFO");
    refused(&["hash", "/dev/zero"], "character device");
    let link = dir.path().join("zero");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    refused(
        &[
            "verify",
            link.to_str().unwrap(),
            "--file",
            "--sha256",
            &"0".repeat(64),
        ],
        "device",
    );
}

#[cfg(unix)]
#[test]
fn extract_never_writes_through_what_is_already_there() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "p",
        &build_payload(
            &[
                Spec::js("/$bunfs/root/cli", b"module text"),
                Spec::js("/$bunfs/root/sub/x.js", b"2"),
            ],
            0,
        ),
    );
    let outside = dir.path().join("outside.txt");
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let reset = || {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir(&out).unwrap();
        std::fs::write(&outside, "precious").unwrap();
    };
    // A hard link to a file elsewhere.
    reset();
    std::fs::hard_link(&outside, out.join("cli")).unwrap();
    refused(&["extract", &f, "-o", o], "already exists");
    assert_eq!(json_error_kind(&["extract", &f, "-o", o]), "io");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    assert!(
        !out.join("manifest.json").exists(),
        "refused before writing"
    );
    // --force replaces the name, not the file behind it.
    bin()
        .args(["extract", &f, "-o", o, "--force"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    assert_eq!(std::fs::read(out.join("cli")).unwrap(), b"module text");
    // A FIFO: refused at once, and replaced (never opened) with --force.
    reset();
    mkfifo(&out.join("cli"));
    refused(&["extract", &f, "-o", o], "FIFO");
    bin()
        .args(["extract", &f, "-o", o, "--force"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    assert_eq!(std::fs::read(out.join("cli")).unwrap(), b"module text");
    // A symlinked manifest.json is refused before any module is written.
    reset();
    std::os::unix::fs::symlink(&outside, out.join("manifest.json")).unwrap();
    refused(&["extract", &f, "-o", o], "symlink");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "only the link");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    // A symlinked folder on the way, even with --force, is never entered.
    reset();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("sub")).unwrap();
    refused(&["extract", &f, "-o", o], "symlink");
    bin()
        .args(["extract", &f, "-o", o, "--force"])
        .assert()
        .success();
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(!out.join("sub").is_symlink() && out.join("sub/x.js").is_file());
    // A folder where a file goes is never removed.
    reset();
    std::fs::create_dir(out.join("cli")).unwrap();
    refused(&["extract", &f, "-o", o, "--force"], "directory");
    // A second run into the same folder needs --force.
    reset();
    bin().args(["extract", &f, "-o", o]).assert().success();
    refused(&["extract", &f, "-o", o], "already exists");
    bin()
        .args(["extract", &f, "-o", o, "--force"])
        .assert()
        .success();
}

#[test]
fn extract_refuses_files_that_collide() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["/$bunfs/root/A.js", "/$bunfs/root/a.js"], "case"),
        (
            &["/$bunfs/root/x", "/$bunfs/root/x/y.js"],
            "needs a directory",
        ),
        (&["/$bunfs/root/manifest.json"], "manifest.json"),
        (&["/$bunfs/root/Manifest.JSON"], "manifest.json"),
    ];
    for (i, (names, needle)) in cases.iter().enumerate() {
        let mut specs = vec![Spec::js("/$bunfs/root/cli", b"1")];
        specs.extend(names.iter().map(|n| Spec::js(n, b"2")));
        let f = write(dir.path(), &format!("c{i}"), &build_payload(&specs, 0));
        let out = dir.path().join(format!("out{i}"));
        refused(&["extract", &f, "-o", out.to_str().unwrap()], needle);
        assert_eq!(
            json_error_kind(&["extract", &f, "-o", out.to_str().unwrap()]),
            "bun"
        );
        assert!(!out.exists(), "{needle}: nothing written");
    }
    // a.js carries bytecode, so --bytecode would write a.js.jsc: that is
    // also a module's name.
    let mut p = build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"1"),
            Spec::js("/$bunfs/root/a.js", b"text"),
            Spec::js("/$bunfs/root/a.js.jsc", b"other"),
        ],
        0,
    );
    repoint(&mut p, 2, 1, 3);
    let f = write(dir.path(), "bc", &p);
    let out = dir.path().join("out-bc");
    let o = out.to_str().unwrap();
    refused(&["extract", &f, "-o", o, "--bytecode"], "a.js.jsc");
    let err = String::from_utf8(
        bin()
            .args(["extract", &f, "-o", o, "--bytecode"])
            .output()
            .unwrap()
            .stderr,
    )
    .unwrap();
    assert!(
        err.contains("bytecode of module /$bunfs/root/a.js")
            && err.contains("module /$bunfs/root/a.js.jsc"),
        "names both: {err}"
    );
    assert!(!out.exists());
    // Without --bytecode there is no sidecar, hence no collision.
    bin().args(["extract", &f, "-o", o]).assert().success();
}

/// `pretty -o DIR` and `reconstruct -o DIR` write names that come from the
/// build: like `extract`, they never write through a link or a file already
/// there, and check everything before the first write.
#[test]
fn pretty_and_reconstruct_never_write_through_what_is_there() {
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single = single.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, b"precious").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // A link where reconstruct's first file goes, and a hard link where
    // pretty's goes.
    let first = bin()
        .args(["workflows", single, "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let name = v["workflows"][0]["name"].as_str().unwrap().to_string();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, out.join(format!("{name}.meta.json"))).unwrap();
    std::fs::hard_link(&outside, out.join("single.js")).unwrap();
    for args in [
        vec!["reconstruct", single, "-o", out.to_str().unwrap()],
        vec!["pretty", single, "--all", "-o", out.to_str().unwrap()],
    ] {
        one_line_error(&args, &output(&args));
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious", "{args:?}");
    }
    // Nothing was written before the refusal.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![format!("{name}.meta.json"), "single.js".to_string()]
    );
    // --force replaces the entries themselves, never what they point to.
    for args in [
        vec![
            "reconstruct",
            single,
            "-o",
            out.to_str().unwrap(),
            "--force",
        ],
        vec![
            "pretty",
            single,
            "--all",
            "-o",
            out.to_str().unwrap(),
            "--force",
        ],
    ] {
        bin().args(&args).assert().success();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious", "{args:?}");
    }
    assert!(
        !std::fs::symlink_metadata(out.join(format!("{name}.meta.json")))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// A one-line bundle holding one tool whose prompt is `prompt` (a JS string
/// literal's body), in the shape the tool finder reads.
fn tool_js(name: &str, prompt: &str) -> String {
    format!(
        "var W = mk({{ name: \"{name}\", prompt: () => \"{prompt}\", inputSchema: SCH, call() {{}} }});\n"
    )
}

/// `diff` of two one-line files whose tool descriptions differ just before
/// a line break followed by a word that starts with a character of several
/// bytes: the word diff's next line starts with it, and every rendering
/// shows it (HTML once cut its first byte and panicked).
#[test]
fn diff_renders_word_diffs_of_any_text() {
    let dir = tempfile::tempdir().unwrap();
    for (i, word) in ["étude", "世界", "😀 smile", "\\u0301accent"]
        .iter()
        .enumerate()
    {
        let a = write(
            dir.path(),
            &format!("a{i}.js"),
            tool_js(
                "Fetch",
                &format!("Fetch a page and read it.\\n{word} first"),
            )
            .as_bytes(),
        );
        let b = write(
            dir.path(),
            &format!("b{i}.js"),
            tool_js("Fetch", &format!("Fetch a site and read it.\\n{word} then")).as_bytes(),
        );
        for format in ["html", "md", "text"] {
            let out = bin()
                .args(["diff", &a, &b, "--format", format])
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{word} {format}: {err}");
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(
                text.contains("Fetch") && text.contains("site"),
                "{format}: {text}"
            );
        }
    }
}

/// Files in `dir`, sorted (empty if it does not exist).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every writer of a folder names all its files before the first write:
/// two outputs of one run at one path (one name twice, names equal but for
/// case) are refused with nothing written, with or without `--force`; an
/// overlong name is shortened, and the index names the file as written.
#[test]
fn every_folder_writer_plans_its_names_first() {
    let dir = tempfile::tempdir().unwrap();
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single_text = std::fs::read_to_string(&single).unwrap();
    // Two modules of one name, and of names equal but for case.
    let twice = build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"var a = 1;"),
            Spec::js("/$bunfs/root/x.js", b"var b = 2;"),
            Spec::js("/$bunfs/root/x.js", b"var c = 3;"),
        ],
        0,
    );
    let cased = build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"var a = 1;"),
            Spec::js("/$bunfs/root/Edit.js", b"var b = 2;"),
            Spec::js("/$bunfs/root/EDIT.js", b"var c = 3;"),
        ],
        0,
    );
    let twice = write(dir.path(), "twice.bin", &twice);
    let cased = write(dir.path(), "cased.bin", &cased);
    // Two workflows of one name (the fixture's second, renamed).
    let second = "{ name: \"second\", description: D2 }";
    let wf = single_text.replace(second, "{ name: WN, description: D2 }");
    assert_ne!(wf, single_text);
    let wf = write(dir.path(), "wf.js", wf.as_bytes());
    let wf_cased = single_text.replace(second, "{ name: \"Code-Review\", description: D2 }");
    assert_ne!(wf_cased, single_text);
    let wf_cased = write(dir.path(), "wf-cased.js", wf_cased.as_bytes());
    // Tools Edit and EDIT: one prompt id each, one file name.
    let tools = format!(
        "{}{}",
        tool_js(
            "Edit",
            "Use this tool to edit a file you were given, and say what you changed in it."
        ),
        tool_js(
            "EDIT",
            "Use this tool to edit a file in capitals, and say what you changed in it."
        )
    );
    let tools = write(dir.path(), "tools.js", tools.as_bytes());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["extract", &twice], "both"),
        (vec!["extract", &cased], "case"),
        (vec!["pretty", &twice, "--all"], "both"),
        (vec!["pretty", &cased, "--all"], "case"),
        (vec!["reconstruct", &wf], "both"),
        (vec!["reconstruct", &wf_cased], "case"),
        (
            vec!["surface", &tools, "--export"],
            "(Tool description: EDIT)",
        ),
    ];
    for (i, (args, needle)) in cases.iter().enumerate() {
        for force in [false, true] {
            let out = dir.path().join(format!("out{i}-{force}"));
            let mut a = args.clone();
            if !args.contains(&"--export") {
                a.push("-o");
            }
            a.push(out.to_str().unwrap());
            if force {
                a.push("--force");
            }
            refused(&a, needle);
            assert_eq!(json_error_kind(&a), "bun", "{a:?}");
            assert!(listing(&out).is_empty(), "{a:?}: nothing written");
        }
    }

    // A 300-character module name: written under a shortened name that
    // the manifest gives, for `extract` and `pretty`.
    let long = format!("/$bunfs/root/{}.js", "m".repeat(300));
    let p = build_payload(
        &[
            Spec::js("/$bunfs/root/cli", b"var a = 1;"),
            Spec::js(&long, b"var long = 2;"),
        ],
        0,
    );
    let p = write(dir.path(), "long.bin", &p);
    let out = dir.path().join("long-extract");
    let v = json(&["extract", &p, "-o", out.to_str().unwrap()]);
    let file = v["modules"][1]["file"].as_str().unwrap().to_string();
    assert!(
        file.len() <= 200 && file.ends_with(".js") && file.contains('~'),
        "{file}"
    );
    assert_eq!(std::fs::read(out.join(&file)).unwrap(), b"var long = 2;");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["modules"][1]["file"], file.as_str());
    let out = dir.path().join("long-pretty");
    let v = json(&["pretty", &p, "--all", "-o", out.to_str().unwrap()]);
    let written: Vec<String> = v["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(written.len(), 2, "{v}");
    for f in &written {
        let name = Path::new(f).file_name().unwrap().len();
        assert!(name <= 200, "{f}");
        assert!(Path::new(f).is_file(), "{f}");
    }
    // The same run again gives the same names (refused: they exist).
    refused(
        &["pretty", &p, "--all", "-o", out.to_str().unwrap()],
        "already exists",
    );

    // A 300-character tool name: the prompt's file is shortened, and
    // index.json names it, with the hash of what it holds.
    let tool = write(
        dir.path(),
        "long-tool.js",
        tool_js(
            &"T".repeat(300),
            "Use this tool to edit a file you were given, and say what you changed in it.",
        )
        .as_bytes(),
    );
    let out = dir.path().join("long-export");
    bin()
        .args(["surface", &tool, "--export", out.to_str().unwrap()])
        .assert()
        .success();
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let prompts = index["prompts"].as_array().unwrap();
    assert!(!prompts.is_empty(), "{index}");
    for p in prompts {
        let file = p["file"].as_str().unwrap();
        assert!(file.len() <= 200, "{file}");
        let bytes = std::fs::read(out.join(file)).unwrap();
        use sha2::Digest;
        assert_eq!(
            p["sha256"],
            hex::encode(sha2::Sha256::digest(&bytes)),
            "{file}"
        );
    }
}

/// `-o FILE` never writes through what is at FILE: a symlink, a hard link
/// or a FIFO is refused with one line and left as it was, for every command
/// that writes one file.
#[cfg(unix)]
#[test]
fn dash_o_never_writes_through_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single = single.to_str().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let commands: [&[&str]; 5] = [
        &["report", single, "--format", "md"],
        &["diff", single, single, "--format", "html"],
        &["info", single, "--format", "md"],
        &["pretty", single],
        &["workflows", single, "--format", "md"],
    ];
    for (i, cmd) in commands.iter().enumerate() {
        let link = dir.path().join(format!("link{i}"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let hard = dir.path().join(format!("hard{i}"));
        std::fs::hard_link(&victim, &hard).unwrap();
        let fifo = dir.path().join(format!("fifo{i}"));
        mkfifo(&fifo);
        for (path, needle) in [(&link, "link"), (&hard, "hard link"), (&fifo, "FIFO")] {
            let mut args = cmd.to_vec();
            args.extend(["-o", path.to_str().unwrap()]);
            refused(&args, needle);
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "{cmd:?}");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // And a plain file is written (and replaced) as asked.
        let plain = dir.path().join(format!("plain{i}"));
        std::fs::write(&plain, b"old").unwrap();
        let mut args = cmd.to_vec();
        args.extend(["-o", plain.to_str().unwrap()]);
        bin().args(&args).assert().success();
        assert_ne!(std::fs::read(&plain).unwrap(), b"old", "{cmd:?}");
    }
    // No temporary file is left beside the outputs.
    assert!(
        listing(dir.path()).iter().all(|n| !n.ends_with(".tmp")),
        "{:?}",
        listing(dir.path())
    );
}
