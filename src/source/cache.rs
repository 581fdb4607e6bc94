//! The download cache: `--cache-dir`, else `CC_TEARDOWN_CACHE`, else the XDG
//! cache directory.

use std::path::PathBuf;

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

/// An exclusive lock on a cache entry, so that concurrent fetches of the same
/// build (parallel tests, two shells) download it once.
pub struct EntryLock {
    path: PathBuf,
}

impl EntryLock {
    pub fn acquire(path: PathBuf) -> std::io::Result<EntryLock> {
        let start = std::time::Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(EntryLock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // A lock older than 15 minutes belongs to a dead process.
                    let stale = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age.as_secs() > 900);
                    if stale || start.elapsed().as_secs() > 1800 {
                        let _ = std::fs::remove_file(&path);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for EntryLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
