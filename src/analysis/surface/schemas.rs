//! The descriptions written into the schemas no tool and no setting takes:
//! the SDK's control requests, events and results, a plugin manifest's
//! fields, a hook's input. They document a protocol for the programs (and
//! the people) that speak it; the model never reads them, so they are not
//! prompts — but they are text the build carries, and a reader comparing
//! builds wants them beside the prompts.
//!
//! A description is the text of a schema's `.describe(…)` call. Where it
//! sits is read from the index, not from names: the field is the key whose
//! value the call's method chain is (`{still_queued: list(…).describe(…)
//! .optional()}`), the schema is named by its object's `type` or `subtype`
//! literal (`{type: literal("control_cancel_request"), …}`), and a field of
//! a nested object is a dotted path under its parent's key. A description
//! of a whole object (`object({…}).describe(…)`) has no field.

use super::Site;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::flow::Flow;
use crate::js::index::Call;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaText {
    /// Stable within a build and across builds: schema and field when the
    /// build names them, else the opening words; collisions numbered in
    /// the order of the texts.
    pub id: String,
    /// The `type` literal of the schema's object, when it has one, with
    /// its `subtype` after a slash (`system/init`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The field described, as a dotted path from the named schema (or
    /// from the outermost object reached); none for a whole object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub text: String,
    pub bytes: usize,
    pub sha256: String,
    pub sites: Vec<Site>,
}

/// The call a schema method is: `describe` is only believed as a member
/// call (`x.describe(…)`), the form every schema library uses.
const DESCRIBE: &str = "describe";
/// The keys naming a message in a protocol's union of objects (a message's
/// type, then its subtype).
const NAME_KEYS: [&str; 2] = ["type", "subtype"];
/// How many objects up a field's path is followed to a named schema.
const MAX_DEPTH: usize = 6;
/// The longest key read back from the source.
const MAX_KEY: usize = 128;
/// How many calls starting together are looked through for a chain's
/// base (`base().optional().describe(…)`).
const MAX_CHAIN: usize = 16;

/// Every schema description of the build, except those in `taken` (the
/// tools' parameters, the settings' keys and the prompts, already shown as
/// theirs).
pub fn find(ci: &CodeIndex, taken: &BTreeSet<&str>) -> Vec<SchemaText> {
    let mut found: BTreeMap<(Option<String>, Option<String>, String), Vec<Site>> = BTreeMap::new();
    for m in &ci.modules {
        let Some(calls) = Calls::of(m) else { continue };
        for &i in calls.by_arg.values() {
            let d = calls.call(i);
            let Some(a) = &d.arg0 else { continue };
            // The text written in the call, or a name bound once in the
            // module to a literal (`const note = "…"; x.describe(note)`).
            let at = match a.ident() {
                None => Some((a.lo, a.hi)),
                Some(n) => match m.index.definitions.get(n.as_str()).map(Vec::as_slice) {
                    Some([def]) => def.value,
                    _ => None,
                },
            };
            let Some((lo, hi)) = at else { continue };
            let Some(text) = literal_text(m, lo, hi) else {
                continue;
            };
            if text.trim().is_empty() || taken.contains(text.as_str()) {
                continue;
            }
            let (schema, field) = calls.place(i);
            found
                .entry((schema, field, text))
                .or_default()
                .push(Site::at(m, lo));
        }
    }
    let mut out: Vec<SchemaText> = found
        .into_iter()
        .map(|((schema, field, text), mut sites)| {
            sites.sort();
            sites.dedup();
            SchemaText {
                id: String::new(),
                schema,
                field,
                bytes: text.len(),
                sha256: super::prompts::sha256(text.as_bytes()),
                text,
                sites,
            }
        })
        .collect();
    assign_ids(&mut out);
    out
}

/// The text of the expression at `lo..hi` when it is a literal, or literals
/// joined by `+` (a long description is written in parts).
fn literal_text(m: &IndexedModule, lo: u32, hi: u32) -> Option<String> {
    let strings = &m.index.strings;
    let src = m.source().as_bytes();
    let glue = |a: u32, b: u32| {
        src.get(a as usize..b as usize).is_some_and(|g| {
            g.iter()
                .all(|&c| c == b'+' || c == b'(' || c == b')' || c.is_ascii_whitespace())
        })
    };
    let mut k = strings.partition_point(|s| s.lo < lo);
    let mut at = lo;
    let mut text = String::new();
    while let Some(s) = strings.get(k).filter(|s| s.hi <= hi) {
        if !glue(at, s.lo) {
            return None;
        }
        text.push_str(&s.value);
        at = s.hi;
        // Past the literals nested in this one (a template's holes).
        k = strings.partition_point(|x| x.lo < s.hi);
    }
    (at > lo && glue(at, hi)).then_some(text)
}

/// Ids from schema and field, or the opening words; a group that collides
/// is numbered in the order of its texts (never the order found).
fn assign_ids(out: &mut [SchemaText]) {
    let base = |t: &SchemaText| match (&t.schema, &t.field) {
        (Some(s), Some(f)) => format!("{s}.{f}"),
        (Some(s), None) => s.clone(),
        (None, Some(f)) => super::prompts::slug(f, &t.text),
        (None, None) => super::prompts::slug("schema", &t.text),
    };
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, t) in out.iter().enumerate() {
        groups.entry(base(t)).or_default().push(i);
    }
    for (b, mut ix) in groups {
        ix.sort_by(|&x, &y| out[x].text.cmp(&out[y].text));
        for (n, i) in ix.into_iter().enumerate() {
            out[i].id = if n == 0 {
                b.clone()
            } else {
                format!("{b}-{}", n + 1)
            };
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
}

/// A module's calls, looked up by the spans around them and by where their
/// first argument starts.
struct Calls<'m> {
    m: &'m IndexedModule,
    /// The module's calls as nested spans (a method chain's calls all
    /// start where its base does, the widest first).
    calls: Nesting,
    /// The calls handed an object literal, as the nested spans of those
    /// objects.
    objects: Nesting,
    /// The `describe` call whose first argument starts at an offset.
    by_arg: HashMap<u32, u32>,
    /// An object's name: its `type`/`subtype` literal, by the object's start.
    names: HashMap<u32, String>,
}

impl<'m> Calls<'m> {
    /// A module's calls, when some of them describe a schema.
    fn of(m: &'m IndexedModule) -> Option<Calls<'m>> {
        let calls = &m.index.calls;
        let by_arg: HashMap<u32, u32> = calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.member && c.name == DESCRIBE)
            .filter_map(|(i, c)| c.arg0.as_ref().map(|a| (a.lo, i as u32)))
            .collect();
        if by_arg.is_empty() {
            return None;
        }
        let is_object = |lo: u32| m.index.objects.binary_search_by_key(&lo, |o| o.lo).is_ok();
        let objects = Nesting::of(calls.iter().enumerate().filter_map(|(i, c)| {
            let a = c.arg0.as_ref()?;
            is_object(a.lo).then_some((a.lo, a.hi, i as u32))
        }));
        let calls_nest = Nesting::of(
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| (c.lo, c.hi, i as u32)),
        );
        // `type: "x"`, or `type: literal("x")` (the literal handed to a
        // wrapper whose value is the key's); a message with both a type
        // and a subtype is named by the two (`system/init`).
        let mut parts: HashMap<u32, [Option<&str>; 2]> = HashMap::new();
        for s in &m.index.strings {
            let f = match s.flow.first() {
                // (Not the type field's own description.)
                Some(Flow::Arg { callee, .. }) if callee == DESCRIBE => None,
                Some(Flow::Arg { index: 0, .. }) => s.flow.get(1),
                f => f,
            };
            if let Some(Flow::Key { key, object }) = f
                && let Some(k) = NAME_KEYS.iter().position(|n| key == n)
            {
                parts.entry(*object).or_default()[k].get_or_insert(&*s.value);
            }
        }
        let names = parts
            .into_iter()
            .map(|(o, p)| {
                let name = match p {
                    [Some(t), Some(s)] => format!("{t}/{s}"),
                    [Some(x), None] | [None, Some(x)] => x.to_string(),
                    [None, None] => String::new(),
                };
                (o, name)
            })
            .collect();
        Some(Calls {
            m,
            calls: calls_nest,
            objects,
            by_arg,
            names,
        })
    }

    fn call(&self, i: u32) -> &'m Call {
        &self.m.index.calls[i as usize]
    }

    /// The object a description's chain is built on, when its base call's
    /// first argument is an object literal (`object({…}).describe(…)`).
    fn base_object(&self, d: u32) -> Option<u32> {
        // The calls of a method chain all start where its base does; the
        // base is the narrowest, the last of them.
        let from = self.calls.position(d);
        let lo = self.calls.spans[from].0;
        let base = self.calls.spans[from..]
            .iter()
            .take(MAX_CHAIN)
            .take_while(|s| s.0 == lo)
            .last()?;
        self.object_arg(self.call(base.2))
    }

    /// The schema and field a `describe` call gives its text, read from
    /// where the call sits: the key written just before the value
    /// that holds the call (`key: base().describe(…).optional()`), in the
    /// object literal around it, and on up through the objects holding
    /// that one until one is named by its `type`. (Positions, not flows:
    /// the index keeps no flow of a method's result, and schema methods
    /// are chained on both sides of `.describe(…)`.)
    fn place(&self, d: u32) -> (Option<String>, Option<String>) {
        let mut path: Vec<&str> = Vec::new();
        let mut at = d;
        for _ in 0..MAX_DEPTH {
            let Some((key, object, holder)) = self.key_of(at) else {
                break;
            };
            path.push(key);
            if let Some(n) = self.names.get(&object) {
                path.reverse();
                return (Some(n.clone()), Some(path.join(".")));
            }
            at = holder;
        }
        if let Some(&field) = path.first() {
            // No named schema above: the innermost key is the field.
            return (None, Some(field.to_string()));
        }
        // Described as a whole: the object it is built on names it.
        let name = self
            .base_object(d)
            .and_then(|o| self.names.get(&o).cloned());
        (name, None)
    }

    /// Whether a call's first argument is an object literal; its start.
    fn object_arg(&self, c: &Call) -> Option<u32> {
        let a = c.arg0.as_ref()?;
        self.m
            .index
            .objects
            .binary_search_by_key(&a.lo, |o| o.lo)
            .is_ok()
            .then_some(a.lo)
    }

    /// The key whose value holds call `c`, the object literal the key is
    /// in, and the call that object is handed to (`object({key: …})`).
    fn key_of(&self, c: u32) -> Option<(&'m str, u32, u32)> {
        let call = self.call(c);
        // The innermost object literal handed to a call around `c`.
        let o = self.objects.around(call.lo, call.hi)?;
        let (object, _, holder) = self.objects.spans[o];
        // The key's value is the widest call inside that object holding
        // `c`: up the calls around `c` while they are inside it.
        let mut v = self.calls.position(c);
        while let Some(p) = self.calls.parent(v)
            && self.calls.spans[p].0 > object
        {
            v = p;
        }
        let key = key_before(self.m.source().as_bytes(), self.calls.spans[v].0)?;
        self.m
            .index
            .object_keys(object)
            .iter()
            .any(|k| k == key)
            .then_some((key, object, holder))
    }
}

/// Spans of the source that nest (calls, object literals): in start order,
/// the wider first among those starting together, each with the nearest
/// span around it. Finding the innermost span around a place walks up
/// from the last span starting before it, as deep as the nesting goes.
struct Nesting {
    /// `(lo, hi, id)`.
    spans: Vec<(u32, u32, u32)>,
    /// The index of the span around each one (`u32::MAX`: none).
    parents: Vec<u32>,
    /// The index of each id's span, by id (ids are a module's call
    /// numbers: dense).
    positions: Vec<u32>,
}

impl Nesting {
    fn of(spans: impl Iterator<Item = (u32, u32, u32)>) -> Nesting {
        let mut spans: Vec<(u32, u32, u32)> = spans.collect();
        spans.sort_by_key(|&(lo, hi, _)| (lo, std::cmp::Reverse(hi)));
        let mut parents = vec![u32::MAX; spans.len()];
        let mut open: Vec<usize> = Vec::new();
        for (i, &(lo, hi, _)) in spans.iter().enumerate() {
            while open
                .last()
                .is_some_and(|&j| !(lo >= spans[j].0 && hi <= spans[j].1))
            {
                open.pop();
            }
            if let Some(&j) = open.last() {
                parents[i] = j as u32;
            }
            open.push(i);
        }
        let mut positions =
            vec![u32::MAX; spans.iter().map(|s| s.2 as usize + 1).max().unwrap_or(0)];
        for (i, s) in spans.iter().enumerate() {
            positions[s.2 as usize] = i as u32;
        }
        Nesting {
            spans,
            parents,
            positions,
        }
    }

    fn parent(&self, i: usize) -> Option<usize> {
        self.parents
            .get(i)
            .filter(|&&p| p != u32::MAX)
            .map(|&p| p as usize)
    }

    fn position(&self, id: u32) -> usize {
        self.positions[id as usize] as usize
    }

    /// The innermost span starting before `lo` and ending at or after `hi`.
    fn around(&self, lo: u32, hi: u32) -> Option<usize> {
        let mut i = self.spans.partition_point(|s| s.0 < lo).checked_sub(1)?;
        loop {
            if self.spans[i].1 >= hi {
                return Some(i);
            }
            i = self.parent(i)?;
        }
    }
}

/// The key written just before offset `at`: `key:` or `"key":`, with
/// blanks around the colon.
fn key_before(src: &[u8], at: u32) -> Option<&str> {
    let before = src.get(..at as usize)?;
    let blanks = |end: usize| {
        end - before[..end]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count()
    };
    let colon = blanks(before.len()).checked_sub(1)?;
    if before[colon] != b':' {
        return None;
    }
    let end = blanks(colon);
    let word = |end: usize| {
        before[..end]
            .iter()
            .rev()
            .take(MAX_KEY)
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
            .count()
    };
    let (start, end) = if end > 0 && before[end - 1] == b'"' {
        let n = word(end - 1);
        let start = (end - 1).checked_sub(n + 1)?;
        (before[start] == b'"').then_some((start + 1, end - 1))?
    } else {
        (end - word(end), end)
    };
    (start < end)
        .then(|| std::str::from_utf8(&before[start..end]).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    // A protocol written here, with a schema library's shapes: a union of
    // messages named by a `type` literal, a lazily built schema, a nested
    // object, and a tool whose input is described too.
    const SRC: &str = r#"
var Rq = lazy(() => obj({ type: lit("cancel_order"), order_id: str().describe("The order being withdrawn.") }).describe("Withdraws an order that has not been filled."));
var Ev = obj({ type: lit("stock_changed"), items: list(obj({ sku: str(), count: num().describe("How many are left on the shelf.").optional() })).describe("Every shelf after the change."),
  meta: obj({ origin: str().optional().describe("Which till sent it.") }) });
var Un = union([Rq, Ev]).describe("A message between the till and the store.");
var Tl = { name: "Counter", async call(){ return 1; }, description: "Count the coins in the drawer.",
  inputSchema: obj({ coins: num().describe("How many coins were counted so far.") }) };
"#;

    fn found(src: &str, taken: &[&str]) -> Vec<SchemaText> {
        let ci = testjs::script(src);
        find(&ci, &taken.iter().copied().collect())
    }

    fn place_of<'a>(v: &'a [SchemaText], needle: &str) -> Option<&'a SchemaText> {
        v.iter().find(|t| t.text.contains(needle))
    }

    #[test]
    fn each_description_is_placed_by_its_schema_and_field() {
        let v = found(SRC, &[]);
        let at = |n: &str| {
            place_of(&v, n).map(|t| (t.schema.as_deref(), t.field.as_deref(), t.id.as_str()))
        };
        assert_eq!(
            at("order being withdrawn"),
            Some((
                Some("cancel_order"),
                Some("order_id"),
                "cancel_order.order_id"
            ))
        );
        assert_eq!(
            at("Withdraws an order"),
            Some((Some("cancel_order"), None, "cancel_order"))
        );
        // Chained after the description, nested in a list of objects.
        assert_eq!(
            at("left on the shelf"),
            Some((
                Some("stock_changed"),
                Some("items.count"),
                "stock_changed.items.count"
            ))
        );
        assert_eq!(
            at("Every shelf after"),
            Some((Some("stock_changed"), Some("items"), "stock_changed.items"))
        );
        assert_eq!(
            at("Which till"),
            Some((
                Some("stock_changed"),
                Some("meta.origin"),
                "stock_changed.meta.origin"
            ))
        );
        // A union has no name of its own.
        let un = place_of(&v, "between the till").unwrap();
        assert_eq!((un.schema.as_deref(), un.field.as_deref()), (None, None));
        assert!(un.id.starts_with("schema-a-message-between"), "{}", un.id);
    }

    #[test]
    fn a_description_bound_to_a_name_once_is_read_through_it() {
        let src = r#"
var Nt = "How long the till waits before it gives up.", Nu = 1;
var Ms = obj({ type: lit("wait"), limit: num().optional().describe(Nt) });
function Nv(){ let Nw = "Not a description: bound twice."; Nw = "Still not."; return obj({ a: str().describe(Nw) }); }
"#;
        let v = found(src, &[]);
        assert_eq!(
            place_of(&v, "till waits").map(|t| t.id.as_str()),
            Some("wait.limit")
        );
        assert!(place_of(&v, "bound twice").is_none());
        assert!(place_of(&v, "Still not").is_none());
    }

    #[test]
    fn a_description_written_in_parts_is_one_text() {
        let src = r#"
var Mp = obj({ type: lit("close"), why: str().describe("The till closes " + "when the last " +
  "receipt is printed.") });
"#;
        let v = found(src, &[]);
        assert_eq!(v.len(), 1);
        assert_eq!(
            v[0].text,
            "The till closes when the last receipt is printed."
        );
        assert_eq!(v[0].id, "close.why");
    }

    #[test]
    fn the_tools_and_settings_descriptions_are_left_to_them() {
        let v = found(SRC, &["How many coins were counted so far."]);
        assert!(place_of(&v, "coins were counted").is_none());
        assert_eq!(v.len(), 6);
    }

    #[test]
    fn ids_hold_when_unrelated_code_moves_and_collisions_are_numbered_by_text() {
        let moved = format!(
            "var Zz = obj({{ pad: str() }});\nfunction Zy(){{ return 1; }}\n{SRC}\nvar Zx = obj({{ note: str().describe(\"A note kept for later.\") }});"
        );
        let a = found(SRC, &[]);
        let b = found(&moved, &[]);
        for t in &a {
            assert_eq!(
                place_of(&b, &t.text).map(|x| x.id.as_str()),
                Some(t.id.as_str())
            );
        }
        let twice = r#"
var A = obj({ type: lit("ping"), at: num().describe("Then: when it was received.") });
var B = obj({ type: lit("ping"), at: num().describe("At first: when it was sent.") });
"#;
        let v = found(twice, &[]);
        assert_eq!(
            place_of(&v, "At first").map(|t| t.id.as_str()),
            Some("ping.at")
        );
        assert_eq!(
            place_of(&v, "Then: when").map(|t| t.id.as_str()),
            Some("ping.at-2")
        );
    }
}
