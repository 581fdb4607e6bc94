//! The inventory: every flag name's sites in the build, classified by the
//! accessor each is passed to, and the accessors counted by their sites.

use super::accessors::Classifier;
use super::registries::Registries;
use super::{
    Accessor, AccessorKind, Flag, FlagInventory, FlagKind, FlagSite, is_flag_name, is_read_name,
};
use crate::analysis::eval::{Evaluator, parse_snippet};
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{DefKind, FnId};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The longest constant value read as a flag name (`var o = "tengu_…"`):
/// a quoted name is short; a long value is something else.
const MAX_CONSTANT_BYTES: u32 = 200;

/// How much of a computed default's source is quoted.
const MAX_DEFAULT_CHARS: usize = 80;

/// A literal default, or "computed: EXPR".
fn default_of(
    ev: &mut Evaluator,
    m: usize,
    module: &IndexedModule,
    arg: &crate::js::index::Arg,
) -> serde_json::Value {
    let text = &module.source()[arg.lo as usize..arg.hi as usize];
    if let Ok(e) = parse_snippet(text) {
        let literal = matches!(
            &*e,
            swc_ecma_ast::Expr::Lit(_)
                | swc_ecma_ast::Expr::Unary(_)
                | swc_ecma_ast::Expr::Array(_)
                | swc_ecma_ast::Expr::Object(_)
        );
        if literal && let Ok(v) = ev.eval(m, &e, arg.lo, &Vec::new()) {
            return v.to_json();
        }
    }
    let short: String = text.chars().take(MAX_DEFAULT_CHARS).collect();
    serde_json::Value::String(format!("computed: {short}"))
}

pub fn inventory(ci: &CodeIndex, originals: &HashMap<(&str, &str), &str>) -> FlagInventory {
    let mut cls = Classifier::new(ci);
    let registries = Registries::find(ci, &mut cls);
    cls.learn_registries(registries.clone());
    let mut reader = SiteReader {
        ci,
        originals,
        cls,
        registries,
        ev: Evaluator::new(ci),
        sites: BTreeMap::new(),
        accessor_sites: HashMap::new(),
    };
    for (mi, m) in ci.modules.iter().enumerate() {
        reader.module(mi, m);
    }
    let SiteReader {
        mut cls,
        sites,
        accessor_sites,
        ..
    } = reader;
    let (flags, counts) = flags_of(sites);
    let accessors = accessor_rows(ci, &mut cls, accessor_sites, originals);
    FlagInventory {
        flags,
        accessors,
        counts,
    }
}

/// The constants of one module that hold a flag name (`var o = "tengu_…"`),
/// its own or imported from another chunk.
struct Constants<'m> {
    /// Name → the flag name it holds.
    values: HashMap<&'m str, &'m str>,
    /// Where each of the module's own constants' string literal sits.
    at: HashMap<u32, &'m str>,
    /// Those passed as a call's first argument.
    used: HashSet<&'m str>,
}

impl<'m> Constants<'m> {
    fn of(ci: &'m CodeIndex, mi: usize, m: &'m IndexedModule) -> Constants<'m> {
        let mut values: HashMap<&str, &str> = HashMap::new();
        let mut at: HashMap<u32, &str> = HashMap::new();
        for (name, defs) in &m.index.definitions {
            if let Some((lo, inner)) = constant_value(m, defs) {
                values.insert(name.as_str(), inner);
                at.insert(lo, name.as_str());
            }
        }
        // Constants another chunk defines and this one imports
        // (`import {o} from "./chunk.js"; getter(o)`): a split build moves a
        // name's constant away from its reads.
        for imp in &m.index.imports {
            if values.contains_key(imp.local.as_str()) {
                continue;
            }
            if let Some((t, local)) = ci.follow_import(mi, &imp.local)
                && let Some(v) = string_constant(&ci.modules[t], local)
            {
                values.insert(imp.local.as_str(), v);
            }
        }
        let used = m
            .index
            .calls
            .iter()
            .filter_map(|c| c.arg0.as_ref().and_then(|a| a.ident().map(|i| &**i)))
            .filter(|i| values.contains_key(i))
            .collect();
        Constants { values, at, used }
    }
}

/// Reads the flag sites of every module: the calls passing a flag name
/// (or a constant holding one), classified by what is called, and every
/// other occurrence of a flag name.
struct SiteReader<'a, 'o> {
    ci: &'a CodeIndex,
    originals: &'o HashMap<(&'o str, &'o str), &'o str>,
    cls: Classifier<'a>,
    registries: Registries,
    ev: Evaluator<'a>,
    /// Flag name → its sites.
    sites: BTreeMap<String, Vec<FlagSite>>,
    /// (module, accessor name) → the feature and event sites it reads.
    accessor_sites: HashMap<(usize, String), usize>,
}

impl SiteReader<'_, '_> {
    fn module(&mut self, mi: usize, m: &IndexedModule) {
        let constants = Constants::of(self.ci, mi, m);
        let at_call = self.call_sites(mi, m, &constants);
        // Every other occurrence of a flag name.
        for s in m.index.strings.iter().filter(|s| is_flag_name(&s.value)) {
            if at_call.contains_key(&s.lo) {
                continue;
            }
            // A constant passed to calls is reported through those calls; a
            // constant nobody passes on is still "other".
            if constants
                .at
                .get(&s.lo)
                .is_some_and(|n| constants.used.contains(n))
            {
                continue;
            }
            self.sites
                .entry(s.value.to_string())
                .or_default()
                .push(site(
                    m,
                    s.lo,
                    FlagKind::Other,
                    None,
                    None,
                    None,
                    self.originals,
                ));
        }
    }

    /// The calls of module `mi` passing a flag name: where each literal
    /// name passed sits → the call's position in the index.
    fn call_sites(
        &mut self,
        mi: usize,
        m: &IndexedModule,
        constants: &Constants,
    ) -> HashMap<u32, usize> {
        let ci = self.ci;
        let mut at_call: HashMap<u32, usize> = HashMap::new();
        for (ci_, c) in m.index.calls.iter().enumerate() {
            let Some(a0) = &c.arg0 else { continue };
            let (flag, constant) = match (a0.string(), a0.ident()) {
                (Some(s), _) if is_read_name(s) => (s.to_string(), None),
                (_, Some(id)) => match constants.values.get(id.as_str()) {
                    Some(f) => (f.to_string(), Some(id.to_string())),
                    None => continue,
                },
                _ => continue,
            };
            // A local of the callee's name (a parameter, a binding) nested
            // inside the outermost one.
            let shadowing = if c.member {
                None
            } else {
                m.index.shadowing(&c.name, c.in_function)
            };
            let accessor = if c.member {
                // A method call is configuration, unless it reads through a
                // registry (`reg.read(name, d)`, `reg.reader?.(name, d)`).
                self.registries.member_kind(ci, mi, c)
            } else if shadowing == Some(DefKind::Param) {
                // A parameter of the same name as an outer getter is not
                // that getter (a bundled library's `e("__assign", …)`
                // inside `function (e) {…}`); a local with a value is the
                // classifier's to read (`let {getter: e} = require(…)`).
                AccessorKind::Other
            } else {
                self.cls.kind(mi, &c.name)
            };
            let kind = match accessor {
                AccessorKind::Getter => FlagKind::Feature,
                AccessorKind::Logger => FlagKind::Event,
                AccessorKind::Other => FlagKind::Config,
            };
            // Whatever its prefix, a name a getter reads is a flag; other
            // names count only with the flag prefix. Without the prefix the
            // getter must be the outer one itself: a local of the same name
            // (`let t = (k) => o[k]`, `let {track: r} = ctx`) is read by
            // name only, which is no evidence for a name of any shape.
            if !is_flag_name(&flag) && (kind != FlagKind::Feature || shadowing.is_some()) {
                continue;
            }
            if a0.string().is_some() {
                at_call.insert(a0.lo, ci_);
            }
            if kind != FlagKind::Config {
                *self
                    .accessor_sites
                    .entry((mi, c.name.to_string()))
                    .or_default() += 1;
            }
            let default = (kind == FlagKind::Feature)
                .then(|| c.arg1.as_ref().map(|a| default_of(&mut self.ev, mi, m, a)))
                .flatten();
            self.sites.entry(flag).or_default().push(site(
                m,
                c.lo,
                kind,
                Some(c.name.to_string()),
                default,
                constant,
                self.originals,
            ));
        }
        at_call
    }
}

/// One row per flag name: its kind (its strongest use), its defaults and
/// getters; and how many flags are of each kind.
fn flags_of(sites: BTreeMap<String, Vec<FlagSite>>) -> (Vec<Flag>, BTreeMap<String, usize>) {
    let mut flags = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (name, sites) in sites {
        let kind = sites
            .iter()
            .map(|s| s.kind)
            .min()
            .unwrap_or(FlagKind::Other);
        let mut defaults: Vec<serde_json::Value> = Vec::new();
        let mut getters: Vec<String> = Vec::new();
        for s in sites.iter().filter(|s| s.kind == FlagKind::Feature) {
            if let Some(d) = &s.default
                && !defaults.contains(d)
            {
                defaults.push(d.clone());
            }
            if let Some(g) = &s.via
                && !getters.contains(g)
            {
                getters.push(g.clone());
            }
        }
        *counts.entry(kind.as_str().to_string()).or_default() += 1;
        flags.push(Flag {
            name,
            kind,
            defaults,
            getters,
            sites,
        });
    }
    (flags, counts)
}

/// One row per accessor function, however many chunks import it under
/// local names, most sites first.
fn accessor_rows(
    ci: &CodeIndex,
    cls: &mut Classifier,
    accessor_sites: HashMap<(usize, String), usize>,
    originals: &HashMap<(&str, &str), &str>,
) -> Vec<Accessor> {
    let mut by_target: HashMap<(usize, Option<FnId>, String), usize> = HashMap::new();
    for ((mi, name), n) in accessor_sites {
        let key = match cls.resolve(mi, &name) {
            Some((tm, tid)) => (
                tm,
                Some(tid),
                ci.modules[tm].index.functions[tid as usize]
                    .name
                    .as_deref()
                    .map_or(name, str::to_string),
            ),
            None => (mi, None, name),
        };
        *by_target.entry(key).or_default() += n;
    }
    let mut accessors: Vec<Accessor> = by_target
        .into_iter()
        .map(|((mi, _, name), n)| {
            let module = &ci.modules[mi];
            Accessor {
                original: originals
                    .get(&(module.name.as_str(), name.as_str()))
                    .map(|s| s.to_string()),
                kind: cls.kind(mi, &name),
                module: module.name.clone(),
                name,
                sites: n,
            }
        })
        .collect();
    // Ties broken by module: the rows come out of a hash map, whose order
    // changes from run to run.
    accessors.sort_by(|a, b| {
        b.sites
            .cmp(&a.sites)
            .then(a.name.cmp(&b.name))
            .then(a.module.cmp(&b.module))
    });
    accessors
}

/// The name-shaped string module `m` binds `name` to, once
/// (`var o = "tengu_…"`).
fn string_constant<'m>(m: &'m IndexedModule, name: &str) -> Option<&'m str> {
    constant_value(m, m.index.definitions.get(name)?).map(|(_, v)| v)
}

/// The name-shaped string a name's definitions bind it to, when there is
/// one definition and its value is such a string: where the value starts,
/// and the name it holds.
fn constant_value<'m>(
    m: &'m IndexedModule,
    defs: &[crate::js::index::Definition],
) -> Option<(u32, &'m str)> {
    let [d] = defs else { return None };
    let (lo, hi) = d.value?;
    if hi - lo >= MAX_CONSTANT_BYTES {
        return None;
    }
    quoted_read_name(m.source().get(lo as usize..hi as usize)?).map(|v| (lo, v))
}

/// The name a string literal's text holds (`"tengu_x"`, `'a_b'`), when it is
/// a name flags are read by. Such a name holds no quote, so the text is one
/// quote, the name, one quote (every definition's value is tested: a byte
/// test, not a trim).
pub(super) fn quoted_read_name(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let quote = |c: u8| c == b'"' || c == b'\'';
    if b.len() < 2 || !quote(b[0]) || !quote(b[b.len() - 1]) {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    is_read_name(inner).then_some(inner)
}

fn site(
    m: &IndexedModule,
    lo: u32,
    kind: FlagKind,
    via: Option<String>,
    default: Option<serde_json::Value>,
    constant: Option<String>,
    originals: &HashMap<(&str, &str), &str>,
) -> FlagSite {
    let (raw_line, raw_col) = m.raw_pos(lo);
    let function = m.index.enclosing_function(lo).and_then(|f| {
        m.index.functions[f as usize]
            .name
            .as_deref()
            .map(str::to_string)
    });
    FlagSite {
        kind,
        module: m.name.clone(),
        raw_line,
        raw_col,
        pretty_line: m.pretty_line(lo),
        function_original: function
            .as_deref()
            .and_then(|f| originals.get(&(m.name.as_str(), f)).map(|s| s.to_string())),
        function,
        via,
        default,
        constant,
    }
}
