//! A seeded generator of agent results: it reads the JSON Schema an
//! `agent()` call passes and builds a value that satisfies it, so a script
//! can be run end to end without a model.
//!
//! Choices that keep generated runs useful rather than merely valid:
//! - strings are `NAME-NNNN` with a counter shared by the whole run, so every
//!   generated string is unique and can be traced through later prompts;
//! - numbers inside an array item are that item's position, so index-like
//!   fields ("the [i] label of a candidate") point at real entries;
//! - everything random (array lengths, enum picks, booleans, optional
//!   properties) comes from a generator seeded by `--seed` and the call's
//!   index, so one call's settings never shift another call's values.
//!
//! A schema is input like any other: `minItems`, `minLength`, nesting and
//! huge `enum`/`const` values could ask for more than any run can hold. Every
//! value built is charged to the run's [`Budget`] (bytes, and the deadline
//! checked as it goes), so a generated result stops the run with
//! `memory_limit` or `timeout` instead of growing without bound.

use super::budget::{Budget, Stop};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// SplitMix64: small, fast and good enough for picking test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// A generator for one call, independent of how much others consumed.
    pub fn for_call(seed: u64, call: u64) -> Rng {
        let mut r = Rng::new(seed.wrapping_mul(0x100_0000_01b3) ^ call);
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub fn chance(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}

/// Items of every generated array of objects that share some fields with
/// the first item: "two candidates at the same (file, line)".
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Share {
    /// Property names copied from the first item.
    pub fields: Vec<String>,
    /// How many leading items share them (at least 2 to mean anything).
    pub count: usize,
}

/// How results are generated; a scenario gives defaults and per-rule
/// overrides (see docs/guide/simulate.md).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Length of every generated array (clamped to minItems/maxItems).
    pub arrays: Option<usize>,
    /// Length of arrays held by a property of this name.
    #[serde(default)]
    pub lengths: BTreeMap<String, usize>,
    /// Fixed values for properties of this name. A list given for a
    /// property whose schema is not an array is cycled through, one entry
    /// per generated value, across the whole run.
    #[serde(default)]
    pub values: BTreeMap<String, Value>,
    pub share: Option<Share>,
    /// Include optional properties always (true), never (false) or by a
    /// seeded coin (absent).
    pub optional: Option<bool>,
}

impl Settings {
    /// `over` wins field by field; maps are merged key by key.
    pub fn overlay(&self, over: &Settings) -> Settings {
        let mut lengths = self.lengths.clone();
        lengths.extend(over.lengths.clone());
        let mut values = self.values.clone();
        values.extend(over.values.clone());
        Settings {
            arrays: over.arrays.or(self.arrays),
            lengths,
            values,
            share: over.share.clone().or_else(|| self.share.clone()),
            optional: over.optional.or(self.optional),
        }
    }
}

/// Run-wide generator state: the unique-string counter and the cycle
/// positions of listed values.
#[derive(Debug, Default)]
pub struct Generator {
    strings: u64,
    cycles: BTreeMap<String, usize>,
    /// Values built, to look at the clock every so often.
    built: u64,
}

/// What one JSON value costs kept in memory (and, about, written out):
/// a node's own size plus its text. On the high side on purpose.
const NODE: usize = 32;

/// Bytes a value is charged: walks it, so call it before copying a large
/// one rather than after.
pub fn cost(v: &Value) -> usize {
    match v {
        Value::String(s) => NODE + s.len(),
        Value::Array(a) => NODE + a.iter().map(cost).sum::<usize>(),
        Value::Object(o) => {
            NODE + o
                .iter()
                .map(|(k, v)| NODE + k.len() + cost(v))
                .sum::<usize>()
        }
        _ => NODE,
    }
}

/// Charge `v` to the budget, then copy it.
fn copied(v: &Value, budget: &Budget) -> Result<Value, Stop> {
    budget.charge(cost(v))?;
    Ok(v.clone())
}

/// Deepest schema nesting followed; a self-referencing or absurd schema
/// yields null below it rather than recursing without end.
const MAX_DEPTH: usize = 32;
/// Longest array generated whatever the settings say.
const MAX_ARRAY: usize = 1000;

impl Generator {
    pub fn new() -> Generator {
        Generator::default()
    }

    /// A value for `schema`; `None` schema means the agent was asked for
    /// free text, so the result is a string. Everything built is charged to
    /// `budget`; `Err` says which limit stopped it (the budget records it).
    pub fn value(
        &mut self,
        schema: Option<&Value>,
        settings: &Settings,
        rng: &mut Rng,
        budget: &Budget,
    ) -> Result<Value, Stop> {
        match schema {
            Some(s) => self.build(s, None, None, settings, rng, 0, budget),
            None => self.string("text", budget).map(Value::String),
        }
    }

    fn string(&mut self, name: &str, budget: &Budget) -> Result<String, Stop> {
        self.strings += 1;
        let s = format!("{name}-{:04}", self.strings);
        budget.charge(NODE + s.len())?;
        Ok(s)
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &mut self,
        schema: &Value,
        name: Option<&str>,
        position: Option<usize>,
        st: &Settings,
        rng: &mut Rng,
        depth: usize,
        budget: &Budget,
    ) -> Result<Value, Stop> {
        self.built += 1;
        if self.built.is_multiple_of(64) {
            budget.tick()?;
        }
        let Some(s) = schema.as_object() else {
            // `true` / `{}`-like schemas accept anything: a string will do.
            return self
                .string(name.unwrap_or("value"), budget)
                .map(Value::String);
        };
        if depth > MAX_DEPTH {
            budget.charge(NODE)?;
            return Ok(Value::Null);
        }
        let ty = schema_type(s);
        if let Some(n) = name
            && let Some(v) = st.values.get(n)
        {
            match v {
                Value::Array(list) if ty.as_deref() != Some("array") && !list.is_empty() => {
                    let i = self.cycles.entry(n.to_string()).or_insert(0);
                    let out = copied(&list[*i % list.len()], budget)?;
                    *i += 1;
                    return Ok(out);
                }
                _ => return copied(v, budget),
            }
        }
        if let Some(c) = s.get("const") {
            return copied(c, budget);
        }
        if let Some(Value::Array(options)) = s.get("enum")
            && !options.is_empty()
        {
            return copied(
                &options[rng.range(0, options.len() as u64 - 1) as usize],
                budget,
            );
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = s.get(key)
                && !branches.is_empty()
            {
                let b = &branches[rng.range(0, branches.len() as u64 - 1) as usize];
                return self.build(b, name, position, st, rng, depth + 1, budget);
            }
        }
        if let Some(Value::Array(all)) = s.get("allOf")
            && let Some(first) = all.first()
        {
            return self.build(first, name, position, st, rng, depth + 1, budget);
        }
        budget.charge(NODE)?;
        Ok(match ty.as_deref() {
            Some("object") => self.object(s, position, st, rng, depth, budget)?,
            Some("array") => self.array(s, name, st, rng, depth, budget)?,
            Some("string") => {
                let mut v = self.string(name.unwrap_or("text"), budget)?;
                let len = |k: &str| {
                    s.get(k)
                        .and_then(Value::as_u64)
                        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                };
                let max = len("maxLength").unwrap_or(usize::MAX);
                // The length asked for, counted once (the name part is
                // ASCII, so bytes are characters): padding is charged
                // before it is allocated, never step by step.
                let want = len("minLength").unwrap_or(0).min(max);
                if v.len() < want {
                    budget.charge(want - v.len())?;
                    v.extend(std::iter::repeat_n('x', want - v.len()));
                } else if v.len() > max {
                    v.truncate(max);
                }
                Value::String(v)
            }
            Some("number") | Some("integer") => {
                let mut n = match position {
                    Some(p) => p as f64,
                    None => rng.range(0, 99) as f64,
                };
                if let Some(lo) = s.get("minimum").and_then(Value::as_f64) {
                    n = n.max(lo.ceil());
                }
                if let Some(hi) = s.get("maximum").and_then(Value::as_f64) {
                    n = n.min(hi.floor());
                }
                serde_json::Number::from_f64(n)
                    .map(|n| match n.as_f64() {
                        Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
                        _ => Value::Number(n),
                    })
                    .unwrap_or(Value::Null)
            }
            Some("boolean") => Value::Bool(rng.chance()),
            Some("null") => Value::Null,
            _ => Value::String(self.string(name.unwrap_or("value"), budget)?),
        })
    }

    fn object(
        &mut self,
        s: &Map<String, Value>,
        position: Option<usize>,
        st: &Settings,
        rng: &mut Rng,
        depth: usize,
        budget: &Budget,
    ) -> Result<Value, Stop> {
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(Value::Object(props)) = s.get("properties") {
            for (k, sub) in props {
                let include = required.contains(&k.as_str())
                    || st.values.contains_key(k)
                    || st.optional.unwrap_or_else(|| rng.chance());
                if include {
                    budget.charge(NODE + k.len())?;
                    let v = self.build(sub, Some(k), position, st, rng, depth + 1, budget)?;
                    out.insert(k.clone(), v);
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn array(
        &mut self,
        s: &Map<String, Value>,
        name: Option<&str>,
        st: &Settings,
        rng: &mut Rng,
        depth: usize,
        budget: &Budget,
    ) -> Result<Value, Stop> {
        let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(MAX_ARRAY, |m| (m as usize).min(MAX_ARRAY));
        let wanted = name
            .and_then(|n| st.lengths.get(n).copied())
            .or(st.arrays)
            .unwrap_or_else(|| rng.range(min.max(1) as u64, max.min(3) as u64) as usize);
        let len = wanted.clamp(min, max.max(min)).min(MAX_ARRAY);
        let any = Value::Bool(true);
        let items = s.get("items").unwrap_or(&any);
        let item_name = name.unwrap_or("item");
        // Items are built one by one, each charged as it is made: a
        // thousand items of a thousand items of … stop at the cap, not
        // after allocating them all.
        let mut out: Vec<Value> = Vec::new();
        for i in 0..len {
            out.push(self.build(items, Some(item_name), Some(i), st, rng, depth + 1, budget)?);
        }
        if let Some(share) = &st.share
            && let Some(Value::Object(first)) = out.first()
            && share.fields.iter().all(|f| first.contains_key(f))
        {
            let shared = share
                .fields
                .iter()
                .map(|f| Ok((f.clone(), copied(&first[f], budget)?)))
                .collect::<Result<Vec<(String, Value)>, Stop>>()?;
            for item in out.iter_mut().take(share.count).skip(1) {
                if let Value::Object(o) = item {
                    for (f, v) in &shared {
                        o.insert(f.clone(), copied(v, budget)?);
                    }
                }
            }
        }
        Ok(Value::Array(out))
    }
}

/// The schema's type: its `type` (the first non-null one of a list), else
/// inferred from `properties` or `items`.
fn schema_type(s: &Map<String, Value>) -> Option<String> {
    match s.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or_else(|| ts.iter().filter_map(Value::as_str).next())
            .map(str::to_string),
        _ if s.contains_key("properties") => Some("object".into()),
        _ if s.contains_key("items") => Some("array".into()),
        _ => None,
    }
}

/// Where `value` breaks `schema`, as `path: problem` lines (empty when it
/// conforms). Covers what agent schemas use: type, required, properties,
/// items, enum, const, min/maxItems.
pub fn validate(value: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(value, schema, "$", &mut out, 0);
    // Paths and property names come from the schema: one line each.
    for line in &mut out {
        if line.len() > 300 {
            let mut end = 300;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push('…');
        }
    }
    out
}

fn check(v: &Value, schema: &Value, path: &str, out: &mut Vec<String>, depth: usize) {
    let Some(s) = schema.as_object() else { return };
    if depth > MAX_DEPTH || out.len() >= 20 {
        return;
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(v)
    {
        out.push(format!(
            "{path}: {} is not one of {}",
            short(v),
            short(&Value::Array(options.clone()))
        ));
        return;
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        out.push(format!("{path}: expected {}", short(c)));
        return;
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let is = |t: &str| match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    };
    if !types.is_empty() && !types.iter().any(|t| is(t)) {
        out.push(format!(
            "{path}: expected {}, got {}",
            types.join(" or "),
            kind(v)
        ));
        return;
    }
    match v {
        Value::Object(o) => {
            if let Some(Value::Array(req)) = s.get("required") {
                for r in req.iter().filter_map(Value::as_str) {
                    if !o.contains_key(r) {
                        out.push(format!("{path}: missing required property {r:?}"));
                    }
                }
            }
            if let Some(Value::Object(props)) = s.get("properties") {
                for (k, sub) in props {
                    if let Some(x) = o.get(k) {
                        check(x, sub, &format!("{path}.{k}"), out, depth + 1);
                    }
                }
            }
        }
        Value::Array(a) => {
            if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                && (a.len() as u64) < min
            {
                out.push(format!(
                    "{path}: {} items, at least {min} required",
                    a.len()
                ));
            }
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                && (a.len() as u64) > max
            {
                out.push(format!("{path}: {} items, at most {max} allowed", a.len()));
            }
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    check(x, items, &format!("{path}[{i}]"), out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// A value as JSON for a message, cut after a hundred bytes or so: a
/// schema's enum or a result can be megabytes, and is written out only up
/// to the cut.
pub fn short(v: &Value) -> String {
    const MAX: usize = 100;
    struct Upto(Vec<u8>);
    impl std::io::Write for Upto {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0.len() > MAX {
                // Ends serialisation early: the rest is never produced.
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Upto(Vec::new());
    let cut = serde_json::to_writer(&mut w, v).is_err();
    let text = String::from_utf8_lossy(&w.0);
    if cut || text.len() > MAX {
        let mut end = MAX.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &text[..end])
    } else {
        text.into_owned()
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `over` laid on `base`: objects merge key by key (recursively), anything
/// else in `over` replaces what `base` had.
pub fn merge(base: Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(mut b), Value::Object(o)) => {
            for (k, v) in o {
                let merged = match b.remove(k) {
                    Some(old) => merge(old, v),
                    None => v.clone(),
                };
                b.insert(k.clone(), merged);
            }
            Value::Object(b)
        }
        (_, o) => o.clone(),
    }
}

/// One line describing a schema: its top-level shape, e.g.
/// `{candidates: [{file, line?, summary, failure_scenario}]}`.
pub fn summary(schema: &Value) -> String {
    fn go(s: &Value, depth: usize) -> String {
        let Some(o) = s.as_object() else {
            return "any".into();
        };
        if let Some(Value::Array(e)) = o.get("enum") {
            // Each option cut short, and a long list elided: the summary
            // is one line, whatever the schema holds.
            let mut parts: Vec<String> = e
                .iter()
                .take(8)
                .map(|x| match x.as_str() {
                    Some(s) if s.len() <= 40 => s.to_string(),
                    Some(s) => {
                        let mut end = 40;
                        while !s.is_char_boundary(end) {
                            end -= 1;
                        }
                        format!("{}…", &s[..end])
                    }
                    None => short(x),
                })
                .collect();
            if e.len() > 8 {
                parts.push(format!("… ({} options)", e.len()));
            }
            return parts.join("|");
        }
        match schema_type(o).as_deref() {
            Some("object") => {
                if depth >= 3 {
                    return "{…}".into();
                }
                let req: Vec<&str> = o
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let props = o.get("properties").and_then(Value::as_object);
                let fields: Vec<String> = props
                    .map(|p| {
                        p.iter()
                            .map(|(k, sub)| {
                                let opt = if req.contains(&k.as_str()) { "" } else { "?" };
                                match schema_type(sub.as_object().unwrap_or(&Map::new())).as_deref()
                                {
                                    Some("object") | Some("array") => {
                                        format!("{k}{opt}: {}", go(sub, depth + 1))
                                    }
                                    _ => format!("{k}{opt}"),
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                format!("{{{}}}", fields.join(", "))
            }
            Some("array") => format!(
                "[{}]",
                o.get("items").map_or("any".into(), |i| go(i, depth))
            ),
            Some(t) => t.to_string(),
            None => "any".into(),
        }
    }
    go(schema, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn candidates() -> Value {
        json!({"type": "object", "required": ["candidates"], "properties": {
            "candidates": {"type": "array", "items": {"type": "object",
                "required": ["file", "summary"],
                "properties": {"file": {"type": "string"}, "line": {"type": "number"},
                    "summary": {"type": "string"}}}}}})
    }

    fn roomy() -> Budget {
        Budget::new(1 << 30, std::time::Duration::from_secs(600))
    }

    #[test]
    fn generated_values_conform_and_repeat_with_the_seed() {
        let schema = json!({"type": "object", "required": ["a", "n", "e"], "properties": {
            "a": {"type": "array", "minItems": 3, "maxItems": 6, "items": {"type": "string"}},
            "n": {"type": "integer", "minimum": 5},
            "e": {"enum": ["x", "y"]},
            "o": {"type": "boolean"}}});
        for seed in 0..20 {
            let v = Generator::new()
                .value(
                    Some(&schema),
                    &Settings::default(),
                    &mut Rng::for_call(seed, 1),
                    &roomy(),
                )
                .unwrap();
            assert_eq!(validate(&v, &schema), Vec::<String>::new(), "{v}");
            let again = Generator::new()
                .value(
                    Some(&schema),
                    &Settings::default(),
                    &mut Rng::for_call(seed, 1),
                    &roomy(),
                )
                .unwrap();
            assert_eq!(v, again);
            assert!(v["n"].as_i64().unwrap() >= 5);
        }
    }

    #[test]
    fn settings_shape_arrays_values_and_shared_fields() {
        let st = Settings {
            lengths: [("candidates".to_string(), 3)].into(),
            share: Some(Share {
                fields: vec!["file".into(), "line".into()],
                count: 2,
            }),
            values: [("summary".to_string(), json!(["s1", "s2"]))].into(),
            optional: Some(true),
            ..Settings::default()
        };
        let v = Generator::new()
            .value(Some(&candidates()), &st, &mut Rng::new(1), &roomy())
            .unwrap();
        let c = v["candidates"].as_array().unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(
            (&c[0]["file"], &c[0]["line"]),
            (&c[1]["file"], &c[1]["line"])
        );
        assert_ne!(c[0]["file"], c[2]["file"]);
        assert_eq!(c[2]["line"], 2, "numbers in items are positions");
        let summaries: Vec<_> = c.iter().map(|x| x["summary"].as_str().unwrap()).collect();
        assert_eq!(summaries, vec!["s1", "s2", "s1"]);
    }

    #[test]
    fn validation_names_the_problem() {
        let bad = json!({"candidates": [{"file": 3}]});
        let issues = validate(&bad, &candidates());
        assert!(
            issues.iter().any(|i| i.contains("$.candidates[0].file")),
            "{issues:?}"
        );
        assert!(
            issues.iter().any(|i| i.contains("\"summary\"")),
            "{issues:?}"
        );
        assert_eq!(
            summary(&candidates()),
            "{candidates: [{file, line?, summary}]}"
        );
        let m = merge(
            json!({"a": 1, "b": {"c": 2, "d": 3}}),
            &json!({"b": {"c": 9}, "e": []}),
        );
        assert_eq!(m, json!({"a": 1, "b": {"c": 9, "d": 3}, "e": []}));
    }

    #[test]
    fn huge_schemas_stop_at_the_budget_and_strings_pad_in_one_step() {
        let nested = json!({"type": "array", "minItems": 1000, "items": {"type": "array",
            "minItems": 1000, "items": {"type": "array", "minItems": 1000,
            "items": {"type": "string"}}}});
        let b = Budget::new(8 << 20, std::time::Duration::from_secs(600));
        let started = std::time::Instant::now();
        let r = Generator::new().value(Some(&nested), &Settings::default(), &mut Rng::new(0), &b);
        assert_eq!(r, Err(Stop::Memory));
        assert_eq!(b.stopped(), Some(Stop::Memory));
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());

        let b = Budget::new(64 << 20, std::time::Duration::ZERO);
        let r = Generator::new().value(Some(&nested), &Settings::default(), &mut Rng::new(0), &b);
        assert_eq!(r, Err(Stop::Timeout), "the deadline is checked as it goes");

        // minLength is honoured exactly, within maxLength, and padded once.
        let b = roomy();
        let s = json!({"type": "string", "minLength": 2_000_000});
        let started = std::time::Instant::now();
        let v = Generator::new()
            .value(Some(&s), &Settings::default(), &mut Rng::new(0), &b)
            .unwrap();
        assert_eq!(v.as_str().unwrap().len(), 2_000_000);
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
        assert!(b.used() >= 2_000_000, "the padding is charged");
        let s = json!({"type": "string", "minLength": 50, "maxLength": 6});
        let v = Generator::new()
            .value(Some(&s), &Settings::default(), &mut Rng::new(0), &b)
            .unwrap();
        assert_eq!(v.as_str().unwrap().len(), 6);
        let s = json!({"type": "string", "minLength": u64::MAX});
        let b = Budget::new(1 << 20, std::time::Duration::from_secs(600));
        let r = Generator::new().value(Some(&s), &Settings::default(), &mut Rng::new(0), &b);
        assert_eq!(r, Err(Stop::Memory));

        // A huge enum option is charged before it is copied.
        let big = "e".repeat(4 << 20);
        let s = json!({"enum": [big]});
        let b = Budget::new(4 << 20, std::time::Duration::from_secs(600));
        let r = Generator::new().value(Some(&s), &Settings::default(), &mut Rng::new(0), &b);
        assert_eq!(r, Err(Stop::Memory));
        let sum = summary(&s);
        assert!(sum.len() < 100, "{}", sum.len());
        let w = validate(&json!("x"), &s);
        assert!(w[0].len() < 400, "{}", w[0].len());
    }
}
