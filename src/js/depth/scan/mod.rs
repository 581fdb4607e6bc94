//! The scan before parsing: a lexical pass that over-approximates how deep
//! any parse of a text can nest (see the parent module).

pub(super) mod frame;
mod lex;

use super::{MAX_NESTING, TooDeep};
use frame::{Frame, Kind, LABEL_WEIGHT, Nest};
use lex::{Kw, binary_precedence, is_word_byte, keyword, punctuator_len, unicode_space};

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
}

impl<'a> Scanner<'a> {
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
                b',' | b';' => self.separator(at, b)?,
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
                b':' => self.colon(at)?,
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
                b if is_word_byte(b) => self.word_or_space(at, b)?,
                _ => self.punctuator(at)?,
            }
        }
        Ok(())
    }

    /// `,` or `;`: every expression at this level ends; in a block, `;`
    /// ends a statement too (pending what follows).
    fn separator(&mut self, at: usize, b: u8) -> Result<(), TooDeep> {
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
        Ok(())
    }

    /// `:`: a ternary's, a `case`/`default` clause's, a label's, or
    /// (outside blocks) an object key's.
    fn colon(&mut self, at: usize) -> Result<(), TooDeep> {
        self.i += 1;
        let default = self.prev
            == (Prev::Word {
                kw: Kw::Default,
                member: false,
            });
        let top = self.top();
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
        Ok(())
    }

    /// A byte that may start a word: a non-ASCII space or line terminator,
    /// else a word (a property name after `.`, else a keyword or identifier).
    fn word_or_space(&mut self, at: usize, b: u8) -> Result<(), TooDeep> {
        if b >= 0x80
            && let Some((c, n)) = self.char_at(at)
            && let Some(line) = unicode_space(c)
        {
            self.newline |= line;
            self.i += n;
            return Ok(());
        }
        self.skip_word();
        if self.prev == Prev::Dot {
            self.token(at, Some(Kw::None), Nest::Leaf)?;
            self.set_prev(Prev::Word {
                kw: Kw::None,
                member: true,
            });
        } else {
            let kw = keyword(&self.src[at..self.i]);
            self.word(at, kw)?;
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
