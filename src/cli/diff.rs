use super::App;
use crate::analysis::diff::{self, Section};
use crate::report::diff::{self as view, DiffView};
use crate::report::info::InfoView;
use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::time::Instant;

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
    pub only: Vec<Section>,
    #[command(flatten)]
    pub out: super::format::OutputArgs,
    /// How many items of each list the human, Markdown and HTML reports show (each diff: N × 6 lines); JSON has all.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub limit: usize,
    /// Exit with status 1 when the builds differ in the sections compared.
    #[arg(long)]
    pub exit_code: bool,
}

/// Whether anything differs in the sections compared: the identity
/// fields, or any section ([`BuildDiff::is_empty`](crate::analysis::diff::BuildDiff::is_empty)).
fn differs(v: &DiffView) -> bool {
    v.identity
        .as_ref()
        .is_some_and(|i| i.fields.iter().any(|f| f.differs))
        || !v.diff.is_empty()
}

pub fn run(app: &App, a: &DiffArgs) -> anyhow::Result<i32> {
    let out = app.output(&a.out, crate::report::emit::Format::Text);
    let sections: Vec<Section> = if a.only.is_empty() {
        Section::ALL.to_vec()
    } else {
        a.only.clone()
    };
    let mut timings: BTreeMap<&'static str, u64> = BTreeMap::new();
    let t0 = Instant::now();
    let oa = app.open(&a.a)?;
    let ob = app.open(&a.b)?;
    let (ba, bb) = (app.build(&oa)?, app.build(&ob)?);
    timings.insert("open", t0.elapsed().as_millis() as u64);
    let shapes = sections.iter().any(|s| s.needs_shapes());
    let side = |b| -> anyhow::Result<_> {
        let an = app.analyse(b)?.last_use();
        Ok(if shapes { an.with_shapes() } else { an })
    };
    let (sa, sb) = (side(&ba)?, side(&bb)?);
    let t1 = Instant::now();
    let cached = sa.facts_cached() && sb.facts_cached();
    let s = (!cached || shapes)
        .then(|| app.spinner("parsing, indexing and analysing both builds…".into()))
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
    let s = app.spinner("comparing…".into());
    let d = diff::compare(&sa, &sb, &sections)?;
    if let Some(s) = s {
        s.finish_and_clear();
    }
    timings.insert("compare", t2.elapsed().as_millis() as u64);
    // CC_TEARDOWN_DEBUG=store says on stderr which side was parsed (the
    // tests check that a diff of two stored builds parses neither).
    if app.debug.store {
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
        limit: a.limit,
    };
    out.emit(&v)?;
    Ok(if a.exit_code && differs(&v) { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// `--only` offers every section, in order, under the name the JSON
    /// report gives it.
    #[test]
    fn only_offers_every_section() {
        assert_eq!(Section::value_variants(), Section::ALL);
        for s in Section::value_variants() {
            let name = s.to_possible_value().unwrap().get_name().to_string();
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(json, name.as_str());
        }
    }
}
