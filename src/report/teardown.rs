//! The one-shot teardown report: every fact cc-teardown establishes about a
//! build, rendered as Markdown, JSON or one self-contained HTML page.

use crate::analysis::flags::FlagInventory;
use crate::analysis::gates::{CachedFlags, Gate};
use crate::analysis::roles::Roles;
use crate::analysis::workflows::WorkflowScript;
use crate::report::info::InfoView;
use crate::source::installs::Install;
use serde::Serialize;

#[derive(Serialize)]
pub struct Hashes {
    pub file: String,
    pub payload: String,
    pub bundle: String,
    pub bundle_digest: String,
}

#[derive(Serialize)]
pub struct FlagSummary {
    pub counts: std::collections::BTreeMap<String, usize>,
    /// The feature flags the gates read, with default and cached value.
    pub gate_flags: Vec<(String, serde_json::Value, Option<serde_json::Value>)>,
}

#[derive(Serialize)]
pub struct Teardown {
    pub tool: String,
    pub info: InfoView,
    pub install: Option<Install>,
    pub hashes: Hashes,
    pub roles: Roles,
    pub workflows: Vec<WorkflowScript>,
    /// Scripts by workflow name (the appendix).
    pub scripts: Vec<(String, String)>,
    pub routing_gate: Option<Gate>,
    pub option_gates: Vec<Gate>,
    pub config: CachedFlags,
    pub flags: FlagSummary,
    pub undetermined: Vec<String>,
}

impl Teardown {
    pub fn summarise_flags(
        inv: &FlagInventory,
        gates: &[&Gate],
        config: &CachedFlags,
    ) -> FlagSummary {
        let mut gate_flags = Vec::new();
        for g in gates {
            for c in &g.conditions {
                if let Some(f) = &c.flag
                    && !gate_flags.iter().any(|(n, _, _): &(String, _, _)| n == f)
                {
                    gate_flags.push((
                        f.clone(),
                        c.default.clone().unwrap_or_default(),
                        config.values.get(f).cloned(),
                    ));
                }
            }
        }
        FlagSummary {
            counts: inv.counts.clone(),
            gate_flags,
        }
    }

    fn title(&self) -> String {
        format!(
            "Claude Code {} — cc-teardown report",
            self.info.version.as_deref().unwrap_or("(unknown version)")
        )
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `rows` of (key, value) as a two-column Markdown table.
fn md_facts(rows: &[(&str, String)]) -> String {
    let mut out = String::from("| fact | value |\n|---|---|\n");
    for (k, v) in rows {
        out.push_str(&format!("| {k} | {} |\n", md_escape(v)));
    }
    out
}

fn md_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        headers.join(" | "),
        "---|".repeat(headers.len())
    );
    for r in rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter()
                .map(|c| md_escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

/// The report's sections as (heading, Markdown body); HTML renders the same.
fn sections(t: &Teardown, with_scripts: bool) -> Vec<(String, String, bool)> {
    let i = &t.info;
    let mut out = Vec::new();
    let mut target = vec![
        ("target", i.target.label.clone()),
        (
            "file",
            format!("{} ({} bytes)", i.target.path, i.target.file_bytes),
        ),
        (
            "version",
            i.version.clone().unwrap_or_else(|| "unknown".into()),
        ),
        (
            "platform",
            i.target.platform.clone().unwrap_or_else(|| "-".into()),
        ),
    ];
    if let Some(inst) = &t.install {
        target.push((
            "installation",
            format!(
                "{:?} at {} (selected: {})",
                inst.kind, inst.path, inst.selected
            )
            .to_lowercase(),
        ));
    }
    if let Some(s) = &i.signature {
        target.push(("code signature", s.line()));
    }
    out.push(("Target".to_string(), md_facts(&target), false));
    out.push((
        "Hashes (SHA-256)".to_string(),
        md_facts(&[
            ("file", t.hashes.file.clone()),
            ("payload", t.hashes.payload.clone()),
            ("bundle", format!("{} ({})", t.hashes.bundle, i.bundle.name)),
            ("bundle digest", t.hashes.bundle_digest.clone()),
        ]),
        false,
    ));
    let c = &i.container;
    out.push((
        "Container and bundle".to_string(),
        md_facts(&[
            (
                "container",
                format!(
                    "{} {}",
                    c.format.as_str(),
                    c.arch.clone().unwrap_or_default()
                ),
            ),
            ("section", c.section.clone().unwrap_or_else(|| "-".into())),
            (
                "payload",
                format!(
                    "at file offset {}, {} bytes",
                    c.payload_offset, c.payload_size
                ),
            ),
            (
                "Bun layout",
                format!(
                    "{:?}-byte records, {:?}-byte Offsets ({})",
                    i.bun.layout.record_size.unwrap_or(0),
                    i.bun.layout.offsets_size.unwrap_or(0),
                    i.bun.layout.epoch
                ),
            ),
            (
                "modules",
                format!(
                    "{} ({} JavaScript, {} zstd-compressed)",
                    i.bun.modules, i.bun.js_modules, i.bun.compressed_modules
                ),
            ),
            ("entry", i.bun.entry.clone()),
            (
                "bundle",
                format!(
                    "{} bytes{}",
                    i.bundle.bytes,
                    if i.bundle.code_split {
                        ", code-split"
                    } else {
                        ""
                    }
                ),
            ),
        ]),
        false,
    ));
    let roles: Vec<Vec<String>> = t
        .roles
        .functions
        .iter()
        .map(|f| {
            vec![
                match &f.workflow {
                    Some(w) => format!("{} ({w})", f.role.as_str()),
                    None => f.role.as_str().to_string(),
                },
                f.name.clone().unwrap_or_else(|| "(anonymous)".into()),
                f.original.clone().unwrap_or_else(|| "-".into()),
                f.module.clone(),
                format!("{}–{}", f.raw_start, f.raw_end),
                format!("{}–{}", f.pretty_start, f.pretty_end),
            ]
        })
        .collect();
    let mut roles_md = md_table(
        &[
            "role",
            "name",
            "original",
            "module",
            "raw lines",
            "pretty lines",
        ],
        &roles,
    );
    for a in &t.roles.absent {
        roles_md.push_str(&format!("\n- absent: {} — {}", a.role.as_str(), a.reason));
    }
    out.push(("Located functions".to_string(), roles_md, false));
    for w in &t.workflows {
        let mut body = md_facts(&[
            ("hidden", w.hidden.to_string()),
            ("description", w.description.clone().unwrap_or_default()),
            ("when to use", w.when_to_use.clone().unwrap_or_default()),
            (
                "phases",
                w.phases
                    .iter()
                    .map(|p| p.title.as_str())
                    .collect::<Vec<_>>()
                    .join(" → "),
            ),
            (
                "script",
                w.script.as_ref().map_or_else(
                    || {
                        w.script_error
                            .as_ref()
                            .map_or("not reconstructed".into(), |e| e.to_string())
                    },
                    |s| {
                        format!(
                            "{} lines, {} bytes, SHA-256 {}, syntax {}",
                            s.lines,
                            s.bytes,
                            s.sha256,
                            if s.syntax_ok { "ok" } else { "error" }
                        )
                    },
                ),
            ),
            (
                "builder",
                format!(
                    "{} ({}:{})",
                    w.builder.name.clone().unwrap_or_default(),
                    w.builder.module,
                    w.builder.raw_start
                ),
            ),
        ]);
        for o in &w.options {
            body.push_str(&format!(
                "| option {} | {} |\n",
                o.name,
                md_escape(&serde_json::to_string(&o.value).unwrap_or_default())
            ));
        }
        if let Some(levels) = &w.levels {
            body.push('\n');
            body.push_str(&md_table(
                &[
                    "level",
                    "correctness finders",
                    "cleanup finders",
                    "initial candidate limit",
                    "additional sweep",
                    "report limit",
                ],
                &levels
                    .iter()
                    .map(|l| {
                        vec![
                            l.level.clone(),
                            l.correctness_finders.to_string(),
                            l.cleanup_finders.to_string(),
                            l.initial_candidate_limit.to_string(),
                            l.sweep.map_or("none".into(), |s| s.to_string()),
                            l.report_limit.to_string(),
                        ]
                    })
                    .collect::<Vec<_>>(),
            ));
        }
        out.push((format!("Workflow: {}", w.name), body, false));
    }
    let gate_md = |g: &Gate| {
        let mut s = format!(
            "`{}`{} in {} at raw line {} (pretty {}):\n\n",
            g.function.as_deref().unwrap_or("(anonymous)"),
            g.original
                .as_ref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default(),
            g.module,
            g.raw_line,
            g.pretty_line
        );
        for c in &g.conditions {
            s.push_str(&format!(
                "{}. {} — *{}* (line {})\n",
                c.index,
                c.text,
                c.kind.as_str(),
                c.line
            ));
        }
        if let Some(v) = &g.verdict {
            s.push_str(&format!("\n**Verdict:** {}\n", v.describe()));
        }
        s
    };
    match &t.routing_gate {
        Some(g) => out.push(("Review-routing gate".to_string(), gate_md(g), false)),
        None => out.push((
            "Review-routing gate".to_string(),
            "This build has no review-routing gate.".into(),
            false,
        )),
    }
    for g in &t.option_gates {
        out.push((format!("Gate: {}", g.role), gate_md(g), false));
    }
    let mut flags = md_table(
        &["kind", "names"],
        &t.flags
            .counts
            .iter()
            .map(|(k, n)| vec![k.clone(), n.to_string()])
            .collect::<Vec<_>>(),
    );
    if !t.flags.gate_flags.is_empty() {
        flags.push('\n');
        flags.push_str(&md_table(
            &["flag read by the gates", "default", "cached"],
            &t.flags
                .gate_flags
                .iter()
                .map(|(f, d, c)| {
                    vec![
                        f.clone(),
                        d.to_string(),
                        c.as_ref().map_or("(not cached)".into(), |v| v.to_string()),
                    ]
                })
                .collect::<Vec<_>>(),
        ));
    }
    flags.push_str(&format!(
        "\nCached values: {}\n",
        match (&t.config.problem, &t.config.path) {
            (Some(p), _) => p.clone(),
            (None, Some(p)) => format!("{p} ({} values)", t.config.values.len()),
            _ => "none".into(),
        }
    ));
    out.push(("Feature flags".to_string(), flags, false));
    out.push((
        "What could not be determined".to_string(),
        if t.undetermined.is_empty() {
            "Nothing: every fact above was established from the build.".into()
        } else {
            t.undetermined.iter().map(|u| format!("- {u}\n")).collect()
        },
        false,
    ));
    if with_scripts {
        for (name, text) in &t.scripts {
            out.push((format!("Appendix: {name} script"), text.clone(), true));
        }
    }
    out
}

pub fn markdown(t: &Teardown) -> String {
    let mut s = format!("# {}\n\n", t.title());
    for (h, body, code) in sections(t, true) {
        s.push_str(&format!("## {h}\n\n"));
        if code {
            let fence = if body.contains("```") { "````" } else { "```" };
            s.push_str(&format!("{fence}js\n{body}\n{fence}\n\n"));
        } else {
            s.push_str(&body);
            s.push_str("\n\n");
        }
    }
    s.push_str(&format!("_Generated by {}._\n", t.tool));
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Markdown tables, lists and paragraphs of the sections, as HTML.
fn md_to_html(md: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    let mut in_list: Option<&str> = None;
    let inline = |s: &str| {
        let mut h = esc(s);
        // **bold**, *em* and `code`, enough for what sections() writes.
        for (m, open, close) in [
            ("**", "<strong>", "</strong>"),
            ("`", "<code>", "</code>"),
            ("*", "<em>", "</em>"),
        ] {
            while let Some(a) = h.find(m) {
                let Some(b) = h[a + m.len()..].find(m) else {
                    break;
                };
                let inner = h[a + m.len()..a + m.len() + b].to_string();
                h = format!(
                    "{}{open}{inner}{close}{}",
                    &h[..a],
                    &h[a + m.len() + b + m.len()..]
                );
            }
        }
        h.replace("\\|", "|")
    };
    for line in md.lines() {
        let is_row = line.starts_with('|');
        if !is_row && in_table {
            out.push_str("</tbody></table>\n");
            in_table = false;
        }
        let list = if line.starts_with("- ") {
            Some("ul")
        } else if line
            .split_once(". ")
            .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
        {
            Some("ol")
        } else {
            None
        };
        if list != in_list {
            if let Some(l) = in_list {
                out.push_str(&format!("</{l}>\n"));
            }
            if let Some(l) = list {
                out.push_str(&format!("<{l}>\n"));
            }
            in_list = list;
        }
        if is_row {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            if cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == '|'))
            {
                continue;
            }
            if !in_table {
                out.push_str("<table><thead><tr>");
                for c in &cells {
                    out.push_str(&format!("<th>{}</th>", inline(c)));
                }
                out.push_str("</tr></thead><tbody>\n");
                in_table = true;
                continue;
            }
            out.push_str("<tr>");
            for c in &cells {
                out.push_str(&format!("<td>{}</td>", inline(c)));
            }
            out.push_str("</tr>\n");
        } else if let Some(l) = list {
            let text = if l == "ul" {
                &line[2..]
            } else {
                line.split_once(". ").map_or(line, |x| x.1)
            };
            out.push_str(&format!("<li>{}</li>\n", inline(text)));
        } else if !line.trim().is_empty() {
            out.push_str(&format!("<p>{}</p>\n", inline(line)));
        }
    }
    if in_table {
        out.push_str("</tbody></table>\n");
    }
    if let Some(l) = in_list {
        out.push_str(&format!("</{l}>\n"));
    }
    out
}

/// One self-contained page: inline style, no scripts, no external assets.
pub fn html(t: &Teardown) -> String {
    let mut body = String::new();
    for (h, md, code) in sections(t, true) {
        if code {
            body.push_str(&format!(
                "<details><summary>{}</summary><pre><code>{}</code></pre></details>\n",
                esc(&h),
                esc(&md)
            ));
        } else {
            let open = if h.starts_with("Appendix") {
                ""
            } else {
                " open"
            };
            body.push_str(&format!(
                "<details{open}><summary><h2>{}</h2></summary>\n{}</details>\n",
                esc(&h),
                md_to_html(&md)
            ));
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<style>\n\
body{{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}}\n\
h1{{font-size:1.6rem}} h2{{display:inline;font-size:1.2rem}} summary{{cursor:pointer;margin:1rem 0 .5rem}}\n\
table{{border-collapse:collapse;margin:.5rem 0}} td,th{{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}}\n\
th{{background:#f3f3f3}} code{{font-family:ui-monospace,monospace;font-size:.9em}} pre{{background:#f7f7f7;padding:1rem;overflow:auto;max-height:40rem}}\n\
</style></head><body>\n<h1>{title}</h1>\n{body}<p><em>Generated by {tool}.</em></p>\n</body></html>\n",
        title = esc(&t.title()),
        tool = esc(&t.tool),
    )
}
