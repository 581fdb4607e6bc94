
use super::*;
use crate::analysis::roles::{Confidence, RoleFunction};
use crate::bun::BunGraph;
use crate::bun::decode::Budget;
use crate::js::code::Depth;

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
