//! `workflows`: the bundled workflows of a build, each with its meta, options, script facts, levels and pipeline.

use super::doc::{Block, Doc, Inline, Kind, Section, Status, Table, fmt};
use super::emit::View;
use super::teardown;
use crate::analysis::workflows::WorkflowScript;

#[derive(serde::Serialize)]
pub struct WorkflowsView {
    pub target: String,
    pub version: Option<String>,
    pub workflows: Vec<WorkflowScript>,
}

/// One row per workflow, then a section each: its meta, options in words,
/// script facts, level table and pipeline figure.
fn doc(label: &str, all: &[WorkflowScript]) -> Doc {
    let mut d = Doc::new(Inline::from("Bundled workflows of ").c(label)).bare();
    if all.is_empty() {
        d.push(Block::Note(
            Inline::from("no bundled workflows in ").c(label),
        ));
        return d;
    }
    let mut t = Table::of(&[
        ("workflow", Kind::Code),
        ("hidden", Kind::Text),
        ("phases", Kind::Text),
        ("lines", Kind::Number),
        ("bytes", Kind::Number),
        ("sha256", Kind::Code),
        ("syntax", Kind::Text),
        ("builder", Kind::Code),
    ]);
    for w in all {
        let s = w.script.as_ref();
        t.text_row(vec![
            w.name.clone(),
            w.hidden.to_string(),
            w.phases
                .iter()
                .map(|p| p.title.as_str())
                .collect::<Vec<_>>()
                .join(" → "),
            s.map_or("-".into(), |s| fmt::num(s.lines as u64)),
            s.map_or("-".into(), |s| fmt::num(s.bytes as u64)),
            s.map_or("-".into(), |s| s.sha256[..16].to_string()),
            match s {
                Some(s) if s.syntax_ok => "ok".into(),
                Some(s) => s
                    .syntax_error
                    .as_ref()
                    .map_or("error".into(), |e| format!("error {}:{}", e.line, e.col)),
                None => "not reconstructed".into(),
            },
            format!(
                "{} ({}:{})",
                w.builder.name.as_deref().unwrap_or("?"),
                w.builder.module.rsplit('/').next().unwrap_or(""),
                w.builder.raw_start
            ),
        ]);
    }
    d.push(Block::Table(t));
    for w in all {
        let mut rows: Vec<(String, Inline)> = vec![(
            "hidden".into(),
            if w.hidden {
                Inline::status(Status::Changed, "true (registered but not listed)")
            } else {
                "false".into()
            },
        )];
        if let Some(x) = &w.description {
            rows.push(("description".into(), x.as_str().into()));
        }
        if let Some(x) = &w.when_to_use {
            rows.push(("when to use".into(), x.as_str().into()));
        }
        for p in &w.phases {
            rows.push((
                "phase".into(),
                Inline::strong(p.title.clone()).t(p
                    .detail
                    .as_ref()
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default()),
            ));
        }
        for o in &w.options {
            rows.push((
                format!("option {}", o.name),
                teardown::option_text(&o.value),
            ));
        }
        if let Some(s) = &w.script {
            rows.push((
                "script".into(),
                Inline::from(format!(
                    "{} ({} newlines), {}, sha256 ",
                    fmt::count(s.lines, "line", "lines"),
                    fmt::n(s.newlines),
                    fmt::bytes(s.bytes as u64),
                ))
                .c(s.sha256.clone()),
            ));
        }
        if let Some(e) = &w.script_error {
            rows.push((
                "not evaluated".into(),
                Inline::status(Status::Unknown, e.to_string()),
            ));
        }
        if let Some(n) = &w.levels_note {
            rows.push((
                "levels".into(),
                Inline::status(Status::Unknown, format!("not derived: {n}")),
            ));
        }
        let mut blocks = vec![Block::Facts(rows)];
        if let Some(levels) = &w.levels {
            let mut t = Table::of(&[
                ("level", Kind::Text),
                ("correctness finders", Kind::Number),
                ("cleanup finders", Kind::Number),
                ("per angle", Kind::Number),
                ("initial candidates", Kind::Number),
                ("sweep", Kind::Number),
                ("report limit", Kind::Number),
            ]);
            for l in levels {
                t.text_row(vec![
                    l.level.clone(),
                    fmt::num(l.correctness_finders),
                    fmt::num(l.cleanup_finders),
                    fmt::num(l.per_angle),
                    fmt::num(l.initial_candidate_limit),
                    l.sweep.map_or("none".into(), fmt::num),
                    fmt::num(l.report_limit),
                ]);
            }
            blocks.push(Block::Table(t));
        }
        blocks.extend(teardown::pipeline_figure(w));
        d.push(Block::Section(Section::new(
            &format!("workflow-{}", w.name),
            Inline::code(w.name.clone()),
            blocks,
        )));
    }
    d
}

impl View for WorkflowsView {
    fn doc(&self) -> Doc {
        doc(&self.target, &self.workflows)
    }
}
