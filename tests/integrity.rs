//! Integrity on real builds (downloaded at test time through the project's
//! own `fetch`): code signatures, `verify --published` on the published
//! build and on modified copies the tests make in a temporary folder (never
//! committed), and `verify --platforms`.

use crate::common;

use common::*;
use sha2::Digest;
use std::path::Path;

const VERSION: &str = "2.1.220";
/// `codesign -dvvv` of the published darwin-arm64 build shows this CDHash.
const CDHASH: &str = "474c5a3154406ea5ee537b0a25f24f9292b1570b";
/// A string literal inside a function of the entry module of 2.1.220
/// (a `switch` case of the spinner's message handler).
const LITERAL: &[u8] = b"case\"compact_start\":r(\"Compacting conversation\")";

fn run_json(args: &[&str]) -> (i32, serde_json::Value) {
    let (v, code) = json_and_code(
        bin()
            .args(args)
            .timeout(std::time::Duration::from_secs(1200)),
    );
    assert!(code == 0 || code == 1, "{args:?}: exit {code}: {v}");
    (code, v)
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The file offset of `LC_CODE_SIGNATURE` in a thin 64-bit Mach-O.
fn signature_command(b: &[u8]) -> usize {
    let mut at = 32;
    for _ in 0..le32(b, 16) {
        if le32(b, at) == 0x1d {
            return at;
        }
        at += le32(b, at + 4) as usize;
    }
    panic!("no LC_CODE_SIGNATURE");
}

/// The published darwin-arm64 build with one character of [`LITERAL`]
/// changed; returns the bytes and the offset changed.
fn edited_darwin() -> (Vec<u8>, usize) {
    let mut b = std::fs::read(fetch(VERSION, "darwin-arm64")).unwrap();
    let finder = memchr_find(&b, LITERAL);
    assert_eq!(finder.len(), 1, "the literal occurs once in {VERSION}");
    let at = finder[0] + b"case\"compact_start\":r(\"".len();
    assert_eq!(b[at], b'C');
    b[at] = b'X';
    (b, at)
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn published_darwin_is_identical_and_validly_signed() {
    let exe = fetch(VERSION, "darwin-arm64");
    let t = exe.to_str().unwrap();
    let out = bin()
        .args(["verify", t, "--published"])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("OK  identical to @anthropic-ai/claude-code-darwin-arm64@2.1.220"),
        "{text}"
    );
    assert!(text.contains("Team ID Q6L2SF6YDW"), "{text}");

    let v = json(&["info", t]);
    let s = &v["signature"];
    assert_eq!(s["kind"], "macho-code-signature");
    assert_eq!(s["status"], "valid");
    assert_eq!(s["team_id"], "Q6L2SF6YDW");
    assert_eq!(s["identifier"], "com.anthropic.claude-code");
    assert_eq!(s["cdhash"], CDHASH);
    assert!(s["trust"].as_str().unwrap().contains("not checked"));
    let slice = &s["slices"][0];
    assert_eq!(slice["hardened_runtime"], true);
    assert_eq!(slice["cms_digest_matches"], true);
    assert!(
        s["signer"]
            .as_str()
            .unwrap()
            .contains("Developer ID Application"),
        "{}",
        s["signer"]
    );
    let cd = &slice["code_directories"][0];
    assert_eq!(cd["hash_type"], "sha256");
    assert_eq!(cd["page_size"], 16384);
    assert_eq!(cd["pages_differ"], 0);
    let slots = cd["special_slots"].as_array().unwrap();
    assert!(
        slots
            .iter()
            .any(|x| x["name"] == "requirements" && x["status"] == "matches")
    );
    assert!(
        slots
            .iter()
            .any(|x| x["name"] == "entitlements" && x["status"] == "matches")
    );

    // The JSON shape of an identical build.
    let (code, v) = run_json(&["verify", t, "--published"]);
    assert_eq!(code, 0);
    assert_eq!(v["identical"], true);
    assert_eq!(v["published"]["platform"], "darwin-arm64");
    assert_eq!(v["published"]["version"], VERSION);
    assert_eq!(v["file"]["sha256"], v["file"]["published_sha256"]);
    assert_eq!(v["signature"]["status"], "valid");
    // Hashes match and the CDHash is the published one; who signed is
    // still not verified.
    assert_eq!(v["signature"]["identity_verified"], false);
    assert_eq!(v["signature"]["published"]["matches"], true);
    assert_eq!(v["signature"]["published"]["value"], CDHASH);
    assert!(
        text.contains("signer not verified")
            && text.contains("CDHash matches the published build's"),
        "{text}"
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn an_edited_string_is_pinned_to_module_function_line_page_and_bytecode() {
    let (b, at) = edited_darwin();
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "claude", &b);
    let (code, v) = run_json(&["verify", &t, "--published"]);
    assert_eq!(code, 1);
    assert_eq!(v["identical"], false);
    let parts = v["container_diffs"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert_eq!(parts[0]["part"], "Bun section __BUN,__bun");
    assert_eq!(parts[0]["first_difference"], at as u64);
    let mods = v["modules"].as_array().unwrap();
    assert_eq!(mods.len(), 1, "{mods:?}");
    let m = &mods[0];
    assert_eq!(m["name"], "/$bunfs/root/src/entrypoints/cli.js");
    assert_eq!(m["status"], "changed");
    assert_ne!(m["sha256"], m["published_sha256"]);
    assert!(m["bytecode"].as_str().unwrap().starts_with("stale"), "{m}");
    let fns = m["functions_changed"].as_array().unwrap();
    assert_eq!(fns.len(), 1, "{fns:?}");
    assert_eq!(fns[0]["status"], "changed");
    assert!(fns[0]["line"].as_u64().unwrap() > 0);
    let diff = fns[0]["diff"].as_str().unwrap();
    assert!(diff.contains("-") && diff.contains("\"Compacting conversation\""));
    assert!(diff.contains("+") && diff.contains("\"Xompacting conversation\""));
    let s = &v["signature"];
    assert_eq!(s["status"], "broken");
    let page = at as u64 / 16384 * 16384;
    let summary = s["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("1 page differs: first at offset {page}")),
        "{summary}"
    );
    // The CodeDirectory is still the published one; the bytes are not.
    assert_eq!(s["published"]["compared"], "cdhash");
    assert_eq!(s["published"]["matches"], true);
    assert_eq!(s["published"]["published"], CDHASH);

    // The human text says the same.
    let out = bin()
        .args(["verify", &t, "--published"])
        .timeout(std::time::Duration::from_secs(1200))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("MODIFIED"), "{text}");
    assert!(text.contains("bytecode        stale"), "{text}");
    assert!(text.contains("+                r(\"Xompacting"), "{text}");
    assert!(text.contains("signature: broken (1 page differs"), "{text}");
    assert!(
        text.contains(
            "CDHash matches the published build's, but this file's bytes no longer match it"
        ),
        "{text}"
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn the_same_edit_unsigned_or_ad_hoc_signed_is_reported_as_such() {
    let (b, _) = edited_darwin();
    let lc = signature_command(&b);
    let (dataoff, datasize) = (le32(&b, lc + 8) as usize, le32(&b, lc + 12) as usize);
    let dir = tempfile::tempdir().unwrap();

    // Signature removed: the command becomes LC_DATA_IN_CODE (same shape)
    // with nothing in it, and the file ends where the signature began.
    // `__LINKEDIT` shrinks to match, as `codesign --remove-signature` does.
    let mut unsigned = b[..dataoff].to_vec();
    unsigned[lc..lc + 4].copy_from_slice(&0x29u32.to_le_bytes());
    unsigned[lc + 8..lc + 16].fill(0);
    let mut at = 32;
    for _ in 0..le32(&unsigned, 16) {
        if le32(&unsigned, at) == 0x19 && unsigned[at + 8..at + 19] == *b"__LINKEDIT\0" {
            let fileoff = u64::from_le_bytes(unsigned[at + 40..at + 48].try_into().unwrap());
            let size = dataoff as u64 - fileoff;
            unsigned[at + 48..at + 56].copy_from_slice(&size.to_le_bytes());
        }
        at += le32(&unsigned, at + 4) as usize;
    }
    let t = write(dir.path(), "unsigned", &unsigned);
    let v = json(&["info", &t]);
    assert_eq!(v["signature"]["status"], "unsigned");
    let (code, v) = run_json(&["verify", &t, "--published"]);
    assert_eq!(code, 1);
    assert_eq!(v["signature"]["status"], "unsigned");
    let parts = v["container_diffs"].as_array().unwrap();
    assert!(
        parts
            .iter()
            .any(|p| p["part"] == "code signature" && p["status"] == "removed"),
        "{parts:?}"
    );
    assert!(
        parts
            .iter()
            .any(|p| p["part"] == "Mach-O header and load commands"),
        "{parts:?}"
    );

    // Re-signed ad hoc: the CodeDirectory's page hashes recomputed, its
    // flags marked ad-hoc, the CMS blob emptied.
    let mut adhoc = b.clone();
    let sb = dataoff;
    let count = be32(&adhoc, sb + 8) as usize;
    for i in 0..count {
        let kind = be32(&adhoc, sb + 12 + 8 * i);
        let off = sb + be32(&adhoc, sb + 16 + 8 * i) as usize;
        if kind == 0x10000 {
            adhoc[off + 4..off + 8].copy_from_slice(&8u32.to_be_bytes());
        }
        if kind == 0 {
            let flags = be32(&adhoc, off + 12) | 0x2;
            adhoc[off + 12..off + 16].copy_from_slice(&flags.to_be_bytes());
            let hash_offset = be32(&adhoc, off + 16) as usize;
            let n = be32(&adhoc, off + 28) as usize;
            let limit = be32(&adhoc, off + 32) as usize;
            let ps = 1usize << adhoc[off + 39];
            for p in 0..n {
                let h = sha2::Sha256::digest(&adhoc[p * ps..((p + 1) * ps).min(limit)]);
                let at = off + hash_offset + p * 32;
                adhoc[at..at + 32].copy_from_slice(&h);
            }
        }
    }
    assert!(datasize > 0);
    let t = write(dir.path(), "adhoc", &adhoc);
    let v = json(&["info", &t]);
    assert_eq!(v["signature"]["status"], "ad-hoc", "{}", v["signature"]);
    assert_ne!(v["signature"]["cdhash"], CDHASH);
    let (code, v) = run_json(&["verify", &t, "--published"]);
    assert_eq!(code, 1);
    assert_eq!(v["signature"]["status"], "ad-hoc");
    assert!(
        v["container_diffs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["part"] == "code signature" && p["status"] == "differs")
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn hostile_signature_fields_are_findings_not_failures() {
    let good = std::fs::read(fetch(VERSION, "darwin-arm64")).unwrap();
    let lc = signature_command(&good);
    let dataoff = le32(&good, lc + 8) as usize;
    let dir = tempfile::tempdir().unwrap();
    // (offset, value, big-endian) — the SuperBlob's count, the first blob's
    // offset, the command's size, the CodeDirectory's slot count.
    let cd = dataoff + be32(&good, dataoff + 16) as usize;
    for (at, value, be) in [
        (dataoff + 8, 0xffff_ffffu32, true),
        (dataoff + 16, 0x7fff_fff0, true),
        (lc + 12, 0xffff_ff00, false),
        (cd + 28, 0xffff_ffff, true),
        (cd + 24, 0xffff_ffff, true),
        (cd + 16, 0, true),
    ] {
        let mut b = good.clone();
        let v = if be {
            value.to_be_bytes()
        } else {
            value.to_le_bytes()
        };
        b[at..at + 4].copy_from_slice(&v);
        let t = write(dir.path(), "hostile", &b);
        let v = json(&["info", &t]);
        assert_eq!(v["signature"]["status"], "malformed", "{}", v["signature"]);
    }
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn windows_authenticode_and_linux_unsigned() {
    let exe = fetch(VERSION, "win32-x64");
    let v = json(&["info", exe.to_str().unwrap()]);
    let s = &v["signature"];
    assert_eq!(s["kind"], "authenticode");
    assert_eq!(s["status"], "valid");
    let a = &s["authenticode"];
    assert_eq!(a["digest_algorithm"], "sha256");
    assert_eq!(a["signed_digest"], a["computed_digest"]);
    assert!(
        a["placement"]
            .as_str()
            .unwrap()
            .starts_with("after the Bun section"),
        "{a}"
    );
    assert!(s["signer"].as_str().unwrap().contains("Anthropic"));

    // One byte of the Bun section changed: the digest no longer matches.
    let mut b = std::fs::read(&exe).unwrap();
    let at = v["container"]["payload_offset"].as_u64().unwrap() as usize + 1000;
    b[at] ^= 1;
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "claude.exe", &b);
    let v = json(&["info", &t]);
    assert_eq!(v["signature"]["status"], "broken");
    let a = &v["signature"]["authenticode"];
    assert_ne!(a["signed_digest"], a["computed_digest"]);

    let exe = fetch(VERSION, "linux-x64");
    let v = json(&["info", exe.to_str().unwrap()]);
    assert_eq!(v["signature"]["status"], "unsigned");
    assert_eq!(v["signature"]["kind"], "none");
    let (code, v) = run_json(&["verify", exe.to_str().unwrap(), "--published"]);
    assert_eq!(code, 0);
    assert_eq!(v["published"]["platform"], "linux-x64");
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn verify_platforms_tabulates_every_build() {
    let (_, v) = run_json(&["verify", "--platforms", VERSION]);
    let rows = v["platforms"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for r in rows {
        assert_eq!(r["file_sha256"].as_str().unwrap().len(), 64);
        assert_eq!(r["bundle_digest"].as_str().unwrap().len(), 64);
    }
    let mods = v["modules"].as_array().unwrap();
    assert!(mods.iter().any(|m| m["name"] == "src/entrypoints/cli.js"));
    // The darwin and linux bundles differ in a few platform-specific
    // functions (docs/guide/integrity.md); whatever differs is summarised.
    if v["identical_javascript"] == false {
        assert!(!v["functions"].as_array().unwrap().is_empty());
    }
}

#[test]
fn usage_errors() {
    // --platforms takes no TARGET; a check must be named.
    bin()
        .args(["verify", "x", "--platforms", "2.1.220"])
        .assert()
        .code(2);
    bin().args(["verify", "x"]).assert().code(2);
    bin()
        .args(["verify", "--platforms", "../x"])
        .assert()
        .code(2);
}
