//! Accessors: which called functions are flag getters or telemetry loggers,
//! following a few wrappers (and registries) to the flag store or the sink.

use super::registries::Registries;
use super::{AccessorKind, reads_flag_store};
use crate::js::code::CodeIndex;
use crate::js::index::{Call, FnId};
use std::collections::HashMap;

/// The largest function classified as an accessor. Getters and loggers are
/// short; a long function that mentions the store's key (the code that
/// fills the store, a settings dump) is not one.
pub(super) const MAX_ACCESSOR_BYTES: usize = 6000;

/// How many wrappers deep a call is followed to the store or the sink
/// (`gate(e)` → `value(e, t).value` → the store read): enough for the
/// chains real builds have, and a bound on cycles of calls.
pub(super) const MAX_WRAPPER_DEPTH: usize = 4;

/// Classifies called functions, following a few calls to the flag store or
/// the telemetry sink.
pub struct Classifier<'a> {
    pub(super) ci: &'a CodeIndex,
    /// Answers by module, then name: asked once per call with a flag-like
    /// argument, so a lookup must not allocate a key.
    memo: HashMap<usize, HashMap<String, AccessorKind>>,
    /// Registries whose reader is known, so a wrapper reading through one
    /// is classified like a wrapper of a getter.
    registries: Registries,
}

impl<'a> Classifier<'a> {
    pub fn new(ci: &'a CodeIndex) -> Classifier<'a> {
        Classifier {
            ci,
            memo: HashMap::new(),
            registries: Registries::default(),
        }
    }

    /// Know the build's registries from now on: answers given before they
    /// were known are recomputed.
    pub(super) fn learn_registries(&mut self, registries: Registries) {
        self.registries = registries;
        self.memo.clear();
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
        let Some(p) = f.first_param() else {
            return AccessorKind::Other;
        };
        let callees: Vec<&Call> = module
            .index
            .calls_within(f.lo, f.hi)
            .iter()
            .filter(|c| c.arg0.as_ref().and_then(|a| a.ident().map(|i| &**i)) == Some(p))
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
