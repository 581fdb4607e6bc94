use super::format::OutputArgs;
use super::{App, TargetArg};
use crate::analysis::flags::FlagKind;
use crate::report::flags::FlagsView;
use clap::Args;

#[derive(Args)]
pub struct FlagsArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only flags whose name matches this regex.
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,
    /// Only flags of this kind.
    #[arg(long, value_enum, value_name = "KIND")]
    pub kind: Option<FlagKind>,
    /// List every site of every flag shown.
    #[arg(long)]
    pub sites: bool,
    /// Show cached values from this Claude Code config (default: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json). Never written.
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &FlagsArgs) -> anyhow::Result<i32> {
    // Options first: a bad pattern or config is reported before the parse.
    let re = match a.grep.as_deref().map(regex::Regex::new).transpose() {
        Ok(re) => re,
        Err(e) => usage!("bad --grep pattern: {e}"),
    };
    let config = super::gates::config_for(a.config.as_ref())?;
    let opened = app.open(&a.target.target)?;
    let build = app.build(&opened)?;
    let an = app.analyse(&build)?.last_use();
    let mut inv = app.core(&an)?.flags.clone();
    if let Some(re) = &re {
        inv.flags.retain(|f| re.is_match(&f.name));
    }
    if let Some(k) = a.kind {
        inv.flags.retain(|f| f.kind == k);
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
    let view = FlagsView {
        target: opened.label.clone(),
        version: build.version().best().map(str::to_string),
        inventory: &inv,
        config,
        cached,
        cached_not_read,
        read_not_cached,
        sites: a.sites,
    };
    app.emit(&a.out, &view)
}
