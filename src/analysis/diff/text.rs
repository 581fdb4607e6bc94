//! String and template literals (prompts, messages) added, removed and
//! changed. A removed and an added text are "changed" when they share most
//! of their word 3-grams; long texts are then diffed by line.

use super::code::CodeFacts;
use super::lines::{self, Compare};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// Texts shorter than this are not worth pairing as "changed".
const PAIR_MIN: usize = 40;

#[derive(Debug, Clone, Serialize)]
pub struct ChangedText {
    pub a: String,
    pub b: String,
    /// Share of word 3-grams in common (Jaccard).
    pub similarity: f64,
    pub lines_removed: usize,
    pub lines_added: usize,
    pub diff: String,
    /// Why the diff shows the texts replaced whole rather than aligned line
    /// by line, when it does ([`lines::DiffBudget`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coarse: Option<String>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct TextDiff {
    pub texts_a: usize,
    pub texts_b: usize,
    /// Largest first.
    pub changed: Vec<ChangedText>,
    /// Longest first.
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl TextDiff {
    /// No text changed, added or removed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}

fn texts(cf: &CodeFacts) -> BTreeSet<&str> {
    cf.texts.iter().map(String::as_str).collect()
}

fn shingles(s: &str) -> Vec<u64> {
    let words: Vec<&str> = s.split_whitespace().collect();
    let mut out: Vec<u64> = words
        .windows(3.min(words.len()).max(1))
        .map(|w| crate::js::shape::fnv64(w.join(" ").as_bytes()))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

pub fn diff(a: &CodeFacts, b: &CodeFacts, budget: &lines::DiffBudget) -> TextDiff {
    let (ta, tb) = rayon::join(|| texts(a), || texts(b));
    let mut removed: Vec<&str> = ta.difference(&tb).copied().collect();
    let mut added: Vec<&str> = tb.difference(&ta).copied().collect();
    // Pair long removed and added texts by shared 3-grams.
    let long_r: Vec<(usize, Vec<u64>)> = removed
        .iter()
        .enumerate()
        .filter(|(_, s)| s.len() >= PAIR_MIN)
        .map(|(i, s)| (i, shingles(s)))
        .collect();
    let mut postings: HashMap<u64, Vec<usize>> = HashMap::new();
    let long_a: Vec<(usize, Vec<u64>)> = added
        .iter()
        .enumerate()
        .filter(|(_, s)| s.len() >= PAIR_MIN)
        .map(|(i, s)| (i, shingles(s)))
        .collect();
    for (k, (_, sh)) in long_a.iter().enumerate() {
        for h in sh {
            postings.entry(*h).or_default().push(k);
        }
    }
    let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
    for (ri, (_, sh)) in long_r.iter().enumerate() {
        let mut shared: HashMap<usize, usize> = HashMap::new();
        for h in sh {
            // A 3-gram common to many texts says little about any of them.
            if let Some(p) = postings.get(h).filter(|p| p.len() <= 50) {
                for &k in p {
                    *shared.entry(k).or_default() += 1;
                }
            }
        }
        for (k, n) in shared {
            let j = n as f64 / (sh.len() + long_a[k].1.len() - n) as f64;
            if j >= 0.5 {
                candidates.push((j, ri, k));
            }
        }
    }
    candidates.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut used_r = vec![false; long_r.len()];
    let mut used_a = vec![false; long_a.len()];
    let mut gone_r = vec![false; removed.len()];
    let mut gone_a = vec![false; added.len()];
    let mut changed = Vec::new();
    for (j, ri, k) in candidates {
        if used_r[ri] || used_a[k] {
            continue;
        }
        used_r[ri] = true;
        used_a[k] = true;
        let (i_r, i_a) = (long_r[ri].0, long_a[k].0);
        gone_r[i_r] = true;
        gone_a[i_a] = true;
        let (x, y) = (removed[i_r], added[i_a]);
        let d = if x.contains('\n') || y.contains('\n') {
            lines::diff(x, y, Compare::Exact, 1, 1, budget)
        } else {
            // One-line texts: split at sentences, so the diff points somewhere.
            let split = |s: &str| s.replace(". ", ".\n");
            lines::diff(&split(x), &split(y), Compare::Exact, 1, 1, budget)
        };
        changed.push(ChangedText {
            a: x.to_string(),
            b: y.to_string(),
            similarity: (j * 1000.0).round() / 1000.0,
            lines_removed: d.removed,
            lines_added: d.added,
            diff: d.unified,
            coarse: d.coarse,
        });
    }
    let mut k = 0;
    removed.retain(|_| {
        k += 1;
        !gone_r[k - 1]
    });
    let mut k = 0;
    added.retain(|_| {
        k += 1;
        !gone_a[k - 1]
    });
    changed.sort_by(|x, y| {
        (y.lines_added + y.lines_removed)
            .cmp(&(x.lines_added + x.lines_removed))
            .then(y.b.len().cmp(&x.b.len()))
    });
    let by_len = |v: &mut Vec<&str>| v.sort_by(|x, y| y.len().cmp(&x.len()).then(x.cmp(y)));
    by_len(&mut removed);
    by_len(&mut added);
    TextDiff {
        texts_a: ta.len(),
        texts_b: tb.len(),
        changed,
        added: added.into_iter().map(str::to_string).collect(),
        removed: removed.into_iter().map(str::to_string).collect(),
    }
}
