use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::analysis::gates::{self, CachedFlags, Gate};
use crate::report::doc::{Block, Doc, Inline, Section, Status, fmt};
use crate::report::teardown;
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
    let g = &a.out.global(g);
    // Before the parse: a bad --config is reported at once.
    let config = config_for(a.config.as_ref())?;
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?.last_use();
    let facts = super::code::facts(g, &an)?;
    let roles = &facts.roles;
    let mut all = facts.gates.clone();
    let inventory = a.flags.then(|| facts.flags.clone());
    for gate in &mut all {
        gate.verdict = Some(gates::verdict(&gate.conditions, &config));
    }
    if g.json {
        return a
            .out
            .json(
                g,
                &GatesView {
                    target: opened.label.clone(),
                    version: build.version().best().map(str::to_string),
                    config,
                    gates: all,
                    flags: inventory,
                },
            )
            .map(|_| 0);
    }
    let has_routing = roles
        .functions
        .iter()
        .any(|f| f.role == crate::analysis::roles::Role::ReviewRoutingGate);
    let d = doc(
        &opened.label,
        &config,
        has_routing,
        &all,
        a.all,
        inventory.as_ref(),
    );
    a.out.text(g, &d)?;
    Ok(0)
}

/// What the config holds, then each gate shown: its conditions in order,
/// the verdict and the chain as a picture.
fn doc(
    label: &str,
    config: &CachedFlags,
    has_routing: bool,
    all: &[Gate],
    every: bool,
    inventory: Option<&crate::analysis::flags::FlagInventory>,
) -> Doc {
    let mut d = Doc::new(Inline::from("Gates of ").c(label)).bare();
    match (&config.problem, &config.path) {
        (Some(p), _) => d.push(Block::Note(
            Inline::from("config: ")
                .t(p.clone())
                .t("; verdicts use each flag's default"),
        )),
        (None, Some(path)) => d.push(Block::Note(Inline::from("config: ").c(path.clone()).t(
            format!(
                " ({})",
                fmt::count(
                    config.values.len(),
                    "cached flag value",
                    "cached flag values"
                )
            ),
        ))),
        _ => {}
    }
    if !has_routing {
        d.push(Block::Note("no review-routing gate in this build".into()));
    }
    let shown: Vec<&Gate> = all
        .iter()
        .filter(|gt| every || gt.role.is_workflow_gate())
        .collect();
    for gt in &shown {
        let mut blocks = Vec::new();
        for c in &gt.conditions {
            let mut line = Inline::from(format!("{}. ", c.index))
                .s(Status::Muted, format!("{:<20} ", c.kind.as_str()))
                .c(c.text.clone());
            if let Some(v) = c.flag.as_ref().and_then(|f| config.values.get(f)) {
                line = line.t("  [cached: ").c(v.to_string()).t("]");
            }
            line = line.t(format!(
                "  ({}:{})",
                c.module.rsplit('/').next().unwrap_or(""),
                c.line
            ));
            blocks.push(Block::Note(line));
        }
        if let Some(v) = &gt.verdict {
            blocks.push(Block::Note(
                Inline::from("verdict: ").extend(teardown::verdict_inline(v)),
            ));
        }
        blocks.push(teardown::gate_figure(&gt.role.to_string(), gt, config));
        let title = Inline::from(format!("{} ", gt.role))
            .c(gt.function.as_deref().unwrap_or("(anonymous)"))
            .t(gt
                .original
                .as_ref()
                .map(|o| format!(" [{o}]"))
                .unwrap_or_default())
            .t(format!(
                " — {}:{} (pretty {})",
                gt.module.rsplit('/').next().unwrap_or(""),
                gt.raw_line,
                gt.pretty_line
            ));
        d.push(Block::Section(Section::new(
            &format!("gate-{}-{}", gt.role, gt.raw_line),
            title,
            blocks,
        )));
    }
    if let Some(inv) = inventory {
        let counts: Vec<String> = inv
            .counts
            .iter()
            .map(|(k, n)| format!("{} {k}", fmt::n(*n)))
            .collect();
        d.push(Block::Note(
            format!("flags: {} ({})", fmt::n(inv.flags.len()), counts.join(", ")).into(),
        ));
    }
    let hidden = all.len() - shown.len();
    if hidden > 0 {
        d.push(Block::Note(
            format!(
                "… and {} more (--all lists them, --json has them all)",
                fmt::count(hidden, "flag-decided function", "flag-decided functions")
            )
            .into(),
        ));
    }
    d
}
