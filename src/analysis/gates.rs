//! Gates: functions that return a boolean decided by checks on their
//! arguments, the session, settings and environment, and feature flags.
//! Each is read statement by statement — `if (X) return false;` means "X
//! must not hold" — into an ordered list of conditions in plain words, and
//! judged against a user's cached flag values.

use crate::analysis::eval::{Evaluator, Value, parse_snippet};
use crate::analysis::flags::{AccessorKind, Classifier, is_flag_name};
use crate::analysis::workflows::EFFORT_LEVELS;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::depth;
use crate::js::index::FnId;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use swc_common::Spanned;
use swc_ecma_ast::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConditionKind {
    Argument,
    ContextOption,
    SettingsEnvironment,
    ToolAvailability,
    FeatureFlag,
    Other,
}

impl ConditionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionKind::Argument => "argument",
            ConditionKind::ContextOption => "context option",
            ConditionKind::SettingsEnvironment => "settings/environment",
            ConditionKind::ToolAvailability => "tool availability",
            ConditionKind::FeatureFlag => "feature flag",
            ConditionKind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Condition {
    pub index: usize,
    pub kind: ConditionKind,
    pub text: String,
    /// For flag conditions: the flag, its default, and the value it must have.
    pub flag: Option<String>,
    pub default: Option<serde_json::Value>,
    pub expect: Option<bool>,
    /// Flags read inside a helper (settings/environment conditions).
    pub helper_flags: Vec<(String, serde_json::Value)>,
    pub module: String,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    Passes,
    BlockedBy { condition: usize, text: String },
    DependsOnRuntimeContext { conditions: Vec<String> },
}

impl Verdict {
    pub fn describe(&self) -> String {
        match self {
            Verdict::Passes => "passes".into(),
            Verdict::BlockedBy { text, .. } => format!("blocked by {text}"),
            Verdict::DependsOnRuntimeContext { conditions } => {
                format!("depends on runtime context: {}", conditions.join("; "))
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gate {
    pub function: Option<String>,
    pub original: Option<String>,
    pub role: GateRole,
    pub module: String,
    pub raw_line: u32,
    pub pretty_line: u32,
    pub conditions: Vec<Condition>,
    pub verdict: Option<Verdict>,
    #[serde(skip)]
    pub module_index: usize,
    #[serde(skip)]
    pub fn_id: FnId,
}

/// What a gate decides. Serialised as the words users read
/// (`review-routing-gate`, `workflow option code-review.model`, `flag-gate`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum GateRole {
    /// The function that decides whether a review is routed to the hidden workflow.
    ReviewRouting,
    /// The function behind a computed option of a bundled workflow.
    WorkflowOption { workflow: String, option: String },
    /// A small function whose answer is decided by feature flags.
    FlagGate,
}

impl GateRole {
    /// The workflow gates users look for first (not the many flag gates).
    pub fn is_workflow_gate(&self) -> bool {
        !matches!(self, GateRole::FlagGate)
    }
}

impl std::fmt::Display for GateRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateRole::ReviewRouting => {
                f.write_str(crate::analysis::roles::Role::ReviewRoutingGate.as_str())
            }
            GateRole::WorkflowOption { workflow, option } => {
                write!(f, "workflow option {workflow}.{option}")
            }
            GateRole::FlagGate => f.write_str("flag-gate"),
        }
    }
}

impl From<GateRole> for String {
    fn from(r: GateRole) -> String {
        r.to_string()
    }
}

impl TryFrom<String> for GateRole {
    type Error = String;
    fn try_from(s: String) -> Result<GateRole, String> {
        if s == "flag-gate" {
            return Ok(GateRole::FlagGate);
        }
        if s == crate::analysis::roles::Role::ReviewRoutingGate.as_str() {
            return Ok(GateRole::ReviewRouting);
        }
        s.strip_prefix("workflow option ")
            .and_then(|rest| rest.split_once('.'))
            .map(|(w, o)| GateRole::WorkflowOption {
                workflow: w.to_string(),
                option: o.to_string(),
            })
            .ok_or_else(|| format!("unknown gate role {s:?}"))
    }
}

/// Cached flag values from a Claude Code config.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CachedFlags {
    pub path: Option<String>,
    pub values: std::collections::BTreeMap<String, serde_json::Value>,
    /// Why the config could not be used, if it could not.
    pub problem: Option<String>,
}

impl CachedFlags {
    /// The cached flag values of a config (its top-level JSON object, read
    /// by the source layer), under each of the flag store's keys in turn
    /// (see [`STORE_KEYS`](crate::analysis::flags::STORE_KEYS); the first
    /// key that has a flag wins). A config without any is usable, with a
    /// `problem` note: the defaults then decide.
    pub fn from_config(
        path: &str,
        config: &serde_json::Map<String, serde_json::Value>,
    ) -> CachedFlags {
        let mut c = CachedFlags {
            path: Some(path.to_string()),
            ..Default::default()
        };
        for key in crate::analysis::flags::STORE_KEYS {
            if let Some(obj) = config.get(key).and_then(|o| o.as_object()) {
                for (k, val) in obj {
                    c.values.entry(k.clone()).or_insert_with(|| val.clone());
                }
            }
        }
        if c.values.is_empty() {
            c.problem = Some(format!("{path} holds no cached flag values"));
        }
        c
    }
}

fn truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Judge a gate's conditions against cached flag values (defaults when absent).
pub fn verdict(conditions: &[Condition], cache: &CachedFlags) -> Verdict {
    let mut runtime = Vec::new();
    for c in conditions {
        match (&c.flag, c.expect) {
            (Some(flag), Some(expect)) => {
                let value = cache
                    .values
                    .get(flag)
                    .cloned()
                    .or_else(|| c.default.clone())
                    .unwrap_or(serde_json::Value::Null);
                if truthy(&value) != expect {
                    return Verdict::BlockedBy {
                        condition: c.index,
                        text: format!("{flag} = {value}"),
                    };
                }
            }
            _ => runtime.push(c.text.clone()),
        }
    }
    if runtime.is_empty() {
        Verdict::Passes
    } else {
        Verdict::DependsOnRuntimeContext {
            conditions: runtime,
        }
    }
}

/// The longest function read as a gate. Gates are a handful of checks;
/// anything much longer is not a list of checks, and re-parsing every such
/// candidate would cost.
const MAX_GATE_BYTES: usize = 3000;

/// The longest helper whose reads (env, settings, policy, flags) are named
/// in a condition: a helper is a few lines; past this it is a function
/// that does other work, whose reads would not describe the condition.
const MAX_HELPER_BYTES: usize = 4000;

/// How many calls deep a helper's reads are followed (`enabled()` →
/// `policy()` → `settings()`): enough for real builds' chains, and it
/// bounds the work on a call graph with cycles.
const HELPER_DEPTH: usize = 3;

/// The largest function considered as a flag-decided gate (`--all`): these
/// are small wrappers around a flag read; a larger function that happens to
/// read a flag is doing more than gating.
const MAX_FLAG_GATE_BYTES: u32 = 600;

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
        let line = module.raw_pos(lo).0;
        let mk = |kind, text: String| Condition {
            index: 0,
            kind,
            text,
            flag: None,
            default: None,
            expect: None,
            helper_flags: Vec::new(),
            module: module.name.clone(),
            line,
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
        // e !== "a" && e !== "b" … : the argument is one of the values.
        if let Some((arg, values)) = excluded_values(e) {
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
            let text = if want {
                format!("{subject} is not {list}")
            } else {
                format!("{subject} is {list}")
            };
            return Some(mk(ConditionKind::Argument, text));
        }
        // ctx.options?.tools?.some(t => isTool(t, NAME)): the session has a tool.
        let call_parts: Option<(&Expr, &[ExprOrSpread])> = match e {
            Expr::Call(c) => match &c.callee {
                Callee::Expr(callee) => Some((&**callee, &c.args[..])),
                _ => None,
            },
            Expr::OptChain(o) => match &*o.base {
                OptChainBase::Call(c) => Some((&*c.callee, &c.args[..])),
                _ => None,
            },
            _ => None,
        };
        if let Some((callee, args)) = call_parts
            && let Some((_, path)) = member_path(callee)
            && path.last().map(String::as_str) == Some("some")
            && path.iter().any(|p| p == "tools")
        {
            let tool = args
                .first()
                .and_then(|a| self.tool_name(m, &a.expr, base))
                .unwrap_or_else(|| "a".into());
            let text = if want {
                format!("the session has the {tool} tool")
            } else {
                format!("the session lacks the {tool} tool")
            };
            return Some(mk(ConditionKind::ToolAvailability, text));
        }
        if let Some((root, path)) = member_path(e)
            && params.contains(&root)
            && path.len() >= 2
        {
            let option = path.last().unwrap().clone();
            let phrase = match (option.as_str(), want) {
                ("isNonInteractiveSession", false) => {
                    "the session is interactive (not `claude -p`)".to_string()
                }
                ("isSkillPreload", false) => "the skill is not being preloaded".to_string(),
                (o, false) => format!("not a {} ({})", words(o), path.join(".")),
                (o, true) => format!("{} ({})", words(o), path.join(".")),
            };
            return Some(mk(
                ConditionKind::ContextOption,
                format!("{phrase} [{}]", path.join(".")),
            ));
        }
        if let Expr::Call(c) = e
            && let Callee::Expr(callee) = &c.callee
            && let Expr::Ident(fname) = &**callee
        {
            let name = fname.sym.to_string();
            if self.cls.kind(m, &name) == AccessorKind::Getter {
                let flag = c.args.first().and_then(|a| {
                    match self.ev.eval(m, &a.expr, base, &Vec::new()) {
                        Ok(Value::Str(s)) if is_flag_name(&s) => Some(s),
                        _ => None,
                    }
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
                let mut cond = mk(
                    ConditionKind::FeatureFlag,
                    format!(
                        "the flag {flag} is {} (default {shown})",
                        if want { "true" } else { "false" }
                    ),
                );
                cond.flag = Some(flag);
                cond.default = default;
                cond.expect = Some(want);
                return Some(cond);
            }
            // A helper: name what it reads.
            if let Some((hm, hid)) = self.cls.resolve(m, &name) {
                let reads = self.helper_reads(hm, hid, 0);
                let mut cond = mk(
                    ConditionKind::SettingsEnvironment,
                    helper_text(&name, &reads, want),
                );
                cond.helper_flags = reads.flags.clone();
                return Some(cond);
            }
        }
        let text = &module.source()[lo as usize..(base + e.span().hi.0.saturating_sub(1)) as usize];
        Some(mk(
            ConditionKind::Other,
            format!(
                "`{}` is {}",
                text.chars().take(MAX_QUOTED_CHARS).collect::<String>(),
                if want { "true" } else { "false" }
            ),
        ))
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
            .calls
            .iter()
            .filter(|c| c.lo >= f.lo && c.lo < f.hi && !c.member)
            .cloned()
            .collect();
        for c in calls {
            if let Some(p) = c.arg0.as_ref().and_then(|a| a.string.as_deref()) {
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

/// Every gate worth explaining: the review-routing gate, the functions
/// behind computed workflow options, and every small function that returns
/// a boolean decided by a flag read.
pub fn discover(
    ci: &CodeIndex,
    roles: &crate::analysis::roles::Roles,
    workflows: &[crate::analysis::workflows::WorkflowScript],
    originals: &std::collections::HashMap<(&str, &str), &str>,
) -> Vec<Gate> {
    let mut reader = GateReader::new(ci);
    let mut out: Vec<Gate> = Vec::new();
    let push =
        |reader: &mut GateReader, m: usize, id: FnId, role: GateRole, out: &mut Vec<Gate>| {
            if out.iter().any(|g| g.module_index == m && g.fn_id == id) {
                return;
            }
            let Some(conditions) = reader.read(m, id) else {
                return;
            };
            let module = &ci.modules[m];
            let f = &module.index.functions[id as usize];
            out.push(Gate {
                original: f.name.as_deref().and_then(|n| {
                    originals
                        .get(&(module.name.as_str(), n))
                        .map(|s| s.to_string())
                }),
                function: f.name.clone(),
                role,
                module: module.name.clone(),
                raw_line: module.raw_pos(f.lo).0,
                pretty_line: module.pretty_line(f.lo),
                conditions,
                verdict: None,
                module_index: m,
                fn_id: id,
            });
        };
    for f in roles.get(crate::analysis::roles::Role::ReviewRoutingGate) {
        push(
            &mut reader,
            f.module_index,
            f.function,
            GateRole::ReviewRouting,
            &mut out,
        );
    }
    for w in workflows {
        let Some(m) = ci.modules.iter().position(|x| x.name == w.builder.module) else {
            continue;
        };
        for o in &w.options {
            if let crate::analysis::workflows::OptionValue::Computed { expression, .. } = &o.value
                && let Ok(e) = parse_snippet(expression)
                && let Some((mi, id)) = crate::analysis::workflows::referenced_function(ci, m, &e)
            {
                push(
                    &mut reader,
                    mi,
                    id,
                    GateRole::WorkflowOption {
                        workflow: w.name.clone(),
                        option: o.name.clone(),
                    },
                    &mut out,
                );
            }
        }
    }
    // The flag-gate scan looks at each module on its own: both cores, each
    // worker with its own reader and classifier (their caches are per
    // thread), results in module order, so the output is as a serial scan's.
    let flag_gates: Vec<Vec<Gate>> = ci
        .modules
        .par_iter()
        .enumerate()
        .map_init(
            || (GateReader::new(ci), Classifier::new(ci)),
            |(reader, cls), (mi, m)| {
                let mut candidates: Vec<FnId> = Vec::new();
                for c in &m.index.calls {
                    if let (Some(f), Some(a)) = (c.in_function, &c.arg0)
                        && (a.string.as_deref().is_some_and(is_flag_name) || a.ident.is_some())
                        && !c.member
                        && !candidates.contains(&f)
                        && (m.index.functions[f as usize].hi - m.index.functions[f as usize].lo)
                            < MAX_FLAG_GATE_BYTES
                        && cls.kind(mi, &c.name) == AccessorKind::Getter
                        && !out.iter().any(|g| g.module_index == mi && g.fn_id == f)
                    {
                        candidates.push(f);
                    }
                }
                let mut found = Vec::new();
                for f in candidates {
                    push(reader, mi, f, GateRole::FlagGate, &mut found);
                    // Keep only gates that actually test a flag.
                    if found
                        .last()
                        .is_some_and(|g| !g.conditions.iter().any(|c| c.flag.is_some()))
                    {
                        found.pop();
                    }
                }
                found
            },
        )
        .collect();
    out.extend(flag_gates.into_iter().flatten());
    out
}

/// Gate conditions of each kind and their verdicts, on small gates written
/// here (shaped like the ones the analysis looks for, not copied).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;
    use serde_json::json;

    /// A flag getter, a policy check, a helper that reads the environment,
    /// settings, policy and a flag, and gates of every kind.
    const GATES: &str = r#"var settings = () => globalThis.__s ?? {};
var readFlag = (name, dflt) => settings().cachedFeatureFlags?.[name] ?? dflt;
var allowed = (k) => settings().policy?.[k] ?? !0;
function send(e, t) { globalThis.out.push({ eventName: e, metadata: t }); }
function toolsOn() {
  if (process.env.DEMO_DISABLE_TOOLS) return !1;
  if (!allowed("allow_tools")) return !1;
  return settings().settings?.enableTools ?? readFlag("tengu_demo_tools", !0);
}
var hasTool = (t, n) => t.name === n, TOOL = "Search", FLAGNAME = "tengu_demo_const";
function routeDemo(level, ctx) {
  if (level !== "high" && level !== "xhigh" && level !== "max") return !1;
  if (ctx.options?.isSkillPreload) return !1;
  if (!toolsOn()) return !1;
  if (ctx.options?.isNonInteractiveSession) return !1;
  if (!ctx.options?.tools?.some((t) => hasTool(t, TOOL))) return !1;
  return readFlag("tengu_demo_route", !1);
}
function onlyFlags() {
  if (readFlag(FLAGNAME, !1)) return !1;
  return readFlag("tengu_demo_b", !0);
}
function shortcut(a, t) {
  if (a === "x") { return !0; }
  if (t !== "one" && t !== "two") return !1;
  return readFlag("tengu_demo_c");
}
function options(t) {
  let unused = 1;
  if (!t.options.isFastMode) return !1;
  if (t.options.quietRun) return !1;
  return !0;
}
var arrowGate = () => readFlag("tengu_demo_arrow", 0);
function notAGate(x) { for (;;) { if (x) return !1; } }
function notBoolean(x) { if (x) return 5; return readFlag("tengu_demo_d", !1); }
function alwaysTrue() { return !0; }
function logs() { send("tengu_demo_event", {}); return !0; }
function noFlag(t) { if (t.options.isFastMode) return !1; return !0; }
"#;

    fn read(src: &str, name: &str) -> Option<Vec<Condition>> {
        let ci = testjs::script(src);
        let id = testjs::function(&ci, 0, name);
        GateReader::new(&ci).read(0, id)
    }

    fn texts(c: &[Condition]) -> Vec<&str> {
        c.iter().map(|c| c.text.as_str()).collect()
    }

    fn cached(values: serde_json::Value) -> CachedFlags {
        let config = json!({ "cachedFeatureFlags": values });
        CachedFlags::from_config("c.json", config.as_object().unwrap())
    }

    #[test]
    fn every_condition_kind_in_order() {
        let c = read(GATES, "routeDemo").unwrap();
        let kinds: Vec<ConditionKind> = c.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                ConditionKind::Argument,
                ConditionKind::ContextOption,
                ConditionKind::SettingsEnvironment,
                ConditionKind::ContextOption,
                ConditionKind::ToolAvailability,
                ConditionKind::FeatureFlag,
            ]
        );
        assert_eq!(
            texts(&c),
            [
                "the level (argument 1) is high, xhigh or max",
                "the skill is not being preloaded [options.isSkillPreload]",
                "tools are enabled, available and permitted by policy — toolsOn() reads \
                 env DEMO_DISABLE_TOOLS; settings enableTools; policy allow_tools; \
                 flag tengu_demo_tools (default true)",
                "the session is interactive (not `claude -p`) [options.isNonInteractiveSession]",
                "the session has the Search tool",
                "the flag tengu_demo_route is true (default false)",
            ]
        );
        let indexes: Vec<usize> = c.iter().map(|c| c.index).collect();
        assert_eq!(indexes, [1, 2, 3, 4, 5, 6]);
        assert_eq!(
            c[2].helper_flags,
            [("tengu_demo_tools".into(), json!(true))]
        );
        let flag = &c[5];
        assert_eq!(flag.flag.as_deref(), Some("tengu_demo_route"));
        assert_eq!(flag.default, Some(json!(false)));
        assert_eq!(flag.expect, Some(true));
        assert_eq!(flag.line, 17);
        assert_eq!(flag.module, testjs::SCRIPT);
    }

    #[test]
    fn flag_conditions_follow_constants_and_negation() {
        let c = read(GATES, "onlyFlags").unwrap();
        assert_eq!(
            texts(&c),
            [
                "the flag tengu_demo_const is false (default false)",
                "the flag tengu_demo_b is true (default true)",
            ]
        );
        assert_eq!(c[0].expect, Some(false));
        assert_eq!(c[1].expect, Some(true));
        // An arrow with an expression body is one returned condition.
        let c = read(GATES, "arrowGate").unwrap();
        assert_eq!(c[0].flag.as_deref(), Some("tengu_demo_arrow"));
        // The evaluator's numbers are doubles, kept as such in JSON (0.0).
        assert_eq!(c[0].default, Some(json!(0.0)));
    }

    #[test]
    fn a_return_true_check_suffices_and_a_missing_default_is_none() {
        let c = read(GATES, "shortcut").unwrap();
        assert_eq!(c[0].kind, ConditionKind::Other);
        assert_eq!(
            c[0].text,
            "either `a === \"x\"` is true (then it passes at once)"
        );
        // Values that are not levels are listed as they are.
        assert_eq!(c[1].kind, ConditionKind::Argument);
        assert_eq!(c[1].text, "argument 2 is one or two");
        assert_eq!(c[2].text, "the flag tengu_demo_c is true (default none)");
        assert_eq!(c[2].default, None);
    }

    #[test]
    fn context_options_in_words() {
        let c = read(GATES, "options").unwrap();
        assert_eq!(
            texts(&c),
            [
                "fast mode (options.isFastMode) [options.isFastMode]",
                "not a quiet run (options.quietRun) [options.quietRun]",
            ]
        );
        assert!(c.iter().all(|c| c.kind == ConditionKind::ContextOption));
    }

    #[test]
    fn functions_that_are_not_lists_of_checks_are_not_gates() {
        // A loop; a non-boolean return; nothing but `return true`.
        for name in ["notAGate", "notBoolean", "alwaysTrue"] {
            assert!(read(GATES, name).is_none(), "{name}");
        }
    }

    #[test]
    fn a_gate_longer_than_the_limit_is_not_read() {
        let gate = |pad: usize| {
            format!(
                "var readFlag = (n, d) => g().cachedFeatureFlags?.[n] ?? d;\n\
                 function big() {{ /*{}*/ return readFlag(\"tengu_demo_big\", !1); }}",
                "x".repeat(pad)
            )
        };
        // `function big() { /*` … `*/ return readFlag("tengu_demo_big", !1); }`
        let frame = "function big() { /**/ return readFlag(\"tengu_demo_big\", !1); }".len();
        assert!(read(&gate(MAX_GATE_BYTES - frame), "big").is_some());
        assert!(read(&gate(MAX_GATE_BYTES - frame + 1), "big").is_none());
    }

    #[test]
    fn verdicts_under_cached_values_and_defaults() {
        let c = read(GATES, "routeDemo").unwrap();
        // Defaults: the routing flag defaults to false.
        let v = verdict(&c, &CachedFlags::default());
        assert!(
            matches!(&v, Verdict::BlockedBy { condition: 6, text } if text == "tengu_demo_route = false"),
            "{v:?}"
        );
        assert_eq!(v.describe(), "blocked by tengu_demo_route = false");
        // Cached true: only the runtime conditions remain, in order.
        let v = verdict(&c, &cached(json!({ "tengu_demo_route": true })));
        let Verdict::DependsOnRuntimeContext { conditions } = &v else {
            panic!("{v:?}")
        };
        assert_eq!(conditions.len(), 5);
        assert_eq!(conditions[0], c[0].text);
        assert!(
            v.describe()
                .starts_with("depends on runtime context: the level")
        );

        let f = read(GATES, "onlyFlags").unwrap();
        // Only flags, all as wanted: passes.
        assert!(matches!(
            verdict(&f, &CachedFlags::default()),
            Verdict::Passes
        ));
        // The first failing flag blocks, with its cached value.
        let v = verdict(
            &f,
            &cached(json!({ "tengu_demo_const": "on", "tengu_demo_b": 0 })),
        );
        assert!(
            matches!(&v, Verdict::BlockedBy { condition: 1, text } if text == "tengu_demo_const = \"on\""),
            "{v:?}"
        );
        let v = verdict(&f, &cached(json!({ "tengu_demo_b": 0 })));
        assert!(
            matches!(&v, Verdict::BlockedBy { condition: 2, text } if text == "tengu_demo_b = 0"),
            "{v:?}"
        );
        // No default and not cached: null, which blocks a flag that must be true.
        let s = read(GATES, "shortcut").unwrap();
        let v = verdict(&s, &CachedFlags::default());
        assert!(
            matches!(&v, Verdict::BlockedBy { condition: 3, text } if text == "tengu_demo_c = null"),
            "{v:?}"
        );
    }

    #[test]
    fn javascript_truthiness_of_cached_values() {
        for v in [json!(null), json!(false), json!(0), json!(""), json!(0.0)] {
            assert!(!truthy(&v), "{v}");
        }
        for v in [json!(true), json!(1), json!("x"), json!([]), json!({})] {
            assert!(truthy(&v), "{v}");
        }
    }

    #[test]
    fn cached_flags_from_a_config_the_newest_store_key_first() {
        let config = json!({
            "cachedGrowthBookFeatures": { "tengu_a": false, "tengu_b": 1 },
            "cachedFeatureFlags": { "tengu_a": true },
            "cachedStatsigGates": "not an object",
            "other": { "tengu_c": true },
        });
        let c = CachedFlags::from_config("here.json", config.as_object().unwrap());
        assert_eq!(c.path.as_deref(), Some("here.json"));
        assert_eq!(c.values.get("tengu_a"), Some(&json!(true)));
        assert_eq!(c.values.get("tengu_b"), Some(&json!(1)));
        assert!(!c.values.contains_key("tengu_c"));
        assert_eq!(c.problem, None);
        let empty = CachedFlags::from_config("e.json", json!({}).as_object().unwrap());
        assert_eq!(
            empty.problem.as_deref(),
            Some("e.json holds no cached flag values")
        );
    }

    #[test]
    fn flag_gates_are_small_functions_that_test_a_flag() {
        let ci = testjs::script(GATES);
        let gates = discover(&ci, &Default::default(), &[], &Default::default());
        let names: Vec<&str> = gates
            .iter()
            .map(|g| g.function.as_deref().unwrap_or(""))
            .collect();
        // toolsOn reads a flag but tests none of its own conditions on one;
        // logs passes a flag name to a logger, not a getter; notBoolean is
        // not a list of checks; noFlag reads no flag.
        assert_eq!(
            names,
            ["routeDemo", "onlyFlags", "shortcut", "arrowGate"],
            "{gates:#?}"
        );
        assert!(gates.iter().all(|g| g.role == GateRole::FlagGate));
        assert!(gates.iter().all(|g| g.verdict.is_none()));
        assert_eq!(gates[1].raw_line, 19);
    }

    #[test]
    fn a_flag_gate_is_small() {
        let src = |pad: usize| {
            format!(
                "var readFlag = (n, d) => g().cachedFeatureFlags?.[n] ?? d;\n\
                 function big() {{ /*{}*/ return readFlag(\"tengu_demo_big\", !1); }}",
                "x".repeat(pad)
            )
        };
        let frame = "function big() { /**/ return readFlag(\"tengu_demo_big\", !1); }".len();
        let found = |pad| {
            let ci = testjs::script(&src(pad));
            discover(&ci, &Default::default(), &[], &Default::default()).len()
        };
        assert_eq!(found(MAX_FLAG_GATE_BYTES as usize - frame - 1), 1);
        assert_eq!(found(MAX_FLAG_GATE_BYTES as usize - frame), 0);
    }

    #[test]
    fn gate_roles_read_back_from_their_words() {
        for role in [
            GateRole::ReviewRouting,
            GateRole::FlagGate,
            GateRole::WorkflowOption {
                workflow: "code-review".into(),
                option: "model".into(),
            },
        ] {
            let s = String::from(role.clone());
            assert_eq!(GateRole::try_from(s).unwrap(), role);
        }
        assert_eq!(GateRole::ReviewRouting.to_string(), "review-routing-gate");
        assert!(GateRole::try_from("gate".to_string()).is_err());
        assert!(GateRole::ReviewRouting.is_workflow_gate());
        assert!(!GateRole::FlagGate.is_workflow_gate());
    }

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
