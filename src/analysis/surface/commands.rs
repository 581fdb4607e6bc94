//! The slash commands.

use super::Site;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Command {
    pub name: String,
    pub kind: String,
    pub description: Option<String>,
    pub aliases: Vec<String>,
    pub hidden: Option<bool>,
    /// What enables it (a flag, a setting, an environment variable), when
    /// that is decided statically.
    pub enabled_by: Vec<String>,
    pub sites: Vec<Site>,
}

pub fn find(_ci: &CodeIndex) -> Vec<Command> {
    Vec::new()
}
