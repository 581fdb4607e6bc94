//! What changed between two builds, at the level users care about:
//! modules, workflows, flags, gates, roles, functions and texts. Minified
//! names differ from build to build, so nothing here is matched by them.

pub mod facts;
pub mod functions;
pub mod lines;
pub mod modules;
pub mod text;

use crate::analysis::flags::{self, FlagInventory};
use crate::analysis::gates::{self, Gate};
use crate::analysis::roles::{Locator, Roles};
use crate::analysis::workflows::{self, WorkflowScript};
use crate::bun::BunGraph;
use crate::js::code::CodeIndex;
use crate::js::symbols::{self, Symbol};
use serde::Serialize;

/// The parts of a diff, for `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    Identity,
    Modules,
    Workflows,
    Flags,
    Gates,
    Roles,
    Functions,
    Text,
}

impl Section {
    pub const ALL: [Section; 8] = [
        Section::Identity,
        Section::Modules,
        Section::Workflows,
        Section::Flags,
        Section::Gates,
        Section::Roles,
        Section::Functions,
        Section::Text,
    ];

    /// Whether this section needs function shapes in the code index.
    pub fn needs_shapes(self) -> bool {
        self == Section::Functions
    }
}

/// One build, analysed once for every section.
pub struct Side {
    pub ci: CodeIndex,
    pub symbols: Vec<Symbol>,
    pub roles: Roles,
    pub workflows: Vec<WorkflowScript>,
    /// Every gate, flag-decided functions included.
    pub gates: Vec<Gate>,
    pub flags: FlagInventory,
}

impl Side {
    /// Run the analyses the sections need (roles, workflows, gates and flags
    /// only for the sections that report them).
    pub fn analyse(ci: CodeIndex, sections: &[Section]) -> Side {
        let syms = symbols::recover(&ci);
        let facts = sections.iter().any(|s| {
            matches!(
                s,
                Section::Workflows | Section::Flags | Section::Gates | Section::Roles
            )
        });
        if !facts {
            return Side {
                ci,
                symbols: syms,
                roles: Roles::default(),
                workflows: Vec::new(),
                gates: Vec::new(),
                flags: FlagInventory::default(),
            };
        }
        let (roles, wfs, gates, inventory) = {
            let originals = symbols::original_names(&syms);
            let locator = Locator::new(&ci, &syms);
            let roles = locator.locate();
            let wfs = workflows::bundled(&ci, &roles, &locator);
            let (gates, inventory) = rayon::join(
                || gates::discover(&ci, &roles, &wfs, &originals),
                || flags::inventory(&ci, &originals),
            );
            (roles, wfs, gates, inventory)
        };
        Side {
            ci,
            symbols: syms,
            roles,
            workflows: wfs,
            gates,
            flags: inventory,
        }
    }
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
}

/// Compare two analysed builds on the sections asked for.
pub fn compare(
    ga: &BunGraph,
    a: &Side,
    gb: &BunGraph,
    b: &Side,
    sections: &[Section],
) -> BuildDiff {
    let on = |s: Section| sections.contains(&s);
    let mut out = BuildDiff::default();
    let ((modules, funcs), text) = rayon::join(
        || {
            rayon::join(
                || on(Section::Modules).then(|| modules::diff(ga, &a.ci, gb, &b.ci)),
                || {
                    on(Section::Functions).then(|| {
                        let oa = symbols::original_names(&a.symbols);
                        let ob = symbols::original_names(&b.symbols);
                        functions::diff(&a.ci, &b.ci, &oa, &ob)
                    })
                },
            )
        },
        || on(Section::Text).then(|| text::diff(&a.ci, &b.ci)),
    );
    out.modules = modules;
    out.functions = funcs;
    out.text = text;
    if on(Section::Workflows) {
        out.workflows = Some(facts::workflows(&a.workflows, &b.workflows));
    }
    if on(Section::Flags) {
        out.flags = Some(facts::flags(&a.flags, &b.flags));
    }
    if on(Section::Gates) {
        out.gates = Some(facts::gates(
            &a.gates,
            &b.gates,
            &a.flags,
            &b.flags,
            &a.workflows,
            &b.workflows,
        ));
    }
    if on(Section::Roles) {
        out.roles = Some(facts::roles(&a.roles, &b.roles));
    }
    out
}
