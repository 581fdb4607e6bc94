//! Escaping untrusted text for a terminal.
//!
//! Module names, paths, flag names, literals and symbols all come from the
//! build under study, which may be hostile: a module named
//! `\x1b]0;TITLE\x07\x1b[2Jevil.js` would set the terminal's title and clear
//! its screen if printed raw, and a right-to-left override (U+202E) makes a
//! name read differently from what it is. Every human rendering passes such
//! text through [`display`] (one value) or [`text`] (a whole document whose
//! line breaks are ours); JSON is written through [`SafeJson`].

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

/// `s` with the characters `escape` picks escaped. `escape` picks among
/// the unsafe characters only ([`is_unsafe`]), so only those are looked
/// at: a value of plain ASCII is passed over in windows, not decoded
/// character by character (a table of ten thousand rows escapes every
/// cell).
fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    let mut hits = unsafe_chars(s).filter(|&(_, c)| escape(c)).peekable();
    if hits.peek().is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut from = 0;
    for (i, c) in hits {
        out.push_str(&s[from..i]);
        push_escaped(&mut out, c);
        from = i + c.len_utf8();
    }
    out.push_str(&s[from..]);
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
    unsafe_chars(s).any(|(_, c)| c != '\n' && c != '\t')
}

/// Pretty JSON whose strings are safe to print: serde_json escapes C0
/// controls, but writes DEL, C1 controls and bidirectional controls raw.
/// This formatter writes those as `\uXXXX` inside strings, where it means
/// the same character: the data is unchanged. Strings are escaped as they
/// are written, so a twelve-megabyte answer is never built to be scanned
/// again.
pub struct SafeJson {
    /// How deep the value being written is: each level indents two spaces.
    depth: usize,
    /// Whether the container being written has a value yet (so whether its
    /// end goes on a line of its own), as serde_json's pretty printer keeps.
    has_value: bool,
}

impl Default for SafeJson {
    fn default() -> Self {
        SafeJson::at_depth(0)
    }
}

impl SafeJson {
    /// A formatter for a value that stands `depth` levels deep in a larger
    /// document: its own lines are indented as they would be there, so
    /// pieces written apart (on several cores) join into the document the
    /// whole would have been.
    pub fn at_depth(depth: usize) -> SafeJson {
        SafeJson {
            depth,
            has_value: false,
        }
    }
}

/// A line break and the indentation of the levels below, in one write
/// (serde_json's pretty printer writes each level apart).
pub fn new_line<W: ?Sized + std::io::Write>(w: &mut W, depth: usize) -> std::io::Result<()> {
    const LINE: &[u8] = b"\n                                                                ";
    let mut spaces = 2 * depth;
    let first = spaces.min(LINE.len() - 1);
    w.write_all(&LINE[..1 + first])?;
    spaces -= first;
    while spaces > 0 {
        let n = spaces.min(LINE.len() - 1);
        w.write_all(&LINE[1..1 + n])?;
        spaces -= n;
    }
    Ok(())
}

// The layout is serde_json's pretty printer's (two spaces a level, `": "`
// after a key, a container's end on a line of its own unless empty).
impl serde_json::ser::Formatter for SafeJson {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut from = 0;
        for (i, c) in unsafe_chars(fragment) {
            w.write_all(&fragment.as_bytes()[from..i])?;
            write!(w, "\\u{:04x}", c as u32)?;
            from = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[from..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            new_line(w, self.depth)?;
        }
        w.write_all(b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        new_line(w, self.depth)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            new_line(w, self.depth)?;
        }
        w.write_all(b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        new_line(w, self.depth)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// The unsafe characters of `s` with their byte offsets, found in one pass
/// over the bytes: only these can begin one in UTF-8 — a C0 control, DEL,
/// and the lead bytes of U+0080–U+009F (0xC2), U+061C (0xD8) and
/// U+2000–U+2FFF (0xE2). None of them is a continuation byte, so a
/// candidate always begins a character.
fn unsafe_chars(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let candidate = |b: u8| matches!(b, 0..=0x1f | 0x7f | 0xc2 | 0xd8 | 0xe2);
    // Windows of plain ASCII are passed over whole, with a test folded
    // without an early exit so that it vectorises; only the others are
    // read byte by byte.
    let plain = |b: u8| (0x20..0x7f).contains(&b);
    const WINDOW: usize = 32;
    let bytes = s.as_bytes();
    let (mut i, mut end) = (0, 0);
    std::iter::from_fn(move || {
        loop {
            if i >= bytes.len() {
                return None;
            }
            if i >= end {
                end = (i + WINDOW).min(bytes.len());
                if bytes[i..end].iter().fold(true, |all, &b| all & plain(b)) {
                    i = end;
                    continue;
                }
            }
            if !candidate(bytes[i]) {
                i += 1;
                continue;
            }
            let Some(c) = s.get(i..).and_then(|t| t.chars().next()) else {
                i += 1;
                continue;
            };
            let at = i;
            i += c.len_utf8();
            if is_unsafe(c) {
                return Some((at, c));
            }
        }
    })
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

    fn safe_json(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, SafeJson::default());
        serde::Serialize::serialize(v, &mut ser).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_stays_the_same_data() {
        let v = serde_json::json!({"name": "a\u{202e}b\u{9b}c\x7fd\x1be\n", "k\u{2066}": [1, {}]});
        let s = safe_json(&v);
        assert!(!s.chars().any(|c| is_unsafe(c) && c != '\n'), "{s:?}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        // The pretty printer's layout.
        assert_eq!(
            s,
            serde_json::to_string_pretty(&v)
                .unwrap()
                .replace('\u{202e}', "\\u202e")
                .replace('\u{9b}', "\\u009b")
                .replace('\x7f', "\\u007f")
                .replace('\u{2066}', "\\u2066")
        );
    }

    /// The byte scan finds exactly the characters a scan of every
    /// character would: all of U+0000–U+3000 (C1 controls, U+061C and the
    /// marks, separators and isolates of U+2000–U+2FFF among their
    /// neighbours, which share lead bytes) and a few beyond, at every
    /// offset from a window's edge.
    #[test]
    fn the_byte_scan_finds_exactly_the_unsafe_characters() {
        let all: String = (0..=0x3000u32)
            .chain([0xfeff, 0x1f600, 0x10ffff])
            .filter_map(char::from_u32)
            .collect();
        for pad in 0..40 {
            let s = format!("{}{all}", "x".repeat(pad));
            let expected: Vec<(usize, char)> =
                s.char_indices().filter(|&(_, c)| is_unsafe(c)).collect();
            assert_eq!(unsafe_chars(&s).collect::<Vec<_>>(), expected, "pad {pad}");
        }
        assert_eq!(unsafe_chars("plain — π, “quoted”").count(), 0);
    }

    /// `display` and `text` escape through the byte scan exactly what a
    /// character-by-character pass would.
    #[test]
    fn escaping_by_the_byte_scan_equals_a_pass_over_every_character() {
        let by_char = |s: &str, escape: &dyn Fn(char) -> bool| {
            let mut out = String::new();
            for c in s.chars() {
                if escape(c) {
                    push_escaped(&mut out, c);
                } else {
                    out.push(c);
                }
            }
            out
        };
        let all: String = (0..=0x3000u32).filter_map(char::from_u32).collect();
        for s in [
            all.as_str(),
            "plain ascii",
            "",
            "tab\there\nand\u{202e}evil\u{7f}.js",
        ] {
            assert_eq!(display(s), by_char(s, &is_unsafe));
            let layout = |c: char| c != '\n' && c != '\t' && is_unsafe(c);
            assert_eq!(text(s), by_char(s, &layout));
            assert_eq!(needs_escape(s), s.chars().any(layout));
            assert_eq!(
                matches!(display(s), Cow::Borrowed(_)),
                !s.chars().any(is_unsafe)
            );
        }
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
