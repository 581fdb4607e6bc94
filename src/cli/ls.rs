use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::report::doc::{Block, Doc, Inline, fmt};
use crate::report::modules::ModuleRow;
use crate::report::table::{Align, Table, thousands};
use clap::Args;

#[derive(Args)]
pub struct LsArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Show full SHA-256 hashes instead of the first 16 hex digits.
    #[arg(long)]
    pub full_hash: bool,
    /// Only modules whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(serde::Serialize)]
struct LsView {
    target: String,
    entry: String,
    modules: Vec<ModuleRow>,
}

pub fn run(g: &Global, a: &LsArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let mut rows = ModuleRow::all(&build.graph);
    if let Some(f) = &a.filter {
        rows.retain(|r| r.name.contains(f.as_str()));
    }
    if g.json {
        return a
            .out
            .json(
                g,
                &LsView {
                    target: opened.label.clone(),
                    entry: build.graph.entry_module().name.to_string(),
                    modules: rows,
                },
            )
            .map(|_| 0);
    }
    let mut t = Table::new(&[
        ("#", Align::Right),
        ("name", Align::Code),
        ("bytes", Align::Right),
        ("loader", Align::Left),
        ("enc", Align::Left),
        ("fmt", Align::Left),
        ("side", Align::Left),
        ("bytecode", Align::Right),
        ("sourcemap", Align::Right),
        ("zst", Align::Left),
        ("sha256", Align::Code),
    ]);
    for r in &rows {
        t.row(vec![
            r.index.to_string(),
            format!("{}{}", r.path, if r.entry { " (entry)" } else { "" }),
            thousands(r.bytes),
            r.loader.to_string(),
            r.encoding.to_string(),
            r.format.to_string(),
            match r.side {
                Some(crate::bun::Side::Client) => "client".into(),
                Some(crate::bun::Side::Server) => "server".into(),
                None => "-".into(),
            },
            if r.bytecode_bytes == 0 {
                "-".into()
            } else {
                format!(
                    "{}{}",
                    thousands(r.bytecode_bytes),
                    if r.bytecode_shared { "*" } else { "" }
                )
            },
            if r.sourcemap_bytes == 0 {
                "-".into()
            } else {
                thousands(r.sourcemap_bytes)
            },
            if r.compressed {
                "yes".into()
            } else {
                "".into()
            },
            if a.full_hash {
                r.sha256.clone()
            } else {
                r.sha256[..16].to_string()
            },
        ]);
    }
    let mut d = Doc::new(Inline::from("Modules of ").c(opened.label.clone())).bare();
    d.push(Block::Table(t.doc()));
    let total: u64 = rows.iter().map(|r| r.bytes).sum();
    d.push(Block::Note(
        format!(
            "{}, {} of contents",
            fmt::count(rows.len(), "module", "modules"),
            fmt::bytes(total)
        )
        .into(),
    ));
    if let Some(region) = build.graph.bytecode_region() {
        d.push(Block::Note(
            format!(
                "* bytecode lives in one region of {} shared by {}; each row shows the module's own part",
                fmt::bytes(region.bytes),
                fmt::count(region.modules, "module", "modules")
            )
            .into(),
        ));
    }
    a.out.text(g, &d)?;
    Ok(0)
}
