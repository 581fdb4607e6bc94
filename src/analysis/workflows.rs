//! The bundled workflows: each builder's registrar call evaluated into the
//! exact script string the runtime builds, its meta and options, a syntax
//! check, and (for review workflows) the table of levels the script defines.

use crate::analysis::eval::{Dependency, EvalError, Evaluator, Value, parse_snippet};
use crate::analysis::roles::{Locator, Role, Roles};
use crate::bun::digest::sha256_hex;
use crate::js::code::CodeIndex;
use crate::js::index::FnId;
use crate::js::parse::{self, Goal};
use serde::{Deserialize, Serialize};
use swc_ecma_ast::*;
use swc_ecma_visit::{Visit, VisitWith};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    pub title: String,
    pub detail: Option<String>,
}

/// A feature flag an option reads, with the default its getter is given.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FlagRead {
    pub flag: String,
    pub default: serde_json::Value,
    pub module: String,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum OptionValue {
    Static {
        value: serde_json::Value,
    },
    Computed {
        expression: String,
        flags: Vec<FlagRead>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkflowOption {
    pub name: String,
    #[serde(flatten)]
    pub value: OptionValue,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SyntaxIssue {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScriptFacts {
    /// Lines when split on "\n" (a final newline adds an empty last line).
    pub lines: usize,
    pub newlines: usize,
    /// UTF-8 bytes.
    pub bytes: usize,
    pub sha256: String,
    pub syntax_ok: bool,
    pub syntax_error: Option<SyntaxIssue>,
}

/// One level of a review workflow, derived from its script.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Level {
    pub level: String,
    pub correctness_finders: u32,
    pub cleanup_finders: u32,
    pub per_angle: u32,
    pub initial_candidate_limit: u32,
    /// Size of the additional sweep, None when the level has none.
    pub sweep: Option<u32>,
    pub report_limit: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuilderRef {
    pub name: Option<String>,
    pub module: String,
    pub raw_start: u32,
    pub raw_end: u32,
    pub pretty_start: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkflowScript {
    pub name: String,
    pub hidden: bool,
    pub description: Option<String>,
    pub when_to_use: Option<String>,
    pub phases: Vec<Phase>,
    pub options: Vec<WorkflowOption>,
    pub script: Option<ScriptFacts>,
    /// Why the script could not be reconstructed (expression and location).
    pub script_error: Option<EvalError>,
    pub levels: Option<Vec<Level>>,
    pub levels_note: Option<String>,
    pub builder: BuilderRef,
    /// Every binding the script and meta were built from.
    pub dependencies: Vec<Dependency>,
    #[serde(skip)]
    pub text: Option<String>,
}

fn string_of(v: Option<&Value>) -> Option<String> {
    v.and_then(|v| v.as_str().map(str::to_string))
}

/// Every bundled workflow the builders register.
pub fn bundled(ci: &CodeIndex, roles: &Roles, locator: &Locator) -> Vec<WorkflowScript> {
    let Some(reg) = roles.first(Role::WorkflowRegistrar) else {
        return Vec::new();
    };
    let reg_name = reg.name.clone().unwrap_or_default();
    let mut out = Vec::new();
    for call in locator.registrar_calls(reg.module_index, &reg_name) {
        let m = &ci.modules[call.module];
        let mut ev = Evaluator::new(ci);
        let text = &m.source()[call.lo as usize..call.hi as usize];
        let Ok(expr) = parse_snippet(text) else {
            continue;
        };
        let Expr::Call(c) = &*expr else { continue };
        let arg = |i: usize| c.args.get(i).map(|a| &*a.expr);
        let env = Vec::new();
        let script = arg(0).map(|e| ev.eval(call.module, e, call.lo, &env));
        let meta = arg(1)
            .map(|e| ev.eval(call.module, e, call.lo, &env))
            .and_then(Result::ok);
        let options = arg(2)
            .map(|e| options_of(ci, &mut ev, call.module, call.lo, e))
            .unwrap_or_default();
        let name = string_of(meta.as_ref().and_then(|v| v.get("name")))
            .unwrap_or_else(|| "(unnamed)".into());
        let phases = match meta.as_ref().and_then(|v| v.get("phases")) {
            Some(Value::Array(a)) => a
                .iter()
                .map(|p| Phase {
                    title: string_of(p.get("title")).unwrap_or_default(),
                    detail: string_of(p.get("detail")),
                })
                .collect(),
            _ => Vec::new(),
        };
        let hidden = options
            .iter()
            .any(|o| o.name == "hidden" && matches!(&o.value, OptionValue::Static { value } if value == &serde_json::Value::Bool(true)));
        let (facts, script_error, text, levels, levels_note) = match script {
            Some(Ok(Value::Str(s))) => {
                let facts = script_facts(&s);
                let (levels, note) = match derive_levels(&s) {
                    Ok(l) => (l, None),
                    Err(e) => (None, Some(e.to_string())),
                };
                (Some(facts), None, Some(s), levels, note)
            }
            Some(Ok(other)) => (
                None,
                Some(EvalError {
                    module: m.name.clone(),
                    line: m.raw_pos(call.lo).0,
                    expr: "first argument".into(),
                    reason: format!("evaluates to {other:?}, not a string"),
                }),
                None,
                None,
                None,
            ),
            Some(Err(e)) => (None, Some(e), None, None, None),
            None => (None, None, None, None, None),
        };
        let f = &m.index.functions[call.builder as usize];
        let mut deps = ev.deps.clone();
        deps.sort();
        deps.dedup();
        out.push(WorkflowScript {
            name,
            hidden,
            description: string_of(meta.as_ref().and_then(|v| v.get("description"))),
            when_to_use: string_of(meta.as_ref().and_then(|v| v.get("whenToUse"))),
            phases,
            options,
            script: facts,
            script_error,
            levels,
            levels_note,
            builder: BuilderRef {
                name: f.name.as_deref().map(str::to_string),
                module: m.name.clone(),
                raw_start: m.raw_pos(f.lo).0,
                raw_end: m.raw_pos(f.hi.saturating_sub(1)).0,
                pretty_start: m.pretty_line(f.lo),
            },
            dependencies: deps,
            text,
        });
    }
    out
}

fn script_facts(s: &str) -> ScriptFacts {
    let newlines = s.bytes().filter(|&b| b == b'\n').count();
    let syntax = parse::with_big_stack(|| {
        parse::parse("workflow.js", s.to_string(), Goal::Module).map(|_| ())
    });
    let syntax_error = match syntax {
        Ok(()) => None,
        Err(crate::js::JsError::Syntax {
            line, col, message, ..
        }) => Some(SyntaxIssue { line, col, message }),
        Err(e) => Some(SyntaxIssue {
            line: 0,
            col: 0,
            message: e.to_string(),
        }),
    };
    ScriptFacts {
        lines: newlines + 1,
        newlines,
        bytes: s.len(),
        sha256: sha256_hex(s.as_bytes()),
        syntax_ok: syntax_error.is_none(),
        syntax_error,
    }
}

/// The registrar's options argument: static values, or computed ones with
/// the feature flags they read.
fn options_of(
    ci: &CodeIndex,
    ev: &mut Evaluator,
    m: usize,
    base: u32,
    e: &Expr,
) -> Vec<WorkflowOption> {
    let Expr::Object(o) = e else {
        return Vec::new();
    };
    let module = &ci.modules[m];
    let mut out = Vec::new();
    for p in &o.props {
        let PropOrSpread::Prop(p) = p else { continue };
        let Prop::KeyValue(kv) = &**p else { continue };
        let name = match &kv.key {
            PropName::Ident(i) => i.sym.to_string(),
            PropName::Str(s) => s.value.to_string_lossy().into_owned(),
            _ => continue,
        };
        let span = swc_common::Spanned::span(&*kv.value);
        let lo = base + span.lo.0.saturating_sub(1);
        let hi = base + span.hi.0.saturating_sub(1);
        let expression = module.source()[lo as usize..hi as usize].to_string();
        let value = match ev.eval(m, &kv.value, base, &Vec::new()) {
            Ok(Value::Func(_)) | Err(_) => OptionValue::Computed {
                flags: flags_read(ci, ev, m, &kv.value),
                expression,
            },
            Ok(v) => OptionValue::Static { value: v.to_json() },
        };
        out.push(WorkflowOption { name, value });
    }
    out
}

/// The function an option expression refers to or calls, resolved across chunks.
pub fn referenced_function(ci: &CodeIndex, m: usize, e: &Expr) -> Option<(usize, FnId)> {
    let name = match e {
        Expr::Ident(i) => i.sym.to_string(),
        Expr::Call(c) => match &c.callee {
            Callee::Expr(x) => match &**x {
                Expr::Ident(i) => i.sym.to_string(),
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    ci.resolve_function(m, &name)
}

/// Two-argument calls in a function whose first argument evaluates to a
/// `tengu_*` string: the flag reads (the second argument is the default).
pub fn flags_read(ci: &CodeIndex, ev: &mut Evaluator, m: usize, e: &Expr) -> Vec<FlagRead> {
    let Some((mi, id)) = referenced_function(ci, m, e) else {
        return Vec::new();
    };
    let module = &ci.modules[mi];
    let mut out = Vec::new();
    for c in module
        .index
        .calls
        .iter()
        .filter(|c| c.in_function == Some(id) && c.args == 2)
    {
        let text = &module.source()[c.lo as usize..c.hi as usize];
        let Ok(expr) = parse_snippet(text) else {
            continue;
        };
        let Expr::Call(call) = &*expr else { continue };
        let Ok(Value::Str(flag)) = ev.eval(mi, &call.args[0].expr, c.lo, &Vec::new()) else {
            continue;
        };
        if !crate::analysis::flags::is_flag_name(&flag) {
            continue;
        }
        let default = ev
            .eval(mi, &call.args[1].expr, c.lo, &Vec::new())
            .map(|v| v.to_json())
            .unwrap_or_else(|_| serde_json::Value::String("computed".into()));
        out.push(FlagRead {
            flag,
            default,
            module: module.name.clone(),
            line: module.raw_pos(c.lo).0,
        });
    }
    out
}

/// Collects what the level table derivation needs from a script's AST.
#[derive(Default)]
struct LevelFacts {
    /// level name → numeric/boolean properties.
    table: Vec<(String, Vec<(String, serde_json::Value)>)>,
    /// Top-level numeric constants.
    constants: Vec<(String, f64)>,
    /// Object literals with `kind: "cleanup"`: their `cap` multiplier.
    cleanup: Vec<Option<f64>>,
}

/// The review effort levels, lowest first, as the bundled scripts' level
/// tables and the routing gate name them.
pub const EFFORT_LEVELS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The levels at which a review is routed to the workflow: `high` and up.
pub const ROUTED_LEVELS: &[&str] = EFFORT_LEVELS.split_at(2).1;

fn literal(e: &Expr) -> Option<serde_json::Value> {
    match e {
        Expr::Lit(Lit::Num(n)) => Some(serde_json::json!(n.value)),
        Expr::Lit(Lit::Bool(b)) => Some(serde_json::Value::Bool(b.value)),
        Expr::Lit(Lit::Str(s)) => Some(serde_json::Value::String(
            s.value.to_string_lossy().into_owned(),
        )),
        _ => None,
    }
}

fn key_name(k: &PropName) -> Option<String> {
    match k {
        PropName::Ident(i) => Some(i.sym.to_string()),
        PropName::Str(s) => Some(s.value.to_string_lossy().into_owned()),
        _ => None,
    }
}

impl Visit for LevelFacts {
    fn visit_var_declarator(&mut self, d: &VarDeclarator) {
        if let (Pat::Ident(b), Some(init)) = (&d.name, &d.init)
            && let Expr::Lit(Lit::Num(n)) = &**init
        {
            self.constants.push((b.id.sym.to_string(), n.value));
        }
        d.visit_children_with(self);
    }

    fn visit_object_lit(&mut self, o: &ObjectLit) {
        let props: Vec<(String, &Expr)> = o
            .props
            .iter()
            .filter_map(|p| match p {
                PropOrSpread::Prop(p) => match &**p {
                    Prop::KeyValue(kv) => Some((key_name(&kv.key)?, &*kv.value)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let levels: Vec<&(String, &Expr)> = props
            .iter()
            .filter(|(k, _)| EFFORT_LEVELS.contains(&k.as_str()))
            .collect();
        if levels.len() >= 2 && self.table.is_empty() {
            for (k, v) in levels {
                if let Expr::Object(inner) = v {
                    let fields = inner
                        .props
                        .iter()
                        .filter_map(|p| match p {
                            PropOrSpread::Prop(p) => match &**p {
                                Prop::KeyValue(kv) => {
                                    Some((key_name(&kv.key)?, literal(&kv.value)?))
                                }
                                _ => None,
                            },
                            _ => None,
                        })
                        .collect();
                    self.table.push((k.clone(), fields));
                }
            }
        }
        if props.iter().any(|(k, v)| {
            k == "kind"
                && matches!(literal(v), Some(serde_json::Value::String(s)) if s == "cleanup")
        }) {
            let cap = props
                .iter()
                .find(|(k, _)| k == "cap")
                .and_then(|(_, v)| match v {
                    Expr::Bin(b) if b.op == BinaryOp::Mul => match (&*b.left, &*b.right) {
                        (Expr::Lit(Lit::Num(n)), _) | (_, Expr::Lit(Lit::Num(n))) => Some(n.value),
                        _ => None,
                    },
                    _ => None,
                });
            self.cleanup.push(cap);
        }
        o.visit_children_with(self);
    }
}

/// Why a script's review levels could not be derived.
#[derive(Debug, thiserror::Error)]
pub enum LevelsError {
    /// The script does not parse.
    #[error("{0}")]
    Parse(#[from] crate::js::JsError),
    /// A level lacks a count the table must give (`what` names it).
    #[error("level {level} has no {what}")]
    Missing { level: String, what: &'static str },
    #[error("a sweep without a size constant")]
    SweepWithoutSize,
}

/// The review levels a script defines, derived from its own text: the level
/// table, the cleanup finder(s) and their cap, and the sweep size constant.
pub fn derive_levels(script: &str) -> Result<Option<Vec<Level>>, LevelsError> {
    let facts = parse::with_big_stack(|| {
        let (p, _) = parse::parse("workflow.js", script.to_string(), Goal::Module)?;
        let mut f = LevelFacts::default();
        p.program.visit_with(&mut f);
        Ok::<_, LevelsError>(f)
    })?;
    if facts.table.is_empty() {
        return Ok(None);
    }
    let find = |fields: &[(String, serde_json::Value)], pred: &dyn Fn(&str) -> bool| {
        fields
            .iter()
            .find(|(k, _)| pred(&k.to_ascii_lowercase()))
            .map(|(_, v)| v.clone())
    };
    let num = |v: Option<serde_json::Value>| v.and_then(|v| v.as_f64()).map(|n| n as u32);
    let cleanup_finders = facts.cleanup.len() as u32;
    let cleanup_angles = facts
        .cleanup
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or(0.0) as u32;
    let sweep_size = facts
        .constants
        .iter()
        .find(|(k, _)| k.to_ascii_uppercase().contains("SWEEP"))
        .map(|(_, v)| *v as u32);
    let mut out = Vec::new();
    for (level, fields) in &facts.table {
        let missing = |what| LevelsError::Missing {
            level: level.clone(),
            what,
        };
        let correctness = num(find(fields, &|k| k.contains("correctness")))
            .ok_or_else(|| missing("correctness count"))?;
        let per_angle = num(find(fields, &|k| {
            k.contains("perangle") || k.contains("per_angle")
        }))
        .ok_or_else(|| missing("per-angle cap"))?;
        let report = num(find(fields, &|k| {
            k.contains("findings") || k.contains("report")
        }))
        .ok_or_else(|| missing("report limit"))?;
        let sweep = match find(fields, &|k| k.contains("sweep")) {
            Some(serde_json::Value::Bool(true)) => {
                Some(sweep_size.ok_or(LevelsError::SweepWithoutSize)?)
            }
            Some(serde_json::Value::Number(n)) => n.as_f64().map(|n| n as u32).filter(|&n| n > 0),
            _ => None,
        };
        out.push(Level {
            level: level.clone(),
            correctness_finders: correctness,
            cleanup_finders,
            per_angle,
            initial_candidate_limit: correctness * per_angle + cleanup_angles * per_angle,
            sweep,
            report_limit: report,
        });
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_from_a_script_of_our_own() {
        let script = r#"export const meta = { name: "r" }
const SWEEP_MAX = 4
const LEVELS = {
  high: { correctnessAngles: 2, perAngle: 3, maxFindings: 7, sweep: false },
  max: { correctnessAngles: 4, perAngle: 5, maxFindings: 9, sweep: true },
}
const F = [{ kind: "cleanup", cap: 3 * P.perAngle }]
"#;
        let l = derive_levels(script).unwrap().unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(
            (
                l[0].correctness_finders,
                l[0].initial_candidate_limit,
                l[0].sweep,
                l[0].report_limit
            ),
            (2, 15, None, 7)
        );
        assert_eq!(
            (
                l[1].cleanup_finders,
                l[1].initial_candidate_limit,
                l[1].sweep
            ),
            (1, 35, Some(4))
        );
        assert_eq!(derive_levels("export const meta = {}").unwrap(), None);
    }
}
