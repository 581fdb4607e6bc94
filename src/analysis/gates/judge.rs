//! Judging a gate: its flag conditions against a user's cached flag values
//! (the defaults when a value is absent).

use super::{Condition, Verdict};
use serde::{Deserialize, Serialize};

/// Cached flag values from a Claude Code config.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CachedFlags {
    pub path: Option<String>,
    pub values: std::collections::BTreeMap<String, serde_json::Value>,
    /// Why the config could not be used, if it could not.
    pub problem: Option<String>,
}

impl CachedFlags {
    /// The cached flag values of a config (its top-level JSON object, read
    /// by the source layer), under each of the flag store's keys in turn
    /// (see [`STORE_KEYS`](crate::analysis::flags::STORE_KEYS); the first
    /// key that has a flag wins). A config without any is usable, with a
    /// `problem` note: the defaults then decide.
    pub fn from_config(
        path: &str,
        config: &serde_json::Map<String, serde_json::Value>,
    ) -> CachedFlags {
        let mut c = CachedFlags {
            path: Some(path.to_string()),
            ..Default::default()
        };
        for key in crate::analysis::flags::STORE_KEYS {
            if let Some(obj) = config.get(key).and_then(|o| o.as_object()) {
                for (k, val) in obj {
                    c.values.entry(k.clone()).or_insert_with(|| val.clone());
                }
            }
        }
        if c.values.is_empty() {
            c.problem = Some(format!("{path} holds no cached flag values"));
        }
        c
    }
}

fn truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Judge a gate's conditions against cached flag values (defaults when absent).
pub fn verdict(conditions: &[Condition], cache: &CachedFlags) -> Verdict {
    let mut runtime = Vec::new();
    for c in conditions {
        match (&c.flag, c.expect) {
            (Some(flag), Some(expect)) => {
                let value = cache
                    .values
                    .get(flag)
                    .cloned()
                    .or_else(|| c.default.clone())
                    .unwrap_or(serde_json::Value::Null);
                if truthy(&value) != expect {
                    return Verdict::BlockedBy {
                        condition: c.index,
                        text: format!("{flag} = {value}"),
                    };
                }
            }
            _ => runtime.push(c.text.clone()),
        }
    }
    if runtime.is_empty() {
        Verdict::Passes
    } else {
        Verdict::DependsOnRuntimeContext {
            conditions: runtime,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn javascript_truthiness_of_cached_values() {
        for v in [json!(null), json!(false), json!(0), json!(""), json!(0.0)] {
            assert!(!truthy(&v), "{v}");
        }
        for v in [json!(true), json!(1), json!("x"), json!([]), json!({})] {
            assert!(truthy(&v), "{v}");
        }
    }
}
