//! The command line's shape: the commands, their global options and the
//! TARGET argument (clap). Each command's own options live beside it.

use super::*;
use crate::container::ContainerOptions;
use crate::report::doc::ColorChoice;
use crate::source::build::Build;
use crate::source::{Opened, SourceOptions, Target};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub(super) const TARGET_HELP: &str = "What to read: a path to an executable, a .js bundle or an npm .tgz; \
npm:VERSION[/PLATFORM] (fetched and cached; PLATFORM defaults to this host's); installed; installed:VERSION";

/// `--version`: the tool's version and the analysis version that keys the
/// facts store (`cc_teardown::analysis::analysed::ANALYSIS_VERSION`; a
/// test checks they agree).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (analysis 1-",
    env!("CC_TEARDOWN_ANALYSIS_FINGERPRINT"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "cc-teardown",
    version = VERSION,
    about = "Tear down Claude Code's native executables: find the Bun payload, list, extract, hash and verify its modules",
    after_help = "Examples:\n  cc-teardown info npm:2.1.220/darwin-arm64\n  cc-teardown ls ./claude --json\n  cc-teardown extract npm:2.1.260/darwin-arm64 -o out/\n\nRun `cc-teardown COMMAND --help` for each command's options.\n\nExit status: 0 on success, 1 for a negative answer (verify: no match; grep, symbols: nothing found; diff --exit-code: the builds differ; reconstruct, simulate: see their help), 2 on error. Errors are one line on stderr; with --json also {\"error\":{\"kind\",\"message\"}} on stdout."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

impl Cli {
    /// Whether this command analyses build after build in one process
    /// (`history scan`), rather than one build or two and then exit.
    pub fn analyses_many_builds(&self) -> bool {
        matches!(
            &self.command,
            Command::History(history::HistoryArgs {
                command: history::HistoryCommand::Scan(_),
            })
        )
    }
}

#[derive(Args, Clone)]
pub struct Global {
    /// Print machine-readable JSON on stdout; an error is then a JSON object too (exit 2).
    #[arg(long, global = true)]
    pub json: bool,
    /// The architecture to read: the slice of a fat Mach-O (default arm64); any other file must be of this architecture.
    #[arg(long, global = true, value_enum, value_name = "ARCH")]
    pub arch: Option<Arch>,
    /// Where fetched builds are kept (default: $CC_TEARDOWN_CACHE, else the XDG cache dir).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Decoded bytes the whole run may produce from compressed modules (one budget shared by every module).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = 1 << 30)]
    pub max_decoded: u64,
    /// The run's decoding budget, made from `max_decoded` on first use and
    /// shared by clones, so every command and both builds of `diff` draw on
    /// one budget.
    #[arg(skip)]
    decode_budget: std::sync::Arc<std::sync::OnceLock<crate::bun::Budget>>,
    /// Never show progress bars.
    #[arg(long, global = true)]
    pub quiet: bool,
    /// Neither read nor write the facts store: analyse from scratch.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// The facts store's file (default: $CC_TEARDOWN_STORE, else facts.sqlite in the cache dir) — e.g. a history database someone published.
    #[arg(long, global = true, value_name = "FILE", env = "CC_TEARDOWN_STORE")]
    pub store: Option<PathBuf>,
    /// Colour human output: auto (a terminal, unless NO_COLOR is set; CLICOLOR_FORCE forces it), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Never page long human output (by default it goes through $PAGER, else `less -R`, when stdout is a terminal).
    #[arg(long, global = true)]
    pub no_pager: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Container, Bun layout, entry module, version and bundle hash of a build.
    #[command(
        after_help = "Example:\n  cc-teardown info npm:2.1.220/darwin-arm64\n  cc-teardown info ./claude --json | jq .bundle.sha256"
    )]
    Info(info::InfoArgs),
    /// One row per embedded module.
    #[command(
        after_help = "Example:\n  cc-teardown ls npm:2.1.260/darwin-arm64\n  cc-teardown ls ./claude.exe --json | jq '.modules[].name'"
    )]
    Ls(ls::LsArgs),
    /// Write every module below a folder, with a manifest.
    #[command(
        after_help = "Example:\n  cc-teardown extract npm:2.1.220/darwin-arm64 -o cc-2.1.220\n  cc-teardown extract ./claude -o out --raw --bytecode"
    )]
    Extract(extract::ExtractArgs),
    /// SHA-256 of the file, the payload, the bundle and every module.
    #[command(after_help = "Example:\n  cc-teardown hash npm:2.1.260/darwin-arm64")]
    Hash(hash::HashArgs),
    /// Check a build against a SHA-256, against its published package, or compare every platform's build.
    #[command(
        after_help = "Example:\n  cc-teardown verify npm:2.1.220/darwin-arm64 --sha256 d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120\n  cc-teardown verify ./claude --file --sha256 HEX\n  cc-teardown verify installed --published\n  cc-teardown verify --platforms 2.1.220\n\nExit status: 0 when it matches (--published: identical; --platforms: same JavaScript everywhere), 1 when it does not, 2 on error. docs/guide/integrity.md says what is checked."
    )]
    Verify(verify::VerifyArgs),
    /// Pretty-print JavaScript modules, with a line map between raw and pretty lines.
    #[command(
        after_help = "Example:\n  cc-teardown pretty npm:2.1.220/darwin-arm64 -o cli.pretty.js\n  cc-teardown pretty npm:2.1.260/darwin-arm64 -o pretty/\n  cc-teardown pretty npm:2.1.220/darwin-arm64 --at 15832\n  cc-teardown pretty ./claude --module url-handler.js | less"
    )]
    Pretty(pretty::PrettyArgs),
    /// Original names the bundler left behind, and cross-chunk import links.
    #[command(
        after_help = "Example:\n  cc-teardown symbols npm:2.1.220/darwin-arm64 --grep Workflow\n  cc-teardown symbols npm:2.1.260/darwin-arm64 --grep '^initBundledWorkflows$' --links\n\nExit status: 0 when something is listed, 1 when nothing is (as grep), 2 on error."
    )]
    Symbols(symbols::SymbolsArgs),
    /// Search string and template literals (cooked values) and identifiers.
    #[command(
        after_help = "Example:\n  cc-teardown grep npm:2.1.220/darwin-arm64 'export const meta' -C 2\n  cc-teardown grep npm:2.1.260/darwin-arm64 -e 'tengu_review_\\w+' --scope strings\n  cc-teardown grep ./claude initBundledWorkflows --scope identifiers --json\n\nExit status: 0 when something matches, 1 when nothing does (as grep and rg), 2 on error."
    )]
    Grep(grep::GrepArgs),
    /// Find the functions that register, build, look up, initialise and gate the bundled workflows.
    #[command(
        after_help = "Example:\n  cc-teardown locate npm:2.1.220/darwin-arm64\n  cc-teardown locate npm:2.1.260/darwin-arm64 --json | jq '.functions[] | {role, name, raw_start}'"
    )]
    Locate(locate::LocateArgs),
    /// Every bundled workflow: meta, options, script facts, syntax check, review levels.
    #[command(
        after_help = "Example:\n  cc-teardown workflows npm:2.1.220/darwin-arm64\n  cc-teardown workflows npm:2.1.220/linux-x64 --json | jq '.workflows[] | {name, hidden, sha: .script.sha256}'"
    )]
    Workflows(workflows::WorkflowsArgs),
    /// Write each bundled workflow's exact script (NAME.js) and facts (NAME.meta.json).
    #[command(
        after_help = "Example:\n  cc-teardown reconstruct npm:2.1.220/darwin-arm64 -o workflows/\n  cc-teardown reconstruct ./claude --name code-review -o out/\n\nExit status 1 when a script could not be reconstructed (the reason names the expression and its line)."
    )]
    Reconstruct(workflows::ReconstructArgs),
    /// Every tengu_* flag, classified: feature (read through a flag getter), event (telemetry), config, other.
    #[command(
        after_help = "Example:\n  cc-teardown flags npm:2.1.220/darwin-arm64 --kind feature\n  cc-teardown flags npm:2.1.220/darwin-arm64 --grep review --sites\n  cc-teardown flags ./claude --json | jq '.flags[] | select(.kind == \"feature\") | .name'"
    )]
    Flags(flags::FlagsArgs),
    /// The conditions of each gate (review routing, computed workflow options, flag-decided functions) and their verdict under cached flag values.
    #[command(
        after_help = "Example:\n  cc-teardown gates npm:2.1.220/darwin-arm64\n  cc-teardown gates npm:2.1.220/darwin-arm64 --config ~/.claude.json --json | jq '.gates[0].verdict'\n  cc-teardown gates ./claude --all"
    )]
    Gates(gates::GatesArgs),
    /// The whole surface of a build: tools with their input schemas, prompts, environment variables, settings, slash commands, models, and the schema descriptions no model reads (the SDK protocol's).
    #[command(
        after_help = "Example:\n  cc-teardown surface npm:2.1.332/darwin-arm64\n  cc-teardown surface npm:2.1.220/darwin-arm64 --only tools,env\n  cc-teardown surface npm:2.1.240/darwin-arm64 --only schemas --json | jq '.schemas[] | select(.schema == \"interrupt\")'\n  cc-teardown surface ./claude --json | jq '.tools[] | {name, required: .input_schema.required}'\n\nSee docs/guide/surface.md."
    )]
    Surface(surface::SurfaceArgs),
    /// Every Claude Code installation here, and which one the shell runs.
    #[command(
        after_help = "Example:\n  cc-teardown installs\n  cc-teardown installs --root /mnt/other-machine --json | jq '.installs[] | {path, version, selected}'\n\nTARGET `installed` (the selected one) and `installed:VERSION` work in every command."
    )]
    Installs(installs::InstallsArgs),
    /// One teardown report: facts, hashes, layout, located roles, workflows with levels, gates with verdicts, flags — as Markdown, JSON or a self-contained HTML page.
    #[command(
        after_help = "Example:\n  cc-teardown report npm:2.1.220/darwin-arm64 --format md -o teardown.md\n  cc-teardown report --format html -o teardown.html        # the installation the shell runs\n  cc-teardown report installed:2.1.260 --format json"
    )]
    Report(report::ReportArgs),
    /// What changed between two builds: identity, modules, workflows, flags, gates, roles, functions and texts — despite renamed minified names.
    #[command(
        after_help = "Example:\n  cc-teardown diff npm:2.1.220/darwin-arm64 npm:2.1.260/darwin-arm64\n  cc-teardown diff npm:2.1.220/darwin-arm64 npm:2.1.260/darwin-arm64 --json | jq '.workflows.removed'\n  cc-teardown diff npm:2.1.220/darwin-arm64 npm:2.1.220/linux-x64 --only workflows,flags,gates\n  cc-teardown diff ./old/claude ./new/claude --format md -o changes.md"
    )]
    Diff(diff::DiffArgs),
    /// Dry-run a bundled workflow (or any script) under a simulated Workflow runtime, without a model: a trace of stages, agent calls, fan-outs, logs and the result.
    #[command(
        after_help = "Example:\n  cc-teardown simulate npm:2.1.220/darwin-arm64 --workflow code-review --args \"xhigh main...HEAD\"\n  cc-teardown simulate npm:2.1.260/darwin-arm64 --workflow deep-research --args \"why is the sky blue\" --json | jq '.agents | length'\n  cc-teardown simulate npm:2.1.220/darwin-arm64 --workflow code-review --args high --scenario empty-scope.json\n  cc-teardown simulate --script workflows/code-review.js --args max --seed 7 --timeout-ms 2000\n\nAgent results come from --scenario (docs/guide/simulate.md), else a seeded generator that follows each call's schema.\nExit status: 0 when the script completed, 1 when it threw, hit a limit or used a missing global, 2 on bad input."
    )]
    Simulate(simulate::SimulateArgs),
    /// Show or empty the facts store, where analysed builds' facts are kept between runs.
    #[command(
        after_help = "Example:\n  cc-teardown cache info\n  cc-teardown cache info --json | jq .builds\n  cc-teardown cache clear\n\nEvery analysis command reads a build's facts from the store when it has them (--no-cache bypasses it). See docs/guide/cache.md."
    )]
    Cache(cache::CacheArgs),
    /// Every published build in one database: scan versions, then ask when a workflow, flag, tool, prompt, env var or command appeared, changed and went.
    #[command(
        after_help = "Example:\n  cc-teardown history scan 2.1.239..2.1.243 --platform darwin-arm64\n  cc-teardown history show workflow deep-research\n  cc-teardown history changes 2.1.242\n  cc-teardown history search bot_protected\n\nThe history lives in the facts store (docs/guide/history.md)."
    )]
    History(history::HistoryArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Example:\n  cc-teardown completions bash > ~/.local/share/bash-completion/completions/cc-teardown\n  cc-teardown completions zsh > ~/.zfunc/_cc-teardown\n  cc-teardown completions fish > ~/.config/fish/completions/cc-teardown.fish"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `cc-teardown man | man -l -`.
    #[command(
        after_help = "Example:\n  cc-teardown man > /usr/local/share/man/man1/cc-teardown.1\n  cc-teardown man | man -l -"
    )]
    Man,
    /// Download a published build into the cache and print the executable's path.
    #[command(
        after_help = "Example:\n  cc-teardown fetch 2.1.220 --platform darwin-arm64\n  cc-teardown fetch npm:2.1.332/linux-x64\n  cc-teardown fetch latest\n\nThe registry comes from npm's configuration (NPM_CONFIG_REGISTRY, .npmrc, `npm config get registry`)."
    )]
    Fetch(fetch::FetchArgs),
}

/// Architectures `--arch` names (the names `info` reports).
pub use crate::container::Arch;

/// A TARGET argument shared by the commands.
#[derive(Args, Clone)]
pub struct TargetArg {
    #[arg(value_name = "TARGET", help = TARGET_HELP)]
    pub target: String,
}

impl Global {
    pub fn source_options(&self) -> SourceOptions {
        SourceOptions {
            cache_dir: self
                .cache_dir
                .clone()
                .unwrap_or_else(crate::source::cache::default_cache_dir),
            progress: if !self.quiet
                && !self.json
                && std::io::IsTerminal::is_terminal(&std::io::stderr())
            {
                std::sync::Arc::new(fetch::DownloadBar::default())
            } else {
                std::sync::Arc::new(crate::source::npm::Silent)
            },
        }
    }

    /// The facts store's file: `--store` (the user's file: never removed),
    /// else facts.sqlite in the cache dir (the cache's: rebuilt when unusable).
    pub fn store_location(&self) -> (PathBuf, crate::store::Ownership) {
        match &self.store {
            Some(p) => (p.clone(), crate::store::Ownership::Named),
            None => {
                let dir = self
                    .cache_dir
                    .clone()
                    .unwrap_or_else(crate::source::cache::default_cache_dir);
                (
                    crate::store::FactsStore::path_in(&dir),
                    crate::store::Ownership::Cache,
                )
            }
        }
    }

    /// The cache folder: `--cache-dir`, else $CC_TEARDOWN_CACHE or the
    /// XDG cache dir.
    pub fn cache_folder(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(crate::source::cache::default_cache_dir)
    }

    pub fn container_options(&self) -> ContainerOptions {
        ContainerOptions {
            arch: self.arch,
            assume_js: false,
        }
    }

    /// The decoding budget of this run (`--max-decoded`).
    pub fn budget(&self) -> &crate::bun::Budget {
        self.decode_budget
            .get_or_init(|| crate::bun::Budget::new(self.max_decoded))
    }

    pub fn open(&self, target: &str) -> anyhow::Result<Opened> {
        let t: Target = target.parse()?;
        Ok(t.open(&self.source_options())?)
    }

    pub fn build<'a>(&self, opened: &'a Opened) -> anyhow::Result<Build<'a>> {
        use anyhow::Context;
        // Context, not a new message: the typed error stays in the chain
        // for the JSON error's kind.
        Build::open(opened, &self.container_options()).with_context(|| opened.label.clone())
    }
}
