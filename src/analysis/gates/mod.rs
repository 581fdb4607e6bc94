//! Gates: functions that return a boolean decided by checks on their
//! arguments, the session, settings and environment, and feature flags.
//! Each is read statement by statement — `if (X) return false;` means "X
//! must not hold" — into an ordered list of conditions in plain words, and
//! judged against a user's cached flag values.

use crate::analysis::eval::parse_snippet;
use crate::analysis::flags::{AccessorKind, Classifier, is_flag_name};
use crate::js::code::CodeIndex;
use crate::js::index::FnId;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

mod judge;
mod reader;
/// Gate conditions of each kind and their verdicts, on small gates written
/// here (shaped like the ones the analysis looks for, not copied).
#[cfg(test)]
mod tests;

pub use judge::{CachedFlags, verdict};
pub use reader::GateReader;

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

/// Words that name no gate role.
#[derive(Debug, thiserror::Error)]
#[error("unknown gate role {0:?}")]
pub struct UnknownGateRole(pub String);

impl TryFrom<String> for GateRole {
    type Error = UnknownGateRole;
    fn try_from(s: String) -> Result<GateRole, UnknownGateRole> {
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
            .ok_or(UnknownGateRole(s))
    }
}

/// The largest function considered as a flag-decided gate (`--all`): these
/// are small wrappers around a flag read; a larger function that happens to
/// read a flag is doing more than gating.
const MAX_FLAG_GATE_BYTES: u32 = 600;

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
                function: f.name.as_deref().map(str::to_string),
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
                        && (a.string().is_some_and(is_flag_name) || a.ident().is_some())
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
