//! The history views, built from values (no store): their text as
//! `history` has always printed it, their JSON, and the label of a store
//! made elsewhere.

use super::*;
use crate::store::history::{
    ChangesAnswer, Hit, ItemKind, ListedRelease, Release, ReleaseStatus, ScanResult, ScanStatus,
    Scanned, ShowAnswer, Story, Within, story,
};
use serde_json::json;

fn release(v: &str, status: ReleaseStatus, split: Option<bool>) -> Release {
    Release {
        version: v.into(),
        platform: "darwin-arm64".into(),
        published: None,
        status,
        error: None,
        digest: None,
        modules: split.map(|s| if s { 1500 } else { 15 }),
        bundle_bytes: None,
        code_split: split,
        bun_layout: None,
        container: None,
        current: true,
        build_id: None,
    }
}

fn here() -> Origin {
    Origin {
        path: "/s/facts.sqlite".into(),
        made_here: true,
        merged_from: Vec::new(),
    }
}

fn elsewhere() -> Origin {
    Origin {
        path: "/s/published.sqlite".into(),
        made_here: false,
        merged_from: Vec::new(),
    }
}

fn text(v: &impl View) -> String {
    v.terminal(&Term {
        color: false,
        width: None,
    })
    .expect("a text of its own")
}

fn list() -> ListView {
    let counts = [
        ("workflow", 1),
        ("flag", 2068),
        ("tool", 76),
        ("prompt", 850),
    ]
    .map(|(k, n)| (k.to_string(), n))
    .into();
    let mut old = release("2.1.239", ReleaseStatus::Ok, Some(false));
    old.current = false;
    ListView {
        releases: vec![
            ListedRelease {
                release: old,
                counts,
            },
            ListedRelease {
                release: release("2.1.240", ReleaseStatus::Failed, None),
                counts: Default::default(),
            },
        ],
    }
}

#[test]
fn a_list_of_two_releases_is_the_table_it_always_was() {
    assert_eq!(
        text(&list()),
        "\
version  platform      status               modules  split  workflows  flags  tools  prompts  env
-------  ------------  -------------------  -------  -----  ---------  -----  -----  -------  ---
2.1.239  darwin-arm64  ok (older analysis)       15  no             1   2068     76      850    0
2.1.240  darwin-arm64  failed                                       0      0      0        0    0
"
    );
    let empty = ListView { releases: vec![] };
    assert_eq!(
        text(&empty),
        "no release scanned yet (cc-teardown history scan RANGE)\n"
    );
    // Markdown and HTML have the same rows.
    let md = list().doc().markdown();
    assert!(md.contains("| 2.1.240 | darwin-arm64 | failed |"), "{md}");
}

#[test]
fn a_labelled_answer_has_its_keys_in_name_order_and_says_whose_store_it_is() {
    let l = Labelled {
        answer: list(),
        store: elsewhere(),
        skipped: vec!["release x y: damaged".into()],
    };
    let json = crate::report::emit::to_json(&l).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["store"],
        json!({"made_here": false, "path": "/s/published.sqlite"})
    );
    assert_eq!(v["skipped"], json!(["release x y: damaged"]));
    assert_eq!(v["releases"][1]["status"], "failed");
    let keys = |s: &str| -> Vec<usize> {
        ["\"bun_layout\"", "\"counts\"", "\"status\"", "\"version\""]
            .iter()
            .map(|k| s.find(k).unwrap())
            .collect()
    };
    let at = keys(&json);
    assert!(at.windows(2).all(|w| w[0] < w[1]), "sorted: {json}");
    assert!(json.find("\"releases\"") < json.find("\"skipped\""));
    // For a person: the label first, on every format.
    let t = text(&l);
    assert!(
        t.starts_with(
            "(history from /s/published.sqlite, a store not marked as made on this machine"
        ),
        "{t}"
    );
    assert!(t.ends_with(&text(&list())));
    assert!(
        l.doc()
            .markdown()
            .contains("a store not marked as made on this machine")
    );
    let mine = Labelled { store: here(), ..l };
    assert_eq!(text(&mine), text(&list()));
}

fn flag_story() -> ShowAnswer {
    use crate::store::history::StoredValue;
    let over: Vec<(Release, Option<StoredValue>)> = [
        ("1.0.0", None),
        (
            "1.0.1",
            Some(json!({"defaults": [false], "kind": "feature"})),
        ),
        (
            "1.0.2",
            Some(json!({"defaults": [true], "kind": "feature"})),
        ),
        ("1.0.3", None),
    ]
    .into_iter()
    .map(|(v, x)| {
        (
            release(v, ReleaseStatus::Ok, None),
            x.map(StoredValue::from),
        )
    })
    .collect();
    let s: Story = story("flag", "tengu_x", "darwin-arm64", &over, &mut |_| {
        Ok::<(), ()>(())
    })
    .unwrap();
    ShowAnswer {
        kind: ItemKind::Flag,
        name: "tengu_x".into(),
        stories: vec![s],
        differences: Vec::new(),
        similar: vec![],
    }
}

#[test]
fn a_story_reads_as_it_always_did() {
    let v = ShowView(flag_story());
    assert_eq!(v.code(), 0);
    assert_eq!(
        text(&v),
        "\
flag tengu_x on darwin-arm64 (4 releases scanned)
  first seen  1.0.1
  last seen   1.0.2
  removed in  1.0.3
  changes:
    1.0.1      added     {\"defaults\":[false],\"kind\":\"feature\"}
    1.0.2      defaults: [false] → [true]
    1.0.3      removed
"
    );
    let j = serde_json::to_value(&v).unwrap();
    assert_eq!(j["found"], true);
    assert_eq!(j["first_seen"], "1.0.1");
    assert_eq!(j["platforms_agree"], true);
    assert_eq!(j["kind"], "flag");
    // Never seen: the similar names, exit 1, and no story spelled out.
    let mut none = flag_story();
    none.stories.clear();
    none.similar = vec!["tengu_y".into()];
    let v = ShowView(none);
    assert_eq!(v.code(), 1);
    assert_eq!(
        text(&v),
        "no flag named tengu_x in the releases scanned; similar: tengu_y\n"
    );
    let j = serde_json::to_value(&v).unwrap();
    assert_eq!(
        j,
        json!({"name": "tengu_x", "kind": "flag", "found": false, "stories": [],
               "platform_differences": []})
    );
    // Where the platforms differ: said after the stories, by field.
    let mut two = flag_story();
    let mut other = two.stories[0].clone();
    other.platform = "win32-x64".into();
    two.stories.push(other);
    two.differences = vec![crate::store::history::PlatformSpan {
        from: "1.0.1".into(),
        to: "1.0.2".into(),
        versions: 2,
        absent_on: vec![],
        values: vec![
            crate::store::history::PlatformValue {
                platforms: vec!["darwin-arm64".into()],
                value: json!({"defaults": [false], "kind": "feature"}),
            },
            crate::store::history::PlatformValue {
                platforms: vec!["win32-x64".into()],
                value: json!({"defaults": [true], "kind": "feature"}),
            },
        ],
    }];
    let v = ShowView(two);
    let t = text(&v);
    assert!(
        t.ends_with(
            "where the platforms differ:\n  1.0.1 … 1.0.2 (2 releases): defaults: [false] on darwin-arm64; [true] on win32-x64\n"
        ),
        "{t}"
    );
    let j = serde_json::to_value(&v).unwrap();
    assert_eq!(j["platforms_agree"], false);
    assert_eq!(j["platform_differences"][0]["versions"], 2);
}

#[test]
fn changes_name_each_section_with_what_changed() {
    let v = ChangesView(ChangesAnswer {
        version: "1.0.1".into(),
        previous: "1.0.0".into(),
        platform: "p".into(),
        answer: json!({
            "version": "1.0.1", "previous": "1.0.0", "platform": "p",
            "flags": {"added": [{"name": "a"}, "b"], "removed": [], "count_a": 1},
            "env": {"added": [], "removed": []},
            "roles": {"both": [], "only_b": [{"role": "r"}]},
        })
        .as_object()
        .unwrap()
        .clone(),
    });
    assert_eq!(
        text(&v),
        "\
1.0.1 against 1.0.0 (p), from stored facts
  flags     added 2: a, b
  roles     new 1: r
  env       no change
"
    );
    // The JSON is the answer's object, whatever it holds.
    assert_eq!(serde_json::to_value(&v).unwrap()["flags"]["count_a"], 1);
}

#[test]
fn search_hits_are_one_line_each_and_its_json_keeps_its_order() {
    let v = SearchView {
        hits: vec![Hit {
            r#in: Within::Name,
            kind: "flag".into(),
            name: "tengu_x".into(),
            platform: "p".into(),
            versions: vec!["1.0.0".into(), "1.0.1".into(), "1.0.2".into()],
        }],
        skipped: vec![],
        store: here(),
        text: "tengu".into(),
    };
    assert_eq!(v.code(), 0);
    assert_eq!(text(&v), "flag tengu_x (name p, 3): 1.0.0 … 1.0.2\n");
    let json = crate::report::emit::to_json(&v).unwrap();
    let order: Vec<usize> = [
        "\"hits\"",
        "\"skipped\"",
        "\"store\"",
        "\"path\"",
        "\"made_here\"",
        "\"text\"",
    ]
    .iter()
    .map(|k| json.find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{json}");
    let none = SearchView {
        hits: vec![],
        store: elsewhere(),
        ..v
    };
    assert_eq!(none.code(), 1);
    assert!(
        text(&none).ends_with(")\n\"tengu\" is in no release scanned\n"),
        "{}",
        text(&none)
    );
}

#[test]
fn a_scan_says_its_counts_then_its_failures() {
    let r = |v: &str, status, error: Option<&str>| ScanResult {
        version: v.into(),
        platform: "p".into(),
        status,
        error: error.map(String::from),
        seconds: 1.0,
    };
    let v = ScanView {
        range: "1.0.0..".into(),
        platforms: vec!["p".into()],
        scanned: Scanned {
            results: vec![
                r("1.0.0", ScanStatus::Known, None),
                r("1.0.1", ScanStatus::Failed, Some("no \x1b network")),
            ],
            analysed: 0,
            known: 1,
            empty: 0,
            failed: 1,
            seconds: 2.26,
        },
        store: "/s/facts.sqlite".into(),
    };
    assert_eq!(v.code(), 1);
    assert_eq!(
        text(&v),
        "2 releases scanned: 0 analysed, 1 already known, 0 without a program, 1 failed (2.3 s)\n  failed 1.0.1 p: no \\x1b network\n"
    );
    let json = crate::report::emit::to_json(&v).unwrap();
    let order: Vec<usize> = [
        "\"range\"",
        "\"platforms\"",
        "\"results\"",
        "\"analysed\"",
        "\"seconds\": 2.26",
        "\"store\"",
    ]
    .iter()
    .map(|k| json.find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{json}");
    assert!(!json.contains("\"error\": null"), "no error: no key");
}

#[test]
fn spans_and_ellipses() {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(span(&v(&["1.0.0"])), "1.0.0");
    assert_eq!(span(&v(&["1.0.0", "1.0.1", "1.0.2"])), "1.0.0 … 1.0.2");
    assert_eq!(ellipsis(&v(&["a", "b", "c"]), 2), "a, b and 1 more");
}
