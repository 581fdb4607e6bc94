//! `history export`: the store's own SQLite file, or every item as JSON or
//! CSV, written through the one way out to a file (`-o`, never through a
//! link) or stdout.

use super::{ExportArgs, ExportFormat};
use crate::cli::App;
use crate::report::emit::{print_json, to_json};
use crate::report::history::{ExportJson, Labelled, csv};
use crate::store::FactsStore;

pub fn run(app: &App, store: &FactsStore, a: &ExportArgs) -> anyhow::Result<i32> {
    if a.format == ExportFormat::Git {
        return super::git::run(app, store, a);
    }
    if let Some(d) = &a.dir {
        usage!(
            "DIR ({}) is for --format git; --format sqlite, json and csv write to -o FILE",
            d.display()
        );
    }
    let platform = a.platform.as_deref();
    let text = match a.format {
        ExportFormat::Sqlite if platform.is_some() => {
            usage!("--format sqlite copies the whole store; --platform is for git, json and csv")
        }
        ExportFormat::Sqlite | ExportFormat::Git => return sqlite(app, store, a),
        ExportFormat::Json => {
            let items = store.all_items(platform)?;
            let doc = ExportJson::new(store.releases(platform)?, items);
            to_json(&Labelled::new(store, doc))?
        }
        ExportFormat::Csv => csv(store.all_items(platform)?),
    };
    app.to_file(a.output.clone()).write(&text)?;
    Ok(0)
}

/// A copy of the whole store in a new file (made by SQLite, never through
/// what is at its path: see `FactsStore::export_sqlite`).
fn sqlite(app: &App, store: &FactsStore, a: &ExportArgs) -> anyhow::Result<i32> {
    let Some(out) = &a.output else {
        usage!("--format sqlite writes a file: say where with -o FILE");
    };
    if out.exists() || out.is_symlink() {
        usage!("{} already exists; choose a new file", out.display());
    }
    store.export_sqlite(out)?;
    if app.g.json {
        print_json(&serde_json::json!({"output": out.display().to_string()}))?;
    } else if !app.g.quiet {
        errln!("wrote {}", out.display());
    }
    Ok(0)
}
