//! Locating the functions that register, build, look up, initialise and gate
//! the bundled workflows. Minified names change with every build, so every
//! role is found by structure and anchor strings; names found along the way
//! (the registrar's name, its list) only lead to the next role within the
//! same build.

use crate::analysis::eval::{Evaluator, parse_snippet};
use crate::analysis::flags::is_flag_name;
use crate::analysis::workflows::ROUTED_LEVELS;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{FnId, Function, LitKind};
use crate::js::symbols::{self, Symbol};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

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
}

/// A call to a builder: where it is and the parsed call expression.
pub struct RegistrarCall {
    pub module: usize,
    pub lo: u32,
    pub hi: u32,
    pub builder: FnId,
}

/// A function that pushes built-in workflows onto a list: a registrar candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registrar {
    pub module: usize,
    pub function: FnId,
    /// Its minified name ("" for an anonymous function).
    pub name: String,
}

/// A function that calls the registrar with a workflow script.
struct Builder {
    module: usize,
    function: FnId,
    /// The workflow's `meta.name`, when it evaluates.
    workflow: Option<String>,
}

/// A function that calls builders: an init candidate.
struct BuilderCaller {
    module: usize,
    function: FnId,
    /// How many builder calls it makes.
    calls: usize,
}

/// The function that searches the registered workflows by name.
struct Lookup {
    module: usize,
    function: FnId,
    evidence: Vec<String>,
}

/// The function whose template invokes the code-review workflow by name.
struct Instructions {
    module: usize,
    function: FnId,
    /// The local name of the workflow-name binding the template uses.
    alias: String,
}

/// A function beside the instructions that checks the routed levels and
/// returns a flag: a routing-gate candidate.
struct GateCandidate {
    function: FnId,
    flag: String,
    called_by_instructions: bool,
}

/// A name as one module sees it: a module and its local name there.
pub type Local = (usize, String);

/// The largest function taken for the registrar list's getter
/// (`function list() { return Lst }`, or a filtered copy of it): a getter
/// is a line or two; a big function that mentions the list does more.
const MAX_LIST_GETTER_BYTES: u32 = 400;

/// The largest function taken for the lookup: it is a `.find(…)` over the
/// list and little else. Larger functions with a `.find(x => x.name === …)`
/// are search code of other kinds.
const MAX_LOOKUP_BYTES: u32 = 600;

/// The largest binding value searched for a call on the way from the
/// list's getter to the lookup (`var All = memo(async … Get() …)`):
/// wrappers are short; scanning large values would follow unrelated code.
const MAX_WRAPPER_VALUE_BYTES: u32 = 4000;

/// How many wrappers deep the lookup is searched from the list's getter
/// (the getter → a memoised copy → the lookup is two; real builds need
/// no more than a few).
const LOOKUP_HOPS: usize = 4;

/// When more names than this call the current step, the name is a common
/// helper, not the list's getter chain: stop rather than search the bundle.
const MAX_FRONTIER: usize = 200;

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
                .get(&(module.name.clone(), n.clone()))
                .cloned()
        });
        RoleFunction {
            role,
            name: f.name.clone(),
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

    /// The registrar: the function that pushes `{source: "built-in", …, script, hidden}`.
    pub fn registrar(&self) -> Vec<Registrar> {
        let shape = Regex::new(r#"source\s*:\s*"built-in""#).unwrap();
        let mut out = Vec::new();
        for (i, m) in self.ci.modules.iter().enumerate() {
            for s in m
                .index
                .strings
                .iter()
                .filter(|s| s.value == "built-in" && s.kind == LitKind::String)
            {
                let Some(id) = s.in_function else { continue };
                let f = &m.index.functions[id as usize];
                let src = fn_source(m, f);
                let pushes = src.contains(".push(");
                if shape.is_match(src)
                    && pushes
                    && src.contains("script")
                    && f.params >= 2
                    && !out
                        .iter()
                        .any(|o: &Registrar| o.module == i && o.function == id)
                {
                    out.push(Registrar {
                        module: i,
                        function: id,
                        name: f.name.clone().unwrap_or_default(),
                    });
                }
            }
        }
        out
    }

    /// Calls of the registrar whose first argument is a workflow script template.
    pub fn registrar_calls(&self, reg_module: usize, reg_name: &str) -> Vec<RegistrarCall> {
        let mut out = Vec::new();
        for (m, local) in aliases(self.ci, reg_module, reg_name) {
            let module = &self.ci.modules[m];
            for c in module
                .index
                .calls
                .iter()
                .filter(|c| !c.member && c.name == local && c.args >= 2)
            {
                let script_first = module
                    .index
                    .strings
                    .iter()
                    .find(|s| s.lo > c.lo && s.lo < c.hi)
                    .is_some_and(|s| {
                        s.kind == LitKind::Template
                            && s.value.trim_start().starts_with("export const meta")
                    });
                if let (true, Some(builder)) = (script_first, c.in_function) {
                    out.push(RegistrarCall {
                        module: m,
                        lo: c.lo,
                        hi: c.hi,
                        builder,
                    });
                }
            }
        }
        out
    }

    pub fn locate(&self) -> Roles {
        let mut roles = Roles::default();
        let absent = |roles: &mut Roles, role: Role, reason: String| {
            roles.absent.push(AbsentRole { role, reason })
        };

        let regs = self.registrar();
        let Some(Registrar {
            module: rm,
            function: rid,
            name: rname,
        }) = regs.first().cloned()
        else {
            for role in ALL_ROLES {
                if role == Role::WorkflowRegistrar {
                    absent(
                        &mut roles,
                        role,
                        "no function pushes {source: \"built-in\", …, script}".into(),
                    );
                } else if matches!(role, Role::ReviewInstructions | Role::ReviewRoutingGate) {
                    self.review_roles(&mut roles, None);
                    break;
                } else {
                    absent(
                        &mut roles,
                        role,
                        "no workflow registrar in this build".into(),
                    );
                }
            }
            dedup_absent(&mut roles);
            return roles;
        };
        let conf = if regs.len() == 1 {
            Confidence::High
        } else {
            Confidence::Medium
        };
        let rmod = &self.ci.modules[rm];
        let rsrc = fn_source(rmod, &rmod.index.functions[rid as usize]);
        roles.functions.push(self.describe(
            Role::WorkflowRegistrar,
            rm,
            rid,
            vec![format!(
                "pushes {{source: \"built-in\", …, script{}}} ({} candidate(s))",
                if rsrc.contains("hidden") {
                    ", hidden"
                } else {
                    "; no hidden option"
                },
                regs.len()
            )],
            conf,
        ));

        // Builders: functions that call the registrar with a script template.
        let calls = self.registrar_calls(rm, &rname);
        let mut ev = Evaluator::new(self.ci);
        let mut builders: Vec<Builder> = Vec::new();
        for c in &calls {
            let module = &self.ci.modules[c.module];
            let workflow = workflow_name(&mut ev, module, c);
            if !builders
                .iter()
                .any(|b| b.module == c.module && b.function == c.builder)
            {
                builders.push(Builder {
                    module: c.module,
                    function: c.builder,
                    workflow,
                });
            }
        }
        if builders.is_empty() {
            absent(
                &mut roles,
                Role::WorkflowBuilder,
                "the registrar is never called with a workflow script".into(),
            );
        }
        for b in &builders {
            let mut f = self.describe(
                Role::WorkflowBuilder,
                b.module,
                b.function,
                vec![format!(
                    "calls the registrar with a template starting `export const meta = {{`{}",
                    b.workflow
                        .as_ref()
                        .map(|n| format!(" (meta.name = {n:?})"))
                        .unwrap_or_default()
                )],
                Confidence::High,
            );
            f.workflow = b.workflow.clone();
            roles.functions.push(f);
        }

        // Init: the function that calls every builder.
        let mut best: Option<BuilderCaller> = None;
        let mut counts: HashMap<(usize, FnId), usize> = HashMap::new();
        for b in &builders {
            let bname = self.ci.modules[b.module].index.functions[b.function as usize]
                .name
                .clone()
                .unwrap_or_default();
            for (m, local) in aliases(self.ci, b.module, &bname) {
                for c in self.ci.modules[m]
                    .index
                    .calls
                    .iter()
                    .filter(|c| !c.member && c.name == local && c.args == 0)
                {
                    if let Some(f) = c.in_function
                        && !builders.iter().any(|b| b.module == m && b.function == f)
                    {
                        *counts.entry((m, f)).or_default() += 1;
                    }
                }
            }
        }
        for ((module, function), calls) in counts {
            if best.as_ref().is_none_or(|b| calls > b.calls) {
                best = Some(BuilderCaller {
                    module,
                    function,
                    calls,
                });
            }
        }
        match best {
            Some(BuilderCaller {
                module: m,
                function: f,
                calls: n,
            }) => {
                let mut evidence = vec![format!("calls {n} of {} builders", builders.len())];
                let d = self.describe(
                    Role::WorkflowsInit,
                    m,
                    f,
                    Vec::new(),
                    if n == builders.len() {
                        Confidence::High
                    } else {
                        Confidence::Medium
                    },
                );
                if let Some(o) = &d.original {
                    evidence.push(format!("exported as {o}"));
                }
                roles.functions.push(RoleFunction { evidence, ..d });
            }
            None => absent(
                &mut roles,
                Role::WorkflowsInit,
                "no function calls the builders".into(),
            ),
        }

        // Lookup: list ← getter of the registrar's array ← `.find(x => x.name === …)`.
        match self.lookup(rm, rsrc) {
            Some(Lookup {
                module,
                function,
                evidence,
            }) => roles.functions.push(self.describe(
                Role::WorkflowLookup,
                module,
                function,
                evidence,
                Confidence::High,
            )),
            None => absent(
                &mut roles,
                Role::WorkflowLookup,
                "no function searches the registered workflows by name".into(),
            ),
        }

        let review = builders
            .iter()
            .find(|b| b.workflow.as_deref() == Some("code-review"))
            .map(|b| (b.module, b.function));
        self.review_roles(&mut roles, review);
        dedup_absent(&mut roles);
        roles
    }

    /// The lookup searches, with `.find(x => x.name === …)`, a list that is
    /// (a few calls away) the registrar's own list.
    fn lookup(&self, rm: usize, rsrc: &str) -> Option<Lookup> {
        // The list may be a binding (`list.push`) or a property of a state
        // object (`state().bundledWorkflows.push`).
        let list = Regex::new(r"([\w$]+(?:\(\))?(?:\.[\w$]+)*)\.push\(\s*\{")
            .unwrap()
            .captures(rsrc)?
            .get(1)?
            .as_str()
            .to_string();
        let rmod = &self.ci.modules[rm];
        let ret = Regex::new(&format!(r"return\s+{}\s*[;}}]", regex::escape(&list))).unwrap();
        let find =
            Regex::new(r"\.find\(\s*\(?\s*([\w$]+)\s*\)?\s*=>\s*([\w$]+)\.name\s*===").unwrap();
        // Who calls whom, to explain the path once the lookup is found.
        let mut called: HashMap<Local, Local> = HashMap::new();
        let mut frontier: Vec<Local> = Vec::new();
        // The list's getter returns it, or (2.1.3xx) a filtered copy of it.
        let push = format!("{list}.push(");
        let reads_list = |src: &str| {
            ret.is_match(src)
                || (src.contains(list.as_str()) && !src.contains(&push) && src.contains("return"))
        };
        let mut filtered = false;
        for f in rmod
            .index
            .functions
            .iter()
            .filter(|f| f.hi - f.lo < MAX_LIST_GETTER_BYTES && reads_list(fn_source(rmod, f)))
        {
            filtered |= !ret.is_match(fn_source(rmod, f));
            if let Some(n) = &f.name {
                frontier.extend(aliases(self.ci, rm, n));
            }
        }
        let mut seen: Vec<Local> = frontier.clone();
        for _ in 0..LOOKUP_HOPS {
            let mut next = Vec::new();
            for (m, name) in &frontier {
                let module = &self.ci.modules[*m];
                let calls = call_re(name);
                for (i, f) in module.index.functions.iter().enumerate() {
                    let src = fn_source(module, f);
                    if f.hi - f.lo < MAX_LOOKUP_BYTES && calls.is_match(src) && find.is_match(src) {
                        let mut path = vec![name.clone()];
                        let mut at = (*m, name.clone());
                        while let Some((caller_module, caller)) = called.get(&at) {
                            path.push(caller.clone());
                            at = (*caller_module, caller.clone());
                        }
                        return Some(Lookup {
                            module: *m,
                            function: i as FnId,
                            evidence: vec![
                                format!("searches {name}(…) with .find(x => x.name === …)"),
                                format!(
                                    "{}() returns {}the registrar's list {list}",
                                    path.join("() → "),
                                    if filtered { "a filtered copy of " } else { "" }
                                ),
                            ],
                        });
                    }
                }
                // Bindings and functions whose (small) value calls `name`.
                for (other, defs) in &module.index.definitions {
                    let Some((lo, hi)) = defs.iter().find_map(|d| d.value) else {
                        continue;
                    };
                    if hi - lo > MAX_WRAPPER_VALUE_BYTES
                        || !calls.is_match(&module.source()[lo as usize..hi as usize])
                    {
                        continue;
                    }
                    for alias in aliases(self.ci, *m, other) {
                        if !seen.contains(&alias) {
                            seen.push(alias.clone());
                            called.insert(alias.clone(), (*m, name.clone()));
                            next.push(alias);
                        }
                    }
                }
            }
            if next.is_empty() || next.len() > MAX_FRONTIER {
                break;
            }
            frontier = next;
        }
        None
    }

    /// The /code-review instructions and the routing gate they consult.
    fn review_roles(&self, roles: &mut Roles, review_builder: Option<(usize, FnId)>) {
        let absent = |roles: &mut Roles, role: Role, reason: &str| {
            roles.absent.push(AbsentRole {
                role,
                reason: reason.into(),
            })
        };
        let Some((bm, bid)) = review_builder else {
            absent(
                roles,
                Role::ReviewInstructions,
                "no code-review workflow in this build",
            );
            absent(
                roles,
                Role::ReviewRoutingGate,
                "no code-review workflow in this build",
            );
            return;
        };
        // The binding the code-review builder uses for meta.name.
        let bmod = &self.ci.modules[bm];
        let bsrc = fn_source(bmod, &bmod.index.functions[bid as usize]);
        let Some(name_binding) = Regex::new(r"name\s*:\s*([\w$]+)\s*,\s*description")
            .unwrap()
            .captures(bsrc)
            .map(|c| c[1].to_string())
        else {
            absent(
                roles,
                Role::ReviewInstructions,
                "the code-review builder's meta.name is not a binding",
            );
            absent(
                roles,
                Role::ReviewRoutingGate,
                "no review instructions found",
            );
            return;
        };
        let mut instructions = None;
        for (m, alias) in aliases(self.ci, bm, &name_binding) {
            let module = &self.ci.modules[m];
            let uses = Regex::new(&format!(r"\(\s*{}\s*\)", regex::escape(&alias))).unwrap();
            for s in module.index.strings.iter().filter(|s| {
                s.kind == LitKind::Template && s.value.contains("({ name: ${…}, args: ${…} })")
            }) {
                let Some(id) = s.in_function else { continue };
                let tpl = &module.source()[s.lo as usize..s.hi as usize];
                if uses.is_match(tpl) {
                    instructions = Some(Instructions {
                        module: m,
                        function: id,
                        alias: alias.clone(),
                    });
                }
            }
        }
        let Some(Instructions {
            module: im,
            function: iid,
            alias,
        }) = instructions
        else {
            absent(
                roles,
                Role::ReviewInstructions,
                "no template invokes the code-review workflow by name",
            );
            absent(
                roles,
                Role::ReviewRoutingGate,
                "no review instructions found",
            );
            return;
        };
        roles.functions.push(self.describe(
            Role::ReviewInstructions,
            im,
            iid,
            vec![format!("template `…({{ name: ${{…({alias})}}, args: ${{…}} }})` naming the code-review workflow")],
            Confidence::High,
        ));
        // The gate: a function of this module that checks the three levels and
        // returns a feature flag, and that the instructions call.
        let imod = &self.ci.modules[im];
        let isrc = fn_source(imod, &imod.index.functions[iid as usize]);
        let mut gates = Vec::new();
        let mut by_function: HashMap<FnId, Vec<&str>> = HashMap::new();
        for s in &imod.index.strings {
            if let Some(f) = s.in_function {
                by_function.entry(f).or_default().push(s.value.as_str());
            }
        }
        for (i, f) in imod.index.functions.iter().enumerate() {
            let Some(strings) = by_function.get(&(i as FnId)) else {
                continue;
            };
            let levels = ROUTED_LEVELS.iter().all(|l| strings.contains(l));
            let flag = strings.iter().find(|s| is_flag_name(s));
            let src = fn_source(imod, f);
            let returns_flag = flag.is_some_and(|fl| {
                Regex::new(&format!(r#"return\s+[\w$]+\(\s*"{}""#, regex::escape(fl)))
                    .unwrap()
                    .is_match(src)
            });
            if levels && returns_flag {
                gates.push(GateCandidate {
                    function: i as FnId,
                    flag: flag.map(|s| s.to_string()).unwrap_or_default(),
                    called_by_instructions: f
                        .name
                        .as_ref()
                        .is_some_and(|n| call_re(n).is_match(isrc)),
                });
            }
        }
        // A candidate the instructions call is the one they consult.
        gates.sort_by_key(|g| !g.called_by_instructions);
        match gates.first() {
            Some(g) => {
                let mut evidence = vec![
                    format!("checks the levels {}", and_list(ROUTED_LEVELS)),
                    format!("returns the feature flag {}", g.flag),
                ];
                if g.called_by_instructions {
                    evidence.push("called by the review instructions".into());
                }
                roles.functions.push(self.describe(
                    Role::ReviewRoutingGate,
                    im,
                    g.function,
                    evidence,
                    if g.called_by_instructions {
                        Confidence::High
                    } else {
                        Confidence::Medium
                    },
                ));
            }
            None => absent(
                roles,
                Role::ReviewRoutingGate,
                "no function beside the instructions checks the levels and returns a flag",
            ),
        }
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

/// The `name` of a registrar call's meta argument, evaluated.
fn workflow_name(ev: &mut Evaluator, module: &IndexedModule, c: &RegistrarCall) -> Option<String> {
    let text = &module.source()[c.lo as usize..c.hi as usize];
    let call = parse_snippet(text).ok()?;
    let swc_ecma_ast::Expr::Call(call) = &*call else {
        return None;
    };
    let meta = call.args.get(1)?;
    let v = ev.eval(c.module, &meta.expr, c.lo, &Vec::new()).ok()?;
    v.get("name")?.as_str().map(str::to_string)
}

/// Each role signature recognised on a small imitation written here, and
/// not recognised when one element of the signature is missing.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    /// A registrar, two builders (one the code-review workflow, with a
    /// computed option), an init, a lookup, review instructions and the
    /// routing gate they consult.
    const BUNDLE: &str = r#"var registered = [];
function addFlow(text, meta, opts) {
  registered.push({ source: "built-in", ...meta, script: text, hidden: opts?.hidden });
}
function flows() {
  return registered;
}
async function byName(n) {
  return flows().find((w) => w.name === n);
}
var RN = "code-review";
function makeReview() {
  addFlow(`export const meta = {
  name: ${JSON.stringify(RN)},
}
phase("one")
`, { name: RN, description: "reviews" }, { hidden: !0 });
}
var fl = (n, d) => globalThis.cfg?.cachedFeatureFlags?.[n] ?? d;
function otherOff() {
  if (fl("tengu_demo_other", !1)) return !1;
  return !0;
}
function makeOther() {
  addFlow(`export const meta = { name: "other" }
`, { name: "other", description: "other" }, { disableModelInvocation: otherOff });
}
function setup() {
  makeReview(), makeOther();
}
function routed(level) {
  if (level !== "high" && level !== "xhigh" && level !== "max") return !1;
  return fl("tengu_demo_route", !1);
}
var js = (v) => JSON.stringify(v);
function reviewText(level) {
  if (routed(level)) return `Use Workflow({ name: ${js(RN)}, args: ${js(level)} })`;
  return "inline";
}
"#;

    fn locate(src: &str) -> Roles {
        let ci = testjs::script(src);
        Locator::new(&ci, &[]).locate()
    }

    /// `BUNDLE` with `from` (which must occur) replaced by `to`.
    fn without(from: &str, to: &str) -> Roles {
        assert!(BUNDLE.contains(from), "{from}");
        locate(&BUNDLE.replace(from, to))
    }

    fn name(roles: &Roles, role: Role) -> Option<&str> {
        roles.first(role).and_then(|f| f.name.as_deref())
    }

    fn reason(roles: &Roles, role: Role) -> &str {
        roles
            .absent
            .iter()
            .find(|a| a.role == role)
            .map(|a| a.reason.as_str())
            .unwrap_or_else(|| panic!("{role:?} was found: {roles:#?}"))
    }

    #[test]
    fn every_role_on_the_imitation() {
        let r = locate(BUNDLE);
        assert!(r.absent.is_empty(), "{:#?}", r.absent);
        assert_eq!(name(&r, Role::WorkflowRegistrar), Some("addFlow"));
        assert_eq!(name(&r, Role::WorkflowLookup), Some("byName"));
        assert_eq!(name(&r, Role::WorkflowsInit), Some("setup"));
        assert_eq!(name(&r, Role::ReviewInstructions), Some("reviewText"));
        assert_eq!(name(&r, Role::ReviewRoutingGate), Some("routed"));
        let builders: Vec<(Option<&str>, Option<&str>)> = r
            .get(Role::WorkflowBuilder)
            .map(|f| (f.name.as_deref(), f.workflow.as_deref()))
            .collect();
        assert_eq!(
            builders,
            [
                (Some("makeReview"), Some("code-review")),
                (Some("makeOther"), Some("other"))
            ]
        );
        assert!(r.functions.iter().all(|f| f.confidence == Confidence::High));
        let reg = r.first(Role::WorkflowRegistrar).unwrap();
        assert_eq!((reg.raw_start, reg.raw_end), (2, 4));
        assert_eq!(
            reg.evidence,
            ["pushes {source: \"built-in\", …, script, hidden} (1 candidate(s))"]
        );
        assert_eq!(
            r.first(Role::WorkflowLookup).unwrap().evidence,
            [
                "searches flows(…) with .find(x => x.name === …)",
                "flows() returns the registrar's list registered"
            ]
        );
        assert_eq!(
            r.first(Role::WorkflowsInit).unwrap().evidence,
            ["calls 2 of 2 builders"]
        );
        assert_eq!(
            r.first(Role::ReviewRoutingGate).unwrap().evidence,
            [
                "checks the levels high, xhigh and max",
                "returns the feature flag tengu_demo_route",
                "called by the review instructions"
            ]
        );
    }

    #[test]
    fn the_registrar_needs_each_element_of_its_signature() {
        for (from, to) in [
            (r#"source: "built-in""#, r#"source: "plugin""#),
            ("registered.push(", "registered.unshift("),
            ("script: text", "body: text"),
            (
                "function addFlow(text, meta, opts)",
                "function addFlow(text)",
            ),
        ] {
            let r = without(from, to);
            assert!(
                reason(&r, Role::WorkflowRegistrar).starts_with("no function pushes"),
                "{from}"
            );
            // Nothing else is looked for without it.
            assert_eq!(
                reason(&r, Role::WorkflowBuilder),
                "no workflow registrar in this build",
                "{from}"
            );
            assert!(r.functions.is_empty(), "{from}");
        }
        // Without `hidden`, still the registrar, and the evidence says so.
        let r = without(", hidden: opts?.hidden", "");
        assert!(
            r.first(Role::WorkflowRegistrar).unwrap().evidence[0].contains("; no hidden option")
        );
    }

    #[test]
    fn two_registrars_lower_the_confidence() {
        let src = format!(
            "{BUNDLE}function addMore(text, meta) {{\n  registered.push({{ source: \"built-in\", script: text }});\n}}\n"
        );
        let r = locate(&src);
        let reg = r.first(Role::WorkflowRegistrar).unwrap();
        assert_eq!(reg.confidence, Confidence::Medium);
        assert!(reg.evidence[0].ends_with("(2 candidate(s))"));
    }

    #[test]
    fn a_builder_passes_a_workflow_script_template() {
        for (from, to) in [
            // Not a script: no `export const meta` at its start.
            ("addFlow(`export const meta", "addFlow(`const meta"),
            // A plain string, not a template.
            (
                "addFlow(`export const meta = { name: \"other\" }\n`",
                "addFlow(\"export const meta = { name: 'other' }\"",
            ),
        ] {
            let r = without(from, to);
            let builders: Vec<_> = r.get(Role::WorkflowBuilder).collect();
            assert!(
                builders
                    .iter()
                    .all(|b| b.workflow.as_deref() == Some("code-review")),
                "{from}: {builders:#?}"
            );
            assert!(builders.len() < 2, "{from}");
        }
        let r = without("addFlow(`export const meta", "addFlow(`const meta");
        assert_eq!(
            reason(&r, Role::WorkflowBuilder),
            "the registrar is never called with a workflow script"
        );
        assert_eq!(
            reason(&r, Role::WorkflowsInit),
            "no function calls the builders"
        );
    }

    #[test]
    fn init_calls_the_builders_without_arguments() {
        let r = without("makeReview(), makeOther();", "makeReview(1), makeOther(1);");
        assert_eq!(
            reason(&r, Role::WorkflowsInit),
            "no function calls the builders"
        );
        // Calling only some of them: still the init, with less confidence.
        let r = without("makeReview(), makeOther();", "makeReview();");
        let init = r.first(Role::WorkflowsInit).unwrap();
        assert_eq!(init.confidence, Confidence::Medium);
        assert_eq!(init.evidence, ["calls 1 of 2 builders"]);
    }

    #[test]
    fn the_lookup_searches_the_registrars_list_by_name() {
        const ABSENT: &str = "no function searches the registered workflows by name";
        // Searches by another key.
        let r = without("(w) => w.name === n", "(w) => w.id === n");
        assert_eq!(reason(&r, Role::WorkflowLookup), ABSENT);
        // Searches a list that is not the registrar's.
        let r = without("return registered;", "return [];");
        assert_eq!(reason(&r, Role::WorkflowLookup), ABSENT);
        // Too large to be the lookup.
        let pad = format!("/*{}*/", "x".repeat(MAX_LOOKUP_BYTES as usize));
        let r = without(
            "return flows().find(",
            &format!("{pad} return flows().find("),
        );
        assert_eq!(reason(&r, Role::WorkflowLookup), ABSENT);
    }

    #[test]
    fn the_lookup_through_a_wrapper_and_a_filtered_copy() {
        let r = without(
            "async function byName(n) {\n  return flows().find(",
            "var copy = (async () => [...flows()]);\nasync function byName(n) {\n  return (await copy()).find(",
        );
        let l = r.first(Role::WorkflowLookup).unwrap();
        assert_eq!(l.name.as_deref(), Some("byName"));
        assert_eq!(
            l.evidence[1],
            "copy() → flows() returns the registrar's list registered"
        );
        let r = without(
            "return registered;",
            "return registered.filter((w) => !w.off);",
        );
        let l = r.first(Role::WorkflowLookup).unwrap();
        assert_eq!(
            l.evidence[1],
            "flows() returns a filtered copy of the registrar's list registered"
        );
    }

    #[test]
    fn review_instructions_name_the_code_review_workflow_through_its_binding() {
        let r = without(r#"var RN = "code-review";"#, r#"var RN = "code-check";"#);
        assert_eq!(
            reason(&r, Role::ReviewInstructions),
            "no code-review workflow in this build"
        );
        assert_eq!(
            reason(&r, Role::ReviewRoutingGate),
            "no code-review workflow in this build"
        );
        let r = without(
            r#"{ name: RN, description: "reviews" }"#,
            r#"{ name: "code-review", description: "reviews" }"#,
        );
        assert_eq!(
            reason(&r, Role::ReviewInstructions),
            "the code-review builder's meta.name is not a binding"
        );
        assert_eq!(
            reason(&r, Role::ReviewRoutingGate),
            "no review instructions found"
        );
        // The template invokes a workflow, but not by the binding.
        let r = without("name: ${js(RN)}", "name: ${js(level)}");
        assert_eq!(
            reason(&r, Role::ReviewInstructions),
            "no template invokes the code-review workflow by name"
        );
        // The binding, but not in an invocation `({ name: …, args: … })`.
        let r = without("args: ${js(level)}", "level: ${js(level)}");
        assert_eq!(
            reason(&r, Role::ReviewInstructions),
            "no template invokes the code-review workflow by name"
        );
    }

    #[test]
    fn the_routing_gate_checks_the_levels_and_returns_a_flag() {
        const ABSENT: &str =
            "no function beside the instructions checks the levels and returns a flag";
        for (from, to) in [
            // A level missing.
            (r#" && level !== "max""#, ""),
            // A flag read, but not returned.
            (
                r#"return fl("tengu_demo_route", !1);"#,
                r#"let on = fl("tengu_demo_route", !1); return on;"#,
            ),
            // No flag.
            (r#""tengu_demo_route""#, r#""demo_route""#),
        ] {
            let r = without(from, to);
            assert_eq!(reason(&r, Role::ReviewRoutingGate), ABSENT, "{from}");
            assert!(r.first(Role::ReviewInstructions).is_some(), "{from}");
        }
        // Not called by the instructions: found, with less confidence.
        let r = without("if (routed(level))", "if (level)");
        let g = r.first(Role::ReviewRoutingGate).unwrap();
        assert_eq!(g.confidence, Confidence::Medium);
        assert_eq!(g.evidence.len(), 2);
    }

    #[test]
    fn the_roles_lead_to_the_workflow_gates() {
        let ci = testjs::script(BUNDLE);
        let locator = Locator::new(&ci, &[]);
        let roles = locator.locate();
        let workflows = crate::analysis::workflows::bundled(&ci, &roles, &locator);
        let gates = crate::analysis::gates::discover(&ci, &roles, &workflows, &Default::default());
        let found: Vec<(String, Option<&str>)> = gates
            .iter()
            .map(|g| (g.role.to_string(), g.function.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("review-routing-gate".to_string(), Some("routed")),
                (
                    "workflow option other.disableModelInvocation".to_string(),
                    Some("otherOff")
                ),
            ]
        );
    }

    #[test]
    fn aliases_follow_imports_across_chunks() {
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-reg.js",
                "function r(a, b) { return a + b; }\nexport { r as register };",
            ),
            (
                "/$bunfs/root/chunk-use.js",
                "import { register as q } from \"./chunk-reg.js\";\nq(1, 2);",
            ),
            (
                "/$bunfs/root/chunk-other.js",
                "import { register as z } from \"./chunk-elsewhere.js\";\nz();",
            ),
        ]);
        let reg = testjs::module(&ci, "chunk-reg.js");
        let uses = testjs::module(&ci, "chunk-use.js");
        assert_eq!(
            aliases(&ci, reg, "r"),
            [(reg, "r".to_string()), (uses, "q".to_string())]
        );
        // A name nobody exports has only itself.
        assert_eq!(aliases(&ci, uses, "q"), [(uses, "q".to_string())]);
    }

    #[test]
    fn call_re_matches_calls_not_methods_or_longer_names() {
        let re = call_re("f");
        assert!(re.is_match("f()"));
        assert!(re.is_match("x = f(1)"));
        assert!(re.is_match("[...f()]"));
        assert!(!re.is_match("o.f()"));
        assert!(!re.is_match("gf()"));
        assert!(!re.is_match("f$()"));
    }

    #[test]
    fn lists_in_words() {
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(and_list(ROUTED_LEVELS), "high, xhigh and max");
    }
}
