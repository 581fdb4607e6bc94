//! A CodeDirectory: its fields read, every code page and special slot hashed
//! again and compared, the entitlements' keys listed.

use super::{Blob, MAX_ENTITLEMENTS, MAX_NAME};
use crate::container::bytes::{be32, be64};
use crate::container::codesign::{CodeDirectory, Malformed, SpecialSlot};
use rayon::prelude::*;

pub(super) struct CdFacts {
    pub(super) identifier: Option<String>,
    pub(super) team_id: Option<String>,
    pub(super) flags: u32,
}

fn cstr(b: &[u8], at: usize) -> Option<String> {
    let rest = b.get(at..)?;
    let end = memchr::memchr(0, rest)?;
    if end > MAX_NAME {
        return None;
    }
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// A CodeDirectory's hash type.
pub(super) struct Hasher {
    pub(super) name: &'static str,
    /// The length of a stored hash (a truncated one is shorter than the
    /// function's output).
    pub(super) len: usize,
    pub(super) hash: fn(&[u8]) -> Vec<u8>,
}

pub(super) fn hasher(kind: u8) -> Option<Hasher> {
    use sha2::Digest;
    let of = |name, len, hash| Some(Hasher { name, len, hash });
    match kind {
        1 => of("sha1", 20, |d| sha1::Sha1::digest(d).to_vec()),
        2 => of("sha256", 32, |d| sha2::Sha256::digest(d).to_vec()),
        3 => of("sha256-truncated", 20, |d| sha2::Sha256::digest(d).to_vec()),
        4 => of("sha384", 48, |d| sha2::Sha384::digest(d).to_vec()),
        _ => None,
    }
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
pub(super) struct HashWork {
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

pub(super) fn code_directory(
    cd: &[u8],
    image: &[u8],
    blobs: &[Blob],
    base: u64,
    work: &mut HashWork,
) -> Result<(CodeDirectory, CdFacts), Malformed> {
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
    let Hasher {
        name: hash_name,
        len,
        hash,
    } = hasher(hash_type).ok_or_else(|| format!("unknown hash type {hash_type}"))?;
    if hash_size != len {
        return Err(format!("hash size {hash_size} does not fit hash type {hash_name}").into());
    }
    if page_log > 30 {
        return Err(format!("page size 2^{page_log}").into());
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
        )
        .into());
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
pub(super) fn entitlement_keys(xml: &[u8]) -> Vec<String> {
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

    #[test]
    fn pages_are_hashed_once_per_hash_type_and_geometry() {
        let img: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
        let Hasher { len, hash, .. } = hasher(2).unwrap();
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
}
