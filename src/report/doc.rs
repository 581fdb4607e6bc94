//! One document model for every human view, rendered three ways: for a
//! terminal ([`terminal`]: colour, width-aware), as Markdown ([`markdown`])
//! and as one self-contained HTML page ([`html`]: inline CSS and SVG, no
//! network).
//!
//! A view builds its [`Doc`] once from its facts; it never formats for a
//! particular output. Text from the build (names, paths, literals) goes in
//! as it is: each renderer escapes it for its medium (control and
//! bidirectional characters become visible escapes on a terminal, `<` and
//! `&` become entities in HTML, `|` and backticks are neutralised in
//! Markdown).
//!
//! ```
//! use cc_teardown::report::doc::{Block, Column, Doc, Inline, Kind, Status, Table, Term, fmt};
//!
//! let mut doc = Doc::new("Claude Code 2.1.220");
//! doc.summary(vec![
//!     ("version", Inline::code("2.1.220")),
//!     ("gate", Inline::status(Status::Block, "blocked by tengu_x = false")),
//! ]);
//! let mut flags = Table::new(vec![Column::new("flag", Kind::Code), Column::new("sites", Kind::Number)]);
//! flags.row(vec![Inline::code("tengu_x"), fmt::num(1234u64).into()]);
//! doc.section("flags", "Flags", vec![Block::Table(flags)]);
//! let text = doc.terminal(&Term { color: false, width: Some(60) });
//! assert!(text.contains("1,234"));
//! assert!(doc.html().contains("<table"));
//! assert!(doc.markdown().contains("| `tengu_x` |"));
//! ```

use super::escape;
use std::fmt::Write;
use unicode_width::UnicodeWidthStr;

/// Numbers, counts and plurals: the one formatter every view uses.
pub mod fmt {
    /// 1234567 → "1,234,567".
    pub fn num(n: impl Into<u64>) -> String {
        let s = n.into().to_string();
        let mut out = String::with_capacity(s.len() + s.len() / 3);
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(ch);
        }
        out
    }

    /// `num` for a usize.
    pub fn n(n: usize) -> String {
        num(n as u64)
    }

    /// "1 symbol", "2,048 symbols".
    pub fn count(n: usize, one: &str, many: &str) -> String {
        format!("{} {}", self::n(n), if n == 1 { one } else { many })
    }

    /// "1 byte", "21,635,672 bytes".
    pub fn bytes(n: u64) -> String {
        format!("{} {}", num(n), if n == 1 { "byte" } else { "bytes" })
    }
}

/// How a piece of text is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Passes, present, good.
    Pass,
    /// Blocks, fails.
    Block,
    /// Cannot be told statically.
    Unknown,
    Added,
    Removed,
    Changed,
    /// Secondary text.
    Muted,
}

impl Status {
    fn class(self) -> &'static str {
        match self {
            Status::Pass => "s-pass",
            Status::Block => "s-block",
            Status::Unknown => "s-unknown",
            Status::Added => "s-added",
            Status::Removed => "s-removed",
            Status::Changed => "s-changed",
            Status::Muted => "s-muted",
        }
    }
    fn sgr(self) -> &'static str {
        match self {
            Status::Pass | Status::Added => "32",
            Status::Block | Status::Removed => "31",
            Status::Unknown => "33",
            Status::Changed => "36",
            Status::Muted => "2",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Span {
    Text(String),
    /// Names, hashes, expressions: monospace.
    Code(String),
    Strong(String),
    Status(Status, String),
}

impl Span {
    fn text(&self) -> &str {
        match self {
            Span::Text(s) | Span::Code(s) | Span::Strong(s) | Span::Status(_, s) => s,
        }
    }
}

/// A line of rich text: spans of plain text, code, emphasis and status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inline(pub Vec<Span>);

impl Inline {
    pub fn new() -> Inline {
        Inline(Vec::new())
    }
    pub fn code(s: impl Into<String>) -> Inline {
        Inline(vec![Span::Code(s.into())])
    }
    pub fn status(st: Status, s: impl Into<String>) -> Inline {
        Inline(vec![Span::Status(st, s.into())])
    }
    pub fn strong(s: impl Into<String>) -> Inline {
        Inline(vec![Span::Strong(s.into())])
    }
    /// Append plain text.
    pub fn t(mut self, s: impl Into<String>) -> Inline {
        self.0.push(Span::Text(s.into()));
        self
    }
    /// Append code.
    pub fn c(mut self, s: impl Into<String>) -> Inline {
        self.0.push(Span::Code(s.into()));
        self
    }
    /// Append strong text.
    pub fn b(mut self, s: impl Into<String>) -> Inline {
        self.0.push(Span::Strong(s.into()));
        self
    }
    /// Append text with a status.
    pub fn s(mut self, st: Status, s: impl Into<String>) -> Inline {
        self.0.push(Span::Status(st, s.into()));
        self
    }
    /// Append another line's spans.
    pub fn extend(mut self, other: Inline) -> Inline {
        self.0.extend(other.0);
        self
    }
    /// Names as code, joined by ", ".
    pub fn names<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Inline {
        let mut out = Inline::new();
        for (i, n) in names.into_iter().enumerate() {
            if i > 0 {
                out = out.t(", ");
            }
            out = out.c(n.as_ref());
        }
        out
    }
    /// The text without styling.
    pub fn plain(&self) -> String {
        self.0.iter().map(Span::text).collect()
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|s| s.text().is_empty())
    }
}

impl From<&str> for Inline {
    fn from(s: &str) -> Inline {
        Inline(vec![Span::Text(s.to_string())])
    }
}

impl From<String> for Inline {
    fn from(s: String) -> Inline {
        Inline(vec![Span::Text(s)])
    }
}

/// What a table column holds: decides alignment, font and elision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// Right-aligned, tabular figures.
    Number,
    /// Hashes, names, expressions: monospace.
    Code,
    /// A verdict or change, coloured by its spans' status.
    Status,
}

#[derive(Clone, Debug)]
pub struct Column {
    pub title: String,
    pub kind: Kind,
}

impl Column {
    pub fn new(title: &str, kind: Kind) -> Column {
        Column {
            title: title.to_string(),
            kind,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Inline>>,
    /// Rows shown before "and N more" (HTML has the rest collapsed).
    pub limit: Option<usize>,
    /// HTML: a filter box above the table (the page reads without it).
    pub filter: bool,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            rows: Vec::new(),
            limit: None,
            filter: false,
        }
    }
    pub fn row(&mut self, cells: Vec<Inline>) {
        self.rows.push(cells);
    }
    pub fn limit(mut self, n: usize) -> Table {
        self.limit = Some(n);
        self
    }
}

/// An SVG picture, with a text rendition for the terminal and Markdown.
#[derive(Clone, Debug)]
pub struct Figure {
    pub caption: String,
    /// A complete `<svg>` element (see [`super::svg`]), already escaped.
    pub svg: String,
    pub text: Vec<String>,
}

#[derive(Clone, Debug)]
pub enum Block {
    /// Key/value facts.
    Facts(Vec<(String, Inline)>),
    Table(Table),
    /// Items, of which `limit` are shown before "and N more".
    List {
        items: Vec<Inline>,
        limit: Option<usize>,
    },
    /// Numbered steps (a gate's conditions).
    Ordered(Vec<Inline>),
    Note(Inline),
    /// Source text (`lang` names it for Markdown and colouring).
    Code {
        lang: &'static str,
        caption: Option<String>,
        text: String,
        max_lines: Option<usize>,
    },
    /// A unified diff, of which `max_lines` lines are shown.
    Diff {
        caption: Option<Inline>,
        text: String,
        max_lines: Option<usize>,
    },
    Figure(Figure),
    Section(Section),
}

#[derive(Clone, Debug)]
pub struct Section {
    /// The anchor (HTML id, Markdown link).
    pub id: String,
    pub title: Inline,
    pub blocks: Vec<Block>,
    /// HTML: collapsed unless open.
    pub open: bool,
}

impl Section {
    pub fn new(id: &str, title: impl Into<Inline>, blocks: Vec<Block>) -> Section {
        Section {
            id: slug(id),
            title: title.into(),
            blocks,
            open: true,
        }
    }
    pub fn closed(mut self) -> Section {
        self.open = false;
        self
    }
}

/// A view's document.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    pub title: Inline,
    /// The summary box, first on every rendering.
    pub summary: Vec<(String, Inline)>,
    /// A table of contents (HTML and Markdown) after the summary.
    pub toc: bool,
    pub blocks: Vec<Block>,
    /// Provenance: the last lines of the page.
    pub footer: Vec<(String, Inline)>,
    /// HTML: a small inline script filters tables (allowed by a hash in
    /// the page's content security policy; the page reads without it).
    pub scripts: bool,
    /// Terminal: no title line. Views whose answer is a table (`ls`,
    /// `hash`, `symbols`) start with it, so the text stays easy to pipe
    /// through `grep` and `awk`; Markdown and HTML keep the title.
    pub bare: bool,
}

impl Doc {
    pub fn new(title: impl Into<Inline>) -> Doc {
        Doc {
            title: title.into(),
            ..Doc::default()
        }
    }
    pub fn summary(&mut self, facts: Vec<(&str, Inline)>) {
        self.summary = facts.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    }
    pub fn section(&mut self, id: &str, title: impl Into<Inline>, blocks: Vec<Block>) {
        self.blocks
            .push(Block::Section(Section::new(id, title, blocks)));
    }
    pub fn push(&mut self, b: Block) {
        self.blocks.push(b);
    }
    /// A document whose terminal rendering has no title line ([`Doc::bare`]).
    pub fn bare(mut self) -> Doc {
        self.bare = true;
        self
    }
    pub fn terminal(&self, t: &Term) -> String {
        terminal(self, t)
    }
    /// Whether any text from the build holds a character a terminal would
    /// act on (escaped by every renderer). Commands colour only documents
    /// without one, so every escape sequence printed is plainly theirs.
    pub fn needs_escape(&self) -> bool {
        fn inline(i: &Inline) -> bool {
            i.0.iter().any(|s| escape::needs_escape(s.text()))
        }
        fn block(b: &Block) -> bool {
            match b {
                Block::Facts(f) => f.iter().any(|(k, v)| escape::needs_escape(k) || inline(v)),
                Block::Table(t) => t.rows.iter().flatten().any(inline),
                Block::List { items, .. } | Block::Ordered(items) => items.iter().any(inline),
                Block::Note(i) => inline(i),
                Block::Code { text, .. } => escape::needs_escape(text),
                Block::Diff { caption, text, .. } => {
                    caption.as_ref().is_some_and(inline) || escape::needs_escape(text)
                }
                Block::Figure(f) => f.text.iter().any(|l| escape::needs_escape(l)),
                Block::Section(s) => inline(&s.title) || s.blocks.iter().any(block),
            }
        }
        inline(&self.title)
            || self.summary.iter().any(|(_, v)| inline(v))
            || self.blocks.iter().any(block)
    }
    pub fn markdown(&self) -> String {
        markdown(self)
    }
    pub fn html(&self) -> String {
        html(self)
    }
}

/// Facts from (key, value) pairs.
pub fn facts(pairs: Vec<(&str, Inline)>) -> Block {
    Block::Facts(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// An anchor made of a title: lowercase letters, digits and dashes.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

// ---------------------------------------------------------------------------
// Terminal

/// How the terminal renderer writes.
#[derive(Clone, Copy, Debug)]
pub struct Term {
    pub color: bool,
    /// Columns no line may exceed (None: no limit, e.g. into a pipe).
    pub width: Option<usize>,
}

/// `--color`: whether to colour output that goes to stdout.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
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
fn cols(s: &str) -> usize {
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
        if self.0 && !s.is_empty() {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// Untrusted text made safe for a terminal: one line, nothing it would
/// act on (see [`escape::display`]).
fn clean(s: &str) -> String {
    escape::display(s).into_owned()
}

/// An inline's spans, escaped, cut to `width` columns, painted.
fn term_inline(i: &Inline, p: &Paint, width: Option<usize>) -> String {
    let mut left = width.unwrap_or(usize::MAX);
    let total: usize = i.0.iter().map(|s| cols(&clean(s.text()))).sum();
    let cut = total > left;
    if cut {
        left = left.saturating_sub(1);
    }
    let mut out = String::new();
    for span in &i.0 {
        if left == 0 {
            break;
        }
        let mut t = clean(span.text());
        if cols(&t) > left {
            t = elide(&t, left + 1);
            t.pop();
        }
        left -= cols(&t);
        out.push_str(&match span {
            Span::Text(_) => t,
            Span::Code(_) => p.sgr("36", &t),
            Span::Strong(_) => p.sgr("1", &t),
            Span::Status(st, _) => p.sgr(st.sgr(), &t),
        });
    }
    if cut {
        out.push('…');
    }
    out
}

/// An inline laid out in lines of at most `width` columns, broken at
/// spaces (a word longer than a line is elided).
fn term_wrap(i: &Inline, p: &Paint, width: usize) -> Vec<String> {
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
        Span::Text(_) => t.to_string(),
        Span::Code(_) => p.sgr("36", t),
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

fn term_facts(o: &mut String, pairs: &[(String, Inline)], p: &Paint, t: &Term, indent: usize) {
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
fn fit(widths: &mut [usize], mins: &[usize], width: usize) {
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

fn term_table(o: &mut String, tb: &Table, p: &Paint, t: &Term, indent: usize) {
    let n = tb.columns.len();
    let shown = tb.limit.unwrap_or(usize::MAX).min(tb.rows.len());
    let rows = &tb.rows[..shown];
    // Titles are text like any other: escaped (a view may name a column
    // after something from the build).
    let titles: Vec<String> = tb.columns.iter().map(|c| clean(&c.title)).collect();
    let mut w: Vec<usize> = titles.iter().map(|t| cols(t)).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(cols(&clean(&c.plain())));
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
    let line = |o: &mut String, cells: Vec<String>| {
        let mut s = " ".repeat(indent);
        for (i, c) in cells.iter().enumerate() {
            let vis = cols(&strip_sgr(c));
            let pad = w[i].saturating_sub(vis);
            let last = i + 1 == n;
            if tb.columns[i].kind == Kind::Number {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if !last {
                    s.push_str(&" ".repeat(pad));
                }
            }
            if !last {
                s.push_str("  ");
            }
        }
        o.push_str(s.trim_end());
        o.push('\n');
    };
    line(
        o,
        titles
            .iter()
            .enumerate()
            .map(|(i, t)| p.sgr("1", &elide(t, w[i])))
            .collect(),
    );
    line(o, w.iter().map(|&k| "-".repeat(k)).collect());
    for r in rows {
        line(
            o,
            (0..n)
                .map(|i| {
                    r.get(i)
                        .map(|c| term_inline(c, p, Some(w[i])))
                        .unwrap_or_default()
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
fn strip_sgr(s: &str) -> String {
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

fn term_block(o: &mut String, b: &Block, p: &Paint, t: &Term, depth: usize) {
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

fn code_lines(
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

// ---------------------------------------------------------------------------
// Markdown

/// Plain text for Markdown: characters that would start markup are
/// backslash-escaped, `<` and `>` too (raw HTML in Markdown).
fn md_text(s: &str) -> String {
    let cs: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let word = |i: Option<usize>| {
        i.and_then(|i| cs.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    for (i, &c) in cs.iter().enumerate() {
        if escape::is_unsafe(c) {
            // The visible escape (`\x1b`) as it is, not markup-escaped.
            out.push_str(&escape::display(&c.to_string()));
            continue;
        }
        // An underscore inside a word (tengu_x_y) is no emphasis in
        // CommonMark: left as it is, names stay searchable.
        let inner_underscore = c == '_' && word(i.checked_sub(1)) && word(Some(i + 1));
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~'
        ) && !inner_underscore
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span whose fence is longer than any run of backticks inside.
fn md_code(s: &str) -> String {
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

/// An inline as Markdown pieces that must not be split.
fn md_pieces(i: &Inline) -> Vec<String> {
    let mut out = Vec::new();
    for s in &i.0 {
        match s {
            Span::Text(t) | Span::Status(_, t) => {
                // Words stay whole; spaces are where lines may wrap.
                let e = md_text(t);
                let mut cur = String::new();
                for ch in e.chars() {
                    if ch == ' ' {
                        out.push(std::mem::take(&mut cur));
                        cur.push(' ');
                    } else {
                        cur.push(ch);
                    }
                }
                out.push(cur);
            }
            Span::Code(t) => out.push(md_code(t)),
            Span::Strong(t) => out.push(format!("**{}**", md_text(t))),
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

fn md_inline(i: &Inline) -> String {
    md_pieces(i).concat()
}

/// An inline wrapped at `width` columns, continuation lines indented.
fn md_wrapped(i: &Inline, width: usize, indent: &str) -> String {
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

fn md_table_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn md_block(o: &mut String, b: &Block, depth: usize) {
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
                o.push_str(&md_table_row(&r.iter().map(md_inline).collect::<Vec<_>>()));
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
const MD_LINE: usize = 240;

/// The most items or rows an HTML page keeps collapsed after a capped list:
/// past this, the JSON output has them.
const HTML_MORE: usize = 500;

/// A fenced block; `line_cap` elides long lines (diffs: a minified line
/// can run to kilobytes), never source that must stay exact.
fn md_fence(o: &mut String, lang: &str, text: &str, max: Option<usize>, line_cap: Option<usize>) {
    let longest = text
        .lines()
        .map(|l| l.trim_start().chars().take_while(|&c| c == '`').count())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
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
type TocEntry<'a> = (&'a str, &'a Inline, Vec<(&'a str, &'a Inline)>);

fn toc_entries(blocks: &[Block]) -> Vec<TocEntry<'_>> {
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

// ---------------------------------------------------------------------------
// HTML

/// Text for HTML content and attribute values.
pub fn h(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn html_inline(i: &Inline) -> String {
    let mut o = String::new();
    for s in &i.0 {
        match s {
            Span::Text(t) => o.push_str(&h(t)),
            Span::Code(t) => {
                let _ = write!(o, "<code>{}</code>", h(t));
            }
            Span::Strong(t) => {
                let _ = write!(o, "<strong>{}</strong>", h(t));
            }
            Span::Status(st, t) => {
                let _ = write!(o, "<span class=\"{}\">{}</span>", st.class(), h(t));
            }
        }
    }
    o
}

fn html_facts(o: &mut String, f: &[(String, Inline)], class: &str) {
    let _ = writeln!(o, "<dl class=\"{class}\">");
    for (k, v) in f {
        let _ = writeln!(o, "<dt>{}</dt><dd>{}</dd>", h(k), html_inline(v));
    }
    o.push_str("</dl>\n");
}

fn html_rows(o: &mut String, tb: &Table, rows: &[Vec<Inline>]) {
    for r in rows {
        o.push_str("<tr>");
        for (i, c) in tb.columns.iter().enumerate() {
            let cell = r.get(i).map(html_inline).unwrap_or_default();
            let _ = write!(o, "<td class=\"k-{}\">{cell}</td>", kind_class(c.kind));
        }
        o.push_str("</tr>\n");
    }
}

fn kind_class(k: Kind) -> &'static str {
    match k {
        Kind::Text => "text",
        Kind::Number => "num",
        Kind::Code => "code",
        Kind::Status => "status",
    }
}

fn html_table(o: &mut String, tb: &Table) {
    if tb.filter {
        o.push_str(
            "<p class=\"filter\"><label>Filter: <input type=\"search\" class=\"filter-box\" placeholder=\"type to filter rows; click a header to sort\"></label></p>\n",
        );
    }
    let head = |o: &mut String| {
        o.push_str("<table><thead><tr>");
        for c in &tb.columns {
            let _ = write!(
                o,
                "<th class=\"k-{}\">{}</th>",
                kind_class(c.kind),
                h(&c.title)
            );
        }
        o.push_str("</tr></thead><tbody>\n");
    };
    let shown = tb.limit.unwrap_or(usize::MAX).min(tb.rows.len());
    head(o);
    html_rows(o, tb, &tb.rows[..shown]);
    o.push_str("</tbody></table>\n");
    if tb.rows.len() > shown {
        let _ = writeln!(
            o,
            "<details class=\"more\"><summary>and {} more</summary>",
            fmt::n(tb.rows.len() - shown)
        );
        head(o);
        let rest = &tb.rows[shown..];
        html_rows(o, tb, &rest[..rest.len().min(HTML_MORE)]);
        o.push_str("</tbody></table>\n");
        if rest.len() > HTML_MORE {
            let _ = writeln!(
                o,
                "<p class=\"more\">… and {} more in the JSON output.</p>",
                fmt::n(rest.len() - HTML_MORE)
            );
        }
        o.push_str("</details>\n");
    }
}

/// A little colour for JavaScript: keywords, strings, numbers, comments.
/// Line by line, so a string or comment across lines is coloured on its
/// first line only; the text is never changed.
fn js_colour(line: &str) -> String {
    let cs: Vec<char> = line.chars().collect();
    let mut o = String::new();
    let mut i = 0;
    let span = |o: &mut String, class: &str, s: &str| {
        let _ = write!(o, "<span class=\"{class}\">{}</span>", h(s));
    };
    while i < cs.len() {
        let c = cs[i];
        if c == '/' && cs.get(i + 1) == Some(&'/') {
            span(&mut o, "j-com", &cs[i..].iter().collect::<String>());
            break;
        }
        if c == '"' || c == '\'' || c == '`' {
            let mut j = i + 1;
            while j < cs.len() && cs[j] != c {
                if cs[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(cs.len());
            span(&mut o, "j-str", &cs[i..end].iter().collect::<String>());
            i = end;
            continue;
        }
        if c.is_ascii_digit() && (i == 0 || !(cs[i - 1].is_alphanumeric() || cs[i - 1] == '_')) {
            let mut j = i;
            while j < cs.len() && (cs[j].is_ascii_alphanumeric() || cs[j] == '.') {
                j += 1;
            }
            span(&mut o, "j-num", &cs[i..j].iter().collect::<String>());
            i = j;
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let mut j = i;
            while j < cs.len() && (cs[j].is_alphanumeric() || cs[j] == '_' || cs[j] == '$') {
                j += 1;
            }
            let w: String = cs[i..j].iter().collect();
            if crate::js::keywords::is_highlighted(&w) {
                span(&mut o, "j-kw", &w);
            } else {
                o.push_str(&h(&w));
            }
            i = j;
            continue;
        }
        o.push_str(&h(&c.to_string()));
        i += 1;
    }
    o
}

fn html_code(o: &mut String, text: &str, max: Option<usize>, diff: bool, js: bool) {
    let total = text.lines().count();
    let max = max.unwrap_or(usize::MAX);
    o.push_str(if diff {
        "<pre class=\"diff\"><code>"
    } else {
        "<pre><code>"
    });
    for l in text.lines().take(max) {
        let (class, body) = match (diff, l.as_bytes().first()) {
            (true, Some(b'+')) => ("d-add", l),
            (true, Some(b'-')) => ("d-del", l),
            (true, Some(b'@')) => ("d-hunk", l),
            _ => ("", l),
        };
        let inner = if js && class != "d-hunk" {
            // A diff line's first character is its sign, kept out of the
            // colouring. It is a character, not a byte: a line of a word
            // diff may start with any letter (`é…` after a line break).
            match body.chars().next() {
                Some(sign) if diff => {
                    let rest = &body[sign.len_utf8()..];
                    format!("{}{}", h(&sign.to_string()), js_colour(rest))
                }
                _ => js_colour(body),
            }
        } else {
            h(body)
        };
        // Each line is a block (for its shading): a newline between two
        // inside <pre> would show as an empty line.
        if class.is_empty() {
            let _ = write!(o, "<span class=\"ln\">{inner}</span>");
        } else {
            let _ = write!(o, "<span class=\"ln {class}\">{inner}</span>");
        }
    }
    o.push_str("</code></pre>\n");
    if total > max {
        let _ = writeln!(
            o,
            "<p class=\"more\">… and {} more lines (the JSON output has all).</p>",
            fmt::n(total - max)
        );
    }
}

fn html_block(o: &mut String, b: &Block, depth: usize) {
    match b {
        Block::Facts(f) => html_facts(o, f, "facts"),
        Block::Table(tb) => html_table(o, tb),
        Block::List { items, limit } => {
            let shown = limit.unwrap_or(usize::MAX).min(items.len());
            // A list of bare names reads better in columns.
            let names = items
                .iter()
                .all(|i| matches!(i.0.as_slice(), [Span::Code(_)]));
            let ul = if names {
                "<ul class=\"names\">"
            } else {
                "<ul>"
            };
            o.push_str(ul);
            o.push('\n');
            for i in &items[..shown] {
                let _ = writeln!(o, "<li>{}</li>", html_inline(i));
            }
            o.push_str("</ul>\n");
            if items.len() > shown {
                let _ = writeln!(
                    o,
                    "<details class=\"more\"><summary>and {} more</summary>{ul}",
                    fmt::n(items.len() - shown)
                );
                let rest = &items[shown..];
                for i in rest.iter().take(HTML_MORE) {
                    let _ = writeln!(o, "<li>{}</li>", html_inline(i));
                }
                if rest.len() > HTML_MORE {
                    let _ = writeln!(
                        o,
                        "<li class=\"more\">… and {} more in the JSON output</li>",
                        fmt::n(rest.len() - HTML_MORE)
                    );
                }
                o.push_str("</ul></details>\n");
            }
        }
        Block::Note(i) => {
            let _ = writeln!(o, "<p>{}</p>", html_inline(i));
        }
        Block::Ordered(items) => {
            o.push_str("<ol>\n");
            for i in items {
                let _ = writeln!(o, "<li>{}</li>", html_inline(i));
            }
            o.push_str("</ol>\n");
        }
        Block::Code {
            lang,
            caption,
            text,
            max_lines,
        } => {
            let _ = writeln!(
                o,
                "<details class=\"code\"><summary>{}</summary>",
                h(caption.as_deref().unwrap_or("code"))
            );
            html_code(o, text, *max_lines, false, *lang == "js");
            o.push_str("</details>\n");
        }
        Block::Diff {
            caption,
            text,
            max_lines,
        } => {
            let _ = writeln!(
                o,
                "<details class=\"code\"><summary>{}</summary>",
                caption
                    .as_ref()
                    .map_or_else(|| "diff".to_string(), html_inline)
            );
            html_code(o, text, *max_lines, true, true);
            o.push_str("</details>\n");
        }
        Block::Figure(f) => {
            let _ = writeln!(
                o,
                "<figure>{}<figcaption>{}</figcaption></figure>",
                f.svg,
                h(&f.caption)
            );
        }
        Block::Section(s) => {
            let hn = (depth + 2).min(6);
            let _ = writeln!(
                o,
                "<section id=\"{}\"><details{}><summary><h{hn}>{}</h{hn}></summary>",
                h(&s.id),
                if s.open { " open" } else { "" },
                html_inline(&s.title)
            );
            for b in &s.blocks {
                html_block(o, b, depth + 1);
            }
            o.push_str("</details></section>\n");
        }
    }
}

const CSS: &str = "\
:root{--fg:#1d1f21;--muted:#666;--line:#d8dadc;--pass:#17803d;--block:#c62828;--unknown:#a66300;--changed:#1565c0;--bg2:#f5f6f7}
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;max-width:72rem;margin:1.5rem auto;padding:0 1rem;color:var(--fg)}
h1{font-size:1.5rem;margin:.2rem 0 1rem}
h2{display:inline;font-size:1.2rem}h3{display:inline;font-size:1.05rem}h4,h5,h6{display:inline;font-size:1rem}
summary{cursor:pointer;margin:.9rem 0 .4rem}
section{border-top:1px solid var(--line)}section section{border-top:0;margin-left:.5rem}
code,pre,.k-code,.k-num,.box dd{font-family:ui-monospace,'SF Mono',Menlo,Consolas,'DejaVu Sans Mono',monospace}
code{font-size:.9em;overflow-wrap:anywhere}
.k-num{text-align:right;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
td,th{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top}
th,th.k-code,th.k-num{background:var(--bg2);font-family:inherit}th.k-num{text-align:right}
td.k-code{font-size:.85rem;overflow-wrap:anywhere}
pre{background:var(--bg2);padding:.6rem .8rem;overflow:auto;max-height:36rem;font-size:.82rem;line-height:1.35}
pre .ln{display:block;white-space:pre}pre .ln:empty::before{content:' '}
.d-add{background:#e6f4ea}.d-del{background:#fdecea}.d-hunk{color:var(--changed)}
.j-kw{color:#8e24aa}.j-str{color:#2e7d32}.j-num{color:#c2185b}.j-com{color:var(--muted)}
.box{border:2px solid var(--fg);border-radius:6px;padding:.6rem 1rem;margin:0 0 1rem;background:#fbfbfc}
.box h2{display:block;margin:0 0 .4rem;font-size:1.1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.4rem 0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.box dd{font-family:inherit}
.s-pass{color:var(--pass);font-weight:600}.s-block{color:var(--block);font-weight:600}
.s-unknown{color:var(--unknown);font-weight:600}.s-added{color:var(--pass)}.s-removed{color:var(--block)}
.s-changed{color:var(--changed)}.s-muted{color:var(--muted)}
nav.toc{font-size:.92rem;column-width:16rem;margin:0 0 1rem}nav.toc ul{margin:.2rem 0;padding-left:1.2rem}
figure{margin:.6rem 0}figcaption{color:var(--muted);font-size:.85rem}
svg{max-width:100%;height:auto}
.more{color:var(--muted)}ul.names{column-width:22rem}details.more li{color:var(--fg)}
footer{border-top:1px solid var(--line);margin-top:2rem;color:var(--muted);font-size:.88rem}
.filter input{font:inherit;padding:.15rem .4rem;width:18rem}
.filter+table th{cursor:pointer}.filter+table th[aria-sort=ascending]::after{content:' ▲'}.filter+table th[aria-sort=descending]::after{content:' ▼'}
";

/// The only script: the table after each filter box is filtered by what
/// is typed in it, and sorted by a click on a column's header (numbers by
/// value, separators ignored; a second click reverses). Without it the
/// table is still whole, in its own order.
const FILTER_JS: &str = "document.querySelectorAll('.filter-box').forEach(function(b){var t=b.closest('p').nextElementSibling;b.addEventListener('input',function(){var q=b.value.toLowerCase();t.querySelectorAll('tbody tr').forEach(function(r){r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});});t.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',function(){var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows),num=th.classList.contains('k-num'),d=th.getAttribute('aria-sort')==='ascending'?-1:1;t.querySelectorAll('thead th').forEach(function(o){o.removeAttribute('aria-sort');});th.setAttribute('aria-sort',d===1?'ascending':'descending');var key=function(r){var c=r.cells[i].textContent;return num?(parseFloat(c.replace(/,/g,''))||0):c.toLowerCase();};rows.sort(function(x,y){var a=key(x),c=key(y);return (a<c?-1:a>c?1:0)*d;});rows.forEach(function(r){tb.appendChild(r);});});});});";

/// The HTML page: self-contained (inline style and pictures), and a
/// content security policy that forbids every request, so nothing the page
/// holds can reach the network.
pub fn html(d: &Doc) -> String {
    use base64::Engine;
    use sha2::Digest;
    let mut o = String::new();
    let script_src = if d.scripts {
        let hash = sha2::Sha256::digest(FILTER_JS.as_bytes());
        format!(
            "; script-src 'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(hash)
        )
    } else {
        String::new()
    };
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'{script_src}\">\n\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n\
<title>{}</title>\n<style>\n{CSS}</style></head><body>\n<h1>{}</h1>\n",
        h(&d.title.plain()),
        html_inline(&d.title)
    );
    if !d.summary.is_empty() {
        o.push_str("<div class=\"box\" id=\"summary\"><h2>Summary</h2>\n");
        html_facts(&mut o, &d.summary, "summary");
        o.push_str("</div>\n");
    }
    if d.toc {
        o.push_str("<nav class=\"toc\" id=\"contents\"><strong>Contents</strong><ul>\n");
        for (id, title, subs) in toc_entries(&d.blocks) {
            let _ = write!(o, "<li><a href=\"#{}\">{}</a>", h(id), html_inline(title));
            if !subs.is_empty() {
                o.push_str("<ul>");
                for (sid, st) in subs {
                    let _ = write!(
                        o,
                        "<li><a href=\"#{}\">{}</a></li>",
                        h(sid),
                        html_inline(st)
                    );
                }
                o.push_str("</ul>");
            }
            o.push_str("</li>\n");
        }
        o.push_str("</ul></nav>\n");
    }
    for b in &d.blocks {
        html_block(&mut o, b, 0);
    }
    if !d.footer.is_empty() {
        o.push_str("<footer>\n");
        html_facts(&mut o, &d.footer, "provenance");
        o.push_str("</footer>\n");
    }
    if d.scripts {
        let _ = writeln!(o, "<script>{FILTER_JS}</script>");
    }
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
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
}
