use super::format::{Format, FormatArg};
use super::{App, TargetArg};
use crate::report::extract::{ExtractOptions, extract};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Output folder (created if missing). Nothing is ever written outside it,
    /// and nothing already in it is written through.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Keep the stored bytes (no zstd decompression, no UTF-16 conversion).
    #[arg(long)]
    pub raw: bool,
    /// Also write each module's bytecode blob as NAME.jsc.
    #[arg(long)]
    pub bytecode: bool,
    /// Replace files already at the paths this run writes (each is removed
    /// first, never written through). Without it the run refuses them.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub format: FormatArg,
}

/// Where a module's bytecode goes: its file name with `.jsc` appended.
pub fn run(app: &App, a: &ExtractArgs) -> anyhow::Result<i32> {
    let out = app.output(&a.format.output(), Format::Text);
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let manifest = extract(
        &build,
        app.g.budget(),
        &ExtractOptions {
            folder: a.output.clone(),
            raw: a.raw,
            bytecode: a.bytecode,
            force: a.force,
            progress: app.progress(),
        },
    )?;
    out.emit(&manifest)?;
    Ok(0)
}
