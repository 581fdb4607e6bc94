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
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn every_tool_has_a_description_and_an_input_schema() {
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

/// Input schemas built the ways the newest builds build them: a question's
/// schema made by a function from its options' schema, one property read
/// from another schema's `.shape`, properties spread in under a flag, and
/// descriptions chosen at run time — on a single bundle and a code-split
/// build.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn input_schemas_built_by_functions_and_flags() {
    for v in ["2.1.240", "2.1.332"] {
        let s = surface(&fetch(v, "darwin-arm64"));
        let ask = &tool(&s, "AskUserQuestion")["input_schema"];
        let top: BTreeSet<&str> = ask["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(top.contains("questions"), "{v}: {top:?}");
        // Not the options' schema handed back by the question's builder.
        assert!(!top.contains("label"), "{v}: {top:?}");
        let question = &ask["properties"]["questions"]["items"]["properties"];
        for k in ["question", "header", "options", "multiSelect"] {
            assert!(
                question[k].as_object().is_some_and(|p| !p.is_empty()),
                "{v}: questions[].{k} = {}",
                question[k]
            );
        }
        assert!(
            question["options"]["items"]["properties"]["label"]["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{v}: {question}"
        );
        // A description chosen by a flag keeps both texts.
        let questions = ask["properties"]["questions"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(questions.contains("${v1 ? `"), "{v}: {questions}");
        // A parameter spread in under a flag is there, not required.
        let send = tool(&s, "SendMessage");
        assert!(
            send["input_schema"]["properties"]["notify_when_idle"]["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{v}: {send}"
        );
        assert!(!required(send).contains(&"notify_when_idle"));
    }
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn the_same_version_on_two_platforms_has_the_same_tools() {
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
    let re =
        regex::Regex::new(r#"\{type:"(?:local|local-jsx|prompt)",name:"([^"]+)"[,}]"#).unwrap();
    extracted_js(exe)
        .iter()
        .flat_map(|t| re.captures_iter(t).map(|c| c[1].to_string()))
        .collect()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn every_slash_command_object_is_listed() {
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
            assert!(
                ["local", "local-jsx", "prompt", "skill", "workflow"]
                    .contains(&c["kind"].as_str().unwrap()),
                "{c}"
            );
        }
    }
}

/// The JS files of an extracted build, as text.
fn extracted_js(exe: &Path) -> Vec<String> {
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
    let mut texts = Vec::new();
    let mut stack = vec![out];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "js") {
                texts.push(String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned());
            }
        }
    }
    texts
}

/// The keys at the top level of the object literal opening at `t[i]`
/// (`{`), by a simple scan: strings skipped, brackets counted.
fn literal_keys(t: &[u8], i: usize) -> Vec<String> {
    let key = regex::bytes::Regex::new(r#"^(?:([A-Za-z_$][\w$]*)|"([^"]*)")\s*:"#).unwrap();
    let (mut depth, mut j, mut expect) = (0usize, i, true);
    let mut keys = Vec::new();
    while j < t.len() {
        let c = t[j];
        match c {
            b'"' | b'\'' | b'`' => {
                j += 1;
                while j < t.len() && t[j] != c {
                    j += if t[j] == b'\\' { 2 } else { 1 };
                }
                expect = false;
            }
            b'{' | b'[' | b'(' => {
                depth += 1;
                expect = depth == 1;
            }
            b'}' | b']' | b')' => {
                depth -= 1;
                if depth == 0 {
                    return keys;
                }
            }
            b',' if depth == 1 => expect = true,
            _ if depth == 1 && expect => {
                if let Some(k) = key.captures(&t[j..t.len().min(j + 200)]) {
                    let k = k.get(1).or(k.get(2)).unwrap();
                    keys.push(String::from_utf8_lossy(k.as_bytes()).into_owned());
                }
                expect = false;
            }
            _ => {}
        }
        j += 1;
    }
    keys
}

/// The raw-text baseline of the settings keys: the top-level keys of the
/// largest object literal opening with `$schema:` that has `permissions`.
fn raw_settings_keys(texts: &[String]) -> BTreeSet<String> {
    let mut best: Vec<String> = Vec::new();
    for t in texts {
        for (i, _) in t.match_indices("{$schema:") {
            let k = literal_keys(t.as_bytes(), i);
            if k.iter().any(|k| k == "permissions") && k.len() > best.len() {
                best = k;
            }
        }
    }
    best.into_iter().collect()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn settings_keys_hold_the_raw_text_baseline() {
    for v in ["2.1.220", "2.1.260", "2.1.332"] {
        let exe = fetch(v, "darwin-arm64");
        let raw = raw_settings_keys(&extracted_js(&exe));
        assert!(raw.len() >= 100, "{v}: baseline of {} keys", raw.len());
        let s = json(&["surface", exe.to_str().unwrap(), "--only", "settings"]);
        let settings = s["settings"].as_array().unwrap();
        let keys: BTreeSet<String> = settings
            .iter()
            .map(|x| x["key"].as_str().unwrap().to_string())
            .collect();
        let missing: Vec<&String> = raw.difference(&keys).collect();
        assert!(missing.is_empty(), "{v}: not listed: {missing:?}");
        // Typed, described, nested objects as dotted keys.
        let typed = settings.iter().filter(|x| x["type"] != "any").count();
        assert!(typed * 10 >= settings.len() * 9, "{v}: {typed} typed");
        let described = settings.iter().filter(|x| x["description"].is_string());
        assert!(described.count() * 2 >= settings.len());
        let get = |k: &str| settings.iter().find(|x| x["key"] == k).unwrap();
        assert_eq!(get("permissions")["type"], "object");
        assert_eq!(get("permissions.allow")["type"], "array");
        // Known gap, left visible: 2.1.260 builds `env`'s record with a
        // constructor the reconstruction does not recognise yet.
        if v != "2.1.260" {
            assert_eq!(get("env")["type"], "object");
        }
        assert!(!get("model")["sites"].as_array().unwrap().is_empty());
    }
}

/// Every string literal shaped like a model id, by a regular expression
/// over the raw text.
fn raw_model_ids(texts: &[String]) -> BTreeSet<String> {
    let re = regex::Regex::new(
        r#""(claude-(?:\d{1,2}-){1,2}[a-z]{3,}|claude-[a-z]{3,}(?:-\d{1,2}){1,2}|claude-\d{1,2}(?:-\d{1,2})?)((?:-(?:\d{8}|[a-z]{3,})){0,2})""#,
    )
    .unwrap();
    // A literal only ever tested as a substring (`includes`, `startsWith`)
    // may be a prefix: not a model.
    let mut ids = BTreeSet::new();
    for t in texts {
        for c in re.captures_iter(t) {
            let at = c.get(0).unwrap().start();
            let before = &t[at.saturating_sub(16)..at];
            // Quoted inside a code span of a prompt's prose (`\`m="…"\``
            // in a template literal): prose, not a literal of its own.
            let end = c.get(0).unwrap().end();
            let near = |a: usize, b: usize| t.get(a..b).is_some_and(|x| x.contains("\\`"));
            let in_prose = near(at.saturating_sub(40), at) && near(end, (end + 40).min(t.len()));
            if !in_prose
                && !["includes(", "startsWith(", "endsWith(", "indexOf("]
                    .iter()
                    .any(|m| before.ends_with(m))
            {
                ids.insert(format!("{}{}", &c[1], &c[2]));
            }
        }
    }
    ids
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn models_hold_every_model_id_literal() {
    for (v, p) in [
        ("2.1.220", "darwin-arm64"),
        ("2.1.260", "darwin-arm64"),
        ("2.1.332", "darwin-arm64"),
    ] {
        let exe = fetch(v, p);
        let raw = raw_model_ids(&extracted_js(&exe));
        assert!(raw.len() >= 20, "{v}: baseline of {} ids", raw.len());
        let s = json(&["surface", exe.to_str().unwrap(), "--only", "models"]);
        let models = s["models"].as_array().unwrap();
        let ids: BTreeSet<String> = models
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect();
        let missing: Vec<&String> = raw.difference(&ids).collect();
        assert!(missing.is_empty(), "{v}: not listed: {missing:?}");
        assert!(!ids.contains("claude-code"));
        // No id cut at a dot or from a longer word: each is a whole literal
        // somewhere (`"claude-1"` is not listed from `"claude-1.3"`).
        let texts = extracted_js(&exe);
        for id in &ids {
            let whole = [format!("\"{id}\""), format!("'{id}'"), format!("`{id}`")];
            assert!(
                texts
                    .iter()
                    .any(|t| whole.iter().any(|w| t.contains(w.as_str()))),
                "{v}: {id} is never a literal of its own"
            );
        }
        // The default of an alias, where the build's model table says so.
        let defaults: Vec<&Value> = models
            .iter()
            .filter(|m| {
                m["used_as"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|u| u == "default")
            })
            .collect();
        assert!(
            defaults
                .iter()
                .any(|m| m["aliases"].as_array().unwrap().iter().any(|a| a == "opus")),
            "{v}: no default for opus: {defaults:?}"
        );
        assert!(
            models
                .iter()
                .all(|m| !m["sites"].as_array().unwrap().is_empty()),
            "{v}"
        );
    }
}

/// The tools whose prompt is assembled at run time (pieces, conditions,
/// constants, helpers): each has a description assembled by partial
/// evaluation, with named holes and its pieces listed.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn assembled_tool_descriptions_on_single_bundle_and_code_split_builds() {
    const ASSEMBLED: [&str; 11] = [
        "Bash",
        "Edit",
        "Read",
        "Write",
        "Grep",
        "Glob",
        "Agent",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
        "Skill",
    ];
    for v in ["2.1.220", "2.1.240", "2.1.332"] {
        let s = surface(&fetch(v, "darwin-arm64"));
        let mut with_holes = 0;
        for name in ASSEMBLED {
            // On 2.1.332 the Skill tool's object holds a method that loads
            // a chunk (`import.meta.require`): found since snippets are
            // parsed with module syntax.
            let t = tool(&s, name);
            let d = t["description"].as_str().unwrap();
            let bytes = t["prompt_bytes"].as_u64().unwrap();
            eprintln!("{v} {name}: {} bytes, {bytes} static", d.len());
            assert!(bytes >= 200, "{v}: {name} is {bytes} static bytes: {d}");
            assert!(
                !d.contains("${…}"),
                "{v}: {name} has an unnamed run-time part: {d}"
            );
            if d.contains("${") {
                with_holes += 1;
                // Every hole it shows is listed with what it stands for.
                assert!(
                    !t["variables"].as_array().unwrap().is_empty(),
                    "{v}: {name}: {t}"
                );
            }
        }
        assert!(with_holes >= 6, "{v}: {with_holes} with holes");
        // Bash's prompt is the longest assembled one, from many pieces.
        let bash = tool(&s, "Bash");
        assert!(bash["pieces"].as_array().unwrap().len() >= 20, "{v}");
        assert!(bash["description"].as_str().unwrap().len() >= 5_000, "{v}");
    }
}

/// Bundled skills registered through a registration function, found by
/// that structure: each a `skill` command with its description and whether
/// the model may invoke it.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn bundled_skills_are_commands() {
    for (v, at_least) in [("2.1.240", 33), ("2.1.332", 29)] {
        let s = surface(&fetch(v, "darwin-arm64"));
        let skills: Vec<&Value> = s["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "skill")
            .collect();
        eprintln!("{v}: {} bundled skills", skills.len());
        assert!(skills.len() >= at_least, "{v}: {} skills", skills.len());
        for c in &skills {
            assert!(c["description"].is_string(), "{v}: {c}");
        }
        // Some may be invoked by the model, some only by the user.
        let model = |b: bool| skills.iter().filter(|c| c["model_invocable"] == b).count();
        assert!(model(true) >= 10 && model(false) >= 1, "{v}");
    }
}
