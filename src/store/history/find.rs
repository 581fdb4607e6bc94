//! `history search`: the releases that hold a text, in an item's name or
//! in a prompt's or script's text.

use super::HistoryError;
use crate::store::FactsStore;
use crate::store::search::ReleaseOrder;
use serde::Serialize;

/// Where a search found its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Within {
    /// In the item's name (ignoring ASCII case).
    Name,
    /// In the item's text (a prompt's, a script's; exactly).
    Text,
}

impl Within {
    pub fn as_str(self) -> &'static str {
        match self {
            Within::Name => "name",
            Within::Text => "text",
        }
    }
}

/// One item a search found, on one platform. Fields in name order, as
/// `--json` has always printed them (they went through a
/// `serde_json::Value`, whose maps are sorted): serialised directly now,
/// which a megabyte answer needs.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub r#in: Within,
    pub kind: String,
    pub name: String,
    pub platform: String,
    /// The versions that hold it, oldest first.
    pub versions: Vec<String>,
}

/// The most items a search lists for a match in their name (a needle of a
/// letter or two is in thousands of names).
const NAME_HITS: usize = 500;

impl FactsStore {
    /// Which releases of `platform` (every platform scanned when None) hold
    /// `text`: items by name, then items by text.
    pub fn search_releases(
        &self,
        text: &str,
        platform: Option<&str>,
    ) -> Result<Vec<Hit>, HistoryError> {
        if text.is_empty() {
            return Err(HistoryError::EmptySearch);
        }
        let found = self.search(text, NAME_HITS)?;
        let mut hits: Vec<Hit> = Vec::new();
        for p in self.platforms(platform)? {
            let order = ReleaseOrder::new(&self.releases(Some(&p))?);
            let by_name = found.by_name.iter().map(|f| (Within::Name, f));
            for (r#in, f) in by_name.chain(found.by_text.iter().map(|f| (Within::Text, f))) {
                let versions = order.versions(&f.builds);
                self.charge_answer(
                    versions.iter().map(|v| v.len() as u64 + 32).sum::<u64>()
                        + (f.kind.len() + f.name.len() + p.len() + 128) as u64,
                )?;
                if !versions.is_empty() {
                    hits.push(Hit {
                        r#in,
                        kind: f.kind.clone(),
                        name: f.name.clone(),
                        platform: p.clone(),
                        versions,
                    });
                }
            }
        }
        Ok(hits)
    }
}
