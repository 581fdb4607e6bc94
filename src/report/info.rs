//! The `info` view.

use super::doc::{Doc, Inline, Status, facts, fmt};
use crate::bun::BytecodeRegion;
use crate::bun::digest::sha256_hex;
use crate::container::ContainerInfo;
use crate::container::codesign::{self, Signature};
use crate::source::Origin;
use crate::source::build::{Build, VersionFacts};
use serde::Serialize;

#[derive(Serialize)]
pub struct TargetFacts {
    pub label: String,
    pub origin: Origin,
    pub path: String,
    pub file_bytes: u64,
    pub package: Option<String>,
    pub platform: Option<String>,
}

#[derive(Serialize)]
pub struct LayoutFacts {
    pub record_size: Option<usize>,
    pub offsets_size: Option<usize>,
    pub epoch: String,
    pub loader_table: crate::bun::LoaderTable,
}

#[derive(Serialize)]
pub struct BunFacts {
    pub layout: LayoutFacts,
    pub modules: usize,
    pub js_modules: usize,
    pub compressed_modules: usize,
    pub entry: String,
    pub entry_point_id: usize,
    pub flags: Option<u32>,
    pub flag_names: Vec<&'static str>,
    pub exec_argv: String,
    pub bytecode_bytes: u64,
    pub bytecode_region: Option<BytecodeRegion>,
    pub sourcemap_bytes: u64,
}

#[derive(Serialize)]
pub struct BundleFacts {
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
    pub code_split: bool,
}

#[derive(Serialize)]
pub struct InfoView {
    pub target: TargetFacts,
    pub container: ContainerInfo,
    pub bun: BunFacts,
    pub bundle: BundleFacts,
    /// The Claude Code version (null when it cannot be told).
    pub version: Option<String>,
    pub version_sources: VersionFacts,
    /// The code signature, checked against the file's bytes (`info` and
    /// `report` fill it in; `diff` leaves it out to skip the hashing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signature>,
}

pub fn target_facts(b: &Build) -> TargetFacts {
    TargetFacts {
        label: b.opened.label.clone(),
        origin: b.opened.origin,
        path: b.opened.path.display().to_string(),
        file_bytes: b.opened.bytes().len() as u64,
        package: b.opened.package_name.clone(),
        platform: b.opened.platform.clone(),
    }
}

impl InfoView {
    pub fn from_build(b: &Build) -> InfoView {
        let g = &b.graph;
        let entry = g.entry_module();
        let versions = b.version();
        InfoView {
            target: target_facts(b),
            container: b.located.info.clone(),
            bun: BunFacts {
                layout: LayoutFacts {
                    record_size: g.layout.map(|l| l.size),
                    offsets_size: g.layout.map(|_| g.offsets.size),
                    epoch: g
                        .layout
                        .map_or("none (plain JavaScript)".into(), |l| l.epoch.to_string()),
                    loader_table: g.loader_table,
                },
                modules: g.modules.len(),
                js_modules: g.modules.iter().filter(|m| m.is_javascript()).count(),
                compressed_modules: g.modules.iter().filter(|m| m.is_compressed()).count(),
                entry: entry.name.to_string(),
                entry_point_id: g.entry,
                flags: g.offsets.flags,
                flag_names: g.offsets.flag_names(),
                exec_argv: g.exec_argv.to_string(),
                bytecode_bytes: g.bytecode_bytes(),
                bytecode_region: g.bytecode_region(),
                sourcemap_bytes: g.modules.iter().map(|m| m.sourcemap.len() as u64).sum(),
            },
            bundle: BundleFacts {
                name: entry.name.to_string(),
                bytes: entry.contents.len() as u64,
                sha256: sha256_hex(entry.contents),
                code_split: g.is_code_split(),
            },
            version: versions.best().map(str::to_string),
            version_sources: versions,
            signature: None,
        }
    }

    /// Check the file's code signature (hashes every signed page).
    pub fn with_signature(mut self, b: &Build) -> InfoView {
        self.signature = Some(codesign::check(b.opened.bytes(), &b.located.info));
        self
    }

    /// The facts of `info`, one per line.
    fn rows(&self, version: String) -> Vec<(&'static str, Inline)> {
        let c = &self.container;
        let b = &self.bun;
        let mut rows: Vec<(&str, Inline)> = vec![
            ("target", Inline::code(self.target.label.clone())),
            (
                "file",
                Inline::code(self.target.path.clone())
                    .t(format!(" ({})", fmt::bytes(self.target.file_bytes))),
            ),
            ("version", Inline::code(version)),
        ];
        if let (Some(bv), Some(pv)) = (&self.version_sources.bundle, &self.version_sources.package)
            && bv != pv
        {
            rows.push((
                "warning",
                Inline::status(
                    Status::Block,
                    format!("bundle says {bv}, package.json says {pv}"),
                ),
            ));
        }
        rows.push((
            "container",
            format!(
                "{}{}",
                c.format.as_str(),
                c.arch
                    .as_deref()
                    .map(|a| format!(" {a}"))
                    .unwrap_or_default()
            )
            .into(),
        ));
        if !c.slices.is_empty() {
            let s: Vec<String> = c
                .slices
                .iter()
                .map(|s| format!("{}@{}", s.arch, s.offset))
                .collect();
            rows.push(("fat slices", s.join(", ").into()));
        }
        rows.push((
            "payload",
            format!(
                "{} at file offset {} ({}{}{})",
                match c.placement {
                    crate::container::Placement::Section => "section",
                    crate::container::Placement::Appended => "appended",
                    crate::container::Placement::TrailerScan => "found by trailer scan",
                    crate::container::Placement::WholeFile => "whole file",
                },
                fmt::num(c.payload_offset),
                fmt::bytes(c.payload_size),
                c.section
                    .as_deref()
                    .map(|s| format!(", section {s}"))
                    .unwrap_or_default(),
                c.header_width
                    .map(|w| format!(", u{} length header", w as u32 * 8))
                    .unwrap_or_default(),
            )
            .into(),
        ));
        rows.push((
            "bun layout",
            match (b.layout.record_size, b.layout.offsets_size) {
                (Some(r), Some(o)) => {
                    format!("{r}-byte records, {o}-byte Offsets ({})", b.layout.epoch)
                }
                _ => b.layout.epoch.clone(),
            }
            .into(),
        ));
        rows.push((
            "modules",
            format!(
                "{} ({} JavaScript, {} zstd-compressed)",
                fmt::n(b.modules),
                fmt::n(b.js_modules),
                fmt::n(b.compressed_modules)
            )
            .into(),
        ));
        rows.push((
            "entry",
            Inline::code(b.entry.clone()).t(format!(" (id {})", b.entry_point_id)),
        ));
        if let Some(f) = b.flags {
            let names = if b.flag_names.is_empty() {
                String::new()
            } else {
                format!(" ({})", b.flag_names.join(", "))
            };
            rows.push(("flags", Inline::code(format!("{f:#x}")).t(names)));
        }
        if !b.exec_argv.is_empty() {
            rows.push(("exec argv", Inline::code(b.exec_argv.clone())));
        }
        rows.push((
            "bytecode",
            match &b.bytecode_region {
                Some(r) => format!(
                    "{}, one region shared by {}",
                    fmt::bytes(r.bytes),
                    fmt::count(r.modules, "module", "modules")
                ),
                None => fmt::bytes(b.bytecode_bytes),
            }
            .into(),
        ));
        rows.push(("sourcemaps", fmt::bytes(b.sourcemap_bytes).into()));
        rows.push((
            "bundle",
            Inline::code(self.bundle.name.clone()).t(format!(
                " ({}{})",
                fmt::bytes(self.bundle.bytes),
                if self.bundle.code_split {
                    ", code-split entry"
                } else {
                    ""
                }
            )),
        ));
        rows.push(("bundle sha256", Inline::code(self.bundle.sha256.clone())));
        if let Some(s) = &self.signature {
            let st = match s.status {
                codesign::Status::Valid | codesign::Status::AdHoc => Status::Pass,
                codesign::Status::Unsigned => Status::Muted,
                _ => Status::Block,
            };
            rows.push(("signature", Inline::status(st, s.line())));
            if s.status != codesign::Status::Unsigned {
                rows.push((
                    "",
                    "(integrity only: hashes recomputed; certificate chain not checked, so the Team ID and signer are claims, not proof of who signed)".into(),
                ));
            }
        }
        rows
    }
}

impl crate::report::emit::View for InfoView {
    /// The `info` document: the facts, one per line (the title names the
    /// target and version; the terminal shows the facts alone).
    fn doc(&self) -> Doc {
        let version = self.version.clone().unwrap_or_else(|| "unknown".into());
        let mut d = Doc::new(
            Inline::from("Claude Code ")
                .c(version.clone())
                .t(" — ")
                .c(self.target.label.clone()),
        )
        .bare();
        d.push(facts(self.rows(version)));
        d
    }
}
