//! Escaping untrusted text for a terminal.
//!
//! Module names, paths, flag names, literals and symbols all come from the
//! build under study, which may be hostile: a module named
//! `\x1b]0;TITLE\x07\x1b[2Jevil.js` would set the terminal's title and clear
//! its screen if printed raw, and a right-to-left override (U+202E) makes a
//! name read differently from what it is. Every human rendering passes such
//! text through [`display`] (one value) or [`text`] (a whole document whose
//! line breaks are ours); JSON goes through [`json_safe`].

use std::borrow::Cow;
use std::fmt::Write;

/// Characters a terminal or a text renderer would act on rather than show:
/// C0 controls, DEL, C1 controls (U+0080–U+009F, of which U+009B is CSI on
/// 8-bit terminals), the bidirectional embeddings, overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069), the invisible direction marks
/// (U+200E, U+200F, U+061C) and the Unicode line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{061c}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if escape(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One untrusted value (a name, a path, a message) for human output: every
/// unsafe character, line breaks and tabs included, becomes a visible escape
/// (`\x1b`, `\n`, `\u{202e}`), so the value stays on its line and in its
/// column. Backslashes are left alone: paths on Windows stay readable, at
/// the price that a literal `\x1b` and an escaped ESC look alike.
pub fn display(s: &str) -> Cow<'_, str> {
    escape_where(s, is_unsafe)
}

/// A whole rendered document or line (a report, a diff, code) whose line
/// breaks and tabs are layout: those stay, every other unsafe character is
/// escaped as in [`display`].
pub fn text(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c != '\n' && c != '\t' && is_unsafe(c))
}

/// Whether [`text`] would change `s`.
pub fn needs_escape(s: &str) -> bool {
    s.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c))
}

/// Serialised JSON made safe to print: serde_json already escapes C0
/// controls, but writes DEL, C1 controls and bidirectional controls raw.
/// Outside strings JSON text is ASCII, so any such character is inside a
/// string, where `\uXXXX` means the same character: the data is unchanged.
pub fn json_safe(json: String) -> String {
    // Most output is ASCII without controls but the layout's line breaks:
    // one pass over the bytes says so (history searches print megabytes).
    if !json.bytes().any(|b| b >= 0x7f || (b < 0x20 && b != b'\n')) {
        return json;
    }
    let unsafe_char = |c: char| c != '\n' && is_unsafe(c);
    if !json.chars().any(unsafe_char) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    let mut from = 0;
    for (i, c) in json.char_indices() {
        // serde_json escapes line breaks inside strings, so a raw one is
        // the pretty printer's layout.
        if unsafe_char(c) {
            out.push_str(&json[from..i]);
            let _ = write!(out, "\\u{:04x}", c as u32);
            from = i + c.len_utf8();
        }
    }
    out.push_str(&json[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_become_visible() {
        assert_eq!(
            display("\x1b]0;TITLE\x07\x1b[2Jevil.js"),
            "\\x1b]0;TITLE\\x07\\x1b[2Jevil.js"
        );
        assert_eq!(display("a\u{202e}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        assert_eq!(display("del\x7f c1\u{9b}"), "del\\x7f c1\\u{9b}");
        assert_eq!(display("two\nlines\r\ttab"), "two\\nlines\\r\\ttab");
        assert!(matches!(display("plain/π.js"), Cow::Borrowed(_)));
        assert_eq!(display("C:\\Users\\x"), "C:\\Users\\x");
    }

    #[test]
    fn text_keeps_layout() {
        assert_eq!(text("a\n\tb\x1b[2J\r\n"), "a\n\tb\\x1b[2J\\r\n");
        assert!(needs_escape("x\u{9b}"));
        assert!(!needs_escape("x\n\ty"));
    }

    #[test]
    fn json_stays_the_same_data() {
        let v = serde_json::json!({"name": "a\u{202e}b\u{9b}c\x7fd\x1be\n"});
        let s = json_safe(serde_json::to_string_pretty(&v).unwrap());
        assert!(!s.chars().any(|c| is_unsafe(c) && c != '\n'), "{s:?}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}

/// A writer that escapes, as [`text`] does, whatever passes through it:
/// for human output streamed line by line (a simulated trace can be as large
/// as its memory cap, so it is never built whole to be escaped).
pub struct Escaping<W: std::io::Write> {
    inner: W,
}

impl<W: std::io::Write> Escaping<W> {
    pub fn new(inner: W) -> Escaping<W> {
        Escaping { inner }
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: std::io::Write> std::io::Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Bytes that are not UTF-8 are shown lossily; unsafe characters are
        // never split across writes, since `write!` hands over whole
        // formatted pieces and every escape is decided per character.
        let s = String::from_utf8_lossy(buf);
        self.inner.write_all(text(&s).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod escaping_writer_tests {
    use std::io::Write;

    #[test]
    fn escapes_what_passes_through() {
        let mut w = super::Escaping::new(Vec::new());
        writeln!(w, "label \x1b]0;x\x07 ok").unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.ends_with(" ok\n"), "{out:?}");
    }
}
