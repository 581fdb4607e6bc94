//! The words JavaScript reserves or gives a meaning to: one table, and the
//! named subsets its users need.
//!
//! - [`is_reserved`]: never the name of a binding in module (strict) code,
//!   so a minifier never renames it (the diff's name erasure keeps it).
//! - [`is_highlighted`]: shown as a keyword when code is coloured (words
//!   with a meaning in the syntax of module code, and the value words).
//! - [`Word::parse`]: the word itself, for the nesting scan
//!   (`js::depth`), which gives each one its role by an exhaustive match.

/// What the language makes of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordClass {
    /// A reserved word with a meaning in the syntax (ECMAScript's
    /// `ReservedWord` less the literals and `enum`): never an identifier.
    Keyword,
    /// `null`, `true`, `false`: reserved words that are values.
    Literal,
    /// Reserved in strict-mode code (all module code) and a keyword there:
    /// `let`, `static`.
    Strict,
    /// Reserved but with no meaning in the syntax: `enum` always, the
    /// others in strict-mode code.
    FutureReserved,
    /// A keyword in some positions and an identifier elsewhere (`async`,
    /// `of`); a minifier may name a binding so. `get`, `set`, `as`, `from`
    /// are left out: in a bundle they are mostly property and binding names,
    /// and no user here needs them.
    Contextual,
}

macro_rules! words {
    ($($variant:ident = $word:literal, $class:ident;)*) => {
        /// One word of the table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Word {
            $($variant,)*
        }

        impl Word {
            /// Every word, in table order.
            pub const ALL: &[Word] = &[$(Word::$variant,)*];

            /// The word as written.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Word::$variant => {
                        const S: &str = match std::str::from_utf8($word) {
                            Ok(s) => s,
                            Err(_) => panic!("a word is ASCII"),
                        };
                        S
                    })*
                }
            }

            pub fn class(self) -> WordClass {
                match self {
                    $(Word::$variant => WordClass::$class,)*
                }
            }

            /// Byte-string patterns: matched by length and bytes at once.
            fn lookup(w: &[u8]) -> Option<Word> {
                match w {
                    $($word => Some(Word::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

words! {
    Await = b"await", Keyword;
    Break = b"break", Keyword;
    Case = b"case", Keyword;
    Catch = b"catch", Keyword;
    Class = b"class", Keyword;
    Const = b"const", Keyword;
    Continue = b"continue", Keyword;
    Debugger = b"debugger", Keyword;
    Default = b"default", Keyword;
    Delete = b"delete", Keyword;
    Do = b"do", Keyword;
    Else = b"else", Keyword;
    Export = b"export", Keyword;
    Extends = b"extends", Keyword;
    Finally = b"finally", Keyword;
    For = b"for", Keyword;
    Function = b"function", Keyword;
    If = b"if", Keyword;
    Import = b"import", Keyword;
    In = b"in", Keyword;
    Instanceof = b"instanceof", Keyword;
    New = b"new", Keyword;
    Return = b"return", Keyword;
    Super = b"super", Keyword;
    Switch = b"switch", Keyword;
    This = b"this", Keyword;
    Throw = b"throw", Keyword;
    Try = b"try", Keyword;
    Typeof = b"typeof", Keyword;
    Var = b"var", Keyword;
    Void = b"void", Keyword;
    While = b"while", Keyword;
    With = b"with", Keyword;
    Yield = b"yield", Keyword;
    Null = b"null", Literal;
    True = b"true", Literal;
    False = b"false", Literal;
    Let = b"let", Strict;
    Static = b"static", Strict;
    Enum = b"enum", FutureReserved;
    Implements = b"implements", FutureReserved;
    Interface = b"interface", FutureReserved;
    Package = b"package", FutureReserved;
    Private = b"private", FutureReserved;
    Protected = b"protected", FutureReserved;
    Public = b"public", FutureReserved;
    Async = b"async", Contextual;
    Of = b"of", Contextual;
}

impl Word {
    /// The word `w` is, if it is one of the table's. Cheap for the words
    /// that are not (most of them): those of the wrong length or not
    /// starting with a lowercase letter are rejected before any comparison.
    #[inline]
    pub fn parse(w: &[u8]) -> Option<Word> {
        if !(2..=10).contains(&w.len()) || !w[0].is_ascii_lowercase() {
            return None;
        }
        Word::lookup(w)
    }
}

/// Whether `w` can never name a binding in module code: a reserved word,
/// or one reserved in strict-mode code.
pub fn is_reserved(w: &str) -> bool {
    Word::parse(w.as_bytes()).is_some_and(|k| k.class() != WordClass::Contextual)
}

/// Whether `w` is coloured as a keyword: a word with a meaning in the
/// syntax of module (strict) code, or a value word. Not the future reserved
/// words (they mean nothing in JavaScript, and in a bundle appear only as
/// property names), nor `with` (a syntax error in strict code: in a bundle
/// it is only ever an English word, in a comment or text the colouring
/// reads as code); with them `undefined`, a global rather than a word of the
/// language, which is shown like `null`.
pub fn is_highlighted(w: &str) -> bool {
    w == "undefined"
        || Word::parse(w.as_bytes())
            .is_some_and(|k| k.class() != WordClass::FutureReserved && k != Word::With)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_parses_to_itself() {
        for &w in Word::ALL {
            assert_eq!(Word::parse(w.as_str().as_bytes()), Some(w), "{w:?}");
        }
        assert_eq!(Word::ALL.len(), 48);
        for w in ["", "x", "If", "ofs", "undefined", "instanceofs", "get"] {
            assert_eq!(Word::parse(w.as_bytes()), None, "{w}");
        }
    }

    #[test]
    fn subsets() {
        // ECMAScript's ReservedWord (38) and the strict-mode ones (8).
        let reserved: Vec<&str> = Word::ALL
            .iter()
            .map(|w| w.as_str())
            .filter(|w| is_reserved(w))
            .collect();
        assert_eq!(reserved.len(), 46);
        assert!(!is_reserved("of") && !is_reserved("async") && !is_reserved("undefined"));
        assert!(is_reserved("let") && is_reserved("enum") && is_reserved("static"));
        assert!(is_highlighted("of") && is_highlighted("undefined") && is_highlighted("super"));
        assert!(!is_highlighted("public") && !is_highlighted("enum") && !is_highlighted("get"));
        assert!(!is_highlighted("with") && is_reserved("with"));
    }
}
