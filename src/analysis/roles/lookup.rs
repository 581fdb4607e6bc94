//! The workflow lookup: the function that searches the registered
//! workflows by name, found from the registrar's list through its getter
//! and a few wrappers.

use super::{Confidence, Local, Locator, Role, Roles, aliases, call_re, fn_source};
use crate::js::index::FnId;
use regex::Regex;
use std::collections::HashMap;

/// The function that searches the registered workflows by name.
struct Lookup {
    module: usize,
    function: FnId,
    evidence: Vec<String>,
}

/// The largest function taken for the registrar list's getter
/// (`function list() { return Lst }`, or a filtered copy of it): a getter
/// is a line or two; a big function that mentions the list does more.
const MAX_LIST_GETTER_BYTES: u32 = 400;

/// The largest function taken for the lookup: it is a `.find(…)` over the
/// list and little else. Larger functions with a `.find(x => x.name === …)`
/// are search code of other kinds.
pub(super) const MAX_LOOKUP_BYTES: u32 = 600;

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

impl Locator<'_> {
    /// Lookup: list ← getter of the registrar's array ← `.find(x => x.name === …)`.
    pub(super) fn lookup_role(&self, roles: &mut Roles, rm: usize, rsrc: &str) {
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
            None => roles.mark_absent(
                Role::WorkflowLookup,
                "no function searches the registered workflows by name",
            ),
        }
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
}
