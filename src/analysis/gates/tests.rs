use super::reader::MAX_GATE_BYTES;
use super::*;
use crate::analysis::testjs;
use serde_json::json;

/// A flag getter, a policy check, a helper that reads the environment,
/// settings, policy and a flag, and gates of every kind.
const GATES: &str = r#"var settings = () => globalThis.__s ?? {};
var readFlag = (name, dflt) => settings().cachedFeatureFlags?.[name] ?? dflt;
var allowed = (k) => settings().policy?.[k] ?? !0;
function send(e, t) { globalThis.out.push({ eventName: e, metadata: t }); }
function toolsOn() {
  if (process.env.DEMO_DISABLE_TOOLS) return !1;
  if (!allowed("allow_tools")) return !1;
  return settings().settings?.enableTools ?? readFlag("tengu_demo_tools", !0);
}
var hasTool = (t, n) => t.name === n, TOOL = "Search", FLAGNAME = "tengu_demo_const";
function routeDemo(level, ctx) {
  if (level !== "high" && level !== "xhigh" && level !== "max") return !1;
  if (ctx.options?.isSkillPreload) return !1;
  if (!toolsOn()) return !1;
  if (ctx.options?.isNonInteractiveSession) return !1;
  if (!ctx.options?.tools?.some((t) => hasTool(t, TOOL))) return !1;
  return readFlag("tengu_demo_route", !1);
}
function onlyFlags() {
  if (readFlag(FLAGNAME, !1)) return !1;
  return readFlag("tengu_demo_b", !0);
}
function shortcut(a, t) {
  if (a === "x") { return !0; }
  if (t !== "one" && t !== "two") return !1;
  return readFlag("tengu_demo_c");
}
function options(t) {
  let unused = 1;
  if (!t.options.isFastMode) return !1;
  if (t.options.quietRun) return !1;
  return !0;
}
var arrowGate = () => readFlag("tengu_demo_arrow", 0);
function notAGate(x) { for (;;) { if (x) return !1; } }
function notBoolean(x) { if (x) return 5; return readFlag("tengu_demo_d", !1); }
function alwaysTrue() { return !0; }
function logs() { send("tengu_demo_event", {}); return !0; }
function noFlag(t) { if (t.options.isFastMode) return !1; return !0; }
"#;

fn read(src: &str, name: &str) -> Option<Vec<Condition>> {
    let ci = testjs::script(src);
    let id = testjs::function(&ci, 0, name);
    GateReader::new(&ci).read(0, id)
}

fn texts(c: &[Condition]) -> Vec<&str> {
    c.iter().map(|c| c.text.as_str()).collect()
}

fn cached(values: serde_json::Value) -> CachedFlags {
    let config = json!({ "cachedFeatureFlags": values });
    CachedFlags::from_config("c.json", config.as_object().unwrap())
}

#[test]
fn every_condition_kind_in_order() {
    let c = read(GATES, "routeDemo").unwrap();
    let kinds: Vec<ConditionKind> = c.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            ConditionKind::Argument,
            ConditionKind::ContextOption,
            ConditionKind::SettingsEnvironment,
            ConditionKind::ContextOption,
            ConditionKind::ToolAvailability,
            ConditionKind::FeatureFlag,
        ]
    );
    assert_eq!(
        texts(&c),
        [
            "the level (argument 1) is high, xhigh or max",
            "the skill is not being preloaded [options.isSkillPreload]",
            "tools are enabled, available and permitted by policy — toolsOn() reads \
             env DEMO_DISABLE_TOOLS; settings enableTools; policy allow_tools; \
             flag tengu_demo_tools (default true)",
            "the session is interactive (not `claude -p`) [options.isNonInteractiveSession]",
            "the session has the Search tool",
            "the flag tengu_demo_route is true (default false)",
        ]
    );
    let indexes: Vec<usize> = c.iter().map(|c| c.index).collect();
    assert_eq!(indexes, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        c[2].helper_flags,
        [("tengu_demo_tools".into(), json!(true))]
    );
    let flag = &c[5];
    assert_eq!(flag.flag.as_deref(), Some("tengu_demo_route"));
    assert_eq!(flag.default, Some(json!(false)));
    assert_eq!(flag.expect, Some(true));
    assert_eq!(flag.line, 17);
    assert_eq!(flag.module, testjs::SCRIPT);
}

#[test]
fn flag_conditions_follow_constants_and_negation() {
    let c = read(GATES, "onlyFlags").unwrap();
    assert_eq!(
        texts(&c),
        [
            "the flag tengu_demo_const is false (default false)",
            "the flag tengu_demo_b is true (default true)",
        ]
    );
    assert_eq!(c[0].expect, Some(false));
    assert_eq!(c[1].expect, Some(true));
    // An arrow with an expression body is one returned condition.
    let c = read(GATES, "arrowGate").unwrap();
    assert_eq!(c[0].flag.as_deref(), Some("tengu_demo_arrow"));
    // The evaluator's numbers are doubles, kept as such in JSON (0.0).
    assert_eq!(c[0].default, Some(json!(0.0)));
}

#[test]
fn a_return_true_check_suffices_and_a_missing_default_is_none() {
    let c = read(GATES, "shortcut").unwrap();
    assert_eq!(c[0].kind, ConditionKind::Other);
    assert_eq!(
        c[0].text,
        "either `a === \"x\"` is true (then it passes at once)"
    );
    // Values that are not levels are listed as they are.
    assert_eq!(c[1].kind, ConditionKind::Argument);
    assert_eq!(c[1].text, "argument 2 is one or two");
    assert_eq!(c[2].text, "the flag tengu_demo_c is true (default none)");
    assert_eq!(c[2].default, None);
}

#[test]
fn context_options_in_words() {
    let c = read(GATES, "options").unwrap();
    assert_eq!(
        texts(&c),
        [
            "fast mode (options.isFastMode) [options.isFastMode]",
            "not a quiet run (options.quietRun) [options.quietRun]",
        ]
    );
    assert!(c.iter().all(|c| c.kind == ConditionKind::ContextOption));
}

#[test]
fn functions_that_are_not_lists_of_checks_are_not_gates() {
    // A loop; a non-boolean return; nothing but `return true`.
    for name in ["notAGate", "notBoolean", "alwaysTrue"] {
        assert!(read(GATES, name).is_none(), "{name}");
    }
}

#[test]
fn a_gate_longer_than_the_limit_is_not_read() {
    let gate = |pad: usize| {
        format!(
            "var readFlag = (n, d) => g().cachedFeatureFlags?.[n] ?? d;\n\
             function big() {{ /*{}*/ return readFlag(\"tengu_demo_big\", !1); }}",
            "x".repeat(pad)
        )
    };
    // `function big() { /*` … `*/ return readFlag("tengu_demo_big", !1); }`
    let frame = "function big() { /**/ return readFlag(\"tengu_demo_big\", !1); }".len();
    assert!(read(&gate(MAX_GATE_BYTES - frame), "big").is_some());
    assert!(read(&gate(MAX_GATE_BYTES - frame + 1), "big").is_none());
}

#[test]
fn verdicts_under_cached_values_and_defaults() {
    let c = read(GATES, "routeDemo").unwrap();
    // Defaults: the routing flag defaults to false.
    let v = verdict(&c, &CachedFlags::default());
    assert!(
        matches!(&v, Verdict::BlockedBy { condition: 6, text } if text == "tengu_demo_route = false"),
        "{v:?}"
    );
    assert_eq!(v.describe(), "blocked by tengu_demo_route = false");
    // Cached true: only the runtime conditions remain, in order.
    let v = verdict(&c, &cached(json!({ "tengu_demo_route": true })));
    let Verdict::DependsOnRuntimeContext { conditions } = &v else {
        panic!("{v:?}")
    };
    assert_eq!(conditions.len(), 5);
    assert_eq!(conditions[0], c[0].text);
    assert!(
        v.describe()
            .starts_with("depends on runtime context: the level")
    );

    let f = read(GATES, "onlyFlags").unwrap();
    // Only flags, all as wanted: passes.
    assert!(matches!(
        verdict(&f, &CachedFlags::default()),
        Verdict::Passes
    ));
    // The first failing flag blocks, with its cached value.
    let v = verdict(
        &f,
        &cached(json!({ "tengu_demo_const": "on", "tengu_demo_b": 0 })),
    );
    assert!(
        matches!(&v, Verdict::BlockedBy { condition: 1, text } if text == "tengu_demo_const = \"on\""),
        "{v:?}"
    );
    let v = verdict(&f, &cached(json!({ "tengu_demo_b": 0 })));
    assert!(
        matches!(&v, Verdict::BlockedBy { condition: 2, text } if text == "tengu_demo_b = 0"),
        "{v:?}"
    );
    // No default and not cached: null, which blocks a flag that must be true.
    let s = read(GATES, "shortcut").unwrap();
    let v = verdict(&s, &CachedFlags::default());
    assert!(
        matches!(&v, Verdict::BlockedBy { condition: 3, text } if text == "tengu_demo_c = null"),
        "{v:?}"
    );
}

#[test]
fn cached_flags_from_a_config_the_newest_store_key_first() {
    let config = json!({
        "cachedGrowthBookFeatures": { "tengu_a": false, "tengu_b": 1 },
        "cachedFeatureFlags": { "tengu_a": true },
        "cachedStatsigGates": "not an object",
        "other": { "tengu_c": true },
    });
    let c = CachedFlags::from_config("here.json", config.as_object().unwrap());
    assert_eq!(c.path.as_deref(), Some("here.json"));
    assert_eq!(c.values.get("tengu_a"), Some(&json!(true)));
    assert_eq!(c.values.get("tengu_b"), Some(&json!(1)));
    assert!(!c.values.contains_key("tengu_c"));
    assert_eq!(c.problem, None);
    let empty = CachedFlags::from_config("e.json", json!({}).as_object().unwrap());
    assert_eq!(
        empty.problem.as_deref(),
        Some("e.json holds no cached flag values")
    );
}

#[test]
fn flag_gates_are_small_functions_that_test_a_flag() {
    let ci = testjs::script(GATES);
    let gates = discover(&ci, &Default::default(), &[], &Default::default());
    let names: Vec<&str> = gates
        .iter()
        .map(|g| g.function.as_deref().unwrap_or(""))
        .collect();
    // toolsOn reads a flag but tests none of its own conditions on one;
    // logs passes a flag name to a logger, not a getter; notBoolean is
    // not a list of checks; noFlag reads no flag.
    assert_eq!(
        names,
        ["routeDemo", "onlyFlags", "shortcut", "arrowGate"],
        "{gates:#?}"
    );
    assert!(gates.iter().all(|g| g.role == GateRole::FlagGate));
    assert!(gates.iter().all(|g| g.verdict.is_none()));
    assert_eq!(gates[1].raw_line, 19);
}

#[test]
fn a_flag_gate_is_small() {
    let src = |pad: usize| {
        format!(
            "var readFlag = (n, d) => g().cachedFeatureFlags?.[n] ?? d;\n\
             function big() {{ /*{}*/ return readFlag(\"tengu_demo_big\", !1); }}",
            "x".repeat(pad)
        )
    };
    let frame = "function big() { /**/ return readFlag(\"tengu_demo_big\", !1); }".len();
    let found = |pad| {
        let ci = testjs::script(&src(pad));
        discover(&ci, &Default::default(), &[], &Default::default()).len()
    };
    assert_eq!(found(MAX_FLAG_GATE_BYTES as usize - frame - 1), 1);
    assert_eq!(found(MAX_FLAG_GATE_BYTES as usize - frame), 0);
}

#[test]
fn gate_roles_read_back_from_their_words() {
    for role in [
        GateRole::ReviewRouting,
        GateRole::FlagGate,
        GateRole::WorkflowOption {
            workflow: "code-review".into(),
            option: "model".into(),
        },
    ] {
        let s = String::from(role.clone());
        assert_eq!(GateRole::try_from(s).unwrap(), role);
    }
    assert_eq!(GateRole::ReviewRouting.to_string(), "review-routing-gate");
    assert!(GateRole::try_from("gate".to_string()).is_err());
    assert!(GateRole::ReviewRouting.is_workflow_gate());
    assert!(!GateRole::FlagGate.is_workflow_gate());
}
