//! The built-in tools the agent can call, with their input schemas
//! reconstructed from the tools' validators.
//!
//! A tool is an object literal with a `name`, an `inputSchema` (a value or
//! a getter) and a `prompt` or `call` method — the shape every built-in tool
//! definition has, whatever the builder it is passed to. Its name is the
//! evaluated `name`; its description is the text its `prompt()` returns
//! (what the model reads), evaluated where static, with each part computed
//! at run time shown as `${…}` and listed in `runtime`.

pub mod objects;
pub mod schema;

use super::Site;
use crate::analysis::diff::lines::DiffBudget;
use crate::analysis::eval::Value;
use crate::js::code::CodeIndex;
use objects::{Member, Snippet, fn_returns, has, member, returned, snippets_with};
use schema::{Locals, Schemas, source_of};
use serde::{Deserialize, Serialize};
use serde_json::Value as J;
use std::collections::{BTreeMap, HashMap};
use swc_ecma_ast::*;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    /// The text the model sees, evaluated where it is static.
    pub description: String,
    pub prompt_bytes: usize,
    /// A JSON Schema of the tool's input.
    pub input_schema: serde_json::Value,
    /// The short description shown to the user (`description()`), when static.
    #[serde(default)]
    pub summary: Option<String>,
    /// What is computed at run time, and from what (source expressions).
    #[serde(default)]
    pub runtime: Vec<String>,
    pub sites: Vec<Site>,
}

/// The marker standing for a part of a text computed at run time.
pub const RUNTIME: &str = "${…}";

pub fn find(ci: &CodeIndex) -> Vec<Tool> {
    let snippets = snippets_with(ci, &["inputSchema"]);
    let mut sch = Schemas::new(ci);
    let mut by_name: BTreeMap<String, Tool> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for sn in &snippets {
        let mut found = Vec::new();
        objects::each_object(&sn.expr, &mut |o| {
            // The MCP tool template (`isMcp`) takes its name, prompt and
            // schema from a server at run time: not a built-in tool.
            if !(has(o, "inputSchema") && has(o, "name") && (has(o, "prompt") || has(o, "call")))
                || has(o, "isMcp")
            {
                return;
            }
            let off = sn.offset(o);
            if seen.insert((sn.module, off))
                && let Some(t) = tool(&mut sch, sn, off, o)
            {
                found.push(t);
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

fn richness(t: &Tool) -> (usize, usize) {
    (
        t.input_schema["properties"]
            .as_object()
            .map_or(0, |p| p.len()),
        t.prompt_bytes,
    )
}

/// The tool an object literal defines, when its name is static.
fn tool(sch: &mut Schemas, sn: &Snippet, off: u32, o: &ObjectLit) -> Option<Tool> {
    let (m, base) = (sn.module, sn.base);
    let name = match member(o, "name")? {
        Member::Value(e) => sch.value(m, e, base)?,
        Member::Body(_) => return None,
    };
    let Value::Str(name) = name else {
        return None;
    };
    if name.is_empty() {
        return None;
    }
    let mut runtime = Vec::new();
    let input_schema = match member(o, "inputSchema") {
        Some(Member::Value(e)) => sch.schema(m, e, base, &[]),
        Some(Member::Body(Some(b))) => {
            objects::returns_all(b).and_then(|(rs, locals)| sch.choice(m, &rs, base, &locals))
        }
        _ => None,
    };
    let input_schema = match input_schema {
        Some(s) => J::Object(s.json),
        None => {
            runtime.push("input schema: not reconstructed statically".to_string());
            serde_json::json!({})
        }
    };
    let prompt = text_of(sch, sn, o, "prompt", &mut runtime);
    let summary = text_of(sch, sn, o, "description", &mut Vec::new());
    // The bytes of the prompt known statically (run-time parts left out).
    let static_len = |t: &str| t.replace(RUNTIME, "").len();
    let prompt_bytes = prompt.as_deref().map_or(0, static_len);
    let description = match (&prompt, &summary) {
        (Some(p), _) if static_len(p) > 0 => p.clone(),
        (_, Some(s)) if static_len(s) > 0 => s.clone(),
        (Some(p), _) => p.clone(),
        _ => RUNTIME.to_string(),
    };
    Some(Tool {
        name,
        description,
        prompt_bytes,
        input_schema,
        summary: summary.filter(|s| s != RUNTIME),
        runtime,
        sites: vec![Site::at(&sch.ci.modules[m], off)],
    })
}

/// The text the method (or value) `key` of a tool returns: evaluated
/// where static, `${…}` where computed at run time (noted in `runtime`).
fn text_of(
    sch: &mut Schemas,
    sn: &Snippet,
    o: &ObjectLit,
    key: &str,
    runtime: &mut Vec<String>,
) -> Option<String> {
    let (m, base) = (sn.module, sn.base);
    match member(o, key)? {
        Member::Value(Expr::Lit(Lit::Str(s))) => Some(s.value.to_string_lossy().into_owned()),
        Member::Value(e) => {
            let (r, locals) = fn_returns(e)?;
            Some(partial_text(sch, m, base, r, &locals, key, runtime))
        }
        Member::Body(Some(b)) => match returned(b) {
            Some((r, locals)) => Some(partial_text(sch, m, base, r, &locals, key, runtime)),
            None => {
                runtime.push(format!("{key}: built by statements at run time"));
                Some(RUNTIME.to_string())
            }
        },
        Member::Body(None) => None,
    }
}

/// A text evaluated where static: a template's or a concatenation's parts
/// evaluated one by one, a part computed at run time left as `${…}`.
fn partial_text(
    sch: &mut Schemas,
    m: usize,
    base: u32,
    e: &Expr,
    locals: &Locals,
    key: &str,
    runtime: &mut Vec<String>,
) -> String {
    if let Some(v) = sch.value(m, e, base)
        && let Ok(s) = v.to_js_string()
        && !matches!(v, Value::Func(_) | Value::Object(_) | Value::Undefined)
    {
        return s;
    }
    let unknown = |e: &Expr, runtime: &mut Vec<String>| {
        runtime.push(format!(
            "{key}: `{}` computed at run time",
            source_of(sch.ci, m, base, e)
        ));
        RUNTIME.to_string()
    };
    match e {
        Expr::Paren(p) => partial_text(sch, m, base, &p.expr, locals, key, runtime),
        Expr::Tpl(t) => {
            let mut out = String::new();
            for (i, q) in t.quasis.iter().enumerate() {
                if let Some(c) = &q.cooked {
                    out.push_str(&c.to_string_lossy());
                }
                if let Some(x) = t.exprs.get(i) {
                    out.push_str(&partial_text(sch, m, base, x, locals, key, runtime));
                }
            }
            out
        }
        Expr::Bin(b) if b.op == BinaryOp::Add => {
            let l = partial_text(sch, m, base, &b.left, locals, key, runtime);
            let r = partial_text(sch, m, base, &b.right, locals, key, runtime);
            l + &r
        }
        Expr::Ident(i) => match locals.iter().rposition(|(k, _)| k == &*i.sym) {
            Some(ix) => partial_text(sch, m, base, locals[ix].1, &locals[..ix], key, runtime),
            None => unknown(e, runtime),
        },
        // A call of a function of the bundle whose body is one returned
        // text: that text, its parameters left as run-time parts.
        Expr::Call(c)
            if let Callee::Expr(f) = &c.callee
                && let Expr::Ident(f) = &**f
                && let Some(d) = sch.def(m, &f.sym)
                && let Some((r, inner)) = fn_returns(&d.expr)
                && matches!(r, Expr::Tpl(_) | Expr::Lit(Lit::Str(_)) | Expr::Bin(_)) =>
        {
            let (dm, db) = (d.m, d.base);
            partial_text(sch, dm, db, r, &inner, key, runtime)
        }
        _ => unknown(e, runtime),
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
        assert_eq!(t.description, format!("Run {RUNTIME}"));
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
var SCH = obj({ url: str().describe("where"), deep: pre((v) => v, str().optional()) });
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
        assert_eq!(t.input_schema["required"], json!(["url"]));
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
