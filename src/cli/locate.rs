use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::analysis::roles::Roles;
use crate::report::doc::{Block, Doc, Inline, Status};
use crate::report::table::{Align, Table};
use clap::Args;

#[derive(Args)]
pub struct LocateArgs {
    #[command(flatten)]
    pub target: TargetArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(serde::Serialize)]
struct LocateView<'a> {
    target: String,
    version: Option<String>,
    #[serde(flatten)]
    roles: &'a Roles,
}

pub fn run(g: &Global, a: &LocateArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?.last_use();
    let roles = &super::code::facts(g, &an)?.roles;
    if g.json {
        return a
            .out
            .json(
                g,
                &LocateView {
                    target: opened.label.clone(),
                    version: build.version().best().map(str::to_string),
                    roles,
                },
            )
            .map(|_| 0);
    }
    a.out.text(g, &doc(&opened.label, roles))?;
    Ok(0)
}

/// The located functions, one row each, then the roles not found and why.
pub fn doc(label: &str, roles: &Roles) -> Doc {
    let mut t = Table::new(&[
        ("role", Align::Left),
        ("name", Align::Code),
        ("original", Align::Code),
        ("module", Align::Code),
        ("raw lines", Align::Right),
        ("pretty lines", Align::Right),
        ("confidence", Align::Left),
        ("evidence", Align::Left),
    ]);
    for f in &roles.functions {
        let role = match &f.workflow {
            Some(w) => format!("{} ({w})", f.role.as_str()),
            None => f.role.as_str().to_string(),
        };
        t.row(vec![
            role,
            f.name.clone().unwrap_or_else(|| "(anonymous)".into()),
            f.original.clone().unwrap_or_else(|| "-".into()),
            f.module.rsplit('/').next().unwrap_or(&f.module).to_string(),
            format!("{}–{}", f.raw_start, f.raw_end),
            format!("{}–{}", f.pretty_start, f.pretty_end),
            f.confidence.to_string(),
            f.evidence.join("; "),
        ]);
    }
    let mut d = Doc::new(Inline::from("Located functions in ").c(label)).bare();
    d.push(Block::Table(t.doc()));
    for a in &roles.absent {
        d.push(Block::Note(
            Inline::status(Status::Unknown, "absent: ")
                .c(a.role.as_str())
                .t(" — ")
                .t(a.reason.clone()),
        ));
    }
    d
}
