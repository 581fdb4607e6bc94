use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::report::info::InfoView;
use clap::Args;

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Skip the code-signature check. The check hashes every signed page,
    /// so it reads the whole file; without it `info` reads only headers.
    #[arg(long)]
    pub no_signature: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &InfoArgs) -> anyhow::Result<i32> {
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let mut view = InfoView::from_build(&build);
    if !a.no_signature {
        view = view.with_signature(&build);
    }
    app.emit(&a.out, &view)
}
