//! Running the binary. Every `cc-teardown` the suite starts comes from
//! [`command`] (or [`bin`], the same command for `assert_cmd`), which gives
//! it the running test's own sandbox: a home, an XDG cache folder and a
//! cache folder of its own, so that its facts store (`facts.sqlite`), its
//! machine key (`store.key`) and whatever else the tool keeps there belong
//! to this test alone, and the user's own cache (`~/.cache/cc-teardown`) is
//! never read or written.
//!
//! Downloaded builds are the exception: they are big, never change, and
//! every test that needs one would otherwise download it again. The
//! sandbox's cache folder has one shared `npm/` folder (a link into
//! [`downloads`]), so each build is downloaded once for the whole suite
//! (under the tool's own lock) and kept for the next run.
//!
//! A test may still name a store (`--store`) or a cache folder
//! (`--cache-dir`, `CC_TEARDOWN_CACHE`) of its own: those win.

use std::ffi::OsStr;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The binary under test. Started only by [`command_of`].
pub const EXE: &str = env!("CARGO_BIN_EXE_cc-teardown");

/// A test's own home, XDG cache folder and cache folder, made on its first
/// command and removed when the test ends. Tests run one per thread
/// (libtest's own threads), so a thread's sandbox is its test's.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

thread_local! {
    static SANDBOX: Sandbox = Sandbox::new();
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("cc-teardown-test-")
            .tempdir()
            .unwrap();
        let s = Sandbox { dir };
        std::fs::create_dir_all(s.cache()).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(downloads().join("npm"), s.cache().join("npm")).unwrap();
        s
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn cache(&self) -> PathBuf {
        self.home().join(".cache").join("cc-teardown")
    }
}

/// The running test's home (`HOME` of every command it runs).
pub fn sandbox_home() -> PathBuf {
    SANDBOX.with(Sandbox::home)
}

/// The running test's cache folder (`CC_TEARDOWN_CACHE` of every command
/// it runs): its facts store and machine key are made here.
pub fn sandbox_cache() -> PathBuf {
    SANDBOX.with(Sandbox::cache)
}

/// The user's own cache folder, as the tool finds it without
/// `CC_TEARDOWN_CACHE`: the suite never touches it (scripts/test.sh
/// compares it before and after the suite).
pub fn user_cache() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    var("XDG_CACHE_HOME")
        .map(|d| PathBuf::from(d).join("cc-teardown"))
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache").join("cc-teardown")))
}

/// Where real builds are downloaded once for the whole suite: the
/// `CC_TEARDOWN_CACHE` the suite was started with (a download cache shared
/// with manual runs of the tool), else `target/tmp/downloads`. Only its
/// `npm/` folder is used. Never inside the user's own cache folder.
pub fn downloads() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("CC_TEARDOWN_CACHE")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("downloads"));
        std::fs::create_dir_all(dir.join("npm")).unwrap();
        let dir = dir.canonicalize().unwrap();
        if let Some(user) = user_cache().and_then(|u| u.canonicalize().ok()) {
            assert!(
                !dir.starts_with(&user),
                "CC_TEARDOWN_CACHE={} is the user's own cache folder, which the tests never \
                 touch: point it at another folder, or unset it (downloads then go to \
                 target/tmp/downloads)",
                dir.display()
            );
        }
        dir
    })
}

/// The npm configuration the user's real home holds, for a command whose
/// home is the sandbox's: the tool (and `npm config get registry`) look
/// for the registry there.
fn user_npmrc() -> Option<&'static Path> {
    static RC: OnceLock<Option<PathBuf>> = OnceLock::new();
    RC.get_or_init(|| {
        if std::env::var_os("NPM_CONFIG_USERCONFIG").is_some() {
            return None;
        }
        let rc = PathBuf::from(std::env::var_os("HOME")?).join(".npmrc");
        rc.is_file().then_some(rc)
    })
    .as_deref()
}

/// `program` (the binary under test unless a test copied it elsewhere)
/// in the running test's sandbox. Every command of the suite starts here.
pub fn command_of(program: impl AsRef<OsStr>) -> std::process::Command {
    let mut c = std::process::Command::new(program);
    let (home, cache) = (sandbox_home(), sandbox_cache());
    c.env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("CC_TEARDOWN_CACHE", &cache)
        .env_remove("CC_TEARDOWN_STORE")
        .env_remove("CC_TEARDOWN_OFFLINE");
    if let Some(rc) = user_npmrc() {
        c.env("NPM_CONFIG_USERCONFIG", rc);
    }
    c
}

/// The binary under test, in the running test's sandbox.
pub fn command() -> std::process::Command {
    command_of(EXE)
}

/// [`command`] for `assert_cmd` (timeouts, `assert()`).
pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::from_std(command())
}

/// Run the binary with `args`; its output, whatever its exit status.
pub fn output(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The command succeeded (its stderr in the message if not); its stdout.
#[track_caller]
pub fn succeeded(what: impl Debug, o: &Output) -> String {
    assert!(o.status.success(), "{what:?}: {}", stderr(o));
    stdout(o)
}

/// The command failed as the tool fails on bad input: exit 2, no panic.
/// Its stderr.
#[track_caller]
pub fn failed(what: impl Debug, o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what:?}: {err}");
    assert!(!err.contains("panicked"), "{what:?} panicked: {err}");
    err
}

/// The command refused in one line: exit 2, no panic, and its stderr is
/// exactly one `error: …` line. That line.
#[track_caller]
pub fn one_line_error(what: impl Debug, o: &Output) -> String {
    let err = failed(&what, o);
    assert_eq!(err.lines().count(), 1, "{what:?}: not one line: {err}");
    assert!(err.starts_with("error: "), "{what:?}: {err}");
    err
}

/// Run `args` and expect a one-line error ([`one_line_error`]) holding
/// `needle` (in any case). The line.
#[track_caller]
pub fn refused(args: &[&str], needle: &str) -> String {
    // A hang is killed (and then fails the exit-code check).
    let out = bin()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = one_line_error(args, &out);
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: expected {needle:?} in {err}"
    );
    err
}

/// Run the binary with `--json` and parse stdout; it must succeed.
#[track_caller]
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = bin().args(args).arg("--json").output().unwrap();
    serde_json::from_slice(succeeded(args, &out).as_bytes()).unwrap()
}

/// Run the binary with `--json`: its exit code and the JSON it printed
/// (a report, or the error object of a failure).
#[track_caller]
pub fn json_and_code(cmd: &mut assert_cmd::Command) -> (serde_json::Value, i32) {
    let out = cmd.arg("--json").output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{:?} (exit {code}) printed no JSON ({e}): {}",
            cmd,
            stderr(&out)
        )
    });
    (v, code)
}

/// Run a command that reads or writes facts, with `CC_TEARDOWN_DEBUG=store`
/// in the cache folder `cache` (and the store `store` when given): its
/// stdout, and whether the facts were read from the store (else the debug
/// line says they were computed). It must succeed.
#[track_caller]
pub fn stored_run(cache: &Path, store: Option<&Path>, cmd: &str, target: &str) -> (Vec<u8>, bool) {
    let mut c = bin();
    c.args([cmd, target, "--json", "--quiet", "--cache-dir"])
        .arg(cache)
        .env("CC_TEARDOWN_CACHE", cache)
        .env("CC_TEARDOWN_DEBUG", "store");
    if let Some(s) = store {
        c.arg("--store").arg(s);
    }
    let out = c.output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{cmd} {target}: {err}");
    let hit = err.contains("read from the store");
    assert!(
        hit || err.contains("computed"),
        "{cmd}: the debug line says where the facts came from: {err}"
    );
    (out.stdout, hit)
}

/// Fetch a real build through the project's own `fetch` (into the shared
/// [`downloads`]); returns its JSON (`path`, `version`, `integrity`,
/// `cache_hit`, …).
pub fn fetch_json(version: &str, platform: &str) -> serde_json::Value {
    let out = bin()
        .args([
            "fetch",
            version,
            "--platform",
            platform,
            "--json",
            "--quiet",
        ])
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let stdout = succeeded(format!("fetch {version}/{platform}"), &out);
    serde_json::from_str(&stdout).unwrap()
}

/// Fetch a real build; returns its path (in the running test's cache
/// folder, whose `npm/` is the shared one).
pub fn fetch(version: &str, platform: &str) -> PathBuf {
    PathBuf::from(fetch_json(version, platform)["path"].as_str().unwrap())
}
