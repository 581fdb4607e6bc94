//! The model ids and aliases the build knows.
//!
//! A model id is a string literal shaped like one: `claude-` then a family
//! word and a version (`claude-opus-4-6`, `claude-haiku-4-5-20251001`) or a
//! version and a family (`claude-3-5-sonnet`), optionally a date, `latest`
//! or a variant word after it. Every such literal of the JavaScript is
//! listed (the modules' bytes are scanned, so none is missed), and the
//! place of each — read in the parsed definition holding it — says how the
//! build uses it:
//!
//! | used as | place |
//! |---|---|
//! | default | the value of a `default…` property (`opus: {default: "claude-…"}`: the alias's default) |
//! | alias | the value of a key that is an alias of the id (`opus: "claude-opus-…"`, `["opus-4-8", "claude-opus-4-8"]`, `{"claude-…": "sonnet5"}`) |
//! | catalogue / pricing / limits | the `id` of an object (or a key whose value is an object) describing the model: pricing when it has price or cost fields, limits when it has token/context limits |
//! | fallback | the right side of `??` / `||` |
//! | check | compared (`===`, `includes`, `startsWith` …) |
//! | table | the value of another key (per provider, per task …) |
//! | list | an element of an array |
//! | constant / returned / argument | a binding's value, a function's result, a call's argument |
//! | text | inside another string (a message naming a model) |
//! | other | anywhere else (a top-level statement) |

use super::Site;
use super::tools::objects::{key_name, snippets_with};
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    pub aliases: Vec<String>,
    /// Where it is used: default, alias, catalogue, pricing, limits,
    /// fallback, check, table, list, …
    #[serde(rename = "used_as", alias = "uses")]
    pub uses: Vec<String>,
    pub sites: Vec<Site>,
}

/// Whether `s` is shaped like a model id: `claude-` then a family word and
/// a version, or a version and a family word (or a bare version); a
/// version part is one or two digits, dotted or not (`1.3`); then at most
/// two of a date, a word (`latest`, `fast`) or a context size (`100k`);
/// and, in a provider's form, `@` and a date.
pub fn is_model_id(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("claude-") else {
        return false;
    };
    let digits =
        |t: &str, n: usize| (1..=n).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
    let rest = match rest.split_once('@') {
        Some((r, d)) if d.len() == 8 && digits(d, 8) => r,
        Some(_) => return false,
        None => rest,
    };
    let toks: Vec<&str> = rest.split('-').collect();
    let num = |t: &str| match t.split_once('.') {
        Some((a, b)) => digits(a, 2) && digits(b, 2),
        None => digits(t, 2),
    };
    let word = |t: &str| t.len() >= 3 && t.bytes().all(|b| b.is_ascii_lowercase());
    let date = |t: &str| t.len() == 8 && digits(t, 8);
    let size = |t: &str| t.len() >= 2 && t.ends_with('k') && digits(&t[..t.len() - 1], 4);
    let mut i = 0;
    let nums = |i: &mut usize| {
        let start = *i;
        while *i < toks.len() && *i - start < 2 && num(toks[*i]) {
            *i += 1;
        }
        *i - start
    };
    if nums(&mut i) > 0 {
        // `claude-3-5-sonnet`, or a bare version (`claude-2`, `claude-1.3`).
        if i < toks.len() && word(toks[i]) {
            i += 1;
        }
    } else if i < toks.len() && word(toks[i]) {
        i += 1;
        if nums(&mut i) == 0 {
            return false;
        }
    } else {
        return false;
    }
    // A date, `latest`, a variant word or a context size, at most two.
    let tail = &toks[i..];
    tail.len() <= 2 && tail.iter().all(|t| date(t) || word(t) || size(t))
}

/// A word shaped like a model id.
struct Mention {
    /// The offset of the opening quote, or of the word when it is not
    /// quoted.
    at: u32,
    id: String,
}

/// Every word shaped like a model id in `src`.
fn scan(src: &str) -> Vec<Mention> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(b, b"claude-") {
        // A word of its own: not the tail of a name, a path or a URL.
        let prev = at.checked_sub(1).map(|i| b[i]);
        if prev.is_some_and(|c| c.is_ascii_alphanumeric() || b"_$-./@:\\".contains(&c)) {
            continue;
        }
        // The whole word: letters, digits and dashes, a dot between digits
        // (`claude-1.3`), and a provider's `@date`.
        let mut end = at;
        while end < b.len() {
            let c = b[end];
            let digit_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
            if c.is_ascii_alphanumeric()
                || c == b'-'
                || ((c == b'.' || c == b'@') && digit_at(end + 1) && end > at && digit_at(end - 1))
            {
                end += 1;
            } else {
                break;
            }
        }
        let id = &src[at..end];
        if !is_model_id(id) {
            continue;
        }
        let quote = prev.filter(|c| b"\"'`".contains(c));
        out.push(Mention {
            at: if quote.is_some() { at - 1 } else { at } as u32,
            id: id.to_string(),
        });
    }
    out
}

/// What is gathered about one id.
#[derive(Default)]
struct Gathered {
    /// Seen as a literal of its own, other than in a substring test.
    established: bool,
    aliases: BTreeSet<String>,
    uses: BTreeSet<String>,
    sites: Vec<Site>,
}

/// How one literal is used: (used as, alias).
type Use = (&'static str, Option<String>);

pub fn find(ci: &CodeIndex) -> Vec<Model> {
    // How each literal is used, by (module, offset), from the parsed
    // definitions holding them.
    let mut uses: HashMap<(usize, u32), Use> = HashMap::new();
    for sn in snippets_with(ci, &["\"claude-", "'claude-", "`claude-"]) {
        let mut v = Places {
            stack: Vec::new(),
            found: Vec::new(),
        };
        crate::js::depth::with_stack(|| sn.expr.visit_with(&mut v));
        for (lo, u) in v.found {
            uses.insert((sn.module, sn.base + lo.saturating_sub(1)), u);
        }
    }
    let mut by_id: BTreeMap<String, Gathered> = BTreeMap::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        let strings = &m.index.strings;
        for Mention { at: off, id, .. } in scan(m.source()) {
            // A literal of its own (the index's string starts at the quote
            // and holds exactly the id), or a word inside a longer string
            // (prose, a message); in a regular expression or a comment it
            // is neither.
            let k = strings.partition_point(|s| s.lo <= off);
            let own = k > 0 && strings[k - 1].lo == off && *strings[k - 1].value == *id;
            let inside = !own
                && strings[k.saturating_sub(8)..k]
                    .iter()
                    .any(|s| s.lo < off && s.hi > off);
            if !own && !inside {
                continue;
            }
            let e = by_id.entry(id).or_default();
            let (used, alias) = match (own, uses.get(&(mi, off))) {
                (false, _) => ("text", None),
                (true, Some((u, a))) => (*u, a.clone()),
                (true, None) => ("other", None),
            };
            // A literal compared in full or placed in the build's tables
            // makes the id; a substring test (`includes`, `startsWith`) or
            // prose alone does not.
            e.established |= own && used != "prefix";
            let used = if used == "prefix" { "check" } else { used };
            e.uses.insert(used.to_string());
            e.aliases.extend(alias);
            e.sites.push(Site::at(m, off));
        }
    }
    by_id.retain(|_, g| g.established);
    by_id
        .into_iter()
        .map(|(id, g)| {
            let Gathered {
                aliases,
                uses: used,
                mut sites,
                ..
            } = g;
            sites.sort();
            sites.dedup();
            Model {
                id,
                aliases: aliases.into_iter().collect(),
                uses: used.into_iter().collect(),
                sites,
            }
        })
        .collect()
}

/// Whether `a` names the model `id` for short: the id without `claude-`
/// or its leading part (`opus-4-8`), its family word (`opus`), or that
/// without dashes (`sonnet5`).
fn is_alias(a: &str, id: &str) -> bool {
    let Some(rest) = id.strip_prefix("claude-") else {
        return false;
    };
    let a = a.replace('_', "-");
    if a.len() < 3
        || a.starts_with("claude-")
        || !a
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return false;
    }
    rest == a
        || rest.starts_with(&format!("{a}-"))
        || rest.split('-').any(|t| t == a)
        || rest.replace('-', "") == a
}

/// Where the visitor is.
enum Ctx {
    /// The value of a property.
    Key(String),
    /// An object literal, with its keys.
    Obj(Vec<String>),
    /// An array element: its index, and the first element when a string.
    Elem(usize, Option<String>),
    /// A side of a binary operator: the operator, whether the right side.
    Bin(BinaryOp, bool),
    /// An argument of a call of a method (or `""`).
    Arg(String),
    Return,
    Decl,
}

struct Places {
    stack: Vec<Ctx>,
    /// (span low of the literal, its use).
    found: Vec<(u32, Use)>,
}

fn keys_of(o: &ObjectLit) -> Vec<String> {
    o.props
        .iter()
        .filter_map(|p| match p {
            PropOrSpread::Prop(p) => match &**p {
                Prop::KeyValue(kv) => key_name(&kv.key),
                Prop::Shorthand(i) => Some(i.sym.to_string()),
                _ => None,
            },
            PropOrSpread::Spread(_) => None,
        })
        .collect()
}

/// What an object describing a model is, from its keys.
fn table_kind(keys: &[String]) -> &'static str {
    let has = |ws: &[&str]| {
        keys.iter()
            .any(|k| ws.iter().any(|w| k.to_ascii_lowercase().contains(w)))
    };
    if has(&["price", "cost", "per_million", "permillion"]) {
        "pricing"
    } else if has(&[
        "limit",
        "max_tokens",
        "maxtokens",
        "context",
        "window",
        "max_output",
    ]) {
        "limits"
    } else {
        "catalogue"
    }
}

impl Places {
    fn classify(&self, id: &str) -> Use {
        let mut it = self.stack.iter().rev();
        match it.next() {
            Some(Ctx::Key(k)) => {
                let kl = k.to_ascii_lowercase();
                // The key of the object holding this property, when it is
                // an alias (`opus: {default: "claude-…"}`).
                let outer = it.find_map(|c| match c {
                    Ctx::Key(o) => Some(o.clone()),
                    _ => None,
                });
                let outer_alias = outer.filter(|o| is_alias(o, id));
                if kl.contains("default") {
                    return ("default", outer_alias);
                }
                if kl.contains("fallback") {
                    return ("fallback", outer_alias);
                }
                if is_alias(k, id) {
                    return ("alias", Some(k.clone()));
                }
                if k == "id" {
                    let keys = self.stack.iter().rev().find_map(|c| match c {
                        Ctx::Obj(keys) => Some(keys.as_slice()),
                        _ => None,
                    });
                    return (table_kind(keys.unwrap_or(&[])), None);
                }
                ("table", None)
            }
            Some(Ctx::Elem(1, Some(first))) if is_alias(first, id) => {
                ("alias", Some(first.clone()))
            }
            Some(Ctx::Elem(..)) => ("list", None),
            Some(Ctx::Bin(op, right)) => match op {
                BinaryOp::NullishCoalescing | BinaryOp::LogicalOr if *right => ("fallback", None),
                BinaryOp::EqEq | BinaryOp::EqEqEq | BinaryOp::NotEq | BinaryOp::NotEqEq => {
                    ("check", None)
                }
                _ => ("other", None),
            },
            Some(Ctx::Arg(m)) => match m.as_str() {
                // A substring test: the literal may be a prefix.
                "includes" | "startsWith" | "endsWith" | "indexOf" | "lastIndexOf" => {
                    ("prefix", None)
                }
                "has" => ("check", None),
                _ => ("argument", None),
            },
            Some(Ctx::Return) => ("returned", None),
            // A snippet is a definition's value: the literal alone is the
            // binding's value.
            Some(Ctx::Decl) | None => ("constant", None),
            Some(Ctx::Obj(_)) => ("other", None),
        }
    }

    fn within(&mut self, c: Ctx, f: impl FnOnce(&mut Self)) {
        self.stack.push(c);
        crate::js::depth::guard(|| f(self));
        self.stack.pop();
    }
}

impl Visit for Places {
    fn visit_str(&mut self, s: &Str) {
        let v = s.value.to_string_lossy();
        if is_model_id(&v) {
            let u = self.classify(&v);
            self.found.push((s.span.lo.0, u));
        }
    }
    fn visit_object_lit(&mut self, o: &ObjectLit) {
        self.within(Ctx::Obj(keys_of(o)), |v| o.visit_children_with(v));
    }
    fn visit_key_value_prop(&mut self, kv: &KeyValueProp) {
        // A model id as a key: a table by model, its value says of what.
        if let PropName::Str(s) = &kv.key {
            let k = s.value.to_string_lossy();
            if is_model_id(&k) {
                let u = match &*kv.value {
                    Expr::Object(o) => (table_kind(&keys_of(o)), None),
                    Expr::Lit(Lit::Str(a)) if is_alias(&a.value.to_string_lossy(), &k) => {
                        ("alias", Some(a.value.to_string_lossy().into_owned()))
                    }
                    _ => ("table", None),
                };
                self.found.push((s.span.lo.0, u));
            }
        }
        let Some(k) = key_name(&kv.key) else {
            return kv.value.visit_with(self);
        };
        self.within(Ctx::Key(k), |v| kv.value.visit_with(v));
    }
    fn visit_array_lit(&mut self, a: &ArrayLit) {
        let first = a
            .elems
            .first()
            .and_then(|e| match e.as_ref().map(|e| &*e.expr) {
                Some(Expr::Lit(Lit::Str(s))) => Some(s.value.to_string_lossy().into_owned()),
                _ => None,
            });
        for (i, e) in a.elems.iter().enumerate() {
            if let Some(e) = e {
                self.within(Ctx::Elem(i, first.clone()), |v| e.visit_with(v));
            }
        }
    }
    fn visit_bin_expr(&mut self, b: &BinExpr) {
        self.within(Ctx::Bin(b.op, false), |v| b.left.visit_with(v));
        self.within(Ctx::Bin(b.op, true), |v| b.right.visit_with(v));
    }
    fn visit_call_expr(&mut self, c: &CallExpr) {
        let method = match &c.callee {
            Callee::Expr(e) => match &**e {
                Expr::Member(m) => match &m.prop {
                    MemberProp::Ident(i) => i.sym.to_string(),
                    _ => String::new(),
                },
                _ => String::new(),
            },
            _ => String::new(),
        };
        crate::js::depth::guard(|| c.callee.visit_with(self));
        for a in &c.args {
            self.within(Ctx::Arg(method.clone()), |v| a.visit_with(v));
        }
    }
    fn visit_return_stmt(&mut self, r: &ReturnStmt) {
        self.within(Ctx::Return, |v| r.visit_children_with(v));
    }
    fn visit_arrow_expr(&mut self, a: &ArrowExpr) {
        // An arrow's expression body is what it returns.
        match &*a.body {
            ArrowFunctionBody::Expr(e) => self.within(Ctx::Return, |v| e.visit_with(v)),
            b => self.within(Ctx::Obj(Vec::new()), |v| b.visit_with(v)),
        }
    }
    fn visit_var_declarator(&mut self, d: &VarDeclarator) {
        self.within(Ctx::Decl, |v| d.init.visit_with(v));
    }
    // Parentheses, conditions and sequences pass the place through.
    fn visit_cond_expr(&mut self, c: &CondExpr) {
        self.within(Ctx::Obj(Vec::new()), |v| c.test.visit_with(v));
        crate::js::depth::guard(|| {
            c.cons.visit_with(self);
            c.alt.visit_with(self);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    #[test]
    fn model_ids_by_shape() {
        for id in [
            "claude-opus-4-6",
            "claude-haiku-4-5-20251001",
            "claude-3-5-sonnet",
            "claude-3-5-sonnet-latest",
            "claude-2",
            "claude-opus-4-6-fast",
            "claude-instant-1",
            "claude-1.3",
            "claude-instant-1.1-100k",
            "claude-opus-4@20250514",
        ] {
            assert!(is_model_id(id), "{id}");
        }
        for not in [
            "claude-code",
            "claude-3-",
            "claude-desktop-3p",
            "claude-code-20250219",
            "claude-plugin-telemetry-v1",
            "claude-in-chrome",
            "claude-opus",
            "claude-opus-4@2025",
            "claude-1.",
        ] {
            assert!(!is_model_id(not), "{not}");
        }
    }

    /// Dotted versions whole, never cut at the dot; substring tests, regular
    /// expressions and prose name no model; an id quoted in prose that is
    /// also a literal of its own is listed, its prose site as text.
    #[test]
    fn exact_ids_only() {
        let ci = testjs::script(
            r#"
var retired = { "claude-lark-1.3": "gone", "claude-lark-1.3-100k": "gone", "claude-wren-2.1": "gone" };
function family(m) { return m.includes("claude-finch-4") || m.startsWith("claude-robin-") || /^claude-heron-3(-|$)/.test(m); }
var vertexId = "claude-lark-7@20250101", active = "claude-lark-7";
var help = "Use claude-lark-7 or claude-swan-9 for long tasks.";
// claude-owl-5 in a comment
"#,
        );
        let v = find(&ci);
        let ids: Vec<&str> = v.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "claude-lark-1.3",
                "claude-lark-1.3-100k",
                "claude-lark-7",
                "claude-lark-7@20250101",
                "claude-wren-2.1"
            ]
        );
        let l7 = v.iter().find(|m| m.id == "claude-lark-7").unwrap();
        assert_eq!(l7.uses, ["constant", "text"]);
        assert_eq!(v[0].uses, ["table"]);
    }

    #[test]
    fn each_literal_with_how_it_is_used() {
        let ci = testjs::script(
            r#"
var catalog = { models: [{ id: "claude-lark-7", display_name: "Lark 7", hard_limit: 100 },
  { id: "claude-wren-2-1", name: "Wren" }],
  aliases: { lark: { default: "claude-lark-7", per_provider: { cloud: "claude-lark-6" } } } };
var pairs = new Map([["wren-2-1", "claude-wren-2-1"], ["x", "claude-wren-2"]]);
var prices = { "claude-lark-6": { inputCostPerMillion: 3 } };
function pick(e) { return process.env.OUR_MODEL ?? "claude-finch-1"; }
function isLark(e) { return e === "claude-lark-9" || e.includes("claude-lark-8"); }
console.log("claude-code", "use claude-robin-3 instead");
"#,
        );
        let v = find(&ci);
        let get = |id: &str| {
            v.iter()
                .find(|m| m.id == id)
                .unwrap_or_else(|| panic!("no {id} in {v:?}"))
        };
        let ids: Vec<&str> = v.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "claude-finch-1",
                "claude-lark-6",
                "claude-lark-7",
                "claude-lark-9",
                "claude-wren-2",
                "claude-wren-2-1"
            ]
        );
        let l7 = get("claude-lark-7");
        assert_eq!(l7.uses, ["default", "limits"]);
        assert_eq!(l7.aliases, ["lark"]);
        assert_eq!(l7.sites.len(), 2);
        assert_eq!(get("claude-lark-6").uses, ["pricing", "table"]);
        let w = get("claude-wren-2-1");
        assert_eq!(w.uses, ["alias", "catalogue"]);
        assert_eq!(w.aliases, ["wren-2-1"]);
        assert_eq!(get("claude-wren-2").uses, ["list"]);
        assert_eq!(get("claude-finch-1").uses, ["fallback"]);
        assert_eq!(get("claude-lark-9").uses, ["check"]);
        // A substring test and prose name no model.
        assert!(
            v.iter()
                .all(|m| m.id != "claude-lark-8" && m.id != "claude-robin-3")
        );
    }
}
