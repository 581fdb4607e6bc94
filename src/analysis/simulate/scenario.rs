//! Scenario files: which result each `agent()` call gets. Rules match a
//! call by phase, label (globs) and prompt (regular expression); the first
//! rule that matches decides; a call no rule matches gets a generated
//! result. The format is documented in docs/guide/simulate.md.

use super::generate::Settings;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("scenario is not valid JSON: {0}")]
    Json(String),
    #[error("scenario rule {index}: {message}")]
    Rule { index: usize, message: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    seed: Option<u64>,
    #[serde(default)]
    defaults: Settings,
    #[serde(default)]
    rules: Vec<RuleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(rename = "match", default)]
    matcher: MatchFile,
    result: Option<Value>,
    /// Lay `result` over a generated value (true, the default) or use it as
    /// it is (false).
    merge: Option<bool>,
    generate: Option<Settings>,
    fail: Option<bool>,
    error: Option<String>,
    times: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchFile {
    phase: Option<String>,
    label: Option<String>,
    prompt: Option<String>,
}

/// What a matching rule does with the call.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Generate with these settings (over the scenario's defaults), then
    /// lay `literal` over it — or use `literal` alone when `merge` is off.
    Respond {
        literal: Option<Value>,
        merge: bool,
        settings: Settings,
    },
    /// The agent produced nothing: the call resolves to null, as a
    /// skipped or failed agent does.
    Fail,
    /// The agent call rejects with this message.
    Error(String),
}

#[derive(Debug)]
pub struct Rule {
    phase: Option<Regex>,
    label: Option<Regex>,
    prompt: Option<Regex>,
    pub action: Action,
    times: Option<u32>,
    used: u32,
}

#[derive(Debug, Default)]
pub struct Scenario {
    pub seed: Option<u64>,
    pub defaults: Settings,
    pub rules: Vec<Rule>,
}

/// What a call is matched on.
pub struct CallKey<'a> {
    pub phase: Option<&'a str>,
    pub label: &'a str,
    pub prompt: &'a str,
}

/// A glob (`*` any run, `?` one character) as an anchored regex.
fn glob(pattern: &str) -> Regex {
    let mut re = String::from("^");
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    Regex::new(&re).expect("an escaped glob is a valid regex")
}

impl Scenario {
    pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        let f: File = serde_json::from_str(text).map_err(|e| ScenarioError::Json(e.to_string()))?;
        let mut rules = Vec::new();
        for (index, r) in f.rules.into_iter().enumerate() {
            let err = |message: String| ScenarioError::Rule { index, message };
            let fail = r.fail.unwrap_or(false);
            let responds = r.result.is_some() || r.generate.is_some();
            let action = match (fail, r.error, responds) {
                (true, None, false) => Action::Fail,
                (false, Some(m), false) => Action::Error(m),
                (false, None, true) => Action::Respond {
                    literal: r.result,
                    merge: r.merge.unwrap_or(true),
                    settings: r.generate.unwrap_or_default(),
                },
                (false, None, false) => {
                    return Err(err(
                        "says nothing to do: give result, generate, fail or error".into(),
                    ));
                }
                _ => {
                    return Err(err(
                        "give one of fail, error, or result/generate — not several".into(),
                    ));
                }
            };
            if r.merge.is_some()
                && !matches!(
                    action,
                    Action::Respond {
                        literal: Some(_),
                        ..
                    }
                )
            {
                return Err(err("merge only applies to a result".into()));
            }
            let prompt = r
                .matcher
                .prompt
                .as_deref()
                .map(Regex::new)
                .transpose()
                .map_err(|e| err(format!("bad prompt pattern: {e}")))?;
            rules.push(Rule {
                phase: r.matcher.phase.as_deref().map(glob),
                label: r.matcher.label.as_deref().map(glob),
                prompt,
                action,
                times: r.times,
                used: 0,
            });
        }
        Ok(Scenario {
            seed: f.seed,
            defaults: f.defaults,
            rules,
        })
    }

    /// The first rule matching `key` that has uses left; counts the use.
    pub fn pick(&mut self, key: &CallKey) -> Option<(usize, &Action)> {
        let i = self.rules.iter().position(|r| {
            r.times.is_none_or(|t| r.used < t)
                && r.phase
                    .as_ref()
                    .is_none_or(|p| key.phase.is_some_and(|k| p.is_match(k)))
                && r.label.as_ref().is_none_or(|l| l.is_match(key.label))
                && r.prompt.as_ref().is_none_or(|p| p.is_match(key.prompt))
        })?;
        let r = &mut self.rules[i];
        r.used += 1;
        Some((i, &r.action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(phase: Option<&'a str>, label: &'a str, prompt: &'a str) -> CallKey<'a> {
        CallKey {
            phase,
            label,
            prompt,
        }
    }

    #[test]
    fn first_matching_rule_wins_and_times_runs_out() {
        let mut s = Scenario::parse(
            r#"{"seed": 3, "rules": [
                {"match": {"label": "find-*"}, "fail": true, "times": 1},
                {"match": {"phase": "Check", "prompt": "x+y"}, "error": "boom"},
                {"match": {"label": "find-?"}, "generate": {"arrays": 2}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(s.seed, Some(3));
        assert_eq!(s.pick(&key(None, "find-a", "")).unwrap().0, 0);
        assert_eq!(
            s.pick(&key(None, "find-a", "")).unwrap().0,
            2,
            "times: 1 is used up"
        );
        assert_eq!(
            s.pick(&key(Some("Check"), "v", "..xxy.."))
                .map(|p| p.1.clone()),
            Some(Action::Error("boom".into()))
        );
        assert!(
            s.pick(&key(None, "Check", "xxy")).is_none(),
            "phase must match"
        );
        assert!(s.pick(&key(None, "find-ab", "")).is_none());
    }

    #[test]
    fn bad_scenarios_are_refused_with_the_rule_named() {
        let e = Scenario::parse("{\"rules\": [").unwrap_err();
        assert!(matches!(e, ScenarioError::Json(_)));
        let e = Scenario::parse(r#"{"rules": [{"match": {}, "fail": true, "result": {}}]}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("scenario rule 0:"), "{e}");
        let e = Scenario::parse(r#"{"rules": [{"match": {"prompt": "("}, "fail": true}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("bad prompt pattern"), "{e}");
        let e = Scenario::parse(r#"{"rulez": []}"#).unwrap_err();
        assert!(e.to_string().contains("rulez"), "{e}");
        let e = Scenario::parse(r#"{"rules": [{"match": {}}]}"#).unwrap_err();
        assert!(e.to_string().contains("nothing to do"), "{e}");
    }
}
