//! Claude Code installations on a machine, and which one the shell runs.
//!
//! Looks where each installer puts Claude Code — the native installer
//! (`~/.local/bin/claude` → `~/.local/share/claude/versions/<v>`), npm,
//! pnpm and bun global packages, the old local install (`~/.claude/local`),
//! Homebrew casks, Nix-style wrappers — and at every `claude` on `PATH`,
//! following symlinks and wrapper scripts. `root` lets a whole other file
//! system tree be inspected: every absolute path is taken inside it.

use super::build::Build;
use super::{Opened, Origin};
use regex::Regex;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstallKind {
    Native,
    Npm,
    Pnpm,
    Bun,
    Local,
    Homebrew,
    Nix,
    Path,
}

#[derive(Debug, Clone, Serialize)]
pub struct Install {
    /// Where it was found (a PATH entry, an installer's location).
    pub path: String,
    /// The file that runs, after symlinks and wrapper scripts.
    pub resolved: String,
    pub kind: InstallKind,
    pub version: Option<String>,
    /// SHA-256 of the entry module's stored bytes.
    pub bundle_sha256: Option<String>,
    pub selected: bool,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    pub root: String,
    pub installs: Vec<Install>,
    pub selected: Option<String>,
    pub warnings: Vec<String>,
}

/// Where to look: a root, and the HOME, PATH and CLAUDE_CONFIG_DIR as seen inside it.
#[derive(Debug, Clone)]
pub struct Scope {
    pub root: PathBuf,
    pub home: Option<PathBuf>,
    pub path: Vec<PathBuf>,
    pub config_dir: Option<PathBuf>,
}

impl Scope {
    pub fn from_env(root: Option<PathBuf>) -> Scope {
        Scope {
            root: root.unwrap_or_else(|| PathBuf::from("/")),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            path: std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            config_dir: std::env::var_os("CLAUDE_CONFIG_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        }
    }

    /// A path as the machine sees it → the file in this tree.
    fn inside(&self, p: &Path) -> PathBuf {
        let rel: PathBuf = p
            .components()
            .filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
            .collect();
        self.root.join(rel)
    }

    /// A file in this tree → the path as the machine sees it.
    fn outside(&self, p: &Path) -> String {
        match p.strip_prefix(&self.root) {
            Ok(rel) => format!("/{}", rel.display()),
            Err(_) => p.display().to_string(),
        }
    }
}

static EXEC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^\s*exec\s+(?:-a\s+\S+\s+)?["']?(/[^"'\s]+)["']?"#).unwrap()
});

/// Follow symlinks (inside the tree) and `exec` lines of wrapper scripts.
fn resolve(scope: &Scope, start: &Path) -> PathBuf {
    let mut p = start.to_path_buf();
    for _ in 0..40 {
        if let Ok(target) = std::fs::read_link(&p) {
            p = if target.is_absolute() {
                scope.inside(&target)
            } else {
                normalise(&p.parent().unwrap_or(Path::new("/")).join(target))
            };
            continue;
        }
        // A small text file starting with #! that execs another file.
        let Ok(meta) = std::fs::metadata(&p) else {
            break;
        };
        if meta.len() < 64 << 10
            && let Ok(text) = std::fs::read_to_string(&p)
            && text.starts_with("#!")
            && let Some(c) = EXEC.captures(&text)
        {
            let next = scope.inside(Path::new(&c[1]));
            if next != p && next.exists() {
                p = next;
                continue;
            }
        }
        break;
    }
    p
}

fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

fn package_version(dir: &Path) -> Option<String> {
    super::tarball::package_version(&dir.join("package.json"))
}

/// Kind and version from where the file lives.
fn classify(scope: &Scope, resolved: &Path) -> (InstallKind, Option<String>) {
    let s = scope.outside(resolved);
    if let Some(rest) = s.split("/.local/share/claude/versions/").nth(1) {
        return (
            InstallKind::Native,
            Some(rest.split('/').next().unwrap_or(rest).to_string()),
        );
    }
    if let Some(i) = s.find("/node_modules/@anthropic-ai/claude-code") {
        let pkg = scope.inside(Path::new(
            &s[..i + "/node_modules/@anthropic-ai/claude-code".len()],
        ));
        // The old local install lives in <config dir>/local/node_modules.
        let kind = if s.contains("/local/node_modules/@anthropic-ai/claude-code") {
            InstallKind::Local
        } else if s.contains("/pnpm/") {
            InstallKind::Pnpm
        } else if s.contains("/.bun/") {
            InstallKind::Bun
        } else {
            InstallKind::Npm
        };
        return (kind, package_version(&pkg));
    }
    if let Some(rest) = s.split("/Caskroom/claude-code/").nth(1) {
        return (
            InstallKind::Homebrew,
            rest.split('/').next().map(str::to_string),
        );
    }
    if s.starts_with("/nix/store/") {
        return (InstallKind::Nix, None);
    }
    (InstallKind::Path, None)
}

fn children(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The program a global npm-style package runs.
fn package_program(pkg: &Path) -> Option<PathBuf> {
    ["bin/claude.exe", "bin/claude", "cli.js"]
        .iter()
        .map(|r| pkg.join(r))
        .find(|p| p.is_file())
}

/// Every place an installer may have put Claude Code, as paths in the tree.
fn candidates(scope: &Scope) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let pkg = "lib/node_modules/@anthropic-ai/claude-code";
    if let Some(home) = &scope.home {
        let h = scope.inside(home);
        out.push(h.join(".local/bin/claude"));
        out.extend(children(&h.join(".local/share/claude/versions")));
        for prefix in [".npm-global", ".local", ".npm"] {
            out.extend(package_program(&h.join(prefix).join(pkg)));
        }
        for store in children(&h.join(".local/share/pnpm/global")) {
            out.extend(package_program(
                &store.join("node_modules/@anthropic-ai/claude-code"),
            ));
        }
        out.extend(package_program(&h.join(
            ".bun/install/global/node_modules/@anthropic-ai/claude-code",
        )));
    }
    let claude_dir = match (&scope.config_dir, &scope.home) {
        (Some(d), _) => Some(scope.inside(d)),
        (None, Some(h)) => Some(scope.inside(h).join(".claude")),
        _ => None,
    };
    if let Some(d) = claude_dir {
        out.push(d.join("local/claude"));
        out.extend(package_program(
            &d.join("local/node_modules/@anthropic-ai/claude-code"),
        ));
    }
    for prefix in ["/usr/local", "/usr", "/opt/homebrew"] {
        out.extend(package_program(&scope.inside(Path::new(prefix)).join(pkg)));
    }
    for cask in [
        "/opt/homebrew/Caskroom/claude-code",
        "/usr/local/Caskroom/claude-code",
    ] {
        for v in children(&scope.inside(Path::new(cask))) {
            out.push(v.join("claude"));
        }
    }
    out.retain(|p| p.symlink_metadata().is_ok());
    out
}

/// The bundle facts of one program, when it is a readable build.
fn bundle_facts(resolved: &Path) -> (Option<String>, Option<String>, Option<String>) {
    let opened = match Opened::new(
        resolved.display().to_string(),
        Origin::Installed,
        resolved.to_path_buf(),
    ) {
        Ok(o) => o,
        Err(e) => return (None, None, Some(e.to_string())),
    };
    match Build::open(&opened, &Default::default()) {
        Ok(b) => (
            Some(crate::bun::digest::sha256_hex(
                b.graph.entry_module().contents,
            )),
            b.version().bundle,
            None,
        ),
        // npm leaves a small stand-in when the platform package is missing.
        Err(_) if opened.bytes().len() < 64 << 10 => (
            None,
            None,
            Some("placeholder (the platform package is missing)".into()),
        ),
        Err(e) => (None, None, Some(e.to_string())),
    }
}

pub fn scan(scope: &Scope) -> InstallReport {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut selected: Option<PathBuf> = None;
    // PATH first: its order decides what the shell runs.
    for dir in &scope.path {
        let c = scope.inside(dir).join("claude");
        // The entry itself (a symlink may point at a path only valid inside the tree).
        if c.symlink_metadata().is_ok() {
            let r = resolve(scope, &c);
            selected.get_or_insert(r.clone());
            found.push((c, r));
        }
    }
    for c in candidates(scope) {
        let r = resolve(scope, &c);
        found.push((c, r));
    }
    let mut installs: Vec<Install> = Vec::new();
    for (path, resolved) in found {
        if installs
            .iter()
            .any(|i| i.resolved == scope.outside(&resolved))
        {
            continue;
        }
        let (kind, from_path) = classify(scope, &resolved);
        let (sha, bundle_version, note) = bundle_facts(&resolved);
        installs.push(Install {
            path: scope.outside(&path),
            resolved: scope.outside(&resolved),
            kind,
            version: from_path.or(bundle_version),
            bundle_sha256: sha,
            selected: selected.as_ref() == Some(&resolved),
            note,
        });
    }
    let mut warnings = Vec::new();
    let mut versions: Vec<&str> = installs
        .iter()
        .filter_map(|i| i.version.as_deref())
        .collect();
    versions.sort();
    versions.dedup();
    let chosen = installs.iter().find(|i| i.selected);
    if versions.len() > 1 {
        warnings.push(format!(
            "{} versions are installed ({}); the shell runs {}",
            versions.len(),
            versions.join(", "),
            chosen.map_or("none of them (no claude on PATH)".into(), |c| format!(
                "{} ({})",
                c.version.as_deref().unwrap_or("unknown version"),
                c.resolved
            ))
        ));
    }
    if chosen.is_none() && !installs.is_empty() {
        warnings.push("no claude on PATH: none of these is what the shell runs".into());
    }
    InstallReport {
        root: scope.root.display().to_string(),
        selected: chosen.map(|c| c.resolved.clone()),
        installs,
        warnings,
    }
}

/// The file for TARGET `installed` (the selected one) or `installed:VERSION`.
pub fn installed_path(version: Option<&str>) -> Result<PathBuf, super::SourceError> {
    let scope = Scope::from_env(None);
    let report = scan(&scope);
    let pick = match version {
        Some(v) => report
            .installs
            .iter()
            .find(|i| i.version.as_deref() == Some(v)),
        None => report.installs.iter().find(|i| i.selected),
    };
    match pick {
        Some(i) => Ok(scope.inside(Path::new(&i.resolved))),
        None => Err(super::SourceError::NotInstalled(match version {
            Some(v) => format!("no installation of version {v} (see `cc-teardown installs`)"),
            None => "no claude on PATH; name a build instead, e.g. npm:2.1.220/darwin-arm64".into(),
        })),
    }
}
