//! Every environment variable the build reads.

use super::Site;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnvVar {
    pub name: String,
    /// How it is read: `member` (`process.env.NAME`), `destructured`,
    /// `bracket` (`process.env["NAME"]`), `helper` (a function taking the name).
    pub how: Vec<String>,
    pub default: Option<serde_json::Value>,
    pub sites: Vec<Site>,
}

pub fn find(_ci: &CodeIndex) -> Vec<EnvVar> {
    Vec::new()
}
