//! Parsing and printing a large CJS-wrapped script in pieces, so that the
//! whole AST never exists at once.
//!
//! A single-bundle build is one 20 MB+ script: a CommonJS wrapper function
//! around some hundred thousand statements. Its whole AST is most of
//! `pretty`'s memory. Here the body is cut at statement boundaries into
//! pieces of about [`PIECE_BYTES`]; each piece is parsed on its own with its
//! real byte positions (so spans, comments and the line map are those of
//! the whole file), printed inside a copy of the wrapper between two
//! sentinel statements (as [`super::print::print_split`] does with two
//! halves), and dropped. Two pieces are in flight, one per core.
//!
//! The cut points come from a lexical scan ([`depth::wrapper_statement_ends`]),
//! which can misread (a regular expression taken for a division). Each cut
//! is therefore proven by the parser before it is used: the text around
//! the pieces (wrapper, first and last piece: the "shell", with the pieces
//! blanked out) must parse with a statement ending exactly at the first cut
//! and the next starting exactly at the last one, and every piece must
//! parse as a statement list that starts at its first byte and whose last
//! statement ends with the `;` at its last byte. The lexer is then in the
//! same state at each cut as in a whole parse (after a `;`, at the start of
//! a statement of the same list), so the pieces' statements are the whole
//! parse's statements. Anything else (a failed or doubtful parse, a
//! directive prologue, an async or generator wrapper, nesting near the
//! limit) returns the source for the whole-program path, which decides
//! what the output or the error is: the piecewise path only ever produces
//! what the whole path would.

use super::depth;
use super::lines::LineMapBuilder;
use super::parse;
use super::print::{self, Entries, Printed, SentinelLine};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use swc_common::comments::SingleThreadedComments;
use swc_common::sync::Lrc;
use swc_common::{BytePos, FileName, SourceFile, SourceMap, Spanned};
use swc_ecma_ast::{Program, Script, Stmt};
use swc_ecma_parser::{Parser, StringInput};

/// Source bytes per piece: small enough that two pieces' ASTs are a few
/// tens of MB, large enough that the per-piece costs (a thread hand-off, a
/// copy of the wrapper, two sentinel lines) stay negligible.
pub const PIECE_BYTES: usize = 1 << 20;

/// What [`print_in_pieces`] did.
pub enum Pieces {
    /// Printed piece by piece: the source file (the AST is gone) and the
    /// output, with the time spent parsing and printing (summed over both
    /// threads).
    Printed {
        file: Lrc<SourceFile>,
        printed: Printed,
        parse: Duration,
        print: Duration,
    },
    /// Not cut: the source, for the whole-program path.
    Whole(String),
}

/// Parse and print `src` in pieces when it is a script large enough and
/// every cut is proven (see the module documentation); otherwise hand the
/// source back.
pub fn print_in_pieces(name: &str, src: String, goal: parse::Goal) -> Pieces {
    if goal != parse::Goal::Script
        || src.len() < print::SPLIT_MIN_BYTES
        || src.contains(print::SENTINEL)
    {
        return Pieces::Whole(src);
    }
    let t0 = Instant::now();
    // Too deep: the whole path says where.
    let Ok(ends) = depth::wrapper_statement_ends(&src) else {
        return Pieces::Whole(src);
    };
    let cuts = choose_cuts(src.as_bytes(), &ends, PIECE_BYTES);
    if cuts.len() < 3 {
        return Pieces::Whole(src);
    }
    let scan = t0.elapsed();
    let cm: Lrc<SourceMap> = Default::default();
    let file = cm.new_source_file(Lrc::new(FileName::Custom(name.to_string())), src);
    match depth::with_stack(|| attempt(&cm, &file, &cuts)) {
        Some(PiecePrint {
            printed,
            parse,
            print,
        }) => Pieces::Printed {
            file,
            printed,
            parse: parse + scan,
            print,
        },
        None => {
            drop(cm);
            let src = Lrc::try_unwrap(file)
                .map(|f| f.src.to_string())
                .unwrap_or_else(|f| f.src.to_string());
            Pieces::Whole(src)
        }
    }
}

/// Of the statement ends found, one about every `every` bytes. An end
/// followed by `else` or `while` is skipped: there the `;` most likely ends
/// the statement inside `if (…) a;` or `do a;`, not one of the list, and the
/// parser would refuse the cut (and with it the whole piecewise print).
fn choose_cuts(src: &[u8], ends: &[u32], every: usize) -> Vec<usize> {
    let continues = |e: usize| {
        ["else", "while"].iter().any(|w| {
            src[e..].starts_with(w.as_bytes())
                && !src
                    .get(e + w.len())
                    .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        })
    };
    let mut cuts = Vec::new();
    let mut next = every;
    for &e in ends {
        let e = e as usize;
        if e >= next && !continues(e) {
            cuts.push(e);
            next = e + every;
        }
    }
    cuts
}

/// Parse `text` (which stands at swc positions `lo..hi`) as a script.
fn parse_script(
    text: &str,
    lo: BytePos,
    hi: BytePos,
    comments: &SingleThreadedComments,
) -> Option<Script> {
    let mut parser = Parser::new(
        parse::syntax(),
        StringInput::new(text, lo, hi),
        Some(comments),
    );
    let script = parser.parse_script().ok()?;
    if !parser.take_errors().is_empty() {
        return None;
    }
    Some(script)
}

/// Whether `program`'s AST is at most `limit` levels deep (taken apart
/// iteratively when it is deeper: dropping it would recurse).
fn within(program: Program, limit: u32) -> Option<(Program, u32)> {
    match depth::check_program(&program) {
        Ok(d) if d <= limit => Some((program, d)),
        // Within swc's limit (dropped as usual), not within the pieces'.
        Ok(_) => None,
        Err(_) => {
            depth::dismantle_program(program);
            None
        }
    }
}

/// Whether the wrapper around the main list changes how statements parse:
/// an async or generator function (`await`, `yield`), or a directive
/// prologue (`"use strict"`) at the start of the list.
fn plain_wrapper(program: &Program, head: &[Stmt]) -> bool {
    use swc_ecma_ast::*;
    if let Some(Stmt::Expr(ExprStmt { expr, .. })) = head.first()
        && matches!(&**expr, Expr::Lit(Lit::Str(_)))
    {
        return false;
    }
    let Program::Script(script) = program else {
        return false;
    };
    if script.body.len() != 1 {
        return true;
    }
    let Stmt::Expr(ExprStmt { expr, .. }) = &script.body[0] else {
        return false;
    };
    let mut e: &Expr = expr;
    loop {
        match e {
            Expr::Paren(p) => e = &p.expr,
            Expr::Call(c) => match &c.callee {
                Callee::Expr(callee) => e = callee,
                _ => return false,
            },
            Expr::Fn(f) => return !f.function.is_async && !f.function.is_generator,
            _ => return false,
        }
    }
}

/// One printed part of the output: its text and line-map entries, lines
/// counted from the part's first line.
struct Part {
    code: Vec<u8>,
    entries: Entries,
}

/// The output, joined in order as the parts come in (the threads finish
/// them nearly in order: few wait), each part freed once copied, so that
/// neither the parts' texts nor their entries are ever held twice.
struct Sink {
    /// The next part to append.
    next: usize,
    waiting: std::collections::BTreeMap<usize, Part>,
    code: Vec<u8>,
    map: LineMapBuilder,
    /// Lines of the parts appended.
    line: u32,
}

impl Sink {
    fn put(&mut self, j: usize, part: Part) {
        self.waiting.insert(j, part);
        while let Some(p) = self.waiting.remove(&self.next) {
            for (o, l, d) in p.entries {
                self.map.push(o, l + self.line, d);
            }
            self.line += memchr::memchr_iter(b'\n', &p.code).count() as u32;
            self.code.extend_from_slice(&p.code);
            self.next += 1;
        }
    }
}

/// Every line holding the sentinel in `buf`.
fn sentinel_lines(buf: &[u8]) -> Vec<SentinelLine> {
    let mut out = Vec::new();
    let (mut line, mut counted) = (0u32, 0usize);
    for at in memchr::memmem::find_iter(buf, print::SENTINEL.as_bytes()) {
        let start = memchr::memrchr(b'\n', &buf[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |i| at + i + 1);
        line += memchr::memchr_iter(b'\n', &buf[counted..start]).count() as u32;
        counted = start;
        out.push(SentinelLine { line, start, end });
    }
    out
}

/// Where a part stands in the output.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    First,
    Middle,
    Last,
}

/// Print `stmts` inside a copy of `frame` (the shell with an empty main
/// list), with a sentinel statement before them (unless [`Place::First`])
/// and after them (unless [`Place::Last`]), and keep what lies between the sentinels.
///
/// Entries keep their line relative to the part. Positions announced after
/// the part's last text are settled by the printer on the closing
/// sentinel's line; in a whole print they land on the next statement's
/// line, which is the line following this part, and are not a token's own.
fn print_part(
    cm: &Lrc<SourceMap>,
    base: u32,
    frame: &Program,
    stmts: Vec<Stmt>,
    size: usize,
    comments: &SingleThreadedComments,
    place: Place,
) -> Option<Part> {
    let (first, last) = (place == Place::First, place == Place::Last);
    let mut program = frame.clone();
    let list = print::main_list(&mut program)?;
    if !first {
        list.push(print::sentinel());
    }
    list.extend(stmts);
    if !last {
        list.push(print::sentinel());
    }
    let (buf, entries) = print::emit(cm, base, size, &program, comments).ok()?;
    drop(program);
    let lines = sentinel_lines(&buf);
    let expected = usize::from(!first) + usize::from(!last);
    if lines.len() != expected {
        return None;
    }
    let (open, from) = if first {
        (None, 0)
    } else {
        (Some(lines[0].line), lines[0].end)
    };
    let (close, to) = if last {
        (None, buf.len())
    } else {
        let l = lines[expected - 1];
        (Some(l.line), l.start)
    };
    let shift = open.map_or(0, |o| o + 1);
    let entries = entries
        .into_iter()
        .filter(|e| open.is_none_or(|o| e.1 > o) && close.is_none_or(|c| e.1 <= c))
        .map(|(off, line, direct)| (off, line - shift, direct && Some(line) != close))
        .collect();
    let mut code = buf;
    code.truncate(to);
    code.drain(..from);
    code.shrink_to_fit();
    Some(Part { code, entries })
}

/// A piece-wise print's output and the time it took (parsing and printing
/// summed over the threads).
struct PiecePrint {
    printed: Printed,
    parse: Duration,
    print: Duration,
}

/// The text around the pieces, parsed (see the module documentation): the
/// wrapper with an empty main list, the first piece's statements and the
/// last's.
struct Shell {
    frame: Program,
    head: Vec<Stmt>,
    tail: Vec<Stmt>,
    comments: SingleThreadedComments,
    /// How deep a piece's statements may be: together with the wrapper's
    /// levels they must stay within the whole parse's limit.
    piece_limit: u32,
    parse: Duration,
}

/// Parse the source with the pieces between the first and last cut
/// blanked (same length, so every position outside them is the real one),
/// and prove the cuts there: a statement of the main list ends at the first
/// and the next starts at the last.
fn shell(file: &Lrc<SourceFile>, cuts: &[usize]) -> Option<Shell> {
    let src: &str = &file.src;
    let base = file.start_pos.0;
    let (c1, ck) = (cuts[0], cuts[cuts.len() - 1]);
    let t0 = Instant::now();
    let comments = SingleThreadedComments::default();
    let shell = {
        let mut text = String::with_capacity(src.len());
        text.push_str(&src[..c1]);
        text.extend(std::iter::repeat_n(' ', ck - c1));
        text.push_str(&src[ck..]);
        parse_script(&text, file.start_pos, file.end_pos, &comments)?
    };
    let (mut frame, shell_depth) = within(Program::Script(shell), depth::AST_LIMIT)?;
    let parse = t0.elapsed();
    let list = print::main_list(&mut frame)?;
    let k = list
        .iter()
        .position(|s| s.span().hi.0 == base + c1 as u32)?;
    if list.get(k + 1)?.span().lo.0 != base + ck as u32 {
        return None;
    }
    let tail = list.split_off(k + 1);
    let head = std::mem::take(list);
    if !plain_wrapper(&frame, &head) {
        return None;
    }
    // A piece's statements sit below the wrapper's levels in a whole
    // parse: together they must stay within the whole parse's limit.
    let piece_limit = depth::AST_LIMIT.checked_sub(shell_depth)?;
    Some(Shell {
        frame,
        head,
        tail,
        comments,
        piece_limit,
        parse,
    })
}

/// What the threads printing the pieces share: the pieces still to take,
/// the output they join into, whether one failed, the time they spent.
struct Joint<'a> {
    cm: &'a Lrc<SourceMap>,
    src: &'a str,
    base: u32,
    /// The middle pieces' byte ranges (parts 1 to `ranges.len()`).
    ranges: Vec<(usize, usize)>,
    piece_limit: u32,
    sink: Mutex<Sink>,
    next: AtomicUsize,
    failed: AtomicBool,
    parse_ns: AtomicU64,
    print_ns: AtomicU64,
}

impl Joint<'_> {
    /// Part `j` of the output, or the failure that ends the attempt.
    fn put(&self, j: usize, part: Option<Part>) {
        match part {
            Some(p) => self
                .sink
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .put(j, p),
            None => self.failed.store(true, Ordering::Relaxed),
        }
    }

    fn add(a: &AtomicU64, d: Duration) {
        a.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// One printing thread: take the next middle piece until none is left
    /// or one failed.
    fn work(&self, frame: &Program) {
        // The frame is cloned per worker: the AST is not shared across threads.
        let frame = frame.clone();
        loop {
            let j = self.next.fetch_add(1, Ordering::Relaxed);
            if j >= self.ranges.len() || self.failed.load(Ordering::Relaxed) {
                return;
            }
            let part = self.middle_piece(&frame, self.ranges[j]);
            self.put(j + 1, part);
        }
    }

    /// Parse the piece `lo..hi` on its own, prove that its statements tile
    /// it, and print them inside `frame`.
    fn middle_piece(&self, frame: &Program, (lo, hi): (usize, usize)) -> Option<Part> {
        let (src, base) = (self.src, self.base);
        let t = Instant::now();
        let comments = SingleThreadedComments::default();
        let (lo_pos, hi_pos) = (BytePos(base + lo as u32), BytePos(base + hi as u32));
        parse_script(&src[lo..hi], lo_pos, hi_pos, &comments)
            .and_then(|s| within(Program::Script(s), self.piece_limit))
            .and_then(|(program, _)| {
                let Program::Script(script) = program else {
                    return None;
                };
                let body = script.body;
                let tiles = body.first()?.span().lo == lo_pos
                    && body.last()?.span().hi == hi_pos
                    && src.as_bytes()[hi - 1] == b';';
                Self::add(&self.parse_ns, t.elapsed());
                let t = Instant::now();
                let part = tiles
                    .then(|| {
                        print_part(
                            self.cm,
                            base,
                            frame,
                            body,
                            hi - lo,
                            &comments,
                            Place::Middle,
                        )
                    })
                    .flatten();
                Self::add(&self.print_ns, t.elapsed());
                part
            })
    }

    /// The joined output, when every part was printed.
    fn finish(self, parse_shell: Duration) -> Option<PiecePrint> {
        let sink = self
            .sink
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if self.failed.load(Ordering::Relaxed) || sink.next != self.ranges.len() + 2 {
            return None;
        }
        let t = Instant::now();
        let code = String::from_utf8(sink.code).ok()?;
        // Lines as an editor counts them (as `print::finish` does).
        let pretty_lines = if code.ends_with('\n') {
            sink.line
        } else {
            sink.line + 1
        };
        let map = sink.map.finish(self.src.as_bytes(), pretty_lines);
        let printed = Printed { code, map };
        Self::add(&self.print_ns, t.elapsed());
        let parse = parse_shell + Duration::from_nanos(self.parse_ns.load(Ordering::Relaxed));
        let print = Duration::from_nanos(self.print_ns.load(Ordering::Relaxed));
        Some(PiecePrint {
            printed,
            parse,
            print,
        })
    }
}

/// Cut, prove, parse and print; None at the first doubt.
fn attempt(cm: &Lrc<SourceMap>, file: &Lrc<SourceFile>, cuts: &[usize]) -> Option<PiecePrint> {
    let src: &str = &file.src;
    let base = file.start_pos.0;
    let (c1, ck) = (cuts[0], cuts[cuts.len() - 1]);
    let Shell {
        frame,
        head,
        tail,
        comments: shell_comments,
        piece_limit,
        parse: parse_shell,
    } = shell(file, cuts)?;
    // Part 0 is the first piece, then the pieces, then the last. The
    // output is about 1.7 times the source: room reserved (not touched)
    // for twice as much spares the copies of a growing buffer.
    let joint = Joint {
        cm,
        src,
        base,
        ranges: cuts.windows(2).map(|w| (w[0], w[1])).collect(),
        piece_limit,
        sink: Mutex::new(Sink {
            next: 0,
            waiting: Default::default(),
            code: Vec::with_capacity(src.len() * 2),
            map: LineMapBuilder::with_capacity(src.len() / 2),
            line: 0,
        }),
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        parse_ns: AtomicU64::new(0),
        print_ns: AtomicU64::new(0),
    };
    std::thread::scope(|s| {
        let a = parse::spawn_big(s, "cc-teardown-piece", || joint.work(&frame));
        let b = parse::spawn_big(s, "cc-teardown-piece", || joint.work(&frame));
        // Meanwhile this thread prints the first and last piece, already
        // parsed with the shell (with its comments: each print takes the
        // comments it emits, so the first gets a copy).
        let t = Instant::now();
        let copy = {
            let (l, t) = shell_comments.borrow_all();
            SingleThreadedComments::from_leading_and_trailing(
                Rc::new(RefCell::new(l.clone())),
                Rc::new(RefCell::new(t.clone())),
            )
        };
        joint.put(
            0,
            print_part(cm, base, &frame, head, c1, &copy, Place::First),
        );
        joint.put(
            joint.ranges.len() + 1,
            print_part(
                cm,
                base,
                &frame,
                tail,
                src.len() - ck,
                &shell_comments,
                Place::Last,
            ),
        );
        Joint::add(&joint.print_ns, t.elapsed());
        a.join();
        b.join();
    });
    drop(frame);
    joint.finish(parse_shell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::parse::{Goal, parse};

    /// A CJS-wrapped script over the split threshold whose statements are
    /// `unit(i)`, with a comment and a blank line after the wrapper's `{`
    /// and comments before its `}`.
    fn wrapped(unit: impl Fn(usize) -> String) -> String {
        let mut src =
            String::from("// a pragma; of ours\n(function(e, r, m) {// licence; of ours\n\n");
        let mut i = 0;
        while src.len() < print::SPLIT_MIN_BYTES + 300_000 {
            src.push_str(&unit(i));
            i += 1;
        }
        src.push_str("/* end; */ last()\n// closing\n})\n");
        src
    }

    /// JavaScript that a lexical scan can misread, with `;` everywhere a
    /// statement does not end (all in one line per unit, as minified).
    fn tricky(i: usize) -> String {
        [
            format!("var a{i}=x/2;b{i}=/;[/]x;/g.test(y);"),
            format!("c{i}=`t;${{u+`;${{v}};`}};`;"),
            "if(q)r=1/3;else{s=/a;b/}".to_string(),
            format!("for(;;){{break}}for(var k{i}=0;k{i}<2;k{i}++);"),
            format!("class C{i}{{m(){{return 1;}};static{{z=2;}}}}"),
            format!("l{i}:for(;;){{continue l{i}}}"),
            format!("/* a; b */d{i}=1;// e; f\n"),
            format!("e{i}=1\nf{i}=2\n"),
            format!("do g{i}();while(h);"),
            format!("w{i}=a\n/b;c/\ng;"),
            format!("x{i}=function(){{return/;re/}};"),
            format!("y{i}=\"s;t\"+'u;v';function F{i}(n){{return n?{{k:1}}:[1,2]}}"),
        ]
        .concat()
    }

    fn one_pass(src: &str) -> Printed {
        let (p, c) = parse("big.js", src.to_string(), Goal::Script).unwrap();
        print::print(&p, &c).unwrap()
    }

    fn assert_same(a: &Printed, b: &Printed) {
        if a.code != b.code {
            let d = a
                .code
                .bytes()
                .zip(b.code.bytes())
                .position(|(x, y)| x != y)
                .unwrap_or(a.code.len().min(b.code.len()));
            panic!(
                "outputs differ at byte {d}:\n--- whole\n{}\n--- pieces\n{}",
                &a.code[d.saturating_sub(200)..(d + 200).min(a.code.len())],
                &b.code[d.saturating_sub(200)..(d + 200).min(b.code.len())]
            );
        }
        assert_eq!(
            serde_json::to_string(&a.map.to_file("m")).unwrap(),
            serde_json::to_string(&b.map.to_file("m")).unwrap(),
            "line maps differ"
        );
        let len = a.map.raw.lines() as u32;
        for line in (1..len).step_by(97) {
            assert_eq!(
                a.map.raw_to_pretty(line, 1),
                b.map.raw_to_pretty(line, 1),
                "raw line {line}"
            );
        }
    }

    #[test]
    fn pieces_print_what_one_pass_prints() {
        let src = wrapped(tricky);
        let whole = one_pass(&src);
        let Pieces::Printed { printed, file, .. } =
            print_in_pieces("big.js", src.clone(), Goal::Script)
        else {
            panic!("not cut into pieces");
        };
        assert_eq!(&*file.src, src.as_str());
        assert_same(&whole, &printed);
    }

    /// Each cut is proven by the parser: a cut inside a string, a comment,
    /// a regular expression, a template, an `if … else`, a `do … while` or
    /// a `for(;;)` head is refused, never printed.
    #[test]
    fn a_misread_cut_is_refused() {
        let src = wrapped(|i| format!("s{i}=1;"));
        let body = src.find("s0=").unwrap();
        for bad in [
            "x=\"a;b\";",
            "// a;b\nx=1;",
            "x=/a;b/;",
            "x=`a;b`;",
            "/* a;b */x=1;",
            "if(a)b;else c;",
            "do b;while(c);",
            "for(a;b;c);",
        ] {
            let mut s = src.clone();
            let at = body + 1_200_000;
            let at = at + s[at..].find(';').unwrap() + 1;
            s.insert_str(at, bad);
            let cut = at + bad.find(';').unwrap() + 1;
            let cm: Lrc<SourceMap> = Default::default();
            let file = cm.new_source_file(Lrc::new(FileName::Custom("t.js".into())), s.clone());
            let good = |c: usize| s[..c].rfind(';').unwrap() + 1;
            let cuts = [good(body + 600_000), cut, good(body + 3_000_000)];
            assert!(
                depth::with_stack(|| attempt(&cm, &file, &cuts)).is_none(),
                "cut accepted in {bad:?}"
            );
            // The same text with proper cuts is printed as in one pass.
            let cuts = [
                good(body + 600_000),
                good(body + 1_100_000),
                good(body + 3_000_000),
            ];
            let PiecePrint { printed, .. } =
                depth::with_stack(|| attempt(&cm, &file, &cuts)).unwrap();
            assert_same(&one_pass(&s), &printed);
        }
    }

    /// What would parse differently outside the wrapper is left whole.
    #[test]
    fn strict_async_and_modules_stay_whole() {
        let plain = wrapped(|i| format!("s{i}=1;"));
        assert!(matches!(
            print_in_pieces("m.js", plain.clone(), Goal::Module),
            Pieces::Whole(_)
        ));
        let strict = plain.replace("{// licence", "{\"use strict\";// licence");
        assert!(matches!(
            print_in_pieces("s.js", strict, Goal::Script),
            Pieces::Whole(_)
        ));
        let asynchronous = plain.replace("(function(", "(async function(");
        assert!(matches!(
            print_in_pieces("a.js", asynchronous, Goal::Script),
            Pieces::Whole(_)
        ));
        let small = "(function(){a;b;c})".to_string();
        assert!(matches!(
            print_in_pieces("x.js", small, Goal::Script),
            Pieces::Whole(s) if s == "(function(){a;b;c})"
        ));
        assert!(matches!(
            print_in_pieces("p.js", plain, Goal::Script),
            Pieces::Printed { .. }
        ));
    }
}
