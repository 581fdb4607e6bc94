use super::{Global, TargetArg, print_json};
use crate::analysis::gates::{self, CachedFlags, Gate};
use crate::report::escape::display as esc;
use crate::source::config;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct GatesArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Cached flag values to judge the gates with (default: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json). Never written.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Also list every small flag-decided function ("flag-gate"), not only the workflow gates.
    #[arg(long)]
    pub all: bool,
    /// Also compute the flag inventory (as `flags` does), sharing the one parse and index.
    #[arg(long)]
    pub flags: bool,
}

#[derive(serde::Serialize)]
struct GatesView {
    target: String,
    version: Option<String>,
    config: CachedFlags,
    gates: Vec<Gate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flags: Option<crate::analysis::flags::FlagInventory>,
}

/// The cached flag values to judge with. A config named with --config must
/// be usable (else a usage error, exit 2); the default one is optional, and
/// what is wrong with it is only noted.
pub fn config_for(path: Option<&PathBuf>) -> anyhow::Result<CachedFlags> {
    let flags = |c: config::ClaudeConfig| CachedFlags::from_config(&c.path, &c.object);
    if let Some(p) = path {
        return match config::read(p) {
            Ok(c) => Ok(flags(c)),
            Err(why) => usage!("--config: {why}"),
        };
    }
    Ok(match config::default_path() {
        Some(p) if p.exists() => config::read(&p)
            .map(flags)
            .unwrap_or_else(|why| CachedFlags {
                path: Some(p.display().to_string()),
                problem: Some(why.to_string()),
                ..Default::default()
            }),
        Some(p) => CachedFlags {
            path: Some(p.display().to_string()),
            problem: Some(format!("no config at {} (pass --config PATH)", p.display())),
            ..Default::default()
        },
        None => CachedFlags {
            problem: Some("no config found (pass --config PATH)".into()),
            ..Default::default()
        },
    })
}

pub fn run(g: &Global, a: &GatesArgs) -> anyhow::Result<i32> {
    // Before the parse: a bad --config is reported at once.
    let config = config_for(a.config.as_ref())?;
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?;
    let facts = super::code::facts(g, &an)?;
    let roles = &facts.roles;
    let mut all = facts.gates.clone();
    let inventory = a.flags.then(|| facts.flags.clone());
    for gate in &mut all {
        gate.verdict = Some(gates::verdict(&gate.conditions, &config));
    }
    if g.json {
        return print_json(&GatesView {
            target: opened.label.clone(),
            version: build.version().best().map(str::to_string),
            config,
            gates: all,
            flags: inventory,
        })
        .map(|_| 0);
    }
    match (&config.problem, &config.path) {
        (Some(p), _) => outln!("config: {}; verdicts use each flag's default", esc(p)),
        (None, Some(path)) => outln!(
            "config: {} ({} cached flag values)",
            esc(path),
            config.values.len()
        ),
        _ => {}
    }
    if !roles
        .functions
        .iter()
        .any(|f| f.role == crate::analysis::roles::Role::ReviewRoutingGate)
    {
        outln!("no review-routing gate in this build");
    }
    let shown: Vec<&Gate> = all
        .iter()
        .filter(|gt| a.all || gt.role.is_workflow_gate())
        .collect();
    for gt in &shown {
        outln!(
            "\n{} {}{} — {}:{} (pretty {})",
            gt.role,
            esc(gt.function.as_deref().unwrap_or("(anonymous)")),
            gt.original
                .as_ref()
                .map(|o| format!(" [{}]", esc(o)))
                .unwrap_or_default(),
            esc(gt.module.rsplit('/').next().unwrap_or("")),
            gt.raw_line,
            gt.pretty_line
        );
        for c in &gt.conditions {
            let cached = c
                .flag
                .as_ref()
                .and_then(|f| config.values.get(f))
                .map(|v| format!("  [cached: {v}]"))
                .unwrap_or_default();
            outln!(
                "  {}. {:<20} {}{cached}  ({}:{})",
                c.index,
                c.kind.as_str(),
                esc(&c.text),
                esc(c.module.rsplit('/').next().unwrap_or("")),
                c.line
            );
        }
        if let Some(v) = &gt.verdict {
            outln!("  verdict: {}", esc(&v.describe()));
        }
    }
    if let Some(inv) = &inventory {
        let counts: Vec<String> = inv.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        outln!("\nflags: {} ({})", inv.flags.len(), counts.join(", "));
    }
    let hidden = all.len() - shown.len();
    if hidden > 0 {
        outln!(
            "\n… and {hidden} more flag-decided functions (--all lists them, --json has them all)"
        );
    }
    Ok(0)
}
