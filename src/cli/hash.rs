use super::{Global, TargetArg, print_json};
use crate::bun::digest::{bundle_digest, sha256_hex};
use crate::report::modules::ModuleRow;
use crate::report::table::{Align, Table, facts};
use clap::Args;

#[derive(Args)]
pub struct HashArgs {
    #[command(flatten)]
    pub target: TargetArg,
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
    /// SHA-256 over all JavaScript modules (docs/hashing.md).
    bundle_digest: String,
    bundle_digest_modules: usize,
    modules: Vec<ModuleHash>,
}

pub fn run(g: &Global, a: &HashArgs) -> anyhow::Result<i32> {
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
        return print_json(&view).map(|_| 0);
    }
    out!(
        "{}",
        facts(&[
            ("file", view.file.clone()),
            ("payload", view.payload.clone()),
            (
                "bundle",
                format!("{}  {}", view.bundle.sha256, view.bundle.name)
            ),
            (
                "bundle digest",
                format!(
                    "{}  ({} JavaScript modules, see docs/hashing.md)",
                    view.bundle_digest, view.bundle_digest_modules
                )
            ),
        ])
    );
    outln!();
    let mut t = Table::new(&[
        ("sha256", Align::Left),
        ("bytes", Align::Right),
        ("module", Align::Left),
    ]);
    for m in &view.modules {
        t.row(vec![m.sha256.clone(), m.bytes.to_string(), m.name.clone()]);
    }
    out!("{}", t.render());
    Ok(0)
}

/// Used by verify: the SHA-256 of one module's stored bytes.
pub(crate) fn module_sha(m: &crate::bun::Module) -> String {
    sha256_hex(m.contents)
}
