//! `gates`: what decides whether each workflow is offered, judged against a config.

use super::doc::{Block, Doc, Inline, Section, Status, fmt};
use super::emit::View;
use super::teardown;
use crate::analysis::gates::{CachedFlags, Gate};

#[derive(serde::Serialize)]
pub struct GatesView {
    pub target: String,
    pub version: Option<String>,
    pub config: CachedFlags,
    pub gates: Vec<Gate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<crate::analysis::flags::FlagInventory>,
    /// Whether the build has a review routing gate (the human note).
    #[serde(skip)]
    pub has_routing: bool,
    /// Every flag-decided function, not only the workflow gates (`--all`).
    #[serde(skip)]
    pub every: bool,
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

impl View for GatesView {
    fn doc(&self) -> Doc {
        doc(
            &self.target,
            &self.config,
            self.has_routing,
            &self.gates,
            self.every,
            self.flags.as_ref(),
        )
    }
}
