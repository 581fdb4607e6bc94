//! npm package tarballs (`.tgz`): the executable (`package/claude`,
//! `package/claude.exe`) or, in versions before native builds, `package/cli.js`,
//! plus `package/package.json`. Only those known names are ever written, so a
//! hostile archive cannot place files elsewhere.

use super::SourceError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files we take out of a package, in order of preference for the target.
pub const PROGRAM_NAMES: [&str; 3] = ["claude", "claude.exe", "cli.js"];

/// What an unpacked package holds.
#[derive(Debug, Clone)]
pub struct Unpacked {
    pub program: PathBuf,
    pub package_json: Option<PathBuf>,
}

/// The largest single file we unpack (the biggest real build is ~400 MB).
const MAX_ENTRY: u64 = 2 << 30;

/// Unpack the program and package.json of `tgz` into `dir` (which must exist).
pub fn unpack(tgz: impl Read, dir: &Path) -> Result<Unpacked, SourceError> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let mut program: Option<(usize, PathBuf)> = None;
    let mut package_json = None;
    let entries = archive
        .entries()
        .map_err(|e| SourceError::Tarball(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| SourceError::Tarball(e.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(|e| SourceError::Tarball(e.to_string()))?;
        // npm packs everything under one top folder, normally `package/`.
        let mut parts = path.components();
        parts.next();
        let rest = parts.as_path().to_string_lossy().to_string();
        let rank = PROGRAM_NAMES.iter().position(|n| *n == rest);
        let keep = rank.is_some() || rest == "package.json";
        if !keep {
            continue;
        }
        if entry.size() > MAX_ENTRY {
            return Err(SourceError::Tarball(format!(
                "{rest} is larger than {MAX_ENTRY} bytes"
            )));
        }
        let out = dir.join(&rest);
        let mut f = std::fs::File::create(&out).map_err(|e| SourceError::io(&out, e))?;
        std::io::copy(&mut (&mut entry).take(MAX_ENTRY), &mut f)
            .map_err(|e| SourceError::io(&out, e))?;
        if let Some(r) = rank {
            if program.as_ref().is_none_or(|(best, _)| r < *best) {
                program = Some((r, out));
            }
        } else {
            package_json = Some(out);
        }
    }
    let (_, program) = program.ok_or(SourceError::NoProgram)?;
    Ok(Unpacked {
        program,
        package_json,
    })
}

/// The most of a package.json we read (real ones are a few kilobytes).
pub const MAX_PACKAGE_JSON: u64 = 1 << 20;

/// A string field of a package.json's text.
pub fn package_field(text: &[u8], field: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(text).ok()?;
    v.get(field)?.as_str().map(str::to_string)
}

fn read_package_json(package_json: &Path) -> Option<Vec<u8>> {
    let f = super::untrusted::open_regular(package_json).ok()?;
    super::untrusted::read_capped(package_json, f, MAX_PACKAGE_JSON).ok()
}

/// `version` from a package.json.
pub fn package_version(package_json: &Path) -> Option<String> {
    package_field(&read_package_json(package_json)?, "version")
}

/// `name` from a package.json.
pub fn package_name(package_json: &Path) -> Option<String> {
    package_field(&read_package_json(package_json)?, "name")
}
