//! Shared test support: synthetic payloads and containers written by this
//! project, the real-Bun fixtures, and running the binary (`run`: each
//! test in a sandbox of its own, and the assertions the suites share).
#![allow(dead_code)]

mod run;
pub use run::*;

use object::write::{Object, StandardSection};
use object::{Architecture, BinaryFormat, Endianness, SectionKind};
use std::path::{Path, PathBuf};

pub const TRAILER: &[u8; 16] = b"\n---- Bun! ----\n";

/// A module for [`build_payload`].
pub struct Spec<'a> {
    pub name: &'a str,
    pub contents: &'a [u8],
    pub loader: u8,
    pub encoding: u8,
    pub format: u8,
}

impl<'a> Spec<'a> {
    pub fn js(name: &'a str, contents: &'a [u8]) -> Spec<'a> {
        Spec {
            name,
            contents,
            loader: 1,
            encoding: 1,
            format: 1,
        }
    }
    pub fn file(name: &'a str, contents: &'a [u8]) -> Spec<'a> {
        Spec {
            name,
            contents,
            loader: 5,
            encoding: 0,
            format: 0,
        }
    }
}

/// A payload in the current (Bun 1.3.9+) layout: 52-byte records, 32-byte Offsets.
pub fn build_payload(mods: &[Spec], entry: u32) -> Vec<u8> {
    let mut data = Vec::new();
    let mut ptrs = Vec::new();
    for m in mods {
        let name_at = data.len() as u32;
        data.extend_from_slice(m.name.as_bytes());
        data.push(0);
        let c_at = data.len() as u32;
        data.extend_from_slice(m.contents);
        data.push(0);
        ptrs.push((name_at, m.name.len() as u32, c_at, m.contents.len() as u32));
    }
    let table_at = data.len() as u32;
    for (m, (n, nl, c, cl)) in mods.iter().zip(ptrs) {
        let mut rec = [0u8; 52];
        rec[0..4].copy_from_slice(&n.to_le_bytes());
        rec[4..8].copy_from_slice(&nl.to_le_bytes());
        rec[8..12].copy_from_slice(&c.to_le_bytes());
        rec[12..16].copy_from_slice(&cl.to_le_bytes());
        rec[48] = m.encoding;
        rec[49] = m.loader;
        rec[50] = m.format;
        rec[51] = 0;
        data.extend_from_slice(&rec);
    }
    let table_len = data.len() as u32 - table_at;
    let argv_at = data.len() as u32;
    data.push(0);
    let byte_count = data.len() as u64;
    data.extend_from_slice(&byte_count.to_le_bytes());
    data.extend_from_slice(&table_at.to_le_bytes());
    data.extend_from_slice(&table_len.to_le_bytes());
    data.extend_from_slice(&entry.to_le_bytes());
    data.extend_from_slice(&argv_at.to_le_bytes());
    data.extend_from_slice(&0u32.to_le_bytes());
    data.extend_from_slice(&0xfu32.to_le_bytes());
    data.extend_from_slice(TRAILER);
    data
}

/// Section content: a little-endian length header, then the payload.
pub fn with_header(payload: &[u8], width: usize) -> Vec<u8> {
    let mut s = if width == 8 {
        (payload.len() as u64).to_le_bytes().to_vec()
    } else {
        (payload.len() as u32).to_le_bytes().to_vec()
    };
    s.extend_from_slice(payload);
    s
}

fn object_with_section(
    format: BinaryFormat,
    arch: Architecture,
    seg: &[u8],
    name: &[u8],
    content: &[u8],
) -> Vec<u8> {
    let mut obj = Object::new(format, arch, Endianness::Little);
    let text = obj.section_id(StandardSection::Text);
    obj.append_section_data(text, &[0xc3; 64], 16);
    let id = obj.add_section(seg.to_vec(), name.to_vec(), SectionKind::Data);
    obj.append_section_data(id, content, 16);
    obj.write().unwrap()
}

/// An ELF file with a `.bun` section holding `section` (header + payload).
pub fn elf_with_section(section: &[u8]) -> Vec<u8> {
    object_with_section(
        BinaryFormat::Elf,
        Architecture::X86_64,
        b"",
        b".bun",
        section,
    )
}

/// An ELF file with no Bun section at all.
pub fn plain_elf() -> Vec<u8> {
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::Aarch64, Endianness::Little);
    let text = obj.section_id(StandardSection::Text);
    obj.append_section_data(text, &[0x1f; 256], 16);
    obj.write().unwrap()
}

/// A thin Mach-O with `__BUN,__bun`.
pub fn macho_with_section(section: &[u8], arch: Architecture) -> Vec<u8> {
    object_with_section(BinaryFormat::MachO, arch, b"__BUN", b"__bun", section)
}

/// A fat Mach-O holding the given thin images.
pub fn fat_macho(slices: &[(u32, &[u8])]) -> Vec<u8> {
    let align = 1usize << 14;
    let mut out = Vec::new();
    out.extend_from_slice(&0xcafebabeu32.to_be_bytes());
    out.extend_from_slice(&(slices.len() as u32).to_be_bytes());
    let mut offset = align;
    let mut placed = Vec::new();
    for (cpu, img) in slices {
        out.extend_from_slice(&cpu.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        out.extend_from_slice(&(img.len() as u32).to_be_bytes());
        out.extend_from_slice(&14u32.to_be_bytes());
        placed.push((offset, *img));
        offset = (offset + img.len()).div_ceil(align) * align;
    }
    for (at, img) in placed {
        out.resize(at, 0);
        out.extend_from_slice(img);
    }
    out
}

pub const CPU_X86_64: u32 = 0x0100_0007;
pub const CPU_ARM64: u32 = 0x0100_000c;

/// A PE image whose last section is `.bun` with the given content; the raw
/// size is padded to the file alignment, the virtual size is exact.
pub fn pe_with_section(section: &[u8], arm64: bool) -> Vec<u8> {
    use object::pe;
    use object::write::pe::{NtHeaders, Writer};
    let mut buf = Vec::new();
    let mut w = Writer::new(true, 0x1000, 0x200, &mut buf);
    w.reserve_dos_header_and_stub();
    w.reserve_nt_headers(pe::IMAGE_NUMBEROF_DIRECTORY_ENTRIES);
    w.reserve_section_headers(2);
    let text = w.reserve_text_section(64);
    let bun = w.reserve_section(
        *b".bun\0\0\0\0",
        pe::IMAGE_SCN_CNT_INITIALIZED_DATA | pe::IMAGE_SCN_MEM_READ,
        section.len() as u32,
        section.len() as u32,
    );
    w.write_dos_header_and_stub().unwrap();
    w.write_nt_headers(NtHeaders {
        machine: if arm64 {
            pe::IMAGE_FILE_MACHINE_ARM64
        } else {
            pe::IMAGE_FILE_MACHINE_AMD64
        },
        time_date_stamp: 0,
        characteristics: pe::IMAGE_FILE_EXECUTABLE_IMAGE | pe::IMAGE_FILE_LARGE_ADDRESS_AWARE,
        major_linker_version: 14,
        minor_linker_version: 0,
        address_of_entry_point: text.virtual_address,
        image_base: 0x1_4000_0000,
        major_operating_system_version: 6,
        minor_operating_system_version: 0,
        major_image_version: 0,
        minor_image_version: 0,
        major_subsystem_version: 6,
        minor_subsystem_version: 0,
        subsystem: pe::IMAGE_SUBSYSTEM_WINDOWS_CUI,
        dll_characteristics: pe::DllFlags::default(),
        size_of_stack_reserve: 0x10_0000,
        size_of_stack_commit: 0x1000,
        size_of_heap_reserve: 0x10_0000,
        size_of_heap_commit: 0x1000,
    });
    w.write_section_headers();
    w.write_section(text.file_offset, &[0xc3; 64]);
    w.write_section(bun.file_offset, section);
    buf
}

/// Older Bun: `[exe][payload][u64 whole-file size]`.
pub fn appended(exe: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut v = exe.to_vec();
    v.extend_from_slice(payload);
    let total = v.len() as u64 + 8;
    v.extend_from_slice(&total.to_le_bytes());
    v
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bun")
}

/// Every real-Bun fixture: (folder name, payload bytes, expected facts).
pub fn real_bun_fixtures() -> Vec<(String, Vec<u8>, serde_json::Value)> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .flatten()
        .collect();
    dirs.sort_by_key(|d| d.file_name());
    for d in dirs {
        let p = d.path();
        let payload = std::fs::read(p.join("payload.bin")).unwrap();
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("expected.json")).unwrap())
                .unwrap();
        out.push((
            d.file_name().to_string_lossy().into_owned(),
            payload,
            expected,
        ));
    }
    assert!(
        out.len() >= 8,
        "expected the real-Bun fixtures under fixtures/bun"
    );
    out
}

/// Put a payload into the container the original build used.
pub fn rewrap(payload: &[u8], expected: &serde_json::Value) -> Vec<u8> {
    let width = expected["container"]["header_width"].as_u64().unwrap_or(8) as usize;
    match expected["container"]["kind"].as_str().unwrap() {
        "macho-section" => macho_with_section(&with_header(payload, width), Architecture::Aarch64),
        "elf-section" => elf_with_section(&with_header(payload, width)),
        "pe-section" => pe_with_section(&with_header(payload, width), false),
        "appended" => appended(&plain_elf(), payload),
        other => panic!("unknown container kind {other}"),
    }
}

/// Make a FIFO at `p` (and the folders above it): hostile input that would
/// block a reader opening it as a file.
#[cfg(unix)]
pub fn mkfifo(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        p.display()
    );
}

/// Debian's headless browser (installed by the README's test command).
pub fn chromium() -> &'static str {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("Debian's chromium is needed (apt-get install chromium); .ci/run installs it")
}

/// Render `page` in headless Chromium: its DOM after load, and a
/// screenshot of the first 1280×900 screen (whose size is returned). In
/// the test's sandbox, so that its caches are not the user's.
pub fn render(page: &Path, shot: &Path) -> (String, u64) {
    let profile = tempfile::tempdir().unwrap();
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--window-size=1280,900",
    ];
    let url = format!("file://{}", page.display());
    let out = command_of(chromium())
        .args(common)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let out = command_of(chromium())
        .args(common)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(out.status.success() || shot.exists());
    let size = std::fs::metadata(shot).map_or(0, |m| m.len());
    (dom, size)
}
