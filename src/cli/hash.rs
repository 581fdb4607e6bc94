use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::bun::digest::{bundle_digest, sha256_hex};
use crate::report::modules::{HashView, ModuleHash, ModuleRow};
use clap::Args;

#[derive(Args)]
pub struct HashArgs {
    #[command(flatten)]
    pub target: TargetArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &HashArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
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
        bundle: ModuleHash::of(entry),
        bundle_digest: digest,
        bundle_digest_modules: digest_modules,
        modules: rows.iter().map(ModuleHash::of).collect(),
    };
    app.emit(&a.out, &view)
}

/// Used by verify: the SHA-256 of one module's stored bytes.
pub(crate) fn module_sha(m: &crate::bun::Module) -> String {
    sha256_hex(m.contents)
}
