//! Every text the build sends to a model, found by where it goes.
//!
//! A text is model-facing when its value reaches a place that sends it to
//! a model (`reach` follows it through bindings, returns, calls and
//! imports): a tool's `prompt`/`description`, a parameter's
//! `.describe(…)`, an agent definition's system prompt or `whenToUse`, a
//! skill's `getPromptForCommand`, a message added for the model only
//! (`isMeta`), a request's `system`, an output style's `prompt`, a skill's
//! table of reference files. Texts that reach only the user interface,
//! the console, errors or telemetry are not prompts. The kind is the place
//! reached first; the owner (a tool's, agent's or skill's name, a file's
//! path) is read from the object that holds the place.
//!
//! The id is the first six words, lower case, as a slug (a tool's assembled
//! prompt is `tool-description-NAME`): never from minified names,
//! positions or the place reached — a piece shared by several places is
//! reached first from one in one build and from another in the next — so
//! an unchanged text keeps its id and an edit past its opening words does
//! too. Texts whose ids collide are numbered in the order of the texts.

use super::Site;
use super::reach::{Mark, Reach, Tracer};
use crate::analysis::diff::lines::DiffBudget;
use crate::analysis::eval::parse_snippet;
use crate::js::code::{CodeIndex, IndexedModule};
use crate::js::flow::Flow;
use crate::js::index::{DefKind, FnId, LitKind, StringLit, literal_chain};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use swc_atoms::Atom;
use swc_ecma_ast::Expr;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prompt {
    pub id: String,
    pub kind: String,
    pub title: String,
    /// What it belongs to, named by the build: a tool's, agent's or
    /// skill's name, a data file's path, a parameter's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The id of the assembled text this one is a piece of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_of: Option<String>,
    /// Empty in a stored surface read without its texts (an outline:
    /// [`super::Surface::from_parts`]).
    #[serde(default)]
    pub text: String,
    pub bytes: usize,
    pub tokens_estimate: usize,
    pub variables: Vec<Variable>,
    pub sites: Vec<Site>,
}

/// A prompt as stored, without its text (stored apart: see
/// [`super::Surface::stored_parts`]); read back as a [`Prompt`] whose text
/// is empty.
#[derive(Serialize)]
pub(super) struct StoredHead<'a> {
    id: &'a str,
    kind: &'a str,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    part_of: Option<&'a str>,
    bytes: usize,
    tokens_estimate: usize,
    variables: &'a [Variable],
    sites: &'a [Site],
}

impl<'a> StoredHead<'a> {
    pub(super) fn of(p: &'a Prompt) -> StoredHead<'a> {
        // Every field named: one added to `Prompt` fails to compile here
        // rather than going unstored.
        let Prompt {
            id,
            kind,
            title,
            owner,
            part_of,
            text: _,
            bytes,
            tokens_estimate,
            variables,
            sites,
        } = p;
        StoredHead {
            id,
            kind,
            title,
            owner: owner.as_deref(),
            part_of: part_of.as_deref(),
            bytes: *bytes,
            tokens_estimate: *tokens_estimate,
            variables,
            sites,
        }
    }
}

/// An interpolation in a prompt and the expression it comes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    pub expression: String,
}

/// The kinds of model-facing text, each named for the place it reaches.
pub mod kinds {
    /// A request to summarise the conversation (found by the prose rule).
    pub const COMPACTION: &str = "compaction";
    /// A workflow's text (found by the prose rule).
    pub const WORKFLOW: &str = "workflow";
    /// Prose the prose rule takes whose place it cannot name.
    pub const OTHER: &str = "other";
    /// A tool's prompt (its `prompt`/`description`), or a piece of it.
    pub const TOOL_DESCRIPTION: &str = "tool-description";
    /// A description of a tool's input (`schema.describe(…)`).
    pub const TOOL_PARAMETER: &str = "tool-parameter";
    /// An agent definition's system prompt or `whenToUse`.
    pub const AGENT: &str = "agent";
    /// A skill's or prompt command's body.
    pub const SKILL: &str = "skill";
    /// A message added to the conversation for the model only (`isMeta`).
    pub const SYSTEM_REMINDER: &str = "system-reminder";
    /// Part of a request's system prompt.
    pub const SYSTEM: &str = "system";
    /// An output style's or mode's prompt.
    pub const OUTPUT_STYLE: &str = "output-style";
    /// A reference document handed to the model (a file of a skill).
    pub const DATA: &str = "data";
}

/// How many opening words make an id.
const ID_WORDS: usize = 6;
/// The longest expression quoted for a variable.
const MAX_EXPR_CHARS: usize = 120;
/// The fewest words a text has (fewer is a name, a separator, a format).
const MIN_TEXT_WORDS: usize = 3;

/// Whether a literal's value is text at all: words, not a name, a
/// separator or a format string. Which texts are model-facing is decided
/// by where they go, not here.
fn is_text(v: &str) -> bool {
    let words = v
        .split_whitespace()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).nth(1).is_some())
        // Counting stops at enough: about a million literals are asked,
        // some of them books.
        .take(MIN_TEXT_WORDS)
        .count();
    // A template's hole is a word of its sentence (`${name} hook
    // succeeded: ${output}`).
    words >= MIN_TEXT_WORDS || (words + 1 == MIN_TEXT_WORDS && v.contains("${"))
}

/// The kind a text's own form gives when no place does: a message that
/// opens with the reminder tag (the protocol's marker for text the model
/// reads and the user does not) and holds more than the tag, or a skill
/// file (YAML front matter with `name:` and `description:`, the format
/// skills are written in).
fn kind_by_form(text: &str) -> Option<&'static str> {
    let t = text.trim_start();
    if let Some(rest) = t.strip_prefix(REMINDER_TAG) {
        let rest = rest.trim().trim_end_matches("</system-reminder>").trim();
        return is_text(rest).then_some(kinds::SYSTEM_REMINDER);
    }
    let head = front_matter(t)?;
    let has = |k: &str| head.lines().any(|l| l.starts_with(k));
    (has("name:") && has("description:")).then_some(kinds::SKILL)
}

/// The YAML front matter a text opens with (between `---` lines).
fn front_matter(text: &str) -> Option<&str> {
    let front = text.trim_start().strip_prefix("---\n")?;
    Some(&front[..front.find("\n---")?])
}

/// The `name:` of a skill file's front matter (see [`kind_by_form`]).
fn front_matter_name(text: &str) -> Option<&str> {
    let head = front_matter(text)?;
    let name = head.lines().find_map(|l| l.strip_prefix("name:"))?.trim();
    let name = name.trim_matches(|c| c == '"' || c == '\'');
    (!name.is_empty()).then_some(name)
}

/// Texts whose flow the tracer cannot follow to a model yet (through
/// members of objects, classes' fields, stores read elsewhere) are taken
/// by the earlier rule while it learns them: prose addressed to the model
/// ("you", at least 200 bytes and 30 words, mostly letters) or a
/// one-sentence identity, its kind read from the code just before it.
/// docs/guide/surface.md measures what each rule finds.
mod prose {
    use super::kinds;

    /// The shortest text taken as a prompt.
    pub(super) const MIN_BYTES: usize = 200;
    /// The fewest words.
    pub(super) const MIN_WORDS: usize = 30;
    /// How much of the source before a literal is read for its place.
    pub(super) const PLACE_WINDOW: usize = 160;

    /// Whether `text` reads as prose written to a model: mostly letters and
    /// spaces, enough words, and addressed to "you".
    pub(super) fn is_prose(text: &str) -> bool {
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
    pub(super) const MAX_IDENTITY_BYTES: usize = 300;

    /// Whether `text` is a prompt: prose written to a model, or a one-sentence
    /// identity ("You are …") however short.
    pub(super) fn is_prompt(text: &str) -> bool {
        is_prose(text) || is_identity(text)
    }

    pub(super) fn is_identity(text: &str) -> bool {
        let t = text.trim();
        t.len() <= MAX_IDENTITY_BYTES
            && t.starts_with("You are ")
            && t.split_whitespace().count() >= 5
            && t.ends_with('.')
            && !t.contains("${")
    }

    /// The kind of a prompt, from the property it is the value of (read in the
    /// source just before it) and how it opens.
    pub(super) fn kind_of(before: &str, text: &str) -> &'static str {
        let t = text.trim_start();
        let lower_head: String = t.chars().take(300).collect::<String>().to_lowercase();
        if before.contains("whenToUse") || before.contains("agentType") {
            return kinds::AGENT;
        }
        if before.contains("systemPrompt") || before.contains("getSystemPrompt") {
            return kinds::AGENT;
        }
        if lower_head.contains("summary of the conversation")
            || lower_head.contains("summarize the conversation")
            || lower_head.contains("create a detailed summary")
            || lower_head.contains("compact")
        {
            return kinds::COMPACTION;
        }
        let tail: String = before.chars().filter(|c| !c.is_whitespace()).collect();
        if tail.ends_with("prompt(){return")
            || tail.ends_with("prompt:")
            || tail.ends_with("description(){return")
            || tail.ends_with("description:")
        {
            return kinds::TOOL_DESCRIPTION;
        }
        if t.starts_with("You are ") {
            return kinds::SYSTEM;
        }
        if lower_head.contains("workflow") {
            return kinds::WORKFLOW;
        }
        kinds::OTHER
    }
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

/// `prefix-first-six-words` (lower case, `${…}` holes left out).
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

/// The first six words of a text as an id (`prompt` when it has none).
fn words_slug(text: &str) -> String {
    slug("prompt", text)
        .strip_prefix("prompt-")
        .map(str::to_string)
        .unwrap_or_else(|| "prompt".to_string())
}

/// The kinds in the order one is chosen when a text reaches several.
const KIND_ORDER: [&str; 11] = [
    kinds::TOOL_DESCRIPTION,
    kinds::TOOL_PARAMETER,
    kinds::AGENT,
    kinds::SKILL,
    kinds::SYSTEM,
    kinds::SYSTEM_REMINDER,
    kinds::OUTPUT_STYLE,
    kinds::DATA,
    kinds::COMPACTION,
    kinds::WORKFLOW,
    kinds::OTHER,
];

fn rank(kind: &str) -> usize {
    KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(KIND_ORDER.len())
}

/// A name as an id part: lower case, runs of other characters as `-`.
fn name_slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').chars().take(60).collect()
}

/// The hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Where a model-facing text goes: its kind and what owns it.
#[derive(Debug, Clone)]
struct Sink {
    kind: &'static str,
    owner: Option<String>,
    /// The tool whose prompt it is part of.
    tool: Option<String>,
}

impl Sink {
    /// A place of this kind that names no owner.
    fn of(kind: &'static str) -> Sink {
        Sink {
            kind,
            owner: None,
            tool: None,
        }
    }
}

/// A candidate before ids are given.
struct Found {
    sink: Sink,
    text: String,
    variables: Vec<Variable>,
    site: Site,
    /// The model-facing template whose `${…}` holds this text, by a hash
    /// of its text (`text_key`: the texts themselves would be copied once
    /// per piece).
    outer: Option<u64>,
}

/// The static string value of property `key` of the object at `object`.
fn key_value(m: &IndexedModule, object: u32, key: &str) -> Option<String> {
    // Literals are in start order; the object's own keys come after it.
    let from = m.index.strings.partition_point(|s| s.lo < object);
    if let Some(s) = m.index.strings[from..]
        .iter()
        .take(4096)
        .find(|s| matches!(s.flow.first(), Some(Flow::Key { key: k, object: o }) if *o == object && k == key))
    {
        return Some(s.value.to_string());
    }
    // A name bound to a literal (`{name: TOOL_NAME}`, the constant the
    // rest of the build refers to the tool by).
    let (name, at) = key_name(m, object, key)?;
    bound_string(m, name, at).map(str::to_string)
}

/// The name a key of an object is given as value (`{name: TOOL_NAME}`),
/// with the function it is read in.
fn key_name<'m>(m: &'m IndexedModule, object: u32, key: &str) -> Option<(&'m str, Option<FnId>)> {
    let from = m.index.uses.partition_point(|u| u.lo < object);
    m.index.uses[from..]
        .iter()
        .take(4096)
        .find(|u| matches!(u.flow.first(), Some(Flow::Key { key: k, object: o }) if *o == object && k == key))
        .map(|u| (u.name.as_str(), u.in_function))
}

/// [`key_value`], also through a name another chunk exports (a code-split
/// build keeps its tools' names in a chunk of constants): what an owner is
/// read with.
fn key_value_across(ci: &CodeIndex, module: u32, object: u32, key: &str) -> Option<String> {
    let m = &ci.modules[module as usize];
    if let Some(v) = key_value(m, object, key) {
        return Some(v);
    }
    let (name, _) = key_name(m, object, key)?;
    ci.import_chain(module as usize, name, REEXPORT_HOPS)
        .find_map(|(t, local)| bound_string(&ci.modules[t], local, None))
        .map(str::to_string)
}

/// How many chunks that export again what they import a name is followed
/// through.
const REEXPORT_HOPS: usize = 4;

/// The string literal `name` is bound to where it is read from `at`: the
/// binding it means (minified names are reused at every level), when it
/// is the only one in its scope.
fn bound_string<'m>(m: &'m IndexedModule, name: &str, at: Option<FnId>) -> Option<&'m str> {
    let scope = m.index.binding_scope(name, at);
    let defs = m.index.definitions.get(name)?;
    let mut own = defs
        .iter()
        .filter(|d| d.kind != DefKind::Assign && d.in_function == scope);
    let (Some(def), None) = (own.next(), own.next()) else {
        return None;
    };
    let (lo, hi) = def.value?;
    let i = m.index.strings.binary_search_by_key(&lo, |s| s.lo).ok()?;
    let s = &m.index.strings[i];
    (s.hi == hi && s.kind == LitKind::String).then_some(&*s.value)
}

/// Whether an object is a failed validation of a tool's input: `result`
/// (the literal `false`, `!1` minified) and `message`, and at most an
/// error code and metadata beside them.
fn is_failed_validation(m: &IndexedModule, object: u32, keys: &[Atom]) -> bool {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if !(has("result") && has("message"))
        || keys
            .iter()
            .any(|k| !matches!(k.as_ref(), "result" | "message" | "errorCode" | "meta"))
    {
        return false;
    }
    // The object's own text up to its first value: `{result:!1,` (the
    // key first, as the build writes it; a value of `result` that is not
    // the literal is a different object).
    let src = m.source().as_bytes();
    let Some(rest) = src.get(object as usize..) else {
        return false;
    };
    let mut words = rest
        .strip_prefix(b"{")
        .unwrap_or(&[])
        .split(|b| matches!(b, b':' | b','))
        .map(|w| w.trim_ascii());
    words.next() == Some(b"result".as_slice())
        && matches!(words.next(), Some(b"!1") | Some(b"false"))
}

/// Whether an object has the shape of a tool: a name, and a prompt or an
/// input schema or a call.
fn is_tool(keys: &[Atom]) -> bool {
    let has = |k: &str| keys.iter().any(|x| x == k);
    has("name")
        && (has("inputSchema") || has("input_schema") || has("call"))
        && (has("prompt") || has("description"))
}

/// The methods of a tool's interface besides `call`: an object with a
/// `call` and one of these is a tool, or one of a tool's actions that its
/// `call` hands the work to (`{description, getToolUseSummary, call}`).
const TOOL_METHODS: [&str; 6] = [
    "getToolUseSummary",
    "checkPermissions",
    "validateInput",
    "userFacingName",
    "mapToolResultToToolResultBlockParam",
    "inputSchema",
];

/// How many calls down from a tool's `call` a function still runs for
/// it (its own helpers; further, helpers shared with everything else).
const TOOL_CALL_DEPTH: u8 = 1;

/// Which functions run for a tool's call, per module (indexed by
/// [`FnId`]): the `call` methods of tool-shaped objects, and the functions
/// they call, up to [`TOOL_CALL_DEPTH`] calls down — in their own module
/// or, called by an imported name, in the chunk that exports it (an import
/// is no call: in one bundle that function is the module's own).
fn tool_call_functions(ci: &CodeIndex) -> Vec<Vec<bool>> {
    let mut runs: Vec<Vec<bool>> = ci
        .modules
        .iter()
        .map(|m| vec![false; m.index.functions.len()])
        .collect();
    let mut frontier: Vec<(usize, FnId)> = Vec::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        let ix = &m.index;
        for (i, f) in ix.functions.iter().enumerate() {
            let Some(Flow::Key { key, object }) = f.flow.first() else {
                continue;
            };
            if key != "call" {
                continue;
            }
            let keys = ix.object_keys(*object);
            if is_tool(keys) || keys.iter().any(|k| TOOL_METHODS.contains(&k.as_str())) {
                runs[mi][i] = true;
                frontier.push((mi, i as FnId));
            }
        }
    }
    for _ in 0..TOOL_CALL_DEPTH {
        let mut next = Vec::new();
        for (mi, f) in frontier {
            let ix = &ci.modules[mi].index;
            let fun = &ix.functions[f as usize];
            for c in ix.calls_within(fun.body_lo, fun.hi) {
                if c.member {
                    continue;
                }
                // The function the name means where it is called: minified
                // code reuses names in every scope, so the function of that
                // name must be declared in the scope of the call's binding;
                // else the name is an import's.
                let local = ix
                    .function_named(&c.name)
                    .filter(|(_, callee)| callee.parent == ix.binding_scope(&c.name, c.in_function))
                    .map(|(g, _)| (mi, g));
                let callee = local.or_else(|| {
                    ci.import_named(mi, &c.name)?;
                    ci.resolve_function(mi, &c.name)
                });
                if let Some((t, g)) = callee
                    && !runs[t][g as usize]
                {
                    runs[t][g as usize] = true;
                    next.push((t, g));
                }
            }
        }
        frontier = next;
    }
    runs
}

/// Whether a literal is thrown as it is: `throw new E(text)`, `throw text`.
fn is_thrown(s: &StringLit) -> bool {
    match s.flow.first() {
        Some(Flow::Throw) => true,
        Some(Flow::Arg {
            index: 0,
            new: true,
            ..
        }) => matches!(s.flow.get(1), Some(Flow::Throw)),
        _ => false,
    }
}

/// Whether code in `at` runs in one of the functions of `runs` (or in a
/// function nested in one).
fn runs_in(m: &IndexedModule, at: Option<FnId>, runs: &[bool]) -> bool {
    m.index
        .innermost(at, |f| runs.get(f as usize).copied().unwrap_or(false))
        .is_some()
}

/// Whether a key names a file (a skill's bundled reference documents are
/// tables of path → text).
fn is_file_key(k: &str) -> bool {
    let Some((stem, ext)) = k.rsplit_once('.') else {
        return false;
    };
    // A path (`dir/file.ext`), or a file name with a document's extension:
    // `theme.set` is an operation's name, not a file.
    let document = matches!(
        ext,
        "md" | "txt"
            | "html"
            | "css"
            | "json"
            | "yaml"
            | "yml"
            | "js"
            | "mjs"
            | "cjs"
            | "ts"
            | "py"
            | "sh"
    );
    !stem.is_empty()
        && (1..=5).contains(&ext.len())
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        && k.bytes().all(|b| b.is_ascii_graphic())
        && (k.contains('/') || document)
}

/// Whether `reach` gets to the session's system prompt before it gets to
/// the user: the call composing it, or the main loop's parameters
/// (`{systemPrompt, messages, userContext…}`, or a `getSystemPrompt()`
/// method) — not an agent's definition (`agentType`) nor a side request
/// (`userPrompt`), whose prompts are a task of their own.
fn reaches_session_prompt(ci: &CodeIndex, reach: &Reach) -> bool {
    reach.marks.iter().any(|(mark, hops)| {
        reach.user.is_none_or(|u| u >= *hops)
            && match mark {
                Mark::Call { .. } => true,
                Mark::Key {
                    key,
                    module,
                    object,
                    method,
                } if *hops <= FAR_HOPS
                    && matches!(key.as_str(), "getSystemPrompt" | "systemPrompt") =>
                {
                    let keys = ci.modules[*module as usize].index.object_keys(*object);
                    let has = |k: &str| keys.iter().any(|x| x == k);
                    !has("agentType") && !has("userPrompt") && is_main_loop(*method, &has)
                }
                _ => false,
            }
    })
}

/// Whether an object whose `systemPrompt` (or method `getSystemPrompt`)
/// is reached is the main loop's parameters (or a fork's, which shares
/// its context): not a bag of a helper's arguments (`{systemPrompt,
/// content, signal}`: handed on to the request that decides) nor the
/// command line's options (every flag's value, whatever flows into it).
fn is_main_loop(method: bool, has: &dyn Fn(&str) -> bool) -> bool {
    method || has("messages") || has("userContext") || has("systemContext")
}

/// The model-facing place among `reach`, nearest first.
fn sink_of(ci: &CodeIndex, reach: &Reach, delivered: &Delivered) -> Option<Sink> {
    // A schema's `.describe(…)` is a tool parameter's description when the
    // schema is a tool's input; the other schemas (a protocol's messages,
    // settings files) are not shown to a model.
    let tool_input = reach.marks.iter().any(|(m, h)| {
        *h <= TOOL_INPUT_HOPS
            && matches!(m, Mark::Key { key, .. } if key == "inputSchema" || key == "input_schema")
    });
    // A text that reaches the user (rendered, logged) before it
    // reaches a model is the user's: the far place is reached through
    // helpers shared by both.
    let user = reach.user;
    // A JSON Schema written as a literal: a property's `description`
    // under `properties`, in a tool's input schema.
    let schema_property = tool_input
        && reach
            .places()
            .any(|m| matches!(m, Mark::Key { key, .. } if key == "properties"));
    // A schema's description (`z.string().describe(…)`): it describes a
    // field; the field's place is not the text's.
    let described = reach
        .marks
        .iter()
        .any(|(m, h)| *h == 0 && matches!(m, Mark::Arg { callee, .. } if callee == "describe"));
    // A message of the model's API (`{role, content}`: a side request's
    // prompt) is where every message ends up, reminders and tool results
    // too: it decides only when no more specific place is reached.
    let mut api_message = None;
    // A message's text block (`{type: "text", text}`: a tool result's, a
    // user turn's) is more generic still: the message it is in says more
    // when it is reached. Believed only near the text, and nearer than
    // the interface (a text shown as well is the user's, whatever else it
    // is put in).
    let text_block = reach
        .generic
        .filter(|&b| b <= NEAR_HOPS && user.is_none_or(|u| b < u))
        .map(|_| Sink::of(kinds::SYSTEM_REMINDER));
    for (mark, hops) in reach.nearest() {
        if user.is_some_and(|u| u < hops) {
            return api_message.or(text_block);
        }
        // The generic places (a message's content, a command's result, a
        // style's prompt, a file table) are believed only near the text:
        // far away, the trace has passed through helpers that hand
        // values to the user interface and to the model alike.
        let near = hops <= NEAR_HOPS;
        match mark {
            Mark::Arg { callee, .. } if callee == "describe" && tool_input => {
                return Some(Sink {
                    kind: kinds::TOOL_PARAMETER,
                    owner: None,
                    tool: None,
                });
            }
            Mark::Key {
                key,
                module,
                object,
                method,
            } => {
                let m = &ci.modules[*module as usize];
                let keys = m.index.object_keys(*object);
                let has = |k: &str| keys.iter().any(|x| x == k);
                let owner = |k: &str| key_value_across(ci, *module, *object, k);
                let sink = |kind, owner| {
                    Some(Sink {
                        kind,
                        owner,
                        tool: None,
                    })
                };
                match key.as_str() {
                    "description" if schema_property && !is_tool(keys) => {
                        return sink(kinds::TOOL_PARAMETER, None);
                    }
                    // A tool's `description` is its prompt only when it
                    // has no `prompt` (then it describes a call to the user).
                    "description" if is_tool(keys) && has("prompt") => {}
                    "prompt" | "description" if hops <= FAR_HOPS && is_tool(keys) => {
                        let name = owner("name");
                        return Some(Sink {
                            kind: kinds::TOOL_DESCRIPTION,
                            owner: name.clone(),
                            tool: name,
                        });
                    }
                    "prompt" if *method && hops <= FAR_HOPS => {
                        return sink(kinds::TOOL_DESCRIPTION, owner("name"));
                    }
                    // A tool's steer for an input its schema refused
                    // (`validationErrorSteer(input, error)`): the runner
                    // puts what it returns in the call's error, which the
                    // model reads, as a failed validation's message.
                    "validationErrorSteer" if *method && hops <= FAR_HOPS => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A scheduled task's prompt (`{cron, prompt, …}`): the
                    // session's next turn when it fires, as a queued
                    // prompt is.
                    "prompt" if near && has("cron") && !described => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    "prompt" if near && !described && has("name") => {
                        return sink(kinds::OUTPUT_STYLE, owner("name"));
                    }
                    // A small bag's `prompt` with no name
                    // (`model.fork({prompt})`, `{to, prompt}`): a task
                    // handed to a model of its own, as a side request's.
                    // A bag a function returns is read back by its caller
                    // (`r.prompt`): a more specific place reached from
                    // there decides (the session's system prompt, a
                    // reminder), as for an API message.
                    "prompt" if near && !described && keys.len() <= 3 => {
                        if !m.index.object_returned(*object) {
                            return sink(kinds::AGENT, None);
                        }
                        if api_message.is_none() {
                            api_message = sink(kinds::AGENT, None);
                        }
                    }
                    // A tool's `whenToUse`: the line the listing of the
                    // tools loaded on demand gives the model beside its
                    // name.
                    "whenToUse"
                        if near
                            && has("name")
                            && (has("inputSchema") || has("input_schema") || has("call")) =>
                    {
                        return sink(kinds::TOOL_DESCRIPTION, owner("name"));
                    }
                    // (`whenToUseLean`: the shorter listing line some
                    // agents give the model instead.)
                    "getSystemPrompt" | "systemPrompt" | "whenToUse" | "whenToUseLean"
                        if has("agentType") =>
                    {
                        return sink(kinds::AGENT, owner("agentType"));
                    }
                    // A side request (`{systemPrompt, userPrompt, options}`):
                    // a task of its own, as an agent's.
                    "systemPrompt" | "userPrompt" if hops <= FAR_HOPS && has("userPrompt") => {
                        return sink(kinds::AGENT, None);
                    }
                    // The parameters of the main loop: the session's
                    // system prompt.
                    "getSystemPrompt" | "systemPrompt"
                        if hops <= FAR_HOPS && is_main_loop(*method, &has) =>
                    {
                        return sink(kinds::SYSTEM, None);
                    }
                    // A command's prompt: a skill's body is assembled by
                    // helpers (a file table, effort tiers, sections) a few
                    // calls away from the command object.
                    "getPromptForCommand" if hops <= FAR_HOPS => {
                        return sink(kinds::SKILL, owner("name"));
                    }
                    // When to use a skill: listed to the model with its name.
                    // (Not for a skill the model may not invoke: it is not
                    // listed.)
                    // A skill's description, too: the listing gives the
                    // model each skill's name, description and when to use
                    // it. (Not a built-in command's: the listing leaves
                    // those out, and the user reads it in the menu.)
                    "whenToUse" | "description"
                        if near
                            && has("getPromptForCommand")
                            && !has("disableModelInvocation")
                            && owner("source").as_deref() != Some("builtin") =>
                    {
                        return sink(kinds::SKILL, owner("name"));
                    }
                    // A forked agent's opening messages (`{promptMessages,
                    // forkLabel, querySource…}`): its task.
                    "promptMessages" if hops <= FAR_HOPS => {
                        let label = owner("forkLabel").or_else(|| owner("querySource"));
                        return sink(kinds::AGENT, label);
                    }
                    // A system message (`{type: "system", level, content,
                    // isMeta}`) is shown in the transcript, never sent: the
                    // request builder drops messages of that type.
                    "content" if near && has("isMeta") && !is_ui_message(keys, &owner) => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A prompt queued for the model's next turn (`{value,
                    // mode: "prompt", isMeta}`: a loop's tick, a scheduled
                    // fire): hidden from the transcript, read as a
                    // reminder is. Specific enough to be believed far off
                    // (the tick is chosen by helpers of another module).
                    "value" if hops <= FAR_HOPS && is_queued_for_model(keys, &owner) => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A command's hidden notes to the model, handed to its
                    // `onDone(result, {display, metaMessages})`: each becomes
                    // a meta message of the conversation (`{content,
                    // isMeta}`), read by the model, not shown.
                    "metaMessages" if near => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A tool's result (`{type: "tool_result", tool_use_id,
                    // content}`): a message the model reads, as reminders
                    // are (the catalogue files them as such).
                    "content" if near && has("tool_use_id") => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // An attachment of a type the converter hands to the
                    // model (`{type: "sandbox_instructions", content}`):
                    // its content becomes a meta message.
                    "content" if near && delivered.contains(owner("type").as_deref()) => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A result a tool hands back to the model in the MCP
                    // shape (`{content, isError}`, `{content,
                    // structuredContent}`): read as a tool result is.
                    "content" if near && (has("isError") || has("structuredContent")) => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A permission decision that denies a call: its message
                    // (or feedback) is the call's result the model reads.
                    "message" | "feedback"
                        if near && owner("behavior").as_deref() == Some("deny") =>
                    {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // A tool's input that failed its validation (`{result:
                    // false, message, errorCode}`): the message is the
                    // call's error, handed to the model in its result.
                    "message" if near && is_failed_validation(m, *object, keys) => {
                        return sink(kinds::SYSTEM_REMINDER, None);
                    }
                    // (Not an assistant's message: one made here is a
                    // stand-in — an API error, an interruption — shown in
                    // the transcript, not a prompt.)
                    "content"
                        if near
                            && has("role")
                            && api_message.is_none()
                            && owner("role").as_deref() != Some("assistant") =>
                    {
                        api_message = sink(kinds::AGENT, None);
                    }
                    "system" if hops <= FAR_HOPS && has("messages") => {
                        return sink(kinds::SYSTEM, None);
                    }
                    k if near && is_file_key(k) => return sink(kinds::DATA, Some(k.to_string())),
                    _ => {}
                }
            }
            // Handed to the call that composes the session's system
            // prompt: a section of it, however far the section engine
            // made it (specific enough to be believed at any distance).
            // Handed to a function that wraps it in the reminder tag: a
            // reminder (the tag is the protocol's marker for a text the
            // model reads and the user does not).
            Mark::Call {
                module,
                callee,
                index,
            } => {
                let kind = match (delivered.wraps(*module, callee), *index) {
                    // Believed near the text only: far off, the trace has
                    // passed through helpers (a notification's hooks, a
                    // message's formatter) that reach the wrapper with
                    // other texts.
                    (true, 0) if near => kinds::SYSTEM_REMINDER,
                    (true, _) => continue,
                    (false, _) => kinds::SYSTEM,
                };
                return Some(Sink {
                    kind,
                    owner: None,
                    tool: None,
                });
            }
            _ => {}
        }
    }
    api_message.or(text_block)
}

/// The types of the attachments the conversation hands to the model,
/// read off the converter that turns attachments into messages: a table
/// of handlers keyed by type (`{date_change: (a) => […{content, isMeta}],
/// …}`), each building a meta message — hidden from the transcript, read
/// by the model. An attachment is made far from that table (`{type:
/// "sandbox_instructions", content}`) and reaches it through the
/// conversation's list, which no trace follows; its type names the
/// handler, as a protocol's name does.
///
/// And the functions that wrap what they are handed in the reminder tag
/// (`function w(e) { return `<system-reminder>\n${e}\n</system-reminder>` }`):
/// a text handed to one is a reminder wherever the wrapped text goes on
/// to, as (module, the name it is called by there).
#[derive(Default)]
struct Delivered(BTreeSet<String>, BTreeSet<(u32, Atom)>);

/// How many handlers of meta messages make a table the converter.
const CONVERTER_HANDLERS: usize = 3;

impl Delivered {
    fn find(ci: &CodeIndex) -> Delivered {
        let mut out = BTreeSet::new();
        for m in &ci.modules {
            let ix = &m.index;
            let mut tables: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
            for f in &ix.functions {
                let Some(Flow::Key { key, object }) = f.flow.first() else {
                    continue;
                };
                let from = ix.objects.partition_point(|o| o.lo < f.body_lo);
                let builds_meta = ix.objects[from..]
                    .iter()
                    .take_while(|o| o.lo < f.hi)
                    .any(|o| {
                        let has = |k: &str| o.keys.iter().any(|x| x == k);
                        has("content") && has("isMeta")
                    });
                if builds_meta {
                    tables.entry(*object).or_default().push(key.as_str());
                }
            }
            for keys in tables.into_values() {
                if keys.len() >= CONVERTER_HANDLERS {
                    out.extend(keys.into_iter().map(str::to_string));
                }
            }
        }
        Delivered(out, reminder_wrappers(ci).into_iter().collect())
    }

    fn contains(&self, kind: Option<&str>) -> bool {
        kind.is_some_and(|k| self.0.contains(k))
    }

    /// Whether `callee`, called in `module`, is a reminder wrapper (which
    /// wraps its first argument only).
    fn wraps(&self, module: u32, callee: &Atom) -> bool {
        self.1.contains(&(module, callee.clone()))
    }
}

/// Whether an object is an entry of the queue of what the model reads
/// next: a prompt queued hidden from the transcript (`{value, mode:
/// "prompt", isMeta}`: a loop's tick, a scheduled fire), or a task's
/// notification (`{value, mode: "task-notification"}`: a background
/// task's or a hook's news, handed to the model as its next message).
fn is_queued_for_model(keys: &[Atom], value_of: &dyn Fn(&str) -> Option<String>) -> bool {
    match value_of("mode").as_deref() {
        Some("prompt") => keys.iter().any(|k| k == "isMeta"),
        Some("task-notification") => true,
        _ => false,
    }
}

/// Whether an object is a message for the transcript only: of type
/// `system`, or with a display `level`.
fn is_ui_message(keys: &[Atom], value_of: &dyn Fn(&str) -> Option<String>) -> bool {
    keys.iter().any(|k| k == "level") || value_of("type").as_deref() == Some("system")
}

/// How near the interface a text the prose rule would take must not be.
const PROSE_USER_HOPS: u8 = 2;
/// How many hops a generic place (`content`, a command's result, a style's
/// `prompt`, a file table) may be from the text.
const NEAR_HOPS: u8 = 3;
/// How many hops a specific place (a tool's prompt, the session's system
/// prompt, a request's `system`) may be from the text: the system prompt's
/// sections go through a registry of section functions, a cache and the
/// query's options (about seven hops); further, a trace has passed through
/// helpers that serve every message alike.
const FAR_HOPS: u8 = 8;
/// How far a tool's input schema may be from a schema's description (a
/// schema is built lazily, then returned by the tool's `inputSchema`).
const TOOL_INPUT_HOPS: u8 = 6;

/// Whether a place shows a text to the user or drops it: rendered
/// (`jsx(…, {children})`), logged, made a stand-in for a failed answer —
/// or makes it a command's permission rule. (Not thrown: an error is read
/// by whoever catches it, and a tool's error is its result, which the
/// model reads; a text shared by both — a policy's refusal thrown by a
/// macOS-only tool and returned elsewhere — must not change with the
/// platform.)
fn is_user_mark(ci: &CodeIndex, m: &Mark) -> bool {
    match m {
        Mark::Arg { callee, index, .. } => {
            matches!(
                callee.as_str(),
                "jsx"
                        | "jsxs"
                        | "jsxDEV"
                        | "createElement"
                        | "log"
                        | "warn"
                        | "error"
                        // A note added to the transcript as a system
                        // message: shown, never sent.
                        | "appendSystemMessage"
                        // A settings schema's documentation for the
                        // people who manage the settings.
                        | "shortDescription"
                        | "longDescription"
            ) || (*index == 1
                // The command line's `--help`: an option's description
                // (`.option(flags, text)`) and text added to the help.
                && matches!(
                    callee.as_str(),
                    "option" | "requiredOption" | "addHelpText"
                ))
        }
        // A command's permission rules: a text that becomes one is a
        // pattern the permission checker matches, whatever else the
        // command object it sits in reaches. A command's menu line, its
        // argument hint (shown beside the name as the user types it) and
        // a tool's search hint (matched locally against what the model
        // searches for, never sent) are the interface's too.
        Mark::Key {
            key,
            module,
            object,
            ..
        } => {
            matches!(
                key.as_str(),
                "children"
                    | "allowedTools"
                    | "disallowedTools"
                    | "menuDescription"
                    | "argumentHint"
                    | "searchHint"
                    // A translated message's text in the source language
                    // (`{id, defaultMessage}`): the interface's words.
                    | "defaultMessage"
            ) || {
                // An answer made up when the model's could not be had (`{content,
                // apiError}`, `{…, isApiErrorMessage}`): shown in the
                // transcript, and left out of what is sent back.
                let m = &ci.modules[*module as usize];
                let keys = m.index.object_keys(*object);
                keys.iter()
                    .any(|k| k == "apiError" || k == "isApiErrorMessage")
                    // A message for the transcript only (`{type: "system",
                    // content, level}`): shown, dropped from the request.
                    || (key == "content"
                        && is_ui_message(keys, &|k| key_value(m, *object, k)))
            }
        }
        _ => false,
    }
}

/// The keys whose values (or methods' results) reach a model, as
/// `sink_of` reads them.
const SINK_KEYS: [&str; 17] = [
    "properties",
    "whenToUseLean",
    "validationErrorSteer",
    "metaMessages",
    "promptMessages",
    "userPrompt",
    "message",
    "feedback",
    "prompt",
    "description",
    "getSystemPrompt",
    "systemPrompt",
    "whenToUse",
    "getPromptForCommand",
    "content",
    "system",
    "inputSchema",
];

/// Whether a place is a message's text block (`{type: "text", text}`): the
/// most generic place a text reaches (see [`sink_of`]).
fn is_text_block_mark(ci: &CodeIndex, m: &Mark) -> bool {
    matches!(m, Mark::Key { key, module, object, .. }
        if key == "text"
            && key_value(&ci.modules[*module as usize], *object, "type").as_deref() == Some("text"))
}

/// Whether a place can decide a text's kind (the tracer keeps no other).
fn is_sink_mark(ci: &CodeIndex, m: &Mark) -> bool {
    match m {
        Mark::Key {
            key,
            module,
            object,
            ..
        } => {
            SINK_KEYS.contains(&key.as_str())
                || key == "input_schema"
                || is_file_key(key)
                // `value` only of a queued prompt (every other object has
                // one too: kept, it would crowd out the places that decide).
                || (key == "value" && {
                    let m = &ci.modules[*module as usize];
                    let keys = m.index.object_keys(*object);
                    keys.iter().any(|k| k == "mode")
                        && is_queued_for_model(keys, &|k| key_value(m, *object, k))
                })
        }
        Mark::Arg { callee, .. } => callee == "describe",
        Mark::Call { .. } => true,
        _ => false,
    }
}

/// The marker the session's system prompt is split at for caching (a
/// constant the Agent SDK exports by this value's name): the static
/// sections before it, the session's after.
const PROMPT_BOUNDARY: &str = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__";

/// The calls that compose the session's system prompt, known by what they
/// are handed: the prompt's cache boundary (`compose(sections, boundary)`).
/// Each as (module, the name called there). A build that composes its
/// prompt in one array (the boundary spread among the sections) has none:
/// there the prompt reaches the main loop a few hops on.
fn composers(ci: &CodeIndex) -> Vec<(u32, Atom)> {
    let mut out = Vec::new();
    // The names the marker is bound to, in its module and where imported
    // (or the call it is written into).
    let mut names: Vec<(usize, &str)> = Vec::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        for s in &m.index.strings {
            if &*s.value != PROMPT_BOUNDARY {
                continue;
            }
            match s.flow.first() {
                Some(Flow::Bind(n)) => names.push((mi, n.as_str())),
                Some(Flow::Arg {
                    callee,
                    member: false,
                    new: false,
                    ..
                }) => out.push((mi as u32, callee.clone())),
                _ => {}
            }
        }
    }
    with_importers(ci, &mut names);
    for &(mi, name) in &names {
        for u in &ci.modules[mi].index.uses {
            if u.name == name
                && let Some(Flow::Arg {
                    callee,
                    member: false,
                    new: false,
                    ..
                }) = u.flow.first()
            {
                out.push((mi as u32, callee.clone()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `names` (module, a top-level name there) and the names other chunks
/// import them by, through a few chunks that export them again at most.
fn with_importers<'a>(ci: &'a CodeIndex, names: &mut Vec<(usize, &'a str)>) {
    if ci.modules.len() < 2 || names.is_empty() {
        return;
    }
    for (mi, m) in ci.modules.iter().enumerate() {
        for im in &m.index.imports {
            if ci
                .import_chain(mi, &im.local, REEXPORT_HOPS)
                .any(|next| names.contains(&next))
            {
                names.push((mi, im.local.as_str()));
            }
        }
    }
}

/// The tag that opens a system reminder.
const REMINDER_TAG: &str = "<system-reminder>";

/// The functions that return their first parameter wrapped in the
/// reminder tag (a template that opens with the tag and holds the
/// parameter as it is), known by that template, never by their names:
/// each as (module, the name it is called by there), in the chunks that
/// import it too. The module's own functions only (at its top, or in
/// Bun's CommonJS wrapper): a call is matched by name, and a nested
/// function's name may mean another binding elsewhere in its module.
fn reminder_wrappers(ci: &CodeIndex) -> Vec<(u32, Atom)> {
    let mut names: Vec<(usize, &str)> = Vec::new();
    for (mi, m) in ci.modules.iter().enumerate() {
        let ix = &m.index;
        // The module's own scope: Bun's CommonJS wrapper, when it wraps it.
        let top = super::reach::module_top(m).0;
        for s in &ix.strings {
            if s.kind != LitKind::Template
                || !s.value.trim_start().starts_with(REMINDER_TAG)
                || !matches!(s.flow.first(), Some(Flow::Return))
            {
                continue;
            }
            let Some(f) = s.in_function else { continue };
            let func = &ix.functions[f as usize];
            let (Some(Flow::Bind(name)), Some(param)) = (func.flow.first(), func.first_param())
            else {
                continue;
            };
            if func.parent != top {
                continue;
            }
            let from = ix.uses.partition_point(|u| u.lo < s.lo);
            let holds = ix.uses[from..].iter().take_while(|u| u.lo < s.hi).any(|u| {
                u.name == param
                    && u.in_function == Some(f)
                    && matches!(u.flow.first(), Some(Flow::Return))
            });
            if holds {
                names.push((mi, name.as_str()));
            }
        }
    }
    with_importers(ci, &mut names);
    let mut out: Vec<(u32, Atom)> = names
        .into_iter()
        .map(|(mi, n)| (mi as u32, Atom::from(n)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The texts a module reads from files the build ships (see
/// [`crate::js::code::EmbeddedTexts`]), each as if it were a literal where
/// the call that reads it stands: a call whose first argument is the
/// file's path (`load("/$bunfs/root/x.md")`), or a name bound to that path
/// (`var p = "/$bunfs/root/x.md.zst"; var t = inflate(p, dir)`). The call
/// is known by what it is handed — a path the graph holds as a text
/// module — never by the reader's (minified) name.
fn file_texts<'c>(ci: &'c CodeIndex, m: &IndexedModule) -> Vec<(StringLit, &'c str, bool)> {
    if ci.texts.is_empty() {
        return Vec::new();
    }
    // The names a path literal of this module is bound to: most modules
    // have none, and then no call's argument needs its binding looked up.
    let bound: HashSet<&str> = m
        .index
        .strings
        .iter()
        .filter(|s| s.kind == LitKind::String && ci.texts.get(&s.value).is_some())
        .filter_map(|s| match s.flow.first() {
            Some(Flow::Bind(name)) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for c in &m.index.calls {
        let Some(a) = &c.arg0 else { continue };
        let path = match (a.string(), a.ident()) {
            (Some(p), _) => p,
            (None, Some(name)) if bound.contains(name.as_str()) => {
                match bound_string(m, name, c.in_function) {
                    Some(p) => p,
                    None => continue,
                }
            }
            _ => continue,
        };
        let Some(text) = ci.texts.get(path) else {
            continue;
        };
        let lit = StringLit {
            value: Box::default(),
            kind: LitKind::String,
            lo: c.lo,
            hi: c.hi,
            in_function: c.in_function,
            flow: c.flow.clone(),
        };
        out.push((lit, text, is_document(path)));
    }
    out
}

/// Whether a shipped file is a document (Markdown, or plain text that is
/// not code renamed): `SKILL-1a2b.md`, `README-1a2b.md.zst`,
/// `plan-1a2b.txt` are; `state.js-1a2b.txt`, `shell.d.ts-1a2b.txt.zst`
/// (code the text loader took, its own extension kept before the hash)
/// and `probe-1a2b.py.zst` are not.
fn is_document(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let name = name.strip_suffix(".zst").unwrap_or(name);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    match ext {
        "md" => true,
        "txt" => !stem.contains('.'),
        _ => false,
    }
}

pub fn find(ci: &CodeIndex) -> Vec<Prompt> {
    // Before the tracer, which borrows them as it borrows the index.
    let loaded: Vec<Vec<(StringLit, &str, bool)>> =
        ci.modules.iter().map(|m| file_texts(ci, m)).collect();
    let delivered = Delivered::find(ci);
    let mut tracer = Tracer::with_user(ci, is_sink_mark, is_user_mark)
        .with_generic(is_text_block_mark)
        .watching(composers(ci))
        .watching_own(delivered.1.iter().cloned());
    let mut found: Vec<Found> = Vec::new();
    let tool_calls = tool_call_functions(ci);
    for (mi, m) in ci.modules.iter().enumerate() {
        let tool_calls = &tool_calls[mi];
        // A text wrapped over source lines (`"a " + "b"`) is one text,
        // not its parts.
        let parts: HashSet<u32> = m
            .index
            .joined
            .iter()
            .flat_map(|j| j.parts.iter().copied())
            .collect();
        let mut lits: Vec<&StringLit> = m
            .index
            .strings
            .iter()
            .filter(|s| !parts.contains(&s.lo))
            .chain(m.index.joined.iter().map(|j| &j.lit))
            .collect();
        if !parts.is_empty() {
            lits.sort_by_key(|s| s.lo);
        }
        let texts: Vec<(&StringLit, Sink)> = lits
            .into_iter()
            .filter(|s| is_text(&s.value))
            .filter_map(|s| {
                let text = Text {
                    lit: s,
                    value: &s.value,
                    prose: true,
                };
                sink_for(ci, &mut tracer, &delivered, mi as u32, text, tool_calls).map(|k| (s, k))
            })
            .collect();
        // A literal inside a model-facing template's `${…}` is a text of
        // its own (the template shows the hole, `${v1}`, not the text:
        // each branch of `${c ? "A" : "B"}` is found, searchable), and a
        // piece of the template's: `part_of` it.
        let from = found.len();
        for (s, sink) in &texts {
            found.push(found_at(m, s, &s.value, sink.clone()));
        }
        // Literals nest: in start order, the templates still open form a
        // stack whose top is the innermost around the next literal.
        let mut open: Vec<usize> = Vec::new();
        for (i, (s, _)) in texts.iter().enumerate() {
            while open.last().is_some_and(|&j| texts[j].0.hi <= s.lo) {
                open.pop();
            }
            if let Some(&j) = open.last()
                && s.hi <= texts[j].0.hi
            {
                found[from + i].outer = Some(text_key(&found[from + j].text));
            }
            if s.kind == LitKind::Template {
                open.push(i);
            }
        }
        // Texts read from files are whole texts: none is a piece of a
        // template, and the path literal inside the call is not prose.
        for (s, value, document) in loaded[mi].iter().filter(|(_, v, _)| is_text(v)) {
            let text = Text {
                lit: s,
                value,
                prose: *document,
            };
            if let Some(sink) = sink_for(ci, &mut tracer, &delivered, mi as u32, text, tool_calls) {
                found.push(found_at(m, s, value, sink));
            }
        }
    }
    assign_ids(found)
}

/// A text to place: a literal, or a file's text where the call reading it
/// stands.
#[derive(Clone, Copy)]
struct Text<'a> {
    lit: &'a StringLit,
    /// Its value: the literal's, or the file's (a file's literal stands for
    /// the call and holds no copy of the text).
    value: &'a str,
    /// Whether the prose rule may take it when it reaches no place: not
    /// for a file of code (a script, type declarations, JSON) that a
    /// skill ships, whose comments read as prose.
    prose: bool,
}

/// Where a literal goes decides whether it is a prompt, and its kind; a
/// text that reaches no model-facing place may still say what it is by
/// its form, or (for now) by the prose rule.
fn sink_for<'a>(
    ci: &CodeIndex,
    tracer: &mut Tracer<'a>,
    delivered: &Delivered,
    mi: u32,
    text: Text<'a>,
    tool_calls: &[bool],
) -> Option<Sink> {
    let s = text.lit;
    let reach = tracer.trace(mi, &s.flow, s.in_function, s.lo);
    if let Some(mut sink) = sink_of(ci, &reach, delivered) {
        // A skill file is a skill's body however it is delivered: a skill
        // run in an agent of its own hands it to that agent's messages, a
        // skill's file table carries the files of its sub-skills (and a
        // skill file's template) beside its reference documents.
        if (sink.kind == kinds::AGENT || sink.kind == kinds::DATA)
            && kind_by_form(text.value) == Some(kinds::SKILL)
        {
            sink.kind = kinds::SKILL;
            // The skill it is, not the path it is shipped under.
            if let Some(name) = front_matter_name(text.value) {
                sink.owner = Some(name.to_string());
            }
        }
        // A text that is a skill's body and a section of the session's
        // system prompt too (a taxonomy the prompt includes and a skill
        // serves in full) is the system prompt's: that is in every
        // request, the skill only when it is invoked.
        if sink.kind == kinds::SKILL && reaches_session_prompt(ci, &reach) {
            sink = Sink::of(kinds::SYSTEM);
        }
        return Some(sink);
    }
    if let Some(kind) = kind_by_form(text.value) {
        let mut sink = Sink::of(kind);
        if kind == kinds::SKILL {
            sink.owner = front_matter_name(text.value).map(str::to_string);
        }
        return Some(sink);
    }
    if is_thrown(s) && runs_in(&ci.modules[mi as usize], s.in_function, tool_calls) {
        // An error a tool's call throws is the call's result: the model
        // reads it (as it reads the other results, kind reminder).
        return Some(Sink::of(kinds::SYSTEM_REMINDER));
    }
    if !text.prose || !prose::is_prompt(text.value) {
        return None;
    }
    // A schema's description marked `@internal` documents a protocol's
    // types for their readers: the build's JSON Schema converter drops the
    // field it describes before a schema is handed on (see
    // `add_setting_prompts`), so no model reads it.
    if text.value.starts_with("@internal")
        && matches!(s.flow.first(), Some(Flow::Arg { callee, .. }) if callee == "describe")
    {
        return None;
    }
    // Prose handed straight to the interface or a log (`log(text)`,
    // `jsx(…, text)`, the build's logger `t(text, {level})`) is the
    // user's — but not prose built into an error (`new E(text)`): a tool's
    // thrown error is the result the model reads. (Only straight: a text
    // that reaches the logger further on is logged as it goes elsewhere
    // too — a prompt written to the debug log.)
    if let Some(Flow::Arg {
        callee,
        index,
        new: false,
        ..
    }) = s.flow.first()
    {
        let place = Mark::Arg {
            callee: callee.clone(),
            index: *index,
            new: false,
        };
        if is_user_mark(ci, &place) {
            return None;
        }
    }
    if ci.modules[mi as usize]
        .index
        .logged
        .binary_search(&s.lo)
        .is_ok()
    {
        return None;
    }
    // Nor prose that reaches the interface within a few hops and no
    // model-facing place at all: a dialog's words bound to a name, a
    // message a helper hands to the renderer. (Further away, the trace
    // has passed through helpers that serve the model's texts too.)
    if reach.user.is_some_and(|u| u <= PROSE_USER_HOPS) {
        return None;
    }
    let src = ci.modules[mi as usize].source();
    let lo = s.lo as usize;
    let mut w0 = lo.saturating_sub(prose::PLACE_WINDOW);
    while !src.is_char_boundary(w0) {
        w0 += 1;
    }
    Some(Sink::of(prose::kind_of(&src[w0..lo], text.value)))
}

/// One prompt per (kind, text), with every site; ids from kind, owner and
/// opening words, collisions numbered in the order of their texts.
fn assign_ids(found: Vec<Found>) -> Vec<Prompt> {
    // One prompt per text; reached from several places, the kind is the
    // first of KIND_ORDER among them (not the nearest: which place is
    // nearest changes from build to build when a piece is shared).
    // Grouped by a stable sort, in the texts' order, the order found kept
    // within a group (a map keyed by text held every text twice: 7 MB of
    // 2.1.332's peak).
    let mut found = found;
    found.sort_by(|a, b| a.text.cmp(&b.text));
    let mut by_text: Vec<(Found, Vec<Site>)> = Vec::new();
    for f in found {
        match by_text.last_mut() {
            Some((kept, sites)) if kept.text == f.text => {
                sites.push(f.site.clone());
                if rank(f.sink.kind) < rank(kept.sink.kind) {
                    let site = kept.site.clone();
                    *kept = f;
                    kept.site = site;
                }
            }
            _ => {
                let site = f.site.clone();
                by_text.push((f, vec![site]));
            }
        }
    }
    // Ids from the opening words alone: a text's kind and owner are what
    // the trace reaches, which moves when code around a shared piece
    // moves; its words do not.
    let mut by_slug: BTreeMap<String, Vec<(Found, Vec<Site>)>> = BTreeMap::new();
    for (f, sites) in by_text {
        by_slug
            .entry(words_slug(&f.text))
            .or_default()
            .push((f, sites));
    }
    let mut out = Vec::new();
    let mut outers: Vec<Option<u64>> = Vec::new();
    // Ids already given: a longer or numbered id that happens to equal
    // another text's is numbered on (the map's order decides which).
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (s, group) in by_slug {
        let ids = colliding_ids(&s, &group);
        for ((f, mut sites), mut id) in group.into_iter().zip(ids) {
            let mut n = 1;
            let base = id.clone();
            while !taken.insert(id.clone()) {
                n += 1;
                id = format!("{base}-{n}");
            }
            sites.sort();
            outers.push(f.outer);
            out.push(Prompt {
                id,
                kind: f.sink.kind.to_string(),
                title: title(&f.sink, &f.text),
                owner: f.sink.owner.clone(),
                part_of: f
                    .sink
                    .tool
                    .as_deref()
                    .map(|t| format!("{}-{}", kinds::TOOL_DESCRIPTION, name_slug(t))),
                bytes: f.text.len(),
                // About four bytes a token for English prose.
                tokens_estimate: f.text.len().div_ceil(4),
                text: f.text,
                variables: f.variables,
                sites,
            });
        }
    }
    // A piece of a template is `part_of` the template's prompt (a tool's
    // piece stays its tool's).
    let id_of: HashMap<u64, &str> = out
        .iter()
        .map(|p| (text_key(&p.text), p.id.as_str()))
        .collect();
    let parts: Vec<Option<String>> = outers
        .iter()
        .map(|o| o.and_then(|k| id_of.get(&k)).map(|id| id.to_string()))
        .collect();
    for (p, part) in out.iter_mut().zip(parts) {
        if p.part_of.is_none() {
            p.part_of = part;
        }
    }
    out
}

/// A text's key for finding it again (64 bits: texts number thousands).
fn text_key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The most opening words a colliding id takes.
const MAX_ID_WORDS: usize = 16;

/// The opening words of a text as id words (lower case, `${vN}` holes
/// left out), at most `n`.
fn id_words(text: &str, n: usize) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            !(w.is_empty()
                || w.len() > 1 && w.starts_with('v') && w[1..].bytes().all(|b| b.is_ascii_digit()))
        })
        .take(n)
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

/// The ids of texts whose first six words are the same (`slug`): the
/// shortest text keeps the slug (a text alone with its opening keeps its
/// id when a longer one with the same opening comes, as a note added to a
/// prompt's start does); the others take as many more opening words as
/// each needs to differ from the rest (so they keep theirs when another
/// comes or goes, unless they share still more words); those alike in
/// all their first sixteen words are numbered in the order of their texts.
fn colliding_ids<T>(slug: &str, group: &[(Found, T)]) -> Vec<String> {
    if group.len() == 1 {
        return vec![slug.to_string()];
    }
    let keeper = (0..group.len())
        .min_by(|&a, &b| {
            let (x, y) = (&group[a].0.text, &group[b].0.text);
            x.len().cmp(&y.len()).then_with(|| x.cmp(y))
        })
        .unwrap_or(0);
    let words: Vec<Vec<String>> = group
        .iter()
        .map(|(f, _)| id_words(&f.text, MAX_ID_WORDS))
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(group.len());
    for (i, w) in words.iter().enumerate() {
        if i == keeper {
            out.push(slug.to_string());
            continue;
        }
        // The fewest opening words no other text of the group shares.
        let k = (ID_WORDS + 1..=w.len()).find(|&k| {
            words
                .iter()
                .enumerate()
                .all(|(j, o)| j == i || o.len() < k || o[..k] != w[..k])
        });
        let base = match k {
            Some(k) => w[..k].join("-"),
            None if w.len() > ID_WORDS => w.join("-"),
            None => slug.to_string(),
        };
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        out.push(if *n == 1 { base } else { format!("{base}-{n}") });
    }
    out
}

/// A title from structure: the owner named, else the text's heading or
/// first sentence.
fn title(sink: &Sink, text: &str) -> String {
    let what = match sink.kind {
        kinds::TOOL_DESCRIPTION => "Tool description",
        kinds::TOOL_PARAMETER => "Tool parameter",
        kinds::AGENT => "Agent prompt",
        kinds::SKILL => "Skill",
        kinds::SYSTEM_REMINDER => "System reminder",
        kinds::SYSTEM => "System prompt",
        kinds::OUTPUT_STYLE => "Output style",
        kinds::DATA => "Data",
        kinds::COMPACTION => "Compaction",
        kinds::WORKFLOW => "Workflow",
        _ => "Prompt",
    };
    match &sink.owner {
        Some(o) => format!("{what}: {o}"),
        None => format!("{what}: {}", title_of(text)),
    }
}

/// A prompt whose text is a tool's parameter description is that
/// parameter's, whatever the prose rule guessed (`other`): the tools'
/// input schemas are read whole, so they know what the trace from a
/// shared schema (a question's schema used by a tool's input and output
/// alike) is too far to reach. Owner `TOOL.path.to.key`; ids stay.
pub fn place_tool_parameters(prompts: &mut [Prompt], tools: &[super::tools::Tool]) {
    fn walk(v: &serde_json::Value, path: &str, out: &mut HashMap<String, String>) {
        let Some(o) = v.as_object() else { return };
        if let Some(d) = o.get("description").and_then(|d| d.as_str()) {
            out.entry(d.to_string()).or_insert_with(|| path.to_string());
            // A description assembled at run time: its static pieces
            // (`A${v1 ? `B` : `C`}`) are the parameter's too.
            if d.contains("${") {
                let mut pieces = Vec::new();
                super::tools::assemble::static_pieces(d, &mut pieces);
                for piece in pieces {
                    out.entry(piece).or_insert_with(|| path.to_string());
                }
            }
        }
        if let Some(props) = o.get("properties").and_then(|p| p.as_object()) {
            for (k, p) in props {
                walk(p, &format!("{path}.{k}"), out);
            }
        }
        if let Some(items) = o.get("items") {
            walk(items, path, out);
        }
        for k in ["anyOf", "oneOf", "allOf"] {
            for alt in o.get(k).and_then(|a| a.as_array()).into_iter().flatten() {
                walk(alt, path, out);
            }
        }
    }
    let mut params: HashMap<String, String> = HashMap::new();
    for t in tools {
        if let Some(props) = t.input_schema.get("properties").and_then(|p| p.as_object()) {
            for (k, p) in props {
                walk(p, &format!("{}.{k}", t.name), &mut params);
            }
        }
    }
    for p in prompts.iter_mut() {
        if p.kind != kinds::OTHER && p.kind != kinds::TOOL_PARAMETER {
            continue;
        }
        if let Some(owner) = params.get(&p.text) {
            p.kind = kinds::TOOL_PARAMETER.to_string();
            p.title = format!("Tool parameter: {owner}");
            p.owner = Some(owner.clone());
        }
    }
}

/// Drop the prose rule's guesses (`other`) made in a module where no text
/// has a kind. A chunk of a code-split build is code the bundler found
/// used together; where not one of its texts reaches a model-facing place
/// or says by its form what it is — nor is a tool's parameter or piece —
/// the chunk is the user's (sign-in, settings, diagnostics, a protocol's
/// schemas, a runner's logs), and the guess there was wrong three times in
/// five (docs/guide/surface.md). A single bundle is one module that always
/// has placed texts: there the rule guesses as before. Run after the tools'
/// and settings' passes, which give some guesses their kind.
pub fn drop_unplaced_guesses(prompts: &mut Vec<Prompt>) {
    let placed: HashSet<&str> = prompts
        .iter()
        .filter(|p| p.kind != kinds::OTHER)
        .flat_map(|p| p.sites.iter().map(|s| s.module.as_str()))
        .collect();
    let keep: Vec<bool> = prompts
        .iter()
        .map(|p| {
            p.kind != kinds::OTHER || p.sites.iter().any(|s| placed.contains(s.module.as_str()))
        })
        .collect();
    if keep.iter().all(|&k| k) {
        return;
    }
    let dropped: HashSet<String> = prompts
        .iter()
        .zip(&keep)
        .filter(|(_, k)| !**k)
        .map(|(p, _)| p.id.clone())
        .collect();
    let mut keep = keep.into_iter();
    prompts.retain(|_| keep.next().unwrap_or(true));
    for p in prompts.iter_mut() {
        if p.part_of.as_ref().is_some_and(|o| dropped.contains(o)) {
            p.part_of = None;
        }
    }
}

/// Add each tool's assembled prompt — the text its `prompt()` (or
/// `description`) gives, as `tools` evaluated it, with the parts computed at
/// run time as holes — as the prompt `tool-description-NAME` (the tool's
/// public name, stable across builds). The literals it is assembled from
/// are prompts too, `part_of` it; a piece that is the whole text is the
/// same prompt.
pub fn add_tool_prompts(prompts: &mut Vec<Prompt>, tools: &[super::tools::Tool]) {
    let marker = super::tools::RUNTIME;
    for t in tools {
        if !is_text(&t.description.replace(marker, " ")) {
            continue;
        }
        // The assembled text keeps its named holes (`${model}`); a part
        // the evaluator could not reach stays `${…}`.
        let text = t.description.clone();
        let variables: Vec<Variable> = t
            .variables
            .iter()
            .map(|v| Variable {
                name: v.name.clone(),
                expression: v.source.chars().take(MAX_EXPR_CHARS).collect(),
            })
            .collect();
        let id = format!("{}-{}", kinds::TOOL_DESCRIPTION, name_slug(&t.name));
        let mut sites = t.sites.clone();
        // The piece that is the whole text is this prompt, whatever place
        // its trace met first (a factory's options bag is no tool).
        prompts.retain(|p| {
            let whole = p.text == text;
            if whole {
                sites.extend(p.sites.iter().cloned());
            }
            !whole
        });
        sites.sort();
        sites.dedup();
        prompts.push(Prompt {
            id,
            kind: kinds::TOOL_DESCRIPTION.to_string(),
            title: format!("Tool description: {}", t.name),
            owner: Some(t.name.clone()),
            part_of: None,
            bytes: text.len(),
            tokens_estimate: text.len().div_ceil(4),
            text,
            variables,
            sites,
        });
    }
    // The pieces the evaluator used that no trace found (reached through
    // a helper of another chunk, a variant returned early) are pieces too.
    let mut ids: std::collections::HashSet<String> = prompts.iter().map(|p| p.id.clone()).collect();
    let texts: std::collections::HashSet<String> = prompts.iter().map(|p| p.text.clone()).collect();
    let mut extra: BTreeMap<String, (String, Site)> = BTreeMap::new();
    for t in tools {
        for piece in &t.pieces {
            if is_text(&piece.text) && !texts.contains(&piece.text) {
                extra
                    .entry(piece.text.clone())
                    .or_insert((t.name.clone(), piece.site.clone()));
            }
        }
    }
    for (text, (name, site)) in extra {
        let prefix = format!("{}-{}", kinds::TOOL_DESCRIPTION, name_slug(&name));
        let base = words_slug(&text);
        let mut id = base.clone();
        let mut n = 1;
        while ids.contains(&id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        ids.insert(id.clone());
        prompts.push(Prompt {
            id,
            kind: kinds::TOOL_DESCRIPTION.to_string(),
            title: format!("Tool description: {name}"),
            owner: Some(name),
            part_of: Some(prefix),
            bytes: text.len(),
            tokens_estimate: text.len().div_ceil(4),
            text,
            variables: Vec::new(),
            sites: vec![site],
        });
    }
    // A piece of a tool nobody assembled is part of nothing.
    let ids: std::collections::HashSet<String> = prompts.iter().map(|p| p.id.clone()).collect();
    for p in prompts.iter_mut() {
        if p.part_of.as_ref().is_some_and(|w| !ids.contains(w)) {
            p.part_of = None;
        }
    }
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
}

/// How many calls up from a schema's builder the function that hands the
/// schema to the model may be (a lazy getter's initialiser is no call:
/// the builder, a getter or two, the prompt's builder).
const MAX_CALLER_HOPS: usize = 6;

/// Whether a schema built in the function around byte `at` of module `m`
/// is handed to the model: whether some function up the calls from its
/// builder is itself a place that gives the model a document — a skill's
/// prompt builder, an agent's or the system prompt's, a tool's or a
/// style's prompt method (a skill that edits settings embeds their JSON
/// Schema, descriptions and all). Only callers that hand the schema on
/// count (not a validation's `schema().parse(x)`). A function's own place
/// is asked, not everything its result reaches: the settings' getters'
/// results reach half the build, and tracing them all is the costliest
/// trace there is.
pub fn schema_is_handed(ci: &CodeIndex, m: u32, at: u32) -> bool {
    let Some(builder) = ci
        .modules
        .get(m as usize)
        .and_then(|x| x.index.enclosing_function(at))
    else {
        return false;
    };
    let mut tracer = Tracer::with_user(ci, is_sink_mark, is_user_mark);
    let mut seen = std::collections::HashSet::from([(m, builder)]);
    let mut level = vec![(m, builder)];
    let mut hops = 0;
    while !level.is_empty() && hops < MAX_CALLER_HOPS {
        let mut next = Vec::new();
        let mut lazy = Vec::new();
        for (cm, f) in level {
            for caller in tracer.callers(cm, f) {
                if !seen.insert(caller) {
                    continue;
                }
                if hands_a_document(ci, caller.0, caller.1) {
                    return true;
                }
                if tracer.is_initialiser(caller.0, caller.1) {
                    lazy.push(caller);
                } else {
                    next.push(caller);
                }
            }
        }
        // A lazy initialiser is its getter: no call further up.
        if lazy.is_empty() {
            hops += 1;
        }
        next.extend(lazy);
        level = next;
    }
    false
}

/// Whether function `f` of module `m` is a method (or a property's
/// function) whose result a model gets as a document: a skill's prompt
/// builder, an agent's or the session's system prompt, a tool's or a
/// style's prompt.
fn hands_a_document(ci: &CodeIndex, m: u32, f: FnId) -> bool {
    let func = &ci.modules[m as usize].index.functions[f as usize];
    let Some(Flow::Key { key, object }) = func.flow.first() else {
        return false;
    };
    let mut own = Reach::default();
    own.marks.push((
        Mark::Key {
            module: m,
            object: *object,
            key: key.clone(),
            method: true,
        },
        0,
    ));
    sink_of(ci, &own, &Delivered::default()).is_some_and(|s| {
        matches!(
            s.kind,
            kinds::SKILL
                | kinds::AGENT
                | kinds::SYSTEM
                | kinds::TOOL_DESCRIPTION
                | kinds::OUTPUT_STYLE
        )
    })
}

/// Add each setting's description as a `data` prompt (`setting-KEY`,
/// owned by the key), the settings' schema being handed to the model —
/// but for those marked `@internal`, which the schema's converter drops
/// before handing it over. A description already found by its form alone
/// (kind `other`) takes this kind; one a more specific place took keeps
/// it.
pub fn add_setting_prompts(prompts: &mut Vec<Prompt>, settings: &[super::settings::Setting]) {
    let mut ids: std::collections::HashSet<String> = prompts.iter().map(|p| p.id.clone()).collect();
    let mut by_text: HashMap<String, usize> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.text.clone(), i))
        .collect();
    // A description marked `@internal` is dropped, property and all (its
    // nested fields too), from the JSON Schema the model is handed.
    let internal: Vec<&str> = settings
        .iter()
        .filter(|s| {
            s.description
                .as_deref()
                .is_some_and(|d| d.starts_with("@internal"))
        })
        .map(|s| s.key.as_str())
        .collect();
    // A field of it: `key.field`, or of its list's objects `key[].field`.
    let inside = |key: &str, of: &str| {
        key.strip_prefix(of)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[]"))
    };
    for st in settings {
        if internal.iter().any(|p| inside(&st.key, p)) {
            continue;
        }
        let Some(text) = st
            .description
            .as_deref()
            .filter(|d| is_text(d) && !d.starts_with("@internal"))
        else {
            continue;
        };
        let title = format!("Data: {} setting", st.key);
        if let Some(&i) = by_text.get(text) {
            let p = &mut prompts[i];
            if p.kind == kinds::OTHER {
                p.kind = kinds::DATA.to_string();
                p.title = title;
                p.owner = Some(st.key.clone());
            }
            continue;
        }
        let base = format!("setting-{}", name_slug(&st.key));
        let mut id = base.clone();
        let mut n = 1;
        while !ids.insert(id.clone()) {
            n += 1;
            id = format!("{base}-{n}");
        }
        by_text.insert(text.to_string(), prompts.len());
        prompts.push(Prompt {
            id,
            kind: kinds::DATA.to_string(),
            title,
            owner: Some(st.key.clone()),
            part_of: None,
            bytes: text.len(),
            tokens_estimate: text.len().div_ceil(4),
            text: text.to_string(),
            variables: Vec::new(),
            sites: st.sites.clone(),
        });
    }
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
}

/// The text `value` of literal `s` (a file's literal holds none: the
/// file's text is handed apart), found with `sink`.
fn found_at(m: &IndexedModule, s: &StringLit, value: &str, sink: Sink) -> Found {
    let (text, variables) = if s.kind == LitKind::Template {
        template(m, s).unwrap_or_else(|| (value.to_string(), Vec::new()))
    } else {
        (value.to_string(), Vec::new())
    };
    Found {
        sink,
        text,
        variables,
        site: Site::at(m, s.lo),
        outer: None,
    }
}

/// A hole's name from structure: the property an expression reads
/// (`${opts.toolName}` is `toolName`), else `vN` — minified identifiers
/// name nothing. A name already taken gets its number.
fn hole_name(x: &Expr, n: usize, taken: &[Variable]) -> String {
    let mut e = x;
    loop {
        match e {
            Expr::Paren(p) => e = &p.expr,
            Expr::Call(c) => match &c.callee {
                swc_ecma_ast::Callee::Expr(callee) => e = callee,
                _ => break,
            },
            _ => break,
        }
    }
    let name = match e {
        Expr::Member(m) => m.prop.as_ident().map(|i| i.sym.to_string()),
        Expr::OptChain(o) => o
            .base
            .as_member()
            .and_then(|m| m.prop.as_ident())
            .map(|i| i.sym.to_string()),
        _ => None,
    }
    .filter(|n| n.len() >= 3 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    match name {
        Some(n) if !taken.iter().any(|v| v.name == n) => n,
        _ => format!("v{n}"),
    }
}

/// A template's text with `${NAME}` for each interpolation, and the
/// expressions they come from.
fn template(m: &IndexedModule, s: &StringLit) -> Option<(String, Vec<Variable>)> {
    let src = m.source().get(s.lo as usize..s.hi as usize)?;
    let e = parse_snippet(src).ok()?;
    // A template, or a concatenation of literals with templates among them
    // (see `JoinedLit`).
    let parts = match &*e {
        Expr::Tpl(_) | Expr::TaggedTpl(_) => vec![&*e],
        Expr::Bin(b) => literal_chain(b)?,
        _ => return None,
    };
    let mut text = String::new();
    let mut vars = Vec::new();
    for part in parts {
        let t = match part {
            Expr::Tpl(t) => t,
            Expr::TaggedTpl(t) => &t.tpl,
            Expr::Lit(swc_ecma_ast::Lit::Str(s)) => {
                text.push_str(&s.value.to_string_lossy());
                continue;
            }
            _ => return None,
        };
        template_parts(src, t, &mut text, &mut vars);
    }
    Some((text, vars))
}

/// A template's text into `text`, each hole named (`${toolName}`, `${v2}`)
/// and its expression into `vars`.
fn template_parts(src: &str, t: &swc_ecma_ast::Tpl, text: &mut String, vars: &mut Vec<Variable>) {
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
            let name = hole_name(x, vars.len() + 1, vars);
            text.push_str(&format!("${{{name}}}"));
            vars.push(Variable {
                name,
                expression: expr,
            });
        }
    }
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
            // A text that now reaches another kind of place, another owner,
            // or names its holes otherwise has changed too (the repository
            // export files it under its kind, with these in its front matter).
            let names = |p: &Prompt| {
                p.variables
                    .iter()
                    .map(|v| v.name.clone())
                    .collect::<Vec<_>>()
            };
            let place = |p: &Prompt| (p.kind.clone(), p.owner.clone(), p.title.clone(), names(p));
            (pa.text != pb.text || place(pa) != place(pb)).then(|| {
                let (words, coarse) = if pa.text == pb.text {
                    let (ka, oa, _, _) = place(pa);
                    let (kb, ob, _, _) = place(pb);
                    let who = |o: Option<String>| o.map(|o| format!(" ({o})")).unwrap_or_default();
                    (format!("{ka}{} → {kb}{}", who(oa), who(ob)), None)
                } else {
                    word_diff(&pa.text, &pb.text, budget)
                };
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
        // YAML front matter (each value a JSON string or list: valid YAML,
        // quoted whatever it holds), then the exact text.
        let q = |v: &str| serde_json::Value::from(v).to_string();
        let mut md = String::from("---\n");
        md.push_str(&format!("id: {}\n", q(&p.id)));
        md.push_str(&format!("kind: {}\n", q(&p.kind)));
        md.push_str(&format!("title: {}\n", q(&p.title)));
        if let Some(o) = &p.owner {
            md.push_str(&format!("owner: {}\n", q(o)));
        }
        if let Some(v) = version {
            md.push_str(&format!("version: {}\n", q(v)));
        }
        let names: Vec<&str> = p.variables.iter().map(|v| v.name.as_str()).collect();
        md.push_str(&format!("variables: {}\n", serde_json::json!(names)));
        md.push_str(&format!("sha256: {}\n", q(&sha256(p.text.as_bytes()))));
        if let Some(w) = &p.part_of {
            md.push_str(&format!("part_of: {}\n", q(w)));
        }
        md.push_str(&format!(
            "bytes: {}\ntokens_estimate: {}\n",
            p.bytes, p.tokens_estimate
        ));
        md.push_str("---\n");
        md.push_str(&p.text);
        md.push('\n');
        let file = format!("{}.md", p.id);
        index.push(serde_json::json!({
            "id": p.id,
            "title": p.title,
            "kind": p.kind,
            "owner": p.owner,
            "part_of": p.part_of,
            "variables": names,
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

    #[test]
    fn a_text_is_three_words_of_two_letters_or_two_and_a_hole() {
        assert!(is_text("read the file"));
        assert!(!is_text("read a b c 1 2 x"));
        assert!(!is_text("the_name"));
        assert!(is_text("${name} hook succeeded"));
        assert!(!is_text("hook ${x}"));
        assert!(!is_text("hook and"));
        // A long text counts its words only as far as it needs to.
        assert!(is_text(&"many words of text ".repeat(100_000)));
        assert!(is_text("é ü ok go on"));
    }

    /// Every sink, and every way a text flows to one, in JavaScript written
    /// for these tests (minified-style names that mean nothing).
    const SRC: &str = r##"
var Qa = "Fetch a page from the web and read it with care before you answer.";
function Qb(){ return "Pages over one megabyte are cut short at the end."; }
var Qs = Zo.object({ url: Zo.string().describe("The address of the page to fetch") });
var Qn0 = "Fetcher";
var Qt = { name: Qn0, inputSchema: Qs, async call(){ return 1; },
  whenToUse: "When a page of the web is needed to answer.",
  async prompt(){ return [Qa, Qb(), Qc ? "Say which parts you skipped and why." : "Quote the page where it helps."].join("\n"); },
  async description(){ return "Fetch one page of the web."; },
  validationErrorSteer(e){ if (!e.url) return "Give the address of one page, not a list of them."; return null; } };
var Qo = { q: 1 };
var Qd = { agentType: "helper", whenToUse: "Use this agent for small searches over many files.",
  whenToUseLean: "Use it for a quick look over a few files.",
  getSystemPrompt: () => `You are a helper agent working for ${Qo.userName} in ${Qe()}. Keep answers short.` };
var Qf = "Tidy every file the user names, one at a time, and report each change.";
var Qg = { type: "prompt", name: "tidy", source: "builtin", description: "Tidy the files in a folder",
  async getPromptForCommand(Qh){ return [{ type: "text", text: Qf }]; } };
function Qi(Qj){ return Qk({ content: Qj, isMeta: !0 }); }
Qi("The user changed the settings file since your last turn.");
var Ql = { "docs/guide.md": "# Guide\n\nHow the parts fit together, in three short steps." };
var Qm = { Concise: { name: "Concise", description: "Short answers", prompt: "Answer in as few words as the question allows." } };
async function Qs2(){ return Qt2.model.fork({ prompt: "Say in one line what the session is doing now." }); }
function Qv2(e){ if (!e.path) return {result:!1,message:"Give the path of the file you want written.",errorCode:2}; return { result: e.ok, message: "Checked the file you named just now." }; }
var Qn; var Qp = Qq(() => { Qn = "You are Testbot, an assistant of our own making."; });
function Qr(){ return Qu.create({ model: Qv, system: [Qn], messages: Qw }); }
function Qx(){ throw new Error("Could not read the settings file at all."); }
console.log("Press enter to continue with the setup.");
Qy.render({ title: "Welcome to the setup screen here" });
var Qz = "Some words that go nowhere at all.";
"##;

    fn find_in(src: &str) -> Vec<Prompt> {
        find(&testjs::script(src))
    }

    /// Each text holding one of `needles` is a prompt of `kind`.
    fn assert_kinds(v: &[Prompt], needles: &[&str], kind: &str) {
        for needle in needles {
            assert_eq!(kind_of(v, needle).as_deref(), Some(kind), "{needle}");
        }
    }

    fn by_text<'a>(v: &'a [Prompt], needle: &str) -> Option<&'a Prompt> {
        v.iter().find(|p| p.text.contains(needle))
    }

    fn kind_of(v: &[Prompt], needle: &str) -> Option<String> {
        by_text(v, needle).map(|p| p.kind.clone())
    }

    #[test]
    fn each_sink_gives_its_kind_and_owner() {
        let v = find_in(SRC);
        let want = [
            (
                "Fetch a page from the web",
                kinds::TOOL_DESCRIPTION,
                Some("Fetcher"),
            ),
            (
                "Pages over one megabyte",
                kinds::TOOL_DESCRIPTION,
                Some("Fetcher"),
            ),
            (
                "Say which parts you skipped",
                kinds::TOOL_DESCRIPTION,
                Some("Fetcher"),
            ),
            (
                "Quote the page where it helps",
                kinds::TOOL_DESCRIPTION,
                Some("Fetcher"),
            ),
            ("The address of the page", kinds::TOOL_PARAMETER, None),
            // Listed beside the tool's name when it is loaded on demand.
            (
                "When a page of the web is needed",
                kinds::TOOL_DESCRIPTION,
                Some("Fetcher"),
            ),
            ("Use this agent for small", kinds::AGENT, Some("helper")),
            ("You are a helper agent", kinds::AGENT, Some("helper")),
            ("Use it for a quick look", kinds::AGENT, Some("helper")),
            // A tool's steer for an input its schema refused: the call's
            // error, which the model reads.
            ("Give the address of one page", kinds::SYSTEM_REMINDER, None),
            ("Tidy every file the user", kinds::SKILL, Some("tidy")),
            (
                "The user changed the settings",
                kinds::SYSTEM_REMINDER,
                None,
            ),
            (
                "How the parts fit together",
                kinds::DATA,
                Some("docs/guide.md"),
            ),
            (
                "Answer in as few words",
                kinds::OUTPUT_STYLE,
                Some("Concise"),
            ),
            // A small bag's `prompt` with no name: a task handed to a
            // fork of the model, not a style.
            ("Say in one line what the session", kinds::AGENT, None),
            // A failed validation's message: the call's error, which the
            // model reads.
            ("Give the path of the file", kinds::SYSTEM_REMINDER, None),
            ("You are Testbot", kinds::SYSTEM, None),
        ];
        for (needle, kind, owner) in want {
            let p = by_text(&v, needle).unwrap_or_else(|| panic!("{needle}: not found"));
            assert_eq!(p.kind, kind, "{needle}");
            assert_eq!(p.owner.as_deref(), owner, "{needle}");
        }
        assert_eq!(
            v.len(),
            want.len(),
            "{:#?}",
            v.iter().map(|p| &p.id).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_skills_body_that_is_also_in_the_system_prompt_is_the_system_prompts() {
        let v = find_in(
            r###"
var Ra = ["## Kinds of notes", "Each note has a kind: a fact, a rule or a pointer elsewhere."];
var Rb = { type: "prompt", name: "note-kinds", description: "The kinds of notes in full",
  async getPromptForCommand(){ return [{ type: "text", text: Ra.join("\n") }]; } };
function Rc(){ return ["You keep notes for the user across sessions.", ...Ra].join("\n"); }
async function Rd(Re){ return Rf({ systemPrompt: [Rc()], messages: Re, userContext: {} }); }
var Rg = "Check the notes before you answer a question about the user.";
var Rh = { type: "prompt", name: "notes", async getPromptForCommand(){ return [{ type: "text", text: Rg }]; } };
var Ri = "Read the notes of the project and sum them up in a list.";
var Rj = { type: "prompt", name: "sum-notes", async getPromptForCommand(){ return [{ type: "text", text: Ri }]; } };
var Rk = { agentType: "summer", getSystemPrompt: () => Ri };
"###,
        );
        // Nearer to the skill, yet in every request: the system prompt's.
        let p = by_text(&v, "Each note has a kind").expect("found");
        assert_eq!((p.kind.as_str(), p.owner.as_deref()), (kinds::SYSTEM, None));
        assert_eq!(kind_of(&v, "You keep notes"), Some(kinds::SYSTEM.into()));
        // A skill's own body, and one an agent shares, stay the skill's.
        let p = by_text(&v, "Check the notes before").expect("found");
        assert_eq!(
            (p.kind.as_str(), p.owner.as_deref()),
            (kinds::SKILL, Some("notes"))
        );
        assert_eq!(
            kind_of(&v, "Read the notes of the project"),
            Some(kinds::SKILL.into())
        );
    }

    #[test]
    fn texts_that_reach_no_model_are_not_prompts() {
        let v = find_in(SRC);
        for needle in [
            "Could not read the settings",
            "Press enter to continue",
            "Welcome to the setup screen",
            "Some words that go nowhere",
            // A built-in command's description is for the menu.
            "Tidy the files in a folder",
            // A tool with a prompt describes a call to the user.
            "Fetch one page of the web",
            // A result that is not the literal `false` is no failed
            // validation.
            "Checked the file you named",
        ] {
            assert_eq!(kind_of(&v, needle), None, "{needle}");
        }
    }

    #[test]
    fn prose_handed_straight_to_a_log_is_the_users_but_a_thrown_error_is_not() {
        // Prose long enough for the prose rule (thirty words and more).
        let tail = "so look at the notes you keep in your home folder, read the guide that came with your copy, and ask your team when you are stuck on any step of it";
        let src = format!(
            r#"
function Ka(e){{ if (!e) console.error(`You are running an old version of the helper, update it before you go on: ${{e}}, {tail}.`); }}
function Kb(e){{ console.log("Usage: helper run [options] - you can pass --fast to skip the slow checks on your files, {tail}."); }}
function Kc(e){{ throw new Kd(`The file you asked for was refused because your session may not write there, {tail}.`); }}
function Ke(e){{ Kf(`Your rules file names a tool that does not exist, so that rule is ignored: ${{e}}, {tail}.`, {{ level: "warn" }}); }}
"#
        );
        let v = find_in(&src);
        assert_eq!(kind_of(&v, "You are running an old version"), None);
        assert_eq!(kind_of(&v, "Usage: helper run"), None);
        // The build's own logger, by its `{level}` option.
        assert_eq!(kind_of(&v, "Your rules file names a tool"), None);
        // Thrown: a tool's error is its result (the prose rule keeps it).
        assert_eq!(
            kind_of(&v, "The file you asked for").as_deref(),
            Some(kinds::OTHER)
        );
    }

    #[test]
    fn prose_near_the_interface_help_and_settings_docs_are_the_users() {
        let tail = "so look at the notes you keep in your home folder, read the guide that came with your copy, and ask your team when you are stuck on any step of it";
        let src = format!(
            r#"
var Na = "Add-ons you install may start programs of their own on this machine for you, {tail}.";
function Nb(){{ return Nc.jsx(Nd, {{ children: Na }}); }}
function Ne(e){{ return `Your account cannot see ${{e}} because the app is not installed there, {tail}.`; }}
function Nf(e){{ let t = Ne(e); return Ng.jsx(Nh, {{ dimColor: !0, children: t }}); }}
Ni.command("review").option("--trust", "Treat this folder as trusted for one run, with no question asked of you, {tail}.");
var Nj = Nk.longDescription("When you set this key the app reads your own endpoint instead of the default one, {tail}.");
var Nl = Nm.msg({{ id: "Hint", defaultMessage: "Turn this on when you want your sessions to reach the gateway first, {tail}." }});
var Nn = "If you think you need this capability to finish your task, stop and tell the user what you tried, {tail}.";
function No(){{ return Nn; }}
"#
        );
        let v = find_in(&src);
        // Bound to a name the renderer shows; returned to a helper that
        // renders it: the interface within two hops.
        assert_eq!(kind_of(&v, "Add-ons you install"), None);
        assert_eq!(kind_of(&v, "Your account cannot see"), None);
        // `--help`, a settings schema's documentation, a translated
        // message's words.
        assert_eq!(kind_of(&v, "Treat this folder as trusted"), None);
        assert_eq!(kind_of(&v, "When you set this key"), None);
        assert_eq!(kind_of(&v, "Turn this on when"), None);
        // Going nowhere known: the prose rule still takes it.
        assert_eq!(
            kind_of(&v, "If you think you need").as_deref(),
            Some(kinds::OTHER)
        );
    }
    #[test]
    fn a_system_message_for_the_transcript_is_not_a_reminder() {
        // The same helper shape as a reminder's, but the message is of
        // type `system` with a display level: the transcript shows it, the
        // request builder drops it.
        let v = find_in(
            r#"
function Sa(Sb, Sc){ return { type: "system", subtype: "informational", content: Sb, isMeta: !1, level: Sc }; }
function Sd(Se){ return Sf({ content: Se, isMeta: !0, level: "warning" }); }
function Sg(Sh){ return Si({ content: Sh, isMeta: !0 }); }
Sa(`The stop hook failed to run: ${Sj}`, "warning");
Sd("The remote session is not connected.");
Sg("The settings file changed since the last turn.");
var Sk = "Your earlier notes were written while you were signed in to another account, so they cannot be used now; sign in to that account again and you will find all of them where you left them before, in the folder you keep for your notes.";
function Sl(){ return [Sm, Sa(Sk, "warning")]; }
"#,
        );
        assert_eq!(kind_of(&v, "The stop hook failed"), None);
        // Prose on its way to such a message is the user's too.
        assert_eq!(kind_of(&v, "Your earlier notes"), None);
        assert_eq!(kind_of(&v, "The remote session is not"), None);
        assert_eq!(
            kind_of(&v, "The settings file changed").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
    }

    #[test]
    fn a_messages_text_block_is_read_by_the_model_unless_more_is_known() {
        let v = find_in(
            r#"
function Ua(e, t){ return { content: [{ type: "text", text: JSON.stringify(e) }], telemetry: t }; }
function Ub(e){ return Ua({ granted: e, guidance: Uc(e) }, {}); }
function Uc(e){ return `The user prefers to watch: take a screenshot after each of ${e} steps`; }
function Ud(e){ return Ue({ role: "user", content: [{ type: "text", text: e }] }); }
Ud("Reply to the thread in one short paragraph, without headings");
Ug.jsx(Uh, { block: { type: "image", text: "an image block's caption for the screen" } });
"#,
        );
        // Into a result's text block: read as a tool's result is.
        assert_eq!(
            kind_of(&v, "The user prefers to watch").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        // A user message's block: the message decides (a side request).
        assert_eq!(
            kind_of(&v, "Reply to the thread").as_deref(),
            Some(kinds::AGENT)
        );
        // Another block's `text`.
        assert_eq!(kind_of(&v, "an image block's caption"), None);

        // Handed to more text blocks than a trace keeps places, and on to
        // a side request further away: the request decides.
        let blocks: String = (0..40)
            .map(|i| format!("function Vb{i}(e){{ return {{ type: \"text\", text: e }}; }}\n"))
            .collect();
        let calls: String = (0..40).map(|i| format!("Vb{i}(e); ")).collect();
        let src = format!(
            r#"
{blocks}
function Va(e){{ {calls}return Vc(e); }}
function Vc(e){{ return Vd(e); }}
function Vd(e){{ return Ve({{ systemPrompt: "You sort notes.", userPrompt: e }}); }}
Va("Sort these notes by the day they were written");
"#
        );
        let v = find_in(&src);
        assert_eq!(
            kind_of(&v, "Sort these notes").as_deref(),
            Some(kinds::AGENT)
        );
    }

    #[test]
    fn errors_thrown_in_a_tools_call_are_its_results() {
        let v = find_in(
            r#"
function Ta(e){ if (!e.path) throw new Tb("path must name a file inside the project"); return Td(e.path); }
function Td(e){ if (!e) throw new Tb("the helper two calls down was refused"); return Tc(e); }
var Te = { name: "Fetch", description: "Fetch a page for the model.", inputSchema: Tf, async call(e){ if (!e.url) throw new Tb("url must be an absolute address"); return Ta(e); } };
var Tg = { comments: { description(e){ return "Read the comments"; }, getToolUseSummary(e){ return "read comments"; }, async call(e){ throw new Tb(`no comments on ${e.url} were readable`); } } };
function Th(e){ throw new Tb("this helper belongs to no tool at all"); }
var Ti = { name: "Fetch", async call(e){ throw new Tb("nothing about tools in this object's keys"); } };
"#,
        );
        let reminder = Some(kinds::SYSTEM_REMINDER.to_string());
        // In the tool's call, in a function it calls, in the call of an
        // action it hands the work to.
        assert_eq!(kind_of(&v, "url must be an absolute"), reminder);
        assert_eq!(kind_of(&v, "path must name a file"), reminder);
        assert_eq!(kind_of(&v, "no comments on"), reminder);
        // Two calls down, in no tool, in an object of no tool's shape.
        assert_eq!(kind_of(&v, "the helper two calls down"), None);
        assert_eq!(kind_of(&v, "this helper belongs to no tool"), None);
        assert_eq!(kind_of(&v, "nothing about tools"), None);
    }

    #[test]
    fn an_error_thrown_by_a_helper_of_another_chunk_that_a_tools_call_calls_is_its_result() {
        // The helper is exported by one chunk and called by the tool's
        // `call` in another, under the name it is imported by: as in one
        // bundle, where it is the module's own function.
        let helper = r#"function Ha(e){ if (!e.lead) throw new Hb("only the lead may approve a plan"); return e.plan; }
function Hc(e){ throw new Hb("this helper is called by no tool's call"); }
export { Ha as a, Hc as c };
"#;
        let tool = |approve: &str| {
            format!(
                r#"var Hd = {{ name: "Approve", description: "Approve a teammate's plan.", inputSchema: He, async call(e){{ return {approve}(e); }} }};
"#
            )
        };
        let ci = testjs::chunks(&[
            ("/$bunfs/root/chunk-a.js", helper),
            (
                "/$bunfs/root/chunk-b.js",
                &format!(
                    "import {{ a as Hx, c as Hy }} from \"./chunk-a.js\";\n{}Hy(1);\n",
                    tool("Hx")
                ),
            ),
        ]);
        let split = find(&ci);
        let one = find_in(
            &format!("{helper}\n{}", tool("Ha")).replace("export { Ha as a, Hc as c };", ""),
        );
        for (form, found) in [("one bundle", &one), ("chunks", &split)] {
            assert_eq!(
                kind_of(found, "only the lead may approve").as_deref(),
                Some(kinds::SYSTEM_REMINDER),
                "{form}"
            );
            assert_eq!(
                kind_of(found, "this helper is called by no tool"),
                None,
                "{form}"
            );
        }
    }

    #[test]
    fn a_tools_name_kept_in_a_constant_names_its_texts_in_every_chunk() {
        // A code-split build keeps its tools' names as constants in a chunk
        // of their own; the tool object names the constant, imported, or
        // re-exported on the way.
        let tool = |name: &str| {
            format!(
                "var Tq = {{ name: {name}, inputSchema: Tr, async call(){{ return 1; }},\n  whenToUse: \"When the user asks for a page of the manual.\",\n  async prompt(){{ return \"Open the page of the manual the user names.\"; }} }};\n"
            )
        };
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-n.js",
                "var Na = \"Manual\";\nexport { Na as m };\n",
            ),
            (
                "/$bunfs/root/chunk-r.js",
                "import { m as Rb } from \"./chunk-n.js\";\nexport { Rb as r };\n",
            ),
            (
                "/$bunfs/root/chunk-t.js",
                &format!(
                    "import {{ r as Tn }} from \"./chunk-r.js\";\n{}",
                    tool("Tn")
                ),
            ),
        ]);
        let split = find(&ci);
        let one = find_in(&format!("var Tn = \"Manual\";\n{}", tool("Tn")));
        for (form, found) in [("one bundle", &one), ("chunks", &split)] {
            for needle in [
                "When the user asks for a page",
                "Open the page of the manual",
            ] {
                let p = by_text(found, needle).unwrap_or_else(|| panic!("{form}: {needle}"));
                assert_eq!(p.kind, kinds::TOOL_DESCRIPTION, "{form}: {needle}");
                assert_eq!(p.owner.as_deref(), Some("Manual"), "{form}: {needle}");
                assert_eq!(p.title, "Tool description: Manual", "{form}: {needle}");
            }
        }
    }

    #[test]
    fn the_prose_rule_does_not_guess_in_a_chunk_where_no_text_has_a_kind() {
        // Prose addressed to "you", long enough for the prose rule, whose
        // flow the tracer does not follow (an options bag's callback).
        let prose = |what: &str| {
            format!(
                "You can {what} again after the network comes back: your session is kept on this machine, and nothing you wrote is lost while you wait for it to reconnect in a minute or two, or while you restart the program by hand."
            )
        };
        let tool = r#"var Ta = { name: "Reader", inputSchema: Tb, async call(){ return 1; },
  async prompt(){ return "Read one file the user names and quote the lines you use."; } };
"#;
        let placed = format!(
            "{tool}Pa.on({{ onStatus: () => `{}` }});\nPa.on({{ onStatus: () => `{}` }});\nexport {{ Ta as a }};\n",
            prose("read the file"),
            prose("sign in")
        );
        // The "sign in" text is also a piece of a template of the chunk
        // where nothing is placed (met first: the piece's `part_of`).
        let unplaced = format!(
            "Pb.on({{ onStatus: () => `{}` }});\nPb.on({{ onNotice: () => `Before that: ${{Pc ? `{}` : \"\"}} Then wait until the light on your router is green again, close every other window you opened for this, and keep your notes nearby so that you can pick up the work where you left it when the program starts.` }});\n",
            prose("open the settings"),
            prose("sign in")
        );
        let mut split = find(&testjs::chunks(&[
            ("/$bunfs/root/chunk-b.js", &unplaced),
            ("/$bunfs/root/chunk-a.js", &placed),
        ]));
        let before = split.len();
        let outer = by_text(&split, "Before that:").map(|p| p.id.clone());
        assert!(outer.is_some(), "{split:#?}");
        assert_eq!(
            by_text(&split, "can sign in again").and_then(|p| p.part_of.clone()),
            outer
        );
        drop_unplaced_guesses(&mut split);
        assert_eq!(split.len(), before - 2, "{split:#?}");
        assert_eq!(
            kind_of(&split, "can read the file").as_deref(),
            Some(kinds::OTHER)
        );
        assert_eq!(kind_of(&split, "can open the settings"), None);
        assert_eq!(kind_of(&split, "Before that:"), None);
        // Kept for its site in the placed chunk; no longer a piece of a
        // text that is gone.
        let kept = by_text(&split, "can sign in again").expect("kept");
        assert_eq!(kept.sites.len(), 2);
        assert_eq!(kept.part_of, None);
        // One bundle: one module with placed texts, where the rule guesses
        // as before.
        let mut one = find_in(&format!("{placed}{unplaced}").replace("export { Ta as a };", ""));
        let n = one.len();
        drop_unplaced_guesses(&mut one);
        assert_eq!(one.len(), n);
        assert_eq!(
            kind_of(&one, "can open the settings").as_deref(),
            Some(kinds::OTHER)
        );
    }

    #[test]
    fn forked_agents_tool_results_api_messages_and_far_skill_bodies() {
        let v = find_in(
            r#"
function Fa(Fb){ return { type: "user", message: { role: "user", content: Fb } }; }
async function Fc(){ return Fd({ promptMessages: [Fa("Sum up what the session did so far in five words.")], forkLabel: "sum_up", maxTurns: 1 }); }
function Fe(Ff){ return { content: [{ type: "text", text: Ff }], isError: !0 }; }
function Fg(){ return Fe("The window you named is gone; list the windows again."); }
function Fh(){ return { content: [{ type: "text", text: "Two rows matched the query." }], structuredContent: Fi }; }
function Fj(){ return Fk.create({ model: Fl, max_tokens: 9, messages: [{ role: "user", content: "Name this branch in three words." }] }); }
function Fm(Fn){ return Fo({ content: Fn, isMeta: !0 }); }
function Fp(Fq){ Fm(Fq); return { role: "user", content: Fq }; }
Fp("The queued note came from another session.");
var Fr = "Depth.\n\nCheck each change sits at the right depth.";
function Fs(Ft){ return [Ft]; }
function Fu(Fv){ return Fs(Fv).join("\n"); }
function Fw(Fx){ return Fu(Fx); }
function Fy(){ return Fw(Fr); }
var Fz = { type: "prompt", name: "review", whenToUse: "Use when the user asks for a careful review.",
  async getPromptForCommand(){ return [{ type: "text", text: Fy() }]; } };
var Ga = ["gh pr edit *--force*"];
var Gb = Gc([...Ga]);
var Gd = { type: "prompt", name: "ship", disallowedTools: Gb,
  async getPromptForCommand(){ return [{ type: "text", text: `Never run ${Gb.join(", ")} here.` }]; } };
async function Gf(Gg){ return Gh({ systemPrompt: Gi(["You name sessions in three words."]), userPrompt: "Name this session: " + Gg, options: { querySource: "namer" } }); }
function Gj(){ return { behavior: "deny", message: "No tools are needed to name a session." }; }
function Gk(){ return { behavior: "ask", message: "Allow the namer to read the folder?" }; }
var Ge = { type: "prompt", name: "batch", whenToUse: "Use when many files need the same change.",
  description: "Plan one change across many files and hand it to helpers.",
  disableModelInvocation: !0, async getPromptForCommand(){ return []; } };
var Gm = { type: "prompt", name: "tidy", menuDescription: "Tidy the desk",
  description: "Sort the loose papers on the desk into the labelled trays.",
  async getPromptForCommand(){ return []; } };
var Gn = { type: "prompt", name: "stamp", source: "builtin",
  description: "Stamp every letter in the outgoing tray with the date.",
  async getPromptForCommand(){ return []; } };
"#,
        );
        let kind = |needle: &str| kind_of(&v, needle);
        let p = by_text(&v, "Sum up what the session").expect("a forked agent's prompt");
        assert_eq!(p.kind, kinds::AGENT);
        assert_eq!(p.owner.as_deref(), Some("sum_up"));
        // Tool results of the MCP shape; a side request's system and user
        // prompts; a message of the model's API.
        for (needle, want) in [
            ("The window you named", kinds::SYSTEM_REMINDER),
            ("Two rows matched", kinds::SYSTEM_REMINDER),
            ("You name sessions", kinds::AGENT),
            ("Name this session", kinds::AGENT),
            ("Name this branch", kinds::AGENT),
            // Reaching a reminder's helper and an API message: the
            // reminder decides, being the more specific place.
            ("The queued note", kinds::SYSTEM_REMINDER),
            // A denied call's message is its result.
            ("No tools are needed", kinds::SYSTEM_REMINDER),
            ("Use when the user asks", kinds::SKILL),
            // A skill's description is listed to the model with its name.
            ("Sort the loose papers", kinds::SKILL),
            // The text a permission rule is put in is the prompt.
            ("Never run", kinds::SKILL),
        ] {
            assert_eq!(kind(needle).as_deref(), Some(want), "{needle}");
        }
        // Four calls away from the command's prompt.
        let p = by_text(&v, "Check each change sits").expect("a far skill piece");
        assert_eq!(p.kind, kinds::SKILL);
        assert_eq!(p.owner.as_deref(), Some("review"));
        // Not prompts: a command's permission rule, even when its prompt
        // names it; the `whenToUse` and description of a skill the model
        // may not invoke (it is not listed) and a built-in command's
        // description (the menu's); an ask's message (the user's).
        for needle in [
            "gh pr edit",
            "Use when many files",
            "Plan one change",
            "Stamp every letter",
            "Allow the namer",
        ] {
            assert_eq!(kind(needle), None, "{needle}");
        }
    }

    #[test]
    fn titles_come_from_the_owner_and_ids_from_the_words() {
        let v = find_in(SRC);
        let p = by_text(&v, "Use this agent for small").unwrap();
        assert_eq!(p.title, "Agent prompt: helper");
        assert_eq!(p.id, "use-this-agent-for-small-searches");
        let p = by_text(&v, "How the parts fit").unwrap();
        assert_eq!(p.id, "guide-how-the-parts-fit-together");
        let p = by_text(&v, "The user changed").unwrap();
        assert_eq!(
            p.title,
            "System reminder: The user changed the settings file since your last turn"
        );
    }

    #[test]
    fn holes_are_named_by_what_they_read() {
        let v = find_in(SRC);
        let p = by_text(&v, "You are a helper agent").unwrap();
        assert_eq!(
            p.text,
            "You are a helper agent working for ${userName} in ${v2}. Keep answers short."
        );
        let exprs: Vec<&str> = p.variables.iter().map(|x| x.expression.as_str()).collect();
        assert_eq!(exprs, ["Qo.userName", "Qe()"]);
        assert_eq!(p.bytes, p.text.len());
        assert_eq!(p.tokens_estimate, p.text.len().div_ceil(4));
    }

    #[test]
    fn a_text_flows_through_parameters_and_chunks() {
        // Into a local function's parameter, then a tool's prompt.
        let src = r#"
function Wa(Wb){ return { name: "Reader", inputSchema: Wc, async prompt(){ return Wb; } }; }
var Wd = Wa("Read the whole file before you change any line of it.");
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Read the whole file"),
            Some(kinds::TOOL_DESCRIPTION.into())
        );
        // Exported by one chunk, imported by another that makes it a prompt.
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-a.js",
                "var Xa = \"Write the answer as a short list of plain steps.\";\nexport { Xa as t };\n",
            ),
            (
                "/$bunfs/root/chunk-b.js",
                "import { t as Yb } from \"./chunk-a.js\";\nvar Yc = { agentType: \"lister\", getSystemPrompt: () => Yb };\n",
            ),
        ]);
        let v = find(&ci);
        let p = by_text(&v, "Write the answer").expect("found across chunks");
        assert_eq!(
            (p.kind.as_str(), p.owner.as_deref()),
            (kinds::AGENT, Some("lister"))
        );
        // Passed to a function another chunk exports (under the name it is
        // imported by), whose parameter reaches a reminder — as the same
        // code in one bundle would.
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-a.js",
                r#"function Za(Zb){ return { content: Zb, isMeta: true }; }
export { Za as m };
"#,
            ),
            (
                "/$bunfs/root/chunk-b.js",
                r#"import { m as Qa } from "./chunk-a.js";
var Qc = Qa("Check the open files again before you answer this turn.");
"#,
            ),
        ]);
        assert_eq!(
            kind_of(&find(&ci), "Check the open files again"),
            Some(kinds::SYSTEM_REMINDER.into()),
            "an argument of another chunk's function"
        );
    }

    #[test]
    fn an_attachment_of_a_type_the_converter_hands_on_is_a_reminder() {
        // The converter: a table of handlers by type, each making a meta
        // message. An attachment made elsewhere names its handler by type.
        let src = r#"
var Ha = {
  date_note: (a) => [Hm({ content: `The date is now ${a.date}.`, isMeta: true })],
  sandbox_note: (a) => [Hm({ content: a.content, isMeta: true })],
  plan_note: (a) => [Hm({ content: a.content, isMeta: true })],
};
function Hb(){ return [{ type: "sandbox_note", content: "Commands run in a sandbox that limits the network hosts." }]; }
function Hc(){ return [{ type: "status_line", content: "Commands ran in a sandbox that limited the hosts shown." }]; }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Commands run in a sandbox"),
            Some(kinds::SYSTEM_REMINDER.into())
        );
        // A type no handler takes is no message.
        assert_eq!(kind_of(&v, "Commands ran in a sandbox"), None);
        // Two handlers are a table of something else, not the converter.
        let src = r#"
var Ha = {
  sandbox_note: (a) => [Hm({ content: a.content, isMeta: true })],
  plan_note: (a) => [Hm({ content: a.content, isMeta: true })],
};
function Hb(){ return [{ type: "sandbox_note", content: "Commands run in a sandbox that limits the network hosts." }]; }
"#;
        assert_eq!(kind_of(&find_in(src), "Commands run in a sandbox"), None);
    }

    #[test]
    fn a_function_another_chunk_exports_again_is_followed_to_its_calls() {
        // A code-split build gathers a part's functions in a chunk that only
        // exports them again (often under their real names); the callers
        // reach them through that chunk, by a namespace or an import.
        let made = "/$bunfs/root/chunk-a.js";
        let maker = r#"function Ra(){ return "Run the check again before you report what it found."; }
export { Ra as r };
"#;
        let barrel = r#"import { r as Rb } from "./chunk-a.js";
export { Rb as resolveCheck };
"#;
        let by_namespace = r#"var Rn = import.meta.require("/$bunfs/root/chunk-b.js");
var Rc = { content: Rn.resolveCheck(), isMeta: true };
"#;
        let by_import = r#"import { resolveCheck as Rd } from "./chunk-b.js";
var Re = { content: Rd(), isMeta: true };
"#;
        for (how, caller) in [("namespace", by_namespace), ("import", by_import)] {
            let ci = testjs::chunks(&[
                (made, maker),
                ("/$bunfs/root/chunk-b.js", barrel),
                ("/$bunfs/root/chunk-c.js", caller),
            ]);
            assert_eq!(
                kind_of(&find(&ci), "Run the check again"),
                Some(kinds::SYSTEM_REMINDER.into()),
                "called by {how} through the chunk that exports it again"
            );
        }
    }

    #[test]
    fn a_function_handed_to_a_helper_that_calls_it_returns_there() {
        // A helper calls the function it is handed (a section chosen from
        // recorded decisions): what that function returns is the call's.
        let src = r#"
function Ha(d, f){ return d.replayed ? d.text : f(d.choice); }
var Hb = { content: Ha({ choice: 1 }, (c) => "Check the plan with the user before you start."), isMeta: true };
"#;
        assert_eq!(
            kind_of(&find_in(src), "Check the plan"),
            Some(kinds::SYSTEM_REMINDER.into())
        );
    }

    #[test]
    fn a_function_of_a_returned_table_is_followed_where_it_is_read() {
        // A table of section functions is made by a function; the caller
        // reads one out of the result and hands it to a helper that calls
        // it.
        let src = r#"
function Ta(d, f){ return f(d); }
function Tb(){ return { pronouns: () => "Use the names people give for themselves.", other: () => null }; }
function Tc(){ let t = Tb(); return { content: Ta(1, t.pronouns), isMeta: true }; }
"#;
        assert_eq!(
            kind_of(&find_in(src), "Use the names people"),
            Some(kinds::SYSTEM_REMINDER.into())
        );
    }

    #[test]
    fn the_call_handed_the_prompts_cache_boundary_composes_the_system_prompt() {
        // The sections, made far away, are handed to the call that is also
        // handed the marker the prompt is split at for caching; the same
        // sections handed to a call without it say nothing.
        let marker = r#"var Ba = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__", Bo = "--";
export { Ba as b, Bo as o };
"#;
        let composer = |boundary: &str| {
            format!(
                r#"import {{ b as Bx, o as By }} from "./chunk-a.js";
var Ca = "Keep your answers short unless the user asks for depth.";
function Cb(list, boundary){{ let s = list.filter((k) => k.text !== boundary); return [...s.map((k) => k.text), boundary]; }}
function Cc(){{ return [{{ id: "tone", scope: "shared", text: Ca }}]; }}
async function Cd(){{ let g = Cc(); return Cb(g, ready() ? {boundary} : null); }}
"#
            )
        };
        for (boundary, system) in [("Bx", true), ("By", false)] {
            let ci = testjs::chunks(&[
                ("/$bunfs/root/chunk-a.js", marker),
                ("/$bunfs/root/chunk-b.js", &composer(boundary)),
            ]);
            let k = kind_of(&find(&ci), "Keep your answers short");
            assert_eq!(
                k.as_deref() == Some(kinds::SYSTEM),
                system,
                "handed {boundary}: {k:?}"
            );
        }
        // In one bundle too.
        let one = format!(
            "{}\n{}",
            r#"var Ba = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__";"#,
            composer("Ba")
                .lines()
                .skip(1)
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert_eq!(
            kind_of(&find_in(&one), "Keep your answers short"),
            Some(kinds::SYSTEM.into())
        );
        // And with the marker written into the call itself.
        let direct = composer("")
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n")
            .replace(
                "ready() ? ",
                "ready() ? \"__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__\"",
            );
        assert_eq!(
            kind_of(&find_in(&direct), "Keep your answers short"),
            Some(kinds::SYSTEM.into())
        );
    }

    #[test]
    fn a_table_read_by_index_in_the_chunk_that_imports_it_is_followed_there() {
        // A table of descriptions, bound and exported by one chunk, read
        // as `t[key]` and as `t.key` by a skill's body in another: the
        // same place as in one bundle.
        let table = r#"var Ka = { Chat: "When the chat box has focus and holds a draft.", Help: "When the help panel is open." }, Kb = ["Chat", "Help"];
export { Ka as t, Kb as k };
"#;
        let skill = |t: &str, k: &str| {
            format!(
                r#"function Fm(h, rows){{ return [h.join(" | "), ...rows.map((r) => r.join(" | "))].join("\n"); }}
function Kc(){{ return Fm(["Context", "Description"], {k}.map((e) => [e, {t}[e]])); }}
var Kd = {{ type: "prompt", name: "keys", description: "Change the key bindings.", getPromptForCommand(){{ return "Bind the keys the user names.\n" + Kc() + "\nHelp: " + {t}.Help; }} }};
"#
            )
        };
        let ci = testjs::chunks(&[
            ("/$bunfs/root/chunk-a.js", table),
            (
                "/$bunfs/root/chunk-b.js",
                &format!(
                    "import {{ t as Kt, k as Kk }} from \"./chunk-a.js\";\n{}",
                    skill("Kt", "Kk")
                ),
            ),
        ]);
        let split = find(&ci);
        let one = find_in(&format!(
            "{}\n{}",
            table.lines().next().unwrap(),
            skill("Ka", "Kb")
        ));
        for (form, found) in [("one bundle", &one), ("chunks", &split)] {
            for text in ["When the chat box has focus", "When the help panel"] {
                assert_eq!(
                    kind_of(found, text).as_deref(),
                    Some(kinds::SKILL),
                    "{form}: {text}"
                );
            }
        }
    }

    #[test]
    fn a_tools_search_hint_and_a_commands_menu_line_and_argument_hint_are_the_interfaces() {
        // Both reach a reminder here, as they may through shared helpers
        // in a build; the keys they start at say who reads them.
        let src = r#"
var Fa = { name: "Finder", searchHint: "find files by their name or pattern", inputSchema: Fs, async prompt(){ return "Find files by name before you read them."; } };
var Fc = { content: Fa.searchHint, isMeta: true };
var Fd = { type: "prompt", name: "tidy", menuDescription: "tidy up the changed code quickly", getPromptForCommand(){ return "Tidy the changed code without changing what it does."; } };
var Fe = { content: Fd.menuDescription, isMeta: true };
var Ff = { type: "prompt", name: "deck", argumentHint: "[what the slides are about]", getPromptForCommand(){ return "Make the slides the user asked for."; } };
var Fg = { content: Ff.argumentHint, isMeta: true };
"#;
        let v = find_in(src);
        for needle in [
            "find files by their",
            "tidy up the changed",
            "[what the slides",
        ] {
            assert_eq!(kind_of(&v, needle), None, "{needle}");
        }
        assert_eq!(
            kind_of(&v, "Find files by name"),
            Some(kinds::TOOL_DESCRIPTION.into())
        );
    }

    #[test]
    fn a_text_reaches_the_same_places_whichever_trace_meets_a_cycle_first() {
        // Two helpers that hand their argument to each other: the first
        // text enters the cycle at `Pa`, the second at `Pb`. Found with a
        // memo that answered "nothing" for a helper met again, `Pb`'s
        // reach was remembered without `Pa`'s message and the second
        // text was lost.
        let src = r#"
function Pa(x){ Pb(x); return { content: x, isMeta: true }; }
function Pb(y){ if (Pz) Pa(y); }
var Pd = Pa("Look at the first note before you go on with the task.");
var Pe = Pb("Look at the second note before you go on with the task.");
"#;
        let v = find_in(src);
        for needle in ["Look at the first note", "Look at the second note"] {
            assert_eq!(
                kind_of(&v, needle),
                Some(kinds::SYSTEM_REMINDER.into()),
                "{needle}"
            );
        }
    }

    #[test]
    fn a_result_of_another_chunks_function_reaches_its_caller() {
        // A section built by a function one chunk exports, called by the
        // chunk that assembles an agent's prompt — as in one bundle.
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-a.js",
                "function Ra(){ return \"Reply with the path of the file and nothing else.\"; }\nexport { Ra as r };\n",
            ),
            (
                "/$bunfs/root/chunk-b.js",
                "import { r as Rb } from \"./chunk-a.js\";\nvar Rc = { agentType: \"pather\", getSystemPrompt: () => Rb() };\n",
            ),
        ]);
        let v = find(&ci);
        let p = by_text(&v, "Reply with the path").expect("found across chunks");
        assert_eq!(
            (p.kind.as_str(), p.owner.as_deref()),
            (kinds::AGENT, Some("pather"))
        );
    }

    #[test]
    fn a_lazily_loaded_modules_exports_are_read_and_called_through_its_namespace() {
        // A bundle's lazily initialised module: its export table fills a
        // namespace object, and other code reads and calls its members
        // through a name bound to it (`(init(), wrap(ns))`).
        let src = r#"
var Na = {}; Nb(Na, { TIDY_PROMPT: () => Nc, tickPrompt: () => Nd });
var Nc; var Ne = Nf(() => { Nc = "Tidy every file in the folder, one at a time, and say what changed."; });
function Ng(){ return "Run the scheduled check again and report only what is new since the last one."; }
function Nd(Nh){ return Ng() ?? Nh; }
var Ni; var Nj = Nf(() => { Ni = (Ne(), Nk(Na)); });
var Nl = { type: "prompt", name: "tidy", async getPromptForCommand(){ return [{ type: "text", text: Ni.TIDY_PROMPT }]; } };
function Nm(Nn){ let No = (Np) => ({ value: Np, mode: "prompt", isMeta: !0, priority: "later" }); Nn.enqueue(No(Ni.tickPrompt(1))); }
"#;
        tidy_is_a_skill_and_the_tick_a_reminder(&find_in(src));
    }

    #[test]
    fn a_lazily_loaded_modules_exports_taken_apart_into_names_are_followed() {
        // `let {name: local} = await Promise.resolve().then(() => (init(),
        // ns))`: a bundle waits for a module it loads late and takes the
        // exports it needs into plain names — a function called, a value
        // read, an argument handed into the function.
        let src = r#"
var Na = {}; Nb(Na, { buildFixPrompt: () => Nc, FIX_NOTE: () => Nd });
function Nc(e, t){ return ["Help me fix the problems listed below in the settings file.", e, t].join("\n"); }
var Nd; var Ne = Nf(() => { Nd = "Keep the settings file valid after each edit you make."; });
async function Ng(h){
  let { buildFixPrompt: Nh, FIX_NOTE: Ni } = await Promise.resolve().then(() => (Ne(), Na));
  let Nj = Nh(h.list, "Only the keys that are broken need a change, leave the rest.");
  h.enqueue({ value: Nj, mode: "prompt", isMeta: !0 });
  h.enqueue({ value: Ni, mode: "prompt", isMeta: !0 });
}
"#;
        let v = find_in(src);
        assert_kinds(
            &v,
            &[
                "Help me fix the problems",
                "Keep the settings file valid",
                "Only the keys that are broken",
            ],
            kinds::SYSTEM_REMINDER,
        );
    }

    #[test]
    fn file_keys_are_paths_or_documents_and_scripts() {
        for k in [
            "dir/notes.md",
            "guide.md",
            "artifact-publish.mjs",
            "run.cjs",
            "a/b.x",
        ] {
            assert!(is_file_key(k), "{k}");
        }
        for k in ["theme.set", "notes", ".md", "a b.md", "x.toolongext"] {
            assert!(!is_file_key(k), "{k}");
        }
    }

    #[test]
    fn a_loaders_module_is_followed_into_the_names_it_is_taken_into() {
        // `function load(){ return Promise.resolve().then(() => (init(),
        // ns)) }`: a bundle loads a module late through a function, and
        // takes its exports from the awaited call, from one element of
        // `Promise.all`, or in a `.then` callback.
        let src = r#"
var Na = {}; Nb(Na, { SKILL_MD: () => Nc, buildNote: () => Nd, TICK: () => Nt });
var Nc, Nt; var Ne = Nf(() => { Nc = "Tidy every file in the folder, one at a time, and say what changed."; Nt = "Run the scheduled check again and report only what is new since the last one."; });
function Nd(e){ return ["Keep the settings file valid after each edit you make.", e].join("\n"); }
function Ng(){ return Promise.resolve().then(() => (Ne(), Na)); }
var Nh = { type: "prompt", name: "tidy", async getPromptForCommand(){ let { SKILL_MD: Ni } = await Ng(); return [{ type: "text", text: Ni }]; } };
async function Nj(h){ let [Nk, { buildNote: Nl }] = await Promise.all([h.load(), Ng()]); h.enqueue({ value: Nl("Only the keys that are broken need a change."), mode: "prompt", isMeta: !0 }); }
function Nm(h){ return Ng().then((Nn) => h.enqueue({ value: Nn.TICK, mode: "prompt", isMeta: !0 })); }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Tidy every file").as_deref(),
            Some(kinds::SKILL)
        );
        assert_kinds(
            &v,
            &[
                "Keep the settings file valid",
                "Only the keys that are broken",
                "Run the scheduled check",
            ],
            kinds::SYSTEM_REMINDER,
        );
    }

    #[test]
    fn a_chunk_imported_lazily_is_followed_into_the_names_it_is_taken_into() {
        // A code-split build loads a chunk with `import("…")`, directly or
        // through a loader function, and takes its exports apart, binds it
        // whole, or hands it to a `.then` callback: the same texts reach
        // the same places as through a static import.
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-a.js",
                "var Ra = \"Tidy every file in the folder, one at a time, and say what changed.\";\nfunction Rb(){ return \"Run the scheduled check again and report only what is new.\"; }\nvar Rc = \"Check the open files again before you answer this turn.\";\nvar Rd = \"Say which of the checks failed and why, in one short line each.\";\nvar Re = \"Keep the notes you write short and in the order they happened.\";\nexport { Ra as SKILL_PROMPT, Rb as tickPrompt, Rc as NOTE, Rd as HINT, Re as WARN };\n",
            ),
            (
                "/$bunfs/root/chunk-b.js",
                "function Rl(){ return import(\"/$bunfs/root/chunk-a.js\"); }\nvar Rm = { type: \"prompt\", name: \"tidy\", async getPromptForCommand(){ let [Rx, { SKILL_PROMPT: Rn }] = await Promise.all([Ry(), Rl()]); return [{ type: \"text\", text: Rn }]; } };\nasync function Ro(h){ let { tickPrompt: Rp } = await import(\"/$bunfs/root/chunk-a.js\"); h.enqueue({ value: Rp(), mode: \"prompt\", isMeta: !0 }); }\nasync function Rq(h){ let Rr = await import(\"/$bunfs/root/chunk-a.js\"); h.enqueue({ value: Rr.NOTE, mode: \"prompt\", isMeta: !0 }); }\nfunction Rs(h){ import(\"/$bunfs/root/chunk-a.js\").then(({ HINT: Rt }) => h.enqueue({ value: Rt, mode: \"prompt\", isMeta: !0 })); Rl().then((Ru) => h.enqueue({ value: Ru.WARN, mode: \"prompt\", isMeta: !0 })); }\n",
            ),
        ]);
        let v = find(&ci);
        tidy_is_a_skill_and_the_tick_a_reminder(&v);
        assert_kinds(
            &v,
            &[
                "Check the open files",
                "Say which of the checks",
                "Keep the notes",
            ],
            kinds::SYSTEM_REMINDER,
        );
    }

    #[test]
    fn a_chunks_exports_are_read_through_a_name_bound_to_it() {
        // A code-split build's lazily loaded chunk: bound whole, then read
        // and called as `name.export`.
        let ci = testjs::chunks(&[
            (
                "/$bunfs/root/chunk-a.js",
                "var Ra = \"Tidy every file in the folder, one at a time, and say what changed.\";\nfunction Rb(){ return \"Run the scheduled check again and report only what is new.\"; }\nexport { Ra as TIDY_PROMPT, Rb as tickPrompt };\n",
            ),
            (
                "/$bunfs/root/chunk-b.js",
                "var Rc = import.meta.require(\"/$bunfs/root/chunk-a.js\");\nvar Rd = { type: \"prompt\", name: \"tidy\", async getPromptForCommand(){ return [{ type: \"text\", text: Rc.TIDY_PROMPT }]; } };\nfunction Re(Rf){ Rf.enqueue({ value: Rc.tickPrompt(), mode: \"prompt\", isMeta: !0 }); }\n",
            ),
        ]);
        tidy_is_a_skill_and_the_tick_a_reminder(&find(&ci));
    }

    /// The two texts of the namespace tests: an exported binding read as
    /// `x.NAME`, an exported function's result called as `x.name(…)`.
    fn tidy_is_a_skill_and_the_tick_a_reminder(v: &[Prompt]) {
        assert_eq!(kind_of(v, "Tidy every file").as_deref(), Some(kinds::SKILL));
        assert_eq!(
            kind_of(v, "Run the scheduled check").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
    }

    #[test]
    fn texts_in_getters_private_methods_and_computed_keys_are_followed() {
        // Bundled TypeScript: a helper assigned inside a method's computed
        // key, a getter's result, a private method's result (its own, not
        // the enclosing function's, whose result is an agent's prompt).
        let src = r#"
var Ga = "Write a short summary of the work so far so that you can pick it up later.";
var Gb;
class Gc { [(Gb = async function(){ let Gd = this.x ?? Ga; return this.client.create({ messages: [{ role: "user", content: Gd }] }); }, Symbol.iterator)](){ return 1; } }
var Ge = { name: "Reader", inputSchema: Gf, get prompt(){ return "Read the file at the path given and return its lines."; } };
function Gg(){ class Gh { #Gi(){ return "Show the list of files that were deleted today."; } } return "You help with files."; }
var Gj = { agentType: "filer", getSystemPrompt: Gg };
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Write a short summary").as_deref(),
            Some(kinds::AGENT)
        );
        assert_eq!(
            kind_of(&v, "Read the file at the path").as_deref(),
            Some(kinds::TOOL_DESCRIPTION)
        );
        assert_eq!(
            kind_of(&v, "You help with files").as_deref(),
            Some(kinds::AGENT)
        );
        assert_eq!(kind_of(&v, "Show the list of files"), None);
    }

    #[test]
    fn a_chain_deeper_than_the_tracer_nests_ends() {
        // A hostile file: each binding the next one's value, far deeper
        // than any build (the tracer stops nesting, and finds nothing
        // past its hops, rather than exhausting the stack).
        let mut src =
            String::from("var a0 = \"Keep going until every step of the chain is done.\";\n");
        for i in 1..40_000 {
            src.push_str(&format!("var a{i} = a{};\n", i - 1));
        }
        src.push_str("var z = { agentType: \"chain\", getSystemPrompt: () => a39999 };\n");
        assert_eq!(kind_of(&find_in(&src), "Keep going until"), None);
        // Near enough, the same text is the agent's.
        let near = "var a0 = \"Keep going until every step of the chain is done.\";\nvar a1 = a0;\nvar z = { agentType: \"chain\", getSystemPrompt: () => a1 };\n";
        assert_eq!(
            kind_of(&find_in(near), "Keep going until"),
            Some(kinds::AGENT.into())
        );
    }

    #[test]
    fn sections_of_a_registry_reach_the_system_prompt() {
        // The main prompt's sections: functions kept in `{name, compute}`
        // objects, computed together, their results spread into the
        // prompt the main loop is given.
        let src = r#"
var Sa = "Use plain words when you name someone you have not met.";
function Sb(e, t){ return { name: e, compute: t, cacheBreak: false }; }
async function Sc(e){ return Promise.all(e.map(async (r) => { let o = await r.compute(); return o; })); }
async function Sd(t){
  let m = [Sb("pronouns", () => Sa), Sb("other", () => null)], g = await Sc(m);
  return [...g].filter((x) => x !== null);
}
async function Se(){ let p = await Sd(1); return loop({ systemPrompt: p, userContext: {}, systemContext: {} }); }
"#;
        assert_eq!(
            kind_of(&find_in(src), "Use plain words"),
            Some(kinds::SYSTEM.into())
        );
    }

    #[test]
    fn a_promise_passes_its_value_on() {
        let src = r#"
async function Pa(){ return "Keep each reply under ten lines unless asked."; }
function Pb(){ return Pa().then((t) => cache("brevity", t)); }
var Pc = { agentType: "brief", getSystemPrompt: () => Pb() };
"#;
        assert_eq!(
            kind_of(&find_in(src), "Keep each reply"),
            Some(kinds::AGENT.into())
        );
    }

    #[test]
    fn a_property_of_an_argument_is_followed_into_the_parameters_pattern() {
        // Functions that take their argument apart (`{note: e}`): the
        // text passed as that property goes where the name goes inside. A
        // maker called from two places: what it returns goes on only where
        // each call's own result goes (an agent's prompt for one, nowhere
        // for the other).
        let src = r#"
function Ma({ body: e, tag: t = "note" }){ return { tag: t, text: e }; }
var Mb = { agentType: "resumer", getSystemPrompt: () => Ma({ body: "Carry on from where the summary stopped, without asking again." }) };
function Mc(){ Md.push(Ma({ body: "Shown in the list once the scroll ends here." })); }
function Me({ note: e }){ Mf.create({ messages: [{ role: "user", content: e }] }); }
Me({ note: "Check the three files again before you answer." });
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Check the three files").as_deref(),
            Some(kinds::AGENT)
        );
        assert_eq!(
            kind_of(&v, "Carry on from where").as_deref(),
            Some(kinds::AGENT)
        );
        assert_eq!(kind_of(&v, "Shown in the list"), None);
    }

    #[test]
    fn a_text_the_build_ships_as_a_file_is_read_where_its_path_is_loaded() {
        // A code-split build ships skills' bodies and reference documents
        // as modules of their own, read by path: the path handed to a
        // loader at once, or bound to a name first and inflated (zstd).
        // Each text is placed where the call that reads it stands. A
        // script reaching no place is not taken by the prose rule (its
        // comments read as prose); a document is.
        let main = r#"
import { load, inflate } from "./chunk-io.js";
var Fp = "/$bunfs/root/guide-1a2b.md.zst";
var Fg = inflate(Fp, import.meta.dirname);
var Fs = load("/$bunfs/root/SKILL-9z8y.md");
var Ft = load("/$bunfs/root/tool.mjs-4c5d.txt");
var Fu = load("/$bunfs/root/helper.mjs-6f6f.txt");
var Fn = load("/$bunfs/root/notes-7e7e.md");
var Fq = { "ref/guide.md": Fg, "scripts/tool.mjs": Ft };
var Fk = { type: "prompt", name: "tidy", source: "builtin", description: "Tidy the files",
  files: Fq,
  async getPromptForCommand(){ return [{ type: "text", text: Fs }]; } };
function Fw(Fp){ return { "other/guide.md": inflate(Fp, import.meta.dirname) }; }
export { Fk, Fu, Fn, Fw };
"#;
        let io = r#"
export function load(p) { return import.meta.require(p); }
export function inflate(p, d) { return String(p + d); }
"#;
        let guide = zstd::encode_all(
            &b"# Guide\n\nHow the parts fit together, in three short steps you follow."[..],
            3,
        )
        .unwrap();
        let files: [(&str, &[u8], &'static str); 5] = [
            ("/$bunfs/root/guide-1a2b.md.zst", &guide, "file"),
            (
                "/$bunfs/root/SKILL-9z8y.md",
                b"Tidy every file the user names, one at a time, and report each change.",
                "text",
            ),
            (
                "/$bunfs/root/tool.mjs-4c5d.txt",
                b"// Lays out the files you asked for, then checks each of them twice.\nexport const x = 1;",
                "text",
            ),
            (
                "/$bunfs/root/helper.mjs-6f6f.txt",
                b"// Reads the files you named and prints what you should change in them, one line for each file, \
                  with the reason you gave and the change you asked for, so that you can read them over before \
                  anything is written back to the folder you chose\nexport const y = 2;",
                "text",
            ),
            (
                "/$bunfs/root/notes-7e7e.md",
                b"When you tidy a folder, you keep the files the user has marked as pinned where they are, \
                  you move the others into the folders their names suggest, and you say at the end which files \
                  you moved, where to, and which you left alone because you were not sure.",
                "text",
            ),
        ];
        let ci = testjs::chunks_with_files(
            &[
                ("/$bunfs/root/chunk-main.js", main),
                ("/$bunfs/root/chunk-io.js", io),
            ],
            &files,
        );
        assert_eq!(ci.texts.len(), 5);
        let v = find(&ci);
        let guide = by_text(&v, "How the parts fit together").expect("the inflated document");
        assert_eq!(guide.kind, kinds::DATA);
        assert_eq!(guide.owner.as_deref(), Some("ref/guide.md"));
        let skill = by_text(&v, "Tidy every file the user").expect("the skill's body");
        assert_eq!(skill.kind, kinds::SKILL);
        assert_eq!(skill.owner.as_deref(), Some("tidy"));
        // The site is the call that reads the file.
        let m = &ci.modules[testjs::module(&ci, "chunk-main.js")];
        let at = skill.sites[0].offset as usize;
        assert!(m.source()[at..].starts_with("load(\"/$bunfs/root/SKILL-9z8y.md\")"));
        // A script in a skill's file table is the skill's data, as an
        // inline one is; one reaching nothing is not taken as prose.
        assert_eq!(
            kind_of(&v, "// Lays out the files").as_deref(),
            Some(kinds::DATA)
        );
        assert!(by_text(&v, "// Reads the files you named").is_none());
        assert!(by_text(&v, "When you tidy a folder").is_some());
        // Inside `Fw` the name is its parameter, not the path: that call
        // reads nothing, and the document has its one site.
        assert_eq!(guide.sites.len(), 1);
        assert!(
            v.iter()
                .all(|p| p.owner.as_deref() != Some("other/guide.md"))
        );
    }

    #[test]
    fn a_skill_file_handed_to_an_agent_is_a_skill() {
        // A skill run in an agent of its own: its file (front matter with a
        // name and a description) becomes the agent's opening message. It
        // is still the skill's body; a plain task for the agent is not.
        let src = r#"
var Sa = "---\nname: tidy\ndescription: Tidy a folder\n---\nTidy every file in the folder, one at a time.";
function Sb(t){ return { type: "user", message: { role: "user", content: t } }; }
async function Sc(){ return Sd({ promptMessages: [Sb(Sa)], forkLabel: "skill_run" }); }
async function Se(){ return Sd({ promptMessages: [Sb("Count the files in the folder, then stop.")], forkLabel: "count" }); }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Tidy every file").as_deref(),
            Some(kinds::SKILL)
        );
        assert_eq!(
            kind_of(&v, "Count the files").as_deref(),
            Some(kinds::AGENT)
        );
    }

    #[test]
    fn a_skill_file_in_a_skills_file_table_is_a_skill() {
        // A skill's files: a reference document (data) beside a sub-skill's
        // file (front matter with a name and a description).
        let src = r##"
var Ua = { "guide/steps.md": "# Steps\n\nHow the parts of the folder fit together, in three short steps.", "sub/SKILL.md": "---\nname: tidy-sub\ndescription: Tidy one sub-folder\n---\nTidy every file in the sub-folder, one at a time." };
var Ub = { type: "prompt", name: "tidy", files: Ua, async getPromptForCommand(){ return [{ type: "text", text: Object.values(Ua).join("\n") }]; } };
var Uc = "---\nname: lone\ndescription: A lone skill\n---\nSort the files in the folder by the date they last changed.";
"##;
        let v = find_in(src);
        assert_eq!(kind_of(&v, "# Steps").as_deref(), Some(kinds::DATA));
        let sub = by_text(&v, "---\nname: tidy-sub").expect("the sub-skill's file");
        assert_eq!(
            (sub.kind.as_str(), sub.owner.as_deref()),
            (kinds::SKILL, Some("tidy-sub"))
        );
        // Its form alone says what a skill file reaching no place is.
        let lone = by_text(&v, "---\nname: lone").expect("the lone skill file");
        assert_eq!(
            (lone.kind.as_str(), lone.owner.as_deref()),
            (kinds::SKILL, Some("lone"))
        );
    }

    #[test]
    fn a_system_prompt_in_a_bag_of_arguments_is_decided_further_on() {
        // A helper's arguments (`{systemPrompt, content, signal}`) and the
        // command line's options hold a `systemPrompt` too: neither is the
        // loop's. The title is a side request's task; the usage error only
        // meets the options (and is thrown); the section reaches the loop.
        let src = r#"
var Ta = "You name a session in five words or fewer.";
async function Tb({ systemPrompt: e, content: t, signal: r }){
  return await Tc({ systemPrompt: [e], userPrompt: t, signal: r, options: {} }); }
function Td(t){ return Tb({ systemPrompt: Ta, content: t, signal: null }); }
function Te(){ return "The flag needs a value after it, as in --name NAME."; }
function Tf(a){ let o = { verbose: a.verbose, resume: a.resume, systemPrompt: Te() }; if (!a.name) throw Error(o.systemPrompt); }
function Tg(){ return "Answer in the language the user writes in."; }
function Th(m){ return Ti({ messages: m, systemPrompt: [Tg()], userContext: {}, systemContext: {} }); }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "You name a session").as_deref(),
            Some(kinds::AGENT)
        );
        assert_eq!(kind_of(&v, "The flag needs a value"), None);
        assert_eq!(
            kind_of(&v, "Answer in the language").as_deref(),
            Some(kinds::SYSTEM)
        );
    }

    #[test]
    fn an_answer_made_up_in_the_models_place_is_not_a_prompt() {
        // Stand-ins for an answer that could not be had: an assistant's
        // message made here, a message made with the API's error. Both go
        // into the list of messages, neither is a text the model reads;
        // a user's message beside them is.
        let src = r#"
function Na(e){ return { type: "assistant", message: { role: "assistant", content: e } }; }
function Nb({ content: e, apiError: t }){ return { type: "user", message: { role: "user", content: e }, apiError: t }; }
function Nc(){ return Nd.create({ messages: [Na("The answer stopped before it was complete."),
  Nb({ content: "The service was busy, so no answer came.", apiError: "overloaded" }),
  { role: "user", content: "Go on from the last step you finished." }] }); }
"#;
        let v = find_in(src);
        assert_eq!(kind_of(&v, "The answer stopped"), None);
        assert_eq!(kind_of(&v, "The service was busy"), None);
        assert_eq!(
            kind_of(&v, "Go on from the last step").as_deref(),
            Some(kinds::AGENT)
        );
    }

    #[test]
    fn a_static_methods_result_goes_where_its_calls_go() {
        // A class's static method (and an object's method) builds a text;
        // its calls through the class's name hand it to a reminder. A
        // method of the same name on another class is not followed.
        let src = r#"
class Ka { static block(e){ return `<notes>These new warnings were found in your files:

${Ka.summary(e)}</notes>`; } static summary(e){ return e.join(","); } }
var Kb = { line(e){ return `The garden gate was left open by ${e} this morning.`; } };
var Kc = class { static block(){ return "Nothing here is ever sent to anyone at all."; } };
function Kd(e){ return [Ke({ content: Ka.block(e), isMeta: !0 }), Ke({ content: Kb.line(e), isMeta: !0 })]; }
function Kf(){ return Kc.block().length; }
"#;
        let v = find_in(src);
        for needle in ["These new warnings", "The garden gate was left open"] {
            assert_eq!(
                kind_of(&v, needle).as_deref(),
                Some(kinds::SYSTEM_REMINDER),
                "{needle}"
            );
        }
        assert_eq!(kind_of(&v, "Nothing here is ever sent"), None);
    }

    #[test]
    fn a_scheduled_tasks_prompt_is_the_next_turn() {
        // `{cron, prompt}`: fired later as the session's next turn.
        let src = r#"
function Ka(e){ let t = `Look at pull request ${e} again and answer new review comments.`;
  return Kb({ id: Kc(), cron: "*/10 * * * *", prompt: t, createdAt: Date.now() }); }
var Kd = Ke({ cron: Kf().describe("Five fields in the local time zone of the host."),
  prompt: Kf().describe("The words handed over at each firing of the schedule.") });
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Look at pull request").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        // A schema's field of that name describes it: not the prompt.
        assert_eq!(kind_of(&v, "The words handed over"), None);
    }

    #[test]
    fn a_text_handed_to_the_reminder_wrapper_is_a_reminder() {
        // The wrapper is known by the template it returns (the tag, and
        // its first parameter as it is), wherever the wrapped text then
        // goes; a function that formats its parameter first, one that
        // wraps in another tag, and a second parameter are not it.
        let src = r#"
function Wa(e){ return `<system-reminder>\n${e}\n</system-reminder>`; }
function Wb(e){ let t = Wq(e); return `<system-reminder>${t}</system-reminder>`; }
function Wc(e){ return `<note>\n${e}\n</note>`; }
function Wd(e, t){ return `<system-reminder>\n${e}\n</system-reminder>`; }
function We(s){ switch (s.state) {
  case "lost": return Wa(`This session lost its link to ${s.name}; say so before relying on its tools.`);
  case "odd": return Wb("The shared store answered in a form this session cannot read.");
  case "slow": return Wc("The shared store is slow to answer at the moment, wait a while.");
  default: return Wd(s.text, "Shown as the label of the store in the status line.");
} }
function Wf(e){ let n = We(e); return { outcome: e.state, ...n !== null && { modelMessage: n } }; }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "This session lost its link").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        for t in [
            "The shared store answered",
            "The shared store is slow",
            "Shown as the label",
        ] {
            assert_eq!(kind_of(&v, t), None, "{t}");
        }
        // In Bun's CommonJS wrapper the module's own functions are in it;
        // a function nested in another is not the module's wrapper.
        let wrapped = format!(
            "(function(exports, require, module, __filename, __dirname) {{{src}\nfunction Wg(){{ function Wa(e){{ return e; }} return Wa(\"Nested and named as the wrapper, but another binding.\"); }}\nfunction Wh(){{ let t = Wg(); return {{ note: t }}; }}\n}})"
        );
        let v = find_in(&wrapped);
        assert_eq!(
            kind_of(&v, "This session lost its link").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        assert_eq!(kind_of(&v, "Nested and named"), None);
    }

    #[test]
    fn a_tables_export_read_at_once_into_a_name_goes_where_the_name_goes() {
        // One bundle's lazily initialised module exports a section; another
        // reads it at once (`x = (init(), wrap(ns)).KEY`) and hands it on.
        let src = r#"
var Xa; var Xi = lazy(() => { Xa = `## Talking to the user\n\nEvery reply the user must see goes through the message tool, not plain text.`; });
var Xn = {}; def(Xn, { PROACTIVE_SECTION: () => Xa, LABEL: () => Xl });
var Xl = "Shown as the label of the panel header for the reader only.";
var Xb, Xc; var Xj = lazy(() => { Xb = (Xi(), wrap(Xn)).PROACTIVE_SECTION; Xc = (Xi(), wrap(Xn)).LABEL; });
function Xd(){ return [Xe({ content: Xb, isMeta: !0 })]; }
function Xf(){ Xg(Xc); }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Talking to the user").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        assert_eq!(kind_of(&v, "Shown as the label"), None);
    }

    #[test]
    fn a_tables_export_taken_apart_in_a_function_and_a_returned_bags_prompt() {
        // A table's export is taken apart where it is needed (`let {KEY: d}
        // = (init(), wrap(ns))`) and called; its result leaves in a bag the
        // function returns (`{prompt, servesDefault}`), read back by the
        // caller into the main loop's system prompt: a section of it, not a
        // small bag's task. A returned bag nothing reads further keeps the
        // bag's kind.
        let src = r#"
var Ya = {}; def(Ya, { getLeadPrompt: () => Yb });
function Yb(e){ let s = e ? `- **Peers** (if available) - Other sessions appear as peers you can message by name.` : ""; return `You lead a team of workers and plan their work for the user.\n${s}\nRead every worker's result before you answer.`; }
var Yi = lazy(() => {});
function Yc(t){ if (t.lead) { let { getLeadPrompt: d } = (Yi(), wrap(Ya)), f = d(t.peers); return { prompt: f, servesDefault: !1 }; } return { prompt: "", servesDefault: !0 }; }
function Yd(t, m){ let r = Yc(t); return query({ messages: m, systemPrompt: r.prompt, userContext: {} }); }
function Ye(){ return { type: "query", prompt: `Summarise what the scan found in your own words, then ask the user how to go on.` }; }
"#;
        let v = find_in(src);
        assert_kinds(
            &v,
            &[
                "You lead a team of workers",
                "Other sessions appear as peers",
            ],
            kinds::SYSTEM,
        );
        assert_eq!(
            kind_of(&v, "Summarise what the scan found").as_deref(),
            Some(kinds::AGENT)
        );
    }

    #[test]
    fn a_tasks_notification_is_queued_for_the_model() {
        // A notification queued with `mode: "task-notification"` is the
        // model's next message (a hook's blocking error here, wrapped on
        // the way); one queued in another mode is not followed there.
        let src = r#"
function Ka(e){ return `<system-reminder>\n${e}\n</system-reminder>`; }
function Kb({summary: e, body: t}){ Kc({ value: Kd({summary: e, trailing: `\n${Ka(t)}`}), mode: "task-notification", priority: "next" }); }
function Kd({summary: e, trailing: t}){ return `<note>${e}</note>${t}`; }
function Ke(i, o){ let y = `The closing check refused to finish, said the command "${i}":`;
  Kb({ summary: "Closing check", body: `${y} ${o}` }); }
function Kf(e){ Kc({ value: e, mode: "bash" }); }
function Kg(){ Kf("Show the latest build log in the panel for review."); }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "The closing check refused").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        assert_eq!(kind_of(&v, "Show the latest build log"), None);
    }

    #[test]
    fn a_field_of_a_returned_object_goes_where_it_is_read() {
        // `{enabled, text}` returned, its `text` read where the result is
        // kept (`let r = f()`, `await` too), or returned on as it is.
        let src = r#"
function Ra(){ if (Rq()) return { enabled: true, text: "The checker runs in this session for every change made here." }; return { enabled: false, text: "The checker is off in this session for good." }; }
function Rb(){ let e = Ra(); return `# Checker

In this session: ${e.text}`; }
function Rc(){ return { name: "checker", getPromptForCommand: async () => [{ type: "text", text: Rb() }] }; }
function Rd(e){ return { text: e > 1 ? "The index is over its limit and its end is dropped now." : "The index is near its limit, trim it soon please." }; }
function Re(){ return Rd(2); }
async function Rf(){ let c = await Re(); return { type: "tool_result", tool_use_id: "x", content: c.text }; }
function Rg(){ return { label: "Shown in the panel header for the reader only." }; }
function Rh(){ let c = Rg(); Rj({ content: c.text }); }
"#;
        let v = find_in(src);
        for t in ["The checker runs", "The checker is off"] {
            assert_eq!(kind_of(&v, t).as_deref(), Some(kinds::SKILL), "{t}");
        }
        for t in ["The index is over", "The index is near"] {
            assert_eq!(
                kind_of(&v, t).as_deref(),
                Some(kinds::SYSTEM_REMINDER),
                "{t}"
            );
        }
        // Another field of another function's object is not the one read.
        assert_eq!(kind_of(&v, "Shown in the panel header"), None);
    }

    #[test]
    fn a_field_of_a_returned_object_taken_apart_goes_where_its_name_goes() {
        // `let {first: n, second: o} = f()`: each field goes where the name
        // its key is unpacked into goes, and no further.
        let src = r#"
function Pa(){ let e = Pq(), o = e ? `### Phase one\nGoal: Read the code that the request touches and ask about what is unclear.` : `### Phase one\nGoal: Ask the user first and read only the code they point at.`, i = `### Phase two\nGoal: Design the change and weigh the approaches against each other.`; return { first: o, second: i, label: "Shown in the planning panel header for the reader only." }; }
function Pb(){ let { first: n, second: o } = Pa(), a = `Plan mode is active, edit nothing yet.\n\n${n}\n\n${o}`; return [Pc({ content: a, isMeta: !0 })]; }
function Pd(){ let { label: l } = Pa(); Pe(l); }
"#;
        let v = find_in(src);
        assert_kinds(
            &v,
            &["Goal: Read the code", "Goal: Ask the user", "### Phase two"],
            kinds::SYSTEM_REMINDER,
        );
        assert_eq!(kind_of(&v, "Shown in the planning panel"), None);
    }

    #[test]
    fn a_function_called_under_a_name_it_is_bound_to_returns_there() {
        // A lazy initialiser binds the function to the name the rest of
        // the bundle calls (`Rb = Ra`): the calls of `Rb` are `Ra`'s.
        let src = r#"
var Ra = (e) => `## Careful review mode\nRead each changed hunk closely and report every defect with a failure scenario for ${e}.`, Rb;
function Rc(){ Rb = Ra; }
function Rd(t, e){ switch (t) { case "deep": return Rb(e); default: return "Skim the diff once and list what looks wrong."; } }
function Re(){ return { name: "review", getPromptForCommand: async (a) => [{ type: "text", text: Rd(a.mode, a.path) }] }; }
var Sa = (e) => `Review finished for the branch named ${e}, see the summary below.`, Sb;
function Sc(){ Sb = Sa; }
function Sd(x){ console.log(Sb(x)); }
"#;
        let v = find_in(src);
        assert_kinds(
            &v,
            &["## Careful review mode", "Skim the diff once"],
            kinds::SKILL,
        );
        assert_eq!(kind_of(&v, "Review finished for the branch"), None);
    }

    #[test]
    fn each_branch_inside_a_templates_hole_is_a_piece_of_it() {
        let src = r#"
function Pa(p){ return { name: "report", getPromptForCommand: async () => [{ type: "text", text: `## Summary of the week\n\n${p.ok ? `**Going well:** ${p.ok} See the list of wins below.` : ""}\n\n${p.bad ? "**Going badly:** see the list of failures below." : ""}` }] }; }
"#;
        let v = find_in(src);
        let outer = by_text(&v, "## Summary").expect("the template");
        assert_eq!(outer.text, "## Summary of the week\n\n${v1}\n\n${v2}");
        for t in ["**Going well:**", "**Going badly:**"] {
            let piece = by_text(&v, t).expect(t);
            assert_eq!(piece.kind, kinds::SKILL, "{t}");
            assert_eq!(piece.part_of.as_deref(), Some(outer.id.as_str()), "{t}");
        }
        assert_eq!(outer.part_of, None);
    }

    #[test]
    fn two_words_and_a_hole_are_a_sentence() {
        let src = r#"
function Ha(e){ return [Hb({ content: `${e.hookName} hook succeeded: ${e.content}`, isMeta: true }), Hb({ content: `${e.code} failed`, isMeta: true }), Hb({ content: "hook succeeded", isMeta: true })]; }
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "${hookName} hook succeeded").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        assert_eq!(kind_of(&v, "${code} failed"), None);
        assert!(!v.iter().any(|p| p.text == "hook succeeded"));
    }

    #[test]
    fn a_commands_meta_messages_are_read_by_the_model() {
        // `onDone(result, {display, metaMessages})`: the result is shown,
        // each meta message is added to the conversation for the model.
        let src = r#"
var Ma = { type: "local-jsx", name: "terse", load: () => Promise.resolve({ async call(e, t) {
  let n = !t.on, o = [`<system-reminder>
${n ? "Terse mode is on now, answer in one short line." : "Terse mode is off now, answer as usual."}
</system-reminder>`];
  return e(n ? "Terse mode on for this one" : "Terse mode off for this one", { display: "system", metaMessages: o }), null; } }) };
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Terse mode is on now").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
        assert_eq!(kind_of(&v, "Terse mode on for this one"), None);
    }

    #[test]
    fn a_note_appended_to_the_transcript_is_the_users() {
        // A command's result shown as a system note in the transcript,
        // while its prompt (which the model gets) says so.
        let src = r#"
function Kb(e){ if (e) return `Nothing was tidied here, because ${e} got in the way.`; return Kd(); }
var Ka = { type: "prompt", name: "tidy", async getPromptForCommand(e, t){
  let r = Kb(e);
  t.appendSystemMessage(Kc(r, "info"));
  return [{ type: "text", text: `Tidy the working folder; the note shown before this says what happened. ${Ke(r)}` }]; } };
function Ke(e){ return e; }
"#;
        let v = find_in(src);
        assert_eq!(kind_of(&v, "Nothing was tidied here"), None);
        assert_eq!(
            kind_of(&v, "Tidy the working folder").as_deref(),
            Some(kinds::SKILL)
        );
    }

    #[test]
    fn a_text_flows_through_members() {
        let src = r#"
var Ka = { plain: "Walk the garden paths slowly and name each flower you pass.",
  fancy: "Walk the garden paths quickly and count every bench you see." };
var Kb = { name: "Gardener", inputSchema: Kc, async call(){ return 1; },
  async prompt(){ return "Tend the garden." + Ka[Kd()]; } };
class Ke {
  note = "Remember that the pond freezes before the first snow arrives.";
  constructor(){ this.hint = "Water the roses at dawn and never at noon, they burn."; }
  build(){ return { agentType: "keeper", getSystemPrompt: () => this.note + this.hint }; }
}
var Kf = {}; Kf.rule = "Close the gate behind you whenever you leave the yard.";
function Kg(){ return Kh({ content: Kf.rule, isMeta: !0 }); }
var Ki = {}; Ki.rule = "Open the shed only when the owner says you may enter.";
function Kj(){ return Ki.other; }
"#;
        let v = find_in(src);
        // A table bound to a name, read back as `name[…]`.
        for needle in ["name each flower", "count every bench"] {
            let p = by_text(&v, needle).unwrap_or_else(|| panic!("{needle}"));
            assert_eq!(p.kind, kinds::TOOL_DESCRIPTION, "{needle}");
        }
        // A class field and a value stored in `this`, read by a method.
        for needle in ["pond freezes", "Water the roses"] {
            let p = by_text(&v, needle).unwrap_or_else(|| panic!("{needle}"));
            assert_eq!(
                (p.kind.as_str(), p.owner.as_deref()),
                (kinds::AGENT, Some("keeper")),
                "{needle}"
            );
        }
        // `o.k = text`, read back as `o.k`; another member is not it.
        assert_eq!(
            kind_of(&v, "Close the gate"),
            Some(kinds::SYSTEM_REMINDER.into())
        );
        assert_eq!(kind_of(&v, "Open the shed"), None);
    }

    #[test]
    fn a_list_pushed_under_conditions_reaches_the_reminder() {
        // Short sentences pushed into a list in the branches of a long
        // converter (more uses of the list's name than one binding's
        // share), joined, then sent as a message for the model only.
        let mut src = String::from("function Ra(e){ switch(e.type){\n");
        for i in 0..80 {
            src.push_str(&format!(
                "case \"t{i}\": {{ let s = []; if (e.a) s.push(e.b); if (s.length === 0) return []; return [Rb({{ content: s.join(\"\\n\"), isMeta: !0 }})]; }}\n"
            ));
        }
        src.push_str(
            "case \"last\": { let s = []; if (e.c) s.push(\"The lamps in the hall are lit again now.\"); return [Rb({ content: s.join(\" \"), isMeta: !0 })]; }\n} }\n",
        );
        let v = find_in(&src);
        assert_eq!(
            kind_of(&v, "The lamps in the hall"),
            Some(kinds::SYSTEM_REMINDER.into())
        );
    }

    #[test]
    fn a_text_shown_to_the_user_first_is_not_a_prompt() {
        // A helper hands its text both to an error and, further on, to the
        // system prompt: thrown first, it is the user's.
        let src = r#"
function Ta(e){ return Tb(e); }
function Tb(e){ return e; }
var Tc = { messages: [], systemPrompt: Ta("Keep every answer under three short lines of text.") };
function Td(){ throw new Error(Ta("The config folder could not be opened at all.")); }
"#;
        let v = find_in(src);
        assert_eq!(kind_of(&v, "Keep every answer"), Some(kinds::SYSTEM.into()));
        assert_eq!(kind_of(&v, "config folder could not"), None);
    }

    #[test]
    fn a_literal_json_schema_gives_parameters() {
        let src = r#"
var Pa = { name: "Pointer", async call(){ return 1; }, description: "Point at one spot on the screen and press.",
  inputSchema: { type: "object", properties: { spot: { type: "array", description: "Where to press, as two numbers from the top left." } } } };
var Pb = { type: "object", properties: { size: { type: "number", description: "How large the saved window should be." } } };
"#;
        let v = find_in(src);
        assert_eq!(
            kind_of(&v, "Where to press"),
            Some(kinds::TOOL_PARAMETER.into())
        );
        // A schema no tool takes describes something else.
        assert_eq!(kind_of(&v, "How large the saved"), None);
    }

    #[test]
    fn a_shared_piece_keeps_its_kind_when_code_is_added_around_it() {
        // Traces are memoised relative to where they enter: a helper's
        // result reached again through more code means the same.
        let near = r#"
var Ga = "Sort the letters by the date they were sent to you.";
function Gb(){ return Ga; }
var Gc = { agentType: "sorter", getSystemPrompt: () => Gb() };
"#;
        let far = format!(
            "function Gz(){{ return Gy(Gx(Gw(Gv(Gb())))); }}\n{near}\nvar Gu = \"Post the sorted letters in the box by the door.\";\nfunction Gv(x){{ return x; }}\n"
        );
        for src in [near.to_string(), far] {
            let v = find_in(&src);
            assert_eq!(
                by_text(&v, "Sort the letters").map(|p| (p.kind.clone(), p.owner.clone())),
                Some((kinds::AGENT.to_string(), Some("sorter".to_string())))
            );
        }
    }

    #[test]
    fn ids_hold_when_unrelated_code_moves_and_names_change() {
        let a = find_in(SRC);
        // Minified names change, unrelated code comes and goes, lines move.
        let moved = format!(
            "var Za = {{ q: [1, 2, 3] }}; function Zb(){{ return Za.q.length; }}\n{}",
            SRC.replace("Qa", "Ra")
                .replace("Qi", "Ri")
                .replace("var ", "\nlet ")
        );
        let b = find_in(&moved);
        let ids = |v: &[Prompt]| v.iter().map(|p| p.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
        let d = diff(&a, &b, &crate::analysis::diff::lines::DiffBudget::default());
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn colliding_ids_take_the_words_they_need_then_numbers() {
        let two = r#"
var Qa = { agentType: "one", whenToUse: "Use it when the task needs two short passes, second." };
var Qb = { agentType: "one", whenToUse: "Use it when the task needs two short passes, first." };
"#;
        // Another, longer text with the same opening comes: the two keep
        // theirs.
        let three = format!(
            "{two}var Qc = {{ agentType: \"one\", whenToUse: \"Use it when the task needs one pass over every file the user named.\" }};\n"
        );
        for src in [two.to_string(), three] {
            let v = find_in(&src);
            let id = |needle: &str| by_text(&v, needle).map(|p| p.id.clone());
            // The shorter keeps the six words.
            assert_eq!(
                id("passes, first."),
                Some("use-it-when-the-task-needs".into())
            );
            assert_eq!(
                id("passes, second."),
                Some("use-it-when-the-task-needs-two-short-passes-second".into())
            );
        }
        // Alike in all their first sixteen words: numbered in text order.
        let long =
            "Use it when the task needs many short passes over the same files in the same order";
        let src = format!(
            "var Qa = {{ agentType: \"one\", whenToUse: \"{long}, second.\" }};\nvar Qb = {{ agentType: \"one\", whenToUse: \"{long}, first.\" }};\n"
        );
        let v = find_in(&src);
        let mut got: Vec<(&str, &str)> = v
            .iter()
            .map(|p| (p.id.as_str(), p.text.rsplit(' ').next().unwrap_or("")))
            .collect();
        got.sort();
        // `first.` is the shorter; the other is alike in sixteen words.
        let base = "use-it-when-the-task-needs-many-short-passes-over-the-same-files-in-the-same";
        assert_eq!(
            got,
            [("use-it-when-the-task-needs", "first."), (base, "second.")]
        );
    }

    #[test]
    fn tool_prompts_assembled_from_pieces_are_prompts() {
        let tools = vec![super::super::tools::Tool {
            name: "Fetcher".into(),
            description: format!(
                "Fetch a page from the web and read it with care before you answer.\n{}",
                super::super::tools::RUNTIME
            ),
            prompt_bytes: 100,
            input_schema: serde_json::json!({}),
            summary: None,
            runtime: vec!["prompt: `Qb()` computed at run time".into()],
            pieces: Vec::new(),
            variables: Vec::new(),
            sites: Vec::new(),
        }];
        let mut v = find_in(SRC);
        add_tool_prompts(&mut v, &tools);
        let f = v
            .iter()
            .find(|p| p.id == "tool-description-fetcher")
            .unwrap();
        assert_eq!(f.kind, kinds::TOOL_DESCRIPTION);
        assert_eq!(f.title, "Tool description: Fetcher");
        assert!(f.text.ends_with("\n${…}"));
        // Its pieces say whose they are.
        let piece = by_text(&v, "Pages over one megabyte").unwrap();
        assert_eq!(piece.part_of.as_deref(), Some("tool-description-fetcher"));
    }

    #[test]
    fn export_lists_each_file_with_its_hash() {
        let v = find_in(SRC);
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
        // Front matter, then the exact text.
        let p = v
            .iter()
            .find(|p| p.owner.as_deref() == Some("helper"))
            .unwrap();
        let (_, md) = files
            .iter()
            .find(|(f, _)| *f == format!("{}.md", p.id))
            .unwrap();
        let md = std::str::from_utf8(md).unwrap();
        let (front, text) = md
            .strip_prefix("---\n")
            .unwrap()
            .split_once("---\n")
            .unwrap();
        assert_eq!(text, format!("{}\n", p.text));
        for line in [
            format!("id: \"{}\"", p.id),
            "kind: \"agent\"".to_string(),
            "owner: \"helper\"".to_string(),
            "version: \"9.9.9\"".to_string(),
            format!("sha256: \"{}\"", sha256(p.text.as_bytes())),
        ] {
            assert!(front.lines().any(|l| l == line), "{line} in {front}");
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

    #[test]
    fn a_name_bound_again_in_a_sibling_block_is_another_variable() {
        // Minified code reuses `t` in both branches: the first is shown,
        // the second is a meta message the model reads.
        let src = r#"
function Ta(e, r){
  if (e) { let t = "Saved the notes to the folder you picked"; r.appendSystemMessage(t); }
  else { let t = `Read the notes in ${e} before you answer`; r.push({ content: t, isMeta: !0 }); }
  for (let t of r.items) { let u = t; r.done(u); }
}
"#;
        let v = find_in(src);
        assert_eq!(kind_of(&v, "Saved the notes"), None);
        assert_eq!(
            kind_of(&v, "Read the notes in").as_deref(),
            Some(kinds::SYSTEM_REMINDER)
        );
    }

    #[test]
    fn a_call_carries_its_argument_only_when_the_helper_hands_it_back() {
        // `Va` logs its argument and returns a word of its own; `Vd` hands
        // back what it is given (trimmed), `Ve` a field of it, `Vf` what a
        // loop over it builds: only their results carry the text on.
        let src = r#"
function Va(e){ if (e.length > 400) return "long"; Vb.log(e); return "shown"; }
function Vd(e){ return e.trim(); }
function Ve(e){ let t = e.text; return t; }
function Vf(e){ let r = ""; for (let o of e) r += o === "\t" ? " " : o; return r; }
var Vc = { type: "prompt", name: "notes", async getPromptForCommand(a){
  return [{ type: "text", text: Va("Your notes were saved to the folder you chose.") },
    { type: "text", text: Vd("Read the saved notes before you change them.") },
    { type: "text", text: Ve({ text: "Keep the notes short and in plain words." }) },
    { type: "text", text: Vf("Name each note after\tits subject.") }];
} };
"#;
        let v = find_in(src);
        assert_eq!(kind_of(&v, "Your notes were saved"), None);
        for needle in [
            "Read the saved notes",
            "Keep the notes short",
            "Name each note after",
        ] {
            assert_eq!(
                kind_of(&v, needle).as_deref(),
                Some(kinds::SKILL),
                "{needle}"
            );
        }
    }
}
