use super::{Global, TargetArg, print_json};
use crate::js::symbols::{self, Link, Symbol};
use crate::report::table::{Align, Table};
use clap::Args;

#[derive(Args)]
pub struct SymbolsArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only symbols whose original or minified name matches this regex.
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,
    /// Also resolve cross-chunk imports: of the modules the shown symbols live in, or of --module.
    #[arg(long)]
    pub links: bool,
    /// With --links: the module whose imports to resolve.
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
}

#[derive(serde::Serialize)]
struct SymbolsView {
    target: String,
    symbols: Vec<Symbol>,
    links: Vec<Link>,
}

pub fn run(g: &Global, a: &SymbolsArgs) -> anyhow::Result<i32> {
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let ci = super::code::index(g, &build)?;
    let re = a
        .grep
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| anyhow::anyhow!("bad --grep pattern: {e}"))?;
    let mut syms = symbols::recover(&ci);
    if let Some(re) = &re {
        syms.retain(|s| re.is_match(&s.original) || re.is_match(&s.minified));
    }
    let mut links = Vec::new();
    if a.links || a.module.is_some() {
        let modules: Vec<String> = match &a.module {
            Some(m) => {
                let module = build.graph.find(m).ok_or_else(|| {
                    anyhow::anyhow!("no module named {m:?} (see `cc-teardown ls`)")
                })?;
                vec![module.name.to_string()]
            }
            None => {
                let mut v: Vec<String> = syms.iter().map(|s| s.module.clone()).collect();
                v.sort();
                v.dedup();
                v
            }
        };
        for m in &modules {
            links.extend(symbols::link(&ci, Some(m)));
        }
    }
    if g.json {
        return print_json(&SymbolsView {
            target: opened.label.clone(),
            symbols: syms,
            links,
        })
        .map(|_| 0);
    }
    let mut t = Table::new(&[
        ("minified", Align::Left),
        ("original", Align::Left),
        ("module", Align::Left),
        ("line", Align::Right),
        ("pretty", Align::Right),
    ]);
    for s in &syms {
        t.row(vec![
            s.minified.clone(),
            s.original.clone(),
            s.module.clone(),
            s.line.to_string(),
            s.pretty_line.to_string(),
        ]);
    }
    print!("{}", t.render());
    println!("{} symbols", syms.len());
    if !links.is_empty() {
        println!();
        let mut t = Table::new(&[
            ("module", Align::Left),
            ("line", Align::Right),
            ("imports", Align::Left),
            ("from", Align::Left),
            ("defined as", Align::Left),
            ("at line", Align::Right),
        ]);
        for l in &links {
            t.row(vec![
                l.module.clone(),
                l.line.to_string(),
                if l.local.is_empty() || l.local == l.imported {
                    l.imported.clone()
                } else {
                    format!("{} as {}", l.imported, l.local)
                },
                l.from.clone(),
                l.resolved.clone().unwrap_or_else(|| "(unresolved)".into()),
                l.definition_line
                    .map_or_else(|| "-".into(), |n| n.to_string()),
            ]);
        }
        print!("{}", t.render());
        let resolved = links.iter().filter(|l| l.definition_line.is_some()).count();
        println!(
            "{} imports, {resolved} resolved to their definition",
            links.len()
        );
    }
    Ok(0)
}
