use super::format::OutputArgs;
use super::{App, TARGET_HELP};
use crate::analysis::simulate::{self, Limits, Options, Scenario, Trace};
use crate::report::emit::Output;
use crate::report::simulate::{ScriptRef, SimulationView, names};
use crate::source::untrusted::read_text;
use anyhow::{Context, bail};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct SimulateArgs {
    #[arg(
        value_name = "TARGET",
        help = TARGET_HELP,
        required_unless_present = "script",
        conflicts_with = "script"
    )]
    pub target: Option<String>,
    /// The bundled workflow to run (see `cc-teardown workflows TARGET`).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "script",
        conflicts_with = "script"
    )]
    pub workflow: Option<String>,
    /// Run this script instead of a bundled one: a NAME.js written by `reconstruct`, or any script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// The script's `args` global, as the Workflow tool passes it (a string); absent means undefined.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// Scenario file (JSON) mapping agent calls to results; default: generate every result.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Seed of the result generator (default: the scenario's, else 0).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Stop the run (script, generated results, writing the result) after this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
    /// Memory cap of the run, in MB: the JavaScript engine's heap and the trace together.
    #[arg(long, value_name = "MB", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub memory_mb: u64,
    /// Stop the script at more agent calls than this.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_agents: u32,
    /// Keep every prompt's full text in the JSON trace.
    #[arg(long)]
    pub prompts: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Largest script or scenario read: far above any real one (a workflow
/// script is tens of kilobytes, a scenario a few), and small enough that
/// parsing it stays within a few hundred MB (a 4 MB script: about 300 MB
/// peak, measured) — this happens before the run and outside its caps.
const MAX_INPUT: u64 = 4 << 20;

pub fn run(app: &App, a: &SimulateArgs) -> anyhow::Result<i32> {
    let out = app.output(&a.out, crate::report::emit::Format::Text);
    // The scenario first: a bad one fails fast, before a build is opened.
    let scenario = match &a.scenario {
        Some(p) => {
            let text = read_text(p, MAX_INPUT)
                .with_context(|| format!("reading scenario {}", p.display()))?;
            Scenario::parse(&text).with_context(|| format!("scenario {}", p.display()))?
        }
        None => Scenario::default(),
    };
    let (text, script, declared) = match (&a.script, &a.target, &a.workflow) {
        (Some(path), _, _) => {
            let text = read_text(path, MAX_INPUT)
                .with_context(|| format!("reading script {}", path.display()))?;
            let script = ScriptRef::file(path, &text);
            (text, script, Vec::new())
        }
        (None, Some(target), Some(name)) => {
            let found = super::workflows::load(app, target, Some(name))?;
            let (label, version, mut all) = (found.target, found.version, found.workflows);
            let w = all.remove(0);
            let Some(text) = w.text else {
                bail!(
                    "workflow {name:?} in {label} could not be reconstructed: {}",
                    w.script_error
                        .map_or("no script argument".into(), |e| e.to_string())
                );
            };
            let script = ScriptRef::bundled(&w.name, label, version, &text);
            let declared = w.phases.iter().map(|p| p.title.clone()).collect();
            (text, script, declared)
        }
        _ => bail!("give TARGET and --workflow NAME, or --script FILE"),
    };
    // Input nested past the limit is bad input (exit 2), refused before the
    // parser or QuickJS recurse through it.
    crate::js::depth::check_source(&script.name, &text)?;
    let options = Options {
        args: a.args.clone().map(serde_json::Value::String),
        seed: a.seed,
        limits: Limits {
            timeout: Duration::from_millis(a.timeout_ms),
            memory_bytes: (a.memory_mb as usize) << 20,
            max_agents: a.max_agents,
        },
        declared_phases: declared,
        keep_prompts: a.prompts,
    };
    let finished = watchdog(&out, &script, &options);
    let trace = simulate::simulate(&text, scenario, &options)?;
    *finished.lock().unwrap_or_else(|e| e.into_inner()) = true;
    emit(&out, &script, &trace)
}

/// The run's last line of defence on time. The engine's interrupt handler
/// and the host's own checks end a run at its deadline, but the engine
/// polls only every few thousand operations, so one long native call (a
/// search through a string of hundreds of megabytes, repeated) can outlast
/// it. Past the deadline and a grace, this thread reports the timeout
/// itself — an empty trace with that status — and ends the process, unless
/// the run has finished by then (the returned flag, set under its lock, so
/// the two never write at once).
fn watchdog(
    out: &Output,
    script: &ScriptRef,
    options: &Options,
) -> std::sync::Arc<std::sync::Mutex<bool>> {
    let finished = std::sync::Arc::new(std::sync::Mutex::new(false));
    let grace = options.limits.timeout / 2 + Duration::from_secs(1);
    let hard = options.limits.timeout.saturating_add(grace);
    let (flag, script, options) = (finished.clone(), script.clone(), options.clone());
    let out = out.clone();
    std::thread::spawn(move || {
        std::thread::sleep(hard);
        let done = flag.lock().unwrap_or_else(|e| e.into_inner());
        if *done {
            return;
        }
        let status = simulate::Status::Timeout {
            limit_ms: options.limits.timeout.as_millis() as u64,
        };
        let mut trace = Trace::ended(&options, status);
        trace.elapsed_ms = hard.as_millis() as u64;
        let code = emit(&out, &script, &trace).unwrap_or(1);
        std::process::exit(code);
    });
    finished
}

/// Write the trace (JSON or text) and, when the run did not succeed, one
/// line on stderr; the exit status.
fn emit(out: &Output, script: &ScriptRef, trace: &Trace) -> anyhow::Result<i32> {
    let ok = trace.succeeded();
    // Labels, logs and stage titles come from the script: each renderer
    // escapes them.
    out.emit(&SimulationView { script, ok, trace })?;
    if !ok {
        // The outcome on stderr too, so it shows whatever stdout is piped to.
        let mut why = trace.status.describe();
        if trace.status == simulate::Status::Completed {
            why = format!(
                "completed, but the script uses globals the simulated runtime does not provide: {}",
                names(trace)
            );
        }
        errln!("simulate {}: {why}", script.name);
    }
    Ok(if ok { 0 } else { 1 })
}
