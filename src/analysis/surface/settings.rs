//! The keys of the settings schema.

use super::Site;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setting {
    pub key: String,
    pub r#type: String,
    pub description: Option<String>,
    pub default: Option<serde_json::Value>,
    pub sites: Vec<Site>,
}

pub fn find(_ci: &CodeIndex) -> Vec<Setting> {
    Vec::new()
}
