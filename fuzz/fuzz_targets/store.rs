//! A facts store from arbitrary bytes: the bytes are written as the store's
//! file (seeds are small valid stores, see make_store_seeds.py) and every
//! reader of the history and the facts runs on it. Whatever the file holds,
//! each returns (an error is fine) within the store's memory budget —
//! never a panic, never gigabytes.
#![no_main]

use cc_teardown::analysis::analysed::FactsCache;
use cc_teardown::store::key::MachineKey;
use cc_teardown::store::search::ReleaseOrder;
use cc_teardown::store::{FactsStore, Ownership, history};
use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicU64, Ordering};

/// The key the seeds were sealed with (make_store_seeds.py writes it as
/// the seed cache's store.key), so sealed rows reach the facts' decoder.
const KEY: [u8; 32] = [1; 32];

static RUN: AtomicU64 = AtomicU64::new(0);

fn exercise(store: &FactsStore) {
    let Ok(all) = store.releases(None) else { return };
    let _ = store.item_counts();
    let _ = store.all_items(None);
    let _ = store.item_names_like(None, "a", 8);
    let mut platforms: Vec<String> = all.iter().map(|r| r.platform.clone()).collect();
    platforms.sort();
    platforms.dedup();
    for needle in ["a", "tengu", "x\ny", "é"] {
        if let Ok(hits) = store.search(needle, 50) {
            for p in &platforms {
                if let Ok(rs) = store.releases(Some(p)) {
                    let order = ReleaseOrder::new(&rs);
                    for f in hits.by_name.iter().chain(&hits.by_text) {
                        let _ = order.versions(&f.builds);
                    }
                }
            }
        }
    }
    for p in platforms.iter().take(4) {
        let _ = store.timeline(p);
        if let Ok(names) = store.item_names_like(None, "", 4) {
            for (kind, name) in names {
                if let Ok(over) = store.item_over_releases(&kind, &name, p) {
                    let _ = history::story(&kind, &name, p, &over, &mut |n| store.charge_answer(n));
                }
            }
        }
        let ok: Vec<_> = all.iter().filter(|r| &r.platform == p && r.status == "ok").collect();
        for w in ok.windows(2).take(8) {
            if let (Some(a), Some(b)) = (&w[0].digest, &w[1].digest) {
                let _ = store.stored_changes(a, b);
                let _ = store.facts_of(a);
            }
        }
    }
    for r in all.iter().take(8) {
        if let Some(d) = &r.digest {
            let _ = store.load(d);
            let _ = store.load_code(d);
        }
    }
    let _ = store.info();
}

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!(
        "cc-teardown-fuzz-store-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::create_dir(&dir).is_err() {
        return;
    }
    let path = dir.join("store.sqlite");
    if std::fs::write(&path, data).is_ok()
        && let Ok(store) =
            FactsStore::open_keyed(&path, Ownership::Named, Some(MachineKey::from_bytes(KEY)))
    {
        exercise(&store);
        let _ = store.made_here();
        store.close();
    }
    let _ = std::fs::remove_dir_all(&dir);
});
