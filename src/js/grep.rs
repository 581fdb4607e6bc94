//! Searching an indexed build's strings and identifiers (`grep`): each
//! hit placed by module, raw and pretty line, and enclosing function.

use super::code::{CodeIndex, IndexedModule};
use super::index::LitKind;
use super::symbols;
use regex::Regex;
use std::collections::HashMap;

/// Where `grep` looks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Scope {
    All,
    Strings,
    Identifiers,
}

#[derive(serde::Serialize)]
pub struct FnRef {
    pub name: Option<String>,
    pub original: Option<String>,
    pub raw_line: u32,
    pub pretty_line: u32,
}

#[derive(serde::Serialize)]
pub struct Hit {
    pub module: String,
    pub kind: &'static str,
    /// The matched text.
    pub matched: String,
    /// The literal's value (or the identifier) around the match, shortened.
    pub excerpt: String,
    pub raw_line: u32,
    pub raw_col: u32,
    pub pretty_line: u32,
    pub function: Option<FnRef>,
}

fn excerpt(s: &str, m: std::ops::Range<usize>, width: usize) -> (String, std::ops::Range<usize>) {
    let mut lo = m.start.saturating_sub(width);
    while !s.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (m.end + width).min(s.len());
    while !s.is_char_boundary(hi) {
        hi += 1;
    }
    let pre = if lo > 0 { "…" } else { "" };
    let post = if hi < s.len() { "…" } else { "" };
    let text = format!("{pre}{}{post}", &s[lo..hi]).replace('\n', "⏎");
    let start = pre.len() + s[lo..m.start].replace('\n', "⏎").len();
    let end = start + s[m.start..m.end].replace('\n', "⏎").len();
    (text, start..end)
}

fn fn_ref(m: &IndexedModule, lo: u32, originals: &HashMap<(&str, &str), &str>) -> Option<FnRef> {
    let id = m.index.enclosing_function(lo)?;
    let f = &m.index.functions[id as usize];
    Some(FnRef {
        original: f
            .name
            .as_deref()
            .and_then(|n| originals.get(&(m.name.as_str(), n)).map(|o| o.to_string())),
        name: f.name.as_deref().map(str::to_string),
        raw_line: m.raw_pos(f.lo).0,
        pretty_line: m.pretty_line(f.lo),
    })
}

pub fn search(
    ci: &CodeIndex,
    re: &Regex,
    scope: Scope,
    max: usize,
    only: Option<&str>,
    originals: &HashMap<(&str, &str), &str>,
) -> (Vec<Hit>, bool) {
    let mut hits = Vec::new();
    for m in ci
        .modules
        .iter()
        .filter(|m| only.is_none_or(|o| m.name == o))
    {
        let mut local = Vec::new();
        if scope != Scope::Identifiers {
            for s in &m.index.strings {
                if let Some(mm) = re.find(&s.value) {
                    let (text, _) = excerpt(&s.value, mm.range(), 60);
                    local.push((
                        s.lo,
                        if s.kind == LitKind::Template {
                            "template"
                        } else {
                            "string"
                        },
                        mm.as_str().to_string(),
                        text,
                    ));
                }
            }
        }
        if scope != Scope::Strings {
            for (name, defs) in &m.index.definitions {
                let original = originals.get(&(m.name.as_str(), name.as_str()));
                let matched = re.find(name).map(|mm| mm.as_str().to_string()).or_else(|| {
                    original
                        .and_then(|o| re.find(o))
                        .map(|mm| mm.as_str().to_string())
                });
                if let (Some(matched), Some(d)) = (
                    matched,
                    symbols::primary_definition(m, name).or(defs.first()),
                ) {
                    let label = match original {
                        Some(o) => format!("{name} [{o}]"),
                        None => name.clone(),
                    };
                    local.push((d.lo, "identifier", matched, label));
                }
            }
        }
        local.sort_by_key(|h| h.0);
        for (lo, kind, matched, text) in local {
            let (line, col) = m.raw_pos(lo);
            hits.push(Hit {
                module: m.name.clone(),
                kind,
                matched,
                excerpt: text,
                raw_line: line,
                raw_col: col,
                pretty_line: m.pretty_line(lo),
                function: fn_ref(m, lo, originals),
            });
            if hits.len() >= max {
                return (hits, true);
            }
        }
    }
    (hits, false)
}
