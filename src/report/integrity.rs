//! `verify --published` and `verify --platforms`: a build against the
//! package it claims to be, and one version's builds against each other.

use super::doc::{self, Block, Doc, Inline, Kind, Status, Table, facts, fmt};
use super::emit::View;
use crate::analysis::integrity::{ModuleChange, PartChange, PartDiff};
use crate::container::codesign::{self, Signature};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub struct PublishedRef {
    pub package: String,
    pub version: String,
    pub platform: String,
}

#[derive(Serialize)]
pub struct FileHashes {
    pub sha256: String,
    pub published_sha256: String,
}

#[derive(Serialize)]
pub struct PublishedView {
    pub target: String,
    pub published: PublishedRef,
    pub identical: bool,
    pub file: FileHashes,
    pub container_diffs: Vec<PartDiff>,
    pub modules: Vec<ModuleChange>,
    pub signature: Signature,
}

/// `verify --published` as a document: the verdict first, then what
/// differs (container parts, modules with their changed functions), then
/// the signature.
fn doc(v: &PublishedView) -> Doc {
    let who = format!("{}@{}", v.published.package, v.published.version);
    let mut d = Doc::new(
        Inline::from("Verify ")
            .c(v.target.clone())
            .t(" against ")
            .c(who.clone()),
    )
    .bare();
    // A signature over other code than the published build's is not a
    // pass, however well its hashes match.
    let differs_from_published = v.signature.published.as_ref().is_some_and(|p| !p.matches);
    let sig_line = Inline::status(
        match v.signature.status {
            _ if differs_from_published => Status::Block,
            codesign::Status::Valid | codesign::Status::AdHoc => Status::Pass,
            codesign::Status::Unsigned => Status::Muted,
            _ => Status::Block,
        },
        v.signature.line(),
    );
    let signed = v.signature.status != codesign::Status::Unsigned;
    if v.identical {
        d.push(Block::Note(
            Inline::status(Status::Pass, "OK")
                .t("  identical to ")
                .c(who),
        ));
        let mut rows = vec![
            ("  sha256", Inline::code(v.file.sha256.clone())),
            ("  signature", sig_line),
        ];
        if signed {
            rows.push(("", format!("({})", v.signature.trust).into()));
        }
        d.push(facts(rows));
        return d;
    }
    d.push(Block::Note(
        Inline::status(Status::Block, "MODIFIED")
            .t("  ")
            .c(v.target.clone())
            .t(" differs from ")
            .c(who),
    ));
    d.push(facts(vec![
        ("  sha256", Inline::code(v.file.sha256.clone())),
        (
            "  published sha256",
            Inline::code(v.file.published_sha256.clone()),
        ),
    ]));
    let mut parts = Vec::new();
    if v.container_diffs.is_empty() {
        parts.push(Block::Note("(none differ)".into()));
    }
    for p in &v.container_diffs {
        let what = match p.status {
            PartChange::Differs => format!(
                "{} 4 KiB {}, first at offset {}",
                fmt::num(p.blocks_differ),
                if p.blocks_differ == 1 {
                    "block differs"
                } else {
                    "blocks differ"
                },
                p.first_difference.unwrap_or(0)
            ),
            PartChange::Resized => format!(
                "{} here, {} published",
                fmt::bytes(p.size),
                fmt::bytes(p.published_size)
            ),
            PartChange::Added => format!("{}, not in the published build", fmt::bytes(p.size)),
            PartChange::Removed => {
                format!("absent here ({} published)", fmt::bytes(p.published_size))
            }
        };
        parts.push(Block::Note(
            Inline::strong(p.part.clone())
                .t(": ")
                .s(Status::Changed, what),
        ));
    }
    d.section("container-parts", "container parts:", parts);
    let mut mods = Vec::new();
    if v.modules.is_empty() {
        mods.push(Block::Note("(none differ)".into()));
    }
    for m in &v.modules {
        let pair = |a: &Option<String>, b: &Option<String>| {
            Inline::code(a.as_deref().unwrap_or("-"))
                .t(" (published ")
                .c(b.as_deref().unwrap_or("-"))
                .t(")")
        };
        let mut blocks = vec![facts(vec![
            ("stored sha256", pair(&m.sha256, &m.published_sha256)),
            (
                "decoded sha256",
                pair(&m.decoded_sha256, &m.published_decoded_sha256),
            ),
            ("bytecode", m.bytecode.to_string().into()),
        ])];
        for f in &m.functions_changed {
            let name = match (&f.name, &f.original) {
                (Some(n), Some(o)) if n != o => format!("{n} ({o})"),
                (Some(n), _) => n.clone(),
                (None, Some(o)) => o.clone(),
                (None, None) => f.place().unwrap_or_else(|| "(anonymous)".into()),
            };
            blocks.push(Block::Diff {
                caption: Some(
                    Inline::from("function ")
                        .c(name)
                        .t(format!(" at line {}: {} (", f.line, f.status))
                        .s(Status::Added, format!("+{}", f.lines_added))
                        .t(" ")
                        .s(Status::Removed, format!("−{}", f.lines_removed))
                        .t(")"),
                ),
                text: f.diff.clone(),
                max_lines: Some(12),
            });
        }
        mods.push(Block::Section(doc::Section::new(
            &format!("module-{}", m.name),
            Inline::from(format!("{} ", m.status)).c(m.name.clone()),
            blocks,
        )));
    }
    d.section("modules", "modules:", mods);
    d.push(Block::Note(Inline::from("signature: ").extend(sig_line)));
    if signed {
        d.push(Block::Note(format!("  ({})", v.signature.trust).into()));
    }
    d
}

#[derive(Serialize)]
pub struct PlatformRow {
    pub platform: String,
    pub package: String,
    pub file_sha256: String,
    pub bundle_digest: String,
    pub js_modules: usize,
    pub signature: String,
}

#[derive(Serialize)]
pub struct ModuleAcross {
    pub name: String,
    pub identical: bool,
    /// Decoded SHA-256 → the platforms with it ("absent" for none).
    pub variants: BTreeMap<String, Vec<String>>,
}

#[derive(Serialize)]
pub struct FunctionsAcross {
    pub a: String,
    pub b: String,
    pub changed: usize,
    pub added: usize,
    pub removed: usize,
    /// `module: function` names of the changed functions (at most 20).
    pub examples: Vec<String>,
}

#[derive(Serialize)]
pub struct PlatformsView {
    pub version: String,
    pub identical_javascript: bool,
    pub platforms: Vec<PlatformRow>,
    pub modules: Vec<ModuleAcross>,
    pub functions: Vec<FunctionsAcross>,
}

/// `verify --platforms` as a document: one row per platform (bundle
/// digests lettered so equal ones read at a glance), the modules that
/// differ, and the function diffs between distinct bundles.
fn doc_platforms(v: &PlatformsView) -> Doc {
    let mut d = Doc::new(format!(
        "Claude Code {} on {}",
        v.version,
        fmt::count(v.platforms.len(), "platform", "platforms")
    ));
    let digests: Vec<&String> = {
        let mut d: Vec<&String> = v.platforms.iter().map(|r| &r.bundle_digest).collect();
        d.sort();
        d.dedup();
        d
    };
    let letter = |d: &String| {
        let i = digests.iter().position(|x| *x == d).unwrap_or(0);
        (b'A' + (i % 26) as u8) as char
    };
    let mut t = Table::of(&[
        ("platform", Kind::Text),
        ("file sha256", Kind::Code),
        ("bundle digest", Kind::Code),
        ("signature", Kind::Text),
    ]);
    for r in &v.platforms {
        t.text_row(vec![
            r.platform.clone(),
            r.file_sha256[..r.file_sha256.len().min(16)].to_string(),
            format!(
                "{} {}",
                letter(&r.bundle_digest),
                &r.bundle_digest[..r.bundle_digest.len().min(16)]
            ),
            r.signature.clone(),
        ]);
    }
    d.push(Block::Table(t));
    let mut blocks = Vec::new();
    for m in &v.modules {
        if m.identical {
            blocks.push(Block::Note(
                Inline::status(Status::Pass, "same      ").c(m.name.clone()),
            ));
            continue;
        }
        blocks.push(Block::Note(
            Inline::status(Status::Block, "differs   ").c(m.name.clone()),
        ));
        for (sha, ps) in &m.variants {
            blocks.push(Block::Note(
                Inline::from("          ")
                    .c(sha[..sha.len().min(16)].to_string())
                    .t(format!("  {}", ps.join(", "))),
            ));
        }
    }
    d.section(
        "javascript",
        Inline::from("JavaScript: ").extend(if v.identical_javascript {
            Inline::status(Status::Pass, "identical on every platform")
        } else {
            Inline::status(Status::Block, "differs between platforms")
        }),
        blocks,
    );
    for f in &v.functions {
        d.section(
            &format!("functions-{}-{}", f.a, f.b),
            format!(
                "functions, {} → {}: {} changed, {} added, {} removed",
                f.a,
                f.b,
                fmt::n(f.changed),
                fmt::n(f.added),
                fmt::n(f.removed)
            ),
            vec![Block::List {
                items: f.examples.iter().map(|e| Inline::code(e.clone())).collect(),
                limit: None,
            }],
        );
    }
    d
}

impl View for PublishedView {
    fn doc(&self) -> Doc {
        doc(self)
    }
}

impl View for PlatformsView {
    fn doc(&self) -> Doc {
        doc_platforms(self)
    }
}

/// `verify --sha256`: one hash of a build against the one expected.
#[derive(Serialize)]
pub struct VerifyView {
    pub target: String,
    pub what: String,
    pub expected: String,
    pub actual: String,
    pub ok: bool,
}

impl View for VerifyView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(Inline::from("Verify ").c(self.target.clone())).bare();
        if self.ok {
            d.push(Block::Note(
                Inline::status(Status::Pass, "OK")
                    .t(format!("  {} of ", self.what))
                    .c(self.target.clone())
                    .t(" matches ")
                    .c(self.actual.clone()),
            ));
        } else {
            d.push(Block::Note(
                Inline::status(Status::Block, "MISMATCH")
                    .t(format!("  {} of ", self.what))
                    .c(self.target.clone()),
            ));
            d.push(facts(vec![
                ("  expected", Inline::code(self.expected.clone())),
                ("  actual", Inline::code(self.actual.clone())),
            ]));
        }
        d
    }
}

impl ModuleAcross {
    /// Each module's decoded hash per platform (`by_module`: name →
    /// platform → sha256) as variants: which platforms share which bytes
    /// (`absent` where a platform lacks the module).
    pub fn all(
        by_module: BTreeMap<String, BTreeMap<String, String>>,
        platforms: &[&str],
    ) -> Vec<ModuleAcross> {
        by_module
            .into_iter()
            .map(|(name, shas)| {
                let mut variants: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for p in platforms {
                    let key = shas.get(*p).cloned().unwrap_or_else(|| "absent".into());
                    variants.entry(key).or_default().push(p.to_string());
                }
                ModuleAcross {
                    name,
                    identical: variants.len() == 1,
                    variants,
                }
            })
            .collect()
    }
}

impl FunctionsAcross {
    /// The function diff between two platforms' bundles, with up to 20
    /// changed functions named.
    pub fn of(
        a: &str,
        b: &str,
        d: &crate::analysis::diff::functions::FunctionDiff,
    ) -> FunctionsAcross {
        FunctionsAcross {
            a: a.to_string(),
            b: b.to_string(),
            changed: d.changed.len(),
            added: d.added.len(),
            removed: d.removed.len(),
            examples: d
                .changed
                .iter()
                .take(20)
                .map(|c| {
                    format!(
                        "{}: {} (line {}, +{} −{})",
                        c.b.module,
                        c.b.original
                            .as_deref()
                            .or(c.b.name.as_deref())
                            .unwrap_or("(anonymous)"),
                        c.b.raw_line,
                        c.lines_added,
                        c.lines_removed
                    )
                })
                .collect(),
        }
    }
}
