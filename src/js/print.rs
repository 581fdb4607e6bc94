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

/// Counts the newlines written through it, and keeps the text unless it
/// is only the line map that is wanted.
struct LineCounter<'a> {
    out: Option<&'a mut Vec<u8>>,
    lines: Rc<Cell<u32>>,
    /// The last byte written (to count a final line without a newline).
    last: Rc<Cell<u8>>,
}

impl std::io::Write for LineCounter<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = memchr::memchr_iter(b'\n', data).count() as u32;
        if n > 0 {
            self.lines.set(self.lines.get() + n);
        }
        if let Some(&b) = data.last() {
            self.last.set(b);
        }
        if let Some(out) = self.out.as_mut() {
            out.extend_from_slice(data);
        }
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

pub(super) type Entries = Vec<(u32, u32, bool)>;

/// Emit `program` (from the source file starting at swc position `base`):
/// the output bytes and the (raw offset, output line, direct) entries.
pub(super) fn emit(
    cm: &swc_common::sync::Lrc<swc_common::SourceMap>,
    base: u32,
    size_hint: usize,
    program: &swc_ecma_ast::Program,
    comments: &SingleThreadedComments,
) -> Result<(Vec<u8>, Entries), JsError> {
    let mut buf = Vec::with_capacity(size_hint * 2);
    let (entries, _) = emit_into(cm, base, size_hint, program, comments, Some(&mut buf))?;
    Ok((buf, entries))
}

/// [`emit`] into `out`, or, when `out` is None, only counting: the entries
/// and the number of pretty lines (as [`finish`] counts them).
fn emit_into(
    cm: &swc_common::sync::Lrc<swc_common::SourceMap>,
    base: u32,
    size_hint: usize,
    program: &swc_ecma_ast::Program,
    comments: &SingleThreadedComments,
    out: Option<&mut Vec<u8>>,
) -> Result<(Entries, u32), JsError> {
    let lines = Rc::new(Cell::new(0u32));
    let last = Rc::new(Cell::new(b'\n'));
    let entries = {
        let counter = LineCounter {
            out,
            lines: lines.clone(),
            last: last.clone(),
        };
        let mut wr = LineRecorder {
            inner: JsWriter::new(cm.clone(), "\n", counter, None),
            lines: lines.clone(),
            entries: Vec::with_capacity(size_hint / 6),
            pending: Vec::new(),
            base,
        };
        let mut emitter = Emitter {
            cfg: Config::default().with_minify(false).with_target(TARGET),
            cm: cm.clone(),
            comments: Some(comments),
            wr: &mut wr,
        };
        emitter
            .emit_program(program)
            .map_err(|e| JsError::Print(e.to_string()))?;
        wr.text(None);
        wr.entries
    };
    let newlines = lines.get();
    // Lines as an editor counts them: a final newline ends the last line
    // (an empty output is one empty line, as in `finish`).
    let pretty_lines = if last.get() == b'\n' && newlines > 0 {
        newlines
    } else {
        newlines + 1
    };
    Ok((entries, pretty_lines))
}

fn finish(src: &str, buf: Vec<u8>, entries: &Entries) -> Result<Printed, JsError> {
    let code = String::from_utf8(buf).map_err(|e| JsError::Print(e.to_string()))?;
    // Lines as an editor counts them: a final newline ends the last line.
    let newlines = memchr::memchr_iter(b'\n', code.as_bytes()).count() as u32;
    let pretty_lines = if code.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    };
    let map = LineMap::new(src.as_bytes(), entries, pretty_lines);
    Ok(Printed { code, map })
}

pub fn print(p: &Parsed, comments: &SingleThreadedComments) -> Result<Printed, JsError> {
    // swc's emitter recurses once per AST level: run where the parse limit fits.
    let (buf, entries) = super::depth::with_stack(|| {
        emit(
            &p.cm,
            p.file.start_pos.0,
            p.file.src.len(),
            &p.program,
            comments,
        )
    })?;
    finish(&p.file.src, buf, &entries)
}

/// The line map of `p` without the printed text (what the analyses need:
/// pretty line numbers, not the code). `code` is empty, and the map is
/// [`LineMap::for_lookups`]'s: it answers `pretty_line_of` and
/// `pretty_lines` exactly as [`print`]'s map does.
pub fn line_map(p: &Parsed, comments: &SingleThreadedComments) -> Result<Printed, JsError> {
    // An empty comment map and no comment map print alike (every comment
    // hook of the emitter finds nothing either way); without one the
    // emitter skips a map lookup per node. Most chunks of a code-split
    // build carry no comment at all.
    let no_comments = {
        let (leading, trailing) = comments.borrow_all();
        leading.is_empty() && trailing.is_empty()
    };
    let comments: Option<&dyn swc_common::comments::Comments> =
        if no_comments { None } else { Some(comments) };
    let base = p.file.start_pos.0;
    let (entries, pretty_lines) = super::depth::with_stack(|| {
        let mut wr = LineOnly {
            line_start: true,
            newlines: 0,
            last: b'\n',
            entries: Vec::with_capacity(p.file.src.len() / 6),
            pending: Vec::new(),
            base,
        };
        let mut emitter = Emitter {
            cfg: Config::default().with_minify(false).with_target(TARGET),
            cm: p.cm.clone(),
            comments,
            wr: &mut wr,
        };
        emitter
            .emit_program(&p.program)
            .map_err(|e| JsError::Print(e.to_string()))?;
        wr.text(None);
        // Lines as an editor counts them, as in `finish`: a final newline
        // ends the last line, an empty output is one empty line.
        let pretty_lines = if wr.last == b'\n' && wr.newlines > 0 {
            wr.newlines
        } else {
            wr.newlines + 1
        };
        Ok::<_, JsError>((wr.entries, pretty_lines))
    })?;
    let map = LineMap::for_lookups_from(p.file.src.as_bytes(), entries, pretty_lines);
    Ok(Printed {
        code: String::new(),
        map,
    })
}

/// The writer behind [`line_map`]: what [`LineRecorder`] records over
/// swc's `JsWriter` and [`LineCounter`], with nothing written. Printing
/// into a counter still built every indentation and token through
/// `JsWriter` and scanned each for newlines (a quarter of a cold analysis
/// run's CPU went to that print). The rules are `JsWriter`'s own
/// (swc_ecma_codegen 33, `text_writer/basic_impl.rs`): a non-empty write
/// ends the start of a line (indentation holds no newline, so only the
/// text's own newlines count), `write_line` writes a newline unless at the
/// start of a line, empty literals are not written. The unit tests compare
/// it with the printer over JavaScript of every kind, and
/// `tests/pipeline.rs` over every module of real builds.
struct LineOnly {
    line_start: bool,
    newlines: u32,
    /// The last byte that would have been written.
    last: u8,
    /// (raw offset, pretty line 1-based), in output order.
    entries: Vec<(u32, u32)>,
    pending: Vec<u32>,
    base: u32,
}

impl LineOnly {
    #[inline]
    fn offset(&self, pos: BytePos) -> Option<u32> {
        (!pos.is_dummy() && pos.0 >= self.base).then(|| pos.0 - self.base)
    }

    /// [`LineRecorder::text`] without the `direct` marks (only the full
    /// map's `pretty_to_raw` reads them).
    #[inline]
    fn text(&mut self, span: Option<Span>) {
        let line = self.newlines + 1;
        for off in self.pending.drain(..) {
            self.entries.push((off, line));
        }
        if let Some(off) = span.and_then(|s| self.offset(s.lo)) {
            self.entries.push((off, line));
        }
    }

    /// `JsWriter::write`: what `data` does to the line count.
    #[inline]
    fn write(&mut self, data: &str) {
        let bytes = data.as_bytes();
        let Some(&last) = bytes.last() else {
            return;
        };
        self.line_start = false;
        self.last = last;
        let n = if bytes.len() < 16 {
            bytes.iter().filter(|&&b| b == b'\n').count()
        } else {
            memchr::memchr_iter(b'\n', bytes).count()
        };
        self.newlines += n as u32;
    }
}

impl WriteJs for LineOnly {
    fn increase_indent(&mut self) -> EmitResult {
        Ok(())
    }
    fn decrease_indent(&mut self) -> EmitResult {
        Ok(())
    }
    fn write_semi(&mut self, _: Option<Span>) -> EmitResult {
        self.text(None);
        self.write(";");
        Ok(())
    }
    fn write_space(&mut self) -> EmitResult {
        self.write(" ");
        Ok(())
    }
    fn write_keyword(&mut self, span: Option<Span>, s: &'static str) -> EmitResult {
        self.text(span);
        self.write(s);
        Ok(())
    }
    fn write_operator(&mut self, span: Option<Span>, s: &str) -> EmitResult {
        self.text(span);
        self.write(s);
        Ok(())
    }
    fn write_param(&mut self, s: &str) -> EmitResult {
        self.text(None);
        self.write(s);
        Ok(())
    }
    fn write_property(&mut self, s: &str) -> EmitResult {
        self.text(None);
        self.write(s);
        Ok(())
    }
    fn write_line(&mut self) -> EmitResult {
        if !self.line_start {
            self.newlines += 1;
            self.last = b'\n';
            self.line_start = true;
        }
        Ok(())
    }
    fn write_lit(&mut self, span: Span, s: &str) -> EmitResult {
        self.text(Some(span));
        self.write(s);
        Ok(())
    }
    fn write_comment(&mut self, s: &str) -> EmitResult {
        self.write(s);
        Ok(())
    }
    fn write_str_lit(&mut self, span: Span, s: &str) -> EmitResult {
        self.text(Some(span));
        self.write(s);
        Ok(())
    }
    fn write_str(&mut self, s: &str) -> EmitResult {
        self.text(None);
        self.write(s);
        Ok(())
    }
    fn write_symbol(&mut self, span: Span, s: &str) -> EmitResult {
        self.text(Some(span));
        self.write(s);
        Ok(())
    }
    fn write_punct(&mut self, span: Option<Span>, s: &'static str, _: bool) -> EmitResult {
        self.text(span);
        self.write(s);
        Ok(())
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
        Ok(())
    }
}

/// Modules smaller than this print on one thread.
pub(super) const SPLIT_MIN_BYTES: usize = 4 << 20;
/// The marker statement that shows where one half ends and the other begins.
pub(super) const SENTINEL: &str = "__cc_teardown_split_7f3a__";

/// The statement list that holds most of a script: its body, or the body of
/// the function a CJS-wrapped bundle consists of.
pub(super) fn main_list(
    program: &mut swc_ecma_ast::Program,
) -> Option<&mut Vec<swc_ecma_ast::Stmt>> {
    use swc_ecma_ast::*;
    let Program::Script(script) = program else {
        return None;
    };
    if script.body.len() != 1 {
        return Some(&mut script.body);
    }
    let Stmt::Expr(ExprStmt { expr, .. }) = &mut script.body[0] else {
        return None;
    };
    let mut e: &mut Expr = expr;
    loop {
        match e {
            Expr::Paren(p) => e = &mut p.expr,
            Expr::Call(c) => match &mut c.callee {
                Callee::Expr(callee) => e = callee,
                _ => return None,
            },
            Expr::Fn(f) => return f.function.body.as_mut().map(|b| &mut b.stmts),
            _ => return None,
        }
    }
}

pub(super) fn sentinel() -> swc_ecma_ast::Stmt {
    use swc_ecma_ast::*;
    Stmt::Expr(ExprStmt {
        span: swc_common::DUMMY_SP,
        expr: Box::new(Expr::Ident(Ident::new_no_ctxt(
            SENTINEL.into(),
            swc_common::DUMMY_SP,
        ))),
    })
}

/// A line of printed output holding the sentinel: its number (from 0) and
/// its bytes, `start..end` (the line break included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SentinelLine {
    pub line: u32,
    pub start: usize,
    pub end: usize,
}

/// The first line holding the sentinel.
fn sentinel_line(buf: &[u8]) -> Option<SentinelLine> {
    let at = memchr::memmem::find(buf, SENTINEL.as_bytes())?;
    let start = memchr::memrchr(b'\n', &buf[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |i| at + i + 1);
    let line = memchr::memchr_iter(b'\n', &buf[..start]).count() as u32;
    Some(SentinelLine { line, start, end })
}

/// Print a large script on two cores: the main statement list is cut in
/// two, each half printed by swc inside the same wrapper with a sentinel
/// statement at the cut, and the halves joined at the sentinels — so every
/// separator and comment is emitted by swc itself, as in one pass. Falls
/// back to [`print`] when the script has no list worth splitting.
pub fn print_split(p: &mut Parsed, comments: &SingleThreadedComments) -> Result<Printed, JsError> {
    if p.file.src.len() < SPLIT_MIN_BYTES || p.file.src.contains(SENTINEL) {
        return print(p, comments);
    }
    let Some(list) = main_list(&mut p.program) else {
        return print(p, comments);
    };
    if list.len() < 64 {
        return print(p, comments);
    }
    let mut first = std::mem::take(list);
    // Cut where half of the source bytes are behind.
    let lo = swc_common::Spanned::span(&first[0]).lo.0;
    let hi = swc_common::Spanned::span(first.last().unwrap()).hi.0;
    let mid = lo + (hi - lo) / 2;
    let k = first
        .partition_point(|s| swc_common::Spanned::span(s).lo.0 < mid)
        .clamp(1, first.len() - 1);
    let mut second = first.split_off(k);
    let mut shell_b = p.program.clone();
    first.push(sentinel());
    second.insert(0, sentinel());
    *main_list(&mut p.program).expect("same shape") = first;
    *main_list(&mut shell_b).expect("same shape") = second;
    let (leading, trailing) = {
        let (l, t) = comments.borrow_all();
        (l.clone(), t.clone())
    };
    let base = p.file.start_pos.0;
    let size = p.file.src.len() / 2;
    let cm = p.cm.clone();
    let program_a = &p.program;
    let (a, b) = std::thread::scope(|s| {
        let hb = super::parse::spawn_big(s, "cc-teardown-print", move || {
            let own = SingleThreadedComments::from_leading_and_trailing(
                Rc::new(std::cell::RefCell::new(leading)),
                Rc::new(std::cell::RefCell::new(trailing)),
            );
            let r = emit(&cm, base, size, &shell_b, &own);
            (r, shell_b)
        });
        let a = super::depth::with_stack(|| emit(&p.cm, base, size, program_a, comments));
        let (b, shell_b) = hb.join();
        (a, (b, shell_b))
    });
    // Put the statements back as they were.
    let (b, mut shell_b) = b;
    let mut second = std::mem::take(main_list(&mut shell_b).expect("same shape"));
    second.remove(0);
    let list = main_list(&mut p.program).expect("same shape");
    list.pop();
    list.extend(second);
    let ((buf_a, entries_a), (buf_b, entries_b)) = (a?, b?);
    let (Some(cut_a), Some(cut_b)) = (sentinel_line(&buf_a), sentinel_line(&buf_b)) else {
        return print(p, comments);
    };
    let (line_a, start_a) = (cut_a.line, cut_a.start);
    let (line_b, end_b) = (cut_b.line, cut_b.end);
    let mut buf = buf_a;
    buf.truncate(start_a);
    buf.extend_from_slice(&buf_b[end_b..]);
    let mut entries: Entries = entries_a.into_iter().filter(|e| e.1 < line_a).collect();
    entries.extend(
        entries_b
            .into_iter()
            .filter(|e| e.1 > line_b)
            .map(|(o, l, d)| (o, l - line_b - 1 + line_a, d)),
    );
    finish(&p.file.src, buf, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::parse::{Goal, parse};

    #[test]
    fn split_printing_equals_one_pass() {
        // A CJS-wrapped script over the split threshold, with comments
        // everywhere (including around the cut) and multi-line templates.
        let mut src = String::from(
            "// @bun pragma of ours\n/* licence */\n(function(exports, require, module) {\n",
        );
        let mut i = 0;
        while src.len() < SPLIT_MIN_BYTES + 200_000 {
            src.push_str(&format!(
                "/*! c{i} */var v{i}=`line\n${{a{i}}}\ttab`;function f{i}(e){{return e?{{k:\"{i}\"}}:[1,2]}} // t{i}\n"
            ));
            i += 1;
        }
        src.push_str("})\n// after\n");
        let (p1, c1) = parse("big.js", src.clone(), Goal::Script).unwrap();
        let one = print(&p1, &c1).unwrap();
        let (mut p2, c2) = parse("big.js", src.clone(), Goal::Script).unwrap();
        let two = print_split(&mut p2, &c2).unwrap();
        if one.code != two.code {
            let d = one
                .code
                .bytes()
                .zip(two.code.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "split output differs at {d}:\n--- one\n{}\n--- two\n{}",
                &one.code[d.saturating_sub(300)..(d + 300).min(one.code.len())],
                &two.code[d.saturating_sub(300)..(d + 300).min(two.code.len())]
            );
        }
        assert_eq!(one.map.pretty_lines, two.map.pretty_lines);
        for line in (1..one.map.pretty_lines).step_by(997) {
            assert_eq!(
                one.map.pretty_to_raw(line),
                two.map.pretty_to_raw(line),
                "line {line}"
            );
        }
        // The program is whole again afterwards (fresh comments: printing
        // takes them from the map).
        let (_, c3) = parse("big.js", src, Goal::Script).unwrap();
        let again = print(&p2, &c3).unwrap();
        assert!(again.code == one.code);
    }

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

#[cfg(test)]
mod line_map_tests {
    use super::*;
    use crate::js::parse::{Goal, parse};

    /// JavaScript of every kind the printer treats apart: comments of each
    /// sort in each place (they are printed, and move lines), empty and
    /// full blocks, multi-line literals, every statement, class members,
    /// modules' imports and exports, a file ending with and without a
    /// newline, an empty file.
    const SOURCES: &[(&str, Goal)] = &[
        ("", Goal::Script),
        ("a", Goal::Script),
        ("\n\n", Goal::Script),
        ("// only a comment\n", Goal::Script),
        ("/* only a block */", Goal::Script),
        (
            "// @bun\n/* c */ var x = `t\n${y}`; function f(a,b){if(a)return b;return{k:[1,2]}} // end",
            Goal::Script,
        ),
        (
            "(function(e,r){var o=1;class C{m(){return o}}e.x=()=>new C})\n",
            Goal::Script,
        ),
        (
            "/*! licence\n * two lines */\n\"use strict\";var a={},b=[],c=function(){},d=()=>{},e=class{};\nif(a){}else if(b){c()}else{d()}\nfor(;;){break}for(var k in a){continue}for(const v of b)e(v);\nwhile(0);do{a++}while(b--);\nswitch(a){case 1:case 2:{b();break}default:c()}\nl:for(;;){break l}\ntry{a()}catch{b()}finally{}try{a()}catch(x){throw x}\ndebugger;",
            Goal::Script,
        ),
        (
            "var s='a\\\nb',t=`x\n\n${`in\n${1}`}\n`,r=/re[/]\\//g,n=0x10,big=10n,o={a,b:1,[c]:2,get d(){return 1},set d(v){},m(){},async*g(){yield* x},...s};",
            Goal::Script,
        ),
        (
            "function f(/* p */a /* q */, b = 1, ...c) { // trailing\n  /* lead */ return a // after\n    + b; /* end */ }\nvar g = /* pure? */ f(1, // arg\n 2);\n/** doc */\nclass K extends f { static x = 1; #p = 2; static { this.y = 3 } constructor(){super()} get #q(){return this.#p} }",
            Goal::Script,
        ),
        (
            "import a, {b as c, d} from \"./x.js\";\nimport * as ns from \"./y.js\";\nimport \"./z.js\";\nexport {c as e, d};\nexport * from \"./w.js\";\nexport default function(){ return a?.b?.[c]??d }\nexport const h = async () => { await ns.q(); for await (const x of y) {} };\nexport class L {}\n",
            Goal::Module,
        ),
        (
            "var x=a?b:c,y=(a,b),z=!a&&b||c,w=typeof a===\"u\",v=new A.B(1)[2],u=-(-a),q=a=>({a}),p=function*(){yield},o=[,,1,...a];x+=1;x**=2;label:{}",
            Goal::Script,
        ),
        (
            "{ using r = f(); } (function(){ /*a*/ /*b*/ })(); (() => {\n// c\n})();",
            Goal::Script,
        ),
        ("a\n// last line comment", Goal::Script),
        ("a /* trailing block */\n", Goal::Script),
    ];

    /// The line map built without printing is the printer's own: same line
    /// count, same pretty line for every raw offset.
    #[test]
    fn a_line_map_without_text_equals_the_printed_one() {
        for &(src, goal) in SOURCES {
            let (p, c) = parse("t.js", src.to_string(), goal).unwrap();
            let full = print(&p, &c).unwrap();
            let (p, c) = parse("t.js", src.to_string(), goal).unwrap();
            let lines = line_map(&p, &c).unwrap();
            assert!(lines.code.is_empty());
            assert_eq!(lines.map.pretty_lines, full.map.pretty_lines, "{src:?}");
            for off in 0..=src.len() as u32 + 1 {
                assert_eq!(
                    lines.map.pretty_line_of(off),
                    full.map.pretty_line_of(off),
                    "{src:?} at {off}\n{}",
                    full.code
                );
            }
            assert!(
                lines.map.same_lookups(&full.map.clone().for_lookups()),
                "{src:?}"
            );
        }
    }

    /// A source whose printed lines land all over: the comparison above
    /// would pass for a map that is right only where lines do not move.
    #[test]
    fn the_sources_spread_over_many_pretty_lines() {
        let (src, goal) = SOURCES[7];
        let (p, c) = parse("t.js", src.to_string(), goal).unwrap();
        let lines = line_map(&p, &c).unwrap();
        assert!(lines.map.pretty_lines > 30, "{}", lines.map.pretty_lines);
        let at = |needle: &str| lines.map.pretty_line_of(src.find(needle).unwrap() as u32);
        assert!(at("debugger") > at("try{"));
        assert!(at("try{") > at("switch"));
    }
}
