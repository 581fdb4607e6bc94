//! The Markdown renderer.

use super::*;
use std::fmt::Write;

/// Plain text for Markdown: characters that would start markup are
/// backslash-escaped, `<` and `>` too (raw HTML in Markdown).
pub(super) fn md_text(s: &str) -> String {
    // Most texts (names, numbers, prose) have nothing to escape: one scan
    // is all they cost, and only a text that needs escaping is rebuilt.
    if s.chars().all(|c| !is_markup(c) && !escape::is_unsafe(c)) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut prev: Option<char> = None;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if escape::is_unsafe(c) {
            // The visible escape (`\x1b`) as it is, not markup-escaped.
            out.push_str(&escape::display(c.encode_utf8(&mut [0; 4])));
        } else {
            // An underscore inside a word (tengu_x_y) is no emphasis in
            // CommonMark: left as it is, names stay searchable.
            let inner_underscore = c == '_'
                && prev.is_some_and(char::is_alphanumeric)
                && chars.peek().is_some_and(|n| n.is_alphanumeric());
            if is_markup(c) && !inner_underscore {
                out.push('\\');
            }
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// A character that may start or end Markdown markup (or raw HTML).
fn is_markup(c: char) -> bool {
    matches!(
        c,
        '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~'
    )
}

/// A code span whose fence is longer than any run of backticks inside.
pub(super) fn md_code(s: &str) -> String {
    let s = escape::display(s).replace('|', "\\|");
    let mut run = 0;
    let mut longest = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// One span as Markdown, added to `out`.
fn md_span(out: &mut String, s: &Span) {
    match s {
        Span::Text(t) | Span::Status(_, t) => out.push_str(&md_text(t)),
        Span::Code(t) => out.push_str(&md_code(t)),
        Span::Strong(t) => {
            out.push_str("**");
            out.push_str(&md_text(t));
            out.push_str("**");
        }
        // The address is the tool's own (a relative path of safe
        // characters): only its text is from the build.
        Span::Link { text, href, code } => {
            let text = if *code { md_code(text) } else { md_text(text) };
            let _ = write!(out, "[{text}]({})", href.replace([' ', '(', ')'], "_"));
        }
    }
}

/// An inline as Markdown pieces that must not be split.
pub(super) fn md_pieces(i: &Inline) -> Vec<String> {
    let mut out = Vec::new();
    for s in &i.0 {
        match s {
            Span::Text(t) | Span::Status(_, t) => {
                // Words stay whole; spaces are where lines may wrap: each
                // piece after the first keeps the space before it.
                let e = md_text(t);
                let mut words = e.split(' ');
                if let Some(first) = words.next() {
                    out.push(first.to_owned());
                }
                out.extend(words.map(|w| {
                    let mut p = String::with_capacity(w.len() + 1);
                    p.push(' ');
                    p.push_str(w);
                    p
                }));
            }
            s => {
                let mut p = String::new();
                md_span(&mut p, s);
                out.push(p);
            }
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// An inline as Markdown on one line: its pieces joined, built directly.
pub(super) fn md_inline(i: &Inline) -> String {
    let mut out = String::new();
    for s in &i.0 {
        md_span(&mut out, s);
    }
    out
}

/// An inline wrapped at `width` columns, continuation lines indented.
pub(super) fn md_wrapped(i: &Inline, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = 0;
    for p in md_pieces(i) {
        let n = p.chars().count();
        if line > 0 && line + n > width && p.starts_with(' ') {
            out.push('\n');
            out.push_str(indent);
            let t = p.trim_start();
            out.push_str(t);
            line = indent.len() + t.chars().count();
        } else {
            out.push_str(&p);
            line += n;
        }
    }
    out
}

pub(super) fn md_table_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// The longest table row a Markdown file gets: wider rows are unreadable
/// in a diff view or an editor, and the JSON output has every value whole.
pub(super) const MD_ROW_MAX: usize = 240;

/// A table row no wider than `max` columns where it can be. A table row
/// cannot wrap in Markdown, so cutting is the only way to keep the file
/// readable: the wide cells are cut to one width (with `…`), the narrow
/// ones kept whole, so that two compared values (A, B) keep as much each.
pub(super) fn md_row_fitted(cells: &[Inline], max: usize) -> String {
    // Most rows fit: the cells are copied only to be cut.
    let mut cells = std::borrow::Cow::Borrowed(cells);
    let width = |r: &[String]| 4 + r.iter().map(|c| c.chars().count() + 3).sum::<usize>() - 3;
    let mut rendered: Vec<String> = cells.iter().map(md_inline).collect();
    // Escaping may make a cut cell a little wider than planned: a few
    // rounds fit the row, and the bound stops trying.
    for _ in 0..3 {
        let w = width(&rendered);
        if w <= max {
            break;
        }
        let widths: Vec<usize> = rendered.iter().map(|c| c.chars().count()).collect();
        let cap = fair_width(&widths, widths.iter().sum::<usize>() - (w - max));
        for (i, &cw) in widths.iter().enumerate() {
            if cw <= cap {
                continue;
            }
            let plain = cols(&cells[i].plain());
            let keep = plain.saturating_sub(cw - cap).max(12);
            if keep < plain {
                let cut = cells[i].elided(keep);
                cells.to_mut()[i] = cut;
                rendered[i] = md_inline(&cells[i]);
            }
        }
    }
    md_table_row(&rendered)
}

/// The widest a cell may be for the cells to take `budget` columns in
/// all: cells narrower than their share keep their width and leave the
/// rest to the wider ones, which all get the same.
pub(super) fn fair_width(widths: &[usize], budget: usize) -> usize {
    let mut sorted = widths.to_vec();
    sorted.sort_unstable();
    let mut left = budget;
    for (k, &w) in sorted.iter().enumerate() {
        let share = left / (sorted.len() - k);
        if w > share {
            return share;
        }
        left -= w;
    }
    usize::MAX
}

pub(super) fn md_block(o: &mut String, b: &Block, depth: usize) {
    match b {
        Block::Facts(f) => {
            o.push_str("| | |\n|---|---|\n");
            for (k, v) in f {
                o.push_str(&md_table_row(&[md_text(k), md_inline(v)]));
            }
            o.push('\n');
        }
        Block::Table(tb) => {
            let heads: Vec<String> = tb.columns.iter().map(|c| md_text(&c.title)).collect();
            o.push_str(&md_table_row(&heads));
            o.push_str(&md_table_row(
                &tb.columns
                    .iter()
                    .map(|c| {
                        if c.kind == Kind::Number {
                            "--:".to_string()
                        } else {
                            "---".to_string()
                        }
                    })
                    .collect::<Vec<_>>(),
            ));
            let shown = tb.limit.unwrap_or(usize::MAX).min(tb.rows.len());
            for r in &tb.rows[..shown] {
                o.push_str(&md_row_fitted(r, MD_ROW_MAX));
            }
            if tb.rows.len() > shown {
                let _ = writeln!(
                    o,
                    "\n… and {} more (the JSON output has all).",
                    fmt::n(tb.rows.len() - shown)
                );
            }
            o.push('\n');
        }
        Block::List { items, limit } => {
            let shown = limit.unwrap_or(usize::MAX).min(items.len());
            for i in &items[..shown] {
                let _ = writeln!(o, "- {}", md_wrapped(i, 100, "  "));
            }
            if items.len() > shown {
                let _ = writeln!(o, "- … and {} more", fmt::n(items.len() - shown));
            }
            o.push('\n');
        }
        Block::Note(i) => {
            let _ = writeln!(o, "{}\n", md_wrapped(i, 100, ""));
        }
        Block::Ordered(items) => {
            for (k, i) in items.iter().enumerate() {
                let _ = writeln!(o, "{}. {}", k + 1, md_wrapped(i, 100, "   "));
            }
            o.push('\n');
        }
        Block::Code {
            lang,
            caption,
            text,
            max_lines,
        } => {
            if let Some(c) = caption {
                let _ = writeln!(o, "{}:\n", md_text(c));
            }
            md_fence(o, lang, text, *max_lines, None);
        }
        Block::Diff {
            caption,
            text,
            max_lines,
        } => {
            if let Some(c) = caption {
                let _ = writeln!(o, "{}\n", md_inline(c));
            }
            md_fence(o, "diff", text, *max_lines, Some(MD_LINE));
        }
        Block::Words { caption, hunks, .. } => {
            let _ = writeln!(o, "{}\n", md_inline(caption));
            for hunk in hunks {
                let _ = writeln!(o, "> {}\n", md_inline(&Block::marked(hunk)));
            }
        }
        Block::Figure(f) if f.text.is_empty() => {}
        Block::Figure(f) => {
            let _ = writeln!(o, "{}:\n", md_text(&f.caption));
            md_fence(o, "text", &f.text.join("\n"), None, None);
        }
        Block::Section(s) => {
            let hashes = "#".repeat((depth + 2).min(6));
            let _ = writeln!(o, "{hashes} {}\n", md_inline(&s.title));
            for b in &s.blocks {
                md_block(o, b, depth + 1);
            }
        }
    }
}

/// The longest line of a Markdown code block, in characters.
pub(super) const MD_LINE: usize = 240;

/// The most items or rows an HTML page keeps collapsed after a capped list:
/// past this, the JSON output has them.
pub(super) const HTML_MORE: usize = 500;

/// A fenced block; `line_cap` elides long lines (diffs: a minified line
/// can run to kilobytes), never source that must stay exact.
pub(super) fn md_fence(
    o: &mut String,
    lang: &str,
    text: &str,
    max: Option<usize>,
    line_cap: Option<usize>,
) {
    let longest = text
        .lines()
        .map(|l| l.trim_start().chars().take_while(|&c| c == '`').count())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    // Prose is plain text to a Markdown reader.
    let lang = if lang == "prose" { "text" } else { lang };
    let _ = writeln!(o, "{fence}{lang}");
    let total = text.lines().count();
    let max = max.unwrap_or(usize::MAX);
    for l in text.lines().take(max) {
        match line_cap {
            Some(n) => o.push_str(&elide(l, n)),
            None => o.push_str(l),
        }
        o.push('\n');
    }
    let _ = writeln!(o, "{fence}");
    if total > max {
        let _ = writeln!(o, "\n… and {} more lines.", fmt::n(total - max));
    }
    o.push('\n');
}

/// A table-of-contents line: anchor, title, and its subsections.
pub(super) type TocEntry<'a> = (&'a str, &'a Inline, Vec<(&'a str, &'a Inline)>);

pub(super) fn toc_entries(blocks: &[Block]) -> Vec<TocEntry<'_>> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::Section(s) => Some((s.id.as_str(), &s.title, {
                let subs: Vec<(&str, &Inline)> = s
                    .blocks
                    .iter()
                    .filter_map(|b| match b {
                        Block::Section(c) => Some((c.id.as_str(), &c.title)),
                        _ => None,
                    })
                    .collect();
                // A handful of subsections help; dozens bury the rest.
                if subs.len() <= 5 { subs } else { Vec::new() }
            })),
            _ => None,
        })
        .collect()
}

/// The Markdown rendering (the caller escapes control characters of the
/// whole, as for any document).
pub fn markdown(d: &Doc) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# {}\n", md_inline(&d.title));
    if !d.summary.is_empty() {
        o.push_str("## Summary\n\n");
        for (k, v) in &d.summary {
            let _ = writeln!(o, "- **{}**: {}", md_text(k), md_wrapped(v, 100, "  "));
        }
        o.push('\n');
    }
    if d.toc {
        o.push_str("## Contents\n\n");
        for (id, title, _) in toc_entries(&d.blocks) {
            let _ = writeln!(o, "- [{}](#{id})", md_text(&title.plain()));
        }
        o.push('\n');
    }
    for b in &d.blocks {
        md_block(&mut o, b, 0);
    }
    if !d.footer.is_empty() {
        o.push_str("---\n\n");
        for (k, v) in &d.footer {
            let _ = writeln!(o, "- {}: {}", md_text(k), md_inline(v));
        }
    }
    o
}
