//! The Mach-O embedded signature (`LC_CODE_SIGNATURE`): a SuperBlob of a
//! CodeDirectory per hash type, the requirement set, entitlements and a CMS
//! blob. Every code page and every special slot is hashed again and compared.
//!
//! Layouts follow Apple's open-source `cs_blobs.h` (xnu) and `codesign`'s
//! documented behaviour; all integers in the blobs are big-endian.

use super::{
    Kind, MACHO_CHECKED, MachoSlice, Malformed, NOT_CHECKED, Signature, Status, TRUST_NOTE,
    cms_info,
};
use crate::container::ContainerInfo;
use crate::container::bytes::{be32, le32, slice};
use code_directory::{HashWork, code_directory, entitlement_keys};

mod code_directory;
#[cfg(test)]
mod tests;

const LC_CODE_SIGNATURE: u32 = 0x1d;
const SUPERBLOB: u32 = 0xfade_0cc0;
const CODEDIRECTORY: u32 = 0xfade_0c02;
const REQUIREMENTS: u32 = 0xfade_0c01;
const ENTITLEMENTS: u32 = 0xfade_7171;
const CMS_WRAPPER: u32 = 0xfade_0b01;

/// SuperBlob index types.
const SLOT_CODEDIRECTORY: u32 = 0;
const SLOT_CMS: u32 = 0x10000;
const SLOT_ALTERNATE_FIRST: u32 = 0x1000;
const SLOT_ALTERNATE_LAST: u32 = 0x1004;

const CS_ADHOC: u32 = 0x2;
const CS_RUNTIME: u32 = 0x1_0000;

const FLAG_NAMES: &[(u32, &str)] = &[
    (0x1, "valid"),
    (0x2, "adhoc"),
    (0x4, "get-task-allow"),
    (0x100, "hard"),
    (0x200, "kill"),
    (0x800, "restrict"),
    (0x1000, "enforcement"),
    (0x2000, "library-validation"),
    (0x1_0000, "runtime"),
    (0x2_0000, "linker-signed"),
];

/// Bound on a string read from a blob (identifier, team id).
const MAX_NAME: usize = 1024;
/// Bound on the entitlement keys listed.
const MAX_ENTITLEMENTS: usize = 64;
use crate::container::macho::MAX_FAT_SLICES;
/// Most entries a SuperBlob index may list. `codesign` writes one blob per
/// type (its SuperBlob maker keys blobs by type) and Apple defines about
/// twenty types; real builds carry 3–6 (CodeDirectory, requirements,
/// entitlements, DER entitlements, an alternate CodeDirectory, CMS).
const MAX_SUPERBLOB_ENTRIES: usize = 32;

struct Blob<'a> {
    kind: u32,
    bytes: &'a [u8],
}

/// Check every slice of a thin or fat Mach-O.
pub(super) fn check(bytes: &[u8], info: &ContainerInfo) -> Signature {
    let slices = match slices(bytes) {
        Ok(s) => s,
        Err(e) => return malformed_file(e),
    };
    let per_slice: Vec<MachoSlice> = slices
        .into_iter()
        .map(|Image { arch, offset, size }| {
            let image = slice(bytes, offset, size).unwrap_or(&[]);
            check_slice(image, arch, offset as u64)
        })
        .collect();
    let pick = per_slice
        .iter()
        .position(|s| info.arch.as_deref() == Some(s.arch.as_str()))
        .unwrap_or(0);
    let Some(main) = per_slice.get(pick) else {
        return malformed_file("no slices".into());
    };
    let mut summary = main.summary.clone();
    for other in &per_slice {
        if other.arch != main.arch && other.status != main.status {
            summary.push_str(&format!("; slice {}: {}", other.arch, other.summary));
        }
    }
    let signed = per_slice.iter().any(|s| s.status != Status::Unsigned);
    let cdhash = main.code_directories.first().map(|c| c.cdhash.clone());
    Signature {
        kind: if signed {
            Kind::MachoCodeSignature
        } else {
            Kind::None
        },
        status: worst(per_slice.iter().map(|s| s.status)),
        summary,
        identifier: main.identifier.clone(),
        team_id: main.team_id.clone(),
        cdhash,
        signer: main.signer.clone(),
        trust: TRUST_NOTE,
        checked: if signed {
            MACHO_CHECKED.to_vec()
        } else {
            Vec::new()
        },
        not_checked: if signed {
            NOT_CHECKED.to_vec()
        } else {
            Vec::new()
        },
        identity_verified: false,
        slices: per_slice,
        authenticode: None,
        published: None,
    }
}

fn worst(statuses: impl Iterator<Item = Status>) -> Status {
    let rank = |s: Status| match s {
        Status::Broken => 4,
        Status::Malformed => 3,
        Status::Unsigned => 2,
        Status::AdHoc => 1,
        Status::Valid => 0,
    };
    statuses
        .max_by_key(|&s| rank(s))
        .unwrap_or(Status::Unsigned)
}

fn malformed_file(detail: Malformed) -> Signature {
    Signature {
        kind: Kind::MachoCodeSignature,
        status: Status::Malformed,
        summary: format!("malformed ({detail})"),
        identifier: None,
        team_id: None,
        cdhash: None,
        signer: None,
        trust: TRUST_NOTE,
        checked: Vec::new(),
        not_checked: NOT_CHECKED.to_vec(),
        identity_verified: false,
        slices: Vec::new(),
        authenticode: None,
        published: None,
    }
}

/// One Mach-O image of the file: a fat slice, or the whole file.
struct Image {
    arch: String,
    offset: usize,
    size: usize,
}

/// Every image: the fat slices, or the whole file.
fn slices(bytes: &[u8]) -> Result<Vec<Image>, Malformed> {
    if !matches!(bytes.get(..4), Some([0xca, 0xfe, 0xba, 0xbe])) {
        let cpu = le32(bytes, 4).unwrap_or(0);
        return Ok(vec![Image {
            arch: crate::container::macho::arch_name(cpu),
            offset: 0,
            size: bytes.len(),
        }]);
    }
    let n = be32(bytes, 4).ok_or("fat header truncated")? as usize;
    // Each entry is 20 bytes: a count the file cannot hold is refused
    // before anything is allocated.
    let header_end = n
        .checked_mul(20)
        .and_then(|x| x.checked_add(8))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| format!("fat header claims {n} slices"))?;
    // Every slice is checked in full, so the number of slices multiplies
    // the work: past what any universal build holds is malformed, said at
    // once.
    if n > MAX_FAT_SLICES {
        return Err(format!(
            "fat header lists {n} slices (universal builds hold one per architecture; at most {MAX_FAT_SLICES} are read)"
        ).into());
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let at = 8 + i * 20;
        let cpu = be32(bytes, at).ok_or("fat entry truncated")?;
        let off = be32(bytes, at + 8).ok_or("fat entry truncated")? as usize;
        let size = be32(bytes, at + 12).ok_or("fat entry truncated")? as usize;
        if slice(bytes, off, size).is_none() {
            return Err(format!(
                "fat slice {i} ({off}+{size}) runs past the end of the file ({})",
                bytes.len()
            )
            .into());
        }
        if off < header_end && size > 0 {
            return Err(format!("fat slice {i} ({off}+{size}) overlaps the fat header").into());
        }
        out.push(Image {
            arch: crate::container::macho::arch_name(cpu),
            offset: off,
            size,
        });
    }
    // Slices must not share bytes (the kernel refuses overlapping slices,
    // and `lipo` never writes them): a byte is then hashed for one slice
    // only, and the slices together are never more than the file.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (out[i].offset, out[i].size));
    for w in order.windows(2) {
        let (a, b) = (&out[w[0]], &out[w[1]]);
        if a.offset + a.size > b.offset {
            let (i, j) = (w[0].min(w[1]), w[0].max(w[1]));
            return Err(format!(
                "fat slices {i} ({}+{}) and {j} ({}+{}) overlap",
                out[i].offset, out[i].size, out[j].offset, out[j].size
            )
            .into());
        }
    }
    Ok(out)
}

fn slice_result(arch: String, offset: u64, status: Status, summary: String) -> MachoSlice {
    MachoSlice {
        arch,
        offset,
        status,
        summary,
        identifier: None,
        team_id: None,
        flags: 0,
        flag_names: Vec::new(),
        hardened_runtime: false,
        code_directories: Vec::new(),
        requirements: None,
        entitlements: Vec::new(),
        certificates: Vec::new(),
        signer: None,
        cms_digest_matches: None,
        signature_offset: 0,
        signature_size: 0,
        trailing_bytes: 0,
    }
}

/// Find `LC_CODE_SIGNATURE` in a thin image: `(dataoff, datasize)`.
fn signature_command(image: &[u8]) -> Result<Option<(usize, usize)>, Malformed> {
    let header: usize = match le32(image, 0) {
        Some(0xfeed_facf) => 32,
        Some(0xfeed_face) => 28,
        _ => return Err("not a little-endian Mach-O image".into()),
    };
    let ncmds = le32(image, 16).ok_or("header truncated")?;
    let sizeofcmds = le32(image, 20).ok_or("header truncated")? as usize;
    let end = header
        .checked_add(sizeofcmds)
        .filter(|&e| e <= image.len())
        .ok_or("load commands run past the end of the image")?;
    let mut at = header;
    let mut found = None;
    // Each command is at least 8 bytes, so the walk ends within
    // `sizeofcmds` whatever `ncmds` claims.
    for _ in 0..ncmds {
        if at + 8 > end {
            return Err("load commands run past sizeofcmds".into());
        }
        let cmd = le32(image, at).ok_or("load command truncated")?;
        let size = le32(image, at + 4).ok_or("load command truncated")? as usize;
        if size < 8 || at + size > end {
            return Err(format!("load command at {at} has size {size}").into());
        }
        if cmd == LC_CODE_SIGNATURE {
            if size < 16 {
                return Err("LC_CODE_SIGNATURE is too short".into());
            }
            let off = le32(image, at + 8).ok_or("truncated")? as usize;
            let len = le32(image, at + 12).ok_or("truncated")? as usize;
            found = Some((off, len));
        }
        at += size;
    }
    Ok(found)
}

fn check_slice(image: &[u8], arch: String, base: u64) -> MachoSlice {
    match check_slice_inner(image, &arch, base) {
        Ok(s) => s,
        Err(detail) => slice_result(
            arch,
            base,
            Status::Malformed,
            format!("malformed ({detail})"),
        ),
    }
}

fn check_slice_inner(image: &[u8], arch: &str, base: u64) -> Result<MachoSlice, Malformed> {
    let Some((dataoff, datasize)) = signature_command(image)? else {
        return Ok(slice_result(
            arch.to_string(),
            base,
            Status::Unsigned,
            "unsigned (no LC_CODE_SIGNATURE)".into(),
        ));
    };
    let sb = slice(image, dataoff, datasize).ok_or_else(|| {
        format!(
            "signature at {dataoff}+{datasize} runs past the end of the image ({} bytes)",
            image.len()
        )
    })?;
    let blobs = superblob(sb)?;
    let mut out = slice_result(arch.to_string(), base, Status::Valid, String::new());
    out.signature_offset = base + dataoff as u64;
    out.signature_size = datasize as u64;
    out.trailing_bytes = (image.len() - dataoff - datasize) as u64;

    let cds: Vec<&Blob> = blobs
        .iter()
        .filter(|b| {
            (b.kind == SLOT_CODEDIRECTORY
                || (SLOT_ALTERNATE_FIRST..=SLOT_ALTERNATE_LAST).contains(&b.kind))
                && be32(b.bytes, 0) == Some(CODEDIRECTORY)
        })
        .collect();
    // Two index types naming the same bytes are one CodeDirectory.
    let mut cds_seen: Vec<(*const u8, usize)> = Vec::new();
    let cds: Vec<&Blob> = cds
        .into_iter()
        .filter(|b| {
            let key = (b.bytes.as_ptr(), b.bytes.len());
            let new = !cds_seen.contains(&key);
            cds_seen.push(key);
            new
        })
        .collect();
    if cds.is_empty() {
        return Err("the signature has no CodeDirectory".into());
    }
    let mut problems: Vec<String> = Vec::new();
    let mut parsed = Vec::new();
    let mut work = HashWork::default();
    for cd in &cds {
        let (dir, facts) = code_directory(cd.bytes, image, &blobs, base, &mut work)?;
        if out.identifier.is_none() {
            out.identifier = facts.identifier;
            out.team_id = facts.team_id;
            out.flags = facts.flags;
        }
        parsed.push(dir);
    }
    // The strongest hash first: its CDHash is the one `codesign` shows.
    parsed.sort_by_key(|d| std::cmp::Reverse(hash_rank(d.hash_type)));
    for d in &parsed {
        if d.pages_differ > 0 {
            let p = if d.pages_differ == 1 { "page" } else { "pages" };
            problems.push(format!(
                "{} {p} differ{}: first at offset {}",
                d.pages_differ,
                if d.pages_differ == 1 { "s" } else { "" },
                d.first_differing_offset.unwrap_or(0)
            ));
            break;
        }
    }
    for d in &parsed {
        for s in &d.special_slots {
            if matches!(s.status, "differs" | "missing") {
                let p = format!("{} hash {}", s.name, s.status);
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
        if d.code_limit > image.len() as u64 {
            problems.push(format!(
                "signed range ends at {} but the image has {} bytes",
                d.code_limit,
                image.len()
            ));
        }
    }
    out.flag_names = FLAG_NAMES
        .iter()
        .filter(|(bit, _)| out.flags & bit != 0)
        .map(|&(_, n)| n)
        .collect();
    out.hardened_runtime = out.flags & CS_RUNTIME != 0;

    for b in &blobs {
        match be32(b.bytes, 0) {
            Some(REQUIREMENTS) => out.requirements = be32(b.bytes, 8),
            Some(ENTITLEMENTS) => out.entitlements = entitlement_keys(&b.bytes[8..]),
            _ => {}
        }
    }
    let cms = blobs
        .iter()
        .find(|b| b.kind == SLOT_CMS && be32(b.bytes, 0) == Some(CMS_WRAPPER))
        .map(|b| &b.bytes[8..])
        .filter(|d| !d.is_empty());
    let mut cms_error = None;
    if let Some(der) = cms {
        match cms_info::read(der) {
            Ok(facts) => {
                out.certificates = facts.certificates;
                out.signer = facts.signer;
                if let Some((alg, md)) = facts.signer_digest {
                    // The signer's messageDigest is over the first
                    // CodeDirectory's bytes (with the signer's algorithm).
                    let matches = cds
                        .iter()
                        .any(|cd| cms_info::digest(&alg, &[cd.bytes]).is_some_and(|d| d == md));
                    out.cms_digest_matches = Some(matches);
                    if !matches {
                        problems.push(
                            "the CMS signature's digest does not match any CodeDirectory".into(),
                        );
                    }
                }
            }
            Err(e) => cms_error = Some(e),
        }
    }
    out.code_directories = parsed;
    let ad_hoc = out.flags & CS_ADHOC != 0 || cms.is_none();
    (out.status, out.summary) = if !problems.is_empty() {
        (Status::Broken, format!("broken ({})", problems.join("; ")))
    } else if let Some(e) = cms_error {
        (Status::Malformed, format!("malformed ({e})"))
    } else if ad_hoc {
        (
            Status::AdHoc,
            "ad-hoc (hashes match; no certificate)".into(),
        )
    } else {
        (Status::Valid, "hashes match; signer not verified".into())
    };
    Ok(out)
}

fn hash_rank(name: &str) -> u8 {
    match name {
        "sha384" => 4,
        "sha256" => 3,
        "sha256-truncated" => 2,
        "sha1" => 1,
        _ => 0,
    }
}

/// The SuperBlob's index, each entry's blob checked to lie inside it.
fn superblob(sb: &[u8]) -> Result<Vec<Blob<'_>>, Malformed> {
    if be32(sb, 0) != Some(SUPERBLOB) {
        return Err("the signature does not start with a SuperBlob".into());
    }
    let len = be32(sb, 4).ok_or("SuperBlob truncated")? as usize;
    let sb = sb
        .get(..len)
        .ok_or_else(|| format!("SuperBlob claims {len} bytes but has {}", sb.len()))?;
    let count = be32(sb, 8).ok_or("SuperBlob truncated")? as usize;
    if count
        .checked_mul(8)
        .and_then(|x| x.checked_add(12))
        .is_none_or(|end| end > sb.len())
    {
        return Err(format!("SuperBlob claims {count} entries").into());
    }
    // Each entry names a blob that is parsed and hashed: a longer index
    // than a signature can hold, or one type listed twice, is malformed at
    // once instead of hashing the same bytes once per entry.
    if count > MAX_SUPERBLOB_ENTRIES {
        return Err(format!(
            "SuperBlob lists {count} entries (a signature holds one blob per type; at most {MAX_SUPERBLOB_ENTRIES})"
        ).into());
    }
    let mut blobs: Vec<Blob> = Vec::with_capacity(count);
    for i in 0..count {
        let kind = be32(sb, 12 + 8 * i).ok_or("index truncated")?;
        if blobs.iter().any(|b| b.kind == kind) {
            return Err(format!("SuperBlob lists blob type {kind:#x} twice").into());
        }
        let off = be32(sb, 16 + 8 * i).ok_or("index truncated")? as usize;
        let blen = be32(sb, off.saturating_add(4))
            .ok_or_else(|| format!("blob {kind:#x} at {off} lies outside the SuperBlob"))?
            as usize;
        if blen < 8 {
            return Err(format!("blob {kind:#x} has length {blen}").into());
        }
        let bytes = slice(sb, off, blen)
            .ok_or_else(|| format!("blob {kind:#x} at {off}+{blen} runs past the SuperBlob"))?;
        blobs.push(Blob { kind, bytes });
    }
    Ok(blobs)
}
