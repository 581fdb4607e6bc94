//! Reading a gate: its statements, one by one, into conditions in plain
//! words (`if (X) return false;` means "X must not hold").

use super::{Condition, ConditionKind};
use crate::analysis::eval::{Evaluator, Value, parse_snippet};
use crate::analysis::flags::{AccessorKind, Classifier, is_flag_name};
use crate::analysis::workflows::EFFORT_LEVELS;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::depth;
use crate::js::index::FnId;
use std::collections::BTreeSet;
use swc_common::Spanned;
use swc_ecma_ast::*;

/// The longest function read as a gate. Gates are a handful of checks;
/// anything much longer is not a list of checks, and re-parsing every such
/// candidate would cost.
pub(super) const MAX_GATE_BYTES: usize = 3000;

/// The longest helper whose reads (env, settings, policy, flags) are named
/// in a condition: a helper is a few lines; past this it is a function
/// that does other work, whose reads would not describe the condition.
const MAX_HELPER_BYTES: usize = 4000;

/// How many calls deep a helper's reads are followed (`enabled()` →
/// `policy()` → `settings()`): enough for real builds' chains, and it
/// bounds the work on a call graph with cycles.
const HELPER_DEPTH: usize = 3;

/// How much of an unrecognised condition's source is quoted.
const MAX_QUOTED_CHARS: usize = 100;

pub struct GateReader<'a> {
    ci: &'a CodeIndex,
    cls: Classifier<'a>,
    ev: Evaluator<'a>,
}

/// `isNonInteractiveSession` → "non interactive session".
fn words(camel: &str) -> String {
    let s = camel.strip_prefix("is").unwrap_or(camel);
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// `t.options?.isSkillPreload` → ["options", "isSkillPreload"] on param `t`.
fn member_path(e: &Expr) -> Option<(String, Vec<String>)> {
    match e {
        Expr::Ident(i) => Some((i.sym.to_string(), Vec::new())),
        Expr::Member(m) => {
            let (root, mut path) = depth::guard(|| member_path(&m.obj))?;
            match &m.prop {
                MemberProp::Ident(p) => path.push(p.sym.to_string()),
                _ => return None,
            }
            Some((root, path))
        }
        Expr::OptChain(o) => match &*o.base {
            OptChainBase::Member(m) => depth::guard(|| member_path(&Expr::Member(m.clone()))),
            _ => None,
        },
        Expr::Paren(p) => depth::guard(|| member_path(&p.expr)),
        _ => None,
    }
}

impl<'a> GateReader<'a> {
    pub fn new(ci: &'a CodeIndex) -> GateReader<'a> {
        GateReader {
            ci,
            cls: Classifier::new(ci),
            ev: Evaluator::new(ci),
        }
    }

    /// Read function `id` of module `m` as a gate; None when its body is
    /// not a list of checks.
    pub fn read(&mut self, m: usize, id: FnId) -> Option<Vec<Condition>> {
        let module = &self.ci.modules[m];
        let f = &module.index.functions[id as usize];
        let text = &module.source()[f.lo as usize..f.hi as usize];
        if text.len() > MAX_GATE_BYTES {
            return None;
        }
        let wrapped = format!("({text})");
        let base = f.lo.saturating_sub(1);
        let expr = parse_snippet(&wrapped).ok()?;
        let (params, stmts): (Vec<String>, Vec<Stmt>) = match &*expr {
            Expr::Paren(p) => match &*p.expr {
                Expr::Fn(func) => (
                    func.function
                        .params
                        .iter()
                        .filter_map(|p| p.pat.as_ident().map(|b| b.id.sym.to_string()))
                        .collect(),
                    func.function.body.as_ref()?.stmts.clone(),
                ),
                Expr::Arrow(a) => (
                    a.params
                        .iter()
                        .filter_map(|p| p.as_ident().map(|b| b.id.sym.to_string()))
                        .collect(),
                    match &*a.body {
                        ArrowFunctionBody::FunctionBody(b) => b.stmts.clone(),
                        ArrowFunctionBody::Expr(e) => vec![Stmt::Return(ReturnStmt {
                            span: e.span(),
                            arg: Some(e.clone()),
                        })],
                    },
                ),
                _ => return None,
            },
            _ => return None,
        };
        let mut out = Vec::new();
        let n = stmts.len();
        for (i, s) in stmts.iter().enumerate() {
            match s {
                Stmt::If(IfStmt {
                    test,
                    cons,
                    alt: None,
                    ..
                }) => {
                    let ret = match &**cons {
                        Stmt::Return(r) => r.arg.as_deref().map(bool_literal),
                        Stmt::Block(b) if b.stmts.len() == 1 => match &b.stmts[0] {
                            Stmt::Return(r) => r.arg.as_deref().map(bool_literal),
                            _ => None,
                        },
                        _ => None,
                    }??;
                    // `if (X) return false` → X must not hold; `return true` → X suffices.
                    let mut c = self.describe(m, module, test, base, &params, ret)?;
                    if ret {
                        c.text = format!("either {} (then it passes at once)", c.text);
                    }
                    out.push(c);
                }
                Stmt::Return(ReturnStmt { arg: Some(e), .. }) if i + 1 == n => {
                    if bool_literal(e) == Some(true) {
                        continue;
                    }
                    out.push(self.describe(m, module, e, base, &params, true)?);
                }
                Stmt::Decl(_) | Stmt::Expr(_) => {}
                _ => return None,
            }
        }
        for (i, c) in out.iter_mut().enumerate() {
            c.index = i + 1;
        }
        (!out.is_empty()).then_some(out)
    }

    /// Describe `e` as a condition that must be `want` (true or false).
    fn describe(
        &mut self,
        m: usize,
        module: &IndexedModule,
        e: &Expr,
        base: u32,
        params: &[String],
        want: bool,
    ) -> Option<Condition> {
        let lo = base + e.span().lo.0.saturating_sub(1);
        let at = At {
            module,
            line: module.raw_pos(lo).0,
        };
        match e {
            Expr::Unary(u) if u.op == UnaryOp::Bang => {
                let arg = &u.arg;
                return depth::guard(|| self.describe(m, module, arg, base, params, !want));
            }
            Expr::Paren(p) => {
                return depth::guard(|| self.describe(m, module, &p.expr, base, params, want));
            }
            _ => {}
        }
        if let Some(text) = argument_values(e, params, want) {
            return Some(at.condition(ConditionKind::Argument, text));
        }
        if let Some(text) = self.tool_availability(m, e, base, want) {
            return Some(at.condition(ConditionKind::ToolAvailability, text));
        }
        if let Some(text) = context_option(e, params, want) {
            return Some(at.condition(ConditionKind::ContextOption, text));
        }
        if let Expr::Call(c) = e
            && let Callee::Expr(callee) = &c.callee
            && let Expr::Ident(fname) = &**callee
        {
            let name = fname.sym.to_string();
            if self.cls.kind(m, &name) == AccessorKind::Getter {
                return self.flag_read(m, c, base, want, &at);
            }
            // A helper: name what it reads.
            if let Some((hm, hid)) = self.cls.resolve(m, &name) {
                let reads = self.helper_reads(hm, hid, 0);
                let mut cond = at.condition(
                    ConditionKind::SettingsEnvironment,
                    helper_text(&name, &reads, want),
                );
                cond.helper_flags = reads.flags.clone();
                return Some(cond);
            }
        }
        let text = &module.source()[lo as usize..(base + e.span().hi.0.saturating_sub(1)) as usize];
        Some(at.condition(
            ConditionKind::Other,
            format!(
                "`{}` is {}",
                text.chars().take(MAX_QUOTED_CHARS).collect::<String>(),
                if want { "true" } else { "false" }
            ),
        ))
    }

    /// `ctx.options?.tools?.some(t => isTool(t, NAME))`: the session has a
    /// tool.
    fn tool_availability(&mut self, m: usize, e: &Expr, base: u32, want: bool) -> Option<String> {
        let (callee, args): (&Expr, &[ExprOrSpread]) = match e {
            Expr::Call(c) => match &c.callee {
                Callee::Expr(callee) => (&**callee, &c.args[..]),
                _ => return None,
            },
            Expr::OptChain(o) => match &*o.base {
                OptChainBase::Call(c) => (&*c.callee, &c.args[..]),
                _ => return None,
            },
            _ => return None,
        };
        let (_, path) = member_path(callee)?;
        if path.last().map(String::as_str) != Some("some") || !path.iter().any(|p| p == "tools") {
            return None;
        }
        let tool = args
            .first()
            .and_then(|a| self.tool_name(m, &a.expr, base))
            .unwrap_or_else(|| "a".into());
        Some(if want {
            format!("the session has the {tool} tool")
        } else {
            format!("the session lacks the {tool} tool")
        })
    }

    /// A flag getter's call (`getter("tengu_x", false)`): the flag must be
    /// `want`, its default shown; `None` when the flag is not a name.
    fn flag_read(
        &mut self,
        m: usize,
        c: &CallExpr,
        base: u32,
        want: bool,
        at: &At,
    ) -> Option<Condition> {
        let flag =
            c.args
                .first()
                .and_then(|a| match self.ev.eval(m, &a.expr, base, &Vec::new()) {
                    Ok(Value::Str(s)) if is_flag_name(&s) => Some(s),
                    _ => None,
                })?;
        let default = c.args.get(1).map(|a| {
            self.ev
                .eval(m, &a.expr, base, &Vec::new())
                .map(|v| v.to_json())
                .unwrap_or(serde_json::Value::Null)
        });
        let shown = default
            .as_ref()
            .map_or("none".to_string(), |d| d.to_string());
        let mut cond = at.condition(
            ConditionKind::FeatureFlag,
            format!(
                "the flag {flag} is {} (default {shown})",
                if want { "true" } else { "false" }
            ),
        );
        cond.flag = Some(flag);
        cond.default = default;
        cond.expect = Some(want);
        Some(cond)
    }

    fn tool_name(&mut self, m: usize, cb: &Expr, base: u32) -> Option<String> {
        let body = match cb {
            Expr::Arrow(a) => match &*a.body {
                ArrowFunctionBody::Expr(e) => e.clone(),
                _ => return None,
            },
            _ => return None,
        };
        let Expr::Call(c) = &*body else { return None };
        let last = c.args.last()?;
        match self.ev.eval(m, &last.expr, base, &Vec::new()) {
            Ok(Value::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// What a helper function reads, following its calls a few levels.
    fn helper_reads(&mut self, m: usize, id: FnId, depth: usize) -> Reads {
        let mut r = Reads::default();
        let module = &self.ci.modules[m];
        let f = &module.index.functions[id as usize];
        let src = &module.source()[f.lo as usize..f.hi as usize];
        if src.len() > MAX_HELPER_BYTES {
            return r;
        }
        static ENV: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new(r"process\.env\.([A-Z0-9_]+)").unwrap());
        static SETTINGS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r"settings\??\.([A-Za-z0-9_]+)").unwrap()
        });
        r.env
            .extend(ENV.captures_iter(src).map(|c| c[1].to_string()));
        r.settings
            .extend(SETTINGS.captures_iter(src).map(|c| c[1].to_string()));
        if src.contains("available") {
            r.available = true;
        }
        let calls: Vec<crate::js::index::Call> = module
            .index
            .calls_within(f.lo, f.hi)
            .iter()
            .filter(|c| !c.member)
            .cloned()
            .collect();
        for c in calls {
            if let Some(p) = c.arg0.as_ref().and_then(|a| a.string()) {
                if p.starts_with("allow_") {
                    r.policy.insert(p.to_string());
                    continue;
                }
                if is_flag_name(p) && self.cls.kind(m, &c.name) == AccessorKind::Getter {
                    let d = c
                        .arg1
                        .as_ref()
                        .and_then(|a| {
                            parse_snippet(&module.source()[a.lo as usize..a.hi as usize])
                                .ok()
                                .and_then(|e| self.ev.eval(m, &e, a.lo, &Vec::new()).ok())
                        })
                        .map(|v| v.to_json())
                        .unwrap_or(serde_json::Value::Null);
                    if !r.flags.iter().any(|(n, _)| n == p) {
                        r.flags.push((p.to_string(), d));
                    }
                    continue;
                }
            }
            if depth < HELPER_DEPTH
                && let Some((cm, cid)) = self.cls.resolve(m, &c.name)
                && (cm, cid) != (m, id)
            {
                let inner = self.helper_reads(cm, cid, depth + 1);
                r.merge(inner);
            }
        }
        r
    }
}

/// Where a condition is read: its module and raw line.
struct At<'m> {
    module: &'m IndexedModule,
    line: u32,
}

impl At<'_> {
    fn condition(&self, kind: ConditionKind, text: String) -> Condition {
        Condition {
            index: 0,
            kind,
            text,
            flag: None,
            default: None,
            expect: None,
            helper_flags: Vec::new(),
            module: self.module.name.clone(),
            line: self.line,
        }
    }
}

/// `e !== "a" && e !== "b" …`: the argument is one of the values.
fn argument_values(e: &Expr, params: &[String], want: bool) -> Option<String> {
    let (arg, values) = excluded_values(e)?;
    let pos = params
        .iter()
        .position(|p| *p == arg)
        .map_or(String::new(), |i| format!("argument {}", i + 1));
    let subject = if values.iter().all(|v| EFFORT_LEVELS.contains(&v.as_str())) {
        format!("the level ({pos})")
    } else {
        pos
    };
    let list = match values.len() {
        1 => values[0].clone(),
        _ => format!(
            "{} or {}",
            values[..values.len() - 1].join(", "),
            values[values.len() - 1]
        ),
    };
    Some(if want {
        format!("{subject} is not {list}")
    } else {
        format!("{subject} is {list}")
    })
}

/// `ctx.options?.isNonInteractiveSession` on a parameter: an option of the
/// context the gate is called with.
fn context_option(e: &Expr, params: &[String], want: bool) -> Option<String> {
    let (root, path) = member_path(e)?;
    if !params.contains(&root) || path.len() < 2 {
        return None;
    }
    let option = path.last().unwrap().clone();
    let phrase = match (option.as_str(), want) {
        ("isNonInteractiveSession", false) => {
            "the session is interactive (not `claude -p`)".to_string()
        }
        ("isSkillPreload", false) => "the skill is not being preloaded".to_string(),
        (o, false) => format!("not a {} ({})", words(o), path.join(".")),
        (o, true) => format!("{} ({})", words(o), path.join(".")),
    };
    Some(format!("{phrase} [{}]", path.join(".")))
}

#[derive(Default, Debug)]
struct Reads {
    env: BTreeSet<String>,
    settings: BTreeSet<String>,
    policy: BTreeSet<String>,
    flags: Vec<(String, serde_json::Value)>,
    available: bool,
}

impl Reads {
    fn merge(&mut self, o: Reads) {
        self.env.extend(o.env);
        self.settings.extend(o.settings);
        self.policy.extend(o.policy);
        for (flag, default) in o.flags {
            if !self.flags.iter().any(|(known, _)| *known == flag) {
                self.flags.push((flag, default));
            }
        }
        self.available |= o.available;
    }
}

/// "workflows are enabled, available and permitted by policy (reads …)".
fn helper_text(name: &str, r: &Reads, want: bool) -> String {
    // The subject: the word the names read have in common.
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    let noise = [
        "claude", "code", "disable", "enable", "allow", "is", "env", "use",
    ];
    for n in r.env.iter().chain(&r.settings).chain(&r.policy) {
        // camelCase splits at capitals; SHOUTING_CASE only at underscores.
        let camel = n.chars().any(|c| c.is_lowercase());
        let spaced: String = n
            .chars()
            .flat_map(|c| {
                if camel && c.is_uppercase() {
                    vec![' ', c]
                } else {
                    vec![c]
                }
            })
            .collect();
        for w in spaced.split(['_', ' ']).filter(|w| !w.is_empty()) {
            let w = w.to_lowercase();
            if !noise.contains(&w.as_str()) {
                *counts.entry(w).or_default() += 1;
            }
        }
    }
    let subject = counts
        .iter()
        .max_by_key(|(_, c)| **c)
        .map(|(w, _)| w.clone());
    let mut facets = Vec::new();
    if r.settings
        .iter()
        .chain(&r.env)
        .any(|s| s.to_lowercase().contains("enable") || s.to_lowercase().contains("disable"))
    {
        facets.push("enabled");
    }
    if r.available || !r.flags.is_empty() {
        facets.push("available");
    }
    if !r.policy.is_empty() {
        facets.push("permitted by policy");
    }
    let mut reads = Vec::new();
    if !r.env.is_empty() {
        reads.push(format!(
            "env {}",
            r.env.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !r.settings.is_empty() {
        reads.push(format!(
            "settings {}",
            r.settings.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !r.policy.is_empty() {
        reads.push(format!(
            "policy {}",
            r.policy.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !r.flags.is_empty() {
        reads.push(format!(
            "flag {}",
            r.flags
                .iter()
                .map(|(f, d)| format!("{f} (default {d})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let head = match (subject, facets.is_empty()) {
        (Some(s), false) => {
            let list = match facets.len() {
                1 => facets[0].to_string(),
                _ => format!(
                    "{} and {}",
                    facets[..facets.len() - 1].join(", "),
                    facets[facets.len() - 1]
                ),
            };
            if want {
                format!("{s} are {list}")
            } else {
                format!("{s} are not {list}")
            }
        }
        _ => format!("{name}() is {}", if want { "true" } else { "false" }),
    };
    if reads.is_empty() {
        head
    } else {
        format!("{head} — {name}() reads {}", reads.join("; "))
    }
}

fn bool_literal(e: &Expr) -> Option<bool> {
    match e {
        Expr::Lit(Lit::Bool(b)) => Some(b.value),
        Expr::Unary(u) if u.op == UnaryOp::Bang => match &*u.arg {
            Expr::Lit(Lit::Num(n)) => Some(n.value == 0.0),
            _ => None,
        },
        _ => None,
    }
}

/// `x !== "a" && x !== "b"` → (x, [a, b]).
fn excluded_values(e: &Expr) -> Option<(String, Vec<String>)> {
    match e {
        Expr::Bin(b) if b.op == BinaryOp::LogicalAnd => {
            let (l, mut lv) = depth::guard(|| excluded_values(&b.left))?;
            let (r, rv) = depth::guard(|| excluded_values(&b.right))?;
            (l == r).then(|| {
                lv.extend(rv);
                (l, lv)
            })
        }
        Expr::Bin(b) if matches!(b.op, BinaryOp::NotEqEq | BinaryOp::NotEq) => {
            match (&*b.left, &*b.right) {
                (Expr::Ident(i), Expr::Lit(Lit::Str(s)))
                | (Expr::Lit(Lit::Str(s)), Expr::Ident(i)) => Some((
                    i.sym.to_string(),
                    vec![s.value.to_string_lossy().into_owned()],
                )),
                _ => None,
            }
        }
        Expr::Paren(p) => depth::guard(|| excluded_values(&p.expr)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_text_names_the_common_subject() {
        let r = Reads {
            env: ["DEMO_ENABLE_WIDGETS".to_string()].into(),
            settings: ["widgetsMode".to_string()].into(),
            ..Default::default()
        };
        assert_eq!(
            helper_text("w", &r, false),
            "widgets are not enabled — w() reads env DEMO_ENABLE_WIDGETS; settings widgetsMode"
        );
        // Nothing to say what it is about: the call itself.
        assert_eq!(helper_text("w", &Reads::default(), true), "w() is true");
    }
}
