//! `locate`: the functions that build and gate the workflows, found by structure.

use super::doc::{Block, Doc, Inline, Kind, Status, Table};
use super::emit::View;
use crate::analysis::roles::Roles;

#[derive(serde::Serialize)]
pub struct LocateView<'a> {
    pub target: String,
    pub version: Option<String>,
    #[serde(flatten)]
    pub roles: &'a Roles,
}

/// The located functions, one row each, then the roles not found and why.
fn doc(label: &str, roles: &Roles) -> Doc {
    let mut t = Table::of(&[
        ("role", Kind::Text),
        ("name", Kind::Code),
        ("original", Kind::Code),
        ("module", Kind::Code),
        ("raw lines", Kind::Number),
        ("pretty lines", Kind::Number),
        ("confidence", Kind::Text),
        ("evidence", Kind::Text),
    ]);
    for f in &roles.functions {
        let role = match &f.workflow {
            Some(w) => format!("{} ({w})", f.role.as_str()),
            None => f.role.as_str().to_string(),
        };
        t.text_row(vec![
            role,
            f.name.clone().unwrap_or_else(|| "(anonymous)".into()),
            f.original.clone().unwrap_or_else(|| "-".into()),
            f.module.rsplit('/').next().unwrap_or(&f.module).to_string(),
            format!("{}–{}", f.raw_start, f.raw_end),
            format!("{}–{}", f.pretty_start, f.pretty_end),
            f.confidence.to_string(),
            f.evidence.join("; "),
        ]);
    }
    let mut d = Doc::new(Inline::from("Located functions in ").c(label)).bare();
    d.push(Block::Table(t));
    for a in &roles.absent {
        d.push(Block::Note(
            Inline::status(Status::Unknown, "absent: ")
                .c(a.role.as_str())
                .t(" — ")
                .t(a.reason.clone()),
        ));
    }
    d
}

impl<'a> View for LocateView<'a> {
    fn doc(&self) -> Doc {
        doc(&self.target, self.roles)
    }
}
