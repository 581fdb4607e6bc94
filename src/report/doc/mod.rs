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
    /// A link to another page of the same site (a relative address made
    /// by the tool, never one from the build); `code` shows its text in
    /// monospace. Outside HTML and Markdown only its text shows.
    Link {
        text: String,
        href: String,
        code: bool,
    },
}

impl Span {
    fn text(&self) -> &str {
        match self {
            Span::Text(s) | Span::Code(s) | Span::Strong(s) | Span::Status(_, s) => s,
            Span::Link { text, .. } => text,
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
    /// Append a link (see [`Span::Link`]) whose text is plain.
    pub fn link(mut self, text: impl Into<String>, href: impl Into<String>) -> Inline {
        self.0.push(Span::Link {
            text: text.into(),
            href: href.into(),
            code: false,
        });
        self
    }
    /// Append a link whose text is a name (monospace).
    pub fn link_code(mut self, text: impl Into<String>, href: impl Into<String>) -> Inline {
        self.0.push(Span::Link {
            text: text.into(),
            href: href.into(),
            code: true,
        });
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
    /// The first `n` columns of the text, styles kept: the span that
    /// crosses the limit ends in `…`, later spans are dropped.
    pub fn elided(&self, n: usize) -> Inline {
        let mut out = Vec::new();
        let mut left = n;
        for s in &self.0 {
            let w = cols(s.text());
            if w <= left {
                out.push(s.clone());
                left -= w;
                continue;
            }
            let cut = elide(s.text(), left);
            if !cut.is_empty() {
                out.push(match s {
                    Span::Text(_) => Span::Text(cut),
                    Span::Code(_) => Span::Code(cut),
                    Span::Strong(_) => Span::Strong(cut),
                    Span::Status(st, _) => Span::Status(*st, cut),
                    Span::Link { href, code, .. } => Span::Link {
                        text: cut,
                        href: href.clone(),
                        code: *code,
                    },
                });
            }
            break;
        }
        Inline(out)
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
    /// A table from column titles and kinds.
    pub fn of(columns: &[(&str, Kind)]) -> Table {
        Table::new(columns.iter().map(|&(t, k)| Column::new(t, k)).collect())
    }
    pub fn row(&mut self, cells: Vec<Inline>) {
        self.rows.push(cells);
    }
    /// A row of plain cells: text from the build as it is (each renderer
    /// escapes it for its medium), monospace in code columns.
    pub fn text_row(&mut self, cells: Vec<String>) {
        let row = cells
            .into_iter()
            .zip(&self.columns)
            .map(|(c, col)| match col.kind {
                Kind::Code if !c.is_empty() => Inline::code(c),
                _ => Inline::from(c),
            })
            .collect();
        self.rows.push(row);
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
    /// Source text (`lang` names it for Markdown and colouring; `prose`,
    /// a prompt's text, wraps in HTML).
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
    /// A word diff of two texts: each hunk is a run of words, those
    /// removed with [`Status::Removed`], those added with
    /// [`Status::Added`], the rest as plain text around them. HTML strikes
    /// out and underlines them (`<del>`, `<ins>`), folded unless `open`;
    /// a terminal and Markdown mark them `[-…-]` and `{+…+}`.
    Words {
        caption: Inline,
        hunks: Vec<Inline>,
        open: bool,
    },
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
    /// HTML, for pages of a site: a line of links above the title.
    pub nav: Option<Inline>,
    /// HTML, for pages of a site: the address of the site's search page,
    /// asked with a search box above the title (its query as `?q=`).
    pub search: Option<String>,
    /// HTML, for pages of a site: style sheets of the site to link (a
    /// relative address each), allowed by the policy's `'self'`.
    pub styles: Vec<String>,
    /// HTML, for pages of a site: script files of the site to run (a
    /// relative address each), allowed by the policy's `'self'`.
    pub script_files: Vec<String>,
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
                Block::Words { caption, hunks, .. } => inline(caption) || hunks.iter().any(inline),
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

impl Block {
    /// A word diff's markers for text outputs: `[-removed-]`, `{+added+}`.
    fn marked(hunk: &Inline) -> Inline {
        Inline(
            hunk.0
                .iter()
                .map(|s| match s {
                    Span::Status(Status::Removed, t) => {
                        Span::Status(Status::Removed, format!("[-{t}-]"))
                    }
                    Span::Status(Status::Added, t) => {
                        Span::Status(Status::Added, format!("{{+{t}+}}"))
                    }
                    s => s.clone(),
                })
                .collect(),
        )
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

mod html;
mod md;
mod term;
#[cfg(test)]
mod tests;

pub use html::*;
pub use md::*;
pub use term::*;
