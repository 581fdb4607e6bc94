//! Fingerprint the source of the layers whose output the facts store keeps
//! (bun, js, analysis), so stored facts are keyed by the code that made them;
//! and say the tests are built offline (`CC_TEARDOWN_OFFLINE=1`).

use std::path::Path;

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            visit(&p, files);
        } else {
            files.push(p);
        }
    }
}

fn main() {
    // With CC_TEARDOWN_OFFLINE=1 the tests that download real builds are
    // `#[cfg_attr(cc_offline, ignore = "…")]`: libtest lists each as
    // ignored with that reason and counts them ("N ignored"), where an
    // early return would pass as "ok". Switching it rebuilds the crate.
    println!("cargo:rustc-check-cfg=cfg(cc_offline)");
    println!("cargo:rerun-if-env-changed=CC_TEARDOWN_OFFLINE");
    if std::env::var_os("CC_TEARDOWN_OFFLINE").is_some_and(|v| v == "1") {
        println!("cargo:rustc-cfg=cc_offline");
    }
    // The package's folder as cargo gives it to this run, not as it was
    // when this script was compiled (`env!`): cargo may reuse a compiled
    // build script across checkouts sharing a target folder (a worktree),
    // and one baked-in path, once gone, fingerprinted no files at all —
    // the same constant for every version of the analysis, so a store
    // handed back facts an older analysis made.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("src");
    let mut files = Vec::new();
    for layer in ["bun", "js", "analysis"] {
        println!("cargo:rerun-if-changed=src/{layer}");
        let before = files.len();
        visit(&root.join(layer), &mut files);
        assert!(
            files.len() > before,
            "no source found under {}: the analysis fingerprint would not change with the code",
            root.join(layer).display()
        );
    }
    files.sort();
    // FNV-1a, 64 bits: a fingerprint, not a security boundary.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        for b in rel
            .bytes()
            .chain([0])
            .chain(std::fs::read(f).unwrap_or_default())
            .chain([0])
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=CC_TEARDOWN_ANALYSIS_FINGERPRINT={h:016x}");
}
