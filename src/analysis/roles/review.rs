//! The review roles: the /code-review instructions (the template that
//! invokes the code-review workflow by name) and the routing gate they
//! consult.

use super::{Confidence, Locator, Role, Roles, aliases, and_list, call_re, fn_source};
use crate::analysis::flags::is_flag_name;
use crate::analysis::workflows::ROUTED_LEVELS;
use crate::js::index::{FnId, LitKind};
use regex::Regex;
use std::collections::HashMap;

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

impl Locator<'_> {
    /// The /code-review instructions and the routing gate they consult.
    pub(super) fn review_roles(&self, roles: &mut Roles, review_builder: Option<(usize, FnId)>) {
        let Some((bm, bid)) = review_builder else {
            roles.mark_absent(
                Role::ReviewInstructions,
                "no code-review workflow in this build",
            );
            roles.mark_absent(
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
            roles.mark_absent(
                Role::ReviewInstructions,
                "the code-review builder's meta.name is not a binding",
            );
            roles.mark_absent(Role::ReviewRoutingGate, "no review instructions found");
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
            roles.mark_absent(
                Role::ReviewInstructions,
                "no template invokes the code-review workflow by name",
            );
            roles.mark_absent(Role::ReviewRoutingGate, "no review instructions found");
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
                by_function.entry(f).or_default().push(&*s.value);
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
            None => roles.mark_absent(
                Role::ReviewRoutingGate,
                "no function beside the instructions checks the levels and returns a flag",
            ),
        }
    }
}
