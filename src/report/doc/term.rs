//! The terminal renderer: escaped, coloured when asked, fitted to a width.

use super::*;
use std::borrow::Cow;
use std::fmt::Write;

/// How the terminal renderer writes.
#[derive(Clone, Copy, Debug)]
pub struct Term {
    pub color: bool,
    /// Columns no line may exceed (None: no limit, e.g. into a pipe).
    pub width: Option<usize>,
}

/// `--color`: whether to colour output that goes to stdout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// `always` and `never` are obeyed; `auto` colours a terminal unless
    /// NO_COLOR is set (non-empty), and anything when CLICOLOR_FORCE is
    /// (non-zero), as the conventions of those variables say.
    pub fn enabled(self, to_terminal: bool) -> bool {
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty() && v != "0");
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                    false
                } else {
                    set("CLICOLOR_FORCE") || to_terminal
                }
            }
        }
    }
}

/// The width to render for: `COLUMNS` when set, else the terminal's when
/// stdout is one, else none (a pipe gets whole lines).
pub fn terminal_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(c.max(20));
    }
    tty_columns()
}

#[cfg(unix)]
fn tty_columns() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ fills a winsize struct we own; fd 1 is open.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some((ws.ws_col as usize).max(20))
}

#[cfg(not(unix))]
fn tty_columns() -> Option<usize> {
    None
}

/// Display columns of a (clean) string.
pub(super) fn cols(s: &str) -> usize {
    // Printable ASCII is one column a byte: most cells are, and a table of
    // ten thousand rows measures each cell several times.
    if s.bytes()
        .fold(true, |all, b| all & (0x20..0x7f).contains(&b))
    {
        return s.len();
    }
    UnicodeWidthStr::width(s)
}

/// `s` cut to `n` columns, the cut marked with `…`.
pub fn elide(s: &str, n: usize) -> String {
    if cols(s) <= n {
        return s.to_string();
    }
    if n == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for ch in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if w + cw > n - 1 {
            break;
        }
        out.push(ch);
        w += cw;
    }
    out.push('…');
    out
}

/// The one ANSI painter: `sgr` wraps text in a colour when colour is on.
/// The text must already be escaped for the terminal.
pub struct Paint(pub bool);

impl Paint {
    pub fn sgr(&self, code: &str, s: &str) -> String {
        let mut out = String::new();
        self.push_sgr(&mut out, code, s);
        out
    }

    /// [`Paint::sgr`] written at the end of `out`.
    pub fn push_sgr(&self, out: &mut String, code: &str, s: &str) {
        if self.0 && !s.is_empty() {
            let _ = write!(out, "\x1b[{code}m{s}\x1b[0m");
        } else {
            out.push_str(s);
        }
    }
}

/// Untrusted text made safe for a terminal: one line, nothing it would
/// act on (see [`escape::display`]).
pub(super) fn clean(s: &str) -> String {
    escape::display(s).into_owned()
}

/// An inline's spans, escaped, cut to `width` columns, painted.
pub(super) fn term_inline(i: &Inline, p: &Paint, width: Option<usize>) -> String {
    term_inline_sized(i, p, width, inline_cols(i)).0
}

/// The columns an inline takes once escaped.
fn inline_cols(i: &Inline) -> usize {
    i.0.iter().map(|s| cols(&escape::display(s.text()))).sum()
}

/// [`term_inline`] of an inline `total` columns wide (its
/// [`inline_cols`]), and the columns the result shows: a table of ten
/// thousand rows measures each cell once, not again to lay it out.
fn term_inline_sized(i: &Inline, p: &Paint, width: Option<usize>, total: usize) -> (String, usize) {
    let width = width.unwrap_or(usize::MAX);
    let cut = total > width;
    let mut left = if cut { width.saturating_sub(1) } else { width };
    let mut shown = 0;
    let mut out = String::new();
    for span in &i.0 {
        if left == 0 {
            break;
        }
        let escaped = escape::display(span.text());
        let mut w = cols(&escaped);
        // Copied only when cut: most cells are shown whole.
        let mut t = escaped;
        if w > left {
            let mut cut = elide(&t, left + 1);
            cut.pop();
            w = cols(&cut);
            t = Cow::Owned(cut);
        }
        left -= w;
        shown += w;
        match span {
            Span::Text(_) | Span::Link { code: false, .. } => out.push_str(&t),
            Span::Code(_) | Span::Link { code: true, .. } => p.push_sgr(&mut out, "36", &t),
            Span::Strong(_) => p.push_sgr(&mut out, "1", &t),
            Span::Status(st, _) => p.push_sgr(&mut out, st.sgr(), &t),
        }
    }
    if cut {
        out.push('…');
        shown += 1;
    }
    (out, shown)
}

/// An inline laid out in lines of at most `width` columns, broken at
/// spaces (a word longer than a line is elided).
pub(super) fn term_wrap(i: &Inline, p: &Paint, width: usize) -> Vec<String> {
    let mut words: Vec<(&Span, String)> = Vec::new();
    for span in &i.0 {
        let t = clean(span.text());
        let mut cur = String::new();
        for ch in t.chars() {
            if ch == ' ' && !cur.is_empty() && !cur.chars().all(|c| c == ' ') {
                words.push((span, std::mem::take(&mut cur)));
            }
            cur.push(ch);
        }
        if !cur.is_empty() {
            words.push((span, cur));
        }
    }
    let paint = |span: &Span, t: &str| match span {
        Span::Text(_) | Span::Link { code: false, .. } => t.to_string(),
        Span::Code(_) | Span::Link { code: true, .. } => p.sgr("36", t),
        Span::Strong(_) => p.sgr("1", t),
        Span::Status(st, _) => p.sgr(st.sgr(), t),
    };
    let mut lines = vec![String::new()];
    let mut used = 0;
    for (span, w) in words {
        let n = cols(&w);
        if used > 0 && used + n > width {
            lines.push(String::new());
            used = 0;
        }
        let w = if used == 0 {
            w.trim_start().to_string()
        } else {
            w
        };
        let w = elide(&w, width.saturating_sub(used).max(1));
        used += cols(&w);
        if let Some(l) = lines.last_mut() {
            l.push_str(&paint(span, &w));
        }
    }
    lines
}

pub(super) fn term_facts(
    o: &mut String,
    pairs: &[(String, Inline)],
    p: &Paint,
    t: &Term,
    indent: usize,
) {
    let kw = pairs.iter().map(|(k, _)| cols(k)).max().unwrap_or(0);
    for (k, v) in pairs {
        let key = format!("{k:<kw$}");
        let lead = " ".repeat(indent);
        let value = match t.width {
            // Facts are read, not scanned: long values wrap under themselves.
            Some(w) => term_wrap(v, p, w.saturating_sub(indent + kw + 2).max(8)),
            None => vec![term_inline(v, p, None)],
        };
        for (n, line) in value.iter().enumerate() {
            let head = if n == 0 {
                p.sgr("1", &clean(&key))
            } else {
                " ".repeat(kw)
            };
            let _ = writeln!(o, "{}", format!("{lead}{head}  {line}").trim_end());
        }
    }
}

/// Column widths that fit `width`: the widest columns give way first.
pub(super) fn fit(widths: &mut [usize], mins: &[usize], width: usize) {
    let sep = 2 * widths.len().saturating_sub(1);
    let total = |w: &[usize]| w.iter().sum::<usize>() + sep;
    for pass in 0..2 {
        while total(widths) > width {
            let floor = |i: usize| if pass == 0 { mins[i] } else { 1 };
            let Some(i) = (0..widths.len())
                .filter(|&i| widths[i] > floor(i))
                .max_by_key(|&i| widths[i])
            else {
                break;
            };
            widths[i] -= 1;
        }
    }
}

pub(super) fn term_table(o: &mut String, tb: &Table, p: &Paint, t: &Term, indent: usize) {
    let n = tb.columns.len();
    let shown = tb.limit.unwrap_or(usize::MAX).min(tb.rows.len());
    let rows = &tb.rows[..shown];
    // Titles are text like any other: escaped (a view may name a column
    // after something from the build).
    let titles: Vec<String> = tb.columns.iter().map(|c| clean(&c.title)).collect();
    let mut w: Vec<usize> = titles.iter().map(|t| cols(t)).collect();
    // Each cell measured once: for the columns' widths, then handed to its
    // rendering, which pads by the columns it shows.
    let measured: Vec<Vec<usize>> = rows
        .iter()
        .map(|r| r.iter().take(n).map(inline_cols).collect())
        .collect();
    for r in &measured {
        for (i, &c) in r.iter().enumerate() {
            w[i] = w[i].max(c);
        }
    }
    if let Some(width) = t.width {
        let mins: Vec<usize> = tb
            .columns
            .iter()
            .zip(&w)
            .map(|(c, &wi)| match c.kind {
                // Numbers and verdicts are short; names and text give way.
                Kind::Number | Kind::Status => wi,
                _ => wi.min(cols(&clean(&c.title)).max(8)),
            })
            .collect();
        fit(&mut w, &mins, width.saturating_sub(indent));
    }
    // Each cell rendered with the columns it shows.
    // Written straight into the output (a table of ten thousand rows made
    // a string a line and one a pad).
    let spaces = |o: &mut String, k: usize| o.extend(std::iter::repeat_n(' ', k));
    let line = |o: &mut String, cells: Vec<(String, usize)>| {
        let start = o.len();
        spaces(o, indent);
        for (i, (c, vis)) in cells.iter().enumerate() {
            let pad = w[i].saturating_sub(*vis);
            let last = i + 1 == n;
            if tb.columns[i].kind == Kind::Number {
                spaces(o, pad);
                o.push_str(c);
            } else {
                o.push_str(c);
                if !last {
                    spaces(o, pad);
                }
            }
            if !last {
                o.push_str("  ");
            }
        }
        let kept = o[start..].trim_end().len();
        o.truncate(start + kept);
        o.push('\n');
    };
    line(
        o,
        titles
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let t = elide(t, w[i]);
                let vis = cols(&t);
                (p.sgr("1", &t), vis)
            })
            .collect(),
    );
    line(o, w.iter().map(|&k| ("-".repeat(k), k)).collect());
    for (r, m) in rows.iter().zip(&measured) {
        line(
            o,
            (0..n)
                .map(|i| match (r.get(i), m.get(i)) {
                    (Some(c), Some(&total)) => term_inline_sized(c, p, Some(w[i]), total),
                    _ => (String::new(), 0),
                })
                .collect(),
        );
    }
    if tb.rows.len() > shown {
        let more = format!(
            "… and {} more (--json has all)",
            fmt::n(tb.rows.len() - shown)
        );
        let _ = writeln!(
            o,
            "{}{}",
            " ".repeat(indent),
            p.sgr("2", &elide(&more, t.width.unwrap_or(usize::MAX)))
        );
    }
}

/// The visible part of a rendered cell.
#[cfg(test)]
pub(super) fn strip_sgr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find('m') {
            Some(m) => rest = &after[m + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

pub(super) fn term_block(o: &mut String, b: &Block, p: &Paint, t: &Term, depth: usize) {
    let indent = if depth == 0 { 0 } else { 2 };
    let room = |extra: usize| t.width.map(|w| w.saturating_sub(indent + extra).max(1));
    match b {
        Block::Facts(f) => term_facts(o, f, p, t, indent),
        Block::Table(tb) => term_table(o, tb, p, t, indent),
        Block::List { items, limit } => {
            let shown = limit.unwrap_or(usize::MAX).min(items.len());
            for i in &items[..shown] {
                let _ = writeln!(o, "{}{}", " ".repeat(indent), term_inline(i, p, room(0)));
            }
            if items.len() > shown {
                let more = format!("… and {} more", fmt::n(items.len() - shown));
                let _ = writeln!(o, "{}{}", " ".repeat(indent), p.sgr("2", &more));
            }
        }
        // Notes are prose: wrapped, never cut (a reason or a hint must be
        // read whole).
        Block::Note(i) => match room(0) {
            Some(w) => {
                for line in term_wrap(i, p, w.max(8)) {
                    let _ = writeln!(o, "{}{}", " ".repeat(indent), line.trim_end());
                }
            }
            None => {
                let _ = writeln!(o, "{}{}", " ".repeat(indent), term_inline(i, p, None));
            }
        },
        Block::Ordered(items) => {
            for (k, i) in items.iter().enumerate() {
                let n = format!("{}. ", k + 1);
                let _ = writeln!(
                    o,
                    "{}{n}{}",
                    " ".repeat(indent),
                    term_inline(i, p, room(n.len()))
                );
            }
        }
        Block::Code {
            caption,
            text,
            max_lines,
            ..
        } => {
            if let Some(c) = caption {
                let caption = elide(&clean(c), room(0).unwrap_or(usize::MAX));
                let _ = writeln!(o, "{}{}", " ".repeat(indent), p.sgr("1", &caption));
            }
            code_lines(o, text, *max_lines, p, t, indent + 2, false);
        }
        Block::Diff {
            caption,
            text,
            max_lines,
        } => {
            if let Some(c) = caption {
                let _ = writeln!(o, "{}{}", " ".repeat(indent), term_inline(c, p, room(0)));
            }
            code_lines(o, text, *max_lines, p, t, indent + 2, true);
        }
        // A figure without a text rendition is for the page alone (the
        // blocks around it say the same in words).
        Block::Figure(f) if f.text.is_empty() => {}
        Block::Figure(f) => {
            let _ = writeln!(
                o,
                "{}{}",
                " ".repeat(indent),
                p.sgr(
                    "1",
                    &elide(&clean(&f.caption), room(0).unwrap_or(usize::MAX))
                )
            );
            for l in &f.text {
                let _ = writeln!(
                    o,
                    "{}{}",
                    " ".repeat(indent + 2),
                    elide(&clean(l), room(2).unwrap_or(usize::MAX))
                );
            }
        }
        Block::Words { caption, hunks, .. } => {
            let _ = writeln!(
                o,
                "{}{}",
                " ".repeat(indent),
                term_inline(caption, p, room(0))
            );
            for hunk in hunks {
                let hunk = Block::marked(hunk);
                match room(2) {
                    Some(w) => {
                        for line in term_wrap(&hunk, p, w.max(8)) {
                            let _ = writeln!(o, "{}{}", " ".repeat(indent + 2), line.trim_end());
                        }
                    }
                    None => {
                        let _ = writeln!(
                            o,
                            "{}{}",
                            " ".repeat(indent + 2),
                            term_inline(&hunk, p, None)
                        );
                    }
                }
            }
        }
        Block::Section(s) => {
            o.push('\n');
            let title = term_inline(&s.title, &Paint(false), room(0));
            let _ = writeln!(o, "{}{}", " ".repeat(indent), p.sgr("1", &title));
            for b in &s.blocks {
                term_block(o, b, p, t, depth + 1);
            }
        }
    }
}

pub(super) fn code_lines(
    o: &mut String,
    text: &str,
    max: Option<usize>,
    p: &Paint,
    t: &Term,
    indent: usize,
    diff: bool,
) {
    let total = text.lines().count();
    let max = max.unwrap_or(usize::MAX);
    let room = t
        .width
        .map_or(usize::MAX, |w| w.saturating_sub(indent).max(1));
    for l in text.lines().take(max) {
        // Tabs would make the width unknowable: four spaces.
        let l = elide(&clean(&l.replace('\t', "    ")), room);
        let l = if diff {
            match l.as_bytes().first() {
                Some(b'+') => p.sgr("32", &l),
                Some(b'-') => p.sgr("31", &l),
                Some(b'@') => p.sgr("36", &l),
                _ => l,
            }
        } else {
            l
        };
        let _ = writeln!(o, "{}{l}", " ".repeat(indent));
    }
    if total > max {
        let more = format!("… and {} more lines", fmt::n(total - max));
        let _ = writeln!(o, "{}{}", " ".repeat(indent), p.sgr("2", &more));
    }
}

/// Plain text (already escaped) with each line wrapped at spaces to
/// `width` columns, continuation lines indented by two; words longer than
/// a line are elided.
pub fn wrap_plain(s: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return s.to_string();
    };
    let mut out = String::new();
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let mut cur = String::new();
        for word in body.split(' ') {
            let lead = if cur.is_empty() { "" } else { " " };
            if !cur.is_empty() && cols(&cur) + 1 + cols(word) > width {
                out.push_str(&cur);
                out.push('\n');
                cur = "  ".to_string();
                cur.push_str(&elide(word, width.saturating_sub(2).max(1)));
            } else {
                cur.push_str(lead);
                cur.push_str(&elide(word, width.saturating_sub(cols(&cur)).max(1)));
            }
        }
        out.push_str(&cur);
        out.push_str(nl);
    }
    out
}

/// One table for the terminal (commands whose output is a table).
pub fn table_text(tb: &Table, t: &Term) -> String {
    let mut o = String::new();
    term_table(&mut o, tb, &Paint(t.color), t, 0);
    o
}

/// The terminal rendering: escaped, coloured when asked, never wider than
/// `t.width`.
pub fn terminal(d: &Doc, t: &Term) -> String {
    let p = Paint(t.color);
    let mut o = String::new();
    let w = t.width;
    if !d.bare {
        let _ = writeln!(
            o,
            "{}",
            p.sgr("1", &term_inline(&d.title, &Paint(false), w))
        );
    }
    if !d.summary.is_empty() {
        if !d.bare {
            o.push('\n');
        }
        term_facts(&mut o, &d.summary, &p, t, 2);
    }
    for b in &d.blocks {
        term_block(&mut o, b, &p, t, 0);
    }
    if !d.footer.is_empty() {
        o.push('\n');
        term_facts(&mut o, &d.footer, &p, t, 0);
    }
    o
}
