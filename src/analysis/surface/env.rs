//! Every environment variable the build reads.
//!
//! The index does not collect member expressions, so each module's source is
//! scanned for `process.env` (a cheap substring search) and the few bytes
//! around each occurrence are read or re-parsed:
//!
//! - `process.env.NAME` / `process.env?.NAME` — *member*; a `?? literal` or
//!   `|| literal` right after it is the default;
//! - `process.env["NAME"]`, or `process.env[K]` where `K` evaluates to a
//!   string — *bracket*;
//! - `{A, B: b, C = "x"} = process.env` — *destructured*, with the pattern's
//!   defaults;
//! - `"NAME" in process.env` — *in*;
//! - `process.env[p]` where `p` is a parameter of the enclosing function
//!   makes that function a *helper*: each call of it (through imports too)
//!   whose argument in that position is a string, or evaluates to one, reads
//!   that variable.
//!
//! - a helper called as `read(key, specs[key])`, `specs` a parameter of an
//!   enclosing function, reads a *typed environment*: the keys of each
//!   object passed there are variables read — *registry* (see
//!   [`spec_reader`]).
//!
//! - `process.env[k]` where `k` walks the keys of an object (`for … of
//!   Object.entries(X)`, `Object.keys(X).forEach`, a proxy trap reading
//!   `X[k]`) — *registry*; or the elements of an array, or a field of its
//!   objects — *table* (see [`keys`]);
//! - the environment handed to a parameter or held by another binding —
//!   *passed*, *alias* (see [`passed`]);
//! - a list of names, most of them read in one of the ways above — *list*
//!   (see [`lists`]).
//!
//! A truthiness helper called as `isTruthy(process.env.X)` is a member read
//! and needs nothing more. What is computed at run time (a name built from
//! data) is not known statically and is left out.

mod keys;
mod lists;
mod passed;

use super::Site;
use crate::analysis::eval::{Evaluator, Value, parse_snippet};
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{DefKind, FnId, FnKind};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use swc_common::Spanned;
use swc_ecma_ast::{AssignTarget, Expr, Lit, ObjectPatProp, Pat, PropName};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnvVar {
    pub name: String,
    /// How it is read: `member` (`process.env.NAME`), `destructured`,
    /// `bracket` (`process.env["NAME"]`), `in` (`"NAME" in process.env`),
    /// `helper` (a function taking the name), `registry` (a key of a typed
    /// environment's specs), `table` (an element or field of a table the
    /// key walks), `passed` / `alias` (read off a parameter or a binding
    /// holding the environment), `list` (in a list of names most of which
    /// are read).
    pub how: Vec<String>,
    pub default: Option<serde_json::Value>,
    pub sites: Vec<Site>,
}

const NEEDLE: &str = "process.env";

/// The longest bracket or destructuring pattern read around an occurrence:
/// real ones are short, and the bound keeps a hostile module from making
/// each occurrence re-parse megabytes.
const MAX_PATTERN_BYTES: usize = 4096;

/// The scans around occurrences read at most this many times the module's
/// length (real modules need far less than once).
const SCAN_BUDGET_FACTOR: usize = 4;

/// The longest name taken as a variable's.
const MAX_NAME_BYTES: usize = 200;

/// One read of one variable.
struct Read {
    name: String,
    how: &'static str,
    default: Option<serde_json::Value>,
    site: Site,
}

/// A function that reads `process.env[param]`: its module, id, and which
/// parameter holds the name.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Helper {
    module: usize,
    function: FnId,
    param: usize,
}

pub fn find(ci: &CodeIndex) -> Vec<EnvVar> {
    let per_module: Vec<Scanned> = ci
        .modules
        .par_iter()
        .enumerate()
        .map(|(mi, m)| scan_module(ci, mi, m))
        .collect();
    let mut reads: Vec<Read> = Vec::new();
    let mut helpers: HashSet<Helper> = HashSet::new();
    let mut origins: Vec<keys::Origin> = Vec::new();
    let mut holders: HashSet<passed::Holder> = HashSet::new();
    for s in per_module {
        reads.extend(s.reads);
        helpers.extend(s.helpers);
        origins.extend(s.origins);
        holders.extend(s.holders);
    }
    for h in &holders {
        passed::reads(ci, h, &mut reads);
    }
    if !helpers.is_empty() {
        let calls: Vec<(Vec<Read>, Vec<keys::Origin>)> = (0..ci.modules.len())
            .into_par_iter()
            .map(|mi| helper_calls(ci, mi, &helpers))
            .collect();
        for (r, o) in calls {
            reads.extend(r);
            origins.extend(o);
        }
    }
    let mut spec_readers: HashSet<Helper> = HashSet::new();
    let mut walked: HashSet<keys::Origin> = HashSet::new();
    for o in origins {
        match o {
            keys::Origin::Spec(h) => {
                spec_readers.insert(h);
            }
            o => {
                if walked.insert(o.clone()) {
                    keys::names(ci, &o, &mut reads);
                }
            }
        }
    }
    // A spec reader passing its parameter on makes the function it is
    // inside a spec reader too: a few rounds.
    let mut done: HashSet<Helper> = HashSet::new();
    let mut pending = spec_readers;
    for _ in 0..MAX_SPEC_ROUNDS {
        if pending.is_empty() {
            break;
        }
        done.extend(pending.iter().copied());
        let specs: Vec<(Vec<Read>, Vec<Helper>)> = (0..ci.modules.len())
            .into_par_iter()
            .map(|mi| spec_keys(ci, mi, &pending))
            .collect();
        let mut next = HashSet::new();
        for (r, h) in specs {
            reads.extend(r);
            next.extend(h.into_iter().filter(|h| !done.contains(h)));
        }
        pending = next;
    }
    let known: HashSet<&str> = reads.iter().map(|r| r.name.as_str()).collect();
    let listed = lists::find(ci, &known);
    reads.extend(listed);
    merge(reads)
}

/// How many times spec readers are followed out through the functions
/// that pass them their object.
const MAX_SPEC_ROUNDS: usize = 4;

/// What one module's scan finds: reads, helpers, and the origins of names
/// read through a key that walks a collection.
#[derive(Default)]
struct Scanned {
    reads: Vec<Read>,
    helpers: Vec<Helper>,
    origins: Vec<keys::Origin>,
    holders: Vec<passed::Holder>,
}

fn merge(reads: Vec<Read>) -> Vec<EnvVar> {
    let mut by_name: BTreeMap<String, EnvVar> = BTreeMap::new();
    for r in reads {
        let e = by_name.entry(r.name.clone()).or_insert_with(|| EnvVar {
            name: r.name,
            how: Vec::new(),
            default: None,
            sites: Vec::new(),
        });
        if !e.how.iter().any(|h| h == r.how) {
            e.how.push(r.how.to_string());
        }
        if e.default.is_none() {
            e.default = r.default;
        }
        e.sites.push(r.site);
    }
    let mut out: Vec<EnvVar> = by_name.into_values().collect();
    for e in &mut out {
        e.how.sort();
        e.sites.sort();
        e.sites.dedup();
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_NAME_BYTES && !s.bytes().any(|b| b.is_ascii_whitespace())
}

fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && src[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn skip_ws_back(src: &[u8], mut i: usize) -> usize {
    while i > 0 && src[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    i
}

/// The identifier starting at `i`.
fn ident_at(src: &str, i: usize) -> Option<&str> {
    let b = src.as_bytes();
    let end = (i..b.len())
        .find(|&j| !is_ident_byte(b[j]))
        .unwrap_or(b.len());
    (end > i && !b[i].is_ascii_digit()).then(|| &src[i..end])
}

/// Where the bracket opened at `open` closes, skipping quoted strings.
fn closing_bracket(src: &[u8], open: usize) -> Option<usize> {
    let (mut depth, mut i) = (0usize, open);
    let end = src.len().min(open + MAX_PATTERN_BYTES);
    while i < end {
        match src[i] {
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (src[i] == b']').then_some(i);
                }
            }
            q @ (b'"' | b'\'' | b'`') => {
                i += 1;
                while i < end && src[i] != q {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the `}` at `close` opens, going back over quoted keys and defaults.
fn opening_brace(src: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let lo = close.saturating_sub(MAX_PATTERN_BYTES);
    let mut i = close + 1;
    while i > lo {
        i -= 1;
        match src[i] {
            b'}' | b']' | b')' => depth += 1,
            b'{' | b'[' | b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (src[i] == b'{').then_some(i);
                }
            }
            q @ (b'"' | b'\'' | b'`') => {
                // Back to the opening quote (one not escaped).
                loop {
                    if i <= lo {
                        return None;
                    }
                    i -= 1;
                    if src[i] == q && (i == 0 || src[i - 1] != b'\\') {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// A literal right after `?? ` or `|| ` at `i`: the read's default.
fn default_after(src: &str, i: usize) -> Option<serde_json::Value> {
    let b = src.as_bytes();
    let i = skip_ws(b, i);
    let op = src.get(i..i + 2)?;
    if op != "??" && op != "||" {
        return None;
    }
    let i = skip_ws(b, i + 2);
    let q = *b.get(i)?;
    let end = if matches!(q, b'"' | b'\'') {
        let mut j = i + 1;
        while j < b.len() && b[j] != q && j - i < MAX_PATTERN_BYTES {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        j + 1
    } else {
        // A number, `!0`/`!1`, true/false/null.
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b"!.-".contains(&b[j])) {
            j += 1;
        }
        j
    };
    let text = src.get(i..end.min(b.len()))?;
    literal_json(&*parse_snippet(text).ok()?)
}

fn literal_json(e: &Expr) -> Option<serde_json::Value> {
    use serde_json::Value as J;
    match e {
        Expr::Lit(Lit::Str(s)) => Some(J::String(s.value.to_string_lossy().into_owned())),
        Expr::Lit(Lit::Num(n)) => serde_json::Number::from_f64(n.value).map(J::Number),
        Expr::Lit(Lit::Bool(b)) => Some(J::Bool(b.value)),
        Expr::Lit(Lit::Null(_)) => Some(J::Null),
        Expr::Tpl(t) if t.exprs.is_empty() => t
            .quasis
            .first()
            .and_then(|q| q.cooked.as_ref())
            .map(|c| J::String(c.to_string_lossy().into_owned())),
        Expr::Unary(u) if u.op == swc_ecma_ast::UnaryOp::Bang => match &*u.arg {
            Expr::Lit(Lit::Num(n)) => Some(J::Bool(n.value == 0.0)),
            _ => None,
        },
        Expr::Paren(p) => literal_json(&p.expr),
        _ => None,
    }
}

fn scan_module(ci: &CodeIndex, mi: usize, m: &IndexedModule) -> Scanned {
    let src = m.source();
    let b = src.as_bytes();
    let mut reads = Vec::new();
    let mut helpers = Vec::new();
    let mut origins = Vec::new();
    let mut holders = Vec::new();
    let mut ev: Option<Evaluator> = None;
    // The bytes the bracket and pattern scans may read around occurrences,
    // in all: a module made of `process.env[((((…` must not cost its length
    // times the pattern bound.
    let mut budget = SCAN_BUDGET_FACTOR * src.len() + (1 << 20);
    for (at, _) in src.match_indices(NEEDLE) {
        if budget < MAX_PATTERN_BYTES {
            break;
        }
        budget -= MAX_PATTERN_BYTES
            .min(src.len() - at)
            .min(at + MAX_PATTERN_BYTES);
        if at > 0 && is_ident_byte(b[at - 1]) {
            continue;
        }
        let after = at + NEEDLE.len();
        if b.get(after).is_some_and(|&c| is_ident_byte(c)) {
            continue; // `process.envFoo`
        }
        let mut i = skip_ws(b, after);
        if src[i..].starts_with("?.") {
            i += 2;
        } else if b.get(i) == Some(&b'.') {
            i += 1;
        } else if b.get(i) != Some(&b'[') {
            // Not read through a member: maybe destructured, or `in`, or
            // handed to another binding.
            before(src, m, at, &mut reads);
            holders.extend(passed::holder(ci, m, mi, at));
            continue;
        }
        let i = skip_ws(b, i);
        if b.get(i) == Some(&b'[') {
            let Some(close) = closing_bracket(b, i) else {
                continue;
            };
            let (lo, hi) = (i + 1, close);
            let Ok(e) = parse_snippet(&src[lo..hi]) else {
                continue;
            };
            if let Expr::Ident(id) = &*e
                && let Some(h) = helper_param(m, mi, lo as u32, id.sym.as_ref())
            {
                helpers.push(h);
                // A proxy's `get(target, key)` trap is a named method too.
                origins.extend(keys::origin(m, mi, lo as u32, &e));
                continue;
            }
            let ev = ev.get_or_insert_with(|| Evaluator::new(ci));
            match ev.eval(mi, &e, lo as u32, &Vec::new()) {
                Ok(Value::Str(name)) => {
                    if valid_name(&name) {
                        reads.push(Read {
                            name,
                            how: "bracket",
                            default: default_after(src, close + 1),
                            site: Site::at(m, at as u32),
                        });
                    }
                }
                _ => origins.extend(keys::origin(m, mi, lo as u32, &e)),
            }
        } else if let Some(name) = ident_at(src, i) {
            reads.push(Read {
                name: name.to_string(),
                how: "member",
                default: default_after(src, i + name.len()),
                site: Site::at(m, at as u32),
            });
        }
    }
    Scanned {
        reads,
        helpers,
        origins,
        holders,
    }
}

/// `{A, B: b, C = "x"} = process.env` and `"NAME" in process.env`, read
/// backwards from the occurrence at `at`.
fn before(src: &str, m: &IndexedModule, at: usize, reads: &mut Vec<Read>) {
    let b = src.as_bytes();
    let end = skip_ws_back(b, at);
    if src[..end].ends_with(" in") || src[..end].ends_with("\"in") || src[..end].ends_with("'in") {
        let q = skip_ws_back(b, end - 2);
        if q >= 2 && matches!(b[q - 1], b'"' | b'\'') {
            let quote = b[q - 1];
            let start = src[..q - 1].rfind(quote as char);
            if let Some(s) = start
                && let Some(name) = src.get(s + 1..q - 1)
                && valid_name(name)
                && !name.contains('\\')
            {
                reads.push(Read {
                    name: name.to_string(),
                    how: "in",
                    default: None,
                    site: Site::at(m, at as u32),
                });
            }
        }
        return;
    }
    // `=`, and not `==`, `=>`, `!=`, `<=`…
    if end == 0 || b[end - 1] != b'=' {
        return;
    }
    if end >= 2 && b"=!<>+-*/%&|^?".contains(&b[end - 2]) {
        return;
    }
    let close = skip_ws_back(b, end - 1);
    if close == 0 || b[close - 1] != b'}' {
        return;
    }
    let Some(open) = opening_brace(b, close - 1) else {
        return;
    };
    let text = format!("({}=process.env)", &src[open..close]);
    let Ok(e) = parse_snippet(&text) else { return };
    let Expr::Paren(p) = &*e else { return };
    let Expr::Assign(a) = &*p.expr else { return };
    let AssignTarget::Pat(pat) = &a.left else {
        return;
    };
    let swc_ecma_ast::AssignTargetPat::Object(o) = pat else {
        return;
    };
    // The snippet's byte positions start at 1 and carry the `(`.
    let offset = |lo: swc_common::BytePos| (open + (lo.0 as usize).saturating_sub(2)) as u32;
    for prop in &o.props {
        let (name, lo, default) = match prop {
            ObjectPatProp::Assign(a) => (
                a.key.sym.to_string(),
                a.key.span.lo,
                a.value.as_deref().and_then(literal_json),
            ),
            ObjectPatProp::KeyValue(kv) => {
                let name = match &kv.key {
                    PropName::Ident(i) => i.sym.to_string(),
                    PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                    _ => continue,
                };
                let default = match &*kv.value {
                    Pat::Assign(a) => literal_json(&a.right),
                    _ => None,
                };
                (name, kv.key.span().lo, default)
            }
            ObjectPatProp::Rest(_) => continue,
        };
        if valid_name(&name) {
            reads.push(Read {
                name,
                how: "destructured",
                default,
                site: Site::at(m, offset(lo)),
            });
        }
    }
}

/// When `ident` at `offset` is a parameter of an enclosing function (the
/// innermost few), that function and the parameter's position.
fn helper_param(m: &IndexedModule, mi: usize, offset: u32, ident: &str) -> Option<Helper> {
    let defs = m.index.definitions.get(ident)?;
    let mut f = m.index.enclosing_function(offset);
    // An arrow inside the helper (`() => process.env[e]`) still reads the
    // helper's parameter.
    for _ in 0..3 {
        let id = f?;
        if defs
            .iter()
            .any(|d| d.kind == DefKind::Param && d.in_function == Some(id))
        {
            let func = &m.index.functions[id as usize];
            func.name.as_ref()?;
            let param = params_of(m, id)?.iter().position(|p| p == ident)?;
            return Some(Helper {
                module: mi,
                function: id,
                param,
            });
        }
        f = m.index.functions[id as usize].parent;
    }
    None
}

/// The plain parameter names of function `id`, in order (a pattern is "").
fn params_of(m: &IndexedModule, id: FnId) -> Option<Vec<String>> {
    let f = &m.index.functions[id as usize];
    let text = m.source().get(f.lo as usize..f.body_lo as usize)?;
    // The head alone, closed with an empty body, parses on its own.
    let snippet = match f.kind {
        FnKind::Method => format!("({{{text}{{}}}})"),
        FnKind::Arrow => format!("({text}{{}})"),
        _ => format!("({text}{{}})"),
    };
    let e = parse_snippet(&snippet).ok()?;
    let mut e: &Expr = &e;
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    let name = super::tools::objects::plain_name;
    match e {
        Expr::Fn(f) => Some(f.function.params.iter().map(|p| name(&p.pat)).collect()),
        Expr::Arrow(a) => Some(a.params.iter().map(name).collect()),
        Expr::Object(o) => match o.props.first()? {
            swc_ecma_ast::PropOrSpread::Prop(p) => match &**p {
                swc_ecma_ast::Prop::Method(mp) => {
                    Some(mp.function.params.iter().map(|p| name(&p.pat)).collect())
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// The local names that denote one of `targets` in module `mi`: its own
/// functions, and imports of another chunk's; each with the parameter
/// positions that matter.
fn local_names<'c>(
    ci: &'c CodeIndex,
    mi: usize,
    targets: &HashSet<Helper>,
) -> HashMap<&'c str, Vec<usize>> {
    let m = &ci.modules[mi];
    let mut local: HashMap<&str, Vec<usize>> = HashMap::new();
    for h in targets.iter().filter(|h| h.module == mi) {
        if let Some(n) = &m.index.functions[h.function as usize].name
            && m.index.function_named(n).map(|(id, _)| id) == Some(h.function)
        {
            local.entry(n.as_str()).or_default().push(h.param);
        }
    }
    // Only an import from a helper's own chunk can denote it: the chunk an
    // import names is looked up once per source (a chunk imports dozens of
    // names from each of a few chunks), and the import is followed only
    // into a helper's chunk.
    let helper_modules: HashSet<usize> = targets.iter().map(|h| h.module).collect();
    let mut source_of: HashMap<&str, Option<usize>> = HashMap::new();
    for imp in &m.index.imports {
        // The name denotes what its first import binds (as `resolve_function`
        // follows it).
        let Some(first) = ci.import_named(mi, &imp.local) else {
            continue;
        };
        let from = *source_of
            .entry(first.source.as_str())
            .or_insert_with(|| ci.resolve_import_position(m, &first.source));
        if !from.is_some_and(|t| helper_modules.contains(&t)) {
            continue;
        }
        if let Some((t, function)) = ci.resolve_function(mi, &imp.local) {
            for h in targets
                .iter()
                .filter(|h| h.module == t && h.function == function)
            {
                local.entry(imp.local.as_str()).or_default().push(h.param);
            }
        }
    }
    local
}

/// Calls in module `mi` of a helper, each reading the variable named by its
/// argument; and the spec readers found on the way (see [`spec_reader`]).
fn helper_calls(
    ci: &CodeIndex,
    mi: usize,
    helpers: &HashSet<Helper>,
) -> (Vec<Read>, Vec<keys::Origin>) {
    let m = &ci.modules[mi];
    let local = local_names(ci, mi, helpers);
    if local.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut ev: Option<Evaluator> = None;
    let mut out = Vec::new();
    let mut readers = Vec::new();
    for c in m.index.calls.iter().filter(|c| !c.member) {
        let Some(params) = local.get(c.name.as_str()) else {
            continue;
        };
        for &p in params {
            let arg = match p {
                0 => c.arg0.as_ref(),
                1 => c.arg1.as_ref(),
                _ => None,
            };
            let Some(arg) = arg else { continue };
            let name = match (arg.string(), arg.ident()) {
                (Some(s), _) => Some(s.to_string()),
                (None, Some(id)) => {
                    let ev = ev.get_or_insert_with(|| Evaluator::new(ci));
                    match ev.eval_span(mi, arg.lo, arg.hi) {
                        Ok(Value::Str(s)) => Some(s),
                        _ => {
                            readers.extend(spec_reader(m, mi, c, id).map(keys::Origin::Spec));
                            // A key walking a collection: `read(key, …)`
                            // inside `for (const [key] of Object.entries(X))`.
                            readers.extend(keys::ident_origin(m, mi, arg.lo, id));
                            None
                        }
                    }
                }
                _ => None,
            };
            if let Some(name) = name.filter(|n| valid_name(n)) {
                out.push(Read {
                    name,
                    how: "helper",
                    default: None,
                    site: Site::at(m, arg.lo),
                });
            }
        }
    }
    (out, readers)
}

/// A typed environment: an object of specs keyed by variable names
/// (`{NAME: codec.bool(), …}`, often assembled from namespaces), read
/// through a function that hands each key to a helper with its spec —
/// `function wrap(specs){ … get: (t, key) => read(key, specs[key]) … }`
/// where `read(name, spec)` reads `process.env[name]`. A helper called with
/// a name `key` and `X[key]`, `X` a parameter of an enclosing function,
/// makes that function a spec reader: the keys of the object each of its
/// calls passes there are variables read.
fn spec_reader(
    m: &IndexedModule,
    mi: usize,
    c: &crate::js::index::Call,
    key: &str,
) -> Option<Helper> {
    let text = m.source().get(c.lo as usize..c.hi as usize)?;
    let b = text.as_bytes();
    let pat = format!("[{key}]");
    let obj = text.match_indices(pat.as_str()).find_map(|(i, _)| {
        let start = b[..i]
            .iter()
            .rposition(|&x| !is_ident_byte(x))
            .map_or(0, |j| j + 1);
        (start < i).then(|| &text[start..i])
    })?;
    let defs = m.index.definitions.get(obj)?;
    let mut f = m.index.enclosing_function(c.lo);
    for _ in 0..4 {
        let id = f?;
        if defs
            .iter()
            .any(|d| d.kind == DefKind::Param && d.in_function == Some(id))
        {
            m.index.functions[id as usize].name.as_ref()?;
            let param = params_of(m, id)?.iter().position(|p| p == obj)?;
            return (param < 2).then_some(Helper {
                module: mi,
                function: id,
                param,
            });
        }
        f = m.index.functions[id as usize].parent;
    }
    None
}

/// How deep spreads, imports and namespaces are followed for a spec
/// object's keys.
const MAX_SPEC_DEPTH: usize = 6;

/// The longest object literal read for a spec object's keys.
const MAX_SPEC_BYTES: usize = 1 << 20;

/// Calls in module `mi` of a spec reader: the keys of the spec object each
/// passes, as variables read.
fn spec_keys(ci: &CodeIndex, mi: usize, readers: &HashSet<Helper>) -> (Vec<Read>, Vec<Helper>) {
    let m = &ci.modules[mi];
    let local = local_names(ci, mi, readers);
    let mut out = Vec::new();
    let mut more = Vec::new();
    if local.is_empty() {
        return (out, more);
    }
    for c in m.index.calls.iter().filter(|c| !c.member) {
        let Some(params) = local.get(c.name.as_str()) else {
            continue;
        };
        for &p in params {
            let arg = match p {
                0 => c.arg0.as_ref(),
                _ => c.arg1.as_ref(),
            };
            let Some(arg) = arg else { continue };
            let mut seen = HashSet::new();
            match arg.ident().map(|i| &**i) {
                Some(id) => match keys::keys_origin(m, mi, arg.lo, id, None) {
                    // Passed on from a parameter: that function reads it.
                    keys::Origin::Spec(h) => more.push(h),
                    _ => keys::object_keys(ci, mi, id, "registry", 0, &mut seen, &mut out),
                },
                None => keys::literal_keys(ci, mi, arg.lo, arg.hi, "registry", &mut seen, &mut out),
            }
        }
    }
    (out, more)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;
    use serde_json::json;

    fn env(src: &str) -> Vec<EnvVar> {
        find(&testjs::script(src))
    }

    fn get<'a>(v: &'a [EnvVar], n: &str) -> &'a EnvVar {
        v.iter()
            .find(|e| e.name == n)
            .unwrap_or_else(|| panic!("{n} missing from {:?}", names(v)))
    }

    fn names(v: &[EnvVar]) -> Vec<&str> {
        v.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn member_reads_with_their_defaults() {
        let v = env(
            r#"var a = process.env.ALPHA ?? "one", b = process.env?.BETA || 3;
function t(x) { return !!x; }
if (t(process.env.GAMMA)) { process.env . DELTA; }
var notEnv = myprocess.env.NOPE, other = process.envy;"#,
        );
        assert_eq!(names(&v), ["ALPHA", "BETA", "DELTA", "GAMMA"]);
        assert_eq!(get(&v, "ALPHA").default, Some(json!("one")));
        assert_eq!(get(&v, "BETA").default, Some(json!(3.0)));
        assert_eq!(get(&v, "GAMMA").default, None);
        assert_eq!(get(&v, "GAMMA").how, ["member"]);
        let s = &get(&v, "ALPHA").sites[0];
        assert_eq!((s.raw_line, s.offset), (1, 8));
    }

    #[test]
    fn destructured_with_defaults_and_renames() {
        let v = env(
            r#"const { ONE, TWO: two, THREE = "x", "FOUR": four = !0, ...rest } = process.env;
var {} = process.env; let q = a == process.env;"#,
        );
        assert_eq!(names(&v), ["FOUR", "ONE", "THREE", "TWO"]);
        assert_eq!(get(&v, "THREE").default, Some(json!("x")));
        assert_eq!(get(&v, "FOUR").default, Some(json!(true)));
        assert!(v.iter().all(|e| e.how == ["destructured"]));
        // The site is the key's own position.
        assert_eq!(get(&v, "TWO").sites[0].offset, 13);
    }

    #[test]
    fn bracket_reads_with_constants_evaluated() {
        let v = env(r#"var K = "KAPPA", P = "PR" + "EFIX_X";
var a = process.env["LAMBDA"], b = process.env[K], c = process.env?.[P] ?? "d";
var d = process.env[Math.random() > 0.5 ? K : "MU"], e = process.env[unknown];
var f = "IN_CHECK" in process.env;"#);
        assert_eq!(names(&v), ["IN_CHECK", "KAPPA", "LAMBDA", "PREFIX_X"]);
        assert_eq!(get(&v, "KAPPA").how, ["bracket"]);
        assert_eq!(get(&v, "PREFIX_X").default, Some(json!("d")));
        assert_eq!(get(&v, "IN_CHECK").how, ["in"]);
    }

    #[test]
    fn helpers_taking_the_name() {
        let v = env(
            r#"function envOn(e) { let v = process.env[e]; return v === "1" || v === "true"; }
var envOr = (fallback, name) => process.env[name] ?? fallback;
function nested(e) { return [1].map(() => process.env[e]); }
var NAME = "HELPER_CONST";
envOn("HELPER_A"); envOn(NAME); envOr(0, "HELPER_B"); nested("HELPER_C");
envOn(computeIt()); other("NOT_ENV");"#,
        );
        assert_eq!(
            names(&v),
            ["HELPER_A", "HELPER_B", "HELPER_C", "HELPER_CONST"]
        );
        assert!(v.iter().all(|e| e.how == ["helper"]));
    }

    #[test]
    fn helpers_imported_from_another_chunk() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-env.js",
                "function h(e) { return process.env[e]; }\nexport { h as readEnv };",
            ),
            (
                "/$bunfs/root/chunk-use.js",
                "import { readEnv as r } from \"./chunk-env.js\";\nr(\"SPLIT_NAME\"); r(\"SPLIT_TWO\");",
            ),
        ]);
        let v = find(&ci);
        assert_eq!(names(&v), ["SPLIT_NAME", "SPLIT_TWO"]);
        assert!(v[0].sites[0].module.ends_with("chunk-use.js"));
    }

    /// A typed environment as code-split builds write one: namespaces of
    /// specs built by the bundle's export helper, spread into one object,
    /// handed to a function whose proxy reads each key through a helper.
    #[test]
    fn typed_environments_read_through_a_spec_proxy() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-codec.js",
                "var codec = { str: () => 1, bool: () => 2 };\nexport { codec as L };",
            ),
            (
                "/$bunfs/root/chunk-spec.js",
                "import { L } from \"./chunk-codec.js\";\nvar ns = {};\nexp(ns, { SPEC_ONE: () => a, SPEC_TWO: () => b });\nvar a = L.str(), b = L.bool();\nvar shape = { ...ns };\nexport { shape as inboxShape };",
            ),
            (
                "/$bunfs/root/chunk-env.js",
                "import { inboxShape as other } from \"./chunk-spec.js\";\nfunction one(name, spec) { return () => spec.parse(process.env[name]); }\nfunction wrap(specs, base) { return new Proxy({}, { get: (t, key, r) => one(key, specs[key])() }); }\nvar all = { ...other, SPEC_THREE: L.str(), \"SPEC_FOUR\": L.bool() };\nvar env = wrap(all, null), inbox = wrap(import.meta.require(\"/$bunfs/root/chunk-spec.js\").inboxShape, null);\nfunction notSpec(x, y) { return one(y, x[y]); }\nnotSpec(lookup(), \"ignored\");",
            ),
        ]);
        let v = find(&ci);
        // `notSpec` hands a computed object: nothing is known of its keys.
        assert_eq!(
            names(&v),
            ["SPEC_FOUR", "SPEC_ONE", "SPEC_THREE", "SPEC_TWO"]
        );
        assert_eq!(get(&v, "SPEC_ONE").how, ["registry"]);
        // The site is the key in the namespace's table.
        let s = &get(&v, "SPEC_ONE").sites[0];
        assert!(s.module.ends_with("chunk-spec.js"), "{}", s.module);
    }

    /// A typed environment as single-bundle builds write one: a getter per
    /// key of the specs, each reading `process.env[key]`.
    #[test]
    fn typed_environments_read_through_getters_per_key() {
        let v = env(r#"var codec = { str: () => 1, bool: () => 2 };
var nsA = {}, nsB = {};
exp(nsA, { GET_ONE: () => a1, GET_TWO: () => a2 });
exp(nsB, { GET_THREE: () => b1, GET_SEVEN: () => b2 });
var a1 = codec.str(), a2 = codec.bool(), b1 = codec.str(), b2 = codec.str();
var inner = {};
exp(inner, { innerShape: () => shape });
var shape = { GET_SIX: codec.str() };
function makeEnv(specs, proto) {
  let out = Object.create(proto);
  for (let [key, spec] of Object.entries(specs))
    Object.defineProperty(out, key, { get: () => spec.parse(process.env[key]) });
  return out;
}
var all = { ...nsA, ...nsB, GET_FOUR: codec.str() };
var innerShape = (init(), toNs(inner)).innerShape;
var env = makeEnv(all, null), other = makeEnv(innerShape, null);
var local = { GET_FIVE: 1 };
Object.keys(local).forEach((k) => { if (process.env[k]) use(k); });
function trapped(specs) {
  return new Proxy({}, { get(t, k) { return specs[k].parse(process.env[k]); } });
}
trapped({ GET_NINE: codec.str() });
function notWalked(x) { for (let [k] of Object.entries(x)) process.env[k]; }
notWalked(compute());"#);
        assert_eq!(
            names(&v),
            [
                "GET_FIVE",
                "GET_FOUR",
                "GET_NINE",
                "GET_ONE",
                "GET_SEVEN",
                "GET_SIX",
                "GET_THREE",
                "GET_TWO"
            ]
        );
        assert!(
            v.iter().all(|e| e.how == ["registry"]),
            "{:?}",
            v.iter().map(|e| &e.how).collect::<Vec<_>>()
        );
        // The site is the key in its namespace's table.
        assert_eq!(get(&v, "GET_ONE").sites[0].raw_line, 3);
    }

    /// A typed environment whose getters come from a helper taking the key,
    /// its object handed on through a second function, lazily or not.
    #[test]
    fn typed_environments_handed_on_to_a_getter_helper() {
        let v = env(
            r#"function getter(name, spec) { return () => spec.parse(process.env[name]); }
function lazy(specs, proto) {
  return new Proxy({}, { get: (t, key) => has(specs, key) ? getter(key, specs[key])() : undefined });
}
function build(specs, proto, isLazy = flag()) {
  let out = isLazy ? lazy(specs, proto) : Object.create(proto);
  for (let [k, s] of isLazy ? [] : Object.entries(specs)) Object.defineProperty(out, k, { get: getter(k, s) });
  return out;
}
var env = build({ HAND_ONE: codec.str(), HAND_TWO: codec.bool() }, null);
getter("HAND_THREE", codec.str());"#,
        );
        assert_eq!(names(&v), ["HAND_ONE", "HAND_THREE", "HAND_TWO"]);
        assert_eq!(get(&v, "HAND_ONE").how, ["registry"]);
        assert_eq!(get(&v, "HAND_THREE").how, ["helper"]);
    }

    /// The environment handed to a parameter, or held by another binding
    /// (or a copy): the names read off it in its scope.
    #[test]
    fn names_read_through_a_parameter_or_an_alias() {
        let v = env(
            r#"function timeoutOf(e = process.env) { return e.PASS_DEFAULT ?? "30"; }
function keyMode(opts, env) { let a = env.PASS_TWO; [1].map((env) => env.NOT_THIS); return env?.PASS_THREE; }
keyMode({}, process.env);
function child() { let c = { ...process.env, SET_FOR_CHILD: "1" }; c.WRITTEN = "x"; return c.ALIAS_ONE; }
function other() { const e = process.env; return e["ignored"], e.ALIAS_TWO, e.hasOwnProperty("x"); }
function unrelated(e) { return e.NOT_ENV; }"#,
        );
        assert_eq!(
            names(&v),
            [
                "ALIAS_ONE",
                "ALIAS_TWO",
                "PASS_DEFAULT",
                "PASS_THREE",
                "PASS_TWO"
            ]
        );
        assert_eq!(get(&v, "PASS_DEFAULT").how, ["passed"]);
        assert_eq!(get(&v, "PASS_DEFAULT").default, Some(json!("30")));
        assert_eq!(get(&v, "PASS_TWO").how, ["passed"]);
        assert_eq!(get(&v, "ALIAS_ONE").how, ["alias"]);
        assert_eq!(get(&v, "ALIAS_TWO").how, ["alias"]);
    }

    /// A list of names most of which are read elsewhere: the others are
    /// variables too. A list of other words is not.
    #[test]
    fn lists_of_names_mostly_read_elsewhere() {
        let v = env(r#"process.env.LIST_A; process.env.LIST_B;
var allowed = new Set(["LIST_A", "LIST_B", "LIST_C"]);
var methods = ["GET", "POST", "LIST_A", "PUT"], short = ["LIST_A", "LIST_D"];
var mixed = ["LIST_A", "LIST_B", "lower case"];"#);
        assert_eq!(names(&v), ["LIST_A", "LIST_B", "LIST_C"]);
        assert_eq!(get(&v, "LIST_C").how, ["list"]);
        assert_eq!(get(&v, "LIST_A").how, ["list", "member"]);
    }

    /// Names in tables walked by the key: an array of names, an array of
    /// objects whose field names the variable.
    #[test]
    fn names_in_tables_read_through_the_key() {
        let v = env(
            r#"var NAMES = ["TAB_ONE", "TAB_TWO"], MORE = new Set(["TAB_THREE", ...NAMES]);
var PAIRS = [{ modelVar: "TAB_FOUR", capsVar: "TAB_FIVE" }, { modelVar: "TAB_SIX" }];
function anySet() { return NAMES.some((n) => !!process.env[n]); }
for (const n of MORE) delete process.env[n];
function caps() { for (let r of PAIRS) { let a = process.env[r.modelVar], b = process.env[r.capsVar]; } }
var NOT_READ = ["TAB_NOPE"];"#,
        );
        assert_eq!(
            names(&v),
            [
                "TAB_FIVE",
                "TAB_FOUR",
                "TAB_ONE",
                "TAB_SIX",
                "TAB_THREE",
                "TAB_TWO"
            ]
        );
        assert!(v.iter().all(|e| e.how == ["table"]));
    }

    #[test]
    fn one_row_per_name_with_every_way_and_site() {
        let v = env(r#"process.env.SAME; var {SAME} = process.env; process.env["SAME"];"#);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].how, ["bracket", "destructured", "member"]);
        assert_eq!(v[0].sites.len(), 3);
    }

    #[test]
    fn hostile_shapes_end_quietly() {
        // Unclosed brackets and braces, a pattern that never opens, a huge
        // bracket: nothing is read, nothing panics.
        let long = format!("process.env[{}]", "(".repeat(10_000));
        for src in [
            "process.env[",
            "}=process.env",
            "x = process.env[\"unterminated",
            long.as_str(),
            "process.env.",
        ] {
            let ci = crate::js::code::CodeIndex::build(
                &crate::bun::BunGraph::single_js(testjs::SCRIPT, src.as_bytes()),
                &crate::bun::decode::Budget::new(1 << 20),
            );
            if let Ok(ci) = ci {
                assert!(find(&ci).is_empty(), "{src:.40}");
            }
        }
    }
}
