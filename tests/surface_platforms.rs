//! One version built for macOS, Linux and Windows: `surface` gives the same
//! tools with the same schemas, settings, commands and models on all three,
//! and `diff` across platforms adds or removes environment variables and
//! prompts only where the build itself differs by platform — the named list
//! below, each checked against the builds' own text.

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const VERSION: &str = "2.1.332";

fn surface(exe: &Path) -> Value {
    json(&["surface", exe.to_str().unwrap()])
}

fn diff(a: &Path, b: &Path) -> Value {
    json(&["diff", a.to_str().unwrap(), b.to_str().unwrap()])
}

fn strs(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Each tool's name, description and input schema.
fn tools(s: &Value) -> Vec<(String, String, Value)> {
    s["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["description"].as_str().unwrap().to_string(),
                t["input_schema"].clone(),
            )
        })
        .collect()
}

/// The prompts of `s` with these ids.
fn prompts<'a>(s: &'a Value, ids: &BTreeSet<String>) -> Vec<&'a Value> {
    s["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| ids.contains(p["id"].as_str().unwrap()))
        .collect()
}

/// The longest part of a prompt's text known statically (between its
/// `${vN}` placeholders): what a build holding the prompt must contain.
fn static_part(p: &Value) -> String {
    let text = p["text"].as_str().unwrap();
    let re = regex::Regex::new(r"\$\{v\d+\}").unwrap();
    re.split(text).max_by_key(|s| s.len()).unwrap().to_string()
}

/// The JS text of an extracted build, every module concatenated.
fn build_text(exe: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    bin()
        .args([
            "extract",
            exe.to_str().unwrap(),
            "--quiet",
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let mut text = String::new();
    let mut stack = vec![out];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_none_or(|x| x == "js") {
                // Modules are `.js`, the entry point has no extension.
                if let Ok(t) = std::fs::read(&p) {
                    text.push_str(&String::from_utf8_lossy(&t));
                }
            }
        }
    }
    text
}

fn modules_of(p: &Value) -> BTreeSet<String> {
    p["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["module"].as_str().unwrap().to_string())
        .collect()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn one_version_on_three_platforms() {
    let mac: PathBuf = fetch(VERSION, "darwin-arm64");
    let linux: PathBuf = fetch(VERSION, "linux-x64");
    let win: PathBuf = fetch(VERSION, "win32-x64");
    let s_mac = surface(&mac);
    let s_linux = surface(&linux);
    let s_win = surface(&win);

    // The same tools, descriptions and schemas.
    let t_mac = tools(&s_mac);
    assert!(t_mac.len() >= 40);
    assert_eq!(t_mac, tools(&s_linux), "darwin vs linux");
    assert_eq!(t_mac, tools(&s_win), "darwin vs win32");

    let d_linux = diff(&mac, &linux);
    let d_win = diff(&mac, &win);
    for (d, other) in [(&d_linux, "linux"), (&d_win, "win32")] {
        for kind in ["tools", "commands", "settings", "models"] {
            for side in ["added", "removed"] {
                // The computer-use skill is registered by the macOS-only
                // computer-use module (docs/guide/surface.md).
                let only_mac: &[&str] = if kind == "commands" && side == "removed" {
                    &["computer-use"]
                } else {
                    &[]
                };
                let names: Vec<&str> = d[kind][side]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|n| n.as_str())
                    .filter(|n| !only_mac.contains(n))
                    .collect();
                assert!(
                    names.is_empty(),
                    "darwin vs {other}: {kind}.{side} = {}",
                    d[kind][side]
                );
            }
        }
        assert_eq!(d["tools"]["changed"].as_array().map(Vec::len), Some(0));
        assert_eq!(d["prompts"]["added"].as_array().map(Vec::len), Some(0));
        // A text whose opening words another text shares takes more words
        // in its id (docs/guide/surface.md): where the other is the
        // macOS-only one, this build's text keeps the shorter id, so it
        // shows as a change, and its macOS id as removed.
        let gone = strs(&d["prompts"]["removed"]);
        // The computer-use skill's body is in every build, but only the
        // macOS build registers the skill (its module ships there only):
        // there the text reaches the skill's prompt, elsewhere nothing —
        // the same text, its kind `skill` on macOS only.
        let mut kind_only = 0;
        for c in d["prompts"]["changed"].as_array().unwrap() {
            let id = c["id"].as_str().unwrap();
            // (The skill named by its constant: `skill (computer-use)`.)
            if c["sha256_a"] == c["sha256_b"]
                && c["words"].as_str() == Some("skill (computer-use) → other")
            {
                kind_only += 1;
                continue;
            }
            assert!(
                gone.iter().any(|g| g.starts_with(&format!("{id}-"))),
                "darwin vs {other}: {id} changed: {c}"
            );
        }
        assert!(
            kind_only <= 1,
            "darwin vs {other}: {kind_only} kind-only changes"
        );
    }

    // Environment variables, each platform-specific in the build itself:
    // - DEVELOPER_DIR: read off the environment handed to a check that git
    //   is the Command Line Tools stub (a module only the macOS build ships);
    // - COMPUTER_USE_SWIFT_NODE_PATH: read by the stand-in the Linux and
    //   Windows builds carry for the macOS-only native computer-use module
    //   (after it throws "only available on macOS"); the macOS build embeds
    //   the native module itself and reads no variable for it;
    // - OSTYPE: read on a POSIX path only (a cygwin/msys check) that the
    //   Windows build leaves out;
    // - comspec: the Windows shell, and TERMINUS_SUBLIME, read off a copy
    //   of the environment by a terminal's Unicode check: both in modules
    //   only the Windows build ships.
    // WINDIR is in every build: lists of variables the shell and sandbox
    // code treat specially name it (the macOS build also reads it in the
    // computer-use executor's Windows branch).
    assert_eq!(strs(&d_linux["env"]["removed"]), set(&["DEVELOPER_DIR"]));
    assert_eq!(
        strs(&d_linux["env"]["added"]),
        set(&["COMPUTER_USE_SWIFT_NODE_PATH"])
    );
    assert_eq!(
        strs(&d_win["env"]["removed"]),
        set(&["DEVELOPER_DIR", "OSTYPE"])
    );
    assert_eq!(
        strs(&d_win["env"]["added"]),
        set(&[
            "COMPUTER_USE_SWIFT_NODE_PATH",
            "TERMINUS_SUBLIME",
            "comspec"
        ])
    );

    // Prompts: the computer-use prompts are in the macOS build only, in
    // the modules only it ships (where WINDIR is read). (The Windows build
    // also lacks a message of the entry point's POSIX path check, but
    // that is an error for the user: returned to a helper that shows it,
    // it is no prompt on any platform.)
    let gone_linux = strs(&d_linux["prompts"]["removed"]);
    let gone_win = strs(&d_win["prompts"]["removed"]);
    // The computer-use tools' descriptions and their pieces, its prompts
    // and its results' messages (1,255 on 2.1.332 as of this analysis).
    assert!(gone_linux.len() >= 60, "{gone_linux:?}");
    assert_eq!(gone_linux, gone_win);
    let windir_modules: BTreeSet<String> = s_mac["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "WINDIR")
        .flat_map(|e| e["sites"].as_array().unwrap().iter())
        .map(|s| s["module"].as_str().unwrap().to_string())
        .collect();
    // Ids that only grew longer on macOS (see the changed prompts above)
    // name texts the other builds hold under the shorter id.
    let changed: Vec<String> = d_linux["prompts"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}-", c["id"].as_str().unwrap()))
        .collect();
    let renamed = |id: &str| changed.iter().any(|c| id.starts_with(c.as_str()));
    let mac_only: Vec<&Value> = prompts(&s_mac, &gone_linux);
    assert_eq!(mac_only.len(), gone_linux.len());
    let mac_only: Vec<&Value> = mac_only
        .into_iter()
        .filter(|p| !renamed(p["id"].as_str().unwrap()))
        .collect();
    let mac_only_modules: BTreeSet<String> = mac_only.iter().flat_map(|p| modules_of(p)).collect();
    // At most six modules: the computer-use executor and prompts, and
    // since texts follow calls into other chunks, a few shared chunks
    // whose texts are handed to the macOS-only computer-use modules (its
    // skill's descriptions, a schema's parameter descriptions) and so
    // reach a model on macOS only.
    assert!(
        mac_only_modules.len() <= 6 && !mac_only_modules.is_disjoint(&windir_modules),
        "{mac_only_modules:?} vs WINDIR in {windir_modules:?}"
    );
    let (linux_text, win_text) = (build_text(&linux), build_text(&win));
    // Known gap, left visible: a text or two the other builds hold too
    // (in the stand-in they carry for the macOS-only computer-use module)
    // is found on macOS only, where the real module's flows reach a tool.
    // And three guesses of the prose rule: on macOS their chunk (the
    // computer-use executor's) has placed texts, elsewhere none, and the
    // rule does not guess in a chunk where nothing is placed
    // (docs/guide/surface.md) — there the native module is a stand-in.
    let mut elsewhere = Vec::new();
    let mut short = Vec::new();
    for p in &mac_only {
        let part = static_part(p);
        // A piece of a tool's description, a parameter's or a tool's
        // result can be a few words between holes (made up: `${v1} is not
        // a ${v2}.`): a static run under twenty bytes occurs in any build,
        // so it says nothing about where else the text is — left out, and
        // counted (65 of 1,253 on 2.1.332 since the computer-use results'
        // pieces are followed: at most one in ten).
        if part.len() < 20 {
            short.push(p["id"].to_string());
            continue;
        }
        if linux_text.contains(&part) || win_text.contains(&part) {
            elsewhere.push(p["id"].to_string());
        }
    }
    assert!(
        short.len() * 10 <= mac_only.len(),
        "{} of {}: {short:?}",
        short.len(),
        mac_only.len()
    );
    assert!(elsewhere.len() <= 5, "{elsewhere:?}");
}
