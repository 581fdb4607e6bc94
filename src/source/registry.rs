//! Where the npm registry is. Never hard-coded: npm's own configuration says,
//! in npm's order of precedence — environment, project `.npmrc`, user
//! `.npmrc`, then whatever `npm config get registry` answers.

use super::SourceError;
use std::path::{Path, PathBuf};

pub fn registry_url() -> Result<String, SourceError> {
    for var in ["NPM_CONFIG_REGISTRY", "npm_config_registry"] {
        if let Ok(v) = std::env::var(var)
            && !v.trim().is_empty()
        {
            return Ok(normalise(&v));
        }
    }
    let mut rcs: Vec<PathBuf> = Vec::new();
    if let Ok(dir) = std::env::current_dir() {
        rcs.push(dir.join(".npmrc"));
    }
    if let Ok(p) = std::env::var("NPM_CONFIG_USERCONFIG") {
        rcs.push(PathBuf::from(p));
    }
    if let Some(home) = std::env::var_os("HOME") {
        rcs.push(Path::new(&home).join(".npmrc"));
    }
    for rc in rcs {
        if let Some(url) = std::fs::read_to_string(&rc)
            .ok()
            .and_then(|t| from_npmrc(&t))
        {
            return Ok(normalise(&url));
        }
    }
    let out = std::process::Command::new("npm")
        .args(["config", "get", "registry"])
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let url = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if url.starts_with("http") {
                return Ok(normalise(&url));
            }
            Err(SourceError::NoRegistry)
        }
        _ => Err(SourceError::NoRegistry),
    }
}

/// The `registry=` line of an `.npmrc` (scoped registries are ignored).
fn from_npmrc(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with(';'))
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "registry").then(|| v.trim().trim_matches('"').to_string())
        })
        .filter(|v| v.starts_with("http"))
}

fn normalise(url: &str) -> String {
    let mut u = url.trim().to_string();
    if !u.ends_with('/') {
        u.push('/');
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npmrc_registry_line() {
        let rc = "# comment\n@scope:registry=http://scoped.invalid/\nregistry = \"http://mirror.invalid/npm\"\n";
        assert_eq!(from_npmrc(rc).as_deref(), Some("http://mirror.invalid/npm"));
        assert_eq!(from_npmrc("color=false\n"), None);
        assert_eq!(normalise("http://x.invalid/npm"), "http://x.invalid/npm/");
    }
}
