use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::js::symbols::{self, Link, Symbol};
use crate::report::doc::{Block, Doc, Inline, fmt};
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
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(serde::Serialize)]
struct SymbolsView {
    target: String,
    symbols: Vec<Symbol>,
    links: Vec<Link>,
}

pub fn run(g: &Global, a: &SymbolsArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    // The pattern first: a bad one is reported before the parse.
    let re = match a.grep.as_deref().map(regex::Regex::new).transpose() {
        Ok(re) => re,
        Err(e) => usage!("bad --grep pattern: {e}"),
    };
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let ci = super::code::index(g, &build)?;
    let mut syms = symbols::recover(&ci);
    if let Some(re) = &re {
        syms.retain(|s| re.is_match(&s.original) || re.is_match(&s.minified));
    }
    let mut links = Vec::new();
    if a.links || a.module.is_some() {
        let modules: Vec<String> = match &a.module {
            Some(m) => {
                let Some(module) = build.graph.find(m) else {
                    usage!("no module named {m:?} (see `cc-teardown ls`)");
                };
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
    // As grep and rg do: 1 when nothing is listed, so scripts can test it.
    let status = if syms.is_empty() && links.is_empty() {
        1
    } else {
        0
    };
    if g.json {
        return a
            .out
            .json(
                g,
                &SymbolsView {
                    target: opened.label.clone(),
                    symbols: syms,
                    links,
                },
            )
            .map(|_| status);
    }
    a.out.text(g, &doc(&opened.label, &syms, &links))?;
    Ok(status)
}

/// The recovered names, then the resolved imports when asked for.
fn doc(label: &str, syms: &[Symbol], links: &[Link]) -> Doc {
    let mut d = Doc::new(Inline::from("Original names in ").c(label)).bare();
    let mut t = Table::new(&[
        ("minified", Align::Code),
        ("original", Align::Code),
        ("module", Align::Code),
        ("line", Align::Right),
        ("pretty", Align::Right),
    ]);
    for s in syms {
        t.row(vec![
            s.minified.clone(),
            s.original.clone(),
            s.module.clone(),
            s.line.to_string(),
            s.pretty_line.to_string(),
        ]);
    }
    d.push(Block::Table(t.doc()));
    d.push(Block::Note(
        fmt::count(syms.len(), "symbol", "symbols").into(),
    ));
    if !links.is_empty() {
        let mut t = Table::new(&[
            ("module", Align::Code),
            ("line", Align::Right),
            ("imports", Align::Code),
            ("from", Align::Code),
            ("defined as", Align::Code),
            ("at line", Align::Right),
        ]);
        for l in links {
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
        let resolved = links.iter().filter(|l| l.definition_line.is_some()).count();
        d.section(
            "imports",
            "Cross-chunk imports",
            vec![
                Block::Table(t.doc()),
                Block::Note(
                    format!(
                        "{}, {} resolved to their definition",
                        fmt::count(links.len(), "import", "imports"),
                        fmt::n(resolved)
                    )
                    .into(),
                ),
            ],
        );
    }
    d
}
