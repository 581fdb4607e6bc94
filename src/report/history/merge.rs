//! `history merge`: what a merge made.

use super::plural;
use crate::report::doc::{Block, Doc, Inline, Kind, Table, Term, facts, fmt};
use crate::report::emit::View;
use crate::report::escape;
use crate::store::history::Merged;
use serde::Serialize;

/// `history merge`: the store written, its inputs (each with the releases
/// read and kept, and whether this machine made it), the counts and the
/// rows left out.
#[derive(Debug, Clone, Serialize)]
pub struct MergeView(pub Merged);

impl MergeView {
    fn line(&self) -> String {
        let m = &self.0;
        format!(
            "merged {} {} into {}: {} {}, {} {} ({:.1} s){}",
            m.inputs.len(),
            plural(m.inputs.len(), "store", "stores"),
            m.output,
            m.releases,
            plural(m.releases, "release", "releases"),
            m.builds,
            plural(m.builds, "build", "builds"),
            m.seconds,
            if m.made_here {
                ""
            } else {
                "; not marked as made on this machine: its answers say where they come from"
            }
        )
    }
}

impl View for MergeView {
    fn doc(&self) -> Doc {
        let m = &self.0;
        let mut d = Doc::new(Inline::from("History merged into ").c(m.output.clone()));
        d.push(facts(vec![
            ("releases", fmt::n(m.releases).into()),
            ("builds", fmt::n(m.builds).into()),
            ("made here", if m.made_here { "yes" } else { "no" }.into()),
            ("left out", fmt::n(m.skipped.len()).into()),
            ("time", format!("{:.1} s", m.seconds).into()),
        ]));
        let mut t = Table::of(&[
            ("store", Kind::Code),
            ("made here", Kind::Text),
            ("releases", Kind::Number),
            ("kept", Kind::Number),
        ]);
        for i in &m.inputs {
            t.text_row(vec![
                i.path.clone(),
                if i.made_here { "yes" } else { "no" }.to_string(),
                i.releases.to_string(),
                i.kept.to_string(),
            ]);
        }
        d.section("inputs", "Inputs", vec![Block::Table(t)]);
        if !m.skipped.is_empty() {
            d.section(
                "skipped",
                "Left out",
                vec![Block::Note(m.skipped.join("\n").into())],
            );
        }
        d
    }

    fn terminal(&self, _: &Term) -> Option<String> {
        let mut o = self.line();
        o.push('\n');
        for i in &self.0.inputs {
            o.push_str(&format!(
                "  {}: {} of {} {} kept{}\n",
                i.path,
                i.kept,
                i.releases,
                plural(i.releases, "release", "releases"),
                if i.made_here { "" } else { " (made elsewhere)" }
            ));
        }
        for s in &self.0.skipped {
            o.push_str(&format!("  left out: {s}\n"));
        }
        Some(escape::text(&o).into_owned())
    }
}
