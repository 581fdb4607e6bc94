//! Locating roles and reconstructing workflows on fixtures written for these
//! tests (fixtures/js/) — checked against Node running the same fixture —
//! and on real Claude Code builds.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js")
        .join(p)
}

fn role<'a>(v: &'a serde_json::Value, role: &str) -> Vec<&'a serde_json::Value> {
    v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["role"] == role)
        .collect()
}

/// What a JavaScript engine builds from the fixture (Node runs our own fixture).
fn oracle() -> serde_json::Value {
    let out = std::process::Command::new("node")
        .arg(fixture("oracle.cjs"))
        .arg(fixture("single.js"))
        .output()
        .expect("node is needed for the oracle (CI installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn single_bundle_fixture_matches_node_byte_for_byte() {
    let single = fixture("single.js");
    let t = single.to_str().unwrap();
    let expected = oracle();
    let v = json(&["workflows", t]);
    let ws = v["workflows"].as_array().unwrap();
    assert_eq!(ws.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    bin()
        .args(["reconstruct", t, "-o", dir.path().to_str().unwrap()])
        .assert()
        .success();
    for e in expected.as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let script = e["script"].as_str().unwrap();
        let written = std::fs::read_to_string(dir.path().join(format!("{name}.js"))).unwrap();
        assert_eq!(
            written, script,
            "{name}: reconstruction equals what Node builds"
        );
        let w = ws.iter().find(|w| w["name"] == name).unwrap();
        assert_eq!(
            w["script"]["bytes"].as_u64().unwrap() as usize,
            script.len()
        );
        assert_eq!(w["hidden"], e["hidden"].as_bool().unwrap_or(false));
        assert_eq!(w["script"]["syntax_ok"], true, "{name}");
    }
    let review = ws.iter().find(|w| w["name"] == "code-review").unwrap();
    assert_eq!(review["phases"][2]["detail"], "rank — cap");
    let levels = review["levels"].as_array().unwrap();
    let row = |l: &serde_json::Value| {
        (
            l["level"].as_str().unwrap().to_string(),
            l["correctness_finders"].as_u64().unwrap(),
            l["cleanup_finders"].as_u64().unwrap(),
            l["initial_candidate_limit"].as_u64().unwrap(),
            l["sweep"].as_u64(),
            l["report_limit"].as_u64().unwrap(),
        )
    };
    assert_eq!(row(&levels[0]), ("high".into(), 2, 1, 15, None, 4));
    assert_eq!(row(&levels[1]), ("max".into(), 3, 1, 24, Some(5), 6));
    let second = ws.iter().find(|w| w["name"] == "second").unwrap();
    let opt = &second["options"][0];
    assert_eq!(opt["name"], "disableModelInvocation");
    assert_eq!(opt["kind"], "computed");
    assert_eq!(opt["flags"][0]["flag"], "tengu_fixture_avocet");
    assert_eq!(opt["flags"][0]["default"], false);
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("code-review.meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["workflow"]["hidden"], true);
    assert!(
        meta["workflow"]["dependencies"].as_array().unwrap().len() >= 5,
        "the dependency closure is listed"
    );
}

#[test]
fn single_bundle_fixture_roles() {
    let single = fixture("single.js");
    let v = json(&["locate", single.to_str().unwrap()]);
    assert!(
        v["absent"].as_array().unwrap().is_empty(),
        "{}",
        v["absent"]
    );
    let name = |r: &str| role(&v, r)[0]["name"].as_str().unwrap().to_string();
    assert_eq!(name("workflow-registrar"), "Reg");
    assert_eq!(name("workflow-lookup"), "Find");
    assert_eq!(name("workflows-init"), "Init");
    assert_eq!(
        role(&v, "workflows-init")[0]["original"],
        "initBundledWorkflows"
    );
    assert_eq!(name("review-instructions"), "Instructions");
    assert_eq!(name("review-routing-gate"), "RouteGate");
    let builders: Vec<_> = role(&v, "workflow-builder")
        .iter()
        .map(|b| (b["name"].as_str().unwrap(), b["workflow"].as_str().unwrap()))
        .collect();
    assert_eq!(
        builders,
        vec![("BuildReview", "code-review"), ("BuildSecond", "second")]
    );
    let reg = role(&v, "workflow-registrar")[0];
    let text = std::fs::read_to_string(&single).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("function Reg("))
        .unwrap()
        + 1;
    assert_eq!(reg["raw_start"], line);
}

fn split_build(dir: &Path) -> String {
    let read = |n: &str| std::fs::read(fixture(&format!("split/{n}"))).unwrap();
    let (reg, consts, build, lookup, cli) = (
        read("chunk-reg.js"),
        read("chunk-consts.js"),
        read("chunk-build.js"),
        read("chunk-lookup.js"),
        read("cli"),
    );
    let payload = build_payload(
        &[
            Spec::js("/$bunfs/root/chunk-reg.js", &reg),
            Spec::js("/$bunfs/root/chunk-consts.js", &consts),
            Spec::js("/$bunfs/root/chunk-build.js", &build),
            Spec::js("/$bunfs/root/chunk-lookup.js", &lookup),
            Spec::js("/$bunfs/root/cli", &cli),
        ],
        4,
    );
    let p = dir.join("split.elf");
    std::fs::write(&p, elf_with_section(&with_header(&payload, 8))).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn code_split_fixture_resolves_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let t = split_build(dir.path());
    let v = json(&["locate", &t]);
    assert_eq!(
        role(&v, "workflow-registrar")[0]["module"],
        "/$bunfs/root/chunk-reg.js"
    );
    let b = role(&v, "workflow-builder")[0];
    assert_eq!(
        (
            b["module"].as_str().unwrap(),
            b["workflow"].as_str().unwrap()
        ),
        ("/$bunfs/root/chunk-build.js", "split-flow")
    );
    assert_eq!(
        role(&v, "workflow-lookup")[0]["module"],
        "/$bunfs/root/chunk-lookup.js"
    );
    assert_eq!(
        role(&v, "workflows-init")[0]["original"],
        "initBundledWorkflows"
    );
    let absent: Vec<_> = v["absent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["role"].as_str().unwrap())
        .collect();
    assert_eq!(absent, vec!["review-instructions", "review-routing-gate"]);

    let out = dir.path().join("out");
    bin()
        .args(["reconstruct", &t, "-o", out.to_str().unwrap()])
        .assert()
        .success();
    let script = std::fs::read_to_string(out.join("split-flow.js")).unwrap();
    assert_eq!(
        script,
        "export const meta = {\n  name: 'split-flow',\n  phases: [{\"title\":\"One\",\"detail\":\"first → step\"},{\"title\":\"Two\"}],\n}\nlog(\"One + Two\")\n"
    );
    let w = json(&["workflows", &t]);
    let opt = &w["workflows"][0]["options"][0];
    assert_eq!(
        opt["flags"][0]["flag"], "tengu_split_gate",
        "flag constant imported from another chunk"
    );
}

#[test]
fn what_cannot_be_evaluated_is_reported_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cli.js");
    std::fs::write(
        &p,
        "var L=[];function R(e,t,r){L.push({source:\"built-in\",...t,script:e})}\nfunction B(){R(`export const meta = { name: 'x' }\n${Math.random()}`,{name:\"x\"})}\n",
    )
    .unwrap();
    let out = dir.path().join("o");
    let r = bin()
        .args([
            "reconstruct",
            p.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("`Math.random()`") && err.contains("cli.js:3"),
        "{err}"
    );
    assert!(
        !out.join("x.js").exists(),
        "nothing approximated is written"
    );
    let v = json(&["workflows", p.to_str().unwrap()]);
    assert_eq!(v["workflows"][0]["script"], serde_json::Value::Null);
    assert_eq!(v["workflows"][0]["script_error"]["line"], 3);
}

// ---- real builds ----

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_darwin_roles_at_the_teardowns_lines() {
    let v = json(&["locate", "npm:2.1.220/darwin-arm64"]);
    assert!(
        v["absent"].as_array().unwrap().is_empty(),
        "{}",
        v["absent"]
    );
    let start = |r: &str| role(&v, r)[0]["raw_start"].as_u64().unwrap();
    assert_eq!(start("workflow-registrar"), 13604);
    assert_eq!(start("workflow-lookup"), 13992);
    assert_eq!(start("workflows-init"), 16614);
    assert_eq!(start("review-routing-gate"), 23725);
    let builders = role(&v, "workflow-builder");
    assert_eq!(builders.len(), 2);
    let review = builders
        .iter()
        .find(|b| b["workflow"] == "code-review")
        .unwrap();
    assert_eq!(review["raw_start"], 15832);
    let instr = role(&v, "review-instructions")[0];
    let (s, e) = (
        instr["raw_start"].as_u64().unwrap(),
        instr["raw_end"].as_u64().unwrap(),
    );
    assert!(s >= 23710 && e <= 23725 && s <= e, "{s}–{e}");
    assert_eq!(
        role(&v, "workflows-init")[0]["original"],
        "initBundledWorkflows"
    );
}

fn scripts(target: &str) -> Vec<(String, bool, serde_json::Value)> {
    let v = json(&["workflows", target]);
    v["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["hidden"].as_bool().unwrap(),
                w["script"].clone(),
            )
        })
        .collect()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_workflows_on_three_platforms() {
    let darwin = json(&["workflows", "npm:2.1.220/darwin-arm64"]);
    let ws = darwin["workflows"].as_array().unwrap();
    let names: Vec<_> = ws.iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["code-review", "deep-research"]);
    let review = &ws[0];
    assert_eq!(review["hidden"], true);
    assert_eq!(ws[1]["hidden"], false);
    assert_eq!(review["script"]["newlines"], 352);
    assert_eq!(review["script"]["lines"], 353);
    assert_eq!(review["script"]["bytes"], 24_939);
    assert_eq!(review["script"]["syntax_ok"], true);
    assert_eq!(ws[1]["script"]["syntax_ok"], true);
    let levels: Vec<_> = review["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{} {}/{}/{}/{}/{}",
                l["level"].as_str().unwrap(),
                l["correctness_finders"],
                l["cleanup_finders"],
                l["initial_candidate_limit"],
                l["sweep"].as_u64().map_or("none".into(), |s| s.to_string()),
                l["report_limit"]
            )
        })
        .collect();
    assert_eq!(
        levels,
        vec![
            "high 3/1/48/none/10",
            "xhigh 5/1/80/8/15",
            "max 5/1/80/8/15"
        ]
    );
    let phases: Vec<_> = review["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        phases,
        vec!["Scope", "Find", "Verify", "Sweep", "Synthesize"]
    );

    let reference = scripts("npm:2.1.220/darwin-arm64");
    for platform in ["linux-x64", "win32-x64"] {
        let other = scripts(&format!("npm:2.1.220/{platform}"));
        assert_eq!(other, reference, "{platform}: the same scripts");
        let loc = json(&["locate", &format!("npm:2.1.220/{platform}")]);
        let b = role(&loc, "workflow-builder")[0]["name"].clone();
        assert_ne!(
            b, "gDd",
            "{platform} is found despite different minified names"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    bin()
        .args([
            "reconstruct",
            "npm:2.1.220/darwin-arm64",
            "--name",
            "code-review",
            "-o",
            dir.path().to_str().unwrap(),
        ])
        .assert()
        .success();
    let text = std::fs::read(dir.path().join("code-review.js")).unwrap();
    assert_eq!(text.len(), 24_939);
    use sha2::Digest;
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&text)),
        review["script"]["sha256"].as_str().unwrap()
    );
    assert!(
        !dir.path().join("deep-research.js").exists(),
        "--name limits the output"
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_260_code_split_roles_and_workflows() {
    code_split_roles_and_workflows("npm:2.1.260/darwin-arm64");
}

/// 2.1.332 (the newest build at the time) hands out a filtered copy of the
/// registrar's list and searches a merged list: the lookup is still found.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_332_code_split_roles_and_workflows() {
    let v = code_split_roles_and_workflows("npm:2.1.332/linux-x64");
    let lookup = role(&v, "workflow-lookup")[0];
    assert!(
        lookup["evidence"][1]
            .as_str()
            .unwrap()
            .contains("a filtered copy of the registrar's list"),
        "{lookup}"
    );
}

fn code_split_roles_and_workflows(target: &str) -> serde_json::Value {
    let v = json(&["locate", target]);
    let reg = role(&v, "workflow-registrar")[0];
    let builders = role(&v, "workflow-builder");
    assert_eq!(builders.len(), 1);
    assert_eq!(builders[0]["workflow"], "deep-research");
    assert_ne!(
        builders[0]["module"], reg["module"],
        "registrar and builder live in different chunks"
    );
    assert_eq!(
        role(&v, "workflows-init")[0]["original"],
        "initBundledWorkflows"
    );
    assert_eq!(role(&v, "workflow-lookup").len(), 1);
    let absent: Vec<_> = v["absent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["role"].as_str().unwrap())
        .collect();
    assert_eq!(absent, vec!["review-instructions", "review-routing-gate"]);
    let ws = scripts(target);
    assert_eq!(ws.len(), 1, "code-review is gone");
    assert_eq!(ws[0].0, "deep-research");
    assert_eq!(ws[0].2["syntax_ok"], true);
    v
}
