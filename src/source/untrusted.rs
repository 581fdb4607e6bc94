//! Opening files nobody vouches for: a TARGET path, and everything `installs`
//! reads on a machine or in another tree.
//!
//! Such a path can be a FIFO (opening it for reading waits for a writer,
//! forever), a device (`/dev/zero` reports length 0 and never ends), a socket,
//! or a link somewhere else. So files are opened with `O_NONBLOCK` (an open
//! that would wait fails or returns at once instead), the opened descriptor
//! is `fstat`ed, only regular files are accepted, and reads are capped.

use super::SourceError;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// What a non-regular file is, for messages.
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Accept an opened file only when it is a regular file.
fn regular(path: &Path, file: File) -> Result<File, SourceError> {
    let meta = file.metadata().map_err(|e| SourceError::io(path, e))?;
    if meta.is_file() {
        return Ok(file);
    }
    if meta.is_dir() {
        return Err(SourceError::io(
            path,
            std::io::Error::other("is a directory"),
        ));
    }
    Err(SourceError::NotRegular {
        path: path.to_path_buf(),
        kind: kind_of(meta.file_type()),
    })
}

fn not_found(path: &Path, e: std::io::Error) -> SourceError {
    match e.kind() {
        std::io::ErrorKind::NotFound => SourceError::NotFound(path.to_path_buf()),
        _ => SourceError::io(path, e),
    }
}

/// Open a path the user named (links followed: the user chose it), without
/// ever blocking, and only if it is a regular file.
pub fn open_regular(path: &Path) -> Result<File, SourceError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let file = o.open(path).map_err(|e| not_found(path, e))?;
    regular(path, file)
}

/// A small text file the user named (a script, a scenario): a regular
/// file (a device, FIFO or directory would never end or never start), at
/// most `cap` bytes, UTF-8.
pub fn read_text(path: &Path, cap: u64) -> anyhow::Result<String> {
    use anyhow::{Context, bail};
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    // Opening a FIFO blocks until a writer comes; without waiting, it is
    // refused below like any other non-file.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    let f = open.open(path)?;
    if !f.metadata()?.is_file() {
        bail!("not a regular file");
    }
    let mut bytes = Vec::new();
    f.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        bail!("larger than {} MB", cap >> 20);
    }
    String::from_utf8(bytes).context("not UTF-8 text")
}

/// Read at most `cap` bytes of an opened file; more is an error, not a
/// silent cut.
pub fn read_capped(path: &Path, file: File, cap: u64) -> Result<Vec<u8>, SourceError> {
    let mut out = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| SourceError::io(path, e))?;
    if out.len() as u64 > cap {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            cap,
        });
    }
    Ok(out)
}

/// Open the file at `parts` below `root` (a folder), entering each folder
/// relative to the previous one's descriptor with `O_NOFOLLOW`, so that no
/// component is a link even if the tree changes meanwhile: nothing outside
/// `root` can be opened. `shown` names the file in errors.
#[cfg(unix)]
pub fn open_below(root: &Path, parts: &[OsString], shown: &Path) -> Result<File, SourceError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let Some((name, folders)) = parts.split_last() else {
        return Err(SourceError::io(
            shown,
            std::io::Error::other("is a directory"),
        ));
    };
    let mut dir: OwnedFd = File::open(root).map_err(|e| not_found(shown, e))?.into();
    let step = |dir: &OwnedFd, name: &OsString, flags: libc::c_int| {
        let c = std::ffi::CString::new(name.as_bytes())
            .map_err(|_| SourceError::io(shown, std::io::Error::other("NUL in a name")))?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(not_found(shown, std::io::Error::last_os_error()));
        }
        // SAFETY: a descriptor we just opened and own.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    for f in folders {
        dir = step(&dir, f, libc::O_RDONLY | libc::O_DIRECTORY)?;
    }
    let fd = step(&dir, name, libc::O_RDONLY | libc::O_NONBLOCK)?;
    regular(shown, File::from(fd))
}

#[cfg(not(unix))]
pub fn open_below(root: &Path, parts: &[OsString], shown: &Path) -> Result<File, SourceError> {
    let mut p = root.to_path_buf();
    for c in parts {
        p.push(c);
        let m = std::fs::symlink_metadata(&p).map_err(|e| not_found(shown, e))?;
        if m.file_type().is_symlink() {
            return Err(SourceError::io(
                shown,
                std::io::Error::other("changed into a link while being read"),
            ));
        }
    }
    let file = File::open(&p).map_err(|e| not_found(shown, e))?;
    regular(shown, file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = open_regular(&fifo).unwrap_err().to_string();
        assert!(err.contains("FIFO"), "{err}");
        let err = open_regular(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("character device"), "{err}");
        let err = open_below(dir.path(), &["fifo".into()], &fifo)
            .unwrap_err()
            .to_string();
        assert!(err.contains("FIFO"), "{err}");
    }

    #[test]
    fn reads_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![b'x'; 100]).unwrap();
        assert_eq!(
            read_capped(&p, open_regular(&p).unwrap(), 100)
                .unwrap()
                .len(),
            100
        );
        let err = read_capped(&p, open_regular(&p).unwrap(), 99).unwrap_err();
        assert!(err.to_string().contains("99"), "{err}");
    }

    #[test]
    fn open_below_never_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink("../../secret", root.join("a/link")).unwrap();
        std::os::unix::fs::symlink("..", root.join("up")).unwrap();
        assert!(open_below(&root, &["a".into(), "link".into()], Path::new("x")).is_err());
        assert!(open_below(&root, &["up".into(), "secret".into()], Path::new("x")).is_err());
        std::fs::write(root.join("a/ok"), "ok").unwrap();
        assert!(open_below(&root, &["a".into(), "ok".into()], Path::new("x")).is_ok());
    }
}
