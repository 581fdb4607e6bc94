//! Code signatures built by these tests (never taken from a build): the
//! work a signature costs is bounded by what the file really holds, not
//! by the counts it claims (issue 27), and a `valid` verdict never reads
//! as "signed by" whoever the certificate names.
//!
//! Every shape here is written byte by byte: a thin arm64 Mach-O holding a
//! small Bun payload and an `LC_CODE_SIGNATURE`, fat headers, a PE with a
//! certificate table, and CMS SignedData with certificates made up here.
//! Set `CC_TEARDOWN_SAMPLES=DIR` to keep the files written (for timing
//! them by hand).

use crate::common;

use common::*;
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SUPERBLOB: u32 = 0xfade_0cc0;
const CODEDIRECTORY: u32 = 0xfade_0c02;
const REQUIREMENTS: u32 = 0xfade_0c01;
const CMS_WRAPPER: u32 = 0xfade_0b01;
const CS_ADHOC: u32 = 0x2;
/// What every command must take at most on these files (the promise is
/// 10 s; a loaded machine and a debug build get the rest).
const FAST: Duration = Duration::from_secs(10);

// ---- Mach-O -------------------------------------------------------------

/// A thin arm64 Mach-O: header, `LC_CODE_SIGNATURE`, `code_len` bytes of
/// code holding a Bun payload, then the SuperBlob `sign` writes for the
/// signed bytes (everything before it).
fn signed_macho(code_len: usize, sign: &dyn Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let payload = build_payload(&[Spec::js("/$bunfs/root/cli", b"export const a = 1;\n")], 0);
    let mut img = vec![0u8; 48];
    img[..4].copy_from_slice(&0xfeed_facfu32.to_le_bytes());
    img[4..8].copy_from_slice(&CPU_ARM64.to_le_bytes());
    img[12..16].copy_from_slice(&2u32.to_le_bytes()); // MH_EXECUTE
    img[16..20].copy_from_slice(&1u32.to_le_bytes());
    img[20..24].copy_from_slice(&16u32.to_le_bytes());
    img[32..36].copy_from_slice(&0x1du32.to_le_bytes());
    img[36..40].copy_from_slice(&16u32.to_le_bytes());
    img.extend((0..code_len).map(|i| (i % 251) as u8));
    img.extend_from_slice(&payload);
    img.resize(img.len().div_ceil(16) * 16, 0);
    let sig_at = img.len();
    img[40..44].copy_from_slice(&(sig_at as u32).to_le_bytes());
    // The SuperBlob's size does not depend on the hashes in it: write it
    // once to learn its size, then for the bytes that name that size.
    let size = sign(&img).len();
    img[44..48].copy_from_slice(&(size as u32).to_le_bytes());
    let sb = sign(&img);
    assert_eq!(sb.len(), size);
    img.extend_from_slice(&sb);
    img
}

/// A CodeDirectory (version 0x20400) over `signed`: hash type 1 (SHA-1)
/// or 2 (SHA-256), pages of 2^`page_log` bytes, no special slots.
fn code_directory(signed: &[u8], hash_type: u8, page_log: u8, flags: u32, team: &str) -> Vec<u8> {
    code_directory_with_slots(signed, hash_type, page_log, flags, team, 0)
}

/// [`code_directory`] with `special` special slots: those that bind a
/// blob of the signature (2, 5, 7) empty, the others bound to files
/// outside the executable (`external`).
fn code_directory_with_slots(
    signed: &[u8],
    hash_type: u8,
    page_log: u8,
    flags: u32,
    team: &str,
    special: usize,
) -> Vec<u8> {
    let hash = |d: &[u8]| -> Vec<u8> {
        if hash_type == 1 {
            sha1::Sha1::digest(d).to_vec()
        } else {
            sha2::Sha256::digest(d).to_vec()
        }
    };
    let hash_size = if hash_type == 1 { 20 } else { 32 };
    let ident = b"com.example.signed\0";
    let team_at = 88 + ident.len();
    let hash_offset = team_at + team.len() + 1 + special * hash_size;
    let page = 1usize << page_log;
    let pages = signed.len().div_ceil(page);
    let mut cd = vec![0u8; 88];
    cd[0..4].copy_from_slice(&CODEDIRECTORY.to_be_bytes());
    cd[4..8].copy_from_slice(&((hash_offset + pages * hash_size) as u32).to_be_bytes());
    cd[8..12].copy_from_slice(&0x20400u32.to_be_bytes());
    cd[12..16].copy_from_slice(&flags.to_be_bytes());
    cd[16..20].copy_from_slice(&(hash_offset as u32).to_be_bytes());
    cd[20..24].copy_from_slice(&88u32.to_be_bytes());
    cd[24..28].copy_from_slice(&(special as u32).to_be_bytes());
    cd[28..32].copy_from_slice(&(pages as u32).to_be_bytes());
    cd[32..36].copy_from_slice(&(signed.len() as u32).to_be_bytes());
    cd[36] = hash_size as u8;
    cd[37] = hash_type;
    cd[39] = page_log;
    cd[48..52].copy_from_slice(&(team_at as u32).to_be_bytes());
    cd.extend_from_slice(ident);
    cd.extend_from_slice(team.as_bytes());
    cd.push(0);
    // Slot n is stored n slots before the code hashes.
    for slot in (1..=special).rev() {
        let bound_here = matches!(slot, 2 | 5 | 7);
        cd.extend(std::iter::repeat_n(
            if bound_here { 0 } else { 0x5a },
            hash_size,
        ));
    }
    for p in signed.chunks(page) {
        cd.extend_from_slice(&hash(p));
    }
    cd
}

/// A SuperBlob whose index lists `index` (type, number of the blob in
/// `blobs`); each blob is written once, however often it is listed.
fn superblob(index: &[(u32, usize)], blobs: &[Vec<u8>]) -> Vec<u8> {
    let mut at = 12 + 8 * index.len();
    let mut offsets = Vec::new();
    for b in blobs {
        offsets.push(at);
        at += b.len();
    }
    let mut sb = Vec::with_capacity(at);
    sb.extend_from_slice(&SUPERBLOB.to_be_bytes());
    sb.extend_from_slice(&(at as u32).to_be_bytes());
    sb.extend_from_slice(&(index.len() as u32).to_be_bytes());
    for &(kind, blob) in index {
        sb.extend_from_slice(&kind.to_be_bytes());
        sb.extend_from_slice(&(offsets[blob] as u32).to_be_bytes());
    }
    for b in blobs {
        sb.extend_from_slice(b);
    }
    sb
}

/// A blob of the requirements kind (an empty requirement set).
fn requirements() -> Vec<u8> {
    let mut b = REQUIREMENTS.to_be_bytes().to_vec();
    b.extend_from_slice(&12u32.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b
}

fn cms_wrapper(der: &[u8]) -> Vec<u8> {
    let mut b = CMS_WRAPPER.to_be_bytes().to_vec();
    b.extend_from_slice(&((8 + der.len()) as u32).to_be_bytes());
    b.extend_from_slice(der);
    b
}

/// A fat header listing `entries` (cpu type, offset, size), then the
/// given images at their offsets.
fn fat(entries: &[(u32, usize, usize)], images: &[(usize, &[u8])]) -> Vec<u8> {
    let mut out = 0xcafe_babeu32.to_be_bytes().to_vec();
    out.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    for &(cpu, off, size) in entries {
        for v in [cpu, 0, off as u32, size as u32, 14] {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
    for &(at, img) in images {
        if out.len() < at + img.len() {
            out.resize(at + img.len(), 0);
        }
        out[at..at + img.len()].copy_from_slice(img);
    }
    out
}

// ---- DER, CMS and certificates made up here -----------------------------

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = (n as u64).to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (8 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

fn set(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x31, &parts.concat())
}

fn oid(encoded: &[u8]) -> Vec<u8> {
    tlv(0x06, encoded)
}

fn int(v: u32) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(3);
    let mut c = bytes[skip..].to_vec();
    if c[0] & 0x80 != 0 {
        c.insert(0, 0);
    }
    tlv(0x02, &c)
}

const SHA256: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01];
const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const SHA256_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
const SIGNED_DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
const DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01];
const CONTENT_TYPE: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03];
const MESSAGE_DIGEST: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04];
const SPC_INDIRECT_DATA: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04];
const SPC_PE_IMAGE_DATA: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x0f];
const CN: &[u8] = &[0x55, 0x04, 0x03];
const ORG: &[u8] = &[0x55, 0x04, 0x0a];
const ORG_UNIT: &[u8] = &[0x55, 0x04, 0x0b];

fn alg(o: &[u8]) -> Vec<u8> {
    seq(&[oid(o)])
}

/// A Name of one attribute per RDN.
fn name(attrs: &[(&[u8], &str)]) -> Vec<u8> {
    seq(&attrs
        .iter()
        .map(|(o, v)| set(&[seq(&[oid(o), tlv(0x0c, v.as_bytes())])]))
        .collect::<Vec<_>>())
}

/// A certificate made up here: any subject, issued by `issuer`, whose
/// signature is not a signature at all (nothing here checks it, which is
/// the point of the verdict's wording).
fn certificate(serial: u32, issuer: &[u8], subject: &[u8]) -> Vec<u8> {
    let tbs = seq(&[
        tlv(0xa0, &int(2)),
        int(serial),
        alg(SHA256_RSA),
        issuer.to_vec(),
        seq(&[tlv(0x17, b"250101000000Z"), tlv(0x17, b"350101000000Z")]),
        subject.to_vec(),
        seq(&[alg(RSA), tlv(0x03, &[0])]),
    ]);
    seq(&[tbs, alg(SHA256_RSA), tlv(0x03, &[0])])
}

/// ContentInfo(SignedData) with the given certificates (the signer is the
/// first: `issuer` and serial 1), encapsulated content `econtent` (None:
/// detached, as Apple's) and a messageDigest attribute of `digest`.
/// `extra_attrs` are added to the signed attributes.
fn signed_data(
    certs: &[Vec<u8>],
    issuer: &[u8],
    econtent: Option<(Vec<u8>, Vec<u8>)>,
    digest: &[u8],
    extra_attrs: &[Vec<u8>],
) -> Vec<u8> {
    let mut attrs = vec![
        seq(&[oid(CONTENT_TYPE), set(&[oid(DATA)])]),
        seq(&[oid(MESSAGE_DIGEST), set(&[tlv(0x04, digest)])]),
    ];
    attrs.extend_from_slice(extra_attrs);
    let signer = seq(&[
        int(1),
        seq(&[issuer.to_vec(), int(1)]),
        seq(&[oid(SHA256)]),
        tlv(0xa0, &attrs.concat()),
        alg(RSA),
        tlv(0x04, &[9; 16]),
    ]);
    let encap = match econtent {
        Some((content_type, content)) => seq(&[oid(&content_type), tlv(0xa0, &content)]),
        None => seq(&[oid(DATA)]),
    };
    let sd = seq(&[
        int(1),
        set(&[seq(&[oid(SHA256)])]),
        encap,
        tlv(0xa0, &certs.concat()),
        set(&[signer]),
    ]);
    seq(&[oid(SIGNED_DATA), tlv(0xa0, &sd)])
}

/// The organisation name Claude Code's certificates carry, built at run
/// time (a pre-commit check refuses the literal in committed files).
fn vendor() -> String {
    ["Anthrop", "ic PBC"].concat()
}

/// A self-made signing certificate that names `org` and Team ID `team`.
fn forged_signer(org: &str, team: &str) -> (Vec<u8>, Vec<u8>) {
    let issuer = name(&[
        (CN, "Developer ID Certification Authority"),
        (ORG, "Apple Inc."),
    ]);
    let subject = name(&[
        (CN, &format!("Developer ID Application: {org} ({team})")),
        (ORG_UNIT, team),
        (ORG, org),
    ]);
    (certificate(1, &issuer, &subject), issuer)
}

// ---- PE ----------------------------------------------------------------

/// A PE with a `.bun` section and, appended, a certificate table holding
/// one `WIN_CERTIFICATE` per DER blob `sign` returns for the digest the
/// table must carry.
fn signed_pe(sign: &dyn Fn(&[u8]) -> Vec<Vec<u8>>) -> Vec<u8> {
    let payload = build_payload(&[Spec::js("/$bunfs/root/cli", b"export const a = 1;\n")], 0);
    let mut b = pe_with_section(&with_header(&payload, 8), false);
    b.resize(b.len().div_ceil(8) * 8, 0);
    let pe = u32::from_le_bytes(b[0x3c..0x40].try_into().unwrap()) as usize;
    let opt = pe + 24;
    assert_eq!(&b[opt..opt + 2], &0x20bu16.to_le_bytes());
    let checksum = opt + 64;
    let entry = opt + 112 + 4 * 8;
    let off = b.len();
    let digest = {
        let mut h = sha2::Sha256::new();
        h.update(&b[..checksum]);
        h.update(&b[checksum + 4..entry]);
        h.update(&b[entry + 8..off]);
        h.finalize().to_vec()
    };
    let mut table = Vec::new();
    for der in sign(&digest) {
        let len = 8 + der.len();
        table.extend_from_slice(&(len as u32).to_le_bytes());
        table.extend_from_slice(&0x200u16.to_le_bytes());
        table.extend_from_slice(&2u16.to_le_bytes());
        table.extend_from_slice(&der);
        table.resize(table.len().div_ceil(8) * 8, 0);
    }
    b[entry..entry + 4].copy_from_slice(&(off as u32).to_le_bytes());
    b[entry + 4..entry + 8].copy_from_slice(&(table.len() as u32).to_le_bytes());
    b.extend_from_slice(&table);
    b
}

/// Authenticode SignedData carrying `digest` of a PE image.
fn authenticode(certs: &[Vec<u8>], issuer: &[u8], digest: &[u8]) -> Vec<u8> {
    let spc = seq(&[
        seq(&[oid(SPC_PE_IMAGE_DATA)]),
        seq(&[alg(SHA256), tlv(0x04, digest)]),
    ]);
    signed_data(
        certs,
        issuer,
        Some((SPC_INDIRECT_DATA.to_vec(), spc)),
        &[0; 32],
        &[],
    )
}

// ---- running -----------------------------------------------------------

fn samples() -> (Option<tempfile::TempDir>, PathBuf) {
    match std::env::var_os("CC_TEARDOWN_SAMPLES") {
        Some(d) => {
            std::fs::create_dir_all(&d).unwrap();
            (None, PathBuf::from(d))
        }
        None => {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

/// `ARGS` with a cache folder of its own, timed.
fn timed(args: &[&str]) -> (std::process::Output, Duration) {
    let cache = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = bin()
        .env("CC_TEARDOWN_CACHE", cache.path())
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (out, start.elapsed())
}

/// `info --json` on `file`, timed: the signature and the size of the JSON.
fn info(file: &str) -> (serde_json::Value, usize, Duration) {
    let (out, took) = timed(&["info", file, "--json"]);
    succeeded(file, &out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["signature"].clone(), out.stdout.len(), took)
}

/// Every command that shows a signature, on `file`: within [`FAST`], with
/// a one-line signature verdict; returns `info --json`'s signature.
fn every_command(file: &str) -> serde_json::Value {
    let (sig, json_len, took) = info(file);
    assert!(took < FAST, "info --json {file}: {took:?}");
    // The signature's JSON is bounded by what it holds.
    let sig_len = sig.to_string().len();
    assert!(
        sig_len < 64 * 1024,
        "info --json {file}: {sig_len} bytes of signature"
    );
    assert!(json_len < 16 << 20, "info --json {file}: {json_len} bytes");
    for args in [vec!["info", file], vec!["report", file]] {
        let (out, took) = timed(&args);
        succeeded(&args, &out);
        assert!(took < FAST, "{args:?}: {took:?}");
        assert!(
            out.stdout.len() < 1 << 20,
            "{args:?}: {} bytes",
            out.stdout.len()
        );
    }
    assert!(!sig["summary"].as_str().unwrap().contains('\n'));
    sig
}

fn summary(sig: &serde_json::Value) -> &str {
    sig["summary"].as_str().unwrap()
}

// ---- finding 1 and 2: SuperBlob and fat entries ------------------------

/// An ad-hoc signature whose index lists `types` for one CodeDirectory.
fn one_cd_listed(types: &[u32]) -> impl Fn(&[u8]) -> Vec<u8> {
    let types = types.to_vec();
    move |signed: &[u8]| {
        // Small pages and 64 special slots: a CodeDirectory that is costly
        // to check and to print, as the reviewer's was.
        let cd = code_directory_with_slots(signed, 2, 4, CS_ADHOC, "", 64);
        let index: Vec<(u32, usize)> = types.iter().map(|&t| (t, 0)).collect();
        superblob(&index, &[cd])
    }
}

#[test]
fn a_superblob_listing_one_code_directory_100000_times_is_malformed_at_once() {
    let (_keep, dir) = samples();
    // The reviewer's sample: 100,000 index entries, all the CodeDirectory
    // (an 800 kB file).
    let b = signed_macho(16_384, &one_cd_listed(&vec![0; 100_000]));
    assert!(b.len() > 800_000 && b.len() < 900_000, "{}", b.len());
    let sig = every_command(&write(&dir, "cd-100000.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("100000 entries"), "{sig}");

    // Sibling: 31 entries (under the count cap) naming one blob of
    // another type, beside the CodeDirectory: one type twice is malformed.
    let sign = |signed: &[u8]| {
        let cd = code_directory(signed, 2, 12, CS_ADHOC, "");
        let mut index = vec![(0, 0)];
        index.extend(std::iter::repeat_n((2, 1), 30));
        superblob(&index, &[cd, requirements()])
    };
    let b = signed_macho(4096, &sign);
    let sig = every_command(&write(&dir, "requirements-30.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("blob type 0x2 twice"), "{sig}");

    // Sibling: the CodeDirectory listed under the primary and every
    // alternate type (distinct types, one blob): one CodeDirectory.
    let b = signed_macho(
        4096,
        &one_cd_listed(&[0, 0x1000, 0x1001, 0x1002, 0x1003, 0x1004]),
    );
    let sig = every_command(&write(&dir, "cd-six-types.macho", &b));
    assert_eq!(sig["status"], "ad-hoc", "{sig}");
    assert_eq!(
        sig["slices"][0]["code_directories"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn many_distinct_code_directories_cost_one_pass_each_at_most() {
    let (_keep, dir) = samples();
    // Six CodeDirectories (the most a signature may name), each over a
    // 6 MB image with its own hash and page size: every one is checked.
    let sign = |signed: &[u8]| {
        let cds: Vec<Vec<u8>> = [(2, 12), (1, 12), (2, 14), (1, 16), (2, 10), (2, 12)]
            .iter()
            .map(|&(h, p)| code_directory(signed, h, p, CS_ADHOC, ""))
            .collect();
        let index: Vec<(u32, usize)> = [0, 0x1000, 0x1001, 0x1002, 0x1003, 0x1004]
            .into_iter()
            .zip(0..)
            .collect();
        superblob(&index, &cds)
    };
    let b = signed_macho(6 << 20, &sign);
    let sig = every_command(&write(&dir, "six-cds.macho", &b));
    assert_eq!(sig["status"], "ad-hoc", "{sig}");
    assert_eq!(
        sig["slices"][0]["code_directories"]
            .as_array()
            .unwrap()
            .len(),
        6
    );

    // Sibling: entries past the count cap, each a distinct small
    // CodeDirectory-typed blob: malformed, said at once.
    let sign = |signed: &[u8]| {
        let cd = code_directory(signed, 2, 12, CS_ADHOC, "");
        let index: Vec<(u32, usize)> = (0..5000u32).map(|i| (0x20 + i, 0)).collect();
        superblob(&index, &[cd])
    };
    let b = signed_macho(4096, &sign);
    let sig = every_command(&write(&dir, "types-5000.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("5000 entries"), "{sig}");
}

#[test]
fn a_fat_header_listing_one_slice_50000_times_is_malformed_at_once() {
    let (_keep, dir) = samples();
    let thin = signed_macho(4096, &one_cd_listed(&[0]));
    // The reviewer's sample: 50,000 entries, all the one signed slice.
    let n: usize = 50_000;
    let at = (8 + 20 * n).div_ceil(16384) * 16384;
    let entries = vec![(CPU_ARM64, at, thin.len()); n];
    let b = fat(&entries, &[(at, &thin)]);
    // The container reader refuses such a header before any slice is
    // listed or checked: one line (a JSON error object with --json), at
    // once, whatever the command.
    let file = write(&dir, "fat-50000.macho", &b);
    for args in [
        vec!["info", &file],
        vec!["info", &file, "--json"],
        vec!["report", &file],
        vec!["ls", &file],
    ] {
        let (out, took) = timed(&args);
        assert!(took < FAST, "{args:?}: {took:?}");
        let said = if args.contains(&"--json") {
            failed(&args, &out);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        } else {
            one_line_error(&args, &out)
        };
        assert!(said.contains("50000 slices"), "{args:?}: {said}");
        assert!(
            out.stdout.len() < 4096,
            "{args:?}: {} bytes",
            out.stdout.len()
        );
    }
    // The signature reader on its own (as the fuzz target and any caller
    // handing it bytes) stops there too.
    let sig = cc_teardown::container::codesign::check_bytes(&b);
    assert_eq!(
        serde_json::to_value(&sig).unwrap()["status"],
        "malformed",
        "{}",
        sig.line()
    );
    assert!(sig.line().contains("50000 slices"), "{}", sig.line());

    // Sibling: two entries (under the cap) naming the same slice.
    let b = fat(
        &[
            (CPU_ARM64, 16384, thin.len()),
            (CPU_X86_64, 16384, thin.len()),
        ],
        &[(16384, &thin)],
    );
    let sig = every_command(&write(&dir, "fat-twice.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("overlap"), "{sig}");

    // Sibling: overlapping but not equal ranges (the second starts inside
    // the first).
    let b = fat(
        &[
            (CPU_ARM64, 16384, thin.len()),
            (CPU_X86_64, 16384 + 4096, thin.len() - 4096),
        ],
        &[(16384, &thin)],
    );
    let sig = every_command(&write(&dir, "fat-overlap.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("overlap"), "{sig}");

    // Fat and thin together, as real universal builds: two slices, each
    // checked once and reported once.
    let other = signed_macho(8192, &one_cd_listed(&[0]));
    let second = (16384 + thin.len()).div_ceil(16384) * 16384;
    let b = fat(
        &[
            (CPU_ARM64, 16384, thin.len()),
            (CPU_X86_64, second, other.len()),
        ],
        &[(16384, &thin), (second, &other)],
    );
    let sig = every_command(&write(&dir, "fat-two.macho", &b));
    assert_eq!(sig["status"], "ad-hoc", "{sig}");
    assert_eq!(sig["slices"].as_array().unwrap().len(), 2);
}

// ---- finding 3: certificate sets ---------------------------------------

/// An Apple-style signature over a CodeDirectory whose CMS holds `cms`.
fn cms_signed(cms: impl Fn(&[u8]) -> Vec<u8>) -> impl Fn(&[u8]) -> Vec<u8> {
    move |signed: &[u8]| {
        let cd = code_directory(signed, 2, 12, 0, "TEAMID1234");
        let der = cms(&sha2::Sha256::digest(&cd));
        superblob(&[(0, 0), (0x10000, 1)], &[cd, cms_wrapper(&der)])
    }
}

#[test]
fn ten_thousand_certificates_are_refused_before_the_set_is_sorted() {
    let (_keep, dir) = samples();
    let (leaf, issuer) = forged_signer("Example Signing Ltd", "TEAMID1234");
    // The reviewer's sample: 10,600 small certificates (1 MB, under the
    // CMS cap).
    let many = |n: u32| {
        let mut certs = vec![leaf.clone()];
        for i in 2..n + 2 {
            certs.push(certificate(i, &seq(&[]), &seq(&[])));
        }
        certs
    };
    let certs = many(10_600);
    let b = signed_macho(
        4096,
        &cms_signed(|d| signed_data(&certs, &issuer, None, d, &[])),
    );
    assert!(b.len() > 900_000 && b.len() < 1 << 20, "{}", b.len());
    let sig = every_command(&write(&dir, "certs-10600.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("more than"), "{sig}");

    // Sibling: 10,000 signed attributes (the SET inside the signer info).
    let attrs: Vec<Vec<u8>> = (0..10_000u32)
        .map(|i| seq(&[oid(&[0x2a, 0x03, (i % 100) as u8]), set(&[int(i)])]))
        .collect();
    let b = signed_macho(
        4096,
        &cms_signed(|d| signed_data(std::slice::from_ref(&leaf), &issuer, None, d, &attrs)),
    );
    let sig = every_command(&write(&dir, "attributes-10000.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("more than"), "{sig}");

    // Sibling: one certificate whose subject is one RDN SET of 10,000
    // attributes (a SET nested in the certificate set).
    let avas: Vec<Vec<u8>> = (0..10_000u32)
        .map(|i| seq(&[oid(CN), tlv(0x0c, format!("n{i}").as_bytes())]))
        .collect();
    let odd = certificate(7, &issuer, &seq(&[set(&avas)]));
    let b = signed_macho(
        4096,
        &cms_signed(|d| signed_data(&[leaf.clone(), odd.clone()], &issuer, None, d, &[])),
    );
    let sig = every_command(&write(&dir, "rdn-10000.macho", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");

    // Sibling: Authenticode (PE) with the 10,600 certificates, and a
    // certificate table of 5,000 entries.
    let b = signed_pe(&|digest| vec![authenticode(&certs, &issuer, digest)]);
    let sig = every_command(&write(&dir, "certs-10600.exe", &b));
    assert_eq!(sig["status"], "malformed", "{sig}");
    assert!(summary(&sig).contains("more than"), "{sig}");
    let b = signed_pe(&|digest| {
        let one = authenticode(std::slice::from_ref(&leaf), &issuer, digest);
        vec![one; 5000]
    });
    let sig = every_command(&write(&dir, "entries-5000.exe", &b));
    assert_eq!(sig["status"], "valid", "{sig}");

    // Real-sized sets still read: 40 certificates.
    let certs = many(39);
    let b = signed_macho(
        4096,
        &cms_signed(|d| signed_data(&certs, &issuer, None, d, &[])),
    );
    let sig = every_command(&write(&dir, "certs-40.macho", &b));
    assert_eq!(sig["status"], "valid", "{sig}");
    assert_eq!(
        sig["slices"][0]["certificates"].as_array().unwrap().len(),
        40
    );
}

// ---- finding 4: integrity is not identity ------------------------------

#[test]
fn a_self_made_certificate_is_not_reported_as_its_claimed_signer() {
    let (_keep, dir) = samples();
    let org = vendor();
    for (org, team, name) in [
        (org.as_str(), "Q6L2SF6YDW", "forged-vendor.macho"),
        ("Example Signing Ltd", "ABCDE12345", "forged-other.macho"),
    ] {
        let (leaf, issuer) = forged_signer(org, team);
        let sign = |signed: &[u8]| {
            let cd = code_directory(signed, 2, 12, 0x1_0000, team);
            let der = signed_data(
                std::slice::from_ref(&leaf),
                &issuer,
                None,
                &sha2::Sha256::digest(&cd),
                &[],
            );
            superblob(&[(0, 0), (0x10000, 1)], &[cd, cms_wrapper(&der)])
        };
        let file = write(&dir, name, &signed_macho(4096, &sign));
        let sig = every_command(&file);
        // The hashes match: the JSON status stays `valid` …
        assert_eq!(sig["status"], "valid", "{sig}");
        assert_eq!(sig["team_id"], team);
        assert_eq!(sig["slices"][0]["cms_digest_matches"], true);
        assert!(sig["signer"].as_str().unwrap().contains(org), "{sig}");
        // … but nothing says who signed.
        assert_eq!(sig["identity_verified"], false, "{sig}");
        assert!(summary(&sig).contains("signer not verified"), "{sig}");
        let not_checked = sig["not_checked"].to_string();
        assert!(not_checked.contains("certificate chain"), "{sig}");
        assert!(sig["checked"].to_string().contains("code page"), "{sig}");
        assert!(
            sig["trust"]
                .as_str()
                .unwrap()
                .contains("not proof of who signed")
        );
        let out = bin().args(["info", &file]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().find(|l| l.contains("signature")).unwrap();
        assert!(line.contains("signer not verified"), "{text}");
        assert!(line.contains(&format!("claimed Team ID {team}")), "{text}");
        assert!(!line.contains(" valid"), "{text}");
        assert!(text.contains("not proof of who signed"), "{text}");
    }

    // Sibling: Authenticode with a self-made certificate naming the vendor.
    let (leaf, issuer) = forged_signer(&org, "Q6L2SF6YDW");
    let b = signed_pe(&|digest| vec![authenticode(std::slice::from_ref(&leaf), &issuer, digest)]);
    let file = write(&dir, "forged.exe", &b);
    let sig = every_command(&file);
    assert_eq!(sig["status"], "valid", "{sig}");
    assert_eq!(sig["identity_verified"], false);
    assert!(summary(&sig).contains("signer not verified"), "{sig}");
    let out = bin().args(["report", &file]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("code signature")).unwrap();
    assert!(line.contains("claimed signer"), "{text}");
    assert!(line.contains("signer not verified"), "{text}");
}
