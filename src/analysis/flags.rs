//! Feature flags: every `tengu_*` string, classified by how it is used.
//!
//! - *feature*: the first argument of a flag getter — a function that reads
//!   the cached flag store (see [`STORE_KEYS`]) or answers `{value, source}`
//!   lookups, directly or through a few calls;
//! - *event*: the first argument of a telemetry logger — a function that
//!   builds `{eventName, metadata}`, or a wrapper that passes its first
//!   parameter on to one;
//! - *config*: the first argument of any other call;
//! - *other*: anywhere else (an object key, a comparison, a list).
//!
//! A name kept in a constant is followed to the calls that use the constant.

use crate::analysis::eval::{Evaluator, parse_snippet};
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{Call, FnId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum FlagKind {
    Feature,
    Event,
    Config,
    Other,
}

impl FlagKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlagKind::Feature => "feature",
            FlagKind::Event => "event",
            FlagKind::Config => "config",
            FlagKind::Other => "other",
        }
    }
}

/// What a called function is, for the strings passed to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessorKind {
    Getter,
    Logger,
    Other,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlagSite {
    pub kind: FlagKind,
    pub module: String,
    pub raw_line: u32,
    pub raw_col: u32,
    pub pretty_line: u32,
    /// The enclosing function (minified) and its recovered name.
    pub function: Option<String>,
    pub function_original: Option<String>,
    /// The getter or logger called, when there is one.
    pub via: Option<String>,
    /// The default passed to a getter: a literal, or "computed: EXPR".
    pub default: Option<serde_json::Value>,
    /// Set when the name reached the call through this constant.
    pub constant: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flag {
    pub name: String,
    pub kind: FlagKind,
    /// Distinct defaults over the getter sites.
    pub defaults: Vec<serde_json::Value>,
    pub getters: Vec<String>,
    pub sites: Vec<FlagSite>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Accessor {
    pub name: String,
    pub original: Option<String>,
    pub module: String,
    pub kind: AccessorKind,
    pub sites: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct FlagInventory {
    pub flags: Vec<Flag>,
    pub accessors: Vec<Accessor>,
    pub counts: BTreeMap<String, usize>,
}

impl Accessor {
    pub fn kind_str(&self) -> &'static str {
        match self.kind {
            AccessorKind::Getter => "getter",
            AccessorKind::Logger => "logger",
            AccessorKind::Other => "other",
        }
    }
}

impl FlagInventory {
    pub fn get(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.name == name)
    }
}

/// The keys of the cached flag store in `~/.claude.json`, newest first
/// (2.1.3xx renamed `cachedGrowthBookFeatures` to `cachedFeatureFlags`).
pub const STORE_KEYS: [&str; 4] = [
    "cachedFeatureFlags",
    "cachedGrowthBookFeatures",
    "cachedStatsigGates",
    "cachedDynamicConfigs",
];

/// Whether a function's source shows it is the flag getter: it reads the
/// cached flag store by key, or — where the store is injected and no key
/// appears (2.1.3xx) — it answers flag lookups as `{value, source}` with the
/// sources a flag value comes from.
fn reads_flag_store(src: &str) -> bool {
    STORE_KEYS.iter().any(|a| src.contains(a))
        || (src.contains("source:\"payload\"") && src.contains("source:\"fallback\""))
}

pub fn is_flag_name(s: &str) -> bool {
    s.starts_with("tengu_")
        && s.len() > 6
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The largest function classified as an accessor. Getters and loggers are
/// short; a long function that mentions the store's key (the code that
/// fills the store, a settings dump) is not one.
const MAX_ACCESSOR_BYTES: usize = 6000;

/// How many wrappers deep a call is followed to the store or the sink
/// (`gate(e)` → `value(e, t).value` → the store read): enough for the
/// chains real builds have, and a bound on cycles of calls.
const MAX_WRAPPER_DEPTH: usize = 4;

/// The longest constant value read as a flag name (`var o = "tengu_…"`):
/// a quoted name is short; a long value is something else.
const MAX_CONSTANT_BYTES: u32 = 200;

/// How much of a computed default's source is quoted.
const MAX_DEFAULT_CHARS: usize = 80;

/// Classifies called functions, following a few calls to the flag store or
/// the telemetry sink.
pub struct Classifier<'a> {
    ci: &'a CodeIndex,
    memo: HashMap<(usize, String), AccessorKind>,
}

fn calls_within(m: &IndexedModule, lo: u32, hi: u32) -> &[Call] {
    let calls = &m.index.calls;
    let a = calls.partition_point(|c| c.lo < lo);
    let b = calls.partition_point(|c| c.lo < hi);
    &calls[a..b.max(a)]
}

impl<'a> Classifier<'a> {
    pub fn new(ci: &'a CodeIndex) -> Classifier<'a> {
        Classifier {
            ci,
            memo: HashMap::new(),
        }
    }

    /// The function `name` denotes in module `m` (following one import).
    pub fn resolve(&self, m: usize, name: &str) -> Option<(usize, FnId)> {
        self.ci.resolve_function(m, name)
    }

    pub fn kind(&mut self, m: usize, name: &str) -> AccessorKind {
        self.kind_at(m, name, 0)
    }

    fn kind_at(&mut self, m: usize, name: &str, depth: usize) -> AccessorKind {
        if let Some(k) = self.memo.get(&(m, name.to_string())) {
            return *k;
        }
        // Provisional answer breaks cycles.
        self.memo.insert((m, name.to_string()), AccessorKind::Other);
        let k = self.compute(m, name, depth);
        self.memo.insert((m, name.to_string()), k);
        k
    }

    fn method_kind(&mut self, m: usize, method: &str, depth: usize) -> AccessorKind {
        let key = (usize::MAX - m, method.to_string());
        if let Some(k) = self.memo.get(&key) {
            return *k;
        }
        self.memo.insert(key.clone(), AccessorKind::Other);
        let mut found = AccessorKind::Other;
        // This module first, then the others in order; only modules that
        // define a function of that name can answer.
        let ci = self.ci;
        let defining = ci.modules_defining(method);
        let order = std::iter::once(m)
            .filter(|i| defining.binary_search(i).is_ok())
            .chain(defining.iter().copied().filter(|&i| i != m));
        for i in order {
            let module = &self.ci.modules[i];
            let Some((id, f)) = module.index.function_named(method) else {
                continue;
            };
            let src = &module.source()[f.lo as usize..f.hi as usize];
            let k = if src.len() <= MAX_ACCESSOR_BYTES && reads_flag_store(src) {
                AccessorKind::Getter
            } else if depth < MAX_WRAPPER_DEPTH {
                let name = f.name.clone().unwrap_or_default();
                let _ = id;
                self.kind_at(i, &name, depth)
            } else {
                AccessorKind::Other
            };
            if k != AccessorKind::Other {
                found = k;
                break;
            }
        }
        self.memo.insert(key, found);
        found
    }

    fn compute(&mut self, m: usize, name: &str, depth: usize) -> AccessorKind {
        let Some((fm, id)) = self.resolve(m, name) else {
            return AccessorKind::Other;
        };
        let module = &self.ci.modules[fm];
        let f = &module.index.functions[id as usize];
        let src = &module.source()[f.lo as usize..f.hi as usize];
        if src.len() > MAX_ACCESSOR_BYTES {
            return AccessorKind::Other;
        }
        if reads_flag_store(src) {
            return AccessorKind::Getter;
        }
        if f.params >= 2 && src.contains("eventName:") {
            return AccessorKind::Logger;
        }
        if depth >= MAX_WRAPPER_DEPTH {
            return AccessorKind::Other;
        }
        // A wrapper passing its first parameter on: `return Bno(e, t).value`.
        let first_param = f.first_param.clone();
        let Some(p) = first_param else {
            return AccessorKind::Other;
        };
        let callees: Vec<(String, bool)> = calls_within(module, f.lo, f.hi)
            .iter()
            .filter(|c| c.arg0.as_ref().and_then(|a| a.ident.as_deref()) == Some(p.as_str()))
            .map(|c| (c.name.clone(), c.member))
            .collect();
        let mut result = AccessorKind::Other;
        for (c, member) in callees {
            // `store().getFeatureValue(e, t)`: a method, found by its name
            // in this module or another chunk.
            let kind = if member {
                self.method_kind(fm, &c, depth + 1)
            } else {
                self.kind_at(fm, &c, depth + 1)
            };
            match kind {
                AccessorKind::Getter => return AccessorKind::Getter,
                AccessorKind::Logger => result = AccessorKind::Logger,
                AccessorKind::Other => {}
            }
        }
        result
    }
}

/// A literal default, or "computed: EXPR".
fn default_of(
    ev: &mut Evaluator,
    m: usize,
    module: &IndexedModule,
    arg: &crate::js::index::Arg,
) -> serde_json::Value {
    let text = &module.source()[arg.lo as usize..arg.hi as usize];
    if let Ok(e) = parse_snippet(text) {
        let literal = matches!(
            &*e,
            swc_ecma_ast::Expr::Lit(_)
                | swc_ecma_ast::Expr::Unary(_)
                | swc_ecma_ast::Expr::Array(_)
                | swc_ecma_ast::Expr::Object(_)
        );
        if literal && let Ok(v) = ev.eval(m, &e, arg.lo, &Vec::new()) {
            return v.to_json();
        }
    }
    let short: String = text.chars().take(MAX_DEFAULT_CHARS).collect();
    serde_json::Value::String(format!("computed: {short}"))
}

pub fn inventory(ci: &CodeIndex, originals: &HashMap<(&str, &str), &str>) -> FlagInventory {
    let mut cls = Classifier::new(ci);
    let mut ev = Evaluator::new(ci);
    let mut sites: BTreeMap<String, Vec<FlagSite>> = BTreeMap::new();
    let mut accessor_sites: HashMap<(usize, String), usize> = HashMap::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        // Constants holding a flag name: `var o = "tengu_…"`.
        let mut constants: HashMap<&str, &str> = HashMap::new();
        // Where each constant's string literal sits.
        let mut constant_at: HashMap<u32, &str> = HashMap::new();
        for (name, defs) in &m.index.definitions {
            if let [d] = defs.as_slice()
                && let Some((lo, hi)) = d.value
                && hi - lo < MAX_CONSTANT_BYTES
            {
                let text = &m.source()[lo as usize..hi as usize];
                let inner = text.trim_matches(|c| c == '"' || c == '\'');
                if text.len() >= 2 && text.len() == inner.len() + 2 && is_flag_name(inner) {
                    constants.insert(name.as_str(), &m.source()[lo as usize + 1..hi as usize - 1]);
                    constant_at.insert(lo, name.as_str());
                }
            }
        }
        let used_constants: std::collections::HashSet<&str> = m
            .index
            .calls
            .iter()
            .filter_map(|c| c.arg0.as_ref().and_then(|a| a.ident.as_deref()))
            .filter(|i| constants.contains_key(i))
            .collect();
        let mut at_call: HashMap<u32, usize> = HashMap::new();
        for (ci_, c) in m.index.calls.iter().enumerate() {
            let Some(a0) = &c.arg0 else { continue };
            let (flag, constant) = match (&a0.string, &a0.ident) {
                (Some(s), _) if is_flag_name(s) => (s.clone(), None),
                (_, Some(id)) => match constants.get(id.as_str()) {
                    Some(f) => (f.to_string(), Some(id.clone())),
                    None => continue,
                },
                _ => continue,
            };
            if a0.string.is_some() {
                at_call.insert(a0.lo, ci_);
            }
            let kind = if c.member {
                FlagKind::Config
            } else {
                match cls.kind(mi, &c.name) {
                    AccessorKind::Getter => FlagKind::Feature,
                    AccessorKind::Logger => FlagKind::Event,
                    AccessorKind::Other => FlagKind::Config,
                }
            };
            if kind != FlagKind::Config {
                *accessor_sites.entry((mi, c.name.clone())).or_default() += 1;
            }
            let default = (kind == FlagKind::Feature)
                .then(|| c.arg1.as_ref().map(|a| default_of(&mut ev, mi, m, a)))
                .flatten();
            sites.entry(flag).or_default().push(site(
                m,
                c.lo,
                kind,
                Some(c.name.clone()),
                default,
                constant,
                originals,
            ));
        }
        // Every other occurrence of a flag name.
        for s in m.index.strings.iter().filter(|s| is_flag_name(&s.value)) {
            if at_call.contains_key(&s.lo) {
                continue;
            }
            // A constant passed to calls is reported through those calls; a
            // constant nobody passes on is still "other".
            if constant_at
                .get(&s.lo)
                .is_some_and(|n| used_constants.contains(n))
            {
                continue;
            }
            sites.entry(s.value.clone()).or_default().push(site(
                m,
                s.lo,
                FlagKind::Other,
                None,
                None,
                None,
                originals,
            ));
        }
    }
    let mut flags = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (name, sites) in sites {
        let kind = sites
            .iter()
            .map(|s| s.kind)
            .min()
            .unwrap_or(FlagKind::Other);
        let mut defaults: Vec<serde_json::Value> = Vec::new();
        let mut getters: Vec<String> = Vec::new();
        for s in sites.iter().filter(|s| s.kind == FlagKind::Feature) {
            if let Some(d) = &s.default
                && !defaults.contains(d)
            {
                defaults.push(d.clone());
            }
            if let Some(g) = &s.via
                && !getters.contains(g)
            {
                getters.push(g.clone());
            }
        }
        *counts.entry(kind.as_str().to_string()).or_default() += 1;
        flags.push(Flag {
            name,
            kind,
            defaults,
            getters,
            sites,
        });
    }
    // One row per function, however many chunks import it under local names.
    let mut by_target: HashMap<(usize, Option<FnId>, String), usize> = HashMap::new();
    for ((mi, name), n) in accessor_sites {
        let key = match cls.resolve(mi, &name) {
            Some((tm, tid)) => (
                tm,
                Some(tid),
                ci.modules[tm].index.functions[tid as usize]
                    .name
                    .clone()
                    .unwrap_or(name),
            ),
            None => (mi, None, name),
        };
        *by_target.entry(key).or_default() += n;
    }
    let mut accessors: Vec<Accessor> = by_target
        .into_iter()
        .map(|((mi, _, name), n)| {
            let module = &ci.modules[mi];
            Accessor {
                original: originals
                    .get(&(module.name.as_str(), name.as_str()))
                    .map(|s| s.to_string()),
                kind: cls.kind(mi, &name),
                module: module.name.clone(),
                name,
                sites: n,
            }
        })
        .collect();
    accessors.sort_by(|a, b| b.sites.cmp(&a.sites).then(a.name.cmp(&b.name)));
    FlagInventory {
        flags,
        accessors,
        counts,
    }
}

fn site(
    m: &IndexedModule,
    lo: u32,
    kind: FlagKind,
    via: Option<String>,
    default: Option<serde_json::Value>,
    constant: Option<String>,
    originals: &HashMap<(&str, &str), &str>,
) -> FlagSite {
    let (raw_line, raw_col) = m.raw_pos(lo);
    let function = m
        .index
        .enclosing_function(lo)
        .and_then(|f| m.index.functions[f as usize].name.clone());
    FlagSite {
        kind,
        module: m.name.clone(),
        raw_line,
        raw_col,
        pretty_line: m.pretty_line(lo),
        function_original: function
            .as_deref()
            .and_then(|f| originals.get(&(m.name.as_str(), f)).map(|s| s.to_string())),
        function,
        via,
        default,
        constant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;
    use serde_json::json;

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
}
