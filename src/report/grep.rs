//! `grep`: hits in a build's strings and identifiers. For a terminal, one
//! hit per two lines as grep-like tools print them (coloured, with code
//! context); Markdown and HTML get a table.

use super::doc::{Block, Doc, Inline, Kind, Paint, Table, Term, fmt};
use super::emit::View;
use super::escape::display as esc;
use crate::js::grep::Hit;

/// A hit as shown: where it matched inside its excerpt, and the pretty
/// lines around it (`-C`).
pub struct Shown {
    pub highlight: std::ops::Range<usize>,
    pub context: Vec<(usize, String)>,
    pub center: usize,
}

#[derive(serde::Serialize)]
pub struct GrepView {
    pub target: String,
    pub pattern: String,
    pub hits: Vec<Hit>,
    pub truncated: bool,
    /// `--max`, named when the search stopped there.
    #[serde(skip)]
    pub max: usize,
    /// One per hit.
    #[serde(skip)]
    pub shown: Vec<Shown>,
}

impl GrepView {
    fn function(h: &Hit) -> String {
        h.function.as_ref().map_or_else(
            || "top level".to_string(),
            |f| {
                let name = f.name.clone().unwrap_or_else(|| "(anonymous)".into());
                match &f.original {
                    Some(o) => format!(
                        "in {name} [{o}] (raw {}, pretty {})",
                        f.raw_line, f.pretty_line
                    ),
                    None => format!("in {name} (raw {}, pretty {})", f.raw_line, f.pretty_line),
                }
            },
        )
    }

    fn total(&self) -> String {
        let modules: std::collections::BTreeSet<&str> =
            self.hits.iter().map(|h| h.module.as_str()).collect();
        format!(
            "{} hit(s) in {} module(s){}",
            self.hits.len(),
            modules.len(),
            if self.truncated {
                format!(" (stopped at --max {})", self.max)
            } else {
                String::new()
            }
        )
    }
}

impl View for GrepView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new(
            Inline::from("Matches of ")
                .c(self.pattern.clone())
                .t(" in ")
                .c(self.target.clone()),
        );
        let mut t = Table::of(&[
            ("module", Kind::Code),
            ("line", Kind::Number),
            ("col", Kind::Number),
            ("pretty", Kind::Number),
            ("kind", Kind::Text),
            ("function", Kind::Text),
            ("excerpt", Kind::Code),
        ]);
        for h in &self.hits {
            t.text_row(vec![
                h.module.clone(),
                fmt::num(h.raw_line),
                fmt::num(h.raw_col),
                fmt::num(h.pretty_line),
                h.kind.to_string(),
                Self::function(h),
                h.excerpt.clone(),
            ]);
        }
        d.push(Block::Table(t));
        d.push(Block::Note(self.total().into()));
        d
    }

    /// Two lines per hit (place, then the excerpt with the match in bold
    /// red), the context lines, then the count. Every piece of a hit comes
    /// from the build: each is escaped before it is coloured, so the only
    /// escape sequences printed are the colours.
    fn terminal(&self, term: &Term) -> Option<String> {
        use std::fmt::Write;
        let painter = Paint(term.color);
        let paint = |code: &str, s: &str| painter.sgr(code, &esc(s));
        let mut o = String::new();
        for (h, s) in self.hits.iter().zip(&self.shown) {
            let _ = writeln!(
                o,
                "{}:{}:{}  pretty {}  {}  {}",
                paint("35", &h.module),
                paint("32", &h.raw_line.to_string()),
                h.raw_col,
                h.pretty_line,
                paint("2", h.kind),
                paint("36", &Self::function(h))
            );
            let (text, range) = (&h.excerpt, s.highlight.clone());
            let _ = writeln!(
                o,
                "    {}{}{}",
                esc(&text[..range.start]),
                paint("1;31", &text[range.clone()]),
                esc(&text[range.end..])
            );
            for (n, line) in &s.context {
                let mark = if *n == s.center { ">" } else { " " };
                // A line of code: its tabs are layout.
                let _ = writeln!(
                    o,
                    "{}",
                    super::escape::text(&format!("    {mark}{n:>7}  {line}"))
                );
            }
        }
        let _ = writeln!(o, "{}", super::escape::text(&self.total()));
        Some(o)
    }
}
