//! `diff`: on fixtures written for these tests (fixtures/js/diff/) and on
//! real Claude Code builds — 2.1.220 vs 2.1.260 (darwin-arm64), and
//! 2.1.220 on two platforms.

use crate::common;

use cc_teardown::analysis::diff::lines::erase_names;
use common::*;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js/diff")
        .join(p)
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn names(v: &serde_json::Value) -> Vec<Option<&str>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str())
        .collect()
}

#[test]
fn fixture_renames_are_not_changes_and_real_changes_are() {
    let (a, b) = (fixture("a.js"), fixture("b.js"));
    let v = json(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--only",
        "functions,text",
    ]);
    let f = &v["functions"];
    // Ab/Ty and Pm/Ge differ only in names; Kx/Lo and Zr/Hh changed; Wv
    // went and Ux came.
    assert_eq!(f["units_a"], 5);
    assert_eq!(f["unchanged"], 2, "{f:#}");
    let changed: Vec<(&str, &str)> = f["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["a"]["name"].as_str().unwrap(),
                c["b"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        changed,
        vec![("Kx", "Lo"), ("Zr", "Hh")],
        "largest change first"
    );
    let kx = &f["changed"][0];
    assert_eq!(
        (kx["lines_added"].as_u64(), kx["lines_removed"].as_u64()),
        (Some(2), Some(1))
    );
    let d = kx["diff"].as_str().unwrap();
    assert!(d.contains("+        strict: true"), "{d}");
    // The renamed `Qa.retries` → `Mn.retries` is on a changed line only
    // because a comma was added to it; unchanged renamed lines are context.
    assert!(d.contains("     return JSON.stringify({"), "{d}");
    assert_eq!(names(&f["added"]), vec![Some("Ux")]);
    assert_eq!(names(&f["removed"]), vec![Some("Wv")]);
    let t = &v["text"];
    let changed = t["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{t:#}");
    assert!(
        changed[0]["diff"]
            .as_str()
            .unwrap()
            .contains("+ has been archived and will be deleted")
    );
    assert_eq!(
        strings(&t["added"]),
        vec!["brand new helper added by the newer build for retries"]
    );
    assert_eq!(
        strings(&t["removed"]),
        vec!["obsolete helper that the newer build drops entirely"]
    );
    assert!(
        v.get("identity").is_none() && v.get("flags").is_none(),
        "--only narrows"
    );
}

#[test]
fn same_file_twice_has_no_differences_and_exit_code_says_so() {
    let a = fixture("a.js");
    let a = a.to_str().unwrap();
    let v = json(&["diff", a, a]);
    assert_eq!(v["functions"]["unchanged"], 5);
    assert!(
        v["identity"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["differs"] == false)
    );
    bin().args(["diff", a, a, "--exit-code"]).assert().code(0);
    let b = fixture("b.js");
    bin()
        .args([
            "diff",
            a,
            b.to_str().unwrap(),
            "--exit-code",
            "--only",
            "functions",
        ])
        .assert()
        .code(1);
}

/// An edit inside a lazy module initialiser (`var X = helper(() => { …;
/// Y = … })`) names its place: the initialiser's binding and the binding
/// the edited statement assigns, on each side (the fixtures differ in
/// every minified name and in one list).
#[test]
fn an_edit_inside_a_lazy_initialiser_names_its_place() {
    let (a, b) = (fixture("lazy-a.js"), fixture("lazy-b.js"));
    let cache = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = bin()
            .env("CC_TEARDOWN_CACHE", cache.path())
            .args(["diff", a.to_str().unwrap(), b.to_str().unwrap()])
            .args(["--only", "functions"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    let f = &v["functions"];
    let changed = f["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{f:#}");
    let c = &changed[0];
    // `name` stays null (the function has none); `within` and `assigns` say
    // where it is, in each side's names.
    assert_eq!(
        (&c["a"]["name"], &c["b"]["name"]),
        (&json!(null), &json!(null))
    );
    assert_eq!(
        (&c["a"]["within"], &c["b"]["within"]),
        (&json!("Yu"), &json!("Qo"))
    );
    assert_eq!(c["a"]["assigns"], json!([{"name": "Mj"}]), "{c:#}");
    assert_eq!(c["b"]["assigns"], json!([{"name": "Vs"}]), "{c:#}");
    assert!(c["diff"].as_str().unwrap().contains("bosun"), "{c:#}");
    // The rest, the other initialiser included, differs only in names.
    assert_eq!(f["unchanged"], 5, "{f:#}");
    let human = run(&[]);
    assert!(
        human.contains("in Yu, assigns Mj") && human.contains("in Qo, assigns Vs"),
        "{human}"
    );
    assert!(!human.contains("(anonymous)"), "{human}");
}

#[test]
fn human_output_has_summary_first_and_colour_only_when_asked() {
    let (a, b) = (fixture("a.js"), fixture("b.js"));
    let run = |extra: &[&str]| {
        let out = bin()
            .args(["diff", a.to_str().unwrap(), b.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let plain = run(&[]);
    assert!(
        !plain.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    let first: Vec<&str> = plain.lines().take(12).collect();
    assert!(
        first
            .iter()
            .any(|l| l.trim_start().starts_with("functions")),
        "{plain}"
    );
    let pos = |s: &str| {
        plain
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing:\n{plain}"))
    };
    assert!(
        pos("  functions ") < pos("\nFunctions"),
        "summary before details"
    );
    let coloured = run(&["--color", "always"]);
    assert!(coloured.contains("\x1b[32m+"), "added lines in green");
    let md = run(&["--format", "md"]);
    assert!(md.starts_with("# What changed:"));
    assert!(md.contains("## Summary") && md.contains("```diff\n"));
}

#[test]
fn bad_targets_give_one_line_errors() {
    let out = bin()
        .args([
            "diff",
            "/nonexistent/claude",
            fixture("a.js").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = one_line_error("diff of a missing file", &out);
    assert!(err.contains("/nonexistent/claude"), "{err}");
    bin()
        .args(["diff", "a", "b", "--only", "nonsense"])
        .assert()
        .code(2);
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_2_1_220_vs_2_1_260_darwin() {
    let a = "npm:2.1.220/darwin-arm64";
    let b = "npm:2.1.260/darwin-arm64";
    let v = json(&["diff", a, b, "--quiet"]);
    // Identity: a single bundle became a code-split ESM build.
    let field = |name: &str| {
        v["identity"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(field("code-split")["a"], false);
    assert_eq!(field("code-split")["b"], true);
    let chunks = field("JavaScript modules")["b"].as_u64().unwrap();
    assert!(chunks > 1000, "{chunks}");
    let structure = v["identity"]["structure_b"].as_str().unwrap();
    assert!(
        structure.starts_with("code-split ESM build (")
            && structure.ends_with(" JavaScript chunks)"),
        "{structure}"
    );
    // Workflows: the hidden code-review is gone, deep-research changed.
    let w = &v["workflows"];
    assert_eq!(strings(&w["removed"]), vec!["code-review"]);
    assert_eq!(w["hidden"]["code-review"], true);
    assert_eq!(strings(&w["changed"]), vec!["deep-research"]);
    let dr = &w["details"][0];
    assert_eq!(dr["name"], "deep-research");
    assert!(
        dr["script_diff"]["unified"]
            .as_str()
            .unwrap()
            .starts_with("@@ ")
    );
    assert_ne!(dr["script_a"]["sha256"], dr["script_b"]["sha256"]);
    // Flags: the diff equals the set difference of each build's inventory.
    let inv = |t: &str| -> BTreeSet<String> {
        json(&["flags", t])["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (fa, fb) = (inv(a), inv(b));
    let added: Vec<String> = fb.difference(&fa).cloned().collect();
    let removed: Vec<String> = fa.difference(&fb).cloned().collect();
    assert_eq!(strings(&v["flags"]["added"]), added);
    assert_eq!(strings(&v["flags"]["removed"]), removed);
    assert!(!added.is_empty() && !removed.is_empty());
    // The routing flag is no longer read, and the gate it guarded is gone.
    let routing = v["gates"]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["flag"] == "tengu_review_workflow_routing")
        .expect("the routing flag is reported")
        .clone();
    assert_eq!(
        (routing["read_a"].as_bool(), routing["read_b"].as_bool()),
        (Some(true), Some(false))
    );
    let removed_gates: Vec<&str> = v["gates"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert!(
        removed_gates.contains(&"review-routing-gate"),
        "{removed_gates:?}"
    );
    let only_a: Vec<&str> = v["roles"]["only_a"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["role"].as_str().unwrap())
        .collect();
    for r in [
        "review-routing-gate",
        "review-instructions",
        "workflow-builder",
    ] {
        assert!(only_a.contains(&r), "{only_a:?}");
    }
    // Modules: the old bundle's strings are found spread over many chunks.
    let split = &v["modules"]["splits"][0];
    assert_eq!(split["from"], "src/entrypoints/cli.js");
    assert!(split["into"].as_u64().unwrap() > 100, "{split}");
    // Functions and texts were compared.
    assert!(v["functions"]["unchanged"].as_u64().unwrap() > 5000);
    assert!(!v["functions"]["changed"].as_array().unwrap().is_empty());
    assert!(!v["text"]["added"].as_array().unwrap().is_empty());

    // The human summary names the same facts.
    let out = bin()
        .args(["diff", a, b, "--quiet", "--limit", "2"])
        .output()
        .unwrap();
    let h = String::from_utf8(out.stdout).unwrap();
    let summary: String = h.lines().take(16).collect::<Vec<_>>().join("\n");
    for needle in [
        "removed code-review (hidden)",
        "changed deep-research",
        "code-split ESM build",
        "tengu_review_workflow_routing: read (feature, default false) → absent",
        "removed review-routing-gate",
    ] {
        assert!(
            summary.contains(needle),
            "{needle} missing from the summary:\n{summary}"
        );
    }
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_2_1_220_darwin_vs_linux_differs_only_in_platform_code() {
    let a = "npm:2.1.220/darwin-arm64";
    let b = "npm:2.1.220/linux-x64";
    let v = json(&["diff", a, b, "--quiet"]);
    let sha = v["identity"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "bundle sha256")
        .unwrap()
        .clone();
    assert_eq!(sha["differs"], true, "the bundles differ");
    let w = &v["workflows"];
    for k in ["added", "removed", "changed"] {
        assert_eq!(w[k], serde_json::json!([]), "workflows.{k}");
    }
    assert_eq!(
        strings(&w["unchanged"]),
        vec!["code-review", "deep-research"]
    );
    let f = &v["flags"];
    for k in ["added", "removed", "kind_changed", "default_changed"] {
        assert_eq!(f[k], serde_json::json!([]), "flags.{k}");
    }
    let g = &v["gates"];
    for k in ["added", "removed", "changed"] {
        assert_eq!(g[k], serde_json::json!([]), "gates.{k}");
    }
    assert_eq!(v["roles"]["only_a"], serde_json::json!([]));
    assert_eq!(v["roles"]["only_b"], serde_json::json!([]));
    // Functions: the renamed builders are not changes; whatever is listed
    // as changed differs in more than names.
    let fns = &v["functions"];
    let units = fns["units_a"].as_u64().unwrap();
    assert!(
        fns["unchanged"].as_u64().unwrap() * 100 > units * 95,
        "{}",
        fns["unchanged"]
    );
    let builders = |t: &str| -> Vec<String> {
        json(&["locate", t])["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["name"].as_str().map(str::to_string))
            .collect()
    };
    let (ba, bb) = (builders(a), builders(b));
    assert_ne!(ba, bb, "the minified names differ between the platforms");
    let listed = |k: &str, side: &str| -> Vec<String> {
        fns[k]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| {
                let r = if side.is_empty() { c } else { &c[side] };
                r["name"].as_str().map(str::to_string)
            })
            .collect()
    };
    for n in &ba {
        assert!(!listed("changed", "a").contains(n), "{n} listed as changed");
        assert!(!listed("removed", "").contains(n), "{n} listed as removed");
    }
    for n in &bb {
        assert!(!listed("changed", "b").contains(n), "{n} listed as changed");
        assert!(!listed("added", "").contains(n), "{n} listed as added");
    }
    for c in fns["changed"].as_array().unwrap() {
        let d = c["diff"].as_str().unwrap();
        let side = |p: char| -> BTreeSet<String> {
            d.lines()
                .filter(|l| l.starts_with(p) && !l.starts_with("@@"))
                .map(|l| erase_names(l[1..].trim()).0)
                .collect()
        };
        assert_ne!(side('-'), side('+'), "a rename listed as a change:\n{d}");
    }
}

/// `--exit-code` decides on every section asked for: env vars added and
/// removed alone make the exit status 1 (the CLI once checked 8 of the 14
/// sections, and `--only env` exited 0), and the same names in both builds
/// leave it 0 however the rest of the code differs.
#[test]
fn exit_code_counts_the_env_section() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let a = write(
        "a.js",
        "function f() { return process.env.CC_FIXTURE_ONE || 1; }\nf();\n",
    );
    let b = write(
        "b.js",
        "function f() { return process.env.CC_FIXTURE_TWO || 1; }\nf();\n",
    );
    let c = write(
        "c.js",
        "function g(x) { return process.env.CC_FIXTURE_ONE ? x + 2 : 3; }\ng(4);\n",
    );
    let env = json(&["diff", &a, &b, "--only", "env"]);
    assert_eq!(env["env"]["added"][0], "CC_FIXTURE_TWO", "{env}");
    let code = |x: &str, y: &str| {
        bin()
            .env("CC_TEARDOWN_CACHE", dir.path().join("cache"))
            .args(["diff", x, y, "--only", "env", "--exit-code", "--quiet"])
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(code(&a, &b), Some(1));
    assert_eq!(code(&a, &c), Some(0));
}

/// `--exit-code` with each section alone, one run per entry of
/// `Section::ALL` (so a section added later is tested without anyone
/// writing it here): 2.1.220 and 2.1.260 differ in every section, so each
/// run must report that section non-empty in its JSON and exit 1.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn exit_code_for_each_section_alone() {
    let a = fetch("2.1.220", "darwin-arm64");
    let b = fetch("2.1.260", "darwin-arm64");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for section in cc_teardown::analysis::diff::Section::ALL {
        let name = serde_json::to_value(section).unwrap();
        let name = name.as_str().unwrap();
        let out = bin()
            .args(["diff", a, b, "--only", name, "--exit-code", "--json"])
            .timeout(std::time::Duration::from_secs(600))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "--only {name}: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let part = &v[name];
        assert!(
            !part.is_null() && part != &serde_json::json!({}) && part != &serde_json::json!([]),
            "--only {name}: the section is missing or empty: {part}"
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "--only {name} --exit-code: {part}"
        );
    }
}
