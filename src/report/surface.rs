//! `surface`: what the model is told and what the user can set — tools,
//! prompts, environment variables, settings, commands and models.

use super::doc::{Block, Doc, Inline, Kind as Col, Table, fmt};
use super::emit::View;
use crate::analysis::surface::{Kind, Site, Surface};

#[derive(serde::Serialize)]
pub struct SurfaceView<'a> {
    pub target: String,
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<&'a [crate::analysis::surface::tools::Tool]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<&'a [crate::analysis::surface::prompts::Prompt]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<&'a [crate::analysis::surface::env::EnvVar]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<&'a [crate::analysis::surface::settings::Setting]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<&'a [crate::analysis::surface::commands::Command]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<&'a [crate::analysis::surface::models::Model]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schemas: Option<&'a [crate::analysis::surface::schemas::SchemaText]>,
    /// The kinds asked for, in the order asked (the human sections).
    #[serde(skip)]
    pub kinds: Vec<Kind>,
    #[serde(skip)]
    pub surface: &'a Surface,
}

impl View for SurfaceView<'_> {
    fn doc(&self) -> Doc {
        let s = self.surface;
        let mut d = Doc::new(Inline::from("Surface of ").c(self.target.clone())).bare();
        for &k in &self.kinds {
            let n = s.count(k);
            let t = match k {
                Kind::Tools => table(
                    &[
                        ("tool", Col::Code),
                        ("properties", Col::Text),
                        ("prompt bytes", Col::Number),
                        ("site", Col::Text),
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
                        ("id", Col::Code),
                        ("kind", Col::Text),
                        ("title", Col::Text),
                        ("bytes", Col::Number),
                        ("site", Col::Text),
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
                        ("variable", Col::Code),
                        ("read as", Col::Text),
                        ("default", Col::Text),
                        ("site", Col::Text),
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
                        ("key", Col::Code),
                        ("type", Col::Text),
                        ("default", Col::Text),
                        ("site", Col::Text),
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
                        ("command", Col::Code),
                        ("kind", Col::Text),
                        ("aliases", Col::Text),
                        ("site", Col::Text),
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
                        ("model", Col::Code),
                        ("aliases", Col::Text),
                        ("used as", Col::Text),
                        ("site", Col::Text),
                    ],
                    s.models.iter().map(|m| {
                        (
                            vec![m.id.clone(), m.aliases.join(", "), m.uses.join(", ")],
                            m.sites.first(),
                        )
                    }),
                ),
                Kind::Schemas => table(
                    &[
                        ("id", Col::Code),
                        ("schema", Col::Code),
                        ("field", Col::Code),
                        ("bytes", Col::Number),
                        ("site", Col::Text),
                    ],
                    s.schemas.iter().map(|x| {
                        (
                            vec![
                                x.id.clone(),
                                x.schema.clone().unwrap_or_default(),
                                x.field.clone().unwrap_or_default(),
                                fmt::n(x.bytes),
                            ],
                            x.sites.first(),
                        )
                    }),
                ),
            };
            d.section(
                k.as_str(),
                format!("{} ({})", k.as_str(), fmt::n(n)),
                if n > 0 {
                    vec![Block::Table(t)]
                } else {
                    Vec::new()
                },
            );
        }
        d
    }
}

/// Write the prompts below `dir` through the output-folder writer: every
/// conflict is found before the first write, and each file is created new.
pub fn export(
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
            Some(pr) => format!("prompt {} ({})", pr.id, super::doc::elide(&pr.title, 60)),
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
    headers: &[(&str, Col)],
    rows: impl Iterator<Item = (Vec<String>, Option<&'a Site>)>,
) -> Table {
    let mut t = Table::of(headers);
    for (mut cells, site) in rows {
        cells.push(site.map_or(String::new(), |s| {
            format!(
                "{}:{}",
                s.module.rsplit('/').next().unwrap_or(""),
                s.raw_line
            )
        }));
        t.text_row(cells);
    }
    t
}
