//! The commands on real Claude Code builds, downloaded at test time through
//! the project's own `fetch` (cached). Nothing from these builds is committed.

use crate::common;

use common::*;
use std::path::Path;

const BUNDLE_2_1_220_DARWIN: &str =
    "d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120";

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_darwin_arm64() {
    let exe = fetch("2.1.220", "darwin-arm64");
    let t = path_str(&exe);
    let v = json(&["info", t]);
    assert_eq!(v["container"]["format"], "macho");
    assert_eq!(v["container"]["arch"], "arm64");
    assert_eq!(v["container"]["section"], "__BUN,__bun");
    assert_eq!(v["container"]["header_width"], 8);
    assert_eq!(v["bun"]["modules"], 14);
    assert_eq!(v["bun"]["entry"], "/$bunfs/root/src/entrypoints/cli.js");
    assert_eq!(v["bun"]["layout"]["record_size"], 52);
    assert_eq!(v["bundle"]["sha256"], BUNDLE_2_1_220_DARWIN);
    assert_eq!(v["bundle"]["bytes"], 21_635_672);
    assert_eq!(v["bundle"]["code_split"], false);
    assert_eq!(v["version"], "2.1.220");
    assert_eq!(v["version_sources"]["bundle"], "2.1.220");

    // The npm: form resolves to the same cached file.
    let via_npm = json(&["info", "npm:2.1.220/darwin-arm64"]);
    assert_eq!(via_npm["bundle"]["sha256"], BUNDLE_2_1_220_DARWIN);
    assert_eq!(via_npm["target"]["platform"], "darwin-arm64");

    let ls = json(&["ls", t]);
    let mods = ls["modules"].as_array().unwrap();
    assert_eq!(mods.len(), 14);
    let entry = mods.iter().find(|m| m["entry"] == true).unwrap();
    assert_eq!(entry["sha256"], BUNDLE_2_1_220_DARWIN);
    assert_eq!(entry["format"], "cjs");
    assert!(
        mods.iter().any(|m| m["loader"] == "napi"),
        "the .node addons are napi modules"
    );

    bin()
        .args(["verify", t, "--sha256", BUNDLE_2_1_220_DARWIN])
        .assert()
        .success()
        .stdout(predicates::str::contains("OK"));
    let bad = bin()
        .args(["verify", t, "--sha256", &"0".repeat(64)])
        .assert()
        .code(1);
    let out = String::from_utf8_lossy(&bad.get_output().stdout).to_string();
    assert!(
        out.contains("MISMATCH") && out.contains(BUNDLE_2_1_220_DARWIN),
        "{out}"
    );

    let h = json(&["hash", t]);
    assert_eq!(h["bundle"]["sha256"], BUNDLE_2_1_220_DARWIN);
    assert_eq!(h["modules"].as_array().unwrap().len(), 14);
    let file_sha = h["file"].as_str().unwrap().to_string();
    bin()
        .args(["verify", t, "--file", "--sha256", &file_sha])
        .assert()
        .success();
    let digest = h["bundle_digest"].as_str().unwrap().to_string();
    bin()
        .args(["verify", t, "--digest", "--sha256", &digest])
        .assert()
        .success();
    let helper = mods.iter().find(|m| m["path"] == "url-handler.js").unwrap();
    bin()
        .args([
            "verify",
            t,
            "--module",
            "url-handler.js",
            "--sha256",
            helper["sha256"].as_str().unwrap(),
        ])
        .assert()
        .success();

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    bin()
        .args(["extract", t, "-o", path_str(&out)])
        .assert()
        .success();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["modules"].as_array().unwrap().len(), 14);
    assert_eq!(manifest["version"], "2.1.220");
    let bundle = std::fs::read(out.join("src/entrypoints/cli.js")).unwrap();
    assert_eq!(bundle.len(), 21_635_672);
    use sha2::Digest;
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&bundle)),
        BUNDLE_2_1_220_DARWIN
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_linux_x64_and_win32_x64() {
    let elf = fetch("2.1.220", "linux-x64");
    let v = json(&["info", path_str(&elf)]);
    assert_eq!(v["container"]["format"], "elf");
    assert_eq!(v["container"]["arch"], "x86_64");
    assert_eq!(v["container"]["section"], ".bun");
    assert_eq!(v["bun"]["entry"], "/$bunfs/root/src/entrypoints/cli.js");
    assert_eq!(v["version"], "2.1.220");
    assert_ne!(
        v["bundle"]["sha256"], BUNDLE_2_1_220_DARWIN,
        "platforms differ"
    );

    let pe = fetch("2.1.220", "win32-x64");
    let v = json(&["info", path_str(&pe)]);
    assert_eq!(v["container"]["format"], "pe");
    assert_eq!(v["container"]["arch"], "x86_64");
    assert_eq!(v["container"]["section"], ".bun");
    assert_eq!(v["bun"]["entry"], "B:/~BUN/root/src/entrypoints/cli.js");
    assert_eq!(v["version"], "2.1.220");
    // The section's raw size is padded; the payload must end at the trailer.
    assert!(
        v["container"]["payload_size"].as_u64().unwrap()
            <= v["container"]["section_size"].as_u64().unwrap()
    );
    let ls = json(&["ls", path_str(&pe)]);
    assert!(
        ls["modules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["name"].as_str().unwrap().starts_with("B:/~BUN/root/"))
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_260_darwin_arm64_code_split() {
    let exe = fetch("2.1.260", "darwin-arm64");
    let t = path_str(&exe);
    let v = json(&["info", t]);
    assert_eq!(v["bun"]["entry"], "/$bunfs/root/cli");
    assert_ne!(
        v["bun"]["entry_point_id"], 0,
        "the entry is not module 0 here"
    );
    let n = v["bun"]["modules"].as_u64().unwrap();
    assert!((1700..=1950).contains(&n), "about 1,830 modules, got {n}");
    assert!(v["bun"]["js_modules"].as_u64().unwrap() > 1400);
    assert!(
        v["bun"]["compressed_modules"].as_u64().unwrap() > 50,
        "zstd assets"
    );
    assert_eq!(v["bundle"]["code_split"], true);
    assert_eq!(v["version"], "2.1.260");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    bin()
        .args(["extract", t, "-o", path_str(&out)])
        .assert()
        .success();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let mods = manifest["modules"].as_array().unwrap();
    assert_eq!(mods.len() as u64, n);
    let zst = mods.iter().find(|m| m["compressed"] == true).unwrap();
    let written = std::fs::read(out.join(zst["file"].as_str().unwrap())).unwrap();
    assert_eq!(written.len() as u64, zst["decoded_bytes"].as_u64().unwrap());
    assert!(
        zst["decoded_bytes"].as_u64() > zst["bytes"].as_u64(),
        "decompressed"
    );
    use sha2::Digest;
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&written)),
        zst["decoded_sha256"].as_str().unwrap()
    );

    // --raw keeps the stored bytes.
    let raw = dir.path().join("raw");
    bin()
        .args(["extract", t, "-o", path_str(&raw), "--raw"])
        .assert()
        .success();
    let stored = std::fs::read(raw.join(zst["file"].as_str().unwrap())).unwrap();
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&stored)),
        zst["sha256"].as_str().unwrap()
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn newest_published_version() {
    let f = fetch_json("latest", "linux-x64");
    let version = f["version"].as_str().unwrap();
    let v = json(&["info", f["path"].as_str().unwrap()]);
    assert_eq!(
        v["version"], version,
        "the bundle states the version npm published"
    );
    assert_eq!(v["container"]["format"], "elf");
    assert!(v["bun"]["modules"].as_u64().unwrap() > 100);
    // Every module row is readable and hashed.
    let ls = json(&["ls", f["path"].as_str().unwrap()]);
    assert!(
        ls["modules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["sha256"].as_str().unwrap().len() == 64)
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn second_fetch_is_a_cache_hit_without_network() {
    fetch("2.1.220", "darwin-arm64");
    // An unreachable registry proves no request is made on a hit.
    let offline = |args: &[&str]| -> serde_json::Value {
        let out = bin()
            .args(args)
            .env("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = offline(&["fetch", "2.1.220", "--platform", "darwin-arm64", "--json"]);
    assert_eq!(v["cache_hit"], true);
    assert!(v["integrity"].as_str().unwrap().starts_with("sha512-"));
    // The target form the other commands take names the same build.
    let w = offline(&["fetch", "npm:2.1.220/darwin-arm64", "--json"]);
    assert_eq!((&w["path"], &w["platform"]), (&v["path"], &v["platform"]));
}
