//! Deep nesting never aborts the process: every JavaScript command refuses
//! input nested past `js::depth::MAX_NESTING` with a one-line error (exit 2)
//! and handles input up to the limit — for every construct that nests
//! (brackets, operator chains, statement chains, templates).

use crate::common;

use cc_teardown::analysis::{flags, gates, roles, workflows};
use cc_teardown::bun::{Budget, BunGraph};
use cc_teardown::container::{self, ContainerOptions};
use cc_teardown::js::code::{CodeIndex, Depth};
use cc_teardown::js::depth::{self, MAX_NESTING};
use cc_teardown::js::parse::{self, Goal};
use cc_teardown::js::{JsError, symbols};
use common::*;
use proptest::prelude::*;
use std::process::Output;
use std::time::{Duration, Instant};

type Gen = fn(usize) -> String;

fn rep(s: &str, n: usize) -> String {
    s.repeat(n)
}

/// Every construct that nests, as a whole `cli.js`, `n` levels deep.
const CONSTRUCTS: &[(&str, Gen)] = &[
    ("parens", |n| {
        format!("var x={}1{};", rep("(", n), rep(")", n))
    }),
    ("arrays", |n| {
        format!("var x={}{};", rep("[", n), rep("]", n))
    }),
    ("objects", |n| {
        format!("var x={}1{};", rep("{a:", n), rep("}", n))
    }),
    ("blocks", |n| {
        format!("function f(){{{}{}}}", rep("{", n), rep("}", n))
    }),
    ("functions", |n| {
        format!("var f={}1{};", rep("function(){return ", n), rep("}", n))
    }),
    ("calls", |n| format!("var x=f{};", rep("(1)", n))),
    ("call args", |n| {
        format!("var x={}1{};", rep("f(", n), rep(")", n))
    }),
    ("members", |n| format!("var x=a{};", rep(".b", n))),
    ("optional members", |n| format!("var x=a{};", rep("?.b", n))),
    ("index", |n| format!("var x=a{};", rep("[0]", n))),
    ("tagged templates", |n| format!("var x=t{};", rep("`a`", n))),
    ("templates", |n| {
        format!("var x={}1{};", rep("`${", n), rep("}`", n))
    }),
    ("plus", |n| format!("var x={}1;", rep("1+", n))),
    ("or", |n| format!("var x={}b;", rep("a||", n))),
    ("mixed binary", |n| {
        format!("var x={}1;", rep("a*b+c<d&&", n))
    }),
    ("exponent", |n| format!("var x={}1;", rep("2**", n))),
    ("not", |n| format!("var x={}1;", rep("!", n))),
    ("minus", |n| format!("var x={}1;", rep("- ", n))),
    ("typeof", |n| format!("var x={}1;", rep("typeof ", n))),
    ("new", |n| format!("var x={}X;", rep("new ", n))),
    ("await", |n| {
        format!("async function f(){{return {}1}}", rep("await ", n))
    }),
    ("arrows", |n| format!("var x={}1;", rep("a=>", n))),
    ("ternaries", |n| format!("var x={}c;", rep("a?b:", n))),
    ("nested ternaries", |n| {
        format!("var x={}c{};", rep("a?", n), rep(":d", n))
    }),
    ("assignments", |n| format!("var x={}1;", rep("a=", n))),
    ("else if", |n| format!("if(a)b;{}", rep("else if(a)b;", n))),
    ("else if blocks", |n| {
        format!("if(a){{}}{}", rep("else if(a){}", n))
    }),
    ("if", |n| format!("{}x;", rep("if(a)", n))),
    ("for", |n| format!("{}x;", rep("for(;;)", n))),
    ("while", |n| format!("{}x;", rep("while(a)", n))),
    ("do while", |n| {
        format!("{}x;{}", rep("do ", n), rep("while(0);", n))
    }),
    ("labels", |n| {
        (0..n).map(|i| format!("l{i}:")).collect::<String>() + "x;"
    }),
    ("switch in switch", |n| {
        format!("{}x{};", rep("switch(a){case 1:", n), rep("}", n))
    }),
    ("patterns", |n| {
        format!("var {}a{}=x;", rep("[", n), rep("]", n))
    }),
    ("classes", |n| {
        format!("var c={}{};", rep("class{m(){return ", n), rep("}}", n))
    }),
];

/// The largest `n` whose input passes the lexical check (the next one must
/// fail it: every construct nests without bound).
fn n_at_limit(name: &str, g: Gen) -> usize {
    let fits = |n: usize| depth::scan(&g(n)).is_ok();
    assert!(fits(1), "{name}: one level fails");
    let (mut lo, mut hi) = (1, 2 * MAX_NESTING as usize + 8);
    assert!(!fits(hi), "{name}: {hi} levels pass");
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    assert!(
        // Labels weigh more (`js::depth`): at most 62 nest.
        lo * 8 >= MAX_NESTING as usize || (name == "labels" && lo > 50),
        "{name}: only {lo} levels fit: the estimate is far too coarse"
    );
    lo
}

fn is_too_deep(e: &JsError) -> bool {
    matches!(e, JsError::TooDeep { limit, .. } if *limit == MAX_NESTING)
}

/// Everything the library does with a module, in process: parse, index,
/// shapes, print (one pass and split), symbols, roles, flags, workflows,
/// gates.
fn pipeline(src: &str) -> Result<(), JsError> {
    let graph = BunGraph::single_js("/$bunfs/root/cli.js", src.as_bytes());
    let ci = parse::with_big_stack(|| {
        CodeIndex::build_filtered(&graph, &Budget::new(1 << 30), |_| true, Depth::Shapes)
    })?;
    let split = parse::with_big_stack(|| {
        CodeIndex::build_filtered(&graph, &Budget::new(1 << 30), |_| true, Depth::Print)
    })?;
    assert_eq!(split.modules[0].printed.code, ci.modules[0].printed.code);
    let syms = symbols::recover(&ci);
    let originals = symbols::original_names(&syms);
    let locator = roles::Locator::new(&ci, &syms);
    let found = locator.locate();
    let _ = flags::inventory(&ci, &originals);
    let wf = workflows::bundled(&ci, &found, &locator);
    let _ = gates::discover(&ci, &found, &wf, &originals);
    Ok(())
}

#[test]
fn every_construct_at_and_past_the_limit_in_process() {
    for &(name, g) in CONSTRUCTS {
        let n = n_at_limit(name, g);
        let t = Instant::now();
        if let Err(e) = pipeline(&g(n)) {
            panic!("{name} at the limit ({n}): {e}");
        }
        let e = pipeline(&g(n + 1)).expect_err(name);
        assert!(is_too_deep(&e), "{name}: {e}");
        // The line and column point into the input.
        let msg = e.to_string();
        assert!(msg.starts_with("/$bunfs/root/cli.js:1:"), "{msg}");
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{name}: {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn far_past_the_limit_is_refused_quickly() {
    // Sizes from the issue: 200k parentheses, a 1M-term chain. The scan stops
    // at the first token past the limit, so time does not grow with them.
    for src in [
        format!("var x={}1{};", rep("(", 200_000), rep(")", 200_000)),
        format!("var x={}1;", rep("1+", 1_000_000)),
        format!("var x=a{};", rep(".b", 1_000_000)),
        format!("if(a)b;{}", rep("else if(a)b;", 300_000)),
    ] {
        let t = Instant::now();
        let e = pipeline(&src).unwrap_err();
        assert!(is_too_deep(&e), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}

#[test]
fn snippets_and_the_ast_check_are_bounded_too() {
    use cc_teardown::analysis::eval::parse_snippet;
    let deep = format!("{}1{}", rep("(", 5_000), rep(")", 5_000));
    let e = parse_snippet(&deep).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("nesting deeper than {MAX_NESTING}")),
        "{e}"
    );
    assert!(parse_snippet("((1))").is_ok());
    // A mix the lexical estimate sees as shallower than it is (a member
    // chain under a `+` chain under a `||` chain): the exact check after
    // parsing catches it, and the AST is freed without recursion.
    let k = MAX_NESTING as usize - 10;
    let mix = format!("var x=a{}{}{};", rep(".b", k), rep("+c", k), rep("||d", k));
    assert!(depth::scan(&mix).is_ok());
    let e = parse::parse("mix.js", mix, Goal::Script).err().unwrap();
    assert!(is_too_deep(&e), "{e}");
}

/// Small modules are measured by the index walk, not before it: that walk
/// must refuse every AST the separate check refuses, at the same node —
/// in the parts it does not itself descend into too (a declaration's
/// pattern, a method's key, a parameter's default) — and accept the
/// deepest one the check accepts.
#[test]
fn the_index_walk_measures_as_the_parse_check_does() {
    let k = MAX_NESTING as usize - 10;
    let chain = format!("a{}{}{}", rep(".b", k), rep("+c", k), rep("||d", k));
    let places = [
        format!("var x={chain};"),
        format!("var [z = {chain}] = q;"),
        format!("let {{ z = {chain} }} = q;"),
        format!("class K {{ [{chain}]() {{}} }}"),
        format!("var o = {{ [{chain}]() {{}} }};"),
        format!("function f(p = {chain}) {{}}"),
        format!("var f = (p = {chain}) => 1;"),
        format!("for (var [w = {chain}] of q);"),
        format!("try {{}} catch ({{ e = {chain} }}) {{}}"),
    ];
    for src in places {
        assert!(depth::scan(&src).is_ok(), "the scan lets it through");
        let by_parse = parse::with_big_stack(|| {
            parse::parse("/$bunfs/root/cli.js", src.clone(), Goal::Script)
                .err()
                .map(|e| e.to_string())
        });
        let graph = BunGraph::single_js("/$bunfs/root/cli.js", src.as_bytes());
        let by_index = parse::with_big_stack(|| {
            CodeIndex::build_filtered(&graph, &Budget::new(1 << 30), |_| true, Depth::Lines)
        })
        .err()
        .map(|e| e.to_string());
        let by_parse = by_parse.expect("too deep for the parse check");
        assert!(by_parse.contains("nesting deeper than"), "{by_parse}");
        assert_eq!(
            by_index.as_deref(),
            Some(by_parse.as_str()),
            "{}",
            &src[..20]
        );
    }
    let ok = deepest_accepted();
    let graph = BunGraph::single_js("/$bunfs/root/cli.js", ok.as_bytes());
    let ci = parse::with_big_stack(|| {
        CodeIndex::build_filtered(&graph, &Budget::new(1 << 30), |_| true, Depth::Lines)
    })
    .unwrap();
    assert_eq!(ci.modules[0].index.definitions.len(), 1, "var x, indexed");
}

/// Two chains the scan sees one at a time: an AST near `AST_LIMIT`, the
/// deepest any command walks.
fn deepest_accepted() -> String {
    let k = MAX_NESTING as usize - 10;
    format!("var x=a{}{};", rep(".b", k), rep("+c", k))
}

#[test]
fn the_deepest_ast_accepted_goes_through_everything() {
    let src = deepest_accepted();
    let d = parse::with_big_stack(|| {
        let (p, _) = parse::parse("cli.js", src.clone(), Goal::Script).unwrap();
        depth::check_program(&p.program).unwrap()
    });
    assert!(d > depth::AST_LIMIT - 30, "{d}");
    pipeline(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cli.js");
    std::fs::write(&p, &src).unwrap();
    let p = p.to_str().unwrap();
    let small = dir.path().join("small.js");
    std::fs::write(&small, "var x=1;").unwrap();
    for args in [
        vec!["pretty", p],
        vec!["locate", p],
        vec!["report", p, "--format", "json"],
        vec!["diff", p, small.to_str().unwrap()],
        vec!["simulate", "--script", p],
    ] {
        let (out, _) = run(&args);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?}: {code:?} {}",
            stderr(&out)
        );
    }
}

// ---- the commands ----

/// `args --quiet`, killed after two minutes: its output and wall time.
fn run(args: &[&str]) -> (Output, Duration) {
    let t = Instant::now();
    let out = bin()
        .args(args)
        .arg("--quiet")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (out, t.elapsed())
}

/// A workflow-shaped bundle: a registrar, and a registered script built
/// from `value`, an expression the static evaluator must evaluate.
fn workflow_bundle(value: &str) -> String {
    format!(
        "var L=[];function R(e,t,r){{L.push({{source:\"built-in\",...t,script:e}})}}\nvar V={value};\nfunction B(){{R(`export const meta = {{ name: 'deep', description: 'd' }}\n${{V}}\nreturn 1`,{{name:\"deep\"}})}}\n"
    )
}

/// Every JavaScript command on `target` (`other`: a small valid target for
/// the other side of `diff`).
fn commands<'a>(target: &'a str, other: &'a str, out: &'a str) -> Vec<Vec<&'a str>> {
    vec![
        vec!["pretty", target],
        vec!["pretty", target, "--at", "1"],
        vec!["grep", target, "zz"],
        vec!["symbols", target, "--links"],
        vec!["workflows", target],
        vec!["locate", target],
        vec!["flags", target],
        vec!["gates", target, "--all"],
        vec!["report", target, "--format", "json"],
        vec!["reconstruct", target, "-o", out, "--force"],
        vec!["diff", target, other],
        vec!["diff", other, target],
        vec!["simulate", "--script", target],
    ]
}

fn assert_refused(args: &[&str], (out, took): &(Output, Duration)) {
    let err = one_line_error(args, out);
    assert!(
        err.contains(&format!("nesting deeper than {MAX_NESTING}")),
        "{args:?}: {err}"
    );
    assert!(*took < Duration::from_secs(30), "{args:?}: {took:?}");
}

#[test]
fn every_command_refuses_past_the_limit_and_works_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.js");
    std::fs::write(&small, workflow_bundle("\"x\"")).unwrap();
    let small = small.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // A few constructs that exercise different recursions: brackets, a
    // left-deep chain, a statement chain, templates, and the evaluator
    // (the deep value is evaluated to build the workflow script).
    let picks: &[(&str, Gen)] = &[
        ("parens", |n| {
            format!("var x={}1{};", rep("(", n), rep(")", n))
        }),
        ("or", |n| format!("var x={}b;", rep("a||", n))),
        ("else if", |n| format!("if(a)b;{}", rep("else if(a)b;", n))),
        ("templates", |n| {
            format!("var x={}1{};", rep("`${", n), rep("}`", n))
        }),
        ("evaluated parens", |n| {
            workflow_bundle(&format!("{}\"x\"{}", rep("(", n), rep(")", n)))
        }),
        ("evaluated plus", |n| {
            workflow_bundle(&format!("{}\"x\"", rep("\"a\"+", n)))
        }),
    ];
    for &(name, g) in picks {
        let n = n_at_limit(name, g);
        let deep = dir.path().join("deep.js");
        let path = deep.to_str().unwrap();
        // One over: refused by every command, in one line, exit 2.
        std::fs::write(&deep, g(n + 1)).unwrap();
        for args in commands(path, small, out) {
            assert_refused(&args, &run(&args));
        }
        // At the limit: handled.
        std::fs::write(&deep, g(n)).unwrap();
        for args in commands(path, small, out) {
            let (o, took) = run(&args);
            let (code, err) = (o.status.code(), stderr(&o));
            let evaluated = name.starts_with("evaluated");
            let ok = match args[0] {
                // Nothing to reconstruct in a bundle without workflows.
                "reconstruct" if !evaluated => {
                    code == Some(2) && err.contains("no bundled workflows")
                }
                // Otherwise a result: 0, or 1 for the command's own "no"
                // (`grep` and `symbols` found nothing; QuickJS found the
                // script too deep for its own stack, so it threw).
                _ => matches!(code, Some(0 | 1)) && !err.contains("nesting deeper"),
            };
            assert!(ok, "{name} at the limit ({n}), {args:?}: {code:?} {err}");
            assert!(took < Duration::from_secs(60), "{name} {args:?}: {took:?}");
        }
    }
}

#[test]
fn a_deep_bundled_workflow_script_is_reported_not_run() {
    // The bundle is shallow (the script is a string in it), the script it
    // registers is not: `workflows` reports it, `simulate` refuses it.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cli.js");
    let deep = format!("{}1{}", rep("(", 3_000), rep(")", 3_000));
    std::fs::write(&p, workflow_bundle(&format!("\"var y={deep}\""))).unwrap();
    let p = p.to_str().unwrap();
    let v = json(&["workflows", p]);
    let w = &v["workflows"][0];
    assert_eq!(w["name"], "deep", "{v}");
    assert!(
        w.to_string().contains("nesting deeper than"),
        "the syntax check names the limit: {w}"
    );
    let args = ["simulate", p, "--workflow", "deep"];
    assert_refused(&args, &run(&args));
}

// ---- generated inputs ----

fn chunk() -> impl Strategy<Value = String> {
    let n = 0usize..(3 * MAX_NESTING as usize);
    prop_oneof![
        (0..CONSTRUCTS.len(), n.clone()).prop_map(|(i, n)| (CONSTRUCTS[i].1)(n)),
        // Long and flat: many statements, long lists, long strings.
        (1usize..20_000).prop_map(|n| format!("var a=[{}];", vec!["1"; n].join(","))),
        (1usize..5_000).prop_map(|n| rep("function f(){}if(a){b()}x=1;", n)),
        (1usize..200_000).prop_map(|n| format!("var s=\"{}\";", rep("(", n))),
        // Nesting around other chunks is composed below.
        "[ -~]{0,40}",
    ]
}

fn program() -> impl Strategy<Value = String> {
    (prop::collection::vec(chunk(), 1..4), 0usize..300).prop_map(|(parts, wrap)| {
        // Wrap the whole in more nesting, so depths add up across constructs.
        format!(
            "{}{}{}",
            rep("(function(){", wrap),
            parts.join("\n"),
            rep("})", wrap)
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever the mix: the whole pipeline either succeeds or refuses with
    /// the nesting error (or a syntax error), never crashes.
    #[test]
    fn generated_deep_and_long_inputs(src in program()) {
        match pipeline(&src) {
            Ok(()) => prop_assert!(depth::scan(&src).is_ok()),
            Err(JsError::TooDeep { .. } | JsError::Syntax { .. }) => {}
            Err(e) => prop_assert!(false, "{e}"),
        }
    }
}

// ---- real builds ----

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn real_bundles_are_well_below_the_limit() {
    for version in ["2.1.220", "2.1.260", "2.1.332"] {
        let bytes = std::fs::read(fetch(version, "darwin-arm64")).unwrap();
        let loc = container::locate(&bytes, &ContainerOptions::default()).unwrap();
        let g = BunGraph::parse(loc.payload).unwrap();
        let (mut lexical, mut ast, mut bytes, mut took) = (0, 0, 0, Duration::ZERO);
        for m in g.modules.iter().filter(|m| m.is_javascript()) {
            let src = String::from_utf8_lossy(m.contents).into_owned();
            let t = Instant::now();
            let d = depth::scan(&src).unwrap_or_else(|e| panic!("{version} {}: {e:?}", m.name));
            took += t.elapsed();
            bytes += src.len();
            lexical = lexical.max(d);
            let a = parse::with_big_stack(|| {
                let (p, _) = parse::parse(m.name, src, Goal::Script).unwrap();
                depth::check_program(&p.program).unwrap()
            });
            ast = ast.max(a);
        }
        eprintln!(
            "{version}: lexical {lexical}, AST {ast}; scanned {} MB in {took:?}",
            bytes >> 20
        );
        // A wide margin: a build four times as deep would still pass.
        assert!(lexical * 4 < MAX_NESTING, "{version}: {lexical}");
        assert!(ast * 4 < MAX_NESTING, "{version}: {ast}");
    }
}

#[test]
fn a_regex_right_after_an_html_comment_is_a_syntax_error() {
    // swc_ecma_parser 47 debug-asserts here (found by the `js` fuzz target);
    // Cargo.toml turns its debug assertions off so dev builds answer as
    // release builds do.
    let e = parse::parse("x.js", "<!--y\n/a/".into(), Goal::Script)
        .err()
        .unwrap();
    assert!(matches!(e, JsError::Syntax { .. }), "{e}");
}
