//! The repository: git itself, run without a shell and without the
//! caller's `GIT_*` settings (a `GIT_DIR` left in the environment by a hook
//! would send every command to another repository), on a folder this
//! command made; commits are written by `git fast-import` from a stream.

use crate::report::outdir::OutputError;
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

/// The configuration key that marks a repository as one this command
/// made: it appends only to those.
const MARK_KEY: &str = "cc-teardown.history";
const MARK_VALUE: &str = "catalogue";

/// `git` with a clean environment: no `GIT_*` variable of the caller, and
/// `GIT_DIR` set when a repository is named.
fn git(dir: Option<&Path>) -> Command {
    let mut c = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    if let Some(d) = dir {
        c.env("GIT_DIR", d);
    }
    c.stdin(Stdio::null());
    c
}

/// The installed git's version line, or an error that says git is needed.
pub fn check_git() -> anyhow::Result<String> {
    match git(None).arg("--version").output() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "git is not installed (or not on PATH): `history export --format git` writes the repository with git's own fast-import; install git and run it again"
        ),
        Err(e) => Err(e).context("running git --version"),
        Ok(o) if !o.status.success() => bail!(
            "git --version failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Ok(o) => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
    }
}

/// A bare repository made by this command.
pub struct Repo {
    pub dir: PathBuf,
}

/// What occupies `p`, not following a link.
fn occupant(p: &Path) -> std::io::Result<Option<std::fs::FileType>> {
    match std::fs::symlink_metadata(p) {
        Ok(m) => Ok(Some(m.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn in_the_way(msg: String) -> anyhow::Error {
    OutputError::InTheWay(msg).into()
}

impl Repo {
    /// The repository at `dir`: made there when `dir` is missing or an
    /// empty folder (bare, HEAD on `branch`), opened when it is one this
    /// command made. Anything else — a file, a folder with other things in
    /// it, another repository, a repository whose parts are links — is
    /// refused before anything is written. `dir` itself is the user's path
    /// and may be a link, as for every output folder.
    pub fn open_or_make(dir: &Path, branch: &str) -> anyhow::Result<(Repo, bool)> {
        let repo = Repo {
            dir: dir.to_path_buf(),
        };
        let shown = dir.display();
        match std::fs::metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if occupant(dir)?.is_some() {
                    return Err(in_the_way(format!(
                        "{shown} is a link to nothing; refusing to write through it"
                    )));
                }
                std::fs::create_dir_all(dir).with_context(|| format!("creating {shown}"))?;
                repo.init(branch)?;
                return Ok((repo, true));
            }
            Err(e) => return Err(e).with_context(|| format!("checking {shown}")),
            Ok(m) if !m.is_dir() => {
                return Err(in_the_way(format!(
                    "{shown} exists and is not a folder; choose a new or empty folder"
                )));
            }
            Ok(_) => {}
        }
        let empty = std::fs::read_dir(dir)
            .with_context(|| format!("reading {shown}"))?
            .next()
            .is_none();
        if empty {
            repo.init(branch)?;
            return Ok((repo, true));
        }
        // A repository's own parts: real files and folders, not links.
        let parts = [
            ("HEAD", false),
            ("config", false),
            ("objects", true),
            ("refs", true),
        ];
        let mut found = 0;
        for (name, folder) in parts {
            match occupant(&dir.join(name))? {
                None => {}
                Some(t) if t.is_symlink() => {
                    return Err(in_the_way(format!(
                        "{} is a link; refusing to write through it",
                        dir.join(name).display()
                    )));
                }
                Some(t) if t.is_dir() == folder && (folder || t.is_file()) => found += 1,
                Some(_) => {}
            }
        }
        if found < parts.len() {
            return Err(in_the_way(format!(
                "{shown} is not empty and is not a repository made by `history export --format git`; choose a new or empty folder"
            )));
        }
        let mark = repo
            .output(&["config", "--get", MARK_KEY])
            .unwrap_or_default();
        if String::from_utf8_lossy(&mark).trim() != MARK_VALUE {
            return Err(in_the_way(format!(
                "{shown} is a git repository that `history export --format git` did not make; it appends only to its own: choose a new or empty folder"
            )));
        }
        Ok((repo, false))
    }

    /// A new bare repository in the (empty) folder, without templates
    /// (no sample hooks), marked as made by this command.
    fn init(&self, branch: &str) -> anyhow::Result<()> {
        let o = git(None)
            .args(["init", "--bare", "--quiet", "--template="])
            .arg(&self.dir)
            .output()
            .context("running git init")?;
        if !o.status.success() {
            bail!(
                "git init {} failed: {}",
                self.dir.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        self.run(&["config", MARK_KEY, MARK_VALUE])?;
        self.run(&["symbolic-ref", "HEAD", &format!("refs/heads/{branch}")])?;
        Ok(())
    }

    /// Run git on the repository: its stdout, or None when it fails.
    fn output(&self, args: &[&str]) -> Option<Vec<u8>> {
        let o = git(Some(&self.dir)).args(args).output().ok()?;
        o.status.success().then_some(o.stdout)
    }

    /// Run git on the repository: its stdout, or its error as one line.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Vec<u8>> {
        let o = git(Some(&self.dir))
            .args(args)
            .output()
            .with_context(|| format!("running git {}", args.join(" ")))?;
        if !o.status.success() {
            bail!(
                "git {} failed in {}: {}",
                args.join(" "),
                self.dir.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(o.stdout)
    }

    /// The commit a ref names, if it exists.
    pub fn commit_of(&self, refname: &str) -> Option<String> {
        let out = self.output(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{refname}^{{commit}}"),
        ])?;
        Some(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// The branch HEAD names (`refs/heads/…` stripped).
    pub fn head_branch(&self) -> Option<String> {
        let out = self.output(&["symbolic-ref", "-q", "HEAD"])?;
        let r = String::from_utf8_lossy(&out).trim().to_string();
        r.strip_prefix("refs/heads/").map(str::to_string)
    }

    /// A commit's message.
    pub fn message(&self, commit: &str) -> anyhow::Result<String> {
        let raw = self.run(&["cat-file", "commit", commit])?;
        let raw = String::from_utf8_lossy(&raw);
        Ok(raw
            .split_once("\n\n")
            .map(|(_, m)| m.to_string())
            .unwrap_or_default())
    }

    /// Every ref below `prefix` and the object it names.
    pub fn refs(&self, prefix: &str) -> anyhow::Result<BTreeMap<String, String>> {
        let out = self.run(&["for-each-ref", "--format=%(refname) %(objectname)", prefix])?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|l| l.rsplit_once(' '))
            .map(|(r, o)| (r.to_string(), o.to_string()))
            .collect())
    }

    /// The files of a commit's tree: path → blob id.
    pub fn files(&self, commit: &str) -> anyhow::Result<BTreeMap<String, String>> {
        let out = self.run(&["ls-tree", "-r", "-z", "--full-tree", commit])?;
        let mut files = BTreeMap::new();
        for entry in out.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let Some((meta, path)) = entry.split_once('\t') else {
                continue;
            };
            if let Some(id) = meta.split(' ').nth(2) {
                files.insert(path.to_string(), id.to_string());
            }
        }
        Ok(files)
    }

    /// `git fast-import` on the repository, reading the stream written to
    /// [`Import::stream`]. It never forces a branch: a stream that would
    /// rewrite one fails.
    pub fn import(&self) -> anyhow::Result<Import> {
        let mut child = git(Some(&self.dir))
            .args(["fast-import", "--quiet", "--done", "--date-format=raw"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("running git fast-import")?;
        let stdin = child.stdin.take().context("git fast-import's input")?;
        let mut err = child.stderr.take().context("git fast-import's errors")?;
        // Read its errors as they come, so that it never waits on us.
        let errors = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = (&mut err).take(64 << 10).read_to_end(&mut s);
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            String::from_utf8_lossy(&s).into_owned()
        });
        Ok(Import {
            child,
            stream: Some(std::io::BufWriter::with_capacity(1 << 20, stdin)),
            errors: Some(errors),
        })
    }
}

/// A running `git fast-import`.
pub struct Import {
    child: Child,
    stream: Option<std::io::BufWriter<ChildStdin>>,
    errors: Option<std::thread::JoinHandle<String>>,
}

impl Import {
    /// Where the stream is written.
    pub fn stream(&mut self) -> &mut std::io::BufWriter<ChildStdin> {
        self.stream
            .as_mut()
            .expect("the stream is open until finish")
    }

    /// End the stream (`done`) and wait for git to write it.
    pub fn finish(mut self) -> anyhow::Result<()> {
        use std::io::Write;
        let wrote = self
            .stream
            .take()
            .map(|mut s| s.write_all(b"done\n").and_then(|()| s.flush()));
        self.wait(wrote)
    }

    /// Wait for git after the stream ended (or broke: then git's own error
    /// says why).
    fn wait(&mut self, wrote: Option<std::io::Result<()>>) -> anyhow::Result<()> {
        let status = self.child.wait().context("waiting for git fast-import")?;
        let errors = self
            .errors
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if !status.success() {
            let first = errors
                .lines()
                .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
                .or(errors.lines().next())
                .unwrap_or("no message");
            bail!("git fast-import failed ({status}): {first}");
        }
        if let Some(Err(e)) = wrote {
            return Err(e).context("writing to git fast-import");
        }
        Ok(())
    }

    /// Stop without writing: the stream ends without `done`, so git
    /// writes nothing of it.
    pub fn abandon(mut self) {
        drop(self.stream.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
