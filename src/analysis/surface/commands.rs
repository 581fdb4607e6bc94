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
    /// Whether the model may invoke it itself (a bundled skill or workflow
    /// registered without `disableModelInvocation`), when that is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_invocable: Option<bool>,
    /// Whether the user may invoke it (`userInvocable`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_invocable: Option<bool>,
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
    // Registration functions: (module, function name, kind).
    let mut registrars: BTreeSet<(usize, String, &'static str)> = BTreeSet::new();
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
            // `name: e.name` in a function building a command from the
            // definition it is given: a registration function.
            if let Expr::Member(nm) = n
                && let Expr::Ident(_) = &*nm.obj
                && matches!(&nm.prop, MemberProp::Ident(p) if &*p.sym == "name")
            {
                if has(o, "getPromptForCommand")
                    && let Some(id) = ci.modules[m].index.enclosing_function(off)
                    && let Some(fname) = ci.modules[m].index.functions[id as usize]
                        .name
                        .as_deref()
                        .map(str::to_string)
                {
                    let workflow = matches!(member(o, "kind"),
                        Some(Member::Value(Expr::Lit(Lit::Str(k)))) if &*k.value == "workflow");
                    registrars.insert((m, fname, if workflow { "workflow" } else { "skill" }));
                }
                return;
            }
            let Some(Value::Str(name)) = sch.value(m, n, base) else {
                return;
            };
            let (description, aliases) = description_and_aliases(&mut sch, m, base, o);
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
                model_invocable: None,
                user_invocable: None,
                sites: vec![Site::at(&ci.modules[m], off)],
            });
        });
        merge_all(&mut by_name, found);
    }
    let registered = registrations(ci, &mut sch, &registrars);
    merge_all(&mut by_name, registered);
    by_name.into_values().collect()
}

/// Add commands, merging variants of one name.
fn merge_all(by_name: &mut BTreeMap<String, Command>, found: Vec<Command>) {
    {
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
}

/// The commands registered through a registration function: every call
/// of it (in its module, or under an imported name in another chunk)
/// with an object literal — a bundled skill or workflow.
fn registrations(
    ci: &CodeIndex,
    sch: &mut Schemas,
    registrars: &BTreeSet<(usize, String, &'static str)>,
) -> Vec<Command> {
    let mut out = Vec::new();
    if registrars.is_empty() {
        return out;
    }
    for (mi, module) in ci.modules.iter().enumerate() {
        let mut resolved: std::collections::HashMap<&str, Option<&'static str>> =
            std::collections::HashMap::new();
        for call in &module.index.calls {
            if call.member || call.args == 0 {
                continue;
            }
            let name: &str = &call.name;
            let kind = *resolved.entry(name).or_insert_with(|| {
                let (t, local) = if ci.import_named(mi, name).is_some() {
                    ci.follow_import(mi, name)?
                } else {
                    (mi, name)
                };
                registrars
                    .iter()
                    .find(|(rm, rn, _)| *rm == t && rn == local)
                    .map(|(_, _, k)| *k)
            });
            let Some(kind) = kind else { continue };
            let Some(text) = module.source().get(call.lo as usize..call.hi as usize) else {
                continue;
            };
            let Ok(e) = crate::analysis::eval::parse_snippet(text) else {
                continue;
            };
            let Expr::Call(c) = &*e else { continue };
            let Some(Expr::Object(o)) = c.args.first().map(|a| &*a.expr) else {
                continue;
            };
            if let Some(cmd) = registered(sch, mi, call.lo, o, kind) {
                out.push(cmd);
            }
        }
    }
    out
}

/// The command one registration's definition object describes.
fn registered(
    sch: &mut Schemas,
    m: usize,
    base: u32,
    o: &ObjectLit,
    kind: &str,
) -> Option<Command> {
    let Some(Member::Value(n)) = member(o, "name") else {
        return None;
    };
    let Some(Value::Str(name)) = sch.value(m, n, base) else {
        return None;
    };
    let flag = |sch: &mut Schemas, key: &str| match member(o, key) {
        Some(Member::Value(e)) => match sch.value(m, e, base) {
            Some(Value::Bool(b)) => Some(Some(b)),
            _ => Some(None),
        },
        Some(Member::Body(_)) => Some(None),
        None => None,
    };
    // Defaults as the registration reads them: invocable by the model
    // unless it says otherwise, by the user unless `userInvocable: false`.
    let model_invocable = match flag(sch, "disableModelInvocation") {
        None => Some(true),
        Some(b) => b.map(|b| !b),
    };
    let user_invocable = flag(sch, "userInvocable").unwrap_or(Some(true));
    let (description, aliases) = description_and_aliases(sch, m, base, o);
    let mut names = BTreeSet::new();
    match member(o, "isEnabled") {
        Some(Member::Value(e)) => names_read(sch, m, e, &mut names),
        Some(Member::Body(Some(b))) => {
            let mut v = Strings::default();
            b.visit_with(&mut v);
            names.extend(v.strings);
            for f in v.callees {
                names_in_function(sch, m, &f, &mut names);
            }
        }
        _ => {}
    }
    Some(Command {
        name,
        kind: kind.to_string(),
        description,
        aliases,
        hidden: user_invocable.map(|u| !u),
        enabled_by: names.into_iter().collect(),
        model_invocable,
        user_invocable,
        sites: vec![Site::at(&sch.ci.modules[m], base)],
    })
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
/// A command's `description` (`${…}` when computed at run time) and its
/// static `aliases`.
fn description_and_aliases(
    sch: &mut Schemas,
    m: usize,
    base: u32,
    o: &ObjectLit,
) -> (Option<String>, Vec<String>) {
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
    (description, aliases)
}

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
    #[test]
    fn bundled_skills_registered_through_a_registration_function() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-r.js",
                r#"
function register(def) {
  let cmd = { type: "prompt", name: def.name, description: def.description,
    disableModelInvocation: def.disableModelInvocation ?? false, userInvocable: def.userInvocable ?? true,
    source: "bundled", getPromptForCommand: def.getPromptForCommand };
  list.push(cmd);
}
export { register };
"#,
            ),
            (
                "/$bunfs/root/chunk-s.js",
                r#"
import { register as reg } from "./chunk-r.js";
var NAME = "tidy";
function setup() {
  reg({ name: NAME, description: "Tidy " + "the tree", async getPromptForCommand() { return []; } });
  reg({ name: "deploy", description: "Ship it", disableModelInvocation: true,
    isEnabled: () => readFlag("feature_deploy_skill"), async getPromptForCommand() { return []; } });
  reg({ name: "notes", description: "Reference", userInvocable: false, async getPromptForCommand() { return []; } });
  other({ name: "not-a-skill" });
}
"#,
            ),
        ]);
        let cs = find(&ci);
        let names: Vec<(&str, &str)> = cs
            .iter()
            .map(|c| (c.name.as_str(), c.kind.as_str()))
            .collect();
        assert_eq!(
            names,
            [("deploy", "skill"), ("notes", "skill"), ("tidy", "skill")]
        );
        let (d, n, t) = (&cs[0], &cs[1], &cs[2]);
        assert_eq!(t.description.as_deref(), Some("Tidy the tree"));
        assert_eq!(
            (t.model_invocable, t.user_invocable),
            (Some(true), Some(true))
        );
        assert_eq!(d.model_invocable, Some(false));
        assert_eq!(d.enabled_by, ["feature_deploy_skill"]);
        assert_eq!((n.user_invocable, n.hidden), (Some(false), Some(true)));
        assert!(cs.iter().all(|c| c.sites[0].module.ends_with("chunk-s.js")));
    }
}
