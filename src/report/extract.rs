//! `extract`: every module of a build written below a folder (decoded, or
//! as stored), with a manifest of what was written.

use super::doc::{Block, Doc, Inline, fmt};
use super::emit::View;
use super::modules::ModuleRow;
use super::outdir::{OutDir, OutPlan};
use crate::bun::digest::sha256_hex;
use crate::source::build::Build;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// What to write and where.
pub struct ExtractOptions {
    pub folder: PathBuf,
    /// The stored bytes rather than the decoded ones.
    pub raw: bool,
    /// Each module's bytecode beside it (`NAME.jsc`).
    pub bytecode: bool,
    /// Replace what is in the way (removed first, never written through).
    pub force: bool,
    /// A progress bar on stderr.
    pub progress: bool,
}

fn sidecar(rel: &Path) -> PathBuf {
    let mut name = rel.as_os_str().to_os_string();
    name.push(".jsc");
    PathBuf::from(name)
}

#[derive(serde::Serialize)]
pub struct ManifestModule {
    #[serde(flatten)]
    pub row: ModuleRow,
    /// Path of the written file, relative to the output folder.
    pub file: String,
    /// SHA-256 and length of the decoded bytes (what `file` holds unless --raw).
    pub decoded_bytes: u64,
    pub decoded_sha256: String,
    pub bytecode_file: Option<String>,
}

#[derive(serde::Serialize)]
pub struct Manifest {
    pub tool: String,
    pub target: String,
    pub version: Option<String>,
    pub container: crate::container::ContainerInfo,
    pub layout: crate::report::info::LayoutFacts,
    pub entry: String,
    pub raw: bool,
    pub modules: Vec<ManifestModule>,
    /// The folder written (not in manifest.json, whose place it is).
    #[serde(skip)]
    pub folder: String,
}

fn owner(m: &crate::bun::Module, sidecar: bool) -> String {
    if sidecar {
        format!("the bytecode of module {}", m.name)
    } else {
        format!("module {}", m.name)
    }
}

/// Write every module of `build` below `opts.folder`, and manifest.json.
pub fn extract(
    build: &Build,
    budget: &crate::bun::Budget,
    opts: &ExtractOptions,
) -> anyhow::Result<Manifest> {
    let graph = &build.graph;
    // Everything is checked before anything is written: names and
    // collisions between the files of this run (the plan: one path twice,
    // equal but for case, a file where another needs a folder), decoding,
    // then what the folder holds.
    let mut plan = OutPlan::new();
    let manifest_rel = plan.add(Path::new("manifest.json"), "manifest.json")?;
    let mut rels = Vec::with_capacity(graph.modules.len());
    for m in &graph.modules {
        let rel = plan.add(&m.relative_path()?, owner(m, false))?;
        let bc = if opts.bytecode && !m.bytecode.is_empty() {
            Some(plan.add(&sidecar(&rel), owner(m, true))?)
        } else {
            None
        };
        rels.push((rel, bc));
    }

    // Decoding and hashing run on every core; files are created one at a
    // time, because parallel creates in one folder only contend for its lock
    // (measured: 3–10x slower on ext4).

    let decoded: Vec<(crate::bun::Decoded, String)> = graph
        .modules
        .par_iter()
        .map(|m| {
            let d = graph.decoded(m, budget)?;
            let sha = sha256_hex(&d);
            Ok((d, sha))
        })
        .collect::<Result<_, crate::bun::GraphError>>()?;

    let root = &opts.folder;
    let mut out = OutDir::open(root, &plan, opts.force)?;

    let bar =
        (opts.progress && rels.len() > 50).then(|| indicatif::ProgressBar::new(rels.len() as u64));
    let mut written = Vec::with_capacity(rels.len());
    for ((m, (rel, bc)), (bytes, decoded_sha256)) in graph.modules.iter().zip(&rels).zip(&decoded) {
        out.write(rel, if opts.raw { m.contents } else { bytes })?;
        let bytecode_file = match bc {
            Some(rel_bc) => {
                out.write(rel_bc, graph.bytecode_of(m))?;
                Some(rel_bc.to_string_lossy().into_owned())
            }
            None => None,
        };
        if let Some(b) = &bar {
            b.inc(1);
        }
        written.push(ManifestModule {
            row: ModuleRow::new(graph, m),
            file: rel.to_string_lossy().into_owned(),
            decoded_bytes: bytes.len() as u64,
            decoded_sha256: decoded_sha256.clone(),
            bytecode_file,
        });
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }

    let info = crate::report::info::InfoView::from_build(build);
    let manifest = Manifest {
        tool: format!("cc-teardown {}", env!("CARGO_PKG_VERSION")),
        target: build.opened.label.clone(),
        version: info.version.clone(),
        container: info.container,
        layout: info.bun.layout,
        entry: graph.entry_module().name.to_string(),
        raw: opts.raw,
        modules: written,
        folder: root.display().to_string(),
    };
    let text = serde_json::to_vec_pretty(&manifest)?;
    out.write(&manifest_rel, &text)?;
    Ok(manifest)
}

impl Manifest {
    /// What was written, in one line.
    fn line(&self) -> String {
        let total: u64 = self
            .modules
            .iter()
            .map(|m| {
                if self.raw {
                    m.row.bytes
                } else {
                    m.decoded_bytes
                }
            })
            .sum();
        format!(
            "wrote {} ({}{}) and manifest.json to {}",
            fmt::count(self.modules.len(), "module", "modules"),
            fmt::bytes(total),
            if self.raw {
                ", stored bytes"
            } else {
                ", decoded"
            },
            super::escape::display(&self.folder)
        )
    }
}

impl View for Manifest {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("Extracted ").c(self.target.clone())).bare();
        d.push(Block::Note(self.line().into()));
        d
    }

    fn terminal(&self, _: &super::doc::Term) -> Option<String> {
        Some(self.line() + "\n")
    }
}
