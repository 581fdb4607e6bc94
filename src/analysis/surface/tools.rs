//! The built-in tools the agent can call, with their input schemas
//! reconstructed from the tools' validators.

use super::Site;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    /// The text the model sees, evaluated where it is static.
    pub description: String,
    pub prompt_bytes: usize,
    /// A JSON Schema of the tool's input.
    pub input_schema: serde_json::Value,
    pub sites: Vec<Site>,
}

pub fn find(_ci: &CodeIndex) -> Vec<Tool> {
    Vec::new()
}

/// Tools added, removed and changed (by name).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolsDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

pub fn diff(a: &[Tool], b: &[Tool]) -> ToolsDiff {
    let d = super::names_diff(
        a.iter().map(|t| t.name.as_str()),
        b.iter().map(|t| t.name.as_str()),
    );
    ToolsDiff {
        added: d.added,
        removed: d.removed,
        changed: Vec::new(),
    }
}
