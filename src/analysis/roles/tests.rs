use super::lookup::MAX_LOOKUP_BYTES;
use super::*;
use crate::analysis::testjs;
use crate::analysis::workflows::ROUTED_LEVELS;

/// A registrar, two builders (one the code-review workflow, with a
/// computed option), an init, a lookup, review instructions and the
/// routing gate they consult.
const BUNDLE: &str = r#"var registered = [];
function addFlow(text, meta, opts) {
  registered.push({ source: "built-in", ...meta, script: text, hidden: opts?.hidden });
}
function flows() {
  return registered;
}
async function byName(n) {
  return flows().find((w) => w.name === n);
}
var RN = "code-review";
function makeReview() {
  addFlow(`export const meta = {
  name: ${JSON.stringify(RN)},
}
phase("one")
`, { name: RN, description: "reviews" }, { hidden: !0 });
}
var fl = (n, d) => globalThis.cfg?.cachedFeatureFlags?.[n] ?? d;
function otherOff() {
  if (fl("tengu_demo_other", !1)) return !1;
  return !0;
}
function makeOther() {
  addFlow(`export const meta = { name: "other" }
`, { name: "other", description: "other" }, { disableModelInvocation: otherOff });
}
function setup() {
  makeReview(), makeOther();
}
function routed(level) {
  if (level !== "high" && level !== "xhigh" && level !== "max") return !1;
  return fl("tengu_demo_route", !1);
}
var js = (v) => JSON.stringify(v);
function reviewText(level) {
  if (routed(level)) return `Use Workflow({ name: ${js(RN)}, args: ${js(level)} })`;
  return "inline";
}
"#;

fn locate(src: &str) -> Roles {
    let ci = testjs::script(src);
    Locator::new(&ci, &[]).locate()
}

/// `BUNDLE` with `from` (which must occur) replaced by `to`.
fn without(from: &str, to: &str) -> Roles {
    assert!(BUNDLE.contains(from), "{from}");
    locate(&BUNDLE.replace(from, to))
}

fn name(roles: &Roles, role: Role) -> Option<&str> {
    roles.first(role).and_then(|f| f.name.as_deref())
}

fn reason(roles: &Roles, role: Role) -> &str {
    roles
        .absent
        .iter()
        .find(|a| a.role == role)
        .map(|a| a.reason.as_str())
        .unwrap_or_else(|| panic!("{role:?} was found: {roles:#?}"))
}

#[test]
fn every_role_on_the_imitation() {
    let r = locate(BUNDLE);
    assert!(r.absent.is_empty(), "{:#?}", r.absent);
    assert_eq!(name(&r, Role::WorkflowRegistrar), Some("addFlow"));
    assert_eq!(name(&r, Role::WorkflowLookup), Some("byName"));
    assert_eq!(name(&r, Role::WorkflowsInit), Some("setup"));
    assert_eq!(name(&r, Role::ReviewInstructions), Some("reviewText"));
    assert_eq!(name(&r, Role::ReviewRoutingGate), Some("routed"));
    let builders: Vec<(Option<&str>, Option<&str>)> = r
        .get(Role::WorkflowBuilder)
        .map(|f| (f.name.as_deref(), f.workflow.as_deref()))
        .collect();
    assert_eq!(
        builders,
        [
            (Some("makeReview"), Some("code-review")),
            (Some("makeOther"), Some("other"))
        ]
    );
    assert!(r.functions.iter().all(|f| f.confidence == Confidence::High));
    let reg = r.first(Role::WorkflowRegistrar).unwrap();
    assert_eq!((reg.raw_start, reg.raw_end), (2, 4));
    assert_eq!(
        reg.evidence,
        ["pushes {source: \"built-in\", …, script, hidden} (1 candidate(s))"]
    );
    assert_eq!(
        r.first(Role::WorkflowLookup).unwrap().evidence,
        [
            "searches flows(…) with .find(x => x.name === …)",
            "flows() returns the registrar's list registered"
        ]
    );
    assert_eq!(
        r.first(Role::WorkflowsInit).unwrap().evidence,
        ["calls 2 of 2 builders"]
    );
    assert_eq!(
        r.first(Role::ReviewRoutingGate).unwrap().evidence,
        [
            "checks the levels high, xhigh and max",
            "returns the feature flag tengu_demo_route",
            "called by the review instructions"
        ]
    );
}

#[test]
fn the_registrar_needs_each_element_of_its_signature() {
    for (from, to) in [
        (r#"source: "built-in""#, r#"source: "plugin""#),
        ("registered.push(", "registered.unshift("),
        ("script: text", "body: text"),
        (
            "function addFlow(text, meta, opts)",
            "function addFlow(text)",
        ),
    ] {
        let r = without(from, to);
        assert!(
            reason(&r, Role::WorkflowRegistrar).starts_with("no function pushes"),
            "{from}"
        );
        // Nothing else is looked for without it.
        assert_eq!(
            reason(&r, Role::WorkflowBuilder),
            "no workflow registrar in this build",
            "{from}"
        );
        assert!(r.functions.is_empty(), "{from}");
    }
    // Without `hidden`, still the registrar, and the evidence says so.
    let r = without(", hidden: opts?.hidden", "");
    assert!(r.first(Role::WorkflowRegistrar).unwrap().evidence[0].contains("; no hidden option"));
}

#[test]
fn two_registrars_lower_the_confidence() {
    let src = format!(
        "{BUNDLE}function addMore(text, meta) {{\n  registered.push({{ source: \"built-in\", script: text }});\n}}\n"
    );
    let r = locate(&src);
    let reg = r.first(Role::WorkflowRegistrar).unwrap();
    assert_eq!(reg.confidence, Confidence::Medium);
    assert!(reg.evidence[0].ends_with("(2 candidate(s))"));
}

#[test]
fn a_builder_passes_a_workflow_script_template() {
    for (from, to) in [
        // Not a script: no `export const meta` at its start.
        ("addFlow(`export const meta", "addFlow(`const meta"),
        // A plain string, not a template.
        (
            "addFlow(`export const meta = { name: \"other\" }\n`",
            "addFlow(\"export const meta = { name: 'other' }\"",
        ),
    ] {
        let r = without(from, to);
        let builders: Vec<_> = r.get(Role::WorkflowBuilder).collect();
        assert!(
            builders
                .iter()
                .all(|b| b.workflow.as_deref() == Some("code-review")),
            "{from}: {builders:#?}"
        );
        assert!(builders.len() < 2, "{from}");
    }
    let r = without("addFlow(`export const meta", "addFlow(`const meta");
    assert_eq!(
        reason(&r, Role::WorkflowBuilder),
        "the registrar is never called with a workflow script"
    );
    assert_eq!(
        reason(&r, Role::WorkflowsInit),
        "no function calls the builders"
    );
}

#[test]
fn init_calls_the_builders_without_arguments() {
    let r = without("makeReview(), makeOther();", "makeReview(1), makeOther(1);");
    assert_eq!(
        reason(&r, Role::WorkflowsInit),
        "no function calls the builders"
    );
    // Calling only some of them: still the init, with less confidence.
    let r = without("makeReview(), makeOther();", "makeReview();");
    let init = r.first(Role::WorkflowsInit).unwrap();
    assert_eq!(init.confidence, Confidence::Medium);
    assert_eq!(init.evidence, ["calls 1 of 2 builders"]);
}

#[test]
fn the_lookup_searches_the_registrars_list_by_name() {
    const ABSENT: &str = "no function searches the registered workflows by name";
    // Searches by another key.
    let r = without("(w) => w.name === n", "(w) => w.id === n");
    assert_eq!(reason(&r, Role::WorkflowLookup), ABSENT);
    // Searches a list that is not the registrar's.
    let r = without("return registered;", "return [];");
    assert_eq!(reason(&r, Role::WorkflowLookup), ABSENT);
    // Too large to be the lookup.
    let pad = format!("/*{}*/", "x".repeat(MAX_LOOKUP_BYTES as usize));
    let r = without(
        "return flows().find(",
        &format!("{pad} return flows().find("),
    );
    assert_eq!(reason(&r, Role::WorkflowLookup), ABSENT);
}

#[test]
fn the_lookup_through_a_wrapper_and_a_filtered_copy() {
    let r = without(
        "async function byName(n) {\n  return flows().find(",
        "var copy = (async () => [...flows()]);\nasync function byName(n) {\n  return (await copy()).find(",
    );
    let l = r.first(Role::WorkflowLookup).unwrap();
    assert_eq!(l.name.as_deref(), Some("byName"));
    assert_eq!(
        l.evidence[1],
        "copy() → flows() returns the registrar's list registered"
    );
    let r = without(
        "return registered;",
        "return registered.filter((w) => !w.off);",
    );
    let l = r.first(Role::WorkflowLookup).unwrap();
    assert_eq!(
        l.evidence[1],
        "flows() returns a filtered copy of the registrar's list registered"
    );
}

#[test]
fn review_instructions_name_the_code_review_workflow_through_its_binding() {
    let r = without(r#"var RN = "code-review";"#, r#"var RN = "code-check";"#);
    assert_eq!(
        reason(&r, Role::ReviewInstructions),
        "no code-review workflow in this build"
    );
    assert_eq!(
        reason(&r, Role::ReviewRoutingGate),
        "no code-review workflow in this build"
    );
    let r = without(
        r#"{ name: RN, description: "reviews" }"#,
        r#"{ name: "code-review", description: "reviews" }"#,
    );
    assert_eq!(
        reason(&r, Role::ReviewInstructions),
        "the code-review builder's meta.name is not a binding"
    );
    assert_eq!(
        reason(&r, Role::ReviewRoutingGate),
        "no review instructions found"
    );
    // The template invokes a workflow, but not by the binding.
    let r = without("name: ${js(RN)}", "name: ${js(level)}");
    assert_eq!(
        reason(&r, Role::ReviewInstructions),
        "no template invokes the code-review workflow by name"
    );
    // The binding, but not in an invocation `({ name: …, args: … })`.
    let r = without("args: ${js(level)}", "level: ${js(level)}");
    assert_eq!(
        reason(&r, Role::ReviewInstructions),
        "no template invokes the code-review workflow by name"
    );
}

#[test]
fn the_routing_gate_checks_the_levels_and_returns_a_flag() {
    const ABSENT: &str = "no function beside the instructions checks the levels and returns a flag";
    for (from, to) in [
        // A level missing.
        (r#" && level !== "max""#, ""),
        // A flag read, but not returned.
        (
            r#"return fl("tengu_demo_route", !1);"#,
            r#"let on = fl("tengu_demo_route", !1); return on;"#,
        ),
        // No flag.
        (r#""tengu_demo_route""#, r#""demo_route""#),
    ] {
        let r = without(from, to);
        assert_eq!(reason(&r, Role::ReviewRoutingGate), ABSENT, "{from}");
        assert!(r.first(Role::ReviewInstructions).is_some(), "{from}");
    }
    // Not called by the instructions: found, with less confidence.
    let r = without("if (routed(level))", "if (level)");
    let g = r.first(Role::ReviewRoutingGate).unwrap();
    assert_eq!(g.confidence, Confidence::Medium);
    assert_eq!(g.evidence.len(), 2);
}

#[test]
fn the_roles_lead_to_the_workflow_gates() {
    let ci = testjs::script(BUNDLE);
    let locator = Locator::new(&ci, &[]);
    let roles = locator.locate();
    let workflows = crate::analysis::workflows::bundled(&ci, &roles, &locator);
    let gates = crate::analysis::gates::discover(&ci, &roles, &workflows, &Default::default());
    let found: Vec<(String, Option<&str>)> = gates
        .iter()
        .map(|g| (g.role.to_string(), g.function.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            ("review-routing-gate".to_string(), Some("routed")),
            (
                "workflow option other.disableModelInvocation".to_string(),
                Some("otherOff")
            ),
        ]
    );
}

#[test]
fn aliases_follow_imports_across_chunks() {
    let ci = testjs::chunks(&[
        (
            "/$bunfs/root/chunk-reg.js",
            "function r(a, b) { return a + b; }\nexport { r as register };",
        ),
        (
            "/$bunfs/root/chunk-use.js",
            "import { register as q } from \"./chunk-reg.js\";\nq(1, 2);",
        ),
        (
            "/$bunfs/root/chunk-other.js",
            "import { register as z } from \"./chunk-elsewhere.js\";\nz();",
        ),
    ]);
    let reg = testjs::module(&ci, "chunk-reg.js");
    let uses = testjs::module(&ci, "chunk-use.js");
    assert_eq!(
        aliases(&ci, reg, "r"),
        [(reg, "r".to_string()), (uses, "q".to_string())]
    );
    // A name nobody exports has only itself.
    assert_eq!(aliases(&ci, uses, "q"), [(uses, "q".to_string())]);
}

#[test]
fn call_re_matches_calls_not_methods_or_longer_names() {
    let re = call_re("f");
    assert!(re.is_match("f()"));
    assert!(re.is_match("x = f(1)"));
    assert!(re.is_match("[...f()]"));
    assert!(!re.is_match("o.f()"));
    assert!(!re.is_match("gf()"));
    assert!(!re.is_match("f$()"));
}

#[test]
fn lists_in_words() {
    assert_eq!(and_list(&["a"]), "a");
    assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    assert_eq!(and_list(ROUTED_LEVELS), "high, xhigh and max");
}
