//! `--format` and `-o` of every command that answers with a view: one
//! option shape; [`super::App::output`] turns it into the one way out.

pub use crate::report::emit::Format;
use clap::Args;
use std::path::PathBuf;

/// The output options of a view. `format` is optional so that each command
/// keeps its own default (text everywhere, Markdown for `report`).
#[derive(Args, Clone, Default)]
pub struct OutputArgs {
    /// text (for a terminal; the default, except md for `report`), md (Markdown), html (one self-contained page) or json (as --json).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Write the output here instead of stdout (text: no colour, whole lines).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--format` alone, for commands whose `-o` names a folder they write
/// (the answer — what was written — goes to stdout).
#[derive(Args, Clone, Default)]
pub struct FormatArg {
    /// text (for a terminal; the default), md (Markdown), html (one self-contained page) or json (as --json).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
}

impl FormatArg {
    /// As output options: to stdout.
    pub fn output(&self) -> OutputArgs {
        OutputArgs {
            format: self.format,
            output: None,
        }
    }
}
