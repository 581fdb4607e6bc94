//! The one way out: every command's answer is a [`View`] — a serialisable
//! struct that also knows its [`Doc`] — and [`Output::emit`] writes it as
//! JSON, for a terminal, as Markdown or as HTML, to stdout (paged when long)
//! or to a file (`-o`, never through a link), escaping untrusted text on
//! the way. Commands never print their results by hand.

use super::doc::{ColorChoice, Doc, Term};
use super::escape;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A command's answer: its JSON is the struct itself, its human form one
/// document built from the same values (so the two never disagree).
pub trait View: serde::Serialize {
    fn doc(&self) -> Doc;
    /// The document for one format, when a medium shows more (the report's
    /// Markdown and HTML carry the workflow scripts; its terminal form
    /// does not).
    fn doc_for(&self, format: Format) -> Doc {
        let _ = format;
        self.doc()
    }
    /// A terminal rendering of its own, for a view whose text form is
    /// line-oriented rather than a document (`grep`'s hits, as grep-like
    /// tools print them). None: the document's.
    fn terminal(&self, term: &Term) -> Option<String> {
        let _ = term;
        None
    }
    /// Writes its JSON by a writer of its own, when serde's would take
    /// long (a view of many megabytes writes its lists on both cores, see
    /// [`write_json_list`]): the bytes [`to_json`] gives. None (and nothing
    /// written): serde's.
    fn write_json(&self, w: &mut dyn Write) -> Option<Result<(), serde_json::Error>> {
        let _ = w;
        None
    }
}

/// The format of an answer (`--format`; `--json` is `json`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// For a terminal: colour and width as `--color` and the terminal say.
    #[cfg_attr(feature = "clap", value(alias = "human"))]
    Text,
    /// Markdown.
    Md,
    /// One self-contained HTML page (inline CSS and SVG, no network).
    Html,
    /// The machine format (the same as --json).
    Json,
}

/// Where and how an answer goes out.
#[derive(Clone, Debug)]
pub struct Output {
    pub format: Format,
    /// `-o FILE`: written beside and renamed into place (see
    /// [`super::outdir::write_file`]); None is stdout.
    pub file: Option<PathBuf>,
    pub color: ColorChoice,
    /// Long text for a terminal goes through the pager.
    pub pager: bool,
    /// With `-o`, no "wrote FILE" note on stderr.
    pub quiet: bool,
    /// With `-o`, say what was written as JSON on stdout (`--json`).
    pub receipt_json: bool,
}

/// What can go wrong on the way out.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    File(#[from] anyhow::Error),
}

impl Output {
    /// Stdout, text, no colour, no pager: what a test or a library user wants.
    pub fn plain(format: Format) -> Output {
        Output {
            format,
            file: None,
            color: ColorChoice::Never,
            pager: false,
            quiet: true,
            receipt_json: false,
        }
    }

    /// Write a view in the format asked for.
    pub fn emit(&self, v: &(impl View + ?Sized)) -> Result<(), EmitError> {
        match self.format {
            Format::Json => self.view_json(v),
            Format::Text => match v.terminal(&self.term_for_file()) {
                Some(text) => self.text(&text),
                None => self.doc(&v.doc()),
            },
            f => self.doc(&v.doc_for(f)),
        }
    }

    /// A view as JSON, by its own writer when it has one.
    fn view_json(&self, v: &(impl View + ?Sized)) -> Result<(), EmitError> {
        let io = |e: serde_json::Error| match e.is_io() {
            true => EmitError::Io(e.into()),
            false => EmitError::Json(e),
        };
        match self.file {
            Some(_) => {
                let mut out = Vec::new();
                match v.write_json(&mut out) {
                    Some(r) => {
                        r?;
                        self.write_bytes(&out)
                    }
                    None => self.json(v),
                }
            }
            None => {
                let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                match v.write_json(&mut out) {
                    Some(r) => {
                        r.map_err(io)?;
                        out.flush()?;
                        Ok(())
                    }
                    None => {
                        drop(out);
                        self.json(v)
                    }
                }
            }
        }
    }

    /// A value as JSON, to the file when given (saying so), else stdout.
    pub fn json(&self, v: &(impl serde::Serialize + ?Sized)) -> Result<(), EmitError> {
        match self.file {
            Some(_) => self.write(&to_json(v)?),
            None => print_json(v),
        }
    }

    /// A document in this output's human format (JSON asked for but only a
    /// document at hand: the terminal form).
    pub fn doc(&self, d: &Doc) -> Result<(), EmitError> {
        // Markdown and HTML are documents of text from the build: escaped
        // as a whole (line breaks and tabs stay), for a terminal or a file.
        match self.format {
            Format::Md => self.write(&escape::text(&d.markdown())),
            Format::Html => self.write(&escape::text(&d.html())),
            Format::Text | Format::Json => match &self.file {
                Some(_) => self.write(&d.terminal(&Term {
                    color: self.color == ColorChoice::Always && !d.needs_escape(),
                    width: None,
                })),
                None => {
                    let mut t = self.term();
                    t.color &= !d.needs_escape();
                    self.page(&d.terminal(&t))
                }
            },
        }
    }

    /// How the terminal renderer writes here: into a file, no colour
    /// (unless `--color always`) and whole lines; else as [`Output::term`].
    fn term_for_file(&self) -> Term {
        match &self.file {
            Some(_) => Term {
                color: self.color == ColorChoice::Always,
                width: None,
            },
            None => self.term(),
        }
    }

    /// Text for a person: into the file, else paged on stdout.
    fn text(&self, text: &str) -> Result<(), EmitError> {
        match &self.file {
            Some(_) => self.write(text),
            None => self.page(text),
        }
    }

    /// Rendered text to the file (saying so on stderr; with `--json`, as
    /// JSON on stdout), or to stdout.
    pub fn write(&self, text: &str) -> Result<(), EmitError> {
        self.write_bytes(text.as_bytes())
    }

    /// [`Output::write`], of bytes that are text already.
    fn write_bytes(&self, text: &[u8]) -> Result<(), EmitError> {
        match &self.file {
            Some(p) => {
                super::outdir::write_file(p, text)?;
                if self.receipt_json {
                    print_json(&serde_json::json!({
                        "output": p.display().to_string(),
                        "bytes": text.len(),
                    }))?;
                } else if !self.quiet {
                    eprintln!("{}", escape::text(&format!("wrote {}", p.display())));
                }
            }
            None => std::io::stdout().lock().write_all(text)?,
        }
        Ok(())
    }

    /// How the terminal renderer writes to stdout: colour per `--color`,
    /// width per `COLUMNS` or the terminal.
    pub fn term(&self) -> Term {
        use std::io::IsTerminal;
        Term {
            color: self.color.enabled(std::io::stdout().is_terminal()),
            width: super::doc::terminal_width(),
        }
    }

    /// Human text on stdout; when stdout is a terminal and the text is
    /// taller than it, through `$PAGER` (else `less -R`), as git does.
    /// `LESS=FRX` unless set: quit when it fits, keep colours, leave the
    /// text on the screen. Any failure to start the pager prints directly.
    pub fn page(&self, text: &str) -> Result<(), EmitError> {
        use std::io::IsTerminal;
        let tall = || {
            let rows = std::env::var("LINES")
                .ok()
                .and_then(|l| l.parse::<usize>().ok())
                .unwrap_or(24);
            text.lines().count() >= rows
        };
        if self.pager
            && self.format != Format::Json
            && std::io::stdout().is_terminal()
            && tall()
            && pager(text)
        {
            return Ok(());
        }
        std::io::stdout().lock().write_all(text.as_bytes())?;
        Ok(())
    }

    /// The file this output goes to, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
}

/// Send `text` through the user's pager; false when none could be started.
fn pager(text: &str) -> bool {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -R".to_string());
    if pager.trim() == "cat" {
        return false;
    }
    let mut words = pager.split_whitespace();
    let Some(prog) = words.next() else {
        return false;
    };
    let mut cmd = std::process::Command::new(prog);
    cmd.args(words).stdin(std::process::Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        cmd.env("LESS", "FRX");
    }
    let Ok(mut child) = cmd.spawn() else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A reader who quits early closes the pipe: not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    let _ = child.wait();
    true
}

/// Pretty JSON, safe to print ([`escape::SafeJson`]), with a final line
/// break.
pub fn to_json(v: &(impl serde::Serialize + ?Sized)) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    write_json(&mut out, v)?;
    // The serialiser writes whole strings and ASCII layout.
    String::from_utf8(out).map_err(serde::ser::Error::custom)
}

/// Pretty JSON, safe to print, with a final line break, into `w`.
fn write_json(
    mut w: impl Write,
    v: &(impl serde::Serialize + ?Sized),
) -> Result<(), serde_json::Error> {
    let mut ser = serde_json::Serializer::with_formatter(&mut w, escape::SafeJson::default());
    v.serialize(&mut ser)?;
    w.write_all(b"\n").map_err(serde_json::Error::io)
}

/// Writes the pretty JSON of a list that stands `depth` levels deep in a
/// document (its brackets at that level, its items one deeper): the bytes
/// [`to_json`] writes for it there, but its items rendered two runs at a
/// time, one on each core, each pair written out before the next (so two
/// runs' buffers are all it holds). 16 MB of prompts took a warm `surface
/// --json` a fifth of its time on one core.
pub fn write_json_list<T: serde::Serialize + Sync>(
    w: &mut dyn Write,
    items: &[T],
    depth: usize,
) -> Result<(), serde_json::Error> {
    /// How many runs a list is cut into: enough that the two of a pair
    /// are alike in size, few enough that each is worth a task.
    const RUNS: usize = 32;
    let render = |items: &[T], first: bool, out: &mut Vec<u8>| -> Result<(), serde_json::Error> {
        out.clear();
        for (i, item) in items.iter().enumerate() {
            if !(first && i == 0) {
                out.push(b',');
            }
            escape::new_line(out, depth + 1).map_err(serde_json::Error::io)?;
            let f = escape::SafeJson::at_depth(depth + 1);
            item.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, f))?;
        }
        Ok(())
    };
    w.write_all(b"[").map_err(serde_json::Error::io)?;
    if items.is_empty() {
        return w.write_all(b"]").map_err(serde_json::Error::io);
    }
    let runs: Vec<&[T]> = items.chunks(items.len().div_ceil(RUNS)).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (k, pair) in runs.chunks(2).enumerate() {
        let (ra, rb) = rayon::join(
            || render(pair[0], k == 0, &mut a),
            || match pair.get(1) {
                Some(run) => render(run, false, &mut b),
                None => {
                    b.clear();
                    Ok(())
                }
            },
        );
        ra?;
        rb?;
        w.write_all(&a).map_err(serde_json::Error::io)?;
        w.write_all(&b).map_err(serde_json::Error::io)?;
    }
    escape::new_line(w, depth).map_err(serde_json::Error::io)?;
    w.write_all(b"]").map_err(serde_json::Error::io)
}

/// A value as pretty JSON on stdout, written as it is serialised.
pub fn print_json(v: &(impl serde::Serialize + ?Sized)) -> Result<(), EmitError> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    // A failed write is the output's error, not the data's.
    write_json(&mut out, v).map_err(|e| match e.is_io() {
        true => EmitError::Io(e.into()),
        false => EmitError::Json(e),
    })?;
    out.flush()?;
    Ok(())
}
