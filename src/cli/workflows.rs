use super::AnalysisError;
use super::format::OutputArgs;
use super::outdir::{OutDir, OutPlan};
use super::{Global, TargetArg, print_json};
use crate::analysis::workflows::WorkflowScript;
use crate::report::doc::{Block, Doc, Inline, Section, Status, fmt};
use crate::report::escape::display as esc;
use crate::report::table::{Align, Table, thousands};
use crate::report::teardown;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct WorkflowsArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only this workflow.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Args)]
pub struct ReconstructArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only this workflow (default: all).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Output folder: NAME.js (the exact script) and NAME.meta.json per workflow.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Replace files already in DIR (each is removed first, never written
    /// through). Without it the run refuses them.
    #[arg(long)]
    pub force: bool,
}

#[derive(serde::Serialize)]
struct WorkflowsView {
    target: String,
    version: Option<String>,
    workflows: Vec<WorkflowScript>,
}

/// Every bundled workflow of `target` (only `only`, when given): the
/// target's label, its version and the workflows.
pub(crate) fn load(
    g: &Global,
    target: &str,
    only: Option<&str>,
) -> anyhow::Result<(String, Option<String>, Vec<WorkflowScript>)> {
    let opened = g.open(target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?.last_use();
    let mut all = super::code::facts(g, &an)?.workflows.clone();
    if let Some(n) = only {
        let available: Vec<String> = all.iter().map(|w| w.name.clone()).collect();
        all.retain(|w| w.name == n);
        if all.is_empty() {
            usage!(
                "no bundled workflow named {n:?} in {} (available: {})",
                opened.label,
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            );
        }
    }
    Ok((
        opened.label.clone(),
        build.version().best().map(str::to_string),
        all,
    ))
}

pub fn run(g: &Global, a: &WorkflowsArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    let (label, version, all) = load(g, &a.target.target, a.name.as_deref())?;
    if g.json {
        return a
            .out
            .json(
                g,
                &WorkflowsView {
                    target: label,
                    version,
                    workflows: all,
                },
            )
            .map(|_| 0);
    }
    a.out.text(g, &doc(&label, &all))?;
    Ok(0)
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
    let mut t = Table::new(&[
        ("workflow", Align::Code),
        ("hidden", Align::Left),
        ("phases", Align::Left),
        ("lines", Align::Right),
        ("bytes", Align::Right),
        ("sha256", Align::Code),
        ("syntax", Align::Left),
        ("builder", Align::Code),
    ]);
    for w in all {
        let s = w.script.as_ref();
        t.row(vec![
            w.name.clone(),
            w.hidden.to_string(),
            w.phases
                .iter()
                .map(|p| p.title.as_str())
                .collect::<Vec<_>>()
                .join(" → "),
            s.map_or("-".into(), |s| thousands(s.lines as u64)),
            s.map_or("-".into(), |s| thousands(s.bytes as u64)),
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
    d.push(Block::Table(t.doc()));
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
            let mut t = Table::new(&[
                ("level", Align::Left),
                ("correctness finders", Align::Right),
                ("cleanup finders", Align::Right),
                ("per angle", Align::Right),
                ("initial candidates", Align::Right),
                ("sweep", Align::Right),
                ("report limit", Align::Right),
            ]);
            for l in levels {
                t.row(vec![
                    l.level.clone(),
                    fmt::num(l.correctness_finders),
                    fmt::num(l.cleanup_finders),
                    fmt::num(l.per_angle),
                    fmt::num(l.initial_candidate_limit),
                    l.sweep.map_or("none".into(), fmt::num),
                    fmt::num(l.report_limit),
                ]);
            }
            blocks.push(Block::Table(t.doc()));
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

/// A workflow name used as a file name must stay a plain file name.
fn safe_file_stem(name: &str) -> anyhow::Result<&str> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !ok {
        return Err(
            AnalysisError(format!("workflow name {name:?} is not a safe file name")).into(),
        );
    }
    Ok(name)
}

pub fn reconstruct(g: &Global, a: &ReconstructArgs) -> anyhow::Result<i32> {
    let (label, version, all) = load(g, &a.target.target, a.name.as_deref())?;
    if all.is_empty() {
        return Err(AnalysisError(format!("no bundled workflows in {label}")).into());
    }
    // Every file checked before the first write; nothing already in DIR is
    // written through.
    // Two workflows of one name, or of names equal but for case, are
    // refused here, before anything is written.
    let mut plan = OutPlan::new();
    let mut rels = Vec::with_capacity(all.len());
    for w in &all {
        let stem = safe_file_stem(&w.name)?;
        let who = format!("workflow {}", w.name);
        let meta = plan.add(Path::new(&format!("{stem}.meta.json")), who.clone())?;
        let script = match w.text {
            Some(_) => Some(plan.add(Path::new(&format!("{stem}.js")), who)?),
            None => None,
        };
        rels.push((meta, script));
    }
    let mut dir = OutDir::open(&a.output, &plan, a.force)?;
    let mut failed = 0;
    let mut written = Vec::new();
    for (w, (meta_rel, script_rel)) in all.iter().zip(&rels) {
        let meta = serde_json::json!({ "target": label, "version": version, "workflow": w });
        dir.write(meta_rel, &serde_json::to_vec_pretty(&meta)?)?;
        let meta_path = a.output.join(meta_rel);
        match (&w.text, script_rel) {
            (Some(text), Some(rel)) => {
                dir.write(rel, text.as_bytes())?;
                let p = a.output.join(rel);
                written.push(serde_json::json!({"name": w.name, "script": p.display().to_string(), "meta": meta_path.display().to_string(), "sha256": w.script.as_ref().map(|s| s.sha256.clone())}));
                if !g.json {
                    let s = w.script.as_ref().expect("facts for a text");
                    outln!(
                        "{}: {} ({}, {}, sha256 {}, syntax {})",
                        esc(&w.name),
                        esc(&p.display().to_string()),
                        fmt::bytes(s.bytes as u64),
                        fmt::count(s.lines, "line", "lines"),
                        &s.sha256[..16],
                        if s.syntax_ok { "ok" } else { "ERROR" }
                    );
                }
            }
            _ => {
                failed += 1;
                if !g.json {
                    errln!(
                        "{}: not reconstructed: {}",
                        esc(&w.name),
                        esc(&w
                            .script_error
                            .as_ref()
                            .map_or("no script argument".into(), |e| e.to_string()))
                    );
                }
            }
        }
    }
    if g.json {
        print_json(&serde_json::json!({"target": label, "written": written, "failed": failed}))?;
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
