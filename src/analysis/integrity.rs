//! Integrity: how an executable differs from the published build it claims
//! to be — container parts, Bun modules, their bytecode, and (through the
//! `diff` engine) the functions changed in each JavaScript module.

use crate::analysis::diff::functions::{ChangedFunction, FunctionDiff, FunctionRef};
use crate::analysis::diff::initialisers::Assigned;
use crate::bun::digest::sha256_hex;
use crate::bun::{Budget, BunGraph, GraphError};
use crate::container::codesign::Signature;
use crate::container::{ContainerInfo, Format};
use serde::Serialize;
use std::ops::Range;

/// The npm platform name of a build, told from its container: format,
/// architecture and, for ELF, the C library its interpreter names.
pub fn platform_of(bytes: &[u8], info: &ContainerInfo) -> Option<String> {
    let arch = match info.arch.as_deref()? {
        "arm64" => "arm64",
        "x86_64" => "x64",
        _ => return None,
    };
    Some(match info.format {
        Format::Macho => format!("darwin-{arch}"),
        Format::Pe => format!("win32-{arch}"),
        Format::Elf => {
            // PT_INTERP sits in the first page: `/lib/ld-musl-…` for musl.
            let head = &bytes[..bytes.len().min(64 * 1024)];
            let musl = memchr::memmem::find(head, b"ld-musl-").is_some();
            format!("linux-{arch}{}", if musl { "-musl" } else { "" })
        }
        Format::Js | Format::Raw => return None,
    })
}

/// One region of the file, compared with the same region of the published one.
#[derive(Debug, Clone, Serialize)]
pub struct PartDiff {
    pub part: String,
    pub offset: u64,
    pub size: u64,
    pub published_offset: u64,
    pub published_size: u64,
    pub status: PartChange,
    /// Differing 4 KiB blocks (same size only).
    pub blocks_differ: u64,
    /// File offset of the first differing byte (same size only).
    pub first_difference: Option<u64>,
}

const BLOCK: usize = 4096;

/// The file's parts, in order: `(name, range)`. The boundaries are the Bun
/// section and the signature; what lies before the Bun section is split
/// into the headers (Mach-O: header and load commands) and the rest.
fn parts(bytes: &[u8], info: &ContainerInfo, sig: &Signature) -> Vec<(String, Range<u64>)> {
    let len = bytes.len() as u64;
    let bun_name = info
        .section
        .as_deref()
        .map_or("Bun payload".to_string(), |s| format!("Bun section {s}"));
    let bun = if info.section.is_some() {
        info.section_offset..info.section_offset + info.section_size
    } else {
        info.payload_offset..info.payload_offset + info.payload_size
    };
    let sig_range = sig
        .slices
        .iter()
        .find(|s| s.signature_size > 0)
        .map(|s| s.signature_offset..s.signature_offset + s.signature_size)
        .or_else(|| {
            sig.authenticode
                .as_ref()
                .map(|a| a.table_offset..a.table_offset + a.table_size)
        });
    let mut marks: Vec<(String, Range<u64>)> = vec![(bun_name, bun)];
    if let Some(r) = sig_range {
        marks.push(("code signature".into(), r));
    }
    if info.format == Format::Macho && info.slices.is_empty() {
        let cmds = crate::container::bytes::le32(bytes, 20).unwrap_or(0) as u64;
        marks.push((
            "Mach-O header and load commands".into(),
            0..(32 + cmds).min(len),
        ));
    }
    marks.retain(|(_, r)| r.start < r.end && r.end <= len);
    marks.sort_by_key(|(_, r)| r.start);
    let mut out = Vec::new();
    let mut at = 0;
    for (name, r) in marks {
        if r.start < at {
            continue;
        }
        if r.start > at {
            out.push((gap_name(&out), at..r.start));
        }
        at = r.end;
        out.push((name, r));
    }
    if at < len {
        out.push((
            if out.iter().any(|(n, _)| n == "code signature") {
                "data after the code signature".to_string()
            } else {
                gap_name(&out)
            },
            at..len,
        ));
    }
    out
}

fn gap_name(before: &[(String, Range<u64>)]) -> String {
    match before.last() {
        None => "headers".into(),
        Some((n, _)) if n.starts_with("Mach-O header") => {
            "code and data before the Bun section".into()
        }
        Some((n, _)) if n.starts_with("Bun") => "after the Bun section".into(),
        Some((n, _)) => format!("after the {n}"),
    }
}

/// Compare the container parts of two files.
pub fn container_diffs(
    a: &[u8],
    a_info: &ContainerInfo,
    a_sig: &Signature,
    b: &[u8],
    b_info: &ContainerInfo,
    b_sig: &Signature,
) -> Vec<PartDiff> {
    let pa = parts(a, a_info, a_sig);
    let pb = parts(b, b_info, b_sig);
    let mut out = Vec::new();
    for (name, ra) in &pa {
        let Some((_, rb)) = pb.iter().find(|(n, _)| n == name) else {
            out.push(part(name, ra, &(0..0), PartChange::Added, 0, None));
            continue;
        };
        let (x, y) = (
            &a[ra.start as usize..ra.end as usize],
            &b[rb.start as usize..rb.end as usize],
        );
        if x.len() != y.len() {
            out.push(part(name, ra, rb, PartChange::Resized, 0, None));
            continue;
        }
        let mut blocks = 0u64;
        let mut first = None;
        for (i, (cx, cy)) in x.chunks(BLOCK).zip(y.chunks(BLOCK)).enumerate() {
            if cx != cy {
                blocks += 1;
                if first.is_none() {
                    let j = cx.iter().zip(cy).position(|(p, q)| p != q).unwrap_or(0);
                    first = Some(ra.start + (i * BLOCK + j) as u64);
                }
            }
        }
        if blocks > 0 {
            out.push(part(name, ra, rb, PartChange::Differs, blocks, first));
        }
    }
    for (name, rb) in &pb {
        if !pa.iter().any(|(n, _)| n == name) {
            out.push(part(name, &(0..0), rb, PartChange::Removed, 0, None));
        }
    }
    out
}

fn part(
    name: &str,
    ra: &Range<u64>,
    rb: &Range<u64>,
    status: PartChange,
    blocks: u64,
    first: Option<u64>,
) -> PartDiff {
    PartDiff {
        part: name.to_string(),
        offset: ra.start,
        size: ra.end - ra.start,
        published_offset: rb.start,
        published_size: rb.end - rb.start,
        status,
        blocks_differ: blocks,
        first_difference: first,
    }
}

/// How a module or function of a build differs from the published one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Changed,
    Added,
    Removed,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Change::Changed => "changed",
            Change::Added => "added",
            Change::Removed => "removed",
        })
    }
}

/// How a container part differs from the published build's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartChange {
    /// Same place and size, other bytes.
    Differs,
    Resized,
    Added,
    Removed,
}

/// A changed function of a module, as `verify --published` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionChange {
    pub status: Change,
    pub name: Option<String>,
    pub original: Option<String>,
    /// Line in the module's stored text (this build; the published one's
    /// for a removed function).
    pub line: u32,
    pub lines_added: usize,
    pub lines_removed: usize,
    /// Unified diff of the pretty-printed bodies (renames ignored).
    pub diff: String,
    /// For a lazy module initialiser (`var X = init(() => { … })`): X.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// For a changed initialiser: the bindings its changed lines assign.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assigns: Vec<Assigned>,
}

impl FunctionChange {
    /// Where the function is when it has no name
    /// ([`crate::analysis::diff::initialisers::place`]).
    pub fn place(&self) -> Option<String> {
        crate::analysis::diff::initialisers::place(self.within.as_deref(), &self.assigns)
    }
}

/// One module that differs from the published build.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleChange {
    pub name: String,
    pub status: Change,
    /// SHA-256 of the stored bytes (None: absent on this side).
    pub sha256: Option<String>,
    pub published_sha256: Option<String>,
    /// SHA-256 of the decoded text (zstd and UTF-16 undone).
    pub decoded_sha256: Option<String>,
    pub published_decoded_sha256: Option<String>,
    pub functions_changed: Vec<FunctionChange>,
    /// `none`, `stale (…)`, `removed`, `rewritten`, `added`.
    pub bytecode: String,
}

/// Modules that differ between `target` and `published`, without functions.
pub fn module_changes(
    target: &BunGraph,
    published: &BunGraph,
    budget: &Budget,
) -> Result<Vec<ModuleChange>, GraphError> {
    let decoded =
        |g: &BunGraph, m| -> Result<String, GraphError> { Ok(sha256_hex(&g.decoded(m, budget)?)) };
    let mut out = Vec::new();
    for m in &target.modules {
        let p = published.modules.iter().find(|p| p.name == m.name);
        let sha = sha256_hex(m.contents);
        let (status, psha, pdec, bytecode) = match p {
            Some(p) => {
                let psha = sha256_hex(p.contents);
                let (bt, bp) = (target.bytecode_of(m), published.bytecode_of(p));
                if psha == sha && bt == bp {
                    continue;
                }
                let bytecode = if bp.is_empty() && bt.is_empty() {
                    "none"
                } else if bt.is_empty() {
                    "removed"
                } else if bp.is_empty() {
                    "added"
                } else if bt == bp {
                    "stale (identical to the published bytecode, compiled from the published source, not this one)"
                } else {
                    "rewritten"
                };
                (
                    Change::Changed,
                    Some(psha),
                    Some(decoded(published, p)?),
                    bytecode,
                )
            }
            None => (
                Change::Added,
                None,
                None,
                if target.bytecode_of(m).is_empty() {
                    "none"
                } else {
                    "added"
                },
            ),
        };
        out.push(ModuleChange {
            name: m.name.to_string(),
            status,
            sha256: Some(sha),
            published_sha256: psha,
            decoded_sha256: Some(decoded(target, m)?),
            published_decoded_sha256: pdec,
            functions_changed: Vec::new(),
            bytecode: bytecode.into(),
        });
    }
    for p in &published.modules {
        if !target.modules.iter().any(|m| m.name == p.name) {
            out.push(ModuleChange {
                name: p.name.to_string(),
                status: Change::Removed,
                sha256: None,
                published_sha256: Some(sha256_hex(p.contents)),
                decoded_sha256: None,
                published_decoded_sha256: Some(decoded(published, p)?),
                functions_changed: Vec::new(),
                bytecode: if published.bytecode_of(p).is_empty() {
                    "none"
                } else {
                    "removed"
                }
                .into(),
            });
        }
    }
    Ok(out)
}

/// Attach the function diff (published = side a, target = side b) to the
/// modules it concerns.
pub fn attach_functions(changes: &mut [ModuleChange], d: &FunctionDiff) {
    let changed = |c: &ChangedFunction| FunctionChange {
        status: Change::Changed,
        name: c.b.name.clone(),
        original: c.b.original.clone().or_else(|| c.a.original.clone()),
        line: c.b.raw_line,
        lines_added: c.lines_added,
        lines_removed: c.lines_removed,
        diff: c.diff.clone(),
        within: c.b.within.clone(),
        // This build's side; what it removed shows on the published side.
        assigns: if c.b.assigns.is_empty() {
            c.a.assigns.clone()
        } else {
            c.b.assigns.clone()
        },
    };
    let whole = |status: Change, r: &FunctionRef| FunctionChange {
        status,
        name: r.name.clone(),
        original: r.original.clone(),
        line: r.raw_line,
        lines_added: if status == Change::Added {
            r.pretty_lines as usize
        } else {
            0
        },
        lines_removed: if status == Change::Removed {
            r.pretty_lines as usize
        } else {
            0
        },
        diff: String::new(),
        within: r.within.clone(),
        assigns: Vec::new(),
    };
    for m in changes.iter_mut() {
        m.functions_changed.extend(
            d.changed
                .iter()
                .filter(|c| c.b.module == m.name)
                .map(changed),
        );
        m.functions_changed.extend(
            d.added
                .iter()
                .filter(|r| r.module == m.name)
                .map(|r| whole(Change::Added, r)),
        );
        m.functions_changed.extend(
            d.removed
                .iter()
                .filter(|r| r.module == m.name)
                .map(|r| whole(Change::Removed, r)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::codesign::check_bytes;

    fn info(format: Format, arch: &str, section: (u64, u64)) -> ContainerInfo {
        ContainerInfo {
            format,
            arch: Some(arch.into()),
            slices: Vec::new(),
            placement: crate::container::Placement::Section,
            section: Some(".bun".into()),
            section_offset: section.0,
            section_size: section.1,
            header_width: Some(8),
            payload_offset: section.0 + 8,
            payload_size: section.1 - 8,
        }
    }

    #[test]
    fn platform_names() {
        let i = info(Format::Elf, "x86_64", (0, 16));
        assert_eq!(platform_of(b"\x7fELF", &i).as_deref(), Some("linux-x64"));
        assert_eq!(
            platform_of(b"\x7fELF..../lib/ld-musl-x86_64.so.1", &i).as_deref(),
            Some("linux-x64-musl")
        );
        let i = info(Format::Pe, "arm64", (0, 16));
        assert_eq!(platform_of(b"MZ", &i).as_deref(), Some("win32-arm64"));
    }

    #[test]
    fn a_changed_byte_is_placed_in_its_part() {
        let a = vec![7u8; 20_000];
        let mut b = a.clone();
        b[12_345] = 8;
        let i = info(Format::Elf, "x86_64", (10_000, 5_000));
        let (sa, sb) = (check_bytes(&a), check_bytes(&b));
        let d = container_diffs(&b, &i, &sb, &a, &i, &sa);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].part, "Bun section .bun");
        assert_eq!(d[0].first_difference, Some(12_345));
        assert_eq!(d[0].blocks_differ, 1);
        // Appended bytes: the last part is resized.
        let mut c = a.clone();
        c.extend_from_slice(b"tail");
        let d = container_diffs(&c, &i, &sa, &a, &i, &sa);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].status, PartChange::Resized);
        assert_eq!(d[0].part, "after the Bun section");
    }

    #[test]
    fn a_changed_initialiser_keeps_its_place() {
        let side = |assigns: Vec<Assigned>| FunctionRef {
            name: None,
            original: None,
            module: "/$bunfs/root/cli.js".into(),
            raw_line: 7,
            pretty_line: 30,
            pretty_lines: 4,
            tokens: 40,
            within: Some("Kq".into()),
            assigns,
        };
        let assigned = |name: &str| Assigned {
            name: name.into(),
            original: None,
            read_by: Vec::new(),
            outer: true,
        };
        let changed = |a, b| ChangedFunction {
            a: side(a),
            b: side(b),
            matched_by: "shape".into(),
            lines_added: 0,
            lines_removed: 1,
            diff: String::new(),
            coarse: None,
        };
        let d = FunctionDiff {
            changed: vec![changed(vec![assigned("Zt")], vec![])],
            ..FunctionDiff::default()
        };
        let mut m = vec![ModuleChange {
            name: "/$bunfs/root/cli.js".into(),
            status: Change::Changed,
            sha256: None,
            published_sha256: None,
            decoded_sha256: None,
            published_decoded_sha256: None,
            functions_changed: Vec::new(),
            bytecode: "none".into(),
        }];
        attach_functions(&mut m, &d);
        let f = &m[0].functions_changed[0];
        // Lines only removed: the published side names the statement.
        assert_eq!(f.place().as_deref(), Some("in Kq, assigns Zt"));
        let j = serde_json::to_value(f).unwrap();
        assert_eq!(j["name"], serde_json::Value::Null);
        assert_eq!(j["within"], "Kq");
        assert_eq!(j["assigns"], serde_json::json!([{"name": "Zt"}]));
    }
}
