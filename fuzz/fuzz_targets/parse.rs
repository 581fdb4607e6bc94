//! Container location + Bun module-graph parsing over arbitrary bytes.
//!
//! The input is fed twice: to `container::locate` (as an executable, with the
//! default options and again with `assume_js` and a non-default fat-Mach-O
//! arch) and, independently, straight to `BunGraph::parse` as a bare payload.
//! Every graph obtained is walked through all of its accessors.
#![no_main]

use cc_teardown::bun::{Budget, BunGraph, digest};
use cc_teardown::container::{self, ContainerOptions};
use libfuzzer_sys::fuzz_target;

/// Cap on zstd output, so a decompression bomb cannot exhaust memory.
const LIMIT: u64 = 1 << 20;

fn exercise(graph: &BunGraph) {
    let _ = graph.bytecode_region();
    let _ = graph.bytecode_bytes();
    if !graph.modules.is_empty() {
        let e = graph.entry_module();
        let _ = e.path_below_root();
    }
    for m in &graph.modules {
        let _ = m.relative_path();
        let below = m.path_below_root();
        let _ = graph.find(&below);
        let _ = m.is_compressed();
        let _ = m.is_javascript();
        let own = graph.own_bytecode_len(m);
        let bc = graph.bytecode_of(m);
        // Either the module's own bytecode, or nothing if it points outside the payload.
        assert!(bc.is_empty() || bc.len() as u64 == own);
        // A budget per module, so each is tried whatever the others cost.
        if let Ok(d) = graph.decoded(m, &Budget::new(LIMIT)) {
            // A UTF-16 conversion can grow the bytes, but never past 3/2 of the cap.
            assert!(d.len() as u64 <= LIMIT * 3 / 2 + 3, "decoded {} bytes", d.len());
        }
    }
    let _ = digest::bundle_digest(graph, &Budget::new(LIMIT));
}

fuzz_target!(|data: &[u8]| {
    // 1. As an executable (or JS file, or raw payload) on disk.
    let default = ContainerOptions::default();
    if let Ok(located) = container::locate(data, &default) {
        let info = &located.info;
        // The reported file offset and size must describe the slice we got back.
        assert_eq!(info.payload_size, located.payload.len() as u64);
        let at = info.payload_offset as usize;
        assert_eq!(data.get(at..at + located.payload.len()), Some(located.payload));
        let _ = serde_json::to_string(info);
        if info.format == container::Format::Js {
            exercise(&BunGraph::single_js("/$bunfs/root/fuzz.js", located.payload));
        } else if let Ok(graph) = BunGraph::parse(located.payload) {
            exercise(&graph);
        }
    }
    let other = ContainerOptions {
        arch: Some(container::Arch::X86_64),
        assume_js: true,
    };
    if let Ok(located) = container::locate(data, &other)
        && let Ok(graph) = BunGraph::parse(located.payload)
    {
        exercise(&graph);
    }

    // 2. As a bare payload.
    if let Ok(graph) = BunGraph::parse(data) {
        exercise(&graph);
    }
});
