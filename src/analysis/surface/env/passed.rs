//! Names read through another binding holding the environment:
//!
//! - a function's parameter receiving it — `f(process.env)` with
//!   `function f(env) { env.NAME }`, or a default `function f(env =
//!   process.env)` — *passed*;
//! - a binding holding it or a copy — `const e = process.env`,
//!   `e = {...process.env, X: "1"}` — *alias*.
//!
//! The binding's reads (`e.NAME`, `e?.NAME`; not writes, not method
//! calls) are those inside the function that binds it and not shadowed by
//! an inner function's binding of the same name.

use super::{Read, is_ident_byte, params_of, skip_ws, skip_ws_back, valid_name};
use crate::analysis::surface::Site;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{DefKind, FnId};
use std::collections::HashSet;

/// A binding holding the environment: its module, the function binding it
/// (`None`: the module's top level), its name, and how it got it.
#[derive(PartialEq, Eq, Hash, Clone)]
pub(super) struct Holder {
    module: usize,
    scope: Option<FnId>,
    name: String,
    how: &'static str,
}

/// The most bytes of a binding's scope searched for its reads.
const MAX_SCOPE_BYTES: usize = 256 * 1024;

/// The occurrence of `process.env` at `at..at + 11`, read neither by a
/// member nor a bracket: the binding it goes to, if any.
pub(super) fn holder(ci: &CodeIndex, m: &IndexedModule, mi: usize, at: usize) -> Option<Holder> {
    let src = m.source();
    let b = src.as_bytes();
    let end = at + super::NEEDLE.len();
    let p = skip_ws_back(b, at);
    let n = skip_ws(b, end);
    let prev = *b.get(p.checked_sub(1)?)?;
    let next = b.get(n).copied();
    // `...process.env` in an object literal bound to a name.
    if src[..p].ends_with("...") {
        let open = object_open(b, p - 3)?;
        let q = skip_ws_back(b, open);
        if q > 1 && b[q - 1] == b'=' && !b"=!<>".contains(&b[q - 2]) {
            return bound(m, mi, skip_ws_back(b, q - 1), "alias");
        }
        return None;
    }
    // `name = process.env`: a default parameter or a binding.
    if prev == b'=' && p >= 2 && !b"=!<>+-*/%&|^?".contains(&b[p - 2]) {
        return bound(m, mi, skip_ws_back(b, p - 1), "alias");
    }
    // `f(process.env)`, `f(a, process.env)`.
    if matches!(prev, b'(' | b',') && matches!(next, Some(b')' | b',')) {
        let at = at as u32;
        let c = m
            .index
            .calls
            .iter()
            .filter(|c| !c.member && c.lo < at && c.hi > at)
            .find(|c| {
                c.arg0.as_ref().is_some_and(|a| a.lo == at)
                    || c.arg1.as_ref().is_some_and(|a| a.lo == at)
            })?;
        let param = if c.arg0.as_ref().is_some_and(|a| a.lo == at) {
            0
        } else {
            1
        };
        let (t, f) = ci.resolve_function(mi, &c.name)?;
        let tm = &ci.modules[t];
        let name = params_of(tm, f)?.get(param)?.clone();
        if name.is_empty() {
            return None;
        }
        return Some(Holder {
            module: t,
            scope: Some(f),
            name,
            how: "passed",
        });
    }
    None
}

/// The `{` opening the object literal that holds byte `i` (at its depth).
fn object_open(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let lo = i.saturating_sub(4096);
    let mut j = i;
    while j > lo {
        j -= 1;
        match b[j] {
            b'}' | b']' | b')' => depth += 1,
            b'{' | b'[' | b'(' => {
                if depth == 0 {
                    return (b[j] == b'{').then_some(j);
                }
                depth -= 1;
            }
            b'"' | b'\'' | b'`' => return None,
            _ => {}
        }
    }
    None
}

/// The identifier ending at `end`, when a definition of it starts there:
/// a parameter (its default) or a binding.
fn bound(m: &IndexedModule, mi: usize, end: usize, how: &'static str) -> Option<Holder> {
    let b = m.source().as_bytes();
    let start = b[..end]
        .iter()
        .rposition(|&c| !is_ident_byte(c))
        .map_or(0, |p| p + 1);
    if start == end || b[start].is_ascii_digit() {
        return None;
    }
    let name = &m.source()[start..end];
    let d = m
        .index
        .definitions
        .get(name)?
        .iter()
        .find(|d| d.lo as usize == start)?;
    let how = match d.kind {
        DefKind::Param => "passed",
        DefKind::Var | DefKind::Let | DefKind::Const => how,
        _ => return None,
    };
    Some(Holder {
        module: mi,
        scope: d.in_function,
        name: name.to_string(),
        how,
    })
}

/// Methods and fields every object has: not variables.
const OBJECT_MEMBERS: [&str; 8] = [
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
    "__proto__",
];

/// The names read off the holder's binding inside its scope.
pub(super) fn reads(ci: &CodeIndex, h: &Holder, out: &mut Vec<Read>) {
    let m = &ci.modules[h.module];
    let src = m.source();
    let b = src.as_bytes();
    let (lo, hi) = match h.scope {
        Some(f) => {
            let f = &m.index.functions[f as usize];
            (f.lo as usize, f.hi as usize)
        }
        None => (0, src.len()),
    };
    if hi.saturating_sub(lo) > MAX_SCOPE_BYTES {
        return;
    }
    let Some(defs) = m.index.definitions.get(&h.name) else {
        return;
    };
    // Functions inside the scope that bind the name again.
    let shadows: HashSet<FnId> = defs
        .iter()
        .filter_map(|d| d.in_function)
        .filter(|&f| Some(f) != h.scope)
        .collect();
    let text = &src[lo..hi];
    for (i, _) in text.match_indices(h.name.as_str()) {
        let q = lo + i;
        let e = q + h.name.len();
        if (q > 0 && (is_ident_byte(b[q - 1]) || b[q - 1] == b'.'))
            || b.get(e).is_some_and(|&c| is_ident_byte(c))
        {
            continue;
        }
        let mut j = e;
        if src[j..].starts_with("?.") {
            j += 2;
        } else if b.get(j) == Some(&b'.') {
            j += 1;
        } else {
            continue;
        }
        let Some(name) = super::ident_at(src, j) else {
            continue;
        };
        let after = skip_ws(b, j + name.len());
        // A method call, or a write (a child's environment being made).
        if b.get(after) == Some(&b'(')
            || (b.get(after) == Some(&b'=') && b.get(after + 1) != Some(&b'='))
            || OBJECT_MEMBERS.contains(&name)
            || !valid_name(name)
        {
            continue;
        }
        // Bound to this holder: no function between the read and the scope
        // binds the name again.
        let mut f = m.index.enclosing_function(q as u32);
        let mut shadowed = false;
        while f != h.scope {
            let Some(id) = f else { break };
            if shadows.contains(&id) {
                shadowed = true;
                break;
            }
            f = m.index.functions[id as usize].parent;
        }
        if shadowed || f != h.scope {
            continue;
        }
        out.push(Read {
            name: name.to_string(),
            how: h.how,
            default: super::default_after(src, j + name.len()),
            site: Site::at(m, q as u32),
        });
    }
}
