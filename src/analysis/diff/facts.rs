//! The facts the other analyses establish — workflows, flags, gates, roles —
//! compared by what names them for users (a workflow's name, a flag's name,
//! a gate's role or flags, a role), never by minified names.

use super::lines::{self, Compare, LineDiff, erase_names};
use crate::analysis::flags::FlagInventory;
use crate::analysis::gates::{Condition, Gate, GateRole};
use crate::analysis::roles::Roles;
use crate::analysis::workflows::{OptionValue, WorkflowScript};
use serde::Serialize;
use serde_json::{Value, json};
use similar::{Algorithm, DiffTag};
use std::collections::{BTreeMap, BTreeSet};

// ---------------------------------------------------------------- workflows

#[derive(Debug, Clone, Serialize)]
pub struct ScriptBrief {
    pub sha256: String,
    pub bytes: usize,
    pub lines: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkflowChange {
    pub name: String,
    pub script_a: Option<ScriptBrief>,
    pub script_b: Option<ScriptBrief>,
    /// Meta fields that differ (hidden, description, phases, options, …).
    pub meta_changed: Vec<String>,
    pub script_diff: LineDiff,
    pub meta_diff: LineDiff,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct WorkflowsDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    pub unchanged: Vec<String>,
    /// Was a removed or added workflow hidden?
    pub hidden: BTreeMap<String, bool>,
    pub details: Vec<WorkflowChange>,
}

impl WorkflowsDiff {
    /// No workflow added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// What users see of a workflow besides its script, with computed options
/// reduced to the flags they read (their expressions use minified names):
/// what the diff compares, and what the repository export files.
pub fn meta(w: &WorkflowScript) -> Value {
    let options: Vec<Value> = w
        .options
        .iter()
        .map(|o| match &o.value {
            OptionValue::Static { value } => json!({"name": o.name, "value": value}),
            OptionValue::Computed { flags, .. } => json!({
                "name": o.name,
                "computed_from_flags": flags.iter().map(|f| json!({"flag": f.flag, "default": f.default})).collect::<Vec<_>>(),
            }),
        })
        .collect();
    json!({
        "hidden": w.hidden,
        "description": w.description,
        "whenToUse": w.when_to_use,
        "phases": w.phases,
        "options": options,
        "levels": w.levels,
    })
}

fn brief(w: &WorkflowScript) -> Option<ScriptBrief> {
    w.script.as_ref().map(|s| ScriptBrief {
        sha256: s.sha256.clone(),
        bytes: s.bytes,
        lines: s.lines,
    })
}

pub fn workflows(
    a: &[WorkflowScript],
    b: &[WorkflowScript],
    budget: &lines::DiffBudget,
) -> WorkflowsDiff {
    let mut out = WorkflowsDiff::default();
    for w in a {
        match b.iter().find(|x| x.name == w.name) {
            None => {
                out.removed.push(w.name.clone());
                out.hidden.insert(w.name.clone(), w.hidden);
            }
            Some(x) => {
                let (ma, mb) = (meta(w), meta(x));
                let meta_changed: Vec<String> = ma
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, v)| mb.get(k.as_str()) != Some(v))
                    .map(|(k, _)| k.clone())
                    .collect();
                let (ta, tb) = (
                    w.text.as_deref().unwrap_or(""),
                    x.text.as_deref().unwrap_or(""),
                );
                if ta == tb && meta_changed.is_empty() {
                    out.unchanged.push(w.name.clone());
                    continue;
                }
                let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
                out.changed.push(w.name.clone());
                out.details.push(WorkflowChange {
                    name: w.name.clone(),
                    script_a: brief(w),
                    script_b: brief(x),
                    meta_changed,
                    script_diff: lines::diff(ta, tb, Compare::Exact, 1, 1, budget),
                    meta_diff: lines::diff(
                        &pretty(&ma),
                        &pretty(&mb),
                        Compare::Exact,
                        1,
                        1,
                        budget,
                    ),
                });
            }
        }
    }
    for x in b {
        if !a.iter().any(|w| w.name == x.name) {
            out.added.push(x.name.clone());
            out.hidden.insert(x.name.clone(), x.hidden);
        }
    }
    out
}

// -------------------------------------------------------------------- flags

#[derive(Debug, Clone, Serialize)]
pub struct FlagChange {
    pub name: String,
    pub a: Value,
    pub b: Value,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct FlagsDiff {
    pub count_a: usize,
    pub count_b: usize,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub added_by_kind: BTreeMap<String, usize>,
    pub removed_by_kind: BTreeMap<String, usize>,
    pub kind_changed: Vec<FlagChange>,
    pub default_changed: Vec<FlagChange>,
}

impl FlagsDiff {
    /// No flag added or removed, and none changed kind or default.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.kind_changed.is_empty()
            && self.default_changed.is_empty()
    }
}

/// A flag's defaults as compared (and as the repository export files
/// them): a computed default names a minified function, so its names are
/// erased; sorted, each once.
pub fn defaults(v: &[Value]) -> Value {
    let mut s: Vec<String> = v
        .iter()
        .map(
            |d| match d.as_str().and_then(|s| s.strip_prefix("computed: ")) {
                Some(e) => Value::String(format!("computed: {}", erase_names(e).0)).to_string(),
                None => d.to_string(),
            },
        )
        .collect();
    s.sort();
    s.dedup();
    Value::Array(
        s.iter()
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect(),
    )
}

pub fn flags(a: &FlagInventory, b: &FlagInventory) -> FlagsDiff {
    let mut out = FlagsDiff {
        count_a: a.flags.len(),
        count_b: b.flags.len(),
        ..Default::default()
    };
    for f in &a.flags {
        match b.get(&f.name) {
            None => {
                out.removed.push(f.name.clone());
                *out.removed_by_kind
                    .entry(f.kind.as_str().into())
                    .or_default() += 1;
            }
            Some(g) => {
                if f.kind != g.kind {
                    out.kind_changed.push(FlagChange {
                        name: f.name.clone(),
                        a: f.kind.as_str().into(),
                        b: g.kind.as_str().into(),
                    });
                }
                let (da, db) = (defaults(&f.defaults), defaults(&g.defaults));
                // Defaults only mean something where the flag is read.
                if da != db && !(da == json!([]) || db == json!([])) {
                    out.default_changed.push(FlagChange {
                        name: f.name.clone(),
                        a: da,
                        b: db,
                    });
                }
            }
        }
    }
    for g in &b.flags {
        if a.get(&g.name).is_none() {
            out.added.push(g.name.clone());
            *out.added_by_kind.entry(g.kind.as_str().into()).or_default() += 1;
        }
    }
    out.added.sort();
    out.removed.sort();
    out
}

// -------------------------------------------------------------------- gates

#[derive(Debug, Clone, Serialize)]
pub struct GateBrief {
    pub key: String,
    pub function: Option<String>,
    pub original: Option<String>,
    pub module: String,
    pub raw_line: u32,
    pub conditions: Vec<String>,
}

/// One row of a side-by-side condition table.
#[derive(Debug, Clone, Serialize)]
pub struct ConditionRow {
    /// "same", "changed", "added" or "removed".
    pub status: &'static str,
    pub a: Option<String>,
    pub b: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateChange {
    pub key: String,
    pub a: GateBrief,
    pub b: GateBrief,
    pub rows: Vec<ConditionRow>,
}

/// A flag the workflow gates and options read, and what each build does with it.
#[derive(Debug, Clone, Serialize)]
pub struct GateFlag {
    pub flag: String,
    pub a: String,
    pub b: String,
    pub read_a: bool,
    pub read_b: bool,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct GatesDiff {
    pub count_a: usize,
    pub count_b: usize,
    pub unchanged: usize,
    pub added: Vec<GateBrief>,
    pub removed: Vec<GateBrief>,
    pub changed: Vec<GateChange>,
    pub flags: Vec<GateFlag>,
}

impl GatesDiff {
    /// No gate added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

fn condition_text(c: &Condition) -> String {
    match (&c.flag, &c.expect) {
        (Some(f), Some(e)) => format!("{} [{f} must be {e}]", c.text),
        _ => c.text.clone(),
    }
}

/// A condition as compared: kind, flags and text with minified names erased.
pub(crate) fn condition_key(c: &Condition) -> String {
    format!(
        "{}|{:?}|{:?}|{:?}|{:?}|{}",
        c.kind.as_str(),
        c.flag,
        c.expect,
        c.default,
        c.helper_flags,
        // The texts quote code in backticks; erase inside them too.
        erase_names(&c.text.replace('`', " ")).0
    )
}

/// What names a gate across builds: its role, or for flag-decided
/// functions the flags it tests.
pub(crate) fn gate_keys(gates: &[Gate]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    gates
        .iter()
        .map(|g| {
            let base = if g.role == GateRole::FlagGate {
                let fl: BTreeSet<&str> = g
                    .conditions
                    .iter()
                    .filter_map(|c| c.flag.as_deref())
                    .collect();
                format!("flag-gate {}", fl.into_iter().collect::<Vec<_>>().join(" "))
            } else {
                g.role.to_string()
            };
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            if *n == 1 {
                base
            } else {
                format!("{base} #{n}")
            }
        })
        .collect()
}

fn gate_brief(key: &str, g: &Gate) -> GateBrief {
    GateBrief {
        key: key.to_string(),
        function: g.function.clone(),
        original: g.original.clone(),
        module: g.module.clone(),
        raw_line: g.raw_line,
        conditions: g.conditions.iter().map(condition_text).collect(),
    }
}

fn flag_status(inv: &FlagInventory, name: &str) -> (String, bool) {
    match inv.get(name) {
        None => ("absent".into(), false),
        Some(f) => {
            let read = f.kind == crate::analysis::flags::FlagKind::Feature;
            let d = defaults(&f.defaults);
            let d = match d.as_array().map(Vec::as_slice) {
                Some([one]) => format!(", default {one}"),
                Some([]) | None => String::new(),
                Some(_) => format!(", defaults {d}"),
            };
            if read {
                (format!("read (feature{d})"), true)
            } else {
                (format!("present, not read ({})", f.kind.as_str()), false)
            }
        }
    }
}

pub fn gates(
    a: &[Gate],
    b: &[Gate],
    fa: &FlagInventory,
    fb: &FlagInventory,
    wa: &[WorkflowScript],
    wb: &[WorkflowScript],
) -> GatesDiff {
    let (ka, kb) = (gate_keys(a), gate_keys(b));
    let mut out = GatesDiff {
        count_a: a.len(),
        count_b: b.len(),
        ..Default::default()
    };
    for (i, g) in a.iter().enumerate() {
        let Some(j) = kb.iter().position(|k| *k == ka[i]) else {
            out.removed.push(gate_brief(&ka[i], g));
            continue;
        };
        let h = &b[j];
        let ca: Vec<String> = g.conditions.iter().map(condition_key).collect();
        let cb: Vec<String> = h.conditions.iter().map(condition_key).collect();
        if ca == cb {
            out.unchanged += 1;
            continue;
        }
        let mut rows = Vec::new();
        for op in similar::capture_diff_slices(Algorithm::Myers, &ca, &cb) {
            let (ra, rb) = (op.old_range(), op.new_range());
            match op.tag() {
                DiffTag::Equal => rows.extend(ra.zip(rb).map(|(x, y)| ConditionRow {
                    status: "same",
                    a: Some(condition_text(&g.conditions[x])),
                    b: Some(condition_text(&h.conditions[y])),
                })),
                DiffTag::Delete => rows.extend(ra.map(|x| ConditionRow {
                    status: "removed",
                    a: Some(condition_text(&g.conditions[x])),
                    b: None,
                })),
                DiffTag::Insert => rows.extend(rb.map(|y| ConditionRow {
                    status: "added",
                    a: None,
                    b: Some(condition_text(&h.conditions[y])),
                })),
                DiffTag::Replace => {
                    let n = ra.len().max(rb.len());
                    for k in 0..n {
                        let x = ra.clone().nth(k);
                        let y = rb.clone().nth(k);
                        rows.push(ConditionRow {
                            status: match (x, y) {
                                (Some(_), Some(_)) => "changed",
                                (Some(_), None) => "removed",
                                _ => "added",
                            },
                            a: x.map(|x| condition_text(&g.conditions[x])),
                            b: y.map(|y| condition_text(&h.conditions[y])),
                        });
                    }
                }
            }
        }
        out.changed.push(GateChange {
            key: ka[i].clone(),
            a: gate_brief(&ka[i], g),
            b: gate_brief(&kb[j], h),
            rows,
        });
    }
    for (j, h) in b.iter().enumerate() {
        if !ka.contains(&kb[j]) {
            out.added.push(gate_brief(&kb[j], h));
        }
    }
    // The flags that decide workflows: those of the routing and option
    // gates and of computed workflow options, on either side.
    let mut names: BTreeSet<String> = BTreeSet::new();
    for g in a.iter().chain(b).filter(|g| g.role.is_workflow_gate()) {
        for c in &g.conditions {
            names.extend(c.flag.clone());
            names.extend(c.helper_flags.iter().map(|(f, _)| f.clone()));
        }
    }
    for w in wa.iter().chain(wb) {
        for o in &w.options {
            if let OptionValue::Computed { flags, .. } = &o.value {
                names.extend(flags.iter().map(|f| f.flag.clone()));
            }
        }
    }
    for flag in names {
        let (sa, ra) = flag_status(fa, &flag);
        let (sb, rb) = flag_status(fb, &flag);
        out.flags.push(GateFlag {
            flag,
            a: sa,
            b: sb,
            read_a: ra,
            read_b: rb,
        });
    }
    out
}

// -------------------------------------------------------------------- roles

#[derive(Debug, Clone, Serialize)]
pub struct RolePresence {
    pub role: String,
    pub workflow: Option<String>,
    pub a: Option<String>,
    pub b: Option<String>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct RolesDiff {
    pub only_a: Vec<RolePresence>,
    pub only_b: Vec<RolePresence>,
    pub both: Vec<RolePresence>,
}

impl RolesDiff {
    /// Every role located in one build is located in the other.
    pub fn is_empty(&self) -> bool {
        self.only_a.is_empty() && self.only_b.is_empty()
    }
}

pub fn roles(a: &Roles, b: &Roles) -> RolesDiff {
    let describe = |f: &crate::analysis::roles::RoleFunction| {
        format!(
            "{} ({}:{})",
            f.original
                .as_deref()
                .or(f.name.as_deref())
                .unwrap_or("anonymous"),
            f.module.rsplit('/').next().unwrap_or(""),
            f.raw_start
        )
    };
    let key = |f: &crate::analysis::roles::RoleFunction| (f.role, f.workflow.clone());
    let mut out = RolesDiff::default();
    let mut keys: Vec<_> = a.functions.iter().chain(&b.functions).map(key).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let fa = a.functions.iter().find(|f| key(f) == k);
        let fb = b.functions.iter().find(|f| key(f) == k);
        let p = RolePresence {
            role: k.0.as_str().to_string(),
            workflow: k.1.clone(),
            a: fa.map(describe),
            b: fb.map(describe),
        };
        match (fa, fb) {
            (Some(_), Some(_)) => out.both.push(p),
            (Some(_), None) => out.only_a.push(p),
            _ => out.only_b.push(p),
        }
    }
    out
}
