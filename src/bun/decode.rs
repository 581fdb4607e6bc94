//! Decoding modules under one budget for the whole run.
//!
//! A payload of a few kilobytes can name a zstd frame that expands to
//! gigabytes, and several records can point at the same frame. A per-module
//! cap does not bound that: four records on one 900 MiB frame decoded to
//! 3.6 GB. So `--max-decoded` is a [`Budget`] shared by everything a run
//! decodes (every module, every build, both cores): each decoded byte handed
//! out is charged, whether it was decompressed just now or reused, because
//! what follows decoding (hashing, writing, parsing) costs per byte handed
//! out. A blob that several records share is decompressed once per graph
//! ([`super::BunGraph::decoded`]).

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A module's decoded bytes: borrowed from the payload when nothing had to
/// be done, shared when several records name one blob.
#[derive(Debug, Clone)]
pub enum Decoded<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
}

impl std::ops::Deref for Decoded<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Decoded::Borrowed(b) => b,
            Decoded::Owned(v) => v,
            Decoded::Shared(a) => a,
        }
    }
}

impl AsRef<[u8]> for Decoded<'_> {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// The decoded bytes a run may produce in total (`--max-decoded`).
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    used: AtomicU64,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            limit,
            used: AtomicU64::new(0),
        }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes charged so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Take `n` bytes from the budget, or refuse without taking any.
    pub fn charge(&self, n: u64) -> Result<(), String> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                u.checked_add(n).filter(|&t| t <= self.limit)
            })
            .map(|_| ())
            .map_err(|used| {
                format!(
                    "decoding {n} more bytes would pass the {}-byte budget of this run (--max-decoded; {used} bytes decoded already)",
                    self.limit
                )
            })
    }

    /// Give back bytes charged but not produced (a frame that declared more
    /// than it held).
    fn refund(&self, n: u64) {
        if n > 0 {
            self.used.fetch_sub(n, Ordering::Relaxed);
        }
    }
}

/// Read granularity while streaming: the budget is charged as bytes arrive,
/// so a frame without a declared size is stopped within one chunk of the cap.
const CHUNK: usize = 1 << 20;

/// Decompress zstd data, charging every produced byte to `budget`.
///
/// A frame that declares its size is charged that size before anything is
/// allocated, so a bomb is refused up front; the output is still read with a
/// bound, as the declaration is the input's word. Frames without a declared
/// size (and any further frames) are charged chunk by chunk.
pub fn decompress(data: &[u8], budget: &Budget) -> Result<Vec<u8>, String> {
    let declared = match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(Some(size)) => size,
        _ => 0,
    };
    budget.charge(declared)?;
    let mut reserved = declared;
    let mut out: Vec<u8> = Vec::new();
    // Never more than the declaration, which the budget has accepted.
    out.try_reserve_exact(declared as usize)
        .map_err(|e| format!("cannot allocate {declared} bytes: {e}"))?;
    let mut decoder =
        zstd::stream::read::Decoder::with_buffer(data).map_err(|e| format!("zstd: {e}"))?;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = decoder.read(&mut chunk).map_err(|e| format!("zstd: {e}"))?;
        if n == 0 {
            break;
        }
        let n64 = n as u64;
        if n64 <= reserved {
            reserved -= n64;
        } else {
            budget.charge(n64 - reserved)?;
            reserved = 0;
        }
        out.try_reserve(n)
            .map_err(|e| format!("cannot allocate decoded bytes: {e}"))?;
        out.extend_from_slice(&chunk[..n]);
    }
    budget.refund(reserved);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_size_is_charged_before_decoding() {
        let big = vec![b'a'; 1 << 20];
        let z = zstd::encode_all(&big[..], 3).unwrap();
        let b = Budget::new(1 << 20);
        assert_eq!(decompress(&z, &b).unwrap().len(), 1 << 20);
        assert_eq!(b.used(), 1 << 20);
        // The budget is spent: the same frame again is refused.
        let err = decompress(&z, &b).unwrap_err();
        assert!(err.contains("--max-decoded"), "{err}");
        assert_eq!(b.used(), 1 << 20, "a refusal takes nothing");
        assert!(decompress(&z, &Budget::new(1000)).is_err());
    }

    #[test]
    fn streamed_frames_are_charged_as_they_decode() {
        // A streamed frame has no content size in its header.
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        std::io::Write::write_all(&mut enc, &vec![0u8; 3 * CHUNK]).unwrap();
        let z = enc.finish().unwrap();
        let b = Budget::new(CHUNK as u64 + 10);
        assert!(decompress(&z, &b).unwrap_err().contains("budget"));
        let b = Budget::new(3 * CHUNK as u64);
        assert_eq!(decompress(&z, &b).unwrap().len(), 3 * CHUNK);
        assert_eq!(b.used(), 3 * CHUNK as u64);
    }

    #[test]
    fn charges_from_both_cores_add_up() {
        let b = Budget::new(1000);
        let ok: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| (0..100).filter(|_| b.charge(3).is_ok()).count()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(ok, 333);
        assert_eq!(b.used(), 999);
    }
}
