//! The sections of the diff report, one function each.

use super::*;

/// Added and removed names as two capped lists.
pub(super) fn added_removed(added: &[String], removed: &[String], limit: usize) -> Vec<Block> {
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
pub(super) fn surface_sections(doc: &mut Doc, d: &crate::analysis::diff::BuildDiff, limit: usize) {
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
        ("schemas", "Schema descriptions", &d.schemas),
    ] {
        if let Some(n) = n.as_ref().filter(|_| on(key)) {
            doc.section(key, title, added_removed(&n.added, &n.removed, limit));
        }
    }
}

pub(super) fn list(items: Vec<Inline>, limit: usize) -> Block {
    Block::List {
        items,
        limit: Some(limit),
    }
}

/// The diff as one document; `limit` caps every list and each diff shows
/// at most `limit × 6` lines.
pub(super) fn doc(v: &DiffView, limit: usize) -> Doc {
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
        modules_section(&mut doc, m, limit);
    }
    if let Some(wd) = &d.workflows {
        workflows_section(&mut doc, wd, diff_lines);
    }
    if let Some(f) = &d.flags {
        flags_section(&mut doc, f, limit);
    }
    if let Some(g) = &d.gates {
        gates_section(&mut doc, g, limit);
    }
    if let Some(r) = &d.roles {
        roles_section(&mut doc, r);
    }
    if let Some(f) = &d.functions {
        functions_section(&mut doc, f, limit, diff_lines);
    }
    if let Some(t) = &d.text {
        text_section(&mut doc, t, limit, diff_lines);
    }
    surface_sections(&mut doc, d, limit);
    doc.footer = v
        .provenance
        .facts(&format!("cc-teardown {}", env!("CARGO_PKG_VERSION")));
    doc
}

/// The modules section of the diff report.
pub(super) fn modules_section(
    doc: &mut Doc,
    m: &crate::analysis::diff::modules::ModuleDiff,
    limit: usize,
) {
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

/// The workflows section of the diff report.
pub(super) fn workflows_section(
    doc: &mut Doc,
    wd: &crate::analysis::diff::facts::WorkflowsDiff,
    diff_lines: usize,
) {
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
        let mut sub = vec![crate::report::doc::facts(vec![
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

/// The flags section of the diff report.
pub(super) fn flags_section(
    doc: &mut Doc,
    f: &crate::analysis::diff::facts::FlagsDiff,
    limit: usize,
) {
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

/// The gates section of the diff report.
pub(super) fn gates_section(
    doc: &mut Doc,
    g: &crate::analysis::diff::facts::GatesDiff,
    limit: usize,
) {
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

/// The roles section of the diff report.
pub(super) fn roles_section(doc: &mut Doc, r: &crate::analysis::diff::facts::RolesDiff) {
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

/// The functions section of the diff report.
pub(super) fn functions_section(
    doc: &mut Doc,
    f: &crate::analysis::diff::functions::FunctionDiff,
    limit: usize,
    diff_lines: usize,
) {
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

/// The text section of the diff report.
pub(super) fn text_section(
    doc: &mut Doc,
    t: &crate::analysis::diff::text::TextDiff,
    limit: usize,
    diff_lines: usize,
) {
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
                .map(|x| Inline::status(Status::Removed, "- ").t(format!("“{}”", short(x, 160))))
                .collect(),
            limit,
        ));
    }
    doc.section("texts", "Texts", blocks);
}
