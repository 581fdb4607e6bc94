//! `pretty`: the printed code of a build — on stdout, into a file with its
//! line map, or a module tree below a folder — and the place of a line.

use super::doc::{Block, Doc, Inline, Term, facts, fmt};
use super::emit::View;
use super::escape::display as esc;
use super::outdir::{OutDir, OutPlan};
use crate::bun::BunGraph;
use crate::js::code::{CodeIndex, IndexedModule};
use anyhow::Context;
use std::path::{Path, PathBuf};

#[derive(serde::Serialize)]
pub struct AtView {
    pub module: String,
    pub raw_line: u32,
    pub raw_col: u32,
    pub pretty_line: u32,
}

/// `pretty --json` without -o: the code itself, as data.
#[derive(serde::Serialize)]
pub struct CodeView<'a> {
    pub target: &'a str,
    pub module: &'a str,
    pub raw_lines: u32,
    pub pretty_lines: u32,
    pub code: &'a str,
    pub line_map: crate::js::lines::LineMapFile,
}

#[derive(serde::Serialize)]
pub struct WrittenView {
    pub output: String,
    pub modules: Vec<WrittenModule>,
    pub skipped: Vec<SkippedModule>,
    pub timings: crate::js::code::Timings,
}

#[derive(serde::Serialize)]
pub struct WrittenModule {
    pub module: String,
    pub file: String,
    pub linemap: String,
    pub raw_lines: u32,
    pub pretty_lines: u32,
}

#[derive(serde::Serialize)]
pub struct SkippedModule {
    pub module: String,
    pub reason: &'static str,
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

/// Write the printed modules of `ci` to `out`: one file (with its line map
/// beside it), or, with `folder`, each module below the folder `out` where
/// its path says, every path checked before the first write (module names
/// come from the build: nothing already there is written through).
pub fn write(
    graph: &BunGraph,
    ci: &CodeIndex,
    out: &Path,
    folder: bool,
    force: bool,
) -> anyhow::Result<WrittenView> {
    let mut written = Vec::new();
    if folder {
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
        let mut dir = OutDir::open(out, &plan, force)?;
        for (m, (rel, map)) in ci.modules.iter().zip(&rels) {
            written.push(write_module_below(&mut dir, out, m, rel, map)?);
        }
    } else if let Some(m) = ci.modules.first() {
        written.push(write_module(m, out)?);
    }
    Ok(WrittenView {
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
    })
}

impl View for AtView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("Place in ").c(self.module.clone())).bare();
        d.push(facts(vec![
            ("raw", format!("{}:{}", self.raw_line, self.raw_col).into()),
            ("pretty", self.pretty_line.to_string().into()),
        ]));
        d
    }

    fn terminal(&self, _: &Term) -> Option<String> {
        Some(
            super::escape::text(&format!(
                "{}  raw {}:{}  pretty {}\n",
                esc(&self.module),
                self.raw_line,
                self.raw_col,
                self.pretty_line
            ))
            .into_owned(),
        )
    }
}

impl View for CodeView<'_> {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(
            Inline::from("Printed ")
                .c(self.module)
                .t(" of ")
                .c(self.target),
        );
        d.push(Block::Code {
            lang: "js",
            caption: None,
            text: self.code.to_string(),
            max_lines: None,
        });
        d
    }

    /// Code is the output asked for, printed as it is (like `cat`).
    fn terminal(&self, _: &Term) -> Option<String> {
        Some(self.code.to_string())
    }
}

impl WrittenView {
    fn lines(&self) -> Vec<String> {
        let mut o = Vec::new();
        if self.modules.len() <= 10 {
            for w in &self.modules {
                o.push(format!(
                    "{}: {} raw lines → {} pretty lines in {} (line map {})",
                    esc(&w.module),
                    w.raw_lines,
                    w.pretty_lines,
                    esc(&w.file),
                    esc(&w.linemap)
                ));
            }
        } else {
            o.push(format!(
                "{} JavaScript modules printed into {}",
                self.modules.len(),
                esc(&self.output)
            ));
        }
        if !self.skipped.is_empty() {
            o.push(format!(
                "skipped {} that are not JavaScript source:",
                fmt::count(self.skipped.len(), "module", "modules")
            ));
            for s in self.skipped.iter().take(20) {
                o.push(format!("  {}  ({})", esc(&s.module), s.reason));
            }
            if self.skipped.len() > 20 {
                o.push(format!(
                    "  … and {} more (--json lists all)",
                    self.skipped.len() - 20
                ));
            }
        }
        o
    }
}

impl View for WrittenView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("Printed into ").c(self.output.clone())).bare();
        for l in self.lines() {
            d.push(Block::Note(l.into()));
        }
        d
    }

    fn terminal(&self, _: &Term) -> Option<String> {
        Some(
            self.lines()
                .iter()
                .map(|l| super::escape::text(l).into_owned() + "\n")
                .collect(),
        )
    }
}
