use super::*;
use crate::store::history::ReleaseStatus;

fn rel(v: &str) -> Release {
    Release {
        version: v.into(),
        platform: "p".into(),
        published: Some("2026-01-02T03:04:05Z".into()),
        status: ReleaseStatus::Ok,
        error: None,
        digest: None,
        modules: Some(10),
        bundle_bytes: Some(1_000_000),
        code_split: Some(false),
        bun_layout: None,
        container: None,
        current: true,
        build_id: None,
    }
}

fn series(kind: &str, name: &str, values: &[(usize, &str)]) -> ItemSeries {
    ItemSeries {
        kind: kind.into(),
        name: name.into(),
        values: values.iter().map(|(i, v)| (*i, Arc::from(*v))).collect(),
    }
}

fn input() -> SiteInput {
    let p1 = r#"{"kind":"system","text_sha256":"a1"}"#;
    let p2 = r#"{"kind":"system","text_sha256":"b2"}"#;
    let f1 = r#"{"kind":"feature","defaults":[false]}"#;
    let f2 = r#"{"kind":"feature","defaults":[true]}"#;
    SiteInput {
        primary: SiteItems {
            platform: "p".into(),
            releases: vec![rel("1.0.0"), rel("1.0.1"), rel("1.0.2")],
            items: vec![
                series("prompt", "intro", &[(0, p1), (1, p2), (2, p2)]),
                series("flag", "x_<b>", &[(0, f1), (2, f2)]),
            ],
        },
        others: Vec::new(),
        timeline: Vec::new(),
        texts: [
            (
                "a1".to_string(),
                "You are a helpful <tool>. Be brief.".to_string(),
            ),
            (
                "b2".to_string(),
                "You are a careful <tool>. Be brief.".to_string(),
            ),
        ]
        .into(),
        provenance: Provenance::default(),
        made_here: true,
    }
}

#[test]
fn a_site_has_pages_per_release_item_and_text_linked_and_escaped() {
    let (files, _) = site_files(&input(), &Previous::default());
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for p in [
        "index.html",
        "search.html",
        "search-index.js",
        "r/1.0.1.html",
        "i/prompt/intro.html",
        "i/prompt/intro/1.0.0.html",
        "i/prompt/intro/1.0.1.html",
        "k/flag.html",
    ] {
        assert!(paths.contains(&p), "{p}: {paths:?}");
    }
    let page = |p: &str| {
        String::from_utf8(files.iter().find(|f| f.path == p).unwrap().bytes.clone()).unwrap()
    };
    let r = page("r/1.0.1.html");
    assert!(r.contains("href=\"../i/prompt/intro.html\""), "{r}");
    assert!(r.contains("<del>helpful </del><ins>careful </ins>"), "{r}");
    assert!(r.contains("script-src 'self'"));
    assert!(!r.contains("<tool>") && !r.contains("x_<b>"));
    let flag = paths.iter().find(|p| p.starts_with("i/flag/x_")).unwrap();
    assert!(flag.contains('~'), "a changed name gets its hash: {flag}");
    let f = page(flag);
    assert!(f.contains("removed in"));
    assert!(f.contains("id=\"at-1-0-2\"") && f.contains("returned"));
    let t = page("i/prompt/intro/1.0.1.html");
    assert!(
        t.contains("href=\"../../../i/prompt/intro/1.0.0.html\""),
        "previous version"
    );
    let idx = page("search-index.js");
    assert!(idx.starts_with("window.CC_SEARCH=") && idx.contains("careful"));
    assert!(files.iter().all(|f| f.bytes.len() <= MAX_PAGE));
}

#[test]
fn a_second_write_keeps_what_did_not_change_and_refuses_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let first = write_site(&out, &input(), false).unwrap();
    assert_eq!((first.written, first.kept), (first.files, 0));
    let again = write_site(&out, &input(), false).unwrap();
    assert_eq!((again.written, again.kept), (0, first.files));
    // A flag whose value changes: its page, the release's, the index and
    // search index are made again; a file removed by hand is made again.
    let mut changed = input();
    changed.primary.items[1].values[1].1 = Arc::from(r#"{"kind":"feature","defaults":[1]}"#);
    std::fs::remove_file(out.join("i/prompt/intro/1.0.0.html")).unwrap();
    let third = write_site(&out, &changed, false).unwrap();
    assert!(
        third.written >= 2 && third.written < first.files / 2,
        "{third:?}"
    );
    assert!(out.join("i/prompt/intro/1.0.0.html").is_file());
    // A folder of someone else's is refused.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("index.html"), b"mine").unwrap();
    assert!(write_site(&other, &input(), false).is_err());
    assert_eq!(std::fs::read(other.join("index.html")).unwrap(), b"mine");
}
