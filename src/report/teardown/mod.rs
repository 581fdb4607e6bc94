//! The one-shot teardown report: every fact cc-teardown establishes about a
//! build, as one [`Doc`] (rendered as Markdown or one self-contained HTML
//! page) or as JSON (the [`Teardown`] struct itself).

use super::doc::{Block, Column, Doc, Inline, Kind, Section, Status, Table, facts, fmt};
use super::provenance::Provenance;
use super::svg;
use crate::analysis::flags::{Flag, FlagInventory};
use crate::analysis::gates::{self, CachedFlags, Gate, Verdict};
use crate::analysis::roles::Roles;
use crate::analysis::workflows::{OptionValue, WorkflowScript};
use crate::report::info::InfoView;
use crate::source::installs::Install;
use serde::Serialize;

mod runs;
pub use runs::simulate_levels;

#[derive(Serialize)]
pub struct Hashes {
    pub file: String,
    pub payload: String,
    pub bundle: String,
    pub bundle_digest: String,
}

#[derive(Serialize)]
pub struct FlagSummary {
    pub counts: std::collections::BTreeMap<String, usize>,
    /// The feature flags the gates read, with default and cached value.
    pub gate_flags: Vec<(String, serde_json::Value, Option<serde_json::Value>)>,
}

#[derive(Serialize)]
pub struct Teardown {
    pub tool: String,
    pub info: InfoView,
    pub install: Option<Install>,
    pub hashes: Hashes,
    pub roles: Roles,
    pub workflows: Vec<WorkflowScript>,
    /// Scripts by workflow name (the appendix).
    pub scripts: Vec<(String, String)>,
    pub routing_gate: Option<Gate>,
    pub option_gates: Vec<Gate>,
    pub config: CachedFlags,
    pub flags: FlagSummary,
    pub undetermined: Vec<String>,
    /// The full flag inventory, for the table of the human renderings
    /// (the JSON report keeps its summary; `flags --json` has them all).
    #[serde(skip)]
    pub inventory: Vec<Flag>,
    /// Who made the report, when and how (human renderings only).
    #[serde(skip)]
    pub provenance: Provenance,
    /// Simulated runs of each workflow with a level table, one per level;
    /// None when the report was asked not to run them (`--no-simulate`).
    pub simulation: Option<Vec<WorkflowRuns>>,
}

/// The simulated runs of one workflow.
#[derive(Serialize, Clone, Debug)]
pub struct WorkflowRuns {
    pub workflow: String,
    pub runs: Vec<LevelRun>,
}

/// One simulated run of a workflow at one effort level (its `args` are the
/// level's name, as the /code-review skill passes it), seed 0, every agent
/// result generated from the call's schema.
#[derive(Serialize, Clone, Debug)]
pub struct LevelRun {
    pub level: String,
    pub args: String,
    /// The run completed (else its counts are those up to where it stopped).
    pub completed: bool,
    /// How the run ended, in words.
    pub status: String,
    pub agents: usize,
    /// Agents per stage, in order of first appearance.
    pub stages: Vec<StageAgents>,
}

#[derive(Serialize, Clone, Debug)]
pub struct StageAgents {
    pub stage: String,
    /// A phase the workflow's meta declares.
    pub declared: bool,
    pub agents: usize,
}

impl LevelRun {
    pub fn from_trace(level: &str, t: &crate::analysis::simulate::Trace) -> LevelRun {
        // The status's advice names `simulate`'s options (`--timeout-ms`,
        // `--memory-mb`), which `report` does not have: dropped here.
        let status = t.status.describe();
        let status = match status.find(" (raise it with") {
            Some(at) => status[..at].to_string(),
            None => status,
        };
        LevelRun {
            level: level.to_string(),
            args: level.to_string(),
            completed: t.succeeded(),
            status,
            agents: t.agents.len(),
            stages: t
                .phases
                .iter()
                .map(|p| StageAgents {
                    stage: p.title.to_string(),
                    declared: p.declared,
                    agents: p.agents.len(),
                })
                .collect(),
        }
    }

    /// A run that could not be made or did not end in time.
    pub fn failed(level: &str, why: String) -> LevelRun {
        LevelRun {
            level: level.to_string(),
            args: level.to_string(),
            completed: false,
            status: why,
            agents: 0,
            stages: Vec::new(),
        }
    }

    /// The agents of each phase in `phases` (None: the run never entered
    /// it), as the pipeline figure draws them.
    fn measured(&self, phases: &[String]) -> svg::Measured {
        let counts = phases
            .iter()
            .map(|p| {
                let mut hit = self.stages.iter().filter(|s| &s.stage == p).peekable();
                hit.peek().is_some().then(|| hit.map(|s| s.agents).sum())
            })
            .collect();
        let other = self
            .stages
            .iter()
            .filter(|s| !phases.contains(&s.stage))
            .map(|s| s.agents)
            .sum();
        svg::Measured {
            level: self.level.clone(),
            counts,
            other,
            total: self.agents,
            stopped: (!self.completed).then(|| self.status.clone()),
        }
    }
}

impl Teardown {
    pub fn summarise_flags(
        inv: &FlagInventory,
        gates: &[&Gate],
        config: &CachedFlags,
    ) -> FlagSummary {
        let mut gate_flags = Vec::new();
        for g in gates {
            for c in &g.conditions {
                if let Some(f) = &c.flag
                    && !gate_flags.iter().any(|(n, _, _): &(String, _, _)| n == f)
                {
                    gate_flags.push((
                        f.clone(),
                        c.default.clone().unwrap_or_default(),
                        config.values.get(f).cloned(),
                    ));
                }
            }
        }
        FlagSummary {
            counts: inv.counts.clone(),
            gate_flags,
        }
    }

    fn title(&self) -> String {
        format!(
            "Claude Code {} — cc-teardown report",
            self.info.version.as_deref().unwrap_or("(unknown version)")
        )
    }
}

/// A JSON value as it reads in the report (`false`, `"opus"`, `3`).
fn value(v: &serde_json::Value) -> String {
    v.to_string()
}

pub fn verdict_inline(v: &Verdict) -> Inline {
    let st = match v {
        Verdict::Passes => Status::Pass,
        Verdict::BlockedBy { .. } => Status::Block,
        Verdict::DependsOnRuntimeContext { .. } => Status::Unknown,
    };
    Inline::status(st, v.describe())
}

fn verdict_status(v: &Verdict) -> Status {
    match v {
        Verdict::Passes => Status::Pass,
        Verdict::BlockedBy { .. } => Status::Block,
        Verdict::DependsOnRuntimeContext { .. } => Status::Unknown,
    }
}

/// A workflow option in words: `computed by BX_ reading tengu_x (default
/// false)` rather than its JSON.
pub fn option_text(o: &OptionValue) -> Inline {
    match o {
        OptionValue::Static { value: v } => Inline::code(value(v)),
        OptionValue::Computed { expression, flags } => {
            let mut i = Inline::from("computed by ").c(expression.clone());
            for (k, f) in flags.iter().enumerate() {
                i = i
                    .t(if k == 0 { " reading " } else { ", " })
                    .c(f.flag.clone())
                    .t(" (default ")
                    .c(value(&f.default))
                    .t(")");
            }
            i
        }
    }
}

/// Each condition of a gate judged alone under the cached values: the
/// picture of the chain. A flag condition passes or blocks; any other
/// depends on the run; after the first block the rest is not reached.
pub fn gate_figure(name: &str, g: &Gate, config: &CachedFlags) -> Block {
    let mut blocked = false;
    let steps: Vec<svg::Step> = g
        .conditions
        .iter()
        .map(|c| {
            let (status, label) = if blocked {
                (Status::Muted, "not reached")
            } else if c.flag.is_some() && c.expect.is_some() {
                match gates::verdict(std::slice::from_ref(c), config) {
                    Verdict::BlockedBy { .. } => {
                        blocked = true;
                        (Status::Block, "blocks")
                    }
                    _ => (Status::Pass, "passes"),
                }
            } else {
                (Status::Unknown, "at run time")
            };
            svg::Step {
                text: c.text.clone(),
                status,
                label: label.to_string(),
            }
        })
        .collect();
    let verdict = g
        .verdict
        .clone()
        .unwrap_or_else(|| gates::verdict(&g.conditions, config));
    Block::Figure(svg::gate_chain(
        name,
        &steps,
        (&verdict.describe(), verdict_status(&verdict)),
    ))
}

pub fn gate_blocks(g: &Gate, config: &CachedFlags) -> Vec<Block> {
    let mut out = vec![Block::Note(
        Inline::code(g.function.as_deref().unwrap_or("(anonymous)"))
            .t(g.original
                .as_ref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default())
            .t(" in ")
            .c(g.module.clone())
            .t(format!(
                " at raw line {} (pretty {}):",
                g.raw_line, g.pretty_line
            )),
    )];
    out.push(Block::Ordered(
        g.conditions
            .iter()
            .map(|c| {
                Inline::code(c.text.clone())
                    .t(" — ")
                    .s(Status::Muted, c.kind.as_str())
                    .t(format!(" (line {})", c.line))
            })
            .collect(),
    ));
    if let Some(v) = &g.verdict {
        out.push(Block::Note(
            Inline::strong("Verdict:").t(" ").extend(verdict_inline(v)),
        ));
    }
    out.push(gate_figure(&g.role.to_string(), g, config));
    out
}

/// A workflow's phase pipeline with the finder fan-out of each effort level
/// of its level table (none when it declares no phases).
pub fn pipeline_figure(w: &WorkflowScript) -> Option<Block> {
    pipeline_figure_with(w, &[])
}

/// The pipeline with, over the level table's finders, the agents per phase
/// that simulated runs (one per level) started: measured, not read.
pub fn pipeline_figure_with(w: &WorkflowScript, runs: &[LevelRun]) -> Option<Block> {
    let fans: Vec<svg::LevelFan> = w
        .levels
        .iter()
        .flatten()
        .map(|l| svg::LevelFan {
            level: l.level.clone(),
            finders: l.correctness_finders,
            cleanup: l.cleanup_finders,
            detail: format!(
                "≤{} candidates · sweep {} · report ≤{}",
                fmt::num(l.initial_candidate_limit),
                l.sweep.map_or("none".into(), fmt::num),
                fmt::num(l.report_limit)
            ),
        })
        .collect();
    if w.phases.is_empty() {
        return None;
    }
    let phases: Vec<String> = w.phases.iter().map(|p| p.title.clone()).collect();
    let measured: Vec<svg::Measured> = runs.iter().map(|r| r.measured(&phases)).collect();
    Some(Block::Figure(svg::pipeline(
        &w.name, &phases, &fans, &measured,
    )))
}

/// Lines `a–b`, or `a` alone for a one-line function.
fn span(a: u32, b: u32) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}–{b}")
    }
}

/// "macho arm64", or "js" alone.
fn container_words(i: &InfoView) -> String {
    match &i.container.arch {
        Some(a) => format!("{} {a}", i.container.format.as_str()),
        None => i.container.format.as_str().to_string(),
    }
}

/// A path as a reader may see it: under the home folder as `~/…`.
pub fn home_relative(p: &str) -> String {
    super::provenance::home_relative(p)
}

impl Teardown {
    /// The report as one document, built once for every renderer.
    pub fn doc(&self, with_scripts: bool) -> Doc {
        let t = self;
        let mut d = Doc::new(self.title());
        d.toc = true;
        d.scripts = true;
        d.summary = self.summary();
        self.target_sections(&mut d);
        self.roles_section(&mut d);
        self.workflow_sections(&mut d);
        if with_scripts {
            self.script_appendices(&mut d);
        }
        d.footer = t.provenance.facts(&t.tool);
        d
    }

    /// The summary: what a reader came for, one line each.
    fn summary(&self) -> Vec<(String, Inline)> {
        let i = &self.info;
        let t = self;
        let mut summary = vec![
            (
                "version",
                Inline::code(i.version.clone().unwrap_or_else(|| "unknown".into())),
            ),
            (
                "platform",
                Inline::from(i.target.platform.clone().unwrap_or_else(|| "-".into())),
            ),
            (
                "container",
                Inline::from(container_words(i)).t(if i.bundle.code_split {
                    ", code-split bundle"
                } else {
                    ", single bundle"
                }),
            ),
            ("bundle SHA-256", Inline::code(t.hashes.bundle.clone())),
            (
                "bundle digest",
                Inline::code(t.hashes.bundle_digest.clone()),
            ),
        ];
        let hidden: Vec<&str> = t
            .workflows
            .iter()
            .filter(|w| w.hidden)
            .map(|w| w.name.as_str())
            .collect();
        summary.push((
            "workflows",
            if t.workflows.is_empty() {
                Inline::from("none found")
            } else {
                Inline::from(format!("{} found: ", fmt::n(t.workflows.len())))
                    .extend(Inline::names(t.workflows.iter().map(|w| w.name.as_str())))
            },
        ));
        summary.push((
            "hidden",
            if hidden.is_empty() {
                Inline::from("none")
            } else {
                Inline::names(hidden.iter().copied()).t(" (not listed to users)")
            },
        ));
        let mut gate_lines: Vec<(String, Inline)> = Vec::new();
        for g in t.routing_gate.iter().chain(&t.option_gates) {
            if let Some(v) = &g.verdict {
                // Short keys keep the summary's values in one column.
                let (key, what) = match &g.role {
                    gates::GateRole::WorkflowOption { workflow, option } => (
                        "option gate",
                        Inline::code(format!("{workflow}.{option}")).t(": "),
                    ),
                    _ => ("routing gate", Inline::new()),
                };
                gate_lines.push((key.to_string(), what.extend(verdict_inline(v))));
            }
        }
        // What the simulated runs started, in one line per workflow.
        for wr in t.simulation.iter().flatten() {
            let mut i = Inline::code(wr.workflow.clone()).t(": ");
            for (k, r) in wr.runs.iter().enumerate() {
                if k > 0 {
                    i = i.t(", ");
                }
                i = if r.completed {
                    i.t(format!("{} {}", r.level, fmt::n(r.agents)))
                } else {
                    i.t(format!("{} ", r.level)).s(Status::Unknown, "stopped")
                };
            }
            summary.push(("simulated", i.t(" agents per run")));
        }
        if t.routing_gate.is_none() {
            summary.push((
                "review routing",
                Inline::from("no review-routing gate in this build"),
            ));
        }
        let mut d_summary: Vec<(String, Inline)> = summary
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        d_summary.extend(gate_lines);
        if !t.flags.gate_flags.is_empty() {
            let mut i = Inline::new();
            for (k, (f, dflt, cached)) in t.flags.gate_flags.iter().enumerate() {
                if k > 0 {
                    i = i.t("; ");
                }
                i = i.c(f.clone()).t(" = ").c(match cached {
                    Some(c) => format!("{} (cached)", value(c)),
                    None => format!("{} (default)", value(dflt)),
                });
            }
            d_summary.push(("deciding flags".into(), i));
        }
        d_summary
    }

    /// The target, its hashes and its container.
    fn target_sections(&self, d: &mut Doc) {
        let i = &self.info;
        let t = self;

        let mut target = vec![
            ("target", Inline::code(home_relative(&i.target.label))),
            (
                "file",
                Inline::code(home_relative(&i.target.path))
                    .t(format!(" ({})", fmt::bytes(i.target.file_bytes))),
            ),
            (
                "version",
                Inline::code(i.version.clone().unwrap_or_else(|| "unknown".into())),
            ),
            (
                "platform",
                Inline::from(i.target.platform.clone().unwrap_or_else(|| "-".into())),
            ),
        ];
        if let Some(inst) = &t.install {
            target.push((
                "installation",
                Inline::from(format!("{:?} at ", inst.kind).to_lowercase())
                    .c(home_relative(&inst.path))
                    .t(if inst.selected {
                        " (the one the shell runs)"
                    } else {
                        " (not the one the shell runs)"
                    }),
            ));
        }
        if let Some(sig) = &i.signature {
            target.push(("code signature", Inline::from(sig.line())));
        }
        d.section("target", "Target", vec![facts(target)]);
        d.section(
            "hashes",
            "Hashes (SHA-256)",
            vec![facts(vec![
                ("file", Inline::code(t.hashes.file.clone())),
                ("payload", Inline::code(t.hashes.payload.clone())),
                (
                    "bundle",
                    Inline::code(t.hashes.bundle.clone())
                        .t(" (")
                        .c(i.bundle.name.clone())
                        .t(")"),
                ),
                (
                    "bundle digest",
                    Inline::code(t.hashes.bundle_digest.clone()),
                ),
            ])],
        );
        let c = &i.container;
        d.section(
            "container",
            "Container and bundle",
            vec![facts(vec![
                ("container", Inline::from(container_words(i))),
                (
                    "section",
                    Inline::code(c.section.clone().unwrap_or_else(|| "-".into())),
                ),
                (
                    "payload",
                    Inline::from(format!(
                        "at file offset {}, {}",
                        fmt::num(c.payload_offset),
                        fmt::bytes(c.payload_size)
                    )),
                ),
                (
                    "Bun layout",
                    Inline::from(format!(
                        "{}-byte records, {}-byte Offsets ({})",
                        i.bun.layout.record_size.unwrap_or(0),
                        i.bun.layout.offsets_size.unwrap_or(0),
                        i.bun.layout.epoch
                    )),
                ),
                (
                    "modules",
                    Inline::from(format!(
                        "{} ({} JavaScript, {} zstd-compressed)",
                        fmt::n(i.bun.modules),
                        fmt::n(i.bun.js_modules),
                        fmt::n(i.bun.compressed_modules)
                    )),
                ),
                ("entry", Inline::code(i.bun.entry.clone())),
                (
                    "bundle",
                    Inline::from(format!(
                        "{}{}",
                        fmt::bytes(i.bundle.bytes),
                        if i.bundle.code_split {
                            ", code-split"
                        } else {
                            ""
                        }
                    )),
                ),
            ])],
        );
    }

    /// The located functions and the roles not found.
    fn roles_section(&self, d: &mut Doc) {
        let t = self;
        let mut roles = Table::new(vec![
            Column::new("role", Kind::Text),
            Column::new("name", Kind::Code),
            Column::new("original", Kind::Code),
            Column::new("module", Kind::Code),
            Column::new("raw lines", Kind::Number),
            Column::new("pretty lines", Kind::Number),
        ]);
        for f in &t.roles.functions {
            roles.row(vec![
                match &f.workflow {
                    Some(w) => format!("{} ({w})", f.role.as_str()),
                    None => f.role.as_str().to_string(),
                }
                .into(),
                Inline::code(f.name.clone().unwrap_or_else(|| "(anonymous)".into())),
                Inline::code(f.original.clone().unwrap_or_else(|| "-".into())),
                Inline::code(f.module.clone()),
                // Line numbers are positions to jump to (`pretty --at`),
                // written as an editor shows them: no separators.
                span(f.raw_start, f.raw_end).into(),
                span(f.pretty_start, f.pretty_end).into(),
            ]);
        }
        let mut role_blocks = vec![Block::Table(roles)];
        if !t.roles.absent.is_empty() {
            role_blocks.push(Block::List {
                items: t
                    .roles
                    .absent
                    .iter()
                    .map(|a| {
                        Inline::from("absent: ")
                            .c(a.role.as_str())
                            .t(format!(" — {}", a.reason))
                    })
                    .collect(),
                limit: None,
            });
        }
        d.section("located-functions", "Located functions", role_blocks);
    }

    /// One section per workflow, then the gates.
    fn workflow_sections(&self, d: &mut Doc) {
        let t = self;
        for w in &t.workflows {
            d.push(Block::Section(Section::new(
                &format!("workflow-{}", w.name),
                format!("Workflow: {}", w.name),
                self.workflow_blocks(w),
            )));
        }
        match &t.routing_gate {
            Some(g) => d.section(
                "review-routing-gate",
                "Review-routing gate",
                gate_blocks(g, &t.config),
            ),
            None => d.section(
                "review-routing-gate",
                "Review-routing gate",
                vec![Block::Note("This build has no review-routing gate.".into())],
            ),
        }
        for g in &t.option_gates {
            d.push(Block::Section(Section::new(
                &format!("gate-{}", g.role),
                format!("Gate: {}", g.role),
                gate_blocks(g, &t.config),
            )));
        }
        d.push(Block::Section(Section::new(
            "feature-flags",
            "Feature flags",
            self.flag_blocks(),
        )));
        d.section(
            "undetermined",
            "What could not be determined",
            if t.undetermined.is_empty() {
                vec![Block::Note(
                    "Nothing: every fact above was established from the build.".into(),
                )]
            } else {
                vec![Block::List {
                    items: t
                        .undetermined
                        .iter()
                        .map(|u| Inline::from(u.as_str()))
                        .collect(),
                    limit: None,
                }]
            },
        );
    }

    /// Each reconstructed script in full, as an appendix.
    fn script_appendices(&self, d: &mut Doc) {
        let t = self;
        for (name, text) in &t.scripts {
            d.push(Block::Section(
                Section::new(
                    &format!("appendix-{name}"),
                    format!("Appendix: {name} script"),
                    vec![Block::Code {
                        lang: "js",
                        caption: Some(format!(
                            "{name}.js ({})",
                            fmt::count(text.lines().count(), "line", "lines")
                        )),
                        text: text.clone(),
                        max_lines: None,
                    }],
                )
                .closed(),
            ));
        }
    }

    fn workflow_blocks(&self, w: &WorkflowScript) -> Vec<Block> {
        let mut rows = vec![
            (
                "hidden",
                if w.hidden {
                    Inline::status(Status::Changed, "yes — registered but not listed")
                } else {
                    Inline::from("no")
                },
            ),
            (
                "description",
                Inline::from(w.description.clone().unwrap_or_default()),
            ),
            (
                "when to use",
                Inline::from(w.when_to_use.clone().unwrap_or_default()),
            ),
            (
                "phases",
                Inline::from(
                    w.phases
                        .iter()
                        .map(|p| p.title.as_str())
                        .collect::<Vec<_>>()
                        .join(" → "),
                ),
            ),
            (
                "script",
                match (&w.script, &w.script_error) {
                    (Some(s), _) => Inline::from(format!(
                        "{}, {}, syntax {}, SHA-256 ",
                        fmt::count(s.lines, "line", "lines"),
                        fmt::bytes(s.bytes as u64),
                        if s.syntax_ok { "ok" } else { "error" }
                    ))
                    .c(s.sha256.clone()),
                    (None, Some(e)) => Inline::status(Status::Unknown, e.to_string()),
                    (None, None) => Inline::status(Status::Unknown, "not reconstructed"),
                },
            ),
            (
                "builder",
                Inline::code(w.builder.name.clone().unwrap_or_default())
                    .t(" (")
                    .c(w.builder.module.clone())
                    .t(format!(":{})", w.builder.raw_start)),
            ),
        ];
        let names: Vec<String> = w
            .options
            .iter()
            .map(|o| format!("option {}", o.name))
            .collect();
        for (o, n) in w.options.iter().zip(&names) {
            rows.push((n.as_str(), option_text(&o.value)));
        }
        let mut out = vec![facts(rows)];
        if let Some(levels) = &w.levels {
            let mut tb = Table::new(vec![
                Column::new("level", Kind::Text),
                Column::new("correctness finders", Kind::Number),
                Column::new("cleanup finders", Kind::Number),
                Column::new("initial candidate limit", Kind::Number),
                Column::new("additional sweep", Kind::Number),
                Column::new("report limit", Kind::Number),
            ]);
            for l in levels {
                tb.row(vec![
                    l.level.as_str().into(),
                    fmt::num(l.correctness_finders).into(),
                    fmt::num(l.cleanup_finders).into(),
                    fmt::num(l.initial_candidate_limit).into(),
                    l.sweep.map_or("none".into(), fmt::num).into(),
                    fmt::num(l.report_limit).into(),
                ]);
            }
            out.push(Block::Table(tb));
        }
        let runs = self
            .simulation
            .iter()
            .flatten()
            .find(|r| r.workflow == w.name);
        out.extend(pipeline_figure_with(
            w,
            runs.map_or(&[][..], |r| r.runs.as_slice()),
        ));
        if w.phases.is_empty() {
            return out;
        }
        // Say where the numbers come from, and what the reader can change.
        out.push(Block::Note(match (&self.simulation, runs) {
            (None, _) => Inline::from(
                "Not simulated (--no-simulate): the finders are the level table's; the agents per phase are not shown.",
            ),
            (Some(_), Some(_)) => Inline::from(
                "Agents per phase: counted in a simulated run of the script per level (",
            )
            .c(format!("simulate … --workflow {} --args LEVEL", w.name))
            .t(", seed 0, every result generated from its schema). Counts after the first phase follow the generated results (e.g. one verifier per candidate location), so they show the shape of the fan-out, not a real session's numbers."),
            (Some(_), None) => Inline::from(
                "Not simulated: the workflow has no level table to choose its args from.",
            ),
        }));
        out
    }

    fn flag_blocks(&self) -> Vec<Block> {
        let t = self;
        let mut counts = Table::new(vec![
            Column::new("kind", Kind::Text),
            Column::new("names", Kind::Number),
        ]);
        for (k, n) in &t.flags.counts {
            counts.row(vec![k.as_str().into(), fmt::n(*n).into()]);
        }
        let mut out = vec![Block::Table(counts)];
        if !t.flags.gate_flags.is_empty() {
            let mut tb = Table::new(vec![
                Column::new("flag read by the gates", Kind::Code),
                Column::new("default", Kind::Code),
                Column::new("cached", Kind::Code),
            ]);
            for (f, dflt, c) in &t.flags.gate_flags {
                tb.row(vec![
                    Inline::code(f.clone()),
                    Inline::code(value(dflt)),
                    c.as_ref()
                        .map_or(Inline::status(Status::Muted, "(not cached)"), |v| {
                            Inline::code(value(v))
                        }),
                ]);
            }
            out.push(Block::Table(tb));
        }
        out.push(Block::Note(Inline::from("Cached values: ").extend(match (
            &t.config.problem,
            &t.config.path,
        ) {
            (Some(p), _) => Inline::from(p.clone()),
            (None, Some(p)) => Inline::code(home_relative(p)).t(format!(
                " ({})",
                fmt::count(t.config.values.len(), "value", "values")
            )),
            _ => Inline::from("none"),
        })));
        if !t.inventory.is_empty() {
            let mut all = Table::new(vec![
                Column::new("flag", Kind::Code),
                Column::new("kind", Kind::Text),
                Column::new("default", Kind::Code),
                Column::new("cached", Kind::Code),
                Column::new("sites", Kind::Number),
                Column::new("first site", Kind::Code),
            ]);
            all.filter = true;
            for f in &t.inventory {
                let first = f.sites.first();
                all.row(vec![
                    Inline::code(f.name.clone()),
                    f.kind.as_str().into(),
                    // A default can be a JSON object of kilobytes: cut, so
                    // the table keeps room for its other columns (`flags
                    // --json` has every value whole).
                    Inline::code(super::doc::elide(
                        &f.defaults.iter().map(value).collect::<Vec<_>>().join(" | "),
                        48,
                    )),
                    t.config
                        .values
                        .get(&f.name)
                        .map_or_else(Inline::new, |v| Inline::code(value(v))),
                    fmt::n(f.sites.len()).into(),
                    Inline::code(first.map_or(String::new(), |s| {
                        format!(
                            "{}:{}",
                            s.module.rsplit('/').next().unwrap_or(""),
                            s.raw_line
                        )
                    })),
                ]);
            }
            out.push(Block::Section(Section::new(
                "flag-inventory",
                format!("All {}", fmt::count(t.inventory.len(), "flag", "flags")),
                vec![Block::Table(all)],
            )));
        }
        out
    }
}

impl super::emit::View for Teardown {
    /// The terminal's report, without the scripts.
    fn doc(&self) -> Doc {
        self.doc(false)
    }
    /// Markdown and HTML carry the scripts too.
    fn doc_for(&self, format: super::emit::Format) -> Doc {
        match format {
            super::emit::Format::Text => self.doc(false),
            _ => self.doc(true),
        }
    }
}
