use super::{Global, print_json};
use crate::report::table::{facts, thousands};
use crate::store::FactsStore;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Subcommand)]
pub enum CacheAction {
    /// Where the facts store is and what it holds.
    Info,
    /// Delete the facts store (downloaded builds stay; delete the cache folder for those).
    Clear,
}

pub fn run(g: &Global, a: &CacheArgs) -> anyhow::Result<i32> {
    let (path, ownership) = g.store_location();
    match a.action {
        CacheAction::Info => {
            let info = FactsStore::open_as(&path, ownership)?.info();
            if g.json {
                return print_json(&info).map(|_| 0);
            }
            print!(
                "{}",
                facts(&[
                    ("store", info.path.clone()),
                    ("size", format!("{} bytes", thousands(info.bytes))),
                    ("schema", info.schema_version.to_string()),
                    ("analysis version", info.analysis_version.to_string()),
                    ("builds", thousands(info.builds)),
                    ("files seen", thousands(info.files)),
                    (
                        "facts",
                        format!(
                            "{} of this analysis version ({} bytes), {} of others (ignored)",
                            thousands(info.facts_current),
                            thousands(info.facts_bytes),
                            thousands(info.facts_other_versions)
                        )
                    ),
                ])
            );
        }
        CacheAction::Clear => {
            FactsStore::clear(&path, ownership)?;
            if g.json {
                return print_json(&serde_json::json!({"cleared": path.display().to_string()}))
                    .map(|_| 0);
            }
            println!("cleared {}", path.display());
        }
    }
    Ok(0)
}
