//! The command line: arguments (clap), one application context ([`App`])
//! and one call per command, whose answer is a view that
//! [`crate::report::emit::Output::emit`] writes.

/// Human diagnostics on stderr (notes, warnings, what a writer could not
/// write), with every control and bidirectional character of the line
/// escaped ([`crate::report::escape::text`]). Answers never go this way:
/// they are views, written by [`crate::report::emit::Output::emit`].
macro_rules! errln {
    ($($t:tt)*) => { eprintln!("{}", $crate::report::escape::text(&format!($($t)*))) };
}

/// `bail!` for a [`UsageError`].
macro_rules! usage {
    ($($t:tt)*) => { return Err($crate::cli::UsageError(format!($($t)*)).into()) };
}

mod app;
mod args;
mod cache;
mod diff;
mod errors;
mod extract;
mod fetch;
mod flags;
mod format;
mod gates;
mod grep;
mod hash;
mod history;
mod info;
mod installs;
mod integrity;
mod locate;
mod ls;
mod pretty;
mod report;
mod simulate;
mod surface;
mod symbols;
mod verify;
mod workflows;

pub use app::{App, Debug};
use args::TARGET_HELP;
pub use args::{Arch, Cli, Command, Global, TargetArg, VERSION};
pub use errors::{AnalysisError, UsageError, error_kind, error_line, report_error, usage_error};

/// Run the command line; returns the process exit code.
pub fn run(cli: Cli, debug: Debug) -> anyhow::Result<i32> {
    let app = &App::new(cli.global, debug);
    match &cli.command {
        Command::Info(a) => info::run(app, a),
        Command::Ls(a) => ls::run(app, a),
        Command::Extract(a) => extract::run(app, a),
        Command::Hash(a) => hash::run(app, a),
        Command::Verify(a) => verify::run(app, a),
        Command::Fetch(a) => fetch::run(app, a),
        Command::Cache(a) => cache::run(app, a),
        Command::History(a) => history::run(app, a),
        Command::Report(a) => report::run(app, a),
        Command::Diff(a) => diff::run(app, a),
        Command::Installs(a) => installs::run(app, a),
        Command::Pretty(a) => pretty::run(app, a),
        Command::Symbols(a) => symbols::run(app, a),
        Command::Grep(a) => grep::run(app, a),
        Command::Locate(a) => locate::run(app, a),
        Command::Flags(a) => flags::run(app, a),
        Command::Gates(a) => gates::run(app, a),
        Command::Surface(a) => surface::run(app, a),
        Command::Workflows(a) => workflows::run(app, a),
        Command::Reconstruct(a) => workflows::reconstruct(app, a),
        Command::Simulate(a) => simulate::run(app, a),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "cc-teardown", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            use std::io::Write;
            std::io::stdout().lock().write_all(&out)?;
            Ok(0)
        }
    }
}

#[cfg(test)]
mod version_tests {
    #[test]
    fn version_names_the_analysis_version() {
        assert!(
            super::VERSION.contains(crate::analysis::analysed::ANALYSIS_VERSION),
            "{}",
            super::VERSION
        );
        assert!(super::VERSION.starts_with(env!("CARGO_PKG_VERSION")));
    }
}
