//! A scan's RANGE: which published versions it names.

use super::semver_key;

/// Why a RANGE names no versions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error("no version is published")]
    NothingPublished,
    #[error("{0:?} is not a version (like 2.1.220)")]
    NotAVersion(String),
    #[error("the range {range} is empty: {lo} is after {hi}")]
    Empty {
        range: String,
        lo: semver::Version,
        hi: semver::Version,
    },
    #[error("empty version in {0:?}")]
    EmptyVersion(String),
    #[error("{0} is not published")]
    NotPublished(semver::Version),
}

/// Parse a RANGE against the versions published, oldest first: `A..B`,
/// `A..`, `..B`, `all`, a comma-separated list, or one version; `latest`
/// names the newest. Versions named in a list must be published.
pub fn select_range(range: &str, published: &[String]) -> Result<Vec<String>, RangeError> {
    let newest = published.last().cloned();
    let resolve = |v: &str| -> Result<Option<semver::Version>, RangeError> {
        let v = v.trim();
        if v.is_empty() {
            return Ok(None);
        }
        let v = if v == "latest" {
            newest.clone().ok_or(RangeError::NothingPublished)?
        } else {
            v.to_string()
        };
        semver::Version::parse(&v)
            .map(Some)
            .map_err(|_| RangeError::NotAVersion(v))
    };
    let range = range.trim();
    if range == "all" {
        return Ok(published.to_vec());
    }
    if let Some((lo, hi)) = range.split_once("..") {
        let (lo, hi) = (resolve(lo)?, resolve(hi)?);
        if let (Some(l), Some(h)) = (&lo, &hi)
            && l > h
        {
            return Err(RangeError::Empty {
                range: range.to_string(),
                lo: l.clone(),
                hi: h.clone(),
            });
        }
        return Ok(published
            .iter()
            .filter(|v| {
                let v = semver_key(v);
                lo.as_ref().is_none_or(|l| &v >= l) && hi.as_ref().is_none_or(|h| &v <= h)
            })
            .cloned()
            .collect());
    }
    let mut out = Vec::new();
    for v in range.split(',') {
        let want = resolve(v)?.ok_or_else(|| RangeError::EmptyVersion(range.to_string()))?;
        let found = published
            .iter()
            .find(|p| semver_key(p) == want)
            .ok_or(RangeError::NotPublished(want))?;
        if !out.contains(found) {
            out.push(found.clone());
        }
    }
    out.sort_by_key(|v| semver_key(v));
    Ok(out)
}

/// The versions of a RANGE that lists them (`2.1.220` or `2.1.220,2.1.260`),
/// normalised as the registry writes them; None for ranges and `latest`.
pub fn explicit_versions(range: &str) -> Option<Vec<String>> {
    if range.contains("..") || range.trim() == "all" {
        return None;
    }
    range
        .split(',')
        .map(|v| semver::Version::parse(v.trim()).ok().map(|v| v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions() -> Vec<String> {
        ["2.1.9", "2.1.10", "2.1.11", "2.1.20"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn ranges_select_by_version_number_not_text() {
        let p = versions();
        assert_eq!(
            select_range("2.1.10..2.1.11", &p).unwrap(),
            ["2.1.10", "2.1.11"]
        );
        assert_eq!(select_range("2.1.11..", &p).unwrap(), ["2.1.11", "2.1.20"]);
        assert_eq!(select_range("..2.1.10", &p).unwrap(), ["2.1.9", "2.1.10"]);
        assert_eq!(select_range("..latest", &p).unwrap(), p);
        assert_eq!(select_range("all", &p).unwrap(), p);
        assert_eq!(
            select_range("2.1.20,2.1.9", &p).unwrap(),
            ["2.1.9", "2.1.20"]
        );
        assert!(
            select_range("2.1.12", &p)
                .unwrap_err()
                .to_string()
                .contains("not published")
        );
        assert!(
            select_range("2.1.20..2.1.9", &p)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert!(
            select_range("x..", &p)
                .unwrap_err()
                .to_string()
                .contains("not a version")
        );
    }
}
