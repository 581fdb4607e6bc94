//! Aligned plain-text tables for human output.

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    /// Left-aligned names, hashes and expressions: monospace in Markdown
    /// and HTML.
    Code,
}

pub struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.0.to_string()).collect(),
            aligns: headers.iter().map(|h| h.1).collect(),
            rows: Vec::new(),
        }
    }

    /// Cells hold text from the build (names, paths, literals) as it is:
    /// each renderer of the document escapes it for its medium, so it can
    /// neither drive the terminal nor break out of its row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as a block of a [`super::doc::Doc`].
    pub fn doc(&self) -> super::doc::Table {
        use super::doc::{Column, Inline, Kind};
        let mut t = super::doc::Table::new(
            self.headers
                .iter()
                .zip(&self.aligns)
                .map(|(h, a)| {
                    Column::new(
                        h,
                        match a {
                            Align::Right => Kind::Number,
                            Align::Left => Kind::Text,
                            Align::Code => Kind::Code,
                        },
                    )
                })
                .collect(),
        );
        for r in &self.rows {
            t.row(
                r.iter()
                    .zip(&self.aligns)
                    .map(|(c, a)| match a {
                        Align::Code if !c.is_empty() => Inline::code(c.as_str()),
                        _ => Inline::from(c.as_str()),
                    })
                    .collect(),
            );
        }
        t
    }

    /// The table for stdout: no wider than the terminal or `COLUMNS`
    /// (long cells are elided with `…`; see [`super::doc`]).
    pub fn render(&self) -> String {
        self.render_width(super::doc::terminal_width())
    }

    /// The table fitted to `width` columns (None: as wide as it is).
    pub fn render_width(&self, width: Option<usize>) -> String {
        use super::doc::Term;
        super::doc::table_text(
            &self.doc(),
            &Term {
                color: false,
                width,
            },
        )
    }
}

/// Key/value facts, keys aligned; values are escaped as table cells are.
pub fn facts(pairs: &[(&str, String)]) -> String {
    let w = pairs.iter().map(|p| p.0.chars().count()).max().unwrap_or(0);
    pairs
        .iter()
        .map(|(k, v)| format!("{k:<w$}  {}\n", super::escape::display(v)))
        .collect()
}

/// 1234567 → "1,234,567" (the one formatter, [`super::doc::fmt::num`]).
pub fn thousands(n: u64) -> String {
    super::doc::fmt::num(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&[("name", Align::Left), ("bytes", Align::Right)]);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["longer".into(), "12345".into()]);
        assert_eq!(
            t.render_width(None),
            "name    bytes\n------  -----\na           1\nlonger  12345\n"
        );
        assert_eq!(thousands(21635672), "21,635,672");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn cells_and_facts_are_escaped() {
        let mut t = Table::new(&[("name", Align::Left), ("n", Align::Right)]);
        t.row(vec!["\x1b[2Jx\ny".into(), "1".into()]);
        let r = t.render_width(None);
        assert!(!r.contains('\x1b'), "{r:?}");
        assert_eq!(r.lines().count(), 3, "one row stays one line: {r:?}");
        assert!(r.contains("\\x1b[2Jx\\ny"));
        let f = facts(&[("k", "a\u{202e}b".into())]);
        assert_eq!(f, "k  a\\u{202e}b\n");
    }
}
