use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::analysis::gates::{self, CachedFlags};
use crate::report::gates::GatesView;
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
    #[command(flatten)]
    pub out: OutputArgs,
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

pub fn run(app: &App, a: &GatesArgs) -> anyhow::Result<i32> {
    // Before the parse: a bad --config is reported at once.
    let config = config_for(a.config.as_ref())?;
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let an = app.analyse(&build)?.last_use();
    let facts = app.core(&an)?;
    let mut all = facts.gates.clone();
    for gate in &mut all {
        gate.verdict = Some(gates::verdict(&gate.conditions, &config));
    }
    let view = GatesView {
        target: opened.label.clone(),
        version: build.version().best().map(str::to_string),
        config,
        gates: all,
        flags: a.flags.then(|| facts.flags.clone()),
        has_routing: facts
            .roles
            .functions
            .iter()
            .any(|f| f.role == crate::analysis::roles::Role::ReviewRoutingGate),
        every: a.all,
    };
    app.emit(&a.out, &view)
}
