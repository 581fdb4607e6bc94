//! Small inline SVG pictures for the HTML renderings, written by hand:
//! a workflow's phase pipeline with its fan-out per effort level, a gate's
//! chain of conditions, and a bar chart. Every text is escaped
//! ([`super::doc::h`]); sizes come from the data, so nothing is measured
//! in a browser. Text is set in a monospace font so that its width is
//! known (0.6 em per character).

use super::doc::{Figure, Status, elide, fmt, h};
use std::fmt::Write;

const FONT: &str = "ui-monospace,Menlo,Consolas,'DejaVu Sans Mono',monospace";

fn colour(s: Status) -> &'static str {
    match s {
        Status::Pass | Status::Added => "#17803d",
        Status::Block | Status::Removed => "#c62828",
        Status::Unknown => "#a66300",
        Status::Changed => "#1565c0",
        Status::Muted => "#9e9e9e",
    }
}

fn text_w(s: &str, size: f32) -> f32 {
    s.chars().count() as f32 * size * 0.6
}

fn open(o: &mut String, w: f32, hgt: f32, label: &str) {
    let _ = write!(
        o,
        "<svg role=\"img\" aria-label=\"{}\" width=\"{w:.0}\" height=\"{hgt:.0}\" viewBox=\"0 0 {w:.0} {hgt:.0}\" font-family=\"{FONT}\" font-size=\"12\">",
        h(label)
    );
}

/// The caption over the rows of finder dots: they are read from the
/// script's level table, not seen in a run.
const LEGEND: &str =
    "finder agents per effort level, from the level table (filled: correctness, open: cleanup)";

/// The caption over the measured rows: counted in a simulated run.
const MEASURED: &str =
    "agents per phase, measured: one simulated run per level (seed 0, generated results)";

/// Agents one level of a review workflow starts.
pub struct LevelFan {
    pub level: String,
    pub finders: u32,
    pub cleanup: u32,
    pub detail: String,
}

/// Agents per phase that a simulated run of one level started.
pub struct Measured {
    pub level: String,
    /// One per phase of the pipeline, in its order: None when the run never
    /// entered the phase.
    pub counts: Vec<Option<usize>>,
    /// Agents in stages the meta does not declare.
    pub other: usize,
    pub total: usize,
    /// How the run ended, when it did not complete (its counts are partial).
    pub stopped: Option<String>,
}

/// Phases left to right. Under them, when the workflow was simulated, one
/// row per effort level with the agents each phase started in that run
/// (measured, under each phase's box); then one row per level of the level
/// table with its finder agents drawn one by one (filled: correctness,
/// open: cleanup).
pub fn pipeline(
    name: &str,
    phases: &[String],
    levels: &[LevelFan],
    measured: &[Measured],
) -> Figure {
    let size = 12.0;
    let boxes: Vec<(String, f32)> = phases
        .iter()
        .map(|p| {
            let t = elide(p, 28);
            let w = text_w(&t, size) + 20.0;
            (t, w)
        })
        .collect();
    let gap = 26.0;
    let lv_label = 70.0;
    // The measured rows are labelled on the left: the boxes move right so
    // that each count sits under its phase.
    let x0 = if measured.is_empty() {
        10.0
    } else {
        10.0 + lv_label
    };
    let row_w: f32 = x0 - 10.0
        + boxes.iter().map(|b| b.1).sum::<f32>()
        + gap * boxes.len().saturating_sub(1) as f32;
    let tails: Vec<String> = measured
        .iter()
        .map(|m| {
            let mut s = format!("= {}", fmt::count(m.total, "agent", "agents"));
            if m.other > 0 {
                s.push_str(&format!(" ({} in undeclared stages)", fmt::n(m.other)));
            }
            if let Some(why) = &m.stopped {
                s.push_str(&format!(" — {}", elide(why, 60)));
            }
            s
        })
        .collect();
    let tail_w = tails.iter().map(|t| text_w(t, 11.0)).fold(0.0, f32::max);
    let measured_w = if measured.is_empty() {
        0.0
    } else {
        (row_w + 12.0 + tail_w).max(text_w(MEASURED, 11.0))
    };
    let dot = 14.0;
    let max_dots = levels
        .iter()
        .map(|l| (l.finders + l.cleanup).min(40))
        .max()
        .unwrap_or(0) as f32;
    let detail_w = levels
        .iter()
        .map(|l| text_w(&l.detail, 11.0))
        .fold(0.0, f32::max);
    let lv_w = lv_label + max_dots * dot + 16.0 + detail_w;
    // The legend above the levels is wider than a short pipeline: the
    // picture must hold it, or it is cut at the edge.
    let legend_w = if levels.is_empty() {
        0.0
    } else {
        text_w(LEGEND, 11.0)
    };
    let w = row_w.max(lv_w).max(legend_w).max(measured_w).max(200.0) + 20.0;
    let m_top = 50.0;
    let m_h = if measured.is_empty() {
        0.0
    } else {
        24.0 + 24.0 * measured.len() as f32
    };
    let hgt = m_top
        + m_h
        + if levels.is_empty() {
            0.0
        } else {
            24.0 + 26.0 * levels.len() as f32
        };
    let mut o = String::new();
    open(
        &mut o,
        w,
        hgt,
        &format!("{name}: phases and fan-out per level"),
    );
    o.push_str("<defs><marker id=\"ah\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#555\"/></marker></defs>");
    let mut x = x0;
    let mut centres = Vec::new();
    for (i, (t, bw)) in boxes.iter().enumerate() {
        let _ = write!(
            o,
            "<rect x=\"{x:.1}\" y=\"10\" width=\"{bw:.1}\" height=\"30\" rx=\"5\" fill=\"#e8f0fe\" stroke=\"#1565c0\"/><text x=\"{:.1}\" y=\"29\" text-anchor=\"middle\">{}</text>",
            x + bw / 2.0,
            h(t)
        );
        centres.push((x + bw / 2.0, *bw));
        if i + 1 < boxes.len() {
            let _ = write!(
                o,
                "<line x1=\"{:.1}\" y1=\"25\" x2=\"{:.1}\" y2=\"25\" stroke=\"#555\" marker-end=\"url(#ah)\"/>",
                x + bw + 2.0,
                x + bw + gap - 2.0
            );
        }
        x += bw + gap;
    }
    if !measured.is_empty() {
        measured_rows(
            &mut o,
            &Rows {
                phases,
                centres: &centres,
                top: m_top,
                right: row_w,
                size,
            },
            measured,
            &tails,
        );
    }
    level_rows(
        &mut o,
        levels,
        m_top + m_h,
        Dots {
            label: lv_label,
            dot,
            max: max_dots,
        },
    );
    o.push_str("</svg>");
    let text = pipeline_text(phases, levels, measured, &tails);
    Figure {
        caption: match (levels.is_empty(), measured.is_empty()) {
            (true, true) => format!("{name}: phase pipeline"),
            (false, true) => {
                format!("{name}: phase pipeline and finder fan-out per effort level")
            }
            (true, false) => format!("{name}: phase pipeline and agents per phase (simulated)"),
            (false, false) => format!(
                "{name}: phase pipeline, agents per phase (simulated) and finders per level (level table)"
            ),
        },
        svg: o,
        text,
    }
}

/// One condition of a gate, judged.
pub struct Step {
    pub text: String,
    pub status: Status,
    pub label: String,
}

/// Conditions top to bottom, each marked pass / block / unknown (or not
/// reached, after a block), ending in the verdict.
pub fn gate_chain(name: &str, steps: &[Step], verdict: (&str, Status)) -> Figure {
    let size = 12.0;
    let texts: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| elide(&format!("{}. {}", i + 1, s.text.replace('\n', " ")), 90))
        .collect();
    let label_w = steps
        .iter()
        .map(|s| text_w(&s.label, 11.0))
        .fold(0.0, f32::max)
        .max(60.0);
    let tw = texts.iter().map(|t| text_w(t, size)).fold(0.0, f32::max);
    let w = (40.0 + tw + 20.0 + label_w + 20.0).max(text_w(verdict.0, 13.0) + 40.0);
    let row = 30.0;
    let hgt = 20.0 + row * steps.len() as f32 + 40.0;
    let mut o = String::new();
    open(&mut o, w, hgt, &format!("{name}: conditions"));
    for (i, (s, t)) in steps.iter().zip(&texts).enumerate() {
        let y = 20.0 + row * i as f32;
        let c = colour(s.status);
        // The chain leads on to the next condition, the last to the verdict.
        let _ = write!(
            o,
            "<line x1=\"18\" y1=\"{:.1}\" x2=\"18\" y2=\"{:.1}\" stroke=\"#bbb\" stroke-width=\"2\"/>",
            y + 8.0,
            y + row - 8.0
        );
        let _ = write!(
            o,
            "<circle cx=\"18\" cy=\"{y:.1}\" r=\"7\" fill=\"{c}\"/><text x=\"34\" y=\"{:.1}\"{}>{}</text><text x=\"{:.1}\" y=\"{:.1}\" fill=\"{c}\" font-size=\"11\" font-weight=\"bold\">{}</text>",
            y + 4.0,
            if s.status == Status::Muted {
                " fill=\"#9e9e9e\""
            } else {
                ""
            },
            h(t),
            40.0 + tw + 20.0,
            y + 4.0,
            h(&s.label)
        );
    }
    let y = 20.0 + row * steps.len() as f32;
    let c = colour(verdict.1);
    let _ = write!(
        o,
        "<rect x=\"8\" y=\"{:.1}\" width=\"{:.1}\" height=\"26\" rx=\"5\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"18\" y=\"{:.1}\" fill=\"{c}\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        y - 6.0,
        w - 16.0,
        y + 11.0,
        h(verdict.0)
    );
    o.push_str("</svg>");
    let mut text: Vec<String> = steps
        .iter()
        .zip(&texts)
        .map(|(s, t)| format!("[{}] {t}", s.label))
        .collect();
    text.push(format!("⇒ {}", verdict.0));
    Figure {
        caption: format!("{name}: each condition under the cached values (defaults where none)"),
        svg: o,
        text,
    }
}

/// Horizontal bars: one per (label, value), length the square root of the
/// value (for counts that differ by orders of magnitude).
pub fn bars(title: &str, items: &[(String, u64)]) -> Figure {
    bars_scaled(title, items, true)
}

/// Horizontal bars, length proportional to the value (for counts of one
/// order, such as agents per stage).
pub fn bars_linear(title: &str, items: &[(String, u64)]) -> Figure {
    bars_scaled(title, items, false)
}

fn bars_scaled(title: &str, items: &[(String, u64)], sqrt: bool) -> Figure {
    let label_w = items
        .iter()
        .map(|(l, _)| text_w(l, 12.0))
        .fold(0.0, f32::max)
        + 16.0;
    let max = items.iter().map(|i| i.1).max().unwrap_or(0).max(1) as f32;
    let bar_max = 420.0;
    let w = label_w + bar_max + 110.0;
    let row = 24.0;
    let hgt = 10.0 + row * items.len() as f32 + 6.0;
    let mut o = String::new();
    open(&mut o, w, hgt, title);
    for (i, (l, v)) in items.iter().enumerate() {
        let y = 10.0 + row * i as f32;
        // Area, not length, would mislead less for counts this skewed, but
        // a square root keeps small areas visible while preserving order.
        let share = if sqrt {
            (*v as f32).sqrt() / max.sqrt()
        } else {
            *v as f32 / max
        };
        let len = if *v == 0 {
            0.0
        } else {
            (bar_max * share).max(2.0)
        };
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{label_w:.1}\" y=\"{y:.1}\" width=\"{len:.1}\" height=\"16\" fill=\"#1565c0\" data-label=\"{}\" data-value=\"{v}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            label_w - 8.0,
            y + 12.0,
            h(l),
            h(l),
            label_w + len + 6.0,
            y + 12.0,
            h(&fmt::num(*v))
        );
    }
    o.push_str("</svg>");
    Figure {
        caption: if sqrt {
            format!("{title} (bar length: square root of the count)")
        } else {
            title.to_string()
        },
        svg: o,
        text: items
            .iter()
            .map(|(l, v)| format!("{l}: {}", fmt::num(*v)))
            .collect(),
    }
}

/// One line chart over releases: named series, dashed markers at events
/// (index, label), the first and last release under the axis.
pub fn lines(
    title: &str,
    unit: &str,
    series: &[(&str, Vec<f64>)],
    markers: &[(usize, String)],
    ends: (&str, &str),
) -> Figure {
    const COLOURS: [&str; 4] = ["#1565c0", "#c62828", "#17803d", "#6a1b9a"];
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(0);
    let (w, hgt, left, right, top, bottom) = (720.0_f32, 170.0_f32, 64.0, 12.0, 26.0, 24.0);
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let x = |i: usize| -> f32 {
        if n <= 1 {
            left + (w - left - right) / 2.0
        } else {
            left + (w - left - right) * i as f32 / (n - 1) as f32
        }
    };
    let y = |v: f64| -> f32 { top + (hgt - top - bottom) * (1.0 - (v / max) as f32) };
    let mut o = String::new();
    open(&mut o, w, hgt, title);
    let base = hgt - bottom;
    // The plot area, shaded so an empty chart still reads as one.
    let _ = write!(
        o,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#fafafa\"/>",
        w - left - right,
        base - top
    );
    let _ = write!(
        o,
        "<text x=\"{left}\" y=\"14\" font-weight=\"bold\">{}</text><line x1=\"{left}\" y1=\"{base}\" x2=\"{r}\" y2=\"{base}\" stroke=\"#999\"/><text x=\"{lx}\" y=\"{ty}\" text-anchor=\"end\" font-size=\"11\">{m}</text><text x=\"{lx}\" y=\"{base}\" text-anchor=\"end\" font-size=\"11\">0</text><text x=\"{left}\" y=\"{yb}\" font-size=\"11\">{a}</text><text x=\"{r}\" y=\"{yb}\" text-anchor=\"end\" font-size=\"11\">{b}</text>",
        h(title),
        r = w - right,
        lx = left - 4.0,
        ty = top + 4.0,
        m = h(&format!("{}{unit}", fmt::num(max.round() as u64))),
        yb = hgt - 6.0,
        a = h(ends.0),
        b = h(ends.1),
    );
    for (i, label) in markers {
        let _ = write!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{base}\" stroke=\"{c}\" stroke-dasharray=\"3 3\" stroke-width=\"1.5\"><title>{t}</title></line>",
            x = x(*i),
            c = colour(Status::Unknown),
            t = h(label)
        );
    }
    for (k, (name, values)) in series.iter().enumerate() {
        let c = COLOURS[k % COLOURS.len()];
        let pts: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v)))
            .collect();
        let _ = write!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"><title>{}</title></polyline>",
            pts.join(" "),
            h(name)
        );
        if values.len() == 1 {
            let _ = write!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>",
                x(0),
                y(values[0])
            );
        }
        if series.len() > 1 {
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"14\" fill=\"{c}\" font-size=\"11\">{}</text>",
                w - right - 80.0 * (series.len() - k) as f32,
                h(name)
            );
        }
    }
    o.push_str("</svg>");
    let last = |v: &Vec<f64>| v.last().copied().unwrap_or(0.0);
    Figure {
        caption: format!("{title}, release by release (dashed: events)"),
        svg: o,
        text: series
            .iter()
            .map(|(name, v)| {
                format!(
                    "{name}: {} → {}{unit}",
                    fmt::num(v.first().copied().unwrap_or(0.0).round() as u64),
                    fmt::num(last(v).round() as u64)
                )
            })
            .collect(),
    }
}

/// Where the measured rows of a pipeline go: under the phase boxes (their
/// centres and widths), from `top`, with the run's tail text at `right`.
struct Rows<'a> {
    phases: &'a [String],
    centres: &'a [(f32, f32)],
    top: f32,
    right: f32,
    size: f32,
}

/// The measured rows: per effort level, the agents each phase started in
/// its simulated run, as pills under the phases.
fn measured_rows(o: &mut String, rows: &Rows, measured: &[Measured], tails: &[String]) {
    let _ = write!(
        o,
        "<text x=\"10\" y=\"{:.1}\" fill=\"#666\" font-size=\"11\">{MEASURED}</text>",
        rows.top + 14.0
    );
    // Bar widths share one scale across the figure: the levels compare.
    let most = measured
        .iter()
        .flat_map(|m| m.counts.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f32;
    for (r, m) in measured.iter().enumerate() {
        let y = rows.top + 36.0 + 24.0 * r as f32;
        let _ = write!(
            o,
            "<text x=\"10\" y=\"{:.1}\" font-weight=\"bold\">{}</text>",
            y + 4.0,
            h(&elide(&m.level, 9))
        );
        for ((cx, bw), (c, phase)) in rows.centres.iter().zip(m.counts.iter().zip(rows.phases)) {
            match c {
                Some(n) => {
                    // A pill that always holds its number, growing to
                    // the box's width for the most agents in the figure.
                    let label = fmt::num(*n as u64);
                    let least = text_w(&label, rows.size) + 10.0;
                    let len = least + (bw - 8.0 - least).max(0.0) * (*n as f32 / most);
                    let _ = write!(
                        o,
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"16\" rx=\"3\" fill=\"#c9dcf7\"/><text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"#0d47a1\" data-level=\"{}\" data-phase=\"{}\" data-agents=\"{n}\">{}</text>",
                        cx - len / 2.0,
                        y - 8.0,
                        y + 4.0,
                        h(&m.level),
                        h(phase),
                        label
                    );
                }
                None => {
                    let _ = write!(
                        o,
                        "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#9e9e9e\" data-level=\"{}\" data-phase=\"{}\">–<title>not reached</title></text>",
                        y + 4.0,
                        h(&m.level),
                        h(phase)
                    );
                }
            }
        }
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{}\">{}</text>",
            rows.right + 22.0,
            y + 4.0,
            if m.stopped.is_some() {
                colour(Status::Unknown)
            } else {
                "#333"
            },
            h(&tails[r])
        );
    }
}

/// The pipeline as text, for the terminal and Markdown.
fn pipeline_text(
    phases: &[String],
    levels: &[LevelFan],
    measured: &[Measured],
    tails: &[String],
) -> Vec<String> {
    let mut text = vec![phases.join(" → ")];
    if !measured.is_empty() {
        text.push(
            "agents per phase, measured in one simulated run per level (seed 0, generated results):"
                .into(),
        );
        for (m, tail) in measured.iter().zip(tails) {
            let cells: Vec<String> = m
                .counts
                .iter()
                .zip(phases)
                .map(|(c, p)| match c {
                    Some(n) => format!("{p} {}", fmt::n(*n)),
                    None => format!("{p} –"),
                })
                .collect();
            text.push(format!("{:<6} {} {tail}", m.level, cells.join(" · ")));
        }
    }
    if !levels.is_empty() && !measured.is_empty() {
        text.push("finders, from the level table:".into());
    }
    for l in levels {
        text.push(format!(
            "{:<6} {} {}",
            l.level,
            "●".repeat(l.finders.min(40) as usize) + &"○".repeat(l.cleanup.min(40) as usize),
            l.detail
        ));
    }
    text
}

/// How finder dots are laid out: after a label column, `dot` apart, at
/// most `max` in a row.
struct Dots {
    label: f32,
    dot: f32,
    max: f32,
}

/// One row per level of the level table, its finders drawn one by one
/// (filled: correctness, open: cleanup), from `l_top`.
fn level_rows(o: &mut String, levels: &[LevelFan], l_top: f32, dots: Dots) {
    if !levels.is_empty() {
        let _ = write!(
            o,
            "<text x=\"10\" y=\"{:.1}\" fill=\"#666\" font-size=\"11\">{LEGEND}</text>",
            l_top + 14.0
        );
    }
    for (r, l) in levels.iter().enumerate() {
        let y = l_top + 36.0 + 26.0 * r as f32;
        let _ = write!(
            o,
            "<text x=\"10\" y=\"{:.1}\" font-weight=\"bold\">{}</text>",
            y + 4.0,
            h(&elide(&l.level, 9))
        );
        let total = (l.finders + l.cleanup).min(40);
        for k in 0..total {
            let cx = 10.0 + dots.label + dots.dot * k as f32 + dots.dot / 2.0;
            let filled = k < l.finders;
            let _ = write!(
                o,
                "<circle cx=\"{cx:.1}\" cy=\"{y:.1}\" r=\"5.5\" fill=\"{}\" stroke=\"#1565c0\" stroke-width=\"1.5\"/>",
                if filled { "#1565c0" } else { "#fff" }
            );
        }
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#333\">{}</text>",
            10.0 + dots.label + dots.max * dots.dot + 12.0,
            y + 4.0,
            h(&l.detail)
        );
    }
}
