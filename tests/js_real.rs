//! The JavaScript layer on real Claude Code builds (downloaded at test time).

use crate::common;

use cc_teardown::bun::{Budget, BunGraph};
use cc_teardown::container::{self, ContainerOptions};
use cc_teardown::js::code::{CodeIndex, Depth};
use cc_teardown::js::index::FnKind;
use cc_teardown::js::parse::{self, Goal};
use cc_teardown::js::{print, symbols};
use common::*;
use swc_ecma_ast::{Str, Tpl};
use swc_ecma_visit::{Visit, VisitWith};

#[derive(Default)]
struct Strings(Vec<swc_atoms::Wtf8Atom>);

impl Visit for Strings {
    fn visit_str(&mut self, n: &Str) {
        self.0.push(n.value.clone());
    }
    fn visit_tpl(&mut self, n: &Tpl) {
        for q in &n.quasis {
            self.0.push(q.cooked.clone().unwrap_or_default());
        }
        n.visit_children_with(self);
    }
}

fn with_graph<T>(version: &str, platform: &str, f: impl FnOnce(&BunGraph) -> T) -> T {
    let path = fetch(version, platform);
    let bytes = std::fs::read(path).unwrap();
    let loc = container::locate(&bytes, &ContainerOptions::default()).unwrap();
    let g = BunGraph::parse(loc.payload).unwrap();
    f(&g)
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_bundle_strings_round_trip_exactly() {
    with_graph("2.1.220", "darwin-arm64", |g| {
        let src = std::str::from_utf8(g.entry_module().contents)
            .unwrap()
            .to_string();
        parse::with_big_stack(|| {
            let (mut p, c) = parse::parse("cli.js", src.clone(), Goal::Script).unwrap();
            let printed = print::print(&p, &c).unwrap();
            // Printing on two cores gives the same bytes and line map.
            let (_, c2) = parse::parse("cli.js", src, Goal::Script).unwrap();
            let split = print::print_split(&mut p, &c2).unwrap();
            assert!(
                split.code == printed.code,
                "split printing differs on the real bundle"
            );
            assert_eq!(
                split.map.pretty_to_raw(427672),
                printed.map.pretty_to_raw(427672)
            );
            let mut before = Strings::default();
            p.program.visit_with(&mut before);
            drop(p);
            let (again, _) = parse::parse("pretty.js", printed.code, Goal::Script).unwrap();
            let mut after = Strings::default();
            again.program.visit_with(&mut after);
            assert!(before.0.len() > 100_000, "{} strings", before.0.len());
            assert_eq!(
                before.0.len(),
                after.0.len(),
                "same number of strings and template parts"
            );
            let first_diff = before.0.iter().zip(&after.0).position(|(a, b)| a != b);
            assert_eq!(
                first_diff, None,
                "every string and cooked template value is identical"
            );
            std::mem::forget(again);
        });
    });
}

/// Every function declaration: its raw offset starts `function`, its pretty
/// line shows `function NAME`, and the pretty line maps back to its raw line.
fn check_line_maps(ci: &CodeIndex) -> usize {
    let mut checked = 0;
    for m in &ci.modules {
        let lines: Vec<&str> = m.printed.code.lines().collect();
        for f in m
            .index
            .functions
            .iter()
            .filter(|f| f.kind == FnKind::Declaration)
        {
            let name = f.name.as_deref().unwrap();
            let src = &m.source()[f.lo as usize..];
            assert!(
                src.starts_with("function") || src.starts_with("async"),
                "{}: {name}",
                m.name
            );
            let pl = m.pretty_line(f.lo);
            let text = lines[pl as usize - 1];
            assert!(
                text.contains(&format!("function {name}("))
                    || text.contains(&format!("function* {name}(")),
                "{} {name}: pretty line {pl} is {text:?}",
                m.name
            );
            let (raw_line, _) = m.printed.map.pretty_to_raw(pl).unwrap();
            assert_eq!(
                raw_line,
                m.raw_pos(f.lo).0,
                "{} {name}: pretty {pl} maps back",
                m.name
            );
            assert_eq!(
                m.printed.map.raw_to_pretty(raw_line, m.raw_pos(f.lo).1),
                Some(pl),
                "{name}"
            );
            checked += 1;
        }
    }
    checked
}

/// The analyses' line maps (`Depth::Lines`, counted without printing)
/// against the printer's own (`Depth::Index`), module by module on three
/// builds: a single bundle and two code-split ones. Equal entries answer
/// every offset alike. The modules go in four shards to keep the peak of
/// holding every printed text twice down.
#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn line_maps_without_printing_equal_the_printers_on_every_module() {
    for (version, at_least) in [("2.1.220", 1), ("2.1.260", 1_400), ("2.1.332", 3_000)] {
        let (compared, lines) = with_graph(version, "darwin-arm64", |g| {
            let budget = Budget::new(1 << 30);
            let (mut compared, mut lines) = (0usize, 0u64);
            for shard in 0..4 {
                let keep = |m: &cc_teardown::bun::Module| m.index % 4 == shard;
                let build = |depth| {
                    parse::with_big_stack(|| CodeIndex::build_filtered(g, &budget, keep, depth))
                        .unwrap()
                };
                let counted = build(Depth::Lines);
                let printed = build(Depth::Index);
                assert_eq!(counted.modules.len(), printed.modules.len());
                for (c, p) in counted.modules.iter().zip(&printed.modules) {
                    assert_eq!(c.name, p.name);
                    assert!(c.printed.code.is_empty());
                    assert!(
                        c.printed
                            .map
                            .same_lookups(&p.printed.map.clone().for_lookups()),
                        "{version} {}: the counted line map differs from the printed one",
                        c.name
                    );
                    compared += 1;
                    lines += u64::from(c.printed.map.pretty_lines);
                }
            }
            (compared, lines)
        });
        assert!(compared >= at_least, "{version}: {compared} modules");
        assert!(lines > 500_000, "{version}: {lines} pretty lines");
    }
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn line_maps_agree_on_both_builds() {
    let n220 = with_graph("2.1.220", "darwin-arm64", |g| {
        let ci = parse::with_big_stack(|| CodeIndex::build(g, &Budget::new(1 << 30))).unwrap();
        check_line_maps(&ci)
    });
    assert!(n220 > 10_000, "{n220} functions checked");
    let n260 = with_graph("2.1.260", "darwin-arm64", |g| {
        let ci = parse::with_big_stack(|| CodeIndex::build(g, &Budget::new(1 << 30))).unwrap();
        assert!(
            ci.modules.len() > 1400,
            "{} chunks indexed",
            ci.modules.len()
        );
        check_line_maps(&ci)
    });
    assert!(n260 > 10_000, "{n260} functions checked");
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn symbols_recover_init_bundled_workflows() {
    let v = json(&[
        "symbols",
        "npm:2.1.220/darwin-arm64",
        "--grep",
        "^initBundledWorkflows$",
    ]);
    let s = &v["symbols"][0];
    assert_eq!(s["original"], "initBundledWorkflows");
    assert_eq!(s["module"], "/$bunfs/root/src/entrypoints/cli.js");
    assert_eq!(
        s["line"], 16614,
        "the teardown's line for the workflows initialiser"
    );
    assert_ne!(s["minified"], "initBundledWorkflows");

    let v = json(&[
        "symbols",
        "npm:2.1.260/darwin-arm64",
        "--grep",
        "^initBundledWorkflows$",
        "--links",
    ]);
    let s = &v["symbols"][0];
    let chunk = s["module"].as_str().unwrap();
    assert!(chunk.starts_with("/$bunfs/root/chunk-"), "{chunk}");
    let links = v["links"].as_array().unwrap();
    assert!(!links.is_empty());
    for l in links {
        assert_eq!(l["module"], chunk);
        assert!(
            l["definition_line"].is_u64(),
            "import resolved to its definition: {l}"
        );
        assert_ne!(l["from"], chunk);
    }
    // The loader that calls it reaches it through import.meta.require.
    with_graph("2.1.260", "darwin-arm64", |g| {
        let ci = parse::with_big_stack(|| CodeIndex::build(g, &Budget::new(1 << 30))).unwrap();
        let all = symbols::link(&ci, None);
        assert!(all.iter().any(|l| l.imported == "initBundledWorkflows"
            && l.from == chunk
            && l.definition_line.is_some()));
    });
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn grep_finds_the_code_review_template() {
    let v = json(&[
        "grep",
        "npm:2.1.220/darwin-arm64",
        "export const meta = {",
        "--scope",
        "strings",
    ]);
    let hits = v["hits"].as_array().unwrap();
    let h = hits
        .iter()
        .find(|h| h["raw_line"] == 15832)
        .expect("the template on raw line 15832");
    assert_eq!(h["kind"], "template");
    assert!(h["function"]["raw_line"] == 15832);
}
