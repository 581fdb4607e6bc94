//! `history merge`: the stores named, merged into a new one
//! (`store::history::merge_stores`), with a line of progress per stage on
//! stderr.

use super::MergeArgs;
use crate::cli::{App, UsageError};
use crate::report::emit::Format;
use crate::report::escape;
use crate::report::history::MergeView;
use crate::store::history::{MergeError, MergeProgress, merge_stores};

pub fn run(app: &App, a: &MergeArgs) -> anyhow::Result<i32> {
    let out = app.output(&a.format.output(), Format::Text);
    // This machine's key decides which inputs (and which of their facts)
    // are this machine's own.
    let key = crate::store::key::MachineKey::in_folder(&app.g.cache_folder()).ok();
    let progress = Lines { app };
    let merged = match merge_stores(&a.stores, &a.output, a.force, key, &progress) {
        Ok(m) => m,
        Err(MergeError::Refused(why)) => return Err(UsageError(why).into()),
        Err(MergeError::Store(e)) => return Err(e.into()),
    };
    out.emit(&MergeView(merged))?;
    Ok(0)
}

/// One line per stage on stderr (none with --quiet or --json).
struct Lines<'a> {
    app: &'a App,
}

impl MergeProgress for Lines<'_> {
    fn stage(&self, what: &str) {
        if !self.app.g.quiet && !self.app.json() {
            errln!("{}", escape::text(what));
        }
    }
}
