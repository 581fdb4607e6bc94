use super::scan::frame::LABEL_WEIGHT;
use super::*;
use swc_common::DUMMY_SP;

fn depth(s: &str) -> u32 {
    scan_with_limit(s, u32::MAX).unwrap()
}

#[test]
fn brackets_nest_and_lists_do_not() {
    let flat = depth("f(a,b,c,d,e,f,g,h);g(1);h(2)");
    let nested = depth("f(f(f(f(f(f(1))))))");
    assert!(nested > flat + 8, "{nested} vs {flat}");
    // A long list stays flat: commas end every expression at their level.
    let list = format!("x=[{}]", vec!["1"; 10_000].join(","));
    assert!(depth(&list) < 10, "{}", depth(&list));
    // So do long statement lists, with or without semicolons.
    let stmts = "function f(){}".repeat(5_000) + &"if(a){b()}".repeat(5_000);
    assert!(depth(&stmts) < 10, "{}", depth(&stmts));
    let semis = "a=1;".repeat(10_000);
    assert!(depth(&semis) < 10);
}

#[test]
fn chains_count() {
    for (unit, n) in [
        ("1+", 1),
        ("1*1+", 1),
        ("2**", 1),
        ("!", 1),
        ("- ", 1),
        ("x.", 1),
        ("x()", 1),
        ("x`t`", 1),
        ("new ", 1),
        ("await ", 1),
        ("a=>", 1),
        ("a?b:", 2),
        ("a=", 1),
        ("a in ", 1),
    ] {
        let s = format!("x={}1", unit.repeat(1000));
        assert!(depth(&s) >= 1000 * n, "{unit}: {}", depth(&s));
    }
    // `else if` chains continue across `;` and blocks.
    let s = "if(a)b;".to_string() + &"else if(a)b;".repeat(1000);
    assert!(depth(&s) >= 2000, "{}", depth(&s));
    let s = "if(a){}".to_string() + &"else if(a){}".repeat(1000);
    assert!(depth(&s) >= 2000, "{}", depth(&s));
    // Statement chains survive the commas of their innermost expression.
    let s = "do if(a)x,y;else ".repeat(1000) + "z;";
    assert!(depth(&s) >= 2000, "{}", depth(&s));
    let s = "l:".repeat(100) + "x,y";
    assert!(depth(&s) >= 100 * LABEL_WEIGHT, "{}", depth(&s));
    // `case` clauses are a flat list.
    let s = format!("switch(x){{{}}}", "case 1:case 2:default:".repeat(1000));
    assert!(depth(&s) < 10, "{}", depth(&s));
}

#[test]
fn strings_comments_templates_and_regexes_are_skipped() {
    let deep = "(".repeat(500);
    for s in [
        format!("x='{deep}'"),
        format!("x=\"{deep}\""),
        format!("// {deep}\nx"),
        format!("/* {deep} */x"),
        format!("x=`{deep}`"),
        format!("x=/{deep}/g"),
        format!("if(a)/{deep}/.test(b)"),
        format!("x=`${{a}}{deep}`"),
        format!("x=[/[/]{deep}/]"),
    ] {
        assert!(depth(&s) < 16, "{s:.40}: {}", depth(&s));
    }
    // Divisions are not regexes: what follows them counts.
    assert!(depth(&format!("x=a/b/{deep}")) >= 500);
    assert!(depth(&format!("x=(a)/2/{deep}")) >= 500);
    assert!(depth(&format!("x={{}}/2/{deep}")) >= 500);
    assert!(depth(&format!("x=function(){{}}/2/{deep}")) >= 500);
    assert!(depth(&format!("x=this.if/2/{deep}")) >= 500);
    // Substitutions nest.
    let s = "`${".repeat(300) + &"}`".repeat(300);
    assert!(depth(&s) >= 600, "{}", depth(&s));
}

#[test]
fn input_may_end_inside_an_escape() {
    // Found by the `js` fuzz target: a word ending in `\`.
    for s in ["x\\", "'\\", "`\\", "x=/\\", "x|==x}+c\u{3}hif/\n\\"] {
        assert!(scan(s).is_ok(), "{s:?}");
    }
}

#[test]
fn too_deep_names_the_offset() {
    let s = format!("x={}1{}", "(".repeat(100), ")".repeat(100));
    let e = scan_with_limit(&s, 50).unwrap_err();
    assert!(e.offset > 2 && e.offset < 40, "{e:?}");
    assert!(scan_with_limit(&s, 500).is_ok());
}

#[test]
fn deep_asts_are_measured_and_freed() {
    use swc_ecma_ast::*;
    // A left-deep `+` chain built by hand, far past the limit.
    let mut e = Box::new(Expr::Lit(Lit::Num(Number {
        span: DUMMY_SP,
        value: 1.0,
        raw: None,
    })));
    for _ in 0..200_000 {
        e = Box::new(Expr::Bin(BinExpr {
            span: DUMMY_SP,
            op: BinaryOp::Add,
            left: e,
            right: Box::new(Expr::Ident(Ident::new_no_ctxt("x".into(), DUMMY_SP))),
        }));
    }
    assert!(check_expr(&e).is_err());
    dismantle_expr(e);
}
