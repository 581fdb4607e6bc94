//! Rename-proof function shapes, for matching functions across builds whose
//! minified names differ.
//!
//! A module's syntax tree is flattened into one token stream: a tag per
//! expression, statement, pattern and property kind, operators, literal
//! values, property names and global built-ins kept as hashes, and every
//! other identifier as an interned id. Each function owns a range of the
//! stream, so its hashes are computed on demand:
//! - `shape`: identifiers erased — equal when only names differ;
//! - `exact`: identifiers numbered by first use inside the function — equal
//!   when the code is the same up to a consistent renaming.
//!
//! The minifier names symbols by scope slot, so an unchanged function gets a
//! consistent renaming in another build; `exact` then stays equal.

use std::collections::HashMap;
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

const TAG: u32 = 0;
const LIT: u32 = 1 << 30;
const IDENT: u32 = 2 << 30;
const KIND_MASK: u32 = 3 << 30;
const VALUE_MASK: u32 = !KIND_MASK;

/// Globals the minifier never renames: kept verbatim in both hashes.
pub const BUILTINS: &[&str] = &[
    "Array",
    "ArrayBuffer",
    "BigInt",
    "Boolean",
    "Buffer",
    "DataView",
    "Date",
    "Error",
    "Function",
    "Infinity",
    "Intl",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "Reflect",
    "RegExp",
    "Set",
    "String",
    "Symbol",
    "SyntaxError",
    "TextDecoder",
    "TextEncoder",
    "TypeError",
    "URL",
    "URLSearchParams",
    "Uint8Array",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "AbortController",
    "AbortSignal",
    "arguments",
    "clearInterval",
    "clearTimeout",
    "console",
    "decodeURIComponent",
    "encodeURIComponent",
    "exports",
    "fetch",
    "globalThis",
    "isNaN",
    "module",
    "parseFloat",
    "parseInt",
    "process",
    "queueMicrotask",
    "require",
    "setImmediate",
    "setInterval",
    "setTimeout",
    "structuredClone",
    "undefined",
    "Bun",
];

/// A module's normalised token stream and each function's range in it.
#[derive(Debug, Default, Clone)]
pub struct Shapes {
    tokens: Vec<u32>,
    /// (function start offset, first token, end token), in start order.
    ranges: Vec<(u32, u32, u32)>,
}

/// A function's hashes and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FnShape {
    pub shape: u64,
    pub exact: u64,
    pub tokens: u32,
}

fn mix(h: u64, t: u32) -> u64 {
    (h ^ t as u64).wrapping_mul(0x0100_0000_01b3).rotate_left(5)
}

/// 64-bit FNV-1a: a fast, stable hash for literal values and anchors (not
/// for anything an attacker could exploit: these hashes only pair code).
pub fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn hash_str(s: &[u8]) -> u32 {
    let h = fnv64(s);
    ((h >> 32) as u32 ^ h as u32) & VALUE_MASK
}

impl Shapes {
    pub fn build(program: &Program, base: u32) -> Shapes {
        let mut r = Recorder {
            base,
            out: Shapes::default(),
            idents: HashMap::new(),
        };
        // Recurses once per AST level: run where the parse limit fits.
        super::depth::with_stack(|| program.visit_with(&mut r));
        r.out.ranges.sort_by_key(|r| r.0);
        r.out
    }

    /// The hashes of the function starting at byte `lo` (as the module index
    /// records it), or None when no function starts there.
    pub fn function(&self, lo: u32) -> Option<FnShape> {
        let i = self.ranges.binary_search_by_key(&lo, |r| r.0).ok()?;
        let (_, a, b) = self.ranges[i];
        let toks = &self.tokens[a as usize..b as usize];
        let mut shape: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut exact: u64 = shape;
        let mut first_use: HashMap<u32, u32> = HashMap::new();
        for &t in toks {
            if t & KIND_MASK == IDENT {
                shape = mix(shape, IDENT);
                let n = first_use.len() as u32;
                let k = *first_use.entry(t).or_insert(n);
                exact = mix(exact, IDENT | k);
            } else {
                shape = mix(shape, t);
                exact = mix(exact, t);
            }
        }
        Some(FnShape {
            shape,
            exact,
            tokens: toks.len() as u32,
        })
    }

    pub fn token_count(&self) -> usize {
        self.tokens.len()
    }
}

struct Recorder {
    base: u32,
    out: Shapes,
    idents: HashMap<swc_atoms::Atom, u32>,
}

impl Recorder {
    fn tag(&mut self, t: u32) {
        self.out.tokens.push(TAG | t);
    }

    fn lit(&mut self, bytes: &[u8]) {
        self.out.tokens.push(LIT | hash_str(bytes));
    }

    fn range<F: FnOnce(&mut Self)>(&mut self, lo: swc_common::BytePos, f: F) {
        let start = self.out.tokens.len() as u32;
        f(self);
        let end = self.out.tokens.len() as u32;
        let lo = lo.0.saturating_sub(self.base);
        self.out.ranges.push((lo, start, end));
    }
}

fn expr_tag(e: &Expr) -> u32 {
    match e {
        Expr::This(_) => 1,
        Expr::Array(_) => 2,
        Expr::Object(_) => 3,
        Expr::Fn(_) => 4,
        Expr::Unary(u) => 100 + u.op as u32,
        Expr::Update(u) => 140 + u.op as u32 * 2 + u.prefix as u32,
        Expr::Bin(b) => 160 + b.op as u32,
        Expr::Assign(a) => 220 + a.op as u32,
        Expr::Member(_) => 5,
        Expr::SuperProp(_) => 6,
        Expr::Cond(_) => 7,
        Expr::Call(_) => 8,
        Expr::New(_) => 9,
        Expr::Seq(_) => 10,
        Expr::Ident(_) => 11,
        Expr::Lit(_) => 12,
        Expr::Tpl(_) => 13,
        Expr::TaggedTpl(_) => 14,
        Expr::Arrow(_) => 15,
        Expr::Class(_) => 16,
        Expr::Yield(_) => 17,
        Expr::MetaProp(_) => 18,
        Expr::Await(_) => 19,
        Expr::Paren(_) => 20,
        Expr::OptChain(_) => 21,
        Expr::PrivateName(_) => 22,
        _ => 23,
    }
}

fn stmt_tag(s: &Stmt) -> u32 {
    300 + match s {
        Stmt::Block(_) => 1,
        Stmt::Empty(_) => 2,
        Stmt::Debugger(_) => 3,
        Stmt::With(_) => 4,
        Stmt::Return(_) => 5,
        Stmt::Labeled(_) => 6,
        Stmt::Break(_) => 7,
        Stmt::Continue(_) => 8,
        Stmt::If(i) => 9 + 20 * i.alt.is_some() as u32,
        Stmt::Switch(_) => 10,
        Stmt::Throw(_) => 11,
        Stmt::Try(_) => 12,
        Stmt::While(_) => 13,
        Stmt::DoWhile(_) => 14,
        Stmt::For(_) => 15,
        Stmt::ForIn(_) => 16,
        Stmt::ForOf(f) => 17 + 20 * f.is_await as u32,
        Stmt::Decl(_) => 18,
        Stmt::Expr(_) => 19,
    }
}

impl Visit for Recorder {
    fn visit_expr(&mut self, e: &Expr) {
        self.tag(expr_tag(e));
        e.visit_children_with(self);
        // A closing tag keeps nesting unambiguous: `f(a)(b)` vs `f(a(b))`.
        self.tag(99);
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        self.tag(stmt_tag(s));
        s.visit_children_with(self);
    }

    fn visit_var_decl(&mut self, n: &VarDecl) {
        self.tag(360 + n.kind as u32);
        n.visit_children_with(self);
    }

    fn visit_pat(&mut self, p: &Pat) {
        self.tag(
            380 + match p {
                Pat::Ident(_) => 1,
                Pat::Array(_) => 2,
                Pat::Rest(_) => 3,
                Pat::Object(_) => 4,
                Pat::Assign(_) => 5,
                Pat::Expr(_) => 6,
                _ => 7,
            },
        );
        p.visit_children_with(self);
    }

    fn visit_prop(&mut self, p: &Prop) {
        self.tag(
            400 + match p {
                Prop::Shorthand(_) => 1,
                Prop::KeyValue(_) => 2,
                Prop::Assign(_) => 3,
                Prop::Getter(_) => 4,
                Prop::Setter(_) => 5,
                Prop::Method(_) => 6,
            },
        );
        p.visit_children_with(self);
    }

    fn visit_function(&mut self, f: &Function) {
        self.range(f.span.lo, |r| {
            r.tag(420 + f.is_async as u32 * 2 + f.is_generator as u32);
            f.visit_children_with(r);
        });
    }

    fn visit_arrow_expr(&mut self, a: &ArrowExpr) {
        self.range(a.span.lo, |r| {
            r.tag(430 + a.is_async as u32);
            a.visit_children_with(r);
        });
    }

    fn visit_ident(&mut self, i: &Ident) {
        if BUILTINS.contains(&&*i.sym) {
            self.lit(i.sym.as_bytes());
        } else {
            let n = self.idents.len() as u32;
            let id = *self.idents.entry(i.sym.clone()).or_insert(n);
            self.out.tokens.push(IDENT | (id & VALUE_MASK));
        }
    }

    fn visit_ident_name(&mut self, i: &IdentName) {
        self.lit(i.sym.as_bytes());
    }

    fn visit_private_name(&mut self, n: &PrivateName) {
        self.lit(n.name.as_bytes());
    }

    fn visit_str(&mut self, s: &Str) {
        self.lit(s.value.as_bytes());
    }

    fn visit_number(&mut self, n: &Number) {
        self.lit(&n.value.to_bits().to_le_bytes());
    }

    fn visit_bool(&mut self, b: &Bool) {
        self.tag(440 + b.value as u32);
    }

    fn visit_null(&mut self, _: &Null) {
        self.tag(442);
    }

    fn visit_big_int(&mut self, b: &BigInt) {
        self.lit(b.value.to_string().as_bytes());
    }

    fn visit_regex(&mut self, r: &Regex) {
        self.lit(r.exp.as_bytes());
        self.lit(r.flags.as_bytes());
    }

    fn visit_tpl_element(&mut self, t: &TplElement) {
        self.lit(t.raw.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::index::ModuleIndex;
    use crate::js::parse::{Goal, parse};

    fn shapes(src: &str) -> Vec<FnShape> {
        let (p, _) = parse("t.js", src.to_string(), Goal::Script).unwrap();
        let base = p.file.start_pos.0;
        let s = Shapes::build(&p.program, base);
        let idx = ModuleIndex::build(&p);
        idx.functions
            .iter()
            .map(|f| {
                s.function(f.lo)
                    .expect("every indexed function has a range")
            })
            .collect()
    }

    #[test]
    fn consistent_renames_keep_both_hashes() {
        let a = shapes("function ab(c,d){return c.x+d+JSON.stringify(zz(c))}");
        let b = shapes("function Qr(e,f){return e.x+f+JSON.stringify(yy(e))}");
        assert_eq!(a, b);
    }

    #[test]
    fn swapped_uses_change_exact_but_not_shape() {
        let a = shapes("function f(a,b){return a-b}");
        let b = shapes("function f(a,b){return b-a}");
        assert_eq!(a[0].shape, b[0].shape);
        assert_ne!(a[0].exact, b[0].exact);
    }

    #[test]
    fn literals_properties_and_operators_count() {
        let base = shapes("function f(a){return a.x+'s'}");
        for other in [
            "function f(a){return a.y+'s'}",
            "function f(a){return a.x+'t'}",
            "function f(a){return a.x-'s'}",
            "function f(a){return a.x+'s'+1}",
            "function f(a){return Math.x+'s'}",
        ] {
            assert_ne!(base[0].shape, shapes(other)[0].shape, "{other}");
        }
    }

    #[test]
    fn nested_functions_have_their_own_range() {
        let s = shapes("function o(){return ()=>1}\nconst g = () => 1;");
        assert_eq!(s.len(), 3);
        assert_eq!(s[1], s[2], "the inner arrow and g are the same code");
        assert!(s[0].tokens > s[1].tokens);
    }
}
