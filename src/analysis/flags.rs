//! Feature flags: every `tengu_*` string, and every name of any prefix that a
//! flag getter reads, classified by how it is used.
//!
//! - *feature*: the first argument of a flag getter — a function that reads
//!   the cached flag store (see [`STORE_KEYS`]) or answers `{value, source}`
//!   lookups, directly or through a few calls — or of a read through a
//!   registry whose registered reader is one (see [`Registries`]);
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
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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

/// A name a getter may read, whatever its prefix: a short identifier-like
/// key (a getter's first argument can also be a message or a path).
pub fn is_read_name(s: &str) -> bool {
    (2..=MAX_READ_NAME).contains(&s.len())
        && s.bytes().any(|b| b == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The longest name read as a flag whatever its prefix.
const MAX_READ_NAME: usize = 100;

/// What every flag name starts with, and what the names read through
/// getters whatever their prefix hold (`bot_protected_tengu_…`).
const FLAG_PREFIX: &str = "tengu_";

/// Whether a module's source may hold a flag read: the test by which the
/// analyses' index makes a module's pretty line map at once rather than on
/// demand ([`crate::js::code::Depth::LinesWhere`]). A module it refuses
/// that holds one anyway (a flag name imported from another chunk) only
/// costs a second parse.
pub fn may_read_flags(src: &str) -> bool {
    memchr::memmem::find(src.as_bytes(), FLAG_PREFIX.as_bytes()).is_some()
}

pub fn is_flag_name(s: &str) -> bool {
    s.starts_with(FLAG_PREFIX)
        && s.len() > FLAG_PREFIX.len()
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
    /// Answers by module, then name: asked once per call with a flag-like
    /// argument, so a lookup must not allocate a key.
    memo: HashMap<usize, HashMap<String, AccessorKind>>,
    /// Registries whose reader is known, so a wrapper reading through one
    /// is classified like a wrapper of a getter.
    registries: Registries,
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
            registries: Registries::default(),
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
        if let Some(k) = self.memo.get(&m).and_then(|n| n.get(name)) {
            return *k;
        }
        // Provisional answer breaks cycles.
        self.remember(m, name, AccessorKind::Other);
        let k = self.compute(m, name, depth);
        self.remember(m, name, k);
        k
    }

    fn remember(&mut self, key: usize, name: &str, k: AccessorKind) {
        let names = self.memo.entry(key).or_default();
        match names.get_mut(name) {
            Some(old) => *old = k,
            None => {
                names.insert(name.to_string(), k);
            }
        }
    }

    fn method_kind(&mut self, m: usize, method: &str, depth: usize) -> AccessorKind {
        let key = usize::MAX - m;
        if let Some(k) = self.memo.get(&key).and_then(|n| n.get(method)) {
            return *k;
        }
        self.remember(key, method, AccessorKind::Other);
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
        self.remember(key, method, found);
        found
    }

    fn compute(&mut self, m: usize, name: &str, depth: usize) -> AccessorKind {
        // `let r = reg.reader; r(e, d)`: the registry's reader under a name.
        if let Some(k) = self.registries.alias_kind(self.ci, m, name) {
            return k;
        }
        let Some((fm, id)) = required_function(self.ci, m, name).or_else(|| self.resolve(m, name))
        else {
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
        let callees: Vec<&Call> = calls_within(module, f.lo, f.hi)
            .iter()
            .filter(|c| c.arg0.as_ref().and_then(|a| a.ident.as_deref()) == Some(p.as_str()))
            .collect();
        let mut result = AccessorKind::Other;
        for call in callees {
            let (c, member) = (call.name.clone(), call.member);
            // `store().getFeatureValue(e, t)`: a method, found by its name
            // in this module or another chunk; `reg.read(e, t)`: a registry.
            let kind = if member {
                match self.registries.member_kind(self.ci, fm, call) {
                    AccessorKind::Other => self.method_kind(fm, &c, depth + 1),
                    k => k,
                }
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

/// How far after a destructured binding its `import.meta.require(…)` is
/// looked for.
const MAX_REQUIRE_BYTES: usize = 400;

/// `let {exported: name} = import.meta.require("chunk")`: the function
/// `name` is, found through the chunk's exports (a minified local name such
/// as `e` must not be taken for another function of that name).
fn required_function(ci: &CodeIndex, m: usize, name: &str) -> Option<(usize, FnId)> {
    let module = &ci.modules[m];
    let src = module.source();
    module.index.definitions.get(name)?.iter().find_map(|d| {
        // The pattern closes, then its value: `…}=import.meta.require("…")`
        // (a flat pattern, read a short way).
        let after = src.get(d.hi as usize..src.len().min(d.hi as usize + MAX_REQUIRE_BYTES))?;
        let close = after.find('}')?;
        if after[..close].contains(['{', '[']) {
            return None;
        }
        let rest = after[close + 1..]
            .trim_start()
            .strip_prefix('=')?
            .trim_start();
        let rest = rest.strip_prefix("import.meta.require(")?;
        let path = rest[..rest.find(')')?].trim_matches(|c| c == '"' || c == '\'');
        // The key before the binding: `{key: name}`.
        let head = src
            .get(..d.lo as usize)?
            .trim_end()
            .strip_suffix(':')?
            .trim_end();
        let k0 = head
            .bytes()
            .rposition(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'$'))
            .map_or(0, |i| i + 1);
        let key = &head[k0..];
        let t = ci.module_position(path)?;
        let local = &ci.export_named(t, key)?.local;
        ci.resolve_function(t, local)
    })
}

/// A registry: an instance of a class whose `register(fn)` stores a
/// function in a field (`this.reader = fn`), which the rest of the code
/// calls — `reg.reader?.(name, d)`, `let r = reg.reader; r(name, d)`, or a
/// method that forwards to it (`reg.read(name, d)`). The app registers its
/// flag getter there at start-up (`register((e, d) => getter(e, d))`), so a
/// read through the registry is classified by what is registered into it,
/// wherever the registration is (another chunk, through a wrapper).
#[derive(Debug, Clone, Default)]
pub struct Registries {
    /// (module, instance binding) → the registry.
    by_instance: HashMap<(usize, String), Registry>,
    /// Holders: (module, getter function) → what each key of the installed
    /// object is (see [`holders`]).
    holders: HashMap<(usize, FnId), HashMap<String, AccessorKind>>,
}

#[derive(Debug, Clone)]
struct Registry {
    /// The field the registered function is stored in.
    field: String,
    /// The class's methods that call the stored function.
    forwarding: Vec<String>,
    kind: AccessorKind,
}

/// How far from `register(` the class name and the store of the
/// registered function are looked for.
const REGISTRY_WINDOW: usize = 400;

impl Registries {
    /// Every registry of the build, and what is registered into each.
    pub fn find(ci: &CodeIndex, cls: &mut Classifier) -> Registries {
        let mut out = Registries {
            holders: holders(ci, cls),
            ..Registries::default()
        };
        let by_name: HashMap<&str, usize> = ci
            .modules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.as_str(), i))
            .collect();
        // Registry classes: (module, class name) → (field, forwarding methods).
        let mut classes: HashMap<(usize, String), (String, Vec<String>)> = HashMap::new();
        for (mi, m) in ci.modules.iter().enumerate() {
            let src = m.source();
            if memchr::memmem::find(src.as_bytes(), b"register(").is_none() {
                continue;
            }
            for (at, _) in src.match_indices("register(") {
                if let Some((class, field)) = registry_class(src, at) {
                    let forwarding = forwarding_methods(m, src, at, &field);
                    classes.insert((mi, class), (field, forwarding));
                }
            }
        }
        if classes.is_empty() {
            return out;
        }
        // Instances: `var reg = new Class` / `new Class()`, the class being
        // this module's or imported from another chunk (under one of the
        // names a registry class is exported as).
        let exported: std::collections::HashSet<&str> = classes
            .keys()
            .flat_map(|(cm, class)| {
                ci.modules[*cm]
                    .index
                    .esm_exports
                    .iter()
                    .filter(move |e| &e.local == class)
                    .map(|e| e.original.as_str())
            })
            .collect();
        for (mi, m) in ci.modules.iter().enumerate() {
            let src = m.source();
            let imported: std::collections::HashSet<&str> = m
                .index
                .imports
                .iter()
                .filter(|i| exported.contains(i.imported.as_str()))
                .map(|i| i.local.as_str())
                .collect();
            for (name, defs) in &m.index.definitions {
                let class = defs.iter().find_map(|d| {
                    let (lo, hi) = d.value?;
                    let v = src.get(lo as usize..hi as usize)?.strip_prefix("new ")?;
                    let v = v.strip_suffix("()").unwrap_or(v);
                    v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
                        .then_some(v)
                });
                let Some(class) = class else { continue };
                let key = if classes.contains_key(&(mi, class.to_string())) {
                    (mi, class.to_string())
                } else if imported.contains(class)
                    && let Some((t, local)) = ci.follow_import(mi, class)
                {
                    (t, local.to_string())
                } else {
                    continue;
                };
                if let Some((field, forwarding)) = classes.get(&key) {
                    out.by_instance.insert(
                        (mi, name.clone()),
                        Registry {
                            field: field.clone(),
                            forwarding: forwarding.clone(),
                            kind: AccessorKind::Other,
                        },
                    );
                }
            }
        }
        if out.by_instance.is_empty() {
            return out;
        }
        // Registration sites: `reg.register(f)`, and calls of a function
        // that passes its first parameter to one (`function w(e){return
        // reg.register(e)}`), in its module or, imported, in another.
        let mut kinds: HashMap<(usize, String), AccessorKind> = HashMap::new();
        let mut wrappers: HashMap<(usize, String), (usize, String)> = HashMap::new();
        for (mi, inst) in out.by_instance.keys() {
            let m = &ci.modules[*mi];
            for c in m
                .index
                .calls
                .iter()
                .filter(|c| c.member && c.name == "register")
            {
                if object_of(m.source(), c) != Some(inst.as_str()) {
                    continue;
                }
                let Some(a) = &c.arg0 else { continue };
                match m
                    .index
                    .enclosing_function(c.lo)
                    .map(|f| &m.index.functions[f as usize])
                {
                    Some(f)
                        if f.first_param.is_some()
                            && a.ident.as_deref() == f.first_param.as_deref() =>
                    {
                        if let Some(n) = &f.name {
                            wrappers.insert((*mi, n.clone()), (*mi, inst.clone()));
                        }
                    }
                    _ => {
                        let k = registered_kind(cls, *mi, a);
                        merge_kind(
                            kinds
                                .entry((*mi, inst.clone()))
                                .or_insert(AccessorKind::Other),
                            k,
                        );
                    }
                }
            }
        }
        if !wrappers.is_empty() {
            // The names each wrapper is exported as.
            let mut exported: HashMap<(usize, &str), (usize, String)> = HashMap::new();
            for ((wm, wname), reg) in &wrappers {
                for e in ci.modules[*wm]
                    .index
                    .esm_exports
                    .iter()
                    .filter(|e| &e.local == wname)
                {
                    exported.insert((*wm, e.original.as_str()), reg.clone());
                }
            }
            for (mi, m) in ci.modules.iter().enumerate() {
                let mut local: HashMap<&str, &(usize, String)> = HashMap::new();
                for ((wm, wname), reg) in &wrappers {
                    if *wm == mi {
                        local.insert(wname.as_str(), reg);
                    }
                }
                for imp in &m.index.imports {
                    let target = by_name.get(imp.source.as_str()).copied().or_else(|| {
                        ci.resolve_import(m, &imp.source)
                            .and_then(|t| by_name.get(t.name.as_str()).copied())
                    });
                    if let Some(t) = target
                        && let Some(reg) = exported.get(&(t, imp.imported.as_str()))
                    {
                        local.insert(imp.local.as_str(), reg);
                    }
                }
                if local.is_empty() {
                    continue;
                }
                for c in m.index.calls.iter().filter(|c| !c.member && c.args == 1) {
                    if let Some(reg) = local.get(c.name.as_str())
                        && let Some(a) = &c.arg0
                    {
                        let k = registered_kind(cls, mi, a);
                        merge_kind(
                            kinds.entry((*reg).clone()).or_insert(AccessorKind::Other),
                            k,
                        );
                    }
                }
            }
        }
        for (key, k) in kinds {
            if let Some(r) = out.by_instance.get_mut(&key) {
                r.kind = k;
            }
        }
        out.by_instance.retain(|_, r| r.kind != AccessorKind::Other);
        out
    }

    /// The registry `name` denotes in module `m` (its own, or imported).
    fn registry(&self, ci: &CodeIndex, m: usize, name: &str) -> Option<&Registry> {
        if let Some(r) = self.by_instance.get(&(m, name.to_string())) {
            return Some(r);
        }
        let (t, local) = ci.follow_import(m, name)?;
        self.by_instance.get(&(t, local.to_string()))
    }

    /// What a member call reads: a registry's reader (`reg.reader?.(…)`,
    /// `reg.read(…)`), or nothing known.
    pub fn member_kind(&self, ci: &CodeIndex, m: usize, c: &Call) -> AccessorKind {
        if !self.holders.is_empty()
            && let Some(k) = self.holder_kind(ci, m, c)
        {
            return k;
        }
        if self.by_instance.is_empty() {
            return AccessorKind::Other;
        }
        let module = &ci.modules[m];
        let Some(obj) = object_of(module.source(), c) else {
            return AccessorKind::Other;
        };
        match self.registry(ci, m, obj) {
            Some(r) if *r.field == *c.name || r.forwarding.iter().any(|f| **f == *c.name) => r.kind,
            _ => AccessorKind::Other,
        }
    }

    /// `port()?.cached(name, d)` / `port().cached(name, d)`: the kind of
    /// what was installed under `cached` into the holder `port()` returns.
    fn holder_kind(&self, ci: &CodeIndex, m: usize, c: &Call) -> Option<AccessorKind> {
        let module = &ci.modules[m];
        let src = module.source();
        // `let p = port(); … p.cached(name, d)`: the holder under a name.
        let getter = holder_getter_of(src, c).or_else(|| {
            let obj = object_of(src, c)?;
            // The binding in scope at the call, innermost first (minified
            // names are reused from function to function).
            let defs = module.index.definitions.get(obj)?;
            let mut scope = module.index.enclosing_function(c.lo);
            let mut def = None;
            for _ in 0..8 {
                def = defs.iter().find(|d| d.in_function == scope);
                match (def, scope) {
                    (None, Some(f)) => scope = module.index.functions[f as usize].parent,
                    _ => break,
                }
            }
            def.into_iter().find_map(|d| {
                let (lo, hi) = d.value?;
                let v = src.get(lo as usize..hi as usize)?.strip_suffix("()")?;
                v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
                    .then_some(v)
            })
        })?;
        let (t, id) = ci.resolve_function(m, getter)?;
        self.holders.get(&(t, id))?.get(&*c.name).copied()
    }

    /// `name` in module `m` bound to a registry's reader (`let r = reg.reader`).
    fn alias_kind(&self, ci: &CodeIndex, m: usize, name: &str) -> Option<AccessorKind> {
        if self.by_instance.is_empty() {
            return None;
        }
        let module = &ci.modules[m];
        let defs = module.index.definitions.get(name)?;
        defs.iter().find_map(|d| {
            let (lo, hi) = d.value?;
            let v = module.source().get(lo as usize..hi as usize)?;
            let (obj, field) = v.split_once('.')?;
            let r = self.registry(ci, m, obj)?;
            (r.field == field.trim_end_matches('?')).then_some(r.kind)
        })
    }
}

/// The stronger of two answers: a getter wins, then a logger.
fn merge_kind(into: &mut AccessorKind, k: AccessorKind) {
    let rank = |k: AccessorKind| match k {
        AccessorKind::Getter => 2,
        AccessorKind::Logger => 1,
        AccessorKind::Other => 0,
    };
    if rank(k) > rank(*into) {
        *into = k;
    }
}

/// What the function registered by an argument is: a function named by an
/// identifier, or an inline function passing its first parameter on
/// (`(e, d) => ({...getter(e, d), extra})`).
fn registered_kind(cls: &mut Classifier, m: usize, a: &crate::js::index::Arg) -> AccessorKind {
    if let Some(id) = &a.ident {
        return cls.kind(m, id);
    }
    let module = &cls.ci.modules[m];
    let Some(f) = module
        .index
        .enclosing_function(a.lo + 1)
        .map(|f| &module.index.functions[f as usize])
    else {
        return AccessorKind::Other;
    };
    if f.lo != a.lo {
        return AccessorKind::Other;
    }
    let Some(p) = f.first_param.clone() else {
        return AccessorKind::Other;
    };
    let callees: Vec<String> = calls_within(module, f.lo, f.hi)
        .iter()
        .filter(|c| {
            !c.member && c.arg0.as_ref().and_then(|x| x.ident.as_deref()) == Some(p.as_str())
        })
        .map(|c| c.name.to_string())
        .collect();
    let mut k = AccessorKind::Other;
    for c in callees {
        merge_kind(&mut k, cls.kind(m, &c));
    }
    k
}

/// The longest setter or getter body read as a holder's: they are one
/// statement.
const MAX_HOLDER_BYTES: usize = 200;

/// Holders: objects the app installs at start-up through a setter and
/// reads back through a getter — `class P{port=null} var h = new P;
/// function setPort(o){let a=h.port; return h.port=o, a}
/// function port(){return h.port}` — then reads flags as
/// `port()?.cached(name, d)`. Found by structure: a short function of one
/// parameter storing it into a slot (`X.f = p` or `X = p`) and a function of
/// no parameter returning that same slot, in one module. Every call of the
/// setter (through chunk imports too) with an object literal installs it:
/// each key is classified by its value (a function name, or an inline
/// function passing its first parameter on). The map is getter → key →
/// kind; keys installed with nothing known are left out.
fn holders(
    ci: &CodeIndex,
    cls: &mut Classifier,
) -> HashMap<(usize, FnId), HashMap<String, AccessorKind>> {
    // (module, slot text) → setters and getters of that slot.
    let mut setters: HashMap<(usize, FnId), String> = HashMap::new();
    let mut getters: HashMap<(usize, String), Vec<FnId>> = HashMap::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        let src = m.source();
        for (id, f) in m.index.functions.iter().enumerate() {
            let (lo, hi) = (f.body_lo as usize, f.hi as usize);
            if hi < lo || hi - lo > MAX_HOLDER_BYTES {
                continue;
            }
            let Some(body) = src.get(lo..hi) else {
                continue;
            };
            if f.params == 0 {
                if let Some(slot) = returned_slot(body) {
                    getters
                        .entry((mi, slot.to_string()))
                        .or_default()
                        .push(id as FnId);
                }
            } else if let Some(p) = &f.first_param
                && let Some(slot) = stored_slot(body, p)
            {
                setters.insert((mi, id as FnId), slot.to_string());
            }
        }
    }
    setters.retain(|(mi, _), slot| getters.contains_key(&(*mi, slot.clone())));
    let mut out: HashMap<(usize, FnId), HashMap<String, AccessorKind>> = HashMap::new();
    if setters.is_empty() {
        return out;
    }
    for (mi, m) in ci.modules.iter().enumerate() {
        let src = m.source();
        for c in m.index.calls.iter().filter(|c| !c.member && c.args >= 1) {
            let Some(a) = &c.arg0 else { continue };
            if src.as_bytes().get(a.lo as usize) != Some(&b'{') {
                continue;
            }
            let Some(target) = ci.resolve_function(mi, &c.name) else {
                continue;
            };
            let Some(slot) = setters.get(&target) else {
                continue;
            };
            let installed = installed_kinds(cls, mi, src, a);
            if installed.is_empty() {
                continue;
            }
            for g in &getters[&(target.0, slot.clone())] {
                let keys = out.entry((target.0, *g)).or_default();
                for (k, kind) in &installed {
                    merge_kind(keys.entry(k.clone()).or_insert(AccessorKind::Other), *kind);
                }
            }
        }
    }
    for keys in out.values_mut() {
        keys.retain(|_, k| *k != AccessorKind::Other);
    }
    out.retain(|_, keys| !keys.is_empty());
    out
}

fn is_path(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && !s.ends_with('.')
        && !s.contains("..")
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.')
        && !s.starts_with("this.")
}

/// `{return X.f}` / `{return X.f;}` / an arrow's `X.f`: the slot returned.
fn returned_slot(body: &str) -> Option<&str> {
    let b = body.trim();
    let e = match b.strip_prefix('{') {
        Some(inner) => inner
            .strip_suffix('}')?
            .trim()
            .strip_prefix("return ")?
            .trim()
            .trim_end_matches(';')
            .trim(),
        None => b,
    };
    is_path(e).then_some(e)
}

/// The slot a setter stores its parameter `p` into: `X.f = p` or `X = p`
/// (not `==`, `=>`, `!=` …).
fn stored_slot<'s>(body: &'s str, p: &str) -> Option<&'s str> {
    let b = body.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    body.match_indices('=').find_map(|(i, _)| {
        let after = body[i + 1..].trim_start();
        let rest = after.strip_prefix(p)?;
        if rest.starts_with(|c: char| c.is_ascii() && ident(c as u8))
            || rest.starts_with(['=', '>'])
        {
            return None;
        }
        if i == 0 || b"=!<>+-*/%&|^?".contains(&b[i - 1]) || b.get(i + 1) == Some(&b'=') {
            return None;
        }
        let head = body[..i].trim_end();
        let start = head
            .bytes()
            .rposition(|c| !(ident(c) || c == b'.'))
            .map_or(0, |j| j + 1);
        let slot = &head[start..];
        (is_path(slot) && slot != p).then_some(slot)
    })
}

/// The keys of an object literal passed to a setter, each classified by its
/// value.
fn installed_kinds(
    cls: &mut Classifier,
    m: usize,
    src: &str,
    a: &crate::js::index::Arg,
) -> Vec<(String, AccessorKind)> {
    use swc_ecma_ast::{Expr, Prop, PropName, PropOrSpread};
    let Some(text) = src.get(a.lo as usize..a.hi as usize) else {
        return Vec::new();
    };
    if text.len() > MAX_ACCESSOR_BYTES {
        return Vec::new();
    }
    let Ok(e) = parse_snippet(&format!("({text})")) else {
        return Vec::new();
    };
    let mut e: &Expr = &e;
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    let Expr::Object(o) = e else {
        return Vec::new();
    };
    // Snippet positions start at 1 and carry the `(`.
    let at = |lo: swc_common::BytePos| a.lo + lo.0.saturating_sub(2);
    let mut out = Vec::new();
    for p in &o.props {
        let PropOrSpread::Prop(p) = p else { continue };
        let (key, kind) = match &**p {
            Prop::Shorthand(i) => (i.sym.to_string(), cls.kind(m, i.sym.as_ref())),
            Prop::KeyValue(kv) => {
                let key = match &kv.key {
                    PropName::Ident(i) => i.sym.to_string(),
                    PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                    _ => continue,
                };
                let kind = match &*kv.value {
                    Expr::Ident(i) => cls.kind(m, i.sym.as_ref()),
                    Expr::Arrow(_) | Expr::Fn(_) => {
                        use swc_common::Spanned;
                        let span = kv.value.span();
                        let arg = crate::js::index::Arg {
                            lo: at(span.lo),
                            hi: at(span.hi),
                            ident: None,
                            string: None,
                        };
                        registered_kind(cls, m, &arg)
                    }
                    _ => continue,
                };
                (key, kind)
            }
            _ => continue,
        };
        out.push((key, kind));
    }
    out
}

/// The getter a member call is made on the result of: `port` of
/// `port()?.cached(…)` or `port().cached(…)`.
fn holder_getter_of<'s>(src: &'s str, c: &Call) -> Option<&'s str> {
    let b = src.as_bytes();
    let lo = c.lo as usize;
    let end = (lo..b.len().min(lo + MAX_READ_NAME))
        .find(|&i| !(b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$'))?;
    let rest = src[end..].strip_prefix("()")?;
    let prop = rest.strip_prefix("?.").or_else(|| rest.strip_prefix('.'))?;
    (end > lo
        && prop.starts_with(c.name.as_str())
        && !prop[c.name.len()..]
            .starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$'))
    .then(|| &src[lo..end])
}

/// The identifier a member call is made on: `reg` of `reg.read(…)` or
/// `reg.reader?.(…)`.
fn object_of<'s>(src: &'s str, c: &Call) -> Option<&'s str> {
    let b = src.as_bytes();
    let lo = c.lo as usize;
    let end = (lo..b.len().min(lo + MAX_READ_NAME))
        .find(|&i| !(b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$'))?;
    let rest = &src[end..];
    let prop = rest.strip_prefix("?.").or_else(|| rest.strip_prefix('.'))?;
    (end > lo && prop.starts_with(c.name.as_str())).then(|| &src[lo..end])
}

/// For `register(` at `at`: the class it belongs to (`class NAME{…`) and the
/// field its parameter is stored in (`this.FIELD=param`).
fn registry_class(src: &str, at: usize) -> Option<(String, String)> {
    let b = src.as_bytes();
    let ident_end = |i: usize| {
        (i..b.len())
            .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'$'))
            .unwrap_or(b.len())
    };
    let p0 = at + "register(".len();
    let p1 = ident_end(p0);
    let param = src.get(p0..p1).filter(|p| !p.is_empty())?;
    let body = src.get(p1..(p1 + REGISTRY_WINDOW).min(src.len()))?;
    let body = body.strip_prefix(')')?.trim_start().strip_prefix('{')?;
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    // The first `this.FIELD = param` (a register may read the old value first).
    let field = body.match_indices("this.").find_map(|(store, _)| {
        let f0 = store + "this.".len();
        let f1 = f0 + body[f0..].bytes().take_while(|&b| is_ident(b)).count();
        let assigned = body[f1..].trim_start().strip_prefix('=')?.trim_start();
        let rest = assigned.strip_prefix(param)?;
        (f1 > f0 && !rest.starts_with(|c: char| c.is_ascii() && is_ident(c as u8)))
            .then(|| body[f0..f1].to_string())
    })?;
    let head = &src[at.saturating_sub(REGISTRY_WINDOW)..at];
    let c0 = head.rfind("class ")? + "class ".len();
    let c1 = c0
        + head[c0..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
            .count();
    let class = &head[c0..c1];
    (!class.is_empty()).then(|| (class.to_string(), field))
}

/// The methods of the class around `at` that use `this.FIELD` (other than
/// `register`): they call the registered function.
fn forwarding_methods(m: &IndexedModule, src: &str, at: usize, field: &str) -> Vec<String> {
    let Some(class_fn) = m.index.enclosing_function(at as u32) else {
        // `register` is a method: its class is the span of its siblings.
        return Vec::new();
    };
    let parent = m.index.functions[class_fn as usize].parent;
    let reads = format!("this.{field}");
    // Only the methods near `register` (functions are in start order), and
    // short ones: the cost per occurrence stays bounded.
    let fns = &m.index.functions;
    let a = fns.partition_point(|f| (f.lo as usize) + 4 * REGISTRY_WINDOW < at);
    let b = fns.partition_point(|f| (f.lo as usize) < at + 4 * REGISTRY_WINDOW);
    fns[a..b.max(a)]
        .iter()
        .filter(|f| f.parent == parent && f.kind == crate::js::index::FnKind::Method)
        .filter(|f| ((f.hi - f.lo) as usize) <= MAX_ACCESSOR_BYTES)
        .filter(|f| {
            let s = &src[f.lo as usize..f.hi as usize];
            s.contains(reads.as_str())
        })
        .filter_map(|f| f.name.clone())
        .filter(|n| n != "register")
        .collect()
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
    let registries = Registries::find(ci, &mut cls);
    cls.registries = registries.clone();
    // Answers given before the registries were known are recomputed.
    cls.memo.clear();
    let mut ev = Evaluator::new(ci);
    let mut sites: BTreeMap<String, Vec<FlagSite>> = BTreeMap::new();
    let mut accessor_sites: HashMap<(usize, String), usize> = HashMap::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        // Constants holding a flag name: `var o = "tengu_…"`.
        let mut constants: HashMap<&str, &str> = HashMap::new();
        // Where each constant's string literal sits.
        let mut constant_at: HashMap<u32, &str> = HashMap::new();
        for (name, defs) in &m.index.definitions {
            if let Some((lo, inner)) = constant_value(m, defs) {
                constants.insert(name.as_str(), inner);
                constant_at.insert(lo, name.as_str());
            }
        }
        // Constants another chunk defines and this one imports
        // (`import {o} from "./chunk.js"; getter(o)`): a split build moves a
        // name's constant away from its reads.
        for imp in &m.index.imports {
            if constants.contains_key(imp.local.as_str()) {
                continue;
            }
            if let Some((t, local)) = ci.follow_import(mi, &imp.local)
                && let Some(v) = string_constant(&ci.modules[t], local)
            {
                constants.insert(imp.local.as_str(), v);
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
                (Some(s), _) if is_read_name(s) => (s.clone(), None),
                (_, Some(id)) => match constants.get(id.as_str()) {
                    Some(f) => (f.to_string(), Some(id.to_string())),
                    None => continue,
                },
                _ => continue,
            };
            let accessor = if c.member {
                // A method call is configuration, unless it reads through a
                // registry (`reg.read(name, d)`, `reg.reader?.(name, d)`).
                registries.member_kind(ci, mi, c)
            } else {
                cls.kind(mi, &c.name)
            };
            let kind = match accessor {
                AccessorKind::Getter => FlagKind::Feature,
                AccessorKind::Logger => FlagKind::Event,
                AccessorKind::Other => FlagKind::Config,
            };
            // Whatever its prefix, a name a getter reads is a flag; other
            // names count only with the flag prefix.
            if kind != FlagKind::Feature && !is_flag_name(&flag) {
                continue;
            }
            if a0.string.is_some() {
                at_call.insert(a0.lo, ci_);
            }
            if kind != FlagKind::Config {
                *accessor_sites.entry((mi, c.name.to_string())).or_default() += 1;
            }
            let default = (kind == FlagKind::Feature)
                .then(|| c.arg1.as_ref().map(|a| default_of(&mut ev, mi, m, a)))
                .flatten();
            sites.entry(flag).or_default().push(site(
                m,
                c.lo,
                kind,
                Some(c.name.to_string()),
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
    // Ties broken by module: the rows come out of a hash map, whose order
    // changes from run to run.
    accessors.sort_by(|a, b| {
        b.sites
            .cmp(&a.sites)
            .then(a.name.cmp(&b.name))
            .then(a.module.cmp(&b.module))
    });
    FlagInventory {
        flags,
        accessors,
        counts,
    }
}

/// The name-shaped string module `m` binds `name` to, once
/// (`var o = "tengu_…"`).
fn string_constant<'m>(m: &'m IndexedModule, name: &str) -> Option<&'m str> {
    constant_value(m, m.index.definitions.get(name)?).map(|(_, v)| v)
}

/// The name-shaped string a name's definitions bind it to, when there is
/// one definition and its value is such a string: where the value starts,
/// and the name it holds.
fn constant_value<'m>(
    m: &'m IndexedModule,
    defs: &[crate::js::index::Definition],
) -> Option<(u32, &'m str)> {
    let [d] = defs else { return None };
    let (lo, hi) = d.value?;
    if hi - lo >= MAX_CONSTANT_BYTES {
        return None;
    }
    quoted_read_name(m.source().get(lo as usize..hi as usize)?).map(|v| (lo, v))
}

/// The name a string literal's text holds (`"tengu_x"`, `'a_b'`), when it is
/// a name flags are read by. Such a name holds no quote, so the text is one
/// quote, the name, one quote (every definition's value is tested: a byte
/// test, not a trim).
fn quoted_read_name(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let quote = |c: u8| c == b'"' || c == b'\'';
    if b.len() < 2 || !quote(b[0]) || !quote(b[b.len() - 1]) {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    is_read_name(inner).then_some(inner)
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
    fn holder_slots_by_structure() {
        assert_eq!(returned_slot("{return h.port}"), Some("h.port"));
        assert_eq!(returned_slot("{ return h.port; }"), Some("h.port"));
        assert_eq!(returned_slot("h.port"), Some("h.port"));
        assert_eq!(returned_slot("{return this.port}"), None);
        assert_eq!(returned_slot("{return h.port()}"), None);
        assert_eq!(
            stored_slot("{let a=h.port;return h.port=o,a}", "o"),
            Some("h.port")
        );
        assert_eq!(stored_slot("{cur = o}", "o"), Some("cur"));
        assert_eq!(stored_slot("{return h.port==o}", "o"), None);
        assert_eq!(stored_slot("{h.port=ox}", "o"), None);
        assert_eq!(stored_slot("{this.port=o}", "o"), None);
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
}
