//! The per-module index: functions, definitions, string and template
//! literals, call sites, and the export/import facts symbol recovery needs.
//! Built in one pass over the AST; positions are raw byte offsets.

use super::JsError;
use super::depth::Measure;
use super::flow::{self, Flow, Frame, MemberUse, Use};
use super::parse::{Parsed, Unmeasured};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use swc_atoms::Atom;
use swc_common::comments::SingleThreadedComments;
use swc_common::{Span, Spanned};
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

pub type FnId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FnKind {
    Declaration,
    Expression,
    Arrow,
    Method,
}

#[derive(Debug, Clone, Serialize)]
pub struct Function {
    /// The declared name, or the name it is bound to (`var x = () => …`).
    pub name: Option<Atom>,
    pub kind: FnKind,
    pub lo: u32,
    pub hi: u32,
    /// Byte span of the body (after the parameters).
    pub body_lo: u32,
    pub params: u32,
    /// Whether the first parameter is a plain identifier (its name is
    /// `param_names[0]`; see [`Function::first_param`]). A flag, not a
    /// copy of the name: a build has hundreds of thousands of functions.
    first_plain: bool,
    pub parent: Option<FnId>,
    /// Its parameters' names, in order (empty for a pattern).
    pub param_names: Box<[Atom]>,
    /// The properties its object-pattern parameters take apart: (the
    /// parameter's index, the key, the local name) for `function f({content:
    /// e, isMeta})` — a text passed as `f({content: text})` is `e` inside.
    pub param_keys: Box<[(u8, Atom, Atom)]>,
    /// Which of its first 32 parameters are read as an object (`p.key`,
    /// `p[i]`) for the value read (not only to compare or test it), in it
    /// or in a function inside it: bit `i` for parameter `i`. A helper that
    /// returns a field of its argument hands on a part of it.
    pub param_reads: u32,
    /// Where the function itself goes ([`flow`]): a method or property
    /// value is `Key(name)`, a bound function `Bind(name)`, a callback an
    /// argument.
    pub flow: Box<[Flow]>,
}

impl Function {
    /// The first parameter's name, when it is a plain identifier.
    pub fn first_param(&self) -> Option<&str> {
        let first = self.param_names.first().filter(|_| self.first_plain);
        first.map(Atom::as_str)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DefKind {
    Var,
    Let,
    Const,
    Function,
    Class,
    Param,
    Import,
    /// `x = …`, e.g. inside a lazy-init closure `var X = init(() => { x = …; })`.
    Assign,
}

#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    pub kind: DefKind,
    pub lo: u32,
    pub hi: u32,
    /// Span of the value assigned, when there is one.
    pub value: Option<(u32, u32)>,
    pub in_function: Option<FnId>,
    /// For a `let`, `const` or class declared in a block inside its
    /// function (not the function's own body): that block's span. Minified
    /// code reuses a name in sibling blocks of one function, and the two
    /// are different variables.
    pub block: Option<(u32, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LitKind {
    String,
    Template,
}

#[derive(Debug, Clone, Serialize)]
pub struct StringLit {
    /// The cooked value; a template's parts are joined with `${…}`.
    pub value: Box<str>,
    pub kind: LitKind,
    pub lo: u32,
    pub hi: u32,
    pub in_function: Option<FnId>,
    /// Where its value goes ([`flow`]), innermost place first.
    pub flow: Box<[Flow]>,
}

/// A text written as a concatenation of literals only (`"a " + "b " +
/// `c ${x}``): one text wrapped over lines of the source, as one literal
/// whose span is the whole concatenation. Its parts stay in
/// [`ModuleIndex::strings`] too (what the other analyses read); the
/// surface takes the whole instead of the parts.
#[derive(Debug, Clone, Serialize)]
pub struct JoinedLit {
    /// The parts' values joined; [`LitKind::Template`] when a part has a
    /// hole.
    pub lit: StringLit,
    /// Where each part starts.
    pub parts: Box<[u32]>,
}

/// The parts of a concatenation of string and template literals only,
/// in order (`None` when any operand is something else: a name, a call,
/// a parenthesised sum).
pub fn literal_chain(b: &BinExpr) -> Option<Vec<&Expr>> {
    let literal = |e: &Expr| matches!(e, Expr::Lit(Lit::Str(_)) | Expr::Tpl(_));
    if b.op != BinaryOp::Add {
        return None;
    }
    let mut parts = Vec::new();
    let mut at = b;
    loop {
        if !literal(&at.right) {
            return None;
        }
        parts.push(&*at.right);
        match &*at.left {
            Expr::Bin(l) if l.op == BinaryOp::Add => at = l,
            l if literal(l) => {
                parts.push(l);
                break;
            }
            _ => return None,
        }
    }
    parts.reverse();
    Some(parts)
}

/// A template's cooked value, its holes written `${…}`.
fn template_value(n: &Tpl) -> String {
    n.quasis
        .iter()
        .map(|q| {
            q.cooked
                .as_ref()
                .map_or_else(|| q.raw.to_string(), |c| c.to_string_lossy().into_owned())
        })
        .collect::<Vec<_>>()
        .join("${…}")
}

/// An object literal's (or class's) start and the names of its keys.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectShape {
    pub lo: u32,
    pub keys: Vec<Atom>,
    /// Returned as it is by its function (`return {…}`, an arrow's `({…})`):
    /// its fields are read back where the call's result is kept.
    pub returned: bool,
}

impl ModuleIndex {
    /// The keys of the object starting at `lo`.
    pub fn object_keys(&self, lo: u32) -> &[Atom] {
        match self.objects.binary_search_by_key(&lo, |o| o.lo) {
            Ok(i) => &self.objects[i].keys,
            Err(_) => &[],
        }
    }

    /// Whether the object starting at `lo` is returned as it is.
    pub fn object_returned(&self, lo: u32) -> bool {
        match self.objects.binary_search_by_key(&lo, |o| o.lo) {
            Ok(i) => self.objects[i].returned,
            Err(_) => false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// The callee identifier, or the property name of a member call (an
    /// atom: minified names are short and stored inline, so a call costs
    /// no allocation for its name).
    pub name: swc_atoms::Atom,
    pub member: bool,
    pub lo: u32,
    pub hi: u32,
    pub args: u32,
    pub in_function: Option<FnId>,
    /// The first two arguments: their spans, and what they are when simple.
    pub arg0: Option<Arg>,
    pub arg1: Option<Arg>,
    /// Where its result goes ([`flow`]).
    pub flow: Box<[Flow]>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Arg {
    pub lo: u32,
    pub hi: u32,
    /// What the argument is, when simple.
    pub value: ArgValue,
}

/// A simple argument. One enum rather than two options: a call keeps two
/// arguments, and a build has about 850,000 calls — the enum's tag is the
/// room `Option<Arg>` needs, so a call takes 112 bytes instead of 128.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ArgValue {
    Other,
    /// The argument is this identifier.
    Ident(swc_atoms::Atom),
    /// The argument is this string literal.
    String(Box<str>),
}

impl Arg {
    /// The identifier the argument is.
    pub fn ident(&self) -> Option<&swc_atoms::Atom> {
        match &self.value {
            ArgValue::Ident(a) => Some(a),
            _ => None,
        }
    }

    /// The string literal the argument is.
    pub fn string(&self) -> Option<&str> {
        match &self.value {
            ArgValue::String(s) => Some(s),
            _ => None,
        }
    }
}

/// `helper(ns, { original: () => local, … })`: the bundler's export table.
#[derive(Debug, Clone, Serialize)]
pub struct ExportEntry {
    pub original: String,
    pub local: String,
    pub lo: u32,
    /// The namespace object an export table fills (`ns`, when a name);
    /// `None` for an ESM export (the module is the namespace).
    #[serde(skip)]
    pub namespace: Option<Atom>,
}

/// A name bound to a whole module's exports, read as `alias.name` and
/// called as `alias.name(…)`: how a bundle reaches into a lazily loaded
/// module.
#[derive(Debug, Clone)]
pub struct Namespace {
    pub alias: Atom,
    pub of: NamespaceOf,
    /// Where the alias is bound.
    pub in_function: Option<FnId>,
    /// Declared there (a `let`, a callback's parameter): a read of the
    /// name elsewhere is another binding's. Otherwise (an assignment, or
    /// found from the namespace's uses) the name may be declared anywhere.
    pub local: bool,
}

/// A name a lazily loaded module's export is taken into: `let {name:
/// local} = await Promise.resolve().then(() => (init(), ns))`, `let {name:
/// local} = await import("…/chunk.js")`, an element of `await
/// Promise.all([…])`, a `.then(({name: local}) => …)` callback's
/// parameter, each also through a loader function (`function load(){
/// return import("…") }`) — the export `key` of namespace `ns` (an export
/// table's object of this module, or a chunk), bound to `local` in
/// `in_function`, then called or read as a plain name.
#[derive(Debug, Clone)]
pub struct UnpackedExport {
    pub local: Atom,
    pub key: Atom,
    pub ns: NamespaceOf,
    pub in_function: Option<FnId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NamespaceOf {
    /// `x = import.meta.require("…/chunk.js")`: a code-split build's chunk.
    Chunk(String),
    /// `x = ns` or `x = (init(), wrap(ns))`: the namespace object an export
    /// table of this module fills.
    Table(Atom),
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportEntry {
    /// The local binding; empty for `import.meta.require("…").name` uses.
    pub local: String,
    /// The name in the exporting module (`default`, `*` for namespaces).
    pub imported: String,
    pub source: String,
    pub lo: u32,
}

#[derive(Debug, Default)]
pub struct ModuleIndex {
    pub functions: Vec<Function>,
    pub definitions: HashMap<String, Vec<Definition>>,
    pub strings: Vec<StringLit>,
    /// Concatenations of literals only, in start order (see [`JoinedLit`]).
    pub joined: Vec<JoinedLit>,
    pub calls: Vec<Call>,
    /// Object literals (and classes): where each starts and its keys, in
    /// start order.
    pub objects: Vec<ObjectShape>,
    /// Identifiers read as values whose value goes somewhere (not only
    /// read through, called or tested), in source order.
    pub uses: Vec<Use>,
    /// Reads of a name's or `this`'s member whose value goes somewhere,
    /// in source order; their chains are ranges of `member_flows`.
    pub members: Vec<MemberUse>,
    pub member_flows: Vec<Flow>,
    /// Calls of a namespace's members (`alias.name(…)`, see `namespaces`)
    /// whose result goes somewhere; their chains are ranges of
    /// `member_flows`.
    pub member_calls: Vec<MemberUse>,
    /// Where the arguments of the build's logger's calls start (`t(text,
    /// {level: "warn"})`), in order.
    pub logged: Vec<u32>,
    /// Names bound to a module's exports.
    pub namespaces: Vec<Namespace>,
    /// Exports of lazily loaded parts taken apart into names (see
    /// [`UnpackedExport`]): a known export table's of this module, or a
    /// chunk's.
    pub unpacked: Vec<UnpackedExport>,
    /// From export tables (`helper(ns, {name: () => local})`).
    pub export_table: Vec<ExportEntry>,
    /// ESM `export { local as exported }` and `export function exported`.
    pub esm_exports: Vec<ExportEntry>,
    pub imports: Vec<ImportEntry>,
    /// The first function bearing each name.
    pub by_name: HashMap<String, FnId>,
}

/// A module indexed while its AST's depth was measured
/// ([`ModuleIndex::build_measured`]): the index, and the module as
/// [`super::parse::parse`] returns it.
pub struct MeasuredModule {
    pub index: ModuleIndex,
    pub parsed: Parsed,
    pub comments: SingleThreadedComments,
}

impl ModuleIndex {
    pub fn build(p: &Parsed) -> ModuleIndex {
        Self::build_program(&p.program, p.file.start_pos.0)
    }

    /// Index a program whose source file starts at swc position `base`
    /// (parsed, so its depth is checked).
    pub fn build_program(program: &Program, base: u32) -> ModuleIndex {
        // A checked AST is within the limit the walk stops at: were it not,
        // an index of what lies above the limit rather than a failure.
        Self::walk(program, base).0
    }

    /// Index a module whose AST's depth is not measured yet, measuring it
    /// on the way: the same levels [`super::depth::check_program`] counts, the
    /// same limit. Within it, the index and the module as
    /// [`super::parse::parse`] returns it; past it, the same error.
    pub fn build_measured(un: Unmeasured) -> Result<MeasuredModule, JsError> {
        match Self::walk(un.program(), un.base()) {
            (index, None) => {
                let (parsed, comments) = un.measured();
                Ok(MeasuredModule {
                    index,
                    parsed,
                    comments,
                })
            }
            (_, Some(span)) => Err(un.too_deep(span)),
        }
    }

    /// The index, and the first node past the limit if the walk met one.
    fn walk(program: &Program, base: u32) -> (ModuleIndex, Option<Span>) {
        let mut v = Indexer {
            base,
            out: ModuleIndex::default(),
            stack: Vec::new(),
            pending_name: None,
            depth: Measure::default(),
            flow: Vec::new(),
            blocks: Vec::new(),
            objects: Vec::new(),
            held: Held::default(),
            lazy: Vec::new(),
            loaders: HashMap::default(),
        };
        // Recurses once per AST level (up to the limit): run where it fits.
        super::depth::with_stack(|| program.visit_with(&mut v));
        let mut out = v.out;
        resolve_lazy(&mut out, v.lazy, &v.loaders);
        table_namespaces(&mut out);
        // A name bound to a namespace is found both from its uses and from
        // the expression it is bound to.
        let mut seen = HashSet::new();
        out.namespaces
            .retain(|n| seen.insert((n.alias.clone(), n.in_function, n.of.clone())));
        prune_members(&mut out, &v.held);
        out.logged.sort_unstable();
        out.objects.sort_by_key(|o| o.lo);
        // A name used as an identifier means a binding: a function declared
        // or bound to the name (at the module's top level first) wins over
        // a method or property function with that key, wherever each is. A
        // minified getter `function it(e, t)` must not resolve to an
        // earlier locale table's `{it: () => …}`.
        let rank = |f: &Function| {
            let bound = matches!(f.kind, FnKind::Declaration)
                || matches!(f.flow.first(), Some(Flow::Bind(_)));
            match (bound, f.parent.is_none()) {
                (true, true) => 0,
                (true, false) => 1,
                (false, _) => 2,
            }
        };
        for (i, f) in out.functions.iter().enumerate() {
            if let Some(n) = &f.name {
                let first = out.by_name.entry(n.to_string()).or_insert(i as FnId);
                if rank(f) < rank(&out.functions[*first as usize]) {
                    *first = i as FnId;
                }
            }
        }
        (out, v.depth.over())
    }

    /// The innermost function containing byte `offset`.
    pub fn enclosing_function(&self, offset: u32) -> Option<FnId> {
        // Functions are recorded in start order; the innermost container is
        // the last one starting at or before `offset` whose span covers it.
        let end = self.functions.partition_point(|f| f.lo <= offset);
        let mut i = end.checked_sub(1)?;
        loop {
            let f = &self.functions[i];
            if f.hi > offset {
                return Some(i as FnId);
            }
            i = f.parent? as usize;
        }
    }

    /// The function whose own binding of `name` a reference inside `at`
    /// means (a parameter, a local, an inner function), or `None` for the
    /// module's own binding (or none at all).
    pub fn binding_scope(&self, name: &str, at: Option<FnId>) -> Option<FnId> {
        let defs = self.definitions.get(name)?;
        self.innermost(at, |x| {
            defs.iter()
                .any(|d| d.kind != DefKind::Assign && d.in_function == Some(x))
        })
    }

    /// The calls that start in `lo..hi` (calls are in source order).
    pub fn calls_within(&self, lo: u32, hi: u32) -> &[Call] {
        let a = self.calls.partition_point(|c| c.lo < lo);
        let b = self.calls.partition_point(|c| c.lo < hi);
        &self.calls[a..b.max(a)]
    }

    /// The innermost of `at` and the functions around it that `declares`
    /// (a caller that asks often keeps the declaring functions in a set).
    pub fn innermost(&self, at: Option<FnId>, declares: impl Fn(FnId) -> bool) -> Option<FnId> {
        let mut f = at;
        while let Some(x) = f {
            if declares(x) {
                return Some(x);
            }
            f = self.functions[x as usize].parent;
        }
        None
    }

    /// The kind of the binding `name` inside `at` means, when it is nested
    /// deeper than the outermost binding of that name (else `None`).
    /// Minified code reuses short names at every level, so `e(…)` inside a
    /// function taking `e` is not a call of the outer `e`. (The outermost
    /// binding need not be the module's: a module wrapped in a function
    /// keeps its top level in that function.)
    pub fn shadowing(&self, name: &str, at: Option<FnId>) -> Option<DefKind> {
        let defs = self.definitions.get(name)?;
        let depth = |mut f: Option<FnId>| {
            let mut n = 0usize;
            while let Some(x) = f {
                n += 1;
                f = self.functions[x as usize].parent;
            }
            n
        };
        // The module's own binding (or none) shadows nothing: the common
        // case, answered without measuring every binding of the name.
        let scope = self.binding_scope(name, at)?;
        let scope = Some(scope);
        let outermost = defs
            .iter()
            .filter(|d| d.kind != DefKind::Assign)
            .map(|d| depth(d.in_function))
            .min()?;
        if depth(scope) <= outermost {
            return None;
        }
        defs.iter()
            .find(|d| d.kind != DefKind::Assign && d.in_function == scope)
            .map(|d| d.kind)
    }

    /// The function with this name: the first declared or bound to it at
    /// the module's top level, else in a function, else the first method or
    /// property function with that key.
    pub fn function_named(&self, name: &str) -> Option<(FnId, &Function)> {
        self.by_name
            .get(name)
            .map(|&i| (i, &self.functions[i as usize]))
    }

    /// Functions with this name (declared or bound).
    pub fn functions_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (FnId, &'a Function)> + 'a {
        self.functions
            .iter()
            .enumerate()
            .filter(move |(_, f)| f.name.as_deref() == Some(name))
            .map(|(i, f)| (i as FnId, f))
    }
}

/// The place a value bound by pattern `p` goes: the name, or the names a
/// pattern takes it apart into.
fn binding_place(p: &Pat) -> Flow {
    match p {
        Pat::Ident(b) => Flow::Bind(b.id.sym.clone()),
        p => {
            let mut names = Vec::new();
            flow::pattern_names(p, &mut names);
            names.shrink_to_fit();
            Flow::Unpack(Box::new(names))
        }
    }
}

struct Indexer {
    base: u32,
    out: ModuleIndex,
    stack: Vec<FnId>,
    /// The name the next function expression will be bound to.
    pending_name: Option<String>,
    /// AST levels above the node being visited, counted and limited as
    /// [`super::depth::check_program`] counts them; past the limit, nothing more
    /// is visited.
    depth: Measure,
    /// The places the node being visited hands its value to.
    flow: Vec<Frame>,
    /// The blocks around the node inside its function (a `{…}` that is
    /// not a function's body, a `for` or a `switch`), innermost last: the
    /// function they are in and their span.
    blocks: Vec<(Option<FnId>, u32, u32)>,
    /// Where the object literals (and classes) around the node start.
    objects: Vec<u32>,
    /// What member reads can give back a value put there: members stored
    /// to (`o.k = …`, `this.k = …`), names bound to an object or array
    /// literal or added to (`xs.push(…)`), and class fields. Member reads
    /// of anything else are dropped once the module is walked.
    held: Held,
    /// Lazily loaded modules bound to names, resolved once the module is
    /// walked (see [`resolve_lazy`]).
    lazy: Vec<LazyBinding>,
    /// The loader functions (see [`loader_of`]) by where they start.
    loaders: HashMap<u32, NamespaceOf>,
}

/// A lazily loaded module as an expression names it (see [`lazy_module`]).
enum Lazy {
    Of(NamespaceOf),
    /// The result of a call of this name, a loader function's if the name
    /// means one there.
    Loader(Atom),
}

/// What a lazily loaded module is bound to.
enum LazyTo {
    /// A name: the whole namespace; declared there or not (see
    /// [`Namespace::local`]).
    Alias(Atom, bool),
    /// (key, local) pairs of an object pattern.
    Keys(Vec<(Atom, Atom)>),
    /// The first parameter of the callback starting there
    /// (`.then((ns) => …)`, `.then(({key: local}) => …)`).
    Callback(u32),
}

struct LazyBinding {
    of: Lazy,
    to: LazyTo,
    in_function: Option<FnId>,
}

/// Names are held with the function they were bound or stored in (`None`
/// for an assignment, whose binding may be anywhere): minified code binds
/// the same few names (`e`, `t`) in every function, and a name bound to a
/// literal in one function says nothing of the others.
#[derive(Default)]
struct Held {
    stored: HashMap<(Atom, Atom), Vec<Option<FnId>>>,
    literals: HashMap<Atom, Vec<Option<FnId>>>,
    fields: std::collections::HashSet<Atom>,
    this_stored: std::collections::HashSet<Atom>,
    /// Names bound to a class: its static methods are called as
    /// `name.method(…)`.
    classes: HashMap<Atom, Vec<Option<FnId>>>,
    /// Names bound to a call's result (`let r = f()`, `await f()` too),
    /// with the function called: `r.key` gives back a field of what `f`
    /// returns when `f` returns an object literal.
    results: HashMap<Atom, Vec<(Atom, Option<FnId>)>>,
    /// Functions that return an object literal (`return {…}`).
    returners: HashSet<Option<FnId>>,
    /// Functions that return another's result as it is (`return f(…)`),
    /// with the function called.
    forwards: Vec<(Option<FnId>, Atom)>,
}

/// Whether an argument is a logger's options: an object literal whose
/// `level` is a log level (`{level: "warn"}`).
fn is_log_level(e: &Expr) -> bool {
    let Expr::Object(o) = e else { return false };
    o.props.iter().any(|p| {
        let PropOrSpread::Prop(p) = p else { return false };
        let Prop::KeyValue(kv) = &**p else { return false };
        prop_name(&kv.key).is_some_and(|k| k == "level")
            && matches!(&*kv.value, Expr::Lit(Lit::Str(s))
                if matches!(s.value.as_str(), Some("debug" | "info" | "warn" | "warning" | "error" | "verbose")))
    })
}

/// The name handed to a bundler's wrapper of a namespace, after its
/// initialiser or not: `wrap(ns)`, `(init(), wrap(ns))`.
fn wrapped_namespace(e: &Expr) -> Option<Atom> {
    match e {
        Expr::Paren(p) => wrapped_namespace(&p.expr),
        Expr::Seq(q) => wrapped_namespace(q.exprs.last()?),
        Expr::Call(c) => match (&c.callee, c.args.as_slice()) {
            (Callee::Expr(f), [arg]) if f.is_ident() && arg.spread.is_none() => {
                arg.expr.as_ident().map(|i| i.sym.clone())
            }
            _ => None,
        },
        _ => None,
    }
}

/// The function a call calls by name, through `await` and parentheses
/// (`f(…)`, `await f(…)`).
fn called_name(e: &Expr) -> Option<Atom> {
    match e {
        Expr::Await(a) => called_name(&a.arg),
        Expr::Paren(p) => called_name(&p.expr),
        Expr::Call(c) => match &c.callee {
            swc_ecma_ast::Callee::Expr(x) => match &**x {
                Expr::Ident(i) => Some(i.sym.clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A lazily loaded module as an expression names it: `ns`, `(init(),
/// ns)`, `await Promise.resolve().then(() => (init(), ns))` (how a bundle
/// waits for a module it loads late; a name, not yet known to be a
/// namespace), `await import("…/chunk.js")` (how a code-split build does),
/// or `await load()`, a call of what may be a loader function (known once
/// the module is walked). The forms that give a promise count only
/// `awaited` (or handed to `.then`).
fn lazy_module(e: &Expr, awaited: bool) -> Option<Lazy> {
    match e {
        Expr::Ident(i) => Some(Lazy::Of(NamespaceOf::Table(i.sym.clone()))),
        Expr::Await(a) => lazy_module(&a.arg, true),
        Expr::Paren(p) => lazy_module(&p.expr, awaited),
        Expr::Seq(q) => lazy_module(q.exprs.last()?, awaited),
        Expr::Call(_) if !awaited => None,
        Expr::Call(c) => match &c.callee {
            Callee::Import(_) => match c.args.as_slice() {
                [arg] if arg.spread.is_none() => match &*arg.expr {
                    Expr::Lit(Lit::Str(src)) => Some(Lazy::Of(NamespaceOf::Chunk(
                        src.value.to_string_lossy().into_owned(),
                    ))),
                    _ => None,
                },
                _ => None,
            },
            Callee::Expr(callee) => match &**callee {
                Expr::Ident(f) if c.args.is_empty() => Some(Lazy::Loader(f.sym.clone())),
                Expr::Member(m) => {
                    let is_then = matches!(&m.prop, MemberProp::Ident(p) if p.sym == "then");
                    match (c.args.as_slice(), is_then) {
                        ([arg], true) if arg.spread.is_none() => match &*arg.expr {
                            Expr::Arrow(a) if a.params.is_empty() => match &*a.body {
                                ArrowFunctionBody::Expr(body) => lazy_module(body, false),
                                _ => None,
                            },
                            _ => None,
                        },
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// The elements of `await Promise.all([a, b, …])` (`None` for a hole or a
/// spread).
fn promise_all(e: &Expr) -> Option<Vec<Option<&Expr>>> {
    let e = match e {
        Expr::Await(a) => &*a.arg,
        e => e,
    };
    let Expr::Call(c) = e else { return None };
    let Callee::Expr(callee) = &c.callee else {
        return None;
    };
    let Expr::Member(m) = &**callee else {
        return None;
    };
    if !matches!(&*m.obj, Expr::Ident(o) if o.sym == "Promise")
        || !matches!(&m.prop, MemberProp::Ident(p) if p.sym == "all")
    {
        return None;
    }
    let [arg] = c.args.as_slice() else {
        return None;
    };
    let Expr::Array(a) = &*arg.expr else {
        return None;
    };
    Some(
        a.elems
            .iter()
            .map(|x| x.as_ref().filter(|x| x.spread.is_none()).map(|x| &*x.expr))
            .collect(),
    )
}

/// What a lazily loaded module bound to `pat` gives names to: the whole
/// namespace (a name; a bare name's aliases are found from its uses, see
/// [`table_namespaces`]) or some of its exports (an object pattern).
fn lazy_target(pat: &Pat, init: &Expr) -> Option<LazyTo> {
    match pat {
        Pat::Ident(b) if !matches!(init, Expr::Ident(_)) => {
            Some(LazyTo::Alias(b.id.sym.clone(), true))
        }
        Pat::Object(o) => {
            let keys = pattern_keys(o);
            (!keys.is_empty()).then_some(LazyTo::Keys(keys))
        }
        _ => None,
    }
}

/// What a loader function returns when its whole body is `return
/// <lazily loaded module>` (or an arrow's expression): `function load(){
/// return import("…") }`.
fn loader_of(params: usize, body: Option<&Expr>) -> Option<NamespaceOf> {
    if params != 0 {
        return None;
    }
    // Its result is awaited where it is called.
    match lazy_module(body?, true)? {
        Lazy::Of(ns) => Some(ns),
        Lazy::Loader(_) => None,
    }
}

/// The expression a function's body is `return` of, alone.
fn only_return(f: &swc_ecma_ast::Function) -> Option<&Expr> {
    match f.body.as_ref()?.stmts.as_slice() {
        [Stmt::Return(r)] => r.arg.as_deref(),
        _ => None,
    }
}

/// The (key, local name) pairs an object pattern binds plain names by
/// (`{a: b, c, d: e = 1}`); a key that is nested, computed or given to a
/// pattern of its own is left out.
fn pattern_keys(p: &swc_ecma_ast::ObjectPat) -> Vec<(Atom, Atom)> {
    use swc_ecma_ast::ObjectPatProp;
    let mut out = Vec::new();
    for prop in &p.props {
        match prop {
            ObjectPatProp::KeyValue(kv) => {
                let local = match &*kv.value {
                    Pat::Ident(b) => &b.id.sym,
                    Pat::Assign(a) => match a.left.as_ident() {
                        Some(b) => &b.id.sym,
                        None => continue,
                    },
                    _ => continue,
                };
                let Some(key) = prop_name(&kv.key) else {
                    continue;
                };
                out.push((key.into(), local.clone()));
            }
            ObjectPatProp::Assign(a) => out.push((a.key.sym.clone(), a.key.sym.clone())),
            ObjectPatProp::Rest(_) => {}
        }
    }
    out
}

/// Whether functions `a` and `b` are one, or one encloses the other.
fn related(functions: &[Function], a: Option<FnId>, b: Option<FnId>) -> bool {
    let encloses = |outer: Option<FnId>, inner: Option<FnId>| {
        let mut f = inner;
        loop {
            if f == outer {
                return true;
            }
            match f {
                Some(x) => f = functions[x as usize].parent,
                None => return false,
            }
        }
    };
    encloses(a, b) || encloses(b, a)
}

impl Held {
    fn holds(&self, u: &MemberUse, functions: &[Function], returners: &HashSet<&str>) -> bool {
        if &*u.obj == "this" {
            return self.fields.contains(&u.key) || self.this_stored.contains(&u.key);
        }
        let near = |at: &Vec<Option<FnId>>| {
            at.iter()
                .any(|&f| f.is_none() || related(functions, f, u.in_function))
        };
        self.literals.get(&u.obj).is_some_and(near)
            || self
                .stored
                .get(&(u.obj.clone(), u.key.clone()))
                .is_some_and(near)
            || self.results.get(&u.obj).is_some_and(|v| {
                v.iter().any(|(callee, f)| {
                    returners.contains(callee.as_str())
                        && (f.is_none() || related(functions, *f, u.in_function))
                })
            })
    }

    /// The names of the functions that return an object literal, or
    /// the result of one of those as it is.
    fn returner_names<'f>(&self, functions: &'f [Function]) -> HashSet<&'f str> {
        let name = |f: Option<FnId>| functions[f? as usize].name.as_deref();
        let mut names: HashSet<&str> = self.returners.iter().filter_map(|&f| name(f)).collect();
        loop {
            let before = names.len();
            for (f, callee) in &self.forwards {
                if names.contains(callee.as_str())
                    && let Some(n) = name(*f)
                {
                    names.insert(n);
                }
            }
            if names.len() == before {
                return names;
            }
        }
    }

    /// Whether member call `u` may call a method written in this module:
    /// its object is bound to an object literal or a class.
    fn calls_method(&self, u: &MemberUse, functions: &[Function]) -> bool {
        let near = |at: &Vec<Option<FnId>>| {
            at.iter()
                .any(|&f| f.is_none() || related(functions, f, u.in_function))
        };
        self.literals.get(&u.obj).is_some_and(near) || self.classes.get(&u.obj).is_some_and(near)
    }

    fn class(&mut self, name: Atom, at: Option<FnId>) {
        let v = self.classes.entry(name).or_default();
        if !v.contains(&at) {
            v.push(at);
        }
    }

    fn literal(&mut self, name: Atom, at: Option<FnId>) {
        let v = self.literals.entry(name).or_default();
        if !v.contains(&at) {
            v.push(at);
        }
    }
}

/// The lazily loaded modules bound to names, as namespaces' aliases and
/// exports taken apart: a loader's call is its module where the name
/// called means that loader (the nearest function declaring the name up
/// from the call), a callback's parameter is bound in the callback.
fn resolve_lazy(
    out: &mut ModuleIndex,
    lazy: Vec<LazyBinding>,
    loaders: &HashMap<u32, NamespaceOf>,
) {
    for b in lazy {
        let of = match b.of {
            Lazy::Of(of) => of,
            // Most modules have no loader, and most calls load nothing.
            Lazy::Loader(_) if loaders.is_empty() => continue,
            Lazy::Loader(f) => match loader_called(out, &f, b.in_function, loaders) {
                Some(of) => of,
                None => continue,
            },
        };
        match b.to {
            LazyTo::Alias(alias, local) => out.namespaces.push(Namespace {
                alias,
                of,
                in_function: b.in_function,
                local,
            }),
            LazyTo::Keys(keys) => unpack(out, keys, &of, b.in_function),
            LazyTo::Callback(lo) => {
                let Ok(f) = out.functions.binary_search_by_key(&lo, |f| f.lo) else {
                    continue;
                };
                let func = &out.functions[f];
                let keys: Vec<(Atom, Atom)> = func
                    .param_keys
                    .iter()
                    .filter(|(i, _, _)| *i == 0)
                    .map(|(_, k, l)| (k.clone(), l.clone()))
                    .collect();
                let alias = func.param_names.first().filter(|p| !p.is_empty()).cloned();
                let at = Some(f as FnId);
                unpack(out, keys, &of, at);
                if let Some(alias) = alias {
                    out.namespaces.push(Namespace {
                        alias,
                        of,
                        in_function: at,
                        local: true,
                    });
                }
            }
        }
    }
}

fn unpack(out: &mut ModuleIndex, keys: Vec<(Atom, Atom)>, of: &NamespaceOf, at: Option<FnId>) {
    out.unpacked
        .extend(keys.into_iter().map(|(key, local)| UnpackedExport {
            local,
            key,
            ns: of.clone(),
            in_function: at,
        }));
}

/// The module a call of `f` in `at` loads, when the declaration `f` means
/// there is a loader function.
fn loader_called(
    out: &ModuleIndex,
    f: &str,
    at: Option<FnId>,
    loaders: &HashMap<u32, NamespaceOf>,
) -> Option<NamespaceOf> {
    let defs = out.definitions.get(f)?;
    let mut scope = at;
    // As deep as functions nest (each step goes to a parent, which was
    // entered before its child: no cycle).
    loop {
        if let Some(d) = defs
            .iter()
            .find(|d| d.in_function == scope && d.kind != DefKind::Assign)
        {
            return loaders.get(&d.value?.0).cloned();
        }
        scope = out.functions.get(scope? as usize)?.parent;
    }
}

/// The names bound to an export table's namespace object: the object
/// itself, and `x = ns` or `x = wrap(ns)` (a bundler's CommonJS view of
/// it, often after its initialiser: `x = (init(), wrap(ns))`).
fn table_namespaces(out: &mut ModuleIndex) {
    let tables: std::collections::HashSet<&Atom> = out
        .export_table
        .iter()
        .filter_map(|e| e.namespace.as_ref())
        .collect();
    // Only a known table's exports: any object can be taken apart (and
    // any name called).
    let known = |of: &NamespaceOf| match of {
        NamespaceOf::Table(t) => tables.contains(t),
        NamespaceOf::Chunk(_) => true,
    };
    out.unpacked.retain(|u| known(&u.ns));
    out.namespaces.retain(|n| known(&n.of));
    if tables.is_empty() {
        return;
    }
    let mut found = Vec::new();
    for ns in &tables {
        let at = out
            .definitions
            .get(ns.as_str())
            .and_then(|d| d.first())
            .and_then(|d| d.in_function);
        found.push(Namespace {
            alias: (*ns).clone(),
            of: NamespaceOf::Table((*ns).clone()),
            in_function: at,
            local: false,
        });
    }
    for u in &out.uses {
        if !tables.contains(&u.name) {
            continue;
        }
        let alias = match &*u.flow {
            [Flow::Bind(x), ..] => x,
            [
                Flow::Arg {
                    index: 0,
                    new: false,
                    member: false,
                    ..
                },
                Flow::Bind(x),
                ..,
            ] => x,
            _ => continue,
        };
        found.push(Namespace {
            alias: alias.clone(),
            of: NamespaceOf::Table(u.name.clone()),
            in_function: u.in_function,
            local: false,
        });
    }
    // Sorted (the set above iterates in a hash's order): the same build
    // gives the same answer every run, whichever aliases a cap keeps.
    found.sort_by(|a, b| (a.alias.as_str(), a.in_function).cmp(&(b.alias.as_str(), b.in_function)));
    out.namespaces.extend(found);
}

/// Keeps the member reads `held` can give a value to, the member reads
/// and calls of namespaces, and their chains.
fn prune_members(out: &mut ModuleIndex, held: &Held) {
    // A name bound in a function (a callback's parameter, a `let`) is its
    // namespace there only: minified code names every callback's first
    // parameter `e`, and the reads of all the others are not kept.
    let mut anywhere: HashSet<Atom> = HashSet::new();
    let mut within: HashMap<Atom, Vec<FnId>> = HashMap::new();
    for n in &out.namespaces {
        match (n.local, n.in_function) {
            (true, Some(f)) => within.entry(n.alias.clone()).or_default().push(f),
            _ => {
                anywhere.insert(n.alias.clone());
            }
        }
    }
    let members = std::mem::take(&mut out.members);
    let calls = std::mem::take(&mut out.member_calls);
    let flows = std::mem::take(&mut out.member_flows);
    let keep = |mut u: MemberUse, into: &mut Vec<MemberUse>, flows_out: &mut Vec<Flow>| {
        let range = u.flows();
        u.flow_start = flows_out.len() as u32;
        flows_out.extend_from_slice(&flows[range]);
        into.push(u);
    };
    // A name imported from another chunk may be bound to a table there
    // (`var t = {k: text}; export {t}`): its reads here are that table's,
    // as they are in one bundle.
    let imported: std::collections::HashSet<&str> = out
        .imports
        .iter()
        .filter(|i| !i.local.is_empty())
        .map(|i| i.local.as_str())
        .collect();
    let functions = std::mem::take(&mut out.functions);
    let aliased = |u: &MemberUse| {
        anywhere.contains(&u.obj)
            || within.get(&u.obj).is_some_and(|fs| {
                let mut at = u.in_function;
                // Up the functions around the read (each parent entered
                // before its child: no cycle).
                while let Some(f) = at {
                    if fs.contains(&f) {
                        return true;
                    }
                    at = functions.get(f as usize).and_then(|g| g.parent);
                }
                false
            })
    };
    let returners = held.returner_names(&functions);
    for u in members {
        if aliased(&u)
            || imported.contains(u.obj.as_str())
            || held.holds(&u, &functions, &returners)
        {
            keep(u, &mut out.members, &mut out.member_flows);
        }
    }
    for u in calls {
        if aliased(&u) || held.calls_method(&u, &functions) {
            keep(u, &mut out.member_calls, &mut out.member_flows);
        }
    }
    out.functions = functions;
    out.members.shrink_to_fit();
    out.member_calls.shrink_to_fit();
    out.member_flows.shrink_to_fit();
}

impl Indexer {
    /// Visit `f` with `frame` on the flow stack.
    fn within<R>(&mut self, frame: Frame, f: impl FnOnce(&mut Self) -> R) -> R {
        self.flow.push(frame);
        let r = f(self);
        self.flow.pop();
        r
    }

    fn place<R>(&mut self, place: Flow, f: impl FnOnce(&mut Self) -> R) -> R {
        self.within(Frame::Place(place), f)
    }

    fn chain(&self) -> Box<[Flow]> {
        flow::chain(&self.flow)
    }

    /// The place of the value of property `key` of the innermost object.
    fn key(&self, key: impl Into<Atom>) -> Flow {
        Flow::Key {
            key: key.into(),
            object: self.objects.last().copied().unwrap_or(0),
        }
    }

    fn off(&self, pos: swc_common::BytePos) -> u32 {
        pos.0.saturating_sub(self.base)
    }

    fn span(&self, s: swc_common::Span) -> (u32, u32) {
        (self.off(s.lo), self.off(s.hi))
    }

    fn current(&self) -> Option<FnId> {
        self.stack.last().copied()
    }

    /// Notes a read of `name` as an object (`name.key`): of a parameter of
    /// the innermost function around that has one by that name.
    fn read_as_object(&mut self, name: &Atom) {
        for &f in self.stack.iter().rev() {
            let func = &mut self.out.functions[f as usize];
            if let Some(i) = func.param_names.iter().position(|p| p == name) {
                if i < 32 {
                    func.param_reads |= 1 << i;
                }
                return;
            }
        }
    }

    /// Records that the walk is inside a block (left with `blocks.pop()`).
    fn enter_block(&mut self, span: Span) {
        let (lo, hi) = self.span(span);
        let at = self.current();
        self.blocks.push((at, lo, hi));
    }

    fn define(
        &mut self,
        name: &str,
        kind: DefKind,
        span: swc_common::Span,
        value: Option<swc_common::Span>,
    ) {
        let (lo, hi) = self.span(span);
        let in_function = self.current();
        let block = match kind {
            DefKind::Let | DefKind::Const | DefKind::Class => self
                .blocks
                .last()
                .filter(|b| b.0 == in_function)
                .map(|b| (b.1, b.2)),
            _ => None,
        };
        let d = Definition {
            kind,
            lo,
            hi,
            value: value.map(|s| self.span(s)),
            in_function,
            block,
        };
        // Minified code binds the same few names over and over (`e`, `t`
        // in every function): a key is made only the first time.
        match self.out.definitions.get_mut(name) {
            Some(defs) => defs.push(d),
            None => {
                self.out.definitions.insert(name.to_string(), vec![d]);
            }
        }
    }

    // The lazily loaded modules' bindings are looked for out of the
    // visitor's own frames (`inline(never)`): the walk recurses once per
    // AST level, and every byte a visitor's frame grows by is paid at each
    // level of the deepest nesting.

    /// A declaration: a lazily loaded module bound (see
    /// [`Self::lazy_binding`]), or a loader function (`var load = () =>
    /// import("…")`).
    #[inline(never)]
    fn lazy_declared(&mut self, pat: &Pat, init: &Expr) {
        self.lazy_binding(pat, init);
        if let Pat::Ident(_) = pat {
            let loads = match init {
                Expr::Arrow(a) => match &*a.body {
                    ArrowFunctionBody::Expr(b) => loader_of(a.params.len(), Some(b)),
                    _ => None,
                },
                Expr::Fn(f) => loader_of(f.function.params.len(), only_return(&f.function)),
                _ => None,
            };
            if let Some(ns) = loads {
                let (lo, _) = self.span(init.span());
                self.loaders.insert(lo, ns);
            }
        }
    }

    /// A function declared: a loader function's module.
    #[inline(never)]
    fn lazy_loader(&mut self, f: &swc_ecma_ast::Function) {
        if let Some(ns) = loader_of(f.params.len(), only_return(f)) {
            let (lo, _) = self.span(f.span);
            self.loaders.insert(lo, ns);
        }
    }

    /// `x = await import("…")`: an alias the name may be declared
    /// anywhere for.
    #[inline(never)]
    fn lazy_assigned(&mut self, name: &Atom, right: &Expr) {
        if matches!(right, Expr::Ident(_)) {
            return;
        }
        if let Some(of) = lazy_module(right, false) {
            let in_function = self.current();
            self.lazy.push(LazyBinding {
                of,
                to: LazyTo::Alias(name.clone(), false),
                in_function,
            });
        }
    }

    /// `import("…").then((ns) => …)`: the callback's parameter is the
    /// module.
    #[inline(never)]
    fn lazy_callback(&mut self, n: &CallExpr) {
        if let Callee::Expr(e) = &n.callee
            && let Expr::Member(m) = &**e
            && matches!(&m.prop, MemberProp::Ident(p) if p.sym == "then")
            && !matches!(&*m.obj, Expr::Ident(_))
            && let Some(first) = n.args.first()
            && first.spread.is_none()
            && let Some(lo) = match &*first.expr {
                Expr::Arrow(a) if !a.params.is_empty() => Some(a.span.lo),
                Expr::Fn(f) if !f.function.params.is_empty() => Some(f.function.span.lo),
                _ => None,
            }
            && let Some(of) = lazy_module(&m.obj, true)
        {
            let lo = self.off(lo);
            let in_function = self.current();
            self.lazy.push(LazyBinding {
                of,
                to: LazyTo::Callback(lo),
                in_function,
            });
        }
    }

    /// A lazily loaded module bound to `pat` (see [`lazy_module`]), or each
    /// of the modules `await Promise.all([…])` gives an array pattern.
    fn lazy_binding(&mut self, pat: &Pat, init: &Expr) {
        let in_function = self.current();
        if let (Pat::Array(ap), Some(items)) = (pat, promise_all(init)) {
            for (p, e) in ap.elems.iter().zip(items) {
                let (Some(p), Some(e)) = (p, e) else { continue };
                if let (Some(of), Some(to)) = (lazy_module(e, true), lazy_target(p, e)) {
                    self.lazy.push(LazyBinding {
                        of,
                        to,
                        in_function,
                    });
                }
            }
            return;
        }
        // `let {key: local} = (init(), wrap(ns))`: a bundle's CommonJS view
        // of a namespace taken apart where it is needed (as read at once,
        // `(init(), wrap(ns)).key`, in `visit_member_expr`).
        let of = lazy_module(init, false).or_else(|| match pat {
            Pat::Object(_) => wrapped_namespace(init).map(|ns| Lazy::Of(NamespaceOf::Table(ns))),
            _ => None,
        });
        if let (Some(of), Some(to)) = (of, lazy_target(pat, init)) {
            self.lazy.push(LazyBinding {
                of,
                to,
                in_function,
            });
        }
    }

    fn enter(
        &mut self,
        name: Option<String>,
        kind: FnKind,
        span: swc_common::Span,
        body_lo: swc_common::BytePos,
        params: &[&Pat],
    ) -> FnId {
        let (lo, hi) = self.span(span);
        let id = self.out.functions.len() as FnId;
        let name_atom: Atom = name.as_deref().unwrap_or_default().into();
        // A function expression is entered with its body's edge on the
        // stack: where it goes is below that edge.
        let below = match self.flow.last() {
            Some(Frame::Body) => &self.flow[..self.flow.len() - 1],
            _ => &self.flow[..],
        };
        let outer = flow::chain(below);
        self.out.functions.push(Function {
            name: name.map(|_| name_atom.clone()),
            kind,
            lo,
            hi,
            body_lo: self.off(body_lo),
            params: params.len() as u32,
            first_plain: params.first().is_some_and(|p| p.as_ident().is_some()),
            parent: self.current(),
            param_names: params
                .iter()
                .map(|p| match p {
                    Pat::Ident(b) => b.id.sym.clone(),
                    Pat::Assign(a) => a
                        .left
                        .as_ident()
                        .map(|b| b.id.sym.clone())
                        .unwrap_or_default(),
                    _ => Atom::default(),
                })
                .collect(),
            param_keys: param_keys(params),
            param_reads: 0,
            flow: match kind {
                FnKind::Method => Box::new([self.key(name_atom)]),
                FnKind::Declaration => Box::new([Flow::Bind(name_atom)]),
                _ => outer,
            },
        });
        self.stack.push(id);
        id
    }

    /// A function with a body: recorded, its parameters bound, its body visited.
    fn function(&mut self, name: Option<String>, kind: FnKind, f: &swc_ecma_ast::Function) {
        let body_lo = f.body.as_ref().map_or(f.span.lo, |b| b.span.lo);
        let params: Vec<&Pat> = f.params.iter().map(|p| &p.pat).collect();
        // Bound only once measured (the walk measures them again as it
        // visits them: parameters are small).
        if !params.iter().all(|p| self.depth.part(*p)) {
            return;
        }
        self.enter(name, kind, f.span, body_lo, &params);
        for p in &params {
            self.bind_pat(p, DefKind::Param, None);
        }
        f.visit_children_with(self);
        self.stack.pop();
    }

    /// A method's computed key (`[expr]() {…}`): walked as a key-value
    /// property's key is, where the object or class is. Bundled
    /// TypeScript puts whole helpers there (`[(x = async function () {…},
    /// Symbol.asyncIterator)]() {…}`). Called after the method is
    /// recorded: its span starts at the key, and functions are recorded
    /// in start order.
    fn computed_key(&mut self, key: &PropName) {
        if let PropName::Computed(c) = key {
            c.visit_with(self);
        }
    }

    fn bind_pat(&mut self, pat: &Pat, kind: DefKind, value: Option<swc_common::Span>) {
        match pat {
            Pat::Ident(b) => self.define(&b.id.sym, kind, b.id.span, value),
            Pat::Array(a) => a
                .elems
                .iter()
                .flatten()
                .for_each(|p| self.bind_pat(p, kind, None)),
            Pat::Object(o) => {
                for prop in &o.props {
                    match prop {
                        ObjectPatProp::KeyValue(kv) => self.bind_pat(&kv.value, kind, None),
                        ObjectPatProp::Assign(a) => self.define(&a.key.sym, kind, a.key.span, None),
                        ObjectPatProp::Rest(r) => self.bind_pat(&r.arg, kind, None),
                    }
                }
            }
            Pat::Rest(r) => self.bind_pat(&r.arg, kind, None),
            Pat::Assign(a) => self.bind_pat(&a.left, kind, None),
            _ => {}
        }
    }
}

/// The function a call calls: `(0, ns.f)(…)` — how bundlers call an
/// imported function without its namespace as `this` — calls `ns.f`.
fn direct_callee(callee: &Expr) -> &Expr {
    if let Expr::Paren(p) = callee
        && let Expr::Seq(q) = &*p.expr
        && let Some((last, rest)) = q.exprs.split_last()
        && rest.iter().all(|x| matches!(&**x, Expr::Lit(_)))
        && matches!(&**last, Expr::Member(_) | Expr::Ident(_))
    {
        return last;
    }
    callee
}

/// The keys object-pattern parameters take apart, and the names they bind
/// (see [`Function::param_keys`]); a key that is nested, computed or given
/// to a pattern of its own is left out.
fn param_keys(params: &[&Pat]) -> Box<[(u8, Atom, Atom)]> {
    let mut out = Vec::new();
    for (i, p) in params.iter().enumerate().take(u8::MAX as usize) {
        let p = match p {
            Pat::Assign(a) => &*a.left,
            p => p,
        };
        let Pat::Object(o) = p else { continue };
        out.extend(
            pattern_keys(o)
                .into_iter()
                .map(|(key, local)| (i as u8, key, local)),
        );
    }
    out.into_boxed_slice()
}

impl Indexer {
    /// A concatenation of literals only, as one literal (see
    /// [`JoinedLit`]); its parts are visited after it.
    fn joined(&mut self, span: Span, parts: &[&Expr]) {
        let mut value = String::new();
        let mut holes = false;
        let mut starts = Vec::with_capacity(parts.len());
        for p in parts {
            match p {
                Expr::Lit(Lit::Str(s)) => value.push_str(&s.value.to_string_lossy()),
                Expr::Tpl(t) => {
                    holes |= !t.exprs.is_empty();
                    value.push_str(&template_value(t));
                }
                _ => {}
            }
            starts.push(self.off(p.span().lo));
        }
        let (lo, hi) = self.span(span);
        self.out.joined.push(JoinedLit {
            lit: StringLit {
                value: value.into(),
                kind: if holes {
                    LitKind::Template
                } else {
                    LitKind::String
                },
                lo,
                hi,
                in_function: self.current(),
                flow: self.chain(),
            },
            parts: starts.into_boxed_slice(),
        });
    }

    /// An expression's children, each with the place its value goes.
    fn expr_flow(&mut self, e: &Expr) {
        match e {
            Expr::Ident(i) => {
                let chain = self.chain();
                if chain.first().is_some_and(|p| *p != Flow::Discard) {
                    self.out.uses.push(Use {
                        name: i.sym.clone(),
                        lo: self.off(i.span.lo),
                        flow: chain,
                        in_function: self.current(),
                    });
                }
            }
            Expr::Bin(b) => match b.op {
                BinaryOp::Add => match literal_chain(b) {
                    Some(parts) => {
                        self.joined(b.span, &parts);
                        // The parts directly: the sums between them are
                        // not chains of their own.
                        parts.iter().for_each(|p| p.visit_with(self));
                    }
                    None => e.visit_children_with(self),
                },
                BinaryOp::LogicalOr | BinaryOp::NullishCoalescing => e.visit_children_with(self),
                BinaryOp::LogicalAnd => {
                    self.place(Flow::Discard, |s| b.left.visit_with(s));
                    b.right.visit_with(self);
                }
                _ => self.place(Flow::Discard, |s| e.visit_children_with(s)),
            },
            Expr::Cond(c) => {
                self.place(Flow::Discard, |s| c.test.visit_with(s));
                c.cons.visit_with(self);
                c.alt.visit_with(self);
            }
            Expr::Seq(q) => {
                if let Some((last, rest)) = q.exprs.split_last() {
                    self.place(Flow::Discard, |s| rest.iter().for_each(|x| x.visit_with(s)));
                    last.visit_with(self);
                }
            }
            // The value passes through.
            Expr::Paren(_)
            | Expr::Await(_)
            | Expr::Array(_)
            | Expr::Tpl(_)
            | Expr::TsAs(_)
            | Expr::TsNonNull(_)
            | Expr::TsTypeAssertion(_)
            | Expr::TsConstAssertion(_)
            | Expr::TsSatisfies(_)
            | Expr::Call(_)
            | Expr::New(_)
            | Expr::OptChain(_)
            | Expr::Member(_)
            | Expr::Assign(_)
            | Expr::Lit(_) => e.visit_children_with(self),
            // A function's body has its own places (its statements, or the
            // return of an arrow's expression body).
            Expr::Arrow(_) | Expr::Fn(_) | Expr::Class(_) => {
                self.within(Frame::Body, |s| e.visit_children_with(s))
            }
            Expr::Object(o) => {
                let returned = matches!(self.flow.last(), Some(Frame::Place(Flow::Return)));
                if returned {
                    let at = self.current();
                    self.held.returners.insert(at);
                }
                let lo = self.off(o.span.lo);
                let keys = o
                    .props
                    .iter()
                    .filter_map(|p| match p {
                        PropOrSpread::Prop(p) => match &**p {
                            Prop::Shorthand(i) => Some(i.sym.clone()),
                            Prop::KeyValue(kv) => prop_name(&kv.key).map(Atom::from),
                            Prop::Method(m) => prop_name(&m.key).map(Atom::from),
                            Prop::Getter(g) => prop_name(&g.key).map(Atom::from),
                            _ => None,
                        },
                        PropOrSpread::Spread(_) => None,
                    })
                    .collect();
                self.out.objects.push(ObjectShape { lo, keys, returned });
                self.objects.push(lo);
                e.visit_children_with(self);
                self.objects.pop();
            }
            Expr::TaggedTpl(t) => {
                self.place(Flow::Discard, |s| t.tag.visit_with(s));
                t.tpl.visit_with(self);
            }
            _ => self.place(Flow::Discard, |s| e.visit_children_with(s)),
        }
    }

    /// A call's callee and arguments, each with its place: the receiver of
    /// a text method passes on to the call's own place, an argument goes
    /// to the call.
    fn call_flow(&mut self, callee: &Expr, args: &[ExprOrSpread], new: bool) {
        let callee = direct_callee(callee);
        let member = match callee {
            Expr::Member(m) => Some(m),
            Expr::OptChain(OptChainExpr { base, .. }) => match &**base {
                OptChainBase::Member(m) => Some(m),
                _ => None,
            },
            _ => None,
        };
        let method = member.and_then(|m| match &m.prop {
            MemberProp::Ident(p) => Some(p.sym.clone()),
            _ => None,
        });
        let name: Atom = match (callee, &method) {
            (Expr::Ident(i), _) => i.sym.clone(),
            (_, Some(m)) => m.clone(),
            _ => Atom::default(),
        };
        match (member, &method) {
            (Some(m), Some(p)) if flow::passes_receiver(p) => {
                m.obj.visit_with(self);
                // `a.concat(b)`, `Promise.all([…])`: the arguments pass on too.
                if matches!(&**p, "concat" | "all" | "allSettled" | "resolve") {
                    args.visit_with(self);
                    return;
                }
            }
            (Some(m), Some(p)) if flow::adds_to_receiver(p) => {
                if let Expr::Ident(r) = &*m.obj {
                    let at = self.current();
                    self.held.literal(r.sym.clone(), at);
                    let into = Flow::Into(r.sym.clone());
                    self.place(Flow::Discard, |s| callee.visit_with(s));
                    // `m.set(key, value)`: the key is not the value.
                    let skip = usize::from(&**p == "set");
                    for (i, a) in args.iter().enumerate() {
                        if i < skip {
                            self.place(Flow::Discard, |s| a.visit_with(s));
                        } else {
                            self.place(into.clone(), |s| a.visit_with(s));
                        }
                    }
                    return;
                }
                self.place(Flow::Discard, |s| callee.visit_with(s));
            }
            _ => self.place(Flow::Discard, |s| callee.visit_with(s)),
        }
        // A logger's call (`t(message, {level: "warn"})`: the build's own
        // debug log, whatever it is named): its arguments are kept.
        if args.iter().any(|a| is_log_level(&a.expr)) {
            for a in args {
                let lo = self.off(a.expr.span().lo);
                self.out.logged.push(lo);
            }
        }
        for (i, a) in args.iter().enumerate() {
            let place = Flow::Arg {
                callee: name.clone(),
                index: i.min(255) as u8,
                new,
                member: member.is_some(),
            };
            self.place(place, |s| a.visit_with(s));
        }
    }

    /// One call site: its callee's name (an identifier, or a member's
    /// property through `.` or `?.`) and its first two arguments.
    fn record_call(&mut self, span: swc_common::Span, callee_expr: &Expr, args: &[ExprOrSpread]) {
        let callee_expr = direct_callee(callee_expr);
        let (lo, hi) = self.span(span);
        let callee = match callee_expr {
            Expr::OptChain(OptChainExpr { base, .. }) => match &**base {
                OptChainBase::Member(m) => Some(m),
                _ => None,
            }
            .and_then(|m| match &m.prop {
                MemberProp::Ident(p) => Some((p.sym.clone(), true)),
                _ => None,
            }),
            Expr::Ident(i) => Some((i.sym.clone(), false)),
            Expr::Member(m) => match &m.prop {
                MemberProp::Ident(p) => Some((p.sym.clone(), true)),
                _ => None,
            },
            _ => None,
        };
        let Some((name, member)) = callee else { return };
        let arg = |i: usize| {
            args.get(i).filter(|a| a.spread.is_none()).map(|a| {
                let (lo, hi) = self.span(a.expr.span());
                Arg {
                    lo,
                    hi,
                    value: match &*a.expr {
                        Expr::Ident(i) => ArgValue::Ident(i.sym.clone()),
                        Expr::Lit(Lit::Str(s)) => {
                            ArgValue::String(s.value.to_string_lossy().into())
                        }
                        _ => ArgValue::Other,
                    },
                }
            })
        };
        let (arg0, arg1) = (arg(0), arg(1));
        // `x.name(…)`: kept if `x` turns out to be a namespace (pruned
        // once the module is walked).
        if member
            && let Some(obj) = member_object(callee_expr)
            && matches!(self.flow.last(), Some(Frame::Place(p)) if *p != Flow::Discard)
        {
            let flow_start = self.out.member_flows.len() as u32;
            let flow_len = flow::chain_into(&self.flow, &mut self.out.member_flows);
            self.out.member_calls.push(MemberUse {
                obj,
                key: name.clone(),
                lo,
                in_function: self.current(),
                flow_start,
                flow_len,
            });
        }
        self.out.calls.push(Call {
            name,
            member,
            lo,
            hi,
            args: args.len() as u32,
            in_function: self.current(),
            arg0,
            arg1,
            // Where a method's result goes is never asked.
            flow: if member { Box::default() } else { self.chain() },
        });
    }
}

fn prop_name(k: &PropName) -> Option<String> {
    match k {
        PropName::Ident(i) => Some(i.sym.to_string()),
        PropName::Str(s) => Some(s.value.to_string_lossy().into_owned()),
        PropName::Num(n) => Some(n.value.to_string()),
        _ => None,
    }
}

fn is_fn_expr(e: &Expr) -> bool {
    matches!(e, Expr::Fn(_) | Expr::Arrow(_))
}

/// `x` of a callee `x.name` or `x?.name`.
fn member_object(callee: &Expr) -> Option<Atom> {
    let m = match callee {
        Expr::Member(m) => m,
        Expr::OptChain(OptChainExpr { base, .. }) => match &**base {
            OptChainBase::Member(m) => m,
            _ => return None,
        },
        _ => return None,
    };
    match &*m.obj {
        Expr::Ident(i) => Some(i.sym.clone()),
        _ => None,
    }
}

/// `import.meta.require("…")`: the source it names.
fn meta_require(call: &CallExpr) -> Option<String> {
    let Callee::Expr(callee) = &call.callee else {
        return None;
    };
    let Expr::Member(m) = &**callee else {
        return None;
    };
    if !matches!(&*m.obj, Expr::MetaProp(mp) if mp.kind == MetaPropKind::ImportMeta)
        || !matches!(&m.prop, MemberProp::Ident(r) if &*r.sym == "require")
    {
        return None;
    }
    match call.args.as_slice() {
        [arg] if arg.spread.is_none() => match &*arg.expr {
            Expr::Lit(Lit::Str(src)) => Some(src.value.to_string_lossy().into_owned()),
            _ => None,
        },
        _ => None,
    }
}

/// `() => ident` — the getter shape of export tables.
fn getter_target(e: &Expr) -> Option<&Ident> {
    let Expr::Arrow(a) = e else { return None };
    if !a.params.is_empty() {
        return None;
    }
    match &*a.body {
        ArrowFunctionBody::Expr(e) => match &**e {
            Expr::Ident(i) => Some(i),
            _ => None,
        },
        ArrowFunctionBody::FunctionBody(b) => match b.stmts.as_slice() {
            [Stmt::Return(ReturnStmt { arg: Some(e), .. })] => match &**e {
                Expr::Ident(i) => Some(i),
                _ => None,
            },
            _ => None,
        },
    }
}

impl Visit for Indexer {
    fn visit_expr(&mut self, e: &Expr) {
        if self.depth.down(|| e.span()) {
            self.expr_flow(e);
            self.depth.up();
        }
    }

    fn visit_stmt(&mut self, st: &Stmt) {
        if self.depth.down(|| st.span()) {
            if let Stmt::Return(ReturnStmt { arg: Some(e), .. }) = st
                && let Some(callee) = called_name(e)
            {
                let at = self.current();
                self.held.forwards.push((at, callee));
            }
            let place = match st {
                Stmt::Return(_) => Some(Flow::Return),
                Stmt::Throw(_) => Some(Flow::Throw),
                // A declaration binds its own places; a block holds
                // statements that do.
                Stmt::Decl(_) | Stmt::Block(_) => None,
                _ => Some(Flow::Discard),
            };
            // A loop's head and a switch's cases are blocks of their own.
            let block = matches!(
                st,
                Stmt::For(_) | Stmt::ForIn(_) | Stmt::ForOf(_) | Stmt::Switch(_)
            );
            if block {
                self.enter_block(st.span());
            }
            match (st, place) {
                // `for (const x of xs)`: each element of `xs` is bound to
                // `x` (a text iterated by character, a list by item).
                (Stmt::ForOf(f), _) => {
                    let bound = match &f.left {
                        ForHead::VarDecl(d) if d.decls.len() == 1 => {
                            Some(binding_place(&d.decls[0].name))
                        }
                        _ => None,
                    };
                    self.place(Flow::Discard, |v| f.left.visit_with(v));
                    match bound {
                        Some(b) => self.place(b, |v| f.right.visit_with(v)),
                        None => self.place(Flow::Discard, |v| f.right.visit_with(v)),
                    }
                    self.place(Flow::Discard, |v| f.body.visit_with(v));
                }
                (_, Some(p)) => self.place(p, |v| st.visit_children_with(v)),
                (_, None) => st.visit_children_with(self),
            }
            if block {
                self.blocks.pop();
            }
            self.depth.up();
        }
    }

    fn visit_block_stmt(&mut self, b: &BlockStmt) {
        // A function's body is the function's own scope, not a block in it.
        let lo = self.off(b.span.lo);
        let body = self
            .current()
            .is_some_and(|f| self.out.functions[f as usize].body_lo == lo);
        if body {
            b.visit_children_with(self);
        } else {
            self.enter_block(b.span);
            b.visit_children_with(self);
            self.blocks.pop();
        }
    }

    fn visit_prop(&mut self, p: &Prop) {
        match p {
            Prop::Shorthand(i) => {
                let chain = {
                    self.flow.push(Frame::Place(self.key(i.sym.clone())));
                    let c = self.chain();
                    self.flow.pop();
                    c
                };
                self.out.uses.push(Use {
                    name: i.sym.clone(),
                    lo: self.off(i.span.lo),
                    flow: chain,
                    in_function: self.current(),
                });
            }
            _ => p.visit_children_with(self),
        }
    }

    fn visit_class_prop(&mut self, n: &ClassProp) {
        n.key.visit_with(self);
        if let Some(v) = &n.value {
            if let Some(k) = prop_name(&n.key) {
                self.held.fields.insert(Atom::from(k));
            }
            match prop_name(&n.key) {
                Some(k) => self.place(self.key(k), |s| v.visit_with(s)),
                None => v.visit_with(self),
            }
        }
    }

    fn visit_pat(&mut self, p: &Pat) {
        if self.depth.down(|| p.span()) {
            p.visit_children_with(self);
            self.depth.up();
        }
    }

    fn visit_fn_decl(&mut self, n: &FnDecl) {
        self.lazy_loader(&n.function);
        self.define(
            &n.ident.sym,
            DefKind::Function,
            n.ident.span,
            Some(n.function.span),
        );
        self.function(
            Some(n.ident.sym.to_string()),
            FnKind::Declaration,
            &n.function,
        );
    }

    fn visit_fn_expr(&mut self, n: &FnExpr) {
        let bound = self.pending_name.take();
        let name = n.ident.as_ref().map(|i| i.sym.to_string()).or(bound);
        self.function(name, FnKind::Expression, &n.function);
    }

    fn visit_arrow_expr(&mut self, n: &ArrowExpr) {
        let name = self.pending_name.take();
        if !n.params.iter().all(|p| self.depth.part(p)) {
            return;
        }
        self.enter(
            name,
            FnKind::Arrow,
            n.span,
            n.body.span().lo,
            &n.params.iter().collect::<Vec<_>>(),
        );
        for p in &n.params {
            self.bind_pat(p, DefKind::Param, None);
        }
        n.params.visit_with(self);
        match &*n.body {
            ArrowFunctionBody::Expr(e) => self.place(Flow::Return, |s| e.visit_with(s)),
            b => b.visit_with(self),
        }
        self.stack.pop();
    }

    fn visit_class(&mut self, n: &Class) {
        let lo = self.off(n.span.lo);
        let keys = n
            .body
            .iter()
            .filter_map(|m| match m {
                ClassMember::Method(m) => prop_name(&m.key).map(Atom::from),
                ClassMember::ClassProp(p) => prop_name(&p.key).map(Atom::from),
                _ => None,
            })
            .collect();
        self.out.objects.push(ObjectShape {
            lo,
            keys,
            returned: false,
        });
        self.objects.push(lo);
        self.within(Frame::Body, |s| n.visit_children_with(s));
        self.objects.pop();
    }

    fn visit_class_decl(&mut self, n: &ClassDecl) {
        self.define(
            &n.ident.sym,
            DefKind::Class,
            n.ident.span,
            Some(n.class.span),
        );
        let at = self.current();
        self.held.class(n.ident.sym.clone(), at);
        n.visit_children_with(self);
    }

    fn visit_class_method(&mut self, n: &ClassMethod) {
        if self.depth.part(&n.key) {
            self.function(prop_name(&n.key), FnKind::Method, &n.function);
            self.computed_key(&n.key);
        }
    }

    /// `#name() {…}`: a method like any other (its returns and its `this`
    /// are its own, not the enclosing function's).
    fn visit_private_method(&mut self, n: &PrivateMethod) {
        let name = format!("#{}", n.key.name);
        self.function(Some(name), FnKind::Method, &n.function);
    }

    /// A constructor is a method of its class (what it stores in `this`
    /// is the class's).
    fn visit_constructor(&mut self, n: &Constructor) {
        let Some(body) = &n.body else { return };
        let params: Vec<&Pat> = n
            .params
            .iter()
            .filter_map(|p| match p {
                ParamOrTsParamProp::Param(p) => Some(&p.pat),
                _ => None,
            })
            .collect();
        if !params.iter().all(|p| self.depth.part(*p)) {
            return;
        }
        self.enter(
            Some("constructor".to_string()),
            FnKind::Method,
            n.span,
            body.span.lo,
            &params,
        );
        for p in &params {
            self.bind_pat(p, DefKind::Param, None);
        }
        n.params.visit_with(self);
        body.visit_with(self);
        self.stack.pop();
    }

    fn visit_method_prop(&mut self, n: &MethodProp) {
        if self.depth.part(&n.key) {
            self.function(prop_name(&n.key), FnKind::Method, &n.function);
            self.computed_key(&n.key);
        }
    }

    /// `get key() {…}`: a method whose result is the property's value.
    fn visit_getter_prop(&mut self, n: &GetterProp) {
        if self.depth.part(&n.key) {
            self.function(prop_name(&n.key), FnKind::Method, &n.function);
            self.computed_key(&n.key);
        }
    }

    /// `set key(v) {…}`: a method (what it stores in `this` is the object's).
    fn visit_setter_prop(&mut self, n: &SetterProp) {
        if self.depth.part(&n.key) {
            self.function(prop_name(&n.key), FnKind::Method, &n.function);
            self.computed_key(&n.key);
        }
    }

    fn visit_key_value_prop(&mut self, n: &KeyValueProp) {
        n.key.visit_with(self);
        let key = prop_name(&n.key);
        if is_fn_expr(&n.value) {
            self.pending_name = key.clone();
        }
        match key {
            Some(k) => self.place(self.key(k), |s| n.value.visit_with(s)),
            None => self.place(Flow::Discard, |s| n.value.visit_with(s)),
        }
        self.pending_name = None;
    }

    fn visit_var_decl(&mut self, n: &VarDecl) {
        let kind = match n.kind {
            VarDeclKind::Var => DefKind::Var,
            VarDeclKind::Let => DefKind::Let,
            VarDeclKind::Const => DefKind::Const,
        };
        for d in &n.decls {
            if !self.depth.part(&d.name) {
                return;
            }
            self.bind_pat(&d.name, kind, d.init.as_ref().map(|e| e.span()));
            if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init)
                && is_fn_expr(init)
            {
                self.pending_name = Some(b.id.sym.to_string());
            }
            if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init)
                && matches!(&**init, Expr::Object(_) | Expr::Array(_))
            {
                let at = self.current();
                self.held.literal(b.id.sym.clone(), at);
            }
            if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init)
                && let Some(callee) = called_name(init)
            {
                let at = self.current();
                let v = self.held.results.entry(b.id.sym.clone()).or_default();
                if !v.contains(&(callee.clone(), at)) {
                    v.push((callee, at));
                }
            }
            if let Some(init) = &d.init {
                self.lazy_declared(&d.name, init);
            }
            if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init)
                && matches!(&**init, Expr::Class(_))
            {
                let at = self.current();
                self.held.class(b.id.sym.clone(), at);
            }
            self.place(binding_place(&d.name), |s| d.init.visit_with(s));
            self.pending_name = None;
        }
    }

    fn visit_using_decl(&mut self, n: &UsingDecl) {
        for d in &n.decls {
            if !self.depth.part(&d.name) {
                return;
            }
            self.bind_pat(&d.name, DefKind::Const, d.init.as_ref().map(|e| e.span()));
            d.init.visit_with(self);
        }
    }

    fn visit_assign_expr(&mut self, n: &AssignExpr) {
        if let AssignTarget::Simple(SimpleAssignTarget::Ident(b)) = &n.left {
            if matches!(&*n.right, Expr::Object(_) | Expr::Array(_)) {
                // Assigned: declared who knows where (a lazy initialiser
                // assigns the module's bindings).
                self.held.literal(b.id.sym.clone(), None);
            }
            if matches!(&*n.right, Expr::Class(_)) {
                self.held.class(b.id.sym.clone(), None);
            }
            self.define(&b.id.sym, DefKind::Assign, b.id.span, Some(n.right.span()));
            if n.op == AssignOp::Assign {
                self.lazy_assigned(&b.id.sym, &n.right);
            }
            if is_fn_expr(&n.right) {
                self.pending_name = Some(b.id.sym.to_string());
            }
        }
        n.left.visit_with(self);
        let place = match &n.left {
            AssignTarget::Simple(SimpleAssignTarget::Ident(b)) => Flow::Bind(b.id.sym.clone()),
            AssignTarget::Simple(SimpleAssignTarget::Member(m)) => {
                let obj = match &*m.obj {
                    Expr::Ident(i) => i.sym.clone(),
                    Expr::This(_) => Atom::from("this"),
                    _ => Atom::default(),
                };
                let key: Option<Atom> = match &m.prop {
                    MemberProp::Ident(p) => Some(p.sym.clone()),
                    MemberProp::Computed(c) => match &*c.expr {
                        Expr::Lit(Lit::Str(k)) => Some(k.value.to_string_lossy().as_ref().into()),
                        _ => None,
                    },
                    _ => None,
                };
                match key {
                    Some(key) => {
                        if &*obj == "this" {
                            self.held.this_stored.insert(key.clone());
                        } else if !obj.is_empty() {
                            let at = self.current();
                            let v = self
                                .held
                                .stored
                                .entry((obj.clone(), key.clone()))
                                .or_default();
                            if !v.contains(&at) {
                                v.push(at);
                            }
                        }
                        Flow::Store(Box::new(flow::Member { key, obj }))
                    }
                    None => Flow::Discard,
                }
            }
            _ => Flow::Discard,
        };
        self.place(place, |s| n.right.visit_with(s));
        self.pending_name = None;
    }

    fn visit_str(&mut self, n: &Str) {
        let (lo, hi) = self.span(n.span);
        self.out.strings.push(StringLit {
            value: n.value.to_string_lossy().into(),
            kind: LitKind::String,
            lo,
            hi,
            in_function: self.current(),
            flow: self.chain(),
        });
    }

    fn visit_tpl(&mut self, n: &Tpl) {
        let (lo, hi) = self.span(n.span);
        self.out.strings.push(StringLit {
            value: template_value(n).into(),
            kind: LitKind::Template,
            lo,
            hi,
            in_function: self.current(),
            flow: self.chain(),
        });
        n.visit_children_with(self);
    }

    /// `f?.(…)`, `a?.b(…)`: an optional call is a call too (registries and
    /// flag stores are often read that way).
    fn visit_opt_call(&mut self, n: &OptCall) {
        self.record_call(n.span, &n.callee, &n.args);
        self.call_flow(&n.callee, &n.args, false);
    }

    fn visit_new_expr(&mut self, n: &NewExpr) {
        let args = n.args.as_deref().unwrap_or_default();
        self.call_flow(&n.callee, args, true);
    }

    fn visit_call_expr(&mut self, n: &CallExpr) {
        if let Callee::Expr(e) = &n.callee {
            self.record_call(n.span, e, &n.args);
        }
        self.lazy_callback(n);
        // `x = import.meta.require("…/chunk.js")`: a chunk's namespace.
        if let Some(src) = meta_require(n)
            && let Some(Frame::Place(Flow::Bind(x))) = self.flow.last()
        {
            self.out.namespaces.push(Namespace {
                alias: x.clone(),
                of: NamespaceOf::Chunk(src),
                in_function: self.current(),
                local: false,
            });
        }
        // helper(ns, { name: () => local, … })
        if let [_, second] = n.args.as_slice()
            && second.spread.is_none()
            && let Expr::Object(obj) = &*second.expr
            && !obj.props.is_empty()
        {
            let mut entries = Vec::new();
            for p in &obj.props {
                let PropOrSpread::Prop(p) = p else { break };
                let Prop::KeyValue(kv) = &**p else { break };
                let (Some(key), Some(target)) = (prop_name(&kv.key), getter_target(&kv.value))
                else {
                    break;
                };
                entries.push(ExportEntry {
                    original: key,
                    local: target.sym.to_string(),
                    lo: self.off(target.span.lo),
                    namespace: match &*n.args[0].expr {
                        Expr::Ident(i) => Some(i.sym.clone()),
                        _ => None,
                    },
                });
            }
            if entries.len() == obj.props.len() {
                self.out.export_table.extend(entries);
            }
        }
        match &n.callee {
            Callee::Expr(e) => self.call_flow(e, &n.args, false),
            _ => self.place(Flow::Discard, |s| {
                n.callee.visit_with(s);
                n.args.visit_with(s);
            }),
        }
    }

    fn visit_import_decl(&mut self, n: &ImportDecl) {
        let source = n.src.value.to_string_lossy().into_owned();
        for s in &n.specifiers {
            let (local, imported) = match s {
                ImportSpecifier::Named(s) => (
                    &s.local,
                    s.imported.as_ref().map_or_else(
                        || s.local.sym.to_string(),
                        |i| match i {
                            ModuleExportName::Ident(i) => i.sym.to_string(),
                            ModuleExportName::Str(s) => s.value.to_string_lossy().into_owned(),
                        },
                    ),
                ),
                ImportSpecifier::Default(d) => (&d.local, "default".to_string()),
                ImportSpecifier::Namespace(n) => (&n.local, "*".to_string()),
            };
            self.define(&local.sym, DefKind::Import, local.span, None);
            self.out.imports.push(ImportEntry {
                local: local.sym.to_string(),
                imported,
                source: source.clone(),
                lo: self.off(local.span.lo),
            });
        }
        n.visit_children_with(self);
    }

    fn visit_member_expr(&mut self, n: &MemberExpr) {
        // import.meta.require("/$bunfs/root/chunk-x.js").name — how code-split
        // builds reach into another chunk lazily.
        if let (Expr::Call(call), MemberProp::Ident(prop)) = (&*n.obj, &n.prop)
            && let Some(source) = meta_require(call)
        {
            self.out.imports.push(ImportEntry {
                local: String::new(),
                imported: prop.sym.to_string(),
                source,
                lo: self.off(prop.span.lo),
            });
        }
        // `x = (init(), wrap(ns)).key`: one bundle's lazily initialised
        // module's export read at once into a name, as if taken apart
        // (kept when `ns` is an export table's namespace).
        if let MemberProp::Ident(prop) = &n.prop
            && let Some(Frame::Place(Flow::Bind(x))) = self.flow.last()
            && let Some(ns) = wrapped_namespace(&n.obj)
        {
            self.out.unpacked.push(UnpackedExport {
                local: x.clone(),
                key: prop.sym.clone(),
                ns: NamespaceOf::Table(ns),
                in_function: self.current(),
            });
        }
        // `o.key`, `this.key`, `o[…]` read as a value: where it goes, for
        // the value stored there (`o.key = text`, `{key: text}` bound to
        // `o`, a class field) to follow.
        let obj = match &*n.obj {
            Expr::Ident(i) => Some(i.sym.clone()),
            Expr::This(_) => Some(Atom::from("this")),
            _ => None,
        };
        // Read for its value (not only compared or tested).
        if let Expr::Ident(i) = &*n.obj
            && matches!(self.flow.last(), Some(Frame::Place(p)) if *p != Flow::Discard)
        {
            self.read_as_object(&i.sym);
        }
        let key = match &n.prop {
            MemberProp::Ident(p) => Some(p.sym.clone()),
            MemberProp::Computed(_) => Some(Atom::default()),
            _ => None,
        };
        if let (Some(obj), Some(key)) = (obj, key)
            && matches!(self.flow.last(), Some(Frame::Place(p)) if *p != Flow::Discard)
        {
            let flow_start = self.out.member_flows.len() as u32;
            let flow_len = flow::chain_into(&self.flow, &mut self.out.member_flows);
            self.out.members.push(MemberUse {
                obj,
                key,
                lo: self.off(n.span.lo),
                in_function: self.current(),
                flow_start,
                flow_len,
            });
        }
        // An object read through goes no further as a value.
        self.place(Flow::Discard, |s| {
            n.obj.visit_with(s);
            n.prop.visit_with(s);
        });
    }

    fn visit_named_export(&mut self, n: &NamedExport) {
        if n.src.is_none() {
            for s in &n.specifiers {
                if let ExportSpecifier::Named(s) = s {
                    let name = |e: &ModuleExportName| match e {
                        ModuleExportName::Ident(i) => i.sym.to_string(),
                        ModuleExportName::Str(s) => s.value.to_string_lossy().into_owned(),
                    };
                    let local = name(&s.orig);
                    let exported = s.exported.as_ref().map_or_else(|| local.clone(), name);
                    self.out.esm_exports.push(ExportEntry {
                        original: exported,
                        local,
                        lo: self.off(s.orig.span().lo),
                        namespace: None,
                    });
                }
            }
        }
        n.visit_children_with(self);
    }

    fn visit_export_decl(&mut self, n: &ExportDecl) {
        let names: Vec<(String, swc_common::Span)> = match &n.decl {
            Decl::Fn(f) => vec![(f.ident.sym.to_string(), f.ident.span)],
            Decl::Class(c) => vec![(c.ident.sym.to_string(), c.ident.span)],
            Decl::Var(v) => v
                .decls
                .iter()
                .filter_map(|d| match &d.name {
                    Pat::Ident(b) => Some((b.id.sym.to_string(), b.id.span)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for (name, span) in names {
            self.out.esm_exports.push(ExportEntry {
                original: name.clone(),
                local: name,
                lo: self.off(span.lo),
                namespace: None,
            });
        }
        n.visit_children_with(self);
    }
}
#[cfg(test)]
mod sizes {
    use std::mem::size_of;

    /// A cold analysis of 2.1.332 keeps about 850,000 calls, 1,000,000
    /// literals, hundreds of thousands of functions and millions of places
    /// of their chains in its index at its memory peak: a field that grows one of them by eight bytes costs
    /// megabytes of the peak (docs/internals/performance.md, "The index and
    /// the tracer made smaller").
    #[test]
    fn calls_literals_and_functions_stay_small() {
        assert_eq!(size_of::<super::Arg>(), 32);
        assert_eq!(size_of::<Option<super::Arg>>(), 32);
        let sizes = [
            ("call", size_of::<super::Call>(), 112),
            ("literal", size_of::<super::StringLit>(), 56),
            ("function", size_of::<super::Function>(), 88),
            // Every chain above is a list of places.
            ("place", size_of::<crate::js::flow::Flow>(), 16),
        ];
        for (what, size, most) in sizes {
            assert!(size <= most, "a {what} takes {size} bytes (at most {most})");
        }
    }
}

#[cfg(test)]
mod lazy {
    use super::{ModuleIndex, NamespaceOf};
    use crate::js::parse::{self, Goal};

    fn index(src: &str) -> ModuleIndex {
        let (p, _) = parse::parse("x.js", src.to_string(), Goal::Module).unwrap();
        ModuleIndex::build(&p)
    }

    /// Each (local, key) as taken from the export table `ns`, as
    /// [`unpacked`] lists them.
    fn from_table_ns(pairs: &[(&str, &str)]) -> Vec<(String, String, String)> {
        pairs
            .iter()
            .map(|(l, k)| (l.to_string(), k.to_string(), "table ns".to_string()))
            .collect()
    }

    /// (local, key, chunk or table) of each export taken into a name.
    fn unpacked(ix: &ModuleIndex) -> Vec<(String, String, String)> {
        let mut v: Vec<_> = ix
            .unpacked
            .iter()
            .map(|u| {
                let of = match &u.ns {
                    NamespaceOf::Chunk(s) => s.clone(),
                    NamespaceOf::Table(t) => format!("table {t}"),
                };
                (u.local.to_string(), u.key.to_string(), of)
            })
            .collect();
        v.sort();
        v
    }

    fn has_alias(ix: &ModuleIndex, alias: &str, of: &str) -> bool {
        ix.namespaces.iter().any(|n| {
            n.alias == alias
                && match &n.of {
                    NamespaceOf::Chunk(s) => s == of,
                    NamespaceOf::Table(t) => format!("table {t}") == of,
                }
        })
    }

    #[test]
    fn a_chunk_loaded_lazily_is_taken_apart_in_every_form() {
        let ix = index(
            r#"
function load(){ return import("/$bunfs/root/chunk-a.js"); }
var loadToo = () => import("/$bunfs/root/chunk-c.js");
async function f(){
  let { one: a, two } = await import("/$bunfs/root/chunk-a.js");
  let [x, { three: b }] = await Promise.all([other(), load()]);
  let whole = await import("/$bunfs/root/chunk-b.js");
  let { four: c } = await loadToo();
  import("/$bunfs/root/chunk-b.js").then(({ five: d }) => d());
  load().then((ns) => ns.six);
  return [a, two, b, whole.seven, c, x];
}
"#,
        );
        let a = "/$bunfs/root/chunk-a.js";
        let b = "/$bunfs/root/chunk-b.js";
        let want: Vec<(String, String, String)> = [
            ("a", "one", a),
            ("b", "three", a),
            ("c", "four", "/$bunfs/root/chunk-c.js"),
            ("d", "five", b),
            ("two", "two", a),
        ]
        .iter()
        .map(|(l, k, s)| (l.to_string(), k.to_string(), s.to_string()))
        .collect();
        assert_eq!(unpacked(&ix), want);
        assert!(has_alias(&ix, "whole", b));
        assert!(has_alias(&ix, "ns", a));
        // The callback's parameter is kept as a namespace where it is
        // bound: its read `ns.six` is kept.
        assert!(ix.members.iter().any(|m| m.obj == "ns" && m.key == "six"));
    }

    #[test]
    fn a_name_that_only_looks_like_a_loader_loads_nothing() {
        // A loader's name called where a parameter shadows it, a function
        // that does more than return the module, a promise not awaited, a
        // callback's parameter read outside it.
        let ix = index(
            r#"
function load(){ return import("/$bunfs/root/chunk-a.js"); }
function busy(){ note(); return import("/$bunfs/root/chunk-a.js"); }
async function f(load){ let { one: a } = await load(); return a; }
async function g(){ let { two: b } = await busy(); return b; }
function h(){ let { three: c } = import("/$bunfs/root/chunk-a.js"); return c; }
function k(e){ load().then((e) => e.four); return e.five; }
"#,
        );
        assert!(unpacked(&ix).is_empty(), "{:?}", unpacked(&ix));
        assert!(ix.members.iter().any(|m| m.obj == "e" && m.key == "four"));
        assert!(!ix.members.iter().any(|m| m.obj == "e" && m.key == "five"));
    }

    #[test]
    fn a_tables_loader_is_followed_as_its_namespace() {
        // One bundle's lazily initialised module: its export table's
        // object, handed back by a loader after its initialiser.
        let ix = index(
            r#"
var ns = {}; def(ns, { SKILL_MD: () => md });
var md; var init = lazy(() => { md = "text"; });
function load(){ return Promise.resolve().then(() => (init(), ns)); }
async function f(){ let { SKILL_MD: t } = await load(); let all = await load(); return [t, all.SKILL_MD]; }
async function g(){ let { SKILL_MD: u } = await notLoader(); return u; }
"#,
        );
        assert_eq!(unpacked(&ix), from_table_ns(&[("t", "SKILL_MD")]));
        assert!(has_alias(&ix, "all", "table ns"));
    }

    #[test]
    fn a_tables_export_read_at_once_is_taken_into_its_name() {
        // `x = (init(), wrap(ns)).KEY`, in a lazy initialiser or a
        // declaration; not of an object that is no export table, nor a
        // call's result with other arguments.
        let ix = index(
            r#"
var ns = {}; def(ns, { SECTION: () => md, NAME: () => nm });
var md, nm; var init = lazy(() => { md = "text"; nm = "Tool"; });
var a; var init2 = lazy(() => { a = (init(), wrap(ns)).SECTION; });
var b = wrap(ns).NAME;
var other = {}; var c = (init(), wrap(other)).SECTION;
var d = (init(), wrap(ns, 1)).SECTION;
"#,
        );
        assert_eq!(
            unpacked(&ix),
            from_table_ns(&[("a", "SECTION"), ("b", "NAME")])
        );
    }

    #[test]
    fn a_tables_exports_taken_apart_where_needed_are_taken_into_their_names() {
        // `let {KEY: local} = (init(), wrap(ns))` in a function, and
        // `wrap(ns)` alone; not of an object that is no export table, nor
        // into a name (the whole namespace: an alias, found elsewhere).
        let ix = index(
            r#"
var ns = {}; def(ns, { getPrompt: () => gp, isOn: () => io });
function gp(){ return "text"; } function io(){ return !0; }
var init = lazy(() => {});
function f(){ let { getPrompt: a } = (init(), wrap(ns)), { isOn: b } = wrap(ns); return a(b()); }
function g(){ var other = {}; let { getPrompt: c } = (init(), wrap(other)); let d = (init(), wrap(ns)); return c(d); }
"#,
        );
        assert_eq!(
            unpacked(&ix),
            from_table_ns(&[("a", "getPrompt"), ("b", "isOn")])
        );
    }
}

#[cfg(test)]
mod joined {
    use super::{LitKind, ModuleIndex};
    use crate::js::parse::{self, Goal};

    fn index(src: &str) -> ModuleIndex {
        let (p, _) = parse::parse("x.js", src.to_string(), Goal::Module).unwrap();
        ModuleIndex::build(&p)
    }

    #[test]
    fn a_concatenation_of_literals_only_is_one_literal() {
        let src = "var a = \"One, \" + 'two, ' + `three ${b} four`;\nf(\"five \" + \"six\");";
        let ix = index(src);
        let v: Vec<(&str, LitKind)> = ix
            .joined
            .iter()
            .map(|j| (&*j.lit.value, j.lit.kind))
            .collect();
        assert_eq!(
            v,
            [
                ("One, two, three ${…} four", LitKind::Template),
                ("five six", LitKind::String)
            ]
        );
        let first = &ix.joined[0];
        assert_eq!(
            &src[first.lit.lo as usize..first.lit.hi as usize],
            "\"One, \" + 'two, ' + `three ${b} four`"
        );
        // Each part is still a literal of its own, where it starts, with
        // the same place as the whole.
        assert_eq!(first.parts.len(), 3);
        for start in &first.parts {
            let s = ix.strings.iter().find(|s| s.lo == *start).expect("part");
            assert_eq!(s.flow, first.lit.flow);
        }
    }

    #[test]
    fn a_sum_with_anything_but_literals_is_no_text_of_its_own() {
        let ix = index(
            "var a = \"One, \" + b + \" two\";\nvar c = \"three \" + (\"four \" + \"five\");\nvar d = 1 + 2;",
        );
        // Only the parenthesised literals inside are one.
        let v: Vec<&str> = ix.joined.iter().map(|j| &*j.lit.value).collect();
        assert_eq!(v, ["four five"]);
    }
}
