//! The document model and its three renderers over arbitrary documents:
//! headings, facts, tables, lists, notes, code, diffs (among them the word
//! diffs of `diff`'s tool and prompt sections, made from two fuzzed texts),
//! figures and nested sections, every text of arbitrary Unicode (controls,
//! bidirectional controls, wide and combining characters, anything a
//! build may hold), rendered for a terminal (colour on and off, any width),
//! as Markdown and as HTML.
//!
//! Whatever the document, no renderer may panic, and:
//! - the terminal rendering without colour holds no character a terminal
//!   acts on but its own line breaks;
//! - Markdown and HTML, escaped as the commands write them, hold none but
//!   line breaks and tabs;
//! - in HTML every `<` starts one of the page's own tags: a `<` of the
//!   input is always `&lt;`.
#![no_main]

use cc_teardown::analysis::diff::lines::DiffBudget;
use cc_teardown::analysis::surface::{prompts, tools};
use cc_teardown::report::doc::{
    self, Block, Column, Doc, Figure, Inline, Kind, Section, Span, Status, Table, Term,
};
use cc_teardown::report::escape;
use libfuzzer_sys::fuzz_target;

/// Reads the fuzz input as a stream of choices; past its end, zeros.
struct Choices<'a> {
    data: &'a [u8],
    at: usize,
}

/// Characters that matter to the renderers, one byte each to reach.
const PALETTE: &[char] = &[
    'é',
    '世',
    '😀',
    '\u{301}',
    '\u{200b}',
    '\u{feff}',
    '…',
    '\u{202e}',
    '\u{2066}',
    '\u{200f}',
    '\u{2028}',
    '\u{2029}',
    '\u{85}',
    '\u{9b}',
    '\u{7f}',
    '\u{1b}',
    '\u{0}',
    '\t',
    '\n',
    '\r',
    '<',
    '>',
    '&',
    '"',
    '\'',
    '`',
    '|',
    '*',
    '_',
    '[',
    ']',
    '#',
    '~',
    '\\',
    '+',
    '-',
    '@',
    ' ',
    '/',
    '=',
    '{',
    '}',
    'ß',
    'İ',
    'Ⅻ',
    '\u{fffd}',
    '\u{10ffff}',
];

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
    fn small(&mut self, n: u8) -> usize {
        (self.byte() % n) as usize
    }
    fn char(&mut self) -> char {
        let b = self.byte();
        match b {
            0..=0x7f => b as char,
            0x80..=0xdf => PALETTE[(b - 0x80) as usize % PALETTE.len()],
            _ => {
                let v = u32::from_le_bytes([self.byte(), self.byte(), self.byte() & 0x1f, 0]);
                char::from_u32(v).unwrap_or('\u{fffd}')
            }
        }
    }
    fn text(&mut self) -> String {
        let n = self.small(40);
        (0..n).map(|_| self.char()).collect()
    }
    fn status(&mut self) -> Status {
        [
            Status::Pass,
            Status::Block,
            Status::Unknown,
            Status::Added,
            Status::Removed,
            Status::Changed,
            Status::Muted,
        ][self.small(7)]
    }
    fn inline(&mut self) -> Inline {
        let n = self.small(5);
        Inline(
            (0..n)
                .map(|_| match self.small(4) {
                    0 => Span::Text(self.text()),
                    1 => Span::Code(self.text()),
                    2 => Span::Strong(self.text()),
                    _ => Span::Status(self.status(), self.text()),
                })
                .collect(),
        )
    }
    fn limit(&mut self) -> Option<usize> {
        match self.byte() {
            0..=127 => None,
            b => Some((b % 8) as usize),
        }
    }
    fn lines(&mut self) -> String {
        let n = self.small(6);
        let mut s = String::new();
        for _ in 0..n {
            if self.byte() & 1 == 1 {
                s.push(['+', '-', '@', ' ', 'é', '世'][self.small(6)]);
            }
            s.push_str(&self.text());
            s.push('\n');
        }
        s
    }
    fn block(&mut self, depth: usize) -> Block {
        match self.small(11) {
            0 => Block::Facts(
                (0..self.small(4))
                    .map(|_| (self.text(), self.inline()))
                    .collect(),
            ),
            1 => {
                let ncol = 1 + self.small(4);
                let kinds = [Kind::Text, Kind::Number, Kind::Code, Kind::Status];
                let mut t = Table::new(
                    (0..ncol)
                        .map(|_| Column {
                            title: self.text(),
                            kind: kinds[self.small(4)],
                        })
                        .collect(),
                );
                for _ in 0..self.small(6) {
                    // Rows may be shorter or longer than the header.
                    let cells = (0..self.small(6)).map(|_| self.inline()).collect();
                    t.row(cells);
                }
                t.limit = self.limit();
                t.filter = self.byte() & 1 == 1;
                Block::Table(t)
            }
            2 => Block::List {
                items: (0..self.small(6)).map(|_| self.inline()).collect(),
                limit: self.limit(),
            },
            3 => Block::Ordered((0..self.small(4)).map(|_| self.inline()).collect()),
            4 => Block::Note(self.inline()),
            5 => Block::Code {
                lang: ["js", "json", "text"][self.small(3)],
                caption: (self.byte() & 1 == 1).then(|| self.text()),
                text: self.lines(),
                max_lines: self.limit(),
            },
            6 => Block::Diff {
                caption: (self.byte() & 1 == 1).then(|| self.inline()),
                text: self.lines(),
                max_lines: self.limit(),
            },
            7 => {
                // What `diff` shows of a tool's changed description and a
                // changed prompt: word diffs of two texts.
                let (a, b) = (self.lines(), self.lines());
                // A budget per input, as `diff` has one per command: a
                // coarse diff is as much a document as a fine one.
                let budget = DiffBudget::default();
                let (text, _coarse) = if self.byte() & 1 == 1 {
                    tools::word_diff(&a, &b, &budget)
                } else {
                    prompts::word_diff(&a, &b, &budget)
                };
                Block::Diff {
                    caption: Some(self.inline()),
                    text,
                    max_lines: self.limit(),
                }
            }
            8 => Block::Figure(Figure {
                caption: self.text(),
                // The picture is ours (already escaped by `report::svg`).
                svg: "<svg></svg>".to_string(),
                text: (0..self.small(4)).map(|_| self.text()).collect(),
            }),
            _ if depth < 4 => {
                let mut s = Section::new(&self.text(), self.inline(), Vec::new());
                for _ in 0..self.small(4) {
                    s.blocks.push(self.block(depth + 1));
                }
                if self.byte() & 1 == 1 {
                    s = s.closed();
                }
                Block::Section(s)
            }
            _ => Block::Note(self.inline()),
        }
    }
}

/// The page's own tags (and `<!DOCTYPE`): any other `<` came from input.
const TAGS: &[&str] = &[
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "div",
    "dl",
    "dt",
    "dd",
    "nav",
    "strong",
    "ul",
    "ol",
    "li",
    "a",
    "section",
    "details",
    "summary",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "p",
    "label",
    "input",
    "code",
    "span",
    "pre",
    "figure",
    "figcaption",
    "footer",
    "script",
    "svg",
];

fn html_tags_are_ours(html: &str) {
    // The one script is ours and compares with `<`.
    let html = match (html.find("<script>"), html.find("</script>")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &html[..a], &html[b + "</script>".len()..]),
        _ => html.to_string(),
    };
    for (i, _) in html.match_indices('<') {
        let rest = &html[i + 1..];
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        assert!(
            TAGS.contains(&name.as_str()),
            "a '<' not of a tag of ours at {i}: {:?}",
            html[i..].chars().take(40).collect::<String>()
        );
    }
}

fn only_layout(s: &str, what: &str) {
    if let Some(c) = s
        .chars()
        .find(|&c| c != '\n' && c != '\t' && escape::is_unsafe(c))
    {
        panic!("{what}: raw {c:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut c = Choices { data, at: 0 };
    let mut d = Doc::new(c.inline());
    d.summary = (0..c.small(4)).map(|_| (c.text(), c.inline())).collect();
    d.toc = c.byte() & 1 == 1;
    d.scripts = c.byte() & 1 == 1;
    d.bare = c.byte() & 1 == 1;
    let width = match c.byte() {
        0..=63 => None,
        b => Some((b - 64) as usize),
    };
    while !c.done() && d.blocks.len() < 64 {
        let b = c.block(0);
        d.push(b);
    }
    d.footer = vec![("tool".to_string(), Inline::code("cc-teardown"))];

    let _ = d.needs_escape();
    let plain = d.terminal(&Term {
        color: false,
        width,
    });
    // Every line break of the terminal rendering is the renderer's: a
    // value's own are escaped, so only `\n` may be raw.
    if let Some(ch) = plain
        .chars()
        .find(|&ch| ch != '\n' && escape::is_unsafe(ch))
    {
        panic!("terminal: raw {ch:?}");
    }
    let _ = d.terminal(&Term { color: true, width });
    only_layout(&escape::text(&d.markdown()), "markdown");
    let html = d.html();
    html_tags_are_ours(&html);
    only_layout(&escape::text(&html), "html");

    // The helpers the views use on their own.
    let t = c.text();
    let _ = doc::elide(&t, c.small(50));
    let _ = doc::wrap_plain(&t, width);
    let _ = doc::slug(&t);
    let _ = escape::json_safe(serde_json::to_string(&t).unwrap());
});
