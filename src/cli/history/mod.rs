//! `history`: every published build scanned into the facts store, and the
//! questions that span them (docs/guide/history.md). Arguments, and one call per
//! subcommand: the questions are answered in `store::history`, the answers
//! are views in `report::history` that go out through the one exit.

mod args;
mod export;
mod git;
mod merge;
mod scan;
mod site;

pub use args::*;

use super::{App, UsageError};
use crate::report::emit::Format;
use crate::report::history::{ChangesView, Labelled, ListView, SearchView, ShowView};
use crate::report::timeline::TimelineView;
use crate::store::FactsStore;
use crate::store::history::HistoryError;
use anyhow::anyhow;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Subcommand)]
pub enum HistoryCommand {
    /// Fetch, analyse and record every published version in RANGE (resumable; known builds are skipped).
    #[command(
        after_help = "Example:\n  cc-teardown history scan 2.1.239..2.1.243 --platform darwin-arm64\n  cc-teardown history scan 2.1.300.. --platform darwin-arm64 --platform linux-x64\n  cc-teardown history scan all --platform darwin-arm64 --jobs 3\n\nRANGE: A..B, A.., ..B, ..latest, all, or a list (2.1.220,2.1.260).\nDownloads are deleted once analysed unless --keep. Exit status 1 when a build failed (it is recorded, and the scan goes on); a published package without a program (a placeholder release) is recorded as `empty` and is not a failure."
    )]
    Scan(ScanArgs),
    /// The releases scanned, with their status and what each build holds.
    #[command(
        after_help = "Example:\n  cc-teardown history list\n  cc-teardown history list --json | jq '.releases[] | select(.counts.workflow == 10) | .version'"
    )]
    List(ListArgs),
    /// When one workflow, flag, tool, prompt, env var, command … appeared, changed and went.
    #[command(
        after_help = "Example:\n  cc-teardown history show workflow code-review\n  cc-teardown history show flag tengu_review_workflow_routing --json\n  cc-teardown history show env ANTHROPIC_MODEL --platform linux-x64"
    )]
    Show(ShowArgs),
    /// What changed at VERSION against the previous scanned version (from stored facts: nothing is parsed).
    #[command(
        after_help = "Example:\n  cc-teardown history changes 2.1.260\n  cc-teardown history changes 2.1.242 --platform darwin-arm64 --json | jq .workflows"
    )]
    Changes(ChangesArgs),
    /// Which versions hold TEXT: in a name (flag, tool, env var, …) or in a prompt's or script's text.
    #[command(
        after_help = "Example:\n  cc-teardown history search bot_protected\n  cc-teardown history search \"code review\" --json"
    )]
    Search(SearchArgs),
    /// One self-contained page over every release scanned: charts, events (code-split switch, workflows added/removed, Bun layouts), versions.
    #[command(
        after_help = "Example:\n  cc-teardown history timeline --platform darwin-arm64 -o timeline.html\n  cc-teardown history timeline --format md"
    )]
    Timeline(TimelineArgs),
    /// Write the history for others: the SQLite file itself, every item as JSON or CSV, or a git repository with a commit per release.
    #[command(
        after_help = "Example:\n  cc-teardown history export --format sqlite -o history.sqlite\n  cc-teardown history export --format csv -o items.csv\n  cc-teardown history export --format json | jq '.releases | length'\n  cc-teardown history export --format git catalogue --platform darwin-arm64\n\n--format git makes DIR a bare repository (one branch per platform, one commit per release, tagged v<version>) and appends the releases scanned since on the next run; docs/guide/history.md has its layout."
    )]
    Export(ExportArgs),
    /// Merge stores scanned on several machines (a platform or a range each) into one new store.
    #[command(
        after_help = "Example:\n  cc-teardown history merge darwin-arm64.sqlite linux-x64.sqlite -o history.sqlite\n  cc-teardown history merge old.sqlite new.sqlite -o history.sqlite --force\n\nThe STOREs are only read. A release found in several keeps one row: scanned over failed, then this analysis version's, then the latest scan, then the first STORE named. Facts another machine sealed are computed again before analysis believes them; the merged store is marked as made here only when every STORE was, and its answers name the STOREs it came from."
    )]
    Merge(MergeArgs),
    /// A folder of pages that needs no server: the timeline, a page per release and per item (prompt, tool, flag, env var, setting, command, model, workflow …), and a search over names and texts.
    #[command(
        after_help = "Example:\n  cc-teardown history site site/ --platform darwin-arm64\n  cc-teardown history site site/ --json | jq '{written, kept}'\n\nOpen site/index.html in a browser (file:// works), or publish the folder on any static host.\nA second run writes only the pages whose bytes changed (a manifest of every file's SHA-256 is kept in DIR) and says how many were written and kept.\nFiles in DIR that an earlier run did not write are refused unless --force."
    )]
    Site(SiteArgs),
}

pub fn run(app: &App, a: &HistoryArgs) -> anyhow::Result<i32> {
    // A merge reads the stores it names and writes a new one: it needs
    // no store of its own.
    if let HistoryCommand::Merge(m) = &a.command {
        return merge::run(app, m);
    }
    if app.g.no_cache {
        usage!("history lives in the facts store; it cannot run with --no-cache");
    }
    let Some(store) = app.store()? else {
        return Err(anyhow!(
            "the facts store cannot be opened (see the note above)"
        ));
    };
    let r = answer(app, store, &a.command);
    // Damaged rows left out of the answer: one line each (JSON answers
    // also list them under `skipped`).
    if !app.json() && r.is_ok() {
        for what in store.skipped() {
            errln!(
                "warning: {}: left out a damaged row: {what}",
                store.path().display()
            );
        }
    }
    // The process exits without dropping the store: close it, so that
    // SQLite folds this command's write-ahead log into the database and
    // removes it (or leaves it, without waiting, to another process that
    // has the file open) instead of every later command reading it back.
    store.close();
    r
}

/// Answer one subcommand: ask the store, hand the view to the way out.
/// Each answer is labelled after the store has answered, so that it lists
/// every damaged row its reads left out.
fn answer(app: &App, store: &FactsStore, c: &HistoryCommand) -> anyhow::Result<i32> {
    match c {
        HistoryCommand::Scan(s) => scan::run(app, store, s),
        HistoryCommand::List(l) => {
            let releases = store.list(l.platform.get())?;
            app.emit(&l.out, &Labelled::new(store, ListView { releases }))
        }
        HistoryCommand::Show(s) => {
            let view = ShowView(store.show(s.kind, &s.name, s.platform.get()).map_err(err)?);
            let code = view.code();
            app.emit(&s.out, &Labelled::new(store, view))?;
            Ok(code)
        }
        HistoryCommand::Changes(c) => {
            let answer = store.changes(&c.version, c.platform.get()).map_err(err)?;
            app.emit(&c.out, &Labelled::new(store, ChangesView(answer)))
        }
        HistoryCommand::Search(s) => {
            let hits = store
                .search_releases(&s.text, s.platform.get())
                .map_err(err)?;
            let view = SearchView::new(store, &s.text, hits);
            app.emit(&s.out, &view)?;
            Ok(view.code())
        }
        HistoryCommand::Timeline(t) => {
            let platform = store.one_platform(t.platform.get()).map_err(err)?;
            let rows = store.timeline(&platform)?;
            let view = Labelled::new(store, TimelineView::new(platform, rows));
            app.output(&t.out(), Format::Html).emit(&view)?;
            Ok(0)
        }
        HistoryCommand::Export(e) => export::run(app, store, e),
        HistoryCommand::Merge(m) => merge::run(app, m),
        HistoryCommand::Site(s) => site::run(app, store, s),
    }
}

/// A history error as the command line reports it: a wrong question is a
/// usage error; the store's and the registry's errors keep their kinds.
pub(super) fn err(e: HistoryError) -> anyhow::Error {
    match e {
        HistoryError::Store(e) => e.into(),
        HistoryError::Source(e) => e.into(),
        HistoryError::Json(e) => e.into(),
        e if e.is_usage() => UsageError(e.to_string()).into(),
        e => e.into(),
    }
}
