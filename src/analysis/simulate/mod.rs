//! Dry runs of workflow scripts: the script runs in a sandboxed QuickJS
//! engine under a mock Workflow runtime, agent results come from a scenario
//! (by default a seeded, schema-driven generator), and the run is recorded
//! as a trace — phases, agent calls, fan-outs, log lines, the result.
//! No model is asked anything. See docs/guide/simulate.md.

mod budget;
pub mod generate;
pub mod prepare;
mod runtime;
pub mod scenario;

use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

pub use scenario::{Scenario, ScenarioError};

/// Bounds on a run. The engine stops the script when one is reached.
#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    /// Wall time of the whole run: the script, the generator and every
    /// other piece of work done for it.
    #[serde(rename = "timeout_ms", serialize_with = "millis")]
    pub timeout: Duration,
    /// The engine's heap plus everything the mock runtime keeps outside it
    /// (the trace, results, prompts, …), together.
    pub memory_bytes: usize,
    /// Agent calls allowed in one run (the real runtime caps them too).
    pub max_agents: u32,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(10),
            memory_bytes: 256 << 20,
            max_agents: 1000,
        }
    }
}

/// Everything a run needs besides the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `args` global: absent means `undefined`.
    pub args: Option<Value>,
    /// Seed of the generator; else the scenario's, else 0.
    pub seed: Option<u64>,
    pub limits: Limits,
    /// Phase titles the workflow's meta declares (to tell which were reached).
    pub declared_phases: Vec<String>,
    /// Keep every prompt's text in the trace.
    pub keep_prompts: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    #[error("the JavaScript engine could not be set up: {0}")]
    Engine(String),
}

/// How the run ended.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Status {
    /// The script returned (its value is the trace's `result`).
    Completed,
    /// The script threw, or its promise rejected (or its result could not
    /// be written as JSON: the message says so).
    Threw {
        name: String,
        message: String,
        stack: Option<String>,
    },
    /// The script used a global the mock runtime does not provide.
    MissingGlobal { name: String },
    /// The script did not parse.
    SyntaxError {
        line: usize,
        col: usize,
        message: String,
    },
    /// Stopped by the time limit (the script, the generator, or writing
    /// the result).
    Timeout { limit_ms: u64 },
    /// Stopped by the memory cap: the engine's heap and what the trace
    /// keeps, together.
    MemoryLimit { limit_bytes: usize },
    /// Stopped when one more agent call would pass the cap.
    AgentCap { limit: u32 },
    /// The script waits on a promise nothing will ever settle.
    Stalled,
}

impl Status {
    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            Status::Completed => "completed".into(),
            Status::Threw { name, message, .. } => format!("threw {name}: {message}"),
            Status::MissingGlobal { name } => format!(
                "stopped: the script uses `{name}`, which the simulated Workflow runtime does not provide"
            ),
            Status::SyntaxError { line, col, message } => {
                format!("syntax error at {line}:{col}: {message}")
            }
            Status::Timeout { limit_ms } => format!(
                "stopped by the time limit: still running after {limit_ms} ms (raise it with --timeout-ms)"
            ),
            Status::MemoryLimit { limit_bytes } => format!(
                "stopped by the memory cap: the run needed more than {} MB, script and trace together (raise it with --memory-mb)",
                limit_bytes >> 20
            ),
            Status::AgentCap { limit } => format!(
                "stopped by the agent-call cap: more than {limit} agent calls (raise it with --max-agents)"
            ),
            Status::Stalled => {
                "stalled: the script awaits a promise that nothing will settle".into()
            }
        }
    }
}

/// A stage's title. Shared, not copied: a script may name a stage with a
/// string of megabytes, and every log line and agent call in it refers to
/// it (each reference is still charged as the output will repeat it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Title(Arc<str>);

impl Title {
    pub fn new(s: &str) -> Title {
        Title(Arc::from(s))
    }
}

impl std::ops::Deref for Title {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Title {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Title {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Title {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A stage of the run, in order of first appearance: marked by `phase()`,
/// or named by an agent call's `phase` option.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseEvent {
    pub index: usize,
    pub title: Title,
    /// `phase(title)` was called (rather than only named by agent options).
    pub marked: bool,
    /// The title is one the workflow's meta declares.
    pub declared: bool,
    /// Indices into `agents` of the calls made in this stage.
    pub agents: Vec<usize>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The agent returned a result.
    Result,
    /// The agent returned nothing (null), as a skipped or failed one does.
    Null,
    /// The call rejected.
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentCall {
    pub index: usize,
    /// The call's `phase` option, else the stage `phase()` last marked.
    pub phase: Option<Title>,
    /// The call's `label` option, else the prompt's start (as the runtime labels it).
    pub label: String,
    pub prompt_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// One-line shape of the schema; None when the agent was asked for text.
    pub schema: Option<String>,
    pub schema_json: Option<Value>,
    pub outcome: Outcome,
    pub result: Value,
    pub error: Option<String>,
    /// Index of the scenario rule that decided the result (None: generated).
    pub rule: Option<usize>,
    /// Where a scenario's literal result breaks the schema.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ParallelFanout {
    pub index: usize,
    /// `parallel` or `pipeline`.
    pub kind: String,
    pub phase: Option<Title>,
    /// Tasks (parallel) or items (pipeline).
    pub size: usize,
    /// Stages of a pipeline.
    pub stages: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    pub phase: Option<Title>,
    pub message: String,
    /// `script` (log/console) or `runtime` (a failed task, a timer error).
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct MissingGlobal {
    pub name: String,
    /// First line that uses it (0 when only seen at run time).
    pub line: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub status: Status,
    pub seed: u64,
    pub args: Option<Value>,
    pub limits: Limits,
    pub elapsed_ms: u64,
    pub phases: Vec<PhaseEvent>,
    /// Declared phases the run never entered.
    pub phases_not_reached: Vec<String>,
    pub agents: Vec<AgentCall>,
    pub fanouts: Vec<ParallelFanout>,
    pub logs: Vec<LogLine>,
    /// Log lines past the cap that were counted but not kept.
    pub logs_dropped: usize,
    pub missing_globals: Vec<MissingGlobal>,
    /// Runtime functions the script called that a dry run cannot perform.
    pub unsupported: Vec<String>,
    /// The script's return value as JSON (null when it did not complete).
    pub result: Value,
}

impl Trace {
    /// A trace with nothing recorded but how the run ended (for a run ended
    /// from outside, e.g. by a watchdog).
    pub fn ended(options: &Options, status: Status) -> Trace {
        let mut t = runtime::empty_trace(options);
        t.status = status;
        t
    }

    /// The run completed and used nothing the mock runtime lacks.
    pub fn succeeded(&self) -> bool {
        self.status == Status::Completed && self.missing_globals.is_empty()
    }
}

/// Run `script` (a workflow script, meta first, or any script body).
pub fn simulate(
    script: &str,
    scenario: Scenario,
    options: &Options,
) -> Result<Trace, SimulateError> {
    let started = std::time::Instant::now();
    let prepared = match prepare::prepare(script) {
        Ok(p) => p,
        Err(e) => {
            let mut t = runtime::empty_trace(options);
            t.status = Status::SyntaxError {
                line: e.line,
                col: e.col,
                message: e.message,
            };
            return Ok(t);
        }
    };
    let mut trace = runtime::run(&prepared, scenario, options)?;
    trace.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(trace)
}
