//! The model ids and aliases the build knows.

use super::Site;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    pub aliases: Vec<String>,
    /// Where it is used: default, fallback, pricing, limits, …
    pub uses: Vec<String>,
    pub sites: Vec<Site>,
}

pub fn find(_ci: &CodeIndex) -> Vec<Model> {
    Vec::new()
}
