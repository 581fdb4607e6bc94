//! `symbols`: original names recovered from the build, and cross-chunk imports.

use super::doc::{Block, Doc, Inline, Kind, Table, fmt};
use super::emit::View;
use crate::js::symbols::{Link, Symbol};

#[derive(serde::Serialize)]
pub struct SymbolsView {
    pub target: String,
    pub symbols: Vec<Symbol>,
    pub links: Vec<Link>,
}

/// The recovered names, then the resolved imports when asked for.
fn doc(label: &str, syms: &[Symbol], links: &[Link]) -> Doc {
    let mut d = Doc::new(Inline::from("Original names in ").c(label)).bare();
    let mut t = Table::of(&[
        ("minified", Kind::Code),
        ("original", Kind::Code),
        ("module", Kind::Code),
        ("line", Kind::Number),
        ("pretty", Kind::Number),
    ]);
    for s in syms {
        t.text_row(vec![
            s.minified.clone(),
            s.original.clone(),
            s.module.clone(),
            s.line.to_string(),
            s.pretty_line.to_string(),
        ]);
    }
    d.push(Block::Table(t));
    d.push(Block::Note(
        fmt::count(syms.len(), "symbol", "symbols").into(),
    ));
    if !links.is_empty() {
        let mut t = Table::of(&[
            ("module", Kind::Code),
            ("line", Kind::Number),
            ("imports", Kind::Code),
            ("from", Kind::Code),
            ("defined as", Kind::Code),
            ("at line", Kind::Number),
        ]);
        for l in links {
            t.text_row(vec![
                l.module.clone(),
                l.line.to_string(),
                if l.local.is_empty() || l.local == l.imported {
                    l.imported.clone()
                } else {
                    format!("{} as {}", l.imported, l.local)
                },
                l.from.clone(),
                l.resolved.clone().unwrap_or_else(|| "(unresolved)".into()),
                l.definition_line
                    .map_or_else(|| "-".into(), |n| n.to_string()),
            ]);
        }
        let resolved = links.iter().filter(|l| l.definition_line.is_some()).count();
        d.section(
            "imports",
            "Cross-chunk imports",
            vec![
                Block::Table(t),
                Block::Note(
                    format!(
                        "{}, {} resolved to their definition",
                        fmt::count(links.len(), "import", "imports"),
                        fmt::n(resolved)
                    )
                    .into(),
                ),
            ],
        );
    }
    d
}

impl View for SymbolsView {
    fn doc(&self) -> Doc {
        doc(&self.target, &self.symbols, &self.links)
    }
}
