//! `history scan`: fetch, analyse and record every release of a range.

use super::semver_key;

/// Parse a RANGE against the versions published, oldest first: `A..B`,
/// `A..`, `..B`, `all`, a comma-separated list, or one version; `latest`
/// names the newest. Versions named in a list must be published.
pub fn select_range(range: &str, published: &[String]) -> Result<Vec<String>, String> {
    let newest = published.last().cloned();
    let resolve = |v: &str| -> Result<Option<semver::Version>, String> {
        let v = v.trim();
        if v.is_empty() {
            return Ok(None);
        }
        let v = if v == "latest" {
            newest.clone().ok_or("no version is published")?
        } else {
            v.to_string()
        };
        semver::Version::parse(&v)
            .map(Some)
            .map_err(|_| format!("{v:?} is not a version (like 2.1.220)"))
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
            return Err(format!("the range {range} is empty: {l} is after {h}"));
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
        let want = resolve(v)?.ok_or_else(|| format!("empty version in {range:?}"))?;
        let found = published
            .iter()
            .find(|p| semver_key(p) == want)
            .ok_or_else(|| format!("{want} is not published"))?;
        if !out.contains(found) {
            out.push(found.clone());
        }
    }
    out.sort_by_key(|v| semver_key(v));
    Ok(out)
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
                .contains("not published")
        );
        assert!(
            select_range("2.1.20..2.1.9", &p)
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            select_range("x..", &p)
                .unwrap_err()
                .contains("not a version")
        );
    }
}
