use super::format::{Format, OutputArgs};
use super::{App, TargetArg};
use crate::analysis::surface::{Kind, Surface};
use crate::report::surface::{self, SurfaceView};
use clap::Args;

#[derive(Args)]
pub struct SurfaceArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only these kinds (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "KINDS")]
    pub only: Vec<Kind>,
    /// Also write every prompt below DIR: one Markdown file each, and an
    /// index.json (version, id, title, kind, bytes, sha256 of each file).
    /// Nothing is written outside DIR or through anything already in it.
    #[arg(long, value_name = "DIR")]
    pub export: Option<std::path::PathBuf>,
    /// With --export: replace files already at the paths written (each is
    /// removed first, never written through).
    #[arg(long, requires = "export")]
    pub force: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &SurfaceArgs) -> anyhow::Result<i32> {
    let kinds: Vec<Kind> = if a.only.is_empty() {
        Kind::ALL.to_vec()
    } else {
        a.only.clone()
    };
    let on = |k: Kind| kinds.contains(&k);
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let an = app.analyse(&build)?.last_use();
    // Only JSON and --export show the prompts' texts: the other views read
    // the stored surface without them (more than half of what it holds).
    let texts = a.export.is_some()
        || (on(Kind::Prompts) && app.format(&a.out, Format::Text) == Format::Json);
    let s: &Surface = if texts {
        app.surface(&an)?
    } else {
        app.outline(&an)?
    };
    if let Some(dir) = &a.export {
        surface::export(dir, a.force, build.version().best(), &s.prompts)?;
        errln!(
            "wrote {} prompts and index.json to {}",
            s.prompts.len(),
            dir.display()
        );
    }
    let view = SurfaceView {
        target: opened.label.clone(),
        version: build.version().best().map(str::to_string),
        tools: on(Kind::Tools).then_some(&s.tools),
        prompts: on(Kind::Prompts).then_some(&s.prompts),
        env: on(Kind::Env).then_some(&s.env),
        settings: on(Kind::Settings).then_some(&s.settings),
        commands: on(Kind::Commands).then_some(&s.commands),
        models: on(Kind::Models).then_some(&s.models),
        schemas: on(Kind::Schemas).then_some(&s.schemas),
        kinds,
        surface: s,
    };
    app.emit(&a.out, &view)
}
