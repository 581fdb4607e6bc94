//! Dry runs of workflow scripts: the script runs in a sandboxed QuickJS
//! engine under a mock Workflow runtime, agent results come from a scenario
//! (by default a seeded, schema-driven generator), and the run is recorded
//! as a trace — phases, agent calls, fan-outs, log lines, the result.
//! No model is asked anything. See docs/simulate.md.

pub mod generate;
pub mod prepare;
mod runtime;
pub mod scenario;

use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

pub use scenario::{Scenario, ScenarioError};

/// Bounds on a run. The engine stops the script when one is reached.
#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    #[serde(rename = "timeout_ms", serialize_with = "millis")]
    pub timeout: Duration,
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
    /// The script threw, or its promise rejected.
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
    /// Stopped by the time limit.
    Timeout { limit_ms: u64 },
    /// Stopped by the memory cap.
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
                "stopped by the memory cap: the script needed more than {} MB (raise it with --memory-mb)",
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

/// A stage of the run, in order of first appearance: marked by `phase()`,
/// or named by an agent call's `phase` option.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseEvent {
    pub index: usize,
    pub title: String,
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
    pub phase: Option<String>,
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
    pub phase: Option<String>,
    /// Tasks (parallel) or items (pipeline).
    pub size: usize,
    /// Stages of a pipeline.
    pub stages: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    pub phase: Option<String>,
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
