//! Names read through a key that is not a constant: `process.env[k]` where
//! `k` walks the keys of an object or the elements of a table.
//!
//! - `for (const [k, spec] of Object.entries(X))`, `for (k in X)`,
//!   `Object.keys(X).forEach((k) => …)`: the keys of `X` — *registry*
//!   (a typed environment: the bundle's getter per key reads
//!   `process.env[k]`);
//! - `for (const k of X)`, `X.some((k) => …)`: the string elements of the
//!   array `X` — *table*; and `process.env[r.field]` with `r` walking `X`:
//!   the `field` of each object of `X` — *table*;
//! - a function's `get(target, k)` (a proxy trap) that also reads `X[k]`:
//!   the keys of `X` — *registry*.
//!
//! `X` a parameter of an enclosing named function makes that function a
//! spec reader (its calls' arguments are read, [`super::spec_keys`]);
//! otherwise `X` is a binding read where it is defined: an object literal,
//! a namespace, an import, an array (or `new Set([…])`).

use super::{Helper, MAX_SPEC_BYTES, MAX_SPEC_DEPTH, Read, is_ident_byte, params_of, valid_name};
use crate::analysis::eval::parse_snippet;
use crate::analysis::surface::Site;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{DefKind, FnId};
use std::collections::HashSet;
use swc_ecma_ast::{
    ArrayLit, Callee, Expr, ForHead, Lit, MemberProp, Pat, Prop, PropName, PropOrSpread, Stmt,
};

/// Where the names a non-constant key walks come from.
#[derive(PartialEq, Eq, Hash, Clone)]
pub(super) enum Origin {
    /// The keys of the object a function's parameter receives.
    Spec(Helper),
    /// The keys of the object bound to `name` in module `module`.
    Keys(usize, String),
    /// The string elements of the array bound to `name`.
    Elements(usize, String),
    /// The string values of `field` in the objects of the array `name`.
    Field(usize, String, String),
}

/// How a name is walked.
#[derive(Clone, Copy, PartialEq)]
enum Walk {
    Keys,
    Elements,
}

/// The longest `for (…)` head or callee read around a binding.
const MAX_HEAD_BYTES: usize = 4096;

/// The longest function searched for a proxy trap's `X[k]`.
const MAX_TRAP_BYTES: usize = 16 * 1024;

/// The origin of the names `process.env[e]` reads, `e` the bracket's
/// expression at `lo` in module `mi`: `k` or `r.field`.
pub(super) fn origin(m: &IndexedModule, mi: usize, lo: u32, e: &Expr) -> Option<Origin> {
    match e {
        Expr::Ident(k) => ident_origin(m, mi, lo, k.sym.as_ref()),
        Expr::Member(me) => {
            let Expr::Ident(r) = &*me.obj else {
                return None;
            };
            let MemberProp::Ident(field) = &me.prop else {
                return None;
            };
            let (walk, x, _) = walked(m, lo, r.sym.as_ref())?;
            (walk == Walk::Elements).then(|| Origin::Field(mi, x, field.sym.to_string()))
        }
        _ => None,
    }
}

/// The origin of the names the binding `k` visible at `lo` walks.
pub(super) fn ident_origin(m: &IndexedModule, mi: usize, lo: u32, k: &str) -> Option<Origin> {
    let (walk, x, f) = walked(m, lo, k)?;
    match walk {
        Walk::Keys => Some(keys_origin(m, mi, lo, &x, f)),
        Walk::Elements => Some(Origin::Elements(mi, x)),
    }
}

/// `X` a parameter of a named function enclosing `at` (from `f` out): a
/// spec reader; else the binding's keys.
pub(super) fn keys_origin(
    m: &IndexedModule,
    mi: usize,
    at: u32,
    x: &str,
    f: Option<FnId>,
) -> Origin {
    if let Some(defs) = m.index.definitions.get(x) {
        let mut g = f.or_else(|| m.index.enclosing_function(at));
        for _ in 0..6 {
            let Some(id) = g else { break };
            if defs
                .iter()
                .any(|d| d.kind == DefKind::Param && d.in_function == Some(id))
            {
                let named = m.index.functions[id as usize].name.is_some();
                if let Some(param) = params_of(m, id).and_then(|p| p.iter().position(|p| p == x))
                    && named
                    && param < 2
                {
                    return Origin::Spec(Helper {
                        module: mi,
                        function: id,
                        param,
                    });
                }
                break;
            }
            g = m.index.functions[id as usize].parent;
        }
    }
    Origin::Keys(mi, x.to_string())
}

/// How the binding `k` visible at `lo` walks a collection: (keys or
/// elements, the collection's name, the function binding `k`).
fn walked(m: &IndexedModule, lo: u32, k: &str) -> Option<(Walk, String, Option<FnId>)> {
    let defs = m.index.definitions.get(k)?;
    let mut f = m.index.enclosing_function(lo);
    // From the innermost function out, the module's top level last.
    for _ in 0..7 {
        if let Some(d) = defs.iter().rev().find(|d| d.in_function == f && d.lo < lo) {
            let found = match (d.kind, f) {
                (DefKind::Param, Some(id)) => {
                    let func = &m.index.functions[id as usize];
                    if func.name.is_some() {
                        // A named function: a helper, or a proxy trap's
                        // method (`get(t, k)`).
                        trap(m, id, k).map(|x| (Walk::Keys, x, Some(id)))
                    } else {
                        callback(m, func.lo as usize, k)
                            .or_else(|| trap(m, id, k).map(|x| (Walk::Keys, x, Some(id))))
                    }
                }
                (DefKind::Let | DefKind::Const | DefKind::Var, _) => for_head(m, d.lo as usize, k),
                _ => None,
            };
            return found.map(|(w, x, g)| (w, x, g.or(f)));
        }
        f = m.index.functions[f? as usize].parent;
    }
    None
}

/// `for (HEAD)` around the binding at `at`: what it walks, when `k` is
/// its key (or element).
fn for_head(m: &IndexedModule, at: usize, k: &str) -> Option<(Walk, String, Option<FnId>)> {
    let src = m.source();
    let b = src.as_bytes();
    let lo = at.saturating_sub(40);
    let start = src.get(lo..at)?.rfind("for")? + lo;
    let open = start + 3 + b[start + 3..at].iter().position(|&c| c == b'(')?;
    let close = closing(b, open)?;
    let head = src.get(open + 1..close)?;
    let e = parse_snippet(&format!("(()=>{{for({head}){{}}}})")).ok()?;
    let Expr::Paren(p) = &*e else { return None };
    let Expr::Arrow(a) = &*p.expr else {
        return None;
    };
    let swc_ecma_ast::ArrowFunctionBody::FunctionBody(body) = &*a.body else {
        return None;
    };
    let (left, right, of) = match body.stmts.first()? {
        Stmt::ForOf(f) => (&f.left, &f.right, true),
        Stmt::ForIn(f) => (&f.left, &f.right, false),
        _ => return None,
    };
    let ForHead::VarDecl(v) = left else {
        return None;
    };
    let pat = &v.decls.first()?.name;
    walk_of(pat, right, of, k).map(|(w, x)| (w, x, None))
}

/// What `pat` walks when bound from `right` (by `for … of` when `of`, else
/// `for … in`): `k` itself, or `[k, …]` from `Object.entries`.
fn walk_of(pat: &Pat, right: &Expr, of: bool, k: &str) -> Option<(Walk, String)> {
    let is_k = |p: &Pat| matches!(p, Pat::Ident(b) if b.id.sym == k);
    let first_is_k = |p: &Pat| match p {
        Pat::Array(a) => a.elems.first().and_then(|e| e.as_ref()).is_some_and(is_k),
        _ => false,
    };
    let right = unparen(right);
    if let Expr::Cond(c) = right {
        // `cond ? [] : Object.entries(X)`: either side.
        return walk_of(pat, &c.cons, of, k).or_else(|| walk_of(pat, &c.alt, of, k));
    }
    if !of {
        let Expr::Ident(x) = right else { return None };
        return is_k(pat).then(|| (Walk::Keys, x.sym.to_string()));
    }
    match object_call(right) {
        Some(("entries", x)) if first_is_k(pat) => Some((Walk::Keys, x)),
        Some(("keys" | "getOwnPropertyNames", x)) if is_k(pat) => Some((Walk::Keys, x)),
        Some(_) => None,
        None => match right {
            Expr::Ident(x) if is_k(pat) => Some((Walk::Elements, x.sym.to_string())),
            _ => None,
        },
    }
}

/// `Object.METHOD(X)`: the method and `X`.
fn object_call(e: &Expr) -> Option<(&str, String)> {
    let Expr::Call(c) = unparen(e) else {
        return None;
    };
    let Callee::Expr(callee) = &c.callee else {
        return None;
    };
    let Expr::Member(me) = &**callee else {
        return None;
    };
    let (Expr::Ident(o), MemberProp::Ident(method)) = (&*me.obj, &me.prop) else {
        return None;
    };
    if o.sym != "Object" || c.args.len() != 1 || c.args[0].spread.is_some() {
        return None;
    }
    let Expr::Ident(x) = unparen(&c.args[0].expr) else {
        return None;
    };
    Some((method.sym.as_ref(), x.sym.to_string()))
}

fn unparen(mut e: &Expr) -> &Expr {
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    e
}

/// `RECEIVER.forEach((k) => …)` (or `map`, `some` …) with the callback at
/// `at`: what the callback's first parameter walks.
fn callback(m: &IndexedModule, at: usize, k: &str) -> Option<(Walk, String, Option<FnId>)> {
    let src = m.source();
    let b = src.as_bytes();
    let i = super::skip_ws_back(b, at);
    if i == 0 || b[i - 1] != b'(' {
        return None;
    }
    let j = i - 1;
    let name_lo = b[..j]
        .iter()
        .rposition(|&c| !is_ident_byte(c))
        .map_or(0, |p| p + 1);
    let method = &src[name_lo..j];
    if !matches!(
        method,
        "forEach" | "map" | "filter" | "some" | "every" | "find" | "findLast" | "flatMap"
    ) {
        return None;
    }
    let mut r = name_lo.checked_sub(1)?;
    if b[r] != b'.' {
        return None;
    }
    if r > 0 && b[r - 1] == b'?' {
        r -= 1;
    }
    // The receiver: an identifier, or `Object.keys(X)`.
    let recv_hi = r;
    let recv_lo = if b.get(recv_hi.checked_sub(1)?) == Some(&b')') {
        let open = opening(b, recv_hi - 1)?;
        b[..open]
            .iter()
            .rposition(|&c| !(is_ident_byte(c) || c == b'.'))
            .map_or(0, |p| p + 1)
    } else {
        b[..recv_hi]
            .iter()
            .rposition(|&c| !is_ident_byte(c))
            .map_or(0, |p| p + 1)
    };
    let recv = parse_snippet(src.get(recv_lo..recv_hi)?).ok()?;
    // The callback's head, closed with an empty body.
    let head_end = at
        + src
            .get(at..(at + MAX_HEAD_BYTES).min(src.len()))?
            .find("=>")?;
    let head = src.get(at..head_end)?.trim();
    let params = parse_snippet(&format!("({head}=>0)")).ok()?;
    let Expr::Paren(p) = &*params else {
        return None;
    };
    let Expr::Arrow(a) = &*p.expr else {
        return None;
    };
    let pat = a.params.first()?;
    walk_of(pat, &recv, true, k).map(|(w, x)| (w, x, None))
}

/// A function `id` taking `k` that also reads `X[k]` (a proxy's `get`
/// trap over a spec object): `X`.
fn trap(m: &IndexedModule, id: FnId, k: &str) -> Option<String> {
    let f = &m.index.functions[id as usize];
    if (f.hi - f.lo) as usize > MAX_TRAP_BYTES {
        return None;
    }
    let text = m.source().get(f.body_lo as usize..f.hi as usize)?;
    let pat = format!("[{k}]");
    text.match_indices(pat.as_str()).find_map(|(i, _)| {
        let b = text.as_bytes();
        let start = b[..i]
            .iter()
            .rposition(|&x| !is_ident_byte(x))
            .map_or(0, |j| j + 1);
        let x = &text[start..i];
        let env = text[..start].ends_with("process.") || x.is_empty();
        (!env && !x.as_bytes()[0].is_ascii_digit()).then(|| x.to_string())
    })
}

/// Where the bracket opened at `open` (`(`) closes, skipping strings.
fn closing(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    let end = b.len().min(open + MAX_HEAD_BYTES);
    while i < end {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            q @ (b'"' | b'\'' | b'`') => {
                i += 1;
                while i < end && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the `)` at `close` opens (no strings inside expected: a short
/// call such as `Object.keys(X)`).
fn opening(b: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let lo = close.saturating_sub(MAX_HEAD_BYTES);
    let mut i = close + 1;
    while i > lo {
        i -= 1;
        match b[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'"' | b'\'' | b'`' => return None,
            _ => {}
        }
    }
    None
}

/// The names an origin stands for (a spec reader's are read at its calls).
pub(super) fn names(ci: &CodeIndex, o: &Origin, out: &mut Vec<Read>) {
    let mut seen = HashSet::new();
    match o {
        Origin::Spec(_) => {}
        Origin::Keys(m, x) => object_keys(ci, *m, x, "registry", 0, &mut seen, out),
        Origin::Elements(m, x) => elements(ci, *m, x, None, 0, &mut seen, out),
        Origin::Field(m, x, f) => elements(ci, *m, x, Some(f), 0, &mut seen, out),
    }
}

/// The definition text of `name` in module `m`, and where it starts,
/// following imports: (module, start, text).
fn definition<'c>(
    ci: &'c CodeIndex,
    m: usize,
    name: &str,
    depth: usize,
) -> Option<(usize, usize, &'c str)> {
    if depth > MAX_SPEC_DEPTH {
        return None;
    }
    if let Some((t, local)) = ci.follow_import(m, name) {
        return definition(ci, t, local, depth + 1);
    }
    let module = &ci.modules[m];
    let (lo, hi) = module
        .index
        .definitions
        .get(name)?
        .iter()
        .find_map(|d| d.value)?;
    let (lo, hi) = (lo as usize, hi as usize);
    if hi - lo > MAX_SPEC_BYTES {
        return None;
    }
    Some((m, lo, module.source().get(lo..hi)?))
}

/// The string elements of the array (or `new Set([…])`) bound to `name`;
/// with `field`, that field's string value in each object element.
fn elements(
    ci: &CodeIndex,
    m: usize,
    name: &str,
    field: Option<&str>,
    depth: usize,
    seen: &mut HashSet<(usize, String)>,
    out: &mut Vec<Read>,
) {
    if !seen.insert((m, name.to_string())) {
        return;
    }
    let Some((m, lo, text)) = definition(ci, m, name, depth) else {
        return;
    };
    let module = &ci.modules[m];
    let Ok(e) = parse_snippet(&format!("({text})")) else {
        return;
    };
    let at = |p: swc_common::BytePos| (lo + (p.0 as usize).saturating_sub(2)) as u32;
    let arr: Option<&ArrayLit> = match unparen(&e) {
        Expr::Array(a) => Some(a),
        Expr::New(n) => {
            n.args
                .as_ref()
                .and_then(|a| a.first())
                .and_then(|a| match unparen(&a.expr) {
                    Expr::Array(a) => Some(a),
                    _ => None,
                })
        }
        _ => None,
    };
    let Some(arr) = arr else { return };
    for el in arr.elems.iter().flatten() {
        if el.spread.is_some() {
            if let Expr::Ident(i) = unparen(&el.expr) {
                elements(ci, m, i.sym.as_ref(), field, depth + 1, seen, out);
            }
            continue;
        }
        let s = match (field, unparen(&el.expr)) {
            (None, Expr::Lit(Lit::Str(s))) => Some(s),
            (Some(f), Expr::Object(o)) => o.props.iter().find_map(|p| match p {
                PropOrSpread::Prop(p) => match &**p {
                    Prop::KeyValue(kv) if prop_name(&kv.key).as_deref() == Some(f) => {
                        match unparen(&kv.value) {
                            Expr::Lit(Lit::Str(s)) => Some(s),
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            }),
            _ => None,
        };
        if let Some(s) = s {
            let name = s.value.to_string_lossy().into_owned();
            if valid_name(&name) {
                out.push(Read {
                    name,
                    how: "table",
                    default: None,
                    site: Site::at(module, at(s.span.lo)),
                });
            }
        }
    }
}

fn prop_name(k: &PropName) -> Option<String> {
    match k {
        PropName::Ident(i) => Some(i.sym.to_string()),
        PropName::Str(s) => Some(s.value.to_string_lossy().into_owned()),
        _ => None,
    }
}

/// The keys of the object `name` denotes in module `m`: a namespace the
/// bundle builds (`helper(ns, {KEY: () => local, …})`), an object literal
/// (spreads followed), a binding imported from another chunk,
/// `import.meta.require("chunk").name`, or a namespace's member
/// (`(init(), toNs(ns)).name`).
pub(super) fn object_keys(
    ci: &CodeIndex,
    m: usize,
    name: &str,
    how: &'static str,
    depth: usize,
    seen: &mut HashSet<(usize, String)>,
    out: &mut Vec<Read>,
) {
    if depth > MAX_SPEC_DEPTH || !seen.insert((m, name.to_string())) {
        return;
    }
    if let Some((t, local)) = ci.follow_import(m, name) {
        return object_keys(ci, t, local, how, depth + 1, seen, out);
    }
    let module = &ci.modules[m];
    // A namespace: its export table is the second argument of a call whose
    // first is the namespace.
    if let Some(entries) = namespace(module, name) {
        for e in entries {
            if valid_name(&e.original) {
                out.push(Read {
                    name: e.original.clone(),
                    how,
                    default: None,
                    site: Site::at(module, e.lo),
                });
            }
        }
        return;
    }
    let Some((lo, hi)) = module
        .index
        .definitions
        .get(name)
        .and_then(|d| d.iter().find_map(|d| d.value))
    else {
        return;
    };
    let (lo, hi) = (lo as usize, hi as usize);
    if hi - lo > MAX_SPEC_BYTES {
        return;
    }
    let Some(text) = module.source().get(lo..hi) else {
        return;
    };
    if let Some(rest) = text.strip_prefix("import.meta.require(") {
        // `import.meta.require("/$bunfs/root/chunk.js").name`
        let Some((path, export)) = rest.split_once(").") else {
            return;
        };
        let path = path.trim_matches(|c| c == '"' || c == '\'');
        if let Some(t) = ci.module_position(path)
            && let Some(e) = ci.export_named(t, export)
        {
            let local = e.local.clone();
            object_keys(ci, t, &local, how, depth + 1, seen, out);
        }
        return;
    }
    if text.starts_with('(') {
        // `(init(), toNamespace(ns)).name`: the namespace's export `name`.
        let Ok(e) = parse_snippet(text) else { return };
        let Expr::Member(me) = unparen(&e) else {
            return;
        };
        let MemberProp::Ident(prop) = &me.prop else {
            return;
        };
        let mut obj = unparen(&me.obj);
        if let Expr::Seq(s) = obj
            && let Some(last) = s.exprs.last()
        {
            obj = unparen(last);
        }
        let ns = match obj {
            Expr::Ident(i) => Some(i.sym.to_string()),
            Expr::Call(c) if c.args.len() == 1 => match unparen(&c.args[0].expr) {
                Expr::Ident(i) => Some(i.sym.to_string()),
                _ => None,
            },
            _ => None,
        };
        if let Some(ns) = ns
            && let Some(entries) = namespace(module, &ns)
            && let Some(e) = entries.iter().find(|e| e.original == prop.sym.as_ref())
        {
            let local = e.local.clone();
            object_keys(ci, m, &local, how, depth + 1, seen, out);
        }
        return;
    }
    literal_keys(ci, m, lo as u32, hi as u32, how, seen, out);
}

/// The keys of the object literal at `lo..hi` of module `m` (spreads
/// followed).
pub(super) fn literal_keys(
    ci: &CodeIndex,
    m: usize,
    lo: u32,
    hi: u32,
    how: &'static str,
    seen: &mut HashSet<(usize, String)>,
    out: &mut Vec<Read>,
) {
    let module = &ci.modules[m];
    let (lo, hi) = (lo as usize, hi as usize);
    if hi.saturating_sub(lo) > MAX_SPEC_BYTES {
        return;
    }
    let Some(text) = module.source().get(lo..hi) else {
        return;
    };
    if !text.starts_with('{') {
        return;
    }
    let Ok(e) = parse_snippet(&format!("({text})")) else {
        return;
    };
    let Expr::Object(o) = unparen(&e) else { return };
    // Snippet positions start at 1 and carry the `(`.
    let at = |p: swc_common::BytePos| (lo + (p.0 as usize).saturating_sub(2)) as u32;
    for prop in &o.props {
        match prop {
            PropOrSpread::Spread(sp) => {
                if let Expr::Ident(i) = &*sp.expr {
                    object_keys(ci, m, i.sym.as_ref(), how, 1, seen, out);
                }
            }
            PropOrSpread::Prop(p) => {
                let (key, pos) = match &**p {
                    Prop::Shorthand(i) => (i.sym.to_string(), i.span.lo),
                    Prop::KeyValue(kv) => match &kv.key {
                        PropName::Ident(i) => (i.sym.to_string(), i.span.lo),
                        PropName::Str(s) => (s.value.to_string_lossy().into_owned(), s.span.lo),
                        _ => continue,
                    },
                    _ => continue,
                };
                if valid_name(&key) {
                    out.push(Read {
                        name: key,
                        how,
                        default: None,
                        site: Site::at(module, at(pos)),
                    });
                }
            }
        }
    }
}

/// The export table of the namespace `name` (the second argument of a
/// call whose first is `name`), when it has entries.
fn namespace<'m>(
    module: &'m IndexedModule,
    name: &str,
) -> Option<Vec<&'m crate::js::index::ExportEntry>> {
    let (lo, hi) = module.index.calls.iter().find_map(|c| {
        let a1 = c.arg1.as_ref()?;
        (!c.member && c.args == 2 && c.arg0.as_ref()?.ident().map(|i| &**i) == Some(name))
            .then_some((a1.lo, a1.hi))
    })?;
    let entries: Vec<_> = module
        .index
        .export_table
        .iter()
        .filter(|e| e.lo >= lo && e.lo < hi)
        .collect();
    (!entries.is_empty()).then_some(entries)
}
