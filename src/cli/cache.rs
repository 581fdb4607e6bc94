use super::App;
use crate::report::local::{CacheCleared, CacheInfo};
use crate::store::FactsStore;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
    #[command(flatten)]
    pub out: super::format::OutputArgs,
}

#[derive(Subcommand)]
pub enum CacheAction {
    /// Where the facts store is and what it holds.
    Info,
    /// Delete the facts store (downloaded builds stay; delete the cache folder for those).
    Clear,
}

pub fn run(app: &App, a: &CacheArgs) -> anyhow::Result<i32> {
    let (path, ownership) = app.g.store_location();
    match a.action {
        CacheAction::Info => {
            let info = FactsStore::open_as(&path, ownership)?.info();
            app.emit(&a.out, &CacheInfo(info))
        }
        CacheAction::Clear => {
            FactsStore::clear(&path, ownership)?;
            let cleared = path.display().to_string();
            app.emit(&a.out, &CacheCleared { cleared })
        }
    }
}
