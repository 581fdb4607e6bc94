//! What a Bun payload looks like from the outside: it ends with `Offsets`
//! followed by a 16-byte trailer, and `Offsets.byte_count` says how many bytes
//! precede `Offsets`. Every container reader uses these checks to decide where
//! the payload starts, so the knowledge lives here once.

use super::ContainerError;
use super::bytes::{le32, le64};

/// The 16 bytes every Bun standalone payload ends with.
pub const TRAILER: &[u8; 16] = b"\n---- Bun! ----\n";

/// `Offsets` was 24 bytes before Bun 1.2.21 and 32 bytes since.
pub const OFFSETS_SIZES: [usize; 2] = [32, 24];

/// Given the position just past a trailer, find where the payload starts.
///
/// Returns the start offset and the `Offsets` size that made `byte_count`
/// consistent. Only cheap, local checks: the bun layer validates the rest.
pub fn payload_start_before(bytes: &[u8], trailer_end: usize) -> Option<(usize, usize)> {
    if trailer_end < 16 || bytes.get(trailer_end - 16..trailer_end)? != TRAILER {
        return None;
    }
    let offsets_end = trailer_end - 16;
    for osz in OFFSETS_SIZES {
        let Some(offsets_at) = offsets_end.checked_sub(osz) else {
            continue;
        };
        let Some(byte_count) = le64(bytes, offsets_at) else {
            continue;
        };
        let Ok(byte_count) = usize::try_from(byte_count) else {
            continue;
        };
        let Some(start) = offsets_at.checked_sub(byte_count) else {
            continue;
        };
        // modules_ptr must lie inside the data region for this guess to hold.
        let (Some(moff), Some(mlen)) = (le32(bytes, offsets_at + 8), le32(bytes, offsets_at + 12))
        else {
            continue;
        };
        if (moff as u64) + (mlen as u64) <= byte_count as u64 && mlen > 0 {
            return Some((start, osz));
        }
    }
    None
}

/// Where a section's payload lies, relative to the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InSection {
    /// The width of the length header (8 or 4 bytes), 0 when no header
    /// agreed and the payload was found by its trailer.
    pub header_width: u8,
    pub start: usize,
    pub len: usize,
}

/// Validate a section's content: a little-endian length header (u64 since Bun
/// 1.3.4, u32 before) followed by the payload. The header is accepted only when
/// it agrees with the payload's own `byte_count + sizeof(Offsets) + 16`.
///
/// Where the payload lies in `section`.
pub fn payload_in_section(section: &[u8]) -> Result<InSection, ContainerError> {
    let mut seen = Vec::new();
    for width in [8usize, 4] {
        let len = match width {
            8 => le64(section, 0),
            _ => le32(section, 0).map(u64::from),
        };
        let Some(len) = len else { continue };
        seen.push(len);
        let Ok(len) = usize::try_from(len) else {
            continue;
        };
        let Some(end) = width.checked_add(len) else {
            continue;
        };
        if end > section.len() {
            continue;
        }
        if let Some((start, osz)) = payload_start_before(section, end)
            && start == width
            && end - start == le64(section, end - 16 - osz).unwrap_or(0) as usize + osz + 16
        {
            return Ok(InSection {
                header_width: width as u8,
                start,
                len,
            });
        }
    }
    // No header agreed: the section may still hold a payload (for example
    // padded differently); fall back to finding the trailer inside it.
    if let Some(pos) = memchr::memmem::rfind(section, TRAILER)
        && let Some((start, _)) = payload_start_before(section, pos + 16)
    {
        return Ok(InSection {
            header_width: 0,
            start,
            len: pos + 16 - start,
        });
    }
    Err(ContainerError::HeaderMismatch {
        header: seen.first().copied().unwrap_or(0),
        section_len: section.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal payload: 8 bytes of data holding a fake 8-byte module table.
    pub(crate) fn tiny_payload(osz: usize) -> Vec<u8> {
        let mut p = vec![0u8; 8];
        let byte_count = p.len() as u64;
        let mut offsets = vec![0u8; osz];
        offsets[..8].copy_from_slice(&byte_count.to_le_bytes());
        offsets[8..12].copy_from_slice(&0u32.to_le_bytes());
        offsets[12..16].copy_from_slice(&8u32.to_le_bytes());
        p.extend_from_slice(&offsets);
        p.extend_from_slice(TRAILER);
        p
    }

    #[test]
    fn finds_start_for_both_offsets_sizes() {
        for osz in OFFSETS_SIZES {
            let mut file = vec![0xAAu8; 100];
            let p = tiny_payload(osz);
            file.extend_from_slice(&p);
            assert_eq!(payload_start_before(&file, file.len()), Some((100, osz)));
        }
    }

    #[test]
    fn section_header_must_agree() {
        let p = tiny_payload(32);
        let mut s = (p.len() as u64).to_le_bytes().to_vec();
        s.extend_from_slice(&p);
        s.extend_from_slice(&[0; 64]); // page padding after the payload
        let at = |header_width, start| InSection {
            header_width,
            start,
            len: p.len(),
        };
        assert_eq!(payload_in_section(&s).unwrap(), at(8, 8));

        let mut s32 = (p.len() as u32).to_le_bytes().to_vec();
        s32.extend_from_slice(&p);
        assert_eq!(payload_in_section(&s32).unwrap(), at(4, 4));

        let mut bad = (p.len() as u64 + 1000).to_le_bytes().to_vec();
        bad.extend_from_slice(&[0xFF; 40]);
        assert!(payload_in_section(&bad).is_err());
    }

    #[test]
    fn no_panic_on_tiny_inputs() {
        for n in 0..40 {
            let v = vec![0xFFu8; n];
            let _ = payload_start_before(&v, n);
            let _ = payload_in_section(&v);
        }
    }
}
