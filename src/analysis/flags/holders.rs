//! Holders: objects the app installs through a setter and reads back
//! through a getter (`port()?.cached(name, d)`), found by structure.

use super::accessors::{Classifier, MAX_ACCESSOR_BYTES};
use super::registries::{merge_kind, registered_kind};
use super::{AccessorKind, MAX_READ_NAME};
use crate::analysis::eval::parse_snippet;
use crate::js::code::CodeIndex;
use crate::js::index::{Call, FnId};
use std::collections::HashMap;

/// The longest setter or getter body read as a holder's: they are one
/// statement.
const MAX_HOLDER_BYTES: usize = 200;

/// Holders: objects the app installs at start-up through a setter and
/// reads back through a getter — `class P{port=null} var h = new P;
/// function setPort(o){let a=h.port; return h.port=o, a}
/// function port(){return h.port}` — then reads flags as
/// `port()?.cached(name, d)`. Found by structure: a short function of one
/// parameter storing it into a slot (`X.f = p` or `X = p`) and a function of
/// no parameter returning that same slot, in one module. Every call of the
/// setter (through chunk imports too) with an object literal installs it:
/// each key is classified by its value (a function name, or an inline
/// function passing its first parameter on). The map is getter → key →
/// kind; keys installed with nothing known are left out.
pub(super) fn holders(
    ci: &CodeIndex,
    cls: &mut Classifier,
) -> HashMap<(usize, FnId), HashMap<String, AccessorKind>> {
    // (module, slot text) → setters and getters of that slot.
    let mut setters: HashMap<(usize, FnId), String> = HashMap::new();
    let mut getters: HashMap<(usize, String), Vec<FnId>> = HashMap::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        let src = m.source();
        for (id, f) in m.index.functions.iter().enumerate() {
            let (lo, hi) = (f.body_lo as usize, f.hi as usize);
            if hi < lo || hi - lo > MAX_HOLDER_BYTES {
                continue;
            }
            let Some(body) = src.get(lo..hi) else {
                continue;
            };
            if f.params == 0 {
                if let Some(slot) = returned_slot(body) {
                    getters
                        .entry((mi, slot.to_string()))
                        .or_default()
                        .push(id as FnId);
                }
            } else if let Some(p) = f.first_param()
                && let Some(slot) = stored_slot(body, p)
            {
                setters.insert((mi, id as FnId), slot.to_string());
            }
        }
    }
    setters.retain(|(mi, _), slot| getters.contains_key(&(*mi, slot.clone())));
    let mut out: HashMap<(usize, FnId), HashMap<String, AccessorKind>> = HashMap::new();
    if setters.is_empty() {
        return out;
    }
    for (mi, m) in ci.modules.iter().enumerate() {
        let src = m.source();
        for c in m.index.calls.iter().filter(|c| !c.member && c.args >= 1) {
            let Some(a) = &c.arg0 else { continue };
            if src.as_bytes().get(a.lo as usize) != Some(&b'{') {
                continue;
            }
            let Some(target) = ci.resolve_function(mi, &c.name) else {
                continue;
            };
            let Some(slot) = setters.get(&target) else {
                continue;
            };
            let installed = installed_kinds(cls, mi, src, a);
            if installed.is_empty() {
                continue;
            }
            for g in &getters[&(target.0, slot.clone())] {
                let keys = out.entry((target.0, *g)).or_default();
                for (k, kind) in &installed {
                    merge_kind(keys.entry(k.clone()).or_insert(AccessorKind::Other), *kind);
                }
            }
        }
    }
    for keys in out.values_mut() {
        keys.retain(|_, k| *k != AccessorKind::Other);
    }
    out.retain(|_, keys| !keys.is_empty());
    out
}

fn is_path(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && !s.ends_with('.')
        && !s.contains("..")
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.')
        && !s.starts_with("this.")
}

/// `{return X.f}` / `{return X.f;}` / an arrow's `X.f`: the slot returned.
fn returned_slot(body: &str) -> Option<&str> {
    let b = body.trim();
    let e = match b.strip_prefix('{') {
        Some(inner) => inner
            .strip_suffix('}')?
            .trim()
            .strip_prefix("return ")?
            .trim()
            .trim_end_matches(';')
            .trim(),
        None => b,
    };
    is_path(e).then_some(e)
}

/// The slot a setter stores its parameter `p` into: `X.f = p` or `X = p`
/// (not `==`, `=>`, `!=` …).
fn stored_slot<'s>(body: &'s str, p: &str) -> Option<&'s str> {
    let b = body.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    body.match_indices('=').find_map(|(i, _)| {
        let after = body[i + 1..].trim_start();
        let rest = after.strip_prefix(p)?;
        if rest.starts_with(|c: char| c.is_ascii() && ident(c as u8))
            || rest.starts_with(['=', '>'])
        {
            return None;
        }
        if i == 0 || b"=!<>+-*/%&|^?".contains(&b[i - 1]) || b.get(i + 1) == Some(&b'=') {
            return None;
        }
        let head = body[..i].trim_end();
        let start = head
            .bytes()
            .rposition(|c| !(ident(c) || c == b'.'))
            .map_or(0, |j| j + 1);
        let slot = &head[start..];
        (is_path(slot) && slot != p).then_some(slot)
    })
}

/// The keys of an object literal passed to a setter, each classified by its
/// value.
fn installed_kinds(
    cls: &mut Classifier,
    m: usize,
    src: &str,
    a: &crate::js::index::Arg,
) -> Vec<(String, AccessorKind)> {
    use swc_ecma_ast::{Expr, Prop, PropName, PropOrSpread};
    let Some(text) = src.get(a.lo as usize..a.hi as usize) else {
        return Vec::new();
    };
    if text.len() > MAX_ACCESSOR_BYTES {
        return Vec::new();
    }
    let Ok(e) = parse_snippet(&format!("({text})")) else {
        return Vec::new();
    };
    let mut e: &Expr = &e;
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    let Expr::Object(o) = e else {
        return Vec::new();
    };
    // Snippet positions start at 1 and carry the `(`.
    let at = |lo: swc_common::BytePos| a.lo + lo.0.saturating_sub(2);
    let mut out = Vec::new();
    for p in &o.props {
        let PropOrSpread::Prop(p) = p else { continue };
        let (key, kind) = match &**p {
            Prop::Shorthand(i) => (i.sym.to_string(), cls.kind(m, i.sym.as_ref())),
            Prop::KeyValue(kv) => {
                let key = match &kv.key {
                    PropName::Ident(i) => i.sym.to_string(),
                    PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                    _ => continue,
                };
                let kind = match &*kv.value {
                    Expr::Ident(i) => cls.kind(m, i.sym.as_ref()),
                    Expr::Arrow(_) | Expr::Fn(_) => {
                        use swc_common::Spanned;
                        let span = kv.value.span();
                        let arg = crate::js::index::Arg {
                            lo: at(span.lo),
                            hi: at(span.hi),
                            value: crate::js::index::ArgValue::Other,
                        };
                        registered_kind(cls, m, &arg)
                    }
                    _ => continue,
                };
                (key, kind)
            }
            _ => continue,
        };
        out.push((key, kind));
    }
    out
}

/// The getter a member call is made on the result of: `port` of
/// `port()?.cached(…)` or `port().cached(…)`.
pub(super) fn holder_getter_of<'s>(src: &'s str, c: &Call) -> Option<&'s str> {
    let b = src.as_bytes();
    let lo = c.lo as usize;
    let end = (lo..b.len().min(lo + MAX_READ_NAME))
        .find(|&i| !(b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$'))?;
    let rest = src[end..].strip_prefix("()")?;
    let prop = rest.strip_prefix("?.").or_else(|| rest.strip_prefix('.'))?;
    (end > lo
        && prop.starts_with(c.name.as_str())
        && !prop[c.name.len()..]
            .starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$'))
    .then(|| &src[lo..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_slots_by_structure() {
        assert_eq!(returned_slot("{return h.port}"), Some("h.port"));
        assert_eq!(returned_slot("{ return h.port; }"), Some("h.port"));
        assert_eq!(returned_slot("h.port"), Some("h.port"));
        assert_eq!(returned_slot("{return this.port}"), None);
        assert_eq!(returned_slot("{return h.port()}"), None);
        assert_eq!(
            stored_slot("{let a=h.port;return h.port=o,a}", "o"),
            Some("h.port")
        );
        assert_eq!(stored_slot("{cur = o}", "o"), Some("cur"));
        assert_eq!(stored_slot("{return h.port==o}", "o"), None);
        assert_eq!(stored_slot("{h.port=ox}", "o"), None);
        assert_eq!(stored_slot("{this.port=o}", "o"), None);
    }
}
