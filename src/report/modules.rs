//! Per-module rows (`ls`, `hash`, the extract manifest).

use super::doc::{Block, Doc, Inline, Kind, Table, facts, fmt};
use super::emit::View;
use crate::bun::digest::sha256_hex;
use crate::bun::{BunGraph, Module};
use rayon::prelude::*;
use serde::Serialize;

#[derive(Serialize, Clone)]
pub struct ModuleRow {
    pub index: usize,
    pub name: String,
    pub path: String,
    pub entry: bool,
    pub bytes: u64,
    pub loader: &'static str,
    pub encoding: &'static str,
    pub format: &'static str,
    pub side: Option<crate::bun::Side>,
    /// The module's own bytecode (its part of a shared region).
    pub bytecode_bytes: u64,
    pub bytecode_shared: bool,
    pub sourcemap_bytes: u64,
    pub module_info_bytes: u64,
    pub bytecode_origin_path_bytes: u64,
    pub compressed: bool,
    /// SHA-256 of the stored bytes.
    pub sha256: String,
}

impl ModuleRow {
    pub fn new(g: &BunGraph, m: &Module) -> ModuleRow {
        ModuleRow {
            index: m.index,
            name: m.name.to_string(),
            path: m.path_below_root().into_owned(),
            entry: m.index == g.entry,
            bytes: m.contents.len() as u64,
            loader: m.loader,
            encoding: m.encoding.as_str(),
            format: m.format.as_str(),
            side: m.side,
            bytecode_bytes: g.own_bytecode_len(m),
            bytecode_shared: g.bytecode_region().is_some() && !m.bytecode.is_empty(),
            sourcemap_bytes: m.sourcemap.len() as u64,
            module_info_bytes: m.module_info.len() as u64,
            bytecode_origin_path_bytes: m.bytecode_origin_path.len() as u64,
            compressed: m.is_compressed(),
            sha256: sha256_hex(m.contents),
        }
    }

    /// All rows, hashed on every core.
    pub fn all(g: &BunGraph) -> Vec<ModuleRow> {
        g.modules.par_iter().map(|m| ModuleRow::new(g, m)).collect()
    }
}

/// `ls`: the modules of a build.
#[derive(Serialize)]
pub struct LsView {
    pub target: String,
    pub entry: String,
    pub modules: Vec<ModuleRow>,
    /// Whole hashes in the human table (`--full-hash`); JSON always has them.
    #[serde(skip)]
    pub full_hash: bool,
    /// The shared bytecode region (bytes, modules), for the human note.
    #[serde(skip)]
    pub bytecode_region: Option<(u64, usize)>,
}

impl View for LsView {
    fn doc(&self) -> Doc {
        let mut t = Table::of(&[
            ("#", Kind::Number),
            ("name", Kind::Code),
            ("bytes", Kind::Number),
            ("loader", Kind::Text),
            ("enc", Kind::Text),
            ("fmt", Kind::Text),
            ("side", Kind::Text),
            ("bytecode", Kind::Number),
            ("sourcemap", Kind::Number),
            ("zst", Kind::Text),
            ("sha256", Kind::Code),
        ]);
        for r in &self.modules {
            t.text_row(vec![
                r.index.to_string(),
                format!("{}{}", r.path, if r.entry { " (entry)" } else { "" }),
                fmt::num(r.bytes),
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
                        fmt::num(r.bytecode_bytes),
                        if r.bytecode_shared { "*" } else { "" }
                    )
                },
                if r.sourcemap_bytes == 0 {
                    "-".into()
                } else {
                    fmt::num(r.sourcemap_bytes)
                },
                if r.compressed {
                    "yes".into()
                } else {
                    "".into()
                },
                if self.full_hash {
                    r.sha256.clone()
                } else {
                    r.sha256[..16].to_string()
                },
            ]);
        }
        let mut d = Doc::new(Inline::from("Modules of ").c(self.target.clone())).bare();
        d.push(Block::Table(t));
        let total: u64 = self.modules.iter().map(|r| r.bytes).sum();
        d.push(Block::Note(
            format!(
                "{}, {} of contents",
                fmt::count(self.modules.len(), "module", "modules"),
                fmt::bytes(total)
            )
            .into(),
        ));
        if let Some((bytes, modules)) = self.bytecode_region {
            d.push(Block::Note(
                format!(
                    "* bytecode lives in one region of {} shared by {}; each row shows the module's own part",
                    fmt::bytes(bytes),
                    fmt::count(modules, "module", "modules")
                )
                .into(),
            ));
        }
        d
    }
}

#[derive(Serialize)]
pub struct ModuleHash {
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
}

impl ModuleHash {
    pub fn of(r: &ModuleRow) -> ModuleHash {
        ModuleHash {
            name: r.name.clone(),
            bytes: r.bytes,
            sha256: r.sha256.clone(),
        }
    }
}

/// `hash`: the hashes that identify a build, then one per module.
#[derive(Serialize)]
pub struct HashView {
    pub target: String,
    pub file: String,
    pub payload: String,
    pub bundle: ModuleHash,
    /// SHA-256 over all JavaScript modules (docs/guide/hashing.md).
    pub bundle_digest: String,
    pub bundle_digest_modules: usize,
    pub modules: Vec<ModuleHash>,
}

impl View for HashView {
    /// The four hashes that identify a build, then one row per module.
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("SHA-256 of ").c(self.target.clone())).bare();
        d.push(facts(vec![
            ("file", Inline::code(self.file.clone())),
            ("payload", Inline::code(self.payload.clone())),
            (
                "bundle",
                Inline::code(self.bundle.sha256.clone())
                    .t("  ")
                    .c(self.bundle.name.clone()),
            ),
            (
                "bundle digest",
                Inline::code(self.bundle_digest.clone()).t(format!(
                    "  ({}, see docs/guide/hashing.md)",
                    fmt::count(
                        self.bundle_digest_modules,
                        "JavaScript module",
                        "JavaScript modules"
                    )
                )),
            ),
        ]));
        let mut t = Table::of(&[
            ("sha256", Kind::Code),
            ("bytes", Kind::Number),
            ("module", Kind::Code),
        ]);
        for m in &self.modules {
            t.text_row(vec![m.sha256.clone(), fmt::num(m.bytes), m.name.clone()]);
        }
        d.section("modules", "Modules", vec![Block::Table(t)]);
        d
    }
}
