//! `history show`: when one item appeared, changed and went.

use super::plural;
use crate::report::doc::{Block, Doc, Inline, Kind, Table, Term, facts};
use crate::report::emit::View;
use crate::report::escape;
use crate::store::history::{Change, ItemKind, PlatformSpan, ShowAnswer, Story};
use serde::Serialize;
use std::fmt::Write;

/// `history show`. As JSON: the name and kind, whether it was found, the
/// first platform's story spelled out (when found), and every platform's.
#[derive(Debug, Clone)]
pub struct ShowView(pub ShowAnswer);

/// The JSON of [`ShowView`].
#[derive(Serialize)]
struct ShowJson<'a> {
    name: &'a str,
    kind: ItemKind,
    found: bool,
    #[serde(flatten)]
    first: Option<FirstStory<'a>>,
    stories: &'a [Story],
    /// Where the platforms differ (empty with one platform).
    platform_differences: &'a [PlatformSpan],
}

/// The first platform's story, at the top of a found item's JSON.
#[derive(Serialize)]
struct FirstStory<'a> {
    first_seen: &'a Option<String>,
    last_seen: &'a Option<String>,
    removed_in: &'a Option<String>,
    changes: &'a [Change],
    gaps: &'a [String],
    platform: &'a str,
    platforms_agree: bool,
}

impl Serialize for ShowView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = &self.0;
        let found = a.found();
        let first = a.stories.first().filter(|_| found).map(|f| FirstStory {
            first_seen: &f.first_seen,
            last_seen: &f.last_seen,
            removed_in: &f.removed_in,
            changes: &f.changes,
            gaps: &f.gaps,
            platform: &f.platform,
            platforms_agree: a.platforms_agree(),
        });
        ShowJson {
            name: &a.name,
            kind: a.kind,
            found,
            first,
            stories: &a.stories,
            platform_differences: &a.differences,
        }
        .serialize(s)
    }
}

impl ShowView {
    /// The exit status: 1 when no release holds the item.
    pub fn code(&self) -> i32 {
        if self.0.found() { 0 } else { 1 }
    }

    /// "; similar: a, b" when names like the one asked exist.
    fn hint(&self) -> String {
        if self.0.similar.is_empty() {
            String::new()
        } else {
            format!("; similar: {}", self.0.similar.join(", "))
        }
    }

    fn not_found(&self) -> String {
        let a = &self.0;
        format!(
            "no {} named {} in the releases scanned{}",
            a.kind.as_str(),
            a.name,
            self.hint()
        )
    }

    /// The stories told: one when the platforms agree.
    fn told(&self) -> Vec<(&Story, String)> {
        let a = &self.0;
        let same = a.platforms_agree();
        let shown: Vec<&Story> = if same {
            a.stories.iter().take(1).collect()
        } else {
            a.stories.iter().collect()
        };
        shown
            .into_iter()
            .map(|s| {
                let on = if same && a.stories.len() > 1 {
                    let all: Vec<&str> = a.stories.iter().map(|s| s.platform.as_str()).collect();
                    all.join(", ")
                } else {
                    s.platform.clone()
                };
                (s, on)
            })
            .collect()
    }

    fn heading(&self, s: &Story, on: &str) -> String {
        format!(
            "{} {} on {on} ({} {} scanned)",
            self.0.kind.as_str(),
            self.0.name,
            s.scanned,
            plural(s.scanned, "release", "releases")
        )
    }
}

/// One story for a terminal, as `history show` has always printed it.
fn story_text(o: &mut String, s: &Story) {
    let _ = writeln!(
        o,
        "  first seen  {}",
        s.first_seen.as_deref().unwrap_or("never")
    );
    let _ = writeln!(
        o,
        "  last seen   {}",
        s.last_seen.as_deref().unwrap_or("never")
    );
    if let Some(r) = &s.removed_in {
        let _ = writeln!(o, "  removed in  {r}");
    }
    if !s.gaps.is_empty() {
        let _ = writeln!(o, "  absent in   {}", s.gaps.join(", "));
    }
    o.push_str("  changes:\n");
    for c in &s.changes {
        let _ = match c.what.as_str() {
            "added" | "returned" => writeln!(o, "    {:<10} {:<9} {}", c.version, c.what, c.to),
            "removed" => writeln!(o, "    {:<10} removed", c.version),
            what => writeln!(o, "    {:<10} {what}: {} → {}", c.version, c.from, c.to),
        };
    }
}

/// One story as document blocks.
fn story_blocks(s: &Story) -> Vec<Block> {
    let never = || Inline::from("never");
    let mut f = vec![
        (
            "first seen",
            s.first_seen.clone().map_or_else(never, Inline::code),
        ),
        (
            "last seen",
            s.last_seen.clone().map_or_else(never, Inline::code),
        ),
    ];
    if let Some(r) = &s.removed_in {
        f.push(("removed in", Inline::code(r.clone())));
    }
    if !s.gaps.is_empty() {
        f.push(("absent in", Inline::names(&s.gaps)));
    }
    let mut t = Table::of(&[
        ("version", Kind::Code),
        ("what", Kind::Text),
        ("from", Kind::Code),
        ("to", Kind::Code),
    ]);
    for c in &s.changes {
        let shown = |v: &serde_json::Value| {
            if v.is_null() {
                String::new()
            } else {
                v.to_string()
            }
        };
        t.text_row(vec![
            c.version.clone(),
            c.what.clone(),
            shown(&c.from),
            shown(&c.to),
        ]);
    }
    vec![facts(f), Block::Table(t)]
}

impl View for ShowView {
    fn doc(&self) -> Doc {
        let a = &self.0;
        let mut d = Doc::new(Inline::from(format!("{} ", a.kind.as_str())).c(a.name.clone()));
        if !a.found() {
            d.push(Block::Note(self.not_found().into()));
            return d;
        }
        for (s, on) in self.told() {
            d.section(&s.platform, self.heading(s, &on), story_blocks(s));
        }
        if !a.platforms_agree() {
            d.push(Block::Note("the platforms differ".into()));
        }
        if !a.differences.is_empty() {
            let mut t = Table::of(&[
                ("versions", Kind::Code),
                ("absent on", Kind::Text),
                ("values", Kind::Text),
            ]);
            for s in &a.differences {
                t.text_row(vec![span_of(s), s.absent_on.join(", "), values_of(s)]);
            }
            d.section(
                "platforms",
                "Where the platforms differ",
                vec![Block::Table(t)],
            );
        }
        d
    }

    fn terminal(&self, _: &Term) -> Option<String> {
        if !self.0.found() {
            return Some(escape::text(&format!("{}\n", self.not_found())).into_owned());
        }
        let mut o = String::new();
        for (s, on) in self.told() {
            o.push_str(&self.heading(s, &on));
            o.push('\n');
            story_text(&mut o, s);
        }
        if !self.0.platforms_agree() {
            o.push_str("(the platforms differ)\n");
        }
        if !self.0.differences.is_empty() {
            o.push_str("where the platforms differ:\n");
            for s in &self.0.differences {
                let _ = write!(o, "  {}:", span_of(s));
                if !s.absent_on.is_empty() {
                    let _ = write!(o, " absent on {}", s.absent_on.join(", "));
                    if s.values.len() > 1 {
                        o.push(';');
                    }
                }
                if s.values.len() > 1 {
                    let _ = write!(o, " {}", values_of(s));
                }
                o.push('\n');
            }
        }
        Some(escape::text(&o).into_owned())
    }
}

/// "2.1.240 … 2.1.250 (11 releases)", or one version.
fn span_of(s: &PlatformSpan) -> String {
    if s.versions == 1 {
        s.from.clone()
    } else {
        format!("{} … {} ({} releases)", s.from, s.to, s.versions)
    }
}

/// The values the platforms hold, by the fields that differ between them:
/// "defaults: [false] on a, b; [true] on c".
fn values_of(s: &PlatformSpan) -> String {
    if s.values.len() < 2 {
        return String::new();
    }
    let objects: Vec<Option<&serde_json::Map<String, serde_json::Value>>> =
        s.values.iter().map(|v| v.value.as_object()).collect();
    let by_field = |field: Option<&str>| -> String {
        let parts: Vec<String> = s
            .values
            .iter()
            .map(|v| {
                let shown = match field {
                    Some(f) => v.value.get(f).cloned().unwrap_or_default(),
                    None => v.value.clone(),
                };
                format!("{shown} on {}", v.platforms.join(", "))
            })
            .collect();
        parts.join("; ")
    };
    if objects.iter().all(Option::is_some) {
        let mut fields: Vec<&String> = objects.iter().flatten().flat_map(|m| m.keys()).collect();
        fields.sort();
        fields.dedup();
        let differing: Vec<String> = fields
            .into_iter()
            .filter(|f| {
                let first = objects[0].and_then(|m| m.get(*f));
                objects.iter().any(|m| m.and_then(|m| m.get(*f)) != first)
            })
            .map(|f| format!("{f}: {}", by_field(Some(f))))
            .collect();
        differing.join("; ")
    } else {
        by_field(None)
    }
}
