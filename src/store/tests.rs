use super::*;
use crate::bun::{Budget, BunGraph};
use crate::js::code::{CodeIndex, Depth};

const SRC: &str = r#"function greet(name) { return "hello there " + name.trim(); }
var tools = { describe(tool) { return tool.name + ": " + tool.description; } };
const later = async (x) => { await x; return "done with it: " + JSON.stringify(x); };
"#;

fn code_facts() -> CodeFacts {
    let g = BunGraph::single_js("/$bunfs/root/cli.js", SRC.as_bytes());
    let budget = Budget::new(1 << 20);
    let ci = CodeIndex::build_filtered(&g, &budget, |_| true, Depth::Shapes).unwrap();
    CodeFacts::compute(&ci, &crate::js::symbols::recover(&ci))
}

#[test]
fn code_facts_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = FactsStore::open(&FactsStore::path_in(dir.path())).unwrap();
    let code = code_facts();
    assert!(code.units.len() >= 3, "the fixture's functions: {code:?}");
    assert!(code.units.iter().all(|u| u.text_len > 0));
    assert!(code.texts.iter().any(|t| t == "hello there "));
    assert!(store.load_code("d").is_none(), "nothing stored yet");
    store.save_code("d", &code);
    let back = store.load_code("d").expect("stored");
    assert_eq!(back, code);
    assert_eq!(
        back.unit_text, code.unit_text,
        "the text is not serialised with the rest"
    );
    assert!(store.load_code("other").is_none());
}

/// Saving a build's facts of this analysis version removes the ones
/// an older (or other) version saved, of that build only.
#[test]
fn a_save_keeps_one_analysis_version_a_build() {
    let dir = tempfile::tempdir().unwrap();
    let store = FactsStore::open(&FactsStore::path_in(dir.path())).unwrap();
    let code = code_facts();
    let versions = |table: &str| -> Vec<(String, String)> {
        store
            .with(|c| {
                let mut st = c.prepare(&format!(
                    "SELECT b.digest, t.analysis_version FROM {table} t
                         JOIN builds b ON b.id = t.build_id ORDER BY 1, 2"
                ))?;
                let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.collect()
            })
            .unwrap()
    };
    for d in ["a", "b"] {
        store.save_code(d, &code);
    }
    // As an older tool would have left them.
    let left = store.with(|c| {
            c.execute_batch(
                "INSERT INTO code_facts (build_id, analysis_version, encoding, body, body_sha256, text, text_sha256)
                   SELECT build_id, 'old', encoding, body, body_sha256, text, text_sha256 FROM code_facts;
                 INSERT OR IGNORE INTO facts (build_id, analysis_version, encoding, body, body_sha256)
                   SELECT build_id, 'old', encoding, body, body_sha256 FROM code_facts;",
            )
        });
    assert!(left.is_some());
    assert_eq!(versions("code_facts").len(), 4);
    store.save_code("a", &code);
    let now = ANALYSIS_VERSION.to_string();
    assert_eq!(
        versions("code_facts"),
        [
            ("a".into(), now.clone()),
            ("b".into(), now.clone()),
            ("b".into(), "old".into())
        ]
    );
    let g = BunGraph::single_js("/$bunfs/root/cli.js", SRC.as_bytes());
    let budget = Budget::new(1 << 20);
    let facts = crate::analysis::analysed::Analysed::new(&g, &budget, "b".into(), None)
        .facts()
        .unwrap()
        .clone();
    store.save("b", &facts);
    assert_eq!(
        versions("facts"),
        [("a".into(), "old".into()), ("b".into(), now.clone())]
    );
    assert!(store.load("b").is_some());
}

#[test]
fn damaged_code_facts_are_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let store = FactsStore::open(&FactsStore::path_in(dir.path())).unwrap();
    let code = code_facts();
    store.save_code("d", &code);
    // The text overwritten: its checksum no longer matches.
    store.with(|c| c.execute("UPDATE code_facts SET text = zeroblob(length(text))", []));
    assert!(store.load_code("d").is_none());
    // A body that checks out but points outside its text (only a bug of
    // ours could write it): refused rather than trusted.
    let mut bad = code.clone();
    bad.units[0].text_start = code.unit_text.len() as u64;
    store.save_code("d", &bad);
    assert!(store.load_code("d").is_none());
    store.save_code("d", &code);
    assert_eq!(store.load_code("d"), Some(code));
}

/// A file that says it is ours (application id, schema version) but
/// whose schema holds SQL of its author's: refused when named, rebuilt
/// when it is the cache's. A view in place of a table made every query
/// run it (a recursive one hung `history list`).
#[test]
fn a_store_with_a_schema_not_ours_is_refused_or_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = FactsStore::path_in(dir.path());
    drop(FactsStore::open(&path).unwrap());
    let fresh = || {
        let _ = FactsStore::clear(&path, Ownership::Cache);
        drop(FactsStore::open(&path).unwrap());
        // The text index, made on first search, is ours too.
        Connection::open(&path)
            .unwrap()
            .execute_batch(history::TEXT_INDEX)
            .unwrap();
    };
    fresh();
    assert!(FactsStore::open_as(&path, Ownership::Named).is_ok(), "ours");
    let hostile = [
        "ALTER TABLE names RENAME TO names_real; CREATE VIEW names AS \
             WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
             SELECT n.* FROM names_real n, (SELECT max(x) FROM c);",
        "CREATE TRIGGER t AFTER INSERT ON names BEGIN SELECT 1; END;",
        "DROP TABLE changes; CREATE TABLE changes (a TEXT CHECK (length(a) > 0));",
        "CREATE TABLE extra (a);",
        "CREATE INDEX extra_idx ON items (value);",
    ];
    for sql in hostile {
        fresh();
        Connection::open(&path).unwrap().execute_batch(sql).unwrap();
        let Err(e) = FactsStore::open_as(&path, Ownership::Named) else {
            panic!("accepted: {sql}");
        };
        let msg = e.to_string();
        assert!(
            msg.contains("its schema is not this tool's"),
            "{sql}: {msg}"
        );
        let store = FactsStore::open(&path).expect("the cache's copy is rebuilt");
        drop(store);
        let c = Connection::open(&path).unwrap();
        let views: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type IN ('view', 'trigger')
                     AND name NOT LIKE 'texts_fts_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(views, 0, "rebuilt without it: {sql}");
        assert!(check_schema(&c).is_ok());
    }
}

fn facts_of_src(src: &str) -> Facts {
    // (the facts' content does not matter here, only that rows differ)
    let g = BunGraph::single_js("/$bunfs/root/cli.js", src.as_bytes());
    let budget = Budget::new(1 << 20);
    crate::analysis::analysed::Analysed::new(&g, &budget, "x".into(), None)
        .facts()
        .unwrap()
        .clone()
}

/// Only rows this machine sealed are believed: a body rewritten with
/// its hash, a row moved to another build, a store opened with another
/// key, or no key at all — each a miss; what is saved again is read.
#[test]
fn only_sealed_facts_are_believed() {
    let dir = tempfile::tempdir().unwrap();
    let path = FactsStore::path_in(dir.path());
    let store = FactsStore::open(&path).unwrap();
    let a = facts_of_src(SRC);
    let mut b = a.clone();
    b.scripts
        .insert("forged".into(), "what the forger wrote".into());
    store.save("a", &a);
    store.save("b", &b);
    assert!(store.load("a").is_some() && store.load("b").is_some());
    // b's body (and hash) written into a's row.
    let body = encode(&b).unwrap();
    let sha = hex::encode(Sha256::digest(&body));
    store.with(|c| {
        c.execute(
            "UPDATE facts SET body = ?1, body_sha256 = ?2
                 WHERE build_id = (SELECT id FROM builds WHERE digest = 'a')",
            params![body, sha],
        )
    });
    assert!(store.load("a").is_none(), "a forged row is a miss");
    assert!(
        store
            .recorded_facts("a")
            .is_some_and(|f| f.scripts.contains_key("forged")),
        "the history still reads what is recorded"
    );
    // b's seal copied too: the seal covers the digest.
    store.with(|c| {
            c.execute_batch(
                "UPDATE seals SET seal = (SELECT seal FROM seals WHERE key LIKE 'b %') WHERE key LIKE 'a %'",
            )
        });
    assert!(store.load("a").is_none(), "a seal of another build");
    store.save("a", &a);
    assert_eq!(
        format!("{:?}", store.load("a").unwrap()),
        format!("{a:?}"),
        "saved again, sealed"
    );
    drop(store);
    let other = FactsStore::open_keyed(
        &path,
        Ownership::Cache,
        Some(MachineKey::from_bytes([9; 32])),
    )
    .unwrap();
    assert!(other.load("a").is_none(), "another machine's key");
    assert!(!other.made_here());
    let keyless = FactsStore::open_keyed(&path, Ownership::Named, None).unwrap();
    assert!(keyless.load("a").is_none(), "no key, nothing believed");
    let mine = FactsStore::open(&path).unwrap();
    assert!(mine.made_here());
    assert!(mine.load("a").is_some());
}

#[test]
fn json_values_are_counted_outside_strings() {
    assert!(json_values_within(b"[1,2,3]", 4));
    assert!(!json_values_within(b"[1,2,3]", 3));
    let tricky = br#"["a,b,c,[{:", "x\"", "y"]"#;
    assert!(
        json_values_within(tricky, 4),
        "commas in strings do not count"
    );
    assert!(!json_values_within(tricky, 3));
    assert!(!json_values_within(&b"{}".repeat(10), 9));
    assert!(json_values_within(b"", 1));
}

#[test]
fn inflate_stops_at_its_limit() {
    let big = zstd::bulk::compress(&vec![b'a'; 1 << 16], 3).unwrap();
    assert_eq!(inflate(&big, 1 << 16).map(|v| v.len()), Some(1 << 16));
    assert!(inflate(&big, (1 << 16) - 1).is_none());
    assert!(inflate(b"not zstd", 1 << 16).is_none());
    // A frame without its size is inflated as it streams, within the limit.
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.include_contentsize(false).unwrap();
    std::io::Write::write_all(&mut e, &[b'a'; 1 << 16]).unwrap();
    let no_size = e.finish().unwrap();
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&no_size).ok(),
        Some(None)
    );
    assert_eq!(inflate(&no_size, 1 << 16).map(|v| v.len()), Some(1 << 16));
    assert!(inflate(&no_size, (1 << 16) - 1).is_none());
    // A frame whose declared size lies: more than its content, less.
    let mut frame = zstd::bulk::compress(&[b'a'; 1000], 3).unwrap();
    assert_eq!(inflate(&frame, 1000).map(|v| v.len()), Some(1000));
    // The size field follows the magic, the descriptor, the window byte
    // (absent in a single segment) and the dictionary id; 1000 takes two
    // bytes, stored less 256.
    let d = frame[4];
    let at = 5 + usize::from(d & 0x20 == 0) + [0, 1, 2, 4][usize::from(d & 3)];
    assert_eq!(u16::from_le_bytes([frame[at], frame[at + 1]]), 1000 - 256);
    frame[at] += 1;
    assert!(
        inflate(&frame, 1 << 16).is_none(),
        "more declared than there is"
    );
    frame[at] -= 2;
    assert!(
        inflate(&frame, 1 << 16).is_none(),
        "less declared than there is"
    );
}

/// Facts with something in both parts: a gate read through a flag, and an
/// environment variable.
const PARTS_SRC: &str = r#"var settings = () => globalThis.__s ?? {};
var readFlag = (name, dflt) => settings().cachedFeatureFlags?.[name] ?? dflt;
function demoGate() { if (!readFlag("tengu_demo_gate", !1)) return !1; return !0; }
function mode() { return process.env.CC_DEMO_MODE ?? "plain"; }
"#;

#[test]
fn a_part_of_the_facts_is_read_alone_and_a_body_is_its_four_frames() {
    use crate::analysis::surface::prompts::Prompt;
    let dir = tempfile::tempdir().unwrap();
    let store = FactsStore::open(&FactsStore::path_in(dir.path())).unwrap();
    let g = BunGraph::single_js("/$bunfs/root/cli.js", PARTS_SRC.as_bytes());
    let budget = Budget::new(1 << 20);
    let mut facts = crate::analysis::analysed::Analysed::new(&g, &budget, "p".into(), None)
        .facts()
        .unwrap()
        .clone();
    assert!(!facts.gates.is_empty(), "{facts:?}");
    assert!(!facts.surface.env.is_empty(), "{facts:?}");
    // Two prompts, one of them with quotes and a line break in its text,
    // to see each text come back under its own prompt.
    let prompt = |id: &str, text: &str| Prompt {
        id: id.into(),
        kind: "system".into(),
        title: format!("Title of {id}"),
        owner: Some("owner".into()),
        part_of: None,
        text: text.into(),
        bytes: text.len(),
        tokens_estimate: text.len() / 4,
        variables: Vec::new(),
        sites: Vec::new(),
    };
    facts.surface.prompts = vec![
        prompt("first", "You are \"one\".\nSecond line."),
        prompt("second", "Another text."),
    ];
    store.save("p", &facts);
    let whole = store.load("p").expect("stored");
    assert_eq!(format!("{whole:?}"), format!("{facts:?}"));
    let core = store.load_core("p").expect("the core alone");
    let without = Facts {
        surface: Surface::default(),
        ..whole.clone()
    };
    assert_eq!(format!("{core:?}"), format!("{without:?}"));
    let surface = store.load_surface("p").expect("the surface alone");
    assert_eq!(format!("{surface:?}"), format!("{:?}", whole.surface));
    // The outline is the surface with every prompt's text empty, and
    // nothing else changed.
    let outline = store.load_outline("p").expect("the outline");
    let mut textless = whole.surface.clone();
    for p in &mut textless.prompts {
        p.text.clear();
    }
    assert_eq!(format!("{outline:?}"), format!("{textless:?}"));
    assert_eq!(outline.prompts[0].bytes, whole.surface.prompts[0].bytes);
    // A body is its four frames and nothing else: one more, or one cut
    // short, is a miss.
    let body = store.sealed_body("p").unwrap();
    assert!(frames(&body).is_some());
    let mut longer = body.clone();
    longer.extend(zstd::bulk::compress(b"{}", 3).unwrap());
    assert!(frames(&longer).is_none());
    assert!(decode(&longer).is_none() && decode_core(&longer).is_none());
    assert!(frames(&body[..body.len() - 1]).is_none());
    let [first, ..] = frames(&body).unwrap();
    assert!(
        decode_surface(first, true).is_none() && decode_surface(first, false).is_none(),
        "one frame is not a body"
    );
    // Texts that do not pair one to one with the prompts are a miss, not
    // texts under the wrong ids.
    let [core, rest, heads, _] = frames(&body).unwrap();
    let mut short = [core, rest, heads].concat();
    short.extend(zstd::bulk::compress(br#"["only one"]"#, 3).unwrap());
    assert!(decode(&short).is_none() && decode_surface(&short, true).is_none());
    assert!(
        decode_surface(&short, false).is_some(),
        "the outline reads no text"
    );
}
