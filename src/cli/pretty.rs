use super::outdir::{OutDir, OutPlan};
use super::{Global, TargetArg, print_json};
use crate::js::code::{CodeIndex, Depth, IndexedModule};
use crate::report::escape::display as esc;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

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
}

#[derive(serde::Serialize)]
struct AtView {
    module: String,
    raw_line: u32,
    raw_col: u32,
    pretty_line: u32,
}

/// `pretty --json` without -o: the code itself, as data.
#[derive(serde::Serialize)]
struct CodeView<'a> {
    target: &'a str,
    module: &'a str,
    raw_lines: u32,
    pretty_lines: u32,
    code: &'a str,
    line_map: crate::js::lines::LineMapFile,
}

#[derive(serde::Serialize)]
struct WrittenView {
    output: String,
    modules: Vec<WrittenModule>,
    skipped: Vec<SkippedModule>,
    timings: crate::js::code::Timings,
}

#[derive(serde::Serialize)]
struct WrittenModule {
    module: String,
    file: String,
    linemap: String,
    raw_lines: u32,
    pretty_lines: u32,
}

#[derive(serde::Serialize)]
struct SkippedModule {
    module: String,
    reason: &'static str,
}

fn parse_at(s: &str) -> anyhow::Result<(u32, u32)> {
    let (l, c) = s.split_once(':').unwrap_or((s, "1"));
    match (l.parse(), c.parse()) {
        (Ok(l), Ok(c)) => Ok((l, c)),
        (Err(e), _) => usage!("bad line in --at {s:?}: {e}"),
        (_, Err(e)) => usage!("bad column in --at {s:?}: {e}"),
    }
}

/// The line map's file beside a module's pretty file.
fn linemap_path(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".linemap.json");
    PathBuf::from(p)
}

/// Write one module to the file the user named (replaced if it is a file;
/// never written through a link, nor into a FIFO or device).
fn write_module(m: &IndexedModule, out: &Path) -> anyhow::Result<WrittenModule> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    super::outdir::write_file(out, m.printed.code.as_bytes())?;
    let map_path = linemap_path(out);
    super::outdir::write_file(
        &map_path,
        &serde_json::to_vec(&m.printed.map.to_file(&m.name))?,
    )?;
    Ok(written(m, out, &map_path))
}

/// Write one module below an output folder whose names come from the
/// build: created new, never through anything already there.
fn write_module_below(
    dir: &mut OutDir,
    root: &Path,
    m: &IndexedModule,
    rel: &Path,
    map_rel: &Path,
) -> anyhow::Result<WrittenModule> {
    dir.write(rel, m.printed.code.as_bytes())?;
    dir.write(
        map_rel,
        &serde_json::to_vec(&m.printed.map.to_file(&m.name))?,
    )?;
    Ok(written(m, &root.join(rel), &root.join(map_rel)))
}

fn written(m: &IndexedModule, out: &Path, map_path: &Path) -> WrittenModule {
    WrittenModule {
        module: m.name.clone(),
        file: out.display().to_string(),
        linemap: map_path.display().to_string(),
        raw_lines: m.printed.map.raw.lines() as u32,
        pretty_lines: m.printed.map.pretty_lines,
    }
}

pub fn run(g: &Global, a: &PrettyArgs) -> anyhow::Result<i32> {
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
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
        if g.json {
            print_json(&view)?;
        } else {
            outln!(
                "{}  raw {}:{}  pretty {}",
                esc(&view.module),
                view.raw_line,
                view.raw_col,
                view.pretty_line
            );
        }
        return Ok(0);
    }

    let Some(out) = &a.output else {
        let m = ci.modules.first().ok_or_else(not_js)?;
        if g.json {
            return print_json(&CodeView {
                target: &opened.label,
                module: &m.name,
                raw_lines: m.printed.map.raw.lines() as u32,
                pretty_lines: m.printed.map.pretty_lines,
                code: &m.printed.code,
                line_map: m.printed.map.to_file(&m.name),
            })
            .map(|_| 0);
        }
        // Code is the output asked for, printed as it is (like `cat`).
        std::io::stdout()
            .lock()
            .write_all(m.printed.code.as_bytes())?;
        return Ok(0);
    };
    let mut written = Vec::new();
    if folder {
        // Every path checked before the first write (module names come
        // from the build: nothing already there is written through).
        let mut plan = OutPlan::new();
        let mut rels = Vec::with_capacity(ci.modules.len());
        for m in &ci.modules {
            let rel = graph.modules[m.graph_index].relative_path()?;
            let rel = plan.add(&rel, format!("module {}", m.name))?;
            let map = plan.add(
                &linemap_path(&rel),
                format!("the line map of module {}", m.name),
            )?;
            rels.push((rel, map));
        }
        let mut dir = OutDir::open(out, &plan, a.force)?;
        for (m, (rel, map)) in ci.modules.iter().zip(&rels) {
            written.push(write_module_below(&mut dir, out, m, rel, map)?);
        }
    } else {
        let m = ci.modules.first().ok_or_else(not_js)?;
        written.push(write_module(m, out)?);
    }
    let view = WrittenView {
        output: out.display().to_string(),
        skipped: if folder {
            ci.skipped
                .iter()
                .map(|(m, r)| SkippedModule {
                    module: m.clone(),
                    reason: r,
                })
                .collect()
        } else {
            Vec::new()
        },
        modules: written,
        timings: ci.timings.clone(),
    };
    if g.json {
        return print_json(&view).map(|_| 0);
    }
    for w in &view.modules {
        if view.modules.len() <= 10 {
            outln!(
                "{}: {} raw lines → {} pretty lines in {} (line map {})",
                esc(&w.module),
                w.raw_lines,
                w.pretty_lines,
                esc(&w.file),
                esc(&w.linemap)
            );
        }
    }
    if view.modules.len() > 10 {
        outln!(
            "{} JavaScript modules printed into {}",
            view.modules.len(),
            esc(&view.output)
        );
    }
    if !view.skipped.is_empty() {
        outln!(
            "skipped {} that are not JavaScript source:",
            crate::report::doc::fmt::count(view.skipped.len(), "module", "modules")
        );
        for s in view.skipped.iter().take(20) {
            outln!("  {}  ({})", esc(&s.module), s.reason);
        }
        if view.skipped.len() > 20 {
            outln!(
                "  … and {} more (--json lists all)",
                view.skipped.len() - 20
            );
        }
    }
    Ok(0)
}
