//! `verify --published` and `verify --platforms`: a build against the
//! package it claims to be, and one version's builds against each other.

use super::App;
use crate::analysis::integrity;
use crate::bun::digest::{bundle_digest, sha256_hex};
use crate::container::codesign;
use crate::report::emit::Output;
use crate::report::integrity::*;
use crate::source::npm::{PLATFORMS, platform_package};
use anyhow::Context;
use std::collections::BTreeMap;

pub fn published(app: &App, out: &Output, target: &str) -> anyhow::Result<i32> {
    let g = &app.g;
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
    let Some(version) = version
        .best()
        .filter(|v| crate::source::version::plausible(v))
    else {
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
    // docs/internals/performance.md).
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
            m.status == integrity::Change::Changed
                && build.graph.find(&m.name).is_some_and(|x| x.is_javascript())
        });
        if js_changed {
            let d = app.function_diff(&pbuild, &build)?;
            integrity::attach_functions(&mut view.modules, &d);
        }
    }
    out.emit(&view)?;
    Ok(if identical { 0 } else { 1 })
}

pub fn platforms(app: &App, out: &Output, version: &str) -> anyhow::Result<i32> {
    let g = &app.g;
    if !crate::source::version::plausible(version) {
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
    let modules = ModuleAcross::all(by_module, &PLATFORMS);
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
        let d = app.function_diff(&app.build(&oa)?, &app.build(&ob)?)?;
        functions.push(FunctionsAcross::of(&rows[0].platform, &r.platform, &d));
    }
    let identical = modules.iter().all(|m| m.identical);
    let view = PlatformsView {
        version: version.to_string(),
        identical_javascript: identical,
        platforms: rows,
        modules,
        functions,
    };
    out.emit(&view)?;
    Ok(if identical { 0 } else { 1 })
}
