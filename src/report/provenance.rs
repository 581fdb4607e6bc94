//! Who made a report, when and how: the last lines of every published
//! rendering. Paths are shown relative to the home folder, so a page does
//! not tell where its author keeps things (the cache path least of all).

use super::doc::Inline;

#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// UTC, to the minute.
    pub date: String,
    /// The command line, paths under the home folder as `~/…`.
    pub command: String,
    pub analysis_version: String,
}

impl Provenance {
    /// This run's: now (or `SOURCE_DATE_EPOCH`, for reproducible output)
    /// and its arguments.
    pub fn of_this_run() -> Provenance {
        let secs = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
            });
        let mut args: Vec<String> = std::env::args().map(|a| home_relative(&a)).collect();
        if let Some(first) = args.first_mut() {
            // The program as users type it, not where it was installed.
            *first = "cc-teardown".into();
        }
        Provenance {
            date: utc(secs),
            command: args
                .iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" "),
            analysis_version: crate::analysis::analysed::ANALYSIS_VERSION.to_string(),
        }
    }

    pub fn facts(&self, tool: &str) -> Vec<(String, Inline)> {
        vec![
            (
                "made by".into(),
                Inline::from(tool.to_string())
                    .t(", analysis ")
                    .c(self.analysis_version.clone()),
            ),
            ("date".into(), Inline::from(self.date.clone())),
            ("command".into(), Inline::code(self.command.clone())),
        ]
    }
}

/// A word quoted for a POSIX shell when it needs it.
fn shell_word(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+~%".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// `p` with the home folder written `~`.
pub fn home_relative(p: &str) -> String {
    let Some(home) = std::env::var_os("HOME").filter(|h| h.len() > 1) else {
        return p.to_string();
    };
    let home = home.to_string_lossy();
    let home = home.trim_end_matches('/');
    if p == home {
        return "~".into();
    }
    match p.strip_prefix(home) {
        Some(rest) if rest.starts_with('/') => format!("~{rest}"),
        _ => match p.split_once('=') {
            // --option=PATH
            Some((k, v)) if v.starts_with(home) => format!("{k}={}", home_relative(v)),
            _ => p.to_string(),
        },
    }
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM UTC` (the civil-from-days
/// algorithm of H. Hinnant; no time zone data needed for UTC).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_words() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_085_660), "2026-12-01 00:41 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(
            shell_word("npm:2.1.220/darwin-arm64"),
            "npm:2.1.220/darwin-arm64"
        );
        assert_eq!(shell_word("a b"), "'a b'");
    }
}
