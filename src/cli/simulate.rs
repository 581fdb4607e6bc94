use super::format::OutputArgs;
use super::{Global, TARGET_HELP};
use crate::analysis::simulate::{self, Limits, Options, Outcome, Scenario, Trace};
use crate::bun::digest::sha256_hex;
use crate::report::doc::{Block, Doc, Inline, Status, fmt};
use crate::report::svg;
use crate::report::table::{Align, Table};
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
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

#[derive(Clone, serde::Serialize)]
struct ScriptRef {
    /// `bundled` or `file`.
    source: &'static str,
    name: String,
    target: Option<String>,
    version: Option<String>,
    path: Option<String>,
    bytes: usize,
    sha256: String,
}

#[derive(serde::Serialize)]
struct View<'a> {
    script: &'a ScriptRef,
    ok: bool,
    #[serde(flatten)]
    trace: &'a Trace,
}

pub fn run(g: &Global, a: &SimulateArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    // The scenario first: a bad one fails fast, before a build is opened.
    let scenario = match &a.scenario {
        Some(p) => {
            let text =
                read_input(p).with_context(|| format!("reading scenario {}", p.display()))?;
            Scenario::parse(&text).with_context(|| format!("scenario {}", p.display()))?
        }
        None => Scenario::default(),
    };
    let (text, script, declared) = match (&a.script, &a.target, &a.workflow) {
        (Some(path), _, _) => {
            let text =
                read_input(path).with_context(|| format!("reading script {}", path.display()))?;
            let name = path
                .file_stem()
                .map_or("script".into(), |s| s.to_string_lossy().to_string());
            let script = ScriptRef {
                source: "file",
                name,
                target: None,
                version: None,
                path: Some(path.display().to_string()),
                bytes: text.len(),
                sha256: sha256_hex(text.as_bytes()),
            };
            (text, script, Vec::new())
        }
        (None, Some(target), Some(name)) => {
            let (label, version, mut all) = super::workflows::load(g, target, Some(name))?;
            let w = all.remove(0);
            let Some(text) = w.text else {
                bail!(
                    "workflow {name:?} in {label} could not be reconstructed: {}",
                    w.script_error
                        .map_or("no script argument".into(), |e| e.to_string())
                );
            };
            let script = ScriptRef {
                source: "bundled",
                name: w.name.clone(),
                target: Some(label),
                version,
                path: None,
                bytes: text.len(),
                sha256: sha256_hex(text.as_bytes()),
            };
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
    let finished = watchdog(g, &a.out, &script, &options);
    let trace = simulate::simulate(&text, scenario, &options)?;
    *finished.lock().unwrap_or_else(|e| e.into_inner()) = true;
    emit(g, &a.out, &script, &trace)
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
    g: &Global,
    o: &OutputArgs,
    script: &ScriptRef,
    options: &Options,
) -> std::sync::Arc<std::sync::Mutex<bool>> {
    let finished = std::sync::Arc::new(std::sync::Mutex::new(false));
    let grace = options.limits.timeout / 2 + Duration::from_secs(1);
    let hard = options.limits.timeout.saturating_add(grace);
    let (flag, script, options) = (finished.clone(), script.clone(), options.clone());
    let (g, o) = (g.clone(), o.clone());
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
        let code = emit(&g, &o, &script, &trace).unwrap_or(1);
        std::process::exit(code);
    });
    finished
}

/// Write the trace (JSON or text) and, when the run did not succeed, one
/// line on stderr; the exit status.
fn emit(g: &Global, o: &OutputArgs, script: &ScriptRef, trace: &Trace) -> anyhow::Result<i32> {
    let ok = trace.succeeded();
    if g.json && o.output.is_none() {
        // The trace can be as large as the memory cap allows: written
        // through a large buffer (stdout alone flushes at every line or
        // kilobyte).
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &View { script, ok, trace })?;
        writeln!(out)?;
        out.flush()?;
    } else if g.json {
        o.json(g, &View { script, ok, trace })?;
    } else {
        // Labels, logs and stage titles come from the script: each
        // renderer escapes them.
        o.text(g, &doc(script, trace))?;
    }
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

/// Largest script or scenario read: far above any real one (a workflow
/// script is tens of kilobytes, a scenario a few), and small enough that
/// parsing it stays within a few hundred MB (a 4 MB script: about 300 MB
/// peak, measured) — this happens before the run and outside its caps.
const MAX_INPUT: u64 = 4 << 20;

/// A script or scenario file's text: a regular file (a device, FIFO or
/// directory would never end or never start), at most [`MAX_INPUT`] bytes,
/// UTF-8.
fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    use std::io::Read;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    // Opening a FIFO blocks until a writer comes; without waiting, it is
    // refused below like any other non-file.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    let f = open.open(path)?;
    if !f.metadata()?.is_file() {
        bail!("not a regular file");
    }
    let mut bytes = Vec::new();
    f.take(MAX_INPUT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT {
        bail!("larger than {} MB", MAX_INPUT >> 20);
    }
    String::from_utf8(bytes).context("not UTF-8 text")
}

fn names(t: &Trace) -> String {
    t.missing_globals
        .iter()
        .map(|m| {
            if m.line > 0 {
                format!("{} (line {})", m.name, m.line)
            } else {
                m.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// Rows of the agent table and lines of the log a document keeps: a trace
/// can hold as many calls as the memory cap allowed, and the document is
/// built whole in memory (the JSON trace has them all).
const MAX_ROWS: usize = 2000;

/// The trace as a document: the run's status, the stages with their agents,
/// every agent call, the fan-outs, the log and the result.
fn doc(script: &ScriptRef, t: &Trace) -> Doc {
    let from = match (&script.target, &script.path) {
        (Some(target), _) => target.clone(),
        (None, Some(p)) => p.clone(),
        _ => String::new(),
    };
    let args = t
        .args
        .as_ref()
        .map_or("undefined".to_string(), |a| a.to_string());
    let mut d = Doc::new(
        Inline::code(script.name.clone())
            .t(" (")
            .c(from)
            .t(format!(") — args {args}, seed {}", t.seed)),
    );
    let ok = t.succeeded();
    d.summary(vec![
        (
            "status",
            Inline::status(
                if ok { Status::Pass } else { Status::Block },
                t.status.describe(),
            ),
        ),
        (
            "calls",
            format!(
                "{}, {}, {} ms",
                fmt::count(t.agents.len(), "agent call", "agent calls"),
                fmt::count(t.fanouts.len(), "fan-out", "fan-outs"),
                fmt::num(t.elapsed_ms)
            )
            .into(),
        ),
    ]);
    if !t.phases.is_empty() {
        let mut table = Table::new(&[
            ("stage", Align::Left),
            ("agents", Align::Right),
            ("labels", Align::Left),
        ]);
        for p in &t.phases {
            // Distinct labels in order of first use, counted; by map, as a
            // stage may hold hundreds of thousands of calls.
            let mut labels: Vec<(&str, usize)> = Vec::new();
            let mut seen: std::collections::HashMap<&str, usize> = Default::default();
            for &i in &p.agents {
                let l = t.agents[i].label.as_str();
                match seen.get(l) {
                    Some(&k) => labels[k].1 += 1,
                    None => {
                        seen.insert(l, labels.len());
                        labels.push((l, 1));
                    }
                }
            }
            let labels = labels
                .iter()
                .map(|(l, n)| {
                    if *n > 1 {
                        format!("{l} ×{n}")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            table.row(vec![
                format!("{}{}", clip(&p.title, 60), if p.marked { "" } else { " *" }),
                fmt::n(p.agents.len()),
                clip(&labels, 100),
            ]);
        }
        // The same counts as a picture, for the page: the table already
        // says them on a terminal and in Markdown (no text rendition).
        let bars: Vec<(String, u64)> = t
            .phases
            .iter()
            .map(|p| (clip(&p.title, 40), p.agents.len() as u64))
            .collect();
        let mut blocks = vec![Block::Table(table.doc())];
        if !t.agents.is_empty() {
            let mut figure = svg::bars_linear("Agents per stage", &bars);
            figure.text.clear();
            blocks.push(Block::Figure(figure));
        }
        if t.phases.iter().any(|p| !p.marked) {
            blocks.push(Block::Note(
                "(* named by agent options only, never marked by phase())".into(),
            ));
        }
        if !t.phases_not_reached.is_empty() {
            blocks.push(Block::Note(
                Inline::from("declared but not reached: ")
                    .extend(Inline::names(&t.phases_not_reached)),
            ));
        }
        d.section("stages", "Stages", blocks);
    } else if !t.phases_not_reached.is_empty() {
        d.push(Block::Note(
            Inline::from("declared but not reached: ").extend(Inline::names(&t.phases_not_reached)),
        ));
    }
    if !t.agents.is_empty() {
        let mut table = Table::new(&[
            ("#", Align::Right),
            ("stage", Align::Left),
            ("label", Align::Code),
            ("prompt", Align::Right),
            ("schema", Align::Code),
            ("outcome", Align::Left),
        ]);
        for c in t.agents.iter().take(MAX_ROWS) {
            let outcome = match c.outcome {
                Outcome::Result => match c.rule {
                    Some(r) => format!("result (rule {r})"),
                    None => "result (generated)".into(),
                },
                Outcome::Null => format!("null (rule {})", c.rule.unwrap_or(0)),
                Outcome::Error => format!("error: {}", c.error.as_deref().unwrap_or("")),
            };
            table.row(vec![
                c.index.to_string(),
                clip(c.phase.as_deref().unwrap_or("-"), 40),
                clip(&c.label, 40),
                fmt::bytes(c.prompt_bytes as u64),
                clip(c.schema.as_deref().unwrap_or("text"), 60),
                if c.warnings.is_empty() {
                    outcome
                } else {
                    format!(
                        "{outcome}; does not match schema: {}",
                        c.warnings.join("; ")
                    )
                },
            ]);
        }
        let mut blocks = vec![Block::Table(table.doc())];
        if t.agents.len() > MAX_ROWS {
            blocks.push(Block::Note(
                format!(
                    "… and {} more (--json has them all)",
                    fmt::count(t.agents.len() - MAX_ROWS, "agent call", "agent calls")
                )
                .into(),
            ));
        }
        d.section("agents", "Agent calls", blocks);
    }
    if !t.fanouts.is_empty() {
        let items = t
            .fanouts
            .iter()
            .take(MAX_ROWS)
            .map(|f| {
                Inline::code(format!(
                    "{}({}{})",
                    f.kind,
                    fmt::n(f.size),
                    if f.kind == "pipeline" {
                        format!(" × {} stages", f.stages)
                    } else {
                        String::new()
                    }
                ))
                .t(format!(" in {}", f.phase.as_deref().unwrap_or("-")))
            })
            .collect();
        d.section(
            "fan-outs",
            "Fan-outs",
            vec![Block::List { items, limit: None }],
        );
    }
    if !t.logs.is_empty() {
        let mut text = String::new();
        for l in t.logs.iter().take(MAX_ROWS) {
            text.push_str(&format!(
                "[{}]{} {}\n",
                clip(l.phase.as_deref().unwrap_or("-"), 60),
                if l.source == "runtime" {
                    " (runtime)"
                } else {
                    ""
                },
                l.message
            ));
        }
        let dropped = t.logs_dropped + t.logs.len().saturating_sub(MAX_ROWS);
        let mut blocks = vec![Block::Code {
            lang: "text",
            caption: None,
            text,
            max_lines: None,
        }];
        if dropped > 0 {
            blocks.push(Block::Note(
                format!(
                    "… {} not kept",
                    fmt::count(dropped, "more line", "more lines")
                )
                .into(),
            ));
        }
        d.section("log", "Log", blocks);
    }
    if !t.missing_globals.is_empty() {
        d.push(Block::Note(
            Inline::status(Status::Block, "missing globals: ").t(names(t)),
        ));
    }
    if !t.unsupported.is_empty() {
        d.push(Block::Note(
            Inline::status(Status::Unknown, "not simulated: ")
                .extend(Inline::names(&t.unsupported)),
        ));
    }
    if let simulate::Status::Threw {
        stack: Some(stack), ..
    } = &t.status
    {
        d.section(
            "stack",
            "Stack",
            vec![Block::Code {
                lang: "text",
                caption: None,
                text: stack.clone(),
                max_lines: None,
            }],
        );
    }
    d.section(
        "result",
        "Result",
        vec![Block::Code {
            lang: "json",
            caption: None,
            text: serde_json::to_string_pretty(&t.result).unwrap_or_default(),
            max_lines: None,
        }],
    );
    d
}
