//! Line diffs that ignore renames: code lines are compared with their
//! renamable identifiers erased, and the hunks show the real lines of both
//! sides.
//!
//! Why not check that the renaming is consistent (a bijection)? The
//! minifier names locals by scope slot, and two builds of the same function
//! need not number the slots alike (code folded away elsewhere shifts
//! them), so one old name legitimately maps to several new ones. A change
//! that only swaps which variable is used still shows in the function's
//! `exact` hash, and is counted as "renamed only".

use serde::Serialize;
use similar::{Algorithm, DiffTag};

const KEYWORDS: &[&str] = &[
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "let",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// A text with its renamable identifiers replaced by `_`, and those
/// identifiers in order. Kept: keywords, global built-ins, property names
/// (after `.`, not after a spread's `...`), object keys, string contents;
/// a template's `${…}` parts are code and are erased too.
pub fn erase_names(line: &str) -> (String, Vec<&str>) {
    let mut out = String::with_capacity(line.len());
    let mut names = Vec::new();
    erase_into(line, &mut out, &mut names);
    (out, names)
}

fn erase_into<'a>(line: &'a str, out: &mut String, names: &mut Vec<&'a str>) {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'`' {
            // A template: text verbatim, `${…}` parts as code.
            out.push('`');
            i += 1;
            while i < b.len() && b[i] != b'`' {
                if b[i] == b'\\' {
                    let end = (i + 2).min(b.len());
                    out.push_str(&line[i..end]);
                    i = end;
                } else if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
                    let start = i + 2;
                    let mut depth = 1;
                    let mut j = start;
                    while j < b.len() {
                        match b[j] {
                            b'{' => depth += 1,
                            b'}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    out.push_str("${");
                    erase_into(&line[start..j], out, names);
                    if j < b.len() {
                        out.push('}');
                    }
                    i = (j + 1).min(b.len());
                } else {
                    let ch = line[i..].chars().next().map_or(1, char::len_utf8);
                    out.push_str(&line[i..i + ch]);
                    i += ch;
                }
            }
            if i < b.len() {
                out.push('`');
                i += 1;
            }
        } else if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push_str(&line[start..i]);
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            let word = &line[start..i];
            let before = out.trim_end();
            let prev = before.chars().last();
            let property = prev == Some('.') && !before.ends_with("...");
            let next = line[i..].trim_start().chars().next();
            let key = next == Some(':') && matches!(prev, None | Some('{') | Some(','));
            if KEYWORDS.contains(&word)
                || crate::js::shape::BUILTINS.contains(&word)
                || property
                || key
            {
                out.push_str(word);
            } else {
                out.push('_');
                names.push(word);
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            out.push_str(&line[start..i]);
        } else {
            let ch = line[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&line[i..i + ch]);
            i += ch;
        }
    }
}

/// The text with the first line's indentation taken off every line that
/// has it (so a function reads the same at any nesting depth).
pub fn dedent(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let indent = &first[..first.len() - first.trim_start().len()];
    if indent.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        out.push_str(l.strip_prefix(indent).unwrap_or(l));
    }
    out
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct LineDiff {
    pub added: usize,
    pub removed: usize,
    /// Unified diff (empty when equal).
    pub unified: String,
}

impl LineDiff {
    pub fn size(&self) -> usize {
        self.added + self.removed
    }
}

/// How two texts are compared.
#[derive(Debug, Clone, Copy)]
pub enum Compare {
    /// Byte for byte (scripts, prompts).
    Exact,
    /// Identifiers erased, with consistent renames ignored (code).
    IgnoringRenames,
}

/// A unified diff of `a` and `b`; `start_a`/`start_b` number the first lines.
pub fn diff(a: &str, b: &str, how: Compare, start_a: usize, start_b: usize) -> LineDiff {
    let la: Vec<&str> = a.lines().collect();
    let lb: Vec<&str> = b.lines().collect();
    let (ka, kb): (Vec<String>, Vec<String>) = match how {
        Compare::Exact => (
            la.iter().map(|s| s.to_string()).collect(),
            lb.iter().map(|s| s.to_string()).collect(),
        ),
        Compare::IgnoringRenames => {
            // Erased as a whole, so templates spanning lines stay templates;
            // erasure keeps every newline, so the lines still correspond.
            // Indentation is not compared: a CommonJS wrapper indents a whole
            // bundle one level deeper than an ESM chunk.
            let lines = |t: &str| -> Vec<String> {
                erase_names(t)
                    .0
                    .lines()
                    .map(|l| l.trim().to_string())
                    .collect()
            };
            (lines(a), lines(b))
        }
    };
    let ops = similar::capture_diff_slices(Algorithm::Myers, &ka, &kb);
    let mut out = LineDiff::default();
    for op in &ops {
        match op.tag() {
            DiffTag::Equal => {}
            DiffTag::Delete => out.removed += op.old_range().len(),
            DiffTag::Insert => out.added += op.new_range().len(),
            DiffTag::Replace => {
                out.removed += op.old_range().len();
                out.added += op.new_range().len();
            }
        }
    }
    if out.size() == 0 {
        return out;
    }
    use std::fmt::Write;
    for group in similar::group_diff_ops(ops, 3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let ra = first.old_range().start..last.old_range().end;
        let rb = first.new_range().start..last.new_range().end;
        let _ = writeln!(
            out.unified,
            "@@ -{},{} +{},{} @@",
            ra.start + start_a,
            ra.len(),
            rb.start + start_b,
            rb.len()
        );
        for op in &group {
            match op.tag() {
                DiffTag::Equal => {
                    for j in op.new_range() {
                        let _ = writeln!(out.unified, " {}", lb[j]);
                    }
                }
                _ => {
                    for i in op.old_range() {
                        let _ = writeln!(out.unified, "-{}", la[i]);
                    }
                    for j in op.new_range() {
                        let _ = writeln!(out.unified, "+{}", lb[j]);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erasure_keeps_properties_keys_keywords_and_strings() {
        let (e, names) = erase_names(r#"  return Ab.foo(cD, { key: x1 }, "a b", JSON) + 1e3;"#);
        assert_eq!(e, r#"  return _.foo(_, { key: _ }, "a b", JSON) + 1e3;"#);
        assert_eq!(names, vec!["Ab", "cD", "x1"]);
        let (e, _) = erase_names(r#"f(...an.x, `t ${yn(d).m} ${{a:1}.a}`, get)"#);
        assert_eq!(e, r#"_(..._.x, `t ${_(_).m} ${{a:1}.a}`, _)"#);
    }

    #[test]
    fn consistent_renames_are_not_changes() {
        let a = "function ab(c) {\n  let d = c.x;\n  return d + 1;\n}";
        let b = "function Qr(e) {\n  let f = e.x;\n  return f + 1;\n}";
        let d = diff(a, b, Compare::IgnoringRenames, 1, 1);
        assert_eq!(d.size(), 0, "{}", d.unified);
        assert_eq!(diff(a, b, Compare::Exact, 1, 1).size(), 6);
    }

    #[test]
    fn renamed_lines_are_context_and_real_changes_show_with_real_names() {
        let a = "function ab(c) {\n  let d = c.x;\n  return d + 1;\n}";
        let b = "function Qr(e) {\n  let f = e.y;\n  return f + 1;\n}";
        let d = diff(a, b, Compare::IgnoringRenames, 5, 7);
        assert_eq!((d.removed, d.added), (1, 1), "{}", d.unified);
        assert_eq!(
            d.unified,
            "@@ -5,4 +7,4 @@\n function Qr(e) {\n-  let d = c.x;\n+  let f = e.y;\n   return f + 1;\n }\n"
        );
    }

    #[test]
    fn templates_spanning_lines_stay_templates() {
        let a = "f(`one\ntwo ${x} done`, Ps(0));";
        let b = "f(`one\ntwo ${y} done`, Ds(0));";
        assert_eq!(diff(a, b, Compare::IgnoringRenames, 1, 1).size(), 0);
        let c = "f(`one\nthree ${y} done`, Ds(0));";
        assert_eq!(diff(a, c, Compare::IgnoringRenames, 1, 1).size(), 2);
    }

    #[test]
    fn indentation_is_not_a_change() {
        let a = "    function ab(c) {\n        return c;\n    }\n";
        let b = "function Qr(e) {\n  return e;\n}\n";
        assert_eq!(diff(a, b, Compare::IgnoringRenames, 1, 1).size(), 0);
        assert_eq!(dedent(a), "function ab(c) {\n    return c;\n}\n");
    }

    #[test]
    fn real_changes_show_both_sides() {
        let d = diff("a\nb\nc\n", "a\nB\nc\nd\n", Compare::Exact, 10, 20);
        assert_eq!((d.removed, d.added), (1, 2));
        assert_eq!(d.unified, "@@ -10,3 +20,4 @@\n a\n-b\n+B\n c\n+d\n");
    }
}
