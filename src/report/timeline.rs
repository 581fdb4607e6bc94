//! `history timeline`: one self-contained page over every release scanned —
//! charts (inline SVG, no script, no network) of what each build holds,
//! markers at the events (the switch to code-split builds, workflows added
//! or removed, a new Bun layout), and a table of versions, each linking to
//! what changed in it.

use crate::store::history::TimelineRow;
use std::fmt::Write;

/// Something worth a marker on every chart.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Event {
    pub version: String,
    pub index: usize,
    pub what: String,
}

/// The events in a timeline, in order.
pub fn events(rows: &[TimelineRow]) -> Vec<Event> {
    let mut out = Vec::new();
    for (i, w) in rows.windows(2).enumerate() {
        let (a, b) = (&w[0].release, &w[1]);
        let at = |what: String| Event {
            version: b.release.version.clone(),
            index: i + 1,
            what,
        };
        if a.code_split != b.release.code_split && b.release.code_split == Some(true) {
            out.push(at("switch to code-split builds".into()));
        }
        if a.code_split != b.release.code_split && b.release.code_split == Some(false) {
            out.push(at("back to a single bundle".into()));
        }
        if a.bun_layout.is_some() && a.bun_layout != b.release.bun_layout {
            out.push(at(format!(
                "Bun layout: {}",
                b.release.bun_layout.as_deref().unwrap_or("unknown")
            )));
        }
        for w in b.added.get("workflow").into_iter().flatten() {
            out.push(at(format!("workflow {w} added")));
        }
        for w in b.removed.get("workflow").into_iter().flatten() {
            out.push(at(format!("workflow {w} removed")));
        }
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number with thousands separators.
fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

const COLOURS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// One line chart: series over the releases, markers at the events.
fn chart(
    title: &str,
    unit: &str,
    series: &[(&str, Vec<f64>)],
    events: &[Event],
    versions: (&str, &str),
    n: usize,
) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 170.0, 56.0, 12.0, 24.0, 22.0);
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let x = |i: usize| {
        if n <= 1 {
            left + (w - left - right) / 2.0
        } else {
            left + (w - left - right) * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: f64| top + (h - top - bottom) * (1.0 - v / max);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<figure class="chart"><svg role="img" viewBox="0 0 {w} {h}" width="{w}" height="{h}"><title>{t}</title>"#,
        t = esc(title)
    );
    let _ = write!(
        s,
        r#"<text x="{left}" y="15" class="t">{t}</text><line x1="{left}" y1="{b}" x2="{r}" y2="{b}" class="axis"/><text x="{lx}" y="{ty}" class="l">{m}</text><text x="{lx}" y="{b}" class="l">0</text>"#,
        t = esc(title),
        b = h - bottom,
        r = w - right,
        lx = left - 4.0,
        ty = top + 4.0,
        m = esc(&format!("{}{unit}", num(max.round() as u64)))
    );
    // The first and last versions under the axis.
    let _ = write!(
        s,
        r#"<text x="{left}" y="{yb}" class="x">{a}</text><text x="{r}" y="{yb}" class="x e">{b}</text>"#,
        yb = h - 6.0,
        r = w - right,
        a = esc(versions.0),
        b = esc(versions.1)
    );
    for e in events {
        let _ = write!(
            s,
            r#"<line x1="{x}" y1="{top}" x2="{x}" y2="{b}" class="event"><title>{v}: {what}</title></line>"#,
            x = x(e.index),
            b = h - bottom,
            v = esc(&e.version),
            what = esc(&e.what)
        );
    }
    for (k, (name, values)) in series.iter().enumerate() {
        let pts: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v)))
            .collect();
        let c = COLOURS[k % COLOURS.len()];
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"><title>{}</title></polyline>"#,
            pts.join(" "),
            esc(name)
        );
        if values.len() == 1 {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                x(0),
                y(values[0])
            );
        }
        if series.len() > 1 {
            let _ = write!(
                s,
                r#"<text x="{}" y="15" fill="{c}" class="k">{}</text>"#,
                w - right - 90.0 * (series.len() - k) as f64,
                esc(name)
            );
        }
    }
    s.push_str("</svg></figure>\n");
    s
}

/// A chart: title, unit, and named series of values.
type Chart = (&'static str, &'static str, Vec<(&'static str, Vec<f64>)>);

/// The series the page charts.
fn series(rows: &[TimelineRow]) -> Vec<Chart> {
    let f = |g: &dyn Fn(&TimelineRow) -> f64| rows.iter().map(g).collect::<Vec<f64>>();
    let flag = |k: &'static str| move |r: &TimelineRow| *r.flags.get(k).unwrap_or(&0) as f64;
    vec![
        (
            "Modules",
            "",
            vec![("modules", f(&|r| r.release.modules.unwrap_or(0) as f64))],
        ),
        (
            "JavaScript bytes",
            " MB",
            vec![(
                "MB",
                f(&|r| r.release.bundle_bytes.unwrap_or(0) as f64 / 1e6),
            )],
        ),
        (
            "Flags by kind",
            "",
            vec![
                ("feature", f(&flag("feature"))),
                ("event", f(&flag("event"))),
                ("config", f(&flag("config"))),
                ("other", f(&flag("other"))),
            ],
        ),
        ("Tools", "", vec![("tools", f(&|r| r.tools as f64))]),
        (
            "Prompts' total size",
            " kB",
            vec![("kB", f(&|r| r.prompt_bytes as f64 / 1e3))],
        ),
        (
            "Environment variables",
            "",
            vec![("env", f(&|r| r.env as f64))],
        ),
    ]
}

fn change_line(r: &TimelineRow) -> String {
    let mut parts = Vec::new();
    for (k, names) in &r.added {
        parts.push(format!("+{} {k}", names.len()));
    }
    for (k, names) in &r.removed {
        parts.push(format!("−{} {k}", names.len()));
    }
    parts.join(", ")
}

/// The page, self-contained (inline CSS and SVG; a CSP forbids any load).
pub fn html(platform: &str, rows: &[TimelineRow], provenance: &str) -> String {
    let ev = events(rows);
    let mut s = String::new();
    let first = rows
        .first()
        .map(|r| r.release.version.as_str())
        .unwrap_or("");
    let last = rows
        .last()
        .map(|r| r.release.version.as_str())
        .unwrap_or("");
    let _ = write!(
        s,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><title>Claude Code history {p}</title><style>
body{{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:760px;color:#222}}
code,td.v,.mono{{font-family:ui-monospace,Menlo,monospace}}
table{{border-collapse:collapse;width:100%;font-size:13px}}td,th{{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left}}td.n{{text-align:right}}
.summary{{border:2px solid #444;border-radius:6px;padding:.6em 1em;background:#f7f7f7}}
figure.chart{{margin:1em 0}} .t{{font-weight:600;font-size:13px}} .l{{font-size:11px;text-anchor:end;fill:#555}} .k{{font-size:11px}}
.x{{font-size:11px;fill:#555}} .x.e{{text-anchor:end}} .axis{{stroke:#999}} .event{{stroke:#e08000;stroke-dasharray:3 3;stroke-width:1.5}}
</style></head><body><h1>Claude Code, release by release</h1>
<div class="summary" id="summary"><p><b>{n}</b> releases of <code>{p}</code> scanned, <code>{first}</code> → <code>{last}</code>.</p><ul>"#,
        p = esc(platform),
        n = rows.len(),
        first = esc(first),
        last = esc(last),
    );
    for e in &ev {
        let _ = write!(
            s,
            r##"<li><a href="#v{v}"><code>{v}</code></a>: {w}</li>"##,
            v = esc(&e.version),
            w = esc(&e.what)
        );
    }
    if ev.is_empty() {
        s.push_str("<li>no event in this range</li>");
    }
    s.push_str("</ul></div>\n<h2>Charts</h2><p>Dashed lines mark the events above.</p>\n");
    for (title, unit, ser) in series(rows) {
        s.push_str(&chart(title, unit, &ser, &ev, (first, last), rows.len()));
    }
    s.push_str("<h2>Versions</h2><table><thead><tr><th>version</th><th>published</th><th>modules</th><th>split</th><th>workflows</th><th>flags</th><th>tools</th><th>changes</th></tr></thead><tbody>\n");
    for r in rows {
        let v = &r.release.version;
        let _ = write!(
            s,
            r#"<tr id="v{ve}"><td class="v">{ve}</td><td>{p}</td><td class="n">{m}</td><td>{sp}</td><td>{w}</td><td class="n">{f}</td><td class="n">{t}</td><td>{c}</td></tr>"#,
            ve = esc(v),
            p = esc(r
                .release
                .published
                .as_deref()
                .map(|p| p.get(..10).unwrap_or(p))
                .unwrap_or("")),
            m = num(r.release.modules.unwrap_or(0)),
            sp = if r.release.code_split == Some(true) {
                "yes"
            } else {
                "no"
            },
            w = esc(&r.workflows.join(", ")),
            f = num(r.flags.values().sum()),
            t = num(r.tools),
            c = esc(&change_line(r)),
        );
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "</tbody></table><p class=\"mono\">Changes per version: <code>cc-teardown history changes VERSION</code>.</p><footer><p>{}</p></footer></body></html>",
        esc(provenance)
    );
    s
}

/// The same as Markdown: events, a table of versions (no charts).
pub fn markdown(platform: &str, rows: &[TimelineRow], provenance: &str) -> String {
    let md = |s: &str| {
        s.chars()
            .flat_map(|c| match c {
                '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '\\' => vec!['\\', c],
                '\n' | '\r' => vec![' '],
                c => vec![c],
            })
            .collect::<String>()
    };
    let mut s = format!(
        "# Claude Code, release by release ({})\n\n{} releases scanned.\n\n## Events\n\n",
        md(platform),
        rows.len()
    );
    let ev = events(rows);
    if ev.is_empty() {
        s.push_str("No event in this range.\n");
    }
    for e in &ev {
        let _ = writeln!(s, "- `{}`: {}", md(&e.version), md(&e.what));
    }
    s.push_str("\n## Versions\n\n| version | published | modules | split | workflows | flags | tools | changes |\n|---|---|--:|---|---|--:|--:|---|\n");
    for r in rows {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
            md(&r.release.version),
            md(r.release
                .published
                .as_deref()
                .map(|p| p.get(..10).unwrap_or(p))
                .unwrap_or("")),
            num(r.release.modules.unwrap_or(0)),
            if r.release.code_split == Some(true) {
                "yes"
            } else {
                "no"
            },
            md(&r.workflows.join(", ")),
            num(r.flags.values().sum()),
            num(r.tools),
            md(&change_line(r)),
        );
    }
    let _ = writeln!(s, "\n{}", md(provenance));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::history::Release;

    fn row(v: &str, split: bool, layout: &str, workflows: &[&str]) -> TimelineRow {
        TimelineRow {
            release: Release {
                version: v.into(),
                platform: "p".into(),
                published: Some("2026-01-02T03:04:05Z".into()),
                status: "ok".into(),
                error: None,
                digest: None,
                modules: Some(if split { 1500 } else { 14 }),
                bundle_bytes: Some(20_000_000),
                code_split: Some(split),
                bun_layout: Some(layout.into()),
                container: None,
                current: true,
            },
            flags: [("feature".to_string(), 3)].into(),
            tools: 2,
            prompts: 1,
            prompt_bytes: 900,
            env: 4,
            commands: 1,
            workflows: workflows.iter().map(|w| w.to_string()).collect(),
            added: Default::default(),
            removed: Default::default(),
        }
    }

    #[test]
    fn events_mark_the_switch_the_layout_and_workflows() {
        let mut rows = vec![
            row("1.0.0", false, "A", &["a", "b"]),
            row("1.0.1", true, "A", &["a"]),
            row("1.0.2", true, "B", &["a"]),
        ];
        rows[1].removed.insert("workflow".into(), vec!["b".into()]);
        let ev: Vec<(String, String)> = events(&rows)
            .into_iter()
            .map(|e| (e.version, e.what))
            .collect();
        assert_eq!(
            ev,
            [
                ("1.0.1".into(), "switch to code-split builds".into()),
                ("1.0.1".into(), "workflow b removed".into()),
                ("1.0.2".into(), "Bun layout: B".into()),
            ]
        );
    }

    #[test]
    fn the_page_is_self_contained_and_escapes_names() {
        let mut rows = vec![
            row("1.0.0", false, "A", &["<x>"]),
            row("1.0.1", true, "A", &[]),
        ];
        rows[1]
            .removed
            .insert("workflow".into(), vec!["<x>".into()]);
        let h = html("p", &rows, "made by a test");
        assert!(h.contains("default-src 'none'"));
        assert!(!h.contains("<x>"), "names are escaped");
        assert_eq!(h.matches("<svg").count(), 6);
        assert!(h.contains("class=\"event\""));
        assert!(!h.contains("src=\"http") && !h.contains("href=\"http"));
        let m = markdown("p", &rows, "made by a test");
        assert!(m.contains("switch to code-split builds"));
        assert!(m.contains("\\<x\\>"));
    }
}
