//! `--format` and `-o` of every human view: one option shape, one way to
//! render a [`Doc`] (terminal, Markdown, HTML) and JSON beside it.

use super::Global;
use crate::report::doc::Doc;
use crate::report::escape;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum Format {
    /// For a terminal: colour and width as `--color` and the terminal say.
    #[value(alias = "human")]
    Text,
    /// Markdown.
    Md,
    /// One self-contained HTML page (inline CSS and SVG, no network).
    Html,
    /// The machine format (the same as --json).
    Json,
}

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

impl OutputArgs {
    /// The format asked for: --json wins, else --format, else `default`.
    pub fn format(&self, g: &Global, default: Format) -> Format {
        if g.json {
            Format::Json
        } else {
            self.format.unwrap_or(default)
        }
    }

    /// `g` with `--json` set when `--format json` was given, so commands
    /// keep one test for the machine format.
    pub fn global(&self, g: &Global) -> Global {
        let mut g = g.clone();
        g.json |= self.format == Some(Format::Json);
        g
    }

    /// Write a view's document in the format asked for (`format` is not
    /// JSON: commands print their own struct for that).
    pub fn show(&self, g: &Global, format: Format, d: &Doc) -> anyhow::Result<()> {
        let out = self.output.as_deref();
        // Markdown and HTML are documents of text from the build: escaped
        // as a whole (line breaks and tabs stay), for a terminal or a file.
        match format {
            Format::Text | Format::Json => super::show_doc(g, out, d),
            Format::Md => super::write_output(g, out, &escape::text(&d.markdown())),
            Format::Html => super::write_output(g, out, &escape::text(&d.html())),
        }
    }

    /// `show` with this command's default of text. JSON output goes through
    /// `print_json`/`write_json` instead.
    pub fn text(&self, g: &Global, d: &Doc) -> anyhow::Result<()> {
        self.show(g, self.format(g, Format::Text), d)
    }

    /// A view's JSON, to `-o` when given (saying so), else stdout.
    pub fn json(&self, g: &Global, v: &impl serde::Serialize) -> anyhow::Result<()> {
        match &self.output {
            Some(_) => super::write_output(g, self.output.as_deref(), &super::to_json(v)?),
            None => super::print_json(v),
        }
    }
}
