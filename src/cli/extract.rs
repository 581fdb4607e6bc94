use super::outdir::{OutDir, OutPlan};
use super::{Global, TargetArg, print_json};
use crate::bun::digest::sha256_hex;
use crate::report::modules::ModuleRow;
use clap::Args;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Output folder (created if missing). Nothing is ever written outside it,
    /// and nothing already in it is written through.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Keep the stored bytes (no zstd decompression, no UTF-16 conversion).
    #[arg(long)]
    pub raw: bool,
    /// Also write each module's bytecode blob as NAME.jsc.
    #[arg(long)]
    pub bytecode: bool,
    /// Replace files already at the paths this run writes (each is removed
    /// first, never written through). Without it the run refuses them.
    #[arg(long)]
    pub force: bool,
}

/// Where a module's bytecode goes: its file name with `.jsc` appended.
fn sidecar(rel: &Path) -> PathBuf {
    let mut name = rel.as_os_str().to_os_string();
    name.push(".jsc");
    PathBuf::from(name)
}

#[derive(serde::Serialize)]
struct ManifestModule {
    #[serde(flatten)]
    row: ModuleRow,
    /// Path of the written file, relative to the output folder.
    file: String,
    /// SHA-256 and length of the decoded bytes (what `file` holds unless --raw).
    decoded_bytes: u64,
    decoded_sha256: String,
    bytecode_file: Option<String>,
}

#[derive(serde::Serialize)]
struct Manifest {
    tool: String,
    target: String,
    version: Option<String>,
    container: crate::container::ContainerInfo,
    layout: crate::report::info::LayoutFacts,
    entry: String,
    raw: bool,
    modules: Vec<ManifestModule>,
}

/// Who writes a file (for collision messages).
fn owner(m: &crate::bun::Module, sidecar: bool) -> String {
    if sidecar {
        format!("the bytecode of module {}", m.name)
    } else {
        format!("module {}", m.name)
    }
}

pub fn run(g: &Global, a: &ExtractArgs) -> anyhow::Result<i32> {
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
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
        let bc = if a.bytecode && !m.bytecode.is_empty() {
            Some(plan.add(&sidecar(&rel), owner(m, true))?)
        } else {
            None
        };
        rels.push((rel, bc));
    }

    // Decoding and hashing run on every core; files are created one at a
    // time, because parallel creates in one folder only contend for its lock
    // (measured: 3–10x slower on ext4).
    let budget = g.budget();
    let decoded: Vec<(crate::bun::Decoded, String)> = graph
        .modules
        .par_iter()
        .map(|m| {
            let d = graph.decoded(m, budget)?;
            let sha = sha256_hex(&d);
            Ok((d, sha))
        })
        .collect::<Result<_, crate::bun::GraphError>>()?;

    let root = &a.output;
    let mut out = OutDir::open(root, &plan, a.force)?;

    let bar = (!g.quiet
        && !g.json
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
        && rels.len() > 50)
        .then(|| indicatif::ProgressBar::new(rels.len() as u64));
    let mut written = Vec::with_capacity(rels.len());
    for ((m, (rel, bc)), (bytes, decoded_sha256)) in graph.modules.iter().zip(&rels).zip(&decoded) {
        out.write(rel, if a.raw { m.contents } else { bytes })?;
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

    let info = crate::report::info::InfoView::from_build(&build);
    let manifest = Manifest {
        tool: format!("cc-teardown {}", env!("CARGO_PKG_VERSION")),
        target: opened.label.clone(),
        version: info.version.clone(),
        container: info.container,
        layout: info.bun.layout,
        entry: graph.entry_module().name.to_string(),
        raw: a.raw,
        modules: written,
    };
    let text = serde_json::to_vec_pretty(&manifest)?;
    out.write(&manifest_rel, &text)?;
    if g.json {
        return print_json(&manifest).map(|_| 0);
    }
    let total: u64 = manifest
        .modules
        .iter()
        .map(|m| if a.raw { m.row.bytes } else { m.decoded_bytes })
        .sum();
    println!(
        "wrote {} ({}{}) and manifest.json to {}",
        crate::report::doc::fmt::count(manifest.modules.len(), "module", "modules"),
        crate::report::doc::fmt::bytes(total),
        if a.raw { ", stored bytes" } else { ", decoded" },
        crate::report::escape::display(&root.display().to_string())
    );
    Ok(0)
}
