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

fn thousands(n: u64) -> String {
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
    /// Each build's bundle digest (docs/hashing.md), for the identity
    /// table: the entry module's hash says little of a code-split build.
    /// Not in the JSON, whose shape is documented in docs/diff.md.
    #[serde(skip)]
    pub digests: Option<(String, String)>,
    #[serde(skip)]
    pub provenance: super::provenance::Provenance,
}

fn show(x: &Value) -> String {
    match x {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Number(n) if n.is_u64() => fmt::num(n.as_u64().unwrap_or(0)),
        other => other.to_string(),
    }
}

/// A diff's caption, told when the diff is coarse (a pair past the time
/// its alignment may take: `lines::DiffBudget`), in every format.
fn with_coarse(caption: Inline, coarse: &Option<String>) -> Inline {
    match coarse {
        Some(why) => caption.s(Status::Muted, format!("  coarse (replaced whole): {why}")),
        None => caption,
    }
}

fn short(s: &str, n: usize) -> String {
    super::doc::elide(&s.replace('\n', "⏎"), n)
}

fn gate_name(g: &GateBrief) -> Inline {
    let mut i = Inline::code(g.key.clone());
    if let Some(n) = g.original.as_deref().or(g.function.as_deref()) {
        i = i.t(" ").c(n);
    }
    i.t(" (")
        .c(g.module.rsplit('/').next().unwrap_or(""))
        .t(format!(":{})", g.raw_line))
}

fn function_label(f: &crate::analysis::diff::functions::FunctionRef) -> Inline {
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

fn hidden_tag(w: &crate::analysis::diff::facts::WorkflowsDiff, n: &str) -> String {
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
    out
}

/// Changes per area, for the chart.
fn counts(v: &DiffView) -> Vec<(String, u64)> {
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
fn surface_counts(
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
    ] {
        if let Some(n) = n {
            out.push((key, n.added.len(), n.removed.len(), 0));
        }
    }
    out
}

/// Added and removed names as two capped lists.
fn added_removed(added: &[String], removed: &[String], limit: usize) -> Vec<Block> {
    let mut blocks = Vec::new();
    if !added.is_empty() {
        blocks.push(list(
            added
                .iter()
                .map(|n| Inline::status(Status::Added, "+ ").c(n.clone()))
                .collect(),
            limit,
        ));
    }
    if !removed.is_empty() {
        blocks.push(list(
            removed
                .iter()
                .map(|n| Inline::status(Status::Removed, "- ").c(n.clone()))
                .collect(),
            limit,
        ));
    }
    if blocks.is_empty() {
        blocks.push(Block::Note(Inline::from("no change")));
    }
    blocks
}

/// The surface sections: tools (property by property), prompts (by id,
/// with a word diff), env, settings, commands and models (names). A
/// section appears only when its kind changed (the summary says so too).
fn surface_sections(doc: &mut Doc, d: &crate::analysis::diff::BuildDiff, limit: usize) {
    let changed: Vec<&str> = surface_counts(d)
        .into_iter()
        .filter(|(_, a, r, c)| a + r + c > 0)
        .map(|(k, ..)| k)
        .collect();
    let on = |k: &str| changed.contains(&k);
    if let Some(t) = d.tools.as_ref().filter(|_| on("tools")) {
        let mut blocks = added_removed(&t.added, &t.removed, limit);
        if !t.changed.is_empty() {
            blocks.retain(|b| !matches!(b, Block::Note(_)));
        }
        for c in t.changed.iter().take(limit) {
            let mut items: Vec<Inline> = c
                .properties
                .iter()
                .map(|p| {
                    let st = match p.change {
                        "added" => Status::Added,
                        "removed" => Status::Removed,
                        _ => Status::Changed,
                    };
                    let mut i = Inline::status(st, format!("{} ", p.change)).c(p.property.clone());
                    if !p.fields.is_empty() {
                        i = i.t(format!(" ({})", p.fields.join(", ")));
                    }
                    i
                })
                .collect();
            items.extend(c.schema.iter().map(|x| Inline::from(x.clone())));
            if let Some(desc) = &c.description {
                items.push(Inline::from(format!(
                    "description: {} → {}",
                    fmt::bytes(desc.old_bytes as u64),
                    fmt::bytes(desc.new_bytes as u64)
                )));
            }
            blocks.push(Block::Section(Section::new(
                &format!("tool-{}", c.name),
                Inline::from("~ ").c(c.name.clone()),
                vec![list(items, limit)],
            )));
            if let Some(desc) = &c.description {
                // A diff block: long lines are cut by every renderer.
                blocks.push(Block::Diff {
                    caption: Some(with_coarse(
                        Inline::code(c.name.clone()).t(": description, word diff"),
                        &desc.coarse,
                    )),
                    text: desc.diff.clone(),
                    max_lines: Some(limit * 6),
                });
            }
        }
        if t.changed.len() > limit {
            blocks.push(list(
                t.changed[limit..]
                    .iter()
                    .map(|c| Inline::status(Status::Changed, "~ ").c(c.name.clone()))
                    .collect(),
                0,
            ));
        }
        doc.section("tools", "Tools", blocks);
    }
    if let Some(p) = d.prompts.as_ref().filter(|_| on("prompts")) {
        let mut blocks = added_removed(&p.added, &p.removed, limit);
        if !p.changed.is_empty() {
            blocks.retain(|b| !matches!(b, Block::Note(_)));
        }
        for c in p.changed.iter().take(limit) {
            blocks.push(Block::Diff {
                caption: Some(with_coarse(
                    Inline::status(Status::Changed, "~ ")
                        .c(c.id.clone())
                        .t(format!(
                            " ({} → {})",
                            fmt::bytes(c.bytes_a as u64),
                            fmt::bytes(c.bytes_b as u64)
                        )),
                    &c.coarse,
                )),
                text: c.words.clone(),
                max_lines: Some(limit * 6),
            });
        }
        if p.changed.len() > limit {
            blocks.push(list(
                p.changed[limit..]
                    .iter()
                    .map(|c| Inline::status(Status::Changed, "~ ").c(c.id.clone()))
                    .collect(),
                0,
            ));
        }
        doc.section("prompts", "Prompts", blocks);
    }
    for (key, title, n) in [
        ("env", "Environment variables", &d.env),
        ("settings", "Settings", &d.settings),
        ("commands", "Slash commands", &d.commands),
        ("models", "Models", &d.models),
    ] {
        if let Some(n) = n.as_ref().filter(|_| on(key)) {
            doc.section(key, title, added_removed(&n.added, &n.removed, limit));
        }
    }
}

fn list(items: Vec<Inline>, limit: usize) -> Block {
    Block::List {
        items,
        limit: Some(limit),
    }
}

/// The diff as one document; `limit` caps every list and each diff shows
/// at most `limit × 6` lines.
pub fn doc(v: &DiffView, limit: usize) -> Doc {
    let limit = limit.max(1);
    let diff_lines = limit * 6;
    let d = &v.diff;
    let mut doc = Doc::new(
        Inline::from("What changed: ")
            .c(v.a.clone())
            .t(" → ")
            .c(v.b.clone()),
    );
    doc.summary = summary(v);
    doc.toc = true;
    let chart = counts(v);
    if chart.len() > 1 {
        doc.push(Block::Section(Section::new(
            "changes-per-area",
            "Changes per area",
            vec![Block::Figure(svg::bars("Changes per area", &chart))],
        )));
    }
    if let Some(id) = &v.identity {
        let mut t = Table::new(vec![
            Column::new("", Kind::Status),
            Column::new("field", Kind::Text),
            Column::new("A", Kind::Code),
            Column::new("B", Kind::Code),
        ]);
        for f in &id.fields {
            t.row(vec![
                if f.differs {
                    Inline::status(Status::Changed, "≠")
                } else {
                    Inline::new()
                },
                f.field.into(),
                Inline::code(show(&f.a)),
                Inline::code(show(&f.b)),
            ]);
        }
        if let Some((a, b)) = &v.digests {
            t.row(vec![
                if a != b {
                    Inline::status(Status::Changed, "≠")
                } else {
                    Inline::new()
                },
                "bundle digest".into(),
                Inline::code(a.clone()),
                Inline::code(b.clone()),
            ]);
        }
        doc.section("identity", "Identity", vec![Block::Table(t)]);
    }
    if let Some(m) = &d.modules {
        let mut blocks = Vec::new();
        if !m.splits.is_empty() {
            blocks.push(list(
                m.splits
                    .iter()
                    .map(|sp| {
                        Inline::code(sp.from.clone()).t(format!(
                            " split into {} ({})",
                            fmt::count(sp.into, "module", "modules"),
                            fmt::bytes(sp.bytes)
                        ))
                    })
                    .collect(),
                limit,
            ));
        }
        let mut t = Table::new(vec![
            Column::new("", Kind::Status),
            Column::new("A", Kind::Code),
            Column::new("B", Kind::Code),
            Column::new("bytes A", Kind::Number),
            Column::new("bytes B", Kind::Number),
            Column::new("matched by", Kind::Text),
        ])
        .limit(limit);
        for c in &m.changed {
            t.row(vec![
                Inline::status(Status::Changed, "~ changed"),
                Inline::code(c.a.name.clone()),
                Inline::code(c.b.name.clone()),
                fmt::num(c.a.bytes).into(),
                fmt::num(c.b.bytes).into(),
                format!(
                    "{}{}",
                    c.matched_by,
                    c.similarity
                        .map(|s| format!(", similarity {s:.2}"))
                        .unwrap_or_default()
                )
                .into(),
            ]);
        }
        for c in &m.renamed {
            t.row(vec![
                Inline::status(Status::Muted, "= renamed"),
                Inline::code(c.a.name.clone()),
                Inline::code(c.b.name.clone()),
                fmt::num(c.a.bytes).into(),
                fmt::num(c.b.bytes).into(),
                "same content".into(),
            ]);
        }
        if !t.rows.is_empty() {
            blocks.push(Block::Table(t));
        }
        let named = |st: Status, word: &str, v: &[crate::analysis::diff::modules::ModuleRef]| {
            v.iter()
                .map(|x| {
                    Inline::status(st, word.to_string())
                        .t(" ")
                        .c(x.name.clone())
                        .t(format!(" ({})", fmt::bytes(x.bytes)))
                })
                .collect::<Vec<_>>()
        };
        if !m.added.is_empty() {
            blocks.push(list(named(Status::Added, "+ added", &m.added), limit));
        }
        if !m.removed.is_empty() {
            blocks.push(list(named(Status::Removed, "- removed", &m.removed), limit));
        }
        if blocks.is_empty() {
            blocks.push(Block::Note("No module changed.".into()));
        }
        doc.section("modules", "Modules", blocks);
    }
    if let Some(wd) = &d.workflows {
        let mut items = Vec::new();
        for n in &wd.removed {
            items.push(Inline::status(Status::Removed, "- removed ").c(hidden_tag(wd, n)));
        }
        for n in &wd.added {
            items.push(Inline::status(Status::Added, "+ added ").c(hidden_tag(wd, n)));
        }
        for n in &wd.unchanged {
            items.push(Inline::from("= unchanged ").c(n.clone()));
        }
        let mut blocks = if items.is_empty() {
            vec![Block::Note("No workflow in either build.".into())]
        } else {
            vec![list(items, usize::MAX)]
        };
        for c in &wd.details {
            let brief = |s: &Option<crate::analysis::diff::facts::ScriptBrief>| {
                s.as_ref().map_or(Inline::from("-"), |s| {
                    Inline::from(format!("{}, SHA-256 ", fmt::bytes(s.bytes as u64))).c(s
                        .sha256
                        .chars()
                        .take(16)
                        .collect::<String>())
                })
            };
            let mut sub = vec![super::doc::facts(vec![
                ("script A", brief(&c.script_a)),
                ("script B", brief(&c.script_b)),
                (
                    "lines",
                    Inline::status(Status::Added, format!("+{}", fmt::n(c.script_diff.added)))
                        .t(" ")
                        .s(
                            Status::Removed,
                            format!("−{}", fmt::n(c.script_diff.removed)),
                        ),
                ),
                (
                    "meta changed",
                    if c.meta_changed.is_empty() {
                        "nothing".into()
                    } else {
                        Inline::names(&c.meta_changed)
                    },
                ),
            ])];
            if !c.meta_diff.unified.is_empty() {
                sub.push(Block::Diff {
                    caption: Some(with_coarse("meta diff".into(), &c.meta_diff.coarse)),
                    text: c.meta_diff.unified.clone(),
                    max_lines: Some(diff_lines),
                });
            }
            if !c.script_diff.unified.is_empty() {
                sub.push(Block::Diff {
                    caption: Some(with_coarse("script diff".into(), &c.script_diff.coarse)),
                    text: c.script_diff.unified.clone(),
                    max_lines: Some(diff_lines * 2),
                });
            }
            blocks.push(Block::Section(Section::new(
                &format!("workflow-{}", c.name),
                Inline::status(Status::Changed, "~ changed ").c(c.name.clone()),
                sub,
            )));
        }
        doc.section("workflows", "Workflows", blocks);
    }
    if let Some(f) = &d.flags {
        let by_kind = |m: &std::collections::BTreeMap<String, usize>| {
            m.iter()
                .map(|(k, n)| format!("{k} {}", fmt::n(*n)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut blocks = vec![Block::Note(
            format!("{} → {} flags.", fmt::n(f.count_a), fmt::n(f.count_b)).into(),
        )];
        for (st, word, names, kinds) in [
            (Status::Added, "added", &f.added, &f.added_by_kind),
            (Status::Removed, "removed", &f.removed, &f.removed_by_kind),
        ] {
            if names.is_empty() {
                continue;
            }
            blocks.push(Block::Note(
                Inline::status(st, format!("{word} {}", fmt::n(names.len())))
                    .t(format!(" ({}):", by_kind(kinds))),
            ));
            blocks.push(list(
                names.iter().map(|n| Inline::code(n.clone())).collect(),
                limit * 3,
            ));
        }
        if !f.kind_changed.is_empty() || !f.default_changed.is_empty() {
            let mut t = Table::new(vec![
                Column::new("flag", Kind::Code),
                Column::new("change", Kind::Text),
                Column::new("A", Kind::Code),
                Column::new("B", Kind::Code),
            ])
            .limit(limit * 3);
            for c in &f.kind_changed {
                let k = |v: &Value| v.as_str().unwrap_or("?").to_string();
                t.row(vec![
                    Inline::code(c.name.clone()),
                    "kind".into(),
                    Inline::code(k(&c.a)),
                    Inline::code(k(&c.b)),
                ]);
            }
            for c in &f.default_changed {
                t.row(vec![
                    Inline::code(c.name.clone()),
                    "default".into(),
                    Inline::code(c.a.to_string()),
                    Inline::code(c.b.to_string()),
                ]);
            }
            blocks.push(Block::Table(t));
        }
        doc.section("flags", "Flags", blocks);
    }
    if let Some(g) = &d.gates {
        let mut blocks = vec![Block::Note(
            format!(
                "{} → {} gates; {} unchanged.",
                fmt::n(g.count_a),
                fmt::n(g.count_b),
                fmt::n(g.unchanged)
            )
            .into(),
        )];
        let important = |k: &str| !k.starts_with("flag-gate");
        for (st, word, v) in [
            (Status::Removed, "- removed ", &g.removed),
            (Status::Added, "+ added ", &g.added),
        ] {
            // Workflow gates all, then flag-gates up to the limit.
            let mut ordered: Vec<&GateBrief> = v.iter().filter(|x| important(&x.key)).collect();
            let keep = ordered.len() + limit;
            ordered.extend(v.iter().filter(|x| !important(&x.key)));
            for (k, r) in ordered.iter().enumerate() {
                if k == keep {
                    blocks.push(Block::Note(Inline::status(
                        Status::Muted,
                        format!(
                            "… and {} more flag-gates {}",
                            fmt::n(ordered.len() - keep),
                            word.trim_start_matches(['-', '+', ' ']).trim()
                        ),
                    )));
                    break;
                }
                blocks.push(Block::Note(Inline::status(st, word).extend(gate_name(r))));
                blocks.push(Block::Ordered(
                    r.conditions
                        .iter()
                        .map(|c| Inline::code(short(c, 200)))
                        .collect(),
                ));
            }
        }
        let shown = limit * 2;
        for c in g.changed.iter().take(shown) {
            let mut t = Table::new(vec![
                Column::new("", Kind::Text),
                Column::new("A", Kind::Code),
                Column::new("B", Kind::Code),
            ]);
            for r in &c.rows {
                t.row(vec![
                    r.status.into(),
                    Inline::code(r.a.as_deref().map(|s| short(s, 160)).unwrap_or_default()),
                    Inline::code(r.b.as_deref().map(|s| short(s, 160)).unwrap_or_default()),
                ]);
            }
            blocks.push(Block::Section(Section::new(
                &format!("gate-{}", c.key),
                Inline::status(Status::Changed, "~ changed ")
                    .extend(gate_name(&c.a))
                    .t(" → ")
                    .extend(gate_name(&c.b)),
                vec![Block::Table(t)],
            )));
        }
        if g.changed.len() > shown {
            blocks.push(Block::Note(Inline::status(
                Status::Muted,
                format!(
                    "… and {} more changed gates",
                    fmt::n(g.changed.len() - shown)
                ),
            )));
        }
        if !g.flags.is_empty() {
            let mut t = Table::new(vec![
                Column::new("flag deciding workflows", Kind::Code),
                Column::new("A", Kind::Text),
                Column::new("B", Kind::Text),
            ]);
            for f in &g.flags {
                t.row(vec![
                    Inline::code(f.flag.clone()),
                    f.a.as_str().into(),
                    if f.a == f.b {
                        f.b.as_str().into()
                    } else {
                        Inline::status(Status::Changed, f.b.clone())
                    },
                ]);
            }
            blocks.push(Block::Table(t));
        }
        doc.section("gates", "Gates", blocks);
    }
    if let Some(r) = &d.roles {
        let mut t = Table::new(vec![
            Column::new("role", Kind::Text),
            Column::new("workflow", Kind::Code),
            Column::new("A", Kind::Code),
            Column::new("B", Kind::Code),
        ]);
        for x in r.only_a.iter().chain(&r.only_b).chain(&r.both) {
            let side = |s: &Option<String>| {
                s.as_ref()
                    .map_or(Inline::status(Status::Muted, "absent"), |n| {
                        Inline::code(n.clone())
                    })
            };
            t.row(vec![
                x.role.as_str().into(),
                Inline::code(x.workflow.clone().unwrap_or_default()),
                side(&x.a),
                side(&x.b),
            ]);
        }
        doc.section("roles", "Roles", vec![Block::Table(t)]);
    }
    if let Some(f) = &d.functions {
        let mut blocks = vec![Block::Note(
            "Largest changes first; consistent renames are not changes.".into(),
        )];
        for c in f.changed.iter().take(limit) {
            blocks.push(Block::Diff {
                caption: Some(with_coarse(
                    Inline::status(Status::Changed, "~ ")
                        .extend(function_label(&c.a))
                        .t(" → ")
                        .extend(function_label(&c.b))
                        .t("  ")
                        .s(Status::Added, format!("+{}", fmt::n(c.lines_added)))
                        .t(" ")
                        .s(Status::Removed, format!("−{}", fmt::n(c.lines_removed)))
                        .t("  ")
                        .s(Status::Muted, format!("matched by {}", c.matched_by)),
                    &c.coarse,
                )),
                text: c.diff.clone(),
                max_lines: Some(diff_lines),
            });
        }
        if f.changed.len() > limit {
            blocks.push(list(
                f.changed[limit..]
                    .iter()
                    .map(|c| {
                        Inline::from("~ ").extend(function_label(&c.b)).t(format!(
                            "  +{} −{}",
                            fmt::n(c.lines_added),
                            fmt::n(c.lines_removed)
                        ))
                    })
                    .collect(),
                0,
            ));
        }
        let refs = |st: Status, word: &str, v: &[crate::analysis::diff::functions::FunctionRef]| {
            v.iter()
                .map(|x| {
                    Inline::status(st, word.to_string())
                        .extend(function_label(x))
                        .t(format!(
                            " ({})",
                            fmt::count(x.tokens as usize, "token", "tokens")
                        ))
                })
                .collect::<Vec<_>>()
        };
        if !f.added.is_empty() {
            blocks.push(list(refs(Status::Added, "+ ", &f.added), limit));
        }
        if !f.removed.is_empty() {
            blocks.push(list(refs(Status::Removed, "- ", &f.removed), limit));
        }
        doc.section("functions", "Functions (largest changes first)", blocks);
    }
    if let Some(t) = &d.text {
        let mut blocks = Vec::new();
        for c in t.changed.iter().take(limit) {
            blocks.push(Block::Diff {
                caption: Some(with_coarse(
                    Inline::status(Status::Changed, "~ ")
                        .t(format!("“{}”", short(&c.a, 90)))
                        .s(Status::Muted, format!("  similarity {:.2}", c.similarity)),
                    &c.coarse,
                )),
                text: c.diff.clone(),
                max_lines: Some(diff_lines),
            });
        }
        if t.changed.len() > limit {
            blocks.push(list(
                t.changed[limit..]
                    .iter()
                    .map(|c| Inline::from(format!("~ “{}”", short(&c.a, 120))))
                    .collect(),
                0,
            ));
        }
        if !t.added.is_empty() {
            blocks.push(list(
                t.added
                    .iter()
                    .map(|x| Inline::status(Status::Added, "+ ").t(format!("“{}”", short(x, 160))))
                    .collect(),
                limit,
            ));
        }
        if !t.removed.is_empty() {
            blocks.push(list(
                t.removed
                    .iter()
                    .map(|x| {
                        Inline::status(Status::Removed, "- ").t(format!("“{}”", short(x, 160)))
                    })
                    .collect(),
                limit,
            ));
        }
        doc.section("texts", "Texts", blocks);
    }
    surface_sections(&mut doc, d, limit);
    doc.footer = v
        .provenance
        .facts(&format!("cc-teardown {}", env!("CARGO_PKG_VERSION")));
    doc
}
