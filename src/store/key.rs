//! This machine's key: what tells the facts this machine computed from
//! facts someone else wrote.
//!
//! A store's rows can be written by anyone who can write the file — a
//! history someone published, a cache copied from another machine, an edit
//! with `sqlite3`. A hash stored beside a row proves nothing (the forger
//! rewrites it too). So every row that analysis believes about a build the
//! user has (its facts, its code facts, the file → build shortcut) carries
//! an HMAC-SHA256 of its content under a key that never leaves this
//! machine's cache folder (`store.key`, 32 random bytes, mode 0600, made on
//! first use). A row without a valid seal is never believed: the facts are
//! computed again and stored with a seal of ours.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The key's file in a cache folder.
pub const KEY_FILE: &str = "store.key";
const KEY_BYTES: usize = 32;

/// A secret key of this machine's cache folder.
#[derive(Clone)]
pub struct MachineKey([u8; KEY_BYTES]);

impl std::fmt::Debug for MachineKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MachineKey(…)")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("store key {path}: {why}")]
pub struct KeyError {
    pub path: String,
    pub why: String,
}

impl MachineKey {
    /// The key of the cache folder `dir`, made (32 bytes from the operating
    /// system's random source, readable by this user only) when it has none.
    /// A key file that is not a regular file of exactly 32 bytes owned by
    /// this user and private to them is refused, never used or replaced:
    /// a key others can read or write proves nothing.
    pub fn in_folder(dir: &Path) -> Result<MachineKey, KeyError> {
        let path = dir.join(KEY_FILE);
        let err = |why: String| KeyError {
            path: path.display().to_string(),
            why,
        };
        std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        match read_key(&path) {
            Ok(k) => return Ok(k),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(e.to_string())),
        }
        let mut key = [0u8; KEY_BYTES];
        getrandom::getrandom(&mut key).map_err(|e| err(format!("no random source: {e}")))?;
        // Written whole beside it, then linked into place: a reader never
        // sees half a key, and of two processes making it at once the
        // second finds the first's (the link fails) and uses that.
        let tmp = dir.join(format!(".{KEY_FILE}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let written = create_private(&tmp)
            .and_then(|mut f| f.write_all(&key).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::hard_link(&tmp, &path));
        let _ = std::fs::remove_file(&tmp);
        match written {
            Ok(()) => Ok(MachineKey(key)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                read_key(&path).map_err(|e| err(e.to_string()))
            }
            Err(e) => Err(err(e.to_string())),
        }
    }

    /// A key for tests and the fuzz target.
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> MachineKey {
        MachineKey(bytes)
    }

    /// HMAC-SHA256 (RFC 2104) of `parts`, each prefixed with its length
    /// (so no two lists of parts are one message), as hex.
    pub fn seal(&self, parts: &[&[u8]]) -> String {
        const BLOCK: usize = 64;
        let mut k = [0u8; BLOCK];
        k[..KEY_BYTES].copy_from_slice(&self.0);
        let pad = |b: u8| k.map(|x| x ^ b);
        let mut inner = Sha256::new();
        inner.update(pad(0x36));
        for p in parts {
            inner.update((p.len() as u64).to_le_bytes());
            inner.update(p);
        }
        let mut outer = Sha256::new();
        outer.update(pad(0x5c));
        outer.update(inner.finalize());
        hex::encode(outer.finalize())
    }

    /// Whether `seal` is this key's seal of `parts` (compared in constant
    /// time: a forger learns nothing from how long a refusal takes).
    pub fn verify(&self, parts: &[&[u8]], seal: &str) -> bool {
        let want = self.seal(parts);
        want.len() == seal.len()
            && want
                .bytes()
                .zip(seal.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

fn create_private(path: &PathBuf) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    o.open(path)
}

fn read_key(path: &Path) -> std::io::Result<MachineKey> {
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut f = o.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            bad("a symbolic link: refused")
        } else {
            e
        }
    })?;
    let meta = f.metadata()?;
    if !meta.is_file() || meta.len() != KEY_BYTES as u64 {
        return Err(bad(
            "not a regular file of 32 bytes: refused, left as it is",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(bad(
                "not private to this user (owner or mode): refused, left as it is",
            ));
        }
    }
    let mut key = [0u8; KEY_BYTES];
    f.read_exact(&mut key)?;
    Ok(MachineKey(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seal is HMAC-SHA256 (RFC 2104) of the length-prefixed parts,
    /// checked against the definition computed step by step here.
    #[test]
    fn seals_are_hmac_sha256_and_verify_only_their_parts() {
        let key = MachineKey::from_bytes([7; 32]);
        // HMAC-SHA256 by its definition, computed independently.
        let mut msg = Vec::new();
        for p in [&b"facts"[..], b"d"] {
            msg.extend_from_slice(&(p.len() as u64).to_le_bytes());
            msg.extend_from_slice(p);
        }
        let mut k = [0u8; 64];
        k[..32].copy_from_slice(&[7; 32]);
        let ipad: Vec<u8> = k.iter().map(|x| x ^ 0x36).collect();
        let opad: Vec<u8> = k.iter().map(|x| x ^ 0x5c).collect();
        let inner = Sha256::digest([ipad, msg].concat());
        let outer = Sha256::digest([opad, inner.to_vec()].concat());
        let s = key.seal(&[b"facts", b"d"]);
        assert_eq!(s, hex::encode(outer));
        assert!(key.verify(&[b"facts", b"d"], &s));
        assert!(!key.verify(&[b"facts", b"e"], &s));
        assert!(!key.verify(&[b"factsd"], &s), "parts are delimited");
        assert!(!MachineKey::from_bytes([8; 32]).verify(&[b"facts", b"d"], &s));
        assert!(!key.verify(&[b"facts", b"d"], ""));
    }

    #[cfg(unix)]
    #[test]
    fn a_key_is_made_once_private_and_a_bad_key_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let a = MachineKey::in_folder(dir.path()).unwrap();
        let b = MachineKey::in_folder(dir.path()).unwrap();
        assert_eq!(a.seal(&[b"x"]), b.seal(&[b"x"]), "the same key");
        let path = dir.path().join(KEY_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(
            MachineKey::in_folder(other.path()).unwrap().seal(&[b"x"]),
            a.seal(&[b"x"]),
            "another folder, another key"
        );
        // Readable by others, of the wrong size, or a link: refused and
        // left as it is.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(MachineKey::in_folder(dir.path()).is_err());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let short = tempfile::tempdir().unwrap();
        std::fs::write(short.path().join(KEY_FILE), b"short").unwrap();
        std::fs::set_permissions(
            short.path().join(KEY_FILE),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        assert!(MachineKey::in_folder(short.path()).is_err());
        assert_eq!(
            std::fs::read(short.path().join(KEY_FILE)).unwrap(),
            b"short"
        );
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&path, linked.path().join(KEY_FILE)).unwrap();
        assert!(MachineKey::in_folder(linked.path()).is_err());
    }
}
