use super::{Global, TargetArg, print_json};
use crate::analysis::roles::Roles;
use crate::report::table::{Align, Table};
use clap::Args;

#[derive(Args)]
pub struct LocateArgs {
    #[command(flatten)]
    pub target: TargetArg,
}

#[derive(serde::Serialize)]
struct LocateView<'a> {
    target: String,
    version: Option<String>,
    #[serde(flatten)]
    roles: &'a Roles,
}

pub fn run(g: &Global, a: &LocateArgs) -> anyhow::Result<i32> {
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?;
    let roles = &super::code::facts(g, &an)?.roles;
    if g.json {
        return print_json(&LocateView {
            target: opened.label.clone(),
            version: build.version().best().map(str::to_string),
            roles,
        })
        .map(|_| 0);
    }
    out!(
        "{}",
        crate::report::doc::wrap_plain(&render(roles), crate::report::doc::terminal_width())
    );
    Ok(0)
}

pub fn render(roles: &Roles) -> String {
    let mut t = Table::new(&[
        ("role", Align::Left),
        ("name", Align::Left),
        ("original", Align::Left),
        ("module", Align::Left),
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
    let mut out = t.render();
    for a in &roles.absent {
        out.push_str(&format!(
            "absent: {} — {}\n",
            a.role.as_str(),
            crate::report::escape::display(&a.reason)
        ));
    }
    out
}
