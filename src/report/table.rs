//! Aligned plain-text tables for human output.

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
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

    /// Cells hold text from the build (names, paths, literals): each is
    /// escaped here, once for every table, so it can neither drive the
    /// terminal nor break out of its row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|c| match super::escape::display(&c) {
                    std::borrow::Cow::Borrowed(_) => c,
                    std::borrow::Cow::Owned(e) => e,
                })
                .collect(),
        );
    }

    pub fn render(&self) -> String {
        let n = self.headers.len();
        let width = |s: &str| s.chars().count();
        let mut w: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(width(c));
            }
        }
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate().take(n) {
                let pad = w[i] - width(c);
                let last = i + 1 == n;
                match self.aligns[i] {
                    Align::Right => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(c);
                    }
                    Align::Left => {
                        s.push_str(c);
                        if !last {
                            s.push_str(&" ".repeat(pad));
                        }
                    }
                }
                if !last {
                    s.push_str("  ");
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&self.headers, &mut out);
        let rule: Vec<String> = w.iter().map(|&k| "-".repeat(k)).collect();
        line(&rule, &mut out);
        for r in &self.rows {
            line(r, &mut out);
        }
        out
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

/// 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
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
            t.render(),
            "name    bytes\n------  -----\na           1\nlonger  12345\n"
        );
        assert_eq!(thousands(21635672), "21,635,672");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn cells_and_facts_are_escaped() {
        let mut t = Table::new(&[("name", Align::Left), ("n", Align::Right)]);
        t.row(vec!["\x1b[2Jx\ny".into(), "1".into()]);
        let r = t.render();
        assert!(!r.contains('\x1b'), "{r:?}");
        assert_eq!(r.lines().count(), 3, "one row stays one line: {r:?}");
        assert!(r.contains("\\x1b[2Jx\\ny"));
        let f = facts(&[("k", "a\u{202e}b".into())]);
        assert_eq!(f, "k  a\\u{202e}b\n");
    }
}
