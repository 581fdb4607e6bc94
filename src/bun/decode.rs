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

/// Why a compressed module's bytes were not produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A charge the budget refused (nothing was taken).
    #[error(
        "decoding {bytes} more bytes would pass the {limit}-byte budget of this run (--max-decoded; {used} bytes decoded already)"
    )]
    OverBudget { bytes: u64, limit: u64, used: u64 },
    /// A frame without a declared size, counted past what the budget has left.
    #[error(
        "decodes to more than the {left} bytes left of the {limit}-byte budget of this run (--max-decoded)"
    )]
    CountedPastBudget { left: u64, limit: u64 },
    /// The output's memory was refused (the message of the refusal).
    #[error("cannot allocate {0}")]
    Allocation(String),
    /// The zstd decoder's message.
    #[error("zstd: {0}")]
    Zstd(String),
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
    pub fn charge(&self, n: u64) -> Result<(), DecodeError> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                u.checked_add(n).filter(|&t| t <= self.limit)
            })
            .map(|_| ())
            .map_err(|used| DecodeError::OverBudget {
                bytes: n,
                limit: self.limit,
                used,
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

/// Read granularity: a frame without a declared size is stopped within one
/// chunk of the budget.
const CHUNK: usize = 1 << 20;

/// Decompress zstd data, charging every produced byte to `budget`.
///
/// The output is allocated once, at its size: a frame's declared size, or
/// else the size counted by a first pass that stops as soon as it passes
/// what the budget has left. (Growing the vector by doubling instead peaks
/// at up to twice the output while it reallocates.) That size is charged
/// before anything is allocated, so a bomb is refused up front. The
/// declaration is only the input's word: bytes beyond it (a lie, or further
/// frames) are charged chunk by chunk as they arrive.
pub fn decompress(data: &[u8], budget: &Budget) -> Result<Vec<u8>, DecodeError> {
    let size = match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(Some(size)) => size,
        _ => count(data, budget)?,
    };
    budget.charge(size)?;
    let mut reserved = size;
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve_exact(size as usize)
        .map_err(|e| DecodeError::Allocation(format!("{size} bytes: {e}")))?;
    let mut decoder = decoder(data)?;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = decoder
            .read(&mut chunk)
            .map_err(|e| DecodeError::Zstd(e.to_string()))?;
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
            .map_err(|e| DecodeError::Allocation(format!("decoded bytes: {e}")))?;
        out.extend_from_slice(&chunk[..n]);
    }
    budget.refund(reserved);
    Ok(out)
}

fn decoder(data: &[u8]) -> Result<zstd::stream::read::Decoder<'static, &[u8]>, DecodeError> {
    zstd::stream::read::Decoder::with_buffer(data).map_err(|e| DecodeError::Zstd(e.to_string()))
}

/// The decoded size of `data`, counted without keeping the bytes; refused
/// as soon as it passes what `budget` has left.
fn count(data: &[u8], budget: &Budget) -> Result<u64, DecodeError> {
    let left = budget.limit.saturating_sub(budget.used());
    let mut decoder = decoder(data)?;
    let mut chunk = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = decoder
            .read(&mut chunk)
            .map_err(|e| DecodeError::Zstd(e.to_string()))?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        if total > left {
            return Err(DecodeError::CountedPastBudget {
                left,
                limit: budget.limit,
            });
        }
    }
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
        assert!(err.to_string().contains("--max-decoded"), "{err}");
        assert_eq!(b.used(), 1 << 20, "a refusal takes nothing");
        assert!(decompress(&z, &Budget::new(1000)).is_err());
    }

    #[test]
    fn streamed_frames_are_counted_before_allocating() {
        // A streamed frame has no content size in its header.
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        std::io::Write::write_all(&mut enc, &vec![0u8; 3 * CHUNK]).unwrap();
        let z = enc.finish().unwrap();
        let b = Budget::new(CHUNK as u64 + 10);
        assert!(
            decompress(&z, &b)
                .unwrap_err()
                .to_string()
                .contains("budget")
        );
        let b = Budget::new(3 * CHUNK as u64);
        assert_eq!(decompress(&z, &b).unwrap().len(), 3 * CHUNK);
        assert_eq!(b.used(), 3 * CHUNK as u64);
    }

    #[test]
    fn bytes_past_the_declaration_are_charged_too() {
        // Two frames: the header declares only the first one's size.
        let one = zstd::encode_all(&vec![7u8; 1 << 20][..], 3).unwrap();
        let two = [one.clone(), one].concat();
        assert!(decompress(&two, &Budget::new(3 << 19)).is_err());
        let b = Budget::new(2 << 20);
        assert_eq!(decompress(&two, &b).unwrap().len(), 2 << 20);
        assert_eq!(b.used(), 2 << 20);
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
