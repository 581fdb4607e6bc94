use super::Global;
use super::format::Format;
use crate::analysis::diff::{self, Section};
use crate::report::diff::{self as view, DiffView};
use crate::report::info::InfoView;
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Instant;

/// The sections `--only` accepts: those of [`Section`], which, being
/// analysis, knows nothing of the command line.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum SectionArg {
    Identity,
    Modules,
    Workflows,
    Flags,
    Gates,
    Roles,
    Functions,
    Text,
    Tools,
    Prompts,
    Env,
    Settings,
    Commands,
    Models,
}

impl From<SectionArg> for Section {
    fn from(s: SectionArg) -> Section {
        match s {
            SectionArg::Identity => Section::Identity,
            SectionArg::Modules => Section::Modules,
            SectionArg::Workflows => Section::Workflows,
            SectionArg::Flags => Section::Flags,
            SectionArg::Gates => Section::Gates,
            SectionArg::Roles => Section::Roles,
            SectionArg::Functions => Section::Functions,
            SectionArg::Text => Section::Text,
            SectionArg::Tools => Section::Tools,
            SectionArg::Prompts => Section::Prompts,
            SectionArg::Env => Section::Env,
            SectionArg::Settings => Section::Settings,
            SectionArg::Commands => Section::Commands,
            SectionArg::Models => Section::Models,
        }
    }
}

#[derive(Args)]
pub struct DiffArgs {
    /// The older build (any TARGET).
    #[arg(value_name = "A")]
    pub a: String,
    /// The newer build (any TARGET).
    #[arg(value_name = "B")]
    pub b: String,
    /// Only these sections (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "SECTIONS")]
    pub only: Vec<SectionArg>,
    #[command(flatten)]
    pub out: super::format::OutputArgs,
    /// How many items of each list the human, Markdown and HTML reports show (each diff: N × 6 lines); JSON has all.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub limit: usize,
    /// Exit with status 1 when the builds differ in the sections compared.
    #[arg(long)]
    pub exit_code: bool,
}

fn spinner(g: &Global, msg: String) -> Option<indicatif::ProgressBar> {
    (!g.quiet && !g.json && std::io::stderr().is_terminal()).then(|| {
        let s = indicatif::ProgressBar::new_spinner();
        s.set_message(msg);
        s.enable_steady_tick(std::time::Duration::from_millis(120));
        s
    })
}

/// Whether anything differs in the sections compared: the identity
/// fields, or any section ([`BuildDiff::is_empty`](crate::analysis::diff::BuildDiff::is_empty)).
fn differs(v: &DiffView) -> bool {
    v.identity
        .as_ref()
        .is_some_and(|i| i.fields.iter().any(|f| f.differs))
        || !v.diff.is_empty()
}

pub fn run(g: &Global, a: &DiffArgs) -> anyhow::Result<i32> {
    let sections: Vec<Section> = if a.only.is_empty() {
        Section::ALL.to_vec()
    } else {
        a.only.iter().map(|&s| s.into()).collect()
    };
    let mut timings: BTreeMap<&'static str, u64> = BTreeMap::new();
    let t0 = Instant::now();
    let oa = g.open(&a.a)?;
    let ob = g.open(&a.b)?;
    let (ba, bb) = (g.build(&oa)?, g.build(&ob)?);
    timings.insert("open", t0.elapsed().as_millis() as u64);
    let shapes = sections.iter().any(|s| s.needs_shapes());
    let side = |b| -> anyhow::Result<_> {
        let an = super::code::analyse(g, b)?.last_use();
        Ok(if shapes { an.with_shapes() } else { an })
    };
    let (sa, sb) = (side(&ba)?, side(&bb)?);
    let t1 = Instant::now();
    let cached = sa.facts_cached() && sb.facts_cached();
    let s = (!cached || shapes)
        .then(|| spinner(g, "parsing, indexing and analysing both builds…".into()))
        .flatten();
    // Both builds at once: a single-bundle build parses on one core.
    let (ra, rb) = rayon::join(
        || diff::prepare(&sa, &sections),
        || diff::prepare(&sb, &sections),
    );
    if let Some(s) = s {
        s.finish_and_clear();
    }
    ra.with_context(|| oa.label.clone())?;
    rb.with_context(|| ob.label.clone())?;
    timings.insert("index_and_analyse", t1.elapsed().as_millis() as u64);
    let t2 = Instant::now();
    let s = spinner(g, "comparing…".into());
    let d = diff::compare(&sa, &sb, &sections)?;
    if let Some(s) = s {
        s.finish_and_clear();
    }
    timings.insert("compare", t2.elapsed().as_millis() as u64);
    // CC_TEARDOWN_DEBUG=store says on stderr which side was parsed (the
    // tests check that a diff of two stored builds parses neither).
    if std::env::var("CC_TEARDOWN_DEBUG").is_ok_and(|v| v.split(',').any(|x| x == "store")) {
        for side in [&sa, &sb] {
            let how = if side.parsed() {
                "parsed"
            } else {
                "not parsed"
            };
            eprintln!("debug: diff side {} {how}", side.digest());
        }
    }
    timings.insert("total", t0.elapsed().as_millis() as u64);
    let v = DiffView {
        a: oa.label.clone(),
        b: ob.label.clone(),
        identity: sections
            .contains(&Section::Identity)
            .then(|| view::identity(&InfoView::from_build(&ba), &InfoView::from_build(&bb))),
        diff: d,
        timings_ms: timings,
        digests: Some((sa.digest().to_string(), sb.digest().to_string())),
        provenance: crate::report::provenance::Provenance::of_this_run(),
    };
    match a.out.format(g, Format::Text) {
        Format::Json => super::write_output(g, a.out.output.as_deref(), &super::to_json(&v)?)?,
        // The terminal renderer escapes the builds' text itself, so its
        // colours are the only escape sequences printed.
        f => a.out.show(g, f, &view::doc(&v, a.limit))?,
    }
    Ok(if a.exit_code && differs(&v) { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--only` offers every section, in order, under the name the JSON
    /// report gives it.
    #[test]
    fn only_mirrors_every_section() {
        let offered: Vec<Section> = SectionArg::value_variants()
            .iter()
            .map(|&s| s.into())
            .collect();
        assert_eq!(offered, Section::ALL.to_vec());
        for s in SectionArg::value_variants() {
            let name = s.to_possible_value().unwrap().get_name().to_string();
            let json = serde_json::to_value(Section::from(*s)).unwrap();
            assert_eq!(json, name.as_str());
        }
    }
}
