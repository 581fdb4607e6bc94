use super::App;
use crate::report::local::InstallsView;
use crate::source::installs::{self, Scope};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct InstallsArgs {
    /// Inspect another file-system tree: HOME, PATH and CLAUDE_CONFIG_DIR are taken inside it.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub out: super::format::OutputArgs,
}

pub fn run(app: &App, a: &InstallsArgs) -> anyhow::Result<i32> {
    if let Some(root) = a.root.as_deref().filter(|r| !r.is_dir()) {
        usage!("--root {}: not a directory", root.display());
    }
    let report = installs::scan(&Scope::from_env(a.root.clone())?);
    app.emit(&a.out, &InstallsView(report))
}
