//! The keys of the settings schema.
//!
//! The user settings are validated by a zod-style object schema. Its shape
//! is an object literal whose properties are validators — written directly
//! (`object({permissions: …, env: …})`) or as thunks building them lazily
//! (`{permissions: () => …}`, handed to a class that assembles the schema).
//! It is found by structure: an object literal with a `permissions`
//! property (every settings file may have one — the anchor), enough other
//! properties, most of them validators. Each property is read as the tools'
//! input schemas are (`tools::schema`), so a key's type, description and
//! default are the evaluated ones; nested object schemas give dotted keys.

use super::Site;
use super::tools::objects::{each_object, key_name, snippets_with};
use super::tools::schema::Schemas;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};
use serde_json::Value as J;
use swc_ecma_ast::*;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setting {
    pub key: String,
    pub r#type: String,
    pub description: Option<String>,
    pub default: Option<serde_json::Value>,
    pub sites: Vec<Site>,
}

/// The property every settings schema has: the anchor of the search.
const ANCHOR: &str = "permissions";
/// The fewest properties a settings shape has (dozens in every build).
const MIN_KEYS: usize = 20;
/// How deep nested object schemas are opened as dotted keys.
const MAX_NESTING: usize = 4;

/// Where the settings shape was found: its module and the offset of its
/// object literal (where the schema is built, to follow it to the model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub module: u32,
    pub at: u32,
}

/// The settings' keys, and where their shape is.
pub fn find_shape(ci: &CodeIndex) -> (Vec<Setting>, Option<Shape>) {
    let needle = format!("{ANCHOR}:");
    let snippets = snippets_with(ci, &[needle.as_str()]);
    // The shape with the most validator properties among the object
    // literals holding the anchor.
    let mut best: Option<(usize, Vec<Setting>, Shape)> = None;
    let mut sch = Schemas::new(ci);
    for sn in &snippets {
        let (m, base) = (sn.module, sn.base);
        each_object(&sn.expr, &mut |o| {
            let props = keys(o).len();
            if props < MIN_KEYS || !keys(o).iter().any(|(k, _)| k == ANCHOR) {
                return;
            }
            let found = read_shape(&mut sch, m, base, o);
            // Most properties must be validators: a settings shape, not a
            // default-settings value or a UI table with the same keys.
            let top = found.iter().filter(|s| !s.key.contains('.')).count();
            if top * 2 < props {
                return;
            }
            if best.as_ref().is_none_or(|(n, _, _)| top > *n) {
                let shape = Shape {
                    module: m as u32,
                    at: base + o.span.lo.0.saturating_sub(1),
                };
                best = Some((top, found, shape));
            }
        });
    }
    let Some((_, mut out, shape)) = best else {
        return (Vec::new(), None);
    };
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out.dedup_by(|a, b| a.key == b.key);
    (out, Some(shape))
}

/// The static keys of an object literal, with the node holding each.
fn keys(o: &ObjectLit) -> Vec<(String, &Prop)> {
    o.props
        .iter()
        .filter_map(|p| match p {
            PropOrSpread::Prop(p) => match &**p {
                Prop::KeyValue(kv) => key_name(&kv.key).map(|k| (k, &**p)),
                Prop::Method(mp) => key_name(&mp.key).map(|k| (k, &**p)),
                Prop::Getter(g) => key_name(&g.key).map(|k| (k, &**p)),
                _ => None,
            },
            PropOrSpread::Spread(_) => None,
        })
        .collect()
}

/// Each property of a settings shape whose value is a validator, with the
/// nested object schemas opened as dotted keys.
fn read_shape(sch: &mut Schemas, m: usize, base: u32, o: &ObjectLit) -> Vec<Setting> {
    let mut out = Vec::new();
    for p in &o.props {
        let PropOrSpread::Prop(p) = p else { continue };
        let (key, value, span) = match &**p {
            Prop::KeyValue(kv) => match key_name(&kv.key) {
                Some(k) => (k, &*kv.value, kv.key.span()),
                None => continue,
            },
            _ => continue,
        };
        // A thunk (`key: () => validator`) is looked through by `schema`.
        // A validator built by a helper the reconstruction cannot follow
        // (a function local to the builder, a recursive getter) is still a
        // key: its chain gives the description and default, the type stays
        // unknown.
        let Some(s) = sch
            .schema(m, value, base, &[])
            .or_else(|| chain_only(sch, m, base, value))
        else {
            continue;
        };
        let off = base + span.lo.0.saturating_sub(1);
        let site = Site::at(&sch.ci.modules[m], off);
        push(&mut out, key, &J::Object(s.json), &site, 0);
    }
    out
}

/// The description and default of a validator's method chain
/// (`helper(…).optional().describe("…")`), when its base is unknown: some
/// chain method must be there for the value to count as a validator.
fn chain_only(sch: &mut Schemas, m: usize, base: u32, e: &Expr) -> Option<super::tools::schema::S> {
    let e = match super::tools::objects::fn_returns(e) {
        Some((r, _)) => r,
        None => e,
    };
    let mut s = super::tools::schema::S::default();
    let mut chained = false;
    let mut cur = e;
    for _ in 0..32 {
        let Expr::Call(c) = cur else { break };
        let Callee::Expr(f) = &c.callee else { break };
        let Expr::Member(mem) = &**f else { break };
        let MemberProp::Ident(method) = &mem.prop else {
            break;
        };
        let arg = c.args.first().map(|a| &*a.expr);
        match &*method.sym {
            "describe" => {
                if let Some(crate::analysis::eval::Value::Str(d)) =
                    arg.and_then(|a| sch.value(m, a, base))
                {
                    // The outermost description wins, as in the library.
                    s.json.entry("description").or_insert(d.into());
                }
            }
            "default" => {
                if let Some(v) = arg.and_then(|a| sch.value(m, a, base))
                    && !matches!(v, crate::analysis::eval::Value::Func(_))
                {
                    s.json.entry("default").or_insert(v.to_json());
                }
            }
            "optional" | "nullable" | "nullish" | "catch" | "check" | "refine" | "superRefine"
            | "transform" | "passthrough" | "strict" => {}
            _ => break,
        }
        chained = true;
        cur = &mem.obj;
    }
    chained.then_some(s)
}

fn push(out: &mut Vec<Setting>, key: String, s: &J, site: &Site, depth: usize) {
    out.push(Setting {
        key: key.clone(),
        r#type: type_of(s),
        description: s["description"].as_str().map(str::to_string),
        default: s.get("default").cloned(),
        sites: vec![site.clone()],
    });
    if depth >= MAX_NESTING {
        return;
    }
    if let Some(props) = s["properties"].as_object() {
        for (k, v) in props {
            push(out, format!("{key}.{k}"), v, site, depth + 1);
        }
    }
    // A list of objects (`z.array(z.object({…}))`): its elements' fields,
    // as `key[].field` (a sandbox credential's claims, its policy).
    if let Some(props) = s["items"]["properties"].as_object() {
        for (k, v) in props {
            push(out, format!("{key}[].{k}"), v, site, depth + 1);
        }
    }
}

/// A short type: the JSON Schema type, `a|b` for a union, `enum`, `const`
/// or `any`.
fn type_of(s: &J) -> String {
    match &s["type"] {
        J::String(t) => return t.clone(),
        J::Array(ts) => {
            return ts
                .iter()
                .filter_map(J::as_str)
                .collect::<Vec<_>>()
                .join("|");
        }
        _ => {}
    }
    if let Some(any) = s["anyOf"].as_array() {
        let mut ts: Vec<String> = any.iter().map(type_of).collect();
        ts.dedup();
        return ts.join("|");
    }
    if s.get("enum").is_some() {
        return "enum".into();
    }
    if s.get("const").is_some() {
        return "const".into();
    }
    "any".into()
}

use swc_common::Spanned;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    /// A settings shape of our own with `n` plain string keys after the
    /// named ones.
    fn filler(n: usize, thunk: bool) -> String {
        (0..n)
            .map(|i| {
                if thunk {
                    format!("key{i}: () => z.string().optional(),")
                } else {
                    format!("key{i}: z.string().optional(),")
                }
            })
            .collect()
    }

    #[test]
    fn a_namespace_shape_with_nested_objects_as_dotted_keys() {
        let ci = testjs::script(&format!(
            r#"
var z = {{}};
function perms() {{ return z.object({{ allow: z.array(z.string()).describe("rules allowed"),
  mode: z.enum(["ask", "auto"]).default("ask"),
  hosts: z.array(z.object({{ name: z.string().describe("the host's name"), port: z.number() }})).optional() }}).passthrough(); }}
function settingsSchema() {{ return z.object({{
  permissions: perms().optional().describe("what tools may do"),
  env: z.record(z.string(), z.string()).optional(),
  cleanupDays: z.number().int().default(30).describe("days kept"),
  {} }}); }}
var defaults = {{ permissions: {{ allow: [] }}, env: {{}}, {} }};
"#,
            filler(25, false),
            (0..25)
                .map(|i| format!("key{i}: \"x\","))
                .collect::<String>()
        ));
        let v = find_shape(&ci).0;
        let get = |k: &str| {
            v.iter()
                .find(|s| s.key == k)
                .unwrap_or_else(|| panic!("no {k} in {v:?}"))
        };
        assert_eq!(
            v.len(),
            3 + 3 + 2 + 25,
            "{:?}",
            v.iter().map(|s| &s.key).collect::<Vec<_>>()
        );
        assert_eq!(get("permissions").r#type, "object");
        assert_eq!(
            get("permissions").description.as_deref(),
            Some("what tools may do")
        );
        assert_eq!(get("permissions.allow").r#type, "array");
        assert_eq!(get("permissions.mode").default, Some(J::from("ask")));
        // The fields of a list's objects.
        assert_eq!(
            get("permissions.hosts[].name").description.as_deref(),
            Some("the host's name")
        );
        assert_eq!(get("permissions.hosts[].port").r#type, "number");
        assert_eq!(get("cleanupDays").r#type, "integer");
        assert_eq!(get("cleanupDays").default, Some(J::from(30.0)));
        assert_eq!(get("key3").r#type, "string");
        assert!(get("env").sites[0].offset > 0);
    }

    #[test]
    fn a_shape_of_thunks_with_bare_constructors() {
        let ci = testjs::script(&format!(
            r#"
var z = {{}};
class Str {{ get type() {{ return "string"; }} optional() {{ return this; }} describe() {{ return this; }} }}
function s() {{ return new Str(); }}
function shape(e) {{ return {{
  permissions: () => z.object({{ deny: z.array(s()) }}).optional(),
  apiHelper: () => s().optional().describe("a helper script"),
  {} }}; }}
var Schema = new Builder(shape(1)).whole();
"#,
            filler(25, true)
        ));
        let v = find_shape(&ci).0;
        let keys: Vec<&str> = v.iter().map(|s| s.key.as_str()).collect();
        assert!(keys.contains(&"permissions.deny"), "{keys:?}");
        let h = v.iter().find(|s| s.key == "apiHelper").unwrap();
        assert_eq!(h.r#type, "string");
        assert_eq!(h.description.as_deref(), Some("a helper script"));
        assert_eq!(v.len(), 2 + 1 + 25);
    }

    #[test]
    fn a_key_whose_validator_is_not_followed_keeps_its_chain() {
        let ci = testjs::script(&format!(
            r#"
var z = {{}};
function shape() {{ function local(k) {{ return z.record(z.string(), mk(k)); }}
  return {{ permissions: () => z.object({{}}), market: () => lazy(() => local("m")).describe("where from"),
  hooks: hooksSchema().optional().default({{}}), {} }}; }}
"#,
            filler(25, true)
        ));
        let v = find_shape(&ci).0;
        let m = v.iter().find(|s| s.key == "market").expect("market");
        assert_eq!(m.description.as_deref(), Some("where from"));
        let h = v.iter().find(|s| s.key == "hooks").expect("hooks");
        assert_eq!(h.r#type, "any");
    }

    #[test]
    fn objects_that_are_not_validators_are_not_settings() {
        let ci = testjs::script(&format!(
            "var defaults = {{ permissions: {{ allow: [] }}, {} }};",
            (0..30)
                .map(|i| format!("key{i}: \"x\","))
                .collect::<String>()
        ));
        assert!(find_shape(&ci).0.is_empty());
    }
}
