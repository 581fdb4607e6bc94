//! Flag classification and gate conditions, on our fixture and real builds.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};

fn single() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js/single.js")
        .display()
        .to_string()
}

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("claude.json");
    std::fs::write(&p, body).unwrap();
    p
}

fn flag<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing"))
}

#[test]
fn fixture_flags_are_classified_by_use() {
    let v = json(&["flags", &single()]);
    assert_eq!(flag(&v, "tengu_fixture_routing")["kind"], "feature");
    assert_eq!(flag(&v, "tengu_fixture_routing")["defaults"][0], false);
    assert_eq!(flag(&v, "tengu_fixture_workflows")["defaults"][0], true);
    assert_eq!(flag(&v, "tengu_fixture_routed")["kind"], "event");
    assert_eq!(flag(&v, "tengu_fixture_listed")["kind"], "other");
    // Kept in a constant and read through it: followed to its use.
    let avocet = flag(&v, "tengu_fixture_avocet");
    assert_eq!(avocet["kind"], "feature");
    assert_eq!(avocet["sites"][0]["constant"], "GateFlag");
    assert_eq!(avocet["sites"][0]["function"], "Gate");
    let getter = &flag(&v, "tengu_fixture_routing")["getters"][0];
    assert_eq!(getter, "Flag");
}

#[test]
fn fixture_gate_conditions_and_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        r#"{"cachedGrowthBookFeatures": {"tengu_fixture_routing": false}}"#,
    );
    let v = json(&["gates", &single(), "--config", cfg.to_str().unwrap()]);
    let gate = &v["gates"][0];
    assert_eq!(gate["role"], "review-routing-gate");
    let kinds: Vec<_> = gate["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "argument",
            "context-option",
            "settings-environment",
            "context-option",
            "tool-availability",
            "feature-flag"
        ]
    );
    let texts: Vec<_> = gate["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert!(texts[0].contains("high, xhigh or max"), "{}", texts[0]);
    assert!(
        texts[2].starts_with("workflows are enabled, available and permitted by policy"),
        "{}",
        texts[2]
    );
    assert!(
        texts[2].contains("FIXTURE_DISABLE_WORKFLOWS") && texts[2].contains("allow_workflows"),
        "{}",
        texts[2]
    );
    assert!(texts[4].contains("Workflow tool"), "{}", texts[4]);
    assert_eq!(gate["verdict"]["verdict"], "blocked-by");
    assert_eq!(gate["verdict"]["text"], "tengu_fixture_routing = false");

    let cfg = write_config(
        dir.path(),
        r#"{"cachedGrowthBookFeatures": {"tengu_fixture_routing": true}}"#,
    );
    let v = json(&["gates", &single(), "--config", cfg.to_str().unwrap()]);
    let verdict = &v["gates"][0]["verdict"];
    assert_eq!(verdict["verdict"], "depends-on-runtime-context");
    assert_eq!(
        verdict["conditions"].as_array().unwrap().len(),
        5,
        "only the runtime conditions remain"
    );
}

#[test]
fn bad_configs_are_a_message_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    // A config that holds no cached flags is usable: the defaults decide.
    let cfg = write_config(dir.path(), "{}");
    let v = json(&["gates", &single(), "--config", cfg.to_str().unwrap()]);
    assert!(v["config"]["problem"].is_string(), "{}", v["config"]);
    assert_eq!(
        v["gates"][0]["verdict"]["verdict"], "blocked-by",
        "defaults decide"
    );
    // One that cannot be used is an error (tests/cli_trust.rs has more).
    for body in ["not json", "[1,2]"] {
        let cfg = write_config(dir.path(), body);
        let out = bin()
            .args(["gates", &single(), "--config", cfg.to_str().unwrap()])
            .output()
            .unwrap();
        failed(body, &out);
    }
    // The config is never written.
    let cfg = write_config(
        dir.path(),
        r#"{"cachedGrowthBookFeatures": {"tengu_fixture_routing": true}}"#,
    );
    let before = std::fs::metadata(&cfg).unwrap().modified().unwrap();
    json(&["flags", &single(), "--config", cfg.to_str().unwrap()]);
    assert_eq!(std::fs::metadata(&cfg).unwrap().modified().unwrap(), before);
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_flags_and_review_routing_gate() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        r#"{"cachedGrowthBookFeatures": {"tengu_workflows_enabled": true, "tengu_review_workflow_routing": false}}"#,
    );
    let v = json(&[
        "flags",
        "npm:2.1.220/darwin-arm64",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    let routing = flag(&v, "tengu_review_workflow_routing");
    assert_eq!(routing["kind"], "feature");
    assert_eq!(routing["defaults"], serde_json::json!([false]));
    assert_eq!(flag(&v, "tengu_code_review_routed")["kind"], "event");
    assert_eq!(v["cached"]["tengu_review_workflow_routing"], false);
    let counts = &v["counts"];
    assert!(
        counts["feature"].as_u64().unwrap() > 200 && counts["event"].as_u64().unwrap() > 1000,
        "{counts}"
    );

    let g = json(&[
        "gates",
        "npm:2.1.220/darwin-arm64",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    let gate = g["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["role"] == "review-routing-gate")
        .unwrap();
    let kinds: Vec<_> = gate["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "argument",
            "context-option",
            "settings-environment",
            "context-option",
            "tool-availability",
            "feature-flag"
        ]
    );
    let c = &gate["conditions"];
    assert!(
        c[0]["text"]
            .as_str()
            .unwrap()
            .contains("high, xhigh or max")
    );
    assert!(
        c[1]["text"]
            .as_str()
            .unwrap()
            .contains("not being preloaded")
    );
    assert!(
        c[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("workflows are enabled, available and permitted by policy")
    );
    assert!(c[3]["text"].as_str().unwrap().contains("claude -p"));
    assert!(c[4]["text"].as_str().unwrap().contains("Workflow tool"));
    assert_eq!(c[5]["flag"], "tengu_review_workflow_routing");
    assert_eq!(c[5]["default"], false);
    assert_eq!(
        gate["verdict"]["text"],
        "tengu_review_workflow_routing = false"
    );

    let cfg = write_config(
        dir.path(),
        r#"{"cachedGrowthBookFeatures": {"tengu_workflows_enabled": true, "tengu_review_workflow_routing": true}}"#,
    );
    let g = json(&[
        "gates",
        "npm:2.1.220/darwin-arm64",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    let gate = g["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["role"] == "review-routing-gate")
        .unwrap();
    assert_eq!(gate["verdict"]["verdict"], "depends-on-runtime-context");
    assert_eq!(gate["verdict"]["conditions"].as_array().unwrap().len(), 5);
    // The computed option that disables model invocation of deep-research.
    assert!(
        g["gates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["role"] == "workflow option deep-research.disableModelInvocation")
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_260_routing_flag_and_gate_are_gone() {
    let v = json(&["flags", "npm:2.1.260/darwin-arm64"]);
    assert!(
        !v["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "tengu_review_workflow_routing")
    );
    assert_eq!(flag(&v, "tengu_workflows_enabled")["kind"], "feature");
    let g = json(&["gates", "npm:2.1.260/darwin-arm64"]);
    assert!(
        !g["gates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["role"] == "review-routing-gate")
    );
    assert!(
        g["gates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["role"] == "workflow option deep-research.disableModelInvocation")
    );
}

/// 2.1.332 renamed the store key and injects the store into the flag
/// client, so the getter is recognised by its `{value, source}` answers.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_332_getters_behind_an_injected_store() {
    let t = "npm:2.1.332/linux-x64";
    let v = json(&["gates", t, "--flags"]);
    let inv = &v["flags"];
    assert_eq!(flag(inv, "tengu_workflows_enabled")["kind"], "feature");
    assert_eq!(flag(inv, "tengu_sorrel_avocet")["kind"], "feature");
    let features = inv["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "feature")
        .count();
    assert!(features > 1000, "{features} feature flags");
    let option = v["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["role"] == "workflow option deep-research.disableModelInvocation")
        .expect("the deep-research option gate");
    assert_eq!(option["conditions"][0]["flag"], "tengu_sorrel_avocet");
}
