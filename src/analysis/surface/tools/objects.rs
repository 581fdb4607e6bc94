//! Object literals of a given shape (a tool, a slash command), found without
//! re-parsing whole modules: a cheap text pre-filter finds a key, the
//! smallest definition whose value holds it is re-parsed, and the object
//! literals of that snippet are read.

use crate::analysis::eval::parse_snippet;
use crate::js::code::CodeIndex;
use crate::js::index::DefKind;
use memchr::memmem;
use rayon::prelude::*;
use swc_common::Spanned;
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

/// A definition's value, re-parsed: positions in `expr` are relative to
/// `base` (absolute offset = `base + span.lo - 1`).
pub struct Snippet {
    pub module: usize,
    pub base: u32,
    pub expr: Box<Expr>,
}

impl Snippet {
    /// The module offset of a node of this snippet.
    pub fn offset(&self, n: &impl Spanned) -> u32 {
        self.base + n.span().lo.0.saturating_sub(1)
    }
}

/// A snippet bigger than this is not re-parsed: an object of the kinds
/// looked for sits in a definition of its own, far smaller.
const MAX_SNIPPET: usize = 8 << 20;

/// The shortest of `spans` (sorted) holding `at`. Walks back from the last
/// span starting at or before `at`, and stops once a span starting further
/// back could only be longer: a build has a hundred thousand definitions
/// and a needle hundreds of hits.
fn smallest_around(spans: &[(u32, u32, bool)], at: u32) -> Option<(u32, u32, bool)> {
    let end = spans.partition_point(|&(lo, _, _)| lo <= at);
    let mut best: Option<(u32, u32, bool)> = None;
    for &(lo, hi, wrap) in spans[..end].iter().rev() {
        if best.is_some_and(|(blo, bhi, _)| at - lo >= bhi - blo) {
            break;
        }
        if at < hi && best.is_none_or(|(blo, bhi, _)| hi - lo < bhi - blo) {
            best = Some((lo, hi, wrap));
        }
    }
    best
}

/// Every definition value holding one of `needles` (the smallest holding
/// each hit), re-parsed. Modules are read side by side.
pub fn snippets_with(ci: &CodeIndex, needles: &[&str]) -> Vec<Snippet> {
    ci.modules
        .par_iter()
        .enumerate()
        .flat_map_iter(|(mi, m)| {
            let src = m.source().as_bytes();
            let mut hits: Vec<u32> = needles
                .iter()
                .flat_map(|n| memmem::find_iter(src, n.as_bytes()).map(|o| o as u32))
                .collect();
            if hits.is_empty() {
                return Vec::new();
            }
            hits.sort_unstable();
            // Definitions with a value, as (lo, hi, wrap): a declaration is
            // parsed as an expression in parentheses.
            let mut defs: Vec<(u32, u32, bool)> = m
                .index
                .definitions
                .values()
                .flatten()
                .filter_map(|d| {
                    let (lo, hi) = d.value?;
                    let wrap = matches!(d.kind, DefKind::Function | DefKind::Class);
                    (d.kind != DefKind::Param).then_some((lo, hi, wrap))
                })
                .collect();
            defs.sort_unstable();
            defs.dedup();
            let mut spans: Vec<(u32, u32, bool)> = hits
                .iter()
                .filter_map(|&h| smallest_around(&defs, h))
                .collect();
            spans.sort_unstable();
            spans.dedup();
            spans
                .into_iter()
                .filter(|(lo, hi, _)| ((hi - lo) as usize) <= MAX_SNIPPET)
                .filter_map(|(lo, hi, wrap)| {
                    let text = m.source().get(lo as usize..hi as usize)?;
                    if wrap {
                        let e = parse_snippet(&format!("({text})")).ok()?;
                        Some(Snippet {
                            module: mi,
                            base: lo.saturating_sub(1),
                            expr: e,
                        })
                    } else {
                        let e = parse_snippet(text).ok()?;
                        Some(Snippet {
                            module: mi,
                            base: lo,
                            expr: e,
                        })
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Call `f` on every object literal of `e`.
pub fn each_object(e: &Expr, f: &mut dyn FnMut(&ObjectLit)) {
    struct V<'f>(&'f mut dyn FnMut(&ObjectLit));
    impl Visit for V<'_> {
        fn visit_object_lit(&mut self, n: &ObjectLit) {
            (self.0)(n);
            crate::js::depth::guard(|| n.visit_children_with(self));
        }
    }
    crate::js::depth::with_stack(|| e.visit_with(&mut V(f)));
}

/// A property name as a string, when it is static.
pub fn key_name(k: &PropName) -> Option<String> {
    match k {
        PropName::Ident(i) => Some(i.sym.to_string()),
        PropName::Str(s) => Some(s.value.to_string_lossy().into_owned()),
        PropName::Num(n) => Some(crate::analysis::eval::number_to_string(n.value)),
        _ => None,
    }
}

/// One property of an object literal: a value, a method or a getter.
pub enum Member<'a> {
    Value(&'a Expr),
    /// A method or getter: its body.
    Body(Option<&'a FunctionBody>),
}

/// The property `key` of `o` (the last one, as JavaScript keeps).
pub fn member<'a>(o: &'a ObjectLit, key: &str) -> Option<Member<'a>> {
    o.props.iter().rev().find_map(|p| {
        let PropOrSpread::Prop(p) = p else {
            return None;
        };
        match &**p {
            Prop::KeyValue(kv) if key_name(&kv.key).as_deref() == Some(key) => {
                Some(Member::Value(&kv.value))
            }
            Prop::Shorthand(i) if &*i.sym == key => None,
            Prop::Method(mp) if key_name(&mp.key).as_deref() == Some(key) => {
                Some(Member::Body(mp.function.body.as_ref()))
            }
            Prop::Getter(g) if key_name(&g.key).as_deref() == Some(key) => {
                Some(Member::Body(g.function.body.as_ref()))
            }
            _ => None,
        }
    })
}

/// Whether `o` has a property `key` of any form.
pub fn has(o: &ObjectLit, key: &str) -> bool {
    o.props.iter().any(|p| match p {
        PropOrSpread::Prop(p) => match &**p {
            Prop::KeyValue(kv) => key_name(&kv.key).as_deref() == Some(key),
            Prop::Shorthand(i) => &*i.sym == key,
            Prop::Method(mp) => key_name(&mp.key).as_deref() == Some(key),
            Prop::Getter(g) => key_name(&g.key).as_deref() == Some(key),
            _ => false,
        },
        PropOrSpread::Spread(_) => false,
    })
}

/// The name a parameter (or a declarator) binds when it is a plain name,
/// with or without a default; "" for a pattern.
pub fn plain_name(p: &Pat) -> String {
    match p {
        Pat::Ident(b) => b.id.sym.to_string(),
        Pat::Assign(a) => match &*a.left {
            Pat::Ident(b) => b.id.sym.to_string(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// What a function body returns, with the plain local bindings declared
/// before the return (`let e = f(); return g ? h(e) : e`).
pub fn returned(body: &FunctionBody) -> Option<(&Expr, Vec<(String, &Expr)>)> {
    let mut locals = Vec::new();
    for s in &body.stmts {
        match s {
            Stmt::Return(r) => return r.arg.as_deref().map(|e| (e, locals)),
            Stmt::Decl(Decl::Var(v)) => {
                for d in &v.decls {
                    if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init) {
                        locals.push((b.id.sym.to_string(), &**init));
                    } else {
                        return None;
                    }
                }
            }
            _ => return None,
        }
    }
    None
}

/// What a function-valued expression returns (an arrow's expression, or a
/// body that is one return).
pub fn fn_returns(e: &Expr) -> Option<(&Expr, Vec<(String, &Expr)>)> {
    match e {
        Expr::Paren(p) => fn_returns(&p.expr),
        Expr::Arrow(a) => match &*a.body {
            ArrowFunctionBody::Expr(x) => Some((x, Vec::new())),
            ArrowFunctionBody::FunctionBody(b) => returned(b),
        },
        Expr::Fn(f) => returned(f.function.body.as_ref()?),
        _ => None,
    }
}

/// The expressions a function may return, and the locals declared before.
pub type Returns<'e> = (Vec<&'e Expr>, Vec<(String, &'e Expr)>);

/// Every expression a function body may return, through `if`/`else`
/// branches, with the plain local bindings declared on the way: a value
/// chosen at run time among several (`if (flag()) return a; return b`).
pub fn returns_all(body: &FunctionBody) -> Option<Returns<'_>> {
    fn walk<'e>(
        stmts: &mut dyn Iterator<Item = &'e Stmt>,
        out: &mut Vec<&'e Expr>,
        locals: &mut Vec<(String, &'e Expr)>,
        depth: u32,
    ) -> bool {
        if depth > 16 {
            return false;
        }
        for s in stmts {
            match s {
                Stmt::Return(r) => {
                    if let Some(e) = r.arg.as_deref() {
                        out.push(e);
                    }
                    // Statements after an unconditional return never run.
                    return true;
                }
                Stmt::Decl(Decl::Var(v)) => {
                    for d in &v.decls {
                        if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init) {
                            locals.push((b.id.sym.to_string(), &**init));
                        }
                    }
                }
                Stmt::Block(b) if walk(&mut b.stmts.iter(), out, locals, depth + 1) => {
                    return true;
                }
                Stmt::If(i) => {
                    let c = walk(&mut std::iter::once(&*i.cons), out, locals, depth + 1);
                    let a = match &i.alt {
                        Some(a) => walk(&mut std::iter::once(&**a), out, locals, depth + 1),
                        None => false,
                    };
                    if c && a {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }
    let mut out = Vec::new();
    let mut locals = Vec::new();
    walk(&mut body.stmts.iter(), &mut out, &mut locals, 0);
    (!out.is_empty()).then_some((out, locals))
}

/// [`returns_all`] of a function-valued expression.
pub fn fn_returns_all(e: &Expr) -> Option<Returns<'_>> {
    match e {
        Expr::Paren(p) => fn_returns_all(&p.expr),
        Expr::Arrow(a) => match &*a.body {
            ArrowFunctionBody::Expr(x) => Some((vec![&**x], Vec::new())),
            ArrowFunctionBody::FunctionBody(b) => returns_all(b),
        },
        Expr::Fn(f) => returns_all(f.function.body.as_ref()?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::smallest_around;

    #[test]
    fn the_shortest_span_around_a_place_is_found() {
        // Nested (0..100 ⊃ 10..50 ⊃ 20..30), a sibling after (60..70), and
        // one that ends before the place (12..15).
        let mut spans = vec![
            (0, 100, false),
            (10, 50, true),
            (12, 15, false),
            (20, 30, false),
            (60, 70, false),
        ];
        spans.sort_unstable();
        assert_eq!(smallest_around(&spans, 25), Some((20, 30, false)));
        assert_eq!(smallest_around(&spans, 16), Some((10, 50, true)));
        assert_eq!(smallest_around(&spans, 55), Some((0, 100, false)));
        assert_eq!(smallest_around(&spans, 65), Some((60, 70, false)));
        assert_eq!(smallest_around(&spans, 100), None);
    }
}
