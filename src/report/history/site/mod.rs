//! `history site`: a folder of pages over the history that needs no
//! server — the timeline as its index, a page per release (what changed,
//! with word diffs of texts), a page per item (every release that holds
//! it, every change of its value, its texts' versions, where platforms
//! differ), lists of items per kind, and a search page over names and
//! texts whose index ships with the site (`search-index.js`). Every page
//! is a [`Doc`] rendered by the one HTML renderer; the site adds its
//! style sheet and one script, allowed by each page's policy as `'self'`.
//! docs/guide/history.md ("The site") says what each page holds.

mod assets;
mod words;
mod write;

pub use write::{SiteWritten, write_site};

use crate::report::doc::{Block, Column, Doc, Inline, Kind, Section, Status, Table, fmt};
use crate::report::provenance::Provenance;
use crate::report::timeline;
use crate::store::history::{ItemSeries, Release, SiteItems, TimelineRow};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use words::{WordDiff, word_diff};

/// The most a page may weigh: past it the page is made again without its
/// word diffs (which its items' pages hold).
pub const MAX_PAGE: usize = 300 << 10;
/// The share of a page the word diffs of a release or an item may take.
const DIFF_BUDGET: usize = 170 << 10;
/// Items listed on one page of a kind's list.
const PER_LIST_PAGE: usize = 700;
/// The longest text an item's page shows folded (a longer one is on its
/// text's pages only).
const MAX_ITEM_TEXT: usize = 60 << 10;
/// The most of a text a page shows (a longer one is cut, and says so).
const MAX_TEXT: usize = 200 << 10;

/// What a site is made of: the releases and items of its platform (and of
/// the store's other platforms, for their differences), the timeline, the
/// texts the items refer to, and who made it.
pub struct SiteInput {
    pub primary: SiteItems,
    pub others: Vec<SiteItems>,
    pub timeline: Vec<TimelineRow>,
    pub texts: HashMap<String, String>,
    pub provenance: Provenance,
    /// Whether the store was made on this machine (else every page says
    /// that its facts are what the store's author recorded).
    pub made_here: bool,
}

/// One file of the site: its path below the folder and its bytes, or,
/// when the inputs of its page are those the last run made it from and the
/// file is still there, the SHA-256 of the bytes it has (`kept`: not made
/// again, not written).
#[derive(Debug, Clone)]
pub struct SiteFile {
    pub path: String,
    pub bytes: Vec<u8>,
    pub kept: Option<String>,
}

/// What the last run left: the fingerprint of each group of pages' inputs
/// (a release's page; an item's page with its texts' pages), and the
/// SHA-256 of each of its files still in the folder as it wrote them.
#[derive(Debug, Clone, Default)]
pub struct Previous {
    pub inputs: BTreeMap<String, String>,
    pub files: HashMap<String, String>,
}

/// Changes when the pages a group's inputs make could change for the same
/// inputs: the site's format, and the tool's version.
const FORMAT: &str = concat!("site 1 ", env!("CARGO_PKG_VERSION"));

/// The kinds in the order the site lists them, with their plural titles.
const KINDS: [(&str, &str); 11] = [
    ("prompt", "Prompts"),
    ("tool", "Tools"),
    ("flag", "Flags"),
    ("env", "Environment variables"),
    ("setting", "Settings"),
    ("command", "Commands"),
    ("model", "Models"),
    ("schema", "Schema descriptions"),
    ("workflow", "Workflows"),
    ("gate", "Gates"),
    ("role", "Roles"),
];

fn kind_title(kind: &str) -> String {
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or_else(|| kind.to_string(), |(_, t)| t.to_string())
}

/// "12 lines", "1 line".
fn lines(text: &str) -> String {
    fmt::count(text.lines().count(), "line", "lines")
}

/// "3 tools", "1 tool": every kind's title is a plural in -s.
fn kind_count(kind: &str, n: usize) -> String {
    let title = kind_title(kind).to_lowercase();
    let noun = if n == 1 {
        title.strip_suffix('s').unwrap_or(&title)
    } else {
        &title
    };
    format!("{} {noun}", fmt::n(n))
}

fn kind_rank(kind: &str) -> usize {
    KINDS
        .iter()
        .position(|(k, _)| *k == kind)
        .unwrap_or(KINDS.len())
}

use crate::store::history::text_fields as text_field;

/// A name as a file name: letters, digits, `-`, `_` and `.` kept (not
/// first), anything else `_`, at most 80 bytes; a name that changed on the
/// way (or that `taken` already holds but for case) gets 10 hex digits of
/// its SHA-256, so two names never share a file.
fn file_stem(name: &str, taken: &mut std::collections::HashSet<String>) -> String {
    use sha2::Digest;
    let mut s: String = name
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || (c == '.' && i > 0) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if s.is_empty() || s != name || taken.contains(&s.to_lowercase()) {
        let tag = &hex::encode(sha2::Sha256::digest(name.as_bytes()))[..10];
        s = format!("{s}~{tag}");
    }
    taken.insert(s.to_lowercase());
    s
}

/// What happened to an item at a release.
#[derive(Debug, Clone)]
enum Event {
    Added(Arc<str>),
    Returned(Arc<str>),
    Removed,
    Changed(Arc<str>, Arc<str>),
}

/// An item on the site: its series, file, events and texts' versions.
struct SiteItem<'a> {
    s: &'a ItemSeries,
    stem: String,
    /// (release index, event), oldest first.
    events: Vec<(usize, Event)>,
    /// The versions of its text: (first release index, last release
    /// index, sha256), oldest first.
    texts: Vec<(usize, usize, String)>,
}

impl SiteItem<'_> {
    fn href(&self, root: &str) -> String {
        format!("{root}i/{}/{}.html", self.s.kind, self.stem)
    }
    fn text_href(&self, root: &str, first_version: &str) -> String {
        format!("{root}i/{}/{}/{first_version}.html", self.s.kind, self.stem)
    }
    fn first(&self) -> usize {
        self.s.values.first().map_or(0, |v| v.0)
    }
    fn last(&self) -> usize {
        self.s.values.last().map_or(0, |v| v.0)
    }
}

fn parse(v: &str) -> Value {
    serde_json::from_str(v).unwrap_or(Value::Null)
}

fn sha_of(kind: &str, v: &str) -> Option<String> {
    let f = text_field(kind)?;
    parse(v).get(f)?.as_str().map(str::to_string)
}

/// An item's events over `n` releases.
fn events(s: &ItemSeries, n: usize) -> Vec<(usize, Event)> {
    let mut out = Vec::new();
    let mut at = s.values.iter().peekable();
    let mut prev: Option<Arc<str>> = None;
    let mut seen = false;
    for i in 0..n {
        match at.peek() {
            Some((j, v)) if *j == i => {
                let v = v.clone();
                at.next();
                match &prev {
                    None if !seen => out.push((i, Event::Added(v.clone()))),
                    None => out.push((i, Event::Returned(v.clone()))),
                    Some(p) if **p != *v => out.push((i, Event::Changed(p.clone(), v.clone()))),
                    Some(_) => {}
                }
                seen = true;
                prev = Some(v);
            }
            _ => {
                if prev.take().is_some() {
                    out.push((i, Event::Removed));
                }
            }
        }
    }
    out
}

/// The versions of an item's text over its releases.
fn text_versions(s: &ItemSeries) -> Vec<(usize, usize, String)> {
    let mut out: Vec<(usize, usize, String)> = Vec::new();
    let mut last_value: Option<&Arc<str>> = None;
    let mut last_sha: Option<String> = None;
    for (i, v) in &s.values {
        let sha = if last_value.is_some_and(|l| Arc::ptr_eq(l, v)) {
            last_sha.clone()
        } else {
            sha_of(&s.kind, v)
        };
        last_value = Some(v);
        last_sha = sha.clone();
        let Some(sha) = sha else { continue };
        match out.last_mut() {
            Some(t) if t.2 == sha => t.1 = *i,
            _ => out.push((*i, *i, sha)),
        }
    }
    out
}

/// The fields of two values that differ: (field, from, to).
fn fields_changed(a: &str, b: &str) -> Vec<(String, Value, Value)> {
    crate::store::history::value_changes(&parse(a), &parse(b))
}

/// A value as a short line.
fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        v => v.to_string(),
    };
    if s.chars().count() > 160 {
        s.chars().take(159).collect::<String>() + "…"
    } else {
        s
    }
}

/// Another platform: its items, version → release index, (kind, name) →
/// item.
type Other<'a> = (
    &'a SiteItems,
    HashMap<&'a str, usize>,
    HashMap<(&'a str, &'a str), &'a ItemSeries>,
);

/// The site's pages.
struct Site<'a> {
    input: &'a SiteInput,
    releases: &'a [Release],
    items: Vec<SiteItem<'a>>,
    /// Per release: (item, event) of what happened there.
    at_release: Vec<Vec<(usize, usize)>>,
    /// Word diffs of text pairs (sha a, sha b).
    diffs: HashMap<(String, String), WordDiff>,
    /// Per other platform: version → release index, (kind, name) → item.
    others: Vec<Other<'a>>,
}

/// Every file of the site for `input`, in a fixed order, with the
/// fingerprints of its groups' inputs. A group whose fingerprint is the one
/// in `prev` and whose files are all still there is not made again.
pub fn site_files(input: &SiteInput, prev: &Previous) -> (Vec<SiteFile>, BTreeMap<String, String>) {
    let site = Site::new(input);
    site.files(prev)
}

/// A fingerprint of what is fed to it.
struct Print(sha2::Sha256);

impl Print {
    fn new() -> Print {
        use sha2::Digest;
        let mut p = Print(sha2::Sha256::new());
        p.add(FORMAT);
        p
    }
    fn add(&mut self, s: &str) {
        use sha2::Digest;
        self.0.update((s.len() as u64).to_le_bytes());
        self.0.update(s.as_bytes());
    }
    fn done(self) -> String {
        use sha2::Digest;
        hex::encode(self.0.finalize())
    }
}

impl<'a> Site<'a> {
    fn new(input: &'a SiteInput) -> Site<'a> {
        let releases = &input.primary.releases;
        let n = releases.len();
        let mut taken: HashMap<&str, std::collections::HashSet<String>> = HashMap::new();
        let items: Vec<SiteItem> = input
            .primary
            .items
            .iter()
            .map(|s| SiteItem {
                s,
                stem: file_stem(&s.name, taken.entry(s.kind.as_str()).or_default()),
                events: Vec::new(),
                texts: Vec::new(),
            })
            .collect();
        let mut items: Vec<SiteItem> = items
            .into_par_iter()
            .map(|mut it| {
                it.events = events(it.s, n);
                if text_field(&it.s.kind).is_some() {
                    it.texts = text_versions(it.s);
                }
                it
            })
            .collect();
        items.sort_by(|a, b| {
            (kind_rank(&a.s.kind), &a.s.name).cmp(&(kind_rank(&b.s.kind), &b.s.name))
        });
        let mut at_release: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (k, it) in items.iter().enumerate() {
            for (e, (i, _)) in it.events.iter().enumerate() {
                at_release[*i].push((k, e));
            }
        }
        let diffs = HashMap::new();
        let others = input
            .others
            .iter()
            .map(|o| {
                let v = o
                    .releases
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (r.version.as_str(), i))
                    .collect();
                let m = o
                    .items
                    .iter()
                    .map(|s| ((s.kind.as_str(), s.name.as_str()), s))
                    .collect();
                (o, v, m)
            })
            .collect();
        Site {
            input,
            releases,
            items,
            at_release,
            diffs,
            others,
        }
    }

    fn version(&self, i: usize) -> &str {
        &self.releases[i].version
    }

    fn release_href(&self, root: &str, i: usize) -> String {
        format!("{root}r/{}.html", self.version(i))
    }

    fn release_link(&self, root: &str, i: usize) -> Inline {
        Inline::new().link_code(self.version(i), self.release_href(root, i))
    }

    /// The end of a run of releases ending at `i`: its version, or "now"
    /// when `i` is the latest release (so that the page of an item still
    /// present stays the same bytes when a new release holds it unchanged).
    fn until(&self, i: usize) -> String {
        if i + 1 == self.releases.len() {
            "now".into()
        } else {
            self.version(i).to_string()
        }
    }

    /// [`Site::until`] as a link to the release, or "now".
    fn until_link(&self, root: &str, i: usize) -> Inline {
        if i + 1 == self.releases.len() {
            Inline::from("now")
        } else {
            self.release_link(root, i)
        }
    }

    /// A page's frame: navigation, search box, style and script.
    fn frame(&self, mut d: Doc, root: &str) -> Doc {
        let mut nav = Inline::new()
            .link("Timeline", format!("{root}index.html"))
            .t(" · ")
            .link("Search", format!("{root}search.html"));
        for (kind, title) in KINDS {
            if self.items.iter().any(|it| it.s.kind == kind) {
                nav = nav.t(" · ").link(title, format!("{root}k/{kind}.html"));
            }
        }
        d.nav = Some(nav);
        d.search = Some(format!("{root}search.html"));
        d.styles = vec![format!("{root}site.css")];
        d.script_files = vec![format!("{root}site.js")];
        if !self.input.made_here {
            d.blocks.insert(
                0,
                Block::Note(Inline::status(
                    Status::Unknown,
                    "From a history store not marked as made on the machine that made this site: what it says is what the store's author recorded.",
                )),
            );
        }
        d.footer = vec![(
            "made by".into(),
            Inline::from(format!(
                "cc-teardown {} (history site), analysis ",
                env!("CARGO_PKG_VERSION")
            ))
            .c(self.input.provenance.analysis_version.clone()),
        )];
        d
    }

    /// What every page shares: the kinds in the navigation, the label.
    fn common_print(&self) -> String {
        let mut kinds: Vec<&str> = self.items.iter().map(|it| it.s.kind.as_str()).collect();
        kinds.dedup();
        format!(
            "{} {} {}",
            kinds.join(","),
            self.input.made_here,
            self.input.provenance.analysis_version
        )
    }

    /// The fingerprint of an item's pages' inputs.
    fn item_print(&self, common: &str, k: usize) -> String {
        let it = &self.items[k];
        let n = self.releases.len();
        let mut p = Print::new();
        p.add(common);
        p.add(&it.s.kind);
        p.add(&it.s.name);
        p.add(&it.stem);
        // What its page shows: its changes, the runs of releases that
        // hold it (one ending at the latest release as "now"), its texts'
        // versions, how many releases it misses, where it was removed.
        for (i, e) in &it.events {
            p.add(self.version(*i));
            match e {
                Event::Added(v) => p.add(&format!("+{v}")),
                Event::Returned(v) => p.add(&format!("^{v}")),
                Event::Removed => p.add("-"),
                Event::Changed(a, b) => p.add(&format!("~{a}{b}")),
            }
        }
        let mut run_start = None;
        let mut prev_i = None;
        for (i, _) in &it.s.values {
            if prev_i.is_none_or(|q: usize| q + 1 != *i) {
                if let (Some(a), Some(b)) = (run_start, prev_i) {
                    p.add(&format!("{}-{}", self.version(a), self.until(b)));
                }
                run_start = Some(*i);
            }
            prev_i = Some(*i);
        }
        if let (Some(a), Some(b)) = (run_start, prev_i) {
            p.add(&format!("{}-{}", self.version(a), self.until(b)));
        }
        for (a, b, sha) in &it.texts {
            p.add(&format!("{} {} {sha}", self.version(*a), self.until(*b)));
        }
        p.add(&(it.last() + 1 - it.first() - it.s.values.len()).to_string());
        p.add(
            self.releases
                .get(it.last() + 1)
                .map_or("", |r| r.version.as_str()),
        );
        p.add(if it.last() + 1 == n { "latest" } else { "" });
        for (o, versions, by) in &self.others {
            p.add(&o.platform);
            for r in self.releases {
                if versions.contains_key(r.version.as_str()) {
                    p.add(&r.version);
                }
            }
            if let Some(s) = by.get(&(it.s.kind.as_str(), it.s.name.as_str())) {
                for (i, v) in &s.values {
                    p.add(&o.releases[*i].version);
                    p.add(v);
                }
            }
        }
        p.done()
    }

    /// The fingerprint of a release's page's inputs.
    fn release_print(&self, common: &str, i: usize) -> String {
        let r = &self.releases[i];
        let mut p = Print::new();
        p.add(common);
        p.add(&serde_json::to_string(r).unwrap_or_default());
        p.add(if i > 0 { self.version(i - 1) } else { "" });
        p.add(self.releases.get(i + 1).map_or("", |r| r.version.as_str()));
        for it in &self.items {
            if it.s.values.binary_search_by_key(&i, |v| v.0).is_ok() {
                p.add(&it.s.kind);
            }
        }
        for &(k, e) in &self.at_release[i] {
            let it = &self.items[k];
            p.add(&it.s.kind);
            p.add(&it.s.name);
            p.add(&it.stem);
            match &it.events[e].1 {
                Event::Added(v) => p.add(&format!("+{v}")),
                Event::Returned(v) => p.add(&format!("^{v}")),
                Event::Removed => p.add("-"),
                Event::Changed(a, b) => p.add(&format!("~{a}{b}")),
            }
        }
        p.done()
    }

    fn files(mut self, prev: &Previous) -> (Vec<SiteFile>, BTreeMap<String, String>) {
        let common = self.common_print();
        let item_paths = |it: &SiteItem| -> Vec<String> {
            let mut v = vec![format!("i/{}/{}.html", it.s.kind, it.stem)];
            for t in &it.texts {
                v.push(format!(
                    "i/{}/{}/{}.html",
                    it.s.kind, it.stem, self.releases[t.0].version
                ));
            }
            v
        };
        let same = |key: &str, print: &str, paths: &[String]| {
            prev.inputs.get(key).map(String::as_str) == Some(print)
                && paths.iter().all(|p| prev.files.contains_key(p))
        };
        let item_prints: Vec<(String, String, bool)> = (0..self.items.len())
            .into_par_iter()
            .map(|k| {
                let it = &self.items[k];
                let key = format!("i/{}/{}", it.s.kind, it.stem);
                let print = self.item_print(&common, k);
                let keep = same(&key, &print, &item_paths(it));
                (key, print, keep)
            })
            .collect();
        let release_prints: Vec<(String, String, bool)> = (0..self.releases.len())
            .into_par_iter()
            .map(|i| {
                let key = format!("r/{}", self.version(i));
                let print = self.release_print(&common, i);
                let keep = same(&key, &print, &[format!("{key}.html")]);
                (key, print, keep)
            })
            .collect();
        // The word diffs the pages made again need, made once each.
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (k, it) in self.items.iter().enumerate() {
            if !item_prints[k].2 {
                for w in it.texts.windows(2) {
                    pairs.push((w[0].2.clone(), w[1].2.clone()));
                }
            }
        }
        for (i, list) in self.at_release.iter().enumerate() {
            if release_prints[i].2 {
                continue;
            }
            for &(k, _) in list {
                let it = &self.items[k];
                if let Some(t) = it.texts.iter().position(|t| t.0 == i)
                    && t > 0
                {
                    pairs.push((it.texts[t - 1].2.clone(), it.texts[t].2.clone()));
                }
            }
        }
        pairs.sort();
        pairs.dedup();
        let texts = &self.input.texts;
        self.diffs = pairs
            .into_par_iter()
            .filter_map(|(a, b)| {
                let d = word_diff(texts.get(&a)?, texts.get(&b)?);
                Some(((a, b), d))
            })
            .collect();
        let this = &self;
        let mut inputs = BTreeMap::new();
        for (key, print, _) in item_prints.iter().chain(&release_prints) {
            inputs.insert(key.clone(), print.clone());
        }
        let kept = |path: String| SiteFile {
            kept: prev.files.get(&path).cloned(),
            path,
            bytes: Vec::new(),
        };
        let mut out: Vec<SiteFile> = Vec::new();
        let page = |path: String, html: String| SiteFile {
            path,
            bytes: html.into_bytes(),
            kept: None,
        };
        out.push(page("index.html".into(), self.index()));
        out.push(page("search.html".into(), self.search_page()));
        out.push(page("search-index.js".into(), self.search_index()));
        out.push(page("site.js".into(), assets::SITE_JS.into()));
        out.push(page("site.css".into(), assets::SITE_CSS.into()));
        let mut kinds: Vec<&str> = self.items.iter().map(|it| it.s.kind.as_str()).collect();
        kinds.dedup();
        for kind in kinds {
            out.extend(self.kind_pages(kind));
        }
        let releases: Vec<SiteFile> = (0..this.releases.len())
            .into_par_iter()
            .map(|i| {
                let path = format!("r/{}.html", this.version(i));
                if release_prints[i].2 {
                    return kept(path);
                }
                page(path, this.release_page(i))
            })
            .collect();
        out.extend(releases);
        let items: Vec<Vec<SiteFile>> = (0..this.items.len())
            .into_par_iter()
            .map(|k| {
                let it = &this.items[k];
                if item_prints[k].2 {
                    return item_paths(it).into_iter().map(kept).collect();
                }
                let mut v = vec![page(
                    format!("i/{}/{}.html", it.s.kind, it.stem),
                    this.item_page(k),
                )];
                for t in 0..it.texts.len() {
                    v.push(page(
                        format!(
                            "i/{}/{}/{}.html",
                            it.s.kind,
                            it.stem,
                            this.version(it.texts[t].0)
                        ),
                        this.text_page(k, t),
                    ));
                }
                v
            })
            .collect();
        out.extend(items.into_iter().flatten());
        (out, inputs)
    }

    /// The index: the timeline page, its versions linking to their pages,
    /// and the lists of items.
    fn index(&self) -> String {
        let link = |v: &str| format!("r/{v}.html");
        let mut d = timeline::doc_linked(
            &self.input.primary.platform,
            &self.input.timeline,
            &self.input.provenance,
            Some(&link),
        );
        let footer = std::mem::take(&mut d.footer);
        let mut counts: BTreeMap<usize, (String, usize)> = BTreeMap::new();
        for it in &self.items {
            counts
                .entry(kind_rank(&it.s.kind))
                .or_insert_with(|| (it.s.kind.clone(), 0))
                .1 += 1;
        }
        let lists: Vec<Inline> = counts
            .values()
            .map(|(kind, n)| {
                Inline::new()
                    .link(kind_title(kind), format!("k/{kind}.html"))
                    .t(format!(": {} ever seen", fmt::n(*n)))
            })
            .collect();
        d.blocks.insert(
            0,
            Block::Section(Section::new(
                "items",
                "Items",
                vec![
                    Block::List {
                        items: lists,
                        limit: None,
                    },
                    Block::Note(Inline::from(
                        "Each item's page has every release that holds it and every change of its value; the search box looks through names and texts.",
                    )),
                ],
            )),
        );
        let mut d = self.frame(d, "");
        // The index alone says when and how the site was made: the other
        // pages stay the same bytes until what they show changes.
        d.footer.extend(footer.into_iter().skip(1));
        d.html()
    }

    fn search_page(&self) -> String {
        let mut d = Doc::new("Search");
        d.push(Block::Note(Inline::from(
            "Type in the box above: item names (any case) and the texts of prompts, tools' descriptions and workflow scripts, as of the last release that holds them. The index ships with the site; nothing is sent anywhere.",
        )));
        let mut d = self.frame(d, "");
        d.script_files = vec!["search-index.js".into(), "site.js".into()];
        d.html()
    }

    /// `search-index.js`: one global, the list of items with their kind,
    /// name, page and last text.
    fn search_index(&self) -> String {
        let entries: Vec<Value> = self
            .items
            .iter()
            .map(|it| {
                let text = it
                    .texts
                    .last()
                    .and_then(|t| self.input.texts.get(&t.2))
                    .map_or("", String::as_str);
                let seen = format!("{} – {}", self.version(it.first()), self.until(it.last()));
                serde_json::json!([it.s.kind, it.s.name, it.href(""), seen, text])
            })
            .collect();
        format!(
            "window.CC_SEARCH={};\n",
            serde_json::to_string(&entries).unwrap_or_else(|_| "[]".into())
        )
    }

    fn kind_pages(&self, kind: &str) -> Vec<SiteFile> {
        let items: Vec<&SiteItem> = self.items.iter().filter(|it| it.s.kind == kind).collect();
        let chunks: Vec<&[&SiteItem]> = items.chunks(PER_LIST_PAGE).collect();
        let name = |p: usize| {
            if p == 0 {
                format!("{kind}.html")
            } else {
                format!("{kind}-{}.html", p + 1)
            }
        };
        let last = self.releases.len().saturating_sub(1);
        chunks
            .iter()
            .enumerate()
            .map(|(p, chunk)| {
                let mut d = Doc::new(format!("{}: {}", kind_title(kind), fmt::n(items.len())));
                let mut lines: Vec<Inline> = Vec::new();
                for it in chunk.iter() {
                    let gone = it.last() != last;
                    let mut l = Inline::new()
                        .link_code(it.s.name.clone(), it.href("../"))
                        .s(
                            Status::Muted,
                            format!(" {} – {}", self.version(it.first()), self.until(it.last())),
                        );
                    if gone {
                        l = l.s(Status::Removed, " (gone)");
                    }
                    lines.push(l);
                }
                if chunks.len() > 1 {
                    let mut pages = Inline::from("Pages: ");
                    for q in 0..chunks.len() {
                        if q > 0 {
                            pages = pages.t(" · ");
                        }
                        pages = if q == p {
                            pages.b((q + 1).to_string())
                        } else {
                            pages.link((q + 1).to_string(), name(q))
                        };
                    }
                    d.push(Block::Note(pages));
                }
                d.push(Block::List {
                    items: lines,
                    limit: None,
                });
                let d = self.frame(d, "../");
                SiteFile {
                    path: format!("k/{}", name(p)),
                    bytes: d.html().into_bytes(),
                    kept: None,
                }
            })
            .collect()
    }

    /// A release's page: with word diffs if it fits, else without them,
    /// else with each list cut (200 items, then 50; the rest are named by
    /// `history changes`, and each item's page has its change).
    fn release_page(&self, i: usize) -> String {
        let mut html = String::new();
        for (compact, cut) in [
            (false, None),
            (true, None),
            (true, Some(200)),
            (true, Some(50)),
        ] {
            html = self.release_doc(i, compact, cut).html();
            if html.len() <= MAX_PAGE {
                break;
            }
        }
        html
    }

    fn release_doc(&self, i: usize, compact: bool, cut: Option<usize>) -> Doc {
        let root = "../";
        let r = &self.releases[i];
        let mut d = Doc::new(
            Inline::from("Claude Code ")
                .c(r.version.clone())
                .t(" (")
                .t(r.platform.clone())
                .t(")"),
        );
        let mut summary: Vec<(&str, Inline)> = Vec::new();
        if let Some(p) = &r.published {
            summary.push((
                "published",
                Inline::from(p.get(..10).unwrap_or(p).to_string()),
            ));
        }
        if i > 0 {
            summary.push(("previous", self.release_link(root, i - 1)));
        }
        if i + 1 < self.releases.len() {
            summary.push(("next", self.release_link(root, i + 1)));
        }
        let mut build = Inline::from(format!(
            "{} modules, {}",
            fmt::num(r.modules.unwrap_or(0)),
            if r.code_split == Some(true) {
                "code-split"
            } else {
                "one bundle"
            }
        ));
        if let Some(b) = r.bundle_bytes {
            build = build.t(format!(", {:.1} MB of JavaScript", b as f64 / 1e6));
        }
        summary.push(("build", build));
        let mut held: BTreeMap<usize, (String, usize)> = BTreeMap::new();
        for it in &self.items {
            if it.s.values.binary_search_by_key(&i, |v| v.0).is_ok() {
                held.entry(kind_rank(&it.s.kind))
                    .or_insert_with(|| (it.s.kind.clone(), 0))
                    .1 += 1;
            }
        }
        let mut holds = Inline::new();
        for (n, (kind, count)) in held.values().enumerate() {
            if n > 0 {
                holds = holds.t(", ");
            }
            holds = holds.link(kind_count(kind, *count), format!("{root}k/{kind}.html"));
        }
        summary.push(("holds", holds));
        d.summary(summary);
        if i == 0 {
            d.push(Block::Note(Inline::from(
                "The oldest release scanned: every item it holds is new here (the lists of items above have them all).",
            )));
            return self.frame(d, root);
        }
        let mut budget = if compact { 0 } else { DIFF_BUDGET };
        let mut by_kind: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for &(k, e) in &self.at_release[i] {
            by_kind
                .entry(kind_rank(&self.items[k].s.kind))
                .or_default()
                .push((k, e));
        }
        if by_kind.is_empty() {
            d.push(Block::Note(Inline::from(format!(
                "Nothing changed since {} in the items the history records.",
                self.version(i - 1)
            ))));
        }
        let mut sections = Vec::new();
        for list in by_kind.values() {
            let kind = &self.items[list[0].0].s.kind;
            let (mut added, mut removed, mut changed) = (Vec::new(), Vec::new(), Vec::new());
            let mut blocks = Vec::new();
            for &(k, e) in list {
                let it = &self.items[k];
                let link = Inline::new().link_code(it.s.name.clone(), it.href(root));
                match &it.events[e].1 {
                    Event::Added(_) => added.push(link),
                    Event::Returned(_) => added.push(link.s(Status::Muted, " (returned)")),
                    Event::Removed => removed.push(link),
                    Event::Changed(a, b) => {
                        let fields = fields_changed(a, b);
                        let mut line = link.t(": ");
                        for (n, (f, from, to)) in fields.iter().enumerate() {
                            if n > 0 {
                                line = line.t("; ");
                            }
                            if f.ends_with("sha256") {
                                line = line.t(format!("{f} changed"));
                            } else {
                                line = line
                                    .t(format!("{f} "))
                                    .s(Status::Removed, short(from))
                                    .t(" → ")
                                    .s(Status::Added, short(to));
                            }
                        }
                        changed.push(line);
                        if let Some(w) = self.text_diff(it, i, &mut budget, root) {
                            blocks.push(w);
                        }
                    }
                }
            }
            let mut out = Vec::new();
            for (what, l, st) in [
                ("added", added, Status::Added),
                ("removed", removed, Status::Removed),
                ("changed", changed, Status::Changed),
            ] {
                if l.is_empty() {
                    continue;
                }
                out.push(Block::Note(Inline::status(
                    st,
                    format!("{} {what}", fmt::n(l.len())),
                )));
                let total = l.len();
                let mut l = l;
                if let Some(cut) = cut {
                    // The folded rest of a long list is what made the page
                    // too big: it is left out, and said where to find it.
                    l.truncate(cut);
                }
                let shown = l.len();
                out.push(Block::List {
                    items: l,
                    limit: Some(200),
                });
                if shown < total {
                    out.push(Block::Note(
                        Inline::from(format!("… and {} more: ", fmt::n(total - shown)))
                            .c(format!("cc-teardown history changes {}", r.version))
                            .t(" lists them all."),
                    ));
                }
            }
            out.extend(blocks);
            sections.push(Block::Section(Section::new(
                kind,
                format!("{} ({})", kind_title(kind), fmt::n(list.len())),
                out,
            )));
        }
        if !sections.is_empty() {
            d.push(Block::Section(Section::new(
                "changes",
                Inline::from("What changed since ").c(self.version(i - 1).to_string()),
                sections,
            )));
        }
        self.frame(d, root)
    }

    /// The word diff of an item's text at release `i` (against its text
    /// before), when it has one and the page's budget allows it.
    fn text_diff(&self, it: &SiteItem, i: usize, budget: &mut usize, root: &str) -> Option<Block> {
        let t = it.texts.iter().position(|t| t.0 == i)?;
        if t == 0 {
            return None;
        }
        let (a, b) = (&it.texts[t - 1], &it.texts[t]);
        let d = self.diffs.get(&(a.2.clone(), b.2.clone()))?;
        let size: usize = d.hunks.iter().map(|h| h.plain().len() + 80).sum();
        let mut caption = Inline::new()
            .link_code(it.s.name.clone(), it.href(root))
            .t(format!(
                ": {} words removed, {} added",
                fmt::n(d.removed),
                fmt::n(d.added)
            ));
        if d.coarse {
            caption = caption.s(Status::Unknown, " (too different to align: shown replaced)");
        }
        if size > *budget {
            caption = caption
                .t(" — ")
                .link("the new text", it.text_href(root, self.version(b.0)));
            return Some(Block::Note(caption));
        }
        *budget -= size;
        let mut hunks = d.hunks.clone();
        if d.more > 0 {
            hunks.push(Inline::status(
                Status::Muted,
                format!(
                    "… and {} more changes (see the texts' pages)",
                    fmt::n(d.more)
                ),
            ));
        }
        Some(Block::Words {
            caption,
            hunks,
            open: false,
        })
    }

    /// An item's page; made again without word diffs when too heavy.
    fn item_page(&self, k: usize) -> String {
        let html = self.item_doc(k, false).html();
        if html.len() <= MAX_PAGE {
            return html;
        }
        self.item_doc(k, true).html()
    }

    fn item_doc(&self, k: usize, compact: bool) -> Doc {
        let root = "../../";
        let it = &self.items[k];
        let n = self.releases.len();
        let mut d = Doc::new(Inline::from(format!("{} ", it.s.kind)).c(it.s.name.clone()));
        let last_value = it.s.values.last().map(|v| parse(&v.1)).unwrap_or_default();
        let mut summary: Vec<(&str, Inline)> = vec![
            (
                "kind",
                Inline::new().link(it.s.kind.clone(), format!("{root}k/{}.html", it.s.kind)),
            ),
            ("first seen", self.release_link(root, it.first())),
            ("last seen", self.until_link(root, it.last())),
        ];
        if it.last() + 1 < n {
            summary.push(("removed in", self.release_link(root, it.last() + 1)));
        } else {
            summary.push((
                "removed in",
                Inline::status(Status::Pass, "not removed: in the latest release scanned"),
            ));
        }
        let held = it.s.values.len();
        let span = it.last() + 1 - it.first();
        let mut inr = if it.last() + 1 == n {
            Inline::from("every release scanned since it was first seen")
        } else {
            Inline::from(format!("{} releases scanned", fmt::n(held)))
        };
        if held < span {
            inr = inr.s(
                Status::Unknown,
                format!(
                    " ({} missing between first and last seen)",
                    fmt::n(span - held)
                ),
            );
        }
        summary.push(("in", inr));
        d.summary(summary);
        if let Some(m) = last_value.as_object() {
            d.section(
                "value",
                Inline::from("Value since ").c(it
                    .events
                    .iter()
                    .rev()
                    .find(|(_, e)| !matches!(e, Event::Removed))
                    .map_or(self.version(it.first()), |(i, _)| self.version(*i))
                    .to_string()),
                vec![Block::Facts(
                    m.iter()
                        .map(|(f, v)| (f.clone(), Inline::code(short(v))))
                        .collect(),
                )],
            );
        }
        // The releases that hold it, as runs.
        let mut runs: Vec<(usize, usize, usize)> = Vec::new();
        for (i, _) in &it.s.values {
            match runs.last_mut() {
                Some(r) if r.1 + 1 == *i => {
                    r.1 = *i;
                    r.2 += 1;
                }
                _ => runs.push((*i, *i, 1)),
            }
        }
        let runs: Vec<Inline> = runs
            .iter()
            .map(|&(a, b, c)| {
                if a == b && b + 1 != n {
                    self.release_link(root, a)
                } else if b + 1 == n {
                    self.release_link(root, a).t(" – now")
                } else {
                    self.release_link(root, a)
                        .t(" – ")
                        .extend(self.release_link(root, b))
                        .s(Status::Muted, format!(" ({} releases)", fmt::n(c)))
                }
            })
            .collect();
        d.section(
            "releases",
            "Releases that hold it",
            vec![Block::List {
                items: runs,
                limit: Some(100),
            }],
        );
        // Every change, newest first.
        let mut budget = if compact { 0 } else { DIFF_BUDGET };
        let mut blocks = Vec::new();
        let at: Vec<usize> = it.events.iter().map(|(i, _)| *i).collect();
        for (n, (i, e)) in it.events.iter().enumerate().rev() {
            let (what, st) = match e {
                Event::Added(_) => ("added", Status::Added),
                Event::Returned(_) => ("returned", Status::Added),
                Event::Removed => ("removed", Status::Removed),
                Event::Changed(..) => ("changed", Status::Changed),
            };
            let mut inner = Vec::new();
            match e {
                Event::Changed(a, b) => {
                    let mut t = Table::new(vec![
                        Column::new("field", Kind::Code),
                        Column::new("from", Kind::Code),
                        Column::new("to", Kind::Code),
                    ]);
                    for (f, from, to) in fields_changed(a, b) {
                        t.row(vec![
                            Inline::code(f),
                            Inline::code(short(&from)),
                            Inline::code(short(&to)),
                        ]);
                    }
                    inner.push(Block::Table(t));
                    if n > 0 {
                        inner.push(Block::Note(Inline::from("Before: ").link(
                            format!("the previous version ({})", self.version(at[n - 1])),
                            format!(
                                "#{}",
                                crate::report::doc::slug(&format!(
                                    "at-{}",
                                    self.version(at[n - 1])
                                ))
                            ),
                        )));
                    }
                    if let Some(tv) = it.texts.iter().position(|t| t.0 == *i) {
                        let mut l = Inline::from("Texts: ").link(
                            "this version",
                            it.text_href(root, self.version(it.texts[tv].0)),
                        );
                        if tv > 0 {
                            l = l.t(" · ").link(
                                "the previous text",
                                it.text_href(root, self.version(it.texts[tv - 1].0)),
                            );
                        }
                        inner.push(Block::Note(l));
                    }
                    if let Some(w) = self.text_diff(it, *i, &mut budget, root) {
                        inner.push(w);
                    }
                }
                Event::Added(v) | Event::Returned(v) => {
                    if let Some(tv) = it.texts.iter().position(|t| t.0 == *i) {
                        inner.push(Block::Note(Inline::from("Text: ").link(
                            "this version",
                            it.text_href(root, self.version(it.texts[tv].0)),
                        )));
                    } else if let Some(m) = parse(v).as_object() {
                        inner.push(Block::Facts(
                            m.iter()
                                .map(|(f, v)| (f.clone(), Inline::code(short(v))))
                                .collect(),
                        ));
                    }
                }
                Event::Removed => {}
            }
            let mut s = Section::new(
                &format!("at-{}", self.version(*i)),
                self.release_link(root, *i).t(": ").s(st, what),
                inner,
            );
            if blocks.len() >= 12 {
                s = s.closed();
            }
            blocks.push(Block::Section(s));
        }
        d.section("changes", "Changes, newest first", blocks);
        if !it.texts.is_empty() {
            let mut t = Table::new(vec![
                Column::new("text", Kind::Text),
                Column::new("releases", Kind::Text),
                Column::new("bytes", Kind::Number),
            ]);
            for (a, b, sha) in it.texts.iter().rev() {
                let bytes = self.input.texts.get(sha).map_or(0, String::len);
                t.row(vec![
                    Inline::new().link(
                        format!("as of {}", self.version(*a)),
                        it.text_href(root, self.version(*a)),
                    ),
                    Inline::from(if a == b && b + 1 != n {
                        self.version(*a).to_string()
                    } else {
                        format!("{} – {}", self.version(*a), self.until(*b))
                    }),
                    Inline::from(fmt::n(bytes)),
                ]);
            }
            d.section(
                "texts",
                "Versions of its text",
                vec![Block::Table(t.limit(200))],
            );
        }
        if let Some(text) = it.texts.last().and_then(|t| self.input.texts.get(&t.2))
            && text.len() <= MAX_ITEM_TEXT
            && !compact
        {
            d.push(Block::Code {
                lang: if it.s.kind == "workflow" {
                    "js"
                } else {
                    "prose"
                },
                caption: Some(format!(
                    "its text since {} ({})",
                    it.texts.last().map_or("", |t| self.version(t.0)),
                    lines(text)
                )),
                text: text.clone(),
                max_lines: None,
            });
        }
        if let Some(p) = self.platforms(it) {
            d.push(p);
        }
        self.frame(d, root)
    }

    /// Where the store's other platforms differ for an item.
    fn platforms(&self, it: &SiteItem) -> Option<Block> {
        if self.others.is_empty() {
            return None;
        }
        let mut t = Table::new(vec![
            Column::new("platform", Kind::Code),
            Column::new("first seen", Kind::Code),
            Column::new("last seen", Kind::Code),
            Column::new("releases", Kind::Number),
            Column::new("differs from this platform in", Kind::Text),
        ]);
        let key = (it.s.kind.as_str(), it.s.name.as_str());
        for (o, versions, by) in &self.others {
            let Some(s) = by.get(&key) else {
                t.row(vec![
                    Inline::code(o.platform.clone()),
                    Inline::from("never"),
                    Inline::new(),
                    Inline::from("0"),
                    Inline::from("—"),
                ]);
                continue;
            };
            let v = |i: usize| o.releases[i].version.clone();
            let mut differ = Vec::new();
            for (i, r) in self.releases.iter().enumerate() {
                let Some(&j) = versions.get(r.version.as_str()) else {
                    continue;
                };
                let here =
                    it.s.values
                        .binary_search_by_key(&i, |x| x.0)
                        .ok()
                        .map(|x| &it.s.values[x].1);
                let there = s
                    .values
                    .binary_search_by_key(&j, |x| x.0)
                    .ok()
                    .map(|x| &s.values[x].1);
                if here != there {
                    differ.push(r.version.clone());
                }
            }
            let differ = if differ.is_empty() {
                Inline::status(Status::Pass, "the same in every release both hold")
            } else {
                Inline::from(super::ellipsis(&differ, 12))
            };
            t.row(vec![
                Inline::code(o.platform.clone()),
                Inline::code(s.values.first().map(|x| v(x.0)).unwrap_or_default()),
                Inline::code(s.values.last().map(|x| v(x.0)).unwrap_or_default()),
                Inline::from(fmt::n(s.values.len())),
                differ,
            ]);
        }
        Some(Block::Section(Section::new(
            "platforms",
            "Other platforms",
            vec![Block::Table(t)],
        )))
    }

    /// One version of an item's text, whole (cut past [`MAX_TEXT`]).
    fn text_page(&self, k: usize, t: usize) -> String {
        let root = "../../../";
        let it = &self.items[k];
        let (a, b, sha) = &it.texts[t];
        let mut d = Doc::new(
            Inline::from(format!("{} ", it.s.kind))
                .c(it.s.name.clone())
                .t(" as of ")
                .c(self.version(*a).to_string()),
        );
        let text = self.input.texts.get(sha).map_or("", String::as_str);
        let mut summary: Vec<(&str, Inline)> = vec![
            (
                "item",
                Inline::new().link_code(it.s.name.clone(), it.href(root)),
            ),
            (
                "releases",
                if a == b && b + 1 != self.releases.len() {
                    self.release_link(root, *a)
                } else {
                    self.release_link(root, *a)
                        .t(" – ")
                        .extend(self.until_link(root, *b))
                },
            ),
            ("bytes", Inline::from(fmt::n(text.len()))),
            ("sha256", Inline::code(sha.clone())),
        ];
        if t > 0 {
            summary.push((
                "previous version",
                Inline::new().link(
                    format!("as of {}", self.version(it.texts[t - 1].0)),
                    it.text_href(root, self.version(it.texts[t - 1].0)),
                ),
            ));
        }
        if t + 1 < it.texts.len() {
            summary.push((
                "next version",
                Inline::new().link(
                    format!("as of {}", self.version(it.texts[t + 1].0)),
                    it.text_href(root, self.version(it.texts[t + 1].0)),
                ),
            ));
        }
        d.summary(summary);
        let mut shown = text;
        if shown.len() > MAX_TEXT {
            let mut end = MAX_TEXT;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            shown = &shown[..end];
            d.push(Block::Note(Inline::status(
                Status::Unknown,
                format!(
                    "The text is {} long: the first {} are shown.",
                    fmt::bytes(text.len() as u64),
                    fmt::bytes(end as u64)
                ),
            )));
        }
        d.push(Block::Code {
            lang: if it.s.kind == "workflow" {
                "js"
            } else {
                "prose"
            },
            caption: Some(format!("the text ({})", lines(text))),
            text: shown.to_string(),
            max_lines: None,
        });
        self.frame(d, root).html()
    }
}

#[cfg(test)]
mod tests;
