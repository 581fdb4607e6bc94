//! The download cache: `--cache-dir`, else `CC_TEARDOWN_CACHE`, else the XDG
//! cache directory.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CC_TEARDOWN_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("cc-teardown");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache").join("cc-teardown");
    }
    std::env::temp_dir().join("cc-teardown-cache")
}

/// How long a fetch waits for another process fetching the same build
/// before it gives up with an error. A holder's download ends by its
/// deadline (at most `NetLimits::tarball_cap`, 25 minutes), so a holder
/// that is alive gets there first.
const MAX_LOCK_WAIT: Duration = Duration::from_secs(30 * 60);

/// An exclusive lock on a cache entry, so that concurrent fetches of the
/// same build (parallel tests, two shells, a scan's downloads in flight)
/// download it once.
///
/// An advisory lock of the operating system on `.VERSION.lock` beside the
/// entry, not the existence of a file: the kernel releases it when its
/// holder dies, however it dies (a scan killed with SIGKILL used to leave
/// its lock file behind, and every later fetch of that platform waited 15
/// minutes for it to turn stale). The file stays: deleting a lock file
/// that another process is about to lock lets two processes hold "the"
/// lock at once.
pub struct EntryLock {
    _file: File,
}

impl EntryLock {
    pub fn acquire(path: PathBuf) -> std::io::Result<EntryLock> {
        let start = Instant::now();
        loop {
            let file = open_lock_file(&path)?;
            match file.try_lock() {
                // Locked the file that is at `path` now (a `cache clear`
                // may have removed the one this process opened).
                Ok(()) if same_file(&file, &path) => return Ok(EntryLock { _file: file }),
                Ok(()) => continue,
                Err(TryLockError::WouldBlock) if start.elapsed() < MAX_LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "another process has held {} for {} minutes",
                            path.display(),
                            MAX_LOCK_WAIT.as_secs() / 60
                        ),
                    ));
                }
                Err(TryLockError::Error(e)) => return Err(e),
            }
        }
    }
}

impl EntryLock {
    /// The lock if nobody holds it now, without waiting (`None` when held,
    /// by another process or by another open of this one).
    pub fn try_acquire(path: &Path) -> std::io::Result<Option<EntryLock>> {
        let file = open_lock_file(path)?;
        match file.try_lock() {
            Ok(()) if same_file(&file, path) => Ok(Some(EntryLock { _file: file })),
            Ok(()) | Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }
}

/// The lock file of cache entry `dir` (`…/2.1.242` → `…/.2.1.242.lock`: a
/// version's dots are not an extension).
pub fn lock_path(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    dir.with_file_name(format!(".{name}.lock"))
}

/// Open (or create) a lock file, never through a link and never anything
/// but a regular file.
fn open_lock_file(path: &Path) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = o.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_names_its_own_lock() {
        let a = lock_path(Path::new("/c/npm/p/2.1.242"));
        let b = lock_path(Path::new("/c/npm/p/2.1.241"));
        assert_eq!(a, Path::new("/c/npm/p/.2.1.242.lock"));
        assert_ne!(a, b, "two versions never share a lock");
    }

    #[test]
    fn a_held_lock_is_exclusive_and_released_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".1.0.0.lock");
        let held = EntryLock::acquire(path.clone()).unwrap();
        let other = open_lock_file(&path).unwrap();
        assert!(
            matches!(other.try_lock(), Err(TryLockError::WouldBlock)),
            "a second holder is refused while the first holds it"
        );
        drop(held);
        assert!(other.try_lock().is_ok(), "released when its holder goes");
        drop(other);
        // A lock file left behind (its holder killed) does not block.
        let again = std::thread::spawn(move || EntryLock::acquire(path).is_ok());
        assert!(again.join().unwrap());
    }

    /// Siblings of a planted link: a FIFO (opening one could block), a
    /// folder; each refused, at once, and left as it was.
    #[cfg(unix)]
    #[test]
    fn a_lock_file_that_is_a_fifo_or_a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(".1.0.0.lock");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let folder = dir.path().join(".2.0.0.lock");
        std::fs::create_dir(&folder).unwrap();
        for path in [&fifo, &folder] {
            let start = Instant::now();
            assert!(
                EntryLock::acquire(path.clone()).is_err(),
                "{}",
                path.display()
            );
            assert!(start.elapsed() < Duration::from_secs(5), "refused at once");
        }
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(folder.is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_that_is_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep").unwrap();
        let path = dir.path().join(".1.0.0.lock");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(EntryLock::acquire(path).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }
}
