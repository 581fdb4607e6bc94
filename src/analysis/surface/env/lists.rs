//! Lists of variable names: an array literal (or the array of a
//! `new Set([…])`) of three or more strings, each shaped like a variable's
//! name (`[A-Z_][A-Z0-9_]*`), at least half of which the build reads in a
//! way found elsewhere. Its other names are variables too — a list of the
//! variables a feature passes on, allows or scrubs — *list*.

use super::{Read, skip_ws, skip_ws_back};
use crate::analysis::surface::Site;
use crate::js::code::CodeIndex;
use crate::js::index::StringLit;
use rayon::prelude::*;
use std::collections::HashSet;

/// The fewest strings a list has.
const MIN_LIST: usize = 3;

fn env_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2
        && b.len() <= super::MAX_NAME_BYTES
        && (b[0].is_ascii_uppercase() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

/// Every list's names, given the names already found (`known`).
pub(super) fn find(ci: &CodeIndex, known: &HashSet<&str>) -> Vec<Read> {
    ci.modules
        .par_iter()
        .flat_map_iter(|m| {
            let src = m.source();
            let b = src.as_bytes();
            let strings = &m.index.strings;
            let mut out = Vec::new();
            let mut i = 0;
            while i < strings.len() {
                // A run of string literals separated by commas, opened by
                // `[` and closed by `]`.
                let first = &strings[i];
                let open = skip_ws_back(b, first.lo as usize);
                if open == 0 || b[open - 1] != b'[' {
                    i += 1;
                    continue;
                }
                let mut j = i;
                while j + 1 < strings.len() {
                    let (a, n) = (&strings[j], &strings[j + 1]);
                    let k = skip_ws(b, a.hi as usize);
                    if b.get(k) != Some(&b',') || skip_ws(b, k + 1) != n.lo as usize {
                        break;
                    }
                    j += 1;
                }
                let run: &[StringLit] = &strings[i..=j];
                let closed = b.get(skip_ws(b, strings[j].hi as usize)) == Some(&b']');
                i = j + 1;
                if !closed || run.len() < MIN_LIST || !run.iter().all(|s| env_shaped(&s.value)) {
                    continue;
                }
                let read = run.iter().filter(|s| known.contains(&*s.value)).count();
                if read * 2 < run.len() {
                    continue;
                }
                for s in run {
                    out.push(Read {
                        name: s.value.to_string(),
                        how: "list",
                        default: None,
                        site: Site::at(m, s.lo),
                    });
                }
            }
            out
        })
        .collect()
}
