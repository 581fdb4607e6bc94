//! Locating the functions that register, build, look up, initialise and gate
//! the bundled workflows. Minified names change with every build, so every
//! role is found by structure and anchor strings; names found along the way
//! (the registrar's name, its list) only lead to the next role within the
//! same build.

use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{FnId, Function};
use crate::js::symbols::{self, Symbol};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

mod lookup;
mod registration;
mod review;
/// Each role signature recognised on a small imitation written here, and
/// not recognised when one element of the signature is missing.
#[cfg(test)]
mod tests;

pub use registration::{Registrar, RegistrarCall};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    WorkflowRegistrar,
    WorkflowLookup,
    WorkflowBuilder,
    WorkflowsInit,
    ReviewInstructions,
    ReviewRoutingGate,
}

pub const ALL_ROLES: [Role; 6] = [
    Role::WorkflowRegistrar,
    Role::WorkflowLookup,
    Role::WorkflowBuilder,
    Role::WorkflowsInit,
    Role::ReviewInstructions,
    Role::ReviewRoutingGate,
];

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::WorkflowRegistrar => "workflow-registrar",
            Role::WorkflowLookup => "workflow-lookup",
            Role::WorkflowBuilder => "workflow-builder",
            Role::WorkflowsInit => "workflows-init",
            Role::ReviewInstructions => "review-instructions",
            Role::ReviewRoutingGate => "review-routing-gate",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Role::WorkflowRegistrar => "registers built-in workflows and the hidden option",
            Role::WorkflowLookup => "finds a workflow by name",
            Role::WorkflowBuilder => "builds and registers one workflow script",
            Role::WorkflowsInit => "initialises the bundled workflows",
            Role::ReviewInstructions => {
                "builds the /code-review instructions, including the Workflow tool call"
            }
            Role::ReviewRoutingGate => "checks the conditions for automatic workflow selection",
        }
    }
}

/// How sure the locator is: `high` when one candidate matched every
/// signature check, `medium` when several did or a check was left open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
}

impl std::fmt::Display for Confidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
        })
    }
}

/// A function found in a role.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleFunction {
    pub role: Role,
    /// The minified name (None for an anonymous function).
    pub name: Option<String>,
    /// The original name, when the bundle's export tables reveal it.
    pub original: Option<String>,
    pub module: String,
    pub raw_start: u32,
    pub raw_end: u32,
    pub pretty_start: u32,
    pub pretty_end: u32,
    /// For builders: the workflow it builds.
    pub workflow: Option<String>,
    pub evidence: Vec<String>,
    pub confidence: Confidence,
    #[serde(skip)]
    pub module_index: usize,
    #[serde(skip)]
    pub function: FnId,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AbsentRole {
    pub role: Role,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Roles {
    pub functions: Vec<RoleFunction>,
    pub absent: Vec<AbsentRole>,
}

impl Roles {
    pub fn get(&self, role: Role) -> impl Iterator<Item = &RoleFunction> {
        self.functions.iter().filter(move |f| f.role == role)
    }
    pub fn first(&self, role: Role) -> Option<&RoleFunction> {
        self.get(role).next()
    }

    /// Say why `role` was not found.
    fn mark_absent(&mut self, role: Role, reason: impl Into<String>) {
        self.absent.push(AbsentRole {
            role,
            reason: reason.into(),
        });
    }
}

/// A name as one module sees it: a module and its local name there.
pub type Local = (usize, String);

/// A call of `name` (not of a longer name, not a method).
fn call_re(name: &str) -> Regex {
    // `...name(` (a spread of the result) counts; `x.name(` does not.
    Regex::new(&format!(r"(?:^|[^\w$.]|\.\.\.){}\(", regex::escape(name))).unwrap()
}

fn fn_source<'m>(m: &'m IndexedModule, f: &Function) -> &'m str {
    m.source().get(f.lo as usize..f.hi as usize).unwrap_or("")
}

/// Every (module, local name) under which `name` of module `m` is reachable:
/// itself, and every import that resolves to it.
pub fn aliases(ci: &CodeIndex, m: usize, name: &str) -> Vec<Local> {
    let mut out = vec![(m, name.to_string())];
    let target = &ci.modules[m];
    let exported: Vec<&str> = target
        .index
        .esm_exports
        .iter()
        .filter(|e| e.local == name)
        .map(|e| e.original.as_str())
        .collect();
    if exported.is_empty() {
        return out;
    }
    for (i, other) in ci.modules.iter().enumerate() {
        for imp in &other.index.imports {
            if !imp.local.is_empty()
                && exported.contains(&imp.imported.as_str())
                && ci
                    .resolve_import(other, &imp.source)
                    .is_some_and(|t| std::ptr::eq(t, target))
            {
                out.push((i, imp.local.clone()));
            }
        }
    }
    out
}

pub struct Locator<'a> {
    pub ci: &'a CodeIndex,
    originals: HashMap<(String, String), String>,
}

impl<'a> Locator<'a> {
    pub fn new(ci: &'a CodeIndex, syms: &[Symbol]) -> Locator<'a> {
        let originals = symbols::original_names(syms)
            .into_iter()
            .map(|((m, n), o)| ((m.to_string(), n.to_string()), o.to_string()))
            .collect();
        Locator { ci, originals }
    }

    fn describe(
        &self,
        role: Role,
        m: usize,
        id: FnId,
        evidence: Vec<String>,
        confidence: Confidence,
    ) -> RoleFunction {
        let module = &self.ci.modules[m];
        let f = &module.index.functions[id as usize];
        let original = f.name.as_ref().and_then(|n| {
            self.originals
                .get(&(module.name.clone(), n.to_string()))
                .cloned()
        });
        RoleFunction {
            role,
            name: f.name.as_deref().map(str::to_string),
            original,
            module: module.name.clone(),
            raw_start: module.raw_pos(f.lo).0,
            raw_end: module.raw_pos(f.hi.saturating_sub(1)).0,
            pretty_start: module.pretty_line(f.lo),
            pretty_end: module.pretty_line(f.hi.saturating_sub(1)),
            workflow: None,
            evidence,
            confidence,
            module_index: m,
            function: id,
        }
    }

    pub fn locate(&self) -> Roles {
        let mut roles = Roles::default();
        let regs = self.registrar();
        let Some(Registrar {
            module: rm,
            function: rid,
            name: rname,
        }) = regs.first().cloned()
        else {
            self.without_registrar(&mut roles);
            dedup_absent(&mut roles);
            return roles;
        };
        let rsrc = self.registrar_role(&mut roles, &regs, rm, rid);
        let builders = self.builders(rm, &rname);
        self.builder_roles(&mut roles, &builders);
        self.init_role(&mut roles, &builders);
        self.lookup_role(&mut roles, rm, rsrc);
        let review = builders
            .iter()
            .find(|b| b.workflow.as_deref() == Some("code-review"))
            .map(|b| (b.module, b.function));
        self.review_roles(&mut roles, review);
        dedup_absent(&mut roles);
        roles
    }
}

/// `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn dedup_absent(roles: &mut Roles) {
    let mut seen = Vec::new();
    roles.absent.retain(|a| {
        if seen.contains(&a.role) {
            false
        } else {
            seen.push(a.role);
            true
        }
    });
}
