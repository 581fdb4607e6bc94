use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::report::modules::{LsView, ModuleRow};
use clap::Args;

#[derive(Args)]
pub struct LsArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Show full SHA-256 hashes instead of the first 16 hex digits.
    #[arg(long)]
    pub full_hash: bool,
    /// Only modules whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &LsArgs) -> anyhow::Result<i32> {
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let mut modules = ModuleRow::all(&build.graph);
    if let Some(f) = &a.filter {
        modules.retain(|r| r.name.contains(f.as_str()));
    }
    let view = LsView {
        target: opened.label.clone(),
        entry: build.graph.entry_module().name.to_string(),
        modules,
        full_hash: a.full_hash,
        bytecode_region: build.graph.bytecode_region().map(|r| (r.bytes, r.modules)),
    };
    app.emit(&a.out, &view)
}
