//! The interpreter over the evaluated subset: each kind of expression,
//! templates, calls of closures and of the few methods understood.

use super::value::{ValueError, json_stringify, member, number_to_string};
use super::{Closure, Env, EvalError, Evaluator, MAX_DEPTH, Value};
use swc_ecma_ast::*;

impl Evaluator<'_> {
    pub(super) fn eval_node(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        env: &Env,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        Ok(match e {
            Expr::Lit(Lit::Str(s)) => Value::Str(s.value.to_string_lossy().into_owned()),
            Expr::Lit(Lit::Num(n)) => Value::Num(n.value),
            Expr::Lit(Lit::Bool(b)) => Value::Bool(b.value),
            Expr::Lit(Lit::Null(_)) => Value::Null,
            Expr::Paren(p) => self.eval(m, &p.expr, base, env)?,
            Expr::Tpl(t) => Value::Str(self.template(m, t, base, env)?),
            Expr::Ident(i) => self.identifier(m, e, base, env, i)?,
            Expr::Array(a) => self.array(m, e, base, env, a)?,
            Expr::Object(o) => self.object(m, e, base, env, o)?,
            Expr::Unary(u) => self.unary(m, e, base, env, u)?,
            Expr::Bin(b) => self.binary(m, e, base, env, b)?,
            Expr::Cond(c) => {
                if self.eval(m, &c.test, base, env)?.truthy() {
                    self.eval(m, &c.cons, base, env)?
                } else {
                    self.eval(m, &c.alt, base, env)?
                }
            }
            Expr::Member(mem) => {
                let obj = self.eval(m, &mem.obj, base, env)?;
                let key = match &mem.prop {
                    MemberProp::Ident(i) => Value::Str(i.sym.to_string()),
                    MemberProp::Computed(c) => self.eval(m, &c.expr, base, env)?,
                    MemberProp::PrivateName(_) => return Err(fail(self, "private member".into())),
                };
                member(&obj, &key).map_err(|r| fail(self, r.to_string()))?
            }
            Expr::Arrow(_) | Expr::Fn(_) => closure_of(m, base, e, env.clone())
                .ok_or_else(|| fail(self, "function with statements".into()))?,
            Expr::Call(call) => self.call(m, e, call, base, env)?,
            Expr::Seq(s) => {
                // `(init(), value)`: lazy-init calls have no value we need.
                let last = s
                    .exprs
                    .last()
                    .ok_or_else(|| fail(self, "empty sequence".into()))?;
                self.eval(m, last, base, env)?
            }
            _ => return Err(fail(self, "expression outside the evaluated subset".into())),
        })
    }

    /// A name: a closure's parameter, `undefined`, or a binding of the module.
    fn identifier(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        env: &Env,
        i: &Ident,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let name = i.sym.as_str();
        if let Some((_, v)) = env.iter().rev().find(|(k, _)| k == name) {
            return Ok(v.clone());
        }
        if name == "undefined" {
            return Ok(Value::Undefined);
        }
        Ok(match self.binding(m, name) {
            Ok(Some(v)) => v,
            Ok(None) => {
                return Err(fail(self, format!("{name} is not defined in this module")));
            }
            Err(reason) => return Err(fail(self, reason.to_string())),
        })
    }

    /// An array literal, spreads included.
    fn array(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        env: &Env,
        a: &ArrayLit,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let mut out = Vec::new();
        for el in a.elems.iter() {
            match el {
                None => out.push(Value::Undefined),
                Some(el) if el.spread.is_some() => match self.eval(m, &el.expr, base, env)? {
                    Value::Array(v) => out.extend(v),
                    other => return Err(fail(self, format!("spread of {other:?}"))),
                },
                Some(el) => out.push(self.eval(m, &el.expr, base, env)?),
            }
        }
        Ok(Value::Array(out))
    }

    /// An object literal: spreads, key-value pairs (computed keys too) and
    /// shorthands; a later key wins when read.
    fn object(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        env: &Env,
        o: &ObjectLit,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let mut props = Vec::new();
        for p in &o.props {
            match p {
                PropOrSpread::Spread(s) => match self.eval(m, &s.expr, base, env)? {
                    Value::Object(v) => props.extend(v),
                    other => return Err(fail(self, format!("spread of {other:?}"))),
                },
                PropOrSpread::Prop(p) => match &**p {
                    Prop::KeyValue(kv) => {
                        let key = match &kv.key {
                            PropName::Ident(i) => i.sym.to_string(),
                            PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                            PropName::Num(n) => number_to_string(n.value),
                            PropName::Computed(c) => self
                                .eval(m, &c.expr, base, env)?
                                .to_js_string()
                                .map_err(|r| fail(self, r.to_string()))?,
                            _ => return Err(fail(self, "unsupported property key".into())),
                        };
                        props.push((key, self.eval(m, &kv.value, base, env)?));
                    }
                    Prop::Shorthand(i) => {
                        let v = self.eval(m, &Expr::Ident(i.clone()), base, env)?;
                        props.push((i.sym.to_string(), v));
                    }
                    _ => return Err(fail(self, "unsupported object property".into())),
                },
            }
        }
        Ok(Value::Object(props))
    }

    /// `!`, `void`, `-` and `+` on a number.
    fn unary(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        env: &Env,
        u: &UnaryExpr,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let v = self.eval(m, &u.arg, base, env)?;
        Ok(match u.op {
            UnaryOp::Bang => Value::Bool(!v.truthy()),
            UnaryOp::Void => Value::Undefined,
            UnaryOp::Minus => match v {
                Value::Num(n) => Value::Num(-n),
                _ => return Err(fail(self, "unary minus on a non-number".into())),
            },
            UnaryOp::Plus => match v {
                Value::Num(n) => Value::Num(n),
                _ => return Err(fail(self, "unary plus on a non-number".into())),
            },
            _ => return Err(fail(self, format!("operator {:?}", u.op))),
        })
    }

    /// The logical operators (short-circuiting), `+` as JavaScript converts,
    /// arithmetic and strict (in)equality.
    fn binary(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        env: &Env,
        b: &BinExpr,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let l = self.eval(m, &b.left, base, env)?;
        match b.op {
            BinaryOp::LogicalAnd => {
                return if l.truthy() {
                    self.eval(m, &b.right, base, env)
                } else {
                    Ok(l)
                };
            }
            BinaryOp::LogicalOr => {
                return if l.truthy() {
                    Ok(l)
                } else {
                    self.eval(m, &b.right, base, env)
                };
            }
            BinaryOp::NullishCoalescing => {
                return if matches!(l, Value::Null | Value::Undefined) {
                    self.eval(m, &b.right, base, env)
                } else {
                    Ok(l)
                };
            }
            _ => {}
        }
        let r = self.eval(m, &b.right, base, env)?;
        Ok(match (b.op, &l, &r) {
            (BinaryOp::Add, Value::Num(x), Value::Num(y)) => Value::Num(x + y),
            (BinaryOp::Add, _, _) => Value::Str(
                l.to_js_string().map_err(|x| fail(self, x.to_string()))?
                    + &r.to_js_string().map_err(|x| fail(self, x.to_string()))?,
            ),
            (BinaryOp::Sub, Value::Num(x), Value::Num(y)) => Value::Num(x - y),
            (BinaryOp::Mul, Value::Num(x), Value::Num(y)) => Value::Num(x * y),
            (BinaryOp::Div, Value::Num(x), Value::Num(y)) => Value::Num(x / y),
            (BinaryOp::EqEqEq, _, _) => Value::Bool(l == r),
            (BinaryOp::NotEqEq, _, _) => Value::Bool(l != r),
            _ => return Err(fail(self, format!("operator {:?} on these values", b.op))),
        })
    }

    fn template(&mut self, m: usize, t: &Tpl, base: u32, env: &Env) -> Result<String, EvalError> {
        let mut out = String::new();
        for (i, q) in t.quasis.iter().enumerate() {
            let cooked = q.cooked.as_ref().ok_or_else(|| {
                self.err(
                    m,
                    &Expr::Tpl(t.clone()),
                    base,
                    "template part with an invalid escape (no cooked value)",
                )
            })?;
            out.push_str(&cooked.to_string_lossy());
            if let Some(e) = t.exprs.get(i) {
                let v = self.eval(m, e, base, env)?;
                out.push_str(
                    &v.to_js_string()
                        .map_err(|r| self.err(m, e, base, r.to_string()))?,
                );
            }
        }
        Ok(out)
    }

    fn call(
        &mut self,
        m: usize,
        e: &Expr,
        call: &CallExpr,
        base: u32,
        env: &Env,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let Callee::Expr(callee) = &call.callee else {
            return Err(fail(self, "super/import call".into()));
        };
        let mut args = Vec::new();
        for a in &call.args {
            if a.spread.is_some() {
                return Err(fail(self, "spread argument".into()));
            }
            args.push(self.eval(m, &a.expr, base, env)?);
        }
        if let Expr::Member(mem) = &**callee {
            let method = match &mem.prop {
                MemberProp::Ident(i) => i.sym.to_string(),
                _ => return Err(fail(self, "computed method".into())),
            };
            if let Expr::Ident(obj) = &*mem.obj
                && &*obj.sym == "JSON"
                && method == "stringify"
                && !env.iter().any(|(k, _)| k == "JSON")
            {
                let v = args.first().cloned().unwrap_or(Value::Undefined);
                let indent = match args.get(2) {
                    Some(Value::Num(n)) => " ".repeat((*n as usize).min(10)),
                    Some(Value::Str(s)) => s.chars().take(10).collect(),
                    _ => String::new(),
                };
                if args
                    .get(1)
                    .is_some_and(|r| !matches!(r, Value::Null | Value::Undefined))
                {
                    return Err(fail(self, "JSON.stringify with a replacer".into()));
                }
                return Ok(json_stringify(&v, &indent).map_or(Value::Undefined, Value::Str));
            }
            // Report a failing receiver with the whole call (`Math.random()`,
            // not just `Math`), which is what the reader needs to see.
            let obj = self.eval(m, &mem.obj, base, env).map_err(|inner| {
                let outer = self.err(m, e, base, "");
                EvalError {
                    reason: format!("`{}`: {}", inner.expr, inner.reason),
                    ..outer
                }
            })?;
            return self.method(m, e, base, obj, &method, args);
        }
        let f = self.eval(m, callee, base, env)?;
        self.apply(m, e, base, &f, args)
    }

    fn apply(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        f: &Value,
        args: Vec<Value>,
    ) -> Result<Value, EvalError> {
        let Value::Func(c) = f else {
            return Err(self.err(m, e, base, "call of something that is not a function"));
        };
        if self.depth > MAX_DEPTH {
            return Err(self.err(m, e, base, "calls nest too deeply"));
        }
        let mut env = c.env.clone();
        for (i, p) in c.params.iter().enumerate() {
            env.push((p.clone(), args.get(i).cloned().unwrap_or(Value::Undefined)));
        }
        self.depth += 1;
        let r = self.eval(c.module, &c.body, c.base, &env);
        self.depth -= 1;
        r
    }

    fn method(
        &mut self,
        m: usize,
        e: &Expr,
        base: u32,
        obj: Value,
        method: &str,
        args: Vec<Value>,
    ) -> Result<Value, EvalError> {
        let fail = |s: &Self, reason: String| s.err(m, e, base, reason);
        let str_arg =
            |i: usize| -> Option<String> { args.get(i).and_then(|v| v.to_js_string().ok()) };
        let num_arg = |i: usize| -> Option<f64> {
            match args.get(i) {
                Some(Value::Num(n)) => Some(*n),
                _ => None,
            }
        };
        Ok(match (&obj, method) {
            (Value::Array(a), "join") => {
                let sep = match args.first() {
                    None | Some(Value::Undefined) => ",".to_string(),
                    Some(v) => v.to_js_string().map_err(|r| fail(self, r.to_string()))?,
                };
                let parts: Result<Vec<String>, ValueError> = a
                    .iter()
                    .map(|v| match v {
                        Value::Undefined | Value::Null => Ok(String::new()),
                        v => v.to_js_string(),
                    })
                    .collect();
                Value::Str(parts.map_err(|r| fail(self, r.to_string()))?.join(&sep))
            }
            (Value::Array(a), "map" | "filter") => {
                let f = args
                    .first()
                    .cloned()
                    .ok_or_else(|| fail(self, "map without a callback".into()))?;
                let mut out = Vec::new();
                for (i, x) in a.iter().enumerate() {
                    let r = self.apply(
                        m,
                        e,
                        base,
                        &f,
                        vec![x.clone(), Value::Num(i as f64), obj.clone()],
                    )?;
                    if method == "map" {
                        out.push(r);
                    } else if r.truthy() {
                        out.push(x.clone());
                    }
                }
                Value::Array(out)
            }
            (Value::Array(a), "slice") => {
                let len = a.len() as f64;
                let norm = |x: f64| if x < 0.0 { (len + x).max(0.0) } else { x.min(len) } as usize;
                let s = num_arg(0).map_or(0, norm);
                let t = num_arg(1).map_or(a.len(), norm);
                Value::Array(a.get(s..t.max(s)).unwrap_or(&[]).to_vec())
            }
            (Value::Array(a), "concat") => {
                let mut out = a.clone();
                for x in args {
                    match x {
                        Value::Array(v) => out.extend(v),
                        v => out.push(v),
                    }
                }
                Value::Array(out)
            }
            (Value::Str(s), "trim") => Value::Str(s.trim().to_string()),
            (Value::Str(s), "trimEnd") => Value::Str(s.trim_end().to_string()),
            (Value::Str(s), "trimStart") => Value::Str(s.trim_start().to_string()),
            (Value::Str(s), "toUpperCase") => Value::Str(s.to_uppercase()),
            (Value::Str(s), "toLowerCase") => Value::Str(s.to_lowercase()),
            (Value::Str(s), "repeat") => {
                Value::Str(s.repeat(num_arg(0).unwrap_or(0.0).max(0.0) as usize))
            }
            (Value::Str(s), "replaceAll") | (Value::Str(s), "replace")
                if matches!(args.first(), Some(Value::Str(_))) =>
            {
                let (from, to) = (
                    str_arg(0).unwrap_or_default(),
                    str_arg(1).unwrap_or_default(),
                );
                if to.contains('$') {
                    return Err(fail(self, "replacement patterns with $".into()));
                }
                Value::Str(if method == "replace" {
                    s.replacen(&from, &to, 1)
                } else {
                    s.replace(&from, &to)
                })
            }
            (Value::Str(s), "split") => match str_arg(0) {
                Some(sep) if !sep.is_empty() => Value::Array(
                    s.split(sep.as_str())
                        .map(|x| Value::Str(x.to_string()))
                        .collect(),
                ),
                _ => return Err(fail(self, "split without a string separator".into())),
            },
            _ => {
                return Err(fail(
                    self,
                    format!("method .{method}() is outside the evaluated subset"),
                ));
            }
        })
    }
}

/// An arrow or function expression whose body is one returned expression.
pub(super) fn closure_of(m: usize, base: u32, e: &Expr, env: Env) -> Option<Value> {
    let (params, body): (Vec<&Pat>, Box<Expr>) = match e {
        Expr::Paren(p) => {
            return crate::js::depth::guard(|| closure_of(m, base, &p.expr, env));
        }
        Expr::Arrow(a) => (
            a.params.iter().collect(),
            match &*a.body {
                ArrowFunctionBody::Expr(b) => b.clone(),
                ArrowFunctionBody::FunctionBody(b) => single_return(&b.stmts)?,
            },
        ),
        Expr::Fn(f) => (
            f.function.params.iter().map(|p| &p.pat).collect(),
            single_return(&f.function.body.as_ref()?.stmts)?,
        ),
        _ => return None,
    };
    let params = params
        .into_iter()
        .map(|p| match p {
            Pat::Ident(b) => Some(b.id.sym.to_string()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Value::Func(Closure {
        module: m,
        base,
        params,
        body,
        env,
    }))
}

fn single_return(stmts: &[Stmt]) -> Option<Box<Expr>> {
    match stmts {
        [Stmt::Return(ReturnStmt { arg: Some(e), .. })] => Some(e.clone()),
        _ => None,
    }
}
