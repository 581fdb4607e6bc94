//! Payloads without a section: older Bun releases appended
//! `[payload][u64 whole-file size]` to the executable; anything else is found
//! by scanning backwards for the trailer.

use super::bytes::le64;
use super::payload::{TRAILER, payload_start_before};
use super::{ContainerInfo, Format, Located, Placement};

/// How far back from the end of the file the trailer scan looks. Appended
/// payloads end within a few bytes of the end; sections sit before debug info
/// and signatures, which are at most tens of MB in real builds.
const SCAN_WINDOW: usize = 512 << 20;

pub(crate) fn find(bytes: &[u8], format: Format, arch: Option<String>) -> Option<Located<'_>> {
    let n = bytes.len();
    // The classic appended layout: the last 8 bytes are the file size.
    if n >= 24
        && le64(bytes, n - 8) == Some(n as u64)
        && let Some((start, _)) = payload_start_before(bytes, n - 8)
    {
        return Some(located(
            bytes,
            format,
            arch,
            start,
            n - 8,
            Placement::Appended,
        ));
    }
    let from = n.saturating_sub(SCAN_WINDOW);
    let mut end = n;
    // Scan backwards; a trailer that does not validate is skipped.
    while end > from {
        let pos = memchr::memmem::rfind(&bytes[from..end], TRAILER)? + from;
        if let Some((start, _)) = payload_start_before(bytes, pos + 16) {
            let placement = if format == Format::Raw {
                Placement::WholeFile
            } else {
                Placement::TrailerScan
            };
            return Some(located(bytes, format, arch, start, pos + 16, placement));
        }
        end = pos + 15;
    }
    None
}

fn located(
    bytes: &[u8],
    format: Format,
    arch: Option<String>,
    start: usize,
    end: usize,
    placement: Placement,
) -> Located<'_> {
    Located {
        info: ContainerInfo {
            format,
            arch,
            slices: Vec::new(),
            placement,
            section: None,
            section_offset: start as u64,
            section_size: (end - start) as u64,
            header_width: None,
            payload_offset: start as u64,
            payload_size: (end - start) as u64,
        },
        payload: &bytes[start..end],
    }
}

/// The whole input taken as a bare payload.
pub(crate) fn whole(bytes: &[u8]) -> Located<'_> {
    located(
        bytes,
        Format::Raw,
        None,
        0,
        bytes.len(),
        Placement::WholeFile,
    )
}
