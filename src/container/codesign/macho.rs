//! The Mach-O embedded signature (`LC_CODE_SIGNATURE`): a SuperBlob of a
//! CodeDirectory per hash type, the requirement set, entitlements and a CMS
//! blob. Every code page and every special slot is hashed again and compared.
//!
//! Layouts follow Apple's open-source `cs_blobs.h` (xnu) and `codesign`'s
//! documented behaviour; all integers in the blobs are big-endian.

use super::{
    CodeDirectory, Kind, MACHO_CHECKED, MachoSlice, NOT_CHECKED, Signature, SpecialSlot, Status,
    TRUST_NOTE, cms_info,
};
use crate::container::ContainerInfo;
use crate::container::bytes::{be32, be64, le32, slice};
use rayon::prelude::*;

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
        .map(|(arch, off, len)| {
            let image = slice(bytes, off, len).unwrap_or(&[]);
            check_slice(image, arch, off as u64)
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

fn malformed_file(detail: String) -> Signature {
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

/// `(arch, offset, size)` of every image: the fat slices, or the whole file.
fn slices(bytes: &[u8]) -> Result<Vec<(String, usize, usize)>, String> {
    if !matches!(bytes.get(..4), Some([0xca, 0xfe, 0xba, 0xbe])) {
        let cpu = le32(bytes, 4).unwrap_or(0);
        return Ok(vec![(
            crate::container::macho::arch_name(cpu),
            0,
            bytes.len(),
        )]);
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
        ));
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
            ));
        }
        if off < header_end && size > 0 {
            return Err(format!(
                "fat slice {i} ({off}+{size}) overlaps the fat header"
            ));
        }
        out.push((crate::container::macho::arch_name(cpu), off, size));
    }
    // Slices must not share bytes (the kernel refuses overlapping slices,
    // and `lipo` never writes them): a byte is then hashed for one slice
    // only, and the slices together are never more than the file.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (out[i].1, out[i].2));
    for w in order.windows(2) {
        let (a, b) = (&out[w[0]], &out[w[1]]);
        if a.1 + a.2 > b.1 {
            let (i, j) = (w[0].min(w[1]), w[0].max(w[1]));
            return Err(format!(
                "fat slices {i} ({}+{}) and {j} ({}+{}) overlap",
                out[i].1, out[i].2, out[j].1, out[j].2
            ));
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
fn signature_command(image: &[u8]) -> Result<Option<(usize, usize)>, String> {
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
            return Err(format!("load command at {at} has size {size}"));
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

fn check_slice_inner(image: &[u8], arch: &str, base: u64) -> Result<MachoSlice, String> {
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
fn superblob(sb: &[u8]) -> Result<Vec<Blob<'_>>, String> {
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
        return Err(format!("SuperBlob claims {count} entries"));
    }
    // Each entry names a blob that is parsed and hashed: a longer index
    // than a signature can hold, or one type listed twice, is malformed at
    // once instead of hashing the same bytes once per entry.
    if count > MAX_SUPERBLOB_ENTRIES {
        return Err(format!(
            "SuperBlob lists {count} entries (a signature holds one blob per type; at most {MAX_SUPERBLOB_ENTRIES})"
        ));
    }
    let mut blobs: Vec<Blob> = Vec::with_capacity(count);
    for i in 0..count {
        let kind = be32(sb, 12 + 8 * i).ok_or("index truncated")?;
        if blobs.iter().any(|b| b.kind == kind) {
            return Err(format!("SuperBlob lists blob type {kind:#x} twice"));
        }
        let off = be32(sb, 16 + 8 * i).ok_or("index truncated")? as usize;
        let blen = be32(sb, off.saturating_add(4))
            .ok_or_else(|| format!("blob {kind:#x} at {off} lies outside the SuperBlob"))?
            as usize;
        if blen < 8 {
            return Err(format!("blob {kind:#x} has length {blen}"));
        }
        let bytes = slice(sb, off, blen)
            .ok_or_else(|| format!("blob {kind:#x} at {off}+{blen} runs past the SuperBlob"))?;
        blobs.push(Blob { kind, bytes });
    }
    Ok(blobs)
}

struct CdFacts {
    identifier: Option<String>,
    team_id: Option<String>,
    flags: u32,
}

fn cstr(b: &[u8], at: usize) -> Option<String> {
    let rest = b.get(at..)?;
    let end = memchr::memchr(0, rest)?;
    if end > MAX_NAME {
        return None;
    }
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// A CodeDirectory hash: (name, stored length, function).
type Hasher = (&'static str, usize, fn(&[u8]) -> Vec<u8>);

fn hasher(kind: u8) -> Option<Hasher> {
    use sha2::Digest;
    Some(match kind {
        1 => ("sha1", 20, |d| sha1::Sha1::digest(d).to_vec()),
        2 => ("sha256", 32, |d| sha2::Sha256::digest(d).to_vec()),
        3 => ("sha256-truncated", 20, |d| sha2::Sha256::digest(d).to_vec()),
        4 => ("sha384", 48, |d| sha2::Sha384::digest(d).to_vec()),
        _ => return None,
    })
}

fn special_slot_name(slot: u32) -> (&'static str, Option<u32>) {
    // (name, the SuperBlob index type holding the blob it binds; None:
    // a file outside the executable)
    match slot {
        1 => ("Info.plist", None),
        2 => ("requirements", Some(2)),
        3 => ("resources", None),
        4 => ("application", None),
        5 => ("entitlements", Some(5)),
        6 => ("representation", None),
        7 => ("DER entitlements", Some(7)),
        _ => ("other", None),
    }
}

/// The hashing of one slice's check, shared by its CodeDirectories: the
/// page hashes are computed once per (hash type, page size, signed range)
/// and a blob once per hash type, so CodeDirectories that describe the
/// same pages (an index listing one twice, alternates of one hash type)
/// cost one pass over the image, not one each.
#[derive(Default)]
struct HashWork {
    /// (hash type, page size, code limit) → the stored-length hash of
    /// every page that lies in the image (a prefix of the pages).
    pages: Vec<((u8, u64, u64), Vec<u8>)>,
    /// (hash type, SuperBlob index type) → the blob's hash.
    blobs: Vec<((u8, u32), Vec<u8>)>,
}

impl HashWork {
    fn pages(
        &mut self,
        key: (u8, u64, u64),
        image: &[u8],
        n_code: usize,
        hash_size: usize,
        hash: fn(&[u8]) -> Vec<u8>,
    ) -> &[u8] {
        if let Some(i) = self.pages.iter().position(|(k, _)| *k == key) {
            return &self.pages[i].1;
        }
        let (_, page_size, code_limit) = key;
        let limit = usize::try_from(code_limit).unwrap_or(usize::MAX);
        let range = |i: usize| {
            if page_size == 0 {
                (0, limit)
            } else {
                let ps = page_size as usize;
                (
                    i.saturating_mul(ps),
                    i.saturating_add(1).saturating_mul(ps).min(limit),
                )
            }
        };
        // Pages past the end of a truncated image are not hashed (they
        // count as differing); those before it are a prefix.
        let present = (0..n_code)
            .position(|i| range(i).1 > image.len())
            .unwrap_or(n_code);
        // In parallel: a 250 MB slice is ~16,000 pages.
        let mut table = vec![0u8; present * hash_size];
        table
            .par_chunks_mut(hash_size)
            .enumerate()
            .for_each(|(i, out)| {
                let (start, end) = range(i);
                out.copy_from_slice(&hash(&image[start..end])[..hash_size]);
            });
        self.pages.push((key, table));
        &self.pages.last().expect("just pushed").1
    }

    fn blob(&mut self, key: (u8, u32), bytes: &[u8], hash: fn(&[u8]) -> Vec<u8>) -> &[u8] {
        if let Some(i) = self.blobs.iter().position(|(k, _)| *k == key) {
            return &self.blobs[i].1;
        }
        self.blobs.push((key, hash(bytes)));
        &self.blobs.last().expect("just pushed").1
    }
}

fn code_directory(
    cd: &[u8],
    image: &[u8],
    blobs: &[Blob],
    base: u64,
    work: &mut HashWork,
) -> Result<(CodeDirectory, CdFacts), String> {
    let field = |at: usize| be32(cd, at).ok_or_else(|| "CodeDirectory truncated".to_string());
    let version = field(8)?;
    let flags = field(12)?;
    let hash_offset = field(16)? as usize;
    let ident_offset = field(20)? as usize;
    let n_special = field(24)? as usize;
    let n_code = field(28)? as usize;
    let mut code_limit = field(32)? as u64;
    let hash_size = *cd.get(36).ok_or("CodeDirectory truncated")? as usize;
    let hash_type = *cd.get(37).ok_or("CodeDirectory truncated")?;
    let page_log = *cd.get(39).ok_or("CodeDirectory truncated")?;
    let scatter = if version >= 0x20100 { field(44)? } else { 0 };
    let team_offset = if version >= 0x20200 { field(48)? } else { 0 };
    if version >= 0x20300 {
        let limit64 = be64(cd, 56).ok_or("CodeDirectory truncated")?;
        if limit64 != 0 {
            code_limit = limit64;
        }
    }
    if scatter != 0 {
        return Err("scatter-vector CodeDirectories are not supported".into());
    }
    let (hash_name, len, hash) =
        hasher(hash_type).ok_or_else(|| format!("unknown hash type {hash_type}"))?;
    if hash_size != len {
        return Err(format!(
            "hash size {hash_size} does not fit hash type {hash_name}"
        ));
    }
    if page_log > 30 {
        return Err(format!("page size 2^{page_log}"));
    }
    let page_size: u64 = if page_log == 0 { 0 } else { 1 << page_log };
    let pages = if page_size == 0 {
        u64::from(code_limit > 0)
    } else {
        code_limit.div_ceil(page_size)
    };
    if pages != n_code as u64 {
        return Err(format!(
            "{n_code} code slots for {pages} pages of a {code_limit}-byte signed range"
        ));
    }
    let table_start = hash_offset
        .checked_sub(
            n_special
                .checked_mul(hash_size)
                .ok_or("special slots overflow")?,
        )
        .ok_or("special slots lie before the CodeDirectory")?;
    let table_end = n_code
        .checked_mul(hash_size)
        .and_then(|x| x.checked_add(hash_offset))
        .filter(|&e| e <= cd.len())
        .ok_or("hash slots run past the CodeDirectory")?;
    let table = &cd[table_start..table_end];
    let code_hashes = &table[n_special * hash_size..];

    // Recompute every page; pages past the end of a truncated image
    // count as differing.
    let computed = work.pages(
        (hash_type, page_size, code_limit),
        image,
        n_code,
        hash_size,
        hash,
    );
    let present = computed.len() / hash_size;
    let mut pages_differ = (n_code - present) as u64;
    let mut first = (present < n_code).then_some(present);
    for (i, (got, stored)) in computed
        .chunks_exact(hash_size)
        .zip(code_hashes.chunks_exact(hash_size))
        .enumerate()
    {
        if got != stored {
            pages_differ += 1;
            first = Some(first.map_or(i, |f| f.min(i)));
        }
    }
    let first = first.map(|i| base + i as u64 * page_size);

    let mut special_slots = Vec::new();
    for slot in 1..=n_special.min(64) as u32 {
        let at = (n_special - slot as usize) * hash_size;
        let stored = &table[at..at + hash_size];
        let (name, blob_kind) = special_slot_name(slot);
        let blob = blob_kind.and_then(|k| blobs.iter().find(|b| b.kind == k));
        let status = if stored.iter().all(|&b| b == 0) {
            "empty"
        } else if let Some(b) = blob {
            if work.blob((hash_type, b.kind), b.bytes, hash)[..hash_size] == *stored {
                "matches"
            } else {
                "differs"
            }
        } else if blob_kind.is_some() {
            "missing"
        } else {
            "external"
        };
        special_slots.push(SpecialSlot { slot, name, status });
    }
    let dir = CodeDirectory {
        hash_type: hash_name,
        version: format!("{version:#x}"),
        page_size,
        code_limit,
        code_pages: n_code as u64,
        pages_differ,
        first_differing_offset: first,
        special_slots,
        cdhash: hex::encode(&hash(cd)[..20]),
    };
    let facts = CdFacts {
        identifier: cstr(cd, ident_offset),
        team_id: (team_offset != 0)
            .then(|| cstr(cd, team_offset as usize))
            .flatten(),
        flags,
    };
    Ok((dir, facts))
}

/// The `<key>` names of an XML entitlements plist (values are not needed
/// to say what a build asks for, and are not parsed).
fn entitlement_keys(xml: &[u8]) -> Vec<String> {
    let mut keys = Vec::new();
    let mut rest = xml;
    while keys.len() < MAX_ENTITLEMENTS {
        let Some(start) = memchr::memmem::find(rest, b"<key>") else {
            break;
        };
        rest = &rest[start + 5..];
        let Some(end) = memchr::memmem::find(rest, b"</key>") else {
            break;
        };
        let key = &rest[..end.min(MAX_NAME)];
        keys.push(String::from_utf8_lossy(key).into_owned());
        rest = &rest[end + 6..];
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thin 64-bit Mach-O image of `code` bytes followed by an ad-hoc
    /// signature over them, written by hand (page size 4096, SHA-256).
    pub(crate) fn signed_image(code_len: usize) -> Vec<u8> {
        let sig_at = code_len.div_ceil(16) * 16;
        let mut img = vec![0u8; sig_at];
        img[..4].copy_from_slice(&0xfeed_facfu32.to_le_bytes());
        img[4..8].copy_from_slice(&0x0100_000cu32.to_le_bytes());
        img[16..20].copy_from_slice(&1u32.to_le_bytes());
        img[20..24].copy_from_slice(&16u32.to_le_bytes());
        img[32..36].copy_from_slice(&LC_CODE_SIGNATURE.to_le_bytes());
        img[36..40].copy_from_slice(&16u32.to_le_bytes());
        for (i, b) in img.iter_mut().enumerate().skip(48) {
            *b = (i % 251) as u8;
        }
        let ident = b"com.example.fixture\0";
        let pages = sig_at.div_ceil(4096);
        let hash_offset = 88 + ident.len() + 2 * 32;
        let cd_len = hash_offset + pages * 32;
        let mut cd = vec![0u8; 88];
        cd[0..4].copy_from_slice(&CODEDIRECTORY.to_be_bytes());
        cd[4..8].copy_from_slice(&(cd_len as u32).to_be_bytes());
        cd[8..12].copy_from_slice(&0x20400u32.to_be_bytes());
        cd[12..16].copy_from_slice(&CS_ADHOC.to_be_bytes());
        cd[16..20].copy_from_slice(&(hash_offset as u32).to_be_bytes());
        cd[20..24].copy_from_slice(&88u32.to_be_bytes());
        cd[24..28].copy_from_slice(&2u32.to_be_bytes());
        cd[28..32].copy_from_slice(&(pages as u32).to_be_bytes());
        cd[32..36].copy_from_slice(&(sig_at as u32).to_be_bytes());
        cd[36] = 32;
        cd[37] = 2;
        cd[39] = 12;
        cd.extend_from_slice(ident);
        // Special slots 2 (requirements) and 1 (Info.plist): empty.
        cd.extend_from_slice(&[0u8; 64]);
        use sha2::Digest;
        for p in 0..pages {
            let page = &img[p * 4096..((p + 1) * 4096).min(sig_at)];
            cd.extend_from_slice(&sha2::Sha256::digest(page));
        }
        let total = 12 + 8 + cd.len();
        let mut sb = Vec::new();
        sb.extend_from_slice(&SUPERBLOB.to_be_bytes());
        sb.extend_from_slice(&(total as u32).to_be_bytes());
        sb.extend_from_slice(&1u32.to_be_bytes());
        sb.extend_from_slice(&0u32.to_be_bytes());
        sb.extend_from_slice(&20u32.to_be_bytes());
        sb.extend_from_slice(&cd);
        img[40..44].copy_from_slice(&(sig_at as u32).to_le_bytes());
        img[44..48].copy_from_slice(&(sb.len() as u32).to_le_bytes());
        // The load command is part of the signed bytes: hash again.
        let hashes_at = 20 + hash_offset;
        for p in 0..pages {
            let page = &img[p * 4096..((p + 1) * 4096).min(sig_at)];
            sb[hashes_at + p * 32..hashes_at + (p + 1) * 32]
                .copy_from_slice(&sha2::Sha256::digest(page));
        }
        img.extend_from_slice(&sb);
        img
    }

    fn run(bytes: &[u8]) -> Signature {
        super::super::check_bytes(bytes)
    }

    #[test]
    fn ad_hoc_fixture_checks() {
        let img = signed_image(10_000);
        let s = run(&img);
        assert_eq!(s.status, Status::AdHoc, "{}", s.summary);
        assert_eq!(s.identifier.as_deref(), Some("com.example.fixture"));
        let cd = &s.slices[0].code_directories[0];
        assert_eq!(cd.code_pages, 3);
        assert_eq!(cd.hash_type, "sha256");
    }

    #[test]
    fn an_edited_page_is_named_with_its_offset() {
        let mut img = signed_image(10_000);
        img[5000] ^= 1;
        let s = run(&img);
        assert_eq!(s.status, Status::Broken);
        assert!(
            s.summary.contains("1 page differs: first at offset 4096"),
            "{}",
            s.summary
        );
    }

    #[test]
    fn no_signature_is_unsigned() {
        let mut img = signed_image(100);
        img[32..36].copy_from_slice(&0x19u32.to_le_bytes());
        assert_eq!(run(&img).status, Status::Unsigned);
    }

    #[test]
    fn hostile_lengths_are_findings_not_panics() {
        let good = signed_image(10_000);
        let sig_at = le32(&good, 40).unwrap() as usize;
        // Every 32-bit field of the load command, the SuperBlob and the
        // CodeDirectory set to hostile values in turn.
        let mut fields: Vec<usize> = (16..48).step_by(4).collect();
        fields.extend((sig_at..sig_at + 20 + 64).step_by(4));
        for at in fields {
            for v in [0u32, 1, 7, 0xffff_ffff, 0x7fff_ffff, 0x8000_0000, 4096] {
                let mut img = good.clone();
                if at < sig_at {
                    img[at..at + 4].copy_from_slice(&v.to_le_bytes());
                } else {
                    img[at..at + 4].copy_from_slice(&v.to_be_bytes());
                }
                let s = run(&img);
                assert!(!s.summary.is_empty());
            }
        }
        // Truncations anywhere.
        for cut in (0..good.len()).step_by(97) {
            let _ = run(&good[..cut]);
        }
    }

    #[test]
    fn fat_header_counts_are_bounded() {
        let mut fat = vec![0xca, 0xfe, 0xba, 0xbe];
        fat.extend_from_slice(&0xffff_fff0u32.to_be_bytes());
        let s = run(&fat);
        assert_eq!(s.status, Status::Malformed);
        assert!(s.summary.contains("slices"), "{}", s.summary);
    }

    /// A SuperBlob whose index lists `types`, all naming one 8-byte blob.
    fn index_of(types: &[u32]) -> Vec<u8> {
        let blob_at = 12 + 8 * types.len();
        let mut sb = SUPERBLOB.to_be_bytes().to_vec();
        sb.extend_from_slice(&((blob_at + 8) as u32).to_be_bytes());
        sb.extend_from_slice(&(types.len() as u32).to_be_bytes());
        for t in types {
            sb.extend_from_slice(&t.to_be_bytes());
            sb.extend_from_slice(&(blob_at as u32).to_be_bytes());
        }
        sb.extend_from_slice(&REQUIREMENTS.to_be_bytes());
        sb.extend_from_slice(&8u32.to_be_bytes());
        sb
    }

    #[test]
    fn a_superblob_index_holds_each_type_once_and_at_most_32() {
        let types: Vec<u32> = (0..32).collect();
        assert_eq!(superblob(&index_of(&types)).unwrap().len(), 32);
        let types: Vec<u32> = (0..33).collect();
        let e = superblob(&index_of(&types)).err().unwrap();
        assert!(e.contains("33 entries"), "{e}");
        let e = superblob(&index_of(&[0, 2, 0])).err().unwrap();
        assert!(e.contains("type 0x0 twice"), "{e}");
        let e = superblob(&index_of(&vec![0x10000; 100_000])).err().unwrap();
        assert!(e.contains("100000 entries"), "{e}");
    }

    fn fat_of(entries: &[(usize, usize)], len: usize) -> Vec<u8> {
        let mut b = vec![0xca, 0xfe, 0xba, 0xbe];
        b.extend_from_slice(&(entries.len() as u32).to_be_bytes());
        for &(off, size) in entries {
            for v in [0x0100_000cu32, 0, off as u32, size as u32, 14] {
                b.extend_from_slice(&v.to_be_bytes());
            }
        }
        b.resize(len, 0);
        b
    }

    #[test]
    fn fat_slices_never_share_bytes() {
        let ok = fat_of(&[(4096, 4096), (8192, 100)], 9000);
        assert_eq!(slices(&ok).unwrap().len(), 2);
        for (entries, says) in [
            (vec![(4096, 4096), (4096, 4096)], "overlap"),
            (
                vec![(8192, 100), (4096, 4097)],
                "0 (8192+100) and 1 (4096+4097) overlap",
            ),
            (vec![(0, 100)], "overlaps the fat header"),
            (vec![(4096, 1); 33], "33 slices"),
        ] {
            let e = slices(&fat_of(&entries, 9000)).err().unwrap();
            assert!(e.contains(says), "{entries:?}: {e}");
        }
    }

    #[test]
    fn pages_are_hashed_once_per_hash_type_and_geometry() {
        let img: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
        let (_, len, hash) = hasher(2).unwrap();
        let mut work = HashWork::default();
        let a = work.pages((2, 4096, 20_000), &img, 5, len, hash).to_vec();
        let b = work.pages((2, 4096, 20_000), &img, 5, len, hash).to_vec();
        assert_eq!(a, b);
        assert_eq!(work.pages.len(), 1);
        assert_eq!(a.len(), 5 * 32);
        // A signed range past the image: only the pages inside are hashed.
        let c = work.pages((2, 4096, 40_000), &img, 10, len, hash);
        assert_eq!(c.len(), 4 * 32);
        assert_eq!(work.pages.len(), 2);
    }

    #[test]
    fn the_published_cdhash_is_compared() {
        let img = signed_image(10_000);
        let published = run(&img);
        let mut same = published.clone();
        same.compare_with_published(&published);
        let p = same.published.as_ref().unwrap();
        assert!(p.matches);
        assert!(
            same.line().contains("CDHash matches the published build's"),
            "{}",
            same.line()
        );
        // The same CodeDirectory over edited bytes: the CDHash matches,
        // the bytes do not.
        let mut edited = img.clone();
        edited[5000] ^= 1;
        let mut edited = run(&edited);
        edited.compare_with_published(&published);
        assert!(edited.published.as_ref().unwrap().matches);
        assert!(
            edited.line().contains("no longer match"),
            "{}",
            edited.line()
        );
        // Another signature altogether.
        let mut other = run(&signed_image(12_000));
        other.compare_with_published(&published);
        assert!(!other.published.as_ref().unwrap().matches);
        assert!(
            other.line().contains("differs from the published build's"),
            "{}",
            other.line()
        );
        // A stripped signature against a signed build.
        let mut stripped = signed_image(100);
        stripped[32..36].copy_from_slice(&0x19u32.to_le_bytes());
        let mut stripped = run(&stripped);
        stripped.compare_with_published(&published);
        assert!(!stripped.published.as_ref().unwrap().matches);
        assert!(
            stripped.line().contains("this file has none"),
            "{}",
            stripped.line()
        );
    }

    #[test]
    fn entitlement_keys_are_listed() {
        let xml =
            b"<plist><dict><key>com.apple.security.cs.allow-jit</key><true/><key>b</key></dict>";
        assert_eq!(
            entitlement_keys(xml),
            vec!["com.apple.security.cs.allow-jit", "b"]
        );
    }
}
