//! The workflow registration roles: the registrar (the function that
//! pushes the built-in workflows onto a list), the builders that call it
//! with a workflow script, and the init that calls the builders.

use super::{ALL_ROLES, Confidence, Locator, Role, RoleFunction, Roles, aliases, fn_source};
use crate::analysis::eval::{Evaluator, parse_snippet};
use crate::js::code::IndexedModule;
use crate::js::index::{FnId, LitKind};
use regex::Regex;
use std::collections::HashMap;

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
pub(super) struct Builder {
    pub(super) module: usize,
    pub(super) function: FnId,
    /// The workflow's `meta.name`, when it evaluates.
    pub(super) workflow: Option<String>,
}

/// A function that calls builders: an init candidate.
struct BuilderCaller {
    module: usize,
    function: FnId,
    /// How many builder calls it makes.
    calls: usize,
}

impl<'a> Locator<'a> {
    /// The registrar: the function that pushes `{source: "built-in", …, script, hidden}`.
    pub fn registrar(&self) -> Vec<Registrar> {
        let shape = Regex::new(r#"source\s*:\s*"built-in""#).unwrap();
        let mut out = Vec::new();
        for (i, m) in self.ci.modules.iter().enumerate() {
            for s in m
                .index
                .strings
                .iter()
                .filter(|s| &*s.value == "built-in" && s.kind == LitKind::String)
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
                        name: f.name.as_deref().unwrap_or_default().to_string(),
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

    /// No registrar: every workflow role is absent (the review roles say
    /// why in their own words).
    pub(super) fn without_registrar(&self, roles: &mut Roles) {
        for role in ALL_ROLES {
            if role == Role::WorkflowRegistrar {
                roles.mark_absent(role, "no function pushes {source: \"built-in\", …, script}");
            } else if matches!(role, Role::ReviewInstructions | Role::ReviewRoutingGate) {
                self.review_roles(roles, None);
                break;
            } else {
                roles.mark_absent(role, "no workflow registrar in this build");
            }
        }
    }

    /// The registrar's role (the first of `regs`, at `rm`/`rid`), less
    /// certain when there are several; its source.
    pub(super) fn registrar_role(
        &self,
        roles: &mut Roles,
        regs: &[Registrar],
        rm: usize,
        rid: FnId,
    ) -> &'a str {
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
        rsrc
    }

    /// Builders: functions that call the registrar with a script template,
    /// each with its workflow's name.
    pub(super) fn builders(&self, rm: usize, rname: &str) -> Vec<Builder> {
        let calls = self.registrar_calls(rm, rname);
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
        builders
    }

    pub(super) fn builder_roles(&self, roles: &mut Roles, builders: &[Builder]) {
        if builders.is_empty() {
            roles.mark_absent(
                Role::WorkflowBuilder,
                "the registrar is never called with a workflow script",
            );
        }
        for b in builders {
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
    }

    /// Init: the function that calls the most builders (every one, when
    /// certain).
    pub(super) fn init_role(&self, roles: &mut Roles, builders: &[Builder]) {
        let mut best: Option<BuilderCaller> = None;
        let mut counts: HashMap<(usize, FnId), usize> = HashMap::new();
        for b in builders {
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
            None => roles.mark_absent(Role::WorkflowsInit, "no function calls the builders"),
        }
    }
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
