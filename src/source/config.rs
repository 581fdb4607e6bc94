//! The user's Claude Code config (`.claude.json`): where it is and reading
//! it, bounded. Only read, never written. What the config means (its cached
//! flag values) is the analysis layer's business
//! (`analysis::gates::CachedFlags::from_config`); this layer only makes sure
//! that what it hands over is a JSON object read safely from a regular file.

use std::path::{Path, PathBuf};

/// The largest config read: real ones keep project histories and reach
/// tens of megabytes; anything far past that is not a config.
pub const MAX_CONFIG_BYTES: u64 = 256 << 20;

/// Why a config cannot be used. Each message names the file as the user
/// gave it, since it is shown as is (`--config: …` or a noted problem).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A FIFO or a device would block or never end.
    #[error("{0} is not a regular file")]
    NotAFile(String),
    #[error("{path} is too large for a config ({len} bytes, at most {MAX_CONFIG_BYTES})")]
    TooLarge { path: String, len: u64 },
    /// It grew past the limit between the size check and the read.
    #[error("{0} is too large for a config")]
    Grew(String),
    #[error("{path} is not valid JSON: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{0} is not a Claude Code config (not a JSON object)")]
    NotAnObject(String),
}

/// A config read: the path as shown to the user, and its top-level object.
#[derive(Debug, Clone)]
pub struct ClaudeConfig {
    pub path: String,
    pub object: serde_json::Map<String, serde_json::Value>,
}

/// Read a config: a regular file of at most [`MAX_CONFIG_BYTES`] holding
/// a JSON object.
pub fn read(path: &Path) -> Result<ClaudeConfig, ConfigError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let cannot = |e: std::io::Error| ConfigError::Io {
        path: shown.clone(),
        source: e,
    };
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(ConfigError::NotAFile(shown));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: shown,
            len: meta.len(),
        });
    }
    // Bounded even if the file grows after the size check.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::Grew(shown));
    }
    let v: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(source) => {
            return Err(ConfigError::Json {
                path: shown,
                source,
            });
        }
    };
    match v {
        serde_json::Value::Object(object) => Ok(ClaudeConfig {
            path: shown,
            object,
        }),
        _ => Err(ConfigError::NotAnObject(shown)),
    }
}

/// The default config: `$CLAUDE_CONFIG_DIR/.claude.json`, else
/// `~/.claude.json`; None when neither variable is set.
pub fn default_path() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join(".claude.json"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_must_be_a_json_object_in_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        std::fs::write(&p, r#"{"a": 1}"#).unwrap();
        let c = read(&p).unwrap();
        assert_eq!(c.object["a"], 1);
        assert_eq!(c.path, p.display().to_string());

        std::fs::write(&p, "[1]").unwrap();
        assert!(matches!(read(&p), Err(ConfigError::NotAnObject(_))));
        std::fs::write(&p, "{").unwrap();
        let e = read(&p).unwrap_err();
        assert!(e.to_string().contains("is not valid JSON"), "{e}");
        assert!(matches!(read(dir.path()), Err(ConfigError::NotAFile(_))));
        assert!(matches!(
            read(&dir.path().join("absent")),
            Err(ConfigError::Io { .. })
        ));
    }
}
