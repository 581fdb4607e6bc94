//! `history site`: the site of a short real range (two single bundles,
//! then the first code-split build), opened from `file://` in headless
//! Chromium: the index's charts, links from the index to a release, to an
//! item, to that item's previous version, the search over names and
//! texts, no request but for the site's own files, no page over 300 KB;
//! and a second run after one more release writes only what changed.
use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const PLATFORM: &str = "darwin-arm64";
const MAX_PAGE: u64 = 300 << 10;

fn run(store: &Path, args: &[&str]) -> (Value, i32) {
    json_and_code(bin().args(args).args(["--quiet", "--store"]).arg(store))
}

/// The DOM of `url` after load in headless Chromium (its own profile).
fn dom(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = command_of(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", url])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `href`s of the links in `html`, in order.
fn hrefs(html: &str) -> Vec<String> {
    html.split("<a href=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].replace("&amp;", "&"))
        .collect()
}

/// `href` from the page at `page`, as a path (its `#…` dropped).
fn follow(page: &Path, href: &str) -> PathBuf {
    let href = href.split('#').next().unwrap();
    if href.is_empty() {
        return page.to_path_buf();
    }
    let mut p = page.parent().unwrap().to_path_buf();
    for part in href.split('/') {
        match part {
            ".." => {
                p.pop();
            }
            "." | "" => {}
            x => p.push(x),
        }
    }
    assert!(p.is_file(), "{href} from {}: no page", page.display());
    p
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Every file below `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn site_of_a_real_range_browses_searches_and_updates_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("facts.sqlite");
    let site = dir.path().join("site");
    let s = site.to_str().unwrap();
    let scan = |range: &str| {
        let (_, code) = run(
            &store,
            &["history", "scan", range, "--platform", PLATFORM, "--keep"],
        );
        assert_eq!(code, 0, "scan {range}");
    };
    scan("2.1.240,2.1.241");
    let (first, code) = run(&store, &["history", "site", s]);
    assert_eq!(code, 0, "{first}");
    assert_eq!(first["written"], first["files"], "{first}");
    assert_eq!(first["kept"], 0);

    // One more release: only what it touches is written again.
    scan("2.1.242");
    let started = std::time::Instant::now();
    let (second, code) = run(&store, &["history", "site", s]);
    assert_eq!(code, 0, "{second}");
    let (written, kept) = (
        second["written"].as_u64().unwrap(),
        second["kept"].as_u64().unwrap(),
    );
    assert!(kept > written * 2, "mostly kept: {second}");
    assert_eq!(written + kept, second["files"].as_u64().unwrap());
    assert!(site.join("r/2.1.242.html").is_file());
    eprintln!("incremental site: {second} in {:?}", started.elapsed());
    // And a third run with nothing new writes only the dated index.
    let (third, _) = run(&store, &["history", "site", s]);
    assert!(third["written"].as_u64().unwrap() <= 1, "{third}");

    // No page over 300 KB.
    for f in files(&site) {
        if f.extension().is_some_and(|e| e == "html") {
            let n = std::fs::metadata(&f).unwrap().len();
            assert!(n <= MAX_PAGE, "{}: {n} bytes", f.display());
        }
    }

    // The index shows the charts and links to the releases' pages.
    let index = site.join("index.html");
    let html = dom(&url(&index));
    assert!(html.matches("<svg").count() >= 5, "charts");
    assert!(html.contains("script-src 'self'"));
    let release = hrefs(&html)
        .into_iter()
        .find(|h| h == "r/2.1.242.html")
        .expect("the index links to 2.1.242");
    // The release page links to the items that changed; one with a text
    // that changed if any (its word diff), else any changed item.
    let release = follow(&index, &release);
    let html = dom(&url(&release));
    assert!(html.contains("What changed since"), "{html}");
    let items: Vec<String> = hrefs(&html)
        .into_iter()
        .filter(|h| h.starts_with("../i/"))
        .collect();
    assert!(!items.is_empty());
    let changed = html
        .find("<details class=\"words\"><summary><a href=\"")
        .map(|at| hrefs(&html[at..])[0].clone());
    let mut previous = None;
    for h in changed.iter().chain(items.iter()) {
        let item = follow(&release, h);
        let page = dom(&url(&item));
        let links: Vec<(String, &str)> = hrefs(&page)
            .into_iter()
            .zip(page.split("<a href=\"").skip(1))
            .map(|(h, s)| (h, &s[s.find('>').unwrap() + 1..]))
            .collect();
        // The previous version of its text (a page of its own), else the
        // previous version of its value (an anchor on its page).
        if let Some(p) = ["the previous text", "the previous version"]
            .iter()
            .find_map(|t| links.iter().find(|(_, s)| s.starts_with(t)))
            .map(|(h, _)| h.clone())
        {
            previous = Some((item, p));
            break;
        }
    }
    let (item, prev) = previous.expect("an item changed in 2.1.242 links to its previous version");
    let before = follow(&item, &prev);
    let html = dom(&url(&before));
    if let Some(anchor) = prev.split('#').nth(1) {
        assert!(html.contains(&format!("id=\"{anchor}\"")), "{prev}");
    }
    assert!(
        html.contains("2.1.240") || html.contains("2.1.241"),
        "the previous version is of an earlier release: {}",
        before.display()
    );

    // Search: a flag's name and a phrase from a prompt, typed into the box
    // by a driver script (a file of the site, as the page's policy allows),
    // which also lists every resource the page loaded.
    let index_js = std::fs::read_to_string(site.join("search-index.js")).unwrap();
    let entries: Value = serde_json::from_str(
        index_js
            .trim_end()
            .strip_prefix("window.CC_SEARCH=")
            .unwrap()
            .strip_suffix(';')
            .unwrap(),
    )
    .unwrap();
    let entries = entries.as_array().unwrap();
    let flag = entries
        .iter()
        .find(|e| e[0] == "flag" && e[1].as_str().unwrap().starts_with("tengu_"))
        .unwrap();
    let prompt = entries
        .iter()
        .filter(|e| e[0] == "prompt")
        .find(|e| e[4].as_str().unwrap().split_whitespace().count() > 40)
        .unwrap();
    let words: Vec<&str> = prompt[4].as_str().unwrap().split_whitespace().collect();
    let phrase = words[20..26].join(" ");
    std::fs::write(
        site.join("test-driver.js"),
        "var b=document.getElementById('q');b.value=decodeURIComponent(location.hash.slice(7));\
         b.dispatchEvent(new Event('input'));b.form.dispatchEvent(new Event('submit',{cancelable:true}));\
         var hits=Array.prototype.map.call(document.querySelectorAll('#results a'),function(a){return a.getAttribute('href');});\
         document.body.setAttribute('data-hits',hits.join(' '));\
         var res=performance.getEntriesByType('resource').map(function(r){return r.name;});\
         document.body.setAttribute('data-resources',res.join(' '));",
    )
    .unwrap();
    let search = std::fs::read_to_string(site.join("search.html")).unwrap();
    let driven = site.join("search-test.html");
    std::fs::write(
        &driven,
        search.replace("</body>", "<script src=\"test-driver.js\"></script></body>"),
    )
    .unwrap();
    for (needle, want) in [
        (flag[1].as_str().unwrap(), flag[2].as_str().unwrap()),
        (phrase.as_str(), prompt[2].as_str().unwrap()),
    ] {
        let mut enc = String::new();
        for b in needle.bytes() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                enc.push(b as char);
            } else {
                enc.push_str(&format!("%{b:02X}"));
            }
        }
        let html = dom(&format!("{}#drive={enc}", url(&driven)));
        let hits = html
            .split("data-hits=\"")
            .nth(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .unwrap_or_else(|| panic!("the driver ran: {html}"));
        assert!(
            hits.split(' ').any(|h| h == want),
            "{needle:?} lists {want}: {hits}"
        );
        let res = html.split("data-resources=\"").nth(1).unwrap();
        let res = &res[..res.find('"').unwrap()];
        for r in res.split(' ').filter(|r| !r.is_empty()) {
            assert!(
                r.starts_with(&format!("file://{}/", site.display())),
                "a request outside the site: {r}"
            );
        }
        // (Chromium lists no resource loaded from file://, so the list is
        // empty on a site that asks for nothing else: the hits above show
        // that the index was loaded.)
    }
}
