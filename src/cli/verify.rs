use super::format::OutputArgs;
use super::{App, TARGET_HELP};
use crate::bun::digest::{bundle_digest, sha256_hex};
use crate::report::integrity::VerifyView;
use clap::Args;

#[derive(Args)]
#[command(group = clap::ArgGroup::new("check").required(true).args(["sha256", "published", "platforms"]))]
pub struct VerifyArgs {
    #[arg(value_name = "TARGET", help = TARGET_HELP, required_unless_present = "platforms")]
    pub target: Option<String>,
    /// The expected SHA-256 (64 hex digits).
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Compare with the published package of the build's own version and
    /// platform (fetched into the cache): container parts, modules,
    /// functions, bytecode and code signature.
    #[arg(long, conflicts_with_all = ["module", "file", "payload", "digest"])]
    pub published: bool,
    /// Fetch every platform's build of VERSION and compare their JavaScript.
    #[arg(long, value_name = "VERSION", conflicts_with_all = ["target", "module", "file", "payload", "digest"])]
    pub platforms: Option<String>,
    /// Check this module (full name or path below the bunfs root) instead of the bundle.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["file", "payload", "digest"])]
    pub module: Option<String>,
    /// Check the whole file instead of the bundle.
    #[arg(long, conflicts_with_all = ["payload", "digest"])]
    pub file: bool,
    /// Check the Bun payload instead of the bundle.
    #[arg(long, conflicts_with = "digest")]
    pub payload: bool,
    /// Check the bundle digest over all JavaScript modules (docs/guide/hashing.md).
    #[arg(long)]
    pub digest: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(app: &App, a: &VerifyArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let out = app.output(&a.out, crate::report::emit::Format::Text);
    if let Some(version) = &a.platforms {
        return super::integrity::platforms(app, &out, version);
    }
    let Some(target) = a.target.as_deref() else {
        usage!("verify needs a TARGET");
    };
    if a.published {
        return super::integrity::published(app, &out, target);
    }
    let sha256 = a.sha256.as_deref().unwrap_or_default();
    let expected = sha256.trim().to_ascii_lowercase();
    if expected.len() != 64 || !expected.bytes().all(|b| b.is_ascii_hexdigit()) {
        usage!("--sha256 needs 64 hex digits, got {:?}", sha256);
    }
    let opened = app.open(target)?;
    // --file needs no parsing at all: the file may not even be a build.
    let (what, actual) = if a.file {
        ("file".to_string(), sha256_hex(opened.bytes()))
    } else {
        let build = app.build(&opened)?;
        let graph = &build.graph;
        if a.payload {
            ("payload".to_string(), sha256_hex(build.located.payload))
        } else if a.digest {
            (
                "bundle digest".to_string(),
                bundle_digest(graph, g.budget())?.0,
            )
        } else if let Some(name) = &a.module {
            let Some(m) = graph.find(name) else {
                usage!("no module named {name:?} (see `cc-teardown ls`)");
            };
            (format!("module {}", m.name), super::hash::module_sha(m))
        } else {
            let m = graph.entry_module();
            (format!("bundle {}", m.name), super::hash::module_sha(m))
        }
    };
    let ok = actual == expected;
    out.emit(&VerifyView {
        target: opened.label.clone(),
        what,
        expected,
        actual,
        ok,
    })?;
    Ok(if ok { 0 } else { 1 })
}
