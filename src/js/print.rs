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
struct LineRecorder<W> {
    inner: W,
    lines: Rc<Cell<u32>>,
    entries: Vec<(u32, u32)>,
    base: u32,
}

impl<W: WriteJs> LineRecorder<W> {
    #[inline]
    fn mark(&mut self, pos: BytePos) {
        if pos.is_dummy() || pos.0 < self.base {
            return;
        }
        let off = pos.0 - self.base;
        if self.entries.last().is_some_and(|e| e.0 == off) {
            return;
        }
        self.entries.push((off, self.lines.get()));
    }

    #[inline]
    fn mark_span(&mut self, span: Option<Span>) {
        if let Some(s) = span {
            self.mark(s.lo);
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
        self.inner.write_semi(span)
    }
    fn write_space(&mut self) -> EmitResult {
        self.inner.write_space()
    }
    fn write_keyword(&mut self, span: Option<Span>, s: &'static str) -> EmitResult {
        self.inner.write_keyword(span, s)?;
        self.mark_span(span);
        Ok(())
    }
    fn write_operator(&mut self, span: Option<Span>, s: &str) -> EmitResult {
        self.inner.write_operator(span, s)
    }
    fn write_param(&mut self, s: &str) -> EmitResult {
        self.inner.write_param(s)
    }
    fn write_property(&mut self, s: &str) -> EmitResult {
        self.inner.write_property(s)
    }
    fn write_line(&mut self) -> EmitResult {
        self.inner.write_line()
    }
    fn write_lit(&mut self, span: Span, s: &str) -> EmitResult {
        // Marked before writing: a multi-line literal starts on this line.
        self.mark(span.lo);
        self.inner.write_lit(span, s)
    }
    fn write_comment(&mut self, s: &str) -> EmitResult {
        self.inner.write_comment(s)
    }
    fn write_str_lit(&mut self, span: Span, s: &str) -> EmitResult {
        self.mark(span.lo);
        self.inner.write_str_lit(span, s)
    }
    fn write_str(&mut self, s: &str) -> EmitResult {
        self.inner.write_str(s)
    }
    fn write_symbol(&mut self, span: Span, s: &str) -> EmitResult {
        self.inner.write_symbol(span, s)?;
        self.mark(span.lo);
        Ok(())
    }
    fn write_punct(
        &mut self,
        span: Option<Span>,
        s: &'static str,
        commit_pending_semi: bool,
    ) -> EmitResult {
        self.inner.write_punct(span, s, commit_pending_semi)?;
        self.mark_span(span);
        Ok(())
    }
    fn care_about_srcmap(&self) -> bool {
        true
    }
    fn add_srcmap(&mut self, pos: BytePos) -> EmitResult {
        self.mark(pos);
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
        wr.entries
    };
    let code = String::from_utf8(buf).map_err(|e| JsError::Print(e.to_string()))?;
    let pretty_lines = memchr::memchr_iter(b'\n', code.as_bytes()).count() as u32 + 1;
    let map = LineMap::new(p.file.src.as_bytes(), entries, pretty_lines);
    Ok(Printed { code, map })
}
