use super::{Global, print_json};
use crate::report::table::{Align, Table};
use crate::source::installs::{self, Scope};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct InstallsArgs {
    /// Inspect another file-system tree: HOME, PATH and CLAUDE_CONFIG_DIR are taken inside it.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

pub fn run(g: &Global, a: &InstallsArgs) -> anyhow::Result<i32> {
    if let Some(root) = a.root.as_deref().filter(|r| !r.is_dir()) {
        usage!("--root {}: not a directory", root.display());
    }
    let report = installs::scan(&Scope::from_env(a.root.clone())?);
    if g.json {
        return print_json(&report).map(|_| 0);
    }
    let print_skipped = || {
        for s in &report.skipped {
            match &s.resolved {
                // Names from the tree: escaped, as every human line is.
                Some(r) if *r != s.path => outln!("skipped: {} → {r}: {}", s.path, s.reason),
                _ => outln!("skipped: {}: {}", s.path, s.reason),
            }
        }
    };
    if report.installs.is_empty() {
        println!(
            "no Claude Code installation found (looked at PATH and the installers' locations)"
        );
        print_skipped();
        for w in &report.warnings {
            outln!("warning: {w}");
        }
        return Ok(0);
    }
    let mut t = Table::new(&[
        ("", Align::Left),
        ("kind", Align::Left),
        ("version", Align::Left),
        ("path", Align::Left),
        ("resolved", Align::Left),
        ("bundle sha256", Align::Left),
    ]);
    for i in &report.installs {
        t.row(vec![
            if i.selected {
                "*".into()
            } else {
                String::new()
            },
            format!("{:?}", i.kind).to_lowercase(),
            i.version.clone().unwrap_or_else(|| "unknown".into()),
            i.path.clone(),
            if i.resolved == i.path {
                "=".into()
            } else {
                i.resolved.clone()
            },
            i.bundle_sha256.as_ref().map_or_else(
                || i.note.clone().unwrap_or_default(),
                |s| s[..16].to_string(),
            ),
        ]);
    }
    print!("{}", t.render());
    println!("* what the shell runs (first claude on PATH)");
    print_skipped();
    for w in &report.warnings {
        outln!("warning: {w}");
    }
    Ok(0)
}
