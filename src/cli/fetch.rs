use super::App;
use crate::report::local::FetchView;
use crate::source::npm;
use clap::Args;

#[derive(Args)]
pub struct FetchArgs {
    /// A published version (2.1.220), a dist-tag (latest, stable), or a
    /// target as the other commands take it (npm:2.1.220/linux-x64).
    pub version: String,
    /// The platform's package (default: this host's).
    #[arg(long, short, value_parser = clap::builder::PossibleValuesParser::new(npm::PLATFORMS))]
    pub platform: Option<String>,
    #[command(flatten)]
    pub out: super::format::OutputArgs,
}

pub fn run(app: &App, a: &FetchArgs) -> anyhow::Result<i32> {
    let g = &app.g;
    let out = app.output(&a.out, crate::report::emit::Format::Text);
    // `npm:VER[/PLATFORM]`, as every other command names a published
    // build, is taken too; a platform in both places must agree.
    let (version, spec_platform) = match a.version.parse::<crate::source::Target>() {
        Ok(crate::source::Target::Npm { version, platform }) if a.version.starts_with("npm:") => {
            (version, platform)
        }
        Err(e) if a.version.starts_with("npm:") => return Err(e.into()),
        _ => (a.version.clone(), None),
    };
    if let (Some(p), Some(q)) = (&spec_platform, &a.platform)
        && p != q
    {
        anyhow::bail!("{} names platform {p} but --platform says {q}", a.version);
    }
    let platform = spec_platform
        .or_else(|| a.platform.clone())
        .unwrap_or_else(|| npm::host_platform().to_string());
    let opts = g.source_options();
    let b = npm::fetch(
        &version,
        &platform,
        &npm::FetchOptions {
            cache_dir: opts.cache_dir,
            progress: opts.progress,
        },
    )?;
    if !g.quiet && !app.json() {
        // Names and versions come from the registry's answer.
        errln!(
            "{} {}@{} ({})",
            if b.cache_hit {
                "cached"
            } else {
                "fetched and verified"
            },
            b.package,
            b.version,
            b.platform
        );
    }
    out.emit(&FetchView {
        package: b.package,
        version: b.version,
        platform: b.platform,
        path: b.program.display().to_string(),
        integrity: b.integrity,
        cache_hit: b.cache_hit,
    })?;
    Ok(0)
}

/// A download drawn as a progress bar on stderr (the CLI gives one only
/// when stderr is a terminal and neither --quiet nor --json is set).
#[derive(Default)]
pub struct DownloadBar(std::sync::Mutex<Option<indicatif::ProgressBar>>);

impl npm::Progress for DownloadBar {
    fn start(&self, what: &str, total: Option<u64>) {
        let bar = indicatif::ProgressBar::new(total.unwrap_or(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("a valid template"),
        );
        bar.set_message(format!("fetching {what}"));
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(bar);
        }
    }

    fn advance(&self, bytes: u64) {
        if let Ok(slot) = self.0.lock()
            && let Some(bar) = &*slot
        {
            bar.inc(bytes);
        }
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.0.lock()
            && let Some(bar) = slot.take()
        {
            bar.finish_and_clear();
        }
    }
}
