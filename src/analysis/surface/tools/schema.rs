//! A JSON Schema reconstructed statically from a validator built with a
//! zod-style API: constructor calls (`string()`, `object({…})`,
//! `enum([…])` …) refined by method chains (`.optional()`,
//! `.default(x)`, `.describe(s)` …).
//!
//! Method names of a chain are the library's API and survive minification;
//! constructors are either members of a namespace (`z.string()`, same) or
//! bare imported functions with minified names. A bare constructor is
//! recognised by what it builds, never by its name: the `type` its class
//! reports (`get type(){return "string"}`), the `type` of the definition it
//! passes (`new C({type: "object", …})`), or the class name a zod-style
//! constructor registers (`"ZodString"`).

use super::assemble::{Seg, Text};
use super::objects::{fn_returns, fn_returns_all, key_name};
use crate::analysis::eval::{Evaluator, Value, parse_snippet};
use crate::js::code::CodeIndex;
use crate::js::index::DefKind;
use serde_json::{Map, Value as J, json};
use std::collections::HashMap;
use std::rc::Rc;
use swc_common::Spanned;
use swc_ecma_ast::*;

/// A definition's value, parsed.
pub struct Def {
    pub m: usize,
    pub base: u32,
    pub expr: Box<Expr>,
}

/// A schema being built: its JSON, and whether the property holding it may
/// be left out (`.optional()`, `.default(…)`).
#[derive(Clone, Debug, Default)]
pub struct S {
    pub json: Map<String, J>,
    pub optional: bool,
}

impl S {
    fn of(json: J) -> S {
        S {
            json: json.as_object().cloned().unwrap_or_default(),
            optional: false,
        }
    }
}

/// Local bindings of a getter (`let e = …; return …`), by name.
pub type Locals<'e> = [(String, &'e Expr)];

/// The methods that say how a value may be left out and what it means,
/// not what it is (see [`Schemas::annotate`]).
const ANNOTATIONS: [&str; 7] = [
    "optional", "nullable", "nullish", "default", "prefault", "describe", "meta",
];

/// Most definitions followed from one schema: a bound on cycles and chains.
const MAX_DEPTH: u32 = 48;

pub struct Schemas<'a> {
    pub ci: &'a CodeIndex,
    pub ev: Evaluator<'a>,
    defs: HashMap<(usize, String), Option<Rc<Def>>>,
    kinds: HashMap<(usize, String), Option<String>>,
    memo: HashMap<(usize, String), Option<S>>,
    /// The names a function being built binds (its parameters, bound to
    /// the schemas of the arguments it was called with, and its other
    /// locals, unknown), innermost last: only the innermost applies, so a
    /// definition evaluated from inside never sees a caller's names.
    scopes: Vec<Scope>,
    depth: u32,
}

/// Names bound in a function's body: to a schema, or shadowing a binding
/// of the module with a value unknown here (`None`).
type Scope = HashMap<String, Option<S>>;

impl<'a> Schemas<'a> {
    pub fn new(ci: &'a CodeIndex) -> Schemas<'a> {
        Schemas {
            ci,
            ev: Evaluator::new(ci),
            defs: HashMap::new(),
            kinds: HashMap::new(),
            memo: HashMap::new(),
            scopes: Vec::new(),
            depth: 0,
        }
    }

    /// The parsed value of the top-level binding `name` of module `m`,
    /// following imports.
    pub fn def(&mut self, m: usize, name: &str) -> Option<Rc<Def>> {
        let key = (m, name.to_string());
        if let Some(d) = self.defs.get(&key) {
            return d.clone();
        }
        self.defs.insert(key.clone(), None);
        let d = self.def_uncached(m, name, 0).map(Rc::new);
        self.defs.insert(key, d.clone());
        d
    }

    fn def_uncached(&self, m: usize, name: &str, hops: u32) -> Option<Def> {
        let module = &self.ci.modules[m];
        let defs = module.index.definitions.get(name)?;
        if defs.iter().any(|d| d.kind == DefKind::Import) {
            if hops > 16 {
                return None;
            }
            let (t, local) = self.ci.follow_import(m, name)?;
            return self.def_uncached(t, local, hops + 1);
        }
        // The outermost definition with a value is the binding's own.
        let nesting = |d: &&crate::js::index::Definition| {
            let mut n = 0;
            let mut f = d.in_function;
            while let Some(id) = f {
                n += 1;
                f = module.index.functions[id as usize].parent;
            }
            n
        };
        let d = defs
            .iter()
            .filter(|d| d.kind != DefKind::Param && d.value.is_some())
            .min_by_key(nesting)?;
        let (lo, hi) = d.value?;
        let text = module.source().get(lo as usize..hi as usize)?;
        if matches!(d.kind, DefKind::Function | DefKind::Class) {
            let expr = parse_snippet(&format!("({text})")).ok()?;
            Some(Def {
                m,
                base: lo.saturating_sub(1),
                expr,
            })
        } else {
            let expr = parse_snippet(text).ok()?;
            Some(Def { m, base: lo, expr })
        }
    }

    /// Evaluate `e` to a value when it is static.
    pub fn value(&mut self, m: usize, e: &Expr, base: u32) -> Option<Value> {
        self.ev.eval(m, e, base, &Vec::new()).ok()
    }

    fn string(&mut self, m: usize, e: &Expr, base: u32) -> Option<String> {
        match self.value(m, e, base)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A description's text: static, or assembled at run time from static
    /// pieces (`.describe("A" + (flag() ? " B" : ""))`, a template): each
    /// test and each unknown part a numbered hole, as in an assembled
    /// prompt, so every piece is read. `None` when no piece is static.
    fn described(&mut self, m: usize, e: &Expr, base: u32, holes: &mut u32) -> Option<Text> {
        if let Some(t) = self.string(m, e, base) {
            return Some(vec![Seg::Lit(t)]);
        }
        let hole = |holes: &mut u32| {
            *holes += 1;
            format!("v{holes}")
        };
        let text = match strip_parens(e) {
            Expr::Cond(c) => {
                let name = hole(holes);
                let a = self.described(m, &c.cons, base, holes)?;
                let b = self.described(m, &c.alt, base, holes)?;
                vec![Seg::Cond(name, a, b)]
            }
            Expr::Bin(b) if b.op == BinaryOp::Add => {
                let l = self.described(m, &b.left, base, holes);
                let r = self.described(m, &b.right, base, holes);
                if l.is_none() && r.is_none() {
                    return None;
                }
                let mut t = l.unwrap_or_else(|| vec![Seg::Hole(hole(holes))]);
                t.extend(r.unwrap_or_else(|| vec![Seg::Hole(hole(holes))]));
                t
            }
            Expr::Tpl(tpl) => {
                let mut t = Vec::new();
                for (i, q) in tpl.quasis.iter().enumerate() {
                    let cooked = q.cooked.as_ref()?.to_string_lossy().into_owned();
                    t.push(Seg::Lit(cooked));
                    if let Some(x) = tpl.exprs.get(i) {
                        let part = self.described(m, x, base, holes);
                        t.extend(part.unwrap_or_else(|| vec![Seg::Hole(hole(holes))]));
                    }
                }
                t
            }
            _ => return None,
        };
        Some(text)
    }

    /// The schema `e` builds, when it is a validator.
    pub fn schema(&mut self, m: usize, e: &Expr, base: u32, locals: &Locals) -> Option<S> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let r = crate::js::depth::guard(|| self.schema_node(m, e, base, locals));
        self.depth -= 1;
        r
    }

    fn schema_node(&mut self, m: usize, e: &Expr, base: u32, locals: &Locals) -> Option<S> {
        match e {
            Expr::Paren(p) => self.schema(m, &p.expr, base, locals),
            Expr::Seq(s) => self.schema(m, s.exprs.last()?, base, locals),
            Expr::Ident(i) => {
                // A local: its value, in the scope of the locals before it.
                if let Some(ix) = locals.iter().rposition(|(k, _)| k == &*i.sym) {
                    return self.schema(m, locals[ix].1, base, &locals[..ix]);
                }
                if let Some(bound) = self.bound_name(&i.sym) {
                    return bound;
                }
                self.binding_schema(m, &i.sym)
            }
            // `X.shape` is X's shape (spread into another object), and
            // `X.shape.key` one property of it, optional as it is there.
            Expr::Member(mem) => {
                let MemberProp::Ident(prop) = &mem.prop else {
                    return None;
                };
                if &*prop.sym == "shape" {
                    return self
                        .schema(m, &mem.obj, base, locals)
                        .filter(|s| s.json.contains_key("properties"));
                }
                let Expr::Member(shape) = strip_parens(&mem.obj) else {
                    return None;
                };
                if !matches!(&shape.prop, MemberProp::Ident(p) if &*p.sym == "shape") {
                    return None;
                }
                let whole = self.schema(m, &shape.obj, base, locals)?;
                property_of(&whole, &prop.sym)
            }
            Expr::Cond(c) => {
                // A schema chosen at run time (a flag, a setting): both
                // branches' properties, required where both require them.
                if let Some(v) = self.value(m, &c.test, base) {
                    let branch = if v.truthy() { &c.cons } else { &c.alt };
                    return self.schema(m, branch, base, locals);
                }
                let a = self.schema(m, &c.cons, base, locals);
                let b = self.schema(m, &c.alt, base, locals);
                match (a, b) {
                    (Some(a), Some(b)) => Some(merge_branches(a, b)),
                    (a, b) => a.or(b),
                }
            }
            Expr::Arrow(_) | Expr::Fn(_) => {
                let (rs, inner) = fn_returns_all(e)?;
                self.choice(m, &rs, base, &inner)
            }
            Expr::Call(call) => self.call_schema(m, call, base, locals),
            Expr::New(n) => {
                let Expr::Ident(c) = &*n.callee else {
                    return None;
                };
                let kind = self.class_type(m, &c.sym, 0)?;
                let args: Vec<&Expr> = n
                    .args
                    .iter()
                    .flatten()
                    .map(|a| &*a.expr)
                    .collect::<Vec<_>>();
                self.construct(&kind, m, &args, base, locals)
            }
            _ => None,
        }
    }

    /// One of several schemas, chosen at run time: see [`merge_branches`].
    pub fn choice(&mut self, m: usize, rs: &[&Expr], base: u32, locals: &Locals) -> Option<S> {
        let mut out: Option<S> = None;
        for r in rs {
            if let Some(s) = self.schema(m, r, base, locals) {
                out = Some(match out {
                    Some(o) => merge_branches(o, s),
                    None => s,
                });
            }
        }
        out
    }

    fn binding_schema(&mut self, m: usize, name: &str) -> Option<S> {
        let key = (m, name.to_string());
        if let Some(s) = self.memo.get(&key) {
            return s.clone();
        }
        self.memo.insert(key.clone(), None);
        let d = self.def(m, name)?;
        let s = self.in_scope(Scope::new(), |me| me.schema(d.m, &d.expr, d.base, &[]));
        self.memo.insert(key, s.clone());
        s
    }

    /// What the innermost function being built binds `name` to, if it
    /// binds it.
    fn bound_name(&self, name: &str) -> Option<Option<S>> {
        self.scopes.last()?.get(name).cloned()
    }

    /// Run `f` with `scope` as the innermost function's names.
    fn in_scope<R>(&mut self, scope: Scope, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scopes.push(scope);
        let r = f(self);
        self.scopes.pop();
        r
    }

    /// The schema a function builds when called with `args`: its
    /// parameters bound to the arguments' schemas (`function q(opt) {
    /// return object({…, options: array(opt)}) }` called as `q(base())`).
    fn built_by(&mut self, m: usize, name: &str, args: &[Option<S>]) -> Option<S> {
        let d = self.def(m, name)?;
        let scope = call_scope(&d.expr, args.to_vec())?;
        let (rs, inner) = fn_returns_all(&d.expr)?;
        // Not a function returning `new C({type, …})`, a constructor of
        // the library read by its arguments (a record's value, a pipe's
        // input), nor one returning a closure (a lazy memo).
        let library_or_memo = |r: &&Expr| {
            let r = match strip_parens(r) {
                Expr::Seq(q) => q.exprs.last().map_or(*r, |x| strip_parens(x)),
                r => r,
            };
            matches!(r, Expr::New(_) | Expr::Arrow(_) | Expr::Fn(_))
        };
        if rs.iter().any(library_or_memo) {
            return None;
        }
        let (dm, db) = (d.m, d.base);
        self.in_scope(scope, |me| me.choice(dm, &rs, db, &inner))
    }

    fn call_schema(&mut self, m: usize, call: &CallExpr, base: u32, locals: &Locals) -> Option<S> {
        let Callee::Expr(callee) = &call.callee else {
            return None;
        };
        let args: Vec<&Expr> = call.args.iter().map(|a| &*a.expr).collect();
        match &**callee {
            Expr::Member(mem) => {
                let MemberProp::Ident(method) = &mem.prop else {
                    return None;
                };
                let method = method.sym.to_string();
                // `x.array()`, `x.optional()`: a method of a schema, or a
                // constructor of a namespace (`z.array(x)`).
                if let Some(inner) = self.schema(m, &mem.obj, base, locals) {
                    return Some(self.chain(inner, &method, m, &args, base, locals));
                }
                if is_constructor(&method) && namespace_like(&mem.obj) {
                    return self.construct(&method, m, &args, base, locals);
                }
                None
            }
            Expr::Ident(f) => {
                if let Some(ix) = locals.iter().rposition(|(k, _)| k == &*f.sym) {
                    // A local holding a schema called as a lazy getter.
                    return self.schema(m, locals[ix].1, base, &locals[..ix]);
                }
                if let Some(bound) = self.bound_name(&f.sym) {
                    // A parameter holding a schema called as a getter.
                    return bound;
                }
                if let Some(kind) = self.function_kind(m, &f.sym) {
                    return self.construct(&kind, m, &args, base, locals);
                }
                // A function building a schema from its arguments (a
                // question's schema from the schema of its options), or a
                // wrapper handing back the one it is given (a preprocess
                // step): what its body returns, its parameters bound to
                // the arguments.
                let given: Vec<Option<S>> = args
                    .iter()
                    .map(|a| self.schema(m, a, base, locals))
                    .collect();
                if let Some(s) = self.built_by(m, &f.sym, &given) {
                    return Some(s);
                }
                // A wrapper whose body says nothing here (a lazy memo
                // returning a closure over its cache) around a schema it
                // is given.
                if let Some(s) = given.into_iter().rev().flatten().next() {
                    return Some(s);
                }
                if args.is_empty() {
                    return self.binding_schema(m, &f.sym);
                }
                None
            }
            _ => None,
        }
    }

    /// What the constructor function `name` of module `m` builds.
    fn function_kind(&mut self, m: usize, name: &str) -> Option<String> {
        let key = (m, name.to_string());
        if let Some(k) = self.kinds.get(&key) {
            return k.clone();
        }
        self.kinds.insert(key.clone(), None);
        let k = self.function_kind_uncached(m, name);
        self.kinds.insert(key, k.clone());
        k
    }

    fn function_kind_uncached(&mut self, m: usize, name: &str) -> Option<String> {
        let d = self.def(m, name)?;
        let (r, _) = fn_returns(&d.expr)?;
        let r = strip_parens(r);
        match r {
            Expr::New(n) => {
                let args: Vec<&Expr> = n.args.iter().flatten().map(|a| &*a.expr).collect();
                // `new C({type: "object", shape, catchall: …})`
                if let Some(Expr::Object(o)) = args.first().map(|a| strip_parens(a))
                    && let Some(super::objects::Member::Value(t)) =
                        super::objects::member(o, "type")
                    && let Expr::Lit(Lit::Str(s)) = t
                {
                    let t = s.value.to_string_lossy().into_owned();
                    let strict = o.props.iter().any(|p| {
                        matches!(p, PropOrSpread::Prop(p) if matches!(&**p,
                            Prop::KeyValue(kv) if key_name(&kv.key).as_deref() == Some("catchall")
                                && !matches!(&*kv.value, Expr::Unary(_))))
                    });
                    return Some(if t == "object" && strict {
                        "strictObject".into()
                    } else {
                        t
                    });
                }
                let Expr::Ident(c) = &*n.callee else {
                    return None;
                };
                let t = self.class_type(d.m, &c.sym, 0)?;
                // `new Obj(shape, new Never, params)`: extra keys refused.
                if t == "object"
                    && matches!(args.get(1).map(|a| strip_parens(a)), Some(Expr::New(_)))
                {
                    return Some("strictObject".into());
                }
                Some(t)
            }
            // `return build(ZodString, params)`
            Expr::Call(c) => c.args.iter().find_map(|a| match &*a.expr {
                Expr::Ident(i) => self.zod_class(d.m, &i.sym),
                _ => None,
            }),
            _ => None,
        }
    }

    /// The `type` a class reports (`get type(){return "string"}`), looked
    /// up its `extends` chain; or the class name a zod-style constructor
    /// registers.
    fn class_type(&mut self, m: usize, name: &str, hops: u32) -> Option<String> {
        if hops > 12 {
            return None;
        }
        let d = self.def(m, name)?;
        let Expr::Class(c) = strip_parens(&d.expr) else {
            return self.zod_class(m, name);
        };
        for member in &c.class.body {
            if let ClassMember::Method(cm) = member
                && cm.kind == MethodKind::Getter
                && key_name(&cm.key).as_deref() == Some("type")
                && let Some(body) = &cm.function.body
                && let Some((Expr::Lit(Lit::Str(s)), _)) = super::objects::returned(body)
            {
                return Some(s.value.to_string_lossy().into_owned());
            }
        }
        let Some(sup) = &c.class.super_class else {
            return None;
        };
        let Expr::Ident(s) = &**sup else {
            return None;
        };
        let (dm, sup) = (d.m, s.sym.to_string());
        self.class_type(dm, &sup, hops + 1)
    }

    /// `X = $constructor("ZodString", …)`: the kind named.
    fn zod_class(&mut self, m: usize, name: &str) -> Option<String> {
        let d = self.def(m, name)?;
        let Expr::Call(c) = strip_parens(&d.expr) else {
            return None;
        };
        let Some(Expr::Lit(Lit::Str(s))) = c.args.first().map(|a| &*a.expr) else {
            return None;
        };
        let s = s.value.to_string_lossy();
        let rest = s.strip_prefix("Zod")?;
        let mut ch = rest.chars();
        let first = ch.next()?;
        if !first.is_ascii_uppercase() {
            return None;
        }
        Some(format!("{}{}", first.to_ascii_lowercase(), ch.as_str()))
    }

    /// The schema a constructor of `kind` builds from `args`.
    fn construct(
        &mut self,
        kind: &str,
        m: usize,
        args: &[&Expr],
        base: u32,
        locals: &Locals,
    ) -> Option<S> {
        let arg = |i: usize| args.get(i).copied();
        Some(match kind {
            "string" | "number" | "boolean" | "null" | "bigint" => S::of(json!({"type": kind})),
            "int" | "integer" => S::of(json!({"type": "integer"})),
            "date" => S::of(json!({"type": "string", "format": "date-time"})),
            "any" | "unknown" | "custom" | "instanceof" | "never" | "undefined" | "void" => {
                S::default()
            }
            "object" | "strictObject" | "looseObject" => {
                let mut s = S::of(json!({"type": "object", "properties": {}}));
                if let Some(shape) = arg(0) {
                    self.add_shape(&mut s, m, shape, base, locals);
                }
                if kind == "strictObject" {
                    s.json.insert("additionalProperties".into(), J::Bool(false));
                }
                s
            }
            "array" => {
                let items = arg(0)
                    .and_then(|a| self.schema(m, a, base, locals))
                    .map_or(json!({}), |s| J::Object(s.json));
                S::of(json!({"type": "array", "items": items}))
            }
            "enum" | "nativeEnum" => {
                let v = self.value(m, arg(0)?, base)?;
                let vals: Vec<J> = match v {
                    Value::Array(a) => a.iter().map(Value::to_json).collect(),
                    Value::Object(p) => p.iter().map(|(_, v)| v.to_json()).collect(),
                    _ => return None,
                };
                let mut s = S::of(json!({"enum": vals}));
                if vals.iter().all(J::is_string) {
                    s.json.insert("type".into(), "string".into());
                }
                s
            }
            "literal" => match self.value(m, arg(0)?, base)? {
                Value::Array(a) => {
                    S::of(json!({"enum": a.iter().map(Value::to_json).collect::<Vec<_>>()}))
                }
                v => S::of(json!({"const": v.to_json()})),
            },
            "union" | "discriminatedUnion" | "xor" => {
                let list = args.iter().rev().find_map(|a| match strip_parens(a) {
                    Expr::Array(arr) => Some(arr),
                    _ => None,
                })?;
                let any: Vec<J> = list
                    .elems
                    .iter()
                    .flatten()
                    .map(|el| {
                        self.schema(m, &el.expr, base, locals)
                            .map_or(json!({}), |s| J::Object(s.json))
                    })
                    .collect();
                S::of(json!({"anyOf": any}))
            }
            "record" => {
                let v = args
                    .last()
                    .and_then(|a| self.schema(m, a, base, locals))
                    .map_or(json!({}), |s| J::Object(s.json));
                S::of(json!({"type": "object", "additionalProperties": v}))
            }
            "tuple" => {
                let Expr::Array(arr) = strip_parens(arg(0)?) else {
                    return None;
                };
                let items: Vec<J> = arr
                    .elems
                    .iter()
                    .flatten()
                    .map(|el| {
                        self.schema(m, &el.expr, base, locals)
                            .map_or(json!({}), |s| J::Object(s.json))
                    })
                    .collect();
                S::of(json!({"type": "array", "prefixItems": items}))
            }
            "intersection" => {
                let all: Vec<J> = args
                    .iter()
                    .filter_map(|a| self.schema(m, a, base, locals))
                    .map(|s| J::Object(s.json))
                    .collect();
                S::of(json!({"allOf": all}))
            }
            "optional" | "nullable" | "nullish" => {
                let inner = self.schema(m, arg(0)?, base, locals)?;
                self.chain(inner, kind, m, &[], base, locals)
            }
            // Wrappers around the schema they are given (preprocess, pipe,
            // lazy, default, catch …): the input is the given schema.
            _ => {
                return args
                    .iter()
                    .rev()
                    .find_map(|a| self.schema(m, a, base, locals));
            }
        })
    }

    /// A property's schema; when its base is not known here (an enum of
    /// values imported from elsewhere), what its chain still says — that
    /// it is optional, its description — on an unknown schema.
    fn property(&mut self, m: usize, e: &Expr, base: u32, locals: &Locals) -> S {
        if let Some(s) = self.schema(m, e, base, locals) {
            return s;
        }
        if let Expr::Call(call) = strip_parens(e)
            && let Callee::Expr(callee) = &call.callee
            && let Expr::Member(mem) = &**callee
            && let MemberProp::Ident(method) = &mem.prop
            && ANNOTATIONS.contains(&&*method.sym)
        {
            let inner = self.property(m, &mem.obj, base, locals);
            let args: Vec<&Expr> = call.args.iter().map(|a| &*a.expr).collect();
            return self.chain(inner, &method.sym, m, &args, base, locals);
        }
        S::default()
    }

    /// Add the properties of a shape (an object literal of schemas, with
    /// spreads of other shapes) to an object schema.
    fn add_shape(&mut self, s: &mut S, m: usize, shape: &Expr, base: u32, locals: &Locals) {
        match strip_parens(shape) {
            // Properties present only when a flag holds (`...flag() && {…}`,
            // `...(flag() ? {…} : {…})`): there, but never required.
            Expr::Bin(b) if b.op == BinaryOp::LogicalAnd => {
                let mut part = S::default();
                self.add_shape(&mut part, m, &b.right, base, locals);
                merge_optional(s, part);
            }
            Expr::Cond(c) => {
                for branch in [&c.cons, &c.alt] {
                    let mut part = S::default();
                    self.add_shape(&mut part, m, branch, base, locals);
                    merge_optional(s, part);
                }
            }
            Expr::Object(o) => {
                for p in &o.props {
                    match p {
                        PropOrSpread::Spread(sp) => {
                            self.add_shape(s, m, &sp.expr, base, locals);
                        }
                        PropOrSpread::Prop(p) => {
                            let (key, v): (Option<String>, &Expr) = match &**p {
                                Prop::KeyValue(kv) => {
                                    let k = match &kv.key {
                                        PropName::Computed(c) => self.string(m, &c.expr, base),
                                        k => key_name(k),
                                    };
                                    (k, &kv.value)
                                }
                                _ => continue,
                            };
                            let Some(key) = key else {
                                continue;
                            };
                            let p = self.property(m, v, base, locals);
                            set_property(s, key, p);
                        }
                    }
                }
            }
            Expr::Ident(i) if !locals.iter().any(|(k, _)| k == &*i.sym) => {
                if let Some(d) = self.def(m, &i.sym) {
                    self.depth += 1;
                    if self.depth <= MAX_DEPTH {
                        self.in_scope(Scope::new(), |me| {
                            me.add_shape(s, d.m, &d.expr, d.base, &[])
                        });
                    }
                    self.depth -= 1;
                }
            }
            e => {
                // A function returning a shape (its parameters, flags
                // choosing properties, bound to what the arguments build),
                // or another object schema whose properties are spread in.
                if let Expr::Call(c) = e
                    && let Callee::Expr(f) = &c.callee
                    && let Expr::Ident(f) = &**f
                    && self.function_kind(m, &f.sym).is_none()
                    && let Some(d) = self.def(m, &f.sym)
                    && let Some((r, inner)) = fn_returns(&d.expr)
                    && matches!(strip_parens(r), Expr::Object(_))
                {
                    self.depth += 1;
                    if self.depth <= MAX_DEPTH {
                        let given = c
                            .args
                            .iter()
                            .map(|a| self.schema(m, &a.expr, base, locals))
                            .collect();
                        if let Some(scope) = call_scope(&d.expr, given) {
                            self.in_scope(scope, |me| me.add_shape(s, d.m, r, d.base, &inner));
                        }
                    }
                    self.depth -= 1;
                    return;
                }
                if let Some(other) = self.schema(m, e, base, locals) {
                    merge_properties(s, &other);
                }
            }
        }
    }

    /// Apply the chained method `method(args)` to `s`.
    fn chain(
        &mut self,
        mut s: S,
        method: &str,
        m: usize,
        args: &[&Expr],
        base: u32,
        locals: &Locals,
    ) -> S {
        let arg0 = args.first().copied();
        let ty = s.json.get("type").and_then(J::as_str).map(str::to_string);
        match method {
            a if ANNOTATIONS.contains(&a) => {
                self.annotate(&mut s, method, ty.as_deref(), m, arg0, base);
            }
            "int" => {
                s.json.insert("type".into(), "integer".into());
            }
            "min" | "max" | "gte" | "lte" | "gt" | "lt" | "length" | "positive" | "nonnegative"
            | "negative" | "nonpositive" => {
                self.bound(&mut s, method, ty.as_deref(), m, arg0, base);
            }
            "url" | "email" | "uuid" | "datetime" | "date" | "ipv4" | "ipv6" | "base64" => {
                s.json.insert(
                    "format".into(),
                    match method {
                        "url" => "uri",
                        "datetime" => "date-time",
                        other => other,
                    }
                    .into(),
                );
            }
            "array" => {
                let optional = s.optional;
                s = S::of(json!({"type": "array", "items": J::Object(s.json)}));
                s.optional = optional;
            }
            "or" | "and" | "extend" | "safeExtend" | "augment" | "merge" | "strict"
            | "passthrough" | "loose" | "partial" | "required" | "omit" | "pick" => {
                s = self.reshape(s, method, m, arg0, base, locals);
            }
            // Refinements and output-side steps leave the input as it is.
            _ => {}
        }
        s
    }

    /// Whether the value may be absent or null, its default, its
    /// description (`.optional()`, `.nullable()`, `.default(x)`,
    /// `.describe("…")`, `.meta({description})`…).
    fn annotate(
        &mut self,
        s: &mut S,
        method: &str,
        ty: Option<&str>,
        m: usize,
        arg0: Option<&Expr>,
        base: u32,
    ) {
        match method {
            "optional" => s.optional = true,
            "nullable" | "nullish" => {
                if let Some(t) = ty {
                    s.json.insert("type".into(), json!([t, "null"]));
                }
                if method == "nullish" {
                    s.optional = true;
                }
            }
            "default" | "prefault" => {
                if let Some(v) = arg0.and_then(|a| self.value(m, a, base)) {
                    // `.default(() => x)`: the value is computed at run time.
                    if !matches!(v, Value::Func(_)) {
                        s.json.insert("default".into(), v.to_json());
                    }
                }
                s.optional = true;
            }
            "describe" => {
                let mut holes = 0;
                if let Some(d) = arg0.and_then(|a| self.described(m, a, base, &mut holes)) {
                    s.json
                        .insert("description".into(), super::assemble::render(&d).into());
                }
            }
            "meta" => {
                if let Some(Value::Object(p)) = arg0.and_then(|a| self.value(m, a, base))
                    && let Some((_, Value::Str(d))) = p.iter().find(|(k, _)| k == "description")
                {
                    s.json.insert("description".into(), d.clone().into());
                }
            }
            _ => {}
        }
    }

    /// A bound (`.min(n)`, `.max(n)`, `.length(n)`, `.positive()`…): on a
    /// string's length, an array's items, else the number itself.
    fn bound(
        &mut self,
        s: &mut S,
        method: &str,
        ty: Option<&str>,
        m: usize,
        arg0: Option<&Expr>,
        base: u32,
    ) {
        let n = arg0.and_then(|a| self.value(m, a, base));
        let n = match n {
            Some(Value::Num(n)) => Some(n),
            _ => None,
        };
        let keys: &[&str] = match (ty, method) {
            (Some("string"), "min") => &["minLength"],
            (Some("string"), "max") => &["maxLength"],
            (Some("string"), "length") => &["minLength", "maxLength"],
            (Some("array"), "min") => &["minItems"],
            (Some("array"), "max") => &["maxItems"],
            (Some("array"), "length") => &["minItems", "maxItems"],
            (_, "min" | "gte") => &["minimum"],
            (_, "max" | "lte") => &["maximum"],
            (_, "gt") => &["exclusiveMinimum"],
            (_, "lt") => &["exclusiveMaximum"],
            (_, "positive") => {
                s.json.insert("exclusiveMinimum".into(), 0.into());
                &[]
            }
            (_, "nonnegative") => {
                s.json.insert("minimum".into(), 0.into());
                &[]
            }
            _ => &[],
        };
        if let Some(n) = n.and_then(serde_json::Number::from_f64) {
            for k in keys {
                s.json.insert((*k).into(), J::Number(n.clone()));
            }
        }
    }

    /// An object schema combined or cut (`.or(o)`, `.extend({…})`,
    /// `.merge(o)`, `.strict()`, `.partial()`, `.pick({…})`…).
    fn reshape(
        &mut self,
        mut s: S,
        method: &str,
        m: usize,
        arg0: Option<&Expr>,
        base: u32,
        locals: &Locals,
    ) -> S {
        match method {
            "or" => {
                if let Some(o) = arg0.and_then(|a| self.schema(m, a, base, locals)) {
                    s = S {
                        json: json!({"anyOf": [J::Object(s.json), J::Object(o.json)]})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                        optional: s.optional || o.optional,
                    };
                }
            }
            "and" | "merge" => {
                if let Some(o) = arg0.and_then(|a| self.schema(m, a, base, locals)) {
                    merge_properties(&mut s, &o);
                }
            }
            "extend" | "safeExtend" | "augment" => {
                if let Some(a) = arg0 {
                    self.add_shape(&mut s, m, a, base, locals);
                }
            }
            "strict" => {
                s.json.insert("additionalProperties".into(), J::Bool(false));
            }
            "passthrough" | "loose" => {
                s.json.remove("additionalProperties");
            }
            "partial" => {
                s.json.remove("required");
            }
            "required" => {
                if let Some(p) = s.json.get("properties").and_then(J::as_object) {
                    let all: Vec<J> = p.keys().map(|k| J::String(k.clone())).collect();
                    s.json.insert("required".into(), J::Array(all));
                }
            }
            "omit" | "pick" => {
                let mask: Vec<String> = match arg0.and_then(|a| self.value(m, a, base)) {
                    Some(Value::Object(p)) => p.into_iter().map(|(k, _)| k).collect(),
                    Some(Value::Array(a)) => a
                        .into_iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                };
                let keep = |k: &str| (method == "pick") == mask.iter().any(|x| x == k);
                if let Some(J::Object(p)) = s.json.get_mut("properties") {
                    p.retain(|k, _| keep(k));
                }
                if let Some(J::Array(r)) = s.json.get_mut("required") {
                    r.retain(|k| k.as_str().is_some_and(keep));
                }
            }
            _ => {}
        }
        s
    }
}

/// Property `key` of an object schema, optional as it is there.
fn property_of(s: &S, key: &str) -> Option<S> {
    let p = s.json.get("properties")?.get(key)?;
    let required = s
        .json
        .get("required")
        .and_then(J::as_array)
        .is_some_and(|r| r.iter().any(|k| k.as_str() == Some(key)));
    Some(S {
        json: p.as_object().cloned().unwrap_or_default(),
        optional: !required,
    })
}

/// The names a function binds when called with arguments building
/// `given`: each parameter the schema of its argument, the other names its
/// body declares unknown (they shadow the module's).
fn call_scope(f: &Expr, given: Vec<Option<S>>) -> Option<Scope> {
    let (params, declared) = names_of_function(f)?;
    let mut scope: Scope = declared.into_iter().map(|n| (n, None)).collect();
    let mut given = given.into_iter();
    for p in params {
        scope.insert(p, given.next().flatten());
    }
    Some(scope)
}

/// A function's parameters (plain names, in order; a pattern's place is
/// kept with an empty name) and the other names its body declares, which
/// shadow the module's.
fn names_of_function(e: &Expr) -> Option<(Vec<String>, Vec<String>)> {
    let (params, body): (Vec<&Pat>, Option<&[Stmt]>) = match strip_parens(e) {
        Expr::Arrow(a) => (
            a.params.iter().collect(),
            match &*a.body {
                ArrowFunctionBody::FunctionBody(b) => Some(&b.stmts[..]),
                ArrowFunctionBody::Expr(_) => None,
            },
        ),
        Expr::Fn(f) => (
            f.function.params.iter().map(|p| &p.pat).collect(),
            f.function.body.as_ref().map(|b| &b.stmts[..]),
        ),
        _ => return None,
    };
    let name = super::objects::plain_name;
    let params = params.into_iter().map(name).collect();
    let mut declared = Vec::new();
    for s in body.unwrap_or_default() {
        match s {
            Stmt::Decl(Decl::Var(v)) => declared.extend(v.decls.iter().map(|d| name(&d.name))),
            Stmt::Decl(Decl::Fn(f)) => declared.push(f.ident.sym.to_string()),
            _ => {}
        }
    }
    declared.retain(|n| !n.is_empty());
    Some((params, declared))
}

fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        e => e,
    }
}

/// `x.y(…)` on an identifier or a member: a namespace (`z.string()`,
/// `z.coerce.number()`).
fn namespace_like(e: &Expr) -> bool {
    matches!(strip_parens(e), Expr::Ident(_) | Expr::Member(_))
}

fn is_constructor(method: &str) -> bool {
    matches!(
        method,
        "string"
            | "number"
            | "boolean"
            | "null"
            | "bigint"
            | "int"
            | "date"
            | "any"
            | "unknown"
            | "never"
            | "undefined"
            | "void"
            | "custom"
            | "instanceof"
            | "object"
            | "strictObject"
            | "looseObject"
            | "array"
            | "enum"
            | "nativeEnum"
            | "literal"
            | "union"
            | "discriminatedUnion"
            | "xor"
            | "record"
            | "tuple"
            | "intersection"
            | "optional"
            | "nullable"
            | "nullish"
            | "lazy"
            | "preprocess"
            | "pipe"
    )
}

/// Set property `key` of an object schema, keeping `required` in step.
fn set_property(s: &mut S, key: String, p: S) {
    if let J::Object(props) = s
        .json
        .entry("properties")
        .or_insert_with(|| J::Object(Map::new()))
    {
        props.insert(key.clone(), J::Object(p.json));
    }
    let req = s
        .json
        .entry("required")
        .or_insert_with(|| J::Array(Vec::new()));
    if let J::Array(r) = req {
        r.retain(|k| k.as_str() != Some(&key));
        if !p.optional {
            r.push(J::String(key));
        }
    }
}

/// Add `other`'s properties to `s`, none of them required.
fn merge_optional(s: &mut S, mut other: S) {
    other.json.remove("required");
    merge_properties(s, &other);
}

/// Add `other`'s properties (and their being required) to `s`.
fn merge_properties(s: &mut S, other: &S) {
    let Some(props) = other.json.get("properties").and_then(J::as_object) else {
        return;
    };
    let req: Vec<&str> = other
        .json
        .get("required")
        .and_then(J::as_array)
        .map(|r| r.iter().filter_map(J::as_str).collect())
        .unwrap_or_default();
    for (k, v) in props {
        set_property(
            s,
            k.clone(),
            S {
                json: v.as_object().cloned().unwrap_or_default(),
                optional: !req.contains(&k.as_str()),
            },
        );
    }
}

/// Two schemas either of which applies, decided at run time: one object
/// with the properties of both, required where both require them.
fn merge_branches(a: S, b: S) -> S {
    let is_obj = |s: &S| s.json.contains_key("properties");
    if !(is_obj(&a) && is_obj(&b)) {
        return S {
            optional: a.optional || b.optional,
            json: json!({"anyOf": [J::Object(a.json), J::Object(b.json)]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
    }
    S {
        optional: a.optional || b.optional,
        json: merge_alternatives(a.json, &b.json),
    }
}

/// One schema for two that may each apply: two objects give one with
/// the properties of both (a property of both merged in turn), required
/// where both require it; two arrays, their items merged; two of one
/// type (or of a type unknown here), the keywords of both, the second's
/// winning (its description, bounds); of two schemas of other shapes the
/// second is kept.
fn merge_alternatives(mut a: Map<String, J>, b: &Map<String, J>) -> Map<String, J> {
    let objects = a.contains_key("properties") && b.contains_key("properties");
    let arrays = matches!(
        (a.get("items"), b.get("items")),
        (Some(J::Object(_)), Some(J::Object(_)))
    );
    if !objects && !arrays {
        // Two of one type, or one whose type is not known here (a flag's
        // parameter described in one branch only): the keywords of both.
        let (ta, tb) = (a.get("type"), b.get("type"));
        let alike = ta.is_none() || tb.is_none() || ta == tb;
        if alike && !a.contains_key("anyOf") && !b.contains_key("anyOf") {
            a.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
            return a;
        }
        return b.clone();
    }
    let required = |s: &Map<String, J>| -> Vec<J> {
        s.get("required")
            .and_then(J::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let both_required: Vec<J> = {
        let rb = required(b);
        required(&a)
            .into_iter()
            .filter(|k| rb.contains(k))
            .collect()
    };
    for (k, vb) in b {
        match (a.get_mut(k), vb) {
            (Some(J::Object(pa)), J::Object(pb)) if k == "properties" && objects => {
                for (name, qb) in pb {
                    match (pa.get_mut(name), qb) {
                        (Some(J::Object(qa)), J::Object(qb)) => {
                            let merged = merge_alternatives(std::mem::take(qa), qb);
                            *qa = merged;
                        }
                        _ => {
                            pa.insert(name.clone(), qb.clone());
                        }
                    }
                }
            }
            (Some(J::Object(ia)), J::Object(ib)) if k == "items" && arrays => {
                let merged = merge_alternatives(std::mem::take(ia), ib);
                *ia = merged;
            }
            _ => {
                a.insert(k.clone(), vb.clone());
            }
        }
    }
    if objects {
        a.insert("required".into(), J::Array(both_required));
    }
    a
}

/// The text of `e` as the snippet it was parsed from: a run-time part's
/// source, for notes.
pub fn source_of(ci: &CodeIndex, m: usize, base: u32, e: &Expr) -> String {
    let sp = e.span();
    let lo = (base + sp.lo.0.saturating_sub(1)) as usize;
    let hi = (base + sp.hi.0.saturating_sub(1)) as usize;
    let src = ci.modules[m].source();
    let t = src.get(lo..hi.min(src.len())).unwrap_or("?");
    let t: String = t.chars().take(80).collect();
    t
}
