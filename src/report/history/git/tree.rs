//! One release's surface as the files of its commit: one file per prompt,
//! tool and workflow, one table per kind compared by name, and the item
//! each file stands for (for the changes its README lists).
//!
//! A file holds only what `history changes` compares of its item (a
//! prompt's text and what follows from it; a tool's description and input
//! schema; a workflow's script and description, phases, options and
//! levels; a flag's kind and defaults), so that a file changes exactly when
//! its item does: where a prompt sits in the build (its module and offset)
//! and the expressions of its variables change with every build, and are
//! kept apart in `sites.md`.

use crate::analysis::analysed::Facts;
use crate::report::doc::{Block, Doc, Inline, Kind as Col, Table};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// The kinds of item a tree holds, in the order a README lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Prompt,
    Tool,
    Workflow,
    Flag,
    Env,
    Setting,
    Command,
    Model,
    Schema,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::Prompt,
        Kind::Tool,
        Kind::Workflow,
        Kind::Flag,
        Kind::Env,
        Kind::Setting,
        Kind::Command,
        Kind::Model,
        Kind::Schema,
    ];

    /// The section of `history changes` (and of this README) for the kind.
    pub fn section(self) -> &'static str {
        match self {
            Kind::Prompt => "prompts",
            Kind::Tool => "tools",
            Kind::Workflow => "workflows",
            Kind::Flag => "flags",
            Kind::Env => "env",
            Kind::Setting => "settings",
            Kind::Command => "commands",
            Kind::Model => "models",
            Kind::Schema => "schemas",
        }
    }

    /// Where the kind's items are: a folder, or the table file.
    pub fn place(self) -> &'static str {
        match self {
            Kind::Prompt => "prompts/",
            Kind::Tool => "tools/",
            Kind::Workflow => "workflows/",
            Kind::Flag => "flags.md",
            Kind::Env => "env.md",
            Kind::Setting => "settings.md",
            Kind::Command => "commands.md",
            Kind::Model => "models.md",
            Kind::Schema => "schemas.md",
        }
    }
}

/// What stands for one item in a tree: the file to link to, and a digest
/// of everything the tree holds of it (its files, or its table row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub digest: [u8; 32],
}

/// A release's files (path → bytes) and its items by kind and name. The
/// README is added by the caller, who knows the release before.
#[derive(Default)]
pub struct Tree {
    pub files: BTreeMap<String, Vec<u8>>,
    pub items: BTreeMap<Kind, BTreeMap<String, Entry>>,
}

fn sha(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// A file or folder name made of an item's name: ASCII letters, digits
/// and `-_.+@=,` as they are, every other byte as `%XX` (a leading dot
/// too, and `%` itself), so any name — a slash, `..`, a control
/// character — is one plain name, and two names never make one.
pub fn component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b"-_+@=,".contains(&b) || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push_str("%20empty");
    }
    out
}

/// The paths of one tree, kept apart where a file system that ignores
/// case (macOS, Windows) would make two of them one: the later name (in
/// name order) gets `~` and 8 hex digits of its SHA-256.
#[derive(Default)]
struct Paths {
    taken: HashMap<String, String>,
}

impl Paths {
    /// `dir/NAME` + each of `exts` (the stems are the same for every
    /// extension): the path of each, in order.
    fn place(&mut self, dir: &str, name: &str, exts: &[&str]) -> Vec<String> {
        let mut stem = component(name);
        let key = |stem: &str| format!("{dir}/{stem}").to_lowercase();
        if self.taken.get(&key(&stem)).is_some_and(|n| n != name) {
            stem = format!("{stem}~{}", &hex::encode(sha(name.as_bytes()))[..8]);
        }
        self.taken.insert(key(&stem), name.to_string());
        exts.iter()
            .map(|ext| {
                let file = crate::report::outdir::bounded_name(format!("{stem}{ext}").as_ref());
                format!("{dir}/{}", file.to_string_lossy())
            })
            .collect()
    }
}

/// A JSON value with every object's keys in order (serde_json's maps are
/// ordered) and pretty-printed, ending with a newline.
fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A front matter line's value: a JSON scalar or list (which YAML reads
/// as its own flow syntax).
fn yaml(v: &Value) -> String {
    v.to_string()
}

/// The string field `k` of `v`, or "".
fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// Each item of `list` once, by its name field `key` (the first of a name
/// wins, as the diff pairs them), in name order.
fn by_name<'a>(list: &'a Value, key: &str) -> BTreeMap<&'a str, &'a Value> {
    let mut out = BTreeMap::new();
    for v in list.as_array().into_iter().flatten() {
        if let Some(n) = v.get(key).and_then(Value::as_str) {
            out.entry(n).or_insert(v);
        }
    }
    out
}

/// A table of items compared by name: its kind, the surface's list, the
/// name field, the title, and the value fields with their labels.
type TableSpec<'a> = (Kind, &'a str, &'a str, &'a str, &'a [(&'a str, &'a str)]);

/// The files of a release whose stored facts are `f`.
pub fn tree(f: &Facts) -> Tree {
    let mut t = Tree::default();
    let surface = serde_json::to_value(&f.surface).unwrap_or_default();
    let mut paths = Paths::default();
    prompts(&mut t, &mut paths, &surface["prompts"]);
    tools(&mut t, &mut paths, &surface["tools"]);
    workflows(&mut t, &mut paths, f);
    flags(&mut t, f);
    let cell = |v: &Value| match v {
        Value::Null => Inline::new(),
        Value::String(s) => Inline::code(s.clone()),
        v => Inline::code(v.to_string()),
    };
    // The kinds `history changes` compares by name: a row each, with the
    // values the history records of them.
    let tables: [TableSpec; 5] = [
        (
            Kind::Env,
            "env",
            "name",
            "Environment variables",
            &[("how", "how it is read"), ("default", "default")],
        ),
        (
            Kind::Setting,
            "settings",
            "key",
            "Settings",
            &[("type", "type"), ("default", "default")],
        ),
        (
            Kind::Command,
            "commands",
            "name",
            "Slash commands",
            &[
                ("kind", "kind"),
                ("hidden", "hidden"),
                ("aliases", "aliases"),
            ],
        ),
        (
            Kind::Model,
            "models",
            "id",
            "Models",
            &[("aliases", "aliases"), ("used_as", "used as")],
        ),
        // A description's text is its digest here: a table row holds the
        // text's hash, and a changed text changes the row.
        (
            Kind::Schema,
            "schemas",
            "id",
            "Schema descriptions",
            &[
                ("schema", "schema"),
                ("field", "field"),
                ("sha256", "sha256"),
            ],
        ),
    ];
    for (kind, list, key, title, cols) in tables {
        let mut columns = vec![(key, Col::Code)];
        columns.extend(cols.iter().map(|(_, label)| (*label, Col::Code)));
        let rows = by_name(&surface[list], key)
            .into_iter()
            .map(|(name, v)| {
                let mut row = vec![Inline::code(name)];
                row.extend(cols.iter().map(|(k, _)| cell(&v[*k])));
                (name.to_string(), row)
            })
            .collect();
        table(&mut t, kind, title, &columns, rows);
    }
    t
}

/// A table file of `kind`: a row per item (in name order); each item's
/// entry is its row.
fn table(
    t: &mut Tree,
    kind: Kind,
    title: &str,
    columns: &[(&str, Col)],
    rows: Vec<(String, Vec<Inline>)>,
) {
    let path = kind.place().to_string();
    let mut tb = Table::of(columns);
    let items = t.items.entry(kind).or_default();
    for (name, row) in rows {
        // The row's cells: what the table file holds of the item.
        let cells: Vec<String> = row.iter().map(Inline::plain).collect();
        items.insert(
            name,
            Entry {
                path: path.clone(),
                digest: sha(cells.join("\0").as_bytes()),
            },
        );
        tb.row(row);
    }
    let mut doc = Doc::new(title);
    doc.push(Block::Note(Inline::from(format!(
        "One row per item, in name order ({}).",
        items.len()
    ))));
    doc.push(Block::Table(tb));
    let md = crate::report::escape::text(&doc.markdown()).into_owned();
    t.files.insert(path, md.into_bytes());
}

fn prompts(t: &mut Tree, paths: &mut Paths, list: &Value) {
    let mut sites = Table::of(&[("prompt", Col::Code), ("sites", Col::Code)]);
    for (id, p) in by_name(list, "id") {
        let kind = match s(p, "kind") {
            "" => "other",
            k => k,
        };
        let text = s(p, "text");
        let path = paths
            .place(&format!("prompts/{}", component(kind)), id, &[".md"])
            .remove(0);
        let variables: Vec<Value> = p["variables"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("name").cloned())
            .collect();
        let mut md = String::from("---\n");
        let mut line = |k: &str, v: Value| md.push_str(&format!("{k}: {}\n", yaml(&v)));
        line("id", json!(id));
        line("kind", json!(kind));
        line("title", p["title"].clone());
        if let Some(o) = p.get("owner").filter(|o| !o.is_null()) {
            line("owner", o.clone());
        }
        line("variables", Value::Array(variables));
        line(
            "bytes",
            p.get("bytes").cloned().unwrap_or(json!(text.len())),
        );
        line(
            "tokens",
            p.get("tokens_estimate")
                .or(p.get("tokens"))
                .cloned()
                .unwrap_or(Value::Null),
        );
        line("sha256", json!(hex::encode(sha(text.as_bytes()))));
        md.push_str("sites: see sites.md (they move with every build)\n---\n");
        md.push_str(text);
        let at: Vec<String> = p["sites"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| format!("{}:{}", s(x, "module"), x["raw_line"]))
            .collect();
        sites.text_row(vec![id.to_string(), at.join(" ")]);
        t.items.entry(Kind::Prompt).or_default().insert(
            id.to_string(),
            Entry {
                path: path.clone(),
                digest: sha(md.as_bytes()),
            },
        );
        t.files.insert(path, md.into_bytes());
    }
    let mut doc = Doc::new("Where each prompt was found in this build");
    doc.push(Block::Note(Inline::from(
        "Module and line of each prompt in this build. They move with every build, so they are kept here, apart from the prompts' files (which change only when their text does).",
    )));
    doc.push(Block::Table(sites));
    let md = crate::report::escape::text(&doc.markdown()).into_owned();
    t.files.insert("sites.md".into(), md.into_bytes());
}

/// A tool's input schema as compared: its `required` names are a set.
fn schema(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(r) = v.get_mut("required").and_then(Value::as_array_mut) {
        r.sort_by_key(|x| x.to_string());
    }
    v
}

fn tools(t: &mut Tree, paths: &mut Paths, list: &Value) {
    for (name, tool) in by_name(list, "name") {
        let p = paths.place("tools", name, &[".md", ".schema.json"]);
        let description = s(tool, "description");
        let schema_file = p[1].rsplit('/').next().unwrap_or_default().to_string();
        let mut md = String::from("---\n");
        md.push_str(&format!("name: {}\n", yaml(&json!(name))));
        md.push_str(&format!("bytes: {}\n", description.len()));
        md.push_str(&format!(
            "sha256: {}\n",
            hex::encode(sha(description.as_bytes()))
        ));
        md.push_str(&format!("schema: {}\n---\n", yaml(&json!(schema_file))));
        md.push_str(description);
        let json = pretty(&schema(&tool["input_schema"]));
        let mut both = Sha256::new();
        both.update(md.as_bytes());
        both.update([0]);
        both.update(&json);
        t.items.entry(Kind::Tool).or_default().insert(
            name.to_string(),
            Entry {
                path: p[0].clone(),
                digest: both.finalize().into(),
            },
        );
        t.files.insert(p[0].clone(), md.into_bytes());
        t.files.insert(p[1].clone(), json);
    }
}

fn workflows(t: &mut Tree, paths: &mut Paths, f: &Facts) {
    let mut seen = std::collections::BTreeMap::new();
    for w in &f.workflows {
        seen.entry(w.name.as_str()).or_insert(w);
    }
    for (name, w) in seen {
        let p = paths.place("workflows", name, &[".js", ".meta.json"]);
        let script = w
            .text
            .as_deref()
            .or(f.scripts.get(name).map(String::as_str));
        let meta = pretty(&crate::analysis::diff::facts::meta(w));
        let mut both = Sha256::new();
        both.update(script.unwrap_or_default().as_bytes());
        both.update([0]);
        both.update(&meta);
        t.items.entry(Kind::Workflow).or_default().insert(
            name.to_string(),
            Entry {
                path: p[1].clone(),
                digest: both.finalize().into(),
            },
        );
        if let Some(s) = script {
            t.files.insert(p[0].clone(), s.as_bytes().to_vec());
        }
        t.files.insert(p[1].clone(), meta);
    }
}

fn flags(t: &mut Tree, f: &Facts) {
    let mut seen = BTreeMap::new();
    for fl in &f.flags.flags {
        seen.entry(fl.name.as_str()).or_insert(fl);
    }
    let rows = seen
        .into_iter()
        .map(|(name, fl)| {
            let row = vec![
                Inline::code(name),
                Inline::from(fl.kind.as_str()),
                Inline::code(crate::analysis::diff::facts::defaults(&fl.defaults).to_string()),
            ];
            (name.to_string(), row)
        })
        .collect();
    table(
        t,
        Kind::Flag,
        "Flags",
        &[
            ("flag", Col::Code),
            ("kind", Col::Text),
            ("defaults", Col::Code),
        ],
        rows,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_plain_component_whatever_it_holds() {
        assert_eq!(component("Bash"), "Bash");
        assert_eq!(component("deep-research"), "deep-research");
        assert_eq!(component("a/b"), "a%2Fb");
        assert_eq!(component(".."), "%2E.");
        assert_eq!(component(".git"), "%2Egit");
        assert_eq!(component("100%"), "100%25");
        assert_eq!(component("a\u{1b}[2J"), "a%1B%5B2J");
        assert_eq!(component(""), "%20empty");
        assert_eq!(component("é"), "%C3%A9");
        // Two names never make one (the encoding is reversible).
        assert_ne!(component("a%2F"), component("a/"));
    }

    #[test]
    fn names_equal_but_for_case_get_paths_apart() {
        let mut p = Paths::default();
        let a = p.place("tools", "Edit", &[".md", ".schema.json"]);
        let b = p.place("tools", "edit", &[".md", ".schema.json"]);
        assert_eq!(a, ["tools/Edit.md", "tools/Edit.schema.json"]);
        assert_ne!(a[0].to_lowercase(), b[0].to_lowercase());
        assert!(b[0].starts_with("tools/edit~"), "{b:?}");
        // The same name again is the same path.
        assert_eq!(p.place("tools", "Edit", &[".md"]), ["tools/Edit.md"]);
    }

    #[test]
    fn a_schemas_required_names_are_a_set() {
        let a = schema(&json!({"required": ["b", "a"], "type": "object"}));
        let b = schema(&json!({"type": "object", "required": ["a", "b"]}));
        assert_eq!(pretty(&a), pretty(&b));
    }
}
