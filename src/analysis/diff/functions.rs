//! Functions matched across two builds whose minified names differ.
//!
//! The units are the top-level functions of every module (a CommonJS-style
//! wrapper spanning the module does not count as a level). They are paired
//! in three rounds, each on what the previous left over:
//! 1. equal `exact` hash — the same code up to a consistent renaming;
//! 2. equal `shape` hash — the same code with names erased;
//! 3. anchors — string literals, method names and recovered original names
//!    found in exactly one leftover unit on each side, pairs that are each
//!    other's best match;
//! 4. anchor sets that are mostly the same (a library bundled twice repeats
//!    its anchors);
//! 5. position — the one leftover between the same two matched neighbours
//!    on both sides.
//!
//! A pair from rounds 2–5 is diffed on its pretty-printed lines with
//! consistent renames ignored; no visible difference means "renamed only".
//!
//! A unit that is a lazy module initialiser has no name of its own: a
//! changed one is placed by [`super::initialisers`].

use super::code::CodeFacts;
use super::initialisers::{self, Assigned, Initialiser};
use super::lines::{self, Compare};
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::FnKind;
use crate::js::lines::LineIndex;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, Serialize)]
pub struct FunctionRef {
    /// The minified name (None for anonymous functions).
    pub name: Option<String>,
    /// The original name, when the build reveals it.
    pub original: Option<String>,
    pub module: String,
    pub raw_line: u32,
    pub pretty_line: u32,
    pub pretty_lines: u32,
    pub tokens: u32,
    /// For a lazy module initialiser (`var X = init(() => { … })`): the
    /// binding it is bound to, X (this side's minified name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// For a changed initialiser: the bindings its changed lines assign or
    /// declare at its own level (`Y = [ … ]`), in source order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assigns: Vec<Assigned>,
}

impl FunctionRef {
    /// Where the function is when it has no name: see
    /// [`initialisers::place`].
    pub fn place(&self) -> Option<String> {
        initialisers::place(self.within.as_deref(), &self.assigns)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangedFunction {
    pub a: FunctionRef,
    pub b: FunctionRef,
    /// How the pair was found: shape, unique anchors, anchor similarity or position.
    pub matched_by: String,
    pub lines_removed: usize,
    pub lines_added: usize,
    /// Unified diff of the pretty-printed bodies, renames ignored.
    pub diff: String,
    /// Why the diff shows the bodies replaced whole rather than aligned
    /// line by line, when it does ([`lines::DiffBudget`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coarse: Option<String>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct FunctionDiff {
    pub units_a: usize,
    pub units_b: usize,
    /// Identical up to a consistent renaming.
    pub unchanged: usize,
    /// Paired, and different only in names once printed.
    pub renamed_only: usize,
    /// Ranked by size of change, largest first.
    pub changed: Vec<ChangedFunction>,
    /// Largest first.
    pub added: Vec<FunctionRef>,
    pub removed: Vec<FunctionRef>,
}

impl FunctionDiff {
    /// No function changed, added or removed (renamings alone do not count).
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}

/// Smaller functions are bundler glue (export getters `() => x`, constant
/// thunks) that code-splitting adds or removes wholesale: not compared.
pub const MIN_TOKENS: u32 = 8;

/// One top-level function as the matcher sees it: everything a diff reads
/// of it, taken from the code index once. Units are stored with a build's
/// [`CodeFacts`], so two stored builds are matched without parsing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// The module's number in [`CodeFacts::modules`] (code-index order).
    pub module: u32,
    /// The minified name (None for anonymous functions).
    pub name: Option<String>,
    /// The original name, when the build reveals it.
    pub original: Option<String>,
    pub raw_line: u32,
    pub pretty_line: u32,
    pub pretty_lines: u32,
    /// Identifiers erased ([`crate::js::shape::FnShape::shape`]).
    pub shape: u64,
    /// Identifiers numbered by first use ([`crate::js::shape::FnShape::exact`]).
    pub exact: u64,
    pub tokens: u32,
    /// Sorted, distinct hashes of its strings, method name and original name.
    pub anchors: Vec<u64>,
    /// Where its pretty-printed lines lie in [`CodeFacts::unit_text`].
    pub text_start: u64,
    pub text_len: u64,
    /// When it is a lazy module initialiser: its binding and what its
    /// body assigns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<Initialiser>,
}

fn hash64(s: &str) -> u64 {
    crate::js::shape::fnv64(s.as_bytes())
}

/// The top-level functions of one module, with their hashes, anchors and
/// pretty text (appended to `text`, which starts empty).
fn units_of(
    mi: usize,
    m: &IndexedModule,
    originals: &HashMap<(&str, &str), &str>,
    text: &mut String,
) -> Vec<Unit> {
    let Some(shapes) = &m.shapes else {
        return Vec::new();
    };
    let fns = &m.index.functions;
    let len = m.source().len() as u64;
    let wrapper = |i: usize| fns[i].parent.is_none() && (fns[i].hi - fns[i].lo) as u64 * 2 > len;
    // unit_of[i]: the unit function i belongs to (functions are in start
    // order, so a parent comes before its children).
    let mut unit_of: Vec<Option<usize>> = vec![None; fns.len()];
    let mut units: Vec<Unit> = Vec::new();
    let mut slot: HashMap<usize, usize> = HashMap::new();
    let mut lines: Option<LineIndex> = None;
    for (i, f) in fns.iter().enumerate() {
        let is_unit = !wrapper(i)
            && match f.parent {
                None => true,
                Some(p) => wrapper(p as usize),
            };
        unit_of[i] = if is_unit {
            Some(i)
        } else {
            f.parent.and_then(|p| unit_of[p as usize])
        };
        if is_unit
            && let Some(shape) = shapes.function(f.lo)
            && shape.tokens >= MIN_TOKENS
        {
            let mut anchors = Vec::new();
            let original = f
                .name
                .as_deref()
                .and_then(|n| originals.get(&(m.name.as_str(), n)).map(|s| s.to_string()));
            if let Some(o) = original.as_deref().filter(|o| o.len() >= 5) {
                anchors.push(hash64(&format!("name:{o}")));
            }
            if f.kind == FnKind::Method
                && let Some(n) = &f.name
            {
                anchors.push(hash64(&format!("method:{n}")));
            }
            let pretty_line = m.pretty_line(f.lo);
            let pretty_end = m.pretty_line(f.hi.saturating_sub(1).max(f.lo));
            let pretty_lines = pretty_end.saturating_sub(pretty_line) + 1;
            let lines = lines.get_or_insert_with(|| LineIndex::new(m.printed.code.as_bytes()));
            let body = pretty_text(&m.printed.code, lines, pretty_line, pretty_lines);
            let text_start = text.len() as u64;
            text.push_str(body);
            slot.insert(i, units.len());
            units.push(Unit {
                module: mi as u32,
                name: f.name.as_deref().map(str::to_string),
                original,
                raw_line: m.raw_pos(f.lo).0,
                pretty_line,
                pretty_lines,
                shape: shape.shape,
                exact: shape.exact,
                tokens: shape.tokens,
                anchors,
                text_start,
                text_len: body.len() as u64,
                init: None,
            });
        }
    }
    for s in &m.index.strings {
        if s.value.len() < 3 {
            continue;
        }
        if let Some(u) = s
            .in_function
            .and_then(|f| unit_of[f as usize])
            .and_then(|u| slot.get(&u))
        {
            units[*u].anchors.push(hash64(&s.value));
        }
    }
    for u in &mut units {
        u.anchors.sort_unstable();
        u.anchors.dedup();
    }
    initialisers::find(m, fns, &slot, &mut units, originals);
    units
}

/// Every unit of an index (modules in index order, functions in start
/// order) and their pretty texts, one after the other.
pub fn all_units(ci: &CodeIndex, originals: &HashMap<(&str, &str), &str>) -> (Vec<Unit>, String) {
    let per_module: Vec<(Vec<Unit>, String)> = ci
        .modules
        .par_iter()
        .enumerate()
        .map(|(mi, m)| {
            let mut text = String::new();
            let units = units_of(mi, m, originals, &mut text);
            (units, text)
        })
        .collect();
    let total: usize = per_module.iter().map(|(_, t)| t.len()).sum();
    let mut text = String::with_capacity(total);
    let mut units = Vec::with_capacity(per_module.iter().map(|(u, _)| u.len()).sum());
    for (us, t) in per_module {
        let base = text.len() as u64;
        text.push_str(&t);
        units.extend(us.into_iter().map(|mut u| {
            u.text_start += base;
            u
        }));
    }
    (units, text)
}

fn reference(cf: &CodeFacts, u: &Unit) -> FunctionRef {
    FunctionRef {
        name: u.name.clone(),
        original: u.original.clone(),
        module: cf
            .modules
            .get(u.module as usize)
            .cloned()
            .unwrap_or_default(),
        raw_line: u.raw_line,
        pretty_line: u.pretty_line,
        pretty_lines: u.pretty_lines,
        tokens: u.tokens,
        within: u.init.as_ref().map(|i| i.binding.clone()),
        assigns: Vec::new(),
    }
}

/// Pair equal keys, first with first, in unit order.
fn pair_by<K: std::hash::Hash + Eq>(
    a: &[Unit],
    b: &[Unit],
    la: &mut Vec<usize>,
    lb: &mut Vec<usize>,
    key: impl Fn(&Unit) -> K,
) -> Vec<(usize, usize)> {
    let mut by: HashMap<K, std::collections::VecDeque<usize>> = HashMap::new();
    for &i in la.iter() {
        by.entry(key(&a[i])).or_default().push_back(i);
    }
    let mut pairs = Vec::new();
    let mut taken_a = vec![false; a.len()];
    lb.retain(
        |&j| match by.get_mut(&key(&b[j])).and_then(|q| q.pop_front()) {
            Some(i) => {
                taken_a[i] = true;
                pairs.push((i, j));
                false
            }
            None => true,
        },
    );
    la.retain(|&i| !taken_a[i]);
    pairs
}

/// Units of the two builds taken for one function (positions in each
/// side's units), and by what.
struct Candidate {
    a: usize,
    b: usize,
    matched_by: String,
}

impl Candidate {
    fn new(a: usize, b: usize, matched_by: String) -> Candidate {
        Candidate { a, b, matched_by }
    }
}

/// Pairs sharing anchors found in exactly one leftover unit per side,
/// kept when each is the other's best match.
fn pair_by_anchors(
    a: &[Unit],
    b: &[Unit],
    la: &mut Vec<usize>,
    lb: &mut Vec<usize>,
) -> Vec<Candidate> {
    #[derive(Default)]
    struct Seen {
        na: u32,
        ua: usize,
        nb: u32,
        ub: usize,
    }
    let mut seen: HashMap<u64, Seen> = HashMap::new();
    for &i in la.iter() {
        for &h in &a[i].anchors {
            let s = seen.entry(h).or_default();
            s.na += 1;
            s.ua = i;
        }
    }
    for &j in lb.iter() {
        for &h in &b[j].anchors {
            let s = seen.entry(h).or_default();
            s.nb += 1;
            s.ub = j;
        }
    }
    let mut votes: HashMap<(usize, usize), usize> = HashMap::new();
    for s in seen.values() {
        if s.na == 1 && s.nb == 1 {
            *votes.entry((s.ua, s.ub)).or_default() += 1;
        }
    }
    let mut best_a: HashMap<usize, (usize, usize)> = HashMap::new();
    let mut best_b: HashMap<usize, (usize, usize)> = HashMap::new();
    for (&(i, j), &n) in &votes {
        let e = best_a.entry(i).or_insert((j, 0));
        if n > e.1 || (n == e.1 && j < e.0) {
            *e = (j, n);
        }
        let e = best_b.entry(j).or_insert((i, 0));
        if n > e.1 || (n == e.1 && i < e.0) {
            *e = (i, n);
        }
    }
    let mut pairs: Vec<(usize, usize, usize)> = best_a
        .iter()
        .filter(|(i, (j, n))| {
            // Shared anchors outweigh a size difference only up to a point:
            // a big function split in two keeps its anchors in both halves.
            let ratio = size_ratio(&a[**i], &b[*j]);
            best_b.get(j).is_some_and(|(bi, _)| bi == *i)
                && (ratio <= 4.0 || (*n >= 10 && ratio <= 8.0))
        })
        .map(|(i, (j, n))| (*i, *j, *n))
        .collect();
    pairs.sort_unstable();
    let (pa, pb): (
        std::collections::HashSet<usize>,
        std::collections::HashSet<usize>,
    ) = pairs.iter().map(|p| (p.0, p.1)).unzip();
    la.retain(|i| !pa.contains(i));
    lb.retain(|j| !pb.contains(j));
    pairs
        .into_iter()
        .map(|(i, j, n)| Candidate::new(i, j, format!("{n} unique anchors")))
        .collect()
}

fn size_ratio(a: &Unit, b: &Unit) -> f64 {
    let (x, y) = (a.tokens as f64, b.tokens as f64);
    x.max(y) / x.min(y).max(1.0)
}

/// Pairs whose anchor sets are mostly the same (Jaccard ≥ 0.5), best first:
/// what round 3 leaves when anchors repeat (a library bundled twice).
fn pair_by_anchor_sets(
    a: &[Unit],
    b: &[Unit],
    la: &mut Vec<usize>,
    lb: &mut Vec<usize>,
) -> Vec<Candidate> {
    let mut postings: HashMap<u64, Vec<usize>> = HashMap::new();
    for &i in la.iter().filter(|&&i| a[i].anchors.len() >= 2) {
        for &h in &a[i].anchors {
            postings.entry(h).or_default().push(i);
        }
    }
    let mut cands: Vec<(f64, usize, usize)> = lb
        .par_iter()
        .filter(|&&j| b[j].anchors.len() >= 2)
        .flat_map_iter(|&j| {
            let mut shared: HashMap<usize, usize> = HashMap::new();
            for h in &b[j].anchors {
                // An anchor in many units says little about any of them.
                if let Some(p) = postings.get(h).filter(|p| p.len() <= 20) {
                    for &i in p {
                        *shared.entry(i).or_default() += 1;
                    }
                }
            }
            shared.into_iter().filter_map(move |(i, n)| {
                let jac = n as f64 / (a[i].anchors.len() + b[j].anchors.len() - n) as f64;
                (jac >= 0.5 && size_ratio(&a[i], &b[j]) <= 4.0).then_some((jac, i, j))
            })
        })
        .collect();
    cands.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let (mut ta, mut tb) = (vec![false; a.len()], vec![false; b.len()]);
    let mut pairs = Vec::new();
    for (jac, i, j) in cands {
        if !ta[i] && !tb[j] {
            ta[i] = true;
            tb[j] = true;
            pairs.push(Candidate::new(i, j, format!("anchor similarity {jac:.2}")));
        }
    }
    la.retain(|&i| !ta[i]);
    lb.retain(|&j| !tb[j]);
    pairs
}

/// Leftovers that sit alone in the same gap between two matched pairs of
/// the same module (small functions without strings, changed in place).
fn pair_by_position(
    a: &[Unit],
    b: &[Unit],
    matched: &[(usize, usize)],
    la: &mut Vec<usize>,
    lb: &mut Vec<usize>,
) -> Vec<(usize, usize)> {
    let mut partner: Vec<Option<usize>> = vec![None; a.len()];
    for &(i, j) in matched {
        partner[i] = Some(j);
    }
    let (mut left_a, mut left_b) = (vec![false; a.len()], vec![false; b.len()]);
    la.iter().for_each(|&i| left_a[i] = true);
    lb.iter().for_each(|&j| left_b[j] = true);
    let mut pairs = Vec::new();
    let mut prev: Option<usize> = None;
    for n in 0..a.len() {
        let Some(nj) = partner[n] else { continue };
        if let Some(p) = prev
            && let Some(pj) = partner[p]
            && a[p].module == a[n].module
            && b[pj].module == b[nj].module
            && pj < nj
        {
            let ga: Vec<usize> = (p + 1..n).filter(|&i| left_a[i]).collect();
            let gb: Vec<usize> = (pj + 1..nj).filter(|&j| left_b[j]).collect();
            if ga.len() == 1 && gb.len() == 1 && size_ratio(&a[ga[0]], &b[gb[0]]) <= 2.0 {
                left_a[ga[0]] = false;
                left_b[gb[0]] = false;
                pairs.push((ga[0], gb[0]));
            }
        }
        prev = Some(n);
    }
    la.retain(|&i| left_a[i]);
    lb.retain(|&j| left_b[j]);
    pairs
}

/// The pretty-printed lines `line .. line + lines` of a module.
fn pretty_text<'c>(code: &'c str, index: &LineIndex, line: u32, lines: u32) -> &'c str {
    let start = index.offset(line, 1).unwrap_or(0) as usize;
    let end = index
        .offset(line + lines, 1)
        .map_or(code.len(), |o| o as usize);
    code.get(start..end.max(start)).unwrap_or("")
}

/// The pretty text of a unit (empty if the facts do not hold it: they were
/// checked on load, so only a bug could get here).
pub(super) fn text_of<'c>(cf: &'c CodeFacts, u: &Unit) -> &'c str {
    let start = u.text_start as usize;
    cf.unit_text
        .get(start..start.saturating_add(u.text_len as usize))
        .unwrap_or("")
}

/// Match the units of two builds and diff the pairs whose code differs.
/// Reads only [`CodeFacts`]: whether they were computed now or stored.
pub fn diff(a: &CodeFacts, b: &CodeFacts, budget: &lines::DiffBudget) -> FunctionDiff {
    let (ua, ub) = (&a.units[..], &b.units[..]);
    let mut la: Vec<usize> = (0..ua.len()).collect();
    let mut lb: Vec<usize> = (0..ub.len()).collect();
    let exact = pair_by(ua, ub, &mut la, &mut lb, |u| (u.exact, u.tokens));
    let shape = pair_by(ua, ub, &mut la, &mut lb, |u| (u.shape, u.tokens));
    let anchored = pair_by_anchors(ua, ub, &mut la, &mut lb);
    let similar = pair_by_anchor_sets(ua, ub, &mut la, &mut lb);
    let mut candidates: Vec<Candidate> = shape
        .into_iter()
        .map(|(i, j)| Candidate::new(i, j, "shape".to_string()))
        .chain(anchored)
        .chain(similar)
        .collect();
    let mut matched: Vec<(usize, usize)> = exact.clone();
    matched.extend(candidates.iter().map(|c| (c.a, c.b)));
    matched.sort_unstable();
    let placed = pair_by_position(ua, ub, &matched, &mut la, &mut lb);
    candidates.extend(
        placed
            .into_iter()
            .map(|(i, j)| Candidate::new(i, j, "position".to_string())),
    );
    let results: Vec<Option<ChangedFunction>> = candidates
        .par_iter()
        .map(|c| {
            let (ua, ub) = (&ua[c.a], &ub[c.b]);
            let (ra, rb) = (reference(a, ua), reference(b, ub));
            let (ta, tb) = (text_of(a, ua), text_of(b, ub));
            let (sa, sb) = (ua.pretty_line as usize, ub.pretty_line as usize);
            let (ta, tb) = (lines::dedent(ta), lines::dedent(tb));
            let d = lines::diff(&ta, &tb, Compare::IgnoringRenames, sa, sb, budget);
            (d.size() > 0).then(|| ChangedFunction {
                a: FunctionRef {
                    assigns: ua
                        .init
                        .as_ref()
                        .map_or_else(Vec::new, |i| i.assigned(&d.changed_a)),
                    ..ra
                },
                b: FunctionRef {
                    assigns: ub
                        .init
                        .as_ref()
                        .map_or_else(Vec::new, |i| i.assigned(&d.changed_b)),
                    ..rb
                },
                matched_by: c.matched_by.clone(),
                lines_removed: d.removed,
                lines_added: d.added,
                diff: d.unified,
                coarse: d.coarse,
            })
        })
        .collect();
    let renamed_only = results.iter().filter(|r| r.is_none()).count();
    let mut changed: Vec<ChangedFunction> = results.into_iter().flatten().collect();
    changed.sort_by(|x, y| {
        (y.lines_added + y.lines_removed)
            .cmp(&(x.lines_added + x.lines_removed))
            .then(x.a.module.cmp(&y.a.module))
            .then(x.a.raw_line.cmp(&y.a.raw_line))
    });
    let refs = |cf: &CodeFacts, units: &[Unit], left: &[usize]| {
        let mut v: Vec<FunctionRef> = left.iter().map(|&i| reference(cf, &units[i])).collect();
        v.sort_by(|x, y| {
            y.tokens
                .cmp(&x.tokens)
                .then(x.module.cmp(&y.module))
                .then(x.raw_line.cmp(&y.raw_line))
        });
        v
    };
    FunctionDiff {
        units_a: ua.len(),
        units_b: ub.len(),
        unchanged: exact.len(),
        renamed_only,
        changed,
        added: refs(b, ub, &lb),
        removed: refs(a, ua, &la),
    }
}
