//! The JavaScript layer over arbitrary text: nesting scan, parse (script and
//! module goals), index, function shapes, printing (one pass and split),
//! symbol recovery, role location, flag inventory, workflow reconstruction
//! (the static evaluator), gates, and expression snippets.
//!
//! Whatever the input, every step must return (an error is fine), within
//! the limits of `js::depth` — never overflow the stack or panic.
#![no_main]

use cc_teardown::analysis::{eval, flags, gates, roles, workflows};
use cc_teardown::bun::{Budget, BunGraph};
use cc_teardown::js::code::{CodeIndex, Depth};
use cc_teardown::js::depth;
use cc_teardown::js::parse::{self, Goal};
use cc_teardown::js::symbols;
use libfuzzer_sys::fuzz_target;

fn text(data: &[u8]) -> String {
    // As the code index reads modules: UTF-8 as stored, else latin1 widened.
    match std::str::from_utf8(data) {
        Ok(s) => s.to_string(),
        Err(_) => data.iter().map(|&b| b as char).collect(),
    }
}

fuzz_target!(|data: &[u8]| {
    // swc_ecma_parser 47 debug-asserts on a regular expression right after an
    // HTML-like comment (fuzz/regressions/js-regex-after-html-comment.js);
    // fuzz builds have debug assertions on, release builds answer with a
    // syntax error. Leave those comments out so the run goes on.
    if memchr::memmem::find(data, b"<!--").is_some() || memchr::memmem::find(data, b"-->").is_some() {
        return;
    }
    let src = text(data);
    let scanned = depth::scan(&src);

    // Both goals, as `parse` falls back between them; an AST that comes back
    // is within the exact limit.
    for goal in [Goal::Script, Goal::Module] {
        match parse::parse("fuzz.js", src.clone(), goal) {
            Ok((p, _)) => {
                assert!(scanned.is_ok(), "parsed past the lexical limit");
                assert!(depth::check_program(&p.program).is_ok());
            }
            Err(cc_teardown::js::JsError::TooDeep { .. }) => {}
            Err(_) => {}
        }
    }

    // An expression snippet, as the evaluator parses them.
    let _ = eval::parse_snippet(&src);

    // The whole pipeline, as the commands run it.
    let graph = BunGraph::single_js("/$bunfs/root/fuzz.js", src.as_bytes());
    let Ok(ci) = parse::with_big_stack(|| {
        CodeIndex::build_filtered(&graph, &Budget::new(1 << 24), |_| true, Depth::Shapes)
    }) else {
        return;
    };
    let syms = symbols::recover(&ci);
    let _ = symbols::link(&ci, None);
    let originals = symbols::original_names(&syms);
    let locator = roles::Locator::new(&ci, &syms);
    let found = locator.locate();
    let _ = flags::inventory(&ci, &originals);
    let wf = workflows::bundled(&ci, &found, &locator);
    for w in &wf {
        if let Some(script) = &w.text {
            let _ = workflows::derive_levels(script);
        }
    }
    let _ = gates::discover(&ci, &found, &wf, &originals);
});
