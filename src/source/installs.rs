//! Claude Code installations on a machine, and which one the shell runs.
//!
//! Looks where each installer puts Claude Code — the native installer
//! (`~/.local/bin/claude` → `~/.local/share/claude/versions/<v>`), npm,
//! pnpm and bun global packages, the old local install (`~/.claude/local`),
//! Homebrew casks, Nix-style wrappers — and at every `claude` on `PATH`,
//! following symlinks and wrapper scripts. `root` lets a whole other file
//! system tree be inspected: every absolute path is taken inside it, and
//! resolution never leaves it (see docs/internals/security.md).
//!
//! What the scan finds was put there by someone else: only regular files are
//! opened (never through a link, never a FIFO or device), reads are capped,
//! and the scan as a whole is bounded in entries and time.

use super::build::Build;
use super::{Opened, Origin, SourceError, untrusted};
use regex::Regex;
use serde::Serialize;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

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

/// An entry that was found but not read: a FIFO, a device, a link that
/// leads nowhere or in a loop, or one left when the scan ran out of time.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub path: String,
    /// Where it led, when it got somewhere.
    pub resolved: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    pub root: String,
    pub installs: Vec<Install>,
    pub selected: Option<String>,
    pub skipped: Vec<Skipped>,
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
    /// The scope of this machine (`root` None) or of the tree at `root`,
    /// which must be an existing folder.
    pub fn from_env(root: Option<PathBuf>) -> Result<Scope, SourceError> {
        let root = match root {
            None => PathBuf::from("/"),
            Some(r) => {
                let bad = |why: String| SourceError::BadRoot {
                    path: r.clone(),
                    why,
                };
                // The user's own path may involve links; below it, none is
                // followed out of the tree (see `resolve_in_tree`).
                let c = std::fs::canonicalize(&r).map_err(|e| bad(e.to_string()))?;
                if !c.is_dir() {
                    return Err(bad("not a directory".into()));
                }
                c
            }
        };
        Ok(Scope {
            root,
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            path: std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            config_dir: std::env::var_os("CLAUDE_CONFIG_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        })
    }
}

/// Bounds of one scan: a hostile tree must not keep it busy for long.
const MAX_LINKS: u32 = 40;
/// Path components walked while resolving one path (links included).
const MAX_STEPS: usize = 4096;
/// Wrapper scripts followed from one entry.
const MAX_WRAPPERS: usize = 8;
/// The largest wrapper script read, and the most of a folder listed.
const MAX_SCRIPT: u64 = 64 << 10;
const MAX_CHILDREN: usize = 256;
/// Entries examined in one scan (PATH entries and installers' locations).
const MAX_ENTRIES: usize = 512;
/// The largest program examined (the biggest real build is ~400 MB).
const MAX_PROGRAM: u64 = 2 << 30;
/// Time for the whole scan; what is left when it runs out is reported as
/// skipped.
const DEADLINE: Duration = Duration::from_secs(30);

/// A path inside the tree, resolved: its components below the root, none of
/// them a link (when it was checked).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
struct InTree(Vec<OsString>);

impl InTree {
    /// As the machine sees it: `/a/b`.
    fn machine(&self) -> String {
        let mut s = String::new();
        for c in &self.0 {
            s.push('/');
            s.push_str(&c.to_string_lossy());
        }
        if s.is_empty() {
            s.push('/');
        }
        s
    }

    /// Where it is on this machine.
    fn host(&self, scope: &Scope) -> PathBuf {
        let mut p = scope.root.clone();
        p.extend(&self.0);
        p
    }

    /// Open it for reading, never through a link and only if it is a
    /// regular file.
    fn open(&self, scope: &Scope) -> Result<std::fs::File, SourceError> {
        untrusted::open_below(&scope.root, &self.0, Path::new(&self.machine()))
    }

    /// Its type, looked at without following anything.
    fn file_type(&self, scope: &Scope) -> Option<std::fs::FileType> {
        std::fs::symlink_metadata(self.host(scope))
            .ok()
            .map(|m| m.file_type())
    }
}

/// One step of a path: a name or `..`.
fn steps(p: &Path) -> impl Iterator<Item = OsString> + '_ {
    p.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    })
}

/// Why a path could not be followed inside the tree.
#[derive(Debug, thiserror::Error)]
enum TreeError {
    #[error("path longer than {MAX_STEPS} components")]
    TooLong,
    #[error("more than {MAX_LINKS} links (a loop?) at {path}")]
    TooManyLinks { path: String },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
}

/// Resolve `machine` (a path as the machine sees it) inside the tree, the
/// way `openat2(RESOLVE_IN_ROOT)` does: `..` stops at the root, a link's
/// absolute target starts again from the root, and at most `MAX_LINKS`
/// links are followed in all (`hops` carries the count across calls).
/// `Ok(None)` when some component does not exist.
fn resolve_in_tree(
    scope: &Scope,
    machine: &Path,
    hops: &mut u32,
) -> Result<Option<InTree>, TreeError> {
    let mut todo: VecDeque<OsString> = steps(machine).collect();
    let mut cur = InTree::default();
    let mut walked = 0usize;
    while let Some(c) = todo.pop_front() {
        walked += 1;
        if walked > MAX_STEPS {
            return Err(TreeError::TooLong);
        }
        if c == ".." {
            cur.0.pop();
            continue;
        }
        cur.0.push(c);
        let meta = match std::fs::symlink_metadata(cur.host(scope)) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(TreeError::Io {
                    path: cur.machine(),
                    error,
                });
            }
        };
        if meta.file_type().is_symlink() {
            *hops += 1;
            if *hops > MAX_LINKS {
                return Err(TreeError::TooManyLinks {
                    path: cur.machine(),
                });
            }
            let target = std::fs::read_link(cur.host(scope)).map_err(|error| TreeError::Io {
                path: cur.machine(),
                error,
            })?;
            cur.0.pop();
            if target.has_root() {
                cur.0.clear();
            }
            for (i, s) in steps(&target).enumerate() {
                todo.insert(i, s);
            }
        } else if !todo.is_empty() && !meta.is_dir() {
            return Ok(None);
        }
    }
    Ok(Some(cur))
}

static EXEC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^\s*exec\s+(?:-a\s+\S+\s+)?["']?(/[^"'\s]+)["']?"#).unwrap()
});

/// Where an entry leads.
enum Followed {
    /// A regular file: the program that runs.
    Program(InTree),
    /// Anything else, with where it led (when it got somewhere) and why it
    /// is not examined.
    Skipped(Option<InTree>, String),
}

/// Follow links (inside the tree) and `exec` lines of wrapper scripts from
/// the entry at `machine`.
fn follow(scope: &Scope, machine: &Path) -> Followed {
    let mut hops = 0;
    let mut p = match resolve_in_tree(scope, machine, &mut hops) {
        Ok(Some(p)) => p,
        Ok(None) => return Followed::Skipped(None, "leads to nothing that exists".into()),
        Err(e) => return Followed::Skipped(None, e.to_string()),
    };
    for _ in 0..MAX_WRAPPERS {
        match p.file_type(scope) {
            Some(t) if t.is_file() => {}
            Some(t) => {
                let why = format!("{} (only regular files are read)", untrusted::kind_of(t));
                return Followed::Skipped(Some(p), why);
            }
            None => return Followed::Skipped(Some(p), "vanished while being read".into()),
        }
        // A small text file starting with #! that execs another file.
        let Some(text) = p
            .open(scope)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.len() <= MAX_SCRIPT))
            .and_then(|f| untrusted::read_capped(Path::new(&p.machine()), f, MAX_SCRIPT).ok())
        else {
            break;
        };
        if !text.starts_with(b"#!") {
            break;
        }
        let text = String::from_utf8_lossy(&text);
        let Some(c) = EXEC.captures(&text) else {
            break;
        };
        match resolve_in_tree(scope, Path::new(&c[1]), &mut hops) {
            Ok(Some(next)) if next != p => p = next,
            Ok(_) => break,
            Err(e) => return Followed::Skipped(Some(p), e.to_string()),
        }
    }
    Followed::Program(p)
}

/// `version` of the package.json in the package folder `pkg`.
fn package_version(scope: &Scope, pkg: &str) -> Option<String> {
    let pj = resolve_in_tree(scope, &Path::new(pkg).join("package.json"), &mut 0).ok()??;
    let f = pj.open(scope).ok()?;
    let text = untrusted::read_capped(
        Path::new(&pj.machine()),
        f,
        super::tarball::MAX_PACKAGE_JSON,
    )
    .ok()?;
    super::tarball::package_field(&text, "version")
}

/// Kind and version from where the file lives.
fn classify(scope: &Scope, resolved: &InTree) -> (InstallKind, Option<String>) {
    let s = resolved.machine();
    if let Some(rest) = s.split("/.local/share/claude/versions/").nth(1) {
        return (
            InstallKind::Native,
            Some(rest.split('/').next().unwrap_or(rest).to_string()),
        );
    }
    if let Some(i) = s.find("/node_modules/@anthropic-ai/claude-code") {
        let pkg = &s[..i + "/node_modules/@anthropic-ai/claude-code".len()];
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
        return (kind, package_version(scope, pkg));
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

/// A scan under way: what it found, and its bounds.
struct Scan<'s> {
    scope: &'s Scope,
    started: Instant,
    warnings: Vec<String>,
}

impl Scan<'_> {
    /// The entries of a folder (as machine paths below `dir`), at most
    /// `MAX_CHILDREN`, sorted.
    fn children(&mut self, dir: &Path) -> Vec<PathBuf> {
        let Ok(Some(d)) = resolve_in_tree(self.scope, dir, &mut 0) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(d.host(self.scope)) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = Vec::new();
        for e in entries.flatten() {
            if v.len() == MAX_CHILDREN {
                self.warnings.push(format!(
                    "{} has more than {MAX_CHILDREN} entries; only {MAX_CHILDREN} were looked at",
                    d.machine()
                ));
                break;
            }
            v.push(Path::new(&d.machine()).join(e.file_name()));
        }
        v.sort();
        v
    }

    /// Whether an entry is there (a dangling link counts: it is reported).
    fn exists(&self, machine: &Path) -> bool {
        let (Some(parent), Some(name)) = (machine.parent(), machine.file_name()) else {
            return false;
        };
        match resolve_in_tree(self.scope, parent, &mut 0) {
            Ok(Some(mut d)) => {
                d.0.push(name.to_os_string());
                d.file_type(self.scope).is_some()
            }
            _ => false,
        }
    }

    /// The program a global npm-style package runs.
    fn package_program(&self, pkg: &Path) -> Option<PathBuf> {
        ["bin/claude.exe", "bin/claude", "cli.js"]
            .iter()
            .map(|r| pkg.join(r))
            .find(|p| {
                matches!(resolve_in_tree(self.scope, p, &mut 0), Ok(Some(t))
                    if t.file_type(self.scope).is_some_and(|t| t.is_file()))
            })
    }

    /// Every place an installer may have put Claude Code, as machine paths.
    fn candidates(&mut self) -> Vec<PathBuf> {
        let scope = self.scope;
        let abs = |p: &Path| Path::new("/").join(p);
        let mut out = Vec::new();
        let pkg = "lib/node_modules/@anthropic-ai/claude-code";
        if let Some(home) = &scope.home {
            let h = abs(home);
            out.push(h.join(".local/bin/claude"));
            out.extend(self.children(&h.join(".local/share/claude/versions")));
            for prefix in [".npm-global", ".local", ".npm"] {
                out.extend(self.package_program(&h.join(prefix).join(pkg)));
            }
            for store in self.children(&h.join(".local/share/pnpm/global")) {
                out.extend(
                    self.package_program(&store.join("node_modules/@anthropic-ai/claude-code")),
                );
            }
            out.extend(self.package_program(
                &h.join(".bun/install/global/node_modules/@anthropic-ai/claude-code"),
            ));
        }
        let claude_dir = match (&scope.config_dir, &scope.home) {
            (Some(d), _) => Some(abs(d)),
            (None, Some(h)) => Some(abs(h).join(".claude")),
            _ => None,
        };
        if let Some(d) = claude_dir {
            out.push(d.join("local/claude"));
            out.extend(
                self.package_program(&d.join("local/node_modules/@anthropic-ai/claude-code")),
            );
        }
        for prefix in ["/usr/local", "/usr", "/opt/homebrew"] {
            out.extend(self.package_program(&Path::new(prefix).join(pkg)));
        }
        for cask in [
            "/opt/homebrew/Caskroom/claude-code",
            "/usr/local/Caskroom/claude-code",
        ] {
            for v in self.children(Path::new(cask)) {
                out.push(v.join("claude"));
            }
        }
        out.retain(|p| self.exists(p));
        out
    }
}

/// What the bundle of one program says, when it is a readable build.
#[derive(Default)]
struct BundleFacts {
    /// SHA-256 of the entry module's stored bytes.
    sha256: Option<String>,
    /// The version the bundle states.
    version: Option<String>,
    /// Why it could not be read.
    note: Option<String>,
}

impl BundleFacts {
    fn unreadable(why: String) -> BundleFacts {
        BundleFacts {
            note: Some(why),
            ..BundleFacts::default()
        }
    }
}

/// The bundle facts of one program.
fn bundle_facts(scope: &Scope, resolved: &InTree) -> BundleFacts {
    let machine = resolved.machine();
    let opened = match resolved.open(scope).and_then(|f| {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len > MAX_PROGRAM {
            return Err(SourceError::TooLarge {
                path: PathBuf::from(&machine),
                cap: MAX_PROGRAM,
            });
        }
        Opened::from_file(machine.clone(), Origin::Installed, resolved.host(scope), f)
    }) {
        Ok(o) => o,
        Err(e) => return BundleFacts::unreadable(e.to_string()),
    };
    match Build::open(&opened, &Default::default()) {
        Ok(b) => BundleFacts {
            sha256: Some(crate::bun::digest::sha256_hex(
                b.graph.entry_module().contents,
            )),
            version: b.version().bundle,
            note: None,
        },
        // npm leaves a small stand-in when the platform package is missing.
        Err(_) if opened.bytes().len() < 64 << 10 => {
            BundleFacts::unreadable("placeholder (the platform package is missing)".into())
        }
        Err(e) => BundleFacts::unreadable(e.to_string()),
    }
}

pub fn scan(scope: &Scope) -> InstallReport {
    let mut s = Scan {
        scope,
        started: Instant::now(),
        warnings: Vec::new(),
    };
    // PATH first: its order decides what the shell runs.
    let mut entries: Vec<(PathBuf, bool)> = Vec::new();
    for dir in &scope.path {
        if s.started.elapsed() > DEADLINE {
            break;
        }
        let c = Path::new("/").join(dir).join("claude");
        // The entry itself (a symlink may point at a path only valid inside the tree).
        if s.exists(&c) {
            entries.push((c, true));
        }
        if entries.len() >= MAX_ENTRIES {
            break;
        }
    }
    for c in s.candidates() {
        entries.push((c, false));
    }
    // An entry both on PATH and at an installer's location is looked at once.
    let mut seen = std::collections::HashSet::new();
    entries.retain(|(p, _)| seen.insert(p.clone()));
    if entries.len() > MAX_ENTRIES {
        s.warnings.push(format!(
            "{} places to look at; only the first {MAX_ENTRIES} were examined",
            entries.len()
        ));
        entries.truncate(MAX_ENTRIES);
    }
    let mut installs: Vec<Install> = Vec::new();
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut selected: Option<String> = None;
    let mut out_of_time = false;
    for (path, on_path) in entries {
        if s.started.elapsed() > DEADLINE {
            out_of_time = true;
            skipped.push(Skipped {
                path: path.display().to_string(),
                resolved: None,
                reason: format!(
                    "not examined: the scan's {} s were used up",
                    DEADLINE.as_secs()
                ),
            });
            continue;
        }
        let resolved = match follow(scope, &path) {
            Followed::Program(r) => r,
            Followed::Skipped(r, reason) => {
                skipped.push(Skipped {
                    path: path.display().to_string(),
                    resolved: r.map(|r| r.machine()),
                    reason,
                });
                continue;
            }
        };
        let machine = resolved.machine();
        if on_path {
            selected.get_or_insert(machine.clone());
        }
        if installs.iter().any(|i| i.resolved == machine) {
            continue;
        }
        let (kind, from_path) = classify(scope, &resolved);
        let bundle = bundle_facts(scope, &resolved);
        installs.push(Install {
            path: path.display().to_string(),
            selected: selected.as_ref() == Some(&machine),
            resolved: machine,
            kind,
            version: from_path.or(bundle.version),
            bundle_sha256: bundle.sha256,
            note: bundle.note,
        });
    }
    let mut warnings = std::mem::take(&mut s.warnings);
    if out_of_time {
        warnings.push(format!(
            "the scan stopped after {} s; entries left are listed as skipped",
            DEADLINE.as_secs()
        ));
    }
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
        skipped,
        warnings,
    }
}

/// TARGET `installed` (the selected one) or `installed:VERSION`, opened
/// the way the scan read it.
pub fn open_installed(version: Option<&str>) -> Result<Opened, SourceError> {
    let scope = Scope::from_env(None)?;
    let report = scan(&scope);
    let pick = match version {
        Some(v) => report
            .installs
            .iter()
            .find(|i| i.version.as_deref() == Some(v)),
        None => report.installs.iter().find(|i| i.selected),
    };
    let Some(pick) = pick else {
        return Err(SourceError::NotInstalled(match version {
            Some(v) => format!("no installation of version {v} (see `cc-teardown installs`)"),
            None => "no claude on PATH; name a build instead, e.g. npm:2.1.220/darwin-arm64".into(),
        }));
    };
    let label = match version {
        Some(v) => format!("installed:{v}"),
        None => "installed".into(),
    };
    let resolved = resolve_in_tree(&scope, Path::new(&pick.resolved), &mut 0)
        .ok()
        .flatten()
        .ok_or_else(|| SourceError::NotFound(PathBuf::from(&pick.resolved)))?;
    let file = resolved.open(&scope)?;
    Opened::from_file(label, Origin::Installed, resolved.host(&scope), file)
}
