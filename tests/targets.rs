//! Target forms that need no download: tarballs, plain JavaScript, errors.

use crate::common;

use common::*;
use std::io::Write;

fn tgz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_cksum();
        b.append_data(&mut h, name, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

#[test]
fn npm_tarball_target() {
    let dir = tempfile::tempdir().unwrap();
    let payload = build_payload(
        &[Spec::js(
            "/$bunfs/root/cli",
            b"// Version: 9.9.9\nexport {};\n",
        )],
        0,
    );
    let exe = elf_with_section(&with_header(&payload, 8));
    let pj = br#"{"name":"@anthropic-ai/claude-code-linux-x64","version":"9.9.9"}"#;
    let t = dir.path().join("pkg.tgz");
    std::fs::write(
        &t,
        tgz(&[
            ("package/package.json", pj),
            ("package/claude", &exe),
            ("package/README.md", b"x"),
        ]),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let out = bin()
        .args([
            "info",
            t.to_str().unwrap(),
            "--json",
            "--cache-dir",
            cache.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["target"]["origin"], "tarball");
    assert_eq!(v["target"]["platform"], "linux-x64");
    assert_eq!(v["version"], "9.9.9");
    assert_eq!(v["version_sources"]["package"], "9.9.9");
    assert_eq!(v["container"]["format"], "elf");
}

#[test]
fn tarball_with_hostile_paths_writes_only_known_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, data) in [
        ("package/cli.js", &b"// hi\nconsole.log(1)\n"[..]),
        ("package/evil.sh", b"x"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append_data(&mut h, name, data).unwrap();
    }
    // A raw header naming ../escape (the tar crate refuses to build one).
    let mut h = tar::Header::new_old();
    h.as_old_mut().name[..9].copy_from_slice(b"../escape");
    h.set_size(1);
    h.set_cksum();
    b.append(&h, &b"x"[..]).unwrap();
    let bytes = b.into_inner().unwrap().finish().unwrap();
    let t = dir.path().join("evil.tgz");
    std::fs::write(&t, bytes).unwrap();
    let cache = dir.path().join("c");
    let v = json(&[
        "info",
        t.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(v["container"]["format"], "js");
    assert!(!dir.path().join("escape").exists());
    let unpacked: Vec<_> = walk(&cache);
    assert!(
        unpacked
            .iter()
            .all(|p| !p.ends_with("evil.sh") && !p.ends_with("escape")),
        "{unpacked:?}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path().display().to_string());
        }
    }
    out
}

#[test]
fn plain_javascript_target() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cli.js");
    let mut f = std::fs::File::create(&p).unwrap();
    writeln!(f, "#!/usr/bin/env node").unwrap();
    writeln!(f, "var a={{VERSION:\"1.0.50\"}},b={{VERSION:\"1.0.50\"}};").unwrap();
    let v = json(&["info", p.to_str().unwrap()]);
    assert_eq!(v["container"]["format"], "js");
    assert_eq!(v["bun"]["modules"], 1);
    assert_eq!(v["bun"]["entry"], "cli.js");
    assert_eq!(v["version"], "1.0.50");
    let ls = json(&["ls", p.to_str().unwrap()]);
    assert_eq!(
        ls["modules"][0]["bytes"].as_u64().unwrap(),
        std::fs::metadata(&p).unwrap().len()
    );
}

#[test]
fn bad_targets_and_platforms() {
    let err = failed("plan9", &output(&["info", "npm:2.1.220/plan9"]));
    assert!(
        err.contains("unknown platform") && err.contains("darwin-arm64"),
        "{err}"
    );
    failed("beos", &output(&["fetch", "2.1.220", "--platform", "beos"]));
}

#[test]
fn no_registry_configured_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "fetch",
            "2.1.220",
            "--platform",
            "linux-x64",
            "--cache-dir",
            dir.path().to_str().unwrap(),
        ])
        .env_remove("NPM_CONFIG_REGISTRY")
        .env_remove("npm_config_registry")
        .env_remove("NPM_CONFIG_USERCONFIG")
        .env("HOME", dir.path())
        .env("PATH", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = failed("no registry", &out);
    assert!(err.contains("no npm registry configured"), "{err}");
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in [
        "info",
        "ls",
        "extract",
        "hash",
        "verify",
        "fetch",
        "pretty",
        "symbols",
        "grep",
        "locate",
        "workflows",
        "reconstruct",
        "simulate",
        "flags",
        "gates",
        "installs",
        "report",
        "diff",
    ] {
        let out = bin().args([cmd, "--help"]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Example:") && text.contains("cc-teardown "),
            "{cmd}: {text}"
        );
    }
}

/// A registry whose dist-tag names a path, not a version: refused before
/// any folder of the cache is made or removed (the version names the
/// folder a download replaces).
#[test]
fn a_dist_tag_that_is_a_path_is_refused() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let body = r#"{"dist-tags":{"latest":"../../../victim"},"versions":{}}"#;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("a/b/cache");
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep"), "keep").unwrap();
    for version in ["latest", "2.1.0/../../../../victim"] {
        let out = bin()
            .args(["fetch", version, "--platform", "linux-x64", "--cache-dir"])
            .arg(&cache)
            .env("NPM_CONFIG_REGISTRY", format!("http://127.0.0.1:{port}/"))
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = one_line_error(version, &out);
        assert!(err.contains("not a version"), "{version}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(victim.join("keep")).unwrap(),
        "keep"
    );
}
