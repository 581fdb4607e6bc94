//! Writing files below an output folder without ever writing through
//! anything that was already there.
//!
//! The folder may hold links, hard links, FIFOs or devices planted at the
//! paths we are about to write. Opening such a path for writing would follow
//! the link, replace the content of a file that has other names, or block on
//! the FIFO. So every file is *created* — `O_CREAT | O_EXCL | O_NOFOLLOW`,
//! which fails on any existing entry without opening it — and every folder
//! below the output folder is entered with `O_NOFOLLOW | O_DIRECTORY`
//! relative to its parent's descriptor, so no component is a link even if the
//! tree changes while we write. [`OutDir::check`] finds every conflict before
//! the first write; the creates themselves are the guarantee.
//!
//! `force` replaces what is in the way by removing the entry first (a link
//! is removed, not followed; a hard link loses this name only), never a
//! folder.

use anyhow::{Context, bail};
use std::collections::HashMap;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// Why files cannot be written where asked.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Two files of the run would land on one path (the build's names
    /// collide).
    #[error("{0}")]
    Collision(String),
    /// Something already in the output folder is in the way.
    #[error("{0}")]
    InTheWay(String),
}

fn in_the_way(msg: String) -> anyhow::Error {
    OutputError::InTheWay(msg).into()
}

/// An output folder; see the module documentation.
pub struct OutDir {
    root: PathBuf,
    force: bool,
    #[cfg(unix)]
    dirs: HashMap<PathBuf, std::os::fd::OwnedFd>,
    #[cfg(not(unix))]
    dirs: HashMap<PathBuf, ()>,
}

/// What occupies a path, looked at without following links.
fn occupant(p: &Path) -> anyhow::Result<Option<std::fs::FileType>> {
    match std::fs::symlink_metadata(p) {
        Ok(m) => Ok(Some(m.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("checking {}", p.display())),
    }
}

fn kind_name(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_symlink() {
        "a symlink"
    } else if t.is_dir() {
        "a folder"
    } else {
        "a file"
    }
}

/// Relative paths made only of normal components (the caller's names are
/// already checked; this keeps the invariant local).
fn parts(rel: &Path) -> anyhow::Result<Vec<&std::ffi::OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => bail!("{} is not a plain relative path", rel.display()),
        })
        .collect()
}

/// The one-line refusal for an entry in the way.
fn occupied(p: &Path, t: std::fs::FileType) -> anyhow::Error {
    in_the_way(if t.is_symlink() {
        format!("refusing to write through symlink {}", p.display())
    } else {
        format!(
            "{} already exists ({}); refusing to write over it (--force removes it first)",
            p.display(),
            kind_name(t)
        )
    })
}

impl OutDir {
    /// Check, before anything is written, that every file in `files` can be
    /// created below `root`: each folder on the way is missing or a real
    /// folder (not a link), and each file is missing (or, with `force`, is
    /// not a folder). `root` itself is the user's path and may be a link.
    pub fn check(root: &Path, files: &[PathBuf], force: bool) -> anyhow::Result<()> {
        match std::fs::metadata(root) {
            Ok(m) if !m.is_dir() => {
                return Err(in_the_way(format!(
                    "{} exists and is not a directory",
                    root.display()
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("checking {}", root.display())),
        }
        // Folder below the root → whether it exists (as a real folder).
        let mut folders: HashMap<PathBuf, bool> = HashMap::new();
        'files: for rel in files {
            let parts = parts(rel)?;
            let (name, dirs) = parts.split_last().context("empty path")?;
            let mut p = root.to_path_buf();
            for d in dirs {
                p.push(d);
                let exists = match folders.get(&p) {
                    Some(&e) => e,
                    None => {
                        let e = match occupant(&p)? {
                            None => false,
                            Some(t) if t.is_dir() => true,
                            // Removed and made a folder when written.
                            Some(_) if force => false,
                            Some(t) => return Err(occupied(&p, t)),
                        };
                        folders.insert(p.clone(), e);
                        e
                    }
                };
                if !exists {
                    continue 'files;
                }
            }
            p.push(name);
            match occupant(&p)? {
                None => {}
                Some(t) if t.is_dir() => {
                    return Err(in_the_way(format!(
                        "{} is a directory; refusing to replace it",
                        p.display()
                    )));
                }
                Some(_) if force => {}
                Some(t) => return Err(occupied(&p, t)),
            }
        }
        Ok(())
    }

    /// Create `root` (and its parents) if missing, and open it for writing
    /// below it. Only the root is opened by path (it is the user's path and
    /// may be a link); everything below is reached from its descriptor.
    pub fn create(root: &Path, force: bool) -> anyhow::Result<OutDir> {
        std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
        #[allow(unused_mut)]
        let mut dirs = HashMap::new();
        #[cfg(unix)]
        {
            let f = File::open(root).with_context(|| format!("opening {}", root.display()))?;
            dirs.insert(PathBuf::new(), std::os::fd::OwnedFd::from(f));
        }
        Ok(OutDir {
            root: root.to_path_buf(),
            force,
            dirs,
        })
    }

    /// Write a new file at `rel`, creating the folders on the way.
    pub fn write(&mut self, rel: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        let path = self.root.join(rel);
        let mut f = self
            .create_file(rel)
            .with_context(|| format!("creating {}", path.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("writing {}", path.display()))
    }

    #[cfg(unix)]
    fn create_file(&mut self, rel: &Path) -> anyhow::Result<File> {
        use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
        let parts = parts(rel)?;
        let (name, folders) = parts.split_last().context("empty path")?;
        let mut at = PathBuf::new();
        for folder in folders {
            let parent = self.dirs[&at].as_fd();
            at.push(folder);
            if self.dirs.contains_key(&at) {
                continue;
            }
            let fd = open_subdir(parent, folder, self.force)
                .with_context(|| format!("creating {}", self.root.join(&at).display()))?;
            self.dirs.insert(at.clone(), fd);
        }
        let dfd = self.dirs[&at].as_raw_fd();
        let c = cstr(name)?;
        if self.force {
            // SAFETY: valid descriptor and NUL-terminated name; unlinkat
            // removes the entry itself (a link is not followed).
            if unsafe { libc::unlinkat(dfd, c.as_ptr(), 0) } != 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(e).context("removing what is in the way");
                }
            }
        }
        // SAFETY: as above; O_EXCL with O_CREAT never opens an existing entry.
        let fd = unsafe {
            libc::openat(
                dfd,
                c.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                return Err(in_the_way(
                    "it already exists (--force removes it first)".into(),
                ));
            }
            return Err(e.into());
        }
        // SAFETY: a descriptor we just opened and own.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    #[cfg(not(unix))]
    fn create_file(&mut self, rel: &Path) -> anyhow::Result<File> {
        let parts = parts(rel)?;
        let mut p = self.root.clone();
        for folder in &parts[..parts.len() - 1] {
            p.push(folder);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => continue,
                Ok(_) if self.force => std::fs::remove_file(&p)?,
                Ok(_) => return Err(in_the_way(format!("{} is in the way", p.display()))),
                Err(_) => {}
            }
            std::fs::create_dir(&p)?;
        }
        let path = self.root.join(rel);
        if self.force && std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&path)?;
        }
        Ok(std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?)
    }
}

#[cfg(unix)]
fn cstr(name: &std::ffi::OsStr) -> anyhow::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(name.as_bytes()).context("NUL in a file name")
}

/// Enter (creating it if missing) the folder `name` below `parent`, never
/// through a link.
#[cfg(unix)]
fn open_subdir(
    parent: std::os::fd::BorrowedFd,
    name: &std::ffi::OsStr,
    force: bool,
) -> anyhow::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let c = cstr(name)?;
    let p = parent.as_raw_fd();
    let open = || {
        // SAFETY: valid descriptor and NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                p,
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            // SAFETY: a descriptor we just opened and own.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    // SAFETY: valid descriptor and NUL-terminated name.
    let made = unsafe { libc::mkdirat(p, c.as_ptr(), 0o777) };
    if made != 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e.into());
        }
    }
    match open() {
        Ok(fd) => Ok(fd),
        // A link or a non-folder is in the way (O_NOFOLLOW gives ELOOP on
        // a link, O_DIRECTORY ENOTDIR on anything else).
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
            if !force {
                return Err(in_the_way(
                    "refusing to write through a symlink or non-directory".into(),
                ));
            }
            // SAFETY: as above.
            if unsafe { libc::unlinkat(p, c.as_ptr(), 0) } != 0
                || unsafe { libc::mkdirat(p, c.as_ptr(), 0o777) } != 0
            {
                return Err(std::io::Error::last_os_error().into());
            }
            Ok(open()?)
        }
        Err(e) => Err(e.into()),
    }
}

/// Write one output file (`report -o`, `diff -o`, `history export -o`): an
/// existing regular file is replaced, but a link at the path is never
/// followed and a FIFO or device is never written into — the path is opened
/// without following links and without blocking, and must then be a
/// regular file before a byte is written.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    create_file(path)?
        .write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))
}

/// Open one output file for writing, emptied, as [`write_file`] does.
pub fn create_file(path: &Path) -> anyhow::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = match opts.open(path) {
        Ok(f) => f,
        Err(e) if path.is_symlink() => {
            return Err(in_the_way(format!(
                "{} is a link; not writing through it ({e})",
                path.display()
            )));
        }
        Err(e) => return Err(e).with_context(|| format!("writing {}", path.display())),
    };
    let meta = f
        .metadata()
        .with_context(|| format!("writing {}", path.display()))?;
    if !meta.is_file() {
        return Err(in_the_way(format!(
            "{} is not a regular file; not writing into it",
            path.display()
        )));
    }
    f.set_len(0)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(f)
}

#[cfg(all(test, unix))]
mod write_file_tests {
    use super::write_file;

    #[test]
    fn replaces_files_but_never_follows_links_or_feeds_fifos() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("out.md");
        std::fs::write(&f, "old, longer content").unwrap();
        write_file(&f, b"new").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = d.path().join("link.md");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_file(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No reader: opening must fail or be refused, never block.
        assert!(write_file(&fifo, b"x").is_err());
    }
}
