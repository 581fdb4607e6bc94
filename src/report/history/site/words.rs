//! Word diffs of two texts, as the site shows them: hunks of changed words
//! with a little context, bounded in time and in size.

use crate::report::doc::{Inline, Status};

/// Words of context around each change.
const CONTEXT: usize = 10;
/// Hunks shown of one diff; the rest are counted.
const MAX_HUNKS: usize = 40;
/// Characters shown of one diff, about (a hunk is never cut in the middle).
const MAX_CHARS: usize = 12_000;
/// The most words two texts may have together to be aligned; longer pairs
/// are shown replaced whole (the diff says so). A size, not a time: the
/// same texts give the same page on any machine, under any load, so a
/// page is written again only when what it shows changed.
const MAX_WORDS: usize = 40_000;

/// A word diff: its hunks, how many hunks were left out, and whether the
/// alignment gave up (the texts are then shown as replaced).
#[derive(Debug, Clone, Default)]
pub struct WordDiff {
    pub hunks: Vec<Inline>,
    pub more: usize,
    pub coarse: bool,
    pub removed: usize,
    pub added: usize,
}

/// The text cut into words, each with the white space after it (so the
/// words joined again are the text).
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in s.char_indices() {
        let space = c.is_whitespace();
        if in_space && !space {
            out.push(&s[start..i]);
            start = i;
        }
        in_space = space;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// White space shown as one space (a hunk is a paragraph).
fn flat(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}

/// The word diff of `a` → `b`.
pub fn word_diff(a: &str, b: &str) -> WordDiff {
    use similar::{Algorithm, DiffOp, capture_diff_slices};
    let (ta, tb) = (tokens(a), tokens(b));
    let ops = if ta.len() + tb.len() <= MAX_WORDS {
        capture_diff_slices(Algorithm::Myers, &ta, &tb)
    } else {
        vec![DiffOp::Replace {
            old_index: 0,
            old_len: ta.len(),
            new_index: 0,
            new_len: tb.len(),
        }]
    };
    // Pieces: (status, text); Equal runs are cut to the context around
    // the changes, a long one splitting hunks.
    let mut hunks: Vec<Vec<(Option<Status>, String)>> = Vec::new();
    let mut cur: Vec<(Option<Status>, String)> = Vec::new();
    let mut d = WordDiff::default();
    let n = ops.len();
    for (k, op) in ops.iter().enumerate() {
        match *op {
            DiffOp::Equal { old_index, len, .. } => {
                let words = &ta[old_index..old_index + len];
                let first = k == 0;
                let last = k + 1 == n;
                if !first && !last && len <= 2 * CONTEXT {
                    cur.push((None, words.concat()));
                    continue;
                }
                if !first {
                    let keep = len.min(CONTEXT);
                    cur.push((None, words[..keep].concat()));
                    if len > keep {
                        cur.push((None, "…".into()));
                    }
                    hunks.push(std::mem::take(&mut cur));
                }
                if !last {
                    let keep = len.min(CONTEXT);
                    if len > keep {
                        cur.push((None, "…".into()));
                    }
                    cur.push((None, words[len - keep..].concat()));
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                d.removed += old_len;
                cur.push((
                    Some(Status::Removed),
                    ta[old_index..old_index + old_len].concat(),
                ));
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                d.added += new_len;
                cur.push((
                    Some(Status::Added),
                    tb[new_index..new_index + new_len].concat(),
                ));
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                d.removed += old_len;
                d.added += new_len;
                cur.push((
                    Some(Status::Removed),
                    ta[old_index..old_index + old_len].concat(),
                ));
                cur.push((
                    Some(Status::Added),
                    tb[new_index..new_index + new_len].concat(),
                ));
            }
        }
    }
    if cur.iter().any(|(s, _)| s.is_some()) {
        hunks.push(cur);
    }
    // A pair too long to align shows everything replaced: one hunk of
    // all of `a` removed and all of `b` added.
    d.coarse = hunks.len() == 1 && d.removed == ta.len() && d.added == tb.len() && !ta.is_empty();
    let mut chars = 0;
    for h in hunks {
        let size: usize = h.iter().map(|(_, t)| t.len()).sum();
        if d.hunks.len() >= MAX_HUNKS || (chars > 0 && chars + size > MAX_CHARS) {
            d.more += 1;
            continue;
        }
        chars += size;
        let mut line = Inline::new();
        for (st, t) in h {
            let mut t = flat(&t);
            if t.len() > MAX_CHARS {
                let mut end = MAX_CHARS;
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                t.truncate(end);
                t.push('…');
            }
            line = match st {
                Some(s) => line.s(s, t),
                None => line.t(t),
            };
        }
        d.hunks.push(line);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Span;

    #[test]
    fn a_word_diff_marks_the_changed_words_with_context() {
        let a = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty alpha";
        let b = a.replace("three", "THREE").replace("alpha", "beta gamma");
        let d = word_diff(a, &b);
        assert_eq!((d.removed, d.added), (2, 3));
        assert_eq!(d.hunks.len(), 1, "{:?}", d.hunks);
        let first = &d.hunks[0].0;
        assert!(first.contains(&Span::Status(Status::Removed, "three ".into())));
        assert!(first.contains(&Span::Status(Status::Added, "THREE ".into())));
        assert!(d.hunks[0].plain().starts_with("one two "));
        assert!(!d.coarse);
        assert_eq!(tokens("a  b\nc").concat(), "a  b\nc");
        assert!(word_diff("same text", "same text").hunks.is_empty());
    }
}
