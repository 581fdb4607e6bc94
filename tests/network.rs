//! `fetch` against a hostile registry on loopback: a registry that answers
//! slowly, stalls, sends without end or redirects cannot keep a command
//! running past its deadline, and a failed download leaves nothing behind.
//! The limits are shortened through `CC_TEARDOWN_NET_LIMITS` (test/debug
//! only) so that each test takes seconds.

use crate::common::{bin, command, failed, one_line_error, stderr};
use base64::Engine;
use sha2::{Digest, Sha512};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the registry does for one path.
#[derive(Clone)]
enum Answer {
    /// 200 with the body, at once.
    Now(&'static str, Vec<u8>),
    /// 200 with a Content-Length (when `declared`), then the body `chunk`
    /// bytes at a time, one chunk every `every`.
    Drip {
        body: Vec<u8>,
        chunk: usize,
        every: Duration,
        declared: bool,
    },
    /// Headers one byte every `every`, never finished.
    DripHeaders(Duration),
    /// Headers declaring `declared` bytes, then silence.
    Stall(u64),
    /// Headers without a length, then bytes as fast as they go, for ever.
    Endless,
    /// 302 to this path.
    Redirect(String),
    NotFound,
}

type Route = Arc<dyn Fn(&str, u16) -> Answer + Send + Sync>;

/// A registry on 127.0.0.1 answering each connection on its own thread
/// (a scan's downloads are in flight together). Returns the port.
fn registry(route: Route) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let route = route.clone();
            std::thread::spawn(move || serve(s, &*route, port));
        }
    });
    port
}

fn serve(mut s: TcpStream, route: &(dyn Fn(&str, u16) -> Answer + Send + Sync), port: u16) {
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&req);
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
    let head = |len: Option<usize>, kind: &str| {
        let mut h = format!("HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\nconnection: close\r\n");
        if let Some(n) = len {
            h.push_str(&format!("content-length: {n}\r\n"));
        }
        h.push_str("\r\n");
        h
    };
    // Each answer stops when the client goes (a write fails) and in any
    // case within a minute, so no test leaves a thread behind for long.
    let give_up = Instant::now() + Duration::from_secs(60);
    match route(&path, port) {
        Answer::Now(kind, body) => {
            let _ = s.write_all(head(Some(body.len()), kind).as_bytes());
            let _ = s.write_all(&body);
        }
        Answer::Drip {
            body,
            chunk,
            every,
            declared,
        } => {
            let h = head(declared.then_some(body.len()), "application/octet-stream");
            if s.write_all(h.as_bytes()).is_err() {
                return;
            }
            for piece in body.chunks(chunk) {
                std::thread::sleep(every);
                if s.write_all(piece).is_err() || Instant::now() > give_up {
                    return;
                }
            }
        }
        Answer::DripHeaders(every) => {
            for b in b"HTTP/1.1 200 OK\r\nx-slow: "
                .iter()
                .chain([b'a'; 4096].iter())
            {
                if s.write_all(&[*b]).is_err() || Instant::now() > give_up {
                    return;
                }
                std::thread::sleep(every);
            }
        }
        Answer::Stall(declared) => {
            let _ =
                s.write_all(head(Some(declared as usize), "application/octet-stream").as_bytes());
            std::thread::sleep(Duration::from_secs(60));
        }
        Answer::Endless => {
            let _ = s.write_all(head(None, "application/octet-stream").as_bytes());
            let block = vec![b'x'; 1 << 16];
            while s.write_all(&block).is_ok() && Instant::now() < give_up {}
        }
        Answer::Redirect(to) => {
            let _ = write!(
                s,
                "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{port}{to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
        Answer::NotFound => {
            let _ = s.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    }
}

const PACKAGE: &str = "@anthropic-ai%2fclaude-code-linux-x64";
const FOLDER: &str = "anthropic-ai+claude-code-linux-x64";

/// A package tarball of our own: a tiny `cli.js` and its package.json.
fn tarball(version: &str) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (name, body) in [
        ("package/cli.js", "console.log(1);\n".to_string()),
        (
            "package/package.json",
            format!(
                "{{\"name\":\"@anthropic-ai/claude-code-linux-x64\",\"version\":\"{version}\"}}"
            ),
        ),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append_data(&mut h, name, body.as_bytes()).unwrap();
    }
    let raw = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap()
}

fn integrity(bytes: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes))
    )
}

/// The version document of `version`, its tarball at `/t/VERSION.tgz`.
fn version_doc(version: &str, port: u16, sha: &str) -> Answer {
    Answer::Now(
        "application/json",
        format!(
            r#"{{"name":"x","version":"{version}","dist":{{"tarball":"http://127.0.0.1:{port}/t/{version}.tgz","integrity":"{sha}"}}}}"#
        )
        .into_bytes(),
    )
}

/// A registry whose version documents answer at once and whose tarballs
/// answer as `tarball` says (`None`: the real tarball, at once).
fn registry_with(tarball_answer: impl Fn(&str) -> Option<Answer> + Send + Sync + 'static) -> u16 {
    registry(Arc::new(move |path: &str, port: u16| {
        if let Some(v) = path.strip_prefix(&format!("/{PACKAGE}/")) {
            // The digest of what will be served when it is served at once
            // (2.1.920 excepted: its digest is wrong on purpose).
            let sha = match tarball_answer(v) {
                Some(Answer::Now(_, body)) if v != "2.1.920" => integrity(&body),
                _ => integrity(&tarball(v)),
            };
            return version_doc(v, port, &sha);
        }
        if let Some(v) = path
            .strip_prefix("/t/")
            .and_then(|p| p.strip_suffix(".tgz"))
        {
            return tarball_answer(v)
                .unwrap_or_else(|| Answer::Now("application/octet-stream", tarball(v)));
        }
        if let Some(a) = path.strip_prefix("/r/") {
            return tarball_answer(a).unwrap_or(Answer::NotFound);
        }
        Answer::NotFound
    }))
}

struct Run {
    out: std::process::Output,
    code: Option<i32>,
    stderr: String,
    took: Duration,
}

fn fetch(cache: &Path, port: u16, version: &str, limits: &str) -> Run {
    let t = Instant::now();
    let out = bin()
        .args(["fetch", version, "--platform", "linux-x64", "--cache-dir"])
        .arg(cache)
        .env("NPM_CONFIG_REGISTRY", format!("http://127.0.0.1:{port}/"))
        .env("CC_TEARDOWN_CACHE", cache)
        .env("CC_TEARDOWN_NET_LIMITS", limits)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stderr: stderr(&out).trim().to_string(),
        took: t.elapsed(),
        out,
    }
}

fn package_dir(cache: &Path) -> PathBuf {
    cache.join("npm").join(FOLDER)
}

/// Nothing of a failed download is left, and its version's lock is free.
fn assert_clean(cache: &Path, version: &str) {
    let dir = package_dir(cache);
    let left: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".part") || n == version)
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    let lock = dir.join(format!(".{version}.lock"));
    if lock.exists() {
        let f = std::fs::File::open(&lock).unwrap();
        assert!(f.try_lock().is_ok(), "the lock of {version} is free");
    }
}

/// Exit 2, one line naming the path and the limit passed, within the
/// deadline and a little.
fn assert_stopped(r: &Run, path: &str, says: &str, within: Duration) {
    one_line_error(path, &r.out);
    assert!(r.stderr.contains(path), "names {path}: {}", r.stderr);
    assert!(r.stderr.contains(says), "says {says:?}: {}", r.stderr);
    assert!(
        r.took < within,
        "ended after {:?}, not within {within:?}",
        r.took
    );
}

/// The sample: a tarball that comes one byte at a time (every 5 s in the
/// report; every 0.2 s here) never trips a read timeout; the minimum rate
/// over a window stops it.
#[test]
fn a_tarball_sent_a_byte_at_a_time_is_abandoned_under_the_minimum_rate() {
    let port = registry_with(|_| {
        Some(Answer::Drip {
            body: vec![0; 100_000],
            chunk: 1,
            every: Duration::from_millis(200),
            declared: true,
        })
    });
    let d = tempfile::tempdir().unwrap();
    let r = fetch(d.path(), port, "2.1.900", "window=1,min_rate=1000");
    assert_stopped(
        &r,
        "/t/2.1.900.tgz",
        "under the minimum of 1000 bytes/s",
        Duration::from_secs(5),
    );
    assert_clean(d.path(), "2.1.900");
}

/// Sibling: a body fast enough for the window but too slow for its size
/// ends at its deadline, base + declared size / rate (0.5 + 2000/2000 s).
#[test]
fn a_tarball_ends_by_its_deadline_scaled_by_its_declared_size() {
    let port = registry_with(|_| {
        Some(Answer::Drip {
            body: vec![0; 2000],
            chunk: 40,
            every: Duration::from_millis(100),
            declared: true,
        })
    });
    let d = tempfile::tempdir().unwrap();
    let r = fetch(
        d.path(),
        port,
        "2.1.900",
        "base=0.5,rate=2000,window=0.3,min_rate=100",
    );
    assert_stopped(
        &r,
        "/t/2.1.900.tgz",
        "deadline of 1.5 s",
        Duration::from_secs(4),
    );
    assert!(
        r.took >= Duration::from_millis(1400),
        "not before: {:?}",
        r.took
    );
    assert_clean(d.path(), "2.1.900");
}

/// Sibling: the metadata request (the version document) has its own
/// deadline, redirects and body included.
#[test]
fn a_slow_metadata_answer_ends_by_its_deadline() {
    let port = registry(Arc::new(|path: &str, _| {
        if path.starts_with(&format!("/{PACKAGE}/")) {
            Answer::Drip {
                body: vec![b' '; 10_000],
                chunk: 1,
                every: Duration::from_millis(100),
                declared: true,
            }
        } else {
            Answer::NotFound
        }
    }));
    let d = tempfile::tempdir().unwrap();
    let r = fetch(d.path(), port, "2.1.900", "metadata=1");
    assert_stopped(
        &r,
        &format!("/{PACKAGE}/2.1.900"),
        "deadline of 1 s",
        Duration::from_secs(4),
    );
    assert_clean(d.path(), "2.1.900");
}

/// Siblings: headers then silence (the read timeout), headers that never
/// end (the headers' deadline), a declared size past the cap (refused at
/// once), a body without a length that never ends (the size cap).
#[test]
fn stalls_endless_bodies_and_oversized_declarations_are_cut() {
    let cases: [(&str, Answer, &str, &str); 4] = [
        (
            "2.1.901",
            Answer::Stall(50_000),
            "read=0.5",
            "nothing received for 0.5 s",
        ),
        (
            "2.1.902",
            Answer::DripHeaders(Duration::from_millis(50)),
            "headers=1",
            "no response headers within 1 s",
        ),
        (
            "2.1.903",
            Answer::Stall(1 << 40),
            "max_bytes=1000000",
            "declares 1099511627776 bytes, more than the 1000000 accepted",
        ),
        (
            "2.1.904",
            Answer::Endless,
            "max_bytes=1000000",
            "larger than the 1000000 bytes accepted",
        ),
    ];
    for (version, answer, limits, says) in cases {
        let port = registry_with(move |_| Some(answer.clone()));
        let d = tempfile::tempdir().unwrap();
        let r = fetch(d.path(), port, version, limits);
        assert_stopped(
            &r,
            &format!("/t/{version}.tgz"),
            says,
            Duration::from_secs(5),
        );
        assert_clean(d.path(), version);
    }
}

/// Sibling: a redirect does not restart the clock — the request's deadline
/// covers every hop — and a redirect loop ends at once.
#[test]
fn redirects_share_the_deadline_and_loops_end() {
    let port = registry_with(|v| match v {
        // The tarball redirects to a body without a length that trickles
        // in fast enough for the window: the cap (no size known) ends it.
        "2.1.910" => Some(Answer::Redirect("/r/trickle".into())),
        "trickle" => Some(Answer::Drip {
            body: vec![0; 100_000],
            chunk: 100,
            every: Duration::from_millis(50),
            declared: false,
        }),
        "2.1.911" => Some(Answer::Redirect("/r/loop".into())),
        "loop" => Some(Answer::Redirect("/r/loop".into())),
        _ => None,
    });
    let d = tempfile::tempdir().unwrap();
    let r = fetch(d.path(), port, "2.1.910", "cap=1.5,window=0.5,min_rate=100");
    assert_stopped(
        &r,
        "/t/2.1.910.tgz",
        "deadline of 1.5 s",
        Duration::from_secs(5),
    );
    assert_clean(d.path(), "2.1.910");
    let r = fetch(d.path(), port, "2.1.911", "");
    one_line_error("2.1.911", &r.out);
    assert!(r.took < Duration::from_secs(10), "{:?}", r.took);
    assert_clean(d.path(), "2.1.911");
}

/// Failures after the download leave nothing either: a tarball whose
/// digest is not the registry's, one that does not unpack. A good tarball
/// is placed, with no part left.
#[test]
fn failures_after_the_download_leave_no_part() {
    let port = registry_with(|v| match v {
        "2.1.920" => Some(Answer::Now("application/octet-stream", tarball("2.1.999"))),
        "2.1.921" => Some(Answer::Now(
            "application/octet-stream",
            b"not gzip".to_vec(),
        )),
        _ => None,
    });
    let d = tempfile::tempdir().unwrap();
    let r = fetch(d.path(), port, "2.1.920", "");
    failed("2.1.920", &r.out);
    assert!(r.stderr.contains("integrity"), "{}", r.stderr);
    assert_clean(d.path(), "2.1.920");
    let r = fetch(d.path(), port, "2.1.921", "");
    failed("2.1.921", &r.out);
    assert_clean(d.path(), "2.1.921");
    let r = fetch(d.path(), port, "2.1.922", "");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(package_dir(d.path()).join("2.1.922/cli.js").is_file());
    assert_clean(d.path(), "2.1.923");
}

/// A fetch killed with SIGKILL runs no drop guard: its part is removed by
/// the next fetch, of another version.
#[cfg(unix)]
#[test]
fn a_killed_fetchs_part_is_swept_by_the_next_fetch_of_another_version() {
    let port = registry_with(|v| {
        (v == "2.1.930").then(|| Answer::Drip {
            body: vec![0; 1_000_000],
            chunk: 1000,
            every: Duration::from_millis(100),
            declared: true,
        })
    });
    let d = tempfile::tempdir().unwrap();
    let mut child = command()
        .args(["fetch", "2.1.930", "--platform", "linux-x64", "--cache-dir"])
        .arg(d.path())
        .env("NPM_CONFIG_REGISTRY", format!("http://127.0.0.1:{port}/"))
        .env("CC_TEARDOWN_CACHE", d.path())
        .env_remove("CC_TEARDOWN_NET_LIMITS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let part = package_dir(d.path()).join(format!(".2.1.930.{}.part", child.id()));
    let start = Instant::now();
    while !part.join("package.tgz").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no part appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(part.exists(), "SIGKILL left its part");
    let r = fetch(d.path(), port, "2.1.931", "");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        !part.exists(),
        "the next fetch swept the killed fetch's part"
    );
    assert_clean(d.path(), "2.1.930");
}

/// Sibling: a history scan's downloads in flight each end by their
/// deadline, together; the scan records the failures and ends.
#[test]
fn a_history_scans_downloads_in_flight_end_by_their_deadlines() {
    let port = registry(Arc::new(|path: &str, port: u16| {
        if path == format!("/{PACKAGE}") {
            let versions = ["2.1.940", "2.1.941", "2.1.942"]
                .map(|v| format!(r#""{v}":{{"version":"{v}"}}"#))
                .join(",");
            return Answer::Now(
                "application/json",
                format!(r#"{{"name":"x","versions":{{{versions}}}}}"#).into_bytes(),
            );
        }
        if let Some(v) = path.strip_prefix(&format!("/{PACKAGE}/")) {
            return version_doc(v, port, &integrity(&tarball(v)));
        }
        if path.starts_with("/t/") {
            return Answer::Drip {
                body: vec![0; 1_000_000],
                chunk: 1,
                every: Duration::from_millis(100),
                declared: true,
            };
        }
        Answer::NotFound
    }));
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = bin()
        .args([
            "history",
            "scan",
            "all",
            "--platform",
            "linux-x64",
            "--jobs",
            "3",
            "--cache-dir",
        ])
        .arg(d.path())
        .env("NPM_CONFIG_REGISTRY", format!("http://127.0.0.1:{port}/"))
        .env("CC_TEARDOWN_CACHE", d.path())
        .env("CC_TEARDOWN_NET_LIMITS", "window=1,min_rate=1000")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a build failed: {err}");
    assert_eq!(
        err.matches("under the minimum of 1000 bytes/s").count(),
        3,
        "each download stopped: {err}"
    );
    // Three in flight at once: one window each, not three in a row.
    assert!(took < Duration::from_secs(6), "{took:?}");
    for v in ["2.1.940", "2.1.941", "2.1.942"] {
        assert_clean(d.path(), v);
    }
}
