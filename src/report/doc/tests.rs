use super::*;

fn sample() -> Doc {
    let mut d = Doc::new("T");
    let mut tb = Table::new(vec![
        Column::new("name", Kind::Code),
        Column::new("n", Kind::Number),
        Column::new("note", Kind::Text),
    ]);
    tb.row(vec![
        Inline::code("a".repeat(200)),
        fmt::num(1234567u64).into(),
        "x\x1b[2J|y".into(),
    ]);
    d.section("s", "Section", vec![Block::Table(tb)]);
    d
}

#[test]
fn numbers_and_plurals() {
    assert_eq!(fmt::num(21635672u64), "21,635,672");
    assert_eq!(fmt::num(12u64), "12");
    assert_eq!(fmt::count(1, "symbol", "symbols"), "1 symbol");
    assert_eq!(fmt::count(1000, "site", "sites"), "1,000 sites");
    assert_eq!(fmt::bytes(1), "1 byte");
}

#[test]
fn terminal_fits_the_width_and_escapes() {
    let d = sample();
    let out = d.terminal(&Term {
        color: true,
        width: Some(40),
    });
    for l in out.lines() {
        assert!(cols(&strip_sgr(l)) <= 40, "{l:?}");
    }
    assert!(out.contains('…') && out.contains("1,234,567"));
    assert!(!strip_sgr(&out).contains('\x1b'), "{out:?}");
    let wide = d.terminal(&Term {
        color: false,
        width: None,
    });
    assert!(wide.contains(&"a".repeat(200)));
}

#[test]
fn table_columns_line_up_whatever_the_cells_hold() {
    // Coloured code, wide characters, characters shown escaped, a cell cut
    // to fit, a cell of several spans: the third column starts at the same
    // display column on every line, coloured or not.
    let mut tb = Table::new(vec![
        Column::new("name", Kind::Code),
        Column::new("n", Kind::Number),
        Column::new("note", Kind::Text),
    ]);
    let mut two = Inline::code("ab");
    two.0.push(Span::Text("-cd".into()));
    for (name, n, note) in [
        (Inline::code("short"), 1u64, "plain"),
        (Inline::code("漢字の名前"), 22, "wide"),
        (Inline::code("tab\there"), 333, "escaped"),
        (Inline::code("x".repeat(80)), 4444, "cut"),
        (two, 5, "spans"),
    ] {
        tb.row(vec![name, fmt::num(n).into(), note.into()]);
    }
    let mut d = Doc::new("T");
    d.section("s", "Section", vec![Block::Table(tb)]);
    for color in [false, true] {
        let out = d.terminal(&Term {
            color,
            width: Some(50),
        });
        let starts: Vec<usize> = out
            .lines()
            .map(strip_sgr)
            .filter(|l| {
                ["plain", "wide", "escaped", "cut", "spans", "note"]
                    .iter()
                    .any(|w| l.ends_with(w))
            })
            .map(|l| {
                let text = l.trim_end();
                let last = text.rsplit("  ").next().unwrap();
                cols(&text[..text.len() - last.len()])
            })
            .collect();
        assert_eq!(starts.len(), 6, "{out}");
        assert!(starts.windows(2).all(|p| p[0] == p[1]), "{starts:?}\n{out}");
        assert!(out.lines().all(|l| cols(&strip_sgr(l)) <= 50), "{out}");
    }
}

#[test]
fn markdown_and_html_escape() {
    let d = sample();
    let md = d.markdown();
    assert!(md.contains("x\\x1b\\[2J\\|y"), "{md}");
    let html = d.html();
    assert!(html.contains("default-src 'none'"));
    assert!(!html.contains("<script"), "no script unless asked");
    assert!(html.contains("<td class=\"k-num\">1,234,567</td>"));
}

#[test]
fn prose_wraps_in_html_and_is_text_in_markdown() {
    let mut d = Doc::new("T");
    d.push(Block::Code {
        lang: "prose",
        caption: None,
        text: "one long paragraph".into(),
        max_lines: None,
    });
    assert!(d.html().contains("<pre class=\"prose\"><code>"));
    assert!(d.markdown().contains("```text\none long paragraph"));
}

#[test]
fn md_code_spans_hold_backticks() {
    assert_eq!(md_code("a`b"), "``a`b``");
    assert_eq!(md_code("`x"), "`` `x ``");
}

#[test]
fn long_lists_wrap_in_markdown() {
    let names: Vec<String> = (0..200).map(|i| format!("tengu_flag_{i}")).collect();
    let mut o = String::new();
    md_block(
        &mut o,
        &Block::List {
            items: vec![Inline::from("added: ").extend(Inline::names(&names))],
            limit: None,
        },
        0,
    );
    assert!(o.lines().all(|l| l.chars().count() <= 120), "{o}");
    assert!(o.contains("`tengu_flag_199`"));
}

/// Every rendering of diff lines that start with a character of more
/// than one byte (a word diff keeps the line breaks of the texts: a
/// changed description's next line may start with any letter).
#[test]
fn diff_lines_starting_with_any_character_render_everywhere() {
    for text in [
        "[-a-]{+b+}\nétude suivante",
        "世界\n+é\n-😀 x\n@ü",
        "\u{301}combining\n\u{202e}override\n",
    ] {
        let mut d = Doc::new("T");
        d.push(Block::Diff {
            caption: Some(Inline::code("Tool").t(": description, word diff")),
            text: text.to_string(),
            max_lines: Some(6),
        });
        d.push(Block::Code {
            lang: "js",
            caption: None,
            text: text.to_string(),
            max_lines: None,
        });
        let html = d.html();
        for line in text.lines() {
            let first = line.chars().next().unwrap();
            assert!(html.contains(&h(&first.to_string())), "{html}");
        }
        assert!(d.markdown().contains(text.lines().last().unwrap()));
        for width in [None, Some(1), Some(3), Some(20), Some(80)] {
            let t = d.terminal(&Term { color: true, width });
            // Narrow terminals cut the caption; wide ones show it.
            assert!(t.contains("Tool") || width < Some(20), "{t}");
            assert!(t.lines().count() >= text.lines().count().min(6), "{t}");
        }
    }
}

#[test]
fn column_titles_are_escaped_on_a_terminal() {
    let mut tb = Table::new(vec![Column::new("a\x1b[2Jb", Kind::Text)]);
    tb.row(vec!["x".into()]);
    let out = table_text(
        &tb,
        &Term {
            color: false,
            width: Some(40),
        },
    );
    assert!(
        !out.contains('\x1b') && out.contains("a\\x1b[2Jb"),
        "{out:?}"
    );
}

#[test]
fn wrapping_to_any_width() {
    for w in 0..6 {
        let out = wrap_plain("word élan 世界 another", Some(w));
        assert_eq!(out.lines().count(), 4, "{w}: {out:?}");
    }
}

#[test]
fn colour_choice_follows_the_conventions() {
    assert!(ColorChoice::Always.enabled(false));
    assert!(!ColorChoice::Never.enabled(true));
}

#[test]
fn wide_markdown_table_rows_are_cut_to_fit() {
    let long = |c: char| format!("{}{}", "word ".repeat(30), c.to_string().repeat(40));
    let mut t = Table::new(vec![
        Column::new("", Kind::Text),
        Column::new("A", Kind::Code),
        Column::new("B", Kind::Code),
    ]);
    t.row(vec![
        "changed".into(),
        Inline::code(long('a')),
        Inline::code(long('b')),
    ]);
    t.row(vec![
        "same".into(),
        Inline::code("short"),
        Inline::code("x|y"),
    ]);
    let mut o = String::new();
    md_block(&mut o, &Block::Table(t), 0);
    let rows: Vec<&str> = o.lines().filter(|l| l.starts_with("| ")).collect();
    // Head, rule and the two rows.
    assert_eq!(rows.len(), 4, "{o}");
    assert!(rows.iter().all(|l| l.chars().count() <= MD_ROW_MAX), "{o}");
    // Both wide cells keep their beginning, show the cut and keep about
    // as much each; the narrow status cell is whole.
    assert!(rows[2].starts_with("| changed | `word word"), "{o}");
    let cells: Vec<&str> = rows[2].split(" | ").collect();
    assert_eq!(cells.len(), 3, "{o}");
    assert!(
        cells[1].ends_with("…`") && cells[2].ends_with("…` |"),
        "{o}"
    );
    let (a, b) = (cells[1].chars().count(), cells[2].chars().count() - 2);
    assert!(a.abs_diff(b) <= 2, "{a} vs {b}: {o}");
    // A narrow row is left as it was, its escapes too.
    assert_eq!(rows[3], "| same | `short` | `x\\|y` |");
}

#[test]
fn fair_width_leaves_narrow_cells_whole() {
    assert_eq!(fair_width(&[7, 190, 190], 220), 106);
    assert_eq!(fair_width(&[7, 20, 190], 200), 173);
    assert_eq!(fair_width(&[10, 10], 30), usize::MAX);
}

#[test]
fn inline_elided_keeps_styles_up_to_the_cut() {
    let i = Inline::from("gate ").c("abcdefghij").t(" tail");
    let e = i.elided(9);
    assert_eq!(e.plain(), "gate abc…");
    assert!(matches!(e.0.as_slice(), [Span::Text(_), Span::Code(c)] if c == "abc…"));
    assert_eq!(i.elided(100), i);
}

#[test]
fn md_text_escapes_markup_and_keeps_names_searchable() {
    // Nothing to escape: the text as it is.
    assert_eq!(md_text("plain words, 42 and é"), "plain words, 42 and é");
    assert_eq!(md_text("tengu_x_y"), "tengu_x_y");
    // Underscores at a word's edge, and every other markup character.
    assert_eq!(md_text("_x y_"), "\\_x y\\_");
    assert_eq!(
        md_text("a*b* [c](d) <e> #f ~g |h `i\\"),
        "a\\*b\\* \\[c\\](d) \\<e\\> \\#f \\~g \\|h \\`i\\\\"
    );
    // An underscore between letters of any script stays.
    assert_eq!(md_text("é_ü *"), "é_ü \\*");
    // Unsafe characters are shown escaped, not as markup.
    assert_eq!(md_text("a\u{1b}_b"), "a\\x1b\\_b");
    assert_eq!(md_text("x\u{202e}y"), "x\\u{202e}y");
}

#[test]
fn md_pieces_split_at_spaces_and_join_back_to_the_inline() {
    let i = Inline(vec![
        Span::Text("one  two_3 *x*".into()),
        Span::Code("a b".into()),
        Span::Strong("s t".into()),
    ]);
    let pieces = md_pieces(&i);
    assert_eq!(
        pieces,
        ["one", " ", " two_3", " \\*x\\*", "`a b`", "**s t**"]
    );
    assert_eq!(pieces.concat(), md_inline(&i));
}
