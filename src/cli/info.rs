use super::format::OutputArgs;
use super::{Global, TargetArg};
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

pub fn run(g: &Global, a: &InfoArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let mut view = InfoView::from_build(&build);
    if !a.no_signature {
        view = view.with_signature(&build);
    }
    if g.json {
        a.out.json(g, &view)?;
    } else {
        a.out.text(g, &view.doc())?;
    }
    Ok(0)
}
