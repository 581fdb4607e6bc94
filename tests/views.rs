//! Every human view on the one document model: a snapshot of each in the
//! three renderers (text, Markdown, HTML) on our own fixture, and the
//! option shape they share (`--format`, `-o`, `--format json`).

use crate::common::*;
use crate::reports::{CONFIG, SINGLE, run};

/// The fixture's SHA-256 (it is a plain .js file: file, payload and bundle
/// are the same bytes).
const SINGLE_SHA: &str = "f5f5a429ad338bcc01b675a86d0af4417855d4fbe978c607eed103148796f76a";

/// Each view's arguments after the command name (the target first).
fn views() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("info", vec![SINGLE]),
        ("hash", vec![SINGLE]),
        ("ls", vec![SINGLE]),
        ("locate", vec![SINGLE]),
        ("flags", vec![SINGLE, "--config", CONFIG]),
        ("workflows", vec![SINGLE]),
        ("gates", vec![SINGLE, "--config", CONFIG, "--all"]),
        ("symbols", vec![SINGLE]),
        ("surface", vec![SINGLE]),
        ("verify", vec![SINGLE, "--file", "--sha256", SINGLE_SHA]),
        (
            "simulate",
            vec![SINGLE, "--workflow", "code-review", "--args", "high"],
        ),
    ]
}

/// The run's wall time is the one figure that changes between runs.
fn steady(out: String) -> String {
    regex::Regex::new(r"\b[0-9][0-9,]* ms\b")
        .unwrap()
        .replace_all(&out, "[n] ms")
        .into_owned()
}

#[test]
fn every_view_in_three_renderers() {
    for (cmd, args) in views() {
        for (format, ext) in [("text", "txt"), ("md", "md"), ("html", "html")] {
            let mut all = vec![cmd];
            all.extend(&args);
            all.extend(["--format", format]);
            let out = steady(run(&all));
            match format {
                "html" => {
                    assert!(out.starts_with("<!DOCTYPE html>"), "{cmd}: {out:.200}");
                    assert!(out.contains("default-src 'none'"), "{cmd}: no policy");
                }
                "md" => assert!(out.starts_with("# "), "{cmd}: {out:.200}"),
                _ => {
                    for l in out.lines() {
                        assert!(l.chars().count() <= 100, "{cmd}: {l}");
                    }
                }
            }
            assert_no_bad_plural(&format!("{cmd} --format {format}"), &out);
            insta::assert_snapshot!(format!("{cmd}.{ext}"), out);
        }
    }
}

/// "1 symbols", "(1 sites)": a count of one with a plural noun, which
/// `fmt::count` exists to prevent.
pub(crate) fn assert_no_bad_plural(what: &str, out: &str) {
    let re = regex::Regex::new(
        r"(?:^|[^0-9,.])1 (symbols|sites|modules|lines|flags|agents|calls|bytes|chunks|functions|workflows|values|files|names|conditions|gates|rows|fan-outs|agent calls|more lines)\b",
    )
    .unwrap();
    if let Some(m) = re.find(out) {
        panic!("{what}: a plural after 1: {:?}", m.as_str());
    }
}

#[test]
fn format_json_is_json_and_output_writes_a_file() {
    let as_flag = json(&["ls", SINGLE]);
    let out = bin()
        .args(["ls", SINGLE, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let as_format: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(as_flag, as_format);

    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("gates.html");
    let out = bin()
        .args([
            "gates", SINGLE, "--config", CONFIG, "--format", "html", "-o",
        ])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "the page goes to the file only");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg"), "the gate's chain is drawn");
    assert!(html.contains("tengu_fixture_routing"));
}

#[test]
fn text_to_a_file_has_no_colour_even_when_asked_for_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("wf.txt");
    let out = bin()
        .args(["workflows", SINGLE, "-o"])
        .arg(&f)
        .args(["--color", "auto"])
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.contains("code-review"));
}
