use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::js::grep::{Scope, search};
use crate::js::symbols;
use crate::report::grep::{GrepView, Shown};
use clap::Args;

#[derive(Args)]
pub struct GrepArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// What to look for: literal text, or a regex with --regex.
    pub pattern: String,
    /// Treat PATTERN as a regular expression.
    #[arg(long, short = 'e')]
    pub regex: bool,
    /// Case-insensitive.
    #[arg(long, short = 'i')]
    pub ignore_case: bool,
    /// Show N pretty-printed lines of context around each hit.
    #[arg(long, short = 'C', value_name = "N", default_value_t = 0)]
    pub context: usize,
    /// Search only string/template literals or only identifiers.
    #[arg(long, value_enum, default_value_t = Scope::All)]
    pub scope: Scope,
    /// Only this module (name or path below the bunfs root).
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
    /// Stop after this many hits.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max: usize,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &GrepArgs) -> anyhow::Result<i32> {
    let pat = if a.regex {
        a.pattern.clone()
    } else {
        regex::escape(&a.pattern)
    };
    let re = match regex::RegexBuilder::new(&pat)
        .case_insensitive(a.ignore_case)
        .build()
    {
        Ok(re) => re,
        Err(e) => usage!("bad pattern: {e}"),
    };
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let only = match &a.module {
        Some(n) => match build.graph.find(n) {
            Some(m) => Some(m.name.to_string()),
            None => usage!("no module named {n:?} (see `cc-teardown ls`)"),
        },
        None => None,
    };
    let ci = app.index(&build)?;
    let syms = symbols::recover(&ci);
    let originals = symbols::original_names(&syms);
    let (hits, truncated) = search(&ci, &re, a.scope, a.max, only.as_deref(), &originals);
    // As grep and rg do: 1 when nothing matches, so scripts can test it.
    let status = if hits.is_empty() { 1 } else { 0 };
    let shown = hits
        .iter()
        .map(|h| {
            let m = ci.module(&h.module).expect("hit module is indexed");
            let center = h.pretty_line as usize;
            let mut context = Vec::new();
            if a.context > 0 {
                let lines: Vec<&str> = m.printed.code.lines().collect();
                let from = center.saturating_sub(a.context).max(1);
                let to = (center + a.context).min(lines.len());
                for n in from..=to {
                    context.push((n, lines[n - 1].chars().take(200).collect()));
                }
            }
            Shown {
                highlight: re.find(&h.excerpt).map_or(0..0, |m| m.range()),
                context,
                center,
            }
        })
        .collect();
    let view = GrepView {
        target: opened.label.clone(),
        pattern: a.pattern.clone(),
        hits,
        truncated,
        max: a.max,
        shown,
    };
    app.emit(&a.out, &view)?;
    Ok(status)
}
