//! The slash commands: object literals with a command `type` (`local`,
//! `local-jsx`, `prompt`) and a `name`, whatever registers them.

use super::Site;
use super::tools::RUNTIME;
use super::tools::objects::{Member, each_object, has, member, snippets_with};
use super::tools::schema::Schemas;
use crate::analysis::eval::Value;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Command {
    pub name: String,
    pub kind: String,
    pub description: Option<String>,
    pub aliases: Vec<String>,
    pub hidden: Option<bool>,
    /// What enables it (a flag, a setting, an environment variable), when
    /// that is decided statically.
    pub enabled_by: Vec<String>,
    pub sites: Vec<Site>,
}

/// The values of a command object's `type`.
const KINDS: [&str; 3] = ["local", "local-jsx", "prompt"];

pub fn find(ci: &CodeIndex) -> Vec<Command> {
    let needles: Vec<String> = KINDS.iter().map(|k| format!("\"{k}\"")).collect();
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    let snippets = snippets_with(ci, &needles);
    let mut sch = Schemas::new(ci);
    let mut by_name: BTreeMap<String, Command> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for sn in &snippets {
        let (m, base) = (sn.module, sn.base);
        let mut found = Vec::new();
        each_object(&sn.expr, &mut |o| {
            let Some(Member::Value(Expr::Lit(Lit::Str(t)))) = member(o, "type") else {
                return;
            };
            let kind = t.value.to_string_lossy().into_owned();
            // A command is described to the user or run: it has a
            // description, a call, a loader or a prompt builder.
            if !KINDS.contains(&kind.as_str())
                || !["description", "call", "load", "getPromptForCommand"]
                    .iter()
                    .any(|k| has(o, k))
            {
                return;
            }
            let off = sn.offset(o);
            if !seen.insert((m, off)) {
                return;
            }
            let Some(Member::Value(n)) = member(o, "name") else {
                return;
            };
            let Some(Value::Str(name)) = sch.value(m, n, base) else {
                return;
            };
            let description = match member(o, "description") {
                Some(Member::Value(e)) => match sch.value(m, e, base) {
                    Some(Value::Str(s)) => Some(s),
                    _ => Some(RUNTIME.to_string()),
                },
                Some(Member::Body(_)) => Some(RUNTIME.to_string()),
                None => None,
            };
            let aliases = match member(o, "aliases") {
                Some(Member::Value(e)) => match sch.value(m, e, base) {
                    Some(Value::Array(a)) => a
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            let hidden = match member(o, "isHidden") {
                Some(Member::Value(e)) => match sch.value(m, e, base) {
                    Some(Value::Bool(b)) => Some(b),
                    _ => None,
                },
                Some(Member::Body(_)) => None,
                None => Some(false),
            };
            let mut names = BTreeSet::new();
            for key in ["isEnabled", "isHidden"] {
                match member(o, key) {
                    Some(Member::Value(e)) => names_read(&mut sch, m, e, &mut names),
                    Some(Member::Body(Some(b))) => {
                        let mut v = Strings::default();
                        b.visit_with(&mut v);
                        names.extend(v.strings);
                        for f in v.callees {
                            names_in_function(&mut sch, m, &f, &mut names);
                        }
                    }
                    _ => {}
                }
            }
            found.push(Command {
                name,
                kind,
                description,
                aliases,
                hidden,
                enabled_by: names.into_iter().collect(),
                sites: vec![Site::at(&ci.modules[m], off)],
            });
        });
        for c in found {
            match by_name.get_mut(&c.name) {
                // Variants of one command (per platform, per mode): one
                // entry, every site.
                Some(prev) => {
                    prev.sites.extend(c.sites);
                    prev.sites.sort();
                    prev.sites.dedup();
                    for a in c.aliases {
                        if !prev.aliases.contains(&a) {
                            prev.aliases.push(a);
                        }
                    }
                    for e in c.enabled_by {
                        if !prev.enabled_by.contains(&e) {
                            prev.enabled_by.push(e);
                        }
                    }
                    if prev.description.as_deref().is_none_or(|d| d == RUNTIME) {
                        prev.description = c.description.or(prev.description.take());
                    }
                }
                None => {
                    by_name.insert(c.name.clone(), c);
                }
            }
        }
    }
    by_name.into_values().collect()
}

/// Names (flags, settings, environment variables) an enabling condition
/// reads: the name-like strings in it, and in the functions it calls
/// (one level down).
fn names_read(sch: &mut Schemas, m: usize, e: &Expr, out: &mut BTreeSet<String>) {
    let mut v = Strings::default();
    e.visit_with(&mut v);
    out.extend(v.strings);
    for f in v.callees {
        names_in_function(sch, m, &f, out);
    }
}

fn names_in_function(sch: &mut Schemas, m: usize, f: &str, out: &mut BTreeSet<String>) {
    if let Some(d) = sch.def(m, f) {
        let mut v = Strings::default();
        d.expr.visit_with(&mut v);
        out.extend(v.strings);
    }
}

/// Name-like string literals and the identifiers called, in a node.
#[derive(Default)]
struct Strings {
    strings: Vec<String>,
    callees: Vec<String>,
}

impl Visit for Strings {
    fn visit_str(&mut self, s: &Str) {
        let s = s.value.to_string_lossy();
        if is_name(&s) {
            self.strings.push(s.into_owned());
        }
    }
    fn visit_call_expr(&mut self, c: &CallExpr) {
        if let Callee::Expr(f) = &c.callee
            && let Expr::Ident(i) = &**f
            && self.callees.len() < 16
        {
            self.callees.push(i.sym.to_string());
        }
        crate::js::depth::guard(|| c.visit_children_with(self));
    }
}

/// A flag, setting or environment variable's name: an identifier with an
/// underscore or a capital inside (`tengu_x`, `CLAUDE_X`, `someSetting`).
fn is_name(s: &str) -> bool {
    s.len() >= 4
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (s.contains('_') || s.chars().skip(1).any(|c| c.is_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    #[test]
    fn command_objects_with_their_aliases_and_enabling_names() {
        let ci = testjs::script(
            r#"
function helloOn() { return readFlag("tengu_hello_enabled", false); }
var cmd = { type: "local-jsx", name: "hello", aliases: ["hi"], description: "Say hello",
  isEnabled: () => helloOn() && process.env.USER_TYPE === "x", isHidden: false, load: () => null };
var hidden = { type: "local", name: "secret", get description() { return pick(); },
  isHidden: true, call() {} };
var notCmd = { type: "prompt", prompt: "no name" };
var dynamic = { type: "prompt", name: "mcp__" + server, description: "d", call() {} };
var hook = { type: "prompt", name: "x" };
"#,
        );
        let cs = find(&ci);
        let names: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["hello", "secret"]);
        let h = &cs[0];
        assert_eq!(h.kind, "local-jsx");
        assert_eq!(h.aliases, ["hi"]);
        assert_eq!(h.description.as_deref(), Some("Say hello"));
        assert_eq!(h.hidden, Some(false));
        assert_eq!(h.enabled_by, ["tengu_hello_enabled"]);
        assert_eq!(cs[1].hidden, Some(true));
        assert_eq!(cs[1].description.as_deref(), Some(RUNTIME));
    }
}
