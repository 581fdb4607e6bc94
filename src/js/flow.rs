//! Where a value goes: for each string literal, identifier read and call,
//! the places its value is handed to, innermost first — the property it is
//! the value of, the call it is an argument of, the binding it initialises,
//! the function it is returned from. Recorded by the index as it walks the
//! AST, so that an analysis can follow a text to what consumes it (a
//! model-facing text is one that reaches a request to a model; a message
//! shown to the user is one that reaches a renderer) without parsing the
//! module again.
//!
//! Operators that pass a text on unchanged — `+`, a template's `${…}`, the
//! branches of `?:`, `||`, `??`, parentheses, `await`, an array's elements,
//! the receiver of a text method (`[…].join("\n")`, `s.trim()`) — are not
//! places: the text flows through them to the place of the whole.

use serde::Serialize;
use swc_atoms::Atom;

/// One place a value is handed to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flow {
    /// The value of property `key` of an object literal (or of a class
    /// field); `object` is the offset where the object (or class) starts.
    Key { key: Atom, object: u32 },
    /// Argument `index` of a call of `callee`: an identifier, or a member's
    /// property (`x.describe(…)` is `describe`); `new` for a constructor.
    Arg {
        callee: Atom,
        index: u8,
        new: bool,
        member: bool,
    },
    /// Added to a collection bound to a name: `xs.push(…)`, `xs.unshift(…)`,
    /// `m.set(k, …)`, `s.add(…)` — the value goes where `xs` goes.
    Into(Atom),
    /// The initial value of a binding, or a value assigned to it.
    Bind(Atom),
    /// Unpacked into the names of a pattern (`const [a, {b}] = …`): some
    /// part goes to each. (Boxed, as `Store` is: with them inline a place
    /// took 24 bytes instead of 16, and a cold analysis of 2.1.332 keeps
    /// millions of places in its chains.)
    Unpack(Box<Vec<PatName>>),
    /// Assigned to a member (see [`Member`]).
    Store(Box<Member>),
    /// Returned from the enclosing function (a `return`, or an arrow's
    /// expression body).
    Return,
    /// Thrown.
    Throw,
    /// Consumed where it goes no further as a value: a statement of its
    /// own, a test, a comparison, an operand of an operator other than `+`,
    /// an object whose member is read, a callee.
    Discard,
}

/// A name a pattern binds, with the property it takes when the pattern is
/// an object's at the top (`{key: name}`, `{name}`, `{name = d}`): which
/// field of an object handed back by a call goes to which name. `None`
/// inside an array or a nested pattern, and for a rest (`{...rest}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatName {
    pub name: Atom,
    pub key: Option<Atom>,
}

/// A member a value is assigned to: `o.name = …` is key `name` of `o`
/// (`this` for `this.name = …`; empty when the object is not a name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub key: Atom,
    pub obj: Atom,
}

impl Flow {
    /// The last place recorded in a chain: a value that reaches it leaves
    /// the expression (bound, returned, thrown, dropped).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Flow::Bind(_)
                | Flow::Unpack(_)
                | Flow::Into(_)
                | Flow::Store(_)
                | Flow::Return
                | Flow::Throw
                | Flow::Discard
        )
    }
}

/// How many places a chain keeps.
pub const FLOW_DEPTH: usize = 8;

/// An identifier read as a value, and where its value goes.
#[derive(Debug, Clone, Serialize)]
pub struct Use {
    pub name: Atom,
    pub lo: u32,
    pub flow: Box<[Flow]>,
    pub in_function: Option<super::index::FnId>,
}

/// A member read as a value, and where its value goes: `o.key` or
/// `this.key` (`key` empty for a computed `o[…]`). Only reads of a name's
/// or `this`'s member are kept: a value stored in `o.key`, or put in an
/// object bound to `o`, comes back out there. The chain is a range of
/// [`super::index::ModuleIndex::member_flows`] (one buffer per module, not
/// one allocation per read).
#[derive(Debug, Clone, Serialize)]
pub struct MemberUse {
    /// The object's name; `this` for `this`.
    pub obj: Atom,
    pub key: Atom,
    pub lo: u32,
    pub in_function: Option<super::index::FnId>,
    pub flow_start: u32,
    pub flow_len: u8,
}

impl MemberUse {
    /// Where its chain is in the module's `member_flows`.
    pub fn flows(&self) -> std::ops::Range<usize> {
        let a = self.flow_start as usize;
        a..a + self.flow_len as usize
    }
}

/// A frame of the walk: a place, or the edge of a function (its body's
/// values go to its own places, not to where the function goes).
#[derive(Debug, Clone)]
pub(super) enum Frame {
    Place(Flow),
    Body,
}

/// Methods of a text whose receiver flows to the place of the call
/// unchanged in kind (a text in, a text out). A promise's `then` and
/// `finally` too: the callback mostly wraps the value it is handed
/// (`section().then((t) => cached("name", t))`), and what it returns goes
/// to the call's place as well.
pub(super) fn passes_receiver(method: &str) -> bool {
    matches!(
        method,
        "join"
            | "concat"
            | "trim"
            | "trimStart"
            | "trimEnd"
            | "replace"
            | "replaceAll"
            | "padStart"
            | "padEnd"
            | "toString"
            | "normalize"
            | "filter"
            | "flat"
            | "map"
            | "flatMap"
            | "slice"
            | "all"
            | "allSettled"
            | "resolve"
            | "then"
            | "finally"
    )
}

/// Methods that add their argument to their receiver.
pub(super) fn adds_to_receiver(method: &str) -> bool {
    matches!(method, "push" | "unshift" | "add" | "set" | "splice")
}

/// The names a pattern binds.
pub(super) fn pattern_names(p: &swc_ecma_ast::Pat, out: &mut Vec<PatName>) {
    use swc_ecma_ast::{ObjectPatProp, Pat, PropName};
    match p {
        Pat::Object(o) => {
            for prop in &o.props {
                match prop {
                    ObjectPatProp::KeyValue(kv) => {
                        let key = match &kv.key {
                            PropName::Ident(i) => Some(i.sym.clone()),
                            PropName::Str(s) => Some(Atom::from(&*s.value.to_string_lossy())),
                            _ => None,
                        };
                        // `{key: name}` or `{key: name = fallback}`.
                        let named = match &*kv.value {
                            Pat::Ident(b) => Some(b),
                            Pat::Assign(a) => a.left.as_ident(),
                            _ => None,
                        };
                        match named {
                            Some(b) => out.push(PatName {
                                name: b.id.sym.clone(),
                                key,
                            }),
                            None => nested_names(&kv.value, out),
                        }
                    }
                    ObjectPatProp::Assign(a) => out.push(PatName {
                        name: a.key.sym.clone(),
                        key: Some(a.key.sym.clone()),
                    }),
                    ObjectPatProp::Rest(r) => nested_names(&r.arg, out),
                }
            }
        }
        p => nested_names(p, out),
    }
}

/// The names of a pattern below the top, with no key of their own.
fn nested_names(p: &swc_ecma_ast::Pat, out: &mut Vec<PatName>) {
    use swc_ecma_ast::{ObjectPatProp, Pat};
    match p {
        Pat::Ident(b) => out.push(PatName {
            name: b.id.sym.clone(),
            key: None,
        }),
        Pat::Array(a) => a.elems.iter().flatten().for_each(|e| nested_names(e, out)),
        Pat::Object(o) => {
            for prop in &o.props {
                match prop {
                    ObjectPatProp::KeyValue(kv) => nested_names(&kv.value, out),
                    ObjectPatProp::Assign(a) => out.push(PatName {
                        name: a.key.sym.clone(),
                        key: None,
                    }),
                    ObjectPatProp::Rest(r) => nested_names(&r.arg, out),
                }
            }
        }
        Pat::Rest(r) => nested_names(&r.arg, out),
        Pat::Assign(a) => nested_names(&a.left, out),
        _ => {}
    }
}

/// The chain of places above the top of `frames`, appended to `out`;
/// how many were appended (see [`chain`]).
pub(super) fn chain_into(frames: &[Frame], out: &mut Vec<Flow>) -> u8 {
    let mut n = 0u8;
    for f in frames.iter().rev() {
        let Frame::Place(p) = f else { break };
        out.push(p.clone());
        n += 1;
        if p.is_terminal() || n as usize == FLOW_DEPTH {
            break;
        }
    }
    n
}

/// The chain of places above the top of `frames`: innermost first, at most
/// [`FLOW_DEPTH`], ending at the first terminal place.
pub(super) fn chain(frames: &[Frame]) -> Box<[Flow]> {
    let mut out = Vec::new();
    for f in frames.iter().rev() {
        let Frame::Place(p) = f else { break };
        out.push(p.clone());
        if p.is_terminal() || out.len() == FLOW_DEPTH {
            break;
        }
    }
    out.into_boxed_slice()
}
