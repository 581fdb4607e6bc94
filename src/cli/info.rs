use super::{Global, TargetArg, print_json};
use crate::report::info::InfoView;
use clap::Args;

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub target: TargetArg,
}

pub fn run(g: &Global, a: &InfoArgs) -> anyhow::Result<i32> {
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let view = InfoView::from_build(&build).with_signature(&build);
    if g.json {
        print_json(&view)?;
    } else {
        out!("{}", view.render());
    }
    Ok(0)
}
