use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::analysis::flags::{FlagInventory, FlagKind};
use crate::report::doc::{Block, Doc, Inline, Section, fmt};
use crate::report::table::{Align, Table};
use clap::{Args, ValueEnum};

/// The kinds `--kind` accepts (those of [`FlagKind`]).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    Feature,
    Event,
    Config,
    Other,
}

impl KindArg {
    fn kind(self) -> FlagKind {
        match self {
            KindArg::Feature => FlagKind::Feature,
            KindArg::Event => FlagKind::Event,
            KindArg::Config => FlagKind::Config,
            KindArg::Other => FlagKind::Other,
        }
    }
}

#[derive(Args)]
pub struct FlagsArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only flags whose name matches this regex.
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,
    /// Only flags of this kind.
    #[arg(long, value_enum, value_name = "KIND")]
    pub kind: Option<KindArg>,
    /// List every site of every flag shown.
    #[arg(long)]
    pub sites: bool,
    /// Show cached values from this Claude Code config (default: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json). Never written.
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(serde::Serialize)]
struct FlagsView<'a> {
    target: String,
    version: Option<String>,
    #[serde(flatten)]
    inventory: &'a FlagInventory,
    config: crate::analysis::gates::CachedFlags,
    /// Cached value of every feature flag this build reads (null: not cached).
    cached: std::collections::BTreeMap<String, serde_json::Value>,
    cached_not_read: Vec<String>,
    read_not_cached: Vec<String>,
}

pub fn run(g: &Global, a: &FlagsArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    // Options first: a bad pattern or config is reported before the parse.
    let re = match a.grep.as_deref().map(regex::Regex::new).transpose() {
        Ok(re) => re,
        Err(e) => usage!("bad --grep pattern: {e}"),
    };
    let config = super::gates::config_for(a.config.as_ref())?;
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?.last_use();
    let mut inv = super::code::facts(g, &an)?.flags.clone();
    if let Some(re) = &re {
        inv.flags.retain(|f| re.is_match(&f.name));
    }
    if let Some(k) = a.kind {
        inv.flags.retain(|f| f.kind == k.kind());
    }
    let all_names: std::collections::HashSet<&str> =
        inv.flags.iter().map(|f| f.name.as_str()).collect();
    let features: Vec<&str> = inv
        .flags
        .iter()
        .filter(|f| f.kind == FlagKind::Feature)
        .map(|f| f.name.as_str())
        .collect();
    let cached: std::collections::BTreeMap<String, serde_json::Value> = features
        .iter()
        .map(|f| {
            (
                f.to_string(),
                config
                    .values
                    .get(*f)
                    .cloned()
                    .unwrap_or(serde_json::Value::Null),
            )
        })
        .collect();
    let cached_not_read: Vec<String> = config
        .values
        .keys()
        .filter(|k| !all_names.contains(k.as_str()))
        .cloned()
        .collect();
    let read_not_cached: Vec<String> = if config.values.is_empty() {
        Vec::new()
    } else {
        features
            .iter()
            .filter(|f| !config.values.contains_key(**f))
            .map(|f| f.to_string())
            .collect()
    };
    if g.json {
        return a
            .out
            .json(
                g,
                &FlagsView {
                    target: opened.label.clone(),
                    version: build.version().best().map(str::to_string),
                    inventory: &inv,
                    config,
                    cached,
                    cached_not_read,
                    read_not_cached,
                },
            )
            .map(|_| 0);
    }
    let d = doc(
        &opened.label,
        a.sites,
        &inv,
        &config,
        &cached_not_read,
        &read_not_cached,
    );
    a.out.text(g, &d)?;
    Ok(0)
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
    let mut t = Table::new(&[
        ("flag", Align::Code),
        ("kind", Align::Left),
        ("default", Align::Code),
        ("cached", Align::Code),
        ("getter", Align::Code),
        ("sites", Align::Right),
        ("first site", Align::Left),
    ]);
    for f in &inv.flags {
        let first = f.sites.first();
        t.row(vec![
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
    let mut table = t.doc();
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
            let mut t = Table::new(&[
                ("site", Align::Code),
                ("pretty", Align::Right),
                ("kind", Align::Left),
                ("via", Align::Code),
                ("default", Align::Code),
                ("function", Align::Code),
            ]);
            for s in &f.sites {
                t.row(vec![
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
                    vec![Block::Table(t.doc())],
                )
                .closed(),
            ));
        }
    }
    d
}
