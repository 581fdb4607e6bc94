//! The HTML renderer: one self-contained page (inline CSS and SVG, no network).

use super::*;
use std::fmt::Write;

/// Text for HTML content and attribute values.
pub fn h(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn html_inline(i: &Inline) -> String {
    let mut o = String::new();
    for s in &i.0 {
        match s {
            Span::Text(t) => o.push_str(&h(t)),
            Span::Code(t) => {
                let _ = write!(o, "<code>{}</code>", h(t));
            }
            Span::Strong(t) => {
                let _ = write!(o, "<strong>{}</strong>", h(t));
            }
            Span::Status(st, t) => {
                let _ = write!(o, "<span class=\"{}\">{}</span>", st.class(), h(t));
            }
            Span::Link { text, href, code } => {
                let text = if *code {
                    format!("<code>{}</code>", h(text))
                } else {
                    h(text)
                };
                let _ = write!(o, "<a href=\"{}\">{text}</a>", h(href));
            }
        }
    }
    o
}

pub(super) fn html_facts(o: &mut String, f: &[(String, Inline)], class: &str) {
    let _ = writeln!(o, "<dl class=\"{class}\">");
    for (k, v) in f {
        let _ = writeln!(o, "<dt>{}</dt><dd>{}</dd>", h(k), html_inline(v));
    }
    o.push_str("</dl>\n");
}

pub(super) fn html_rows(o: &mut String, tb: &Table, rows: &[Vec<Inline>]) {
    for r in rows {
        o.push_str("<tr>");
        for (i, c) in tb.columns.iter().enumerate() {
            let cell = r.get(i).map(html_inline).unwrap_or_default();
            let _ = write!(o, "<td class=\"k-{}\">{cell}</td>", kind_class(c.kind));
        }
        o.push_str("</tr>\n");
    }
}

pub(super) fn kind_class(k: Kind) -> &'static str {
    match k {
        Kind::Text => "text",
        Kind::Number => "num",
        Kind::Code => "code",
        Kind::Status => "status",
    }
}

pub(super) fn html_table(o: &mut String, tb: &Table) {
    if tb.filter {
        o.push_str(
            "<p class=\"filter\"><label>Filter: <input type=\"search\" class=\"filter-box\" placeholder=\"type to filter rows; click a header to sort\"></label></p>\n",
        );
    }
    let head = |o: &mut String| {
        o.push_str("<table><thead><tr>");
        for c in &tb.columns {
            let _ = write!(
                o,
                "<th class=\"k-{}\">{}</th>",
                kind_class(c.kind),
                h(&c.title)
            );
        }
        o.push_str("</tr></thead><tbody>\n");
    };
    let shown = tb.limit.unwrap_or(usize::MAX).min(tb.rows.len());
    head(o);
    html_rows(o, tb, &tb.rows[..shown]);
    o.push_str("</tbody></table>\n");
    if tb.rows.len() > shown {
        let _ = writeln!(
            o,
            "<details class=\"more\"><summary>and {} more</summary>",
            fmt::n(tb.rows.len() - shown)
        );
        head(o);
        let rest = &tb.rows[shown..];
        html_rows(o, tb, &rest[..rest.len().min(HTML_MORE)]);
        o.push_str("</tbody></table>\n");
        if rest.len() > HTML_MORE {
            let _ = writeln!(
                o,
                "<p class=\"more\">… and {} more in the JSON output.</p>",
                fmt::n(rest.len() - HTML_MORE)
            );
        }
        o.push_str("</details>\n");
    }
}

/// A little colour for JavaScript: keywords, strings, numbers, comments.
/// Line by line, so a string or comment across lines is coloured on its
/// first line only; the text is never changed.
pub(super) fn js_colour(line: &str) -> String {
    let cs: Vec<char> = line.chars().collect();
    let mut o = String::new();
    let mut i = 0;
    let span = |o: &mut String, class: &str, s: &str| {
        let _ = write!(o, "<span class=\"{class}\">{}</span>", h(s));
    };
    while i < cs.len() {
        let c = cs[i];
        if c == '/' && cs.get(i + 1) == Some(&'/') {
            span(&mut o, "j-com", &cs[i..].iter().collect::<String>());
            break;
        }
        if c == '"' || c == '\'' || c == '`' {
            let mut j = i + 1;
            while j < cs.len() && cs[j] != c {
                if cs[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(cs.len());
            span(&mut o, "j-str", &cs[i..end].iter().collect::<String>());
            i = end;
            continue;
        }
        if c.is_ascii_digit() && (i == 0 || !(cs[i - 1].is_alphanumeric() || cs[i - 1] == '_')) {
            let mut j = i;
            while j < cs.len() && (cs[j].is_ascii_alphanumeric() || cs[j] == '.') {
                j += 1;
            }
            span(&mut o, "j-num", &cs[i..j].iter().collect::<String>());
            i = j;
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let mut j = i;
            while j < cs.len() && (cs[j].is_alphanumeric() || cs[j] == '_' || cs[j] == '$') {
                j += 1;
            }
            let w: String = cs[i..j].iter().collect();
            if crate::js::keywords::is_highlighted(&w) {
                span(&mut o, "j-kw", &w);
            } else {
                o.push_str(&h(&w));
            }
            i = j;
            continue;
        }
        o.push_str(&h(&c.to_string()));
        i += 1;
    }
    o
}

pub(super) fn html_code(o: &mut String, text: &str, max: Option<usize>, diff: bool, lang: &str) {
    let js = lang == "js";
    let total = text.lines().count();
    let max = max.unwrap_or(usize::MAX);
    o.push_str(if diff {
        "<pre class=\"diff\"><code>"
    } else if lang == "prose" {
        // Prose (a prompt) wraps: on a phone, a paragraph is one line.
        "<pre class=\"prose\"><code>"
    } else {
        "<pre><code>"
    });
    for l in text.lines().take(max) {
        let (class, body) = match (diff, l.as_bytes().first()) {
            (true, Some(b'+')) => ("d-add", l),
            (true, Some(b'-')) => ("d-del", l),
            (true, Some(b'@')) => ("d-hunk", l),
            _ => ("", l),
        };
        let inner = if js && class != "d-hunk" {
            // A diff line's first character is its sign, kept out of the
            // colouring. It is a character, not a byte: a line of a word
            // diff may start with any letter (`é…` after a line break).
            match body.chars().next() {
                Some(sign) if diff => {
                    let rest = &body[sign.len_utf8()..];
                    format!("{}{}", h(&sign.to_string()), js_colour(rest))
                }
                _ => js_colour(body),
            }
        } else {
            h(body)
        };
        // Each line is a block (for its shading): a newline between two
        // inside <pre> would show as an empty line.
        if class.is_empty() {
            let _ = write!(o, "<span class=\"ln\">{inner}</span>");
        } else {
            let _ = write!(o, "<span class=\"ln {class}\">{inner}</span>");
        }
    }
    o.push_str("</code></pre>\n");
    if total > max {
        let _ = writeln!(
            o,
            "<p class=\"more\">… and {} more lines (the JSON output has all).</p>",
            fmt::n(total - max)
        );
    }
}

pub(super) fn html_block(o: &mut String, b: &Block, depth: usize) {
    match b {
        Block::Facts(f) => html_facts(o, f, "facts"),
        Block::Table(tb) => html_table(o, tb),
        Block::List { items, limit } => {
            let shown = limit.unwrap_or(usize::MAX).min(items.len());
            // A list of bare names reads better in columns.
            let names = items
                .iter()
                .all(|i| matches!(i.0.as_slice(), [Span::Code(_)]));
            let ul = if names {
                "<ul class=\"names\">"
            } else {
                "<ul>"
            };
            o.push_str(ul);
            o.push('\n');
            for i in &items[..shown] {
                let _ = writeln!(o, "<li>{}</li>", html_inline(i));
            }
            o.push_str("</ul>\n");
            if items.len() > shown {
                let _ = writeln!(
                    o,
                    "<details class=\"more\"><summary>and {} more</summary>{ul}",
                    fmt::n(items.len() - shown)
                );
                let rest = &items[shown..];
                for i in rest.iter().take(HTML_MORE) {
                    let _ = writeln!(o, "<li>{}</li>", html_inline(i));
                }
                if rest.len() > HTML_MORE {
                    let _ = writeln!(
                        o,
                        "<li class=\"more\">… and {} more in the JSON output</li>",
                        fmt::n(rest.len() - HTML_MORE)
                    );
                }
                o.push_str("</ul></details>\n");
            }
        }
        Block::Note(i) => {
            let _ = writeln!(o, "<p>{}</p>", html_inline(i));
        }
        Block::Ordered(items) => {
            o.push_str("<ol>\n");
            for i in items {
                let _ = writeln!(o, "<li>{}</li>", html_inline(i));
            }
            o.push_str("</ol>\n");
        }
        Block::Code {
            lang,
            caption,
            text,
            max_lines,
        } => {
            let _ = writeln!(
                o,
                "<details class=\"code\"><summary>{}</summary>",
                h(caption.as_deref().unwrap_or("code"))
            );
            html_code(o, text, *max_lines, false, lang);
            o.push_str("</details>\n");
        }
        Block::Diff {
            caption,
            text,
            max_lines,
        } => {
            let _ = writeln!(
                o,
                "<details class=\"code\"><summary>{}</summary>",
                caption
                    .as_ref()
                    .map_or_else(|| "diff".to_string(), html_inline)
            );
            html_code(o, text, *max_lines, true, "js");
            o.push_str("</details>\n");
        }
        Block::Figure(f) => {
            let _ = writeln!(
                o,
                "<figure>{}<figcaption>{}</figcaption></figure>",
                f.svg,
                h(&f.caption)
            );
        }
        Block::Words {
            caption,
            hunks,
            open,
        } => {
            let _ = writeln!(
                o,
                "<details class=\"words\"{}><summary>{}</summary>",
                if *open { " open" } else { "" },
                html_inline(caption)
            );
            for hunk in hunks {
                o.push_str("<p class=\"hunk\">");
                for s in &hunk.0 {
                    match s {
                        Span::Status(Status::Removed, t) => {
                            let _ = write!(o, "<del>{}</del>", h(t));
                        }
                        Span::Status(Status::Added, t) => {
                            let _ = write!(o, "<ins>{}</ins>", h(t));
                        }
                        s => o.push_str(&html_inline(&Inline(vec![s.clone()]))),
                    }
                }
                o.push_str("</p>\n");
            }
            o.push_str("</details>\n");
        }
        Block::Section(s) => {
            let hn = (depth + 2).min(6);
            let _ = writeln!(
                o,
                "<section id=\"{}\"><details{}><summary><h{hn}>{}</h{hn}></summary>",
                h(&s.id),
                if s.open { " open" } else { "" },
                html_inline(&s.title)
            );
            for b in &s.blocks {
                html_block(o, b, depth + 1);
            }
            o.push_str("</details></section>\n");
        }
    }
}

pub(super) const CSS: &str = "\
:root{--fg:#1d1f21;--muted:#666;--line:#d8dadc;--pass:#17803d;--block:#c62828;--unknown:#a66300;--changed:#1565c0;--bg2:#f5f6f7}
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;max-width:72rem;margin:1.5rem auto;padding:0 1rem;color:var(--fg)}
h1{font-size:1.5rem;margin:.2rem 0 1rem}
h2{display:inline;font-size:1.2rem}h3{display:inline;font-size:1.05rem}h4,h5,h6{display:inline;font-size:1rem}
summary{cursor:pointer;margin:.9rem 0 .4rem}
section{border-top:1px solid var(--line)}section section{border-top:0;margin-left:.5rem}
code,pre,.k-code,.k-num,.box dd{font-family:ui-monospace,'SF Mono',Menlo,Consolas,'DejaVu Sans Mono',monospace}
code{font-size:.9em;overflow-wrap:anywhere}
.k-num{text-align:right;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
td,th{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top}
th,th.k-code,th.k-num{background:var(--bg2);font-family:inherit}th.k-num{text-align:right}
td.k-code{font-size:.85rem;overflow-wrap:anywhere}
pre{background:var(--bg2);padding:.6rem .8rem;overflow:auto;max-height:36rem;font-size:.82rem;line-height:1.35}
pre .ln{display:block;white-space:pre}pre .ln:empty::before{content:' '}
pre.prose .ln{white-space:pre-wrap;overflow-wrap:anywhere}
.d-add{background:#e6f4ea}.d-del{background:#fdecea}.d-hunk{color:var(--changed)}
.j-kw{color:#8e24aa}.j-str{color:#2e7d32}.j-num{color:#c2185b}.j-com{color:var(--muted)}
.box{border:2px solid var(--fg);border-radius:6px;padding:.6rem 1rem;margin:0 0 1rem;background:#fbfbfc}
.box h2{display:block;margin:0 0 .4rem;font-size:1.1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.4rem 0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.box dd{font-family:inherit}
.s-pass{color:var(--pass);font-weight:600}.s-block{color:var(--block);font-weight:600}
.s-unknown{color:var(--unknown);font-weight:600}.s-added{color:var(--pass)}.s-removed{color:var(--block)}
.s-changed{color:var(--changed)}.s-muted{color:var(--muted)}
nav.toc{font-size:.92rem;column-width:16rem;margin:0 0 1rem}nav.toc ul{margin:.2rem 0;padding-left:1.2rem}
figure{margin:.6rem 0}figcaption{color:var(--muted);font-size:.85rem}
svg{max-width:100%;height:auto}
.more{color:var(--muted)}ul.names{column-width:22rem}details.more li{color:var(--fg)}
footer{border-top:1px solid var(--line);margin-top:2rem;color:var(--muted);font-size:.88rem}
.filter input{font:inherit;padding:.15rem .4rem;width:18rem}
.filter+table th{cursor:pointer}.filter+table th[aria-sort=ascending]::after{content:' ▲'}.filter+table th[aria-sort=descending]::after{content:' ▼'}
";

/// The only script: the table after each filter box is filtered by what
/// is typed in it, and sorted by a click on a column's header (numbers by
/// value, separators ignored; a second click reverses). Without it the
/// table is still whole, in its own order.
pub(super) const FILTER_JS: &str = "document.querySelectorAll('.filter-box').forEach(function(b){var t=b.closest('p').nextElementSibling;b.addEventListener('input',function(){var q=b.value.toLowerCase();t.querySelectorAll('tbody tr').forEach(function(r){r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});});t.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',function(){var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows),num=th.classList.contains('k-num'),d=th.getAttribute('aria-sort')==='ascending'?-1:1;t.querySelectorAll('thead th').forEach(function(o){o.removeAttribute('aria-sort');});th.setAttribute('aria-sort',d===1?'ascending':'descending');var key=function(r){var c=r.cells[i].textContent;return num?(parseFloat(c.replace(/,/g,''))||0):c.toLowerCase();};rows.sort(function(x,y){var a=key(x),c=key(y);return (a<c?-1:a>c?1:0)*d;});rows.forEach(function(r){tb.appendChild(r);});});});});";

/// The HTML page: self-contained (inline style and pictures), and a
/// content security policy that forbids every request, so nothing the page
/// holds can reach the network.
pub fn html(d: &Doc) -> String {
    use base64::Engine;
    use sha2::Digest;
    let mut o = String::new();
    let mut script_src = Vec::new();
    if !d.script_files.is_empty() {
        script_src.push("'self'".to_string());
    }
    if d.scripts {
        let hash = sha2::Sha256::digest(FILTER_JS.as_bytes());
        script_src.push(format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(hash)
        ));
    }
    let script_src = if script_src.is_empty() {
        String::new()
    } else {
        format!("; script-src {}", script_src.join(" "))
    };
    let style_self = if d.styles.is_empty() { "" } else { "'self' " };
    let mut links = String::new();
    for s in &d.styles {
        let _ = write!(links, "\n<link rel=\"stylesheet\" href=\"{}\">", h(s));
    }
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {style_self}'unsafe-inline'{script_src}\">\n\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n\
<title>{}</title>\n<style>\n{CSS}</style>{links}</head><body>\n",
        h(&d.title.plain()),
    );
    if d.nav.is_some() || d.search.is_some() {
        o.push_str("<header class=\"site\">");
        if let Some(nav) = &d.nav {
            let _ = write!(o, "<nav class=\"site\">{}</nav>", html_inline(nav));
        }
        if let Some(action) = &d.search {
            let _ = write!(
                o,
                "<form class=\"search\" role=\"search\" action=\"{}\"><input type=\"search\" name=\"q\" id=\"q\" placeholder=\"Search names and texts\" aria-label=\"Search names and texts\"> <button type=\"submit\">Search</button></form>",
                h(action)
            );
        }
        o.push_str("</header>\n");
    }
    let _ = writeln!(o, "<h1>{}</h1>", html_inline(&d.title));
    if !d.summary.is_empty() {
        o.push_str("<div class=\"box\" id=\"summary\"><h2>Summary</h2>\n");
        html_facts(&mut o, &d.summary, "summary");
        o.push_str("</div>\n");
    }
    if d.toc {
        o.push_str("<nav class=\"toc\" id=\"contents\"><strong>Contents</strong><ul>\n");
        for (id, title, subs) in toc_entries(&d.blocks) {
            let _ = write!(o, "<li><a href=\"#{}\">{}</a>", h(id), html_inline(title));
            if !subs.is_empty() {
                o.push_str("<ul>");
                for (sid, st) in subs {
                    let _ = write!(
                        o,
                        "<li><a href=\"#{}\">{}</a></li>",
                        h(sid),
                        html_inline(st)
                    );
                }
                o.push_str("</ul>");
            }
            o.push_str("</li>\n");
        }
        o.push_str("</ul></nav>\n");
    }
    for b in &d.blocks {
        html_block(&mut o, b, 0);
    }
    if !d.footer.is_empty() {
        o.push_str("<footer>\n");
        html_facts(&mut o, &d.footer, "provenance");
        o.push_str("</footer>\n");
    }
    if d.scripts {
        let _ = writeln!(o, "<script>{FILTER_JS}</script>");
    }
    for s in &d.script_files {
        let _ = writeln!(o, "<script src=\"{}\"></script>", h(s));
    }
    o.push_str("</body></html>\n");
    o
}
