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

/// Most definitions followed from one schema: a bound on cycles and chains.
const MAX_DEPTH: u32 = 48;

pub struct Schemas<'a> {
    pub ci: &'a CodeIndex,
    pub ev: Evaluator<'a>,
    defs: HashMap<(usize, String), Option<Rc<Def>>>,
    kinds: HashMap<(usize, String), Option<String>>,
    memo: HashMap<(usize, String), Option<S>>,
    depth: u32,
}

impl<'a> Schemas<'a> {
    pub fn new(ci: &'a CodeIndex) -> Schemas<'a> {
        Schemas {
            ci,
            ev: Evaluator::new(ci),
            defs: HashMap::new(),
            kinds: HashMap::new(),
            memo: HashMap::new(),
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
                self.binding_schema(m, &i.sym)
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
        let s = self.schema(d.m, &d.expr, d.base, &[]);
        self.memo.insert(key, s.clone());
        s
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
                if let Some(kind) = self.function_kind(m, &f.sym) {
                    return self.construct(&kind, m, &args, base, locals);
                }
                // Not a constructor: a wrapper (a lazy memo, a preprocess
                // step) around a schema it is given, or a getter returning
                // one.
                for a in args.iter().rev() {
                    if let Some(s) = self.schema(m, a, base, locals) {
                        return Some(s);
                    }
                }
                // A function building a schema (its parameters, e.g.
                // descriptions, left unknown), or a lazy binding.
                let d = self.def(m, &f.sym)?;
                if let Some((rs, inner)) = fn_returns_all(&d.expr) {
                    let (dm, db) = (d.m, d.base);
                    return self.choice(dm, &rs, db, &inner);
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

    /// Add the properties of a shape (an object literal of schemas, with
    /// spreads of other shapes) to an object schema.
    fn add_shape(&mut self, s: &mut S, m: usize, shape: &Expr, base: u32, locals: &Locals) {
        match strip_parens(shape) {
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
                            let p = self.schema(m, v, base, locals).unwrap_or_default();
                            set_property(s, key, p);
                        }
                    }
                }
            }
            Expr::Ident(i) if !locals.iter().any(|(k, _)| k == &*i.sym) => {
                if let Some(d) = self.def(m, &i.sym) {
                    self.depth += 1;
                    if self.depth <= MAX_DEPTH {
                        self.add_shape(s, d.m, &d.expr, d.base, &[]);
                    }
                    self.depth -= 1;
                }
            }
            e => {
                // A function returning a shape, or another object schema
                // whose properties are spread in.
                if let Expr::Call(c) = e
                    && let Callee::Expr(f) = &c.callee
                    && let Expr::Ident(f) = &**f
                    && c.args.is_empty()
                    && self.function_kind(m, &f.sym).is_none()
                    && let Some(d) = self.def(m, &f.sym)
                    && let Some((r, inner)) = fn_returns(&d.expr)
                    && matches!(strip_parens(r), Expr::Object(_))
                {
                    self.depth += 1;
                    if self.depth <= MAX_DEPTH {
                        self.add_shape(s, d.m, r, d.base, &inner);
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
            "optional" | "nullable" | "nullish" | "default" | "prefault" | "describe" | "meta" => {
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
                if let Some(d) = arg0.and_then(|a| self.string(m, a, base)) {
                    s.json.insert("description".into(), d.into());
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
    let req_b: Vec<J> = b
        .json
        .get("required")
        .and_then(J::as_array)
        .cloned()
        .unwrap_or_default();
    let mut s = a.clone();
    merge_properties(&mut s, &b);
    // Required in both branches only.
    let req_a: Vec<J> = a
        .json
        .get("required")
        .and_then(J::as_array)
        .cloned()
        .unwrap_or_default();
    let both: Vec<J> = req_a.into_iter().filter(|k| req_b.contains(k)).collect();
    s.json.insert("required".into(), J::Array(both));
    s.optional = a.optional || b.optional;
    s
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
