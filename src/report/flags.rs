//! `flags`: the feature flags, events and config keys a build reads, with what a config caches.

use super::doc::{Block, Doc, Inline, Kind, Section, Table, fmt};
use super::emit::View;
use crate::analysis::flags::{FlagInventory, FlagKind};

#[derive(serde::Serialize)]
pub struct FlagsView<'a> {
    pub target: String,
    pub version: Option<String>,
    #[serde(flatten)]
    pub inventory: &'a FlagInventory,
    pub config: crate::analysis::gates::CachedFlags,
    /// Cached value of every feature flag this build reads (null: not cached).
    pub cached: std::collections::BTreeMap<String, serde_json::Value>,
    pub cached_not_read: Vec<String>,
    pub read_not_cached: Vec<String>,
    /// Every site of every flag in the human views (`--sites`).
    #[serde(skip)]
    pub sites: bool,
}

/// The inventory: one row per flag, the counts, the accessors, what the
/// config says, and with `sites` every site of every flag.
fn doc(
    label: &str,
    sites: bool,
    inv: &FlagInventory,
    config: &crate::analysis::gates::CachedFlags,
    cached_not_read: &[String],
    read_not_cached: &[String],
) -> Doc {
    let with_cache = !config.values.is_empty();
    let mut t = Table::of(&[
        ("flag", Kind::Code),
        ("kind", Kind::Text),
        ("default", Kind::Code),
        ("cached", Kind::Code),
        ("getter", Kind::Code),
        ("sites", Kind::Number),
        ("first site", Kind::Text),
    ]);
    for f in &inv.flags {
        let first = f.sites.first();
        t.text_row(vec![
            f.name.clone(),
            f.kind.as_str().to_string(),
            f.defaults
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
            match config.values.get(&f.name) {
                Some(v) => v.to_string(),
                None if with_cache && f.kind == FlagKind::Feature => "(not cached)".into(),
                None => String::new(),
            },
            f.getters.join(", "),
            fmt::n(f.sites.len()),
            first.map_or(String::new(), |s| {
                format!(
                    "{}:{} in {}",
                    s.module.rsplit('/').next().unwrap_or(""),
                    s.raw_line,
                    s.function.as_deref().unwrap_or("top level")
                )
            }),
        ]);
    }
    let mut d = Doc::new(Inline::from("Flags of ").c(label)).bare();
    let mut table = t;
    table.filter = true;
    d.scripts = true;
    d.push(Block::Table(table));
    let count = |k: FlagKind| inv.flags.iter().filter(|f| f.kind == k).count();
    d.push(Block::Note(
        format!(
            "{}: {} feature, {} event, {} config, {} other",
            fmt::count(inv.flags.len(), "flag", "flags"),
            fmt::n(count(FlagKind::Feature)),
            fmt::n(count(FlagKind::Event)),
            fmt::n(count(FlagKind::Config)),
            fmt::n(count(FlagKind::Other))
        )
        .into(),
    ));
    let mut getters = Inline::from("accessors: ");
    for (i, x) in inv.accessors.iter().enumerate() {
        if i > 0 {
            getters = getters.t("; ");
        }
        getters = getters.t(format!("{} ", x.kind_str())).c(x.name.clone());
        if let Some(o) = &x.original {
            getters = getters.t(" [").c(o.clone()).t("]");
        }
        getters = getters.t(format!(" ({})", fmt::count(x.sites, "site", "sites")));
    }
    d.push(Block::Note(getters));
    match (&config.problem, &config.path) {
        (Some(p), _) => d.push(Block::Note(Inline::from("config: ").t(p.clone()))),
        (None, Some(path)) => {
            d.push(Block::Note(Inline::from("config: ").c(path.clone()).t(
                format!(
                    " ({})",
                    fmt::count(config.values.len(), "cached value", "cached values")
                ),
            )));
            if !cached_not_read.is_empty() {
                d.push(Block::Note(
                    Inline::from("cached but never read by this build: ")
                        .extend(Inline::names(cached_not_read)),
                ));
            }
            d.push(Block::Note(
                format!(
                    "read by this build but not cached: {} (--json lists them)",
                    fmt::count(read_not_cached.len(), "flag", "flags")
                )
                .into(),
            ));
        }
        _ => {}
    }
    if sites {
        for f in &inv.flags {
            let mut t = Table::of(&[
                ("site", Kind::Code),
                ("pretty", Kind::Number),
                ("kind", Kind::Text),
                ("via", Kind::Code),
                ("default", Kind::Code),
                ("function", Kind::Code),
            ]);
            for s in &f.sites {
                t.text_row(vec![
                    format!("{}:{}:{}", s.module, s.raw_line, s.raw_col),
                    s.pretty_line.to_string(),
                    s.kind.as_str().to_string(),
                    s.via.clone().unwrap_or_default(),
                    s.default
                        .as_ref()
                        .map(|d| d.to_string())
                        .unwrap_or_default(),
                    s.function.clone().unwrap_or_default(),
                ]);
            }
            d.push(Block::Section(
                Section::new(
                    &format!("flag-{}", f.name),
                    Inline::code(f.name.clone()).t(format!(" ({})", f.kind.as_str())),
                    vec![Block::Table(t)],
                )
                .closed(),
            ));
        }
    }
    d
}

impl<'a> View for FlagsView<'a> {
    fn doc(&self) -> Doc {
        doc(
            &self.target,
            self.sites,
            self.inventory,
            &self.config,
            &self.cached_not_read,
            &self.read_not_cached,
        )
    }
}
