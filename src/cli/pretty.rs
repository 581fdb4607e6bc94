use super::format::{Format, FormatArg};
use super::{App, TargetArg};
use crate::js::code::{CodeIndex, Depth};
use crate::report::pretty::{self, AtView, CodeView};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct PrettyArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Write here: a file for one module, a folder for a code-split build
    /// (one file per JS module). Without -o the code goes to stdout (with
    /// --json: one JSON object holding the code and its line map).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The module to print (name or path below the bunfs root; default: the entry).
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
    /// Print every JavaScript module into the OUT folder, even for a single-bundle build.
    #[arg(long)]
    pub all: bool,
    /// Translate a raw line[:column] of the extracted module to its pretty line.
    #[arg(long, value_name = "LINE[:COL]", conflicts_with = "at_pretty")]
    pub at: Option<String>,
    /// Translate a pretty line to the raw line:column it comes from.
    #[arg(long, value_name = "LINE")]
    pub at_pretty: Option<u32>,
    /// Replace files already in the OUT folder (each is removed first, never
    /// written through). Without it the run refuses them.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub format: FormatArg,
}

fn parse_at(s: &str) -> anyhow::Result<(u32, u32)> {
    let (l, c) = s.split_once(':').unwrap_or((s, "1"));
    match (l.parse(), c.parse()) {
        (Ok(l), Ok(c)) => Ok((l, c)),
        (Err(e), _) => usage!("bad line in --at {s:?}: {e}"),
        (_, Err(e)) => usage!("bad column in --at {s:?}: {e}"),
    }
}

pub fn run(app: &App, a: &PrettyArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let emit = app.output(&a.format.output(), Format::Text);
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let graph = &build.graph;
    let chosen = match &a.module {
        Some(n) => match graph.find(n) {
            Some(m) => m,
            None => usage!("no module named {n:?} (see `cc-teardown ls`)"),
        },
        None => graph.entry_module(),
    };
    let not_js = || -> anyhow::Error {
        super::UsageError(format!("{} is not JavaScript", chosen.name)).into()
    };
    let folder_wanted = a.output.is_some() && a.module.is_none() && a.all;
    if !folder_wanted && !chosen.is_javascript() {
        // Said before the parse, which would find nothing to print.
        return Err(not_js());
    }
    let code_split = graph.is_code_split();
    let folder = a.output.is_some()
        && a.module.is_none()
        && (a.all || code_split)
        && a.at.is_none()
        && a.at_pretty.is_none();
    let chosen_index = chosen.index;
    let ci = crate::js::parse::with_big_stack(|| {
        // Printing needs no index: skip it (and its memory).
        if folder {
            CodeIndex::build_filtered(graph, g.budget(), |_| true, Depth::Print)
        } else {
            CodeIndex::build_filtered(graph, g.budget(), |m| m.index == chosen_index, Depth::Print)
        }
    })?;

    if a.at.is_some() || a.at_pretty.is_some() {
        let m = ci.modules.first().ok_or_else(not_js)?;
        let map = &m.printed.map;
        let view = if let Some(at) = &a.at {
            let (line, col) = parse_at(at)?;
            if line as usize > map.raw.lines() {
                usage!(
                    "raw line {line} is past the end ({})",
                    crate::report::doc::fmt::count(map.raw.lines(), "line", "lines")
                );
            }
            let pretty = map.raw_to_pretty(line, col).unwrap_or(1);
            AtView {
                module: m.name.clone(),
                raw_line: line,
                raw_col: col,
                pretty_line: pretty,
            }
        } else {
            let p = a.at_pretty.unwrap_or(1);
            if p == 0 || p > map.pretty_lines {
                usage!("pretty line {p} is out of range (1–{})", map.pretty_lines);
            }
            let (line, col) = map.pretty_to_raw(p).unwrap_or((map.raw.lines() as u32, 1));
            AtView {
                module: m.name.clone(),
                raw_line: line,
                raw_col: col,
                pretty_line: p,
            }
        };
        emit.emit(&view)?;
        return Ok(0);
    }

    let Some(out) = &a.output else {
        let m = ci.modules.first().ok_or_else(not_js)?;
        emit.emit(&CodeView {
            target: &opened.label,
            module: &m.name,
            raw_lines: m.printed.map.raw.lines() as u32,
            pretty_lines: m.printed.map.pretty_lines,
            code: &m.printed.code,
            line_map: m.printed.map.to_file(&m.name),
        })?;
        return Ok(0);
    };
    if !folder && ci.modules.is_empty() {
        return Err(not_js());
    }
    emit.emit(&pretty::write(graph, &ci, out, folder, a.force)?)?;
    Ok(0)
}
