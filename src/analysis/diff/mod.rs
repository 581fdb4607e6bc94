//! What changed between two builds, at the level users care about:
//! modules, workflows, flags, gates, roles, functions and texts. Minified
//! names differ from build to build, so nothing here is matched by them.

pub mod code;
pub mod facts;
pub mod functions;
pub mod initialisers;
pub mod lines;
pub mod modules;
pub mod text;

use crate::analysis::analysed::{Analysed, Facts};
use crate::analysis::roles::Roles;
use crate::analysis::surface;
use crate::js::JsError;
use serde::Serialize;

/// The parts of a diff (`--only` offers them as they are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Section {
    Identity,
    Modules,
    Workflows,
    Flags,
    Gates,
    Roles,
    Functions,
    Text,
    Tools,
    Prompts,
    Env,
    Settings,
    Commands,
    Models,
    Schemas,
}

impl Section {
    pub const ALL: [Section; 15] = [
        Section::Identity,
        Section::Modules,
        Section::Workflows,
        Section::Flags,
        Section::Gates,
        Section::Roles,
        Section::Functions,
        Section::Text,
        Section::Tools,
        Section::Prompts,
        Section::Env,
        Section::Settings,
        Section::Commands,
        Section::Models,
        Section::Schemas,
    ];

    /// Whether this section reads the code ([`code::CodeFacts`]: stored,
    /// or taken from an index built with function shapes).
    pub fn needs_shapes(self) -> bool {
        needs_code(self)
    }
}

/// Whether a section reads facts (roles, workflows, gates, flags), which the
/// facts store can supply, or the code itself, which only a parse can.
fn needs_facts(s: Section) -> bool {
    matches!(
        s,
        Section::Workflows
            | Section::Flags
            | Section::Gates
            | Section::Roles
            | Section::Tools
            | Section::Prompts
            | Section::Env
            | Section::Settings
            | Section::Commands
            | Section::Models
            | Section::Schemas
    )
}

fn needs_code(s: Section) -> bool {
    matches!(s, Section::Modules | Section::Functions | Section::Text)
}

/// Build what the sections need of one side: its facts and, for the code
/// sections, its code facts (each from the store when it has them).
pub fn prepare(side: &Analysed, sections: &[Section]) -> Result<(), JsError> {
    if sections.iter().any(|s| needs_facts(*s)) {
        side.facts()?;
    }
    if sections.iter().any(|s| needs_code(*s)) {
        side.code_facts()?;
    }
    Ok(())
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct BuildDiff {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modules: Option<modules::ModuleDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflows: Option<facts::WorkflowsDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<facts::FlagsDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gates: Option<facts::GatesDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<facts::RolesDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<functions::FunctionDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<text::TextDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<surface::tools::ToolsDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<surface::prompts::PromptsDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<surface::NamesDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<surface::NamesDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<surface::NamesDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<surface::NamesDiff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schemas: Option<surface::NamesDiff>,
}

impl BuildDiff {
    /// Whether nothing differs in the sections compared: every section's
    /// own `is_empty`, so a section added to the diff cannot be forgotten
    /// here (the destructuring lists every field). `diff --exit-code`
    /// decides on this.
    pub fn is_empty(&self) -> bool {
        let BuildDiff {
            modules,
            workflows,
            flags,
            gates,
            roles,
            functions,
            text,
            tools,
            prompts,
            env,
            settings,
            commands,
            models,
            schemas,
        } = self;
        modules.as_ref().is_none_or(|d| d.is_empty())
            && workflows.as_ref().is_none_or(|d| d.is_empty())
            && flags.as_ref().is_none_or(|d| d.is_empty())
            && gates.as_ref().is_none_or(|d| d.is_empty())
            && roles.as_ref().is_none_or(|d| d.is_empty())
            && functions.as_ref().is_none_or(|d| d.is_empty())
            && text.as_ref().is_none_or(|d| d.is_empty())
            && tools.as_ref().is_none_or(|d| d.is_empty())
            && prompts.as_ref().is_none_or(|d| d.is_empty())
            && [env, settings, commands, models, schemas]
                .into_iter()
                .all(|d| d.as_ref().is_none_or(|d| d.is_empty()))
    }
}

/// Compare two analysed builds on the sections asked for.
pub fn compare(a: &Analysed, b: &Analysed, sections: &[Section]) -> Result<BuildDiff, JsError> {
    let on = |s: Section| sections.contains(&s);
    let mut out = BuildDiff::default();
    let code = if sections.iter().any(|s| needs_code(*s)) {
        Some((a.code_facts()?, b.code_facts()?))
    } else {
        None
    };
    let (ga, gb) = (a.graph(), b.graph());
    // One budget for every line and word alignment of this comparison,
    // started once the code facts are there (their parse is not aligning).
    let budget = lines::DiffBudget::for_inputs(ga.payload.len().max(gb.payload.len()) as u64);
    let ((modules, funcs), text) = rayon::join(
        || {
            rayon::join(
                || {
                    code.filter(|_| on(Section::Modules))
                        .map(|(ca, cb)| modules::diff(ga, ca, gb, cb))
                },
                || {
                    code.filter(|_| on(Section::Functions))
                        .map(|(ca, cb)| functions::diff(ca, cb, &budget))
                },
            )
        },
        || {
            code.filter(|_| on(Section::Text))
                .map(|(ca, cb)| text::diff(ca, cb, &budget))
        },
    );
    out.modules = modules;
    out.functions = funcs;
    out.text = text;
    let facts = sections.iter().any(|s| needs_facts(*s));
    if facts {
        compare_facts_within(a.facts()?, b.facts()?, sections, &mut out, &budget);
    }
    if let (Some(f), Some((ca, cb))) = (out.functions.as_mut(), code)
        && initialisers::any_to_read(f)
    {
        // Which roles read what a changed initialiser assigns: from the
        // facts, when this diff has them or the store does (never
        // analysed for this alone).
        fn roles<'s>(s: &'s Analysed, facts: bool) -> Option<&'s Roles> {
            (facts || s.facts_cached())
                .then(|| s.facts().ok())
                .flatten()
                .map(|x| &x.roles)
        }
        initialisers::name_readers(
            f,
            roles(a, facts).map(|r| (ca, r)),
            roles(b, facts).map(|r| (cb, r)),
        );
    }
    Ok(out)
}

/// The sections that read facts only (workflows, flags, gates, roles and
/// the surface), from two builds' facts: what `diff` shows and what the
/// history answers from stored facts without parsing.
pub fn compare_facts(fa: &Facts, fb: &Facts, sections: &[Section], out: &mut BuildDiff) {
    compare_facts_within(fa, fb, sections, out, &lines::DiffBudget::default());
}

/// [`compare_facts`], its alignments within `budget`.
pub fn compare_facts_within(
    fa: &Facts,
    fb: &Facts,
    sections: &[Section],
    out: &mut BuildDiff,
    budget: &lines::DiffBudget,
) {
    let on = |s: Section| sections.contains(&s);
    if on(Section::Workflows) {
        out.workflows = Some(facts::workflows(&fa.workflows, &fb.workflows, budget));
    }
    if on(Section::Flags) {
        out.flags = Some(facts::flags(&fa.flags, &fb.flags));
    }
    if on(Section::Gates) {
        out.gates = Some(facts::gates(
            &fa.gates,
            &fb.gates,
            &fa.flags,
            &fb.flags,
            &fa.workflows,
            &fb.workflows,
        ));
    }
    if on(Section::Roles) {
        out.roles = Some(facts::roles(&fa.roles, &fb.roles));
    }
    let s = surface::diff(&fa.surface, &fb.surface, budget);
    out.tools = on(Section::Tools).then_some(s.tools);
    out.prompts = on(Section::Prompts).then_some(s.prompts);
    out.env = on(Section::Env).then_some(s.env);
    out.settings = on(Section::Settings).then_some(s.settings);
    out.commands = on(Section::Commands).then_some(s.commands);
    out.models = on(Section::Models).then_some(s.models);
    out.schemas = on(Section::Schemas).then_some(s.schemas);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section that holds a change makes the whole diff non-empty,
    /// whichever section it is (`diff --only env --exit-code` once exited 0
    /// with env vars added: the CLI checked 8 of the 14 sections).
    #[test]
    fn any_section_with_a_change_makes_the_diff_non_empty() {
        assert!(BuildDiff::default().is_empty());
        let one = || vec!["x".to_string()];
        let names = || {
            Some(surface::NamesDiff {
                added: one(),
                ..Default::default()
            })
        };
        let cases: Vec<(&str, BuildDiff)> = vec![
            (
                "workflows",
                BuildDiff {
                    workflows: Some(facts::WorkflowsDiff {
                        removed: one(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
            (
                "flags",
                BuildDiff {
                    flags: Some(facts::FlagsDiff {
                        added: one(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
            (
                "text",
                BuildDiff {
                    text: Some(text::TextDiff {
                        added: one(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
            (
                "tools",
                BuildDiff {
                    tools: Some(surface::tools::ToolsDiff {
                        removed: one(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
            (
                "prompts",
                BuildDiff {
                    prompts: Some(surface::prompts::PromptsDiff {
                        added: one(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
            (
                "env",
                BuildDiff {
                    env: names(),
                    ..Default::default()
                },
            ),
            (
                "settings",
                BuildDiff {
                    settings: names(),
                    ..Default::default()
                },
            ),
            (
                "commands",
                BuildDiff {
                    commands: names(),
                    ..Default::default()
                },
            ),
            (
                "models",
                BuildDiff {
                    models: names(),
                    ..Default::default()
                },
            ),
            (
                "schemas",
                BuildDiff {
                    schemas: names(),
                    ..Default::default()
                },
            ),
        ];
        for (name, d) in cases {
            assert!(!d.is_empty(), "{name}");
        }
        // Sections compared and found equal are empty.
        let same = BuildDiff {
            env: Some(surface::NamesDiff {
                unchanged: 3,
                ..Default::default()
            }),
            tools: Some(Default::default()),
            ..Default::default()
        };
        assert!(same.is_empty());
    }
}
