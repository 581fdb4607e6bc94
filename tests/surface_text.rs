//! The text surface of a build — environment variables, prompts — and flags
//! of any prefix, on fixtures of our own and on real builds.

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Every key of a namespace table (`NAME:()=>x`) whose binding is a spec
/// of the typed environment (`x=codec.str()`, `codec.bool()` …), by regular
/// expressions over the raw text of each module.
fn raw_spec_names(dir: &Path) -> BTreeSet<String> {
    let binding =
        regex::Regex::new(r"([A-Za-z_$][\w$]*)=[A-Za-z_$][\w$]*\.(?:str|rawStr|bool|triBool|triBoolOr|int|names|enum)\(")
            .unwrap();
    let entry = regex::Regex::new(r"[{,]([A-Z_][A-Za-z0-9_]*):\(\)=>([A-Za-z_$][\w$]*)").unwrap();
    let mut out = BTreeSet::new();
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    for p in files {
        // JavaScript modules: `….js`, or the one script of a single-bundle
        // build (`cli`, no extension).
        if p.extension().is_some_and(|x| x != "js") {
            continue;
        }
        let t = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        let specs: BTreeSet<&str> = binding
            .captures_iter(&t)
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        for c in entry.captures_iter(&t) {
            if specs.contains(&c[2]) {
                out.insert(c[1].to_string());
            }
        }
    }
    out
}

/// Every `process.env.NAME` in the JS modules of an extracted build, by a
/// regular expression over the raw text: the baseline `.env` must hold.
fn raw_env_names(dir: &Path) -> BTreeSet<String> {
    let re =
        regex::Regex::new(r"(?:^|[^A-Za-z0-9_$])process\.env\.([A-Za-z_$][A-Za-z0-9_$]*)").unwrap();
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if e.path().extension().is_none_or(|x| x == "js")
                && e.file_name() != "manifest.json"
            {
                let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
                for c in re.captures_iter(&text) {
                    out.insert(c[1].to_string());
                }
            }
        }
    }
    out
}

fn surface(target: &str) -> serde_json::Value {
    json(&["surface", target, "--only", "env,prompts", "--quiet"])
}

/// A script of our own reading variables every way the analysis knows.
const ENV_JS: &str = r#"function truthy(v) { return v === "1" || v === "true"; }
function envFlag(name) { return truthy(process.env[name]); }
var KEY = "OUR_BRACKET_CONST";
var { OUR_DESTRUCTURED, OUR_DEFAULTED = "dflt" } = process.env;
if (truthy(process.env.OUR_MEMBER)) console.log(process.env[KEY], process.env["OUR_BRACKET"]);
if (envFlag("OUR_HELPER")) console.log("OUR_IN" in process.env);
"#;

#[test]
fn env_fixture_every_way() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("env.js");
    std::fs::write(&p, ENV_JS).unwrap();
    let v = surface(p.to_str().unwrap());
    let how: HashMap<&str, Vec<&str>> = v["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["how"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| h.as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    let expect = [
        ("OUR_MEMBER", "member"),
        ("OUR_BRACKET", "bracket"),
        ("OUR_BRACKET_CONST", "bracket"),
        ("OUR_DESTRUCTURED", "destructured"),
        ("OUR_DEFAULTED", "destructured"),
        ("OUR_HELPER", "helper"),
        ("OUR_IN", "in"),
    ];
    for (name, way) in expect {
        assert_eq!(how.get(name), Some(&vec![way]), "{name}: {how:?}");
    }
    assert_eq!(how.len(), expect.len(), "{how:?}");
    let d = v["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "OUR_DEFAULTED")
        .unwrap();
    assert_eq!(d["default"], "dflt");
    assert!(d["sites"][0]["raw_line"].as_u64().unwrap() == 4);
}

#[test]
fn prompts_export_refuses_a_link_and_lists_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.js");
    let body = "Keep your answers short and plain, and check each step you take against the files you were given before you report that the work is done, and say so when you are unsure about any part of it";
    std::fs::write(
        &p,
        format!("var a = \"You are an assistant of our own making. {body}.\";\nvar b = `Summarize the conversation for ${{who}}. {body}.`;\n"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let v = json(&[
        "surface",
        p.to_str().unwrap(),
        "--only",
        "prompts",
        "--export",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let prompts = v["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 2);
    assert!(prompts.iter().any(|p| p["kind"] == "system"));
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let entries = index["prompts"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    for e in entries {
        let bytes = std::fs::read(out.join(e["file"].as_str().unwrap())).unwrap();
        use sha2::Digest;
        assert_eq!(e["sha256"], hex::encode(sha2::Sha256::digest(&bytes)));
    }
    // A second run refuses the files already there, and with --force
    // replaces a planted link instead of writing through it.
    let again = bin()
        .args([
            "surface",
            p.to_str().unwrap(),
            "--only",
            "prompts",
            "--quiet",
        ])
        .arg("--export")
        .arg(&out)
        .output()
        .unwrap();
    failed("a second --export to the same file", &again);
    #[cfg(unix)]
    {
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let f = out.join("index.json");
        std::fs::remove_file(&f).unwrap();
        std::os::unix::fs::symlink(&victim, &f).unwrap();
        let forced = bin()
            .args([
                "surface",
                p.to_str().unwrap(),
                "--only",
                "prompts",
                "--quiet",
                "--force",
            ])
            .arg("--export")
            .arg(&out)
            .output()
            .unwrap();
        assert!(forced.status.success());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(
            !std::fs::symlink_metadata(&f)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

/// The raw-text baseline of `process.env.NAME` is contained in `.env`, on a
/// single-bundle and a code-split build.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_env_holds_the_raw_text_baseline() {
    for v in ["2.1.220", "2.1.240", "2.1.332"] {
        let exe = fetch(v, "darwin-arm64");
        let dir = tempfile::tempdir().unwrap();
        let out = bin()
            .args(["extract", exe.to_str().unwrap(), "--quiet", "-o"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        let raw = raw_env_names(dir.path());
        assert!(raw.len() > 100, "{v}: {} names", raw.len());
        let s = surface(exe.to_str().unwrap());
        let found: BTreeSet<String> = s["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        let missing: Vec<&String> = raw.difference(&found).collect();
        assert!(missing.is_empty(), "{v}: missing {missing:?}");
        // Other ways than the member read are found on real builds too.
        let ways: BTreeSet<&str> = s["env"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| e["how"].as_array().unwrap().iter())
            .map(|h| h.as_str().unwrap())
            .collect();
        assert!(
            ways.contains("destructured") && ways.contains("bracket"),
            "{v}: {ways:?}"
        );
        {
            // The typed environment: every key of a namespace whose value
            // is a spec (`NAME: () => x` with `x = codec.str()`), read by a
            // proxy (2.1.332) or a getter per key (2.1.220, 2.1.240).
            let specs = raw_spec_names(dir.path());
            assert!(specs.len() > 800, "{v}: {} specs", specs.len());
            let missing: Vec<&String> = specs.difference(&found).collect();
            assert!(missing.is_empty(), "{v}: specs missing {missing:?}");
            assert!(ways.contains("registry"), "{v}: {ways:?}");
        }
        // The system prompt's identity piece.
        let prompts = s["prompts"].as_array().unwrap();
        assert!(
            prompts.iter().any(|p| p["kind"] == "system"
                && p["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("You are Claude Code")),
            "{v}: no identity piece"
        );
    }
}

/// The typed environment is found however the build reads it: the counts
/// of the last build with getters per key and the first with a proxy are
/// close (they were 503 and 1,440 when only the proxy was followed).
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn env_counts_hold_across_the_change_of_reader() {
    let count = |v: &str| {
        let exe = fetch(v, "darwin-arm64");
        let s = json(&["surface", exe.to_str().unwrap(), "--only", "env", "--quiet"]);
        s["env"].as_array().unwrap().len() as f64
    };
    let (a, b) = (count("2.1.316"), count("2.1.317"));
    assert!(
        a > 1200.0 && (a - b).abs() / b < 0.05,
        "2.1.316: {a}, 2.1.317: {b}"
    );
}

/// Prompts with the same text keep their id from 2.1.220 to 2.1.260.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_prompt_ids_are_stable() {
    let a = surface(fetch("2.1.220", "darwin-arm64").to_str().unwrap());
    let b = surface(fetch("2.1.260", "darwin-arm64").to_str().unwrap());
    let ids = |v: &serde_json::Value| -> HashMap<String, String> {
        v["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["text"].as_str().unwrap().to_string(),
                    p["id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let (kept, same) = kept_ids(&ids(&a), &ids(&b));
    assert!(same > 20, "{same} shared texts");
    assert!(kept * 10 >= same * 9, "{kept} of {same} kept their id");
}

/// Of the texts two builds share (text → id each), how many keep their
/// id, and how many there are.
fn kept_ids(a: &HashMap<String, String>, b: &HashMap<String, String>) -> (usize, usize) {
    let same: Vec<&String> = a.keys().filter(|t| b.contains_key(*t)).collect();
    let kept = same.iter().filter(|t| a[**t] == b[**t]).count();
    (kept, same.len())
}

/// The schema descriptions of a single bundle (2.1.240) and a code-split
/// build (2.1.332): each text has one home (not also a prompt), ids are
/// unique, the SDK's control requests are named by their subtype, and an
/// identical text keeps its id from one build to the next.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_schema_descriptions_are_placed_and_keep_their_ids() {
    let mut by_build = Vec::new();
    for v in ["2.1.240", "2.1.332"] {
        let exe = fetch(v, "darwin-arm64");
        let s = json(&[
            "surface",
            exe.to_str().unwrap(),
            "--only",
            "prompts,schemas",
            "--quiet",
        ]);
        let schemas = s["schemas"].as_array().unwrap();
        assert!(schemas.len() > 1000, "{v}: {} descriptions", schemas.len());
        let prompts: BTreeSet<&str> = s["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        let mut ids = BTreeSet::new();
        let mut named = 0;
        for x in schemas {
            let (id, text) = (x["id"].as_str().unwrap(), x["text"].as_str().unwrap());
            assert!(ids.insert(id), "{v}: id {id} twice");
            assert!(!prompts.contains(text), "{v}: {id} is a prompt too");
            assert_eq!(x["bytes"].as_u64(), Some(text.len() as u64));
            if let (Some(schema), Some(field)) = (x["schema"].as_str(), x["field"].as_str()) {
                named += 1;
                assert!(id.starts_with(&format!("{schema}.{field}")), "{v}: {id}");
            }
        }
        assert!(named > 200, "{v}: {named} named");
        // The interrupt request: described as a whole and field by field.
        let interrupt: Vec<&Value> = schemas
            .iter()
            .filter(|x| x["schema"] == "interrupt")
            .collect();
        assert!(interrupt.iter().any(|x| x["field"].is_null()), "{v}");
        assert!(interrupt.iter().any(|x| x["field"].is_string()), "{v}");
        by_build.push(
            schemas
                .iter()
                .map(|x| {
                    (
                        x["text"].as_str().unwrap().to_string(),
                        x["id"].as_str().unwrap().to_string(),
                    )
                })
                .collect::<HashMap<String, String>>(),
        );
    }
    let (kept, same) = kept_ids(&by_build[0], &by_build[1]);
    assert!(same > 500, "{same} shared texts");
    assert!(kept * 100 >= same * 95, "{kept} of {same} kept their id");
}

/// On 2.1.332 names of another prefix read through flag getters are flags.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_flags_of_any_prefix() {
    let exe = fetch("2.1.332", "darwin-arm64");
    let v = json(&["flags", exe.to_str().unwrap(), "--quiet"]);
    let guarded: Vec<&serde_json::Value> = v["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["name"].as_str().unwrap().starts_with("bot_protected_"))
        .collect();
    assert!(
        guarded.len() >= 100,
        "{} bot_protected_ flags",
        guarded.len()
    );
    assert!(guarded.iter().all(|f| f["kind"] == "feature"));
    assert!(
        guarded
            .iter()
            .any(|f| !f["defaults"].as_array().unwrap().is_empty())
    );
}

/// From 2.1.330 to 2.1.331 the same flags are read through other shapes —
/// a registry filled by `register(fn)`, then a holder installed by a setter
/// and read as `port()?.cached(name, d)`, and constants moved to another
/// chunk than their reads: every name in both builds keeps its kind.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_flags_keep_their_kind_across_read_shapes() {
    let kinds = |v: &str| -> HashMap<String, String> {
        let exe = fetch(v, "darwin-arm64");
        json(&["flags", exe.to_str().unwrap(), "--quiet"])["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["kind"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let (a, b) = (kinds("2.1.330"), kinds("2.1.331"));
    let common = a.keys().filter(|n| b.contains_key(*n)).count();
    assert!(common > 3000, "{common} names in both");
    let moved: Vec<(&String, &String, &String)> = a
        .iter()
        .filter_map(|(n, k)| b.get(n).filter(|k2| *k2 != k).map(|k2| (n, k, k2)))
        .collect();
    // No read is lost: every feature flag of 2.1.330 is one in 2.1.331 (21
    // were not, before holders, their aliases and imported constants were
    // followed).
    let lost: Vec<_> = moved.iter().filter(|m| m.1 == "feature").collect();
    assert!(
        lost.is_empty(),
        "{} no longer feature: {lost:?}",
        lost.len()
    );
    // Known gap, left visible: a few reads of 2.1.330 go through
    // registries of other shapes (`registerFeature(fn)` storing into a
    // field read as `reg.feature?.(name, d)`, a registry filled with a
    // function not classified) and stay config there.
    assert!(moved.len() <= 7, "{} moved: {moved:?}", moved.len());
}

/// Every tool's prompt is among the prompts: the longest static part of
/// each tool's evaluated prompt is in some prompt's text.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_tool_prompts_are_prompts() {
    for (v, p) in [
        ("2.1.220", "darwin-arm64"),
        ("2.1.260", "darwin-arm64"),
        ("2.1.332", "darwin-arm64"),
    ] {
        let exe = fetch(v, p);
        let s = json(&[
            "surface",
            exe.to_str().unwrap(),
            "--only",
            "tools,prompts",
            "--quiet",
        ]);
        let texts: Vec<&str> = s["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        let mut checked = 0;
        for t in s["tools"].as_array().unwrap() {
            if t["prompt_bytes"].as_u64().unwrap() == 0 {
                continue;
            }
            let d = t["description"].as_str().unwrap();
            let Some(part) = d
                .split("${…}")
                .map(str::trim)
                .max_by_key(|x| x.len())
                .filter(|x| x.len() >= 20)
            else {
                continue;
            };
            let probe: String = part.chars().take(80).collect();
            assert!(
                texts.iter().any(|x| x.contains(probe.as_str())),
                "{v}/{p}: the prompt of {} is not among the prompts",
                t["name"]
            );
            checked += 1;
        }
        assert!(checked >= 30, "{v}/{p}: {checked} tool prompts checked");
    }
}

/// The prose rule guesses only in modules where some text has a kind: on a
/// code-split build (2.1.332) no `other` prompt sits in a chunk where every
/// prompt is `other` (about 400 did before); a single bundle (2.1.240) is
/// one module and keeps its guesses.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_prose_guesses_stay_in_chunks_with_placed_texts() {
    for (v, at_least) in [("2.1.240", 100), ("2.1.332", 300)] {
        let s = surface(fetch(v, "darwin-arm64").to_str().unwrap());
        let prompts = s["prompts"].as_array().unwrap();
        let modules = |p: &Value| -> Vec<String> {
            p["sites"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["module"].as_str().unwrap().to_string())
                .collect()
        };
        let placed: BTreeSet<String> = prompts
            .iter()
            .filter(|p| p["kind"] != "other")
            .flat_map(modules)
            .collect();
        let guesses: Vec<&Value> = prompts.iter().filter(|p| p["kind"] == "other").collect();
        assert!(guesses.len() >= at_least, "{v}: {} guesses", guesses.len());
        for p in guesses {
            assert!(
                modules(p).iter().any(|m| placed.contains(m)),
                "{v}: {} guessed in a chunk where nothing is placed",
                p["id"]
            );
        }
    }
}
