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
    assert!(e.to_string().contains("33 entries"), "{e}");
    let e = superblob(&index_of(&[0, 2, 0])).err().unwrap();
    assert!(e.to_string().contains("type 0x0 twice"), "{e}");
    let e = superblob(&index_of(&vec![0x10000; 100_000])).err().unwrap();
    assert!(e.to_string().contains("100000 entries"), "{e}");
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
        assert!(e.to_string().contains(says), "{entries:?}: {e}");
    }
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
    let xml = b"<plist><dict><key>com.apple.security.cs.allow-jit</key><true/><key>b</key></dict>";
    assert_eq!(
        entitlement_keys(xml),
        vec!["com.apple.security.cs.allow-jit", "b"]
    );
}
