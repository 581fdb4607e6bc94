//! Per-module rows (`ls`, `hash`, the extract manifest).

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
