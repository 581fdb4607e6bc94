//! The human renderings of the document model (src/report/doc/):
//! snapshots of every view in the three renderers on our own fixtures,
//! terminal width on real builds, and the HTML pages of a real report and
//! a real diff rendered by headless Chromium.

use crate::common::*;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// Run from the repository with relative paths, a fixed date and a fixed
/// width, so that the output, provenance included, is the same anywhere.
pub(crate) fn run(args: &[&str]) -> String {
    let out = bin()
        .current_dir(MANIFEST)
        .args(args)
        .args(["--quiet", "--color", "never"])
        .env("SOURCE_DATE_EPOCH", "1796085660")
        .env("COLUMNS", "100")
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap();
    succeeded(args, &out);
    String::from_utf8(out.stdout)
        .unwrap()
        // The analysis version moves with the analysis code; snapshots
        // should not.
        .replace(
            cc_teardown::analysis::analysed::ANALYSIS_VERSION,
            "[analysis]",
        )
}

pub(crate) const CONFIG: &str = "fixtures/reports/claude.json";
pub(crate) const SINGLE: &str = "fixtures/js/single.js";

#[test]
fn report_snapshots() {
    for (format, name) in [
        ("md", "report.md"),
        ("html", "report.html"),
        ("text", "report.txt"),
    ] {
        let out = run(&["report", SINGLE, "--format", format, "--config", CONFIG]);
        crate::views::assert_no_bad_plural(name, &out);
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn diff_snapshots() {
    let (a, b) = ("fixtures/js/diff/a.js", "fixtures/js/diff/b.js");
    for (format, name) in [
        ("md", "diff.md"),
        ("html", "diff.html"),
        ("human", "diff.txt"),
    ] {
        let out = run(&["diff", a, b, "--format", format]);
        crate::views::assert_no_bad_plural(name, &out);
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn table_view_snapshots() {
    for (cmd, name) in [
        ("flags", "flags.txt"),
        ("locate", "locate.txt"),
        ("ls", "ls.txt"),
    ] {
        let out = run(&[cmd, SINGLE]);
        for l in out.lines() {
            assert!(l.chars().count() <= 100, "{cmd}: {l}");
        }
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn colour_follows_no_color_and_clicolor_force() {
    let go = |env: &[(&str, &str)], extra: &[&str]| {
        let mut c = bin();
        c.args(["diff", "fixtures/js/diff/a.js", "fixtures/js/diff/b.js"])
            .args(extra)
            .current_dir(MANIFEST);
        c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            c.env(k, v);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    assert!(!go(&[], &[]).contains('\x1b'), "a pipe gets no colour");
    assert!(go(&[("CLICOLOR_FORCE", "1")], &[]).contains("\x1b["));
    assert!(
        !go(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], &[]).contains('\x1b'),
        "NO_COLOR wins over CLICOLOR_FORCE under auto"
    );
    assert!(go(&[("NO_COLOR", "1")], &["--color", "always"]).contains("\x1b["));
    // grep's colour is the global option's: NO_COLOR turns it off.
    let mut c = bin();
    c.current_dir(MANIFEST)
        .args(["grep", SINGLE, "tengu_fixture", "--color", "auto"])
        .env("NO_COLOR", "1")
        .env("CLICOLOR_FORCE", "1");
    assert!(
        !String::from_utf8(c.output().unwrap().stdout)
            .unwrap()
            .contains('\x1b')
    );
}

#[test]
fn completions_man_and_version() {
    for shell in ["bash", "zsh", "fish"] {
        let out = bin().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let s = String::from_utf8(out.stdout).unwrap();
        assert!(s.contains("cc-teardown") && s.contains("report"), "{shell}");
    }
    let out = bin().arg("man").output().unwrap();
    let man = String::from_utf8(out.stdout).unwrap();
    assert!(
        man.starts_with(".ie") || man.contains(".TH cc-teardown 1"),
        "{man}"
    );
    assert!(man.contains("completions"));
    let out = bin().arg("--version").output().unwrap();
    let v = String::from_utf8(out.stdout).unwrap();
    assert!(
        v.contains(cc_teardown::analysis::analysed::ANALYSIS_VERSION),
        "{v}"
    );
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn terminal_output_of_real_builds_fits_columns() {
    let a = "npm:2.1.220/darwin-arm64";
    let b = "npm:2.1.260/darwin-arm64";
    fetch("2.1.220", "darwin-arm64");
    fetch("2.1.260", "darwin-arm64");
    let cases: Vec<Vec<&str>> = vec![
        vec!["flags", a],
        vec!["flags", a, "--sites", "--grep", "review"],
        vec!["locate", a],
        vec!["ls", b],
        vec!["diff", a, b],
    ];
    for args in cases {
        let out = bin()
            .args(&args)
            .args(["--quiet"])
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.lines().count() > 5, "{args:?}: {text}");
        for l in text.lines() {
            assert!(
                unicode_columns(l) <= 100,
                "{args:?}: a line of {} columns: {l}",
                unicode_columns(l)
            );
        }
    }
}

/// Display columns: every character here is one column wide except the
/// East Asian wide ones, which the builds' texts may hold.
fn unicode_columns(s: &str) -> usize {
    s.chars()
        .map(|c| match c as u32 {
            0x1100..=0x115f
            | 0x2e80..=0xa4cf
            | 0xac00..=0xd7a3
            | 0xf900..=0xfaff
            | 0xfe30..=0xfe4f
            | 0xff00..=0xff60
            | 0xffe0..=0xffe6
            | 0x1f300..=0x1faff
            | 0x20000..=0x3fffd => 2,
            _ => 1,
        })
        .sum()
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn markdown_diff_of_real_builds_is_publishable() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("d.md");
    let out = bin()
        .args([
            "diff",
            "npm:2.1.220/darwin-arm64",
            "npm:2.1.260/darwin-arm64",
            "--format",
            "md",
            "-o",
            md.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.len() <= 200_000, "{} bytes", text.len());
    assert!(
        text.lines().all(|l| l.chars().count() <= 260),
        "long lines wrap or are cut"
    );
    assert!(
        text.contains("| bundle digest |"),
        "identity has the digest"
    );
    assert!(
        text.contains("and 561 more") || text.contains("… and"),
        "capped"
    );
}

/// What every page must be: self-contained, the summary first, pictures
/// drawn.
pub(crate) fn check_page(html: &str, dom: &str, shot_bytes: u64, figures: usize) {
    assert!(
        html.contains("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"),
        "a policy that forbids every request"
    );
    // In the dumped DOM a `<` starts a real tag (text has `&lt;`), so
    // this finds attributes, not a diff line that quotes one.
    let re =
        regex::Regex::new(r#"(?i)<[a-z][^<>]*\s(src|href)\s*=\s*["']?\s*(https?:|//)"#).unwrap();
    assert!(!re.is_match(dom), "no resource or link leaves the page");
    assert!(dom.contains("<table"), "the page rendered");
    // The summary box comes right after the title, before any section or
    // the contents: in the first screen of the screenshot.
    let summary = dom.find("id=\"summary\"").expect("summary box");
    let first_section = dom.find("<section").unwrap();
    assert!(summary < first_section && summary < dom.find("id=\"contents\"").unwrap());
    let body = dom.find("<body").unwrap();
    let title_end = dom.find("</h1>").unwrap();
    assert!(
        dom[body..title_end].matches("<h1").count() == 1
            && dom[title_end + 5..summary].trim() == "<div class=\"box\"",
        "only the title before the summary: {}",
        &dom[body..summary]
    );
    assert!(
        shot_bytes > 20_000,
        "a screenshot with content: {shot_bytes} bytes"
    );
    let svgs: Vec<&str> = dom.split("<svg").skip(1).collect();
    assert!(svgs.len() >= figures, "{} figures", svgs.len());
    for s in &svgs {
        let s = &s[..s.find("</svg>").unwrap()];
        assert!(
            s.contains("<rect") || s.contains("<circle"),
            "a figure with shapes"
        );
    }
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn html_report_of_2_1_220_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("claude.json");
    std::fs::write(&cfg, r#"{"cachedGrowthBookFeatures": {"tengu_workflows_enabled": true, "tengu_review_workflow_routing": false}}"#).unwrap();
    let page = dir.path().join("report.html");
    let out = bin()
        .args([
            "report",
            "npm:2.1.220/darwin-arm64",
            "--format",
            "html",
            "--config",
            cfg.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let (dom, shot) = render(&page, &dir.path().join("report.png"));
    // Pipelines of both workflows, the chains of both gates.
    check_page(&html, &dom, shot, 4);
    let summary = &dom[dom.find("id=\"summary\"").unwrap()..dom.find("id=\"contents\"").unwrap()];
    for fact in [
        "d60e0e81efcc86861d9a7094b027b2b7b7cbd99469eebbcd6a5b707030211120",
        // The bundle digest, the platform and the container.
        "d596c5c8272e706223590c1a073daace48aef77de59cbab1bdfdbef5f74b5956",
        "darwin-arm64",
        "macho arm64, single bundle",
        "code-review",
        "blocked by tengu_review_workflow_routing = false",
    ] {
        assert!(summary.contains(fact), "{fact} in the summary box");
    }
    assert!(
        summary.contains("class=\"s-block\""),
        "the verdict in colour"
    );
    // The hidden workflow with its level table.
    let wf = &dom[dom.find("id=\"workflow-code-review\"").unwrap()..];
    assert!(wf.contains("yes — registered but not listed"));
    for row in [
        ["high", "3", "1", "48", "none", "10"],
        ["xhigh", "5", "1", "80", "8", "15"],
    ] {
        let cells: String = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("<td class=\"k-text\">{c}</td>")
                } else {
                    format!("<td class=\"k-num\">{c}</td>")
                }
            })
            .collect();
        assert!(wf.contains(&cells), "level row {row:?}");
    }
    // Readable options, never JSON; no absolute cache path.
    assert!(dom.contains("computed by <code>BX_</code> reading <code>tengu_sorrel_avocet</code>"));
    assert!(!dom.contains("{\"kind\":"));
    let cache = sandbox_home().join(".cache");
    assert!(
        !dom.contains(cache.to_str().unwrap()),
        "paths are relative to home"
    );
    assert!(dom.contains("All 1,746 flags"), "the full flag table");
    // The routing gate's chain: conditions judged at run time, then the
    // flag that blocks.
    let gate = &dom[dom.find("id=\"review-routing-gate\"").unwrap()..];
    let gate = &gate[..gate.find("</section>").unwrap()];
    assert!(gate.contains(">at run time</text>") && gate.contains(">blocks</text>"));
    // The pipeline of code-review: agents per phase at each level, as
    // `simulate` counts them, for all five phases.
    let cells = figure_cells(wf);
    assert_eq!(cells.len(), 15, "3 levels × 5 phases: {cells:?}");
    check_cells_against_traces(&cells, &["high", "xhigh", "max"], |level| {
        let out = bin()
            .args([
                "simulate",
                "npm:2.1.220/darwin-arm64",
                "--workflow",
                "code-review",
                "--args",
                level,
                "--json",
                "--quiet",
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    });
    // Sweep runs at xhigh and max only, as the level table says.
    assert!(cells.contains(&("high".into(), "Sweep".into(), None)));
    assert!(cells.contains(&("xhigh".into(), "Sweep".into(), Some(1))));
    assert!(summary.contains("high 13, xhigh 20, max 20"), "{summary}");
}

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn html_diff_of_2_1_220_and_2_1_260_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("diff.html");
    let out = bin()
        .args([
            "diff",
            "npm:2.1.220/darwin-arm64",
            "npm:2.1.260/darwin-arm64",
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.len() < 3_000_000, "{} bytes", html.len());
    let (dom, shot) = render(&page, &dir.path().join("diff.png"));
    check_page(&html, &dom, shot, 1);
    let summary = &dom[dom.find("id=\"summary\"").unwrap()..dom.find("id=\"contents\"").unwrap()];
    assert!(
        summary.contains("removed code-review (hidden)"),
        "{summary}"
    );
    assert!(summary.contains("removed review-routing-gate"));
    for area in [
        "identity",
        "modules",
        "workflows",
        "flags",
        "gates",
        "roles",
        "functions",
        "texts",
    ] {
        assert!(dom.contains(&format!("<section id=\"{area}\"")), "{area}");
    }
    assert!(
        dom.contains("<details class=\"more\"><summary>and "),
        "capped lists"
    );
    assert!(dom.contains("class=\"ln d-add\""), "coloured diffs");
    assert!(
        dom.contains("class=\"j-kw\""),
        "JavaScript coloured in the diffs"
    );
    assert!(dom.contains("bundle digest"));
}

/// Agents per stage of a `simulate --json` trace, by stage title.
pub(crate) fn trace_counts(json: &str) -> std::collections::BTreeMap<String, usize> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["ok"], true, "the run completed: {}", v["status"]);
    v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["title"].as_str().unwrap().to_string(),
                p["agents"].as_array().unwrap().len(),
            )
        })
        .collect()
}

/// The measured cells of a page's pipeline figures: (level, phase, agents),
/// agents None where the figure says the run never entered the phase.
pub(crate) fn figure_cells(html: &str) -> Vec<(String, String, Option<usize>)> {
    regex::Regex::new(r#"data-level="([^"]*)" data-phase="([^"]*)"(?: data-agents="([0-9]+)")?"#)
        .unwrap()
        .captures_iter(html)
        .map(|c| {
            (
                c[1].to_string(),
                c[2].to_string(),
                c.get(3).map(|n| n.as_str().parse().unwrap()),
            )
        })
        .collect()
}

/// Every measured cell of the figure is what `simulate` counts for that
/// level and phase; `simulate` is run with `run_json(level)`.
pub(crate) fn check_cells_against_traces(
    cells: &[(String, String, Option<usize>)],
    levels: &[&str],
    run_json: impl Fn(&str) -> String,
) {
    for level in levels {
        let counts = trace_counts(&run_json(level));
        let row: Vec<_> = cells.iter().filter(|c| c.0 == *level).collect();
        assert!(!row.is_empty(), "a measured row for {level}");
        for (_, phase, n) in row {
            assert_eq!(
                counts.get(phase.as_str()).copied(),
                *n,
                "{level} / {phase}: the figure says {n:?}, the trace {counts:?}"
            );
        }
    }
}

/// The fixture with a script that calls agents: one finder per angle of
/// the level plus the cleanup one (3 at high, 4 at max), then one to
/// synthesize.
fn agents_fixture(dir: &std::path::Path) -> std::path::PathBuf {
    let fixture = std::fs::read_to_string(format!("{MANIFEST}/{SINGLE}")).unwrap();
    assert!(fixture.contains("log(escaped)\n`"));
    let path = dir.join("agents.js");
    let body = "await parallel(FINDERS.map(f => () => agent(\"find \" + f.kind, { label: f.kind, phase: \"Find\" })))\n\
                phase(\"Synthesize\")\nawait agent(\"rank\", { label: \"synthesize\" })";
    std::fs::write(
        &path,
        fixture.replace("log(escaped)\n`", &format!("log(escaped)\n{body}\n`")),
    )
    .unwrap();
    path
}

#[test]
fn report_pipeline_holds_the_simulated_agents_per_phase() {
    let dir = tempfile::tempdir().unwrap();
    let path = agents_fixture(dir.path());
    let file = path.to_str().unwrap();
    let html = run(&["report", file, "--format", "html", "--config", CONFIG]);
    let cells = figure_cells(&html);
    check_cells_against_traces(&cells, &["high", "max"], |level| {
        run(&[
            "simulate",
            file,
            "--workflow",
            "code-review",
            "--args",
            level,
            "--json",
        ])
    });
    for (level, finders) in [("high", 3), ("max", 4)] {
        for (phase, n) in [("Scope", 0), ("Find", finders), ("Synthesize", 1)] {
            assert!(
                cells.contains(&(level.into(), phase.into(), Some(n))),
                "{level} {phase} {n}: {cells:?}"
            );
        }
    }
    assert!(html.contains("measured: one simulated run per level"));
    assert!(html.contains("from the level table"));
    assert!(
        html.contains("high 4, max 5 agents per run"),
        "the summary line"
    );
    // The JSON report carries the same runs.
    let json: serde_json::Value =
        serde_json::from_str(&run(&["report", file, "--json", "--config", CONFIG])).unwrap();
    assert_eq!(json["simulation"][0]["workflow"], "code-review");
    let runs = json["simulation"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["completed"] == true), "{runs:?}");
    assert_eq!(runs[1]["agents"], 5);
    // Skipped on request: the level table's finders alone, and a note.
    let html = run(&[
        "report",
        SINGLE,
        "--format",
        "html",
        "--config",
        CONFIG,
        "--no-simulate",
    ]);
    assert!(figure_cells(&html).is_empty());
    assert!(html.contains("Not simulated (--no-simulate)"));
    let json: serde_json::Value = serde_json::from_str(&run(&[
        "report",
        SINGLE,
        "--json",
        "--config",
        CONFIG,
        "--no-simulate",
    ]))
    .unwrap();
    assert!(json["simulation"].is_null());
}

#[test]
fn simulate_page_draws_agents_per_stage() {
    let dir = tempfile::tempdir().unwrap();
    let path = agents_fixture(dir.path());
    let args = [
        "simulate",
        path.to_str().unwrap(),
        "--workflow",
        "code-review",
        "--args",
        "max",
    ];
    let html = run(&[&args[..], &["--format", "html"]].concat());
    let bars: std::collections::BTreeMap<String, usize> =
        regex::Regex::new(r#"data-label="([^"]*)" data-value="([0-9]+)""#)
            .unwrap()
            .captures_iter(&html)
            .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
            .collect();
    let counts = trace_counts(&run(&[&args[..], &["--json"]].concat()));
    assert_eq!(counts.get("Find"), Some(&4), "{counts:?}");
    assert_eq!(bars, counts, "one bar per stage, of its agents");
    assert!(html.contains("<figcaption>Agents per stage</figcaption>"));
    // The terminal and Markdown have the stage table; the picture is the
    // page's alone.
    let text = run(&[&args[..], &["--format", "text"]].concat());
    assert!(!text.contains("Agents per stage"));
}

/// Long human output on a terminal goes through `$PAGER` with `LESS=FRX`
/// (as git does); `--no-pager` and a pipe print directly. The terminal is
/// a pseudo-terminal made by util-linux `script`.
#[test]
fn long_output_on_a_terminal_is_paged() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to make a terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pager = dir.path().join("pager.sh");
    std::fs::write(
        &pager,
        "#!/bin/sh\necho \"$LESS\" > \"$1.less\"\ncat > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&pager, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let exe = std::path::Path::new(EXE);
    let on_a_terminal = |extra: &str, paged: &std::path::Path| {
        let cmd = format!(
            "{} diff fixtures/js/diff/a.js fixtures/js/diff/b.js{extra}",
            exe.display()
        );
        // The binary under `script` inherits the sandbox.
        let out = command_of("script")
            .args(["-qec", &cmd, "/dev/null"])
            .current_dir(MANIFEST)
            .env("PAGER", format!("{} {}", pager.display(), paged.display()))
            .env("LINES", "5")
            .env("COLUMNS", "100")
            .env_remove("LESS")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let paged = dir.path().join("paged.txt");
    let screen = on_a_terminal("", &paged);
    let text = std::fs::read_to_string(&paged).expect("the pager got the output");
    assert!(text.contains("What changed"), "{text}");
    assert!(!screen.contains("What changed"), "only the pager wrote");
    let less = std::fs::read_to_string(dir.path().join("paged.txt.less")).unwrap();
    assert_eq!(less.trim(), "FRX");
    let unpaged = dir.path().join("unpaged.txt");
    let screen = on_a_terminal(" --no-pager", &unpaged);
    assert!(!unpaged.exists(), "--no-pager");
    assert!(screen.contains("What changed"));
    // A pipe is never paged.
    let out = bin()
        .current_dir(MANIFEST)
        .args(["diff", "fixtures/js/diff/a.js", "fixtures/js/diff/b.js"])
        .env(
            "PAGER",
            format!("{} {}", pager.display(), unpaged.display()),
        )
        .env("LINES", "5")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("What changed"));
    assert!(!unpaged.exists(), "a pipe");
}

/// The package says what it is, under which licence, for which compiler;
/// the licence text ships beside it. (`repository` is left out: the
/// project has no public address to name yet.)
#[test]
fn cargo_manifest_describes_the_package() {
    let toml = std::fs::read_to_string(format!("{MANIFEST}/Cargo.toml")).unwrap();
    let package = &toml[..toml.find("[dependencies]").unwrap()];
    for key in ["description = \"", "license = \"", "rust-version = \""] {
        assert!(package.contains(key), "{key}");
    }
    let licence = std::fs::read_to_string(format!("{MANIFEST}/LICENSE")).unwrap();
    assert!(licence.contains("MIT") && licence.contains("Apache"));
}

/// The flag table's script in Chromium: a click on a header sorts the rows
/// (twice: the other way), typing in the box filters them. For the test
/// the page's policy is taken out so that a driver script can click.
#[test]
fn flag_table_sorts_and_filters_in_chromium() {
    let html = run(&["report", SINGLE, "--format", "html", "--config", CONFIG]);
    let start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let end = start + html[start..].find('>').unwrap() + 1;
    let driver = "<script>\
        var t=document.querySelector('.filter+table');\
        var th=Array.prototype.find.call(t.tHead.rows[0].cells,function(c){return c.textContent==='flag';});\
        th.click();th.click();\
        var names=Array.prototype.map.call(t.tBodies[0].rows,function(r){return r.cells[0].textContent;});\
        document.body.setAttribute('data-order',names.join(' '));\
        var b=document.querySelector('.filter-box');b.value='ROUT';b.dispatchEvent(new Event('input'));\
        var shown=Array.prototype.filter.call(t.tBodies[0].rows,function(r){return !r.hidden;}).length;\
        document.body.setAttribute('data-shown',String(shown));\
        </script></body>";
    let page = format!("{}{}", &html[..start], &html[end..]).replace("</body>", driver);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    std::fs::write(&path, page).unwrap();
    let (dom, _) = render(&path, &dir.path().join("report.png"));
    assert!(
        dom.contains("data-order=\"tengu_fixture_workflows tengu_fixture_routing tengu_fixture_routed tengu_fixture_listed tengu_fixture_avocet\""),
        "sorted by name, descending: {}",
        &dom[dom.find("<body").unwrap()..][..200]
    );
    assert!(dom.contains("aria-sort=\"descending\""));
    assert!(
        dom.contains("data-shown=\"2\""),
        "filtered to the two rout… flags"
    );
}

/// A workflow script that never ends, or grows without bound, holds the
/// report for its run's caps (2 s, 64 MB) and no longer: the report is
/// written, exit 0, and says which runs stopped and why.
#[test]
fn report_survives_scripts_that_loop_or_grow() {
    let fixture = std::fs::read_to_string(format!("{MANIFEST}/{SINGLE}")).unwrap();
    assert!(fixture.contains("log(escaped)\n`"));
    let dir = tempfile::tempdir().unwrap();
    for (name, body, why) in [
        ("loop", "while (true) {}", "time limit"),
        (
            "grow",
            "const a = []; while (true) a.push(\"x\".repeat(1 << 20) + a.length)",
            "memory cap",
        ),
    ] {
        let path = dir.path().join(format!("{name}.js"));
        std::fs::write(
            &path,
            fixture.replace("log(escaped)\n`", &format!("log(escaped)\n{body}\n`")),
        )
        .unwrap();
        let started = std::time::Instant::now();
        let out = bin()
            .args(["report", path.to_str().unwrap(), "--json", "--quiet"])
            .env("HOME", "/nonexistent-home")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let took = started.elapsed();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(took.as_secs() < 20, "{name}: {took:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let runs = v["simulation"][0]["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{name}: high and max");
        for r in runs {
            assert_eq!(r["completed"], false, "{name}: {r}");
            let status = r["status"].as_str().unwrap();
            assert!(status.contains(why), "{name}: {r}");
            assert!(!status.contains("--"), "no option report lacks: {status}");
        }
    }
}
