use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::bun::digest::{bundle_digest, sha256_hex};
use crate::report::doc::{Block, Doc, Inline, facts, fmt};
use crate::report::modules::ModuleRow;
use crate::report::table::{Align, Table};
use clap::Args;

#[derive(Args)]
pub struct HashArgs {
    #[command(flatten)]
    pub target: TargetArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(serde::Serialize)]
struct ModuleHash {
    name: String,
    bytes: u64,
    sha256: String,
}

#[derive(serde::Serialize)]
struct HashView {
    target: String,
    file: String,
    payload: String,
    bundle: ModuleHash,
    /// SHA-256 over all JavaScript modules (docs/guide/hashing.md).
    bundle_digest: String,
    bundle_digest_modules: usize,
    modules: Vec<ModuleHash>,
}

pub fn run(g: &Global, a: &HashArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let graph = &build.graph;
    // File, payload and modules are independent: hash them on both cores.
    let ((file, payload), (rows, digest)) = rayon::join(
        || {
            rayon::join(
                || sha256_hex(opened.bytes()),
                || sha256_hex(build.located.payload),
            )
        },
        || (ModuleRow::all(graph), bundle_digest(graph, g.budget())),
    );
    let (digest, digest_modules) = digest?;
    let entry = &rows[graph.entry];
    let view = HashView {
        target: opened.label.clone(),
        file,
        payload,
        bundle: ModuleHash {
            name: entry.name.clone(),
            bytes: entry.bytes,
            sha256: entry.sha256.clone(),
        },
        bundle_digest: digest,
        bundle_digest_modules: digest_modules,
        modules: rows
            .iter()
            .map(|r| ModuleHash {
                name: r.name.clone(),
                bytes: r.bytes,
                sha256: r.sha256.clone(),
            })
            .collect(),
    };
    if g.json {
        return a.out.json(g, &view).map(|_| 0);
    }
    a.out.text(g, &doc(&view))?;
    Ok(0)
}

/// The hashes as a document: the four that identify a build, then one row
/// per module.
fn doc(view: &HashView) -> Doc {
    let mut d = Doc::new(Inline::from("SHA-256 of ").c(view.target.clone())).bare();
    d.push(facts(vec![
        ("file", Inline::code(view.file.clone())),
        ("payload", Inline::code(view.payload.clone())),
        (
            "bundle",
            Inline::code(view.bundle.sha256.clone())
                .t("  ")
                .c(view.bundle.name.clone()),
        ),
        (
            "bundle digest",
            Inline::code(view.bundle_digest.clone()).t(format!(
                "  ({}, see docs/hashing.md)",
                fmt::count(
                    view.bundle_digest_modules,
                    "JavaScript module",
                    "JavaScript modules"
                )
            )),
        ),
    ]));
    let mut t = Table::new(&[
        ("sha256", Align::Code),
        ("bytes", Align::Right),
        ("module", Align::Code),
    ]);
    for m in &view.modules {
        t.row(vec![m.sha256.clone(), fmt::num(m.bytes), m.name.clone()]);
    }
    d.section("modules", "Modules", vec![Block::Table(t.doc())]);
    d
}

/// Used by verify: the SHA-256 of one module's stored bytes.
pub(crate) fn module_sha(m: &crate::bun::Module) -> String {
    sha256_hex(m.contents)
}
