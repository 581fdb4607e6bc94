//! Output and options (issue 12 §6): untrusted text is escaped in every
//! human output, wrong option values are refused, `--json` holds for errors
//! too, and `grep`/`symbols` say "nothing found" with exit status 1. The
//! hostile inputs are generated here.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;

/// What no human output may hold raw: C0 controls but line feed and tab,
/// DEL, C1 controls, and the bidirectional controls. Written independently
/// of the escaping code it checks.
fn is_hostile(c: char) -> bool {
    let n = c as u32;
    (n < 0x20 && c != '\n' && c != '\t')
        || (0x7f..=0x9f).contains(&n)
        || (0x202a..=0x202e).contains(&n)
        || (0x2066..=0x2069).contains(&n)
}

fn assert_clean(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        if let Some(c) = text.chars().find(|&c| is_hostile(c)) {
            panic!("{what}: raw {c:?} on {stream}:\n{text}");
        }
    }
}

/// What the title-setting, screen-clearing module name becomes on screen.
const SHOWN: &str = r"\x1b]0;TITLE\x07\x1b[2Jevil.js";

/// Our fixture bundle, with control and bidirectional characters put into
/// the strings a build hands the commands: a workflow's description, an
/// export-table name and plain string literals (a flag name with them is
/// not a flag name, and is only a literal). Both raw (the
/// bytes themselves in the source) and as JavaScript escapes (the cooked
/// value holds them).
fn hostile_js() -> String {
    let js = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js"),
    )
    .unwrap();
    let swap = |s: String, from: &str, to: &str| {
        assert!(s.contains(from), "fixture changed: {from}");
        s.replacen(from, to, 1)
    };
    let js = swap(
        js,
        r#"D2 = "Second one""#,
        "D2 = \"Second \\x1b]0;PWNED\\x07\\x1b[2J one\u{202e}\"",
    );
    let js = swap(
        js,
        r#"GateFlag = "tengu_fixture_avocet""#,
        r#"GateFlag = "tengu_fixture_\x1b[2Javocet""#,
    );
    let js = swap(
        js,
        "tt(ns, { initBundledWorkflows",
        "tt(ns, { \"evil\\x1b]0;PWNED\\x07name\": () => Gate, initBundledWorkflows",
    );
    swap(
        js,
        "var ns = {};",
        "var ns = {}, Evil = \"\x1b]0;PWNED\x07\x1b[2J\u{202e}raw\", Esc = \"\\x1b]0;PWNED\\x07cooked\\u009b\\u2066\";",
    )
}

/// An ELF build whose module names carry control characters.
fn hostile_build(dir: &Path) -> PathBuf {
    let js = hostile_js();
    let payload = build_payload(
        &[
            Spec::js("/$bunfs/root/cli\x1b]0;PWNED\x07.js", js.as_bytes()),
            Spec::file(
                "/$bunfs/root/\x1b]0;TITLE\x07\x1b[2Jevil.js",
                b"not JavaScript",
            ),
            Spec::file("/$bunfs/root/\u{202e}sj.exe", b"x"),
            Spec::file("/$bunfs/root/cr\rname\nline\u{9b}\x7f.txt", b"y"),
        ],
        0,
    );
    let p = dir.join("hostile");
    std::fs::write(&p, elf_with_section(&with_header(&payload, 8))).unwrap();
    p
}

/// The same bundle without the hostile strings, to diff against.
fn plain_build(dir: &Path) -> PathBuf {
    let js =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js")).unwrap();
    let payload = build_payload(&[Spec::js("/$bunfs/root/cli.js", &js)], 0);
    let p = dir.join("plain");
    std::fs::write(&p, elf_with_section(&with_header(&payload, 8))).unwrap();
    p
}

#[test]
fn control_characters_are_escaped_in_every_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let h = hostile_build(dir.path());
    let h = h.to_str().unwrap();
    let plain = plain_build(dir.path());
    let plain = plain.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let out_dir = out_dir.to_str().unwrap();
    let zeros = "0".repeat(64);
    // (arguments, expected exit status, text that proves the hostile data
    // reached this output, escaped)
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["info", h], 0, r"cli\x1b]0;PWNED\x07.js"),
        (vec!["ls", h], 0, SHOWN),
        (vec!["ls", h], 0, r"\u{202e}sj.exe"),
        (vec!["ls", h], 0, r"cr\rname\nline\u{9b}\x7f.txt"),
        (vec!["hash", h], 0, SHOWN),
        (vec!["verify", h, "--sha256", &zeros], 1, r"cli\x1b]0;PWNED"),
        (
            vec![
                "verify",
                h,
                "--sha256",
                &zeros,
                "--module",
                "\u{202e}sj.exe",
            ],
            1,
            r"\u{202e}sj.exe",
        ),
        (
            vec!["grep", h, "PWNED"],
            0,
            r"\x1b]0;PWNED\x07\x1b[2J\u{202e}raw",
        ),
        (
            vec!["grep", h, "PWNED", "-C", "3"],
            0,
            r"\x1b]0;PWNED\x07cooked",
        ),
        (vec!["symbols", h], 0, r"evil\x1b]0;PWNED\x07name"),
        (vec!["locate", h], 0, r"cli\x1b]0;PWNED\x07.js"),
        // Flag names are plain by definition: the module name shows here.
        (vec!["flags", h, "--sites"], 0, r"cli\x1b]0;PWNED\x07.js:"),
        (vec!["gates", h, "--all"], 0, r"cli\x1b]0;PWNED\x07.js:"),
        (
            vec!["workflows", h],
            0,
            r"Second \x1b]0;PWNED\x07\x1b[2J one\u{202e}",
        ),
        (vec!["reconstruct", h, "-o", out_dir], 0, "second"),
        (vec!["pretty", h, "--at", "1"], 0, r"cli\x1b]0;PWNED\x07.js"),
        // Such a name is no file name: refused, and quoted escaped.
        (vec!["pretty", h, "--all", "-o", out_dir], 2, "PWNED"),
        (vec!["report", h, "--format", "md"], 0, r"\x1b]0;PWNED"),
        (vec!["report", h, "--format", "html"], 0, r"\x1b]0;PWNED"),
        (vec!["diff", plain, h], 0, SHOWN),
        (vec!["diff", plain, h, "--color", "always"], 0, SHOWN),
        (
            vec!["diff", plain, h, "--format", "md"],
            0,
            r"cli\x1b]0;PWNED\x07.js",
        ),
        // Errors that quote what they were given.
        (vec!["ls", "./\x1b]0;PWNED\x07"], 2, r"\x1b]0;PWNED"),
        (
            vec!["grep", h, "x", "--module", "\x1b]0;PWNED\x07"],
            2,
            "PWNED",
        ),
        (vec!["flags", h, "--kind", "\x1b]0;PWNED\x07"], 2, "PWNED"),
    ];
    for (args, status, shown) in &cases {
        let out = output(args);
        let what = format!("{args:?}");
        assert_eq!(out.status.code(), Some(*status), "{what}: {}", stderr(&out));
        assert_clean(&what, &out);
        let all = stdout(&out) + &stderr(&out);
        assert!(all.contains(shown), "{what}: {shown} not shown in:\n{all}");
    }
}

#[test]
fn grep_colours_only_its_own_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let h = hostile_build(dir.path());
    let out = output(&["grep", h.to_str().unwrap(), "PWNED", "--color", "always"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("\x1b[1;31mPWNED\x1b[0m"),
        "the match is coloured"
    );
    // Take our colour sequences away: nothing raw may remain.
    let re = regex::Regex::new(r"\x1b\[(0|2|32|35|36|1;31)m").unwrap();
    let stripped = re.replace_all(&text, "");
    assert!(
        !stripped.chars().any(is_hostile),
        "raw control left: {stripped:?}"
    );
}

#[test]
fn diff_colours_only_text_that_needs_no_escaping() {
    let dir = tempfile::tempdir().unwrap();
    let plain = plain_build(dir.path());
    let hostile = hostile_build(dir.path());
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let args = |b: &Path| {
        output(&[
            "diff",
            plain.to_str().unwrap(),
            b.to_str().unwrap(),
            "--color",
            "always",
        ])
    };
    let out = args(&single);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("\x1b[1m"), "coloured when safe");
    let out = args(&hostile);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stdout(&out).contains('\x1b'),
        "plain when the builds' text is not"
    );
    assert!(stdout(&out).contains(SHOWN));
}

#[test]
fn json_output_escapes_what_a_terminal_would_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let h = hostile_build(dir.path());
    let out = output(&["ls", h.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0));
    // serde_json leaves DEL, C1 and bidirectional controls raw; they are
    // \u-escaped, and the data is unchanged.
    assert_clean("ls --json", &out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"/$bunfs/root/\u{202e}sj.exe"));
    assert!(names.contains(&"/$bunfs/root/cr\rname\nline\u{9b}\x7f.txt"));
}

/// A thin arm64 Mach-O, a fat one with only arm64, an x86_64 ELF and a .js.
fn arch_targets(dir: &Path) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let payload = build_payload(&[Spec::js("/$bunfs/root/cli.js", b"export {};\n")], 0);
    let section = with_header(&payload, 8);
    let thin = macho_with_section(&section, object::Architecture::Aarch64);
    let fat = fat_macho(&[(CPU_ARM64, &thin)]);
    let paths = [
        ("thin-arm64", thin.clone()),
        ("fat-arm64", fat),
        ("elf-x64", elf_with_section(&section)),
        ("bundle.js", b"export {};\n".to_vec()),
    ]
    .map(|(name, bytes)| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    });
    let [a, b, c, d] = paths;
    (a, b, c, d)
}

#[test]
fn wrong_option_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (thin, fat, elf, js) = arch_targets(dir.path());
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (thin, fat, elf, js) = (s(&thin), s(&fat), s(&elf), s(&js));
    // The architecture read is the one asked for, or an error.
    for (args, says) in [
        (vec!["info", &thin, "--arch", "arm46"], "arm46"),
        (vec!["info", &thin, "--arch", "x86_64"], "arm64"),
        (vec!["info", &fat, "--arch", "x86_64"], "no x86_64 slice"),
        (vec!["info", &elf, "--arch", "arm64"], "x86_64"),
        (vec!["info", &js, "--arch", "arm64"], "no architecture"),
    ] {
        let err = one_line_error(&args, &output(&args));
        assert!(err.contains(says), "{args:?}: {err}");
    }
    for args in [
        vec!["info", &thin, "--arch", "arm64"],
        vec!["info", &thin, "--arch", "aarch64"],
        vec!["info", &fat, "--arch", "arm64"],
        vec!["info", &elf, "--arch", "x86_64"],
        vec!["info", &elf, "--arch", "amd64"],
    ] {
        let out = output(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    // Fixed values are a closed list, said in the one line.
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single = single.to_str().unwrap();
    let err = one_line_error("--kind", &output(&["flags", single, "--kind", "featur"]));
    assert!(err.contains("feature, event, config, other"), "{err}");
    let out = output(&["flags", single, "--kind", "feature"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = one_line_error(
        "--platform",
        &output(&["fetch", "1.0.0", "--platform", "plan9"]),
    );
    assert!(err.contains("darwin-arm64"), "{err}");
    // A target naming one platform while --platform names another.
    let err = one_line_error(
        "linux-x64",
        &output(&["fetch", "npm:1.0.0/linux-x64", "--platform", "win32-x64"]),
    );
    assert!(err.contains("win32-x64"), "{err}");
    one_line_error("plan9", &output(&["fetch", "npm:1.0.0/plan9"]));
    one_line_error(
        "--only",
        &output(&["diff", single, single, "--only", "flag"]),
    );
    one_line_error("--format", &output(&["report", single, "--format", "pdf"]));
    // A named config must be usable; a missing root is an error.
    let bad_json = dir.path().join("bad.json");
    std::fs::write(&bad_json, "{not json").unwrap();
    let array = dir.path().join("array.json");
    std::fs::write(&array, "[1,2]").unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    for cmd in ["gates", "flags", "report"] {
        for (config, says) in [
            ("/nonexistent.json", "cannot read"),
            (bad_json.to_str().unwrap(), "not valid JSON"),
            (array.to_str().unwrap(), "not a JSON object"),
            (fifo.to_str().unwrap(), "not a regular file"),
            ("/dev/zero", "not a regular file"),
            (dir.path().to_str().unwrap(), "not a regular file"),
        ] {
            let t = std::time::Instant::now();
            let out = bin()
                .args([cmd, single, "--config", config])
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            let err = one_line_error(format!("{cmd} --config {config}"), &out);
            assert!(err.contains(says), "{cmd} {config}: {err}");
            assert!(t.elapsed().as_secs() < 30, "{cmd} {config} hung");
        }
    }
    let err = one_line_error(
        "--root",
        &output(&["installs", "--root", "/nonexistent-root"]),
    );
    assert!(err.contains("/nonexistent-root"), "{err}");
}

#[test]
fn errors_under_json_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, vec![0x42u8; 4096]).unwrap();
    let truncated = dir.path().join("truncated");
    let mut payload = build_payload(&[Spec::js("/$bunfs/root/cli.js", b"1;")], 0);
    payload.drain(..8);
    std::fs::write(&truncated, elf_with_section(&with_header(&payload, 8))).unwrap();
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single = single.to_str().unwrap();
    for (args, kind) in [
        (vec!["info", "/nonexistent/claude"], "source"),
        (vec!["ls", garbage.to_str().unwrap()], "container"),
        (vec!["hash", truncated.to_str().unwrap()], "bun"),
        (vec!["flags", single, "--kind", "featur"], "usage"),
        (vec!["frobnicate"], "usage"),
        (vec!["grep", single, "(", "--regex"], "usage"),
        (vec!["verify", single, "--sha256", "abc"], "usage"),
        (vec!["pretty", single, "--at", "x"], "usage"),
        (
            vec!["gates", single, "--config", "/nonexistent.json"],
            "usage",
        ),
    ] {
        let out = output(&[args.as_slice(), &["--json"]].concat());
        let what = format!("{args:?}");
        let err = one_line_error(&what, &out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{what}: stdout is not JSON ({e}): {}", stdout(&out)));
        assert_eq!(v["error"]["kind"], kind, "{what}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert_eq!(
            err.trim_end(),
            format!("error: {message}"),
            "{what}: the same line"
        );
    }
    // Without --json, stdout stays empty.
    let out = output(&["info", "/nonexistent/claude"]);
    one_line_error("info", &out);
    assert!(out.stdout.is_empty());
}

#[test]
fn every_command_honours_json() {
    let dir = tempfile::tempdir().unwrap();
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single = single.to_str().unwrap();
    // pretty without -o: the code, as JSON, and the same code as printed.
    let v = json(&["pretty", single]);
    let code = output(&["pretty", single]);
    assert_eq!(
        v["code"].as_str().unwrap().as_bytes(),
        code.stdout.as_slice()
    );
    assert_eq!(v["line_map"]["format"], "cc-teardown-linemap/1");
    assert_eq!(
        v["pretty_lines"].as_u64().unwrap() as usize,
        String::from_utf8_lossy(&code.stdout).lines().count()
    );
    // Reports written to a file say so as JSON.
    for cmd in [
        vec!["report", single, "--format", "md"],
        vec!["diff", single, single, "--only", "flags"],
    ] {
        let file = dir.path().join("out.txt");
        let mut args = cmd.clone();
        args.extend(["-o", file.to_str().unwrap()]);
        let v = json(&args);
        assert_eq!(v["output"], file.to_str().unwrap(), "{cmd:?}");
        assert!(std::fs::metadata(&file).unwrap().len() > 0);
    }
}

#[test]
fn grep_and_symbols_exit_1_when_nothing_is_found() {
    let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/single.js");
    let single = single.to_str().unwrap();
    let none = "no-such-text-anywhere-0xdead";
    for args in [
        vec!["grep", single, none],
        vec!["symbols", single, "--grep", none],
    ] {
        let out = output(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", stderr(&out));
        let out = output(&[args.as_slice(), &["--json"]].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?} --json");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let list = if args[0] == "grep" { "hits" } else { "symbols" };
        assert_eq!(v[list].as_array().unwrap().len(), 0, "{args:?}: {v}");
    }
    for args in [
        vec!["grep", single, "code-review"],
        vec!["symbols", single, "--grep", "findWorkflow"],
    ] {
        let out = output(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

/// The allocator keeps freed memory (src/main.rs): the option the binary
/// sets by its place in mimalloc's option list is the one the
/// `MIMALLOC_PURGE_DELAY` variable names, and a user's value still wins.
#[test]
fn the_allocator_keeps_freed_memory_unless_told_otherwise() {
    let delay = |env: Option<&str>| {
        let mut c = bin();
        c.env("CC_TEARDOWN_DEBUG", "alloc")
            .env_remove("MIMALLOC_PURGE_DELAY");
        if let Some(v) = env {
            c.env("MIMALLOC_PURGE_DELAY", v);
        }
        // Any command (the setting follows it): one that needs nothing.
        let out = c.args(["completions", "bash"]).output().unwrap();
        assert!(out.status.success());
        stderr(&out)
            .lines()
            .find_map(|l| {
                l.strip_prefix("debug: allocator purge delay ")
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("no allocator line: {}", stderr(&out)))
    };
    assert_eq!(delay(None), "-1", "freed memory is kept");
    // A scan analyses build after build: there freed memory is handed back
    // after 10 ms from the start (mimalloc's own delay, a second, let the
    // peak grow with the builds), so its peak stays one build's. The line
    // is printed before the scan starts (which then fails: no such
    // release).
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .env("CC_TEARDOWN_DEBUG", "alloc")
        .env_remove("MIMALLOC_PURGE_DELAY")
        .args(["history", "scan", "0.0.0-none", "--quiet", "--store"])
        .arg(dir.path().join("s.sqlite"))
        .arg("--cache-dir")
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let scan_delay = stderr(&out)
        .lines()
        .find_map(|l| {
            l.strip_prefix("debug: allocator purge delay ")
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no allocator line: {}", stderr(&out)));
    assert_eq!(scan_delay, "10", "a scan purges after 10 ms");
    assert_eq!(
        delay(Some("250")),
        "250",
        "the variable sets the option read back"
    );
}

/// A build truncated while it is read (an updater rewriting an installed
/// executable in place): the pages past its new end raise SIGBUS, which
/// killed the process ("Bus error", exit 135). Now the run ends as for any
/// unreadable input: one line, exit 2.
#[cfg(unix)]
#[test]
fn a_file_truncated_while_mapped_is_an_error_not_a_crash() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let mut js = String::new();
    for i in 0..400_000 {
        js.push_str(&format!("function f{i}(a,b){{return a+b*{i}+\"s{i}\";}}\n"));
    }
    let big = dir.path().join("big.js");
    std::fs::write(&big, &js).unwrap();
    let start = |args: &[&std::ffi::OsStr]| {
        command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let said_so = |out: &Output| {
        let err = one_line_error(out.status.signal(), out);
        assert!(err.contains("truncated or became unreadable"), "{err}");
    };
    // The handler, for certain: the signal itself, while `pretty` works
    // on 20 MB (seconds), in human and JSON mode; and to every thread of
    // the process at once, as when both cores read the lost pages (one
    // line still, not one a thread).
    for (json, every_thread) in [(false, false), (true, false), (false, true)] {
        let mut args = vec!["pretty".as_ref(), big.as_os_str()];
        if json {
            args.push("--json".as_ref());
        }
        let mut child = start(&args);
        std::thread::sleep(Duration::from_millis(300));
        assert!(child.try_wait().unwrap().is_none(), "still at work");
        let pid = child.id() as libc::pid_t;
        if every_thread {
            let tasks: Vec<libc::pid_t> = std::fs::read_dir(format!("/proc/{pid}/task"))
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect();
            assert!(tasks.len() >= 2, "pretty works on several threads");
            for t in tasks {
                unsafe { libc::syscall(libc::SYS_tgkill, pid, t, libc::SIGBUS) };
            }
        } else {
            unsafe { libc::kill(pid, libc::SIGBUS) };
        }
        let out = child.wait_with_output().unwrap();
        said_so(&out);
        if json {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["error"]["kind"], "source");
        }
    }
    // A real truncation, at several moments of a run that reads every
    // page: never a signal, whichever way the race falls.
    for delay in [5, 15, 30, 60, 120] {
        let copy = dir.path().join(format!("copy-{delay}.js"));
        std::fs::write(&copy, &js).unwrap();
        let child = start(&["hash".as_ref(), copy.as_os_str()]);
        std::thread::sleep(Duration::from_millis(delay));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_len(0)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.signal(),
            None,
            "truncated after {delay} ms: {}",
            stderr(&out)
        );
        if out.status.code() != Some(0) {
            // Truncated before it was opened is an empty file's error.
            one_line_error(format!("truncated after {delay} ms"), &out);
        }
    }
}
