//! The JavaScript layer: parsing, printing, line maps, the index, symbols
//! and grep — on synthetic code written here and on real builds.

use crate::common;

use cc_teardown::bun::{Budget, BunGraph};
use cc_teardown::js::code::CodeIndex;
use cc_teardown::js::parse::{self, Goal};
use cc_teardown::js::{print, symbols};
use common::*;
use swc_ecma_ast::{Str, Tpl};
use swc_ecma_visit::{Visit, VisitWith};

/// Every string value and cooked template part, in source order.
#[derive(Default)]
struct Strings(Vec<String>);

impl Visit for Strings {
    fn visit_str(&mut self, n: &Str) {
        self.0.push(format!("s:{:?}", n.value));
    }
    fn visit_tpl(&mut self, n: &Tpl) {
        for q in &n.quasis {
            self.0.push(format!("t:{:?}", q.cooked));
        }
        n.visit_children_with(self);
    }
}

fn strings_of(src: &str, goal: Goal) -> Vec<String> {
    let (p, _) = parse::parse("x.js", src.to_string(), goal).unwrap();
    let mut v = Strings::default();
    p.program.visit_with(&mut v);
    v.0
}

fn round_trip(src: &str, goal: Goal) -> (Vec<String>, Vec<String>, String) {
    parse::with_big_stack(|| {
        let (p, c) = parse::parse("x.js", src.to_string(), goal).unwrap();
        let printed = print::print(&p, &c).unwrap();
        let before = strings_of(src, goal);
        let after = strings_of(&printed.code, p.goal);
        (before, after, printed.code)
    })
}

const SAMPLE: &str = r#"// @bun @pragma-of-our-own
(function(exports, require) {
var a = "tab\there \u2192 arrow", b = 'q"uote', lazy = init(() => { c = `multi
line ${a} and \u2192`; d = { label: `angle-${"ABCDE"[1]}`, text: "x" }; });
function builder() { return register(`export const meta = {
  name: ${JSON.stringify(a)},
}`, { name: "n", phases: [{ title: "Scope" }] }, { hidden: true }); }
tt(ns, { initThings: () => builder, other: () => a });
})"#;

#[test]
fn strings_survive_printing_exactly() {
    let (before, after, code) = round_trip(SAMPLE, Goal::Script);
    assert!(before.len() >= 10, "{before:?}");
    assert_eq!(before, after);
    assert!(
        code.lines().count() > SAMPLE.lines().count(),
        "one statement per line"
    );
}

#[test]
fn index_finds_functions_definitions_and_export_tables() {
    let (p, _) = parse::parse("x.js", SAMPLE.to_string(), Goal::Script).unwrap();
    let idx = cc_teardown::js::index::ModuleIndex::build(&p);
    let (_, builder) = idx
        .functions_named("builder")
        .next()
        .expect("builder indexed");
    assert_eq!(
        &SAMPLE[builder.lo as usize..builder.lo as usize + 8],
        "function"
    );
    // c and d are assigned inside a lazy-init closure: both are definitions.
    for name in ["a", "b", "c", "d", "lazy"] {
        assert!(
            idx.definitions.contains_key(name),
            "{name} has a definition"
        );
    }
    // …inside the arrow passed to init(), which lies in lazy's value.
    let lazy_value = idx.definitions["lazy"][0].value.unwrap();
    let c_def = &idx.definitions["c"][0];
    let closure = &idx.functions[c_def.in_function.expect("c is assigned in a closure") as usize];
    assert_eq!(closure.kind, cc_teardown::js::index::FnKind::Arrow);
    assert!(lazy_value.0 < closure.lo && closure.hi <= lazy_value.1);
    let originals: Vec<_> = idx
        .export_table
        .iter()
        .map(|e| (e.original.as_str(), e.local.as_str()))
        .collect();
    assert_eq!(originals, vec![("initThings", "builder"), ("other", "a")]);
    assert!(
        idx.strings
            .iter()
            .any(|s| s.value.contains("tab\there → arrow")),
        "cooked values"
    );
    assert!(
        idx.calls
            .iter()
            .any(|c| c.name == "register" && c.args == 3)
    );
    assert!(idx.calls.iter().any(|c| c.name == "stringify" && c.member));
    // The enclosing function of the template inside builder is builder.
    let tpl = idx
        .strings
        .iter()
        .find(|s| s.value.starts_with("export const meta"))
        .unwrap();
    let f = idx.enclosing_function(tpl.lo).unwrap();
    assert_eq!(idx.functions[f as usize].name.as_deref(), Some("builder"));
}

#[test]
fn code_split_symbols_and_links() {
    let chunk_a = br#"import { h as helper } from "/$bunfs/root/chunk-bbbb.js";
var v = () => helper();
export { v as initBundledThings };"#;
    let chunk_b = br#"function h() { return "from b"; }
export { h };"#;
    let entry = br#"import "/$bunfs/root/chunk-aaaa.js";
var x = import.meta.require("/$bunfs/root/chunk-aaaa.js").initBundledThings();"#;
    let payload = build_payload(
        &[
            Spec::js("/$bunfs/root/chunk-aaaa.js", chunk_a),
            Spec::js("/$bunfs/root/chunk-bbbb.js", chunk_b),
            Spec::js("/$bunfs/root/cli", entry),
        ],
        2,
    );
    let g = BunGraph::parse(&payload).unwrap();
    let ci = parse::with_big_stack(|| CodeIndex::build(&g, &Budget::new(1 << 20))).unwrap();
    assert_eq!(ci.modules.len(), 3);
    let syms = symbols::recover(&ci);
    let s = syms
        .iter()
        .find(|s| s.original == "initBundledThings")
        .unwrap();
    assert_eq!(
        (s.minified.as_str(), s.module.as_str(), s.line),
        ("v", "/$bunfs/root/chunk-aaaa.js", 2)
    );
    let links = symbols::link(&ci, Some("/$bunfs/root/chunk-aaaa.js"));
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].from, "/$bunfs/root/chunk-bbbb.js");
    assert_eq!(links[0].resolved.as_deref(), Some("h"));
    assert_eq!(links[0].definition_line, Some(1));
    let req = symbols::link(&ci, Some("/$bunfs/root/cli"));
    assert!(
        req.iter()
            .any(|l| l.imported == "initBundledThings" && l.resolved.as_deref() == Some("v"))
    );
}

#[test]
fn grep_matches_cooked_values_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cli.js");
    std::fs::write(&p, SAMPLE).unwrap();
    let v = json(&["grep", p.to_str().unwrap(), "→"]);
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(
        hits.len(),
        2,
        "the \\u2192 escapes in a string and a template: {v}"
    );
    assert_eq!(hits[0]["raw_line"], 3);
    assert_eq!(hits[1]["kind"], "template");
    let v = json(&[
        "grep",
        p.to_str().unwrap(),
        "initThings",
        "--scope",
        "identifiers",
    ]);
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{v}");
    assert_eq!(hits[0]["excerpt"], "builder [initThings]");
    let out = bin()
        .args([
            "grep",
            p.to_str().unwrap(),
            "Scope",
            "-C",
            "1",
            "--color",
            "never",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("in builder") && text.contains(">"), "{text}");
}

#[test]
fn pretty_at_translates_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cli.js");
    std::fs::write(&p, SAMPLE).unwrap();
    let v = json(&["pretty", p.to_str().unwrap(), "--at", "5"]);
    let pretty_line = v["pretty_line"].as_u64().unwrap() as u32;
    let out = bin()
        .args(["pretty", p.to_str().unwrap()])
        .output()
        .unwrap();
    let code = String::from_utf8(out.stdout).unwrap();
    let line = code.lines().nth(pretty_line as usize - 1).unwrap();
    assert!(line.contains("function builder"), "{line}");
    let back = json(&[
        "pretty",
        p.to_str().unwrap(),
        "--at-pretty",
        &pretty_line.to_string(),
    ]);
    assert_eq!(back["raw_line"], 5);
    let out_file = dir.path().join("out.js");
    bin()
        .args([
            "pretty",
            p.to_str().unwrap(),
            "-o",
            out_file.to_str().unwrap(),
        ])
        .assert()
        .success();
    let map: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out.js.linemap.json")).unwrap())
            .unwrap();
    assert_eq!(map["format"], "cc-teardown-linemap/1");
    assert_eq!(
        map["pretty_lines"].as_u64().unwrap() as usize,
        code.lines().count()
    );
}
