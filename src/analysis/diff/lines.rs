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
use similar::{Algorithm, DiffOp, DiffTag};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A text with its renamable identifiers replaced by `_`, and those
/// identifiers in order. Kept: reserved words (`js::keywords::is_reserved`:
/// never a binding's name, so never renamed), global built-ins, property names
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
            if crate::js::keywords::is_reserved(word)
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
    /// Why the diff is coarser than a line-by-line alignment, when it is:
    /// the differing middle is then shown replaced whole, and `added` and
    /// `removed` count all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coarse: Option<String>,
    /// Where the change lies in `a`, lines counted from 0: the lines
    /// removed or replaced, and as an empty range `i..i` the place lines
    /// were added at, before line `i` (not serialised: the hunks say it).
    #[serde(skip)]
    pub changed_a: Vec<std::ops::Range<usize>>,
    /// The same in `b`: the lines added or replaced, and where lines were
    /// removed.
    #[serde(skip)]
    pub changed_b: Vec<std::ops::Range<usize>>,
}

impl LineDiff {
    pub fn size(&self) -> usize {
        self.added + self.removed
    }
}

/// How long line alignments may take: each pair, and all the pairs of one
/// command together (a diff compares thousands of functions and texts).
///
/// Myers' alignment costs about (N + M) × D for D differing lines: two
/// 1 MB literals of 15,000 sentences sharing none took 38 s (146–170 s in
/// the issue's sample). A pair past its time, or started after the
/// command's time is spent, is shown replaced whole instead, and says so.
/// Real builds meet neither: no pair of 2.1.220 → 2.1.260 is coarse, and
/// that diff's JSON is the same as without the bounds.
#[derive(Debug)]
pub struct DiffBudget {
    end: Instant,
    per_pair: Duration,
    total: Duration,
}

/// The command's time for aligning texts is spent: no pair may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the {} s allowed for aligning all texts of this diff were spent", .total.as_secs_f64())]
pub struct TimeSpent {
    total: Duration,
}

/// What one pair may take.
pub const PAIR_TIME: Duration = Duration::from_secs(2);
/// What all the pairs of one command may take.
pub const TOTAL_TIME: Duration = Duration::from_secs(5);
/// Alignment steps (diagonals explored) a pair is allowed before it is
/// tried: Myers explores at least D²/4 of them for D differing lines, so a
/// pair whose differing lines alone exceed this is shown coarse at once,
/// without waiting for the deadline. (Measured: 8,000 + 8,000 lines sharing
/// none, 6.4 × 10⁷ diagonals, took over 2 s; this cap is D = 10,000.)
const MAX_STEPS: u64 = 25_000_000;

impl Default for DiffBudget {
    fn default() -> DiffBudget {
        DiffBudget::new(PAIR_TIME, TOTAL_TIME)
    }
}

/// Inputs up to this size get [`PAIR_TIME`] and [`TOTAL_TIME`]; larger
/// ones proportionally more (see [`DiffBudget::for_inputs`]).
const BUDGET_UNIT_BYTES: u64 = 8 << 20;

impl DiffBudget {
    /// The budget of a comparison whose larger input is `bytes`: the
    /// default times up to 8 MiB, and as many times that as that input is
    /// 8 MiB. A hostile input small enough to be sent anywhere is answered
    /// within seconds, while real builds (60–200 MB each) get a budget
    /// their honest alignments never reach, even on a loaded machine: a
    /// deadline that real pairs can hit makes the same diff answer
    /// differently from one run to the next (2.1.260 → 2.1.332 in a
    /// parallel test run spent its 5 s and came out coarse).
    pub fn for_inputs(bytes: u64) -> DiffBudget {
        let factor = u32::try_from((bytes / BUDGET_UNIT_BYTES).clamp(1, 1000)).unwrap_or(1000);
        DiffBudget::new(
            PAIR_TIME.saturating_mul(factor),
            TOTAL_TIME.saturating_mul(factor),
        )
    }

    /// A budget that starts now.
    pub fn new(per_pair: Duration, total: Duration) -> DiffBudget {
        DiffBudget {
            end: Instant::now() + total,
            per_pair,
            total,
        }
    }

    /// The deadline of a pair started now that may take `limit`, or why
    /// it may not start.
    pub fn deadline_within(&self, limit: Duration) -> Result<Instant, TimeSpent> {
        let now = Instant::now();
        if now >= self.end {
            return Err(self.spent());
        }
        Ok((now + limit).min(self.end))
    }

    /// Why a pair given `deadline` for at most `limit` is coarse, once the
    /// deadline has passed.
    pub fn why_late(&self, deadline: Instant, limit: Duration) -> String {
        if deadline < self.end {
            format!("not aligned within {} s", limit.as_secs_f64())
        } else {
            self.spent().to_string()
        }
    }

    fn spent(&self) -> TimeSpent {
        TimeSpent { total: self.total }
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

/// A unified diff of `a` and `b`; `start_a`/`start_b` number the first
/// lines. Within `budget`: past it, the differing middle is replaced whole
/// and [`LineDiff::coarse`] says why.
pub fn diff(
    a: &str,
    b: &str,
    how: Compare,
    start_a: usize,
    start_b: usize,
    budget: &DiffBudget,
) -> LineDiff {
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
    let (ia, ib) = intern(&ka, &kb);
    let (ops, coarse) = align(&ia, &ib, budget);
    let mut out = LineDiff {
        coarse,
        ..LineDiff::default()
    };
    for op in &ops {
        match op.tag() {
            DiffTag::Equal => {}
            DiffTag::Delete => {
                out.removed += op.old_range().len();
                out.changed_a.push(op.old_range());
                let at = op.new_range().start;
                out.changed_b.push(at..at);
            }
            DiffTag::Insert => {
                out.added += op.new_range().len();
                out.changed_b.push(op.new_range());
                let at = op.old_range().start;
                out.changed_a.push(at..at);
            }
            DiffTag::Replace => {
                out.removed += op.old_range().len();
                out.added += op.new_range().len();
                out.changed_a.push(op.old_range());
                out.changed_b.push(op.new_range());
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

/// Each distinct line as a number, so the alignment compares integers
/// (the same equalities, so the same alignment, without comparing long
/// lines over and over).
fn intern<'t>(a: &'t [String], b: &'t [String]) -> (Vec<u32>, Vec<u32>) {
    let mut ids: HashMap<&'t str, u32> = HashMap::with_capacity(a.len() + b.len());
    let mut id = |s: &'t String| -> u32 {
        let next = ids.len() as u32;
        *ids.entry(s.as_str()).or_insert(next)
    };
    let ia = a.iter().map(&mut id).collect();
    let ib = b.iter().map(&mut id).collect();
    (ia, ib)
}

/// The edit operations from `a` to `b`, and why they are coarse when they
/// are. Myers' alignment within the budget; past it (or when its cost is
/// clearly past it), the common prefix and suffix kept and the middle
/// replaced whole.
fn align(a: &[u32], b: &[u32], budget: &DiffBudget) -> (Vec<DiffOp>, Option<String>) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    // At least this many lines differ: those of one side that the other
    // cannot match, whatever the order.
    let mut counts: HashMap<u32, (u32, u32)> = HashMap::new();
    for x in ma {
        counts.entry(*x).or_default().0 += 1;
    }
    for y in mb {
        counts.entry(*y).or_default().1 += 1;
    }
    let common: u64 = counts.values().map(|(x, y)| u64::from(*x.min(y))).sum();
    let differing = (ma.len() + mb.len()) as u64 - 2 * common;
    let replaced = |why: Option<String>| (replaced_whole(a.len(), b.len(), prefix, suffix), why);
    if differing.saturating_mul(differing) / 4 > MAX_STEPS {
        if common == 0 {
            // Nothing to align: replacing the middle whole is exact.
            return replaced(None);
        }
        return replaced(Some(format!(
            "{} and {} lines with at least {differing} differing: too costly to align line by line",
            ma.len(),
            mb.len()
        )));
    }
    let deadline = match budget.deadline_within(budget.per_pair) {
        Ok(d) => d,
        Err(why) => return replaced(Some(why.to_string())),
    };
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, a, b, Some(deadline));
    if Instant::now() >= deadline {
        // Myers gave up somewhere and answered with a cruder alignment
        // that depends on where: replaced whole instead, the same on any
        // machine.
        return replaced(Some(budget.why_late(deadline, budget.per_pair)));
    }
    (ops, None)
}

/// `n` and `m` lines with `prefix` and `suffix` in common, the rest
/// replaced.
fn replaced_whole(n: usize, m: usize, prefix: usize, suffix: usize) -> Vec<DiffOp> {
    let mut ops = Vec::new();
    if prefix > 0 {
        ops.push(DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: prefix,
        });
    }
    let (old_len, new_len) = (n - prefix - suffix, m - prefix - suffix);
    match (old_len, new_len) {
        (0, 0) => {}
        (0, _) => ops.push(DiffOp::Insert {
            old_index: prefix,
            new_index: prefix,
            new_len,
        }),
        (_, 0) => ops.push(DiffOp::Delete {
            old_index: prefix,
            old_len,
            new_index: prefix,
        }),
        _ => ops.push(DiffOp::Replace {
            old_index: prefix,
            old_len,
            new_index: prefix,
            new_len,
        }),
    }
    if suffix > 0 {
        ops.push(DiffOp::Equal {
            old_index: n - suffix,
            new_index: m - suffix,
            len: suffix,
        });
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_grows_with_the_inputs_past_8_mib() {
        let small = DiffBudget::for_inputs(3 << 20);
        assert_eq!((small.per_pair, small.total), (PAIR_TIME, TOTAL_TIME));
        let at_unit = DiffBudget::for_inputs(8 << 20);
        assert_eq!((at_unit.per_pair, at_unit.total), (PAIR_TIME, TOTAL_TIME));
        // A real build of 73 MB: nine times the default.
        let real = DiffBudget::for_inputs(73 << 20);
        assert_eq!(real.per_pair, PAIR_TIME * 9);
        assert_eq!(real.total, TOTAL_TIME * 9);
        // Capped, so the deadline is always a time that exists.
        let huge = DiffBudget::for_inputs(u64::MAX);
        assert_eq!(huge.total, TOTAL_TIME * 1000);
    }

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
        let d = diff(a, b, Compare::IgnoringRenames, 1, 1, &DiffBudget::default());
        assert_eq!(d.size(), 0, "{}", d.unified);
        assert_eq!(
            diff(a, b, Compare::Exact, 1, 1, &DiffBudget::default()).size(),
            6
        );
    }

    #[test]
    fn renamed_lines_are_context_and_real_changes_show_with_real_names() {
        let a = "function ab(c) {\n  let d = c.x;\n  return d + 1;\n}";
        let b = "function Qr(e) {\n  let f = e.y;\n  return f + 1;\n}";
        let d = diff(a, b, Compare::IgnoringRenames, 5, 7, &DiffBudget::default());
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
        assert_eq!(
            diff(a, b, Compare::IgnoringRenames, 1, 1, &DiffBudget::default()).size(),
            0
        );
        let c = "f(`one\nthree ${y} done`, Ds(0));";
        assert_eq!(
            diff(a, c, Compare::IgnoringRenames, 1, 1, &DiffBudget::default()).size(),
            2
        );
    }

    #[test]
    fn indentation_is_not_a_change() {
        let a = "    function ab(c) {\n        return c;\n    }\n";
        let b = "function Qr(e) {\n  return e;\n}\n";
        assert_eq!(
            diff(a, b, Compare::IgnoringRenames, 1, 1, &DiffBudget::default()).size(),
            0
        );
        assert_eq!(dedent(a), "function ab(c) {\n    return c;\n}\n");
    }

    #[test]
    fn real_changes_show_both_sides() {
        let d = diff(
            "a\nb\nc\n",
            "a\nB\nc\nd\n",
            Compare::Exact,
            10,
            20,
            &DiffBudget::default(),
        );
        assert_eq!((d.removed, d.added), (1, 2));
        assert_eq!(d.unified, "@@ -10,3 +20,4 @@\n a\n-b\n+B\n c\n+d\n");
    }

    /// Numbered lines `from..to`, each `prefix` then its number.
    fn numbered(prefix: &str, range: std::ops::Range<usize>) -> String {
        range.map(|i| format!("{prefix}{i}\n")).collect()
    }

    #[test]
    fn large_pairs_sharing_no_line_are_replaced_exactly_at_once() {
        // 80,000 differing lines: Myers would explore over 10^9 diagonals.
        let a = format!("same\n{}end\n", numbered("a", 0..40_000));
        let b = format!("same\n{}end\n", numbered("b", 0..40_000));
        let t = Instant::now();
        let d = diff(&a, &b, Compare::Exact, 1, 1, &DiffBudget::default());
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert_eq!((d.removed, d.added), (40_000, 40_000));
        assert_eq!(d.coarse, None, "replacing all is the exact answer");
        assert!(
            d.unified
                .starts_with("@@ -1,40002 +1,40002 @@\n same\n-a0\n")
        );
    }

    #[test]
    fn a_pair_certainly_too_costly_is_coarse_without_being_tried() {
        // 70,000 lines each side that cannot match (and one that can).
        let a = format!("{}common\n", numbered("a", 0..70_000));
        let b = format!("common\n{}", numbered("b", 0..70_000));
        let t = Instant::now();
        let d = diff(&a, &b, Compare::Exact, 1, 1, &DiffBudget::default());
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        let why = d.coarse.expect("coarse");
        assert!(why.contains("too costly to align"), "{why}");
        assert_eq!((d.removed, d.added), (70_001, 70_001));
    }

    #[test]
    fn a_pair_past_its_deadline_or_the_commands_is_coarse() {
        // Every line in common, in an order that shares almost none.
        let n = 20_000;
        let a = numbered("l", 0..n);
        let b: String = (0..n).map(|i| format!("l{}\n", (i * 7919) % n)).collect();
        let budget = DiffBudget::new(Duration::from_millis(100), Duration::from_secs(60));
        let t = Instant::now();
        let d = diff(&a, &b, Compare::Exact, 1, 1, &budget);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert_eq!(d.coarse.as_deref(), Some("not aligned within 0.1 s"));
        // The same answer however far Myers got: the middle replaced whole.
        assert!(d.unified.starts_with("@@ -1,"), "{}", &d.unified[..40]);

        let spent = DiffBudget::new(Duration::from_secs(2), Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        let d = diff("a\nb\n", "a\nc\n", Compare::Exact, 1, 1, &spent);
        assert!(d.coarse.unwrap().contains("were spent"));
        assert_eq!((d.removed, d.added), (1, 1), "the common ends kept");
        assert_eq!(d.unified, "@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    }
}
