//! Modules matched across two builds. Chunk names carry content hashes, so
//! names only pair what has the same path; the rest is paired by content:
//! identical bytes, then JavaScript by the Jaccard similarity of its string
//! literals, then assets by their name with the hash part taken out. What
//! stays unpaired on the new side is traced to the old module whose strings
//! contain it (the case of a single bundle split into chunks).

use super::code::CodeFacts;
use crate::bun::BunGraph;
use crate::bun::digest::sha256_hex;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// JavaScript modules at least this similar are the same module, changed.
const SAME_MODULE: f64 = 0.5;
/// A new chunk whose strings are mostly in one old module came from it.
const CAME_FROM: f64 = 0.5;

#[derive(Debug, Clone, Serialize)]
pub struct ModuleRef {
    pub name: String,
    pub bytes: u64,
    pub loader: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModulePair {
    pub a: ModuleRef,
    pub b: ModuleRef,
    /// "name", "content", "strings" or "name-stem".
    pub matched_by: &'static str,
    /// Jaccard similarity of the string literals (JavaScript only).
    pub similarity: Option<f64>,
}

/// New modules whose strings mostly come from one old module.
#[derive(Debug, Clone, Serialize)]
pub struct Split {
    pub from: String,
    pub into: usize,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct ModuleDiff {
    pub modules_a: usize,
    pub modules_b: usize,
    pub js_a: usize,
    pub js_b: usize,
    pub unchanged: usize,
    /// Identical content under another name.
    pub renamed: Vec<ModulePair>,
    pub changed: Vec<ModulePair>,
    pub added: Vec<ModuleRef>,
    pub removed: Vec<ModuleRef>,
    pub splits: Vec<Split>,
}

impl ModuleDiff {
    /// No module changed, renamed, added or removed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
            && self.renamed.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
    }
}

struct Entry<'c> {
    r: ModuleRef,
    js: bool,
    strings: &'c [u64],
}

fn entries<'c>(g: &BunGraph, cf: &'c CodeFacts) -> Vec<Entry<'c>> {
    let by_graph: HashMap<usize, &[u64]> = cf
        .module_strings
        .iter()
        .map(|(i, v)| (*i as usize, v.as_slice()))
        .collect();
    g.modules
        .par_iter()
        .map(|m| Entry {
            r: ModuleRef {
                name: m.path_below_root().into_owned(),
                bytes: m.contents.len() as u64,
                loader: m.loader.to_string(),
                sha256: sha256_hex(m.contents),
            },
            js: m.is_javascript(),
            strings: by_graph.get(&m.index).copied().unwrap_or(&[]),
        })
        .collect()
}

/// `chunk-abcd1234.js` → `chunk.js`; `x-0a1b2c3d.node` → `x.node`.
fn stem(name: &str) -> String {
    let (dir, file) = name.rsplit_once('/').unwrap_or(("", name));
    let (base, ext) = file.rsplit_once('.').unwrap_or((file, ""));
    let base = match base.rsplit_once('-') {
        Some((b, h))
            if h.len() == 8
                && h.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && !b.is_empty() =>
        {
            b
        }
        _ => base,
    };
    format!("{dir}/{base}.{ext}")
}

/// Shared string count of every (a, b) pair that shares any, through an
/// inverted index on b's strings.
fn overlaps(ea: &[Entry], eb: &[Entry], la: &[usize], lb: &[usize]) -> Vec<HashMap<usize, usize>> {
    let mut postings: HashMap<u64, Vec<usize>> = HashMap::new();
    for &j in lb {
        for &h in eb[j].strings {
            postings.entry(h).or_default().push(j);
        }
    }
    la.par_iter()
        .map(|&i| {
            let mut shared: HashMap<usize, usize> = HashMap::new();
            for h in ea[i].strings {
                if let Some(p) = postings.get(h) {
                    for &j in p {
                        *shared.entry(j).or_default() += 1;
                    }
                }
            }
            shared
        })
        .collect()
}

pub fn diff(ga: &BunGraph, ca: &CodeFacts, gb: &BunGraph, cb: &CodeFacts) -> ModuleDiff {
    let (ea, eb) = rayon::join(|| entries(ga, ca), || entries(gb, cb));
    let mut out = ModuleDiff {
        modules_a: ea.len(),
        modules_b: eb.len(),
        js_a: ea.iter().filter(|e| e.js).count(),
        js_b: eb.iter().filter(|e| e.js).count(),
        ..Default::default()
    };
    let mut la: HashSet<usize> = (0..ea.len()).collect();
    let mut lb: HashSet<usize> = (0..eb.len()).collect();
    let pair = |i: usize, j: usize, by: &'static str, sim: Option<f64>| ModulePair {
        a: ea[i].r.clone(),
        b: eb[j].r.clone(),
        matched_by: by,
        similarity: sim.map(|s| (s * 1000.0).round() / 1000.0),
    };
    // 1. Same name.
    let by_name: HashMap<&str, usize> = eb
        .iter()
        .enumerate()
        .map(|(j, e)| (e.r.name.as_str(), j))
        .collect();
    for (i, e) in ea.iter().enumerate() {
        if let Some(&j) = by_name.get(e.r.name.as_str()) {
            la.remove(&i);
            lb.remove(&j);
            if e.r.sha256 == eb[j].r.sha256 {
                out.unchanged += 1;
            } else {
                out.changed.push(pair(i, j, "name", None));
            }
        }
    }
    // 2. Same content, another name.
    let mut by_sha: HashMap<&str, Vec<usize>> = HashMap::new();
    for &j in &lb {
        by_sha.entry(eb[j].r.sha256.as_str()).or_default().push(j);
    }
    let mut sorted_a: Vec<usize> = la.iter().copied().collect();
    sorted_a.sort_unstable();
    for i in sorted_a {
        if let Some(j) = by_sha
            .get_mut(ea[i].r.sha256.as_str())
            .and_then(|v| v.pop())
        {
            la.remove(&i);
            lb.remove(&j);
            out.renamed.push(pair(i, j, "content", None));
        }
    }
    // 3. JavaScript by string similarity, best pairs first.
    let ja: Vec<usize> = {
        let mut v: Vec<usize> = la.iter().copied().filter(|&i| ea[i].js).collect();
        v.sort_unstable();
        v
    };
    let jb: Vec<usize> = {
        let mut v: Vec<usize> = lb.iter().copied().filter(|&j| eb[j].js).collect();
        v.sort_unstable();
        v
    };
    let shared = overlaps(&ea, &eb, &ja, &jb);
    let mut cands: Vec<(f64, usize, usize)> = Vec::new();
    for (k, m) in shared.iter().enumerate() {
        let i = ja[k];
        for (&j, &n) in m {
            let jac = n as f64 / (ea[i].strings.len() + eb[j].strings.len() - n).max(1) as f64;
            if jac >= SAME_MODULE {
                cands.push((jac, i, j));
            }
        }
    }
    cands.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    for (jac, i, j) in cands {
        if la.contains(&i) && lb.contains(&j) {
            la.remove(&i);
            lb.remove(&j);
            out.changed.push(pair(i, j, "strings", Some(jac)));
        }
    }
    // 4. Assets by name stem.
    let mut stems: HashMap<String, Vec<usize>> = HashMap::new();
    let mut rest_b: Vec<usize> = lb.iter().copied().filter(|&j| !eb[j].js).collect();
    rest_b.sort_unstable();
    for j in rest_b.into_iter().rev() {
        stems.entry(stem(&eb[j].r.name)).or_default().push(j);
    }
    let mut rest_a: Vec<usize> = la.iter().copied().filter(|&i| !ea[i].js).collect();
    rest_a.sort_unstable();
    for i in rest_a {
        if let Some(j) = stems.get_mut(&stem(&ea[i].r.name)).and_then(|v| v.pop()) {
            la.remove(&i);
            lb.remove(&j);
            out.changed.push(pair(i, j, "name-stem", None));
        }
    }
    // 5. What is left: new chunks traced to the old module holding their strings.
    let mut left_a: Vec<usize> = la.into_iter().collect();
    let mut left_b: Vec<usize> = lb.into_iter().collect();
    left_a.sort_unstable();
    left_b.sort_unstable();
    let jl_a: Vec<usize> = left_a.iter().copied().filter(|&i| ea[i].js).collect();
    let jl_b: Vec<usize> = left_b.iter().copied().filter(|&j| eb[j].js).collect();
    let shared = overlaps(&eb, &ea, &jl_b, &jl_a);
    let mut splits: HashMap<usize, (usize, u64)> = HashMap::new();
    for (k, m) in shared.iter().enumerate() {
        let j = jl_b[k];
        let total = eb[j].strings.len().max(1);
        if let Some((&i, &n)) = m.iter().max_by_key(|(i, n)| (**n, std::cmp::Reverse(**i)))
            && n as f64 / total as f64 >= CAME_FROM
        {
            let e = splits.entry(i).or_default();
            e.0 += 1;
            e.1 += eb[j].r.bytes;
        }
    }
    let mut splits: Vec<Split> = splits
        .into_iter()
        .map(|(i, (into, bytes))| Split {
            from: ea[i].r.name.clone(),
            into,
            bytes,
        })
        .collect();
    splits.sort_by(|x, y| y.into.cmp(&x.into).then(x.from.cmp(&y.from)));
    out.splits = splits;
    out.added = left_b.iter().map(|&j| eb[j].r.clone()).collect();
    out.removed = left_a.iter().map(|&i| ea[i].r.clone()).collect();
    out.changed.sort_by(|x, y| x.a.name.cmp(&y.a.name));
    out.renamed.sort_by(|x, y| x.a.name.cmp(&y.a.name));
    out
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn stems_drop_content_hashes_only() {
        assert_eq!(stem("chunk-gmayvjqf.js"), "/chunk.js");
        assert_eq!(stem("a/b/file-0a1b2c3d.node"), "a/b/file.node");
        assert_eq!(stem("src/entrypoints/cli.js"), "src/entrypoints/cli.js");
        assert_eq!(stem("tree-sitter.wasm"), "/tree-sitter.wasm");
    }
}
