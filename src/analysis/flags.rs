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
        let order = std::iter::once(m).chain((0..self.ci.modules.len()).filter(|&i| i != m));
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
    use super::reads_flag_store;

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
