//! Layer 1: executable containers. Bytes in, Bun payload slice out.
//!
//! One reader per format (`macho`, `elf`, `pe`, `js`) behind the
//! [`ContainerReader`] trait, in the manner of the `object` crate; the
//! `appended` module handles payloads glued to the end of a file by older Bun
//! releases, and is also the last resort for unknown layouts.

mod appended;
pub(crate) mod bytes;
pub mod codesign;
mod elf;
mod js;
mod macho;
pub mod payload;
mod pe;

use serde::Serialize;
use std::ops::Range;

#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("not an executable or JavaScript file (unrecognised header)")]
    UnknownFormat,
    #[error("{format} file has no Bun payload (no `{section}` section and no Bun trailer)")]
    NoPayload {
        format: &'static str,
        section: &'static str,
    },
    #[error("malformed {format} headers: {detail}")]
    Malformed {
        format: &'static str,
        detail: String,
    },
    #[error("file is truncated: {0}")]
    Truncated(String),
    #[error(
        "Bun section length header ({header}) disagrees with the payload it precedes (section is {section_len} bytes)"
    )]
    HeaderMismatch { header: u64, section_len: u64 },
    #[error("fat Mach-O has no {wanted} slice (slices: {available})")]
    NoSuchArch { wanted: String, available: String },
    #[error("asked for the {wanted} architecture, but this {format} file is {actual}")]
    WrongArch {
        wanted: String,
        format: &'static str,
        actual: String,
    },
    #[error("asked for the {wanted} architecture, but a {format} has no architecture")]
    NoArch {
        wanted: String,
        format: &'static str,
    },
}

/// The container formats we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Macho,
    Elf,
    Pe,
    Js,
    /// A bare Bun payload with no container around it.
    Raw,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Macho => "macho",
            Format::Elf => "elf",
            Format::Pe => "pe",
            Format::Js => "js",
            Format::Raw => "raw",
        }
    }
}

/// How the payload was found inside the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// A named section (`__BUN,__bun` or `.bun`) with a length header.
    Section,
    /// `[exe][payload][u64 file size]` at the end of the file (older Bun).
    Appended,
    /// No section or footer: found by scanning backwards for the trailer.
    TrailerScan,
    /// The whole file is JavaScript.
    WholeFile,
}

/// One architecture slice of a fat Mach-O.
#[derive(Debug, Clone, Serialize)]
pub struct Slice {
    pub arch: String,
    pub offset: u64,
    pub size: u64,
}

/// Where the payload is and how it was found.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerInfo {
    pub format: Format,
    pub arch: Option<String>,
    /// Slices of a fat Mach-O (empty otherwise).
    pub slices: Vec<Slice>,
    pub placement: Placement,
    /// e.g. `__BUN,__bun` or `.bun`.
    pub section: Option<String>,
    /// File offset of the section (or of the payload when there is none).
    pub section_offset: u64,
    pub section_size: u64,
    /// Width in bytes of the section's length header (4 or 8), if any.
    pub header_width: Option<u8>,
    /// File offset of the first payload byte.
    pub payload_offset: u64,
    pub payload_size: u64,
}

/// The payload located inside the file: a borrowed slice plus how it was found.
pub struct Located<'a> {
    pub info: ContainerInfo,
    pub payload: &'a [u8],
}

/// An architecture a build may be asked for (`--arch`). Its name is the one
/// the readers report in [`ContainerInfo::arch`]; the command line also
/// understands `aarch64`, `x64` and `amd64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Arch {
    #[cfg_attr(feature = "clap", value(alias = "aarch64"))]
    Arm64,
    #[cfg_attr(
        feature = "clap",
        value(name = "x86_64", alias = "x64", alias = "amd64")
    )]
    X86_64,
}

impl Arch {
    /// The name the readers report for this architecture.
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::Arm64 => "arm64",
            Arch::X86_64 => "x86_64",
        }
    }
}

/// Options that steer container reading.
#[derive(Debug, Clone, Default)]
pub struct ContainerOptions {
    /// The architecture wanted: the slice of a fat Mach-O (default arm64);
    /// any other file must be of it, else [`ContainerError::WrongArch`].
    pub arch: Option<Arch>,
    /// Treat the file as JavaScript even without a `.js` name.
    pub assume_js: bool,
}

/// A container format reader.
pub(crate) trait ContainerReader {
    /// Cheap test on the first bytes.
    fn matches(bytes: &[u8]) -> bool;
    fn locate<'a>(bytes: &'a [u8], opts: &ContainerOptions) -> Result<Located<'a>, ContainerError>;
}

/// Find the Bun payload in `bytes`, whatever the container. An architecture
/// asked for must be the one read: a thin file of another architecture (or
/// a JavaScript file, which has none) is an error, not silently used.
pub fn locate<'a>(bytes: &'a [u8], opts: &ContainerOptions) -> Result<Located<'a>, ContainerError> {
    let located = locate_any(bytes, opts)?;
    if let Some(wanted) = opts.arch.map(Arch::as_str)
        && located.info.arch.as_deref() != Some(wanted)
    {
        let wanted = wanted.to_string();
        let format = match located.info.format {
            Format::Macho => "Mach-O",
            Format::Elf => "ELF",
            Format::Pe => "PE",
            Format::Js => "JavaScript file",
            Format::Raw => "bare Bun payload",
        };
        return Err(match located.info.arch {
            Some(actual) => ContainerError::WrongArch {
                wanted,
                format,
                actual,
            },
            None => ContainerError::NoArch { wanted, format },
        });
    }
    Ok(located)
}

fn locate_any<'a>(bytes: &'a [u8], opts: &ContainerOptions) -> Result<Located<'a>, ContainerError> {
    if macho::MachO::matches(bytes) {
        macho::MachO::locate(bytes, opts)
    } else if elf::Elf::matches(bytes) {
        elf::Elf::locate(bytes, opts)
    } else if pe::Pe::matches(bytes) {
        pe::Pe::locate(bytes, opts)
    } else if opts.assume_js || js::Js::matches(bytes) {
        js::Js::locate(bytes, opts)
    } else if let Some(found) = appended::find(bytes, Format::Raw, None) {
        // A raw payload (for example a fixture slice) with no container.
        Ok(found)
    } else if bytes.ends_with(payload::TRAILER) {
        // Ends like a payload but its Offsets do not hold: let the graph
        // parser say precisely what is wrong.
        Ok(appended::whole(bytes))
    } else {
        Err(ContainerError::UnknownFormat)
    }
}

/// Build the located payload for a section found at `range` of `bytes`.
pub(crate) fn from_section<'a>(
    bytes: &'a [u8],
    format: Format,
    arch: Option<String>,
    name: &str,
    range: Range<usize>,
) -> Result<Located<'a>, ContainerError> {
    let section = bytes.get(range.clone()).ok_or_else(|| {
        ContainerError::Truncated(format!(
            "section {name} claims bytes {}..{} but the file has {}",
            range.start,
            range.end,
            bytes.len()
        ))
    })?;
    let payload::InSection {
        header_width: width,
        start,
        len,
    } = payload::payload_in_section(section)?;
    let payload_offset = range.start + start;
    Ok(Located {
        info: ContainerInfo {
            format,
            arch,
            slices: Vec::new(),
            placement: Placement::Section,
            section: Some(name.to_string()),
            section_offset: range.start as u64,
            section_size: section.len() as u64,
            header_width: (width > 0).then_some(width),
            payload_offset: payload_offset as u64,
            payload_size: len as u64,
        },
        payload: &bytes[payload_offset..payload_offset + len],
    })
}

/// When a container has no Bun section: try the appended layout, else fail.
pub(crate) fn fallback<'a>(
    bytes: &'a [u8],
    format: Format,
    arch: Option<String>,
    section: &'static str,
) -> Result<Located<'a>, ContainerError> {
    appended::find(bytes, format, arch).ok_or(ContainerError::NoPayload {
        format: format.as_str(),
        section,
    })
}
