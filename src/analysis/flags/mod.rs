//! Feature flags: every `tengu_*` string, and every name of any prefix that a
//! flag getter reads, classified by how it is used.
//!
//! - *feature*: the first argument of a flag getter — a function that reads
//!   the cached flag store (see [`STORE_KEYS`]) or answers `{value, source}`
//!   lookups, directly or through a few calls — or of a read through a
//!   registry whose registered reader is one (see [`Registries`]);
//! - *event*: the first argument of a telemetry logger — a function that
//!   builds `{eventName, metadata}`, or a wrapper that passes its first
//!   parameter on to one;
//! - *config*: the first argument of any other call;
//! - *other*: anywhere else (an object key, a comparison, a list).
//!
//! A name kept in a constant is followed to the calls that use the constant.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod accessors;
mod holders;
mod inventory;
mod registries;
#[cfg(test)]
mod tests;

pub use accessors::Classifier;
pub use inventory::inventory;
pub use registries::Registries;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum FlagKind {
    Feature,
    Event,
    Config,
    Other,
}

impl FlagKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlagKind::Feature => "feature",
            FlagKind::Event => "event",
            FlagKind::Config => "config",
            FlagKind::Other => "other",
        }
    }
}

/// What a called function is, for the strings passed to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessorKind {
    Getter,
    Logger,
    Other,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlagSite {
    pub kind: FlagKind,
    pub module: String,
    pub raw_line: u32,
    pub raw_col: u32,
    pub pretty_line: u32,
    /// The enclosing function (minified) and its recovered name.
    pub function: Option<String>,
    pub function_original: Option<String>,
    /// The getter or logger called, when there is one.
    pub via: Option<String>,
    /// The default passed to a getter: a literal, or "computed: EXPR".
    pub default: Option<serde_json::Value>,
    /// Set when the name reached the call through this constant.
    pub constant: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flag {
    pub name: String,
    pub kind: FlagKind,
    /// Distinct defaults over the getter sites.
    pub defaults: Vec<serde_json::Value>,
    pub getters: Vec<String>,
    pub sites: Vec<FlagSite>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Accessor {
    pub name: String,
    pub original: Option<String>,
    pub module: String,
    pub kind: AccessorKind,
    pub sites: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct FlagInventory {
    pub flags: Vec<Flag>,
    pub accessors: Vec<Accessor>,
    pub counts: BTreeMap<String, usize>,
}

impl Accessor {
    pub fn kind_str(&self) -> &'static str {
        match self.kind {
            AccessorKind::Getter => "getter",
            AccessorKind::Logger => "logger",
            AccessorKind::Other => "other",
        }
    }
}

impl FlagInventory {
    pub fn get(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.name == name)
    }
}

/// The keys of the cached flag store in `~/.claude.json`, newest first
/// (2.1.3xx renamed `cachedGrowthBookFeatures` to `cachedFeatureFlags`).
pub const STORE_KEYS: [&str; 4] = [
    "cachedFeatureFlags",
    "cachedGrowthBookFeatures",
    "cachedStatsigGates",
    "cachedDynamicConfigs",
];

/// Whether a function's source shows it is the flag getter: it reads the
/// cached flag store by key, or — where the store is injected and no key
/// appears (2.1.3xx) — it answers flag lookups as `{value, source}` with the
/// sources a flag value comes from.
fn reads_flag_store(src: &str) -> bool {
    STORE_KEYS.iter().any(|a| src.contains(a))
        || (src.contains("source:\"payload\"") && src.contains("source:\"fallback\""))
}

/// A name a getter may read, whatever its prefix: a short identifier-like
/// key (a getter's first argument can also be a message or a path).
pub fn is_read_name(s: &str) -> bool {
    (2..=MAX_READ_NAME).contains(&s.len())
        && s.bytes().any(|b| b == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The longest name read as a flag whatever its prefix.
const MAX_READ_NAME: usize = 100;

/// What every flag name starts with, and what the names read through
/// getters whatever their prefix hold (`bot_protected_tengu_…`).
const FLAG_PREFIX: &str = "tengu_";

/// Whether a module's source may hold a flag read: the test by which the
/// analyses' index makes a module's pretty line map at once rather than on
/// demand ([`crate::js::code::Depth::LinesWhere`]). A module it refuses
/// that holds one anyway (a flag name imported from another chunk) only
/// costs a second parse.
pub fn may_read_flags(src: &str) -> bool {
    memchr::memmem::find(src.as_bytes(), FLAG_PREFIX.as_bytes()).is_some()
}

pub fn is_flag_name(s: &str) -> bool {
    s.starts_with(FLAG_PREFIX)
        && s.len() > FLAG_PREFIX.len()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
