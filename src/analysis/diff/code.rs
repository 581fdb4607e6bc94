//! What the code sections of a diff (modules, functions, texts) read of one
//! build, taken from its code index once: the function units with their
//! pretty text, each module's string hashes, the set of string literals.
//! The facts store keeps them beside the build's facts (docs/guide/cache.md), so
//! a diff of two stored builds parses nothing: the whole index of a large
//! build is 1 GB and seconds of parsing, these facts a few tens of MB.

use super::functions::{self, Unit};
use crate::js::code::CodeIndex;
use crate::js::symbols::{self, Symbol};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Strings shorter than this say little about which module is which.
pub const MODULE_STRING_MIN: usize = 4;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeFacts {
    /// JavaScript module names, in code-index order ([`Unit::module`]
    /// numbers them).
    pub modules: Vec<String>,
    /// Every function unit (see [`functions`]), modules in index order,
    /// functions in start order: the matcher's rounds depend on that order.
    pub units: Vec<Unit>,
    /// Per JavaScript module, by its index in the graph: the hashes of its
    /// string literals of at least [`MODULE_STRING_MIN`] bytes, sorted,
    /// distinct.
    pub module_strings: Vec<(u32, Vec<u64>)>,
    /// Every string literal that is not blank, sorted, distinct.
    pub texts: Vec<String>,
    /// The units' pretty-printed text, one after the other. Stored apart
    /// from the rest (it is most of the bytes and needs no JSON escaping).
    #[serde(skip)]
    pub unit_text: String,
}

impl CodeFacts {
    /// Take the facts from an index built with [`crate::js::code::Depth::Shapes`]
    /// (without shapes there are no units).
    pub fn compute(ci: &CodeIndex, syms: &[Symbol]) -> CodeFacts {
        let originals = symbols::original_names(syms);
        let ((units, unit_text), (module_strings, texts)) = rayon::join(
            || functions::all_units(ci, &originals),
            || {
                rayon::join(
                    || {
                        ci.modules
                            .par_iter()
                            .map(|m| {
                                let mut v: Vec<u64> = m
                                    .index
                                    .strings
                                    .iter()
                                    .filter(|s| s.value.len() >= MODULE_STRING_MIN)
                                    .map(|s| crate::js::shape::fnv64(s.value.as_bytes()))
                                    .collect();
                                v.sort_unstable();
                                v.dedup();
                                (m.graph_index as u32, v)
                            })
                            .collect()
                    },
                    || {
                        let set: std::collections::BTreeSet<&str> = ci
                            .modules
                            .iter()
                            .flat_map(|m| m.index.strings.iter().map(|s| &*s.value))
                            .filter(|s| !s.trim().is_empty())
                            .collect();
                        set.into_iter().map(str::to_string).collect()
                    },
                )
            },
        );
        CodeFacts {
            modules: ci.modules.iter().map(|m| m.name.clone()).collect(),
            units,
            module_strings,
            texts,
            unit_text,
        }
    }

    /// Whether facts read back from a store hang together: every unit
    /// names a module and a slice of the text on character boundaries.
    /// (A body that passed its checksum was written by us; this guards
    /// against a bug of ours, never trusting a number to index with.)
    pub fn is_consistent(&self) -> bool {
        self.units.iter().all(|u| {
            let start = u.text_start as usize;
            (u.module as usize) < self.modules.len()
                && start
                    .checked_add(u.text_len as usize)
                    .is_some_and(|end| self.unit_text.get(start..end).is_some())
        })
    }
}
