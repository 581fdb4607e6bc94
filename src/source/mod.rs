//! Layer 3: targets. A TARGET names a build — a file, a tarball, a published
//! version (`npm:2.1.220/darwin-arm64`) or the installed `claude` — and
//! resolves to one local file, memory-mapped.

pub mod build;
pub mod cache;
pub mod config;
pub mod installs;
pub mod npm;
pub mod registry;
pub mod tarball;
pub mod transfer;
pub mod untrusted;
pub mod version;

use memmap2::Mmap;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no such file: {0}")]
    NotFound(PathBuf),
    #[error(
        "bad target {0:?}: expected a file path, npm:VERSION[/PLATFORM], installed or installed:VERSION"
    )]
    BadTarget(String),
    #[error("unknown platform {0:?} (one of: {list})", list = npm::PLATFORMS.join(", "))]
    BadPlatform(String),
    #[error(
        "no npm registry configured (set NPM_CONFIG_REGISTRY, a registry= line in .npmrc, or install npm)"
    )]
    NoRegistry,
    #[error("registry: {0}")]
    Registry(String),
    #[error("not a version: {0:?} (a version such as 2.1.220, or a dist-tag such as latest)")]
    BadVersion(String),
    #[error("network: {0}")]
    Network(String),
    #[error("{package}@{version} is not published (nor {main}@{version})", main = npm::MAIN_PACKAGE)]
    NotPublished { package: String, version: String },
    #[error("integrity check failed for {what}: expected {expected}, got {actual}")]
    Integrity {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("tarball: {0}")]
    Tarball(String),
    /// A published package without a program: the registry's placeholder
    /// releases (e.g. 0.0.0 of a platform package) are such.
    #[error("the package holds no claude, claude.exe or cli.js: nothing to analyse")]
    NoProgram,
    #[error("no installed claude found ({0})")]
    NotInstalled(String),
    #[error("{path}: not a regular file ({kind})")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{path}: larger than the {cap} bytes read from such a file")]
    TooLarge { path: PathBuf, cap: u64 },
    #[error("--root {path}: {why}")]
    BadRoot { path: PathBuf, why: String },
}

impl SourceError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> SourceError {
        SourceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A TARGET as the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Path(PathBuf),
    Npm {
        version: String,
        platform: Option<String>,
    },
    Installed {
        version: Option<String>,
    },
}

impl std::str::FromStr for Target {
    type Err = SourceError;
    fn from_str(s: &str) -> Result<Target, SourceError> {
        if let Some(rest) = s.strip_prefix("npm:") {
            let (version, platform) = match rest.split_once('/') {
                Some((v, p)) => (v, Some(p.to_string())),
                None => (rest, None),
            };
            if version.is_empty() {
                return Err(SourceError::BadTarget(s.to_string()));
            }
            if let Some(p) = &platform
                && !npm::PLATFORMS.contains(&p.as_str())
            {
                return Err(SourceError::BadPlatform(p.clone()));
            }
            return Ok(Target::Npm {
                version: version.to_string(),
                platform,
            });
        }
        if s == "installed" {
            return Ok(Target::Installed { version: None });
        }
        if let Some(v) = s.strip_prefix("installed:") {
            return Ok(Target::Installed {
                version: Some(v.to_string()),
            });
        }
        if s.is_empty() {
            return Err(SourceError::BadTarget(s.to_string()));
        }
        Ok(Target::Path(PathBuf::from(s)))
    }
}

/// How the target's file was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    File,
    Tarball,
    Npm,
    Installed,
}

/// Options shared by all target resolution.
#[derive(Clone)]
pub struct SourceOptions {
    pub cache_dir: PathBuf,
    /// Told how a download goes.
    pub progress: std::sync::Arc<dyn npm::Progress>,
}

/// A resolved target: one local file, mapped.
/// What identifies a file's content without reading it: where it is and
/// what `stat` says (as git's index trusts them). Taken before the file is
/// mapped, so a change after that point can only make it stale, never
/// make it describe content it did not see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIdentity {
    pub path: String,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
}

impl FileIdentity {
    #[cfg(unix)]
    pub fn of(path: &Path) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        let abs = std::fs::canonicalize(path).ok()?;
        Some(FileIdentity {
            path: abs.to_string_lossy().into_owned(),
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        })
    }

    #[cfg(not(unix))]
    pub fn of(_path: &Path) -> Option<FileIdentity> {
        None
    }
}

pub struct Opened {
    pub label: String,
    /// The file's identity when it was opened (None when it cannot be told).
    pub identity: Option<FileIdentity>,
    pub origin: Origin,
    pub path: PathBuf,
    /// Version from package.json, when the target came from a package.
    pub package_version: Option<String>,
    pub package_name: Option<String>,
    pub platform: Option<String>,
    /// The file's own name (names the module of a plain JavaScript target).
    pub file_name: String,
    map: Option<Mmap>,
}

impl Opened {
    pub(crate) fn new(label: String, origin: Origin, path: PathBuf) -> Result<Opened, SourceError> {
        let file = untrusted::open_regular(&path)?;
        Self::from_file(label, origin, path, file)
    }

    /// A file already opened (and checked to be a regular file).
    pub(crate) fn from_file(
        label: String,
        origin: Origin,
        path: PathBuf,
        file: std::fs::File,
    ) -> Result<Opened, SourceError> {
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "cli.js".into());
        let identity = FileIdentity::of(&path);
        Ok(Opened {
            label,
            identity,
            origin,
            map: map_opened(&path, &file)?,
            path,
            package_version: None,
            package_name: None,
            platform: None,
            file_name,
        })
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// Lets the kernel take back the pages of the file read so far: once a
    /// build's code is indexed the analyses read the index's own copies,
    /// and the mapped modules (about 80 MB of a code-split build) need not
    /// stay resident beside them. A page read again comes back from the
    /// file.
    pub fn release_pages(&self) {
        #[cfg(unix)]
        if let Some(map) = &self.map {
            // SAFETY: the mapping is read-only and private, so no page was
            // ever written: a dropped page is the file's, read again on the
            // next access (the file is a build nobody edits while we look
            // at it, as for the mapping itself).
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }
}

/// Map a file read-only. Only regular files: a FIFO or a device would block
/// or never end (see [`untrusted`]). The mapping is only read; the file is a
/// build nobody edits while we look at it.
pub fn map_file(path: &Path) -> Result<Option<Mmap>, SourceError> {
    map_opened(path, &untrusted::open_regular(path)?)
}

fn map_opened(path: &Path, file: &std::fs::File) -> Result<Option<Mmap>, SourceError> {
    let meta = file.metadata().map_err(|e| SourceError::io(path, e))?;
    if !meta.is_file() {
        return Err(SourceError::NotRegular {
            path: path.to_path_buf(),
            kind: untrusted::kind_of(meta.file_type()),
        });
    }
    if meta.len() == 0 {
        return Ok(None);
    }
    // SAFETY: read-only mapping of a regular file; see the doc comment.
    let map = unsafe { Mmap::map(file) }.map_err(|e| SourceError::io(path, e))?;
    Ok(Some(map))
}

impl Target {
    pub fn open(&self, opts: &SourceOptions) -> Result<Opened, SourceError> {
        match self {
            Target::Path(p) => open_path(p, opts),
            Target::Npm { version, platform } => {
                let platform = platform
                    .clone()
                    .unwrap_or_else(|| npm::host_platform().to_string());
                let b = npm::fetch(
                    version,
                    &platform,
                    &npm::FetchOptions {
                        cache_dir: opts.cache_dir.clone(),
                        progress: opts.progress.clone(),
                    },
                )?;
                let mut o = Opened::new(
                    format!("npm:{}/{}", b.version, platform),
                    Origin::Npm,
                    b.program,
                )?;
                o.package_version = Some(b.version);
                o.package_name = Some(b.package);
                o.platform = Some(platform);
                Ok(o)
            }
            Target::Installed { version } => installs::open_installed(version.as_deref()),
        }
    }
}

fn open_path(p: &Path, opts: &SourceOptions) -> Result<Opened, SourceError> {
    let opened = Opened::new(p.display().to_string(), Origin::File, p.to_path_buf())?;
    if opened.bytes().starts_with(&[0x1f, 0x8b]) {
        return open_tarball(p, opened.bytes(), opts);
    }
    Ok(opened)
}

/// A `.tgz` is unpacked once into the cache, keyed by its SHA-256.
fn open_tarball(p: &Path, bytes: &[u8], opts: &SourceOptions) -> Result<Opened, SourceError> {
    let key = hex::encode(Sha256::digest(bytes));
    let dir = opts.cache_dir.join("tarballs").join(&key[..32]);
    let done = dir.join(".complete");
    if !done.exists() {
        std::fs::create_dir_all(&dir).map_err(|e| SourceError::io(&dir, e))?;
        tarball::unpack(bytes, &dir)?;
        std::fs::write(&done, p.display().to_string()).map_err(|e| SourceError::io(&done, e))?;
    }
    let program = tarball::PROGRAM_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .ok_or(SourceError::NoProgram)?;
    let pj = dir.join("package.json");
    let name = tarball::package_name(&pj);
    let platform = name
        .as_deref()
        .and_then(|n| n.strip_prefix(npm::MAIN_PACKAGE))
        .and_then(|rest| rest.strip_prefix('-'))
        .map(str::to_string);
    let mut o = Opened::new(p.display().to_string(), Origin::Tarball, program)?;
    o.package_version = tarball::package_version(&pj);
    o.package_name = name;
    o.platform = platform;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        assert_eq!(
            "npm:2.1.220/darwin-arm64".parse::<Target>().unwrap(),
            Target::Npm {
                version: "2.1.220".into(),
                platform: Some("darwin-arm64".into())
            }
        );
        assert_eq!(
            "npm:2.1.220".parse::<Target>().unwrap(),
            Target::Npm {
                version: "2.1.220".into(),
                platform: None
            }
        );
        assert!("npm:2.1.220/plan9".parse::<Target>().is_err());
        assert!("npm:".parse::<Target>().is_err());
        assert_eq!(
            "installed:2.1.260".parse::<Target>().unwrap(),
            Target::Installed {
                version: Some("2.1.260".into())
            }
        );
        assert_eq!(
            "./claude".parse::<Target>().unwrap(),
            Target::Path("./claude".into())
        );
    }
}
