//! The arguments of `history`'s subcommands.

use crate::cli::format::OutputArgs;
use crate::report::emit::Format;
use crate::source::npm;
use crate::store::history::ItemKind;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args)]
pub struct PlatformArg {
    /// Only this platform (default: every platform scanned).
    #[arg(long, short, value_parser = clap::builder::PossibleValuesParser::new(npm::PLATFORMS))]
    pub platform: Option<String>,
}

impl PlatformArg {
    pub fn get(&self) -> Option<&str> {
        self.platform.as_deref()
    }
}

#[derive(Args)]
pub struct ScanArgs {
    /// The versions: A..B, A.., ..B, ..latest, all, or a comma-separated list.
    pub range: String,
    /// The platforms to scan (repeat, or `all`; default: this host's).
    #[arg(long, short)]
    pub platform: Vec<String>,
    /// Keep the downloaded builds in the cache instead of deleting each once analysed.
    #[arg(long)]
    pub keep: bool,
    /// Downloads in flight at once (analysis runs one build at a time, on every core).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=8))]
    pub jobs: u16,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub platform: PlatformArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Args)]
pub struct ShowArgs {
    #[arg(value_enum, value_name = "KIND")]
    pub kind: ItemKind,
    pub name: String,
    #[command(flatten)]
    pub platform: PlatformArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Args)]
pub struct ChangesArgs {
    pub version: String,
    #[command(flatten)]
    pub platform: PlatformArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Args)]
pub struct SearchArgs {
    pub text: String,
    #[command(flatten)]
    pub platform: PlatformArg,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The timeline's output options: those of every view, but a page by
/// default.
#[derive(Args)]
pub struct TimelineArgs {
    #[command(flatten)]
    pub platform: PlatformArg,
    /// html (one self-contained page; the default), md (Markdown), text (for a terminal) or json (as --json).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Where to write (default: stdout).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl TimelineArgs {
    pub fn out(&self) -> OutputArgs {
        OutputArgs {
            format: self.format,
            output: self.output.clone(),
        }
    }
}

/// What `history export` writes: data for other tools, not a view.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Sqlite,
    Json,
    Csv,
    // A git repository: a commit per release, tagged v<version>.
    Git,
}

#[derive(Args)]
pub struct ExportArgs {
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Where to write (needed for sqlite; JSON and CSV go to stdout without it).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// git: the repository's folder (made when missing or empty; appended to when it is one this command made).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// git: the platform, one branch each (default: the first platform scanned); json, csv: only this platform.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(npm::PLATFORMS))]
    pub platform: Option<String>,
}

#[derive(Args)]
pub struct MergeArgs {
    /// The stores to merge (each is only read).
    #[arg(required = true, value_name = "STORE")]
    pub stores: Vec<PathBuf>,
    /// The merged store: a new file.
    #[arg(long, short, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace OUT when it is a regular file of its own (never one of the STOREs, never through a link).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub format: crate::cli::format::FormatArg,
}

#[derive(Args)]
pub struct SiteArgs {
    /// The folder to write the site into (made when missing; a folder an earlier run made is updated in place).
    pub dir: PathBuf,
    /// The platform whose releases the site shows (default: the store's only one, else the first by name); the others' differences are shown on each item's page.
    #[arg(long, short, value_parser = clap::builder::PossibleValuesParser::new(npm::PLATFORMS))]
    pub platform: Option<String>,
    /// Replace files in DIR that an earlier run of this command did not write.
    #[arg(long)]
    pub force: bool,
}
