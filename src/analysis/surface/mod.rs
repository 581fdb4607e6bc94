//! The whole surface of a build: the tools the agent can call (with their
//! input schemas), the prompts it sends, the environment variables and
//! settings it reads, its slash commands and the models it knows. Each kind
//! is found by structure and by the values the static evaluator computes —
//! never by minified names or fixed versions (docs/guide/surface.md) — and every
//! item says where it was found.

pub mod commands;
pub mod env;
pub mod models;
pub mod prompts;
pub mod reach;
pub mod schemas;
pub mod settings;
pub mod tools;

use crate::analysis::diff::lines::DiffBudget;
use crate::js::code::{CodeIndex, IndexedModule};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Where an item was found: the module, its raw line, and the byte offset
/// in the module's source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Site {
    pub module: String,
    pub raw_line: u32,
    pub offset: u32,
}

impl Site {
    /// The site of byte `offset` of module `m`.
    pub fn at(m: &IndexedModule, offset: u32) -> Site {
        Site {
            module: m.name.clone(),
            raw_line: m.raw_pos(offset).0,
            offset,
        }
    }
}

/// The kinds of surface, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Kind {
    Tools,
    Prompts,
    Env,
    Settings,
    Commands,
    Models,
    Schemas,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Tools,
        Kind::Prompts,
        Kind::Env,
        Kind::Settings,
        Kind::Commands,
        Kind::Models,
        Kind::Schemas,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Env => "env",
            Kind::Settings => "settings",
            Kind::Commands => "commands",
            Kind::Models => "models",
            Kind::Schemas => "schemas",
        }
    }
}

/// A value read from JSON whose bytes are checked to be UTF-8 at once: a
/// read from bytes checks each string apart, a cost that showed in a warm
/// `surface` (tens of thousands of short strings).
fn from_json<'de, T: Deserialize<'de>>(json: &'de [u8]) -> serde_json::Result<T> {
    let text = std::str::from_utf8(json)
        .map_err(|e| serde::de::Error::custom(format_args!("not UTF-8: {e}")))?;
    serde_json::from_str(text)
}

/// The JSON parts a surface is stored in ([`Surface::stored_parts`]).
pub struct StoredParts {
    /// Everything but the prompts.
    pub rest: Vec<u8>,
    /// The prompts without their texts.
    pub prompts: Vec<u8>,
    /// The prompts' texts, in the prompts' order.
    pub texts: Vec<u8>,
}

/// A surface but its prompts, as stored: borrowed to be written, owned
/// when read back.
#[derive(Serialize, Deserialize)]
struct StoredRest<'a> {
    tools: Cow<'a, [tools::Tool]>,
    env: Cow<'a, [env::EnvVar]>,
    settings: Cow<'a, [settings::Setting]>,
    commands: Cow<'a, [commands::Command]>,
    models: Cow<'a, [models::Model]>,
    #[serde(default)]
    schemas: Cow<'a, [schemas::SchemaText]>,
}

/// One build's surface, one list per kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Surface {
    pub tools: Vec<tools::Tool>,
    pub prompts: Vec<prompts::Prompt>,
    pub env: Vec<env::EnvVar>,
    pub settings: Vec<settings::Setting>,
    pub commands: Vec<commands::Command>,
    pub models: Vec<models::Model>,
    /// The descriptions in schemas no tool or setting takes (a protocol's
    /// messages): not the model's, kept apart from the prompts.
    #[serde(default)]
    pub schemas: Vec<schemas::SchemaText>,
}

impl Surface {
    /// The surface as a store keeps it, in three parts of JSON: everything
    /// but the prompts, the prompts without their texts, and the texts (a
    /// list in the prompts' order). Kept apart so that the parts are read
    /// back on both cores, and so that a view that shows no prompt's text
    /// (the terminal's, Markdown, HTML) reads none: the texts are two
    /// thirds of the prompts' JSON (2.1.332: 7 of 13 MB).
    pub fn stored_parts(&self) -> serde_json::Result<StoredParts> {
        // Every field named: one added to `Surface` fails to compile here
        // (and in `from_parts`) rather than going unstored.
        let Surface {
            tools,
            prompts,
            env,
            settings,
            commands,
            models,
            schemas,
        } = self;
        let rest = StoredRest {
            tools: Cow::Borrowed(tools),
            env: Cow::Borrowed(env),
            settings: Cow::Borrowed(settings),
            commands: Cow::Borrowed(commands),
            models: Cow::Borrowed(models),
            schemas: Cow::Borrowed(schemas),
        };
        let heads: Vec<_> = prompts.iter().map(prompts::StoredHead::of).collect();
        let texts: Vec<&str> = prompts.iter().map(|p| p.text.as_str()).collect();
        let (rest, (heads, texts)) = rayon::join(
            || serde_json::to_vec(&rest),
            || rayon::join(|| serde_json::to_vec(&heads), || serde_json::to_vec(&texts)),
        );
        Ok(StoredParts {
            rest: rest?,
            prompts: heads?,
            texts: texts?,
        })
    }

    /// A surface read back from its stored parts ([`Surface::stored_parts`]).
    /// Without `texts`, every prompt's `text` is empty (its `bytes` and
    /// everything else are kept): an outline for the views that show no
    /// text. Texts that do not pair one to one with the prompts are an
    /// error, never a surface with texts under the wrong ids.
    pub fn from_parts(
        rest: &[u8],
        prompts: &[u8],
        texts: Option<&[u8]>,
    ) -> serde_json::Result<Surface> {
        let (rest, (prompts, texts)) = rayon::join(
            || from_json::<StoredRest<'static>>(rest),
            || {
                rayon::join(
                    || from_json::<Vec<prompts::Prompt>>(prompts),
                    || texts.map(from_json::<Vec<String>>).transpose(),
                )
            },
        );
        let StoredRest {
            tools,
            env,
            settings,
            commands,
            models,
            schemas,
        } = rest?;
        let mut prompts = prompts?;
        if let Some(texts) = texts? {
            if texts.len() != prompts.len() {
                return Err(serde::de::Error::invalid_length(
                    texts.len(),
                    &"one text a prompt",
                ));
            }
            for (p, t) in prompts.iter_mut().zip(texts) {
                p.text = t;
            }
        }
        Ok(Surface {
            tools: tools.into_owned(),
            prompts,
            env: env.into_owned(),
            settings: settings.into_owned(),
            commands: commands.into_owned(),
            models: models.into_owned(),
            schemas: schemas.into_owned(),
        })
    }

    /// How many items of `kind` there are.
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Tools => self.tools.len(),
            Kind::Prompts => self.prompts.len(),
            Kind::Env => self.env.len(),
            Kind::Settings => self.settings.len(),
            Kind::Commands => self.commands.len(),
            Kind::Models => self.models.len(),
            Kind::Schemas => self.schemas.len(),
        }
    }
}

/// Find every kind in an indexed build. The kinds are independent, so they
/// are found side by side: the prompts, which take the longest, first on
/// this core, and the rest on the other as it comes free (it starts with
/// the build's other analyses).
pub fn extract(ci: &CodeIndex) -> Surface {
    let ((mut prompts, tools), ((env, (settings, handed)), (commands, models))) = rayon::join(
        || rayon::join(|| prompts::find(ci), || tools::find(ci)),
        || {
            rayon::join(
                || rayon::join(|| env::find(ci), || settings_handed(ci)),
                || rayon::join(|| commands::find(ci), || models::find(ci)),
            )
        },
    );
    // A tool's prompt is a prompt even when no single literal holds it.
    prompts::add_tool_prompts(&mut prompts, &tools);
    prompts::place_tool_parameters(&mut prompts, &tools);
    if handed {
        prompts::add_setting_prompts(&mut prompts, &settings);
    }
    prompts::drop_unplaced_guesses(&mut prompts);
    // A description the tools, settings or prompts show is theirs: each
    // text has one home.
    let mut taken = std::collections::BTreeSet::new();
    for t in &tools {
        descriptions(&t.input_schema, &mut taken);
    }
    taken.extend(settings.iter().filter_map(|s| s.description.as_deref()));
    taken.extend(prompts.iter().map(|p| p.text.as_str()));
    let schemas = schemas::find(ci, &taken);
    Surface {
        tools,
        prompts,
        env,
        settings,
        commands,
        models,
        schemas,
    }
}

/// The settings, and whether their descriptions are the model's: they are
/// when their schema is handed to it (a skill that edits settings embeds
/// its JSON Schema). Its tracer's tables (about 35 MB) now live beside the
/// prompts' tracer; that does not raise the peak, which comes while the
/// build is indexed (measured on 2.1.240 and 2.1.332).
fn settings_handed(ci: &CodeIndex) -> (Vec<settings::Setting>, bool) {
    let (settings, shape) = settings::find_shape(ci);
    let handed = shape.is_some_and(|s| prompts::schema_is_handed(ci, s.module, s.at));
    (settings, handed)
}

/// Every `description` in a JSON Schema.
fn descriptions<'a>(s: &'a serde_json::Value, out: &mut std::collections::BTreeSet<&'a str>) {
    match s {
        serde_json::Value::Object(o) => {
            if let Some(d) = o.get("description").and_then(|d| d.as_str()) {
                out.insert(d);
            }
            o.values().for_each(|v| descriptions(v, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| descriptions(v, out)),
        _ => {}
    }
}

/// Names in `b` and not in `a` (added), and in `a` not in `b` (removed),
/// each sorted: the diff of kinds whose items are compared by name only.
pub fn names_diff<'x>(
    a: impl IntoIterator<Item = &'x str>,
    b: impl IntoIterator<Item = &'x str>,
) -> NamesDiff {
    let a: std::collections::BTreeSet<&str> = a.into_iter().collect();
    let b: std::collections::BTreeSet<&str> = b.into_iter().collect();
    NamesDiff {
        added: b.difference(&a).map(|s| s.to_string()).collect(),
        removed: a.difference(&b).map(|s| s.to_string()).collect(),
        unchanged: a.intersection(&b).count(),
    }
}

/// Items added and removed, by name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NamesDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
}

impl NamesDiff {
    /// No name added or removed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// The surface sections of a diff.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SurfaceDiff {
    pub tools: tools::ToolsDiff,
    pub prompts: prompts::PromptsDiff,
    pub env: NamesDiff,
    pub settings: NamesDiff,
    pub commands: NamesDiff,
    pub models: NamesDiff,
    /// Schema descriptions by id.
    pub schemas: NamesDiff,
}

/// Compare two builds' surfaces; their texts' word diffs within `budget`.
pub fn diff(a: &Surface, b: &Surface, budget: &DiffBudget) -> SurfaceDiff {
    SurfaceDiff {
        tools: tools::diff(&a.tools, &b.tools, budget),
        prompts: prompts::diff(&a.prompts, &b.prompts, budget),
        env: names_diff(
            a.env.iter().map(|e| e.name.as_str()),
            b.env.iter().map(|e| e.name.as_str()),
        ),
        settings: names_diff(
            a.settings.iter().map(|s| s.key.as_str()),
            b.settings.iter().map(|s| s.key.as_str()),
        ),
        commands: names_diff(
            a.commands.iter().map(|c| c.name.as_str()),
            b.commands.iter().map(|c| c.name.as_str()),
        ),
        models: names_diff(
            a.models.iter().map(|m| m.id.as_str()),
            b.models.iter().map(|m| m.id.as_str()),
        ),
        schemas: names_diff(
            a.schemas.iter().map(|x| x.id.as_str()),
            b.schemas.iter().map(|x| x.id.as_str()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testjs;

    /// A settings schema built lazily, and a place `use_schema` uses it.
    fn settings_build(use_schema: &str) -> Surface {
        let filler: String = (0..23)
            .map(|i| format!("key{i}: z.string().optional(),"))
            .collect();
        let ci = testjs::script(&format!(
            r#"
var z = {{}};
function once(f) {{ let v; return () => v ??= f(); }}
function settingsShape(strict) {{ return z.object({{
  permissions: z.object({{}}).optional().describe("Which tools may run without asking, and which never may."),
  cleanupDays: z.number().optional().describe("How many days old transcripts are kept before they go."),
  probe: z.object({{ depth: z.number().optional().describe("How deep the slow probe looks on each start.") }}).optional().describe("@internal Whether the next start runs the slow probe first."),
  {filler} }}).passthrough(); }}
var getSchema = once(() => settingsShape(false));
{use_schema}
"#
        ));
        extract(&ci)
    }

    fn setting_prompts(s: &Surface) -> Vec<(&str, &str, Option<&str>)> {
        s.prompts
            .iter()
            .filter(|p| p.id.starts_with("setting-"))
            .map(|p| (p.id.as_str(), p.kind.as_str(), p.owner.as_deref()))
            .collect()
    }

    #[test]
    fn settings_descriptions_are_data_when_a_skill_embeds_their_schema() {
        let s = settings_build(
            r#"
function jsonSchema(s) { return z.toJSONSchema(s, { io: "input" }); }
var skill = { type: "prompt", name: "edit-settings", async getPromptForCommand(args) {
  let schema = jsonSchema(getSchema());
  let text = `Change the settings file as asked, keeping to its schema below.

${JSON.stringify(schema, null, 2)}`;
  return [{ type: "text", text }]; } };
"#,
        );
        assert_eq!(s.settings.len(), 27);
        assert_eq!(
            setting_prompts(&s),
            vec![
                ("setting-cleanupdays", "data", Some("cleanupDays")),
                ("setting-permissions", "data", Some("permissions")),
            ]
        );
        let p = s
            .prompts
            .iter()
            .find(|p| p.id == "setting-permissions")
            .unwrap();
        assert_eq!(p.title, "Data: permissions setting");
        assert!(p.text.starts_with("Which tools may run"));
    }

    #[test]
    fn a_schema_only_checked_against_is_not_handed_to_the_model() {
        let s = settings_build(
            r#"
function loadSettings(x) { let r = getSchema().passthrough().safeParse(x); return r.success ? r.data : {}; }
var agent = { agentType: "helper", whenToUse: "Use it for small things.", getSystemPrompt() {
  let s = loadSettings(readFile());
  return `You are a helper agent. Answer every question in ${s.language}, briefly.`; } };
"#,
        );
        assert_eq!(s.settings.len(), 27);
        assert!(
            s.prompts.iter().any(|p| p.kind == "agent"),
            "{:?}",
            s.prompts
        );
        assert_eq!(setting_prompts(&s), vec![]);
    }

    #[test]
    fn a_prompt_that_is_a_parameters_description_is_that_parameters() {
        // The option's schema is shared by the input and the output and
        // built several calls away from the tool: the tools' reading of
        // the input schema knows the text is a parameter's when the trace
        // from the literal does not.
        let ci = crate::analysis::testjs::script(
            r#"
var z = {};
var lazy = (f) => { let c = null; return () => c ??= f(); };
var OPTION = lazy(() => z.object({ label: z.string().describe("You will see this label on the button you press when the choice comes up; keep it to a few plain words so that you can read it at a glance, and make each label different from every other label you offer in the same question.") }));
function listOf(o) { return z.object({ options: z.array(o).min(2) }); }
function withMeta(o) { return z.object({ body: o, meta: z.object({ source: z.string() }) }); }
var INPUT = lazy(() => withMeta(listOf(OPTION())));
var OUTPUT = lazy(() => z.object({ chosen: OPTION(), asked: listOf(OPTION()) }));
var T = build({ name: "Choose", async prompt() { return "Offer the user a choice."; },
  get inputSchema() { return INPUT(); }, get outputSchema() { return OUTPUT(); }, async call() {} });
"#,
        );
        let s = extract(&ci);
        let t = s
            .tools
            .iter()
            .find(|t| t.name == "Choose")
            .expect("the tool");
        assert!(
            t.input_schema["properties"]["body"]["properties"]["options"]["items"]["properties"]
                ["label"]["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("You will see this label")),
            "{}",
            t.input_schema
        );
        let p = s
            .prompts
            .iter()
            .find(|p| p.text.starts_with("You will see this label"))
            .unwrap_or_else(|| panic!("{:#?} {:#?}", s.prompts, s.schemas));
        assert_eq!(p.kind, "tool-parameter");
        assert_eq!(p.owner.as_deref(), Some("Choose.body.options.label"));
        assert_eq!(p.title, "Tool parameter: Choose.body.options.label");
    }

    #[test]
    fn a_text_wrapped_over_source_lines_is_one_text() {
        // `"a " + "b"`: one text the source wraps, whatever place it
        // reaches — a tool's prompt (assembled, and its piece) or a
        // steer's return. A template among the parts keeps its hole.
        let ci = crate::analysis::testjs::script(
            r#"
var z = {};
var T = build({ name: "Pager",
  async prompt() { return "Show one page of the file at a time, " + "and say how many pages are left " + `after it, for ${opts.user} to read.`; },
  validationErrorSteer(e) { if ("all" in e) return "The pager shows one page at a time; " + "it does not take a list of pages to show."; return null; },
  get inputSchema() { return z.object({ page: z.number() }); }, async call() {} });
"#,
        );
        let s = extract(&ci);
        let whole = "Show one page of the file at a time, and say how many pages are left after it, for ${user} to read.";
        let t = s
            .tools
            .iter()
            .find(|t| t.name == "Pager")
            .expect("the tool");
        assert_eq!(t.description, whole);
        let p = s
            .prompts
            .iter()
            .find(|p| p.id == "tool-description-pager")
            .expect("the tool's prompt");
        assert_eq!(p.text, whole);
        let steer = s
            .prompts
            .iter()
            .find(|p| p.text.starts_with("The pager shows"))
            .expect("the steer");
        assert_eq!(
            steer.text,
            "The pager shows one page at a time; it does not take a list of pages to show."
        );
        assert_eq!(steer.kind, "system-reminder");
        // No part is a text of its own.
        for part in ["and say how many", "after it, for", "it does not take"] {
            assert!(
                !s.prompts.iter().any(|p| p.text.starts_with(part)),
                "{part}: {:#?}",
                s.prompts
            );
        }
    }
}
