use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::js::symbols;
use crate::report::symbols::SymbolsView;
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

pub fn run(app: &App, a: &SymbolsArgs) -> anyhow::Result<i32> {
    // The pattern first: a bad one is reported before the parse.
    let re = match a.grep.as_deref().map(regex::Regex::new).transpose() {
        Ok(re) => re,
        Err(e) => usage!("bad --grep pattern: {e}"),
    };
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let ci = app.index(&build)?;
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
    let view = SymbolsView {
        target: opened.label.clone(),
        symbols: syms,
        links,
    };
    app.emit(&a.out, &view)?;
    Ok(status)
}
