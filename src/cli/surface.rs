use super::format::OutputArgs;
use super::{Global, TargetArg};
use crate::analysis::surface::{Kind, Site, Surface};
use crate::report::doc::{Block, Doc, Inline, fmt};
use crate::report::table::{Align, Table};
use clap::{Args, ValueEnum};

/// The kinds `--only` accepts (those of [`Kind`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum KindArg {
    Tools,
    Prompts,
    Env,
    Settings,
    Commands,
    Models,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Tools => Kind::Tools,
            KindArg::Prompts => Kind::Prompts,
            KindArg::Env => Kind::Env,
            KindArg::Settings => Kind::Settings,
            KindArg::Commands => Kind::Commands,
            KindArg::Models => Kind::Models,
        }
    }
}

#[derive(Args)]
pub struct SurfaceArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only these kinds (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "KINDS")]
    pub only: Vec<KindArg>,
    /// Also write every prompt below DIR: one Markdown file each, and an
    /// index.json (version, id, title, kind, bytes, sha256 of each file).
    /// Nothing is written outside DIR or through anything already in it.
    #[arg(long, value_name = "DIR")]
    pub export: Option<std::path::PathBuf>,
    /// With --export: replace files already at the paths written (each is
    /// removed first, never written through).
    #[arg(long, requires = "export")]
    pub force: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(serde::Serialize)]
struct SurfaceView<'a> {
    target: String,
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [crate::analysis::surface::tools::Tool]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompts: Option<&'a [crate::analysis::surface::prompts::Prompt]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<&'a [crate::analysis::surface::env::EnvVar]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    settings: Option<&'a [crate::analysis::surface::settings::Setting]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commands: Option<&'a [crate::analysis::surface::commands::Command]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    models: Option<&'a [crate::analysis::surface::models::Model]>,
}

pub fn run(g: &Global, a: &SurfaceArgs) -> anyhow::Result<i32> {
    let g = &a.out.global(g);
    let kinds: Vec<Kind> = if a.only.is_empty() {
        Kind::ALL.to_vec()
    } else {
        a.only.iter().map(|k| Kind::from(*k)).collect()
    };
    let on = |k: Kind| kinds.contains(&k);
    let opened = g.open(&a.target.target)?;
    let build = g.build(&opened)?;
    let an = super::code::analyse(g, &build)?.last_use();
    let s: &Surface = &super::code::facts(g, &an)?.surface;
    if let Some(dir) = &a.export {
        export(dir, a.force, build.version().best(), &s.prompts)?;
    }
    if g.json {
        return a
            .out
            .json(
                g,
                &SurfaceView {
                    target: opened.label.clone(),
                    version: build.version().best().map(str::to_string),
                    tools: on(Kind::Tools).then_some(&s.tools),
                    prompts: on(Kind::Prompts).then_some(&s.prompts),
                    env: on(Kind::Env).then_some(&s.env),
                    settings: on(Kind::Settings).then_some(&s.settings),
                    commands: on(Kind::Commands).then_some(&s.commands),
                    models: on(Kind::Models).then_some(&s.models),
                },
            )
            .map(|_| 0);
    }
    let mut d = Doc::new(Inline::from("Surface of ").c(opened.label.clone())).bare();
    for k in kinds {
        let n = s.count(k);
        let t = match k {
            Kind::Tools => table(
                &[
                    ("tool", Align::Code),
                    ("properties", Align::Left),
                    ("prompt bytes", Align::Right),
                    ("site", Align::Left),
                ],
                s.tools.iter().map(|t| {
                    (
                        vec![
                            t.name.clone(),
                            t.input_schema["properties"]
                                .as_object()
                                .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                                .unwrap_or_default(),
                            fmt::n(t.prompt_bytes),
                        ],
                        t.sites.first(),
                    )
                }),
            ),
            Kind::Prompts => table(
                &[
                    ("id", Align::Code),
                    ("kind", Align::Left),
                    ("title", Align::Left),
                    ("bytes", Align::Right),
                    ("site", Align::Left),
                ],
                s.prompts.iter().map(|p| {
                    (
                        vec![
                            p.id.clone(),
                            p.kind.clone(),
                            p.title.clone(),
                            fmt::n(p.bytes),
                        ],
                        p.sites.first(),
                    )
                }),
            ),
            Kind::Env => table(
                &[
                    ("variable", Align::Code),
                    ("read as", Align::Left),
                    ("default", Align::Left),
                    ("site", Align::Left),
                ],
                s.env.iter().map(|e| {
                    (
                        vec![
                            e.name.clone(),
                            e.how.join(", "),
                            e.default
                                .as_ref()
                                .map(|d| d.to_string())
                                .unwrap_or_default(),
                        ],
                        e.sites.first(),
                    )
                }),
            ),
            Kind::Settings => table(
                &[
                    ("key", Align::Code),
                    ("type", Align::Left),
                    ("default", Align::Left),
                    ("site", Align::Left),
                ],
                s.settings.iter().map(|x| {
                    (
                        vec![
                            x.key.clone(),
                            x.r#type.clone(),
                            x.default
                                .as_ref()
                                .map(|d| d.to_string())
                                .unwrap_or_default(),
                        ],
                        x.sites.first(),
                    )
                }),
            ),
            Kind::Commands => table(
                &[
                    ("command", Align::Code),
                    ("kind", Align::Left),
                    ("aliases", Align::Left),
                    ("site", Align::Left),
                ],
                s.commands.iter().map(|c| {
                    (
                        vec![format!("/{}", c.name), c.kind.clone(), c.aliases.join(", ")],
                        c.sites.first(),
                    )
                }),
            ),
            Kind::Models => table(
                &[
                    ("model", Align::Code),
                    ("aliases", Align::Left),
                    ("used as", Align::Left),
                    ("site", Align::Left),
                ],
                s.models.iter().map(|m| {
                    (
                        vec![m.id.clone(), m.aliases.join(", "), m.uses.join(", ")],
                        m.sites.first(),
                    )
                }),
            ),
        };
        d.section(
            k.as_str(),
            format!("{} ({})", k.as_str(), fmt::n(n)),
            if n > 0 {
                vec![Block::Table(t.doc())]
            } else {
                Vec::new()
            },
        );
    }
    a.out.text(g, &d)?;
    Ok(0)
}

/// Write the prompts below `dir` through the output-folder writer: every
/// conflict is found before the first write, and each file is created new.
fn export(
    dir: &std::path::Path,
    force: bool,
    version: Option<&str>,
    prompts: &[crate::analysis::surface::prompts::Prompt],
) -> anyhow::Result<()> {
    use super::outdir::{OutDir, OutPlan};
    use std::path::Path;
    let mut files = crate::analysis::surface::prompts::export_files(version, prompts);
    // Prompt ids come from the build (a tool's name): two that are one
    // file name where case is ignored (`Edit`, `EDIT`), or one id twice,
    // are refused before anything is written; an overlong id is shortened.
    let mut plan = OutPlan::new();
    let mut renamed = false;
    let mut rels = Vec::with_capacity(files.len());
    for (i, (p, _)) in files.iter().enumerate() {
        let who = match prompts.get(i) {
            // The title tells two prompts of one id apart ("Edit tool").
            Some(pr) => format!(
                "prompt {} ({})",
                pr.id,
                crate::report::doc::elide(&pr.title, 60)
            ),
            None => p.clone(),
        };
        let rel = plan.add(Path::new(p), who)?;
        renamed |= rel.as_os_str() != p.as_str();
        rels.push(rel);
    }
    if renamed {
        // index.json names each prompt's file: it must name the file as
        // written.
        rename_in_index(&mut files, &rels)?;
    }
    let mut out = OutDir::open(dir, &plan, force)?;
    for ((_, bytes), rel) in files.iter().zip(&rels) {
        out.write(rel, bytes)?;
    }
    errln!(
        "wrote {} prompts and index.json to {}",
        prompts.len(),
        dir.display()
    );
    Ok(())
}

/// `index.json` (the last of `files`) with each prompt's `file` as planned
/// in `rels` (same order as `files`).
fn rename_in_index(
    files: &mut [(String, Vec<u8>)],
    rels: &[std::path::PathBuf],
) -> anyhow::Result<()> {
    let Some(((_, index), prompt_files)) = files.split_last_mut() else {
        return Ok(());
    };
    let mut v: serde_json::Value = serde_json::from_slice(index)?;
    if let Some(entries) = v.get_mut("prompts").and_then(|p| p.as_array_mut()) {
        for ((entry, _), rel) in entries.iter_mut().zip(prompt_files.iter()).zip(rels) {
            entry["file"] = serde_json::Value::String(rel.to_string_lossy().into_owned());
        }
    }
    let mut json = serde_json::to_vec_pretty(&v)?;
    json.push(b'\n');
    *index = json;
    Ok(())
}

/// A table of rows, each ending with where its item was first found.
fn table<'a>(
    headers: &[(&str, Align)],
    rows: impl Iterator<Item = (Vec<String>, Option<&'a Site>)>,
) -> Table {
    let mut t = Table::new(headers);
    for (mut cells, site) in rows {
        cells.push(site.map_or(String::new(), |s| {
            format!(
                "{}:{}",
                s.module.rsplit('/').next().unwrap_or(""),
                s.raw_line
            )
        }));
        t.row(cells);
    }
    t
}
