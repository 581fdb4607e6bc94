use super::App;
use super::format::{Format, OutputArgs};
use crate::analysis::gates;
use crate::bun::digest::sha256_hex;
use crate::report::info::InfoView;
use crate::report::teardown::{Hashes, Teardown, simulate_levels};
use crate::source::installs;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// What to report on (default: the installation the shell runs).
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Cached flag values for the gate verdicts (default: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Do not run the workflows' simulations (one per effort level) for the agents per phase.
    #[arg(long)]
    pub no_simulate: bool,
}

pub fn run(app: &App, a: &ReportArgs) -> anyhow::Result<i32> {
    // Before anything is opened: a bad --config is reported at once.
    let config = super::gates::config_for(a.config.as_ref())?;
    let target = a.target.clone().unwrap_or_else(|| "installed".to_string());
    // One scan of the installations serves both the default target and the
    // install facts (it opens and hashes every installed build).
    let scan = target
        .starts_with("installed")
        .then(|| installs::Scope::from_env(None).map(|s| installs::scan(&s)))
        .transpose()?;
    if a.target.is_none()
        && !scan
            .as_ref()
            .is_some_and(|s| s.installs.iter().any(|i| i.selected))
    {
        return Err(crate::source::SourceError::NotInstalled(
            "name a build, e.g. `cc-teardown report npm:2.1.220/darwin-arm64`".into(),
        )
        .into());
    }
    let opened = app.open(&target)?;
    let build = app.build(&opened)?;
    let install = scan.and_then(|s| {
        s.installs
            .into_iter()
            .find(|i| std::path::Path::new(&i.resolved) == opened.path)
    });
    let an = app.analyse(&build)?.last_use();
    let facts = app.core(&an)?;
    let roles = facts.roles.clone();
    let wfs = facts.workflows.clone();
    let mut all_gates = facts.gates.clone();
    all_gates.retain(|gt| gt.role.is_workflow_gate());
    for gt in &mut all_gates {
        gt.verdict = Some(gates::verdict(&gt.conditions, &config));
    }
    let inventory = &facts.flags;
    let info = InfoView::from_build(&build).with_signature(&build);
    let (file, payload) = rayon::join(
        || sha256_hex(opened.bytes()),
        || sha256_hex(build.located.payload),
    );
    let hashes = Hashes {
        file,
        payload,
        bundle: info.bundle.sha256.clone(),
        bundle_digest: an.digest().to_string(),
    };
    let mut undetermined = Vec::new();
    if info.version.is_none() {
        undetermined.push(
            "the Claude Code version (no version header or constant in the bundle)".to_string(),
        );
    }
    for r in &roles.absent {
        undetermined.push(format!("role {}: {}", r.role.as_str(), r.reason));
    }
    for w in &wfs {
        if let Some(e) = &w.script_error {
            undetermined.push(format!("the {} script: {e}", w.name));
        }
        if let Some(n) = &w.levels_note {
            undetermined.push(format!("the {} levels: {n}", w.name));
        }
    }
    if let Some(p) = &config.problem {
        undetermined.push(format!(
            "cached flag values: {p}; verdicts use the defaults"
        ));
    }
    let routing_gate = all_gates
        .iter()
        .find(|gt| gt.role == gates::GateRole::ReviewRouting)
        .cloned();
    let option_gates: Vec<_> = all_gates
        .iter()
        .filter(|gt| gt.role != gates::GateRole::ReviewRouting)
        .cloned()
        .collect();
    let gate_refs: Vec<&gates::Gate> = all_gates.iter().collect();
    let simulation = (!a.no_simulate).then(|| simulate_levels(&wfs));
    let report = Teardown {
        tool: format!("cc-teardown {}", env!("CARGO_PKG_VERSION")),
        flags: Teardown::summarise_flags(inventory, &gate_refs, &config),
        scripts: wfs
            .iter()
            .filter_map(|w| w.text.clone().map(|t| (w.name.clone(), t)))
            .collect(),
        info,
        install,
        hashes,
        roles,
        workflows: wfs,
        routing_gate,
        option_gates,
        config,
        undetermined,
        inventory: inventory.flags.clone(),
        provenance: crate::report::provenance::Provenance::of_this_run(),
        simulation,
    };
    app.output(&a.out, Format::Md).emit(&report)?;
    Ok(0)
}
