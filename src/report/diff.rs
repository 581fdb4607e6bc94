//! The `diff` view: identity facts of both builds side by side, the
//! analyses' diff, and its renderings — human (colour on a terminal,
//! summary first) and Markdown. Names are escaped where a line break in
//! one would fake a line; the caller escapes the whole rendering
//! (`cli::diff`), so nothing from the builds can drive the terminal.

use super::escape::display as esc;
use super::info::InfoView;
use super::table::{Align, Table, thousands};
use crate::analysis::diff::BuildDiff;
use crate::analysis::diff::facts::GateBrief;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
pub struct FieldChange {
    pub field: &'static str,
    pub a: Value,
    pub b: Value,
    pub differs: bool,
}

/// How a build is put together, in words.
fn structure(i: &InfoView) -> String {
    if i.bundle.code_split {
        format!(
            "code-split ESM build ({} JavaScript chunks)",
            thousands(i.bun.js_modules as u64)
        )
    } else if i.bun.js_modules <= 1 {
        "single JavaScript bundle".to_string()
    } else {
        format!(
            "single bundle plus {} JavaScript modules",
            thousands(i.bun.js_modules as u64 - 1)
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct IdentityDiff {
    pub structure_a: String,
    pub structure_b: String,
    pub fields: Vec<FieldChange>,
}

pub fn identity(a: &InfoView, b: &InfoView) -> IdentityDiff {
    let (va, vb) = (
        serde_json::to_value(a).unwrap_or_default(),
        serde_json::to_value(b).unwrap_or_default(),
    );
    let fields = [
        ("version", "/version"),
        ("platform", "/target/platform"),
        ("package", "/target/package"),
        ("file bytes", "/target/file_bytes"),
        ("container", "/container/format"),
        ("arch", "/container/arch"),
        ("section", "/container/section"),
        ("placement", "/container/placement"),
        ("Bun layout", "/bun/layout/epoch"),
        ("record size", "/bun/layout/record_size"),
        ("offsets size", "/bun/layout/offsets_size"),
        ("modules", "/bun/modules"),
        ("JavaScript modules", "/bun/js_modules"),
        ("compressed modules", "/bun/compressed_modules"),
        ("entry", "/bun/entry"),
        ("bytecode bytes", "/bun/bytecode_bytes"),
        ("code-split", "/bundle/code_split"),
        ("bundle bytes", "/bundle/bytes"),
        ("bundle sha256", "/bundle/sha256"),
    ]
    .into_iter()
    .map(|(field, ptr)| {
        let x = va.pointer(ptr).cloned().unwrap_or(Value::Null);
        let y = vb.pointer(ptr).cloned().unwrap_or(Value::Null);
        FieldChange {
            field,
            differs: x != y,
            a: x,
            b: y,
        }
    })
    .collect();
    IdentityDiff {
        structure_a: structure(a),
        structure_b: structure(b),
        fields,
    }
}

#[derive(Serialize)]
pub struct DiffView {
    pub a: String,
    pub b: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityDiff>,
    #[serde(flatten)]
    pub diff: BuildDiff,
    pub timings_ms: std::collections::BTreeMap<&'static str, u64>,
}

/// ANSI colours, or none.
#[derive(Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    fn wrap(self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn red(self, s: &str) -> String {
        self.wrap("31", s)
    }
    fn green(self, s: &str) -> String {
        self.wrap("32", s)
    }
    fn cyan(self, s: &str) -> String {
        self.wrap("36", s)
    }
    fn dim(self, s: &str) -> String {
        self.wrap("2", s)
    }
    fn diff(self, unified: &str, max_lines: usize) -> String {
        let mut out = String::new();
        let total = unified.lines().count();
        for l in unified.lines().take(max_lines) {
            let l = match l.as_bytes().first() {
                Some(b'+') => self.green(l),
                Some(b'-') => self.red(l),
                Some(b'@') => self.cyan(l),
                _ => l.to_string(),
            };
            out.push_str("    ");
            out.push_str(&l);
            out.push('\n');
        }
        if total > max_lines {
            out.push_str(&self.dim(&format!(
                "    … {} more diff lines (--json or --format md for all)\n",
                total - max_lines
            )));
        }
        out
    }
}

fn short(s: &str, n: usize) -> String {
    let one = s.replace('\n', "⏎");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n).collect::<String>())
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        thousands(n as u64),
        if n == 1 { one } else { many }
    )
}

fn names(v: &[String], limit: usize) -> String {
    let mut s = v
        .iter()
        .take(limit)
        .map(|n| esc(n))
        .collect::<Vec<_>>()
        .join(", ");
    if v.len() > limit {
        s.push_str(&format!(", … {} more", v.len() - limit));
    }
    s
}

fn gate_name(g: &GateBrief) -> String {
    format!(
        "{}{} ({}:{})",
        esc(&g.key),
        g.original
            .as_deref()
            .or(g.function.as_deref())
            .map(|n| format!(" {}", esc(n)))
            .unwrap_or_default(),
        esc(g.module.rsplit('/').next().unwrap_or("")),
        g.raw_line
    )
}

/// The summary: one line per section, the facts users ask about first.
pub fn summary(v: &DiffView) -> Vec<(&'static str, String)> {
    let d = &v.diff;
    let mut out = Vec::new();
    if let Some(id) = &v.identity {
        let field = |f: &str| id.fields.iter().find(|x| x.field == f);
        let show = |x: &Value| match x {
            Value::String(s) => s.clone(),
            Value::Null => "-".into(),
            other => other.to_string(),
        };
        for (label, name) in [("version", "version"), ("platform", "platform")] {
            if let Some(f) = field(name) {
                out.push((
                    label,
                    if f.differs {
                        format!("{} → {}", show(&f.a), show(&f.b))
                    } else {
                        format!("{} (both)", show(&f.a))
                    },
                ));
            }
        }
        out.push((
            "structure",
            if id.structure_a == id.structure_b {
                format!("{} (unchanged)", id.structure_a)
            } else {
                format!("{} → {}", id.structure_a, id.structure_b)
            },
        ));
        if let Some(f) = field("bundle sha256") {
            out.push((
                "bundle",
                if f.differs {
                    format!(
                        "differs ({} → {})",
                        short(&show(&f.a), 12),
                        short(&show(&f.b), 12)
                    )
                } else {
                    "identical".into()
                },
            ));
        }
    }
    if let Some(m) = &d.modules {
        let mut s = format!(
            "{} → {}: {} unchanged, {} renamed, {} changed, {} added, {} removed",
            thousands(m.modules_a as u64),
            thousands(m.modules_b as u64),
            thousands(m.unchanged as u64),
            thousands(m.renamed.len() as u64),
            thousands(m.changed.len() as u64),
            thousands(m.added.len() as u64),
            thousands(m.removed.len() as u64)
        );
        for sp in m.splits.iter().take(2) {
            s.push_str(&format!(
                "; {} split into {}",
                sp.from,
                plural(sp.into, "chunk", "chunks")
            ));
        }
        out.push(("modules", s));
    }
    if let Some(w) = &d.workflows {
        let mut parts = Vec::new();
        let tag = |n: &String| {
            if w.hidden.get(n).copied().unwrap_or(false) {
                format!("{n} (hidden)")
            } else {
                n.clone()
            }
        };
        if !w.removed.is_empty() {
            parts.push(format!(
                "removed {}",
                w.removed.iter().map(tag).collect::<Vec<_>>().join(", ")
            ));
        }
        if !w.added.is_empty() {
            parts.push(format!(
                "added {}",
                w.added.iter().map(tag).collect::<Vec<_>>().join(", ")
            ));
        }
        if !w.changed.is_empty() {
            parts.push(format!("changed {}", w.changed.join(", ")));
        }
        if !w.unchanged.is_empty() {
            parts.push(format!("unchanged {}", w.unchanged.join(", ")));
        }
        out.push((
            "workflows",
            if parts.is_empty() {
                "none in either build".into()
            } else {
                parts.join("; ")
            },
        ));
    }
    if let Some(f) = &d.flags {
        out.push((
            "flags",
            format!(
                "{} → {}: {} added, {} removed, {} kind changed, {} default changed",
                thousands(f.count_a as u64),
                thousands(f.count_b as u64),
                thousands(f.added.len() as u64),
                thousands(f.removed.len() as u64),
                f.kind_changed.len(),
                f.default_changed.len()
            ),
        ));
    }
    if let Some(g) = &d.gates {
        let named = |v: &[GateBrief]| {
            v.iter()
                .filter(|g| !g.key.starts_with("flag-gate"))
                .map(|g| g.key.clone())
                .collect::<Vec<_>>()
        };
        let mut parts = Vec::new();
        let (r, a) = (named(&g.removed), named(&g.added));
        if !r.is_empty() {
            parts.push(format!("removed {}", r.join(", ")));
        }
        if !a.is_empty() {
            parts.push(format!("added {}", a.join(", ")));
        }
        let changed: Vec<String> = g
            .changed
            .iter()
            .filter(|c| !c.key.starts_with("flag-gate"))
            .map(|c| c.key.clone())
            .collect();
        if !changed.is_empty() {
            parts.push(format!("changed {}", changed.join(", ")));
        }
        let fg = |v: &[GateBrief]| v.iter().filter(|g| g.key.starts_with("flag-gate")).count();
        let fgc = g
            .changed
            .iter()
            .filter(|c| c.key.starts_with("flag-gate"))
            .count();
        parts.push(format!(
            "flag-gates: {} added, {} removed, {} changed",
            fg(&g.added),
            fg(&g.removed),
            fgc
        ));
        out.push(("gates", parts.join("; ")));
        for f in g.flags.iter().filter(|f| f.a != f.b) {
            out.push(("gate flag", format!("{}: {} → {}", f.flag, f.a, f.b)));
        }
    }
    if let Some(r) = &d.roles {
        let list = |v: &[crate::analysis::diff::facts::RolePresence]| {
            v.iter()
                .map(|p| match &p.workflow {
                    Some(w) => format!("{} ({w})", p.role),
                    None => p.role.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push((
            "roles",
            match (r.only_a.is_empty(), r.only_b.is_empty()) {
                (true, true) => format!(
                    "the same {} found in both",
                    plural(r.both.len(), "role", "roles")
                ),
                _ => format!(
                    "only in A: {}; only in B: {}",
                    if r.only_a.is_empty() {
                        "none".into()
                    } else {
                        list(&r.only_a)
                    },
                    if r.only_b.is_empty() {
                        "none".into()
                    } else {
                        list(&r.only_b)
                    }
                ),
            },
        ));
    }
    if let Some(f) = &d.functions {
        out.push((
            "functions",
            format!(
                "{} → {}: {} unchanged, {} renamed only, {} changed, {} added, {} removed",
                thousands(f.units_a as u64),
                thousands(f.units_b as u64),
                thousands(f.unchanged as u64),
                thousands(f.renamed_only as u64),
                thousands(f.changed.len() as u64),
                thousands(f.added.len() as u64),
                thousands(f.removed.len() as u64)
            ),
        ));
    }
    if let Some(t) = &d.text {
        out.push((
            "texts",
            format!(
                "{} → {}: {} changed, {} added, {} removed",
                thousands(t.texts_a as u64),
                thousands(t.texts_b as u64),
                thousands(t.changed.len() as u64),
                thousands(t.added.len() as u64),
                thousands(t.removed.len() as u64)
            ),
        ));
    }
    out
}

fn function_label(f: &crate::analysis::diff::functions::FunctionRef) -> String {
    let name = match (&f.original, &f.name) {
        (Some(o), Some(n)) => format!("{o} [{n}]"),
        (None, Some(n)) => n.clone(),
        (Some(o), None) => o.clone(),
        (None, None) => "(anonymous)".into(),
    };
    format!(
        "{} {}:{}",
        esc(&name),
        esc(f.module.rsplit('/').next().unwrap_or("")),
        f.raw_line
    )
}

/// The human rendering; `limit` caps every list and diff.
pub fn human(v: &DiffView, p: Paint, limit: usize) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let d = &v.diff;
    let _ = writeln!(o, "{}  {} → {}\n", p.bold("diff"), v.a, v.b);
    let sum = summary(v);
    let w = sum.iter().map(|s| s.0.len()).max().unwrap_or(0);
    for (k, s) in &sum {
        let _ = writeln!(o, "  {}  {s}", p.bold(&format!("{k:<w$}")));
    }
    let diff_lines = limit.max(1) * 6;
    if let Some(id) = &v.identity {
        let _ = writeln!(o, "\n{}", p.bold("Identity"));
        let mut t = Table::new(&[
            ("", Align::Left),
            ("field", Align::Left),
            ("A", Align::Left),
            ("B", Align::Left),
        ]);
        for f in &id.fields {
            let show = |x: &Value| match x {
                Value::String(s) => s.clone(),
                Value::Null => "-".into(),
                other => other.to_string(),
            };
            t.row(vec![
                if f.differs { "≠".into() } else { "".into() },
                f.field.to_string(),
                show(&f.a),
                show(&f.b),
            ]);
        }
        o.push_str(&t.render());
    }
    if let Some(wd) = &d.workflows {
        let _ = writeln!(o, "\n{}", p.bold("Workflows"));
        for n in &wd.removed {
            let _ = writeln!(
                o,
                "  {} {}{}",
                p.red("- removed"),
                esc(n),
                if wd.hidden.get(n) == Some(&true) {
                    " (hidden)"
                } else {
                    ""
                }
            );
        }
        for n in &wd.added {
            let _ = writeln!(
                o,
                "  {} {}{}",
                p.green("+ added"),
                esc(n),
                if wd.hidden.get(n) == Some(&true) {
                    " (hidden)"
                } else {
                    ""
                }
            );
        }
        for n in &wd.unchanged {
            let _ = writeln!(o, "  = unchanged {}", esc(n));
        }
        for c in &wd.details {
            let bytes = |s: &Option<crate::analysis::diff::facts::ScriptBrief>| {
                s.as_ref().map_or("-".into(), |s| {
                    format!(
                        "{} bytes, sha256 {}",
                        thousands(s.bytes as u64),
                        &s.sha256[..12]
                    )
                })
            };
            let _ = writeln!(
                o,
                "  {} {}: script {} → {} (+{} −{} lines){}",
                p.cyan("~ changed"),
                esc(&c.name),
                bytes(&c.script_a),
                bytes(&c.script_b),
                c.script_diff.added,
                c.script_diff.removed,
                if c.meta_changed.is_empty() {
                    String::new()
                } else {
                    format!("; meta changed: {}", c.meta_changed.join(", "))
                }
            );
            if !c.meta_diff.unified.is_empty() {
                let _ = writeln!(o, "  meta diff:");
                o.push_str(&p.diff(&c.meta_diff.unified, diff_lines));
            }
            if !c.script_diff.unified.is_empty() {
                let _ = writeln!(o, "  script diff:");
                o.push_str(&p.diff(&c.script_diff.unified, diff_lines * 2));
            }
        }
    }
    if let Some(f) = &d.flags {
        let _ = writeln!(o, "\n{}", p.bold("Flags"));
        let by_kind = |m: &std::collections::BTreeMap<String, usize>| {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            o,
            "  {} {} ({}): {}",
            p.green("+ added"),
            f.added.len(),
            by_kind(&f.added_by_kind),
            names(&f.added, limit * 3)
        );
        let _ = writeln!(
            o,
            "  {} {} ({}): {}",
            p.red("- removed"),
            f.removed.len(),
            by_kind(&f.removed_by_kind),
            names(&f.removed, limit * 3)
        );
        for c in f.kind_changed.iter().take(limit * 3) {
            let k = |v: &Value| v.as_str().unwrap_or("?").to_string();
            let _ = writeln!(o, "  ~ kind     {}: {} → {}", c.name, k(&c.a), k(&c.b));
        }
        for c in f.default_changed.iter().take(limit * 3) {
            let _ = writeln!(o, "  ~ default  {}: {} → {}", c.name, c.a, c.b);
        }
    }
    if let Some(g) = &d.gates {
        let _ = writeln!(o, "\n{}", p.bold("Gates"));
        let _ = writeln!(
            o,
            "  {} → {} gates, {} unchanged",
            g.count_a, g.count_b, g.unchanged
        );
        let important = |k: &str| !k.starts_with("flag-gate");
        for r in g
            .removed
            .iter()
            .filter(|x| important(&x.key))
            .chain(g.removed.iter().filter(|x| !important(&x.key)).take(limit))
        {
            let _ = writeln!(o, "  {} {}", p.red("- removed"), gate_name(r));
            for (i, c) in r.conditions.iter().enumerate() {
                let _ = writeln!(o, "      {}. {}", i + 1, short(c, 140));
            }
        }
        for r in g
            .added
            .iter()
            .filter(|x| important(&x.key))
            .chain(g.added.iter().filter(|x| !important(&x.key)).take(limit))
        {
            let _ = writeln!(o, "  {} {}", p.green("+ added"), gate_name(r));
            for (i, c) in r.conditions.iter().enumerate() {
                let _ = writeln!(o, "      {}. {}", i + 1, short(c, 140));
            }
        }
        for c in g.changed.iter().take(limit * 2) {
            let _ = writeln!(
                o,
                "  {} {} → {}",
                p.cyan("~ changed"),
                gate_name(&c.a),
                gate_name(&c.b)
            );
            let mut t = Table::new(&[("", Align::Left), ("A", Align::Left), ("B", Align::Left)]);
            for r in &c.rows {
                t.row(vec![
                    r.status.to_string(),
                    r.a.as_deref().map_or("".into(), |s| short(s, 70)),
                    r.b.as_deref().map_or("".into(), |s| short(s, 70)),
                ]);
            }
            for l in t.render().lines() {
                let _ = writeln!(o, "      {l}");
            }
        }
        if !g.flags.is_empty() {
            let _ = writeln!(o, "  flags deciding workflows:");
            let mut t = Table::new(&[
                ("flag", Align::Left),
                ("A", Align::Left),
                ("B", Align::Left),
            ]);
            for f in &g.flags {
                t.row(vec![f.flag.clone(), f.a.clone(), f.b.clone()]);
            }
            for l in t.render().lines() {
                let _ = writeln!(o, "      {l}");
            }
        }
    }
    if let Some(r) = &d.roles {
        let _ = writeln!(o, "\n{}", p.bold("Roles"));
        let mut t = Table::new(&[
            ("role", Align::Left),
            ("workflow", Align::Left),
            ("A", Align::Left),
            ("B", Align::Left),
        ]);
        for x in r.only_a.iter().chain(&r.only_b).chain(&r.both) {
            t.row(vec![
                x.role.clone(),
                x.workflow.clone().unwrap_or_default(),
                x.a.clone().unwrap_or_else(|| "absent".into()),
                x.b.clone().unwrap_or_else(|| "absent".into()),
            ]);
        }
        for l in t.render().lines() {
            let _ = writeln!(o, "  {l}");
        }
    }
    if let Some(m) = &d.modules {
        let _ = writeln!(o, "\n{}", p.bold("Modules"));
        for sp in &m.splits {
            let _ = writeln!(
                o,
                "  {} split into {} ({} bytes)",
                esc(&sp.from),
                plural(sp.into, "module", "modules"),
                thousands(sp.bytes)
            );
        }
        for c in m.changed.iter().take(limit * 2) {
            let _ = writeln!(
                o,
                "  {} {} → {} ({} → {} bytes, by {}{})",
                p.cyan("~"),
                esc(&c.a.name),
                esc(&c.b.name),
                thousands(c.a.bytes),
                thousands(c.b.bytes),
                c.matched_by,
                c.similarity
                    .map(|s| format!(", similarity {s}"))
                    .unwrap_or_default()
            );
        }
        for c in m.renamed.iter().take(limit) {
            let _ = writeln!(
                o,
                "  = {} → {} (same content)",
                esc(&c.a.name),
                esc(&c.b.name)
            );
        }
        for x in m.added.iter().take(limit) {
            let _ = writeln!(
                o,
                "  {} {} ({} bytes)",
                p.green("+"),
                esc(&x.name),
                thousands(x.bytes)
            );
        }
        if m.added.len() > limit {
            let _ = writeln!(
                o,
                "  {}",
                p.dim(&format!("… {} more added", m.added.len() - limit))
            );
        }
        for x in m.removed.iter().take(limit) {
            let _ = writeln!(
                o,
                "  {} {} ({} bytes)",
                p.red("-"),
                esc(&x.name),
                thousands(x.bytes)
            );
        }
        if m.removed.len() > limit {
            let _ = writeln!(
                o,
                "  {}",
                p.dim(&format!("… {} more removed", m.removed.len() - limit))
            );
        }
    }
    if let Some(f) = &d.functions {
        let _ = writeln!(o, "\n{}", p.bold("Functions (largest changes first)"));
        for c in f.changed.iter().take(limit) {
            let _ = writeln!(
                o,
                "  {} {} → {}  {} {}  {}",
                p.cyan("~"),
                function_label(&c.a),
                function_label(&c.b),
                p.green(&format!("+{}", c.lines_added)),
                p.red(&format!("−{}", c.lines_removed)),
                p.dim(&format!("matched by {}", c.matched_by))
            );
            o.push_str(&p.diff(&c.diff, diff_lines));
        }
        if f.changed.len() > limit {
            let _ = writeln!(
                o,
                "  {}",
                p.dim(&format!(
                    "… {} more changed functions",
                    f.changed.len() - limit
                ))
            );
        }
        for x in f.added.iter().take(limit) {
            let _ = writeln!(
                o,
                "  {} {} ({} tokens)",
                p.green("+"),
                function_label(x),
                thousands(x.tokens as u64)
            );
        }
        for x in f.removed.iter().take(limit) {
            let _ = writeln!(
                o,
                "  {} {} ({} tokens)",
                p.red("-"),
                function_label(x),
                thousands(x.tokens as u64)
            );
        }
    }
    if let Some(t) = &d.text {
        let _ = writeln!(o, "\n{}", p.bold("Texts"));
        for c in t.changed.iter().take(limit) {
            let _ = writeln!(
                o,
                "  {} {}  (similarity {})",
                p.cyan("~"),
                short(&c.a, 90),
                c.similarity
            );
            o.push_str(&p.diff(&c.diff, diff_lines));
        }
        for x in t.added.iter().take(limit) {
            let _ = writeln!(o, "  {} {}", p.green("+"), short(x, 120));
        }
        for x in t.removed.iter().take(limit) {
            let _ = writeln!(o, "  {} {}", p.red("-"), short(x, 120));
        }
        if t.added.len() + t.removed.len() > 2 * limit {
            let _ = writeln!(o, "  {}", p.dim("… more in --json"));
        }
    }
    o
}

fn md_cell(s: &str) -> String {
    short(s, 160).replace('|', "\\|")
}

fn md_diff(o: &mut String, unified: &str) {
    let fence = if unified.contains("```") {
        "~~~~"
    } else {
        "```"
    };
    o.push_str(&format!("{fence}diff\n{unified}"));
    if !unified.ends_with('\n') {
        o.push('\n');
    }
    o.push_str(fence);
    o.push_str("\n\n");
}

/// A Markdown report one could publish; `limit` caps the lists.
pub fn markdown(v: &DiffView, limit: usize) -> String {
    use std::fmt::Write;
    let d = &v.diff;
    let mut o = String::new();
    let _ = writeln!(o, "# What changed: `{}` → `{}`\n", v.a, v.b);
    let _ = writeln!(o, "## Summary\n");
    for (k, s) in summary(v) {
        let _ = writeln!(o, "- **{k}**: {}", s.replace('|', "\\|"));
    }
    o.push('\n');
    if let Some(id) = &v.identity {
        let _ = writeln!(o, "## Identity\n\n| field | A | B |\n|---|---|---|");
        for f in &id.fields {
            let show = |x: &Value| match x {
                Value::String(s) => format!("`{s}`"),
                Value::Null => "-".into(),
                other => other.to_string(),
            };
            let mark = if f.differs { " **≠**" } else { "" };
            let _ = writeln!(o, "| {}{mark} | {} | {} |", f.field, show(&f.a), show(&f.b));
        }
        o.push('\n');
    }
    if let Some(wd) = &d.workflows {
        let _ = writeln!(o, "## Workflows\n");
        for n in &wd.removed {
            let _ = writeln!(
                o,
                "- removed: `{n}`{}",
                if wd.hidden.get(n) == Some(&true) {
                    " (hidden)"
                } else {
                    ""
                }
            );
        }
        for n in &wd.added {
            let _ = writeln!(
                o,
                "- added: `{n}`{}",
                if wd.hidden.get(n) == Some(&true) {
                    " (hidden)"
                } else {
                    ""
                }
            );
        }
        for n in &wd.unchanged {
            let _ = writeln!(o, "- unchanged: `{n}`");
        }
        for c in &wd.details {
            let _ = writeln!(
                o,
                "\n### `{}` changed\n\nScript: {} → {} (+{} −{} lines). Meta changed: {}.\n",
                c.name,
                c.script_a.as_ref().map_or("-".into(), |s| format!(
                    "{} bytes, `{}`",
                    thousands(s.bytes as u64),
                    &s.sha256[..16]
                )),
                c.script_b.as_ref().map_or("-".into(), |s| format!(
                    "{} bytes, `{}`",
                    thousands(s.bytes as u64),
                    &s.sha256[..16]
                )),
                c.script_diff.added,
                c.script_diff.removed,
                if c.meta_changed.is_empty() {
                    "nothing".into()
                } else {
                    c.meta_changed.join(", ")
                }
            );
            if !c.meta_diff.unified.is_empty() {
                let _ = writeln!(o, "Meta diff:\n");
                md_diff(&mut o, &c.meta_diff.unified);
            }
            if !c.script_diff.unified.is_empty() {
                let _ = writeln!(o, "Script diff:\n");
                md_diff(&mut o, &c.script_diff.unified);
            }
        }
        o.push('\n');
    }
    if let Some(f) = &d.flags {
        let _ = writeln!(
            o,
            "## Flags\n\n{} → {} flags.\n",
            thousands(f.count_a as u64),
            thousands(f.count_b as u64)
        );
        let list = |v: &[String]| {
            v.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(o, "- added ({}): {}", f.added.len(), list(&f.added));
        let _ = writeln!(o, "- removed ({}): {}", f.removed.len(), list(&f.removed));
        if !f.kind_changed.is_empty() || !f.default_changed.is_empty() {
            let _ = writeln!(o, "\n| flag | change | A | B |\n|---|---|---|---|");
            for c in &f.kind_changed {
                let k = |v: &Value| v.as_str().unwrap_or("?").to_string();
                let _ = writeln!(o, "| `{}` | kind | {} | {} |", c.name, k(&c.a), k(&c.b));
            }
            for c in &f.default_changed {
                let _ = writeln!(o, "| `{}` | default | `{}` | `{}` |", c.name, c.a, c.b);
            }
        }
        o.push('\n');
    }
    if let Some(g) = &d.gates {
        let _ = writeln!(
            o,
            "## Gates\n\n{} → {} gates; {} unchanged.\n",
            g.count_a, g.count_b, g.unchanged
        );
        for (what, v) in [("removed", &g.removed), ("added", &g.added)] {
            for r in v {
                let _ = writeln!(o, "- {what}: {}", gate_name(r).replace('|', "\\|"));
                for (i, c) in r.conditions.iter().enumerate() {
                    let _ = writeln!(o, "  {}. `{}`", i + 1, short(c, 200).replace('`', "'"));
                }
            }
        }
        for c in &g.changed {
            let _ = writeln!(o, "\n### `{}` changed\n\n| | A | B |\n|---|---|---|", c.key);
            for r in &c.rows {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} |",
                    r.status,
                    r.a.as_deref().map(md_cell).unwrap_or_default(),
                    r.b.as_deref().map(md_cell).unwrap_or_default()
                );
            }
        }
        if !g.flags.is_empty() {
            let _ = writeln!(
                o,
                "\nFlags deciding workflows:\n\n| flag | A | B |\n|---|---|---|"
            );
            for f in &g.flags {
                let _ = writeln!(o, "| `{}` | {} | {} |", f.flag, f.a, f.b);
            }
        }
        o.push('\n');
    }
    if let Some(r) = &d.roles {
        let _ = writeln!(
            o,
            "## Roles\n\n| role | workflow | A | B |\n|---|---|---|---|"
        );
        for x in r.only_a.iter().chain(&r.only_b).chain(&r.both) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                x.role,
                x.workflow.as_deref().unwrap_or(""),
                x.a.as_deref().unwrap_or("absent"),
                x.b.as_deref().unwrap_or("absent")
            );
        }
        o.push('\n');
    }
    if let Some(m) = &d.modules {
        let _ = writeln!(o, "## Modules\n");
        for sp in &m.splits {
            let _ = writeln!(
                o,
                "- `{}` split into {} ({} bytes)",
                sp.from,
                plural(sp.into, "module", "modules"),
                thousands(sp.bytes)
            );
        }
        for c in m.changed.iter().take(limit * 5) {
            let _ = writeln!(
                o,
                "- changed: `{}` → `{}` ({} → {} bytes, by {})",
                c.a.name,
                c.b.name,
                thousands(c.a.bytes),
                thousands(c.b.bytes),
                c.matched_by
            );
        }
        let _ = writeln!(
            o,
            "- added: {}; removed: {}",
            m.added.len(),
            m.removed.len()
        );
        o.push('\n');
    }
    if let Some(f) = &d.functions {
        let _ = writeln!(
            o,
            "## Functions\n\nLargest changes first; consistent renames are not changes.\n"
        );
        for c in f.changed.iter().take(limit) {
            let _ = writeln!(
                o,
                "### `{}` → `{}` (+{} −{})\n",
                function_label(&c.a),
                function_label(&c.b),
                c.lines_added,
                c.lines_removed
            );
            md_diff(&mut o, &c.diff);
        }
        if f.changed.len() > limit {
            let _ = writeln!(
                o,
                "… and {} more changed functions.\n",
                f.changed.len() - limit
            );
        }
    }
    if let Some(t) = &d.text {
        let _ = writeln!(o, "## Texts\n");
        for c in t.changed.iter().take(limit) {
            let _ = writeln!(o, "### Changed: “{}”\n", md_cell(&short(&c.a, 80)));
            md_diff(&mut o, &c.diff);
        }
        for x in t.added.iter().take(limit) {
            let _ = writeln!(o, "- added: “{}”", md_cell(x));
        }
        for x in t.removed.iter().take(limit) {
            let _ = writeln!(o, "- removed: “{}”", md_cell(x));
        }
        o.push('\n');
    }
    o
}
