//! One embedded module: its name, stored bytes and the attributes Bun records.

use super::layout::Ptr;
use serde::Serialize;
use std::borrow::Cow;

/// The prefixes Bun puts in front of embedded module names.
pub const ROOTS: [&str; 4] = [
    "/$bunfs/root/",
    "B:/~BUN/root/",
    "B:\\~BUN\\root\\",
    "compiled://root/",
];

/// zstd frame magic (little-endian 0xFD2FB528).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    Binary,
    Latin1,
    Utf8,
    /// Encoding value 2 in Bun ≥ 1.4.1 when the bytes are UTF-16LE.
    Utf16le,
    Unknown,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Binary => "binary",
            Encoding::Latin1 => "latin1",
            Encoding::Utf8 => "utf8",
            Encoding::Utf16le => "utf16le",
            Encoding::Unknown => "?",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleFormat {
    None,
    Esm,
    Cjs,
    Unknown,
}

impl ModuleFormat {
    pub(crate) fn from_raw(raw: Option<u8>) -> Self {
        match raw {
            None | Some(0) => ModuleFormat::None,
            Some(1) => ModuleFormat::Esm,
            Some(2) => ModuleFormat::Cjs,
            Some(_) => ModuleFormat::Unknown,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ModuleFormat::None => "none",
            ModuleFormat::Esm => "esm",
            ModuleFormat::Cjs => "cjs",
            ModuleFormat::Unknown => "?",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Server,
    Client,
}

/// A module of the standalone graph, borrowing from the payload.
#[derive(Debug, Clone)]
pub struct Module<'a> {
    pub index: usize,
    pub name: &'a str,
    /// The stored bytes (possibly zstd-compressed, possibly UTF-16LE).
    pub contents: &'a [u8],
    pub sourcemap: &'a [u8],
    /// The bytecode pointer as recorded; see `BunGraph::bytecode_region`.
    pub bytecode: Ptr,
    pub module_info: &'a [u8],
    pub bytecode_origin_path: &'a [u8],
    pub encoding: Encoding,
    pub encoding_raw: Option<u8>,
    pub loader: &'static str,
    pub loader_raw: u8,
    pub format: ModuleFormat,
    pub side: Option<Side>,
}

impl<'a> Module<'a> {
    /// The name below the bunfs root (`src/entrypoints/cli.js`), with `/` separators.
    pub fn path_below_root(&self) -> Cow<'a, str> {
        let rest = ROOTS
            .iter()
            .find_map(|r| self.name.strip_prefix(r))
            .unwrap_or(self.name);
        if rest.contains('\\') {
            Cow::Owned(rest.replace('\\', "/"))
        } else {
            Cow::Borrowed(rest)
        }
    }

    pub fn is_compressed(&self) -> bool {
        self.contents.starts_with(&ZSTD_MAGIC)
    }

    /// JavaScript source (not an asset that merely ends in `.js`).
    pub fn is_javascript(&self) -> bool {
        matches!(self.loader, "js" | "jsx" | "ts" | "tsx") && !self.is_compressed()
    }
}

/// Classify encoding byte 2: UTF-8 before Bun 1.4.1, UTF-16LE since. We tell
/// them apart by the bytes, as the payload does not record Bun's version.
pub(crate) fn classify_encoding(raw: Option<u8>, contents: &[u8]) -> Encoding {
    match raw {
        None => Encoding::Unknown,
        Some(0) => Encoding::Binary,
        Some(1) => Encoding::Latin1,
        Some(2) => {
            if looks_utf16le(contents) {
                Encoding::Utf16le
            } else {
                Encoding::Utf8
            }
        }
        Some(_) => Encoding::Unknown,
    }
}

fn looks_utf16le(b: &[u8]) -> bool {
    if b.len() < 2 || !b.len().is_multiple_of(2) {
        return false;
    }
    if !b.contains(&0) && std::str::from_utf8(b).is_ok() {
        return false;
    }
    // Text in UTF-16LE: mostly NUL high bytes for ASCII-range characters, and
    // it must decode without unpaired surrogates.
    let sample = &b[..b.len().min(4096)];
    let nul_high = sample.chunks_exact(2).filter(|c| c[1] == 0).count();
    nul_high * 4 >= sample.len() / 2
        && char::decode_utf16(
            sample
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        )
        .take(sample.len() / 2 - 1)
        .all(|r| r.is_ok())
}

pub fn utf16le_to_utf8(b: &[u8]) -> String {
    char::decode_utf16(b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])))
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_detection() {
        let s: Vec<u8> = "# Title\nhello → world"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(classify_encoding(Some(2), &s), Encoding::Utf16le);
        assert_eq!(utf16le_to_utf8(&s), "# Title\nhello → world");
        assert_eq!(
            classify_encoding(Some(2), "plain → utf8".as_bytes()),
            Encoding::Utf8
        );
        assert_eq!(classify_encoding(Some(1), b"x"), Encoding::Latin1);
    }
}

/// Why a module name cannot be written below an output folder.
#[derive(Debug, thiserror::Error)]
#[error("module name {name:?} would escape the output folder ({why})")]
pub struct UnsafeName {
    pub name: String,
    pub why: &'static str,
}

impl Module<'_> {
    /// The module's path below the bunfs root as a relative path that stays
    /// inside any folder it is joined to: no `..`, no root, no drive letter,
    /// no NUL, no empty or `.` components.
    pub fn relative_path(&self) -> Result<std::path::PathBuf, UnsafeName> {
        let bad = |why| UnsafeName {
            name: self.name.to_string(),
            why,
        };
        let rel = self.path_below_root();
        if rel.is_empty() {
            return Err(bad("empty path"));
        }
        if rel.contains('\0') {
            return Err(bad("NUL byte"));
        }
        if rel.starts_with('/') {
            return Err(bad("absolute path"));
        }
        let mut out = std::path::PathBuf::new();
        for part in rel.split('/') {
            match part {
                "" | "." => return Err(bad("empty or '.' component")),
                ".." => return Err(bad("'..' component")),
                p if p.len() >= 2 && p.as_bytes()[1] == b':' => return Err(bad("drive letter")),
                p if p.chars().any(|c| c.is_control()) => return Err(bad("control character")),
                p => out.push(p),
            }
        }
        Ok(out)
    }
}
