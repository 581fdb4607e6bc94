//! Record and `Offsets` layouts per Bun epoch, and how a payload tells us
//! which one it uses. See docs/internals/bun-format.md.

use crate::container::bytes::{le32, le64};
use serde::Serialize;

/// A `{u32 offset, u32 length}` pointer relative to the payload start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Ptr {
    pub offset: u32,
    pub length: u32,
}

impl Ptr {
    pub(crate) fn read(b: &[u8], at: usize) -> Option<Ptr> {
        Some(Ptr {
            offset: le32(b, at)?,
            length: le32(b, at.checked_add(4)?)?,
        })
    }
    pub fn end(self) -> u64 {
        self.offset as u64 + self.length as u64
    }
    pub fn is_empty(self) -> bool {
        self.length == 0
    }
}

/// The pointer fields a module record may hold, in record order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name,
    Contents,
    Sourcemap,
    Bytecode,
    ModuleInfo,
    BytecodeOriginPath,
}

impl Field {
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Contents => "contents",
            Field::Sourcemap => "sourcemap",
            Field::Bytecode => "bytecode",
            Field::ModuleInfo => "module_info",
            Field::BytecodeOriginPath => "bytecode_origin_path",
        }
    }
}

/// How one module record is laid out in a given Bun epoch.
#[derive(Debug, PartialEq, Eq)]
pub struct RecordLayout {
    pub size: usize,
    pub pointers: &'static [Field],
    pub encoding_at: Option<usize>,
    pub loader_at: usize,
    pub format_at: Option<usize>,
    pub side_at: Option<usize>,
    /// Human description of the Bun releases that wrote this layout.
    pub epoch: &'static str,
}

use Field::*;

/// Every record layout Bun has written, newest first.
pub static RECORD_LAYOUTS: [RecordLayout; 4] = [
    RecordLayout {
        size: 52,
        pointers: &[
            Name,
            Contents,
            Sourcemap,
            Bytecode,
            ModuleInfo,
            BytecodeOriginPath,
        ],
        encoding_at: Some(48),
        loader_at: 49,
        format_at: Some(50),
        side_at: Some(51),
        epoch: "Bun 1.3.9 – 1.4.x",
    },
    RecordLayout {
        size: 36,
        pointers: &[Name, Contents, Sourcemap, Bytecode],
        encoding_at: Some(32),
        loader_at: 33,
        format_at: Some(34),
        side_at: Some(35),
        epoch: "Bun 1.1.30 – 1.3.8",
    },
    RecordLayout {
        size: 28,
        pointers: &[Name, Contents, Sourcemap],
        encoding_at: Some(24),
        loader_at: 25,
        format_at: None,
        side_at: None,
        epoch: "Bun 1.1.22 – 1.1.29",
    },
    RecordLayout {
        size: 32,
        pointers: &[Name, Contents, Sourcemap],
        encoding_at: None,
        loader_at: 24,
        format_at: None,
        side_at: None,
        epoch: "Bun 0.6 – 1.1.21",
    },
];

/// The payload's `Offsets` struct, read just before the trailer.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Offsets {
    /// 24 bytes before Bun 1.2.21, 32 since.
    pub size: usize,
    pub byte_count: u64,
    pub modules: Ptr,
    pub entry_point_id: u32,
    /// Only in the 32-byte form.
    pub exec_argv: Option<Ptr>,
    /// Only in the 32-byte form. Bits 0–3 disable .env / bunfig / tsconfig /
    /// package.json autoloading; later releases add more.
    pub flags: Option<u32>,
}

impl Offsets {
    /// Read `Offsets` of the given size ending at `end` (where the trailer starts).
    pub(crate) fn read(payload: &[u8], end: usize, size: usize) -> Option<Offsets> {
        let at = end.checked_sub(size)?;
        let b = payload.get(at..end)?;
        let byte_count = le64(b, 0)?;
        let modules = Ptr::read(b, 8)?;
        let entry_point_id = le32(b, 16)?;
        let (exec_argv, flags) = if size == 32 {
            (Ptr::read(b, 20), le32(b, 28))
        } else {
            (None, None)
        };
        Some(Offsets {
            size,
            byte_count,
            modules,
            entry_point_id,
            exec_argv,
            flags,
        })
    }

    /// The names of the flag bits we know.
    pub fn flag_names(&self) -> Vec<&'static str> {
        const NAMES: [&str; 4] = [
            "disable-dotenv",
            "disable-bunfig",
            "disable-tsconfig",
            "disable-package-json",
        ];
        let f = self.flags.unwrap_or(0);
        NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| f & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

/// Loader numbering changed at Bun 1.2.5, when `jsonc` was inserted at 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoaderTable {
    Before1_2_5,
    Since1_2_5,
}

const LOADERS_NEW: [&str; 21] = [
    "jsx",
    "js",
    "ts",
    "tsx",
    "css",
    "file",
    "json",
    "jsonc",
    "toml",
    "wasm",
    "napi",
    "base64",
    "dataurl",
    "text",
    "bunsh",
    "sqlite",
    "sqlite_embedded",
    "html",
    "yaml",
    "json5",
    "md",
];
const LOADERS_OLD: [&str; 17] = [
    "jsx",
    "js",
    "ts",
    "tsx",
    "css",
    "file",
    "json",
    "toml",
    "wasm",
    "napi",
    "base64",
    "dataurl",
    "text",
    "bunsh",
    "sqlite",
    "sqlite_embedded",
    "html",
];

impl LoaderTable {
    pub fn name(self, raw: u8) -> Option<&'static str> {
        let t: &[&str] = match self {
            LoaderTable::Before1_2_5 => &LOADERS_OLD,
            LoaderTable::Since1_2_5 => &LOADERS_NEW,
        };
        t.get(raw as usize).copied()
    }

    pub fn max(self) -> u8 {
        match self {
            LoaderTable::Before1_2_5 => LOADERS_OLD.len() as u8 - 1,
            LoaderTable::Since1_2_5 => LOADERS_NEW.len() as u8 - 1,
        }
    }

    /// How well a module name's extension agrees with a loader under this table.
    pub(crate) fn agrees(self, name: &str, raw: u8) -> Option<bool> {
        let ext = name.rsplit_once('.').map(|(_, e)| e)?;
        let expected: &[&str] = match ext {
            "node" => &["napi", "file"],
            "json" => &["json", "file"],
            "toml" => &["toml", "file"],
            "txt" | "md" => &["text", "file"],
            "wasm" => &["wasm", "file"],
            "html" => &["html", "file"],
            "css" => &["css", "file"],
            _ => return None,
        };
        Some(self.name(raw).is_some_and(|n| expected.contains(&n)))
    }
}
