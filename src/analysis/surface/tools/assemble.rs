//! A tool's prompt assembled by partial evaluation: its `prompt()` (or
//! `description()`) is interpreted statement by statement — local
//! bindings, `if`/`else`, early returns, arrays built with conditional
//! spreads and `push`, `[…].join(…)`, `map`/`flatMap` with callbacks,
//! templates, concatenations, calls of the bundle's functions in the same
//! chunk or another, lazily initialised constants — with every input that
//! is only known at run time kept as a *named hole*.
//!
//! A hole is named from structure, never from a minified identifier: the
//! property read (`options.model` → `${model}`), the destructured parameter
//! (`prompt({model: e})` → `${model}`), the flag or setting a call reads by
//! name (`read("tengu_x", false)` → `${tengu_x}`), a constant whose value is
//! a tool's name (`${READ_TOOL_NAME}`); else a number in order of first
//! appearance (`${v1}`). A choice made at run time keeps both texts:
//! `${test ? `A` : `B`}`. A choice of the whole text (an early `return`)
//! gives variants: the richest is the description, the others are listed
//! among its pieces.
//!
//! Nothing is executed; everything is bounded (steps, call depth).

use super::schema::{Def, Schemas};
use crate::analysis::eval::Value;
use crate::analysis::surface::Site;
use crate::js::index::literal_chain;
use std::collections::HashMap;
use std::rc::Rc;
use swc_common::Spanned;
use swc_ecma_ast::*;

/// One part of an assembled text.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    Lit(String),
    /// Known only at run time: its name.
    Hole(String),
    /// Chosen at run time: the test's name, the text when it holds, the
    /// text otherwise.
    Cond(String, Text, Text),
}

pub type Text = Vec<Seg>;

/// A value being assembled.
#[derive(Debug, Clone, PartialEq)]
enum P {
    Known(Value),
    Text(Text),
    Arr(Vec<Item>),
    Hole(String),
    Cond(String, Box<P>, Box<P>),
    Obj(Vec<(String, P)>),
    Fn(Rc<FnRef>),
    /// No value: a path that throws.
    Never,
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    One(P),
    /// A spread: an array, a choice of arrays, or a run-time array.
    Many(P),
}

#[derive(Debug)]
struct FnRef {
    m: usize,
    base: u32,
    src: FnSrc,
    env: Env,
}

impl PartialEq for FnRef {
    fn eq(&self, o: &FnRef) -> bool {
        std::ptr::eq(self, o)
    }
}

enum FnSrc {
    Def(Rc<Def>),
    Inline(Box<Expr>),
}

impl std::fmt::Debug for FnSrc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnSrc")
    }
}

impl FnSrc {
    fn expr(&self) -> &Expr {
        match self {
            FnSrc::Def(d) => &d.expr,
            FnSrc::Inline(e) => e,
        }
    }
}

type Env = Vec<(String, P)>;

/// A literal text the assembly was made from, and where it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Piece {
    pub text: String,
    /// `literal` (a string or template literal of the code), or `variant`
    /// (a whole other text the function returns under some condition).
    pub role: String,
    pub site: Site,
}

/// A named hole and the source expression it stands for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Variable {
    pub name: String,
    /// The expression computing it (source text, shortened), or its value
    /// when it is a known constant named for what it holds.
    pub source: String,
}

/// An assembled text.
#[derive(Debug, Clone, Default)]
pub struct Assembled {
    pub text: String,
    pub pieces: Vec<Piece>,
    pub variables: Vec<Variable>,
}

/// Most evaluation steps for one text.
const MAX_STEPS: u32 = 60_000;
/// Most nested calls.
const MAX_CALLS: u32 = 10;
/// Most steps one call may take: past it, its value is a hole (a function
/// computing something other than text — settings, models — is not
/// followed to its end).
const MAX_CALL_STEPS: u32 = 4_000;

/// What every text of a build shares: the values of top-level bindings
/// (the strict evaluator's answer, `None`: not static), the values of
/// calls without arguments, the numbers given to unnamed holes (each text
/// renumbers its own from 1).
#[derive(Default)]
pub struct Globals {
    values: HashMap<(usize, String), Option<Value>>,
    calls: HashMap<(usize, u32), P>,
    numbered: HashMap<(usize, u32, u32), String>,
    /// What each hole name stands for (the first source seen).
    sources: HashMap<String, String>,
}

impl Globals {
    pub fn new() -> Globals {
        Globals::default()
    }
}

pub struct Assembler<'s, 'a> {
    sch: &'s mut Schemas<'a>,
    globals: &'s mut Globals,
    /// Tool names by value, for naming constants that hold them.
    tool_names: &'s HashMap<String, String>,
    steps: u32,
    /// The step at which the current call gives up.
    limit: u32,
    calls: u32,
    /// Inside a test (`if`, `?:`, `&&`): the call depth it may reach.
    test_limit: Option<u32>,
    literals: Vec<(Text, usize, u32)>,
    /// Global bindings being evaluated (cycles).
    active: Vec<(usize, String)>,
    /// Names bound around the method: a factory's parameter (see
    /// [`Assembler::with_argument`]).
    outer: Env,
}

/// The hole name a tool name's constant gets: `Read` → `READ_TOOL_NAME`.
pub fn tool_name_hole(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push('_');
        }
    }
    out.push_str("_TOOL_NAME");
    out
}

impl<'s, 'a> Assembler<'s, 'a> {
    pub fn new(
        sch: &'s mut Schemas<'a>,
        globals: &'s mut Globals,
        tool_names: &'s HashMap<String, String>,
    ) -> Self {
        Assembler {
            sch,
            globals,
            tool_names,
            steps: 0,
            limit: MAX_STEPS,
            calls: 0,
            test_limit: None,
            literals: Vec::new(),
            active: Vec::new(),
            outer: Env::new(),
        }
    }

    /// Bind `param` around the method to `arg` evaluated where it stands
    /// (module `m`, snippet `base`): a tool a factory builds for each of
    /// its calls (`make({name, prompt})`, the tool's methods reading
    /// `options.prompt`) reads that call's values.
    pub fn with_argument(mut self, param: &str, m: usize, base: u32, arg: &Expr) -> Self {
        let v = self.eval(m, base, arg, &Env::new());
        self.outer.push((param.to_string(), v));
        self
    }

    /// Assemble what a method body (or an arrow's expression) returns,
    /// its parameters unknown and named from their patterns.
    pub fn method(
        mut self,
        site: &Site,
        m: usize,
        base: u32,
        params: &[&Pat],
        body: Option<&FunctionBody>,
        expr: Option<&Expr>,
    ) -> Option<Assembled> {
        let mut env = std::mem::take(&mut self.outer);
        for (i, p) in params.iter().enumerate() {
            let hole = P::Hole(if i == 0 {
                "options".into()
            } else {
                format!("arg{}", i + 1)
            });
            self.bind(m, base, p, hole, &mut env);
        }
        let v = match (body, expr) {
            (Some(b), _) => {
                let stmts: Vec<&Stmt> = b.stmts.iter().collect();
                self.exec(m, base, &stmts, &mut env)?
            }
            (None, Some(e)) => self.eval(m, base, e, &env),
            _ => return None,
        };
        Some(self.finish(site, v))
    }

    fn finish(self, site: &Site, v: P) -> Assembled {
        // The whole text chosen at run time: its variants.
        let mut variants = Vec::new();
        flatten_variants(v, &mut variants);
        let mut texts: Vec<Text> = variants
            .into_iter()
            .filter(|p| *p != P::Never)
            .map(|p| to_text(&p))
            .collect();
        let best = texts
            .iter()
            .enumerate()
            .max_by_key(|(i, t)| (static_len(t), *i))
            .map_or(0, |(i, _)| i);
        if !texts.is_empty() {
            texts.swap(0, best);
        }
        let mut literals = self.literals;
        // Unnamed holes numbered from 1 in order of appearance.
        let mut renumber: HashMap<String, String> = HashMap::new();
        for t in texts.iter().chain(literals.iter().map(|(t, _, _)| t)) {
            each_name(t, &mut |n| {
                for tok in tokens(n) {
                    if is_numbered(tok) && !renumber.contains_key(tok) {
                        let k = format!("v{}", renumber.len() + 1);
                        renumber.insert(tok.to_string(), k);
                    }
                }
            });
        }
        for t in texts
            .iter_mut()
            .chain(literals.iter_mut().map(|(t, _, _)| t))
        {
            rename(t, &renumber);
        }
        let back: HashMap<&str, &str> = renumber
            .iter()
            .map(|(k, v)| (v.as_str(), k.as_str()))
            .collect();
        let mut out = Assembled::default();
        let ci = self.sch.ci;
        let mut all = String::new();
        for t in &texts {
            all.push_str(&plain(t));
            all.push('\u{0}');
        }
        if let Some(t) = texts.first() {
            out.text = render(t);
        }
        for t in texts.iter().skip(1) {
            if static_len(t) > 0 {
                out.pieces.push(Piece {
                    text: render(t),
                    role: "variant".into(),
                    site: site.clone(),
                });
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (t, lm, off) in literals {
            let text = render(&t);
            if text.chars().filter(|c| c.is_alphabetic()).count() < 3
                || text == out.text
                || !all.contains(&plain(&t))
                || !seen.insert(text.clone())
            {
                continue;
            }
            out.pieces.push(Piece {
                text,
                role: "literal".into(),
                site: Site::at(&ci.modules[lm], off),
            });
        }
        // The variables the texts show, with what each stands for.
        let mut names = std::collections::BTreeSet::new();
        for t in &texts {
            each_name(t, &mut |n| {
                for tok in tokens(n) {
                    names.insert(tok.to_string());
                }
            });
        }
        out.variables = names
            .into_iter()
            .filter_map(|n| {
                let orig = back.get(n.as_str()).copied().unwrap_or(n.as_str());
                let source = self.globals.sources.get(orig)?.clone();
                Some(Variable { name: n, source })
            })
            .collect();
        out
    }

    fn tick(&mut self) -> bool {
        self.steps += 1;
        self.steps <= self.limit
    }

    /// A fallback name for the expression at `e`.
    fn numbered(&mut self, m: usize, base: u32, e: &Expr) -> String {
        let off = base + e.span().lo.0.saturating_sub(1);
        let key = (m, off, e.span().hi.0 - e.span().lo.0);
        if let Some(n) = self.globals.numbered.get(&key) {
            let n = n.clone();
            self.note(&n, super::schema::source_of(self.sch.ci, m, base, e));
            return n;
        }
        let n = format!("v{}", self.globals.numbered.len() + 1);
        self.globals.numbered.insert(key, n.clone());
        self.note(&n, super::schema::source_of(self.sch.ci, m, base, e));
        n
    }

    fn note(&mut self, name: &str, source: String) {
        if !self.globals.sources.contains_key(name) {
            self.globals.sources.insert(name.to_string(), source);
        }
    }

    fn hole(&mut self, m: usize, base: u32, e: &Expr, name: Option<String>) -> P {
        match name {
            Some(n) => {
                let src = super::schema::source_of(self.sch.ci, m, base, e);
                self.note(&n, src);
                P::Hole(n)
            }
            None => P::Hole(self.numbered(m, base, e)),
        }
    }

    fn bind(&mut self, m: usize, base: u32, p: &Pat, v: P, env: &mut Env) {
        match p {
            Pat::Ident(b) => env.push((b.id.sym.to_string(), v)),
            Pat::Assign(a) => {
                let v = match v {
                    P::Known(Value::Undefined) => self.eval(m, base, &a.right, env),
                    v => v,
                };
                self.bind(m, base, &a.left, v, env);
            }
            Pat::Object(o) => {
                for prop in &o.props {
                    match prop {
                        ObjectPatProp::KeyValue(kv) => {
                            let Some(k) = super::objects::key_name(&kv.key) else {
                                continue;
                            };
                            let pv = get_prop(&v, &k);
                            if let P::Hole(n) = &pv {
                                self.note(n, format!("parameter property {k}"));
                            }
                            self.bind(m, base, &kv.value, pv, env);
                        }
                        ObjectPatProp::Assign(a) => {
                            let k = a.key.sym.to_string();
                            let mut pv = get_prop(&v, &k);
                            if let (P::Known(Value::Undefined), Some(d)) = (&pv, &a.value) {
                                pv = self.eval(m, base, d, env);
                            }
                            env.push((k, pv));
                        }
                        ObjectPatProp::Rest(r) => {
                            self.bind(m, base, &r.arg, P::Hole("rest".into()), env)
                        }
                    }
                }
            }
            Pat::Array(a) => {
                for (i, el) in a.elems.iter().enumerate() {
                    if let Some(el) = el {
                        let pv = match &v {
                            P::Arr(items) => match items.get(i) {
                                Some(Item::One(x)) => x.clone(),
                                _ => P::Hole(format!("item{}", i + 1)),
                            },
                            _ => P::Hole(format!("item{}", i + 1)),
                        };
                        self.bind(m, base, el, pv, env);
                    }
                }
            }
            Pat::Rest(r) => self.bind(m, base, &r.arg, v, env),
            _ => {}
        }
    }

    /// Run statements; the value returned, `None` when they fall through.
    fn exec(&mut self, m: usize, base: u32, stmts: &[&Stmt], env: &mut Env) -> Option<P> {
        let mut i = 0;
        while i < stmts.len() {
            if !self.tick() {
                return Some(P::Hole("…".into()));
            }
            let s = stmts[i];
            let rest = &stmts[i + 1..];
            match s {
                Stmt::Return(r) => {
                    return Some(match &r.arg {
                        Some(e) => self.eval(m, base, e, env),
                        None => P::Known(Value::Undefined),
                    });
                }
                Stmt::Throw(_) => return Some(P::Never),
                Stmt::Block(b) => {
                    let mut all: Vec<&Stmt> = b.stmts.iter().collect();
                    all.extend_from_slice(rest);
                    return self.exec(m, base, &all, env);
                }
                Stmt::Try(t) => {
                    let mut all: Vec<&Stmt> = t.block.stmts.iter().collect();
                    all.extend_from_slice(rest);
                    return self.exec(m, base, &all, env);
                }
                Stmt::Decl(Decl::Var(v)) => {
                    for d in &v.decls {
                        let val = match &d.init {
                            Some(e) => self.eval(m, base, e, env),
                            None => P::Known(Value::Undefined),
                        };
                        self.bind(m, base, &d.name, val, env);
                    }
                }
                Stmt::Decl(Decl::Fn(f)) => {
                    let e = Expr::Fn(FnExpr {
                        ident: None,
                        function: f.function.clone(),
                    });
                    env.push((
                        f.ident.sym.to_string(),
                        P::Fn(Rc::new(FnRef {
                            m,
                            base,
                            src: FnSrc::Inline(Box::new(e)),
                            env: env.clone(),
                        })),
                    ));
                }
                Stmt::Expr(x) => self.effect(m, base, &x.expr, env),
                Stmt::If(ifs) => {
                    let t = self.eval_test(m, base, &ifs.test, env);
                    let known = match &t {
                        P::Known(v) => Some(v.truthy()),
                        P::Text(t) if static_len(t) > 0 => Some(true),
                        P::Arr(_) | P::Obj(_) | P::Fn(_) => Some(true),
                        _ => None,
                    };
                    let alt: Option<&Stmt> = ifs.alt.as_deref();
                    if let Some(b) = known {
                        let mut all: Vec<&Stmt> = Vec::with_capacity(rest.len() + 1);
                        if b {
                            all.push(&ifs.cons);
                        } else if let Some(a) = alt {
                            all.push(a);
                        }
                        all.extend_from_slice(rest);
                        return self.exec(m, base, &all, env);
                    }
                    let name = self.test_name(m, base, &ifs.test, &t);
                    let returns = has_return(&ifs.cons) || alt.is_some_and(has_return);
                    if returns {
                        // Fork: each branch with the rest of the body.
                        let mut a: Vec<&Stmt> = vec![&ifs.cons];
                        a.extend_from_slice(rest);
                        let mut b: Vec<&Stmt> = alt.into_iter().collect();
                        b.extend_from_slice(rest);
                        let mut env_b = env.clone();
                        let ra = self.exec(m, base, &a, env);
                        let rb = self.exec(m, base, &b, &mut env_b);
                        return match (ra, rb) {
                            (Some(x), Some(y)) => Some(choice(name, x, y)),
                            (x, y) => x.or(y),
                        };
                    }
                    let mut env_b = env.clone();
                    let len = env.len();
                    self.exec(m, base, &[&*ifs.cons], env);
                    if let Some(a) = alt {
                        self.exec(m, base, &[a], &mut env_b);
                    }
                    env.truncate(len);
                    for (k, (_, vb)) in env.iter_mut().zip(env_b).take(len) {
                        if k.1 != vb {
                            let va = std::mem::replace(&mut k.1, P::Never);
                            k.1 = merge(&name, va, vb);
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// An expression statement: assignments and pushes to locals.
    fn effect(&mut self, m: usize, base: u32, e: &Expr, env: &mut Env) {
        match e {
            Expr::Seq(s) => {
                for x in &s.exprs {
                    self.effect(m, base, x, env);
                }
            }
            Expr::Assign(a) => {
                let AssignTarget::Simple(SimpleAssignTarget::Ident(id)) = &a.left else {
                    return;
                };
                let Some(ix) = env.iter().rposition(|(k, _)| *k == *id.id.sym) else {
                    return;
                };
                let r = self.eval(m, base, &a.right, env);
                let v = match a.op {
                    AssignOp::Assign => r,
                    AssignOp::AddAssign => add(env[ix].1.clone(), r),
                    _ => P::Hole(id.id.sym.to_string()),
                };
                env[ix].1 = v;
            }
            Expr::Call(c) => {
                if let Callee::Expr(f) = &c.callee
                    && let Expr::Member(mem) = &**f
                    && let Expr::Ident(obj) = &*mem.obj
                    && let MemberProp::Ident(p) = &mem.prop
                    && matches!(&*p.sym, "push" | "unshift")
                    && let Some(ix) = env.iter().rposition(|(k, _)| *k == *obj.sym)
                    && let P::Arr(_) = &env[ix].1
                {
                    let items = self.items(m, base, c.args.iter(), env);
                    if let P::Arr(a) = &mut env[ix].1 {
                        if &*p.sym == "push" {
                            a.extend(items);
                        } else {
                            a.splice(0..0, items);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn items<'e>(
        &mut self,
        m: usize,
        base: u32,
        args: impl Iterator<Item = &'e ExprOrSpread>,
        env: &Env,
    ) -> Vec<Item> {
        args.map(|a| {
            let v = self.eval(m, base, &a.expr, env);
            if a.spread.is_some() {
                Item::Many(v)
            } else {
                Item::One(v)
            }
        })
        .collect()
    }

    /// Evaluate a test: the functions it calls are followed two levels
    /// down at most (a test's value is rarely static, and its hole is
    /// named from what it reads).
    fn eval_test(&mut self, m: usize, base: u32, e: &Expr, env: &Env) -> P {
        let saved = self.test_limit;
        let limit = self.calls + 2;
        self.test_limit = Some(saved.map_or(limit, |l| l.min(limit)));
        let v = self.eval(m, base, e, env);
        self.test_limit = saved;
        v
    }

    /// The name a test's hole gets.
    fn test_name(&mut self, m: usize, base: u32, e: &Expr, v: &P) -> String {
        match v {
            P::Hole(n) => n.clone(),
            _ => self.numbered(m, base, e),
        }
    }

    fn eval(&mut self, m: usize, base: u32, e: &Expr, env: &Env) -> P {
        if !self.tick() {
            return P::Hole("…".into());
        }
        crate::js::depth::guard(|| self.eval_node(m, base, e, env))
    }

    fn eval_node(&mut self, m: usize, base: u32, e: &Expr, env: &Env) -> P {
        match e {
            Expr::Paren(p) => self.eval(m, base, &p.expr, env),
            Expr::Await(a) => self.eval(m, base, &a.arg, env),
            Expr::Seq(s) => match s.exprs.last() {
                Some(l) => self.eval(m, base, l, env),
                None => P::Known(Value::Undefined),
            },
            Expr::Lit(Lit::Str(s)) => {
                let t = s.value.to_string_lossy().into_owned();
                self.literal(m, base, e, vec![Seg::Lit(t.clone())]);
                P::Known(Value::Str(t))
            }
            Expr::Lit(Lit::Num(n)) => P::Known(Value::Num(n.value)),
            Expr::Lit(Lit::Bool(b)) => P::Known(Value::Bool(b.value)),
            Expr::Lit(Lit::Null(_)) => P::Known(Value::Null),
            Expr::Tpl(t) => {
                let mut out = Text::new();
                for (i, q) in t.quasis.iter().enumerate() {
                    if let Some(c) = &q.cooked {
                        push_lit(&mut out, &c.to_string_lossy());
                    }
                    if let Some(x) = t.exprs.get(i) {
                        let v = self.eval(m, base, x, env);
                        out.extend(to_text(&v));
                    }
                }
                let out = normal(out);
                self.literal(m, base, e, out.clone());
                text_value(out)
            }
            Expr::Bin(b) => match literal_chain(b) {
                Some(parts) => self.joined(m, base, e, &parts, env),
                None => self.binary(m, base, e, b, env),
            },
            Expr::Unary(u) => {
                let v = self.eval(m, base, &u.arg, env);
                match (u.op, v) {
                    (UnaryOp::Void, _) => P::Known(Value::Undefined),
                    (UnaryOp::Bang, P::Known(v)) => P::Known(Value::Bool(!v.truthy())),
                    (UnaryOp::Bang, P::Hole(n)) => P::Hole(negate(&n)),
                    (UnaryOp::Minus, P::Known(Value::Num(n))) => P::Known(Value::Num(-n)),
                    (UnaryOp::TypeOf, _) => self.hole(m, base, e, None),
                    (_, _) => self.hole(m, base, e, None),
                }
            }
            Expr::Cond(c) => {
                let t = self.eval_test(m, base, &c.test, env);
                match truth(&t) {
                    Some(true) => self.eval(m, base, &c.cons, env),
                    Some(false) => self.eval(m, base, &c.alt, env),
                    None => {
                        let name = self.test_name(m, base, &c.test, &t);
                        let a = self.eval(m, base, &c.cons, env);
                        let b = self.eval(m, base, &c.alt, env);
                        choice(name, a, b)
                    }
                }
            }
            Expr::Array(a) => {
                let mut items = Vec::new();
                for el in a.elems.iter().flatten() {
                    let v = self.eval(m, base, &el.expr, env);
                    items.push(if el.spread.is_some() {
                        Item::Many(v)
                    } else {
                        Item::One(v)
                    });
                }
                P::Arr(items)
            }
            Expr::Object(o) => {
                let mut props = Vec::new();
                for p in &o.props {
                    match p {
                        PropOrSpread::Spread(s) => {
                            if let P::Obj(v) = self.eval(m, base, &s.expr, env) {
                                props.extend(v);
                            }
                        }
                        PropOrSpread::Prop(p) => match &**p {
                            Prop::KeyValue(kv) => {
                                if let Some(k) = super::objects::key_name(&kv.key) {
                                    let v = self.eval(m, base, &kv.value, env);
                                    props.push((k, v));
                                }
                            }
                            Prop::Shorthand(i) => {
                                let v = self.eval(m, base, &Expr::Ident(i.clone()), env);
                                props.push((i.sym.to_string(), v));
                            }
                            _ => {}
                        },
                    }
                }
                P::Obj(props)
            }
            Expr::Arrow(_) | Expr::Fn(_) => P::Fn(Rc::new(FnRef {
                m,
                base,
                src: FnSrc::Inline(Box::new(e.clone())),
                env: env.clone(),
            })),
            Expr::Ident(i) => {
                if let Some((_, v)) = env.iter().rev().find(|(k, _)| *k == *i.sym) {
                    return v.clone();
                }
                if &*i.sym == "undefined" {
                    return P::Known(Value::Undefined);
                }
                self.global(m, base, e, &i.sym)
            }
            Expr::Member(mem) => {
                let obj = self.eval(m, base, &mem.obj, env);
                let key = match &mem.prop {
                    MemberProp::Ident(p) => Some(p.sym.to_string()),
                    MemberProp::Computed(c) => match self.eval(m, base, &c.expr, env) {
                        P::Known(v) => v.to_js_string().ok(),
                        _ => None,
                    },
                    MemberProp::PrivateName(_) => None,
                };
                match key {
                    Some(k) => match get_prop(&obj, &k) {
                        P::Hole(n) => self.hole(m, base, e, Some(n)),
                        v => v,
                    },
                    None => self.hole(m, base, e, None),
                }
            }
            Expr::OptChain(o) => match &*o.base {
                OptChainBase::Member(mem) => {
                    let me = Expr::Member(mem.clone());
                    self.eval(m, base, &me, env)
                }
                OptChainBase::Call(c) => {
                    let ce = Expr::Call(CallExpr {
                        span: c.span,
                        ctxt: c.ctxt,
                        callee: Callee::Expr(c.callee.clone()),
                        args: c.args.clone(),
                        type_args: None,
                    });
                    self.eval(m, base, &ce, env)
                }
            },
            Expr::Call(c) => self.call(m, base, e, c, env),
            _ => self.hole(m, base, e, None),
        }
    }

    /// A concatenation of literals only: one text wrapped over source
    /// lines, one piece (as the surface takes it), not one per part.
    fn joined(&mut self, m: usize, base: u32, e: &Expr, parts: &[&Expr], env: &Env) -> P {
        let before = self.literals.len();
        let mut t = Text::new();
        for p in parts {
            t.extend(to_text(&self.eval(m, base, p, env)));
        }
        let starts: Vec<u32> = parts
            .iter()
            .map(|p| base + p.span().lo.0.saturating_sub(1))
            .collect();
        // The parts' own records go; a literal in a part's hole stays.
        // (`starts` is in source order.)
        let tail = self.literals.split_off(before);
        self.literals.extend(
            tail.into_iter()
                .filter(|(_, lm, off)| *lm != m || starts.binary_search(off).is_err()),
        );
        let t = normal(t);
        self.literal(m, base, e, t.clone());
        bounded(text_value(t))
    }

    fn literal(&mut self, m: usize, base: u32, e: &Expr, text: Text) {
        if self.literals.len() < 4096 {
            let off = base + e.span().lo.0.saturating_sub(1);
            self.literals.push((text, m, off));
        }
    }

    /// A top-level binding of module `m`: a constant's value (a tool's
    /// name held by a constant becomes a named hole), a function, or a
    /// lazily initialised value assembled in turn.
    fn global(&mut self, m: usize, base: u32, e: &Expr, name: &str) -> P {
        let key = (m, name.to_string());
        let v = match self.globals.values.get(&key) {
            Some(v) => v.clone(),
            None => {
                let v = self.sch.value(m, e, base);
                self.globals.values.insert(key, v.clone());
                v
            }
        };
        if let Some(v) = v {
            if let Value::Func(_) = v {
                // Fall through: a function is called through its source.
            } else {
                if let Value::Str(s) = &v
                    && let Some(h) = self.tool_names.get(s)
                {
                    let h = h.clone();
                    self.note(&h, format!("{s:?}"));
                    return P::Hole(h);
                }
                if let Value::Str(s) = &v {
                    self.literal(m, base, e, vec![Seg::Lit(s.clone())]);
                }
                return P::Known(v);
            }
        }
        let Some(d) = self.sch.def(m, name) else {
            return self.hole(m, base, e, None);
        };
        match strip(&d.expr) {
            Expr::Fn(_) | Expr::Arrow(_) => P::Fn(Rc::new(FnRef {
                m: d.m,
                base: d.base,
                src: FnSrc::Def(d.clone()),
                env: Env::new(),
            })),
            // A memoised function: `once(() => …)`.
            Expr::Call(c)
                if c.args.len() == 1
                    && matches!(strip(&c.args[0].expr), Expr::Arrow(_) | Expr::Fn(_)) =>
            {
                P::Fn(Rc::new(FnRef {
                    m: d.m,
                    base: d.base,
                    src: FnSrc::Inline(Box::new(strip(&c.args[0].expr).clone())),
                    env: Env::new(),
                }))
            }
            _ => {
                let key = (d.m, name.to_string());
                if self.active.contains(&key) || self.active.len() > 16 {
                    return self.hole(m, base, e, None);
                }
                self.active.push(key);
                let v = self.eval(d.m, d.base, &d.expr, &Env::new());
                self.active.pop();
                match v {
                    P::Hole(_) => self.hole(m, base, e, None),
                    v => v,
                }
            }
        }
    }

    fn binary(&mut self, m: usize, base: u32, e: &Expr, b: &BinExpr, env: &Env) -> P {
        let l = if matches!(b.op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr) {
            self.eval_test(m, base, &b.left, env)
        } else {
            self.eval(m, base, &b.left, env)
        };
        match b.op {
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::NullishCoalescing => {
                let decided = match (b.op, &l) {
                    (BinaryOp::NullishCoalescing, P::Known(v)) => {
                        Some(!matches!(v, Value::Null | Value::Undefined))
                    }
                    (BinaryOp::NullishCoalescing, P::Text(_) | P::Arr(_) | P::Obj(_)) => Some(true),
                    (_, l) => truth(l),
                };
                let keep_left = match b.op {
                    BinaryOp::LogicalAnd => decided.map(|t| !t),
                    _ => decided,
                };
                match keep_left {
                    Some(true) => l,
                    Some(false) => self.eval(m, base, &b.right, env),
                    None => {
                        let r = self.eval(m, base, &b.right, env);
                        let ln = self.test_name(m, base, &b.left, &l);
                        match b.op {
                            BinaryOp::LogicalAnd => match r {
                                P::Hole(rn) => P::Hole(format!("{ln} && {rn}")),
                                r => choice(ln, r, P::Known(Value::Str(String::new()))),
                            },
                            _ => match r {
                                P::Hole(rn) => P::Hole(format!("{ln} || {rn}")),
                                r => choice(ln.clone(), P::Hole(ln), r),
                            },
                        }
                    }
                }
            }
            _ => {
                let r = self.eval(m, base, &b.right, env);
                match (b.op, l, r) {
                    (BinaryOp::Add, l, r) => add(l, r),
                    (op, P::Known(x), P::Known(y)) => match (op, &x, &y) {
                        (BinaryOp::EqEqEq | BinaryOp::EqEq, _, _) => P::Known(Value::Bool(x == y)),
                        (BinaryOp::NotEqEq | BinaryOp::NotEq, _, _) => {
                            P::Known(Value::Bool(x != y))
                        }
                        (BinaryOp::Sub, Value::Num(a), Value::Num(c)) => {
                            P::Known(Value::Num(a - c))
                        }
                        (BinaryOp::Mul, Value::Num(a), Value::Num(c)) => {
                            P::Known(Value::Num(a * c))
                        }
                        (BinaryOp::Div, Value::Num(a), Value::Num(c)) => {
                            P::Known(Value::Num(a / c))
                        }
                        _ => self.hole(m, base, e, None),
                    },
                    (
                        op @ (BinaryOp::EqEqEq
                        | BinaryOp::NotEqEq
                        | BinaryOp::EqEq
                        | BinaryOp::NotEq
                        | BinaryOp::Gt
                        | BinaryOp::Lt
                        | BinaryOp::GtEq
                        | BinaryOp::LtEq),
                        P::Hole(n),
                        P::Known(v),
                    ) => {
                        let lit = match &v {
                            Value::Str(s) => format!("{s:?}"),
                            Value::Undefined => "undefined".into(),
                            v => v.to_js_string().unwrap_or_default(),
                        };
                        P::Hole(format!("{n} {} {lit}", op.as_str()))
                    }
                    (_, P::Hole(n), _) if b.op == BinaryOp::Div || b.op == BinaryOp::Mul => {
                        P::Hole(n)
                    }
                    _ => self.hole(m, base, e, None),
                }
            }
        }
    }

    fn call(&mut self, m: usize, base: u32, e: &Expr, c: &CallExpr, env: &Env) -> P {
        let Callee::Expr(callee) = &c.callee else {
            return self.hole(m, base, e, None);
        };
        if let Expr::Member(mem) = strip(callee) {
            let MemberProp::Ident(method) = &mem.prop else {
                return self.hole(m, base, e, None);
            };
            let method = method.sym.to_string();
            if let Expr::Ident(o) = &*mem.obj
                && &*o.sym == "Array"
                && method == "isArray"
                && let Some(a) = c.args.first()
            {
                return match self.eval(m, base, &a.expr, env) {
                    P::Arr(_) | P::Known(Value::Array(_)) => P::Known(Value::Bool(true)),
                    P::Hole(_) | P::Cond(..) => self.hole(m, base, e, None),
                    _ => P::Known(Value::Bool(false)),
                };
            }
            let obj = self.eval(m, base, &mem.obj, env);
            let args = self.items(m, base, c.args.iter(), env);
            return self.on_value(m, base, e, obj, &method, args);
        }
        let f = self.eval(m, base, callee, env);
        let args = self.items(m, base, c.args.iter(), env);
        match f {
            P::Fn(f) => match self.apply(&f, args) {
                // A run-time value read by name (a flag, a setting): the
                // name it is read by.
                Some(P::Hole(_)) | None => self.call_hole(m, base, e, c),
                Some(v) if !has_text(&v) && first_name(c).is_some() => {
                    self.call_hole(m, base, e, c)
                }
                Some(v) => v,
            },
            _ => self.call_hole(m, base, e, c),
        }
    }

    /// A call whose value is not known here: named by the flag or setting
    /// it reads by name (its first argument), else numbered.
    fn call_hole(&mut self, m: usize, base: u32, e: &Expr, c: &CallExpr) -> P {
        let name = first_name(c);
        self.hole(m, base, e, name)
    }

    fn apply(&mut self, f: &FnRef, args: Vec<Item>) -> Option<P> {
        if self.calls >= MAX_CALLS || self.test_limit.is_some_and(|l| self.calls >= l) {
            return None;
        }
        // A function of the bundle called without arguments: its value is
        // the same at every call.
        let key = match &f.src {
            FnSrc::Def(d) if args.is_empty() && self.test_limit.is_none() => {
                let k = (d.m, d.base);
                if let Some(v) = self.globals.calls.get(&k) {
                    return Some(v.clone());
                }
                Some(k)
            }
            _ => None,
        };
        let saved = self.limit;
        // The prompt's own helpers may take longer than what they call.
        let share = match self.calls {
            0 => 12,
            1 => 4,
            _ => 1,
        };
        self.limit = saved.min(self.steps + share * MAX_CALL_STEPS);
        let r = self.apply_uncached(f, args);
        let spent = self.steps > self.limit;
        self.limit = saved;
        let r = if spent { None } else { r };
        let r = match r {
            Some(r) => r,
            None => {
                if let Some(k) = key {
                    self.globals.calls.insert(k, P::Hole("…".into()));
                }
                return None;
            }
        };
        if let Some(k) = key {
            self.globals.calls.insert(k, r.clone());
        }
        Some(r)
    }

    fn apply_uncached(&mut self, f: &FnRef, args: Vec<Item>) -> Option<P> {
        let mut env = f.env.clone();
        let (params, body): (Vec<&Pat>, Result<&[Stmt], &Expr>) = match strip(f.src.expr()) {
            Expr::Arrow(a) => (
                a.params.iter().collect(),
                match &*a.body {
                    ArrowFunctionBody::FunctionBody(b) => Ok(&b.stmts),
                    ArrowFunctionBody::Expr(x) => Err(x),
                },
            ),
            Expr::Fn(fe) => (
                fe.function.params.iter().map(|p| &p.pat).collect(),
                Ok(&fe.function.body.as_ref()?.stmts),
            ),
            _ => return None,
        };
        let mut args = args.into_iter();
        for p in params {
            let v = match p {
                Pat::Rest(_) => P::Arr(args.by_ref().collect()),
                _ => match args.next() {
                    Some(Item::One(v)) => v,
                    Some(Item::Many(_)) => P::Hole("args".into()),
                    None => P::Known(Value::Undefined),
                },
            };
            self.bind(f.m, f.base, p, v, &mut env);
        }
        self.calls += 1;
        let r = match body {
            Ok(stmts) => {
                let stmts: Vec<&Stmt> = stmts.iter().collect();
                self.exec(f.m, f.base, &stmts, &mut env)
                    .unwrap_or(P::Known(Value::Undefined))
            }
            Err(x) => self.eval(f.m, f.base, x, &env),
        };
        self.calls -= 1;
        Some(r)
    }

    fn on_value(
        &mut self,
        m: usize,
        base: u32,
        e: &Expr,
        obj: P,
        method: &str,
        args: Vec<Item>,
    ) -> P {
        let arg = |i: usize| match args.get(i) {
            Some(Item::One(v)) => Some(v.clone()),
            _ => None,
        };
        let obj = match obj {
            P::Known(Value::Array(a)) => {
                P::Arr(a.into_iter().map(|v| Item::One(P::Known(v))).collect())
            }
            P::Known(Value::Str(s)) => P::Text(vec![Seg::Lit(s)]),
            o => o,
        };
        match (obj, method) {
            (P::Arr(items), "join") => {
                let sep = match arg(0) {
                    None | Some(P::Known(Value::Undefined)) => ",".to_string(),
                    Some(P::Known(v)) => v.to_js_string().unwrap_or_default(),
                    Some(_) => return self.hole(m, base, e, None),
                };
                let mut first = true;
                text_value(normal(join(&items, &sep, &mut first)))
            }
            (P::Arr(items), "map" | "flatMap") => {
                let Some(P::Fn(f)) = arg(0) else {
                    return self.hole(m, base, e, None);
                };
                let flat = method == "flatMap";
                P::Arr(self.map_items(&f, items, flat))
            }
            (P::Arr(items), "filter") => P::Arr(
                items
                    .into_iter()
                    .filter(|i| !matches!(i, Item::One(P::Known(v)) if !v.truthy()))
                    .collect(),
            ),
            (P::Arr(mut items), "concat") => {
                for a in args {
                    match a {
                        Item::One(P::Arr(v)) => items.extend(v),
                        Item::One(v @ (P::Hole(_) | P::Cond(..))) => items.push(Item::Many(v)),
                        other => items.push(other),
                    }
                }
                P::Arr(items)
            }
            (P::Arr(items), "flat") => P::Arr(
                items
                    .into_iter()
                    .map(|i| match i {
                        Item::One(v @ P::Arr(_)) => Item::Many(v),
                        i => i,
                    })
                    .collect(),
            ),
            (P::Text(t), "trim" | "trimEnd" | "trimStart") => {
                let mut t = t;
                if method != "trimEnd"
                    && let Some(Seg::Lit(s)) = t.first_mut()
                {
                    *s = s.trim_start().to_string();
                }
                if method != "trimStart"
                    && let Some(Seg::Lit(s)) = t.last_mut()
                {
                    *s = s.trim_end().to_string();
                }
                text_value(normal(t))
            }
            (P::Text(t), "toString" | "valueOf") => text_value(t),
            (P::Text(t), "replace" | "replaceAll")
                if matches!(arg(0), Some(P::Known(Value::Str(_))))
                    && matches!(arg(1), Some(P::Known(Value::Str(_)))) =>
            {
                let (Some(P::Known(Value::Str(from))), Some(P::Known(Value::Str(to)))) =
                    (arg(0), arg(1))
                else {
                    return text_value(t);
                };
                if to.contains('$') || from.is_empty() {
                    return text_value(t);
                }
                let t = t
                    .into_iter()
                    .map(|s| match s {
                        Seg::Lit(s) if method == "replaceAll" => Seg::Lit(s.replace(&from, &to)),
                        Seg::Lit(s) => Seg::Lit(s.replacen(&from, &to, 1)),
                        s => s,
                    })
                    .collect();
                text_value(t)
            }
            (P::Text(t), "repeat") if all_static(&t) => match arg(0) {
                Some(P::Known(Value::Num(n))) => {
                    P::Known(Value::Str(plain(&t).repeat(n.clamp(0.0, 64.0) as usize)))
                }
                _ => self.hole(m, base, e, None),
            },
            (P::Text(t), "toUpperCase") if all_static(&t) => {
                P::Known(Value::Str(plain(&t).to_uppercase()))
            }
            (P::Text(t), "toLowerCase") if all_static(&t) => {
                P::Known(Value::Str(plain(&t).to_lowercase()))
            }
            (P::Hole(_) | P::Known(_) | P::Obj(_) | P::Fn(_), _) | (_, _) => {
                // A run-time method: named by the method when it reads a
                // property-like getter (`x.getName()` → `getName`).
                let name =
                    (method.starts_with("get") && method.len() > 3).then(|| method.to_string());
                self.hole(m, base, e, name)
            }
        }
    }

    fn map_items(&mut self, f: &FnRef, items: Vec<Item>, flat: bool) -> Vec<Item> {
        let mut out = Vec::new();
        for (i, it) in items.into_iter().enumerate() {
            match it {
                Item::One(v) => {
                    let r = self
                        .apply(
                            f,
                            vec![Item::One(v), Item::One(P::Known(Value::Num(i as f64)))],
                        )
                        .unwrap_or(P::Hole("item".into()));
                    out.push(if flat && matches!(r, P::Arr(_) | P::Cond(..)) {
                        Item::Many(r)
                    } else {
                        Item::One(r)
                    });
                }
                Item::Many(v) => out.push(Item::Many(self.map_many(f, v, flat))),
            }
        }
        out
    }

    fn map_many(&mut self, f: &FnRef, v: P, flat: bool) -> P {
        match v {
            P::Arr(items) => P::Arr(self.map_items(f, items, flat)),
            P::Cond(t, a, b) => {
                let a = self.map_many(f, *a, flat);
                let b = self.map_many(f, *b, flat);
                P::Cond(t, Box::new(a), Box::new(b))
            }
            v => v,
        }
    }
}

/// Call `f` on every hole's and test's name of a text.
fn each_name(t: &Text, f: &mut dyn FnMut(&str)) {
    for s in t {
        match s {
            Seg::Lit(_) => {}
            Seg::Hole(n) => f(n),
            Seg::Cond(n, a, b) => {
                f(n);
                each_name(a, f);
                each_name(b, f);
            }
        }
    }
}

/// The identifiers of a hole's name (`!a && b === "x"` → a, b).
fn tokens(n: &str) -> impl Iterator<Item = &str> {
    let mut in_str = false;
    n.split(move |c: char| {
        if c == '"' {
            in_str = !in_str;
        }
        in_str || !(c.is_alphanumeric() || c == '_')
    })
    .filter(|t| {
        t.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    })
}

fn is_numbered(t: &str) -> bool {
    t.len() > 1 && t.starts_with('v') && t[1..].chars().all(|c| c.is_ascii_digit())
}

/// Rename the numbered holes of a text.
fn rename(t: &mut Text, map: &HashMap<String, String>) {
    let re = |n: &mut String| {
        if !n.contains('v') {
            return;
        }
        let mut out = String::new();
        let mut tok = String::new();
        let mut in_str = false;
        for c in n.chars().chain(std::iter::once('\u{0}')) {
            if !in_str && (c.is_alphanumeric() || c == '_') {
                tok.push(c);
                continue;
            }
            if !tok.is_empty() {
                out.push_str(map.get(&tok).map_or(tok.as_str(), String::as_str));
                tok.clear();
            }
            if c == '"' {
                in_str = !in_str;
            }
            if c != '\u{0}' {
                out.push(c);
            }
        }
        *n = out;
    };
    for s in t.iter_mut() {
        match s {
            Seg::Lit(_) => {}
            Seg::Hole(n) => re(n),
            Seg::Cond(n, a, b) => {
                re(n);
                rename(a, map);
                rename(b, map);
            }
        }
    }
}

/// The name a call reads by: its first argument, a name-like string.
fn first_name(c: &CallExpr) -> Option<String> {
    c.args.first().and_then(|a| match &*a.expr {
        Expr::Lit(Lit::Str(s)) => {
            let s = s.value.to_string_lossy();
            is_name(&s).then(|| s.into_owned())
        }
        _ => None,
    })
}

/// Whether a value holds any static text (a string, or a text with some).
fn has_text(p: &P) -> bool {
    match p {
        P::Known(Value::Str(s)) => !s.is_empty(),
        P::Text(t) => static_len(t) > 0,
        P::Cond(_, a, b) => has_text(a) || has_text(b),
        P::Arr(items) => items.iter().any(|i| match i {
            Item::One(v) | Item::Many(v) => has_text(v),
        }),
        _ => false,
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        e => e,
    }
}

/// A flag, setting or environment variable's name: an identifier with an
/// underscore or a capital inside (`tengu_x`, `CLAUDE_X`, `someSetting`).
fn is_name(s: &str) -> bool {
    s.len() >= 3
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (s.contains('_') || s.chars().skip(1).any(|c| c.is_ascii_uppercase()))
}

fn negate(n: &str) -> String {
    match n.strip_prefix('!') {
        Some(x) if !x.contains(' ') => x.to_string(),
        _ if n.contains(' ') => format!("!({n})"),
        _ => format!("!{n}"),
    }
}

fn has_return(s: &Stmt) -> bool {
    struct V(bool);
    impl swc_ecma_visit::Visit for V {
        fn visit_return_stmt(&mut self, _: &ReturnStmt) {
            self.0 = true;
        }
        fn visit_throw_stmt(&mut self, _: &ThrowStmt) {
            self.0 = true;
        }
        fn visit_function(&mut self, _: &Function) {}
        fn visit_arrow_expr(&mut self, _: &ArrowExpr) {}
    }
    let mut v = V(false);
    swc_ecma_visit::VisitWith::visit_with(s, &mut v);
    v.0
}

fn truth(p: &P) -> Option<bool> {
    match p {
        P::Known(v) => Some(v.truthy()),
        P::Text(t) if static_len(t) > 0 => Some(true),
        P::Arr(_) | P::Obj(_) | P::Fn(_) => Some(true),
        P::Never => Some(false),
        _ => None,
    }
}

fn get_prop(v: &P, k: &str) -> P {
    match v {
        P::Obj(props) => props
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map_or(P::Known(Value::Undefined), |(_, v)| v.clone()),
        P::Known(Value::Object(props)) => props
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map_or(P::Known(Value::Undefined), |(_, v)| P::Known(v.clone())),
        P::Arr(items) if k == "length" && items.iter().all(|i| matches!(i, Item::One(_))) => {
            P::Known(Value::Num(items.len() as f64))
        }
        P::Known(Value::Array(a)) if k == "length" => P::Known(Value::Num(a.len() as f64)),
        P::Known(Value::Str(s)) if k == "length" => {
            P::Known(Value::Num(s.encode_utf16().count() as f64))
        }
        _ => P::Hole(k.to_string()),
    }
}

/// The most a value being assembled may weigh (bytes of text and parts):
/// choices inside choices can double a text at each step, and a real
/// tool's prompt weighs well under this.
const MAX_WEIGHT: usize = 1 << 20;

/// A value's weight, counted up to `limit`.
fn weight(p: &P, limit: usize) -> usize {
    let mut w = 0;
    weigh(p, &mut w, limit);
    w
}

fn weigh(p: &P, w: &mut usize, limit: usize) {
    if *w > limit {
        return;
    }
    *w += 1;
    match p {
        P::Known(Value::Str(s)) => *w += s.len(),
        P::Text(t) => weigh_text(t, w, limit),
        P::Cond(_, a, b) => {
            weigh(a, w, limit);
            weigh(b, w, limit);
        }
        P::Arr(items) => {
            for it in items {
                match it {
                    Item::One(p) | Item::Many(p) => weigh(p, w, limit),
                }
            }
        }
        P::Obj(kv) => kv.iter().for_each(|(_, p)| weigh(p, w, limit)),
        _ => {}
    }
}

fn weigh_text(t: &Text, w: &mut usize, limit: usize) {
    for s in t {
        if *w > limit {
            return;
        }
        *w += 1;
        match s {
            Seg::Lit(l) => *w += l.len(),
            Seg::Hole(n) => *w += n.len(),
            Seg::Cond(_, a, b) => {
                weigh_text(a, w, limit);
                weigh_text(b, w, limit);
            }
        }
    }
}

/// `p`, or a hole where it outweighs [`MAX_WEIGHT`].
fn bounded(p: P) -> P {
    if weight(&p, MAX_WEIGHT) > MAX_WEIGHT {
        P::Hole("…".into())
    } else {
        p
    }
}

fn choice(name: String, a: P, b: P) -> P {
    bounded(choice_unbounded(name, a, b))
}

fn choice_unbounded(name: String, a: P, b: P) -> P {
    match (a, b) {
        (P::Never, b) => b,
        (a, P::Never) => a,
        (a, b) if a == b => a,
        (a, b) => P::Cond(name, Box::new(a), Box::new(b)),
    }
}

/// Two values of one binding after an `if` without a return: a common
/// prefix kept, the rest chosen.
fn merge(name: &str, a: P, b: P) -> P {
    bounded(merge_unbounded(name, a, b))
}

fn merge_unbounded(name: &str, a: P, b: P) -> P {
    match (a, b) {
        (P::Arr(x), P::Arr(y)) => {
            let n = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
            let mut out: Vec<Item> = x[..n].to_vec();
            let (rx, ry) = (x[n..].to_vec(), y[n..].to_vec());
            out.push(Item::Many(P::Cond(
                name.to_string(),
                Box::new(P::Arr(rx)),
                Box::new(P::Arr(ry)),
            )));
            P::Arr(out)
        }
        (a, b) => choice(name.to_string(), a, b),
    }
}

fn add(l: P, r: P) -> P {
    match (&l, &r) {
        (P::Known(Value::Num(x)), P::Known(Value::Num(y))) => P::Known(Value::Num(x + y)),
        _ => {
            let mut t = to_text(&l);
            t.extend(to_text(&r));
            bounded(text_value(normal(t)))
        }
    }
}

fn text_value(t: Text) -> P {
    if all_static(&t) {
        P::Known(Value::Str(plain(&t)))
    } else {
        P::Text(t)
    }
}

fn all_static(t: &Text) -> bool {
    t.iter().all(|s| matches!(s, Seg::Lit(_)))
}

fn push_lit(t: &mut Text, s: &str) {
    if s.is_empty() {
        return;
    }
    if let Some(Seg::Lit(l)) = t.last_mut() {
        l.push_str(s);
    } else {
        t.push(Seg::Lit(s.to_string()));
    }
}

/// Adjacent literals joined.
fn normal(t: Text) -> Text {
    let mut out = Text::new();
    for s in t {
        match s {
            Seg::Lit(l) => push_lit(&mut out, &l),
            s => out.push(s),
        }
    }
    out
}

fn to_text(p: &P) -> Text {
    match p {
        P::Known(Value::Str(s)) => vec![Seg::Lit(s.clone())],
        P::Known(v) => match v.to_js_string() {
            Ok(s) => vec![Seg::Lit(s)],
            Err(_) => vec![Seg::Hole("…".into())],
        },
        P::Text(t) => t.clone(),
        P::Hole(n) => vec![Seg::Hole(n.clone())],
        P::Cond(n, a, b) => {
            let (a, b) = (to_text(a), to_text(b));
            if a == b {
                a
            } else {
                vec![Seg::Cond(n.clone(), a, b)]
            }
        }
        P::Arr(items) => {
            let mut first = true;
            normal(join(items, ",", &mut first))
        }
        P::Never => Vec::new(),
        P::Obj(_) | P::Fn(_) => vec![Seg::Hole("…".into())],
    }
}

/// `items.join(sep)`: a spread chosen at run time keeps the separator
/// before each of its items inside its branches.
fn join(items: &[Item], sep: &str, first: &mut bool) -> Text {
    let mut out = Text::new();
    for it in items {
        match it {
            Item::One(v) => {
                if !*first {
                    push_lit(&mut out, sep);
                }
                *first = false;
                let v = match v {
                    P::Known(Value::Null | Value::Undefined) => Vec::new(),
                    v => to_text(v),
                };
                out.extend(v);
            }
            Item::Many(v) => out.extend(join_many(v, sep, first)),
        }
    }
    out
}

fn join_many(v: &P, sep: &str, first: &mut bool) -> Text {
    match v {
        P::Arr(items) => join(items, sep, first),
        P::Known(Value::Array(a)) => {
            let items: Vec<Item> = a.iter().map(|v| Item::One(P::Known(v.clone()))).collect();
            join(&items, sep, first)
        }
        P::Cond(n, a, b) => {
            let (mut fa, mut fb) = (*first, *first);
            let ta = normal(join_many(a, sep, &mut fa));
            let tb = normal(join_many(b, sep, &mut fb));
            *first = fa && fb;
            if ta == tb {
                ta
            } else {
                vec![Seg::Cond(n.clone(), ta, tb)]
            }
        }
        P::Never | P::Known(Value::Undefined | Value::Null) => Vec::new(),
        v => {
            let mut out = Text::new();
            if !*first {
                push_lit(&mut out, sep);
            }
            *first = false;
            out.extend(to_text(v));
            out
        }
    }
}

fn flatten_variants(v: P, out: &mut Vec<P>) {
    match v {
        P::Cond(_, a, b) if out.len() < 64 => {
            flatten_variants(*a, out);
            flatten_variants(*b, out);
        }
        v => out.push(v),
    }
}

/// The bytes of a text known statically (holes and choices left out).
pub fn static_len(t: &Text) -> usize {
    t.iter()
        .map(|s| match s {
            Seg::Lit(l) => l.len(),
            _ => 0,
        })
        .sum()
}

/// A text with both branches of each choice, unmarked: what a piece is
/// looked for in.
fn plain(t: &Text) -> String {
    let mut out = String::new();
    for s in t {
        match s {
            Seg::Lit(l) => out.push_str(l),
            Seg::Hole(n) => {
                out.push_str("${");
                out.push_str(n);
                out.push('}');
            }
            Seg::Cond(_, a, b) => {
                out.push_str(&plain(a));
                out.push('\u{0}');
                out.push_str(&plain(b));
            }
        }
    }
    out
}

/// A text as shown: holes `${name}`, choices `${test ? `A` : `B`}` with
/// each branch written as a template literal — as JavaScript nests them:
/// a branch inside a branch is not escaped again, only the literal
/// backticks, backslashes and `${` of a branch's own text are (once,
/// whatever the depth), so a deep choice stays readable.
pub fn render(t: &Text) -> String {
    let mut out = String::new();
    write(t, false, &mut out);
    out
}

fn write(t: &Text, in_branch: bool, out: &mut String) {
    for s in t {
        match s {
            Seg::Lit(l) if in_branch => escape_into(l, out),
            Seg::Lit(l) => out.push_str(l),
            Seg::Hole(n) => {
                out.push_str("${");
                out.push_str(n);
                out.push('}');
            }
            Seg::Cond(n, a, b) => {
                out.push_str("${");
                out.push_str(n);
                out.push_str(" ? `");
                write(a, true, out);
                out.push_str("` : `");
                write(b, true, out);
                out.push_str("`}");
            }
        }
    }
}

/// A branch's literal text as the body of a template literal.
fn escape_into(s: &str, out: &mut String) {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' || c == '\\' || (c == '$' && chars.peek() == Some(&'{')) {
            out.push('\\');
        }
        out.push(c);
    }
}

/// The static pieces of a text as [`render`] writes it: the runs between
/// `${name}` holes, and those of each branch of `${name ? `A` : `B`}`,
/// read back at any depth. Stops at anything else.
pub fn static_pieces(t: &str, out: &mut Vec<String>) {
    read_pieces(t, 0, out);
}

/// The deepest choice [`static_pieces`] reads into. A text it is handed
/// may be a build's own literal, where `${a ? `` can repeat as often as
/// the bytes allow: each level is a call, so the depth is bounded before
/// the stack is (a rendered text nests a few levels).
const MAX_CHOICE_DEPTH: usize = 64;

/// Reads a text (the whole of it at `depth` 0, or a branch's body up to
/// its closing backtick) into `out`; returns what follows.
fn read_pieces<'a>(mut rest: &'a str, depth: usize, out: &mut Vec<String>) -> Option<&'a str> {
    if depth > MAX_CHOICE_DEPTH {
        return None;
    }
    let in_branch = depth > 0;
    let mut lit = String::new();
    loop {
        let mut at = None;
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' if in_branch => lit.push(chars.next()?.1),
                '`' if in_branch => {
                    at = Some((i, false));
                    break;
                }
                '$' if rest[i..].starts_with("${") => {
                    at = Some((i, true));
                    break;
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            out.push(std::mem::take(&mut lit));
        }
        match at {
            None => return (!in_branch).then_some(""),
            Some((i, false)) => return Some(&rest[i + 1..]),
            Some((i, true)) => {
                let after = &rest[i + 2..];
                let (end, choice) = hole_end(after)?;
                if !choice {
                    rest = &after[end + 1..];
                    continue;
                }
                let tail = read_pieces(&after[end + " ? `".len()..], depth + 1, out)?;
                let tail = read_pieces(tail.strip_prefix(" : `")?, depth + 1, out)?;
                rest = tail.strip_prefix('}')?;
            }
        }
    }
}

/// Where the name of a hole (`name}`) or of a choice (`name ? `…`) that
/// starts `s` ends, and which of the two it is. A name is an expression
/// of the build's: its quoted strings and bracketed parts are skipped.
fn hole_end(s: &str) -> Option<(usize, bool)> {
    let b = s.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'}' if depth == 0 => return Some((i, false)),
            b'}' => depth -= 1,
            b' ' if depth == 0 && s[i..].starts_with(" ? `") => return Some((i, true)),
            b'`' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_static_pieces_of_a_rendered_text_are_read_back() {
        let lit = |s: &str| Seg::Lit(s.into());
        let text: Text = vec![
            lit("Pick one."),
            Seg::Cond(
                "v1".into(),
                vec![
                    lit("Say why"),
                    Seg::Cond("v2".into(), vec![lit(", with `code` \\ ")], vec![]),
                    lit("."),
                ],
                vec![lit("Be brief.")],
            ),
            lit(" Last: "),
            Seg::Hole("name".into()),
            lit("!"),
        ];
        // As JavaScript nests template literals: a branch in a branch is
        // not escaped again, only a branch's own backticks and backslashes.
        let shown = render(&text);
        assert_eq!(
            shown,
            "Pick one.${v1 ? `Say why${v2 ? `, with \\`code\\` \\\\ ` : ``}.` : `Be brief.`} Last: ${name}!"
        );
        let mut out = Vec::new();
        static_pieces(&shown, &mut out);
        assert_eq!(
            out,
            [
                "Pick one.",
                "Say why",
                ", with `code` \\ ",
                ".",
                "Be brief.",
                " Last: ",
                "!"
            ]
        );
    }

    #[test]
    fn a_choice_three_deep_is_escaped_once_and_read_back() {
        let lit = |s: &str| Seg::Lit(s.into());
        let cond = |n: &str, a: Vec<Seg>, b: Vec<Seg>| Seg::Cond(n.into(), a, b);
        // A test that is an expression with a quoted string and a call.
        let text: Text = vec![cond(
            "os !== \"win32\"",
            vec![cond(
                "f({ a: 1 })",
                vec![cond("v3", vec![lit("use `/dev/null`, not ${NUL}")], vec![])],
                vec![lit("none")],
            )],
            vec![],
        )];
        let shown = render(&text);
        assert_eq!(
            shown,
            "${os !== \"win32\" ? `${f({ a: 1 }) ? `${v3 ? `use \\`/dev/null\\`, not \\${NUL}` : ``}` : `none`}` : ``}"
        );
        let mut out = Vec::new();
        static_pieces(&shown, &mut out);
        assert_eq!(out, ["use `/dev/null`, not ${NUL}", "none"]);
    }

    #[test]
    fn a_literal_that_opens_choices_without_end_is_read_within_the_stack() {
        // A build's literal handed in as it is: half a million opened
        // choices (and as many closed ones after) would be as many calls
        // deep. The reading stops at the depth limit; what came before
        // the first choice is kept.
        for tail in ["", "` : ``}"] {
            let text = format!(
                "Lead. {}{}",
                "${a ? `".repeat(500_000),
                tail.repeat(500_000)
            );
            let mut out = Vec::new();
            static_pieces(&text, &mut out);
            assert_eq!(out, ["Lead. "]);
        }
    }
}
