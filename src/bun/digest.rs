//! Hashes over a graph. The *bundle digest* identifies the JavaScript of a
//! build however it is split into modules; docs/guide/hashing.md defines it so that
//! anyone can recompute it.

use super::{Budget, BunGraph, GraphError};
use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// SHA-256 over every JavaScript module (loader js, jsx, ts or tsx), sorted by
/// path below the bunfs root; for each: the path's UTF-8 bytes, one 0x00 byte,
/// the decoded length as u64 little-endian, then the decoded bytes.
pub fn bundle_digest(graph: &BunGraph, budget: &Budget) -> Result<(String, usize), GraphError> {
    let mut js: Vec<_> = graph
        .modules
        .iter()
        .filter(|m| matches!(m.loader, "js" | "jsx" | "ts" | "tsx"))
        .collect();
    js.sort_by(|a, b| a.path_below_root().cmp(&b.path_below_root()));
    let mut h = Sha256::new();
    for m in &js {
        let bytes = graph.decoded(m, budget)?;
        h.update(m.path_below_root().as_bytes());
        h.update([0u8]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok((hex::encode(h.finalize()), js.len()))
}
