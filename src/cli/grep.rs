use super::{Global, TargetArg, print_json};
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::LitKind;
use crate::js::symbols;
use crate::report::escape::display as esc;
use clap::{Args, ValueEnum};
use regex::Regex;
use std::collections::HashMap;
use std::io::IsTerminal;

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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    All,
    Strings,
    Identifiers,
}

#[derive(serde::Serialize)]
struct FnRef {
    name: Option<String>,
    original: Option<String>,
    raw_line: u32,
    pretty_line: u32,
}

#[derive(serde::Serialize)]
struct Hit {
    module: String,
    kind: &'static str,
    /// The matched text.
    matched: String,
    /// The literal's value (or the identifier) around the match, shortened.
    excerpt: String,
    raw_line: u32,
    raw_col: u32,
    pretty_line: u32,
    function: Option<FnRef>,
}

#[derive(serde::Serialize)]
struct GrepView {
    target: String,
    pattern: String,
    hits: Vec<Hit>,
    truncated: bool,
}

/// A window of `s` around byte range `m`, on char boundaries.
fn excerpt(s: &str, m: std::ops::Range<usize>, width: usize) -> (String, std::ops::Range<usize>) {
    let mut lo = m.start.saturating_sub(width);
    while !s.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (m.end + width).min(s.len());
    while !s.is_char_boundary(hi) {
        hi += 1;
    }
    let pre = if lo > 0 { "…" } else { "" };
    let post = if hi < s.len() { "…" } else { "" };
    let text = format!("{pre}{}{post}", &s[lo..hi]).replace('\n', "⏎");
    let start = pre.len() + s[lo..m.start].replace('\n', "⏎").len();
    let end = start + s[m.start..m.end].replace('\n', "⏎").len();
    (text, start..end)
}

fn fn_ref(m: &IndexedModule, lo: u32, originals: &HashMap<(&str, &str), &str>) -> Option<FnRef> {
    let id = m.index.enclosing_function(lo)?;
    let f = &m.index.functions[id as usize];
    Some(FnRef {
        original: f
            .name
            .as_deref()
            .and_then(|n| originals.get(&(m.name.as_str(), n)).map(|o| o.to_string())),
        name: f.name.clone(),
        raw_line: m.raw_pos(f.lo).0,
        pretty_line: m.pretty_line(f.lo),
    })
}

pub fn run(g: &Global, a: &GrepArgs) -> anyhow::Result<i32> {
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
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let only = match &a.module {
        Some(n) => match build.graph.find(n) {
            Some(m) => Some(m.name.to_string()),
            None => usage!("no module named {n:?} (see `cc-teardown ls`)"),
        },
        None => None,
    };
    let ci = super::code::index(g, &build)?;
    let syms = symbols::recover(&ci);
    let originals = symbols::original_names(&syms);
    let (hits, truncated) = search(&ci, &re, a, only.as_deref(), &originals);
    // As grep and rg do: 1 when nothing matches, so scripts can test it.
    let status = if hits.is_empty() { 1 } else { 0 };
    if g.json {
        return print_json(&GrepView {
            target: opened.label.clone(),
            pattern: a.pattern.clone(),
            hits,
            truncated,
        })
        .map(|_| status);
    }
    let color = g.color.enabled(std::io::stdout().is_terminal());
    // Every piece of a hit comes from the build: each is escaped before it
    // is coloured, so the only escape sequences printed are the colours.
    let painter = crate::report::doc::Paint(color);
    let paint = |code: &str, s: &str| painter.sgr(code, &esc(s));
    for h in &hits {
        let m = ci.module(&h.module).expect("hit module is indexed");
        let func = h.function.as_ref().map_or_else(
            || "top level".to_string(),
            |f| {
                let name = f.name.clone().unwrap_or_else(|| "(anonymous)".into());
                match &f.original {
                    Some(o) => format!(
                        "in {name} [{o}] (raw {}, pretty {})",
                        f.raw_line, f.pretty_line
                    ),
                    None => format!("in {name} (raw {}, pretty {})", f.raw_line, f.pretty_line),
                }
            },
        );
        println!(
            "{}:{}:{}  pretty {}  {}  {}",
            paint("35", &h.module),
            paint("32", &h.raw_line.to_string()),
            h.raw_col,
            h.pretty_line,
            paint("2", h.kind),
            paint("36", &func)
        );
        let value = &h.excerpt;
        let (text, range) = match re.find(value) {
            Some(mm) => (value.clone(), mm.range()),
            None => (value.clone(), 0..0),
        };
        println!(
            "    {}{}{}",
            esc(&text[..range.start]),
            paint("1;31", &text[range.clone()]),
            esc(&text[range.end..])
        );
        if a.context > 0 {
            let lines: Vec<&str> = m.printed.code.lines().collect();
            let center = h.pretty_line as usize;
            let from = center.saturating_sub(a.context).max(1);
            let to = (center + a.context).min(lines.len());
            for n in from..=to {
                let line = lines[n - 1];
                let shown: String = line.chars().take(200).collect();
                let mark = if n == center { ">" } else { " " };
                // A line of code: its tabs are layout.
                outln!("    {mark}{n:>7}  {shown}");
            }
        }
    }
    let modules: std::collections::BTreeSet<&str> =
        hits.iter().map(|h| h.module.as_str()).collect();
    outln!(
        "{} hit(s) in {} module(s){}",
        hits.len(),
        modules.len(),
        if truncated {
            format!(" (stopped at --max {})", a.max)
        } else {
            String::new()
        }
    );
    Ok(status)
}

fn search(
    ci: &CodeIndex,
    re: &Regex,
    a: &GrepArgs,
    only: Option<&str>,
    originals: &HashMap<(&str, &str), &str>,
) -> (Vec<Hit>, bool) {
    let mut hits = Vec::new();
    for m in ci
        .modules
        .iter()
        .filter(|m| only.is_none_or(|o| m.name == o))
    {
        let mut local = Vec::new();
        if a.scope != Scope::Identifiers {
            for s in &m.index.strings {
                if let Some(mm) = re.find(&s.value) {
                    let (text, _) = excerpt(&s.value, mm.range(), 60);
                    local.push((
                        s.lo,
                        if s.kind == LitKind::Template {
                            "template"
                        } else {
                            "string"
                        },
                        mm.as_str().to_string(),
                        text,
                    ));
                }
            }
        }
        if a.scope != Scope::Strings {
            for (name, defs) in &m.index.definitions {
                let original = originals.get(&(m.name.as_str(), name.as_str()));
                let matched = re.find(name).map(|mm| mm.as_str().to_string()).or_else(|| {
                    original
                        .and_then(|o| re.find(o))
                        .map(|mm| mm.as_str().to_string())
                });
                if let (Some(matched), Some(d)) = (
                    matched,
                    symbols::primary_definition(m, name).or(defs.first()),
                ) {
                    let label = match original {
                        Some(o) => format!("{name} [{o}]"),
                        None => name.clone(),
                    };
                    local.push((d.lo, "identifier", matched, label));
                }
            }
        }
        local.sort_by_key(|h| h.0);
        for (lo, kind, matched, text) in local {
            let (line, col) = m.raw_pos(lo);
            hits.push(Hit {
                module: m.name.clone(),
                kind,
                matched,
                excerpt: text,
                raw_line: line,
                raw_col: col,
                pretty_line: m.pretty_line(lo),
                function: fn_ref(m, lo, originals),
            });
            if hits.len() >= a.max {
                return (hits, true);
            }
        }
    }
    (hits, false)
}
