//! Pretty-printing with swc_ecma_codegen (minify off), recording on which
//! output line every printed token from the source lands.

use super::JsError;
use super::lines::LineMap;
use super::parse::{Parsed, TARGET};
use std::cell::Cell;
use std::rc::Rc;
use swc_common::comments::SingleThreadedComments;
use swc_common::{BytePos, Span};
use swc_ecma_codegen::text_writer::{JsWriter, WriteJs};
use swc_ecma_codegen::{Config, Emitter};

type EmitResult = std::io::Result<()>;

pub struct Printed {
    pub code: String,
    pub map: LineMap,
}

/// Counts the newlines written through it.
struct LineCounter<'a> {
    out: &'a mut Vec<u8>,
    lines: Rc<Cell<u32>>,
}

impl std::io::Write for LineCounter<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = memchr::memchr_iter(b'\n', data).count() as u32;
        if n > 0 {
            self.lines.set(self.lines.get() + n);
        }
        self.out.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Wraps swc's writer to record (source position, output line) pairs.
/// swc's own source-map collection computes columns and de-duplicates
/// through a hash set, which doubled print time on a 20 MB bundle; lines
/// are all we need.
///
/// A position is given the line on which the next text is written: the
/// emitter announces a node's start (`add_srcmap`) before it writes the
/// newline that separates it from the previous statement.
struct LineRecorder<W> {
    inner: W,
    lines: Rc<Cell<u32>>,
    /// (raw offset, output line, written directly rather than announced).
    entries: Vec<(u32, u32, bool)>,
    pending: Vec<u32>,
    base: u32,
}

impl<W: WriteJs> LineRecorder<W> {
    #[inline]
    fn offset(&self, pos: BytePos) -> Option<u32> {
        (!pos.is_dummy() && pos.0 >= self.base).then(|| pos.0 - self.base)
    }

    /// Called before any text is written: settle pending positions and
    /// record `span`'s start on the current line. Of the positions announced
    /// since the last text, the last is the token's own (the earlier ones
    /// are enclosing nodes and comments): it is marked `direct`.
    #[inline]
    fn text(&mut self, span: Option<Span>) {
        let line = self.lines.get();
        let flushed = !self.pending.is_empty();
        for off in self.pending.drain(..) {
            self.entries.push((off, line, false));
        }
        if let Some(off) = span.and_then(|s| self.offset(s.lo)) {
            self.entries.push((off, line, true));
        } else if flushed && let Some(last) = self.entries.last_mut() {
            last.2 = true;
        }
    }
}

impl<W: WriteJs> WriteJs for LineRecorder<W> {
    fn increase_indent(&mut self) -> EmitResult {
        self.inner.increase_indent()
    }
    fn decrease_indent(&mut self) -> EmitResult {
        self.inner.decrease_indent()
    }
    fn write_semi(&mut self, span: Option<Span>) -> EmitResult {
        self.text(None);
        self.inner.write_semi(span)
    }
    fn write_space(&mut self) -> EmitResult {
        self.inner.write_space()
    }
    fn write_keyword(&mut self, span: Option<Span>, s: &'static str) -> EmitResult {
        self.text(span);
        self.inner.write_keyword(span, s)
    }
    fn write_operator(&mut self, span: Option<Span>, s: &str) -> EmitResult {
        self.text(span);
        self.inner.write_operator(span, s)
    }
    fn write_param(&mut self, s: &str) -> EmitResult {
        self.text(None);
        self.inner.write_param(s)
    }
    fn write_property(&mut self, s: &str) -> EmitResult {
        self.text(None);
        self.inner.write_property(s)
    }
    fn write_line(&mut self) -> EmitResult {
        self.inner.write_line()
    }
    fn write_lit(&mut self, span: Span, s: &str) -> EmitResult {
        // Marked before writing: a multi-line literal starts on this line.
        self.text(Some(span));
        self.inner.write_lit(span, s)
    }
    fn write_comment(&mut self, s: &str) -> EmitResult {
        self.inner.write_comment(s)
    }
    fn write_str_lit(&mut self, span: Span, s: &str) -> EmitResult {
        self.text(Some(span));
        self.inner.write_str_lit(span, s)
    }
    fn write_str(&mut self, s: &str) -> EmitResult {
        self.text(None);
        self.inner.write_str(s)
    }
    fn write_symbol(&mut self, span: Span, s: &str) -> EmitResult {
        self.text(Some(span));
        self.inner.write_symbol(span, s)
    }
    fn write_punct(
        &mut self,
        span: Option<Span>,
        s: &'static str,
        commit_pending_semi: bool,
    ) -> EmitResult {
        self.text(span);
        self.inner.write_punct(span, s, commit_pending_semi)
    }
    fn care_about_srcmap(&self) -> bool {
        true
    }
    fn add_srcmap(&mut self, pos: BytePos) -> EmitResult {
        if let Some(off) = self.offset(pos) {
            self.pending.push(off);
        }
        Ok(())
    }
    fn commit_pending_semi(&mut self) -> EmitResult {
        self.inner.commit_pending_semi()
    }
}

pub fn print(p: &Parsed, comments: &SingleThreadedComments) -> Result<Printed, JsError> {
    let mut buf = Vec::with_capacity(p.file.src.len() * 2);
    let lines = Rc::new(Cell::new(0u32));
    let entries = {
        let counter = LineCounter {
            out: &mut buf,
            lines: lines.clone(),
        };
        let mut wr = LineRecorder {
            inner: JsWriter::new(p.cm.clone(), "\n", counter, None),
            lines,
            entries: Vec::with_capacity(p.file.src.len() / 6),
            pending: Vec::new(),
            base: p.file.start_pos.0,
        };
        let mut emitter = Emitter {
            cfg: Config::default().with_minify(false).with_target(TARGET),
            cm: p.cm.clone(),
            comments: Some(comments),
            wr: &mut wr,
        };
        emitter
            .emit_program(&p.program)
            .map_err(|e| JsError::Print(e.to_string()))?;
        wr.text(None);
        wr.entries
    };
    let code = String::from_utf8(buf).map_err(|e| JsError::Print(e.to_string()))?;
    // Lines as an editor counts them: a final newline ends the last line.
    let newlines = memchr::memchr_iter(b'\n', code.as_bytes()).count() as u32;
    let pretty_lines = if code.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    };
    let map = LineMap::new(p.file.src.as_bytes(), &entries, pretty_lines);
    Ok(Printed { code, map })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::parse::{Goal, parse};

    #[test]
    fn function_after_imports_maps_to_its_line() {
        let src = r#"import{realpathSync as r}from"fs";import{cwd as c}from"process";function o(n){return n.normalize("NFC")}function aDn(){let n="";return n}"#;
        let (p, c) = parse("x.js", src.to_string(), Goal::Module).unwrap();
        let out = print(&p, &c).unwrap();
        let lines: Vec<&str> = out.code.lines().collect();
        for (name, off) in [
            ("o", src.find("function o").unwrap()),
            ("aDn", src.find("function aDn").unwrap()),
        ] {
            let pl = out.map.pretty_line_of(off as u32).unwrap();
            assert!(
                lines[pl as usize - 1].contains(&format!("function {name}")),
                "{name}: {pl} {:?}\n{}",
                out.map,
                out.code
            );
        }
    }
}

#[cfg(test)]
mod comment_tests {
    use super::*;
    use crate::js::parse::{Goal, parse};

    #[test]
    fn leading_comments_do_not_pull_first_line_back() {
        let src = "// @bun\n// Version: 1\nfunction r(n){return n}function b(n){return r(n)}";
        let (p, c) = parse("x.js", src.to_string(), Goal::Module).unwrap();
        let out = print(&p, &c).unwrap();
        let lines: Vec<&str> = out.code.lines().collect();
        let pl = out
            .map
            .pretty_line_of(src.find("function r").unwrap() as u32)
            .unwrap();
        assert!(
            lines[pl as usize - 1].starts_with("function r"),
            "{}",
            out.code
        );
        assert_eq!(
            out.map.pretty_to_raw(pl),
            Some((3, 1)),
            "{:?}\n{}",
            out.map,
            out.code
        );
    }
}
