//! The documentation stays true to the binary and to itself: the command
//! reference is the binary's own help, and every relative link and every
//! `docs/….md` path named in a Markdown file leads to a file (and a link's
//! `#anchor` to a heading in it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn commands_md_is_current() {
    // Through the sandbox like every run of the binary (the script runs
    // it with an empty environment anyway: help reads no cache).
    let out = crate::common::command_of("bash")
        .arg(root().join("scripts/commands-doc.sh"))
        .arg("--stdout")
        .env("CC_TEARDOWN_BIN", crate::common::EXE)
        .output()
        .expect("bash runs scripts/commands-doc.sh");
    assert!(
        out.status.success(),
        "scripts/commands-doc.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = String::from_utf8(out.stdout).unwrap();
    let have = std::fs::read_to_string(root().join("docs/commands.md")).unwrap_or_default();
    if want != have {
        let line = want
            .lines()
            .zip(have.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(have.lines().count()));
        panic!(
            "docs/commands.md is out of date (first difference at line {}: the help says {:?}, \
             the file {:?}).\nRegenerate it with `scripts/commands-doc.sh` and commit it.",
            line + 1,
            want.lines().nth(line).unwrap_or("<end>"),
            have.lines().nth(line).unwrap_or("<end>"),
        );
    }
}

/// The Markdown files of the repository (none under `target/` or a
/// scratch folder).
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), &mut out);
    out.sort();
    out
}

/// Lines outside fenced code blocks, inline code removed.
fn prose(text: &str) -> Vec<(usize, String)> {
    let code = regex::Regex::new(r"`[^`]*`").unwrap();
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, code.replace_all(line, "").into_owned()));
        }
    }
    out
}

/// GitHub's anchors for a file's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = line
            .strip_prefix('#')
            .map(|t| t.trim_start_matches('#'))
            .filter(|t| t.starts_with(' '))
        else {
            continue;
        };
        if fenced {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

#[test]
fn relative_links_and_doc_paths_resolve() {
    let link = regex::Regex::new(r#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#).unwrap();
    let path = regex::Regex::new(r"\bdocs/[A-Za-z0-9_./-]+\.md\b").unwrap();
    let files = markdown_files();
    assert!(files.len() > 10, "found only {files:?}");
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(root()).unwrap().display().to_string();
        // Paths named in the text (`docs/guide/cache.md`) count from the
        // repository's root, in code spans too (the command reference's
        // come from the binary's help).
        for (n, line) in text.lines().enumerate() {
            for m in path.find_iter(line) {
                if !root().join(m.as_str()).is_file() {
                    broken.push(format!("{shown}:{}: {} (no such file)", n + 1, m.as_str()));
                }
            }
        }
        for (n, line) in prose(&text) {
            for c in link.captures_iter(&line) {
                let target = &c[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file_part, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target, None),
                };
                let dest = if file_part.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(file_part)
                };
                if !dest.exists() {
                    broken.push(format!("{shown}:{n}: {target} (no such file)"));
                    continue;
                }
                if let Some(anchor) = anchor {
                    let body = std::fs::read_to_string(&dest).unwrap_or_default();
                    if !anchors(&body).contains(anchor) {
                        broken.push(format!("{shown}:{n}: {target} (no such heading)"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_github() {
    let a = anchors(
        "# Command reference\n## cc-teardown history scan\n## Exit status, and errors\n```\n# not a heading\n```\n## `verify --published`\n## Exit status, and errors\n",
    );
    let want: BTreeSet<String> = [
        "command-reference",
        "cc-teardown-history-scan",
        "exit-status-and-errors",
        "verify---published",
        "exit-status-and-errors-1",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(a, want);
}
