//! Nesting limits for JavaScript input.
//!
//! swc's parser, its printer and every AST visitor recurse once per nesting
//! level, and so does dropping an AST: 200k nested parentheses, a million-term
//! `1+1+…` chain (swc builds it left-deep) or a long `else if` chain would
//! overflow any stack and abort the process. None of those can be made
//! iterative from here, so depth is bounded before anything recursive runs:
//!
//! 1. [`scan`], before parsing: a lexical pass (strings, comments, template
//!    literals and regular expressions skipped as swc's lexer does) that
//!    over-approximates how deep any parse of the text can nest — brackets,
//!    and within each bracket level every token since the last point where
//!    all expressions at that level have ended (`,` `;`, a block followed by
//!    a new statement), plus the statement chains (`if`/`else`, loops,
//!    labels) that continue across those points. It bounds the parser's own
//!    recursion, which nothing else can (swc offers no hook into it).
//! 2. [`check_program`] / [`check_expr`], after parsing: the AST's depth
//!    measured exactly by a walk that stops at the limit. An AST that is too
//!    deep is taken apart iteratively ([`dismantle_program`]) rather than
//!    dropped recursively.
//! 3. [`with_stack`]: every parse, print and walk runs with
//!    [`STACK_BYTES`](super::parse::STACK_BYTES) of stack, in which
//!    [`MAX_NESTING`] provably fits (tests/nesting.rs runs every command at
//!    the limit).

use swc_common::{DUMMY_SP, Span, Spanned};
use swc_ecma_ast::{EmptyStmt, Expr, Invalid, Pat, Program, Stmt};
use swc_ecma_visit::{Visit, VisitMut, VisitMutWith, VisitWith};

/// The deepest nesting accepted, in the units of [`scan`] (about two per
/// bracket level, one per chained operator or statement) and, after parsing,
/// in AST levels (expressions, statements and patterns). Claude Code's
/// bundles reach 262 (2.1.220 – 2.1.332, measured by
/// `cargo test --test all nesting::real_bundles_are_well_below_the_limit`).
pub const MAX_NESTING: u32 = 2_000;

/// The limit of the exact check after parsing, in AST levels. The scan's
/// units track AST levels closely on single constructs (every real bundle:
/// within a quarter), but a mix can be deeper than its estimate — a member chain
/// under a `+` chain under a `||` chain is as deep as their sum, where the
/// scan sees the longest — so the AST may go somewhat past the scan's
/// limit. Walkers, printer and drops are sized (and tested) for this.
pub const AST_LIMIT: u32 = 2 * MAX_NESTING;

/// Input nested deeper than [`MAX_NESTING`]: where the limit was crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// Byte offset in the scanned text (for [`scan`]) or swc position (for
    /// the AST checks).
    pub offset: usize,
}

/// Run `f` with at least [`STACK_BYTES`](super::parse::STACK_BYTES) / 2 of
/// stack left, switching to a fresh stack segment when the current thread
/// has less (the main thread has 8 MiB, rayon's workers 2 MiB). On the
/// big-stack threads of [`super::parse`] this costs one comparison.
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(super::parse::STACK_BYTES / 2, super::parse::STACK_BYTES, f)
}

/// For recursive walkers over parsed (hence depth-checked) input: keep at
/// least 1 MiB of stack, growing by 16 MiB segments when needed.
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(1 << 20, 16 << 20, f)
}

// ---------------------------------------------------------------- scanning

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Paren,
    Bracket,
    /// An object literal or pattern: only expressions inside.
    Object,
    /// A block, function or class body, or a brace we could not classify:
    /// statements may appear inside.
    Block,
    /// `${ … }` in a template literal.
    Subst,
}

/// Binary operator precedences, loosest first (`??` is 1, `**` is 12).
const PRECEDENCES: usize = 13;

/// One bracket level. Its depth counts what can nest at this level: within
/// an expression, each binary operator's chain (a chain of one precedence
/// is left-deep: `a||b||c` is as deep as it is long; a looser operator
/// closes the tighter chains, which are then its operand), the prefix and
/// postfix operators, calls and member accesses of the current operand,
/// and the enclosing operators (`=`, `?:`, `=>`, `return`…); across
/// statements, the statement chains (`if`/`else`, loops, labels).
#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: Kind,
    /// Depth of the enclosing levels when this one opened.
    base: u32,
    /// Enclosing operators since the current expression list began.
    low: u32,
    /// Binary operators per precedence in the current chain.
    bins: [u32; PRECEDENCES],
    /// Their sum.
    bins_total: u32,
    /// Prefix/postfix operators, calls, members of the current operand.
    operand: u32,
    /// Statement-nesting tokens since the last statement boundary.
    stmt: u32,
    /// `?` still waiting for their `:`.
    questions: u32,
    /// A `(` right after `if`/`while`/`for`/`with`: after its `)` a
    /// statement starts, so `/` begins a regular expression.
    header: bool,
    /// The `(` of a `for` head (`of` is a keyword there).
    for_head: bool,
    /// A `{` that closes an expression (object literal, function or class
    /// expression body): after its `}`, `/` divides.
    expr_end: bool,
    /// A `function` or `class` expression at this level awaits its body.
    expr_body_pending: bool,
    /// A `case` awaits its `:` (which is not a label's).
    case_pending: bool,
}

/// What a label counts: swc checks each label against every enclosing one
/// and reports each duplicate, so `l:l:l:…` costs the square of its depth in
/// errors (2,000 nested labels: 2 million errors, 250 MB). Weighted so, at
/// most 62 labels nest; real code nests two or three.
const LABEL_WEIGHT: u32 = 32;

impl Frame {
    fn clear_bins(&mut self) {
        if self.bins_total > 0 {
            self.bins = [0; PRECEDENCES];
            self.bins_total = 0;
        }
    }

    fn new(kind: Kind, base: u32) -> Frame {
        Frame {
            kind,
            base,
            low: 0,
            bins: [0; PRECEDENCES],
            bins_total: 0,
            operand: 0,
            stmt: 0,
            questions: 0,
            header: false,
            for_head: false,
            expr_end: false,
            expr_body_pending: false,
            case_pending: false,
        }
    }

    #[inline]
    fn depth(&self) -> u32 {
        self.base
            .saturating_add(1)
            .saturating_add(self.low)
            .saturating_add(self.bins_total)
            .saturating_add(self.operand)
            .saturating_add(self.stmt)
    }

    /// Every expression at this level has ended (`,` `;`).
    fn end_expressions(&mut self) {
        self.low = 0;
        self.clear_bins();
        self.operand = 0;
        self.questions = 0;
    }
}

/// How a token nests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nest {
    /// Identifiers, literals: leaves.
    Leaf,
    /// Part of the current operand: prefix and postfix operators, `.`,
    /// calls, `new`, `await`.
    Operand,
    /// A binary operator of this precedence.
    Bin(usize),
    /// Encloses a new expression: assignments, `?`, `:`, `=>`, `...`,
    /// `return`, `yield`…
    Low,
}

/// Keywords that matter to the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kw {
    If,
    Else,
    For,
    While,
    Do,
    With,
    Try,
    Catch,
    Finally,
    Function,
    Class,
    Async,
    Export,
    Default,
    Case,
    In,
    Of,
    Instanceof,
    /// `typeof`, `void`, `delete`, `await`, `new`: prefix operators.
    Unary,
    /// Other keywords after which an expression starts (`return`, `yield`…).
    BeforeExpr,
    /// `this`, `super`, `null`, `true`, `false`: values.
    Value,
    /// Any other word: an identifier.
    None,
}

/// The role of word `w` in the scan: every word of the keyword table has
/// one (the match is exhaustive), any other word is an identifier.
#[inline]
fn keyword(w: &[u8]) -> Kw {
    use super::keywords::Word;
    let Some(word) = Word::parse(w) else {
        return Kw::None;
    };
    match word {
        Word::If => Kw::If,
        Word::Else => Kw::Else,
        Word::For => Kw::For,
        Word::While => Kw::While,
        Word::Do => Kw::Do,
        Word::With => Kw::With,
        Word::Try => Kw::Try,
        Word::Catch => Kw::Catch,
        Word::Finally => Kw::Finally,
        Word::Function => Kw::Function,
        Word::Class => Kw::Class,
        Word::Async => Kw::Async,
        Word::Export => Kw::Export,
        Word::Default => Kw::Default,
        Word::Case => Kw::Case,
        Word::In => Kw::In,
        Word::Of => Kw::Of,
        Word::Instanceof => Kw::Instanceof,
        Word::Typeof | Word::Void | Word::Delete | Word::Await | Word::New => Kw::Unary,
        Word::Return
        | Word::Throw
        | Word::Yield
        | Word::Extends
        | Word::Switch
        | Word::Var
        | Word::Let
        | Word::Const
        | Word::Import => Kw::BeforeExpr,
        Word::This | Word::Super | Word::Null | Word::True | Word::False => Kw::Value,
        // No effect on nesting: scanned as identifiers.
        Word::Break
        | Word::Continue
        | Word::Debugger
        | Word::Static
        | Word::Enum
        | Word::Implements
        | Word::Interface
        | Word::Package
        | Word::Private
        | Word::Protected
        | Word::Public => Kw::None,
    }
}

/// The previous token, as far as the next one's meaning depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prev {
    Start,
    Semi,
    Comma,
    /// `label` when it ended a label or a `case`.
    Colon {
        label: bool,
    },
    Arrow,
    Question,
    /// `.` or `?.`: a word after it is a property name, never a keyword.
    Dot,
    /// Any other punctuator.
    Punct,
    Open(Kind),
    CloseParen {
        header: bool,
    },
    CloseBracket,
    CloseBrace {
        expr_end: bool,
    },
    /// A word; `member` when it is a property or private name.
    Word {
        kw: Kw,
        member: bool,
    },
    /// A number, string, template or regular expression.
    Lit,
    Incr {
        postfix: bool,
    },
}

/// The length of the punctuator at the start of `rest` (longest match; `/`
/// and `/=` are handled apart: they may start a regular expression).
fn punctuator_len(rest: &[u8]) -> usize {
    let b = |k: usize| rest.get(k).copied().unwrap_or(0);
    match (b(0), b(1), b(2), b(3)) {
        (b'>', b'>', b'>', b'=') => 4,
        (b'.', b'.', b'.', _)
        | (b'=', b'=', b'=', _)
        | (b'!', b'=', b'=', _)
        | (b'*', b'*', b'=', _)
        | (b'<', b'<', b'=', _)
        | (b'>', b'>', b'=', _)
        | (b'>', b'>', b'>', _)
        | (b'&', b'&', b'=', _)
        | (b'|', b'|', b'=', _)
        | (b'?', b'?', b'=', _) => 3,
        (b'=', b'>' | b'=', _, _)
        | (b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'%' | b'&' | b'|' | b'^', b'=', _, _)
        | (b'&', b'&', _, _)
        | (b'|', b'|', _, _)
        | (b'?', b'?', _, _)
        | (b'+', b'+', _, _)
        | (b'-', b'-', _, _)
        | (b'*', b'*', _, _)
        | (b'<', b'<', _, _)
        | (b'>', b'>', _, _) => 2,
        _ => 1,
    }
}

fn binary_precedence(p: &[u8]) -> Option<usize> {
    Some(match p {
        b"??" => 1,
        b"||" => 2,
        b"&&" => 3,
        b"|" => 4,
        b"^" => 5,
        b"&" => 6,
        b"==" | b"!=" | b"===" | b"!==" => 7,
        b"<" | b">" | b"<=" | b">=" => 8,
        b"<<" | b">>" | b">>>" => 9,
        b"+" | b"-" => 10,
        b"*" | b"/" | b"%" => 11,
        b"**" => 12,
        _ => return None,
    })
}

struct Scanner<'a> {
    src: &'a [u8],
    i: usize,
    frames: Vec<Frame>,
    prev: Prev,
    /// The token before `prev` (for `for await (`).
    prev2: Prev,
    /// Whether a statement could start where an `async` word stood.
    async_at_stmt: bool,
    /// A line terminator since the previous token.
    newline: bool,
    /// A `;` was seen: unless `else`/`while` follows, statements end.
    semi_pending: bool,
    /// A block closed: a new statement there (a word other than a
    /// continuation) ends every statement at this level.
    block_pending: bool,
    max: u32,
    limit: u32,
    /// When asked for ([`wrapper_statement_ends`]): the offsets just past
    /// each `;` that ends a statement of a CJS wrapper's body.
    ends: Option<Vec<u32>>,
}

/// Whether `c` (a char from non-ASCII input) is white space or a line
/// terminator for JavaScript: `Some(true)` for a line terminator.
fn unicode_space(c: char) -> Option<bool> {
    match c {
        '\u{2028}' | '\u{2029}' => Some(true),
        '\u{a0}'
        | '\u{feff}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200a}'
        | '\u{202f}'
        | '\u{205f}'
        | '\u{3000}' => Some(false),
        _ => None,
    }
}

/// Bytes that may be part of a word: ASCII letters, digits, `_`, `$`, `\`
/// (escapes) and every byte of a non-ASCII char.
static WORD_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'\\' || b >= 0x80;
        i += 1;
    }
    t
};

#[inline]
fn is_word_byte(b: u8) -> bool {
    WORD_BYTES[b as usize]
}

impl<'a> Scanner<'a> {
    fn top(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("the root frame is never popped")
    }

    /// Skip `n` bytes (an escape and what it escapes), never past the end:
    /// input may end in the middle of one.
    fn skip(&mut self, n: usize) {
        self.i = (self.i + n).min(self.src.len());
    }

    fn at(&self, k: usize) -> u8 {
        self.src.get(self.i + k).copied().unwrap_or(0)
    }

    /// The char at `i` when it is non-ASCII, with its length.
    fn char_at(&self, i: usize) -> Option<(char, usize)> {
        let b = *self.src.get(i)?;
        if b < 0x80 {
            return None;
        }
        let len = match b {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => 1,
        };
        let s = std::str::from_utf8(self.src.get(i..i + len)?).ok()?;
        s.chars().next().map(|c| (c, len))
    }

    fn check(&mut self, at: usize) -> Result<(), TooDeep> {
        let d = self.top().depth();
        self.max = self.max.max(d);
        if d > self.limit {
            return Err(TooDeep { offset: at });
        }
        Ok(())
    }

    /// A new token starts at `at` (`word` when it is one): settle the
    /// boundaries the previous token left pending (they depend on this one),
    /// then count it.
    #[inline]
    fn token(&mut self, at: usize, word: Option<Kw>, nest: Nest) -> Result<(), TooDeep> {
        if self.semi_pending || self.block_pending || self.newline {
            self.boundary(word);
        }
        self.newline = false;
        let top = self.top();
        match nest {
            Nest::Leaf => return Ok(()),
            Nest::Operand => top.operand = top.operand.saturating_add(1),
            Nest::Bin(p) => {
                for b in &mut top.bins[p + 1..] {
                    top.bins_total -= *b;
                    *b = 0;
                }
                top.bins[p] = top.bins[p].saturating_add(1);
                top.bins_total = top.bins_total.saturating_add(1);
                top.operand = 0;
            }
            Nest::Low => {
                top.low = top.low.saturating_add(1);
                top.clear_bins();
                top.operand = 0;
            }
        }
        self.check(at)
    }

    /// Settle what the previous token left pending, now that the next one
    /// (`word`, when it is one) is known.
    fn boundary(&mut self, word: Option<Kw>) {
        let continues_stmt = matches!(word, Some(Kw::Else | Kw::While));
        if std::mem::take(&mut self.semi_pending) && !continues_stmt {
            self.top().stmt = 0;
        }
        // A word that cannot continue the statement before it starts a new
        // one: after a block, or after an expression and a line break (ASI).
        let new_statement = word.is_some_and(|kw| {
            !matches!(
                kw,
                Kw::Else | Kw::While | Kw::Catch | Kw::Finally | Kw::In | Kw::Of | Kw::Instanceof
            )
        });
        let after_expression = self.newline && self.expression_ended();
        if (std::mem::take(&mut self.block_pending) || after_expression) && new_statement {
            let top = self.top();
            top.end_expressions();
            top.stmt = 0;
        }
    }

    #[inline]
    fn set_prev(&mut self, p: Prev) {
        self.prev2 = self.prev;
        self.prev = p;
    }

    /// An expression may start here: a `/` begins a regular expression and
    /// `+`/`-` are prefix operators.
    fn expression_expected(&self) -> bool {
        match self.prev {
            Prev::Start
            | Prev::Semi
            | Prev::Comma
            | Prev::Colon { .. }
            | Prev::Arrow
            | Prev::Question
            | Prev::Dot
            | Prev::Punct
            | Prev::Open(_) => true,
            Prev::CloseParen { header } => header,
            Prev::CloseBracket | Prev::Lit => false,
            Prev::CloseBrace { expr_end } => !expr_end,
            Prev::Word { member: true, .. } => false,
            Prev::Word { kw, .. } => match kw {
                Kw::None | Kw::Value | Kw::Async => false,
                Kw::Of => self.frames.last().is_some_and(|f| f.for_head),
                _ => true,
            },
            Prev::Incr { postfix } => !postfix,
        }
    }

    /// The previous token can end an expression.
    fn expression_ended(&self) -> bool {
        match self.prev {
            Prev::Word { kw, member } => member || matches!(kw, Kw::None | Kw::Value | Kw::Async),
            Prev::Lit
            | Prev::CloseBracket
            | Prev::CloseBrace { .. }
            | Prev::CloseParen { header: false }
            | Prev::Incr { postfix: true } => true,
            _ => false,
        }
    }

    /// A statement (hence a declaration) could start here.
    fn at_statement_start(&self) -> bool {
        match self.prev {
            Prev::Start
            | Prev::Semi
            | Prev::Open(Kind::Block)
            | Prev::Colon { label: true }
            | Prev::CloseBrace { expr_end: false }
            | Prev::CloseParen { header: true } => true,
            Prev::Word { kw, member: false } => {
                matches!(kw, Kw::Else | Kw::Do | Kw::Export | Kw::Default)
            }
            _ => false,
        }
    }

    fn open(&mut self, kind: Kind, at: usize) -> Result<(), TooDeep> {
        self.i += 1;
        self.token(at, None, Nest::Operand)?;
        let (header, for_head) = match (kind, self.prev) {
            (
                Kind::Paren,
                Prev::Word {
                    kw: kw @ (Kw::If | Kw::While | Kw::For | Kw::With),
                    member: false,
                },
            ) => (true, kw == Kw::For),
            // `for await (`
            (
                Kind::Paren,
                Prev::Word {
                    kw: Kw::Unary,
                    member: false,
                },
            ) if self.prev2
                == (Prev::Word {
                    kw: Kw::For,
                    member: false,
                }) =>
            {
                (true, true)
            }
            _ => (false, false),
        };
        let (kind, expr_end) = match kind {
            Kind::Block => self.classify_brace(),
            k => (k, false),
        };
        let base = self.top().depth();
        let mut f = Frame::new(kind, base);
        f.header = header;
        f.for_head = for_head;
        f.expr_end = expr_end;
        self.frames.push(f);
        self.set_prev(Prev::Open(kind));
        self.check(at)
    }

    /// Object literal or block, and whether its `}` ends an expression.
    /// When unsure, a block: statement chains are then never reset at its
    /// commas, so the estimate can only be too high.
    fn classify_brace(&mut self) -> (Kind, bool) {
        let pending = std::mem::take(&mut self.top().expr_body_pending);
        match self.prev {
            Prev::Arrow => (Kind::Block, false),
            Prev::CloseParen { .. } => (Kind::Block, pending),
            Prev::Word {
                kw: Kw::Else | Kw::Do | Kw::Try | Kw::Finally,
                member: false,
            } => (Kind::Block, false),
            Prev::Word {
                kw: Kw::BeforeExpr | Kw::Unary | Kw::In | Kw::Instanceof | Kw::Case | Kw::Default,
                member: false,
            } => (Kind::Object, true),
            Prev::Word { .. } | Prev::Lit | Prev::CloseBracket | Prev::Incr { postfix: true } => {
                (Kind::Block, pending)
            }
            Prev::Start
            | Prev::Semi
            | Prev::Open(Kind::Block)
            | Prev::CloseBrace { .. }
            | Prev::Colon { label: true } => (Kind::Block, false),
            // A ternary's or an object key's colon.
            Prev::Colon { label: false } => (Kind::Object, true),
            Prev::Comma
            | Prev::Dot
            | Prev::Question
            | Prev::Punct
            | Prev::Open(_)
            | Prev::Incr { postfix: false } => (Kind::Object, true),
        }
    }

    fn close(&mut self, kind: Kind, at: usize) -> Result<(), TooDeep> {
        self.i += 1;
        let top = *self.top();
        let matches = self.frames.len() > 1
            && match kind {
                Kind::Paren => top.kind == Kind::Paren,
                Kind::Bracket => top.kind == Kind::Bracket,
                _ => matches!(top.kind, Kind::Object | Kind::Block | Kind::Subst),
            };
        if !matches {
            // Unbalanced: a syntax error. Keep every level open (counting
            // the closer as an operand token) so the estimate can only be
            // too high.
            self.token(at, None, Nest::Operand)?;
            self.set_prev(Prev::Punct);
            return Ok(());
        }
        self.frames.pop();
        self.semi_pending = false;
        self.block_pending = false;
        match top.kind {
            Kind::Paren => self.set_prev(Prev::CloseParen { header: top.header }),
            Kind::Bracket => self.set_prev(Prev::CloseBracket),
            Kind::Object => self.set_prev(Prev::CloseBrace { expr_end: true }),
            Kind::Block => {
                self.block_pending = true;
                self.set_prev(Prev::CloseBrace {
                    expr_end: top.expr_end,
                });
            }
            // The template goes on.
            Kind::Subst => self.template(at)?,
        }
        Ok(())
    }

    /// Record `end` (just past a `;` in a block) when it ends a statement
    /// of the body of `(function(…){ … })` and the next statement starts
    /// right there with an ASCII word: no space, comment or line break
    /// between them that the parser could attach to either side.
    fn statement_end(&mut self, end: usize) {
        let Some(ends) = self.ends.as_mut() else {
            return;
        };
        let wrapper_body = self.frames.len() == 3 && self.frames[1].kind == Kind::Paren;
        let next = self.src.get(end).copied().unwrap_or(0);
        if wrapper_body && (next.is_ascii_alphabetic() || next == b'_' || next == b'$') {
            ends.push(end as u32);
        }
    }

    fn is_line_terminator_at(&self, i: usize) -> bool {
        match self.src.get(i) {
            Some(b'\n' | b'\r') => true,
            Some(0xe2) => {
                self.src.get(i + 1) == Some(&0x80)
                    && matches!(self.src.get(i + 2), Some(0xa8 | 0xa9))
            }
            _ => false,
        }
    }

    /// The next line terminator at or after `from` (`\n`, `\r`, U+2028,
    /// U+2029), or the end.
    fn line_end(&self, from: usize) -> usize {
        let mut i = from;
        while let Some(k) = memchr::memchr3(b'\n', b'\r', 0xe2, &self.src[i..]) {
            if self.is_line_terminator_at(i + k) {
                return i + k;
            }
            i += k + 1;
        }
        self.src.len()
    }

    /// Skip to the end of the line (a line comment).
    fn skip_line(&mut self) {
        self.i = self.line_end(self.i);
    }

    fn skip_block_comment(&mut self) {
        let body = self.i + 2;
        let end =
            memchr::memmem::find(&self.src[body..], b"*/").map_or(self.src.len(), |k| body + k);
        if self.line_end(body) < end {
            self.newline = true;
        }
        self.i = (end + 2).min(self.src.len());
    }

    fn skip_string(&mut self, quote: u8) {
        self.i += 1;
        while self.i < self.src.len() {
            // Jump to the next byte that matters.
            let rest = &self.src[self.i..];
            let k = memchr::memchr3(quote, b'\\', b'\n', rest).unwrap_or(rest.len());
            let k = memchr::memchr(b'\r', &rest[..k]).unwrap_or(k);
            self.i += k;
            if self.i >= self.src.len() {
                return;
            }
            match self.src[self.i] {
                // A line continuation may be CR LF.
                b'\\' if self.at(1) == b'\r' && self.at(2) == b'\n' => self.skip(3),
                b'\\' => self.skip(2),
                // Unterminated: swc stops here with an error.
                b'\n' | b'\r' => return,
                b if b == quote => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Template text from `i` up to its end (`` ` ``: returns false) or the
    /// next substitution (`${`: returns true, `i` after it).
    fn skip_template_text(&mut self) -> bool {
        while self.i < self.src.len() {
            let rest = &self.src[self.i..];
            self.i += memchr::memchr3(b'`', b'\\', b'$', rest).unwrap_or(rest.len());
            if self.i >= self.src.len() {
                return false;
            }
            match self.src[self.i] {
                b'\\' => self.skip(2),
                b'`' => {
                    self.i += 1;
                    return false;
                }
                b'$' if self.at(1) == b'{' => {
                    self.i += 2;
                    return true;
                }
                _ => self.i += 1,
            }
        }
        false
    }

    fn skip_regex(&mut self) {
        self.i += 1;
        let mut class = false;
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'\\' if !self.is_line_terminator_at(self.i + 1) => self.skip(2),
                _ if self.is_line_terminator_at(self.i) => return,
                b'[' => {
                    class = true;
                    self.i += 1
                }
                b']' => {
                    class = false;
                    self.i += 1
                }
                b'/' if !class => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        // Flags.
        self.skip_word();
    }

    fn skip_number(&mut self) {
        let s = self.src;
        let radix = s[self.i] == b'0' && matches!(self.at(1) | 0x20, b'x' | b'o' | b'b');
        let digits = |sc: &mut Self, hex: bool| {
            while sc.i < s.len()
                && (s[sc.i].is_ascii_digit()
                    || s[sc.i] == b'_'
                    || (hex && s[sc.i].is_ascii_hexdigit()))
            {
                sc.i += 1;
            }
        };
        if radix {
            self.i += 2;
            digits(self, true);
        } else {
            digits(self, false);
            if self.i < s.len() && s[self.i] == b'.' {
                self.i += 1;
                digits(self, false);
            }
            if self.i < s.len() && (s[self.i] | 0x20) == b'e' {
                self.i += 1;
                if self.i < s.len() && matches!(s[self.i], b'+' | b'-') {
                    self.i += 1;
                }
                digits(self, false);
            }
        }
        if self.i < s.len() && s[self.i] == b'n' {
            self.i += 1;
        }
    }

    /// A word from `i`: identifier chars, `\u` escapes, non-ASCII letters.
    fn skip_word(&mut self) {
        while self.i < self.src.len() {
            let b = self.src[self.i];
            if b == b'\\' {
                self.skip(2);
            } else if b >= 0x80 {
                match self.char_at(self.i) {
                    Some((c, n)) => {
                        if unicode_space(c).is_some() {
                            return;
                        }
                        self.i += n;
                    }
                    None => self.i += 1,
                }
            } else if is_word_byte(b) {
                self.i += 1;
            } else {
                return;
            }
            // The common case: a run of ASCII word bytes.
            while self.i < self.src.len() {
                let b = self.src[self.i];
                if b < 0x80 && b != b'\\' && is_word_byte(b) {
                    self.i += 1;
                } else {
                    break;
                }
            }
        }
    }

    fn run(&mut self) -> Result<(), TooDeep> {
        let s = self.src;
        if s.starts_with(b"#!") {
            self.skip_line();
        }
        while self.i < s.len() {
            let at = self.i;
            let b = s[at];
            match b {
                b'\n' | b'\r' => {
                    self.newline = true;
                    self.i += 1;
                }
                b' ' | b'\t' | 0x0b | 0x0c => self.i += 1,
                b'/' if self.at(1) == b'/' => self.skip_line(),
                b'/' if self.at(1) == b'*' => self.skip_block_comment(),
                // `<!--` always, `-->` at the start of a line: comments (Annex B).
                b'<' if s[at..].starts_with(b"<!--") => self.skip_line(),
                b'-' if self.newline && s[at..].starts_with(b"-->") => self.skip_line(),
                // Merge-conflict markers at the start of a line: swc skips the line.
                b'<' | b'>' | b'|' | b'='
                    if self.newline
                        && (s[at..].starts_with(b"<<<<<<< ")
                            || s[at..].starts_with(b">>>>>>> ")
                            || s[at..].starts_with(b"||||||| ")
                            || s[at..].starts_with(b"=======")) =>
                {
                    self.skip_line()
                }
                b'(' => self.open(Kind::Paren, at)?,
                b'[' => self.open(Kind::Bracket, at)?,
                b'{' => self.open(Kind::Block, at)?,
                b')' => self.close(Kind::Paren, at)?,
                b']' => self.close(Kind::Bracket, at)?,
                b'}' => self.close(Kind::Block, at)?,
                b'`' => {
                    // A tagged template is a call: it counts in the operand.
                    self.i += 1;
                    self.token(at, None, Nest::Operand)?;
                    self.template(at)?;
                }
                b'\'' | b'"' => {
                    self.token(at, None, Nest::Leaf)?;
                    self.skip_string(b);
                    self.set_prev(Prev::Lit);
                }
                b',' | b';' => {
                    self.i += 1;
                    self.token(at, None, Nest::Leaf)?;
                    let top = self.top();
                    top.end_expressions();
                    if top.kind == Kind::Block && b == b';' {
                        self.semi_pending = true;
                        self.statement_end(at + 1);
                    } else if top.kind != Kind::Block {
                        top.stmt = 0;
                    }
                    self.set_prev(if b == b',' { Prev::Comma } else { Prev::Semi });
                }
                b'?' if self.at(1) == b'.' && !self.at(2).is_ascii_digit() => {
                    self.i += 2;
                    self.token(at, None, Nest::Operand)?;
                    self.set_prev(Prev::Dot);
                }
                b'?' if self.at(1) != b'?' => {
                    self.i += 1;
                    self.token(at, None, Nest::Low)?;
                    self.top().questions += 1;
                    self.set_prev(Prev::Question);
                }
                b':' => {
                    self.i += 1;
                    let default = self.prev
                        == (Prev::Word {
                            kw: Kw::Default,
                            member: false,
                        });
                    let top = self.top();
                    // A ternary's, a `case`/`default` clause's, a label's, or
                    // (outside blocks) an object key's.
                    let (label, clause) = if top.questions > 0 {
                        top.questions -= 1;
                        (false, false)
                    } else if top.kind == Kind::Block {
                        let clause = std::mem::take(&mut top.case_pending) || default;
                        (!clause, clause)
                    } else {
                        (false, false)
                    };
                    if label {
                        // Labelled statements nest.
                        self.token(at, None, Nest::Leaf)?;
                        let top = self.top();
                        top.stmt = top.stmt.saturating_add(LABEL_WEIGHT);
                        self.check(at)?;
                    } else if clause {
                        // A `case` clause's statements start afresh.
                        self.token(at, None, Nest::Leaf)?;
                        let top = self.top();
                        top.end_expressions();
                        top.stmt = 0;
                    } else {
                        self.token(at, None, Nest::Low)?;
                    }
                    self.set_prev(Prev::Colon { label });
                }
                b'.' if self.at(1).is_ascii_digit() => {
                    self.token(at, None, Nest::Leaf)?;
                    self.skip_number();
                    self.set_prev(Prev::Lit);
                }
                b'.' if !s[at..].starts_with(b"...") => {
                    self.i += 1;
                    self.token(at, None, Nest::Operand)?;
                    self.set_prev(Prev::Dot);
                }
                b'/' if self.expression_expected() => {
                    self.token(at, None, Nest::Leaf)?;
                    self.skip_regex();
                    self.set_prev(Prev::Lit);
                }
                b'/' => {
                    let assign = self.at(1) == b'=';
                    self.i += if assign { 2 } else { 1 };
                    let nest = if assign { Nest::Low } else { Nest::Bin(11) };
                    self.token(at, None, nest)?;
                    self.set_prev(Prev::Punct);
                }
                b'0'..=b'9' => {
                    self.token(at, None, Nest::Leaf)?;
                    self.skip_number();
                    self.set_prev(Prev::Lit);
                }
                b'#' => {
                    // A private name: never a keyword.
                    self.i += 1;
                    self.skip_word();
                    self.token(at, None, Nest::Leaf)?;
                    self.set_prev(Prev::Word {
                        kw: Kw::None,
                        member: true,
                    });
                }
                b if is_word_byte(b) => {
                    if b >= 0x80
                        && let Some((c, n)) = self.char_at(at)
                        && let Some(line) = unicode_space(c)
                    {
                        self.newline |= line;
                        self.i += n;
                        continue;
                    }
                    self.skip_word();
                    if self.prev == Prev::Dot {
                        self.token(at, Some(Kw::None), Nest::Leaf)?;
                        self.set_prev(Prev::Word {
                            kw: Kw::None,
                            member: true,
                        });
                    } else {
                        let kw = keyword(&s[at..self.i]);
                        self.word(at, kw)?;
                    }
                }
                _ => self.punctuator(at)?,
            }
        }
        Ok(())
    }

    fn punctuator(&mut self, at: usize) -> Result<(), TooDeep> {
        let rest = &self.src[at..];
        let p = &rest[..punctuator_len(rest).min(rest.len())];
        self.i += p.len();
        let prefix = self.expression_expected();
        let (nest, prev) = match p {
            b"=>" => (Nest::Low, Prev::Arrow),
            b"++" | b"--" => {
                let postfix = !self.newline && !prefix;
                (Nest::Operand, Prev::Incr { postfix })
            }
            b"+" | b"-" if prefix => (Nest::Operand, Prev::Punct),
            b"!" | b"~" | b"@" => (Nest::Operand, Prev::Punct),
            b"..." => (Nest::Low, Prev::Punct),
            _ => match binary_precedence(p) {
                Some(prec) => (Nest::Bin(prec), Prev::Punct),
                // Assignments; anything else is not JavaScript, and counts
                // as nesting to stay on the safe side.
                None => (Nest::Low, Prev::Punct),
            },
        };
        self.token(at, None, nest)?;
        self.set_prev(prev);
        Ok(())
    }

    fn word(&mut self, at: usize, kw: Kw) -> Result<(), TooDeep> {
        let stmt_start = self.at_statement_start();
        let nest = match kw {
            Kw::In | Kw::Instanceof => Nest::Bin(8),
            Kw::Unary => Nest::Operand,
            Kw::BeforeExpr | Kw::Of | Kw::Export | Kw::Default | Kw::Case => Nest::Low,
            _ => Nest::Leaf,
        };
        self.token(at, Some(kw), nest)?;
        match kw {
            Kw::If | Kw::Else | Kw::For | Kw::While | Kw::Do | Kw::With => {
                let top = self.top();
                top.stmt = top.stmt.saturating_add(1);
                self.check(at)?;
            }
            Kw::Async => self.async_at_stmt = stmt_start,
            Kw::Case => self.top().case_pending = true,
            Kw::Function | Kw::Class => {
                let declaration = match self.prev {
                    Prev::Word {
                        kw: Kw::Async,
                        member: false,
                    } => self.async_at_stmt,
                    _ => stmt_start,
                };
                self.top().expr_body_pending = !declaration;
            }
            _ => {}
        }
        self.set_prev(Prev::Word { kw, member: false });
        Ok(())
    }

    /// Template text after `` ` `` or a substitution's `}`: up to the end
    /// of the template, or into the next substitution.
    fn template(&mut self, at: usize) -> Result<(), TooDeep> {
        if self.skip_template_text() {
            let base = self.top().depth();
            self.frames.push(Frame::new(Kind::Subst, base));
            self.set_prev(Prev::Open(Kind::Subst));
            self.check(at)?;
        } else {
            self.set_prev(Prev::Lit);
        }
        Ok(())
    }
}

impl<'a> Scanner<'a> {
    /// A scan of `src` from its start, failing past `limit`; `ends`
    /// collects the wrapper's statement ends when given.
    fn new(src: &'a str, limit: u32, ends: Option<Vec<u32>>) -> Scanner<'a> {
        Scanner {
            src: src.as_bytes(),
            i: 0,
            frames: vec![Frame::new(Kind::Block, 0)],
            prev: Prev::Start,
            prev2: Prev::Start,
            async_at_stmt: false,
            // swc treats the start of the input as after a line break.
            newline: true,
            semi_pending: false,
            block_pending: false,
            max: 0,
            limit,
            ends,
        }
    }
}

/// The deepest nesting any parse of `src` can reach, in the units of
/// [`MAX_NESTING`] (an over-approximation); `Err` at the first token past
/// `limit`. Linear time, memory proportional to the bracket depth.
pub fn scan_with_limit(src: &str, limit: u32) -> Result<u32, TooDeep> {
    let mut s = Scanner::new(src, limit, None);
    s.run()?;
    Ok(s.max)
}

/// The places where `src` may be cut between two statements of a CJS
/// wrapper's body (`(function(…){ a;b;c })`, what single-bundle builds
/// are): offsets just past a `;` at that level, followed at once by a word.
/// A hint read by this lexical scan, not a proof: whoever cuts there must
/// check the cut by parsing (see `js::pieces`). `Err` when the input is
/// nested past [`MAX_NESTING`], as [`scan`].
pub fn wrapper_statement_ends(src: &str) -> Result<Vec<u32>, TooDeep> {
    let mut s = Scanner::new(src, MAX_NESTING, Some(Vec::new()));
    s.run()?;
    Ok(s.ends.unwrap_or_default())
}

/// [`scan_with_limit`] with [`MAX_NESTING`].
pub fn scan(src: &str) -> Result<u32, TooDeep> {
    scan_with_limit(src, MAX_NESTING)
}

/// [`scan`] `src` (module `name`), as the error the JavaScript layer reports.
pub fn check_source(name: &str, src: &str) -> Result<(), super::JsError> {
    match scan(src) {
        Ok(_) => Ok(()),
        Err(d) => Err(too_deep(name, src, d.offset)),
    }
}

/// The error for input nested past the limit at byte `offset` of `src`.
pub fn too_deep(name: &str, src: &str, offset: usize) -> super::JsError {
    let (line, col) = super::lines::line_col(src, offset);
    super::JsError::TooDeep {
        module: name.to_string(),
        line,
        col,
        limit: MAX_NESTING,
    }
}

// ------------------------------------------------------------ AST checks

/// Measures AST depth (in expressions, statements and patterns: every
/// recursive path through swc's AST passes through one of them), never
/// descending past the limit. As a visitor it walks a tree by itself; a walk
/// of its own that counts the same levels (the index's, [`crate::js::index`])
/// holds one and steps it with [`Measure::down`] and [`Measure::up`].
pub struct Measure {
    depth: u32,
    max: u32,
    limit: u32,
    over: Option<Span>,
}

impl Default for Measure {
    /// At a program's root, limited to [`AST_LIMIT`].
    fn default() -> Measure {
        Measure {
            depth: 0,
            max: 0,
            limit: AST_LIMIT,
            over: None,
        }
    }
}

impl Measure {
    /// One level down, into the node at `span`: whether to descend. Not
    /// past the limit: then `span` is the node over it, and nothing more is
    /// descended into. Each `true` is followed by one [`Measure::up`].
    #[inline]
    pub fn down(&mut self, span: impl FnOnce() -> Span) -> bool {
        if self.over.is_some() {
            return false;
        }
        if self.depth >= self.limit {
            self.over = Some(span());
            return false;
        }
        self.depth += 1;
        self.max = self.max.max(self.depth);
        true
    }

    #[inline]
    pub fn up(&mut self) {
        self.depth -= 1;
    }

    /// Measure a part the caller's walk does not descend into itself (a
    /// declaration's pattern, a method's key), from the current level:
    /// whether it stays within the limit.
    pub fn part<N: VisitWith<Measure>>(&mut self, node: &N) -> bool {
        if self.over.is_some() {
            return false;
        }
        let mut sub = Measure {
            depth: self.depth,
            max: self.depth,
            limit: self.limit,
            over: None,
        };
        node.visit_with(&mut sub);
        self.max = self.max.max(sub.max);
        self.over = sub.over;
        self.over.is_none()
    }

    /// The first node past the limit, if one was met.
    pub fn over(&self) -> Option<Span> {
        self.over
    }

    fn enter(&mut self, span: impl FnOnce() -> Span, f: impl FnOnce(&mut Self)) {
        if self.down(span) {
            f(self);
            self.up();
        }
    }
}

impl Visit for Measure {
    fn visit_expr(&mut self, e: &Expr) {
        self.enter(|| e.span(), |s| e.visit_children_with(s));
    }
    fn visit_stmt(&mut self, st: &Stmt) {
        self.enter(|| st.span(), |s| st.visit_children_with(s));
    }
    fn visit_pat(&mut self, p: &Pat) {
        self.enter(|| p.span(), |s| p.visit_children_with(s));
    }
}

/// The depth of `program` in AST levels, or the first node past
/// [`AST_LIMIT`] levels.
pub fn check_program(program: &Program) -> Result<u32, Span> {
    measure(|m| program.visit_with(m))
}

/// The depth of `e` in AST levels, or the first node past [`AST_LIMIT`]
/// levels.
pub fn check_expr(e: &Expr) -> Result<u32, Span> {
    measure(|m| e.visit_with(m))
}

fn measure(walk: impl FnOnce(&mut Measure)) -> Result<u32, Span> {
    let mut m = Measure::default();
    with_stack(|| walk(&mut m));
    m.over.map_or(Ok(m.max), Err)
}

/// Subtrees cut off an AST to be freed one by one.
enum Piece {
    Expr(Expr),
    Stmt(Stmt),
    Pat(Pat),
}

/// Cuts every subtree below `CUT` levels off, into `pieces`.
struct Cutter {
    depth: u32,
    pieces: Vec<Piece>,
}

const CUT: u32 = 64;

impl Cutter {
    fn enter<T>(&mut self, node: &mut T, take: impl FnOnce(&mut T) -> Piece)
    where
        T: VisitMutWith<Self>,
    {
        if self.depth >= CUT {
            self.pieces.push(take(node));
            return;
        }
        self.depth += 1;
        node.visit_mut_children_with(self);
        self.depth -= 1;
    }
}

impl VisitMut for Cutter {
    fn visit_mut_expr(&mut self, e: &mut Expr) {
        self.enter(e, |e| {
            Piece::Expr(std::mem::replace(
                e,
                Expr::Invalid(Invalid { span: DUMMY_SP }),
            ))
        });
    }
    fn visit_mut_stmt(&mut self, s: &mut Stmt) {
        self.enter(s, |s| {
            Piece::Stmt(std::mem::replace(
                s,
                Stmt::Empty(EmptyStmt { span: DUMMY_SP }),
            ))
        });
    }
    fn visit_mut_pat(&mut self, p: &mut Pat) {
        self.enter(p, |p| {
            Piece::Pat(std::mem::replace(
                p,
                Pat::Invalid(Invalid { span: DUMMY_SP }),
            ))
        });
    }
}

impl Cutter {
    /// Free every piece, cutting each one's deep parts off first: no drop
    /// recurses more than `CUT` levels.
    fn drain(mut self) {
        while let Some(mut piece) = self.pieces.pop() {
            self.depth = 0;
            match &mut piece {
                Piece::Expr(e) => e.visit_mut_children_with(&mut self),
                Piece::Stmt(s) => s.visit_mut_children_with(&mut self),
                Piece::Pat(p) => p.visit_mut_children_with(&mut self),
            }
            drop(piece);
        }
    }
}

/// Free an AST of any depth without recursing deeply.
pub fn dismantle_program(mut program: Program) {
    let mut c = Cutter {
        depth: 0,
        pieces: Vec::new(),
    };
    program.visit_mut_with(&mut c);
    drop(program);
    c.drain();
}

/// Free an expression of any depth without recursing deeply.
pub fn dismantle_expr(mut e: Box<Expr>) {
    let mut c = Cutter {
        depth: 0,
        pieces: Vec::new(),
    };
    e.visit_mut_children_with(&mut c);
    drop(e);
    c.drain();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(s: &str) -> u32 {
        scan_with_limit(s, u32::MAX).unwrap()
    }

    #[test]
    fn brackets_nest_and_lists_do_not() {
        let flat = depth("f(a,b,c,d,e,f,g,h);g(1);h(2)");
        let nested = depth("f(f(f(f(f(f(1))))))");
        assert!(nested > flat + 8, "{nested} vs {flat}");
        // A long list stays flat: commas end every expression at their level.
        let list = format!("x=[{}]", vec!["1"; 10_000].join(","));
        assert!(depth(&list) < 10, "{}", depth(&list));
        // So do long statement lists, with or without semicolons.
        let stmts = "function f(){}".repeat(5_000) + &"if(a){b()}".repeat(5_000);
        assert!(depth(&stmts) < 10, "{}", depth(&stmts));
        let semis = "a=1;".repeat(10_000);
        assert!(depth(&semis) < 10);
    }

    #[test]
    fn chains_count() {
        for (unit, n) in [
            ("1+", 1),
            ("1*1+", 1),
            ("2**", 1),
            ("!", 1),
            ("- ", 1),
            ("x.", 1),
            ("x()", 1),
            ("x`t`", 1),
            ("new ", 1),
            ("await ", 1),
            ("a=>", 1),
            ("a?b:", 2),
            ("a=", 1),
            ("a in ", 1),
        ] {
            let s = format!("x={}1", unit.repeat(1000));
            assert!(depth(&s) >= 1000 * n, "{unit}: {}", depth(&s));
        }
        // `else if` chains continue across `;` and blocks.
        let s = "if(a)b;".to_string() + &"else if(a)b;".repeat(1000);
        assert!(depth(&s) >= 2000, "{}", depth(&s));
        let s = "if(a){}".to_string() + &"else if(a){}".repeat(1000);
        assert!(depth(&s) >= 2000, "{}", depth(&s));
        // Statement chains survive the commas of their innermost expression.
        let s = "do if(a)x,y;else ".repeat(1000) + "z;";
        assert!(depth(&s) >= 2000, "{}", depth(&s));
        let s = "l:".repeat(100) + "x,y";
        assert!(depth(&s) >= 100 * LABEL_WEIGHT, "{}", depth(&s));
        // `case` clauses are a flat list.
        let s = format!("switch(x){{{}}}", "case 1:case 2:default:".repeat(1000));
        assert!(depth(&s) < 10, "{}", depth(&s));
    }

    #[test]
    fn strings_comments_templates_and_regexes_are_skipped() {
        let deep = "(".repeat(500);
        for s in [
            format!("x='{deep}'"),
            format!("x=\"{deep}\""),
            format!("// {deep}\nx"),
            format!("/* {deep} */x"),
            format!("x=`{deep}`"),
            format!("x=/{deep}/g"),
            format!("if(a)/{deep}/.test(b)"),
            format!("x=`${{a}}{deep}`"),
            format!("x=[/[/]{deep}/]"),
        ] {
            assert!(depth(&s) < 16, "{s:.40}: {}", depth(&s));
        }
        // Divisions are not regexes: what follows them counts.
        assert!(depth(&format!("x=a/b/{deep}")) >= 500);
        assert!(depth(&format!("x=(a)/2/{deep}")) >= 500);
        assert!(depth(&format!("x={{}}/2/{deep}")) >= 500);
        assert!(depth(&format!("x=function(){{}}/2/{deep}")) >= 500);
        assert!(depth(&format!("x=this.if/2/{deep}")) >= 500);
        // Substitutions nest.
        let s = "`${".repeat(300) + &"}`".repeat(300);
        assert!(depth(&s) >= 600, "{}", depth(&s));
    }

    #[test]
    fn input_may_end_inside_an_escape() {
        // Found by the `js` fuzz target: a word ending in `\`.
        for s in ["x\\", "'\\", "`\\", "x=/\\", "x|==x}+c\u{3}hif/\n\\"] {
            assert!(scan(s).is_ok(), "{s:?}");
        }
    }

    #[test]
    fn too_deep_names_the_offset() {
        let s = format!("x={}1{}", "(".repeat(100), ")".repeat(100));
        let e = scan_with_limit(&s, 50).unwrap_err();
        assert!(e.offset > 2 && e.offset < 40, "{e:?}");
        assert!(scan_with_limit(&s, 500).is_ok());
    }

    #[test]
    fn deep_asts_are_measured_and_freed() {
        use swc_ecma_ast::*;
        // A left-deep `+` chain built by hand, far past the limit.
        let mut e = Box::new(Expr::Lit(Lit::Num(Number {
            span: DUMMY_SP,
            value: 1.0,
            raw: None,
        })));
        for _ in 0..200_000 {
            e = Box::new(Expr::Bin(BinExpr {
                span: DUMMY_SP,
                op: BinaryOp::Add,
                left: e,
                right: Box::new(Expr::Ident(Ident::new_no_ctxt("x".into(), DUMMY_SP))),
            }));
        }
        assert!(check_expr(&e).is_err());
        dismantle_expr(e);
    }
}
