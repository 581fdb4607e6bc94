//! `simulate`: a workflow script run in the sandbox — its status, stages,
//! agent calls, fan-outs, log and result.

use super::doc::{Block, Doc, Inline, Kind, Status, Table, fmt};
use super::emit::View;
use super::svg;
use crate::analysis::simulate::{self, Outcome, Trace};

#[derive(Clone, serde::Serialize)]
pub struct ScriptRef {
    /// `bundled` or `file`.
    pub source: &'static str,
    pub name: String,
    pub target: Option<String>,
    pub version: Option<String>,
    pub path: Option<String>,
    pub bytes: usize,
    pub sha256: String,
}

impl ScriptRef {
    /// A script read from a file.
    pub fn file(path: &std::path::Path, text: &str) -> ScriptRef {
        ScriptRef {
            source: "file",
            name: path
                .file_stem()
                .map_or("script".into(), |s| s.to_string_lossy().to_string()),
            target: None,
            version: None,
            path: Some(path.display().to_string()),
            bytes: text.len(),
            sha256: crate::bun::digest::sha256_hex(text.as_bytes()),
        }
    }

    /// A workflow script bundled in a build.
    pub fn bundled(name: &str, target: String, version: Option<String>, text: &str) -> ScriptRef {
        ScriptRef {
            source: "bundled",
            name: name.to_string(),
            target: Some(target),
            version,
            path: None,
            bytes: text.len(),
            sha256: crate::bun::digest::sha256_hex(text.as_bytes()),
        }
    }
}

/// `simulate`: the script run and its trace.
#[derive(serde::Serialize)]
pub struct SimulationView<'a> {
    pub script: &'a ScriptRef,
    pub ok: bool,
    #[serde(flatten)]
    pub trace: &'a Trace,
}

impl View for SimulationView<'_> {
    fn doc(&self) -> Doc {
        doc(self.script, self.trace)
    }
}

pub fn names(t: &Trace) -> String {
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
    phases_section(&mut d, t);
    agents_section(&mut d, t);
    fanouts_section(&mut d, t);
    logs_section(&mut d, t);
    missing_globals_section(&mut d, t);
    unsupported_section(&mut d, t);
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

/// The trace document's phases, when the run has any.
fn phases_section(d: &mut Doc, t: &Trace) {
    if !t.phases.is_empty() {
        let mut table = Table::of(&[
            ("stage", Kind::Text),
            ("agents", Kind::Number),
            ("labels", Kind::Text),
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
            table.text_row(vec![
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
        let mut blocks = vec![Block::Table(table)];
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
}

/// The trace document's agents, when the run has any.
fn agents_section(d: &mut Doc, t: &Trace) {
    if !t.agents.is_empty() {
        let mut table = Table::of(&[
            ("#", Kind::Number),
            ("stage", Kind::Text),
            ("label", Kind::Code),
            ("prompt", Kind::Number),
            ("schema", Kind::Code),
            ("outcome", Kind::Text),
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
            table.text_row(vec![
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
        let mut blocks = vec![Block::Table(table)];
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
}

/// The trace document's fanouts, when the run has any.
fn fanouts_section(d: &mut Doc, t: &Trace) {
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
}

/// The trace document's logs, when the run has any.
fn logs_section(d: &mut Doc, t: &Trace) {
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
}

/// The trace document's missing_globals, when the run has any.
fn missing_globals_section(d: &mut Doc, t: &Trace) {
    if !t.missing_globals.is_empty() {
        d.push(Block::Note(
            Inline::status(Status::Block, "missing globals: ").t(names(t)),
        ));
    }
}

/// The trace document's unsupported, when the run has any.
fn unsupported_section(d: &mut Doc, t: &Trace) {
    if !t.unsupported.is_empty() {
        d.push(Block::Note(
            Inline::status(Status::Unknown, "not simulated: ")
                .extend(Inline::names(&t.unsupported)),
        ));
    }
}
