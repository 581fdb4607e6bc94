//! `surface` on real builds: the built-in tools with their input schemas,
//! and the slash commands, checked against baselines computed here.

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The builds the surface is proven on: a single bundle, two code-split
/// builds, and the other platforms.
const BUILDS: [(&str, &str); 5] = [
    ("2.1.220", "darwin-arm64"),
    ("2.1.260", "darwin-arm64"),
    ("2.1.332", "darwin-arm64"),
    ("2.1.332", "linux-x64"),
    ("2.1.332", "win32-x64"),
];

fn surface(exe: &Path) -> Value {
    json(&["surface", exe.to_str().unwrap(), "--only", "tools,commands"])
}

fn tool<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn required(t: &Value) -> Vec<&str> {
    t["input_schema"]["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn every_tool_has_a_description_and_an_input_schema() {
    if offline() {
        return;
    }
    for (v, p) in BUILDS {
        let s = surface(&fetch(v, p));
        let tools = s["tools"].as_array().unwrap();
        assert!(tools.len() >= 40, "{v}/{p}: {} tools", tools.len());
        for t in tools {
            let d = t["description"].as_str().unwrap();
            assert!(
                !d.trim().is_empty(),
                "{v}/{p}: {} has no description",
                t["name"]
            );
            // Known gap, left visible: 2.1.260's Artifact schema is built in
            // a shape the reconstruction does not follow yet.
            if (v, t["name"].as_str().unwrap()) == ("2.1.260", "Artifact") {
                assert!(t["runtime"].to_string().contains("not reconstructed"));
                continue;
            }
            assert_eq!(
                t["input_schema"]["type"], "object",
                "{v}/{p}: {} has no input schema",
                t["name"]
            );
            assert!(!t["sites"].as_array().unwrap().is_empty());
        }
        let bash = tool(&s, "Bash");
        assert_eq!(
            bash["input_schema"]["properties"]["command"]["type"],
            "string"
        );
        assert!(required(bash).contains(&"command"), "{v}/{p}: {bash}");
        let edit = tool(&s, "Edit");
        for k in ["file_path", "old_string", "new_string"] {
            assert_eq!(edit["input_schema"]["properties"][k]["type"], "string");
            assert!(required(edit).contains(&k), "{v}/{p}: Edit {k}");
        }
        let read = tool(&s, "Read");
        assert_eq!(
            read["input_schema"]["properties"]["file_path"]["type"],
            "string"
        );
        assert!(required(read).contains(&"file_path"));
    }
}

#[test]
fn the_same_version_on_two_platforms_has_the_same_tools() {
    if offline() {
        return;
    }
    let strip = |s: Value| -> Vec<(String, String, Value)> {
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
    };
    let mac = strip(surface(&fetch("2.1.332", "darwin-arm64")));
    let linux = strip(surface(&fetch("2.1.332", "linux-x64")));
    assert_eq!(mac.len(), linux.len());
    for (a, b) in mac.iter().zip(&linux) {
        assert_eq!(a, b);
    }
}

/// Every `{type:"local"|"local-jsx"|"prompt",name:"…"}` in the build's
/// JavaScript, read from the extracted modules' raw text.
fn raw_commands(exe: &Path) -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    bin()
        .args([
            "extract",
            exe.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let re =
        regex::Regex::new(r#"\{type:"(?:local|local-jsx|prompt)",name:"([^"]+)"[,}]"#).unwrap();
    let mut names = BTreeSet::new();
    let mut stack = vec![out];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "js") {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                names.extend(re.captures_iter(&text).map(|c| c[1].to_string()));
            }
        }
    }
    names
}

#[test]
fn every_slash_command_object_is_listed() {
    if offline() {
        return;
    }
    for (v, p) in [
        ("2.1.220", "darwin-arm64"),
        ("2.1.332", "darwin-arm64"),
        ("2.1.332", "win32-x64"),
    ] {
        let exe = fetch(v, p);
        let raw = raw_commands(&exe);
        assert!(
            raw.len() >= 50,
            "{v}/{p}: baseline of {} commands",
            raw.len()
        );
        let s = surface(&exe);
        let listed: BTreeSet<String> = s["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        let missing: Vec<&String> = raw.difference(&listed).collect();
        assert!(missing.is_empty(), "{v}/{p}: not listed: {missing:?}");
        for c in s["commands"].as_array().unwrap() {
            assert!(["local", "local-jsx", "prompt"].contains(&c["kind"].as_str().unwrap()));
        }
    }
}
