//! `history timeline`: one self-contained page over every release scanned —
//! charts (inline SVG, no script, no network) of what each build holds,
//! markers at the events (the switch to code-split builds, workflows added
//! or removed, a new Bun layout), and a table of versions, each linking to
//! what changed in it.

use super::doc::{Block, Column, Doc, Inline, Kind, Table, fmt};
use super::emit::View;
use super::provenance::Provenance;
use super::svg;
use crate::store::history::TimelineRow;
use serde::Serialize;

/// `history timeline`: one platform's releases, oldest first. As JSON: the
/// platform, the events and every release's figures; for a person, the
/// page of [`doc`].
#[derive(Debug, Clone, Serialize)]
pub struct TimelineView {
    pub platform: String,
    pub events: Vec<Event>,
    pub releases: Vec<TimelineRow>,
    /// Who made the page, when and how (its last lines).
    #[serde(skip)]
    pub provenance: Provenance,
}

impl TimelineView {
    /// The timeline of `releases`, made by this run.
    pub fn new(platform: String, releases: Vec<TimelineRow>) -> TimelineView {
        TimelineView {
            events: events(&releases),
            platform,
            releases,
            provenance: Provenance::of_this_run(),
        }
    }
}

impl View for TimelineView {
    fn doc(&self) -> Doc {
        doc(&self.platform, &self.releases, &self.provenance)
    }
}

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
            "JavaScript",
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
        parts.push(format!("+{} {k}", fmt::n(names.len())));
    }
    for (k, names) in &r.removed {
        parts.push(format!("−{} {k}", fmt::n(names.len())));
    }
    parts.join(", ")
}

/// The timeline as a document: a summary of the events, the charts, and
/// the table of versions (rendered as a self-contained page, Markdown or
/// terminal text).
pub fn doc(platform: &str, rows: &[TimelineRow], provenance: &Provenance) -> Doc {
    doc_linked(platform, rows, provenance, None)
}

/// [`doc`], with each version linking to the address `link` gives it (the
/// site's release pages: `history site`).
pub fn doc_linked(
    platform: &str,
    rows: &[TimelineRow],
    provenance: &Provenance,
    link: Option<&dyn Fn(&str) -> String>,
) -> Doc {
    let version = |v: &str| match link {
        Some(f) => Inline::new().link_code(v, f(v)),
        None => Inline::code(v),
    };
    let ev = events(rows);
    let first = rows
        .first()
        .map(|r| r.release.version.as_str())
        .unwrap_or("");
    let last = rows
        .last()
        .map(|r| r.release.version.as_str())
        .unwrap_or("");
    let mut d = Doc::new(Inline::from("Claude Code, release by release: ").c(platform));
    let mut summary = vec![
        (
            "releases",
            Inline::from(fmt::count(rows.len(), "release", "releases"))
                .t(" scanned, ")
                .c(first)
                .t(" → ")
                .c(last),
        ),
        (
            "events",
            Inline::from(fmt::count(ev.len(), "event", "events")),
        ),
    ];
    let split = ev.iter().find(|e| e.what == "switch to code-split builds");
    if let Some(e) = split {
        summary.push(("code-split since", Inline::code(e.version.clone())));
    }
    d.summary(summary);
    d.toc = true;
    let mut items: Vec<Inline> = ev
        .iter()
        .map(|e| version(&e.version).t(": ").t(e.what.clone()))
        .collect();
    if items.is_empty() {
        items.push(Inline::from("no event in this range"));
    }
    d.section(
        "events",
        "Events",
        vec![Block::List {
            items,
            limit: Some(50),
        }],
    );
    let markers: Vec<(usize, String)> = ev
        .iter()
        .map(|e| (e.index, format!("{}: {}", e.version, e.what)))
        .collect();
    d.section(
        "charts",
        "Charts",
        series(rows)
            .into_iter()
            .map(|(title, unit, s)| {
                Block::Figure(svg::lines(title, unit, &s, &markers, (first, last)))
            })
            .collect(),
    );
    let mut t = Table::new(vec![
        Column::new("version", Kind::Code),
        Column::new("published", Kind::Text),
        Column::new("modules", Kind::Number),
        Column::new("split", Kind::Text),
        Column::new("workflows", Kind::Code),
        Column::new("flags", Kind::Number),
        Column::new("tools", Kind::Number),
        Column::new("changes", Kind::Text),
    ]);
    for r in rows {
        t.row(vec![
            version(&r.release.version),
            Inline::from(
                r.release
                    .published
                    .as_deref()
                    .map(|p| p.get(..10).unwrap_or(p))
                    .unwrap_or("")
                    .to_string(),
            ),
            Inline::from(fmt::num(r.release.modules.unwrap_or(0))),
            Inline::from(if r.release.code_split == Some(true) {
                "yes"
            } else {
                "no"
            }),
            Inline::code(r.workflows.join(", ")),
            Inline::from(fmt::num(r.flags.values().sum::<u64>())),
            Inline::from(fmt::num(r.tools)),
            Inline::from(change_line(r)),
        ]);
    }
    d.section(
        "versions",
        "Versions",
        vec![
            Block::Table(t),
            Block::Note(if link.is_some() {
                Inline::from("Each version links to its page: what changed in it.")
            } else {
                Inline::from("What changed in one version: ")
                    .c("cc-teardown history changes VERSION")
            }),
        ],
    );
    d.footer = provenance.facts(&format!("cc-teardown {}", env!("CARGO_PKG_VERSION")));
    d
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
                status: crate::store::history::ReleaseStatus::Ok,
                error: None,
                digest: None,
                modules: Some(if split { 1500 } else { 14 }),
                bundle_bytes: Some(20_000_000),
                code_split: Some(split),
                bun_layout: Some(layout.into()),
                container: None,
                current: true,
                build_id: None,
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
        let d = doc("p", &rows, &Provenance::default());
        let h = d.html();
        assert!(h.contains("default-src 'none'"));
        assert!(!h.contains("<x>"), "names are escaped");
        assert_eq!(h.matches("<svg").count(), 6);
        assert!(h.contains("stroke-dasharray"), "events are marked");
        assert!(!h.contains("src=\"http") && !h.contains("href=\"http"));
        let m = d.markdown();
        assert!(m.contains("switch to code-split builds"));
    }
}
