//! `surface`: what the model is told and what the user can set — tools,
//! prompts, environment variables, settings, commands and models.

use super::doc::{Block, Doc, Inline, Kind as Col, Table, fmt};
use super::emit::View;
use crate::analysis::surface::{Kind, Site, Surface};
use serde::Serialize;
use std::io::Write;

impl SurfaceView<'_> {
    fn write_json_on_both_cores(&self, w: &mut dyn Write) -> Result<(), serde_json::Error> {
        use super::emit::write_json_list;
        use super::escape::{SafeJson, new_line};
        let io = serde_json::Error::io;
        let field = |w: &mut dyn Write, first: bool, key: &str| {
            if !first {
                w.write_all(b",").map_err(io)?;
            }
            new_line(w, 1).map_err(io)?;
            write!(w, "\"{key}\": ").map_err(io)
        };
        w.write_all(b"{").map_err(io)?;
        field(w, true, "target")?;
        let at_one = || SafeJson::at_depth(1);
        self.target
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut *w,
                at_one(),
            ))?;
        field(w, false, "version")?;
        self.version
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut *w,
                at_one(),
            ))?;
        macro_rules! list {
            ($($name:ident),*) => {$(
                if let Some(l) = self.$name {
                    field(w, false, stringify!($name))?;
                    write_json_list(w, l, 1)?;
                }
            )*};
        }
        list!(tools, prompts, env, settings, commands, models, schemas);
        new_line(w, 0).map_err(io)?;
        w.write_all(b"}\n").map_err(io)
    }
}

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
    /// The fields as serde writes them (the same names, order and
    /// omissions: a test holds the two equal), each list on both cores.
    fn write_json(&self, w: &mut dyn Write) -> Option<Result<(), serde_json::Error>> {
        Some(self.write_json_on_both_cores(w))
    }

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

#[cfg(test)]
mod tests {
    use super::SurfaceView;
    use crate::analysis::surface::{self, Kind};
    use crate::report::emit::{View, to_json};

    /// The surface's own JSON writer (lists on all cores) writes the bytes
    /// serde does, whatever is asked for: every list, some, none, empty
    /// lists, a missing version, and texts with characters both escape.
    #[test]
    fn the_json_written_on_all_cores_is_serdes() {
        let ci = crate::analysis::testjs::script(
            r#"
            const probe = {
              name: "Probe",
              async prompt() { return "Use this tool to probe the files you are asked about, and report what you find to the user."; },
              inputSchema: { type: "object", properties: { path: { type: "string", description: "The file to probe" } } },
              async call(e) { return process.env.CC_FIXTURE_PROBE_DEPTH; },
            };
            const model = "claude-fixture-4-5";
            "#,
        );
        let mut s = surface::extract(&ci);
        let mut odd = s.prompts.first().cloned().expect("a prompt");
        for (i, text) in [
            "quote \" backslash \\ line\nbreak\ttab \u{1b}[2J",
            "bidi \u{202e}override\u{2066} del \u{7f} c1 \u{9b} sep \u{2028} — “typographic” …",
            "",
        ]
        .into_iter()
        .enumerate()
        {
            odd.id = format!("odd-{i}");
            odd.text = text.to_string();
            s.prompts.push(odd.clone());
        }
        // Enough prompts for several runs on the cores.
        for i in 0..300 {
            odd.id = format!("many-{i}");
            s.prompts.push(odd.clone());
        }
        let view = |version: Option<&str>, kinds: &[Kind], s: &surface::Surface| {
            let on = |k: Kind| kinds.contains(&k);
            let v = SurfaceView {
                target: "npm:0.0.0/\u{202e}fixture".to_string(),
                version: version.map(str::to_string),
                tools: on(Kind::Tools).then_some(&s.tools[..]),
                prompts: on(Kind::Prompts).then_some(&s.prompts[..]),
                env: on(Kind::Env).then_some(&s.env[..]),
                settings: on(Kind::Settings).then_some(&s.settings[..]),
                commands: on(Kind::Commands).then_some(&s.commands[..]),
                models: on(Kind::Models).then_some(&s.models[..]),
                schemas: on(Kind::Schemas).then_some(&s.schemas[..]),
                kinds: kinds.to_vec(),
                surface: s,
            };
            let mut ours = Vec::new();
            v.write_json(&mut ours)
                .expect("a writer of its own")
                .expect("JSON");
            (
                String::from_utf8(ours).expect("UTF-8"),
                to_json(&v).expect("JSON"),
            )
        };
        let empty = surface::Surface::default();
        for (version, kinds, s) in [
            (Some("2.1.0"), Kind::ALL.to_vec(), &s),
            (None, Kind::ALL.to_vec(), &s),
            (Some("2.1.0"), vec![Kind::Prompts], &s),
            (Some("2.1.0"), vec![Kind::Env, Kind::Models], &s),
            (None, vec![], &s),
            (Some("2.1.0"), Kind::ALL.to_vec(), &empty),
        ] {
            let (ours, serdes) = view(version, &kinds, s);
            assert_eq!(ours, serdes, "{version:?} {kinds:?}");
        }
        assert!(s.prompts.len() > 300 && !s.tools.is_empty());
        let (all, _) = view(Some("2.1.0"), &Kind::ALL, &s);
        assert!(all.contains("\\u202e") && all.contains("\\u007f") && !all.contains('\u{202e}'));
    }
}
