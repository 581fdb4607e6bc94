//! The built-in tools the agent can call, with their input schemas
//! reconstructed from the tools' validators.
//!
//! A tool is an object literal with a `name`, an `inputSchema` (a value or
//! a getter) and a `prompt` or `call` method — the shape every built-in tool
//! definition has, whatever the builder it is passed to. Its name is the
//! evaluated `name`; its description is the text its `prompt()` returns
//! (what the model reads), evaluated where static, with each part computed
//! at run time shown as `${…}` and listed in `runtime`.

pub mod assemble;
pub mod objects;
pub mod schema;

use super::Site;
use crate::analysis::diff::lines::DiffBudget;
use crate::analysis::eval::Value;
use crate::js::code::CodeIndex;
use assemble::{Assembled, Assembler};
pub use assemble::{Piece, Variable};
use objects::{Snippet, has, snippets_with};
use schema::Schemas;
use serde::{Deserialize, Serialize};
use serde_json::Value as J;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use swc_ecma_ast::*;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    /// The text the model sees: the prompt assembled by partial
    /// evaluation, each run-time input a named hole (`${model}`), each
    /// run-time choice kept with both texts (`${test ? `A` : `B`}`).
    pub description: String,
    /// The bytes of the description known statically.
    pub prompt_bytes: usize,
    /// A JSON Schema of the tool's input.
    pub input_schema: serde_json::Value,
    /// The short description shown to the user (`description()`), when static.
    #[serde(default)]
    pub summary: Option<String>,
    /// What is computed at run time, and from what (source expressions).
    #[serde(default)]
    pub runtime: Vec<String>,
    /// The literal texts the description was assembled from, and the other
    /// whole texts it may be instead (`variant`), each where it is.
    #[serde(default)]
    pub pieces: Vec<Piece>,
    /// The description's named holes and what each stands for.
    #[serde(default)]
    pub variables: Vec<Variable>,
    pub sites: Vec<Site>,
}

/// The marker standing for a part of a text computed at run time.
pub const RUNTIME: &str = "${…}";

/// An object of tool shape, its spread bases resolved.
struct Shape<'x> {
    o: &'x ObjectLit,
    /// The definitions of the objects spread into it (`{...base, …}`),
    /// nearest last.
    bases: Vec<Rc<schema::Def>>,
}

impl Shape<'_> {
    /// The member `key`, from the object or else from a base, with the
    /// module and base offset its positions are relative to.
    fn member(&self, m: usize, base: u32, key: &str) -> Option<(usize, u32, &Prop)> {
        if let Some(p) = prop(self.o, key) {
            return Some((m, base, p));
        }
        self.bases.iter().rev().find_map(|d| {
            let o = object_of(&d.expr)?;
            prop(o, key).map(|p| (d.m, d.base, p))
        })
    }

    fn has(&self, key: &str) -> bool {
        has(self.o, key)
            || self
                .bases
                .iter()
                .any(|d| object_of(&d.expr).is_some_and(|o| has(o, key)))
    }
}

/// The last property `key` of `o` (a value, a method or a getter).
fn prop<'x>(o: &'x ObjectLit, key: &str) -> Option<&'x Prop> {
    o.props.iter().rev().find_map(|p| {
        let PropOrSpread::Prop(p) = p else {
            return None;
        };
        let k = match &**p {
            Prop::KeyValue(kv) => objects::key_name(&kv.key),
            Prop::Method(mp) => objects::key_name(&mp.key),
            Prop::Getter(g) => objects::key_name(&g.key),
            _ => None,
        };
        (k.as_deref() == Some(key)).then_some(&**p)
    })
}

/// The object literal a spread base's definition holds: `{…}`, or the
/// object passed to a builder (`build({…})`).
fn object_of(e: &Expr) -> Option<&ObjectLit> {
    match e {
        Expr::Paren(p) => object_of(&p.expr),
        Expr::Object(o) => Some(o),
        Expr::Call(c) => c.args.first().and_then(|a| object_of(&a.expr)),
        _ => None,
    }
}

pub fn find(ci: &CodeIndex) -> Vec<Tool> {
    let snippets = snippets_with(ci, &["inputSchema"]);
    let mut sch = Schemas::new(ci);
    // Spread bases, parsed once.
    let mut base_defs: HashMap<(usize, String), Option<Rc<schema::Def>>> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    // First the objects and their names (a constant holding a tool's name
    // becomes a named hole in every description).
    let mut cands: Vec<(usize, u32, String, Option<Rc<FactoryCall>>)> = Vec::new();
    for (si, sn) in snippets.iter().enumerate() {
        objects::each_object(&sn.expr, &mut |o| {
            let off = sn.offset(o);
            if !seen.insert((sn.module, off)) {
                return;
            }
            let shape = shape_of(&mut sch, &mut base_defs, sn.module, o);
            let Some(shape) = shape else { return };
            if let Some(name) = tool_name(&mut sch, sn, &shape) {
                cands.push((si, off, name, None));
                return;
            }
            // Built by a factory: one tool for each of its calls.
            for call in factory_calls(ci, sn, &shape) {
                let name = match prop(object_of(&call.arg.expr).unwrap_or(o), "name") {
                    Some(Prop::KeyValue(kv)) => {
                        sch.value(call.arg.module, &kv.value, call.arg.base)
                    }
                    _ => None,
                };
                if let Some(Value::Str(name)) =
                    name.filter(|n| !matches!(n, Value::Str(s) if s.is_empty()))
                {
                    cands.push((si, off, name, Some(Rc::new(call))));
                }
            }
        });
    }
    let tool_names: HashMap<String, String> = cands
        .iter()
        .map(|(_, _, n, _)| (n.clone(), assemble::tool_name_hole(n)))
        .collect();
    let mut globals = assemble::Globals::new();
    let mut by_name: BTreeMap<String, Tool> = BTreeMap::new();
    let mut ix = 0;
    for (si, sn) in snippets.iter().enumerate() {
        let mut found = Vec::new();
        objects::each_object(&sn.expr, &mut |o| {
            let off = sn.offset(o);
            // A factory's object is several tools, one per call.
            while ix < cands.len() && cands[ix].0 == si && cands[ix].1 == off {
                let (name, call) = (cands[ix].2.clone(), cands[ix].3.clone());
                ix += 1;
                let Some(shape) = shape_of(&mut sch, &mut base_defs, sn.module, o) else {
                    continue;
                };
                let mut cx = Cx {
                    sch: &mut sch,
                    globals: &mut globals,
                    tool_names: &tool_names,
                };
                found.push(tool(&mut cx, sn, off, &shape, name, call.as_deref()));
            }
        });
        for t in found {
            match by_name.get_mut(&t.name) {
                Some(prev) => {
                    // The same tool defined twice (variants): keep the
                    // richer definition, every site.
                    let mut sites = std::mem::take(&mut prev.sites);
                    sites.extend(t.sites.iter().cloned());
                    if richness(&t) > richness(prev) {
                        *prev = t;
                    }
                    sites.sort();
                    sites.dedup();
                    prev.sites = sites;
                }
                None => {
                    by_name.insert(t.name.clone(), t);
                }
            }
        }
    }
    by_name.into_values().collect()
}

/// An object of tool shape: an `inputSchema` (a value or a getter), a
/// `name`, and a `prompt` or `call` method — its own or a spread base's.
/// The MCP tool template (`isMcp`) takes its name, prompt and schema from a
/// server at run time: not a built-in tool.
fn shape_of<'x>(
    sch: &mut Schemas,
    base_defs: &mut HashMap<(usize, String), Option<Rc<schema::Def>>>,
    m: usize,
    o: &'x ObjectLit,
) -> Option<Shape<'x>> {
    if !has(o, "inputSchema") || has(o, "isMcp") {
        return None;
    }
    let mut bases = Vec::new();
    for p in &o.props {
        if let PropOrSpread::Spread(s) = p
            && let Expr::Ident(i) = &*s.expr
        {
            let d = base_defs
                .entry((m, i.sym.to_string()))
                .or_insert_with(|| sch.def(m, &i.sym))
                .clone();
            if let Some(d) = d
                && object_of(&d.expr).is_some_and(|bo| !has(bo, "isMcp"))
            {
                bases.push(d);
            }
        }
    }
    let shape = Shape { o, bases };
    (shape.has("name") && (shape.has("prompt") || shape.has("call"))).then_some(shape)
}
/// A call of a tool factory: the factory's parameter the tool's members
/// read (`name: options.name`) and the object literal the call hands it,
/// parsed where it stands.
struct FactoryCall {
    param: String,
    arg: Snippet,
    /// The call's offset in its module: the tool's site.
    at: u32,
}

/// When an object of tool shape takes its `name` from a parameter of the
/// function it is built in (`function make(o) { return build({name:
/// o.name, prompt: async () => o.prompt, …}) }`), that function is a
/// factory: each of its calls in the module (by the name it is declared
/// by, in that name's scope) that hands an object literal makes a tool.
fn factory_calls(ci: &CodeIndex, sn: &Snippet, shape: &Shape) -> Vec<FactoryCall> {
    let Some(Prop::KeyValue(kv)) = prop(shape.o, "name") else {
        return Vec::new();
    };
    let Expr::Member(MemberExpr {
        obj,
        prop: MemberProp::Ident(key),
        ..
    }) = &*kv.value
    else {
        return Vec::new();
    };
    let (Expr::Ident(param), "name") = (&**obj, &*key.sym) else {
        return Vec::new();
    };
    // The snippet is the factory's declaration (parsed in parentheses).
    let f = match &*sn.expr {
        Expr::Paren(p) => match &*p.expr {
            Expr::Fn(f) => f,
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let Some(fname) = &f.ident else {
        return Vec::new();
    };
    let index = f
        .function
        .params
        .iter()
        .position(|q| matches!(&q.pat, Pat::Ident(b) if b.id.sym == param.sym));
    let m = &ci.modules[sn.module];
    let ix = &m.index;
    // The declaration among the functions of that name: the one the
    // snippet is.
    let lo = sn.offset(&f.function);
    let Some((index, decl)) = index.filter(|&i| i < 2).zip(
        ix.functions_named(&fname.sym)
            .map(|(_, g)| g)
            .find(|g| g.lo == lo),
    ) else {
        return Vec::new();
    };
    let src = m.source();
    ix.calls
        .iter()
        .filter(|c| {
            !c.member
                && c.name == fname.sym
                && ix.binding_scope(&c.name, c.in_function) == decl.parent
        })
        .filter_map(|c| {
            let a = if index == 0 { &c.arg0 } else { &c.arg1 };
            let a = a.as_ref()?;
            let text = src.get(a.lo as usize..a.hi as usize)?;
            if !text.starts_with('{') {
                return None;
            }
            let expr = crate::analysis::eval::parse_snippet(&format!("({text})")).ok()?;
            Some(FactoryCall {
                param: param.sym.to_string(),
                arg: Snippet {
                    module: sn.module,
                    base: a.lo.saturating_sub(1),
                    expr,
                },
                at: c.lo,
            })
        })
        .collect()
}

fn richness(t: &Tool) -> (usize, usize) {
    (
        t.input_schema["properties"]
            .as_object()
            .map_or(0, |p| p.len()),
        t.prompt_bytes,
    )
}

/// What assembling a text needs: the schemas (and their evaluator), the
/// build's static globals, the tools' names.
struct Cx<'c, 'a> {
    sch: &'c mut Schemas<'a>,
    globals: &'c mut assemble::Globals,
    tool_names: &'c HashMap<String, String>,
}

/// A tool's name, when static.
fn tool_name(sch: &mut Schemas, sn: &Snippet, shape: &Shape) -> Option<String> {
    let (m, base, p) = shape.member(sn.module, sn.base, "name")?;
    let Prop::KeyValue(kv) = p else {
        return None;
    };
    match sch.value(m, &kv.value, base)? {
        Value::Str(n) if !n.is_empty() => Some(n),
        _ => None,
    }
}

/// The tool an object of tool shape defines.
fn tool(
    cx: &mut Cx,
    sn: &Snippet,
    off: u32,
    shape: &Shape,
    name: String,
    call: Option<&FactoryCall>,
) -> Tool {
    let (m, base) = (sn.module, sn.base);
    // A factory's tool is where the factory is called for it.
    let site = Site::at(&cx.sch.ci.modules[m], call.map_or(off, |c| c.at));
    let mut runtime = Vec::new();
    let input_schema = match shape.member(m, base, "inputSchema") {
        Some((sm, sb, Prop::KeyValue(kv))) => cx.sch.schema(sm, &kv.value, sb, &[]),
        Some((sm, sb, Prop::Getter(g))) => g
            .function
            .body
            .as_ref()
            .and_then(objects::returns_all)
            .and_then(|(rs, locals)| cx.sch.choice(sm, &rs, sb, &locals)),
        _ => None,
    };
    let input_schema = match input_schema {
        Some(s) => J::Object(s.json),
        None => {
            runtime.push("input schema: not reconstructed statically".to_string());
            serde_json::json!({})
        }
    };
    let prompt = text_of(cx, shape, m, base, "prompt", &site, call);
    let summary = text_of(cx, shape, m, base, "description", &site, call);
    let has_text = |a: &Option<Assembled>| a.as_ref().is_some_and(|a| static_bytes(&a.text) > 0);
    let chosen = if has_text(&prompt) {
        prompt
    } else if has_text(&summary) {
        summary.clone()
    } else {
        prompt.or(summary.clone())
    };
    let (description, pieces, variables) = match chosen {
        Some(a) => (a.text, a.pieces, a.variables),
        None => {
            runtime.push("prompt: none found".to_string());
            (RUNTIME.to_string(), Vec::new(), Vec::new())
        }
    };
    for v in &variables {
        runtime.push(format!("${{{}}}: `{}`", v.name, v.source));
    }
    Tool {
        name,
        prompt_bytes: static_bytes(&description),
        description,
        input_schema,
        summary: summary
            .map(|a| a.text)
            .filter(|s| static_bytes(s) > 0 && !s.contains("${")),
        runtime,
        pieces,
        variables,
        sites: vec![site],
    }
}

/// The bytes of a rendered text outside its `${…}` parts.
pub fn static_bytes(t: &str) -> usize {
    let b = t.as_bytes();
    let (mut n, mut i, mut depth) = (0, 0, 0usize);
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
            depth += 1;
            i += 2;
            continue;
        }
        if depth > 0 {
            match b[i] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
        } else {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The text the method (or value) `key` of a tool returns, assembled.
fn text_of(
    cx: &mut Cx,
    shape: &Shape,
    m: usize,
    base: u32,
    key: &str,
    site: &Site,
    call: Option<&FactoryCall>,
) -> Option<Assembled> {
    let (pm, pb, p) = shape.member(m, base, key)?;
    let mut asm = Assembler::new(cx.sch, cx.globals, cx.tool_names);
    if let Some(c) = call {
        asm = asm.with_argument(&c.param, c.arg.module, c.arg.base, &c.arg.expr);
    }
    match p {
        Prop::Method(mp) => {
            let params: Vec<&Pat> = mp.function.params.iter().map(|p| &p.pat).collect();
            asm.method(site, pm, pb, &params, mp.function.body.as_ref(), None)
        }
        Prop::Getter(g) => asm.method(site, pm, pb, &[], g.function.body.as_ref(), None),
        Prop::KeyValue(kv) => match &*kv.value {
            Expr::Arrow(a) => {
                let params: Vec<&Pat> = a.params.iter().collect();
                match &*a.body {
                    ArrowFunctionBody::FunctionBody(b) => {
                        asm.method(site, pm, pb, &params, Some(b), None)
                    }
                    ArrowFunctionBody::Expr(x) => asm.method(site, pm, pb, &params, None, Some(x)),
                }
            }
            Expr::Fn(f) => {
                let params: Vec<&Pat> = f.function.params.iter().map(|p| &p.pat).collect();
                asm.method(site, pm, pb, &params, f.function.body.as_ref(), None)
            }
            e => asm.method(site, pm, pb, &[], None, Some(e)),
        },
        _ => None,
    }
}

/// A change of one tool between two builds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolChange {
    pub name: String,
    /// Input properties added, removed or changed, one entry each.
    pub properties: Vec<PropertyChange>,
    /// Other changes of the schema (its top level).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schema: Vec<String>,
    /// The description's change, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<TextChange>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PropertyChange {
    pub property: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// What changed in it: `type`, `required`, `description`, `enum`, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<J>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<J>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TextChange {
    pub old_bytes: usize,
    pub new_bytes: usize,
    /// A word-level diff: `[-removed-]` and `{+added+}` runs in context.
    pub diff: String,
    /// Why `diff` shows the description replaced whole rather than aligned
    /// word by word, when it does (see `lines::DiffBudget`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coarse: Option<String>,
}

/// Tools added, removed and changed (by name).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolsDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<ToolChange>,
}

impl ToolsDiff {
    /// No tool added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

pub fn diff(a: &[Tool], b: &[Tool], budget: &DiffBudget) -> ToolsDiff {
    let d = super::names_diff(
        a.iter().map(|t| t.name.as_str()),
        b.iter().map(|t| t.name.as_str()),
    );
    // The first tool of each name, as a search of `b` would find it.
    let mut by_name: HashMap<&str, &Tool> = HashMap::with_capacity(b.len());
    for t in b {
        by_name.entry(t.name.as_str()).or_insert(t);
    }
    let mut changed = Vec::new();
    for ta in a {
        let Some(tb) = by_name.get(ta.name.as_str()) else {
            continue;
        };
        let c = tool_change(ta, tb, budget);
        if !c.properties.is_empty() || !c.schema.is_empty() || c.description.is_some() {
            changed.push(c);
        }
    }
    ToolsDiff {
        added: d.added,
        removed: d.removed,
        changed,
    }
}

fn tool_change(a: &Tool, b: &Tool, budget: &DiffBudget) -> ToolChange {
    let empty = serde_json::Map::new();
    let props = |t: &Tool| {
        t.input_schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    let req = |t: &Tool| -> Vec<String> {
        t.input_schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (pa, pb) = (props(a), props(b));
    let (ra, rb) = (req(a), req(b));
    let mut properties = Vec::new();
    let mut keys: Vec<&String> = pa.keys().chain(pb.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let (x, y) = (pa.get(k), pb.get(k));
        let ch = match (x, y) {
            (None, Some(_)) => Some(("added", Vec::new())),
            (Some(_), None) => Some(("removed", Vec::new())),
            (Some(x), Some(y)) => {
                let (xo, yo) = (
                    x.as_object().unwrap_or(&empty),
                    y.as_object().unwrap_or(&empty),
                );
                let mut fields: Vec<String> = xo
                    .keys()
                    .chain(yo.keys())
                    .filter(|f| xo.get(*f) != yo.get(*f))
                    .cloned()
                    .collect();
                fields.sort();
                fields.dedup();
                if ra.contains(k) != rb.contains(k) {
                    fields.push("required".into());
                }
                (!fields.is_empty()).then_some(("changed", fields))
            }
            (None, None) => None,
        };
        if let Some((change, fields)) = ch {
            properties.push(PropertyChange {
                property: k.clone(),
                change,
                fields,
                old: x.cloned(),
                new: y.cloned(),
            });
        }
    }
    let mut schema = Vec::new();
    for f in ["type", "additionalProperties", "anyOf"] {
        if a.input_schema.get(f) != b.input_schema.get(f) {
            schema.push(f.to_string());
        }
    }
    let description = (a.description != b.description).then(|| {
        let (diff, coarse) = word_diff(&a.description, &b.description, budget);
        TextChange {
            old_bytes: a.description.len(),
            new_bytes: b.description.len(),
            diff,
            coarse,
        }
    });
    ToolChange {
        name: a.name.clone(),
        properties,
        schema,
        description,
    }
}

/// How long one description's word alignment may take.
const WORD_DIFF_TIME: std::time::Duration = std::time::Duration::from_millis(200);

/// A word-level diff, unchanged runs cut to a few words of context, and why
/// it is coarse when it is: past its time (or the command's, `budget`) the
/// description is shown replaced whole, the same on any machine, instead
/// of the cruder alignment Myers ends with at a deadline.
pub fn word_diff(a: &str, b: &str, budget: &DiffBudget) -> (String, Option<String>) {
    use similar::{ChangeTag, TextDiff};
    let deadline = match budget.deadline_within(WORD_DIFF_TIME) {
        Ok(d) => d,
        Err(why) => return (replaced_whole(a, b), Some(why.to_string())),
    };
    let d = TextDiff::configure().deadline(deadline).diff_words(a, b);
    if std::time::Instant::now() >= deadline {
        let why = budget.why_late(deadline, WORD_DIFF_TIME);
        return (replaced_whole(a, b), Some(why));
    }
    let mut out = String::new();
    let ops: Vec<(ChangeTag, String)> = d
        .iter_all_changes()
        .map(|c| (c.tag(), c.value().to_string()))
        .collect();
    let mut i = 0;
    while i < ops.len() {
        let tag = ops[i].0;
        let mut run = String::new();
        while i < ops.len() && ops[i].0 == tag {
            run.push_str(&ops[i].1);
            i += 1;
        }
        match tag {
            ChangeTag::Equal => {
                let words: Vec<&str> = run.split_whitespace().collect();
                if words.len() > 8 {
                    out.push_str(&format!(
                        " {} … {} ",
                        words[..3].join(" "),
                        words[words.len() - 3..].join(" ")
                    ));
                } else {
                    out.push_str(&run);
                }
            }
            ChangeTag::Delete => out.push_str(&format!("[-{}-]", run.trim())),
            ChangeTag::Insert => out.push_str(&format!("{{+{}+}}", run.trim())),
        }
    }
    (out.trim().to_string(), None)
}

/// A coarse word diff: the first words of each side, removed and added.
fn replaced_whole(a: &str, b: &str) -> String {
    let first = |s: &str| {
        let words: Vec<&str> = s.split_whitespace().collect();
        if words.len() > 12 {
            format!("{} …", words[..12].join(" "))
        } else {
            words.join(" ")
        }
    };
    format!("[-{}-]{{+{}+}}", first(a), first(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;
    use serde_json::json;

    fn tool<'a>(ts: &'a [Tool], name: &str) -> &'a Tool {
        ts.iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name} in {ts:?}"))
    }

    #[test]
    fn namespace_chains_with_a_lazy_getter_and_a_spread_shape() {
        let ci = testjs::script(
            r#"
var z = {};
var lazy = (f) => { let c = null; return () => c ??= f(); };
var NAME = "Edit";
function extra() { return { dry_run: z.boolean().optional() }; }
var schemaA = lazy(() => z.strictObject({
  file_path: z.string().describe("path of " + "the file"),
  count: z.number().int().min(1).optional(),
  mode: z.enum(["a", "b"]).default("a"),
  tags: z.array(z.string()).optional(),
  ...extra(),
}));
var toolA = build({ name: NAME, async description() { return "edits files"; },
  async prompt() { return `Edit a file.${" Carefully."}`; },
  get inputSchema() { return schemaA(); }, async call() {} });
var notATool = { name: "x", inputSchema: { type: "object" } };
var mcpTemplate = build({ isMcp: true, name: "mcp", async prompt() { return ""; },
  get inputSchema() { return schemaA(); }, async call() {} });
"#,
        );
        let ts = find(&ci);
        assert_eq!(ts.len(), 1, "{ts:?}");
        let t = tool(&ts, "Edit");
        assert_eq!(t.description, "Edit a file. Carefully.");
        assert_eq!(t.prompt_bytes, "Edit a file. Carefully.".len());
        assert_eq!(t.summary.as_deref(), Some("edits files"));
        let s = &t.input_schema;
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["file_path"],
            json!({"type": "string", "description": "path of the file"})
        );
        assert_eq!(
            s["properties"]["count"],
            json!({"type": "integer", "minimum": 1.0})
        );
        assert_eq!(
            s["properties"]["mode"],
            json!({"type": "string", "enum": ["a", "b"], "default": "a"})
        );
        assert_eq!(
            s["properties"]["tags"],
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(s["properties"]["dry_run"], json!({"type": "boolean"}));
        assert_eq!(s["required"], json!(["file_path"]));
        assert!(t.runtime.is_empty(), "{:?}", t.runtime);
    }

    #[test]
    fn schemas_built_by_functions_flags_and_pieces_of_other_schemas() {
        // A question's schema built by a function from its options'
        // schema (not the options' schema handed back), one property read
        // from another schema's shape, descriptions chosen or assembled at
        // run time, properties spread in under a flag, a schema whose base
        // is not known here, and two inputs chosen at run time merged.
        let ci = testjs::script(
            r#"
var z = {};
var lazy = (f) => { let c = null; return () => c ??= f(); };
var OPTION = lazy(() => z.object({ label: z.string().describe("The option's words") }));
function question(opt) {
  return z.object({
    text: z.string().describe("What to ask"),
    options: z.array(opt).min(2).describe(flagA() ? "Two or more, told apart" : "Two or more"),
  });
}
var QUESTION = lazy(() => question(OPTION()));
function extra(strict) { return { level: z.enum(IMPORTED).optional().describe("How far to go") }; }
var FORM = lazy(() => z.object({
  text: QUESTION().shape.text,
  kind: z.enum(["choice", "text"]).optional(),
  note: z.string().optional().describe("A note. " + (flagB() ? "Shown under it." : "") + "Optional."),
}));
var IN_A = lazy(() => z.object({
  questions: z.array(QUESTION()),
  ...flagC() && { watch: z.boolean().describe("Watch for answers") },
  ...flagD() && extra(true),
}));
var IN_B = lazy(() => z.object({ title: z.string().optional(), questions: z.array(FORM()).describe("Up to four") }));
var T = build({ name: "Ask", async prompt() { return "Ask the user."; },
  get inputSchema() { return flagE() ? IN_A() : IN_B(); }, async call() {} });
"#,
        );
        let ts = find(&ci);
        let s = &tool(&ts, "Ask").input_schema;
        let q = &s["properties"]["questions"];
        // Items of both inputs' questions, the second's description.
        assert_eq!(q["description"], json!("Up to four"));
        let item = &q["items"]["properties"];
        assert_eq!(
            item["text"],
            json!({"type": "string", "description": "What to ask"})
        );
        assert_eq!(item["kind"]["enum"], json!(["choice", "text"]));
        assert_eq!(
            item["note"]["description"],
            json!("A note. ${v1 ? `Shown under it.` : ``}Optional.")
        );
        assert_eq!(
            item["options"]["items"]["properties"]["label"]["description"],
            json!("The option's words")
        );
        assert_eq!(
            item["options"]["description"],
            json!("${v1 ? `Two or more, told apart` : `Two or more`}")
        );
        assert_eq!(q["items"]["required"], json!(["text"]));
        // Present under a flag: there, never required.
        assert_eq!(
            s["properties"]["watch"],
            json!({"type": "boolean", "description": "Watch for answers"})
        );
        assert_eq!(
            s["properties"]["level"],
            json!({"description": "How far to go"})
        );
        assert_eq!(s["properties"]["title"], json!({"type": "string"}));
        assert_eq!(s["required"], json!(["questions"]));
    }

    #[test]
    fn a_tool_whose_method_loads_a_chunk_is_found() {
        // Code-split builds load chunks with `import.meta.require` inside a
        // tool's methods; the object is still a tool (a script parse of
        // its definition refused it).
        let ci = testjs::script(
            r#"
var S = { type: "object", properties: {} };
var T = mk({ name: "Loader", get inputSchema() { return S; },
  prompt: async () => "Load the named thing.",
  create(e) { return { run() { return import.meta.require("./other.js").go(e); } }; } });
"#,
        );
        let ts = find(&ci);
        assert_eq!(tool(&ts, "Loader").description, "Load the named thing.");
    }

    #[test]
    fn a_factory_makes_a_tool_for_each_call() {
        // A factory builds a tool from the options each call hands it; the
        // name, prompt and summary are that call's. A wrapper that builds a
        // tool from a name it is not handed as a literal makes none.
        let ci = testjs::script(
            r#"
var S = { type: "object", properties: {} };
var Kp = "ListPens";
function Fm(e) { return mk({ name: e.name, get inputSchema() { return S; },
  description: async () => `List the user's ${e.noun}s.`,
  prompt: async () => e.prompt, async call(t) { return e.fetch(t); } }); }
var Ta = Fm({ name: Kp, noun: "pen", async fetch() { return []; },
  prompt: "List the pens the user owns. Pass a colour to narrow the list." });
var Tb = Fm({ name: "ListInks", noun: "ink", async fetch() { return []; },
  prompt: "List the inks the user owns." });
function Wr(t) { return Fm(t); }
function Fn2(e) { function Fm(x) { return x; } return Fm({ name: "NotATool", prompt: "Not a tool at all." }); }
"#,
        );
        let ts = find(&ci);
        let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["ListInks", "ListPens"]);
        let pens = tool(&ts, "ListPens");
        assert_eq!(
            pens.description,
            "List the pens the user owns. Pass a colour to narrow the list."
        );
        assert_eq!(pens.summary.as_deref(), Some("List the user's pens."));
        // Each tool's site is its call.
        assert_ne!(pens.sites, tool(&ts, "ListInks").sites);
        assert_eq!(
            tool(&ts, "ListInks").description,
            "List the inks the user owns."
        );
    }

    #[test]
    fn bare_constructors_known_by_the_type_their_class_reports() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-v.js",
                r#"
class Base { optional() { return this; } }
class Str extends Base { get type() { return "string"; } }
class Obj extends Base { constructor(s, c) { super(); this.s = s; } get type() { return "object"; } }
class Never extends Base { get type() { return "never"; } }
function s() { return new Str(); }
function so(e, t) { return new Obj(e, new Never, t); }
function u(e, t) { return new Obj(e, void 0, t); }
export { s, so, u };
"#,
            ),
            (
                "/$bunfs/root/chunk-t.js",
                r#"
import { s, so, u } from "./chunk-v.js";
var A = () => so({ command: s().describe("the command"), timeout: s().optional() });
var B = () => so({ command: s(), extra: u({ depth: s() }) });
var T = mk({ name: "Bash", prompt() { return "Run " + other(); },
  get inputSchema() { if (flagA()) return A(); return B(); }, call() {} });
"#,
            ),
        ]);
        let ts = find(&ci);
        let t = tool(&ts, "Bash");
        let s = &t.input_schema;
        // Either branch may apply at run time: both branches' properties,
        // required where both require them.
        let mut keys: Vec<&String> = s["properties"].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["command", "extra", "timeout"]);
        assert_eq!(s["required"], json!(["command"]));
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["extra"],
            json!({"type": "object", "properties": {"depth": {"type": "string"}}, "required": ["depth"]})
        );
        assert_eq!(t.description, "Run ${v1}");
        assert!(
            t.runtime.iter().any(|r| r.contains("other()")),
            "{:?}",
            t.runtime
        );
    }

    #[test]
    fn zod_style_constructors_known_by_the_class_they_register() {
        let ci = testjs::script(
            r#"
var ZodStr = $constructor("ZodString", (i, d) => {});
function str(p) { return make(ZodStr, p); }
function obj(shape, p) { return new ZObj({ type: "object", shape: shape, catchall: never() }); }
function pre(f, s) { return new ZPipe({ type: "pipe", in: f, out: s }); }
var ZRec = $constructor("ZodRecord", (i, d) => {});
function rec(k, v, p) { if (!v || !v._zod) return new ZRec({ type: "record", keyType: str(), valueType: k }); return new ZRec({ type: "record", keyType: k, valueType: v }); }
var SCH = obj({ url: str().describe("where"), deep: pre((v) => v, str().optional()),
  byModel: rec(str(), obj({ level: str().describe("how hard") })) });
var W = mk({ name: "Fetch", prompt: () => "Fetch a page", inputSchema: SCH, call() {} });
"#,
        );
        let ts = find(&ci);
        let t = tool(&ts, "Fetch");
        assert_eq!(t.input_schema["additionalProperties"], json!(false));
        assert_eq!(
            t.input_schema["properties"]["url"],
            json!({"type": "string", "description": "where"})
        );
        assert_eq!(
            t.input_schema["properties"]["deep"],
            json!({"type": "string"})
        );
        assert_eq!(t.input_schema["required"], json!(["url", "byModel"]));
        // A library function returning `new C({type, …})` is read by its
        // arguments (here the record's values), not by its body.
        assert_eq!(
            t.input_schema["properties"]["byModel"]["properties"]["level"]["description"],
            json!("how hard")
        );
    }

    #[test]
    fn assembled_prompts_keep_named_holes_and_both_branches() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-h.js",
                r#"
var LOOK = "Look";
var LATE;
var init = () => { LATE = "Lazily made line."; };
function bullets(xs) { return xs.flatMap((x) => Array.isArray(x) ? x.map((y) => `  - ${y}`) : [`- ${x}`]); }
function intro(model) { if (isSmall(model)) return "Short form."; return `Long form for ${LOOK}.`; }
function readFlag(n, d) { return store().get(n) ?? d; }
export { LOOK, LATE, bullets, intro, readFlag };
"#,
            ),
            (
                "/$bunfs/root/chunk-t.js",
                r#"
import { LOOK, LATE, bullets, intro, readFlag } from "./chunk-h.js";
var S = () => ({});
function body(model, extra) {
  let quick = readFlag("feature_quick_mode", false);
  let items = ["First rule.", ...quick ? ["Quick rule."] : [], ["nested a", "nested b"]];
  let out = [];
  out.push("Intro line.");
  if (settings().verbose) out.push("Verbose line.");
  return [intro(model), ...bullets(items), ...out, LATE, `Use ${LOOK} first; limit ${extra.limit}.`].join("\n");
}
var look = mk({ name: LOOK, async prompt() { return "Look at things."; }, inputSchema: S, call() {} });
var T = mk({ name: "Maker", async prompt({ model: m, limits: l }) { return body(m, l); },
  inputSchema: S, call() {} });
var base = { name: "Watcher", async call() {} };
var W = mk({ ...base, get inputSchema() { return S(); }, async prompt() { return "Watch " + (opts().fast ? "fast" : "slow") + "."; } });
var V = mk({ name: "Varied", inputSchema: S, call() {},
  prompt(o) { if (o.compact) return "Brief."; return "The full text, " + "longer."; } });
"#,
            ),
        ]);
        let ts = find(&ci);
        let t = tool(&ts, "Maker");
        // A choice inside a helper is kept in place, both texts shown.
        assert_eq!(
            t.description,
            "${v1 ? `Short form.` : `Long form for ${LOOK_TOOL_NAME}.`}\n- First rule.${feature_quick_mode ? `\n- Quick rule.` : ``}\n  - nested a\n  - nested b\nIntro line.${verbose ? `\nVerbose line.` : ``}\nLazily made line.\nUse ${LOOK_TOOL_NAME} first; limit ${limit}."
        );
        let texts: Vec<(&str, &str)> = t
            .pieces
            .iter()
            .map(|p| (p.role.as_str(), p.text.as_str()))
            .collect();
        assert!(texts.contains(&("literal", "Quick rule.")), "{texts:?}");
        assert!(texts.contains(&("literal", "Verbose line.")), "{texts:?}");
        let names: Vec<&str> = t.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "LOOK_TOOL_NAME",
                "feature_quick_mode",
                "limit",
                "v1",
                "verbose"
            ]
        );
        // A choice of the whole text: the richest is the description, the
        // other a variant among the pieces.
        let v = tool(&ts, "Varied");
        assert_eq!(v.description, "The full text, longer.");
        assert!(
            v.pieces
                .iter()
                .any(|p| p.role == "variant" && p.text == "Brief."),
            "{:?}",
            v.pieces
        );
        // A tool whose name and schema come from a spread base.
        let w = tool(&ts, "Watcher");
        assert_eq!(w.description, "Watch ${fast ? `fast` : `slow`}.");
        assert_eq!(w.prompt_bytes, "Watch .".len());
    }

    #[test]
    fn diff_lists_schema_changes_property_by_property() {
        let mk = |schema: J, d: &str| Tool {
            name: "Read".into(),
            description: d.into(),
            prompt_bytes: d.len(),
            input_schema: schema,
            summary: None,
            runtime: Vec::new(),
            pieces: Vec::new(),
            variables: Vec::new(),
            sites: Vec::new(),
        };
        let a = mk(
            json!({"type": "object", "properties": {"file_path": {"type": "string"}, "limit": {"type": "number"}}, "required": ["file_path"]}),
            "Reads a file from disk",
        );
        let b = mk(
            json!({"type": "object", "properties": {"file_path": {"type": "string", "description": "abs"}, "pages": {"type": "string"}}, "required": []}),
            "Reads a file from the local disk",
        );
        let d = diff(std::slice::from_ref(&a), &[b], &Default::default());
        assert!(d.added.is_empty() && d.removed.is_empty());
        let c = &d.changed[0];
        let ch: Vec<(&str, &str, Vec<String>)> = c
            .properties
            .iter()
            .map(|p| (p.property.as_str(), p.change, p.fields.clone()))
            .collect();
        assert_eq!(
            ch,
            [
                (
                    "file_path",
                    "changed",
                    vec!["description".to_string(), "required".to_string()]
                ),
                ("limit", "removed", vec![]),
                ("pages", "added", vec![]),
            ]
        );
        let t = c.description.as_ref().unwrap();
        assert!(t.diff.contains("{+the local+}"), "{}", t.diff);
        let same = std::slice::from_ref(&a);
        assert!(diff(same, same, &Default::default()).changed.is_empty());
    }
}
