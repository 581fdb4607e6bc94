use super::{Global, TargetArg, print_json};
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
}

pub fn run(g: &Global, a: &InfoArgs) -> anyhow::Result<i32> {
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let mut view = InfoView::from_build(&build);
    if !a.no_signature {
        view = view.with_signature(&build);
    }
    if g.json {
        print_json(&view)?;
    } else {
        out!("{}", view.render());
    }
    Ok(0)
}
