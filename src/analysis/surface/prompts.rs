//! Every prompt the build sends to a model, with an id that stays the same
//! from one release to the next.
//!
//! A prompt is a long string or template literal written to a model: prose
//! (mostly words), addressed to the reader ("you") — or a one-sentence
//! identity ("You are …."), however short. Its kind comes from its
//! place — the property it is the value of (`prompt`, `description`,
//! `systemPrompt`, an agent definition's `whenToUse` next to it) — and, for
//! the system prompt and summaries, from how it opens. A template's
//! interpolations are its `variables`, each with the expression it comes
//! from; their values are computed at run time.
//!
//! The id is `KIND-first-words` (the first six words of the text, lower
//! case, as a slug): derived from content and place, never from minified
//! names, so an unchanged prompt keeps its id and an edit past its opening
//! words does too. Prompts whose ids collide are numbered in the order of
//! their texts' hashes.

use super::Site;
use crate::analysis::diff::lines::DiffBudget;
use crate::analysis::eval::parse_snippet;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::index::{LitKind, StringLit};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use swc_ecma_ast::Expr;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prompt {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub text: String,
    pub bytes: usize,
    pub tokens_estimate: usize,
    pub variables: Vec<Variable>,
    pub sites: Vec<Site>,
}

/// An interpolation in a prompt and the expression it comes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    pub expression: String,
}

/// The shortest text taken as a prompt.
const MIN_BYTES: usize = 200;
/// The fewest words.
const MIN_WORDS: usize = 30;
/// How much of the source before a literal is read for its place.
const PLACE_WINDOW: usize = 160;
/// How many opening words make an id.
const ID_WORDS: usize = 6;
/// The longest expression quoted for a variable.
const MAX_EXPR_CHARS: usize = 120;

/// Whether `text` reads as prose written to a model: mostly letters and
/// spaces, enough words, and addressed to "you".
fn is_prose(text: &str) -> bool {
    if text.len() < MIN_BYTES {
        return false;
    }
    // The last test wants a word "you" or "your" (in the cases below): a
    // text with none of these three has none, and most strings have none.
    let b = text.as_bytes();
    if [b"you", b"You", b"YOU"]
        .iter()
        .all(|w| memchr::memmem::find(b, *w).is_none())
    {
        return false;
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() < MIN_WORDS {
        return false;
    }
    let letters = text
        .chars()
        .filter(|c| c.is_alphabetic() || c.is_whitespace())
        .count();
    if (letters as f64) < 0.75 * text.chars().count() as f64 {
        return false;
    }
    words.iter().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphabetic());
        matches!(w, "you" | "You" | "your" | "Your" | "YOU")
    })
}

/// The longest short identity piece ("You are NAME, …."): the opening of
/// the system prompt is one sentence, shorter than other prompts.
const MAX_IDENTITY_BYTES: usize = 300;

/// Whether `text` is a prompt: prose written to a model, or a one-sentence
/// identity ("You are …") however short.
fn is_prompt(text: &str) -> bool {
    is_prose(text) || is_identity(text)
}

fn is_identity(text: &str) -> bool {
    let t = text.trim();
    t.len() <= MAX_IDENTITY_BYTES
        && t.starts_with("You are ")
        && t.split_whitespace().count() >= 5
        && t.ends_with('.')
        && !t.contains("${")
}

/// The kind of a prompt, from the property it is the value of (read in the
/// source just before it) and how it opens.
fn kind_of(before: &str, text: &str) -> &'static str {
    let t = text.trim_start();
    let lower_head: String = t.chars().take(300).collect::<String>().to_lowercase();
    if before.contains("whenToUse") || before.contains("agentType") {
        return "agent";
    }
    if before.contains("systemPrompt") || before.contains("getSystemPrompt") {
        return "agent";
    }
    if lower_head.contains("summary of the conversation")
        || lower_head.contains("summarize the conversation")
        || lower_head.contains("create a detailed summary")
        || lower_head.contains("compact")
    {
        return "compaction";
    }
    let tail: String = before.chars().filter(|c| !c.is_whitespace()).collect();
    if tail.ends_with("prompt(){return")
        || tail.ends_with("prompt:")
        || tail.ends_with("description(){return")
        || tail.ends_with("description:")
    {
        return "tool";
    }
    if t.starts_with("You are ") {
        return "system";
    }
    if lower_head.contains("workflow") {
        return "workflow";
    }
    "other"
}

/// A title: the first Markdown heading, else the first sentence, shortened.
fn title_of(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .unwrap_or_else(|| {
            let t = text.trim();
            let end = t.find(['.', '\n', ':']).unwrap_or(t.len());
            t[..end].to_string()
        });
    let short: String = line.chars().take(60).collect();
    if short.len() < line.len() {
        format!("{short}…")
    } else {
        short
    }
}

/// `kind-first-six-words`.
pub fn slug(kind: &str, text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        // `${v1}` placeholders are not words of the prompt.
        .filter(|w| {
            !(w.is_empty()
                || w.len() > 1 && w.starts_with('v') && w[1..].bytes().all(|b| b.is_ascii_digit()))
        })
        .take(ID_WORDS)
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}-{}", words.join("-"))
    }
}

/// The hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A candidate before ids are given.
struct Found {
    kind: &'static str,
    text: String,
    variables: Vec<Variable>,
    site: Site,
}

pub fn find(ci: &CodeIndex) -> Vec<Prompt> {
    let found: Vec<Found> = ci
        .modules
        .par_iter()
        .flat_map_iter(|m| {
            let inner = inner_spans(m);
            m.index
                .strings
                .iter()
                .filter(|s| is_prompt(&s.value))
                // A literal inside a template's `${…}` is part of the outer one.
                .filter(|s| !inner.iter().any(|&(lo, hi)| lo < s.lo && s.hi <= hi))
                .map(|s| found(m, s))
                .collect::<Vec<_>>()
        })
        .collect();
    // One prompt per text, with every site.
    let mut by_text: BTreeMap<String, (Found, Vec<Site>)> = BTreeMap::new();
    for f in found {
        match by_text.get_mut(&f.text) {
            Some((_, sites)) => sites.push(f.site),
            None => {
                let site = f.site.clone();
                by_text.insert(f.text.clone(), (f, vec![site]));
            }
        }
    }
    // Ids: slug, numbered in hash order where they collide.
    let mut by_slug: BTreeMap<String, Vec<(String, Found, Vec<Site>)>> = BTreeMap::new();
    for (text, (f, sites)) in by_text {
        let s = slug(f.kind, &text);
        by_slug
            .entry(s)
            .or_default()
            .push((sha256(text.as_bytes()), f, sites));
    }
    let mut out = Vec::new();
    for (s, mut group) in by_slug {
        group.sort_by(|a, b| a.0.cmp(&b.0));
        for (n, (_, f, mut sites)) in group.into_iter().enumerate() {
            sites.sort();
            let id = if n == 0 {
                s.clone()
            } else {
                format!("{s}-{}", n + 1)
            };
            out.push(Prompt {
                id,
                kind: f.kind.to_string(),
                title: title_of(&f.text),
                bytes: f.text.len(),
                // About four bytes a token for English prose.
                tokens_estimate: f.text.len().div_ceil(4),
                text: f.text,
                variables: f.variables,
                sites,
            });
        }
    }
    out
}

/// Add each tool's prompt — the text its `prompt()` returns, as `tools`
/// evaluated it — when no prompt found in the source holds it: a prompt
/// assembled from pieces (a concatenation, a call of a text helper, a
/// template whose static parts are short) is sent to the model as a
/// whole and is found by how it is used, not by the shape of one literal.
/// Its id is `tool-NAME` (the tool's public name, stable across builds);
/// each part computed at run time is a variable.
pub fn add_tool_prompts(prompts: &mut Vec<Prompt>, tools: &[super::tools::Tool]) {
    let marker = super::tools::RUNTIME;
    for t in tools {
        if t.prompt_bytes == 0 {
            continue;
        }
        // The longest static part of the description, as a probe.
        let Some(probe) = t
            .description
            .split(marker)
            .map(str::trim)
            .max_by_key(|p| p.len())
            .filter(|p| p.len() >= 20)
        else {
            continue;
        };
        let probe: String = probe.chars().take(80).collect();
        // Found in the source already.
        if prompts.iter().any(|p| p.text.contains(probe.as_str())) {
            continue;
        }
        let exprs: Vec<String> = t
            .runtime
            .iter()
            .filter_map(|r| r.strip_prefix("prompt: `"))
            .filter_map(|r| r.strip_suffix("` computed at run time"))
            .map(|e| e.chars().take(MAX_EXPR_CHARS).collect())
            .collect();
        let mut text = String::new();
        let mut variables = Vec::new();
        for (i, part) in t.description.split(marker).enumerate() {
            if i > 0 {
                let name = format!("v{i}");
                text.push_str(&format!("${{{name}}}"));
                variables.push(Variable {
                    name,
                    expression: exprs
                        .get(i - 1)
                        .cloned()
                        .unwrap_or_else(|| "computed at run time".to_string()),
                });
            }
            text.push_str(part);
        }
        let slug: String = t
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        prompts.push(Prompt {
            id: format!("tool-{slug}"),
            kind: "tool".to_string(),
            title: format!("{} tool", t.name),
            bytes: text.len(),
            tokens_estimate: text.len().div_ceil(4),
            text,
            variables,
            sites: t.sites.clone(),
        });
    }
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
}

/// The spans of the templates' `${…}` parts, from the templates that are
/// prompts themselves.
fn inner_spans(m: &IndexedModule) -> Vec<(u32, u32)> {
    m.index
        .strings
        .iter()
        .filter(|s| s.kind == LitKind::Template && is_prompt(&s.value))
        .map(|s| (s.lo, s.hi))
        .collect()
}

fn found(m: &IndexedModule, s: &StringLit) -> Found {
    let src = m.source();
    let lo = s.lo as usize;
    let mut w0 = lo.saturating_sub(PLACE_WINDOW);
    while !src.is_char_boundary(w0) {
        w0 += 1;
    }
    let before = &src[w0..lo];
    let kind = kind_of(before, &s.value);
    let (text, variables) = if s.kind == LitKind::Template {
        template(m, s).unwrap_or_else(|| (s.value.clone(), Vec::new()))
    } else {
        (s.value.clone(), Vec::new())
    };
    Found {
        kind,
        text,
        variables,
        site: Site::at(m, s.lo),
    }
}

/// A template's text with `${vN}` for each interpolation, and the
/// expressions they come from.
fn template(m: &IndexedModule, s: &StringLit) -> Option<(String, Vec<Variable>)> {
    let src = m.source().get(s.lo as usize..s.hi as usize)?;
    let e = parse_snippet(src).ok()?;
    let t = match &*e {
        Expr::Tpl(t) => t,
        Expr::TaggedTpl(t) => &t.tpl,
        _ => return None,
    };
    let mut text = String::new();
    let mut vars = Vec::new();
    for (i, q) in t.quasis.iter().enumerate() {
        let cooked = q
            .cooked
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_else(|| q.raw.to_string());
        text.push_str(&cooked);
        if let Some(x) = t.exprs.get(i) {
            use swc_common::Spanned;
            let sp = x.span();
            let (a, b) = (
                sp.lo.0.saturating_sub(1) as usize,
                sp.hi.0.saturating_sub(1) as usize,
            );
            let expr: String = src
                .get(a..b)
                .unwrap_or("?")
                .chars()
                .take(MAX_EXPR_CHARS)
                .collect();
            let name = format!("v{}", vars.len() + 1);
            text.push_str(&format!("${{{name}}}"));
            vars.push(Variable {
                name,
                expression: expr,
            });
        }
    }
    Some((text, vars))
}

/// A prompt whose text changed, by id.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangedPrompt {
    pub id: String,
    pub title: String,
    pub sha256_a: String,
    pub sha256_b: String,
    pub bytes_a: usize,
    pub bytes_b: usize,
    /// Words removed (`-`) and added (`+`), in order, shortened.
    pub words: String,
    /// Why `words` is the whole text replaced rather than aligned word by
    /// word, when it is (see `lines::DiffBudget`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coarse: Option<String>,
}

/// Prompts added, removed and changed (by id).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PromptsDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<ChangedPrompt>,
}

impl PromptsDiff {
    /// No prompt added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// How much of a word diff is kept.
const MAX_WORD_DIFF: usize = 600;

/// A short word-level diff: the words removed and added, in order, and
/// why it is coarse when it is.
pub fn word_diff(a: &str, b: &str, budget: &DiffBudget) -> (String, Option<String>) {
    let split = |s: &str| s.split_whitespace().collect::<Vec<_>>().join("\n");
    let d = crate::analysis::diff::lines::diff(
        &split(a),
        &split(b),
        crate::analysis::diff::lines::Compare::Exact,
        1,
        1,
        budget,
    );
    let mut out = String::new();
    for l in d.unified.lines() {
        let (sign, w) = match l.as_bytes().first() {
            Some(b'-') if !l.starts_with("---") => ('-', &l[1..]),
            Some(b'+') if !l.starts_with("+++") => ('+', &l[1..]),
            _ => continue,
        };
        if !out.is_empty() {
            out.push(' ');
        }
        out.push(sign);
        out.push_str(w);
        if out.len() > MAX_WORD_DIFF {
            let mut end = MAX_WORD_DIFF;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            out.push('…');
            break;
        }
    }
    (out, d.coarse)
}

pub fn diff(a: &[Prompt], b: &[Prompt], budget: &DiffBudget) -> PromptsDiff {
    let d = super::names_diff(
        a.iter().map(|p| p.id.as_str()),
        b.iter().map(|p| p.id.as_str()),
    );
    let by_id: HashMap<&str, &Prompt> = a.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut changed: Vec<ChangedPrompt> = b
        .par_iter()
        .filter_map(|pb| {
            let pa = by_id.get(pb.id.as_str())?;
            (pa.text != pb.text).then(|| {
                let (words, coarse) = word_diff(&pa.text, &pb.text, budget);
                ChangedPrompt {
                    id: pb.id.clone(),
                    title: pb.title.clone(),
                    sha256_a: sha256(pa.text.as_bytes()),
                    sha256_b: sha256(pb.text.as_bytes()),
                    bytes_a: pa.bytes,
                    bytes_b: pb.bytes,
                    words,
                    coarse,
                }
            })
        })
        .collect();
    changed.sort_by(|x, y| x.id.cmp(&y.id));
    PromptsDiff {
        added: d.added,
        removed: d.removed,
        changed,
    }
}

/// One Markdown file per prompt and an `index.json`, as `--export` writes
/// them: (relative path, bytes).
pub fn export_files(version: Option<&str>, prompts: &[Prompt]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut index = Vec::new();
    for p in prompts {
        let mut md = format!(
            "# {}\n\n- id: `{}`\n- kind: {}\n- bytes: {}\n- tokens (estimate): {}\n",
            p.title, p.id, p.kind, p.bytes, p.tokens_estimate
        );
        for v in &p.variables {
            md.push_str(&format!("- `${{{}}}`: `{}`\n", v.name, v.expression));
        }
        for s in &p.sites {
            md.push_str(&format!(
                "- site: {}:{} (offset {})\n",
                s.module, s.raw_line, s.offset
            ));
        }
        md.push_str("\n---\n\n");
        md.push_str(&p.text);
        md.push('\n');
        let file = format!("{}.md", p.id);
        index.push(serde_json::json!({
            "id": p.id,
            "title": p.title,
            "kind": p.kind,
            "bytes": p.bytes,
            "file": file,
            "sha256": sha256(md.as_bytes()),
            "text_sha256": sha256(p.text.as_bytes()),
        }));
        files.push((file, md.into_bytes()));
    }
    let index = serde_json::json!({ "version": version, "prompts": index });
    let mut json = serde_json::to_vec_pretty(&index).unwrap_or_default();
    json.push(b'\n');
    files.push(("index.json".to_string(), json));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    const LOREM: &str = "Keep your answers short and plain, and check each step you take against the files you were given before you report that the work is done, and say so when you are unsure about any part of it";

    fn src() -> String {
        format!(
            r#"var ident = "You are a test assistant of our own making. {LOREM}.";
var tool = {{ name: "Fetcher", async prompt() {{ return "Use this tool to fetch a page. {LOREM}."; }} }};
var agent = {{ agentType: "helper", whenToUse: "x", getSystemPrompt: () => `You are a helper agent working for ${{user.name}} in ${{cwd()}}. {LOREM}.` }};
var sum = "Your task is to create a detailed summary of the conversation so far. {LOREM}.";
var ui = "Press enter to continue";
var who = "You are Testbot, our own assistant.";
var code = "{}";
var again = "You are a test assistant of our own making. {LOREM}.";
"#,
            "a_b(c); ".repeat(40)
        )
    }

    fn by_kind<'a>(v: &'a [Prompt], kind: &str) -> Vec<&'a Prompt> {
        v.iter().filter(|p| p.kind == kind).collect()
    }

    #[test]
    fn prose_is_addressed_to_you() {
        let body =
            "please read the files listed below and then write a careful summary of them all. "
                .repeat(3);
        assert!(body.len() >= MIN_BYTES && body.split_whitespace().count() >= MIN_WORDS);
        assert!(!is_prose(&body), "no you");
        for w in ["you", "You", "YOU", "your", "Your"] {
            assert!(is_prose(&format!("{body}, {w} must.")), "{w}");
        }
        // "you" inside a word, or in a case the test does not take.
        assert!(!is_prose(&format!("{body} for youth")));
        assert!(!is_prose(&format!("{body} yOu")));
    }

    #[test]
    fn prompts_by_kind_with_variables_and_sites() {
        let v = find(&testjs::script(&src()));
        assert_eq!(
            v.len(),
            5,
            "{:?}",
            v.iter().map(|p| &p.id).collect::<Vec<_>>()
        );
        let sys = by_kind(&v, "system");
        assert_eq!(sys.len(), 2);
        // The short identity sentence is a system prompt too.
        assert_eq!(sys[1].id, "system-you-are-testbot-our-own-assistant");
        assert_eq!(sys[0].id, "system-you-are-a-test-assistant-of");
        // The same text twice is one prompt with two sites.
        assert_eq!(sys[0].sites.len(), 2);
        assert_eq!(sys[0].sites[0].raw_line, 1);
        assert_eq!(by_kind(&v, "tool").len(), 1);
        assert_eq!(by_kind(&v, "compaction").len(), 1);
        let agent = by_kind(&v, "agent");
        assert_eq!(agent.len(), 1);
        let a = agent[0];
        assert!(
            a.text
                .starts_with("You are a helper agent working for ${v1} in ${v2}.")
        );
        let exprs: Vec<&str> = a.variables.iter().map(|x| x.expression.as_str()).collect();
        assert_eq!(exprs, ["user.name", "cwd()"]);
        assert_eq!(a.bytes, a.text.len());
        assert_eq!(a.tokens_estimate, a.text.len().div_ceil(4));
    }

    #[test]
    fn ids_keep_through_edits_past_the_opening_and_renamed_code() {
        let a = find(&testjs::script(&src()));
        // Minified names change, words change further in, lines move.
        let edited = src()
            .replace("user.name", "q.n")
            .replace("check each step", "verify every step")
            .replace("var ", "\nlet ");
        let b = find(&testjs::script(&edited));
        let ids = |v: &[Prompt]| v.iter().map(|p| p.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
        let d = diff(&a, &b, &crate::analysis::diff::lines::DiffBudget::default());
        assert!(d.added.is_empty() && d.removed.is_empty());
        assert_eq!(d.changed.len(), 4);
        assert_eq!(a.len(), 5);
        assert!(d.changed[0].words.contains("-check") && d.changed[0].words.contains("+verify"));
        assert_ne!(d.changed[0].sha256_a, d.changed[0].sha256_b);
    }

    #[test]
    fn colliding_ids_are_numbered() {
        let s = format!(
            "var a = \"You are a test assistant of our own making. {LOREM}, one.\";\nvar b = \"You are a test assistant of our own making. {LOREM}, two.\";"
        );
        let v = find(&testjs::script(&s));
        let mut ids: Vec<&str> = v.iter().map(|p| p.id.as_str()).collect();
        ids.sort();
        assert_eq!(
            ids,
            [
                "system-you-are-a-test-assistant-of",
                "system-you-are-a-test-assistant-of-2"
            ]
        );
    }

    #[test]
    fn tool_prompts_assembled_from_pieces_are_prompts() {
        let tools = vec![
            super::super::tools::Tool {
                name: "Fetcher".into(),
                description: format!(
                    "Fetch a page with care. {} Then report what the page says in full.",
                    super::super::tools::RUNTIME
                ),
                prompt_bytes: 100,
                input_schema: serde_json::json!({}),
                summary: None,
                runtime: vec!["prompt: `limits()` computed at run time".into()],
                pieces: Vec::new(),
                variables: Vec::new(),
                sites: Vec::new(),
            },
            super::super::tools::Tool {
                name: "Helper".into(),
                description: "Use this tool to fetch a page.".into(),
                prompt_bytes: 30,
                input_schema: serde_json::json!({}),
                summary: None,
                runtime: Vec::new(),
                pieces: Vec::new(),
                variables: Vec::new(),
                sites: Vec::new(),
            },
        ];
        let mut v = find(&testjs::script(&src()));
        let n = v.len();
        add_tool_prompts(&mut v, &tools);
        // Helper's text is in a prompt already; Fetcher's is added.
        assert_eq!(v.len(), n + 1);
        let f = v.iter().find(|p| p.id == "tool-fetcher").unwrap();
        assert_eq!(f.kind, "tool");
        assert_eq!(
            f.text,
            "Fetch a page with care. ${v1} Then report what the page says in full."
        );
        assert_eq!(f.variables[0].expression, "limits()");
    }

    #[test]
    fn export_lists_each_file_with_its_hash() {
        let v = find(&testjs::script(&src()));
        let files = export_files(Some("9.9.9"), &v);
        assert_eq!(files.len(), v.len() + 1);
        let (name, index) = files.last().unwrap();
        assert_eq!(name, "index.json");
        let index: serde_json::Value = serde_json::from_slice(index).unwrap();
        assert_eq!(index["version"], "9.9.9");
        for (entry, (file, bytes)) in index["prompts"].as_array().unwrap().iter().zip(&files) {
            assert_eq!(entry["file"], file.as_str());
            assert_eq!(entry["sha256"], sha256(bytes).as_str());
        }
    }

    /// Word diffs — of prompts and of tool descriptions alike — go through
    /// the same bounds as line diffs: a text whose words are all shared but
    /// reordered, past its time; and every pair once the command's time is
    /// spent.
    #[test]
    fn a_word_diff_past_its_time_is_coarse() {
        use crate::analysis::diff::lines::DiffBudget;
        use crate::analysis::surface::tools;
        use std::time::{Duration, Instant};
        type WordDiff = fn(&str, &str, &DiffBudget) -> (String, Option<String>);
        let n = 60_000;
        let a: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
        let b: Vec<String> = (0..n).map(|i| format!("w{}", (i * 7919) % n)).collect();
        let (a, b) = (a.join(" "), b.join(" "));
        for (what, word_diff, shown) in [
            ("prompt", super::word_diff as WordDiff, "-w1 "),
            ("tool description", tools::word_diff as WordDiff, "w0"),
        ] {
            let budget = DiffBudget::new(Duration::from_millis(100), Duration::from_secs(60));
            let t = Instant::now();
            let (words, coarse) = word_diff(&a, &b, &budget);
            assert!(
                t.elapsed() < Duration::from_secs(3),
                "{what}: {:?}",
                t.elapsed()
            );
            assert!(coarse.expect("coarse").starts_with("not aligned within"));
            assert!(
                words.contains(shown) && words.len() < 10_000,
                "{what}: {}",
                words.len()
            );

            let spent = DiffBudget::new(Duration::from_secs(2), Duration::from_millis(1));
            std::thread::sleep(Duration::from_millis(5));
            let (_, coarse) = word_diff("one two three", "one two four", &spent);
            assert!(coarse.expect("coarse").contains("were spent"), "{what}");
            let (words, coarse) =
                word_diff("one two three", "one two four", &DiffBudget::default());
            assert_eq!(coarse, None, "{what}: {words}");
        }
    }
}
