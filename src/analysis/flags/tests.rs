use super::accessors::{MAX_ACCESSOR_BYTES, MAX_WRAPPER_DEPTH};
use super::inventory::quoted_read_name;
use super::*;
use crate::analysis::testjs;
use serde_json::json;
use std::collections::HashMap;

#[test]
fn a_constant_is_one_quoted_read_name() {
    assert_eq!(quoted_read_name(r#""tengu_x""#), Some("tengu_x"));
    assert_eq!(quoted_read_name("'bot_a_b'"), Some("bot_a_b"));
    for not in [
        "tengu_x",
        r#""tengu_x"#,
        r#""""#,
        r#"''"#,
        r#""nounderscore""#,
        r#""two words_x""#,
        r#"""tengu_x"""#,
        "`tengu_x`",
        "\"",
    ] {
        assert_eq!(quoted_read_name(not), None, "{not}");
    }
}

/// Getters of each kind, loggers, wrappers of both, and functions that
/// are neither; written here in the shapes the classifier looks for.
const ACCESSORS: &str = r#"var st = () => globalThis.__st ?? {}, out = [];
function getA(n, d) { return st().cachedFeatureFlags?.[n] ?? d; }
function getB(n, d) { return st().cachedGrowthBookFeatures?.[n] ?? d; }
function getC(n) { return st().cachedStatsigGates?.[n]; }
function getD(n) { return st().cachedDynamicConfigs?.[n]; }
function answer(n, d) { let v = st().p?.[n]; if (v !== void 0) return {value:v,source:"payload"}; return {value:d,source:"fallback"}; }
function track(e, t) { out.push({ eventName: e, metadata: t }); }
function track1(e) { out.push({ eventName: e }); }
function viaAnswer(n, d) { return answer(n, d).value; }
function viaTrack(n, m) { track(n, m); }
function notPassed(n, d) { return getA("tengu_fixed", d); }
var store = { lookup(n, d) { return st().cachedFeatureFlags?.[n] ?? d; } };
function viaMethod(n, d) { return store.lookup(n, d); }
function w1(n) { return w2(n); }
function w2(n) { return w3(n); }
function w3(n) { return w4(n); }
function w4(n) { return getA(n); }
function v0(n) { return w1(n); }
function cycA(n) { return cycB(n); }
function cycB(n) { return cycA(n); }
function plain(n) { return n + 1; }
"#;

fn kind(src: &str, name: &str) -> AccessorKind {
    let ci = testjs::script(src);
    // A new classifier each time: answers are remembered per name.
    Classifier::new(&ci).kind(0, name)
}

#[test]
fn getters_read_the_flag_store_by_any_of_its_keys_or_answer_value_and_source() {
    for name in ["getA", "getB", "getC", "getD", "answer"] {
        assert_eq!(kind(ACCESSORS, name), AccessorKind::Getter, "{name}");
    }
}

#[test]
fn loggers_build_an_event_from_two_parameters() {
    assert_eq!(kind(ACCESSORS, "track"), AccessorKind::Logger);
    assert_eq!(kind(ACCESSORS, "track1"), AccessorKind::Other);
}

#[test]
fn wrappers_that_pass_their_first_parameter_on() {
    assert_eq!(kind(ACCESSORS, "viaAnswer"), AccessorKind::Getter);
    assert_eq!(kind(ACCESSORS, "viaTrack"), AccessorKind::Logger);
    // A method found by its name (`store.lookup(n, d)`).
    assert_eq!(kind(ACCESSORS, "viaMethod"), AccessorKind::Getter);
    // Passing something else on is not wrapping.
    assert_eq!(kind(ACCESSORS, "notPassed"), AccessorKind::Other);
    assert_eq!(kind(ACCESSORS, "plain"), AccessorKind::Other);
    // A cycle of wrappers ends, as neither.
    assert_eq!(kind(ACCESSORS, "cycA"), AccessorKind::Other);
    // Unknown names are neither.
    assert_eq!(kind(ACCESSORS, "nowhere"), AccessorKind::Other);
}

#[test]
fn a_getter_keeps_its_name_when_a_table_earlier_has_that_key() {
    // Minified names collide with real keys: a locale table's `it` (Italian)
    // comes first, the getter the minifier also called `it` later. A call
    // `it("tengu_x", d)` means the binding, not the table's arrow.
    let src = r#"var locales = { fr: () => frLocale, it: () => itLocale, ja: () => jaLocale };
var st = () => globalThis.__st ?? {};
var obj = { it(n, d) { return n; } };
function it(n, d) { return st().cachedGrowthBookFeatures?.[n] ?? d; }
function gate() { return it("tengu_x", !1); }
"#;
    assert_eq!(kind(src, "it"), AccessorKind::Getter);
    assert_eq!(kind(src, "gate"), AccessorKind::Other);
    let ci = testjs::script(src);
    let (_, f) = ci.modules[0].index.function_named("it").expect("it");
    assert!(
        ci.modules[0].source()[f.lo as usize..].starts_with("function it("),
        "the declaration, not a property's function"
    );
    // And the gate scan finds the function that tests the flag.
    let gates =
        crate::analysis::gates::discover(&ci, &Default::default(), &[], &Default::default());
    assert!(
        gates.iter().any(|g| g
            .conditions
            .iter()
            .any(|c| c.flag.as_deref() == Some("tengu_x"))),
        "{gates:?}"
    );
}

#[test]
fn wrappers_are_followed_a_bounded_depth() {
    // w1 → w2 → w3 → w4 → getA: four wrappers, followed.
    assert_eq!(kind(ACCESSORS, "w1"), AccessorKind::Getter);
    // One more is past MAX_WRAPPER_DEPTH.
    assert_eq!(MAX_WRAPPER_DEPTH, 4);
    assert_eq!(kind(ACCESSORS, "v0"), AccessorKind::Other);
}

#[test]
fn a_long_function_is_not_an_accessor() {
    let src = |pad: usize| {
        format!(
            "function g(n, d) {{ /*{}*/ return s().cachedFeatureFlags?.[n] ?? d; }}",
            "x".repeat(pad)
        )
    };
    let frame = "function g(n, d) { /**/ return s().cachedFeatureFlags?.[n] ?? d; }".len();
    assert_eq!(
        kind(&src(MAX_ACCESSOR_BYTES - frame), "g"),
        AccessorKind::Getter
    );
    assert_eq!(
        kind(&src(MAX_ACCESSOR_BYTES - frame + 1), "g"),
        AccessorKind::Other
    );
}

#[test]
fn a_getter_imported_from_another_chunk() {
    let ci = testjs::chunks(&[
        (
            "/$bunfs/root/chunk-get.js",
            "function g(n, d) { return s().cachedFeatureFlags?.[n] ?? d; }\nexport { g as flagValue };",
        ),
        (
            "/$bunfs/root/chunk-use.js",
            "import { flagValue as f } from \"./chunk-get.js\";\nfunction on() { return f(\"tengu_split_on\", !1); }",
        ),
    ]);
    let uses = testjs::module(&ci, "chunk-use.js");
    assert_eq!(Classifier::new(&ci).kind(uses, "f"), AccessorKind::Getter);
    let inv = inventory(&ci, &HashMap::new());
    let flag = inv.get("tengu_split_on").unwrap();
    assert_eq!(flag.kind, FlagKind::Feature);
    assert_eq!(flag.getters, ["f"]);
    // One accessor row, under the exporting chunk's own name.
    assert_eq!(inv.accessors.len(), 1);
    assert_eq!(inv.accessors[0].name, "g");
    assert_eq!(inv.accessors[0].module, "/$bunfs/root/chunk-get.js");
}

/// Accessors of one name with as many sites, in several chunks, come
/// out in one order however the hash maps behind them iterate.
#[test]
fn accessor_rows_that_tie_are_ordered_by_module() {
    let chunk = |n: usize| {
        (
            format!("/$bunfs/root/chunk-{n}.js"),
            format!(
                "function g(n, d) {{ return s().cachedFeatureFlags?.[n] ?? d; }}\nfunction on() {{ return g(\"tengu_tie_{n}\", !1); }}"
            ),
        )
    };
    let chunks: Vec<(String, String)> = (0..12).map(chunk).collect();
    let refs: Vec<(&str, &str)> = chunks
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let ci = testjs::chunks(&refs);
    let modules: Vec<String> = inventory(&ci, &HashMap::new())
        .accessors
        .into_iter()
        .map(|a| a.module)
        .collect();
    let mut sorted = modules.clone();
    sorted.sort();
    assert_eq!(modules.len(), 12);
    assert_eq!(modules, sorted);
}

/// Flags used every way the inventory tells apart.
fn uses() -> String {
    format!(
        r#"{ACCESSORS}var FLAG_K = "tengu_inv_const", UNUSED_K = "tengu_inv_unused";
function use(x) {{
  getA("tengu_inv_feature", !1);
  getB("tengu_inv_feature", 5);
  getA("tengu_inv_feature", !1);
  getA(FLAG_K, [1, "two"]);
  getA("tengu_inv_computed", st().x);
  track("tengu_inv_event", {{}});
  plain("tengu_inv_config");
  st().get("tengu_inv_member");
  plain("tengu_inv_mixed");
  viaAnswer("tengu_inv_mixed", {{ a: 1 }});
  return x === "tengu_inv_compared";
}}
var listed = {{ "tengu_inv_key": 1 }}, names = ["tengu_inv_listed", "tengu_", "tengu_not-a-name"];
"#
    )
}

#[test]
fn each_flag_is_classified_by_its_strongest_use() {
    let ci = testjs::script(&uses());
    let inv = inventory(&ci, &HashMap::new());
    let kind = |n: &str| inv.get(n).unwrap_or_else(|| panic!("{n} missing")).kind;
    assert_eq!(kind("tengu_inv_feature"), FlagKind::Feature);
    assert_eq!(kind("tengu_inv_event"), FlagKind::Event);
    assert_eq!(kind("tengu_inv_config"), FlagKind::Config);
    // A method call is configuration, whatever the method.
    assert_eq!(kind("tengu_inv_member"), FlagKind::Config);
    assert_eq!(kind("tengu_inv_compared"), FlagKind::Other);
    assert_eq!(kind("tengu_inv_key"), FlagKind::Other);
    assert_eq!(kind("tengu_inv_listed"), FlagKind::Other);
    // Read as a feature and passed to another function: a feature.
    assert_eq!(kind("tengu_inv_mixed"), FlagKind::Feature);
    assert_eq!(inv.get("tengu_inv_mixed").unwrap().sites.len(), 2);
    // Not flag names.
    assert!(inv.get("tengu_").is_none());
    assert!(inv.get("tengu_not-a-name").is_none());
    assert!(
        inv.get("tengu_fixed").is_some(),
        "inside an accessor still counts"
    );
    let n = |k: &str| inv.counts.get(k).copied().unwrap_or(0);
    assert_eq!(
        n("feature") + n("event") + n("config") + n("other"),
        inv.flags.len()
    );
    assert_eq!(n("event"), 1);
}

#[test]
fn defaults_getters_and_sites() {
    let ci = testjs::script(&uses());
    let inv = inventory(&ci, &HashMap::new());
    let f = inv.get("tengu_inv_feature").unwrap();
    // Distinct defaults, in order of their sites; each getter once.
    assert_eq!(f.defaults, [json!(false), json!(5.0)]);
    assert_eq!(f.getters, ["getA", "getB"]);
    assert_eq!(f.sites.len(), 3);
    let site = &f.sites[0];
    assert_eq!(
        (site.raw_line, site.raw_col, site.kind),
        (24, 3, FlagKind::Feature)
    );
    assert_eq!(site.function.as_deref(), Some("use"));
    assert_eq!(site.via.as_deref(), Some("getA"));
    assert_eq!(site.constant, None);
    // A literal array default is evaluated; an expression is quoted.
    let c = inv.get("tengu_inv_const").unwrap();
    assert_eq!(c.defaults, [json!([1.0, "two"])]);
    assert_eq!(
        inv.get("tengu_inv_computed").unwrap().defaults,
        [json!("computed: st().x")]
    );
    assert_eq!(
        inv.get("tengu_inv_mixed").unwrap().defaults,
        [json!({ "a": 1.0 })]
    );
    // Only getters' sites have defaults.
    let e = inv.get("tengu_inv_event").unwrap();
    assert!(e.defaults.is_empty() && e.sites[0].default.is_none());
    assert_eq!(e.sites[0].via.as_deref(), Some("track"));
}

#[test]
fn a_local_of_a_getters_name_is_not_the_getter() {
    // A bundled library's helper table, `e("__extend", impl)` inside a
    // function taking `e`, while the module's own `getA` reads flags; and
    // an inner function that shadows the getter.
    let src = format!(
        r#"{ACCESSORS}
(function (getA) {{ getA("__extend", impl); getA("lib_mode", 1); }})(register);
function outer(getB) {{ return getB("tengu_inv_shadowed"); }}
function use() {{ return getA("other_read", 2) || getA("tengu_inv_real", !1); }}
function local() {{ let getA = (k) => table[k]; return getA("asset_key"); }}
"#
    );
    let ci = testjs::script(&src);
    let inv = inventory(&ci, &HashMap::new());
    assert!(inv.get("__extend").is_none(), "{:?}", inv.get("__extend"));
    assert!(inv.get("lib_mode").is_none());
    assert!(inv.get("asset_key").is_none());
    assert_eq!(
        inv.get("tengu_inv_shadowed").map(|f| f.kind),
        Some(FlagKind::Config)
    );
    assert_eq!(
        inv.get("other_read").map(|f| f.kind),
        Some(FlagKind::Feature)
    );
    assert_eq!(
        inv.get("tengu_inv_real").map(|f| f.kind),
        Some(FlagKind::Feature)
    );
}

#[test]
fn a_module_wrapped_in_a_function_keeps_its_getters() {
    // Bun wraps a single-bundle module in a function: its top level (the
    // getters, the calls) is then that function's, and nothing is shadowed.
    let wrapped = format!("(function (exports, require) {{\n{}\n}})", uses());
    let plain = inventory(&testjs::script(&uses()), &HashMap::new());
    let inv = inventory(&testjs::script(&wrapped), &HashMap::new());
    for f in &plain.flags {
        assert_eq!(inv.get(&f.name).map(|g| g.kind), Some(f.kind), "{}", f.name);
    }
    assert_eq!(inv.flags.len(), plain.flags.len());
}

#[test]
fn a_constant_is_followed_to_the_calls_that_use_it() {
    let ci = testjs::script(&uses());
    let inv = inventory(&ci, &HashMap::new());
    let c = inv.get("tengu_inv_const").unwrap();
    assert_eq!(c.kind, FlagKind::Feature);
    // Reported at the call, not again at the constant.
    assert_eq!(c.sites.len(), 1);
    assert_eq!(c.sites[0].constant.as_deref(), Some("FLAG_K"));
    assert_eq!(c.sites[0].function.as_deref(), Some("use"));
    // A constant nobody passes on stays where it is, as other.
    let u = inv.get("tengu_inv_unused").unwrap();
    assert_eq!(u.kind, FlagKind::Other);
    assert_eq!(u.sites.len(), 1);
    assert_eq!(u.sites[0].constant, None);
}

#[test]
fn accessors_counted_by_their_sites() {
    let ci = testjs::script(&uses());
    let inv = inventory(&ci, &HashMap::new());
    let rows: Vec<(&str, AccessorKind, usize)> = inv
        .accessors
        .iter()
        .map(|a| (a.name.as_str(), a.kind, a.sites))
        .collect();
    assert_eq!(
        rows,
        [
            ("getA", AccessorKind::Getter, 5),
            ("getB", AccessorKind::Getter, 1),
            ("track", AccessorKind::Logger, 1),
            ("viaAnswer", AccessorKind::Getter, 1),
        ]
    );
    assert_eq!(inv.accessors[2].kind_str(), "logger");
}

/// A registry the app fills at start-up with its flag getter, read every
/// way real builds read one; and one filled with something else.
const REGISTRY: &str = r#"function getA(n, d) { return st().cachedFeatureFlags?.[n] ?? d; }
class Reg { reader = null; register(e) { let old = this.reader; return this.reader = e, old; } read(e, t) { return this.reader?.(e, t); } }
var reg = new Reg;
function install(e) { return reg.register(e); }
install((e, t) => ({ ...getA(e, t), extra: 1 }));
class Other { fn = null; register(e) { this.fn = e; } call(e) { return this.fn?.(e); } }
var other = new Other();
other.register((e) => e.length);
function viaAlias(e) { let r = reg.reader; if (!r) return !1; return r(e, !1).value; }
function use() {
  reg.read("tengu_reg_read", !1);
  reg.reader?.("tengu_reg_optional", 0);
  viaAlias("tengu_reg_alias");
  other.call("tengu_reg_other");
  other.call("plain_name_other");
  reg.read("bot_protected_reg_name", !0);
}
"#;

#[test]
fn reads_through_a_registry_take_the_kind_of_what_is_registered() {
    let ci = testjs::script(REGISTRY);
    let inv = inventory(&ci, &HashMap::new());
    let kind = |n: &str| inv.get(n).unwrap_or_else(|| panic!("{n} missing")).kind;
    assert_eq!(kind("tengu_reg_read"), FlagKind::Feature);
    assert_eq!(kind("tengu_reg_optional"), FlagKind::Feature);
    assert_eq!(kind("tengu_reg_alias"), FlagKind::Feature);
    assert_eq!(inv.get("tengu_reg_read").unwrap().defaults, [json!(false)]);
    // A registry holding something else is a method call as before.
    assert_eq!(kind("tengu_reg_other"), FlagKind::Config);
    // Whatever its prefix, a name read through a getter is a flag; a
    // name of another prefix passed elsewhere is not.
    assert_eq!(kind("bot_protected_reg_name"), FlagKind::Feature);
    assert!(inv.get("plain_name_other").is_none());
}

#[test]
fn a_registry_filled_from_another_chunk() {
    let ci = testjs::chunks(&[
        (
            "/$bunfs/root/chunk-reg.js",
            "class R { reader = void 0; register(e) { this.reader = e; } }\nvar reg = new R;\nfunction fill(e) { return reg.register(e); }\nfunction q(e) { let r = reg.reader; return r ? r(e, !1) : !1; }\nfunction on() { return q(\"tengu_split_reg\"); }\nexport { fill as installReader };",
        ),
        (
            "/$bunfs/root/chunk-app.js",
            "import { installReader as ir } from \"./chunk-reg.js\";\nfunction g(n, d) { return s().cachedFeatureFlags?.[n] ?? d; }\nir(g);",
        ),
    ]);
    let inv = inventory(&ci, &HashMap::new());
    assert_eq!(inv.get("tengu_split_reg").unwrap().kind, FlagKind::Feature);
}

/// A holder set at start-up and read back through a getter, as 2.1.331
/// reads what 2.1.330 read through a registry; the setter, the getter
/// and the reads in three chunks.
#[test]
fn reads_through_a_holder_take_the_kind_of_what_is_installed() {
    let ci = testjs::chunks(&[
        (
            "/$bunfs/root/chunk-port.js",
            "class P { port = null }\nvar h = new P;\nfunction setPort(o) { let a = h.port; return h.port = o, a; }\nfunction port() { return h.port; }\nexport { setPort as sp, port as pt };",
        ),
        (
            "/$bunfs/root/chunk-app.js",
            "import { sp } from \"./chunk-port.js\";\nfunction g(n, d) { return s().cachedFeatureFlags?.[n] ?? d; }\nfunction other(n) { return n.length; }\nsp({ cached: g, withSource: (e, d) => ({ ...g(e, d), x: 1 }), plain: other, g });",
        ),
        (
            "/$bunfs/root/chunk-use.js",
            "import { pt as q } from \"./chunk-port.js\";\nfunction ce(e) { try { return q()?.cached(e, !1) === !0; } catch { return !1; } }\nvar K = \"tengu_holder_const\";\nfunction on() { return ce(K); }\nq()?.withSource(\"tengu_holder_inline\", 0);\nq().g(\"bot_protected_holder\", !0);\nq()?.plain(\"tengu_holder_plain\");\nq()?.missing(\"tengu_holder_missing\");\nfunction al() { let n = q(); if (!n) return !1; return n.withSource(\"tengu_holder_alias\", !1).value; }\nnotq()?.cached(\"tengu_holder_notq\");",
        ),
    ]);
    let inv = inventory(&ci, &HashMap::new());
    let kind = |n: &str| inv.get(n).unwrap_or_else(|| panic!("{n} missing")).kind;
    assert_eq!(kind("tengu_holder_const"), FlagKind::Feature);
    assert_eq!(kind("tengu_holder_inline"), FlagKind::Feature);
    assert_eq!(kind("bot_protected_holder"), FlagKind::Feature);
    assert_eq!(kind("tengu_holder_alias"), FlagKind::Feature);
    // Installed as something else, not installed, or another object's
    // method: configuration as before.
    assert_eq!(kind("tengu_holder_plain"), FlagKind::Config);
    assert_eq!(kind("tengu_holder_missing"), FlagKind::Config);
    assert_eq!(kind("tengu_holder_notq"), FlagKind::Config);
}

#[test]
fn a_getter_destructured_from_a_required_chunk() {
    let ci = testjs::chunks(&[
        (
            "/$bunfs/root/chunk-flags.js",
            "function g(n, d) { return s().cachedFeatureFlags?.[n] ?? d; }\nexport { g as getPinned };",
        ),
        (
            "/$bunfs/root/chunk-read.js",
            "function e(x) { return x + 1; }\nfunction on() { let { getPinned: e } = import.meta.require(\"/$bunfs/root/chunk-flags.js\"); return e(\"tengu_required_pin\", !1); }",
        ),
    ]);
    let inv = inventory(&ci, &HashMap::new());
    assert_eq!(
        inv.get("tengu_required_pin").unwrap().kind,
        FlagKind::Feature
    );
}

#[test]
fn a_constant_imported_from_another_chunk() {
    let ci = testjs::chunks(&[
        (
            "/$bunfs/root/chunk-names.js",
            "var c = \"tengu_split_const\";\nexport { c as nm };",
        ),
        (
            "/$bunfs/root/chunk-read.js",
            "import { nm } from \"./chunk-names.js\";\nfunction g(n, d) { return s().cachedFeatureFlags?.[n] ?? d; }\nfunction on(e) { return g(nm, e); }",
        ),
    ]);
    let inv = inventory(&ci, &HashMap::new());
    let f = inv.get("tengu_split_const").unwrap();
    assert_eq!(f.kind, FlagKind::Feature);
    assert!(f.sites.iter().any(|s| s.constant.as_deref() == Some("nm")));
}

#[test]
fn names_of_any_prefix_through_getters_and_their_constants() {
    let src = format!(
        "{ACCESSORS}var K = \"guarded_name_const\";\ngetA(\"guarded_name_lit\", {{ safe: !0 }}); getA(K, 1); plain(\"guarded_name_plain\"); getA(\"has space\", 1); getA(\"noseparator\", 1);"
    );
    let inv = inventory(&testjs::script(&src), &HashMap::new());
    assert_eq!(inv.get("guarded_name_lit").unwrap().kind, FlagKind::Feature);
    let c = inv.get("guarded_name_const").unwrap();
    assert_eq!(
        (c.kind, c.sites[0].constant.as_deref()),
        (FlagKind::Feature, Some("K"))
    );
    assert!(inv.get("guarded_name_plain").is_none());
    assert!(inv.get("has space").is_none());
    assert!(inv.get("noseparator").is_none());
}

#[test]
fn optional_member_calls_are_calls() {
    let inv = inventory(
        &testjs::script(
            "store()?.cached(\"tengu_opt_member\", null); maybe?.(\"tengu_opt_call\");",
        ),
        &HashMap::new(),
    );
    assert_eq!(inv.get("tengu_opt_member").unwrap().kind, FlagKind::Config);
    assert_eq!(inv.get("tengu_opt_call").unwrap().kind, FlagKind::Config);
}

#[test]
fn flag_names() {
    for yes in ["tengu_x", "tengu_a_b", "tengu_Mixed9"] {
        assert!(is_flag_name(yes), "{yes}");
    }
    for no in [
        "tengu_",
        "tengu",
        "Tengu_x",
        "xtengu_a",
        "tengu_a-b",
        "tengu_a b",
        "tengu_é",
    ] {
        assert!(!is_flag_name(no), "{no}");
    }
}

#[test]
fn flag_store_readers_by_key_or_by_their_answers() {
    assert!(reads_flag_store("return g().cachedFeatureFlags?.[e] ?? t"));
    assert!(reads_flag_store("x.cachedGrowthBookFeatures[e]"));
    assert!(reads_flag_store(
        r#"if(a)return{value:a[e],source:"payload"};return{value:t,source:"fallback"}"#
    ));
    assert!(!reads_flag_store(r#"return{value:t,source:"fallback"}"#));
    assert!(!reads_flag_store("return cache[e]"));
}
