//! Where a text goes: every place a literal's value reaches, followed
//! through bindings (the uses of the variable it initialises, in its
//! scope), function returns (the calls of the function, or the property
//! the function is the value of), and imports across chunks — a few hops
//! deep. A text is model-facing when it reaches a place that sends to a
//! model (a tool's `prompt`, an agent's system prompt, a message's
//! `content` …); `prompts` decides which places those are.
//!
//! The index records, for each literal, identifier read, call and
//! function, the places its value is handed to (`js::flow`); this module
//! joins them up. Names are only matched within their scope (a binding is
//! the nearest declaration among the enclosing functions), so the many
//! `e`s of minified code are not one variable.

use crate::js::code::CodeIndex;
use crate::js::flow::Flow;
use crate::js::index::{DefKind, FnId};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use swc_atoms::Atom;

/// How many bindings, returns and imports a trace follows.
const MAX_HOPS: u8 = 12;
/// How many uses (or calls) of one binding are followed.
const MAX_USES: usize = 64;
/// How many places one trace keeps.
const MAX_MARKS: usize = 32;

/// A place a text reaches.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mark {
    /// The value of property `key` of the object starting at `object` in
    /// module `module` — or returned by the method `key` (`method`).
    Key {
        key: Atom,
        module: u32,
        object: u32,
        method: bool,
    },
    /// Argument `index` of a call of `callee` (a method's name, or a
    /// function's: minified names mean nothing, real ones — `describe`,
    /// `push`, `Error` — do).
    Arg { callee: Atom, index: u8, new: bool },
    /// Assigned to a member `….key`.
    Store(Atom),
    /// Thrown.
    Throw,
}

/// The places one value reaches, each with the fewest hops it took. An
/// ordered map: when the cap is met, which places are kept must not
/// depend on a hash seed (the same build gives the same answer every run).
#[derive(Debug, Clone, Default)]
pub struct Reach {
    pub marks: BTreeMap<Mark, u8>,
}

impl Reach {
    fn add(&mut self, m: Mark, hops: u8) {
        if let Some(h) = self.marks.get_mut(&m) {
            *h = (*h).min(hops);
        } else if self.marks.len() < MAX_MARKS {
            self.marks.insert(m, hops);
        }
    }

    fn extend(&mut self, other: &Reach, plus: u8) {
        for (m, h) in &other.marks {
            self.add(m.clone(), h.saturating_add(plus));
        }
    }

    /// The marks, nearest first (ties in a fixed order).
    pub fn nearest(&self) -> Vec<(&Mark, u8)> {
        let mut v: Vec<(&Mark, u8)> = self.marks.iter().map(|(m, h)| (m, *h)).collect();
        v.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        v
    }
}

type Scope = Option<FnId>;

/// A name's uses and calls by the scope of the binding they mean.
#[derive(Default)]
struct Scoped {
    uses: HashMap<Scope, Vec<u32>>,
    calls: HashMap<Scope, Vec<u32>>,
}

/// Per-module lookups, built once.
struct ModuleTables<'a> {
    /// Identifier reads by name.
    uses: HashMap<&'a str, Vec<u32>>,
    /// Calls of a plain identifier by name.
    calls: HashMap<&'a str, Vec<u32>>,
    /// Exported names of module-level bindings: local → exported.
    exports: HashMap<&'a str, Vec<&'a str>>,
    /// Named functions by name.
    functions: HashMap<&'a str, Vec<FnId>>,
}

/// Follows texts to where they go, over a whole build.
pub struct Tracer<'a> {
    ci: &'a CodeIndex,
    /// The places worth keeping (the caller's question: the rest are
    /// passed through, not remembered).
    keep: fn(&Mark) -> bool,
    tables: Vec<ModuleTables<'a>>,
    /// The scopes that declare a name (a declaration, not an assignment).
    declared: HashMap<(u32, &'a str), HashSet<Scope>>,
    bindings: HashMap<(u32, &'a str, Scope), Rc<Reach>>,
    returns: HashMap<(u32, FnId), Rc<Reach>>,
    /// Uses and plain calls of a name, grouped by the scope they mean
    /// (made once per name: minified code reuses a few names everywhere).
    scoped: HashMap<(u32, &'a str), Rc<Scoped>>,
    /// Importers of each module's exported names: (module, exported) →
    /// [(module, local)].
    importers: HashMap<(u32, &'a str), Vec<(u32, &'a str)>>,
}

impl<'a> Tracer<'a> {
    pub fn new(ci: &'a CodeIndex, keep: fn(&Mark) -> bool) -> Tracer<'a> {
        let mut tables = Vec::with_capacity(ci.modules.len());
        for m in &ci.modules {
            let mut uses: HashMap<&str, Vec<u32>> = HashMap::new();
            for (i, u) in m.index.uses.iter().enumerate() {
                uses.entry(u.name.as_str()).or_default().push(i as u32);
            }
            let mut calls: HashMap<&str, Vec<u32>> = HashMap::new();
            for (i, c) in m.index.calls.iter().enumerate() {
                if !c.member {
                    calls.entry(c.name.as_str()).or_default().push(i as u32);
                }
            }
            let mut exports: HashMap<&str, Vec<&str>> = HashMap::new();
            for e in m.index.export_table.iter().chain(&m.index.esm_exports) {
                exports
                    .entry(e.local.as_str())
                    .or_default()
                    .push(e.original.as_str());
            }
            let mut functions: HashMap<&str, Vec<FnId>> = HashMap::new();
            for (i, f) in m.index.functions.iter().enumerate() {
                if let Some(n) = &f.name {
                    functions.entry(n.as_str()).or_default().push(i as FnId);
                }
            }
            tables.push(ModuleTables {
                uses,
                calls,
                exports,
                functions,
            });
        }
        let mut importers: HashMap<(u32, &str), Vec<(u32, &str)>> = HashMap::new();
        if ci.modules.len() > 1 {
            for (mi, m) in ci.modules.iter().enumerate() {
                for im in &m.index.imports {
                    if im.local.is_empty() {
                        continue;
                    }
                    if let Some(from) = ci.resolve_import_position(m, &im.source) {
                        importers
                            .entry((from as u32, im.imported.as_str()))
                            .or_default()
                            .push((mi as u32, im.local.as_str()));
                    }
                }
            }
        }
        Tracer {
            ci,
            keep,
            tables,
            declared: HashMap::new(),
            bindings: HashMap::new(),
            returns: HashMap::new(),
            scoped: HashMap::new(),
            importers,
        }
    }

    /// Where a value handed to `chain` (in function `at` of module `m`)
    /// goes.
    pub fn trace(&mut self, m: u32, chain: &'a [Flow], at: Option<FnId>) -> Reach {
        self.chain(m, chain, at, 0)
    }

    fn chain(&mut self, m: u32, chain: &'a [Flow], at: Option<FnId>, hops: u8) -> Reach {
        let mut r = Reach::default();
        if hops > MAX_HOPS {
            return r;
        }
        let keep = self.keep;
        let add = |r: &mut Reach, m: Mark| {
            if keep(&m) {
                r.add(m, hops)
            }
        };
        for p in chain {
            match p {
                Flow::Key { key, object } => add(
                    &mut r,
                    Mark::Key {
                        key: key.clone(),
                        module: m,
                        object: *object,
                        method: false,
                    },
                ),
                Flow::Arg {
                    callee,
                    index,
                    new,
                    member,
                } => {
                    add(
                        &mut r,
                        Mark::Arg {
                            callee: callee.clone(),
                            index: *index,
                            new: *new,
                        },
                    );
                    // Into a function of this module: where its parameter goes.
                    if !*member && !*new {
                        let b = self.parameter(m, callee.as_str(), *index, at, hops + 1);
                        r.extend(&b, 0);
                    }
                }
                Flow::Store(k) => add(&mut r, Mark::Store(k.clone())),
                Flow::Throw => add(&mut r, Mark::Throw),
                Flow::Discard => {}
                Flow::Bind(name) | Flow::Into(name) => {
                    let b = self.binding(m, name, at, hops + 1);
                    r.extend(&b, 0);
                }
                Flow::Unpack(names) => {
                    for name in names {
                        let b = self.binding(m, name, at, hops + 1);
                        r.extend(&b, 0);
                    }
                }
                Flow::Return => {
                    if let Some(f) = at {
                        let b = self.returned(m, f, hops + 1);
                        r.extend(&b, 0);
                    }
                }
            }
        }
        r
    }

    /// The scope whose declaration of `name` a reference in `at` means.
    fn scope_of(&mut self, m: u32, name: &'a str, at: Option<FnId>) -> Scope {
        let module = &self.ci.modules[m as usize];
        let declared = self.declared.entry((m, name)).or_insert_with(|| {
            module
                .index
                .definitions
                .get(name)
                .map(|ds| {
                    ds.iter()
                        .filter(|d| d.kind != DefKind::Assign)
                        .map(|d| d.in_function)
                        .collect()
                })
                .unwrap_or_default()
        });
        let mut f = at;
        while let Some(x) = f {
            if declared.contains(&Some(x)) {
                return Some(x);
            }
            f = module.index.functions[x as usize].parent;
        }
        None
    }

    /// The uses and calls of `name` in module `m`, by scope.
    fn scoped(&mut self, m: u32, name: &'a str) -> Rc<Scoped> {
        if let Some(s) = self.scoped.get(&(m, name)) {
            return s.clone();
        }
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let mut out = Scoped::default();
        let uses = self.tables[m as usize]
            .uses
            .get(name)
            .cloned()
            .unwrap_or_default();
        for i in uses {
            let at = module.index.uses[i as usize].in_function;
            let s = self.scope_of(m, name, at);
            out.uses.entry(s).or_default().push(i);
        }
        let calls = self.tables[m as usize]
            .calls
            .get(name)
            .cloned()
            .unwrap_or_default();
        for i in calls {
            let at = module.index.calls[i as usize].in_function;
            let s = self.scope_of(m, name, at);
            out.calls.entry(s).or_default().push(i);
        }
        let out = Rc::new(out);
        self.scoped.insert((m, name), out.clone());
        out
    }

    /// Where the value bound to `name` (as seen from `at`) goes: every use
    /// of that binding, and its importers in other chunks.
    fn binding(&mut self, m: u32, name: &'a str, at: Option<FnId>, hops: u8) -> Rc<Reach> {
        let scope = self.scope_of(m, name, at);
        let key = (m, name, scope);
        if let Some(r) = self.bindings.get(&key) {
            return r.clone();
        }
        // A cycle reaches nothing more.
        self.bindings.insert(key, Rc::new(Reach::default()));
        let mut r = Reach::default();
        if hops <= MAX_HOPS {
            let ci = self.ci;
            let module = &ci.modules[m as usize];
            let scoped = self.scoped(m, name);
            for &i in scoped.uses.get(&scope).into_iter().flatten().take(MAX_USES) {
                let u = &module.index.uses[i as usize];
                let sub = self.chain(m, &u.flow, u.in_function, hops);
                r.extend(&sub, 0);
            }
            if scope.is_none_or(|s| module.index.functions[s as usize].parent.is_none()) {
                let exported: Vec<&str> = self.tables[m as usize]
                    .exports
                    .get(name)
                    .cloned()
                    .unwrap_or_default();
                for e in exported {
                    let importers = self.importers.get(&(m, e)).cloned().unwrap_or_default();
                    for (im, local) in importers.into_iter().take(MAX_USES) {
                        let top = self.ci.modules[im as usize]
                            .index
                            .definitions
                            .get(local)
                            .and_then(|d| d.first())
                            .and_then(|d| d.in_function);
                        let sub = self.binding(im, local, top, hops + 1);
                        r.extend(&sub, 0);
                    }
                }
            }
        }
        let r = Rc::new(r);
        self.bindings.insert(key, r.clone());
        r
    }

    /// Where argument `index` of a call of `callee` (seen from `at`) goes
    /// inside the function: the uses of its parameter.
    fn parameter(
        &mut self,
        m: u32,
        callee: &'a str,
        index: u8,
        at: Option<FnId>,
        hops: u8,
    ) -> Rc<Reach> {
        if hops > MAX_HOPS {
            return Rc::new(Reach::default());
        }
        let scope = self.scope_of(m, callee, at);
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let Some(f) = self.tables[m as usize]
            .functions
            .get(callee)
            .and_then(|fs| {
                fs.iter()
                    .copied()
                    .find(|&f| module.index.functions[f as usize].parent == scope)
            })
        else {
            return Rc::new(Reach::default());
        };
        let func = &module.index.functions[f as usize];
        match func.param_names.get(index as usize) {
            Some(p) if !p.is_empty() => self.binding(m, p.as_str(), Some(f), hops),
            _ => Rc::new(Reach::default()),
        }
    }

    /// Where the values function `f` returns go.
    fn returned(&mut self, m: u32, f: FnId, hops: u8) -> Rc<Reach> {
        if let Some(r) = self.returns.get(&(m, f)) {
            return r.clone();
        }
        self.returns.insert((m, f), Rc::new(Reach::default()));
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let func = &module.index.functions[f as usize];
        let mut r = Reach::default();
        match func.flow.split_first() {
            // A method, or a function that is a property's value: what
            // it returns is that property's, asked for by a call.
            Some((Flow::Key { key, object }, rest)) => {
                let mark = Mark::Key {
                    key: key.clone(),
                    module: m,
                    object: *object,
                    method: true,
                };
                if (self.keep)(&mark) {
                    r.add(mark, hops);
                }
                let sub = self.chain(m, rest, func.parent, hops);
                r.extend(&sub, 0);
            }
            // A named function: its calls' results, and where it is
            // handed as a value (a callback returns to its caller).
            Some((Flow::Bind(name), _)) => {
                let name: &'a str = name.as_str();
                let scope_at = func.parent;
                let scope = self.scope_of(m, name, scope_at);
                let scoped = self.scoped(m, name);
                for &i in scoped
                    .calls
                    .get(&scope)
                    .into_iter()
                    .flatten()
                    .take(MAX_USES)
                {
                    let c = &module.index.calls[i as usize];
                    let sub = self.chain(m, &c.flow, c.in_function, hops);
                    r.extend(&sub, 0);
                }
                let b = self.binding(m, name, scope_at, hops);
                r.extend(&b, 1);
            }
            // A function returned, passed or bound otherwise: its result
            // goes where the function goes (a lazy initialiser's value, a
            // callback's result).
            Some(_) => {
                let sub = self.chain(m, &func.flow, func.parent, hops);
                r.extend(&sub, 0);
            }
            None => {}
        }
        let r = Rc::new(r);
        self.returns.insert((m, f), r.clone());
        r
    }
}
