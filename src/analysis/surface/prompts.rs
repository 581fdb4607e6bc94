//! Every prompt the build sends to a model, with an id that stays the same
//! from one release to the next.

use super::Site;
use crate::js::code::CodeIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prompt {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub text: String,
    pub bytes: usize,
    pub tokens_estimate: usize,
    pub variables: Vec<Variable>,
    pub sites: Vec<Site>,
}

/// An interpolation in a prompt and the expression it comes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    pub expression: String,
}

pub fn find(_ci: &CodeIndex) -> Vec<Prompt> {
    Vec::new()
}

/// Prompts added, removed and changed (by id).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PromptsDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

pub fn diff(a: &[Prompt], b: &[Prompt]) -> PromptsDiff {
    let d = super::names_diff(
        a.iter().map(|p| p.id.as_str()),
        b.iter().map(|p| p.id.as_str()),
    );
    PromptsDiff {
        added: d.added,
        removed: d.removed,
        changed: Vec::new(),
    }
}
