use super::{Global, TargetArg, print_json};
use crate::analysis::flags::{FlagInventory, FlagKind};
use crate::report::doc::fmt;
use crate::report::escape::display as esc;
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
    // Options first: a bad pattern or config is reported before the parse.
    let re = match a.grep.as_deref().map(regex::Regex::new).transpose() {
        Ok(re) => re,
        Err(e) => usage!("bad --grep pattern: {e}"),
    };
    let config = super::gates::config_for(a.config.as_ref())?;
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?;
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
        return print_json(&FlagsView {
            target: opened.label.clone(),
            version: build.version().best().map(str::to_string),
            inventory: &inv,
            config,
            cached,
            cached_not_read,
            read_not_cached,
        })
        .map(|_| 0);
    }
    let with_cache = !config.values.is_empty();
    let mut t = Table::new(&[
        ("flag", Align::Left),
        ("kind", Align::Left),
        ("default", Align::Left),
        ("cached", Align::Left),
        ("getter", Align::Left),
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
    out!("{}", t.render());
    let count = |k: FlagKind| inv.flags.iter().filter(|f| f.kind == k).count();
    woutln!(
        "{}: {} feature, {} event, {} config, {} other",
        fmt::count(inv.flags.len(), "flag", "flags"),
        fmt::n(count(FlagKind::Feature)),
        fmt::n(count(FlagKind::Event)),
        fmt::n(count(FlagKind::Config)),
        fmt::n(count(FlagKind::Other))
    );
    let getters: Vec<String> = inv
        .accessors
        .iter()
        .map(|x| {
            format!(
                "{} {}{} ({})",
                x.kind_str(),
                esc(&x.name),
                x.original
                    .as_ref()
                    .map(|o| format!(" [{}]", esc(o)))
                    .unwrap_or_default(),
                fmt::count(x.sites, "site", "sites")
            )
        })
        .collect();
    woutln!("accessors: {}", getters.join("; "));
    match (&config.problem, &config.path) {
        (Some(p), _) => woutln!("config: {}", esc(p)),
        (None, Some(path)) => {
            woutln!(
                "config: {} ({})",
                esc(path),
                fmt::count(config.values.len(), "cached value", "cached values")
            );
            if !cached_not_read.is_empty() {
                woutln!(
                    "cached but never read by this build: {}",
                    cached_not_read
                        .iter()
                        .map(|n| esc(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            woutln!(
                "read by this build but not cached: {} (--json lists them)",
                fmt::count(read_not_cached.len(), "flag", "flags")
            );
        }
        _ => {}
    }
    if a.sites {
        for f in &inv.flags {
            woutln!("\n{} ({})", esc(&f.name), f.kind.as_str());
            for s in &f.sites {
                woutln!(
                    "  {}:{}:{}  pretty {}  {}  {}{}{}",
                    esc(&s.module),
                    s.raw_line,
                    s.raw_col,
                    s.pretty_line,
                    s.kind.as_str(),
                    s.via
                        .as_deref()
                        .map(|v| format!("via {} ", esc(v)))
                        .unwrap_or_default(),
                    s.default
                        .as_ref()
                        .map(|d| format!("default {d} "))
                        .unwrap_or_default(),
                    s.function
                        .as_deref()
                        .map(|f| format!("in {}", esc(f)))
                        .unwrap_or_default()
                );
            }
        }
    }
    Ok(0)
}
