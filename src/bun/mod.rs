//! Layer 2: the Bun standalone module graph inside a payload.
//!
//! The payload ends with `Offsets` and a trailer; `Offsets.modules` points to
//! a table of fixed-size module records whose size and field order changed
//! across Bun releases. We never trust divisibility to pick a layout: every
//! candidate is validated by decoding every record's pointers.

pub mod decode;
pub mod digest;
pub mod layout;
pub mod module;

pub use decode::{Budget, DecodeError, Decoded};
pub use layout::{LoaderTable, Offsets, Ptr, RECORD_LAYOUTS, RecordLayout};
pub use module::{Encoding, Module, ModuleFormat, Side};

use layout::Field;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Absurd counts are refused before anything is allocated for them.
pub const MAX_MODULES: usize = 200_000;

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("payload is truncated ({0} bytes, too small for Offsets and trailer)")]
    TooSmall(usize),
    #[error("payload does not end with the Bun trailer")]
    NoTrailer,
    #[error(
        "Offsets.byte_count does not match the payload (no Offsets size makes byte_count + Offsets + trailer = {0})"
    )]
    ByteCountMismatch(usize),
    #[error("module table {offset}+{length} lies outside the payload's {byte_count} data bytes")]
    TableOutOfBounds {
        offset: u32,
        length: u32,
        byte_count: u64,
    },
    #[error("module table claims {0} records, more than the {MAX_MODULES} allowed")]
    TooManyModules(usize),
    #[error("no known module record layout fits this payload ({0})")]
    NoLayout(String),
    #[error("entry point id {id} is out of range ({count} modules)")]
    EntryOutOfRange { id: u32, count: usize },
    #[error("module {module}: {reason}")]
    Decode { module: String, reason: DecodeError },
}

/// A bytecode region shared by several modules: in recent builds every
/// module's bytecode pointer runs from its own start to the end of one
/// region. Reported once; never summed per module.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BytecodeRegion {
    pub offset: u64,
    pub bytes: u64,
    pub modules: usize,
}

/// The parsed module graph, borrowing from the payload.
pub struct BunGraph<'a> {
    pub payload: &'a [u8],
    /// `None` for a plain JavaScript target.
    pub layout: Option<&'static RecordLayout>,
    pub loader_table: LoaderTable,
    pub offsets: Offsets,
    pub modules: Vec<Module<'a>>,
    pub entry: usize,
    pub exec_argv: &'a str,
    /// Sorted distinct bytecode start offsets, and the shared region if any.
    bytecode_starts: Vec<u64>,
    bytecode_region: Option<BytecodeRegion>,
    /// Compressed blobs that more than one record points at, keyed by
    /// (offset, length), each decompressed at most once.
    shared_blobs: HashMap<(usize, usize), SharedBlob>,
}

type SharedBlob = OnceLock<Result<Arc<Vec<u8>>, DecodeError>>;

/// Why a candidate record layout does not fit the module table (for the
/// error message).
#[derive(Debug, thiserror::Error)]
enum Reject {
    #[error("record too short")]
    TooShort,
    #[error("module {module} {field} pointer {offset}+{length} is out of bounds")]
    OutOfBounds {
        module: usize,
        field: &'static str,
        offset: u32,
        length: u32,
    },
    #[error("module {module} {field} pointer points into the module table")]
    IntoTable { module: usize, field: &'static str },
    #[error("module {0} name is not UTF-8")]
    NameNotUtf8(usize),
    #[error("module {module} name {name:?} is not under a bunfs root")]
    NotUnderRoot { module: usize, name: String },
    #[error("module {0} name contains NUL")]
    NameHasNul(usize),
    #[error("module {0} has attribute bytes out of range")]
    AttributesOutOfRange(usize),
    #[error("module {module} loader {loader} is unknown")]
    UnknownLoader { module: usize, loader: u8 },
}

impl<'a> BunGraph<'a> {
    /// A JavaScript file as a graph of one module.
    pub fn single_js(name: &'a str, bytes: &'a [u8]) -> BunGraph<'a> {
        BunGraph {
            payload: bytes,
            layout: None,
            loader_table: LoaderTable::Since1_2_5,
            offsets: Offsets::default(),
            modules: vec![Module {
                index: 0,
                name,
                contents: bytes,
                sourcemap: &[],
                bytecode: Ptr::default(),
                module_info: &[],
                bytecode_origin_path: &[],
                encoding: Encoding::Utf8,
                encoding_raw: None,
                loader: "js",
                loader_raw: 1,
                format: ModuleFormat::None,
                side: None,
            }],
            entry: 0,
            exec_argv: "",
            bytecode_starts: Vec::new(),
            bytecode_region: None,
            shared_blobs: HashMap::new(),
        }
    }

    /// One more module like the first (its encoding and format), named
    /// `name`, holding `contents` for `loader`: how tests build a graph of
    /// chunks and shipped files.
    #[cfg(test)]
    pub fn push_like_first(&mut self, name: &'a str, contents: &'a [u8], loader: &'static str) {
        let first = self.modules[0].clone();
        self.modules.push(Module {
            index: self.modules.len(),
            name,
            contents,
            loader,
            ..first
        });
    }

    /// Parse a payload (from its first data byte through the trailer).
    pub fn parse(payload: &'a [u8]) -> Result<BunGraph<'a>, GraphError> {
        let n = payload.len();
        if n < 24 + 16 {
            return Err(GraphError::TooSmall(n));
        }
        if &payload[n - 16..] != crate::container::payload::TRAILER {
            return Err(GraphError::NoTrailer);
        }
        let offsets = [32usize, 24]
            .into_iter()
            .filter_map(|size| Offsets::read(payload, n - 16, size))
            .find(|o| o.byte_count == (n - 16 - o.size) as u64)
            .ok_or(GraphError::ByteCountMismatch(n))?;
        let data = &payload[..offsets.byte_count as usize];
        let table = offsets.modules;
        if table.end() > data.len() as u64 {
            return Err(GraphError::TableOutOfBounds {
                offset: table.offset,
                length: table.length,
                byte_count: offsets.byte_count,
            });
        }
        let smallest = RECORD_LAYOUTS.iter().map(|l| l.size).min().unwrap_or(28);
        if table.length as usize / smallest > MAX_MODULES {
            return Err(GraphError::TooManyModules(table.length as usize / smallest));
        }
        let mut rejects = Vec::new();
        let mut found = None;
        for layout in &RECORD_LAYOUTS {
            if !(table.length as usize).is_multiple_of(layout.size) || table.length == 0 {
                rejects.push(format!(
                    "{}-byte records: table length {} does not divide",
                    layout.size, table.length
                ));
                continue;
            }
            match Self::read_records(data, &offsets, layout) {
                Ok(modules) => {
                    found = Some((layout, modules));
                    break;
                }
                Err(why) => rejects.push(format!("{}-byte records: {why}", layout.size)),
            }
        }
        let (layout, raw) = found.ok_or_else(|| GraphError::NoLayout(rejects.join("; ")))?;
        let entry = offsets.entry_point_id as usize;
        if entry >= raw.len() {
            return Err(GraphError::EntryOutOfRange {
                id: offsets.entry_point_id,
                count: raw.len(),
            });
        }
        let loader_table = Self::choose_loader_table(layout, &offsets, &raw);
        let modules = raw
            .into_iter()
            .map(|r| r.into_module(loader_table))
            .collect();
        let exec_argv = offsets
            .exec_argv
            .and_then(|p| data.get(p.offset as usize..p.end() as usize))
            .map(|b| std::str::from_utf8(b).unwrap_or(""))
            .unwrap_or("");
        let mut graph = BunGraph {
            payload,
            layout: Some(layout),
            loader_table,
            offsets,
            modules,
            entry,
            exec_argv,
            bytecode_starts: Vec::new(),
            bytecode_region: None,
            shared_blobs: HashMap::new(),
        };
        graph.index_bytecode();
        graph.index_shared_blobs();
        Ok(graph)
    }

    fn read_records(
        data: &'a [u8],
        offsets: &Offsets,
        layout: &'static RecordLayout,
    ) -> Result<Vec<RawRecord<'a>>, Reject> {
        let table = offsets.modules;
        let t0 = table.offset as usize;
        let count = table.length as usize / layout.size;
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let rec = &data[t0 + i * layout.size..t0 + (i + 1) * layout.size];
            let mut r = RawRecord::default();
            for (k, field) in layout.pointers.iter().enumerate() {
                let p = Ptr::read(rec, k * 8).ok_or(Reject::TooShort)?;
                if p.end() > data.len() as u64 {
                    return Err(Reject::OutOfBounds {
                        module: i,
                        field: field.as_str(),
                        offset: p.offset,
                        length: p.length,
                    });
                }
                let overlaps_table = p.length > 0
                    && (p.offset as u64) < table.end()
                    && p.end() > table.offset as u64;
                if overlaps_table {
                    return Err(Reject::IntoTable {
                        module: i,
                        field: field.as_str(),
                    });
                }
                let bytes = &data[p.offset as usize..p.end() as usize];
                match field {
                    Field::Name => r.name = bytes,
                    Field::Contents => r.contents = bytes,
                    Field::Sourcemap => r.sourcemap = bytes,
                    Field::Bytecode => r.bytecode = p,
                    Field::ModuleInfo => r.module_info = bytes,
                    Field::BytecodeOriginPath => r.bytecode_origin_path = bytes,
                }
            }
            let name = std::str::from_utf8(r.name).map_err(|_| Reject::NameNotUtf8(i))?;
            if !module::ROOTS
                .iter()
                .any(|root| name.starts_with(root) && name.len() > root.len())
            {
                return Err(Reject::NotUnderRoot {
                    module: i,
                    name: truncate(name, 60).to_string(),
                });
            }
            if name.contains('\0') {
                return Err(Reject::NameHasNul(i));
            }
            r.index = i;
            r.name_str = name;
            r.encoding = layout.encoding_at.map(|at| rec[at]);
            r.loader = rec[layout.loader_at];
            r.format = layout.format_at.map(|at| rec[at]);
            r.side = layout.side_at.map(|at| rec[at]);
            if r.encoding.is_some_and(|e| e > 2)
                || r.format.is_some_and(|f| f > 2)
                || r.side.is_some_and(|s| s > 1)
            {
                return Err(Reject::AttributesOutOfRange(i));
            }
            if r.loader > LoaderTable::Since1_2_5.max() {
                return Err(Reject::UnknownLoader {
                    module: i,
                    loader: r.loader,
                });
            }
            out.push(r);
        }
        Ok(out)
    }

    /// Loader numbers shifted at Bun 1.2.5. Layouts after that are certain;
    /// in between, the modules' extensions decide.
    fn choose_loader_table(
        layout: &RecordLayout,
        offsets: &Offsets,
        raw: &[RawRecord],
    ) -> LoaderTable {
        if layout.size == 52 || offsets.size == 32 {
            return LoaderTable::Since1_2_5;
        }
        if layout.size != 36 {
            return LoaderTable::Before1_2_5;
        }
        let score = |t: LoaderTable| {
            raw.iter()
                .filter_map(|r| t.agrees(r.name_str, r.loader))
                .map(|ok| if ok { 1i64 } else { -1 })
                .sum::<i64>()
        };
        if score(LoaderTable::Since1_2_5) > score(LoaderTable::Before1_2_5) {
            LoaderTable::Since1_2_5
        } else {
            LoaderTable::Before1_2_5
        }
    }

    pub fn entry_module(&self) -> &Module<'a> {
        &self.modules[self.entry]
    }

    /// Whether the bundle is split into chunks: an ES module entry that
    /// imports other JavaScript modules. A single CommonJS bundle with a
    /// few side modules (2.1.220's worker scripts) is not.
    pub fn is_code_split(&self) -> bool {
        self.entry_module().format == ModuleFormat::Esm
            && self.modules.iter().filter(|m| m.is_javascript()).count() > 1
    }

    /// Find a module by full name or by its path below the bunfs root.
    pub fn find(&self, name: &str) -> Option<&Module<'a>> {
        self.modules
            .iter()
            .find(|m| m.name == name || m.path_below_root() == name.trim_start_matches('/'))
    }

    fn bytecode_ranges(&self) -> Vec<(u64, u64)> {
        let mut ranges: Vec<_> = self
            .modules
            .iter()
            .filter(|m| !m.bytecode.is_empty())
            .map(|m| (m.bytecode.offset as u64, m.bytecode.end()))
            .collect();
        ranges.sort_unstable();
        ranges
    }

    fn index_bytecode(&mut self) {
        let ranges = self.bytecode_ranges();
        let overlapping = ranges.windows(2).any(|w| w[1].0 < w[0].1);
        self.bytecode_region = overlapping.then(|| {
            let start = ranges[0].0;
            let end = ranges.iter().map(|r| r.1).max().unwrap_or(start);
            BytecodeRegion {
                offset: start,
                bytes: end - start,
                modules: ranges.len(),
            }
        });
        self.bytecode_starts = ranges.iter().map(|r| r.0).collect();
        self.bytecode_starts.dedup();
    }

    /// Where a module's stored bytes sit in the payload.
    fn blob_key(&self, m: &Module) -> (usize, usize) {
        let at = (m.contents.as_ptr() as usize).wrapping_sub(self.payload.as_ptr() as usize);
        (at, m.contents.len())
    }

    fn index_shared_blobs(&mut self) {
        let mut count: HashMap<(usize, usize), usize> = HashMap::new();
        for m in self.modules.iter().filter(|m| m.is_compressed()) {
            *count.entry(self.blob_key(m)).or_default() += 1;
        }
        self.shared_blobs = count
            .into_iter()
            .filter(|&(_, n)| n > 1)
            .map(|(k, _)| (k, OnceLock::new()))
            .collect();
    }

    /// The bytes a user means by "the module": zstd decompressed and UTF-16LE
    /// turned into UTF-8. Every decompressed byte handed out is charged to
    /// `budget` (see [`decode`]); a blob several records share is
    /// decompressed once, and charged again for each record that receives it.
    pub fn decoded(&self, m: &Module<'a>, budget: &Budget) -> Result<Decoded<'a>, GraphError> {
        let fail = |reason| GraphError::Decode {
            module: m.name.to_string(),
            reason,
        };
        let bytes = if !m.is_compressed() {
            Decoded::Borrowed(m.contents)
        } else if let Some(cell) = self.shared_blobs.get(&self.blob_key(m)) {
            let mut first = false;
            let blob = cell.get_or_init(|| {
                first = true;
                decode::decompress(m.contents, budget).map(Arc::new)
            });
            let blob = blob.clone().map_err(fail)?;
            if !first {
                budget.charge(blob.len() as u64).map_err(fail)?;
            }
            Decoded::Shared(blob)
        } else {
            Decoded::Owned(decode::decompress(m.contents, budget).map_err(fail)?)
        };
        if m.encoding == Encoding::Utf16le {
            return Ok(Decoded::Owned(module::utf16le_to_utf8(&bytes).into_bytes()));
        }
        Ok(bytes)
    }

    /// The shared bytecode region, when several modules' bytecode overlaps.
    pub fn bytecode_region(&self) -> Option<BytecodeRegion> {
        self.bytecode_region
    }

    /// Bytes of bytecode in the payload: the union of all bytecode ranges,
    /// so a shared region counts once.
    pub fn bytecode_bytes(&self) -> u64 {
        let ranges = self.bytecode_ranges();
        let (mut total, mut cur_end) = (0u64, 0u64);
        for (s, e) in ranges {
            let s = s.max(cur_end);
            if e > s {
                total += e - s;
                cur_end = e;
            }
        }
        total
    }

    /// A module's own bytecode: from its start to the next module's start
    /// inside a shared region, else its recorded length.
    pub fn own_bytecode_len(&self, m: &Module) -> u64 {
        if m.bytecode.is_empty() {
            return 0;
        }
        if self.bytecode_region.is_none() {
            return m.bytecode.length as u64;
        }
        let start = m.bytecode.offset as u64;
        let i = self.bytecode_starts.partition_point(|&s| s <= start);
        let next = self.bytecode_starts.get(i).copied().unwrap_or(u64::MAX);
        next.min(m.bytecode.end()) - start
    }

    /// The bytecode blob of a module (its own part of a shared region).
    pub fn bytecode_of(&self, m: &Module) -> &'a [u8] {
        let len = self.own_bytecode_len(m) as usize;
        let start = m.bytecode.offset as usize;
        self.payload.get(start..start + len).unwrap_or(&[])
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[derive(Default)]
struct RawRecord<'a> {
    index: usize,
    name: &'a [u8],
    name_str: &'a str,
    contents: &'a [u8],
    sourcemap: &'a [u8],
    bytecode: Ptr,
    module_info: &'a [u8],
    bytecode_origin_path: &'a [u8],
    encoding: Option<u8>,
    loader: u8,
    format: Option<u8>,
    side: Option<u8>,
}

impl<'a> RawRecord<'a> {
    fn into_module(self, table: LoaderTable) -> Module<'a> {
        Module {
            index: self.index,
            name: self.name_str,
            contents: self.contents,
            sourcemap: self.sourcemap,
            bytecode: self.bytecode,
            module_info: self.module_info,
            bytecode_origin_path: self.bytecode_origin_path,
            encoding: module::classify_encoding(self.encoding, self.contents),
            encoding_raw: self.encoding,
            loader: table.name(self.loader).unwrap_or("?"),
            loader_raw: self.loader,
            format: ModuleFormat::from_raw(self.format),
            side: self
                .side
                .map(|s| if s == 1 { Side::Client } else { Side::Server }),
        }
    }
}
