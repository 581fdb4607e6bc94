use super::AnalysisError;
use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::report::doc::fmt;
use crate::report::emit::print_json;
use crate::report::escape::display as esc;
use crate::report::outdir::{OutDir, OutPlan};
use crate::report::workflows::WorkflowsView;
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

/// Every bundled workflow of `target` (only `only`, when given).
pub(crate) fn load(app: &App, target: &str, only: Option<&str>) -> anyhow::Result<WorkflowsView> {
    let opened = app.open(target)?;
    let build = app.build(&opened)?;
    let an = app.analyse(&build)?.last_use();
    let mut all = app.facts(&an)?.workflows.clone();
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
    Ok(WorkflowsView {
        target: opened.label.clone(),
        version: build.version().best().map(str::to_string),
        workflows: all,
    })
}

pub fn run(app: &App, a: &WorkflowsArgs) -> anyhow::Result<i32> {
    let view = load(app, &a.target.target, a.name.as_deref())?;
    app.emit(&a.out, &view)
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

pub fn reconstruct(app: &App, a: &ReconstructArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let WorkflowsView {
        target: label,
        version,
        workflows: all,
    } = load(app, &a.target.target, a.name.as_deref())?;
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
