//! Values as JavaScript has them: conversion to a string and to JSON,
//! truthiness, and reading a property.

use super::Value;

/// What a value cannot do here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// `String(f)` of a function: its text is not evaluated here.
    #[error("a function converted to a string")]
    FunctionAsString,
    /// A property this evaluator does not give (`of` describes the value).
    #[error("property {key} of {of}")]
    NoProperty { key: String, of: String },
}

/// JavaScript's Number → String for the values that occur here.
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if n == n.trunc() && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else {
        // JavaScript's rule (Number::toString): the shortest digits, in
        // plain notation for exponents from -6 to 20, else as `de±x`.
        // Rust's `{:e}` gives the same shortest digits.
        let exp_form = format!("{:e}", n.abs());
        let (mantissa, exp) = exp_form.split_once('e').unwrap_or((&exp_form, "0"));
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        let point = exp.parse::<i32>().unwrap_or(0) + 1;
        let k = digits.len() as i32;
        let sign = if n < 0.0 { "-" } else { "" };
        let body = if k <= point && point <= 21 {
            format!("{digits}{}", "0".repeat((point - k) as usize))
        } else if 0 < point && point <= 21 {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        } else if -6 < point && point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else {
            let (first, rest) = digits.split_at(1);
            let e = point - 1;
            let frac = if rest.is_empty() {
                String::new()
            } else {
                format!(".{rest}")
            };
            format!("{first}{frac}e{}{e}", if e > 0 { "+" } else { "" })
        };
        format!("{sign}{body}")
    }
}

impl Value {
    pub fn truthy(&self) -> bool {
        match self {
            Value::Undefined | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Str(s) => !s.is_empty(),
            _ => true,
        }
    }

    /// `String(v)` / template interpolation.
    pub fn to_js_string(&self) -> Result<String, ValueError> {
        Ok(match self {
            Value::Undefined => "undefined".into(),
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Num(n) => number_to_string(*n),
            Value::Str(s) => s.clone(),
            Value::Array(a) => a
                .iter()
                .map(|v| match v {
                    Value::Undefined | Value::Null => Ok(String::new()),
                    v => crate::js::depth::guard(|| v.to_js_string()),
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            Value::Object(_) => "[object Object]".into(),
            Value::Func(_) => return Err(ValueError::FunctionAsString),
        })
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(props) => props.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// To a serde value (for reports).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Undefined | Value::Func(_) => serde_json::Value::Null,
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Num(n) => {
                serde_json::Number::from_f64(*n).map_or(serde_json::Value::Null, Into::into)
            }
            Value::Str(s) => s.clone().into(),
            Value::Array(a) => a
                .iter()
                .map(|v| crate::js::depth::guard(|| v.to_json()))
                .collect(),
            Value::Object(p) => p
                .iter()
                .map(|(k, v)| (k.clone(), crate::js::depth::guard(|| v.to_json())))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
}

/// `JSON.stringify` with JavaScript's escaping; `indent` as its third argument.
pub fn json_stringify(v: &Value, indent: &str) -> Option<String> {
    let mut out = String::new();
    write_json(v, indent, 0, &mut out).then_some(out)
}

fn json_quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Returns false for `undefined`/functions at top level (stringify gives undefined).
fn write_json(v: &Value, indent: &str, level: usize, out: &mut String) -> bool {
    let nl = |out: &mut String, level: usize| {
        if !indent.is_empty() {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    };
    match v {
        Value::Undefined | Value::Func(_) => return false,
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Num(n) => out.push_str(&if n.is_finite() {
            number_to_string(*n)
        } else {
            "null".into()
        }),
        Value::Str(s) => json_quote(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                nl(out, level + 1);
                if !crate::js::depth::guard(|| write_json(x, indent, level + 1, out)) {
                    out.push_str("null");
                }
            }
            if !a.is_empty() {
                nl(out, level);
            }
            out.push(']');
        }
        Value::Object(p) => {
            out.push('{');
            let mut first = true;
            // Later duplicates of a key replace earlier ones in place.
            let mut seen: Vec<(&str, &Value)> = Vec::new();
            for (k, x) in p {
                match seen.iter_mut().find(|(sk, _)| *sk == k) {
                    Some(slot) => slot.1 = x,
                    None => seen.push((k, x)),
                }
            }
            for (k, x) in seen {
                if matches!(x, Value::Undefined | Value::Func(_)) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                nl(out, level + 1);
                json_quote(k, out);
                out.push(':');
                if !indent.is_empty() {
                    out.push(' ');
                }
                crate::js::depth::guard(|| write_json(x, indent, level + 1, out));
            }
            if !first {
                nl(out, level);
            }
            out.push('}');
        }
    }
    true
}

pub(super) fn member(obj: &Value, key: &Value) -> Result<Value, ValueError> {
    let k = key.to_js_string()?;
    Ok(match obj {
        Value::Str(s) => {
            if k == "length" {
                // String length counts UTF-16 code units.
                Value::Num(s.encode_utf16().count() as f64)
            } else if let Ok(i) = k.parse::<usize>() {
                let units: Vec<u16> = s.encode_utf16().collect();
                units.get(i).map_or(Value::Undefined, |u| {
                    Value::Str(String::from_utf16_lossy(&[*u]))
                })
            } else {
                return Err(ValueError::NoProperty {
                    key: k,
                    of: "a string".into(),
                });
            }
        }
        Value::Array(a) => {
            if k == "length" {
                Value::Num(a.len() as f64)
            } else if let Ok(i) = k.parse::<usize>() {
                a.get(i).cloned().unwrap_or(Value::Undefined)
            } else {
                return Err(ValueError::NoProperty {
                    key: k,
                    of: "an array".into(),
                });
            }
        }
        Value::Object(_) => obj.get(&k).cloned().unwrap_or(Value::Undefined),
        _ => {
            return Err(ValueError::NoProperty {
                key: k,
                of: format!("{obj:?}"),
            });
        }
    })
}
