//! The lexical part of the scan: which words are keywords to it, how long a
//! punctuator is, and skipping what swc's lexer skips (line terminators,
//! comments, strings, template text, regular expressions, numbers, words).

use super::Scanner;

/// Keywords that matter to the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kw {
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
pub(super) fn keyword(w: &[u8]) -> Kw {
    use crate::js::keywords::Word;
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

/// The length of the punctuator at the start of `rest` (longest match; `/`
/// and `/=` are handled apart: they may start a regular expression).
pub(super) fn punctuator_len(rest: &[u8]) -> usize {
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

pub(super) fn binary_precedence(p: &[u8]) -> Option<usize> {
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

/// Whether `c` (a char from non-ASCII input) is white space or a line
/// terminator for JavaScript: `Some(true)` for a line terminator.
pub(super) fn unicode_space(c: char) -> Option<bool> {
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
pub(super) fn is_word_byte(b: u8) -> bool {
    WORD_BYTES[b as usize]
}

impl Scanner<'_> {
    pub(super) fn is_line_terminator_at(&self, i: usize) -> bool {
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
    pub(super) fn line_end(&self, from: usize) -> usize {
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
    pub(super) fn skip_line(&mut self) {
        self.i = self.line_end(self.i);
    }

    pub(super) fn skip_block_comment(&mut self) {
        let body = self.i + 2;
        let end =
            memchr::memmem::find(&self.src[body..], b"*/").map_or(self.src.len(), |k| body + k);
        if self.line_end(body) < end {
            self.newline = true;
        }
        self.i = (end + 2).min(self.src.len());
    }

    pub(super) fn skip_string(&mut self, quote: u8) {
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
    pub(super) fn skip_template_text(&mut self) -> bool {
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

    pub(super) fn skip_regex(&mut self) {
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

    pub(super) fn skip_number(&mut self) {
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
    pub(super) fn skip_word(&mut self) {
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
}
