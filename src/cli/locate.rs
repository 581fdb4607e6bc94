use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::report::locate::LocateView;
use clap::Args;

#[derive(Args)]
pub struct LocateArgs {
    #[command(flatten)]
    pub target: TargetArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &LocateArgs) -> anyhow::Result<i32> {
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let an = app.analyse(&build)?.last_use();
    let view = LocateView {
        target: opened.label.clone(),
        version: build.version().best().map(str::to_string),
        roles: &app.core(&an)?.roles,
    };
    app.emit(&a.out, &view)
}
