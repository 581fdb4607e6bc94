//! Registries: flag readers the app registers at start-up into an instance
//! of a class, and reads through (`reg.reader?.(name, d)`).

use super::accessors::{Classifier, MAX_ACCESSOR_BYTES};
use super::holders::{holder_getter_of, holders};
use super::{AccessorKind, MAX_READ_NAME};
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{Call, FnId};
use std::collections::HashMap;

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
        let classes = registry_classes(ci);
        if classes.is_empty() {
            return out;
        }
        out.by_instance = instances(ci, &classes);
        if out.by_instance.is_empty() {
            return out;
        }
        let Registrations {
            mut kinds,
            wrappers,
        } = registrations(ci, cls, &out.by_instance);
        if !wrappers.is_empty() {
            wrapped_registrations(ci, cls, &wrappers, &mut kinds);
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
    pub(super) fn alias_kind(&self, ci: &CodeIndex, m: usize, name: &str) -> Option<AccessorKind> {
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

/// A registry class: the field its `register` stores the function in, and
/// the methods that call it.
struct RegistryClass {
    field: String,
    forwarding: Vec<String>,
}

/// Registry classes: (module, class name) → the class.
fn registry_classes(ci: &CodeIndex) -> HashMap<(usize, String), RegistryClass> {
    let mut classes = HashMap::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        let src = m.source();
        if memchr::memmem::find(src.as_bytes(), b"register(").is_none() {
            continue;
        }
        for (at, _) in src.match_indices("register(") {
            if let Some((class, field)) = registry_class(src, at) {
                let forwarding = forwarding_methods(m, src, at, &field);
                classes.insert((mi, class), RegistryClass { field, forwarding });
            }
        }
    }
    classes
}

/// Instances: `var reg = new Class` / `new Class()`, the class being this
/// module's or imported from another chunk (under one of the names a
/// registry class is exported as); nothing registered yet.
fn instances(
    ci: &CodeIndex,
    classes: &HashMap<(usize, String), RegistryClass>,
) -> HashMap<(usize, String), Registry> {
    let mut by_instance = HashMap::new();
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
            if let Some(class) = classes.get(&key) {
                by_instance.insert(
                    (mi, name.clone()),
                    Registry {
                        field: class.field.clone(),
                        forwarding: class.forwarding.clone(),
                        kind: AccessorKind::Other,
                    },
                );
            }
        }
    }
    by_instance
}

/// What the direct registration sites say: the kind registered into each
/// registry, and the wrappers (functions passing their first parameter to
/// `register`) whose calls register for them.
struct Registrations {
    /// (module, instance) → the strongest kind registered.
    kinds: HashMap<(usize, String), AccessorKind>,
    /// (module, wrapper function) → (module, instance) it registers into.
    wrappers: HashMap<(usize, String), (usize, String)>,
}

/// Registration sites: `reg.register(f)`; and functions that pass their
/// first parameter to one (`function w(e){return reg.register(e)}`).
fn registrations(
    ci: &CodeIndex,
    cls: &mut Classifier,
    by_instance: &HashMap<(usize, String), Registry>,
) -> Registrations {
    let mut kinds: HashMap<(usize, String), AccessorKind> = HashMap::new();
    let mut wrappers: HashMap<(usize, String), (usize, String)> = HashMap::new();
    for (mi, inst) in by_instance.keys() {
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
                    if f.first_param().is_some() && a.ident().map(|i| &**i) == f.first_param() =>
                {
                    if let Some(n) = &f.name {
                        wrappers.insert((*mi, n.to_string()), (*mi, inst.clone()));
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
    Registrations { kinds, wrappers }
}

/// Calls of the registering wrappers, in their module or, imported, in
/// another: each registers its argument into the wrapper's registry.
fn wrapped_registrations(
    ci: &CodeIndex,
    cls: &mut Classifier,
    wrappers: &HashMap<(usize, String), (usize, String)>,
    kinds: &mut HashMap<(usize, String), AccessorKind>,
) {
    let by_name: HashMap<&str, usize> = ci
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name.as_str(), i))
        .collect();
    // The names each wrapper is exported as.
    let mut exported: HashMap<(usize, &str), (usize, String)> = HashMap::new();
    for ((wm, wname), reg) in wrappers {
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
        for ((wm, wname), reg) in wrappers {
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

/// The stronger of two answers: a getter wins, then a logger.
pub(super) fn merge_kind(into: &mut AccessorKind, k: AccessorKind) {
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
pub(super) fn registered_kind(
    cls: &mut Classifier,
    m: usize,
    a: &crate::js::index::Arg,
) -> AccessorKind {
    if let Some(id) = a.ident() {
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
    let Some(p) = f.first_param() else {
        return AccessorKind::Other;
    };
    let callees: Vec<String> = module
        .index
        .calls_within(f.lo, f.hi)
        .iter()
        .filter(|c| !c.member && c.arg0.as_ref().and_then(|x| x.ident().map(|i| &**i)) == Some(p))
        .map(|c| c.name.to_string())
        .collect();
    let mut k = AccessorKind::Other;
    for c in callees {
        merge_kind(&mut k, cls.kind(m, &c));
    }
    k
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
        .filter_map(|f| f.name.as_deref().map(str::to_string))
        .filter(|n| n != "register")
        .collect()
}
