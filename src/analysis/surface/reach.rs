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
//! the nearest declaration among the enclosing functions, and for a
//! `let`/`const` the innermost declaring block around the reference), so
//! the many `e`s of minified code are not one variable.

use crate::js::code::CodeIndex;
use crate::js::flow::{Flow, MemberUse};
use crate::js::index::{DefKind, FnId, FnKind, NamespaceOf};
// Fx: the keys are short names and small numbers, hashed millions of
// times per build (SipHash was a tenth of the trace's time).
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::rc::Rc;
use swc_atoms::Atom;

/// How many bindings, returns and imports a trace follows.
const MAX_HOPS: u8 = 12;
/// How many chunks that only export a function again are followed to
/// its calls (the same bound as [`Tracer::parameter`] takes the other
/// way).
const REEXPORT_DEPTH: u8 = 4;
/// How many uses (or calls) of one binding are followed (a converter with
/// one list name in each of its many branches has more than 64).
const MAX_USES: usize = 128;
/// How many places one trace keeps.
const MAX_MARKS: usize = 32;

/// A place a text reaches.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mark {
    /// The value of property `key` of the object starting at `object` in
    /// module `module` — or returned by the method `key` (`method`).
    ///
    /// The numbers first: places are compared millions of times, and
    /// most differ in their object.
    Key {
        module: u32,
        object: u32,
        key: Atom,
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
    /// Argument `index` of a call of `callee` in module `module` that the
    /// caller asked to watch (see [`Tracer::watching`]): a call known by
    /// what else it is handed, not by its minified name.
    Call {
        module: u32,
        callee: Atom,
        index: u8,
    },
}

/// The places one value reaches, each with the fewest hops it took, in
/// the marks' order: when the cap is met, which places are kept must not
/// depend on a hash seed (the same build gives the same answer every run).
/// A sorted vector, not a map: a build has hundreds of thousands of
/// memoised reaches, most of a few places.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    pub marks: Vec<(Mark, u8)>,
    /// The reaches of a cycle still being found that this one adds:
    /// empty once every reach it met is found (see [`Node`]).
    cycle: Option<Box<Cycle>>,
    /// The fewest hops to a place the caller's `user` question says
    /// shows the text to a person (kept as a distance, not as places:
    /// every trace meets some).
    pub user: Option<u8>,
    /// The fewest hops to a place the caller's `generic` question names:
    /// one that decides only when nothing else does (a message's text
    /// block). A distance too: a trace meets many, and kept as places they
    /// would push out the farther ones that decide.
    pub generic: Option<u8>,
    /// Whether the value is handed back by the function it is in
    /// (returned as it is, or built into what it returns, directly or
    /// through that function's own names): for a parameter, whether a
    /// call's result carries its argument. A reach's own, never added to
    /// another's.
    passes: bool,
}

impl Reach {
    /// Adds a place (or a shorter way to it); whether anything changed.
    fn add(&mut self, m: Mark, hops: u8) -> bool {
        match self.marks.binary_search_by(|(x, _)| x.cmp(&m)) {
            Ok(i) if hops < self.marks[i].1 => {
                self.marks[i].1 = hops;
                true
            }
            Ok(_) => false,
            Err(i) if self.marks.len() < MAX_MARKS => {
                self.marks.insert(i, (m, hops));
                true
            }
            Err(_) => {
                // Full: the nearest places decide a kind, so a nearer one
                // takes the farthest one's room (ties in the marks' order,
                // so which stays does not depend on the order they came in).
                let Some((far, _)) = self
                    .marks
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.1.cmp(&b.1.1).then_with(|| a.1.0.cmp(&b.1.0)))
                else {
                    return false;
                };
                if (hops, &m) < (self.marks[far].1, &self.marks[far].0) {
                    self.marks.remove(far);
                    let i = self
                        .marks
                        .binary_search_by(|(x, _)| x.cmp(&m))
                        .unwrap_or_else(|i| i);
                    self.marks.insert(i, (m, hops));
                    true
                } else {
                    false
                }
            }
        }
    }

    /// The places reached.
    pub fn places(&self) -> impl Iterator<Item = &Mark> {
        self.marks.iter().map(|(m, _)| m)
    }

    /// Adds `other`'s places, each `plus` hops further, those within
    /// `MAX_HOPS`, and the cycle's reaches it adds; whether any place
    /// changed.
    fn extend(&mut self, other: &Reach, plus: u8) -> bool {
        let mut changed = false;
        for (mine, theirs) in [
            (&mut self.user, other.user),
            (&mut self.generic, other.generic),
        ] {
            if let Some(u) = theirs {
                let u = u.saturating_add(plus);
                if u <= MAX_HOPS && mine.is_none_or(|x| u < x) {
                    *mine = Some(u);
                    changed = true;
                }
            }
        }
        for (m, h) in &other.marks {
            let h = h.saturating_add(plus);
            if h <= MAX_HOPS {
                changed |= self.add(m.clone(), h);
            }
        }
        if let Some(c) = &other.cycle {
            let mine = self.cycle.get_or_insert_with(|| {
                Box::new(Cycle {
                    low: c.low,
                    adds: Vec::new(),
                })
            });
            mine.low = mine.low.min(c.low);
            for &(n, h) in &c.adds {
                let h = h.saturating_add(plus);
                if h <= MAX_HOPS {
                    mine.adds.push((n, h));
                }
            }
        }
        changed
    }

    /// The marks, nearest first (ties in a fixed order).
    pub fn nearest(&self) -> Vec<(&Mark, u8)> {
        let mut v: Vec<(&Mark, u8)> = self.marks.iter().map(|(m, h)| (m, *h)).collect();
        // Stable: ties stay in the marks' order.
        v.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        v
    }
}

/// What a name means: the function declaring it (`None`: the module's
/// top level), and for a `let`/`const` declared in a block inside it, one
/// more than where that block starts (0: the function's own binding).
/// Minified code reuses a name in sibling blocks of one function: they are
/// different variables.
type Scope = (Option<FnId>, u32);

/// A declaration of a name: the function it is in, and for one in a
/// block, where the block starts (plus one; 0: the function's own) and
/// ends.
type Declaration = (Option<FnId>, u32, u32);

/// A reference whose place in the source is not known: it means the
/// function's binding, or the first block's.
const ANYWHERE: u32 = u32::MAX;

/// A name's uses and calls by the scope of the binding they mean.
/// Flat and sorted by scope (then by position), not maps of lists: a
/// build has tens of thousands of names, most used in a few scopes.
#[derive(Default)]
struct Scoped {
    uses: Vec<(Scope, u32)>,
    calls: Vec<(Scope, u32)>,
}

/// The entries of `scope` in a list sorted by scope.
fn in_scope(v: &[(Scope, u32)], scope: Scope) -> impl Iterator<Item = u32> + '_ {
    let from = v.partition_point(|(s, _)| *s < scope);
    v[from..]
        .iter()
        .take_while(move |(s, _)| *s == scope)
        .map(|(_, i)| *i)
}

/// Per-module lookups, built once.
struct ModuleTables<'a> {
    /// Identifier reads by name.
    uses: Groups<&'a str>,
    /// Calls of a plain identifier by name.
    calls: Groups<&'a str>,
    /// Exported names of module-level bindings: local → (exported, the
    /// export table's namespace object; `None` for an ESM export).
    exports: HashMap<&'a str, Vec<(&'a str, Option<&'a str>)>>,
    /// The local binding behind each exported name: exported → local.
    exported: HashMap<&'a str, &'a str>,
    /// Names imported from another chunk: local → (module, exported).
    imported: HashMap<&'a str, (u32, &'a str)>,
    /// Named functions by name.
    functions: Groups<&'a str>,
    /// Member reads by (object name or `this`, key; empty for `o[…]`).
    members: Groups<(&'a str, &'a str)>,
    /// Calls of a namespace's members by (alias, key), and of the methods
    /// of objects and classes bound to names.
    member_calls: Groups<(&'a str, &'a str)>,
    /// The names the exports of this module's lazily loaded parts are
    /// taken apart into (`let {key: local} = await …(init(), ns)`): (ns,
    /// key) → [(local, the function it is bound in)].
    unpacked: HashMap<(&'a str, &'a str), Vec<Bound<'a>>>,
    /// The same, by local name: local → [(the binding behind the export,
    /// the function it is bound in)].
    unpacked_names: HashMap<&'a str, Vec<Bound<'a>>>,
    /// The names other chunks' exports are taken into here when loaded
    /// lazily: local → [(chunk, exported name, the function it is bound
    /// in)].
    lazy_imported: HashMap<&'a str, Vec<ChunkExport<'a>>>,
    /// The names objects and classes are bound to, by where they start: a
    /// class's methods are called through its name.
    holders: HashMap<u32, &'a str>,
    /// The module's own scope: `None`, or the function wrapping the whole
    /// module (a CommonJS-wrapped bundle).
    top: Scope,
}

/// A name and the function it is bound in.
type Bound<'a> = (&'a str, Option<FnId>);

/// A module, a name there (a local, or an exported name), and the
/// function the lazily loaded export's binding is in.
type ChunkExport<'a> = (u32, &'a str, Option<FnId>);

/// Member reads (or calls) by (object, key): their positions.
fn by_object_and_key(uses: &[MemberUse]) -> Groups<(&str, &str)> {
    Groups::new(
        uses.iter()
            .enumerate()
            .map(|(i, u)| ((u.obj.as_str(), u.key.as_str()), i as u32)),
    )
}

/// Positions grouped by a key, each group in the order given: one list
/// for all of them and a map to each group's range, not a list per key —
/// a build's tables hold about 400,000 keys, most with one or two
/// positions, and a list of their own cost each a header and an
/// allocation (about 15 MB of the peak of a cold run of 2.1.332).
struct Groups<K> {
    ranges: HashMap<K, (u32, u32)>,
    items: Vec<u32>,
}

impl<K: std::hash::Hash + Eq + Copy> Groups<K> {
    fn new(pairs: impl Iterator<Item = (K, u32)> + Clone) -> Groups<K> {
        let mut ranges: HashMap<K, (u32, u32)> = HashMap::default();
        let mut n = 0u32;
        for (k, _) in pairs.clone() {
            ranges.entry(k).or_default().1 += 1;
            n += 1;
        }
        // Each group's start; its length counts up again as it is filled.
        let mut start = 0;
        for r in ranges.values_mut() {
            let len = r.1;
            *r = (start, 0);
            start += len;
        }
        let mut items = vec![0; n as usize];
        for (k, i) in pairs {
            if let Some(r) = ranges.get_mut(&k) {
                items[(r.0 + r.1) as usize] = i;
                r.1 += 1;
            }
        }
        Groups { ranges, items }
    }

    /// The positions of `k`, in the order given (none for an unknown key).
    fn get(&self, k: &K) -> &[u32] {
        &self.items[self.range(k)]
    }

    /// Where the positions of `k` are in `items`.
    fn range(&self, k: &K) -> std::ops::Range<usize> {
        match self.ranges.get(k) {
            Some(&(at, n)) => at as usize..(at + n) as usize,
            None => 0..0,
        }
    }

    fn contains_key(&self, k: &K) -> bool {
        self.ranges.contains_key(k)
    }
}

/// The scope of a module's own bindings (those it can export): Bun's
/// CommonJS wrapper (`(function(exports, require, module, …) {…})`) when
/// it wraps the module — not any function at the top of a chunk, whose
/// locals are its own.
pub(super) fn module_top(m: &crate::js::code::IndexedModule) -> Scope {
    let Some(f) = m.index.functions.first() else {
        return (None, 0);
    };
    let wrapper = f.parent.is_none()
        && f.kind == FnKind::Expression
        && f.first_param() == Some("exports")
        && m.index.functions[1..].iter().all(|g| g.parent.is_some());
    (wrapper.then_some(0), 0)
}

/// The function a call is in, when it hands its result on: as a value
/// (an argument, a binding, a return …), or as the receiver of methods
/// that derive another value from it (`schema().passthrough()`) — not
/// when a method of the chain only checks a value against it
/// (`schema().strict().parse(x)`, `safeParse`: the validation libraries'
/// own names), nor as a statement of its own.
fn handing(m: &crate::js::code::IndexedModule, c: &crate::js::index::Call) -> Option<FnId> {
    match c.flow.first() {
        None => None,
        Some(Flow::Discard) => {
            let methods = method_chain(m.source().get(c.hi as usize..)?);
            let checks = methods.iter().any(|x| {
                matches!(
                    x.as_str(),
                    "parse" | "safeParse" | "parseAsync" | "safeParseAsync" | "spa"
                )
            });
            (!methods.is_empty() && !checks)
                .then_some(c.in_function)
                .flatten()
        }
        Some(_) => c.in_function,
    }
}

/// The methods called in a chain on a value, read from the source just
/// after it (`.a(…).b(…)` gives `a`, `b`); at most a few, and none once
/// the text is not such a chain. Quotes inside arguments are skipped so
/// their parentheses do not count.
fn method_chain(after: &str) -> Vec<String> {
    const MAX_METHODS: usize = 8;
    const MAX_BYTES: usize = 4096;
    let b = after.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < MAX_METHODS && b.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut j = start;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'$') {
            j += 1;
        }
        if j == start || b.get(j) != Some(&b'(') {
            break;
        }
        // The matching `)`, skipping quoted text.
        let (mut depth, mut k, mut quote) = (0usize, j, None::<u8>);
        while k < b.len() && k < MAX_BYTES {
            let ch = b[k];
            match quote {
                Some(_) if ch == b'\\' => k += 1,
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None if matches!(ch, b'"' | b'\'' | b'`') => quote = Some(ch),
                None if ch == b'(' => depth += 1,
                None if ch == b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                None => {}
            }
            k += 1;
        }
        if k >= b.len() || k >= MAX_BYTES {
            break;
        }
        out.push(after[start..j].to_string());
        i = k + 1;
    }
    out
}

/// The getter a lazy initialiser is the first argument of (`x =
/// once(() => …)`: `x`), if function `func` is one: the name the wrapper
/// call's result is bound to.
fn getter_of<'m>(
    m: &'m crate::js::code::IndexedModule,
    func: &crate::js::index::Function,
) -> Option<&'m str> {
    let Some(Flow::Arg {
        index: 0,
        member: false,
        new: false,
        ..
    }) = func.flow.first()
    else {
        return None;
    };
    let calls = &m.index.calls;
    // The wrapper's call starts before its argument: the nearest few
    // calls starting at or before it (calls are in source order).
    let end = calls.partition_point(|c| c.lo <= func.lo);
    calls[end.saturating_sub(8)..end]
        .iter()
        .rev()
        .find(|c| {
            c.arg0
                .as_ref()
                .is_some_and(|a| a.lo <= func.lo && func.hi <= a.hi)
        })
        .and_then(|c| {
            c.flow.iter().find_map(|f| match f {
                Flow::Bind(name) => Some(name.as_str()),
                _ => None,
            })
        })
}

/// Where a cycle stands in a reach still being found: the reaches of
/// the cycle it adds (each a [`Node`], with the hops to it), and the
/// earliest reach on the tracer's stack it met (Tarjan's low link).
#[derive(Debug, Clone)]
struct Cycle {
    low: u32,
    adds: Vec<(u32, u8)>,
}

/// A reach of a binding, a function's returns or a member: found once,
/// relative to its own entry (hop 0) and with the whole hop budget, so
/// that it means the same whichever trace asks first (a trace further
/// away keeps fewer of its places).
///
/// Bindings and helpers call each other in cycles, and a reach on a
/// cycle is only known when the whole cycle is. So the reaches are
/// found as Tarjan's algorithm finds strongly connected components:
/// one that met a reach still open (on the stack) waits, with its own
/// places and the open ones it adds; when the first of a cycle is done,
/// the cycle's places are spread through it until nothing changes, and
/// each reach is found once. A reach's number is the order it was first
/// asked for in.
enum Node {
    Done(Rc<Reach>),
    /// Being found (on the stack).
    Open,
    /// Found but for the cycle it is part of (on the stack).
    Waiting(Box<Reach>),
}

/// A reach that adds reach `n`, still on the stack, whose cycle's first
/// reach is `low`.
fn pending(n: u32, low: u32) -> Reach {
    Reach {
        cycle: Some(Box::new(Cycle {
            low,
            adds: vec![(n, 0)],
        })),
        ..Reach::default()
    }
}

/// How deep reaches may nest while being found: a chain of bindings in
/// a hostile file must not take unbounded stack (about 1.3 KB a level;
/// deeper, a reach is empty). The deepest of 2.1.332 is 3,709.
const MAX_DEPTH: usize = 16_384;

/// What a member read means: `o.key` of a binding (by its scope), or
/// `this.key` of an object or class (by where it starts).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Holder {
    Binding(Scope),
    This(u32),
}

/// Follows texts to where they go, over a whole build.
pub struct Tracer<'a> {
    ci: &'a CodeIndex,
    /// The places worth keeping (the caller's question: the rest are
    /// passed through, not remembered). Given the build, to look at a
    /// place's object.
    keep: fn(&CodeIndex, &Mark) -> bool,
    /// The places that show a text to a person (counted in `Reach::user`).
    user: fn(&CodeIndex, &Mark) -> bool,
    /// The places that decide only when nothing else does (counted in
    /// `Reach::generic`).
    generic: fn(&CodeIndex, &Mark) -> bool,
    tables: Vec<ModuleTables<'a>>,
    /// The declarations of a name (not assignments): the function, and
    /// for one in a block, where the block starts (plus one) and ends;
    /// sorted.
    declared: HashMap<(u32, &'a str), Vec<Declaration>>,
    bindings: HashMap<(u32, &'a str, Scope), u32>,
    returns: HashMap<(u32, FnId, bool), u32>,
    /// A returned object's field, read where the call's result is kept.
    fields: HashMap<(u32, FnId, &'a str), u32>,
    members: HashMap<(u32, &'a str, &'a str, Holder), u32>,
    /// Every reach asked for, by the numbers the maps above give.
    nodes: Vec<Node>,
    /// Tarjan's stack: reaches open or waiting for their cycle.
    stack: Vec<u32>,
    /// How many reaches are being found, one inside the other.
    depth: usize,
    /// The reach of most reaches.
    nothing: Rc<Reach>,
    /// Uses and plain calls of a name, grouped by the scope they mean
    /// (made once per name: minified code reuses a few names everywhere).
    scoped: HashMap<(u32, &'a str), Rc<Scoped>>,
    /// Importers of each module's exported names: (module, exported) →
    /// [(module, local)].
    importers: HashMap<(u32, &'a str), Vec<(u32, &'a str)>>,
    /// The names bound to a module's namespace (see [`Aliases`]).
    aliases: Aliases<'a>,
    /// The names a chunk's exports are taken into where it is loaded
    /// lazily (see [`LazyImporters`]).
    lazy_importers: LazyImporters<'a>,
    /// The scope each member read's object means, per module, found on
    /// first need (`UNSEEN` until then): a common minified name is read
    /// as `e.x` thousands of times, and every key of it asks again.
    member_scopes: Vec<Vec<(u32, u32)>>,
    /// The calls whose arguments are places of their own: (module, the
    /// name called there) → whether only the module's own binding of that
    /// name is meant (a nested function may have the same short name).
    watched: HashMap<(u32, Atom), bool>,
}

/// The names bound to each namespace — (module, export table's namespace
/// object, or `None` for a chunk's own exports) → [(module, alias, the
/// function it is bound in)]: a lazily loaded module's exports are read
/// and called as `alias.name`.
type Aliases<'a> = HashMap<(u32, Option<&'a str>), Vec<(u32, &'a str, Option<FnId>)>>;

/// The names a chunk's exports are taken into in the chunks that load it
/// lazily (`let {name: local} = await import("…")`): (chunk, exported
/// name) → [(module, local, the function it is bound in)].
type LazyImporters<'a> = HashMap<(u32, &'a str), Vec<ChunkExport<'a>>>;

/// A member read whose object's scope is not found yet.
const UNSEEN: u32 = u32::MAX;
/// A member read whose object is the module's (no function declares it).
const TOP_LEVEL: u32 = u32::MAX - 1;

impl<'a> Tracer<'a> {
    pub fn new(ci: &'a CodeIndex, keep: fn(&CodeIndex, &Mark) -> bool) -> Tracer<'a> {
        Self::with_user(ci, keep, |_, _| false)
    }

    /// The tracer, also counting the hops to the places `generic` names
    /// (see [`Reach::generic`]).
    pub fn with_generic(mut self, generic: fn(&CodeIndex, &Mark) -> bool) -> Tracer<'a> {
        self.generic = generic;
        self
    }

    /// A tracer that also counts the hops to the places `user` names.
    pub fn with_user(
        ci: &'a CodeIndex,
        keep: fn(&CodeIndex, &Mark) -> bool,
        user: fn(&CodeIndex, &Mark) -> bool,
    ) -> Tracer<'a> {
        let mut tables = Vec::with_capacity(ci.modules.len());
        let mut importers: HashMap<(u32, &str), Vec<(u32, &str)>> = HashMap::default();
        let mut aliases: Aliases<'a> = HashMap::default();
        let mut lazy_importers: LazyImporters<'a> = HashMap::default();
        for (mi, m) in ci.modules.iter().enumerate() {
            let uses = Groups::new(
                m.index
                    .uses
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (u.name.as_str(), i as u32)),
            );
            let calls = Groups::new(
                m.index
                    .calls
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.member)
                    .map(|(i, c)| (c.name.as_str(), i as u32)),
            );
            let mut exports: HashMap<&str, Vec<(&str, Option<&str>)>> = HashMap::default();
            let mut exported: HashMap<&str, &str> = HashMap::default();
            for e in m.index.export_table.iter().chain(&m.index.esm_exports) {
                exports
                    .entry(e.local.as_str())
                    .or_default()
                    .push((e.original.as_str(), e.namespace.as_deref()));
                exported.insert(e.original.as_str(), e.local.as_str());
            }
            let mut imported: HashMap<&str, (u32, &str)> = HashMap::default();
            if ci.modules.len() > 1 {
                for im in &m.index.imports {
                    if im.local.is_empty() {
                        continue;
                    }
                    if let Some(from) = ci.resolve_import_position(m, &im.source) {
                        imported.insert(im.local.as_str(), (from as u32, im.imported.as_str()));
                        importers
                            .entry((from as u32, im.imported.as_str()))
                            .or_default()
                            .push((mi as u32, im.local.as_str()));
                    }
                }
            }
            let functions = Groups::new(
                m.index
                    .functions
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| Some((f.name.as_deref()?, i as FnId))),
            );
            let members = by_object_and_key(&m.index.members);
            let member_calls = by_object_and_key(&m.index.member_calls);
            let mut holders: HashMap<u32, &str> = HashMap::default();
            for (name, ds) in &m.index.definitions {
                for d in ds {
                    if let Some((lo, _)) = d.value
                        && m.index.objects.binary_search_by_key(&lo, |o| o.lo).is_ok()
                    {
                        holders.entry(lo).or_insert(name.as_str());
                    }
                }
            }
            for ns in &m.index.namespaces {
                let of = match &ns.of {
                    NamespaceOf::Table(t) => Some((mi as u32, Some(t.as_str()))),
                    NamespaceOf::Chunk(src) => {
                        ci.resolve_import_position(m, src).map(|t| (t as u32, None))
                    }
                };
                if let Some(of) = of {
                    aliases.entry(of).or_default().push((
                        mi as u32,
                        ns.alias.as_str(),
                        ns.in_function,
                    ));
                }
            }
            let mut unpacked: HashMap<(&str, &str), Vec<Bound>> = HashMap::default();
            let mut unpacked_names: HashMap<&str, Vec<Bound>> = HashMap::default();
            let mut lazy_imported: HashMap<&str, Vec<ChunkExport>> = HashMap::default();
            if !m.index.unpacked.is_empty() {
                // Each table's exports by (namespace, exported name).
                let behind: HashMap<(&str, &str), &str> = m
                    .index
                    .export_table
                    .iter()
                    .filter_map(|e| {
                        let ns = e.namespace.as_deref()?;
                        Some(((ns, e.original.as_str()), e.local.as_str()))
                    })
                    .collect();
                for u in &m.index.unpacked {
                    let key = u.key.as_str();
                    let ns = match &u.ns {
                        NamespaceOf::Table(ns) => ns.as_str(),
                        // A chunk's: as an import bound in a function.
                        NamespaceOf::Chunk(src) => {
                            if let Some(from) = ci.resolve_import_position(m, src) {
                                let from = from as u32;
                                lazy_importers.entry((from, key)).or_default().push((
                                    mi as u32,
                                    u.local.as_str(),
                                    u.in_function,
                                ));
                                lazy_imported.entry(u.local.as_str()).or_default().push((
                                    from,
                                    key,
                                    u.in_function,
                                ));
                            }
                            continue;
                        }
                    };
                    unpacked
                        .entry((ns, key))
                        .or_default()
                        .push((u.local.as_str(), u.in_function));
                    if let Some(&local) = behind.get(&(ns, key)) {
                        unpacked_names
                            .entry(u.local.as_str())
                            .or_default()
                            .push((local, u.in_function));
                    }
                }
            }
            tables.push(ModuleTables {
                uses,
                calls,
                exports,
                exported,
                imported,
                functions,
                members,
                member_calls,
                unpacked,
                unpacked_names,
                lazy_imported,
                holders,
                top: module_top(m),
            });
        }
        Tracer {
            ci,
            keep,
            user,
            generic: |_, _| false,
            tables,
            declared: HashMap::default(),
            bindings: HashMap::default(),
            returns: HashMap::default(),
            fields: HashMap::default(),
            members: HashMap::default(),
            scoped: HashMap::default(),
            nodes: Vec::new(),
            stack: Vec::new(),
            depth: 0,
            nothing: Rc::default(),
            importers,
            lazy_importers,
            aliases,
            member_scopes: vec![Vec::new(); ci.modules.len()],
            watched: Default::default(),
        }
    }

    /// The tracer, also marking the arguments of the calls of each
    /// (module, name) in `calls` as places ([`Mark::Call`]).
    pub fn watching(mut self, calls: impl IntoIterator<Item = (u32, Atom)>) -> Tracer<'a> {
        self.watched.extend(calls.into_iter().map(|c| (c, false)));
        self
    }

    /// [`Self::watching`], for calls of the module's own bindings of those
    /// names only (what a chunk imports is its own binding too).
    pub fn watching_own(mut self, calls: impl IntoIterator<Item = (u32, Atom)>) -> Tracer<'a> {
        self.watched.extend(calls.into_iter().map(|c| (c, true)));
        self
    }

    /// Where a value handed to `chain` (in function `at` of module `m`)
    /// goes.
    pub fn trace(&mut self, m: u32, chain: &'a [Flow], at: Option<FnId>, pos: u32) -> Reach {
        self.chain(m, chain, at, None, pos)
    }

    /// Whether function `f` of module `m` is a lazy initialiser (`x =
    /// once(() => …)`): what it returns is `x()`'s, found through the
    /// calls of `x`.
    pub fn is_initialiser(&self, m: u32, f: FnId) -> bool {
        let module = &self.ci.modules[m as usize];
        getter_of(module, &module.index.functions[f as usize]).is_some()
    }

    /// The functions that call function `f` of module `m` and hand its
    /// result on, in the order of their calls (a call at a module's top
    /// level is in none; a call whose result is only the receiver of a
    /// member — a validation's `schema().parse(…)` — hands nothing on):
    /// calls by the name it is declared or bound by, within that name's
    /// scope and under the names other chunks import it by — or, for a
    /// lazy initialiser (`x = once(() => …)`), by the name its wrapper's
    /// result is bound to (calling `x()` runs it).
    pub fn callers(&mut self, m: u32, f: FnId) -> Vec<(u32, FnId)> {
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let func = &module.index.functions[f as usize];
        let name: Option<&'a str> = match func.flow.first() {
            Some(Flow::Bind(name)) => Some(name.as_str()),
            _ => getter_of(module, func),
        };
        let Some(name) = name else {
            return Vec::new();
        };
        let scope = self.scope_at(m, name, func.parent, func.lo);
        let mut out: Vec<(u32, FnId)> = self
            .named_calls(m, name, scope)
            .into_iter()
            .filter_map(|(cm, i)| {
                let caller = &ci.modules[cm as usize];
                handing(caller, &caller.index.calls[i as usize]).map(|g| (cm, g))
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        out.retain(|x| seen.insert(*x));
        out
    }

    /// The plain calls of `name` (declared in `scope` of module `m`), as
    /// (module, index into its calls): within the name's scope and, for a
    /// module's top-level name, under the names other chunks import it by
    /// (each list capped at `MAX_USES`).
    fn named_calls(&mut self, m: u32, name: &'a str, scope: Scope) -> Vec<(u32, u32)> {
        let scoped = self.scoped(m, name);
        let mut out: Vec<(u32, u32)> = in_scope(&scoped.calls, scope)
            .take(MAX_USES)
            .map(|i| (m, i))
            .collect();
        if scope == self.tables[m as usize].top {
            for (fm, fname) in self.exported_again(m, name) {
                let other = self
                    .importers_of(fm, fname)
                    .into_iter()
                    .chain(self.unpacked_of(fm, fname));
                for (im, local, at) in other.collect::<Vec<_>>() {
                    let scoped = self.scoped(im, local);
                    out.extend(in_scope(&scoped.calls, at).take(MAX_USES).map(|i| (im, i)));
                }
            }
        }
        out
    }

    /// The names a lazily loaded part's export `name` (a top-level binding
    /// of module `m`) is taken apart into there: (module, local, its
    /// scope), as many as a binding's uses at most.
    fn unpacked_of(&mut self, m: u32, name: &str) -> Vec<(u32, &'a str, Scope)> {
        let mut out: Vec<(u32, &'a str, Option<FnId>)> = Vec::new();
        let Some(exports) = self.tables[m as usize].exports.get(name) else {
            return Vec::new();
        };
        for &(key, ns) in exports {
            match ns {
                Some(ns) => {
                    for &(local, at) in self.tables[m as usize]
                        .unpacked
                        .get(&(ns, key))
                        .into_iter()
                        .flatten()
                    {
                        out.push((m, local, at));
                    }
                }
                // A chunk's export, where a chunk loading it lazily takes
                // it into a name.
                None => out.extend(self.lazy_importers.get(&(m, key)).into_iter().flatten()),
            }
        }
        out.truncate(MAX_USES);
        out.into_iter()
            .map(|(um, local, at)| (um, local, self.scope_of(um, local, at)))
            .collect()
    }

    /// What is known of reach `n`: found, or (on the stack) a reach that
    /// adds it once its cycle is found.
    fn recall(&self, n: u32) -> Rc<Reach> {
        match &self.nodes[n as usize] {
            Node::Done(r) => r.clone(),
            Node::Open | Node::Waiting(_) => Rc::new(pending(n, n)),
        }
    }

    /// `r` to keep: most reaches reach nothing, and share one.
    fn share(&self, r: Reach) -> Rc<Reach> {
        if r.marks.is_empty()
            && r.user.is_none()
            && r.generic.is_none()
            && r.cycle.is_none()
            && !r.passes
        {
            self.nothing.clone()
        } else {
            Rc::new(r)
        }
    }

    /// Starts finding a new reach: its number, or `None` when too deep.
    fn open(&mut self) -> Option<u32> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        let n = self.nodes.len() as u32;
        self.nodes.push(Node::Open);
        self.stack.push(n);
        self.depth += 1;
        Some(n)
    }

    /// Ends finding reach `n`, whose own places (and the open reaches it
    /// adds) are `r`: done, unless it is part of a cycle whose first
    /// reach is still open; the last of a cycle finds the whole cycle.
    fn close(&mut self, n: u32, mut r: Reach) -> Rc<Reach> {
        self.depth -= 1;
        r.marks.shrink_to_fit();
        if let Some(c) = &mut r.cycle {
            // Adding itself changes nothing (the hops only grow).
            c.adds.retain(|&(x, _)| x != n);
        }
        let low = r.cycle.as_ref().map_or(n, |c| c.low.min(n));
        if low < n {
            self.nodes[n as usize] = Node::Waiting(Box::new(r));
            return Rc::new(pending(n, low));
        }
        let Some(from) = self.stack.iter().rposition(|&x| x == n) else {
            return Rc::new(r);
        };
        if from + 1 == self.stack.len() {
            // Alone: no cycle through it (the usual case).
            self.stack.pop();
            r.cycle = None;
            let r = self.share(r);
            self.nodes[n as usize] = Node::Done(r.clone());
            return r;
        }
        let members: Vec<u32> = self.stack.split_off(from);
        self.nodes[n as usize] = Node::Waiting(Box::new(r));
        self.settle(&members);
        self.recall(n)
    }

    /// Finds the reaches of one cycle (Tarjan's component, its first
    /// reach first): each adds the others' places, again until nothing
    /// changes — the hops only shrink and the places are few, so this
    /// ends.
    fn settle(&mut self, members: &[u32]) {
        let mut reaches: Vec<Reach> = Vec::with_capacity(members.len());
        // Who adds each reach, and with how many hops.
        let mut added_by: Vec<Vec<(usize, u8)>> = vec![Vec::new(); members.len()];
        let mut sorted: Vec<(u32, usize)> =
            members.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        sorted.sort_unstable();
        for (i, &x) in members.iter().enumerate() {
            let Node::Waiting(reach) = std::mem::replace(&mut self.nodes[x as usize], Node::Open)
            else {
                reaches.push(Reach::default());
                continue;
            };
            let mut reach = *reach;
            let mut mine = Vec::new();
            for (y, h) in reach.cycle.take().map(|c| c.adds).unwrap_or_default() {
                match sorted.binary_search_by_key(&y, |&(z, _)| z) {
                    Ok(k) if k != i => mine.push((sorted[k].1, h)),
                    Ok(_) => {}
                    // Not of this cycle: found already.
                    Err(_) => {
                        if let Node::Done(d) = &self.nodes[y as usize] {
                            let d = d.clone();
                            reach.extend(&d, h);
                        }
                    }
                }
            }
            // The fewest hops to each.
            mine.sort_unstable();
            mine.dedup_by_key(|&mut (k, _)| k);
            for (k, h) in mine {
                added_by[k].push((i, h));
            }
            reaches.push(reach);
        }
        // Each reach that changed is spread to those that add it, until
        // none changes (the deepest first: they were found last, from
        // the most places).
        let mut queued = vec![true; reaches.len()];
        let mut queue: VecDeque<usize> = (0..reaches.len()).rev().collect();
        while let Some(k) = queue.pop_front() {
            queued[k] = false;
            let from = std::mem::take(&mut reaches[k]);
            for &(i, h) in &added_by[k] {
                if reaches[i].extend(&from, h) && !queued[i] {
                    queued[i] = true;
                    queue.push_back(i);
                }
            }
            reaches[k] = from;
        }
        for (x, mut r) in members.iter().zip(reaches) {
            r.marks.shrink_to_fit();
            let r = self.share(r);
            self.nodes[*x as usize] = Node::Done(r);
        }
    }

    /// The places of `chain` (hop 0) and where they lead, within
    /// `MAX_HOPS` hops.
    ///
    /// `callee`: the function whose parameter the value came in by. What
    /// that function returns goes to the call the value came from — the
    /// places after the argument in the caller's own chain — not to every
    /// call of the function (a helper that hands back its argument would
    /// otherwise join every text passed to it with every place any call
    /// of it reaches).
    ///
    /// `pos`: where the value starts, in module `m` (a chain is the
    /// value's way up its expression, so every name it is bound to is
    /// declared around `pos`: which block's declaration a name means).
    fn chain(
        &mut self,
        m: u32,
        chain: &'a [Flow],
        at: Option<FnId>,
        callee: Option<FnId>,
        pos: u32,
    ) -> Reach {
        // Reaches nest as deep as the build's bindings chain (thousands):
        // more stack when little is left, rather than a crash.
        crate::js::depth::guard(|| self.places(m, chain, at, callee, pos))
    }

    /// [`Self::chain`], on enough stack.
    fn places(
        &mut self,
        m: u32,
        chain: &'a [Flow],
        at: Option<FnId>,
        callee: Option<FnId>,
        pos: u32,
    ) -> Reach {
        let mut r = Reach::default();
        let (keep, user, generic, ci) = (self.keep, self.user, self.generic, self.ci);
        let add = |r: &mut Reach, m: Mark| {
            if user(ci, &m) {
                r.user = Some(0);
            } else if generic(ci, &m) {
                r.generic = Some(0);
            } else if keep(ci, &m) {
                r.add(m, 0);
            }
        };
        // One hop further.
        macro_rules! hop {
            ($r:expr, $f:expr) => {{
                let b = $f;
                $r.extend(&b, 1);
            }};
        }
        for (i, p) in chain.iter().enumerate() {
            match p {
                Flow::Key { key, object } => {
                    add(
                        &mut r,
                        Mark::Key {
                            key: key.clone(),
                            module: m,
                            object: *object,
                            method: false,
                        },
                    );
                    // Read back as `this.key` by the object's own methods
                    // (a class field, an object's property).
                    if self.tables[m as usize]
                        .members
                        .contains_key(&("this", key.as_str()))
                    {
                        hop!(
                            r,
                            self.member(m, "this", key.as_str(), Holder::This(*object))
                        );
                    }
                    // In an object a function returns: read back as
                    // `r.key` where a call's result is kept (`let r = f()`).
                    if let (Some(Flow::Return), Some(f)) = (chain.get(i + 1), at)
                        && callee != Some(f)
                    {
                        hop!(r, self.returned_field(m, f, key.as_str()));
                    }
                    // In an object bound to a name: read back as `o.key`
                    // (or `o[…]`) of that binding.
                    if let Some(Flow::Bind(name)) = chain.get(i + 1) {
                        let scope = self.scope_at(m, name.as_str(), at, pos);
                        hop!(
                            r,
                            self.member(m, name.as_str(), key.as_str(), Holder::Binding(scope))
                        );
                    }
                }
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
                    let watched = match (*member || *new, self.watched.is_empty()) {
                        (false, false) => self.watched.get(&(m, callee.clone())).copied(),
                        _ => None,
                    };
                    if let Some(own) = watched
                        && (!own
                            || self.scope_at(m, callee.as_str(), at, pos)
                                == self.tables[m as usize].top)
                    {
                        add(
                            &mut r,
                            Mark::Call {
                                module: m,
                                callee: callee.clone(),
                                index: *index,
                            },
                        );
                    }
                    // Into a function of this module: where its parameter
                    // goes — or, for a property of an object passed whole
                    // (`f({content: text})`), where the parameter's pattern
                    // binds that key (`function f({content: e})`).
                    if !*member && !*new {
                        let key = match i.checked_sub(1).map(|k| &chain[k]) {
                            Some(Flow::Key { key, .. }) => Some(key.as_str()),
                            _ => None,
                        };
                        let (into, exact) =
                            self.parameter(m, callee.as_str(), *index, key, at, pos);
                        r.extend(&into, 1);
                        // The call's result is the value's only when the
                        // function hands it back: a helper that reads its
                        // argument (compares it, shows it, builds something
                        // else) returns something else. (Unknown while its
                        // reach waits for a cycle: then it may.)
                        if exact && !into.passes && into.cycle.is_none() {
                            break;
                        }
                    }
                }
                Flow::Store(to) => {
                    let (key, obj) = (&to.key, &to.obj);
                    add(&mut r, Mark::Store(key.clone()));
                    // Read back as `o.key` / `this.key`.
                    let holder = if obj == "this" {
                        self.this_object(m, at).map(Holder::This)
                    } else if !obj.is_empty() {
                        Some(Holder::Binding(self.scope_at(m, obj.as_str(), at, pos)))
                    } else {
                        None
                    };
                    if let Some(h) = holder {
                        hop!(r, self.member(m, obj.as_str(), key.as_str(), h));
                    }
                }
                Flow::Throw => add(&mut r, Mark::Throw),
                Flow::Discard => {}
                Flow::Bind(name) | Flow::Into(name) => {
                    let scope = self.scope_at(m, name, at, pos);
                    let b = self.binding(m, name, scope);
                    r.extend(&b, 1);
                    // Bound to a name of this function that it returns.
                    r.passes |= b.passes && scope.0 == at;
                }
                Flow::Unpack(names) => {
                    for name in names.iter().map(|p| &p.name) {
                        let scope = self.scope_at(m, name, at, pos);
                        let b = self.binding(m, name, scope);
                        r.extend(&b, 1);
                        r.passes |= b.passes && scope.0 == at;
                    }
                }
                Flow::Return => {
                    r.passes = true;
                    // Not when it came in by this function's parameter: it
                    // is handed back to the call that passed it (the
                    // caller's chain goes on from there). A field of the
                    // object returned is not in each name the result is
                    // taken apart into, only in its key's
                    // ([`Self::returned_field`]).
                    let field = i > 0 && matches!(chain[i - 1], Flow::Key { .. });
                    if let Some(f) = at
                        && callee != Some(f)
                    {
                        hop!(r, self.returned(m, f, field));
                    }
                }
            }
        }
        r
    }

    /// The object or class whose `this` a function in `at` means: the
    /// nearest enclosing function that is not an arrow, when it is a
    /// method (or a property's function).
    fn this_object(&self, m: u32, at: Option<FnId>) -> Option<u32> {
        let fns = &self.ci.modules[m as usize].index.functions;
        let mut f = at?;
        loop {
            let func = &fns[f as usize];
            if func.kind == FnKind::Arrow {
                f = func.parent?;
                continue;
            }
            return match func.flow.first() {
                Some(Flow::Key { object, .. }) => Some(*object),
                _ => None,
            };
        }
    }

    /// Where the value held in `obj.key` goes: the reads of that member
    /// (and of `obj[…]`) that mean the same holder.
    fn member(&mut self, m: u32, obj: &'a str, key: &'a str, holder: Holder) -> Rc<Reach> {
        let k = (m, obj, key, holder);
        if let Some(&n) = self.members.get(&k) {
            return self.recall(n);
        }
        let Some(n) = self.open() else {
            return self.nothing.clone();
        };
        self.members.insert(k, n);
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let mut reads: Vec<u32> = Vec::new();
        for kk in [key, ""] {
            reads.extend(self.tables[m as usize].members.get(&(obj, kk)));
            if key.is_empty() {
                break;
            }
        }
        reads.sort_unstable();
        let mut r = Reach::default();
        let mut seen = 0;
        for i in reads {
            let u = &module.index.members[i as usize];
            let same = match holder {
                Holder::This(o) => self.this_object(m, u.in_function) == Some(o),
                Holder::Binding(s) => self.member_scope(m, obj, i) == s,
            };
            if !same {
                continue;
            }
            seen += 1;
            if seen > MAX_USES {
                break;
            }
            let sub = self.chain(
                m,
                &module.index.member_flows[u.flows()],
                u.in_function,
                None,
                u.lo,
            );
            r.extend(&sub, 0);
        }
        self.close(n, r)
    }

    /// The scope whose declaration the object of member read `i` means.
    fn member_scope(&mut self, m: u32, obj: &'a str, i: u32) -> Scope {
        let index = &self.ci.modules[m as usize].index;
        match self.member_scopes[m as usize].get(i as usize) {
            Some(&(TOP_LEVEL, b)) => return (None, b),
            Some(&(f, b)) if f != UNSEEN => return (Some(f), b),
            _ => {}
        }
        let u = &index.members[i as usize];
        let s = self.scope_at(m, obj, u.in_function, u.lo);
        let cache = &mut self.member_scopes[m as usize];
        if cache.is_empty() {
            cache.resize(index.members.len(), (UNSEEN, 0));
        }
        cache[i as usize] = (s.0.unwrap_or(TOP_LEVEL), s.1);
        s
    }

    /// The scope whose declaration of `name` a reference in `at` means,
    /// wherever in `at` it is (see [`ANYWHERE`]).
    fn scope_of(&mut self, m: u32, name: &'a str, at: Option<FnId>) -> Scope {
        self.scope_at(m, name, at, ANYWHERE)
    }

    /// The scope whose declaration of `name` a reference in `at`, at byte
    /// `pos` of the module, means: the innermost function declaring it
    /// there, and the innermost block of it that does.
    fn scope_at(&mut self, m: u32, name: &'a str, at: Option<FnId>, pos: u32) -> Scope {
        let module = &self.ci.modules[m as usize];
        let declared = self.declared.entry((m, name)).or_insert_with(|| {
            module
                .index
                .definitions
                .get(name)
                .map(|ds| {
                    let mut v: Vec<Declaration> = ds
                        .iter()
                        .filter(|d| d.kind != DefKind::Assign)
                        .map(|d| match d.block {
                            Some((lo, hi)) => (d.in_function, lo + 1, hi),
                            None => (d.in_function, 0, 0),
                        })
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .unwrap_or_default()
        });
        // The innermost declaration of `f` that a reference at `pos` sees
        // (blocks nest: the latest start is the innermost).
        let sees = |f: Option<FnId>| {
            let from = declared.partition_point(|d| d.0 < f);
            let seen = declared[from..]
                .iter()
                .take_while(|d| d.0 == f)
                .filter(|&&(_, lo, hi)| lo == 0 || pos == ANYWHERE || (lo - 1 <= pos && pos < hi))
                .map(|d| d.1);
            // Anywhere: the function's own binding if it has one, else
            // its first block's.
            if pos == ANYWHERE {
                seen.min()
            } else {
                seen.max()
            }
        };
        let f = module.index.innermost(at, |x| sees(Some(x)).is_some());
        (f, sees(f).unwrap_or(0))
    }

    /// The uses and calls of `name` in module `m`, by scope.
    fn scoped(&mut self, m: u32, name: &'a str) -> Rc<Scoped> {
        if let Some(s) = self.scoped.get(&(m, name)) {
            return s.clone();
        }
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        // Asked once per name (memoised below), each list made to size.
        let tables = &self.tables[m as usize];
        let (uses, calls) = (tables.uses.range(&name), tables.calls.range(&name));
        let mut out = Scoped {
            uses: Vec::with_capacity(uses.len()),
            calls: Vec::with_capacity(calls.len()),
        };
        for k in uses {
            let i = self.tables[m as usize].uses.items[k];
            let u = &module.index.uses[i as usize];
            let s = self.scope_at(m, name, u.in_function, u.lo);
            out.uses.push((s, i));
        }
        for k in calls {
            let i = self.tables[m as usize].calls.items[k];
            let c = &module.index.calls[i as usize];
            let s = self.scope_at(m, name, c.in_function, c.lo);
            out.calls.push((s, i));
        }
        // Stable: each scope's entries stay in the order of the source.
        out.uses.sort_by_key(|&(s, _)| s);
        out.calls.sort_by_key(|&(s, _)| s);
        let out = Rc::new(out);
        self.scoped.insert((m, name), out.clone());
        out
    }

    /// Where the value bound to `name` (declared in `scope`) goes: every
    /// use of that binding, its reads as `name[…]`, and its importers in
    /// other chunks.
    fn binding(&mut self, m: u32, name: &'a str, scope: Scope) -> Rc<Reach> {
        let key = (m, name, scope);
        if let Some(&n) = self.bindings.get(&key) {
            return self.recall(n);
        }
        let Some(n) = self.open() else {
            return self.nothing.clone();
        };
        self.bindings.insert(key, n);
        let mut r = Reach::default();
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let scoped = self.scoped(m, name);
        // A parameter's value (or a part its pattern takes apart) is
        // returned to the call that passed it: that call's own chain goes
        // on from there, not every call's.
        let callee = scope.0.filter(|&f| {
            let func = &module.index.functions[f as usize];
            scope.1 == 0
                && (func.param_names.iter().any(|p| p == name)
                    || func.param_keys.iter().any(|(_, _, local)| local == name))
        });
        for i in in_scope(&scoped.uses, scope).take(MAX_USES) {
            let u = &module.index.uses[i as usize];
            let sub = self.chain(m, &u.flow, u.in_function, callee, u.lo);
            r.extend(&sub, 0);
            // Returned by its own function; or read by a function inside
            // it, which may hand it back too.
            r.passes |= sub.passes || u.in_function != scope.0;
        }
        // A parameter called (`function run(d, f) { return f(d) }`): the
        // function handed in returns its result to that call.
        if callee.is_some() {
            for i in in_scope(&scoped.calls, scope).take(MAX_USES) {
                let c = &module.index.calls[i as usize];
                let sub = self.chain(m, &c.flow, c.in_function, callee, c.lo);
                r.extend(&sub, 0);
                r.passes |= sub.passes || c.in_function != scope.0;
            }
        }
        // An element read back (`xs[i]`: a list of texts, a table).
        if self.tables[m as usize].members.contains_key(&(name, "")) {
            let sub = self.member(m, name, "", Holder::Binding(scope));
            r.extend(&sub, 0);
        }
        if scope == self.tables[m as usize].top {
            // An import is not a hop: a code-split build's chunks are one
            // bundle's modules, and the same text must reach the same
            // places in both forms of the build.
            for (im, local, top) in self.importers_of(m, name).into_iter().take(MAX_USES) {
                let sub = self.binding(im, local, top);
                r.extend(&sub, 0);
            }
            // Read as `alias.name` through a namespace, or as a name the
            // namespace was taken apart into (no hop either: the same
            // module's export, reached lazily).
            for (am, alias, scope, key) in self.namespace_uses(m, name) {
                let sub = self.member(am, alias, key, Holder::Binding(scope));
                r.extend(&sub, 0);
            }
            for (um, local, scope) in self.unpacked_of(m, name) {
                let sub = self.binding(um, local, scope);
                r.extend(&sub, 0);
            }
        }
        self.close(n, r)
    }

    /// Where argument `index` of a call of `callee` (seen from `at`) goes
    /// inside the function: the uses of its parameter, or, with `key` (the
    /// text is that property of the argument), of the name the
    /// parameter's pattern binds it to. And whether that binding is the
    /// value's own (the function is found, and the value is the argument
    /// or the key its pattern takes): only then does its `passes` say
    /// whether the call hands the value back.
    fn parameter(
        &mut self,
        m: u32,
        callee: &'a str,
        index: u8,
        key: Option<&str>,
        at: Option<FnId>,
        pos: u32,
    ) -> (Rc<Reach>, bool) {
        let ci = self.ci;
        let (mut m, mut callee, mut at, mut pos) = (m, callee, at, pos);
        // A function of another chunk, imported under a local name: where
        // its parameter goes there (an import is no hop; a few re-exports
        // at most, so a cycle of them ends).
        for _ in 0..4 {
            let scope = self.scope_at(m, callee, at, pos);
            let module = &ci.modules[m as usize];
            // A function bound in a block is the first of its name there.
            let local = self.tables[m as usize]
                .functions
                .get(&callee)
                .iter()
                .copied()
                .find(|&f| {
                    let g = &module.index.functions[f as usize];
                    g.parent == scope.0 && g.lo >= scope.1.saturating_sub(1)
                });
            if let Some(f) = local {
                let func = &module.index.functions[f as usize];
                let unpacked = key.and_then(|key| {
                    func.param_keys
                        .iter()
                        .find(|(i, k, _)| *i == index && k == key)
                        .map(|(_, _, local)| local)
                });
                // Exact only for a plain parameter never read as an object:
                // a helper may return a field of its argument.
                let whole = key.is_none() && index < 32 && func.param_reads & (1 << index) == 0;
                return match (unpacked, func.param_names.get(index as usize)) {
                    (Some(p), _) => (self.binding(m, p.as_str(), (Some(f), 0)), false),
                    (None, Some(p)) if !p.is_empty() => {
                        (self.binding(m, p.as_str(), (Some(f), 0)), whole)
                    }
                    _ => (Rc::new(Reach::default()), false),
                };
            }
            // A name a lazily loaded part's export was taken apart into:
            // that export's function.
            let unpacked = self.tables[m as usize]
                .unpacked_names
                .get(callee)
                .into_iter()
                .flatten()
                .copied()
                .collect::<Vec<_>>();
            if let Some(there) = unpacked.into_iter().find_map(|(there, bound)| {
                (self.scope_of(m, callee, bound).0 == scope.0).then_some(there)
            }) {
                (callee, at, pos) = (there, None, ANYWHERE);
                continue;
            }
            // The same, from a chunk loaded lazily: that chunk's function.
            let lazy = self.tables[m as usize]
                .lazy_imported
                .get(callee)
                .into_iter()
                .flatten()
                .copied()
                .collect::<Vec<_>>();
            if let Some((from, there)) = lazy.into_iter().find_map(|(from, key, bound)| {
                let there = *self.tables[from as usize].exported.get(key)?;
                (self.scope_of(m, callee, bound).0 == scope.0).then_some((from, there))
            }) {
                (m, callee, at, pos) = (from, there, None, ANYWHERE);
                continue;
            }
            // A name declared in a function here is not the import.
            if scope.0.is_some() {
                break;
            }
            let Some(&(from, name)) = self.tables[m as usize].imported.get(callee) else {
                break;
            };
            let Some(&there) = self.tables[from as usize].exported.get(name) else {
                break;
            };
            (m, callee, at, pos) = (from, there, None, ANYWHERE);
        }
        (Rc::new(Reach::default()), false)
    }

    /// The names a top-level binding goes by where it is exported again:
    /// itself first, then each chunk that imports it and exports it on
    /// (a code-split build gathers a part's functions in chunks that only
    /// re-export them, often under their real names, and callers reach
    /// them through those), through at most [`REEXPORT_DEPTH`] such
    /// chunks.
    fn exported_again(&mut self, m: u32, name: &'a str) -> Vec<(u32, &'a str)> {
        let mut out = vec![(m, name)];
        let mut level = 0..1;
        for _ in 0..REEXPORT_DEPTH {
            let mut next = Vec::new();
            for i in level.clone() {
                let (fm, fname) = out[i];
                let other = self
                    .importers_of(fm, fname)
                    .into_iter()
                    .chain(self.unpacked_of(fm, fname));
                for (im, local, at) in other.collect::<Vec<_>>() {
                    let t = &self.tables[im as usize];
                    let seen = out.contains(&(im, local)) || next.contains(&(im, local));
                    if at == t.top && t.exports.contains_key(local) && !seen {
                        next.push((im, local));
                    }
                }
            }
            level = out.len()..out.len() + next.len();
            out.extend(next);
        }
        out
    }

    /// The bindings other chunks import `name` (a top-level binding of
    /// module `m`) as: each chunk, its local name, and that name's scope.
    fn importers_of(&self, m: u32, name: &str) -> Vec<(u32, &'a str, Scope)> {
        let mut out = Vec::new();
        for (e, _) in self.tables[m as usize]
            .exports
            .get(name)
            .into_iter()
            .flatten()
        {
            // An import binds its name in the importer's own scope.
            for &(im, local) in self.importers.get(&(m, *e)).into_iter().flatten() {
                out.push((im, local, self.tables[im as usize].top));
            }
        }
        out
    }

    /// The namespaces module `m` exports its top-level binding `name`
    /// through: each alias (module, name, scope) and the key it is read
    /// by there.
    fn namespace_uses(&mut self, m: u32, name: &str) -> Vec<(u32, &'a str, Scope, &'a str)> {
        let mut out: Vec<(u32, &'a str, Option<FnId>, &'a str)> = Vec::new();
        let Some(exports) = self.tables[m as usize].exports.get(name) else {
            return Vec::new();
        };
        // At most as many as a binding's uses: a hostile file can bind one
        // namespace to any number of names.
        'all: for &(key, ns) in exports {
            for &(am, alias, at) in self.aliases.get(&(m, ns)).into_iter().flatten() {
                if out.len() == MAX_USES {
                    break 'all;
                }
                out.push((am, alias, at, key));
            }
        }
        out.into_iter()
            .map(|(am, alias, at, key)| (am, alias, self.scope_of(am, alias, at), key))
            .collect()
    }

    /// Where the results of calls of `name` (a top-level function of
    /// module `m`) in the chunks that import it, and through namespaces
    /// (`alias.name(…)`), go — also under the names of the chunks that
    /// export it again (see [`Self::exported_again`]). At most `left`
    /// calls in all; `field` as for [`Self::returned`].
    fn imported_calls(&mut self, m: u32, name: &'a str, mut left: usize, field: bool) -> Reach {
        let mut r = Reach::default();
        for (fm, fname) in self.exported_again(m, name) {
            for (am, alias, scope, key) in self.namespace_uses(fm, fname) {
                let module = &self.ci.modules[am as usize];
                let calls = self.tables[am as usize]
                    .member_calls
                    .get(&(alias, key))
                    .to_vec();
                for i in calls {
                    let c = &module.index.member_calls[i as usize];
                    if self.scope_of(am, alias, c.in_function) != scope {
                        continue;
                    }
                    if left == 0 {
                        return r;
                    }
                    left -= 1;
                    let sub = self.chain(
                        am,
                        &module.index.member_flows[c.flows()],
                        c.in_function,
                        None,
                        c.lo,
                    );
                    r.extend(&sub, 0);
                }
            }
            let other = self
                .importers_of(fm, fname)
                .into_iter()
                .chain(self.unpacked_of(fm, fname));
            for (im, local, top) in other.collect::<Vec<_>>() {
                if !self.calls_in_scope(im, local, top, field, &mut left, &mut r) {
                    return r;
                }
            }
        }
        r
    }

    /// Adds to `r` where the results of the calls of `name` in `scope` go,
    /// at most `left` of them (counted down); false once that budget is
    /// spent. With `field`, a call whose result is taken apart is skipped
    /// (a field goes into its own name: see [`Tracer::returned_field`]).
    fn calls_in_scope(
        &mut self,
        m: u32,
        name: &'a str,
        scope: Scope,
        field: bool,
        left: &mut usize,
        r: &mut Reach,
    ) -> bool {
        let module = &self.ci.modules[m as usize];
        let scoped = self.scoped(m, name);
        for i in in_scope(&scoped.calls, scope) {
            if *left == 0 {
                return false;
            }
            *left -= 1;
            let c = &module.index.calls[i as usize];
            if field && matches!(c.flow.first(), Some(Flow::Unpack(_))) {
                continue;
            }
            let sub = self.chain(m, &c.flow, c.in_function, None, c.lo);
            r.extend(&sub, 0);
        }
        true
    }

    /// Where the results of calls of a function go when it is called under
    /// another name it is bound to as it is (`g = f`, `let g = f`: a
    /// bundle's lazy initialiser binds a module's function to the name the
    /// rest of the build calls), in this module and, for a module-level
    /// name, in the chunks that import it. No hop, as for the function's
    /// own calls: the value called is the same function.
    fn alias_calls(&mut self, m: u32, name: &'a str, scope: Scope, field: bool) -> Reach {
        let mut r = Reach::default();
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let scoped = self.scoped(m, name);
        let mut left = MAX_USES;
        for i in in_scope(&scoped.uses, scope).take(MAX_USES) {
            let u = &module.index.uses[i as usize];
            let [Flow::Bind(alias)] = &*u.flow else {
                continue;
            };
            let alias: &'a str = alias.as_str();
            if alias == name {
                continue;
            }
            let at = self.scope_at(m, alias, u.in_function, u.lo);
            if !self.calls_in_scope(m, alias, at, field, &mut left, &mut r) {
                return r;
            }
            if at == self.tables[m as usize].top {
                let sub = self.imported_calls(m, alias, left, field);
                r.extend(&sub, 0);
            }
        }
        r
    }

    /// Where the results of calls `name.key(…)` go, `name` meaning the
    /// binding seen from `at` at byte `pos`.
    fn method_calls(
        &mut self,
        m: u32,
        name: &'a str,
        key: &'a str,
        at: Option<FnId>,
        pos: u32,
    ) -> Reach {
        let mut r = Reach::default();
        let calls = self.tables[m as usize]
            .member_calls
            .get(&(name, key))
            .to_vec();
        if calls.is_empty() {
            return r;
        }
        let scope = self.scope_at(m, name, at, pos);
        let module = &self.ci.modules[m as usize];
        let mut seen = 0;
        for i in calls {
            let c = &module.index.member_calls[i as usize];
            if self.scope_at(m, name, c.in_function, c.lo) != scope {
                continue;
            }
            seen += 1;
            if seen > MAX_USES {
                break;
            }
            let sub = self.chain(
                m,
                &module.index.member_flows[c.flows()],
                c.in_function,
                None,
                c.lo,
            );
            r.extend(&sub, 0);
        }
        r
    }

    /// Where field `key` of the objects function `f` returns goes: read
    /// back as `r.key` where a call's result is bound to `r`, or further
    /// up when the caller returns the result as it is. (The whole object
    /// goes where [`Self::returned`] says; this is the field's own way,
    /// `{enabled, text}` read as `r.text` into a prompt.)
    fn returned_field(&mut self, m: u32, f: FnId, key: &'a str) -> Rc<Reach> {
        if let Some(&n) = self.fields.get(&(m, f, key)) {
            return self.recall(n);
        }
        let Some(n) = self.open() else {
            return self.nothing.clone();
        };
        self.fields.insert((m, f, key), n);
        let ci = self.ci;
        let module = &ci.modules[m as usize];
        let func = &module.index.functions[f as usize];
        let mut r = Reach::default();
        if let Some(Flow::Bind(name)) = func.flow.first() {
            let name: &'a str = name.as_str();
            let scope = self.scope_at(m, name, func.parent, func.lo);
            for (cm, i) in self.named_calls(m, name, scope).into_iter().take(MAX_USES) {
                let c = &ci.modules[cm as usize].index.calls[i as usize];
                match c.flow.first() {
                    Some(Flow::Bind(b)) => {
                        let scope = self.scope_at(cm, b.as_str(), c.in_function, c.lo);
                        let sub = self.member(cm, b.as_str(), key, Holder::Binding(scope));
                        r.extend(&sub, 0);
                    }
                    Some(Flow::Return) => {
                        if let Some(g) = c.in_function {
                            let sub = self.returned_field(cm, g, key);
                            r.extend(&sub, 0);
                        }
                    }
                    // Taken apart where it is kept (`let {text: t} =
                    // f()`): the field goes to the name its key is
                    // unpacked into, as `r.text` would.
                    Some(Flow::Unpack(names)) => {
                        for p in names.iter().filter(|p| p.key.as_deref() == Some(key)) {
                            let name = p.name.as_str();
                            let scope = self.scope_at(cm, name, c.in_function, c.lo);
                            let sub = self.binding(cm, name, scope);
                            r.extend(&sub, 0);
                        }
                    }
                    _ => {}
                }
            }
        }
        self.close(n, r)
    }

    /// Where the values function `f` returns go; with `field`, where a
    /// field of them goes but for the calls whose result is taken apart
    /// (`let {a, b} = f()`: [`Self::returned_field`] follows the field into
    /// its own name).
    fn returned(&mut self, m: u32, f: FnId, field: bool) -> Rc<Reach> {
        if let Some(&n) = self.returns.get(&(m, f, field)) {
            return self.recall(n);
        }
        let Some(n) = self.open() else {
            return self.nothing.clone();
        };
        self.returns.insert((m, f, field), n);
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
                if (self.keep)(self.ci, &mark) {
                    r.add(mark, 0);
                }
                let sub = self.chain(m, rest, func.parent, None, func.lo);
                r.extend(&sub, 0);
                // In an object a function returns (a table of section
                // functions): read back as `t.key` where the call's result
                // is kept, and called there or handed on.
                if let (Some(Flow::Return), Some(g)) = (rest.first(), func.parent) {
                    let sub = self.returned_field(m, g, key.as_str());
                    r.extend(&sub, 1);
                }
                // Called through the name its object or class is bound to
                // (`K.format(…)`): where those calls' results go.
                let holder = match rest.first() {
                    Some(Flow::Bind(name)) => Some(name.as_str()),
                    _ => self.tables[m as usize].holders.get(object).copied(),
                };
                if let Some(name) = holder {
                    let sub = self.method_calls(m, name, key.as_str(), func.parent, func.lo);
                    r.extend(&sub, 0);
                }
            }
            // A named function: its calls' results, and where it is
            // handed as a value (a callback returns to its caller).
            Some((Flow::Bind(name), _)) => {
                let name: &'a str = name.as_str();
                let scope = self.scope_at(m, name, func.parent, func.lo);
                let scoped = self.scoped(m, name);
                let mut calls = 0;
                for i in in_scope(&scoped.calls, scope).take(MAX_USES) {
                    let c = &module.index.calls[i as usize];
                    calls += 1;
                    if field && matches!(c.flow.first(), Some(Flow::Unpack(_))) {
                        continue;
                    }
                    let sub = self.chain(m, &c.flow, c.in_function, None, c.lo);
                    r.extend(&sub, 0);
                }
                // Called from other chunks under the names they import it
                // by (an import is no hop, as for its arguments; the calls
                // counted together, as in one bundle).
                if scope == self.tables[m as usize].top {
                    let sub = self.imported_calls(m, name, MAX_USES - calls, field);
                    r.extend(&sub, 0);
                }
                let sub = self.alias_calls(m, name, scope, field);
                r.extend(&sub, 0);
                let b = self.binding(m, name, scope);
                r.extend(&b, 1);
            }
            // A function returned, passed or bound otherwise: its result
            // goes where the function goes (a lazy initialiser's value, a
            // callback's result).
            Some(_) => {
                let sub = self.chain(m, &func.flow, func.parent, None, func.lo);
                r.extend(&sub, 0);
            }
            None => {}
        }
        self.close(n, r)
    }
}

#[cfg(test)]
mod tests {
    use super::{Groups, Tracer, method_chain};
    use crate::analysis::testjs;

    #[test]
    fn groups_keep_each_keys_positions_in_the_order_given() {
        let pairs = [("e", 3), ("t", 5), ("e", 1), ("x", 9), ("e", 7), ("t", 2)];
        let g = Groups::new(pairs.iter().copied());
        assert_eq!(g.get(&"e"), &[3, 1, 7]);
        assert_eq!(g.get(&"t"), &[5, 2]);
        assert_eq!(g.get(&"x"), &[9]);
        assert_eq!(g.get(&"n"), &[] as &[u32]);
        assert!(g.contains_key(&"x") && !g.contains_key(&"n"));
        assert_eq!(g.range(&"t").len(), 2);
        let empty = Groups::<&str>::new(std::iter::empty());
        assert!(empty.get(&"e").is_empty());
    }

    #[test]
    fn a_functions_callers_are_found_through_a_chunk_that_exports_it_again() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-a.js",
                "function Ra(){ return 1; }\nexport { Ra as r };\n",
            ),
            (
                "/$bunfs/root/chunk-b.js",
                "import { r as Rb } from \"./chunk-a.js\";\nexport { Rb as resolveCheck };\n",
            ),
            (
                "/$bunfs/root/chunk-c.js",
                "import { resolveCheck as Rd } from \"./chunk-b.js\";\nfunction Rf(){ return Rd(); }\n",
            ),
        ]);
        let made = ci.modules[0]
            .index
            .functions
            .iter()
            .position(|f| f.name.as_deref() == Some("Ra"))
            .expect("Ra") as u32;
        let mut tracer = Tracer::new(&ci, |_, _| false);
        let callers = tracer.callers(0, made);
        let calling = ci.modules[2]
            .index
            .functions
            .iter()
            .position(|f| f.name.as_deref() == Some("Rf"))
            .expect("Rf") as u32;
        assert_eq!(callers, vec![(2, calling)]);
    }

    #[test]
    fn a_method_chain_is_read_past_quoted_parentheses() {
        assert_eq!(
            method_chain(r#".strict().describe("a (note)").safeParse(x, ')').y;"#),
            vec!["strict", "describe", "safeParse"]
        );
        assert_eq!(method_chain(".x;"), Vec::<String>::new());
        assert_eq!(method_chain(",y()"), Vec::<String>::new());
        // An unclosed call is no chain.
        assert_eq!(method_chain(".a(.b("), Vec::<String>::new());
    }
}
