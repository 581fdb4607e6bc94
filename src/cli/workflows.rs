use super::format::{Format, FormatArg, OutputArgs};
use super::{App, TargetArg};
use crate::report::escape::display as esc;
use crate::report::workflows::WorkflowsView;
use clap::Args;
use std::path::PathBuf;

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
    #[command(flatten)]
    pub format: FormatArg,
}

/// Every bundled workflow of `target` (only `only`, when given).
pub(crate) fn load(app: &App, target: &str, only: Option<&str>) -> anyhow::Result<WorkflowsView> {
    let opened = app.open(target)?;
    let build = app.build(&opened)?;
    let an = app.analyse(&build)?.last_use();
    let mut all = app.core(&an)?.workflows.clone();
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

pub fn reconstruct(app: &App, a: &ReconstructArgs) -> anyhow::Result<i32> {
    let out = app.output(&a.format.output(), Format::Text);
    let found = load(app, &a.target.target, a.name.as_deref())?;
    let view = crate::report::workflows::reconstruct(&found, &a.output, a.force)?;
    for (name, why) in &view.failures {
        errln!("{}: not reconstructed: {}", esc(name), esc(why));
    }
    out.emit(&view)?;
    Ok(if view.failed > 0 { 1 } else { 0 })
}
