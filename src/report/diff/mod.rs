//! The `diff` view: identity facts of both builds side by side, the
//! analyses' diff, and its one [`Doc`] — a summary first, a chart of the
//! changes per area, then a section per area, every list and diff capped
//! by `--limit` (HTML keeps the rest collapsed). The renderers escape
//! what comes from the builds.

use super::doc::{Block, Column, Doc, Inline, Kind, Section, Status, Table, fmt};
use super::info::InfoView;
use super::svg;
use crate::analysis::diff::BuildDiff;
use crate::analysis::diff::facts::GateBrief;
use serde::Serialize;
use serde_json::Value;

mod sections;
use sections::doc;

pub(super) fn thousands(n: u64) -> String {
    fmt::num(n)
}

#[derive(Debug, Clone, Serialize)]
pub struct FieldChange {
    pub field: &'static str,
    pub a: Value,
    pub b: Value,
    pub differs: bool,
}

/// How a build is put together, in words.
fn structure(i: &InfoView) -> String {
    if i.bundle.code_split {
        format!(
            "code-split ESM build ({} JavaScript chunks)",
            thousands(i.bun.js_modules as u64)
        )
    } else if i.bun.js_modules <= 1 {
        "single JavaScript bundle".to_string()
    } else {
        format!(
            "single bundle plus {} JavaScript modules",
            thousands(i.bun.js_modules as u64 - 1)
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct IdentityDiff {
    pub structure_a: String,
    pub structure_b: String,
    pub fields: Vec<FieldChange>,
}

pub fn identity(a: &InfoView, b: &InfoView) -> IdentityDiff {
    let (va, vb) = (
        serde_json::to_value(a).unwrap_or_default(),
        serde_json::to_value(b).unwrap_or_default(),
    );
    let fields = [
        ("version", "/version"),
        ("platform", "/target/platform"),
        ("package", "/target/package"),
        ("file bytes", "/target/file_bytes"),
        ("container", "/container/format"),
        ("arch", "/container/arch"),
        ("section", "/container/section"),
        ("placement", "/container/placement"),
        ("Bun layout", "/bun/layout/epoch"),
        ("record size", "/bun/layout/record_size"),
        ("offsets size", "/bun/layout/offsets_size"),
        ("modules", "/bun/modules"),
        ("JavaScript modules", "/bun/js_modules"),
        ("compressed modules", "/bun/compressed_modules"),
        ("entry", "/bun/entry"),
        ("bytecode bytes", "/bun/bytecode_bytes"),
        ("code-split", "/bundle/code_split"),
        ("bundle bytes", "/bundle/bytes"),
        ("bundle sha256", "/bundle/sha256"),
    ]
    .into_iter()
    .map(|(field, ptr)| {
        let x = va.pointer(ptr).cloned().unwrap_or(Value::Null);
        let y = vb.pointer(ptr).cloned().unwrap_or(Value::Null);
        FieldChange {
            field,
            differs: x != y,
            a: x,
            b: y,
        }
    })
    .collect();
    IdentityDiff {
        structure_a: structure(a),
        structure_b: structure(b),
        fields,
    }
}

#[derive(Serialize)]
pub struct DiffView {
    pub a: String,
    pub b: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityDiff>,
    #[serde(flatten)]
    pub diff: BuildDiff,
    pub timings_ms: std::collections::BTreeMap<&'static str, u64>,
    /// Each build's bundle digest (docs/guide/hashing.md), for the identity
    /// table: the entry module's hash says little of a code-split build.
    /// Not in the JSON, whose shape is documented in docs/guide/diff.md.
    #[serde(skip)]
    pub digests: Option<(String, String)>,
    #[serde(skip)]
    pub provenance: super::provenance::Provenance,
    /// How many items of each list the human reports show (`--limit`).
    #[serde(skip)]
    pub limit: usize,
}

impl super::emit::View for DiffView {
    fn doc(&self) -> Doc {
        doc(self, self.limit)
    }
}

pub(super) fn show(x: &Value) -> String {
    match x {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Number(n) if n.is_u64() => fmt::num(n.as_u64().unwrap_or(0)),
        other => other.to_string(),
    }
}

/// A diff's caption, told when the diff is coarse (a pair past the time
/// its alignment may take: `lines::DiffBudget`), in every format.
pub(super) fn with_coarse(caption: Inline, coarse: &Option<String>) -> Inline {
    match coarse {
        Some(why) => caption.s(Status::Muted, format!("  coarse (replaced whole): {why}")),
        None => caption,
    }
}

pub(super) fn short(s: &str, n: usize) -> String {
    super::doc::elide(&s.replace('\n', "⏎"), n)
}

pub(super) fn gate_name(g: &GateBrief) -> Inline {
    let mut i = Inline::code(g.key.clone());
    if let Some(n) = g.original.as_deref().or(g.function.as_deref()) {
        i = i.t(" ").c(n);
    }
    i.t(" (")
        .c(g.module.rsplit('/').next().unwrap_or(""))
        .t(format!(":{})", g.raw_line))
}

pub(super) fn function_label(f: &crate::analysis::diff::functions::FunctionRef) -> Inline {
    let name = match (&f.original, &f.name) {
        (Some(o), Some(n)) => format!("{o} [{n}]"),
        (None, Some(n)) => n.clone(),
        (Some(o), None) => o.clone(),
        (None, None) => f.place().unwrap_or_else(|| "(anonymous)".into()),
    };
    Inline::code(name).t(format!(
        " {}:{}",
        f.module.rsplit('/').next().unwrap_or(""),
        f.raw_line
    ))
}

pub(super) fn hidden_tag(w: &crate::analysis::diff::facts::WorkflowsDiff, n: &str) -> String {
    if w.hidden.get(n).copied().unwrap_or(false) {
        format!("{n} (hidden)")
    } else {
        n.to_string()
    }
}

/// The summary: one line per area, the facts users ask about first.
pub fn summary(v: &DiffView) -> Vec<(String, Inline)> {
    let d = &v.diff;
    let mut out: Vec<(String, Inline)> = Vec::new();
    let mut push = |k: &str, i: Inline| out.push((k.to_string(), i));
    if let Some(id) = &v.identity {
        let field = |f: &str| id.fields.iter().find(|x| x.field == f);
        for name in ["version", "platform"] {
            if let Some(f) = field(name) {
                push(
                    name,
                    if f.differs {
                        Inline::code(show(&f.a)).t(" → ").c(show(&f.b))
                    } else {
                        Inline::code(show(&f.a)).t(" (both)")
                    },
                );
            }
        }
        push(
            "structure",
            if id.structure_a == id.structure_b {
                format!("{} (unchanged)", id.structure_a).into()
            } else {
                format!("{} → {}", id.structure_a, id.structure_b).into()
            },
        );
        if let Some(f) = field("bundle sha256") {
            push(
                "bundle",
                if f.differs {
                    Inline::from("differs (")
                        .c(short(&show(&f.a), 13))
                        .t(" → ")
                        .c(short(&show(&f.b), 13))
                        .t(")")
                } else {
                    Inline::status(Status::Pass, "identical")
                },
            );
        }
    }
    summary_facts(d, &mut push);
    summary_code(d, &mut push);
    out
}

/// The summary lines of the fact sections (modules, workflows, flags, gates).
fn summary_facts(d: &BuildDiff, push: &mut impl FnMut(&str, Inline)) {
    if let Some(m) = &d.modules {
        let mut s = format!(
            "{} → {}: {} unchanged, {} renamed, {} changed, {} added, {} removed",
            fmt::n(m.modules_a),
            fmt::n(m.modules_b),
            fmt::n(m.unchanged),
            fmt::n(m.renamed.len()),
            fmt::n(m.changed.len()),
            fmt::n(m.added.len()),
            fmt::n(m.removed.len())
        );
        for sp in m.splits.iter().take(2) {
            s.push_str(&format!(
                "; {} split into {}",
                sp.from,
                fmt::count(sp.into, "chunk", "chunks")
            ));
        }
        push("modules", s.into());
    }
    if let Some(w) = &d.workflows {
        let mut i = Inline::new();
        let sep = |i: Inline| if i.is_empty() { i } else { i.t("; ") };
        if !w.removed.is_empty() {
            i = sep(i).s(
                Status::Removed,
                format!(
                    "removed {}",
                    w.removed
                        .iter()
                        .map(|n| hidden_tag(w, n))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if !w.added.is_empty() {
            i = sep(i).s(
                Status::Added,
                format!(
                    "added {}",
                    w.added
                        .iter()
                        .map(|n| hidden_tag(w, n))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if !w.changed.is_empty() {
            i = sep(i).s(Status::Changed, format!("changed {}", w.changed.join(", ")));
        }
        if !w.unchanged.is_empty() {
            i = sep(i).t(format!("unchanged {}", w.unchanged.join(", ")));
        }
        push(
            "workflows",
            if i.is_empty() {
                "none in either build".into()
            } else {
                i
            },
        );
    }
    if let Some(f) = &d.flags {
        push(
            "flags",
            format!(
                "{} → {}: {} added, {} removed, {} kind changed, {} default changed",
                fmt::n(f.count_a),
                fmt::n(f.count_b),
                fmt::n(f.added.len()),
                fmt::n(f.removed.len()),
                fmt::n(f.kind_changed.len()),
                fmt::n(f.default_changed.len())
            )
            .into(),
        );
    }
    if let Some(g) = &d.gates {
        let named = |v: &[GateBrief]| {
            v.iter()
                .filter(|g| !g.key.starts_with("flag-gate"))
                .map(|g| g.key.clone())
                .collect::<Vec<_>>()
        };
        let mut i = Inline::new();
        let (r, a) = (named(&g.removed), named(&g.added));
        if !r.is_empty() {
            i = i
                .s(Status::Removed, format!("removed {}", r.join(", ")))
                .t("; ");
        }
        if !a.is_empty() {
            i = i
                .s(Status::Added, format!("added {}", a.join(", ")))
                .t("; ");
        }
        let changed: Vec<String> = g
            .changed
            .iter()
            .filter(|c| !c.key.starts_with("flag-gate"))
            .map(|c| c.key.clone())
            .collect();
        if !changed.is_empty() {
            i = i
                .s(Status::Changed, format!("changed {}", changed.join(", ")))
                .t("; ");
        }
        let fg = |v: &[GateBrief]| v.iter().filter(|g| g.key.starts_with("flag-gate")).count();
        let fgc = g
            .changed
            .iter()
            .filter(|c| c.key.starts_with("flag-gate"))
            .count();
        i = i.t(format!(
            "flag-gates: {} added, {} removed, {} changed",
            fmt::n(fg(&g.added)),
            fmt::n(fg(&g.removed)),
            fmt::n(fgc)
        ));
        push("gates", i);
        for f in g.flags.iter().filter(|f| f.a != f.b) {
            push(
                "gate flag",
                Inline::from(format!("{}: {} → {}", f.flag, f.a, f.b)),
            );
        }
    }
}

/// The summary lines of the code sections (roles, functions, the surface, texts).
fn summary_code(d: &BuildDiff, push: &mut impl FnMut(&str, Inline)) {
    if let Some(r) = &d.roles {
        let list = |v: &[crate::analysis::diff::facts::RolePresence]| {
            v.iter()
                .map(|p| match &p.workflow {
                    Some(w) => format!("{} ({w})", p.role),
                    None => p.role.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        push(
            "roles",
            match (r.only_a.is_empty(), r.only_b.is_empty()) {
                (true, true) => format!(
                    "the same {} found in both",
                    fmt::count(r.both.len(), "role", "roles")
                )
                .into(),
                _ => format!(
                    "only in A: {}; only in B: {}",
                    if r.only_a.is_empty() {
                        "none".into()
                    } else {
                        list(&r.only_a)
                    },
                    if r.only_b.is_empty() {
                        "none".into()
                    } else {
                        list(&r.only_b)
                    }
                )
                .into(),
            },
        );
    }
    if let Some(f) = &d.functions {
        push(
            "functions",
            format!(
                "{} → {}: {} unchanged, {} renamed only, {} changed, {} added, {} removed",
                fmt::n(f.units_a),
                fmt::n(f.units_b),
                fmt::n(f.unchanged),
                fmt::n(f.renamed_only),
                fmt::n(f.changed.len()),
                fmt::n(f.added.len()),
                fmt::n(f.removed.len())
            )
            .into(),
        );
    }
    for (key, added, removed, changed) in surface_counts(d) {
        if added + removed + changed > 0 {
            let mut parts = vec![
                format!("{} added", fmt::n(added)),
                format!("{} removed", fmt::n(removed)),
            ];
            if key == "tools" || key == "prompts" {
                parts.push(format!("{} changed", fmt::n(changed)));
            }
            push(key, parts.join(", ").into());
        }
    }
    if let Some(t) = &d.text {
        push(
            "texts",
            format!(
                "{} → {}: {} changed, {} added, {} removed",
                fmt::n(t.texts_a),
                fmt::n(t.texts_b),
                fmt::n(t.changed.len()),
                fmt::n(t.added.len()),
                fmt::n(t.removed.len())
            )
            .into(),
        );
    }
}

/// Changes per area, for the chart.
pub(super) fn counts(v: &DiffView) -> Vec<(String, u64)> {
    let d = &v.diff;
    let mut out = Vec::new();
    let mut add = |k: &str, n: usize| out.push((k.to_string(), n as u64));
    if let Some(id) = &v.identity {
        add("identity", id.fields.iter().filter(|f| f.differs).count());
    }
    if let Some(m) = &d.modules {
        add(
            "modules",
            m.changed.len() + m.renamed.len() + m.added.len() + m.removed.len(),
        );
    }
    if let Some(w) = &d.workflows {
        add(
            "workflows",
            w.added.len() + w.removed.len() + w.changed.len(),
        );
    }
    if let Some(f) = &d.flags {
        add(
            "flags",
            f.added.len() + f.removed.len() + f.kind_changed.len() + f.default_changed.len(),
        );
    }
    if let Some(g) = &d.gates {
        add("gates", g.added.len() + g.removed.len() + g.changed.len());
    }
    if let Some(r) = &d.roles {
        add("roles", r.only_a.len() + r.only_b.len());
    }
    if let Some(f) = &d.functions {
        add(
            "functions",
            f.changed.len() + f.added.len() + f.removed.len(),
        );
    }
    if let Some(t) = &d.text {
        add("texts", t.changed.len() + t.added.len() + t.removed.len());
    }
    // Surface areas only when something changed: builds without a
    // surface (fixtures, old cli.js) get no empty bars.
    for (key, a, r, c) in surface_counts(d) {
        if a + r + c > 0 {
            add(key, a + r + c);
        }
    }
    out
}

/// (section, added, removed, changed) for each surface section present.
pub(super) fn surface_counts(
    d: &crate::analysis::diff::BuildDiff,
) -> Vec<(&'static str, usize, usize, usize)> {
    let mut out = Vec::new();
    if let Some(t) = &d.tools {
        out.push(("tools", t.added.len(), t.removed.len(), t.changed.len()));
    }
    if let Some(p) = &d.prompts {
        out.push(("prompts", p.added.len(), p.removed.len(), p.changed.len()));
    }
    for (key, n) in [
        ("env", &d.env),
        ("settings", &d.settings),
        ("commands", &d.commands),
        ("models", &d.models),
        ("schemas", &d.schemas),
    ] {
        if let Some(n) = n {
            out.push((key, n.added.len(), n.removed.len(), 0));
        }
    }
    out
}
