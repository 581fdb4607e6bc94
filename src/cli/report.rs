use super::Global;
use super::format::{Format, OutputArgs};
use crate::analysis::gates;
use crate::analysis::simulate::{self, Limits, Options, Scenario};
use crate::analysis::workflows::WorkflowScript;
use crate::bun::digest::sha256_hex;
use crate::report::escape;
use crate::report::info::InfoView;
use crate::report::teardown::{self, Hashes, LevelRun, Teardown, WorkflowRuns};
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

pub fn run(g: &Global, a: &ReportArgs) -> anyhow::Result<i32> {
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
    let opened = g.open(&target)?;
    let build = g.build(&opened)?;
    let install = scan.and_then(|s| {
        s.installs
            .into_iter()
            .find(|i| std::path::Path::new(&i.resolved) == opened.path)
    });
    let an = super::code::analyse(g, &build)?.last_use();
    let facts = super::code::facts(g, &an)?;
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
    // Markdown and HTML are documents of text from the build: escaped as a
    // whole (line breaks and tabs stay), whether for a terminal or a file.
    let output = a.out.output.as_deref();
    let text = match a.out.format(g, Format::Md) {
        Format::Json => super::to_json(&report)?,
        Format::Md => escape::text(&teardown::markdown(&report)).into_owned(),
        Format::Html => escape::text(&teardown::html(&report)).into_owned(),
        Format::Text => {
            super::show_doc(g, output, &report.doc(false))?;
            return Ok(0);
        }
    };
    super::write_output(g, output, &text)?;
    Ok(0)
}

/// Limits of one simulated run in a report: a bundled script at one level
/// runs in milliseconds (2.1.220's code-review: 4–6 ms, 13–20 agents), so
/// these are far above need and keep a hostile build's script from holding
/// the report for long.
const SIM_LIMITS: Limits = Limits {
    timeout: std::time::Duration::from_secs(2),
    memory_bytes: 64 << 20,
    max_agents: 1000,
};

/// Simulate every workflow that has a level table once per level (args: the
/// level's name, seed 0, generated results). The runs happen on one worker
/// thread and each is awaited for its deadline and a grace: the engine
/// polls its deadline only every few thousand operations, so a long native
/// call could outlast it; a run that has not ended by then is reported as
/// stopped and the rest as not run, and the report goes on (the worker is
/// left to end with the process).
fn simulate_levels(wfs: &[WorkflowScript]) -> Vec<WorkflowRuns> {
    use std::sync::mpsc;
    let mut out: Vec<WorkflowRuns> = Vec::new();
    let mut jobs = Vec::new();
    for w in wfs {
        let Some(levels) = &w.levels else { continue };
        let mut runs = Vec::new();
        for l in levels {
            if let Some(text) = &w.text {
                jobs.push((
                    out.len(),
                    runs.len(),
                    w.name.clone(),
                    l.level.clone(),
                    text.clone(),
                    w.phases.iter().map(|p| p.title.clone()).collect::<Vec<_>>(),
                ));
            }
            runs.push(LevelRun::failed(
                &l.level,
                "not run: the script was not reconstructed".into(),
            ));
        }
        out.push(WorkflowRuns {
            workflow: w.name.clone(),
            runs,
        });
    }
    if jobs.is_empty() {
        return out;
    }
    let keys: Vec<(usize, usize)> = jobs.iter().map(|j| (j.0, j.1)).collect();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("report-simulate".into())
        .stack_size(8 << 20)
        .spawn(move || {
            for (_, _, name, level, text, declared) in jobs {
                let run = match crate::js::depth::check_source(&name, &text) {
                    Err(e) => LevelRun::failed(&level, format!("not run: {e}")),
                    Ok(()) => {
                        let options = Options {
                            args: Some(serde_json::Value::String(level.clone())),
                            seed: Some(0),
                            limits: SIM_LIMITS,
                            declared_phases: declared,
                            keep_prompts: false,
                        };
                        match simulate::simulate(&text, Scenario::default(), &options) {
                            Ok(t) => LevelRun::from_trace(&level, &t),
                            Err(e) => LevelRun::failed(&level, format!("not run: {e}")),
                        }
                    }
                };
                if tx.send(run).is_err() {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        for (w, r) in keys {
            let level = out[w].runs[r].level.clone();
            out[w].runs[r] = LevelRun::failed(&level, format!("not run: {e}"));
        }
        return out;
    }
    let wait = SIM_LIMITS.timeout + SIM_LIMITS.timeout / 2 + std::time::Duration::from_secs(1);
    let mut stuck = false;
    for (w, r) in keys {
        let level = out[w].runs[r].level.clone();
        out[w].runs[r] = if stuck {
            LevelRun::failed(&level, "not run: an earlier run did not end".into())
        } else {
            match rx.recv_timeout(wait) {
                Ok(run) => run,
                Err(_) => {
                    stuck = true;
                    LevelRun::failed(
                        &level,
                        format!("stopped: still running after {} ms", wait.as_millis()),
                    )
                }
            }
        };
    }
    out
}
