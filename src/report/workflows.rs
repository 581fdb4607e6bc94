//! `workflows`: the bundled workflows of a build, each with its meta, options, script facts, levels and pipeline.

use super::doc::{Block, Doc, Inline, Kind, Section, Status, Table, fmt};
use super::emit::View;
use super::outdir::{OutDir, OutPlan};
use super::teardown;
use crate::analysis::AnalysisError;
use crate::analysis::workflows::WorkflowScript;
use std::path::Path;

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

/// A workflow name used as a file name must stay a plain file name.
fn safe_file_stem(name: &str) -> Result<&str, AnalysisError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !ok {
        return Err(AnalysisError(format!(
            "workflow name {name:?} is not a safe file name"
        )));
    }
    Ok(name)
}

/// One script written by `reconstruct` (fields in the order the JSON
/// has always listed them).
#[derive(serde::Serialize)]
pub struct Written {
    pub meta: String,
    pub name: String,
    pub script: String,
    pub sha256: Option<String>,
    /// The human line: size, lines, hash and syntax verdict.
    #[serde(skip)]
    pub line: String,
}

/// `reconstruct`: what was written, and how many could not be.
#[derive(serde::Serialize)]
pub struct ReconstructView {
    pub failed: usize,
    pub target: String,
    pub written: Vec<Written>,
    /// Each workflow not reconstructed, and why (said on stderr).
    #[serde(skip)]
    pub failures: Vec<(String, String)>,
}

/// Write each workflow's exact script (`NAME.js`) and its facts
/// (`NAME.meta.json`) below `folder`. Every file is checked before the
/// first write, and nothing already in the folder is written through; two
/// workflows of one name, or of names equal but for case, are refused
/// before anything is written.
pub fn reconstruct(
    found: &WorkflowsView,
    folder: &Path,
    force: bool,
) -> anyhow::Result<ReconstructView> {
    let (label, version, all) = (&found.target, &found.version, &found.workflows);
    if all.is_empty() {
        return Err(AnalysisError(format!("no bundled workflows in {label}")).into());
    }
    let mut plan = OutPlan::new();
    let mut rels = Vec::with_capacity(all.len());
    for w in all {
        let stem = safe_file_stem(&w.name)?;
        let who = format!("workflow {}", w.name);
        let meta = plan.add(Path::new(&format!("{stem}.meta.json")), who.clone())?;
        let script = match w.text {
            Some(_) => Some(plan.add(Path::new(&format!("{stem}.js")), who)?),
            None => None,
        };
        rels.push((meta, script));
    }
    let mut dir = OutDir::open(folder, &plan, force)?;
    let mut view = ReconstructView {
        failed: 0,
        target: label.clone(),
        written: Vec::new(),
        failures: Vec::new(),
    };
    for (w, (meta_rel, script_rel)) in all.iter().zip(&rels) {
        let meta = serde_json::json!({ "target": label, "version": version, "workflow": w });
        dir.write(meta_rel, &serde_json::to_vec_pretty(&meta)?)?;
        let meta_path = folder.join(meta_rel);
        match (&w.text, script_rel, &w.script) {
            (Some(text), Some(rel), Some(s)) => {
                dir.write(rel, text.as_bytes())?;
                let p = folder.join(rel).display().to_string();
                view.written.push(Written {
                    line: format!(
                        "{}: {} ({}, {}, sha256 {}, syntax {})",
                        super::escape::display(&w.name),
                        super::escape::display(&p),
                        fmt::bytes(s.bytes as u64),
                        fmt::count(s.lines, "line", "lines"),
                        &s.sha256[..16],
                        if s.syntax_ok { "ok" } else { "ERROR" }
                    ),
                    meta: meta_path.display().to_string(),
                    name: w.name.clone(),
                    script: p,
                    sha256: Some(s.sha256.clone()),
                });
            }
            _ => {
                view.failed += 1;
                view.failures.push((
                    w.name.clone(),
                    w.script_error
                        .as_ref()
                        .map_or("no script argument".into(), |e| e.to_string()),
                ));
            }
        }
    }
    Ok(view)
}

impl View for ReconstructView {
    fn doc(&self) -> Doc {
        let mut d =
            Doc::new(Inline::from("Reconstructed workflows of ").c(self.target.clone())).bare();
        for w in &self.written {
            d.push(Block::Note(w.line.clone().into()));
        }
        for (name, why) in &self.failures {
            d.push(Block::Note(
                Inline::status(Status::Block, "not reconstructed: ")
                    .c(name.clone())
                    .t(format!(" — {why}")),
            ));
        }
        d
    }

    /// One line per script written (failures go to stderr).
    fn terminal(&self, _: &super::doc::Term) -> Option<String> {
        Some(
            self.written
                .iter()
                .map(|w| super::escape::text(&w.line).into_owned() + "\n")
                .collect(),
        )
    }
}
