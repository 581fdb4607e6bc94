//! Errors at the command line: the two kinds the CLI itself raises, and
//! how any error becomes one line on stderr (and a JSON object with
//! `--json`) with its exit status.

pub use crate::analysis::AnalysisError;

/// A wrong option value or a request the build cannot satisfy (no such
/// module, no such workflow, an unreadable --config): the `usage` kind of
/// JSON errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The `kind` of a JSON error: a small, stable vocabulary (docs/guide/usage.md, "Exit
/// status and errors"), read from the first typed error in the chain.
pub fn error_kind(e: &anyhow::Error) -> &'static str {
    use crate::source::build::BuildError;
    for cause in e.chain() {
        if cause.is::<UsageError>() || cause.is::<clap::Error>() {
            return "usage";
        }
        if cause.is::<crate::analysis::simulate::scenario::ScenarioError>() {
            return "usage";
        }
        if cause.is::<crate::source::SourceError>() {
            return "source";
        }
        if let Some(b) = cause.downcast_ref::<BuildError>() {
            return match b {
                BuildError::Container(_) => "container",
                BuildError::Graph(_) => "bun",
            };
        }
        if cause.is::<crate::container::ContainerError>() {
            return "container";
        }
        if cause.is::<crate::bun::GraphError>() || cause.is::<crate::bun::module::UnsafeName>() {
            return "bun";
        }
        if let Some(o) = cause.downcast_ref::<crate::report::outdir::OutputError>() {
            return match o {
                crate::report::outdir::OutputError::Collision(_) => "bun",
                crate::report::outdir::OutputError::InTheWay(_) => "io",
            };
        }
        if cause.is::<crate::js::JsError>() {
            return "js";
        }
        if cause.is::<crate::store::StoreError>() {
            return "store";
        }
        if cause.is::<AnalysisError>() || cause.is::<crate::analysis::simulate::SimulateError>() {
            return "analysis";
        }
        if cause.is::<std::io::Error>() || cause.is::<serde_json::Error>() {
            return "io";
        }
    }
    "internal"
}

/// An error as one line: its message and causes, joined, with untrusted
/// text escaped (a module name in a message must not drive the terminal).
pub fn error_line(e: &anyhow::Error) -> String {
    let joined = format!("{e:#}")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    crate::report::escape::display(&joined).into_owned()
}

/// Report an error: `error: …` on stderr and, with --json, the same as
/// `{"error":{"kind":…,"message":…}}` on stdout. Returns the exit code (2).
pub fn report_error(e: &anyhow::Error, json: bool) -> i32 {
    let line = error_line(e);
    eprintln!("error: {line}");
    if json {
        let v = serde_json::json!({"error": {"kind": error_kind(e), "message": line}});
        if let Ok(s) = crate::report::emit::to_json(&v) {
            use std::io::Write;
            let _ = std::io::stdout().lock().write_all(s.as_bytes());
        }
    }
    2
}

/// A command-line parse error as a [`UsageError`]: clap's message without
/// its `error:` prefix, usage block and help pointer, on one line (the
/// possible values and the suggestion stay).
pub fn usage_error(e: &clap::Error) -> anyhow::Error {
    // clap's plain rendering strips every escape sequence, which would show
    // `--kind $'\e]0;x\a'` as `--kind ''`. So: the styled rendering, without
    // its colours (SGR sequences), and what is left is escaped by
    // error_line, the argument as typed included.
    let styled = e.render().ansi().to_string();
    let mut rendered = String::with_capacity(styled.len());
    let mut rest = styled.as_str();
    while let Some(at) = rest.find("\x1b[") {
        rendered.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[params..].starts_with('m') {
            rest = &after[params + 1..];
        } else {
            rendered.push_str("\x1b[");
            rest = after;
        }
    }
    rendered.push_str(rest);
    let message = rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ");
    UsageError(message).into()
}
