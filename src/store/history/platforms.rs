//! Where the platforms differ for one item: the versions scanned on two
//! platforms or more where the item is on some of them only, or holds
//! different values on them (`history show`).

use super::{PARSED_COST, Release, StoredValue, semver_key};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// A run of consecutive versions (of those scanned on two platforms or
/// more) where the platforms differ the same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlatformSpan {
    /// The first and last versions of the run.
    pub from: String,
    pub to: String,
    /// How many versions the run holds.
    pub versions: usize,
    /// The platforms scanned at those versions that lack the item.
    pub absent_on: Vec<String>,
    /// Each value the item holds there, with the platforms that hold it
    /// (more than one value, or none listed).
    pub values: Vec<PlatformValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlatformValue {
    pub platforms: Vec<String>,
    pub value: Value,
}

/// How the platforms scanned at one version hold the item: absent on
/// some, and each distinct value with its platforms.
#[derive(PartialEq)]
struct Shape {
    absent_on: Vec<String>,
    values: Vec<(Vec<String>, std::rc::Rc<Value>)>,
}

/// A platform's releases, each with the item's value there (None: without it).
pub type OverReleases = (String, Vec<(Release, Option<StoredValue>)>);

/// The platforms scanned at one version, each with the item's value there.
type AtVersion<'a> = (String, Vec<(&'a str, Option<&'a StoredValue>)>);

/// The runs of versions where the platforms differ, from each platform's
/// releases and the item's value in each (as `history show` reads them).
/// Every value copied into the answer is charged first.
pub fn differences<E>(
    over: &[OverReleases],
    charge: &mut dyn FnMut(u64) -> Result<(), E>,
) -> Result<Vec<PlatformSpan>, E> {
    if over.len() < 2 {
        return Ok(Vec::new());
    }
    // Version → platform → value (None: scanned there, without the item).
    let mut at: BTreeMap<semver::Version, AtVersion> = BTreeMap::new();
    for (p, rows) in over {
        for (r, v) in rows {
            at.entry(semver_key(&r.version))
                .or_insert_with(|| (r.version.clone(), Vec::new()))
                .1
                .push((p.as_str(), v.as_ref()));
        }
    }
    let mut spans: Vec<PlatformSpan> = Vec::new();
    let mut last: Option<Shape> = None;
    for (version, on) in at.into_values() {
        let shape = (on.len() > 1).then(|| shape_of(&on)).flatten();
        let same = shape.is_some() && shape == last;
        match (&shape, same) {
            (Some(_), true) => {
                if let Some(s) = spans.last_mut() {
                    s.to = version;
                    s.versions += 1;
                }
            }
            (Some(sh), false) => {
                let mut values = Vec::new();
                for (platforms, v) in &sh.values {
                    let bytes = on
                        .iter()
                        .find_map(|(_, x)| x.filter(|x| x.value == *v).map(|x| x.bytes))
                        .unwrap_or(0);
                    charge(bytes * PARSED_COST + 64 * platforms.len() as u64 + 256)?;
                    values.push(PlatformValue {
                        platforms: platforms.clone(),
                        value: (**v).clone(),
                    });
                }
                charge(64 * sh.absent_on.len() as u64 + 256)?;
                spans.push(PlatformSpan {
                    from: version.clone(),
                    to: version,
                    versions: 1,
                    absent_on: sh.absent_on.clone(),
                    values,
                });
            }
            (None, _) => {}
        }
        last = shape;
    }
    Ok(spans)
}

/// The shape of one version across its platforms, None when they agree
/// (all hold one value, or none holds the item).
fn shape_of(on: &[(&str, Option<&StoredValue>)]) -> Option<Shape> {
    let mut absent_on: Vec<String> = Vec::new();
    let mut values: Vec<(Vec<String>, std::rc::Rc<Value>)> = Vec::new();
    for (p, v) in on {
        match v {
            None => absent_on.push(p.to_string()),
            Some(v) => match values.iter_mut().find(|(_, x)| **x == *v.value) {
                Some((ps, _)) => ps.push(p.to_string()),
                None => values.push((vec![p.to_string()], v.value.clone())),
            },
        }
    }
    if values.len() <= 1 && (absent_on.is_empty() || values.is_empty()) {
        return None;
    }
    absent_on.sort();
    for (ps, _) in &mut values {
        ps.sort();
    }
    values.sort_by(|a, b| a.0.cmp(&b.0));
    Some(Shape { absent_on, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rel(v: &str) -> Release {
        Release::scanned_for_tests(v)
    }

    fn platform(
        p: &str,
        rows: &[(&str, Option<Value>)],
    ) -> (String, Vec<(Release, Option<StoredValue>)>) {
        (
            p.to_string(),
            rows.iter()
                .map(|(v, x)| (rel(v), x.clone().map(StoredValue::from)))
                .collect(),
        )
    }

    #[test]
    fn runs_of_versions_where_platforms_differ() {
        let a = json!({"defaults": [false]});
        let b = json!({"defaults": [true]});
        let over = vec![
            platform(
                "darwin-arm64",
                &[
                    ("1.0.0", Some(a.clone())),
                    ("1.0.1", Some(a.clone())),
                    ("1.0.2", Some(a.clone())),
                    ("1.0.10", Some(a.clone())),
                    ("1.0.11", Some(a.clone())),
                ],
            ),
            platform(
                "win32-x64",
                &[
                    ("1.0.0", Some(a.clone())),
                    ("1.0.1", None),
                    ("1.0.2", None),
                    ("1.0.10", Some(b.clone())),
                ],
            ),
        ];
        let d = differences(&over, &mut |_| Ok::<(), ()>(())).unwrap();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            (d[0].from.as_str(), d[0].to.as_str(), d[0].versions),
            ("1.0.1", "1.0.2", 2)
        );
        assert_eq!(d[0].absent_on, ["win32-x64"]);
        assert_eq!(d[0].values.len(), 1);
        assert_eq!(d[0].values[0].platforms, ["darwin-arm64"]);
        // Versions in order of number, not text; 1.0.11 is scanned on one
        // platform only: nothing to compare.
        assert_eq!((d[1].from.as_str(), d[1].to.as_str()), ("1.0.10", "1.0.10"));
        assert!(d[1].absent_on.is_empty());
        assert_eq!(d[1].values.len(), 2);
        assert_eq!(d[1].values[1].value, b);
        // One platform: no differences.
        assert!(
            differences(&over[..1], &mut |_| Ok::<(), ()>(()))
                .unwrap()
                .is_empty()
        );
        // Every value copied is charged.
        assert!(differences(&over, &mut |_| Err(())).is_err());
    }
}
