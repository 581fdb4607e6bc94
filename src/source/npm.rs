//! Fetch published Claude Code builds from the npm registry, verify them
//! against the registry's integrity, and keep them in the cache.

use super::cache::EntryLock;
use super::tarball::{self, Unpacked};
use super::transfer::{self, BodyWatch, NetLimits};
use super::{SourceError, registry};
use base64::Engine;
use sha2::{Digest, Sha512};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const PLATFORMS: [&str; 8] = [
    "darwin-arm64",
    "darwin-x64",
    "linux-x64",
    "linux-arm64",
    "linux-x64-musl",
    "linux-arm64-musl",
    "win32-x64",
    "win32-arm64",
];

/// The main package, which before native builds shipped `cli.js`.
pub const MAIN_PACKAGE: &str = "@anthropic-ai/claude-code";

pub fn platform_package(platform: &str) -> String {
    format!("{MAIN_PACKAGE}-{platform}")
}

/// The platform this program runs on, in Claude Code's package naming.
pub fn host_platform() -> &'static str {
    let musl = cfg!(target_env = "musl")
        || std::fs::read_dir("/lib")
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("ld-musl"))
            })
            .unwrap_or(false);
    match (std::env::consts::OS, std::env::consts::ARCH, musl) {
        ("macos", "aarch64", _) => "darwin-arm64",
        ("macos", _, _) => "darwin-x64",
        ("windows", "aarch64", _) => "win32-arm64",
        ("windows", _, _) => "win32-x64",
        (_, "aarch64", true) => "linux-arm64-musl",
        (_, "aarch64", false) => "linux-arm64",
        (_, _, true) => "linux-x64-musl",
        _ => "linux-x64",
    }
}

/// A build in the cache.
#[derive(Debug, Clone)]
pub struct CachedBuild {
    pub package: String,
    pub version: String,
    pub platform: String,
    pub program: PathBuf,
    pub package_json: Option<PathBuf>,
    pub integrity: String,
    /// True when nothing was downloaded.
    pub cache_hit: bool,
}

#[derive(Clone)]
pub struct FetchOptions {
    pub cache_dir: PathBuf,
    /// Told how a download goes (the CLI draws it; [`Silent`] ignores it).
    pub progress: Arc<dyn Progress>,
}

/// What a download reports as it goes, for whoever shows it: the library
/// draws nothing itself, the CLI draws a progress bar on a terminal.
pub trait Progress: Send + Sync {
    /// A download of `what` starts; `total` bytes when the server says.
    fn start(&self, what: &str, total: Option<u64>);
    /// `bytes` more bytes arrived.
    fn advance(&self, bytes: u64);
    /// The download ended, whether it succeeded or not.
    fn finish(&self);
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// Calls [`Progress::finish`] however the download ends.
struct Finish<'a>(&'a dyn Progress);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

fn agent(limits: &NetLimits) -> ureq::Agent {
    // The platform's trust store, as npm uses: registries are often reached
    // through a corporate proxy whose CA only the system knows.
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_connect(Some(limits.connect))
        .timeout_per_read(Some(limits.read))
        // npm's tarballs redirect to a CDN once or twice at most.
        .max_redirects(5)
        .build()
        .into()
}

/// A metadata document: the whole request, redirects and body included,
/// ends by [`NetLimits::metadata`] and reads at most
/// [`NetLimits::max_metadata`] bytes.
fn get_json(
    agent: &ureq::Agent,
    url: &str,
    limits: &NetLimits,
) -> Result<Option<serde_json::Value>, SourceError> {
    let path = transfer::url_path(url);
    let fail = |e| transfer::request_error(path, e, limits, limits.metadata);
    let call = agent
        .get(url)
        .config()
        .timeout_global(Some(limits.metadata))
        .build()
        .header("Accept", "application/json")
        .call();
    match call {
        Ok(mut r) => {
            let text = r
                .body_mut()
                .with_config()
                .limit(limits.max_metadata)
                .read_to_string()
                .map_err(fail)?;
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| SourceError::Registry(format!("bad JSON from the registry: {e}")))
        }
        Err(ureq::Error::StatusCode(404)) => Ok(None),
        Err(e) => Err(fail(e)),
    }
}

fn escape_name(name: &str) -> String {
    name.replace('/', "%2f")
}

/// Resolve `latest` (or another dist-tag) to a version number.
pub fn resolve_tag(tag: &str) -> Result<String, SourceError> {
    let reg = registry::registry_url()?;
    let limits = NetLimits::from_env()?;
    let url = format!("{reg}{}", escape_name(MAIN_PACKAGE));
    let doc = get_json(&agent(&limits), &url, &limits)?
        .ok_or_else(|| SourceError::Registry(format!("{MAIN_PACKAGE} not found")))?;
    doc.pointer(&format!("/dist-tags/{tag}"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| SourceError::Registry(format!("no dist-tag {tag:?} on {MAIN_PACKAGE}")))
}

/// A version of a package as the registry lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub version: String,
    /// When it was published (the registry's `time` entry), if given.
    pub time: Option<String>,
}

/// Every version of `platform`'s package the registry lists, oldest first
/// (by version number; versions that are not semver are left out).
pub fn published_versions(platform: &str) -> Result<Vec<Published>, SourceError> {
    if !PLATFORMS.contains(&platform) {
        return Err(SourceError::BadPlatform(platform.to_string()));
    }
    let reg = registry::registry_url()?;
    let limits = NetLimits::from_env()?;
    let package = platform_package(platform);
    let doc = get_json(
        &agent(&limits),
        &format!("{reg}{}", escape_name(&package)),
        &limits,
    )?
    .ok_or_else(|| SourceError::Registry(format!("{package} not found")))?;
    let versions = doc
        .get("versions")
        .and_then(|v| v.as_object())
        .ok_or_else(|| SourceError::Registry(format!("no versions listed for {package}")))?;
    let mut out: Vec<(semver::Version, Published)> = versions
        .keys()
        .filter_map(|v| {
            let parsed = semver::Version::parse(v).ok()?;
            let time = doc
                .pointer(&format!("/time/{v}"))
                .and_then(|t| t.as_str())
                .map(str::to_string);
            Some((
                parsed,
                Published {
                    version: v.clone(),
                    time,
                },
            ))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// Where a fetched package is kept in the cache.
pub fn cached_dir(cache: &Path, package: &str, version: &str) -> PathBuf {
    entry_dir(cache, package, version)
}

fn entry_dir(cache: &Path, package: &str, version: &str) -> PathBuf {
    cache
        .join("npm")
        .join(package.trim_start_matches('@').replace('/', "+"))
        .join(version)
}

fn read_cached(dir: &Path, package: &str, version: &str, platform: &str) -> Option<CachedBuild> {
    let integrity = std::fs::read_to_string(dir.join(".integrity")).ok()?;
    let program = tarball::PROGRAM_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())?;
    let pj = dir.join("package.json");
    Some(CachedBuild {
        package: package.to_string(),
        version: version.to_string(),
        platform: platform.to_string(),
        program,
        package_json: pj.is_file().then_some(pj),
        integrity,
        cache_hit: true,
    })
}

/// Fetch `version` for `platform`: a cache hit needs no network at all.
pub fn fetch(
    version: &str,
    platform: &str,
    opts: &FetchOptions,
) -> Result<CachedBuild, SourceError> {
    if !PLATFORMS.contains(&platform) {
        return Err(SourceError::BadPlatform(platform.to_string()));
    }
    let version = if version.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        version.to_string()
    } else {
        resolve_tag(version)?
    };
    // The version names a folder of the cache that a failed or repeated
    // download removes: it must be a version, not a path (`2.1.0/../..`,
    // or whatever a hostile registry's dist-tag says).
    if semver::Version::parse(&version).is_err() {
        return Err(SourceError::BadVersion(version));
    }
    let package = platform_package(platform);
    // Versions before native builds only exist as the main package's cli.js.
    for pkg in [package.as_str(), MAIN_PACKAGE] {
        let dir = entry_dir(&opts.cache_dir, pkg, &version);
        if let Some(hit) = read_cached(&dir, pkg, &version, platform) {
            return Ok(hit);
        }
    }
    let limits = NetLimits::from_env()?;
    std::fs::create_dir_all(opts.cache_dir.join("npm"))
        .map_err(|e| SourceError::io(&opts.cache_dir, e))?;
    sweep_stale_parts(&opts.cache_dir.join("npm"));
    let reg = registry::registry_url()?;
    let agent = agent(&limits);
    let mut found = None;
    for pkg in [package.as_str(), MAIN_PACKAGE] {
        let url = format!("{reg}{}/{version}", escape_name(pkg));
        if let Some(doc) = get_json(&agent, &url, &limits)? {
            found = Some((pkg.to_string(), doc));
            break;
        }
    }
    let (pkg, doc) = found.ok_or_else(|| SourceError::NotPublished {
        package: package.clone(),
        version: version.clone(),
    })?;
    let tarball_url = doc
        .pointer("/dist/tarball")
        .and_then(|v| v.as_str())
        .ok_or_else(|| SourceError::Registry("no dist.tarball in the version document".into()))?
        .to_string();
    let integrity = doc
        .pointer("/dist/integrity")
        .and_then(|v| v.as_str())
        .filter(|i| i.starts_with("sha512-"))
        .ok_or_else(|| {
            SourceError::Registry("no sha512 dist.integrity in the version document".into())
        })?
        .to_string();

    let dir = entry_dir(&opts.cache_dir, &pkg, &version);
    let parent = dir.parent().expect("entry dir has a parent");
    std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
    let _lock =
        EntryLock::acquire(super::cache::lock_path(&dir)).map_err(|e| SourceError::io(&dir, e))?;
    // Someone else may have finished the download while we waited.
    if let Some(hit) = read_cached(&dir, &pkg, &version, platform) {
        return Ok(hit);
    }
    remove_stale_parts(parent, &version);
    let part = PartDir::create(parent.join(format!(".{version}.{}.part", std::process::id())))?;
    let tmp = part.path.clone();
    let tgz = tmp.join("package.tgz");
    download(
        &agent,
        &tarball_url,
        &tgz,
        &integrity,
        &format!("{pkg}@{version}"),
        &*opts.progress,
        &limits,
    )?;
    let file = std::fs::File::open(&tgz).map_err(|e| SourceError::io(&tgz, e))?;
    let Unpacked { .. } = tarball::unpack(std::io::BufReader::new(file), &tmp)?;
    std::fs::remove_file(&tgz).map_err(|e| SourceError::io(&tgz, e))?;
    std::fs::write(tmp.join(".integrity"), &integrity).map_err(|e| SourceError::io(&tmp, e))?;
    let _ = std::fs::remove_dir_all(&dir);
    part.rename_to(&dir)?;
    let mut build = read_cached(&dir, &pkg, &version, platform)
        .ok_or_else(|| SourceError::Tarball("unpacked package is incomplete".into()))?;
    build.cache_hit = false;
    Ok(build)
}

/// A download's `.VERSION.PID.part` folder. It goes when the attempt ends,
/// however it ends — an error, a deadline, a panic unwinding — unless it
/// was renamed into place: five failed versions used to leave 96 MB
/// behind until each was fetched again.
struct PartDir {
    path: PathBuf,
    placed: bool,
}

impl PartDir {
    fn create(path: PathBuf) -> Result<PartDir, SourceError> {
        // Ours (this process's id) and under the version's lock: whatever
        // is there is a leftover of this process.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| SourceError::io(&path, e))?;
        Ok(PartDir {
            path,
            placed: false,
        })
    }

    fn rename_to(mut self, dir: &Path) -> Result<(), SourceError> {
        std::fs::rename(&self.path, dir).map_err(|e| SourceError::io(dir, e))?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for PartDir {
    fn drop(&mut self) {
        if !self.placed {
            // `remove_dir_all` removes a link found inside, never what it
            // points to.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A `.VERSION.PID.part` name: its version and process id.
fn part_owner(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?.strip_suffix(".part")?;
    let (version, pid) = rest.rsplit_once('.')?;
    semver::Version::parse(version).ok()?;
    Some((version, pid.parse().ok()?))
}

/// Remove what killed downloads of any version of any package left behind
/// (a SIGKILL skips every drop guard): a part folder goes when its process
/// is gone *and* nobody holds its version's lock — the lock is held by
/// whoever writes a part, so a part whose lock is free is written by no
/// one, and the process check keeps the part of a live process (a reused
/// process id, a cache shared with another machine) when in doubt.
fn sweep_stale_parts(npm: &Path) {
    let Ok(packages) = std::fs::read_dir(npm) else {
        return;
    };
    for package in packages.flatten() {
        if !package.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(package.path()) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some((version, pid)) = name.to_str().and_then(part_owner) else {
                continue;
            };
            if pid == std::process::id() || process_alive(pid) {
                continue;
            }
            let lock = super::cache::lock_path(&package.path().join(version));
            if let Ok(Some(_held)) = EntryLock::try_acquire(&lock) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Remove what killed downloads of `version` left behind (`.VERSION.PID.part`
/// folders whose process is gone); the caller holds the version's lock.
fn remove_stale_parts(parent: &Path, version: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((v, pid)) = name.to_str().and_then(part_owner) else {
            continue;
        };
        if v == version && pid != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    // Without a cheap check, assume alive: never remove another's download.
    true
}

/// Stream `url` to `dest`, hashing as we go; fail unless the SHA-512 matches.
/// The request ends by the tarball's deadline (its declared size at the
/// slowest rate served, capped), is abandoned under the minimum rate, and
/// reads at most the declared size or [`NetLimits::max_tarball`].
fn download(
    agent: &ureq::Agent,
    url: &str,
    dest: &Path,
    integrity: &str,
    what: &str,
    progress: &dyn Progress,
    limits: &NetLimits,
) -> Result<(), SourceError> {
    let path = transfer::url_path(url);
    let started = std::time::Instant::now();
    // Until the headers say the size, the deadline is the cap; ureq ends
    // the whole request there, redirects and body included.
    let mut resp = agent
        .get(url)
        .config()
        .timeout_global(Some(limits.tarball_cap))
        .timeout_recv_response(Some(limits.headers))
        .build()
        .call()
        .map_err(|e| transfer::request_error(path, e, limits, limits.tarball_cap))?;
    let total = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = total.filter(|n| *n > limits.max_tarball) {
        return Err(SourceError::Network(format!(
            "GET {path}: the server declares {n} bytes, more than the {} accepted",
            limits.max_tarball
        )));
    }
    let deadline = limits.tarball_deadline(total);
    let mut watch = BodyWatch::new(
        path,
        limits,
        started,
        deadline,
        total.unwrap_or(limits.max_tarball),
    );
    progress.start(what, total);
    let _finish = Finish(progress);
    let mut reader = resp.body_mut().with_config().reader();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(dest).map_err(|e| SourceError::io(dest, e))?);
    let mut hasher = Sha512::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| transfer::read_error(path, e, limits, limits.tarball_cap))?;
        if n == 0 {
            break;
        }
        watch.arrived(n as u64)?;
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| SourceError::io(dest, e))?;
        progress.advance(n as u64);
    }
    out.flush().map_err(|e| SourceError::io(dest, e))?;
    let actual = format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(hasher.finalize())
    );
    if actual != integrity {
        return Err(SourceError::Integrity {
            what: what.to_string(),
            expected: integrity.to_string(),
            actual,
        });
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    #[test]
    fn leftovers_of_dead_processes_go_and_live_ones_stay() {
        let d = tempfile::tempdir().unwrap();
        // pid 1 is always alive; a pid past the kernel's limit never is.
        let dead = d.path().join(".2.1.0.999999999.part");
        let live = d.path().join(".2.1.0.1.part");
        let other = d.path().join(".2.1.1.999999999.part");
        for p in [&dead, &live, &other] {
            std::fs::create_dir(p).unwrap();
        }
        super::remove_stale_parts(d.path(), "2.1.0");
        assert!(!dead.exists());
        assert!(live.exists());
        assert!(other.exists(), "another version's download is not touched");
    }

    #[test]
    fn a_part_goes_when_its_attempt_ends_even_by_a_panic() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".2.1.0.1.part");
        let p = path.clone();
        let r = std::panic::catch_unwind(move || {
            let part = super::PartDir::create(p).unwrap();
            std::fs::write(part.path.join("package.tgz"), b"half").unwrap();
            panic!("mid-download");
        });
        assert!(r.is_err());
        assert!(!path.exists(), "removed while unwinding");
        // Placed: kept, under its new name.
        let part = super::PartDir::create(path.clone()).unwrap();
        let placed = d.path().join("2.1.0");
        part.rename_to(&placed).unwrap();
        assert!(placed.is_dir() && !path.exists());
    }

    #[test]
    fn the_sweep_takes_dead_parts_of_every_version_and_package_unless_locked() {
        let d = tempfile::tempdir().unwrap();
        let npm = d.path();
        let (p1, p2) = (npm.join("anthropic-ai+a"), npm.join("anthropic-ai+b"));
        std::fs::create_dir_all(&p1).unwrap();
        std::fs::create_dir_all(&p2).unwrap();
        let dead_a = p1.join(".2.1.0.999999999.part");
        let dead_b = p2.join(".2.1.7.999999998.part");
        let live = p1.join(".2.1.1.1.part");
        let locked = p2.join(".2.1.8.999999997.part");
        let not_a_part = p1.join(".notes.999999999.part");
        for p in [&dead_a, &dead_b, &live, &locked, &not_a_part] {
            std::fs::create_dir(p).unwrap();
        }
        // Someone is downloading 2.1.8 (the process check alone would say
        // its part is stale).
        let held =
            super::EntryLock::acquire(crate::source::cache::lock_path(&p2.join("2.1.8"))).unwrap();
        super::sweep_stale_parts(npm);
        assert!(
            !dead_a.exists() && !dead_b.exists(),
            "dead parts of any version go"
        );
        assert!(live.exists(), "a live process's part stays");
        assert!(locked.exists(), "a part whose lock is held stays");
        assert!(not_a_part.exists(), "only VERSION.PID.part names");
        drop(held);
        super::sweep_stale_parts(npm);
        assert!(!locked.exists());
    }
}
