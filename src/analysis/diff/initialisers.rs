//! Lazy module initialisers: Bun and esbuild wrap a module's body in
//! `var X = init(() => { …; Y = [ … ]; Z = function () { … }; })`, the
//! module's bindings declared at its level and assigned inside. Such a
//! closure is one function unit without a name of its own; a changed one
//! is placed by the binding it is bound to (`within`), the bindings its
//! changed lines assign (`assigns`) and the located roles that read them.
//! The helper's name differs from build to build: the shape is what is
//! recognised.

use super::code::CodeFacts;
use super::functions::{ChangedFunction, FunctionDiff, FunctionRef, Unit, text_of};
use super::lines;
use crate::analysis::roles::{Role, Roles};
use crate::js::code::IndexedModule;
use crate::js::index::{DefKind, FnKind, Function};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// A binding assigned by the changed lines of an initialiser.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assigned {
    /// The minified name.
    pub name: String,
    /// The original name, when the build reveals it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// The located roles (`roles`) of the same module whose code names the
    /// binding: known when the diff has this side's facts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_by: Vec<Role>,
    /// A binding of the module ([`Member::outer`]): only such a one is
    /// looked for in the roles' code.
    #[serde(skip)]
    pub outer: bool,
}

/// How many assigned bindings a place names; the rest are counted (an
/// initialiser of a schema library assigns hundreds in one statement, and
/// a label is a line; the JSON lists them all).
const NAMED: usize = 4;

/// An initialiser's place in words: `in X, assigns Y (original), Z (read
/// by workflow-registrar)`, at most [`NAMED`] bindings then `and N more`;
/// None when it is no initialiser.
pub fn place(within: Option<&str>, assigns: &[Assigned]) -> Option<String> {
    use std::fmt::Write;
    let mut s = format!("in {}", within?);
    for (i, a) in assigns.iter().take(NAMED).enumerate() {
        s.push_str(if i == 0 { ", assigns " } else { ", " });
        s.push_str(&a.name);
        let mut notes = Vec::new();
        if let Some(o) = &a.original {
            notes.push(o.clone());
        }
        if !a.read_by.is_empty() {
            let roles: Vec<&str> = a.read_by.iter().map(|r| r.as_str()).collect();
            notes.push(format!("read by {}", roles.join(", ")));
        }
        if !notes.is_empty() {
            let _ = write!(s, " ({})", notes.join("; "));
        }
    }
    if assigns.len() > NAMED {
        let _ = write!(s, " and {} more", assigns.len() - NAMED);
    }
    Some(s)
}

/// A unit that is the single argument of a call bound to a name,
/// `var X = init(() => { …; Y = [ … ]; })`: a lazy module initialiser (its
/// helper's name differs from build to build; the shape is what is
/// recognised).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Initialiser {
    /// X: the binding the call's result is bound to.
    pub binding: String,
    /// The bindings its body assigns or declares at its own level (not
    /// within functions nested in it; of definitions nested in one
    /// another, the outermost), in source order.
    pub members: Vec<Member>,
}

/// A binding an initialiser assigns or declares, and the lines doing it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// The original name, when the build reveals it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// The lines of the assignment (target and value), counted from the
    /// unit's first pretty line (0): `first..=last`.
    pub first: u32,
    pub last: u32,
    /// Declared at the level the initialiser is at (a module's binding the
    /// initialiser assigns), not inside it: only such a binding can be
    /// read by code elsewhere in the module.
    #[serde(default)]
    pub outer: bool,
}

impl Initialiser {
    /// The members whose lines meet `changed` (line ranges counted from the
    /// unit's first line; an empty range `i..i`, lines added or removed
    /// before line `i`, meets a member spanning lines `i - 1` and `i`), each
    /// once, in source order.
    pub(super) fn assigned(&self, changed: &[Range<usize>]) -> Vec<Assigned> {
        let mut seen = HashSet::new();
        let meets = |m: &Member, r: &Range<usize>| {
            let (first, last) = (m.first as usize, m.last as usize);
            if r.is_empty() {
                first < r.start && last >= r.start
            } else {
                first < r.end && last >= r.start
            }
        };
        self.members
            .iter()
            .filter(|m| changed.iter().any(|r| meets(m, r)))
            .filter(|m| seen.insert(m.name.as_str()))
            .map(|m| Assigned {
                name: m.name.clone(),
                original: m.original.clone(),
                read_by: Vec::new(),
                outer: m.outer,
            })
            .collect()
    }
}

/// Recognise the units that are lazy module initialisers, `var X =
/// init(() => { … })` (or `X = init(…)`), and record their binding and
/// members. `slot` maps a function to its unit.
pub(super) fn find(
    m: &IndexedModule,
    fns: &[Function],
    slot: &HashMap<usize, usize>,
    units: &mut [Unit],
    originals: &HashMap<(&str, &str), &str>,
) {
    // Units that can be a call's argument, by span.
    let by_span: HashMap<(u32, u32), usize> = slot
        .keys()
        .filter(|&&i| matches!(fns[i].kind, FnKind::Arrow | FnKind::Expression))
        .map(|&i| ((fns[i].lo, fns[i].hi), i))
        .collect();
    if by_span.is_empty() {
        return;
    }
    // Calls of a plain identifier with that unit as their only argument.
    let call_of: HashMap<(u32, u32), usize> = m
        .index
        .calls
        .iter()
        .filter(|c| c.args == 1 && !c.member)
        .filter_map(|c| {
            let a = c.arg0.as_ref()?;
            by_span.get(&(a.lo, a.hi)).map(|&f| ((c.lo, c.hi), f))
        })
        .collect();
    if call_of.is_empty() {
        return;
    }
    // The names those calls' results are bound to.
    let mut binding: HashMap<usize, &str> = HashMap::new();
    for (name, defs) in &m.index.definitions {
        for d in defs {
            if matches!(
                d.kind,
                DefKind::Var | DefKind::Let | DefKind::Const | DefKind::Assign
            ) && let Some(f) = d.value.and_then(|v| call_of.get(&v))
            {
                binding.entry(*f).or_insert(name);
            }
        }
    }
    if binding.is_empty() {
        return;
    }
    // What each initialiser's body assigns or declares at its own level:
    // (start, end, name) of each definition in it, by byte.
    let mut found: HashMap<usize, Vec<(u32, u32, &str)>> = HashMap::new();
    for (name, defs) in &m.index.definitions {
        for d in defs {
            let Some(f) = d.in_function.map(|f| f as usize) else {
                continue;
            };
            if matches!(d.kind, DefKind::Param | DefKind::Import) || !binding.contains_key(&f) {
                continue;
            }
            let start = d.value.map_or(d.lo, |v| v.0.min(d.lo));
            let end = d.value.map_or(d.hi, |v| v.1.max(d.hi));
            found.entry(f).or_default().push((start, end, name));
        }
    }
    for (f, name) in binding {
        let mut spans = found.remove(&f).unwrap_or_default();
        spans.sort_by(|x, y| {
            (x.0, std::cmp::Reverse(x.1), x.2).cmp(&(y.0, std::cmp::Reverse(y.1), y.2))
        });
        let top = units[slot[&f]].pretty_line;
        let mut list: Vec<Member> = Vec::new();
        let mut reach = 0u32;
        for (start, end, member) in spans {
            // Only the outermost: `Y = Z = …` is Y's statement, and a
            // definition inside a member's value (a local of a class's
            // constructor, which the index counts as the initialiser's) is
            // no binding of the initialiser.
            if start < reach {
                continue;
            }
            reach = end;
            let (Some(first), Some(last)) = (
                m.pretty_line(start).checked_sub(top),
                m.pretty_line(end.saturating_sub(1).max(start))
                    .checked_sub(top),
            ) else {
                continue;
            };
            // Declared where the initialiser is (the module's level), not
            // inside it: a binding code elsewhere in the module can read.
            let outer = m.index.definitions.get(member).is_some_and(|defs| {
                defs.iter().any(|d| {
                    d.in_function == fns[f].parent
                        && !matches!(d.kind, DefKind::Assign | DefKind::Param)
                })
            });
            list.push(Member {
                name: member.to_string(),
                original: originals
                    .get(&(m.name.as_str(), member))
                    .map(|s| s.to_string()),
                first,
                last: last.max(first),
                outer,
            });
        }
        units[slot[&f]].init = Some(Initialiser {
            binding: name.to_string(),
            members: list,
        });
    }
}

/// The identifiers each located role's code names, with its module: read
/// from the pretty text of the unit holding it.
fn role_names(cf: &CodeFacts, roles: &Roles) -> Vec<(Role, String, HashSet<String>)> {
    let mut out = Vec::new();
    for r in &roles.functions {
        let holder = cf.units.iter().find(|u| {
            cf.modules.get(u.module as usize) == Some(&r.module)
                && u.pretty_line <= r.pretty_start
                && r.pretty_end < u.pretty_line + u.pretty_lines
        });
        let Some(u) = holder else { continue };
        let from = (r.pretty_start - u.pretty_line) as usize;
        let count = (r.pretty_end - r.pretty_start) as usize + 1;
        let text: Vec<&str> = text_of(cf, u).lines().skip(from).take(count).collect();
        let names = lines::erase_names(&text.join("\n"))
            .1
            .into_iter()
            .map(str::to_string)
            .collect();
        out.push((r.role, r.module.clone(), names));
    }
    out
}

/// Whether a changed initialiser assigns a binding of its module: one the
/// roles could read.
pub fn any_to_read(d: &FunctionDiff) -> bool {
    d.changed
        .iter()
        .any(|c| c.a.assigns.iter().chain(&c.b.assigns).any(|x| x.outer))
}

/// Fill in which located roles name the bindings the changed initialisers
/// assign, on each side whose roles are known (with its code facts).
pub fn name_readers(
    d: &mut FunctionDiff,
    a: Option<(&CodeFacts, &Roles)>,
    b: Option<(&CodeFacts, &Roles)>,
) {
    let any = |side: fn(&ChangedFunction) -> &FunctionRef| {
        d.changed.iter().any(|c| !side(c).assigns.is_empty())
    };
    let names = |s: Option<(&CodeFacts, &Roles)>, wanted: bool| {
        s.filter(|_| wanted).map(|(cf, r)| role_names(cf, r))
    };
    let (na, nb) = (names(a, any(|c| &c.a)), names(b, any(|c| &c.b)));
    let fill = |r: &mut FunctionRef, names: &[(Role, String, HashSet<String>)]| {
        for x in r.assigns.iter_mut().filter(|x| x.outer) {
            for (role, module, used) in names {
                if *module == r.module && used.contains(&x.name) && !x.read_by.contains(role) {
                    x.read_by.push(*role);
                }
            }
        }
    };
    for c in &mut d.changed {
        if let Some(n) = &na {
            fill(&mut c.a, n);
        }
        if let Some(n) = &nb {
            fill(&mut c.b, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_names_a_few_bindings_and_counts_the_rest() {
        let a = |n: &str| Assigned {
            name: n.into(),
            original: None,
            read_by: Vec::new(),
            outer: true,
        };
        let six: Vec<Assigned> = ["a", "b", "c", "d", "e", "f"].map(a).into();
        assert_eq!(
            place(Some("X"), &six).as_deref(),
            Some("in X, assigns a, b, c, d and 2 more")
        );
        assert_eq!(
            place(Some("X"), &six[..1]).as_deref(),
            Some("in X, assigns a")
        );
        assert_eq!(place(None, &six), None);
    }
    use crate::analysis::diff::functions::{FunctionDiff, Unit, diff};
    use crate::analysis::roles::{Confidence, RoleFunction};
    use crate::bun::BunGraph;
    use crate::bun::decode::Budget;
    use crate::js::code::{CodeIndex, Depth};

    /// The code facts of one script, with function shapes (so with units).
    fn facts(src: &str) -> CodeFacts {
        let g = BunGraph::single_js("/$bunfs/root/cli.js", src.as_bytes());
        let budget = Budget::new(1 << 20);
        let ci = crate::js::parse::with_big_stack(|| {
            CodeIndex::build_filtered(&g, &budget, |_| true, Depth::Shapes)
        })
        .expect("test JS parses");
        CodeFacts::compute(&ci, &crate::js::symbols::recover(&ci))
    }

    fn diff_of(a: &str, b: &str) -> FunctionDiff {
        diff(&facts(a), &facts(b), &lines::DiffBudget::default())
    }

    fn names(v: &[Assigned]) -> Vec<&str> {
        v.iter().map(|a| a.name.as_str()).collect()
    }

    // The rest of the module, the same in both builds (a closure spanning
    // half a module or more is taken for a CommonJS wrapper, not a unit).
    macro_rules! bulk {
        () => {
            r#"
function countWords(text) {
  return text.split(" ").filter((w) => w.length > 0).length;
}
function shout(text) {
  return text.toUpperCase() + "!".repeat(countWords(text));
}
function whisper(text) {
  return text.toLowerCase().replace(/!/g, ".") + " (quietly)";
}
function pad(text, width) {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}
"#
        };
    }

    // A lazy module initialiser as bundlers write it: the module's
    // bindings declared at the top, assigned inside a closure handed to a
    // helper whose name changes with every build (`mk` here, `qz` below).
    const OLD: &str = concat!(
        r#"
var mk = (fn, res) => () => (fn && (res = fn(fn = 0)), res);
var colours, paint, sizes;
var initShop = mk(() => {
  prepareShop();
  colours = ["red", "green", "blue"];
  paint = function (thing, how) {
    return thing.coat(how, colours.length, "gloss");
  };
  sizes = { small: 1, large: 3 };
});
function prepareShop() {
  return globalThis.shopReady = "ready, steady, go";
}
"#,
        bulk!()
    );

    // The same build renamed, with one word of one list changed.
    const NEW_LIST: &str = concat!(
        r#"
var qz = (fn, res) => () => (fn && (res = fn(fn = 0)), res);
var Ab, Cd, Ef;
var Gh = qz(() => {
  Ij();
  Ab = ["red", "yellow", "blue"];
  Cd = function (thing, how) {
    return thing.coat(how, Ab.length, "gloss");
  };
  Ef = { small: 1, large: 3 };
});
function Ij() {
  return globalThis.shopReady = "ready, steady, go";
}
"#,
        bulk!()
    );

    #[test]
    fn an_edit_inside_a_lazy_initialiser_names_its_binding_and_what_it_assigns() {
        let d = diff_of(OLD, NEW_LIST);
        assert_eq!(d.changed.len(), 1, "{d:#?}");
        let c = &d.changed[0];
        assert_eq!((c.a.name.as_deref(), c.b.name.as_deref()), (None, None));
        assert_eq!(c.a.within.as_deref(), Some("initShop"));
        assert_eq!(c.b.within.as_deref(), Some("Gh"));
        assert_eq!(names(&c.a.assigns), ["colours"]);
        assert_eq!(names(&c.b.assigns), ["Ab"]);
        assert_eq!(c.b.place().as_deref(), Some("in Gh, assigns Ab"));
        // The JSON says it too; `name` stays null.
        let j = serde_json::to_value(c).unwrap();
        assert_eq!(j["b"]["name"], serde_json::Value::Null);
        assert_eq!(j["b"]["within"], "Gh");
        assert_eq!(j["b"]["assigns"][0]["name"], "Ab");
        assert!(j["b"]["assigns"][0].get("read_by").is_none());
    }

    #[test]
    fn an_edit_in_a_function_an_initialiser_assigns_names_that_binding() {
        let new = OLD.replace("\"gloss\"", "\"matt\"");
        let d = diff_of(OLD, &new);
        assert_eq!(d.changed.len(), 1, "{d:#?}");
        assert_eq!(names(&d.changed[0].a.assigns), ["paint"]);
        assert_eq!(names(&d.changed[0].b.assigns), ["paint"]);
        // Two statements edited: both named, in source order.
        let new = new.replace("large: 3", "large: 4");
        let d = diff_of(OLD, &new);
        assert_eq!(names(&d.changed[0].b.assigns), ["paint", "sizes"]);
        // A word added to the list: lines added inside `colours = [ … ]`
        // place it on side a too; a word removed, on side b.
        let longer = OLD.replace("\"green\",", "\"green\", \"violet\",");
        let d = diff_of(OLD, &longer);
        assert_eq!(
            (d.changed[0].lines_added, d.changed[0].lines_removed),
            (1, 0)
        );
        assert_eq!(names(&d.changed[0].a.assigns), ["colours"]);
        assert_eq!(names(&d.changed[0].b.assigns), ["colours"]);
        let d = diff_of(&longer, OLD);
        assert_eq!(names(&d.changed[0].a.assigns), ["colours"]);
        assert_eq!(names(&d.changed[0].b.assigns), ["colours"]);
        // A statement that assigns nothing: the initialiser alone.
        let new = OLD.replace("  prepareShop();\n", "  prepareShop();\n  prepareShop();\n");
        let d = diff_of(OLD, &new);
        assert_eq!(d.changed.len(), 1, "{d:#?}");
        assert!(d.changed[0].a.assigns.is_empty() && d.changed[0].b.assigns.is_empty());
        assert_eq!(d.changed[0].b.place().as_deref(), Some("in initShop"));
    }

    #[test]
    fn other_calls_taking_a_function_are_no_initialisers() {
        // Two arguments, and a method's callback: no binding to name.
        let old = r#"
var later = setTimeout(() => {
  globalThis.tick = ["one", "two", "three"].join("-");
}, 10);
var mapped = [1, 2, 3].map((n) => {
  return n * 2 + globalThis.offset - "four".length;
});
"#;
        let new = old.replace("\"two\"", "\"deux\"").replace("* 2", "* 3");
        let d = diff_of(old, &new);
        assert_eq!(d.changed.len(), 2, "{d:#?}");
        for c in &d.changed {
            assert_eq!(c.b.within, None);
            assert!(c.b.assigns.is_empty());
            assert_eq!(c.b.place(), None);
        }
    }

    #[test]
    fn a_located_role_that_reads_the_assigned_binding_is_named() {
        let reader = "\nfunction readsList(x) {\n  return Ab.concat([x, \"tail\", \"end\"]);\n}\n";
        let (a, b) = (facts(OLD), facts(&format!("{NEW_LIST}{reader}")));
        let mut d = diff(&a, &b, &lines::DiffBudget::default());
        let unit = |name: &str| {
            b.units
                .iter()
                .find(|u| u.name.as_deref() == Some(name))
                .expect("a unit")
        };
        let role = |r: Role, u: &Unit| RoleFunction {
            role: r,
            name: u.name.clone(),
            original: None,
            module: "/$bunfs/root/cli.js".into(),
            raw_start: 0,
            raw_end: 0,
            pretty_start: u.pretty_line,
            pretty_end: u.pretty_line + u.pretty_lines - 1,
            workflow: None,
            evidence: Vec::new(),
            confidence: Confidence::High,
            module_index: 0,
            function: 0,
        };
        // A role that names `Ab`, and one that does not.
        let roles = Roles {
            functions: vec![
                role(Role::WorkflowLookup, unit("readsList")),
                role(Role::WorkflowRegistrar, unit("shout")),
            ],
            absent: Vec::new(),
        };
        name_readers(&mut d, None, Some((&b, &roles)));
        let c = d.changed.iter().find(|c| c.b.within.is_some()).unwrap();
        assert_eq!(c.b.assigns[0].read_by, [Role::WorkflowLookup]);
        assert_eq!(
            c.b.place().as_deref(),
            Some("in Gh, assigns Ab (read by workflow-lookup)")
        );
        assert!(c.a.assigns[0].read_by.is_empty(), "side a's roles unknown");
    }

    #[test]
    fn only_an_initialisers_own_statements_are_its_members() {
        // A class's constructor keeps its locals in the initialiser's scope
        // as the index sees it; `first = second = …` is first's statement;
        // `scratch` is declared inside, not at the module's level.
        let src = concat!(
            r#"
var mk = (fn, res) => () => (fn && (res = fn(fn = 0)), res);
var Boat, first, second;
var initFleet = mk(() => {
  Boat = class Boat {
    constructor(name) {
      let hull = name.length, mast = hull * 2;
      this.size = hull + mast;
    }
  };
  first = second = ["sloop", "ketch", "yawl"];
  var scratch = new Boat("dinghy");
});
"#,
            bulk!()
        );
        let f = facts(src);
        let init = f.units.iter().find_map(|u| u.init.as_ref()).unwrap();
        let members: Vec<(&str, bool)> = init
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.outer))
            .collect();
        assert_eq!(
            members,
            [("Boat", true), ("first", true), ("scratch", false)]
        );
    }

    #[test]
    fn initialisers_are_stored_with_the_units() {
        let f = facts(OLD);
        let init = f
            .units
            .iter()
            .find_map(|u| u.init.as_ref())
            .expect("one initialiser");
        assert_eq!(init.binding, "initShop");
        let members: Vec<&str> = init.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(members, ["colours", "paint", "sizes"]);
        assert!(init.members.windows(2).all(|w| w[0].last < w[1].first));
        let back: CodeFacts = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back.units, f.units);
    }
}
