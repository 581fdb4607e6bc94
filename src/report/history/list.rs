//! `history list`: the releases scanned, one row each.

use crate::report::doc::{Block, Doc, Kind, Table, Term, table_text};
use crate::report::emit::View;
use crate::store::history::{ListedRelease, ReleaseStatus};
use serde::Serialize;

/// `history list`.
#[derive(Debug, Clone, Serialize)]
pub struct ListView {
    pub releases: Vec<ListedRelease>,
}

const NONE_YET: &str = "no release scanned yet (cc-teardown history scan RANGE)";

impl ListView {
    fn table(&self) -> Table {
        let mut t = Table::of(&[
            ("version", Kind::Text),
            ("platform", Kind::Text),
            ("status", Kind::Text),
            ("modules", Kind::Number),
            ("split", Kind::Text),
            ("workflows", Kind::Number),
            ("flags", Kind::Number),
            ("tools", Kind::Number),
            ("prompts", Kind::Number),
            ("env", Kind::Number),
        ]);
        for r in &self.releases {
            let n = |k: &str| r.counts.get(k).map_or("0".into(), |n| n.to_string());
            let rel = &r.release;
            t.text_row(vec![
                rel.version.clone(),
                rel.platform.clone(),
                if rel.status == ReleaseStatus::Ok && !rel.current {
                    "ok (older analysis)".into()
                } else {
                    rel.status.as_str().into()
                },
                rel.modules.map_or(String::new(), |m| m.to_string()),
                match rel.code_split {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => String::new(),
                },
                n("workflow"),
                n("flag"),
                n("tool"),
                n("prompt"),
                n("env"),
            ]);
        }
        t
    }
}

impl View for ListView {
    fn doc(&self) -> Doc {
        let mut d = Doc::new("Releases scanned");
        if self.releases.is_empty() {
            d.push(Block::Note(NONE_YET.into()));
        } else {
            d.push(Block::Table(self.table()));
        }
        d
    }

    /// The table alone, as `ls` prints one (easy to pipe through `grep`).
    fn terminal(&self, term: &Term) -> Option<String> {
        if self.releases.is_empty() {
            return Some(format!("{NONE_YET}\n"));
        }
        let plain = Term {
            color: false,
            width: term.width,
        };
        Some(table_text(&self.table(), &plain))
    }
}
