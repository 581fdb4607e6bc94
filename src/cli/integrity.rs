//! `verify --published` and `verify --platforms`: a build against the
//! package it claims to be, and one version's builds against each other.

use super::Global;
use super::format::OutputArgs;
use crate::analysis::diff::{self, Section};
use crate::analysis::integrity::{self, ModuleChange, PartDiff};
use crate::bun::digest::{bundle_digest, sha256_hex};
use crate::container::codesign::{self, Signature};
use crate::report::doc::{self, Block, Doc, Inline, Status, facts, fmt};
use crate::report::table::{Align, Table, thousands};
use crate::source::build::Build;
use crate::source::npm::{PLATFORMS, platform_package};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
struct PublishedRef {
    package: String,
    version: String,
    platform: String,
}

#[derive(Serialize)]
struct FileHashes {
    sha256: String,
    published_sha256: String,
}

#[derive(Serialize)]
struct PublishedView {
    target: String,
    published: PublishedRef,
    identical: bool,
    file: FileHashes,
    container_diffs: Vec<PartDiff>,
    modules: Vec<ModuleChange>,
    signature: Signature,
}

/// A version as the registry spells them; anything else read from a build
/// is not sent to it.
fn plausible_version(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'))
}

pub fn published(g: &Global, out: &OutputArgs, target: &str) -> anyhow::Result<i32> {
    let opened = g.open(target)?;
    let build = g.build(&opened)?;
    let Some(platform) = integrity::platform_of(opened.bytes(), &build.located.info)
        .or_else(|| opened.platform.clone())
    else {
        usage!(
            "{}: cannot tell the platform of a {} file (verify --published needs a native executable)",
            opened.label,
            build.located.info.format.as_str()
        );
    };
    let version = build.version();
    let Some(version) = version.best().filter(|v| plausible_version(v)) else {
        usage!(
            "{}: the build states no Claude Code version, so there is no published package to compare with",
            opened.label
        );
    };
    let package = platform_package(&platform);
    let pub_opened = g
        .open(&format!("npm:{version}/{platform}"))
        .with_context(|| format!("fetching {package}@{version}"))?;
    // Equal bytes need one hash, not two; the signature's page hashing
    // runs beside it (the speed of an identical build is measured in
    // docs/performance.md).
    let identical = opened.bytes() == pub_opened.bytes();
    let ((sha, psha), signature) = rayon::join(
        || {
            if identical {
                let h = sha256_hex(opened.bytes());
                (h.clone(), h)
            } else {
                rayon::join(
                    || sha256_hex(opened.bytes()),
                    || sha256_hex(pub_opened.bytes()),
                )
            }
        },
        || codesign::check(opened.bytes(), &build.located.info),
    );
    let mut view = PublishedView {
        target: opened.label.clone(),
        published: PublishedRef {
            package: package.clone(),
            version: version.to_string(),
            platform: platform.clone(),
        },
        identical,
        file: FileHashes {
            sha256: sha,
            published_sha256: psha,
        },
        container_diffs: Vec::new(),
        modules: Vec::new(),
        signature,
    };
    if identical {
        // The same bytes carry the same signature: no second check.
        let same = view.signature.clone();
        view.signature.compare_with_published(&same);
    } else {
        let pbuild = g.build(&pub_opened)?;
        let psig = codesign::check(pub_opened.bytes(), &pbuild.located.info);
        view.signature.compare_with_published(&psig);
        view.container_diffs = integrity::container_diffs(
            opened.bytes(),
            &build.located.info,
            &view.signature,
            pub_opened.bytes(),
            &pbuild.located.info,
            &psig,
        );
        view.modules = integrity::module_changes(&build.graph, &pbuild.graph, g.budget())?;
        let js_changed = view.modules.iter().any(|m| {
            m.status == "changed" && build.graph.find(&m.name).is_some_and(|x| x.is_javascript())
        });
        if js_changed {
            let d = functions(g, &pbuild, &build)?;
            integrity::attach_functions(&mut view.modules, &d);
        }
    }
    if g.json {
        out.json(g, &view)?;
    } else {
        out.text(g, &doc(&view))?;
    }
    Ok(if identical { 0 } else { 1 })
}

/// The function diff between two builds (the `diff` engine, side a first).
fn functions(g: &Global, a: &Build, b: &Build) -> anyhow::Result<diff::functions::FunctionDiff> {
    let sections = [Section::Functions];
    let sa = super::code::analyse(g, a)?.with_shapes();
    let sb = super::code::analyse(g, b)?.with_shapes();
    let (ra, rb) = rayon::join(
        || diff::prepare(&sa, &sections),
        || diff::prepare(&sb, &sections),
    );
    ra.with_context(|| a.opened.label.clone())?;
    rb.with_context(|| b.opened.label.clone())?;
    Ok(diff::compare(&sa, &sb, &sections)?
        .functions
        .unwrap_or_default())
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
        let what = match p.status.as_str() {
            "differs" => format!(
                "{} 4 KiB {}, first at offset {}",
                thousands(p.blocks_differ),
                if p.blocks_differ == 1 {
                    "block differs"
                } else {
                    "blocks differ"
                },
                p.first_difference.unwrap_or(0)
            ),
            "resized" => format!(
                "{} here, {} published",
                fmt::bytes(p.size),
                fmt::bytes(p.published_size)
            ),
            "added" => format!("{}, not in the published build", fmt::bytes(p.size)),
            _ => format!("absent here ({} published)", fmt::bytes(p.published_size)),
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
struct PlatformRow {
    platform: String,
    package: String,
    file_sha256: String,
    bundle_digest: String,
    js_modules: usize,
    signature: String,
}

#[derive(Serialize)]
struct ModuleAcross {
    name: String,
    identical: bool,
    /// Decoded SHA-256 → the platforms with it ("absent" for none).
    variants: BTreeMap<String, Vec<String>>,
}

#[derive(Serialize)]
struct FunctionsAcross {
    a: String,
    b: String,
    changed: usize,
    added: usize,
    removed: usize,
    /// `module: function` names of the changed functions (at most 20).
    examples: Vec<String>,
}

#[derive(Serialize)]
struct PlatformsView {
    version: String,
    identical_javascript: bool,
    platforms: Vec<PlatformRow>,
    modules: Vec<ModuleAcross>,
    functions: Vec<FunctionsAcross>,
}

pub fn platforms(g: &Global, out: &OutputArgs, version: &str) -> anyhow::Result<i32> {
    if !plausible_version(version) {
        usage!("{version:?} is not a version");
    }
    let open = |p: &str| {
        g.open(&format!("npm:{version}/{p}"))
            .with_context(|| format!("fetching {}@{version}", platform_package(p)))
    };
    let mut rows = Vec::new();
    // name → platform → decoded sha
    let mut by_module: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    // One build at a time: eight mapped 250 MB files, all hashed, would
    // keep 2 GB of pages resident at once.
    for p in PLATFORMS {
        let opened = open(p)?;
        let b = g.build(&opened)?;
        let (digest, js) = bundle_digest(&b.graph, g.budget())?;
        for m in b.graph.modules.iter().filter(|m| m.is_javascript()) {
            let d = b.graph.decoded(m, g.budget())?;
            by_module
                .entry(m.path_below_root().into_owned())
                .or_default()
                .insert(p.to_string(), sha256_hex(&d));
        }
        rows.push(PlatformRow {
            platform: p.to_string(),
            package: platform_package(p),
            file_sha256: sha256_hex(opened.bytes()),
            bundle_digest: digest,
            js_modules: js,
            signature: codesign::check(opened.bytes(), &b.located.info).summary,
        });
    }
    let modules: Vec<ModuleAcross> = by_module
        .into_iter()
        .map(|(name, shas)| {
            let mut variants: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for p in PLATFORMS {
                let key = shas.get(p).cloned().unwrap_or_else(|| "absent".into());
                variants.entry(key).or_default().push(p.to_string());
            }
            ModuleAcross {
                name,
                identical: variants.len() == 1,
                variants,
            }
        })
        .collect();
    // One function diff per distinct bundle digest, against the first
    // platform's: the analysis of a 20 MB bundle is the costly part.
    let mut functions = Vec::new();
    let mut seen = vec![rows[0].bundle_digest.clone()];
    for (i, r) in rows.iter().enumerate().skip(1) {
        if seen.contains(&r.bundle_digest) {
            continue;
        }
        seen.push(r.bundle_digest.clone());
        let (oa, ob) = (open(PLATFORMS[0])?, open(PLATFORMS[i])?);
        let d = self::functions(g, &g.build(&oa)?, &g.build(&ob)?)?;
        functions.push(FunctionsAcross {
            a: rows[0].platform.clone(),
            b: r.platform.clone(),
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
        });
    }
    let identical = modules.iter().all(|m| m.identical);
    let view = PlatformsView {
        version: version.to_string(),
        identical_javascript: identical,
        platforms: rows,
        modules,
        functions,
    };
    if g.json {
        out.json(g, &view)?;
    } else {
        out.text(g, &doc_platforms(&view))?;
    }
    Ok(if identical { 0 } else { 1 })
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
    let mut t = Table::new(&[
        ("platform", Align::Left),
        ("file sha256", Align::Code),
        ("bundle digest", Align::Code),
        ("signature", Align::Left),
    ]);
    for r in &v.platforms {
        t.row(vec![
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
    d.push(Block::Table(t.doc()));
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
