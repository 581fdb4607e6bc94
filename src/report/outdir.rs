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
//!
//! What one run writes is named in full first, in an [`OutPlan`], which
//! every writer of a folder (`extract`, `pretty -o DIR`, `reconstruct`,
//! `surface --export`) builds before its first write: two files of the run
//! at one path — equal, equal but for case, or a file where another needs a
//! folder — are refused up front, and a name too long for a file system is
//! shortened the same way every time. [`OutDir`] then writes exactly the
//! planned files, each once, so a run never replaces its own output.

use anyhow::{Context, bail};
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// The longest file or folder name a run writes, in bytes. File systems
/// stop at 255 (ext4 and APFS count bytes of UTF-8, NTFS UTF-16 units, which
/// are never more than UTF-8 bytes); a name from the build may be any length,
/// and a create that fails half-way would leave partial output. Real builds'
/// longest names are far below this (module paths of a few dozen
/// characters, workflow names up to 100, prompt ids of six words).
pub const MAX_NAME: usize = 200;

/// A name of at most [`MAX_NAME`] bytes: an overlong one keeps its start and
/// its extension (`.js`, `.md`, `.js.linemap.json`) around `~` and 16 hex
/// digits of the whole name's SHA-256, so it is the same every run, and two
/// long names that share their start stay apart.
pub fn bounded_name(name: &OsStr) -> OsString {
    use sha2::Digest;
    if name.len() <= MAX_NAME {
        return name.to_os_string();
    }
    let text = name.to_string_lossy();
    let digest = sha2::Sha256::digest(text.as_bytes());
    let tag = format!("~{}", &hex::encode(digest)[..16]);
    // The extension: the longest tail starting at a dot, of at most 24
    // ASCII letters, digits and dots (a made-up name is cut like any other).
    let ext_at = text
        .char_indices()
        .filter(|&(i, c)| c == '.' && i > 0 && text.len() - i <= 24)
        .map(|(i, _)| i)
        .find(|&i| {
            text[i..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.')
        })
        .unwrap_or(text.len());
    let (stem, ext) = text.split_at(ext_at);
    let mut keep = MAX_NAME - tag.len() - ext.len();
    while !stem.is_char_boundary(keep) {
        keep -= 1;
    }
    OsString::from(format!("{}{tag}{ext}", &stem[..keep]))
}

/// Every file one run writes below an output folder, planned before the
/// first write; see the module documentation.
#[derive(Default)]
pub struct OutPlan {
    files: Vec<PathBuf>,
    /// Case-folded path of each planned file → who writes it.
    file_at: HashMap<String, (PathBuf, String)>,
    /// Case-folded path of each folder a planned file needs → who needs it.
    folder_at: HashMap<String, (PathBuf, String)>,
}

/// A path as the file systems that fold case see it (macOS and Windows by
/// default: `Edit.md` and `EDIT.md` are one file there).
fn folded(p: &Path) -> String {
    p.to_string_lossy().to_lowercase()
}

fn collision(msg: String) -> OutputError {
    OutputError::Collision(msg)
}

impl OutPlan {
    pub fn new() -> OutPlan {
        OutPlan::default()
    }

    /// Plan the file `rel` (a relative path of plain components), written
    /// for `owner` ("module src/a.js", "workflow x"); the path it will have
    /// is returned, each name bounded by [`bounded_name`]. A path that
    /// another file of the run already has, or has but for case, or where
    /// one is a folder of the other, is refused naming both owners.
    pub fn add(&mut self, rel: &Path, owner: impl Into<String>) -> anyhow::Result<PathBuf> {
        let owner = owner.into();
        let mut planned = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) if !n.is_empty() => planned.push(bounded_name(n)),
                _ => bail!("{} is not a plain relative path", rel.display()),
            }
        }
        if planned.as_os_str().is_empty() {
            bail!("an empty file name");
        }
        let key = folded(&planned);
        if let Some((first, other)) = self.file_at.get(&key) {
            return Err(collision(if *first == planned {
                format!(
                    "{other} and {owner} would both be written to {}",
                    planned.display()
                )
            } else {
                format!(
                    "{other} and {owner} would be written to {} and {}, one file where case is ignored (macOS, Windows)",
                    first.display(),
                    planned.display()
                )
            })
            .into());
        }
        if let Some((_, other)) = self.folder_at.get(&key) {
            return Err(collision(format!(
                "{owner} is written to {}, where {other} needs a directory",
                planned.display()
            ))
            .into());
        }
        for dir in planned
            .ancestors()
            .skip(1)
            .filter(|p| !p.as_os_str().is_empty())
        {
            let dkey = folded(dir);
            if let Some((_, other)) = self.file_at.get(&dkey) {
                return Err(collision(format!(
                    "{other} is written to {}, where {owner} needs a directory",
                    dir.display()
                ))
                .into());
            }
            self.folder_at
                .entry(dkey)
                .or_insert_with(|| (dir.to_path_buf(), owner.clone()));
        }
        self.file_at.insert(key, (planned.clone(), owner));
        self.files.push(planned.clone());
        Ok(planned)
    }

    /// The planned paths, in the order they were planned.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

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
    /// The planned paths not written yet: each is written once, and only
    /// those (with `force`, a second write would remove the first).
    unwritten: HashSet<PathBuf>,
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

    /// Check the planned files against what `root` holds ([`OutDir::check`]),
    /// then create the folder for writing exactly those files.
    pub fn open(root: &Path, plan: &OutPlan, force: bool) -> anyhow::Result<OutDir> {
        Self::check(root, plan.files(), force)?;
        let mut dir = Self::create(root, force)?;
        dir.unwritten = plan.files().iter().cloned().collect();
        Ok(dir)
    }

    /// [`OutDir::open`] for a folder this tool wrote before (a site): the
    /// files in `owned` are the run's own from last time and are replaced
    /// (removed first, never written through); anything else in the way is
    /// refused as by `open` (or removed, with `force`).
    pub fn open_owned(
        root: &Path,
        plan: &OutPlan,
        owned: &HashSet<PathBuf>,
        force: bool,
    ) -> anyhow::Result<OutDir> {
        let (mine, others): (Vec<PathBuf>, Vec<PathBuf>) = plan
            .files()
            .iter()
            .cloned()
            .partition(|p| owned.contains(p));
        Self::check(root, &others, force)?;
        Self::check(root, &mine, true)?;
        let mut dir = Self::create(root, true)?;
        dir.unwritten = plan.files().iter().cloned().collect();
        Ok(dir)
    }

    /// Create `root` (and its parents) if missing, and open it for writing
    /// below it. Only the root is opened by path (it is the user's path and
    /// may be a link); everything below is reached from its descriptor.
    fn create(root: &Path, force: bool) -> anyhow::Result<OutDir> {
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
            unwritten: HashSet::new(),
            dirs,
        })
    }

    /// Write a new file at `rel`, a path of the plan (as [`OutPlan::add`]
    /// returned it) not written yet, creating the folders on the way.
    pub fn write(&mut self, rel: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        let path = self.root.join(rel);
        if !self.unwritten.remove(rel) {
            // A bug of the writer, not of the input: the plan is what was
            // checked for collisions.
            bail!(
                "internal error: {} was not planned or was already written",
                path.display()
            );
        }
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

/// Write one output file (`-o FILE` of `report`, `diff`, every view,
/// `pretty` and its line map, `history export`). The bytes go to a new
/// file beside `path`, created with `O_CREAT | O_EXCL | O_NOFOLLOW`, which
/// is then renamed over `path`: a rename replaces the name itself, so
/// nothing already at `path` is ever opened for writing — not a link's
/// target, not another name of a hard-linked file, not a FIFO or device —
/// and a failed run leaves the old file as it was. What is at `path` is
/// first looked at without following it: a link, a regular file with other
/// names (`nlink > 1`: replacing this name would silently part it from the
/// others), a folder, a FIFO, a socket or a device is refused with one line.
/// A regular file is replaced, keeping its permissions.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let keep_mode = replaceable(path)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let (mut file, tmp) = create_beside(&parent, name)?;
    let pending = PendingFile(Some(tmp.clone()));
    use std::io::Write;
    file.write_all(bytes)
        .with_context(|| format!("writing {}", tmp.display()))?;
    if let Some(mode) = keep_mode {
        file.set_permissions(mode)
            .with_context(|| format!("writing {}", tmp.display()))?;
    }
    drop(file);
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    pending.done();
    Ok(())
}

/// The temporary file of [`write_file`], removed unless it was renamed into
/// place (an error, or a panic unwinding, leaves nothing behind).
struct PendingFile(Option<PathBuf>);

impl PendingFile {
    fn done(mut self) {
        self.0 = None;
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Whether `path` may be replaced by [`write_file`]: missing, or a regular
/// file with no other name (its permissions are returned, to keep).
fn replaceable(path: &Path) -> anyhow::Result<Option<std::fs::Permissions>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("checking {}", path.display())),
    };
    let t = meta.file_type();
    if t.is_symlink() {
        return Err(in_the_way(format!(
            "{} is a link; not writing through it",
            path.display()
        )));
    }
    if !t.is_file() {
        return Err(in_the_way(format!(
            "{} is {}, not a regular file; not writing into it",
            path.display(),
            kind_name(t)
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(in_the_way(format!(
                "{} has {} names (a hard link); not replacing it",
                path.display(),
                meta.nlink()
            )));
        }
    }
    if meta.permissions().readonly() {
        // Opening it for writing would have failed: a rename must not
        // get around that.
        return Err(in_the_way(format!(
            "{} is read-only; not replacing it",
            path.display()
        )));
    }
    Ok(Some(meta.permissions()))
}

/// A new, empty file in `dir` named after `name` (hidden, with the
/// process id and a counter), created without following or reusing any
/// entry.
fn create_beside(dir: &Path, name: &OsStr) -> anyhow::Result<(File, PathBuf)> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // The stem is bounded, so the temporary name fits wherever `name` does.
    let stem: String = name.to_string_lossy().chars().take(64).collect();
    for _ in 0..100 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{stem}.{}.{n}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        }
        match opts.open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
        }
    }
    bail!("no free temporary name beside {}", dir.join(name).display())
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    fn refused(plan: &mut OutPlan, rel: &str, who: &str) -> String {
        let e = plan.add(Path::new(rel), who).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<OutputError>(),
                Some(OutputError::Collision(_))
            ),
            "{e}"
        );
        e.to_string()
    }

    #[test]
    fn collisions_are_refused_whatever_their_case() {
        let mut p = OutPlan::new();
        p.add(Path::new("tool-edit.md"), "prompt a").unwrap();
        let e = refused(&mut p, "tool-edit.md", "prompt b");
        assert!(e.contains("prompt a") && e.contains("prompt b"), "{e}");
        let e = refused(&mut p, "TOOL-Edit.MD", "prompt c");
        assert!(e.contains("case is ignored"), "{e}");
        // Non-ASCII letters fold too (`É` and `é` are one name on APFS).
        p.add(Path::new("É.js"), "module 1").unwrap();
        refused(&mut p, "é.js", "module 2");
    }

    #[test]
    fn a_file_where_a_folder_is_needed_either_way_round() {
        let mut p = OutPlan::new();
        p.add(Path::new("x"), "module x").unwrap();
        let e = refused(&mut p, "X/y.js", "module X/y.js");
        assert!(e.contains("needs a directory"), "{e}");
        let mut p = OutPlan::new();
        p.add(Path::new("a/b/c.js"), "module c").unwrap();
        let e = refused(&mut p, "A/B", "module ab");
        assert!(e.contains("needs a directory"), "{e}");
        assert!(p.add(Path::new("a/b/d.js"), "module d").is_ok());
    }

    #[test]
    fn only_plain_relative_paths() {
        let mut p = OutPlan::new();
        for bad in ["", "/etc/x", "a/../b", "./a"] {
            assert!(p.add(Path::new(bad), "x").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn long_names_are_shortened_the_same_way_and_stay_apart() {
        let long = |c: &str, ext: &str| format!("{}{ext}", c.repeat(300));
        let a = bounded_name(OsStr::new(&long("a", ".md")));
        assert!(a.len() <= MAX_NAME, "{}", a.len());
        assert_eq!(a, bounded_name(OsStr::new(&long("a", ".md"))));
        let a = a.to_string_lossy().into_owned();
        assert!(
            a.starts_with("aaaa") && a.ends_with(".md") && a.contains('~'),
            "{a}"
        );
        // Same start, other end: other names.
        let b = bounded_name(OsStr::new(&format!("{}b.md", "a".repeat(299))));
        assert_ne!(a, b.to_string_lossy());
        // A multi-byte character is never cut; a long tail is no extension.
        let e = bounded_name(OsStr::new(&long("é", ".js.linemap.json")));
        assert!(e.len() <= MAX_NAME && e.to_string_lossy().ends_with(".js.linemap.json"));
        let w = bounded_name(OsStr::new(&"世".repeat(100)));
        assert!(w.len() <= MAX_NAME);
        assert!(w.to_str().is_some());
        let dots = bounded_name(OsStr::new(&format!("x.{}", "y".repeat(300))));
        assert!(dots.len() <= MAX_NAME);
        // Short names are left alone.
        assert_eq!(bounded_name(OsStr::new("a.js")), "a.js");
        assert_eq!(bounded_name(OsStr::new(&"n".repeat(200))).len(), 200);
    }

    #[test]
    fn a_shortened_name_is_checked_like_any_other() {
        let mut p = OutPlan::new();
        let long = format!("tool-{}.md", "x".repeat(300));
        let short = p.add(Path::new(&long), "prompt long").unwrap();
        assert!(short.as_os_str().len() <= MAX_NAME);
        // The shortened name, given as it is, or in other case: refused.
        let e = refused(&mut p, &short.to_string_lossy(), "prompt planted");
        assert!(e.contains("prompt long"), "{e}");
        refused(
            &mut p,
            &short.to_string_lossy().to_uppercase(),
            "prompt upper",
        );
        // Every component is bounded.
        let deep = p
            .add(
                Path::new(&format!("{}/{}.js", "d".repeat(250), "f".repeat(250))),
                "m",
            )
            .unwrap();
        assert!(deep.components().all(|c| c.as_os_str().len() <= MAX_NAME));
    }

    #[test]
    fn the_folder_writes_the_plan_once_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let mut p = OutPlan::new();
        let a = p.add(Path::new("a/b.js"), "module b").unwrap();
        let mut out = OutDir::open(d.path(), &p, true).unwrap();
        out.write(&a, b"1").unwrap();
        // Written twice (with --force the second would remove the first):
        // refused, and the first stays.
        assert!(out.write(&a, b"2").is_err());
        assert!(out.write(Path::new("c.js"), b"3").is_err());
        assert_eq!(std::fs::read(d.path().join("a/b.js")).unwrap(), b"1");
        assert!(!d.path().join("c.js").exists());
    }
}

#[cfg(all(test, unix))]
mod write_file_tests {
    use super::write_file;
    use std::path::Path;

    /// Nothing but `names` in `dir` (no temporary file left behind).
    fn holds_only(dir: &Path, names: &[&str]) {
        let mut found: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        found.sort();
        let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(found, want);
    }

    #[test]
    fn replaces_a_file_keeping_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("out.md");
        write_file(&f, b"first").unwrap();
        std::fs::write(&f, "old, longer content").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&f, b"new").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        // A read-only file stays as it is (writing into it would fail).
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_file(&f, b"newer").unwrap_err().to_string();
        assert!(e.contains("read-only"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        holds_only(d.path(), &["out.md"]);
    }

    #[test]
    fn never_follows_a_link() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = d.path().join("link.md");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_file(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // A dangling link: nothing is created where it points.
        let dangling = d.path().join("dangling.md");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(write_file(&dangling, b"x").is_err());
        assert!(!d.path().join("nowhere").exists());
        holds_only(d.path(), &["victim", "link.md", "dangling.md"]);
    }

    #[test]
    fn never_writes_into_a_hard_linked_file() {
        let d = tempfile::tempdir().unwrap();
        let other = d.path().join("other-name");
        std::fs::write(&other, "keep").unwrap();
        let out = d.path().join("out.csv");
        std::fs::hard_link(&other, &out).unwrap();
        let e = write_file(&out, b"x").unwrap_err().to_string();
        assert!(e.contains("hard link"), "{e}");
        assert_eq!(std::fs::read(&other).unwrap(), b"keep");
        assert_eq!(std::fs::read(&out).unwrap(), b"keep");
        holds_only(d.path(), &["other-name", "out.csv"]);
    }

    #[test]
    fn never_feeds_a_fifo_a_device_or_a_folder() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No reader: refused at once, never blocking, and still a FIFO.
        let e = write_file(&fifo, b"x").unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        let e = write_file(Path::new("/dev/null"), b"x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("device"), "{e}");
        let e = write_file(d.path(), b"x").unwrap_err().to_string();
        assert!(e.contains("folder"), "{e}");
        holds_only(d.path(), &["fifo"]);
    }
}
